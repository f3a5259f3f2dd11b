/* hass_profile.c - HASS's round 0: measuring every device before the first
 * split.
 *
 * DESIGN
 * ------
 * A model T(w) = lat + w * inv needs bundles of two sizes or more to tell a
 * bundle's fixed cost from its cost per unit of work. Until every alive device
 * is measured, the round's chunks form one shared pool taken from the front: a
 * CPU team takes `profile_chunks` single chunks; a GPU a span of
 * `profile_chunks` chunks, doubled while its rate rises by `growth_stop` or
 * more, up to an eighth of the load. Fixed costs that are not the latency stay
 * out of the fit: a GPU's first bundle (its first launch) only marks its size
 * warmed; a span slower per unit of work than the one half its size cannot be
 * an affine device's: it stalled (its excess counts toward the GPU's stall
 * risk, also when the split came before it ended) and runs again while the
 * pool lasts; and since each span is the first of its size, where doubling
 * the first fitted span barely moved its time that size runs once more, so
 * that the repeat tells the latency from a per-size warm-up (the pool keeps
 * back the chunks a GPU needs for it). Then the rest of the pool is split. At
 * the round's end the engine's standalone pass, one warm bundle each device
 * ran on the whole load, completes a model with too few sizes, and a GPU cut
 * off before a rerun takes the model of the GPU most like it (keeping its own
 * stalls). With `warm_start` the saved models skip all this.
 */
#include <math.h>

#include "hass.h"

/* Resets the profiling state for a round 0. */
void hf__hass_profile_begin(struct hass *h)
{
    for (int d = 0; d < h->ndev; d++) {
        h->pspan[d] = (size_t)h->profile_chunks;
        h->prate[d] = 0.0;
        h->pslow[d] = 0;
        h->profiled[d] = 0;
        h->pdone[d] = 0;
        h->prep[d] = REPEAT_NONE_FITTED;
    }
}

/* Whether GPU d's next profile span is its repeat. */
static int repeat_due(const struct hass *h, int d)
{
    return h->dev[d].is_gpu && !h->profiled[d] &&
           (h->prep[d] == REPEAT_DUE || h->prep[d] == REPEAT_AGAIN);
}

/* The pool's chunks d leaves to other GPUs for their repeats. */
static size_t pool_held(const struct hass *h, int d)
{
    size_t held = 0;
    if (repeat_due(h, d))
        return 0;
    for (int g = 0; g < h->ndev; g++) {
        if (g == d || !h->dev[g].is_gpu || !h->r->alive[g] || h->profiled[g])
            continue;
        if (h->fed[g] == 0 && h->inflight[g])
            held += h->pspan[g];
        else if (h->prep[g] == REPEAT_FIRST)
            held += h->psize[g];
    }
    return held;
}

/* Device d's next span from the shared pool. */
int hf__hass_pool_take(struct hass *h, int d, struct hf_span *out)
{
    const struct hf_round *r = h->r;
    size_t held = pool_held(h, d);
    if (h->dev[d].is_gpu && h->prep[d] == REPEAT_FIRST && !h->profiled[d]) {
        int short_of = h->pool_next + held + h->pspan[d] > r->nchunks;
        h->prep[d] = short_of ? REPEAT_DUE : REPEAT_NONE_FITTED;
        held = pool_held(h, d);
    }
    if (h->pool_next + held >= r->nchunks)
        return 0;
    size_t left = r->nchunks - h->pool_next - held, k = h->dev[d].is_gpu ? h->pspan[d] : 1;
    if (repeat_due(h, d)) { /* a repeat only on chunks of the same work (to 1e-9) */
        size_t again = h->psize[d] < left ? h->psize[d] : left;
        struct hf__buf next = {h->pool_next, h->pool_next + again};
        if (fabs(hf__buf_work(r, &next) - h->pwork[d]) <= 1e-9 * h->pwork[d])
            k = again;
        else
            h->prep[d] = REPEAT_DONE;
    }
    struct hf__buf pool = {h->pool_next, h->pool_next + left};
    hf__take_front(&pool, 0, k, out);
    h->pool_next = pool.lo;
    return 1;
}

/* Whether GPU d's span is slower per unit than its best: it stalled for what
 * its own seconds (`own`, the shared link's wait taken out) exceed its best
 * rate's, which counts toward its stall risk, and runs again. */
int hf__hass_profile_stall(struct hass *h, int d, const struct hf_span *span, double work,
                           double seconds, double own, int fit)
{
    int slow = fit && h->dev[d].is_gpu && !h->profiled[d] && !h->pslow[d] &&
               span->count >= h->pspan[d] && h->prate[d] > 0.0 &&
               work / seconds < (1.0 - h->growth_stop) * h->prate[d];
    if (slow) {
        h->pslow[d] = 1;
        hf_cost_stall(&h->model[d], own - work / h->prate[d]);
    }
    return slow;
}

/* Profiling's step after device d's span (`first`: a GPU's first bundle, whose
 * repeat may tell the latency), then the split once all are profiled. */
