/* partition_fm.c - localized k-way FM refinement of one level, on the host:
 * the hill-climbing that the greedy REFINE passes lack.
 *
 * DESIGN
 * ------
 * The greedy passes of partition_refine.c stop at a partition where no
 * single vertex gains by moving. On road-like grids that local optimum
 * was 1.02-1.12x METIS's cut, the gap growing with the grid: the coarsest
 * graph's partition is 5-10% worse than the one METIS makes inside gpmetis,
 * and the greedy passes keep that gap all the way up (9edd91b:bench/NOTES.md). This
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
 * a state the search passed through. The level's part weights c->pw are
 * exact again once the pass ends.
 *
 * It runs between rounds (next_load), after a level's greedy passes, on
 * the main thread's team where next_load's glue runs in parallel: the O(|E|)
 * scan for the boundary that starts each pass (on the 16-core GPU host, FM
 * all serial took ~0.9 s of a 24M-vertex grid's 4.8 s) and the searches
 * themselves (search_pass: each thread searches from seeds it takes in
 * turn, and claims every vertex it moves; a move's weight is reserved in
 * its target and stays counted in its source until the search ends, so
 * rollbacks never overfill a part). Small levels' patient searches run there
 * too, one seed at a time, when their passes' arcs (passes times the
 * level's arcs) reach the glue's threshold: serial, rgg 2^20's one small
 * level (13.7k vertices, 6 passes of ~10k moves, nearly all rolled back)
 * took 19-22 ms of the 16-core GPU host's ~0.076-0.089 s of glue, the
 * largest single piece of it. On the 2-core dev VM with a team of 4 (2
 * cores; the team path) that level's FM went 15.2 -> 8.4 ms (median of 8
 * runs); cut medians over seeds 1-8 stayed within noise of the serial
 * searches' (rgg 2^20, a team of 16, 32 runs: 3318 -> 3284; road 1024^2, 8,
 * 24 runs: 2380 -> 2377; grid 512^2, 4, 16 runs: 1226 -> 1220). FM runs
 * only on levels whose boundary is a small part of the vertices (meshes, not
 * Kronecker graphs, whose every vertex touches many parts and whose cut is
 * already within the bound; the listing stops once it sees that).
 * The first pass's seeds need no scan when the greedy passes ran on CPUs
 * only: they marked the boundary as they went (c->bnd, partition_refine.c),
 * which took FM on rgg 2^20 from ~95 to ~70 ms on the 2-core dev VM. Levels
 * of at most HF_PART_FM_SMALL vertices get patient searches and up to
 * HF_PART_FM_PASSES passes (while a pass gains); larger ones one pass of
 * short searches: on the 4M-vertex road grid that pass took 20-45 ms per
 * level on the dev VM, about half of it the boundary scan.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "partition_internal.h"

/* A heap entry: vertex u, with gain g when pushed. */
struct fm_entry {
    int64_t g;
    uint32_t u;
};

/* A move a search made: u from part `from` to part `to`. */
struct fm_move {
    uint32_t u, from, to;
};

/* One FM search thread on one level: its scratch, reused by every local
 * search it makes. */
struct fm {
    struct hf_partition *c;
    const struct hf_plevel *l;
    int64_t *conn;         /* k: edge weight to each part, -1 when unseen */
    uint32_t *seen;        /* k: the parts seen around the vertex */
    unsigned char *locked; /* nv, shared by a pass's searches: 0, or the mark of the
                              search's thread that moved it (kept or rolled back) */
    unsigned char me;      /* this thread's mark (1 in a serial pass) */
    int shared;            /* other threads search the level at the same time */
    struct fm_entry *heap;
    size_t nheap, capheap;
    struct fm_move *log;   /* moves of the search, for the rollback */
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
        int64_t pw = __atomic_load_n(&c->pw[p], __ATOMIC_RELAXED);
        if (pw + w > c->maxpw)
            continue;
        if (best == HF_PART_NONE || f->conn[p] > f->conn[best] ||
            (f->conn[p] == f->conn[best] && pw < __atomic_load_n(&c->pw[best], __ATOMIC_RELAXED)))
            best = p;
    }
    if (best != HF_PART_NONE)
        *gain = f->conn[best] - inside;
    for (size_t s = 0; s < ns; s++)
        f->conn[f->seen[s]] = -1;
    return best;
}

