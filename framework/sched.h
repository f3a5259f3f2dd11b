/* sched.h - the scheduler plug-in interface.
 *
 * A scheduler is a `const struct hf_sched_ops` table of callbacks driven by the
 * engine's events: a round begins, a device is idle, a bundle finished with its
 * measured time, the round ends. A scheduler never sleeps, never spawns threads
 * and never reads a clock: the same policy runs unchanged on real devices (wall
 * clock) and in the discrete-event simulator (virtual time).
 *
 * Locking: the engine calls every callback of one scheduler instance with the
 * engine lock held, so callbacks never run concurrently and need no locks of
 * their own. They must be quick: every device waits on that lock.
 *
 * Work is handed out as spans of chunk indices [first, first + count) of the
 * current round's chunk array. The engine checks that every chunk is handed out
 * exactly once per round and fails the run (HF_ESCHED) if a span overlaps an
 * earlier one or the scheduler stops handing out work before every chunk ran.
 */
#ifndef HF_SCHED_H
#define HF_SCHED_H

#include "hetfarm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The profile store as a scheduler sees it: measured numbers per device,
 * persisted under profiles/ between runs (core/profile.c; the engine opens,
 * saves and closes it). It holds named vectors of doubles per device name:
 *     standalone_rate  1.23e12          work/s of the device running a whole load alone
 *     hass.rate        ...              HASS's last measured rates
 *     qilin.fit        a b              Qilin's T(N) = a + b*N
 */
typedef struct hf_profile *hf_profile_t;
/* Copies up to `cap` values of (device, key) into vals; returns how many the
 * profile holds (0 when absent). */
int hf_profile_get(hf_profile_t p, const char *device, const char *key, double *vals, int cap);
/* Stores n values for (device, key), replacing older ones. */
int hf_profile_set(hf_profile_t p, const char *device, const char *key, const double *vals,
                   int n);

/* The cost model of one device (core/cost_model.c, core/cost_bytes.c): a
 * bundle of work w moving b bytes between host and GPU takes
 *     T(w, b) = lat + w * inv + b * inv_bw
 * seconds, fitted from the device's recent bundles. The per-byte term is what a
 * GPU pays for copies its kernels do not hide: on a load whose chunks differ
 * 200x in work but move the same bytes, a GPU's cheap chunks are copy-bound
 * and no line in w alone fits both them and its dear ones (issue 18's hump).
 * inv_bw stays 0 while the bundles' bytes per unit of work do not vary (bytes
 * proportional to work, or none: matmul, a CPU), where it cannot be told from
 * inv; the model is then exactly the affine T(w) = lat + w * inv.
 * The engine keeps one per device for the round's bound (bound_s) and the
 * outliers it records; HASS keeps its own from what `finished` reports. The
 * fit is robust: a Theil-Sen line (median of the slopes between bundles of
 * clearly different sizes, median intercept) over HF_COST_WINDOW accepted
 * bundles, recent ones but of as many sizes as possible, and, where the
 * window's bytes per unit of work differ, a least-median three-term fit that
 * replaces the line when it explains the bundles clearly better and then
 * predicts a bundle it was not fitted to (hf_cost_new_unit drops it when the
 * unit of work changes). A bundle
 * slower than 1.5x the prediction is an outlier: flagged and kept out of the
 * fit. Two surprises in a row in the same
 * direction (both beyond the noise the fit has seen) are a drift, not bad
 * luck: the window restarts from them, so a device that slowed down or sped
 * up is believed after two bundles. The first bundle of a size the device has
 * not run recently is not fitted when it is slower than the fit (a GPU picks
 * and loads kernels for a new GEMM shape): it counts as a warm-up, and as an
 * outlier too when beyond 1.5x. Plain value type; no allocation. */
