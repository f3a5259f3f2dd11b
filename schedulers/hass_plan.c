/* hass_plan.c - how HASS splits a round under the devices' cost models
 * (hass.c's design paragraph, "Split").
 *
 * DESIGN
 * ------
 * Every device's time for w work moving b bytes is lat + w * inv + b * inv_bw
 * (core/cost_model.c); a CPU runs one chunk per bundle, so its latency folds
 * into its cost per unit, and a GPU's bytes fold into its cost per unit at the
 * mean chunk's bytes per work. Plans are chunk counts of the mean chunk; the
 * buffers are then cut so that every device gets the chunks that cost it its
 * planned time, each device pricing a chunk by its own model (a GPU pays for
 * a cheap chunk's copies, a CPU for starting it: hf__cost_cut_models). The
 * split's model of a GPU is the median of its peers' (GPUs alike by their
 * standalone passes) while its own agrees with that within its error
 * (hf__hass_pool_peers): a few noisy bundles each, pooled. The
 * split gives each device a whole number of chunks: floors of the continuous
 * "all finish together" split, then each leftover chunk to whoever finishes
 * it first, every finish time padded by twice the device's measured spread
 * times its largest bundle. Devices are then left out one at a time while
 * that finishes sooner (a latency that outweighs the help), and a device left
 * out for `reprobe` rounds gets one chunk back where that costs nothing by the
 * model. A reserve of the GPUs' share sits at the tail of the fastest CPU's
 * buffer when the GPUs are noisy. Warm-started rounds take the models the
 * profile saved. On a load whose chunk costs are learned, the plan from
 * round 2 comes from the rates the devices showed in the round before
 * instead (hf__hass_plan_by_rates), a CPU priced on the run of chunks the
 * plan gives it by the seconds its own chunks took, and its buffers are cut
 * by learned cost, a GPU keeping a count it has run where that moves its
 * share by at most `stable_tol` (keep_known_sizes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hass.h"

/* A device's model as the split uses it, for chunks of work w: a GPU pays lat
 * once per bundle and its bytes at the mean chunk's bytes per work; a CPU runs
 * one chunk per bundle, so its latency is paid per chunk and folds into its
 * cost per unit of work. */
static void own_split_model(const struct hass *h, int d, double w, double *lat, double *inv)
{
    const struct hf_cost_model *m = &h->model[d];
    *lat = h->dev[d].is_gpu ? m->lat : 0.0;
    *inv = !(w > 0.0) ? m->inv
           : h->dev[d].is_gpu ? m->inv + m->inv_bw * h->mean_bytes / w
                              : m->inv + m->lat / w;
    /* GPUs alone on inexact work: a GPU's own bundles each ran one region,
     * so its rate is the one its standalone pass measured over the whole
     * load, latency included (hass.c, DESIGN, Adapt): the intercept its
     * bundles fitted, in regions of unknown cost, is no latency. */
    if (h->r && hass_regions_confound(h) && h->r->standalone_rate &&
        h->r->standalone_rate[d] > 0.0) {
        *inv = 1.0 / h->r->standalone_rate[d];
        *lat = 0.0;
    }
}

/* The split's model of device d: its peers' pooled one where that holds
 * (hf__hass_pool_peers), else its own. */
static void split_model(const struct hass *h, int d, double w, double *lat, double *inv)
{
    own_split_model(h, d, w, lat, inv);
    if (h->peer_inv[d] > 0.0) {
        *lat = h->peer_lat[d];
        *inv = h->peer_inv[d];
    }
}

void hf__hass_set_models(const struct hass *h, double *lat, double *inv)
{
    double w = h->r ? hf__mean_chunk_work(h->r) : 0.0;
    for (int d = 0; d < h->ndev; d++) {
        lat[d] = inv[d] = 0.0;
        if (h->r && h->r->alive[d] && h->model[d].fitted)
            split_model(h, d, w, &lat[d], &inv[d]);
    }
}

