/* cc_ref.h - the plain reference connected components (cc_ref.c): it
 * depends on the graph layer alone, nothing of the app it checks (cc.c
 * calls it; it calls nothing of cc.c).
 */
#ifndef HF_CC_REF_H
#define HF_CC_REF_H

#include <stdint.h>

#include "graph/layer/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cc_ref.c: union-find (union by index, path halving); label[v] = the
 * smallest vertex of v's component. Returns the number of components. */
uint64_t hf__cc_ref(const struct hf_graph *g, uint32_t *label);

#ifdef __cplusplus
}
#endif
#endif
