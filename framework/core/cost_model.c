/* cost_model.c - the per-device cost model T(w, b) = lat + w * inv + b * inv_bw
 * and the "everyone finishes together" split under it (declared in sched.h,
 * used by the engine for bound_s and by HASS for its split). The per-byte term
 * is fitted by core/cost_bytes.c; this file keeps the window and the line.
 *
 * DESIGN
 * ------
 * A device's bundle time is modelled as a fixed cost per bundle plus a cost per
 * unit of work. Both are fitted from HF_COST_WINDOW bundles the device ran,
 * by a Theil-Sen line: the slope is the median of the slopes between pairs
 * of bundles whose sizes differ by at least 2x (pairs of nearly equal bundles
 * say nothing about the slope but a lot about their noise), the intercept the
 * median of t - slope * w. Medians make one wild bundle harmless: on a real H200
 * one first bundle of a new size took 40.9 ms where the model said 0.7 ms, and a
 * plain average of rates turned that into a rate 60x too low. When the window
 * holds bundles of one size only (a CPU runs one chunk at a time; a GPU runs the
 * same bundle every round once its split is settled) the latency cannot be
 * seen, so the last one fitted is kept and only the slope is re-fitted. To
 * keep sizes apart as long as possible, a full window evicts the oldest bundle
 * of the new bundle's own size class (sizes within 20%), or, for a size it
 * does not hold, the oldest of its commonest class: a GPU's whole-load
 * standalone bundle or round 0's profile spans stay in the window after a
 * hundred equal bundles of a greedy policy, and its latency stays known.
 *
 * Each new bundle is first compared with the fit. Slower than 1.5x the
 * prediction is an outlier: counted, returned to the caller (the engine records
 * it in results.json) and not fitted. Any bundle off the prediction by more
 * than max(10%, 3x the spread seen so far) is a surprise; two surprises in a row
 * in the same direction that agree (their relative deviations, or their
 * excess seconds, within 2x of each other: a stall and a slightly slow
 * bundle after it do not) are taken as a real change (thermal throttling, another
 * process on the GPU, a recovered fault), and the window restarts from those two
 * bundles. That is the whole "never freeze" rule: one stall is ignored, a
 * persistent change is believed after two bundles. Which part of the fit the
 * restart corrects: both, by the line through the two, when they are repeats
 * (no warm-up in either) of sizes at least 2x apart; else the latency when
 * the two came in faster, or (models with
 * `warm_fresh`, below) slower but both under a quarter of the window's
 * largest bundle (mostly latency: an intercept fitted low makes every small
 * steal slow); the slope otherwise. The first bundle of a size
 * not seen lately (the last 64 sizes) that comes in slow is a warm-up once the
 * latency is known (before that too, in a `warm_fresh` model, when it is
 * slower than any latency allows): not fitted and not a surprise, so a
 * split that moves does not teach the model that the device got slower (on a real H200 the first
 * bundle of a new size took up to 40 ms where repeats took 0.7 ms). It is
 * remembered, though, where no slow surprise is pending: a repeat of its size in
 * the same time (within the surprise tolerance) says there was no warm-up,
 * and the two restart the window like two surprises. Before
 * the latency is known a bundle of a size the window lacks is fitted
 * unjudged, except one slower than 1.5x the most any latency allows (no more
 * than a bundle of more work took, no more than k times a bundle of 1/k the
 * work): that is a warm-up or a stall whatever the latency, and judged as
 * such. A model whose owner expects warm-ups (`warm_fresh`: HASS, whose
 * profile spans are all new sizes) goes further before the latency is known:
 * the first repeat in a window of new sizes is fitted unjudged (the first
 * time without a warm-up: news about the intercept, not a surprise) unless
 * it too took longer than any latency allows (a stall: taken for the
 * intercept, one 5 ms stall on a 0.2 ms bundle made a GPU 26x slower and
 * moved the split every round after), and a
 * new size slower than 1.5x what any latency allows, once the window holds a
 * repeat, is a warm-up kept for the slope only (fresh pairs cancel it).
 * hf_cost_warmup reads the one-off cost of a new size from the window. The
 * engine's models (bound_s) do not set the flag. A model whose owner says its
 * device pays nothing for a new size (`no_warmup`: the engine's, for a CPU)
 * takes every bundle as a repeat: a CPU's bundles of a learned load are all
 * sizes it never ran (each chunk's learned work differs), and taken for
 * warm-ups, a CPU slowed 2x had every bundle flagged an outlier for the rest
 * of the run, the change never believed. Fitting is lazy (every 32
 * accepted bundles, or on hf_cost_refit) because a CPU reports every chunk and
 * some loads have 200000 of them per round.
 *
 * Bytes (issue 18): the line is fitted to each bundle's time less what its
 * bytes cost by the per-byte term in force (0 until one is found, so a model
 * fed no bytes, or bytes in proportion to work, is exactly the line above).
 * Where the window's bundles move different bytes per unit of work,
 * cost_bytes.c fits the three terms at once. The first time, such a fit must
 * halve the line's median residual and then predict the next bundle (one it
 * was not fitted to) within the noise and better than the line: a fit through
 * warm-ups and stalls, whose per-byte term stands for something else, fails
 * that (in the stress matrix's `gpu` trouble cells it had made an L40's work
 * look free). Once believed, a refit replaces it whenever its residual is no
 * larger than the line's, so it follows the device; a window that no longer
 * supports one drops it. A bundle whose bytes per work lie outside the
 * window's is judged by the three-term fit it makes possible, not by the
 * line (a GPU's first compute-bound piece after copy-bound profile spans would
 * otherwise be two surprises and restart the window). Everything else -
 * outliers, surprises, drifts, warm-ups - judges a bundle against the
 * prediction in force. When HASS's chunk costs are re-estimated (a new unit
 * of work, hf_cost_new_unit), the per-byte term waits for bundles in the new
 * unit, and a model that expects warm-ups (`warm_fresh`) drops its repeats:
 * the intercept they give is the old unit's, and averaged with the first
 * repeat in the new unit it fits neither (drop_repeats).
 *
 * Stall risk: a slow outlier that the next bundle does not confirm as a
 * drift was a one-off (a stall), and the model keeps their count and excess
 * seconds against the bundles it judged, over the whole run (a restart on a
 * drift keeps them: a changed speed says nothing about hiccups). A new size's
 * slow first bundle stalled for what it took beyond the window's measured
 * warm-ups, where that was far more than its fit. The stalls' excess per
 * judged bundle, hf_cost_stall_risk, is what one more bundle of the
 * device costs on average beyond its fit: every bundle is another chance of
 * a stall, so an owner that weighs splitting work into more bundles (HASS's
 * pieces, steals, hedges) prices each by it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost_bytes.h"
#include "sched.h"

#define COST_OUTLIER 0.5  /* slower than (1 + this) x the fit: an outlier */
#define COST_SURPRISE 0.1 /* least relative deviation that counts toward a drift */
#define COST_PAIR_GAP 2.0 /* pairs of bundles used for a slope differ this much in size */
#define COST_CLASS_GAP 1.2 /* bundles within this size ratio are one size class */
#define COST_SMALL_PAIR 4.0 /* slow surprises this much smaller than the window's largest
                               bundle correct the latency, not the slope */
