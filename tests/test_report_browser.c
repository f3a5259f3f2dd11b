/* test_report_browser.c - the HTML report as a browser sees it.
 *
 * Renders the fixture report (report_fixture.h; and a run across nodes,
 * report_node_fixture.h, whose DOM must hold the devices inside the nodes
 * with their bars), loads it in headless
 * Chromium (Debian's `chromium` package) and checks that the page logs
 * nothing to the console (no blocked fetch, no parse error: the page's
 * Content-Security-Policy turns any external reference into a console
 * error) and that the DOM Chromium built holds every chart with its data.
 * A screenshot is left next to the test directory, build/report.png for
 * the default build, for people to look at. Without Chromium the test is
 * skipped (exit 77) with a notice: CI does not need a browser.
 * HF_CHROMIUM names another browser binary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_files.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hetfarm.h"
#include "report/report.h"
#include "report_fixture.h"
#include "report_node_fixture.h"

static const char *chromium;
static char screenshot[PATH_MAX + 16];

/* Runs headless Chromium on `url` with `extra` flags, stdout and stderr to
 * the given files; returns its exit status. Paths here are our own mkdtemp
 * names and the build directory, quoted for the shell. */
static int run_chromium(const char *dir, const char *extra, const char *url, const char *out,
                        const char *err)
{
    char cmd[4 * PATH_MAX];
    snprintf(cmd, sizeof cmd,
             "timeout 120 '%s' --headless --no-sandbox --disable-gpu --disable-quic "
             "--no-first-run --disable-background-networking --disable-component-update "
             "--disable-sync --hide-scrollbars --user-data-dir='%s/profile' %s '%s' >'%s' 2>'%s'",
             chromium, dir, extra, url, out, err);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Fails on any console message Chromium logged (CSP violations, parse errors). */
static void no_console_messages(const char *l)
{
    for (const char *c = strstr(l, "CONSOLE"); c; c = strstr(c + 1, "CONSOLE")) {
        const char *e = strchr(c, '\n');
        fail_msg("console message: %.*s", e ? (int)(e - c) : (int)strlen(c), c);
    }
    assert_null(strstr(l, "Uncaught"));
}

static void loads_without_errors(void **state)
{
    (void)state;
    char dir[] = "/tmp/hf-test-report-browser-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char results[128], config[128], html[128], dom[128], log[128], url[160];
    snprintf(results, sizeof results, "%s/results.json", dir);
    snprintf(config, sizeof config, "%s/config.ini", dir);
    snprintf(html, sizeof html, "%s/report.html", dir);
    snprintf(dom, sizeof dom, "%s/dom.html", dir);
    snprintf(log, sizeof log, "%s/chromium.log", dir);
    snprintf(url, sizeof url, "file://%s", html);
    assert_int_equal(fix_write(config, FIX_CONFIG_TEXT), 0);
    assert_int_equal(fix_write_results(results, config), 0);
    hf_clear_error();
    assert_int_equal(hf_report_write(results, html), 0);
    char *page = read_text(html);
    assert_non_null(page);

    /* The DOM as Chromium parsed it: every chart, one bar per event. */
    assert_int_equal(run_chromium(dir, "--enable-logging=stderr --v=0 --dump-dom", url, dom, log),
                     0);
    char *d = read_text(dom), *l = read_text(log);
    assert_non_null(d);
    assert_non_null(l);
    static const char *const charts[] = {"gantt", "shares", "makespan", "efficiency"};
    for (size_t i = 0; i < sizeof charts / sizeof charts[0]; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "<svg class=\"chart %s\"", charts[i]);
        if (count_str(d, needle) != 2)
            fail_msg("the DOM holds %zu %s charts, expected 2", count_str(d, needle), charts[i]);
    }
    assert_int_equal(count_str(d, "<rect class=\"bar"), FIX_EVENTS);
    assert_int_equal(count_str(d, "<rect class=\"bar stolen"), FIX_STOLEN_EVENTS);
    assert_int_equal(count_str(d, "<polyline"), count_str(page, "<polyline"));
    assert_int_equal(count_str(d, "<circle"), count_str(page, "<circle"));
    assert_int_equal(count_str(d, "<tr class=\"run\">"), 2);
    assert_int_equal(count_str(d, "class=\"nodata\""), 0);
    assert_non_null(strstr(d, "SIMULATED"));
    /* Console messages (CSP violations, parse errors) are logged as CONSOLE lines. */
    no_console_messages(l);

    /* The screenshot for people. */
    char flags[PATH_MAX + 96];
    snprintf(flags, sizeof flags, "--screenshot='%s' --window-size=1400,2400", screenshot);
    unlink(screenshot);
    assert_int_equal(run_chromium(dir, flags, url, dom, log), 0);
    struct stat st;
    if (stat(screenshot, &st) != 0 || st.st_size < 20000)
        fail_msg("no screenshot at %s (or a nearly empty one)", screenshot);
    printf("screenshot: %s\n", screenshot);

    free(page);
    free(d);
    free(l);
    assert_int_equal(remove_tree(dir), 0); /* our mkdtemp directory, profile included */
}

/* A run across nodes in the browser: a lane and bars for every device inside
 * a node, their share lines, nothing logged. */
static void node_run_in_browser(void **state)
{
    (void)state;
    char dir[] = "/tmp/hf-test-report-browser-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char results[128], html[128], dom[128], log[128], url[160];
    snprintf(results, sizeof results, "%s/results.json", dir);
    snprintf(html, sizeof html, "%s/report.html", dir);
    snprintf(dom, sizeof dom, "%s/dom.html", dir);
    snprintf(log, sizeof log, "%s/chromium.log", dir);
    snprintf(url, sizeof url, "file://%s", html);
    assert_int_equal(node_fix_write_results(results, "none.ini"), 0);
    hf_clear_error();
    assert_int_equal(hf_report_write(results, html), 0);
    assert_int_equal(run_chromium(dir, "--enable-logging=stderr --v=0 --dump-dom", url, dom, log),
                     0);
    char *d = read_text(dom), *l = read_text(log);
    assert_non_null(d);
    assert_non_null(l);
    assert_int_equal(count_str(d, "class=\"lanelabel"), NODE_FIX_DEVICES + NODE_FIX_INNER);
    assert_int_equal(count_str(d, "class=\"lanelabel inner\""), NODE_FIX_INNER);
    assert_int_equal(count_str(d, "<rect class=\"bar"), NODE_FIX_EVENTS + NODE_FIX_INNER_EVENTS);
    assert_int_equal(count_str(d, "<polyline class=\"line dashed\""), NODE_FIX_INNER + 1);
    assert_non_null(strstr(d, ">node1:cuda0</text>"));
    no_console_messages(l);
    free(d);
    free(l);
    assert_int_equal(remove_tree(dir), 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    chromium = getenv("HF_CHROMIUM") ? getenv("HF_CHROMIUM") : "/usr/bin/chromium";
    if (access(chromium, X_OK) != 0) {
        printf("%s not found: install Debian's chromium package to run the browser check\n",
               chromium);
        return 77;
    }
    /* The screenshot goes to the build directory: BUILD/tests/test_x -> BUILD/report.png. */
    char self[PATH_MAX];
    if (!realpath(argv[0], self))
        snprintf(self, sizeof self, "./x");
    char *slash = strrchr(self, '/');
    *slash = '\0';
    slash = strrchr(self, '/');
    if (slash && strcmp(slash, "/tests") == 0)
        *slash = '\0';
    snprintf(screenshot, sizeof screenshot, "%s/report.png", self);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(loads_without_errors),
        cmocka_unit_test(node_run_in_browser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
