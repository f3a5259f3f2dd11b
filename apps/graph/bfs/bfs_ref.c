/* bfs_ref.c - the reference BFS: one queue, one pass, nothing clever, so that
 * it is obviously right; verify compares the app's depths with it. */
#include <stdlib.h>

#include "bfs_ref.h"

void hf__bfs_ref(const struct hf_graph *g, hf_vid_t src, int32_t *depth)
{
    for (uint64_t v = 0; v < g->nv; v++)
        depth[v] = HF_BFS_UNSEEN;
    hf_vid_t *queue = malloc(g->nv * sizeof *queue);
    if (!queue)
        return;
    size_t head = 0, tail = 0;
    depth[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        hf_vid_t u = queue[head++];
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++) {
            hf_vid_t v = g->adj[j];
            if (depth[v] == HF_BFS_UNSEEN) {
                depth[v] = depth[u] + 1;
                queue[tail++] = v;
            }
        }
    }
    free(queue);
}
