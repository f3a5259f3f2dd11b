/* partition_refine_cuda.cu - the partitioner's uncoarsening rounds on a GPU
 * (partition_refine.c's, spread over GPU threads): the boundary refinement
 * passes and the final measure of cut and part weights.
 *
 * DESIGN
 * ------
 * Each vertex of the piece takes partition_refine.c's decision (the
 * part it is most connected to in the pass's direction, the gain, the
 * zero-gain rule) on the GPU's copy of the parts. A CPU thread sees the
 * moves made before it; GPU threads decide at once, so a proposal is kept
 * only if it still gains once every neighbour in the piece whose proposal
 * goes first (larger gain, then smaller id) has moved, and the piece makes
 * REFINE_STEPS such rounds so that moves can follow moves, as they do in a
 * CPU pass. Moves are reserved in the GPU's copy of the part weights and
 * listed; a host function on the copy-out stream then takes each listed
 * move as the CPU takes its own, reserving the weight in the host's part
 * weights (hf__part_reserve) and dropping the move when the part is full,
 * so the bound holds across all devices. From a random partition into 8
 * parts, 8 passes on the H100 cut a 300x200 grid to 43084 (the CPU code:
 * 45097); one step without the filter: 60041.
 *
 * The level's graph is resident (partition_cuda.cu); the round's parts and
 * part weights are uploaded by the GPU's first piece of the round. A
 * thread tallies up to REFINE_TABLE distinct neighbouring parts in its own
 * table and recounts part by part beyond that, so the decision is the
 * CPU's whatever the degree.
 *
 * Hubs. A vertex of more than HUB_DEGREE arcs gets a block, not a thread:
 * its arcs are tallied into a shared-memory counter per part, and the
 * block picks the part and, in the filter, sums the two connections. With
 * a thread each, a Kronecker graph's hubs (10^4-10^5 arcs at every level,
 * coarse levels included) held every pass for the slowest thread: 170-320 ms
 * a pass on levels of 8-50 thousand vertices (kron 20, 64 parts, H100),
 * where the CPU took a few ms. The decision is the thread path's, except
 * that of two parts equally connected and equally heavy the block takes
 * the lower id where the CPU takes the first it met. With more parts than
 * the counters hold (HUB_MAX_PARTS) hubs take the thread path.
 *
 * MEASURE sums its range's cut arcs and part weights (in shared memory when
 * the parts' counters fit) and a host function adds them to the run's
 * totals; level 0 stays resident from its last refinement pass to the
 * measure. Without the kernel a GPU given the measure's chunks ran the CPU
 * code on its host thread's one core, and HASS, whose rates for a GPU come
 * from its kernels, gave it 60-90% of them (road grid 2048^2: 45 ms where
 * the CPU team needed 6; with the kernel 4 ms, H100).
 */
#include <stddef.h>
#include <stdint.h>

#include <algorithm>

#include "partition_gpu.cuh"

/* What a REFINE piece's host function needs, at the head of the slot's
 * staging buffer: the partitioner, then what the device copies in from
 * `count` on: how many moves the piece proposes and the moves themselves. */
struct part_moves {
    struct hf_partition *c;
    unsigned long long unused;
    unsigned long long count; /* the device block starts here */
    unsigned long long pad;
};
#define MOVES_HEAD (sizeof(struct part_moves) - offsetof(struct part_moves, count))

/* One proposed move: vertex u to part `to`, gaining `gain` on the GPU's view. */
struct part_move {
    uint32_t u, to;
    int64_t gain;
};

/* Rounds of propose, filter and move a REFINE piece makes (see DESIGN). */
#define REFINE_STEPS 4

/* Threads of a hub's block, and the most parts its shared-memory counters
 * (8 bytes a part) hold. */
#define HUB_BLOCK 256
#define HUB_MAX_PARTS 5120

/* Distinct neighbouring parts a REFINE thread tallies in its own table;
 * beyond that (more than 64 parts around one vertex) it recounts part by
 * part. */
