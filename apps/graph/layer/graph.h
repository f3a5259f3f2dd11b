/* graph.h - the graph layer shared by the graph apps (BFS, SSSP, PageRank, CC,
 * MST) and the graph partitioners: one in-memory CSR form, loaders for the
 * formats of the field, a binary cache, and synthetic generators.
 *
 * The CSR (`struct hf_graph`) is the only form the apps see. Vertex ids are
 * 0-based and fit hf_vid_t (at most 2^32 - 1 vertices); `base` remembers how
 * the input numbered them so that results can be written back the same way.
 *
 * Loaders (hf_graph_load) read METIS .graph, Matrix Market .mtx, DIMACS 9th
 * challenge .gr, SNAP-style edge lists and the .hfg binary cache. What they
 * accept:
 *  - isolated vertices (empty METIS lines; ids that no edge names);
 *  - self-loops: kept, or dropped and counted when drop_self_loops is set;
 *  - duplicate arcs: kept, or merged when dedupe is set (the minimum weight
 *    wins) and counted;
 *  - weights >= 0 (0 included), written as integers or decimals, stored as float.
 * What they reject, with HF_ECONFIG and "file:line: what was wrong (value)":
 * an empty graph (0 vertices), a header that disagrees with the body (METIS
 * 2m arcs, Matrix Market nnz, DIMACS m), truncated files, ids out of range
 * (0 or > n where ids are 1-based), ids or counts that overflow, negative, NaN
 * or infinite weights, garbage tokens, a wrong number of fields, METIS with
 * ncon > 1, Matrix Market array/complex/hermitian/skew-symmetric matrices, and
 * lines longer than HF_GRAPH_MAX_LINE bytes (edge-per-line formats and every
 * header line; a METIS vertex line may be as long as its degree needs).
 * I/O problems are HF_EIO, allocation failures HF_ENOMEM. Loaders never crash
 * and never read outside the input, whatever the bytes (a libFuzzer harness
 * under tests/fuzz/ keeps it so).
 *
 * Every function returns 0 or a negative HF_E* code and records a message
 * (hf_last_error()); on failure the graph is left zeroed, so hf_graph_free is
 * always safe. Little-endian hosts only (.hfg stores native byte order and
 * refuses a file written with the other one).
 */
#ifndef HF_GRAPH_H
#define HF_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "hetfarm.h"

typedef uint32_t hf_vid_t; /* vertex id, 0-based internally */

/* Longest line accepted in edge-per-line formats and header lines (bytes,
 * without the newline). */
#define HF_GRAPH_MAX_LINE 4096
/* Largest vertex count: ids must fit hf_vid_t. */
#define HF_GRAPH_MAX_NV ((uint64_t)UINT32_MAX)
/* The grid generator's edge survival probability that gives road-like average
 * degree ~2.4 (4 * keep, less at the border). */
#define HF_GRAPH_GRID_KEEP 0.6

struct hf_graph {
    uint64_t nv;           /* vertices */
    uint64_t ne;           /* arcs stored in CSR (an undirected edge counts twice) */
    uint64_t *offsets;     /* nv + 1 */
    hf_vid_t *adj;         /* ne neighbour ids, sorted ascending within each vertex */
    float *weights;        /* ne edge weights, or NULL for an unweighted graph */
    int32_t *vwgt;         /* nv vertex weights (METIS), or NULL */
    int base;              /* 0 or 1: how ids are numbered in the input file, for output */
    int symmetric;         /* the arcs are the reversed arcs (as a multiset, weights included):
                              every arc u->v has its own v->u of equal weight */
    char source_desc[256]; /* "metis:/path/4elt.graph" or "kron:scale=22,ef=16,seed=1" */
    /* what the loader did, for results.json: */
    uint64_t self_loops_dropped;       /* input arcs u->u left out (drop_self_loops) */
    uint64_t duplicates_dropped;       /* input arcs merged into an equal (u,v) input arc (dedupe;
                                          a reverse arc meeting an input arc is not counted) */
    uint64_t arcs_added_by_symmetrise; /* reverse arcs symmetrise put in the CSR: with dedupe
                                          only those whose (v,u) the input lacked, without it
                                          every reverse arc (self-loops have none) */
    /* added: */
    int loaded_from_cache; /* 1 when hf_graph_load took the graph from a valid .hfg cache */
};

struct hf_graph_opts {
    const char *format; /* "auto"|"metis"|"mtx"|"dimacs"|"edgelist"|"bin"; NULL = "auto" */
    int symmetrise;     /* add the reverse of every arc (not of self-loops) */
    int drop_self_loops;
    int dedupe;            /* keep one arc per (u,v): the minimum weight */
    const char *cache_dir; /* where the .hfg cache goes; NULL = next to the input; "" = no cache */
    /* added: */
    uint64_t max_nv; /* refuse (HF_ECONFIG) graphs with more vertices; 0 = HF_GRAPH_MAX_NV.
                        An edge list naming id 4e9 otherwise allocates 32 GB of offsets. */
};

