/* test_graph_partition.c - the multilevel partitioner (apps/graph/partition/partition.c)
 * through the real engine on two CPU teams, under every scheduler.
 *
 * DESIGN
 * ------
 * Every run has verify on (the app compares its measure round with
 * partition_ref.c), and the test then checks the output file with checks of
 * its own that share nothing with the app: one line per vertex, every id in
 * 0..k-1, the cut and the heaviest part recomputed here from the graph, the
 * balance bound floor((1 + imbalance) * total / k), and the app's edge_cut
 * figure equal to the recomputed cut. Where the input is a METIS file,
 * tests/partition_check.py (an independent validator) must accept it too.
 * Quality is checked against METIS_PartGraphKway on the same graph: the
 * partitioner's cut may be at most 1.3x METIS's (the bench holds the tight
 * targets; this catches a refinement or matching that stops working).
 * Graphs: 4elt (tests/data/), a Kronecker graph (hubs, isolated
 * vertices) and a road-like grid, written as METIS files; then the edge
 * cases of issue 14 (k = 1, k = |V|, k > |V|, isolated vertices, disconnected,
 * all-zero and heavy vertex weights, a chain, a star, self-loops and
 * multi-edges, zero edge weights) and bad keys, which must be refused
 * naming the key; the sim engine, refused unless it executes the bundles;
 * the coarsest graph's partition alone on a graph METIS cannot take as it
 * is (every edge of weight 0); the contraction's slots holding the packed
 * level where a GPU reads it; and next_load's prefix sums, serially and on
 * a team of 4 threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <metis.h>
#include <omp.h>

#include "graph/partition/partition_internal.h"
#include "core/engine.h"
#include "sched.h"
#include "test_files.h"

extern const struct hf_app hf_app_partition;

#define FOURELT HF_TEST_4ELT
#define TWO_TEAMS "[devices]\ncpu = 2\ncpu_teams = 2\ncuda = none\n"

static char dir[64], out_path[128], err[1024];

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static double figure_cut;

/* Runs the app with [load] `load` on `devices` under `sched` in `engine`
 * (sim: `execute` says whether bundles run), verify on; keeps the message of
 * a failure in err and the edge_cut figure in figure_cut. */
static int run_part_on(const char *load, const char *devices, const char *sched,
                       enum hf_engine_kind engine, int execute)
{
    char ini[8192];
    snprintf(ini, sizeof ini, "[load]\nout = %s\ncache_dir =\n%s\n%s", out_path, load, devices);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "partition-test.ini", ini), 0);
    const struct hf_sched_ops *s = hf_sched_find(sched);
    assert_non_null(s);
    struct hf_run_options o = {
        .app = &hf_app_partition,
        .sched = s,
        .cfg = cfg,
        .engine = engine,
        .execute = execute,
        .rounds = 100000,
        .seed = 1,
        .verify = 1,
        .grain = 97, /* odd and small: every round is cut into many chunks */
    };
    struct hf_run *run = NULL;
    unlink(out_path);
    hf_clear_error();
    double t0 = now_s();
    int rc = hf_run(&o, &run);
    if (getenv("PT_DEBUG"))
        fprintf(stderr, "%s %.3f s [%s]\n", sched, now_s() - t0, load);
    snprintf(err, sizeof err, "%s", rc ? hf_last_error() : "");
    figure_cut = -1;
    for (int i = 0; run && i < run->nfigures; i++)
        if (strcmp(run->figures[i].name, "edge_cut") == 0)
            figure_cut = run->figures[i].value;
    hf_run_free(run);
    hf_config_destroy(cfg);
    return rc;
}

static int run_part(const char *load, const char *sched)
{
    return run_part_on(load, TWO_TEAMS, sched, HF_ENGINE_REAL, 1);
}

/* The graph the app builds from the same [load] lines. */
static void load_graph(struct hf_gapp *ga, const char *load)
{
    char text[4096];
    snprintf(text, sizeof text, "[load]\ncache_dir =\n%s\n", load);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "partition-ref.ini", text), 0);
    int rc = hf__gapp_create(ga, cfg, 0, 0);
    if (rc)
        fprintf(stderr, "test graph: %s\n", hf_last_error());
    assert_int_equal(rc, 0);
    hf_config_destroy(cfg);
}

/* Reads the output file and checks it against g: n lines, ids < k, the
 * bound; returns the cut (each undirected edge once, by weight). */
static double check_output(const struct hf_graph *g, long k, double imbalance)
{
    FILE *f = fopen(out_path, "r");
    assert_non_null(f);
    uint32_t *part = malloc(g->nv * sizeof *part);
    int64_t *load = calloc((size_t)k, sizeof *load);
    assert_true(part && load);
    unsigned long p;
    uint64_t n = 0;
    while (fscanf(f, "%lu", &p) == 1) {
        assert_true(n < g->nv);
        if (p >= (unsigned long)k)
            fprintf(stderr, "%s: line %llu: part %lu of %ld\n", out_path, (unsigned long long)n + 1,
                    p, k);
        assert_true(p < (unsigned long)k);
        part[n++] = (uint32_t)p;
    }
    assert_true(feof(f));
    fclose(f);
    assert_int_equal(n, g->nv);
    int64_t total = 0, heaviest = 0;
    for (uint64_t v = 0; v < g->nv; v++)
        total += g->vwgt ? g->vwgt[v] : 1;
    int unit = total == 0;
    if (unit)
        total = (int64_t)g->nv;
    double twice = 0;
    for (uint64_t u = 0; u < g->nv; u++) {
        load[part[u]] += unit || !g->vwgt ? 1 : g->vwgt[u];
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++)
            if (part[g->adj[j]] != part[u])
                twice += g->weights ? g->weights[j] : 1;
    }
    for (long q = 0; q < k; q++)
        heaviest = load[q] > heaviest ? load[q] : heaviest;
    double bound = (1.0 + imbalance) * (double)total / (double)k + 1e-9;
    if ((double)heaviest > bound)
        fprintf(stderr, "%s: heaviest part %lld, bound %g\n", out_path, (long long)heaviest, bound);
    assert_true((double)heaviest <= bound);
    free(part);
    free(load);
    assert_true(figure_cut == twice / 2);
    return twice / 2;
}

