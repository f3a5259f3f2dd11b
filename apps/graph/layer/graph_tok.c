/* graph_tok.c - what every text graph parser shares (graph_text.c: edge
 * list, DIMACS; graph_metis.c: METIS, Matrix Market): the tokenizer, the
 * parallel chunk machinery and the error messages.
 *
 * DESIGN
 * ------
 * The design is simple: every read is bounded by an explicit end pointer, so
 * "never read out of bounds" is a property of these functions rather than of
 * each parser; a body is cut at newlines into one chunk per thread, each
 * parsed into its own block of arcs; an error records its byte offset and the
 * line number is counted only when the message is written, the earliest
 * error winning (graph_text.c says why). The parsers call this file; it calls
 * none of them.
 */
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph_tok.h"

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

int hf__parse_weight(const char **pp, const char *e, float *out)
{
    const char *p = *pp;
    int neg = 0, any = 0;
    if (p < e && (*p == '+' || *p == '-'))
        neg = *p++ == '-';
    uint64_t mant = 0;
    int64_t exp10 = 0;
    /* Digits beyond 19 cannot change a float; they only scale the value. */
    for (; p < e && hf__is_digit(*p); p++, any = 1)
        if (mant <= (UINT64_MAX - 9) / 10)
            mant = mant * 10 + (uint64_t)(*p - '0');
        else
            exp10++;
    if (p < e && *p == '.')
        for (p++; p < e && hf__is_digit(*p); p++, any = 1)
            if (mant <= (UINT64_MAX - 9) / 10)
                mant = mant * 10 + (uint64_t)(*p - '0'), exp10--;
    if (!any) {
        /* "nan", "inf", "Infinity": a float printer wrote them, say so. */
        if (p < e && (*p == 'n' || *p == 'N' || *p == 'i' || *p == 'I'))
            return HF__TOK_NONFINITE;
        return HF__TOK_GARBAGE;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0;
        if (p < e && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        if (p == e || !hf__is_digit(*p))
            return HF__TOK_GARBAGE;
        int64_t x = 0;
        for (; p < e && hf__is_digit(*p); p++)
            if (x < 100000)
                x = x * 10 + (*p - '0');
        exp10 += eneg ? -x : x;
    }
    if (!hf__is_delim(p, e))
        return HF__TOK_GARBAGE;
    double v;
    if (mant == 0)
        v = 0.0;
    else if (mant < (1ull << 53) && exp10 >= -22 && exp10 <= 22)
        v = exp10 >= 0 ? (double)mant * pow10_exact[exp10] : (double)mant / pow10_exact[-exp10];
    else
        v = (double)mant * pow(10.0, (double)(exp10 < -400 ? -400 : exp10 > 400 ? 400 : exp10));
    *pp = p;
    if (neg && v != 0.0)
        return HF__TOK_NEGATIVE;
    if (!(v <= FLT_MAX))
        return HF__TOK_OVERFLOW;
    *out = (float)v;
    return HF__TOK_OK;
}

const char *hf__tok(const char *p, const char *e, char *buf, size_t n)
{
    if (hf__at_eol(p, e))
        return "end of line";
    size_t i = 0;
    for (; p < e && *p != '\n' && !hf__is_blank(*p) && i + 4 < n; p++)
        buf[i++] = (*p >= 0x20 && *p < 0x7f && *p != '\'') ? *p : '?';
    if (p < e && *p != '\n' && !hf__is_blank(*p))
        buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
    buf[i] = 0;
    return buf;
}

int hf__text_fail(const struct hf__text *t, const char *at, const char *fmt, ...)
{
    unsigned long line = 1;
    for (const char *p = t->data, *end = at; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl)
            break;
        line++;
        p = nl + 1;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return hf_fail(HF_ECONFIG, "%s:%lu: %s", t->name, line, msg);
}

void hf__chunk_fail(struct hf__chunk *c, const char *at, const struct hf__text *t, const char *fmt,
                    ...)
{
    if (c->err_off != SIZE_MAX)
        return;
    c->err_off = (size_t)(at - t->data);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
}

void hf__chunk_tokfail(struct hf__chunk *c, const struct hf__text *t, const char *p, int tok,
                       const char *what)
{
    char b[48];
    const char *s = hf__tok(p, t->data + t->len, b, sizeof b);
    switch (tok) {
    case HF__TOK_OVERFLOW:
        hf__chunk_fail(c, p, t, "%s overflows (%s)", what, s);
        break;
    case HF__TOK_NEGATIVE:
        hf__chunk_fail(c, p, t, "%s is negative (%s): weights must be >= 0", what, s);
        break;
    case HF__TOK_NONFINITE:
        hf__chunk_fail(c, p, t, "%s is not a finite number (%s)", what, s);
        break;
    default:
        hf__chunk_fail(c, p, t, "%s: expected a number, found '%s'", what, s);
    }
}

int hf__text_chunks = 0;

int hf__text_split(struct hf__text *t, const char *body, int weighted)
{
    const char *end = t->data + t->len;
    size_t blen = (size_t)(end - body);
    int n = blen < (1u << 20) ? 1 : omp_get_max_threads();
    if (hf__text_chunks > 0)
        n = hf__text_chunks;
    if (n < 1)
        n = 1;
    t->ch = calloc((size_t)n, sizeof *t->ch);
    if (!t->ch)
        return hf_fail(HF_ENOMEM, "%s: out of memory", t->name);
    t->nchunks = n;
    const char *p = body;
    for (int i = 0; i < n; i++) {
        const char *e = i == n - 1 ? end : body + blen / (size_t)n * (size_t)(i + 1);
        if (e < p)
            e = p;
        if (i < n - 1)
            e = hf__next_line(e > p ? e - 1 : e, end);
        t->ch[i].b = p;
        t->ch[i].e = e;
        t->ch[i].err_off = SIZE_MAX;
        t->ch[i].arcs.weighted = weighted;
        /* Most lines hold one arc in 8 bytes or more: reserving that much up
         * front saves the copies of growing by doubling. Best effort. */
        (void)hf__arcs_reserve(&t->ch[i].arcs, (size_t)(e - p) / 8 + 64);
        p = e;
    }
    return 0;
}

int hf__text_chunk_error(const struct hf__text *t)
{
    for (int i = 0; i < t->nchunks; i++)
        if (t->ch[i].err_off != SIZE_MAX)
            return hf__text_fail(t, t->data + t->ch[i].err_off, "%s", t->ch[i].err);
    return 0;
}

int hf__text_build(struct hf__text *t, struct hf_graph *g, uint64_t nv, int weighted,
                   int assume_symmetric)
{
    struct hf__arcs *blocks = malloc((size_t)t->nchunks * sizeof *blocks);
    if (!blocks)
        return hf_fail(HF_ENOMEM, "%s: out of memory", t->name);
    for (int i = 0; i < t->nchunks; i++) {
        blocks[i] = t->ch[i].arcs;
        memset(&t->ch[i].arcs, 0, sizeof t->ch[i].arcs);
    }
    struct hf__build b = {.symmetrise = t->o->symmetrise,
                          .drop_self_loops = t->o->drop_self_loops,
                          .dedupe = t->o->dedupe,
                          .weighted = weighted,
                          .assume_symmetric = assume_symmetric};
    int rc = hf__csr_build(g, nv, blocks, t->nchunks, &b);
    free(blocks);
    return rc;
}

void hf__text_free(struct hf__text *t)
{
    for (int i = 0; i < t->nchunks; i++)
        hf__arcs_free(&t->ch[i].arcs);
    free(t->ch);
    t->ch = NULL;
    t->nchunks = 0;
}

/* Fails the chunk when the line [ls, le) is longer than HF_GRAPH_MAX_LINE. */
int hf__line_too_long(struct hf__chunk *c, const struct hf__text *t, const char *ls, const char *le)
{
    if (le - ls <= HF_GRAPH_MAX_LINE)
        return 0;
    hf__chunk_fail(c, ls, t, "line of %zu bytes, longer than the %d allowed", (size_t)(le - ls),
                   HF_GRAPH_MAX_LINE);
    return 1;
}

void hf__id_fail(struct hf__chunk *c, const struct hf__text *t, const char *p, int tok, uint64_t x,
                 int base, uint64_t limit, const char *what)
{
    if (tok)
        hf__chunk_tokfail(c, t, p, tok, what);
    else if (base)
        hf__chunk_fail(c, p, t, "%s %llu out of range 1..%llu", what, (unsigned long long)x,
                       (unsigned long long)limit);
    else
        hf__chunk_fail(c, p, t, "%s %llu too large: at most %llu vertices allowed", what,
                       (unsigned long long)x, (unsigned long long)limit);
}

/* Parses a weight field, failing the chunk with `what` in the message. */
int hf__parse_w(struct hf__chunk *c, const struct hf__text *t, const char **pp, const char *e,
                const char *what, float *w)
{
    const char *p = *pp;
    if (hf__at_eol(p, e)) {
        hf__chunk_fail(c, p, t, "%s missing", what);
        return 1;
    }
    int r = hf__parse_weight(pp, e, w);
    if (r)
        hf__chunk_tokfail(c, t, p, r, what);
    return r != 0;
}

/* Fails the chunk unless only blanks remain on the line; returns the line end. */
const char *hf__line_end(struct hf__chunk *c, const struct hf__text *t, const char *p,
                         const char *e, const char *expected)
{
    p = hf__skip_blank(p, e);
    if (!hf__at_eol(p, e)) {
        char b[48];
        hf__chunk_fail(c, p, t, "extra field '%s' (expected %s)", hf__tok(p, e, b, sizeof b),
                       expected);
        return NULL;
    }
    return p;
}
