/* engine.c - the steps of one round, shared by the real and the simulated engine.
 *
 * DESIGN
 * ------
 * Every round follows the same steps: next_load -> partition ->
 * scheduler.round_begin -> run the round (engine_real.c with a thread per
 * device, or engine_sim.c with events in virtual time) -> scheduler.round_end
 * (adaptation) -> verify -> statistics. run.c strings rounds together into a
 * run; standalone.c uses the same steps with its own policy to measure each
 * device alone. This file calls neither of them.
 *
 * The steps taken for one span (take, bundle, record, fail) live in
 * engine_steps.c so that both engines share them. A round is judged only
 * after every chunk ran exactly once (the pool says so); a run that cannot get
 * there fails as a whole and produces no results, because a results file with
 * a silently short round would mislead every comparison.
 *
 * Time: the real engine reads the monotonic clock, the sim engine its virtual
 * clock; events are stored relative to the start of round 0, so traces and
 * Gantt charts of both engines look alike.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine_internal.h"
#include "io/progress.h"
#include "profile.h"
#include "shared.h"

/* ---- the round loop ------------------------------------------------------------ */

void hf__engine_reset_cost(struct hf__engine *e, int d)
{
    const struct hf_device_info *info = &hf_devlist_get(e->devs, d)->info;
    hf_cost_init(&e->cost[d]);
    /* A CPU's bundles of a learned load are all sizes it never ran: taken
     * for warm-ups, a CPU slowed 2x had every bundle flagged an outlier, and
     * never folded, for the rest of the run. */
    e->cost[d].no_warmup = !info->is_gpu && info->kind != HF_DEV_NODE;
}

/* The round's chunks with their learned cost (chunk_cost.c); the saved
 * estimates are looked for once, at the run's first load. */
static const struct hf_chunk *learned_chunks(struct hf__engine *e, double *moved_out)
{
    const char *path = hf_profile_path(e->profile);
    if (!e->chunk_cost_read && *path && !e->load.work_exact) {
        char cost[4096];
        snprintf(cost, sizeof cost, "%.*s.cost", (int)(strlen(path) - 5), path);
        hf__chunk_cost_load(&e->chunk_cost, cost, e->chunks, e->nchunks);
        e->chunk_cost_loaded = e->chunk_cost.loaded;
    }
    e->chunk_cost_read = 1;
    double moved = 0;
    const struct hf_chunk *seen =
        hf__chunk_cost_round(&e->chunk_cost, e->chunks, e->nchunks, e->ndev, e->standalone,
                             e->load.work_exact,
                             &moved);
    /* The devices' cost models (bound_s) hold bundles measured in the old
     * estimates: when those moved, start the models over in the new unit. */
    if (moved > 0.02)
        for (int d = 0; d < e->ndev; d++)
            hf__engine_reset_cost(e, d);
    *moved_out = moved;
    return seen;
}

/* GPUs sit out a load without a GPU kernel (hf_load.cpu_only): for its round
 * they are not alive, so every scheduler splits it over the other devices
 * and the round's bound and ideal count those alone, with no scheduler
 * knowing why. Not when no other device is alive: a run of GPUs alone still
 * runs the load (each GPU's host thread runs the CPU code). */
static void sit_out_gpus(struct hf__engine *e)
{
    int others = 0;
    for (int d = 0; d < e->ndev; d++)
        others |= e->alive[d] && !hf_devlist_get(e->devs, d)->info.is_gpu;
    for (int d = 0; d < e->ndev && others && e->load.cpu_only; d++)
        if (e->alive[d] && hf_devlist_get(e->devs, d)->info.is_gpu)
            e->alive[d] = 0, e->sat_out[d] = 1;
}

/* The GPUs that sat the last round out are alive again (a GPU retired after
 * a fault never sat out: it stays retired). */
static void seat_gpus(struct hf__engine *e)
{
    for (int d = 0; d < e->ndev; d++)
        if (e->sat_out[d])
            e->alive[d] = 1, e->sat_out[d] = 0;
}

/* Draws round `round`'s load and cuts it into e->chunks. Returns 1, 0 (no
 * more loads) or an error. */
