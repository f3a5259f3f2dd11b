/* cc_cuda.cu - one piece of a connected-components sweep on a GPU.
 *
 * DESIGN
 * ------
 * The CSR and the labels live on the GPU for the whole run (shared data), so
 * a piece moves nothing. A group of G lanes (G a power of two up to a warp,
 * chosen from the piece's average degree, as in pagerank_cuda.cu) shares a
 * vertex u and splits its edges; each lane hooks and propagates exactly as
 * cc.c does, with atomicMin on the labels, recording every label it lowered
 * (hf_cuda_shared_record) for the merge. Then the group's first lane
 * shortcuts u. The kernel is cc.c's loop with the loop over u spread over
 * groups and the loop over edges over lanes; nothing else differs.
 */
#include <stdint.h>

#include "cc.h"
#include "hf_cuda.h"

/* label[i] = min(label[i], x); records i when it went down. */
static __device__ __forceinline__ void lower(uint32_t *label, struct hf_cuda_recorder rec,
                                             uint32_t i, uint32_t x)
{
    if (x < label[i] && x < atomicMin(&label[i], x))
        hf_cuda_shared_record(rec, i);
}

/* Vertices [begin, end), G lanes per vertex. */
template <int G>
static __global__ void sweep_kernel(const uint64_t *offsets, const uint32_t *adj, uint32_t *label,
                                    struct hf_cuda_recorder rec, uint32_t begin, uint32_t end)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t uu = begin + t / G;
    unsigned lane = (unsigned)(t % G);
    if (uu >= end)
        return;
    uint32_t u = (uint32_t)uu;
    for (uint64_t j = offsets[u] + lane; j < offsets[u + 1]; j += G) {
        uint32_t v = adj[j];
        uint32_t lu = *(volatile uint32_t *)&label[u], lv = *(volatile uint32_t *)&label[v];
        if (lu < lv) {
            lower(label, rec, lv, lu); /* hook v's tree under lu */
            lower(label, rec, v, lu);
        }
    }
    if (lane != 0)
        return;
    uint32_t l = *(volatile uint32_t *)&label[u];
    uint32_t ll = *(volatile uint32_t *)&label[l];
    while (ll < l) { /* shortcut: jump to the root */
        lower(label, rec, u, ll);
        l = ll;
        ll = *(volatile uint32_t *)&label[l];
    }
}

template <int G>
static void launch(const uint64_t *offsets, const uint32_t *adj, uint32_t *label,
                   struct hf_cuda_recorder rec, uint32_t begin, uint32_t end, cudaStream_t s)
{
    uint64_t threads = (uint64_t)(end - begin) * G;
    sweep_kernel<G>
        <<<(unsigned)((threads + 255) / 256), 256, 0, s>>>(offsets, adj, label, rec, begin, end);
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
    const uint64_t *off = c->ga.g.offsets;
    double avg = (double)(off[e] - off[b]) / (double)(e - b);
    if (avg < 3)
        launch<1>(offsets, adj, label, rec, b, e, s);
    else if (avg < 6)
        launch<4>(offsets, adj, label, rec, b, e, s);
    else if (avg < 12)
        launch<8>(offsets, adj, label, rec, b, e, s);
    else if (avg < 24)
        launch<16>(offsets, adj, label, rec, b, e, s);
    else
        launch<32>(offsets, adj, label, rec, b, e, s);
    return hf_cuda_check(gpu, cudaGetLastError(), "cc sweep kernel");
}
