/* engine.c - the round loop shared by the real and the simulated engine.
 *
 * DESIGN
 * ------
 * One function, hf_run(), owns the life of a run: devices, app context,
 * scheduler, profile store and the exactly-once pool. Every round follows the
 * same steps: next_load -> partition -> scheduler.round_begin -> run the round
 * (engine_real.c with a thread per device, or engine_sim.c with events in
 * virtual time) -> scheduler.round_end (adaptation) -> verify -> statistics.
 *
 * What both engines share lives here, so a policy behaves the same on both:
 * taking work (spans put back by a failed device first, then the scheduler,
 * then a claim in the pool that refuses overlaps), recording a finished
 * bundle, and handling a failure. A device fault (HF_EDEVICE, HF_EDEVOOM)
 * retires the device: its span and everything the scheduler still meant for
 * it go to an orphan queue that the surviving devices drain first, so the
 * round completes with every chunk run exactly once. Any other error stops
 * the run and no results are produced.
 *
 * The ideal makespan needs each device's standalone rate: the whole load run
 * on that device alone. Before round 0 the engine runs one such "solo" round
 * per device with a built-in policy (GPUs get the load as one bundle, CPUs
 * chunk by chunk), in virtual time for sim and for real otherwise; real
 * rates are kept in the profile store and reused until `hetfarm profile`.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_internal.h"
#include "progress.h"

#define HF_MAX_EVENTS 400000 /* per run; later bundles still count, but are not drawn */
#define HF_SOLO_PASSES 3       /* standalone passes of a short load on a real device */
#define HF_SOLO_ENOUGH_S 2.0   /* a load measured for this long needs no second pass */
#define HF_SOLO_SAMPLE 4       /* chunks of a real CPU's first standalone sample */

double hf__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void hf__engine_error(struct hf__engine *e, int rc, const char *fmt, ...)
{
    if (e->error)
        return;
    e->error = rc;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->errmsg, sizeof e->errmsg, fmt, ap);
    va_end(ap);
}

/* ---- orphan queue ---------------------------------------------------------- */

static int orphan_push(struct hf__span_queue *q, struct hf_span s)
{
    if (q->head + q->n == q->cap) {
        if (q->head > 0) {
            memmove(q->v, q->v + q->head, q->n * sizeof *q->v);
            q->head = 0;
        } else {
            size_t cap = q->cap ? 2 * q->cap : 16;
            struct hf_span *v = realloc(q->v, cap * sizeof *v);
            if (!v)
                return HF_ENOMEM;
            q->v = v;
            q->cap = cap;
        }
    }
    q->v[q->head + q->n++] = s;
    return 0;
}

/* Takes work from the front orphan span: a GPU takes all of it, a CPU one chunk. */
static int orphan_pop(struct hf__span_queue *q, int whole, struct hf_span *out)
{
    if (q->n == 0)
        return 0;
    struct hf_span *front = &q->v[q->head];
    *out = *front;
    out->stolen = 0;
    if (!whole && front->count > 1) {
        out->count = 1;
        front->first++;
        front->count--;
    } else {
        q->head++;
        q->n--;
    }
    return 1;
}

/* ---- shared steps ------------------------------------------------------------ */

int hf__engine_take(struct hf__engine *e, int dev, struct hf_span *span)
{
    if (e->error || !e->alive[dev])
        return 0;
    const struct hf_device *d = hf_devlist_get(e->devs, dev);
    memset(span, 0, sizeof *span);
    if (!orphan_pop(&e->orphans, d->info.is_gpu, span)) {
        hf_clear_error();
        int rc = e->sched->next(e->sched_state, dev, span);
        if (rc <= 0) {
            if (rc < 0)
                hf__engine_error(e, rc, "scheduler %s failed handing work to %s: %s",
                                 e->sched->name, d->info.name,
                                 *hf_last_error() ? hf_last_error() : hf_strerror(rc));
            return rc;
        }
    }
    hf_clear_error();
    int rc = hf_pool_claim(e->pool, span->first, span->count);
    if (rc) {
        hf__engine_error(e, rc, "scheduler %s, round %d, device %s: %s", e->sched->name,
                         e->round.round, d->info.name, hf_last_error());
        return rc;
    }
    return 1;
}

