/* test_bad_input.c - the bad-input table: every row is one test of the `hetfarm` binary.
 *
 * A row gives the input (up to three files written into a fresh directory:
 * configs, pattern files, texts, results files; FIFO and DIR make a FIFO or a
 * directory instead, and a few generated contents stand for inputs too big to
 * write out), the command line, the exit status expected and the words its
 * message must hold. Every failing row also checks that nothing was written
 * (no results, report or trace), and every command runs under `timeout`, so
 * an input that hangs (a FIFO opened before its type was checked) fails its
 * row instead of the suite. The binary is found as in test_cli.c; without it
 * the test is skipped (exit 77).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_files.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Contents that are not text: made by make_file(). */
#define FIFO "\001fifo"
#define DIR "\001dir"
#define NULBYTES "\001nul"
#define LONGLINE "\001longline"
#define MANYPATS "\001manypats"
#define LONGPAT "\001longpat"   /* one pattern of 65537 bytes */
#define PAT300 "\001pat300"     /* one pattern of 300 bytes: fine on the CPU */

struct file {
    const char *name, *text;
};

struct row {
    const char *name;
    struct file files[3];
    const char *args;
    int rc;
    const char *words[3];
};

#define RUN "[run]\napp = noop\nrounds = 1\nprogress = no\n"
#define SIM RUN "engine = sim\n[load]\nchunks = 20\n[devices]\nsim = h\n[sim.h]\nkind = cpu\nrate = 1e6\n"
#define SS "[run]\napp = strsearch\nrounds = 1\nprogress = no\n[devices]\ncpu = 1\ncuda = none\n" \
           "[load]\nchunk = 64K\n"
#define SSOK SS "text = t.txt\npatterns = p.txt\n"
#define SSCHUNK100 "[run]\napp = strsearch\nrounds = 1\nprogress = no\n[devices]\ncpu = 1\n" \
                   "cuda = none\n[load]\nchunk = 100\ntext = t.txt\npatterns = p.txt\n"
#define RES_RUN "{\"scheduler\":\"hass\",\"engine\":\"sim\",\"devices\":[{\"name\":\"a\"}],"
#define RES(runs) "{\"hetfarm\":\"1\",\"runs\":[" runs "]}"

