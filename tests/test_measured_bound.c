/* test_measured_bound.c - issue 41: one bound_s per round of a comparison (core/measured_bound.c).
 *
 * DESIGN
 * ------
 * The measured split must read an irregular load right whoever ran it: one
 * device that ran every chunk has no better split, so every scheduler's
 * efficiency is 0.95-1.0 in every round (the spread of the makespans is all
 * that separates them), and on two devices every row of a round gets the
 * same bound_s, never above any row's makespan. Checked two ways: on runs
 * built by hand (chunk costs 1000x apart, dear in the middle, bundled as
 * different schedulers would, with noise), where the numbers are known, and
 * on the sim engine's runs of every registered scheduler over the noop
 * app's hump with its cost unknown to the framework (sim runs are
 * deterministic for a seed, so the checks are exact).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/engine.h"

#define NCH 48
#define ROUNDS 5

/* Chunk i's cost: a narrow hump in the middle, 1000x its edges. */
static double cost(size_t i)
{
    double x = ((double)i + 0.5) / NCH;
    return 0.001 + exp(-(x - 0.5) * (x - 0.5) / (2 * 0.08 * 0.08));
}

/* A deterministic noise in [-amp, amp] from (a, b, c). */
static double noise(unsigned a, unsigned b, unsigned c, double amp)
{
    unsigned long long z = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xBF58476D1CE4E5B9ull) ^
                           (c * 0x94D049BB133111EBull + 1);
    z ^= z >> 31;
    z *= 0xD6E8FEB86659FD93ull;
    z ^= z >> 32;
    return amp * (2.0 * (double)(z % 1000001) / 1000000.0 - 1.0);
}

/* A device of a hand-made run: seconds per unit of cost and per bundle. */
struct dev_model {
    const char *name;
    int gpu;
    double inv, lat;
};

/* A hand-made run: `ndev` devices; in every round device cut_dev[k] runs
 * spans [cut[k], cut[k+1]) one after another, as bundles of at most `piece`
 * chunks (0: one bundle), each costing lat + inv * cost * (1 + noise). */
static struct hf_run *make_run(const char *sched, unsigned id, const struct dev_model *dm,
                               int ndev, const size_t *cut, const int *cut_dev, int ncut,
                               size_t piece)
{
    struct hf_run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    snprintf(r->scheduler, sizeof r->scheduler, "%s", sched);
    snprintf(r->app, sizeof r->app, "fractal");
    snprintf(r->engine, sizeof r->engine, "real");
    snprintf(r->signature, sizeof r->signature, "rows=%d", NCH);
    r->ndevices = ndev;
    r->devs = calloc((size_t)ndev, sizeof *r->devs);
    r->rounds = calloc(ROUNDS, sizeof *r->rounds);
    r->events = calloc(ROUNDS * NCH, sizeof *r->events);
    assert_true(r->devs && r->rounds && r->events);
    for (int d = 0; d < ndev; d++) {
        snprintf(r->devs[d].name, sizeof r->devs[d].name, "%s", dm[d].name);
        r->devs[d].is_gpu = dm[d].gpu;
    }
    for (int k = 0; k < ROUNDS; k++) {
        struct hf_round_stats *rs = &r->rounds[k];
        rs->round = k;
        rs->load_units = NCH;
        rs->load_work = NCH;
        rs->dev = calloc((size_t)ndev, sizeof *rs->dev);
        assert_non_null(rs->dev);
        double clock[8] = {0};
        for (int c = 0; c < ncut; c++) {
            int d = cut_dev[c];
            for (size_t f = cut[c]; f < cut[c + 1];) {
                size_t n = piece ? piece : cut[c + 1] - f;
                if (f + n > cut[c + 1])
                    n = cut[c + 1] - f;
                double w = 0;
                for (size_t i = f; i < f + n; i++)
                    w += cost(i);
                double t = (dm[d].lat + dm[d].inv * w) *
                           (1.0 + noise(id, (unsigned)k, (unsigned)f, 0.02));
                r->events[r->nevents++] = (struct hf_event){
                    .round = k, .device = d, .first = f, .count = n, .work = (double)n,
                    .start_s = clock[d], .end_s = clock[d] + t};
                clock[d] += t;
                rs->dev[d].chunks += n;
                rs->dev[d].bundles++;
                rs->dev[d].busy_s += t;
                f += n;
            }
        }
        for (int d = 0; d < ndev; d++)
            rs->makespan_s = fmax(rs->makespan_s, clock[d]);
        rs->makespan_s *= 1.003; /* the host's share of the round */
    }
    r->nrounds = ROUNDS;
    return r;
}

