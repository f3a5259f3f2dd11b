/* partition_initial.c - the partition of the coarsest graph, on the CPU.
 *
 * DESIGN
 * ------
 * The coarsest graph is small (about coarsen_to vertices: METIS's own
 * k-way target, max(n / (20 log2 k), 30 k), capped at HF_PART_COARSEST k),
 * so its partition is a serial job on the host, the point where the run
 * stops being a task farm: that is the CPU-only switch, by rule, whatever
 * devices the run has. We call METIS 5 (objective cut, the same seed)
 * rather than writing our own recursive bisection: it is installed
 * wherever the build is (Debian's libmetis-dev), it is the reference the
 * issue measures us against, and on a graph of a few thousand vertices it
 * takes milliseconds, so the quality of the whole partition is decided by
 * our coarsening and refinement on the levels above it, which is what this
 * app is about.
 *
 * Which METIS call: on a graph that coarsening brought down to coarsen_to,
 * the one gpmetis's k-way makes on its own coarsest graph
 * (InitKWayPartitioning): recursive bisection, METIS_PartGraphRecursive,
 * each bisection within (1 + imbalance)^(1 / ln k) so that the k parts end
 * near the bound (the balance pass and the refinement do the rest).
 * METIS_PartGraphKway there would coarsen once more, bisect recursively
 * several times over and refine its k-way result: on rgg 2^20's coarsest
 * graph (8.5k vertices) 20 ms against 15 ms for the bisection alone, and on
 * 3.5k vertices 17-18 ms against 7 ms, for the same final cut (our levels'
 * refinement gives back what METIS's would have; 9edd91b:bench/NOTES.md). A
 * coarsest graph that coarsening left above coarsen_to (a stalled
 * matching) goes to METIS_PartGraphKway, which coarsens it further itself.
 *
 * With a team of 4 or more where next_load's glue runs in parallel, the
 * recursive bisection's independent halves run side by side (rb_split):
 * one METIS_PartGraphRecursive call bisects the coarsest graph into target
 * weights k/2 : k - k/2, as METIS's own recursion does, each half's induced
 * subgraph goes to a task of the main thread's team that does the same
 * with its parts, log2 t times over for a team of t, and each piece then
 * goes to one METIS_PartGraphRecursive call for its parts. It is METIS's
 * algorithm (each call coarsens, bisects and refines its piece as the
 * single call does inside), with its halves as tasks: serial, the call was
 * 12-17 ms of the 16-core GPU host's glue (initial_s, rgg 2^20), while its
 * top bisection, the one part that stays serial, is ~1/8 of it (1.0 of 8.2
 * ms on the 2-core dev VM, one run). On the dev VM with a team of 4 (2
 * cores): 8.2 -> 6.4 ms in that run, initial_s median of 12 8.1 -> 7.2 ms;
 * the cuts (rgg 2^20 with teams of 4 and 16, 40 runs: 3298 / 3266 -> 3284 /
 * 3287; road 1024^2, 16: 2366 -> 2365; grid 512^2, 4: 1241 -> 1218) and the
 * coarsest graph's (rgg 5025 / 4955 -> 5003 / 5026) are within noise. A
 * failed call anywhere falls back to the one serial call. METIS calls run
 * side by side here: Debian's libmetis keeps GKlib's per-call state (its
 * memory core, its error jump buffers) thread-local (TLS), and the glibc
 * rand it also calls is locked, so concurrent calls are safe; which draws
 * each gets depends on timing, as the partition's determinism note says.
 *
 * METIS indices are 32-bit (IDXTYPEWIDTH in Debian's build), so the coarsest
 * graph's total vertex and edge weight must fit; a graph whose weights do
 * not is refused with a message. Self-loops and duplicate arcs (possible
 * only when the input itself is the coarsest level) are left out or merged
 * on the way, as METIS expects, and so are arcs of weight 0: they cut
 * nothing, and METIS 5.1's matching crashes on them (seen on a grid with
 * zero-weight edges). A coarsest graph without a single edge has
 * nothing to cut; it is bin-packed instead (heaviest vertex first into the
 * lightest part), since METIS has no edges to work with.
 */
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <metis.h>

#include "partition_internal.h"

