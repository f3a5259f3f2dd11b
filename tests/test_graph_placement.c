/* test_graph_placement.c - [load] placement = partition for bfs, pagerank
 * and cc (apps/graph/placement/graph_place.c), through the real engine on two CPU
 * teams.
 *
 * DESIGN
 * ------
 * placement = partition relabels the graph so that each part of a partition
 * is a contiguous id range, runs the primitive on the relabelled CSR and maps
 * every result back. So the test runs each app twice on the same graph, once
 * with placement = range and once with partition, verify on, and checks that
 * the partition run's output file is the range run's (byte for byte for bfs
 * and cc, whose values are integers; to 1e-8 relative for pagerank, whose
 * sums run in another order, so that a rank printed with %.9g may flip its
 * last digit) and that both match the references of
 * graph_apps_util.h, which know nothing of placement. Graphs: 4elt
 * (tests/data/), a road-like grid, a grid with keep = 0.3 (hundreds of
 * components and isolated vertices) and a small Kronecker graph (hubs,
 * isolated vertices). CC is where a missed mapping shows: its labels are
 * vertex ids, the smallest of each component in the INPUT's numbering.
 *
 * Traffic: on a wide road-like grid (24 x 800) range placement cuts the
 * devices apart across the long side, a partition across the short one, so
 * the halo figure (graph_place.c) must be far lower with partition; the
 * per-round figures in the run must add up to the run's total. Bad values
 * (an unknown placement, too many parts, a directed graph) must be refused
 * naming the file, the line and the value. grain is small so both devices
 * get chunks of every split round.
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

static const char *const apps[] = {"bfs", "pagerank", "cc"};

/* What a run reported: the app's halo and broadcast totals, and the sum of
 * the per-round halos. */
struct traffic {
    double halo, broadcast, round_halo;
    int rounds_with_figures;
};

/* Runs `app` with the [load] lines `load` and `extra` under hass on two CPU
 * teams, writing `out`; returns hf_run's code (message in gt_err) and fills
 * *t from the run's figures. */
static int run_app(const char *app, const char *load, const char *extra, const char *out,
                   struct traffic *t)
{
    char lines[GT_TEXT];
    snprintf(lines, sizeof lines, "traffic = yes\n%s", load);
    struct hf_run *run = NULL;
    int rc = gt_run_keep(app, lines, extra, out, TWO_TEAMS, "hass", &run);
    memset(t, 0, sizeof *t);
    for (int i = 0; run && i < run->nfigures; i++) {
        if (strcmp(run->figures[i].name, "halo") == 0)
            t->halo = run->figures[i].value;
        if (strcmp(run->figures[i].name, "broadcast") == 0)
            t->broadcast = run->figures[i].value;
    }
    for (int r = 0; run && r < run->nrounds; r++) {
        const struct hf_round_stats *rs = &run->rounds[r];
        t->rounds_with_figures += rs->nfigures > 0;
        for (int i = 0; i < rs->nfigures; i++)
            if (strcmp(rs->figures[i].name, "halo") == 0)
                t->round_halo += rs->figures[i].value;
    }
    hf_run_free(run);
    return rc;
}

/* Whether two pagerank outputs agree line by line to 1e-8 relative (a rank
 * printed with %.9g may flip its last digit when its sum ran in another
 * order: seen at 1.3e-9 on a million-vertex grid). */
static void same_ranks(const char *a, const char *b)
{
    FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
    assert_non_null(fa);
    assert_non_null(fb);
    unsigned long long ia, ib;
    double xa, xb;
    size_t n = 0;
    while (fscanf(fa, "%llu %lf", &ia, &xa) == 2) {
        assert_int_equal(fscanf(fb, "%llu %lf", &ib, &xb), 2);
        assert_int_equal(ia, ib);
        if (fabs(xa - xb) > 1e-8 * fabs(xa))
            fprintf(stderr, "pagerank: vertex %llu: %.12g with range, %.12g with partition\n",
                    ia, xa, xb);
        assert_true(fabs(xa - xb) <= 1e-8 * fabs(xa));
        n++;
    }
    assert_int_equal(fscanf(fb, "%llu %lf", &ib, &xb), EOF);
    assert_true(n > 0);
    fclose(fa);
    fclose(fb);
}

/* Every app with both placements on `load`: the outputs agree with each
 * other and with the references. */