#define REFINE_TABLE 64

/* partition_refine.c's reserve on the GPU's copy of the part weights. */
static __device__ int reserve_dev(int64_t *pw, int64_t w, int64_t max)
{
    unsigned long long *p = (unsigned long long *)pw;
    unsigned long long old = *(volatile unsigned long long *)p;
    for (;;) {
        if ((int64_t)old + w > max)
            return 0;
        unsigned long long seen = atomicCAS(p, old, (unsigned long long)((int64_t)old + w));
        if (seen == old)
            return 1;
        old = seen;
    }
}

/* The weight from u to part p over u's arcs (the slow path: many parts). */
static __device__ int64_t conn_to(const uint64_t *off, const uint32_t *adj, const int64_t *ew,
                                  const uint32_t *part, uint32_t u, uint32_t p)
{
    int64_t c = 0;
    for (uint64_t j = off[u]; j < off[u + 1]; j++)
        if (adj[j] != u && vload(&part[adj[j]]) == p)
            c += weight_of(ew, j);
    return c;
}

/* Where u would go in this pass, by partition_refine.c's rule on the GPU's
 * copy of the parts (a thread a vertex): dest[u - begin] is the part, or
 * HF_PART_NONE to stay, and gain[u - begin] what the move gains. Nothing is
 * written to the parts yet. */
static __global__ void propose_kernel(const uint64_t *off, const uint32_t *adj, const int64_t *ew,
                                      const int64_t *vw, const uint32_t *part, const int64_t *pw,
                                      int up, uint64_t begin, uint64_t end, uint64_t hub,
                                      uint32_t *dest, int64_t *gain)
{
    uint64_t uu = begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (uu >= end || off[uu + 1] - off[uu] > hub)
        return; /* a hub is propose_hub_kernel's */
    uint32_t u = (uint32_t)uu, a = part[u];
    dest[uu - begin] = HF_PART_NONE;
    uint32_t seen[REFINE_TABLE];
    int64_t conn[REFINE_TABLE], inside = 0;
    int ns = 0, many = 0;
    for (uint64_t j = off[u]; j < off[u + 1]; j++) {
        uint32_t v = adj[j];
        if (v == u)
            continue;
        uint32_t p = part[v];
        int64_t w = weight_of(ew, j);
        if (p == a) {
            inside += w;
            continue;
        }
        int s = 0;
        while (s < ns && seen[s] != p)
            s++;
        if (s < ns) {
            conn[s] += w;
        } else if (ns < REFINE_TABLE) {
            seen[ns] = p;
            conn[ns++] = w;
        } else {
            many = 1;
        }
    }
    if (ns == 0)
        return; /* interior */
    uint32_t best = HF_PART_NONE;
    int64_t best_conn = -1;
    if (!many) {
        for (int s = 0; s < ns; s++) {
            uint32_t p = seen[s];
            if ((up && p > a) || (!up && p < a))
                if (conn[s] > best_conn || (conn[s] == best_conn && pw[p] < pw[best])) {
                    best_conn = conn[s];
                    best = p;
                }
        }
    } else { /* every part in order of first appearance, counted afresh */
        for (uint64_t j = off[u]; j < off[u + 1]; j++) {
            uint32_t p = adj[j] == u ? a : part[adj[j]];
            if (p == a || !((up && p > a) || (!up && p < a)))
                continue;
            uint64_t f = off[u];
            while (f < j && (adj[f] == u || part[adj[f]] != p))
                f++;
            if (f < j)
                continue; /* counted at its first appearance */
            int64_t cp = conn_to(off, adj, ew, part, u, p);
            if (cp > best_conn || (cp == best_conn && pw[p] < pw[best])) {
                best_conn = cp;
                best = p;
            }
        }
    }
    if (best == HF_PART_NONE)
        return;
    int64_t g = best_conn - inside, w = weight_of(vw, u);
    if (g < 0 || (g == 0 && !(w > 0 && pw[best] <= pw[a])))
        return;
    dest[uu - begin] = best;
    gain[uu - begin] = g;
}

