/* partition_ref.c - the reference check of a partition: cut and balance
 * recomputed from the input graph and the part ids alone.
 *
 * It shares nothing with the partitioner's bookkeeping (levels, part weight
 * counters, the measure round): it reads g's arcs and float weights and g's
 * int32 vertex weights directly, counts each undirected edge as half of its
 * two arcs, and sums part weights serially. Imbalance follows
 * tests/partition_check.py: the heaviest part over total / k, 1.0 when every
 * weight is 0.
 */
#include <stdlib.h>

#include "partition_ref.h"

int hf__partition_ref(const struct hf_graph *g, const uint32_t *part, long k, int unit,
                      struct hf_part_ref *out)
{
    int64_t *load = calloc((size_t)k, sizeof *load);
    if (!load)
        return hf_fail(HF_ENOMEM, "partition: out of memory for the reference");
    double twice = 0;
    int64_t total = 0;
    for (uint64_t u = 0; u < g->nv; u++) {
        if (part[u] >= (uint64_t)k) {
            free(load);
            return hf_fail(HF_EVERIFY, "partition: vertex %llu is in part %u, not in 0..%ld",
                           (unsigned long long)u + (uint64_t)g->base, part[u], k - 1);
        }
        int64_t w = unit || !g->vwgt ? 1 : g->vwgt[u];
        load[part[u]] += w;
        total += w;
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++)
            if (part[g->adj[j]] != part[u])
                twice += g->weights ? (double)g->weights[j] : 1.0;
    }
    out->cut = twice / 2;
    out->total = total;
    out->heaviest = 0;
    out->heaviest_part = 0;
    for (long p = 0; p < k; p++)
        if (load[p] > out->heaviest) {
            out->heaviest = load[p];
            out->heaviest_part = p;
        }
    out->imbalance = total > 0 ? (double)out->heaviest / ((double)total / (double)k) : 1.0;
    free(load);
    return 0;
}
