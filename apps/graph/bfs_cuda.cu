/* bfs_cuda.cu - one piece of a BFS round on a GPU.
 *
 * DESIGN
 * ------
 * The CSR and the depths live on the GPU for the whole run (shared data: the
 * framework uploaded them and merges the depths between rounds), so a piece
 * moves only its frontier slice. A push piece copies its frontier vertices and
 * the prefix sums of their degrees in, then gives every thread the same number
 * of EDGES rather than vertices: thread t finds its vertex by binary search in
 * the prefix sums (load balancing by edges, as merge-path / Gunrock's LB
 * advance do), so one vertex of degree 10^6 is spread over the whole GPU
 * instead of one warp. A vertex is claimed with one atomicCAS from unseen to
 * level + 1 and recorded once for the merge. A pull piece needs no input:
 * one thread per vertex of its range scans the neighbours of an unseen vertex
 * for one at the frontier's depth and stops at the first.
 */
#include <stdint.h>
#include <string.h>

#include "bfs.h"
#include "hf_cuda.h"

#define EDGES_PER_THREAD 8

/* Each thread expands EDGES_PER_THREAD consecutive edges of the slice. */
static __global__ void push_kernel(const uint64_t *offsets, const uint32_t *adj, int32_t *depth,
                                   struct hf_cuda_recorder rec, const uint32_t *front,
                                   const uint64_t *pre, uint32_t n, uint64_t pre0,
                                   uint64_t edges, int32_t next)
{
    uint64_t first = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) * EDGES_PER_THREAD;
    if (first >= edges)
        return;
    uint64_t last = first + EDGES_PER_THREAD < edges ? first + EDGES_PER_THREAD : edges;
    /* Binary search for the item holding edge `first`: pre[k] - pre0 <= first. */
    uint32_t k, lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (pre[mid] - pre0 <= first)
            lo = mid;
        else
            hi = mid;
    }
    k = lo;
    for (uint64_t e = first; e < last; e++) {
        while (k + 1 < n && pre[k + 1] - pre0 <= e)
            k++;
        uint32_t u = front[k];
        uint32_t v = adj[offsets[u] + (e - (pre[k] - pre0))];
        if (depth[v] == HF_BFS_UNSEEN && atomicCAS(&depth[v], HF_BFS_UNSEEN, next) == HF_BFS_UNSEEN)
            hf_cuda_shared_record(rec, v);
    }
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

/* Copies a push piece's frontier slice and prefix sums to the arena through
 * the slot's pinned staging buffer (the frontier is rebuilt every round, so
 * it is not worth pinning). */
static int copy_slice(struct hf_bfs *b, const struct hf_bundle *p, struct hf_cuda *gpu,
                      uint32_t **d_front, uint64_t **d_pre)
{
    size_t n = p->end - p->begin;
    size_t fb = n * sizeof(uint32_t), pb = (n + 1) * sizeof(uint64_t);
    size_t fb_al = (fb + 255) / 256 * 256;
    *d_front = (uint32_t *)hf_cuda_arena_alloc(gpu, fb);
    *d_pre = (uint64_t *)hf_cuda_arena_alloc(gpu, pb);
    if (!*d_front || !*d_pre)
        return hf_fail(HF_EDEVOOM, "bfs: a frontier slice of %zu vertices does not fit", n);
    size_t stage_bytes = 0;
    char *stage = (char *)hf_cuda_staging(gpu, &stage_bytes);
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_COPY_IN);
    if (stage && fb_al + pb <= stage_bytes) {
        memcpy(stage, b->fr.v + p->begin, fb);
        memcpy(stage + fb_al, b->fr.pre + p->begin, pb);
        int rc = hf_cuda_check(gpu, cudaMemcpyAsync(*d_front, stage, fb, cudaMemcpyHostToDevice, s),
                               "bfs frontier in");
        return rc ? rc
                  : hf_cuda_check(gpu, cudaMemcpyAsync(*d_pre, stage + fb_al, pb,
                                                       cudaMemcpyHostToDevice, s),
                                  "bfs prefix in");
    }
    int rc = hf_cuda_check(gpu, cudaMemcpyAsync(*d_front, b->fr.v + p->begin, fb,
                                                cudaMemcpyHostToDevice, s), "bfs frontier in");
    return rc ? rc
              : hf_cuda_check(gpu, cudaMemcpyAsync(*d_pre, b->fr.pre + p->begin, pb,
                                                   cudaMemcpyHostToDevice, s), "bfs prefix in");
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
    int rc = copy_slice(b, p, gpu, &d_front, &d_pre);
    if (rc)
        return rc;
    uint64_t edges = b->fr.pre[p->end] - b->fr.pre[p->begin];
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    if (edges == 0)
        return 0;
    uint64_t threads = (edges + EDGES_PER_THREAD - 1) / EDGES_PER_THREAD;
    push_kernel<<<(unsigned)((threads + 255) / 256), 256, 0, s>>>(
        offsets, adj, depth, rec, d_front, d_pre, (uint32_t)(p->end - p->begin),
        b->fr.pre[p->begin], edges, b->level + 1);
    return hf_cuda_check(gpu, cudaGetLastError(), "bfs push kernel");
}
