/* pagerank_ref.h - the plain reference PageRank (pagerank_ref.c): it
 * depends on the graph layer alone, nothing of the app it checks (pagerank.c
 * calls it; it calls nothing of pagerank.c).
 */
#ifndef HF_PAGERANK_REF_H
#define HF_PAGERANK_REF_H

#include <stdint.h>

#include "graph/layer/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* pagerank_ref.c: `iters` Jacobi iterations of PageRank on the out-edge graph
 * g (push style: each vertex hands rank / outdeg to its out-neighbours),
 * starting from 1/n, dangling mass spread uniformly; ranks into rank[nv]. */
int hf__pagerank_ref(const struct hf_graph *g, double damping, int iters, double *rank);

#ifdef __cplusplus
}
#endif
#endif
