/* frontier_cuda.cuh - the edge-balanced walk over a frontier slice that the
 * push kernels of bfs_cuda.cu and sssp_cuda.cu share (device code only).
 *
 * A piece holds frontier items [0, n) with the prefix sums of their degrees,
 * pre[k] - pre0 = edges of items before k. Every thread takes the same number
 * of EDGES (HF_FRONTIER_EDGES_PER_THREAD consecutive ones), finds the item
 * holding its first edge by binary search and walks on, so a vertex of
 * degree 10^6 is spread over the whole GPU instead of one warp (load
 * balancing by edges, as merge-path / Gunrock's LB advance do).
 */
#ifndef HF_FRONTIER_CUDA_CUH
#define HF_FRONTIER_CUDA_CUH

#include <stdint.h>

#define HF_FRONTIER_EDGES_PER_THREAD 8

/* Calls visit(u, j) for each edge of this thread's share: u the frontier
 * vertex, j the edge's index in the CSR. */
template <typename Visit>
static __device__ __forceinline__ void hf_frontier_walk(const uint64_t *offsets,
                                                        const uint32_t *front,
                                                        const uint64_t *pre, uint32_t n,
                                                        uint64_t pre0, uint64_t edges,
                                                        Visit visit)
{
    uint64_t first = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) *
                     HF_FRONTIER_EDGES_PER_THREAD;
    if (first >= edges)
        return;
    uint64_t last = first + HF_FRONTIER_EDGES_PER_THREAD < edges
                        ? first + HF_FRONTIER_EDGES_PER_THREAD
                        : edges;
    uint32_t lo = 0, hi = n; /* the item k with pre[k] - pre0 <= first < pre[k + 1] - pre0 */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (pre[mid] - pre0 <= first)
            lo = mid;
        else
            hi = mid;
    }
    uint32_t k = lo;
    for (uint64_t e = first; e < last; e++) {
        while (k + 1 < n && pre[k + 1] - pre0 <= e)
            k++;
        uint32_t u = front[k];
        visit(u, offsets[u] + (e - (pre[k] - pre0)));
    }
}

/* Blocks of 256 threads for a slice of `edges` edges. */
static inline unsigned hf_frontier_blocks(uint64_t edges)
{
    uint64_t threads = (edges + HF_FRONTIER_EDGES_PER_THREAD - 1) / HF_FRONTIER_EDGES_PER_THREAD;
    return (unsigned)((threads + 255) / 256);
}

#endif
