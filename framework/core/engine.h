/* engine.h - running an app under a scheduler, and what a run records.
 *
 * hf_run() drives the rounds: next_load -> partition -> scheduler hands out
 * spans -> devices run bundles -> collect -> adapt. Two engines share that loop:
 * `real` (a host thread per device, wall-clock time) and `sim` (discrete events
 * in virtual time, deterministic for a seed). The result is a `struct hf_run`
 * that report/ writes as results.json, a Chrome trace and the HTML report.
 */
#ifndef HF_ENGINE_H
#define HF_ENGINE_H

#include "device.h"
#include "hetfarm.h"
#include "sched.h"

#ifdef __cplusplus
extern "C" {
#endif

enum hf_engine_kind { HF_ENGINE_REAL, HF_ENGINE_SIM };

struct hf_mpi; /* the rank transport of a run across nodes (framework/mpi) */

/* The most figures an app may report for a run. */
#define HF_RUN_FIGURES 16
/* The most figures an app may report for a round (struct hf_app.round_figures). */
#define HF_ROUND_FIGURES 4

struct hf_run_options {
    const struct hf_app *app;
    const struct hf_sched_ops *sched;
    hf_config_t cfg;
    enum hf_engine_kind engine;
    int rounds;             /* loads to run (the app may end sooner) */
    uint64_t seed;
    size_t grain;           /* units per chunk; 0 = app default */
    int execute;            /* sim engine: also run every bundle on the CPU (tests) */
    int verify;             /* call app->verify after every round */
    const char *profile_dir;/* NULL = in-memory profiles */
    int progress;           /* draw a progress line on stderr */
    int reprofile;          /* measure standalone rates even if the profile has them */
    struct hf_mpi *nodes;   /* a run across nodes (mpirun): rank 0 lists the other ranks as
                               node devices (real engine); NULL: this process alone */
    int cost_read_only;     /* read the chunk costs saved beside the profile, write none back
                               (compare's timed runs: each starts from what its warm-up left) */
    int repay;              /* start the GPUs only where this load's record says they repay
                               their start-up, and record the run for the next (a plan's only
                               run: the runs of a comparison all start the same devices) */
};

/* One bundle as it ran: the trace and the Gantt chart are drawn from these. */
struct hf_event {
    int round, device;
    size_t first, count; /* chunk span */
    double work;
    double start_s, end_s; /* since the start of the run */
    struct hf_bundle_times t;
    int stolen;
    int outlier;         /* far slower than the device's cost model predicted (not fitted) */
};

/* One figure of an app's, as a run keeps it. */
struct hf_run_figure {
    char name[32], unit[32];
    double value;
};

struct hf_round_device {
    size_t chunks, bundles, stolen;
    size_t outliers;            /* bundles flagged by the cost model (struct hf_event.outlier) */
    double work, share, busy_s;
    double more_work;           /* work its bundles did past their chunks' (hf_bundle_did_more) */
    double bytes;               /* host<->GPU bytes of its bundles (a GPU's; 0 for a CPU) */
};

struct hf_round_stats {
    int round;
    double makespan_s;
    double bound_s;    /* the best makespan any split of the round's work could reach under the
                          devices' fitted affine models (a lower bound; see engine.c) */
    double ideal_s;    /* work / sum of standalone rates: the older figure, not a bound */
    double efficiency; /* bound_s / makespan_s, <= 1 */
    double sim_bound_s;         /* sim engine: the same bound from the devices' modelled
                                   parameters, one yardstick for every scheduler (sim_bound.c);
                                   0 where it does not apply */
    double sim_chunk_bound_s;   /* ... the best split in whole chunks (equal chunks only) */
    size_t load_units;          /* the round's load: units (a frontier's vertices) ... */
    double load_work;           /* ... and work (their edges), as the app drew it */
    /* Host seconds around the devices' work (wall clock, either engine): the
     * app's next_load, cutting the load into chunks (with their learned costs;
     * in round 0 also the first upload of shared data), the shared-data merge
     * (also inside makespan_s), the round's statistics with the scheduler's
     * adaptation, and the app's verify. cpu_s is the process's CPU time
     * (every thread's) from the round's start to its end, merge included: on
     * a machine shared with other work, where wall times swing, what the
     * round cost in CPU. */
    struct hf_round_host {
        double next_load_s, partition_s, merge_s, adapt_s, verify_s, cpu_s;
    } host;
    int has_plan;
    double *plan;               /* scheduler's planned shares for the next round */
    int has_set;                /* the scheduler chose the round's device set (set.use: who
                                   took part; a device left out has share 0, shown "-") */
    struct hf_set_choice set;   /* ... and what it predicted (sched.h) */
    struct hf_round_device *dev;/* per device */
    struct hf_round_device *inner; /* per device inside a node (struct hf_run.inner), or NULL:
                                      chunks, bundles, work, busy_s; share of its node's work */
    int nfigures;               /* the app's figures of the round (struct hf_app.round_figures) */
    struct hf_run_figure figures[HF_ROUND_FIGURES];
};

/* Everything a run records (one scheduler on one device set). */
struct hf_run {
    char scheduler[32], app[32], engine[8];
    char signature[128];        /* the load, e.g. "n=4096 dtype=float32" */
    int ndevices;
    struct hf_device_info *devs;
    double *standalone_rate;    /* work/s per device running a whole load alone */
    double total_work;          /* of one load */
    size_t nchunk_cost;         /* the last load's chunks, when their costs were learned ... */
    double *chunk_cost;         /* ... and each chunk's learned cost (core/chunk_cost.c), or NULL */
    int chunk_cost_loaded;      /* the run started from estimates saved by an earlier run */
    char chunk_costs[16];       /* what the judge made of the declared work: exact, declared,
                                   learning, learned or noise (hf__chunk_cost_verdict) */
    int ninner;                 /* devices inside the nodes of a run across nodes (0: none) */
    struct hf_inner_device {
        char name[64];          /* "node1:cpu", "node1:cuda0" */
        int node;               /* index in devs of the node device it belongs to */
    } *inner;
    int nrounds;
    struct hf_round_stats *rounds;
    int rounds_cap;             /* slots in rounds[] (hf__run_round_slot grows it) */
    /* How the run ended for an app with an end of its own (struct
     * hf_app.stopped; `ends` set): stop is HF_STOP_NONE when the app reached
     * its end, else [run] rounds stopped it after nrounds rounds with `left`
     * (the app's words) still to do. */
    int ends;
    int stop;                   /* enum hf_stop */
    char left[160];
    size_t nevents;
    struct hf_event *events;
    size_t ninner_events;       /* the bundles the devices inside the nodes ran, their
                                   `device` an index into `inner`, their times on this
                                   run's clock (mapped from each node's: mpi/node.c) */
    struct hf_event *inner_events;
    double wall_s;              /* host seconds the run took */
    double teardown_s;          /* ... of which its teardown after the last round (devices
                                   closed, the app's data freed) */
    struct hf_run_startup {     /* host seconds before round 0, in order (wall clock): */
        double input_s;         /* the app's create and setup: its input read, its data made */
        double app_s;           /* ... of which the app's own (the rest: the wait for GPU
                                   contexts that outlasted the read) */
        double devices_s;       /* the devices started (drivers' open: a GPU's buffers, the
                                   shared data's upload; its context was made during input_s) */
        double standalone_s;    /* the standalone passes (0 when the profile store had them) */
    } startup;
    char unstarted[384];        /* why configured GPUs were not started ("": all were;
                                   core/startup_repay.c) */
    char fault[256];            /* what went wrong on a device, "" if nothing */
    int pass;                   /* `compare` with [compare] passes > 1: which (1..), else 0 */
    char bound[16];             /* which bound its rounds' bound_s is: HF_BOUND_MEASURED, or ""
                                   for the engine's, from the run's own fitted models */
    int nfigures;               /* the app's own figures (struct hf_app.figures) */
    struct hf_run_figure figures[HF_RUN_FIGURES];
};

/* The record of the run's next round, run->rounds[run->nrounds], zeroed,
 * making room as rounds run (an app with an end of its own may run up to
 * the most rounds [run] rounds allows, and most end long before); NULL when
 * out of memory. The caller counts it in nrounds once it is filled. */
struct hf_round_stats *hf__run_round_slot(struct hf_run *run);
/* Runs opts->rounds loads and fills *out (free with hf_run_free). On failure
 * returns an HF_E* code with hf_fail details and *out is NULL. */
int hf_run(const struct hf_run_options *opts, struct hf_run **out);
/* As hf_run; on failure, when `partial` is not NULL, *partial receives what
 * the run finished before it failed (free with hf_run_free): the run record
 * with the rounds that ran to their end and were verified, their bundles
 * (inside the nodes too) and the standalone rates, without the app's figures
 * of the whole run; NULL when no round finished. The error and its message
 * are hf_run's. */
int hf_run_keep_partial(const struct hf_run_options *opts, struct hf_run **out,
                        struct hf_run **partial);
/* A node's side of a run across nodes (every rank but 0, under mpirun): sets
 * up the run as hf_run does (its own devices, opts->sched as its scheduler),
 * then runs the chunk spans rank 0 hands it, each as a round of its own, and
 * sends back each span's completion and results, until rank 0 says stop.
 * Returns 0, or an HF_E* code with hf_fail details (the caller should then
 * end the job: rank 0 cannot go on without this node). HF_EINVAL in a build
 * without MPI. */
int hf_run_serve(const struct hf_run_options *opts);
/* Asks every run in progress (and every later one) to stop: no new span is
 * handed out, bundles already running finish, the devices are closed and
 * hf_run fails with HF_EINTR. Async-signal-safe: meant for a SIGINT or
 * SIGTERM handler; `sig` is remembered for the exit status. */
void hf_run_interrupt(int sig);
/* The signal given to hf_run_interrupt, 0 when none. */
int hf_run_interrupted(void);
void hf_run_free(struct hf_run *run);

/* struct hf_run.bound of runs whose bound_s is the measured split. */
#define HF_BOUND_MEASURED "measured-split"
/* The measured split (core/measured_bound.c): sets bound_s and efficiency of
 * every round of runs[0..nruns), and their `bound`, to one bound per round of
 * the runs that drew the same load on the same devices, from the spans every
 * one of them ran (their events): each device's least measured seconds per
 * unit of a chunk cost fitted from all the spans, split so that all finish
 * together. Never above any pooled run's makespan. A run with a round no run
 * measured (no events) keeps the engine's bound in every round. Returns 0 or
 * HF_ENOMEM (then some runs may have it and others not). */
int hf_bound_measured(struct hf_run *const *runs, int nruns);

/* A round's lower bound, bound_s (engine.c says why it is one): the best
 * makespan any split of `total` work and `bytes` in `nchunks` chunks could
 * reach under the devices' cost models (refitted here), each scaled down to
 * what its device achieved in st[d]; a device with cpu[d] set runs one chunk
 * per bundle and pays its latency per chunk; alive NULL means every device may
 * take part. With info (the devices' descriptions, or NULL), devices that
 * declare a shared link and its bandwidth take at most bandwidth * T / rho_min
 * of the work between them (rho_min: the round's least bytes per unit of
 * work). Shared by the engines (engine.c, engine_starpu.c). */
double hf__round_bound(struct hf_cost_model *cost, const struct hf_round_device *st,
                       const int *cpu, const int *alive, int n, double total, double bytes,
                       size_t nchunks, const struct hf_device_info *info, double rho_min);

#ifdef __cplusplus
}
#endif
#endif