/* METIS_PartGraphKway's cut on g with the same k and imbalance. */
static double metis_cut(const struct hf_graph *g, long k, double imbalance)
{
    idx_t n = (idx_t)g->nv, ncon = 1, nparts = (idx_t)k, obj = 0;
    idx_t *xadj = malloc((g->nv + 1) * sizeof *xadj), *adj = malloc(g->ne * sizeof *adj);
    idx_t *ew = malloc(g->ne * sizeof *ew), *part = malloc(g->nv * sizeof *part);
    assert_true(xadj && adj && ew && part);
    for (uint64_t v = 0; v <= g->nv; v++)
        xadj[v] = (idx_t)g->offsets[v];
    for (uint64_t j = 0; j < g->ne; j++) {
        adj[j] = (idx_t)g->adj[j];
        ew[j] = g->weights ? (idx_t)g->weights[j] : 1;
    }
    idx_t opt[METIS_NOPTIONS];
    METIS_SetDefaultOptions(opt);
    opt[METIS_OPTION_UFACTOR] = (idx_t)(imbalance * 1000 + 0.5);
    assert_int_equal(METIS_PartGraphKway(&n, &ncon, xadj, adj, NULL, NULL, ew, &nparts, NULL, NULL,
                                         opt, &obj, part),
                     METIS_OK);
    free(xadj);
    free(adj);
    free(ew);
    free(part);
    return (double)obj;
}

/* tests/partition_check.py on a METIS file and the output, when python3 and
 * the script are there (the C checks above run regardless). */
static void python_check(const char *graph, long k, double imbalance)
{
    const char *script = "tests/partition_check.py";
    if (access(script, R_OK) != 0 || system("python3 -c '' 2>/dev/null") != 0)
        return;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 %s '%s' '%s' --parts %ld --imbalance %g > /dev/null", script,
             graph, out_path, k, imbalance);
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "partition_check.py refused %s for %s\n", out_path, graph);
    assert_int_equal(rc, 0);
}

/* Writes the graph of `gen` ([load] lines) as a METIS file dir/name.graph. */
static void export_metis(const char *gen, const char *name, char *path, size_t len)
{
    struct hf_gapp ga;
    load_graph(&ga, gen);
    snprintf(path, len, "%s/%s.graph", dir, name);
    assert_int_equal(hf_graph_write_metis(&ga.g, path), 0);
    hf__gapp_destroy(&ga);
}

/* Partitions METIS file `graph` into k parts under every scheduler; checks
 * each output and its cut against METIS's. */
static void every_scheduler_on(const char *graph, long k)
{
    char load[1024];
    snprintf(load, sizeof load, "graph = %s\nparts = %ld\nimbalance = 0.03", graph, k);
    struct hf_gapp ga;
    load_graph(&ga, load);
    double want = metis_cut(&ga.g, k, 0.03);
    for (const struct hf_sched_ops *const *s = hf_schedulers; *s; s++) {
        int rc = run_part(load, (*s)->name);
        if (rc)
            fprintf(stderr, "%s under %s: %s\n", graph, (*s)->name, err);
        assert_int_equal(rc, 0);
        double cut = check_output(&ga.g, k, 0.03);
        if (cut > 1.3 * want)
            fprintf(stderr, "%s under %s: cut %g, METIS %g\n", graph, (*s)->name, cut, want);
        assert_true(cut <= 1.3 * want);
        if (getenv("PT_DEBUG"))
            fprintf(stderr, "  cut %g, METIS %g\n", cut, want);
        if (s == hf_schedulers) /* the C checks above cover the others */
            python_check(graph, k, 0.03);
    }
    hf__gapp_destroy(&ga);
}

static void fourelt_every_scheduler(void **state)
{
    (void)state;
    every_scheduler_on(test_data(FOURELT), 64);
}

static void kronecker_every_scheduler(void **state)
{
    (void)state;
    char path[256];
    export_metis("generate = kron\nscale = 12\nedge_factor = 8\nseed = 2", "kron", path,
                 sizeof path);
    every_scheduler_on(path, 16);
}

static void grid_every_scheduler(void **state)
{
    (void)state;
    char path[256];
    export_metis("generate = grid\nrows = 96\ncols = 96\nseed = 3", "grid", path, sizeof path);
    every_scheduler_on(path, 8);
}

