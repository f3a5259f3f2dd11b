/* graph_rgg.c - random geometric graphs: a Delaunay-like mesh for the
 * partitioner benchmarks.
 *
 * DESIGN
 * ------
 * nv points uniform in the unit square; u and v are joined when they lie
 * within r of each other, r chosen so that a point away from the border has
 * `degree` neighbours on average (nv * pi * r^2 = degree); the border makes
 * the average a little lower (about 1 - 8r/(3 pi) of it). With degree 6 this
 * is the planar, mesh-like, mostly connected graph that partitioners are
 * benchmarked on (KaHIP's and the 10th DIMACS challenge's rgg instances); a
 * few small pieces break off, as in any RGG below the connectivity threshold.
 *
 * Point i's coordinates are pure functions of (seed, i) through splitmix64,
 * as in graph_gen.c, so the graph is bit-identical for a seed on any thread
 * count. Vertex ids are the draw order, which has no spatial locality (a
 * partitioner cannot win by cutting id ranges). The neighbour search bins the
 * points into a grid of cells of side >= r (a counting sort, points of a cell
 * in id order), so each point compares itself with the points of its 3 x 3
 * block of cells only: O(nv * degree) work. Two parallel passes over the
 * vertices, count then fill, write the CSR directly; each list is then
 * sorted. Distances are compared as (dx^2 + dy^2 <= r^2) on the same doubles
 * from both ends, so the graph is exactly symmetric. Weights, when asked for,
 * are integers 1..1000 drawn from (seed, min(u,v), max(u,v)), like the grid's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

#define STREAM_POINT 0x504f494e54000000ull
#define STREAM_RWGT 0x5257475400000000ull

struct cells {
    const double *x, *y;
    uint64_t side;     /* cells per row and column */
    uint64_t *start;   /* side^2 + 1: the cell's points are pt[start[c] .. start[c+1]) */
    hf_vid_t *pt;      /* point ids sorted by cell */
    double r2;
};

static inline uint64_t cell_of(double x, uint64_t side)
{
    uint64_t c = (uint64_t)(x * (double)side);
    return c < side ? c : side - 1;
}

/* Visits u's neighbours; with `out` NULL only counts them. */
static uint64_t neighbours(const struct cells *cl, hf_vid_t u, hf_vid_t *out)
{
    double ux = cl->x[u], uy = cl->y[u];
    uint64_t cx = cell_of(ux, cl->side), cy = cell_of(uy, cl->side), n = 0;
    for (uint64_t j = cy ? cy - 1 : 0; j <= cy + 1 && j < cl->side; j++)
        for (uint64_t i = cx ? cx - 1 : 0; i <= cx + 1 && i < cl->side; i++) {
            uint64_t c = j * cl->side + i;
            for (uint64_t p = cl->start[c]; p < cl->start[c + 1]; p++) {
                hf_vid_t v = cl->pt[p];
                double dx = cl->x[v] - ux, dy = cl->y[v] - uy;
                if (v != u && dx * dx + dy * dy <= cl->r2) {
                    if (out)
                        out[n] = v;
                    n++;
                }
            }
        }
    return n;
}

static int cmp_vid(const void *a, const void *b)
{
    hf_vid_t x = *(const hf_vid_t *)a, y = *(const hf_vid_t *)b;
    return (x > y) - (x < y);
}

