/* partition_coarsen.c - the coarsening rounds of the partitioner: heavy-edge
 * matching, conflict resolution, two-hop matching and contraction.
 *
 * DESIGN
 * ------
 * Matching is lock-free, as in the thesis (Goodarzi, ch. 4) and mt-metis:
 * every vertex u still unmatched picks its heaviest unmatched neighbour v
 * (ties broken by a hash of the seed, the level and the pair, so equal
 * weights give a random matching) and writes match[u] = v and match[v] = u
 * with plain relaxed stores. Two threads (or two CPU teams) may claim the
 * same v at once; the resolve round keeps only mutual pairs (match[match[u]]
 * == u) and returns the others to "unmatched". The argument that this is
 * right whatever the timing: a vertex u whose pair is not mutual only ever
 * rewrites its own entry, and any w pointing at such a u sees match[u] != w
 * before and after, so w is reset too; mutual pairs are never touched.
 *
 * When more than HF_PART_TWOHOP of the vertices stay unmatched (the leaves
 * of a hub, the isolated vertices of a Kronecker graph) a two-hop round pairs
 * vertices that share their heaviest neighbour: each leftover u parks itself
 * in the slot wait[key] of that neighbour, or takes whoever is parked there,
 * with compare-and-swap; a vertex is parked at most once, so a slot never
 * sees the same value twice and there is no ABA. Isolated vertices share one
 * slot. Pairs never exceed c->maxvwgt, so no coarse vertex grows too heavy
 * for the balance bound (METIS's rule, 1.5 total / coarsen_to).
 *
 * The coarse map is a prefix sum over "leader" flags (the smaller end of each
 * pair, flagged in cmap itself), done between rounds in next_load, as are
 * the slots of every coarse list (the sum of its members' degrees). That
 * host glue runs on the main thread's OpenMP team only for large levels and
 * a team of 4 or more (hf__part_glue_parallel), serially otherwise: the
 * devices' OpenMP teams are still spinning for a while after a round, and
 * on 2 cores a second team on the host thread fought them for the cores
 * (rgg 2^18's glue took 0.35 s in parallel against ~0.02 s serial). The
 * contraction's scratch (leader, ub, cdeg) is made for the first level and
 * kept for the coarser ones, whose pages are then not fresh. The
 * contract round then fills each coarse vertex's slots from its members'
 * lists mapped through cmap, drops the pair's internal edge and merges
 * repeated neighbours by adding their weights (a small hash table on the
 * stack; a sort for long lists), so coarse lists are not in id order;
 * pack() squeezes the
 * slots into the next level's CSR. Every step is a range of vertices, so it
 * is a task-farm round whose chunks cost their edges.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "partition_internal.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, x) __atomic_store_n((p), (x), __ATOMIC_RELAXED)

/* The matching visits its vertices in blocks of this many, each block's
 * ids listed first so that the vertices a few places ahead can be
 * prefetched (see hf__part_match). */
enum { HF_PART_MATCH_BLOCK = 256, HF_PART_MATCH_AHEAD = 8 };

/* u's heaviest unmatched neighbour that it may pair with (ties by the pair's
 * hash), or HF_PART_NONE. */
static uint32_t heaviest_free(const struct hf_plevel *l, const uint32_t *match, uint64_t salt,
                              int64_t maxv, size_t u)
{
    int64_t wu = hf__pl_vw(l, u), best_w = -1;
    uint64_t best_h = 0;
    uint32_t best = HF_PART_NONE;
    for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++) {
        uint32_t v = l->adj[j];
        if (v == u || LOAD(&match[v]) != HF_PART_NONE || wu + hf__pl_vw(l, v) > maxv)
            continue;
        int64_t w = hf__pl_ew(l, j);
        if (w < best_w)
            continue;
        uint64_t h = hf__part_pair_hash(salt, (uint32_t)u, v);
        if (w > best_w || h > best_h) {
            best_w = w;
            best_h = h;
            best = v;
        }
    }
    return best;
}

