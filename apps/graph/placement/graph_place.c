/* graph_place.c - where a graph's vertices go: [load] placement, and the
 * cross-device traffic a placement implies.
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
 * Traffic. hetfarm's merge (core/shared.c) sends the union of a round's
 * changes to every GPU, so what it moves does not depend on placement at
 * all. What placement changes is what an owner-computes runtime (Groute,
 * Gunrock's multi-GPU) would move: each device owns a range of vertices,
 * and a changed vertex must reach the devices that own its neighbours. This
 * file measures that, per round, from what actually ran: the devices' work
 * (collect) summed over every round the scheduler split between devices
 * gives their shares (equal shares until the first split round: small
 * rounds go whole to one device and say nothing about ownership), the
 * shares cut the id space into one contiguous span per device (by the chunk
 * cost, edges + vertices, in device order), and for each vertex changed in
 * the round the number of OTHER devices owning one of its neighbours is
 * counted ("halo", state elements). It is a model of a stable ownership, not
 * a replay of the round's bundles: push rounds' items are frontier vertices
 * in discovery order, and a pull round's spans match it only when the
 * scheduler gave each device one span in device order. Its cost is the
 * changed vertices, each settled by its smallest and largest neighbour
 * (precomputed once) unless those straddle a span boundary, when its list
 * is scanned; serial, reported as traffic_s. PageRank, where every vertex
 * changes, reuses the last count while the spans do not move. A run on one
 * device reports no traffic figures.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <omp.h>

#include "graph_app.h"
#include "partition.h"

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

int hf__gapp_traffic_setup(struct hf_gapp *ga, const struct hf_devices *devs)
{
    free(ga->dev_work);
    ga->ndev = devs->count;
    /* one array: this round's work, then the split rounds' sum */
    if (!(ga->dev_work = calloc(2 * (size_t)devs->count, sizeof *ga->dev_work)))
        return hf_fail(HF_ENOMEM, "graph: out of memory");
    ga->split_work = ga->dev_work + devs->count;
    hf__gapp_traffic_reset(ga);
    if (devs->count < 2 || ga->nb_lo)
        return 0;
    const struct hf_graph *g = &ga->g;
    ga->nb_lo = malloc(g->nv * sizeof *ga->nb_lo);
    ga->nb_hi = malloc(g->nv * sizeof *ga->nb_hi);
    if (!ga->nb_lo || !ga->nb_hi)
        return hf_fail(HF_ENOMEM, "graph: out of memory for %llu neighbour ranges",
                       (unsigned long long)g->nv);
    for (uint64_t v = 0; v < g->nv; v++) {
        hf_vid_t lo = (hf_vid_t)v, hi = (hf_vid_t)v;
        for (uint64_t j = g->offsets[v]; j < g->offsets[v + 1]; j++) {
            lo = g->adj[j] < lo ? g->adj[j] : lo;
            hi = g->adj[j] > hi ? g->adj[j] : hi;
        }
        ga->nb_lo[v] = lo;
        ga->nb_hi[v] = hi;
    }
    return 0;
}

void hf__gapp_traffic_add(struct hf_gapp *ga, const struct hf_bundle *b)
{
    if (ga->dev_work && b->device >= 0 && b->device < ga->ndev)
        __atomic_fetch_add(&ga->dev_work[b->device], (uint64_t)(b->work + 0.5), __ATOMIC_RELAXED);
}

void hf__gapp_traffic_reset(struct hf_gapp *ga)
{
    if (ga->dev_work)
        memset(ga->dev_work, 0, 2 * (size_t)ga->ndev * sizeof *ga->dev_work);
    ga->halo_total = ga->broadcast_total = 0;
    ga->traffic_rounds = 0;
    ga->traffic_s = 0;
    ga->cached_all_halo = -1;
}

/* The first vertex whose cost prefix (edges + vertices before it) reaches
 * `target`. */
