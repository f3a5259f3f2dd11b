/* graph_apps_util.h - what test_graph_apps.c and test_graph_cuda.c share:
 * running a graph app through hf_run from a config string, and checking its
 * output file line by line against references computed here (include after
 * <cmocka.h>).
 *
 * The references are the apps' own *_ref.c functions for BFS, SSSP
 * (Dijkstra) and CC (union-find), and for PageRank a power iteration written
 * here to the app's stopping rule (stop after the first sweep whose L1 change
 * is below tol), so the test does not lean on the app's iteration count.
 */
#ifndef HF_GRAPH_APPS_UTIL_H
#define HF_GRAPH_APPS_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/bfs/bfs.h"
#include "graph/cc/cc.h"
#include "graph/pagerank/pagerank.h"
#include "graph/sssp/sssp.h"
#include "core/engine.h"
#include "sched.h"
#include "test_files.h"

#define GT_TEXT 4096

/* The error message of the last failed gt_run. */
static char gt_err[1024];
/* METIS's 4elt mesh (test_files.h): a real graph to run on. */
#define FOURELT HF_TEST_4ELT

/* The [load] lines of the tests' mesh: 4elt, its .hfg cache in `dir`. */
static inline void gt_mesh_keys(char *mesh, size_t len, const char *dir)
{
    snprintf(mesh, len, "graph = %s\ncache_dir = %s", test_data(FOURELT), dir);
}

/* A test's setup: a fresh /tmp/NAME.XXXXXX in dir (dlen bytes) and the
 * mesh's [load] lines, cached there, in mesh; 0, or -1 when mkdtemp fails. */
static inline int gt_setup_dir(char *dir, size_t dlen, const char *name, char *mesh, size_t mlen)
{
    snprintf(dir, dlen, "/tmp/%s.XXXXXX", name);
    if (!mkdtemp(dir))
        return -1;
    gt_mesh_keys(mesh, mlen, dir);
    return 0;
}

/* Units per chunk of every run (0: the app's default). Tests set it small,
 * so that even small graphs are cut into many chunks and every device of a
 * run gets some: the merges must have more than one side. */
static size_t gt_grain;

/* Runs `app` on the graph named by the [load] lines `load` (plus `extra`
 * [load] lines) on `devices` under `sched`, verify on, writing `out` when not
 * NULL. Returns hf_run's code; the message of a failure is in gt_err. With
 * `keep` the run is handed over (free it with hf_run_free), else freed. */
static int gt_run_keep(const char *app, const char *load, const char *extra, const char *out,
                       const char *devices, const char *sched, struct hf_run **keep)
{
    char text[4 * GT_TEXT];
    snprintf(text, sizeof text, "[run]\napp = %s\n[load]\n%s\n%s\n%s%s\n[devices]\n%s\n", app, load,
             extra ? extra : "", out ? "out = " : "", out ? out : "", devices);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "graph-test.ini", text), 0);
    const struct hf_app *a = hf_app_find(app);
    assert_non_null(a);
    const struct hf_sched_ops *s = hf_sched_find(sched);
    assert_non_null(s);
    struct hf_run_options o = {
        .app = a,
        .sched = s,
        .cfg = cfg,
        .engine = HF_ENGINE_REAL,
        .rounds = 1000000,
        .grain = gt_grain,
        .seed = 1,
        .verify = 1,
    };
    struct hf_run *run = NULL;
    hf_clear_error();
    int rc = hf_run(&o, &run);
    snprintf(gt_err, sizeof gt_err, "%s", rc ? hf_last_error() : "");
    if (keep)
        *keep = run;
    else
        hf_run_free(run);
    hf_config_destroy(cfg);
    return rc;
}

static int gt_run(const char *app, const char *load, const char *extra, const char *out,
                  const char *devices, const char *sched)
{
    return gt_run_keep(app, load, extra, out, devices, sched, NULL);
}

/* Like gt_run, but the run must succeed (its message is printed if not). */
static void gt_run_ok(const char *app, const char *load, const char *extra, const char *out,
                      const char *devices, const char *sched)
{
    int rc = gt_run(app, load, extra, out, devices, sched);
    if (rc)
        fprintf(stderr, "%s under %s on [%s]: %s\n", app, sched, devices, gt_err);
    assert_int_equal(rc, 0);
}

/* Builds the graph the app builds from the same [load] lines (weighted by
 * default for sssp, as the app asks). */
static void gt_graph(struct hf_gapp *ga, const char *app, const char *load)
{
    char text[GT_TEXT];
    snprintf(text, sizeof text, "[load]\n%s\n", load);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "graph-ref.ini", text), 0);
    int rc = hf__gapp_create(ga, cfg, strcmp(app, "sssp") == 0, 0);
    if (rc)
        fprintf(stderr, "reference graph: %s\n", hf_last_error());
    assert_int_equal(rc, 0);
    hf_config_destroy(cfg);
}

/* The vertex of largest out-degree: a source that reaches something. */
static hf_vid_t gt_hub(const struct hf_graph *g)
{
    hf_vid_t best = 0;
    for (uint64_t v = 1; v < g->nv; v++)
        if (hf_graph_degree(g, (hf_vid_t)v) > hf_graph_degree(g, best))
            best = (hf_vid_t)v;
    return best;
}

