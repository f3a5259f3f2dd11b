/* partition_cuda.cu - the partitioner's rounds on a GPU: heavy-edge matching,
 * conflict resolution and contraction (partition_coarsen.c's logic, spread
 * over GPU threads), the level's residency, and the entry point that also
 * runs refinement (partition_refine_cuda.cu).
 *
 * DESIGN
 * ------
 * Residency. A level's CSR (offsets, adj, edge and vertex weights) is made
 * during the run, so it cannot be READONLY shared data. Each GPU keeps its
 * own copies in a `struct part_gpu` (c->gpu[device index]): the first piece
 * of a level on a GPU (c->level_gen differs from the copy's) allocates the
 * level's arrays with cudaMalloc, outside the arena, and fills them on the
 * copy-in stream, unless the GPU kept that level's CSR since its coarsening
 * (g->csr[level], matched by hf_plevel.made); every later piece of that
 * level's rounds moves only what changed.
 *
 * Where a coarse level comes from. hf__part_pack has just copied its lists
 * out of the contraction's slots (c->tadj, c->tew) into freshly malloc'd,
 * pageable arrays, and uploads from pageable memory run at 4-10 GB/s: on
 * rgg 2^20 (CPU 16 cores + 1 H200) the first MATCH round of a level waited
 * for the GPU's upload, 8.5 ms on level 1 where the CPU team needed 2.7 ms
 * (level 2: 5.0 against 1.3, level 3: 3.2 against 0.9), and with the GPU
 * rgg's match rounds took 44 ms against 17 on the CPU alone. The slots,
 * their starts (ub) and the lists' lengths (cdeg) are pinned (setup) and
 * hold the level's lists until the next contraction rewrites them
 * (c->slots_level names the level), so a coarse level comes from there at
 * the link's speed (~50 GB/s): the slot span (ub[nv] entries, the finer
 * level's arcs: each coarse vertex has its members' degrees, so the gaps
 * that merging left are carried too), ub and cdeg go into the piece's
 * arena; on the copy-in stream a CUB scan of cdeg makes the offsets and a
 * compaction kernel moves each vertex's list from ub[v] to its offset,
 * byte for byte what pack made. Only the vertex weights (8 bytes a vertex)
 * still come from pageable memory. Nothing writes the slots, ub or cdeg
 * from pack until hf__part_build_cmap, which clears slots_level between
 * rounds, when every piece that read them has finished. The arena, not a
 * cudaMalloc, holds the slots because they are needed only until the
 * compaction ends, inside the piece: the kept levels lose no device memory
 * to them. The packed arrays are uploaded as before for level 0 (the
 * input: no contraction made it), for a level whose slots were rewritten
 * since (a GPU's first piece of it in its contract round; a dropped level
 * uploaded again for its refinement), for slots the system refused to pin
 * (pageable, they would carry more bytes than the packed level as slowly),
 * and when the slots would take more than half of the arena half left. The
 * build stays in the GPU's first piece rather than being enqueued by
 * next_load right after pack, where it would overlap the host's glue: a
 * GPU's streams and its struct hf_cuda belong to its own host thread,
 * inside run_cuda, and next_load runs on the engine's.
 *
 * Every level's CSR stays until the measure ends (hf__part_cuda_release,
 * from the engine's thread between rounds), so a refinement round uploads
 * only the parts; the peak is the coarsening's anyway, and cudaFree waits
 * for the device (freeing each level after its refinement made a
 * 24M-vertex grid's uncoarsening 0.15-0.2 s slower on an H100). A GPU
 * without room for a level drops the other levels it keeps and tries once
 * more. The rounds' scratch (match, cmap, ...) is made once, for the first
 * level.
 *
 * Per round, the first piece on a GPU (c->round_id differs) uploads the
 * round's host inputs: match (MATCH, RESOLVE, CONTRACT) and, for CONTRACT,
 * cmap, the coarse vertices' leaders and their list slots (ub); for REFINE
 * the parts and part weights. A piece
 * copies its results back into the host arrays over its own range, as an
 * OWNED shared array would: match[begin, end) after MATCH and RESOLVE; the
 * coarse lists' slots, degrees and weights after CONTRACT. A MATCH piece
 * also pairs vertices of its range with vertices outside it; those claims
 * (the partner's side of a pair) go back as a list that a host function on
 * the copy-out stream writes into the host array, as a CPU thread's
 * STORE(&match[best], u) would, so pairs across pieces and bundles survive.
 *
 * Why that is right with a CPU team writing the host arrays at the same
 * time. MATCH: the GPU matches on its copy (a snapshot of the host's, plus
 * its own earlier pieces of the round), so it may pair u with a v the CPU
 * took, and its writes may overwrite a claim the CPU made. Either way a
 * pair that is not mutual in the host array stays not mutual, and RESOLVE,
 * which always follows, drops it: the argument of partition_coarsen.c's
 * DESIGN (mutual pairs are never touched, a vertex only rewrites its own
 * entry) holds for the host array whatever the interleaving, so the
 * matching is valid. RESOLVE: entries only change from a non-mutual partner
 * to NONE, so a snapshot taken mid-round judges every pair as the host
 * would. The GPU counts its unmatched vertices and a host function adds
 * them to c->unmatched once they have arrived. CONTRACT reads only the
 * finished map and writes disjoint slots.
 *
 * Passes. A CPU thread claims one vertex after another and sees the claims
 * before it; thousands of GPU threads claim at once, so many proposals
 * collide (on a 300x200 grid one pass matched 74% of the vertices where the
 * CPU matched 90%, H100). A MATCH piece therefore makes MATCH_PASSES passes,
 * each followed by a resolve of its range on the GPU's copy, so the losers
 * of a pass propose again among the vertices still free: four passes
 * matched 89.8% of that grid (the CPU: 90.0%).
 *
 * Kernels. MATCH: G lanes (a cooperative-groups tile) share a vertex u of
 * the scrambled visiting order the CPU uses; each lane scans every G-th arc
 * exactly as the CPU loop does and the tile takes the lexicographic maximum
 * of (edge weight, pair hash), which is what the CPU's sequential rule
 * keeps. Lane 0 writes the claim. RESOLVE: a thread per vertex, the count
 * by warp ballot. CONTRACT: G lanes per coarse vertex merge its members'
 * mapped neighbours in an open-addressing table of twice its slots (keys by
 * atomicCAS, weights by 64-bit atomicAdd, in the arena), then pack the
 * table into its slots with tile ballots. The lists hold the same
 * neighbours and summed weights as the CPU's, in another order (the CPU's
 * are not in id order either). COMPACT (a coarse level built from the
 * slots): G lanes per coarse vertex copy its list, after a thread per
 * vertex widened cdeg to 64 bits for the offsets' scan (a level's arcs
 * may pass 2^32). G is 4 to 32, from the piece's (for COMPACT, the
 * level's) mean degree.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cooperative_groups.h>
#include <cub/device/device_scan.cuh>

#include "partition_gpu.cuh"

namespace cg = cooperative_groups;

/* Matching passes a MATCH piece makes over its vertices (see DESIGN). */
#define MATCH_PASSES 4

