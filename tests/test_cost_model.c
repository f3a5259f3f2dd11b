/* test_cost_model.c - the cost model's per-byte term (core/cost_model.c,
 * core/cost_bytes.c) on synthetic bundles.
 *
 * DESIGN
 * ------
 * The model is a plain value type, so these tests feed it bundles whose times
 * come from a known T = lat + w * inv + b * inv_bw, with a seeded relative
 * noise and one stalled bundle, and check what it recovers: the three terms
 * where bytes per unit of work vary (a GPU's copy-bound cheap chunks next to
 * its compute-bound dear ones), exactly the old line where they do not (bytes
 * in proportion to work, or none), and the bound's split of work and bytes
 * against splits it must not exceed; and that a new unit of work drops the
 * repeats of HASS's models (their intercept is the old unit's). HASS's use of it runs in
 * test_hass_robust.c (the hump on CPU + 2 GPUs).
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

#include "sched.h"

/* A relative noise in [-amp, amp] from a seeded splitmix64. */
static double noise(uint64_t *s, double amp)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return amp * (2.0 * (double)(z >> 11) / 9007199254740992.0 - 1.0);
}

/* An H200-like GPU: 20 us per bundle, 5e13 work/s, 55 GB/s of copies. */
#define LAT 20e-6
#define INV (1.0 / 5e13)
#define IBW (1.0 / 55e9)

static double truth(double w, double b)
{
    return LAT + w * INV + b * IBW;
}

/* Bundles of a hump's GPU: profile spans of the cheap edge (copy-bound: 0.5 MB
 * and 1.6e8 work per chunk), big compute-bound pieces of its middle, steals of
 * the other edge; 1% noise and one bundle stalled 5x. The three-term fit is
 * believed once it predicted a bundle it was not fitted to; then the three
 * terms come back within 3%, the stall is flagged, and the spread is the
 * noise's (the line's was 40% on these bundles). */
static void test_three_term_fit(void **unused)
{
    (void)unused;
    struct hf_cost_model m;
    hf_cost_init(&m);
    uint64_t seed = 7;
    struct {
        double chunks, work_per_chunk;
    } spans[] = {
        {1, 1.6e8},    {2, 1.6e8}, {4, 1.7e8}, {8, 2e8},   {16, 3e8},     {32, 5e8}, {250, 3e10},
        {240, 3.1e10}, {12, 2e8},  {6, 1.8e8}, {3, 1.6e8}, {255, 2.9e10}, {64, 6e8}, {120, 2e10},
    };
    int n = (int)(sizeof spans / sizeof *spans), flagged = 0;
    for (int i = 0; i < n; i++) {
        double w = spans[i].chunks * spans[i].work_per_chunk, b = spans[i].chunks * 5e5;
        flagged += hf_cost_add(&m, w, b, truth(w, b) * (1.0 + noise(&seed, 0.01)));
        if (i == 9) /* a stall, 5x: flagged, not fitted */
            flagged += 2 * hf_cost_add(&m, w, b, 5.0 * truth(w, b));
    }
    hf_cost_refit(&m);
    /* One more bundle, not fitted yet: the candidate predicts it. */
    double w1 = 20 * 2.5e8, b1 = 20 * 5e5;
    flagged += hf_cost_add(&m, w1, b1, truth(w1, b1) * (1.0 + noise(&seed, 0.01)));
    hf_cost_refit(&m);
    assert_int_equal(flagged, 2);
    assert_true(m.fitted);
    assert_true(fabs(m.inv / INV - 1.0) < 0.03);
    assert_true(fabs(m.inv_bw / IBW - 1.0) < 0.03);
    assert_true(fabs(m.lat - LAT) < 0.1 * LAT);
    assert_true(m.spread < 0.02); /* the noise, not the line's misfit */
    /* The prediction of a copy-bound bundle holds its copies. */
    double w = 8 * 1.6e8, b = 8 * 5e5;
    assert_true(fabs(hf_cost_time(&m, w, b) / truth(w, b) - 1.0) < 0.03);
}

/* Bytes in proportion to work cannot be told from work: the model fed them
 * is the model fed none (same line, same spread, no per-byte term), and so
 * is one fed the bytes of a CPU (0). */
