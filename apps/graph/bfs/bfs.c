/* bfs.c - breadth-first search: the hetfarm template filled in, one round per
 * BFS level, direction-optimizing.
 *
 * DESIGN
 * ------
 * The depths are a shared MIN array (hetfarm.h, "Shared data"): every device
 * lowers depths in its own copy and records what it changed, and the framework
 * merges the copies at the round's end, moving only the changed vertices. The
 * CSR is resident on every GPU. So a round moves the frontier slice a GPU
 * expands and the depths that changed, nothing else.
 *
 * Round r expands the vertices at depth r. A PUSH round's load is the frontier
 * itself (units = frontier items, chunk work = their edges): each vertex sets
 * depth r + 1 on its unseen neighbours, claiming each with one compare-and-swap
 * so that a vertex is recorded once. A PULL round's load is every vertex
 * (units = vertex ids): each unseen vertex scans its neighbours for one at
 * depth r and stops at the first (bottom-up, Beamer et al. 2012). The switch
 * follows Beamer's rule: pull when the frontier's edges m_f exceed the
 * unexplored edges m_u / alpha (14), push again when the frontier shrinks
 * below nv / beta (24). The next frontier is exactly what changed in the
 * round (hf_shared_last_changes): no scan of the depth array, which matters
 * on road graphs with thousands of levels. The run ends when a round
 * discovers nothing (next_load returns 0).
 *
 * Fused levels. A road graph's search has ~10^4 levels of a few thousand
 * vertices, and a round costs ~150-250 us of host work and synchronisation
 * however small it is, far more than its kernel; a Kronecker graph's has six,
 * but each moves millions of changed depths to the host and back. So when one
 * GPU is given a whole push round (the scheduler did not split it: small
 * rounds go whole to the device it predicts fastest), it goes on by itself
 * (bfs_cuda.cu): levels of at most [load] fuse_edges edges in one cooperative
 * kernel, and with [load] fuse = search (the default) every bigger level too,
 * push or pull by Beamer's rule on the GPU, until a level finds nothing; the
 * GPU then says so (searched_all) and next_load ends the run without another
 * round (with one rank only: across ranks every rank must draw the same
 * loads, and a node's GPU cannot tell rank 0). With fuse = small the GPU
 * stops before a level of more than fuse_edges edges and the host takes over
 * (the scheduler may split it). Every depth the GPU sets is recorded, so the
 * merge and the other devices see all of them; next_load takes the next
 * frontier as the deepest level among the changes. One round is then several
 * levels, and the GPU says how much work they were (hf_bundle_did_more: the
 * edges it expanded, and each level's work as next_load declares it), so its
 * rates count them: without that, a GPU that ran the whole search in its
 * standalone pass read as slower than a CPU that expanded one vertex, and a
 * planner pricing by those rates gave the CPU the first level.
 * fuse_edges = 0 keeps one level per round.
 *
 * Symmetric graphs only for pull rounds (a vertex's parents are among its
 * neighbours there); on a directed graph the search stays push-only.
 *
 * verify checks once the search is complete: the last round found nothing, or
 * a GPU ran the search to its end in it (a fused search ends the run without
 * a round that finds nothing, so it must be checked there):
 * against the reference BFS up to [load] verify_full vertices, beyond that
 * soundly in one pass: depth[src] = 0, no edge spans more than one level, and
 * every reached vertex but the source has a neighbour one level up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/placement/graph_place.h"
#include "bfs.h"
#ifdef HF_HAVE_CUDA
#include "hf_cuda.h"
#endif

static int bfs_create(void **ctx, hf_config_t cfg)
{
    struct hf_bfs *b = calloc(1, sizeof *b);
    if (!b)
        return hf_fail(HF_ENOMEM, "bfs: out of memory");
    *ctx = b;
    const char *dir;
    int rc = hf_config_str(cfg, "load", "direction", "auto", &dir);
    if (!rc)
        rc = hf_config_double(cfg, "load", "alpha", 14.0, 1e-3, 1e9, &b->alpha);
    if (!rc)
        rc = hf_config_double(cfg, "load", "beta", 24.0, 1e-3, 1e9, &b->beta);
    if (!rc)
        rc = hf_config_long(cfg, "load", "verify_full", 1L << 21, 0, __LONG_MAX__,
                            &b->verify_full);
    if (!rc)
        rc = hf_config_long(cfg, "load", "fuse_edges", 1L << 16, 0, 1L << 40, &b->fuse_edges);
    const char *fuse;
    if (!rc)
        rc = hf_config_str(cfg, "load", "fuse", "search", &fuse);
    if (rc)
        return rc;
    if (strcmp(fuse, "search") != 0 && strcmp(fuse, "small") != 0)
        return hf_fail(HF_ECONFIG, "%s: [load] fuse = %s: expected search or small",
                       hf_config_where(cfg, "load", "fuse"), fuse);
    b->fuse_search = strcmp(fuse, "search") == 0;
    if (strcmp(dir, "auto") == 0)
        b->direction = 0;
    else if (strcmp(dir, "push") == 0)
        b->direction = 1;
    else if (strcmp(dir, "pull") == 0)
        b->direction = 2;
    else
        return hf_fail(HF_ECONFIG, "%s: [load] direction = %s: expected auto, push or pull",
                       hf_config_where(cfg, "load", "direction"), dir);
    if ((rc = hf__gapp_create(&b->ga, cfg, 0, 1)) || (rc = hf__gapp_place(&b->ga, cfg)))
        return rc;
    if (b->direction == 2 && !b->ga.g.symmetric)
        return hf_fail(HF_ECONFIG, "%s: [load] direction = pull needs a symmetric graph "
                                   "(symmetrise = yes)",
                       hf_config_where(cfg, "load", "direction"));
    b->cpu_pulls = 1; /* until setup finds only real GPUs */
    b->gpu_fuses = 1; /* until setup finds no real GPU */
    if (!(b->front_bits = calloc((b->ga.g.nv + 63) / 64, sizeof *b->front_bits)))
        return hf_fail(HF_ENOMEM, "bfs: out of memory for the frontier bitmap");
    if (!(b->depth = malloc(b->ga.g.nv * sizeof *b->depth)))
        return hf_fail(HF_ENOMEM, "bfs: out of memory for %llu depths",
                       (unsigned long long)b->ga.g.nv);
    return hf__frontier_reserve(&b->fr, b->ga.g.nv);
}

