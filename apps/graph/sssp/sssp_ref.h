/* sssp_ref.h - the plain reference SSSP (sssp_ref.c): it
 * depends on the graph layer alone, nothing of the app it checks (sssp.c
 * calls it; it calls nothing of sssp.c).
 */
#ifndef HF_SSSP_REF_H
#define HF_SSSP_REF_H

#include <stdint.h>

#include "graph/layer/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sssp_ref.c: Dijkstra with a binary heap, in float like the app;
 * INFINITY where unreached. Unweighted graphs (no weights) have weight 1. */
int hf__sssp_ref(const struct hf_graph *g, hf_vid_t src, float *dist);

#ifdef __cplusplus
}
#endif
#endif
