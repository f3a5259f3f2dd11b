/* graph_tok.h - what the text parsers share (graph_tok.c): a tokenizer that never reads
 * past the end of the buffer, and the chunks a body is cut into so that
 * threads parse it in parallel. Internal to apps/graph/. */
#ifndef HF_GRAPH_TOK_H
#define HF_GRAPH_TOK_H

#include <float.h>
#include <math.h>
#include <string.h>

#include "graph_internal.h"

/* ---- tokenizer --------------------------------------------------------------- */
/* Every function takes the current position p and the end e of the buffer;
 * fields are separated by spaces, tabs or '\r' (CRLF files), lines by '\n'. */

enum { HF__TOK_OK, HF__TOK_GARBAGE, HF__TOK_OVERFLOW, HF__TOK_NEGATIVE, HF__TOK_NONFINITE };

static inline int hf__is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static inline const char *hf__skip_blank(const char *p, const char *e)
{
    while (p < e && hf__is_blank(*p))
        p++;
    return p;
}

static inline int hf__at_eol(const char *p, const char *e)
{
    return p == e || *p == '\n';
}

/* Whether a token may end here: a number glued to letters is garbage. */
static inline int hf__is_delim(const char *p, const char *e)
{
    return p == e || hf__is_blank(*p) || *p == '\n';
}

static inline int hf__is_digit(char c)
{
    return (unsigned char)c - 48u <= 9u;
}

/* An unsigned decimal integer. On HF__TOK_OVERFLOW the whole token has been
 * consumed; on HF__TOK_GARBAGE nothing has. */
static inline int hf__parse_u64(const char **pp, const char *e, uint64_t *out)
{
    const char *p = *pp;
    if (p == e || !hf__is_digit(*p))
        return HF__TOK_GARBAGE;
    uint64_t x = 0;
    int ovf = 0;
    do {
        unsigned d = (unsigned char)*p - 48u;
        if (x > (UINT64_MAX - d) / 10)
            ovf = 1;
        else
            x = x * 10 + d;
        p++;
    } while (p < e && hf__is_digit(*p));
    if (!hf__is_delim(p, e))
        return HF__TOK_GARBAGE;
    *pp = p;
    *out = x;
    return ovf ? HF__TOK_OVERFLOW : HF__TOK_OK;
}

/* A weight: [+-]digits[.digits][(e|E)[+-]digits], or .digits. Exact powers
 * of ten up to 1e22 make the common cases ("3", "0.25", "1e3") correctly
 * rounded doubles; longer mantissas or exponents go through pow(), which is
 * close enough for weights. Negative, NaN, infinite and float-overflowing
 * values are refused with their own codes so that messages can say which. */
int hf__parse_weight(const char **pp, const char *e, float *out);

/* Copies the token at p into buf for a message: at most n - 4 bytes, with
 * non-printable bytes shown as '?', "..." when cut; "end of line" if none. */
const char *hf__tok(const char *p, const char *e, char *buf, size_t n);

/* ---- chunks ------------------------------------------------------------------ */

/* A run of whole lines parsed by one thread into its own block of arcs. The
 * first error of a chunk stops it; the chunk with the lowest error offset is
 * the one reported, so the message does not depend on the thread count. */
struct hf__chunk {
    const char *b, *e;
    struct hf__arcs arcs;
    uint64_t first; /* METIS: index of the chunk's first vertex line */
    uint64_t count; /* METIS pass 1: vertex lines; otherwise: entries parsed */
    uint64_t maxid; /* edge list: the largest id seen */
    size_t err_off; /* SIZE_MAX: no error */
    char err[224];
};

/* One text file being parsed. */
struct hf__text {
    const char *name; /* for messages */
    const char *data; /* the whole buffer, for offsets and line numbers */
    size_t len;
    const struct hf_graph_opts *o;
    uint64_t max_nv;
    int nchunks;
    struct hf__chunk *ch;
};

/* Fails with HF_ECONFIG and "name:line: message", the line being the one that
 * holds byte `at` (counted now: the fast path does not track lines). */