/* One latency for every decision that adds a bundle (pieces, hedges, steals,
 * the reserve, a CPU leaving its tail): the split's. A GPU's own fit can put
 * it near 0 (a restart on two fast bundles of one size), which made its hedge
 * and pieces look free: 279 us for a 90 us round (n1024-fs-j0.05-clean, seed
 * 15). */
double hf__hass_latency(const struct hass *h, int d)
{
    double lat, inv;
    split_model(h, d, h->r ? hf__mean_chunk_work(h->r) : 0.0, &lat, &inv);
    return lat;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n-1] (n > 0; sorts v). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#define PEER_GAP 0.15 /* GPUs whose standalone rates differ by less are peers */
#define REPEAT_PEERS 3.0 /* pooled_fits_repeats */

/* How far the line lat + work * inv misses GPU d's repeats (the bundles in
 * its window that were not the first of their size, so carry no warm-up):
 * their median relative miss; -1 when it has none. */
static double repeats_miss(const struct hass *h, int d, double lat, double inv)
{
    const struct hf_cost_model *m = &h->model[d];
    double off[HF_COST_WINDOW];
    int k = 0;
    for (int i = 0; i < m->n; i++)
        if (!m->fresh[i] && m->t[i] > 0.0)
            off[k++] = fabs(m->t[i] / (lat + m->w[i] * inv) - 1.0);
    return k ? median(off, k) : -1.0;
}

/* Whether GPU d is a peer by the evidence: the peers' pooled line lat +
 * work * inv misses its repeats by at most REPEAT_PEERS times what it misses
 * the other peers' by (their median; two others at least: with one, a
 * median of two is their mean). Its own fit, from a handful of profile spans,
 * fits them exactly and may still be far off: at 5% jitter a GPU of eight
 * equal ones was fitted 15% fast, held 37 chunks to its equals' 29-33 for
 * the whole run (the moves its 3 ms warm-ups cost never paid back), 9% behind
 * static (matrix n4096-g8-j0.05-gpu, seed 13). A GPU really 10% slower
 * misses the line by 10% where its equals miss it by nothing. */
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
    return k >= 2 && mine <= REPEAT_PEERS * median(miss, k);
}

/* GPUs alike by the engine's standalone pass (rates within 15%) are
 * estimates of one device: each one's model comes from a few bundles of its
 * own (at a small load, profile spans whose slope 5% jitter moves by a third),
 * so the split takes the median of its peers' models for a GPU whose own
 * model agrees with it within what that model may be off by (its tolerance
 * over the square root of its bundles: may[]) at its share of the round: equal
 * GPUs get equal counts (issue 12's matrix, n4096-g8-j0.02-clean: one GPU of
 * eight held 33 chunks to its equals' 31-32 for the whole run, 1.5% behind
 * static's even split over seeds 1-8; pooled, 0.6%) - or whose repeats the
 * peers' median predicts about as well as it predicts theirs, however far
 * its own fit is (pooled_fits_repeats). A GPU that really
 * differs (slowed, throttled, on a slower link) disagrees by more and keeps
 * its own - unless its own runs the whole load faster than its standalone
 * pass did, beyond the peers' gap: that fit is broken, not the GPU fast, and
 * it takes its peers' median without a vote in it. Not on work that is not
 * exact, whose bundles' costs are regions' as much as devices'. */
void hf__hass_pool_peers(struct hass *h)
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
        /* A model that runs the whole load faster than the GPU's standalone
         * pass did, beyond the peers' gap, is broken (a fast restart through
         * a warm-up's intercept read 0.6 ms a chunk for 6.1, and the GPU was
         * handed 150 of 256): it takes its peers' and has no vote. */
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
        double pl = median(peers_lat, k), pi = median(peers_inv, k);
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
    hf__hass_pool_peers(h);
    for (int d = 0; d < h->ndev; d++) {
        double lat, inv;
        split_model(h, d, w, &lat, &inv);
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
    split_model(h, d, w, &lat, &inv);
    return lat + (double)c * w * inv;
}

