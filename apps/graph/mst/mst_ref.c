/* mst_ref.c - the reference minimum spanning forest: Kruskal. Every edge
 * {u, v} appears once, as its canonical arc u -> v (u < v); the edges are
 * sorted by the app's key (weight bits, then arc id) and taken in that order
 * when they join two trees of a union-find. Nothing clever, so that it is
 * obviously right; verify compares the app's forest with it.
 */
#include <stdlib.h>

#include "mst_ref.h"

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The root of x, halving the path on the way. */
static uint32_t find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

hf_vid_t hf__mst_arc_source(const struct hf_graph *g, uint64_t j)
{
    uint64_t lo = 0, hi = g->nv; /* offsets[lo] <= j < offsets[hi] */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->offsets[mid] <= j)
            lo = mid;
        else
            hi = mid;
    }
    return (hf_vid_t)lo;
}

int hf__mst_ref(const struct hf_graph *g, uint32_t **edges, size_t *n, double *weight)
{
    *edges = NULL;
    *n = 0;
    *weight = 0;
    size_t m = 0;
    for (uint64_t u = 0; u < g->nv; u++)
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++)
            m += u < g->adj[j];
    uint64_t *keys = malloc((m ? m : 1) * sizeof *keys);
    uint32_t *parent = malloc(g->nv * sizeof *parent);
    uint32_t *out = malloc((g->nv ? g->nv : 1) * sizeof *out);
    if (!keys || !parent || !out) {
        free(keys);
        free(parent);
        free(out);
        return hf_fail(HF_ENOMEM, "mst: out of memory for the reference");
    }
    size_t k = 0;
    for (uint64_t u = 0; u < g->nv; u++)
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++)
            if (u < g->adj[j])
                keys[k++] = hf__mst_key(g->weights, j, (uint32_t)j);
    qsort(keys, m, sizeof *keys, cmp_u64);
    for (uint64_t v = 0; v < g->nv; v++)
        parent[v] = (uint32_t)v;
    size_t chosen = 0;
    double sum = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t j = (uint32_t)keys[i];
        uint32_t a = find(parent, hf__mst_arc_source(g, j)), b = find(parent, g->adj[j]);
        if (a == b)
            continue;
        parent[a > b ? a : b] = a < b ? a : b;
        out[chosen++] = j;
        sum += g->weights ? (double)g->weights[j] : 1.0;
    }
    qsort(out, chosen, sizeof *out, cmp_u32);
    free(keys);
    free(parent);
    *edges = out;
    *n = chosen;
    *weight = sum;
    return 0;
}
