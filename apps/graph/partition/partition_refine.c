/* partition_refine.c - the uncoarsening rounds of the partitioner:
 * projection, boundary refinement, the balance pass and the final measure.
 *
 * DESIGN
 * ------
 * Projection is a plain map (a fine vertex takes its coarse vertex's part);
 * part weights do not change, since coarse weights are sums.
 *
 * Refinement is greedy and parallel, in the spirit of the thesis's boundary
 * refinement (ch. 5) and mt-metis: a pass visits every vertex; a boundary
 * vertex u of part a sums its edge weight to each adjacent part, picks the
 * part b it is most connected to, and moves when the gain conn[b] - conn[a]
 * is positive, or zero when b is no heavier than a (on 4elt this takes the
 * cut from 1.06x METIS's to 1.03x: plateau moves open later gains). A move first
 * reserves u's weight in b with a compare-and-swap that never lets b exceed
 * c->maxpw, so the balance bound holds whatever the interleaving. Two
 * neighbours swapping at once could both "gain" and together lose, so a pass
 * moves only towards higher part ids and the next only towards lower ones
 * (mt-metis's rule): two adjacent vertices can then never trade places in one
 * pass. Gains are read from parts that may be changing under the pass, so the
 * cut is never tracked by summing gains; it is measured at the end. These
 * passes only ever take moves that gain (or hold) the cut, so they stop in a
 * local optimum; partition_fm.c, on the host after a level's last pass,
 * climbs out of it. Its seeds are the boundary, which a pass sees anyway
 * (the vertices whose tally finds another part): a pass marks those, and
 * the neighbours of every vertex it moves, in c->bnd, which saves FM its
 * own scan of every arc of the level (on rgg 2^20 about a quarter of FM's
 * time on the large levels: the part of each neighbour is a cache miss).
 * The same marks spare the passes most of their tallies: a fine vertex
 * next to another part after the projection belongs to a coarse vertex
 * next to another part (the arc between them is a coarse arc between
 * different parts), so a level's first pass tallies only the vertices whose
 * coarse vertex the coarser level left marked (c->cbnd, through cmap), and
 * later passes only the vertices marked so far; the rest are interior
 * unless a neighbour moved during the pass, and that neighbour marked them
 * for FM. On rgg 2^20 with 64 parts the boundary is under 1% of a large
 * level's vertices. With no marks to trust (a GPU took a piece of a pass,
 * the balance pass moved vertices after the projection, the coarsest
 * level) a pass tallies every vertex, as GPU kernels always do.
 *
 * The balance pass runs on the host, between rounds, only when a level's
 * parts exceed the bound after the initial partition or a projection (METIS
 * on a coarse graph of heavy vertices may overshoot). It is serial and
 * O(edges): first boundary moves that do not lose cut, then any boundary
 * move, then any vertex to the lightest part that has room, and on the
 * finest level, as a last resort, room made in the lightest part by moving
 * its lighter vertices elsewhere. When even that leaves a part over the
 * bound (heavy coarse vertices) finer levels try again; the bound is
 * checked on the input graph by verify.
 *
 * The measure round recomputes, on the input graph, the cut (every arc whose
 * ends differ, halved) and the part weights: the figures, and what verify
 * compares with partition_ref.c. Only boundary vertices have such arcs, so
 * where level 0's marks hold (c->bnd after its FM) the CPU reads the lists
 * of marked vertices only; a mark missing would show as a cut below the
 * reference's, which verify reports.
 */
#include <stdlib.h>
#include <string.h>

#include "partition_internal.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, x) __atomic_store_n((p), (x), __ATOMIC_RELAXED)

void hf__part_project(struct hf_partition *c, size_t begin, size_t end, int nthreads)
{
    const struct hf_plevel *l = &c->lv[c->cur], *cl = &c->lv[c->cur + 1];
#pragma omp parallel for schedule(static) num_threads(nthreads)
    for (size_t v = begin; v < end; v++)
        l->part[v] = cl->part[l->cmap[v]];
}

