/* sssp_cuda.cu - one piece of an SSSP relaxation round on a GPU.
 *
 * DESIGN
 * ------
 * As BFS's push round (bfs_cuda.cu), which this follows line by line: the
 * CSR, its weights and the distances live on the GPU for the whole run, a
 * piece copies in only its frontier slice and the prefix sums of its degrees,
 * and every thread relaxes the same number of EDGES, finding its vertex by
 * binary search in the prefix sums, so that a hub's edges spread over the
 * whole GPU. dist[v] = min(dist[v], dist[u] + w) is one atomicMin on the int
 * bits of the float: distances are never negative (the loaders reject
 * negative weights) and non-negative IEEE floats, +inf included, order like
 * their bit patterns as signed ints. A thread whose atomicMin lowered v
 * records it (hf_cuda_shared_record) for the merge.
 */
#include <stdint.h>

#include "hf_cuda.h"
#include "graph/app/frontier_cuda.cuh"
#include "sssp.h"

/* Each thread relaxes its share of the slice's edges (frontier_cuda.cuh). */
static __global__ void relax_kernel(const uint64_t *offsets, const uint32_t *adj,
                                    const float *weights, float *dist, struct hf_cuda_recorder rec,
                                    const uint32_t *front, const uint64_t *pre, uint32_t n,
                                    uint64_t pre0, uint64_t edges)
{
    hf_frontier_walk(offsets, front, pre, n, pre0, edges, [&](uint32_t u, uint64_t j) {
        uint32_t v = adj[j];
        float nd = *(volatile float *)&dist[u] + (weights ? weights[j] : 1.0f);
        if (nd < *(volatile float *)&dist[v]) {
            int bits = __float_as_int(nd);
            if (bits < atomicMin((int *)&dist[v], bits))
                hf_cuda_shared_record(rec, v);
        }
    });
}

extern "C" int hf__sssp_cuda(struct hf_sssp *s, const struct hf_bundle *p, struct hf_cuda *gpu)
{
    const uint64_t *offsets = (const uint64_t *)hf_cuda_shared(gpu, SSSP_OFFSETS);
    const uint32_t *adj = (const uint32_t *)hf_cuda_shared(gpu, SSSP_ADJ);
    const float *weights =
        s->ga.g.weights ? (const float *)hf_cuda_shared(gpu, SSSP_WEIGHTS) : NULL;
    float *dist = (float *)hf_cuda_shared(gpu, s->s_dist);
    if (!offsets || !adj || !dist || (s->ga.g.weights && !weights))
        return hf_fail(HF_EAPP, "sssp: the graph is not on %s", hf_cuda_name(gpu));
    struct hf_cuda_recorder rec = hf_cuda_shared_recorder(gpu, s->s_dist);
    uint32_t *d_front;
    uint64_t *d_pre;
    int rc = hf__frontier_to_gpu(&s->fr, p, gpu, &d_front, &d_pre);
    if (rc)
        return rc;
    uint64_t edges = s->fr.pre[p->end] - s->fr.pre[p->begin];
    cudaStream_t st = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    if (edges == 0)
        return 0;
    relax_kernel<<<hf_frontier_blocks(edges), 256, 0, st>>>(
        offsets, adj, weights, dist, rec, d_front, d_pre, (uint32_t)(p->end - p->begin),
        s->fr.pre[p->begin], edges);
    return hf_cuda_check(gpu, cudaGetLastError(), "sssp relax kernel");
}