/* Makes room for one more element in the array *p of *cap elements of
 * `size` bytes holding n (doubling, from `first`); -1 when out of memory. */
static int room_for_one(void **p, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : first;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Pushes u with gain g on the max-heap; -1 when out of memory. */
static int heap_push(struct fm *f, uint32_t u, int64_t g)
{
    if (room_for_one((void **)&f->heap, &f->capheap, f->nheap, sizeof *f->heap, 1024))
        return -1;
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

/* Takes u for this search and moves it to part `to`; 0 when another
 * search holds u or `to` has no room left. Alone, the part weights stay
 * exact. Beside other searches, u is claimed in `locked` first, its weight
 * reserved in `to` (hf__part_reserve) and left counted in its old part too
 * until the search ends (commit_move or undo_move): a part then never looks
 * lighter than it is, so no move and no rollback takes it over the bound. */
static int take_move(struct fm *f, uint32_t u, uint32_t to)
{
    int64_t w = hf__pl_vw(f->l, u);
    uint32_t *part = f->l->part;
    if (!f->shared) {
        f->c->pw[part[u]] -= w;
        f->c->pw[to] += w;
        part[u] = to;
        f->locked[u] = f->me;
        return 1;
    }
    unsigned char free_mark = 0;
    if (!__atomic_compare_exchange_n(&f->locked[u], &free_mark, f->me, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return 0;
    if (!hf__part_reserve(&f->c->pw[to], w, f->c->maxpw))
        return 0; /* locked, not moved: as if moved and rolled back */
    __atomic_store_n(&part[u], to, __ATOMIC_RELAXED);
    return 1;
}

/* Takes back the search's move of u from `from` to `to`. */
static void undo_move(struct fm *f, uint32_t u, uint32_t from, uint32_t to)
{
    int64_t w = hf__pl_vw(f->l, u);
    if (!f->shared) {
        f->c->pw[to] -= w;
        f->c->pw[from] += w;
        f->l->part[u] = from;
        return;
    }
    __atomic_store_n(&f->l->part[u], from, __ATOMIC_RELAXED);
    __atomic_fetch_sub(&f->c->pw[to], w, __ATOMIC_RELAXED);
}

/* Keeps the search's move of u out of `from`: beside other searches, its
 * weight leaves `from` only now. */
static void commit_move(struct fm *f, uint32_t u, uint32_t from)
{
    if (f->shared)
        __atomic_fetch_sub(&f->c->pw[from], hf__pl_vw(f->l, u), __ATOMIC_RELAXED);
}

/* Marks u and its neighbours in the level's boundary marks (hf_partition.bnd):
 * u moved, so they may have become boundary vertices. */
static void mark_moved(struct fm *f, uint32_t u)
{
    unsigned char *bnd = f->c->bnd;
    if (!bnd)
        return;
    __atomic_store_n(&bnd[u], 1, __ATOMIC_RELAXED);
    for (uint64_t j = f->l->offsets[u]; j < f->l->offsets[u + 1]; j++)
        __atomic_store_n(&bnd[f->l->adj[j]], 1, __ATOMIC_RELAXED);
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
        if (__atomic_load_n(&f->locked[e.u], __ATOMIC_RELAXED))
            continue;
        uint32_t to = best_move(f, e.u, &g);
        if (to == HF_PART_NONE)
            continue;
        if (g != e.g) {
            oom = heap_push(f, e.u, g);
            continue;
        }
        if (room_for_one((void **)&f->log, &f->caplog, f->nlog, sizeof *f->log, 256)) {
            oom = 1;
            break;
        }
        uint32_t from = __atomic_load_n(&l->part[e.u], __ATOMIC_RELAXED);
        if (!take_move(f, e.u, to))
            continue;
        f->log[f->nlog++] = (struct fm_move){e.u, from, to};
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
            if (v == e.u || __atomic_load_n(&f->locked[v], __ATOMIC_RELAXED))
                continue;
            if (best_move(f, v, &g) != HF_PART_NONE)
                oom = heap_push(f, v, g);
        }
    }
    if (oom)
        best_len = 0, best_delta = -1;
    while (f->nlog > best_len) {
        const struct fm_move *m = &f->log[--f->nlog];
        undo_move(f, m->u, m->from, m->to);
    }
    for (size_t i = 0; i < best_len; i++) {
        commit_move(f, f->log[i].u, f->log[i].from);
        mark_moved(f, f->log[i].u);
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

/* The vertices u < n whose flag is set, ascending, into bnd (grown as
 * needed): their count, or most + 1 once there are more than `most`.
 * Returns -1 when out of memory. */
static int64_t list_flagged(const unsigned char *flag, uint64_t n, uint64_t most, uint32_t **bnd,
                            size_t *capb)
{
    uint64_t nb = 0;
    for (uint64_t u = 0; u < n && nb <= most; u++) {
        uint64_t word;
        if (u % 8 == 0 && u + 8 <= n && (memcpy(&word, flag + u, 8), word == 0)) {
            u += 7; /* eight unflagged vertices at once: most are, on a mesh's levels */
            continue;
        }
        if (!flag[u])
            continue;
        if (room_for_one((void **)bnd, capb, nb, sizeof **bnd, 4096))
            return -1;
        (*bnd)[nb++] = (uint32_t)u;
    }
    return (int64_t)nb;
}

/* The level's boundary vertices, as list_flagged lists them. The O(|E|)
 * test runs on the main thread's team where the glue does (flag), the
 * listing serially. */
static int64_t find_boundary(const struct hf_plevel *l, uint64_t most, unsigned char *flag,
                             uint32_t **bnd, size_t *capb)
{
    uint64_t n = l->nv;
#pragma omp parallel for schedule(static, 4096) if (hf__part_glue_parallel(n + l->ne))
    for (uint64_t u = 0; u < n; u++)
        flag[u] = (unsigned char)on_boundary(l, u);
    return list_flagged(flag, n, most, bnd, capb);
}

/* Frees a search's scratch (not the shared locked array). */
static void fm_free(struct fm *f)
{
    free(f->conn);
    free(f->seen);
    free(f->heap);
    free(f->log);
}

/* The scratch of one search thread: conn all -1. 0, or -1 when out of memory. */
static int fm_init(struct fm *f, size_t k)
{
    f->conn = malloc(k * sizeof *f->conn);
    f->seen = malloc(k * sizeof *f->seen);
    if (!f->conn || !f->seen)
        return -1;
    for (size_t p = 0; p < k; p++)
        f->conn[p] = -1;
    return 0;
}

/* One pass's searches from the boundary bnd[nb], in the scrambled order of
 * `step`: on this thread alone, or on the main thread's team when `team`.
 * There each thread takes seeds in turn, `grain` at a time, and searches as
 * a serial pass would, claiming every vertex it moves (take_move); a search
 * then reads parts other searches are moving, so the gains it adds up are
 * estimates, as in the parallel greedy passes, and every move still goes
 * only to a part with room. Returns the estimated cut saved; sets *oom when
 * a thread ran out of memory (its last search undone, the searches before
 * it kept, its later seeds skipped). */
static int64_t search_pass(struct hf_partition *c, const struct hf_plevel *l, unsigned char *locked,
                           size_t patience, int team, int grain, const uint32_t *bnd, uint64_t nb,
                           uint64_t step, int *oom)
{
    int64_t gained = 0;
    int failed = 0;
#pragma omp parallel if (team) reduction(+ : gained) reduction(| : failed)
    {
        struct fm t = {.c = c, .l = l, .locked = locked, .shared = team, .patience = patience,
                       .me = (unsigned char)(omp_get_thread_num() + 1)};
        int stop = fm_init(&t, (size_t)c->k) != 0;
        failed |= stop;
#pragma omp for schedule(dynamic, grain)
        for (uint64_t i = 0; i < nb; i++) {
            uint32_t s = bnd[(i * step) % nb];
            if (stop || __atomic_load_n(&locked[s], __ATOMIC_RELAXED))
                continue;
            int64_t d = local_search(&t, s);
            if (d < 0)
                stop = failed = 1;
            else
                gained += d;
        }
        fm_free(&t);
    }
    *oom = failed;
    return gained;
}

int64_t hf__part_fm(struct hf_partition *c, int li)
{
    const struct hf_plevel *l = &c->lv[li];
    uint64_t n = l->nv;
    /* Small levels get patient searches and repeated passes (cheap there,
     * and the gains carry down every finer level); large ones one short
     * pass (see DESIGN). */
    int small = n <= HF_PART_FM_SMALL, npass = small ? HF_PART_FM_PASSES : 1;
    size_t patience = small ? HF_PART_FM_PATIENCE_SMALL : HF_PART_FM_PATIENCE;
    /* The searches run on the main thread's team where the glue does, for
     * a level's work: its arcs per pass (a small level's pass moves, and
     * mostly rolls back, about 0.7 of its vertices). Large levels: short
     * searches from a boundary of thousands of vertices (on the 16-core GPU
     * host, serial FM was 0.11-0.13 s of rgg 2^20's 0.30 s). Small levels:
     * 6 passes of ~500 searches, a few of them 200+ moves long, so seeds go
     * one at a time (see DESIGN). A thread's mark is a byte. */
    int team = hf__part_glue_parallel((uint64_t)npass * (n + l->ne)) && omp_get_max_threads() < 255;
    int grain = small ? 1 : 16;
    uint32_t *bnd = NULL;
    size_t capb = 0;
    /* The searches' claims go where the coarser level's marks were (cbnd):
     * the level's first greedy pass was their last reader, and the next
     * finer level's refinement overwrites them (begin_refine). A fresh
     * array per level faulted in its pages each time (n bytes, serially,
     * on every level of every run). */
    int own = !c->cbnd;
    unsigned char *locked = own ? calloc(n ? n : 1, 1) : c->cbnd;
    c->cbnd_ok = 0;
    int64_t total = 0;
    if (!locked)
        goto out; /* refinement is optional: the greedy passes' partition stands */
    uint64_t salt = hf__part_salt(c->seed ^ 0x464d, li);
    for (int pass = 0; pass < npass; pass++) {
        uint64_t most = (uint64_t)(HF_PART_FM_BOUNDARY * (double)n);
        /* The first pass's seeds are the greedy passes' boundary marks when
         * every pass left them (the refine rounds ran on CPUs only), a
         * superset of the boundary whose interior vertices a search drops
         * at once (best_move). Otherwise, after a pass of FM's own moves,
         * and when the marks are too many (the superset of a small level
         * whose passes moved many vertices may pass `most` where the
         * boundary does not), the arcs are scanned: the first pass's scan
         * into the marks (the exact boundary), a later one into locked, the
         * scan's flag array until the searches lock vertices. */
        int64_t found = -1;
        if (pass == 0 && c->bnd && __atomic_load_n(&c->bnd_ok, __ATOMIC_RELAXED))
            found = list_flagged(c->bnd, n, most, &bnd, &capb);
        if (found < 0 || (uint64_t)found > most) {
            unsigned char *flag = pass == 0 && c->bnd ? c->bnd : locked;
            found = find_boundary(l, most, flag, &bnd, &capb);
            if (found >= 0 && flag == c->bnd)
                c->bnd_ok = 1;
        }
        if (found < 0)
            goto out;
        uint64_t nb = (uint64_t)found;
        if (nb == 0 || nb > most)
            break; /* nothing to do, or a Kronecker graph's boundary */
        memset(locked, 0, n);
        uint64_t step = hf__part_visit_step(salt + (uint64_t)pass, nb);
        int oom;
        int64_t gained = search_pass(c, l, locked, patience, team, grain, bnd, nb, step, &oom);
        total += gained;
        if (oom || gained == 0)
            break;
    }
out:
    free(bnd);
    if (own)
        free(locked);
    return total;
}
