/* test_cli.c - the `hetfarm` binary: help, bad configs, unknown names, exit codes.
 *
 * The binary is found next to the test directory (<dir of argv[0]>/../hetfarm,
 * i.e. build/hetfarm for build/tests/test_cli) or through $HF_BIN. Without it
 * the test is skipped (exit 77).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_files.h"

#include <cJSON.h>

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char bin[PATH_MAX];
static char dir[64];
static char out[1 << 16];

/* Runs `bin args` in the temporary directory, capturing stdout+stderr into
 * `out`; returns the exit status (or -1 when it did not exit normally). */
static int hetfarm(const char *args)
{
    char cmd[PATH_MAX + 1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && HF_REEXEC=1 '%s' %s 2>&1", dir, bin, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Writes `text` to the file `name` in the test's directory. */
static void write_in_dir(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_file(path, text, strlen(text));
}

static int exists(const char *name)
{
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return stat(path, &st) == 0;
}

/* The whole of file `name` in the temporary directory (free it), or NULL. */
static char *text_in_dir(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return read_text(path);
}

static void test_help(void **state)
{
    (void)state;
    assert_int_equal(hetfarm("--help"), 0);
    assert_non_null(strstr(out, "usage: hetfarm"));
    assert_non_null(strstr(out, "compare CONFIG"));
    assert_int_equal(hetfarm("help"), 0);
    assert_int_equal(hetfarm("help run"), 0);
    assert_non_null(strstr(out, "usage: hetfarm run CONFIG"));
    assert_int_equal(hetfarm("run --help"), 0);
    assert_non_null(strstr(out, "hass")); /* lists the schedulers */
    assert_non_null(strstr(out, "noop")); /* and the apps */
    /* and every config key, from the validation's own tables */
    assert_non_null(strstr(out, "[sim.NAME]"));
    assert_non_null(strstr(out, "jitter          number in [0, 1)"));
    assert_non_null(strstr(out, "[load] (for strsearch)"));
    assert_non_null(strstr(out, "[hass]"));
    assert_int_equal(hetfarm("compare --help"), 0);
    assert_int_equal(hetfarm("profile --help"), 0);
    assert_int_equal(hetfarm("devices --help"), 0);
    assert_int_equal(hetfarm(""), 2);
    assert_int_equal(hetfarm("frobnicate"), 2);
    assert_non_null(strstr(out, "unknown command 'frobnicate'"));
    assert_int_equal(hetfarm("run"), 2);
    assert_int_equal(hetfarm("run a.ini --bogus"), 2);
    assert_non_null(strstr(out, "--bogus"));
    assert_int_equal(hetfarm("run a.ini --rounds zero"), 2);
}

static void test_devices(void **state)
{
    (void)state;
    assert_int_equal(hetfarm("devices"), 0);
    assert_non_null(strstr(out, "CPU:"));
    assert_non_null(strstr(out, "Cores:"));
    assert_non_null(strstr(out, "NUMA nodes:"));
    assert_non_null(strstr(out, "BLAS:"));
    /* Either GPUs, "no CUDA device found" or "CUDA: not built". */
    assert_non_null(strstr(out, "GPUs:"));
}

/* The environment the libraries read when they load (drivers/runtime_env.c):
 * hetfarm sets OMP_WAIT_POLICY=passive and re-executes itself, unless the
 * user chose a wait policy or a spin count, which it keeps. */
static void test_openmp_wait_policy(void **state)
{
    (void)state;
    static const struct {
        const char *env, *want;
    } cases[] = {
        {"", "OMP_WAIT_POLICY=passive\n"},
        {"OMP_WAIT_POLICY=active", "OMP_WAIT_POLICY=active\n"},
        {"GOMP_SPINCOUNT=1000", "OMP_WAIT_POLICY=(unset) GOMP_SPINCOUNT=1000\n"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char cmd[PATH_MAX + 256];
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && env -u HF_REEXEC -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT %s '%s' "
                 "devices 2>&1",
                 dir, cases[k].env, bin);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = '\0';
        assert_int_equal(pclose(p), 0);
        const char *line = strstr(out, "OpenMP:");
        assert_non_null(line);
        if (!strstr(line, cases[k].want))
            print_error("with '%s': %s", cases[k].env, line);
        assert_non_null(strstr(line, cases[k].want));
    }
}

static void test_missing_config(void **state)
{
    (void)state;
    int rc = hetfarm("run /nonexistent/hf.ini");
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "hetfarm: "));
    assert_non_null(strstr(out, "/nonexistent/hf.ini"));
    assert_false(exists("results.json"));
}

