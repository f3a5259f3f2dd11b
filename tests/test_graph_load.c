/* test_graph_load.c - the graph layer (apps/graph/): every text format against
 * hand-computed CSRs, the real METIS file 4elt.graph, the loader options and
 * their counters, the .hfg cache (written, reused, rebuilt when stale or
 * corrupt), the generators (deterministic for a seed and a thread count), and
 * a table of bad inputs whose messages must name the file and the line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_files.h"

#include "graph/layer/graph.h"

#define ELT4 HF_TEST_4ELT

extern int hf__text_chunks; /* graph_tok.h: forces the number of parallel chunks */

static char dir[256];
static const struct hf_graph_opts no_cache = {.cache_dir = ""};

/* Parses text as `name` (its extension picks the format) with options o. */
static int parse(struct hf_graph *g, const char *name, const char *text,
                 const struct hf_graph_opts *o)
{
    hf_clear_error();
    return hf_graph_parse_buffer(g, name, text, strlen(text), o ? o : &no_cache);
}

/* Compares g's CSR with the expected arrays (weights may be NULL). */
static void expect_csr(const struct hf_graph *g, uint64_t nv, const uint64_t *off,
                       const hf_vid_t *adj, const float *w)
{
    assert_int_equal(g->nv, nv);
    assert_int_equal(g->ne, off[nv]);
    for (uint64_t i = 0; i <= nv; i++)
        assert_int_equal(g->offsets[i], off[i]);
    for (uint64_t i = 0; i < off[nv]; i++)
        assert_int_equal(g->adj[i], adj[i]);
    if (!w) {
        assert_null(g->weights);
        return;
    }
    assert_non_null(g->weights);
    for (uint64_t i = 0; i < off[nv]; i++)
        assert_true(g->weights[i] == w[i]);
    assert_int_equal(hf_graph_check(g), 0);
}

