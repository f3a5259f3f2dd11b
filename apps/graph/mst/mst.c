/* mst.c - minimum spanning forest by Borůvka: the hetfarm template filled
 * in, one Borůvka step per two rounds.
 *
 * DESIGN
 * ------
 * A Borůvka step finds, for every component, its lightest outgoing edge and
 * merges the components along those edges; components at least halve every
 * step, so there are at most log2(nv) + 1 steps. The edge order is strict
 * (mst.h: weight bits, then the canonical arc id), so the chosen edges never
 * close a cycle and the forest is the one Kruskal finds with the same key.
 *
 * A step is two rounds, both over the vertex range 0..nv-1:
 *
 *   DISCOVER  chunks are vertex ranges whose work is the arcs they scan.
 *             Each vertex finds its lightest arc to another component
 *             (per-vertex min), then lowers best[off + comp[u]] with one
 *             atomic min and records the change (the reduction to the
 *             component's slot). best is a MIN shared array: at the round's
 *             end the framework merges every device's changes, moving only
 *             the slots that changed. A vertex that finds no such arc never
 *             will (components only grow): it sets its flag in `settled`, an
 *             OR shared array, and later DISCOVER rounds skip it and do not
 *             count its arcs in the chunks' work.
 *   (host)    In next_load (or verify, whichever comes first) the host reads
 *             the step's slots, unions the components along the chosen edges
 *             (union-find over compact ids), adds each edge that joined two
 *             sets to the forest, numbers the new components 0..live-1 and
 *             computes every vertex's new label; all but the unions run
 *             over the host's OpenMP team. A component that found no edge
 *             can never grow again: DEAD.
 *   LABEL     one chunk over all vertices (a copy is not worth splitting),
 *             whose bundle installs the new labels in comp. comp is an OWNED
 *             shared array: a GPU's range comes back to the host when its
 *             bundle ends and every GPU gets the whole array at the round's
 *             end, so each device starts the next DISCOVER with every label.
 *
 * Why this shape: the framework sends host-side changes of shared arrays to
 * the GPUs only in round 0, and a MIN array cannot be raised again. So comp,
 * recomputed on the host, travels the one way the framework offers after
 * round 0 (an OWNED array written by the round that owns it), and best is
 * never reset: step s uses a fresh region [off, off + live) of it, indexed by
 * the compact ids that comp holds. Live components at least halve per step,
 * so 2 nv + 1 slots are enough for the whole run. Stale slots of earlier
 * steps are never read again.
 *
 * The run ends when a step finds no edge or leaves at most one live
 * component (a lone component has nothing left to connect to: every other
 * one is dead, and dead components have no outgoing edges).
 *
 * A simulation that does not execute bundles never calls setup; next_load
 * then does each round's work on the host before drawing the next load, so
 * the simulated run has the rounds (and the forest) of a real one.
 *
 * Output: `[load] out` gets the forest, one edge per line `u<TAB>v<TAB>w`
 * (u < v, input numbering, sorted); the total weight, the forest's edges,
 * the components and the Borůvka steps are the app's figures (results.json's
 * "app_figures" and the line under `hetfarm run`'s table).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "mst.h"
#ifdef HF_HAVE_CUDA
#include "hf_cuda.h"
#endif

static int mst_create(void **ctx, hf_config_t cfg)
{
    struct hf_mst *m = calloc(1, sizeof *m);
    if (!m)
        return hf_fail(HF_ENOMEM, "mst: out of memory");
    *ctx = m;
    int rc = hf_config_long(cfg, "load", "verify_full", 1L << 20, 0, __LONG_MAX__, &m->verify_full);
    if (rc || (rc = hf__gapp_create(&m->ga, cfg, 1, 0)))
        return rc;
    const struct hf_graph *g = &m->ga.g;
    if (!g->symmetric)
        return hf_fail(HF_ECONFIG, "%s: mst needs an undirected graph (symmetrise = yes)",
                       hf_config_where(cfg, "load", "symmetrise"));
    if (g->ne > UINT32_MAX || g->nv > UINT32_MAX / 2 - 1)
        return hf_fail(HF_ECONFIG,
                       "mst: %llu vertices, %llu arcs: at most 2^31 - 2 vertices "
                       "and 2^32 - 1 arcs (edge ids are 32 bits)",
                       (unsigned long long)g->nv, (unsigned long long)g->ne);
    return 0;
}

/* Finds the canonical arc of every arc: itself when it goes from the lower
 * to the higher id, else the first arc lo -> hi of equal weight (the lists
 * are sorted, so a binary search finds hi in lo's list). */