static int bfs_shared(void *ctx, struct hf_shared *out, int cap)
{
    struct hf_bfs *b = ctx;
    int n = hf__gapp_shared_csr(&b->ga, 0, out, cap);
    if (n < 0 || n >= cap)
        return n < 0 ? n : hf_fail(HF_EAPP, "bfs: no room for the depth array");
    out[n] = (struct hf_shared){"bfs.depth", b->depth, b->ga.g.nv, HF_ELEM_I32, HF_SHARED_MIN};
    return n + 1;
}

/* The next frontier: the deepest level among the round's changes (one level
 * deeper than the last, or several when a GPU fused levels, whose expanded
 * vertices' edges are then counted as traversed here), with its prefix sums
 * of degrees; returns its edges. Parallel: a round's changes can be millions
 * (a Kronecker graph's middle levels, or most of a road graph after fused
 * levels), and a serial pass over them cost 10-30 ms a round next to a GPU.
 * Blocks count what they keep and its edges, the counts are scanned, each
 * block writes its vertices and prefix sums at its offsets: two passes over
 * the changes, and a third, for the deepest level, only when a GPU may have
 * fused levels (without one every change is one level deeper). */
static uint64_t next_frontier(struct hf_bfs *b, const uint32_t *changed, size_t n)
{
    const int32_t *depth = b->depth;
    const struct hf_graph *g = &b->ga.g;
    int32_t deepest = b->level + 1;
    if (b->gpu_fuses) {
#pragma omp parallel for schedule(static) reduction(max : deepest) if (n >= HF_GAPP_TEAM_MIN)
        for (size_t i = 0; i < n; i++)
            deepest = depth[changed[i]] > deepest ? depth[changed[i]] : deepest;
    }
    size_t kept[HF_GAPP_BLOCKS + 1] = {0};
    uint64_t edges[HF_GAPP_BLOCKS + 1] = {0}, fused = 0;
#pragma omp parallel for schedule(static) reduction(+ : fused) if (n >= HF_GAPP_TEAM_MIN)
    for (int blk = 0; blk < HF_GAPP_BLOCKS; blk++) {
        size_t lo, hi, k = 0;
        uint64_t m = 0;
        hf__gapp_block(n, blk, &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            uint64_t deg = hf_graph_degree(g, changed[i]);
            if (depth[changed[i]] == deepest)
                k++, m += deg;
            else
                fused += deg;
        }
        kept[blk + 1] = k;
        edges[blk + 1] = m;
    }
    for (int blk = 0; blk < HF_GAPP_BLOCKS; blk++) {
        kept[blk + 1] += kept[blk];
        edges[blk + 1] += edges[blk];
    }
#pragma omp parallel for schedule(static) if (n >= HF_GAPP_TEAM_MIN)
    for (int blk = 0; blk < HF_GAPP_BLOCKS; blk++) {
        size_t lo, hi, k = kept[blk];
        uint64_t m = edges[blk];
        hf__gapp_block(n, blk, &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            if (depth[changed[i]] == deepest) {
                b->fr.v[k] = changed[i];
                b->fr.pre[k++] = m;
                m += hf_graph_degree(g, changed[i]);
            }
    }
    b->fr.n = kept[HF_GAPP_BLOCKS];
    b->fr.pre[b->fr.n] = edges[HF_GAPP_BLOCKS];
    b->fused_levels += deepest - (b->level + 1);
    b->edges_traversed += fused;
    b->unexplored_edges -= fused < b->unexplored_edges ? fused : b->unexplored_edges;
    b->level = deepest;
    return edges[HF_GAPP_BLOCKS];
}

/* Only bundles run by run_cpu read the pull bitmap: a run whose devices are
 * all real GPUs (whose pull kernel reads the depths) need not build it (a
 * node device runs no bundle here). The bitmap does not shape the load, so
 * each rank decides it from its own devices. Whether a GPU may have fused
 * levels does (the next frontier is the deepest level changed): across nodes
 * any rank's GPU may have, and every rank looks for the deepest level. */
static int bfs_setup(void *ctx, const struct hf_devices *devs)
{
    struct hf_bfs *b = ctx;
    b->cpu_pulls = 0;
    b->gpu_fuses = devs->ranks > 1;
    b->one_rank = devs->ranks <= 1;
    for (int d = 0; d < devs->count; d++) {
        b->cpu_pulls |= devs->dev[d].kind != HF_DEV_CUDA && devs->dev[d].kind != HF_DEV_NODE;
        b->gpu_fuses |= devs->dev[d].kind == HF_DEV_CUDA;
    }
    return hf__gapp_setup(&b->ga, devs, 1);
}

/* Cross-device traffic (app/graph_traffic.c): each bundle's work counts for its device. */
static int bfs_collect(void *ctx, const struct hf_bundle *b)
{
    hf__gapp_traffic_add(&((struct hf_bfs *)ctx)->ga, b);
    return 0;
}

/* The round's cross-device traffic: its changed depths. */
static int bfs_round_figures(void *ctx, const struct hf_load *load, struct hf_figure *out, int cap)
{
    struct hf_bfs *b = ctx;
    size_t n;
    const uint32_t *changed = hf_shared_last_changes(load, BFS_DEPTH, &n);
    return hf__gapp_traffic_round(&b->ga, changed, n, out, cap);
}

/* The frontier as a bitmap for the CPU's pull: bit v set iff v is at depth
 * `level` (the frontier is exactly what the last round discovered). A large
 * frontier's bitmap is read off the depths, word by word (a sequential pass,
 * no atomics); a small one is set from its list. */
static void frontier_bits(struct hf_bfs *b)
{
    size_t words = (b->ga.g.nv + 63) / 64, n = b->fr.n, nv = b->ga.g.nv;
    uint64_t *bits = b->front_bits;
    const hf_vid_t *v = b->fr.v;
    if (n >= nv / 8) {
        const int32_t *depth = b->depth;
        int32_t level = b->level;
#pragma omp parallel for schedule(static)
        for (size_t w = 0; w < words; w++) {
            uint64_t word = 0;
            for (size_t k = 0; k < 64 && 64 * w + k < nv; k++)
                word |= (uint64_t)(depth[64 * w + k] == level) << k;
            bits[w] = word;
        }
        return;
    }
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (size_t w = 0; w < words; w++)
            bits[w] = 0;
#pragma omp for schedule(static)
        for (size_t k = 0; k < n; k++)
            __atomic_fetch_or(&bits[v[k] >> 6], 1ull << (v[k] & 63), __ATOMIC_RELAXED);
    }
}