static void path_in_dir(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

/* ---- formats ----------------------------------------------------------------- */

static void metis_small(void **state)
{
    (void)state;
    struct hf_graph g;
    const char *text = "% a comment\n4 4 001\n2 5 3 1\n1 5 4 7\n%inside\n1 1 4 2\n3 2 2 7\n";
    assert_int_equal(parse(&g, "x.graph", text, NULL), 0);
    const uint64_t off[] = {0, 2, 4, 6, 8};
    const hf_vid_t adj[] = {1, 2, 0, 3, 0, 3, 1, 2};
    const float w[] = {5, 1, 5, 7, 1, 2, 7, 2};
    expect_csr(&g, 4, off, adj, w);
    assert_int_equal(g.base, 1);
    assert_int_equal(g.symmetric, 1);
    assert_null(g.vwgt);
    assert_string_equal(g.source_desc, "metis:x.graph");
    hf_graph_free(&g);

    /* Vertex weights, an unsorted line, an isolated last vertex, CRLF, no final newline. */
    text = "3 2 11\r\n5 3 4 2 3\r\n7 1 3\r\n9 1 4";
    assert_int_equal(parse(&g, "x.graph", text, NULL), 0);
    const uint64_t off2[] = {0, 2, 3, 4};
    const hf_vid_t adj2[] = {1, 2, 0, 0};
    const float w2[] = {3, 4, 3, 4};
    expect_csr(&g, 3, off2, adj2, w2);
    assert_non_null(g.vwgt);
    assert_int_equal(g.vwgt[0], 5);
    assert_int_equal(g.vwgt[1], 7);
    assert_int_equal(g.vwgt[2], 9);
    hf_graph_free(&g);

    /* Vertex sizes are skipped; an empty line is an isolated vertex. */
    text = "3 1 100\n1 2\n1 1\n1\n";
    assert_int_equal(parse(&g, "x.graph", text, NULL), 0);
    const uint64_t off3[] = {0, 1, 2, 2};
    const hf_vid_t adj3[] = {1, 0};
    expect_csr(&g, 3, off3, adj3, NULL);
    hf_graph_free(&g);
    assert_int_equal(parse(&g, "x.graph", "3 1\n2\n1\n\n\n\n", NULL), 0); /* trailing blanks */
    assert_int_equal(g.nv, 3);
    assert_int_equal(g.ne, 2);
    hf_graph_free(&g);
}

static void mtx_small(void **state)
{
    (void)state;
    struct hf_graph g;
    const char *text = "%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 3\n"
                       "2 1 0.5\n3 1 2e0\n3 3 1\n";
    assert_int_equal(parse(&g, "m.mtx", text, NULL), 0);
    const uint64_t off[] = {0, 2, 3, 5};
    const hf_vid_t adj[] = {1, 2, 0, 0, 2};
    const float w[] = {0.5f, 2, 0.5f, 2, 1};
    expect_csr(&g, 3, off, adj, w);
    assert_int_equal(g.symmetric, 1);
    assert_int_equal(g.base, 1);
    hf_graph_free(&g);

    /* Rectangular pattern: max(rows, cols) vertices, not symmetric. */
    text = "%%MatrixMarket MATRIX Coordinate pattern general\n3 4 2\n1 4\n3 2\n";
    assert_int_equal(parse(&g, "m.mtx", text, NULL), 0);
    const uint64_t off2[] = {0, 1, 1, 2, 2};
    const hf_vid_t adj2[] = {3, 1};
    expect_csr(&g, 4, off2, adj2, NULL);
    assert_int_equal(g.symmetric, 0);
    hf_graph_free(&g);

    text = "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 0\n2 1 0\n";
    assert_int_equal(parse(&g, "m.mtx", text, NULL), 0); /* weight 0 is allowed */
    assert_true(g.weights[0] == 0 && g.weights[1] == 0);
    assert_int_equal(g.symmetric, 1);
    hf_graph_free(&g);
}

static void dimacs_small(void **state)
{
    (void)state;
    struct hf_graph g;
    const char *text = "c road\np sp 3 4\nc arcs\na 2 3 5\na 1 2 10\na 2 1 10\na 3 2 5\n";
    assert_int_equal(parse(&g, "r.gr", text, NULL), 0);
    const uint64_t off[] = {0, 1, 3, 4};
    const hf_vid_t adj[] = {1, 0, 2, 1};
    const float w[] = {10, 10, 5, 5};
    expect_csr(&g, 3, off, adj, w);
    assert_int_equal(g.symmetric, 1);
    assert_int_equal(g.base, 1);
    hf_graph_free(&g);
}

static void edgelist_small(void **state)
{
    (void)state;
    struct hf_graph g;
    const char *text = "# SNAP\n0 3\n3 0\r\n\n  1\t2\n2 1\n5 5\n";
    assert_int_equal(parse(&g, "e.txt", text, NULL), 0);
    const uint64_t off[] = {0, 1, 2, 3, 4, 4, 5};
    const hf_vid_t adj[] = {3, 2, 1, 0, 5};
    expect_csr(&g, 6, off, adj, NULL);
    assert_int_equal(g.base, 0);
    assert_int_equal(g.symmetric, 1); /* a self-loop is its own reverse */
    hf_graph_free(&g);

    text = "0 1 2.5\n1 0 .25\n% konect comment\n1 1 1e1\n";
    assert_int_equal(parse(&g, "e.el", text, NULL), 0);
    const uint64_t off2[] = {0, 1, 3};
    const hf_vid_t adj2[] = {1, 0, 1};
    const float w2[] = {2.5f, 0.25f, 10};
    expect_csr(&g, 2, off2, adj2, w2);
    assert_int_equal(g.symmetric, 0);
    hf_graph_free(&g);

    /* Symmetric means the arcs are the reversed arcs as a multiset: an edge
     * listed twice one way and once the other is not; -0 and 0 weigh the same. */
    assert_int_equal(parse(&g, "e.el", "0 1 1\n0 1 1\n1 0 1\n", NULL), 0);
    assert_int_equal(g.ne, 3);
    assert_int_equal(g.symmetric, 0);
    hf_graph_free(&g);
    assert_int_equal(parse(&g, "e.el", "0 1 1\n0 1 1\n1 0 1\n1 0 1\n2 0 -0\n0 2 0\n", NULL), 0);
    assert_int_equal(g.symmetric, 1);
    hf_graph_free(&g);

    /* An explicit format overrides the extension. */
    struct hf_graph_opts o = {.format = "dimacs", .cache_dir = ""};
    assert_int_equal(parse(&g, "e.txt", "p sp 1 1\na 1 1 1\n", &o), 0);
    assert_int_equal(g.ne, 1);
    hf_graph_free(&g);
    o.format = "graphml";
    assert_int_equal(parse(&g, "e.txt", "0 1\n", &o), HF_EINVAL);
}

static void metis_4elt(void **state)
{
    (void)state;
    struct hf_graph g;
    /* The cache goes to the test's folder: nothing is written into the repository. */
    struct hf_graph_opts o = {.cache_dir = dir};
    hf_clear_error();
    assert_int_equal(hf_graph_load(&g, test_data(ELT4), &o), 0);
    assert_int_equal(g.nv, 15606);
    assert_int_equal(g.ne, 2 * 45878);
    assert_int_equal(g.symmetric, 1);
    assert_int_equal(g.base, 1);
    assert_null(g.weights);
    assert_int_equal(hf_graph_check(&g), 0);
    /* Line 2 of the file: "2 3 6 7". */
    assert_int_equal(hf_graph_degree(&g, 0), 4);
    assert_int_equal(g.adj[0], 1);
    assert_int_equal(g.adj[3], 6);
    uint64_t maxd = 0, mind = UINT64_MAX;
    for (hf_vid_t v = 0; v < g.nv; v++) {
        uint64_t d = hf_graph_degree(&g, v);
        maxd = d > maxd ? d : maxd;
        mind = d < mind ? d : mind;
    }
    assert_true(mind >= 2 && maxd <= 10); /* a 2D triangular mesh */
    assert_int_equal(g.self_loops_dropped + g.duplicates_dropped, 0);
    hf_graph_free(&g);
}

/* ---- options ------------------------------------------------------------------ */

static void options_and_counters(void **state)
{
    (void)state;
    const char *text = "0 1 5\n0 1 3\n1 0 4\n2 2 1\n1 2 7\n";
    struct hf_graph g;
    struct hf_graph_opts o = {.cache_dir = ""};
    assert_int_equal(parse(&g, "o.txt", text, &o), 0);
    assert_int_equal(g.ne, 5);
    assert_int_equal(g.symmetric, 0);
    assert_int_equal(g.self_loops_dropped + g.duplicates_dropped + g.arcs_added_by_symmetrise, 0);
    assert_true(g.weights[0] == 3 && g.weights[1] == 5); /* sorted by (neighbour, weight) */
    hf_graph_free(&g);

    o.dedupe = 1;
    assert_int_equal(parse(&g, "o.txt", text, &o), 0);
    assert_int_equal(g.ne, 4);
    assert_int_equal(g.duplicates_dropped, 1);
    assert_true(g.weights[0] == 3); /* the minimum weight stays */
    hf_graph_free(&g);

    o.dedupe = 0, o.drop_self_loops = 1;
    assert_int_equal(parse(&g, "o.txt", text, &o), 0);
    assert_int_equal(g.ne, 4);
    assert_int_equal(g.self_loops_dropped, 1);
    hf_graph_free(&g);

    o.symmetrise = 1;
    assert_int_equal(parse(&g, "o.txt", text, &o), 0);
    assert_int_equal(g.ne, 8);
    assert_int_equal(g.arcs_added_by_symmetrise, 4);
    assert_int_equal(g.symmetric, 1);
    assert_int_equal(hf_graph_check(&g), 0);
    hf_graph_free(&g);

    o.dedupe = 1;
    assert_int_equal(parse(&g, "o.txt", text, &o), 0);
    const uint64_t off[] = {0, 1, 3, 4};
    const hf_vid_t adj[] = {1, 0, 2, 1};
    const float w[] = {3, 3, 7, 7};
    expect_csr(&g, 3, off, adj, w);
    assert_int_equal(g.self_loops_dropped, 1);
    assert_int_equal(g.duplicates_dropped, 1);
    assert_int_equal(g.arcs_added_by_symmetrise, 1); /* only 2->1 is new */
    assert_int_equal(g.symmetric, 1);
    hf_graph_free(&g);
}

/* ---- cache -------------------------------------------------------------------- */

static void set_mtime(const char *path, time_t sec)
{
    struct timespec ts[2] = {{sec, 0}, {sec, 0}};
    assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static void cache_reuse_and_rebuild(void **state)
{
    (void)state;
    char src[300], hfg[320], cdir[300], named[400];
    path_in_dir(src, sizeof src, "c.txt");
    snprintf(hfg, sizeof hfg, "%s.hfg", src);
    const char *v1 = "0 1 2\n1 2 3\n";
    write_file(src, v1, strlen(v1));
    set_mtime(src, 1000000);
    struct hf_graph g, h;
    struct stat st;

    assert_int_equal(hf_graph_load(&g, src, NULL), 0);
    assert_int_equal(g.loaded_from_cache, 0);
    assert_int_equal(stat(hfg, &st), 0);
    assert_int_equal(hf_graph_load(&h, src, NULL), 0);
    assert_int_equal(h.loaded_from_cache, 1);
    assert_int_equal(h.ne, g.ne);
    assert_memory_equal(h.adj, g.adj, g.ne * sizeof *g.adj);
    assert_memory_equal(h.weights, g.weights, g.ne * sizeof *g.weights);
    assert_string_equal(h.source_desc, g.source_desc);
    hf_graph_free(&h);

    /* Other options: the cache does not apply; it is rebuilt for them. */
    struct hf_graph_opts o = {.symmetrise = 1};
    assert_int_equal(hf_graph_load(&h, src, &o), 0);
    assert_int_equal(h.loaded_from_cache, 0);
    assert_int_equal(h.ne, 4);
    hf_graph_free(&h);
    assert_int_equal(hf_graph_load(&h, src, &o), 0);
    assert_int_equal(h.loaded_from_cache, 1);
    hf_graph_free(&h);

    /* The source changes (same size even): stale, rebuilt, then reused. */
    const char *v2 = "0 2 2\n1 2 3\n";
    write_file(src, v2, strlen(v2));
    set_mtime(src, 2000000);
    assert_int_equal(hf_graph_load(&h, src, &o), 0);
    assert_int_equal(h.loaded_from_cache, 0);
    assert_int_equal(h.adj[0], 2);
    hf_graph_free(&h);
    assert_int_equal(hf_graph_load(&h, src, &o), 0);
    assert_int_equal(h.loaded_from_cache, 1);
    assert_int_equal(h.adj[0], 2);
    hf_graph_free(&h);

    /* A corrupt cache is parsed around and replaced. */
    write_file(hfg, "HFGRAPH", 7);
    assert_int_equal(hf_graph_load(&h, src, &o), 0);
    assert_int_equal(h.loaded_from_cache, 0);
    hf_graph_free(&h);
    assert_int_equal(hf_graph_load(&h, src, &o), 0);
    assert_int_equal(h.loaded_from_cache, 1);
    hf_graph_free(&h);

    /* cache_dir: the name carries the format and options; "" caches nothing. */
    path_in_dir(cdir, sizeof cdir, "cache");
    assert_int_equal(mkdir(cdir, 0755), 0);
    o.cache_dir = cdir;
    assert_int_equal(hf_graph_load(&h, src, &o), 0);
    hf_graph_free(&h);
    snprintf(named, sizeof named, "%s/c.txt.edgelist-s1l0d0.hfg", cdir);
    assert_int_equal(stat(named, &st), 0);
    assert_int_equal(hf_graph_load(&h, src, &o), 0);
    assert_int_equal(h.loaded_from_cache, 1);
    hf_graph_free(&h);
    unlink(named);
    o.cache_dir = "";
    unlink(hfg);
    assert_int_equal(hf_graph_load(&h, src, &o), 0);
    assert_int_equal(stat(hfg, &st), -1);
    hf_graph_free(&h);
    hf_graph_free(&g);
    unlink(src);
    rmdir(cdir);
}

static void bin_round_trip(void **state)
{
    (void)state;
    char path[300];
    path_in_dir(path, sizeof path, "rt.hfg");
    struct hf_graph g, h;
    assert_int_equal(parse(&g, "v.graph", "3 2 11\n5 3 4 2 3\n7 1 3\n9 1 4\n", NULL), 0);
    assert_int_equal(hf_graph_write_bin(&g, path), 0);
    assert_int_equal(hf_graph_read_bin(&h, path), 0);
    assert_int_equal(h.nv, g.nv);
    assert_int_equal(h.ne, g.ne);
    assert_int_equal(h.base, 1);
    assert_int_equal(h.symmetric, g.symmetric);
    assert_memory_equal(h.offsets, g.offsets, (g.nv + 1) * sizeof *g.offsets);
    assert_memory_equal(h.adj, g.adj, g.ne * sizeof *g.adj);
    assert_memory_equal(h.weights, g.weights, g.ne * sizeof *g.weights);
    assert_memory_equal(h.vwgt, g.vwgt, g.nv * sizeof *g.vwgt);
    hf_graph_free(&h);
    /* Through hf_graph_load by extension too. */
    assert_int_equal(hf_graph_load(&h, path, NULL), 0);
    assert_int_equal(h.ne, g.ne);
    hf_graph_free(&h);

    /* A corrupted neighbour id is caught by the structural check. */
    size_t len;
    char *b = read_file(path, &len);
    b[512 + 4 * 8] = 7; /* adj[0] = 7 >= nv */
    write_file(path, b, len);
    hf_clear_error();
    assert_int_equal(hf_graph_read_bin(&h, path), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "corrupt"));
    write_file(path, b, len - 3);
    hf_clear_error();
    assert_int_equal(hf_graph_read_bin(&h, path), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "truncated"));
    free(b);
    hf_clear_error();
    assert_int_equal(hf_graph_read_bin(&h, "/nonexistent/x.hfg"), HF_EIO);
    assert_int_equal(hf_graph_load(&h, "/nonexistent/x.graph", NULL), HF_EIO);
    unlink(path);
    hf_graph_free(&g);
}

