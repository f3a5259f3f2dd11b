/* hass.c - HASS, the Heterogeneous Architecture Scheduling Strategy
 * (Goodarzi 2018, Algorithm 3.1), with the improvements asked for in issue 2.
 *
 * DESIGN
 * ------
 * Round 0 profiles. Until every alive device has a rate, the round's chunks form
 * one shared pool taken from the front: a CPU takes one chunk at a time and its
 * rate is work/seconds over its first `profile_chunks` chunks; a GPU takes a
 * profile span of `profile_chunks` chunks and doubles it after every span until
 * its measured rate rises by less than `growth_stop` (10%) - the thesis profiled
 * "one SP's worth", which never saturates a modern GPU. A GPU that is done
 * growing keeps taking spans of its saturated size from the pool, so nobody
 * idles while a slow CPU finishes its first chunk. Once every alive device has a
 * rate, the chunks still in the pool are split into per-device buffers in
 * proportion to the rates (sched_util.c: floors, then each leftover chunk to the
 * device that finishes it first), laid out contiguously with the GPUs first and
 * the CPUs last. A GPU gets its whole buffer as ONE bundle; a CPU drains its
 * buffer one chunk per request; a GPU whose buffer is empty steals from the
 * tail of the CPU buffer with the most time left a span sized to its rate:
 * chunks are whole, so it takes the k that makes the later of "CPU finishes
 * its running chunk and the rest of its buffer" and "the GPUs finish k chunks"
 * soonest (the thesis's remaining*g/(g+c) when chunks are small; everything
 * when one CPU chunk outlasts the GPUs' whole tail), and with several GPUs its
 * part of that by rate, coming back for more. A CPU team with nothing left
 * steals one chunk from another CPU team. For the same reason a CPU does not
 * start one more chunk of its buffer when, by the rates, that would end the
 * round later than leaving the rest for the GPUs to steal (a 30-core CPU's
 * 64-row matmul chunk takes 0.1 s on an H200 node, half a round). Going beyond
 * the thesis, a `reserve` of each GPU's share is laid at the tail of the CPU
 * buffer: GPUs steal it back at the end when the plan was right, and it
 * absorbs a GPU bundle that ran slow when it was not (a bundle cannot be taken
 * back). It costs every GPU a second bundle per round, so it is off by
 * default (a real H200's bundle times vary well under 1%, and one bundle per
 * GPU per round is the thesis's design); set it for noisy devices (the sim
 * configs model 2% noise per bundle and use 0.03).

 * Rounds >= 1 split the whole round by the ratios of the adaptation phase:
 * round_end sets rate_d = work_d / busy_s_d from what each device really did,
 * summed over the last `window` rounds (a GPU runs one bundle per round, so one
 * round's rate carries one bundle's noise; the window averages it out before
 * the split freezes), and the ratios are the rates normalised; a change of
 * less than stable_tol in every share leaves the split as it is. Round 0's
 * profile spans are deliberately small, so a profiled round 0 does not enter
 * the window: its rates are the profiled ones. A split is final once two
 * consecutive adaptations moved no share by `stable_tol` or more (absolute:
 * 0.01 = one percent of the work); after that the ratios stay as they are and
 * only stealing balances. Rates are saved in the profile as `hass.rate` at
 * every round_end; with `warm_start`, round 0 skips profiling when the profile
 * holds a rate for every device and splits at once.
 *
 * Knobs, section [hass]: profile_chunks (1), growth_stop (0.10),
 * stable_tol (0.01), window (4), reserve (0), steal (yes), warm_start (yes).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"
#include "sched_util.h"

struct hass {
    int ndev;
    const struct hf_device_info *dev;
    hf_profile_t profile;

    long profile_chunks;
    double growth_stop, stable_tol, reserve;
    long window;
    int steal, warm_start;

    double *rate;       /* work/s per device, 0 = unknown */
    double *hwork, *hbusy; /* per round (ring of `window` rounds) x device: work, busy s */
    int hrounds;        /* rounds recorded in the ring */
    int profiled_round0;/* round 0 ran the profiling phase (not warm-started) */
    double *ratio;      /* current split, sums to 1 */
    int have_ratio, stable_rounds, final;

    /* The current round. */
    const struct hf_round *r;
    struct hf__buf *buf;
    int split;          /* buffers laid out (otherwise round 0's shared pool) */
    size_t pool_next;   /* front of round 0's shared pool */
    double *committed;  /* work handed to each device this round */
    int *inflight;      /* a span of the device is running */

    /* Round 0 profiling, per device. */
    size_t *pspan;      /* a GPU's current profile span */
    double *prate;      /* a GPU's best measured rate so far */
    int *profiled;      /* rate known */
    double *pwork, *psec;
    long *pdone;        /* a CPU's chunks measured */
};

