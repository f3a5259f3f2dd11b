/* partition.c - multilevel k-way graph partitioning (issue 14): the hetfarm
 * template filled in, one task-farm round per phase step.
 *
 * DESIGN
 * ------
 * The thesis design (Goodarzi, ch. 4-5): coarsen the graph level by level by
 * heavy-edge matching, partition the coarsest graph, then uncoarsen by
 * projecting the parts back and refining each level's boundary. Every step
 * that touches a whole level is a round whose units are that level's
 * vertices and whose chunks cost their edges (hf_chunk.work = edges +
 * vertices), so the scheduler spreads it over the CPU teams like any other
 * load:
 *
 *   per coarsening level   MATCH -> RESOLVE [-> TWOHOP] -> CONTRACT
 *   coarsest level         initial partition on the host (METIS), balance,
 *                          REFINE passes
 *   per finer level        PROJECT -> REFINE x up to HF_PART_REFINE_PASSES,
 *                          then localized FM on the host (partition_fm.c)
 *   finally                MEASURE (cut and part weights on the input graph)
 *
 * next_load is the enactor: it does the glue between rounds (the
 * prefix sums of the coarse map and list slots, packing a coarse CSR, the
 * balance pass) and picks the next round. Coarsening stops at coarsen_to
 * = min(max(n / (20 log2 k), 30 k), HF_PART_COARSEST k) vertices (METIS's
 * k-way target, capped: see partition_internal.h), or when a
 * level keeps more than HF_PART_STALL of its vertices (a stalled matching),
 * or after HF_PART_MAX_LEVELS levels. That level is where the run switches
 * to the CPU only: the coarsest graph's partition (partition_initial.c) runs
 * in next_load on the host. Refinement on a level stops after two passes
 * (one each way) that together moved at most HF_PART_REFINE_QUIET of its
 * vertices or gained less than HF_PART_REFINE_GAIN of the estimated cut,
 * or after HF_PART_REFINE_PASSES passes; a level of more than
 * HF_PART_FM_SMALL vertices may stop after its first pass by the same test,
 * and a level of at most HF_PART_FM_SMALL vertices stops after two: the
 * patient FM that follows does the rest (their 3rd-6th passes were 9-14
 * rounds of rgg 2^20 or road 2048^2 for no cut; 9edd91b:bench/NOTES.md).
 * Then the host's localized FM (partition_fm.c, in next_load, on the main
 * thread's team where the glue runs in parallel) takes
 * the level out of the greedy passes' local optimum with negative-gain moves
 * and rollback: on road-like grids the greedy passes alone ended 1.02-1.12x
 * METIS's cut, growing with the grid, because every level kept the
 * coarsest partition's extra 5-10% (9edd91b:bench/NOTES.md); with FM 0.92-0.97x.
 * On large levels the second greedy pass bought less than FM's pass, which
 * costs about as much, so it goes.
 *
 * Data lives in host memory. GPUs run the coarsening rounds MATCH, RESOLVE
 * and CONTRACT (partition_cuda.cu), the REFINE passes and the MEASURE
 * (partition_refine_cuda.cu): each level's CSR is made during the run, so it
 * is not READONLY shared data (uploaded once, before round 0); instead a GPU
 * uploads a level's CSR with its first piece of that level (a coarse level's
 * lists from the contraction's pinned slots while they still hold them:
 * hf_partition.slots_level) and keeps every
 * level from its coarsening to the end of the measure (next_load calls
 * hf__part_cuda_release then): released at the end of each level's
 * coarsening, every refinement round uploaded its level again, from
 * pageable memory (road 2048^2, CPU + H100: 20 ms of a level-0 refinement
 * round's 21, for 0.2 ms of kernel). A GPU's piece
 * copies its results back into the host arrays the CPU works on (its range
 * of match and its claims on vertices beyond it, its coarse lists, its
 * refinement moves, each reserved in the host's part weights, its sums),
 * as an OWNED shared array would, so the host glue in next_load reads the
 * same arrays whoever ran the chunks. TWOHOP and PROJECT have no GPU
 * kernel: a GPU that takes their chunks runs the CPU code on its own host
 * thread (one core); with a CPU team in the run the load is cpu_only, so
 * the GPUs sit those rounds out and the team runs them. Kernels for both
 * were tried and were slower than that core (road grid 2048^2 on an H100:
 * PROJECT's uploads of the map and the coarser parts 0.10 s against
 * 0.02 s; TWOHOP 0.22 s against 0.08 s, its
 * leftovers spinning on the slot they share, a quadratic contention on a
 * Kronecker graph's isolated vertices: 1.1 s). Without a real GPU in
 * the run (ngpu = 0) nothing of this is touched: the rounds, their chunks
 * and the figures are those of a CPU-only build. Every round's level and
 * phase go to results.json (bench/graph/partition_phases.py sums them); with
 * a GPU, the GPUs' share of each coarsening level's work is kept (collect)
 * and goes there too: per round (gpu_share) and per run (the share
 * of all coarsening, of the first and the last level, and the first level
 * the GPUs took less than half of: where the run switched to the CPU).
 *
 * The standalone measurement runs round 0 (a sample of its chunks) before the
 * run proper, so next_load(round 0) rebuilds all state from the input graph.
 * Simulated runs must execute their bundles ([run] execute = yes, as for
 * the other graph apps): each level is made by the previous level's real
 * matching; without execution next_load refuses with a message.
 *
 * Weights: METIS-format vertex and edge weights are used; edge weights must
 * be integers (as gpmetis reads them). When every vertex weight is 0, balance
 * counts vertices (any partition balances zero weights; this one still
 * spreads the vertices). The balance bound is maxpw = floor((1 + imbalance)
 * total / k), what tests/partition_check.py accepts. Inputs for which no
 * partition can meet it (a vertex heavier than maxpw, total > k maxpw, so
 * also k > |V|) are refused in create, naming the key. Beyond those two
 * tests, meeting the bound is bin packing: when vertex weights come close to
 * maxpw, the greedy balance pass may fail where a partition exists (seen in
 * a random test before the last-resort moves of partition_refine.c) or
 * where none does ({1, 2, 3, 3, 3} into 3 parts of 4); verify then fails
 * with HF_EVERIFY naming the heaviest part and the bound, and no part file
 * is written.
 *
 * The same rounds run in-process through hf__partition_graph (one CPU team,
 * each round one bundle, verified), for apps that need a partition inside
 * their own run: graph_place.c's [load] placement = partition.
 *
 * Determinism: `seed` fixes the tie-breaks and METIS, but which claim wins a
 * matching conflict and the order of concurrent refinement moves depend on
 * how threads and devices interleave, so two runs may differ by a few
 * percent of cut (both checked); with cpu = 1 and a main thread's team of
 * fewer than 4 (OMP_NUM_THREADS; from 4 up FM's searches run side by side,
 * partition_fm.c), repeated runs of 4elt gave the same partition (bundle
 * boundaries, which the scheduler picks, still change the visiting order).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "partition_internal.h"

#ifdef HF_HAVE_CUDA
#include "hf_cuda.h"
#endif

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Checks the input's weights (integral edge weights, a bound that can be met)
 * and derives the balance bound and the coarsening target. */
