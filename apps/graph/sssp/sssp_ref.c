/* sssp_ref.c - the reference SSSP: textbook Dijkstra with a binary min-heap
 * of (distance, vertex) entries and lazy deletion (a popped entry older than
 * its vertex's distance is skipped), sums in float as the app does. */
#include <math.h>
#include <stdlib.h>

#include "sssp_ref.h"

struct entry {
    float d;
    hf_vid_t v;
};

static void heap_push(struct entry *h, size_t *n, struct entry e)
{
    size_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].d > e.d) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static struct entry heap_pop(struct entry *h, size_t *n)
{
    struct entry top = h[0], last = h[--*n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && h[c + 1].d < h[c].d)
            c++;
        if (h[c].d >= last.d)
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n)
        h[i] = last;
    return top;
}

int hf__sssp_ref(const struct hf_graph *g, hf_vid_t src, float *dist)
{
    /* Each relaxation pushes at most one entry: ne + 1 entries at most. */
    struct entry *h = malloc((g->ne + 1) * sizeof *h);
    if (!h)
        return hf_fail(HF_ENOMEM, "sssp: out of memory for the reference's heap");
    for (uint64_t v = 0; v < g->nv; v++)
        dist[v] = INFINITY;
    size_t n = 0;
    dist[src] = 0;
    heap_push(h, &n, (struct entry){0, src});
    while (n) {
        struct entry e = heap_pop(h, &n);
        if (e.d > dist[e.v])
            continue;
        for (uint64_t j = g->offsets[e.v]; j < g->offsets[e.v + 1]; j++) {
            float nd = e.d + (g->weights ? g->weights[j] : 1.0f);
            if (nd < dist[g->adj[j]]) {
                dist[g->adj[j]] = nd;
                heap_push(h, &n, (struct entry){nd, g->adj[j]});
            }
        }
    }
    free(h);
    return 0;
}
