/* chunk_cost.c - per-chunk cost of a repeating load, learned from the bundles that ran.
 *
 * DESIGN
 * ------
 * Schedulers split a round by the cumulative `work` of its chunks, so that
 * figure must say what a chunk really costs. An app that knows (a graph
 * slice's edges) declares it; one that does not (an escape-time image's rows)
 * declares units, and a split by units then gives a device the dear rows by
 * luck. When a load repeats - the same chunk count and the same declared work
 * per chunk as the round before - every span that ran is an observation of
 * its chunks' cost, folded as below from the first round on (until the judge
 * finds the declared work right for good); schedulers see the estimates once
 * it finds the declared work wrong.
 *
 * The judge reads the standalone passes and the CPUs' chunks, not a GPU's
 * pieces in a scheduled round, whose times hold the one-off costs of new kernel
 * shapes (in issue 12's matrix, letting them judge cost HASS 24 of its 30 `gpu`
 * cells). A span's deviation is its time, less the device's latency, in work at
 * the device's rate in the round, over its declared work, less 1. One view (a
 * round's spans) whose deviations reach 25% RMS, weighted by work, starts
 * learning at once, so that an irregular load is learned from the standalone
 * pass, before round 0 (learning from round 1 left HASS 2-3x slower in the
 * matrix's hump cells, planning in a unit that then moved). But one view cannot
 * tell noise from cost: a real CPU's equal chunks ran 0.6-1.4 ms on the 2-core
 * VM, a cold one 44 ms against 1 on an H200 host. Cost repeats and noise does
 * not: each later view of a chunk pairs with the last one, and the mean product
 * of the two deviations (each clipped at 10x, so that a stall is one vote;
 * weighted by declared work; centred on their means over the device's pairs of
 * the round, since a device that ran one region sees it against that region's
 * rate, and the standalone pass against the load's: uncentred, the hump's edge
 * chunks read as noise) is 0 for noise and the variance of the deviations for
 * an irregular load. Above 0.25^2 by three standard errors (from the products'
 * median absolute deviation: a few really dear chunks do not widen it) learning
 * is confirmed; below it by three, where the paired chunks' earlier views
 * varied at least half as much about their mean as all views did (pairs that
 * missed a few hot chunks say nothing of them), the declared work is restored.
 * Either verdict is final. A span the device's cost model flags as an outlier
 * is a view for the judge (a hot chunk is an outlier every time it runs) but is
 * not folded (a stall says nothing of the chunks).
 *
 * GPUs alone: where no device ran two judging spans (no CPU) and two or
 * more devices ran, every device's spans are measured against its reference
 * rate - its rate over the whole load, its standalone rate - and not its rate
 * in the round, which is that of the region it ran (a GPU runs one span a
 * round, or pieces of one run of chunks), so that its spans said nothing:
 * four GPUs on the hump in units learned nothing, static split it evenly (81
 * ms a round against 42 with its costs declared) and HASS chased the GPU
 * that got the dear middle (146 ms). A reference is not followed: a round's
 * rate cannot tell a slower GPU from a dearer region, and a GPU that slowed
 * down has its region learned dearer, which every split then follows (a
 * common slowdown cancels when the estimates are scaled back to the total).
 * A span's fixed costs (latency, a new size's warm-up: 3 ms made a 2-chunk
 * piece 4.5x dearer) are not known from one span, so only spans that hold
 * 1 / (8 x the devices) of the load by the estimates are views and folded,
 * 1 / (2 x the devices) where the device never ran a span of that size (its
 * warm-up), net of the latency the device's spans told last (HASS's profile
 * spans of 16-32 chunks on four GPUs told the hump's middle from its edges
 * a round sooner; taken at any size, with their new sizes' warm-ups, the
 * tail came out 4-5% slower). Where a device ran two or more spans at new
 * sizes too small to be views (HASS's first profile pieces of 1 to 8
 * chunks, Qilin's first training pieces), the least of their times less
 * the latency is its new size's warm-up (an upper bound, by that span's own
 * work): netted out of its spans at new sizes, which are then views for the
 * fold from 1 / (8 x the devices) of the load too (not for the judge: a
 * warm-up off by a millisecond on a 16-chunk span would start learning a
 * regular load). On four GPUs, the hump, a 3 ms warm-up per new size:
 * HASS's first 32-chunk piece per GPU in round 0, the rising half of the
 * hump, had taught nothing, and later each round's new sizes were learned
 * as dearer regions, which moved the cut, which made new sizes (44-47 ms a
 * round against 42.2; now 42.2 from round 3). The engine's outlier flag,
 * from a model in the units being learned, is ignored there (the GPU that got
 * the dear region is an outlier). Each such span is one view of its region
 * for the judge: one pair with what its chunks' last views said of it on
 * average.
 *
 * Folding: every span that ran is an observation of its chunks' cost. Its
 * seconds, less the device's per-bundle latency (the intercept of the device's
 * spans of the round, time over estimated work: a CPU's single chunks would
 * otherwise make a cheap chunk look as dear as the latency), are shared over
 * its chunks in proportion to their current estimates (so a big GPU piece only
 * rescales its region, while a CPU's single chunks and bundle boundaries that
 * move between rounds refine the shape), and at the next round's start they
 * become work by the device's rate in that round: the current estimates of the
 * chunks it ran over their seconds. So a device that slowed down (or was
 * stalled: outliers are not folded) does not make its chunks look dear; what is
 * learned is how a device's time divides among its chunks, and the standalone
 * passes (one device runs every chunk, or a CPU a sample spread over the load)
 * and bundle boundaries that move between rounds carry that across the regions
 * different devices ran. A span's total is observed whole: its chunks are
 * scaled towards it by 1 / (1 + the evidence they hold on average), and each
 * chunk gains 1 / (chunks in the span) of evidence, capped so that estimates
 * keep following the load. After folding, the estimates are scaled to sum to
 * the declared total work: the unit stays the app's, device independent, and
 * rates, bound_s and every scheduler's plan keep their meaning. A load that
 * does not repeat (a graph frontier) keeps its declared work, and so does a
 * load whose app says its work is exact (hf_load.work_exact: matmul's rows,
 * strsearch's bytes): it is neither judged nor folded (before the judge paired
 * views, rows that cost the same were learned as 1.6-3.1x one another on an
 * H200 host, a uniform text's chunks 0.55-4x). Learned estimates of the last
 * round are saved beside the profile (<profile>.cost, atomically) by real runs
 * and read back by the next run of the same load, which goes on learning, under
 * a judge started over (a file learned from noise is dropped once repeated
 * views say so); a load whose declared work held saves none (read back, a file
 * of declared work would start the next run learning its noise). A file that
 * does not match the load, or does not parse, is ignored with a warning.
 */