static void hass_destroy(void *state)
{
    struct hass *h = state;
    if (!h)
        return;
    free(h->rate);
    free(h->hwork);
    free(h->committed);
    free(h->inflight);
    free(h->hbusy);
    free(h->ratio);
    free(h->buf);
    free(h->pspan);
    free(h->prate);
    free(h->profiled);
    free(h->pwork);
    free(h->psec);
    free(h->pdone);
    free(h);
}

/* Reads the [hass] knobs and allocates the per-device arrays. */
static int hass_create(void **state, const struct hf_sched_env *env)
{
    struct hass *h = calloc(1, sizeof *h);
    if (!h)
        return hf_fail(HF_ENOMEM, "hass: out of memory");
    h->ndev = env->ndevices;
    h->dev = env->dev;
    h->profile = env->profile;
    int rc;
    if ((rc = hf_config_long(env->cfg, "hass", "profile_chunks", 1, 1, 1L << 30,
                             &h->profile_chunks)) ||
        (rc = hf_config_double(env->cfg, "hass", "growth_stop", 0.10, 0.0, 10.0,
                               &h->growth_stop)) ||
        (rc = hf_config_double(env->cfg, "hass", "stable_tol", 0.01, 0.0, 1.0, &h->stable_tol)) ||
        (rc = hf_config_long(env->cfg, "hass", "window", 4, 1, 64, &h->window)) ||
        (rc = hf_config_double(env->cfg, "hass", "reserve", 0.0, 0.0, 0.5, &h->reserve)) ||
        (rc = hf_config_bool(env->cfg, "hass", "steal", 1, &h->steal)) ||
        (rc = hf_config_bool(env->cfg, "hass", "warm_start", 1, &h->warm_start))) {
        free(h);
        return rc;
    }
    size_t n = (size_t)(h->ndev > 0 ? h->ndev : 1);
    h->rate = calloc(n, sizeof *h->rate);
    h->committed = calloc(n, sizeof *h->committed);
    h->inflight = calloc(n, sizeof *h->inflight);
    h->hwork = calloc(n * (size_t)h->window, sizeof *h->hwork);
    h->hbusy = calloc(n * (size_t)h->window, sizeof *h->hbusy);
    h->ratio = calloc(n, sizeof *h->ratio);
    h->buf = calloc(n, sizeof *h->buf);
    h->pspan = calloc(n, sizeof *h->pspan);
    h->prate = calloc(n, sizeof *h->prate);
    h->profiled = calloc(n, sizeof *h->profiled);
    h->pwork = calloc(n, sizeof *h->pwork);
    h->psec = calloc(n, sizeof *h->psec);
    h->pdone = calloc(n, sizeof *h->pdone);
    if (!h->rate || !h->committed || !h->inflight || !h->hwork || !h->hbusy || !h->ratio || !h->buf || !h->pspan || !h->prate || !h->profiled ||
        !h->pwork || !h->psec || !h->pdone) {
        hass_destroy(h);
        return hf_fail(HF_ENOMEM, "hass: out of memory");
    }
    *state = h;
    return 0;
}

/* Sets the ratios from the rates of the alive devices. */
static void ratios_from_rates(struct hass *h, const int *alive, double *out)
{
    for (int d = 0; d < h->ndev; d++)
        out[d] = (!alive || alive[d]) ? h->rate[d] : 0.0;
    hf__normalise(out, h->ndev);
}

/* Splits chunks [base, nchunks) into buffers by `weight` and leaves the pool. */
static void split_rest(struct hass *h, const double *weight, size_t base)
{
    size_t counts[h->ndev];
    size_t n = h->r->nchunks - base;
    if (hf__split_counts(n, weight, h->r->alive, h->ndev, counts) == 0)
        return; /* nobody has a usable weight: keep serving the shared pool */
    /* The reserve goes to the fastest CPU buffer's tail, where the GPUs steal
     * it back at the end when the plan was right. */
    int cpu = -1;
    for (int d = 0; d < h->ndev; d++)
        if (!h->dev[d].is_gpu && h->r->alive[d] && (cpu < 0 || weight[d] > weight[cpu]))
            cpu = d;
    for (int d = 0; h->steal && cpu >= 0 && d < h->ndev; d++) {
        if (!h->dev[d].is_gpu || counts[d] < 2)
            continue;
        size_t k = (size_t)floor(h->reserve * (double)counts[d]);
        counts[d] -= k;
        counts[cpu] += k;
    }
    hf__layout(h->buf, counts, h->dev, h->ndev, base);
    h->split = 1;
    h->pool_next = h->r->nchunks;
}

