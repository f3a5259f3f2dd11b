/* sssp.h - single-source shortest paths as a hetfarm app (sssp.c), its GPU
 * side (sssp_cuda.cu) and its plain reference (sssp_ref.c).
 */
#ifndef HF_SSSP_H
#define HF_SSSP_H

#include <stdint.h>

#include "graph/app/graph_app.h"
#include "sssp_ref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Shared arrays: the CSR (offsets, adj, and weights when the graph has them)
 * from hf__gapp_shared_csr, then the distances at index `s_dist`. */
enum { SSSP_OFFSETS = HF_GAPP_OFFSETS, SSSP_ADJ = HF_GAPP_ADJ, SSSP_WEIGHTS = HF_GAPP_WEIGHTS };

struct hf_sssp {
    struct hf_gapp ga;
    float *dist;           /* shared MIN array: distance from the source, or INFINITY */
    int s_dist;            /* index of dist among the shared arrays (2, or 3 when weighted) */
    struct hf_frontier fr; /* this round's frontier: the "near" vertices */
    /* near-far ([load] delta > 0): vertices at or beyond `thresh` wait in `far` */
    double delta;       /* bucket width; 0 = plain frontier Bellman-Ford */
    float thresh;       /* the current bucket's upper end (INFINITY without delta) */
    hf_vid_t *far;      /* the far pile, each vertex once (in_far) */
    hf_vid_t *far_next; /* nv: where a bucket's move writes the pile it keeps */
    size_t nfar;
    uint8_t *in_far;
    float *expanded; /* the distance each vertex was last expanded with */
    uint64_t edges_relaxed;
    int finished;
    long verify_full;
};

#ifdef HF_HAVE_CUDA
struct hf_cuda;
struct hf_bundle;
/* sssp_cuda.cu: relaxes the out-edges of one piece of the frontier on the GPU. */
int hf__sssp_cuda(struct hf_sssp *s, const struct hf_bundle *piece, struct hf_cuda *gpu);
#endif

#ifdef __cplusplus
}
#endif
#endif
