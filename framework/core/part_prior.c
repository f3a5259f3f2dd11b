/* part_prior.c - what taking part will cost a round before it was measured.
 *
 * DESIGN
 * ------
 * A round that two or more devices ran costs more than its bundles: the host
 * merges what each device changed in the shared data and pushes the union
 * back to every GPU (shared.c), besides a synchronisation and a host
 * turnaround. The planners learn that cost from the rounds a device set ran
 * (schedulers/device_set.c), but the first such round is paid before it is
 * known, and on a graph app it can be the dearest round of the run (an H100
 * host merged ~4M changed distances in ~19 ms where the GPU alone ran the
 * whole round in ~1 ms). So the engine tells the planners what it expects of
 * a round of every alive device (hf_round.part_prior_s), from what it knows
 * before the round:
 *   - real engine: the elements the round may change in the MIN/MAX/OR
 *     arrays, the last round's changed elements per unit of its work times
 *     this round's work, at most every element (every element when no round
 *     changed any yet), at the host's seconds per merged element: the median
 *     of this run's merges of two or more devices that merged at least
 *     HF__PRIOR_MIN_ELEMS elements (where the per-element part dominates),
 *     HF__PRIOR_ELEM_S before any (measured on the H100 and H200 hosts); plus
 *     the host turnaround per device past the first. OWNED arrays cost the
 *     ranges the others computed, a copy at memory speed, and are left to
 *     what the rounds measure.
 *   - sim engine: the modelled devices' own part (engine_sim.c: part_us,
 *     part_per_unit_s), for every alive device at this round's work: the
 *     sim declares what a merge costs on its machine as the real engine
 *     measures it on the host.
 * An app without shared data is told 0: its devices merge nothing.
 */
#include <math.h>
#include <string.h>

#include "cost_bytes.h"
#include "engine_internal.h"
#include "part_prior.h"
#include "shared.h"

#define HF__PRIOR_ELEM_S 5e-9     /* host seconds per merged element (kron-22 BFS: ~2M in ~10 ms) */
#define HF__PRIOR_TURN_S 100e-6   /* host turnaround per device past the first (engine_sim.c) */
#define HF__PRIOR_MIN_ELEMS 4096  /* a merge this large tells the per-element cost */

void hf__part_prior_init(struct hf__part_prior *p)
{
    memset(p, 0, sizeof *p);
    p->changes_per_work = -1.0;
}

static double per_elem_s(const struct hf__part_prior *p)
{
    if (p->n == 0)
        return HF__PRIOR_ELEM_S;
    double v[HF__PRIOR_WINDOW];
    memcpy(v, p->per_elem, (size_t)p->n * sizeof *v);
    return hf__cost_median(v, p->n);
}

/* The sim's modelled part of every alive device at `work` (engine_sim.c
 * charges each device that ran its part_s and part_per_unit_s x its work;
 * the split is not known yet, so the dearest per-unit rate is taken). */
static double sim_prior(const struct hf__engine *e, double work)
{
    double fixed = 0.0, per_unit = 0.0;
    for (int d = 0; d < e->ndev; d++) {
        const struct hf_device *dev = hf_devlist_get(e->devs, d);
        if (!e->alive[d] || dev->node)
            continue;
        fixed += dev->model.part_s >= 0.0 ? dev->model.part_s : HF__PRIOR_TURN_S;
        per_unit = fmax(per_unit, dev->model.part_per_unit_s);
    }
    return fixed + per_unit * work;
}

double hf__part_prior(const struct hf__engine *e, double work)
{
    int alive = 0;
    for (int d = 0; d < e->ndev; d++)
        alive += e->alive[d] != 0;
    if (!e->shared || alive < 2)
        return 0.0;
    if (e->opts->engine != HF_ENGINE_REAL)
        return sim_prior(e, work);
    size_t elements, changed;
    hf__shared_recorded(e->shared, &elements, &changed);
    const struct hf__part_prior *p = &e->prior;
    double n = (double)elements;
    if (p->changes_per_work >= 0.0)
        n = fmin(n, p->changes_per_work * work);
    return HF__PRIOR_TURN_S * (alive - 1) + per_elem_s(p) * n;
}

void hf__part_prior_learn(struct hf__engine *e, double merge_s)
{
    if (!e->shared || e->opts->engine != HF_ENGINE_REAL)
        return;
    double work = e->round.total_work;
    int ran = 0;
    for (int d = 0; d < e->ndev; d++)
        ran += e->stats[d].bundles > 0;
    size_t elements, changed;
    hf__shared_recorded(e->shared, &elements, &changed);
    struct hf__part_prior *p = &e->prior;
    if (work > 0.0 && elements > 0)
        p->changes_per_work = (double)changed / work;
    if (ran >= 2 && changed >= HF__PRIOR_MIN_ELEMS && merge_s > 0.0) {
        p->per_elem[p->at] = merge_s / (double)changed;
        p->at = (p->at + 1) % HF__PRIOR_WINDOW;
        if (p->n < HF__PRIOR_WINDOW)
            p->n++;
    }
}
