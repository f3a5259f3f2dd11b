/* hass_adapt.c - what HASS learns from each finished bundle and each round.
 *
 * DESIGN
 * ------
 * Each bundle feeds its device's cost model (core/cost_model.c: a robust fit
 * over a window, where one bundle far slower than predicted is a surprise not
 * yet believed and two in a row are a change), less its wait for a shared
 * link. A bundle of a size the device never ran may cost a one-off warm-up (a
 * new kernel shape), which a plan that moves it to new sizes pays: it is read
 * as a new size's excess over a model whose latency is known, or as a size's
 * first bundle against its first repeat, never where the excess is not the
 * device's (a moving unit of work, regions of unknown cost). A round's end
 * plans the next and keeps the plan in force unless the fresh one finishes
 * sooner by the models by more than `stable_tol` and than the error of the
 * models it moves (each one's allowance for spread over the square root of its
 * bundles), and pays its new sizes' warm-ups back within HASS_AMORTISE rounds;
 * round 1, planned from small profile spans, is judged without that error. A
 * surprise is hedged before it is believed: a GPU's piece far slower than its
 * model releases the rest of its buffer to the others, and the next round lays
 * half a surprised GPU's share at a CPU's tail for any free GPU to steal,
 * where the excess is HASS_HEDGE_PAYS times what the extra bundles cost and
 * others can take it: a real slowdown then costs one slow round, not two.
 */
#include <math.h>
#include <string.h>

#include "hass.h"

/* Averages in a first bundle's excess over `base` as d's warm-up. */
static void warm_learn(struct hass *h, int d, double seconds, double base)
{
    double excess = seconds - base;
    if (!(excess > hass_tolerated(h, d) * base))
        excess = 0.0;
    h->warm[d] = h->nwarm[d]++ ? 0.5 * h->warm[d] + 0.5 * excess : excess;
}

/* Marks a size d ran and, unless `mark_only`, learns its warm-up. */
static void learn_warm_cost(struct hass *h, int d, size_t count, double work, double bytes,
                            double seconds, int mark_only)
{
    const struct hf_cost_model *m = &h->model[d];
    long k = hass_size_find(h, d, count);
    int seen = k < 0 || h->sizes[k] == count + 1;
    if (k >= 0)
        h->sizes[k] = count + 1;
    if (k < 0 || mark_only)
        return;
    if (!seen) {
        h->first_t[k] = h->dev[d].is_gpu ? seconds : 0.0;
        h->first_w[k] = work;
        if (h->learned || (h->split && hass_regions_confound(h)))
            return;
        double base = hf_cost_time(m, work, bytes);
        if (m->lat_known)
            warm_learn(h, d, seconds, base);
        else if (h->dev[d].is_gpu && m->fitted && !h->nwarm[d] &&
                 seconds - base > hass_tolerated(h, d) * base)
            h->warm[d] = fmax(h->warm[d], seconds - base); /* a GPU's first guess */
        return;
    }
    if (h->first_t[k] > 0.0 && fabs(work / h->first_w[k] - 1.0) < 0.1) {
        /* A repeat slower than its first stalled: it is no base. */
        double base = seconds * h->first_w[k] / work;
        if (base > (1.0 + hass_tolerated(h, d)) * h->first_t[k])
            return;
        warm_learn(h, d, h->first_t[k], base);
    }
    h->first_t[k] = 0.0;
}

/* What device d's finished span teaches (see DESIGN). */
void hf__hass_learn(struct hass *h, int d, const struct hf_span *span, double seconds)
{
    struct hf__buf ran = {span->first, span->first + span->count};
    double work = hf__buf_work(h->r, &ran);
    double bytes = h->dev[d].is_gpu ? hf__buf_bytes(h->r, &ran) : 0.0;
    double own = hf__hass_link_own(h, d, bytes, seconds);
    int first = h->dev[d].is_gpu && h->fed[d]++ == 0;
    int fit = !first && hf__hass_link_fit(h, d);
    int stalled = hf__hass_profile_stall(h, d, span, work, seconds, own, fit);
    if (stalled || first) { /* run, not fitted: its size is no longer new */
        learn_warm_cost(h, d, span->count, work, bytes, own, 1);
        hf_cost_seen(&h->model[d], work);
        if (stalled)
            return;
    } else if (fit) {
        /* Behind a shared link a bundle's time holds what the wait's estimate
         * missed: no warm-up is read from it. */
        learn_warm_cost(h, d, span->count, work, bytes, own, h->link_of[d] >= 0);
        hf_cost_add(&h->model[d], work, bytes, own);
    }
    const struct hf_cost_model *m = &h->model[d];
    if (fit && h->split && h->piece[d] > 0 && !span->stolen && h->buf[d].lo < h->buf[d].hi &&
        hass_slow_surprise(m) && !m->pfresh && !hass_regions_confound(h))
        h->released[d] = work / own;
    if (!h->split)
        hf__hass_profile_step(h, d, span, work, seconds, own, fit, first);
}