/* What a RESOLVE piece's host function needs: the count (copied into the
 * slot's pinned staging buffer) and where to add it. */
struct part_count {
    unsigned long long count;
    uint64_t *target;
};

/* What a MATCH piece's host function needs, at the head of the slot's
 * staging buffer: the host's match array, then what the device copies in
 * from `count` on: how many claims the piece made on vertices outside its
 * range, and those claims as (vertex, partner) pairs after the header. */
struct part_claims {
    uint32_t *match;
    unsigned long long unused;
    unsigned long long count; /* the device block starts here */
    unsigned long long pad;
};
#define CLAIMS_HEAD (sizeof(struct part_claims) - offsetof(struct part_claims, count))

/* ---- kernels ------------------------------------------------------------ */

/* Heavy-edge proposals for the n vertices begin + (i * step mod n). */
template <int G>
static __global__ void match_kernel(const uint64_t *off, const uint32_t *adj, const int64_t *ew,
                                    const int64_t *vw, uint32_t *match, uint64_t begin,
                                    uint64_t n, uint64_t step, uint64_t salt, int64_t maxv)
{
    cg::thread_block_tile<G> tile = cg::tiled_partition<G>(cg::this_thread_block());
    uint64_t i = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / G;
    if (i >= n)
        return; /* the whole tile: i is the same for its lanes */
    uint32_t u = (uint32_t)(begin + (i * step) % n);
    unsigned lane = tile.thread_rank();
    /* One read decides for the whole tile, as one CPU thread reads once. */
    if (tile.shfl(lane == 0 ? vload(&match[u]) : 0u, 0) != HF_PART_NONE)
        return;
    int64_t wu = weight_of(vw, u), best_w = -1;
    uint64_t best_h = 0;
    uint32_t best = HF_PART_NONE;
    for (uint64_t j = off[u] + lane; j < off[u + 1]; j += G) {
        uint32_t v = adj[j];
        if (v == u || vload(&match[v]) != HF_PART_NONE || wu + weight_of(vw, v) > maxv)
            continue;
        int64_t w = weight_of(ew, j);
        if (w < best_w)
            continue;
        uint64_t h = hf__part_pair_hash(salt, u, v);
        if (w > best_w || h > best_h) {
            best_w = w;
            best_h = h;
            best = v;
        }
    }
    for (int d = G / 2; d > 0; d /= 2) {
        int64_t ow = tile.shfl_down(best_w, d);
        uint64_t oh = tile.shfl_down(best_h, d);
        uint32_t ob = tile.shfl_down(best, d);
        if (ow > best_w || (ow == best_w && oh > best_h)) {
            best_w = ow;
            best_h = oh;
            best = ob;
        }
    }
    if (lane == 0 && best != HF_PART_NONE) {
        vstore(&match[u], best);
        vstore(&match[best], u);
    }
}

/* Keeps only mutual pairs in [begin, end); adds the unmatched to *left
 * (NULL: counts nothing). */
static __global__ void resolve_kernel(uint32_t *match, uint64_t begin, uint64_t end,
                                      unsigned long long *left)
{
    uint64_t u = begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int single = 0;
    if (u < end) {
        uint32_t m = vload(&match[u]);
        if (m != HF_PART_NONE && vload(&match[m]) != (uint32_t)u) {
            vstore(&match[u], HF_PART_NONE);
            m = HF_PART_NONE;
        }
        single = m == HF_PART_NONE;
    }
    /* Every lane of the warp gets here (no early return): a full ballot. */
    unsigned n = __popc(__ballot_sync(0xffffffffu, single));
    if (left && (threadIdx.x & 31u) == 0 && n)
        atomicAdd(left, (unsigned long long)n);
}