int hf__engine_bundle(struct hf__engine *e, int dev, const struct hf_span *span,
                      struct hf_bundle *b)
{
    memset(b, 0, sizeof *b);
    int (*bundler)(void *, const struct hf_chunk *, size_t, struct hf_bundle *) =
        e->app->bundle ? e->app->bundle : hf_bundle_merge;
    int rc = bundler(e->app_ctx, e->chunks + span->first, span->count, b);
    b->load = &e->load;
    b->first = span->first;
    b->count = span->count;
    b->device = dev;
    return rc;
}

int hf__engine_fault_due(struct hf__engine *e, int dev)
{
    struct hf_device *d = hf_devlist_get(e->devs, dev);
    int n = d->bundles_this_round++;
    return e->recording && d->fault_round == e->round.round && d->fault_bundle == n;
}

/* Appends an event, merging a CPU chunk into the previous one when it
 * continues it directly (a CPU draining its buffer is one bar, not thousands). */
static void record_event(struct hf__engine *e, int dev, const struct hf_span *span, double start,
                         double end, const struct hf_bundle_times *t)
{
    const struct hf_device *d = hf_devlist_get(e->devs, dev);
    double work = 0;
    for (size_t i = span->first; i < span->first + span->count; i++)
        work += e->chunks[i].work;
    long li = e->last_event[dev];
    if (li >= 0 && !d->info.is_gpu) {
        struct hf_event *p = &e->events[li];
        if (p->round == e->round.round && p->first + p->count == span->first &&
            p->stolen == span->stolen) {
            p->count += span->count;
            p->work += work;
            p->end_s = end;
            return;
        }
    }
    if (e->nevents == HF_MAX_EVENTS)
        return;
    if (e->nevents == e->events_cap) {
        size_t cap = e->events_cap ? 2 * e->events_cap : 1024;
        struct hf_event *v = realloc(e->events, cap * sizeof *v);
        if (!v)
            return; /* the trace loses bars; the run itself is unaffected */
        e->events = v;
        e->events_cap = cap;
    }
    e->events[e->nevents] = (struct hf_event){
        .round = e->round.round, .device = dev, .first = span->first, .count = span->count,
        .work = work, .start_s = start, .end_s = end, .t = *t, .stolen = span->stolen,
    };
    e->last_event[dev] = (long)e->nevents++;
}

int hf__engine_done(struct hf__engine *e, int dev, const struct hf_span *span, double start,
                    double end, const struct hf_bundle_times *t)
{
    hf_clear_error();
    int rc = hf_pool_complete(e->pool, span->first, span->count);
    if (rc) {
        hf__engine_error(e, rc, "round %d: %s", e->round.round, hf_last_error());
        return rc;
    }
    struct hf_round_device *s = &e->stats[dev];
    double work = 0;
    for (size_t i = span->first; i < span->first + span->count; i++)
        work += e->chunks[i].work;
    s->chunks += span->count;
    s->bundles++;
    s->stolen += span->stolen ? span->count : 0;
    s->work += work;
    s->busy_s += end - start;
    if (end > e->round_end)
        e->round_end = end;
    if (e->recording)
        record_event(e, dev, span, start, end, t);
    if (e->sched->finished)
        e->sched->finished(e->sched_state, dev, span, end - start);
    e->progress_gen++;
    return 0;
}

/* Everything the scheduler still meant for a retired device goes to the
 * orphans; bounded, because a policy may hand out the whole shared pool. */
static void drain_retired(struct hf__engine *e, int dev)
{
    struct hf_span s;
    for (size_t guard = 0; guard <= e->nchunks; guard++) {
        memset(&s, 0, sizeof s);
        if (e->sched->next(e->sched_state, dev, &s) <= 0)
            return;
        if (orphan_push(&e->orphans, s)) {
            hf__engine_error(e, HF_ENOMEM, "out of memory re-queuing chunks of a failed device");
            return;
        }
    }
}