void hf__part_match(struct hf_partition *c, size_t begin, size_t end, int nthreads)
{
    const struct hf_plevel *l = &c->lv[c->cur];
    uint32_t *match = l->match;
    uint64_t salt = hf__part_salt(c->seed, c->cur);
    int64_t maxv = c->maxvwgt;
    /* Vertices are visited in a scrambled order (i -> begin + i * step mod n,
     * step coprime with n), as METIS visits a random permutation: in index
     * order the last vertex of every row of a mesh finds its neighbours taken.
     * That order makes every visit a cache miss or three (u's offsets, its
     * list, its neighbours' match entries: rgg 2^20's ids carry no locality
     * either), one after the other, since each waits for the one before. So
     * each block lists its vertices first and prefetches them as a pipeline:
     * the offsets and match entry of the vertex AHEAD places on, the list
     * (and a coarse level's edge weights) of the one AHEAD / 2 on, the
     * neighbours' match entries of the one 2 on. */
    uint64_t n = end - begin, step = hf__part_visit_step(salt, n);
    uint64_t stride = n ? step % n : 0; /* the step may pass n */
    uint64_t nblocks = (n + HF_PART_MATCH_BLOCK - 1) / HF_PART_MATCH_BLOCK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (uint64_t blk = 0; blk < nblocks; blk++) {
        uint32_t ids[HF_PART_MATCH_BLOCK + HF_PART_MATCH_AHEAD];
        uint64_t i0 = blk * HF_PART_MATCH_BLOCK, pos = (i0 * step) % n;
        uint64_t rest = n - i0, todo = rest < HF_PART_MATCH_BLOCK ? rest : HF_PART_MATCH_BLOCK;
        uint64_t listed = rest < HF_PART_MATCH_BLOCK + HF_PART_MATCH_AHEAD
                              ? rest
                              : HF_PART_MATCH_BLOCK + HF_PART_MATCH_AHEAD;
        for (uint64_t t = 0; t < listed; t++) {
            ids[t] = (uint32_t)(begin + pos);
            pos += stride;
            pos -= pos >= n ? n : 0;
        }
        for (uint64_t t = 0; t < todo; t++) {
            if (t + HF_PART_MATCH_AHEAD < listed) {
                uint32_t x = ids[t + HF_PART_MATCH_AHEAD];
                __builtin_prefetch(&l->offsets[x]);
                __builtin_prefetch(&match[x]);
            }
            if (t + HF_PART_MATCH_AHEAD / 2 < listed) {
                uint32_t x = ids[t + HF_PART_MATCH_AHEAD / 2];
                uint64_t b = l->offsets[x], e = l->offsets[x + 1];
                __builtin_prefetch(&l->adj[b]);
                if (l->ew && e > b) { /* a coarse level's weights: often two lines */
                    __builtin_prefetch(&l->ew[b]);
                    __builtin_prefetch(&l->ew[e - 1]);
                }
            }
            if (t + 2 < listed) {
                uint32_t x = ids[t + 2];
                for (uint64_t j = l->offsets[x]; j < l->offsets[x + 1]; j++)
                    __builtin_prefetch(&match[l->adj[j]]);
            }
            size_t u = ids[t];
            if (LOAD(&match[u]) != HF_PART_NONE)
                continue;
            uint32_t best = heaviest_free(l, match, salt, maxv, u);
            if (best != HF_PART_NONE) {
                STORE(&match[u], best);
                STORE(&match[best], (uint32_t)u);
            }
        }
    }
}

void hf__part_resolve(struct hf_partition *c, size_t begin, size_t end, int nthreads)
{
    uint32_t *match = c->lv[c->cur].match;
    uint64_t left = 0;
#pragma omp parallel for schedule(static) num_threads(nthreads) reduction(+ : left)
    for (size_t u = begin; u < end; u++) {
        uint32_t m = LOAD(&match[u]);
        if (m != HF_PART_NONE && LOAD(&match[m]) != u) {
            STORE(&match[u], HF_PART_NONE);
            m = HF_PART_NONE;
        }
        left += m == HF_PART_NONE;
    }
    __atomic_fetch_add(&c->unmatched, left, __ATOMIC_RELAXED);
}

