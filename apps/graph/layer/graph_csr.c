/* graph_csr.c - the CSR builder every loader and generator ends in, and the
 * structural checks.
 *
 * DESIGN
 * ------
 * Arcs arrive in blocks (one per parser thread, or one from a generator) in no
 * useful order. The builder works by counting, never by a global sort:
 *
 *   1. count each vertex's out-degree (atomics, parallel over arcs), the
 *      reverse arcs of symmetrise included and dropped self-loops excluded;
 *   2. a prefix sum gives every vertex its segment of a key array;
 *   3. fill: each arc claims a slot of its segment with an atomic cursor and
 *      writes one 64-bit key = (neighbour << 32) | (weight bits << 1) | tag,
 *      where tag = 1 marks a reverse arc added by symmetrise;
 *   4. sort each segment (insertion sort when short, LSD radix sort skipping
 *      constant bytes when long), then dedupe it in place;
 *   5. a second prefix sum over the surviving lengths gives the offsets, and
 *      the keys are unpacked into adj and weights.
 *
 * The fill order depends on thread timing, but the keys hold everything that
 * distinguishes two arcs, so after step 4 the segments are identical whatever
 * the thread count. Weights are >= 0, whose float bit patterns order like the
 * values, so the key order is (neighbour, weight, tag): the first arc of a run
 * of equal neighbours carries the minimum weight, which is the one dedupe keeps.
 * Peak memory is the input arcs plus 8 bytes per stored arc (16 with
 * symmetrise); the input blocks are freed before the final arrays are made.
 */
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "graph_internal.h"

/* Huge pages only pay for big arrays; the advice covers the 2 MiB-aligned
 * part of the block, which is all of it that matters. */
static void *advise_huge(void *p, size_t n)
{
    if (p && n >= (4u << 20)) {
        uintptr_t a = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
        uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)((2u << 20) - 1);
        if (e > a)
            (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
    }
    return p;
}

void *hf__big_alloc(size_t n)
{
    return advise_huge(malloc(n ? n : 1), n);
}

void *hf__big_realloc(void *p, size_t n)
{
    return advise_huge(realloc(p, n ? n : 1), n);
}

int hf__arcs_grow(struct hf__arcs *a)
{
    return hf__arcs_reserve(a, a->cap ? a->cap * 2 : 4096);
}

int hf__arcs_reserve(struct hf__arcs *a, size_t cap)
{
    if (cap <= a->cap)
        return 0;
    hf_vid_t *u = hf__big_realloc(a->u, cap * sizeof *u);
    if (u)
        a->u = u;
    hf_vid_t *v = u ? hf__big_realloc(a->v, cap * sizeof *v) : NULL;
    if (v)
        a->v = v;
    float *w = NULL;
    if (v && a->weighted && (w = hf__big_realloc(a->w, cap * sizeof *w)))
        a->w = w;
    if (!u || !v || (a->weighted && !w))
        return HF_ENOMEM;
    a->cap = cap;
    return 0;
}

void hf__arcs_free(struct hf__arcs *a)
{
    free(a->u);
    free(a->v);
    free(a->w);
    a->u = a->v = NULL;
    a->w = NULL;
    a->n = a->cap = 0;
}

/* The 31 bits of a weight >= 0 (its sign bit is 0); -0 is folded into +0 so
 * that the two zeros dedupe as one value. */
static inline uint64_t weight_bits(float w)
{
    uint32_t b;
    if (w == 0.0f)
        w = 0.0f;
    memcpy(&b, &w, sizeof b);
    return b & 0x7fffffffu;
}

static inline float bits_weight(uint64_t key)
{
    uint32_t b = (uint32_t)(key >> 1) & 0x7fffffffu;
    float w;
    memcpy(&w, &b, sizeof w);
    return w;
}

/* Sorts n keys ascending; `tmp` holds n keys. Insertion sort wins below a few
 * dozen keys (most lists of sparse graphs); above, an LSD radix sort by bytes
 * skips the bytes that are equal in every key (the weight bytes of an
 * unweighted graph, the high id bytes of a small one), so hubs of millions of
 * arcs sort in a few linear passes. */
