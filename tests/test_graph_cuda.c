/* test_graph_cuda.c - the graph primitives (bfs, sssp, cc, pagerank) on real
 * GPUs, output files checked against the references.
 *
 * DESIGN
 * ------
 * Exits 77 (skipped) when the build has no CUDA or no CUDA device is found,
 * so the suite passes on machines without a GPU. With one, every app runs on
 * a Kronecker graph of scale 14 (hubs of degree thousands: the edge-balanced
 * and warp-per-vertex paths), a 128x128 road-like grid (degree ~2.4, long
 * diameter: many small rounds, the thread-per-vertex paths), 4elt.graph
 * (tests/data/) and a directed edge list (PageRank's transpose, push-only BFS),
 * on the CPU next to every GPU and on the GPUs alone (GPU 0 as two devices,
 * cuda = 0,0, where it is the only GPU: merges, steals and the fused search's
 * hand-over between GPUs), under hass and greedy,
 * verify on: the app checks itself against its reference and the test then
 * checks every output line against references of its own
 * (graph_apps_util.h). So the kernels, the shared-data merge between a CPU
 * and GPUs (MIN arrays with device-side recorders, PageRank's OWNED halves)
 * and the GPU-only rounds (no host-side writer at all) are all exercised.
 * BFS runs forced push and forced pull too, and with its GPU search stopped
 * at big levels (fuse = small) or off (fuse_edges = 0); SSSP runs near-far as well; and a
 * tiny arena (HF_CUDA_ARENA_MB) makes frontier slices not fit, so the driver
 * splits pieces and runs some again: the kernels must be idempotent.
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
#include <cmocka.h>

#include <unistd.h>

#include "graph_apps_util.h"
#include "hf_cuda.h"
#include "gpu_pair.h"


static char dir[64];
static int ncores;

static const char *const apps[] = {"bfs", "sssp", "cc", "pagerank"};
static const char *const scheds[] = {"hass", "greedy"};
/* The CPU (one thread) next to every GPU, and the GPUs alone: two GPU
 * devices at least, GPU 0 twice where it is the only one (gpu_pair.h). */
static char mixes[2][64];

/* Every app under every scheduler on every device mix. */
static void all_apps_on(const char *load)
{
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++)
        for (size_t m = 0; m < sizeof mixes / sizeof *mixes; m++)
            for (size_t s = 0; s < sizeof scheds / sizeof *scheds; s++)
                gt_app_on(apps[a], load, NULL, mixes[m], scheds[s], dir);
}

static void apps_on_kronecker_14(void **state)
{
    (void)state;
    all_apps_on("generate = kron\nscale = 14\nedge_factor = 16\nseed = 3");
}

static void apps_on_a_road_grid_128(void **state)
{
    (void)state;
    all_apps_on("generate = grid\nrows = 128\ncols = 128\nseed = 4");
}

static void apps_on_4elt(void **state)
{
    (void)state;
    char load[256];
    snprintf(load, sizeof load, "graph = %s\ncache_dir = %s", test_data(FOURELT), dir);
    all_apps_on(load);
}