static void canonical_arcs(const struct hf_graph *g, uint32_t *canon)
{
#pragma omp parallel for schedule(dynamic, 1024)
    for (uint64_t u = 0; u < g->nv; u++)
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++) {
            hf_vid_t v = g->adj[j];
            canon[j] = (uint32_t)j;
            if (v >= u)
                continue;
            uint64_t lo = g->offsets[v], hi = g->offsets[v + 1];
            while (lo < hi) { /* the first arc of v whose head is >= u */
                uint64_t mid = lo + (hi - lo) / 2;
                if (g->adj[mid] < u)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            for (; lo < g->offsets[v + 1] && g->adj[lo] == u; lo++)
                if (!g->weights || g->weights[lo] == g->weights[j]) {
                    canon[j] = (uint32_t)lo;
                    break;
                }
        }
}

static int mst_setup(void *ctx, const struct hf_devices *devs)
{
    struct hf_mst *m = ctx;
    const struct hf_graph *g = &m->ga.g;
    (void)devs;
    m->best_count = 2 * g->nv + 1;
    m->canon = malloc((g->ne ? g->ne : 1) * sizeof *m->canon);
    m->comp = malloc(g->nv * sizeof *m->comp);
    m->next_comp = malloc(g->nv * sizeof *m->next_comp);
    m->uf = malloc(g->nv * sizeof *m->uf);
    m->lab = malloc(g->nv * sizeof *m->lab);
    m->forest = malloc(g->nv * sizeof *m->forest);
    m->best = malloc(m->best_count * sizeof *m->best);
    m->settled = malloc(g->nv);
    m->pre = malloc((g->nv + 1) * sizeof *m->pre);
    if (!m->canon || !m->comp || !m->next_comp || !m->uf || !m->lab || !m->forest || !m->best ||
        !m->settled || !m->pre)
        return hf_fail(HF_ENOMEM, "mst: out of memory for %llu vertices",
                       (unsigned long long)g->nv);
    canonical_arcs(g, m->canon);
    return 0;
}

static int mst_shared(void *ctx, struct hf_shared *out, int cap)
{
    struct hf_mst *m = ctx;
    int n = hf__gapp_shared_csr(&m->ga, 1, out, cap);
    if (n < 0 || n + 4 > cap)
        return n < 0 ? n : hf_fail(HF_EAPP, "mst: no room for its shared arrays");
    m->s_offsets = HF_GAPP_OFFSETS;
    m->s_adj = HF_GAPP_ADJ;
    m->s_weights = n == 3 ? HF_GAPP_WEIGHTS : -1;
    const struct hf_graph *g = &m->ga.g;
    m->s_canon = n;
    out[n++] = (struct hf_shared){"mst.canon", m->canon, g->ne ? g->ne : 1, HF_ELEM_U32,
                                  HF_SHARED_READONLY};
    m->s_comp = n;
    out[n++] = (struct hf_shared){"mst.comp", m->comp, g->nv, HF_ELEM_U32, HF_SHARED_OWNED};
    m->s_best = n;
    out[n++] = (struct hf_shared){"mst.best", m->best, m->best_count, HF_ELEM_U64, HF_SHARED_MIN};
    m->s_settled = n;
    out[n++] = (struct hf_shared){"mst.settled", m->settled, g->nv, HF_ELEM_U8, HF_SHARED_OR};
    return n;
}

/* The root of compact id x, without writing: the team reads uf at once. */
static uint32_t uf_root(const uint32_t *uf, uint32_t x)
{
    while (uf[x] != x)
        x = uf[x];
    return x;
}

