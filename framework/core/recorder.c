/* recorder.c - the host's list of the elements of one shared array that
 * changed in a round, filled by many threads at once.
 *
 * DESIGN
 * ------
 * A bit per element says "already recorded this round", so each element
 * enters the list once however often it changed. The list itself must not
 * have one shared counter: sixteen threads of a BFS that discover millions of
 * vertices would spend their time bouncing that counter's cache line between
 * cores. So a thread reserves BLOCK slots at a time with one atomic add and
 * fills them alone, keeping its cursor in thread-local storage (a cursor per
 * recorder, indexed by the recorder's slot, so that a kernel recording into
 * two arrays in turn keeps both blocks instead of abandoning one each time).
 * Slots are pre-filled with a sentinel; the tails of blocks that were not
 * filled stay sentinels and seal() squeezes them out. Nothing has to be
 * flushed when a thread stops, which is what makes it safe with OpenMP pools
 * whose threads the engine never sees.
 *
 * Sealing and clearing walk the list. A round of a scale-free graph's BFS or
 * CC records millions of elements, and a serial walk over them cost 3-6 ms
 * of a round on 16 cores (merge and the next round's start, kron-22), so
 * from PAR_MIN entries on they use the calling thread's OpenMP team: the
 * seal squeezes piece by piece into a spare list of sentinels (pieces count
 * what they keep, the counts are scanned, each piece writes at its offset:
 * the order is kept) and the lists swap; the clear zeroes the bit words (the
 * whole bitmap at once when the list is as long as the bitmap) and refills
 * the list with sentinels. A seal with nothing added since the last one
 * (the merge seals twice) returns at once.
 *
 * A list that is known to name each element once (one GPU bundle's, the
 * merge's sole-bundle case) is taken whole instead (hf__recorder_take): read
 * in place until the next clear, no bit set, no add allowed meanwhile.
 *
 * Room: the list holds count + SLACK slots. Wasted slots are at most one
 * partly filled block per recording thread and array; once reservations run
 * close to the end, threads reserve single slots, which never waste, so the
 * list cannot overflow (at most `count` distinct elements are recorded).
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

#define BLOCK 256
#define SLACK ((size_t)BLOCK * 1024)
#define SENTINEL UINT32_MAX
#define CURSORS 16 /* a thread's cursors: one per recorder of a run (HF__SHARED_MAX) */
#define PAR_MIN ((size_t)1 << 15) /* list entries from which seal and clear use the team */
#define PIECES 256 /* a parallel seal's pieces of the list */

/* A thread's current block in one recorder (of one round: gen). */
struct cursor {
    const struct hf__recorder *r;
    unsigned long gen;
    size_t next, end;
};

static _Thread_local struct cursor cursors[CURSORS];
static unsigned long next_slot; /* recorders take slots in turn (atomic) */

/* Writes sentinels into list[0, n), in PIECES pieces over the calling
 * thread's team when `team` is set. */
static void fill_sentinels(uint32_t *list, size_t n, int team)
{
#pragma omp parallel for schedule(static) if (team)
    for (int p = 0; p < PIECES; p++) {
        size_t per = (n + PIECES - 1) / PIECES, lo = (size_t)p * per;
        if (lo < n)
            memset(list + lo, 0xff, (lo + per < n ? per : n - lo) * sizeof *list);
    }
}

int hf__recorder_init(struct hf__recorder *r, size_t count)
{
    memset(r, 0, sizeof *r);
    r->n = count;
    r->cap = count + SLACK;
    size_t words = (count + 31) / 32;
    r->bits = malloc((words ? words : 1) * sizeof *r->bits);
    r->list = malloc(r->cap * sizeof *r->list);
    /* An array that can fill a list of PAR_MIN entries gets its spare now:
     * filling it at the first large seal would fault its pages in inside a
     * round (16 MB for kron-22's 4M vertices). The bitmap and the lists are
     * written here, by the team, so that round 0 faults none of their pages
     * in and on a NUMA machine they spread over its nodes (calloc's pages
     * were touched first by the first round's recording). */
    r->spare = count >= PAR_MIN ? malloc(r->cap * sizeof *r->spare) : NULL;
    if (!r->bits || !r->list || (count >= PAR_MIN && !r->spare))
        return HF_ENOMEM;
#pragma omp parallel for schedule(static) if (words >= PAR_MIN)
    for (size_t w = 0; w < words; w++)
        r->bits[w] = 0;
    fill_sentinels(r->list, r->cap, count >= PAR_MIN);
    if (r->spare)
        fill_sentinels(r->spare, r->cap, 1);
    r->gen = 1;
    r->slot = (unsigned)(__atomic_fetch_add(&next_slot, 1, __ATOMIC_RELAXED) % CURSORS);
    return 0;
}

void hf__recorder_free(struct hf__recorder *r)
{
    free(r->bits);
    free(r->list);
    free(r->spare);
    memset(r, 0, sizeof *r);
}