static void free_runs(struct hf_run **runs, int n)
{
    for (int i = 0; i < n; i++)
        hf_run_free(runs[i]);
}

/* Every row of every round: the same bound_s as row 0, never above its makespan. */
static void assert_one_bound(struct hf_run *const *runs, int n)
{
    for (int i = 0; i < n; i++) {
        assert_string_equal(runs[i]->bound, HF_BOUND_MEASURED);
        for (int k = 0; k < runs[i]->nrounds; k++) {
            const struct hf_round_stats *rs = &runs[i]->rounds[k];
            assert_true(rs->bound_s > 0.0);
            assert_true(rs->bound_s == runs[0]->rounds[k].bound_s);
            assert_true(rs->bound_s <= rs->makespan_s * (1.0 + 1e-12));
            assert_true(fabs(rs->efficiency - rs->bound_s / rs->makespan_s) < 1e-12);
        }
    }
}

/* One CPU runs every chunk under four bundlings (chunk by chunk, whole,
 * pieces of 8, pieces of 3): 0.95-1.0 for every one in every round. */
static void test_one_device_by_hand(void **unused)
{
    (void)unused;
    static const struct dev_model cpu[1] = {{"cpu", 0, 0.01, 2e-5}};
    size_t all[2] = {0, NCH};
    int on[1] = {0};
    static const char *const names[4] = {"greedy", "static", "hass", "minmin"};
    static const size_t pieces[4] = {1, 0, 8, 3};
    struct hf_run *runs[4];
    for (int s = 0; s < 4; s++)
        runs[s] = make_run(names[s], (unsigned)s, cpu, 1, all, on, 1, pieces[s]);
    assert_int_equal(hf_bound_measured(runs, 4), 0);
    assert_one_bound(runs, 4);
    for (int s = 0; s < 4; s++)
        for (int k = 0; k < ROUNDS; k++) {
            double e = runs[s]->rounds[k].efficiency;
            if (e < 0.95)
                print_error("%s round %d: efficiency %.3f\n", names[s], k, e);
            assert_true(e >= 0.95 && e <= 1.0 + 1e-12);
        }
    free_runs(runs, 4);
}

/* A CPU and a GPU 20x faster with a 1 ms latency, cut at different rows by
 * different runs: one bound_s per round in every row, below every makespan,
 * and within reach of the best cut (>= 0.8 of its makespan). A run alone
 * gets a bound of its own, below its own makespan. */
static void test_two_devices_by_hand(void **unused)
{
    (void)unused;
    static const struct dev_model dm[2] = {{"cpu", 0, 0.01, 0.0}, {"gpu0", 1, 0.0005, 1e-3}};
    static const size_t cuts[4] = {20, 14, 8, 30};
    static const char *const names[4] = {"hass", "minmin", "qilin", "static"};
    struct hf_run *runs[4];
    for (int s = 0; s < 4; s++) {
        /* The GPU takes the middle, the CPU both ends, chunk by chunk. */
        size_t a = (NCH - cuts[s]) / 2, b = a + cuts[s];
        size_t cut[4] = {0, a, b, NCH};
        int on[3] = {0, 1, 0};
        runs[s] = make_run(names[s], 10u + (unsigned)s, dm, 2, cut, on, 3, 0);
    }
    assert_int_equal(hf_bound_measured(runs, 4), 0);
    assert_one_bound(runs, 4);
    for (int k = 0; k < ROUNDS; k++) {
        double best = INFINITY;
        for (int s = 0; s < 4; s++)
            best = fmin(best, runs[s]->rounds[k].makespan_s);
        print_message("round %d: bound %.4g, best makespan %.4g\n", k, runs[0]->rounds[k].bound_s,
                      best);
        assert_true(runs[0]->rounds[k].bound_s >= 0.8 * best);
    }
    assert_int_equal(hf_bound_measured(runs + 1, 1), 0);
    for (int k = 0; k < ROUNDS; k++)
        assert_true(runs[1]->rounds[k].bound_s <= runs[1]->rounds[k].makespan_s);
    free_runs(runs, 4);
}

/* Runs of different loads are not pooled; a run without events, alone with
 * its load, keeps the engine's bound (pooled, it takes its pool's). */