int hf__engine_draw_round(struct hf__engine *e, int round)
{
    seat_gpus(e);
    memset(&e->load, 0, sizeof e->load);
    e->load.round = round;
    e->load.shared = e->shared;
    e->load.serial = e->draws++;
    if (round == 0) /* a standalone pass may have left a union: round 0 has no past */
        hf__shared_round_start(e->shared);
    hf_clear_error();
    memset(&e->host, 0, sizeof e->host);
    double t0 = hf__now();
    int rc = e->app->next_load(e->app_ctx, &e->load);
    e->host.next_load_s = hf__now() - t0;
    t0 = hf__now();
    if (rc <= 0) {
        if (rc < 0)
            hf__engine_error(e, rc, "app %s: next_load failed for round %d: %s", e->app->name,
                             round, *hf_last_error() ? hf_last_error() : hf_strerror(rc));
        return rc;
    }
    sit_out_gpus(e);
    /* Round 0 starts from the shared state as next_load left it (it may have
     * reset it, e.g. after a standalone pass), on every device. */
    if (round == 0 && e->shared && (rc = hf__shared_sync_all(e))) {
        hf__engine_error(e, rc, "sending shared data to the devices: %s",
                         *hf_last_error() ? hf_last_error() : hf_strerror(rc));
        return rc;
    }
    hf__shared_round_start(e->shared);
    if (e->load.units == 0) {
        hf__engine_error(e, HF_EINVAL, "app %s produced a zero-sized load in round %d",
                         e->app->name, round);
        return HF_EINVAL;
    }
    /* [run] grain overrides the app's own choice (0: its partitioner
     * chooses); the partitioner is asked twice (count, then fill) so that an
     * app never has to allocate for us. */
    size_t grain = e->opts->grain ? e->opts->grain : e->app->default_grain;
    if (grain == 0 && !e->app->partition)
        grain = 1;
    size_t (*part)(void *, const struct hf_load *, size_t, struct hf_chunk *, size_t) =
        e->app->partition ? e->app->partition : hf_partition_even;
    size_t n = part(e->app_ctx, &e->load, grain, NULL, 0);
    if (n == 0) {
        hf__engine_error(e, HF_EINVAL, "app %s: the partitioner made no chunks", e->app->name);
        return HF_EINVAL;
    }
    if ((rc = hf__engine_hold_chunks(e, n)))
        return rc;
    e->nchunks = part(e->app_ctx, &e->load, grain, e->chunks, n);
    for (size_t i = 0; i < e->nchunks; i++)
        e->chunks[i].index = i;
    e->host.partition_s = hf__now() - t0;
    /* A run across nodes: every node draws every load too (nodes.c). */
    if ((rc = hf__nodes_drawn(e))) {
        hf__engine_error(e, rc, "%s", hf_last_error());
        return rc;
    }
    return 1;
}

int hf__engine_hold_chunks(struct hf__engine *e, size_t n)
{
    if (n <= e->chunks_cap)
        return 0;
    struct hf_chunk *c = realloc(e->chunks, n * sizeof *c);
    if (!c) {
        hf__engine_error(e, HF_ENOMEM, "cannot hold %zu chunks", n);
        return HF_ENOMEM;
    }
    e->chunks = c;
    e->chunks_cap = n;
    return 0;
}

/* Makes e->chunks the round to run: what the schedulers see of them, the
 * pool, the round record and the per-round bookkeeping. */
int hf__engine_arm_round(struct hf__engine *e, int round, int learn)
{
    double t0 = hf__now();
    /* Schedulers see each chunk's learned cost (chunk_cost.c), not the
     * declared work; bundles are still built from the app's own chunks. */
    double moved = 0.0;
    const struct hf_chunk *seen = learn ? learned_chunks(e, &moved) : e->chunks;
    if (!seen) {
        hf__engine_error(e, HF_ENOMEM, "cannot hold the costs of %zu chunks", e->nchunks);
        return HF_ENOMEM;
    }
    double total = 0;
    for (size_t i = 0; i < e->nchunks; i++)
        total += seen[i].work;
    /* A round ends when every chunk is done (standalone.c lowers the target
     * for a CPU's sample); the pool starts with every chunk free. */
    e->round_target = e->nchunks;
    int rc = hf_pool_reset(e->pool, e->nchunks);
    if (rc) {
        hf__engine_error(e, rc, "%s", hf_last_error());
        return rc;
    }
    e->host.partition_s += hf__now() - t0;
    e->round = (struct hf_round){
        .round = round, .nchunks = e->nchunks, .chunks = seen, .total_work = total,
        .alive = e->alive, .standalone_rate = e->standalone, .cost_moved = moved,
        .repeats = learn && e->chunk_cost.repeated, .work_exact = e->load.work_exact,
        .solo_rounds = e->load.solo_rounds > 1.0 ? e->load.solo_rounds : 1.0,
        .part_prior_s = hf__part_prior(e, total),
    };
    /* Per-round bookkeeping: statistics, fault counters, the stall detector's
     * generations (-1 = has not asked yet) and the event merge cursor. */
    memset(e->stats, 0, (size_t)e->ndev * sizeof *e->stats);
    for (int d = 0; d < e->ndev; d++) {
        hf_devlist_get(e->devs, d)->bundles_this_round = 0;
        e->asked_gen[d] = (unsigned long)-1;
        e->last_event[d] = -1;
    }
    e->orphans.head = e->orphans.n = 0;
    e->bundles_from = INFINITY;
    e->bundles_to = -INFINITY;
    hf__nodes_round_start(e);
    return 0;
}