static int check_weights(struct hf_partition *c, const char *where)
{
    const struct hf_graph *g = &c->ga.g;
    if (g->weights)
        for (uint64_t u = 0; u < g->nv; u++)
            for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++) {
                float w = g->weights[j];
                if (w != floorf(w) || w > (float)INT32_MAX)
                    return hf_fail(HF_ECONFIG,
                                   "%s: edge %llu-%u has weight %g: the partitioner takes "
                                   "integer edge weights (as METIS does)",
                                   g->source_desc, (unsigned long long)u + (uint64_t)g->base,
                                   g->adj[j] + (unsigned)g->base, (double)w);
            }
    int64_t total = 0, heaviest = 0;
    uint64_t hv = 0;
    for (uint64_t v = 0; v < g->nv; v++) {
        int64_t w = g->vwgt ? g->vwgt[v] : 1;
        total += w;
        if (w > heaviest) {
            heaviest = w;
            hv = v;
        }
    }
    c->unit_vw = total == 0;
    if (c->unit_vw) {
        total = (int64_t)g->nv;
        heaviest = 1;
    }
    c->total_w = total;
    c->maxpw = (int64_t)floor((1.0 + c->imbalance) * (double)total / (double)c->k + 1e-9);
    if ((uint64_t)c->k > g->nv)
        return hf_fail(HF_ECONFIG, "%s: [load] parts = %ld: the graph %s has only %llu vertices",
                       where, c->k, g->source_desc, (unsigned long long)g->nv);
    if (heaviest > c->maxpw)
        return hf_fail(HF_ECONFIG,
                       "%s: [load] parts = %ld, imbalance = %g: vertex %llu weighs %lld, more "
                       "than a part may hold (%lld = (1 + imbalance) * %lld / parts): no "
                       "partition meets the bound",
                       where, c->k, c->imbalance, (unsigned long long)hv + (uint64_t)g->base,
                       (long long)heaviest, (long long)c->maxpw, (long long)total);
    if (total > (int64_t)c->k * c->maxpw)
        return hf_fail(HF_ECONFIG,
                       "%s: [load] parts = %ld, imbalance = %g: parts of at most %lld cannot "
                       "hold a total weight of %lld: no partition meets the bound (raise "
                       "imbalance)",
                       where, c->k, c->imbalance, (long long)c->maxpw, (long long)total);
    double lg = c->k > 1 ? log2((double)c->k) : 1.0;
    double to = fmin(fmax((double)g->nv / (20.0 * lg), 30.0 * (double)c->k),
                     HF_PART_COARSEST * (double)c->k);
    c->coarsen_to = (uint64_t)to;
    c->maxvwgt = (int64_t)(1.5 * (double)total / to);
    if (c->maxvwgt < 1)
        c->maxvwgt = 1;
    return 0;
}

static int partition_create(void **ctx, hf_config_t cfg)
{
    struct hf_partition *c = calloc(1, sizeof *c);
    if (!c)
        return hf_fail(HF_ENOMEM, "partition: out of memory");
    *ctx = c;
    int sym;
    long seed;
    const char *obj;
    int rc = hf_config_bool(cfg, "load", "symmetrise", 1, &sym);
    if (!rc)
        rc = hf_config_long(cfg, "load", "parts", 64, 1, INT32_MAX, &c->k);
    if (!rc)
        rc = hf_config_double(cfg, "load", "imbalance", 0.03, 0.0, 10.0, &c->imbalance);
    if (!rc)
        rc = hf_config_long(cfg, "load", "seed", 1, 0, __LONG_MAX__, &seed);
    if (!rc)
        rc = hf_config_str(cfg, "load", "objective", "cut", &obj);
    if (rc)
        return rc;
    c->seed = (uint64_t)seed;
    if (strcmp(obj, "cut") != 0)
        return hf_fail(HF_ECONFIG,
                       "%s: [load] objective = %s: only cut (the edge cut) is "
                       "supported",
                       hf_config_where(cfg, "load", "objective"), obj);
    if (!sym)
        return hf_fail(HF_ECONFIG,
                       "%s: [load] symmetrise = no: partitioning needs an undirected graph "
                       "(leave symmetrise = yes)",
                       hf_config_where(cfg, "load", "symmetrise"));
    if ((rc = hf__gapp_create(&c->ga, cfg, 0, 0)))
        return rc;
    if (!c->ga.g.symmetric)
        return hf_fail(HF_ECONFIG,
                       "%s: partition: the graph %s is directed: partitioning needs "
                       "an undirected one",
                       hf_config_path(cfg), c->ga.g.source_desc);
    if (c->ga.g.nv > UINT32_MAX - 1)
        return hf_fail(HF_ECONFIG, "partition: %llu vertices: at most 2^32 - 2",
                       (unsigned long long)c->ga.g.nv);
    return check_weights(c, hf_config_where(cfg, "load", "parts"));
}

