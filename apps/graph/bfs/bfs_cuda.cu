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
 * levels"): the GPU then runs the next levels with no round trip to the
 * host. Every vertex a level finds is recorded once, when first reached, so
 * the recorder's list is the search's queue: a level's frontier is the list
 * segment [lo, hi) that the level before appended (struct search_state).
 * Small levels (at most fuse_edges edges) run in one cooperative kernel,
 * FUSE_LANES threads per vertex (one per edge) and one grid-wide barrier a
 * level, until a level is bigger or finds nothing. With [load] fuse = search
 * the host thread then goes on level by level on the GPU alone, choosing push
 * or pull by Beamer's rule (hf__bfs_choose_pull) from the frontier's size
 * and edges, which it reads back after each level (16 bytes): a pull level
 * is the pull kernel over every vertex, a push level the edge-balanced push
 * over the segment, its degree prefix sums made on the GPU (CUB's scan). The
 * search ends on the GPU when a level finds nothing, and the round with it.
 */
#include <stdint.h>
#include <string.h>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/device/device_scan.cuh>

#include "bfs.h"
#include "graph/app/frontier_cuda.cuh"
#include "hf_cuda.h"

/* Where a search on the GPU stands (device memory, from the arena). The
 * frontier is the recorder's list [lo, hi), `edges` its vertices' degrees.
 * A level sums the degrees of its finds in found[]: host-launched levels in
 * found[0], the fused kernel's levels in found[it % 3] (level `it` clears
 * found[(it + 1) % 3], which nobody reads or adds to during it, so one
 * grid-wide barrier a level is enough). The fused kernel counts its finds
 * the same way (finds[]) and does not read the list's count: a fast thread
 * may already append the next level's finds while a slow one reads it. */
struct search_state {
    unsigned long long lo, hi, edges; /* read back by the host after a level */
    unsigned long long expanded;      /* the fused kernel: edges of the levels it expanded */
    unsigned long long levels;        /* the fused kernel: levels it expanded */
    unsigned long long found[3];
    unsigned long long finds[3];      /* the fused kernel: a level's finds, rotating as found[] */
};

/* Before the round's first level: its finds start at the list's end. */
static __global__ void search_start(struct hf_cuda_recorder rec, struct search_state *st)
{
    st->lo = st->hi = *rec.count;
    st->edges = st->expanded = st->levels = 0;
    st->found[0] = st->found[1] = st->found[2] = 0;
    st->finds[0] = st->finds[1] = st->finds[2] = 0;
}

/* After a host-launched level: its finds are the next frontier. */
static __global__ void search_next(struct hf_cuda_recorder rec, struct search_state *st)
{
    st->lo = st->hi;
    st->hi = *rec.count;
    st->edges = st->found[0];
    st->found[0] = 0;
}

/* The degrees of a level's finds: summed per warp, one atomic add each
 * (every lane of the warp must call it). */
static __device__ __forceinline__ void add_found(unsigned long long *found, unsigned long long mine)
{
    for (int o = 16; o > 0; o /= 2)
        mine += __shfl_down_sync(0xffffffffu, mine, o);
    if ((threadIdx.x & 31) == 0 && mine)
        atomicAdd(found, mine);
}

/* Each thread expands its share of the slice's edges (frontier_cuda.cuh). */
static __global__ void push_kernel(const uint64_t *offsets, const uint32_t *adj, int32_t *depth,
                                   struct hf_cuda_recorder rec, const uint32_t *front,
                                   const uint64_t *pre, uint32_t n, uint64_t pre0,
                                   uint64_t edges, int32_t next, unsigned long long *found)
{
    unsigned long long mine = 0;
    hf_frontier_walk(offsets, front, pre, n, pre0, edges, [&](uint32_t u, uint64_t j) {
        (void)u;
        uint32_t v = adj[j];
        if (depth[v] == HF_BFS_UNSEEN &&
            atomicCAS(&depth[v], HF_BFS_UNSEEN, next) == HF_BFS_UNSEEN) {
            hf_cuda_shared_record_claimed(rec, v);
            mine += offsets[v + 1] - offsets[v];
        }
    });
    if (found)
        add_found(found, mine);
}

/* One thread per vertex of [begin, end): bottom-up. */
static __global__ void pull_kernel(const uint64_t *offsets, const uint32_t *adj, int32_t *depth,
                                   struct hf_cuda_recorder rec, uint32_t begin, uint32_t end,
                                   int32_t level, unsigned long long *found)
{
    uint32_t v = begin + blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long mine = 0;
    if (v < end && depth[v] == HF_BFS_UNSEEN)
        for (uint64_t j = offsets[v]; j < offsets[v + 1]; j++)
            if (depth[adj[j]] == level) {
                depth[v] = level + 1;
                hf_cuda_shared_record_claimed(rec, v);
                mine = offsets[v + 1] - offsets[v];
                break;
            }
    if (found) /* blocks of 256: whole warps */
        add_found(found, mine);
}

/* The degrees of the frontier list[lo, lo + n), and a 0 after them: the
 * input of the exclusive scan that gives the push's prefix sums. */
static __global__ void degrees_kernel(const uint64_t *offsets, const uint32_t *front, uint32_t n,
                                      uint64_t *deg)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n)
        deg[k] = offsets[front[k] + 1] - offsets[front[k]];
    else if (k == n)
        deg[k] = 0;
}