#include "chunk_cost.h"
#include "cost_bytes.h" /* hf__cost_median */
#include "size_set.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/files.h"

#define WEIGHT_CAP 3.0  /* an estimate follows new observations by at least 1/4 */
#define FLOOR 1e-4      /* no estimate below this share of the mean: it could never grow */
#define IRREGULAR 0.25  /* chunks this far off their declared work (RMS, repeated): learned */
#define MIN_PAIRS 8     /* the judge decides on no fewer pairs of views of one chunk */
#define SIZE_SLOTS 64   /* span sizes remembered per device */
#define DEV_CLIP 9.0    /* a view 10x dearer than declared counts as 10x: one stall is one vote */

static int same_load(const struct hf__chunk_cost *c, const struct hf_chunk *chunks, size_t n)
{
    if (c->n != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(c->decl[i] - chunks[i].work) > 1e-9 * fmax(fabs(chunks[i].work), 1e-300))
            return 0;
    return 1;
}

static int resize(struct hf__chunk_cost *c, size_t n)
{
    double **arrays[] = {&c->decl, &c->est, &c->weight, &c->last_dev};
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; k++) {
        double *v = realloc(*arrays[k], (n ? n : 1) * sizeof *v);
        if (!v)
            return HF_ENOMEM;
        *arrays[k] = v;
    }
    struct hf_chunk *view = realloc(c->view, (n ? n : 1) * sizeof *view);
    if (!view)
        return HF_ENOMEM;
    c->view = view;
    return 0;
}