static void test_bad_lines(void **state)
{
    (void)state;
    write_in_dir("bad.ini", "[run]\napp = noop\nthis is not a key\n");
    assert_int_equal(hetfarm("run bad.ini"), 1);
    assert_non_null(strstr(out, "bad.ini:3: malformed line"));
    write_in_dir("dup.ini", "[run]\napp = noop\nrounds = 1\nrounds = 2\n");
    assert_int_equal(hetfarm("run dup.ini"), 1);
    assert_non_null(strstr(out, "dup.ini:4:"));
    write_in_dir("val.ini", "[run]\napp = noop\nrounds = many\n");
    assert_int_equal(hetfarm("run val.ini"), 1);
    assert_non_null(strstr(out, "val.ini:3: [run] rounds = many"));
    /* A misspelt [run] key is caught before anything runs. */
    write_in_dir("typo.ini", "[run]\napp = noop\nrouds = 3\n");
    assert_int_equal(hetfarm("run typo.ini"), 1);
    assert_non_null(strstr(out, "typo.ini:3: [run] rouds"));
    assert_false(exists("results.json"));
}

/* [devices] cuda = 0,0 (one GPU as two devices) end to end: without a GPU
 * the run fails naming the file, line, key and value and writes nothing;
 * with one it runs and the table names the two shares under SHARED GPU.
 * Under a benchmark (HF_BENCH) it is refused on any machine. */
static void test_shared_gpu(void **state)
{
    (void)state;
    write_in_dir("two.ini", "[run]\napp = vscale\nrounds = 3\nscheduler = hass\n"
                            "[load]\nn = 1048576\n[devices]\ncpu = 0\ncuda = 0,0\n");
    int rc = hetfarm("run two.ini");
    if (rc != 0) {
        assert_int_equal(rc, 1);
        assert_non_null(strstr(out, "two.ini:9: [devices] cuda = 0,0: GPU 0 asked for, but "));
        assert_false(exists("results.json"));
    } else {
        assert_non_null(strstr(out, "SHARED GPU: cuda0#1, cuda0#2 are one GPU"));
        char *json = text_in_dir("results.json");
        assert_non_null(json);
        assert_non_null(strstr(json, "\"shares_gpu\":\t2") || strstr(json, "\"shares_gpu\": 2") ||
                        strstr(json, "\"shares_gpu\":2"));
        free(json);
        remove_tree(dir);
        assert_int_equal(mkdir(dir, 0700), 0);
        write_in_dir("two.ini", "[run]\napp = vscale\nrounds = 3\nscheduler = hass\n"
                                "[load]\nn = 1048576\n[devices]\ncpu = 0\ncuda = 0,0\n");
    }
    setenv("HF_BENCH", "1", 1);
    rc = hetfarm("run two.ini");
    unsetenv("HF_BENCH");
    assert_int_equal(rc, 1);
    assert_non_null(strstr(out, "two.ini:9: [devices] cuda = 0,0 names GPU 0 more than once"));
    assert_false(exists("results.json"));
}

