/* graph_text.c - parsing text graph formats from memory: the tokenizer, the
 * parallel chunk machinery, the edge-list and DIMACS parsers, and
 * hf_graph_parse_buffer, the entry point every text loader goes through.
 *
 * DESIGN
 * ------
 * A 100M-edge text file is 1-2 GB, so parsing must run at memory speed. The
 * file is mapped (graph_load.c) and parsed in place: no copies, no sscanf,
 * no NUL terminator (the fuzzer hands us raw bytes). Every read is bounded by
 * an explicit end pointer, which is what makes "never read out of bounds" a
 * property of the tokenizer instead of a hope about the input.
 *
 * Headers (METIS's first line, Matrix Market's banner and size line, DIMACS's
 * problem line, an edge list's field count) are parsed serially; the body is
 * then cut at newlines into one chunk per thread, and each thread parses its
 * chunk into its own block of arcs, which the CSR builder takes as they are.
 * Lines are not counted on the fast path: an error records its byte offset,
 * and the line number is computed only when the message is written, by
 * counting newlines up to that offset. The earliest error wins, so the
 * message is the same whatever the thread count.
 */
#include <omp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph_text.h"

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

/* ---- SNAP edge list ---------------------------------------------------------- */

static void edgelist_chunk(struct hf__text *t, struct hf__chunk *c, int weighted)
{
    const char *p = c->b, *e = c->e;
    const char *expected = weighted ? "u v w" : "u v";
    uint64_t limit = t->max_nv < HF_GRAPH_MAX_NV ? t->max_nv : HF_GRAPH_MAX_NV;
    while (p < e) {
        const char *ls = p, *q = hf__skip_blank(p, e);
        if (hf__at_eol(q, e) || *q == '#' || *q == '%') {
            if (hf__skip_line(c, t, ls, q, e, &p))
                return;
            continue;
        }
        hf_vid_t u, v;
        float w = 0;
        if (hf__parse_id(c, t, &q, e, 0, limit, "source vertex id", &u))
            return;
        q = hf__skip_blank(q, e);
        if (hf__parse_id(c, t, &q, e, 0, limit, "target vertex id", &v))
            return;
        q = hf__skip_blank(q, e);
        if (weighted && hf__parse_w(c, t, &q, e, "weight", &w))
            return;
        if (!(q = hf__line_end(c, t, q, e, expected)) || hf__line_too_long(c, t, ls, q))
            return;
        if (hf__arcs_push(&c->arcs, u, v, w)) {
            hf__chunk_fail(c, ls, t, "out of memory after %zu arcs", c->arcs.n);
            return;
        }
        if (u > c->maxid)
            c->maxid = u;
        if (v > c->maxid)
            c->maxid = v;
        p = q < e ? q + 1 : e;
    }
}

/* Whether the first data line has 2 or 3 fields decides weights for all. */
static int edgelist_fields(const struct hf__text *t, int *weighted, const char **first)
{
    const char *p = t->data, *e = t->data + t->len;
    while (p < e) {
        const char *q = hf__skip_blank(p, e);
        if (hf__at_eol(q, e) || *q == '#' || *q == '%') {
            p = hf__next_line(q, e);
            continue;
        }
        int nf = 0;
        while (!hf__at_eol(q, e) && q - p <= HF_GRAPH_MAX_LINE) {
            nf++;
            while (!hf__at_eol(q, e) && !hf__is_blank(*q))
                q++;
            q = hf__skip_blank(q, e);
        }
        if (nf != 2 && nf != 3)
            return hf__text_fail(t, p, "expected 2 or 3 fields (u v [w]), found %d%s", nf,
                                 nf > 3 ? " or more" : "");
        *weighted = nf == 3;
        *first = p;
        return 0;
    }
    return hf__text_fail(t, e, "empty graph: no edges (an edge list has no vertex count)");
}

int hf__parse_edgelist(struct hf__text *t, struct hf_graph *g)
{
    int weighted = 0;
    const char *first = NULL;
    int rc = edgelist_fields(t, &weighted, &first);
    if (rc || (rc = hf__text_split(t, t->data, weighted)))
        return rc;
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < t->nchunks; i++)
        edgelist_chunk(t, &t->ch[i], weighted);
    if ((rc = hf__text_chunk_error(t)))
        return rc;
    uint64_t maxid = 0, arcs = 0;
    for (int i = 0; i < t->nchunks; i++) {
        arcs += t->ch[i].arcs.n;
        if (t->ch[i].maxid > maxid)
            maxid = t->ch[i].maxid;
    }
    if (arcs == 0) /* every line after the first data line is a comment: cannot happen */
        return hf__text_fail(t, first, "empty graph: no edges");
    g->base = 0;
    return hf__text_build(t, g, maxid + 1, weighted, 0);
}