/* Whether the plan in force is kept against `counts`, a fresh plan (see DESIGN). */
static int keep_plan(const struct hass *h, const size_t *counts, size_t n)
{
    if (!h->have_ratio || h->plan_chunks != n)
        return 0;
    double w = hf__mean_chunk_work(h->r), old_ms = 0.0, new_ms = 0.0, warm = 0.0;
    double old_m = 0.0, new_m = 0.0; /* without the allowances for spread */
    double noise = h->stable_tol;
    int linked = 0;
    for (int d = 0; d < h->ndev; d++) {
        if (h->plan_n[d] > 0 && !h->r->alive[d])
            return 0;
        old_ms = fmax(old_ms, hf__hass_finish(h, d, h->plan_n, w, 1));
        new_ms = fmax(new_ms, hf__hass_finish(h, d, counts, w, 1));
        old_m = fmax(old_m, hf__hass_finish(h, d, h->plan_n, w, 0));
        new_m = fmax(new_m, hf__hass_finish(h, d, counts, w, 0));
        linked |= h->link_of[d] >= 0 && (h->plan_n[d] > 0 || counts[d] > 0);
        if (counts[d] != h->plan_n[d] && counts[d] > 0)
            warm = fmax(warm, hass_new_size_cost(h, d));
    }
    for (int d = 0; d < h->ndev; d++) {
        size_t c = counts[d] > h->plan_n[d] ? counts[d] : h->plan_n[d];
        if (counts[d] == 0 && hf__hass_surprise_late(h, d, h->plan_n[d], w, new_m))
            return 0; /* a CPU the fresh plan left out for a slow surprise */
        if (counts[d] != h->plan_n[d] && old_m > 0.0)
            noise = fmax(noise, hf__hass_allowance(h, d, c, w) / old_m /
                                    sqrt(fmax(1.0, (double)h->model[d].n)));
    }
    double gain = old_m - new_m;
    /* Behind a shared link a model is fed its time less an estimated wait:
     * round 1 is judged with the noise test there too. */
    if (h->r->round == 1 && !linked)
        return !(gain > h->stable_tol * old_m && gain * HASS_AMORTISE > warm);
    return !(new_ms < old_ms && gain > noise * old_m && gain * HASS_AMORTISE > warm);
}

/* Plans a round of n chunks; 0 when no device is measured. */
int hf__hass_plan_next(struct hass *h, const double *work, const double *busy, size_t n,
                       int by_rates)
{
    size_t counts[h->ndev];
    if (!(by_rates && hf__hass_plan_by_rates(h, work, busy, n))) {
        h->by_rates = 0;
        if (!hf__hass_plan_counts(h, n, counts))
            return 0;
        if (!keep_plan(h, counts, n)) {
            memcpy(h->plan_n, counts, sizeof counts);
            h->plan_chunks = n;
            h->plan_reserve = hf__hass_reserve_for(h, counts);
        } else {
            h->plan_reserve = fmin(h->plan_reserve, hf__hass_reserve_for(h, h->plan_n));
        }
    }
    hf__hass_add_probes(h, h->plan_n);
    for (int d = 0; d < h->ndev; d++)
        h->ratio[d] = (double)h->plan_n[d] / (double)n;
    return 1;
}

/* Hedges each GPU whose last bundle was a slow surprise (see DESIGN). */
void hf__hass_hedge_surprises(struct hass *h)
{
    for (int d = 0; d < h->ndev; d++) {
        const struct hf_cost_model *m = &h->model[d];
        h->hedge[d] = 0.0;
        if (!h->dev[d].is_gpu || !h->steal || h->plan_n[d] < 2 || !hass_slow_surprise(m) ||
            m->pfresh || h->by_rates)
            continue;
        double excess = m->pt[0] - hf_cost_time(m, m->pw[0], m->pb[0]);
        /* The hedged half comes back in about 1 + log2(its chunks) steals. */
        double more = 1.0 + log2(fmax(1.0, 0.5 * (double)h->plan_n[d]));
        double cost =
            hf__hass_latency(h, d) + hass_new_size_cost(h, d) + more * hf_cost_stall_risk(m);
        if (excess > HASS_HEDGE_PAYS * cost && hass_has_helpers(h, d))
            h->hedge[d] = 0.5;
    }
}