#define COST_LAZY 32      /* accepted bundles between automatic refits */
#define COST_BYTES_MIN 0.01  /* a line off by less (median) leaves nothing for bytes to explain */
#define COST_BYTES_GAIN 0.5  /* a first per-byte term must halve the line's median residual */
#define COST_SHAPE_GAP 1.5   /* bytes per work beyond the window's by this: a new shape */

void hf_cost_init(struct hf_cost_model *m)
{
    memset(m, 0, sizeof *m);
}

/* The median over the window of f(i), over the bundles of one kind: repeats
 * (sizes run before) when `repeats` and there are any, else all of them. Each
 * bundle's time is taken less what its bytes cost at `ibw` s per byte. */
static double median_of(const struct hf_cost_model *m, int repeats, double lat, double inv,
                        double ibw, int what)
{
    double v[HF_COST_WINDOW];
    int k = 0;
    for (int i = 0; i < m->n; i++) {
        if (repeats && m->fresh[i])
            continue;
        double net = m->t[i] - ibw * m->b[i], pred = lat + inv * m->w[i] + ibw * m->b[i];
        v[k++] = what == 0 ? net - inv * m->w[i]                     /* intercept */
                 : what == 1 ? (net - lat) / m->w[i]                 /* slope */
                             : fabs(m->t[i] / (pred > 0 ? pred : 1) - 1.0); /* residual */
    }
    return hf__cost_median(v, k);
}

/* Fits lat and inv from the window (see DESIGN), then the spread: the median
 * absolute relative residual scaled to a standard deviation (x 1.4826).
 * Warm-ups make the first bundle of every size slower by about the same
 * amount, so slopes come from pairs of the same kind only (both first of
 * their size, or both repeats: the extra cancels) and the intercept and the
 * spread from the repeats as soon as there are any. */
