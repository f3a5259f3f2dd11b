/* graph_place.h - [load] placement (graph_place.c): vertices renumbered so
 * that each part of the graph's own partition is a contiguous id range. For
 * the apps that call hf__gapp_place (bfs, cc, pagerank).
 */
#ifndef HF_GRAPH_PLACE_H
#define HF_GRAPH_PLACE_H

#include "graph/app/graph_app.h"
#include "hetfarm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The [load] keys of placement, for the apps that call hf__gapp_place. */
#define HF_GAPP_PLACEMENT_KEYS                                                                \
    {NULL, "placement", HF_KEY_STR, 0, 0, 0, "range|partition", "range",                      \
     "vertices reach devices by id ranges, or by parts of the graph's own partition"},        \
    {NULL, "placement_parts", HF_KEY_INT, 0, 1024, 0, NULL, "0",                              \
     "parts of placement = partition (0: nv / 4096, within 8..64)"},                          \
    {NULL, "traffic", HF_KEY_BOOL, 0, 0, 0, NULL, "no",                                       \
     "measure the cross-device traffic figures (halo, broadcast) per round"}

/* graph_place.c: reads [load] traffic (whether to measure the cross-device
 * traffic figures: host time between rounds, ~1.5 s a round on kron-24 with
 * two devices, so off unless asked for) and placement (range, the default: nothing to do;
 * partition: partitions ga->g with the repository's partitioner into
 * placement_parts parts, orders the parts so that neighbouring parts are
 * adjacent, and relabels ga->g and ga->src so that each part is a
 * contiguous id range). Call after hf__gapp_create, before anything is
 * derived from the graph. HF_ECONFIG naming file:line and the value for an
 * unknown placement or a directed graph. */
int hf__gapp_place(struct hf_gapp *ga, hf_config_t cfg);

#ifdef __cplusplus
}
#endif
#endif