#define FUSE_LANES 4 /* threads per frontier vertex in the fused levels */

/* Small levels on the GPU alone (see DESIGN), from the frontier in *st,
 * until a level has more than max_edges edges or finds nothing; then *st
 * holds the frontier it stopped at. */
static __global__ void fused_kernel(const uint64_t *offsets, const uint32_t *adj, int32_t *depth,
                                    struct hf_cuda_recorder rec, struct search_state *st,
                                    int32_t level, unsigned long long max_edges, int max_levels)
{
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    unsigned long long tid = grid.thread_rank(), nthreads = grid.size();
    unsigned long long lo = st->lo, hi = st->hi, edges = st->edges, expanded = 0;
    int it = 0;
    for (; it < max_levels; it++, level++) {
        if (hi == lo || edges > max_edges)
            break; /* nothing found, or a level for the host (the same test in every thread) */
        unsigned long long *found = &st->found[it % 3], *finds = &st->finds[it % 3];
        if (tid == 0)
            st->found[(it + 1) % 3] = st->finds[(it + 1) % 3] = 0;
        unsigned long long mine = 0, mine_n = 0;
        /* FUSE_LANES threads per vertex, one per edge: a level is a chain of
         * dependent memory accesses, and a thread walking its vertex's edges
         * one after another would repeat the chain per edge. */
        for (unsigned long long k = lo + tid / FUSE_LANES; k < hi; k += nthreads / FUSE_LANES) {
            uint32_t u = rec.list[k];
            for (uint64_t j = offsets[u] + tid % FUSE_LANES; j < offsets[u + 1]; j += FUSE_LANES) {
                uint32_t v = adj[j];
                if (depth[v] == HF_BFS_UNSEEN &&
                    atomicCAS(&depth[v], HF_BFS_UNSEEN, level + 1) == HF_BFS_UNSEEN) {
                    hf_cuda_shared_record_claimed(rec, v); /* v is claimed once: by the CAS */
                    mine += offsets[v + 1] - offsets[v];
                    mine_n++;
                }
            }
        }
        add_found(found, mine);
        add_found(finds, mine_n);
        grid.sync(); /* the level is done: its finds and their degrees are visible */
        expanded += edges;
        lo = hi;
        hi = lo + *(volatile unsigned long long *)finds;
        edges = *(volatile unsigned long long *)found;
    }
    if (tid == 0) {
        st->lo = lo, st->hi = hi, st->edges = edges;
        st->expanded = expanded, st->levels = (unsigned long long)it;
    }
}

/* The fused kernel's launch shape on this GPU (0 blocks: it cannot be
 * co-resident, and the host runs every level). */
