/* strsearch_hs.c - the CPU matcher: Hyperscan over one range of the text.
 *
 * DESIGN
 * ------
 * The patterns are compiled once as literals (hs_compile_lit_multi, so NUL
 * bytes and regex metacharacters mean themselves) with flags 0: Hyperscan then
 * reports EVERY end offset of every pattern, overlapping ones included, and
 * for a literal the start is exactly end - length, so no start-of-match flag
 * (and none of its cost) is needed. A pattern listed twice gets two ids, and
 * both are reported.
 *
 * A range [begin, end) is scanned in block mode from `begin` to end + overlap
 * (longest pattern - 1, clipped at the end of the text), and a match is kept
 * only when its first byte lies before `end`: the next range owns the others.
 * Matches cannot start before `begin`, since the scan starts there.
 *
 * Scratch space is per scanning thread. Threads come and go (OpenMP teams of
 * several CPU devices, collect's rescans), so scratches live in a small pool:
 * a scan takes one (cloning a new one when the pool is empty) and returns it.
 * Block mode takes an unsigned length, so ranges longer than 1 GiB are scanned
 * in 1 GiB windows that overlap like chunks do.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <hs.h>

#include "strsearch.h"

#define HS_WINDOW ((uint64_t)1 << 30)

struct hf__ss_hs {
    hs_database_t *db;
    const struct hf__ss_patterns *pats;
    pthread_mutex_t lock;
    hs_scratch_t **free_scratch; /* the pool */
    size_t nfree, cap;
    hs_scratch_t *proto;         /* cloned for every new scanning thread */
};

struct scan_ctx {
    const struct hf__ss_hs *hs;
    struct hf__ss_part *part;
    uint64_t base;  /* file offset of the scanned block's byte 0 */
    uint64_t limit; /* matches must start before this file offset */
    int err;
};

int hf__ss_hs_create(struct hf__ss_hs **out, const struct hf__ss_patterns *p)
{
    struct hf__ss_hs *hs = calloc(1, sizeof *hs);
    unsigned *ids = calloc(p->n, sizeof *ids), *flags = calloc(p->n, sizeof *flags);
    if (!hs || !ids || !flags) {
        free(hs);
        free(ids);
        free(flags);
        return hf_fail(HF_ENOMEM, "strsearch: out of memory compiling %zu patterns", p->n);
    }
    for (size_t i = 0; i < p->n; i++)
        ids[i] = (unsigned)i;
    hs_compile_error_t *cerr = NULL;
    hs_error_t e = hs_compile_lit_multi((const char *const *)p->p, flags, ids, p->len,
                                        (unsigned)p->n, HS_MODE_BLOCK, NULL, &hs->db, &cerr);
    free(ids);
    free(flags);
    if (e != HS_SUCCESS) {
        int rc = hf_fail(HF_EAPP, "strsearch: Hyperscan cannot compile the patterns: %s",
                         cerr ? cerr->message : "unknown error");
        hs_free_compile_error(cerr);
        free(hs);
        return rc;
    }
    if (hs_alloc_scratch(hs->db, &hs->proto) != HS_SUCCESS) {
        hs_free_database(hs->db);
        free(hs);
        return hf_fail(HF_ENOMEM, "strsearch: Hyperscan cannot allocate its scratch space");
    }
    pthread_mutex_init(&hs->lock, NULL);
    hs->pats = p;
    *out = hs;
    return 0;
}

void hf__ss_hs_destroy(struct hf__ss_hs *hs)
{
    if (!hs)
        return;
    for (size_t i = 0; i < hs->nfree; i++)
        hs_free_scratch(hs->free_scratch[i]);
    free(hs->free_scratch);
    hs_free_scratch(hs->proto);
    hs_free_database(hs->db);
    pthread_mutex_destroy(&hs->lock);
    free(hs);
}