/* Draws the next load and cuts it into chunks. Returns 1, 0 (no more loads) or an error. */
int hf__engine_prepare_round(struct hf__engine *e, int round)
{
    int rc = hf__engine_draw_round(e, round);
    if (rc <= 0)
        return rc;
    rc = hf__engine_arm_round(e, round, 1);
    return rc ? rc : 1;
}

/* Runs the prepared round on the chosen engine. */
int hf__engine_execute_round(struct hf__engine *e)
{
    hf_clear_error();
    int rc = e->sched->round_begin(e->sched_state, &e->round);
    if (rc) {
        hf__engine_error(e, rc, "scheduler %s: round_begin failed: %s", e->sched->name,
                         *hf_last_error() ? hf_last_error() : hf_strerror(rc));
        return rc;
    }
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
    rc = e->opts->engine == HF_ENGINE_REAL ? hf__real_round(e) : hf__sim_round(e);
    /* Shared data is merged inside the round, and its time counts: a split
     * that leaves much to merge costs what it costs. */
    if (rc == 0 && !e->error && e->shared && hf__engine_round_complete(e)) {
        double t0 = hf__now();
        rc = hf__shared_merge(e);
        e->host.merge_s = hf__now() - t0;
        hf__part_prior_learn(e, e->host.merge_s);
        if (rc && !e->error)
            hf__engine_error(e, rc, "merging shared data after round %d: %s", e->round.round,
                             *hf_last_error() ? hf_last_error() : hf_strerror(rc));
        if (e->opts->engine == HF_ENGINE_REAL && hf__now() > e->round_end)
            e->round_end = hf__now();
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
    e->host.cpu_s =
        (double)(cpu1.tv_sec - cpu0.tv_sec) + 1e-9 * (double)(cpu1.tv_nsec - cpu0.tv_nsec);
    /* Belt and braces: both engines stop only when the pool is done or on an
     * error, but a round is never reported complete on their word alone. */
    if (rc == 0 && !e->error && !hf__engine_round_complete(e))
        hf__engine_error(e, HF_ESCHED, "round %d ended with %zu of %zu chunks not run",
                         e->round.round, e->nchunks - hf_pool_done(e->pool), e->nchunks);
    return e->error ? e->error : rc;
}


/* The round's lower bound (the sim engine's bound_s; real runs replace it by
 * the measured split, one per round of a comparison: measured_bound.c): the
 * best makespan any split of its work and bytes
 * could reach under the devices' fitted models, each device's latency paid
 * once, chunks divisible and their work and bytes split independently
 * (hf_cost_split_bound; with no per-byte term, hf_cost_split).
 *
 * Why it is a true lower bound: a device d that ran work W_d and bytes Y_d in
 * busy seconds B_d this round must satisfy lat_d + W_d * inv_d + Y_d * inv_bw_d
 * <= B_d; where the fit says more (the device beat its model: a lucky bundle,
 * noise, a fit made when it was slower), all three terms are scaled down until
 * it holds with equality: the model becomes what the device actually achieved.
 * A device's bundles never overlap and lie inside the round, so B_d <= makespan
 * for every d, and the split the scheduler really ran is one of the splits the
 * bound minimises over (it frees bytes from work, so it holds every split of
 * chunks and more): bound <= max_d (lat_d + W_d inv_d + Y_d inv_bw_d) <= max_d
 * B_d <= makespan.
 * Devices that did not run add no constraint (a split may leave them out), and
 * devices without a model are left out of the bound, which only raises it
 * towards the same split. So efficiency = bound / makespan <= 1 by construction,
 * jitter or not; the test suite checks it on every scheduler.
 *
 * Shared links (info non-NULL): where devices declare one link with its
 * bandwidth B (hf_device_info.link, link_bandwidth, in the chunks' bytes per
 * second), the bound is also at least link_bound's T: the smallest T at which
 * the devices can take the work with those of each link taking at most
 * B * T / rho_min of it in all, rho_min the round's least bytes per unit of
 * work over its chunks, and bytes otherwise ignored. Why that too is a lower
 * bound: in the real split every device has lat_d + W_d inv_d <= B_d <=
 * makespan (the scaled models, their per-byte term dropped, which only lowers
 * them), and a link moves its devices' bytes one transfer at a time, each
 * inside its bundle, so inside the round: sum over the link of Y_d <= B *
 * makespan, and Y_d >= rho_min W_d since every chunk moves at least rho_min
 * bytes per unit of its work; so sum over the link of W_d <= B * makespan /
 * rho_min. The real split thus meets every constraint at T = makespan, and
 * the smallest T that does is <= makespan (bisection returns the lower end,
 * where the work does not fit yet). The max of two lower bounds is one. A
 * bandwidth a scheduler learned is no guarantee, so only a declared one
 * counts (the sim's node devices declare theirs; sim_node.c). */

/* link_bound's capacity: the work the devices can take by T. */
static double link_capacity(const double *lat, const double *inv, const int *use,
                            const struct hf_device_info *info, int n, double rho, double T)
{
    double sum = 0.0;
    for (int d = 0; d < n; d++) {
        if (!use[d] || !(inv[d] > 0.0) || !isfinite(inv[d]))
            continue;
        int lead = d; /* a link's first device stands for it */
        if (info[d].link > 0 && info[d].link_bandwidth > 0.0)
            for (int k = 0; k < d && lead == d; k++)
                if (info[k].link == info[d].link && info[k].link_bandwidth > 0.0)
                    lead = k;
        if (lead != d)
            continue; /* counted with its link's first device */
        if (!(info[d].link > 0 && info[d].link_bandwidth > 0.0)) {
            sum += fmax(0.0, T - lat[d]) / inv[d];
            continue;
        }
        double g = 0.0;
        for (int k = d; k < n; k++)
            if (use[k] && inv[k] > 0.0 && isfinite(inv[k]) && info[k].link == info[d].link &&
                info[k].link_bandwidth > 0.0)
                g += fmax(0.0, T - lat[k]) / inv[k];
        sum += fmin(g, info[d].link_bandwidth * T / rho);
    }
    return sum;
}

/* The bound with the declared shared links (see above); 0 when none. */
/* What link_bound's search asks at each T. */
struct link_fit {
    const double *lat, *inv;
    const int *use;
    const struct hf_device_info *info;
    int n;
    double rho, total;
};

static int link_fits(void *arg, double T)
{
    const struct link_fit *f = arg;
    return link_capacity(f->lat, f->inv, f->use, f->info, f->n, f->rho, T) >= f->total;
}

static double link_bound(const double *lat, const double *inv, const int *use,
                         const struct hf_device_info *info, int n, double total, double rho)
{
    int any = 0;
    for (int d = 0; d < n; d++)
        any |= use[d] && info[d].link > 0 && info[d].link_bandwidth > 0.0;
    if (!any || !(rho > 0.0) || !(total > 0.0))
        return 0.0;
    struct link_fit f = {lat, inv, use, info, n, rho, total};
    double below = 0.0;
    if (!isfinite(hf_cost_least_time(link_fits, &f, 0.0, &below)))
        return 0.0; /* no device can take the work: no bound from the link */
    return below; /* the lower end: the work does not fit there yet */
}

/* Bundles a device must have run in a round before its outliers can outvote
 * its model (hf__round_bound): a GPU's one stalled bundle of a round must stay
 * an outlier the bound does not believe. */
#define BOUND_MANY 8

double hf__round_bound(struct hf_cost_model *cost, const struct hf_round_device *st,
                       const int *cpu, const int *alive, int n, double total, double bytes,
                       size_t nchunks, const struct hf_device_info *info, double rho_min)
{
    if (n <= 0)
        return 0.0;
    double lat[n], inv[n], ibw[n];
    int use[n];
    double mean_w = nchunks ? total / (double)nchunks : 0.0;
    for (int d = 0; d < n; d++) {
        struct hf_cost_model *m = &cost[d];
        hf_cost_refit(m);
        use[d] = (!alive || alive[d]) && m->fitted;
        lat[d] = m->lat;
        inv[d] = m->inv;
        ibw[d] = m->inv_bw;
        /* A CPU team runs one chunk per bundle, so it pays its latency per
         * chunk, not once (as HASS's split models it): folded into its cost
         * per unit at the round's mean chunk. Without this, a CPU whose
         * chunks all had one size - its latency and slope cannot be told
         * apart, and noise decides the fit - could be credited with the whole
         * round for one latency (make run on a busy 2-core machine read
         * bound_s 0.011 s against a 0.59 s makespan). */
        if (cpu[d] && mean_w > 0.0) {
            inv[d] += lat[d] / mean_w;
            lat[d] = 0.0;
        }
        /* A device that ran work with no usable model is bound by what it
         * achieved: leaving it out could raise the bound past the makespan.
         * Nor does a model that flagged most of the device's bundles of the
         * round as outliers describe it: a few stalls are outliers, most of a
         * CPU team's 416 chunks are a model fitted on others (a learned load:
         * the CPU's model, fitted on chunks whose learned cost ran ahead of
         * their time, read 20x its achieved rate, and HASS's bound on the
         * irregular noop fell to 2.7 ms against a 52 ms round, efficiency
         * 0.05, on one H200 host). Its line is then what it achieved. */
        int no_model = !(use[d] && inv[d] > 0.0 && isfinite(inv[d]) && lat[d] >= 0.0 &&
                         ibw[d] >= 0.0);
        int outvoted = use[d] && st[d].bundles >= BOUND_MANY && 2 * st[d].outliers > st[d].bundles;
        if ((!alive || alive[d]) && st[d].work > 0 && st[d].busy_s > 0 && (no_model || outvoted)) {
            use[d] = 1;
            lat[d] = ibw[d] = 0.0;
            inv[d] = st[d].busy_s / st[d].work;
        }
        double model = lat[d] + inv[d] * st[d].work + ibw[d] * st[d].bytes;
        if (use[d] && st[d].work > 0 && model > st[d].busy_s) {
            double f = st[d].busy_s / model;
            lat[d] *= f;
            inv[d] *= f;
            ibw[d] *= f;
        }
    }
    double t = hf_cost_split_bound(lat, inv, ibw, use, n, total, bytes);
    t = isfinite(t) ? t : 0.0;
    if (info)
        t = fmax(t, link_bound(lat, inv, use, info, n, total, rho_min));
    return t;
}

void hf__round_bytes(const struct hf_round *r, double *bytes, double *rho_min)
{
    double b = 0.0, rho = INFINITY;
    for (size_t i = 0; i < r->nchunks; i++) {
        const struct hf_chunk *c = &r->chunks[i];
        b += c->bytes;
        if (c->work > 0.0)
            rho = fmin(rho, c->bytes > 0.0 ? c->bytes / c->work : 0.0);
    }
    *bytes = b;
    *rho_min = isfinite(rho) ? rho : 0.0;
}

/* The engine's round: its devices' models and statistics, and the round's
 * bytes and least bytes per unit of work (shared links; hf__round_bytes). */
static double round_bound(struct hf__engine *e, double bytes, double rho_min)
{
    int cpu[e->ndev];
    for (int d = 0; d < e->ndev; d++)
        cpu[d] = !hf_devlist_get(e->devs, d)->info.is_gpu;
    return hf__round_bound(e->cost, e->stats, cpu, e->alive, e->ndev, e->round.total_work, bytes,
                           e->round.nchunks, hf_devlist_view(e->devs)->dev, rho_min);
}

int hf__engine_adapt(struct hf__engine *e, double makespan_s, double *work, double *busy,
                     size_t *chunks)
{
    struct hf_round_report rep = {
        .round = e->round.round, .makespan_s = makespan_s, .work = work, .busy_s = busy,
        .chunks = chunks,
        .outside_s = e->bundles_to >= e->bundles_from
                         ? fmax(0.0, makespan_s - (e->bundles_to - e->bundles_from))
                         : 0.0,
    };
    hf_clear_error();
    int rc = e->sched->round_end ? e->sched->round_end(e->sched_state, &rep) : 0;
    if (rc)
        hf__engine_error(e, rc, "scheduler %s: adaptation failed after round %d: %s",
                         e->sched->name, rep.round,
                         *hf_last_error() ? hf_last_error() : hf_strerror(rc));
    return rc;
}

/* The device set the scheduler ran the round on (struct hf_set_choice), when
 * it chose one: kept in the round's record for results.json and the tables. */
static int record_device_set(struct hf__engine *e, struct hf_round_stats *rs)
{
    if (!e->sched->device_set)
        return 0;
    rs->set.use = calloc((size_t)e->ndev, sizeof *rs->set.use);
    if (!rs->set.use)
        return HF_ENOMEM;
    rs->has_set = e->sched->device_set(e->sched_state, &rs->set) == 1;
    if (!rs->has_set) {
        free(rs->set.use);
        rs->set.use = NULL;
    }
    return 0;
}

struct hf_round_stats *hf__run_round_slot(struct hf_run *run)
{
    if (run->nrounds >= run->rounds_cap) {
        int cap = run->rounds_cap > 0 ? 2 * run->rounds_cap : 16;
        struct hf_round_stats *r = realloc(run->rounds, (size_t)cap * sizeof *r);
        if (!r)
            return NULL;
        memset(r + run->rounds_cap, 0, (size_t)(cap - run->rounds_cap) * sizeof *r);
        run->rounds = r;
        run->rounds_cap = cap;
    }
    return &run->rounds[run->nrounds];
}

/* Fills the run's statistics for the round just ended and lets the scheduler adapt. */
int hf__engine_finish_round(struct hf__engine *e, struct hf_run *run)
{
    struct hf_round_stats *rs = hf__run_round_slot(run);
    if (!rs) {
        hf__engine_error(e, HF_ENOMEM, "engine: out of memory recording round %d",
                         e->round.round);
        return HF_ENOMEM;
    }
    rs->round = e->round.round;
    rs->makespan_s = e->round_end - e->round_start;
    rs->host = e->host;
    rs->load_units = e->load.units;
    rs->load_work = e->round.total_work;
    double rate = 0;
    for (int d = 0; d < e->ndev; d++)
        rate += e->alive[d] ? e->standalone[d] : 0;
    rs->ideal_s = rate > 0 ? e->round.total_work / rate : 0;
    double bytes, rho_min;
    hf__round_bytes(&e->round, &bytes, &rho_min);
    rs->bound_s = round_bound(e, bytes, rho_min);
    rs->efficiency = rs->makespan_s > 0 ? rs->bound_s / rs->makespan_s : 0;
    hf__sim_bounds(e, bytes, rho_min, &rs->sim_bound_s, &rs->sim_chunk_bound_s);
    rs->dev = calloc((size_t)e->ndev, sizeof *rs->dev);
    rs->plan = calloc((size_t)e->ndev, sizeof *rs->plan);
    double *work = calloc((size_t)e->ndev, sizeof *work);
    double *busy = calloc((size_t)e->ndev, sizeof *busy);
    size_t *chunks = calloc((size_t)e->ndev, sizeof *chunks);
    int rc = rs->dev && rs->plan && work && busy && chunks ? 0 : HF_ENOMEM;
    if (rc == 0) {
        run->nrounds++;
        for (int d = 0; d < e->ndev; d++) {
            e->stats[d].share = e->round.total_work > 0 ? e->stats[d].work / e->round.total_work : 0;
            rs->dev[d] = e->stats[d];
            work[d] = hf__engine_ran_work(e, d);
            busy[d] = e->stats[d].busy_s;
            chunks[d] = e->stats[d].chunks;
        }
        rc = hf__nodes_round_end(e, rs);
        if (rc == 0)
            rc = record_device_set(e, rs);
        if (rc == 0)
            rc = hf__engine_adapt(e, rs->makespan_s, work, busy, chunks);
        if (rc == 0 && e->sched->plan)
            rs->has_plan = e->sched->plan(e->sched_state, rs->plan);
    }
    seat_gpus(e);
    free(work);
    free(busy);
    free(chunks);
    return rc;
}

/* Checks the round's result against the app's reference. */
int hf__engine_verify_round(struct hf__engine *e)
{
    if (!e->opts->verify || !e->executes || !e->app->verify)
        return 0;
    hf_clear_error();
    int rc = e->app->verify(e->app_ctx, &e->load);
    if (rc)
        hf__engine_error(e, rc, "app %s: round %d failed verification: %s", e->app->name,
                         e->round.round, *hf_last_error() ? hf_last_error() : hf_strerror(rc));
    return rc;
}