void hf_cost_refit(struct hf_cost_model *m)
{
    /* A restarted window keeps its fit until three bundles say more: two
     * bundles (one of them maybe a warm-up) make no line. */
    if (m->n == 0 || (m->fitted && (m->stale == 0 || (m->restarted && m->n < 3))))
        return;
    m->restarted = 0;
    double slopes[HF_COST_WINDOW * (HF_COST_WINDOW - 1) / 2], ibw = m->inv_bw;
    int ns = 0, nrep = 0;
    for (int i = 0; i < m->n; i++) {
        nrep += !m->fresh[i];
        for (int j = 0; j < m->n; j++)
            if (m->w[j] >= COST_PAIR_GAP * (1.0 - 1e-9) * m->w[i] && m->fresh[i] == m->fresh[j])
                slopes[ns++] = (m->t[j] - ibw * m->b[j] - m->t[i] + ibw * m->b[i]) /
                               (m->w[j] - m->w[i]);
    }
    int rep = nrep >= 1;
    double inv = ns ? hf__cost_median(slopes, ns) : 0.0, lat = m->lat;
    if (ns && inv > 0.0) {
        lat = median_of(m, rep, 0.0, inv, ibw, 0);
        m->lat_known |= ns >= 3; /* fewer slopes barely tell latency from noise */
    }
    if (!(ns && inv > 0.0) || lat < 0.0) {
        /* One size only, or a line through the noise with a negative slope or
         * intercept: keep the latency we had (never more than the fastest
         * bundle's time) and fit the slope alone. */
        lat = ns && inv > 0.0 ? 0.0 : m->lat;
        for (int i = 0; i < m->n; i++)
            if (!rep || !m->fresh[i])
                lat = fmin(lat, 0.9 * (m->t[i] - ibw * m->b[i]));
        lat = fmax(lat, 0.0);
        inv = median_of(m, rep, lat, 0.0, ibw, 1);
    }
    m->lat = lat > 0.0 ? lat : 0.0;
    m->inv = inv;
    /* The three terms at once, where the bytes per unit of work differ: taken
     * when they explain the window clearly better than the line (DESIGN). */
    double l3, i3, b3, r3, r2 = median_of(m, rep, m->lat, m->inv, ibw, 2);
    int three = hf__cost_fit_bytes(m, rep, &l3, &i3, &b3, &r3);
    if (three && ibw > 0.0 && (r3 <= r2 || !(m->inv > 0.0))) {
        m->lat = l3; /* a per-byte term believed before: follow it */
        m->inv = i3;
        m->inv_bw = b3;
    } else if (three && ibw == 0.0 && r2 > COST_BYTES_MIN && r3 < COST_BYTES_GAIN * r2) {
        m->cand[0] = l3; /* believed once it predicts a bundle it was not fitted to */
        m->cand[1] = i3;
        m->cand[2] = b3;
        m->has_cand = 1;
    } else if (!three && ibw > 0.0) {
        /* The window no longer supports a per-byte term: back to the line. */
        m->inv_bw = 0.0;
        m->fitted = 0;
        hf_cost_refit(m);
        return;
    }
    if (!(m->inv > 0.0) && m->inv_bw > 0.0) {
        /* The per-byte term in force explains more than the bundles took (the
         * device got faster at copying, or the term came from few bundles):
         * drop it and fit the line to the times themselves. */
        m->inv_bw = 0.0;
        m->fitted = 0;
        hf_cost_refit(m);
        return;
    }
    if ((rep ? nrep : m->n) >= 3) /* else keep the spread seen before */
        m->spread = 1.4826 * median_of(m, rep, m->lat, m->inv, m->inv_bw, 2);
    m->fitted = m->inv > 0.0;
    m->stale = 0;
}

/* The oldest bundle of the window in w's size class, or -1; *count gets the
 * class's size. */
static int oldest_like(const struct hf_cost_model *m, double w, int *count)
{
    int at = -1;
    *count = 0;
    for (int i = 0; i < m->n; i++)
        if (m->w[i] * COST_CLASS_GAP > w && m->w[i] < w * COST_CLASS_GAP) {
            ++*count;
            if (at < 0 || m->age[i] < m->age[at])
                at = i;
        }
    return at;
}

/* The slot a new bundle of work w takes (see DESIGN: sizes kept apart). */
static int slot_for(const struct hf_cost_model *m, double w)
{
    if (m->n < HF_COST_WINDOW)
        return m->n;
    int count, at = oldest_like(m, w, &count);
    if (at >= 0)
        return at;
    int best = 0, best_count = -1;
    for (int i = 0; i < m->n; i++) {
        int c, o = oldest_like(m, m->w[i], &c);
        if (c > best_count) {
            best = o;
            best_count = c;
        }
    }
    return best;
}

