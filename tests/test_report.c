/* test_report.c - the HTML report: charts present with the right data, text
 * escaped, nothing external referenced, big runs merged, bad input refused
 * without writing anything. The browser check is test_report_browser.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_files.h"

#include <cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hetfarm.h"
#include "report/report.h"
#include "report_fixture.h"
#include "report_node_fixture.h"

struct paths {
    char dir[64], results[128], config[128], html[128];
};

static int setup(void **state)
{
    struct paths *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    snprintf(p->dir, sizeof p->dir, "/tmp/hf-test-report-XXXXXX");
    if (!mkdtemp(p->dir))
        return -1;
    snprintf(p->results, sizeof p->results, "%s/results.json", p->dir);
    snprintf(p->config, sizeof p->config, "%s/config.ini", p->dir);
    snprintf(p->html, sizeof p->html, "%s/report.html", p->dir);
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    struct paths *p = *state;
    DIR *d = opendir(p->dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char f[512];
        if (e->d_name[0] == '.')
            continue;
        snprintf(f, sizeof f, "%s/%s", p->dir, e->d_name);
        unlink(f);
    }
    if (d)
        closedir(d);
    rmdir(p->dir);
    free(p);
    return 0;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Files in the directory, to catch temporary files left behind. */
static int nfiles(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void renders_every_chart(void **state)
{
    struct paths *p = *state;
    assert_int_equal(fix_write(p->config, FIX_CONFIG_TEXT), 0);
    assert_int_equal(fix_write_results(p->results, p->config), 0);
    hf_clear_error();
    assert_int_equal(hf_report_write(p->results, p->html), 0);
    assert_int_equal(nfiles(p->dir), 3); /* no temporary file left */
    char *h = read_text(p->html);
    assert_non_null(h);
    assert_memory_equal(h, "<!DOCTYPE html>", 15);
    assert_non_null(strstr(h, "</html>"));

    /* A Gantt and a share chart per run; makespan and efficiency per engine. */
    assert_int_equal(count_str(h, "<svg class=\"chart gantt\""), 2);
    assert_int_equal(count_str(h, "<svg class=\"chart shares\""), 2);
    assert_int_equal(count_str(h, "<svg class=\"chart makespan\""), 2);
    assert_int_equal(count_str(h, "<svg class=\"chart efficiency\""), 2);
    assert_int_equal(count_str(h, "class=\"nodata\""), 0);
    /* One bar per event, stolen ones marked, GPU copies drawn (+1 legend swatch). */
    assert_int_equal(count_str(h, "<rect class=\"bar"), FIX_EVENTS);
    assert_int_equal(count_str(h, "<rect class=\"bar stolen"), FIX_STOLEN_EVENTS);
    assert_int_equal(count_str(h, "<rect class=\"hatch\""), FIX_STOLEN_EVENTS);
    assert_int_equal(count_str(h, "class=\"seg cin\""), 5 + 1);
    assert_int_equal(count_str(h, "class=\"seg cout\""), 5 + 1);
    /* Round boundaries: 4 + 3 rounds, plus a legend line per chart. */
    assert_int_equal(count_str(h, "class=\"roundline\""), 4 + 3 + 2);
    /* Lines: makespan + ideal per run, efficiency per run (run 0's null last
     * round only shortens its line), a share line per device and run. */
    assert_int_equal(count_str(h, "<polyline"), 2 * 2 + 2 + (2 + 1));

    /* Summary: the plan made in round 1 is repeated from round 2 on (the CLI
     * table's rule) / greedy has no plan; chunks stolen; NaN efficiency as "-". */
    assert_int_equal(count_str(h, "<tr class=\"run\">"), 2);
    assert_non_null(strstr(h, "<td class=\"n conv\">2</td>"));
    assert_non_null(strstr(h, "<td class=\"n conv\">-</td>"));
    assert_non_null(strstr(h, "<td class=\"n stolen\">8</td>"));
    assert_non_null(strstr(h, "<td class=\"n stolen\">7</td>"));
    assert_non_null(strstr(h, "<td class=\"n\">-</td>"));
    assert_non_null(strstr(h, "SIMULATED"));
    assert_non_null(strstr(h, "Test CPU @ 3GHz, 16 cores, 2 NUMA node(s)"));
    /* The device set of the one round that said it: one table, one row, the
     * GPU alone, the CPU left out, its predicted round against the full set's. */
    assert_int_equal(count_str(h, "<table class=\"devsets\">"), 1);
    assert_non_null(strstr(h, "<tr><td>3</td><td>h200 &lt;#1&gt; &amp; &quot;x&quot; &#39;y&#39; "
                              "(others left out)</td><td>1.875</td><td>2.125</td><td>0</td><td>"
                              "</td></tr>"));
    assert_non_null(strstr(h, "NVIDIA H200, 139.7 GiB, PCI 0000:01:00.0"));

    /* Escaping: names, host and config text arrive as entities, never as markup. */
    assert_non_null(strstr(h, FIX_GPU_NAME_ESCAPED));
    assert_null(strstr(h, "<#1>"));
    assert_non_null(strstr(h, "node&lt;1&gt;"));
    assert_non_null(strstr(h, "<pre class=\"config\">[run]"));
    assert_non_null(strstr(h, "a &lt;tag&gt; &amp; an &quot;ampersand&quot;"));
    assert_null(strstr(h, "<tag>"));

    /* Self-contained: nothing fetched, no scripts. */
    assert_null(strstr(h, "http://"));
    assert_null(strstr(h, "https://"));
    assert_null(strstr(h, "<script"));
    assert_null(strstr(h, "<link"));
    assert_null(strstr(h, "<img"));
    assert_null(strstr(h, "src="));
    assert_null(strstr(h, "@import"));
    for (const char *u = strstr(h, "url("); u; u = strstr(u + 4, "url("))
        assert_int_equal(u[4], '#');
    free(h);
}

/* A run with 12000 bundles on one device: that lane is merged to 4000 bars
 * and says so; the other lane keeps a bar per bundle. */
static void merges_crowded_lanes(void **state)
{
    struct paths *p = *state;
    cJSON *root = cJSON_CreateObject(), *runs = cJSON_AddArrayToObject(root, "runs");
    cJSON *r = cJSON_CreateObject();
    cJSON_AddItemToArray(runs, r);
    cJSON_AddStringToObject(r, "scheduler", "hass");
    cJSON_AddStringToObject(r, "engine", "sim");
    cJSON *devs = cJSON_AddArrayToObject(r, "devices");
    for (int d = 0; d < 2; d++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", d ? "gpu" : "cpu");
        cJSON_AddBoolToObject(x, "is_gpu", d);
        cJSON_AddItemToArray(devs, x);
    }
    cJSON *rounds = cJSON_AddArrayToObject(r, "rounds");
    for (int k = 0; k < 3; k++) {
        cJSON *x = cJSON_CreateObject(), *rd;
        cJSON_AddNumberToObject(x, "round", k);
        cJSON_AddNumberToObject(x, "makespan_s", 1.0 + 1.0 / (k + 1));
        cJSON_AddNumberToObject(x, "ideal_s", 1.0);
        cJSON_AddNumberToObject(x, "efficiency", 1.0 / (1.0 + 1.0 / (k + 1)));
        rd = cJSON_AddArrayToObject(x, "devices");
        for (int d = 0; d < 2; d++) {
            cJSON *y = cJSON_CreateObject();
            cJSON_AddNumberToObject(y, "share", d ? 0.4 : 0.6);
            cJSON_AddItemToArray(rd, y);
        }
        cJSON_AddItemToArray(rounds, x);
    }
    cJSON *ev = cJSON_AddArrayToObject(r, "events");
    for (int i = 0; i < 12010; i++) {
        cJSON *x = cJSON_CreateObject();
        int gpu = i >= 12000, k = gpu ? i - 12000 : i;
        double t = gpu ? k * 0.3 : k * 0.00025;
        cJSON_AddNumberToObject(x, "round", gpu ? k / 4 : k / 4000);
        cJSON_AddNumberToObject(x, "device", gpu);
        cJSON_AddNumberToObject(x, "start_s", t);
        cJSON_AddNumberToObject(x, "end_s", t + (gpu ? 0.3 : 0.00025));
        cJSON_AddBoolToObject(x, "stolen", k == 7);
        cJSON_AddItemToArray(ev, x);
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    assert_non_null(text);
    assert_int_equal(fix_write(p->results, text), 0);
    free(text);
    hf_clear_error();
    assert_int_equal(hf_report_write(p->results, p->html), 0);
    char *h = read_text(p->html);
    assert_non_null(h);
    assert_int_equal(count_str(h, "<rect class=\"bar merged"), 3999);
    assert_int_equal(count_str(h, "<rect class=\"bar stolen merged"), 1);
    assert_int_equal(count_str(h, "<rect class=\"bar"), 4000 + 10);
    assert_non_null(strstr(h, "12000 bundles in 4000 bars"));
    assert_non_null(strstr(h, "class=\"note merged\""));
    free(h);
}

/* Expects hf_report_write to fail with `err` and a message holding both
 * `want1` and `want2`, leaving `html` as it was (absent or "old"). */
static void expect_fail(const struct paths *p, int err, const char *want1, const char *want2)
{
    hf_clear_error();
    int rc = hf_report_write(p->results, p->html);
    const char *msg = hf_last_error();
    if (rc != err || !strstr(msg, want1) || !strstr(msg, want2))
        fail_msg("rc %d (want %d), message \"%s\" (want \"%s\" and \"%s\")", rc, err, msg,
                 want1, want2);
    char *h = read_text(p->html);
    assert_non_null(h);
    assert_string_equal(h, "old");
    free(h);
    assert_int_equal(nfiles(p->dir), 1 + exists(p->results)); /* no temporary file left */
}

/* Writes a fixture (fixture_fmt or node_fixture_fmt) with one edit made through cJSON. */
static void write_edited_fmt(const struct paths *p, const char *fmt, void (*edit)(cJSON *root))
{
    size_t n = strlen(fmt) + 256;
    char *buf = malloc(n);
    assert_non_null(buf);
    snprintf(buf, n, fmt, "none.ini");
    cJSON *root = cJSON_Parse(buf);
    free(buf);
    assert_non_null(root);
    edit(root);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    assert_int_equal(fix_write(p->results, text), 0);
    free(text);
}

static void write_edited(const struct paths *p, void (*edit)(cJSON *root))
{
    write_edited_fmt(p, fixture_fmt, edit);
}

static cJSON *at(cJSON *root, int run, const char *arr, int i)
{
    cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "runs"), run);
    return cJSON_GetArrayItem(cJSON_GetObjectItem(r, arr), i);
}

