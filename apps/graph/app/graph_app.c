/* graph_app.c - the parts every graph primitive shares as a hetfarm app.
 *
 * DESIGN
 * ------
 * A graph app's input is its graph, read from [load] once in create: in
 * simulation too, because what a round holds (a BFS frontier, its edges)
 * depends on the graph and the computation. The CSR then becomes resident
 * data: READONLY shared arrays (hetfarm.h, "Shared data") that every GPU
 * receives once, before round 0, and keeps.
 *
 * A round's load is either a frontier (the vertices of one BFS level, listed
 * with the prefix sums of their degrees) or the vertex range 0..nv-1 (a pull
 * round, a PageRank sweep). Either way a chunk's work is its edges plus its
 * vertices, so the schedulers see what a chunk really costs: on a scale-free
 * graph one chunk of 1024 vertices may hold a million edges and the next a
 * thousand.
 *
 * The output file has one line per vertex, "id<TAB>value", ids numbered as in
 * the input file (1-based for METIS, DIMACS and Matrix Market) also when
 * placement = partition relabelled the graph (graph_place.c), written to a
 * temporary name and renamed, so a failed run leaves no half-written file.
 */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph_app.h"

/* Reads the loader's options from [load]. */
static int read_opts(hf_config_t cfg, struct hf_graph_opts *o)
{
    const char *fmt, *cache;
    int rc = hf_config_str(cfg, "load", "format", "auto", &fmt);
    if (!rc)
        rc = hf_config_bool(cfg, "load", "symmetrise", 1, &o->symmetrise);
    if (!rc)
        rc = hf_config_bool(cfg, "load", "drop_self_loops", 1, &o->drop_self_loops);
    if (!rc)
        rc = hf_config_bool(cfg, "load", "dedupe", 1, &o->dedupe);
    if (!rc)
        rc = hf_config_str(cfg, "load", "cache_dir", NULL, &cache);
    if (rc)
        return rc;
    static const char *const formats[] = {"auto", "metis", "mtx", "dimacs", "edgelist", "bin",
                                          NULL};
    int known = 0;
    for (const char *const *f = formats; *f; f++)
        known |= strcmp(*f, fmt) == 0;
    if (!known)
        return hf_fail(HF_ECONFIG, "%s: [load] format = %s: expected auto, metis, mtx, dimacs, "
                                   "edgelist or bin", hf_config_where(cfg, "load", "format"), fmt);
    o->format = fmt;
    o->cache_dir = cache;
    return 0;
}

/* Generates the graph [load] generate names. */
static int generate(hf_config_t cfg, const char *kind, int weighted, struct hf_graph *g)
{
    long scale, ef, rows, cols, seed;
    double keep;
    int rc = hf_config_long(cfg, "load", "seed", 1, 0, __LONG_MAX__, &seed);
    if (rc)
        return rc;
    if (strcmp(kind, "kron") == 0) {
        if ((rc = hf_config_long(cfg, "load", "scale", 16, 1, 31, &scale)) ||
            (rc = hf_config_long(cfg, "load", "edge_factor", 16, 1, 1024, &ef)))
            return rc;
        return hf_graph_kronecker(g, (int)scale, (int)ef, (uint64_t)seed, weighted);
    }
    if (strcmp(kind, "grid") == 0) {
        if ((rc = hf_config_long(cfg, "load", "rows", 256, 1, 1L << 20, &rows)) ||
            (rc = hf_config_long(cfg, "load", "cols", 256, 1, 1L << 20, &cols)) ||
            (rc = hf_config_double(cfg, "load", "keep", HF_GRAPH_GRID_KEEP, 0.0, 1.0, &keep)))
            return rc;
        if ((uint64_t)rows * (uint64_t)cols > HF_GRAPH_MAX_NV)
            return hf_fail(HF_ECONFIG, "%s: [load] rows x cols = %ld x %ld: more than 2^32 "
                                       "vertices", hf_config_where(cfg, "load", "rows"), rows,
                           cols);
        return hf_graph_grid(g, (uint32_t)rows, (uint32_t)cols, keep, (uint64_t)seed, weighted);
    }
    if (strcmp(kind, "rgg") == 0) {
        long nv;
        double degree;
        if ((rc = hf_config_long(cfg, "load", "vertices", 1L << 16, 1, (long)HF_GRAPH_MAX_NV,
                                 &nv)) ||
            (rc = hf_config_double(cfg, "load", "degree", 6.0, 0.0, 1000.0, &degree)))
            return rc;
        return hf_graph_rgg(g, (uint64_t)nv, degree, (uint64_t)seed, weighted);
    }
    return hf_fail(HF_ECONFIG, "%s: [load] generate = %s: expected kron, grid or rgg",
                   hf_config_where(cfg, "load", "generate"), kind);
}