/* Puts a bundle into the window. */
static void accept(struct hf_cost_model *m, double w, double b, double t, int fresh)
{
    int s = slot_for(m, w);
    m->w[s] = w;
    m->b[s] = b;
    m->t[s] = t;
    m->fresh[s] = (unsigned char)fresh;
    m->age[s] = m->clock++;
    if (m->n < HF_COST_WINDOW)
        m->n++;
    m->stale++;
    if (!m->fitted || m->stale >= COST_LAZY || m->n < 4)
        hf_cost_refit(m);
}

/* Whether the model has seen a bundle of this size lately; remembers it. */
static int size_seen(struct hf_cost_model *m, double work)
{
    int n = m->nsizes, cap = (int)(sizeof m->sizes / sizeof *m->sizes);
    for (int i = 0; i < n; i++)
        if (fabs(m->sizes[i] - work) <= 1e-9 * work)
            return 1;
    m->sizes[m->size_at] = work;
    m->size_at = (m->size_at + 1) % cap;
    if (m->nsizes < cap)
        m->nsizes++;
    return 0;
}

/* The work of the window's largest bundle (0 when it is empty). */
static double largest_work(const struct hf_cost_model *m)
{
    double big = 0.0;
    for (int i = 0; i < m->n; i++)
        big = fmax(big, m->w[i]);
    return big;
}

/* Whether a and b are within 2x of each other in magnitude. */
static int within_2x(double a, double b)
{
    return fmin(fabs(a), fabs(b)) >= 0.5 * fmax(fabs(a), fabs(b));
}

void hf_cost_seen(struct hf_cost_model *m, double work)
{
    if (work > 0.0)
        size_seen(m, work);
}

/* The most a bundle of `work` moving `bytes` can take by the window, whatever
 * the latency: a device whose time is lat + w * inv + b * inv_bw with every
 * term >= 0 takes no longer for less work and bytes than for more, and for
 * k times the work and bytes at most k times as long. So each bundle of the
 * window caps it at its time times max(1, work / its work, bytes / its bytes);
 * INFINITY for an empty window. */
static double time_cap(const struct hf_cost_model *m, double work, double bytes)
{
    double cap = INFINITY;
    for (int i = 0; i < m->n; i++) {
        double k = fmax(1.0, work / m->w[i]);
        if (bytes > 0.0)
            k = m->b[i] > 0.0 ? fmax(k, bytes / m->b[i]) : INFINITY;
        cap = fmin(cap, k * m->t[i]);
    }
    return cap;
}

/* Slower than 1.5x the most any latency allows (time_cap): a warm-up or a
 * stall, whatever the latency is. */
static int over_cap(const struct hf_cost_model *m, double work, double bytes, double seconds)
{
    return seconds > (1.0 + COST_OUTLIER) * time_cap(m, work, bytes);
}

/* Whether the window holds a bundle of a size run before (a repeat). */
static int has_repeat(const struct hf_cost_model *m)
{
    for (int i = 0; i < m->n; i++)
        if (!m->fresh[i])
            return 1;
    return 0;
}

/* Whether bytes per work `rho` lies outside the window's range by more than
 * the gap that lets the per-byte term be fitted (cost_bytes.c). */
static int new_shape(const struct hf_cost_model *m, double rho)
{
    double lo = INFINITY, hi = 0.0;
    for (int i = 0; i < m->n; i++) {
        lo = fmin(lo, m->b[i] / m->w[i]);
        hi = fmax(hi, m->b[i] / m->w[i]);
    }
    return m->n > 0 && (rho > COST_SHAPE_GAP * hi || rho * COST_SHAPE_GAP < lo);
}

/* Drops the window's repeats (HASS's models, on a new unit of work). A repeat
 * gives the intercept as its time less the slope's share, and a window that
 * holds repeats takes the intercept from them alone; but HASS's round-0 repeat
 * (hass_profile.c: it tells a GPU's latency from its per-size warm-up before the
 * first plans) ran in the declared unit, and once the learned estimates
 * replace that unit the first repeat in the new one has the old one as its
 * only fellow: the median of two is their mean, half a 20 us latency and
 * half the new unit's excess (an H200 of the `hot` matrix cells: 0.02 and
 * 15.6 ms made 7.8 ms, fitting neither, and the plan moved on it). Without
 * them the intercept comes from the first-of-size bundles, as before the
 * round-0 repeat existed, until repeats in the new unit take over. The
 * first-of-size bundles stay: in pairs they give the slope. */
