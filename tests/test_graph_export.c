/* test_graph_export.c - hf_graph_write_metis: what it writes reads back
 * through the METIS loader as the same CSR, and what METIS could not read the
 * same way is refused.
 *
 * Round trips: a weighted Kronecker graph (scale 8, weights 1..255), a
 * weighted road-like grid (isolated vertices give empty lines), 4elt itself
 * when present (file -> CSR -> file -> CSR), and a graph with vertex weights.
 * Refusals: a self-loop, an arc without its reverse, a fractional weight and
 * a weight 0; each leaves no file behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_files.h"

#include "graph/layer/graph.h"

#define ELT4 HF_TEST_4ELT

static char dir[256];
static const struct hf_graph_opts metis = {.format = "metis", .cache_dir = ""};

static void same_csr(const struct hf_graph *a, const struct hf_graph *b)
{
    assert_int_equal(a->nv, b->nv);
    assert_int_equal(a->ne, b->ne);
    assert_memory_equal(a->offsets, b->offsets, (a->nv + 1) * sizeof *a->offsets);
    assert_memory_equal(a->adj, b->adj, a->ne * sizeof *a->adj);
    assert_int_equal(!a->weights, !b->weights);
    if (a->weights)
        assert_memory_equal(a->weights, b->weights, a->ne * sizeof *a->weights);
    assert_int_equal(!a->vwgt, !b->vwgt);
    if (a->vwgt)
        assert_memory_equal(a->vwgt, b->vwgt, a->nv * sizeof *a->vwgt);
}

static void round_trip(const struct hf_graph *g, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_int_equal(hf_graph_write_metis(g, path), 0);
    struct hf_graph back = {0};
    assert_int_equal(hf_graph_load(&back, path, &metis), 0);
    same_csr(g, &back);
    hf_graph_free(&back);
}

static void generated(void **state)
{
    (void)state;
    struct hf_graph g = {0};
    assert_int_equal(hf_graph_kronecker(&g, 8, 8, 3, 1), 0);
    round_trip(&g, "kron.graph");
    hf_graph_free(&g);
    assert_int_equal(hf_graph_grid(&g, 40, 30, HF_GRAPH_GRID_KEEP, 5, 1), 0);
    round_trip(&g, "grid.graph");
    hf_graph_free(&g);
    assert_int_equal(hf_graph_grid(&g, 20, 20, 1.0, 5, 0), 0);
    round_trip(&g, "lattice.graph");
    hf_graph_free(&g);
}

static void file_and_vertex_weights(void **state)
{
    (void)state;
    struct hf_graph g = {0};
    const char *text = "4 3 11\n5 2 3\n1 1 3 3 7\n0 2 7 4 2\n9 3 2\n";
    assert_int_equal(hf_graph_parse_buffer(&g, "vw.graph", text, strlen(text), &metis), 0);
    assert_non_null(g.vwgt);
    round_trip(&g, "vw.graph");
    hf_graph_free(&g);
    assert_int_equal(hf_graph_load(&g, test_data(ELT4), &metis), 0);
    round_trip(&g, "4elt.graph");
    hf_graph_free(&g);
}

/* Parses text (edge list, directed, as given) and expects the writer to refuse it. */
static void refused(const char *text, const char *why)
{
    struct hf_graph g = {0};
    struct hf_graph_opts raw = {.format = "edgelist", .cache_dir = ""};
    assert_int_equal(hf_graph_parse_buffer(&g, "x.txt", text, strlen(text), &raw), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/refused.graph", dir);
    hf_clear_error();
    assert_int_equal(hf_graph_write_metis(&g, path), HF_EINVAL);
    assert_non_null(strstr(hf_last_error(), why));
    assert_int_not_equal(access(path, F_OK), 0);
    hf_graph_free(&g);
}

static void refusals(void **state)
{
    (void)state;
    refused("0 1\n1 0\n1 1\n", "self-loop");
    refused("0 1\n1 2\n2 1\n", "no reverse");
    refused("0 1 2.5\n1 0 2.5\n", "integers >= 1");
    refused("0 1 0\n1 0 0\n", "integers >= 1");
}

static int setup_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_graph_export.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(generated),
        cmocka_unit_test(file_and_vertex_weights),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
