/* cost_bytes.c - the per-byte term of the cost model: fitting
 * T = lat + w * inv + b * inv_bw, and the bound that splits work and bytes
 * under it (issue 18).
 *
 * DESIGN
 * ------
 * A GPU's bundle time is its latency, its kernels and the copies its kernels
 * do not hide. Where every bundle moves bytes in proportion to its work
 * (matmul's rows) the copies are part of the cost per unit of work and the
 * line of cost_model.c is the whole truth. Where they are not (a load whose
 * chunks differ 200x in work but each move 0.5 MB: a GPU's cheap chunks are
 * copy-bound, 9 us of copies against 1.6 us of work at 55 GB/s and 50 Tflop/s)
 * no line in w fits both ends, and the fit of the line mixed them: its slope
 * came out of pairs of copy-bound bundles, its spread was 8.7%, and a split
 * planned on it kept a GPU late every round. The sim engine adds the copies
 * (latency + bytes / bandwidth + work / rate, framework/device.h), and so
 * does the sum here; a real driver that overlaps copies of one piece with the
 * kernel of the last pays about the larger of the two per piece, which a sum
 * over a bundle of many pieces follows as long as one of them dominates
 * throughout (the per-byte term then measures what is not hidden).
 *
 * Three unknowns need three bundles of different shapes: no two of them of
 * one size and bytes per work not all alike. The fit is a least median of
 * squares (Rousseeuw) in relative terms, the robust estimator of the same
 * family as the line's Theil-Sen: every triple of bundles of one kind (all
 * first of their size, or all repeats: warm-ups cancel, as in the line's
 * pairs) gives an exact fit, kept when all three terms come out usable; the
 * one whose median relative residual over the other bundles of its kind is
 * smallest wins, and a weighted least-squares fit over the bundles it
 * explains (within 3 robust standard deviations) refines it. One wild bundle
 * cannot win: a triple through it misfits the rest. The intercept is then the
 * median over the repeats, as the line's is. Only windows whose bytes per
 * unit of work spread by 1.5x or more are tried; otherwise inv_bw and inv
 * cannot be told apart and the caller keeps the line. A fit in which the work
 * does not take 3/4 of the time of the bundle with the least bytes per work is
 * refused: where a device's bundles run from copy-bound to compute-bound, the
 * most compute-bound one is mostly work; a fit that says otherwise is a
 * per-byte term standing in for a chunk count where the work figures are off
 * (on CPU + 2 H200 + 2 L40 with GPU trouble, where learned chunk costs were 5x
 * off in round 2, it said an L40's work was nearly free, and HASS's cut gave
 * it the hump's whole middle: 0.37 s rounds against 0.08). Only bundles measured in
 * the current unit of work take part (hf_cost_new_unit): on a repeating load
 * whose chunk costs are still being learned, an older bundle's work is in
 * another unit, and a mix of units is fitted best by a per-byte term that
 * stands in for a chunk count (on CPU + 2 H200 + 2 L40 with GPU trouble, such
 * a fit said an H200's bytes cost 9x its work; HASS's rounds went 0.08 ->
 * 0.37 s).
 *
 * The bound: a lower bound on any split of a round's chunks must allow every
 * split of their work and bytes, so it frees the two from each other: for a
 * trial T each device has T - lat_d seconds; work goes first to the devices
 * whose bytes are dearest against their work (inv_bw / inv largest), since
 * they lose the most byte capacity per unit of work elsewhere. A device that
 * copies nothing (a CPU, inv_bw = 0) takes any bytes free: with one in the
 * split, the bound is the work-only split, weaker but still true. T is found
 * by bisection; the answer is within 1e-12 relative of the smallest feasible T.
 */
#include <math.h>
#include <stdlib.h>

#include "cost_bytes.h"

#define BYTES_RHO_GAP 1.5 /* bytes per work must spread this much to be fitted apart */
#define BYTES_MIN_KIND 5  /* bundles of one kind a triple is judged on: 3 + 2 others */
/* The work term's least multiple of the bytes' term in the bundle with the least
 * bytes per work (3: the work takes 3/4 of its time above latency). */