static void test_unknown_names(void **state)
{
    (void)state;
    write_in_dir("s.ini", "[run]\napp = noop\nscheduler = nosuch\n");
    assert_int_equal(hetfarm("run s.ini"), 2);
    assert_non_null(strstr(out, "unknown scheduler 'nosuch'"));
    assert_non_null(strstr(out, "s.ini:3"));
    assert_non_null(strstr(out, "hass"));
    assert_non_null(strstr(out, "greedy"));
    assert_int_equal(hetfarm("run s.ini --scheduler alsonot"), 2);
    assert_non_null(strstr(out, "alsonot"));
    write_in_dir("a.ini", "[run]\napp = nosuchapp\n");
    assert_int_equal(hetfarm("run a.ini"), 2);
    assert_non_null(strstr(out, "unknown app 'nosuchapp'"));
    assert_non_null(strstr(out, "matmul"));
    write_in_dir("e.ini", "[run]\napp = noop\nengine = quantum\n");
    assert_int_equal(hetfarm("run e.ini"), 2);
    assert_non_null(strstr(out, "unknown engine 'quantum'"));
    assert_non_null(strstr(out, "sim"));
    write_in_dir("c.ini", "[run]\napp = noop\n[compare]\nschedulers = hass, nope\n");
    assert_int_equal(hetfarm("compare c.ini"), 2);
    assert_non_null(strstr(out, "unknown scheduler 'nope'"));
    write_in_dir("n.ini", "[load]\nchunks = 10\n");
    assert_int_equal(hetfarm("run n.ini"), 2);
    assert_non_null(strstr(out, "[run] app is missing"));
    assert_false(exists("results.json"));
}

/* A small simulated comparison end to end: table, results.json, trace. */
static void test_sim_compare(void **state)
{
    (void)state;
    write_in_dir("sim.ini", "[run]\napp = noop\nrounds = 3\nengine = sim\nprogress = no\n"
                          "[load]\nchunks = 200\n"
                          "[devices]\nsim = host, gpu\n"
                          "[sim.host]\nkind = cpu\nrate = 1e6\n"
                          "[sim.gpu]\nkind = gpu\nrate = 4e6\nlatency_us = 5\n"
                          "[compare]\nschedulers = hass, greedy\n");
    int rc = hetfarm("compare sim.ini -o r.json --trace t.json");
    if (rc != 0)
        fail_msg("hetfarm compare failed (%d):\n%s", rc, out);
    assert_non_null(strstr(out, "SIMULATED"));
    assert_non_null(strstr(out, "greedy"));
    assert_true(exists("r.json"));
    assert_true(exists("t.json"));
    /* A misspelt [load] key fails after the run and writes nothing. */
    write_in_dir("sim2.ini", "[run]\napp = noop\nrounds = 1\nengine = sim\nprogress = no\n"
                           "[load]\nchunks = 50\nchunkz = 3\n"
                           "[devices]\nsim = host\n"
                           "[sim.host]\nkind = cpu\nrate = 1e6\n");
    assert_int_equal(hetfarm("run sim2.ini -o r2.json"), 1);
    assert_non_null(strstr(out, "sim2.ini:8: [load] chunkz"));
    assert_false(exists("r2.json"));
}

/* [compare] passes = 4 over three schedulers: twelve runs in the orders of
 * a Williams design (passes 1-3 rotate the list, pass 4 is pass 1 reversed:
 * over six passes each scheduler follows each other one equally often),
 * pass p with seed + p - 1 (fresh jitter: a scheduler's passes differ),
 * numbered in results.json and the report, summed up per scheduler after
 * the table. */