/* With a GPU in the run, everything a GPU piece copies to or from the host
 * is pinned here, in setup, as the contraction's slots are:
 * - level 0's offsets and lists, a copy of the input's: the GPUs upload level
 *   0 in their first MATCH piece, and from the loader's pageable arrays that
 *   upload took 6.8-8.6 ms of rgg 2^20's first round on an H200 (33 MB; about
 *   0.7 ms at the link's speed);
 * - the room the per-level arrays come from (hf_partition.pin): level 0's
 *   match, cmap and parts, the leaders, and 1.5x the input's vertices more of
 *   levels (match, cmap, parts, weights);
 * - the slots' starts (ub) and the lists' lengths (cdeg): a GPU builds a
 *   coarse level from them and the slots (partition_cuda.cu), and its
 *   CONTRACT pieces upload ub and copy their lengths back; from pageable
 *   memory, ub and the level's offsets (16 bytes a coarse vertex at 4-10 GB/s)
 *   would take about as long as the slots themselves (12 bytes a fine arc at
 *   ~50 GB/s) on rgg 2^20 of degree 6 (estimated, not measured);
 * - the MATCH pieces' claims (hf_partition.claims): a round's GPU pieces
 *   cover each vertex once, a claim each at most, plus a region's head per
 *   piece.
 * A CPU-only run allocates none of it and keeps its malloc'd arrays. */
static int pin_for_gpus(struct hf_partition *c, const struct hf_devices *devs)
{
    const struct hf_graph *g = &c->ga.g;
    struct hf_plevel *l = &c->lv[0];
    uint64_t *off = hf_host_alloc(devs, (g->nv + 1) * sizeof *off);
    uint32_t *adj = hf_host_alloc(devs, (g->ne ? g->ne : 1) * sizeof *adj);
    if (!off || !adj) {
        hf_host_free(off);
        hf_host_free(adj);
        return hf_fail(HF_ENOMEM, "partition: out of memory for a pinned copy of %llu arcs",
                       (unsigned long long)g->ne);
    }
#pragma omp parallel for schedule(static)
    for (uint64_t v = 0; v <= g->nv; v++)
        off[v] = g->offsets[v];
#pragma omp parallel for schedule(static)
    for (uint64_t j = 0; j < g->ne; j++)
        adj[j] = g->adj[j];
    l->offsets = off;
    l->adj = adj;
    c->input_pinned = 1;
    c->pin_cap = (size_t)g->nv * (3 * sizeof(uint32_t) + sizeof(uint32_t)) +
                 (size_t)(1.5 * (double)g->nv) * (3 * sizeof(uint32_t) + sizeof(int64_t)) +
                 16 * HF_PART_PIN_ALIGN;
    c->claims_cap = g->nv + 2 * HF_PART_CLAIM_REGIONS;
    c->pin = hf_host_alloc(devs, c->pin_cap);
    c->ub_pinned = hf_host_alloc(devs, (g->nv + 1) * sizeof *c->ub_pinned);
    c->cdeg_pinned = hf_host_alloc(devs, (g->nv ? g->nv : 1) * sizeof *c->cdeg_pinned);
    c->claims = hf_host_alloc(devs, c->claims_cap * sizeof *c->claims);
    if (!c->pin || !c->ub_pinned || !c->cdeg_pinned || !c->claims)
        return hf_fail(HF_ENOMEM, "partition: out of memory for the pinned arrays of %llu "
                                  "vertices", (unsigned long long)g->nv);
    return 0;
}

/* Frees what pin_for_gpus made (teardown, after every level is gone). */
static void free_pinned(struct hf_partition *c)
{
    hf_host_free(c->pin);
    hf_host_free(c->claims);
    hf_host_free(c->ub_pinned);
    hf_host_free(c->cdeg_pinned);
    if (c->input_pinned) {
        hf_host_free(c->lv[0].offsets);
        hf_host_free(c->lv[0].adj);
    }
}

/* Level 0 borrows the input's CSR (a pinned copy of it with a GPU in the
 * run) and holds its weights as integers. */
