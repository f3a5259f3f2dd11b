/* sched_util.c - shared arithmetic and buffer handling of the schedulers.
 *
 * DESIGN
 * ------
 * The schedulers differ in how they pick shares (measured rates, fitted lines,
 * a profile, a config line) but not in what they do with them, so that part
 * lives here once. Shares become whole chunk counts by "floor, then min
 * completion time for the leftovers": a plain largest-remainder rounding can
 * hand a slow CPU one extra chunk that costs more than the whole rest of the
 * round on a GPU, while giving each leftover chunk to the device that would
 * finish it first keeps the rounding error within one chunk of the *fastest*
 * device. Counts become contiguous buffers (GPUs first, CPUs last) because a
 * GPU bundle must be one contiguous span and GPUs steal from a CPU buffer's
 * tail. Nothing here keeps state; all of it runs under the engine lock.
 */
#include "sched_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int hf__split_counts(size_t n, const double *rate, const int *alive, int ndev, size_t *counts)
{
    double sum = 0.0;
    int users = 0;
    for (int d = 0; d < ndev; d++) {
        counts[d] = 0;
        if (rate[d] > 0.0 && isfinite(rate[d]) && (!alive || alive[d])) {
            sum += rate[d];
            users++;
        }
    }
    if (users == 0 || n == 0)
        return users;
    size_t given = 0;
    for (int d = 0; d < ndev; d++) {
        if (rate[d] <= 0.0 || !isfinite(rate[d]) || (alive && !alive[d]))
            continue;
        counts[d] = (size_t)floor((double)n * rate[d] / sum);
        given += counts[d];
    }
    /* Floors can only undershoot (by fewer than `users` chunks, plus rounding
     * noise), so hand the rest out one at a time to whoever finishes it first. */
    while (given < n) {
        int best = -1;
        double best_t = INFINITY;
        for (int d = 0; d < ndev; d++) {
            if (rate[d] <= 0.0 || !isfinite(rate[d]) || (alive && !alive[d]))
                continue;
            double t = (double)(counts[d] + 1) / rate[d];
            if (t < best_t) {
                best_t = t;
                best = d;
            }
        }
        counts[best]++;
        given++;
    }
    /* Guard against a floor that overshot through floating-point rounding. */
    while (given > n) {
        int worst = -1;
        double worst_t = -1.0;
        for (int d = 0; d < ndev; d++)
            if (counts[d] > 0 && (double)counts[d] / rate[d] > worst_t) {
                worst_t = (double)counts[d] / rate[d];
                worst = d;
            }
        counts[worst]--;
        given--;
    }
    return users;
}

void hf__layout(struct hf__buf *buf, const size_t *counts, const struct hf_device_info *dev,
                int ndev, size_t base)
{
    size_t at = base;
    for (int pass = 1; pass >= 0; pass--)
        for (int d = 0; d < ndev; d++) {
            if ((dev[d].is_gpu != 0) != (pass == 1))
                continue;
            buf[d].lo = at;
            buf[d].hi = at + counts[d];
            at = buf[d].hi;
        }
}

int hf__layout_order(const struct hf_device_info *dev, int ndev, const size_t *counts, int *order)
{
    int n = 0;
    for (int pass = 1; pass >= 0; pass--)
        for (int d = 0; d < ndev; d++)
            if ((dev[d].is_gpu != 0) == (pass == 1) && counts[d] > 0)
                order[n++] = d;
    return n;
}

double hf__buf_work(const struct hf_round *r, const struct hf__buf *b)
{
    double w = 0.0;
    for (size_t i = b->lo; i < b->hi; i++)
        w += r->chunks[i].work;
    return w;
}

double hf__buf_bytes(const struct hf_round *r, const struct hf__buf *b)
{
    double y = 0.0;
    for (size_t i = b->lo; i < b->hi; i++)
        y += r->chunks[i].bytes;
    return y;
}

int hf__take_front(struct hf__buf *buf, int d, size_t count, struct hf_span *out)
{
    struct hf__buf *b = &buf[d];
    size_t left = b->hi - b->lo;
    if (left == 0)
        return 0;
    out->first = b->lo;
    out->count = count < 1 ? 1 : count < left ? count : left;
    out->stolen = 0;
    b->lo += out->count;
    return 1;
}

