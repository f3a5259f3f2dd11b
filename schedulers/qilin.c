/* qilin.c - Qilin's adaptive mapping (Luk, Hong and Kim, MICRO 2009).
 *
 * DESIGN
 * ------
 * Qilin learns a linear time model per processor from a training run and then
 * maps every later load statically by where the models cross. Round 0 trains on
 * the first `train_fraction` of the load ([qilin] train_fraction = 0.1): those
 * chunks are split evenly between the alive devices, and each device runs its
 * part as `points` (3..5) sub-parts of different sizes (1 : 2 : ... : rest), so
 * that a least-squares line T_d(N) = a_d + b_d*N through (work, seconds) can be
 * fitted per device (a GPU's first point, which holds its first launch, is
 * left out where two remain). A GPU runs each sub-part as one bundle; a CPU runs it
 * chunk by chunk, the way it runs production work, and its point is the sum of
 * those chunk times. Devices that finish training wait for the others (Qilin's
 * training run is a separate phase). The fitted CPU time is then scaled by
 * p/(p-g) because g of the p cores drive GPUs in production ([qilin] cpu_cores
 * = p; default the CPU device's nthreads + g, g counting this machine's GPUs,
 * not node devices; a modelled CPU (sim) already
 * models only its own cores, so it is not scaled unless cpu_cores is given).
 *
 * The split: with one CPU and one GPU, Qilin's β minimises
 * max(T_c(βN), T_g((1-β)N)); the minimum is where the lines cross, unless one
 * device alone is faster, and that is what we compute. With several GPUs (our
 * generalisation, not in the paper) we solve a_d + b_d*N_d = T for all devices
 * with ΣN_d = N, dropping any device whose N_d < 0 and solving again; one device
 * alone is again taken when it is faster. The rest of round 0 and every later
 * round (re-solved for that round's work) are split so: contiguous buffers, a
 * GPU's share as one bundle, a CPU's chunk by chunk; no adaptation, no
 * stealing. Fits are saved per device under "qilin.fit" (a, b, unscaled), and
 * saved again when they are refitted in a new unit of work (learned chunk
 * costs); with [qilin] reuse = yes and a fit for every device, training is
 * skipped. A device that the device set left out of training (device_set.c:
 * taking part was expected to cost more than it brings) is saved as 0, 0,
 * and a run that reads the fits leaves it out as the trained run did;
 * without that entry every later run trained again, paying the training
 * round's split into pieces each time (on an H100 host's kron-22 CC, a merge
 * of 9-10 ms against 0.36 ms for one bundle, in a run of 4.6 ms).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "device_set.h"
#include "sched.h"
#include "sched_util.h"

#define QILIN_MAX_POINTS 5

struct qdev {
    double a, b;          /* fitted T(N) = a + b*N, unscaled */
    double scale;         /* CPU slowdown p/(p-g), 1 for GPUs */
    size_t start, lo, hi; /* training chunks [start, hi); [lo, hi) not yet handed out */
    int npoints, point;   /* points planned, point being handed out */
    size_t size[QILIN_MAX_POINTS];
    size_t given;         /* chunks of the current point handed out (CPU) */
    size_t pending;       /* chunks of the current point not yet finished */
    double x[QILIN_MAX_POINTS], t[QILIN_MAX_POINTS]; /* work, seconds per point */
    int done;             /* points measured */
    int trained;          /* all points measured and fitted */
    int skip_first;       /* a GPU: its first point holds the first launch, not fitted */
};

struct qilin {
    int ndev;
    const struct hf_device_info *dev;
    hf_profile_t profile;
    double train_fraction;
    long points;
    int reuse;
    struct qdev *q;
    double *share;
    int have_fit, mapped, training;
    const int *alive; /* the round's alive devices, before the device set's choice */
    size_t train_chunks; /* chunk count of the load trained on in this run (0: none) */
    struct hf__buf *buf;
    const struct hf_round *r;
    struct hf__devset devset; /* which devices take part (device_set.c) */
};

static void qilin_destroy(void *state)
{
    struct qilin *s = state;
    if (!s)
        return;
    hf__devset_free(&s->devset);
    free(s->q);
    free(s->share);
    free(s->buf);
    free(s);
}

