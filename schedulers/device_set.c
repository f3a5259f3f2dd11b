/* device_set.c - which devices take part in a round: the full set or one that
 * leaves devices out, chosen by the predicted round of each.
 *
 * DESIGN
 * ------
 * A device's taking part in a round costs the round more than its bundles:
 * the shared-data merge and the copy-back of what it changed, a
 * synchronisation, a host round trip, an algorithm path that adds rounds. No
 * bundle model holds that, so a planner that splits by bundle models alone
 * keeps a device whose bundles look cheap even when the round gets slower
 * with it. Here every planning scheduler (HASS, min-min, Qilin) prices a
 * device set S for a round of work W as
 *     T(S) = split_S(W) + part_S(W)
 * where split_S is the best split of W over S under each device's affine
 * model (hf_cost_split: every device of S finishes together) and part_S is
 * what rounds run on S cost outside their bundles, as the engine measured it
 * (hf_round_report.outside_s: before the first bundle began and after the
 * last ended: the shared-data merge and copy-back, syncs, host turnaround).
 * Measured, not inferred from makespan - split_S, so that a planner's model
 * still learning is not blamed on the set. One figure holds every such cost,
 * so it needs no separate model per cost: it is
 * fitted per set as an affine line in the round's work (the merge grows with
 * what changed, which grows with the work done; the sync does not), robust
 * like the bundle models (Theil-Sen: the median slope between rounds of
 * clearly different work, never below 0 since taking part gets no cheaper
 * with more work) over the set's last HF__DEVSET_WINDOW rounds, at the
 * median height of the rounds nearest the one priced (within HF__DEVSET_NEAR
 * of its work, else the nearest): a graph search's rounds span six orders of
 * magnitude of work, and a line set by its large rounds' fixed costs priced a
 * GPU's 0.1 ms tail round at 1 ms (H100, kron-22 SSSP), so that the CPU alone,
 * priced by its rate, took rounds it ran 2-5x slower. Where no round was that
 * near but rounds below and above it ran, it is priced on the segment
 * joining the two sizes around it: a search's cost is no line in its work
 * (the same GPU took 0.7 ms at 1.6e5 units, 2.9 at 3.4e7 and at 7.2e7, 5.2 at
 * 1.2e8), and the height of the nearest size priced a round of 3.2e6 at 1.9
 * ms that the GPU ran in 0.5. Not where the larger size cost less (noise
 * larger than the rise between them): the nearest size prices W then.
 *
 * A set's first round carries one-off costs of taking part that no later
 * round pays: the shared data's first merge, first touches of its buffers,
 * each kernel's first launch in a round. So a set's rounds in which one of
 * its devices ran first price its part only until later rounds ran (an H100
 * host's kron-22 SSSP: its first round spent 2.1-2.9 ms past its bundles,
 * later ones 0.4-1.3). An overpriced set is never run again, so the error
 * never shows; an underpriced one runs and is measured at the next round.
 * Its makespans keep that round: a set that ran this size outranks
 * predictions (below), and its one-off costs make that err towards the set
 * that ran.
 *
 * A device's model here is what it measured in the rounds so far: its
 * seconds running bundles against the work it ran, per round, fitted like
 * the part (without a rising slope, its seconds per unit of work), so that
 * every planner's choice rests on the same measurements, not on how good its
 * own models are (min-min's rates from a standalone pass, a planner's rate
 * read off a tiny first load). A GPU measured only in rounds of less than
 * half this round's work is priced by its least time: one bundle of a small
 * round cannot tell its per-bundle cost from its rate, so the GPU alone is
 * tried once at size rather than priced by a rate that is mostly launch and
 * sync (a CPU's time, chunk by chunk, grows with its work at any size). A
 * device no round has measured takes the
 * planner's model, else its standalone rate. A planner still measuring its
 * devices (round 0's profile, Qilin's training) is given a set by those only
 * where taking part is expected to cost (a prior, below), so that measuring
 * does not pay a merge the set can never repay.
 *
 * A set that never ran is priced from the sets that did. From the smallest
 * set around it: a device alone merges nothing, and every device past the
 * first adds its changes to merge, so a set of k devices pays (k - 1) / (n -
 * 1) of what a set of n around it paid; where no set around it ran, the same
 * share of what the engine expects the full set to pay (hf_round.part_prior_s:
 * the merge of what the round may change, core/part_prior.c), so that the
 * first round of a set is not a blind one. From the sets inside it: a device
 * added never makes the merge smaller, so it pays at least the most any of
 * them paid. Where that is wrong it errs towards trying a subset once, which
 * then is priced by what it cost. An app whose rounds
 * differ by device set reports it (hf_load.solo_rounds: one device alone
 * covers that many rounds of the split path in one round, as a fused search
 * does), and a single device's T is divided by it.
 *
 * The candidates are the full set (every alive device), every single device,
 * and the full set less each device (2n + 1 sets of n devices; a pair is its
 * two singles). The set the last round chose (the full set before any
 * choice) is replaced only by a set predicted faster by more than
 * HF__DEVSET_GAIN, the part of a round that a prediction's noise can move,
 * so that noise does not toggle the set. So where a subset ran the last
 * round, a tie keeps it: the device a tie adds is predicted to add nothing
 * and still costs what no model of it holds (an H100 host's CPU, given 5%
 * of a round of SSSP by its planner beside the GPU, made the round 2-5x the
 * GPU alone's).
 *
 * What a set measured outranks what it is predicted: a set's round also
 * costs what no model of it holds (a CPU whose threads slow the GPU's
 * bundles beside them, memory traffic, a planner's own split inside the
 * set), and the makespans of its rounds hold all of it. So where both the
 * full set and a candidate ran rounds of a similar work (within
 * HF__DEVSET_NEAR of the round's), they are compared by those makespans
 * (fitted as the part is), not by their models. A set no round has
 * measured is tried once (an exploration) where taking part is seen to cost
 * (the full set's part is at least HF__DEVSET_GAIN of its round: without
 * that, nothing hides from the models) and its predicted loss against the
 * full set's measured round fits the same budget as a probe: at most
 * HF__DEVSET_PROBE_PAY of the rounds run so far. A device whose bundles are
 * slowed by the others' taking part is then measured alone, once, at a
 * bounded cost. The other way round, where a subset ran rounds of this size
 * and the full set never did (a prior chose the subset), the full set
 * replaces the subset only when predicted faster than the subset measured
 * by more than this run's predictions have missed (the median share of the
 * recent makespans, at least HF__DEVSET_GAIN): a set never measured at size
 * is predicted no better than the rounds so far were, and trying it costs a
 * whole round (an H100 host's mst: the full set, predicted 5% under the GPU
 * alone's measured round with predictions missing by 20%, ran 25-110% over
 * it). It comes back as a probe, below.
 *
 * A device left out is measured again now and then, so that a load that
 * grows brings it back: the full set runs (a probe) once the rounds run on
 * the subset since the last probe would have paid for it at 1% of their time
 * (rounds x T(subset) x 0.01 >= T(full) - T(subset), the probe's predicted
 * loss), and never sooner than HF__DEVSET_REPROBE rounds: a bounded cost, as
 * HASS's `reprobe`. A probe refreshes the full set's part (and the left-out
 * devices' bundle models), so when the full set got better it is chosen again.
 *
 * A round of one chunk runs on one device whatever the set: it goes to the
 * device that alone is predicted quickest (by the models above, any planner,
 * measuring or not), rather than to whichever device asks first. A device
 * that ran more than its chunks (hf_bundle_did_more: a GPU that went on with
 * a search's next levels in its standalone pass) is priced by all it ran.
 *
 * A left-out device is simply not alive in the round the planner plans
 * (struct hf_round.alive of the view), so every chunk is still handed out
 * exactly once, to the devices that take part.
 */