static void drop_end(cJSON *root)
{
    cJSON_DeleteItemFromObject(at(root, 0, "events", 1), "end_s");
}

static void string_start(cJSON *root)
{
    cJSON_ReplaceItemInObject(at(root, 1, "events", 2), "start_s", cJSON_CreateString("0"));
}

static void bad_device(cJSON *root)
{
    cJSON_ReplaceItemInObject(at(root, 1, "events", 0), "device", cJSON_CreateNumber(3));
}

static void short_round(cJSON *root)
{
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(at(root, 0, "rounds", 2), "devices"), 1);
}

static void unknown_node(cJSON *root)
{
    cJSON_ReplaceItemInObject(at(root, 0, "node_devices", 2), "node", cJSON_CreateString("node3"));
}

static void bad_inner_device(cJSON *root)
{
    cJSON_ReplaceItemInObject(at(root, 0, "node_events", 4), "device", cJSON_CreateNumber(3));
}

static void short_inner_round(cJSON *root)
{
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(at(root, 0, "rounds", 1), "node_devices"), 0);
}

static void partial_file(cJSON *root)
{
    cJSON *f = cJSON_AddObjectToObject(root, "failed");
    cJSON_AddStringToObject(f, "message", "rank 2 reported nothing <within 2 s>");
    cJSON_AddNumberToObject(f, "rank", 2);
}

