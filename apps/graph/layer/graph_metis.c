/* graph_metis.c - the METIS .graph and Matrix Market .mtx parsers.
 *
 * DESIGN
 * ------
 * METIS numbers vertices by line: the i-th non-comment line after the header
 * lists vertex i's neighbours. A thread parsing a chunk from the middle of the
 * file must know which vertex its first line is, so METIS takes two parallel
 * passes: the first counts the vertex lines of every chunk (a memchr walk, at
 * memory speed), a prefix sum gives each chunk its first vertex, the second
 * parses. The first pass also proves the file holds at least n vertex lines
 * before anything of size n is allocated, so a header claiming four billion
 * vertices in a ten-byte file fails as truncated instead of exhausting memory.
 * The header's m counts undirected edges; the body must list 2m arcs.
 *
 * Matrix Market entries are independent lines, parsed like an edge list after
 * the banner and the size line. A symmetric matrix stores one triangle, so
 * each off-diagonal entry is emitted in both directions. A graph is square;
 * a rectangular matrix takes max(rows, cols) vertices (a bipartite view would
 * need two id spaces, which the CSR does not have).
 */
#include <omp.h>
#include <stdio.h>
#include <strings.h>

#include "graph_tok.h"

/* ---- METIS ------------------------------------------------------------------- */

struct metis {
    uint64_t n, m;
    int vsize, vwgt, ewgt; /* the fmt digits */
    const char *hline;
    int32_t *w; /* vertex weights, or NULL */
};

static int is_comment(const char *q, const char *e)
{
    return q < e && *q == '%';
}

/* Pass 1: vertex lines of one chunk. */
static void metis_count(struct hf__chunk *c)
{
    const char *p = c->b, *e = c->e;
    uint64_t n = 0;
    while (p < e) {
        const char *q = hf__skip_blank(p, e);
        n += !is_comment(q, e);
        p = hf__next_line(q, e);
    }
    c->count = n;
}

/* Pass 2: the vertex lines of one chunk. */
static void metis_chunk(struct hf__text *t, struct hf__chunk *c, const struct metis *m)
{
    const char *p = c->b, *e = c->e;
    uint64_t i = c->first;
    while (p < e) {
        const char *ls = p, *q = hf__skip_blank(p, e);
        if (is_comment(q, e)) {
            p = hf__next_line(q, e);
            continue;
        }
        if (i >= m->n) {
            /* Blank lines after the last vertex are tolerated (editors add them). */
            if (!hf__at_eol(q, e)) {
                hf__chunk_fail(c, ls, t, "more vertex lines than the header's n=%llu",
                               (unsigned long long)m->n);
                return;
            }
            p = hf__next_line(q, e);
            continue;
        }
        const char *f = q;
        uint64_t x;
        int r;
        if (m->vsize) { /* vertex sizes matter to METIS's communication volume only */
            if ((r = hf__parse_u64(&q, e, &x))) {
                hf__chunk_tokfail(c, t, f, r, "vertex size");
                return;
            }
            q = hf__skip_blank(q, e);
        }
        if (m->vwgt) {
            f = q;
            if ((r = hf__parse_u64(&q, e, &x))) {
                hf__chunk_tokfail(c, t, f, r, "vertex weight");
                return;
            }
            if (x > INT32_MAX) {
                hf__chunk_fail(c, f, t, "vertex weight %llu does not fit int32",
                               (unsigned long long)x);
                return;
            }
            m->w[i] = (int32_t)x;
            q = hf__skip_blank(q, e);
        }
        while (!hf__at_eol(q, e)) {
            hf_vid_t v;
            float w = 0;
            if (hf__parse_id(c, t, &q, e, 1, m->n, "neighbour id", &v))
                return;
            q = hf__skip_blank(q, e);
            if (m->ewgt && hf__parse_w(c, t, &q, e, "edge weight", &w))
                return;
            q = hf__skip_blank(q, e);
            if (hf__arcs_push(&c->arcs, (hf_vid_t)i, v, w)) {
                hf__chunk_fail(c, ls, t, "out of memory after %zu arcs", c->arcs.n);
                return;
            }
        }
        i++;
        p = q < e ? q + 1 : e;
    }
}