/* The mutual pairs of [begin, end) whose partner lies outside it, as
 * (partner, vertex) pairs for the host: its copy-back covers only the range. */
static __global__ void claims_kernel(const uint32_t *match, uint64_t begin, uint64_t end,
                                     uint32_t *pairs, unsigned long long *count)
{
    uint64_t u = begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= end)
        return;
    uint32_t m = match[u];
    if (m == HF_PART_NONE || (m >= begin && m < end) || match[m] != (uint32_t)u)
        return;
    unsigned long long at = atomicAdd(count, 1ull);
    pairs[2 * at] = m;
    pairs[2 * at + 1] = (uint32_t)u;
}

/* The lists of coarse vertices [begin, end): slots are counted from
 * ub[begin]; key/tw hold two table entries per slot. */
template <int G>
static __global__ void contract_kernel(const uint64_t *off, const uint32_t *adj,
                                       const int64_t *ew, const int64_t *vw,
                                       const uint32_t *match, const uint32_t *cmap,
                                       const uint32_t *leader, const uint64_t *ub, uint64_t begin,
                                       uint64_t end, uint32_t *key, int64_t *tw,
                                       uint32_t *out_adj, int64_t *out_ew, uint32_t *cdeg,
                                       int64_t *cvw)
{
    cg::thread_block_tile<G> tile = cg::tiled_partition<G>(cg::this_thread_block());
    uint64_t cv = begin + ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / G;
    if (cv >= end)
        return; /* the whole tile */
    unsigned lane = tile.thread_rank();
    uint64_t s0 = ub[cv] - ub[begin], size = 2 * (ub[cv + 1] - ub[cv]);
    uint32_t *k = key + 2 * s0;
    int64_t *w = tw + 2 * s0;
    for (uint64_t i = lane; i < size; i += G) {
        k[i] = HF_PART_NONE;
        w[i] = 0;
    }
    tile.sync();
    uint32_t u = leader[cv], m = match[u];
    for (int side = 0; side < (m != u ? 2 : 1); side++) {
        uint32_t x = side ? m : u;
        for (uint64_t j = off[x] + lane; j < off[x + 1]; j += G) {
            uint32_t y = cmap[adj[j]];
            if (y == (uint32_t)cv)
                continue; /* the pair's own edge, or a self-loop */
            uint64_t h = (uint64_t)(y * 2654435761u) % size;
            for (;;) {
                uint32_t old = atomicCAS(&k[h], HF_PART_NONE, y);
                if (old == HF_PART_NONE || old == y) {
                    atomicAdd((unsigned long long *)&w[h], (unsigned long long)weight_of(ew, j));
                    break;
                }
                h = h + 1 == size ? 0 : h + 1;
            }
        }
    }
    tile.sync();
    uint32_t n = 0;
    for (uint64_t i0 = 0; i0 < size; i0 += G) {
        uint64_t i = i0 + lane;
        int has = i < size && k[i] != HF_PART_NONE;
        unsigned ballot = tile.ballot(has);
        if (has) {
            uint32_t at = n + __popc(ballot & ((1u << lane) - 1u));
            out_adj[s0 + at] = k[i];
            out_ew[s0 + at] = w[i];
        }
        n += __popc(ballot);
    }
    if (lane == 0) {
        cdeg[cv - begin] = n;
        cvw[cv - begin] = weight_of(vw, u) + (m != u ? weight_of(vw, m) : 0);
    }
}

/* The lists' lengths widened for the offsets' scan: deg[v] = cdeg[v] for
 * v < nv, deg[nv] = 0 (the scan's last entry is then the arcs). */
static __global__ void widen_kernel(const uint32_t *cdeg, uint64_t nv, uint64_t *deg)
{
    uint64_t v = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v <= nv)
        deg[v] = v < nv ? cdeg[v] : 0;
}

/* A coarse level's lists from the contraction's slots (G lanes a vertex):
 * vertex v's list moves from slot ub[v] to off[v], its length off[v + 1] -
 * off[v] (its cdeg), as hf__part_pack moves it on the host. ew NULL: no
 * weights to move. */
template <int G>
static __global__ void compact_kernel(const uint64_t *ub, const uint64_t *off,
                                      const uint32_t *slot_adj, const int64_t *slot_ew, uint64_t nv,
                                      uint32_t *adj, int64_t *ew)
{
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, v = t / G;
    if (v >= nv)
        return;
    uint64_t from = ub[v], to = off[v], n = off[v + 1] - to;
    for (uint64_t i = t % G; i < n; i += G) {
        adj[to + i] = slot_adj[from + i];
        if (ew)
            ew[to + i] = slot_ew[from + i];
    }
}

/* ---- launchers ---------------------------------------------------------- */

/* Lanes per vertex from the mean degree of the piece's vertices. */
static int lanes_for(double mean_degree)
{
    return mean_degree < 6 ? 4 : mean_degree < 12 ? 8 : mean_degree < 24 ? 16 : 32;
}

template <int G>
static void launch_match(const struct part_gpu *g, uint64_t begin, uint64_t n, uint64_t step,
                         uint64_t salt, int64_t maxv, cudaStream_t s)
{
    const struct part_gpu_csr *lv = g->lvl;
    match_kernel<G><<<blocks_for(n * G), BLOCK, 0, s>>>(
        lv->d_offsets, lv->d_adj, lv->d_ew, lv->d_vw, g->d_match, begin, n, step, salt, maxv);
}

