/* mst_cuda.cu - one piece of a Borůvka round on a GPU.
 *
 * DESIGN
 * ------
 * The CSR, the canonical arc ids, the labels (comp) and the per-component
 * slots (best) live on the GPU for the whole run (shared data, mst.c), so a
 * DISCOVER piece moves nothing: G lanes work on one vertex of the piece's
 * range, each scanning every G-th arc for the lightest one that leaves the
 * vertex's component, the G lanes reduce their minima with shuffles, and lane 0
 * lowers the component's slot with one 64-bit atomicMin and records the slot
 * if it lowered it (the framework merges the recorded slots of every device).
 * A vertex that finds no arc leaving its component never will (components
 * only grow): lane 0 sets its settled flag (an OR shared array, recorded
 * likewise) and later rounds skip it.
 * G is 32 (a warp per vertex) when the piece's vertices average 8 or more
 * arcs, so a scale-free graph's hubs are spread over a warp, and 4 on
 * road-like graphs, where a warp per vertex would leave most lanes idle.
 *
 * A LABEL piece copies the new labels of its vertex range, computed on the
 * host by the merge, into the GPU's copy of comp; the framework copies the
 * range back and sends the whole array to every device at the round's end.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "hf_cuda.h"
#include "mst.h"

#define BLOCK 256 /* a multiple of 32: every warp is full, so shuffles see 32 lanes */

/* G lanes per vertex of [begin, end); best points at the step's slots. */
template <int G>
static __global__ void discover_kernel(const uint64_t *offsets, const uint32_t *adj,
                                       const float *weights, const uint32_t *canon,
                                       const uint32_t *comp, unsigned long long *best,
                                       uint8_t *settled, struct hf_cuda_recorder rec_best,
                                       struct hf_cuda_recorder rec_settled, uint64_t off,
                                       uint32_t begin, uint32_t end)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t u = begin + t / G;
    unsigned lane = threadIdx.x % G;
    unsigned long long kmin = HF_MST_NONE;
    uint32_t c = HF_MST_DEAD;
    if (u < end && !settled[u]) {
        c = comp[u];
        if (c != HF_MST_DEAD)
            for (uint64_t j = offsets[u] + lane; j < offsets[u + 1]; j += G) {
                if (comp[adj[j]] == c)
                    continue;
                uint32_t bits = weights ? __float_as_uint(weights[j]) : HF_MST_ONE_BITS;
                if (bits == 0x80000000u) /* -0.0 weighs what 0.0 weighs */
                    bits = 0;
                unsigned long long k = ((unsigned long long)bits << 32) | canon[j];
                kmin = k < kmin ? k : kmin;
            }
    }
    /* Every lane of the warp gets here (no early return), as the full mask says. */
    for (int d = G / 2; d > 0; d /= 2) {
        unsigned long long other = __shfl_xor_sync(0xffffffffu, kmin, d, G);
        kmin = other < kmin ? other : kmin;
    }
    if (lane != 0 || c == HF_MST_DEAD)
        return; /* past the range, settled, or dead: nothing to report */
    if (kmin != HF_MST_NONE) {
        unsigned long long old = atomicMin(&best[off + c], kmin);
        if (kmin < old)
            hf_cuda_shared_record(rec_best, (unsigned)(off + c));
    } else { /* components only grow: u's arcs stay inside for good */
        settled[u] = 1; /* only this piece looks at u this round */
        hf_cuda_shared_record(rec_settled, (unsigned)u);
    }
}

/* Copies the piece's new labels into the GPU's comp, through the slot's
 * pinned staging buffer when they fit (next_comp is not pinned). */
static int copy_labels(struct hf_mst *m, const struct hf_bundle *p, struct hf_cuda *gpu,
                       uint32_t *d_comp)
{
    size_t bytes = (p->end - p->begin) * sizeof(uint32_t);
    char *stage = (char *)hf_cuda_staging(gpu, bytes);
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_COPY_IN);
    const void *src = m->next_comp + p->begin;
    if (stage) {
        memcpy(stage, src, bytes);
        src = stage;
    }
    return hf_cuda_check(gpu, cudaMemcpyAsync(d_comp + p->begin, src, bytes,
                                              cudaMemcpyHostToDevice, s),
                         "mst labels in");
}

extern "C" int hf__mst_cuda(struct hf_mst *m, const struct hf_bundle *p, struct hf_cuda *gpu)
{
    const uint64_t *offsets = (const uint64_t *)hf_cuda_shared(gpu, m->s_offsets);
    const uint32_t *adj = (const uint32_t *)hf_cuda_shared(gpu, m->s_adj);
    const float *weights =
        m->s_weights >= 0 ? (const float *)hf_cuda_shared(gpu, m->s_weights) : NULL;
    const uint32_t *canon = (const uint32_t *)hf_cuda_shared(gpu, m->s_canon);
    uint32_t *comp = (uint32_t *)hf_cuda_shared(gpu, m->s_comp);
    unsigned long long *best = (unsigned long long *)hf_cuda_shared(gpu, m->s_best);
    uint8_t *settled = (uint8_t *)hf_cuda_shared(gpu, m->s_settled);
    if (!offsets || !adj || !canon || !comp || !best || !settled ||
        (m->s_weights >= 0 && !weights))
        return hf_fail(HF_EAPP, "mst: the graph is not on %s", hf_cuda_name(gpu));
    if (p->end <= p->begin)
        return 0;
    if (m->phase == HF_MST_LABEL) {
        int rc = copy_labels(m, p, gpu, comp);
        hf_cuda_phase(gpu, HF_CUDA_KERNEL);
        return rc;
    }
    struct hf_cuda_recorder rec_best = hf_cuda_shared_recorder(gpu, m->s_best);
    struct hf_cuda_recorder rec_settled = hf_cuda_shared_recorder(gpu, m->s_settled);
    const struct hf_graph *g = &m->ga.g;
    uint64_t n = p->end - p->begin;
    uint64_t arcs = g->offsets[p->end] - g->offsets[p->begin];
    int wide = arcs >= 8 * n;
    uint64_t blocks = (n * (wide ? 32 : 4) + BLOCK - 1) / BLOCK;
    if (blocks > INT_MAX)
        return hf_fail(HF_EDEVOOM, "mst: a piece of %llu vertices needs too many blocks",
                       (unsigned long long)n); /* the driver halves the piece */
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    if (wide)
        discover_kernel<32><<<(unsigned)blocks, BLOCK, 0, s>>>(
            offsets, adj, weights, canon, comp, best, settled, rec_best, rec_settled, m->off,
            (uint32_t)p->begin, (uint32_t)p->end);
    else
        discover_kernel<4><<<(unsigned)blocks, BLOCK, 0, s>>>(
            offsets, adj, weights, canon, comp, best, settled, rec_best, rec_settled, m->off,
            (uint32_t)p->begin, (uint32_t)p->end);
    return hf_cuda_check(gpu, cudaGetLastError(), "mst discover kernel");
}
