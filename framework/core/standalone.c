/* standalone.c - each device's standalone rate: the whole load run on it alone.
 *
 * DESIGN
 * ------
 * The ideal makespan of a round is the total work over the sum of the devices'
 * standalone rates, so those rates must be measured the way a device really
 * runs a load alone: a GPU gets the whole load as one bundle (transfers and
 * pipeline fill included), a CPU drains it chunk by chunk. That is a built-in
 * scheduling policy ("solo") run through the ordinary round machinery before
 * round 0, in virtual time for the sim engine and for real otherwise.
 *
 * Real measurements need care. A cold first pass (threads starting, pages
 * touched for the first time, libraries loading) understates a device, so
 * short loads are run again and the best pass is kept. A CPU runs chunk by
 * chunk, so a sample of about two seconds of its chunks gives the rate of the
 * whole load: a 30-core CPU would otherwise spend minutes on a whole
 * n = 32768 GEMM before every comparison. The sample is spread evenly over the
 * load (chunk floor((k + 1/2) n / m) for k < m, one chunk at a time), never
 * its first chunks: on an irregular load (an escape-time image's rows, a
 * graph's skewed slices) the first chunks are the cheapest or the dearest
 * part, and a rate taken there is off by the ratio of their cost to the mean,
 * whenever the chunks' `work` does not capture their cost exactly. The rate
 * stays work per second over the sampled chunks' own `work`. The first pass of
 * a sample is only four chunks, to size the next one; it is a rate of its own
 * only when no later pass runs, because four chunks of an irregular load may
 * all miss its dear part and the best-pass rule would then keep their luck.
 * Real rates go to the profile store and are reused until `hetfarm profile`;
 * simulated ones are recomputed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

#define HF_SOLO_PASSES 3       /* standalone passes of a short load on a real device */
#define HF_SOLO_ENOUGH_S 2.0   /* a load measured for this long needs no second pass */
#define HF_SOLO_SAMPLE 4       /* chunks of a real CPU's first standalone sample */

/* ---- the solo policy: one device runs the whole load (standalone rates) ----- */

struct solo {
    int target, is_gpu;
    size_t next, n;  /* spans handed out, of n */
    size_t nchunks;  /* the round's chunks */
    size_t limit;    /* chunks to hand out (a CPU's sample); 0 = the whole load */
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
    s->nchunks = r->nchunks;
    s->n = s->limit && s->limit < r->nchunks ? s->limit : r->nchunks;
    return 0;
}

/* A GPU gets the whole load as one bundle; a CPU one chunk at a time, the
 * k-th of its n sampled chunks being floor((k + 1/2) * nchunks / n): evenly
 * spread, distinct (their spacing is at least one chunk), and every chunk in
 * order when the sample is the whole load. */
static int solo_next(void *state, int dev, struct hf_span *out)
{
    struct solo *s = state;
    if (dev != s->target || s->next == s->n)
        return 0;
    if (s->is_gpu) {
        out->first = s->next;
        out->count = s->n - s->next;
    } else {
        out->first = (size_t)(((double)s->next + 0.5) * (double)s->nchunks / (double)s->n);
        out->count = 1;
    }
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


/* Measures (or reads from the profile) each device's standalone rate. */
int hf__measure_standalone(struct hf__engine *e)
{
    e->standalone = calloc((size_t)e->ndev, sizeof *e->standalone);
    if (!e->standalone)
        return HF_ENOMEM;
    int simulated = e->opts->engine == HF_ENGINE_SIM;
    const struct hf_sched_ops *user = e->sched;
    void *user_state = e->sched_state;
    /* The run's own scheduler is created only after this, so the engine's
     * scheduler slot is free to hold the solo policy meanwhile. */
    struct solo *solo = NULL;
    if (solo_ops.create((void **)&solo, NULL))
        return hf_fail(HF_ENOMEM, "engine: out of memory");
    e->sched = &solo_ops;
    e->sched_state = solo;
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
        solo->target = d;
        solo->is_gpu = dev->info.is_gpu;
        /* A cold first pass (thread start-up, first touch, library loading) would
         * understate a real device: repeat short loads and keep the best pass.
         * A CPU runs a load chunk by chunk at a steady rate, so on a real CPU
         * a sample of about HF_SOLO_ENOUGH_S seconds of chunks measures the
         * rate of the whole load (a 30-core CPU needs minutes for a whole
         * n = 32768 GEMM), provided it is spread over the load (solo_next);
         * a GPU always runs the whole load as one bundle. */
        double spent = 0;
        solo->limit = simulated || dev->info.is_gpu ? 0 : HF_SOLO_SAMPLE;
        int probe = solo->limit > 0; /* the first pass only sizes the sample */
        for (int pass = 0; rc == 0 && pass < (simulated ? 1 : HF_SOLO_PASSES); pass++) {
            if (pass > 0 && spent > HF_SOLO_ENOUGH_S)
                break;
            rc = hf__engine_prepare_round(e, 0);
            if (rc == 0) {
                hf__engine_error(e, HF_EINVAL, "app %s produced no load", e->app->name);
                rc = HF_EINVAL;
            }
            if (rc < 0)
                break;
            if (solo->limit && solo->limit < e->nchunks)
                e->round_target = solo->limit;
            double t0 = simulated ? e->sim_now : hf__now();
            e->round_start = t0;
            e->round_end = t0;
            rc = hf__engine_execute_round(e);
            double work = 0;
            for (int k = 0; k < e->ndev; k++)
                work += hf__engine_ran_work(e, k);
            double s = e->round_end - t0, rate = s > 0 ? work / s : 0;
            spent += s;
            /* A later pass replaces the sizing probe's rate outright. */
            if (rc == 0 && (rate > e->standalone[d] || (pass == 1 && probe)))
                e->standalone[d] = rate;
            /* Size the next sample to about HF_SOLO_ENOUGH_S seconds. */
            if (rc == 0 && solo->limit && s > 0)
                solo->limit = (size_t)fmax(HF_SOLO_SAMPLE,
                                          (double)solo->limit * HF_SOLO_ENOUGH_S / s);
        }
        if (rc == 0 && !simulated)
            hf_profile_set(e->profile, dev->info.name, "standalone_rate", &e->standalone[d], 1);
    }
    e->sched = user;
    e->sched_state = user_state;
    solo_ops.destroy(solo);
    return rc;
}
