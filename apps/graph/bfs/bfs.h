/* bfs.h - breadth-first search as a hetfarm app (bfs.c), its GPU side
 * (bfs_cuda.cu) and its plain reference (bfs_ref.c).
 */
#ifndef HF_BFS_H
#define HF_BFS_H

#include <stdint.h>

#include "graph/app/graph_app.h"
#include "bfs_ref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shared arrays of the app, in the order bfs_shared declares them. */
enum { BFS_OFFSETS = HF_GAPP_OFFSETS, BFS_ADJ = HF_GAPP_ADJ, BFS_DEPTH = 2 };

struct hf_bfs {
    struct hf_gapp ga;
    int32_t *depth;             /* shared MIN array: BFS depth, HF_BFS_UNSEEN if not reached */
    struct hf_frontier fr;      /* this round's frontier (push rounds) */
    int32_t level;              /* depth of this round's frontier: new vertices get level + 1 */
    int pull;                   /* this round pulls: every unseen vertex looks for a parent */
    int direction;              /* 0 auto (Beamer et al.), 1 push only, 2 pull only */
    double alpha, beta;         /* the switching thresholds */
    uint64_t unexplored_edges;  /* edges of vertices not yet expanded (m_u) */
    uint64_t edges_traversed;   /* edges looked at, for GTEPS */
    int rounds_pull, finished;
    long verify_full;           /* check against the reference up to this many vertices */
    long fuse_edges;            /* a GPU that holds a whole push round runs further levels on
                                   its own while a level has at most this many edges (0: off) */
    int fuse_search;            /* [load] fuse = search: such a GPU finishes the whole search,
                                   big levels (push or pull) included */
    long fused_levels;          /* levels run that way, for the figures */
    int searched_all;           /* the last round's GPU finished the search (one rank only) */
    int one_rank;               /* the run has one rank (searched_all may end the run) */
    uint64_t *front_bits;       /* pull rounds, CPU side: the frontier as nv bits (next_load) */
    int cpu_pulls;              /* some device runs run_cpu: pull rounds need front_bits */
    int gpu_fuses;              /* a real GPU takes part: a round may have fused levels */
};

/* Beamer's rule: whether a level whose frontier has n_f vertices and m_f
 * edges should pull, given whether the level before pulled and the edges of
 * vertices not yet expanded (m_u). bfs.c's rounds and bfs_cuda.cu's whole
 * search on one GPU both decide with it. */
static inline int hf__bfs_choose_pull(const struct hf_bfs *b, int pulling, uint64_t m_f,
                                      uint64_t n_f, uint64_t m_u)
{
    if (b->direction != 0)
        return b->direction == 2;
    if (!b->ga.g.symmetric)
        return 0;
    if (!pulling)
        return (double)m_f > (double)m_u / b->alpha;
    return (double)n_f >= (double)b->ga.g.nv / b->beta;
}

#ifdef HF_HAVE_CUDA
struct hf_cuda;
struct hf_bundle;
/* bfs_cuda.cu: runs one piece of a push or pull round on the GPU; a piece that
 * is a whole push round may go on for more levels (bfs.c, DESIGN). */
int hf__bfs_cuda(struct hf_bfs *b, const struct hf_bundle *piece, struct hf_cuda *gpu);
#endif

#ifdef __cplusplus
}
#endif
#endif