/* The allowance for device d's spread on c > 0 chunks of work w each: twice
 * its spread times its largest single bundle (a GPU's whole share, a CPU's
 * one chunk; see DESIGN). */
double hf__hass_allowance(const struct hass *h, int d, size_t c, double w)
{
    if (h->r && hass_regions_confound(h))
        return 0.0; /* its bundles' spread is its regions' (hass.c, DESIGN, Adapt) */
    return 2.0 * h->model[d].spread * model_time(h, d, h->dev[d].is_gpu ? c : 1, w);
}

/* When device d finishes c chunks of work w each, by its model, plus its
 * allowance for spread. */
double hf__hass_finish(const struct hass *h, int d, size_t c, double w)
{
    return c ? model_time(h, d, c, w) + hf__hass_allowance(h, d, c, w) : 0.0;
}

/* Device d's finish for its count in `counts` by its model alone, without
 * hf__hass_finish's allowance for spread, after its wait for its shared link
 * (keep_plan's round-1 judgement). */
double hf__hass_finish_model(const struct hass *h, int d, const size_t *counts, double w)
{
    return counts[d] ? model_time(h, d, counts[d], w) + hf__hass_link_wait(h, d, counts) : 0.0;
}

/* hf__hass_finish for device d's count in `counts`, after its wait for its
 * shared link, if any (hass_link.c). */
double hf__hass_finish_at(const struct hass *h, int d, const size_t *counts, double w)
{
    return counts[d] ? hf__hass_finish(h, d, counts[d], w) + hf__hass_link_wait(h, d, counts)
                     : 0.0;
}

/* The latest finish a chunk more for device d makes: its own, and behind a
 * shared link those of the devices served after it (hass_link.c). */
static double finish_plus(const struct hass *h, int d, size_t *counts, double w)
{
    return hf__hass_link_finish_plus(h, d, counts, w);
}

/* Whole chunk counts for n chunks of work w over the devices in use[]: floors
 * of the continuous split, then each leftover chunk to whoever finishes it
 * first. Returns the planned makespan. */
static double counts_for(const struct hass *h, const int *use, size_t n, double w, size_t *counts)
{
    int nd = h->ndev;
    double *lat = calloc(3 * (size_t)nd + 1, sizeof *lat), *inv = lat + nd, *x = inv + nd;
    if (!lat)
        return INFINITY; /* no plan: the caller keeps the shared pool */
    for (int d = 0; d < nd; d++)
        split_model(h, d, w, &lat[d], &inv[d]);
    double rho = w > 0.0 ? h->mean_bytes / w : 0.0; /* bytes per unit of work */
    double T = hf__hass_link_split(h, lat, inv, use, (double)n * w, rho, x);
    size_t given = 0;
    for (int d = 0; d < nd; d++) {
        counts[d] = isfinite(T) && w > 0.0 ? (size_t)fmin(floor(x[d] / w), (double)n) : 0;
        given += counts[d];
    }
    free(lat);
    while (given > n) /* rounding noise: take back from the latest finisher */
        for (int d = 0, worst = -1; d <= nd; d++) {
            if (d == nd) {
                counts[worst]--;
                given--;
            } else if (counts[d] && (worst < 0 || hf__hass_finish_at(h, d, counts, w) >
                                                      hf__hass_finish_at(h, worst, counts, w)))
                worst = d;
        }
    while (given < n) {
        int best = -1;
        for (int d = 0; d < nd; d++)
            if (use[d] && (best < 0 || finish_plus(h, d, counts, w) <
                                           finish_plus(h, best, counts, w)))
                best = d;
        if (best < 0)
            return INFINITY;
        counts[best]++;
        given++;
    }
    double ms = 0.0;
    for (int d = 0; d < nd; d++)
        ms = fmax(ms, hf__hass_finish_at(h, d, counts, w));
    return ms;
}

