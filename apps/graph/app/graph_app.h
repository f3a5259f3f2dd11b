/* graph_app.h - what the graph primitives (bfs.c, pagerank.c, cc.c, ...)
 * share as hetfarm apps: the graph named by [load], the CSR as resident data
 * on every GPU, frontier loads whose chunks cost their edges, and the output
 * file. The graph layer itself (loaders, generators) is graph.h.
 */
#ifndef HF_GRAPH_APP_H
#define HF_GRAPH_APP_H

#include <stddef.h>
#include <stdint.h>

#include "graph/layer/graph.h"
#include "hetfarm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most devices the traffic figure tells apart (a bit each). */
#define HF_GAPP_TRAFFIC_DEVS 64

/* The graph of a run and how it was made. */
struct hf_gapp {
    struct hf_graph g;
    const char *out_path;   /* [load] out, or NULL */
    long source;            /* [load] source in the file's numbering, -1 = first vertex */
    hf_vid_t src;           /* the source, 0-based (in g's numbering: relabelled when placed) */
    int have_source;
    /* [load] placement = partition (placement/graph_place.c): g is relabelled so that
     * each part is a contiguous id range; to_new[input id] and
     * to_old[g's id] translate (both NULL with placement = range). */
    hf_vid_t *to_new, *to_old;
    long place_parts;       /* parts of the placement (0: range) */
    double place_cut;       /* their edge cut (undirected edges) */
    double place_s;         /* seconds spent partitioning and relabelling */
    /* Cross-device traffic (graph_traffic.c): the work each device ran this
     * round (collect), the owner spans derived from it, the run's totals. */
    int ndev;
    uint64_t *dev_work;     /* ndev: this round's work per device */
    uint64_t *split_work;   /* ndev: summed over the rounds run by more than one device */
    hf_vid_t *nb_lo, *nb_hi; /* nv each: a vertex's smallest and largest neighbour (itself
                                when it has none), so that most vertices are settled
                                without a scan of their list */
    uint64_t cuts[HF_GAPP_TRAFFIC_DEVS + 1];
    uint64_t cached_cuts[HF_GAPP_TRAFFIC_DEVS + 1];
    double cached_all_halo; /* halo of "every vertex changed" under cached_cuts, or -1 */
    double halo_total, broadcast_total;
    int measure_traffic;    /* [load] traffic = yes: the figures below are measured */
    int traffic_rounds;     /* rounds measured (none under an engine that has no round_figures) */
    double traffic_s;       /* seconds spent measuring them */
    int cpu_threads;        /* the widest CPU team of the run (hf__gapp_setup); 0 before */
};

/* Reads the graph keys of [load] and loads or generates the graph:
 *   graph = PATH, format = auto|metis|mtx|dimacs|edgelist|bin, cache_dir = DIR,
 *   symmetrise = yes, drop_self_loops = yes, dedupe = yes
 * or, with no graph,
 *   generate = kron|grid|rgg, scale = 16, edge_factor = 16, rows = 256, cols = 256,
 *   keep = 0.6, vertices = 65536, degree = 6, seed = 1
 * and weighted = yes|no (generators; files have weights or not), out = FILE,
 * source = ID|first|maxdegree (when `wants_source`). Graph apps load the graph in create,
 * also in simulation: what a round holds (its frontier) depends on it. */
int hf__gapp_create(struct hf_gapp *ga, hf_config_t cfg, int weighted, int wants_source);

/* The [load] keys every graph app reads (hetfarm.h key tables): an app's
 * table starts with HF_GAPP_KEYS, adds HF_GAPP_SOURCE_KEY when it has a
 * source, then its own keys and the NULL terminator. */
#define HF_GAPP_KEYS                                                                          \
    HF_GAPP_GRAPH_KEYS,                                                                       \
    {NULL, "seed", HF_KEY_INT, 0, 9.2233720368547748e18, 0, NULL, "1", "generators' seed"},   \
    HF_GAPP_WEIGHTED_KEY,                                                                     \
    {NULL, "out", HF_KEY_STR, 0, 0, 0, NULL, NULL, "output: id<TAB>value per vertex"}
/* The same without `seed` and `out`, for an app that reads them its own way
 * (partition: seed also drives matching, out is a part file). */