/* The cut on a road-like grid (the bench's 512x512), in-process
 * (hf__partition_graph: one team, verified rounds), under three seeds,
 * against METIS_PartGraphKway's (1300). Over four runs of this test, the
 * greedy passes alone (before partition_fm.c) averaged 1.004-1.042x METIS's
 * over the three seeds (single runs 0.989-1.062x); with the host's FM,
 * 0.917-0.950x (single runs 0.905-0.970x). The bound, 0.97x on the mean of
 * the three, fails if FM stops climbing. One thread, so that the cut is one
 * number: with two the lock-free matching moved it from run to run, up to a
 * mean of 0.96x and a single run of 0.986x under ASan, and a loaded CI host
 * crossed the bound; with one, 0.908, 0.909, 0.962x (mean 0.926x). */
static void grid_cut_below_metis(void **state)
{
    (void)state;
    struct hf_gapp ga;
    memset(&ga, 0, sizeof ga);
    load_graph(&ga, "generate = grid\nrows = 512\ncols = 512\nseed = 1");
    double want = metis_cut(&ga.g, 64, 0.03), sum = 0;
    uint32_t *part = malloc(ga.g.nv * sizeof *part);
    assert_non_null(part);
    for (uint64_t seed = 1; seed <= 3; seed++) {
        double cut = 0;
        int rc = hf__partition_graph(&ga.g, 64, 0.03, seed, 1, part, &cut);
        if (rc)
            fprintf(stderr, "grid 512x512: %s\n", hf_last_error());
        assert_int_equal(rc, 0);
        struct hf_part_ref r;
        assert_int_equal(hf__partition_ref(&ga.g, part, 64, 1, &r), 0);
        assert_true(r.cut == cut);
        assert_true(r.heaviest <= (int64_t)(1.03 * (double)ga.g.nv / 64 + 1e-9));
        fprintf(stderr, "grid 512x512, seed %llu: cut %g, METIS %g (%.3fx)\n",
                (unsigned long long)seed, cut, want, cut / want);
        sum += cut;
    }
    assert_true(sum / 3 <= 0.97 * want);
    free(part);
    hf__gapp_destroy(&ga);
}

/* Runs [load] `load` (a file written by the caller) into k parts and checks
 * the output; returns the cut. */
static double run_ok(const char *load, long k, double imbalance)
{
    char lines[2048];
    snprintf(lines, sizeof lines, "%s\nparts = %ld\nimbalance = %g", load, k, imbalance);
    int rc = run_part(lines, "greedy");
    if (rc)
        fprintf(stderr, "[%s]: %s\n", lines, err);
    assert_int_equal(rc, 0);
    struct hf_gapp ga;
    load_graph(&ga, lines);
    double cut = check_output(&ga.g, k, imbalance);
    hf__gapp_destroy(&ga);
    return cut;
}

static void write_text(const char *path, const char *text)
{
    write_file(path, text, strlen(text));
}

/* A METIS chain of n vertices, optionally with vertex weights `vw` each. */
static void write_chain(const char *path, int n, int vw)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%d %d%s\n", n, n - 1, vw >= 0 ? " 10" : "");
    for (int v = 1; v <= n; v++) {
        if (vw >= 0)
            fprintf(f, "%d ", vw);
        if (v > 1)
            fprintf(f, "%d ", v - 1);
        if (v < n)
            fprintf(f, "%d", v + 1);
        fprintf(f, "\n");
    }
    fclose(f);
}