static void no_scheduler(cJSON *root)
{
    cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "runs"), 1),
                               "scheduler");
}

/* Two passes of [compare] passes: the hass run as pass 1 and a copy of it,
 * every makespan doubled, as pass 2; greedy as pass 1. */
static void two_passes(cJSON *root)
{
    cJSON *runs = cJSON_GetObjectItem(root, "runs");
    cJSON *again = cJSON_Duplicate(cJSON_GetArrayItem(runs, 0), 1);
    cJSON *rd;
    cJSON_ArrayForEach(rd, cJSON_GetObjectItem(again, "rounds"))
    {
        cJSON *m = cJSON_GetObjectItem(rd, "makespan_s");
        cJSON_SetNumberValue(m, 2 * m->valuedouble);
    }
    cJSON_AddNumberToObject(cJSON_GetArrayItem(runs, 0), "pass", 1);
    cJSON_AddNumberToObject(cJSON_GetArrayItem(runs, 1), "pass", 1);
    cJSON_AddNumberToObject(again, "pass", 2);
    cJSON_AddItemToArray(runs, again);
}

static void bad_left_out(cJSON *root)
{
    cJSON_AddNumberToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(at(root, 0, "rounds", 1),
                                                                   "devices"), 0),
                            "left_out", 1);
}

static void bad_pass(cJSON *root)
{
    cJSON_AddNumberToObject(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "runs"), 1), "pass",
                            1.5);
}

/* Runs of [compare] passes: labelled with their pass, and summed up per
 * scheduler (the mean makespan from round 2 over the passes, the least and
 * the most); a file without passes has no such table. */