/* Reserves a slot for the calling thread: from its block, or a new block. */
static size_t reserve(struct hf__recorder *r)
{
    struct cursor *c = &cursors[r->slot];
    if (c->r == r && c->gen == __atomic_load_n(&r->gen, __ATOMIC_RELAXED) && c->next < c->end)
        return c->next++;
    /* A block is taken only while a whole block and half the slack stay
     * free, so that single slots have room left when threads get there. */
    size_t start = __atomic_load_n(&r->reserved, __ATOMIC_RELAXED);
    if (start + BLOCK + SLACK / 2 <= r->cap) {
        start = __atomic_fetch_add(&r->reserved, BLOCK, __ATOMIC_RELAXED);
        if (start + BLOCK <= r->cap) {
            *c = (struct cursor){r, __atomic_load_n(&r->gen, __ATOMIC_RELAXED), start + 1,
                                 start + BLOCK};
            return start;
        }
    }
    /* Near the end (more recording threads than SLACK allows for): single
     * slots, which never waste; the list cannot overflow then, since it holds
     * each element once. */
    c->r = NULL;
    size_t k = __atomic_fetch_add(&r->reserved, 1, __ATOMIC_RELAXED);
    HF_ASSERT_MSG(k < r->cap, "shared data: change list overflow (too many recording threads)");
    return k;
}

void hf__recorder_add(struct hf__recorder *r, size_t i)
{
    uint32_t bit = 1u << (i & 31), *w = &r->bits[i >> 5];
    if (__atomic_load_n(w, __ATOMIC_RELAXED) & bit ||
        __atomic_fetch_or(w, bit, __ATOMIC_RELAXED) & bit)
        return;
    r->list[reserve(r)] = (uint32_t)i;
}

/* The serial squeeze, in place: short lists. */
static size_t squeeze_serial(struct hf__recorder *r, size_t hi)
{
    size_t n = 0;
    for (size_t k = 0; k < hi; k++) {
        uint32_t v = r->list[k];
        if (v != SENTINEL) {
            r->list[k] = SENTINEL;
            r->list[n++] = v;
        }
    }
    return n;
}

/* The parallel squeeze into the spare list (see DESIGN); the emptied list,
 * refilled with sentinels, becomes the spare. */
static size_t squeeze_parallel(struct hf__recorder *r, size_t hi)
{
    if (!r->spare) /* a short array (see init) whose list ran long: rare, slower, right */
        return squeeze_serial(r, hi);
    size_t kept[PIECES + 1] = {0}, per = (hi + PIECES - 1) / PIECES;
    uint32_t *from = r->list, *to = r->spare;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int p = 0; p < PIECES; p++) {
            size_t lo = (size_t)p * per, end = lo + per < hi ? lo + per : hi, k = 0;
            for (size_t i = lo; i < end; i++)
                k += from[i] != SENTINEL;
            kept[p + 1] = k;
        }
#pragma omp single
        for (int p = 0; p < PIECES; p++)
            kept[p + 1] += kept[p];
#pragma omp for schedule(static)
        for (int p = 0; p < PIECES; p++) {
            size_t lo = (size_t)p * per, end = lo + per < hi ? lo + per : hi, k = kept[p];
            for (size_t i = lo; i < end; i++)
                if (from[i] != SENTINEL)
                    to[k++] = from[i];
            if (lo < end)
                memset(from + lo, 0xff, (end - lo) * sizeof *from);
        }
    }
    r->list = to;
    r->spare = from;
    return kept[PIECES];
}

void hf__recorder_take(struct hf__recorder *r, const uint32_t *idx, size_t n)
{
    HF_ASSERT_MSG(r->reserved == 0 && n <= r->n, "hf__recorder_take: recorder not empty");
    r->taken = idx;
    r->reserved = r->count = n;
    r->gen++; /* no thread's block points into the list any more */
}

/* hf__recorder_add_many: the element range is cut into PIECES pieces of
 * whole bitmap words, so that a piece's bits belong to it alone. idx is
 * taken in windows of at most the spare list's size (the spare is the
 * gathering room: allocated and touched at init, so that no page of a new
 * buffer faults in inside round 0). In a window, a counting pass (each
 * thread a part of it) gives where each thread's entries of each piece go,
 * a second pass gathers them there, piece by piece; then each piece is
 * recorded by one thread with plain bit tests and sets, its first
 * occurrences kept in place, and the pieces' kept entries are appended to
 * the list side by side. The bits carry the window's elements into the
 * next; the spare gets its sentinels back at the end. */