static int bfs_next_load(void *ctx, struct hf_load *load)
{
    struct hf_bfs *b = ctx;
    const struct hf_graph *g = &b->ga.g;
    size_t n = 0;
    const uint32_t *changed = NULL;
    if (load->round == 0) {
#pragma omp parallel for schedule(static)
        for (uint64_t v = 0; v < g->nv; v++)
            b->depth[v] = HF_BFS_UNSEEN;
        b->depth[b->ga.src] = 0;
        b->fr.v[0] = b->ga.src;
        b->fr.n = 1;
        b->pull = 0;
        b->rounds_pull = 0;
        b->finished = 0;
        b->edges_traversed = 0;
        b->unexplored_edges = g->ne;
        b->fused_levels = 0;
        b->level = 0;
        hf__gapp_traffic_reset(&b->ga);
        b->searched_all = 0;
    } else {
        changed = hf_shared_last_changes(load, BFS_DEPTH, &n);
        if (n == 0) {
            b->finished = 1;
            return 0;
        }
        if (b->searched_all && b->one_rank) { /* a GPU ran the rest of the search */
            next_frontier(b, changed, n); /* the figures: its levels and edges */
            b->edges_traversed += b->fr.pre[b->fr.n]; /* it expanded the last level too */
            b->fused_levels++;
            b->finished = 1;
            return 0;
        }
        b->searched_all = 0;
    }
    uint64_t m_f = load->round == 0 ? hf__frontier_prefix(&b->fr, g) : next_frontier(b, changed, n);
    b->pull = load->round > 0 &&
              hf__bfs_choose_pull(b, b->pull, m_f, b->fr.n, b->unexplored_edges);
    b->unexplored_edges -= m_f < b->unexplored_edges ? m_f : b->unexplored_edges;
    if (b->pull) {
        if (b->cpu_pulls)
            frontier_bits(b);
        b->rounds_pull++;
        load->units = g->nv;
        load->work = (double)g->ne + (double)g->nv;
        load->bytes = 0;
        b->edges_traversed += g->ne; /* an upper bound: pulls stop early */
    } else {
        load->units = b->fr.n;
        load->work = (double)m_f + (double)b->fr.n;
        load->bytes = 12.0 * (double)b->fr.n; /* the frontier slice and its prefix sums */
        b->edges_traversed += m_f;
    }
    return 1;
}