/* A graph in METIS's arrays; orig[v] is v's vertex in the coarsest graph. */
struct rb_graph {
    idx_t n;
    idx_t *xadj, *adjncy, *adjwgt, *vwgt, *orig;
};

/* What every METIS call of one initial partition shares. */
struct rb_args {
    idx_t seed;
    real_t ub;      /* the tolerance of each bisection */
    uint32_t *part; /* the coarsest graph's parts (by orig) */
    int failed;     /* a METIS call failed (atomic) */
};

/* METIS_PartGraphRecursive on g into k parts (target weights tp, NULL:
 * equal) with each bisection within a->ub; METIS's return code. */
static int metis_rb(const struct rb_graph *g, idx_t k, real_t *tp, const struct rb_args *a,
                    idx_t *part)
{
    idx_t options[METIS_NOPTIONS], ncon = 1, objval = 0, n = g->n;
    real_t ub = a->ub;
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;
    options[METIS_OPTION_NUMBERING] = 0;
    options[METIS_OPTION_SEED] = a->seed;
    return METIS_PartGraphRecursive(&n, &ncon, g->xadj, g->adjncy, g->vwgt, NULL, g->adjwgt, &k, tp,
                                    &ub, options, &objval, part);
}

/* The subgraph of g induced by the vertices v with side[v] == s, into h
 * (arrays malloc'd; rb_free frees them). -1 when out of memory. */
static int rb_side(const struct rb_graph *g, const idx_t *side, idx_t s, idx_t *pos,
                   struct rb_graph *h)
{
    idx_t n = 0, m = 0;
    for (idx_t v = 0; v < g->n; v++)
        if (side[v] == s) {
            pos[v] = n++;
            m += g->xadj[v + 1] - g->xadj[v];
        }
    h->n = n;
    h->xadj = malloc(((size_t)n + 1) * sizeof *h->xadj);
    h->adjncy = malloc(((size_t)m + 1) * sizeof *h->adjncy);
    h->adjwgt = malloc(((size_t)m + 1) * sizeof *h->adjwgt);
    h->vwgt = malloc(((size_t)n + 1) * sizeof *h->vwgt);
    h->orig = malloc(((size_t)n + 1) * sizeof *h->orig);
    if (!h->xadj || !h->adjncy || !h->adjwgt || !h->vwgt || !h->orig)
        return -1;
    idx_t u = 0;
    m = 0;
    h->xadj[0] = 0;
    for (idx_t v = 0; v < g->n; v++) {
        if (side[v] != s)
            continue;
        for (idx_t j = g->xadj[v]; j < g->xadj[v + 1]; j++)
            if (side[g->adjncy[j]] == s) {
                h->adjncy[m] = pos[g->adjncy[j]];
                h->adjwgt[m++] = g->adjwgt[j];
            }
        h->vwgt[u] = g->vwgt[v];
        h->orig[u] = g->orig[v];
        h->xadj[++u] = m;
    }
    return 0;
}

static void rb_free(struct rb_graph *h)
{
    free(h->xadj);
    free(h->adjncy);
    free(h->adjwgt);
    free(h->vwgt);
    free(h->orig);
}

/* Partitions g into parts first .. first + k - 1 as METIS's recursive
 * bisection does, but with its two halves as tasks of the team: bisected
 * here (target weights k/2 : k - k/2, METIS's split), each half then
 * partitioned by its own task, `depth` times over; below that (or for a
 * half with no arc left) one METIS_PartGraphRecursive call. */