void hf__engine_failed(struct hf__engine *e, int dev, const struct hf_span *span, int rc,
                       const char *msg)
{
    struct hf_device *d = hf_devlist_get(e->devs, dev);
    if (rc != HF_EDEVICE && rc != HF_EDEVOOM) {
        hf__engine_error(e, rc, "app %s failed on %s, round %d, chunks [%zu, %zu): %s",
                         e->app->name, d->info.name, e->round.round, span->first,
                         span->first + span->count, *msg ? msg : hf_strerror(rc));
        return;
    }
    /* A device fault: retire the device and give its work to the others. */
    if (!e->fault[0])
        snprintf(e->fault, sizeof e->fault, "%s retired in round %d at chunks [%zu, %zu): %s",
                 d->info.name, e->round.round, span->first, span->first + span->count,
                 *msg ? msg : hf_strerror(rc));
    fprintf(stderr, "hetfarm: %s failed (%s); its chunks go to the other devices\n",
            d->info.name, *msg ? msg : hf_strerror(rc));
    e->alive[dev] = 0;
    hf_pool_release(e->pool, span->first, span->count);
    struct hf_span back = *span;
    back.stolen = 0;
    if (orphan_push(&e->orphans, back)) {
        hf__engine_error(e, HF_ENOMEM, "out of memory re-queuing chunks of a failed device");
        return;
    }
    drain_retired(e, dev);
    int any = 0;
    for (int i = 0; i < e->ndev; i++)
        any |= e->alive[i];
    if (!any)
        hf__engine_error(e, HF_EDEVICE, "every device failed; last: %s: %s", d->info.name,
                         *msg ? msg : hf_strerror(rc));
    e->progress_gen++;
}

int hf__engine_round_complete(struct hf__engine *e)
{
    return hf_pool_done(e->pool) >= e->round_target;
}

int hf__engine_stalled(struct hf__engine *e, int inflight)
{
    if (inflight || e->orphans.n || e->error || hf__engine_round_complete(e))
        return 0;
    for (int d = 0; d < e->ndev; d++)
        if (e->alive[d] && e->asked_gen[d] != e->progress_gen)
            return 0;
    hf__engine_error(e, HF_ESCHED,
                     "scheduler %s stopped handing out work in round %d with %zu of %zu chunks "
                     "never run",
                     e->sched->name, e->round.round, e->nchunks - hf_pool_done(e->pool),
                     e->nchunks);
    return 1;
}

/* ---- the solo policy: one device runs the whole load (standalone rates) ----- */

struct solo {
    int target, is_gpu;
    size_t next, n;
    size_t limit; /* chunks to hand out (a CPU's sample); 0 = the whole load */
};

static int solo_create(void **state, const struct hf_sched_env *env)
{
    (void)env;
    *state = calloc(1, sizeof(struct solo));
    return *state ? 0 : HF_ENOMEM;
}

static int solo_round_begin(void *state, const struct hf_round *r)
{
    struct solo *s = state;
    s->next = 0;
    s->n = s->limit && s->limit < r->nchunks ? s->limit : r->nchunks;
    return 0;
}

static int solo_next(void *state, int dev, struct hf_span *out)
{
    struct solo *s = state;
    if (dev != s->target || s->next == s->n)
        return 0;
    out->first = s->next;
    out->count = s->is_gpu ? s->n - s->next : 1;
    s->next += out->count;
    return 1;
}

static void solo_destroy(void *state)
{
    free(state);
}

static const struct hf_sched_ops solo_ops = {
    .name = "solo",
    .create = solo_create,
    .round_begin = solo_round_begin,
    .next = solo_next,
    .destroy = solo_destroy,
};

/* ---- the round loop ------------------------------------------------------------ */