static void renders_passes(void **state)
{
    struct paths *p = *state;
    assert_int_equal(fix_write(p->config, FIX_CONFIG_TEXT), 0);
    assert_int_equal(fix_write_results(p->results, p->config), 0);
    assert_int_equal(hf_report_write(p->results, p->html), 0);
    char *h = read_text(p->html);
    assert_non_null(h);
    assert_null(strstr(h, "id=\"passes\""));
    free(h);
    write_edited(p, two_passes);
    hf_clear_error();
    assert_int_equal(hf_report_write(p->results, p->html), 0);
    h = read_text(p->html);
    assert_non_null(h);
    assert_non_null(strstr(h, "hass (pass 2)"));
    const char *t = strstr(h, "id=\"passes\"");
    assert_non_null(t);
    assert_int_equal(count_str(t, "<tr class=\"pass\">"), 2);
    /* hass: rounds 2 and 3 of the fixture take 2.05 and 2.0 s, twice that in pass 2. */
    const char *row = strstr(t, "<tr class=\"pass\"><td>hass</td>");
    assert_non_null(row);
    const char *end = strstr(row, "</tr>");
    assert_non_null(end);
    const char *two = strstr(row, "<td class=\"n\">2</td>"), *least = strstr(row, ">2.025<"),
               *most = strstr(row, ">4.05<");
    assert_true(two && two < end && least && least < end && most && most < end);
    free(h);
}

/* The text of the Gantt lane labels of `h` in page order, "|"-separated. */
static void lane_labels(const char *h, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    const char *mark = "class=\"lanelabel";
    for (const char *p = strstr(h, mark); p; p = strstr(p + 1, mark)) {
        const char *s = strchr(p, '>') + 1, *e = strchr(s, '<');
        o += (size_t)snprintf(out + o, cap - o, "%s%.*s", o ? "|" : "", (int)(e - s), s);
        assert_true(o < cap);
    }
}

/* A run across nodes: the devices inside the nodes are drawn like the run's
 * own (the lanes under their node, their bundles, their shares, the summary). */
static void renders_nodes(void **state)
{
    struct paths *p = *state;
    assert_int_equal(fix_write(p->config, FIX_CONFIG_TEXT), 0);
    assert_int_equal(node_fix_write_results(p->results, p->config), 0);
    hf_clear_error();
    assert_int_equal(hf_report_write(p->results, p->html), 0);
    char *h = read_text(p->html);
    assert_non_null(h);
    /* A lane per device, each node's devices right under it. */
    char labels[256];
    lane_labels(h, labels, sizeof labels);
    assert_string_equal(labels, "cpu|node1|node1:cpu|node1:cuda0|node2|node2:cpu");
    assert_int_equal(count_str(h, "class=\"lanelabel inner\""), NODE_FIX_INNER);
    assert_int_equal(count_str(h, "<g class=\"lanebars inner\""), NODE_FIX_INNER);
    /* A bar per bundle, inside the nodes too; copy segments on the node
     * devices' bars (the hand-off) and on node1:cuda0's (+1 legend swatch). */
    assert_int_equal(count_str(h, "<rect class=\"bar"), NODE_FIX_EVENTS + NODE_FIX_INNER_EVENTS);
    assert_int_equal(count_str(h, "class=\"seg cin\""), 4 + 2 + 1);
    assert_non_null(strstr(h, "<title>node1:cuda0, round 1, chunks 20..39, copy-in 0.1 s"));
    /* Inner lanes sit between their node's lane and the next device's. */
    const char *n1 = strstr(h, "data-device=\"1\""), *c0 = strstr(h, "data-device=\"4\"");
    const char *n2 = strstr(h, "data-device=\"2\"");
    assert_true(n1 && c0 && n2 && n1 < c0 && c0 < n2);
    /* Shares: a line per device of the run and inside its nodes, the inner
     * ones dashed: node1:cuda0 did 0.6 of node1's 50%, 30% of the round. */
    assert_int_equal(count_str(h, "<svg class=\"chart shares\""), 1);
    const char *sh = strstr(h, "<svg class=\"chart shares\"");
    const char *sh_end = strstr(sh, "</svg>");
    char *chart = strndup(sh, (size_t)(sh_end - sh));
    assert_non_null(chart);
    assert_int_equal(count_str(chart, "<polyline"), NODE_FIX_DEVICES + NODE_FIX_INNER);
    assert_int_equal(count_str(chart, "<polyline class=\"line dashed\""), NODE_FIX_INNER);
    assert_non_null(strstr(chart, "node1:cuda0 1: 30</title>"));
    free(chart);
    /* The summary names the devices inside each node after it. */
    assert_non_null(strstr(h, "<td class=\"devs\">cpu, node1 [node1:cpu, node1:cuda0], node2 "
                              "[node2:cpu]</td>"));
    assert_null(strstr(h, "banner fault failed"));
    free(h);

    /* results.partial.json of a failed run: the page says so, and why. */
    write_edited_fmt(p, node_fixture_fmt, partial_file);
    assert_int_equal(hf_report_write(p->results, p->html), 0);
    h = read_text(p->html);
    assert_non_null(h);
    assert_non_null(strstr(h, "<p class=\"banner fault failed\">The run failed; these are the "
                              "rounds that finished. rank 2 reported nothing &lt;within 2 s&gt;"));
    free(h);
}

