/* test_sched.c - unit tests of the schedulers, driven by a tiny discrete-event
 * loop of the test's own (no engine): devices with fixed rates and latencies.
 *
 * DESIGN
 * ------
 * The loop mimics the engine's contract from sched.h: round_begin, then every
 * idle device is asked (in index order) for work, the earliest finishing span
 * completes (finished), the idle devices are asked again, and so on until every
 * chunk ran; then round_end gets the per-device report. A ledger checks that
 * every span lies in range and that every chunk is handed out exactly once, so
 * any scheduler bug shows up as a failed assertion here rather than a stalled
 * run in the engine. A span takes latency + work/rate on its device.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/profile.h"
#include "sched.h"

#define MAXD 8

struct tdev {
    int is_gpu;
    double rate, lat; /* work/s, seconds per span */
};

struct tnode {
    int ndev;
    struct tdev d[MAXD];
    struct hf_device_info info[MAXD];
    int alive[MAXD];
};

/* What one round did. */
struct tround {
    double makespan, ideal, eff;
    double work[MAXD], busy[MAXD];
    size_t chunks[MAXD], stolen[MAXD], spans[MAXD];
    double plan[MAXD];
    int has_plan;
};

static void node_init(struct tnode *n, const char *spec)
{
    /* spec: "c:1,g:10:0.001" = kind:rate[:latency] per device */
    memset(n, 0, sizeof *n);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        struct tdev *d = &n->d[n->ndev];
        char kind = tok[0];
        d->is_gpu = kind == 'g';
        d->rate = strtod(tok + 2, &tok);
        d->lat = *tok == ':' ? strtod(tok + 1, NULL) : 0.0;
        struct hf_device_info *i = &n->info[n->ndev];
        i->index = n->ndev;
        i->kind = HF_DEV_SIM;
        i->is_gpu = d->is_gpu;
        snprintf(i->name, sizeof i->name, "t%c%d", kind, n->ndev);
        i->nthreads = d->is_gpu ? 0 : 4;
        i->cuda_ordinal = -1;
        i->host_core = -1;
        n->alive[n->ndev] = 1;
        n->ndev++;
    }
}

/* The chunks' declared work is `w` times this, their time that of `w`, and the
 * round says its estimates moved by `unit_moved` (hf_round.cost_moved): a
 * repeating load whose chunk costs were re-estimated in a new unit. */
static double unit_scale = 1.0, unit_moved = 0.0, unit_prior = 0.0;

/* Runs one round of `nchunks` chunks of `w` work each; fails the test on any
 * contract violation. Standalone rates are passed when `standalone`. */