/* Draws the next load and cuts it into chunks. Returns 1, 0 (no more loads) or an error. */
static int prepare_round(struct hf__engine *e, int round)
{
    memset(&e->load, 0, sizeof e->load);
    e->load.round = round;
    hf_clear_error();
    int rc = e->app->next_load(e->app_ctx, &e->load);
    if (rc <= 0) {
        if (rc < 0)
            hf__engine_error(e, rc, "app %s: next_load failed for round %d: %s", e->app->name,
                             round, *hf_last_error() ? hf_last_error() : hf_strerror(rc));
        return rc;
    }
    if (e->load.units == 0) {
        hf__engine_error(e, HF_EINVAL, "app %s produced a zero-sized load in round %d",
                         e->app->name, round);
        return HF_EINVAL;
    }
    size_t grain = e->opts->grain ? e->opts->grain : e->app->default_grain;
    if (grain == 0)
        grain = 1;
    size_t (*part)(void *, const struct hf_load *, size_t, struct hf_chunk *, size_t) =
        e->app->partition ? e->app->partition : hf_partition_even;
    size_t n = part(e->app_ctx, &e->load, grain, NULL, 0);
    if (n == 0) {
        hf__engine_error(e, HF_EINVAL, "app %s: the partitioner made no chunks", e->app->name);
        return HF_EINVAL;
    }
    if (n > e->chunks_cap) {
        struct hf_chunk *c = realloc(e->chunks, n * sizeof *c);
        if (!c) {
            hf__engine_error(e, HF_ENOMEM, "cannot hold %zu chunks", n);
            return HF_ENOMEM;
        }
        e->chunks = c;
        e->chunks_cap = n;
    }
    e->nchunks = part(e->app_ctx, &e->load, grain, e->chunks, n);
    double total = 0;
    for (size_t i = 0; i < e->nchunks; i++) {
        e->chunks[i].index = i;
        total += e->chunks[i].work;
    }
    e->round_target = e->nchunks;
    if ((rc = hf_pool_reset(e->pool, e->nchunks))) {
        hf__engine_error(e, rc, "%s", hf_last_error());
        return rc;
    }
    e->round = (struct hf_round){
        .round = round, .nchunks = e->nchunks, .chunks = e->chunks, .total_work = total,
        .alive = e->alive, .standalone_rate = e->standalone,
    };
    memset(e->stats, 0, (size_t)e->ndev * sizeof *e->stats);
    for (int d = 0; d < e->ndev; d++) {
        hf_devlist_get(e->devs, d)->bundles_this_round = 0;
        e->asked_gen[d] = (unsigned long)-1;
        e->last_event[d] = -1;
    }
    e->orphans.head = e->orphans.n = 0;
    return 1;
}

/* Runs the prepared round on the chosen engine. */
static int execute_round(struct hf__engine *e)
{
    hf_clear_error();
    int rc = e->sched->round_begin(e->sched_state, &e->round);
    if (rc) {
        hf__engine_error(e, rc, "scheduler %s: round_begin failed: %s", e->sched->name,
                         *hf_last_error() ? hf_last_error() : hf_strerror(rc));
        return rc;
    }
    rc = e->opts->engine == HF_ENGINE_REAL ? hf__real_round(e) : hf__sim_round(e);
    if (rc == 0 && !e->error && !hf__engine_round_complete(e))
        hf__engine_error(e, HF_ESCHED, "round %d ended with %zu of %zu chunks not run",
                         e->round.round, e->nchunks - hf_pool_done(e->pool), e->nchunks);
    return e->error ? e->error : rc;
}