/* Reads [qilin] and sets each CPU's p/(p-g) slowdown. */
static int qilin_create(void **state, const struct hf_sched_env *env)
{
    struct qilin *s = calloc(1, sizeof *s);
    if (!s)
        return hf_fail(HF_ENOMEM, "qilin: out of memory");
    s->ndev = env->ndevices;
    s->dev = env->dev;
    s->profile = env->profile;
    size_t n = (size_t)(s->ndev > 0 ? s->ndev : 1);
    s->q = calloc(n, sizeof *s->q);
    s->share = calloc(n, sizeof *s->share);
    s->buf = calloc(n, sizeof *s->buf);
    if (!s->q || !s->share || !s->buf) {
        qilin_destroy(s);
        return hf_fail(HF_ENOMEM, "qilin: out of memory");
    }
    /* The GPUs whose host threads take this machine's cores: a node device
     * (another node's devices, sim or MPI) is driven by that node's cores. */
    int g = 0;
    for (int d = 0; d < env->ndevices; d++)
        g += env->dev[d].is_gpu && env->dev[d].kind != HF_DEV_NODE;
    long cores = 0;
    int rc;
    if ((rc = hf_config_double(env->cfg, "qilin", "train_fraction", 0.1, 1e-9, 0.9,
                               &s->train_fraction)) ||
        (rc = hf_config_long(env->cfg, "qilin", "points", 3, 3, QILIN_MAX_POINTS, &s->points)) ||
        (rc = hf_config_bool(env->cfg, "qilin", "reuse", 1, &s->reuse)) ||
        (rc = hf_config_long(env->cfg, "qilin", "cpu_cores", 0, 0, 1L << 20, &cores)) ||
        (rc = hf__devset_init(&s->devset, env))) {
        qilin_destroy(s);
        return rc;
    }
    if (cores > 0 && cores <= g) {
        rc = hf_fail(HF_ECONFIG, "%s: [qilin] cpu_cores = %ld: must exceed the %d core(s) that "
                                 "drive GPUs",
                     hf_config_where(env->cfg, "qilin", "cpu_cores"), cores, g);
        qilin_destroy(s);
        return rc;
    }
    for (int d = 0; d < s->ndev; d++) {
        s->q[d].scale = 1.0;
        if (env->dev[d].is_gpu || g == 0)
            continue;
        long p = cores;
        if (p == 0 && env->dev[d].kind != HF_DEV_SIM && env->dev[d].nthreads > 0)
            p = env->dev[d].nthreads + g;
        if (p > g)
            s->q[d].scale = (double)p / (double)(p - g);
    }
    *state = s;
    return 0;
}

/* Least squares T = a + b*x over the device's points; falls back to a line
 * through the origin when the fit is degenerate or has a negative intercept. */
static void fit_line(struct qdev *q)
{
    int from = q->skip_first && q->done >= 3, n = q->done - from;
    double sx = 0, st = 0, sxx = 0, sxt = 0;
    for (int i = from; i < q->done; i++) {
        sx += q->x[i];
        st += q->t[i];
        sxx += q->x[i] * q->x[i];
        sxt += q->x[i] * q->t[i];
    }
    double den = n * sxx - sx * sx;
    q->a = 0.0;
    q->b = 0.0;
    if (n >= 2 && den > 1e-12 * n * sxx) {
        q->b = (n * sxt - sx * st) / den;
        q->a = (st - q->b * sx) / n;
    }
    if (!(q->b > 0.0) || q->a < 0.0) {
        q->a = 0.0;
        q->b = sxx > 0.0 ? sxt / sxx : 0.0;
    }
    q->trained = 1;
}

/* Fits device d's line and saves it in the profile (a, b, unscaled). */
static void fit_and_save(struct qilin *s, int d)
{
    struct qdev *q = &s->q[d];
    fit_line(q);
    double ab[2] = {q->a, q->b};
    hf_profile_set(s->profile, s->dev[d].name, "qilin.fit", ab, 2);
}