/* Scales the estimates to sum to the declared total, none below the floor. */
static void normalise(struct hf__chunk_cost *c)
{
    if (!(c->total > 0.0) || c->n == 0)
        return;
    double floor = FLOOR * c->total / (double)c->n;
    for (int pass = 0; pass < 2; pass++) {
        double sum = 0.0;
        for (size_t i = 0; i < c->n; i++)
            sum += c->est[i];
        if (!(sum > 0.0) || !isfinite(sum)) {
            memcpy(c->est, c->decl, c->n * sizeof *c->est);
            return;
        }
        for (size_t i = 0; i < c->n; i++)
            c->est[i] = fmax(c->est[i] * c->total / sum, c->decl[i] > 0.0 ? floor : 0.0);
    }
}

/* A span's work by `w` (the estimates, or the declared work). */
static double span_work(const double *w, const struct hf__cost_span *sp)
{
    double sum = 0.0;
    for (size_t i = sp->first; i < sp->first + sp->count; i++)
        sum += w[i];
    return sum;
}

/* Device d's per-bundle latency over its spans of the round (outliers left
 * out): the intercept of the least-squares line of seconds over their work
 * by `w`, when the spans' works differ enough to tell it (*fitted = 1), else
 * `known`; kept within [0, 0.95 x the shortest span] so that no span's net
 * time is ever negative. */
static double span_latency(const struct hf__chunk_cost *c, const double *w, int d, double known,
                           int *fitted)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, ymin = INFINITY, lat = known;
    for (size_t k = 0; k < c->nspans; k++) {
        const struct hf__cost_span *sp = &c->spans[k];
        if (sp->dev != d || sp->outlier)
            continue;
        double x = span_work(w, sp), y = sp->seconds;
        n++;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        ymin = fmin(ymin, y);
    }
    double mx = n > 0 ? sx / n : 0.0, var = n > 0 ? sxx / n - mx * mx : 0.0;
    *fitted = n >= 3 && var > 0.01 * mx * mx;
    if (*fitted) {
        double slope = (sxy / n - mx * sy / n) / var;
        lat = slope > 0.0 ? sy / n - slope * mx : 0.0;
    }
    return fmin(fmax(lat, 0.0), 0.95 * ymin);
}

/* Device d's rate in the round, in work by `w` per second of its spans
 * (outliers left out) less its per-span latency (*lat: span_latency, `known`
 * where the spans cannot tell it); 0 when it ran nothing to go by. *spans
 * gets how many spans it went by, *fitted whether they told the latency. */
static double device_rate(const struct hf__chunk_cost *c, const double *w, int d, double known,
                          double *lat, int *spans, int *fitted)
{
    double work = 0.0, sec = 0.0;
    *lat = span_latency(c, w, d, known, fitted);
    *spans = 0;
    for (size_t k = 0; k < c->nspans; k++)
        if (c->spans[k].dev == d && !c->spans[k].outlier) {
            work += span_work(w, &c->spans[k]);
            sec += c->spans[k].seconds - *lat;
            ++*spans;
        }
    return work > 0.0 && sec > 0.0 ? work / sec : 0.0;
}

/* How many devices are measured against their standalone rates this round
 * (see DESIGN): none where a device ran two judging spans or more (a CPU's
 * chunks, whose rate in the round carries the shape), else those with a
 * standalone rate that ran a span - when two or more did. */
static int reference_devices(const struct hf__chunk_cost *c, int ndev, const double *standalone)
{
    int n = 0;
    for (int d = 0; d < ndev; d++) {
        int judging = 0, ran = 0;
        for (size_t k = 0; k < c->nspans; k++)
            if (c->spans[k].dev == d) {
                judging += c->spans[k].judge && !c->spans[k].outlier;
                ran = 1;
            }
        if (judging >= 2)
            return 0;
        n += ran && standalone && standalone[d] > 0.0;
    }
    return n >= 2 ? n : 0;
}

