/* test_run_end.c - how a run ends for an app with an end of its own
 * (struct hf_app.stopped, core/run.c's probe).
 *
 * DESIGN
 * ------
 * A tiny CPU app that needs `need` rounds (next_load returns 0 after them)
 * runs under a cap of [run] rounds below, at and above that need, on the
 * real engine and the sim engine (execute on, so the bundles really run):
 * below, the run must record HF_STOP_NO_RESULT with the app's words of what
 * was left, after exactly `rounds` rounds, and the app must have been asked
 * once, with the probe load of round `rounds` (never run: no bundle of it);
 * at the need exactly and above, the probe finds the end and nothing is
 * recorded. The same app returning HF_STOP_APPROXIMATE is recorded as such,
 * and without the hook (rounds are repetitions: matmul's kind) the cap is the
 * end, whatever the app would still draw, and the app is not marked as one
 * that ends. A failing hook fails the run with its message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/engine.h"
#include "sched.h"

enum { UNITS = 32 };
static struct {
    int need;        /* rounds the app needs */
    int ran_round;   /* the highest round whose bundles ran */
    int asked;       /* times stopped was called */
    int probe_round; /* the round of the load it was given */
    int answer;      /* what stopped returns */
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
    if (load->round >= tiny.need)
        return 0;
    load->units = UNITS;
    load->work = UNITS;
    return 1;
}

static int tiny_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    (void)ctx;
    (void)nthreads;
    if (b->load->round > tiny.ran_round)
        tiny.ran_round = b->load->round;
    return 0;
}

static int tiny_stopped(void *ctx, const struct hf_load *next, char *left, size_t len)
{
    (void)ctx;
    tiny.asked++;
    tiny.probe_round = next->round;
    snprintf(left, len, "%d rounds of %zu units", tiny.need - next->round, next->units);
    if (tiny.answer < 0)
        return hf_fail(HF_EAPP, "tiny: stopped fails on purpose");
    return tiny.answer;
}

static void tiny_signature(void *ctx, char *buf, size_t len)
{
    (void)ctx;
    snprintf(buf, len, "units=%d", UNITS);
}

static const struct hf_app ends_app = {
    .name = "ends",
    .create = tiny_create,
    .next_load = tiny_next_load,
    .run_cpu = tiny_run_cpu,
    .stopped = tiny_stopped,
    .signature = tiny_signature,
    .default_grain = 8,
};

/* The same app without the hook: its rounds are repetitions. */
static const struct hf_app repeats_app = {
    .name = "repeats",
    .create = tiny_create,
    .next_load = tiny_next_load,
    .run_cpu = tiny_run_cpu,
    .signature = tiny_signature,
    .default_grain = 8,
};

static const char *const devices[] = {
    "[devices]\ncpu = 1\ncuda = none\n",
    "[devices]\nsim = host\n[sim.host]\nkind = cpu\nrate = 1e9\n",
};

/* Runs `app` needing `need` rounds under a cap of `rounds` on device set
 * `dev` (0 real, 1 sim); returns hf_run's rc and the run in *out. */
static int run_app(const struct hf_app *app, int dev, int need, int rounds, int answer,
                   struct hf_run **out)
{
    memset(&tiny, 0, sizeof tiny);
    tiny.need = need;
    tiny.ran_round = -1;
    tiny.answer = answer;
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "end.ini", devices[dev]), 0);
    struct hf_run_options o = {.app = app,
                               .sched = hf_sched_find("greedy"),
                               .cfg = cfg,
                               .engine = dev ? HF_ENGINE_SIM : HF_ENGINE_REAL,
                               .execute = 1,
                               .rounds = rounds,
                               .seed = 1};
    hf_clear_error();
    int rc = hf_run(&o, out);
    hf_config_destroy(cfg);
    return rc;
}

static void stopped_early_is_recorded(void **state)
{
    (void)state;
    for (int dev = 0; dev < 2; dev++) {
        struct hf_run *run = NULL;
        assert_int_equal(run_app(&ends_app, dev, 5, 2, HF_STOP_NO_RESULT, &run), 0);
        assert_non_null(run);
        assert_int_equal(run->ends, 1);
        assert_int_equal(run->stop, HF_STOP_NO_RESULT);
        assert_int_equal(run->nrounds, 2);
        assert_string_equal(run->left, "3 rounds of 32 units");
        assert_int_equal(tiny.asked, 1);
        assert_int_equal(tiny.probe_round, 2);
        assert_int_equal(tiny.ran_round, 1); /* the probe load never ran */
        hf_run_free(run);
    }
}

static void ending_at_or_before_the_cap_is_the_end(void **state)
{
    (void)state;
    const int caps[] = {5, 6, 1000};
    for (int dev = 0; dev < 2; dev++)
        for (size_t i = 0; i < sizeof caps / sizeof *caps; i++) {
            struct hf_run *run = NULL;
            assert_int_equal(run_app(&ends_app, dev, 5, caps[i], HF_STOP_NO_RESULT, &run), 0);
            assert_int_equal(run->ends, 1);
            assert_int_equal(run->stop, HF_STOP_NONE);
            assert_int_equal(run->nrounds, 5);
            assert_string_equal(run->left, "");
            assert_int_equal(tiny.asked, 0);
            hf_run_free(run);
        }
}

static void approximate_is_recorded(void **state)
{
    (void)state;
    struct hf_run *run = NULL;
    assert_int_equal(run_app(&ends_app, 0, 9, 4, HF_STOP_APPROXIMATE, &run), 0);
    assert_int_equal(run->stop, HF_STOP_APPROXIMATE);
    assert_int_equal(run->nrounds, 4);
    assert_string_equal(run->left, "5 rounds of 32 units");
    hf_run_free(run);
}

static void without_the_hook_the_cap_is_the_end(void **state)
{
    (void)state;
    struct hf_run *run = NULL;
    assert_int_equal(run_app(&repeats_app, 0, 100, 3, 0, &run), 0);
    assert_int_equal(run->ends, 0);
    assert_int_equal(run->stop, HF_STOP_NONE);
    assert_int_equal(run->nrounds, 3);
    assert_int_equal(tiny.ran_round, 2);
    hf_run_free(run);
}

static void a_failing_hook_fails_the_run(void **state)
{
    (void)state;
    struct hf_run *run = NULL;
    assert_int_equal(run_app(&ends_app, 0, 5, 2, -1, &run), HF_EAPP);
    assert_null(run);
    assert_non_null(strstr(hf_last_error(), "stopped fails on purpose"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stopped_early_is_recorded),
        cmocka_unit_test(ending_at_or_before_the_cap_is_the_end),
        cmocka_unit_test(approximate_is_recorded),
        cmocka_unit_test(without_the_hook_the_cap_is_the_end),
        cmocka_unit_test(a_failing_hook_fails_the_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
