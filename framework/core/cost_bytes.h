/* cost_bytes.h - the per-byte term of the cost model (core/cost_bytes.c), as
 * core/cost_model.c uses it. Internal to core/.
 */
#ifndef HF_COST_BYTES_H
#define HF_COST_BYTES_H

#include "sched.h"

/* The median of v[0..n-1] (reorders v); 0 for n = 0. */
double hf__cost_median(double *v, int n);

/* Fits T = lat + w * inv + b * inv_bw to m's window when its bundles' bytes per
 * unit of work differ enough to tell inv_bw from inv: the least median of
 * relative residuals over exact fits through three bundles of one kind (all
 * first of their size, or all repeats), refined by least squares on that
 * kind's inliers; the intercept then comes from the repeats when `repeats`
 * (as the line's does). Writes the fit and its median absolute relative
 * residual over the bundles the line is judged on; returns 1, or 0 when there
 * is no such fit (too few bundles, bytes in proportion to work, or no triple
 * with every term >= 0). */
int hf__cost_fit_bytes(const struct hf_cost_model *m, int repeats, double *lat, double *inv,
                       double *inv_bw, double *resid);

#endif