static void run_round(const struct hf_sched_ops *ops, void *st, struct tnode *n, int round,
                      size_t nchunks, double w, int standalone, struct tround *out)
{
    struct hf_chunk *ch = calloc(nchunks, sizeof *ch);
    int *ledger = calloc(nchunks, sizeof *ledger);
    assert_non_null(ch);
    assert_non_null(ledger);
    for (size_t i = 0; i < nchunks; i++) {
        ch[i].index = i;
        ch[i].begin = i;
        ch[i].end = i + 1;
        ch[i].work = w * unit_scale;
    }
    double sa[MAXD], sum_sa = 0.0;
    for (int d = 0; d < n->ndev; d++) {
        /* standalone: the whole load as the device would run it */
        double whole = n->d[d].is_gpu ? n->d[d].lat + nchunks * w / n->d[d].rate
                                      : nchunks * (n->d[d].lat + w / n->d[d].rate);
        sa[d] = nchunks * w / whole;
        if (n->alive[d])
            sum_sa += sa[d];
    }
    struct hf_round r = {.round = round, .nchunks = nchunks, .chunks = ch,
                         .total_work = w * unit_scale * nchunks, .alive = n->alive,
                         .standalone_rate = standalone ? sa : NULL, .cost_moved = unit_moved,
                         .part_prior_s = unit_prior};
    memset(out, 0, sizeof *out);
    assert_int_equal(ops->round_begin(st, &r), 0);

    double now = 0.0, until[MAXD], dur[MAXD];
    struct hf_span cur[MAXD];
    int busy[MAXD] = {0};
    size_t done = 0;
    for (;;) {
        for (int d = 0; d < n->ndev; d++) {
            if (busy[d])
                continue;
            struct hf_span sp = {0};
            int rc = ops->next(st, d, &sp);
            assert_true(rc == 0 || rc == 1);
            if (rc == 0)
                continue;
            assert_true(n->alive[d]);
            assert_true(sp.count >= 1);
            assert_true(sp.first + sp.count <= nchunks);
            for (size_t i = sp.first; i < sp.first + sp.count; i++)
                assert_int_equal(ledger[i]++, 0);
            double t = n->d[d].lat + sp.count * w / n->d[d].rate;
            cur[d] = sp;
            busy[d] = 1;
            until[d] = now + t;
            dur[d] = t;
            out->busy[d] += t;
            out->work[d] += sp.count * w;
            out->chunks[d] += sp.count;
            out->stolen[d] += sp.stolen != 0;
            out->spans[d]++;
        }
        int next = -1;
        for (int d = 0; d < n->ndev; d++)
            if (busy[d] && (next < 0 || until[d] < until[next]))
                next = d;
        if (next < 0)
            break;
        now = until[next];
        busy[next] = 0;
        done += cur[next].count;
        if (ops->finished)
            ops->finished(st, next, &cur[next], dur[next]);
    }
    assert_int_equal(done, nchunks); /* the scheduler stopped before every chunk ran */
    for (size_t i = 0; i < nchunks; i++)
        assert_int_equal(ledger[i], 1);
    out->makespan = now;
    out->ideal = nchunks * w / sum_sa;
    out->eff = out->ideal / out->makespan;
    struct hf_round_report rep = {.round = round, .makespan_s = now, .work = out->work,
                                  .busy_s = out->busy, .chunks = out->chunks};
    if (ops->round_end)
        assert_int_equal(ops->round_end(st, &rep), 0);
    if (ops->plan)
        out->has_plan = ops->plan(st, out->plan);
    free(ch);
    free(ledger);
}

struct fixture {
    hf_config_t cfg;
    hf_profile_t prof;
    void *st;
    const struct hf_sched_ops *ops;
};

/* Creates scheduler `name` on node n with INI text `ini`; returns create's rc. */
static int make(struct fixture *f, const char *name, struct tnode *n, const char *ini)
{
    memset(f, 0, sizeof *f);
    assert_int_equal(hf_config_parse(&f->cfg, "test.ini", ini ? ini : ""), 0);
    assert_int_equal(hf_profile_open(&f->prof, NULL, "test", "sig"), 0);
    f->ops = hf_sched_find(name);
    assert_non_null(f->ops);
    struct hf_sched_env env = {.ndevices = n->ndev, .dev = n->info, .cfg = f->cfg,
                               .profile = f->prof, .app = "test", .seed = 1};
    hf_clear_error();
    return f->ops->create(&f->st, &env);
}

static void unmake(struct fixture *f)
{
    if (f->st && f->ops->destroy)
        f->ops->destroy(f->st);
    hf_profile_destroy(f->prof);
    hf_config_destroy(f->cfg);
}

static const char *const nodes[] = {
    "c:1,g:10:0.01,g:10:0.01", /* a CPU and two GPUs */
    "c:1,c:2,g:20:0.05",        /* two CPU teams and a GPU */
    "g:5:0.01,g:10",            /* only GPUs */
    "c:3",                      /* only a CPU */
    "c:30,g:1:0.2",             /* a GPU slower than the CPU */
};

/* Every registered scheduler hands out every chunk exactly once, on all nodes,
 * with and without standalone rates, over several rounds and odd chunk counts. */