static int partition_setup(void *ctx, const struct hf_devices *devs)
{
    struct hf_partition *c = ctx;
    const struct hf_graph *g = &c->ga.g;
    struct hf_plevel *l = &c->lv[0];
    c->executes = devs->executes;
    c->ndev = devs->count;
    int rc = hf__gapp_setup(&c->ga, devs, 0);
    if (rc)
        return rc;
    c->ngpu = 0;
    if (!(c->dev_gpu = calloc((size_t)devs->count, 1)) ||
        !(c->gpu = calloc((size_t)devs->count, sizeof *c->gpu)))
        return hf_fail(HF_ENOMEM, "partition: out of memory");
    for (int d = 0; d < devs->count; d++) {
        c->dev_gpu[d] = devs->dev[d].kind == HF_DEV_CUDA;
        c->ngpu += c->dev_gpu[d];
    }
    l->nv = g->nv;
    l->ne = g->ne;
    l->made = ++c->levels_made;
    l->offsets = g->offsets;
    l->adj = g->adj;
    if (c->ngpu && (rc = pin_for_gpus(c, devs)))
        return rc;
    size_t k = (size_t)c->k;
    if (!(l->match = hf__part_take(c, g->nv * sizeof *l->match)) ||
        !(l->cmap = hf__part_take(c, g->nv * sizeof *l->cmap)) ||
        !(c->wait = malloc((g->nv + 1) * sizeof *c->wait)) ||
        !(c->bnd = malloc(g->nv ? g->nv : 1)) || !(c->cbnd = malloc(g->nv ? g->nv : 1)) ||
        !(c->pw = calloc(k, sizeof *c->pw)) || !(c->mpw = calloc(k, sizeof *c->mpw)))
        return hf_fail(HF_ENOMEM, "partition: out of memory for %llu vertices",
                       (unsigned long long)g->nv);
    c->pin_base = c->pin_used; /* level 0's match and cmap stay for every run */
    /* The contraction's list slots, for every level at once: pinned with a
     * GPU in the run, so that its pieces' coarse lists come back at the
     * link's speed (from pageable memory, faulted in level by level, a
     * Kronecker graph's lists came back at ~1 GB/s: 0.38 s of a 0.40 s round
     * on an H100). */
    c->tcap = g->ne;
    c->slots_level = -1;
    if (!(c->tadj = hf_host_alloc(devs, (g->ne ? g->ne : 1) * sizeof *c->tadj)) ||
        !(c->tew = hf_host_alloc(devs, (g->ne ? g->ne : 1) * sizeof *c->tew)))
        return hf_fail(HF_ENOMEM, "partition: out of memory for %llu coarse arc slots",
                       (unsigned long long)g->ne);
    if (g->weights) {
        if (!(l->ew = malloc(g->ne * sizeof *l->ew)))
            return hf_fail(HF_ENOMEM, "partition: out of memory for %llu edge weights",
                           (unsigned long long)g->ne);
        for (uint64_t j = 0; j < g->ne; j++)
            l->ew[j] = (int64_t)g->weights[j];
    }
    if (g->vwgt && !c->unit_vw) {
        if (!(l->vw = malloc(g->nv * sizeof *l->vw)))
            return hf_fail(HF_ENOMEM, "partition: out of memory for %llu vertex weights",
                           (unsigned long long)g->nv);
        for (uint64_t v = 0; v < g->nv; v++)
            l->vw[v] = g->vwgt[v];
    }
    return 0;
}

/* Frees everything the GPUs hold (a run with GPUs). */
static void release_gpu_levels(struct hf_partition *c)
{
#ifdef HF_HAVE_CUDA
    if (c->ngpu)
        hf__part_cuda_release(c);
#else
    (void)c;
#endif
}

/* Frees every level above the input and level 0's parts: back to round 0. */
static void reset_levels(struct hf_partition *c)
{
    release_gpu_levels(c);
    for (int i = 1; i < c->nlev; i++) {
        struct hf_plevel *l = &c->lv[i];
        free(l->offsets);
        free(l->adj);
        free(l->ew);
        hf__part_give(c, l->vw);
        hf__part_give(c, l->match);
        hf__part_give(c, l->cmap);
        hf__part_give(c, l->part);
        memset(l, 0, sizeof *l);
    }
    hf__part_give(c, c->lv[0].part);
    c->lv[0].part = NULL;
    hf__part_scratch_free(c);
    c->pin_used = c->pin_base; /* every level above setup's is gone */
    c->nclaim_regions = 0;     /* a round cut short leaves no claims behind */
    c->claims_used = 0;
    c->nlev = 1;
    c->cur = 0;
}

static int alloc_part(struct hf_partition *c, int l)
{
    hf__part_give(c, c->lv[l].part);
    if (!(c->lv[l].part = hf__part_take(c, c->lv[l].nv * sizeof *c->lv[l].part)))
        return hf_fail(HF_ENOMEM, "partition: out of memory for the parts of level %d", l);
    return 0;
}

/* A level's refinement starts with no boundary marks of its own; the marks
 * of the level before become the coarser level's (cbnd), usable when
 * `projected` says the parts are that level's projected unchanged
 * (hf_partition.bnd). */
static void begin_refine(struct hf_partition *c, int projected)
{
    unsigned char *spare = c->cbnd;
    c->cbnd = c->bnd;
    c->cbnd_ok = projected && c->bnd_ok;
    c->bnd = spare;
    memset(c->bnd, 0, c->lv[c->cur].nv);
    c->bnd_ok = 1;
    c->phase = HF_PP_REFINE;
    c->level_gen++; /* refinement of another level: a GPU's copy is stale */
    c->pass = 0;
    c->moves = 0;
    c->last_moves = 0;
    c->gain = 0;
    c->last_gain = 0;
}

/* The coarsest level: partitioned and balanced on the host, then projected. */
static int start_initial(struct hf_partition *c)
{
    int l = c->cur, rc;
    c->t_init0 = now_s();
    if ((rc = alloc_part(c, l)) || (rc = hf__part_initial(c, l)))
        return rc;
    hf__part_weigh(c, l);
    hf__part_balance(c, l);
    c->coarsest_nv = c->lv[l].nv;
    c->cut_est = c->initial_cut;
    c->t_init1 = now_s();
    begin_refine(c, 0); /* the coarsest level too: the balance pass may have moved vertices */
    return 0;
}

/* A level's matching starts with every vertex unmatched (on the main
 * thread's team where the glue runs there: a new level's first touch). */
static void begin_match(struct hf_partition *c)
{
    struct hf_plevel *l = &c->lv[c->cur];
#pragma omp parallel for schedule(static) if (hf__part_glue_parallel(l->nv))
    for (uint64_t v = 0; v < l->nv; v++)
        l->match[v] = HF_PART_NONE;
    c->phase = HF_PP_MATCH;
    c->level_gen++; /* a GPU's copy of the level before is stale */
}