void hf__hass_profile_step(struct hass *h, int d, const struct hf_span *span, double work,
                           double seconds, double own, int fit, int first)
{
    double rate = work / seconds;
    if (fit && repeat_due(h, d)) {
        h->prep[d] = h->prep[d] == REPEAT_DUE && hass_slow_surprise(&h->model[d]) ? REPEAT_AGAIN
                                                                                  : REPEAT_DONE;
    } else if (h->dev[d].is_gpu && !h->profiled[d]) {
        if (first || (fit && h->prep[d] == REPEAT_NONE_FITTED)) {
            h->prep[d] = first ? REPEAT_FIRST : REPEAT_ONE_FITTED;
            h->psize[d] = span->count;
            h->pwork[d] = work;
            h->ptime[d] = own;
        } else if (fit && h->prep[d] == REPEAT_ONE_FITTED) {
            h->prep[d] = own < 1.5 * h->ptime[d] ? REPEAT_DUE : REPEAT_DONE;
        }
        size_t cap = h->r->nchunks / 8 > 0 ? h->r->nchunks / 8 : 1;
        if ((h->prate[d] > 0.0 && rate < h->prate[d] * (1.0 + h->growth_stop)) ||
            h->pspan[d] * 2 > cap)
            h->profiled[d] = 1;
        else
            h->pspan[d] *= 2;
        h->prate[d] = fmax(h->prate[d], rate);
    } else if (!h->dev[d].is_gpu && ++h->pdone[d] >= h->profile_chunks) {
        h->profiled[d] = 1;
    }
    int all = 1;
    for (int k = 0; k < h->ndev; k++)
        all &= !h->r->alive[k] || h->profiled[k];
    if (all && h->pool_next < h->r->nchunks) {
        hf__hass_split_rest(h, h->pool_next);
        h->have_ratio = h->split;
    }
}

/* Whether the model's window holds bundles of one size only (within 2x). */
static int one_size(const struct hf_cost_model *m)
{
    double lo = INFINITY, hi = 0.0;
    for (int i = 0; i < m->n; i++) {
        lo = fmin(lo, m->w[i]);
        hi = fmax(hi, m->w[i]);
    }
    return hi < 2.0 * lo;
}

/* Adds the standalone pass to the models that need it (see DESIGN). */
static void seed_standalone(struct hass *h, const struct hf_round *r)
{
    if (!r->standalone_rate || r->nchunks == 0)
        return;
    double bytes = hf__buf_bytes(r, &(struct hf__buf){0, r->nchunks});
    for (int d = 0; d < h->ndev; d++) {
        double rate = r->standalone_rate[d];
        int cut = h->dev[d].is_gpu && !h->profiled[d] && one_size(&h->model[d]);
        double w = h->dev[d].is_gpu ? r->total_work : r->total_work / (double)r->nchunks;
        if (!(rate > 0.0) || (h->model[d].n > 0 && !cut))
            continue;
        hf_cost_seen(&h->model[d], w);
        hf_cost_add(&h->model[d], w, h->dev[d].is_gpu ? bytes : 0.0, w / rate);
    }
}

/* Whether GPU d's profile met a stall it was to run again. */
static int profile_stalled(const struct hass *h, int d)
{
    return h->pslow[d] || h->prep[d] == REPEAT_AGAIN;
}

/* Gives GPU d, cut off before a rerun, its likest GPU's model. */
static void restart_cut_profile(struct hass *h, const struct hf_round *r, int d)
{
    double own = r->standalone_rate ? r->standalone_rate[d] : 0.0, best = 0.1;
    int like = -1;
    for (int k = 0; k < h->ndev && own > 0.0; k++) {
        double off = fabs(r->standalone_rate[k] / own - 1.0);
        if (k != d && h->dev[k].is_gpu && r->alive[k] && !profile_stalled(h, k) &&
            h->model[k].fitted && off <= best) {
            best = off;
            like = k;
        }
    }
    struct hf_cost_model mine = h->model[d];
    if (like >= 0) {
        h->model[d] = h->model[like];
        h->warm[d] = h->warm[like];
    } else {
        hass_model_reset(h, d);
    }
    /* Its stalls are its own: they price its bundles from round 1. */
    h->model[d].judged = mine.judged;
    h->model[d].stalls = mine.stalls;
    h->model[d].stall_excess = mine.stall_excess;
}

/* Round 0's end: profiles the round cut off, then the standalone passes. */
void hf__hass_profile_end(struct hass *h, const struct hf_round *r)
{
    for (int d = 0; h->profiling && d < h->ndev; d++)
        if (h->dev[d].is_gpu && r->alive[d] && !h->profiled[d] && profile_stalled(h, d))
            restart_cut_profile(h, r, d);
    if (h->warm_start)
        seed_standalone(h, r);
}

/* Loads every device's model from the profile; 1 when all were there. */
int hf__hass_warm_models(struct hass *h)
{
    double v[h->ndev][3];
    for (int d = 0; d < h->ndev; d++) {
        int got = hf_profile_get(h->profile, h->dev[d].name, "hass.model", v[d], 3);
        if (got == 2)
            v[d][2] = 0.0;
        if (got >= 2 && v[d][1] > 0 && v[d][0] >= 0 && v[d][2] >= 0)
            continue;
        double rate = 0;
        if (hf_profile_get(h->profile, h->dev[d].name, "hass.rate", &rate, 1) < 1 || !(rate > 0))
            return 0;
        v[d][0] = v[d][2] = 0.0;
        v[d][1] = 1.0 / rate;
    }
    for (int d = 0; d < h->ndev; d++)
        hass_model_set(&h->model[d], v[d][0], v[d][1], v[d][2]);
    return 1;
}

/* Saves every fitted model (hass.model, hass.rate = 1/inv). */
void hf__hass_save_models(struct hass *h)
{
    for (int d = 0; d < h->ndev; d++) {
        const struct hf_cost_model *m = &h->model[d];
        if (!m->fitted || m->n == 0)
            continue;
        double v[3] = {m->lat, m->inv, m->inv_bw}, rate = 1.0 / m->inv;
        hf_profile_set(h->profile, h->dev[d].name, "hass.model", v, 3);
        hf_profile_set(h->profile, h->dev[d].name, "hass.rate", &rate, 1);
    }
}
