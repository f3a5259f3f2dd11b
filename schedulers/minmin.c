/* minmin.c - static min-min (Braun et al. 2001) over the chunks of a round.
 *
 * DESIGN
 * ------
 * Min-min maps independent tasks to machines from an expected-time-to-compute
 * matrix: among the unassigned tasks, take the one whose minimum completion
 * time (ready time of a machine + ETC) is smallest, give it to that machine,
 * update the machine's ready time, repeat. Here a task is a chunk and
 * ETC[t][d] = chunks[t].work / standalone_rate[d] (the engine's profile of each
 * device running a whole load alone, transfers included). With an ETC of that
 * "consistent" form every machine ranks the tasks the same way, so the task
 * with the smallest minimum completion time is always the unassigned one with
 * the least work: min-min is then exactly "visit the chunks by increasing work
 * (ties in chunk order), give each to the device with the earliest completion
 * time", which is what we compute, in O(chunks x devices) instead of
 * O(chunks^2 x devices). Chunks of one load have equal nominal size, so only
 * the number of chunks each device got matters: each device then receives that
 * many chunks as one contiguous range (GPUs first), a GPU as one bundle and a
 * CPU chunk by chunk. The mapping is static: no stealing, no adaptation; it is
 * recomputed every round from the same profile. Without standalone rates (the
 * engine has not measured them), round 0 first gives every alive device one
 * profiling chunk, takes rate = work/seconds from it, and maps the rest of the
 * round (and every later round) with those rates.
 */
#include <stdlib.h>
#include <string.h>

#include "device_set.h"
#include "sched.h"
#include "sched_util.h"

/* A chunk as min-min sees it: its work and its index. */
struct task {
    double work;
    size_t index;
};

struct minmin {
    int ndev;
    const struct hf_device_info *dev;
    double *rate;      /* work/s used for the ETC matrix; 0 = unknown */
    double *plan;      /* shares of the last mapping */
    int have_rates, mapped;
    int *profiling;    /* round 0 without a profile: 1 = chunk out, 2 = measured */
    size_t pool_next;
    struct hf__buf *buf;
    const struct hf_round *r;
    struct task *order; /* chunks sorted by work */
    size_t order_cap;
    struct hf__devset devset; /* which devices take part (device_set.c) */
};

static void minmin_destroy(void *state)
{
    struct minmin *m = state;
    if (!m)
        return;
    hf__devset_free(&m->devset);
    free(m->rate);
    free(m->plan);
    free(m->profiling);
    free(m->buf);
    free(m->order);
    free(m);
}

static int minmin_create(void **state, const struct hf_sched_env *env)
{
    struct minmin *m = calloc(1, sizeof *m);
    if (!m)
        return hf_fail(HF_ENOMEM, "minmin: out of memory");
    m->ndev = env->ndevices;
    m->dev = env->dev;
    size_t n = (size_t)(m->ndev > 0 ? m->ndev : 1);
    m->rate = calloc(n, sizeof *m->rate);
    m->plan = calloc(n, sizeof *m->plan);
    m->profiling = calloc(n, sizeof *m->profiling);
    m->buf = calloc(n, sizeof *m->buf);
    if (!m->rate || !m->plan || !m->profiling || !m->buf) {
        minmin_destroy(m);
        return hf_fail(HF_ENOMEM, "minmin: out of memory");
    }
    int rc = hf__devset_init(&m->devset, env);
    if (rc) {
        minmin_destroy(m);
        return rc;
    }
    *state = m;
    return 0;
}

