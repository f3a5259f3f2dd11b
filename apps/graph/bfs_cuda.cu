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
 *
 * A piece that is a whole push round may go on by itself (bfs.c, "Fused
 * levels"): the first level runs as above and also sums the degrees of what
 * it found; then one cooperative kernel walks the recorder's list, whose
 * entries from the level's start on are exactly the vertices that level
 * found (each vertex is recorded once, when first reached), then three
 * queues in turn (struct fuse_state), FUSE_LANES threads per vertex (one per
 * edge) and one grid-wide barrier a level. It stops before a level
 * of more than fuse_edges edges, or when a level finds nothing. Its host
 * thread then waits for it (the round ends there anyway).
 */
#include <stdint.h>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "bfs.h"
#include "frontier_cuda.cuh"
#include "hf_cuda.h"

/* What the fused kernel needs between levels (device memory, from the arena).
 * The first fused level reads the recorder's list from `start` to `end` (what
 * the host-launched level found); later levels read and write three queues in
 * turn: level `it` reads queue it % 3, appends to (it + 1) % 3 and clears the
 * counters of (it + 2) % 3, which nobody touches during that level, so one
 * grid-wide barrier a level is enough. */
struct fuse_state {
    unsigned long long start, end;
    unsigned long long edges[3];  /* the degrees of a level's finds, by the queue they go to */
    unsigned int count[3];        /* entries in each queue */
};

/* Before the host-launched level: where its finds will start in the list. */
static __global__ void mark_start(struct hf_cuda_recorder rec, struct fuse_state *st)
{
    st->start = *rec.count;
    st->edges[0] = st->edges[1] = st->edges[2] = 0;
    st->count[0] = st->count[1] = st->count[2] = 0;
}

/* After it: where they end. */
static __global__ void mark_end(struct hf_cuda_recorder rec, struct fuse_state *st)
{
    st->end = *rec.count;
}

/* Each thread expands its share of the slice's edges (frontier_cuda.cuh). */
static __global__ void push_kernel(const uint64_t *offsets, const uint32_t *adj, int32_t *depth,
                                   struct hf_cuda_recorder rec, const uint32_t *front,
                                   const uint64_t *pre, uint32_t n, uint64_t pre0,
                                   uint64_t edges, int32_t next, unsigned long long *found_edges)
{
    unsigned long long mine = 0;
    hf_frontier_walk(offsets, front, pre, n, pre0, edges, [&](uint32_t u, uint64_t j) {
        (void)u;
        uint32_t v = adj[j];
        if (depth[v] == HF_BFS_UNSEEN &&
            atomicCAS(&depth[v], HF_BFS_UNSEEN, next) == HF_BFS_UNSEEN) {
            hf_cuda_shared_record(rec, v);
            mine += offsets[v + 1] - offsets[v];
        }
    });
    if (!found_edges)
        return;
    /* The degrees of the finds, for the fused levels: one atomic add per warp. */
    cooperative_groups::coalesced_group g = cooperative_groups::coalesced_threads();
    mine = cooperative_groups::reduce(g, mine, cooperative_groups::plus<unsigned long long>());
    if (g.thread_rank() == 0 && mine)
        atomicAdd(found_edges, mine);
}

#define FUSE_LANES 4 /* threads per frontier vertex in the fused levels */

/* Levels after the first, on the GPU alone (see DESIGN): the frontier of
 * depth `level` is the recorder's list [st->start, st->end), then the queues. */
static __global__ void fused_kernel(const uint64_t *offsets, const uint32_t *adj, int32_t *depth,
                                    struct hf_cuda_recorder rec, struct fuse_state *st,
                                    uint32_t *queues, unsigned int qcap, int32_t level,
                                    unsigned long long max_edges, int max_levels)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    unsigned long long tid = grid.thread_rank(), nthreads = grid.size();
    for (int it = 0; it < max_levels; it++, level++) {
        int in = it % 3, out = (it + 1) % 3, idle = (it + 2) % 3;
        const uint32_t *front = it ? queues + (size_t)in * qcap : rec.list + st->start;
        unsigned long long n = it ? st->count[in] : st->end - st->start;
        if (n == 0 || st->edges[in] > max_edges || (it == 0 && n > qcap))
            break; /* nothing found, or a level for the host (the same test in every thread) */
        if (tid == 0) {
            st->count[idle] = 0;
            st->edges[idle] = 0;
        }
        uint32_t *next = queues + (size_t)out * qcap;
        unsigned long long found_edges = 0;
        /* FUSE_LANES threads per vertex, one per edge: a level is a chain of
         * dependent memory accesses, and a thread walking its vertex's edges
         * one after another would repeat the chain per edge. */
        for (unsigned long long k = tid / FUSE_LANES; k < n; k += nthreads / FUSE_LANES) {
            uint32_t u = front[k];
            for (uint64_t j = offsets[u] + tid % FUSE_LANES; j < offsets[u + 1]; j += FUSE_LANES) {
                uint32_t v = adj[j];
                if (depth[v] == HF_BFS_UNSEEN &&
                    atomicCAS(&depth[v], HF_BFS_UNSEEN, level + 1) == HF_BFS_UNSEEN) {
                    hf_cuda_shared_record(rec, v);
                    /* At most max_edges finds (one edge each): they fit in a queue.
                     * The threads that append together take their slots with one
                     * atomic add: thousands of finds on one counter would queue. */
                    cooperative_groups::coalesced_group g = cooperative_groups::coalesced_threads();
                    unsigned int base = 0;
                    if (g.thread_rank() == 0)
                        base = atomicAdd(&st->count[out], g.size());
                    next[g.shfl(base, 0) + g.thread_rank()] = v;
                    found_edges += offsets[v + 1] - offsets[v];
                }
            }
        }
        /* The level's found edges: summed per warp, one atomic add each. */
        for (int o = 16; o > 0; o /= 2)
            found_edges += __shfl_down_sync(0xffffffffu, found_edges, o);
        if ((threadIdx.x & 31) == 0 && found_edges)
            atomicAdd(&st->edges[out], found_edges);
        grid.sync(); /* the level is done: its finds, their count and edges are visible */
    }
}