/* Measures (or reads from the profile) each device's standalone rate. */
static int measure_standalone(struct hf__engine *e)
{
    e->standalone = calloc((size_t)e->ndev, sizeof *e->standalone);
    if (!e->standalone)
        return HF_ENOMEM;
    int simulated = e->opts->engine == HF_ENGINE_SIM;
    const struct hf_sched_ops *user = e->sched;
    void *user_state = e->sched_state;
    struct solo solo = {0};
    e->sched = &solo_ops;
    e->sched_state = &solo;
    int rc = 0;
    for (int d = 0; d < e->ndev && rc == 0; d++) {
        const struct hf_device *dev = hf_devlist_get(e->devs, d);
        if (!e->alive[d])
            continue;
        if (!simulated && !e->opts->reprofile &&
            hf_profile_get(e->profile, dev->info.name, "standalone_rate", &e->standalone[d], 1) ==
                1 &&
            e->standalone[d] > 0)
            continue;
        solo.target = d;
        solo.is_gpu = dev->info.is_gpu;
        /* A cold first pass (thread start-up, first touch, library loading) would
         * understate a real device: repeat short loads and keep the best pass.
         * A CPU runs a load chunk by chunk at a steady rate, so on a real CPU
         * a sample of about HF_SOLO_ENOUGH_S seconds of chunks measures the
         * rate of the whole load (a 30-core CPU needs minutes for a whole
         * n = 32768 GEMM); a GPU always runs the whole load as one bundle. */
        double spent = 0;
        solo.limit = simulated || dev->info.is_gpu ? 0 : HF_SOLO_SAMPLE;
        for (int pass = 0; rc == 0 && pass < (simulated ? 1 : HF_SOLO_PASSES); pass++) {
            if (pass > 0 && spent > HF_SOLO_ENOUGH_S)
                break;
            rc = prepare_round(e, 0);
            if (rc == 0) {
                hf__engine_error(e, HF_EINVAL, "app %s produced no load", e->app->name);
                rc = HF_EINVAL;
            }
            if (rc < 0)
                break;
            if (solo.limit && solo.limit < e->nchunks)
                e->round_target = solo.limit;
            double t0 = simulated ? e->sim_now : hf__now();
            e->round_start = t0;
            e->round_end = t0;
            rc = execute_round(e);
            double work = 0;
            for (int k = 0; k < e->ndev; k++)
                work += e->stats[k].work;
            double s = e->round_end - t0, rate = s > 0 ? work / s : 0;
            spent += s;
            if (rc == 0 && rate > e->standalone[d])
                e->standalone[d] = rate;
            /* Size the next sample to about HF_SOLO_ENOUGH_S seconds. */
            if (rc == 0 && solo.limit && s > 0)
                solo.limit = (size_t)fmax(HF_SOLO_SAMPLE,
                                          (double)solo.limit * HF_SOLO_ENOUGH_S / s);
        }
        if (rc == 0 && !simulated)
            hf_profile_set(e->profile, dev->info.name, "standalone_rate", &e->standalone[d], 1);
    }
    e->sched = user;
    e->sched_state = user_state;
    return rc;
}

/* Fills the run's statistics for the round just ended and lets the scheduler adapt. */
static int finish_round(struct hf__engine *e, struct hf_run *run)
{
    struct hf_round_stats *rs = &run->rounds[run->nrounds];
    rs->round = e->round.round;
    rs->makespan_s = e->round_end - e->round_start;
    double rate = 0;
    for (int d = 0; d < e->ndev; d++)
        rate += e->alive[d] ? e->standalone[d] : 0;
    rs->ideal_s = rate > 0 ? e->round.total_work / rate : 0;
    rs->efficiency = rs->makespan_s > 0 ? rs->ideal_s / rs->makespan_s : 0;
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
            work[d] = e->stats[d].work;
            busy[d] = e->stats[d].busy_s;
            chunks[d] = e->stats[d].chunks;
        }
        struct hf_round_report rep = {
            .round = e->round.round, .makespan_s = rs->makespan_s, .work = work,
            .busy_s = busy, .chunks = chunks,
        };
        hf_clear_error();
        if (e->sched->round_end && (rc = e->sched->round_end(e->sched_state, &rep)))
            hf__engine_error(e, rc, "scheduler %s: adaptation failed after round %d: %s",
                             e->sched->name, rep.round,
                             *hf_last_error() ? hf_last_error() : hf_strerror(rc));
        if (rc == 0 && e->sched->plan)
            rs->has_plan = e->sched->plan(e->sched_state, rs->plan);
    }
    free(work);
    free(busy);
    free(chunks);
    return rc;
}

/* Checks the round's result against the app's reference. */
static int verify_round(struct hf__engine *e)
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