#define BYTES_WORK_RULES 3.0

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hf__cost_median(double *v, int n)
{
    if (n == 0)
        return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Solves the 3x3 system a x = y by Cramer's rule; 0 when (nearly) singular
 * relative to the size of a's entries. */
static int solve3(const double a[3][3], const double y[3], double x[3])
{
    double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                 a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                 a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    double scale = 0.0;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            scale = fmax(scale, fabs(a[i][j]));
    if (!(fabs(det) > 1e-9 * scale * scale * scale))
        return 0;
    for (int k = 0; k < 3; k++) {
        double m[3][3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                m[i][j] = j == k ? y[i] : a[i][j];
        x[k] = (m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])) /
               det;
    }
    return 1;
}

/* The median absolute relative residual of fit p = (lat, inv, inv_bw) over the
 * bundles idx[0..n-1] of the window, skipping those in skip[0..2] (NULL: none). */
static double med_resid(const struct hf_cost_model *m, const int *idx, int n, const double *p,
                        const int *skip)
{
    double v[HF_COST_WINDOW];
    int k = 0;
    for (int a = 0; a < n; a++) {
        int i = idx[a];
        if (skip && (i == skip[0] || i == skip[1] || i == skip[2]))
            continue;
        double pred = p[0] + p[1] * m->w[i] + p[2] * m->b[i];
        v[k++] = pred > 0.0 ? fabs(m->t[i] / pred - 1.0) : INFINITY;
    }
    return hf__cost_median(v, k);
}

/* Least squares of the relative residuals over the bundles of idx within
 * `tol` of fit p; writes the refined fit to q, 0 when it is not usable. Work
 * and bytes are solved for in units of W and B (the window's largest), so
 * that the system is well scaled. */
static int refine(const struct hf_cost_model *m, const int *idx, int n, const double *p, double tol,
                  double W, double B, double *q)
{
    double a[3][3] = {{0}}, y[3] = {0};
    int used = 0;
    for (int k = 0; k < n; k++) {
        int i = idx[k];
        double pred = p[0] + p[1] * m->w[i] + p[2] * m->b[i];
        if (!(pred > 0.0) || fabs(m->t[i] / pred - 1.0) > tol)
            continue;
        double x[3] = {1.0 / m->t[i], m->w[i] / W / m->t[i], m->b[i] / B / m->t[i]};
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++)
                a[r][c] += x[r] * x[c];
            y[r] += x[r];
        }
        used++;
    }
    if (used < 4 || !solve3(a, y, q))
        return 0;
    q[1] /= W;
    q[2] /= B;
    return q[0] >= 0.0 && q[1] > 0.0 && q[2] > 0.0;
}