/* The header "n m [fmt [ncon]]" after leading comments; returns the body. */
static int metis_header(const struct hf__text *t, struct metis *m, const char **body)
{
    const char *p = t->data, *e = t->data + t->len, *q;
    char b[48];
    for (;; p = hf__next_line(q, e)) {
        if (p == e)
            return hf__text_fail(t, e, "no header line 'n m [fmt [ncon]]'");
        q = hf__skip_blank(p, e);
        if (!is_comment(q, e) && !hf__at_eol(q, e))
            break;
    }
    m->hline = p;
    const char *nl = hf__next_line(q, e);
    if ((nl > p && nl[-1] == '\n' ? nl - 1 : nl) - p > HF_GRAPH_MAX_LINE)
        return hf__text_fail(t, p, "header line longer than the %d bytes allowed",
                             HF_GRAPH_MAX_LINE);
    uint64_t f[4] = {0, 0, 0, 1};
    const char *fs[4] = {0};
    int nf = 0;
    for (; !hf__at_eol(q, e) && nf < 4; nf++, q = hf__skip_blank(q, e)) {
        static const char *const what[4] = {"vertex count n", "edge count m", "fmt", "ncon"};
        fs[nf] = q;
        int r = hf__parse_u64(&q, e, &f[nf]);
        if (r)
            return hf__text_fail(t, fs[nf], "header: %s '%s' %s", what[nf],
                                 hf__tok(fs[nf], e, b, sizeof b),
                                 r == HF__TOK_OVERFLOW ? "overflows" : "is not a number");
    }
    if (nf < 2 || !hf__at_eol(q, e))
        return hf__text_fail(t, p, "header must be 'n m [fmt [ncon]]'%s",
                             nf < 2 ? "" : " (extra fields)");
    m->n = f[0];
    m->m = f[1];
    if (nf >= 3) {
        /* fmt is up to three 0/1 digits: vertex sizes, vertex weights, edge weights. */
        size_t len = 0;
        while (!hf__is_delim(fs[2] + len, e))
            len++;
        if (len > 3 || f[2] % 10 > 1 || f[2] / 10 % 10 > 1 || f[2] / 100 > 1)
            return hf__text_fail(t, fs[2], "header: fmt '%s' is not up to three 0/1 digits",
                                 hf__tok(fs[2], e, b, sizeof b));
        m->ewgt = f[2] % 10 == 1;
        m->vwgt = f[2] / 10 % 10 == 1;
        m->vsize = f[2] / 100 == 1;
    }
    if (nf == 4 && (!m->vwgt || f[3] != 1))
        return hf__text_fail(t, fs[3],
                             "header: ncon=%llu: only one vertex weight per vertex "
                             "is supported (multi-constraint METIS graphs are not)",
                             (unsigned long long)f[3]);
    if (m->n == 0)
        return hf__text_fail(t, p, "empty graph: the header says n=0");
    if (m->n > t->max_nv)
        return hf__text_fail(t, p, "n=%llu vertices, more than the %llu allowed",
                             (unsigned long long)m->n, (unsigned long long)t->max_nv);
    if (m->m > UINT64_MAX / 2)
        return hf__text_fail(t, p, "header: m=%llu edges overflows", (unsigned long long)m->m);
    *body = nl;
    return 0;
}

int hf__parse_metis(struct hf__text *t, struct hf_graph *g)
{
    struct metis m = {0};
    const char *body = NULL;
    int rc = metis_header(t, &m, &body);
    if (rc || (rc = hf__text_split(t, body, m.ewgt)))
        return rc;
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < t->nchunks; i++)
        metis_count(&t->ch[i]);
    uint64_t lines = 0;
    for (int i = 0; i < t->nchunks; i++) {
        t->ch[i].first = lines;
        lines += t->ch[i].count;
    }
    if (lines < m.n)
        return hf__text_fail(t, t->data + t->len,
                             "file ends after %llu vertex lines but the header says n=%llu",
                             (unsigned long long)lines, (unsigned long long)m.n);
    if (m.vwgt && !(g->vwgt = m.w = calloc(m.n, sizeof *m.w)))
        return hf_fail(HF_ENOMEM, "%s: out of memory for %llu vertex weights", t->name,
                       (unsigned long long)m.n);
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < t->nchunks; i++)
        metis_chunk(t, &t->ch[i], &m);
    if ((rc = hf__text_chunk_error(t)))
        return rc;
    uint64_t arcs = 0;
    for (int i = 0; i < t->nchunks; i++)
        arcs += t->ch[i].arcs.n;
    if (arcs != 2 * m.m)
        return hf__text_fail(t, m.hline,
                             "the header says m=%llu edges (%llu arcs) but the body lists %llu "
                             "arcs",
                             (unsigned long long)m.m, (unsigned long long)(2 * m.m),
                             (unsigned long long)arcs);
    g->base = 1;
    return hf__text_build(t, g, m.n, m.ewgt, 0);
}