/* The slot a leftover vertex waits in: its heaviest neighbour (the first of
 * equals), or nv for a vertex with no neighbour but itself. */
static uint64_t twohop_key(const struct hf_plevel *l, uint64_t u)
{
    uint64_t key = l->nv;
    int64_t best = -1;
    for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++)
        if (l->adj[j] != u && hf__pl_ew(l, j) > best) {
            best = hf__pl_ew(l, j);
            key = l->adj[j];
        }
    return key;
}

void hf__part_twohop(struct hf_partition *c, size_t begin, size_t end, int nthreads)
{
    const struct hf_plevel *l = &c->lv[c->cur];
    uint32_t *match = l->match, *wait = c->wait;
    int64_t maxv = c->maxvwgt;
#pragma omp parallel for schedule(dynamic, 256) num_threads(nthreads)
    for (size_t u = begin; u < end; u++) {
        if (LOAD(&match[u]) != HF_PART_NONE)
            continue;
        uint32_t *slot = &wait[twohop_key(l, u)];
        for (;;) {
            uint32_t w = LOAD(slot);
            if (w == HF_PART_NONE) {
                if (__atomic_compare_exchange_n(slot, &w, (uint32_t)u, 0, __ATOMIC_RELAXED,
                                                __ATOMIC_RELAXED))
                    break; /* parked: a later vertex may take it */
            } else if (__atomic_compare_exchange_n(slot, &w, HF_PART_NONE, 0, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED)) {
                if (hf__pl_vw(l, u) + hf__pl_vw(l, w) <= maxv) {
                    STORE(&match[u], w);
                    STORE(&match[w], (uint32_t)u);
                }
                break;
            }
        }
    }
}

/* Whether next_load's glue between rounds (the coarse map, the packed
 * coarse CSR, FM's boundary scan) runs on the main thread's OpenMP team: for loops over
 * 2^16 items or more (vertices for the map; vertices and arcs for the
 * packing) and a team of at least 4. On the 2-core machine those loops ran
 * ~10x slower in parallel than serially, fighting the CPU device team's
 * spinning threads for the cores; on the 16-core GPU host, serially, they
 * were 2.6 s of a 24M-vertex road grid's 6.2 s of phases, and 15 ms of a
 * 574k-vertex level of rgg 2^20 (9edd91b:bench/NOTES.md). */
int hf__part_glue_parallel(uint64_t items)
{
    return items >= ((uint64_t)1 << 16) && omp_get_max_threads() >= 4;
}

/* The most threads a prefix sum splits its array between. */
enum { HF_PART_SCAN_TEAM = 256 };

/* Defines `name`, the exclusive prefix sum of a[0..n) of type T in place,
 * returning the total: on the main thread's team where the glue runs
 * there (each thread sums its block, the block totals are summed in order,
 * then each thread rewrites its block from its block's start), serially
 * otherwise. */
#define HF_PART_DEFINE_SCAN(name, T)                                                               \
    static uint64_t name(T *a, size_t n)                                                           \
    {                                                                                              \
        uint64_t start[HF_PART_SCAN_TEAM + 1] = {0};                                               \
        int team = omp_get_max_threads(), used = 1;                                                \
        team = team < HF_PART_SCAN_TEAM ? team : HF_PART_SCAN_TEAM;                                \
        _Pragma("omp parallel num_threads(team) if (hf__part_glue_parallel(n))")                   \
        {                                                                                          \
            int t = omp_get_thread_num(), nt = omp_get_num_threads();                              \
            size_t b = n * (size_t)t / (size_t)nt, e = n * (size_t)(t + 1) / (size_t)nt;           \
            uint64_t sum = 0;                                                                      \
            for (size_t i = b; i < e; i++)                                                         \
                sum += a[i];                                                                       \
            start[t + 1] = sum;                                                                    \
            _Pragma("omp barrier") _Pragma("omp single")                                           \
            {                                                                                      \
                used = nt;                                                                         \
                for (int i = 1; i <= nt; i++)                                                      \
                    start[i] += start[i - 1];                                                      \
            }                                                                                      \
            sum = start[t];                                                                        \
            for (size_t i = b; i < e; i++) {                                                       \
                uint64_t x = a[i];                                                                 \
                a[i] = (T)sum;                                                                     \
                sum += x;                                                                          \
            }                                                                                      \
        }                                                                                          \
        return start[used];                                                                        \
    }
