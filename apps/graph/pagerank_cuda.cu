/* pagerank_cuda.cu - one piece of a PageRank sweep on a GPU.
 *
 * DESIGN
 * ------
 * The in-edge CSR, the out-degrees and both halves of the rank state live on
 * the GPU for the whole run (shared data), so a piece moves nothing: it reads
 * the half the previous round wrote and writes its own vertex range of the
 * other half, which the driver copies back when the bundle ends. The sweep is
 * the "vector CSR" SpMV of Bell and Garland: a group of G lanes (G a power of
 * two up to a warp, chosen from the piece's average in-degree) shares one
 * vertex, strides over its in-edges and reduces with warp shuffles, so that a
 * road graph (degree ~2.4) does not leave 30 lanes of 32 idle and a scale-free
 * graph's long lists are read by a whole warp, coalesced.
 */
#include <stdint.h>

#include "hf_cuda.h"
#include "pagerank.h"

/* Vertices [vbegin, vend) of the half at `next`, G lanes per vertex. */
template <int G>
static __global__ void sweep_kernel(const uint64_t *offsets, const uint32_t *adj,
                                    const uint32_t *outdeg, const double *prev, double *next,
                                    uint32_t vbegin, uint32_t vend, double base, double damping)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t vv = vbegin + t / G;
    unsigned lane = (unsigned)(t % G);
    /* Every lane of a group takes part in the shuffles, so none returns early. */
    bool live = vv < vend;
    uint32_t v = live ? (uint32_t)vv : vbegin;
    double sum = 0;
    if (live)
        for (uint64_t j = offsets[v] + lane; j < offsets[v + 1]; j += G)
            sum += prev[adj[j]];
    for (int o = G / 2; o > 0; o /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, o, G);
    if (live && lane == 0) {
        uint32_t d = outdeg[v];
        next[v] = (base + damping * sum) / (double)(d ? d : 1);
    }
}

/* Launches the kernel with group size G over the piece's vertices. */
template <int G>
static void launch(const uint64_t *offsets, const uint32_t *adj, const uint32_t *outdeg,
                   const double *prev, double *next, uint32_t vbegin, uint32_t vend, double base,
                   double damping, cudaStream_t s)
{
    uint64_t threads = (uint64_t)(vend - vbegin) * G;
    unsigned blocks = (unsigned)((threads + 255) / 256);
    sweep_kernel<G>
        <<<blocks, 256, 0, s>>>(offsets, adj, outdeg, prev, next, vbegin, vend, base, damping);
}

extern "C" int hf__pagerank_cuda(struct hf_pagerank *p, const struct hf_bundle *piece,
                                 struct hf_cuda *gpu)
{
    const uint64_t *offsets = (const uint64_t *)hf_cuda_shared(gpu, PR_OFFSETS);
    const uint32_t *adj = (const uint32_t *)hf_cuda_shared(gpu, PR_ADJ);
    const uint32_t *outdeg = (const uint32_t *)hf_cuda_shared(gpu, PR_OUTDEG);
    double *state = (double *)hf_cuda_shared(gpu, PR_STATE);
    if (!offsets || !adj || !outdeg || !state)
        return hf_fail(HF_EAPP, "pagerank: the graph is not on %s", hf_cuda_name(gpu));
    size_t nv = p->ga.g.nv, off = (size_t)(piece->load->round & 1) * nv;
    if (piece->begin < off || piece->end > off + nv)
        return hf_fail(HF_EAPP, "pagerank: piece %zu..%zu outside the half at %zu", piece->begin,
                       piece->end, off);
    uint32_t vb = (uint32_t)(piece->begin - off), ve = (uint32_t)(piece->end - off);
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    if (ve == vb)
        return 0;
    const double *prev = state + (nv - off);
    double *next = state + off;
    double avg = (double)(p->in.offsets[ve] - p->in.offsets[vb]) / (double)(ve - vb);
    if (avg < 3)
        launch<1>(offsets, adj, outdeg, prev, next, vb, ve, p->base, p->damping, s);
    else if (avg < 6)
        launch<4>(offsets, adj, outdeg, prev, next, vb, ve, p->base, p->damping, s);
    else if (avg < 12)
        launch<8>(offsets, adj, outdeg, prev, next, vb, ve, p->base, p->damping, s);
    else if (avg < 24)
        launch<16>(offsets, adj, outdeg, prev, next, vb, ve, p->base, p->damping, s);
    else
        launch<32>(offsets, adj, outdeg, prev, next, vb, ve, p->base, p->damping, s);
    return hf_cuda_check(gpu, cudaGetLastError(), "pagerank sweep kernel");
}