#define HF_COST_WINDOW 16
struct hf_cost_model {
    double w[HF_COST_WINDOW], t[HF_COST_WINDOW]; /* accepted bundles: work, seconds */
    double b[HF_COST_WINDOW];                    /* ... and their bytes */
    unsigned char fresh[HF_COST_WINDOW]; /* the first bundle of its size */
    long age[HF_COST_WINDOW], clock; /* when each was accepted */
    int n;                /* bundles in the window */
    double lat, inv;      /* the fit: seconds per bundle, seconds per unit of work */
    double inv_bw;        /* seconds per byte moved (0: bytes not told apart from work) */
    double spread;        /* robust relative spread of accepted bundles around the fit */
    int fitted, stale;    /* a fit exists; bundles accepted since it was made */
    int lat_known;        /* a fit has seen bundles of clearly different sizes */
    int restarted;        /* the window restarted on a drift; the scaled fit holds */
    double pw[2], pt[2], pb[2]; /* the surprises of the current run (drift candidates) */
    int run, run_sign;    /* surprises in a row, and their direction */
    int pfresh;           /* the surprise in pw/pt was the first of its size */
    int pwarm;            /* ... taken for a warm-up, not fitted: only its repeat pairs */
    double pdev, pex;     /* ... and how far off the fit it was: relative, in seconds */
    long outliers;        /* bundles flagged so far */
    double sizes[64];     /* recent distinct bundle sizes (work), a ring */
    int nsizes, size_at;
    long warmups;         /* first bundles of a size, slower than the fit, not fitted */
    long unit_from;       /* bundles accepted before this clock are in an older unit of work:
                             the per-byte term is fitted from later ones only */
    double cand[3];       /* a three-term fit (lat inv inv_bw) not yet believed ... */
    int has_cand;         /* ... until it predicts a bundle it was not fitted to */
    int warm_fresh;       /* set by the owner: before the latency is known, a new size
                             slower than any latency allows is a warm-up kept for the
                             slope (hf_cost_add) */
    int no_warmup;        /* set by the owner: the device pays nothing for a new bundle
                             size (a CPU), so every bundle is taken as a repeat */
    long judged;          /* bundles judged against a fit, ... */
    long stalls;          /* ... slow outliers among them that were one-offs (the next
                             bundle did not confirm a drift), ... */
    double stall_excess;  /* ... and those one-offs' seconds beyond the fit, summed */
};
/* Empties a model. */
void hf_cost_init(struct hf_cost_model *m);
/* Adds one bundle of `work` moving `bytes` (0 for a CPU, or where nothing is
 * copied) that took `seconds`; returns 1 when it was flagged as an outlier
 * (far slower than the fit predicts), else 0. Ignores empty bundles. */
int hf_cost_add(struct hf_cost_model *m, double work, double bytes, double seconds);
/* A bundle of `work` ran but is not fitted (a GPU's very first, which holds
 * its first launch): its size is no longer new, so the next bundle of that
 * size is a repeat, which tells the intercept, not a warm-up. */
void hf_cost_seen(struct hf_cost_model *m, double work);
/* The unit of work changed (a repeating load's chunk costs were re-estimated:
 * hf_round.cost_moved): the bundles in the window still fit a line, as they
 * always did, but no longer tell a per-byte term from the cost per unit of
 * work, so the term is dropped until bundles in the new unit show it again.
 * A model with `warm_fresh` also drops its repeats (bundles of a size run
 * before), whose intercept is the old unit's. */
void hf_cost_new_unit(struct hf_cost_model *m);
/* What a bundle of a new size costs the device once, by the window: the median
 * of its first-of-size bundles' excess over the fit, whose intercept comes from
 * repeats; 0 while the window holds no repeat, fewer than two first-of-size
 * bundles, or no known latency. */
double hf_cost_warmup(const struct hf_cost_model *m);
/* The device's stall risk: the seconds one more bundle costs it beyond its
 * fit on average, in slow one-off outliers (stalls: an outlier the next
 * bundle did not confirm as a drift), = their rate per judged bundle times
 * their mean excess; 0 before any. A surprise still pending is not counted:
 * it may yet be a drift. */