static const struct row rows[] = {
    /* configs: sections and keys */
    {"sim_key_typo", {{"c.ini", SIM "latncy_us = 500\n"}}, "run c.ini", 1,
     {"c.ini:13: [sim.h] latncy_us", "unknown key", "latency_us"}},
    {"unknown_section", {{"c.ini", SIM "[simm]\n"}}, "run c.ini", 1,
     {"c.ini:13: [simm]", "unknown section", "sim.NAME"}},
    {"run_key_typo", {{"c.ini", RUN "rouds = 3\n"}}, "run c.ini", 1,
     {"c.ini:5: [run] rouds", "unknown key", "rounds"}},
    {"load_key_typo", {{"c.ini", RUN "[load]\nchunkz = 3\n"}}, "run c.ini", 1,
     {"c.ini:6: [load] chunkz", "unknown key", "chunks"}},
    {"hass_key_typo", {{"c.ini", SIM "[hass]\nwindw = 3\n"}}, "run c.ini", 1,
     {"[hass] windw", "unknown key", "window"}},
    {"sim_not_named", {{"c.ini", SIM "[sim.g]\nrate = 1\n"}}, "run c.ini", 1,
     {"c.ini:13: [sim.g]", "not named by [devices] sim"}},
    {"sim_names_no_section", {{"c.ini", RUN "engine = sim\n[devices]\nsim = h, g\n[sim.h]\nrate = 1\n"}},
     "run c.ini", 1, {"[devices] sim = h, g", "names no [sim.g] section"}},
    {"sim_rate_missing", {{"c.ini", RUN "engine = sim\n[devices]\nsim = h\n[sim.h]\nkind = cpu\n"}},
     "run c.ini", 1, {"c.ini:8: [sim.h] rate: missing"}},
    /* configs: values */
    {"rate_zero", {{"c.ini", RUN "engine = sim\n[devices]\nsim = h\n[sim.h]\nrate = 0\n"}}, "run c.ini",
     1, {"c.ini:9: [sim.h] rate = 0", "expected a number in (0,"}},
    {"latency_negative", {{"c.ini", SIM "latency_us = -5\n"}}, "run c.ini", 1,
     {"c.ini:13: [sim.h] latency_us = -5", "expected a number in [0,"}},
    {"jitter_one", {{"c.ini", SIM "jitter = 1\n"}}, "run c.ini", 1,
     {"[sim.h] jitter = 1", "[0, 1)"}},
    {"rate_nan", {{"c.ini", RUN "engine = sim\n[devices]\nsim = h\n[sim.h]\nrate = nan\n"}},
     "run c.ini", 1, {"[sim.h] rate = nan", "finite number"}},
    {"rate_inf", {{"c.ini", RUN "engine = sim\n[devices]\nsim = h\n[sim.h]\nrate = inf\n"}},
     "run c.ini", 1, {"[sim.h] rate = inf", "finite number"}},
    {"rate_overflow", {{"c.ini", RUN "engine = sim\n[devices]\nsim = h\n[sim.h]\nrate = 1e999\n"}},
     "run c.ini", 1, {"[sim.h] rate = 1e999", "finite number"}},
    {"duplicate_key", {{"c.ini", RUN "rounds = 0\n"}}, "run c.ini", 1,
     {"c.ini:5: [run] rounds given twice (first on line 3)"}},
    {"rounds_zero", {{"c.ini", "[run]\napp = noop\nrounds = 0\n"}}, "run c.ini", 1,
     {"c.ini:3: [run] rounds = 0", "[1, 1000000]"}},
    {"rounds_overflow", {{"c.ini", "[run]\napp = noop\nrounds = 99999999999999999999\n"}},
     "run c.ini", 1, {"[run] rounds = 99999999999999999999", "overflows"}},
    {"grain_zero", {{"c.ini", RUN "grain = 0\n"}}, "run c.ini", 1, {"c.ini:5: [run] grain = 0"}},
    {"verify_not_bool", {{"c.ini", RUN "verify = maybe\n"}}, "run c.ini", 1,
     {"[run] verify = maybe", "expected yes or no"}},
    {"matmul_n_zero", {{"c.ini", "[run]\napp = matmul\n[load]\nn = 0\n"}}, "run c.ini", 1,
     {"c.ini:4: [load] n = 0", "[1, 1048576]"}},
    {"matmul_n_missing", {{"c.ini", "[run]\napp = matmul\n"}}, "run c.ini", 1,
     {"[load] n: missing"}},
    {"noop_chunks_zero", {{"c.ini", RUN "[load]\nchunks = 0\n"}}, "run c.ini", 1,
     {"[load] chunks = 0"}},
    {"hass_window_zero", {{"c.ini", SIM "[hass]\nwindow = 0\n"}}, "run c.ini", 1,
     {"[hass] window = 0", "[1, 64]"}},
    {"qilin_fraction_zero", {{"c.ini", SIM "[qilin]\ntrain_fraction = 0\n"}}, "run c.ini", 1,
     {"[qilin] train_fraction = 0", "(0, 0.9]"}},
    {"static_empty_item", {{"c.ini", SIM "[static]\nratios = 1,,2\n"}}, "run c.ini", 1,
     {"[static] ratios = 1,,2", "empty item"}},
    {"duplicate_key_sim", {{"c.ini", SIM "kind = gpu\n"}}, "run c.ini", 1,
     {"[sim.h] kind given twice"}},
    {"kind_fpga", {{"c.ini", RUN "engine = sim\n[devices]\nsim = h\n[sim.h]\nrate = 1\nkind = fpga\n"}},
     "run c.ini", 1, {"[sim.h] kind = fpga", "gpu|cpu"}},
    {"cpu_words", {{"c.ini", RUN "[devices]\ncpu = lots\n"}}, "run c.ini", 1,
     {"[devices] cpu = lots", "expected an integer or one of all"}},
    {"pin_not_bool", {{"c.ini", SSOK "pin = sometimes\n"}}, "run c.ini", 1,
     {"[load] pin = sometimes", "expected yes or no"}},
    {"segment_size_junk", {{"c.ini", SSOK "segment = 4Q\n"}}, "run c.ini", 1,
     {"[load] segment = 4Q", "expected a size"}},
    /* configs: the file itself */
    {"malformed_line", {{"c.ini", RUN "this is not a key\n"}}, "run c.ini", 1,
     {"c.ini:5: malformed line"}},
    {"key_outside_section", {{"c.ini", "app = noop\n" RUN}}, "run c.ini", 1,
     {"c.ini:1", "outside any [section]"}},
    {"config_missing", {{NULL, NULL}}, "run nope.ini", 1, {"cannot read config nope.ini"}},
    {"config_directory", {{"c.ini", DIR}}, "run c.ini", 1, {"c.ini", "not a regular file"}},
    {"config_fifo", {{"c.ini", FIFO}}, "run c.ini", 1, {"c.ini", "not a regular file"}},
    {"config_nul", {{"c.ini", NULBYTES}}, "run c.ini", 1, {"c.ini", "NUL bytes"}},
    {"config_long_line", {{"c.ini", LONGLINE}}, "run c.ini", 1, {"c.ini:2", "line too long"}},
    {"unknown_app", {{"c.ini", "[run]\napp = nosuch\n"}}, "run c.ini", 2,
     {"unknown app 'nosuch'", "matmul"}},
    {"unknown_scheduler", {{"c.ini", RUN "scheduler = nosuch\n"}}, "run c.ini", 2,
     {"unknown scheduler 'nosuch'", "hass"}},
    {"unknown_engine_compare", {{"c.ini", RUN "[compare]\nengines = real, gpu\n"}}, "compare c.ini",
     2, {"unknown engine 'gpu'"}},
    /* pattern files */
    {"patterns_empty", {{"c.ini", SSOK}, {"t.txt", "some text"}, {"p.txt", ""}}, "run c.ini", 1,
     {"p.txt:1", "empty file, no patterns"}},
    {"patterns_blank_line", {{"c.ini", SSOK}, {"t.txt", "some text"}, {"p.txt", "a\n\nb\n"}},
     "run c.ini", 1, {"p.txt:2", "empty pattern line"}},
    {"patterns_too_long", {{"c.ini", SSOK}, {"t.txt", "some text"}, {"p.txt", LONGPAT}},
     "run c.ini", 1, {"p.txt:1", "pattern of 65537 bytes, at most 65536"}},
    {"patterns_too_many", {{"c.ini", SSOK}, {"t.txt", "some text"}, {"p.txt", MANYPATS}},
     "run c.ini", 1, {"p.txt:10001", "more than 10000 patterns"}},
    {"patterns_missing", {{"c.ini", SSOK}, {"t.txt", "some text"}}, "run c.ini", 1,
     {"p.txt", "No such file"}},
    {"patterns_directory", {{"c.ini", SSOK}, {"t.txt", "some text"}, {"p.txt", DIR}}, "run c.ini",
     1, {"p.txt", "not a regular file"}},
    {"patterns_fifo", {{"c.ini", SSOK}, {"t.txt", "some text"}, {"p.txt", FIFO}}, "run c.ini", 1,
     {"p.txt", "not a regular file"}},
    {"pattern_300_bytes_on_cpu", {{"c.ini", SSOK}, {"t.txt", "x"}, {"p.txt", PAT300}},
     "run c.ini", 0, {"results:"}},
    {"pattern_longer_than_chunk", {{"c.ini", SSCHUNK100}, {"t.txt", "x"}, {"p.txt", PAT300}},
     "run c.ini", 1, {"[load] chunk = 100", "shorter than the longest pattern (300 bytes)"}},
    {"patterns_key_missing", {{"c.ini", SS "text = t.txt\n"}, {"t.txt", "x"}}, "run c.ini", 1,
     {"[load] patterns: missing"}},
    /* text files */
    {"text_empty", {{"c.ini", SSOK}, {"t.txt", ""}, {"p.txt", "a\n"}}, "run c.ini", 1,
     {"c.ini:10: [load] text = t.txt", "empty file, nothing to search"}},
    {"text_missing", {{"c.ini", SSOK}, {"p.txt", "a\n"}}, "run c.ini", 1,
     {"[load] text = t.txt", "No such file"}},
    {"text_directory", {{"c.ini", SSOK}, {"t.txt", DIR}, {"p.txt", "a\n"}}, "run c.ini", 1,
     {"[load] text = t.txt", "not a regular file"}},
    {"text_fifo", {{"c.ini", SSOK}, {"t.txt", FIFO}, {"p.txt", "a\n"}}, "run c.ini", 1,
     {"[load] text = t.txt", "not a regular file"}},
    /* results files (hetfarm report) */
    {"results_not_json", {{"r.json", "{\"runs\": [1, 2,"}}, "report r.json", 1,
     {"r.json:1", "invalid JSON"}},
    {"results_top_array", {{"r.json", "[]"}}, "report r.json", 1,
     {"r.json", "top level is not an object"}},
    {"results_no_runs", {{"r.json", "{\"hetfarm\":\"1\"}"}}, "report r.json", 1,
     {"r.json", "missing array \"runs\""}},
    {"results_empty_runs", {{"r.json", RES("")}}, "report r.json", 1, {"\"runs\" is empty"}},
    {"results_bad_round", {{"r.json", RES(RES_RUN "\"rounds\":[{\"round\":1e10,\"makespan_s\":1,"
                                              "\"ideal_s\":1,\"efficiency\":1,\"devices\":[{}]}],"
                                              "\"events\":[]}")}},
     "report r.json", 1, {"runs[0].rounds[0]", "is not a round number"}},
    {"results_bad_device", {{"r.json", RES(RES_RUN "\"rounds\":[],\"events\":[{\"round\":0,"
                                               "\"device\":3,\"start_s\":0,\"end_s\":1}]}")}},
     "report r.json", 1, {"runs[0].events[0]", "is not a device of the run"}},
    {"results_missing", {{NULL, NULL}}, "report r.json", 1, {"r.json", "cannot read results"}},
    {"results_fifo", {{"r.json", FIFO}}, "report r.json", 1, {"r.json", "not a regular file"}},
    {"report_over_results", {{"r.json", RES("")}}, "report r.json -o r.json", 1,
     {"would overwrite the results"}},
    /* command-line flags */
    {"flag_rounds_zero", {{"c.ini", SIM}}, "run c.ini --rounds 0", 2, {"--rounds 0"}},
    {"flag_rounds_junk", {{"c.ini", SIM}}, "run c.ini --rounds 3x", 2, {"--rounds 3x"}},
    {"flag_seed_negative", {{"c.ini", SIM}}, "run c.ini --seed -1", 2, {"--seed -1"}},
    {"flag_unknown", {{"c.ini", SIM}}, "run c.ini --bogus", 2, {"unknown option --bogus"}},
    {"flag_no_value", {{"c.ini", SIM}}, "run c.ini -o", 2, {"needs a value"}},
    {"flag_engine", {{"c.ini", SIM}}, "run c.ini --engine quantum", 2,
     {"unknown engine 'quantum'"}},
    {"flag_scheduler_compare", {{"c.ini", SIM}}, "compare c.ini --scheduler hass", 2,
     {"--scheduler is for `run`"}},
    {"flag_two_configs", {{"c.ini", SIM}}, "run c.ini c.ini", 2, {"expects one CONFIG"}},
    {"flag_devices_arg", {{NULL, NULL}}, "devices extra", 2, {"takes no arguments"}},
    {"flag_unknown_scheduler", {{"c.ini", SIM}}, "run c.ini --scheduler nosuch", 2,
     {"unknown scheduler 'nosuch'"}},
};