/* Whether CPU d, its last chunk a slow surprise, would end even one of its
 * `count` chunks after ms at that pace (see hass.h). */
int hf__hass_surprise_late(const struct hass *h, int d, size_t count, double w, double ms)
{
    const struct hf_cost_model *m = &h->model[d];
    /* Even one chunk at that pace: a CPU a few noisy chunks made 15% slow
     * gets fewer chunks from the plan, not none. */
    return !h->dev[d].is_gpu && count > 0 && hass_slow_surprise(m) && w * m->pt[0] / m->pw[0] > ms;
}

/* Plans chunk counts for n chunks: every alive, measured device first, then
 * leaving out one device at a time while that finishes sooner. A device with
 * no model yet is planned as the slowest measured device of its kind would be,
 * so that it gets measured. Returns 0 when no device can be planned. */
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
                    h->model[k].inv > h->model[d].inv) {
                    h->model[d].lat = h->model[k].lat;
                    h->model[d].inv = h->model[k].inv;
                    h->model[d].inv_bw = h->model[k].inv_bw;
                    h->model[d].fitted = 1; /* a guess, replaced by its first bundle */
                }
    hf__hass_link_guess(h);
    for (int d = 0; d < nd; d++)
        use[d] = h->r->alive[d] && h->model[d].fitted;
    size_t trial[nd];
    double best = counts_for(h, use, n, w, counts);
    /* A CPU whose last chunk was a slow surprise its model does not believe
     * yet sits the round out when, at the surprise's pace, even one chunk would
     * end after the others: a real CPU's reprobe chunk after eight rounds idle
     * took 3.05 ms against its model's 0.1 ms, and the one chunk the plan gave
     * it next took 1.64 ms of a 0.9 ms round (make run's config, CPU + 1
     * H200). It comes back by the reprobe. (A GPU's share is hedged instead:
     * hass.c, hedge_surprises.) */
    for (int d = 0; d < nd; d++) {
        int others = 0; /* a device alone runs its load, surprise or not */
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

/* The device with the most chunks in `counts` that can give one up and still
 * end by ms, paying the warm-up of its new count where it never ran one; -1
 * if none. */
static int probe_donor(const struct hass *h, size_t *counts, double w, double ms)
{
    int most = -1;
    for (int k = 0; k < h->ndev; k++) {
        if (counts[k] < 2 || (most >= 0 && counts[k] <= counts[most]))
            continue;
        counts[k]--;
        double end = hf__hass_finish_at(h, k, counts, w);
        if (h->dev[k].is_gpu && !hass_size_known(h, k, counts[k]))
            end += hass_new_size_cost(h, k);
        counts[k]++;
        most = end <= ms ? k : most;
    }
    return most;
}

/* Gives one chunk to each alive device that was left out for `reprobe` rounds
 * in a row (taken from the device with the most chunks that can spare it), so
 * that its model is measured again - but only where that chunk, by the model,
 * ends before the planned round does even at HASS_COLD times its time: a
 * probe must cost nothing, and a device idle for rounds runs its first chunk
 * cold (a real CPU's thread pool and caches: on an H200 host, make run's
 * config, a probe predicted to fit a 0.8 ms round took 1.6 ms and held it).
 * Nor may the chunk's donor pay a warm-up: a GPU's new count cost 3 ms in a
 * 0.05 ms round for a CPU's probe (issue 12's matrix, n1024-g8-j0.05-gpu,
 * seed 10, round 9). A device left out for its latency at a small load comes
 * back when the load grows. */
void hf__hass_add_probes(struct hass *h, size_t *counts)
{
    double w = hf__mean_chunk_work(h->r), ms = 0.0;
    for (int d = 0; d < h->ndev; d++)
        ms = fmax(ms, hf__hass_finish_at(h, d, counts, w));
    for (int d = 0; h->reprobe > 0 && d < h->ndev; d++) {
        if (!h->r->alive[d] || counts[d] > 0 || h->left_out[d] < h->reprobe ||
            !h->model[d].fitted || HASS_COLD * finish_plus(h, d, counts, w) > ms)
            continue;
        int most = probe_donor(h, counts, w, ms);
        if (most < 0)
            return;
        counts[most]--;
        counts[d] = 1;
        h->left_out[d] = 0;
    }
}

/* The reserve of each GPU's share that goes to the fastest CPU buffer's tail,
 * where the GPUs steal it back at the end when the plan was right: the
 * `reserve` knob, or twice the largest spread the GPUs' models measured (at
 * most 10%) when that is larger than 1%: noisy GPUs get a tail to balance on,
 * steady ones (a real H200 varies well under 1%) keep one bundle per round.
 * Not for a GPU planned alone: nobody else would take it, and its own steals
 * of it cost two more bundles, or a CPU left out of the plan started it (on
 * a real H200 host, make run's config: 0.8 ms rounds took 1.0 ms, or 1.3 ms
 * with the CPU's chunk). The extra bundle is priced at the split's latency
 * (hf__hass_latency): a GPU's own fit had put it at 0, and the reserve's
 * steals took 139 us of a 90 us round (n1024-fs-j0.05-clean, seed 15). */
double hf__hass_reserve_for(const struct hass *h, const size_t *counts)
{
    double spread = 0.0, lat = INFINITY, ms = 0.0, w = hf__mean_chunk_work(h->r);
    int planned = 0;
    for (int d = 0; d < h->ndev; d++) {
        ms = fmax(ms, hf__hass_finish_at(h, d, counts, w));
        planned += h->r->alive[d] && counts[d] > 0;
        if (h->dev[d].is_gpu && h->r->alive[d] && counts[d] > 0) {
            spread = fmax(spread, h->model[d].spread);
            lat = fmin(lat, hf__hass_latency(h, d));
        }
    }
    /* Only where the noise it absorbs outweighs the extra bundle it costs. */
    int pays = planned > 1 && spread > 0.01 && lat < 0.5 * spread * ms;
    return fmax(h->reserve, pays ? fmin(0.1, 2.0 * spread) : 0.0);
}

/* Under a plan by rates, GPU d's count from the cut by learned cost: `want`
 * chunks from `at`, after `acc` of work, the cut aiming their end at `target`
 * with `share` of work their own. The count it has run nearest to `want`
 * whose end lands at `target` or up to `stable_tol` of the share past it,
 * else `want`. (keep_known_sizes.) */
static size_t nearest_known_count(const struct hass *h, int d, size_t at, size_t want, double acc,
                                  double target, double share)
{
    const struct hf_chunk *c = h->r->chunks;
    size_t end = h->r->nchunks, p = at;
    for (; p < end && p < at + want; p++)
        acc += c[p].work;
    if (hass_size_known(h, d, p - at))
        return p - at;
    size_t down = p, up = p;
    double a_down = acc, a_up = acc;
    for (;;) {
        int moved = 0;
        if (down > at + 1 && a_down - c[down - 1].work >= target) {
            a_down -= c[--down].work;
            if (hass_size_known(h, d, down - at))
                return down - at;
            moved = 1;
        }
        if (up < end && a_up + c[up].work <= target + h->stable_tol * share) {
            a_up += c[up++].work;
            if (hass_size_known(h, d, up - at))
                return up - at;
            moved = 1;
        }
        if (!moved)
            return want;
    }
}

/* The cut by learned cost moves every GPU's count a little each round under
 * a plan by rates (the estimates move as each device's region teaches them),
 * and a count a GPU never ran is a new size to it: a real GPU's kernel choice,
 * 3 ms in the stress matrix's `gpu` cells, which a plan by rates cannot price
 * (hass.c, DESIGN, Adapt). The two GPUs of tail-g2-j0-gpu (seed 4) ran new
 * sizes in 11 of their 16 rounds from round 2, 86-92 ms against static's
 * 83.1. So a GPU takes a count
 * it has run where that ends its run at most `stable_tol` of its share past
 * where the cut ends it, each GPU measured from the cut's own end (the drift
 * stays one GPU's slack), never short of it: the layout's last device, a
 * CPU where one runs, takes what is left, and a CPU at 1/35 of a GPU's rate
 * would pay a GPU's 1% as 35% of its time. */
static void keep_known_sizes(struct hass *h, size_t base, size_t *counts)
{
    int order[h->ndev], n = hf__layout_order(h->dev, h->ndev, counts, order);
    struct hf__buf cut[h->ndev];
    hf__layout(cut, counts, h->dev, h->ndev, base);
    size_t end = h->r->nchunks, at = base;
    double acc = 0.0, target = 0.0; /* the work before `at`; before the cut's end */
    for (int i = 0; i + 1 < n; i++) {
        int d = order[i];
        double share = hf__buf_work(h->r, &cut[d]);
        target += share;
        if (h->dev[d].is_gpu)
            counts[d] = nearest_known_count(h, d, at, counts[d], acc, target, share);
        if (counts[d] > end - at)
            counts[d] = end - at;
        for (size_t k = at; k < at + counts[d]; k++)
            acc += h->r->chunks[k].work; /* chunk by chunk, as nearest_known_count adds */
        at += counts[d];
    }
    if (n > 0)
        counts[order[n - 1]] = end - at;
}

/* The buffers themselves; the reserve fraction is the plan's (fixed when the
 * plan was made, so a settled plan keeps its bundle sizes exactly). */
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
    /* Counts are in chunks of the mean work until here (the reserve too); the
     * cut turns them into runs that cost each device its planned time. */
    double coef[3 * h->ndev];
    for (int d = 0; d < h->ndev; d++) {
        const struct hf_cost_model *m = &h->model[d];
        coef[3 * d] = h->dev[d].is_gpu ? 0.0 : m->lat; /* a CPU starts every chunk */
        coef[3 * d + 1] = m->inv;
        coef[3 * d + 2] = h->dev[d].is_gpu ? m->inv_bw : 0.0;
    }
    if (h->by_rates) {
        hf__cost_cut(h->r, base, h->dev, h->ndev, counts); /* rates are per learned work */
        keep_known_sizes(h, base, counts);
    } else {
        hf__cost_cut_models(h->r, base, h->dev, h->ndev, counts, coef);
    }
    hf__layout(h->buf, counts, h->dev, h->ndev, base);
    h->split = 1;
    h->pool_next = h->r->nchunks;
}