double hf_cost_stall_risk(const struct hf_cost_model *m);
/* Counts one bundle that stalled `excess` seconds, seen by the model's owner
 * apart from the fit (a profile span slower per unit than a smaller one). */
void hf_cost_stall(struct hf_cost_model *m, double excess);
/* Refits from the accepted bundles when any arrived since the last fit. */
void hf_cost_refit(struct hf_cost_model *m);
/* The fitted time of a bundle of `work` moving `bytes`; 0 while the model has no fit. */
double hf_cost_time(const struct hf_cost_model *m, double work, double bytes);
/* The split under affine models that makes every device finish together: finds
 * the smallest T with sum over usable devices of max(0, T - lat[d]) / inv[d] >=
 * work and writes each device's work into x (0 for a device left out because
 * its latency alone reaches T). A device is usable when use[d] (NULL: all) and
 * inv[d] > 0. Returns T, or INFINITY when no device is usable. A model with a
 * per-byte term enters it with the bytes folded into inv at the bytes per
 * unit of work its share will move (the mean chunk's, for a plan in counts). */
double hf_cost_split(const double *lat, const double *inv, const int *use, int n, double work,
                     double *x);
/* The least time T at which fits(arg, T) holds, for a test that once true
 * stays true as T grows (the devices can take the work by T): starts at
 * `from` (0: from 1e-9), doubles until it fits, then bisects to 1e-12
 * relative. Returns the upper end (it fits there) and sets *below (may be
 * NULL) to the lower end (it does not, or `from`); INFINITY when nothing up
 * to 2^2000 times `from` fits. One search for every "smallest T" of a split
 * whose capacity has no closed form (shared links, bytes; cost_model.c). */
double hf_cost_least_time(int (*fits)(void *arg, double T), void *arg, double from,
                          double *below);
/* A lower bound on the split of `work` and `bytes` under three-term models:
 * the smallest T for which some shares x[d] of the work and y[d] of the bytes
 * (any, not tied to chunks) give every usable device lat + x inv + y inv_bw
 * <= T. Bytes then go where they cost least per the work they displace, so no
 * real split of chunks beats it (core/cost_bytes.c). With inv_bw all 0, or
 * bytes 0, it is hf_cost_split. Returns T, or INFINITY when no device is
 * usable. */
double hf_cost_split_bound(const double *lat, const double *inv, const double *inv_bw,
                           const int *use, int n, double work, double bytes);

/* A run of contiguous chunks of the current round. */
struct hf_span {
    size_t first, count;
    int stolen; /* set by the scheduler when the span came from another device's buffer */
};

/* What a scheduler is created with; valid until destroy. */
struct hf_sched_env {
    int ndevices;
    const struct hf_device_info *dev;
    hf_config_t cfg;       /* knobs live in the section named after the scheduler */
    hf_profile_t profile;  /* profile store for this app and load; never NULL */
    const char *app;       /* app name */
    uint64_t seed;
};

/* The current round, valid from round_begin until round_end returns. */
struct hf_round {
    int round;                    /* 0, 1, ... */
    size_t nchunks;
    const struct hf_chunk *chunks; /* nchunks chunks, in order */
    double total_work;             /* sum of chunks[i].work */
    const int *alive;              /* alive[d] = 0: device d runs nothing this round (retired
                                      after a fault, or a GPU sitting out a load marked
                                      cpu_only); a device may come back in a later round */
    const double *standalone_rate; /* per device work/s running a whole load alone (the
                                      ideal's rates); NULL when unknown. Only schedulers that
                                      model a static mapping from a profile (minmin) read it. */
    int repeats;                   /* the load is the round before's again: the same chunks
                                      with the same declared work (0 when unknown) */
    int work_exact;                /* the app says each chunk's work is what it costs
                                      (hf_load.work_exact): a device's time on any chunks
                                      tells its speed, not the chunks' cost */
    double cost_moved;             /* how far the chunks' estimated costs moved since the round
                                      before, as a share of the total work (sum of |change| /
                                      total_work; 0 for a new load or unchanged costs). When it
                                      is above a few percent, work a scheduler measured in
                                      earlier rounds is in an older unit: re-express it from the
                                      spans (the load repeats, so the chunks are the same). */
    double solo_rounds;            /* hf_load.solo_rounds: the rounds of the split path one
                                      device alone covers in one round (>= 1; 1 when the app
                                      does not say) */
    double part_prior_s;           /* what the engine expects a round of every alive device to
                                      cost past its bundles before such a round was measured
                                      (core/part_prior.c: the shared-data merge of what the
                                      round may change); 0 for an app without shared data */
};

