/* test_engine_starpu.c - StarPU's policies as hetfarm runs (core/engine_starpu.c).
 *
 * DESIGN
 * ------
 * The conformance idea applied to the StarPU engine: matmul (float64, every
 * row checked against the plain reference) and strsearch (counts checked by
 * the app's verify against its reference) run through hf_run() with
 * starpu:eager, starpu:ws and starpu:dmda; every round must have run each
 * chunk exactly once (the per-device chunk counts add up to the round's
 * chunks, and the engine itself fails with HF_ESCHED otherwise), verify must
 * pass, and the record must look like the other engines': StarPU's workers
 * as devices, per-round makespans, a bound no larger than the makespan.
 * A tiny app of the test's own shows that failures surface: a chunk lost
 * inside run_cpu fails verify, an error in run_cpu stops the run naming the
 * chunk. Bad input fails clearly: an unknown policy names the known ones, the
 * sim engine and apps with shared data are refused. StarPU keeps its performance
 * models under $STARPU_HOME, pointed at a temporary folder here. Without
 * StarPU in the build the test skips (exit 77).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>


#include "starpu_test_util.h"

static const char *const policies[] = {"eager", "ws", "dmda", NULL};

/* Every round ran each of `nchunks` chunks once; the record is complete. */
static void check_run(const struct hf_run *run, const char *policy, int rounds, size_t nchunks)
{
    char name[64];
    snprintf(name, sizeof name, "starpu:%s", policy);
    assert_string_equal(run->scheduler, name);
    assert_string_equal(run->engine, "starpu");
    assert_int_equal(run->nrounds, rounds);
    assert_true(run->ndevices >= 1);
    for (int d = 0; d < run->ndevices; d++)
        assert_true(strncmp(run->devs[d].name, "starpu-cpu", 10) == 0);
    size_t events = 0;
    for (int r = 0; r < run->nrounds; r++) {
        const struct hf_round_stats *rs = &run->rounds[r];
        size_t sum = 0;
        double share = 0;
        for (int d = 0; d < run->ndevices; d++) {
            sum += rs->dev[d].chunks;
            share += rs->dev[d].share;
        }
        assert_int_equal(sum, nchunks);
        assert_true(share > 0.999 && share < 1.001);
        assert_true(rs->makespan_s > 0);
        assert_true(rs->bound_s <= rs->makespan_s * 1.0001);
        events += sum;
    }
    assert_int_equal(run->nevents, events);
}

static void test_matmul(void **state)
{
    (void)state;
    const char *ini = "[run]\napp = matmul\n[load]\nn = 128\ndtype = float64\nverify = 128\n"
                      "[devices]\ncpu = all\ncuda = none\n";
    for (int p = 0; policies[p]; p++) {
        struct hf_run *run;
        assert_int_equal(run_ini(policies[p], ini, HF_ENGINE_REAL, 3, 8, &run), 0);
        check_run(run, policies[p], 3, 16);
        hf_run_free(run);
    }
}

static void test_strsearch(void **state)
{
    (void)state;
    write_dna_load(text_path, 1 << 20, pat_path);
    char ini[2048];
    snprintf(ini, sizeof ini,
             "[run]\napp = strsearch\n[load]\ntext = %s\npatterns = %s\nout = %s\n"
             "chunk = 128KiB\npasses = 2\nverify = 1MiB\ncpu_split = 64KiB\n"
             "[devices]\ncpu = all\ncuda = none\n",
             text_path, pat_path, out_path);
    for (int p = 0; policies[p]; p++) {
        struct hf_run *run;
        int rc = run_ini(policies[p], ini, HF_ENGINE_REAL, 2, 0, &run);
        assert_int_equal(rc, 0);
        /* The app cuts by its own `chunk` key: count round 0's and hold the others to it. */
        size_t chunks = 0;
        for (int d = 0; d < run->ndevices; d++)
            chunks += run->rounds[0].dev[d].chunks;
        assert_true(chunks >= 4);
        assert_int_equal(run->nrounds, 2);
        check_run(run, policies[p], 2, chunks);
        hf_run_free(run);
    }
}

/* A tiny app of its own: every unit of a load counts how often it was run,
 * verify wants exactly once per round. `skip` makes run_cpu silently skip one
 * chunk (a lost chunk: verify must catch it), `fail` makes it report an
 * error (the run must stop with it, naming the chunk). */
enum { UNITS = 64 };
static struct {
    int hits[UNITS], skip, fail, rounds;
} tiny;

static int tiny_create(void **ctx, hf_config_t cfg)
{
    (void)cfg;
    *ctx = &tiny;
    return 0;
}

static int tiny_next_load(void *ctx, struct hf_load *load)
{
    (void)ctx;
    if (load->round >= tiny.rounds)
        return 0;
    memset(tiny.hits, 0, sizeof tiny.hits);
    load->units = UNITS;
    load->work = UNITS;
    return 1;
}

