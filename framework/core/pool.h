/* pool.h - the task pool: the ledger that makes every chunk of a round run exactly once.
 *
 * Each chunk of the current round is free, claimed (handed to a device) or done.
 * Schedulers decide who gets which chunks; the pool refuses a span that overlaps
 * work already handed out, so a buggy scheduler fails loudly (HF_ESCHED) instead
 * of running a chunk twice, and a round is over exactly when every chunk is done.
 * A device that fails puts its claimed chunks back (release) for others to run.
 * All functions are thread-safe.
 */
#ifndef HF_POOL_H
#define HF_POOL_H

#include <stddef.h>

typedef struct hf_pool *hf_pool_t;

int hf_pool_init(hf_pool_t *pool);
void hf_pool_destroy(hf_pool_t pool);

/* Starts a round of n chunks, all free. */
int hf_pool_reset(hf_pool_t pool, size_t n);
/* Claims [first, first + count): HF_ESCHED (with hf_fail details) if the span
 * is empty, out of range, or any chunk in it is not free; nothing changes then. */
int hf_pool_claim(hf_pool_t pool, size_t first, size_t count);
/* Marks a claimed span done. HF_ESCHED if any chunk was not claimed. */
int hf_pool_complete(hf_pool_t pool, size_t first, size_t count);
/* Puts a claimed span back to free (its device failed). */
int hf_pool_release(hf_pool_t pool, size_t first, size_t count);
/* Chunks done, and chunks claimed but not done. */
size_t hf_pool_done(hf_pool_t pool);
size_t hf_pool_claimed(hf_pool_t pool);
size_t hf_pool_size(hf_pool_t pool);
/* The first free chunk at or after `from` and the length of the free run there;
 * returns 0 when no chunk at or after `from` is free. */
size_t hf_pool_next_free(hf_pool_t pool, size_t from, size_t *first);

#endif
