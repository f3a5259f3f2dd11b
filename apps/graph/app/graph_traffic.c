/* graph_traffic.c - the cross-device traffic a placement implies: the
 * figures halo and broadcast per round and per run ([load] traffic = yes).
 *
 * DESIGN
 * ------
 * hetfarm's merge (core/shared.c) sends the union of a round's
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

#include "graph_app.h"

static double traffic_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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
    double t0 = traffic_now();
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
         * (9edd91b:bench/NOTES.md, the partitioner's host glue). */
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
    ga->traffic_s += traffic_now() - t0;
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