int hf__take_own(struct hf__buf *buf, const struct hf_device_info *dev, int d,
                 struct hf_span *out)
{
    return hf__take_front(buf, d, dev[d].is_gpu ? buf[d].hi - buf[d].lo : 1, out);
}

int hf__take_tail(struct hf__buf *buf, int from, size_t count, struct hf_span *out)
{
    struct hf__buf *b = &buf[from];
    size_t left = b->hi - b->lo;
    if (left == 0)
        return 0;
    if (count < 1)
        count = 1;
    if (count > left)
        count = left;
    b->hi -= count;
    out->first = b->hi;
    out->count = count;
    out->stolen = 1;
    return 1;
}

int hf__take_orphan(struct hf__buf *buf, const struct hf_device_info *dev, const int *alive,
                    int ndev, int d, struct hf_span *out)
{
    for (int o = 0; o < ndev; o++) {
        if (!alive || alive[o] || buf[o].lo >= buf[o].hi)
            continue;
        /* The orphaned range is handed out the way its new owner eats. */
        return hf__take_tail(buf, o, dev[d].is_gpu ? buf[o].hi - buf[o].lo : 1, out);
    }
    return 0;
}

void hf__cost_cut(const struct hf_round *r, size_t base, const struct hf_device_info *dev,
                  int ndev, size_t *counts)
{
    const struct hf_chunk *c = r->chunks;
    size_t end = r->nchunks, at = base;
    double lo = INFINITY, hi = 0.0, total = 0.0, acc = 0.0, target = 0.0;
    for (size_t i = base; i < end; i++) {
        lo = fmin(lo, c[i].work);
        hi = fmax(hi, c[i].work);
        total += c[i].work;
    }
    if (end <= base || !(hi > 1.01 * lo))
        return;
    double mean = total / (double)(end - base);
    int order[ndev > 0 ? ndev : 1], n = hf__layout_order(dev, ndev, counts, order);
    for (int i = 0; i < n; i++) {
        int d = order[i];
        target += mean * (double)counts[d];
        size_t start = at;
        while (at < end && acc + 0.5 * c[at].work <= target)
            acc += c[at++].work;
        counts[d] = at - start;
    }
    if (n > 0)
        counts[order[n - 1]] += end - at;
}

/* Walks the layout giving each device the chunks that fit scale x its
 * planned time (a chunk fits while half of it does); returns the cost, in
 * multiples of its planned time, of what the last device is left with, and
 * the counts in out. */
static double walk(const struct hf_round *r, size_t base, const struct hf_device_info *dev,
                   int ndev, const size_t *counts, const double *coef, const double *plan,
                   double scale, size_t *out)
{
    const struct hf_chunk *c = r->chunks;
    size_t at = base, end = r->nchunks;
    for (int d = 0; d < ndev; d++)
        out[d] = counts[d];
    int order[ndev > 0 ? ndev : 1], n = hf__layout_order(dev, ndev, counts, order);
    double left = 0.0, carry = 0.0; /* what the device before fell short, in its mean chunks */
    for (int i = 0; i < n; i++) {
        int d = order[i];
        const double *k = coef + 3 * d;
        size_t start = at;
        double acc = 0.0, unit = plan[d] / (double)counts[d]; /* its mean chunk's cost */
        if (i == n - 1) {
            for (; at < end; at++)
                acc += k[0] + c[at].work * k[1] + c[at].bytes * k[2];
            left = acc / plan[d];
        } else {
            /* Its own share plus what the one before left (or less what it
             * took beyond its share), so that rounding at one boundary does
             * not push every later run along the load. */
            double target = scale * plan[d] + carry * unit;
            while (at < end) {
                double ci = k[0] + c[at].work * k[1] + c[at].bytes * k[2];
                if (acc + 0.5 * ci > target)
                    break;
                acc += ci;
                at++;
            }
            carry = (target - acc) / unit;
        }
        out[d] = at - start;
    }
    return left;
}

