/* hass_plan.c - how HASS splits a round under the devices' cost models.
 *
 * DESIGN
 * ------
 * Device d finishes c chunks of mean work w at T_d(c) = lat_d + c * w * inv_d:
 * a GPU pays its latency once per bundle and its copies at the mean chunk's
 * bytes per work; a CPU team's latency folds into its cost per unit. The split
 * makes all finish together, sum_d max(0, T - lat_d) / inv_d = W
 * (hf_cost_split; with shared links, hass_link.c), then gives whole chunks,
 * floors first and each leftover to whoever finishes it first, each finish
 * padded by twice the device's spread times its largest bundle so that a noisy
 * device is not made the straggler. Devices are left out one at a time while
 * that finishes sooner (a CPU whose last chunk was a slow surprise where even
 * one chunk at that pace would end late), and one left out for `reprobe`
 * rounds gets a chunk back where it ends in time even run cold. GPUs alike by
 * the standalone pass take their peers' median model while their own agrees
 * with it within its error. Buffers are laid out GPUs first and cut so that
 * each costs its device its planned time by its own model; noisy GPUs leave a
 * reserve at the fastest CPU's tail where half the round's noise outweighs
 * what taking it back costs: two steals' latency a GPU, half a chunk (the
 * grain the ends are evened to), and the stall risk of the GPU most prone to
 * stalls (any free GPU steals from the reserve, and each steal is one more
 * bundle). The reserve comes with the plan, since a change of it moves every
 * GPU to new sizes, but a kept plan prices it again each round and never
 * raises it: a stall seen since makes it unpaid, and a stall-prone GPU leaves
 * the steals to the others, which then took its part of the reserve too. A GPU
 * whose share is long against its fixed costs (more latencies, two new sizes,
 * their stall risk: HASS_PIECE_COST), beside devices that could take over,
 * runs it as HASS_PIECES pieces, so that a slowdown met in one can hand the
 * rest to others; it keeps them while the latencies and stall risk alone fit
 * that share (the two new sizes are paid once).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hass.h"

/* Device d's own split model for chunks of work w (see DESIGN). */
static void own_split_model(const struct hass *h, int d, double w, double *lat, double *inv)
{
    const struct hf_cost_model *m = &h->model[d];
    *lat = h->dev[d].is_gpu ? m->lat : 0.0;
    *inv = !(w > 0.0)         ? m->inv
           : h->dev[d].is_gpu ? m->inv + m->inv_bw * h->mean_bytes / w
                              : m->inv + m->lat / w;
    if (h->r && hass_regions_confound(h) && h->r->standalone_rate &&
        h->r->standalone_rate[d] > 0.0) {
        *inv = 1.0 / h->r->standalone_rate[d];
        *lat = 0.0;
    }
}

/* The split's model of d: its peers' pooled one, else its own. */
void hf__hass_split_model(const struct hass *h, int d, double w, double *lat, double *inv)
{
    own_split_model(h, d, w, lat, inv);
    if (h->peer_inv[d] > 0.0) {
        *lat = h->peer_lat[d];
        *inv = h->peer_inv[d];
    }
}

/* Every device's split model (inv 0: not alive or not fitted). */
void hf__hass_set_models(const struct hass *h, double *lat, double *inv)
{
    double w = h->r ? hf__mean_chunk_work(h->r) : 0.0;
    for (int d = 0; d < h->ndev; d++) {
        lat[d] = inv[d] = 0.0;
        if (h->r && h->r->alive[d] && h->model[d].fitted)
            hf__hass_split_model(h, d, w, &lat[d], &inv[d]);
    }
}

/* Device d's latency as the split sees it: what one more bundle of it costs. */
double hf__hass_latency(const struct hass *h, int d)
{
    double lat, inv;
    hf__hass_split_model(h, d, h->r ? hf__mean_chunk_work(h->r) : 0.0, &lat, &inv);
    return lat;
}

