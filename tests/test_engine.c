/* test_engine.c - the round loop, both engines, faults and scheduler misbehaviour.
 *
 * A counting app records how often each chunk ran; small test policies stand in
 * for real schedulers so that these tests depend on the engine alone. Runs under
 * TSan too (the real engine's threads).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/engine.h"

/* ---- a counting app ------------------------------------------------------- */

struct counter {
    size_t units;
    int *runs;      /* per unit, this round */
    int fail_round; /* run_cpu fails in this round (-1 never) */
    int ran_rounds;
};

static struct counter *the_counter; /* the test inspects the context after the run */

static int counter_create(void **ctx, hf_config_t cfg)
{
    struct counter *c = calloc(1, sizeof *c);
    long units, fail;
    int rc = hf_config_long(cfg, "load", "units", 1000, 0, 1 << 24, &units);
    if (rc == 0)
        rc = hf_config_long(cfg, "load", "fail_round", -1, -1, 100, &fail);
    if (rc) {
        free(c);
        return rc;
    }
    c->units = (size_t)units;
    c->fail_round = (int)fail;
    *ctx = the_counter = c;
    return 0;
}

static int counter_setup(void *ctx, const struct hf_devices *devs)
{
    struct counter *c = ctx;
    (void)devs;
    c->runs = calloc(c->units ? c->units : 1, sizeof *c->runs);
    return c->runs ? 0 : HF_ENOMEM;
}

static int counter_next_load(void *ctx, struct hf_load *load)
{
    struct counter *c = ctx;
    load->units = c->units;
    load->work = 1e6 * (double)c->units;
    load->bytes = 1e3 * (double)c->units;
    if (c->runs)
        memset(c->runs, 0, c->units * sizeof *c->runs);
    return 1;
}

static int counter_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    struct counter *c = ctx;
    (void)nthreads;
    if (b->load->round == c->fail_round)
        return hf_fail(HF_EAPP, "counter: told to fail in round %d", c->fail_round);
    for (size_t u = b->begin; u < b->end; u++)
        __atomic_fetch_add(&c->runs[u], 1, __ATOMIC_RELAXED);
    return 0;
}

static int counter_verify(void *ctx, const struct hf_load *load)
{
    struct counter *c = ctx;
    for (size_t u = 0; u < load->units; u++)
        if (c->runs[u] != 1)
            return hf_fail(HF_EVERIFY, "unit %zu ran %d times", u, c->runs[u]);
    c->ran_rounds++;
    return 0;
}

static void counter_signature(void *ctx, char *buf, size_t len)
{
    snprintf(buf, len, "units=%zu", ((struct counter *)ctx)->units);
}

static void counter_teardown(void *ctx)
{
    (void)ctx; /* the test frees it after inspecting it */
}

static const struct hf_app counter_app = {
    .name = "counter", .create = counter_create, .setup = counter_setup,
    .next_load = counter_next_load, .run_cpu = counter_run_cpu, .verify = counter_verify,
    .signature = counter_signature, .teardown = counter_teardown, .default_grain = 10,
};

static void free_counter(void)
{
    if (the_counter)
        free(the_counter->runs);
    free(the_counter);
    the_counter = NULL;
}

/* ---- test policies ---------------------------------------------------------- */

/* Hands out `take` chunks at a time from a shared cursor; mode 1 repeats a
 * chunk, mode 2 stops early. */
struct cursor {
    size_t next, n, take;
    int mode;
};

static int cursor_mode, cursor_take = 1;

static int cursor_create(void **s, const struct hf_sched_env *env)
{
    (void)env;
    struct cursor *c = calloc(1, sizeof *c);
    c->mode = cursor_mode;
    c->take = (size_t)cursor_take;
    *s = c;
    return 0;
}

static int cursor_round_begin(void *s, const struct hf_round *r)
{
    struct cursor *c = s;
    c->next = 0;
    c->n = r->nchunks;
    return 0;
}

static int cursor_next(void *s, int dev, struct hf_span *out)
{
    struct cursor *c = s;
    (void)dev;
    size_t end = c->mode == 2 ? c->n / 2 : c->n;
    if (c->next >= end)
        return 0;
    out->first = c->next;
    out->count = c->take < end - c->next ? c->take : end - c->next;
    c->next += out->count;
    if (c->mode == 1 && c->next == 3)
        c->next = 2; /* hands chunk 2 out twice */
    return 1;
}

static void cursor_destroy(void *s)
{
    free(s);
}

static const struct hf_sched_ops cursor_sched = {
    .name = "cursor", .create = cursor_create, .round_begin = cursor_round_begin,
    .next = cursor_next, .destroy = cursor_destroy,
};

/* ---- helpers ------------------------------------------------------------------ */

static const char *sim_node =
    "[devices]\nsim = host, gpu, gpu\n"
    "[sim.host]\nkind = cpu\nrate = 1e9\n"
    "[sim.gpu]\nkind = gpu\nrate = 4e9\nlatency_us = 10\nbandwidth_gbs = 10\njitter = 0.02\n";

static int run_with(const char *ini, enum hf_engine_kind engine, int execute, int rounds,
                    struct hf_run **out)
{
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "test.ini", ini), 0);
    struct hf_run_options o = {
        .app = &counter_app, .sched = &cursor_sched, .cfg = cfg, .engine = engine,
        .rounds = rounds, .seed = 7, .execute = execute, .verify = 1,
    };
    int rc = hf_run(&o, out);
    hf_config_destroy(cfg);
    return rc;
}

static char *concat(const char *a, const char *b)
{
    char *s = malloc(strlen(a) + strlen(b) + 1);
    strcpy(s, a);
    strcat(s, b);
    return s;
}

/* ---- tests ------------------------------------------------------------------------ */