static void test_bytes_in_proportion_are_the_line(void **unused)
{
    (void)unused;
    struct hf_cost_model a, z;
    hf_cost_init(&a);
    hf_cost_init(&z);
    uint64_t seed = 3;
    static const double sizes[] = {1, 2, 4, 8, 16, 100, 100, 37, 5, 100, 64, 100};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        double w = sizes[i] * 1e9, b = sizes[i] * 4e6;
        double t = truth(w, b) * (1.0 + noise(&seed, 0.03));
        assert_int_equal(hf_cost_add(&a, w, b, t), hf_cost_add(&z, w, 0.0, t));
    }
    hf_cost_refit(&a);
    hf_cost_refit(&z);
    assert_true(a.inv_bw == 0.0 && z.inv_bw == 0.0);
    assert_true(a.lat == z.lat && a.inv == z.inv && a.spread == z.spread);
    assert_true(fabs(a.inv / (INV + 4e-3 * IBW) - 1.0) < 0.05);
}

/* The bound's split of work and bytes: no split of the two it allows beats
 * it, a split it allows reaches it, and with no per-byte term (or no bytes,
 * or a device that copies nothing) it is the work-only split. */
static void test_split_bound(void **unused)
{
    (void)unused;
    double lat[3] = {20e-6, 30e-6, 0.0}, inv[3] = {INV, 2.5 * INV, 1.0 / 1.4e12};
    double ibw[3] = {IBW, 2.0 * IBW, 0.0}, x[3];
    int gpus[3] = {1, 1, 0};
    double W = 8e12, B = 2.5e8;
    double T = hf_cost_split_bound(lat, inv, ibw, gpus, 3, W, B);
    double Tw = hf_cost_split(lat, inv, gpus, 3, W, x);
    assert_true(T > Tw); /* the bytes cost the GPUs something */
    /* Brute force over the work share of GPU 0 and its byte share: the best
     * max finish time is T (within the grid's resolution), never below. */
    double best = INFINITY;
    for (int i = 0; i <= 400; i++)
        for (int j = 0; j <= 400; j++) {
            double x0 = W * i / 400.0, y0 = B * j / 400.0;
            double t0 = lat[0] + x0 * inv[0] + y0 * ibw[0];
            double t1 = lat[1] + (W - x0) * inv[1] + (B - y0) * ibw[1];
            best = fmin(best, fmax(t0, t1));
        }
    assert_true(best >= T * (1.0 - 1e-9));
    assert_true(best <= T * 1.01);
    double zero[3] = {0};
    assert_true(hf_cost_split_bound(lat, inv, zero, gpus, 3, W, B) == Tw);
    assert_true(hf_cost_split_bound(lat, inv, ibw, gpus, 3, W, 0.0) == Tw);
    /* The CPU copies nothing: in the bound it takes the bytes for free. */
    double Ta = hf_cost_split(lat, inv, NULL, 3, W, x);
    assert_true(hf_cost_split_bound(lat, inv, ibw, NULL, 3, W, B) == Ta);
}

/* Before the latency is known, a bundle of a size the window does not hold
 * is fitted unjudged - unless no latency could explain it: half the work of a
 * bundle seen, twenty times its time, is a warm-up or a stall (a GPU's first
 * bundle of a new size after the standalone pass HASS starts from). It is
 * flagged and leaves the fit alone; one that any latency explains is fitted. */
static void test_unknown_latency_still_caps_time(void **unused)
{
    (void)unused;
    struct hf_cost_model m;
    hf_cost_init(&m);
    assert_int_equal(hf_cost_add(&m, 100.0, 0.0, 1.0), 0);
    hf_cost_refit(&m);
    assert_true(m.fitted && !m.lat_known);
    assert_int_equal(hf_cost_add(&m, 50.0, 0.0, 20.0), 1); /* slower than the whole */
    hf_cost_refit(&m);
    assert_int_equal(m.n, 1);
    assert_true(fabs(hf_cost_time(&m, 100.0, 0.0) - 1.0) < 1e-12);
    /* Twice the work in 1.9x the time: a latency explains it; fitted. */
    assert_int_equal(hf_cost_add(&m, 200.0, 0.0, 1.9), 0);
    assert_int_equal(m.n, 2);
}