static void sort_keys(uint64_t *k, size_t n, uint64_t *tmp)
{
    if (n <= 48) {
        for (size_t i = 1; i < n; i++) {
            uint64_t x = k[i];
            size_t j = i;
            for (; j > 0 && k[j - 1] > x; j--)
                k[j] = k[j - 1];
            k[j] = x;
        }
        return;
    }
    uint64_t lo = k[0], hi = k[0];
    for (size_t i = 1; i < n; i++)
        lo &= k[i], hi |= k[i];
    uint64_t varying = lo ^ hi;
    uint64_t *src = k, *dst = tmp;
    for (int shift = 0; shift < 64; shift += 8) {
        if (!((varying >> shift) & 0xff))
            continue;
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i] >> shift) & 0xff]++;
        size_t sum = 0;
        for (int b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i] >> shift) & 0xff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != k)
        memcpy(k, src, n * sizeof *k);
}

/* Dedupes a sorted segment in place and returns its new length. Counts input
 * duplicates (runs holding several input arcs) and reverse arcs that survive
 * alone (runs holding no input arc) into *dup and *added. */
static size_t dedupe_keys(uint64_t *k, size_t n, int dedupe, uint64_t *dup, uint64_t *added)
{
    if (!dedupe) {
        for (size_t i = 0; i < n; i++)
            *added += k[i] & 1;
        return n;
    }
    size_t out = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        uint64_t inputs = 0;
        for (; j < n && (k[j] >> 32) == (k[i] >> 32); j++)
            inputs += !(k[j] & 1);
        if (inputs)
            *dup += inputs - 1;
        else
            *added += 1;
        k[out++] = k[i];
        i = j;
    }
    return out;
}

/* Releases whatever the builder owns after a failure. */
static int build_fail(struct hf__arcs *blocks, int nblocks, void *a, void *b, void *c, int rc,
                      const char *what, uint64_t count)
{
    for (int i = 0; i < nblocks; i++)
        hf__arcs_free(&blocks[i]);
    free(a);
    free(b);
    free(c);
    return hf_fail(rc, "graph: out of memory for %s (%llu entries)", what,
                   (unsigned long long)count);
}

int hf__csr_build(struct hf_graph *g, uint64_t nv, struct hf__arcs *blocks, int nblocks,
                  const struct hf__build *b)
{
    HF_ASSERT_MSG(nv >= 1 && nv <= HF_GRAPH_MAX_NV, "graph: vertex count out of range");
    uint64_t *koff = hf__big_alloc((nv + 1) * sizeof *koff);
    if (koff)
        memset(koff, 0, (nv + 1) * sizeof *koff);
    if (!koff)
        return build_fail(blocks, nblocks, NULL, NULL, NULL, HF_ENOMEM, "degrees", nv);

    /* 1. Out-degrees, shifted by one so that the prefix sum lands in place. */
    uint64_t loops = 0;
    for (int bi = 0; bi < nblocks; bi++) {
        const struct hf__arcs *a = &blocks[bi];
        int64_t n = (int64_t)a->n;
#pragma omp parallel for schedule(static) reduction(+ : loops)
        for (int64_t i = 0; i < n; i++) {
            hf_vid_t u = a->u[i], v = a->v[i];
            if (u == v) {
                loops++;
                if (b->drop_self_loops)
                    continue;
            } else if (b->symmetrise) {
                __atomic_fetch_add(&koff[(uint64_t)v + 1], 1, __ATOMIC_RELAXED);
            }
            __atomic_fetch_add(&koff[(uint64_t)u + 1], 1, __ATOMIC_RELAXED);
        }
    }
    /* 2. Segments of the key array. */
    for (uint64_t x = 0; x < nv; x++)
        koff[x + 1] += koff[x];
    uint64_t nkeys = koff[nv];
    uint64_t *cursor = hf__big_alloc(nv * sizeof *cursor);
    uint64_t *keys = hf__big_alloc(nkeys * sizeof *keys);
    if (!cursor || !keys)
        return build_fail(blocks, nblocks, koff, cursor, keys, HF_ENOMEM, "arcs", nkeys);
    memcpy(cursor, koff, nv * sizeof *cursor);

    /* 3. Fill. */
    for (int bi = 0; bi < nblocks; bi++) {
        struct hf__arcs *a = &blocks[bi];
        int64_t n = (int64_t)a->n;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            hf_vid_t u = a->u[i], v = a->v[i];
            if (u == v && b->drop_self_loops)
                continue;
            uint64_t wb = b->weighted ? weight_bits(a->w[i]) << 1 : 0;
            uint64_t p = __atomic_fetch_add(&cursor[u], 1, __ATOMIC_RELAXED);
            keys[p] = ((uint64_t)v << 32) | wb;
            if (b->symmetrise && u != v) {
                p = __atomic_fetch_add(&cursor[v], 1, __ATOMIC_RELAXED);
                keys[p] = ((uint64_t)u << 32) | wb | 1;
            }
        }
        hf__arcs_free(a);
    }

    /* 4. Sort and dedupe every segment; cursor[x] becomes its new length. */
    uint64_t dup = 0, added = 0;
    int oom = 0;
    int64_t snv = (int64_t)nv;
