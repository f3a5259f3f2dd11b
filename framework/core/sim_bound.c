/* sim_bound.c - the sim engine's bounds from the truth: the best makespan a
 * round could reach under the devices' modelled parameters.
 *
 * DESIGN
 * ------
 * bound_s (engine.c) is the best split under the affine models a run fitted
 * from its own bundles, so it differs between the schedulers of one
 * comparison: each sees its devices through the bundles it handed out. In the
 * sim engine the parameters those models estimate are known ([sim.NAME]:
 * latency, rate, bandwidth, a slowdown from a round on), so one yardstick
 * serves every scheduler of a comparison: sim_bound_s, the same
 * "everyone finishes together" bound (hf_cost_split_bound; a CPU team pays its
 * latency per chunk, folded into its cost per unit of work at the round's
 * mean chunk, as bound_s does; a GPU the bytes that come with every unit of
 * work, at the round's least bytes per work), from the parameters instead
 * of a fit. What the parameters leave out - jitter, warm-ups, stalls - is
 * what no plan made before the round can foresee, so a scheduler's
 * efficiency against it says how much of the round that trouble and the
 * plan cost together.
 *
 * Chunks are whole in a real split. Where every chunk of the round has the
 * same work and bytes (matmul's rows), sim_chunk_bound_s is the best split in
 * whole chunks: device d running k chunks ends at lat + k c (a GPU, one
 * bundle) or k (lat + c) (a CPU team, one chunk per bundle), so the best
 * makespan of N chunks is the least T at which the devices can end N chunks
 * by T between them (hf_cost_least_time). Their ratio says how much of
 * sim_bound_s whole chunks can reach at all (issue 12: efficiency >= 0.95
 * "where the bound is reachable by whole chunks"). Both are 0 where they do
 * not apply: the real engine, node devices (their network is not one affine
 * term), learned chunk costs (the chunks' work is an estimate, the sim's
 * bundles cost their true work), and - for the chunk bound - chunks that
 * differ.
 */
#include <math.h>

#include "engine_internal.h"

/* One device's true terms in the current round, as hf__round_bound takes
 * them: seconds per bundle, per unit of work, per byte. 0 when the device has
 * no usable parameters (a node device). */
static int true_terms(const struct hf__engine *e, int d, double mean_w, double *lat,
                      double *inv, double *ibw)
{
    const struct hf_device *dev = hf_devlist_get(e->devs, d);
    const struct hf_sim_model *m = &dev->model;
    if (dev->node || !(m->rate > 0.0))
        return 0;
    double f = m->slow_factor != 1.0 && e->round.round >= m->slow_round ? m->slow_factor : 1.0;
    *lat = f * m->latency_s;
    *inv = f / m->rate;
    *ibw = dev->info.is_gpu && m->bandwidth > 0.0 ? f / m->bandwidth : 0.0;
    if (!dev->info.is_gpu && mean_w > 0.0) { /* a CPU team: its latency per chunk */
        *inv += *lat / mean_w;
        *lat = 0.0;
    }
    return 1;
}

/* The chunks each device can end by T, against the round's chunk count. */
struct chunk_fit {
    const double *lat, *per; /* per device: seconds per bundle, per chunk (CPU: lat folded) */
    const int *use;
    int n;
    double nchunks;
};

static int chunks_fit(void *arg, double T)
{
    const struct chunk_fit *c = arg;
    double can = 0.0;
    for (int d = 0; d < c->n; d++)
        if (c->use[d] && T >= c->lat[d] + c->per[d])
            can += floor((T - c->lat[d]) / c->per[d] * (1.0 + 1e-12));
    return can >= c->nchunks;
}

void hf__sim_bounds(const struct hf__engine *e, double bytes, double rho, double *bound,
                    double *chunk_bound)
{
    *bound = *chunk_bound = 0.0;
    const struct hf_round *r = &e->round;
    if (e->opts->engine != HF_ENGINE_SIM || !r->work_exact || r->nchunks == 0)
        return;
    int n = e->ndev, use[n];
    double lat[n], inv[n], ibw[n], per[n];
    double mean_w = r->total_work / (double)r->nchunks;
    int same = 1;
    for (size_t i = 0; i < r->nchunks && same; i++) {
        const struct hf_chunk *c = &r->chunks[i];
        same = fabs(c->work - r->chunks[0].work) <= 1e-9 * r->chunks[0].work &&
               fabs(c->bytes - r->chunks[0].bytes) <= 1e-9 * r->chunks[0].bytes;
    }
    for (int d = 0; d < n; d++) {
        lat[d] = inv[d] = ibw[d] = per[d] = 0.0;
        use[d] = e->alive[d];
        if (use[d] && !true_terms(e, d, mean_w, &lat[d], &inv[d], &ibw[d]))
            return;
        if (use[d])
            per[d] = inv[d] * r->chunks[0].work + ibw[d] * r->chunks[0].bytes;
        /* Every unit of work brings at least rho bytes with it: a GPU pays for
         * those with its work (else the relaxed split would hand every byte to
         * a CPU, which copies nothing, and the bound would say little). */
        inv[d] += rho * ibw[d];
    }
    double rest = fmax(0.0, bytes - rho * r->total_work);
    double t = hf_cost_split_bound(lat, inv, ibw, use, n, r->total_work, rest);
    if (!isfinite(t))
        return;
    *bound = t;
    if (same) {
        struct chunk_fit c = {lat, per, use, n, (double)r->nchunks};
        double whole = hf_cost_least_time(chunks_fit, &c, t, NULL);
        *chunk_bound = isfinite(whole) ? fmax(whole, t) : 0.0;
    }
}