/* Creates the run record with the device list filled in. */
static struct hf_run *new_run(struct hf__engine *e)
{
    struct hf_run *run = calloc(1, sizeof *run);
    if (!run)
        return NULL;
    snprintf(run->scheduler, sizeof run->scheduler, "%s", e->opts->sched->name);
    snprintf(run->app, sizeof run->app, "%s", e->app->name);
    snprintf(run->engine, sizeof run->engine, "%s",
             e->opts->engine == HF_ENGINE_REAL ? "real" : "sim");
    run->ndevices = e->ndev;
    run->devs = calloc((size_t)e->ndev, sizeof *run->devs);
    run->standalone_rate = calloc((size_t)e->ndev, sizeof *run->standalone_rate);
    run->rounds = calloc((size_t)(e->opts->rounds > 0 ? e->opts->rounds : 1), sizeof *run->rounds);
    if (!run->devs || !run->standalone_rate || !run->rounds) {
        hf_run_free(run);
        return NULL;
    }
    for (int d = 0; d < e->ndev; d++)
        run->devs[d] = hf_devlist_get(e->devs, d)->info;
    return run;
}

/* Sets up everything a run needs; the counterpart is teardown(). */
static int setup(struct hf__engine *e, const struct hf_run_options *o)
{
    e->opts = o;
    e->app = o->app;
    int simulated = o->engine == HF_ENGINE_SIM;
    int rc = hf_devlist_init(&e->devs, o->cfg, simulated);
    if (rc)
        return rc;
    e->ndev = hf_devlist_count(e->devs);
    e->executes = !simulated || o->execute;
    e->sim_now = 0;
    e->rng = o->seed * 0x9E3779B97F4A7C15ull + 1;
    e->alive = calloc((size_t)e->ndev, sizeof *e->alive);
    e->stats = calloc((size_t)e->ndev, sizeof *e->stats);
    e->asked_gen = calloc((size_t)e->ndev, sizeof *e->asked_gen);
    e->last_event = calloc((size_t)e->ndev, sizeof *e->last_event);
    if (!e->alive || !e->stats || !e->asked_gen || !e->last_event)
        return hf_fail(HF_ENOMEM, "engine: out of memory");
    /* A real GPU cannot run an app without a GPU kernel. */
    int any = 0;
    for (int d = 0; d < e->ndev; d++) {
        const struct hf_device *dev = hf_devlist_get(e->devs, d);
        e->alive[d] = !(dev->info.kind == HF_DEV_CUDA && !e->app->run_cuda);
        any |= e->alive[d];
    }
    if (!any)
        return hf_fail(HF_ENODEV, "app %s has no GPU kernel and no CPU device is configured",
                       e->app->name);
    if ((rc = hf_pool_init(&e->pool)))
        return rc;
    hf_clear_error();
    if ((rc = e->app->create(&e->app_ctx, o->cfg)))
        return *hf_last_error() ? rc : hf_fail(rc, "app %s: create failed", e->app->name);
    char sig[128] = "";
    e->app->signature(e->app_ctx, sig, sizeof sig);
    /* Simulated devices have nothing to measure: their numbers stay in memory,
     * so a simulation never depends on what an earlier one left on disk. */
    if ((rc = hf_profile_open(&e->profile, simulated ? NULL : o->profile_dir, e->app->name, sig)))
        return rc;
    struct hf_devices view = *hf_devlist_view(e->devs);
    view.executes = e->executes;
    if (e->executes && e->app->setup && (rc = e->app->setup(e->app_ctx, &view)))
        return *hf_last_error() ? rc : hf_fail(rc, "app %s: setup failed", e->app->name);
    if (o->engine == HF_ENGINE_REAL && (rc = hf__real_start(e)))
        return rc;
    return 0;
}

static void teardown(struct hf__engine *e)
{
    if (e->real)
        hf__real_stop(e);
    if (e->sched_state && e->sched->destroy)
        e->sched->destroy(e->sched_state);
    if (e->app_ctx && e->app->teardown)
        e->app->teardown(e->app_ctx);
    hf_profile_destroy(e->profile);
    hf_pool_destroy(e->pool);
    if (e->devs)
        hf_devlist_destroy(e->devs);
    free(e->alive);
    free(e->stats);
    free(e->asked_gen);
    free(e->last_event);
    free(e->standalone);
    free(e->chunks);
    free(e->orphans.v);
    free(e->events);
}