static void test_exactly_once(void **unused)
{
    (void)unused;
    for (int s = 0; hf_schedulers[s]; s++)
        for (size_t k = 0; k < sizeof nodes / sizeof *nodes; k++)
            for (int sa = 0; sa < 2; sa++) {
                static const size_t sizes[] = {1, 2, 7, 100, 1001};
                struct tnode n;
                node_init(&n, nodes[k]);
                struct fixture f;
                assert_int_equal(make(&f, hf_schedulers[s]->name, &n, NULL), 0);
                for (int round = 0; round < 5; round++) {
                    struct tround tr;
                    run_round(f.ops, f.st, &n, round, sizes[round], 1.0, sa, &tr);
                }
                unmake(&f);
            }
}

/* A retired device never gets work and the others still run every chunk. */
static void test_dead_device(void **unused)
{
    (void)unused;
    for (int s = 0; hf_schedulers[s]; s++) {
        struct tnode n;
        node_init(&n, "c:1,g:10:0.01,g:10:0.01");
        struct fixture f;
        assert_int_equal(make(&f, hf_schedulers[s]->name, &n, NULL), 0);
        struct tround tr;
        run_round(f.ops, f.st, &n, 0, 200, 1.0, 1, &tr);
        n.alive[1] = 0; /* run_round asserts no span goes to it */
        run_round(f.ops, f.st, &n, 1, 200, 1.0, 1, &tr);
        assert_int_equal(tr.chunks[1], 0);
        run_round(f.ops, f.st, &n, 2, 200, 1.0, 1, &tr);
        unmake(&f);
    }
}

/* HASS converges: efficiency >= 0.95 from round 2 and a plan that stops moving,
 * GPUs get their buffer in pieces (a long share), and the profile gets the rates. */
static void test_hass_converges(void **unused)
{
    (void)unused;
    struct tnode n;
    node_init(&n, "c:1,g:20:0.002,g:20:0.002");
    struct fixture f;
    assert_int_equal(make(&f, "hass", &n, NULL), 0);
    double prev[MAXD] = {0};
    for (int round = 0; round < 6; round++) {
        struct tround tr;
        run_round(f.ops, f.st, &n, round, 400, 0.1, 0, &tr);
        assert_true(tr.has_plan);
        if (round >= 2)
            assert_true(tr.eff >= 0.95);
        if (round >= 3)
            for (int d = 0; d < n.ndev; d++)
                assert_true(fabs(tr.plan[d] - prev[d]) < 0.01);
        /* A GPU's share here takes ~1 s against 2 ms a bundle: it runs as
         * HASS_PIECES (4) bundles of its own buffer (a short share runs as
         * one: test_hass_robust's test_lone_gpu_runs_one_bundle), plus steals. */
        if (round >= 1)
            assert_true(tr.spans[1] - tr.stolen[1] == 4);
        memcpy(prev, tr.plan, sizeof prev);
    }
    /* The true shares are the rates' (latency is tiny): 1/41, 20/41, 20/41. */
    assert_true(fabs(prev[0] - 1.0 / 41) < 0.01);
    assert_true(fabs(prev[1] - 20.0 / 41) < 0.01);
    double v = 0;
    assert_int_equal(hf_profile_get(f.prof, "tg1", "hass.rate", &v, 1), 1);
    assert_true(fabs(v - 20.0) / 20.0 < 0.05);
    unmake(&f);
}

/* Warm start: with rates in the profile, round 0 does no profiling spans; a
 * profile that overrates the CPU makes the GPUs steal from its tail. */
