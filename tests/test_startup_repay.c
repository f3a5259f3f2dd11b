/* test_startup_repay.c - whether a run starts its GPUs (core/startup_repay.c):
 * the decision from a load's record, the record's key (the config digest)
 * and the device list without the GPUs.
 *
 * DESIGN
 * ------
 * The decision is a pure function of the record, so its cases are records
 * written into an in-memory profile: none (everything starts), only a run
 * with GPUs recorded (the CPU's time predicted by the rate ratio), and both
 * runs measured. The digest must follow every entry that shapes the load, an
 * input file's contents included, and ignore the device list and the
 * schedulers. The list without a GPU is built as though the machine had one
 * (hf__devlist_init_with_gpus), and `cpu = all` must take its core back. A
 * last case runs the CLI twice on the CPU alone, as a user would, and checks
 * the record it leaves: a real run of this machine, so no GPU decision.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <unistd.h>

#include "core/profile.h"
#include "core/startup_repay.h"
#include "device.h"
#include "test_files.h"

static hf_profile_t record(void)
{
    hf_profile_t p;
    assert_int_equal(hf_profile_open(&p, NULL, "bfs", "load=test"), 0);
    return p;
}

/* Stores n values of `side` (HF_REPAY_WITH or _WITHOUT), then decides. */
static int decide_after(hf_profile_t p, const char *side, const double *v, int n, char *why,
                        size_t len)
{
    assert_int_equal(hf_profile_set(p, side, "wall_s", v, n), 0);
    return hf__repay_start_gpus(p, why, len);
}

/* No record of a run with GPUs: the first run starts everything. */
static void first_run_starts_the_gpus(void **state)
{
    (void)state;
    hf_profile_t p = record();
    char why[256] = "";
    assert_int_equal(hf__repay_start_gpus(p, why, sizeof why), 1);
    double without[2] = {0.05, 0.001}; /* a CPU-alone run alone decides nothing */
    assert_int_equal(decide_after(p, HF_REPAY_WITHOUT, without, 2, why, sizeof why), 1);
    assert_string_equal(why, "");
    hf_profile_destroy(p);
}

/* Only the run with GPUs measured: the CPU alone is predicted as the app's
 * own set-up plus the rounds stretched by the rate ratio. A small load
 * (0.3 s of start-up against 10 ms of rounds, 5x the CPU's rate) leaves the
 * GPUs unstarted; a large one (2 s of rounds: 10 s on the CPU) starts them. */
static void predicted_cpu_time_decides(void **state)
{
    (void)state;
    hf_profile_t p = record();
    char why[256] = "";
    double small[4] = {0.35, 0.01, 0.05, 5.0}, large[4] = {0.35, 2.0, 0.05, 5.0};
    assert_int_equal(decide_after(p, HF_REPAY_WITH, small, 4, why, sizeof why), 0);
    assert_non_null(strstr(why, "0.360 s with them against 0.100 s predicted"));
    why[0] = '\0';
    assert_int_equal(decide_after(p, HF_REPAY_WITH, large, 4, why, sizeof why), 1);
    assert_string_equal(why, "");
    hf_profile_destroy(p);
}

/* Both runs measured: the measured CPU-alone time decides, either way, and
 * a prediction that was wrong is corrected by the run it caused. */
static void measured_cpu_time_decides(void **state)
{
    (void)state;
    hf_profile_t p = record();
    char why[256] = "";
    double with[4] = {0.35, 0.01, 0.05, 5.0}; /* predicted without: 0.1 s */
    double slow[2] = {0.05, 0.5}, fast[2] = {0.05, 0.02}, close[2] = {0.05, 0.297};
    assert_int_equal(hf_profile_set(p, HF_REPAY_WITH, "wall_s", with, 4), 0);
    assert_int_equal(decide_after(p, HF_REPAY_WITHOUT, slow, 2, why, sizeof why), 1);
    /* 0.347 s against 0.36: faster by less than the wall clock's noise */
    assert_int_equal(decide_after(p, HF_REPAY_WITHOUT, close, 2, why, sizeof why), 1);
    assert_int_equal(decide_after(p, HF_REPAY_WITHOUT, fast, 2, why, sizeof why), 0);
    assert_non_null(strstr(why, "against 0.070 s measured for the CPU alone"));
    hf_profile_destroy(p);
}

static uint64_t digest_of(const char *ini)
{
    static const char *const skip[] = {"devices", "hass", "run.scheduler", NULL};
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "x.ini", ini), 0);
    uint64_t h = hf_config_digest(cfg, skip);
    hf_config_destroy(cfg);
    return h;
}

/* The key follows the load and nothing else; a rewritten input file with
 * the same name is another load. */
static void digest_follows_the_load(void **state)
{
    (void)state;
    uint64_t base = digest_of("[run]\napp = bfs\nscheduler = hass\n[load]\nscale = 16\n"
                              "[devices]\ncpu = all\n");
    assert_true(base == digest_of("[run]\napp = bfs\nscheduler = minmin\n[load]\nscale = 16\n"
                                  "[devices]\ncpu = 2\ncuda = none\n[hass]\nreserve = no\n"));
    assert_true(base != digest_of("[run]\napp = bfs\n[load]\nscale = 17\n"));
    assert_true(base != digest_of("[run]\napp = cc\n[load]\nscale = 16\n"));
    char path[] = "/tmp/hf-repay-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char ini[256];
    snprintf(ini, sizeof ini, "[run]\napp = bfs\n[load]\nfile = %s\n", path);
    write_file(path, "1 2\n", 4);
    uint64_t one = digest_of(ini);
    write_file(path, "1 2\n2 3\n", 8);
    assert_true(one != digest_of(ini));
    unlink(path);
}

