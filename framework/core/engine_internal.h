/* engine_internal.h - state shared by the round loop (engine.c) and the two
 * engines that run a round: engine_real.c (threads, wall clock) and
 * engine_sim.c (discrete events, virtual time). Not part of the public API.
 */
#ifndef HF_ENGINE_INTERNAL_H
#define HF_ENGINE_INTERNAL_H

#include <pthread.h>

#include "chunk_cost.h"
#include "engine.h"
#include "part_prior.h"
#include "pool.h"

/* Spans put back by a failed device, served before the scheduler is asked. */
struct hf__span_queue {
    struct hf_span *v;
    size_t head, n, cap;
};

struct hf__real; /* engine_real.c's threads */

struct hf__engine {
    const struct hf_run_options *opts;
    const struct hf_app *app;
    void *app_ctx;
    hf_devlist_t devs;
    int ndev;
    int executes;                  /* bundles really run (real, or sim with execute) */

    const struct hf_sched_ops *sched;
    void *sched_state;
    hf_profile_t profile;
    hf_pool_t pool;

    /* The current round. */
    struct hf_load load;
    unsigned long draws;           /* loads drawn so far (struct hf_load.serial) */
    struct hf_chunk *chunks;
    size_t nchunks, chunks_cap;
    size_t round_target;           /* chunks that end the round (all, or a solo sample) */
    struct hf_round round;
    int *alive;
    int *sat_out;                  /* per device: a GPU sitting out this round (cpu_only load) */
    double *standalone;            /* per device work/s, NULL while measuring */
    struct hf_cost_model *cost;    /* per device: affine model of its bundles (bound_s) */
    struct hf__chunk_cost chunk_cost; /* learned per-chunk cost (chunk_cost.c): round.chunks */
    int chunk_cost_read;           /* the saved estimates were looked for ... */
    int chunk_cost_loaded;         /* ... and the run started from them */
    struct hf_round_device *stats; /* per device, this round */
    double round_start, round_end; /* seconds since the run started */
    double bundles_from, bundles_to; /* the round's first bundle start, last bundle end
                                        (from > to: none ran); hf_round_report.outside_s */
    struct hf_round_host host;     /* the current round's host phases (engine.h) */
    struct hf__span_queue orphans;
    unsigned long progress_gen;    /* bumped at every finished bundle */
    unsigned long *asked_gen;      /* per device: progress_gen when it last got nothing */

    /* What the run records. */
    int recording;
    int keep_events;               /* record events outside `recording` too (a node's spans) */
    double run_t0;                 /* real engine: hf__now() at round 0, the events' origin */
    struct hf_run_startup startup; /* seconds of the run's set-up (struct hf_run.startup) */
    int rounds_done;               /* rounds finished and verified: a failed run keeps them */
    struct hf_event *events;
    size_t nevents, events_cap;
    long *last_event;              /* per device: index of its latest event, -1 */
    unsigned char *launched;       /* per device: a GPU has run a bundle of a scheduled round */
    char fault[256];
    int show_progress;             /* draw the progress line (stderr is a terminal) */
    double wall_t0;                /* wall clock at round 0, for the progress line */
    size_t chunks_before;          /* chunks of the rounds already finished */

    int error;                     /* first error; stops the run */
    char errmsg[768];

    struct hf__shared_set *shared; /* the app's shared data (shared.c), NULL if none */
    struct hf__part_prior prior;   /* what taking part is expected to cost (part_prior.c) */
    struct hf__repay {             /* whether the GPUs start (startup_repay.c) */
        hf_profile_t record;       /* this load's record, or NULL: every device starts */
        uint64_t unstarted;        /* bit g: the g-th GPU of [devices] cuda is not started */
        char why[384];             /* the decision in words, "" when every device starts */
        int noted, with_gpus;      /* what this run measured, for the record: */
        double rounds_s, app_s, ratio;
    } repay;
    struct hf__real *real;         /* real engine: device threads */
    struct hf__nodes *nodes;       /* rank 0 of a run across nodes: its node devices (nodes.c) */
    double sim_now;                /* sim engine: virtual clock */
    uint64_t rng;                  /* sim engine: jitter draws */
    uint64_t stall_key;            /* sim engine: the run's key of stall draws (hf__sim_stall) */
    size_t *sim_sizes;             /* sim engine: bundle sizes each device ran (engine_sim.c) */
    double sim_link_free;          /* sim engine: when rank 0's link is next free (sim_node.c) */
};