/* A candidate part of a hub's move: its connection, weight and id. */
struct pick {
    int64_t conn, pw;
    uint32_t p;
};

/* The thread path's order on candidates (more connected, then lighter),
 * ties to the lower id. */
static __device__ __forceinline__ int better(const struct pick &x, const struct pick &y)
{
    return x.conn > y.conn || (x.conn == y.conn && (x.pw < y.pw || (x.pw == y.pw && x.p < y.p)));
}

/* The sum of x over the block, in thread 0 (every thread must call it). */
static __device__ int64_t block_sum(int64_t x)
{
    __shared__ int64_t part_sums[HUB_BLOCK / 32];
    for (int d = 16; d > 0; d /= 2)
        x += __shfl_down_sync(0xffffffffu, x, d);
    if ((threadIdx.x & 31u) == 0)
        part_sums[threadIdx.x / 32] = x;
    __syncthreads();
    x = threadIdx.x < HUB_BLOCK / 32 ? part_sums[threadIdx.x] : 0;
    for (int d = 16; d > 0; d /= 2)
        x += __shfl_down_sync(0xffffffffu, x, d);
    __syncthreads(); /* part_sums may be reused */
    return x;
}

/* The best of the warp's candidates, in its lane 0 (every lane calls it). */
static __device__ struct pick warp_best(struct pick x)
{
    for (int d = 16; d > 0; d /= 2) {
        struct pick o;
        o.conn = __shfl_down_sync(0xffffffffu, x.conn, d);
        o.pw = __shfl_down_sync(0xffffffffu, x.pw, d);
        o.p = __shfl_down_sync(0xffffffffu, x.p, d);
        if (better(o, x))
            x = o;
    }
    return x;
}

/* The best of the block's candidates, in thread 0 (every thread calls it). */
static __device__ struct pick block_best(struct pick x)
{
    __shared__ struct pick bests[HUB_BLOCK / 32];
    x = warp_best(x);
    if ((threadIdx.x & 31u) == 0)
        bests[threadIdx.x / 32] = x;
    __syncthreads();
    if (threadIdx.x < 32)
        x = warp_best(threadIdx.x < HUB_BLOCK / 32 ? bests[threadIdx.x]
                                                   : pick{-1, 0, HF_PART_NONE});
    __syncthreads();
    return x;
}

/* propose_kernel's decision for the hubs hubs[0 .. gridDim.x), a block
 * each: conn (k counters in shared memory, -1 for a part no arc reaches)
 * tallies the arcs to other parts. */
static __global__ void propose_hub_kernel(const uint64_t *off, const uint32_t *adj,
                                          const int64_t *ew, const int64_t *vw,
                                          const uint32_t *part, const int64_t *pw, uint32_t k,
                                          int up, uint64_t begin, const uint32_t *hubs,
                                          uint32_t *dest, int64_t *gain)
{
    extern __shared__ int64_t conn[];
    uint32_t u = hubs[blockIdx.x], a = part[u];
    for (uint32_t p = threadIdx.x; p < k; p += blockDim.x)
        conn[p] = -1;
    __syncthreads();
    int64_t inside = 0;
    for (uint64_t j = off[u] + threadIdx.x; j < off[u + 1]; j += blockDim.x) {
        uint32_t v = adj[j], p = part[v];
        if (v == u)
            continue;
        int64_t w = weight_of(ew, j);
        if (p == a) {
            inside += w;
        } else {
            atomicCAS((unsigned long long *)&conn[p], (unsigned long long)-1, 0ull);
            atomicAdd((unsigned long long *)&conn[p], (unsigned long long)w);
        }
    }
    __syncthreads();
    inside = block_sum(inside);
    struct pick best = {-1, 0, HF_PART_NONE};
    for (uint32_t p = threadIdx.x; p < k; p += blockDim.x) {
        struct pick x = {conn[p], vload64(&pw[p]), p};
        if (x.conn >= 0 && ((up && p > a) || (!up && p < a)) && better(x, best))
            best = x;
    }
    best = block_best(best);
    if (threadIdx.x != 0)
        return;
    dest[u - begin] = HF_PART_NONE;
    if (best.p == HF_PART_NONE)
        return;
    int64_t g = best.conn - inside, w = weight_of(vw, u);
    if (g < 0 || (g == 0 && !(w > 0 && best.pw <= vload64(&pw[a]))))
        return;
    dest[u - begin] = best.p;
    gain[u - begin] = g;
}