static int fused_blocks(struct hf_cuda *gpu, unsigned *blocks)
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
    /* Two blocks of 256 per multiprocessor: on one H100, road BFS levels took
     * 20 us at that, 23-24 us at 1 x 256 or 1 x 1024 (9edd91b:bench/NOTES.md). */
    *blocks = blocks_per_sm < 1 ? 0 : (unsigned)(sms * (blocks_per_sm < 2 ? blocks_per_sm : 2));
    return 0;
}

/* What the host keeps of a search on the GPU between levels. */
struct search {
    struct hf_bfs *b;
    struct hf_cuda *gpu;
    cudaStream_t s;
    const uint64_t *offsets;
    const uint32_t *adj;
    int32_t *depth;
    struct hf_cuda_recorder rec;
    struct search_state *st;
    struct search_state h;   /* the last read-back */
    int32_t level;           /* depth of the frontier [h.lo, h.hi) */
    uint64_t unexplored;     /* Beamer's m_u */
    int pulling;
    double more;             /* work of the levels after the round's first (bfs.c's unit) */
    uint64_t *deg, *pre;     /* a push level's degrees and prefix sums (nv + 1 each) */
    void *scan_tmp;
    size_t scan_bytes;
};

static int read_back(struct search *q)
{
    int rc = hf_cuda_check(q->gpu, cudaMemcpyAsync(&q->h, q->st, sizeof q->h,
                                                   cudaMemcpyDeviceToHost, q->s),
                           "bfs search state");
    return rc ? rc : hf_cuda_check(q->gpu, cudaStreamSynchronize(q->s), "bfs search level");
}

/* One push level from the list segment, load-balanced by edges; 1 when the
 * arena has no room for its prefix sums (the host takes over). */
static int push_level(struct search *q)
{
    uint32_t n = (uint32_t)(q->h.hi - q->h.lo);
    size_t nv = q->b->ga.g.nv;
    if (!q->deg) {
        if (cub::DeviceScan::ExclusiveSum(NULL, q->scan_bytes, (uint64_t *)NULL,
                                          (uint64_t *)NULL, nv + 1) != cudaSuccess)
            return hf_cuda_check(q->gpu, cudaGetLastError(), "bfs scan size");
        q->deg = (uint64_t *)hf_cuda_arena_alloc(q->gpu, (nv + 1) * sizeof *q->deg);
        q->pre = (uint64_t *)hf_cuda_arena_alloc(q->gpu, (nv + 1) * sizeof *q->pre);
        q->scan_tmp = hf_cuda_arena_alloc(q->gpu, q->scan_bytes);
        if (!q->deg || !q->pre || !q->scan_tmp)
            return 1;
    }
    const uint32_t *front = q->rec.list + q->h.lo;
    degrees_kernel<<<(n + 1 + 255) / 256, 256, 0, q->s>>>(q->offsets, front, n, q->deg);
    size_t bytes = q->scan_bytes;
    int rc = hf_cuda_check(q->gpu, cudaGetLastError(), "bfs degrees");
    if (!rc)
        rc = hf_cuda_check(q->gpu, cub::DeviceScan::ExclusiveSum(q->scan_tmp, bytes, q->deg,
                                                                 q->pre, n + 1, q->s),
                           "bfs degree scan");
    if (rc)
        return rc;
    push_kernel<<<hf_frontier_blocks(q->h.edges), 256, 0, q->s>>>(
        q->offsets, q->adj, q->depth, q->rec, front, q->pre, n, 0, q->h.edges, q->level + 1,
        &q->st->found[0]);
    return hf_cuda_check(q->gpu, cudaGetLastError(), "bfs push kernel");
}

/* Runs the levels after this round's first on the GPU (see DESIGN); the
 * host's next_load then takes the deepest level among the changes, and if
 * the search ended here (b->searched_all) ends the run. */