/* Orders tasks by work, ties by index (a stable, total order). */
static int by_work(const void *a, const void *b)
{
    const struct task *x = a, *y = b;
    if (x->work != y->work)
        return x->work < y->work ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Min-min over chunks [base, nchunks): counts per device, then contiguous
 * buffers. Ready times start at zero (the mapping is static). */
static int map_rest(struct minmin *m, size_t base)
{
    const struct hf_round *r = m->r;
    size_t n = r->nchunks - base;
    if (n > m->order_cap) {
        struct task *o = realloc(m->order, n * sizeof *o);
        if (!o)
            return hf_fail(HF_ENOMEM, "minmin: out of memory for %zu chunks", n);
        m->order = o;
        m->order_cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        m->order[i].index = base + i;
        m->order[i].work = r->chunks[base + i].work;
    }
    qsort(m->order, n, sizeof *m->order, by_work);
    double ready[m->ndev];
    size_t counts[m->ndev];
    memset(ready, 0, sizeof ready);
    memset(counts, 0, sizeof counts);
    int usable = 0;
    for (int d = 0; d < m->ndev; d++)
        usable += r->alive[d] && m->rate[d] > 0.0;
    if (!usable)
        return hf_fail(HF_ESCHED, "minmin: no alive device has a known rate");
    for (size_t i = 0; i < n; i++) {
        double w = m->order[i].work;
        int best = -1;
        double best_t = 0.0;
        for (int d = 0; d < m->ndev; d++) {
            if (!r->alive[d] || !(m->rate[d] > 0.0))
                continue;
            double t = ready[d] + w / m->rate[d];
            if (best < 0 || t < best_t) {
                best = d;
                best_t = t;
            }
        }
        ready[best] = best_t;
        counts[best]++;
    }
    hf__layout(m->buf, counts, m->dev, m->ndev, base);
    for (int d = 0; d < m->ndev; d++)
        m->plan[d] = (double)counts[d];
    hf__normalise(m->plan, m->ndev);
    m->mapped = 1;
    return 0;
}

static int minmin_round_begin(void *state, const struct hf_round *r)
{
    struct minmin *m = state;
    m->r = r;
    m->mapped = 0;
    m->pool_next = 0;
    memset(m->buf, 0, (size_t)m->ndev * sizeof *m->buf);
    if (r->standalone_rate) {
        for (int d = 0; d < m->ndev; d++)
            m->rate[d] = r->standalone_rate[d];
        m->have_rates = 1;
    }
    if (r->nchunks == 0)
        return 0;
    if (m->have_rates) {
        /* Which devices take part (device_set.c): min-min's model of a
         * device is its rate, with no latency. */
        double lat[m->ndev], inv[m->ndev];
        for (int d = 0; d < m->ndev; d++) {
            lat[d] = 0.0;
            inv[d] = m->rate[d] > 0.0 ? 1.0 / m->rate[d] : 0.0;
        }
        m->r = hf__devset_begin(&m->devset, r, lat, inv);
        return map_rest(m, 0);
    }
    m->r = hf__devset_begin(&m->devset, r, NULL, NULL);
    memset(m->profiling, 0, (size_t)m->ndev * sizeof *m->profiling);
    return 0;
}

static int minmin_next(void *state, int dev, struct hf_span *out)
{
    struct minmin *m = state;
    const struct hf_round *r = m->r;
    if (!r->alive[dev])
        return 0;
    if (!m->mapped) {
        /* Profiling: one chunk per device, nothing more until all are measured. */
        if (m->profiling[dev] || m->pool_next >= r->nchunks)
            return 0;
        m->profiling[dev] = 1;
        out->first = m->pool_next++;
        out->count = 1;
        out->stolen = 0;
        return 1;
    }
    if (hf__take_own(m->buf, m->dev, dev, out))
        return 1;
    return hf__take_orphan(m->buf, m->dev, r->alive, m->ndev, dev, out);
}

/* Records a profiling chunk's rate; maps the rest once every device has one. */
static void minmin_finished(void *state, int dev, const struct hf_span *span, double seconds)
{
    struct minmin *m = state;
    if (m->mapped || m->profiling[dev] != 1)
        return;
    double w = 0.0;
    for (size_t i = span->first; i < span->first + span->count; i++)
        w += m->r->chunks[i].work;
    m->rate[dev] = seconds > 0.0 ? w / seconds : 0.0;
    m->profiling[dev] = 2;
    for (int d = 0; d < m->ndev; d++)
        if (m->r->alive[d] && m->profiling[d] != 2 && m->pool_next < m->r->nchunks)
            return;
    m->have_rates = 1;
    if (m->pool_next < m->r->nchunks)
        map_rest(m, m->pool_next); /* only fails with no usable rate: then nothing runs
                                      and the engine reports the stalled round */
}

static int minmin_plan(void *state, double *out)
{
    struct minmin *m = state;
    if (!m->mapped)
        return 0;
    memcpy(out, m->plan, (size_t)m->ndev * sizeof *out);
    return 1;
}

static int minmin_round_end(void *state, const struct hf_round_report *rep)
{
    hf__devset_end(&((struct minmin *)state)->devset, rep);
    return 0;
}

static int minmin_device_set(void *state, struct hf_set_choice *out)
{
    return hf__devset_report(&((struct minmin *)state)->devset, out);
}

/* [minmin] has no knobs: an empty table, so that any key there is refused. */
static const struct hf_config_key minmin_keys[] = {
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_sched_ops hf_sched_minmin = {
    .keys = minmin_keys,
    .name = "minmin",
    .summary = "static min-min (Braun et al. 2001) from the devices' profiled rates",
    .create = minmin_create,
    .round_begin = minmin_round_begin,
    .next = minmin_next,
    .finished = minmin_finished,
    .round_end = minmin_round_end,
    .plan = minmin_plan,
    .device_set = minmin_device_set,
    .destroy = minmin_destroy,
};