/* Whether v's proposal goes before u's: the larger gain first, then the
 * smaller id. */
static __device__ __forceinline__ int before(int64_t gv, uint32_t v, int64_t gu, uint32_t u)
{
    return gv > gu || (gv == gu && v < u);
}

/* Keeps u's proposal only if it still gains when every neighbour in the
 * piece whose proposal goes before u's has moved (a CPU thread sees the
 * moves made before it; GPU threads propose at once and would otherwise
 * move both ends of an edge on gains that assume the other stays), then
 * reserves u's weight in the GPU's copy of the part weights and lists the
 * move for the host. */
/* The weight of u's arcs j = first, first + stride, ... to parts b and a
 * once every neighbour in the piece whose proposal goes before u's has
 * moved. */
static __device__ void connections(const uint64_t *off, const uint32_t *adj, const int64_t *ew,
                                   const uint32_t *part, uint64_t begin, uint64_t end,
                                   const uint32_t *dest, const int64_t *gain, uint32_t u,
                                   uint32_t a, uint32_t b, uint64_t first, uint64_t stride,
                                   int64_t *to_b, int64_t *to_a)
{
    int64_t gu = gain[u - begin];
    for (uint64_t j = off[u] + first; j < off[u + 1]; j += stride) {
        uint32_t v = adj[j];
        if (v == u)
            continue;
        uint32_t p = part[v];
        if (v >= begin && v < end && dest[v - begin] != HF_PART_NONE &&
            before(gain[v - begin], v, gu, u))
            p = dest[v - begin];
        int64_t w = weight_of(ew, j);
        *to_b += p == b ? w : 0;
        *to_a += p == a ? w : 0;
    }
}

/* Takes u's move from a to b if it still gains g = to_b - to_a: reserves
 * its weight in the GPU's part weights and lists the move. */
static __device__ void take_move(const int64_t *vw, int64_t *pw, int64_t maxpw, uint32_t u,
                                 uint32_t a, uint32_t b, int64_t g, uint32_t *taken_u,
                                 struct part_move *moves, unsigned long long *count)
{
    int64_t w = weight_of(vw, u);
    if (g < 0 || (g == 0 && !(w > 0 && vload64(&pw[b]) <= vload64(&pw[a]))))
        return;
    if (!reserve_dev(&pw[b], w, maxpw))
        return;
    atomicAdd((unsigned long long *)&pw[a], (unsigned long long)(-w));
    *taken_u = 1;
    unsigned long long at = atomicAdd(count, 1ull);
    moves[at].u = u;
    moves[at].to = b;
    moves[at].gain = g;
}

static __global__ void filter_kernel(const uint64_t *off, const uint32_t *adj, const int64_t *ew,
                                     const int64_t *vw, const uint32_t *part, int64_t *pw,
                                     int64_t maxpw, uint64_t begin, uint64_t end, uint64_t hub,
                                     const uint32_t *dest, const int64_t *gain, uint32_t *taken,
                                     struct part_move *moves, unsigned long long *count)
{
    uint64_t uu = begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (uu >= end || off[uu + 1] - off[uu] > hub)
        return; /* a hub is filter_hub_kernel's */
    taken[uu - begin] = 0;
    uint32_t u = (uint32_t)uu, b = dest[uu - begin];
    if (b == HF_PART_NONE)
        return;
    uint32_t a = part[u];
    int64_t to_b = 0, to_a = 0;
    connections(off, adj, ew, part, begin, end, dest, gain, u, a, b, 0, 1, &to_b, &to_a);
    take_move(vw, pw, maxpw, u, a, b, to_b - to_a, &taken[uu - begin], moves, count);
}