static void drop_repeats(struct hf_cost_model *m)
{
    int k = 0;
    for (int i = 0; i < m->n; i++) {
        if (!m->fresh[i])
            continue;
        m->w[k] = m->w[i];
        m->b[k] = m->b[i];
        m->t[k] = m->t[i];
        m->fresh[k] = m->fresh[i];
        m->age[k] = m->age[i];
        k++;
    }
    if (k == m->n || k == 0) /* nothing to drop, or nothing left to fit */
        return;
    m->n = k;
    m->stale++;
    hf_cost_refit(m);
}

void hf_cost_new_unit(struct hf_cost_model *m)
{
    m->unit_from = m->clock;
    m->has_cand = 0;
    if (m->warm_fresh)
        drop_repeats(m);
    if (m->inv_bw > 0.0) {
        m->inv_bw = 0.0;
        m->fitted = 0; /* refit the line now, on the times themselves */
        hf_cost_refit(m);
    }
}

/* Whether a bundle whose bytes per work are new to the window (new_shape) is
 * what the three-term fit of the window with it expects: within the noise
 * the line tolerates (max(10%, 3x its spread)). A stall or a warm-up of a new
 * shape is not: the least-median fit goes through the other bundles. */
static int shape_fits(const struct hf_cost_model *m, double work, double bytes, double seconds,
                      int fresh)
{
    if (!new_shape(m, bytes / work))
        return 0;
    struct hf_cost_model t = *m;
    int s = slot_for(&t, work);
    t.w[s] = work;
    t.b[s] = bytes;
    t.t[s] = seconds;
    t.fresh[s] = (unsigned char)fresh;
    t.age[s] = t.clock++;
    if (t.n < HF_COST_WINDOW)
        t.n++;
    double lat, inv, ibw, resid;
    if (!hf__cost_fit_bytes(&t, 1, &lat, &inv, &ibw, &resid))
        return 0;
    double pred = lat + inv * work + ibw * bytes;
    return pred > 0.0 && fabs(seconds / pred - 1.0) <= fmax(COST_SURPRISE, 3.0 * m->spread);
}

/* A candidate three-term fit meets a bundle it was not fitted to: believed
 * when it predicts it within the noise the line tolerates and better than the
 * line does, else dropped (a fit through warm-ups and stalls, whose per-byte
 * term stands in for something else, predicts the next bundle badly). */
static void try_candidate(struct hf_cost_model *m, double work, double bytes, double seconds)
{
    double pc = m->cand[0] + m->cand[1] * work + m->cand[2] * bytes;
    double pl = hf_cost_time(m, work, bytes);
    double ec = pc > 0.0 ? fabs(seconds / pc - 1.0) : INFINITY;
    double el = pl > 0.0 ? fabs(seconds / pl - 1.0) : INFINITY;
    m->has_cand = 0;
    if (ec <= fmax(COST_SURPRISE, 3.0 * m->spread) && ec < el) {
        m->lat = m->cand[0];
        m->inv = m->cand[1];
        m->inv_bw = m->cand[2];
        m->lat_known = 1; /* three bundles of different shapes set it */
    }
}

/* The median one-off cost of a new size over the window's first bundles of
 * their sizes; *measured says whether there were two to tell it. */
static double window_warmup(const struct hf_cost_model *m, int *measured)
{
    double v[HF_COST_WINDOW];
    int k = 0;
    *measured = 0;
    if (!m->fitted || !m->lat_known || !has_repeat(m))
        return 0.0;
    for (int i = 0; i < m->n; i++)
        if (m->fresh[i])
            v[k++] = m->t[i] - hf_cost_time(m, m->w[i], m->b[i]);
    *measured = k >= 2;
    return k >= 2 ? fmax(0.0, hf__cost_median(v, k)) : 0.0;
}

/* The stall in the pending slow surprise, if any: the seconds it took beyond
 * the fit, or for a new size's first bundle, beyond the warm-up the window
 * measured on new sizes (none where it measured none: then it is all taken
 * for the warm-up, which is priced apart). A surprise within 1.5x is the tail
 * of the device's noise, which the spread already prices. */
static double pending_stall(const struct hf_cost_model *m)
{
    if (m->run != 1 || m->run_sign <= 0 || !(m->pdev > COST_OUTLIER))
        return 0.0;
    if (!m->pwarm)
        return m->pex;
    int measured;
    double ex = m->pex - window_warmup(m, &measured), pred = m->pt[0] - m->pex;
    return measured && ex > COST_OUTLIER * pred ? ex : 0.0;
}

