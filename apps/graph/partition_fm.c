/* partition_fm.c - localized k-way FM refinement of one level, on the host:
 * the hill-climbing that the greedy REFINE passes lack.
 *
 * DESIGN
 * ------
 * The greedy passes of partition_refine.c stop at a partition where no
 * single vertex gains by moving. On road-like grids that local optimum
 * was 1.02-1.12x METIS's cut, the gap growing with the grid: the coarsest
 * graph's partition is 5-10% worse than the one METIS makes inside gpmetis,
 * and the greedy passes keep that gap all the way up (bench/NOTES.md). This
 * pass climbs out of it as KaFFPa's localized k-way FM does: from each
 * boundary vertex not yet locked (in a scrambled order), a local search
 * moves, best gain first, the vertex it holds in a max-heap to the adjacent
 * part it is most connected to, negative gains included, pushes the moved
 * vertex's neighbours with their new gains, and stops after `patience`
 * moves without beating its best cut delta; the moves after that best are
 * rolled back in reverse order. A vertex moved (kept or rolled back) is
 * locked for the rest of the pass, which bounds a pass's work by the
 * boundary's size. Gains in the heap are lazy: a popped entry whose gain
 * changed is pushed again with the new one.
 *
 * Balance: a move goes only to a part with room for the vertex (pw + w <=
 * maxpw), so no move takes a part over the bound, and a rollback returns to
 * a state the search passed through. The level's part weights c->pw stay
 * exact.
 *
 * It runs between rounds (next_load), after a level's greedy passes,
 * serially but for the O(|E|) scan for the boundary that starts each pass
 * (on the main thread's team where next_load's glue runs in parallel: on the
 * 16-core GPU host, FM serial took ~0.9 s of a 24M-vertex grid's 4.8 s), and
 * only on levels whose boundary is a small part of the vertices (meshes, not
 * Kronecker graphs, whose every vertex touches many parts and whose cut is
 * already within the bound; the listing stops once it sees that). Levels
 * of at most HF_PART_FM_SMALL vertices get patient searches and up to
 * HF_PART_FM_PASSES passes (while a pass gains); larger ones one pass of
 * short searches: on the 4M-vertex road grid that pass took 20-45 ms per
 * level on the dev VM, about half of it the boundary scan.
 */
#include <stdlib.h>
#include <string.h>

#include "partition.h"

/* A heap entry: vertex u, with gain g when pushed. */
struct fm_entry {
    int64_t g;
    uint32_t u;
};

/* One FM run on one level: its scratch, reused by every local search. */
struct fm {
    struct hf_partition *c;
    const struct hf_plevel *l;
    int64_t *conn;         /* k: edge weight to each part, -1 when unseen */
    uint32_t *seen;        /* k: the parts seen around the vertex */
    unsigned char *locked; /* nv: moved in this pass (kept or rolled back) */
    struct fm_entry *heap;
    size_t nheap, capheap;
    uint32_t *log_u, *log_from; /* moves of the search, for the rollback */
    size_t nlog, caplog;
    size_t patience; /* moves a search makes past its best before it stops */
};

/* The best move of u: the adjacent part with room that u is most connected
 * to (the lighter of equals), and its gain; HF_PART_NONE when u is interior
 * or no adjacent part has room. */
static uint32_t best_move(struct fm *f, uint32_t u, int64_t *gain)
{
    const struct hf_plevel *l = f->l;
    const struct hf_partition *c = f->c;
    uint32_t a = l->part[u];
    int64_t w = hf__pl_vw(l, u);
    size_t ns = 0;
    int64_t inside = hf__part_tally(l, l->part, u, a, f->conn, f->seen, &ns);
    uint32_t best = HF_PART_NONE;
    for (size_t s = 0; s < ns; s++) {
        uint32_t p = f->seen[s];
        if (c->pw[p] + w > c->maxpw)
            continue;
        if (best == HF_PART_NONE || f->conn[p] > f->conn[best] ||
            (f->conn[p] == f->conn[best] && c->pw[p] < c->pw[best]))
            best = p;
    }
    if (best != HF_PART_NONE)
        *gain = f->conn[best] - inside;
    for (size_t s = 0; s < ns; s++)
        f->conn[f->seen[s]] = -1;
    return best;
}