static void test_compare_passes(void **state)
{
    (void)state;
    write_in_dir("p.ini", "[run]\napp = noop\nrounds = 3\nengine = sim\nprogress = no\n"
                          "[load]\nchunks = 64\n[devices]\nsim = host, gpu\n"
                          "[sim.host]\nkind = cpu\nrate = 1e6\njitter = 0.05\n"
                          "[sim.gpu]\nkind = gpu\nrate = 4e6\njitter = 0.05\n"
                          "[compare]\nschedulers = greedy, static, minmin\npasses = 4\n");
    int rc = hetfarm("compare p.ini -o r.json");
    if (rc != 0)
        fail_msg("hetfarm compare failed (%d):\n%s", rc, out);
    assert_non_null(strstr(out, "greedy p4"));
    assert_non_null(strstr(out, "over the passes"));
    char *json = text_in_dir("r.json");
    assert_non_null(json);
    cJSON *doc = cJSON_Parse(json);
    free(json);
    assert_non_null(doc);
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(doc, "runs");
    assert_int_equal(cJSON_GetArraySize(runs), 12);
    static const char *const order[12] = {"greedy", "static", "minmin", "static",
                                          "minmin", "greedy", "minmin", "greedy",
                                          "static", "minmin", "static", "greedy"};
    double greedy_ms[4] = {0};
    for (int i = 0; i < 12; i++) {
        const cJSON *r = cJSON_GetArrayItem(runs, i);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(r, "scheduler")->valuestring,
                            order[i]);
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(r, "pass")->valueint, i / 3 + 1);
        if (strcmp(order[i], "greedy") == 0) {
            const cJSON *rounds = cJSON_GetObjectItemCaseSensitive(r, "rounds");
            greedy_ms[i / 3] =
                cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rounds, 2), "makespan_s")
                    ->valuedouble;
        }
    }
    assert_true(greedy_ms[0] != greedy_ms[1] && greedy_ms[1] != greedy_ms[2]);
    cJSON_Delete(doc);
    char *html = text_in_dir("report.html");
    assert_non_null(html);
    assert_non_null(strstr(html, "minmin (pass 2)"));
    free(html);
    /* One pass (the default) runs the list as written, and numbers no pass. */
    write_in_dir("p1.ini", "[run]\napp = noop\nrounds = 2\nengine = sim\nprogress = no\n"
                           "[load]\nchunks = 64\n[devices]\nsim = host\n"
                           "[sim.host]\nkind = cpu\nrate = 1e6\n"
                           "[compare]\nschedulers = static, minmin, greedy, hass\n");
    assert_int_equal(hetfarm("compare p1.ini -o r1.json"), 0);
    json = text_in_dir("r1.json");
    assert_non_null(json);
    doc = cJSON_Parse(json);
    free(json);
    assert_non_null(doc);
    static const char *const listed[4] = {"static", "minmin", "greedy", "hass"};
    runs = cJSON_GetObjectItemCaseSensitive(doc, "runs");
    assert_int_equal(cJSON_GetArraySize(runs), 4);
    for (int i = 0; i < 4; i++) {
        const cJSON *r = cJSON_GetArrayItem(runs, i);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(r, "scheduler")->valuestring,
                            listed[i]);
        assert_null(cJSON_GetObjectItemCaseSensitive(r, "pass"));
    }
    cJSON_Delete(doc);
    /* A pass count out of range names the key and the value. */
    write_in_dir("p0.ini", "[run]\napp = noop\nengine = sim\n[devices]\nsim = host\n"
                           "[sim.host]\nkind = cpu\nrate = 1e6\n[compare]\npasses = 0\n");
    assert_int_equal(hetfarm("compare p0.ini -o r0.json"), 1);
    assert_non_null(strstr(out, "p0.ini:10: [compare] passes = 0"));
    assert_false(exists("r0.json"));
}

/* The runs of results file `name`, parsed (free the document with cJSON_Delete). */
static cJSON *results_in_dir(const char *name, const cJSON **runs)
{
    char *json = text_in_dir(name);
    assert_non_null(json);
    cJSON *doc = cJSON_Parse(json);
    free(json);
    assert_non_null(doc);
    *runs = cJSON_GetObjectItemCaseSensitive(doc, "runs");
    assert_non_null(*runs);
    return doc;
}

static double num_of(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_non_null(x);
    return x->valuedouble;
}

/* The run of scheduler `name` in `runs`. */
static const cJSON *run_of(const cJSON *runs, const char *name)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, runs)
        if (strcmp(cJSON_GetObjectItemCaseSensitive(r, "scheduler")->valuestring, name) == 0)
            return r;
    fail_msg("no run of %s", name);
    return NULL;
}

/* Issue 42: the order of [compare] schedulers changes no figure. On the sim
 * engine, which is deterministic, every scheduler's rounds are identical
 * (makespan, bound, efficiency, what each device did) whatever the order. */