/* filter_kernel for the hubs hubs[0 .. gridDim.x), a block each. */
static __global__ void filter_hub_kernel(const uint64_t *off, const uint32_t *adj,
                                         const int64_t *ew, const int64_t *vw,
                                         const uint32_t *part, int64_t *pw, int64_t maxpw,
                                         uint64_t begin, uint64_t end, const uint32_t *hubs,
                                         const uint32_t *dest, const int64_t *gain,
                                         uint32_t *taken, struct part_move *moves,
                                         unsigned long long *count)
{
    uint32_t u = hubs[blockIdx.x], b = dest[u - begin], a = part[u];
    if (threadIdx.x == 0)
        taken[u - begin] = 0;
    if (b == HF_PART_NONE)
        return; /* the whole block */
    int64_t to_b = 0, to_a = 0;
    connections(off, adj, ew, part, begin, end, dest, gain, u, a, b, threadIdx.x, blockDim.x,
                &to_b, &to_a);
    to_b = block_sum(to_b);
    to_a = block_sum(to_a);
    if (threadIdx.x == 0)
        take_move(vw, pw, maxpw, u, a, b, to_b - to_a, &taken[u - begin], moves, count);
}

/* The moves taken, into the GPU's copy of the parts (for its next pieces). */
static __global__ void move_kernel(uint32_t *part, uint64_t begin, uint64_t end,
                                   const uint32_t *dest, const uint32_t *taken)
{
    uint64_t uu = begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (uu < end && taken[uu - begin])
        part[uu] = dest[uu - begin];
}

/* Takes a REFINE piece's moves on the host as the CPU takes its own: the
 * weight reserved in the host's part weights first, the move dropped when
 * the part has no room left (a CPU move or another GPU's took it). */
static void CUDART_CB apply_moves(void *arg)
{
    struct part_moves *pm = (struct part_moves *)arg;
    struct hf_partition *c = pm->c;
    const struct hf_plevel *l = &c->lv[c->cur];
    const struct part_move *mv = (const struct part_move *)(pm + 1);
    uint64_t moves = 0;
    int64_t gains = 0;
    for (unsigned long long i = 0; i < pm->count; i++) {
        uint32_t u = mv[i].u, a = __atomic_load_n(&l->part[u], __ATOMIC_RELAXED);
        int64_t w = hf__pl_vw(l, u);
        if (!hf__part_reserve(&c->pw[mv[i].to], w, c->maxpw))
            continue;
        __atomic_fetch_sub(&c->pw[a], w, __ATOMIC_RELAXED);
        __atomic_store_n(&l->part[u], mv[i].to, __ATOMIC_RELAXED);
        moves++;
        gains += mv[i].gain;
    }
    __atomic_fetch_add(&c->moves, moves, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->gain, gains, __ATOMIC_RELAXED);
}