/* ---- generators ---------------------------------------------------------------- */

static int same_graph(const struct hf_graph *a, const struct hf_graph *b)
{
    return a->nv == b->nv && a->ne == b->ne &&
           !memcmp(a->offsets, b->offsets, (a->nv + 1) * sizeof *a->offsets) &&
           !memcmp(a->adj, b->adj, a->ne * sizeof *a->adj) && (!a->weights) == (!b->weights) &&
           (!a->weights || !memcmp(a->weights, b->weights, a->ne * sizeof *a->weights));
}

static void kronecker(void **state)
{
    (void)state;
    struct hf_graph a, b, c;
    int threads = omp_get_max_threads();
    assert_int_equal(hf_graph_kronecker(&a, 12, 8, 1, 1), 0);
    omp_set_num_threads(1);
    assert_int_equal(hf_graph_kronecker(&b, 12, 8, 1, 1), 0);
    omp_set_num_threads(threads);
    assert_true(same_graph(&a, &b)); /* independent of the thread count */
    assert_int_equal(hf_graph_kronecker(&c, 12, 8, 2, 1), 0);
    assert_false(same_graph(&a, &c));
    assert_int_equal(a.nv, 4096);
    assert_true(a.ne > 4096 * 8 && a.ne <= 2 * 4096 * 8);
    assert_int_equal(a.symmetric, 1);
    assert_int_equal(hf_graph_check(&a), 0);
    assert_true(a.duplicates_dropped > 0 && a.self_loops_dropped > 0);
    uint64_t maxd = 0;
    for (hf_vid_t v = 0; v < a.nv; v++) {
        for (uint64_t i = a.offsets[v]; i < a.offsets[v + 1]; i++) {
            assert_true(a.adj[i] != v);
            assert_true(i == a.offsets[v] || a.adj[i] > a.adj[i - 1]); /* deduped */
            float w = a.weights[i];
            assert_true(w >= 1 && w <= 255 && w == floorf(w));
        }
        uint64_t d = hf_graph_degree(&a, v);
        maxd = d > maxd ? d : maxd;
    }
    assert_true(maxd > 20 * a.ne / a.nv); /* skewed: hubs far above the mean */
    assert_non_null(strstr(a.source_desc, "kron:scale=12,ef=8,seed=1"));
    hf_graph_free(&a);
    hf_graph_free(&b);
    hf_graph_free(&c);
    assert_int_equal(hf_graph_kronecker(&a, 32, 16, 1, 0), HF_EINVAL);
}