static void refuses_bad_input(void **state)
{
    struct paths *p = *state;
    assert_int_equal(fix_write(p->html, "old"), 0);

    expect_fail(p, HF_EIO, p->results, "cannot read"); /* missing file */
    assert_int_equal(fix_write(p->results, "{\"runs\": [\n{\"scheduler\": \n"), 0);
    expect_fail(p, HF_EINVAL, p->results, "invalid JSON");
    assert_int_equal(fix_write(p->results, "[1, 2]"), 0);
    expect_fail(p, HF_EINVAL, p->results, "not an object");
    assert_int_equal(fix_write(p->results, "{\"machine\": {}}"), 0);
    expect_fail(p, HF_EINVAL, p->results, "missing array \"runs\"");
    assert_int_equal(fix_write(p->results, "{\"runs\": []}"), 0);
    expect_fail(p, HF_EINVAL, p->results, "nothing to report");
    write_edited(p, drop_end);
    expect_fail(p, HF_EINVAL, "runs[0].events[1]", "missing number \"end_s\"");
    write_edited(p, string_start);
    expect_fail(p, HF_EINVAL, "runs[1].events[2]", "\"start_s\" is not a number");
    write_edited(p, bad_device);
    expect_fail(p, HF_EINVAL, "runs[1].events[0]", "\"device\" = 3");
    write_edited(p, short_round);
    expect_fail(p, HF_EINVAL, "runs[0].rounds[2]", "has 1 entries, the run has 2");
    write_edited(p, no_scheduler);
    expect_fail(p, HF_EINVAL, "runs[1]", "missing string \"scheduler\"");
    write_edited(p, bad_left_out);
    expect_fail(p, HF_EINVAL, "runs[0].rounds[1].devices[0]", "\"left_out\" is not a boolean");
    write_edited(p, bad_pass);
    expect_fail(p, HF_EINVAL, "runs[1]", "\"pass\" = 1.5");
    /* A run across nodes: its devices inside the nodes must agree. */
    write_edited_fmt(p, node_fixture_fmt, unknown_node);
    expect_fail(p, HF_EINVAL, "runs[0].node_devices[2]", "\"node\" = \"node3\"");
    write_edited_fmt(p, node_fixture_fmt, bad_inner_device);
    expect_fail(p, HF_EINVAL, "runs[0].node_events[4]", "\"device\" = 3");
    write_edited_fmt(p, node_fixture_fmt, short_inner_round);
    expect_fail(p, HF_EINVAL, "runs[0].rounds[1]", "\"node_devices\"");

    /* The report never overwrites its own input, and an unwritable target fails. */
    hf_clear_error();
    assert_int_equal(hf_report_write(p->results, p->results), HF_EINVAL);
    char bad[160];
    snprintf(bad, sizeof bad, "%s/no/such/dir/r.html", p->dir);
    assert_int_equal(fix_write_results(p->results, "x.ini"), 0);
    hf_clear_error();
    assert_int_equal(hf_report_write(p->results, bad), HF_EIO);
    assert_non_null(strstr(hf_last_error(), bad));
    assert_false(exists(bad));
}

static void default_path(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(hf_report_default_path("out/x/results.json", buf, sizeof buf), 0);
    assert_string_equal(buf, "out/x/report.html");
    assert_int_equal(hf_report_default_path("results.json", buf, sizeof buf), 0);
    assert_string_equal(buf, "report.html");
    assert_int_equal(hf_report_default_path("/r.json", buf, sizeof buf), 0);
    assert_string_equal(buf, "/report.html");
    assert_int_equal(hf_report_default_path("a/very/long/directory/name/that/does/not/fit/r.json",
                                            buf, 16), HF_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(renders_every_chart, setup, teardown),
        cmocka_unit_test_setup_teardown(renders_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(renders_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(merges_crowded_lanes, setup, teardown),
        cmocka_unit_test_setup_teardown(refuses_bad_input, setup, teardown),
        cmocka_unit_test(default_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