/* The pending slow surprise, if any, turned out a one-off: the bundle after it
 * did not confirm a drift. Its stall counts toward the stall risk. */
static void settle_surprise(struct hf_cost_model *m)
{
    double stall = pending_stall(m);
    if (stall > 0.0) {
        m->stalls++;
        m->stall_excess += stall;
    }
}

double hf_cost_stall_risk(const struct hf_cost_model *m)
{
    return m->judged > 0 ? m->stall_excess / (double)m->judged : 0.0;
}

void hf_cost_stall(struct hf_cost_model *m, double excess)
{
    if (!(excess > 0.0) || !isfinite(excess))
        return;
    m->judged++;
    m->stalls++;
    m->stall_excess += excess;
}

/* Starts a run of surprises (the drift candidates) with this one. */
static void remember_surprise(struct hf_cost_model *m, double work, double bytes, double seconds,
                              int fresh, double dev, double ex)
{
    m->run = 1;
    m->run_sign = dev > 0.0 ? 1 : -1;
    m->pw[0] = work;
    m->pb[0] = bytes;
    m->pt[0] = seconds;
    m->pfresh = fresh;
    m->pwarm = 0;
    m->pdev = dev;
    m->pex = ex;
}

int hf_cost_add(struct hf_cost_model *m, double work, double bytes, double seconds)
{
    if (!(work > 0.0) || !(seconds > 0.0) || !isfinite(work) || !isfinite(seconds))
        return 0;
    if (!(bytes > 0.0) || !isfinite(bytes))
        bytes = 0.0;
    int fresh = !size_seen(m, work) && !m->no_warmup;
    /* Until the latency has been seen, a bundle of a size the window does not
     * hold cannot be judged: the fit has no idea of its fixed cost - unless it
     * took far longer than any latency allows (time_cap: a bundle of half the
     * work of one seen, slower than it, is a warm-up or a stall). Nor can
     * one whose bytes per unit of work lie well outside the window's (a GPU's
     * first compute-bound piece after copy-bound profile spans) be judged by
     * the line: it is judged by the three-term fit it makes possible, and
     * fitted at once when that fit expects it. */
    if (m->has_cand && m->fitted)
        try_candidate(m, work, bytes, seconds);
    /* Whatever the latency: every test below that reads it wants no latency known. */
    int capped = !m->lat_known && over_cap(m, work, bytes, seconds);
    if (m->warm_fresh && m->n > 0 && !m->lat_known &&
        (fresh ? has_repeat(m) && capped : !has_repeat(m) && !capped)) {
        /* Before the latency is known, with warm-ups to expect (the owner
         * says so): the first repeat in a window of new sizes is the first
         * time without a warm-up, news about the intercept rather than a
         * surprise (unless it is a stall); a new size that took more than
         * any latency allows, once the window holds a repeat, is a warm-up.
         * Both are fitted unjudged, the warm-up marked fresh: it gives the
         * slope in pairs with other fresh bundles (their warm-ups cancel),
         * never the intercept. */
        m->warmups += fresh;
        settle_surprise(m);
        m->run = 0;
        accept(m, work, bytes, seconds, fresh);
        return 0;
    }
    int count, unknown = !m->lat_known && oldest_like(m, work, &count) < 0 && !capped;
    if (!m->fitted || unknown || (bytes > 0.0 && shape_fits(m, work, bytes, seconds, fresh))) {
        int shape = m->fitted && !unknown;
        settle_surprise(m);
        m->run = 0;
        accept(m, work, bytes, seconds, fresh);
        if (shape)
            hf_cost_refit(m);
        return 0;
    }
    double pred = hf_cost_time(m, work, bytes), dev = seconds / pred - 1.0, ex = seconds - pred;
    m->judged++;
    int outlier = dev > COST_OUTLIER;
    double tol = fmax(COST_SURPRISE, 3.0 * m->spread);
    int sign = dev > tol ? 1 : dev < -tol ? -1 : 0;
    if (fresh && sign > 0 && (m->lat_known || (m->warm_fresh && capped))) {
        /* A new size's first bundle, slow: a warm-up, not news about the
         * device - before the latency is known too, in a model told to expect
         * warm-ups, when no latency could explain it (taken for a surprise,
         * it and a stall right after restarted the window at 26x the GPU's
         * time per unit). */
        m->warmups++;
        m->outliers += outlier;
        if (m->run == 0 || m->run_sign < 0) { /* a slow surprise pending stays the one to pair */
            remember_surprise(m, work, bytes, seconds, 1, dev, ex);
            m->pwarm = 1;
        }
        return outlier;
    }
    if (sign == 0) {
        settle_surprise(m);
        m->run = 0;
        accept(m, work, bytes, seconds, fresh);
        return 0;
    }
    /* Two surprises tell one change only when they agree, relatively (a
     * slope that moved) or in seconds (an intercept that is off: a small
     * bundle's deviation is then much the larger): a 5 ms stall (7x) and a
     * bundle 14% slow after it, taken for a drift, made a GPU 4x slower for
     * the plan and moved all eight GPUs to new sizes (3 ms each; issue 12's
     * matrix, n4096-g8-j0.05-gpu, seed 8). The later one starts a run of
     * its own then. */
    int agree = within_2x(dev, m->pdev) || within_2x(ex, m->pex);
    /* A new size's slow first bundle, set aside as a warm-up, and its repeat
     * as slow: there was no warm-up, the model is off at that size (a GPU
     * planned 2x the chunks of its equals on noisy profile spans ran them 60%
     * slower than its model, twice, before two repeats restarted it: 3
     * rounds lost in n1024-g4-j0.05-clean, seed 1). Only a repeat of its own
     * size, in the same time within the noise, tells that (a stall after a
     * real warm-up is within 2x of it too), and only of a size that is not
     * small against the window (below: a pair of small ones corrects the
     * latency). Two bundles' times differ by sqrt(2) times the noise of
     * one: held to one bundle's tolerance (10%), a repeat 13% slower than
     * its first at 5% jitter kept a GPU on 63 chunks where its equals ran
     * 20-32 for a third round (n1024-g8-j0.05-clean, seed 15). */
    if (m->pwarm)
        agree = !fresh && fabs(work - m->pw[0]) <= 1e-9 * work &&
                COST_SMALL_PAIR * work >= largest_work(m) &&
                fabs(seconds / m->pt[0] - 1.0) <= M_SQRT2 * tol;
    if (m->run > 0 && sign == m->run_sign && agree) {
        /* A second surprise in the same direction: the device changed. Restart
         * the window from the two bundles and correct the fit: faster than
         * predicted corrects the latency first (warm-ups can only have
         * inflated it; the slope, from pairs of bundles, is the better known
         * part), and the slope only as far as the latency cannot explain it;
         * slower corrects the slope (a device slowed down by throttling or
         * another process is slower per unit of work), except when both
         * bundles are small against the window (below: the latency then),
         * and in HASS's models, which scale whole (below). The fit holds until a
         * third bundle allows one of its own. The per-byte term scales with
         * the slope (a slowed device copies slower too); the corrections work
         * on the times less their bytes' cost. */
        double ibw = m->inv_bw, inv0 = m->inv;
        if (!(m->pt[0] - ibw * m->pb[0] > 0.0) || !(seconds - ibw * bytes > 0.0))
            ibw = m->inv_bw = 0.0; /* the bytes' term explains more than the time */
        double t0 = m->pt[0] - ibw * m->pb[0], t1 = seconds - ibw * bytes;
        double lat = 0.5 * (t0 - m->inv * m->pw[0] + t1 - m->inv * work);
        /* In a model whose owner expects warm-ups (HASS, whose intercept
         * comes from profile spans that are all new sizes), two slow bundles
         * both under a quarter of the window's largest are mostly latency: an
         * intercept fitted low (2% jitter on a 20 us latency) makes every
         * small steal a slow surprise, and charging the excess to the slope
         * made an equal GPU 30-45% slower for the plan. The latency is
         * corrected then, as for fast surprises; a slowed device shows on its
         * next large bundle. The engine's models (bound_s) keep the slope
         * correction: with this rule the bound of the 2x-slowdown cells came
         * out weaker. */
        int small = m->warm_fresh && m->lat_known &&
                    COST_SMALL_PAIR * fmax(m->pw[0], work) < largest_work(m);
        /* Two repeats (no warm-up in either) of clearly different sizes make
         * a line of their own: a GPU's 236-chunk bundle 14% slow and a
         * 1-chunk steal at its latency (20 us, against a fitted intercept of
         * 0), taken as a slope, made the GPU 12x slower per unit of work for
         * a round (issue 12's matrix, n1024-g1-j0.05-gpu, seed 5). */
        double wlo = fmin(m->pw[0], work), whi = fmax(m->pw[0], work);
        double slope = whi > wlo ? (t1 - t0) / (work - m->pw[0]) : 0.0;
        double line_lat = t0 - slope * m->pw[0];
        if (!m->pfresh && !fresh && whi >= COST_PAIR_GAP * wlo && slope > 0.0 && line_lat >= 0.0) {
            m->lat = line_lat;
            m->inv = slope;
            if (sign > 0 && inv0 > 0.0 && m->inv > inv0)
                m->inv_bw = ibw * m->inv / inv0;
        } else if ((sign < 0 || small) && lat >= 0.0) {
            m->lat = lat;
        } else if (sign > 0 && m->warm_fresh && m->lat + m->inv * m->pw[0] > 0.0 &&
                   m->lat + m->inv * work > 0.0) {
            /* HASS's model of a slowed device scales whole: a pair of one
             * size cannot tell latency from slope, and the excess taken as
             * slope kept the old latency, so a GPU slowed 2x at a small load
             * (its latency half its time) ran its next, smaller share 25%
             * over plan (issue 12's matrix, n1024-g8-j0-slow, seed 1). Too
             * slow a latency errs safe: the device ends early, and its next
             * bundles, fast surprises, correct the latency. */
            double f = 0.5 * (t0 / (m->lat + m->inv * m->pw[0]) + t1 / (m->lat + m->inv * work));
            m->lat *= f;
            m->inv *= f;
            m->inv_bw = ibw * f;
        } else {
            m->lat = sign < 0 ? 0.0 : fmin(m->lat, 0.5 * fmin(t0, t1));
            m->inv = 0.5 * ((t0 - m->lat) / m->pw[0] + (t1 - m->lat) / work);
            if (sign > 0 && inv0 > 0.0 && m->inv > inv0)
                m->inv_bw = ibw * m->inv / inv0;
        }
        m->n = 0;
        m->run = 0;
        m->restarted = 1;
        accept(m, m->pw[0], m->pb[0], m->pt[0], m->pfresh);
        accept(m, work, bytes, seconds, fresh);
        m->outliers += outlier;
        return outlier;
    }
    settle_surprise(m);
    remember_surprise(m, work, bytes, seconds, fresh, dev, ex);
    if (!outlier)
        accept(m, work, bytes, seconds, fresh);
    m->outliers += outlier;
    return outlier;
}