/* Hands device `dev` its next span: orphans first, then the scheduler; the
 * span is claimed in the pool. Returns 1, 0 (nothing now) or an HF_E* code
 * (also recorded as the run's error). Called under the engine lock. */
int hf__engine_take(struct hf__engine *e, int dev, struct hf_span *span);
/* Builds the bundle of a claimed span with the app's bundler. */
int hf__engine_bundle(struct hf__engine *e, int dev, const struct hf_span *span,
                      struct hf_bundle *b);
/* Whether the engine must fail this bundle on purpose ([faults]); counts bundles. */
int hf__engine_fault_due(struct hf__engine *e, int dev);
/* Records a finished span (pool, statistics, event, scheduler). Under the lock. */
int hf__engine_done(struct hf__engine *e, int dev, const struct hf_span *span, double start,
                    double end, const struct hf_bundle_times *t);
/* Handles a failed span: a device fault retires the device and puts its work
 * back; any other error stops the run. Under the lock. */
void hf__engine_failed(struct hf__engine *e, int dev, const struct hf_span *span, int rc,
                       const char *msg);
/* Whether every chunk of the round is done. */
int hf__engine_round_complete(struct hf__engine *e);
/* Whether the round can make no more progress: nothing runs, nothing is
 * queued, and every live device was refused work since the last progress. */
int hf__engine_stalled(struct hf__engine *e, int inflight);
/* Records the run's first error with a message (the calling thread's detail). */
void hf__engine_error(struct hf__engine *e, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* engine.c: draws round `round`'s load and cuts it into chunks (1, 0 = no
 * more loads, or an error), and runs a prepared round on the chosen engine.
 * prepare_round = draw_round (next_load and the partitioner, into e->chunks)
 * + arm_round (the pool, the round record, the schedulers' view of the
 * chunks: their learned costs when `learn` is set). A node of a run across
 * nodes arms a part of a drawn load as a round of its own (core/nodes.c);
 * hold_chunks makes room for n chunks in e->chunks. */
int hf__engine_prepare_round(struct hf__engine *e, int round);
int hf__engine_draw_round(struct hf__engine *e, int round);
int hf__engine_arm_round(struct hf__engine *e, int round, int learn);
/* Empties device d's cost model (bound_s, outliers), telling it whether the
 * device pays for new bundle sizes: a GPU (a kernel choice) or a node of
 * them does, a CPU does not. */
void hf__engine_reset_cost(struct hf__engine *e, int d);
int hf__engine_hold_chunks(struct hf__engine *e, size_t n);
/* The scheduler's adaptation after a round: its round_end with the devices'
 * work, busy seconds and chunks (arrays of e->ndev). */
int hf__engine_adapt(struct hf__engine *e, double makespan_s, double *work, double *busy,
                     size_t *chunks);
int hf__engine_execute_round(struct hf__engine *e);
/* Records the round just run in `run` (statistics, plan) after the
 * scheduler's adaptation, and checks the result against the app's reference
 * when the run verifies. 0 or an HF_E* code (also the run's error). */
int hf__engine_finish_round(struct hf__engine *e, struct hf_run *run);
int hf__engine_verify_round(struct hf__engine *e);
/* run.c: sets up everything a run needs (devices, nodes, the app and its
 * data, shared data, the device threads) and undoes it in reverse (the
 * device threads stop first: they may still hold app data). */
int hf__run_setup(struct hf__engine *e, const struct hf_run_options *o);
/* startup_repay.c: opens this load's record and decides which GPUs the run
 * leaves unstarted (e->repay.unstarted), before the device list is built;
 * notes what the run measured once its rounds ran; saves the record after
 * the teardown (its seconds are part of what the GPUs cost) and closes it. */
