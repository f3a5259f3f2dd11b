/* engine_steps.c - what both engines do with one span: take it, bundle it,
 * record it when it finished, and handle it when it failed.
 *
 * DESIGN
 * ------
 * A policy must behave the same on real devices and in simulation, so every
 * per-span decision lives here and engine_real.c / engine_sim.c only decide
 * *when* to call it (a host thread per device, or the next event in virtual
 * time). Taking work serves spans put back by a failed device before asking
 * the scheduler, because those chunks are already late; every span is then
 * claimed in the pool, which refuses overlaps, so a scheduler bug becomes a
 * loud HF_ESCHED instead of a chunk run twice. A device fault (HF_EDEVICE,
 * HF_EDEVOOM) retires the device for the rest of the run: its span and all the
 * scheduler still meant for it go to the orphan queue that the surviving
 * devices drain first. Any other error is the app's and stops the run. All of
 * these run under the engine lock (real) or on the only thread (sim).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_internal.h"
#include "io/progress.h"
#include "shared.h"

#define HF_MAX_EVENTS 400000 /* per run; later bundles still count, but are not drawn */

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
    /* An interrupt (SIGINT, SIGTERM) stops the handing out of work: the
     * bundles already running finish and the round fails as a whole. */
    if (!e->error && hf_run_interrupted())
        hf__engine_error(e, HF_EINTR, "interrupted by signal %d in round %d",
                         hf_run_interrupted(), e->round.round);
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
    b->first = e->chunks[span->first].index; /* the load's numbering, also in a node's part */
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
static void record_event(struct hf__engine *e, int dev, const struct hf_span *span, double work,
                         double start, double end, const struct hf_bundle_times *t, int outlier)
{
    const struct hf_device *d = hf_devlist_get(e->devs, dev);
    long li = e->last_event[dev];
    if (li >= 0 && !d->info.is_gpu) {
        struct hf_event *p = &e->events[li];
        if (p->round == e->round.round && p->first + p->count == span->first &&
            p->stolen == span->stolen) {
            p->count += span->count;
            p->work += work;
            p->end_s = end;
            p->outlier |= outlier;
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
        .outlier = outlier,
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
    double work = 0, bytes = 0;
    for (size_t i = span->first; i < span->first + span->count; i++) {
        work += e->round.chunks[i].work;
        bytes += e->round.chunks[i].bytes;
    }
    /* Only a GPU moves its chunks' bytes (a CPU works on host memory). */
    if (!hf_devlist_get(e->devs, dev)->info.is_gpu)
        bytes = 0;
    s->chunks += span->count;
    s->bundles++;
    s->stolen += span->stolen ? span->count : 0;
    /* Work the bundle did past its chunks (hf_bundle_did_more) counts in
     * the device's rates, not in its share of the load or its chunks' costs. */
    double more = hf__shared_take_more(e->shared, dev);
    s->work += work;
    s->more_work += more;
    s->bytes += bytes;
    s->busy_s += end - start;
    if (end > e->round_end)
        e->round_end = end;
    e->bundles_from = fmin(e->bundles_from, start);
    e->bundles_to = fmax(e->bundles_to, end);
    /* Every bundle is an observation of its chunks' cost (chunk_cost.c);
     * in a scheduled round one the cost model flags as an outlier is not
     * folded (a stall says nothing about the chunks; in a standalone pass,
     * where no trouble is modelled, a chunk far dearer than the declared
     * work is just what there is to learn) but still a view for the judge
     * (a chunk dear every time it runs is an outlier every time). Every
     * bundle feeds the device's cost model, the standalone passes' too (a
     * GPU's whole-load bundle is the best view of its latency). */
    int outlier = hf_cost_add(&e->cost[dev], work + more, bytes, end - start);
    /* Nor is a GPU's first bundle of the scheduled rounds: it holds the first
     * launch (40 ms on an H200; the sim's warmup_ms), which the chunk costs
     * put on the one chunk it held - 1,800x its cost in the stress matrix's
     * hump cells, 20% of the load's learned work on 0.1% of its real work. */
    int gpu = hf_devlist_get(e->devs, dev)->info.is_gpu;
    int launch = gpu && e->recording && !e->launched[dev];
    e->launched[dev] |= gpu && e->recording;
    if (!launch && !(more > 0.0))
        hf__chunk_cost_observe(&e->chunk_cost, span->first, span->count, dev,
                               !e->recording || !gpu, outlier && e->recording, end - start);
    s->outliers += (size_t)outlier;
    if (e->recording || e->keep_events)
        record_event(e, dev, span, work, start, end, t, outlier);
    if (e->shared && (rc = hf__shared_bundle_ran(e->shared, dev, e->chunks[span->first].begin,
                                                 e->chunks[span->first + span->count - 1].end))) {
        hf__engine_error(e, rc, "round %d: %s", e->round.round, hf_last_error());
        return rc;
    }
    if (e->sched->finished)
        e->sched->finished(e->sched_state, dev, span, end - start);
    e->progress_gen++;
    if (e->show_progress)
        hf__progress(e->sched->name, e->round.round, e->opts->rounds,
                     e->chunks_before + hf_pool_done(e->pool),
                     (size_t)e->opts->rounds * e->nchunks, hf__now() - e->wall_t0);
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