int hf__recorder_add_many(struct hf__recorder *r, const uint32_t *idx, size_t n)
{
    HF_ASSERT_MSG(r->reserved == 0 && !r->taken, "hf__recorder_add_many: recorder not empty");
    if (n < PAR_MIN || !r->spare) {
        for (size_t k = 0; k < n; k++)
            if (idx[k] < r->n)
                hf__recorder_add(r, idx[k]);
        hf__recorder_seal(r);
        return 0;
    }
    size_t span = ((r->n + 31) / 32 + PIECES - 1) / PIECES * 32; /* elements of a piece */
    int team = omp_get_max_threads();
    size_t *at = calloc((size_t)team * PIECES, sizeof *at), start[PIECES + 1], kept[PIECES + 1];
    if (!at)
        return HF_ENOMEM;
    uint32_t *tmp = r->spare, *bits = r->bits;
    size_t done = 0, used = 0; /* entries in the list; spare slots to refill */
    for (size_t w0 = 0; w0 < n; w0 += r->cap) {
        size_t wn = n - w0 < r->cap ? n - w0 : r->cap;
        const uint32_t *win = idx + w0;
        memset(at, 0, (size_t)team * PIECES * sizeof *at);
#pragma omp parallel num_threads(team)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            size_t lo = wn * (size_t)t / (size_t)nt, hi = wn * (size_t)(t + 1) / (size_t)nt;
            size_t *mine = at + (size_t)t * PIECES;
            for (size_t k = lo; k < hi; k++)
                if (win[k] < r->n)
                    mine[win[k] / span]++;
#pragma omp barrier
#pragma omp single
            { /* each (thread, piece)'s first slot; piece p starts at start[p] */
                size_t sum = 0;
                for (int p = 0; p < PIECES; p++) {
                    start[p] = sum;
                    for (int u = 0; u < nt; u++) {
                        size_t c = at[(size_t)u * PIECES + p];
                        at[(size_t)u * PIECES + p] = sum;
                        sum += c;
                    }
                }
                start[PIECES] = sum;
            }
            for (size_t k = lo; k < hi; k++)
                if (win[k] < r->n)
                    tmp[mine[win[k] / span]++] = win[k];
#pragma omp barrier
#pragma omp for schedule(dynamic, 4)
            for (int p = 0; p < PIECES; p++) {
                size_t out = start[p];
                for (size_t k = start[p]; k < start[p + 1]; k++) {
                    uint32_t v = tmp[k], bit = 1u << (v & 31);
                    if (!(bits[v >> 5] & bit)) {
                        bits[v >> 5] |= bit;
                        tmp[out++] = v;
                    }
                }
                kept[p + 1] = out - start[p];
            }
#pragma omp single
            {
                kept[0] = done;
                for (int p = 0; p < PIECES; p++)
                    kept[p + 1] += kept[p];
            }
#pragma omp for schedule(static)
            for (int p = 0; p < PIECES; p++)
                memcpy(r->list + kept[p], tmp + start[p], (kept[p + 1] - kept[p]) * sizeof *tmp);
        }
        done = kept[PIECES];
        used = start[PIECES] > used ? start[PIECES] : used;
    }
    free(at);
    fill_sentinels(tmp, used, 1); /* the spare's sentinels back */
    r->reserved = r->count = done;
    r->gen++; /* no thread's block points into the list */
    return 0;
}

const uint32_t *hf__recorder_list(const struct hf__recorder *r)
{
    return r->taken ? r->taken : r->list;
}

/* A taken list allows no add until the clear: an add would have reserved a
 * slot (no bit stops it). Checked at seal and clear, off the adds' hot path. */
static void check_taken(const struct hf__recorder *r)
{
    HF_ASSERT_MSG(!r->taken || r->reserved == r->count,
                  "shared data: an element recorded after the round's changes were taken whole");
}

size_t hf__recorder_seal(struct hf__recorder *r)
{
    check_taken(r);
    size_t hi = r->reserved < r->cap ? r->reserved : r->cap;
    r->gen++; /* blocks handed out before now point into the squeezed list */
    if (hi == r->count) /* no slot reserved since the last seal or clear: nothing added */
        return r->count;
    size_t n = hi < PAR_MIN ? squeeze_serial(r, hi) : squeeze_parallel(r, hi);
    r->reserved = r->count = n;
    return n;
}

void hf__recorder_clear(struct hf__recorder *r)
{
    check_taken(r);
    if (r->taken) { /* no bit was set, no slot of the own list used */
        r->taken = NULL;
        r->reserved = r->count = 0;
        r->gen++;
        return;
    }
    size_t hi = r->reserved < r->cap ? r->reserved : r->cap;
    r->reserved = r->count = 0;
    r->gen++;
    if (hi < PAR_MIN) {
        for (size_t k = 0; k < hi; k++) {
            uint32_t v = r->list[k];
            if (v != SENTINEL) {
                r->bits[v >> 5] = 0;
                r->list[k] = SENTINEL;
            }
        }
        return;
    }
    size_t words = (r->n + 31) / 32;
    uint32_t *bits = r->bits, *list = r->list;
    int whole = hi >= words; /* as many entries as bit words: zero the bitmap at once */
#pragma omp parallel
    {
        if (whole) {
#pragma omp for schedule(static)
            for (size_t w = 0; w < words; w++)
                bits[w] = 0;
        } else {
#pragma omp for schedule(static)
            for (size_t k = 0; k < hi; k++)
                if (list[k] != SENTINEL) /* words are shared: an atomic store */
                    __atomic_store_n(&bits[list[k] >> 5], 0, __ATOMIC_RELAXED);
        }
#pragma omp for schedule(static)
        for (size_t k = 0; k < hi; k++)
            list[k] = SENTINEL;
    }
}