/* A two-hop round starts with every slot empty (on the main thread's team
 * where the glue runs there, as begin_match: serially, the slots of rgg
 * 2^20's level 1, 2.3 MB touched for the first time in the run, took 0.8 ms
 * of the dev VM's glue; the glue after level 1's resolve round, which is this
 * reset, took 1.3-1.6 ms on the 16-core H200 host). */
static void begin_twohop(struct hf_partition *c)
{
    uint64_t n = c->lv[c->cur].nv;
#pragma omp parallel for schedule(static) if (hf__part_glue_parallel(n))
    for (uint64_t v = 0; v <= n; v++)
        c->wait[v] = HF_PART_NONE;
    c->phase = HF_PP_TWOHOP;
}

/* Writes one part id per line, vertex order, to a temporary name then renamed. */
static int write_parts(const struct hf_partition *c)
{
    const char *path = c->ga.out_path;
    if (!path)
        return 0;
    size_t plen = strlen(path) + 32;
    char *tmp = malloc(plen);
    if (!tmp)
        return hf_fail(HF_ENOMEM, "partition: out of memory");
    snprintf(tmp, plen, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        int e = errno;
        free(tmp);
        return hf_fail(HF_EIO, "[load] out = %s: cannot write the partition: %s", path,
                       strerror(e));
    }
    static char iobuf[1 << 20]; /* next_load runs on one thread at a time */
    setvbuf(f, iobuf, _IOFBF, sizeof iobuf);
    const uint32_t *part = c->lv[0].part;
    for (uint64_t v = 0; v < c->lv[0].nv; v++)
        fprintf(f, "%u\n", part[v]);
    int bad = ferror(f) | (fclose(f) != 0);
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        return hf_fail(HF_EIO, "[load] out = %s: cannot write the partition: %s", path,
                       strerror(e));
    }
    free(tmp);
    return 0;
}

/* Whether level l's refinement takes another greedy pass (see DESIGN). */
static int another_pass(const struct hf_partition *c, const struct hf_plevel *l)
{
    if (c->pass + 1 >= HF_PART_REFINE_PASSES)
        return 0;
    if (l->nv <= HF_PART_FM_SMALL)
        return c->pass == 0; /* two passes, then the patient FM */
    if ((double)(c->moves + c->last_moves) <= HF_PART_REFINE_QUIET * (double)l->nv)
        return 0;
    return c->pass < 3 ||
           (double)(c->gain + c->last_gain) > HF_PART_REFINE_GAIN * (double)c->cut_est;
}

/* Picks the round after the one that just ran, doing the host work between
 * them. Returns 1 when there is another round, 0 when the partition is done. */
static int advance(struct hf_partition *c)
{
    struct hf_plevel *l = &c->lv[c->cur];
    int rc;
    switch (c->phase) {
    case HF_PP_MATCH:
        hf__part_apply_claims(c);
        c->phase = HF_PP_RESOLVE;
        c->unmatched = 0;
        return 1;
    case HF_PP_RESOLVE:
        if ((double)c->unmatched > HF_PART_TWOHOP * (double)l->nv) {
            begin_twohop(c);
            return 1;
        }
        __attribute__((fallthrough)); /* no two-hop round */
    case HF_PP_TWOHOP:
        if ((rc = hf__part_build_cmap(c)))
            return rc;
        c->phase = HF_PP_CONTRACT;
        return 1;
    case HF_PP_CONTRACT: {
        if ((rc = hf__part_pack(c)))
            return rc;
        c->lv[c->cur + 1].made = ++c->levels_made; /* the GPUs keep this level's CSR */
        uint64_t before = l->nv;
        c->nlev++;
        c->cur++;
        c->coarsened++;
        uint64_t nc = c->lv[c->cur].nv;
        if (nc <= c->coarsen_to || (double)nc > HF_PART_STALL * (double)before ||
            c->nlev == HF_PART_MAX_LEVELS)
            return (rc = start_initial(c)) ? rc : 1;
        begin_match(c);
        return 1;
    }
    case HF_PP_PROJECT: {
        hf__part_give(c, c->lv[c->cur + 1].part);
        c->lv[c->cur + 1].part = NULL;
        int over = 0; /* the balance pass will move vertices */
        for (long p = 0; p < c->k; p++)
            over |= c->pw[p] > c->maxpw;
        hf__part_balance(c, c->cur);
        begin_refine(c, !over);
        return 1;
    }
    case HF_PP_REFINE:
        c->total_moves += c->moves;
        c->refine_rounds++;
        c->cut_est -= c->gain;
        if (another_pass(c, l)) {
            c->last_moves = c->moves;
            c->last_gain = c->gain;
            c->moves = 0;
            c->gain = 0;
            c->pass++;
            return 1;
        }
        /* The greedy passes are done: the host's FM climbs out of their
         * local optimum (partition_fm.c), between rounds. */
        c->cut_est -= hf__part_fm(c, c->cur);
        if (c->cur > 0) {
            c->cur--;
            c->phase = HF_PP_PROJECT;
            return (rc = alloc_part(c, c->cur)) ? rc : 1;
        }
        memset(c->mpw, 0, (size_t)c->k * sizeof *c->mpw);
        c->mcut = 0;
        c->phase = HF_PP_MEASURE;
        return 1;
    case HF_PP_MEASURE:
        release_gpu_levels(c);
        if (c->t_end == 0.0) /* verify off: its hook did not end the phases */
            c->t_end = now_s();
        c->finished = 1;
        return (rc = write_parts(c)) ? rc : 0;
    }
    return hf_fail(HF_EAPP, "partition: unknown phase %d", (int)c->phase);
}