/* Shares of `work` that make every device's fitted time equal (see DESIGN). */
static void solve_split(struct qilin *s, double work)
{
    int nd = s->ndev;
    int on[nd];
    double A[nd], B[nd], N[nd];
    for (int d = 0; d < nd; d++) {
        A[d] = s->q[d].scale * s->q[d].a;
        B[d] = s->q[d].scale * s->q[d].b;
        on[d] = s->r->alive[d] && B[d] > 0.0;
        N[d] = 0.0;
    }
    double T = INFINITY;
    for (;;) {
        double inv = 0.0, ab = 0.0;
        for (int d = 0; d < nd; d++)
            if (on[d]) {
                inv += 1.0 / B[d];
                ab += A[d] / B[d];
            }
        if (inv == 0.0)
            break;
        T = (work + ab) / inv;
        int worst = -1;
        for (int d = 0; d < nd; d++) {
            N[d] = on[d] ? (T - A[d]) / B[d] : 0.0;
            if (on[d] && N[d] < 0.0 && (worst < 0 || N[d] < N[worst]))
                worst = d;
        }
        if (worst < 0)
            break;
        on[worst] = 0;
    }
    /* One device alone wins when the others' intercepts cost more than they save. */
    int alone = -1;
    for (int d = 0; d < nd; d++)
        if (s->r->alive[d] && B[d] > 0.0 && A[d] + B[d] * work < T) {
            T = A[d] + B[d] * work;
            alone = d;
        }
    for (int d = 0; d < nd; d++)
        s->share[d] = alone >= 0 ? (d == alone) : N[d];
    hf__normalise(s->share, nd);
}

/* Splits chunks [base, nchunks) by the fitted times and lays out buffers. */
static void map_rest(struct qilin *s, size_t base)
{
    const struct hf_round *r = s->r;
    double work = 0.0;
    for (size_t i = base; i < r->nchunks; i++)
        work += r->chunks[i].work;
    solve_split(s, work);
    size_t counts[s->ndev];
    hf__split_counts(r->nchunks - base, s->share, r->alive, s->ndev, counts);
    hf__cost_cut(r, base, s->dev, s->ndev, counts); /* the shares are of work */
    hf__layout(s->buf, counts, s->dev, s->ndev, base);
    s->mapped = 1;
}

/* Loads every device's saved fit; 1 when all were there and one has a rate
 * (b = 0: left out of training, see DESIGN). */
static int load_fits(struct qilin *s)
{
    double v[s->ndev][2];
    int rated = 0;
    for (int d = 0; d < s->ndev; d++) {
        if (hf_profile_get(s->profile, s->dev[d].name, "qilin.fit", v[d], 2) < 2 ||
            !(v[d][1] >= 0.0))
            return 0;
        rated += v[d][1] > 0.0;
    }
    if (!rated)
        return 0;
    for (int d = 0; d < s->ndev; d++) {
        s->q[d].a = v[d][0];
        s->q[d].b = v[d][1];
        s->q[d].trained = 1;
    }
    return 1;
}