#define HF_GAPP_GRAPH_KEYS                                                                    \
    {NULL, "graph", HF_KEY_STR, 0, 0, 0, NULL, NULL,                                          \
     "graph file: METIS .graph, .mtx, DIMACS .gr, edge list, .hfg"},                          \
    {NULL, "format", HF_KEY_STR, 0, 0, 0, "auto|metis|mtx|dimacs|edgelist|bin", "auto",      \
     "the file's format (auto: by extension)"},                                               \
    {NULL, "symmetrise", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "add the reverse of every arc"},  \
    {NULL, "drop_self_loops", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "leave out arcs u->u"},      \
    {NULL, "dedupe", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "one arc per (u,v): the lightest"},   \
    {NULL, "cache_dir", HF_KEY_STR, 0, 0, 0, NULL, "next to the input",                       \
     ".hfg cache of loaded and generated graphs (\"\": none)"},                                \
    {NULL, "generate", HF_KEY_STR, 0, 0, 0, "kron|grid|rgg", NULL,                            \
     "a generated graph instead of a file"},                                                  \
    {NULL, "scale", HF_KEY_INT, 1, 31, 0, NULL, "16", "kron: 2^scale vertices"},              \
    {NULL, "edge_factor", HF_KEY_INT, 1, 1024, 0, NULL, "16", "kron: edges per vertex"},      \
    {NULL, "rows", HF_KEY_INT, 1, 1048576, 0, NULL, "256", "grid: rows"},                     \
    {NULL, "cols", HF_KEY_INT, 1, 1048576, 0, NULL, "256", "grid: columns"},                  \
    {NULL, "keep", HF_KEY_NUM, 0, 1, HF_KEY_MIN_OPEN, NULL, "0.6",                            \
     "grid: probability that a lattice edge exists"},                                         \
    {NULL, "vertices", HF_KEY_INT, 1, 4294967295.0, 0, NULL, "65536", "rgg: vertices"},       \
    {NULL, "degree", HF_KEY_NUM, 0, 1000, HF_KEY_MIN_OPEN, NULL, "6",                         \
     "rgg: average degree away from the border"}
#define HF_GAPP_WEIGHTED_KEY                                                                  \
    {NULL, "weighted", HF_KEY_BOOL, 0, 0, 0, NULL, "the app's", "generators: draw weights"}
#define HF_GAPP_SOURCE_KEY                                                                    \
    {NULL, "source", HF_KEY_STR, 0, 0, 0, NULL, "first",                                      \
     "start vertex: an id as in the file, first or maxdegree"}
void hf__gapp_destroy(struct hf_gapp *ga);

/* g's vertex v as the input numbered it (0-based; add g.base to print). */
static inline hf_vid_t hf__gapp_input_id(const struct hf_gapp *ga, hf_vid_t v)
{
    return ga->to_old ? ga->to_old[v] : v;
}

/* Cross-device traffic (graph_traffic.c). Every round's devices own
 * contiguous spans of g's ids, one per device in device order, sized by the
 * work each ran that round (so the spans follow the scheduler's split); a
 * vertex whose state changed must reach every other device that owns one of
 * its neighbours: that count, summed over the round's changed vertices, is
 * the round's "halo" (what an owner-computes exchange moves); "broadcast" is
 * changed x (devices - 1), what sending every change to every other device
 * moves, which is what hetfarm's merge does whatever the placement.
 * traffic_setup in setup (through hf__gapp_setup), traffic_add in collect, traffic_reset in
 * next_load's round 0, traffic_round in round_figures (changed NULL: all n
 * vertices changed), traffic_figures in figures (totals and the placement's
 * parts, cut and seconds). */
int hf__gapp_traffic_setup(struct hf_gapp *ga, const struct hf_devices *devs);
void hf__gapp_traffic_add(struct hf_gapp *ga, const struct hf_bundle *b);
void hf__gapp_traffic_reset(struct hf_gapp *ga);
int hf__gapp_traffic_round(struct hf_gapp *ga, const uint32_t *changed, size_t n,
                           struct hf_figure *out, int cap);
int hf__gapp_traffic_figures(const struct hf_gapp *ga, struct hf_figure *out, int cap);

/* The CSR as READONLY shared arrays at out[0] (offsets, U64) and out[1]
 * (adj, U32), and out[2] (weights, F32) when asked for and the graph has them; returns
 * how many it filled. Apps put their state arrays after these. */
int hf__gapp_shared_csr(struct hf_gapp *ga, int with_weights, struct hf_shared *out, int cap);
enum { HF_GAPP_OFFSETS = 0, HF_GAPP_ADJ = 1, HF_GAPP_WEIGHTS = 2 };