/* Round 0: everything from the input graph again (see DESIGN). */
static int start(struct hf_partition *c)
{
    reset_levels(c);
    c->bnd_ok = 0; /* no level's boundary marks yet */
    c->finished = 0;
    c->coarsened = 0;
    c->total_moves = 0;
    c->refine_rounds = 0;
    c->initial_cut = 0;
    memset(c->lvl_work, 0, sizeof c->lvl_work);
    memset(c->lvl_gpu_work, 0, sizeof c->lvl_gpu_work);
    c->t0 = now_s();
    c->t_end = 0.0;
    if (c->k == 1) {
        int rc = alloc_part(c, 0);
        if (rc)
            return rc;
        memset(c->lv[0].part, 0, c->lv[0].nv * sizeof *c->lv[0].part);
        c->t_init0 = c->t_init1 = now_s();
        c->coarsest_nv = c->lv[0].nv;
        memset(c->mpw, 0, (size_t)c->k * sizeof *c->mpw);
        c->mcut = 0;
        c->phase = HF_PP_MEASURE;
        return 0;
    }
    if (c->lv[0].nv <= c->coarsen_to)
        return start_initial(c);
    begin_match(c);
    return 0;
}

/* Whether phase p has a GPU kernel (partition_cuda.cu): TWOHOP and PROJECT
 * do not (see DESIGN). */
static int has_gpu_kernel(enum hf_pphase p)
{
    return p != HF_PP_TWOHOP && p != HF_PP_PROJECT;
}

static int partition_next_load(void *ctx, struct hf_load *load)
{
    struct hf_partition *c = ctx;
    if (!c->executes)
        return hf_fail(HF_ENOTSUP, "partition: a simulated run must execute its bundles ([run] "
                                   "execute = yes): each level's graph comes from the previous "
                                   "level's real matching");
    int rc = load->round == 0 ? start(c) : advance(c);
    if (rc < 0 || (load->round > 0 && rc == 0))
        return rc;
    c->round_id++;
    c->round_work = 0;
    c->round_gpu_work = 0;
    const struct hf_plevel *l = &c->lv[c->cur];
    uint64_t units = l->nv;
    c->cost_off = l->offsets;
    if (c->phase == HF_PP_CONTRACT) {
        units = c->nc;
        c->cost_off = c->ub;
    }
    load->units = units;
    load->work = (double)(c->cost_off[units] - c->cost_off[0]) + (double)units;
    load->bytes = 0;
    /* No GPU kernel: the GPUs sit these rounds out (a GPU that took their
     * chunks would run them on its host thread's one core). */
    load->cpu_only = !has_gpu_kernel(c->phase);
    return 1;
}

/* Chunks of `grain` vertices, each costing its edges plus its vertices; grain
 * 0 (the default) is the graph apps' automatic grain, sized by the CPU team
 * (hf__gapp_grain): with a fixed 4096 vertices, the 16-core host ran each
 * chunk's parallel region for ~100 us beyond its work, and road 2048^2's
 * rounds took 0.64 s on the CPU alone against 0.24 s with 65536 (NOTES). */
static size_t partition_partition(void *ctx, const struct hf_load *load, size_t grain,
                                  struct hf_chunk *out, size_t cap)
{
    const struct hf_partition *c = ctx;
    grain = hf__gapp_grain(&c->ga, load, grain);
    size_t n = (load->units + grain - 1) / grain;
    if (!out)
        return n;
    for (size_t i = 0; i < n && i < cap; i++) {
        size_t b = i * grain, e = b + grain < load->units ? b + grain : load->units;
        out[i] =
            (struct hf_chunk){.index = i,
                              .begin = b,
                              .end = e,
                              .bytes = 0,
                              .work = (double)(c->cost_off[e] - c->cost_off[b]) + (double)(e - b)};
    }
    return n;
}

static int partition_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    struct hf_partition *c = ctx;
    switch (c->phase) {
    case HF_PP_MATCH:
        hf__part_match(c, b->begin, b->end, nthreads);
        return 0;
    case HF_PP_RESOLVE:
        hf__part_resolve(c, b->begin, b->end, nthreads);
        return 0;
    case HF_PP_TWOHOP:
        hf__part_twohop(c, b->begin, b->end, nthreads);
        return 0;
    case HF_PP_CONTRACT:
        return hf__part_contract(c, b->begin, b->end, nthreads);
    case HF_PP_PROJECT:
        hf__part_project(c, b->begin, b->end, nthreads);
        return 0;
    case HF_PP_REFINE:
        return hf__part_refine(c, b->begin, b->end, nthreads);
    case HF_PP_MEASURE:
        return hf__part_measure(c, b->begin, b->end, nthreads);
    }
    return hf_fail(HF_EAPP, "partition: unknown phase %d", (int)c->phase);
}

#ifdef HF_HAVE_CUDA
/* The rounds with a GPU kernel run on the GPU; TWOHOP and PROJECT, which the
 * GPUs sit out when a CPU is in the run (cpu_only), run the CPU code on the
 * GPU's host thread, on the one core it has, in a run of GPUs alone. */
static int partition_run_cuda(void *ctx, const struct hf_bundle *piece, struct hf_cuda *gpu)
{
    struct hf_partition *c = ctx;
    if (!has_gpu_kernel(c->phase))
        return partition_run_cpu(ctx, piece, 1);
    if (c->phase == HF_PP_REFINE) /* the kernels leave no boundary marks */
        __atomic_store_n(&c->bnd_ok, 0, __ATOMIC_RELAXED);
    return hf__part_cuda(c, piece, gpu);
}
#endif

static int coarsening(enum hf_pphase p)
{
    return p == HF_PP_MATCH || p == HF_PP_RESOLVE || p == HF_PP_TWOHOP || p == HF_PP_CONTRACT;
}

/* Where the work ran, in a run with a GPU: the round's and, while
 * coarsening, the level's work, and the GPUs' part of each. */
