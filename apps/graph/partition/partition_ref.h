/* partition_ref.h - the partitioner's plain reference (partition_ref.c):
 * it depends on the graph layer alone, nothing of the app it checks.
 */
#ifndef HF_PARTITION_REF_H
#define HF_PARTITION_REF_H

#include <stdint.h>

#include "graph/layer/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* partition_ref.c: the plain check. Counts every undirected edge of g once
 * (half the weight of the arcs whose ends lie in different parts), the
 * weight of every part (g's vertex weights, or 1 each when `unit`), and fails
 * with HF_EVERIFY naming the vertex when a part id is not in 0..k-1. */
struct hf_part_ref {
    double cut;
    int64_t total, heaviest;
    long heaviest_part;
    double imbalance; /* heaviest / (total / k); 1.0 when total is 0 */
};
int hf__partition_ref(const struct hf_graph *g, const uint32_t *part, long k, int unit,
                      struct hf_part_ref *out);

#ifdef __cplusplus
}
#endif
#endif