static void grid(void **state)
{
    (void)state;
    struct hf_graph a, b, c;
    int threads = omp_get_max_threads();
    assert_int_equal(hf_graph_grid(&a, 300, 200, HF_GRAPH_GRID_KEEP, 7, 1), 0);
    omp_set_num_threads(1);
    assert_int_equal(hf_graph_grid(&b, 300, 200, HF_GRAPH_GRID_KEEP, 7, 1), 0);
    omp_set_num_threads(threads);
    assert_true(same_graph(&a, &b));
    assert_int_equal(hf_graph_grid(&c, 300, 200, HF_GRAPH_GRID_KEEP, 8, 1), 0);
    assert_false(same_graph(&a, &c));
    assert_int_equal(a.nv, 60000);
    double avg = (double)a.ne / (double)a.nv;
    assert_true(avg > 2.3 && avg < 2.45);
    assert_int_equal(a.symmetric, 1);
    assert_int_equal(hf_graph_check(&a), 0);
    for (uint64_t i = 0; i < a.ne; i++)
        assert_true(a.weights[i] >= 1 && a.weights[i] <= 1000 &&
                    a.weights[i] == floorf(a.weights[i]));
    /* Planar lattice: every neighbour is one step up, down, left or right. */
    for (hf_vid_t v = 0; v < a.nv; v++)
        for (uint64_t i = a.offsets[v]; i < a.offsets[v + 1]; i++) {
            int64_t d = (int64_t)a.adj[i] - (int64_t)v;
            assert_true(d == 1 || d == -1 || d == 200 || d == -200);
        }
    hf_graph_free(&a);
    hf_graph_free(&b);
    hf_graph_free(&c);
    assert_int_equal(hf_graph_grid(&a, 10, 10, 1.0, 1, 0), 0);
    assert_int_equal(a.ne, 2 * (9 * 10 + 10 * 9));
    hf_graph_free(&a);
    assert_int_equal(hf_graph_grid(&a, 10, 10, 0.0, 1, 0), HF_EINVAL);
}