static void test_hass_warm_start_and_steal(void **unused)
{
    (void)unused;
    struct tnode n;
    node_init(&n, "c:1,g:10:0.001,g:10:0.001");
    struct fixture f;
    assert_int_equal(make(&f, "hass", &n, NULL), 0);
    double r[3] = {10.0, 10.0, 10.0}; /* the CPU is really 10x slower */
    for (int d = 0; d < 3; d++)
        hf_profile_set(f.prof, n.info[d].name, "hass.rate", &r[d], 1);
    struct tround tr;
    run_round(f.ops, f.st, &n, 0, 300, 0.1, 0, &tr);
    assert_int_equal(tr.spans[1] - tr.stolen[1], 1); /* split at once: one bundle */
    assert_true(tr.stolen[1] + tr.stolen[2] > 0);
    assert_true(tr.chunks[0] < 100);                  /* GPUs took most of its buffer */
    assert_true(tr.eff > 0.9);
    unmake(&f);

    /* steal = no: the CPU drains its whole (too large) buffer. */
    assert_int_equal(make(&f, "hass", &n, "[hass]\nsteal = no\n"), 0);
    for (int d = 0; d < 3; d++)
        hf_profile_set(f.prof, n.info[d].name, "hass.rate", &r[d], 1);
    run_round(f.ops, f.st, &n, 0, 300, 0.1, 0, &tr);
    assert_int_equal(tr.stolen[1] + tr.stolen[2], 0);
    assert_int_equal(tr.chunks[0], 100);
    unmake(&f);
}

/* HASS round 0 grows a latency-bound GPU's profile span (more than one span
 * before the split) and a bad knob is a config error naming it. */
static void test_hass_profile_growth_and_knobs(void **unused)
{
    (void)unused;
    struct tnode n;
    node_init(&n, "c:0.5,g:100:0.05");
    struct fixture f;
    assert_int_equal(make(&f, "hass", &n, NULL), 0);
    struct tround tr;
    run_round(f.ops, f.st, &n, 0, 1000, 0.1, 0, &tr);
    assert_true(tr.spans[1] >= 4); /* 1, 2, 4, ... while the rate kept rising */
    unmake(&f);
    assert_int_equal(make(&f, "hass", &n, "[hass]\ngrowth_stop = -1\n"), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "growth_stop"));
    unmake(&f);
}

/* Qilin on a repeating load whose chunk costs were re-estimated in a new unit
 * (hf_round.cost_moved; here every chunk's declared work doubled, its time
 * did not): its training points are counted again in the new estimates and
 * the lines refitted (refit_in_new_unit), so the CPU and the GPU (4 s a
 * bundle, a fifth of its round) split the load as they did when nothing
 * moved. In the old unit the lines priced every chunk twice and the GPU's
 * latency half. The refitted line is what the profile keeps for the next
 * run, which reads the load in the new unit: the GPU's slope halves, its
 * latency stays. */
static void test_qilin_refits_in_a_new_unit(void **unused)
{
    (void)unused;
    size_t gpu[3] = {0};
    double fit[3][2] = {{0}};
    for (int scale = 1; scale <= 2; scale++) {
        struct tnode n;
        node_init(&n, "c:2:0.01,g:50:4");
        struct fixture f;
        assert_int_equal(make(&f, "qilin", &n, "[qilin]\ntrain_fraction = 0.2\npoints = 4\n"), 0);
        struct tround tr;
        run_round(f.ops, f.st, &n, 0, 1000, 1.0, 0, &tr);
        unit_scale = scale;
        unit_moved = scale == 2 ? 1.0 : 0.0;
        run_round(f.ops, f.st, &n, 1, 1000, 1.0, 0, &tr);
        unit_scale = 1.0;
        unit_moved = 0.0;
        gpu[scale] = tr.chunks[1];
        assert_int_equal(hf_profile_get(f.prof, n.info[1].name, "qilin.fit", fit[scale], 2), 2);
        unmake(&f);
    }
    print_message("GPU chunks: %zu as before, %zu in the new unit; saved fit %g + %g N, then "
                  "%g + %g N\n", gpu[1], gpu[2], fit[1][0], fit[1][1], fit[2][0], fit[2][1]);
    assert_true(fabs(fit[2][1] / fit[1][1] - 0.5) < 1e-6);
    assert_true(fabs(fit[2][0] / fit[1][0] - 1.0) < 1e-6);
    assert_true(gpu[1] > 0);
    assert_true(gpu[2] + 1 >= gpu[1] && gpu[2] <= gpu[1] + 1);
}