/* Runs the rounds proper, after the standalone rates are known. */
static int run_rounds(struct hf__engine *e, struct hf_run *run)
{
    const struct hf_run_options *o = e->opts;
    struct hf_sched_env env = {
        .ndevices = e->ndev, .dev = hf_devlist_view(e->devs)->dev, .cfg = o->cfg,
        .profile = e->profile, .app = e->app->name, .seed = o->seed,
    };
    e->sched = o->sched;
    hf_clear_error();
    int rc = e->sched->create(&e->sched_state, &env);
    if (rc) {
        e->sched_state = NULL;
        return *hf_last_error() ? rc : hf_fail(rc, "scheduler %s: create failed", e->sched->name);
    }
    e->recording = 1;
    double run_t0 = o->engine == HF_ENGINE_REAL ? hf__now() : e->sim_now;
    for (int r = 0; r < o->rounds; r++) {
        rc = prepare_round(e, r);
        if (rc <= 0)
            break;
        e->round_start = o->engine == HF_ENGINE_REAL ? hf__now() : e->sim_now;
        e->round_end = e->round_start;
        size_t first_event = e->nevents;
        if ((rc = execute_round(e)) || (rc = finish_round(e, run)) || (rc = verify_round(e)))
            break;
        for (size_t i = first_event; i < e->nevents; i++) {
            e->events[i].start_s -= run_t0;
            e->events[i].end_s -= run_t0;
        }
        if (o->progress)
            hf__progress(o->sched->name, r, o->rounds, (size_t)(r + 1) * e->nchunks,
                         (size_t)o->rounds * e->nchunks,
                         (o->engine == HF_ENGINE_REAL ? hf__now() : e->sim_now) - run_t0);
    }
    if (o->progress)
        hf__progress_end();
    run->total_work = e->round.total_work;
    return rc < 0 ? rc : 0;
}

int hf_run(const struct hf_run_options *o, struct hf_run **out)
{
    *out = NULL;
    HF_ASSERT_MSG(o && o->app && o->sched && o->cfg, "hf_run needs an app, a scheduler and a config");
    if (o->rounds <= 0)
        return hf_fail(HF_EINVAL, "rounds = %d: a run needs at least one round", o->rounds);
    struct hf__engine e = {0};
    struct hf_run *run = NULL;
    double wall0 = hf__now();
    hf_clear_error();
    int rc = setup(&e, o);
    if (rc == 0 && !(run = new_run(&e)))
        rc = hf_fail(HF_ENOMEM, "engine: out of memory");
    if (rc == 0)
        rc = measure_standalone(&e);
    if (rc == 0)
        rc = run_rounds(&e, run);
    if (rc == 0 && e.error)
        rc = e.error;
    if (rc == 0) {
        e.app->signature(e.app_ctx, run->signature, sizeof run->signature);
        memcpy(run->standalone_rate, e.standalone, (size_t)e.ndev * sizeof *e.standalone);
        memcpy(run->fault, e.fault, sizeof run->fault);
        run->events = e.events;
        run->nevents = e.nevents;
        e.events = NULL;
        rc = hf_profile_save(e.profile);
    }
    if (e.error) {
        hf_clear_error();
        hf_fail(e.error, "%s", e.errmsg);
    }
    teardown(&e);
    if (rc) {
        hf_run_free(run);
        return rc;
    }
    run->wall_s = hf__now() - wall0;
    *out = run;
    return 0;
}

void hf_run_free(struct hf_run *run)
{
    if (!run)
        return;
    for (int i = 0; i < run->nrounds; i++) {
        free(run->rounds[i].dev);
        free(run->rounds[i].plan);
    }
    free(run->rounds);
    free(run->devs);
    free(run->standalone_rate);
    free(run->events);
    free(run);
}