static void sim_runs_every_chunk_once_and_is_deterministic(void **state)
{
    (void)state;
    cursor_mode = 0;
    struct hf_run *a, *b;
    assert_int_equal(run_with(sim_node, HF_ENGINE_SIM, 1, 3, &a), 0);
    assert_int_equal(the_counter->ran_rounds, 3);
    free_counter();
    assert_int_equal(run_with(sim_node, HF_ENGINE_SIM, 1, 3, &b), 0);
    free_counter();
    assert_int_equal(a->nrounds, 3);
    assert_int_equal(a->ndevices, 3);
    size_t chunks = 0;
    for (int d = 0; d < a->ndevices; d++)
        chunks += a->rounds[2].dev[d].chunks;
    assert_int_equal(chunks, 100);
    for (int r = 0; r < 3; r++)
        assert_true(a->rounds[r].makespan_s == b->rounds[r].makespan_s);
    /* Standalone rates come from the model: the CPU runs 1e9 work/s. */
    assert_true(a->standalone_rate[0] > 0.99e9 && a->standalone_rate[0] < 1.01e9);
    assert_true(a->rounds[0].ideal_s > 0 && a->rounds[0].efficiency > 0);
    assert_true(a->rounds[0].efficiency <= 1.05);
    hf_run_free(a);
    hf_run_free(b);
}

static void real_engine_two_teams(void **state)
{
    (void)state;
    cursor_mode = 0;
    struct hf_run *run;
    const char *ini = "[devices]\ncpu = 2\ncpu_teams = 2\ncuda = none\n[load]\nunits = 5000\n";
    int rc = run_with(ini, HF_ENGINE_REAL, 0, 4, &run);
    if (rc == HF_ENODEV) { /* a one-core machine */
        free_counter();
        skip();
    }
    assert_int_equal(rc, 0);
    assert_int_equal(the_counter->ran_rounds, 4);
    free_counter();
    assert_int_equal(run->ndevices, 2);
    size_t chunks = run->rounds[3].dev[0].chunks + run->rounds[3].dev[1].chunks;
    assert_int_equal(chunks, 500);
    hf_run_free(run);
}

static void injected_fault_retires_device_and_completes(void **state)
{
    (void)state;
    cursor_mode = 0;
    cursor_take = 7;
    char *ini = concat(sim_node, "[faults]\nerror_at = sim:gpu#1:1:2\n");
    struct hf_run *run;
    assert_int_equal(run_with(ini, HF_ENGINE_SIM, 1, 3, &run), 0);
    assert_int_equal(the_counter->ran_rounds, 3);
    free_counter();
    assert_non_null(strstr(run->fault, "sim:gpu#1"));
    assert_int_equal(run->rounds[2].dev[1].chunks, 0); /* retired for good */
    hf_run_free(run);
    free(ini);
    cursor_take = 1;
}

static void overlapping_span_fails_loudly(void **state)
{
    (void)state;
    cursor_mode = 1;
    cursor_take = 1;
    struct hf_run *run;
    assert_int_equal(run_with(sim_node, HF_ENGINE_SIM, 1, 2, &run), HF_ESCHED);
    assert_null(run);
    assert_non_null(strstr(hf_last_error(), "chunk 2"));
    free_counter();
}

static void stalled_scheduler_fails_loudly(void **state)
{
    (void)state;
    cursor_mode = 2;
    struct hf_run *run;
    assert_int_equal(run_with(sim_node, HF_ENGINE_SIM, 0, 2, &run), HF_ESCHED);
    assert_non_null(strstr(hf_last_error(), "never run"));
    free_counter();
    const char *real = "[devices]\ncpu = 1\ncuda = none\n";
    assert_int_equal(run_with(real, HF_ENGINE_REAL, 0, 2, &run), HF_ESCHED);
    free_counter();
}

static void app_failure_stops_the_run(void **state)
{
    (void)state;
    cursor_mode = 0;
    struct hf_run *run;
    const char *ini = "[devices]\ncpu = 1\ncuda = none\n[load]\nfail_round = 1\n";
    assert_int_equal(run_with(ini, HF_ENGINE_REAL, 0, 3, &run), HF_EAPP);
    assert_null(run);
    assert_non_null(strstr(hf_last_error(), "round 1"));
    free_counter();
}

static void bad_device_config_is_named(void **state)
{
    (void)state;
    struct hf_run *run;
    assert_int_equal(run_with("[devices]\ncpu = 100000\n", HF_ENGINE_REAL, 0, 1, &run),
                     HF_ECONFIG);
    assert_int_equal(run_with("[devices]\ncpu = 4000\ncuda = none\n", HF_ENGINE_REAL, 0, 1, &run),
                     HF_ENODEV);
    assert_non_null(strstr(hf_last_error(), "test.ini:2"));
    assert_int_equal(run_with("[devices]\nsim = nowhere\n", HF_ENGINE_SIM, 0, 1, &run),
                     HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "[sim.nowhere]"));
    free_counter();
    assert_int_equal(run_with("[devices]\ncpu = 1\ncuda = none\n[load]\nunits = 0\n",
                              HF_ENGINE_REAL, 0, 1, &run),
                     HF_EINVAL);
    assert_non_null(strstr(hf_last_error(), "zero-sized"));
    free_counter();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sim_runs_every_chunk_once_and_is_deterministic),
        cmocka_unit_test(real_engine_two_teams),
        cmocka_unit_test(injected_fault_retires_device_and_completes),
        cmocka_unit_test(overlapping_span_fails_loudly),
        cmocka_unit_test(stalled_scheduler_fails_loudly),
        cmocka_unit_test(app_failure_stops_the_run),
        cmocka_unit_test(bad_device_config_is_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