static int tiny_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    (void)ctx;
    (void)nthreads;
    if (tiny.fail && b->begin == 8)
        return hf_fail(HF_EAPP, "tiny: failing on purpose at unit %zu", b->begin);
    if (tiny.skip && b->begin == 8)
        return 0;
    for (size_t u = b->begin; u < b->end; u++)
        __atomic_fetch_add(&tiny.hits[u], 1, __ATOMIC_RELAXED);
    return 0;
}

static int tiny_verify(void *ctx, const struct hf_load *load)
{
    (void)ctx;
    for (size_t u = 0; u < load->units; u++)
        if (tiny.hits[u] != 1)
            return hf_fail(HF_EVERIFY, "tiny: unit %zu ran %d times", u, tiny.hits[u]);
    return 0;
}

static void tiny_signature(void *ctx, char *buf, size_t len)
{
    (void)ctx;
    snprintf(buf, len, "units=%d", UNITS);
}

static const struct hf_app tiny_app = {
    .name = "tiny",
    .create = tiny_create,
    .next_load = tiny_next_load,
    .run_cpu = tiny_run_cpu,
    .verify = tiny_verify,
    .signature = tiny_signature,
    .default_grain = 4,
};

/* Runs the tiny app under starpu:eager; returns hf_run's rc. */
static int run_tiny(int skip, int fail)
{
    tiny.skip = skip;
    tiny.fail = fail;
    tiny.rounds = 3;
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "tiny.ini", "[devices]\ncpu = all\n"), 0);
    struct hf_run_options o = {.app = &tiny_app,
                               .sched = hf__starpu_sched("eager"),
                               .cfg = cfg,
                               .engine = HF_ENGINE_REAL,
                               .rounds = 3,
                               .verify = 1};
    struct hf_run *run = NULL;
    hf_clear_error();
    int rc = hf_run(&o, &run);
    if (rc == 0) {
        check_run(run, "eager", 3, UNITS / 4);
        hf_run_free(run);
    } else {
        assert_null(run);
    }
    hf_config_destroy(cfg);
    return rc;
}

static void test_failures_surface(void **state)
{
    (void)state;
    assert_int_equal(run_tiny(0, 0), 0);
    assert_int_equal(run_tiny(1, 0), HF_EVERIFY); /* a chunk that did nothing */
    assert_non_null(strstr(hf_last_error(), "unit 8 ran 0 times"));
    assert_int_equal(run_tiny(0, 1), HF_EAPP); /* run_cpu failed: the run stops with it */
    assert_non_null(strstr(hf_last_error(), "chunk 2"));
    assert_non_null(strstr(hf_last_error(), "failing on purpose"));
}

static void test_bad_input(void **state)
{
    (void)state;
    hf_clear_error();
    assert_null(hf__starpu_sched("no-such-policy"));
    const char *msg = hf_last_error();
    assert_non_null(strstr(msg, "starpu:no-such-policy"));
    assert_non_null(strstr(msg, " eager"));
    assert_non_null(strstr(msg, " dmda"));
    const struct hf_sched_ops *a = hf__starpu_sched("ws"), *b = hf__starpu_sched("ws");
    assert_true(a == b && hf__starpu_is(a));
    assert_string_equal(a->name, "starpu:ws");
    assert_false(hf__starpu_is(hf_sched_find("hass")));

    struct hf_run *run;
    const char *mm = "[run]\napp = matmul\n[load]\nn = 64\n[devices]\ncpu = all\ncuda = none\n";
    assert_int_equal(run_ini("eager", mm, HF_ENGINE_SIM, 1, 8, &run), HF_ECONFIG);
    assert_null(run);
    assert_non_null(strstr(hf_last_error(), "real"));
    const char *bfs = "[run]\napp = bfs\n[load]\ngraph = grid:8x8\n[devices]\ncpu = all\n"
                      "cuda = none\n";
    assert_int_equal(run_ini("eager", bfs, HF_ENGINE_REAL, 1, 8, &run), HF_ENOTSUP);
    assert_null(run);
    const char *many = "[run]\napp = matmul\n[load]\nn = 64\n[devices]\ncpu = 999\n";
    assert_int_not_equal(run_ini("eager", many, HF_ENGINE_REAL, 1, 8, &run), 0);
    assert_null(run);
}

static int setup(void **state)
{
    (void)state;
    if (sp_open("test_engine_starpu"))
        return -1;
    /* hwloc's PCI plugin leaks at every StarPU shutdown (ASan); CPUs do not need it. */
    setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_pci", 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(void)
{
    hf_clear_error();
    if (!hf__starpu_sched("eager")) {
        printf("%s: test skipped\n", hf_last_error());
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_failures_surface),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_strsearch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