/* Loads a graph file into `g`. The format comes from o->format, or with
 * "auto" from the extension: .graph = METIS, .mtx = Matrix Market, .gr =
 * DIMACS, .hfg = binary cache (loaded as stored; the options do not apply),
 * anything else = edge list. `o` may be NULL (auto, no options, cache next to
 * the input).
 *
 * Caching (best effort): a text file's CSR is saved as `path.hfg`, or as
 * `cache_dir/<basename>.<options>.hfg`, and reused while the source's size
 * and mtime, the options and the .hfg version match; a stale or corrupt cache
 * is rebuilt. A directory that cannot be written just means no cache. */
int hf_graph_load(struct hf_graph *g, const char *path, const struct hf_graph_opts *o);

/* Parses a text format held in memory (`len` bytes, need not end in NUL or
 * '\n'). `name` stands for the file in messages and, with format "auto",
 * picks the format by its extension. Never caches. Every text loader goes
 * through here. */
int hf_graph_parse_buffer(struct hf_graph *g, const char *name, const void *data, size_t len,
                          const struct hf_graph_opts *o);

/* Graph500 Kronecker (R-MAT) graph: nv = 2^scale, edge_factor * nv generated
 * edges with initiator a=.57 b=.19 c=.19 (d=.05), a random vertex
 * permutation, symmetrised, self-loops and duplicates dropped. When weighted,
 * each edge draws a weight uniform in (0,1], stored scaled to an integer
 * 1..255 (as float). Deterministic for a seed whatever the thread count.
 * scale 1..31, edge_factor 1..1024. */
int hf_graph_kronecker(struct hf_graph *g, int scale, int edge_factor, uint64_t seed, int weighted);

/* Road-like planar graph: a rows x cols lattice (vertex r*cols + c) whose
 * edges each survive with probability `keep` (HF_GRAPH_GRID_KEEP gives average
 * degree ~2.4), no diagonals. Symmetric; weights are integers 1..1000 when
 * weighted. Not necessarily connected: a lattice edge missing on both sides of
 * a vertex isolates it, as a dead end of a road map would be. Deterministic
 * for a seed whatever the thread count. */
int hf_graph_grid(struct hf_graph *g, uint32_t rows, uint32_t cols, double keep, uint64_t seed,
                  int weighted);

/* Random geometric graph (graph_rgg.c): nv points uniform in the unit
 * square, joined within the radius that gives `degree` neighbours on average
 * away from the border (Delaunay-like at 6: planar, mesh-like, mostly
 * connected). Symmetric, no self-loops; weights integers 1..1000 when
 * weighted. Vertex ids carry no locality. Deterministic for a seed whatever
 * the thread count. nv 1..2^32-1, 0 < degree <= 1000. */
int hf_graph_rgg(struct hf_graph *g, uint64_t nv, double degree, uint64_t seed, int weighted);

/* Writes `g` as a .hfg file: written to a temporary name in the same
 * directory, then renamed, so readers see the old file or the whole new one. */
int hf_graph_write_bin(const struct hf_graph *g, const char *path);

/* Writes `g` as a METIS .graph file (1-based; fmt 1/10/11 when edge/vertex
 * weights are present) for gpmetis and Scotch. HF_EINVAL when METIS could not
 * read it the same way: an arc without its reverse, a self-loop, an edge
 * weight that is not an integer >= 1. Written to a temporary name, renamed. */
int hf_graph_write_metis(const struct hf_graph *g, const char *path);

/* Reads a .hfg file and checks it with hf_graph_check (a corrupt cache must not
 * crash an app). HF_EIO when unreadable, HF_ECONFIG when not a valid .hfg. */
int hf_graph_read_bin(struct hf_graph *g, const char *path);

/* Frees the arrays and zeroes `g`; safe on a zeroed or failed graph. */
void hf_graph_free(struct hf_graph *g);

/* Structural invariants: nv >= 1, offsets non-decreasing from 0 to ne, ids
 * < nv, each list sorted ascending, weights finite and >= 0, base 0 or 1, and
 * when `symmetric` is set, every arc u->v matched by v->u of equal weight.
 * HF_EINVAL with a message naming the first violation. */
int hf_graph_check(const struct hf_graph *g);

/* The degree of vertex v. */
static inline uint64_t hf_graph_degree(const struct hf_graph *g, hf_vid_t v)
{
    return g->offsets[v + 1] - g->offsets[v];
}

#endif