/* Plans round 0's training: an even part per alive device, cut into points. */
static void plan_training(struct qilin *s)
{
    const struct hf_round *r = s->r;
    int alive = 0;
    for (int d = 0; d < s->ndev; d++)
        alive += r->alive[d] != 0;
    size_t per = alive ? (size_t)floor(s->train_fraction * (double)r->nchunks / alive) : 0;
    if (per == 0 && (size_t)alive <= r->nchunks)
        per = 1; /* a load too small for the fraction still needs one point each */
    size_t at = 0;
    for (int d = 0; d < s->ndev; d++) {
        struct qdev *q = &s->q[d];
        memset(q->size, 0, sizeof q->size);
        memset(q->x, 0, sizeof q->x);
        memset(q->t, 0, sizeof q->t);
        q->npoints = 0;
        q->done = q->point = q->trained = 0;
        q->given = q->pending = 0;
        q->start = q->lo = q->hi = at;
        if (!r->alive[d] || per == 0)
            continue;
        /* As many points (<= `points`) as sizes 1, 2, ..., P fit into `per`. */
        int P = (int)s->points;
        while (P > 1 && (size_t)(P * (P + 1) / 2) > per)
            P--;
        size_t unit = per / (size_t)(P * (P + 1) / 2), used = 0;
        for (int i = 0; i < P; i++) {
            q->size[i] = i < P - 1 ? unit * (size_t)(i + 1) : per - used;
            used += q->size[i];
        }
        q->npoints = P;
        /* A GPU's first bundle holds its first launch (40 ms on an H200, a
         * bundle of 0.1 ms): fitted, it made the GPU's line so dear that
         * Qilin gave the CPU 80% of a load the GPUs run 35x faster. Left
         * out where two points remain, as HASS leaves it out. */
        q->skip_first = s->dev[d].is_gpu;
        q->hi = at + per;
        at = q->hi;
    }
    s->training = 1;
    s->mapped = 0;
    if (at == 0) {
        /* Fewer chunks than devices: nothing to train on; equal shares this round. */
        double eq[s->ndev];
        size_t counts[s->ndev];
        for (int d = 0; d < s->ndev; d++)
            eq[d] = 1.0;
        hf__split_counts(r->nchunks, eq, r->alive, s->ndev, counts);
        hf__layout(s->buf, counts, s->dev, s->ndev, 0);
        s->training = 0;
        s->mapped = 1;
    }
}

/* The training points were measured on chunks of this same load when it
 * repeats; when the chunks' estimated costs moved (hf_round.cost_moved), each
 * point's work is counted again in the new estimates and the line refitted, so
 * the mapping stays Qilin's, in the current unit. */
static void refit_in_new_unit(struct qilin *s, const struct hf_round *r)
{
    if (s->train_chunks != r->nchunks || !(r->cost_moved > 0.02))
        return;
    for (int d = 0; d < s->ndev; d++) {
        struct qdev *q = &s->q[d];
        if (!q->trained || q->done == 0)
            continue;
        size_t at = q->start;
        for (int i = 0; i < q->done; i++) {
            q->x[i] = 0.0;
            for (size_t k = at; k < at + q->size[i] && k < r->nchunks; k++)
                q->x[i] += r->chunks[k].work;
            at += q->size[i];
        }
        /* Saved in the unit the estimates now have: the next run that reads
         * the fits reads the learned costs saved at this run's end, or the
         * declared work where the judge dropped them (read in another unit,
         * a fit gave an H200 host's CPU 22.7% of a PageRank sweep, 11 ms
         * rounds against 1.9). */
        fit_and_save(s, d);
    }
}

static int qilin_round_begin(void *state, const struct hf_round *r)
{
    struct qilin *s = state;
    s->r = r;
    s->alive = r->alive;
    s->mapped = 0;
    s->training = 0;
    memset(s->buf, 0, (size_t)s->ndev * sizeof *s->buf);
    if (r->nchunks == 0)
        return 0;
    if (!s->have_fit && s->reuse && load_fits(s))
        s->have_fit = 1;
    refit_in_new_unit(s, r);
    if (s->have_fit) {
        /* Which devices take part (device_set.c), by the fitted lines. */
        double lat[s->ndev], inv[s->ndev];
        for (int d = 0; d < s->ndev; d++) {
            lat[d] = s->q[d].scale * s->q[d].a;
            inv[d] = s->q[d].scale * s->q[d].b;
        }
        s->r = hf__devset_begin(&s->devset, r, lat, inv);
        map_rest(s, 0);
    } else {
        s->r = hf__devset_begin(&s->devset, r, NULL, NULL);
        plan_training(s);
    }
    return 0;
}

/* Hands out the next training piece of device d, if any. */
static int next_training(struct qilin *s, int d, struct hf_span *out)
{
    struct qdev *q = &s->q[d];
    if (q->point >= q->npoints || q->lo >= q->hi)
        return 0;
    /* A CPU runs its point chunk by chunk; one request at a time, so a point's
     * chunks always finish before the next point's begin. */
    size_t want = s->dev[d].is_gpu ? q->size[q->point] : 1;
    out->first = q->lo;
    out->count = want;
    out->stolen = 0;
    q->lo += want;
    q->given += want;
    q->pending += want;
    if (s->dev[d].is_gpu || q->given == q->size[q->point]) {
        q->point++;
        q->given = 0;
    }
    return 1;
}

