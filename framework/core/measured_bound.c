/* measured_bound.c - one bound_s for every run of a comparison, from what they all measured.
 *
 * DESIGN
 * ------
 * The engine's bound_s (engine.c) prices a round with the cost models that
 * one run fitted, so two schedulers of one comparison are held to different
 * yardsticks, and a model that took a load's dear bundles for outliers prices
 * an irregular load at its cheap chunks (an escape-time image on one CPU read
 * efficiency 0.19-0.42 under one scheduler and 1.00 under another, every run
 * doing the same work in the same time). This file replaces it, after the
 * runs, by one number per round of a comparison: the measured split.
 *
 * The runs of one comparison that drew the same load in round r (same app,
 * load signature, devices, units, work and chunk count: every pass counts)
 * are pooled. Every bundle each of them ran in round r (struct hf_event: a
 * span of chunks on a device and its seconds, copies and latency included)
 * is an observation. From all of them together one cost per chunk is fitted,
 * device independent, s_i: each span's seconds, over its device's seconds
 * per unit of cost, shared over its chunks in proportion to their current
 * costs, averaged over the spans that hold a chunk (a multiplicative fixed
 * point, the fold of chunk_cost.c done on every run's spans at once; where
 * no span boundary falls inside a region its cost stays spread evenly, which
 * changes nothing for the devices that ran all of it; every span counts,
 * those a run's own model flagged as outliers too, since a dear chunk is an
 * outlier to a model fitted on cheap ones). A device then costs
 * L_d + inv_d * (cost of what it runs): inv_d is the least seconds per unit
 * of cost it achieved in any of the runs (its busy time, at most the round's
 * makespan, less L_d, over the cost of every span it ran), and L_d, a GPU's
 * per-bundle latency, is the intercept of its spans' seconds against their
 * cost, kept within [0, its shortest span]; a CPU team runs chunk by chunk
 * and pays its latency in every chunk, so its L_d is 0 and the latency sits
 * in inv_d. The bound is the relaxed split under those lines, chunks
 * divisible, each latency paid once: the T with sum over devices of
 * max(0, T - L_d) / inv_d = the round's cost (hf_cost_split, its closed form
 * for affine devices).
 *
 * Why it is never above a makespan: in every pooled run X, each device d ran
 * spans of cost W_d in busy time B_d <= makespan_X, and inv_d <= (B_d -
 * L_d) / W_d by its choice, so L_d + inv_d W_d <= makespan_X; X's own split
 * is one the relaxed split minimises over, so T <= makespan_X, whatever the
 * fitted chunk costs are (they decide how tight the bound is, not whether it
 * is one). One device that ran everything has T = the least busy time of any
 * run: its bound is what it ran.
 *
 * What it cannot see: a device no pooled run gave work is left out (its rate
 * is unknown); a split none of the runs tried is priced by the fitted chunk
 * costs, which are only as fine as the span boundaries the runs drew (a CPU's
 * consecutive chunks are one event); the least rate over the runs is the
 * luckiest one, so the bound drifts down as noise grows; time outside the
 * devices' bundles (host merges, dispatch gaps) is in every makespan and no
 * bound; and a run whose events were capped (HF_MAX_EVENTS) measures nothing
 * in the rounds it lost, and keeps the engine's bound there.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "hetfarm.h"
#include "sched.h"

#define FOLD_ITERATIONS 60 /* the chunk-cost fit's rounds; it moves little after 30 */
#define COST_FLOOR 1e-9    /* the least chunk cost, of the mean: spans of zero time stay defined */

/* One bundle of the pool: which run (index into the pool), device, span, seconds. */
struct obs {
    int run, dev;
    size_t first, count;
    double t;
};

/* One (run, round) of the pool. */
struct member {
    struct hf_run *run;
    int ri, k; /* index into the runs, into run->rounds */
};

/* The events of each round of a run, in round order (counting sort): idx[lo[r]..lo[r+1]). */
struct by_round {
    size_t *idx, *lo;
    int nrounds;
};

static void by_round_free(struct by_round *b)
{
    free(b->idx);
    free(b->lo);
}