int hf__cost_fit_bytes(const struct hf_cost_model *m, int repeats, double *lat, double *inv,
                       double *inv_bw, double *resid)
{
    double rmin = INFINITY, rmax = 0.0, W = 0.0, B = 0.0;
    int recent = 0;
    for (int i = 0; i < m->n; i++) {
        if (m->age[i] < m->unit_from)
            continue;
        recent++;
        rmin = fmin(rmin, m->b[i] / m->w[i]);
        rmax = fmax(rmax, m->b[i] / m->w[i]);
        W = fmax(W, m->w[i]);
        B = fmax(B, m->b[i]);
    }
    if (recent < BYTES_MIN_KIND || !(rmax > 0.0) || !(rmax > BYTES_RHO_GAP * rmin))
        return 0;
    double best[3] = {0}, best_score = INFINITY;
    int best_kind = -1;
    for (int kind = 0; kind < 2; kind++) {
        int idx[HF_COST_WINDOW], n = 0;
        for (int i = 0; i < m->n; i++)
            if (m->fresh[i] == kind && m->age[i] >= m->unit_from)
                idx[n++] = i;
        if (n < BYTES_MIN_KIND)
            continue;
        for (int x = 0; x < n; x++)
            for (int y = x + 1; y < n; y++)
                for (int z = y + 1; z < n; z++) {
                    int tri[3] = {idx[x], idx[y], idx[z]};
                    double a[3][3], t[3], p[3];
                    for (int r = 0; r < 3; r++) {
                        a[r][0] = 1.0;
                        a[r][1] = m->w[tri[r]] / W;
                        a[r][2] = m->b[tri[r]] / B;
                        t[r] = m->t[tri[r]];
                    }
                    if (!solve3(a, t, p) || !(p[1] > 0.0) || !(p[2] > 0.0))
                        continue;
                    p[1] /= W;
                    p[2] /= B;
                    if (p[1] < BYTES_WORK_RULES * p[2] * rmin)
                        continue; /* work must rule the dearest bundle (DESIGN) */
                    double score = med_resid(m, idx, n, p, tri);
                    if (score < best_score) {
                        best_score = score;
                        best_kind = kind;
                        for (int k = 0; k < 3; k++)
                            best[k] = p[k];
                    }
                }
    }
    if (best_kind < 0)
        return 0;
    int idx[HF_COST_WINDOW], n = 0, judged[HF_COST_WINDOW], nj = 0, nrep = 0;
    for (int i = 0; i < m->n; i++) {
        if (m->fresh[i] == best_kind && m->age[i] >= m->unit_from)
            idx[n++] = i;
        nrep += !m->fresh[i];
    }
    double q[3];
    if (refine(m, idx, n, best, fmax(3.0 * 1.4826 * best_score, 0.02), W, B, q) &&
        q[1] >= BYTES_WORK_RULES * q[2] * rmin)
        for (int k = 0; k < 3; k++)
            best[k] = q[k];
    /* The intercept as the line's: the median over the repeats when there are any. */
    double v[HF_COST_WINDOW];
    for (int i = 0; i < m->n; i++)
        if (!(repeats && nrep > 0) || !m->fresh[i]) {
            judged[nj] = i;
            v[nj++] = m->t[i] - best[1] * m->w[i] - best[2] * m->b[i];
        }
    best[0] = fmax(hf__cost_median(v, nj), 0.0);
    *lat = best[0];
    *inv = best[1];
    *inv_bw = best[2];
    *resid = med_resid(m, judged, nj, best, NULL);
    return 1;
}

/* Whether every usable device, given T, can take `work` and `bytes` between
 * them (see DESIGN: work first to the devices whose bytes are dearest). */
static int feasible(const double *lat, const double *inv, const double *ibw, const int *use, int n,
                    double work, double bytes, double T)
{
    int order[n], k = 0;
    for (int d = 0; d < n; d++) {
        if ((use && !use[d]) || !(inv[d] > 0.0) || !isfinite(inv[d]) || !(T >= lat[d]))
            continue;
        /* By inv_bw / inv, largest first (ibw[d] * inv[e] > ibw[e] * inv[d]). */
        int at = k++;
        while (at > 0 && ibw[order[at - 1]] * inv[d] < ibw[d] * inv[order[at - 1]]) {
            order[at] = order[at - 1];
            at--;
        }
        order[at] = d;
    }
    double left = work, room = 0.0; /* work still to place; byte capacity left */
    for (int i = 0; i < k; i++) {
        int d = order[i];
        double s = T - lat[d], x = fmin(left, s / inv[d]);
        left -= x;
        if (!(ibw[d] > 0.0))
            room = INFINITY; /* bytes are free on this device */
        else
            room += (s - x * inv[d]) / ibw[d];
    }
    return left <= 1e-12 * work && room >= bytes;
}

/* What hf_cost_split_bound's search asks at each T. */
struct split_fit {
    const double *lat, *inv, *inv_bw;
    const int *use;
    int n;
    double work, bytes;
};

static int split_fits(void *arg, double T)
{
    const struct split_fit *f = arg;
    return feasible(f->lat, f->inv, f->inv_bw, f->use, f->n, f->work, f->bytes, T);
}

double hf_cost_split_bound(const double *lat, const double *inv, const double *inv_bw,
                           const int *use, int n, double work, double bytes)
{
    double x[n];
    double T = hf_cost_split(lat, inv, use, n, work, x);
    if (!isfinite(T) || !(bytes > 0.0) || feasible(lat, inv, inv_bw, use, n, work, bytes, T))
        return T;
    struct split_fit f = {lat, inv, inv_bw, use, n, work, bytes};
    return hf_cost_least_time(split_fits, &f, T, NULL);
}
