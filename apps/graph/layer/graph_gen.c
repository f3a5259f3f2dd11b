/* graph_gen.c - synthetic graphs: Graph500 Kronecker (R-MAT) and a road-like
 * lattice.
 *
 * DESIGN
 * ------
 * Every random choice is a pure function of (seed, element index) through
 * splitmix64, never a draw from a shared sequential stream. Edge e of the
 * Kronecker graph, or lattice edge e of the grid, is therefore the same
 * whichever thread makes it and in whatever order, which is what lets
 * generation run under OpenMP and still give bit-identical arrays for a seed
 * on 2 cores or 128. The only sequential step is the Kronecker vertex
 * permutation (a Fisher-Yates shuffle, O(nv), well under a second at scale 24).
 *
 * Kronecker edges go through the common CSR builder (symmetrise, drop self
 * loops, dedupe), which bounds memory at about 8 bytes per generated edge for
 * the edge list plus 16 for the keys: scale 24, edge factor 16 peaks near
 * 6.5 GB unweighted. The grid needs no builder: a vertex's neighbours in id
 * order are up, left, right, down, so its CSR is written directly, in parallel.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph_internal.h"

/* Independent streams for the different uses of one seed. */
#define STREAM_PERM 0x5045524d00000000ull
#define STREAM_EDGE 0x4544474500000000ull
#define STREAM_KEEP 0x4b45455000000000ull
#define STREAM_WGHT 0x5747485400000000ull

/* A uniform double in [0, 1) from 53 random bits. */
static inline double unit(uint64_t r)
{
    return (double)(r >> 11) * 0x1.0p-53;
}

/* Vertex labels 0..nv-1 shuffled by Fisher-Yates; j for step i depends on
 * (seed, i) only. The multiply-shift maps 64 random bits to [0, i] with
 * negligible bias. */
