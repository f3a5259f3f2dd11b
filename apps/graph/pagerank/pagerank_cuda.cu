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
 *
 * A group of G lanes takes only vertices of at most G * HF_PR_GROUP_ROUNDS
 * in-edges; a heavier one is appended to a list in the piece's arena and a
 * second kernel gives each listed vertex a whole block. Without this the
 * sweep lasts as long as one group's walk over the largest list: on Kronecker
 * scale 22 (max in-degree ~1.6e5, G = 16) that walk alone was the whole
 * 5.0 ms of the kernel, measured on an H200 (9edd91b:bench/NOTES.md).
 */
#include <stdint.h>

#include "hf_cuda.h"
#include "pagerank.h"

/* Edges a lane of a group walks at most; heavier vertices go to the block kernel. */
#define HF_PR_GROUP_ROUNDS 32
#define HF_PR_BLOCK 256

/* Vertices [vbegin, vend) of the half at `next`, G lanes per vertex; a vertex
 * of more than G * HF_PR_GROUP_ROUNDS in-edges is appended to heavy[] instead. */
template <int G>
static __global__ void sweep_kernel(const uint64_t *offsets, const uint32_t *adj,
                                    const uint32_t *outdeg, const double *prev, double *next,
                                    uint32_t vbegin, uint32_t vend, double base, double damping,
                                    uint32_t *heavy, unsigned *nheavy)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t vv = vbegin + t / G;
    unsigned lane = (unsigned)(t % G);
    /* Every lane of a group takes part in the shuffles, so none returns early. */
    bool live = vv < vend;
    uint32_t v = live ? (uint32_t)vv : vbegin;
    double sum = 0;
    uint64_t jb = offsets[v], je = offsets[v + 1];
    if (live && je - jb > (uint64_t)G * HF_PR_GROUP_ROUNDS) {
        if (lane == 0)
            heavy[atomicAdd(nheavy, 1u)] = v;
        live = false;
    }
    if (live)
        for (uint64_t j = jb + lane; j < je; j += G)
            sum += prev[adj[j]];
    for (int o = G / 2; o > 0; o /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, o, G);
    if (live && lane == 0) {
        uint32_t d = outdeg[v];
        next[v] = (base + damping * sum) / (double)(d ? d : 1);
    }
}

/* The listed heavy vertices, a block each (grid-stride over the list): four
 * independent partial sums per thread keep several loads in flight. */
static __global__ void heavy_kernel(const uint64_t *offsets, const uint32_t *adj,
                                    const uint32_t *outdeg, const double *prev, double *next,
                                    const uint32_t *heavy, const unsigned *nheavy, double base,
                                    double damping)
{
    __shared__ double part[HF_PR_BLOCK / 32];
    unsigned n = *nheavy;
    for (unsigned k = blockIdx.x; k < n; k += gridDim.x) {
        uint32_t v = heavy[k];
        uint64_t jb = offsets[v], je = offsets[v + 1];
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        uint64_t j = jb + threadIdx.x;
        for (; j + 3 * HF_PR_BLOCK < je; j += 4 * HF_PR_BLOCK) {
            s0 += prev[adj[j]];
            s1 += prev[adj[j + HF_PR_BLOCK]];
            s2 += prev[adj[j + 2 * HF_PR_BLOCK]];
            s3 += prev[adj[j + 3 * HF_PR_BLOCK]];
        }
        for (; j < je; j += HF_PR_BLOCK)
            s0 += prev[adj[j]];
        double sum = (s0 + s1) + (s2 + s3);
        for (int o = 16; o > 0; o /= 2)
            sum += __shfl_down_sync(0xffffffffu, sum, o);
        if (threadIdx.x % 32 == 0)
            part[threadIdx.x / 32] = sum;
        __syncthreads();
        if (threadIdx.x == 0) {
            double t = 0;
            for (int w = 0; w < HF_PR_BLOCK / 32; w++)
                t += part[w];
            uint32_t d = outdeg[v];
            next[v] = (base + damping * t) / (double)(d ? d : 1);
        }
        __syncthreads(); /* part[] is reused by the next vertex */
    }
}

/* Launches the kernel with group size G over the piece's vertices. */
template <int G>
static void launch(const uint64_t *offsets, const uint32_t *adj, const uint32_t *outdeg,
                   const double *prev, double *next, uint32_t vbegin, uint32_t vend, double base,
                   double damping, uint32_t *heavy, unsigned *nheavy, cudaStream_t s)
{
    uint64_t threads = (uint64_t)(vend - vbegin) * G;
    unsigned blocks = (unsigned)((threads + 255) / 256);
    sweep_kernel<G><<<blocks, 256, 0, s>>>(offsets, adj, outdeg, prev, next, vbegin, vend, base,
                                           damping, heavy, nheavy);
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
    unsigned *nheavy = (unsigned *)hf_cuda_arena_alloc(gpu, sizeof *nheavy);
    uint32_t *heavy = (uint32_t *)hf_cuda_arena_alloc(gpu, (size_t)(ve - vb) * sizeof *heavy);
    if (!nheavy || !heavy)
        return hf_fail(HF_EDEVOOM, "pagerank: no room for the heavy list of %u vertices",
                       ve - vb);
    int rc = hf_cuda_check(gpu, cudaMemsetAsync(nheavy, 0, sizeof *nheavy, s), "heavy count");
    if (rc)
        return rc;
    const double *prev = state + (nv - off);
    double *next = state + off;
    double avg = (double)(p->in.offsets[ve] - p->in.offsets[vb]) / (double)(ve - vb);
    if (avg < 3)
        launch<1>(offsets, adj, outdeg, prev, next, vb, ve, p->base, p->damping, heavy, nheavy, s);
    else if (avg < 6)
        launch<4>(offsets, adj, outdeg, prev, next, vb, ve, p->base, p->damping, heavy, nheavy, s);
    else if (avg < 12)
        launch<8>(offsets, adj, outdeg, prev, next, vb, ve, p->base, p->damping, heavy, nheavy, s);
    else if (avg < 24)
        launch<16>(offsets, adj, outdeg, prev, next, vb, ve, p->base, p->damping, heavy, nheavy,
                   s);
    else
        launch<32>(offsets, adj, outdeg, prev, next, vb, ve, p->base, p->damping, heavy, nheavy,
                   s);
    if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "pagerank sweep kernel")))
        return rc;
    /* The list's length stays on the GPU: a fixed grid strides over it. */
    heavy_kernel<<<1024, HF_PR_BLOCK, 0, s>>>(offsets, adj, outdeg, prev, next, heavy, nheavy,
                                              p->base, p->damping);
    return hf_cuda_check(gpu, cudaGetLastError(), "pagerank heavy kernel");
}
