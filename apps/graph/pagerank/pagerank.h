/* pagerank.h - pull PageRank as a hetfarm app (pagerank.c), its GPU side
 * (pagerank_cuda.cu) and its plain reference (pagerank_ref.c).
 */
#ifndef HF_PAGERANK_H
#define HF_PAGERANK_H

#include <stdint.h>

#include "graph/app/graph_app.h"
#include "pagerank_ref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shared arrays of the app, in the order pagerank_shared declares them. The
 * CSR shared here is the graph of IN-edges (the input itself when symmetric). */
enum { PR_OFFSETS = HF_GAPP_OFFSETS, PR_ADJ = HF_GAPP_ADJ, PR_OUTDEG = 2, PR_STATE = 3 };

struct hf_pagerank {
    struct hf_gapp ga;  /* the input graph: out-edges */
    struct hf_graph in; /* in-edges: ga.g itself (shallow) if symmetric, else a transpose */
    int own_in;         /* `in` holds arrays of its own (the transpose) */
    uint32_t *outdeg;   /* READONLY: out-degree of every vertex */
    /* OWNED, 2 * nv elements: state[h * nv + v] = rank of v / max(outdeg v, 1)
     * after the last round that wrote half h. Round r reads half (r + 1) & 1 and
     * writes half r & 1; its units are r & 1 ? nv..2nv-1 : 0..nv-1. */
    double *state;
    double damping, tol;
    long max_iters, verify_full;
    double base;       /* this round's (1 - d) / n + d * dangling / n */
    int last_round;    /* the last sweep started; it writes half last_round & 1 */
    int finished;      /* converged or max_iters reached */
    int approximate;   /* [run] rounds stopped it before: the last sweep's ranks are written */
    double last_delta; /* L1 change of the last finished iteration */
    int stats_round;   /* the round whose sweep_stats are below (-1: none) ... */
    double stats_delta, stats_dangling; /* ... its L1 change and dangling mass */
    /* The CPU's split of heavy vertices (in-degree > HF_PR_PIECE): their
     * in-edges are summed in pieces of HF_PR_PIECE edges by any thread, so
     * that one hub does not hold a whole team at a bundle's end. */
    uint32_t *heavy;       /* the heavy vertices, ascending */
    size_t nheavy;
    size_t *piece_first;   /* nheavy + 1: heavy k's pieces are piece_first[k].. */
    uint32_t *piece_owner; /* per piece: its heavy vertex's index k */
    double *piece_sum;     /* per piece: the partial sum of this sweep */
};

/* Edges per piece of a heavy vertex's in-edges on the CPU. */
#define HF_PR_PIECE 4096

/* The rank of v held in half h of the state. */
static inline double hf__pagerank_rank(const struct hf_pagerank *p, int h, hf_vid_t v)
{
    uint32_t d = p->outdeg[v] ? p->outdeg[v] : 1;
    return p->state[(size_t)h * p->ga.g.nv + v] * (double)d;
}

#ifdef HF_HAVE_CUDA
struct hf_cuda;
struct hf_bundle;
/* pagerank_cuda.cu: runs one piece of a sweep on the GPU. */
int hf__pagerank_cuda(struct hf_pagerank *p, const struct hf_bundle *piece, struct hf_cuda *gpu);
#endif

#ifdef __cplusplus
}
#endif
#endif