/* ---- DIMACS 9th challenge .gr ------------------------------------------------ */

struct dimacs {
    uint64_t n, m;
    const char *pline;
};

static void dimacs_chunk(struct hf__text *t, struct hf__chunk *c, const struct dimacs *d)
{
    const char *p = c->b, *e = c->e;
    while (p < e) {
        const char *ls = p, *q = hf__skip_blank(p, e);
        if (hf__at_eol(q, e) || (*q == 'c' && hf__is_delim(q + 1, e))) {
            if (hf__skip_line(c, t, ls, q, e, &p))
                return;
            continue;
        }
        char b[48];
        if (*q == 'p' && hf__is_delim(q + 1, e)) {
            hf__chunk_fail(c, q, t, "a second problem line");
            return;
        }
        if (*q != 'a' || !hf__is_delim(q + 1, e)) {
            hf__chunk_fail(c, q, t, "unknown line type '%s' (expected c, p or a)",
                           hf__tok(q, e, b, sizeof b));
            return;
        }
        hf_vid_t u, v;
        float w;
        q = hf__skip_blank(q + 1, e);
        if (hf__parse_id(c, t, &q, e, 1, d->n, "tail vertex id", &u))
            return;
        q = hf__skip_blank(q, e);
        if (hf__parse_id(c, t, &q, e, 1, d->n, "head vertex id", &v))
            return;
        q = hf__skip_blank(q, e);
        if (hf__parse_w(c, t, &q, e, "arc weight", &w))
            return;
        if (!(q = hf__line_end(c, t, q, e, "a u v w")) || hf__line_too_long(c, t, ls, q))
            return;
        if (hf__arcs_push(&c->arcs, u, v, w)) {
            hf__chunk_fail(c, ls, t, "out of memory after %zu arcs", c->arcs.n);
            return;
        }
        p = q < e ? q + 1 : e;
    }
}

/* The problem line "p sp n m", after comments; returns the body's start. */
static int dimacs_header(const struct hf__text *t, struct dimacs *d, const char **body)
{
    const char *p = t->data, *e = t->data + t->len;
    char b[48];
    while (p < e) {
        const char *q = hf__skip_blank(p, e);
        const char *nx = hf__next_line(q, e);
        if ((nx > p && nx[-1] == '\n' ? nx - 1 : nx) - p > HF_GRAPH_MAX_LINE)
            return hf__text_fail(t, p, "line longer than the %d bytes allowed", HF_GRAPH_MAX_LINE);
        if (hf__at_eol(q, e) || (*q == 'c' && hf__is_delim(q + 1, e))) {
            p = nx;
            continue;
        }
        if (*q != 'p' || !hf__is_delim(q + 1, e))
            return hf__text_fail(t, q, "expected the problem line 'p sp n m', found '%s'",
                                 hf__tok(q, e, b, sizeof b));
        d->pline = q;
        q = hf__skip_blank(q + 1, e);
        if (e - q < 2 || q[0] != 's' || q[1] != 'p' || !hf__is_delim(q + 2, e))
            return hf__text_fail(t, q, "problem type '%s', expected 'sp'",
                                 hf__tok(q, e, b, sizeof b));
        q = hf__skip_blank(q + 2, e);
        const char *f = q;
        int r = hf__parse_u64(&q, e, &d->n);
        if (r)
            return hf__text_fail(t, f, "problem line: vertex count '%s' %s",
                                 hf__tok(f, e, b, sizeof b),
                                 r == HF__TOK_OVERFLOW ? "overflows" : "is not a number");
        q = hf__skip_blank(q, e);
        f = q;
        if ((r = hf__parse_u64(&q, e, &d->m)))
            return hf__text_fail(t, f, "problem line: arc count '%s' %s",
                                 hf__tok(f, e, b, sizeof b),
                                 r == HF__TOK_OVERFLOW ? "overflows" : "is not a number");
        q = hf__skip_blank(q, e);
        if (!hf__at_eol(q, e))
            return hf__text_fail(t, q, "problem line: extra field '%s' (expected p sp n m)",
                                 hf__tok(q, e, b, sizeof b));
        if (d->n == 0)
            return hf__text_fail(t, d->pline, "empty graph: the problem line says n=0");
        if (d->n > t->max_nv)
            return hf__text_fail(t, d->pline, "n=%llu vertices, more than the %llu allowed",
                                 (unsigned long long)d->n, (unsigned long long)t->max_nv);
        *body = nx;
        return 0;
    }
    return hf__text_fail(t, e, "no problem line 'p sp n m'");
}