/* Loads `hass.rate` for every device from the profile; 1 when all were there. */
static int warm_rates(struct hass *h)
{
    double v[h->ndev];
    for (int d = 0; d < h->ndev; d++)
        if (hf_profile_get(h->profile, h->dev[d].name, "hass.rate", &v[d], 1) < 1 || !(v[d] > 0))
            return 0;
    memcpy(h->rate, v, sizeof v);
    return 1;
}

static int hass_round_begin(void *state, const struct hf_round *r)
{
    struct hass *h = state;
    h->r = r;
    h->split = 0;
    h->pool_next = 0;
    memset(h->buf, 0, (size_t)h->ndev * sizeof *h->buf);
    memset(h->committed, 0, (size_t)h->ndev * sizeof *h->committed);
    memset(h->inflight, 0, (size_t)h->ndev * sizeof *h->inflight);
    if (r->round == 0 && !h->have_ratio) {
        for (int d = 0; d < h->ndev; d++) {
            h->pspan[d] = (size_t)h->profile_chunks;
            h->prate[d] = h->pwork[d] = h->psec[d] = 0.0;
            h->profiled[d] = 0;
            h->pdone[d] = 0;
        }
        if (h->warm_start && warm_rates(h)) {
            ratios_from_rates(h, r->alive, h->ratio);
            h->have_ratio = 1;
        }
        h->profiled_round0 = !h->have_ratio;
    }
    if (h->have_ratio)
        split_rest(h, h->ratio, 0);
    return 0;
}

/* The CPU buffer an idle device should steal from: the one that needs the most
 * time to drain at its owner's rate; -1 if none has chunks left. */
static int steal_victim(const struct hass *h, int thief)
{
    int best = -1;
    double best_t = 0.0;
    for (int c = 0; c < h->ndev; c++) {
        if (c == thief || h->dev[c].is_gpu || h->buf[c].hi <= h->buf[c].lo)
            continue;
        double left = (double)(h->buf[c].hi - h->buf[c].lo);
        double t = h->rate[c] > 0.0 ? left / h->rate[c] : INFINITY;
        if (best < 0 || t > best_t) {
            best = c;
            best_t = t;
        }
    }
    return best;
}

/* An idle device with an empty buffer steals from the tail of a CPU buffer: a
 * GPU the share that makes it finish with the CPU, a CPU team one chunk. */
static int steal(struct hass *h, int d, struct hf_span *out)
{
    int c = steal_victim(h, d);
    if (c < 0)
        return 0;
    if (!h->dev[d].is_gpu)
        return hf__take_tail(h->buf, c, 1, out);
    size_t left = h->buf[c].hi - h->buf[c].lo;
    double g = h->rate[d], cr = h->rate[c], gsum = 0.0;
    for (int k = 0; k < h->ndev; k++)
        if (h->dev[k].is_gpu && h->r->alive[k])
            gsum += h->rate[k];
    if (!(g > 0.0) || !(cr > 0.0) || !(gsum > 0.0))
        return hf__take_tail(h->buf, c, 1, out);
    /* Chunks are whole: the CPU ends its part one chunk at a time, after the
     * chunk it is running (assumed just started: the scheduler has no clock).
     * Take the k that makes the later of the two finish soonest. With several
     * GPUs this one takes only its part of the GPUs' share, by rate, and comes
     * back for more, so that no GPU walks off with a tail the others need. */
    double w = hf__mean_chunk_work(h->r), tc = w / cr, tg = w / gsum;
    double busy = h->inflight[c] ? tc : 0.0;
    /* The two finish times cross at k* = (busy + left*tc) / (tc + tg); the best
     * whole k is one of its neighbours. */
    double kstar = (busy + (double)left * tc) / (tc + tg);
    size_t best = left;
    double best_t = INFINITY;
    for (double k = floor(kstar); k <= floor(kstar) + 1.0; k += 1.0) {
        double kk = fmin(fmax(k, 0.0), (double)left);
        double t = fmax(busy + ((double)left - kk) * tc, kk * tg);
        if (t < best_t) {
            best = (size_t)kk;
            best_t = t;
        }
    }
    if (best == 0 && h->inflight[c])
        return 0; /* the running CPU finishes its buffer sooner than any steal would */
    if (best == 0)
        best = 1; /* an idle CPU left this chunk to the GPUs: someone must take it */
    size_t mine = (size_t)llround((double)best * g / gsum);
    return hf__take_tail(h->buf, c, mine > 0 ? mine : 1, out);
}