struct contract_out {
    uint32_t *key, *adj, *cdeg;
    int64_t *tw, *ew, *cvw;
};

template <int G>
static void launch_contract(const struct part_gpu *g, uint64_t begin, uint64_t end,
                            const struct contract_out *o, cudaStream_t s)
{
    const struct part_gpu_csr *lv = g->lvl;
    contract_kernel<G><<<blocks_for((end - begin) * G), BLOCK, 0, s>>>(
        lv->d_offsets, lv->d_adj, lv->d_ew, lv->d_vw, g->d_match, g->d_cmap, g->d_leader, g->d_ub,
        begin, end, o->key, o->tw, o->adj, o->ew, o->cdeg, o->cvw);
}

/* The slots' copy in the arena: what compact_kernel reads, and the
 * lengths the level's offsets are scanned from. */
struct slot_copy {
    uint64_t *ub;   /* nv + 1 */
    uint32_t *cdeg; /* nv */
    uint64_t *deg;  /* nv + 1: cdeg widened */
    void *scan_tmp; /* CUB's scratch for the scan */
    size_t scan_bytes;
    uint32_t *adj; /* the slot span, ub[nv] */
    int64_t *ew;   /* the same, or NULL */
};

template <int G>
static void launch_compact(const struct slot_copy *sc, const struct part_gpu_csr *k, uint64_t nv,
                           cudaStream_t s)
{
    compact_kernel<G><<<blocks_for(nv * G), BLOCK, 0, s>>>(sc->ub, k->d_offsets, sc->adj, sc->ew,
                                                           nv, k->d_adj, k->d_ew);
}

/* ---- residency ---------------------------------------------------------- */

/* Frees the scratch of the levels' rounds and forgets the level held (its
 * CSR stays in g->csr). */
static void free_scratch(struct part_gpu *g)
{
    void *p[] = {g->d_match, g->d_cmap, g->d_leader, g->d_ub, g->d_part, g->d_pw};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        if (p[i])
            (void)cudaFree(p[i]);
    g->d_match = g->d_cmap = g->d_leader = g->d_part = NULL;
    g->d_ub = NULL;
    g->d_pw = NULL;
    g->scratch_nv = 0;
    g->level_gen = 0;
}

static void free_csr(struct part_gpu_csr *k)
{
    void *p[] = {k->d_offsets, k->d_adj, k->d_ew, k->d_vw, k->d_hubs};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        if (p[i])
            (void)cudaFree(p[i]);
    free(k->hubs);
    memset(k, 0, sizeof *k);
}

/* Everything this GPU holds. */
static void free_level(struct part_gpu *g)
{
    free_scratch(g);
    for (int l = 0; l < HF_PART_MAX_LEVELS; l++)
        free_csr(&g->csr[l]);
}

/* cudaMalloc of at least one aligned block (a level may have no edge). */
static int dev_alloc(struct hf_cuda *gpu, void **p, size_t bytes, const char *what)
{
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 256);
    if (e == cudaSuccess)
        return 0;
    *p = NULL;
    (void)cudaGetLastError();
    return hf_fail(HF_EDEVICE, "partition: %s: cannot hold %s (%zu bytes) for the level: %s",
                   hf_cuda_name(gpu), what, bytes, cudaGetErrorString(e));
}

static int upload(struct hf_cuda *gpu, void *d, const void *h, size_t bytes, const char *what)
{
    if (!bytes)
        return 0;
    return hf_cuda_check(gpu,
                         cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice,
                                         hf_cuda_copy_in_stream(gpu)),
                         what);
}

/* Lists the level's hubs (vertices of more than HUB_DEGREE arcs) on the
 * host and the GPU: one scan of the offsets a level. */
static int hold_hubs(const struct hf_plevel *l, struct part_gpu_csr *k, struct hf_cuda *gpu)
{
    uint64_t n = 0;
    for (uint64_t v = 0; v < l->nv; v++)
        n += l->offsets[v + 1] - l->offsets[v] > HUB_DEGREE;
    if (!n)
        return 0;
    if (!(k->hubs = (uint32_t *)malloc(n * sizeof *k->hubs)))
        return hf_fail(HF_ENOMEM, "partition: out of memory for %llu hubs",
                       (unsigned long long)n);
    for (uint64_t v = 0; v < l->nv; v++)
        if (l->offsets[v + 1] - l->offsets[v] > HUB_DEGREE)
            k->hubs[k->nhubs++] = (uint32_t)v;
    int rc = dev_alloc(gpu, (void **)&k->d_hubs, n * sizeof(uint32_t), "hubs");
    return rc ? rc : upload(gpu, k->d_hubs, k->hubs, n * sizeof(uint32_t), "hubs");
}

/* Whether the slots hold level c->cur's lists (never level 0's: the input
 * is no contraction's) and sit in pinned memory, all four of them: copies
 * from them run at the link's speed, while from pageable memory they would
 * move more bytes than the packed level, as slowly. */
static int slots_usable(const struct hf_partition *c, const struct hf_plevel *l)
{
    return c->cur > 0 && c->slots_level == c->cur && c->nc == l->nv && c->ub && c->cdeg &&
           hf_host_pinned(c->tadj) && hf_host_pinned(c->tew) && hf_host_pinned(c->ub) &&
           hf_host_pinned(c->cdeg);
}