static int by_round_make(const struct hf_run *run, struct by_round *b)
{
    int maxr = 0;
    for (int k = 0; k < run->nrounds; k++)
        maxr = run->rounds[k].round + 1 > maxr ? run->rounds[k].round + 1 : maxr;
    b->nrounds = maxr;
    b->lo = calloc((size_t)maxr + 2, sizeof *b->lo);
    b->idx = malloc((run->nevents ? run->nevents : 1) * sizeof *b->idx);
    if (!b->lo || !b->idx)
        return HF_ENOMEM;
    for (size_t i = 0; i < run->nevents; i++)
        if (run->events[i].round >= 0 && run->events[i].round < maxr)
            b->lo[run->events[i].round + 1]++;
    for (int r = 0; r < maxr; r++)
        b->lo[r + 1] += b->lo[r];
    size_t *at = malloc(((size_t)maxr + 1) * sizeof *at);
    if (!at)
        return HF_ENOMEM;
    memcpy(at, b->lo, ((size_t)maxr + 1) * sizeof *at);
    for (size_t i = 0; i < run->nevents; i++)
        if (run->events[i].round >= 0 && run->events[i].round < maxr)
            b->idx[at[run->events[i].round]++] = i;
    free(at);
    return 0;
}

/* Whether runs a and b ran on the same devices, the same app and load signature and engine. */
static int same_setup(const struct hf_run *a, const struct hf_run *b)
{
    if (strcmp(a->engine, b->engine) || strcmp(a->app, b->app) ||
        strcmp(a->signature, b->signature) || a->ndevices != b->ndevices)
        return 0;
    for (int d = 0; d < a->ndevices; d++)
        if (strcmp(a->devs[d].name, b->devs[d].name))
            return 0;
    return 1;
}

/* Whether two rounds drew the same load. */
static int same_load(const struct hf_round_stats *a, const struct hf_round_stats *b)
{
    return a->load_units == b->load_units &&
           fabs(a->load_work - b->load_work) <= 1e-12 * fmax(fabs(a->load_work), 1.0);
}

/* The spans member m ran in its round, appended to *obs (growing it); the
 * round's chunk count raised in *nchunks. Returns 1 when the events hold
 * every chunk the round's statistics count (else the member measured
 * nothing usable and nothing is appended), 0, or HF_ENOMEM. */
static int collect(const struct member *m, int mi, const struct by_round *br, struct obs **obs,
                   size_t *nobs, size_t *cap, size_t *nchunks)
{
    const struct hf_round_stats *rs = &m->run->rounds[m->k];
    if (rs->round < 0 || rs->round >= br->nrounds || !rs->dev)
        return 0;
    size_t want = 0, got = 0;
    for (int d = 0; d < m->run->ndevices; d++)
        want += rs->dev[d].chunks;
    for (size_t j = br->lo[rs->round]; j < br->lo[rs->round + 1]; j++)
        got += m->run->events[br->idx[j]].count;
    if (want == 0 || got != want)
        return 0;
    for (size_t j = br->lo[rs->round]; j < br->lo[rs->round + 1]; j++) {
        const struct hf_event *e = &m->run->events[br->idx[j]];
        if (e->count == 0 || e->device < 0 || e->device >= m->run->ndevices)
            continue;
        if (*nobs == *cap) {
            size_t c = *cap ? 2 * *cap : 256;
            struct obs *v = realloc(*obs, c * sizeof *v);
            if (!v)
                return HF_ENOMEM;
            *obs = v;
            *cap = c;
        }
        (*obs)[(*nobs)++] = (struct obs){mi, e->device, e->first, e->count,
                                         fmax(0.0, e->end_s - e->start_s)};
        if (e->first + e->count > *nchunks)
            *nchunks = e->first + e->count;
    }
    return 1;
}

/* Fits the chunk costs s[0..n) (mean 1) to the spans (see DESIGN). */
static int fit_costs(const struct obs *o, size_t no, int ndev, double *s, size_t n)
{
    double *pre = malloc((n + 1) * sizeof *pre), *num = malloc((n + 1) * sizeof *num);
    double *cnt = malloc((n + 1) * sizeof *cnt), *ts = calloc((size_t)ndev, sizeof *ts);
    double *ws = calloc((size_t)ndev, sizeof *ws);
    int rc = pre && num && cnt && ts && ws ? 0 : HF_ENOMEM;
    for (size_t i = 0; i < n; i++)
        s[i] = 1.0;
    for (int it = 0; it < FOLD_ITERATIONS && rc == 0; it++) {
        pre[0] = 0.0;
        for (size_t i = 0; i < n; i++)
            pre[i + 1] = pre[i] + s[i];
        memset(ts, 0, (size_t)ndev * sizeof *ts);
        memset(ws, 0, (size_t)ndev * sizeof *ws);
        for (size_t k = 0; k < no; k++) {
            ts[o[k].dev] += o[k].t;
            ws[o[k].dev] += pre[o[k].first + o[k].count] - pre[o[k].first];
        }
        memset(num, 0, (n + 1) * sizeof *num);
        memset(cnt, 0, (n + 1) * sizeof *cnt);
        for (size_t k = 0; k < no; k++) {
            double w = pre[o[k].first + o[k].count] - pre[o[k].first];
            if (!(ts[o[k].dev] > 0.0) || !(w > 0.0))
                continue;
            /* The span's seconds in units of cost, over its chunks' current cost. */
            double v = o[k].t / (ts[o[k].dev] / ws[o[k].dev]) / w;
            num[o[k].first] += v;
            num[o[k].first + o[k].count] -= v;
            cnt[o[k].first] += 1.0;
            cnt[o[k].first + o[k].count] -= 1.0;
        }
        double a = 0.0, c = 0.0, sum = 0.0;
        for (size_t i = 0; i < n; i++) {
            a += num[i];
            c += cnt[i];
            if (c > 0.5)
                s[i] *= a / c;
            sum += s[i];
        }
        for (size_t i = 0; i < n; i++)
            s[i] = fmax(s[i] * (double)n / sum, COST_FLOOR);
    }
    free(pre);
    free(num);
    free(cnt);
    free(ts);
    free(ws);
    return rc;
}