/* Host passes over n items (a round's changes, a frontier, every vertex)
 * split into HF_GAPP_BLOCKS fixed blocks, run over the host's team from
 * HF_GAPP_TEAM_MIN items on: a block's bounds depend on n only, not on the
 * team, so per-block counts give each block's offset (results written in the
 * items' order) and per-block sums added in block order give the same
 * floating-point total whatever the team. hf__gapp_block gives block b's
 * items [*lo, *hi). */
#define HF_GAPP_BLOCKS 256
#define HF_GAPP_TEAM_MIN ((size_t)1 << 16)
static inline void hf__gapp_block(size_t n, int b, size_t *lo, size_t *hi)
{
    *lo = (size_t)((uint64_t)n * (uint64_t)b / HF_GAPP_BLOCKS);
    *hi = (size_t)((uint64_t)n * (uint64_t)(b + 1) / HF_GAPP_BLOCKS);
}
/* Replaces a[0..n) by its exclusive prefix sums and sets a[n] to the total,
 * which it returns (a holds n + 1 elements); over blocks as above. */
uint64_t hf__gapp_scan(uint64_t *a, size_t n);

/* A frontier: the vertices of one round and the prefix sums of their degrees
 * (pre[k] = edges of items 0..k-1), so that a chunk of items [b, e) costs
 * pre[e] - pre[b] edges and a GPU can split its edges evenly over threads. */
struct hf_frontier {
    hf_vid_t *v;
    uint64_t *pre;  /* n + 1 */
    size_t n, cap;
};
int hf__frontier_reserve(struct hf_frontier *f, size_t n);
/* Fills pre[] for the n vertices in v[]; returns the total edges. */
uint64_t hf__frontier_prefix(struct hf_frontier *f, const struct hf_graph *g);
void hf__frontier_free(struct hf_frontier *f);

#ifdef HF_HAVE_CUDA
struct hf_cuda;
/* frontier_cuda.cu: copies a push piece's frontier items [p->begin, p->end)
 * and their prefix sums into the piece's arena on the copy-in phase. */
int hf__frontier_to_gpu(const struct hf_frontier *f, const struct hf_bundle *p,
                        struct hf_cuda *gpu, uint32_t **d_front, uint64_t **d_pre);
#endif

/* The graph layer's part of an app's setup: notes what the automatic grain
 * needs from the run's devices (the widest CPU team) and, with `traffic` set
 * (bfs, pagerank, cc) and [load] traffic = yes, sets up the cross-device
 * traffic figures (hf__gapp_traffic_setup). 0 or an HF_E* code. */
int hf__gapp_setup(struct hf_gapp *ga, const struct hf_devices *devs, int traffic);
/* The grain a graph partitioner uses: `grain` when the config named one,
 * else (grain 0, the graph apps' default) chunks of about HF_GAPP_EDGES_PER_THREAD
 * edges for every thread of the widest CPU team, by the load's mean units per
 * edge, at least HF_GAPP_MIN_GRAIN units, and small enough that a load of
 * more units has at least HF_GAPP_MIN_CHUNKS chunks to share among devices. */
#define HF_GAPP_EDGES_PER_THREAD (1u << 18)
#define HF_GAPP_MIN_GRAIN 4096
#define HF_GAPP_MIN_CHUNKS 16
/* The team the automatic grain assumes in a run across nodes (every rank
 * cuts the same chunks whatever its own CPU): the 16 cores it was tuned on. */
#define HF_GAPP_NODE_THREADS 16
size_t hf__gapp_grain(const struct hf_gapp *ga, const struct hf_load *load, size_t grain);

/* Partitioner for loads whose units are frontier items: chunks of `grain`
 * items (the last may be short), each with work = its edges + its items (a
 * vertex costs something even with no edges). `f` is the round's frontier. */
size_t hf__frontier_partition(const struct hf_frontier *f, const struct hf_load *load,
                              size_t grain, struct hf_chunk *out, size_t cap);
/* The same for loads whose units are vertex ids 0..nv-1 (pull and sweep
 * rounds): work = the range's edges + vertices. */
size_t hf__vertex_partition(const struct hf_graph *g, const struct hf_load *load, size_t grain,
                            struct hf_chunk *out, size_t cap);

/* Writes one line per vertex, `id<TAB>value`, ids in the input's numbering,
 * in id order, atomically (temporary name, then rename). `value(ctx, v, buf,
 * len)` formats vertex v's value. */
int hf__gapp_write_values(const struct hf_gapp *ga, void *ctx,
                          void (*value)(void *ctx, hf_vid_t v, char *buf, size_t len));

#ifdef __cplusplus
}
#endif
#endif