static void rb_split(const struct rb_graph *g, idx_t k, idx_t first, int depth, struct rb_args *a)
{
    idx_t *part = malloc(((size_t)g->n + 1) * sizeof *part);
    idx_t *pos = malloc(((size_t)g->n + 1) * sizeof *pos);
    struct rb_graph h[2] = {{0}, {0}};
    int leaf = depth == 0 || k < 4 || g->xadj[g->n] == 0;
    idx_t k1 = k / 2;
    real_t tp[2] = {(real_t)k1 / (real_t)k, (real_t)(k - k1) / (real_t)k};
    if (!part || !pos || metis_rb(g, leaf ? k : 2, leaf ? NULL : tp, a, part) != METIS_OK) {
        __atomic_store_n(&a->failed, 1, __ATOMIC_RELAXED);
    } else if (leaf) {
        for (idx_t v = 0; v < g->n; v++)
            a->part[g->orig[v]] = (uint32_t)(first + part[v]);
    } else if (rb_side(g, part, 0, pos, &h[0]) || rb_side(g, part, 1, pos, &h[1])) {
        __atomic_store_n(&a->failed, 1, __ATOMIC_RELAXED);
    } else {
#pragma omp task shared(h, a)
        rb_split(&h[0], k1, first, depth - 1, a);
#pragma omp task shared(h, a)
        rb_split(&h[1], k - k1, first + k1, depth - 1, a);
#pragma omp taskwait
    }
    rb_free(&h[0]);
    rb_free(&h[1]);
    free(part);
    free(pos);
}

/* How many times the recursive bisection splits into tasks: with a team of
 * t threads where the glue runs in parallel (4 or more: on 2 cores a team
 * here fought the device team's spinning threads), log2 t, keeping at least
 * two parts a task; 0: one serial METIS call. */
static int rb_depth(long k)
{
    int t = omp_get_max_threads(), depth = 0;
    if (t < 4)
        return 0;
    while ((2l << depth) <= t && (4l << depth) <= k)
        depth++;
    return depth;
}

/* Orders vertices of the level `ctx` by weight, heaviest first. */
static int by_weight_desc(const void *a, const void *b, void *ctx)
{
    const struct hf_plevel *l = ctx;
    int64_t wa = hf__pl_vw(l, *(const uint32_t *)a), wb = hf__pl_vw(l, *(const uint32_t *)b);
    return wa < wb ? 1 : wa > wb ? -1 : 0;
}

/* Bin packing for a coarsest graph without edges: heaviest vertex first into
 * the lightest part (a qsort is cheap at the coarsest level's size). */

static int bin_pack(struct hf_partition *c, struct hf_plevel *l)
{
    uint32_t *order = malloc(l->nv * sizeof *order);
    int64_t *load = calloc((size_t)c->k, sizeof *load);
    if (!order || !load) {
        free(order);
        free(load);
        return hf_fail(HF_ENOMEM, "partition: out of memory for the initial partition");
    }
    for (uint64_t v = 0; v < l->nv; v++)
        order[v] = (uint32_t)v;
    qsort_r(order, l->nv, sizeof *order, by_weight_desc, l);
    for (uint64_t i = 0; i < l->nv; i++) {
        long best = 0;
        for (long p = 1; p < c->k; p++)
            if (load[p] < load[best])
                best = p;
        l->part[order[i]] = (uint32_t)best;
        load[best] += hf__pl_vw(l, order[i]);
    }
    free(order);
    free(load);
    c->initial_cut = 0;
    c->initial_metis = 0;
    return 0;
}