HF_PART_DEFINE_SCAN(scan_u64, uint64_t)
HF_PART_DEFINE_SCAN(scan_u32, uint32_t)

uint64_t hf__part_scan(uint64_t *a, size_t n)
{
    return a[n] = scan_u64(a, n);
}

void *hf__part_take(struct hf_partition *c, size_t bytes)
{
    size_t n = (bytes + HF_PART_PIN_ALIGN - 1) / HF_PART_PIN_ALIGN * HF_PART_PIN_ALIGN;
    if (c->pin && n && c->pin_cap - c->pin_used >= n) {
        void *p = c->pin + c->pin_used;
        c->pin_used += n;
        return p;
    }
    return malloc(bytes ? bytes : 1);
}

void hf__part_give(struct hf_partition *c, void *p)
{
    if (!c->pin || (char *)p < c->pin || (char *)p >= c->pin + c->pin_cap)
        free(p);
}

/* Applies the claims numbered [b, e) of all regions, region r holding
 * those from first[r] on (first[regions] = all of them). */
static void apply_claim_range(const struct hf_partition *c, uint32_t *match, const uint64_t *first,
                              uint64_t regions, uint64_t b, uint64_t e)
{
    uint64_t lo = 0, hi = regions; /* the region holding claim b: first[r] <= b < first[r + 1] */
    while (hi - lo > 1) {
        uint64_t mid = (lo + hi) / 2;
        if (first[mid] <= b)
            lo = mid;
        else
            hi = mid;
    }
    for (uint64_t r = lo, i = b; i < e; r++) {
        const uint32_t *pairs = (const uint32_t *)(c->claims + c->claim_at[r] + 2);
        uint64_t stop = first[r + 1] < e ? first[r + 1] : e;
        for (; i < stop; i++) {
            uint64_t k = i - first[r];
            __atomic_store_n(&match[pairs[2 * k]], pairs[2 * k + 1], __ATOMIC_RELAXED);
        }
    }
}

/* The regions (one per GPU piece) are applied as one range of claims split
 * evenly over the main thread's team where the glue runs there: one
 * parallel loop per region left every region below the glue's threshold
 * serial, and a level-0 MATCH round's claims are hundreds of thousands of
 * scattered stores (2.8-3.1 ms of glue after rgg 2^20's first round on the
 * 16-core H200 host, the GPU taking 56-62% of the vertices). Claims on one
 * vertex from different pieces land in any order, as the CPU threads'
 * stores would; RESOLVE keeps only mutual pairs. */
void hf__part_apply_claims(struct hf_partition *c)
{
    uint32_t *match = c->lv[c->cur].match;
    uint64_t regions = c->nclaim_regions < HF_PART_CLAIM_REGIONS ? c->nclaim_regions
                                                                 : HF_PART_CLAIM_REGIONS;
    uint64_t first[HF_PART_CLAIM_REGIONS + 1];
    first[0] = 0;
    for (uint64_t r = 0; r < regions; r++)
        first[r + 1] = first[r] + c->claims[c->claim_at[r]];
    uint64_t total = first[regions];
#pragma omp parallel if (hf__part_glue_parallel(total))
    {
        uint64_t t = (uint64_t)omp_get_thread_num(), nt = (uint64_t)omp_get_num_threads();
        apply_claim_range(c, match, first, regions, total * t / nt, total * (t + 1) / nt);
    }
    c->nclaim_regions = 0;
    c->claims_used = 0;
}

void hf__part_scratch_free(struct hf_partition *c)
{
    hf__part_give(c, c->leader);
    if (c->ub != c->ub_pinned) /* setup's pinned arrays stay for the next run */
        free(c->ub);
    if (c->cdeg != c->cdeg_pinned)
        free(c->cdeg);
    hf__part_give(c, c->cvw);
    c->leader = NULL;
    c->ub = NULL;
    c->cdeg = NULL;
    c->cvw = NULL;
    c->scratch_cap = 0;
    c->slots_level = -1; /* ub and cdeg are gone: the slots say nothing */
}

