/* partition.h - the multilevel partitioner as other rooms call it: a
 * partition of a graph inside the caller's own run (placement/graph_place.c).
 * The partitioner itself, an app of its own, is partition_internal.h.
 */
#ifndef HF_PARTITION_H
#define HF_PARTITION_H

#include <stdint.h>

#include "graph/layer/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* partition.c: partitions `g` (symmetric, k <= nv) into k parts of at most
 * (1 + imbalance) nv / k vertices each in the calling thread, by this app's
 * own rounds run whole on one CPU team of `nthreads` threads and verified;
 * the part of each vertex goes to part[nv], the edge cut to *cut. For callers
 * that need a partition inside their own run ([load] placement = partition). */
int hf__partition_graph(const struct hf_graph *g, long k, double imbalance, uint64_t seed,
                        int nthreads, uint32_t *part, double *cut);

#ifdef __cplusplus
}
#endif
#endif