/* The list without the machine's one GPU: no CUDA device, and `cpu = all`
 * counts the GPU host thread's core back to the CPU. */
static void list_without_the_gpu(void **state)
{
    (void)state;
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "d.ini", "[devices]\ncpu = all\ncuda = all\n"), 0);
    hf_devlist_t with, without;
    assert_int_equal(hf__devlist_init_with_gpus(&with, cfg, 1), 0);
    assert_int_equal(hf__devlist_init_without(&without, cfg, 1, 1), 0);
    int cpu_with = 0, cpu_without = 0, gpus_without = 0;
    for (int d = 0; d < hf_devlist_count(with); d++)
        if (hf_devlist_get(with, d)->info.kind == HF_DEV_CPU)
            cpu_with += hf_devlist_get(with, d)->info.nthreads;
    for (int d = 0; d < hf_devlist_count(without); d++) {
        const struct hf_device_info *i = &hf_devlist_get(without, d)->info;
        if (i->kind == HF_DEV_CPU)
            cpu_without += i->nthreads;
        gpus_without += i->kind == HF_DEV_CUDA;
    }
    assert_int_equal(hf_devlist_count(with), cpu_with > 0 ? 2 : 1);
    assert_int_equal(gpus_without, 0);
    assert_int_equal(cpu_without, cpu_with + 1);
    hf_devlist_destroy(with);
    hf_devlist_destroy(without);
    hf_config_destroy(cfg);
}

static char bin[4096]; /* the hetfarm binary: build/hetfarm beside build/tests */

/* A shell command that writes r.ini, a small BFS load on one CPU thread. */
#define SMALL_LOAD_INI                                                                             \
    "printf '[run]\\napp = bfs\\nprogress = no\\n[load]\\ngenerate = kron\\nscale = 10\\n"          \
    "edge_factor = 8\\nseed = 2\\n[devices]\\ncpu = 1\\ncuda = none\\n' > r.ini"

/* Runs `script` (sh, with $H the hetfarm binary) in a fresh directory and
 * returns what it left in `file` there; the directory is removed. */
static char *script_output(const char *script, const char *file)
{
    char dir[] = "/tmp/hf-repay-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char cmd[16384];
    snprintf(cmd, sizeof cmd, "cd %s && H='%s' && %s", dir, bin, script);
    assert_int_equal(system(cmd), 0);
    char path[96];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    size_t len = 0;
    char *text = read_file(path, &len);
    assert_non_null(text);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return text;
}

/* Two CLI runs of one small load on the CPU alone: each records its set-up
 * and rounds under the load's key, the second replacing the first. */
static void a_run_records_its_load(void **state)
{
    (void)state;
    char *text = script_output(SMALL_LOAD_INI " && for i in 1 2; do \"$H\" run r.ini --profiles "
                                              "prof -o r.json >/dev/null 2>&1 || exit 1; done && "
                                              "cat prof/*/bfs.load=*.prof > record.txt",
                               "record.txt");
    assert_non_null(strstr(text, HF_REPAY_WITHOUT "\twall_s\t"));
    assert_null(strstr(text, HF_REPAY_WITH "\t"));
    double setup = 0, rounds = 0;
    assert_int_equal(sscanf(strstr(text, "wall_s\t") + 7, "%lf %lf", &setup, &rounds), 2);
    assert_true(setup > 0.0 && rounds > 0.0);
    free(text);
}

/* A record that leaves the GPUs out is read before any GPU is looked for: a
 * run of `cuda = 0` on a machine without GPU 0 (where looking would fail)
 * runs on the CPU alone, and its results do not start the CUDA driver to
 * describe the machine. */
static void unstarted_gpus_are_not_looked_for(void **state)
{
    (void)state;
    char *text = script_output(
        SMALL_LOAD_INI " && \"$H\" run r.ini --profiles prof -o r.json >/dev/null 2>&1 && "
                       "for f in prof/*/bfs.load=*.prof; do printf '" HF_REPAY_WITH
                       "\\twall_s\\t5 5 0.001 10\\n' >> \"$f\"; done && "
                       "sed 's/cuda = none/cuda = 0/' r.ini > g.ini && "
                       "\"$H\" run g.ini --profiles prof -o g.json >/dev/null 2>&1",
        "g.json");
    assert_non_null(strstr(text, "the GPUs were not started"));
    assert_null(strstr(text, "\"name\":\t\"cuda0\""));
#ifdef HF_HAVE_CUDA
    assert_non_null(strstr(text, "not looked for"));
#endif
    free(text);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[4096];
    if (!realpath(argv[0], self))
        snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(bin, sizeof bin, "%s/../hetfarm", dirname(self));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(first_run_starts_the_gpus),
        cmocka_unit_test(predicted_cpu_time_decides),
        cmocka_unit_test(measured_cpu_time_decides),
        cmocka_unit_test(digest_follows_the_load),
        cmocka_unit_test(list_without_the_gpu),
        cmocka_unit_test(a_run_records_its_load),
        cmocka_unit_test(unstarted_gpus_are_not_looked_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