int hf__repay_open(struct hf__engine *e, const struct hf_run_options *o);
void hf__repay_note(struct hf__engine *e, const struct hf_run *run, double rounds_s);
int hf__repay_save(struct hf__repay *r, const struct hf_run_startup *s, double teardown_s);
void hf__run_teardown(struct hf__engine *e);
/* run.c: creates the run's scheduler (opts->sched) for the engine's devices. */
int hf__run_create_sched(struct hf__engine *e);
/* nodes.c (a run across nodes): on rank 0, lists every other rank as a node
 * device and, when the run ends, tells them to stop; both do nothing when
 * the run has no nodes. */
int hf__nodes_add(struct hf__engine *e);
void hf__nodes_stop(struct hf__engine *e);
/* nodes.c: the devices inside the nodes (names into run->inner), their
 * statistics and bundles dropped at the start of a round (standalone passes
 * included) and handed to the round's record at its end (rs->inner; the
 * bundles of a recorded round are kept for the run), and the kept bundles
 * handed to the run when it ends (run->inner_events). No-ops without nodes. */
int hf__nodes_describe(struct hf__engine *e, struct hf_run *run);
void hf__nodes_round_start(struct hf__engine *e);
void hf__nodes_take_events(struct hf__engine *e, struct hf_run *run);
/* Rank 0 of a run across nodes: tells every node that load e->load was drawn
 * (each draws it too); 0 elsewhere. 0 or an HF_E* code. */
int hf__nodes_drawn(struct hf__engine *e);
/* The ranks of this run (struct hf_devices.ranks): the job's size in a
 * real-engine run across nodes, 1 otherwise. */
int hf__nodes_ranks(const struct hf__engine *e);
int hf__nodes_round_end(struct hf__engine *e, struct hf_round_stats *rs);
/* standalone.c: fills e->standalone (work/s of each device alone). */
int hf__measure_standalone(struct hf__engine *e);

/* engine_real.c */
int hf__real_start(struct hf__engine *e);
int hf__real_round(struct hf__engine *e);
/* Runs fn(e, dev, arg) on the host thread of every device d that keeps
 * state (hf__engine_keeps_state) with want[d] set (want == NULL: every such
 * device), all side by side, and waits for them; between rounds only (no
 * bundle runs). Returns the first non-zero result. Used for work that must
 * run where a device's context lives, like the shared-data merge. Costs
 * nothing when no device is wanted. */
int hf__real_each_device(struct hf__engine *e, int (*fn)(struct hf__engine *e, int dev, void *arg),
                         void *arg, const int *want);
/* The work device d ran this round, for its rates: its chunks' and what its
 * bundles did past them (hf_bundle_did_more). */
static inline double hf__engine_ran_work(const struct hf__engine *e, int d)
{
    return e->stats[d].work + e->stats[d].more_work;
}
/* Whether device d keeps the run's state (shared data, its context): alive,
 * or a GPU sitting one cpu_only round out, which must still receive the
 * round's merged changes. */
static inline int hf__engine_keeps_state(const struct hf__engine *e, int d)
{
    return e->alive[d] || e->sat_out[d];
}
void hf__real_stop(struct hf__engine *e);
/* engine_sim.c */
int hf__sim_round(struct hf__engine *e);
/* The sim generator's starting state for a [run] seed: the one way a seed
 * becomes a random stream, so that seeds give unrelated streams (see there). */
uint64_t hf__sim_rng_state(uint64_t seed);
double hf__sim_bundle_seconds(const struct hf_device *d, const struct hf_bundle *b);
/* The round's bounds from the sim's device parameters (sim_bound.c), given
 * its bytes and least bytes per unit of work (hf__round_bytes):
 * hf_round_stats.sim_bound_s and sim_chunk_bound_s, 0 where they do not apply. */
void hf__sim_bounds(const struct hf__engine *e, double bytes, double rho_min, double *bound,
                    double *chunk_bound);
/* A round's bytes (every chunk's) and its least bytes per unit of work over
 * the chunks that have work (0 when none has): engine.c. */
void hf__round_bytes(const struct hf_round *r, double *bytes, double *rho_min);

#endif