static void test_compare_order_sim(void **state)
{
    (void)state;
    static const char *const lists[2] = {"hass, greedy, minmin, static, qilin",
                                         "qilin, static, minmin, greedy, hass"};
    for (int i = 0; i < 2; i++) {
        char ini[1024], cmd[64];
        snprintf(ini, sizeof ini,
                 "[run]\napp = noop\nrounds = 4\nengine = sim\nprogress = no\n"
                 "[load]\nchunks = 128\nshape = hump\ncost_known = no\n"
                 "[devices]\nsim = host, gpu\n"
                 "[sim.host]\nkind = cpu\nrate = 1e6\njitter = 0.03\n"
                 "[sim.gpu]\nkind = gpu\nrate = 8e6\nlatency_us = 50\njitter = 0.03\n"
                 "[compare]\nschedulers = %s\n",
                 lists[i]);
        write_in_dir(i ? "o1.ini" : "o0.ini", ini);
        snprintf(cmd, sizeof cmd, "compare o%d.ini -o o%d.json", i, i);
        int rc = hetfarm(cmd);
        if (rc != 0)
            fail_msg("hetfarm compare failed (%d):\n%s", rc, out);
    }
    const cJSON *runs0, *runs1;
    cJSON *doc0 = results_in_dir("o0.json", &runs0), *doc1 = results_in_dir("o1.json", &runs1);
    assert_int_equal(cJSON_GetArraySize(runs0), 5);
    static const char *const names[5] = {"hass", "greedy", "minmin", "static", "qilin"};
    static const char *const keys[3] = {"makespan_s", "bound_s", "efficiency"};
    for (int s = 0; s < 5; s++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(run_of(runs0, names[s]), "rounds");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(run_of(runs1, names[s]), "rounds");
        assert_int_equal(cJSON_GetArraySize(a), 4);
        assert_int_equal(cJSON_GetArraySize(b), 4);
        for (int k = 0; k < 4; k++) {
            const cJSON *ra = cJSON_GetArrayItem(a, k), *rb = cJSON_GetArrayItem(b, k);
            for (int q = 0; q < 3; q++)
                assert_true(num_of(ra, keys[q]) == num_of(rb, keys[q]));
            const cJSON *da = cJSON_GetObjectItemCaseSensitive(ra, "devices");
            const cJSON *db = cJSON_GetObjectItemCaseSensitive(rb, "devices");
            for (int d = 0; d < 2; d++) {
                assert_true(num_of(cJSON_GetArrayItem(da, d), "work") ==
                            num_of(cJSON_GetArrayItem(db, d), "work"));
                assert_true(num_of(cJSON_GetArrayItem(da, d), "busy_s") ==
                            num_of(cJSON_GetArrayItem(db, d), "busy_s"));
            }
        }
    }
    cJSON_Delete(doc0);
    cJSON_Delete(doc1);
}

/* Issue 42 on the real CPU: compare runs one untimed warm-up load before its
 * first timed run, in no row, and every timed run starts from the chunk
 * costs it left (without it, in a fresh profile folder, the first scheduler
 * alone starts from nothing). Issue 41: one bound_s per round in every row,
 * the measured split, never above a row's makespan. */
static void test_compare_warmup_real(void **state)
{
    (void)state;
    static const char *const base =
        "[run]\napp = noop\nrounds = 2\nprogress = no\n"
        "[load]\nchunks = 48\nspin_ns = 40000\nshape = hump\ncost_known = no\n"
        "[devices]\ncpu = 1\ncuda = none\n[compare]\nschedulers = greedy, minmin\n";
    char ini[1024];
    snprintf(ini, sizeof ini, "%s", base);
    write_in_dir("w.ini", ini);
    int rc = hetfarm("compare w.ini -o w.json --profiles prof1");
    if (rc != 0)
        fail_msg("hetfarm compare failed (%d):\n%s", rc, out);
    const char *warm = strstr(out, "warm-up:");
    assert_non_null(warm);
    assert_null(strstr(warm + 1, "warm-up:")); /* once */
    const char *table = strstr(out, "scheduler  ");
    assert_non_null(table);
    assert_true(warm < table);
    assert_non_null(strstr(out, "measured-split"));
    const cJSON *runs;
    cJSON *doc = results_in_dir("w.json", &runs);
    assert_int_equal(cJSON_GetArraySize(runs), 2); /* the warm-up is in no row */
    static const char *const names[2] = {"greedy", "minmin"};
    for (int i = 0; i < 2; i++) {
        const cJSON *r = cJSON_GetArrayItem(runs, i);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(r, "scheduler")->valuestring,
                            names[i]);
        assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "chunk_costs_loaded")));
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(r, "bound")->valuestring,
                            "measured-split");
        const cJSON *rounds = cJSON_GetObjectItemCaseSensitive(r, "rounds");
        const cJSON *first =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(runs, 0), "rounds");
        assert_int_equal(cJSON_GetArraySize(rounds), 2);
        for (int k = 0; k < 2; k++) {
            const cJSON *rd = cJSON_GetArrayItem(rounds, k);
            assert_true(num_of(rd, "bound_s") == num_of(cJSON_GetArrayItem(first, k), "bound_s"));
            assert_true(num_of(rd, "bound_s") > 0.0);
            assert_true(num_of(rd, "bound_s") <= num_of(rd, "makespan_s") * (1.0 + 1e-12));
        }
    }
    cJSON_Delete(doc);
    /* warmup = no, a fresh profile folder: no warm-up, and the first run
     * starts from no chunk costs while the second reads the first's. */
    snprintf(ini, sizeof ini, "%swarmup = no\n", base);
    write_in_dir("w2.ini", ini);
    rc = hetfarm("compare w2.ini -o w2.json --profiles prof2");
    if (rc != 0)
        fail_msg("hetfarm compare failed (%d):\n%s", rc, out);
    assert_null(strstr(out, "warm-up:"));
    doc = results_in_dir("w2.json", &runs);
    assert_true(cJSON_IsFalse(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(runs, 0), "chunk_costs_loaded")));
    assert_true(cJSON_IsTrue(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(runs, 1), "chunk_costs_loaded")));
    cJSON_Delete(doc);
}