/* The root of compact id x in the step's union-find, halving the path. */
static uint32_t uf_find(uint32_t *uf, uint32_t x)
{
    while (uf[x] != x) {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    return x;
}

/* The host half of a step, after its DISCOVER round: merges along the chosen
 * edges, extends the forest, and prepares the next labels (DESIGN). */
static int merge_step(struct hf_mst *m)
{
    const struct hf_graph *g = &m->ga.g;
    const uint64_t *best = m->best + m->off;
    uint32_t live = (uint32_t)m->live;
    m->pending = 0;
    m->steps++;
    /* The components at both ends of each slot's arc, looked up over the
     * team: an arc's source is a binary search over the offsets (~22 cache
     * misses), and step 1 has a slot per vertex (serial, 1.9 s of an H100
     * host's kron-22 run). Slot c's arc (the canonical one of its edge) has
     * one end in c, so the source is searched only where the target is c's.
     * lab and next_comp are free until they are set below. */
    uint32_t *end_a = m->lab, *end_b = m->next_comp, bad = UINT32_MAX;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (uint32_t c = 0; c < live; c++) {
        m->uf[c] = c;
        if (best[c] == HF_MST_NONE)
            continue;
        uint32_t j = (uint32_t)best[c];
        end_b[c] = m->comp[g->adj[j]];
        end_a[c] = end_b[c] != c ? c : m->comp[hf__mst_arc_source(g, j)];
        if (end_a[c] >= live || end_b[c] >= live || end_a[c] == end_b[c])
            bad = c < bad ? c : bad;
    }
    if (bad != UINT32_MAX)
        return hf_fail(HF_EAPP,
                       "mst: step %d: slot %u names arc %u between components %u and %u",
                       m->steps, bad, (uint32_t)best[bad], end_a[bad], end_b[bad]);
    size_t found = 0;
    for (uint32_t c = 0; c < live; c++) {
        if (best[c] == HF_MST_NONE)
            continue;
        found++;
        uint32_t j = (uint32_t)best[c];
        uint32_t a = uf_find(m->uf, end_a[c]), b = uf_find(m->uf, end_b[c]);
        if (a == b) /* both ends chose this edge, or (never with a strict order) a cycle */
            continue;
        m->uf[a > b ? a : b] = a < b ? a : b;
        HF_ASSERT_MSG(m->nforest < g->nv, "mst: more forest edges than vertices");
        m->forest[m->nforest++] = j;
        m->weight += g->weights ? (double)g->weights[j] : 1.0;
    }
    /* New compact ids for the sets of live components, in the order of their
     * roots (a set's lowest id: a union hangs the higher root under the
     * lower); components that found no edge are alone in their set and die.
     * Over the team: each id walks to its root (the unions are done, uf is
     * only read; their finds halved the paths), pre flags the roots and its
     * prefix sums number them (pre is free until the next arcs_to_scan).
     * Serial, this and the step-to-root pass took 15-25 ms of the 2-core
     * VM's kron-20 step 1: O(live) random reads, 4M at kron-22. */
#pragma omp parallel for schedule(static) if (live >= HF_GAPP_TEAM_MIN)
    for (uint32_t c = 0; c < live; c++) {
        m->lab[c] = best[c] == HF_MST_NONE ? HF_MST_DEAD : uf_root(m->uf, c);
        m->pre[c] = m->lab[c] == c;
    }
    uint64_t next = hf__gapp_scan(m->pre, live);
    if (found == 0 || next <= 1) {
        m->finished = 1;
        return 0;
    }
#pragma omp parallel for schedule(static) if (live >= HF_GAPP_TEAM_MIN)
    for (uint32_t c = 0; c < live; c++) /* every id straight to its set's new id */
        m->uf[c] = m->lab[c] == HF_MST_DEAD ? HF_MST_DEAD : (uint32_t)m->pre[m->lab[c]];
    const uint32_t *newid = m->uf;
#pragma omp parallel for schedule(static)
    for (uint64_t v = 0; v < g->nv; v++)
        m->next_comp[v] = m->comp[v] == HF_MST_DEAD ? HF_MST_DEAD : newid[m->comp[v]];
    m->off += live;
    m->live = next;
    if (m->off + m->live > m->best_count)
        return hf_fail(HF_EAPP, "mst: step %d needs best slots up to %llu, only %zu", m->steps,
                       (unsigned long long)(m->off + m->live), m->best_count);
    return 0;
}

static void discover(struct hf_mst *m, const struct hf_load *load, size_t begin, size_t end,
                     int nthreads);

/* Fills pre[] with the prefix sums of the arcs the coming DISCOVER round
 * scans (settled and dead vertices scan none) and returns their total, so
 * that a chunk's work is what it really costs; over the host's team. */
static uint64_t arcs_to_scan(struct hf_mst *m)
{
    const struct hf_graph *g = &m->ga.g;
#pragma omp parallel for schedule(static) if (g->nv >= HF_GAPP_TEAM_MIN)
    for (uint64_t v = 0; v < g->nv; v++)
        m->pre[v] =
            m->settled[v] || m->comp[v] == HF_MST_DEAD ? 0 : hf_graph_degree(g, (hf_vid_t)v);
    return hf__gapp_scan(m->pre, g->nv);
}

static int mst_next_load(void *ctx, struct hf_load *load)
{
    struct hf_mst *m = ctx;
    const struct hf_graph *g = &m->ga.g;
    int rc;
    /* A simulation that does not execute bundles never called setup: the
     * host then does every round's work itself, so that the simulated run
     * has the rounds, and the forest, of a real one. */
    if (!m->canon) {
        if ((rc = mst_setup(m, NULL)))
            return rc;
        m->host_only = 1;
    }
    if (m->host_only && load->round > 0 && m->pending)
        discover(m, load, 0, g->nv, 0);
    else if (m->host_only && load->round > 0 && m->phase == HF_MST_LABEL)
        memcpy(m->comp, m->next_comp, g->nv * sizeof *m->comp);
    if (load->round == 0) {
        /* Also after a standalone pass: everything starts again (over the
         * host's team: the run's first touch of these arrays). */
#pragma omp parallel for schedule(static) if (g->nv >= HF_GAPP_TEAM_MIN)
        for (uint64_t v = 0; v < g->nv; v++) {
            m->comp[v] = (uint32_t)v;
            m->settled[v] = 0;
        }
#pragma omp parallel for schedule(static) if (m->best_count >= HF_GAPP_TEAM_MIN)
        for (size_t i = 0; i < m->best_count; i++)
            m->best[i] = HF_MST_NONE;
        m->off = 0;
        m->live = g->nv;
        m->nforest = 0;
        m->weight = 0;
        m->steps = 0;
        m->finished = m->verified = 0;
        m->phase = HF_MST_LABEL; /* so that round 0 is a DISCOVER */
        m->pending = 0;
    }
    if (m->pending && (rc = merge_step(m)))
        return rc;
    if (m->finished)
        return 0;
    load->units = g->nv;
    if (m->phase == HF_MST_LABEL) {
        m->phase = HF_MST_DISCOVER;
        m->pending = 1;
        load->work = (double)arcs_to_scan(m) + (double)g->nv;
        load->bytes = 0; /* only the changed slots and settled flags move, at the merge */
    } else {
        m->phase = HF_MST_LABEL;
        load->work = (double)g->nv;
        load->bytes = 4.0 * (double)g->nv; /* the new labels */
    }
    return 1;
}

/* DISCOVER rounds: chunks of `grain` vertices whose work is the arcs they
 * scan plus their vertices. LABEL rounds: one chunk, since installing labels
 * is a copy that is not worth splitting (every GPU receives the whole array
 * at the round's end anyway). */
static size_t mst_partition(void *ctx, const struct hf_load *load, size_t grain,
                            struct hf_chunk *out, size_t cap)
{
    struct hf_mst *m = ctx;
    size_t units = load->units;
    if (m->phase == HF_MST_LABEL) {
        if (out && cap)
            out[0] = (struct hf_chunk){
                .index = 0, .begin = 0, .end = units, .work = load->work, .bytes = load->bytes};
        return 1;
    }
    size_t n = (units + grain - 1) / grain;
    for (size_t i = 0; out && i < n && i < cap; i++) {
        size_t b = i * grain, e = b + grain < units ? b + grain : units;
        out[i] = (struct hf_chunk){.index = i,
                                   .begin = b,
                                   .end = e,
                                   .work = (double)(m->pre[e] - m->pre[b]) + (double)(e - b)};
    }
    return n;
}

/* Lowers best[i] to k; the thread that lowers it records the change. */
static void lower_best(struct hf_mst *m, const struct hf_load *load, size_t i, uint64_t k)
{
    uint64_t cur = __atomic_load_n(&m->best[i], __ATOMIC_RELAXED);
    while (k < cur)
        if (__atomic_compare_exchange_n(&m->best[i], &cur, k, 1, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
            hf_shared_changed(load, m->s_best, i);
            return;
        }
}

/* The edge discovery of vertices [begin, end): each one's lightest arc to
 * another component lowers its component's slot. */
static void discover(struct hf_mst *m, const struct hf_load *load, size_t begin, size_t end,
                     int nthreads)
{
    const struct hf_graph *g = &m->ga.g;
#pragma omp parallel for schedule(dynamic, 256)                                                    \
    num_threads(nthreads > 0 ? nthreads : omp_get_max_threads())
    for (size_t u = begin; u < end; u++) {
        uint32_t c = m->comp[u];
        if (c == HF_MST_DEAD || m->settled[u])
            continue;
        uint64_t kmin = HF_MST_NONE;
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++) {
            if (m->comp[g->adj[j]] == c)
                continue;
            uint64_t k = hf__mst_key(g->weights, j, m->canon[j]);
            kmin = k < kmin ? k : kmin;
        }
        if (kmin != HF_MST_NONE) {
            lower_best(m, load, m->off + c, kmin);
        } else {               /* components only grow: its arcs stay inside for good */
            m->settled[u] = 1; /* only this bundle looks at u this round */
            hf_shared_changed(load, m->s_settled, u);
        }
    }
}

static int mst_run_cpu(void *ctx, const struct hf_bundle *bu, int nthreads)
{
    struct hf_mst *m = ctx;
    if (m->phase == HF_MST_LABEL)
        memcpy(m->comp + bu->begin, m->next_comp + bu->begin,
               (bu->end - bu->begin) * sizeof *m->comp);
    else
        discover(m, bu->load, bu->begin, bu->end, nthreads);
    return 0;
}

#ifdef HF_HAVE_CUDA
static int mst_run_cuda(void *ctx, const struct hf_bundle *piece, struct hf_cuda *gpu)
{
    return hf__mst_cuda(ctx, piece, gpu);
}
#endif

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Checks the complete forest against Kruskal: the weight (relative 1e-6), the
 * edge count (nv - components), and up to verify_full vertices the edges. */
static int check_forest(struct hf_mst *m)
{
    const struct hf_graph *g = &m->ga.g;
    uint32_t *ref;
    size_t n;
    double w;
    int rc = hf__mst_ref(g, &ref, &n, &w);
    if (rc)
        return rc;
    double tol = 1e-6 * (w > 1.0 ? w : 1.0);
    if (m->nforest != n)
        rc = hf_fail(HF_EVERIFY, "mst: %zu forest edges, Kruskal finds %zu (%llu components)",
                     m->nforest, n, (unsigned long long)(g->nv - n));
    else if (!(m->weight - w <= tol && w - m->weight <= tol))
        rc = hf_fail(HF_EVERIFY, "mst: forest weight %.17g, Kruskal finds %.17g", m->weight, w);
    else if ((long)g->nv <= m->verify_full) {
        qsort(m->forest, m->nforest, sizeof *m->forest, cmp_u32);
        for (size_t i = 0; i < n && !rc; i++)
            if (m->forest[i] != ref[i]) {
                uint32_t j = m->forest[i] < ref[i] ? m->forest[i] : ref[i];
                rc = hf_fail(HF_EVERIFY, "mst: edge %llu-%llu is in %s forest only",
                             (unsigned long long)hf__mst_arc_source(g, j) + (uint64_t)g->base,
                             (unsigned long long)g->adj[j] + (uint64_t)g->base,
                             j == ref[i] ? "Kruskal's" : "the app's");
            }
    }
    free(ref);
    return rc;
}

static int mst_verify(void *ctx, const struct hf_load *load)
{
    struct hf_mst *m = ctx;
    (void)load;
    int rc;
    if (m->pending && (rc = merge_step(m)))
        return rc;
    if (!m->finished || m->verified)
        return 0; /* the forest grows on: it is checked when complete */
    m->verified = 1;
    return check_forest(m);
}

/* Writes the forest, `u<TAB>v<TAB>w` sorted, to a temporary name, then renames it. */
static int write_forest(struct hf_mst *m)
{
    const struct hf_graph *g = &m->ga.g;
    const char *path = m->ga.out_path;
    size_t plen = strlen(path) + 32;
    char *tmp = malloc(plen);
    if (!tmp)
        return hf_fail(HF_ENOMEM, "mst: out of memory");
    snprintf(tmp, plen, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(tmp);
        return hf_fail(HF_EIO, "%s: cannot write the output", path);
    }
    qsort(m->forest, m->nforest, sizeof *m->forest, cmp_u32);
    uint64_t u = 0, base = (uint64_t)g->base;
    for (size_t i = 0; i < m->nforest; i++) {
        uint32_t j = m->forest[i];
        while (g->offsets[u + 1] <= j) /* arcs ascend, so their sources do too */
            u++;
        if (g->weights)
            fprintf(f, "%llu\t%llu\t%.9g\n", (unsigned long long)(u + base),
                    (unsigned long long)(g->adj[j] + base), (double)g->weights[j]);
        else
            fprintf(f, "%llu\t%llu\t1\n", (unsigned long long)(u + base),
                    (unsigned long long)(g->adj[j] + base));
    }
    int bad = ferror(f) | (fclose(f) != 0);
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        free(tmp);
        return hf_fail(HF_EIO, "%s: cannot write the output", path);
    }
    free(tmp);
    return 0;
}

