/* test_graph_apps.c - the graph primitives (bfs, sssp, cc, pagerank) run
 * through the real engine on CPU devices, output files checked against the
 * references.
 *
 * DESIGN
 * ------
 * Every app runs on three graph families: a real mesh (4elt.graph, from
 * tests/data/), a small
 * Kronecker graph (scale-free: hubs and isolated vertices) and a 64x64
 * road-like grid (long diameter, dead ends), under greedy and hass, on two
 * CPU teams, so that every round's state is merged from two devices (the
 * shared MIN / OWNED machinery is exercised, not bypassed). verify is on, so
 * the app checks itself, and the test then checks the output file line by
 * line against references of its own (graph_apps_util.h). Directed graphs
 * (an edge list with symmetrise = no) cover PageRank's transposed CSR and
 * push-only search, near-far SSSP covers the far pile, and the bad-input
 * rows check that nonsense in [load] is refused with a message naming it.
 * CC's CPU-only end (one full sweep and a compress round) is pinned by its
 * round count.
 * Small enough for ASan+UBSan on two cores.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <unistd.h>

#include "graph_apps_util.h"

#define TWO_TEAMS "cpu = 2\ncpu_teams = 2"

static char dir[64];
static char mesh[512];

static const char *const apps[] = {"bfs", "sssp", "cc", "pagerank"};
static const char *const scheds[] = {"greedy", "hass"};

/* Every app under every scheduler on the [load] lines `load`. */
static void all_apps_on(const char *load, const char *extra)
{
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++)
        for (size_t s = 0; s < sizeof scheds / sizeof *scheds; s++)
            gt_app_on(apps[a], load, extra, TWO_TEAMS, scheds[s], dir);
}

static void apps_on_a_real_mesh(void **state)
{
    (void)state;
    all_apps_on(mesh, NULL);
}

static void apps_on_kronecker(void **state)
{
    (void)state;
    all_apps_on("generate = kron\nscale = 11\nedge_factor = 16\nseed = 2", NULL);
}

static void apps_on_a_road_grid(void **state)
{
    (void)state;
    all_apps_on("generate = grid\nrows = 64\ncols = 64\nseed = 3", NULL);
}

/* SSSP as plain Bellman-Ford (delta = 0) and near-far with small buckets,
 * which make the far pile do the work (the other tests use delta = auto). */
static void sssp_near_far(void **state)
{
    (void)state;
    const char *kron = "generate = kron\nscale = 10\nseed = 5";
    const char *grid = "generate = grid\nrows = 48\ncols = 64\nseed = 6";
    for (size_t s = 0; s < 2; s++) {
        gt_app_on("sssp", kron, "delta = 0", TWO_TEAMS, scheds[s], dir);
        gt_app_on("sssp", grid, "delta = 0", TWO_TEAMS, scheds[s], dir);
        gt_app_on("sssp", kron, "delta = 16", TWO_TEAMS, scheds[s], dir);
        gt_app_on("sssp", grid, "delta = 300", TWO_TEAMS, scheds[s], dir);
        gt_app_on("sssp", grid, "delta = 40", TWO_TEAMS, scheds[s], dir);
    }
}

/* Writes a directed weighted edge list with self-loops, duplicates, a vertex
 * without out-edges and one without any edge. */
static void write_directed(const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# directed test graph\n");
    uint64_t x = 12345;
    for (int i = 0; i < 1500; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned u = (unsigned)(x >> 33) % 298, v = (unsigned)(x >> 13) % 298;
        fprintf(f, "%u %u %u\n", u, v, 1 + (unsigned)(x >> 50) % 20);
    }
    fprintf(f, "5 5 1\n7 8 2\n7 8 1\n297 3 4\n299 0 1\n"); /* 298 has no edge at all */
    fclose(f);
}

static void apps_on_a_directed_graph(void **state)
{
    (void)state;
    char path[128], load[512];
    snprintf(path, sizeof path, "%s/directed.txt", dir);
    write_directed(path);
    snprintf(load, sizeof load, "graph = %s\nsymmetrise = no\ncache_dir = %s", path, dir);
    const char *directed_apps[] = {"bfs", "sssp", "pagerank"};
    for (size_t a = 0; a < 3; a++)
        for (size_t s = 0; s < 2; s++)
            gt_app_on(directed_apps[a], load, NULL, TWO_TEAMS, scheds[s], dir);
    /* The same file symmetrised, for cc too. */
    snprintf(load, sizeof load, "graph = %s\ncache_dir = %s", path, dir);
    all_apps_on(load, NULL);
}

/* Hubs: two vertices of more than HF_PR_PIECE edges (PageRank sums their
 * in-edges in pieces on the CPU, one of them not a multiple of the piece),
 * a path among their leaves and many two-vertex components beside them
 * (components that CC's full sweeps must not skip). */
