/* test_graph_partition_cuda.c - the partitioner's coarsening and refinement
 * rounds on real GPUs (apps/graph/partition/partition_cuda.cu), against the CPU-only
 * run.
 *
 * DESIGN
 * ------
 * Exits 77 (skipped) when the build has no CUDA or no CUDA device is found.
 * With one, the partitioner runs on 4elt (tests/data/), a 256x256
 * road-like grid and a Kronecker graph of scale 13 (hubs and isolated
 * vertices: warp-wide tiles, long coarse lists, the two-hop round), first
 * on one CPU thread alone (the reference cut), then on the GPUs alone and
 * on one CPU thread next to every GPU (GPU 0 as two devices, cuda = 0,0,
 * where it is the only one), under hass and greedy, verify on
 * (the app checks its cut and balance against
 * partition_ref.c on the input graph). Each GPU run must have given the
 * GPUs chunks of the coarsening rounds that have GPU kernels (MATCH,
 * RESOLVE, CONTRACT, told apart by the round's "phase" figure), must report
 * the GPUs' coarsening share (all of it when they run alone), and must cut
 * at most CUT_SLACK times the CPU-only run's edges: 1.2, because cuts of
 * these small graphs move between runs (lock-free matching, concurrent
 * moves; on one H200 a 128x128 grid's GPU runs cut 126-145 edges on 16
 * parts, and once FM made the one-thread CPU run's cut 118, a GPU run's
 * 137 failed the bound: the road grid is 256x256 since, with twice the
 * cut and so about half the relative spread; 4elt's GPU runs cut 127-155
 * against the CPU's 134 over 14 runs on H200s, one of them over the 1.15
 * the bound was before). A tiny arena (HF_CUDA_ARENA_MB=1)
 * then makes the contraction's tables of a 256x256 grid not fit, so the
 * driver halves pieces and runs some again: the kernels must write only
 * their own outputs. bench/graph/partition_cuda_check.cu checks the kernels
 * themselves against the CPU code, list by list.
 */
#ifndef HF_HAVE_CUDA
/* A build without nvcc (NVCC=, or the sanitizer builds) has no CUDA driver. */
#include <stdio.h>
int main(void)
{
    printf("this build has no CUDA (no nvcc at build time)\n");
    return 77;
}
#else
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "graph/partition/partition_internal.h"
#include "core/engine.h"
#include "hf_cuda.h"
#include "gpu_pair.h"
#include "sched.h"
#include "test_files.h"

extern const struct hf_app hf_app_partition;

#define FOURELT HF_TEST_4ELT
#define CPU_ONLY "cpu = 1\ncuda = none"
#define CUT_SLACK 1.2 /* see DESIGN */

static char dir[64];

static const char *const scheds[] = {"hass", "greedy"};
/* The GPUs alone, and one CPU thread next to every GPU: two GPU devices at
 * least, GPU 0 twice where it is the only one (gpu_pair.h). */
static char mixes[2][64];

/* What a run did, as the test checks it. */
struct outcome {
    double cut;            /* the edge_cut figure */
    double gpu_share;      /* gpu_share_coarsen, -1 when absent */
    size_t gpu_coarsen;    /* chunks GPUs ran in MATCH, RESOLVE and CONTRACT rounds */
    size_t coarsen_rounds; /* rounds whose phase figure is one of those */
};

static double figure(const struct hf_run_figure *f, int n, const char *name, double none)
{
    for (int i = 0; i < n; i++)
        if (strcmp(f[i].name, name) == 0)
            return f[i].value;
    return none;
}

/* Runs the partitioner with [load] `load` (which gives the seed) on
 * `devices` under `sched`, verify on; the run must succeed. */