/* A GPU that HASS's model knows only from its standalone pass (one bundle of
 * the whole load, latency unknown), as in issue 12's matrix cell
 * n1024-g1-j0.02-gpu at seed 8: its first full bundle of a new size carries a
 * 3 ms warm-up (15x the 0.2 ms bundle), and the next one, a repeat, a 5 ms
 * stall. Neither is the device: the warm-up is not a surprise, the stall is
 * an outlier, so the two do not restart the window, and the model stays the
 * standalone pass's (before: the stall was fitted as the first repeat,
 * 20x slower per unit, or restarted the window with the warm-up at 26x).
 * The next ordinary repeat is fitted. */
static void test_warm_up_then_stall_leave_the_model(void **unused)
{
    (void)unused;
    struct hf_cost_model m;
    hf_cost_init(&m);
    m.warm_fresh = 1;
    double whole = 256e9, w = 238e9;
    assert_int_equal(hf_cost_add(&m, whole, 0.0, truth(whole, 0.0)), 0);
    hf_cost_refit(&m);
    double inv = m.inv;
    hf_cost_add(&m, w, 0.0, truth(w, 0.0) + 3e-3);                       /* the warm-up */
    assert_int_equal(hf_cost_add(&m, w, 0.0, truth(w, 0.0) + 5e-3), 1); /* the stall */
    hf_cost_refit(&m);
    assert_false(m.restarted);
    assert_int_equal(m.n, 1);
    assert_true(fabs(m.inv / inv - 1.0) < 1e-9);
    assert_int_equal(hf_cost_add(&m, w, 0.0, truth(w, 0.0)), 0);
    assert_int_equal(m.n, 2);
}

/* HASS's models (warm_fresh) on a load whose chunk costs are learned: round
 * 0's profile spans, each first of its size with a 3 ms warm-up, and one
 * repeat that gives the 20 us latency. When the unit of work moves
 * (hf_cost_new_unit) the repeat goes - its intercept is the old unit's, and
 * the first repeat in the new unit would be averaged with it - and the
 * intercept comes from the first-of-size bundles again; the slope stays. A
 * model without the flag (the engine's) keeps its window as it was. */
static void test_new_unit_drops_old_repeats(void **unused)
{
    (void)unused;
    for (int flag = 1; flag >= 0; flag--) {
        struct hf_cost_model m;
        hf_cost_init(&m);
        m.warm_fresh = flag;
        for (double w = 1e10; w <= 1.6e11; w *= 2.0) {
            hf_cost_add(&m, w, 0.0, truth(w, 0.0) + 3e-3);
            if (w == 2e10)
                hf_cost_add(&m, w, 0.0, truth(w, 0.0)); /* the repeat */
        }
        hf_cost_refit(&m);
        int n = m.n;
        assert_true(!flag || (m.lat_known && fabs(m.lat - LAT) < 1e-9)); /* the repeat's */
        hf_cost_new_unit(&m);
        hf_cost_refit(&m);
        if (flag) {
            assert_int_equal(m.n, n - 1);
            assert_true(fabs(m.lat - (LAT + 3e-3)) < 1e-6);
            assert_true(fabs(m.inv / INV - 1.0) < 1e-6);
        } else {
            assert_int_equal(m.n, n); /* its window is untouched */
        }
    }
}

/* Two slow repeats of clearly different sizes restart HASS's model on the
 * line through them. The bundles a GPU of issue 12's matrix ran
 * (n1024-g1-j0.05-gpu, seed 5; times rounded): its standalone pass on the
 * whole load, the first 236-chunk bundle (a 3 ms warm-up), its repeat and a
 * 1-chunk steal, which leave an intercept of 0; then the 236-chunk bundle
 * 14% slow (5% jitter) and a steal at the GPU's 20 us latency, both
 * surprises. Taken as a slope (the two rates averaged) the pair made the
 * GPU 12x slower per unit of work, and the next plan gave half its share to
 * the CPU. The line through them fits both. */