/* A generated graph is cached too when [load] cache_dir is set: the file
 * name spells out every parameter, so a cache can only be reused for the same
 * graph. Scale-24 Kronecker graphs take a while to generate; benchmarks that
 * run one graph under several configs generate it once. */
static int generate_cached(hf_config_t cfg, const char *kind, int weighted, const char *dir,
                           struct hf_graph *g)
{
    if (!dir || !dir[0])
        return generate(cfg, kind, weighted, g);
    long scale, ef, rows, cols, seed;
    double keep;
    int rc = hf_config_long(cfg, "load", "seed", 1, 0, __LONG_MAX__, &seed);
    if (!rc)
        rc = hf_config_long(cfg, "load", "scale", 16, 1, 31, &scale);
    if (!rc)
        rc = hf_config_long(cfg, "load", "edge_factor", 16, 1, 1024, &ef);
    if (!rc)
        rc = hf_config_long(cfg, "load", "rows", 256, 1, 1L << 20, &rows);
    if (!rc)
        rc = hf_config_long(cfg, "load", "cols", 256, 1, 1L << 20, &cols);
    if (!rc)
        rc = hf_config_double(cfg, "load", "keep", HF_GRAPH_GRID_KEEP, 0.0, 1.0, &keep);
    long nv = 0;
    double degree = 0;
    if (!rc)
        rc = hf_config_long(cfg, "load", "vertices", 1L << 16, 1, (long)HF_GRAPH_MAX_NV, &nv);
    if (!rc)
        rc = hf_config_double(cfg, "load", "degree", 6.0, 0.0, 1000.0, &degree);
    if (rc)
        return rc;
    char path[4096];
    if (strcmp(kind, "rgg") == 0)
        snprintf(path, sizeof path, "%s/rgg-%ld-deg%g-seed%ld-w%d.hfg", dir, nv, degree, seed,
                 weighted);
    else if (strcmp(kind, "kron") == 0)
        snprintf(path, sizeof path, "%s/kron-s%ld-ef%ld-seed%ld-w%d.hfg", dir, scale, ef, seed,
                 weighted);
    else
        snprintf(path, sizeof path, "%s/grid-%ldx%ld-keep%g-seed%ld-w%d.hfg", dir, rows, cols,
                 keep, seed, weighted);
    if (access(path, R_OK) == 0 && hf_graph_read_bin(g, path) == 0)
        return 0;
    hf_clear_error();
    if ((rc = generate(cfg, kind, weighted, g)))
        return rc;
    if (hf_graph_write_bin(g, path) != 0) /* best effort, like the loaders' cache */
        hf_clear_error();
    return 0;
}

/* Resolves [load] source to a 0-based vertex: a vertex id in the file's
 * numbering, `first` (the default: the first vertex) or `maxdegree` (the
 * vertex with the most edges, which is in the giant component of any graph
 * that has one: what benchmarks want from a generated graph). */