static int hass_pick(struct hass *h, int d, struct hf_span *out);

/* Whether CPU c should leave the rest of its buffer to the GPUs: when starting
 * one more chunk would end the round later, in the rates' estimate, than
 * letting the GPUs steal it (a CPU chunk can take longer than the whole tail
 * of a GPU's bundle). Only when a GPU with a known rate is alive: an idle GPU is
 * asked again whenever anything finishes, and steal() always takes from an
 * idle CPU that left work, so what the CPU leaves is never stranded. */
static int cpu_should_leave(const struct hass *h, int c)
{
    const struct hf_round *r = h->r;
    if (!h->steal || h->buf[c].hi <= h->buf[c].lo || !(h->rate[c] > 0.0))
        return 0;
    double w = hf__mean_chunk_work(r), G = 0.0, Wg = 0.0;
    int waiting = 0;
    for (int g = 0; g < h->ndev; g++) {
        if (!h->dev[g].is_gpu || !r->alive[g] || !(h->rate[g] > 0.0))
            continue;
        G += h->rate[g];
        Wg += h->committed[g] + w * (double)(h->buf[g].hi - h->buf[g].lo);
        waiting = 1; /* an idle GPU is asked again as soon as anything finishes */
    }
    if (!waiting || !(G > 0.0))
        return 0;
    double Rc = w * (double)(h->buf[c].hi - h->buf[c].lo), Wc = h->committed[c];
    double take = fmax((Wc + w) / h->rate[c], (Wg + Rc - w) / G);
    double leave = fmax(Wc / h->rate[c], (Wg + Rc) / G);
    return take > leave;
}

/* Hands out a span and books it for the time estimates. */
static int give(struct hass *h, int d, int got, const struct hf_span *out)
{
    if (got) {
        h->committed[d] += hf__mean_chunk_work(h->r) * (double)out->count;
        h->inflight[d] = 1;
    }
    return got;
}

static int hass_next(void *state, int d, struct hf_span *out)
{
    struct hass *h = state;
    int got = hass_pick(h, d, out);
    return got > 0 ? give(h, d, got, out) : got;
}

/* Chooses device d's next span: round 0's pool, its own buffer, an orphaned
 * buffer, or a steal. */
static int hass_pick(struct hass *h, int d, struct hf_span *out)
{
    const struct hf_round *r = h->r;
    if (!r->alive[d])
        return 0;
    if (!h->split) {
        /* Round 0 before the split: everyone eats from the shared pool. */
        if (h->pool_next >= r->nchunks)
            return 0;
        size_t k = h->dev[d].is_gpu ? h->pspan[d] : 1;
        if (k > r->nchunks - h->pool_next)
            k = r->nchunks - h->pool_next;
        out->first = h->pool_next;
        out->count = k;
        out->stolen = 0;
        h->pool_next += k;
        return 1;
    }
    if (!h->dev[d].is_gpu && cpu_should_leave(h, d))
        return 0;
    if (hf__take_own(h->buf, h->dev, d, out))
        return 1;
    if (hf__take_orphan(h->buf, h->dev, r->alive, h->ndev, d, out))
        return 1;
    return h->steal ? steal(h, d, out) : 0;
}

/* Whether every alive device has a profiled rate. */
static int all_profiled(const struct hass *h)
{
    for (int d = 0; d < h->ndev; d++)
        if (h->r->alive[d] && !h->profiled[d])
            return 0;
    return 1;
}

/* Round 0's profiling: grows a GPU's span until its rate stops rising, counts
 * a CPU's first chunks, and splits the rest of the pool once all have rates. */
static void hass_finished(void *state, int d, const struct hf_span *span, double seconds)
{
    struct hass *h = state;
    h->inflight[d] = 0;
    if (h->split || seconds <= 0.0)
        return;
    double work = 0.0;
    for (size_t i = span->first; i < span->first + span->count; i++)
        work += h->r->chunks[i].work;
    double rate = work / seconds;
    if (h->dev[d].is_gpu) {
        if (!h->profiled[d]) {
            /* A span at the cap of an eighth of the load is saturated enough. */
            size_t cap = h->r->nchunks / 8 > 0 ? h->r->nchunks / 8 : 1;
            if (h->prate[d] > 0.0 && rate < h->prate[d] * (1.0 + h->growth_stop))
                h->profiled[d] = 1;
            else if (h->pspan[d] * 2 > cap)
                h->profiled[d] = 1;
            else
                h->pspan[d] *= 2;
            h->prate[d] = fmax(h->prate[d], rate);
        } else {
            h->prate[d] = rate; /* fresher measurement at the saturated size */
        }
        h->rate[d] = h->prate[d];
    } else {
        h->pwork[d] += work;
        h->psec[d] += seconds;
        h->pdone[d] += (long)span->count;
        h->rate[d] = h->pwork[d] / h->psec[d];
        if (h->pdone[d] >= h->profile_chunks)
            h->profiled[d] = 1;
    }
    if (all_profiled(h) && h->pool_next < h->r->nchunks) {
        ratios_from_rates(h, h->r->alive, h->ratio);
        h->have_ratio = 1;
        split_rest(h, h->rate, h->pool_next);
    }
}