void hf__cost_cut_models(const struct hf_round *r, size_t base, const struct hf_device_info *dev,
                         int ndev, size_t *counts, const double *coef)
{
    const struct hf_chunk *c = r->chunks;
    size_t end = r->nchunks;
    double wlo = INFINITY, whi = 0.0, blo = INFINITY, bhi = 0.0, W = 0.0, B = 0.0;
    for (size_t i = base; i < end; i++) {
        wlo = fmin(wlo, c[i].work);
        whi = fmax(whi, c[i].work);
        blo = fmin(blo, c[i].bytes);
        bhi = fmax(bhi, c[i].bytes);
        W += c[i].work;
        B += c[i].bytes;
    }
    if (end <= base || (!(whi > 1.01 * wlo) && !(bhi > 1.01 * blo)))
        return;
    double w = W / (double)(end - base), b = B / (double)(end - base), plan[ndev];
    for (int d = 0; d < ndev; d++) {
        plan[d] = (double)counts[d] * (coef[3 * d] + w * coef[3 * d + 1] + b * coef[3 * d + 2]);
        if (counts[d] > 0 && (!(coef[3 * d + 1] > 0.0) || !(plan[d] > 0.0)))
            return;
    }
    /* The last device's multiple falls as the others' grows: bisect for the
     * multiple at which they meet. */
    size_t out[ndev];
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < 60 && walk(r, base, dev, ndev, counts, coef, plan, hi, out) > hi; i++)
        hi *= 2.0;
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (walk(r, base, dev, ndev, counts, coef, plan, mid, out) > mid)
            lo = mid;
        else
            hi = mid;
    }
    /* Of the two sides of the crossing, the one whose worst multiple is smaller. */
    size_t at_lo[ndev];
    double left_lo = walk(r, base, dev, ndev, counts, coef, plan, lo, at_lo);
    double left_hi = walk(r, base, dev, ndev, counts, coef, plan, hi, out);
    if (fmax(left_lo, lo) < fmax(left_hi, hi))
        memcpy(out, at_lo, sizeof out);
    memcpy(counts, out, sizeof out);
}

void hf__normalise(double *v, int n)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += v[i] > 0.0 ? v[i] : 0.0;
    for (int i = 0; i < n; i++)
        v[i] = sum > 0.0 ? (v[i] > 0.0 ? v[i] / sum : 0.0) : 1.0 / n;
}

double hf__max_share_change(const double *a, const double *b, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++)
        m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

int hf__count_gpus(const struct hf_device_info *dev, int ndev)
{
    int g = 0;
    for (int d = 0; d < ndev; d++)
        g += dev[d].is_gpu != 0;
    return g;
}

int hf__link_index(const struct hf_device_info *dev, int ndev, int *link_of)
{
    int nlinks = 0;
    for (int d = 0; d < ndev; d++) {
        link_of[d] = -1;
        if (dev[d].link <= 0)
            continue;
        for (int k = 0; k < d && link_of[d] < 0; k++)
            if (dev[k].link == dev[d].link)
                link_of[d] = link_of[k];
        if (link_of[d] < 0)
            link_of[d] = nlinks++;
    }
    return nlinks;
}

double hf__mean_chunk_work(const struct hf_round *r)
{
    return r->nchunks ? r->total_work / (double)r->nchunks : 0.0;
}

double hf__mean_chunk_bytes(const struct hf_round *r)
{
    double b = 0.0;
    for (size_t i = 0; i < r->nchunks; i++)
        b += r->chunks[i].bytes;
    return r->nchunks ? b / (double)r->nchunks : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hf__median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int hf__whole_counts(const double *lat, const double *inv, const int *use, int ndev,
                     const double *x, size_t n, double w, size_t *counts)
{
    size_t given = 0;
    for (int d = 0; d < ndev; d++) {
        counts[d] = (size_t)floor(x[d] / w);
        given += counts[d];
    }
    while (given < n) {
        int best = -1;
        double best_t = INFINITY;
        for (int d = 0; d < ndev; d++) {
            double t = lat[d] + (double)(counts[d] + 1) * w * inv[d];
            if (use[d] && t < best_t) {
                best = d;
                best_t = t;
            }
        }
        if (best < 0)
            return 0;
        counts[best]++;
        given++;
    }
    return 1;
}

size_t hf__pow2_floor(size_t k)
{
    size_t p = 1;
    while (p * 2 <= k)
        p *= 2;
    return p;
}

double hf__buf_tail_work(const struct hf_round *r, const struct hf__buf *b, size_t k)
{
    double s = 0.0;
    for (size_t i = 0; i < k && b->lo + i < b->hi; i++)
        s += r->chunks[b->hi - 1 - i].work;
    return s;
}