static void apps_on_hubs(void **state)
{
    (void)state;
    char path[128], load[512];
    snprintf(path, sizeof path, "%s/hubs.txt", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    unsigned n = 3 * HF_PR_PIECE + 100;
    for (unsigned i = 1; i <= n; i++)
        fprintf(f, "0 %u %u\n", i, 1 + i % 7);
    for (unsigned i = 2; i <= HF_PR_PIECE + 904; i++)
        fprintf(f, "1 %u %u\n", i, 2 + i % 5);
    for (unsigned i = 5000; i < 6000; i++)
        fprintf(f, "%u %u 1\n", i, i + 1);
    for (unsigned i = n + 1; i < n + 400; i += 2)
        fprintf(f, "%u %u 3\n", i + 1, i);
    fclose(f);
    snprintf(load, sizeof load, "graph = %s\ncache_dir = %s", path, dir);
    all_apps_on(load, NULL);
}

/* One device only: the merges have a single side, the results must not change. */
static void apps_on_one_team(void **state)
{
    (void)state;
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++)
        gt_app_on(apps[a], "generate = kron\nscale = 10\nseed = 7", NULL, "cpu = 2", "greedy", dir);
}

/* Every registered scheduler runs every primitive (the frontier grows and
 * shrinks from round to round, which matmul's loads never do). */
static void every_scheduler_runs_every_app(void **state)
{
    (void)state;
    for (const struct hf_sched_ops *const *s = hf_schedulers; *s; s++)
        for (size_t a = 0; a < sizeof apps / sizeof *apps; a++)
            gt_app_on(apps[a], "generate = kron\nscale = 9\nseed = 12", NULL, TWO_TEAMS, (*s)->name,
                      dir);
}

/* The automatic grain (hf__gapp_grain): a named grain is kept; otherwise
 * HF_GAPP_EDGES_PER_THREAD edges per thread of the widest CPU team, no fewer
 * than HF_GAPP_MIN_CHUNKS chunks, no chunk under HF_GAPP_MIN_GRAIN units. */
static void the_automatic_grain_follows_the_team(void **state)
{
    (void)state;
    struct hf_gapp ga = {.cpu_threads = 2};
    struct hf_load sweep = {.units = 1u << 20, .work = 32.0 * (1u << 20)}; /* 31 edges a vertex */
    assert_int_equal(hf__gapp_grain(&ga, &sweep, 777), 777);
    assert_int_equal(hf__gapp_grain(&ga, &sweep, 0), 2 * HF_GAPP_EDGES_PER_THREAD / 32);
    ga.cpu_threads = 4; /* twice the team, twice the chunk */
    assert_int_equal(hf__gapp_grain(&ga, &sweep, 0), 4 * HF_GAPP_EDGES_PER_THREAD / 32);
    ga.cpu_threads = 64; /* capped: the load keeps its HF_GAPP_MIN_CHUNKS chunks */
    assert_int_equal(hf__gapp_grain(&ga, &sweep, 0), (1u << 20) / HF_GAPP_MIN_CHUNKS);
    struct hf_load hubs = {.units = 100, .work = 1e7}; /* a small frontier of hubs: one chunk */
    assert_int_equal(hf__gapp_grain(&ga, &hubs, 0), HF_GAPP_MIN_GRAIN);
    struct hf_devices devs = {
        .count = 2,
        .dev = (const struct hf_device_info[]){{.nthreads = 3}, {.is_gpu = 1, .nthreads = 0}},
    };
    assert_int_equal(hf__gapp_setup(&ga, &devs, 0), 0);
    assert_int_equal(ga.cpu_threads, 3);
}

/* Every primitive with no grain named (the graph apps' default, the
 * automatic one): scale 15 on two threads makes sweeps of 8 chunks of 4096 vertices. */
static void apps_with_the_automatic_grain(void **state)
{
    (void)state;
    size_t saved = gt_grain;
    gt_grain = 0;
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++)
        gt_app_on(apps[a], "generate = kron\nscale = 15\nseed = 3", NULL, "cpu = 2", "hass", dir);
    gt_grain = saved;
}

/* CC with no GPU ends as Afforest does: HF_CC_SAMPLES sampling rounds, one
 * full sweep, one compress round, no sweep to confirm (cc.c); on one team,
 * which records no changes, and on two, which do. verify checks the labels;
 * the run must have skipped the big component's vertices. */