#define PEER_GAP 0.15    /* GPUs whose standalone rates differ by less are peers */
#define REPEAT_PEERS 3.0 /* pooled_fits_repeats */

/* The median miss of a line on GPU d's repeats; -1 without repeats. */
static double repeats_miss(const struct hass *h, int d, double lat, double inv)
{
    const struct hf_cost_model *m = &h->model[d];
    double off[HF_COST_WINDOW];
    int k = 0;
    for (int i = 0; i < m->n; i++)
        if (!m->fresh[i] && m->t[i] > 0.0)
            off[k++] = fabs(m->t[i] / (lat + m->w[i] * inv) - 1.0);
    return k ? hf__median(off, k) : -1.0;
}

/* Whether the peers' line fits d's repeats as it fits other peers'. */
static int pooled_fits_repeats(const struct hass *h, int d, double lat, double inv, const int *peer,
                               int npeers)
{
    double mine = repeats_miss(h, d, lat, inv), miss[npeers > 0 ? npeers : 1];
    int k = 0;
    for (int i = 0; i < npeers && mine >= 0.0; i++) {
        double x = peer[i] != d ? repeats_miss(h, peer[i], lat, inv) : -1.0;
        if (x >= 0.0)
            miss[k++] = x;
    }
    return k >= 2 && mine <= REPEAT_PEERS * hf__median(miss, k);
}

/* Pools the models of GPUs alike by the standalone pass (see DESIGN). */
static void pool_peers(struct hass *h)
{
    const struct hf_round *r = h->r;
    int nd = h->ndev, ngpu = 0;
    double w = r ? hf__mean_chunk_work(r) : 0.0;
    memset(h->peer_inv, 0, (size_t)nd * sizeof *h->peer_inv);
    if (!r || !r->standalone_rate || !(w > 0.0) || !r->work_exact)
        return;
    for (int d = 0; d < nd; d++)
        ngpu += h->dev[d].is_gpu && r->alive[d] && h->model[d].fitted;
    double lat[nd], inv[nd], may[nd], peers_lat[nd], peers_inv[nd];
    int broken[nd], peer[nd];
    for (int d = 0; d < nd; d++) {
        own_split_model(h, d, w, &lat[d], &inv[d]);
        double sa = r->standalone_rate[d] > 0.0 ? r->total_work / r->standalone_rate[d] : 0.0;
        may[d] = hass_tolerated(h, d) / sqrt(fmax(1.0, (double)h->model[d].n));
        broken[d] = lat[d] + r->total_work * inv[d] < (1.0 - PEER_GAP - may[d]) * sa;
    }
    for (int d = 0; d < nd; d++) {
        double own = r->standalone_rate[d];
        if (!h->dev[d].is_gpu || !r->alive[d] || !h->model[d].fitted || !(own > 0.0))
            continue;
        int k = 0;
        for (int g = 0; g < nd; g++)
            if (h->dev[g].is_gpu && r->alive[g] && h->model[g].fitted && inv[g] > 0.0 &&
                !broken[g] && fabs(r->standalone_rate[g] / own - 1.0) <= PEER_GAP) {
                peer[k] = g;
                peers_lat[k] = lat[g];
                peers_inv[k++] = inv[g];
            }
        if (k < 2 - broken[d])
            continue;
        double pl = hf__median(peers_lat, k), pi = hf__median(peers_inv, k);
        double c = h->plan_n[d] > 0 ? (double)h->plan_n[d] : (double)r->nchunks / ngpu;
        double mine = lat[d] + c * w * inv[d], pooled = pl + c * w * pi;
        double off = pooled > 0.0 ? mine / pooled - 1.0 : INFINITY;
        if (fabs(off) <= may[d] || broken[d] || pooled_fits_repeats(h, d, pl, pi, peer, k)) {
            h->peer_lat[d] = pl;
            h->peer_inv[d] = pi;
        }
    }
}