#include "device_set.h"
#include "sched_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HF__DEVSET_GAIN 0.01  /* a subset must be predicted this much faster than the full set */
#define HF__DEVSET_REPROBE 8  /* rounds on a subset before the full set may run again */
#define HF__DEVSET_PROBE_PAY 0.01 /* a probe costs at most this part of the rounds before it */
#define HF__DEVSET_APART 1.25 /* rounds whose work differs this much tell a slope */
#define HF__DEVSET_NEAR 2.0   /* a round within this factor of work measures a set's size */

int hf__devset_init(struct hf__devset *s, const struct hf_sched_env *env)
{
    memset(s, 0, sizeof *s);
    s->ndev = env->ndevices;
    s->dev = env->dev;
    int fixed = 0;
    if (env->cfg) {
        int rc = hf_config_bool(env->cfg, "run", "devices_fixed", 0, &fixed);
        if (rc)
            return rc;
    }
    s->on = !fixed && s->ndev >= 2 && s->ndev <= 64;
    size_t n = (size_t)(s->ndev > 0 ? s->ndev : 1);
    s->alive = calloc(n, sizeof *s->alive);
    s->devc = calloc(n, sizeof *s->devc);
    return s->alive && s->devc ? 0 : hf_fail(HF_ENOMEM, "device sets: out of memory");
}