static int resolve_source(struct hf_gapp *ga, hf_config_t cfg)
{
    const struct hf_graph *g = &ga->g;
    const char *s;
    int rc = hf_config_str(cfg, "load", "source", "first", &s);
    if (rc)
        return rc;
    long lo = g->base, hi = (long)g->nv - 1 + g->base;
    if (strcmp(s, "first") == 0) {
        ga->source = lo;
    } else if (strcmp(s, "maxdegree") == 0) {
        uint64_t best = 0;
        for (uint64_t v = 1; v < g->nv; v++)
            best = hf_graph_degree(g, (hf_vid_t)v) > hf_graph_degree(g, (hf_vid_t)best) ? v : best;
        ga->source = (long)best + g->base;
    } else {
        char *end;
        errno = 0;
        ga->source = strtol(s, &end, 10);
        if (*s == '\0' || *end != '\0' || errno)
            return hf_fail(HF_ECONFIG, "%s: [load] source = %s: expected a vertex id, first or "
                                       "maxdegree", hf_config_where(cfg, "load", "source"), s);
    }
    if (ga->source < lo || ga->source > hi)
        return hf_fail(HF_ECONFIG, "%s: [load] source = %s: no such vertex (the graph's ids "
                                   "are %ld..%ld)", hf_config_where(cfg, "load", "source"), s, lo,
                       hi);
    ga->src = (hf_vid_t)(ga->source - g->base);
    ga->have_source = 1;
    return 0;
}

int hf__gapp_create(struct hf_gapp *ga, hf_config_t cfg, int weighted, int wants_source)
{
    memset(ga, 0, sizeof *ga);
    const char *path, *gen;
    int w = weighted;
    struct hf_graph_opts o = {0};
    int rc = hf_config_str(cfg, "load", "graph", NULL, &path);
    if (!rc)
        rc = hf_config_str(cfg, "load", "generate", NULL, &gen);
    if (!rc)
        rc = hf_config_str(cfg, "load", "out", NULL, &ga->out_path);
    if (!rc)
        rc = hf_config_bool(cfg, "load", "weighted", weighted, &w);
    if (!rc)
        rc = read_opts(cfg, &o);
    if (rc)
        return rc;
    if (path && gen)
        return hf_fail(HF_ECONFIG, "%s: [load] has both graph and generate: name one",
                       hf_config_where(cfg, "load", "generate"));
    if (!path && !gen)
        return hf_fail(HF_ECONFIG, "%s: [load] needs graph = PATH or generate = kron|grid|rgg",
                       hf_config_path(cfg));
    rc = path ? hf_graph_load(&ga->g, path, &o) : generate_cached(cfg, gen, w, o.cache_dir, &ga->g);
    if (rc)
        return rc;
    if (wants_source && (rc = resolve_source(ga, cfg)))
        return rc;
    if (ga->out_path && ga->out_path[0] == '\0')
        ga->out_path = NULL;
    return 0;
}

void hf__gapp_destroy(struct hf_gapp *ga)
{
    hf_graph_free(&ga->g);
    free(ga->to_new);
    free(ga->to_old);
    free(ga->dev_work);
    free(ga->nb_lo);
    free(ga->nb_hi);
    ga->to_new = ga->to_old = NULL;
    ga->dev_work = NULL;
    ga->nb_lo = ga->nb_hi = NULL;
}

int hf__gapp_shared_csr(struct hf_gapp *ga, int with_weights, struct hf_shared *out, int cap)
{
    if (cap < 3)
        return hf_fail(HF_EAPP, "graph: no room for the CSR's shared arrays");
    out[0] = (struct hf_shared){"graph.offsets", ga->g.offsets, ga->g.nv + 1, HF_ELEM_U64,
                                HF_SHARED_READONLY};
    out[1] = (struct hf_shared){"graph.adj", ga->g.adj, ga->g.ne ? ga->g.ne : 1, HF_ELEM_U32,
                                HF_SHARED_READONLY};
    if (!with_weights || !ga->g.weights)
        return 2;
    out[2] = (struct hf_shared){"graph.weights", ga->g.weights, ga->g.ne ? ga->g.ne : 1,
                                HF_ELEM_F32, HF_SHARED_READONLY};
    return 3;
}