/* Qilin's fit is exact for a linear device model: a GPU span of N work takes
 * lat + N/rate, a CPU chunk lat + w/rate (so T(k chunks) is linear too). */
static void test_qilin_fit_exact(void **unused)
{
    (void)unused;
    struct tnode n;
    node_init(&n, "c:2:0.01,g:50:0.3");
    struct fixture f;
    assert_int_equal(make(&f, "qilin", &n, "[qilin]\ntrain_fraction = 0.2\npoints = 4\n"), 0);
    struct tround tr;
    run_round(f.ops, f.st, &n, 0, 1000, 1.0, 0, &tr);
    double v[2] = {0};
    assert_int_equal(hf_profile_get(f.prof, "tg1", "qilin.fit", v, 2), 2);
    assert_true(fabs(v[0] - 0.3) < 1e-9);
    assert_true(fabs(v[1] - 1.0 / 50) < 1e-12);
    assert_int_equal(hf_profile_get(f.prof, "tc0", "qilin.fit", v, 2), 2);
    assert_true(fabs(v[0]) < 1e-9);
    assert_true(fabs(v[1] - (0.01 + 1.0 / 2)) < 1e-12);
    /* Later rounds: fitted times cross, so the split is near-optimal. */
    run_round(f.ops, f.st, &n, 1, 1000, 1.0, 0, &tr);
    assert_true(tr.eff > 0.95);
    assert_int_equal(tr.spans[1], 1);
    unmake(&f);

    /* reuse: a second instance with the saved fits skips training. */
    assert_int_equal(make(&f, "qilin", &n, NULL), 0);
    double a[2] = {0.3, 1.0 / 50}, c[2] = {0.0, 0.51};
    hf_profile_set(f.prof, "tg1", "qilin.fit", a, 2);
    hf_profile_set(f.prof, "tc0", "qilin.fit", c, 2);
    run_round(f.ops, f.st, &n, 0, 1000, 1.0, 0, &tr);
    assert_int_equal(tr.spans[1], 1);
    assert_true(tr.eff > 0.95);
    unmake(&f);

    assert_int_equal(make(&f, "qilin", &n, "[qilin]\npoints = 9\n"), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "points"));
    unmake(&f);
}

/* A device the device set left out of Qilin's training (a prior says taking
 * part costs 5 s a round; the GPU alone runs it in 20 s, the CPU's part would
 * save less) is saved as left out, so that a run reading the fits trains no
 * more: the GPU runs its share as one bundle, not as the training's points. */
static void test_qilin_reuses_a_left_out_device(void **unused)
{
    (void)unused;
    struct tnode n;
    node_init(&n, "c:2:0.01,g:50:0.3");
    struct fixture f;
    const char *ini = "[qilin]\ntrain_fraction = 0.2\npoints = 4\n";
    assert_int_equal(make(&f, "qilin", &n, ini), 0);
    struct tround tr;
    unit_prior = 5.0;
    run_round(f.ops, f.st, &n, 0, 1000, 1.0, 1, &tr);
    assert_int_equal(tr.chunks[0], 0);
    assert_true(tr.spans[1] >= 4);
    double cpu[2] = {-1, -1}, gpu[2] = {0};
    assert_int_equal(hf_profile_get(f.prof, "tc0", "qilin.fit", cpu, 2), 2);
    assert_int_equal(hf_profile_get(f.prof, "tg1", "qilin.fit", gpu, 2), 2);
    assert_true(cpu[0] == 0.0 && cpu[1] == 0.0);
    assert_true(fabs(gpu[1] - 1.0 / 50) < 1e-12);
    unmake(&f);

    assert_int_equal(make(&f, "qilin", &n, ini), 0);
    hf_profile_set(f.prof, "tc0", "qilin.fit", cpu, 2);
    hf_profile_set(f.prof, "tg1", "qilin.fit", gpu, 2);
    run_round(f.ops, f.st, &n, 0, 1000, 1.0, 1, &tr);
    assert_int_equal(tr.chunks[0], 0);
    assert_int_equal(tr.spans[1], 1);
    unmake(&f);

    /* Every device left out is no fit: it trains. */
    assert_int_equal(make(&f, "qilin", &n, ini), 0);
    hf_profile_set(f.prof, "tc0", "qilin.fit", cpu, 2);
    hf_profile_set(f.prof, "tg1", "qilin.fit", cpu, 2);
    run_round(f.ops, f.st, &n, 0, 1000, 1.0, 1, &tr);
    assert_true(tr.spans[1] >= 4);
    unmake(&f);
    unit_prior = 0.0;
}