/* Pushes u with gain g on the max-heap; -1 when out of memory. */
static int heap_push(struct fm *f, uint32_t u, int64_t g)
{
    if (f->nheap == f->capheap) {
        size_t cap = f->capheap ? 2 * f->capheap : 1024;
        struct fm_entry *h = realloc(f->heap, cap * sizeof *h);
        if (!h)
            return -1;
        f->heap = h;
        f->capheap = cap;
    }
    size_t i = f->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (f->heap[p].g >= g)
            break;
        f->heap[i] = f->heap[p];
        i = p;
    }
    f->heap[i] = (struct fm_entry){g, u};
    return 0;
}

/* Takes the entry of the largest gain off a non-empty heap. */
static struct fm_entry heap_pop(struct fm *f)
{
    struct fm_entry top = f->heap[0], last = f->heap[--f->nheap];
    size_t i = 0, n = f->nheap;
    for (;;) {
        size_t ch = 2 * i + 1;
        if (ch >= n)
            break;
        if (ch + 1 < n && f->heap[ch + 1].g > f->heap[ch].g)
            ch++;
        if (f->heap[ch].g <= last.g)
            break;
        f->heap[i] = f->heap[ch];
        i = ch;
    }
    if (n)
        f->heap[i] = last;
    return top;
}

/* Moves u to part `to`, keeping the part weights exact. */
static void move_vertex(struct fm *f, uint32_t u, uint32_t to)
{
    int64_t w = hf__pl_vw(f->l, u);
    uint32_t from = f->l->part[u];
    f->c->pw[from] -= w;
    f->c->pw[to] += w;
    f->l->part[u] = to;
}

/* Doubles the move log's room; -1 when out of memory. */
static int grow_log(struct fm *f)
{
    size_t cap = f->caplog ? 2 * f->caplog : 256;
    uint32_t *u = realloc(f->log_u, cap * sizeof *u);
    if (u)
        f->log_u = u;
    uint32_t *from = u ? realloc(f->log_from, cap * sizeof *from) : NULL;
    if (!from)
        return -1;
    f->log_from = from;
    f->caplog = cap;
    return 0;
}

/* One local search from `s`; returns the cut it saved (>= 0), or -1 when
 * out of memory (the partition is then as before the search). */
static int64_t local_search(struct fm *f, uint32_t s)
{
    const struct hf_plevel *l = f->l;
    int64_t g;
    f->nheap = 0;
    f->nlog = 0;
    if (best_move(f, s, &g) == HF_PART_NONE)
        return 0;
    if (heap_push(f, s, g))
        return -1;
    int64_t delta = 0, best_delta = 0;
    size_t best_len = 0, since = 0;
    int oom = 0;
    while (f->nheap && since < f->patience && !oom) {
        struct fm_entry e = heap_pop(f);
        if (f->locked[e.u])
            continue;
        uint32_t to = best_move(f, e.u, &g);
        if (to == HF_PART_NONE)
            continue;
        if (g != e.g) {
            oom = heap_push(f, e.u, g);
            continue;
        }
        if (f->nlog == f->caplog && grow_log(f)) {
            oom = 1;
            break;
        }
        f->log_u[f->nlog] = e.u;
        f->log_from[f->nlog++] = l->part[e.u];
        move_vertex(f, e.u, to);
        f->locked[e.u] = 1;
        delta += g;
        if (delta > best_delta) {
            best_delta = delta;
            best_len = f->nlog;
            since = 0;
        } else {
            since++;
        }
        for (uint64_t j = l->offsets[e.u]; j < l->offsets[e.u + 1] && !oom; j++) {
            uint32_t v = l->adj[j];
            if (v == e.u || f->locked[v])
                continue;
            if (best_move(f, v, &g) != HF_PART_NONE)
                oom = heap_push(f, v, g);
        }
    }
    if (oom)
        best_len = 0, best_delta = -1;
    while (f->nlog > best_len) {
        f->nlog--;
        move_vertex(f, f->log_u[f->nlog], f->log_from[f->nlog]);
    }
    return best_delta;
}

