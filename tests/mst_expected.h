/* mst_expected.h - what the MST tests (test_graph_mst.c, test_graph_mst_cuda.c)
 * compare the app's output with: Kruskal's forest (apps/graph/mst/mst_ref.c)
 * written the way the app writes it, `u<TAB>v<TAB>w` per edge, sorted, and the
 * check of an output file against it. Include after cmocka.h,
 * apps/graph/mst/mst_ref.h and test_files.h.
 */
#ifndef HF_TEST_MST_EXPECTED_H
#define HF_TEST_MST_EXPECTED_H

#include <stdio.h>
#include <stdlib.h>

/* Kruskal's forest of g as text; *edges (may be NULL) receives its size. */
static inline char *kruskal_text(const struct hf_graph *g, size_t *edges)
{
    uint32_t *e;
    size_t n;
    double w;
    assert_int_equal(hf__mst_ref(g, &e, &n, &w), 0);
    size_t cap = n * 48 + 1, len = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    s[0] = '\0';
    uint64_t base = (uint64_t)g->base;
    for (size_t i = 0; i < n; i++) {
        unsigned long long u = hf__mst_arc_source(g, e[i]) + base, v = g->adj[e[i]] + base;
        if (g->weights)
            len += (size_t)snprintf(s + len, cap - len, "%llu\t%llu\t%.9g\n", u, v,
                                    (double)g->weights[e[i]]);
        else
            len += (size_t)snprintf(s + len, cap - len, "%llu\t%llu\t1\n", u, v);
    }
    free(e);
    if (edges)
        *edges = n;
    return s;
}

/* The forest the app wrote to `path` must be exactly `want`. */
static inline void expect_forest(const char *path, const char *want)
{
    char *got = read_text(path);
    assert_string_equal(got, want);
    free(got);
}

#endif