/* Static: ratios are honoured; a wrong count is HF_ECONFIG naming the key. */
static void test_static(void **unused)
{
    (void)unused;
    struct tnode n;
    node_init(&n, "c:1,g:10,g:10");
    struct fixture f;
    assert_int_equal(make(&f, "static", &n, "[static]\nratios = 0.2, 0.4, 0.4\n"), 0);
    struct tround tr;
    run_round(f.ops, f.st, &n, 0, 100, 1.0, 0, &tr);
    assert_int_equal(tr.chunks[0], 20);
    assert_int_equal(tr.chunks[1], 40);
    assert_int_equal(tr.spans[1], 1);
    assert_int_equal(tr.spans[0], 20);
    unmake(&f);
    assert_int_equal(make(&f, "static", &n, "[static]\nratios = 0.5, 0.5\n"), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "ratios"));
    unmake(&f);
    assert_int_equal(make(&f, "static", &n, "[static]\nratios = 1, x, 1\n"), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "ratios"));
    unmake(&f);
    assert_int_equal(make(&f, "static", &n, NULL), 0); /* default: equal shares */
    run_round(f.ops, f.st, &n, 0, 99, 1.0, 0, &tr);
    assert_int_equal(tr.chunks[0], 33);
    unmake(&f);
}

/* Greedy takes `take` chunks at a time; minmin maps by standalone rates. */
static void test_greedy_and_minmin(void **unused)
{
    (void)unused;
    struct tnode n;
    node_init(&n, "c:1,g:9");
    struct fixture f;
    assert_int_equal(make(&f, "greedy", &n, "[greedy]\ntake = 5\n"), 0);
    struct tround tr;
    run_round(f.ops, f.st, &n, 0, 100, 1.0, 0, &tr);
    assert_int_equal(tr.spans[0] + tr.spans[1], 20);
    unmake(&f);
    assert_int_equal(make(&f, "greedy", &n, "[greedy]\ntake = 0\n"), HF_ECONFIG);
    unmake(&f);

    assert_int_equal(make(&f, "minmin", &n, NULL), 0);
    run_round(f.ops, f.st, &n, 0, 100, 1.0, 1, &tr);
    assert_int_equal(tr.chunks[0], 10);
    assert_int_equal(tr.chunks[1], 90);
    assert_int_equal(tr.spans[1], 1);
    assert_true(tr.eff > 0.99);
    unmake(&f);
}

static void test_registry(void **unused)
{
    (void)unused;
    static const char *const names[] = {"hass", "greedy", "minmin", "qilin", "static"};
    for (size_t i = 0; i < 5; i++) {
        assert_non_null(hf_sched_find(names[i]));
        assert_string_equal(hf_sched_find(names[i])->name, names[i]);
    }
    assert_null(hf_sched_find("nope"));
    assert_null(hf_sched_find(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_exactly_once),
        cmocka_unit_test(test_dead_device),
        cmocka_unit_test(test_hass_converges),
        cmocka_unit_test(test_hass_warm_start_and_steal),
        cmocka_unit_test(test_hass_profile_growth_and_knobs),
        cmocka_unit_test(test_qilin_fit_exact),
        cmocka_unit_test(test_qilin_reuses_a_left_out_device),
        cmocka_unit_test(test_qilin_refits_in_a_new_unit),
        cmocka_unit_test(test_static),
        cmocka_unit_test(test_greedy_and_minmin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
