/* cc.h - connected components as a hetfarm app (cc.c), its GPU side
 * (cc_cuda.cu) and its plain reference (cc_ref.c).
 */
#ifndef HF_CC_H
#define HF_CC_H

#include <stdint.h>

#include "graph/app/graph_app.h"
#include "cc_ref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shared arrays of the app, in the order cc_shared declares them. */
enum { CC_OFFSETS = HF_GAPP_OFFSETS, CC_ADJ = HF_GAPP_ADJ, CC_LABEL = 2 };

/* Rounds of neighbour sampling (Afforest) before the full sweeps. */
#define HF_CC_SAMPLES 2

struct hf_cc {
    struct hf_gapp ga;
    uint32_t *label;     /* shared MIN array: a vertex of v's component, <= v (finally the least) */
    uint32_t *out_label; /* placement = partition: root -> smallest input id (teardown) */
    int finished;        /* the run ended: every label is final */
    int rounds;          /* sweeps run */
    int sample;          /* this round links each vertex to its neighbour number `sample` only
                            (0..HF_CC_SAMPLES-1), or -1: a full sweep or the compress round */
    int compress;        /* this round only shortcuts every vertex: a one-copy run's last */
    int one_copy;        /* every round so far ran in one copy (the host's, or one GPU's): one
                            full sweep + compress ends the run, and it skips the sampled edges */
    int single_rank;     /* the run is on one process: its rounds may be one copy's */
    int ndev;            /* devices in copy_of */
    int *copy_of;        /* per device: the copy it links in (-1: the host's, else its index) */
    int round_copy;      /* the copy this round's bundles ran in so far (INT_MIN: none yet) ... */
    int round_several;   /* ... or 1: bundles of this round ran in two copies */
    int record;          /* bundles record the labels they change (not: one CPU device) */
    int flat;         /* this round costs the same a vertex (sampling, compress, or most skipped) */
    uint32_t big;     /* the label of the largest component as sampled before this round,
                         whose vertices a full sweep skips; UINT32_MAX: none */
    uint64_t skipped; /* vertices skipped by the CPU's full sweeps (a figure) */
};

#ifdef HF_HAVE_CUDA
struct hf_cuda;
struct hf_bundle;
/* cc_cuda.cu: runs one piece of a round (cc.c's loops) on the GPU. */
int hf__cc_cuda(struct hf_cc *c, const struct hf_bundle *piece, struct hf_cuda *gpu);
#endif

#ifdef __cplusplus
}
#endif
#endif