static int partition_collect(void *ctx, const struct hf_bundle *b)
{
    struct hf_partition *c = ctx;
    if (!c->ngpu || b->device < 0 || b->device >= c->ndev)
        return 0;
    uint64_t w = (uint64_t)llround(b->work), gw = c->dev_gpu[b->device] ? w : 0;
    __atomic_fetch_add(&c->round_work, w, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->round_gpu_work, gw, __ATOMIC_RELAXED);
    if (coarsening(c->phase)) {
        __atomic_fetch_add(&c->lvl_work[c->cur], w, __ATOMIC_RELAXED);
        __atomic_fetch_add(&c->lvl_gpu_work[c->cur], gw, __ATOMIC_RELAXED);
    }
    return 0;
}

static const char *const phase_names[] = {"match",   "resolve", "twohop", "contract",
                                          "project", "refine",  "measure"};

/* A run with a GPU: which level and phase the round was, and the GPUs' share. */
static int partition_round_figures(void *ctx, const struct hf_load *load, struct hf_figure *out,
                                   int cap)
{
    (void)load;
    const struct hf_partition *c = ctx;
    if (cap < 3)
        return 0;
    out[0] = (struct hf_figure){"level", (double)c->cur, "0 = the input graph"};
    out[1] = (struct hf_figure){"phase", (double)c->phase, phase_names[c->phase]};
    if (!c->ngpu)
        return 2;
    out[2] = (struct hf_figure){
        "gpu_share", c->round_work ? (double)c->round_gpu_work / (double)c->round_work : 0.0,
        "of the round's work"};
    return 3;
}

/* After the measure round: cut and balance recomputed by partition_ref.c
 * from the input graph must agree with the measure, and meet the bound. */
static int partition_verify(void *ctx, const struct hf_load *load)
{
    (void)load;
    struct hf_partition *c = ctx;
    if (c->phase != HF_PP_MEASURE)
        return 0;
    /* The partition is made: the phases end here, before this check (an
     * independent recount from the input graph, which gpmetis's own
     * "Partitioning" time has no counterpart of: 0.03 s of rgg 2^20's 0.19 s
     * on one H200 host were this check before). */
    c->t_end = now_s();
    struct hf_part_ref r;
    int rc = hf__partition_ref(&c->ga.g, c->lv[0].part, c->k, c->unit_vw, &r);
    if (rc)
        return rc;
    int64_t heaviest = 0;
    for (long p = 0; p < c->k; p++)
        heaviest = c->mpw[p] > heaviest ? c->mpw[p] : heaviest;
    if ((double)c->mcut / 2 != r.cut)
        return hf_fail(HF_EVERIFY, "partition: measured cut %g, the reference counts %g",
                       (double)c->mcut / 2, r.cut);
    if (heaviest != r.heaviest || r.total != c->total_w)
        return hf_fail(HF_EVERIFY,
                       "partition: heaviest part %lld of %lld measured, the "
                       "reference says %lld of %lld",
                       (long long)heaviest, (long long)c->total_w, (long long)r.heaviest,
                       (long long)r.total);
    if (r.heaviest > c->maxpw)
        return hf_fail(HF_EVERIFY,
                       "partition: part %ld weighs %lld (imbalance %.4f), more than "
                       "the bound %lld = floor((1 + %g) * %lld / %ld)",
                       r.heaviest_part, (long long)r.heaviest, r.imbalance, (long long)c->maxpw,
                       c->imbalance, (long long)r.total, c->k);
    return 0;
}

/* [run] rounds stopped the multilevel cycle (struct hf_app.stopped): the
 * input graph's vertices have no parts until the last projection and the
 * measure, so no part file is written (write_parts runs only at the end) and
 * partition_figures report nothing. next is the round the probe drew. */
static int partition_stopped(void *ctx, const struct hf_load *next, char *left, size_t len)
{
    (void)next;
    const struct hf_partition *c = ctx;
    snprintf(left, len, "the %s round at level %d of %d levels (0 is the input graph)",
             phase_names[c->phase], c->cur, c->nlev);
    return HF_STOP_NO_RESULT;
}

static int partition_figures(void *ctx, double seconds, struct hf_figure *out, int cap)
{
    (void)seconds;
    const struct hf_partition *c = ctx;
    if (!c->finished || cap < 10)
        return 0;
    int64_t heaviest = 0;
    for (long p = 0; p < c->k; p++)
        heaviest = c->mpw[p] > heaviest ? c->mpw[p] : heaviest;
    out[0] = (struct hf_figure){"edge_cut", (double)c->mcut / 2, "edge weight"};
    out[1] =
        (struct hf_figure){"max_imbalance", (double)heaviest / ((double)c->total_w / (double)c->k),
                           "heaviest part / (total / k)"};
    out[2] = (struct hf_figure){"parts", (double)c->k, ""};
    out[3] = (struct hf_figure){"levels", (double)c->coarsened, "coarsening levels"};
    out[4] = (struct hf_figure){"coarsest_vertices", (double)c->coarsest_nv, ""};
    out[5] = (struct hf_figure){"initial_cut", (double)c->initial_cut, "coarsest graph"};
    out[6] = (struct hf_figure){"coarsen_s", c->t_init0 - c->t0, "s"};
    out[7] = (struct hf_figure){"initial_s", c->t_init1 - c->t_init0, "s"};
    out[8] = (struct hf_figure){"uncoarsen_s", c->t_end - c->t_init1, "s"};
    out[9] = (struct hf_figure){"refine_moves", (double)c->total_moves, "vertices moved"};
    if (!c->ngpu || cap < 14 || c->coarsened == 0)
        return 10;
    /* Where coarsening ran: the GPUs' share of all of it, of its first and
     * last level, and the first level they took less than half of. */
    uint64_t all = 0, gpu = 0;
    int last = c->coarsened - 1, switched = c->coarsened;
    for (int l = 0; l <= last; l++) {
        all += c->lvl_work[l];
        gpu += c->lvl_gpu_work[l];
        if (switched == c->coarsened && 2 * c->lvl_gpu_work[l] < c->lvl_work[l])
            switched = l;
    }
    out[10] = (struct hf_figure){"gpu_share_coarsen", all ? (double)gpu / (double)all : 0.0,
                                 "of the coarsening work"};
    out[11] = (struct hf_figure){"gpu_share_first_level",
                                 c->lvl_work[0] ? (double)c->lvl_gpu_work[0] /
                                                      (double)c->lvl_work[0]
                                                : 0.0,
                                 "level 0"};
    out[12] = (struct hf_figure){"gpu_share_last_level",
                                 c->lvl_work[last] ? (double)c->lvl_gpu_work[last] /
                                                         (double)c->lvl_work[last]
                                                   : 0.0,
                                 "the coarsest level contracted"};
    out[13] = (struct hf_figure){"gpu_switch_level", (double)switched,
                                 "first level GPUs took < half of (= levels: none)"};
    return 14;
}

