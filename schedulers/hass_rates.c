/* hass_rates.c - how HASS plans a load whose chunk costs the engine learns.
 *
 * DESIGN
 * ------
 * On an irregular load that repeats, the engine re-estimates each chunk's work
 * from the bundles' times (hf_round.cost_moved): the unit the models were
 * fitted in moves every round, and a region whose estimate is off is priced
 * wrong by every model alike. From round 2 such a load is planned by the rates
 * the devices showed (Goodarzi's adaptation): a device's seconds per unit of
 * work are its busy time less its model's latency per bundle over the learned
 * work it ran, so a region whose estimate is off, run at an equally wrong
 * rate, is split right. A CPU team's single chunks tell their own seconds: it
 * is priced on the run the new plan gives it (chunks it ran at their seconds,
 * others at their estimate times the nearest run chunk's seconds per unit),
 * the split made again until that settles. The plan in force stays unless the
 * new one gains more than `stable_tol`, twice the rates' noise and a moving
 * GPU's spread, and pays its new sizes back within HASS_AMORTISE rounds.
 * Buffers are cut by learned cost. GPUs alone on inexact work run one region
 * each, speed and region at once: their next round is planned at its start in
 * the estimates just folded, for a gain beyond what the plans missed by.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hass.h"

/* Keeps the per-chunk seconds while the load repeats, else resets them. */
static void chunk_seconds_begin(struct hass *h, const struct hf_round *r)
{
    if (r->repeats && h->chunk_n == r->nchunks)
        return;
    size_t n = r->nchunks ? r->nchunks : 1;
    double *s = realloc(h->chunk_s, n * sizeof *s);
    if (s)
        h->chunk_s = s;
    int *dv = realloc(h->chunk_dev, n * sizeof *dv);
    if (dv)
        h->chunk_dev = dv;
    int *rb = realloc(h->ran_by, n * sizeof *rb);
    if (rb)
        h->ran_by = rb;
    h->chunk_n = s && dv && rb ? r->nchunks : 0;
    for (size_t i = 0; i < h->chunk_n; i++)
        h->ran_by[i] = h->chunk_dev[i] = -1;
}

/* Plans GPUs alone's round at its start in the new unit (see DESIGN). */
static void plan_in_new_unit(struct hass *h, const struct hf_round *r)
{
    size_t n = r->nchunks;
    if (h->chunk_n != n || h->plan_chunks != n)
        return;
    double work[h->ndev];
    memset(work, 0, sizeof work);
    for (size_t i = 0; i < n; i++)
        if (h->ran_by[i] >= 0)
            work[h->ran_by[i]] += r->chunks[i].work;
    memcpy(h->plan_n, h->plan_ran, (size_t)h->ndev * sizeof *h->plan_n);
    /* The bundles of the round that ran (hass_round_begin zeroes them next). */
    memcpy(h->bundles, h->bundles_last, (size_t)h->ndev * sizeof *h->bundles);
    hf__hass_refresh_rates(h);
    hf__hass_plan_next(h, work, h->busy_last, n, 1);
}

/* A round begins: chunk seconds, the models' unit, the learned load. */
void hf__hass_chunks_begin(struct hass *h, const struct hf_round *r)
{
    chunk_seconds_begin(h, r);
    if (r->cost_moved > 0.02)
        for (int d = 0; d < h->ndev; d++)
            hf_cost_new_unit(&h->model[d]);
    h->learned = r->repeats && (h->learned || r->cost_moved > 0.0);
    if (hass_gpus_alone(h) && h->learned && (h->plan_due || r->cost_moved > 0.0) && r->round >= 2)
        plan_in_new_unit(h, r);
}

/* CPU d's seconds for chunk i when it ran it last time, else -1. */
static double own_seconds(const struct hass *h, int d, size_t i)
{
    return i < h->chunk_n && h->chunk_dev[i] == d ? h->chunk_s[i] : -1.0;
}

/* CPU d's seconds per unit on the run `counts` gives it (see DESIGN). */
static double run_inv(const struct hass *h, int d, const size_t *counts, double inv)
{
    int nd = h->ndev;
    size_t cut[nd], n = h->r->nchunks;
    struct hf__buf b[nd];
    const struct hf_chunk *c = h->r->chunks;
    memcpy(cut, counts, sizeof cut);
    hf__cost_cut(h->r, 0, h->dev, nd, cut);
    hf__layout(b, cut, h->dev, nd, 0);
    double work = 0.0, sec = 0.0;
    for (size_t i = b[d].lo; i < b[d].hi && i < n; i++) {
        double s = own_seconds(h, d, i), per = inv;
        for (size_t k = 1; s < 0.0 && k < n; k++) {
            double l = i >= k ? own_seconds(h, d, i - k) : -1.0;
            double r = i + k < n ? own_seconds(h, d, i + k) : -1.0;
            size_t j = l >= 0.0 ? i - k : i + k;
            if (l >= 0.0 || r >= 0.0) {
                per = c[j].work > 0.0 ? (l >= 0.0 ? l : r) / c[j].work : inv;
                break;
            }
            if (i < k && i + k >= n)
                break;
        }
        work += c[i].work;
        sec += s >= 0.0 ? s : c[i].work * per;
    }
    return work > 0.0 && sec > 0.0 ? sec / work : inv;
}

