/* test_shared.c - shared data (hetfarm.h, "Shared data") through the real
 * engine: a MIN array whose changes are recorded by run_cpu and read back by
 * next_load (hf_shared_last_changes), an OWNED array written by unit, and the
 * round-0 reset. On this machine the devices are CPUs (the merge's per-device
 * steps run on their threads and find nothing to pull); the GPU side of the
 * same app runs wherever the graph apps' GPU tests run. Runs under TSan too.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/engine.h"

#define N 997
enum { S_MIN = 0, S_OWNED = 1, S_CONST = 2 };

/* Each round r, unit u proposes value r*N + u for element (u * 7 + r) % N; the
 * MIN array keeps the smallest proposal; round 0 resets it to INT32_MAX. */
struct relax {
    int32_t x[N], owned[N], konst[N];
    int32_t expect[N];
    int rounds_seen, last_changes_checked;
};

static struct relax *the_relax;

/* hf_bundle_did_more: when on, every bundle says it did 1000 times its
 * units more, and what each device said is summed per round. */
static int say_more;
static double said[8][4];

static int relax_create(void **ctx, hf_config_t cfg)
{
    (void)cfg;
    struct relax *r = calloc(1, sizeof *r);
    *ctx = the_relax = r;
    return r ? 0 : HF_ENOMEM;
}

static int relax_shared(void *ctx, struct hf_shared *out, int cap)
{
    struct relax *r = ctx;
    assert_true(cap >= 3);
    out[S_MIN] = (struct hf_shared){"x", r->x, N, HF_ELEM_I32, HF_SHARED_MIN};
    out[S_OWNED] = (struct hf_shared){"owned", r->owned, N, HF_ELEM_I32, HF_SHARED_OWNED};
    out[S_CONST] = (struct hf_shared){"konst", r->konst, N, HF_ELEM_I32, HF_SHARED_READONLY};
    return 3;
}

/* What changed in the round before `round`, by the reference rule. */
static size_t expected_changes(struct relax *r, int round, uint8_t *changed)
{
    memset(changed, 0, N);
    size_t n = 0;
    int prev = round - 1;
    for (int u = 0; u < N; u++) {
        int i = (u * 7 + prev) % N;
        int32_t v = prev * N + u;
        if (v < r->expect[i]) {
            r->expect[i] = v;
            n += !changed[i];
            changed[i] = 1;
        }
    }
    return n;
}

static int relax_next_load(void *ctx, struct hf_load *load)
{
    struct relax *r = ctx;
    size_t n;
    const uint32_t *list = hf_shared_last_changes(load, S_MIN, &n);
    if (load->round == 0) {
        for (int i = 0; i < N; i++)
            r->x[i] = r->expect[i] = INT32_MAX, r->konst[i] = 3 * i, r->owned[i] = -1;
        assert_int_equal(n, 0);
    } else {
        uint8_t changed[N];
        size_t want = expected_changes(r, load->round, changed);
        assert_int_equal(n, want); /* each changed element once */
        for (size_t k = 0; k < n; k++)
            assert_true(changed[list[k]]);
        r->last_changes_checked++;
    }
    load->units = N;
    load->work = N;
    return 1;
}

static int relax_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    struct relax *r = ctx;
    int round = b->load->round;
    (void)nthreads;
    for (size_t u = b->begin; u < b->end; u++) {
        int i = (int)((u * 7 + (size_t)round) % N);
        int32_t v = round * N + (int32_t)u, old = __atomic_load_n(&r->x[i], __ATOMIC_RELAXED);
        while (v < old && !__atomic_compare_exchange_n(&r->x[i], &old, v, 0, __ATOMIC_RELAXED,
                                                       __ATOMIC_RELAXED))
            ;
        if (v < old)
            hf_shared_changed(b->load, S_MIN, (size_t)i);
        r->owned[u] = round * 10000 + (int32_t)u + r->konst[u];
    }
    if (say_more) {
        double more = 1000.0 * (double)(b->end - b->begin);
        hf_bundle_did_more(b, more);
        if (round < 8 && b->device < 4)
            said[round][b->device] += more;
    }
    return 0;
}