/* A GPU's per-bundle latency: the intercept of its spans' seconds against
 * their cost (least squares), within [0, its shortest span]; 0 with fewer
 * than two distinct costs. */
static double gpu_latency(const struct obs *o, size_t no, int dev, const double *pre)
{
    double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, least = INFINITY;
    for (size_t k = 0; k < no; k++) {
        if (o[k].dev != dev)
            continue;
        least = fmin(least, o[k].t);
        double x = pre[o[k].first + o[k].count] - pre[o[k].first];
        n += 1;
        sx += x;
        sy += o[k].t;
        sxx += x * x;
        sxy += x * o[k].t;
    }
    double den = n * sxx - sx * sx;
    if (n < 2 || !(den > 1e-12 * n * sxx) || !isfinite(least))
        return 0.0;
    double lat = (sy * sxx - sx * sxy) / den;
    return isfinite(lat) ? fmin(fmax(lat, 0.0), least) : 0.0;
}

/* The measured split of one pooled round (see DESIGN) into *out; 0 when it
 * is known, 1 when no member measured it, or HF_ENOMEM. */
static int pooled_bound(const struct member *mem, int nm, struct by_round *const *br, double *out)
{
    const struct hf_run *r0 = mem[0].run;
    int ndev = r0->ndevices, rc = 0;
    struct obs *o = NULL;
    size_t no = 0, cap = 0, n = 0;
    int *ok = calloc((size_t)nm, sizeof *ok);
    if (!ok)
        return HF_ENOMEM;
    int any = 0;
    for (int i = 0; i < nm && rc == 0; i++) {
        int got = collect(&mem[i], i, br[i], &o, &no, &cap, &n);
        if (got < 0)
            rc = got;
        ok[i] = got == 1;
        any |= ok[i];
    }
    double *s = NULL, *pre = NULL, *lat = NULL, *inv = NULL, *x = NULL, *w = NULL;
    int *use = NULL;
    if (rc == 0 && (!any || n == 0))
        rc = 1;
    if (rc == 0) {
        s = malloc(n * sizeof *s);
        pre = malloc((n + 1) * sizeof *pre);
        lat = calloc((size_t)ndev, sizeof *lat);
        inv = malloc((size_t)ndev * sizeof *inv);
        x = calloc((size_t)ndev, sizeof *x);
        w = calloc((size_t)nm * (size_t)ndev, sizeof *w);
        use = calloc((size_t)ndev, sizeof *use);
        rc = s && pre && lat && inv && x && w && use ? fit_costs(o, no, ndev, s, n) : HF_ENOMEM;
    }
    if (rc == 0) {
        pre[0] = 0.0;
        for (size_t i = 0; i < n; i++)
            pre[i + 1] = pre[i] + s[i];
        for (size_t k = 0; k < no; k++) /* the cost of every span each device ran, per run */
            w[(size_t)o[k].run * (size_t)ndev + (size_t)o[k].dev] +=
                pre[o[k].first + o[k].count] - pre[o[k].first];
        for (int d = 0; d < ndev; d++) {
            /* The latency may not exceed any run's busy time of the device. */
            double least_busy = INFINITY;
            for (int i = 0; i < nm; i++) {
                const struct hf_round_stats *rs = &mem[i].run->rounds[mem[i].k];
                if (ok[i] && w[(size_t)i * (size_t)ndev + (size_t)d] > 0.0)
                    least_busy = fmin(least_busy, fmin(rs->dev[d].busy_s, rs->makespan_s));
            }
            lat[d] = r0->devs[d].is_gpu ? fmin(gpu_latency(o, no, d, pre), least_busy) : 0.0;
            inv[d] = INFINITY;
            for (int i = 0; i < nm; i++) {
                const struct hf_round_stats *rs = &mem[i].run->rounds[mem[i].k];
                double wd = w[(size_t)i * (size_t)ndev + (size_t)d];
                double busy = fmin(rs->dev[d].busy_s, rs->makespan_s);
                if (ok[i] && wd > 0.0)
                    inv[d] = fmin(inv[d], fmax(busy - lat[d], 0.0) / wd);
            }
            use[d] = isfinite(inv[d]) && inv[d] > 0.0;
        }
        double T = hf_cost_split(lat, inv, use, ndev, pre[n], x);
        rc = isfinite(T) && T > 0.0 ? 0 : 1;
        if (rc == 0)
            *out = T;
    }
    free(o);
    free(ok);
    free(s);
    free(pre);
    free(lat);
    free(inv);
    free(x);
    free(w);
    free(use);
    return rc;
}