int hf__part_refine(struct hf_partition *c, size_t begin, size_t end, int nthreads)
{
    const struct hf_plevel *l = &c->lv[c->cur];
    uint32_t *part = l->part;
    int64_t *pw = c->pw, maxpw = c->maxpw;
    unsigned char *bnd = c->bnd; /* FM's seeds (hf_partition.bnd) */
    /* The vertices worth a tally: on the first pass those whose coarse
     * vertex the coarser level marked, on later ones those marked so far
     * (see DESIGN); all of them when there are no such marks. */
    const unsigned char *coarse =
        c->pass == 0 && c->cbnd && c->cbnd_ok && c->cur + 1 < c->nlev ? c->cbnd : NULL;
    const unsigned char *marked =
        c->pass > 0 && bnd && __atomic_load_n(&c->bnd_ok, __ATOMIC_RELAXED) ? bnd : NULL;
    const uint32_t *cmap = l->cmap;
    int up = c->pass % 2 == 0;
    size_t k = (size_t)c->k;
    uint64_t moves = 0;
    int64_t gains = 0;
    int oom = 0;
#pragma omp parallel num_threads(nthreads) reduction(+ : moves, gains) reduction(| : oom)
    {
        int64_t *conn = malloc(k * sizeof *conn);
        uint32_t *seen = malloc(k * sizeof *seen);
        if (!conn || !seen)
            oom = 1;
        else
            for (size_t p = 0; p < k; p++)
                conn[p] = -1;
#pragma omp for schedule(dynamic, 256)
        for (size_t u = begin; u < end; u++) {
            if (!conn || !seen)
                continue;
            if ((coarse && !coarse[cmap[u]]) || (marked && !LOAD(&marked[u])))
                continue; /* interior since the projection, or the last pass */
            uint32_t a = LOAD(&part[u]);
            size_t ns = 0;
            int64_t inside = hf__part_tally(l, part, u, a, conn, seen, &ns);
            if (ns == 0)
                continue; /* interior */
            if (bnd)
                STORE(&bnd[u], 1);
            uint32_t best = HF_PART_NONE;
            int64_t best_conn = -1;
            for (size_t s = 0; s < ns; s++) {
                uint32_t p = seen[s];
                if ((up && p > a) || (!up && p < a)) {
                    if (conn[p] > best_conn ||
                        (conn[p] == best_conn && LOAD(&pw[p]) < LOAD(&pw[best]))) {
                        best_conn = conn[p];
                        best = p;
                    }
                }
            }
            for (size_t s = 0; s < ns; s++)
                conn[seen[s]] = -1;
            if (best == HF_PART_NONE)
                continue;
            int64_t gain = best_conn - inside, w = hf__pl_vw(l, u);
            /* Zero-gain moves towards a part no heavier than u's own let a
             * boundary drift where a later move gains; they cannot undo
             * themselves at zero gain, since the target is heavier after. */
            if (gain < 0 || (gain == 0 && !(w > 0 && LOAD(&pw[best]) <= LOAD(&pw[a]))))
                continue;
            if (!hf__part_reserve(&pw[best], w, maxpw))
                continue;
            __atomic_fetch_sub(&pw[a], w, __ATOMIC_RELAXED);
            STORE(&part[u], best);
            if (bnd) /* a neighbour seen interior before may be boundary now */
                for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++)
                    STORE(&bnd[l->adj[j]], 1);
            moves++;
            gains += gain;
        }
        free(conn);
        free(seen);
    }
    __atomic_fetch_add(&c->moves, moves, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->gain, gains, __ATOMIC_RELAXED);
    return oom ? hf_fail(HF_ENOMEM, "partition: out of memory for %ld part counters", c->k) : 0;
}

void hf__part_weigh(struct hf_partition *c, int l)
{
    const struct hf_plevel *lv = &c->lv[l];
    memset(c->pw, 0, (size_t)c->k * sizeof *c->pw);
    for (uint64_t v = 0; v < lv->nv; v++)
        c->pw[lv->part[v]] += hf__pl_vw(lv, v);
}

/* One sweep of the balance pass: `mode` 0 boundary moves that lose no cut,
 * 1 any boundary move, 2 any vertex to the lightest part with room. */
static void balance_sweep(struct hf_partition *c, const struct hf_plevel *l, int mode,
                          int64_t *conn)
{
    size_t k = (size_t)c->k;
    for (uint64_t u = 0; u < l->nv; u++) {
        uint32_t a = l->part[u];
        int64_t w = hf__pl_vw(l, u);
        if (c->pw[a] <= c->maxpw || w == 0)
            continue;
        int64_t inside = 0;
        for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++)
            if (l->adj[j] != u)
                conn[l->part[l->adj[j]]] += hf__pl_ew(l, j);
        inside = conn[a];
        uint32_t best = HF_PART_NONE;
        int64_t best_conn = 0;
        for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++) {
            uint32_t p = l->part[l->adj[j]];
            if (p != a && conn[p] > best_conn && c->pw[p] + w <= c->maxpw) {
                best_conn = conn[p];
                best = p;
            }
        }
        for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++)
            conn[l->part[l->adj[j]]] = 0;
        if (best != HF_PART_NONE && mode == 0 && best_conn < inside)
            best = HF_PART_NONE;
        if (best == HF_PART_NONE && mode == 2) {
            for (size_t p = 0; p < k; p++)
                if (p != a && c->pw[p] + w <= c->maxpw &&
                    (best == HF_PART_NONE || c->pw[p] < c->pw[best]))
                    best = (uint32_t)p;
        }
        if (best == HF_PART_NONE)
            continue;
        c->pw[a] -= w;
        c->pw[best] += w;
        l->part[u] = best;
    }
}

/* The lightest part other than a and b whose weight plus w stays within
 * the bound, or HF_PART_NONE. */
