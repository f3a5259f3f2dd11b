/* partition_internal.h - what the partitioner's files share: its levels and
 * state (struct hf_partition), the helpers every phase uses, and the phases
 * themselves: the app (partition.c, the enactor), partition_coarsen.c
 * (matching and contraction), partition_refine.c (projection, refinement,
 * balance, measure), partition_fm.c, partition_initial.c (the coarsest
 * graph's partition) and the GPU side (partition_cuda.cu,
 * partition_refine_cuda.cu). Other rooms include partition.h; the plain
 * reference is partition_ref.h.
 */
#ifndef HF_PARTITION_INTERNAL_H
#define HF_PARTITION_INTERNAL_H

#include <stdint.h>

#include "graph/app/graph_app.h"
#include "partition.h"
#include "partition_ref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A vertex not matched yet; also "nobody waiting" in the two-hop slots. */
#define HF_PART_NONE UINT32_MAX
/* At most this many levels (the finest included); coarsening stops there. */
#define HF_PART_MAX_LEVELS 48
/* Alignment of the arrays hf__part_take hands out of the pinned room. */
#define HF_PART_PIN_ALIGN 64
/* GPU MATCH pieces a round's claims room takes (hf_partition.claims). */
#define HF_PART_CLAIM_REGIONS 1024
/* Refinement passes per level at most (alternating up and down moves). */
#define HF_PART_REFINE_PASSES 16
/* A level's refinement stops once two passes in a row (one each way; on a
 * level of more than HF_PART_FM_SMALL vertices, also the first pass alone) moved
 * at most this fraction of its vertices: the zero-gain moves would otherwise
 * trickle on for every pass allowed, at a round's overhead each. A level of
 * at most HF_PART_FM_SMALL vertices always stops after two (partition.c). */
#define HF_PART_REFINE_QUIET 0.002
/* ... or gained together less than this fraction of the estimated cut (a
 * Kronecker graph's passes go on shuffling hubs' neighbours at zero gain). */
#define HF_PART_REFINE_GAIN 0.001
/* The host's localized FM (partition_fm.c). A local search stops after
 * HF_PART_FM_PATIENCE moves (HF_PART_FM_PATIENCE_SMALL on a level of at most
 * HF_PART_FM_SMALL vertices) that did not beat its best cut. Small levels get
 * up to HF_PART_FM_PASSES passes, larger ones one. No FM on a level whose
 * boundary holds more than HF_PART_FM_BOUNDARY of its vertices (a Kronecker
 * graph's: nearly all). */
#define HF_PART_FM_PATIENCE 8
#define HF_PART_FM_PATIENCE_SMALL 200
#define HF_PART_FM_SMALL (1u << 14)
#define HF_PART_FM_PASSES 6
#define HF_PART_FM_BOUNDARY 0.25
/* Coarsening stops at METIS's k-way target, max(n / (20 log2 k), 30 k)
 * vertices, or at this many per part if fewer: the coarsest graph's
 * partition is serial (METIS, partition_initial.c) and costs about its
 * size, while a level of rounds costs a few of them. On rgg 2^20 (64 parts)
 * 8.5k vertices took METIS 20 ms; 3.5k took 7 ms by recursive bisection,
 * the same final cut (9edd91b:bench/NOTES.md). */
#define HF_PART_COARSEST 60
/* Coarsening stops once a level keeps more than this fraction of the
 * vertices of the one before (matching stalls: a star, a hub's leaves). */
#define HF_PART_STALL 0.95
/* A two-hop round follows a level's matching when more than this fraction of
 * its vertices found no partner. */
#define HF_PART_TWOHOP 0.10

/* Marks the helpers below as callable from GPU code too (partition_cuda.cu). */
#ifdef __CUDACC__
#define HF_PART_HD __host__ __device__
#else
#define HF_PART_HD
#endif

/* A 64-bit mix (splitmix64's finaliser): the matching's tie-breaks. */
static inline HF_PART_HD uint64_t hf__part_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The tie-break hash of the pair {u, v} under `salt` (either order). */
static inline HF_PART_HD uint64_t hf__part_pair_hash(uint64_t salt, uint32_t u, uint32_t v)
{
    return hf__part_mix(salt ^ ((uint64_t)(u < v ? u : v) << 32 | (u < v ? v : u)));
}