/* The parallel split must not change the graph: 4elt and the small files of
 * every format parsed in 1 to 64 chunks give identical CSRs. */
static void chunking_does_not_matter(void **state)
{
    (void)state;
    size_t len = 0;
    char *elt = read_file(test_data(ELT4), &len);
    const char *texts[][2] = {
        {"x.graph", "% c\n4 4 001\n2 5 3 1\n1 5 4 7\n%inside\n1 1 4 2\n3 2 2 7\n"},
        {"x.graph", "5 3 11\n5 3 4 2 3\n7 1 3\n%\n2\n9 1 4 5 1\n1 4 1\n\n\n"},
        {"m.mtx", "%%MatrixMarket matrix coordinate real symmetric\n% c\n3 3 3\n2 1 0.5\n"
                  "3 1 2\n3 3 1\n"},
        {"r.gr", "c road\np sp 3 4\nc arcs\na 2 3 5\na 1 2 10\na 2 1 10\na 3 2 5\n"},
        {"e.txt", "# SNAP\n0 3\n3 0\r\n\n  1\t2\n2 1\n5 5\n1 2\n0 3"},
        {"4elt.graph", elt},
    };
    const int chunks[] = {2, 3, 7, 64};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        if (!texts[i][1])
            continue;
        struct hf_graph a, b;
        struct hf_graph_opts o = {.cache_dir = "", .dedupe = (int)i & 1};
        assert_int_equal(parse(&a, texts[i][0], texts[i][1], &o), 0);
        for (size_t k = 0; k < sizeof chunks / sizeof *chunks; k++) {
            hf__text_chunks = chunks[k];
            assert_int_equal(parse(&b, texts[i][0], texts[i][1], &o), 0);
            hf__text_chunks = 0;
            assert_true(same_graph(&a, &b));
            if (a.vwgt)
                assert_memory_equal(a.vwgt, b.vwgt, a.nv * sizeof *a.vwgt);
            hf_graph_free(&b);
        }
        hf_graph_free(&a);
    }
    free(elt);
}

