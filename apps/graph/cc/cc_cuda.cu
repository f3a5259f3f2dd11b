/* cc_cuda.cu - one piece of a connected-components round on a GPU.
 *
 * DESIGN
 * ------
 * The CSR and the labels live on the GPU for the whole run (shared data), so
 * a piece moves nothing. The rounds are cc.c's, with its link and shortcut
 * on the GPU's copy (atomicCAS on a root, plain stores for a shortcut),
 * every label lowered recorded (hf_cuda_shared_record) for the merge:
 *   - a sampling round: one thread a vertex links it to its neighbour number
 *     `sample`; a second kernel then shortcuts the piece's vertices (the
 *     kernel boundary is the barrier between the two steps);
 *   - the compress round: the shortcut kernel alone;
 *   - a full sweep: a group of G lanes (G a power of two up to a warp, chosen
 *     from the piece's average degree, as in pagerank_cuda.cu) shares a
 *     vertex u: its first lane shortcuts u and the group skips u when the
 *     root is `big`, else its lanes split u's edges (from `from` on) and link
 *     each; then the first lane shortcuts u again unless a compress round
 *     follows.
 * Why plain shortcut stores are safe here is cc.c's argument: a label that is
 * not a root is written only by the thread that shortcuts its vertex, and a
 * link re-points only roots, with a CAS. Every lane of a warp reaches the
 * shuffle that hands the root out, so none returns before it.
 */
#include <stdint.h>

#include "cc.h"
#include "hf_cuda.h"

#define CC_BLOCK 256

static __device__ __forceinline__ uint32_t load(const uint32_t *label, uint32_t i)
{
    return *(const volatile uint32_t *)&label[i];
}

/* Points u at its tree's root; returns the root (cc.c's shortcut). */
static __device__ uint32_t shortcut(uint32_t *label, struct hf_cuda_recorder rec, uint32_t u)
{
    uint32_t l = load(label, u), ll = load(label, l);
    while (ll < l) {
        *(volatile uint32_t *)&label[u] = ll;
        hf_cuda_shared_record(rec, u);
        l = ll;
        ll = load(label, l);
    }
    return l;
}

/* Afforest's link: afterwards u and v are in one tree (cc.c's link). */
static __device__ void link(uint32_t *label, struct hf_cuda_recorder rec, uint32_t u, uint32_t v)
{
    uint32_t p1 = load(label, u), p2 = load(label, v);
    while (p1 != p2) {
        uint32_t high = p1 > p2 ? p1 : p2, low = p1 + p2 - high;
        uint32_t ph = load(label, high);
        if (ph == low)
            break;
        if (ph == high && atomicCAS(&label[high], high, low) == high) {
            hf_cuda_shared_record(rec, high);
            break;
        }
        p1 = load(label, load(label, high));
        p2 = load(label, low);
    }
}

/* Sampling: vertex u of [begin, end) linked to its neighbour number r. */
static __global__ void sample_kernel(const uint64_t *offsets, const uint32_t *adj, uint32_t *label,
                                     struct hf_cuda_recorder rec, uint32_t begin, uint32_t end,
                                     unsigned r)
{
    uint64_t uu = begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (uu >= end)
        return;
    uint32_t u = (uint32_t)uu;
    if (offsets[u] + r < offsets[u + 1])
        link(label, rec, u, adj[offsets[u] + r]);
}

static __global__ void shortcut_kernel(uint32_t *label, struct hf_cuda_recorder rec,
                                       uint32_t begin, uint32_t end)
{
    uint64_t uu = begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (uu < end)
        shortcut(label, rec, (uint32_t)uu);
}

/* A full sweep over [begin, end), G lanes a vertex (see DESIGN). */
template <int G>
static __global__ void sweep_kernel(const uint64_t *offsets, const uint32_t *adj, uint32_t *label,
                                    struct hf_cuda_recorder rec, uint32_t begin, uint32_t end,
                                    uint32_t big, unsigned from, int again)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t uu = begin + t / G;
    unsigned lane = (unsigned)(t % G);
    bool live = uu < end;
    uint32_t u = live ? (uint32_t)uu : begin;
    uint32_t root = live && lane == 0 ? shortcut(label, rec, u) : 0;
    root = __shfl_sync(0xffffffffu, root, 0, G);
    if (!live || root == big)
        return;
    for (uint64_t j = offsets[u] + from + lane; j < offsets[u + 1]; j += G)
        link(label, rec, u, adj[j]);
    if (again && lane == 0)
        shortcut(label, rec, u);
}

template <int G>
static void sweep(const uint64_t *offsets, const uint32_t *adj, uint32_t *label,
                  struct hf_cuda_recorder rec, uint32_t begin, uint32_t end, uint32_t big,
                  unsigned from, int again, cudaStream_t s)
{
    uint64_t threads = (uint64_t)(end - begin) * G;
    sweep_kernel<G><<<(unsigned)((threads + CC_BLOCK - 1) / CC_BLOCK), CC_BLOCK, 0, s>>>(
        offsets, adj, label, rec, begin, end, big, from, again);
}

extern "C" int hf__cc_cuda(struct hf_cc *c, const struct hf_bundle *p, struct hf_cuda *gpu)
{
    const uint64_t *offsets = (const uint64_t *)hf_cuda_shared(gpu, CC_OFFSETS);
    const uint32_t *adj = (const uint32_t *)hf_cuda_shared(gpu, CC_ADJ);
    uint32_t *label = (uint32_t *)hf_cuda_shared(gpu, CC_LABEL);
    if (!offsets || !adj || !label)
        return hf_fail(HF_EAPP, "cc: the graph is not on %s", hf_cuda_name(gpu));
    struct hf_cuda_recorder rec = hf_cuda_shared_recorder(gpu, CC_LABEL);
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    uint32_t b = (uint32_t)p->begin, e = (uint32_t)p->end;
    if (e == b)
        return 0;
    unsigned vblocks = (unsigned)(((uint64_t)(e - b) + CC_BLOCK - 1) / CC_BLOCK);
    if (c->sample >= 0 || c->compress) {
        if (c->sample >= 0)
            sample_kernel<<<vblocks, CC_BLOCK, 0, s>>>(offsets, adj, label, rec, b, e,
                                                       (unsigned)c->sample);
        shortcut_kernel<<<vblocks, CC_BLOCK, 0, s>>>(label, rec, b, e);
        return hf_cuda_check(gpu, cudaGetLastError(), "cc kernels");
    }
    unsigned from = c->one_copy ? HF_CC_SAMPLES : 0;
    int again = !c->one_copy;
    const uint64_t *off = c->ga.g.offsets;
    double avg = (double)(off[e] - off[b]) / (double)(e - b);
    if (avg < 3)
        sweep<1>(offsets, adj, label, rec, b, e, c->big, from, again, s);
    else if (avg < 6)
        sweep<4>(offsets, adj, label, rec, b, e, c->big, from, again, s);
    else if (avg < 12)
        sweep<8>(offsets, adj, label, rec, b, e, c->big, from, again, s);
    else if (avg < 24)
        sweep<16>(offsets, adj, label, rec, b, e, c->big, from, again, s);
    else
        sweep<32>(offsets, adj, label, rec, b, e, c->big, from, again, s);
    return hf_cuda_check(gpu, cudaGetLastError(), "cc sweep kernel");
}