static void cc_on_the_cpu_ends_after_one_sweep(void **state)
{
    (void)state;
    const char *const devices[] = {"cpu = 2", TWO_TEAMS};
    for (size_t d = 0; d < sizeof devices / sizeof *devices; d++) {
        char text[GT_TEXT];
        snprintf(text, sizeof text,
                 "[run]\napp = cc\n[load]\ngenerate = kron\nscale = 12\nseed = 5\n"
                 "[devices]\n%s\ncuda = none\n",
                 devices[d]);
        hf_config_t cfg;
        assert_int_equal(hf_config_parse(&cfg, "cc-rounds.ini", text), 0);
        struct hf_run_options o = {
            .app = hf_app_find("cc"),
            .sched = hf_sched_find("hass"),
            .cfg = cfg,
            .engine = HF_ENGINE_REAL,
            .rounds = 1000,
            .seed = 1,
            .verify = 1,
        };
        struct hf_run *run = NULL;
        int rc = hf_run(&o, &run);
        if (rc)
            fprintf(stderr, "cc on [%s]: %s\n", devices[d], hf_last_error());
        assert_int_equal(rc, 0);
        assert_int_equal(run->nrounds, HF_CC_SAMPLES + 2);
        double skipped = 0;
        for (int f = 0; f < run->nfigures; f++)
            if (strcmp(run->figures[f].name, "skipped") == 0)
                skipped = run->figures[f].value;
        assert_true(skipped > 0);
        hf_run_free(run);
        hf_config_destroy(cfg);
    }
}

/* A bad [load] must fail the run with a message that names the problem. */
struct bad_row {
    const char *app, *load, *extra, *expect;
};

static void bad_input_is_refused(void **state)
{
    (void)state;
    char negw[128], negw_load[256], fmt_load[600];
    snprintf(negw, sizeof negw, "%s/negative.txt", dir);
    FILE *f = fopen(negw, "w");
    assert_non_null(f);
    fprintf(f, "0 1 2\n1 2 -3\n");
    fclose(f);
    snprintf(negw_load, sizeof negw_load, "graph = %s\ncache_dir = %s", negw, dir);
    snprintf(fmt_load, sizeof fmt_load, "%s\nformat = xml", mesh);
    const char *kron = "generate = kron\nscale = 6";
    const struct bad_row rows[] = {
        {"bfs", kron, "direction = sideways", "direction"},
        {"bfs", kron, "fuse = always", "fuse"},
        {"pagerank", fmt_load, NULL, "format"},
        {"cc", fmt_load, NULL, "format"},
        {"sssp", kron, "source = 100000", "no such vertex"},
        {"bfs", kron, "source = -3", "no such vertex"},
        {"sssp", "generate = grid\nrows = 4\ncols = 4", "source = 16", "no such vertex"},
        {"pagerank", kron, "damping = -0.5", "damping"},
        {"pagerank", kron, "damping = 1.5", "damping"},
        {"pagerank", kron, "tol = 0", "tol"},
        {"pagerank", kron, "tol = -1e-3", "tol"},
        {"pagerank", kron, "tol = nan", "tol"},
        {"pagerank", kron, "max_iters = 0", "max_iters"},
        {"sssp", kron, "delta = -1", "delta"},
        {"sssp", kron, "delta = fast", "delta"},
        {"cc", kron, "symmetrise = no", "symmetrise"},
        {"cc", "generate = torus", NULL, "generate"},
        {"pagerank", "generate = kron\nscale = 40", NULL, "scale"},
        {"sssp", negw_load, NULL, "negative"},
        {"bfs", "graph = /nonexistent/x.graph", NULL, "/nonexistent/x.graph"},
        {"cc", "scale = 8", NULL, "needs graph"},
        {"pagerank", "generate = kron\ngraph = x.graph", NULL, "both"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        int rc = gt_run(rows[i].app, rows[i].load, rows[i].extra, NULL, TWO_TEAMS, "greedy");
        if (rc == 0 || !strstr(gt_err, rows[i].expect))
            fprintf(stderr, "bad row %zu (%s, %s / %s): rc %d, message \"%s\", expected \"%s\"\n",
                    i, rows[i].app, rows[i].load, rows[i].extra ? rows[i].extra : "", rc, gt_err,
                    rows[i].expect);
        assert_int_not_equal(rc, 0);
        assert_non_null(strstr(gt_err, rows[i].expect));
    }
}

static int setup(void **state)
{
    (void)state;
    gt_grain = 97; /* odd, so that chunks straddle everything */
    return gt_setup_dir(dir, sizeof dir, "hf_graph_apps", mesh, sizeof mesh);
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(apps_on_a_real_mesh),
        cmocka_unit_test(apps_on_kronecker),
        cmocka_unit_test(apps_on_a_road_grid),
        cmocka_unit_test(sssp_near_far),
        cmocka_unit_test(apps_on_a_directed_graph),
        cmocka_unit_test(apps_on_hubs),
        cmocka_unit_test(apps_on_one_team),
        cmocka_unit_test(every_scheduler_runs_every_app),
        cmocka_unit_test(bad_input_is_refused),
        cmocka_unit_test(the_automatic_grain_follows_the_team),
        cmocka_unit_test(apps_with_the_automatic_grain),
        cmocka_unit_test(cc_on_the_cpu_ends_after_one_sweep),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