static int search_on(struct search *q)
{
    struct hf_bfs *b = q->b;
    unsigned blocks = 0;
    int rc = fused_blocks(q->gpu, &blocks);
    for (int fused_last = 0, have_state = 0; !rc;) {
        if (!have_state && (rc = read_back(q)))
            break;
        have_state = 0;
        uint64_t n_f = q->h.hi - q->h.lo, m_f = q->h.edges;
        if (n_f == 0) {
            b->searched_all = 1;
            break;
        }
        /* Small levels push, as Beamer's rule would say but near a road
         * graph's end, where few edges are left and a pull over every vertex
         * a level would cost more than the push. */
        if (m_f <= (uint64_t)b->fuse_edges && blocks && !fused_last) {
            unsigned long long max_edges = (unsigned long long)b->fuse_edges;
            int max_levels = 1 << 20;
            void *args[] = {(void *)&q->offsets, (void *)&q->adj,   (void *)&q->depth,
                            (void *)&q->rec,     (void *)&q->st,    (void *)&q->level,
                            (void *)&max_edges,  (void *)&max_levels};
            rc = hf_cuda_check(q->gpu, cudaLaunchCooperativeKernel((const void *)fused_kernel,
                                                                   dim3(blocks), dim3(256), args,
                                                                   0, q->s),
                               "bfs fused kernel");
            if (!rc)
                rc = hf_cuda_check(q->gpu, cudaMemsetAsync(q->st->found, 0,
                                                           sizeof q->st->found +
                                                               sizeof q->st->finds, q->s),
                                   "bfs fused reset");
            if (!rc && !(rc = read_back(q))) {
                q->level += (int32_t)q->h.levels;
                q->more += (double)q->h.expanded;
                q->unexplored -= q->h.expanded < q->unexplored ? q->h.expanded : q->unexplored;
            }
            fused_last = 1; /* it stopped at a big level, or at the end */
            have_state = 1; /* what it stopped at is read back already */
            continue;
        }
        fused_last = 0;
        if (!b->fuse_search)
            break; /* the host runs the bigger levels */
        int pull = hf__bfs_choose_pull(b, q->pulling, m_f, n_f, q->unexplored);
        q->pulling = pull;
        q->unexplored -= m_f < q->unexplored ? m_f : q->unexplored;
        if (pull) {
            uint32_t nv = (uint32_t)b->ga.g.nv;
            pull_kernel<<<(nv + 255) / 256, 256, 0, q->s>>>(q->offsets, q->adj, q->depth, q->rec,
                                                            0, nv, q->level, &q->st->found[0]);
            rc = hf_cuda_check(q->gpu, cudaGetLastError(), "bfs pull kernel");
        } else if ((rc = push_level(q)) == 1) {
            return 0; /* no room: the host runs the next levels */
        }
        if (rc)
            break;
        /* The level's work as next_load would declare it. */
        q->more += pull ? (double)b->ga.g.ne + (double)b->ga.g.nv : (double)m_f + (double)n_f;
        search_next<<<1, 1, 0, q->s>>>(q->rec, q->st);
        rc = hf_cuda_check(q->gpu, cudaGetLastError(), "bfs search next");
        q->level++;
    }
    return rc;
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
                                                    (uint32_t)p->end, b->level, NULL);
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
    struct search_state *st = NULL;
    if (fuse && (st = (struct search_state *)hf_cuda_arena_alloc(gpu, sizeof *st))) {
        search_start<<<1, 1, 0, s>>>(rec, st);
        if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "bfs search start")))
            return rc;
    }
    push_kernel<<<hf_frontier_blocks(edges), 256, 0, s>>>(
        offsets, adj, depth, rec, d_front, d_pre, (uint32_t)(p->end - p->begin),
        b->fr.pre[p->begin], edges, b->level + 1, st ? &st->found[0] : NULL);
    if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "bfs push kernel")) || !st)
        return rc;
    search_next<<<1, 1, 0, s>>>(rec, st);
    if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "bfs search next")))
        return rc;
    struct search q;
    memset(&q, 0, sizeof q);
    q.b = b, q.gpu = gpu, q.s = s, q.offsets = offsets, q.adj = adj, q.depth = depth;
    q.rec = rec, q.st = st;
    q.level = b->level + 1;
    q.unexplored = b->unexplored_edges;
    rc = search_on(&q);
    if (!rc)
        rc = hf_cuda_check(gpu, cudaStreamSynchronize(s), "bfs search");
    if (!rc) /* the levels it ran past the round's: its rates count them (hetfarm.h) */
        hf_bundle_did_more(p, q.more);
    return rc;
}