int hf_bound_measured(struct hf_run *const *runs, int nruns)
{
    if (nruns <= 0)
        return 0;
    int rc = 0, total_rounds = 0;
    struct by_round *br = calloc((size_t)nruns, sizeof *br);
    struct member *mem = calloc((size_t)nruns, sizeof *mem);
    struct by_round **mbr = calloc((size_t)nruns, sizeof *mbr);
    int *group = malloc((size_t)nruns * sizeof *group), *taken = NULL, *measured = NULL;
    for (int i = 0; i < nruns; i++)
        total_rounds += runs[i]->nrounds;
    taken = calloc((size_t)total_rounds + 1, sizeof *taken);
    measured = calloc((size_t)total_rounds + 1, sizeof *measured);
    double *bound = calloc((size_t)total_rounds + 1, sizeof *bound);
    if (!br || !mem || !mbr || !group || !taken || !measured || !bound)
        rc = HF_ENOMEM;
    for (int i = 0; i < nruns && rc == 0; i++)
        rc = by_round_make(runs[i], &br[i]);
    /* Runs of the same setup form a group; rounds of a group that drew the
     * same load form a pool. at[i]: run i's first round in the flat arrays. */
    int *at = rc == 0 ? malloc((size_t)nruns * sizeof *at) : NULL;
    if (rc == 0 && !at)
        rc = HF_ENOMEM;
    for (int i = 0, a = 0; i < nruns && rc == 0; a += runs[i]->nrounds, i++) {
        at[i] = a;
        group[i] = i;
        for (int j = 0; j < i && group[i] == i; j++)
            if (same_setup(runs[j], runs[i]))
                group[i] = group[j];
    }
    for (int i = 0; i < nruns && rc == 0; i++)
        for (int k = 0; k < runs[i]->nrounds && rc == 0; k++) {
            if (taken[at[i] + k])
                continue;
            int nm = 0;
            for (int j = i; j < nruns; j++) {
                if (group[j] != group[i])
                    continue;
                for (int q = 0; q < runs[j]->nrounds; q++)
                    if (!taken[at[j] + q] && runs[j]->rounds[q].round == runs[i]->rounds[k].round &&
                        same_load(&runs[j]->rounds[q], &runs[i]->rounds[k])) {
                        taken[at[j] + q] = 1;
                        mem[nm] = (struct member){runs[j], j, q};
                        mbr[nm++] = &br[j];
                        break;
                    }
            }
            double T = 0.0;
            int got = pooled_bound(mem, nm, mbr, &T);
            if (got < 0) {
                rc = got;
                break;
            }
            for (int m = 0; m < nm && got == 0; m++) {
                measured[at[mem[m].ri] + mem[m].k] = 1;
                bound[at[mem[m].ri] + mem[m].k] = T;
            }
        }
    /* A run takes the measured split when every one of its rounds has it. */
    for (int i = 0; i < nruns && rc == 0; i++) {
        int all = runs[i]->nrounds > 0;
        for (int k = 0; k < runs[i]->nrounds; k++)
            all &= measured[at[i] + k];
        if (!all)
            continue;
        for (int k = 0; k < runs[i]->nrounds; k++) {
            struct hf_round_stats *rs = &runs[i]->rounds[k];
            rs->bound_s = bound[at[i] + k];
            rs->efficiency = rs->makespan_s > 0.0 ? rs->bound_s / rs->makespan_s : 0.0;
        }
        snprintf(runs[i]->bound, sizeof runs[i]->bound, "%s", HF_BOUND_MEASURED);
    }
    for (int i = 0; br && i < nruns; i++)
        by_round_free(&br[i]);
    free(br);
    free(mem);
    free(mbr);
    free(group);
    free(taken);
    free(measured);
    free(bound);
    free(at);
    return rc;
}