int hf__part_initial(struct hf_partition *c, int li)
{
    struct hf_plevel *l = &c->lv[li];
    if (l->nv > INT32_MAX || l->ne > INT32_MAX)
        return hf_fail(HF_ERANGE,
                       "partition: the coarsest graph (%llu vertices, %llu arcs) is "
                       "too large for METIS's 32-bit indices",
                       (unsigned long long)l->nv, (unsigned long long)l->ne);
    idx_t n = (idx_t)l->nv, ncon = 1, nparts = (idx_t)c->k, objval = 0;
    idx_t *xadj = malloc(((size_t)n + 1) * sizeof *xadj);
    idx_t *adjncy = malloc((l->ne ? l->ne : 1) * sizeof *adjncy);
    idx_t *adjwgt = malloc((l->ne ? l->ne : 1) * sizeof *adjwgt);
    idx_t *vwgt = malloc(((size_t)n ? (size_t)n : 1) * sizeof *vwgt);
    idx_t *part = malloc(((size_t)n ? (size_t)n : 1) * sizeof *part);
    int rc = 0;
    if (!xadj || !adjncy || !adjwgt || !vwgt || !part) {
        rc = hf_fail(HF_ENOMEM, "partition: out of memory for METIS's copy of the coarsest graph");
        goto out;
    }
    int64_t wsum = 0, esum = 0;
    idx_t m = 0;
    xadj[0] = 0;
    for (uint64_t u = 0; u < l->nv; u++) {
        vwgt[u] = (idx_t)hf__pl_vw(l, u);
        wsum += hf__pl_vw(l, u);
        for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++) {
            uint32_t v = l->adj[j];
            if (v == u)
                continue;
            int64_t w = hf__pl_ew(l, j);
            if (w == 0)
                continue; /* cuts nothing; METIS 5.1 crashes on zero edge weights */
            esum += w;
            if (m > xadj[u] && adjncy[m - 1] == (idx_t)v) {
                adjwgt[m - 1] += (idx_t)w; /* a duplicate arc of the input */
                continue;
            }
            adjncy[m] = (idx_t)v;
            adjwgt[m++] = (idx_t)w;
        }
        xadj[u + 1] = m;
    }
    if (wsum > INT32_MAX || esum > INT32_MAX) {
        rc = hf_fail(HF_ERANGE,
                     "partition: total vertex weight %lld or edge weight %lld does not "
                     "fit METIS's 32-bit weights",
                     (long long)wsum, (long long)esum);
        goto out;
    }
    if (m == 0) {
        rc = bin_pack(c, l);
        goto out;
    }
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;
    options[METIS_OPTION_NUMBERING] = 0;
    options[METIS_OPTION_SEED] = (idx_t)(c->seed & 0x7fffffff);
    options[METIS_OPTION_UFACTOR] = (idx_t)(c->imbalance * 1000.0 + 0.5);
    int bisect = l->nv <= c->coarsen_to && c->k > 1; /* see DESIGN */
    /* gpmetis's tolerance per bisection (InitKWayPartitioning). */
    real_t ub = (real_t)pow(1.0 + c->imbalance, 1.0 / log((double)(c->k > 1 ? c->k : 2)));
    int depth = bisect ? rb_depth(c->k) : 0;
    if (depth > 0) { /* the bisections on the team (see DESIGN) */
        struct rb_graph g = {n, xadj, adjncy, adjwgt, vwgt, part};
        struct rb_args a = {options[METIS_OPTION_SEED], ub, l->part, 0};
        for (idx_t v = 0; v < n; v++)
            part[v] = v; /* orig: the identity */
#pragma omp parallel
#pragma omp single
        rb_split(&g, nparts, 0, depth, &a);
        if (!a.failed) {
            int64_t cut2 = 0;
            for (idx_t u = 0; u < n; u++)
                for (idx_t j = xadj[u]; j < xadj[u + 1]; j++)
                    cut2 += l->part[adjncy[j]] != l->part[u] ? adjwgt[j] : 0;
            c->initial_cut = cut2 / 2;
            c->initial_metis = 1;
            goto out;
        } /* else the one serial call below, as without a team */
    }
    int mr = bisect ? METIS_PartGraphRecursive(&n, &ncon, xadj, adjncy, vwgt, NULL, adjwgt, &nparts,
                                               NULL, &ub, options, &objval, part)
                    : METIS_PartGraphKway(&n, &ncon, xadj, adjncy, vwgt, NULL, adjwgt, &nparts,
                                          NULL, NULL, options, &objval, part);
    if (mr != METIS_OK) {
        rc = hf_fail(HF_EAPP,
                     "partition: %s failed (%s) on the coarsest graph "
                     "(%llu vertices, %lld arcs, %ld parts)",
                     bisect ? "METIS_PartGraphRecursive" : "METIS_PartGraphKway",
                     mr == METIS_ERROR_MEMORY  ? "out of memory"
                     : mr == METIS_ERROR_INPUT ? "input error"
                                               : "error",
                     (unsigned long long)l->nv, (long long)m, c->k);
        goto out;
    }
    for (uint64_t u = 0; u < l->nv; u++) {
        if (part[u] < 0 || part[u] >= nparts) {
            rc = hf_fail(HF_EAPP, "partition: METIS put vertex %llu in part %d of %ld",
                         (unsigned long long)u, (int)part[u], c->k);
            goto out;
        }
        l->part[u] = (uint32_t)part[u];
    }
    c->initial_cut = objval;
    c->initial_metis = 1;
out:
    free(xadj);
    free(adjncy);
    free(adjwgt);
    free(vwgt);
    free(part);
    return rc;
}