static void test_restart_on_two_sizes_fits_their_line(void **unused)
{
    (void)unused;
    struct hf_cost_model m;
    hf_cost_init(&m);
    m.warm_fresh = 1;
    double whole = 2147483648.0, big = 1979711488.0, one = 8388608.0;
    hf_cost_add(&m, whole, 0.0, 0.2395e-3);
    hf_cost_refit(&m);
    hf_cost_add(&m, big, 0.0, 3.2e-3); /* the warm-up */
    hf_cost_add(&m, big, 0.0, 0.192e-3);
    hf_cost_add(&m, one, 0.0, 19.4e-6);
    assert_true(m.lat == 0.0); /* the intercept fitted low */
    hf_cost_add(&m, big, 0.0, 0.2186e-3);
    hf_cost_add(&m, one, 0.0, 22.9e-6);
    assert_true(m.restarted);
    assert_true(fabs(hf_cost_time(&m, big, 0.0) / 0.2186e-3 - 1.0) < 1e-9);
    assert_true(fabs(hf_cost_time(&m, one, 0.0) / 22.9e-6 - 1.0) < 1e-9);
}

/* A stall and a slow bundle after it do not agree, so they tell no drift:
 * a GPU of issue 12's matrix (n4096-g8-j0.05-gpu, seed 8) stalled 5 ms on a
 * 0.7 ms bundle, and its next bundle came in 14% slow (5% jitter); taken as
 * a drift, the pair made it 4x slower per unit of work, and the next plan
 * moved all eight GPUs to new sizes. The slow bundle starts a run of its
 * own instead, and a second bundle as slow is the drift. */
static void test_stall_and_slow_bundle_are_no_drift(void **unused)
{
    (void)unused;
    struct hf_cost_model m;
    hf_cost_init(&m);
    for (double w = 4e9; w <= 3.2e10; w *= 2.0) {
        hf_cost_add(&m, w, 0.0, truth(w, 0.0));
        hf_cost_add(&m, w, 0.0, truth(w, 0.0));
    }
    hf_cost_refit(&m);
    double w = 3.2e10, t = truth(w, 0.0), inv = m.inv;
    assert_int_equal(hf_cost_add(&m, w, 0.0, t + 5e-3), 1); /* the stall: an outlier */
    hf_cost_add(&m, w, 0.0, 1.14 * t);
    assert_false(m.restarted);
    assert_true(fabs(m.inv / inv - 1.0) < 0.05);
    hf_cost_add(&m, w, 0.0, 1.14 * t); /* the same again: a drift */
    assert_true(m.restarted);
    assert_true(fabs(hf_cost_time(&m, w, 0.0) / (1.14 * t) - 1.0) < 0.01);
}

/* A GPU's cut profile (issue 12's matrix, n4096-g8-j0-gpu, seed 1): its
 * first bundle of 1 chunk (not fitted: the first launch), then spans of 2
 * and 4 chunks, each a new size with a 3 ms warm-up, the 2-chunk repeat, and
 * the pool's last chunk. Spans that double are exactly 2x apart, which is
 * "at least 2x" (the pairs had needed more, so this window had no slope at
 * all), and the 1-chunk bundle is a repeat once the first is known as seen
 * (hf_cost_seen): the line comes out exact, where it had made this GPU 50%
 * slower than its seven equals. */
static void test_doubling_spans_make_a_line(void **unused)
{
    (void)unused;
    struct hf_cost_model m;
    hf_cost_init(&m);
    m.warm_fresh = 1;
    double c = 5.36870912e8;
    hf_cost_seen(&m, c);
    hf_cost_add(&m, 2 * c, 0.0, truth(2 * c, 0.0) + 3e-3);
    hf_cost_add(&m, 4 * c, 0.0, truth(4 * c, 0.0) + 3e-3);
    hf_cost_add(&m, 2 * c, 0.0, truth(2 * c, 0.0));
    hf_cost_add(&m, c, 0.0, truth(c, 0.0));
    hf_cost_refit(&m);
    assert_true(fabs(m.lat - LAT) < 1e-9);
    assert_true(fabs(m.inv / INV - 1.0) < 1e-6);
}

/* A GPU's model (warm-ups expected, latency known from doubling spans) and a
 * new bundle size 30% slower than the model twice: the first is set aside
 * as a warm-up, and its repeat in the same time says there was none, so the
 * model restarts at once (it waited for a second repeat: a round more of a
 * split 2x off) - also after a fast surprise, which cannot pair with a slow
 * one (it had kept the warm-up from being remembered). A real warm-up (3 ms)
 * and a stall of the repeat (5 ms), as slow as each other within 2x, do not
 * agree that closely: no restart. */