static char bin[PATH_MAX];

/* Writes one input file, or makes the FIFO, directory or generated content it names. */
static void make_file(const char *dir, const struct file *f)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, f->name);
    if (strcmp(f->text, FIFO) == 0) {
        assert_int_equal(mkfifo(path, 0600), 0);
    } else if (strcmp(f->text, DIR) == 0) {
        assert_int_equal(mkdir(path, 0700), 0);
    } else if (strcmp(f->text, NULBYTES) == 0) {
        static const char nul[] = "[run]\napp = noop\0rounds = 1\n";
        write_file(path, nul, sizeof nul - 1);
    } else if (f->text[0] == '\001') {
        size_t n = 20 * 10001 + 70000;
        char *b = malloc(n);
        assert_non_null(b);
        size_t len = 0;
        if (strcmp(f->text, LONGLINE) == 0) {
            len = (size_t)sprintf(b, "[run]\napp = noop");
            memset(b + len, 'x', 5000);
            len += 5000;
        } else if (strcmp(f->text, MANYPATS) == 0) {
            for (int i = 0; i < 10001; i++)
                len += (size_t)sprintf(b + len, "p%d\n", i);
        } else {
            size_t pl = strcmp(f->text, LONGPAT) == 0 ? 65537 : 300;
            memset(b, 'q', pl);
            len = pl;
        }
        b[len++] = '\n';
        write_file(path, b, len);
        free(b);
    } else {
        write_file(path, f->text, strlen(f->text));
    }
}

