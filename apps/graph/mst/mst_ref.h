/* mst_ref.h - the minimum spanning forest's plain reference (mst_ref.c,
 * Kruskal) and the edge order it defines, which the app (mst.c,
 * mst_cuda.cu) follows: the key (weight bits << 32) | canonical arc id (see
 * mst.h). It depends on the graph layer alone, nothing of the app it checks
 * (mst.c calls it; it calls nothing of mst.c).
 */
#ifndef HF_MST_REF_H
#define HF_MST_REF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "graph/layer/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HF_MST_ONE_BITS 0x3f800000u /* the bits of 1.0f: the weight of an unweighted edge */

/* The key of arc j of weight w (weights NULL: 1) whose canonical arc is c. */
static inline uint64_t hf__mst_key(const float *weights, uint64_t j, uint32_t c)
{
    uint32_t bits = HF_MST_ONE_BITS;
    if (weights)
        memcpy(&bits, &weights[j], sizeof bits);
    if (bits == 0x80000000u) /* -0.0 weighs what 0.0 weighs */
        bits = 0;
    return ((uint64_t)bits << 32) | c;
}

/* mst_ref.c: Kruskal with union-find over the canonical arcs (u < v), in key
 * order. Returns the chosen canonical arc ids in ascending order in *edges
 * (malloc'd, *n of them; free it) and their total weight in *weight; HF_ENOMEM
 * when memory runs out. nv - *n is the number of components. */
int hf__mst_ref(const struct hf_graph *g, uint32_t **edges, size_t *n, double *weight);

/* The vertex whose adjacency holds arc j (binary search in the offsets). */
hf_vid_t hf__mst_arc_source(const struct hf_graph *g, uint64_t j);

#ifdef __cplusplus
}
#endif
#endif