int hf__parse_dimacs(struct hf__text *t, struct hf_graph *g)
{
    struct dimacs d;
    const char *body = NULL;
    int rc = dimacs_header(t, &d, &body);
    if (rc || (rc = hf__text_split(t, body, 1)))
        return rc;
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < t->nchunks; i++)
        dimacs_chunk(t, &t->ch[i], &d);
    if ((rc = hf__text_chunk_error(t)))
        return rc;
    uint64_t arcs = 0;
    for (int i = 0; i < t->nchunks; i++)
        arcs += t->ch[i].arcs.n;
    if (arcs != d.m)
        return hf__text_fail(
            t, d.pline, "the problem line says m=%llu arcs but the file has %llu%s",
            (unsigned long long)d.m, (unsigned long long)arcs, arcs < d.m ? " (truncated?)" : "");
    g->base = 1;
    return hf__text_build(t, g, d.n, 1, 0);
}

/* ---- the entry point --------------------------------------------------------- */

static const char *const format_names[] = {"auto", "metis", "mtx", "dimacs", "edgelist", "bin"};

const char *hf__format_name(int fmt)
{
    return fmt >= 0 && fmt <= HF__FMT_BIN ? format_names[fmt] : "?";
}

int hf__format_resolve(const char *format, const char *path)
{
    if (format && strcmp(format, "auto") != 0) {
        for (int i = 1; i <= HF__FMT_BIN; i++)
            if (strcmp(format, format_names[i]) == 0)
                return i;
        return -1;
    }
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        return HF__FMT_EDGELIST;
    if (strcmp(dot, ".graph") == 0)
        return HF__FMT_METIS;
    if (strcmp(dot, ".mtx") == 0)
        return HF__FMT_MTX;
    if (strcmp(dot, ".gr") == 0)
        return HF__FMT_DIMACS;
    if (strcmp(dot, ".hfg") == 0)
        return HF__FMT_BIN;
    return HF__FMT_EDGELIST;
}

int hf_graph_parse_buffer(struct hf_graph *g, const char *name, const void *data, size_t len,
                          const struct hf_graph_opts *o)
{
    static const struct hf_graph_opts defaults = {0};
    memset(g, 0, sizeof *g);
    if (!o)
        o = &defaults;
    int fmt = hf__format_resolve(o->format, name);
    if (fmt < 0)
        return hf_fail(HF_EINVAL,
                       "%s: unknown graph format '%s' (auto, metis, mtx, dimacs, "
                       "edgelist or bin)",
                       name, o->format);
    if (fmt == HF__FMT_BIN)
        return hf_fail(HF_EINVAL, "%s: .hfg is binary; read it with hf_graph_read_bin", name);
    struct hf__text t = {.name = name,
                         .data = data,
                         .len = len,
                         .o = o,
                         .max_nv = o->max_nv && o->max_nv < HF_GRAPH_MAX_NV ? o->max_nv
                                                                            : HF_GRAPH_MAX_NV};
    int rc;
    if (len == 0)
        rc = hf__text_fail(&t, t.data, "empty file: no graph");
    else if (fmt == HF__FMT_METIS)
        rc = hf__parse_metis(&t, g);
    else if (fmt == HF__FMT_MTX)
        rc = hf__parse_mtx(&t, g);
    else if (fmt == HF__FMT_DIMACS)
        rc = hf__parse_dimacs(&t, g);
    else
        rc = hf__parse_edgelist(&t, g);
    hf__text_free(&t);
    if (rc) {
        hf_graph_free(g);
        return rc;
    }
    snprintf(g->source_desc, sizeof g->source_desc, "%s:%s", format_names[fmt], name);
    return 0;
}