int hf__part_refine_cuda(struct hf_partition *c, struct part_gpu *g, uint64_t b, uint64_t e,
                         struct hf_cuda *gpu)
{
    uint64_t n = e - b;
    size_t moves_bytes = MOVES_HEAD + REFINE_STEPS * n * sizeof(struct part_move);
    struct part_moves *pm = (struct part_moves *)hf_cuda_staging(
        gpu, offsetof(struct part_moves, count) + moves_bytes);
    char *d_moves = (char *)hf_cuda_arena_alloc(gpu, moves_bytes);
    uint32_t *d_dest = (uint32_t *)hf_cuda_arena_alloc(gpu, n * sizeof(uint32_t));
    uint32_t *d_taken = (uint32_t *)hf_cuda_arena_alloc(gpu, n * sizeof(uint32_t));
    int64_t *d_gain = (int64_t *)hf_cuda_arena_alloc(gpu, n * sizeof(int64_t));
    if (!d_moves || !d_dest || !d_taken || !d_gain || !pm)
        return hf_fail(HF_EDEVOOM, "partition: %s: no room for the moves of %llu vertices",
                       hf_cuda_name(gpu), (unsigned long long)n);
    unsigned long long *d_count = (unsigned long long *)d_moves;
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    int rc = hf_cuda_check(gpu, cudaMemsetAsync(d_count, 0, sizeof *d_count, s), "moves count");
    if (rc)
        return rc;
    /* The piece's hubs: [h0, h1) of the level's ascending list. */
    const struct part_gpu_csr *lv = g->lvl;
    uint64_t h0 = 0, h1 = 0, hub = UINT64_MAX;
    if (c->k <= HUB_MAX_PARTS && lv->nhubs) {
        const uint32_t *lo = lv->hubs, *end = lv->hubs + lv->nhubs;
        h0 = (uint64_t)(std::lower_bound(lo, end, (uint32_t)b) - lo);
        h1 = (uint64_t)(std::lower_bound(lo, end, (uint32_t)e) - lo);
        hub = HUB_DEGREE;
    }
    const uint32_t *d_hubs = lv->d_hubs + h0;
    struct part_move *d_list = (struct part_move *)(d_moves + MOVES_HEAD);
    size_t counters = (size_t)c->k * sizeof(int64_t);
    int up = c->pass % 2 == 0;
    unsigned blocks = blocks_for(n), nh = (unsigned)(h1 - h0);
    for (int step = 0; step < REFINE_STEPS; step++) {
        propose_kernel<<<blocks, BLOCK, 0, s>>>(lv->d_offsets, lv->d_adj, lv->d_ew, lv->d_vw,
                                                g->d_part, g->d_pw, up, b, e, hub, d_dest, d_gain);
        if (nh)
            propose_hub_kernel<<<nh, HUB_BLOCK, counters, s>>>(
                lv->d_offsets, lv->d_adj, lv->d_ew, lv->d_vw, g->d_part, g->d_pw, (uint32_t)c->k,
                up, b, d_hubs, d_dest, d_gain);
        filter_kernel<<<blocks, BLOCK, 0, s>>>(lv->d_offsets, lv->d_adj, lv->d_ew, lv->d_vw,
                                               g->d_part, g->d_pw, c->maxpw, b, e, hub, d_dest,
                                               d_gain, d_taken, d_list, d_count);
        if (nh)
            filter_hub_kernel<<<nh, HUB_BLOCK, 0, s>>>(lv->d_offsets, lv->d_adj, lv->d_ew, lv->d_vw,
                                                       g->d_part, g->d_pw, c->maxpw, b, e, d_hubs,
                                                       d_dest, d_gain, d_taken, d_list, d_count);
        move_kernel<<<blocks, BLOCK, 0, s>>>(g->d_part, b, e, d_dest, d_taken);
    }
    if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "partition refine kernels")) ||
        (rc = copy_back(gpu, &pm->count, d_moves, moves_bytes, "moves")))
        return rc;
    pm->c = c;
    return hf_cuda_check(gpu, cudaLaunchHostFunc(hf_cuda_copy_out_stream(gpu), apply_moves, pm),
                         "moves host function");
}

/* ---- measure ------------------------------------------------------------ */

/* What a MEASURE piece's host function needs, at the head of the slot's
 * staging buffer: the partitioner, then what the device copies in from
 * `sums` on: the piece's cut arcs (each cut edge counted from both ends)
 * and its part weights, sums[2 .. 2 + k). */
struct part_sums {
    struct hf_partition *c;
    unsigned long long unused;
    int64_t sums[2]; /* the device block starts here */
};