#pragma omp parallel reduction(+ : dup, added) reduction(| : oom)
    {
        uint64_t *tmp = NULL;
        size_t tcap = 0;
#pragma omp for schedule(dynamic, 1024)
        for (int64_t x = 0; x < snv; x++) {
            size_t n = (size_t)(koff[x + 1] - koff[x]);
            if (n > 48 && n > tcap) {
                free(tmp);
                tcap = n;
                if (!(tmp = malloc(tcap * sizeof *tmp))) {
                    tcap = 0;
                    oom = 1;
                    continue;
                }
            }
            sort_keys(keys + koff[x], n, tmp);
            cursor[x] = dedupe_keys(keys + koff[x], n, b->dedupe, &dup, &added);
        }
        free(tmp);
    }
    if (oom)
        return build_fail(blocks, 0, koff, cursor, keys, HF_ENOMEM, "sorting", nkeys);

    /* 5. Offsets of the surviving arcs, then unpack. */
    uint64_t *off = hf__big_alloc((nv + 1) * sizeof *off);
    if (!off)
        return build_fail(blocks, 0, koff, cursor, keys, HF_ENOMEM, "offsets", nv);
    off[0] = 0;
    for (uint64_t x = 0; x < nv; x++)
        off[x + 1] = off[x] + cursor[x];
    uint64_t ne = off[nv];
    hf_vid_t *adj = hf__big_alloc(ne * sizeof *adj);
    float *w = b->weighted ? hf__big_alloc(ne * sizeof *w) : NULL;
    if (!adj || (b->weighted && !w)) {
        free(adj);
        free(w);
        free(off);
        return build_fail(blocks, 0, koff, cursor, keys, HF_ENOMEM, "adjacency", ne);
    }
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t x = 0; x < snv; x++) {
        const uint64_t *k = keys + koff[x];
        uint64_t o = off[x], n = off[x + 1] - o;
        for (uint64_t i = 0; i < n; i++)
            adj[o + i] = (hf_vid_t)(k[i] >> 32);
        if (w)
            for (uint64_t i = 0; i < n; i++)
                w[o + i] = bits_weight(k[i]);
    }
    free(keys);
    free(koff);
    free(cursor);

    g->nv = nv;
    g->ne = ne;
    g->offsets = off;
    g->adj = adj;
    g->weights = w;
    g->self_loops_dropped = b->drop_self_loops ? loops : 0;
    g->duplicates_dropped = dup;
    g->arcs_added_by_symmetrise = added;
    /* Symmetrise makes the arc multiset symmetric; with dedupe both directions
     * keep the minimum of the same weights, so they stay equal. */
    g->symmetric = b->symmetrise || b->assume_symmetric ? 1 : hf__csr_is_symmetric(g);
    return 0;
}

/* A keyed 64-bit mix (splitmix64's finaliser) of one arc, u -> v with weight
 * bits wb: the terms of hf__csr_is_symmetric's sums. */
static inline uint64_t arc_hash(uint64_t key, hf_vid_t u, hf_vid_t v, uint32_t wb)
{
    uint64_t z = key ^ (((uint64_t)u << 32 | v) * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)wb << 17);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The weight's bits, with -0 read as +0 (they compare equal). */
static inline uint32_t arc_weight_bits(const struct hf_graph *g, uint64_t i)
{
    if (!g->weights || g->weights[i] == 0.0f)
        return 0;
    uint32_t b;
    memcpy(&b, &g->weights[i], sizeof b);
    return b;
}