/* The rate device d's spans are measured against (see DESIGN): its rate in
 * the round (device_rate), or, in a round measured by standalone rates
 * (`nref` > 0: reference_devices), its standalone rate - in any unit, since
 * every unit sums to the load's total - net of its latency (the round's
 * where its spans tell it, else the last one they told): *by_ref. */
static double measure_rate(const struct hf__chunk_cost *c, const double *w, int d, int nref,
                           const double *standalone, double *lat, int *spans, int *by_ref)
{
    int fitted;
    *by_ref = nref > 0 && d < c->ndev && standalone[d] > 0.0;
    double rate = device_rate(c, w, d, *by_ref ? c->lat_last[d] : 0.0, lat, spans, &fitted);
    return *by_ref ? standalone[d] : rate;
}

/* The least work of a view in a round of `nref` devices measured against
 * their standalone rates (see DESIGN): 1 / (8 nref) of the load, 1 / (2 nref)
 * for a span whose fixed costs are `unknown`. */
static double view_floor(const struct hf__chunk_cost *c, int nref, int unknown)
{
    return c->total / ((unknown ? 2.0 : 8.0) * nref);
}

/* Whether a span measured against its device's standalone rate (in a round
 * of `nref` such devices) is a view (see DESIGN): it holds at least
 * 1 / (8 nref) of the load by `w`, or 1 / (2 nref) where its device never
 * ran its size - for the judge always, for the fold where its device's
 * spans never told what a new size costs it - so that its device's fixed
 * costs, which one span cannot tell, are small beside it. */
static int ref_view(const struct hf__chunk_cost *c, const double *w, const struct hf__cost_span *sp,
                    int nref, int judging)
{
    int unknown = sp->fresh && (judging || isnan(c->warm_last[sp->dev]));
    return span_work(w, sp) >= view_floor(c, nref, unknown);
}

/* A span's seconds less its device's latency `lat` and, measured against
 * the device's standalone rate (`by_ref`) at a size it never ran, the
 * warm-up its spans told (keep_warmups), at most half of what is left. */
static double span_net(const struct hf__chunk_cost *c, const struct hf__cost_span *sp, double lat,
                       int by_ref)
{
    double net = sp->seconds - lat, warm = c->warm_last[sp->dev];
    return by_ref && sp->fresh && warm > 0.0 ? net - fmin(warm, 0.5 * net) : net;
}

/* Keeps what a new size costs each device (see DESIGN), in a round measured
 * against standalone rates (`nref` > 0): the least time beyond its latency
 * of its spans at new sizes too small to be views (under 1 / (8 nref) of the
 * load by `w`), where two or more ran - a device's first launch may be one
 * of them, and dearer. An upper bound, by the least such span's own work. */
static void keep_warmups(struct hf__chunk_cost *c, const double *w, int ndev,
                         const double *standalone, int nref)
{
    for (int d = 0; d < ndev; d++) {
        int spans, by_ref, told = 0;
        double lat, least = INFINITY;
        measure_rate(c, w, d, nref, standalone, &lat, &spans, &by_ref);
        for (size_t k = 0; by_ref && k < c->nspans; k++) {
            const struct hf__cost_span *sp = &c->spans[k];
            double work = sp->dev == d && sp->fresh ? span_work(w, sp) : INFINITY;
            if (work < view_floor(c, nref, 0)) {
                least = fmin(least, fmax(0.0, sp->seconds - lat));
                told++;
            }
        }
        if (told >= 2)
            c->warm_last[d] = least;
    }
}

/* Keeps the latency each device's spans told last (by the estimates just
 * folded), for the rounds its spans cannot tell it (measure_rate). */
static void keep_latencies(struct hf__chunk_cost *c)
{
    for (int d = 0; d < c->ndev; d++) {
        int spans, fitted;
        double lat;
        device_rate(c, c->est, d, c->lat_last[d], &lat, &spans, &fitted);
        if (fitted)
            c->lat_last[d] = lat;
    }
}