/* ---- Matrix Market ----------------------------------------------------------- */

struct mtx {
    uint64_t rows, cols, nnz;
    int weighted, symmetric;
    const char *sline;
};

static void mtx_chunk(struct hf__text *t, struct hf__chunk *c, const struct mtx *m)
{
    const char *p = c->b, *e = c->e;
    while (p < e) {
        const char *ls = p, *q = hf__skip_blank(p, e);
        if (hf__at_eol(q, e) || *q == '%') {
            if (hf__skip_line(c, t, ls, q, e, &p))
                return;
            continue;
        }
        hf_vid_t u, v;
        float w = 0;
        if (hf__parse_id(c, t, &q, e, 1, m->rows, "row index", &u))
            return;
        q = hf__skip_blank(q, e);
        if (hf__parse_id(c, t, &q, e, 1, m->cols, "column index", &v))
            return;
        q = hf__skip_blank(q, e);
        if (m->weighted && hf__parse_w(c, t, &q, e, "value", &w))
            return;
        if (!(q = hf__line_end(c, t, q, e, m->weighted ? "i j value" : "i j")) ||
            hf__line_too_long(c, t, ls, q))
            return;
        if (hf__arcs_push(&c->arcs, u, v, w) ||
            (m->symmetric && u != v && hf__arcs_push(&c->arcs, v, u, w))) {
            hf__chunk_fail(c, ls, t, "out of memory after %zu arcs", c->arcs.n);
            return;
        }
        c->count++;
        p = q < e ? q + 1 : e;
    }
}

/* Whether the token at p is `word`, ignoring case. */
static int tok_is(const char *p, const char *e, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(e - p) >= n && strncasecmp(p, word, n) == 0 && hf__is_delim(p + n, e);
}

/* Moves p past the token it points to and the blanks after it. */
static const char *next_tok(const char *p, const char *e)
{
    while (!hf__is_delim(p, e))
        p++;
    return hf__skip_blank(p, e);
}

/* The banner "%%MatrixMarket matrix coordinate FIELD SYMMETRY". */
static int mtx_banner(const struct hf__text *t, struct mtx *m, const char **after)
{
    const char *p = t->data, *e = t->data + t->len, *q;
    char b[48];
    const char *nl = hf__next_line(p, e);
    if ((nl > p && nl[-1] == '\n' ? nl - 1 : nl) - p > HF_GRAPH_MAX_LINE)
        return hf__text_fail(t, p, "banner longer than the %d bytes allowed", HF_GRAPH_MAX_LINE);
    if (!tok_is(p, e, "%%MatrixMarket"))
        return hf__text_fail(t, p,
                             "expected the banner '%%%%MatrixMarket matrix coordinate "
                             "pattern|integer|real general|symmetric', found '%s'",
                             hf__tok(p, e, b, sizeof b));
    q = next_tok(p, e);
    if (!tok_is(q, e, "matrix"))
        return hf__text_fail(t, q, "banner: object '%s' is not 'matrix'",
                             hf__tok(q, e, b, sizeof b));
    q = next_tok(q, e);
    if (!tok_is(q, e, "coordinate"))
        return hf__text_fail(t, q,
                             "banner: format '%s' is not 'coordinate' (a dense 'array' "
                             "matrix is not a graph)",
                             hf__tok(q, e, b, sizeof b));
    q = next_tok(q, e);
    if (tok_is(q, e, "pattern"))
        m->weighted = 0;
    else if (tok_is(q, e, "integer") || tok_is(q, e, "real"))
        m->weighted = 1;
    else
        return hf__text_fail(t, q,
                             "banner: field '%s' not supported (pattern, integer or real; "
                             "complex weights have no order)",
                             hf__tok(q, e, b, sizeof b));
    q = next_tok(q, e);
    if (tok_is(q, e, "general"))
        m->symmetric = 0;
    else if (tok_is(q, e, "symmetric"))
        m->symmetric = 1;
    else
        return hf__text_fail(t, q,
                             "banner: symmetry '%s' not supported (general or symmetric; "
                             "skew-symmetric and hermitian need negative or complex "
                             "weights)",
                             hf__tok(q, e, b, sizeof b));
    q = next_tok(q, e);
    if (!hf__at_eol(q, e))
        return hf__text_fail(t, q, "banner: extra field '%s'", hf__tok(q, e, b, sizeof b));
    *after = nl;
    return 0;
}