/* Splits each GPU's own buffer into HASS_PIECES bundles where its planned
 * time is long enough that the extra bundles' latency, and the two new sizes
 * they are (a piece and the last one), cost it at most HASS_PIECE_COST, both
 * known (its latency seen, its warm-up measured at least once; see hass.c,
 * DESIGN, Split), and where the other devices together run at half its rate
 * or more (a CPU at 1/35 of a GPU's rate gains nothing from its released
 * pieces: on an H200, n = 32768, the pieces cost 0.8% of the round). A piece
 * much slower than its model releases the rest of the buffer to the others
 * (hass_finished). Once on, pieces stay on while the GPU's planned count
 * holds (their own warm-ups, once measured, would turn them off again: two
 * rounds of new sizes for nothing). Not on a shared link, whose waits are
 * estimated per bundle handed out, nor under a plan by rates, whose buffers
 * are cut by learned cost. */
void hf__hass_plan_pieces(struct hass *h)
{
    double w = hf__mean_chunk_work(h->r);
    for (int d = 0; d < h->ndev; d++) {
        size_t c = h->buf[d].hi - h->buf[d].lo;
        h->piece[d] = 0;
        if (!h->dev[d].is_gpu || h->by_rates || h->link_of[d] >= 0 || c < HASS_PIECES ||
            !h->model[d].lat_known || h->nwarm[d] == 0 || !hass_has_helpers(h, d)) {
            h->piece_plan[d] = 0;
            continue;
        }
        /* Each extra piece is also one more chance of a stall (hass.h,
         * hass_stall_risk): pieces that cost a stall-prone GPU more than
         * they may save are not cut, nor kept. */
        double risk = (HASS_PIECES - 1) * hass_stall_risk(h, d);
        double extra = (HASS_PIECES - 1) * hf__hass_latency(h, d) +
                       2.0 * hass_new_size_cost(h, d) + risk;
        double budget = HASS_PIECE_COST * model_time(h, d, c, w);
        int on = h->piece_plan[d] > 0 && h->piece_plan[d] == h->plan_n[d] && risk <= budget;
        if (on || extra <= budget) {
            h->piece[d] = (c + HASS_PIECES - 1) / HASS_PIECES;
            h->piece_plan[d] = h->plan_n[d];
        } else {
            h->piece_plan[d] = 0;
        }
    }
}