static void permutation(hf_vid_t *perm, uint64_t nv, uint64_t seed)
{
    for (uint64_t i = 0; i < nv; i++)
        perm[i] = (hf_vid_t)i;
    uint64_t key = hf__mix64(seed ^ STREAM_PERM);
    for (uint64_t i = nv - 1; i > 0; i--) {
        uint64_t r = hf__mix64(key ^ i);
        uint64_t j = (uint64_t)(((unsigned __int128)r * (i + 1)) >> 64);
        hf_vid_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

int hf_graph_kronecker(struct hf_graph *g, int scale, int edge_factor, uint64_t seed, int weighted)
{
    memset(g, 0, sizeof *g);
    if (scale < 1 || scale > 31 || edge_factor < 1 || edge_factor > 1024)
        return hf_fail(HF_EINVAL,
                       "kronecker: scale=%d (1..31) or edge_factor=%d (1..1024) out "
                       "of range",
                       scale, edge_factor);
    uint64_t nv = 1ull << scale, m = (uint64_t)edge_factor * nv;
    hf_vid_t *perm = malloc(nv * sizeof *perm);
    struct hf__arcs a = {.weighted = weighted, .n = m, .cap = m};
    a.u = hf__big_alloc(m * sizeof *a.u);
    a.v = hf__big_alloc(m * sizeof *a.v);
    a.w = weighted ? hf__big_alloc(m * sizeof *a.w) : NULL;
    if (!perm || !a.u || !a.v || (weighted && !a.w)) {
        free(perm);
        hf__arcs_free(&a);
        return hf_fail(HF_ENOMEM, "kronecker: out of memory for %llu edges", (unsigned long long)m);
    }
    permutation(perm, nv, seed);

    /* Initiator a=.57 b=.19 c=.19 (d=.05) as 32-bit thresholds: each level
     * takes 32 bits, so one splitmix64 call serves two levels. */
    const uint64_t ta = (uint64_t)(0.57 * 4294967296.0), tb = (uint64_t)(0.76 * 4294967296.0),
                   tc = (uint64_t)(0.95 * 4294967296.0);
    uint64_t key = hf__mix64(seed ^ STREAM_EDGE), wkey = hf__mix64(seed ^ STREAM_WGHT);
    int64_t sm = (int64_t)m;
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < sm; e++) {
        uint64_t s = hf__mix64(key ^ hf__mix64((uint64_t)e)), r = 0;
        uint64_t u = 0, v = 0;
        for (int l = 0; l < scale; l++) {
            if (!(l & 1))
                r = hf__mix64(s + (uint64_t)l);
            uint64_t x = (l & 1) ? r >> 32 : r & 0xffffffffu;
            uint64_t ub = x >= tb, vb = (x >= ta && x < tb) || x >= tc;
            u |= ub << l;
            v |= vb << l;
        }
        a.u[e] = perm[u];
        a.v[e] = perm[v];
        if (weighted) {
            /* Uniform in (0, 1], then to an integer 1..255 as Graph500's SSSP
             * weights scaled for integer-friendly kernels. */
            double p = 1.0 - unit(hf__mix64(wkey ^ (uint64_t)e));
            double w = ceil(p * 255.0);
            a.w[e] = (float)(w < 1 ? 1 : w > 255 ? 255 : w);
        }
    }
    free(perm);
    struct hf__build b = {.symmetrise = 1,
                          .drop_self_loops = 1,
                          .dedupe = 1,
                          .weighted = weighted,
                          .assume_symmetric = 1};
    int rc = hf__csr_build(g, nv, &a, 1, &b);
    if (rc)
        return rc;
    g->base = 0;
    snprintf(g->source_desc, sizeof g->source_desc, "kron:scale=%d,ef=%d,seed=%llu%s", scale,
             edge_factor, (unsigned long long)seed, weighted ? ",weighted" : "");
    return 0;
}

/* Lattice edge e: horizontal (r,c)-(r,c+1) is 2*(r*cols+c), vertical
 * (r,c)-(r+1,c) is 2*(r*cols+c)+1. */
static inline int kept(uint64_t key, uint64_t e, uint64_t thr)
{
    return hf__mix64(key ^ e) < thr;
}

static inline float grid_weight(uint64_t key, uint64_t e)
{
    return (float)(1 + hf__mix64(key ^ e) % 1000);
}

int hf_graph_grid(struct hf_graph *g, uint32_t rows, uint32_t cols, double keep, uint64_t seed,
                  int weighted)
{
    memset(g, 0, sizeof *g);
    uint64_t nv = (uint64_t)rows * cols;
    if (rows < 1 || cols < 1 || nv > HF_GRAPH_MAX_NV || !(keep > 0.0 && keep <= 1.0))
        return hf_fail(HF_EINVAL, "grid: %u x %u vertices or keep=%g (0 < keep <= 1) out of range",
                       rows, cols, keep);
    /* keep as a 64-bit threshold; keep = 1 must keep every edge. */
    uint64_t thr = keep >= 1.0 ? UINT64_MAX : (uint64_t)(keep * 18446744073709551616.0);
    uint64_t kkey = hf__mix64(seed ^ STREAM_KEEP), wkey = hf__mix64(seed ^ STREAM_WGHT);
    uint64_t *off = hf__big_alloc((nv + 1) * sizeof *off);
    if (!off)
        return hf_fail(HF_ENOMEM, "grid: out of memory for %llu vertices", (unsigned long long)nv);
    off[0] = 0;
    int64_t srows = rows;
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < srows; r++)
        for (uint64_t c = 0; c < cols; c++) {
            uint64_t x = (uint64_t)r * cols + c;
            off[x + 1] = (r > 0 && kept(kkey, 2 * (x - cols) + 1, thr)) +
                         (c > 0 && kept(kkey, 2 * (x - 1), thr)) +
                         (c + 1 < cols && kept(kkey, 2 * x, thr)) +
                         ((uint64_t)r + 1 < rows && kept(kkey, 2 * x + 1, thr));
        }
    for (uint64_t x = 0; x < nv; x++)
        off[x + 1] += off[x];
    uint64_t ne = off[nv];
    hf_vid_t *adj = hf__big_alloc(ne * sizeof *adj);
    float *w = weighted ? hf__big_alloc(ne * sizeof *w) : NULL;
    if (!adj || (weighted && !w)) {
        free(off);
        free(adj);
        free(w);
        return hf_fail(HF_ENOMEM, "grid: out of memory for %llu arcs", (unsigned long long)ne);
    }
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < srows; r++)
        for (uint64_t c = 0; c < cols; c++) {
            uint64_t x = (uint64_t)r * cols + c, p = off[x];
            /* Up, left, right, down: ascending ids, so the list is sorted. */
            uint64_t nb[4], ed[4];
            int k = 0;
            if (r > 0)
                nb[k] = x - cols, ed[k++] = 2 * (x - cols) + 1;
            if (c > 0)
                nb[k] = x - 1, ed[k++] = 2 * (x - 1);
            if (c + 1 < cols)
                nb[k] = x + 1, ed[k++] = 2 * x;
            if ((uint64_t)r + 1 < rows)
                nb[k] = x + cols, ed[k++] = 2 * x + 1;
            for (int i = 0; i < k; i++)
                if (kept(kkey, ed[i], thr)) {
                    adj[p] = (hf_vid_t)nb[i];
                    if (w)
                        w[p] = grid_weight(wkey, ed[i]);
                    p++;
                }
        }
    hf__graph_adopt_generated(g, nv, ne, off, adj, w, "grid:rows=%u,cols=%u,keep=%g,seed=%llu%s",
                              rows, cols, keep, (unsigned long long)seed,
                              weighted ? ",weighted" : "");
    return 0;
}

void hf__graph_adopt_generated(struct hf_graph *g, uint64_t nv, uint64_t ne, uint64_t *off,
                               hf_vid_t *adj, float *w, const char *fmt, ...)
{
    g->nv = nv;
    g->ne = ne;
    g->offsets = off;
    g->adj = adj;
    g->weights = w;
    g->base = 0;
    g->symmetric = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->source_desc, sizeof g->source_desc, fmt, ap);
    va_end(ap);
}