static uint64_t cost_cut(const struct hf_graph *g, double target)
{
    uint64_t lo = 0, hi = g->nv;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((double)(g->offsets[mid] + mid) < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static inline int owner(const uint64_t *cuts, int ndev, uint64_t v)
{
    int d = 0;
    while (d + 1 < ndev && v >= cuts[d + 1])
        d++;
    return d;
}

/* The other devices that own a neighbour of v: none when v, its smallest
 * and its largest neighbour lie in one span (spans are id intervals). */
static inline int halo_of(const struct hf_gapp *ga, const uint64_t *cuts, int ndev, uint64_t v)
{
    const struct hf_graph *g = &ga->g;
    int own = owner(cuts, ndev, v);
    if (owner(cuts, ndev, ga->nb_lo[v]) == own && owner(cuts, ndev, ga->nb_hi[v]) == own)
        return 0;
    uint64_t mask = 0;
    for (uint64_t j = g->offsets[v]; j < g->offsets[v + 1]; j++)
        mask |= 1ull << owner(cuts, ndev, g->adj[j]);
    mask &= ~(1ull << own);
    return __builtin_popcountll(mask);
}

int hf__gapp_traffic_round(struct hf_gapp *ga, const uint32_t *changed, size_t n,
                           struct hf_figure *out, int cap)
{
    const struct hf_graph *g = &ga->g;
    int nd = ga->ndev;
    if (!ga->dev_work || nd < 2 || nd > HF_GAPP_TRAFFIC_DEVS || cap < 3)
        return 0;
    double t0 = place_now();
    int ran = 0;
    for (int d = 0; d < nd; d++)
        ran += ga->dev_work[d] > 0;
    for (int d = 0; d < nd && ran > 1; d++)
        ga->split_work[d] += ga->dev_work[d];
    memset(ga->dev_work, 0, (size_t)nd * sizeof *ga->dev_work);
    /* The spans: the devices' shares of every split round so far, equal
     * shares until the first. */
    double total = 0;
    for (int d = 0; d < nd; d++)
        total += (double)ga->split_work[d];
    double cost = (double)(g->ne + g->nv), sum = 0;
    ga->cuts[0] = 0;
    for (int d = 0; d < nd; d++) {
        sum += total > 0 ? (double)ga->split_work[d] : 1.0;
        ga->cuts[d + 1] =
            d + 1 == nd ? g->nv : cost_cut(g, cost * sum / (total > 0 ? total : (double)nd));
    }
    double halo = 0;
    size_t ncuts = (size_t)(nd + 1) * sizeof *ga->cuts;
    if (!changed && ga->cached_all_halo >= 0 && memcmp(ga->cuts, ga->cached_cuts, ncuts) == 0) {
        halo = ga->cached_all_halo;
    } else {
        /* Serial: this runs between rounds, while the CPU teams' threads
         * spin, and OpenMP loops there ran ~10x slower than serial ones
         * (bench/NOTES.md, the partitioner's host glue). */
        const uint64_t *cuts = ga->cuts;
        uint64_t h = 0;
        for (size_t i = 0; i < n; i++)
            h += (uint64_t)halo_of(ga, cuts, nd, changed ? changed[i] : i);
        halo = (double)h;
        if (!changed) {
            memcpy(ga->cached_cuts, ga->cuts, ncuts);
            ga->cached_all_halo = halo;
        }
    }
    double bcast = (double)n * (double)(nd - 1);
    ga->halo_total += halo;
    ga->broadcast_total += bcast;
    ga->traffic_rounds++;
    ga->traffic_s += place_now() - t0;
    out[0] = (struct hf_figure){"halo", halo, "elements (owner-computes)"};
    out[1] = (struct hf_figure){"broadcast", bcast, "elements (to every device)"};
    out[2] = (struct hf_figure){"changed", (double)n, "vertices"};
    return 3;
}

/* The totals only when some round was measured: a run on one device, or
 * under an engine that calls no round_figures (StarPU's), has none. */
int hf__gapp_traffic_figures(const struct hf_gapp *ga, struct hf_figure *out, int cap)
{
    /* The placement's figures when there is one, the traffic's when measured. */
    struct hf_figure f[6];
    int n = 0;
    if (ga->place_parts) {
        f[n++] = (struct hf_figure){"placement_parts", (double)ga->place_parts, "parts"};
        f[n++] = (struct hf_figure){"placement_cut", ga->place_cut, "edges between parts"};
        f[n++] = (struct hf_figure){"placement_s", ga->place_s, "s (partition + relabel)"};
    }
    if (ga->traffic_rounds) {
        f[n++] = (struct hf_figure){"halo", ga->halo_total, "elements (owner-computes)"};
        f[n++] = (struct hf_figure){"broadcast", ga->broadcast_total, "elements (to every device)"};
        f[n++] = (struct hf_figure){"traffic_s", ga->traffic_s, "s measuring halo (host)"};
    }
    for (int i = 0; i < n && i < cap; i++)
        out[i] = f[i];
    return n < cap ? n : cap;
}