static size_t bfs_partition(void *ctx, const struct hf_load *load, size_t grain,
                            struct hf_chunk *out, size_t cap)
{
    struct hf_bfs *b = ctx;
    grain = hf__gapp_grain(&b->ga, load, grain);
    return b->pull ? hf__vertex_partition(&b->ga.g, load, grain, out, cap)
                   : hf__frontier_partition(&b->fr, load, grain, out, cap);
}

/* Sets depth[v] = next if v is unseen; the one thread that wins records it. */
static void discover(struct hf_bfs *b, const struct hf_load *load, hf_vid_t v, int32_t next)
{
    int32_t unseen = HF_BFS_UNSEEN;
    if (__atomic_load_n(&b->depth[v], __ATOMIC_RELAXED) == HF_BFS_UNSEEN &&
        __atomic_compare_exchange_n(&b->depth[v], &unseen, next, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
        hf_shared_changed(load, BFS_DEPTH, v);
}

/* The last frontier item k in [lo, hi) whose edges start at or before edge
 * e of the frontier (pre[k] <= e): the item that holds edge e. */
static size_t item_of_edge(const uint64_t *pre, size_t lo, size_t hi, uint64_t e)
{
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (pre[mid] <= e)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* A push bundle, split by edges rather than by frontier items: pieces of
 * PUSH_PIECE edges of the bundle's items, laid end to end (the frontier's
 * prefix sums say where each item's edges start), so that a hub's edges
 * are shared by the team instead of held by one thread while the others
 * wait at the bundle's end. Round 0 of a Kronecker search is the source
 * alone, a hub: one thread walked all its edges (5.6 ms of a 6.3 ms round
 * on 16 cores, kron-22). The depths do not depend on who discovers a vertex. */
enum { PUSH_PIECE = 2048 };
static void push_by_edges(struct hf_bfs *b, const struct hf_bundle *bu, int nthreads, int32_t next)
{
    const struct hf_graph *g = &b->ga.g;
    const uint64_t *pre = b->fr.pre;
    uint64_t first = pre[bu->begin], last = pre[bu->end];
    uint64_t pieces = (last - first + PUSH_PIECE - 1) / PUSH_PIECE;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
    for (uint64_t p = 0; p < pieces; p++) {
        uint64_t e = first + p * PUSH_PIECE, end = e + PUSH_PIECE < last ? e + PUSH_PIECE : last;
        for (size_t k = item_of_edge(pre, bu->begin, bu->end, e); e < end; k++) {
            hf_vid_t u = b->fr.v[k];
            uint64_t stop = pre[k + 1] < end ? pre[k + 1] : end;
            for (uint64_t j = g->offsets[u] + (e - pre[k]); e < stop; j++, e++)
                discover(b, bu->load, g->adj[j], next);
        }
    }
}

static int bfs_run_cpu(void *ctx, const struct hf_bundle *bu, int nthreads)
{
    struct hf_bfs *b = ctx;
    const struct hf_graph *g = &b->ga.g;
    int32_t level = b->level, next = level + 1;
    if (!b->pull) {
        push_by_edges(b, bu, nthreads, next);
        return 0;
    }
    const uint64_t *front = b->front_bits;
#pragma omp parallel for schedule(dynamic, 1024) num_threads(nthreads)
    for (size_t v = bu->begin; v < bu->end; v++) {
        if (b->depth[v] != HF_BFS_UNSEEN)
            continue;
        for (uint64_t j = g->offsets[v]; j < g->offsets[v + 1]; j++)
            if (front[g->adj[j] >> 6] >> (g->adj[j] & 63) & 1) {
                b->depth[v] = next; /* only this bundle writes v in a pull round */
                hf_shared_changed(bu->load, BFS_DEPTH, v);
                break;
            }
    }
    return 0;
}

#ifdef HF_HAVE_CUDA
static int bfs_run_cuda(void *ctx, const struct hf_bundle *piece, struct hf_cuda *gpu)
{
    return hf__bfs_cuda(ctx, piece, gpu);
}
#endif

/* The cheap sound check of a finished search (any size). */
static int check_sound(const struct hf_bfs *b)
{
    const struct hf_graph *g = &b->ga.g;
    if (b->depth[b->ga.src] != 0)
        return hf_fail(HF_EVERIFY, "bfs: the source has depth %d", b->depth[b->ga.src]);
    for (uint64_t u = 0; u < g->nv; u++) {
        int32_t du = b->depth[u];
        int parent = du == 0 || du == HF_BFS_UNSEEN;
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++) {
            int32_t dv = b->depth[g->adj[j]];
            if (du != HF_BFS_UNSEEN && dv > du + 1)
                return hf_fail(HF_EVERIFY, "bfs: edge %llu-%u spans depths %d and %d",
                               (unsigned long long)hf__gapp_input_id(&b->ga, (hf_vid_t)u) +
                                   (uint64_t)b->ga.g.base,
                               hf__gapp_input_id(&b->ga, g->adj[j]) + (unsigned)b->ga.g.base,
                               du, dv);
            parent |= dv == du - 1;
        }
        if (!parent && g->symmetric)
            return hf_fail(HF_EVERIFY, "bfs: vertex %llu at depth %d has no neighbour at "
                                       "depth %d",
                           (unsigned long long)hf__gapp_input_id(&b->ga, (hf_vid_t)u) +
                               (uint64_t)g->base,
                           du, du - 1);
    }
    return 0;
}

static int bfs_verify(void *ctx, const struct hf_load *load)
{
    struct hf_bfs *b = ctx;
    size_t n;
    hf_shared_last_changes(load, BFS_DEPTH, &n);
    if (n != 0 && !(b->searched_all && b->one_rank))
        return 0; /* the search goes on: it is checked when complete */
    const struct hf_graph *g = &b->ga.g;
    if ((long)g->nv > b->verify_full)
        return check_sound(b);
    int32_t *ref = malloc(g->nv * sizeof *ref);
    if (!ref)
        return hf_fail(HF_ENOMEM, "bfs: out of memory for the reference");
    hf__bfs_ref(g, b->ga.src, ref);
    int rc = 0;
    for (uint64_t v = 0; v < g->nv && !rc; v++)
        if (ref[v] != b->depth[v])
            rc = hf_fail(HF_EVERIFY, "bfs: vertex %llu has depth %d, the reference says %d",
                         (unsigned long long)hf__gapp_input_id(&b->ga, (hf_vid_t)v) +
                             (uint64_t)g->base,
                         b->depth[v], ref[v]);
    free(ref);
    return rc;
}

static void depth_value(void *ctx, hf_vid_t v, char *buf, size_t len)
{
    const struct hf_bfs *b = ctx;
    snprintf(buf, len, "%d", b->depth[v] == HF_BFS_UNSEEN ? -1 : b->depth[v]);
}

static void bfs_signature(void *ctx, char *buf, size_t len)
{
    const struct hf_bfs *b = ctx;
    snprintf(buf, len, "%s nv=%llu ne=%llu src=%ld", b->ga.g.source_desc,
             (unsigned long long)b->ga.g.nv, (unsigned long long)b->ga.g.ne, b->ga.source);
}

/* Graph500's figure: undirected edges of the reached component over the
 * search's time (the sum of its rounds' makespans). */
static int bfs_figures(void *ctx, double seconds, struct hf_figure *out, int cap)
{
    struct hf_bfs *b = ctx;
    const struct hf_graph *g = &b->ga.g;
    uint64_t reached = 0, arcs = 0;
    int32_t levels = 0;
    for (uint64_t v = 0; v < g->nv; v++)
        if (b->depth[v] != HF_BFS_UNSEEN) {
            reached++;
            arcs += hf_graph_degree(g, (hf_vid_t)v);
            levels = b->depth[v] + 1 > levels ? b->depth[v] + 1 : levels;
        }
    double edges = g->symmetric ? (double)arcs / 2 : (double)arcs;
    struct hf_figure f[] = {
        {"levels", levels, ""},
        {"pull_rounds", b->rounds_pull, ""},
        {"fused_levels", (double)b->fused_levels, "levels a GPU ran within a round"},
        {"reached", (double)reached, "vertices"},
        {"edges", edges, "undirected, reached"},
        {"traversed", (double)b->edges_traversed, "arcs (at most)"},
        {"seconds", seconds, "s"},
        {"gteps", seconds > 0 ? edges / seconds / 1e9 : 0, "1e9 edges/s"},
    };
    int n = (int)(sizeof f / sizeof f[0]);
    for (int i = 0; i < n && i < cap; i++)
        out[i] = f[i];
    n = n < cap ? n : cap;
    return n + hf__gapp_traffic_figures(&b->ga, out + n, cap - n);
}

/* [run] rounds stopped the search (struct hf_app.stopped): the depths set so
 * far are right, but vertices not yet reached may be reachable, so the output
 * would be wrong: none is written (bfs_teardown writes only a finished one). */
static int bfs_stopped(void *ctx, const struct hf_load *next, char *left, size_t len)
{
    (void)next;
    struct hf_bfs *b = ctx;
    snprintf(left, len, "level %d of the search, a frontier of %zu vertices", (int)b->level,
             b->fr.n);
    /* The probe's level never ran: out of the figures with it. */
    b->edges_traversed -= b->pull ? b->ga.g.ne : b->fr.pre[b->fr.n];
    b->rounds_pull -= b->pull;
    return HF_STOP_NO_RESULT;
}

static void bfs_teardown(void *ctx)
{
    struct hf_bfs *b = ctx;
    if (!b)
        return;
    if (b->finished && hf__gapp_write_values(&b->ga, b, depth_value))
        fprintf(stderr, "hetfarm: bfs: %s\n", hf_last_error());
    hf__frontier_free(&b->fr);
    free(b->front_bits);
    free(b->depth);
    hf__gapp_destroy(&b->ga);
    free(b);
}

/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key bfs_keys[] = {
    HF_GAPP_KEYS,
    HF_GAPP_SOURCE_KEY,
    HF_GAPP_PLACEMENT_KEYS,
    {NULL, "direction", HF_KEY_STR, 0, 0, 0, "auto|push|pull", "auto",
     "push (top-down), pull (bottom-up), or switch by Beamer's rule"},
    {NULL, "alpha", HF_KEY_NUM, 1e-3, 1e9, 0, NULL, "14", "pull when frontier edges > m_u / alpha"},
    {NULL, "beta", HF_KEY_NUM, 1e-3, 1e9, 0, NULL, "24", "push when frontier < n / beta"},
    {NULL, "verify_full", HF_KEY_INT, 0, 9.2233720368547748e18, 0, NULL, "2097152",
     "vertices up to which verify compares with the reference"},
    {NULL, "fuse_edges", HF_KEY_INT, 0, 1099511627776.0, 0, NULL, "65536",
     "a GPU with a whole push round runs levels of up to this many edges itself (0: off)"},
    {NULL, "fuse", HF_KEY_STR, 0, 0, 0, "search|small", "search",
     "search: that GPU also runs the bigger levels, to the search's end; small: only those"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_bfs = {
    .keys = bfs_keys,
    .name = "bfs",
    .summary = "breadth-first search, direction-optimizing, one round per level",
    .create = bfs_create,
    .next_load = bfs_next_load,
    .partition = bfs_partition,
    .run_cpu = bfs_run_cpu,
#ifdef HF_HAVE_CUDA
    .run_cuda = bfs_run_cuda,
#endif
    .verify = bfs_verify,
    .teardown = bfs_teardown,
    .signature = bfs_signature,
    .shared = bfs_shared,
    .setup = bfs_setup,
    .collect = bfs_collect,
    .figures = bfs_figures,
    .round_figures = bfs_round_figures,
    .stopped = bfs_stopped,
    .default_grain = 0, /* hf__gapp_grain */
};