static void partition_signature(void *ctx, char *buf, size_t len)
{
    const struct hf_partition *c = ctx;
    snprintf(buf, len, "%s nv=%llu ne=%llu k=%ld imb=%g", c->ga.g.source_desc,
             (unsigned long long)c->ga.g.nv, (unsigned long long)c->ga.g.ne, c->k, c->imbalance);
}

static void partition_teardown(void *ctx)
{
    struct hf_partition *c = ctx;
    if (!c)
        return;
    reset_levels(c);
    free(c->gpu);
    free(c->dev_gpu);
    free(c->lv[0].ew);
    free(c->lv[0].vw);
    hf__part_give(c, c->lv[0].match);
    hf__part_give(c, c->lv[0].cmap);
    free_pinned(c); /* after every array in its room */
    free(c->wait);
    free(c->bnd);
    free(c->cbnd);
    free(c->pw);
    free(c->mpw);
    hf_host_free(c->tadj);
    hf_host_free(c->tew);
    hf__gapp_destroy(&c->ga);
    free(c);
}

/* Runs this app's own rounds on `g` in the calling thread, each round as one
 * bundle on one CPU device of `nthreads` threads: what the engine does with
 * a single device, without a config, a scheduler or an output file. The
 * graph is borrowed and partitioned by its structure alone (its weights are
 * not read: unit vertex and edge weights), and every round is verified as in
 * a run with verify on. */
int hf__partition_graph(const struct hf_graph *g, long k, double imbalance, uint64_t seed,
                        int nthreads, uint32_t *part, double *cut)
{
    struct hf_partition *c = calloc(1, sizeof *c);
    if (!c)
        return hf_fail(HF_ENOMEM, "partition: out of memory");
    c->k = k;
    c->imbalance = imbalance;
    c->seed = seed;
    c->ga.g = *g;
    c->ga.g.weights = NULL;
    c->ga.g.vwgt = NULL;
    struct hf_device_info cpu = {.kind = HF_DEV_CPU, .nthreads = nthreads, .cuda_ordinal = -1,
                                 .host_core = -1};
    struct hf_devices devs = {.count = 1, .dev = &cpu, .executes = 1};
    int rc = check_weights(c, "[load] placement_parts");
    if (!rc)
        rc = partition_setup(c, &devs);
    for (int r = 0; !rc; r++) {
        struct hf_load load = {.round = r};
        int more = partition_next_load(c, &load);
        if (more <= 0) {
            rc = more;
            break;
        }
        struct hf_bundle b = {.load = &load, .count = 1, .end = load.units, .work = load.work};
        if (load.units && !(rc = partition_run_cpu(c, &b, nthreads)))
            rc = partition_verify(c, &load);
    }
    if (!rc) {
        memcpy(part, c->lv[0].part, g->nv * sizeof *part);
        *cut = (double)c->mcut / 2;
    }
    memset(&c->ga.g, 0, sizeof c->ga.g); /* borrowed: teardown must not free it */
    partition_teardown(c);
    return rc;
}

/* The keys of [load] (hetfarm.h): the graph keys less `seed` and `out`,
 * which this app reads its own way. */
static const struct hf_config_key partition_keys[] = {
    {NULL, "parts", HF_KEY_INT, 1, 2147483647.0, 0, NULL, "64", "number of parts k"},
    {NULL, "imbalance", HF_KEY_NUM, 0, 10, 0, NULL, "0.03",
     "a part weighs at most (1 + imbalance) * total / k"},
    {NULL, "objective", HF_KEY_STR, 0, 0, 0, "cut", "cut", "what is minimised: the edge cut"},
    {NULL, "seed", HF_KEY_INT, 0, 9.2233720368547748e18, 0, NULL, "1",
     "matching tie-breaks, METIS and generators"},
    {NULL, "out", HF_KEY_STR, 0, 0, 0, NULL, NULL,
     "output: one 0-based part id per line, vertex order (gpmetis's format)"},
    HF_GAPP_GRAPH_KEYS,
    HF_GAPP_WEIGHTED_KEY,
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_partition = {
    .keys = partition_keys,
    .name = "partition",
    .summary = "multilevel k-way graph partitioning: matching, METIS on the coarsest, refinement",
    .create = partition_create,
    .setup = partition_setup,
    .next_load = partition_next_load,
    .partition = partition_partition,
    .run_cpu = partition_run_cpu,
#ifdef HF_HAVE_CUDA
    .run_cuda = partition_run_cuda,
#endif
    .collect = partition_collect,
    .round_figures = partition_round_figures,
    .verify = partition_verify,
    .figures = partition_figures,
    .stopped = partition_stopped,
    .teardown = partition_teardown,
    .signature = partition_signature,
    .default_grain = 0,
};