static int exists(const char *dir, const char *name)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

/* One row: fresh directory, its files, the command, then exit status, words, no output. */
static void run_row(void **state)
{
    const struct row *r = *state;
    char dir[] = "/tmp/hf-bad-input-XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 3 && r->files[i].name; i++)
        make_file(dir, &r->files[i]);
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof cmd, "cd '%s' && HF_REEXEC=1 timeout 30 '%s' %s 2>&1", dir, bin,
             r->args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char out[1 << 16];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (rc != r->rc)
        fail_msg("row %s: `hetfarm %s` exited %d, expected %d:\n%s", r->name, r->args, rc, r->rc,
                 out);
    for (int i = 0; i < 3 && r->words[i]; i++)
        if (!strstr(out, r->words[i]))
            fail_msg("row %s: no \"%s\" in the message:\n%s", r->name, r->words[i], out);
    if (r->rc != 0)
        for (const char *const *o = (const char *const[]){"results.json", "report.html", NULL}; *o;
             o++)
            if (exists(dir, *o))
                fail_msg("row %s: failed but wrote %s", r->name, *o);
    assert_int_equal(remove_tree(dir), 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *env = getenv("HF_BIN");
    char self[PATH_MAX];
    if (env)
        snprintf(bin, sizeof bin, "%s", env);
    else if (realpath(argv[0], self))
        snprintf(bin, sizeof bin, "%s/../hetfarm", dirname(self));
    if (access(bin, X_OK) != 0) {
        printf("skipped: no hetfarm binary at %s (build it, or set HF_BIN)\n", bin);
        return 77;
    }
    enum { N = sizeof rows / sizeof rows[0] };
    struct CMUnitTest tests[N];
    for (size_t i = 0; i < N; i++)
        tests[i] = (struct CMUnitTest){rows[i].name, run_row, NULL, NULL, (void *)&rows[i]};
    printf("%d rows\n", (int)N);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