static uint32_t room_for(const struct hf_partition *c, int64_t w, uint32_t a, uint32_t b)
{
    uint32_t best = HF_PART_NONE;
    for (uint32_t p = 0; p < (uint32_t)c->k; p++)
        if (p != a && p != b && c->pw[p] + w <= c->maxpw &&
            (best == HF_PART_NONE || c->pw[p] < c->pw[best]))
            best = p;
    return best;
}

/* The last resort, on the finest level only (it is O(|V|) per vertex it
 * places): a vertex u of an overweight part that no part has room for goes
 * to the lightest part b after b's own vertices that fit elsewhere are moved
 * out until u fits, or else trades places with a lighter vertex of a part
 * that can take the difference. This is what fixes a bound that is tight
 * for heavy vertices (all parts a little full, one part a vertex over). */
static void make_room(struct hf_partition *c, const struct hf_plevel *l)
{
    for (uint64_t u = 0; u < l->nv; u++) {
        uint32_t a = l->part[u];
        int64_t w = hf__pl_vw(l, u);
        if (c->pw[a] <= c->maxpw || w == 0 || room_for(c, w, a, a) != HF_PART_NONE)
            continue;
        uint32_t b = HF_PART_NONE;
        for (uint32_t p = 0; p < (uint32_t)c->k; p++)
            if (p != a && (b == HF_PART_NONE || c->pw[p] < c->pw[b]))
                b = p;
        if (b == HF_PART_NONE)
            return;
        for (uint64_t x = 0; x < l->nv && c->pw[b] + w > c->maxpw; x++) {
            int64_t wx = hf__pl_vw(l, x);
            if (l->part[x] != b || wx == 0 || wx >= w)
                continue;
            uint32_t q = room_for(c, wx, a, b);
            if (q == HF_PART_NONE)
                continue;
            l->part[x] = q;
            c->pw[b] -= wx;
            c->pw[q] += wx;
        }
        if (c->pw[b] + w <= c->maxpw) {
            l->part[u] = b;
            c->pw[a] -= w;
            c->pw[b] += w;
            continue;
        }
        /* No room to be made: swap u with a lighter vertex x of a part
         * that can take the difference (a loses w - wx). */
        for (uint64_t x = 0; x < l->nv; x++) {
            uint32_t q = l->part[x];
            int64_t wx = hf__pl_vw(l, x);
            if (q == a || wx == 0 || wx >= w || c->pw[q] - wx + w > c->maxpw)
                continue;
            l->part[x] = a;
            l->part[u] = q;
            c->pw[a] += wx - w;
            c->pw[q] += w - wx;
            break;
        }
    }
}

long hf__part_balance(struct hf_partition *c, int l)
{
    size_t k = (size_t)c->k;
    long over = 0;
    for (size_t p = 0; p < k; p++)
        over += c->pw[p] > c->maxpw;
    if (over == 0)
        return 0;
    int64_t *conn = calloc(k, sizeof *conn);
    if (!conn)
        return over; /* verify will say so if the finest level stays unbalanced */
    for (int mode = 0; mode < 4 && over; mode++) {
        if (mode < 3)
            balance_sweep(c, &c->lv[l], mode, conn);
        else if (l == 0)
            make_room(c, &c->lv[l]);
        over = 0;
        for (size_t p = 0; p < k; p++)
            over += c->pw[p] > c->maxpw;
    }
    free(conn);
    return over;
}

int hf__part_measure(struct hf_partition *c, size_t begin, size_t end, int nthreads)
{
    const struct hf_plevel *l = &c->lv[0];
    const uint32_t *part = l->part;
    size_t k = (size_t)c->k;
    int64_t cut2 = 0;
    int oom = 0;
    /* Level 0's boundary marks, when they hold (see DESIGN). */
    const unsigned char *marked =
        c->bnd && __atomic_load_n(&c->bnd_ok, __ATOMIC_RELAXED) ? c->bnd : NULL;
#pragma omp parallel num_threads(nthreads) reduction(+ : cut2) reduction(| : oom)
    {
        int64_t *w = calloc(k, sizeof *w);
        oom = !w;
#pragma omp for schedule(dynamic, 256)
        for (size_t u = begin; u < end; u++) {
            if (!w)
                continue;
            uint32_t a = part[u];
            w[a] += hf__pl_vw(l, u);
            if (marked && !marked[u])
                continue; /* interior */
            for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++)
                if (part[l->adj[j]] != a)
                    cut2 += hf__pl_ew(l, j);
        }
        for (size_t p = 0; w && p < k; p++)
            if (w[p])
                __atomic_fetch_add(&c->mpw[p], w[p], __ATOMIC_RELAXED);
        free(w);
    }
    __atomic_fetch_add(&c->mcut, cut2, __ATOMIC_RELAXED);
    return oom ? hf_fail(HF_ENOMEM, "partition: out of memory for %ld part weights", c->k) : 0;
}