/* Room in the contraction's scratch for nc coarse vertices. leader, ub and
 * cdeg are kept from level to level (the first level needs the most), so
 * only the first level's pages are fresh; cvw becomes the coarse level's
 * weights (pack), so each level gets its own. With a GPU in the run, ub
 * and cdeg are setup's pinned arrays, which hold the input's vertices, so
 * every level's. */
static int hold_scratch(struct hf_partition *c, uint64_t nc)
{
    if (nc > c->scratch_cap || !c->leader) {
        hf__part_scratch_free(c);
        c->leader = hf__part_take(c, nc * sizeof *c->leader);
        c->ub = c->ub_pinned ? c->ub_pinned : malloc((nc + 1) * sizeof *c->ub);
        c->cdeg = c->cdeg_pinned ? c->cdeg_pinned : malloc((nc ? nc : 1) * sizeof *c->cdeg);
        c->scratch_cap = nc;
    }
    hf__part_give(c, c->cvw);
    c->cvw = hf__part_take(c, nc * sizeof *c->cvw);
    if (!c->leader || !c->ub || !c->cdeg || !c->cvw)
        return hf_fail(HF_ENOMEM, "partition: out of memory for %llu coarse vertices",
                       (unsigned long long)nc);
    return 0;
}

/* Leftovers become single vertices; the leaders (u <= match[u]) are numbered
 * by a prefix sum over their flags, held in cmap itself; a partner then
 * takes its leader's number, which that loop never rewrites. Each coarse
 * vertex gets slots for its members' degrees. */
int hf__part_build_cmap(struct hf_partition *c)
{
    struct hf_plevel *l = &c->lv[c->cur];
    uint64_t n = l->nv;
    uint32_t *match = l->match, *cmap = l->cmap;
    int par = hf__part_glue_parallel(n);
    /* ub is rewritten here and the lists by the contract round that follows:
     * from now on the slots hold no level (hf_partition.slots_level). */
    c->slots_level = -1;
#pragma omp parallel for schedule(static) if (par)
    for (uint64_t u = 0; u < n; u++) {
        if (match[u] == HF_PART_NONE)
            match[u] = (uint32_t)u;
        cmap[u] = match[u] >= u;
    }
    uint64_t nc = scan_u32(cmap, n);
    int rc = hold_scratch(c, nc);
    if (rc)
        return rc;
    c->nc = nc;
#pragma omp parallel for schedule(static) if (par)
    for (uint64_t u = 0; u < n; u++) {
        uint32_t m = match[u];
        if (m < u) {
            cmap[u] = cmap[m];
            continue;
        }
        uint32_t cv = cmap[u];
        c->leader[cv] = (uint32_t)u;
        c->ub[cv] =
            (l->offsets[u + 1] - l->offsets[u]) + (m != u ? l->offsets[m + 1] - l->offsets[m] : 0);
    }
    uint64_t slots = hf__part_scan(c->ub, nc);
    /* A level's slots are its arcs (every fine vertex is in one coarse
     * vertex), never more than the input's, for which setup made room. */
    if (slots > c->tcap)
        return hf_fail(HF_EAPP, "partition: level %d has %llu arcs, more than the input's %llu",
                       c->cur, (unsigned long long)slots, (unsigned long long)c->tcap);
    return 0;
}

/* Sorts (id, weight) pairs by id: insertion sort for short lists, a
 * heap-free quicksort (median of three) otherwise. */
