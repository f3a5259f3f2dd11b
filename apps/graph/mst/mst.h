/* mst.h - minimum spanning forest (Borůvka) as a hetfarm app (mst.c), its GPU
 * side (mst_cuda.cu) and its plain reference (mst_ref.c, Kruskal).
 *
 * Edges are ordered by the key (weight bits << 32) | canonical arc id: a
 * non-negative float orders like its bit pattern, and the canonical arc id
 * (the index of the arc lo -> hi of the undirected edge {lo, hi}, lo < hi)
 * breaks ties, so the order is strict and the forest is unique: Borůvka and
 * Kruskal with the same key find the same edges.
 */
#ifndef HF_MST_H
#define HF_MST_H

#include <stdint.h>

#include "graph/app/graph_app.h"
#include "mst_ref.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HF_MST_NONE UINT64_MAX      /* best[c] of a component that found no outgoing edge */
#define HF_MST_DEAD UINT32_MAX      /* comp[v] of a vertex whose component can grow no more */

/* The round kinds of one Borůvka step (mst.c, DESIGN). */
enum hf_mst_phase { HF_MST_DISCOVER = 0, HF_MST_LABEL = 1 };

struct hf_mst {
    struct hf_gapp ga;
    /* shared arrays (their indices in the app's list: s_*) */
    uint32_t *canon;  /* READONLY, ne: the canonical arc of each arc's undirected edge */
    uint32_t *comp;   /* OWNED, nv: compact id of the vertex's live component, or DEAD */
    uint64_t *best;   /* MIN, best_count: step s uses [off, off + live) */
    uint8_t *settled; /* OR, nv: 1 once every arc of the vertex stays inside its component */
    size_t best_count;
    int s_offsets, s_adj, s_weights, s_canon, s_comp, s_best, s_settled; /* s_weights -1 when
                                                                              unweighted */
    /* host-side state of the steps */
    uint32_t *next_comp; /* nv: what the next LABEL round installs in comp */
    uint32_t *uf, *lab;  /* nv each: union-find over compact ids, new ids */
    uint64_t *pre;       /* nv + 1: prefix sums of the arcs a DISCOVER round scans */
    int phase;           /* this round's kind */
    int pending;         /* a DISCOVER round ran and its merge is not done yet */
    int finished;        /* no component can grow: the forest is complete */
    int steps;           /* Borůvka steps (DISCOVER rounds) run */
    uint64_t off, live;  /* this step's region of best and its live components */
    /* the forest */
    uint32_t *forest; /* canonical arc ids of the chosen edges */
    size_t nforest;
    double weight;    /* their total weight */
    long verify_full; /* compare the exact edge set up to this many vertices */
    int verified;
    int host_only; /* a simulation without execute: next_load does the rounds' work */
};

#ifdef HF_HAVE_CUDA
struct hf_cuda;
struct hf_bundle;
/* mst_cuda.cu: runs one piece of a DISCOVER or LABEL round on the GPU. */
int hf__mst_cuda(struct hf_mst *m, const struct hf_bundle *piece, struct hf_cuda *gpu);
#endif

#ifdef __cplusplus
}
#endif
#endif