static int relax_verify(void *ctx, const struct hf_load *load)
{
    struct relax *r = ctx;
    int32_t want[N];
    memcpy(want, r->expect, sizeof want);
    for (int u = 0; u < N; u++) { /* this round's proposals, on a copy */
        int i = (u * 7 + load->round) % N;
        if (load->round * N + u < want[i])
            want[i] = load->round * N + u;
    }
    for (int i = 0; i < N; i++) {
        if (r->x[i] != want[i])
            return hf_fail(HF_EVERIFY, "x[%d] = %d, want %d", i, r->x[i], want[i]);
        if (r->owned[i] != load->round * 10000 + i + 3 * i)
            return hf_fail(HF_EVERIFY, "owned[%d] = %d", i, r->owned[i]);
    }
    r->rounds_seen++;
    return 0;
}

static void relax_signature(void *ctx, char *buf, size_t len)
{
    (void)ctx;
    snprintf(buf, len, "n=%d", N);
}

static void relax_teardown(void *ctx)
{
    free(ctx);
}

static const struct hf_app relax_app = {
    .name = "relax", .create = relax_create, .next_load = relax_next_load,
    .run_cpu = relax_run_cpu, .verify = relax_verify, .signature = relax_signature,
    .shared = relax_shared, .teardown = relax_teardown, .default_grain = 50,
};

static struct hf_run *run_relax_kept(const char *sched, const char *devices, int rounds)
{
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "shared.ini", devices), 0);
    struct hf_run_options o = {
        .app = &relax_app, .sched = hf_sched_find(sched), .cfg = cfg, .engine = HF_ENGINE_REAL,
        .rounds = rounds, .seed = 3, .verify = 1,
    };
    struct hf_run *run = NULL;
    the_relax = NULL;
    int rc = hf_run(&o, &run);
    if (rc)
        fprintf(stderr, "hf_run: %s\n", hf_last_error());
    assert_int_equal(rc, 0);
    hf_config_destroy(cfg);
    return run;
}

static void run_relax(const char *sched, const char *devices, int rounds)
{
    hf_run_free(run_relax_kept(sched, devices, rounds));
}

/* The MIN merge, the change lists and the OWNED writes, round after round,
 * with the standalone passes' round-0 loads in between (they reset the array). */
static void min_and_owned_merge_round_by_round(void **state)
{
    (void)state;
    run_relax("greedy", "[devices]\ncpu = 1\n", 6);
    run_relax("hass", "[devices]\ncpu = 1\n", 4);
}

/* Two CPU teams: two device threads record into the same host recorder. */
static void two_cpu_teams_record_into_one_union(void **state)
{
    (void)state;
    run_relax("greedy", "[devices]\ncpu = 2\ncpu_teams = 2\n", 5);
}

/* A bundle that ran more than its chunks (hf_bundle_did_more): its device's
 * round counts the more apart from its chunks' work (which still sums to the
 * load's, each chunk once), and its standalone rate counts it: 1001 times
 * the units' work ran in about the same time (timing noise cannot make up
 * the factor of 10 asked) as in the same run that said nothing. */
static void bundles_that_did_more(void **state)
{
    (void)state;
    const char *devices = "[devices]\ncpu = 2\ncpu_teams = 2\n";
    struct hf_run *plain = run_relax_kept("greedy", devices, 5);
    memset(said, 0, sizeof said);
    say_more = 1;
    struct hf_run *run = run_relax_kept("greedy", devices, 5);
    say_more = 0;
    assert_int_equal(run->nrounds, 5);
    for (int i = 1; i < run->nrounds; i++) { /* round 0's load also ran the standalone passes */
        const struct hf_round_stats *rs = &run->rounds[i];
        double work = 0.0;
        for (int d = 0; d < run->ndevices; d++) {
            work += rs->dev[d].work;
            assert_true(fabs(rs->dev[d].more_work - said[rs->round][d]) < 1e-6);
            assert_true(fabs(rs->dev[d].more_work - 1000.0 * rs->dev[d].work) < 1e-6);
        }
        assert_true(fabs(work - N) < 1e-9);
    }
    for (int d = 0; d < run->ndevices; d++)
        assert_true(run->standalone_rate[d] > 10.0 * plain->standalone_rate[d]);
    hf_run_free(plain);
    hf_run_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(min_and_owned_merge_round_by_round),
        cmocka_unit_test(two_cpu_teams_record_into_one_union),
        cmocka_unit_test(bundles_that_did_more),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
