/* test_graph_gen.c - the random geometric graph generator (graph_rgg.c):
 * bit-identical for a seed on 1, 2 and 3 threads, different for another seed,
 * symmetric without self-loops (hf_graph_check), average degree near the
 * target, mostly connected at degree 6 (giant component > 95%), weights
 * symmetric and in 1..1000, the complete graph when the radius exceeds the
 * square's diagonal and the empty one when it is tiny, bad arguments refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "graph/layer/graph.h"

static void same(const struct hf_graph *a, const struct hf_graph *b)
{
    assert_int_equal(a->nv, b->nv);
    assert_int_equal(a->ne, b->ne);
    assert_memory_equal(a->offsets, b->offsets, (a->nv + 1) * sizeof *a->offsets);
    assert_memory_equal(a->adj, b->adj, a->ne * sizeof *a->adj);
    if (a->weights)
        assert_memory_equal(a->weights, b->weights, a->ne * sizeof *a->weights);
}

static void deterministic_across_threads(void **state)
{
    (void)state;
    struct hf_graph g[3], other;
    for (int t = 0; t < 3; t++) {
        omp_set_num_threads(t + 1);
        assert_int_equal(hf_graph_rgg(&g[t], 20000, 6, 7, 1), 0);
    }
    omp_set_num_threads(2);
    same(&g[0], &g[1]);
    same(&g[0], &g[2]);
    assert_int_equal(hf_graph_rgg(&other, 20000, 6, 8, 1), 0);
    assert_true(other.ne != g[0].ne || memcmp(other.adj, g[0].adj, g[0].ne * 4) != 0);
    hf_graph_free(&other);
    for (int t = 0; t < 3; t++)
        hf_graph_free(&g[t]);
}

static hf_vid_t find(hf_vid_t *p, hf_vid_t x)
{
    while (p[x] != x)
        x = p[x] = p[p[x]];
    return x;
}

static void shape(void **state)
{
    (void)state;
    struct hf_graph g;
    const uint64_t nv = 1 << 16;
    assert_int_equal(hf_graph_rgg(&g, nv, 6, 1, 1), 0);
    assert_int_equal(hf_graph_check(&g), 0); /* symmetric flag set: checks reverse arcs + weights */
    double avg = (double)g.ne / (double)nv;
    assert_true(avg > 6 * 0.95 && avg < 6 * 1.01);
    hf_vid_t *p = malloc(nv * sizeof *p);
    uint64_t *size = calloc(nv, sizeof *size), big = 0;
    assert_non_null(p);
    assert_non_null(size);
    for (hf_vid_t v = 0; v < nv; v++)
        p[v] = v;
    for (hf_vid_t u = 0; u < nv; u++)
        for (uint64_t e = g.offsets[u]; e < g.offsets[u + 1]; e++) {
            assert_int_not_equal(g.adj[e], u);
            assert_true(g.weights[e] >= 1 && g.weights[e] <= 1000);
            hf_vid_t a = find(p, u), b = find(p, g.adj[e]);
            if (a != b)
                p[a] = b;
        }
    for (hf_vid_t v = 0; v < nv; v++)
        if (++size[find(p, v)] > big)
            big = size[find(p, v)];
    print_message("rgg 2^16 degree 6: average %.3f, giant component %.1f%%\n", avg,
                  100.0 * (double)big / (double)nv);
    assert_true((double)big > 0.95 * (double)nv);
    free(p);
    free(size);
    hf_graph_free(&g);
}

/* Degree 1000 on 60 points: the radius exceeds the diagonal, so the graph is
 * complete; a tiny degree gives no edges; one vertex none; bad input refused. */
static void extremes(void **state)
{
    (void)state;
    struct hf_graph g;
    assert_int_equal(hf_graph_rgg(&g, 60, 1000, 3, 0), 0);
    assert_int_equal(g.ne, 60 * 59);
    hf_graph_free(&g);
    assert_int_equal(hf_graph_rgg(&g, 1000, 1e-9, 3, 0), 0);
    assert_int_equal(g.ne, 0);
    assert_int_equal(hf_graph_check(&g), 0);
    hf_graph_free(&g);
    assert_int_equal(hf_graph_rgg(&g, 1, 6, 3, 0), 0);
    assert_int_equal(g.ne, 0);
    hf_graph_free(&g);
    assert_int_equal(hf_graph_rgg(&g, 0, 6, 1, 0), HF_EINVAL);
    assert_int_equal(hf_graph_rgg(&g, 100, 0, 1, 0), HF_EINVAL);
    assert_int_equal(hf_graph_rgg(&g, 100, NAN, 1, 0), HF_EINVAL);
    hf_graph_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deterministic_across_threads),
        cmocka_unit_test(shape),
        cmocka_unit_test(extremes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