static void mst_signature(void *ctx, char *buf, size_t len)
{
    const struct hf_mst *m = ctx;
    snprintf(buf, len, "%s nv=%llu ne=%llu", m->ga.g.source_desc, (unsigned long long)m->ga.g.nv,
             (unsigned long long)m->ga.g.ne);
}

/* The forest's weight and size, and how many Borůvka steps it took. */
static int mst_figures(void *ctx, double seconds, struct hf_figure *out, int cap)
{
    const struct hf_mst *m = ctx;
    if (!m->finished || cap < 5)
        return 0;
    out[0] = (struct hf_figure){"weight", m->weight, "total edge weight"};
    out[1] = (struct hf_figure){"edges", (double)m->nforest, "forest edges"};
    out[2] = (struct hf_figure){"components", (double)(m->ga.g.nv - m->nforest), ""};
    out[3] = (struct hf_figure){"steps", m->steps, "Boruvka steps"};
    out[4] = (struct hf_figure){"seconds", seconds, "s"};
    return 5;
}

/* [run] rounds stopped the Borůvka steps (struct hf_app.stopped): the forest
 * is not spanning yet, so none is written (mst_teardown writes only a
 * finished one) and mst_figures report nothing. */
static int mst_stopped(void *ctx, const struct hf_load *next, char *left, size_t len)
{
    (void)next;
    const struct hf_mst *m = ctx;
    snprintf(left, len, "Boruvka step %d, %llu live components, %zu forest edges so far",
             m->steps, (unsigned long long)m->live, m->nforest);
    return HF_STOP_NO_RESULT;
}