/* Refits every model and sets rate[] from it. */
void hf__hass_refresh_rates(struct hass *h)
{
    double w = h->r ? hf__mean_chunk_work(h->r) : 0.0;
    for (int d = 0; d < h->ndev; d++)
        hf_cost_refit(&h->model[d]);
    pool_peers(h);
    for (int d = 0; d < h->ndev; d++) {
        double lat, inv;
        hf__hass_split_model(h, d, w, &lat, &inv);
        if (h->model[d].fitted && inv > 0.0) {
            h->rate[d] = 1.0 / inv;
            h->inv_bw[d] = h->dev[d].is_gpu ? h->model[d].inv_bw : 0.0;
        }
    }
    hf__hass_links_refresh(h);
}

/* When device d finishes c > 0 chunks of work w each, by its model alone. */
static double model_time(const struct hass *h, int d, size_t c, double w)
{
    double lat, inv;
    hf__hass_split_model(h, d, w, &lat, &inv);
    return lat + (double)c * w * inv;
}

/* The allowance for d's spread on c chunks: twice it, times its largest bundle. */
double hf__hass_allowance(const struct hass *h, int d, size_t c, double w)
{
    if (h->r && hass_regions_confound(h))
        return 0.0;
    return 2.0 * h->model[d].spread * model_time(h, d, h->dev[d].is_gpu ? c : 1, w);
}

/* Device d's finish for `counts` by its model and link wait, and with its
 * allowance where `pad` (the split's finish; without: the model's alone). */
double hf__hass_finish(const struct hass *h, int d, const size_t *counts, double w, int pad)
{
    size_t c = counts[d];
    if (c == 0)
        return 0.0;
    return model_time(h, d, c, w) + (pad ? hf__hass_allowance(h, d, c, w) : 0.0) +
           hf__hass_link_wait(h, d, counts);
}

/* Whole chunk counts over the devices in use[]; the planned makespan. */
static double counts_for(const struct hass *h, const int *use, size_t n, double w, size_t *counts)
{
    int nd = h->ndev;
    double *lat = calloc(3 * (size_t)nd + 1, sizeof *lat), *inv = lat + nd, *x = inv + nd;
    if (!lat)
        return INFINITY;
    for (int d = 0; d < nd; d++)
        hf__hass_split_model(h, d, w, &lat[d], &inv[d]);
    double rho = w > 0.0 ? h->mean_bytes / w : 0.0;
    double T = hf__hass_link_split(h, lat, inv, use, (double)n * w, rho, x);
    size_t given = 0;
    for (int d = 0; d < nd; d++) {
        counts[d] = isfinite(T) && w > 0.0 ? (size_t)fmin(floor(x[d] / w), (double)n) : 0;
        given += counts[d];
    }
    free(lat);
    while (given > n)
        for (int d = 0, worst = -1; d <= nd; d++) {
            if (d == nd) {
                counts[worst]--;
                given--;
            } else if (counts[d] && (worst < 0 || hf__hass_finish(h, d, counts, w, 1) >
                                                      hf__hass_finish(h, worst, counts, w, 1)))
                worst = d;
        }
    while (given < n) {
        int best = -1;
        for (int d = 0; d < nd; d++)
            if (use[d] && (best < 0 || hf__hass_link_finish_plus(h, d, counts, w) <
                                           hf__hass_link_finish_plus(h, best, counts, w)))
                best = d;
        if (best < 0)
            return INFINITY;
        counts[best]++;
        given++;
    }
    double ms = 0.0;
    for (int d = 0; d < nd; d++)
        ms = fmax(ms, hf__hass_finish(h, d, counts, w, 1));
    return ms;
}

/* Whether CPU d at its slow surprise's pace would end a chunk after ms. */
int hf__hass_surprise_late(const struct hass *h, int d, size_t count, double w, double ms)
{
    const struct hf_cost_model *m = &h->model[d];
    return !h->dev[d].is_gpu && count > 0 && hass_slow_surprise(m) && w * m->pt[0] / m->pw[0] > ms;
}