/* A directed weighted edge list: PageRank's transposed CSR, push-only BFS. */
static void apps_on_a_directed_graph(void **state)
{
    (void)state;
    char path[128], load[512];
    snprintf(path, sizeof path, "%s/directed.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    uint64_t x = 99;
    for (int i = 0; i < 40000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned u = (unsigned)(x >> 33) % 5000, v = (unsigned)(x >> 13) % 5000;
        /* a few hubs: every 8th arc leaves vertex 0..7 */
        fprintf(f, "%u %u %u\n", i % 8 == 0 ? u % 8 : u, v, 1 + (unsigned)(x >> 50) % 100);
    }
    fclose(f);
    snprintf(load, sizeof load, "graph = %s\nsymmetrise = no\ncache_dir = %s", path, dir);
    const char *directed[] = {"bfs", "sssp", "pagerank"};
    for (size_t a = 0; a < 3; a++)
        for (size_t m = 0; m < 2; m++)
            gt_app_on(directed[a], load, NULL, mixes[m], "hass", dir);
}

/* BFS forced to push and to pull, SSSP near-far, on both graph families. */
static void variants(void **state)
{
    (void)state;
    const char *loads[] = {"generate = kron\nscale = 14\nseed = 5",
                           "generate = grid\nrows = 128\ncols = 128\nseed = 6"};
    for (size_t l = 0; l < 2; l++)
        for (size_t m = 0; m < 2; m++) {
            gt_app_on("bfs", loads[l], "direction = push", mixes[m], "hass", dir);
            gt_app_on("bfs", loads[l], "direction = pull", mixes[m], "hass", dir);
            /* A GPU's whole search (the default) against stopping at big
             * levels, and one level a round. */
            gt_app_on("bfs", loads[l], "fuse = small", mixes[m], "hass", dir);
            gt_app_on("bfs", loads[l], "fuse_edges = 0", mixes[m], "greedy", dir);
            gt_app_on("sssp", loads[l], l ? "delta = 500" : "delta = 32", mixes[m], "greedy", dir);
        }
}

/* Every registered scheduler runs every primitive on the CPU and the GPUs. */
static void every_scheduler_runs_every_app(void **state)
{
    (void)state;
    for (const struct hf_sched_ops *const *s = hf_schedulers; *s; s++)
        for (size_t a = 0; a < sizeof apps / sizeof *apps; a++)
            gt_app_on(apps[a], "generate = kron\nscale = 12\nseed = 13", NULL, mixes[0],
                      (*s)->name, dir);
}

/* A GPU arena of 1 MiB: frontier slices of a scale-16 graph do not fit, the
 * driver splits the pieces and runs some again. Every GPU as it is (one
 * device where there is one GPU: the single-GPU rounds stay covered). */
static void tiny_arena_splits_pieces(void **state)
{
    (void)state;
    setenv("HF_CUDA_ARENA_MB", "1", 1);
    const char *load = "generate = kron\nscale = 16\nseed = 8";
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++)
        gt_app_on(apps[a], load, NULL, "cpu = 0\ncuda = all", "hass", dir);
    unsetenv("HF_CUDA_ARENA_MB");
}

/* cc on the CPU and GPU 0 with every chunk on the GPU (static, ratios 0, 1)
 * links in one copy, the GPU's: it ends in the rounds of GPU 0 alone, right
 * (cc.c: the copies the rounds ran in decide, not the device list; several
 * copies need sweeps until one changes nothing, a round more at least on a
 * long grid, whose first sweep leaves trees to shortcut). */
static void cc_in_one_copy_of_two_ends_as_one(void **state)
{
    (void)state;
    const char *loads[] = {"generate = kron\nscale = 14\nedge_factor = 16\nseed = 3",
                           "generate = grid\nrows = 128\ncols = 128\nseed = 4"};
    for (size_t l = 0; l < 2; l++) {
        struct hf_run *alone = NULL, *both = NULL;
        assert_int_equal(
            gt_run_keep("cc", loads[l], NULL, NULL, "cpu = 0\ncuda = 0", "hass", &alone), 0);
        assert_int_equal(gt_run_keep("cc", loads[l], NULL, NULL,
                                     "cpu = 1\ncuda = 0\n[static]\nratios = 0, 1", "static", &both),
                         0);
        assert_int_equal(both->nrounds, alone->nrounds);
        for (int r = 0; r < both->nrounds; r++)
            assert_int_equal(both->rounds[r].dev[0].bundles, 0);
        hf_run_free(alone);
        hf_run_free(both);
    }
}

static int setup(void **state)
{
    (void)state;
    gt_grain = 1000; /* scale 14: 17 chunks a sweep, shared by the CPU and the GPUs */
    snprintf(mixes[0], sizeof mixes[0], "cpu = 1\ncuda = %s", hf_test_gpus());
    snprintf(mixes[1], sizeof mixes[1], "cpu = 0\ncuda = %s", hf_test_gpus());
    snprintf(dir, sizeof dir, "/tmp/hf_graph_cuda.XXXXXX");
    ncores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(void)
{
    int n = hf_cuda_device_count();
    if (n <= 0) {
        printf("no CUDA device found\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(apps_on_kronecker_14),
        cmocka_unit_test(apps_on_a_road_grid_128),
        cmocka_unit_test(apps_on_4elt),
        cmocka_unit_test(apps_on_a_directed_graph),
        cmocka_unit_test(variants),
        cmocka_unit_test(every_scheduler_runs_every_app),
        cmocka_unit_test(tiny_arena_splits_pieces),
        cmocka_unit_test(cc_in_one_copy_of_two_ends_as_one),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
#endif