/* The cut arcs and part weights of [begin, end) into sums[0] and sums[2 ..
 * 2 + k), through k shared-memory counters per block when `shared`. */
static __global__ void measure_kernel(const uint64_t *off, const uint32_t *adj, const int64_t *ew,
                                      const int64_t *vw, const uint32_t *part, uint32_t k,
                                      uint64_t begin, uint64_t end, int shared, int64_t *sums)
{
    extern __shared__ int64_t block_pw[];
    int64_t *pw = shared ? block_pw : sums + 2;
    if (shared) {
        for (uint32_t p = threadIdx.x; p < k; p += blockDim.x)
            block_pw[p] = 0;
        __syncthreads();
    }
    uint64_t u = begin + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t cut = 0;
    if (u < end) {
        uint32_t a = part[u];
        atomicAdd((unsigned long long *)&pw[a], (unsigned long long)weight_of(vw, u));
        for (uint64_t j = off[u]; j < off[u + 1]; j++)
            if (part[adj[j]] != a)
                cut += weight_of(ew, j);
    }
    cut = block_sum(cut); /* every thread of the block gets here */
    if (threadIdx.x == 0 && cut)
        atomicAdd((unsigned long long *)&sums[0], (unsigned long long)cut);
    if (shared) {
        __syncthreads();
        for (uint32_t p = threadIdx.x; p < k; p += blockDim.x)
            if (block_pw[p])
                atomicAdd((unsigned long long *)&sums[2 + p], (unsigned long long)block_pw[p]);
    }
}

/* Adds a MEASURE piece's sums to the run's once they have arrived. */
static void CUDART_CB add_sums(void *arg)
{
    struct part_sums *ps = (struct part_sums *)arg;
    struct hf_partition *c = ps->c;
    const int64_t *sums = (const int64_t *)((const char *)ps + offsetof(struct part_sums, sums));
    for (long p = 0; p < c->k; p++)
        if (sums[2 + p])
            __atomic_fetch_add(&c->mpw[p], sums[2 + p], __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->mcut, sums[0], __ATOMIC_RELAXED);
}

int hf__part_measure_cuda(struct hf_partition *c, struct part_gpu *g, uint64_t b, uint64_t e,
                          struct hf_cuda *gpu)
{
    size_t bytes = (2 + (size_t)c->k) * sizeof(int64_t);
    struct part_sums *ps =
        (struct part_sums *)hf_cuda_staging(gpu, offsetof(struct part_sums, sums) + bytes);
    int64_t *d_sums = (int64_t *)hf_cuda_arena_alloc(gpu, bytes);
    if (!d_sums || !ps)
        return hf_fail(HF_EDEVOOM, "partition: %s: no room for the sums of %ld parts",
                       hf_cuda_name(gpu), c->k);
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    int rc = hf_cuda_check(gpu, cudaMemsetAsync(d_sums, 0, bytes, s), "measure sums");
    if (rc)
        return rc;
    int shared = c->k <= HUB_MAX_PARTS;
    unsigned blocks = (unsigned)((e - b + HUB_BLOCK - 1) / HUB_BLOCK); /* block_sum's size */
    size_t counters = shared ? (size_t)c->k * sizeof(int64_t) : 0;
    const struct part_gpu_csr *lv = g->lvl;
    measure_kernel<<<blocks, HUB_BLOCK, counters, s>>>(lv->d_offsets, lv->d_adj, lv->d_ew, lv->d_vw,
                                                       g->d_part, (uint32_t)c->k, b, e, shared,
                                                       d_sums);
    if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "partition measure kernel")) ||
        (rc = copy_back(gpu, ps->sums, d_sums, bytes, "measure sums")))
        return rc;
    ps->c = c;
    return hf_cuda_check(gpu, cudaLaunchHostFunc(hf_cuda_copy_out_stream(gpu), add_sums, ps),
                         "measure host function");
}
