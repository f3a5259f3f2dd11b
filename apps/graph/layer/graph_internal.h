/* graph_internal.h - what the graph layer's files share and the apps need not
 * see: blocks of arcs as parsers and generators produce them, the CSR builder
 * they all end in, and the binary cache's option-aware entry points. */
#ifndef HF_GRAPH_INTERNAL_H
#define HF_GRAPH_INTERNAL_H

#include <stdlib.h>

#include "graph.h"

/* A growable block of arcs u->v (weight w[i] when w is not NULL). Each parser
 * thread fills its own block, so no locking and no final concatenation. */
struct hf__arcs {
    hf_vid_t *u, *v;
    float *w;
    size_t n, cap;
    int weighted;
};

/* malloc for arrays of megabytes: asks for transparent huge pages, because
 * first-touch page faults of 4 KiB pages cost a fifth of a parse on a VM.
 * Free with free(). */
void *hf__big_alloc(size_t n);
void *hf__big_realloc(void *p, size_t n);

/* Grows a block to hold at least one more arc; HF_ENOMEM on failure. */
int hf__arcs_grow(struct hf__arcs *a);
/* Makes room for at least n arcs in total; HF_ENOMEM on failure. */
int hf__arcs_reserve(struct hf__arcs *a, size_t n);
void hf__arcs_free(struct hf__arcs *a);

static inline int hf__arcs_push(struct hf__arcs *a, hf_vid_t u, hf_vid_t v, float w)
{
    if (a->n == a->cap && hf__arcs_grow(a))
        return HF_ENOMEM;
    a->u[a->n] = u;
    a->v[a->n] = v;
    if (a->weighted)
        a->w[a->n] = w;
    a->n++;
    return 0;
}

/* What the CSR builder does to the arcs on the way. */
struct hf__build {
    int symmetrise, drop_self_loops, dedupe;
    int weighted;
    int assume_symmetric; /* the caller knows the result is symmetric: skip the check */
};

/* Builds g's CSR (offsets, adj, weights; nv, ne, counters, symmetric) from
 * `nblocks` blocks of arcs whose ids are all < nv, and frees the blocks.
 * Leaves base, source_desc and vwgt to the caller. Deterministic: the result
 * does not depend on how arcs are spread over blocks or on the thread count. */
int hf__csr_build(struct hf_graph *g, uint64_t nv, struct hf__arcs *blocks, int nblocks,
                  const struct hf__build *b);

/* hf_graph_check without recording a message: the reason goes to msg. */
/* Hands a generator's symmetric, 0-based CSR to g (which then owns the arrays)
 * and names its source from the printf-style description. */
void hf__graph_adopt_generated(struct hf_graph *g, uint64_t nv, uint64_t ne, uint64_t *off,
                               hf_vid_t *adj, float *w, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
int hf__graph_check_msg(const struct hf_graph *g, char *msg, size_t msglen);

/* Whether every arc u->v has a v->u of equal weight (parallel binary searches). */
int hf__csr_is_symmetric(const struct hf_graph *g);

/* splitmix64: the counter-based generator behind every random choice of the
 * generators, so that element i's randomness depends on (seed, i) only. */
static inline uint64_t hf__mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The source file and options a cache was built from. */
struct hf__cache_key {
    uint64_t src_size;
    int64_t src_mtime_ns;
    uint32_t format; /* enum hf__format */
    uint32_t opts;   /* bit 0 symmetrise, 1 drop_self_loops, 2 dedupe */
};

enum hf__format {
    HF__FMT_AUTO,
    HF__FMT_METIS,
    HF__FMT_MTX,
    HF__FMT_DIMACS,
    HF__FMT_EDGELIST,
    HF__FMT_BIN
};

/* The format named by `format` ("auto" or NULL: by the extension of `path`),
 * or -1 for an unknown name. */
int hf__format_resolve(const char *format, const char *path);
/* Its name as hf_graph_opts.format spells it. */
const char *hf__format_name(int fmt);

/* Writes g with the cache key; returns 0 or an HF_E* code without recording
 * a message (a failed cache write must not mask the caller's errors). */
int hf__bin_write(const struct hf_graph *g, const char *path, const struct hf__cache_key *key,
                  char *msg, size_t msglen);
/* Reads a .hfg; when `want` is not NULL the file must carry exactly that key
 * (HF_ENOENT otherwise). Returns 0 or an HF_E* code with the reason in msg,
 * recording nothing. */
int hf__bin_read(struct hf_graph *g, const char *path, const struct hf__cache_key *want, char *msg,
                 size_t msglen);

#endif