/* Plans counts for n chunks (see DESIGN); 0 when nobody is measured. */
int hf__hass_plan_counts(struct hass *h, size_t n, size_t *counts)
{
    int nd = h->ndev, use[nd], any = 0;
    double w = hf__mean_chunk_work(h->r);
    for (int d = 0; d < nd; d++) {
        use[d] = h->r->alive[d] && h->model[d].fitted;
        any |= use[d];
    }
    if (!any || n == 0)
        return 0;
    for (int d = 0; d < nd; d++)
        if (h->r->alive[d] && !h->model[d].fitted)
            for (int k = 0; k < nd; k++)
                if (use[k] && h->dev[k].is_gpu == h->dev[d].is_gpu &&
                    h->model[k].inv > h->model[d].inv)
                    hass_model_set(&h->model[d], h->model[k].lat, h->model[k].inv,
                                   h->model[k].inv_bw);
    hf__hass_link_guess(h);
    for (int d = 0; d < nd; d++)
        use[d] = h->r->alive[d] && h->model[d].fitted;
    size_t trial[nd];
    double best = counts_for(h, use, n, w, counts);
    for (int d = 0; d < nd; d++) {
        int others = 0;
        for (int k = 0; k < nd; k++)
            others |= k != d && use[k];
        if (others && use[d] && hf__hass_surprise_late(h, d, counts[d], w, best)) {
            use[d] = 0;
            best = counts_for(h, use, n, w, counts);
        }
    }
    for (;;) {
        int drop = -1;
        double drop_ms = best;
        for (int d = 0; d < nd; d++) {
            if (!use[d] || counts[d] == 0)
                continue;
            use[d] = 0;
            double ms = counts_for(h, use, n, w, trial);
            use[d] = 1;
            if (ms < drop_ms * (1.0 - 1e-3)) {
                drop = d;
                drop_ms = ms;
            }
        }
        if (drop < 0)
            break;
        use[drop] = 0;
        best = counts_for(h, use, n, w, counts);
    }
    return 1;
}

/* The device with most chunks that can spare one and end by ms, or -1. */
static int probe_donor(const struct hass *h, size_t *counts, double w, double ms)
{
    int most = -1;
    for (int k = 0; k < h->ndev; k++) {
        if (counts[k] < 2 || (most >= 0 && counts[k] <= counts[most]))
            continue;
        counts[k]--;
        double end = hf__hass_finish(h, k, counts, w, 1);
        if (h->dev[k].is_gpu)
            end += hass_size_cost(h, k, counts[k]);
        counts[k]++;
        most = end <= ms ? k : most;
    }
    return most;
}

/* Gives a chunk to each device left out `reprobe` rounds (see DESIGN). */
void hf__hass_add_probes(struct hass *h, size_t *counts)
{
    double w = hf__mean_chunk_work(h->r), ms = 0.0;
    for (int d = 0; d < h->ndev; d++)
        ms = fmax(ms, hf__hass_finish(h, d, counts, w, 1));
    for (int d = 0; h->reprobe > 0 && d < h->ndev; d++) {
        if (!h->r->alive[d] || counts[d] > 0 || h->left_out[d] < h->reprobe ||
            !h->model[d].fitted || HASS_COLD * hf__hass_link_finish_plus(h, d, counts, w) > ms)
            continue;
        int most = probe_donor(h, counts, w, ms);
        if (most < 0)
            return;
        counts[most]--;
        counts[d] = 1;
        h->left_out[d] = 0;
    }
}