/* Room in the piece's arena for the slots of level c->cur (ub, cdeg, its
 * widened copy and the scan's scratch, then the slot span's lists and
 * weights) when slots_usable says so and they take at most half of what
 * the arena half has left: the piece's own scratch comes after. Returns
 * whether it made that room (in sc); if not, the level comes from its
 * packed arrays. */
static int slot_room(const struct hf_partition *c, const struct hf_plevel *l, struct hf_cuda *gpu,
                     struct slot_copy *sc)
{
    if (!slots_usable(c, l))
        return 0;
    uint64_t nv = l->nv, span = c->ub[nv];
    sc->scan_bytes = 0;
    if (cub::DeviceScan::ExclusiveSum(NULL, sc->scan_bytes, (uint64_t *)NULL, (uint64_t *)NULL,
                                      nv + 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    size_t ub_b = (nv + 1) * sizeof(uint64_t), cdeg_b = (nv ? nv : 1) * sizeof(uint32_t),
           adj_b = (span ? span : 1) * sizeof(uint32_t),
           ew_b = l->ew ? (span ? span : 1) * sizeof(int64_t) : 0;
    /* Each allocation rounds up to 256 bytes. */
    size_t want = 6 * 256 + 2 * ub_b + cdeg_b + sc->scan_bytes + adj_b + ew_b;
    if (want > hf_cuda_arena_free(gpu) / 2)
        return 0;
    sc->ub = (uint64_t *)hf_cuda_arena_alloc(gpu, ub_b);
    sc->cdeg = (uint32_t *)hf_cuda_arena_alloc(gpu, cdeg_b);
    sc->deg = (uint64_t *)hf_cuda_arena_alloc(gpu, ub_b);
    sc->scan_tmp = hf_cuda_arena_alloc(gpu, sc->scan_bytes ? sc->scan_bytes : 1);
    sc->adj = (uint32_t *)hf_cuda_arena_alloc(gpu, adj_b);
    sc->ew = l->ew ? (int64_t *)hf_cuda_arena_alloc(gpu, ew_b) : NULL;
    return sc->ub && sc->cdeg && sc->deg && sc->scan_tmp && sc->adj && (sc->ew || !l->ew);
}

/* Builds level c->cur's offsets and lists in k from the contraction's
 * slots, on the copy-in stream before the round's inputs (the piece's
 * kernels wait for that stream, so they find the level whole): uploads
 * ub, cdeg and the slot span whole (gaps included: a coarse vertex's slots
 * are its members' degrees, its list what is left after merging), scans
 * cdeg into the offsets, as hf__part_pack does, and compacts the lists. */
static int from_slots(const struct hf_partition *c, const struct hf_plevel *l,
                      struct part_gpu_csr *k, struct slot_copy *sc, struct hf_cuda *gpu)
{
    uint64_t nv = l->nv, span = c->ub[nv];
    cudaStream_t s = hf_cuda_copy_in_stream(gpu);
    int rc = upload(gpu, sc->ub, c->ub, (nv + 1) * sizeof(uint64_t), "list slots");
    if (!rc)
        rc = upload(gpu, sc->cdeg, c->cdeg, nv * sizeof(uint32_t), "list lengths");
    if (!rc)
        rc = upload(gpu, sc->adj, c->tadj, span * sizeof(uint32_t), "slotted lists");
    if (!rc && l->ew)
        rc = upload(gpu, sc->ew, c->tew, span * sizeof(int64_t), "slotted weights");
    if (rc)
        return rc;
    widen_kernel<<<blocks_for(nv + 1), BLOCK, 0, s>>>(sc->cdeg, nv, sc->deg);
    if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "partition widen kernel")) ||
        (rc = hf_cuda_check(gpu,
                            cub::DeviceScan::ExclusiveSum(sc->scan_tmp, sc->scan_bytes, sc->deg,
                                                          k->d_offsets, nv + 1, s),
                            "level offsets scan")))
        return rc;
    if (!nv || !l->ne)
        return 0;
    int G = lanes_for((double)l->ne / (double)nv);
    if (G == 4)
        launch_compact<4>(sc, k, nv, s);
    else if (G == 8)
        launch_compact<8>(sc, k, nv, s);
    else if (G == 16)
        launch_compact<16>(sc, k, nv, s);
    else
        launch_compact<32>(sc, k, nv, s);
    return hf_cuda_check(gpu, cudaGetLastError(), "partition compact kernel");
}

/* Makes level c->cur's CSR in k (copy-in stream): its offsets and lists
 * from the contraction's slots where slot_room allows, else uploaded from
 * the level's arrays; its vertex weights uploaded either way. */
