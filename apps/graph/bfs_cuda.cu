/* bfs_cuda.cu - one piece of a BFS round on a GPU.
 *
 * DESIGN
 * ------
 * The CSR and the depths live on the GPU for the whole run (shared data: the
 * framework uploaded them and merges the depths between rounds), so a piece
 * moves only its frontier slice. A push piece copies its frontier vertices and
 * the prefix sums of their degrees in (frontier_cuda.cu), then gives every
 * thread the same number of EDGES rather than vertices (frontier_cuda.cuh:
 * load balancing by edges, as merge-path / Gunrock's LB advance do), so one
 * vertex of degree 10^6 is spread over the whole GPU instead of one warp. A
 * vertex is claimed with one atomicCAS from unseen to
 * level + 1 and recorded once for the merge. A pull piece needs no input:
 * one thread per vertex of its range scans the neighbours of an unseen vertex
 * for one at the frontier's depth and stops at the first.
 */
#include <stdint.h>

#include "bfs.h"
#include "frontier_cuda.cuh"
#include "hf_cuda.h"

/* Each thread expands its share of the slice's edges (frontier_cuda.cuh). */
static __global__ void push_kernel(const uint64_t *offsets, const uint32_t *adj, int32_t *depth,
                                   struct hf_cuda_recorder rec, const uint32_t *front,
                                   const uint64_t *pre, uint32_t n, uint64_t pre0,
                                   uint64_t edges, int32_t next)
{
    hf_frontier_walk(offsets, front, pre, n, pre0, edges, [&](uint32_t u, uint64_t j) {
        (void)u;
        uint32_t v = adj[j];
        if (depth[v] == HF_BFS_UNSEEN && atomicCAS(&depth[v], HF_BFS_UNSEEN, next) == HF_BFS_UNSEEN)
            hf_cuda_shared_record(rec, v);
    });
}

/* One thread per vertex of [begin, end): bottom-up. */
static __global__ void pull_kernel(const uint64_t *offsets, const uint32_t *adj, int32_t *depth,
                                   struct hf_cuda_recorder rec, uint32_t begin, uint32_t end,
                                   int32_t level)
{
    uint32_t v = begin + blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= end || depth[v] != HF_BFS_UNSEEN)
        return;
    for (uint64_t j = offsets[v]; j < offsets[v + 1]; j++)
        if (depth[adj[j]] == level) {
            depth[v] = level + 1;
            hf_cuda_shared_record(rec, v);
            return;
        }
}

extern "C" int hf__bfs_cuda(struct hf_bfs *b, const struct hf_bundle *p, struct hf_cuda *gpu)
{
    const uint64_t *offsets = (const uint64_t *)hf_cuda_shared(gpu, BFS_OFFSETS);
    const uint32_t *adj = (const uint32_t *)hf_cuda_shared(gpu, BFS_ADJ);
    int32_t *depth = (int32_t *)hf_cuda_shared(gpu, BFS_DEPTH);
    if (!offsets || !adj || !depth)
        return hf_fail(HF_EAPP, "bfs: the graph is not on %s", hf_cuda_name(gpu));
    struct hf_cuda_recorder rec = hf_cuda_shared_recorder(gpu, BFS_DEPTH);
    if (b->pull) {
        cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
        uint32_t n = (uint32_t)(p->end - p->begin);
        pull_kernel<<<(n + 255) / 256, 256, 0, s>>>(offsets, adj, depth, rec, (uint32_t)p->begin,
                                                    (uint32_t)p->end, b->level);
        return hf_cuda_check(gpu, cudaGetLastError(), "bfs pull kernel");
    }
    uint32_t *d_front;
    uint64_t *d_pre;
    int rc = hf__frontier_to_gpu(&b->fr, p, gpu, &d_front, &d_pre);
    if (rc)
        return rc;
    uint64_t edges = b->fr.pre[p->end] - b->fr.pre[p->begin];
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    if (edges == 0)
        return 0;
    push_kernel<<<hf_frontier_blocks(edges), 256, 0, s>>>(
        offsets, adj, depth, rec, d_front, d_pre, (uint32_t)(p->end - p->begin),
        b->fr.pre[p->begin], edges, b->level + 1);
    return hf_cuda_check(gpu, cudaGetLastError(), "bfs push kernel");
}