/* Records what each device did in the window and sets its rate: rate_d = its
 * work / its busy seconds over the last `window` rounds. One round's single
 * GPU bundle carries that bundle's noise, and a split frozen on one noisy
 * round would keep the noise for good. */
static void update_rates(struct hass *h, const struct hf_round_report *rep)
{
    int slot = h->hrounds % (int)h->window;
    h->hrounds++;
    int span = h->hrounds < h->window ? h->hrounds : (int)h->window;
    for (int d = 0; d < h->ndev; d++) {
        int ran = rep->work[d] > 0.0 && rep->busy_s[d] > 0.0;
        h->hwork[slot * h->ndev + d] = ran ? rep->work[d] : 0.0;
        h->hbusy[slot * h->ndev + d] = ran ? rep->busy_s[d] : 0.0;
        double w = 0.0, b = 0.0;
        for (int k = 0; k < span; k++) {
            w += h->hwork[k * h->ndev + d];
            b += h->hbusy[k * h->ndev + d];
        }
        if (!(w > 0.0) || !(b > 0.0))
            continue; /* no evidence in the window: keep the old rate */
        h->rate[d] = w / b;
        hf_profile_set(h->profile, h->dev[d].name, "hass.rate", &h->rate[d], 1);
    }
}

/* The adaptation phase: rates from what each device really did, the next
 * ratios from the rates, and the stability count that makes a split final. */
static int hass_round_end(void *state, const struct hf_round_report *rep)
{
    struct hass *h = state;
    /* Round 0's small profile spans understate a GPU: keep the profiled rates. */
    if (!(rep->round == 0 && h->profiled_round0))
        update_rates(h, rep);
    if (h->final)
        return 0;
    double next[h->ndev];
    ratios_from_rates(h, h->r ? h->r->alive : NULL, next);
    /* A change smaller than stable_tol is noise, not news: the split stays
     * where it is (stealing absorbs the difference, which bounds the loss by
     * stable_tol of the work), so a stable split also stops moving at once. */
    if (h->have_ratio && hf__max_share_change(next, h->ratio, h->ndev) < h->stable_tol) {
        h->stable_rounds++;
    } else {
        h->stable_rounds = 0;
        memcpy(h->ratio, next, sizeof next);
    }
    h->have_ratio = 1;
    if (h->stable_rounds >= 2)
        h->final = 1;
    return 0;
}

static int hass_plan(void *state, double *out)
{
    struct hass *h = state;
    if (!h->have_ratio)
        return 0;
    memcpy(out, h->ratio, (size_t)h->ndev * sizeof *out);
    return 1;
}

/* The knobs of [hass] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key hass_keys[] = {
    {NULL, "profile_chunks", HF_KEY_INT, 1, 1073741824.0, 0, NULL, "1",
     "a GPU's first span in round 0, chunks"},
    {NULL, "growth_stop", HF_KEY_NUM, 0, 10, 0, NULL, "0.10",
     "profiling stops when the rate grows less"},
    {NULL, "stable_tol", HF_KEY_NUM, 0, 1, 0, NULL, "0.01", "a split this close is stable"},
    {NULL, "window", HF_KEY_INT, 1, 64, 0, NULL, "4", "rounds of rates averaged"},
    {NULL, "reserve", HF_KEY_NUM, 0, 0.5, 0, NULL, "0", "share of each GPU's work left to steal"},
    {NULL, "steal", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "idle GPUs steal from the CPU buffer"},
    {NULL, "warm_start", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "start from the saved profile"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_sched_ops hf_sched_hass = {
    .keys = hass_keys,
    .name = "hass",
    .summary = "HASS: profile, split by measured rates, GPUs steal from the CPU, adapt per round",
    .create = hass_create,
    .round_begin = hass_round_begin,
    .next = hass_next,
    .finished = hass_finished,
    .round_end = hass_round_end,
    .plan = hass_plan,
    .destroy = hass_destroy,
};