/* Runs the levels after this round's first on the GPU while they are small,
 * then waits for them: b->level itself is left to next_load, which finds the
 * deepest level among the changes. */
static int fuse_levels(struct hf_bfs *b, struct hf_cuda *gpu, cudaStream_t s,
                       const uint64_t *offsets, const uint32_t *adj, int32_t *depth,
                       struct hf_cuda_recorder rec, struct fuse_state *st)
{
    static __thread int blocks_per_sm = -1, sms;
    if (blocks_per_sm < 0) {
        int dev;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, fused_kernel, 256, 0) !=
                cudaSuccess)
            return hf_cuda_check(gpu, cudaGetLastError(), "bfs fused kernel occupancy");
    }
    if (blocks_per_sm < 1)
        return 0; /* cannot be co-resident: the host runs the next levels */
    int32_t level = b->level + 1;
    unsigned long long max_edges = (unsigned long long)b->fuse_edges;
    int max_levels = 1 << 20;
    /* A level of at most max_edges edges finds at most that many vertices. */
    unsigned int qcap = (unsigned int)(max_edges < b->ga.g.nv ? max_edges : b->ga.g.nv);
    uint32_t *queues = (uint32_t *)hf_cuda_arena_alloc(gpu, 3 * (size_t)qcap * sizeof *queues);
    if (!queues)
        return 0; /* no room: the host runs the next levels */
    mark_end<<<1, 1, 0, s>>>(rec, st);
    int rc = hf_cuda_check(gpu, cudaGetLastError(), "bfs fuse end");
    if (rc)
        return rc;
    void *args[] = {(void *)&offsets, (void *)&adj,   (void *)&depth, (void *)&rec,
                    (void *)&st,      (void *)&queues, (void *)&qcap, (void *)&level,
                    (void *)&max_edges, (void *)&max_levels};
    /* Two blocks of 256 per multiprocessor: on one H100, road BFS levels took
     * 20 us at that, 23-24 us at 1 x 256 or 1 x 1024 (bench/NOTES.md). */
    dim3 grid((unsigned)(sms * (blocks_per_sm < 2 ? blocks_per_sm : 2))), block(256);
    rc = hf_cuda_check(gpu, cudaLaunchCooperativeKernel((const void *)fused_kernel, grid, block,
                                                        args, 0, s),
                       "bfs fused kernel");
    return rc ? rc : hf_cuda_check(gpu, cudaStreamSynchronize(s), "bfs fused levels");
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
    /* The whole round in this one piece: this GPU alone runs it. */
    int fuse = b->fuse_edges > 0 && p->begin == 0 && p->end == b->fr.n;
    struct fuse_state *st = NULL;
    if (fuse && (st = (struct fuse_state *)hf_cuda_arena_alloc(gpu, sizeof *st))) {
        /* mark_start clears every field the push kernel and the fused one use. */
        mark_start<<<1, 1, 0, s>>>(rec, st);
        if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "bfs fuse start")))
            return rc;
    }
    push_kernel<<<hf_frontier_blocks(edges), 256, 0, s>>>(
        offsets, adj, depth, rec, d_front, d_pre, (uint32_t)(p->end - p->begin),
        b->fr.pre[p->begin], edges, b->level + 1, st ? &st->edges[0] : NULL);
    if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "bfs push kernel")) || !st)
        return rc;
    return fuse_levels(b, gpu, s, offsets, adj, depth, rec, st);
}