/* What each device did in the round just ended. */
struct hf_round_report {
    int round;
    double makespan_s;
    const double *work;     /* per device: work of the chunks it ran */
    const double *busy_s;   /* per device: seconds spent running bundles */
    const size_t *chunks;   /* per device: chunks it ran */
    double outside_s;       /* seconds of the round before its first bundle began and after
                               its last ended: what taking part cost beyond the bundles (the
                               shared-data merge and copy-back, syncs, host turnaround) */
};

/* The device set a planning scheduler ran the round on (schedulers/device_set.c):
 * the devices that took part, and what the choice predicted. */
struct hf_set_choice {
    int *use;      /* per device (the caller's array of ndevices): 1 = took part */
    double pred_s; /* the chosen set's predicted round, taking-part costs included */
    double full_s; /* ... the full set's (every alive device) */
    double part_s; /* the chosen set's predicted cost beyond its bundles' split */
    int probe;     /* the full set ran to re-measure devices left out */
};

struct hf_sched_ops {
    const char *name;    /* looked up by `scheduler =` in [run] */
    const char *summary; /* one line for `hetfarm compare --help` */
    /* The knobs of [<name>] (section NULL), for validation and help;
     * NULL-key terminated. Optional: NULL leaves the section unchecked; an
     * empty table means the scheduler has no knobs. */
    const struct hf_config_key *keys;

    /* Called once before round 0. Reads knobs from [<name>] and allocates the
     * state. HF_ECONFIG (with hf_fail) on a bad knob. Required. */
    int (*create)(void **state, const struct hf_sched_env *env);

    /* Called at the start of every round, before any `next`. Required. */
    int (*round_begin)(void *state, const struct hf_round *r);

    /* Device `dev` is idle and asks for work. Fill `out` and return 1, or
     * return 0 when there is nothing for this device right now (it is asked
     * again after the next bundle of any device finishes), or a negative
     * HF_E* code to stop the run. Required. */
    int (*next)(void *state, int dev, struct hf_span *out);

    /* The span handed to `dev` ran in `seconds` (wall or virtual), covering the
     * transfers and the kernel. Optional. */
    void (*finished)(void *state, int dev, const struct hf_span *span, double seconds);

    /* Called after every chunk of the round ran: the adaptation phase. Optional. */
    int (*round_end)(void *state, const struct hf_round_report *rep);

    /* The share of the work the scheduler plans for each device next round
     * (ratios summing to 1), written to out[0..ndevices-1]; returns 1 when it
     * has such a plan, 0 otherwise. Recorded per round in results.json. Optional. */
    int (*plan)(void *state, double *out);

    /* The device set of the round that just ran (after its last bundle, before
     * round_end): fills `out` and returns 1 when the scheduler chose among
     * device sets this round, 0 when it did not (profiling, [run]
     * devices_fixed, one device). Recorded per round in results.json. Optional. */
    int (*device_set)(void *state, struct hf_set_choice *out);

    /* Frees the state. Optional. */
    void (*destroy)(void *state);
};

/* The registry (schedulers/registry.c): NULL-terminated, in display order. */
extern const struct hf_sched_ops *const hf_schedulers[];
/* Looks a scheduler up by name; NULL when unknown. */
const struct hf_sched_ops *hf_sched_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