double hf_cost_warmup(const struct hf_cost_model *m)
{
    int measured;
    return window_warmup(m, &measured);
}

double hf_cost_time(const struct hf_cost_model *m, double work, double bytes)
{
    return m->fitted ? m->lat + m->inv * work + m->inv_bw * bytes : 0.0;
}

double hf_cost_split(const double *lat, const double *inv, const int *use, int n, double work,
                     double *x)
{
    /* Water-filling: visit the usable devices by increasing latency; with the
     * first k of them finishing together, T = (work + sum lat/inv) / sum 1/inv.
     * The answer is the first k whose T does not reach the next device's
     * latency (that device could not start before everyone is done). */
    int order[n], k = 0;
    for (int d = 0; d < n; d++) {
        x[d] = 0.0;
        if ((!use || use[d]) && inv[d] > 0.0 && isfinite(inv[d]) && lat[d] >= 0.0) {
            int at = k++;
            while (at > 0 && lat[order[at - 1]] > lat[d]) {
                order[at] = order[at - 1];
                at--;
            }
            order[at] = d;
        }
    }
    if (k == 0)
        return INFINITY;
    double sinv = 0.0, slat = 0.0, T = INFINITY;
    int used = 0;
    for (int i = 0; i < k; i++) {
        int d = order[i];
        sinv += 1.0 / inv[d];
        slat += lat[d] / inv[d];
        T = (work + slat) / sinv;
        used = i + 1;
        if (i + 1 == k || T <= lat[order[i + 1]])
            break;
    }
    for (int i = 0; i < used; i++) {
        int d = order[i];
        x[d] = fmax(0.0, (T - lat[d]) / inv[d]);
    }
    return T;
}

double hf_cost_least_time(int (*fits)(void *arg, double T), void *arg, double from,
                          double *below)
{
    double lo = from, hi = from > 0.0 ? from : 1e-9;
    for (int i = 0; i < 2000 && !fits(arg, hi); i++) {
        lo = hi;
        hi *= 2.0;
    }
    if (below)
        *below = lo;
    if (!fits(arg, hi))
        return INFINITY;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (fits(arg, mid))
            hi = mid;
        else
            lo = mid;
    }
    if (below)
        *below = lo;
    return hi;
}