/* ---- bad inputs ---------------------------------------------------------------- */

struct bad {
    const char *name; /* its extension picks the format */
    const char *text;
    const char *words[3]; /* each must appear in the message */
};

static const struct bad bad_inputs[] = {
    {"b.graph", "3 2\n2\n1 3\n", {"b.graph:4:", "file ends after 2 vertex lines", "n=3"}},
    {"b.graph", "3 3\n2\n1 3\n2\n", {"b.graph:1:", "m=3 edges (6 arcs)", "lists 4 arcs"}},
    {"b.graph", "2 1\n3\n1\n", {"b.graph:2:", "neighbour id 3 out of range 1..2"}},
    {"b.graph", "2 1\n0\n1\n", {"b.graph:2:", "neighbour id 0 out of range"}},
    {"b.graph", "2 1\n2x\n1\n", {"b.graph:2:", "expected a number, found '2x'"}},
    {"b.graph", "2 1 011 2\n1 2\n1 1\n", {"b.graph:1:", "ncon=2"}},
    {"b.graph", "% only\n0 0\n", {"b.graph:2:", "empty graph"}},
    {"b.graph", "2 1\n2\n1\n1\n", {"b.graph:4:", "more vertex lines", "n=2"}},
    {"b.graph", "2 1 1\n2 -3\n1 3\n", {"b.graph:2:", "edge weight is negative (-3)"}},
    {"b.graph", "2 1 2\n2\n1\n", {"b.graph:1:", "fmt '2'"}},
    {"b.graph", "99999999999999999999999 1\n", {"b.graph:1:", "overflows"}},
    {"b.graph", "2 1 1\n2\n1 1\n", {"b.graph:2:", "edge weight missing"}},
    {"b.mtx", "%%MatrixMarket matrix array real general\n2 2\n", {"b.mtx:1:", "'array'"}},
    {"b.mtx", "%%MatrixMarket matrix coordinate complex general\n", {"b.mtx:1:", "complex"}},
    {"b.mtx", "%%MatrixMarket matrix coordinate real hermitian\n", {"b.mtx:1:", "hermitian"}},
    {"b.mtx",
     "%%MatrixMarket matrix coordinate pattern general\n%\n3 3 3\n1 2\n2 3\n",
     {"b.mtx:3:", "nnz=3", "2 entries"}},
    {"b.mtx",
     "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n3 1\n",
     {"b.mtx:3:", "row index 3 out of range 1..2"}},
    {"b.mtx",
     "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 nan\n",
     {"b.mtx:3:", "not a finite number (nan)"}},
    {"b.mtx",
     "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1e39\n",
     {"b.mtx:3:", "value overflows (1e39)"}},
    {"b.mtx", "3 3 1\n1 2\n", {"b.mtx:1:", "banner"}},
    {"b.gr", "c x\na 1 2 3\n", {"b.gr:2:", "problem line"}},
    {"b.gr", "p sp 2 3\na 1 2 1\na 2 1 1\n", {"b.gr:1:", "m=3 arcs", "has 2"}},
    {"b.gr", "p sp 2 1\nx 1 2\n", {"b.gr:2:", "unknown line type 'x'"}},
    {"b.gr", "p sp 2 1\nc\na 1 2\n", {"b.gr:3:", "arc weight missing"}},
    {"b.gr", "p sp 2 1\na 99999999999999999999 1 1\n", {"b.gr:2:", "tail vertex id overflows"}},
    {"b.gr", "p sp 2 1\na 1 2 1\np sp 2 1\n", {"b.gr:3:", "second problem line"}},
    {"b.txt", "0 1\n1 abc\n", {"b.txt:2:", "found 'abc'"}},
    {"b.txt", "0 1\n1 2 3\n", {"b.txt:2:", "extra field '3'"}},
    {"b.txt", "# nothing\n\n", {"b.txt:3:", "empty graph"}},
    {"b.txt", "0 4294967295\n", {"b.txt:1:", "4294967295 too large"}},
    {"b.txt", "", {"b.txt:1:", "empty file"}},
    {"b.txt", "0 1 2 3\n", {"b.txt:1:", "expected 2 or 3 fields"}},
    {"b.txt", "\n\n0 1 -2\n", {"b.txt:3:", "weight is negative"}},
    {"b.txt", "0 1 2\n1 2 inf\n", {"b.txt:2:", "not a finite number (inf)"}},
    {"b.txt", "0 1\n1\n", {"b.txt:2:", "target vertex id", "end of line"}},
    {"b.txt", "0 1 2\n1 2 1.5e\n", {"b.txt:2:", "found '1.5e'"}},
};