static void sort_pairs(uint32_t *id, int64_t *w, int64_t lo, int64_t hi)
{
    while (hi - lo > 24) {
        int64_t mid = lo + (hi - lo) / 2;
        uint32_t a = id[lo], b = id[mid], d = id[hi];
        uint32_t p = a < b ? (b < d ? b : (a < d ? d : a)) : (a < d ? a : (b < d ? d : b));
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (id[i] < p)
                i++;
            while (id[j] > p)
                j--;
            if (i <= j) {
                uint32_t t = id[i];
                id[i] = id[j];
                id[j] = t;
                int64_t tw = w[i];
                w[i] = w[j];
                w[j] = tw;
                i++;
                j--;
            }
        }
        if (j - lo < hi - i) {
            sort_pairs(id, w, lo, j);
            lo = i;
        } else {
            sort_pairs(id, w, i, hi);
            hi = j;
        }
    }
    for (int64_t i = lo + 1; i <= hi; i++) {
        uint32_t x = id[i];
        int64_t xw = w[i];
        int64_t j = i - 1;
        while (j >= lo && id[j] > x) {
            id[j + 1] = id[j];
            w[j + 1] = w[j];
            j--;
        }
        id[j + 1] = x;
        w[j + 1] = xw;
    }
}

/* Merges the coarse neighbours of coarse vertex cv (members u and m) into
 * id/w without sorting: a small open-addressing table on the stack finds
 * repeats. Returns the list's length. */
enum { HF_PART_HT = 1024 };
static int64_t merge_hashed(const struct hf_plevel *l, uint32_t cv, uint32_t u, uint32_t m,
                            uint32_t *id, int64_t *w, uint64_t slots)
{
    uint32_t key[HF_PART_HT], at[HF_PART_HT];
    int bits = 4;
    while ((1ull << bits) < 2 * slots)
        bits++;
    uint32_t mask = (1u << bits) - 1;
    for (uint32_t i = 0; i <= mask; i++)
        key[i] = HF_PART_NONE;
    int64_t n = 0;
    for (int side = 0; side < (m != u ? 2 : 1); side++) {
        uint32_t x = side ? m : u;
        for (uint64_t j = l->offsets[x]; j < l->offsets[x + 1]; j++) {
            uint32_t y = l->cmap[l->adj[j]];
            if (y == cv)
                continue; /* the pair's own edge, or a self-loop */
            uint32_t h = (y * 2654435761u) >> (32 - bits);
            while (key[h] != HF_PART_NONE && key[h] != y)
                h = (h + 1) & mask;
            if (key[h] == y) {
                w[at[h]] += hf__pl_ew(l, j);
            } else {
                key[h] = y;
                at[h] = (uint32_t)n;
                id[n] = y;
                w[n++] = hf__pl_ew(l, j);
            }
        }
    }
    return n;
}

/* The same for lists too long for the table: collect, sort by id, merge. */
static int64_t merge_sorted(const struct hf_plevel *l, uint32_t cv, uint32_t u, uint32_t m,
                            uint32_t *id, int64_t *w)
{
    int64_t n = 0;
    for (int side = 0; side < (m != u ? 2 : 1); side++) {
        uint32_t x = side ? m : u;
        for (uint64_t j = l->offsets[x]; j < l->offsets[x + 1]; j++) {
            uint32_t y = l->cmap[l->adj[j]];
            if (y == cv)
                continue;
            id[n] = y;
            w[n++] = hf__pl_ew(l, j);
        }
    }
    if (n > 1)
        sort_pairs(id, w, 0, n - 1);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (k > 0 && id[k - 1] == id[i]) {
            w[k - 1] += w[i];
        } else {
            id[k] = id[i];
            w[k++] = w[i];
        }
    return k;
}

/* How far ahead the contraction prefetches: the partner's offsets this
 * many coarse vertices on, its list half as far, the coarse ids of both
 * members' neighbours 2 on (see hf__part_contract). */
enum { HF_PART_CONTRACT_AHEAD = 8 };

/* Prefetches cmap of the neighbours of fine vertex x. */
static void prefetch_cmap(const struct hf_plevel *l, uint32_t x)
{
    for (uint64_t j = l->offsets[x]; j < l->offsets[x + 1]; j++)
        __builtin_prefetch(&l->cmap[l->adj[j]]);
}

