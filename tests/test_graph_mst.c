/* test_graph_mst.c - the Borůvka MST app (apps/graph/mst/mst.c) through the real
 * engine on two CPU teams (two devices, so every round's changes are merged
 * across devices), under greedy, HASS and the other schedulers, with verify
 * on: the forest written to [load] out must be, byte for byte, the one
 * Kruskal (mst_ref.c) finds with the same tie rule. Graphs: 4elt (METIS,
 * unweighted), weighted Kronecker and grid graphs, a hand-made disconnected
 * graph with equal weights (the tie rule decides every edge), and inputs the
 * app must refuse with file:line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "graph/mst/mst.h"
#include "test_files.h"
#include "mst_expected.h"

/* test_files.h writes bytes; these inputs are text. */
static void write_text(const char *path, const char *text)
{
    write_file(path, text, strlen(text));
}
#include "core/engine.h"
#include "sched.h"

extern const struct hf_app hf_app_mst;

#define FOURELT HF_TEST_4ELT

static char dir[64], out_path[128], in_path[128];
static const char *two_cpus = "[devices]\ncpu = 2\ncpu_teams = 2\ncuda = none\n";
static const char *sim_node = "[devices]\nsim = host, gpu, gpu\n"
                              "[sim.host]\nkind = cpu\nrate = 1e9\n"
                              "[sim.gpu]\nkind = gpu\nrate = 4e9\nlatency_us = 10\n"
                              "bandwidth_gbs = 10\n";

/* Runs mst with `load` ([load] keys) on `devices` under `sched`; `execute`:
 * whether a simulation runs the bundles. */
static int run_mst_ex(const char *load, const char *devices, const char *sched,
                      enum hf_engine_kind engine, int execute)
{
    char ini[4096];
    snprintf(ini, sizeof ini, "[load]\nout = %s\ncache_dir = %s\n%s\n%s", out_path, dir, load,
             devices);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "test.ini", ini), 0);
    const struct hf_sched_ops *s = hf_sched_find(sched);
    assert_non_null(s);
    struct hf_run_options o = {
        .app = &hf_app_mst,
        .sched = s,
        .cfg = cfg,
        .engine = engine,
        .rounds = 1000,
        .seed = 3,
        .execute = execute,
        .verify = 1,
        .grain = 256,
    };
    struct hf_run *run = NULL;
    unlink(out_path);
    int rc = hf_run(&o, &run);
    if (rc)
        fprintf(stderr, "mst: %s\n", hf_last_error());
    hf_run_free(run);
    hf_config_destroy(cfg);
    return rc;
}

static int run_mst(const char *load, const char *devices, const char *sched,
                   enum hf_engine_kind engine)
{
    return run_mst_ex(load, devices, sched, engine, 1);
}

/* Runs `load` under greedy and hass on two CPU teams; the output must equal
 * Kruskal's forest of `g`. */
static void check_graph(const struct hf_graph *g, const char *load)
{
    size_t n;
    char *want = kruskal_text(g, &n);
    assert_true(n > 0);
    static const char *const scheds[] = {"greedy", "hass"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(run_mst(load, two_cpus, scheds[i], HF_ENGINE_REAL), 0);
        expect_forest(out_path, want);
    }
    free(want);
}

static void fourelt(void **state)
{
    (void)state;
    test_data(FOURELT);
    struct hf_graph g;
    struct hf_graph_opts o = {.symmetrise = 1, .drop_self_loops = 1, .dedupe = 1, .cache_dir = ""};
    assert_int_equal(hf_graph_load(&g, FOURELT, &o), 0);
    assert_null(g.weights); /* unweighted: every edge weighs 1, the tie rule decides */
    check_graph(&g, "graph = " FOURELT "\n");
    hf_graph_free(&g);
}

static void kronecker_weighted(void **state)
{
    (void)state;
    struct hf_graph g;
    assert_int_equal(hf_graph_kronecker(&g, 11, 8, 5, 1), 0);
    check_graph(&g, "generate = kron\nscale = 11\nedge_factor = 8\nseed = 5\nweighted = yes\n");
    hf_graph_free(&g);
}

static void grid_weighted(void **state)
{
    (void)state;
    struct hf_graph g; /* keep = 0.6 leaves it disconnected: a forest */
    assert_int_equal(hf_graph_grid(&g, 64, 64, HF_GRAPH_GRID_KEEP, 7, 1), 0);
    check_graph(&g, "generate = grid\nrows = 64\ncols = 64\nseed = 7\nweighted = yes\n");
    hf_graph_free(&g);
}

