/* shared.h - the engine's side of an app's shared data (shared.c); the app's
 * side is "Shared data" in hetfarm.h. Internal to core/.
 */
#ifndef HF_CORE_SHARED_H
#define HF_CORE_SHARED_H

#include "hetfarm.h"

/* The most shared arrays one app may declare. */
#define HF__SHARED_MAX 16

struct hf__engine;

/* Asks the app for its shared arrays (after setup) and allocates the host
 * recorders. *out stays NULL when the app shares nothing. */
int hf__shared_init(struct hf__shared_set **out, const struct hf_app *app, void *ctx, int ndev);
void hf__shared_destroy(struct hf__shared_set *S, int ndev);
/* The declarations, for the drivers (struct hf_device.shared). */
const struct hf_shared *hf__shared_list(const struct hf__shared_set *S, int *n);
/* Sends every state array whole to every device and forgets the host's
 * records: the start of round 0. */
int hf__shared_sync_all(struct hf__engine *e);
/* The work device dev's bundle said it did past its chunks' (hf_bundle_did_more),
 * then 0 again; 0 without shared data. */
double hf__shared_take_more(struct hf__shared_set *S, int dev);
/* Notes that device dev ran units [begin, end) this round (engine lock held):
 * an OWNED array's push sends each GPU the ranges the others computed. */
int hf__shared_bundle_ran(struct hf__shared_set *S, int dev, size_t begin, size_t end);
/* Forgets the union of the last merge: called once next_load has run. */
void hf__shared_round_start(struct hf__shared_set *S);
/* The elements of the MIN/MAX/OR arrays: how many there are, and how many
 * the last merge's union holds (what changed anywhere in the round). */
void hf__shared_recorded(const struct hf__shared_set *S, size_t *elements, size_t *changed);
/* The round-end merge (see shared.c); 0 or an HF_E* code. */
int hf__shared_merge(struct hf__engine *e);

/* A node of a run across nodes (nodes.c). The changes of MIN/MAX/OR array s
 * recorded since they were last forgotten, sealed, with their host values
 * gathered (valid until the next call); returns how many or an HF_E* code. */
long hf__shared_take_changes(struct hf__shared_set *S, int s, const uint32_t **idx,
                             const void **vals);
/* Forgets them (they went to rank 0). */
void hf__shared_forget_changes(struct hf__shared_set *S, int s);
/* Applies rank 0's update of array s to the host copy and, on their threads,
 * to every device that keeps its own copy: element idx[k] becomes vals[k]
 * (k < n), or with idx == NULL elements [first, first + n) become vals. For a
 * MIN/MAX/OR array the host's union becomes idx[0, n) (nothing after a range,
 * which only round 0's whole-array push sends), so that next_load sees the
 * union rank 0's sees. Between the node's spans only. */
int hf__shared_apply(struct hf__engine *e, int s, const uint32_t *idx, const void *vals, size_t n,
                     size_t first);

#endif