/* Takes a scratch from the pool, or clones a new one. */
static hs_scratch_t *scratch_get(struct hf__ss_hs *hs)
{
    hs_scratch_t *s = NULL;
    pthread_mutex_lock(&hs->lock);
    if (hs->nfree > 0)
        s = hs->free_scratch[--hs->nfree];
    else if (hs_clone_scratch(hs->proto, &s) != HS_SUCCESS)
        s = NULL;
    pthread_mutex_unlock(&hs->lock);
    return s;
}

/* Returns a scratch to the pool (freeing it if the pool cannot grow). */
static void scratch_put(struct hf__ss_hs *hs, hs_scratch_t *s)
{
    pthread_mutex_lock(&hs->lock);
    if (hs->nfree == hs->cap) {
        size_t cap = hs->cap ? 2 * hs->cap : 8;
        void *v = realloc(hs->free_scratch, cap * sizeof *hs->free_scratch);
        if (v) {
            hs->free_scratch = v;
            hs->cap = cap;
        }
    }
    if (hs->nfree < hs->cap)
        hs->free_scratch[hs->nfree++] = s;
    else
        hs_free_scratch(s);
    pthread_mutex_unlock(&hs->lock);
}

/* Hyperscan's match callback: keeps the match when its first byte is in the range. */
static int on_match(unsigned id, unsigned long long from, unsigned long long to,
                    unsigned flags, void *arg)
{
    (void)from;
    (void)flags;
    struct scan_ctx *c = arg;
    uint64_t start = c->base + to - c->hs->pats->len[id];
    if (start >= c->limit)
        return 0;
    c->part->counts[id]++;
    if (c->part->want_m && hf__ss_part_push(c->part, start, id)) {
        c->err = HF_ENOMEM;
        return 1; /* stops the scan */
    }
    return 0;
}

/* Hyperscan 5.4.0 (Debian 12) fails some scans with HS_UNKNOWN_ERROR: a set
 * holding a long literal, over data that ends inside a partial match of it
 * (found by tests/fuzz/fuzz_strsearch.c; the input is kept under
 * tests/fuzz/corpus/fuzz_strsearch/). The part is then redone, whole, by the
 * plain reference: slower, rare, and right. */
static int fallback(struct hf__ss_hs *hs, const unsigned char *text, uint64_t size,
                    struct hf__ss_part *part, hs_error_t e, uint64_t at)
{
    static int told;
    if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "strsearch: Hyperscan failed (%d) at text offset %llu; that range is "
                        "searched by the plain reference instead\n",
                (int)e, (unsigned long long)at);
    int rc = hf__ss_part_reset(part, hs->pats->n, part->begin, part->end, part->want_m);
    if (!rc && (rc = hf__ss_ref(hs->pats, text, size, part)) != 0)
        rc = hf_fail(rc, "strsearch: out of memory recording matches");
    return rc;
}

int hf__ss_hs_scan(struct hf__ss_hs *hs, const unsigned char *text, uint64_t size,
                   struct hf__ss_part *part)
{
    hs_scratch_t *s = scratch_get(hs);
    if (!s)
        return hf_fail(HF_ENOMEM, "strsearch: Hyperscan cannot clone its scratch space");
    uint64_t overlap = hs->pats->maxlen - 1, end = part->end < size ? part->end : size;
    int rc = 0;
    for (uint64_t b = part->begin; b < end && rc == 0; b += HS_WINDOW) {
        uint64_t limit = end - b > HS_WINDOW ? b + HS_WINDOW : end;
        uint64_t stop = size - limit > overlap ? limit + overlap : size;
        struct scan_ctx c = {.hs = hs, .part = part, .base = b, .limit = limit};
        hs_error_t e = hs_scan(hs->db, (const char *)text + b, (unsigned)(stop - b), 0, s,
                               on_match, &c);
        if (c.err)
            rc = hf_fail(c.err, "strsearch: out of memory recording matches");
        else if (e != HS_SUCCESS)
            rc = fallback(hs, text, size, part, e, b);
    }
    scratch_put(hs, s);
    return rc;
}