static struct outcome run_part(const char *load, const char *devices, const char *sched)
{
    char ini[4096];
    snprintf(ini, sizeof ini,
             "[load]\nparts = 16\nimbalance = 0.03\ncache_dir = %s\n%s\n[devices]\n%s\n",
             dir, load, devices);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "partition-cuda-test.ini", ini), 0);
    const struct hf_sched_ops *s = hf_sched_find(sched);
    assert_non_null(s);
    struct hf_run_options o = {
        .app = &hf_app_partition,
        .sched = s,
        .cfg = cfg,
        .engine = HF_ENGINE_REAL,
        .rounds = 100000,
        .seed = 1,
        .verify = 1,
        .grain = 500, /* every round of 4elt's first levels in dozens of chunks */
    };
    struct hf_run *run = NULL;
    hf_clear_error();
    int rc = hf_run(&o, &run);
    if (rc)
        fprintf(stderr, "partition under %s on [%s] of [%s]: %s\n", sched, devices, load,
                hf_last_error());
    assert_int_equal(rc, 0);
    assert_non_null(run);
    struct outcome out = {figure(run->figures, run->nfigures, "edge_cut", -1),
                          figure(run->figures, run->nfigures, "gpu_share_coarsen", -1), 0, 0};
    for (int r = 0; r < run->nrounds; r++) {
        const struct hf_round_stats *rs = &run->rounds[r];
        double phase = figure(rs->figures, rs->nfigures, "phase", -1);
        if (phase != HF_PP_MATCH && phase != HF_PP_RESOLVE && phase != HF_PP_CONTRACT)
            continue;
        out.coarsen_rounds++;
        for (int d = 0; d < run->ndevices; d++)
            if (run->devs[d].kind == HF_DEV_CUDA)
                out.gpu_coarsen += rs->dev[d].chunks;
    }
    hf_run_free(run);
    hf_config_destroy(cfg);
    assert_true(out.cut >= 0);
    return out;
}

/* The CPU alone, then every scheduler on every GPU mix, against its cut. */
static void gpus_coarsen(const char *load)
{
    struct outcome cpu = run_part(load, CPU_ONLY, "greedy");
    assert_true(cpu.gpu_share < 0); /* no GPU: no GPU figures; rounds still name their phase */
    assert_true(cpu.coarsen_rounds > 0);
    assert_int_equal(cpu.gpu_coarsen, 0);
    for (size_t m = 0; m < sizeof mixes / sizeof *mixes; m++)
        for (size_t s = 0; s < sizeof scheds / sizeof *scheds; s++) {
            struct outcome g = run_part(load, mixes[m], scheds[s]);
            fprintf(stderr, "%-6s [%s]: cut %g (CPU alone %g), GPU coarsening share %.2f, %zu "
                            "GPU chunks in %zu coarsening rounds\n",
                    scheds[s], mixes[m], g.cut, cpu.cut, g.gpu_share, g.gpu_coarsen,
                    g.coarsen_rounds);
            assert_true(g.coarsen_rounds > 0);
            assert_true(g.gpu_coarsen > 0);
            assert_true(g.gpu_share > 0);
            if (m == 0)
                assert_true(g.gpu_share == 1.0); /* the GPUs alone ran every chunk */
            assert_true(g.cut <= CUT_SLACK * cpu.cut);
        }
}

static void on_4elt(void **state)
{
    (void)state;
    char load[256];
    snprintf(load, sizeof load, "graph = %s\nseed = 7", test_data(FOURELT));
    gpus_coarsen(load);
}

static void on_a_road_grid(void **state)
{
    (void)state;
    gpus_coarsen("generate = grid\nrows = 256\ncols = 256\nseed = 4");
}

static void on_kronecker(void **state)
{
    (void)state;
    gpus_coarsen("generate = kron\nscale = 13\nedge_factor = 16\nseed = 3");
}

/* A 1 MiB arena: the contraction's tables of a 256x256 grid do not fit
 * whole pieces, so the driver halves them and runs some again (a grid:
 * every coarse vertex's own table fits, as a hub's of thousands of slots
 * would not). */
static void tiny_arena_splits_contraction(void **state)
{
    (void)state;
    const char *load = "generate = grid\nrows = 256\ncols = 256\nseed = 5";
    struct outcome cpu = run_part(load, CPU_ONLY, "greedy");
    setenv("HF_CUDA_ARENA_MB", "1", 1);
    struct outcome g = run_part(load, "cpu = 0\ncuda = all", "hass");
    unsetenv("HF_CUDA_ARENA_MB");
    assert_true(g.gpu_coarsen > 0);
    assert_true(g.cut <= CUT_SLACK * cpu.cut);
}

static int setup(void **state)
{
    (void)state;
    snprintf(mixes[0], sizeof mixes[0], "cpu = 0\ncuda = %s", hf_test_gpus());
    snprintf(mixes[1], sizeof mixes[1], "cpu = 1\ncuda = %s", hf_test_gpus());
    snprintf(dir, sizeof dir, "/tmp/hf_part_cuda.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(void)
{
    if (hf_cuda_device_count() <= 0) {
        printf("no CUDA device found\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(on_4elt),
        cmocka_unit_test(on_a_road_grid),
        cmocka_unit_test(on_kronecker),
        cmocka_unit_test(tiny_arena_splits_contraction),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
#endif