/* Whole chunk counts for n chunks of work w from the continuous split x under
 * the lines lat + work * inv: floors, then each leftover chunk to whoever
 * finishes it first. 0 when no device can take one. */
static int whole_counts(const double *lat, const double *inv, const int *use, int nd,
                        const double *x, size_t n, double w, size_t *counts)
{
    size_t given = 0;
    for (int d = 0; d < nd; d++) {
        counts[d] = (size_t)floor(x[d] / w); /* floors: they sum to n at most */
        given += counts[d];
    }
    while (given < n) {
        int best = -1;
        double best_t = INFINITY;
        for (int d = 0; d < nd; d++) {
            double t = lat[d] + (double)(counts[d] + 1) * w * inv[d];
            if (use[d] && t < best_t) {
                best = d;
                best_t = t;
            }
        }
        if (best < 0)
            return 0;
        counts[best]++;
        given++;
    }
    return 1;
}

/* CPU d's seconds for chunk i, when it ran chunk i (one chunk per bundle, so
 * exactly) while the load repeated: the seconds it took last time; -1 when
 * it did not. */
static double own_seconds(const struct hass *h, int d, size_t i)
{
    return i < h->chunk_n && h->chunk_dev[i] == d ? h->chunk_s[i] : -1.0;
}

/* CPU d's seconds per unit of learned work over the run of chunks that
 * `counts` gives it (cut by learned cost, as hf__hass_lay_out cuts a plan by
 * rates): each chunk it ran itself at the seconds it took, any other at its
 * estimate times the seconds per unit of estimate of the nearest chunk it ran
 * (the estimates are off by a factor that changes along the load, so the
 * nearest is the best guess of it), or at `inv`, its rate of the round just
 * ended, when it ran none. */
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
        for (size_t k = 1; s < 0.0 && k < n; k++) { /* the nearest chunk it ran */
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

/* The plan by measured rates (hass.c, "Adapt", on a load whose chunk costs
 * are learned): each device's time per unit of work is what it took in the
 * round just ended (busy[d], less its model's latency per bundle) for the
 * learned work it ran (work[d]), both in the estimates it ran them under, so
 * a region whose estimate is off is priced as its device found it; a device
 * that ran nothing keeps its model. A CPU's rate is then priced on the run
 * of chunks the plan would give it, by the seconds each of its own chunks
 * took (run_inv), and the split made again until that settles: a rate
 * measured on one region does not hold on another whose estimates are off
 * by a different factor, and a CPU whose tail the GPUs stole measured only
 * its buffer's dear front (hump-fs-j0-gpu: its buffer alternated between
 * [415, 512), done in 27 ms, and [377, 512), 83 ms of its time, round after
 * round). The split
 * makes all finish together under those lines; the plan in force is kept
 * unless the new one finishes sooner, on them, by more than stable_tol and
 * twice the rates' own noise (how far a device's rate moved between two rounds
 * that gave it the same chunks; at least the bundle spread of a GPU whose
 * count would change: hump-g2-j0.02-gpu moved its GPUs in rounds 3-5 for
 * gains of 1.2-3.7% inside their 2% jitter, a 3 ms warm-up each, before two
 * rounds of one plan had measured that noise) and pays back the warm-up of its new sizes
 * in HASS_AMORTISE rounds. GPUs alone on inexact work, whose rates are
 * measured on regions, need more: the gain must also beat what the plans in
 * force missed their makespans by (pred_noise, halved each round; a change
 * that pays new sizes misses by their warm-ups): on the hot shape a 1%
 * promise moved the plan round after round, 3 ms of new sizes each time,
 * while the plans missed by 3-7%. Returns 0 when nothing could be planned (the
 * models plan instead). */
int hf__hass_plan_by_rates(struct hass *h, const double *work, const double *busy, size_t n)
{
    int nd = h->ndev, use[nd], confound = hass_regions_confound(h);
    double lat[nd], inv[nd], ran[nd], x[nd], w = hf__mean_chunk_work(h->r);
    for (int d = 0; d < nd; d++) {
        split_model(h, d, w, &lat[d], &inv[d]);
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
            !whole_counts(lat, inv, use, nd, x, n, w, counts))
            return 0;
        int moved = 0;
        for (int d = 0; it < 16 && d < nd; d++) {
            if (h->dev[d].is_gpu || !use[d] || counts[d] == 0)
                continue;
            /* Half-way to the run's rate: the run moves with the rate. */
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
        /* The plan in force, its CPUs priced on their runs under it. */
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
        double took = 0.0; /* the round's makespan, as its busiest device saw it */
        for (int d = 0; d < nd; d++)
            took = fmax(took, busy[d]);
        h->pred_noise = fmax(0.5 * h->pred_noise, fabs(took / h->plan_pred - 1.0));
        noise = fmax(noise, h->pred_noise);
    }
    /* A GPU whose count would change: twice its bundles' spread too (a plan
     * that moves every round never has two rounds that tell its rates' noise),
     * not where GPUs run alone on inexact work, whose spread is its regions'
     * (hf__hass_allowance). */
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

/* Splits chunks [base, nchunks) by a fresh plan (round 0 after profiling, or a
 * round whose chunk count differs from the plan's). */
void hf__hass_split_rest(struct hass *h, size_t base)
{
    size_t counts[h->ndev];
    hf__hass_refresh_rates(h);
    if (!hf__hass_plan_counts(h, h->r->nchunks - base, counts))
        return; /* nobody is measured: keep serving the shared pool */
    h->plan_reserve = hf__hass_reserve_for(h, counts);
    hf__hass_lay_out(h, counts, base);
    if (!h->profiling)
        hf__hass_plan_pieces(h);
}

/* Loads a model for every device from the profile; 1 when all were there. */
int hf__hass_warm_models(struct hass *h)
{
    double v[h->ndev][3];
    for (int d = 0; d < h->ndev; d++) {
        int got = hf_profile_get(h->profile, h->dev[d].name, "hass.model", v[d], 3);
        if (got == 2) /* saved before the per-byte term */
            v[d][2] = 0.0;
        if (got >= 2 && v[d][1] > 0 && v[d][0] >= 0 && v[d][2] >= 0)
            continue;
        double rate = 0;
        if (hf_profile_get(h->profile, h->dev[d].name, "hass.rate", &rate, 1) < 1 || !(rate > 0))
            return 0;
        v[d][0] = 0.0;
        v[d][1] = 1.0 / rate;
        v[d][2] = 0.0;
    }
    for (int d = 0; d < h->ndev; d++) {
        h->model[d].lat = v[d][0];
        h->model[d].inv = v[d][1];
        h->model[d].inv_bw = v[d][2];
        h->model[d].fitted = 1;
    }
    return 1;
}