/* Whether the arcs, weights included, are the same multiset as the reversed
 * arcs: then every arc u->v has a v->u of equal weight. Checked in one
 * streaming pass instead of a search in v's list per arc (which on a
 * Kronecker graph's hubs is a cache miss per step: 5 s of a 6 s run at scale
 * 20): each arc adds h(u, v, w) - h(v, u, w) to two sums under two random
 * keys drawn per process, so a symmetric graph sums to zero, and any other
 * sums to zero in both with probability 2^-128 whatever the file holds (the
 * keys are not known to whoever wrote it). */
static uint64_t sym_keys[2];

/* The two keys, from the kernel's random source (the clock and the process id
 * where that fails: any keys work for honest files). */
static void draw_keys(void)
{
    if (getrandom(sym_keys, sizeof sym_keys, 0) != (ssize_t)sizeof sym_keys) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        sym_keys[0] = (uint64_t)t.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)t.tv_sec;
        sym_keys[1] = sym_keys[0] * 0xbf58476d1ce4e5b9ull ^ (uint64_t)getpid();
    }
}

int hf__csr_is_symmetric(const struct hf_graph *g)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, draw_keys);
    const uint64_t *keys = sym_keys;
    uint64_t d0 = 0, d1 = 0;
    int64_t nv = (int64_t)g->nv;
#pragma omp parallel for schedule(dynamic, 4096) reduction(+ : d0, d1)
    for (int64_t x = 0; x < nv; x++)
        for (uint64_t i = g->offsets[x]; i < g->offsets[x + 1]; i++) {
            hf_vid_t u = (hf_vid_t)x, v = g->adj[i];
            uint32_t wb = arc_weight_bits(g, i);
            d0 += arc_hash(keys[0], u, v, wb) - arc_hash(keys[0], v, u, wb);
            d1 += arc_hash(keys[1], u, v, wb) - arc_hash(keys[1], v, u, wb);
        }
    return d0 == 0 && d1 == 0;
}

int hf__graph_check_msg(const struct hf_graph *g, char *msg, size_t msglen)
{
#define BAD(...) return snprintf(msg, msglen, __VA_ARGS__), HF_EINVAL
    if (!g->offsets || !g->adj || g->nv < 1 || g->nv > HF_GRAPH_MAX_NV)
        BAD("graph: %llu vertices or missing arrays", (unsigned long long)g->nv);
    if (g->base != 0 && g->base != 1)
        BAD("graph: base %d is neither 0 nor 1", g->base);
    if (g->offsets[0] != 0 || g->offsets[g->nv] != g->ne)
        BAD("graph: offsets run from %llu to %llu, not 0 to ne=%llu",
            (unsigned long long)g->offsets[0], (unsigned long long)g->offsets[g->nv],
            (unsigned long long)g->ne);
    int64_t nv = (int64_t)g->nv;
    int64_t bad = INT64_MAX; /* the first bad vertex, so the message is deterministic */
#pragma omp parallel for schedule(dynamic, 1024) reduction(min : bad)
    for (int64_t x = 0; x < nv; x++) {
        uint64_t a = g->offsets[x], e = g->offsets[x + 1];
        if (x >= bad)
            continue;
        if (a > e || e > g->ne) {
            bad = x;
            continue;
        }
        for (uint64_t i = a; i < e; i++)
            if (g->adj[i] >= g->nv || (i > a && g->adj[i] < g->adj[i - 1]) ||
                (g->weights && !(g->weights[i] >= 0.0f && isfinite(g->weights[i])))) {
                bad = x;
                break;
            }
    }
    if (bad != INT64_MAX)
        BAD("graph: vertex %lld: offsets decrease, or a neighbour id is >= nv=%llu, out of "
            "order, or has a negative or non-finite weight",
            (long long)bad, (unsigned long long)g->nv);
    if (g->symmetric && !hf__csr_is_symmetric(g))
        BAD("graph: marked symmetric but some arc u->v has no v->u of equal weight");
    return 0;
#undef BAD
}

int hf_graph_check(const struct hf_graph *g)
{
    char msg[512];
    int rc = hf__graph_check_msg(g, msg, sizeof msg);
    return rc ? hf_fail(rc, "%s", msg) : 0;
}

void hf_graph_free(struct hf_graph *g)
{
    if (!g)
        return;
    free(g->offsets);
    free(g->adj);
    free(g->weights);
    free(g->vwgt);
    memset(g, 0, sizeof *g);
}