static void bad_inputs_name_file_and_line(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_inputs / sizeof *bad_inputs; i++) {
        const struct bad *b = &bad_inputs[i];
        struct hf_graph g;
        int rc = parse(&g, b->name, b->text, NULL);
        const char *msg = hf_last_error();
        int ok = rc == HF_ECONFIG;
        for (int k = 0; k < 3 && b->words[k]; k++)
            ok = ok && strstr(msg, b->words[k]);
        if (!ok)
            fail_msg("row %zu (%s): rc %d, message '%s'", i, b->text, rc, msg);
        assert_null(g.offsets); /* zeroed on failure */
        /* Cut into chunks, the earliest error is still the one reported. */
        char first[1024];
        snprintf(first, sizeof first, "%s", msg);
        hf__text_chunks = 5;
        assert_int_equal(parse(&g, b->name, b->text, NULL), HF_ECONFIG);
        hf__text_chunks = 0;
        assert_string_equal(hf_last_error(), first);
    }
    /* A line longer than HF_GRAPH_MAX_LINE, a comment line included. */
    char *text = malloc(HF_GRAPH_MAX_LINE + 64);
    strcpy(text, "0 1\n#");
    memset(text + 5, 'x', HF_GRAPH_MAX_LINE);
    strcpy(text + 5 + HF_GRAPH_MAX_LINE, "\n1 2\n");
    struct hf_graph g;
    assert_int_equal(parse(&g, "long.txt", text, NULL), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "long.txt:2: line of 4097 bytes"));
    free(text);
    /* max_nv guards against a huge id making a huge offsets array. */
    struct hf_graph_opts o = {.cache_dir = "", .max_nv = 1000};
    assert_int_equal(parse(&g, "m.txt", "0 1000\n", &o), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "m.txt:1: target vertex id 1000 too large"));
}

static void truncated_file(void **state)
{
    (void)state;
    size_t len = 0;
    char *b = read_file(test_data(ELT4), &len);
    assert_non_null(b);
    char path[300];
    path_in_dir(path, sizeof path, "half.graph");
    write_file(path, b, len / 2);
    struct hf_graph g;
    hf_clear_error();
    assert_int_equal(hf_graph_load(&g, path, &no_cache), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "half.graph:"));
    assert_non_null(strstr(hf_last_error(), "n=15606"));
    free(b);
    unlink(path);
}

static int setup_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_graph_load.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int remove_dir(void **state)
{
    (void)state;
    return remove_tree(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(metis_small),
        cmocka_unit_test(mtx_small),
        cmocka_unit_test(dimacs_small),
        cmocka_unit_test(edgelist_small),
        cmocka_unit_test(metis_4elt),
        cmocka_unit_test(options_and_counters),
        cmocka_unit_test(cache_reuse_and_rebuild),
        cmocka_unit_test(bin_round_trip),
        cmocka_unit_test(kronecker),
        cmocka_unit_test(grid),
        cmocka_unit_test(chunking_does_not_matter),
        cmocka_unit_test(bad_inputs_name_file_and_line),
        cmocka_unit_test(truncated_file),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