/* SIGINT and SIGTERM in the middle of a run: the devices stop, nothing is
 * written, and the exit status says which signal (130, 143). The signal is
 * sent once hetfarm catches both (SigCgt in /proc: bits 2 and 15), not after
 * a fixed second: a background job of sh starts with SIGINT ignored, so on a
 * loaded machine a signal sent before the handler was lost and the run went on. */
static void test_interrupt(void **state)
{
    (void)state;
    write_in_dir("long.ini", "[run]\napp = noop\nrounds = 100000\nprogress = no\n"
                             "[load]\nchunks = 2000\nspin_ns = 100000\n[devices]\ncpu = 1\n");
    static const struct {
        const char *cmd, *sig, *want;
        int status;
    } cases[] = {{"run", "INT", "interrupted by SIGINT", 130},
                 {"compare", "TERM", "interrupted by SIGTERM", 143}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char cmd[PATH_MAX + 512];
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && { HF_REEXEC=1 '%s' %s long.ini -o r.json & p=$!; i=0; "
                 "while [ $i -lt 300 ] && c=$(awk '/^SigCgt/{print $2}' /proc/$p/status) && "
                 "[ $((0x$c & 0x4002)) != 16386 ]; do sleep 0.1; i=$((i+1)); done; sleep 0.5; "
                 "kill -%s $p; wait $p; echo \"status=$?\"; } 2>&1",
                 dir, bin, cases[i].cmd, cases[i].sig);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = '\0';
        pclose(p);
        char want[32];
        snprintf(want, sizeof want, "status=%d", cases[i].status);
        if (!strstr(out, want) || !strstr(out, cases[i].want))
            fail_msg("%s with SIG%s: expected %s and \"%s\":\n%s", cases[i].cmd, cases[i].sig,
                     want, cases[i].want, out);
        assert_false(exists("r.json"));
        assert_false(exists("report.html"));
    }
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hf_test_cli_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *env = getenv("HF_BIN");
    if (env) {
        snprintf(bin, sizeof bin, "%s", env);
    } else {
        char self[PATH_MAX];
        if (!realpath(argv[0], self))
            snprintf(self, sizeof self, "%s", argv[0]);
        snprintf(bin, sizeof bin, "%s/../hetfarm", dirname(self));
    }
    if (access(bin, X_OK) != 0) {
        printf("skipped: no hetfarm binary at %s (build it, or set HF_BIN)\n", bin);
        return 77;
    }
    char *abs = realpath(bin, NULL);
    if (abs) {
        snprintf(bin, sizeof bin, "%s", abs);
        free(abs);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_help, setup, teardown),
        cmocka_unit_test_setup_teardown(test_devices, setup, teardown),
        cmocka_unit_test_setup_teardown(test_openmp_wait_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_config, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_shared_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sim_compare, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare_passes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare_order_sim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compare_warmup_real, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interrupt, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