/* The matching's salt for level `cur` under `seed`. */
static inline uint64_t hf__part_salt(uint64_t seed, int cur)
{
    return hf__part_mix(seed * 0x9e3779b97f4a7c15ull + (uint64_t)cur);
}

/* The step of the scrambled visiting order of n vertices (i -> i * step mod
 * n): odd and coprime with n, as METIS visits a random permutation. */
static inline uint64_t hf__part_visit_step(uint64_t salt, uint64_t n)
{
    uint64_t step = n > 2 ? (salt % n) | 1 : 1;
    for (;;) {
        uint64_t a = step, b = n;
        while (b) {
            uint64_t t = a % b;
            a = b;
            b = t;
        }
        if (n <= 2 || a == 1)
            return step;
        step += 2;
    }
}

/* Adds w to the part weight *pw unless that would pass `max`; returns
 * whether it did. Lock-free: what keeps every part within the bound
 * whatever the interleaving of moves (the CPU's and a GPU's). */
static inline int hf__part_reserve(int64_t *pw, int64_t w, int64_t max)
{
    int64_t old = __atomic_load_n(pw, __ATOMIC_RELAXED);
    do {
        if (old + w > max)
            return 0;
    } while (
        !__atomic_compare_exchange_n(pw, &old, old + w, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return 1;
}

/* One level of the hierarchy. Level 0 borrows the input graph's offsets and
 * adjacency; every coarser level owns its arrays. ew and vw NULL mean unit
 * weights. */
struct hf_plevel {
    uint64_t nv, ne;
    uint64_t *offsets; /* nv + 1 */
    uint32_t *adj;     /* ne; level 0: sorted per vertex; above: no self-loop, no repeat */
    int64_t *ew;       /* ne edge weights, or NULL (all 1) */
    int64_t *vw;       /* nv vertex weights, or NULL (all 1) */
    int owns_csr;      /* offsets/adj are this level's (not the input graph's) */
    uint32_t *match;   /* nv: partner, itself when single, HF_PART_NONE while unmatched */
    uint32_t *cmap;    /* nv: the vertex of the next coarser level holding this one */
    uint32_t *part;    /* nv: part ids, during uncoarsening */
    unsigned long made; /* which level this is (c->levels_made when it was made): a GPU
                           keeps a level's CSR from its coarsening to its refinement */
};

static inline int64_t hf__pl_ew(const struct hf_plevel *l, uint64_t j)
{
    return l->ew ? l->ew[j] : 1;
}
static inline int64_t hf__pl_vw(const struct hf_plevel *l, uint64_t v)
{
    return l->vw ? l->vw[v] : 1;
}

/* Tallies the arcs of u (in part a) on level l: returns their weight inside
 * a; adds the weight to every other part p to conn[p], which must be -1 for
 * every part beforehand and is set to 0 the first time p is seen, when p is
 * listed in seen[*ns]. The caller resets conn[seen[i]] to -1 afterwards.
 * Parts are read relaxed: refinement passes move them concurrently. */
static inline int64_t hf__part_tally(const struct hf_plevel *l, const uint32_t *part, uint64_t u,
                                     uint32_t a, int64_t *conn, uint32_t *seen, size_t *ns)
{
    int64_t inside = 0;
    for (uint64_t j = l->offsets[u]; j < l->offsets[u + 1]; j++) {
        uint32_t v = l->adj[j];
        if (v == u)
            continue;
        uint32_t p = __atomic_load_n(&part[v], __ATOMIC_RELAXED);
        int64_t w = hf__pl_ew(l, j);
        if (p == a) {
            inside += w;
        } else {
            if (conn[p] < 0) {
                conn[p] = 0;
                seen[(*ns)++] = p;
            }
            conn[p] += w;
        }
    }
    return inside;
}

/* What a round does; the load's units are the vertices of the level named. */
enum hf_pphase {
    HF_PP_MATCH,    /* heavy-edge matching proposals (level cur) */
    HF_PP_RESOLVE,  /* conflict resolution: keep only mutual pairs */
    HF_PP_TWOHOP,   /* pair leftover vertices that share their heaviest neighbour */
    HF_PP_CONTRACT, /* build the coarser level's lists (units: coarse vertices) */
    HF_PP_PROJECT,  /* part[v] = coarser part[cmap[v]] (level cur) */
    HF_PP_REFINE,   /* one boundary refinement pass (level cur) */
    HF_PP_MEASURE,  /* cut and part weights of the final partition (level 0) */
};

struct hf_partition {
    struct hf_gapp ga;
    long k;           /* [load] parts */
    double imbalance; /* [load] imbalance */
    uint64_t seed;    /* [load] seed: tie-breaks and METIS */
    int executes;     /* setup saw devices that really run bundles */

    int64_t total_w;     /* total vertex weight (unit weights when the input's are all 0) */
    int64_t maxpw;       /* heaviest a part may be: floor((1 + imbalance) * total_w / k) */
    int64_t maxvwgt;     /* heaviest coarse vertex matching may make */
    uint64_t coarsen_to; /* coarsening stops at this many vertices */
    int unit_vw;         /* the input's vertex weights are all 0: balance counts vertices */

    struct hf_plevel lv[HF_PART_MAX_LEVELS];
    int nlev;             /* levels built (>= 1) */
    int cur;              /* the level the phase works on */
    enum hf_pphase phase; /* the round in flight */
    int pass;             /* refinement pass at this level */
    uint64_t moves;       /* moves of the refinement pass in flight (atomic) */
    uint64_t last_moves;  /* moves of the pass before */
    int64_t gain;         /* summed gains of the pass in flight (atomic; read when stale) */
    int64_t last_gain;    /* of the pass before */
    int64_t cut_est;      /* the cut estimated from the initial one less the gains */
    uint64_t unmatched;   /* vertices left unmatched by the resolve round (atomic) */
    /* With a GPU in the run: room (pinned, setup) where a GPU's MATCH pieces
     * leave their claims on vertices outside their range, as
     * (count, pad, pairs of (vertex, partner)) from region starts claim_at[],
     * written into match by hf__part_apply_claims when the round has ended.
     * A host function applying them one by one on the GPU's copy-out stream
     * held its piece: 6.8 ms of a level-1 piece whose kernel took 0.8 ms (rgg
     * 2^20, one H200). NULL: the pieces apply their own (partition_cuda.cu). */
    uint64_t *claims;
    uint64_t claims_cap, claims_used; /* in 8-byte words; used: atomic */
    uint64_t claim_at[HF_PART_CLAIM_REGIONS];
    uint64_t nclaim_regions; /* atomic */

    /* contraction of level cur into cur + 1 */
    uint64_t nc;      /* coarse vertices */
    uint32_t *leader; /* nc: the smaller fine vertex of each coarse one */
    uint64_t *ub;     /* nc + 1: slots for each coarse list (sum of its members' degrees) */
    uint32_t *cdeg;   /* nc: what each list holds after merging */
    uint32_t *tadj;   /* ub[nc] neighbour slots, of tcap allocated */
    int64_t *tew;     /* ub[nc] weight slots, of tcap allocated */
    uint64_t tcap;    /* slots tadj and tew hold: the input's arcs, the most a level has
                         (setup allocates them once, pinned when a GPU is in the run) */
    int slots_level;  /* the level whose lists the slots hold (vertex v's at tadj[ub[v] ..
                         ub[v] + cdeg[v]), tew the same), or -1: set by hf__part_pack,
                         cleared by hf__part_build_cmap before the next contraction
                         rewrites them (both between rounds). A GPU builds that level's
                         CSR from the pinned slots, ub and cdeg (partition_cuda.cu,
                         "Residency") */
    int64_t *cvw;     /* nc coarse vertex weights */
    /* The coarse vertices leader, ub and cdeg have room for: they are kept
     * from level to level (the first level needs the most). */
    uint64_t scratch_cap;
    /* With a GPU in the run: setup's pinned room for ub (the input's nv + 1)
     * and cdeg (nv), which the contraction's scratch then uses instead of
     * malloc'd arrays, so that a GPU reads and writes them at the link's
     * speed (CONTRACT's slots and degrees; a level built from the slots).
     * NULL in a run without one. */
    uint64_t *ub_pinned;
    uint32_t *cdeg_pinned;
    /* With a GPU in the run: pinned room (setup) for the per-level arrays a
     * GPU piece uploads or copies back: every level's match, cmap and
     * parts, the coarse levels' vertex weights (cvw) and the contraction's
     * leaders, handed out in order by hf__part_take (bump allocation; the
     * rest, once it is full, malloc'd). From pageable memory those copies
     * ran at a few GB/s and held every GPU piece: on rgg 2^20 a MATCH
     * round's copy-out took 3.5-11.6 ms for a kernel of 0.2-3.9 ms (one
     * H200, eleventh session). pin_base: what setup took, kept across
     * runs; the rest is handed out again after reset_levels. */
    char *pin;
    size_t pin_cap, pin_used, pin_base;
    int input_pinned; /* level 0's offsets and adj are setup's pinned copy (pin_input) */
    uint32_t *wait;   /* nv + 1 two-hop slots (the last: isolated vertices) */

    /* Boundary marks (partition_refine.c, partition_fm.c). bnd, of the level
     * being refined, marks every vertex a greedy pass found next to another
     * part, every neighbour of a vertex a pass or FM moved, and FM's own scan
     * where it made one: every vertex on the boundary when the level's
     * refinement ends is marked (a few more may be). FM's first pass takes
     * its seeds from there instead of scanning every arc, a level's later
     * greedy passes visit only marked vertices, and the next finer level's
     * first pass, from cbnd (these marks handed down), visits only the
     * vertices whose coarse vertex is marked: the others are interior after
     * the projection; the measure round tallies the arcs of level 0's
     * marked vertices only. Only while bnd_ok / cbnd_ok: a GPU's refinement piece
     * clears bnd_ok (its kernels do not mark); a balance pass after the
     * projection, and the coarsest level, leave cbnd_ok 0. NULL: no marks
     * (hf__part_refine called outside a run). */
    unsigned char *bnd, *cbnd; /* lv[0].nv each, swapped when a level's refinement begins;
                                  cbnd holds FM's claims once the greedy passes are done */
    int bnd_ok, cbnd_ok;       /* bnd_ok atomic: GPU pieces clear it during a round */

    int64_t *pw;              /* k part weights of the level being refined (atomic) */
    int64_t *mpw;             /* k part weights measured on the input graph */
    int64_t mcut;             /* cut measured on the input graph (atomic) */
    const uint64_t *cost_off; /* offsets that price the round's chunks */

    /* figures */
    int finished;
    double t0, t_init0, t_init1, t_end;
    int64_t initial_cut; /* cut of the coarsest graph's partition */
    uint64_t coarsest_nv;
    int coarsened; /* levels made by contraction */
    uint64_t total_moves;
    int refine_rounds;
    int initial_metis; /* METIS partitioned the coarsest graph (else: bin packing) */

    /* The GPU side (partition_cuda.cu) and where the work ran. All of it
     * stays idle in a run without a real GPU (ngpu = 0), whose rounds and
     * figures are exactly those of a CPU-only build. */
    int ndev;                 /* devices of the run (setup) */
    unsigned char *dev_gpu;   /* ndev: 1 for a real GPU */
    int ngpu;                 /* real GPUs in the run */
    void **gpu;               /* ndev: what a GPU holds (struct part_gpu: every level's CSR
                                 it kept and the scratch of its rounds), or NULL */
    unsigned long level_gen;  /* levels begun so far: which level a GPU's copy is of */
    unsigned long levels_made; /* levels made so far, the input's included (hf_plevel.made) */
    unsigned long round_id;   /* loads drawn so far: which round a GPU's inputs are of */
    uint64_t round_work, round_gpu_work;     /* this round's work, and the GPUs' (collect) */
    uint64_t lvl_work[HF_PART_MAX_LEVELS];   /* coarsening work of each level ... */
    uint64_t lvl_gpu_work[HF_PART_MAX_LEVELS]; /* ... and the GPUs' part of it */
};

/* partition_coarsen.c: the rounds of coarsening on level c->cur, for the
 * vertices (coarse vertices for contraction) [begin, end). */
void hf__part_match(struct hf_partition *c, size_t begin, size_t end, int nthreads);
void hf__part_resolve(struct hf_partition *c, size_t begin, size_t end, int nthreads);
void hf__part_twohop(struct hf_partition *c, size_t begin, size_t end, int nthreads);
int hf__part_contract(struct hf_partition *c, size_t begin, size_t end, int nthreads);
/* Between rounds (next_load): unmatched vertices become single, cmap by
 * prefix sum, coarse list slots; then, after the contract round, the coarse
 * lists packed into level cur + 1. */
int hf__part_build_cmap(struct hf_partition *c);
int hf__part_pack(struct hf_partition *c);
/* bytes for a per-level array a GPU piece moves (see hf_partition.pin):
 * from the pinned room while it lasts, else malloc'd; NULL when out of
 * memory. hf__part_give frees what it handed out (NULL: nothing); the
 * pinned room itself is taken back whole by reset_levels. */
void *hf__part_take(struct hf_partition *c, size_t bytes);
/* Writes the claims GPU MATCH pieces left in c->claims into the level's
 * match, as the CPU threads' stores would have (after a MATCH round, from
 * next_load; RESOLVE drops whatever pairs are not mutual), and empties the
 * room. */
void hf__part_apply_claims(struct hf_partition *c);
void hf__part_give(struct hf_partition *c, void *p);
/* Frees the contraction's scratch arrays. */
void hf__part_scratch_free(struct hf_partition *c);
/* In-place exclusive prefix sum over a[0..n), a[n] = the total (host glue: on
 * the main thread's team where hf__part_glue_parallel says so). */
uint64_t hf__part_scan(uint64_t *a, size_t n);
/* Whether a loop of next_load's glue over `items` runs on the main thread's
 * OpenMP team (large enough, and a team of at least 4). */
int hf__part_glue_parallel(uint64_t items);

/* partition_refine.c: the rounds of uncoarsening. */
void hf__part_project(struct hf_partition *c, size_t begin, size_t end, int nthreads);
int hf__part_refine(struct hf_partition *c, size_t begin, size_t end, int nthreads);
int hf__part_measure(struct hf_partition *c, size_t begin, size_t end, int nthreads);
/* Host side: recomputes c->pw for level l from its parts. */
void hf__part_weigh(struct hf_partition *c, int l);
/* Host side: moves vertices out of parts heavier than maxpw (boundary moves
 * by gain first, then any vertex to the lightest part that takes it).
 * Returns the number of parts still over the bound. */
long hf__part_balance(struct hf_partition *c, int l);

/* partition_fm.c: localized k-way FM on level l (host, on the main thread's
 * team where the glue runs in parallel, else serial), keeping
 * c->pw exact and every part within maxpw. Returns the cut it saved. */
int64_t hf__part_fm(struct hf_partition *c, int l);

/* partition_initial.c: partitions level l (the coarsest) into c->k parts in
 * lv[l].part: METIS_PartGraphKway, or bin packing when it has no edge.
 * Sets c->initial_cut. */
int hf__part_initial(struct hf_partition *c, int l);

#ifdef HF_HAVE_CUDA
struct hf_cuda;
struct hf_bundle;
/* partition_cuda.cu: runs one piece of a MATCH, RESOLVE, CONTRACT or REFINE
 * round on the GPU, with the level's graph resident there (uploaded by the
 * GPU's first piece of the level's coarsening, a coarse level's lists from
 * the contraction's slots while slots_level names it, kept until the
 * measure ends) and the piece's results copied back into the host arrays
 * the next round and next_load read. */
int hf__part_cuda(struct hf_partition *c, const struct hf_bundle *piece, struct hf_cuda *gpu);
/* Frees everything the GPUs hold; between rounds (round 0 starts again, the
 * measure ended, teardown), from the engine's thread. */
void hf__part_cuda_release(struct hf_partition *c);
#endif

#ifdef __cplusplus
}
#endif
#endif