static int upload_csr(const struct hf_partition *c, struct part_gpu *g, struct part_gpu_csr *k,
                      struct hf_cuda *gpu)
{
    const struct hf_plevel *l = &c->lv[c->cur];
    size_t nv = l->nv, ne = l->ne;
    int rc = dev_alloc(gpu, (void **)&k->d_offsets, (nv + 1) * sizeof(uint64_t), "offsets");
    if (!rc)
        rc = dev_alloc(gpu, (void **)&k->d_adj, ne * sizeof(uint32_t), "adjacency");
    if (!rc && l->ew)
        rc = dev_alloc(gpu, (void **)&k->d_ew, ne * sizeof(int64_t), "edge weights");
    if (!rc && l->vw)
        rc = dev_alloc(gpu, (void **)&k->d_vw, nv * sizeof(int64_t), "vertex weights");
    if (!rc && l->vw)
        rc = upload(gpu, k->d_vw, l->vw, nv * sizeof(int64_t), "level vertex weights");
    struct slot_copy sc;
    if (!rc && slot_room(c, l, gpu, &sc)) {
        if (!(rc = from_slots(c, l, k, &sc, gpu)))
            g->from_slots++;
    } else if (!rc) {
        rc = upload(gpu, k->d_offsets, l->offsets, (nv + 1) * sizeof(uint64_t), "level offsets");
        if (!rc)
            rc = upload(gpu, k->d_adj, l->adj, ne * sizeof(uint32_t), "level adjacency");
        if (!rc && l->ew)
            rc = upload(gpu, k->d_ew, l->ew, ne * sizeof(int64_t), "level edge weights");
    }
    if (!rc)
        rc = hold_hubs(l, k, gpu);
    if (rc)
        free_csr(k);
    else
        k->made = l->made;
    return rc;
}

/* The scratch of a level's rounds, for levels of up to nv vertices: made
 * once, for the first (largest) level, as cudaFree waits for the device. */
static int hold_scratch(struct hf_partition *c, struct part_gpu *g, struct hf_cuda *gpu,
                        uint64_t nv)
{
    if (g->scratch_nv >= nv && g->d_match)
        return 0;
    free_scratch(g);
    int rc = dev_alloc(gpu, (void **)&g->d_match, nv * sizeof(uint32_t), "match");
    if (!rc)
        rc = dev_alloc(gpu, (void **)&g->d_cmap, nv * sizeof(uint32_t), "cmap");
    if (!rc)
        rc = dev_alloc(gpu, (void **)&g->d_leader, nv * sizeof(uint32_t), "leaders");
    if (!rc)
        rc = dev_alloc(gpu, (void **)&g->d_ub, (nv + 1) * sizeof(uint64_t), "list slots");
    if (!rc)
        rc = dev_alloc(gpu, (void **)&g->d_part, nv * sizeof(uint32_t), "parts");
    if (!rc)
        rc = dev_alloc(gpu, (void **)&g->d_pw, (size_t)c->k * sizeof(int64_t), "part weights");
    if (rc)
        free_scratch(g);
    else
        g->scratch_nv = nv;
    return rc;
}

/* Makes level c->cur resident on this GPU (copy-in stream), once a level:
 * its CSR from g->csr when this GPU kept it since the level's coarsening
 * (uploaded otherwise; when the GPU has no room, after dropping the other
 * levels it keeps), and the scratch of its rounds. */
static int hold_level(struct hf_partition *c, struct part_gpu *g, struct hf_cuda *gpu)
{
    if (g->level_gen == c->level_gen)
        return 0;
    g->level_gen = 0;
    const struct hf_plevel *l = &c->lv[c->cur];
    struct part_gpu_csr *k = &g->csr[c->cur];
    int rc = 0;
    if (!l->made || k->made != l->made) { /* made 0: a level nobody numbered */
        free_csr(k);
        if ((rc = upload_csr(c, g, k, gpu)) == HF_EDEVICE) {
            for (int o = 0; o < HF_PART_MAX_LEVELS; o++)
                if (o != c->cur)
                    free_csr(&g->csr[o]);
            hf_clear_error();
            rc = upload_csr(c, g, k, gpu);
        }
        if (rc)
            return rc;
    }
    if ((rc = hold_scratch(c, g, gpu, l->nv)))
        return rc;
    g->lvl = k;
    g->level_gen = c->level_gen;
    return 0;
}

/* Uploads the round's host inputs with this GPU's first piece of the round. */
static int hold_round(struct hf_partition *c, struct part_gpu *g, struct hf_cuda *gpu)
{
    if (g->round_id == c->round_id)
        return 0;
    const struct hf_plevel *l = &c->lv[c->cur];
    int rc;
    if (c->phase == HF_PP_REFINE || c->phase == HF_PP_MEASURE) {
        rc = upload(gpu, g->d_part, l->part, l->nv * sizeof(uint32_t), "parts");
        if (!rc && c->phase == HF_PP_REFINE)
            rc = upload(gpu, g->d_pw, c->pw, (size_t)c->k * sizeof(int64_t), "part weights");
        if (!rc)
            g->round_id = c->round_id;
        return rc;
    }
    rc = upload(gpu, g->d_match, l->match, l->nv * sizeof(uint32_t), "match");
    if (!rc && c->phase == HF_PP_CONTRACT) {
        rc = upload(gpu, g->d_cmap, l->cmap, l->nv * sizeof(uint32_t), "cmap");
        if (!rc)
            rc = upload(gpu, g->d_leader, c->leader, c->nc * sizeof(uint32_t), "leaders");
        if (!rc)
            rc = upload(gpu, g->d_ub, c->ub, (c->nc + 1) * sizeof(uint64_t), "list slots");
    }
    if (!rc)
        g->round_id = c->round_id;
    return rc;
}

/* ---- the rounds --------------------------------------------------------- */

/* Writes a MATCH piece's claims on vertices outside its range into the host
 * array, as a CPU thread's STORE(&match[best], u) would, once they have
 * arrived in the staging buffer. */
