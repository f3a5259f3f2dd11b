/* test_graph_mst_cuda.c - the Borůvka MST app's GPU side (mst_cuda.cu) through
 * the real engine, with verify on, against Kruskal (mst_ref.c).
 *
 * Skipped (exit 77) in builds without CUDA and on machines without a GPU.
 * Whole runs on a weighted Kronecker graph of scale 14 (scale-free: the warp
 * per vertex kernel) and a weighted 128 x 128 grid (road-like: 4 lanes per
 * vertex, many steps, a forest), on the CPU and every GPU together under HASS
 * and greedy, and on the GPUs alone (GPU 0 as two devices, cuda = 0,0, where
 * it is the only one: gpu_pair.h); 4elt (unweighted) on the GPUs alone. The
 * forest written to [load] out must equal Kruskal's byte for byte.
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
#include "core/engine.h"
#include "sched.h"
#ifdef HF_HAVE_CUDA
#include "hf_cuda.h"
#include "gpu_pair.h"
#endif

#ifdef HF_HAVE_CUDA
extern const struct hf_app hf_app_mst;

#define FOURELT HF_TEST_4ELT

static char dir[64], out_path[128];

/* Runs `load` on `devices` under `sched` and compares the forest with `want`. */
static void run_and_compare(const char *load, const char *devices, const char *sched,
                            const char *want)
{
    char ini[2048];
    snprintf(ini, sizeof ini, "[load]\nout = %s\ncache_dir = %s\n%s\n[devices]\n%s\n", out_path,
             dir, load, devices);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "test.ini", ini), 0);
    struct hf_run_options o = {
        .app = &hf_app_mst,
        .sched = hf_sched_find(sched),
        .cfg = cfg,
        .engine = HF_ENGINE_REAL,
        .rounds = 1000,
        .seed = 1,
        .verify = 1,
    };
    unlink(out_path);
    struct hf_run *run = NULL;
    int rc = hf_run(&o, &run);
    if (rc)
        print_error("%s on %s: %s\n", sched, devices, hf_last_error());
    assert_int_equal(rc, 0);
    hf_run_free(run);
    hf_config_destroy(cfg);
    expect_forest(out_path, want);
}

/* Every device mix and scheduler on one graph. */
static void check_graph(const struct hf_graph *g, const char *load)
{
    char *want = kruskal_text(g, NULL), both[64], alone[64];
    snprintf(both, sizeof both, "cpu = all\ncuda = %s", hf_test_gpus());
    snprintf(alone, sizeof alone, "cpu = 0\ncuda = %s", hf_test_gpus());
    run_and_compare(load, both, "hass", want);
    run_and_compare(load, both, "greedy", want);
    run_and_compare(load, alone, "hass", want);
    free(want);
}

static void kronecker_14_weighted(void **state)
{
    (void)state;
    struct hf_graph g;
    assert_int_equal(hf_graph_kronecker(&g, 14, 16, 1, 1), 0);
    check_graph(&g, "generate = kron\nscale = 14\nedge_factor = 16\nseed = 1\nweighted = yes\n");
    hf_graph_free(&g);
}

static void grid_128_weighted(void **state)
{
    (void)state;
    struct hf_graph g;
    assert_int_equal(hf_graph_grid(&g, 128, 128, HF_GRAPH_GRID_KEEP, 3, 1), 0);
    check_graph(&g, "generate = grid\nrows = 128\ncols = 128\nseed = 3\nweighted = yes\n");
    hf_graph_free(&g);
}

static void fourelt_unweighted(void **state)
{
    (void)state;
    test_data(FOURELT);
    struct hf_graph g;
    struct hf_graph_opts o = {.symmetrise = 1, .drop_self_loops = 1, .dedupe = 1, .cache_dir = ""};
    assert_int_equal(hf_graph_load(&g, FOURELT, &o), 0);
    char *want = kruskal_text(&g, NULL);
    run_and_compare("graph = " FOURELT "\n", "cpu = 0\ncuda = all", "hass", want);
    run_and_compare("graph = " FOURELT "\n", "cpu = all\ncuda = all", "greedy", want);
    free(want);
    hf_graph_free(&g);
}
#endif

int main(void)
{
#ifndef HF_HAVE_CUDA
    printf("no CUDA in this build\n");
    return 77;
#else
    if (hf_cuda_device_count() == 0) {
        printf("no CUDA device\n");
        return 77;
    }
    setenv("HF_CUDA_ARENA_MB", "256", 1); /* fast opens; the graphs are small */
    snprintf(dir, sizeof dir, "/tmp/test_graph_mst_cuda.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(out_path, sizeof out_path, "%s/forest.tsv", dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kronecker_14_weighted),
        cmocka_unit_test(grid_128_weighted),
        cmocka_unit_test(fourelt_unweighted),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return rc;
#endif
}
