/* cc_ref.c - the reference connected components: union-find over every edge,
 * each root the smallest vertex of its set (union always hangs the larger
 * root under the smaller), so the label of v is simply find(v). */
#include "cc_ref.h"

/* The root of v, halving the path on the way. */
static uint32_t find(uint32_t *parent, uint32_t v)
{
    while (parent[v] != v) {
        parent[v] = parent[parent[v]];
        v = parent[v];
    }
    return v;
}

uint64_t hf__cc_ref(const struct hf_graph *g, uint32_t *label)
{
    for (uint64_t v = 0; v < g->nv; v++)
        label[v] = (uint32_t)v;
    for (uint64_t u = 0; u < g->nv; u++)
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++) {
            uint32_t a = find(label, (uint32_t)u), b = find(label, g->adj[j]);
            if (a < b)
                label[b] = a;
            else if (b < a)
                label[a] = b;
        }
    uint64_t count = 0;
    for (uint64_t v = 0; v < g->nv; v++) {
        label[v] = find(label, (uint32_t)v);
        count += label[v] == v;
    }
    return count;
}