static void CUDART_CB apply_claims(void *arg)
{
    struct part_claims *pc = (struct part_claims *)arg;
    const uint32_t *pairs = (const uint32_t *)(pc + 1);
    for (unsigned long long i = 0; i < pc->count; i++)
        __atomic_store_n(&pc->match[pairs[2 * i]], pairs[2 * i + 1], __ATOMIC_RELAXED);
}

/* A region of c->claims for the claims of a MATCH piece of n vertices (its
 * head, then n pairs at most), or NULL when the room has none left (or the
 * run made none): the piece applies its claims itself then, on its
 * copy-out stream. Pieces of several GPUs reserve at once. */
static uint64_t *claims_room(struct hf_partition *c, uint64_t n)
{
    if (!c->claims)
        return NULL;
    uint64_t words = CLAIMS_HEAD / sizeof(uint64_t) + n;
    uint64_t at = __atomic_fetch_add(&c->claims_used, words, __ATOMIC_RELAXED);
    if (at + words > c->claims_cap)
        return NULL;
    uint64_t r = __atomic_fetch_add(&c->nclaim_regions, 1, __ATOMIC_RELAXED);
    if (r >= HF_PART_CLAIM_REGIONS)
        return NULL;
    c->claims[at] = 0; /* no claims until the piece's copy lands (a failed piece: none) */
    c->claim_at[r] = at;
    return c->claims + at;
}

static int run_match(struct hf_partition *c, struct part_gpu *g, uint64_t b, uint64_t e,
                     struct hf_cuda *gpu)
{
    struct hf_plevel *l = &c->lv[c->cur];
    uint64_t n = e - b, salt = hf__part_salt(c->seed, c->cur);
    uint64_t step = hf__part_visit_step(salt, n);
    size_t claims_bytes = CLAIMS_HEAD + 2 * n * sizeof(uint32_t);
    struct part_claims *pc = (struct part_claims *)hf_cuda_staging(
        gpu, offsetof(struct part_claims, count) + claims_bytes);
    char *d_claims = (char *)hf_cuda_arena_alloc(gpu, claims_bytes);
    if (!d_claims || !pc)
        return hf_fail(HF_EDEVOOM, "partition: %s: no room for the claims of %llu vertices",
                       hf_cuda_name(gpu), (unsigned long long)n);
    unsigned long long *d_count = (unsigned long long *)d_claims;
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    int rc = hf_cuda_check(gpu, cudaMemsetAsync(d_count, 0, sizeof *d_count, s), "claims count");
    int G = lanes_for((double)(l->offsets[e] - l->offsets[b]) / (double)n);
    for (int pass = 0; !rc && pass < MATCH_PASSES; pass++) {
        if (G == 4)
            launch_match<4>(g, b, n, step, salt, c->maxvwgt, s);
        else if (G == 8)
            launch_match<8>(g, b, n, step, salt, c->maxvwgt, s);
        else if (G == 16)
            launch_match<16>(g, b, n, step, salt, c->maxvwgt, s);
        else
            launch_match<32>(g, b, n, step, salt, c->maxvwgt, s);
        resolve_kernel<<<blocks_for(n), BLOCK, 0, s>>>(g->d_match, b, e, NULL);
        rc = hf_cuda_check(gpu, cudaGetLastError(), "partition match kernels");
    }
    if (rc)
        return rc;
    claims_kernel<<<blocks_for(n), BLOCK, 0, s>>>(
        g->d_match, b, e, (uint32_t *)(d_claims + CLAIMS_HEAD), d_count);
    if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "partition claims kernel")) ||
        (rc = copy_back(gpu, l->match + b, g->d_match + b, n * sizeof(uint32_t), "match")))
        return rc;
    uint64_t *room = claims_room(c, n);
    if (room) /* next_load applies them (hf__part_apply_claims) */
        return copy_back(gpu, room, d_claims, claims_bytes, "claims");
    if ((rc = copy_back(gpu, &pc->count, d_claims, claims_bytes, "claims")))
        return rc;
    pc->match = l->match;
    return hf_cuda_check(gpu, cudaLaunchHostFunc(hf_cuda_copy_out_stream(gpu), apply_claims, pc),
                         "claims host function");
}

/* Adds a RESOLVE piece's count to c->unmatched once it has arrived. */
static void CUDART_CB add_count(void *arg)
{
    struct part_count *pc = (struct part_count *)arg;
    __atomic_fetch_add(pc->target, (uint64_t)pc->count, __ATOMIC_RELAXED);
}

static int run_resolve(struct hf_partition *c, struct part_gpu *g, uint64_t b, uint64_t e,
                       struct hf_cuda *gpu)
{
    const struct hf_plevel *l = &c->lv[c->cur];
    struct part_count *pc = (struct part_count *)hf_cuda_staging(gpu, sizeof *pc);
    unsigned long long *d_left =
        (unsigned long long *)hf_cuda_arena_alloc(gpu, sizeof(unsigned long long));
    if (!d_left || !pc)
        return hf_fail(HF_EDEVOOM, "partition: %s: no room for the resolve count",
                       hf_cuda_name(gpu));
    pc->target = &c->unmatched;
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    int rc = hf_cuda_check(gpu, cudaMemsetAsync(d_left, 0, sizeof *d_left, s), "resolve count");
    if (rc)
        return rc;
    resolve_kernel<<<blocks_for(e - b), BLOCK, 0, s>>>(g->d_match, b, e, d_left);
    if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "partition resolve kernel")) ||
        (rc = copy_back(gpu, l->match + b, g->d_match + b, (e - b) * sizeof(uint32_t), "match")) ||
        (rc = copy_back(gpu, &pc->count, d_left, sizeof *d_left, "resolve count")))
        return rc;
    return hf_cuda_check(gpu, cudaLaunchHostFunc(hf_cuda_copy_out_stream(gpu), add_count, pc),
                         "resolve count host function");
}