int hf__text_fail(const struct hf__text *t, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records a chunk's first error (later ones are consequences). */
void hf__chunk_fail(struct hf__chunk *c, const char *at, const struct hf__text *t, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));

/* Records a tokenizer failure of a field named `what` at p. */
void hf__chunk_tokfail(struct hf__chunk *c, const struct hf__text *t, const char *p, int tok,
                       const char *what);

/* Tests and the fuzzer set this to force a number of chunks on small inputs,
 * so that chunk boundaries are exercised without megabytes of input; 0 (the
 * default) lets the parser choose. */
extern int hf__text_chunks;

/* Cuts [body, end of data) into chunks of whole lines, one per thread (one
 * for small inputs, where threads cost more than they save). */
int hf__text_split(struct hf__text *t, const char *body, int weighted);

/* Reports the earliest chunk error, if any (HF_ECONFIG), else 0. */
int hf__text_chunk_error(const struct hf__text *t);

/* Hands every chunk's arcs to the CSR builder with the loader options. */
int hf__text_build(struct hf__text *t, struct hf_graph *g, uint64_t nv, int weighted,
                   int assume_symmetric);

void hf__text_free(struct hf__text *t);

/* The start of the line after the one holding p (or e). */
static inline const char *hf__next_line(const char *p, const char *e)
{
    const char *nl = p < e ? memchr(p, '\n', (size_t)(e - p)) : NULL;
    return nl ? nl + 1 : e;
}

/* Field helpers shared by the parsers; each fails the chunk and returns
 * non-zero (NULL) on a bad field. */
/* The line [ls, le) is longer than HF_GRAPH_MAX_LINE. */
int hf__line_too_long(struct hf__chunk *c, const struct hf__text *t, const char *ls,
                      const char *le);
/* Steps over a line the parser skips (blank or comment) that starts at ls (q:
 * its first non-blank byte): *next gets the start of the following line.
 * Returns 1 when the line is longer than allowed (the chunk's error is set),
 * else 0. */
static inline int hf__skip_line(struct hf__chunk *c, const struct hf__text *t, const char *ls,
                                const char *q, const char *e, const char **next)
{
    const char *nx = hf__next_line(q, e);
    if (hf__line_too_long(c, t, ls, nx > ls && nx[-1] == '\n' ? nx - 1 : nx))
        return 1;
    *next = nx;
    return 0;
}
/* Reports a bad id: tok from the tokenizer, else x out of range. */
void hf__id_fail(struct hf__chunk *c, const struct hf__text *t, const char *p, int tok, uint64_t x,
                 int base, uint64_t limit, const char *what);

/* A vertex id: < limit when base is 0, in 1..limit when base is 1; stored
 * 0-based. Inline because it runs twice per arc; the error path is not. */
static inline int hf__parse_id(struct hf__chunk *c, const struct hf__text *t, const char **pp,
                               const char *e, int base, uint64_t limit, const char *what,
                               hf_vid_t *id)
{
    const char *p = *pp;
    uint64_t x = 0;
    int r = hf__parse_u64(pp, e, &x);
    if (__builtin_expect(r != 0 || x < (uint64_t)base || x - (uint64_t)base >= limit, 0)) {
        hf__id_fail(c, t, p, r, x, base, limit, what);
        return 1;
    }
    *id = (hf_vid_t)(x - (uint64_t)base);
    return 0;
}
/* A weight field named `what` in messages. */
int hf__parse_w(struct hf__chunk *c, const struct hf__text *t, const char **pp, const char *e,
                const char *what, float *w);
/* Only blanks may remain on the line; returns the line's end ('\n' or e). */
const char *hf__line_end(struct hf__chunk *c, const struct hf__text *t, const char *p,
                         const char *e, const char *expected);

/* Per-format parsers (graph_text.c, graph_metis.c), called by hf_graph_parse_buffer. */
int hf__parse_edgelist(struct hf__text *t, struct hf_graph *g);
int hf__parse_dimacs(struct hf__text *t, struct hf_graph *g);
int hf__parse_metis(struct hf__text *t, struct hf_graph *g);
int hf__parse_mtx(struct hf__text *t, struct hf_graph *g);

#endif