int hf__frontier_reserve(struct hf_frontier *f, size_t n)
{
    if (n <= f->cap)
        return 0;
    hf_vid_t *v = realloc(f->v, n * sizeof *v);
    if (v)
        f->v = v;
    uint64_t *pre = realloc(f->pre, (n + 1) * sizeof *pre);
    if (pre)
        f->pre = pre;
    if (!v || !pre)
        return hf_fail(HF_ENOMEM, "graph: out of memory for a frontier of %zu vertices", n);
    f->cap = n;
    return 0;
}

uint64_t hf__gapp_scan(uint64_t *a, size_t n)
{
    uint64_t at[HF_GAPP_BLOCKS + 1] = {0};
#pragma omp parallel for schedule(static) if (n >= HF_GAPP_TEAM_MIN)
    for (int b = 0; b < HF_GAPP_BLOCKS; b++) {
        size_t lo, hi;
        hf__gapp_block(n, b, &lo, &hi);
        uint64_t sum = 0;
        for (size_t k = lo; k < hi; k++)
            sum += a[k];
        at[b + 1] = sum;
    }
    for (int b = 0; b < HF_GAPP_BLOCKS; b++)
        at[b + 1] += at[b];
#pragma omp parallel for schedule(static) if (n >= HF_GAPP_TEAM_MIN)
    for (int b = 0; b < HF_GAPP_BLOCKS; b++) {
        size_t lo, hi;
        hf__gapp_block(n, b, &lo, &hi);
        uint64_t sum = at[b];
        for (size_t k = lo; k < hi; k++) {
            uint64_t x = a[k];
            a[k] = sum;
            sum += x;
        }
    }
    a[n] = at[HF_GAPP_BLOCKS];
    return a[n];
}

/* The degrees, looked up once (at random in the CSR), then scanned. */
uint64_t hf__frontier_prefix(struct hf_frontier *f, const struct hf_graph *g)
{
    size_t n = f->n;
#pragma omp parallel for schedule(static) if (n >= HF_GAPP_TEAM_MIN)
    for (size_t k = 0; k < n; k++)
        f->pre[k] = hf_graph_degree(g, f->v[k]);
    return hf__gapp_scan(f->pre, n);
}

void hf__frontier_free(struct hf_frontier *f)
{
    free(f->v);
    free(f->pre);
    memset(f, 0, sizeof *f);
}

int hf__gapp_setup(struct hf_gapp *ga, const struct hf_devices *devs, int traffic)
{
    ga->cpu_threads = 0;
    for (int d = 0; devs && d < devs->count; d++)
        if (!devs->dev[d].is_gpu && devs->dev[d].nthreads > ga->cpu_threads)
            ga->cpu_threads = devs->dev[d].nthreads;
    /* Across nodes every rank must cut the same chunks, and each sees only
     * its own devices: the grain is sized for a fixed team there. */
    if (devs && devs->ranks > 1)
        ga->cpu_threads = HF_GAPP_NODE_THREADS;
    return traffic && ga->measure_traffic ? hf__gapp_traffic_setup(ga, devs) : 0;
}

/* The automatic grain. A CPU team runs a chunk as one parallel region, and
 * what a region costs beyond its work (the fork, the barrier, the hand-off
 * through the engine, the slowest thread's share of a hub) does not shrink
 * with the chunk: with chunks of a fixed number of vertices, the more
 * threads, the less work each thread gets per region and the larger that
 * share (kron-22 on 16 cores: 16384-vertex chunks made BFS and CC 2.5-5x
 * slower than 65536-vertex ones; on 8 cores 1.3x). So a chunk carries about
 * HF_GAPP_EDGES_PER_THREAD edges for every thread of the team, whatever the
 * graph's size and degree. It stays a grain in units, the same for every
 * chunk of the load (the partitioners cut equal ranges; their work is what
 * they hold), and there are still HF_GAPP_MIN_CHUNKS chunks for the
 * scheduler to share out. A run without a CPU device (or a simulation that
 * never called setup) sizes for the main thread's OpenMP team, a run across
 * nodes for HF_GAPP_NODE_THREADS (the ranks' teams may differ, their chunks
 * may not). */