/* The plan by the rates of the round that ran (see DESIGN); 0: none. */
int hf__hass_plan_by_rates(struct hass *h, const double *work, const double *busy, size_t n)
{
    int nd = h->ndev, use[nd], confound = hass_regions_confound(h);
    double lat[nd], inv[nd], ran[nd], x[nd], w = hf__mean_chunk_work(h->r);
    for (int d = 0; d < nd; d++) {
        hf__hass_split_model(h, d, w, &lat[d], &inv[d]);
        use[d] = h->r->alive[d] && h->model[d].fitted;
        double net = busy[d] - (double)h->bundles[d] * lat[d];
        if (use[d] && work[d] > 0.0 && busy[d] > 0.0)
            inv[d] = (net > 0.5 * busy[d] ? net : busy[d]) / work[d];
        ran[d] = inv[d];
    }
    if (!(w > 0.0))
        return 0;
    size_t counts[nd];
    for (int it = 0;; it++) {
        if (!isfinite(hf_cost_split(lat, inv, use, nd, (double)n * w, x)) ||
            !hf__whole_counts(lat, inv, use, nd, x, n, w, counts))
            return 0;
        int moved = 0;
        for (int d = 0; it < 16 && d < nd; d++) {
            if (h->dev[d].is_gpu || !use[d] || counts[d] == 0)
                continue;
            double v = 0.5 * (inv[d] + run_inv(h, d, counts, ran[d]));
            moved |= fabs(v / inv[d] - 1.0) > 1e-3;
            inv[d] = v;
        }
        if (!moved)
            break;
    }
    int keep = h->have_ratio && h->plan_chunks == n && h->by_rates;
    double old_ms = 0.0, new_ms = 0.0, warm = 0.0;
    for (int d = 0; d < nd; d++) {
        double rate = busy[d] > 0.0 ? work[d] / busy[d] : 0.0;
        if (keep && rate > 0.0 && h->last_rate[d] > 0.0 && h->plan_n[d] == h->last_plan[d])
            h->rate_noise = fmax(0.5 * h->rate_noise, fabs(rate / h->last_rate[d] - 1.0));
        h->last_rate[d] = rate;
        h->last_plan[d] = h->plan_n[d];
        if (keep && h->plan_n[d] > 0 && !use[d])
            keep = 0;
        double old_inv = !h->dev[d].is_gpu && h->plan_n[d] > 0 && h->plan_chunks == n
                             ? run_inv(h, d, h->plan_n, ran[d])
                             : inv[d];
        if (use[d] && h->plan_n[d] > 0)
            old_ms = fmax(old_ms, lat[d] + (double)h->plan_n[d] * w * old_inv);
        if (use[d] && counts[d] > 0)
            new_ms = fmax(new_ms, lat[d] + (double)counts[d] * w * inv[d]);
        if (counts[d] != h->plan_n[d] && counts[d] > 0)
            warm = fmax(warm, hass_new_size_cost(h, d));
    }
    double gain = old_ms - new_ms, noise = fmax(h->stable_tol, 2.0 * h->rate_noise);
    if (confound && keep && h->plan_pred > 0.0) {
        double took = 0.0;
        for (int d = 0; d < nd; d++)
            took = fmax(took, busy[d]);
        h->pred_noise = fmax(0.5 * h->pred_noise, fabs(took / h->plan_pred - 1.0));
        noise = fmax(noise, h->pred_noise);
    }
    for (int d = 0; d < nd; d++)
        if (use[d] && h->dev[d].is_gpu && counts[d] != h->plan_n[d] && !confound)
            noise = fmax(noise, 2.0 * h->model[d].spread);
    h->plan_pred = old_ms;
    if (!keep || (gain > noise * old_ms && gain * HASS_AMORTISE > warm)) {
        memcpy(h->plan_n, counts, sizeof counts);
        h->plan_chunks = n;
        h->plan_reserve = 0.0;
        h->plan_pred = new_ms;
    }
    h->by_rates = 1;
    return 1;
}