static void edge_cases(void **state)
{
    (void)state;
    char path[256], load[512];
    /* A chain: a good partition cuts about k - 1 edges. */
    snprintf(path, sizeof path, "%s/chain.graph", dir);
    write_chain(path, 3000, -1);
    snprintf(load, sizeof load, "graph = %s", path);
    assert_true(run_ok(load, 8, 0.03) <= 3 * 7);
    python_check(path, 8, 0.03);
    /* k = 1: everything in part 0, nothing cut. */
    assert_true(run_ok(load, 1, 0.03) == 0);
    /* All-zero vertex weights: balanced by vertex count. */
    snprintf(path, sizeof path, "%s/zero.graph", dir);
    write_chain(path, 500, 0);
    snprintf(load, sizeof load, "graph = %s", path);
    run_ok(load, 4, 0.03);
    python_check(path, 4, 0.03);
    /* k = |V|: one vertex per part. */
    snprintf(path, sizeof path, "%s/ten.graph", dir);
    write_chain(path, 10, -1);
    snprintf(load, sizeof load, "graph = %s", path);
    assert_true(run_ok(load, 10, 0.03) == 9);
    /* A star: a hub and 1999 leaves. */
    snprintf(path, sizeof path, "%s/star.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (int v = 1; v < 2000; v++)
        fprintf(f, "0 %d\n", v);
    fclose(f);
    snprintf(load, sizeof load, "graph = %s", path);
    run_ok(load, 4, 0.03);
    /* Disconnected: two grids side by side, isolated vertices in between
     * (ids no edge names), weighted edges. */
    snprintf(path, sizeof path, "%s/islands.txt", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    for (int part = 0; part < 2; part++)
        for (int r = 0; r < 30; r++)
            for (int c = 0; c < 30; c++) {
                int v = part * 1000 + r * 30 + c;
                if (c + 1 < 30)
                    fprintf(f, "%d %d %d\n", v, v + 1, 1 + (r + c) % 5);
                if (r + 1 < 30)
                    fprintf(f, "%d %d %d\n", v, v + 30, 1 + (r * c) % 3);
            }
    fclose(f);
    snprintf(load, sizeof load, "graph = %s", path);
    run_ok(load, 6, 0.05);
    /* Zero edge weights (most of a grid's): they cut nothing, and METIS,
     * which partitions the coarsest graph, must never see them. */
    for (int weight = 0; weight < 2; weight++) {
        snprintf(path, sizeof path, "%s/zero-edges-%d.txt", dir, weight);
        f = fopen(path, "w");
        assert_non_null(f);
        for (int r = 0; r < 60; r++)
            for (int c = 0; c < 60; c++) {
                int v = r * 60 + c;
                if (c + 1 < 60)
                    fprintf(f, "%d %d 0\n", v, v + 1);
                if (r + 1 < 60)
                    fprintf(f, "%d %d %d\n", v, v + 60, weight * ((r * 7 + c) % 3 == 0));
            }
        fclose(f);
        snprintf(load, sizeof load, "graph = %s", path);
        assert_true(run_ok(load, 8, 0.03) <= (weight ? 200 : 0));
    }
    /* Self-loops and multi-edges kept (drop_self_loops = no, dedupe = no). */
    snprintf(path, sizeof path, "%s/loops.txt", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    for (int v = 0; v < 600; v++) {
        fprintf(f, "%d %d 2\n%d %d 1\n", v, (v + 1) % 600, v, (v + 1) % 600);
        if (v % 7 == 0)
            fprintf(f, "%d %d 5\n", v, v);
        if (v % 11 == 0)
            fprintf(f, "%d %d 3\n", v, (v + 300) % 600);
    }
    fclose(f);
    snprintf(load, sizeof load, "graph = %s\ndrop_self_loops = no\ndedupe = no", path);
    run_ok(load, 5, 0.03);
    /* Vertex and edge weights from a METIS file (fmt 11). */
    snprintf(path, sizeof path, "%s/weighted.graph", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%% a weighted ring with chords\n400 600 11\n");
    for (int v = 0; v < 400; v++) {
        int a = (v + 399) % 400, b = (v + 1) % 400, c = v < 200 ? v + 200 : v - 200;
        fprintf(f, "%d %d %d %d %d %d %d\n", 1 + v % 4, a + 1, 1 + (a + v) % 3, b + 1,
                1 + (b + v) % 3, c + 1, 1);
    }
    fclose(f);
    snprintf(load, sizeof load, "graph = %s", path);
    run_ok(load, 8, 0.05);
    python_check(path, 8, 0.05);
}

/* A random 100-vertex METIS graph (fmt 11) whose vertex weights (23 of 3,
 * 23 of 2, 43 of 1, 11 of 0) make a 64-part bound of 3 bin packing: the
 * greedy balance sweeps left a part at 6 until make_room (found by a
 * random test of the app, seed 159). */
/* clang-format off */
static const char tight_graph[] =
    "100 99 11\n"
    "2\n"
    "1 59 5 60 5 74 2\n"
    "2 14 0\n"
    "2 13 0 57 1 78 1 82 1\n"
    "3 11 1 29 0 49 2 61 2\n"
    "0 11 5 48 5\n"
    "1 16 0 21 1\n"
    "1 39 1 86 0\n"
    "2 41 2\n"
    "3 11 0 45 0 65 5\n"
    "1 5 1 6 5 10 0\n"
    "3 59 1 99 1\n"
    "1 4 0\n"
    "2 3 0 47 1 83 1\n"
    "1 51 0\n"
    "2 7 0 35 0 53 5\n"
    "1 24 0 66 0\n"
    "2 57 1\n"
    "1\n"
    "2 70 5 93 5\n"
    "2 7 1\n"
    "2 46 1 55 5 67 5 75 1\n"
    "1 85 0\n"
    "1 17 0 33 1\n"
    "3 53 1 80 2 99 0\n"
    "1 40 1 53 1\n"
    "1 33 2\n"
    "1 90 2\n"
    "2 5 0 33 5 61 1\n"
    "0 65 1 91 0\n"
    "1 55 5\n"
    "1 85 5\n"
    "1 24 1 27 2 29 5 35 1 77 0\n"
    "1 52 1\n"
    "1 16 0 33 1\n"
    "1\n"
    "0 58 0\n"
    "2 39 0 85 1\n"
    "3 8 1 38 0 44 1 49 5 77 1 88 5 94 0\n"
    "3 26 1\n"
    "3 9 2 86 0\n"
    "3 85 1\n"
    "1\n"
    "1 39 1\n"
    "3 10 0 58 0\n"
    "1 22 1 97 0\n"
    "2 14 1 52 0 77 1\n"
    "0 6 5 62 0 83 0 85 1 89 0 98 0\n"
    "0 5 2 39 5\n"
    "1\n"
    "1 15 0\n"
    "2 34 1 47 0 64 0\n"
    "2 16 5 25 1 26 1\n"
    "1 94 1\n"
    "0 22 5 31 5\n"
    "3 100 1\n"
    "0 4 1 18 1\n"
    "1 37 0 45 0 94 5 100 5\n"
    "1 2 5 12 1 86 0\n"
    "2 2 5\n"
    "1 5 2 29 1 85 1\n"
    "1 48 0 84 5\n"
    "2\n"
    "3 52 0 70 1\n"
    "0 10 5 30 1\n"
    "2 17 0\n"
    "2 22 5\n"
    "1 74 1\n"
    "3\n"
    "1 20 5 64 1 94 1\n"
    "2 83 1\n"
    "0 89 5\n"
    "1 90 0\n"
    "1 2 2 68 1 99 1\n"
    "3 22 1 87 2\n"
    "3\n"
    "1 33 0 39 1 47 1 81 2 95 0 97 0\n"
    "1 4 1 79 0 88 1\n"
    "3 78 0\n"
    "2 25 2\n"
    "3 77 2\n"
    "1 4 1\n"
    "2 14 1 48 0 71 1\n"
    "1 62 5 99 1\n"
    "1 23 0 32 5 38 1 42 1 48 1 61 1\n"
    "1 8 0 41 0 59 0\n"
    "3 75 2\n"
    "0 39 5 78 1\n"
    "3 48 0 72 5\n"
    "0 28 2 73 0 91 2 100 1\n"
    "1 30 0 90 2\n"
    "3\n"
    "3 20 5\n"
    "3 39 0 54 1 58 5 70 1\n"
    "3 77 0\n"
    "1\n"
    "1 46 0 77 0\n"
    "2 48 0\n"
    "3 12 1 25 0 74 1 84 1\n"
    "1 56 1 58 5 90 1\n";
/* clang-format on */

/* Another (seed 579): 3 parts of at most 9 hold 27 exactly; the greedy left
 * a part at 10 that only a swap of a 2 for a 1 fixes. */
/* clang-format off */
static const char swap_graph[] =
    "17 15 11\n"
    "3 4 2 14 5\n"
    "0 11 0 13 0\n"
    "2 14 0\n"
    "2 1 2 5 5 6 0\n"
    "0 4 5\n"
    "2 4 0 9 1 14 5\n"
    "1 8 0\n"
    "1 7 0 12 0\n"
    "3 6 1 15 1\n"
    "1 11 1\n"
    "1 2 0 10 1 12 0 15 5\n"
    "0 8 0 11 0\n"
    "1 2 0\n"
    "3 1 5 3 0 6 5\n"
    "1 9 1 11 5\n"
    "3\n"
    "3\n";
/* clang-format on */

/* Bounds that only a careful packing meets are met, and checked. */
static void tight_bound_with_heavy_vertices(void **state)
{
    (void)state;
    char path[256], load[512];
    snprintf(path, sizeof path, "%s/tight.graph", dir);
    write_text(path, tight_graph);
    snprintf(load, sizeof load, "graph = %s\nseed = 159", path);
    run_ok(load, 64, 0.5);
    python_check(path, 64, 0.5);
    snprintf(path, sizeof path, "%s/swap.graph", dir);
    write_text(path, swap_graph);
    snprintf(load, sizeof load, "graph = %s\nseed = 579", path);
    run_ok(load, 3, 0.1);
    python_check(path, 3, 0.1);
}

struct bad_row {
    const char *load, *expect;
};

static void bad_input_is_refused(void **state)
{
    (void)state;
    char chain[256], heavy[256], frac[256], rows[8][512];
    snprintf(chain, sizeof chain, "%s/bad-chain.graph", dir);
    write_chain(chain, 50, -1);
    snprintf(heavy, sizeof heavy, "%s/heavy.graph", dir);
    write_text(heavy, "4 3 10\n1000 2\n1 1 3\n1 2 4\n1 3\n");
    snprintf(frac, sizeof frac, "%s/frac.txt", dir);
    write_text(frac, "0 1 2.5\n1 2 1\n");
    snprintf(rows[0], sizeof rows[0], "graph = %s\nparts = 51", chain);
    snprintf(rows[1], sizeof rows[1], "graph = %s\nparts = 2", heavy);
    snprintf(rows[2], sizeof rows[2], "graph = %s\nparts = 2", frac);
    snprintf(rows[3], sizeof rows[3], "graph = %s\nobjective = vol", chain);
    snprintf(rows[4], sizeof rows[4], "graph = %s\nsymmetrise = no", chain);
    snprintf(rows[5], sizeof rows[5], "graph = %s\nparts = 0", chain);
    snprintf(rows[6], sizeof rows[6], "graph = %s\nimbalance = -0.1", chain);
    snprintf(rows[7], sizeof rows[7], "graph = %s\nparts = 49\nimbalance = 0", chain);
    const struct bad_row bad[] = {
        {rows[0], "parts = 51"}, {rows[1], "weighs 1000"},
        {rows[2], "integer"},    {rows[3], "objective"},
        {rows[4], "symmetrise"}, {rows[5], "parts"},
        {rows[6], "imbalance"},  {rows[7], "no partition meets the bound"},
    };
    /* An output that cannot be written fails the run, naming the key. */
    char unwritable[600];
    snprintf(unwritable, sizeof unwritable, "graph = %s\nparts = 2", chain);
    char saved[128];
    snprintf(saved, sizeof saved, "%s", out_path);
    snprintf(out_path, sizeof out_path, "%s/no-such-dir/out.part", dir);
    assert_int_not_equal(run_part(unwritable, "greedy"), 0);
    assert_non_null(strstr(err, "[load] out"));
    snprintf(out_path, sizeof out_path, "%s", saved);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = run_part(bad[i].load, "greedy");
        if (rc == 0 || !strstr(err, bad[i].expect))
            fprintf(stderr, "bad row %zu [%s]: rc %d, \"%s\", expected \"%s\"\n", i, bad[i].load,
                    rc, err, bad[i].expect);
        assert_int_not_equal(rc, 0);
        assert_non_null(strstr(err, bad[i].expect));
        assert_int_not_equal(access(out_path, F_OK), 0); /* no output from a failed run */
    }
}

/* A small LCG for the random graphs below (the test must not depend on libc's rand). */
static uint32_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*x >> 33);
}

/* Random METIS graphs (fmt 11: vertex weights 0..3, edge weights 0..5,
 * isolated vertices, sometimes all vertex weights 0) under a random
 * scheduler, k and seed. The imbalance is chosen so that a partition exists
 * whatever the weights (a part of (1 + imbalance) W / k >= W / k + the
 * heaviest vertex always has room for one more), so every run must succeed
 * and pass the checks. Three bugs were found this way (a METIS crash on
 * zero edge weights, two balance misses). */
static void random_graphs(void **state)
{
    (void)state;
    static const int sizes[] = {5, 17, 100, 700};
    static const long ks[] = {1, 2, 3, 8, 64};
    static const char *const scheds[] = {"greedy", "hass", "static", "minmin", "qilin"};
    char path[256], load[512];
    snprintf(path, sizeof path, "%s/random.graph", dir);
    for (uint64_t t = 0; t < 16; t++) {
        uint64_t x = t * 0x9e3779b97f4a7c15ull + 1;
        int n = sizes[lcg(&x) % 4];
        long k = ks[lcg(&x) % 5];
        k = k > n ? n : k;
        int nw = (int)(lcg(&x) % 4), zero = lcg(&x) % 5 == 0;
        int64_t *w = calloc((size_t)n * (size_t)n, sizeof *w); /* dense: n <= 700 */
        int *vw = malloc((size_t)n * sizeof *vw);
        assert_true(w && vw);
        long m = 0, maxw = 0, total = 0;
        for (long e = 0; e < (long)n * (1 + 2 * nw) / 2; e++) {
            int u = (int)(lcg(&x) % (uint32_t)n), v = (int)(lcg(&x) % (uint32_t)n);
            if (u == v || w[(size_t)u * n + v])
                continue;
            int64_t ew = 1 + lcg(&x) % 6; /* stored + 1: 0 marks "no edge" */
            w[(size_t)u * n + v] = w[(size_t)v * n + u] = ew;
            m++;
        }
        for (int v = 0; v < n; v++) {
            vw[v] = zero ? 0 : (int)(lcg(&x) % 4);
            maxw = vw[v] > maxw ? vw[v] : maxw;
            total += vw[v];
        }
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%d %ld 11\n", n, m);
        for (int u = 0; u < n; u++) {
            fprintf(f, "%d", vw[u]);
            for (int v = 0; v < n; v++)
                if (w[(size_t)u * n + v])
                    fprintf(f, " %d %lld", v + 1, (long long)w[(size_t)u * n + v] - 1);
            fprintf(f, "\n");
        }
        fclose(f);
        if (total == 0) { /* balance counts vertices */
            total = n;
            maxw = 1;
        }
        double imb = (double)k * (double)maxw / (double)total + 0.01;
        imb = imb < 0.03 ? 0.03 : imb;
        snprintf(load, sizeof load, "graph = %s\nparts = %ld\nimbalance = %.6f\nseed = %llu", path,
                 k, imb, (unsigned long long)t);
        const char *sched = scheds[lcg(&x) % 5];
        int rc = run_part(load, sched);
        if (rc)
            fprintf(stderr, "random graph %llu (n %d, m %ld, k %ld, %s): %s\n",
                    (unsigned long long)t, n, m, k, sched, err);
        assert_int_equal(rc, 0);
        struct hf_gapp ga;
        load_graph(&ga, load);
        check_output(&ga.g, k, imb);
        hf__gapp_destroy(&ga);
        if (t % 8 == 0)
            python_check(path, k, imb);
        free(w);
        free(vw);
    }
}

/* The coarsest graph's partition on its own (partition_initial.c): a grid
 * whose edges all weigh 0 crashes METIS 5.1 when handed over as it is. */
static void initial_partition_of_zero_weights(void **state)
{
    (void)state;
    enum { SIDE = 60, N = SIDE * SIDE };
    struct hf_partition c;
    memset(&c, 0, sizeof c);
    c.k = 8;
    c.imbalance = 0.03;
    c.seed = 1;
    struct hf_plevel *l = &c.lv[0];
    l->nv = N;
    l->offsets = calloc(N + 1, sizeof *l->offsets);
    l->adj = malloc(4 * N * sizeof *l->adj);
    l->ew = calloc(4 * N, sizeof *l->ew); /* every edge weighs 0 */
    l->part = malloc(N * sizeof *l->part);
    assert_true(l->offsets && l->adj && l->ew && l->part);
    for (int v = 0; v < N; v++) {
        int r = v / SIDE, col = v % SIDE, n = 0;
        uint32_t *a = l->adj + l->ne;
        if (r > 0)
            a[n++] = (uint32_t)(v - SIDE);
        if (col > 0)
            a[n++] = (uint32_t)(v - 1);
        if (col + 1 < SIDE)
            a[n++] = (uint32_t)(v + 1);
        if (r + 1 < SIDE)
            a[n++] = (uint32_t)(v + SIDE);
        l->ne += (uint64_t)n;
        l->offsets[v + 1] = l->ne;
    }
    assert_int_equal(hf__part_initial(&c, 0), 0);
    int64_t load[8] = {0};
    for (int v = 0; v < N; v++) {
        assert_true(l->part[v] < 8);
        load[l->part[v]]++;
    }
    for (int p = 0; p < 8; p++) /* bin packing: as even as it gets */
        assert_true(load[p] == N / 8);
    free(l->offsets);
    free(l->adj);
    free(l->ew);
    free(l->part);
}

/* The contraction's slots after hf__part_pack hold the new level's lists
 * exactly where a GPU's compaction reads them (partition_cuda.cu,
 * "Residency"): vertex v's cdeg[v] entries at tadj[ub[v]] and tew[ub[v]],
 * equal to the packed level's list at offsets[v], with offsets the prefix
 * sum of cdeg; slots_level names that level from the pack until
 * hf__part_build_cmap and hf__part_scratch_free say the slots hold none.
 * With `given` arrays for ub and cdeg (setup's pinned ones in a run with a
 * GPU; plain here) the scratch uses them and leaves them to their owner. */
static void slots_case(int given)
{
    enum { SIDE = 90, N = SIDE * SIDE };
    struct hf_partition c;
    memset(&c, 0, sizeof c);
    c.seed = 3;
    c.maxvwgt = 16;
    c.slots_level = -1;
    if (given) {
        c.ub_pinned = malloc((N + 1) * sizeof *c.ub_pinned);
        c.cdeg_pinned = malloc(N * sizeof *c.cdeg_pinned);
        assert_true(c.ub_pinned && c.cdeg_pinned);
    }
    struct hf_plevel *l = &c.lv[0];
    l->nv = N;
    l->offsets = calloc(N + 1, sizeof *l->offsets);
    l->adj = malloc(4 * N * sizeof *l->adj);
    l->ew = malloc(4 * N * sizeof *l->ew);
    l->match = malloc(N * sizeof *l->match);
    l->cmap = malloc(N * sizeof *l->cmap);
    c.tcap = 4 * N;
    c.tadj = malloc(c.tcap * sizeof *c.tadj);
    c.tew = malloc(c.tcap * sizeof *c.tew);
    assert_true(l->offsets && l->adj && l->ew && l->match && l->cmap && c.tadj && c.tew);
    for (int v = 0; v < N; v++) {
        int r = v / SIDE, col = v % SIDE;
        int nb[4] = {r > 0 ? v - SIDE : -1, col > 0 ? v - 1 : -1, col + 1 < SIDE ? v + 1 : -1,
                     r + 1 < SIDE ? v + SIDE : -1};
        for (int i = 0; i < 4; i++)
            if (nb[i] >= 0) {
                l->adj[l->ne] = (uint32_t)nb[i];
                l->ew[l->ne++] = 1 + (v + nb[i]) % 3; /* symmetric */
            }
        l->offsets[v + 1] = l->ne;
    }
    for (c.cur = 0; c.cur < 3; c.cur++) {
        l = &c.lv[c.cur];
        for (uint64_t v = 0; v < l->nv; v++)
            l->match[v] = HF_PART_NONE;
        hf__part_match(&c, 0, l->nv, 2);
        hf__part_resolve(&c, 0, l->nv, 2);
        assert_int_equal(hf__part_build_cmap(&c), 0);
        assert_int_equal(c.slots_level, -1);
        assert_true(!given || (c.ub == c.ub_pinned && c.cdeg == c.cdeg_pinned));
        assert_int_equal(hf__part_contract(&c, 0, c.nc, 2), 0);
        assert_int_equal(hf__part_pack(&c), 0);
        assert_int_equal(c.slots_level, c.cur + 1);
        const struct hf_plevel *cl = &c.lv[c.cur + 1];
        assert_true(cl->nv == c.nc && cl->offsets[0] == 0 && cl->ne < l->ne);
        assert_true(c.ub[c.nc] == l->ne); /* the span: every fine arc */
        for (uint64_t v = 0; v < c.nc; v++) {
            uint64_t at = cl->offsets[v], n = c.cdeg[v];
            assert_true(cl->offsets[v + 1] - at == n && c.ub[v] + n <= c.ub[v + 1]);
            assert_memory_equal(cl->adj + at, c.tadj + c.ub[v], n * sizeof *cl->adj);
            assert_memory_equal(cl->ew + at, c.tew + c.ub[v], n * sizeof *cl->ew);
        }
    }
    hf__part_scratch_free(&c);
    assert_int_equal(c.slots_level, -1);
    for (int i = 0; i <= 3; i++) {
        free(c.lv[i].offsets);
        free(c.lv[i].adj);
        free(c.lv[i].ew);
        free(c.lv[i].vw);
        free(c.lv[i].match);
        free(c.lv[i].cmap);
    }
    free(c.tadj);
    free(c.tew);
    free(c.ub_pinned); /* still the owner's: ASan reports a double free or a leak */
    free(c.cdeg_pinned);
}

static void slots_hold_the_packed_level(void **state)
{
    (void)state;
    slots_case(0);
    slots_case(1);
}

/* next_load's prefix sums (hf__part_scan): the same sums serially and on
 * the main thread's team (4 threads: the parallel path even on 2 cores), at
 * lengths around the parallel threshold and not divisible by the team. */
static void prefix_sums(void **state)
{
    (void)state;
    const size_t lengths[] = {0, 1, 1000, (1u << 16) - 1, (1u << 16) + 7, 300001};
    int threads_before = omp_get_max_threads();
    uint64_t *a = malloc((300001 + 1) * sizeof *a);
    assert_non_null(a);
    for (int team = 1; team <= 4; team += 3) {
        omp_set_num_threads(team);
        for (size_t t = 0; t < sizeof lengths / sizeof *lengths; t++) {
            size_t n = lengths[t];
            for (size_t i = 0; i < n; i++)
                a[i] = (i * 2654435761u) % 97;
            uint64_t total = hf__part_scan(a, n), sum = 0;
            for (size_t i = 0; i < n; i++) {
                assert_true(a[i] == sum);
                sum += (i * 2654435761u) % 97;
            }
            assert_true(total == sum && a[n] == sum);
        }
    }
    omp_set_num_threads(threads_before);
    free(a);
}

/* hf__part_apply_claims: every claim of every region lands, whatever the
 * regions' sizes (empty ones, ones below and above the glue's parallel
 * threshold), serially and on the main thread's team (4 threads: the
 * parallel path even on 2 cores), and nothing else in match is written. */
static void claims_applied(void **state)
{
    (void)state;
    const uint64_t sizes[] = {0, 5, 70000, 1, 0, 40000, 123457, 3};
    const size_t nreg = sizeof sizes / sizeof *sizes;
    uint64_t all = 0;
    for (size_t r = 0; r < nreg; r++)
        all += sizes[r];
    const uint64_t nv = all + 1000;
    struct hf_partition *c = calloc(1, sizeof *c);
    uint32_t *match = malloc(nv * sizeof *match);
    assert_non_null(c);
    assert_non_null(match);
    c->claims_cap = all + 2 * nreg;
    c->claims = malloc(c->claims_cap * sizeof *c->claims);
    assert_non_null(c->claims);
    c->lv[0].nv = nv;
    c->lv[0].match = match;
    int threads_before = omp_get_max_threads();
    for (int team = 1; team <= 4; team += 3) {
        omp_set_num_threads(team);
        for (uint64_t v = 0; v < nv; v++)
            match[v] = HF_PART_NONE;
        /* Region r claims the vertices (i * 7919) mod nv for its run of i,
         * each for partner i: distinct vertices, so any order gives one result. */
        uint64_t at = 0, i = 0;
        for (size_t r = 0; r < nreg; r++) {
            c->claim_at[r] = at;
            c->claims[at] = sizes[r];
            uint32_t *pairs = (uint32_t *)(c->claims + at + 2);
            for (uint64_t k = 0; k < sizes[r]; k++, i++) {
                pairs[2 * k] = (uint32_t)(i * 7919 % nv);
                pairs[2 * k + 1] = (uint32_t)i;
            }
            at += 2 + sizes[r]; /* the head, then one 8-byte pair a claim */
        }
        c->nclaim_regions = nreg;
        c->claims_used = at;
        hf__part_apply_claims(c);
        assert_true(c->nclaim_regions == 0 && c->claims_used == 0);
        uint64_t claimed = 0;
        for (uint64_t v = 0; v < nv; v++) {
            if (match[v] == HF_PART_NONE)
                continue;
            assert_true(match[v] * 7919ull % nv == v);
            claimed++;
        }
        assert_true(claimed == all);
    }
    omp_set_num_threads(threads_before);
    free(c->claims);
    free(match);
    free(c);
}

/* The sim engine: refused unless it executes the bundles; then the same
 * checks as a real run (a modelled GPU gets no chunks: no run_cuda). */
static void simulated_runs(void **state)
{
    (void)state;
    char path[256], load[512];
    snprintf(path, sizeof path, "%s/sim-chain.graph", dir);
    write_chain(path, 2000, -1);
    snprintf(load, sizeof load, "graph = %s\nparts = 4\nimbalance = 0.03", path);
    const char *sim = "[devices]\nsim = host, gpu\n[sim.host]\nkind = cpu\nrate = 1e9\n"
                      "[sim.gpu]\nkind = gpu\nrate = 4e9\n";
    assert_int_not_equal(run_part_on(load, sim, "hass", HF_ENGINE_SIM, 0), 0);
    assert_non_null(strstr(err, "execute = yes"));
    int rc = run_part_on(load, sim, "hass", HF_ENGINE_SIM, 1);
    if (rc)
        fprintf(stderr, "sim, execute: %s\n", err);
    assert_int_equal(rc, 0);
    struct hf_gapp ga;
    load_graph(&ga, load);
    assert_true(check_output(&ga.g, 4, 0.03) <= 3 * 3);
    hf__gapp_destroy(&ga);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/hf_partition.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(out_path, sizeof out_path, "%s/out.part", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fourelt_every_scheduler),
        cmocka_unit_test(kronecker_every_scheduler),
        cmocka_unit_test(grid_every_scheduler),
        cmocka_unit_test(grid_cut_below_metis),
        cmocka_unit_test(edge_cases),
        cmocka_unit_test(tight_bound_with_heavy_vertices),
        cmocka_unit_test(random_graphs),
        cmocka_unit_test(bad_input_is_refused),
        cmocka_unit_test(simulated_runs),
        cmocka_unit_test(initial_partition_of_zero_weights),
        cmocka_unit_test(slots_hold_the_packed_level),
        cmocka_unit_test(prefix_sums),
        cmocka_unit_test(claims_applied),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
