/* bfs_ref.h - the plain reference BFS (bfs_ref.c): it
 * depends on the graph layer alone, nothing of the app it checks (bfs.c
 * calls it; it calls nothing of bfs.c).
 */
#ifndef HF_BFS_REF_H
#define HF_BFS_REF_H

#include <stdint.h>

#include "graph/layer/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HF_BFS_UNSEEN INT32_MAX /* depth of a vertex not reached (yet) */

/* bfs_ref.c: the textbook serial BFS (a queue), depths HF_BFS_UNSEEN where unreached. */
void hf__bfs_ref(const struct hf_graph *g, hf_vid_t src, int32_t *depth);

#ifdef __cplusplus
}
#endif
#endif