int hf_graph_rgg(struct hf_graph *g, uint64_t nv, double degree, uint64_t seed, int weighted)
{
    memset(g, 0, sizeof *g);
    if (nv < 1 || nv > HF_GRAPH_MAX_NV || !(degree > 0 && degree <= 1000))
        return hf_fail(HF_EINVAL, "rgg: vertices=%llu (1..2^32-1) or degree=%g (0 < degree <= "
                                  "1000) out of range", (unsigned long long)nv, degree);
    double r = sqrt(degree / (M_PI * (double)nv));
    uint64_t side = r >= 1.0 ? 1 : (uint64_t)(1.0 / r);
    if (side * side > 4 * nv) /* never more cells than a few per point */
        side = (uint64_t)sqrt(4.0 * (double)nv);
    if (side < 1)
        side = 1;
    uint64_t ncell = side * side;
    struct cells cl = {.side = side, .r2 = r * r};
    double *xy = hf__big_alloc(2 * nv * sizeof *xy);
    uint64_t *cell = hf__big_alloc(nv * sizeof *cell);
    cl.start = calloc(ncell + 1, sizeof *cl.start);
    cl.pt = hf__big_alloc(nv * sizeof *cl.pt);
    uint64_t *off = hf__big_alloc((nv + 1) * sizeof *off);
    if (!xy || !cell || !cl.start || !cl.pt || !off) {
        free(xy), free(cell), free(cl.start), free(cl.pt), free(off);
        return hf_fail(HF_ENOMEM, "rgg: out of memory for %llu vertices", (unsigned long long)nv);
    }
    cl.x = xy, cl.y = xy + nv;
    uint64_t key = hf__mix64(seed ^ STREAM_POINT);
    int64_t snv = (int64_t)nv;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < snv; i++) {
        xy[i] = (double)(hf__mix64(key ^ (2 * (uint64_t)i)) >> 11) * 0x1.0p-53;
        xy[nv + i] = (double)(hf__mix64(key ^ (2 * (uint64_t)i + 1)) >> 11) * 0x1.0p-53;
        cell[i] = cell_of(xy[nv + i], side) * side + cell_of(xy[i], side);
    }
    for (uint64_t i = 0; i < nv; i++) /* counting sort: O(nv), sequential, stable */
        cl.start[cell[i] + 1]++;
    for (uint64_t c = 0; c < ncell; c++)
        cl.start[c + 1] += cl.start[c];
    for (uint64_t i = 0; i < nv; i++)
        cl.pt[cl.start[cell[i]]++] = (hf_vid_t)i;
    for (uint64_t c = ncell; c > 0; c--) /* start[c] was advanced to start[c + 1] */
        cl.start[c] = cl.start[c - 1];
    cl.start[0] = 0;
    free(cell);
    off[0] = 0;
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t u = 0; u < snv; u++)
        off[u + 1] = neighbours(&cl, (hf_vid_t)u, NULL);
    for (uint64_t u = 0; u < nv; u++)
        off[u + 1] += off[u];
    uint64_t ne = off[nv];
    hf_vid_t *adj = hf__big_alloc((ne ? ne : 1) * sizeof *adj);
    float *w = weighted ? hf__big_alloc((ne ? ne : 1) * sizeof *w) : NULL;
    if (!adj || (weighted && !w)) {
        free(xy), free(cl.start), free(cl.pt), free(off), free(adj), free(w);
        return hf_fail(HF_ENOMEM, "rgg: out of memory for %llu arcs", (unsigned long long)ne);
    }
    uint64_t wkey = hf__mix64(seed ^ STREAM_RWGT);
#pragma omp parallel for schedule(dynamic, 4096)
    for (int64_t u = 0; u < snv; u++) {
        hf_vid_t *list = adj + off[u];
        uint64_t n = neighbours(&cl, (hf_vid_t)u, list);
        qsort(list, n, sizeof *list, cmp_vid);
        for (uint64_t k = 0; w && k < n; k++) {
            uint64_t a = (uint64_t)u < list[k] ? (uint64_t)u : list[k],
                     b = (uint64_t)u < list[k] ? list[k] : (uint64_t)u;
            w[off[u] + k] = (float)(1 + hf__mix64(wkey ^ hf__mix64(a ^ (b << 32))) % 1000);
        }
    }
    free(xy), free(cl.start), free(cl.pt);
    hf__graph_adopt_generated(g, nv, ne, off, adj, w, "rgg:vertices=%llu,degree=%g,seed=%llu%s",
                              (unsigned long long)nv, degree, (unsigned long long)seed,
                              weighted ? ",weighted" : "");
    return 0;
}