static int qilin_next(void *state, int d, struct hf_span *out)
{
    struct qilin *s = state;
    if (!s->r->alive[d])
        return 0;
    if (!s->mapped)
        return s->training ? next_training(s, d, out) : 0;
    if (hf__take_own(s->buf, s->dev, d, out))
        return 1;
    return hf__take_orphan(s->buf, s->dev, s->r->alive, s->ndev, d, out);
}

/* Whether training is over: every alive device measured all its points. */
static int training_done(const struct qilin *s)
{
    for (int d = 0; d < s->ndev; d++)
        if (s->r->alive[d] && s->q[d].npoints > 0 && s->q[d].done < s->q[d].npoints)
            return 0;
    return 1;
}

/* Accumulates a training point; fits and maps the rest once all are in. */
static void qilin_finished(void *state, int d, const struct hf_span *span, double seconds)
{
    struct qilin *s = state;
    if (!s->training || s->mapped)
        return;
    struct qdev *q = &s->q[d];
    /* A span re-run for a failed device is not this device's training point. */
    if (q->done >= q->npoints || span->first < q->start || span->first >= q->hi)
        return;
    double w = 0.0;
    for (size_t i = span->first; i < span->first + span->count; i++)
        w += s->r->chunks[i].work;
    q->x[q->done] += w;
    q->t[q->done] += seconds;
    q->pending -= span->count;
    if (q->pending == 0 && q->x[q->done] > 0.0 &&
        (s->dev[d].is_gpu || q->done < q->point)) {
        q->done++;
        if (q->done == q->npoints)
            fit_and_save(s, d);
    }
    if (!training_done(s))
        return;
    s->training = 0;
    s->have_fit = 1;
    s->train_chunks = s->r->nchunks;
    for (int k = 0; k < s->ndev; k++) {
        if (s->r->alive[k] && !s->q[k].trained)
            s->q[k].b = 0.0; /* never trained (no chunk for it): leave it out */
        if (s->alive[k] && !s->r->alive[k]) {
            double left_out[2] = {0.0, 0.0}; /* by the device set: see DESIGN */
            hf_profile_set(s->profile, s->dev[k].name, "qilin.fit", left_out, 2);
        }
    }
    size_t base = 0;
    for (int k = 0; k < s->ndev; k++)
        base = s->q[k].hi > base ? s->q[k].hi : base;
    if (base < s->r->nchunks)
        map_rest(s, base);
}

static int qilin_plan(void *state, double *out)
{
    struct qilin *s = state;
    if (!s->have_fit || !s->mapped)
        return 0;
    memcpy(out, s->share, (size_t)s->ndev * sizeof *out);
    return 1;
}

static int qilin_round_end(void *state, const struct hf_round_report *rep)
{
    hf__devset_end(&((struct qilin *)state)->devset, rep);
    return 0;
}

static int qilin_device_set(void *state, struct hf_set_choice *out)
{
    return hf__devset_report(&((struct qilin *)state)->devset, out);
}

/* The knobs of [qilin] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key qilin_keys[] = {
    {NULL, "train_fraction", HF_KEY_NUM, 0, 0.9, HF_KEY_MIN_OPEN, NULL, "0.1",
     "share of the first load used for training"},
    {NULL, "points", HF_KEY_INT, 3, QILIN_MAX_POINTS, 0, NULL, "3", "training sizes per device"},
    {NULL, "cpu_cores", HF_KEY_INT, 0, 1048576, 0, NULL, "CPU threads + GPUs",
     "cores the CPU fit is scaled for"},
    {NULL, "reuse", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "skip training when the profile has fits"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_sched_ops hf_sched_qilin = {
    .keys = qilin_keys,
    .name = "qilin",
    .summary = "Qilin adaptive mapping: train linear time models, split where they cross",
    .create = qilin_create,
    .round_begin = qilin_round_begin,
    .next = qilin_next,
    .finished = qilin_finished,
    .round_end = qilin_round_end,
    .plan = qilin_plan,
    .device_set = qilin_device_set,
    .destroy = qilin_destroy,
};