static void test_pools_only_the_same_load(void **unused)
{
    (void)unused;
    static const struct dev_model cpu[1] = {{"cpu", 0, 0.01, 0.0}};
    static const struct dev_model fast[1] = {{"cpu", 0, 0.001, 0.0}};
    size_t all[2] = {0, NCH};
    int on[1] = {0};
    struct hf_run *runs[3] = {make_run("a", 1, cpu, 1, all, on, 1, 1),
                              make_run("b", 2, fast, 1, all, on, 1, 1),
                              make_run("c", 3, cpu, 1, all, on, 1, 1)};
    snprintf(runs[1]->signature, sizeof runs[1]->signature, "rows=%d other", NCH);
    snprintf(runs[2]->signature, sizeof runs[2]->signature, "rows=%d third", NCH);
    runs[2]->nevents = 0;
    runs[2]->rounds[0].bound_s = 0.125;
    assert_int_equal(hf_bound_measured(runs, 3), 0);
    for (int k = 0; k < ROUNDS; k++) {
        /* Pooled with b, a's bound would be b's 10x faster time. */
        assert_true(runs[0]->rounds[k].bound_s > 0.5 * runs[0]->rounds[k].makespan_s);
        assert_true(runs[1]->rounds[k].bound_s > 0.5 * runs[1]->rounds[k].makespan_s);
    }
    assert_string_equal(runs[2]->bound, "");
    assert_true(runs[2]->rounds[0].bound_s == 0.125);
    free_runs(runs, 3);
}

/* Every registered scheduler on the sim engine over the hump in units. */
static int sim_runs(const char *ini, struct hf_run **runs)
{
    int n = 0;
    for (const struct hf_sched_ops *const *s = hf_schedulers; *s; s++) {
        hf_config_t cfg;
        assert_int_equal(hf_config_parse(&cfg, "measured_bound.ini", ini), 0);
        struct hf_run_options o = {.app = hf_app_find("noop"), .sched = *s, .cfg = cfg,
                                   .engine = HF_ENGINE_SIM, .rounds = ROUNDS, .seed = 3,
                                   .grain = 1};
        hf_clear_error();
        int rc = hf_run(&o, &runs[n]);
        if (rc)
            print_error("%s: %s\n", (*s)->name, hf_last_error());
        assert_int_equal(rc, 0);
        hf_config_destroy(cfg);
        n++;
    }
    return n;
}

/* One simulated CPU, 2% jitter per bundle: every scheduler 0.95-1.0 in every round. */
static void test_one_device_sim(void **unused)
{
    (void)unused;
    struct hf_run *runs[16];
    int n = sim_runs("[load]\nchunks = 48\nwork_per_chunk = 1e6\nshape = hump\ncost_known = no\n"
                     "[devices]\nsim = host\n"
                     "[sim.host]\nkind = cpu\nrate = 2e8\nlatency_us = 5\njitter = 0.02\n",
                     runs);
    assert_int_equal(hf_bound_measured(runs, n), 0);
    assert_one_bound(runs, n);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < runs[i]->nrounds; k++) {
            double e = runs[i]->rounds[k].efficiency;
            if (e < 0.95)
                print_error("%s round %d: efficiency %.3f\n", runs[i]->scheduler, k, e);
            assert_true(e >= 0.95 && e <= 1.0 + 1e-12);
        }
    free_runs(runs, n);
}

/* A simulated CPU and GPU: one bound_s per round for every scheduler, below
 * every makespan. */
static void test_two_devices_sim(void **unused)
{
    (void)unused;
    struct hf_run *runs[16];
    int n = sim_runs("[load]\nchunks = 256\nwork_per_chunk = 1e6\nbytes_per_chunk = 1e5\n"
                     "shape = hump\ncost_known = no\n[devices]\nsim = host, gpu\n"
                     "[sim.host]\nkind = cpu\nrate = 2e9\nlatency_us = 5\njitter = 0.02\n"
                     "[sim.gpu]\nkind = gpu\nrate = 4e10\nlatency_us = 20\n"
                     "bandwidth_gbs = 20\njitter = 0.02\n",
                     runs);
    assert_int_equal(hf_bound_measured(runs, n), 0);
    assert_one_bound(runs, n);
    for (int i = 0; i < n; i++) {
        double e = 0, ms = 0, id = 0;
        for (int k = 2; k < runs[i]->nrounds; k++) {
            e += runs[i]->rounds[k].efficiency / (runs[i]->nrounds - 2);
            ms += runs[i]->rounds[k].makespan_s / (runs[i]->nrounds - 2);
            id += runs[i]->rounds[k].ideal_s / (runs[i]->nrounds - 2);
        }
        print_message("%s: from round 2 mean efficiency %.3f, makespan %.4g, ideal %.4g\n",
                      runs[i]->scheduler, e, ms, id);
    }
    free_runs(runs, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_device_by_hand),
        cmocka_unit_test(test_two_devices_by_hand),
        cmocka_unit_test(test_pools_only_the_same_load),
        cmocka_unit_test(test_one_device_sim),
        cmocka_unit_test(test_two_devices_sim),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
