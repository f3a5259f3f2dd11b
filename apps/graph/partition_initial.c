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
 * refinement gives back what METIS's would have; bench/NOTES.md). A
 * coarsest graph that coarsening left above coarsen_to (a stalled
 * matching) goes to METIS_PartGraphKway, which coarsens it further itself.
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
#include <stdlib.h>
#include <string.h>

#include <metis.h>

#include "partition.h"

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