size_t hf__gapp_grain(const struct hf_gapp *ga, const struct hf_load *load, size_t grain)
{
    if (grain)
        return grain;
    size_t units = load->units ? load->units : 1;
    int threads = ga->cpu_threads > 0 ? ga->cpu_threads : omp_get_max_threads();
    double per_unit = load->work > (double)units ? load->work / (double)units : 1.0;
    double want = (double)HF_GAPP_EDGES_PER_THREAD * (threads > 0 ? threads : 1) / per_unit;
    size_t most = (units + HF_GAPP_MIN_CHUNKS - 1) / HF_GAPP_MIN_CHUNKS;
    size_t g = want < (double)most ? (size_t)want : most;
    return g > HF_GAPP_MIN_GRAIN ? g : HF_GAPP_MIN_GRAIN;
}

/* Chunks of `grain` units over [0, units), costed by cost(b, e). */
static size_t cut(size_t units, size_t grain, double (*cost)(const void *, size_t, size_t),
                  const void *arg, double bytes_per_unit, struct hf_chunk *out, size_t cap)
{
    size_t n = (units + grain - 1) / grain;
    if (!out)
        return n;
    for (size_t i = 0; i < n && i < cap; i++) {
        size_t b = i * grain, e = b + grain < units ? b + grain : units;
        out[i] = (struct hf_chunk){.index = i, .begin = b, .end = e, .work = cost(arg, b, e),
                                   .bytes = bytes_per_unit * (double)(e - b)};
    }
    return n;
}

static double frontier_cost(const void *arg, size_t b, size_t e)
{
    const struct hf_frontier *f = arg;
    return (double)(f->pre[e] - f->pre[b]) + (double)(e - b);
}

static double vertex_cost(const void *arg, size_t b, size_t e)
{
    const struct hf_graph *g = arg;
    return (double)(g->offsets[e] - g->offsets[b]) + (double)(e - b);
}

size_t hf__frontier_partition(const struct hf_frontier *f, const struct hf_load *load,
                              size_t grain, struct hf_chunk *out, size_t cap)
{
    double bpu = load->units ? load->bytes / (double)load->units : 0;
    return cut(load->units, grain, frontier_cost, f, bpu, out, cap);
}

size_t hf__vertex_partition(const struct hf_graph *g, const struct hf_load *load, size_t grain,
                            struct hf_chunk *out, size_t cap)
{
    double bpu = load->units ? load->bytes / (double)load->units : 0;
    return cut(load->units, grain, vertex_cost, g, bpu, out, cap);
}

int hf__gapp_write_values(const struct hf_gapp *ga, void *ctx,
                          void (*value)(void *ctx, hf_vid_t v, char *buf, size_t len))
{
    if (!ga->out_path)
        return 0;
    size_t plen = strlen(ga->out_path) + 32;
    char *tmp = malloc(plen);
    if (!tmp)
        return hf_fail(HF_ENOMEM, "graph: out of memory");
    snprintf(tmp, plen, "%s.tmp.%ld", ga->out_path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(tmp);
        return hf_fail(HF_EIO, "%s: cannot write the output", ga->out_path);
    }
    static char iobuf[1 << 20];
    setvbuf(f, iobuf, _IOFBF, sizeof iobuf);
    char val[64];
    for (uint64_t v = 0; v < ga->g.nv; v++) {
        value(ctx, ga->to_new ? ga->to_new[v] : (hf_vid_t)v, val, sizeof val);
        fprintf(f, "%llu\t%s\n", (unsigned long long)(v + (uint64_t)ga->g.base), val);
    }
    int bad = ferror(f) | (fclose(f) != 0);
    if (bad || rename(tmp, ga->out_path) != 0) {
        unlink(tmp);
        free(tmp);
        return hf_fail(HF_EIO, "%s: cannot write the output", ga->out_path);
    }
    free(tmp);
    return 0;
}