int hf__part_contract(struct hf_partition *c, size_t begin, size_t end, int nthreads)
{
    const struct hf_plevel *l = &c->lv[c->cur];
    /* Leaders come in fine-id order, but their partners and neighbours are
     * anywhere (rgg 2^20's ids carry no locality): three dependent misses
     * per coarse vertex (the partner's offsets, its list, then every
     * neighbour's cmap entry), which a pipeline of prefetches overlaps. */
#pragma omp parallel for schedule(dynamic, 256) num_threads(nthreads)
    for (size_t cv = begin; cv < end; cv++) {
        if (cv + HF_PART_CONTRACT_AHEAD < end)
            __builtin_prefetch(&l->offsets[l->match[c->leader[cv + HF_PART_CONTRACT_AHEAD]]]);
        if (cv + HF_PART_CONTRACT_AHEAD / 2 < end)
            __builtin_prefetch(
                &l->adj[l->offsets[l->match[c->leader[cv + HF_PART_CONTRACT_AHEAD / 2]]]]);
        if (cv + 2 < end) {
            uint32_t x = c->leader[cv + 2], y = l->match[x];
            prefetch_cmap(l, x);
            if (y != x)
                prefetch_cmap(l, y);
        }
        uint32_t u = c->leader[cv], m = l->match[u];
        uint64_t slots = c->ub[cv + 1] - c->ub[cv];
        uint32_t *id = c->tadj + c->ub[cv];
        int64_t *w = c->tew + c->ub[cv];
        int64_t k = 2 * slots <= HF_PART_HT ? merge_hashed(l, (uint32_t)cv, u, m, id, w, slots)
                                            : merge_sorted(l, (uint32_t)cv, u, m, id, w);
        c->cdeg[cv] = (uint32_t)k;
        c->cvw[cv] = hf__pl_vw(l, u) + (m != u ? hf__pl_vw(l, m) : 0);
    }
    return 0;
}

int hf__part_pack(struct hf_partition *c)
{
    struct hf_plevel *l = &c->lv[c->cur], *cl = &c->lv[c->cur + 1];
    uint64_t nc = c->nc;
    memset(cl, 0, sizeof *cl);
    cl->nv = nc;
    cl->owns_csr = 1;
    cl->offsets = malloc((nc + 1) * sizeof *cl->offsets);
    if (!cl->offsets)
        return hf_fail(HF_ENOMEM, "partition: out of memory for a coarse level");
#pragma omp parallel for schedule(static) if (hf__part_glue_parallel(nc))
    for (uint64_t v = 0; v < nc; v++)
        cl->offsets[v] = c->cdeg[v];
    cl->ne = hf__part_scan(cl->offsets, nc);
    /* The copy is of the arcs: a Kronecker graph's coarse levels keep
     * millions of them on a few thousand vertices. */
    int par = hf__part_glue_parallel(nc + cl->ne);
    cl->adj = malloc((cl->ne ? cl->ne : 1) * sizeof *cl->adj);
    cl->ew = malloc((cl->ne ? cl->ne : 1) * sizeof *cl->ew);
    cl->match = hf__part_take(c, nc * sizeof *cl->match);
    cl->cmap = hf__part_take(c, nc * sizeof *cl->cmap);
    if (!cl->adj || !cl->ew || !cl->match || !cl->cmap)
        return hf_fail(HF_ENOMEM, "partition: out of memory for a coarse level of %llu arcs",
                       (unsigned long long)cl->ne);
#pragma omp parallel for schedule(static, 4096) if (par)
    for (uint64_t v = 0; v < nc; v++) {
        memcpy(cl->adj + cl->offsets[v], c->tadj + c->ub[v], c->cdeg[v] * sizeof *cl->adj);
        memcpy(cl->ew + cl->offsets[v], c->tew + c->ub[v], c->cdeg[v] * sizeof *cl->ew);
    }
    cl->vw = c->cvw; /* the coarse weights move to the level; leader, ub and cdeg stay */
    c->cvw = NULL;
    /* The slots keep the new level's lists until the next contraction: a GPU
     * builds its copy of the level from them (pinned) rather than from the
     * pageable arrays just made (partition_cuda.cu, "Residency"). */
    c->slots_level = c->cur + 1;
    if (c->cur > 0) { /* a coarse level keeps cmap only; level 0's match is reused by round 0 */
        hf__part_give(c, l->match);
        l->match = NULL;
    }
    return 0;
}