/* The share of each GPU's count laid at the fastest CPU's tail (see DESIGN). */
double hf__hass_reserve_for(const struct hass *h, const size_t *counts)
{
    double spread = 0.0, lat = INFINITY, chunk = INFINITY, risk = 0.0, ms = 0.0;
    double w = hf__mean_chunk_work(h->r);
    int planned = 0;
    for (int d = 0; d < h->ndev; d++) {
        ms = fmax(ms, hf__hass_finish(h, d, counts, w, 1));
        planned += h->r->alive[d] && counts[d] > 0;
        if (h->dev[d].is_gpu && h->r->alive[d] && counts[d] > 0) {
            spread = fmax(spread, h->model[d].spread);
            lat = fmin(lat, hf__hass_latency(h, d));
            chunk = fmin(chunk, h->rate[d] > 0.0 ? w / h->rate[d] : INFINITY);
            risk = fmax(risk, hf_cost_stall_risk(&h->model[d]));
        }
    }
    int pays = planned > 1 && spread > 0.01 && 2.0 * lat + 0.5 * chunk + risk < 0.5 * spread * ms;
    return fmax(h->reserve, pays ? fmin(0.1, 2.0 * spread) : 0.0);
}

/* Lays counts out from `base`: reserve and hedges, then the cut by cost. */
void hf__hass_lay_out(struct hass *h, size_t *counts, size_t base)
{
    int cpu = -1;
    for (int d = 0; d < h->ndev; d++)
        if (!h->dev[d].is_gpu && h->r->alive[d] && (cpu < 0 || h->rate[d] > h->rate[cpu]))
            cpu = d;
    double reserve = h->plan_reserve;
    for (int d = 0; h->steal && cpu >= 0 && d < h->ndev; d++) {
        if (!h->dev[d].is_gpu || counts[d] < 2)
            continue;
        size_t k = (size_t)floor(fmax(reserve, h->hedge[d]) * (double)counts[d]);
        counts[d] -= k;
        counts[cpu] += k;
    }
    double coef[3 * h->ndev];
    for (int d = 0; d < h->ndev; d++) {
        const struct hf_cost_model *m = &h->model[d];
        coef[3 * d] = h->dev[d].is_gpu ? 0.0 : m->lat;
        coef[3 * d + 1] = m->inv;
        coef[3 * d + 2] = h->dev[d].is_gpu ? m->inv_bw : 0.0;
    }
    if (h->by_rates)
        hf__cost_cut(h->r, base, h->dev, h->ndev, counts);
    else
        hf__cost_cut_models(h->r, base, h->dev, h->ndev, counts, coef);
    hf__layout(h->buf, counts, h->dev, h->ndev, base);
    h->split = 1;
    h->pool_next = h->r->nchunks;
}

/* Cuts each GPU's buffer into pieces where that pays (see DESIGN). */
void hf__hass_plan_pieces(struct hass *h)
{
    double w = hf__mean_chunk_work(h->r);
    for (int d = 0; d < h->ndev; d++) {
        size_t c = h->buf[d].hi - h->buf[d].lo;
        int was_on = h->piece_plan[d] > 0 && h->piece_plan[d] == h->plan_n[d];
        h->piece[d] = 0;
        h->piece_plan[d] = 0;
        if (!h->dev[d].is_gpu || h->by_rates || h->link_of[d] >= 0 || c < HASS_PIECES ||
            !h->model[d].lat_known || h->nwarm[d] == 0 || !hass_has_helpers(h, d))
            continue;
        double more = (HASS_PIECES - 1) *
                      (hf__hass_latency(h, d) + hf_cost_stall_risk(&h->model[d]));
        double budget = HASS_PIECE_COST * model_time(h, d, c, w);
        if (more + (was_on ? 0.0 : 2.0 * hass_new_size_cost(h, d)) <= budget) {
            h->piece[d] = (c + HASS_PIECES - 1) / HASS_PIECES;
            h->piece_plan[d] = h->plan_n[d];
        }
    }
}

/* Splits chunks [base, nchunks) by a fresh plan. */
void hf__hass_split_rest(struct hass *h, size_t base)
{
    size_t counts[h->ndev];
    hf__hass_refresh_rates(h);
    if (!hf__hass_plan_counts(h, h->r->nchunks - base, counts))
        return;
    h->plan_reserve = hf__hass_reserve_for(h, counts);
    hf__hass_lay_out(h, counts, base);
    if (!h->profiling)
        hf__hass_plan_pieces(h);
}