static int run_contract(struct hf_partition *c, struct part_gpu *g, uint64_t b, uint64_t e,
                        struct hf_cuda *gpu)
{
    uint64_t slots = c->ub[e] - c->ub[b], n = e - b;
    struct contract_out o;
    o.key = (uint32_t *)hf_cuda_arena_alloc(gpu, 2 * slots * sizeof(uint32_t) + 4);
    o.tw = (int64_t *)hf_cuda_arena_alloc(gpu, 2 * slots * sizeof(int64_t) + 8);
    o.adj = (uint32_t *)hf_cuda_arena_alloc(gpu, slots * sizeof(uint32_t) + 4);
    o.ew = (int64_t *)hf_cuda_arena_alloc(gpu, slots * sizeof(int64_t) + 8);
    o.cdeg = (uint32_t *)hf_cuda_arena_alloc(gpu, n * sizeof(uint32_t));
    o.cvw = (int64_t *)hf_cuda_arena_alloc(gpu, n * sizeof(int64_t));
    if (!o.key || !o.tw || !o.adj || !o.ew || !o.cdeg || !o.cvw)
        return hf_fail(HF_EDEVOOM,
                       "partition: %s: %llu coarse vertices with %llu list slots do not fit "
                       "the arena",
                       hf_cuda_name(gpu), (unsigned long long)n, (unsigned long long)slots);
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    int G = lanes_for((double)slots / (double)n);
    if (G == 4)
        launch_contract<4>(g, b, e, &o, s);
    else if (G == 8)
        launch_contract<8>(g, b, e, &o, s);
    else if (G == 16)
        launch_contract<16>(g, b, e, &o, s);
    else
        launch_contract<32>(g, b, e, &o, s);
    uint64_t at = c->ub[b];
    int rc = hf_cuda_check(gpu, cudaGetLastError(), "partition contract kernel");
    if (!rc)
        rc = copy_back(gpu, c->tadj + at, o.adj, slots * sizeof(uint32_t), "coarse lists");
    if (!rc)
        rc = copy_back(gpu, c->tew + at, o.ew, slots * sizeof(int64_t), "coarse weights");
    if (!rc)
        rc = copy_back(gpu, c->cdeg + b, o.cdeg, n * sizeof(uint32_t), "coarse degrees");
    if (!rc)
        rc = copy_back(gpu, c->cvw + b, o.cvw, n * sizeof(int64_t), "coarse vertex weights");
    return rc;
}

extern "C" int hf__part_cuda(struct hf_partition *c, const struct hf_bundle *p,
                             struct hf_cuda *gpu)
{
    int d = hf_cuda_device_index(gpu);
    if (d < 0 || d >= c->ndev)
        return hf_fail(HF_EAPP, "partition: %s has device index %d of %d", hf_cuda_name(gpu), d,
                       c->ndev);
    struct part_gpu *g = (struct part_gpu *)c->gpu[d];
    if (!g) {
        if (!(g = (struct part_gpu *)calloc(1, sizeof *g)))
            return hf_fail(HF_ENOMEM, "partition: out of memory");
        g->ordinal = hf_cuda_ordinal(gpu);
        c->gpu[d] = g;
    }
    if (p->end <= p->begin)
        return 0;
    (void)hf_cuda_phase(gpu, HF_CUDA_COPY_IN);
    int rc = hold_level(c, g, gpu);
    if (!rc)
        rc = hold_round(c, g, gpu);
    if (rc)
        return rc;
    switch (c->phase) {
    case HF_PP_MATCH:
        return run_match(c, g, p->begin, p->end, gpu);
    case HF_PP_RESOLVE:
        return run_resolve(c, g, p->begin, p->end, gpu);
    case HF_PP_CONTRACT:
        return run_contract(c, g, p->begin, p->end, gpu);
    case HF_PP_REFINE:
        return hf__part_refine_cuda(c, g, p->begin, p->end, gpu);
    case HF_PP_MEASURE:
        return hf__part_measure_cuda(c, g, p->begin, p->end, gpu);
    default:
        return hf_fail(HF_EAPP, "partition: phase %d has no GPU kernel", (int)c->phase);
    }
}

extern "C" void hf__part_cuda_release(struct hf_partition *c)
{
    int prev = -1;
    for (int d = 0; c->gpu && d < c->ndev; d++) {
        struct part_gpu *g = (struct part_gpu *)c->gpu[d];
        if (!g)
            continue;
        if (prev < 0 && cudaGetDevice(&prev) != cudaSuccess)
            prev = 0;
        if (cudaSetDevice(g->ordinal) == cudaSuccess)
            free_level(g);
        free(g);
        c->gpu[d] = NULL;
    }
    if (prev >= 0)
        (void)cudaSetDevice(prev);
    (void)cudaGetLastError();
}