static void test_slow_new_size_and_its_like_repeat_are_a_drift(void **unused)
{
    (void)unused;
    for (int stall = 0; stall <= 2; stall++) {
        struct hf_cost_model m;
        hf_cost_init(&m);
        m.warm_fresh = 1;
        for (double w = 4e9; w <= 3.2e10; w *= 2.0) {
            hf_cost_add(&m, w, 0.0, truth(w, 0.0));
            hf_cost_add(&m, w, 0.0, truth(w, 0.0));
        }
        hf_cost_refit(&m);
        assert_true(m.lat_known);
        if (stall == 2) /* a fast surprise pending */
            hf_cost_add(&m, 3.2e10, 0.0, 0.8 * truth(3.2e10, 0.0));
        double w = 4.8e10, t = truth(w, 0.0);
        double first = stall == 1 ? t + 3e-3 : 1.3 * t, again = stall == 1 ? t + 5e-3 : 1.3 * t;
        hf_cost_add(&m, w, 0.0, first);
        assert_false(m.restarted);
        assert_true(fabs(hf_cost_time(&m, w, 0.0) / t - 1.0) < 0.01);
        hf_cost_add(&m, w, 0.0, again);
        if (stall == 1) {
            assert_false(m.restarted);
            assert_true(fabs(hf_cost_time(&m, w, 0.0) / t - 1.0) < 0.01);
        } else {
            assert_true(m.restarted);
            assert_true(fabs(hf_cost_time(&m, w, 0.0) / (1.3 * t) - 1.0) < 0.01);
        }
    }
}

/* A new size's first bundle is a warm-up where it took about what the window's
 * new sizes took beyond the fit; far more than that, the rest was a stall, and
 * it counts toward the stall risk once the next bundle shows no drift. A
 * stall its owner saw apart (hf_cost_stall) counts as one judged bundle. */
static void test_new_size_far_past_its_warm_up_is_a_stall(void **unused)
{
    (void)unused;
    struct hf_cost_model m;
    hf_cost_init(&m);
    const double lat = 0.1, inv = 0.01, warm = 0.05;
    static const double sizes[] = {100, 200, 100, 400, 200, 800, 400, 1600, 800};
    int seen[2000] = {0};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        int w = (int)sizes[i];
        hf_cost_add(&m, w, 0.0, lat + inv * w + (seen[w]++ ? 0.0 : warm));
    }
    hf_cost_refit(&m);
    assert_true(m.fitted && m.lat_known);
    assert_true(fabs(hf_cost_warmup(&m) - warm) < 1e-6);
    long judged = m.judged;
    hf_cost_add(&m, 300, 0.0, lat + inv * 300 + warm + 5.0); /* a new size, stalled */
    assert_true(hf_cost_stall_risk(&m) == 0.0);              /* pending */
    hf_cost_add(&m, 800, 0.0, lat + inv * 800);              /* no drift */
    assert_int_equal(m.stalls, 1);
    assert_true(fabs(m.stall_excess - 5.0) < 1e-6);
    assert_true(m.judged == judged + 2);
    hf_cost_add(&m, 600, 0.0, lat + inv * 600 + warm); /* a new size's plain warm-up */
    hf_cost_add(&m, 800, 0.0, lat + inv * 800);
    assert_int_equal(m.stalls, 1);
    hf_cost_stall(&m, 2.0);
    hf_cost_stall(&m, -1.0); /* no stall */
    assert_int_equal(m.stalls, 2);
    assert_true(fabs(hf_cost_stall_risk(&m) - 7.0 / (double)m.judged) < 1e-6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_term_fit),
        cmocka_unit_test(test_bytes_in_proportion_are_the_line),
        cmocka_unit_test(test_split_bound),
        cmocka_unit_test(test_unknown_latency_still_caps_time),
        cmocka_unit_test(test_new_unit_drops_old_repeats),
        cmocka_unit_test(test_warm_up_then_stall_leave_the_model),
        cmocka_unit_test(test_restart_on_two_sizes_fits_their_line),
        cmocka_unit_test(test_stall_and_slow_bundle_are_no_drift),
        cmocka_unit_test(test_doubling_spans_make_a_line),
        cmocka_unit_test(test_slow_new_size_and_its_like_repeat_are_a_drift),
        cmocka_unit_test(test_new_size_far_past_its_warm_up_is_a_stall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
