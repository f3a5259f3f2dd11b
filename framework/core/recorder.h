/* recorder.h - a thread-safe, duplicate-free list of changed elements
 * (recorder.c): what the host side of a MIN/MAX/OR shared array records in a
 * round. Internal to core/.
 */
#ifndef HF_CORE_RECORDER_H
#define HF_CORE_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "hetfarm.h"

struct hf__recorder {
    uint32_t *bits;        /* one bit per element: recorded this round */
    uint32_t *list;        /* recorded indices; dense [0, count) after seal */
    uint32_t *spare;       /* all sentinels: where a large seal squeezes to (NULL for arrays
                              of fewer than recorder.c's PAR_MIN elements) */
    size_t n;              /* elements of the array */
    size_t cap;            /* slots in list */
    size_t reserved;       /* slots handed out (atomic) */
    size_t count;          /* entries after the last seal */
    unsigned long gen;     /* bumped by seal and clear: invalidates threads' blocks */
    unsigned slot;         /* which of a thread's cursors serves this recorder */
    const uint32_t *taken; /* a list taken whole (hf__recorder_take), read in place */
};

/* For an array of `count` elements; 0 or HF_ENOMEM. */
int hf__recorder_init(struct hf__recorder *r, size_t count);
void hf__recorder_free(struct hf__recorder *r);
/* Records element i (< count) unless it is recorded already; any thread. */
void hf__recorder_add(struct hf__recorder *r, size_t i);
/* Records the n elements of idx at once, on a recorder holding nothing: idx
 * must name each element once (a GPU's list of one bundle) and stay valid
 * until the next clear, which forgets it. The recorder then reads idx in
 * place as its list (what n adds and a seal would give, in idx's order); no
 * bit is set, so no add may follow until the clear (asserted there). Copying a
 * road search's 24M indices, or setting their bits atomically from every
 * thread, cost more than the rest of the merge. */
void hf__recorder_take(struct hf__recorder *r, const uint32_t *idx, size_t n);
/* Records the n elements of idx, which may repeat (each < count), on a
 * recorder holding nothing: what n adds and a seal give, in order of
 * element ranges rather than idx's, without an atomic per element. The
 * lists of several bundles of one GPU (a GPU's round-0 profile: 3 bundles,
 * 20-40M entries at kron-24) cost 23-32 ms of atomic adds on 15 host
 * threads. 0 or HF_ENOMEM (then nothing is recorded). Only while no thread
 * adds. */
int hf__recorder_add_many(struct hf__recorder *r, const uint32_t *idx, size_t n);
/* The recorded elements, [0, count) after a seal or a take. */
const uint32_t *hf__recorder_list(const struct hf__recorder *r);
/* Squeezes the list to its recorded entries, list[0, count); returns count.
 * Only while no thread adds. More adds may follow, and another seal. A large
 * list is squeezed by the calling thread's OpenMP team; a seal with nothing
 * added since the last one costs nothing. */
size_t hf__recorder_seal(struct hf__recorder *r);
/* Forgets everything recorded (bits and list). Only while no thread adds.
 * Large lists are cleared by the calling thread's OpenMP team. */
void hf__recorder_clear(struct hf__recorder *r);

#endif