static void both_placements_on(const char *load)
{
    struct hf_gapp ga;
    gt_graph(&ga, "bfs", load);
    hf_vid_t src = gt_hub(&ga.g);
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++) {
        char lines[256], range_out[512], part_out[512];
        int bfs = strcmp(apps[a], "bfs") == 0;
        snprintf(range_out, sizeof range_out, "%s/%s-range.tsv", dir, apps[a]);
        snprintf(part_out, sizeof part_out, "%s/%s-partition.tsv", dir, apps[a]);
        struct traffic tr, tp;
        snprintf(lines, sizeof lines, "placement = range\n%s%llu", bfs ? "source = " : "# ",
                 (unsigned long long)src + (unsigned long long)ga.g.base);
        if (run_app(apps[a], load, lines, range_out, &tr))
            fprintf(stderr, "%s, range: %s\n", apps[a], gt_err);
        assert_string_equal(gt_err, "");
        snprintf(lines, sizeof lines, "placement = partition\n%s%llu", bfs ? "source = " : "# ",
                 (unsigned long long)src + (unsigned long long)ga.g.base);
        if (run_app(apps[a], load, lines, part_out, &tp))
            fprintf(stderr, "%s, partition: %s\n", apps[a], gt_err);
        assert_string_equal(gt_err, "");
        gt_check_output(apps[a], &ga, src, part_out, 0.85, 1e-6, 100);
        if (strcmp(apps[a], "pagerank") == 0) {
            same_ranks(range_out, part_out);
        } else {
            char *x = read_text(range_out), *y = read_text(part_out);
            assert_non_null(x);
            assert_non_null(y);
            assert_string_equal(x, y);
            free(x);
            free(y);
        }
        /* The per-round figures add up to the run's, in either placement. */
        assert_true(tr.rounds_with_figures > 0 && tp.rounds_with_figures > 0);
        assert_true(fabs(tr.round_halo - tr.halo) < 0.5);
        assert_true(fabs(tp.round_halo - tp.halo) < 0.5);
        assert_true(tp.halo <= tp.broadcast);
    }
    hf__gapp_destroy(&ga);
}

static void placement_on_a_real_mesh(void **state)
{
    (void)state;
    both_placements_on(mesh);
}

static void placement_on_a_road_grid(void **state)
{
    (void)state;
    both_placements_on("generate = grid\nrows = 60\ncols = 70\nseed = 3");
    /* and under another scheduler, against the references alone */
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++)
        gt_app_on(apps[a], "generate = grid\nrows = 60\ncols = 70\nseed = 3",
                  "placement = partition\nplacement_parts = 12", TWO_TEAMS, "greedy", dir);
}

static void placement_on_a_disconnected_graph(void **state)
{
    (void)state;
    both_placements_on("generate = grid\nrows = 50\ncols = 50\nkeep = 0.3\nseed = 4");
    both_placements_on("generate = kron\nscale = 10\nedge_factor = 4\nseed = 5");
}

/* The wide grid: range placement's devices meet along 800 columns, a
 * partition's along about 24 rows. */
static void partition_cuts_traffic_on_a_grid(void **state)
{
    (void)state;
    const char *grid = "generate = grid\nrows = 24\ncols = 800\nkeep = 0.9\nseed = 6";
    const char *names[] = {"pagerank", "cc"};
    for (int a = 0; a < 2; a++) {
        char out[512];
        snprintf(out, sizeof out, "%s/wide-%s.tsv", dir, names[a]);
        struct traffic tr, tp;
        assert_int_equal(run_app(names[a], grid, "placement = range", out, &tr), 0);
        assert_int_equal(run_app(names[a], grid, "placement = partition", out, &tp), 0);
        fprintf(stderr, "%s on a 24 x 800 grid: halo %.0f with range, %.0f with partition "
                        "(broadcast %.0f)\n", names[a], tr.halo, tp.halo, tr.broadcast);
        assert_true(tr.halo > 0);
        assert_true(tp.halo < 0.5 * tr.halo);
    }
}

/* Bad values are refused naming the file, the line and the value. */
static void bad_placement_is_refused(void **state)
{
    (void)state;
    char out[512];
    snprintf(out, sizeof out, "%s/bad.tsv", dir);
    struct traffic t;
    const char *grid = "generate = grid\nrows = 10\ncols = 10";
    for (size_t a = 0; a < sizeof apps / sizeof *apps; a++) {
        assert_int_equal(run_app(apps[a], grid, "placement = metis", out, &t), HF_ECONFIG);
        assert_non_null(strstr(gt_err, "graph-test.ini:"));
        assert_non_null(strstr(gt_err, "placement = metis"));
        assert_non_null(strstr(gt_err, "range or partition"));
    }
    assert_int_equal(run_app("bfs", grid, "placement = partition\nplacement_parts = 101", out, &t),
                     HF_ECONFIG);
    assert_non_null(strstr(gt_err, "placement_parts = 101"));
    assert_non_null(strstr(gt_err, "graph-test.ini:"));
    char edges[256], directed[512];
    snprintf(edges, sizeof edges, "%s/directed.el", dir);
    write_file(edges, "0 1\n1 2\n2 0\n2 3\n", 16);
    snprintf(directed, sizeof directed, "graph = %s\ncache_dir =\nsymmetrise = no", edges);
    assert_int_equal(run_app("pagerank", directed, "placement = partition", out, &t), HF_ECONFIG);
    assert_non_null(strstr(gt_err, "undirected"));
    assert_non_null(strstr(gt_err, "graph-test.ini:"));
}

static int setup(void **state)
{
    (void)state;
    gt_grain = 97; /* odd, so that chunks straddle parts */
    return gt_setup_dir(dir, sizeof dir, "hf_graph_placement", mesh, sizeof mesh);
}

static int teardown(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(placement_on_a_real_mesh),
        cmocka_unit_test(placement_on_a_road_grid),
        cmocka_unit_test(placement_on_a_disconnected_graph),
        cmocka_unit_test(partition_cuts_traffic_on_a_grid),
        cmocka_unit_test(bad_placement_is_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
