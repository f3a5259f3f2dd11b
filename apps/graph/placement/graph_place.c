/* graph_place.c - where a graph's vertices go: [load] placement, by the
 * repository's own partitioner (apps/graph/partition/).
 *
 * DESIGN
 * ------
 * hetfarm cuts a graph round into chunks of consecutive vertex ids (or
 * frontier items), and the scheduler hands each device contiguous spans of
 * chunks, sized by cost. So the vertex numbering IS the placement: with
 * placement = range (the default) a device gets whatever the input's ids put
 * side by side. placement = partition makes the numbering follow the graph
 * instead, as Groute places METIS parts on GPUs: the graph is partitioned by
 * the repository's own multilevel partitioner (partition.c, run in-process
 * on the CPU team) into k parts, many more than devices (placement_parts;
 * by default nv / 4096, within 8..64), so that the scheduler still balances
 * at chunk granularity, and every part becomes one contiguous id range. The
 * parts are laid out in a greedy order on the quotient graph: start from the
 * part with the fewest cut edges (a corner), then repeatedly the unplaced
 * part with the most edges to the parts already placed (Prim-like), so that
 * any prefix of the order, and any span the scheduler cuts from it, is a
 * compact region rather than scattered parts. Within a part, vertices keep
 * their input order. The CSR is then relabelled (each list re-sorted, as the
 * graph layer promises), and the apps run on it unchanged; the apps map
 * results back through to_new / to_old for their output, their messages, and
 * (cc) their labels, so the output is the one placement = range writes.
 *
 * What placement changes is the traffic an owner-computes runtime would
 * move between devices; app/graph_traffic.c measures it ([load] traffic).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "graph/app/graph_app.h"
#include "graph/partition/partition.h"
#include "graph_place.h"

static double place_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* pos[p] = the place of part p in the layout (see DESIGN). */
static int order_parts(const struct hf_graph *g, const uint32_t *part, long k, uint32_t *pos)
{
    size_t kk = (size_t)k;
    uint64_t *w = calloc(kk * kk, sizeof *w);
    uint64_t *ext = calloc(kk, sizeof *ext), *conn = calloc(kk, sizeof *conn);
    char *placed = calloc(kk, 1);
    if (!w || !ext || !conn || !placed) {
        free(w), free(ext), free(conn), free(placed);
        return hf_fail(HF_ENOMEM, "placement: out of memory for %ld parts", k);
    }
    for (uint64_t u = 0; u < g->nv; u++)
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++)
            if (part[u] != part[g->adj[j]])
                w[part[u] * kk + part[g->adj[j]]]++;
    for (size_t p = 0; p < kk; p++)
        for (size_t q = 0; q < kk; q++)
            ext[p] += w[p * kk + q];
    for (size_t i = 0; i < kk; i++) {
        /* The unplaced part most connected to the placed ones; a corner
         * (fewest cut edges) when none is connected: the start, or a new
         * piece of a disconnected quotient graph. */
        size_t best = kk;
        for (size_t p = 0; p < kk; p++) {
            if (placed[p])
                continue;
            if (best == kk || conn[p] > conn[best] ||
                (conn[p] == conn[best] && conn[p] == 0 && ext[p] < ext[best]))
                best = p;
        }
        placed[best] = 1;
        pos[best] = (uint32_t)i;
        for (size_t q = 0; q < kk; q++)
            conn[q] += w[best * kk + q];
    }
    free(w), free(ext), free(conn), free(placed);
    return 0;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int by_id_then_weight(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Rebuilds g's CSR in the numbering to_new / to_old: vertex i of the new
 * graph is to_old[i], its list is its neighbours renamed and sorted (with
 * their weights, which are >= 0, so their bits sort as the numbers do). */
static int relabel(struct hf_graph *g, const hf_vid_t *to_new, const hf_vid_t *to_old)
{
    uint64_t nv = g->nv, ne = g->ne;
    uint64_t *off = malloc((nv + 1) * sizeof *off);
    hf_vid_t *adj = malloc((ne ? ne : 1) * sizeof *adj);
    float *wt = g->weights ? malloc((ne ? ne : 1) * sizeof *wt) : NULL;
    int32_t *vw = g->vwgt ? malloc(nv * sizeof *vw) : NULL;
    if (!off || !adj || (g->weights && !wt) || (g->vwgt && !vw)) {
        free(off), free(adj), free(wt), free(vw);
        return hf_fail(HF_ENOMEM, "placement: out of memory relabelling %llu vertices",
                       (unsigned long long)nv);
    }
    off[0] = 0;
    for (uint64_t i = 0; i < nv; i++)
        off[i + 1] = off[i] + hf_graph_degree(g, to_old[i]);
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(| : bad)
    for (uint64_t i = 0; i < nv; i++) {
        hf_vid_t u = to_old[i];
        uint64_t b = g->offsets[u], d = g->offsets[u + 1] - b, o = off[i];
        if (!wt) {
            for (uint64_t j = 0; j < d; j++)
                adj[o + j] = to_new[g->adj[b + j]];
            qsort(adj + o, d, sizeof *adj, by_id);
            continue;
        }
        uint64_t *pair = malloc((d ? d : 1) * sizeof *pair);
        if (!pair) {
            bad = 1;
            continue;
        }
        for (uint64_t j = 0; j < d; j++) {
            uint32_t bits;
            memcpy(&bits, &g->weights[b + j], sizeof bits);
            pair[j] = (uint64_t)to_new[g->adj[b + j]] << 32 | bits;
        }
        qsort(pair, d, sizeof *pair, by_id_then_weight);
        for (uint64_t j = 0; j < d; j++) {
            uint32_t bits = (uint32_t)pair[j];
            adj[o + j] = (hf_vid_t)(pair[j] >> 32);
            memcpy(&wt[o + j], &bits, sizeof bits);
        }
        free(pair);
    }
    if (bad) {
        free(off), free(adj), free(wt), free(vw);
        return hf_fail(HF_ENOMEM, "placement: out of memory sorting adjacency lists");
    }
    for (uint64_t i = 0; vw && i < nv; i++)
        vw[i] = g->vwgt[to_old[i]];
    free(g->offsets), free(g->adj), free(g->weights), free(g->vwgt);
    g->offsets = off;
    g->adj = adj;
    g->weights = wt;
    g->vwgt = vw;
    return 0;
}

/* The default number of parts: about one per 4096 vertices (a chunk at the
 * graph apps' default grain), at least 8 so that 2-4 devices cut between
 * parts, at most 64 so that partitioning stays a small part of a run. */
static long auto_parts(uint64_t nv)
{
    uint64_t k = nv / 4096;
    k = k < 8 ? 8 : k > 64 ? 64 : k;
    return (long)(k < nv ? k : nv);
}

int hf__gapp_place(struct hf_gapp *ga, hf_config_t cfg)
{
    const char *pl;
    long k;
    int rc = hf_config_str(cfg, "load", "placement", "range", &pl);
    if (!rc)
        rc = hf_config_long(cfg, "load", "placement_parts", 0, 0, 1024, &k);
    if (!rc)
        rc = hf_config_bool(cfg, "load", "traffic", 0, &ga->measure_traffic);
    if (rc)
        return rc;
    if (strcmp(pl, "range") == 0)
        return 0;
    if (strcmp(pl, "partition") != 0)
        return hf_fail(HF_ECONFIG, "%s: [load] placement = %s: expected range or partition",
                       hf_config_where(cfg, "load", "placement"), pl);
    struct hf_graph *g = &ga->g;
    if (!g->symmetric)
        return hf_fail(HF_ECONFIG, "%s: [load] placement = partition needs an undirected graph "
                                   "(symmetrise = yes): the partitioner cuts undirected edges",
                       hf_config_where(cfg, "load", "placement"));
    if (k == 0)
        k = auto_parts(g->nv);
    if ((uint64_t)k > g->nv)
        return hf_fail(HF_ECONFIG, "%s: [load] placement_parts = %ld: the graph has only %llu "
                                   "vertices", hf_config_where(cfg, "load", "placement_parts"), k,
                       (unsigned long long)g->nv);
    double t0 = place_now();
    uint64_t nv = g->nv;
    uint32_t *part = malloc(nv * sizeof *part), *pos = malloc((size_t)k * sizeof *pos);
    uint64_t *start = calloc((size_t)k + 1, sizeof *start);
    ga->to_new = malloc(nv * sizeof *ga->to_new);
    ga->to_old = malloc(nv * sizeof *ga->to_old);
    if (!part || !pos || !start || !ga->to_new || !ga->to_old)
        rc = hf_fail(HF_ENOMEM, "placement: out of memory for %llu vertices",
                     (unsigned long long)nv);
    /* The bound (1 + imbalance) nv / k must hold ceil(nv / k) vertices. */
    double imbalance = 0.03 + (double)k / (double)nv;
    if (!rc)
        rc = hf__partition_graph(g, k, imbalance, 1, omp_get_max_threads(), part, &ga->place_cut);
    if (!rc)
        rc = order_parts(g, part, k, pos);
    if (!rc) {
        /* Ids by the parts' places, input order within a part (a stable
         * counting sort). */
        for (uint64_t v = 0; v < nv; v++)
            start[pos[part[v]] + 1]++;
        for (long p = 0; p < k; p++)
            start[p + 1] += start[p];
        for (uint64_t v = 0; v < nv; v++) {
            hf_vid_t id = (hf_vid_t)start[pos[part[v]]]++;
            ga->to_new[v] = id;
            ga->to_old[id] = (hf_vid_t)v;
        }
        rc = relabel(g, ga->to_new, ga->to_old);
    }
    free(part), free(pos), free(start);
    if (rc)
        return rc;
    if (ga->have_source)
        ga->src = ga->to_new[ga->src];
    ga->place_parts = k;
    ga->place_s = place_now() - t0;
    return 0;
}
