/* pool.c - the exactly-once ledger of a round's chunks.
 *
 * DESIGN
 * ------
 * The design is simple: one state byte per chunk (free, claimed, done) and two
 * counters, behind one mutex. Every span is checked in full before any chunk
 * changes state, so a refused claim leaves the ledger untouched. Spans are
 * short for CPUs (one chunk) and whole shares for GPUs, so the linear checks
 * cost less than the bundle they guard; the mutex is uncontended in practice
 * because the engine already serialises scheduling decisions.
 */
#include "pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hetfarm.h"

enum { CHUNK_FREE = 0, CHUNK_CLAIMED = 1, CHUNK_DONE = 2 };

struct hf_pool {
    pthread_mutex_t lock;
    unsigned char *state;
    size_t n, cap;
    size_t claimed, done;
};

static const char *const state_name[] = {"free", "already handed out", "already done"};

int hf_pool_init(hf_pool_t *pool)
{
    struct hf_pool *p = calloc(1, sizeof *p);
    if (!p)
        return hf_fail(HF_ENOMEM, "pool: out of memory");
    pthread_mutex_init(&p->lock, NULL);
    *pool = p;
    return 0;
}

void hf_pool_destroy(hf_pool_t p)
{
    if (!p)
        return;
    pthread_mutex_destroy(&p->lock);
    free(p->state);
    free(p);
}

int hf_pool_reset(hf_pool_t p, size_t n)
{
    pthread_mutex_lock(&p->lock);
    if (n > p->cap) {
        unsigned char *s = realloc(p->state, n);
        if (!s) {
            pthread_mutex_unlock(&p->lock);
            return hf_fail(HF_ENOMEM, "pool: cannot track %zu chunks", n);
        }
        p->state = s;
        p->cap = n;
    }
    memset(p->state, CHUNK_FREE, n);
    p->n = n;
    p->claimed = p->done = 0;
    pthread_mutex_unlock(&p->lock);
    return 0;
}

/* Moves [first, first+count) from state `from` to state `to`, or changes
 * nothing and fails when the span is out of range or a chunk is not in `from`.
 * Called with the lock held. */
static int transition(struct hf_pool *p, size_t first, size_t count, int from, int to,
                      const char *verb)
{
    if (count == 0 || first >= p->n || count > p->n - first)
        return hf_fail(HF_ESCHED, "pool: cannot %s chunks [%zu, %zu): the round has %zu chunks",
                       verb, first, first + count, p->n);
    for (size_t i = first; i < first + count; i++)
        if (p->state[i] != from)
            return hf_fail(HF_ESCHED, "pool: cannot %s chunk %zu of [%zu, %zu): it is %s", verb,
                           i, first, first + count, state_name[p->state[i]]);
    memset(p->state + first, to, count);
    return 0;
}

int hf_pool_claim(hf_pool_t p, size_t first, size_t count)
{
    pthread_mutex_lock(&p->lock);
    int rc = transition(p, first, count, CHUNK_FREE, CHUNK_CLAIMED, "hand out");
    if (rc == 0)
        p->claimed += count;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

int hf_pool_complete(hf_pool_t p, size_t first, size_t count)
{
    pthread_mutex_lock(&p->lock);
    int rc = transition(p, first, count, CHUNK_CLAIMED, CHUNK_DONE, "complete");
    if (rc == 0) {
        p->claimed -= count;
        p->done += count;
    }
    pthread_mutex_unlock(&p->lock);
    return rc;
}

int hf_pool_release(hf_pool_t p, size_t first, size_t count)
{
    pthread_mutex_lock(&p->lock);
    int rc = transition(p, first, count, CHUNK_CLAIMED, CHUNK_FREE, "release");
    if (rc == 0)
        p->claimed -= count;
    pthread_mutex_unlock(&p->lock);
    return rc;
}

size_t hf_pool_done(hf_pool_t p)
{
    pthread_mutex_lock(&p->lock);
    size_t d = p->done;
    pthread_mutex_unlock(&p->lock);
    return d;
}

size_t hf_pool_claimed(hf_pool_t p)
{
    pthread_mutex_lock(&p->lock);
    size_t c = p->claimed;
    pthread_mutex_unlock(&p->lock);
    return c;
}

size_t hf_pool_size(hf_pool_t p)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->n;
    pthread_mutex_unlock(&p->lock);
    return n;
}

size_t hf_pool_next_free(hf_pool_t p, size_t from, size_t *first)
{
    pthread_mutex_lock(&p->lock);
    size_t i = from, len = 0;
    while (i < p->n && p->state[i] != CHUNK_FREE)
        i++;
    *first = i;
    while (i + len < p->n && p->state[i + len] == CHUNK_FREE)
        len++;
    pthread_mutex_unlock(&p->lock);
    return len;
}