/* Adds one device's pairs of the round to the evidence (see DESIGN): each
 * pair's two deviations centred on the means of this group, so that a view
 * of one region (a CPU's chunks at the hump's edge, their deviations from
 * that region's rate) and a view of the whole load (the standalone pass, from
 * the load's) compare the shape within the region, not their baselines. */
static void add_pairs(struct hf__chunk_cost *c, double *a, double *b, double *w, int n)
{
    double sw = 0.0, sa = 0.0, sb = 0.0, w2 = 0.0;
    for (int i = 0; i < n; i++) {
        sw += w[i];
        sa += w[i] * a[i];
        sb += w[i] * b[i];
        w2 += w[i] * w[i];
    }
    if (n < 3 || !(sw > 0.0))
        return; /* a pair or two centred say nothing */
    double ma = sa / sw, mb = sb / sw;
    for (int i = 0; i < n; i++) {
        double p = (a[i] - ma) * (b[i] - mb);
        c->pair_sum += w[i] * p;
        c->pair_mass += w[i] * (a[i] - ma) * (a[i] - ma);
        a[i] = p; /* the products, for their spread */
    }
    /* The products' spread, robustly: their median absolute deviation (a
     * chunk that really is dear gives a product far off the rest; the noise
     * is what the bulk of them shows). */
    double mid = hf__cost_median(a, n);
    for (int i = 0; i < n; i++)
        a[i] = fabs(a[i] - mid);
    double spread = 1.4826 * hf__cost_median(a, n);
    c->pair_w += sw;
    c->pair_var += spread * spread * w2;
    c->npairs += (size_t)n;
}

/* What the pairs say (see DESIGN): 1 when the chunks repeated their
 * deviations (the mean centred product, which noise leaves at 0 and an
 * irregular load at the variance of its deviations, above IRREGULAR^2 by
 * three standard errors); -1 when they did not (below it by three), and the
 * paired chunks' earlier views varied at least half as much about their mean
 * as all views did (pairs that missed a few dear chunks say nothing of them);
 * else 0. */
static int repeat_verdict(const struct hf__chunk_cost *c)
{
    if (c->npairs < MIN_PAIRS || !(c->pair_w > 0.0))
        return 0;
    double mean = c->pair_sum / c->pair_w, se = sqrt(c->pair_var) / c->pair_w;
    double bar = IRREGULAR * IRREGULAR;
    if (mean - 3.0 * se > bar)
        return 1;
    if (mean + 3.0 * se < bar && c->pair_mass / c->pair_w >= 0.5 * c->view_mass / c->view_w)
        return -1;
    return 0;
}

/* Starts the judge over: no views, no evidence. */
static void reset_judge(struct hf__chunk_cost *c)
{
    for (size_t i = 0; i < c->n; i++)
        c->last_dev[i] = NAN;
    c->judged = c->unlearned = 0;
    c->pair_sum = c->pair_mass = c->pair_w = c->pair_var = c->view_mass = c->view_w = 0.0;
    c->npairs = 0;
}

/* Judges the round's spans (see DESIGN), in one pass over each device's
 * judging spans. A span's deviation is its seconds less the device's
 * latency, in work at the device's rate in the round, over its declared
 * work, less 1. Outliers aside, the deviations make the view's RMS
 * (weighted by declared work): one view that disagrees starts learning.
 * Outliers too, each deviation clipped to [-1, DEV_CLIP] (one stall is one
 * vote) and the last deviation seen of each of the span's chunks are a pair,
 * weighted by the chunk's declared work, a device's pairs one group; not of
 * a device that ran one span, whose deviation is 0 by construction.
 * Repeated views confirm or end the learning, for good. */
