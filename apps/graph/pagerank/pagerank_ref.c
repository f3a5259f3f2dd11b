/* pagerank_ref.c - the reference PageRank: the textbook power iteration,
 * push style over the out-edges (the app pulls over in-edges, so a wrong
 * transpose shows), one vertex at a time; verify compares the app's ranks with
 * it after the same number of iterations. */
#include <stdlib.h>
#include <string.h>

#include "pagerank_ref.h"

int hf__pagerank_ref(const struct hf_graph *g, double damping, int iters, double *rank)
{
    uint64_t n = g->nv;
    double *next = malloc(n * sizeof *next);
    if (!next)
        return hf_fail(HF_ENOMEM, "pagerank: out of memory for the reference");
    for (uint64_t v = 0; v < n; v++)
        rank[v] = 1.0 / (double)n;
    for (int it = 0; it < iters; it++) {
        double dangling = 0;
        for (uint64_t u = 0; u < n; u++)
            if (hf_graph_degree(g, (hf_vid_t)u) == 0)
                dangling += rank[u];
        double base = (1.0 - damping) / (double)n + damping * dangling / (double)n;
        for (uint64_t v = 0; v < n; v++)
            next[v] = base;
        for (uint64_t u = 0; u < n; u++) {
            uint64_t d = hf_graph_degree(g, (hf_vid_t)u);
            for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++)
                next[g->adj[j]] += damping * rank[u] / (double)d;
        }
        memcpy(rank, next, n * sizeof *rank);
    }
    free(next);
    return 0;
}
