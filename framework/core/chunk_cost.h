/* chunk_cost.h - what each chunk of a repeating load costs, learned from the
 * bundles that ran (core/chunk_cost.c). Internal to core/.
 */
#ifndef HF_CHUNK_COST_H
#define HF_CHUNK_COST_H

#include <stddef.h>

#include "hetfarm.h"

struct hf__chunk_cost {
    size_t n;            /* chunks of the load being learned; 0 = none yet */
    double total;        /* the load's declared work (the estimates sum to it) */
    double *decl;        /* the app's declared work per chunk: the load repeats when it matches */
    double *est;         /* per chunk: the estimate, in the load's work units */
    double *weight;      /* per chunk: evidence behind the estimate (capped) */
    double *last_dev;    /* per chunk: its last judged deviation from the declared work, or NAN */
    double *lat_last;    /* per device: the per-span latency its spans told last (seconds) */
    double *warm_last;   /* per device: a new size's warm-up its spans told last (s), or NAN */
    size_t *sizes;       /* per device, SIZE_SLOTS slots (chunk_cost.c): the span sizes it ran */
    int ndev;            /* devices `lat_last`, `warm_last` and `sizes` have room for */
    /* A span that ran (hf__chunk_cost_observe); `fresh`: its device never ran
     * a span of its size before (it may hold a new size's warm-up). */
    struct hf__cost_span { size_t first, count; int dev, judge, outlier, fresh; double seconds; } *spans;
    size_t nspans, spans_cap; /* the spans that ran since the last round began */
    struct hf_chunk *view; /* the round's chunks with work = est: what schedulers see */
    int loaded;          /* estimates came from a saved file */
    int repeated;        /* the last call's load was the one before it again */
    int learning;        /* the declared work was judged wrong: schedulers see the estimates */
    int judged;          /* repeated views settled it either way: no more judging */
    int unlearned;       /* ... and what one view had started learning was noise */
    /* The judge's evidence from pairs of views of one chunk (chunk_cost.c),
     * each weighted by the chunk's declared work: the sum of the products of
     * their deviations (centred), of the earlier one's square, of the
     * weights, and the products' variance times the squared weights (robust);
     * the sum of every view's squared deviation and of their weights; the
     * count of pairs. */
    double pair_sum, pair_mass, pair_w, pair_var, view_mass, view_w;
    size_t npairs;
};

/* Starts a round of `n` chunks whose declared work is chunks[i].work: when
 * the load repeats (same count, same declared work per chunk), folds the last
 * round's spans in (each device's seconds, less its per-bundle latency fitted
 * from those spans, turned into work at the device's rate in that round -
 * or, for GPUs alone, at its rate over the whole load, standalone[d] (work
 * per second, 0 = unknown; NULL: none) - and shared
 * over a span's chunks in proportion to their estimates; devices
 * 0..ndev-1) and scales the estimates to sum to the declared total;
 * otherwise starts over from the declared work. Schedulers see the estimates
 * once the judge finds the declared work wrong (one view off by 25% RMS that
 * repeated views of the same chunks do not contradict: chunk_cost.c), the
 * declared work until then or where repeated views found only noise.
 * *moved is the share of the total work the estimates moved since the last
 * round. Returns the chunks as schedulers see them (valid until the next call), or
 * NULL when out of memory. An `exact` load (hf_load.work_exact) never learns:
 * its estimates stay its declared work. */
const struct hf_chunk *hf__chunk_cost_round(struct hf__chunk_cost *c, const struct hf_chunk *chunks,
                                            size_t n, int ndev, const double *standalone, int exact,
                                            double *moved);
/* A span [first, first + count) ran on `dev` in `seconds`: remembered for the
 * next round's fold. `judge`: the span may also decide whether the declared
 * work is wrong (not a GPU's in a scheduled round, whose time may hold a
 * device's one-off costs: a new kernel shape, a stall). `outlier`: the
 * device's cost model found it far slower than predicted; it is not folded,
 * but a judging one still counts as a view of its chunks (a chunk that is
 * dear every time it runs is an outlier every time). */
void hf__chunk_cost_observe(struct hf__chunk_cost *c, size_t first, size_t count, int dev,
                            int judge, int outlier, double seconds);
/* Reads saved estimates from `path` for the next round of a load that
 * matches them; a missing file is nothing, a bad or stale one is ignored
 * with a warning on stderr. */
void hf__chunk_cost_load(struct hf__chunk_cost *c, const char *path, const struct hf_chunk *chunks,
                         size_t n);
/* Writes the estimates to `path` atomically when they were learned; where the
 * declared work held (nothing learned) writes nothing and removes a file an
 * earlier run left there (another load's, or a bad one), since a file read
 * back makes the next run learn. 0 or an HF_E* code. */
int hf__chunk_cost_save(const struct hf__chunk_cost *c, const char *path);
/* What the judge made of the load's declared work, for results.json:
 * "exact" (the app says so: never judged), "declared" (no view was off),
 * "learning" (one view was off, no repeats have settled it), "learned"
 * (repeated views confirmed it) or "noise" (repeated views did not, and the
 * declared work came back). */
const char *hf__chunk_cost_verdict(const struct hf__chunk_cost *c, int exact);
void hf__chunk_cost_free(struct hf__chunk_cost *c);

#endif