static void judge(struct hf__chunk_cost *c, int ndev, const double *standalone, int nref)
{
    size_t cap = 0;
    for (size_t k = 0; k < c->nspans; k++)
        cap += c->spans[k].count;
    /* No memory for the pairs: this round's views wait, the RMS does not.
     * a[0..2]: one device's pairs (views a, b, weights); a[3..5]: those of
     * the spans measured against their devices' standalone rates, one group. */
    double *buf = cap ? malloc(6 * cap * sizeof *buf) : NULL, *a[6] = {NULL};
    for (int k = 0; buf && k < 6; k++)
        a[k] = buf + (size_t)k * cap;
    double sum = 0.0, weight = 0.0;
    int rn = 0;
    for (int d = 0; d < ndev; d++) {
        int spans, by_ref, n = 0;
        double lat, rate = measure_rate(c, c->decl, d, nref, standalone, &lat, &spans, &by_ref);
        for (size_t k = 0; rate > 0.0 && k < c->nspans; k++) {
            const struct hf__cost_span *sp = &c->spans[k];
            int view = sp->dev == d && (by_ref ? ref_view(c, c->est, sp, nref, 1) : sp->judge);
            double decl = view ? span_work(c->decl, sp) : 0.0;
            if (!(decl > 0.0))
                continue;
            double dev = span_net(c, sp, lat, by_ref) * rate / decl - 1.0;
            if (!sp->outlier || by_ref) {
                sum += decl * dev * dev;
                weight += decl;
            }
            if (!buf || (spans < 2 && !by_ref))
                continue;
            dev = fmin(fmax(dev, -1.0), DEV_CLIP);
            /* A span measured against its standalone rate is one view of its
             * region: one pair, with what its chunks' last views said of it
             * (weighted by their declared work). */
            double said = 0.0, paired = 0.0;
            for (size_t i = sp->first; i < sp->first + sp->count; i++) {
                if (isnan(c->last_dev[i]))
                    continue;
                if (by_ref) {
                    said += c->decl[i] * c->last_dev[i];
                    paired += c->decl[i];
                } else {
                    a[0][n] = c->last_dev[i];
                    a[1][n] = dev;
                    a[2][n++] = c->decl[i];
                }
            }
            if (paired > 0.0) {
                a[3][rn] = said / paired;
                a[4][rn] = dev;
                a[5][rn++] = paired;
            }
            for (size_t i = sp->first; i < sp->first + sp->count; i++) {
                c->view_mass += c->decl[i] * dev * dev;
                c->view_w += c->decl[i];
                c->last_dev[i] = dev;
            }
        }
        add_pairs(c, a[0], a[1], a[2], n);
    }
    add_pairs(c, a[3], a[4], a[5], rn);
    free(buf);
    int verdict = repeat_verdict(c);
    if (verdict != 0) {
        c->unlearned = c->learning && verdict < 0;
        c->learning = verdict > 0;
        c->judged = 1;
    } else if (weight > 0.0 && sqrt(sum / weight) > IRREGULAR) {
        c->learning = 1;
    }
}

/* Folds the round's spans into the estimates (see DESIGN). */
static void fold(struct hf__chunk_cost *c, int ndev, const double *standalone, int nref)
{
    for (int d = 0; d < ndev; d++) {
        int spans, by_ref;
        double lat, rate = measure_rate(c, c->est, d, nref, standalone, &lat, &spans, &by_ref);
        if (!(rate > 0.0))
            continue;
        for (size_t k = 0; k < c->nspans; k++) {
            const struct hf__cost_span *sp = &c->spans[k];
            int seen = sp->dev == d && (by_ref ? ref_view(c, c->est, sp, nref, 0) : !sp->outlier);
            double span = seen ? span_work(c->est, sp) : 0.0;
            double net = span_net(c, sp, lat, by_ref);
            if (!(span > 0.0))
                continue;
            /* The span's total is observed whole: it moves by the weight of
             * one observation against the evidence its chunks hold on
             * average; each chunk gains 1 / count of evidence. */
            double w = 1.0 / (double)sp->count, q = net * rate / span, held = 0.0;
            for (size_t i = sp->first; i < sp->first + sp->count; i++)
                held += c->weight[i] * w;
            double step = (q - 1.0) / (held + 1.0);
            for (size_t i = sp->first; i < sp->first + sp->count; i++) {
                c->est[i] *= 1.0 + step;
                c->weight[i] = fmin(c->weight[i] + w, WEIGHT_CAP);
            }
        }
    }
}

