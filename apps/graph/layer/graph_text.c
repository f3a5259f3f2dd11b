/* graph_text.c - parsing text graph formats from memory: the edge-list and
 * DIMACS parsers, and hf_graph_parse_buffer, the entry point every text
 * loader goes through. METIS and Matrix Market are graph_metis.c; the
 * tokenizer and the parallel chunk machinery every parser shares are
 * graph_tok.c, which calls no parser.
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
#include <stdio.h>
#include <string.h>

#include "graph_tok.h"

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