/* The size line "rows cols nnz" after the banner and comments. */
static int mtx_size(const struct hf__text *t, struct mtx *m, const char *p, const char **body)
{
    const char *e = t->data + t->len, *q;
    char b[48];
    for (;; p = hf__next_line(q, e)) {
        if (p == e)
            return hf__text_fail(t, e, "no size line 'rows cols nnz'");
        q = hf__skip_blank(p, e);
        if (!hf__at_eol(q, e) && *q != '%')
            break;
    }
    m->sline = p;
    const char *nl = hf__next_line(q, e);
    if ((nl > p && nl[-1] == '\n' ? nl - 1 : nl) - p > HF_GRAPH_MAX_LINE)
        return hf__text_fail(t, p, "size line longer than the %d bytes allowed", HF_GRAPH_MAX_LINE);
    static const char *const what[3] = {"rows", "cols", "nnz"};
    uint64_t f[3];
    for (int i = 0; i < 3; i++) {
        const char *s = q;
        int r = hf__parse_u64(&q, e, &f[i]);
        if (r)
            return hf__text_fail(t, s, "size line: %s '%s' %s", what[i], hf__tok(s, e, b, sizeof b),
                                 r == HF__TOK_OVERFLOW ? "overflows" : "is not a number");
        q = hf__skip_blank(q, e);
    }
    if (!hf__at_eol(q, e))
        return hf__text_fail(t, q, "size line: extra field '%s' (expected rows cols nnz)",
                             hf__tok(q, e, b, sizeof b));
    m->rows = f[0], m->cols = f[1], m->nnz = f[2];
    uint64_t nv = m->rows > m->cols ? m->rows : m->cols;
    if (m->rows == 0 || m->cols == 0)
        return hf__text_fail(t, p, "empty graph: %llu x %llu matrix", (unsigned long long)m->rows,
                             (unsigned long long)m->cols);
    if (nv > t->max_nv)
        return hf__text_fail(t, p, "%llu vertices, more than the %llu allowed",
                             (unsigned long long)nv, (unsigned long long)t->max_nv);
    *body = nl;
    return 0;
}

int hf__parse_mtx(struct hf__text *t, struct hf_graph *g)
{
    struct mtx m = {0};
    const char *p = NULL, *body = NULL;
    int rc = mtx_banner(t, &m, &p);
    if (rc || (rc = mtx_size(t, &m, p, &body)) || (rc = hf__text_split(t, body, m.weighted)))
        return rc;
#pragma omp parallel for schedule(static, 1)
    for (int i = 0; i < t->nchunks; i++)
        mtx_chunk(t, &t->ch[i], &m);
    if ((rc = hf__text_chunk_error(t)))
        return rc;
    uint64_t entries = 0;
    for (int i = 0; i < t->nchunks; i++)
        entries += t->ch[i].count;
    if (entries != m.nnz)
        return hf__text_fail(t, m.sline,
                             "the size line says nnz=%llu but the file has %llu "
                             "entries%s",
                             (unsigned long long)m.nnz, (unsigned long long)entries,
                             entries < m.nnz ? " (truncated?)" : "");
    g->base = 1;
    return hf__text_build(t, g, m.rows > m.cols ? m.rows : m.cols, m.weighted, 0);
}