/* Room for ndev devices' last latencies (0 until their spans tell one) and
 * span sizes. */
static int device_room(struct hf__chunk_cost *c, int ndev)
{
    if (ndev <= c->ndev)
        return 0;
    double *v = realloc(c->lat_last, (size_t)ndev * sizeof *v);
    if (!v)
        return HF_ENOMEM;
    c->lat_last = v;
    double *u = realloc(c->warm_last, (size_t)ndev * sizeof *u);
    if (!u)
        return HF_ENOMEM;
    c->warm_last = u;
    size_t *z = realloc(c->sizes, (size_t)ndev * SIZE_SLOTS * sizeof *z);
    if (!z)
        return HF_ENOMEM;
    c->sizes = z;
    for (int d = c->ndev; d < ndev; d++) {
        v[d] = 0.0;
        u[d] = NAN;
        memset(z + (size_t)d * SIZE_SLOTS, 0, SIZE_SLOTS * sizeof *z);
    }
    c->ndev = ndev;
    return 0;
}

/* Whether device d ran a span of `count` chunks before; remembers it. */
static int size_seen(struct hf__chunk_cost *c, int d, size_t count)
{
    return d >= 0 && d < c->ndev &&
           hf__size_set_add(c->sizes + (size_t)d * SIZE_SLOTS, SIZE_SLOTS, count);
}

const struct hf_chunk *hf__chunk_cost_round(struct hf__chunk_cost *c, const struct hf_chunk *chunks,
                                            size_t n, int ndev, const double *standalone, int exact,
                                            double *moved)
{
    *moved = 0.0;
    c->repeated = same_load(c, chunks, n);
    if (device_room(c, ndev))
        return NULL;
    if (c->repeated) {
        int had_view = !c->loaded || c->nspans > 0;
        /* The judge and the fold measure the same devices against the
         * same rates. */
        int nref = reference_devices(c, ndev, standalone);
        if (nref > 0 && !exact)
            keep_warmups(c, c->est, ndev, standalone, nref);
        if (!exact && !c->judged)
            judge(c, ndev, standalone, nref);
        /* Folded from the first round on, so that learning, once judged
         * right, has every view; not once the declared work is final. */
        if (!exact && (c->learning || !c->judged)) {
            fold(c, ndev, standalone, nref);
            normalise(c);
            if (nref > 0) /* only such rounds read them: not a CPU's chunks' hot path */
                keep_latencies(c);
        }
        const double *shown = c->learning ? c->est : c->decl;
        for (size_t i = 0; had_view && c->total > 0.0 && i < n; i++)
            *moved += fabs(shown[i] - c->view[i].work) / c->total;
    } else {
        if (resize(c, n))
            return NULL;
        c->n = n;
        c->total = 0.0;
        c->loaded = 0;
        c->learning = 0;
        for (size_t i = 0; i < n; i++) {
            c->decl[i] = c->est[i] = chunks[i].work;
            c->weight[i] = 0.0;
            c->total += chunks[i].work;
        }
        reset_judge(c);
    }
    c->nspans = 0;
    for (size_t i = 0; i < n; i++) {
        c->view[i] = chunks[i];
        c->view[i].work = c->learning ? c->est[i] : c->decl[i];
    }
    return c->view;
}

void hf__chunk_cost_observe(struct hf__chunk_cost *c, size_t first, size_t count, int dev,
                            int judge, int outlier, double seconds)
{
    if (first + count > c->n || count == 0 || !(seconds > 0.0) || !isfinite(seconds))
        return;
    if (c->nspans == c->spans_cap) {
        size_t cap = c->spans_cap ? 2 * c->spans_cap : 64;
        struct hf__cost_span *v = realloc(c->spans, cap * sizeof *v);
        if (!v)
            return; /* one observation fewer; the estimates stay what they were */
        c->spans = v;
        c->spans_cap = cap;
    }
    int fresh = !size_seen(c, dev, count);
    c->spans[c->nspans++] = (struct hf__cost_span){first, count, dev, judge, outlier, fresh, seconds};
}