static void mst_teardown(void *ctx)
{
    struct hf_mst *m = ctx;
    if (!m)
        return;
    if (m->finished && m->ga.out_path && write_forest(m))
        fprintf(stderr, "hetfarm: mst: %s\n", hf_last_error());
    free(m->canon);
    free(m->comp);
    free(m->next_comp);
    free(m->uf);
    free(m->lab);
    free(m->forest);
    free(m->best);
    free(m->settled);
    free(m->pre);
    hf__gapp_destroy(&m->ga);
    free(m);
}

/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key mst_keys[] = {
    HF_GAPP_KEYS,
    {NULL, "verify_full", HF_KEY_INT, 0, 9.2233720368547748e18, 0, NULL, "1048576",
     "vertices up to which verify compares the edge set with Kruskal's"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_mst = {
    .keys = mst_keys,
    .figures = mst_figures,
    .stopped = mst_stopped,
    .name = "mst",
    .summary = "minimum spanning forest, Borůvka: edge discovery + label rounds per step",
    .create = mst_create,
    .setup = mst_setup,
    .next_load = mst_next_load,
    .partition = mst_partition,
    .run_cpu = mst_run_cpu,
#ifdef HF_HAVE_CUDA
    .run_cuda = mst_run_cuda,
#endif
    .verify = mst_verify,
    .teardown = mst_teardown,
    .signature = mst_signature,
    .shared = mst_shared,
    .default_grain = 4096,
};