/* Power iteration to the app's stopping rule; returns the sweeps done. */
static int gt_pagerank(const struct hf_graph *g, double d, double tol, int max_iters, double *rank)
{
    uint64_t n = g->nv;
    double *next = malloc(n * sizeof *next);
    assert_non_null(next);
    for (uint64_t v = 0; v < n; v++)
        rank[v] = 1.0 / (double)n;
    int it = 0;
    while (it < max_iters) {
        double dangling = 0;
        for (uint64_t u = 0; u < n; u++)
            dangling += hf_graph_degree(g, (hf_vid_t)u) ? 0 : rank[u];
        for (uint64_t v = 0; v < n; v++)
            next[v] = (1 - d) / (double)n + d * dangling / (double)n;
        for (uint64_t u = 0; u < n; u++)
            for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++)
                next[g->adj[j]] += d * rank[u] / (double)hf_graph_degree(g, (hf_vid_t)u);
        double l1 = 0;
        for (uint64_t v = 0; v < n; v++) {
            l1 += fabs(next[v] - rank[v]);
            rank[v] = next[v];
        }
        it++;
        if (l1 < tol)
            break;
    }
    free(next);
    return it;
}

/* What the reference says about every vertex, as the app would print it:
 * exact strings for bfs/cc, numbers for sssp/pagerank. */
struct gt_ref {
    int32_t *depth;
    uint32_t *label;
    float *dist;
    double *rank;
};

/* Checks every line of the output file `out` of `app` run on ga's graph from
 * `src` (bfs, sssp), with PageRank's d / tol / max_iters. */
static void gt_check_output(const char *app, const struct hf_gapp *ga, hf_vid_t src,
                            const char *out, double d, double tol, int max_iters)
{
    const struct hf_graph *g = &ga->g;
    struct gt_ref r = {0};
    if (strcmp(app, "bfs") == 0) {
        r.depth = malloc(g->nv * sizeof *r.depth);
        hf__bfs_ref(g, src, r.depth);
    } else if (strcmp(app, "cc") == 0) {
        r.label = malloc(g->nv * sizeof *r.label);
        hf__cc_ref(g, r.label);
    } else if (strcmp(app, "sssp") == 0) {
        r.dist = malloc(g->nv * sizeof *r.dist);
        assert_int_equal(hf__sssp_ref(g, src, r.dist), 0);
    } else {
        r.rank = malloc(g->nv * sizeof *r.rank);
        gt_pagerank(g, d, tol, max_iters, r.rank);
    }
    FILE *f = fopen(out, "r");
    if (!f)
        fprintf(stderr, "%s: no output file %s\n", app, out);
    assert_non_null(f);
    unsigned long long id;
    char val[64];
    uint64_t v = 0;
    double sum = 0;
    while (fscanf(f, "%llu\t%63s", &id, val) == 2) {
        assert_true(v < g->nv);
        assert_int_equal(id, v + (uint64_t)g->base);
        int good;
        if (r.depth) {
            good = atol(val) == (r.depth[v] == HF_BFS_UNSEEN ? -1 : r.depth[v]);
        } else if (r.label) {
            good = strtoull(val, NULL, 10) == (unsigned long long)r.label[v] + (unsigned)g->base;
        } else if (r.dist) {
            double x = strcmp(val, "inf") == 0 ? INFINITY : strtod(val, NULL);
            good = isinf(r.dist[v]) ? isinf(x) && strcmp(val, "inf") == 0
                                    : fabs(x - r.dist[v]) <= 1e-5 * r.dist[v] + 1e-30;
        } else {
            double x = strtod(val, NULL);
            sum += x;
            good = fabs(x - r.rank[v]) <= 1e-6 * r.rank[v];
        }
        if (!good)
            fprintf(stderr, "%s: %s: vertex %llu is %s in the output, the reference disagrees\n",
                    app, out, id, val);
        assert_true(good);
        v++;
    }
    fclose(f);
    assert_int_equal(v, g->nv);
    if (r.rank)
        assert_true(fabs(sum - 1.0) < 1e-6);
    free(r.depth);
    free(r.label);
    free(r.dist);
    free(r.rank);
}

/* Runs `app` on [load] lines `load` (source = the hub for bfs/sssp) under
 * `sched` on `devices`, and checks its output against the reference. */
static void gt_app_on(const char *app, const char *load, const char *extra, const char *devices,
                      const char *sched, const char *dir)
{
    struct hf_gapp ga;
    gt_graph(&ga, app, load);
    hf_vid_t src = gt_hub(&ga.g);
    char lines[GT_TEXT / 2], out[512];
    int sourced = strcmp(app, "bfs") == 0 || strcmp(app, "sssp") == 0;
    snprintf(lines, sizeof lines, "%s\n%s", extra ? extra : "", "");
    if (sourced)
        snprintf(lines, sizeof lines, "%s\nsource = %llu", extra ? extra : "",
                 (unsigned long long)src + (unsigned long long)ga.g.base);
    snprintf(out, sizeof out, "%s/%s-%s.tsv", dir, app, sched);
    remove(out);
    if (getenv("GT_DEBUG"))
        fprintf(stderr, "%s [%s] [%s] %s\n", app, load, lines, sched);
    gt_run_ok(app, load, lines, out, devices, sched);
    gt_check_output(app, &ga, src, out, 0.85, 1e-6, 100);
    hf__gapp_destroy(&ga);
}

#endif