/* Whether u has a neighbour in another part. */
static int on_boundary(const struct hf_plevel *l, uint64_t u)
{
    for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++)
        if (l->part[l->adj[j]] != l->part[u])
            return 1;
    return 0;
}

/* The level's boundary vertices, ascending, into bnd (grown as needed):
 * their count, or most + 1 once there are more than `most`. The O(|E|) test
 * runs on the main thread's team where the glue does (flag), the listing
 * serially. Returns -1 when out of memory. */
static int64_t find_boundary(const struct hf_plevel *l, uint64_t most, unsigned char *flag,
                             uint32_t **bnd, size_t *capb)
{
    uint64_t n = l->nv, nb = 0;
#pragma omp parallel for schedule(static, 4096) if (hf__part_glue_parallel(n + l->ne))
    for (uint64_t u = 0; u < n; u++)
        flag[u] = (unsigned char)on_boundary(l, u);
    for (uint64_t u = 0; u < n && nb <= most; u++) {
        if (!flag[u])
            continue;
        if (nb == *capb) {
            size_t cap = *capb ? 2 * *capb : 4096;
            uint32_t *b = realloc(*bnd, cap * sizeof *b);
            if (!b)
                return -1;
            *bnd = b;
            *capb = cap;
        }
        (*bnd)[nb++] = (uint32_t)u;
    }
    return (int64_t)nb;
}

int64_t hf__part_fm(struct hf_partition *c, int li)
{
    const struct hf_plevel *l = &c->lv[li];
    size_t k = (size_t)c->k;
    uint64_t n = l->nv;
    struct fm f = {.c = c, .l = l};
    /* Small levels get patient searches and repeated passes (cheap there,
     * and the gains carry down every finer level); large ones one short
     * pass (see DESIGN). */
    int small = n <= HF_PART_FM_SMALL, npass = small ? HF_PART_FM_PASSES : 1;
    f.patience = small ? HF_PART_FM_PATIENCE_SMALL : HF_PART_FM_PATIENCE;
    uint32_t *bnd = NULL;
    size_t capb = 0;
    f.conn = malloc(k * sizeof *f.conn);
    f.seen = malloc(k * sizeof *f.seen);
    f.locked = calloc(n ? n : 1, 1);
    int64_t total = 0;
    if (!f.conn || !f.seen || !f.locked)
        goto out; /* refinement is optional: the greedy passes' partition stands */
    for (size_t p = 0; p < k; p++)
        f.conn[p] = -1;
    uint64_t salt = hf__part_salt(c->seed ^ 0x464d, li);
    for (int pass = 0; pass < npass; pass++) {
        uint64_t most = (uint64_t)(HF_PART_FM_BOUNDARY * (double)n);
        /* f.locked is the scan's flag array until the searches lock vertices. */
        int64_t found = find_boundary(l, most, f.locked, &bnd, &capb);
        if (found < 0)
            goto out;
        uint64_t nb = (uint64_t)found;
        if (nb == 0 || nb > most)
            break; /* nothing to do, or a Kronecker graph's boundary */
        memset(f.locked, 0, n);
        uint64_t step = hf__part_visit_step(salt + (uint64_t)pass, nb);
        int64_t gained = 0;
        for (uint64_t i = 0; i < nb; i++) {
            uint32_t s = bnd[(i * step) % nb];
            if (f.locked[s])
                continue;
            int64_t d = local_search(&f, s);
            if (d < 0) {
                total += gained; /* the searches before it stand */
                goto out;
            }
            gained += d;
        }
        total += gained;
        if (gained == 0)
            break;
    }
out:
    free(bnd);
    free(f.conn);
    free(f.seen);
    free(f.locked);
    free(f.heap);
    free(f.log_u);
    free(f.log_from);
    return total;
}