/* A disconnected graph with equal weights, checked against a forest worked out
 * by hand: the 4-cycle 0-1-2-3 (all weight 1) keeps its three edges of lowest
 * arc id (0-1, 0-3, 1-2), the pair 4-5 its lighter parallel edge, and 6 (a
 * self-loop only) stays alone: 7 vertices, 3 components, 4 edges. */
static void ties_and_forest(void **state)
{
    (void)state;
    write_text(in_path, "# a cycle of equal weights\n2 3 1\n1 2 1\n0 3 1\n0 1 1\n"
                        "4 5 2\n5 4 3\n6 6 5\n");
    char load[256];
    snprintf(load, sizeof load, "graph = %s\nformat = edgelist\n", in_path);
    static const char *const want = "0\t1\t1\n0\t3\t1\n1\t2\t1\n4\t5\t2\n";
    static const char *const scheds[] = {"greedy", "hass", "static", "minmin", "qilin"};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(run_mst(load, two_cpus, scheds[i], HF_ENGINE_REAL), 0);
        expect_forest(out_path, want);
    }
    /* The same through the simulated engine, executing every bundle. */
    assert_int_equal(run_mst(load, sim_node, "hass", HF_ENGINE_SIM), 0);
    expect_forest(out_path, want);
}

/* Every scheduler, and the simulated node (executing bundles or not), on one
 * weighted Kronecker graph. */
static void every_scheduler(void **state)
{
    (void)state;
    struct hf_graph g;
    assert_int_equal(hf_graph_kronecker(&g, 10, 8, 9, 1), 0);
    size_t n;
    char *want = kruskal_text(&g, &n);
    const char *load = "generate = kron\nscale = 10\nedge_factor = 8\nseed = 9\nweighted = yes\n";
    static const char *const scheds[] = {"static", "minmin", "qilin"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(run_mst(load, two_cpus, scheds[i], HF_ENGINE_REAL), 0);
        expect_forest(out_path, want);
    }
    assert_int_equal(run_mst(load, sim_node, "hass", HF_ENGINE_SIM), 0);
    expect_forest(out_path, want);
    /* A simulation that runs no bundle: the host does the rounds' work. */
    assert_int_equal(run_mst_ex(load, sim_node, "hass", HF_ENGINE_SIM, 0), 0);
    expect_forest(out_path, want);
    free(want);
    hf_graph_free(&g);
}

/* Runs `text` as an edge list with `extra` keys; expects `code` and a message
 * holding `msg`, and no output file. */
static void expect_failure(const char *text, const char *extra, int code, const char *msg)
{
    write_file(in_path, text, strlen(text));
    char load[512];
    snprintf(load, sizeof load, "graph = %s\nformat = edgelist\n%s", in_path, extra);
    assert_int_equal(run_mst(load, two_cpus, "hass", HF_ENGINE_REAL), code);
    if (!strstr(hf_last_error(), msg))
        fail_msg("message \"%s\" lacks \"%s\"", hf_last_error(), msg);
    assert_int_equal(access(out_path, F_OK), -1);
}

static void bad_input(void **state)
{
    (void)state;
    char where[160];
    snprintf(where, sizeof where, "%s:2", in_path);
    expect_failure("0 1 2\n1 2 -3\n", "", HF_ECONFIG, where);
    expect_failure("0 1 2\n1 2 nan\n", "", HF_ECONFIG, where);
    expect_failure("0 1 2\n1 2\n", "", HF_ECONFIG, where);
    expect_failure("0 1 2\n1 x 3\n", "", HF_ECONFIG, where);
    expect_failure("", "", HF_ECONFIG, in_path);
    expect_failure("0 1 2\n", "symmetrise = no\n", HF_ECONFIG, "undirected");
    expect_failure("0 1 2\n", "weighted = perhaps\n", HF_ECONFIG, "weighted");
}

static int setup_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_graph_mst.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(out_path, sizeof out_path, "%s/forest.tsv", dir);
    snprintf(in_path, sizeof in_path, "%s/edges.txt", dir);
    return 0;
}

static int remove_dir(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ties_and_forest), cmocka_unit_test(kronecker_weighted),
        cmocka_unit_test(grid_weighted),   cmocka_unit_test(fourelt),
        cmocka_unit_test(every_scheduler), cmocka_unit_test(bad_input),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