void hf__devset_free(struct hf__devset *s)
{
    free(s->alive);
    free(s->devc);
    s->alive = NULL;
    s->devc = NULL;
}

static int popcount(uint64_t m)
{
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

/* How far in log work from W the nearest of the rounds whose works are
 * nw[i] lies (INFINITY when W is no work: every point is as near). */
static double nearest(const double *nw, int n, double W)
{
    if (!(W > 0.0))
        return INFINITY;
    double least = INFINITY;
    for (int k = 0; k < n; k++)
        least = fmin(least, fabs(log(nw[k] / W)));
    return least;
}

/* The median work and seconds of the points whose round work is within
 * HF__DEVSET_APART of `at` (one size of round, however often it ran). */
static void size_median(const double *w, const double *t, const double *nw, int n, double at,
                        double *mw, double *mt)
{
    double vw[HF__DEVSET_WINDOW], vt[HF__DEVSET_WINDOW];
    int k = 0;
    for (int i = 0; i < n; i++)
        if (nw[i] <= HF__DEVSET_APART * at && at <= HF__DEVSET_APART * nw[i])
            vw[k] = w[i], vt[k++] = t[i];
    *mw = hf__median(vw, k);
    *mt = hf__median(vt, k);
}

/* A round of work W between measured sizes (none of them near it: the
 * caller's test): the segment from the largest measured size below W to the
 * smallest above it (see DESIGN: a search's cost is no line in its work), as
 * a + b w. 0 where W is not between two sizes, or the larger size ran less
 * work or took less time (noise: the nearest size prices W). */
static int between(const double *w, const double *t, const double *nw, int n, double W,
                   double *a, double *b)
{
    double below = 0.0, above = INFINITY;
    for (int i = 0; i < n; i++) {
        if (nw[i] < W)
            below = fmax(below, nw[i]);
        else
            above = fmin(above, nw[i]);
    }
    if (!(below > 0.0) || !isfinite(above))
        return 0;
    double w0, t0, w1, t1;
    size_median(w, t, nw, n, below, &w0, &t0);
    size_median(w, t, nw, n, above, &w1, &t1);
    if (!(w1 > w0) || !(t1 >= t0))
        return 0;
    *b = (t1 - t0) / (w1 - w0);
    *a = t0 - *b * w0;
    return 1;
}

/* The line a + b w through n points (w[i], t[i]) for a round of work W (see
 * DESIGN: Theil-Sen, slope >= 0, from every point; its height from the
 * points of the rounds nearest W, whose works are nw[i], so that a tiny
 * round is not priced by the fixed costs of large ones). Without a rising
 * slope (no two works apart, or noise larger than the rise between them),
 * `through_origin` gives t proportional to w at the seconds per unit of the
 * largest works (a device's time: its work's), else a constant (a set's
 * part). */
static void fit_line(const double *w, const double *t, const double *nw, int n, double W,
                     int through_origin, double *a, double *b)
{
    double slopes[HF__DEVSET_WINDOW * HF__DEVSET_WINDOW], rest[HF__DEVSET_WINDOW];
    int ns = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (w[j] > HF__DEVSET_APART * w[i])
                slopes[ns++] = (t[j] - t[i]) / (w[j] - w[i]);
    *b = ns ? fmax(0.0, hf__median(slopes, ns)) : 0.0;
    int k = 0;
    if (!(*b > 0.0) && through_origin) {
        /* Seconds per unit where the work was largest: fixed costs weigh
         * least there (a one-vertex first load's time is all fixed cost). */
        double most = 0.0;
        for (int i = 0; i < n; i++)
            most = fmax(most, w[i]);
        for (int i = 0; i < n; i++)
            if (HF__DEVSET_NEAR * w[i] >= most)
                rest[k++] = t[i] / w[i];
        *a = 0.0;
        *b = hf__median(rest, k);
        return;
    }
    /* The points within HF__DEVSET_NEAR of W, else the nearest; none that
     * near, the segment W lies on where there is one. */
    double least = nearest(nw, n, W);
    if (least > log(HF__DEVSET_NEAR) && between(w, t, nw, n, W, a, b))
        return;
    double radius = fmax(least, log(HF__DEVSET_NEAR)) * (1.0 + 1e-9);
    for (int i = 0; i < n; i++)
        if (!(fabs(log(nw[i] / W)) > radius))
            rest[k++] = t[i] - *b * w[i];
    *a = hf__median(rest, k);
}

/* A set's series t (its part, or its makespans) at work W, fitted from its
 * n rounds of works w: seconds, never below 0 (a height read off larger
 * rounds, less their slope, can be). */
static double fit_series(const double *w, const double *t, int n, double W)
{
    double a, b;
    fit_line(w, t, w, n, W, 0, &a, &b);
    return fmax(0.0, a + b * W);
}

/* A set's part at work W: from its rounds that carry no one-off cost (not
 * `cold`, see DESIGN), or from all where every one does. */
static double fit_part(const struct hf__set_cost *c, double W)
{
    double w[HF__DEVSET_WINDOW], t[HF__DEVSET_WINDOW];
    int n = 0;
    for (int i = 0; i < c->n; i++)
        if (!c->cold[i])
            w[n] = c->w[i], t[n++] = c->t[i];
    return n ? fit_series(w, t, n, W) : fit_series(c->w, c->t, c->n, W);
}

/* The slot of a window of the last HF__DEVSET_WINDOW values (*at: the next
 * slot, *n: the values it holds) that the next value takes. */
static int window_slot(int *at, int *n)
{
    int k = *at;
    *at = (*at + 1) % HF__DEVSET_WINDOW;
    *n += *n < HF__DEVSET_WINDOW;
    return k;
}

static void add_point(struct hf__dev_cost *c, double w, double t, double round_w)
{
    int k = window_slot(&c->at, &c->n);
    c->w[k] = w;
    c->t[k] = t;
    c->round_w[k] = round_w;
}

/* Each alive device's model for pricing sets at the round's work W: what it
 * measured (its busy seconds against its work, fitted as above), else the
 * planner's lat, inv, else its standalone rate (see DESIGN). A GPU measured
 * only in rounds of a work below W / HF__DEVSET_NEAR is priced as its least
 * time, all of it per-bundle cost. 0 when an alive device has no model. */
static int device_models(const struct hf__devset *s, const struct hf_round *r, const double *lat,
                         const double *inv, double *mlat, double *minv)
{
    for (int d = 0; d < s->ndev; d++) {
        const struct hf__dev_cost *c = &s->devc[d];
        mlat[d] = lat ? lat[d] : 0.0, minv[d] = inv ? inv[d] : 0.0;
        if (!(minv[d] > 0.0) && r->standalone_rate && r->standalone_rate[d] > 0.0)
            mlat[d] = 0.0, minv[d] = 1.0 / r->standalone_rate[d];
        if (c->n > 0) {
            fit_line(c->w, c->t, c->round_w, c->n, r->total_work, 1, &mlat[d], &minv[d]);
            mlat[d] = fmax(0.0, mlat[d]);
            double most = 0.0, least = INFINITY;
            for (int i = 0; i < c->n; i++)
                most = fmax(most, c->round_w[i]), least = fmin(least, c->t[i]);
            if (s->dev[d].is_gpu && HF__DEVSET_NEAR * most < r->total_work && minv[d] > 0.0) {
                mlat[d] = least;
                minv[d] = 1e-6 * least / r->total_work; /* > 0: a model, all but free */
            }
        }
        if (r->alive[d] && (!(minv[d] > 0.0) || !isfinite(minv[d]) || !isfinite(mlat[d])))
            return 0;
    }
    return 1;
}

static const struct hf__set_cost *find_set(const struct hf__devset *s, uint64_t mask)
{
    for (int i = 0; i < s->nsets; i++)
        if (s->set[i].mask == mask)
            return &s->set[i];
    return NULL;
}

/* The makespan set `mask` measured for a round of work W: fitted from its
 * rounds where one of them had a work within HF__DEVSET_NEAR of W, else NAN
 * (never measured at that size). */
static double measured(const struct hf__devset *s, uint64_t mask, double W)
{
    const struct hf__set_cost *c = find_set(s, mask);
    for (int i = 0; c && i < c->n; i++)
        if (c->w[i] <= HF__DEVSET_NEAR * W && W <= HF__DEVSET_NEAR * c->w[i])
            return fit_series(c->w, c->m, c->n, W);
    return NAN;
}

double hf__devset_part(const struct hf__devset *s, uint64_t mask, double work)
{
    const struct hf__set_cost *own = find_set(s, mask);
    if (own && own->n > 0)
        return fit_part(own, work);
    /* A set never run: from the smallest set around it that ran, each device
     * past the first paying an equal part of its cost, and at least what any
     * set inside it cost (see DESIGN). */
    double most = 0.0, from_above = INFINITY;
    int k = popcount(mask), above = 65;
    for (int i = 0; i < s->nsets; i++) {
        const struct hf__set_cost *c = &s->set[i];
        if (c->n == 0)
            continue;
        if ((c->mask & ~mask) == 0)
            most = fmax(most, fit_part(c, work));
        int n = popcount(c->mask);
        if ((mask & ~c->mask) == 0 && n > 1 && n <= above) {
            double v = fmax(0.0, fit_part(c, work)) * (double)(k - 1) / (double)(n - 1);
            from_above = n < above ? v : fmin(from_above, v);
            above = n;
        }
    }
    /* No set around it ran: the engine's prior for the full set (see DESIGN). */
    int n = popcount(s->full);
    if (!isfinite(from_above) && k >= 2 && n >= 2)
        from_above = s->prior_s * (double)(k - 1) / (double)(n - 1);
    return fmax(most, isfinite(from_above) ? from_above : 0.0);
}

/* The predicted round of set `mask` (see DESIGN); its split in *split. */
static double predict(const struct hf__devset *s, const struct hf_round *r, const double *lat,
                      const double *inv, uint64_t mask, double *split, double *part)
{
    int use[s->ndev];
    double x[s->ndev];
    for (int d = 0; d < s->ndev; d++)
        use[d] = (int)((mask >> d) & 1u);
    *split = hf_cost_split(lat, inv, use, s->ndev, r->total_work, x);
    *part = hf__devset_part(s, mask, r->total_work);
    double T = *split + *part;
    if (popcount(mask) == 1 && r->solo_rounds > 1.0)
        T /= r->solo_rounds;
    return T;
}

/* How far this run's predicted rounds missed what they measured: the median
 * share of the recent makespans, at least HF__DEVSET_GAIN. */
static double missed(const struct hf__devset *s)
{
    double v[HF__DEVSET_WINDOW];
    memcpy(v, s->miss, sizeof v);
    return s->nmiss ? fmax(HF__DEVSET_GAIN, hf__median(v, s->nmiss)) : HF__DEVSET_GAIN;
}

double hf__devset_price(const struct hf__devset *s, const struct hf_round *r, const double *lat,
                        const double *inv, uint64_t mask, double *split, double *part)
{
    double mlat[s->ndev], minv[s->ndev];
    *split = *part = NAN;
    if (!device_models(s, r, lat, inv, mlat, minv))
        return NAN;
    return predict(s, r, mlat, minv, mask, split, part);
}

/* A candidate set and its predicted round: T, its split and its part. */
struct pick {
    uint64_t set;
    double T, split, part;
};

/* Records the round's set's predictions (what its cost is learned past). */
static void predicted(struct hf__devset *s, const struct pick *p)
{
    s->split_s = p->split;
    s->pred_s = p->T;
    s->part_s = p->part;
}

/* Makes `mask` the round's set: the view the planner plans (see DESIGN). */
static const struct hf_round *use_set(struct hf__devset *s, const struct hf_round *r,
                                      uint64_t mask)
{
    s->chosen = mask;
    s->view = *r;
    for (int d = 0; d < s->ndev; d++)
        s->alive[d] = r->alive[d] && ((mask >> d) & 1u);
    s->view.alive = s->alive;
    return &s->view;
}

/* A round of one chunk: the single device predicted quickest (see DESIGN). */
static const struct hf_round *one_chunk(struct hf__devset *s, const struct hf_round *r,
                                        const double *lat, const double *inv)
{
    struct pick best = {0, INFINITY, 0, 0};
    double split, part;
    for (int d = 0; d < s->ndev; d++) {
        uint64_t one = (uint64_t)1 << d;
        double T = (s->full >> d) & 1u ? predict(s, r, lat, inv, one, &split, &part) : NAN;
        if (T < best.T)
            best = (struct pick){one, T, split, part};
    }
    if (!best.set)
        return r;
    s->chose = 1;
    s->full_s = predict(s, r, lat, inv, s->full, &split, &part);
    predicted(s, &best);
    return use_set(s, r, best.set);
}

const struct hf_round *hf__devset_begin(struct hf__devset *s, const struct hf_round *r,
                                        const double *lat, const double *inv)
{
    s->chose = s->probe = 0;
    s->full = 0;
    for (int d = 0; d < s->ndev && d < 64; d++)
        if (r->alive[d])
            s->full |= (uint64_t)1 << d;
    s->chosen = s->full;
    s->prior_s = r->part_prior_s > 0.0 ? r->part_prior_s : 0.0;
    /* The standalone pass ran the first load on every device alone: a
     * measurement of each at that load's work. */
    if (!s->seen_standalone && r->standalone_rate) {
        for (int d = 0; d < s->ndev; d++)
            if (r->standalone_rate[d] > 0.0 && r->total_work > 0.0)
                add_point(&s->devc[d], r->total_work, r->total_work / r->standalone_rate[d],
                          r->total_work);
    }
    s->seen_standalone = 1;
    double mlat[s->ndev], minv[s->ndev];
    if (s->on && popcount(s->full) >= 2 && r->nchunks == 1 && r->total_work > 0.0)
        return device_models(s, r, lat, inv, mlat, minv) ? one_chunk(s, r, mlat, minv) : r;
    /* A planner still measuring its devices (lat, inv NULL) is given a set
     * only where taking part is expected to cost (see DESIGN). */
    int measuring = !lat || !inv;
    if ((measuring && !(s->prior_s > 0.0)) || !s->on || popcount(s->full) < 2 || r->nchunks < 2 ||
        !(r->total_work > 0.0))
        return r;
    if (!device_models(s, r, lat, inv, mlat, minv))
        return r; /* a device without a model yet: the planner is still measuring */
    lat = mlat, inv = minv;
    double fsplit, fpart, W = r->total_work;
    s->full_s = predict(s, r, lat, inv, s->full, &fsplit, &fpart);
    /* The full set's measured round (NAN if none near W) and whether its
     * taking part is seen to cost (see DESIGN: exploration). */
    double full_m = measured(s, s->full, W);
    int costly = isfinite(full_m) && fpart >= HF__DEVSET_GAIN * full_m;
    struct pick full = {s->full, s->full_s, fsplit, fpart}, best = full, tryout = {0};
    struct pick held = {0, INFINITY, 0, 0}; /* T: what it measured */
    struct pick inc = full; /* stays unless beaten (see DESIGN): the last round's set, else full */
    double try_loss = s->spent_s * HF__DEVSET_PROBE_PAY;
    for (int d = 0; d < s->ndev; d++) {
        if (!((s->full >> d) & 1u))
            continue;
        uint64_t cand[2] = {(uint64_t)1 << d, s->full & ~((uint64_t)1 << d)};
        for (int k = 0; k < 2; k++) {
            double split, part, T = predict(s, r, lat, inv, cand[k], &split, &part);
            double m = measured(s, cand[k], W);
            if (!isfinite(T))
                continue;
            /* Both measured at this size: compared by what they measured, on
             * the full set's predicted scale. */
            double price = isfinite(m) && isfinite(full_m) ? m * s->full_s / full_m : T;
            if (price < best.T)
                best = (struct pick){cand[k], price, split, part};
            if (cand[k] == s->last)
                inc = (struct pick){cand[k], price, split, part};
            if (!isfinite(full_m) && m < held.T)
                held = (struct pick){cand[k], m, split, part};
            if (costly && !isfinite(m) && T - full_m < try_loss) {
                try_loss = T - full_m;
                tryout = (struct pick){cand[k], T, split, part};
            }
        }
    }
    s->chose = 1;
    s->explore = 0;
    /* The full set never ran a round of this size and a subset did: the
     * subset is kept unless the full set is predicted faster by more than
     * the predictions have missed by (see DESIGN). */
    if (held.set && best.set == s->full && !(s->full_s < (1.0 - missed(s)) * held.T))
        best = held;
    /* Else the incumbent stays unless another set is predicted faster by
     * more than HF__DEVSET_GAIN. */
    else if (best.set != inc.set && !(best.T < (1.0 - HF__DEVSET_GAIN) * inc.T))
        best = inc;
    int keep_full = best.set == s->full;
    if (tryout.set && keep_full) {
        /* Nothing measured beats the full set: try the unmeasured set whose
         * predicted loss the rounds so far can pay (see DESIGN). */
        s->explore = 1;
        best = tryout;
    } else if (keep_full) {
        s->last = s->full;
        s->since_probe = 0;
        predicted(s, &full);
        return r;
    }
    /* Re-measure the left-out devices once the rounds on the subset paid for it. */
    s->gap_s = s->full_s - best.T;
    if (!s->explore)
        s->since_probe++;
    if (!s->explore && s->since_probe >= HF__DEVSET_REPROBE &&
        (double)s->since_probe * best.T * HF__DEVSET_PROBE_PAY >= s->gap_s) {
        s->since_probe = 0;
        s->probe = 1;
        predicted(s, &full);
        return r;
    }
    if (!s->explore)
        s->last = best.set;
    predicted(s, &best);
    return use_set(s, r, best.set);
}

void hf__devset_end(struct hf__devset *s, const struct hf_round_report *rep)
{
    double W = 0.0;
    for (int d = 0; d < s->ndev; d++)
        W += rep->work[d];
    /* A round in which a device ran first carries one-off costs (see DESIGN). */
    uint64_t ran = 0;
    for (int d = 0; d < s->ndev; d++) {
        if (rep->work[d] > 0.0 && d < 64)
            ran |= (uint64_t)1 << d;
        if (rep->work[d] > 0.0 && rep->busy_s[d] > 0.0)
            add_point(&s->devc[d], rep->work[d], rep->busy_s[d], W);
    }
    int first = (ran & ~s->warmed) != 0;
    s->warmed |= ran;
    if (!s->chose || !isfinite(s->split_s))
        return;
    if (rep->makespan_s > 0.0 && isfinite(s->pred_s))
        s->miss[window_slot(&s->miss_at, &s->nmiss)] =
            fabs(rep->makespan_s - s->pred_s) / rep->makespan_s;
    /* What the chosen set cost, whatever the planner then gave each of its
     * devices: its own choices inside the set are part of that set's price. */
    struct hf__set_cost *c = NULL;
    for (int i = 0; i < s->nsets && !c; i++)
        if (s->set[i].mask == s->chosen)
            c = &s->set[i];
    if (!c) {
        int i = s->nsets < HF__DEVSET_SETS ? s->nsets++ : (s->evict++ % HF__DEVSET_SETS);
        c = &s->set[i];
        memset(c, 0, sizeof *c);
        c->mask = s->chosen;
    }
    int k = window_slot(&c->at, &c->n);
    c->w[k] = W;
    c->t[k] = rep->outside_s;
    c->m[k] = rep->makespan_s;
    c->cold[k] = (unsigned char)first;
    s->spent_s += rep->makespan_s;
}

int hf__devset_report(const struct hf__devset *s, struct hf_set_choice *out)
{
    if (!s->chose)
        return 0;
    for (int d = 0; d < s->ndev; d++)
        out->use[d] = d < 64 && ((s->chosen >> d) & 1u);
    out->pred_s = s->pred_s;
    out->full_s = s->full_s;
    out->part_s = s->part_s;
    out->probe = s->probe;
    return 1;
}