void hf__chunk_cost_load(struct hf__chunk_cost *c, const char *path, const struct hf_chunk *chunks,
                         size_t n)
{
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    if (!f) {
        if (path && *path && errno != ENOENT)
            fprintf(stderr, "hetfarm: warning: ignoring chunk costs %s: %s\n", path,
                    strerror(errno));
        return;
    }
    char head[64];
    size_t saved = 0;
    const char *why = NULL;
    if (!fgets(head, sizeof head, f) || strcmp(head, "# hetfarm chunk costs\n") != 0)
        why = "not a chunk cost file";
    else if (fscanf(f, " chunks %zu", &saved) != 1)
        why = "no chunk count";
    else if (saved != n)
        why = "saved for another chunk count (the load changed)";
    else if (resize(c, n))
        why = "out of memory";
    double total = 0.0;
    for (size_t i = 0; !why && i < n; i++) {
        if (fscanf(f, " %lf %lf %lf", &c->decl[i], &c->est[i], &c->weight[i]) != 3)
            why = "truncated or malformed";
        else if (fabs(c->decl[i] - chunks[i].work) > 1e-9 * fmax(fabs(chunks[i].work), 1e-300))
            why = "saved for another load (declared work differs)";
        else if (!isfinite(c->est[i]) || c->est[i] < 0.0 || !isfinite(c->weight[i]) ||
                 c->weight[i] < 0.0 || c->weight[i] > WEIGHT_CAP)
            why = "an estimate out of range";
        total += chunks[i].work;
    }
    if (!why && fscanf(f, " %*s") != EOF)
        why = "trailing data";
    fclose(f);
    if (why) {
        fprintf(stderr, "hetfarm: warning: ignoring chunk costs %s: %s\n", path, why);
        c->n = 0; /* the next round starts over from the declared work */
        return;
    }
    c->n = n;
    c->total = total;
    c->loaded = 1;
    c->learning = 1; /* until repeated views say otherwise */
    reset_judge(c);
    normalise(c);
    c->nspans = 0;
}

int hf__chunk_cost_save(const struct hf__chunk_cost *c, const char *path)
{
    if (!path || !*path || c->n == 0)
        return 0;
    if (!c->learning) {
        /* A file read back turns learning on: written for a regular load, it
         * had the next run fold its devices' noise into the costs of chunks
         * that cost the same (matmul n = 2048 on one H200 host: rows learned
         * as 1.6x to 3.1x one another, and Qilin's saved fits, read back in
         * a unit the estimates had moved, gave the CPU 29% of the load: 40 ms
         * rounds against 0.8; fourteenth session). */
        if (unlink(path) != 0 && errno != ENOENT)
            return hf_fail(HF_EIO, "cannot remove stale chunk costs %s: %s", path,
                           strerror(errno));
        return 0;
    }
    size_t cap = 64 + c->n * 80, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return hf_fail(HF_ENOMEM, "out of memory saving chunk costs");
    len += (size_t)snprintf(buf, cap, "# hetfarm chunk costs\nchunks %zu\n", c->n);
    for (size_t i = 0; i < c->n && len < cap; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%.17g %.17g %.17g\n", c->decl[i], c->est[i],
                                c->weight[i]);
    int rc = len < cap ? hf__write_atomic(path, buf, len, "chunk costs")
                       : hf_fail(HF_EIO, "chunk costs for %s do not fit the buffer", path);
    free(buf);
    return rc;
}

const char *hf__chunk_cost_verdict(const struct hf__chunk_cost *c, int exact)
{
    return exact ? "exact"
           : c->unlearned ? "noise"
           : c->learning  ? (c->judged ? "learned" : "learning")
                          : "declared";
}

void hf__chunk_cost_free(struct hf__chunk_cost *c)
{
    free(c->decl);
    free(c->est);
    free(c->weight);
    free(c->last_dev);
    free(c->lat_last);
    free(c->warm_last);
    free(c->sizes);
    free(c->spans);
    free(c->view);
    memset(c, 0, sizeof *c);
}
