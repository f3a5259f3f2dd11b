/* hass.h - HASS's state and the functions its files share (hass.c: the round
 * flow; hass_profile.c, hass_plan.c, hass_rates.c, hass_steal.c, hass_adapt.c,
 * hass_link.c: one mechanism each). Internal to schedulers/.
 */
#ifndef HF_HASS_H
#define HF_HASS_H

#include <math.h>
#include <stddef.h>

#include "sched.h"
#include "device_set.h"
#include "sched_util.h"

#define HASS_SIZES 64   /* bundle sizes remembered per device */
#define HASS_AMORTISE 4 /* rounds a changed split must pay its warm-up back in */
#define HASS_COLD 4     /* a probe's chunk, run cold, may take this many times its model's time */
#define HASS_PIECES 4   /* a GPU's long share runs as this many bundles (hass_plan.c) */
#define HASS_PIECE_COST 0.01 /* ... where their extra costs are at most this share of its time */
#define HASS_HEDGE_PAYS 8    /* hedge a slow surprise whose excess is this many hedges' costs */

/* Where a GPU stands with the repeat of its first fitted profile span, or of
 * its first bundle: the repeat tells its latency from its per-size warm-up
 * (hass_profile.c). */
enum hass_repeat {
    REPEAT_NONE_FITTED, /* no profile span fitted yet */
    REPEAT_FIRST,       /* the first bundle ran: repeat it where the pool is nearly empty */
    REPEAT_ONE_FITTED,  /* the first fitted: psize, pwork, ptime hold it */
    REPEAT_DUE,         /* run it again */
    REPEAT_AGAIN,       /* the repeat stalled: run it once more */
    REPEAT_DONE,        /* run, or not needed */
};

/* The per-device arrays of struct hass (name, slots per device), allocated
 * and freed together. */
/* clang-format off */
#define HASS_ARRAYS(X)                                                                           \
    X(model, 1) X(rate, 1) X(inv_bw, 1) X(ratio, 1) X(plan_n, 1) X(hedge, 1) X(piece, 1)         \
    X(piece_plan, 1) X(released, 1) X(spent, 1) X(peer_lat, 1) X(peer_inv, 1) X(warm, 1)         \
    X(nwarm, 1) X(fed, 1) X(sizes, HASS_SIZES) X(first_t, HASS_SIZES) X(first_w, HASS_SIZES)     \
    X(left_out, 1) X(last_rate, 1) X(last_plan, 1) X(bundles, 1) X(busy_last, 1)                 \
    X(bundles_last, 1) X(plan_ran, 1) X(was_alive, 1) X(link_of, 1) X(link_bw, 1)                \
    X(wait_s, 1) X(link_batch, 1) X(give_epoch, 1) X(wait_known, 1) X(link_clean, 1)             \
    X(buf, 1) X(committed, 1) X(inflight, 1) X(pspan, 1) X(prate, 1) X(pslow, 1)                 \
    X(profiled, 1) X(pdone, 1) X(prep, 1) X(psize, 1) X(pwork, 1) X(ptime, 1)                 \
    X(run_w, 1) X(run_at, 1)
/* clang-format on */

/* The per-device arrays that start every round at zero. */
#define HASS_ROUND_ARRAYS(X)                                                                       \
    X(bundles) X(buf) X(committed) X(inflight) X(piece) X(released) X(spent) X(run_w) X(run_at)

struct hass {
    int ndev;
    const struct hf_device_info *dev;
    hf_profile_t profile;

    long profile_chunks, reprobe;
    double growth_stop, stable_tol, reserve;
    int steal, warm_start;

    struct hf_cost_model *model; /* per device */
    double *rate;                /* work/s per device from its split model, 0 = unknown */
    double *inv_bw;              /* per device: the model's s per byte when rate was set */
    double *ratio;               /* planned shares of the next round, sum to 1 */
    size_t *plan_n;              /* chunk counts of the plan (for plan_chunks chunks) */
    size_t plan_chunks;
    double plan_reserve; /* the reserve fraction of the plan in force */
    double *hedge;       /* per GPU: the part of its share laid at a CPU's tail next round */
    size_t *piece;       /* per GPU: chunks per bundle of its own buffer (0: one bundle) */
    size_t *piece_plan;  /* per GPU: its planned count when its pieces were switched on */
    double *released;    /* per GPU: a slow surprise piece's rate: its buffer is open */
    double *spent;       /* per device: seconds of its bundles finished this round */
    double *peer_lat, *peer_inv; /* per GPU: its peers' pooled split model (inv 0: none) */
    int have_ratio;
    double *warm;              /* per device: what a bundle of a new size costs it once (s) */
    long *nwarm;               /* per device: measures of it so far */
    long *fed;                 /* per device: spans seen by `finished` */
    size_t *sizes;             /* per device: bundle sizes (chunks + 1) it ran, HASS_SIZES each */
    double *first_t, *first_w; /* per size slot: a GPU's first bundle's s and work, till a repeat */
    long *left_out;            /* rounds in a row the device got nothing */
    int learned;               /* the load repeats and its chunk costs have been re-estimated */
    int by_rates;              /* the plan in force came from measured rates (hass_rates.c) */
    int plan_due;              /* the next round's plan waits for its unit (hass_rates.c) */
    double *last_rate;         /* per device: its measured rate in the round before */
    size_t *last_plan;         /* per device: its planned chunks in the round before */
    double rate_noise;         /* how far rates move between rounds of one plan */
    double plan_pred;          /* the makespan the plan by rates in force predicted (s), 0: none */
    double pred_noise;         /* how far rounds missed it */
    long *bundles;             /* per device: bundles it ran this round */
    double *chunk_s;           /* per chunk of a repeating load: the seconds it last took a CPU, */
    int *chunk_dev;            /* ... that CPU (-1: none yet), */
    int *ran_by;               /* ... and the device that ran it in the last round (-1: none) */
    size_t chunk_n;            /* the chunks those arrays hold */
    double *busy_last;         /* per device: its seconds of bundles in the last round, ... */
    long *bundles_last;        /* ... its bundles, ... */
    size_t *plan_ran;          /* ... and its count in the plan that round ran */
    int *was_alive;            /* per device: alive in the last round (it may sit a round out) */

    /* Shared links (hass_link.c). */
    int nlinks;
    int *link_of;       /* per device: its link's index, -1 = none */
    double *link_bw;    /* per link: bytes/s, declared or learned; 0 = no constraint */
    double *wait_s;     /* per device: its in-flight span's estimated wait for the link */
    double *link_batch; /* per link: bytes handed out since time last moved */
    long link_epoch;    /* moves of time (hf__hass_link_tick) */
    long *give_epoch;   /* per device: the epoch its in-flight span was handed out in */
    int *wait_known;    /* per device: its in-flight span's wait is known */
    int *link_clean;    /* per device: its model had a span of known wait */

    struct hf__devset devset; /* which devices take part (device_set.c) */

    /* The current round (the device set's view: a device left out is not alive). */
    const struct hf_round *r;
    double mean_bytes; /* its mean chunk's bytes */
    struct hf__buf *buf;
    int split;         /* buffers laid out (otherwise round 0's shared pool) */
    size_t pool_next;  /* front of round 0's shared pool */
    double *committed; /* work handed to each device this round */
    int *inflight;     /* a span of the device is running */
    double *run_w;     /* per device: the work of its span in flight, ... */
    double *run_at;    /* ... and the round's clock (hass_clock) when it was handed out */

    /* Round 0 profiling, per device (hass_profile.c). */
    int profiling;          /* this round began with no plan: it profiles from the shared pool */
    size_t *pspan;          /* a GPU's current profile span */
    double *prate;          /* a GPU's best measured rate so far */
    int *pslow;             /* a GPU's profile span came in slower per unit than the last: rerun */
    int *profiled;          /* rate known */
    long *pdone;            /* a CPU's chunks measured */
    enum hass_repeat *prep; /* a GPU's repeat of its first fitted profile span */
    size_t *psize;          /* the first fitted span: its chunks, ... */
    double *pwork, *ptime;  /* ... its work and seconds */
};

/* Whether model m holds a slow surprise it does not believe yet (one bundle
 * much slower than its fit), in m->pw[0] work taking m->pt[0] seconds. */
static inline int hass_slow_surprise(const struct hf_cost_model *m)
{
    return m->fitted && m->run == 1 && m->run_sign > 0 && m->pw[0] > 0.0;
}

/* The round's clock, never read from one: the most seconds of bundles any
 * alive device has finished this round (the true time's nearest lower bound). */
static inline double hass_clock(const struct hass *h)
{
    double now = 0.0;
    for (int d = 0; d < h->ndev; d++)
        if (h->r->alive[d])
            now = fmax(now, h->spent[d]);
    return now;
}

/* Whether the other alive devices together run at half device d's rate or
 * more: enough help to take over part of its share mid-round. */
static inline int hass_has_helpers(const struct hass *h, int d)
{
    double all = 0.0;
    for (int k = 0; k < h->ndev; k++)
        all += h->r->alive[k] ? h->rate[k] : 0.0;
    return all - h->rate[d] >= 0.5 * h->rate[d];
}

/* Whether no CPU is alive in the round. */
static inline int hass_gpus_alone(const struct hass *h)
{
    for (int d = 0; d < h->ndev; d++)
        if (!h->dev[d].is_gpu && h->r->alive[d])
            return 0;
    return 1;
}

/* Whether the round's GPUs run alone on work whose declared cost may be off
 * (!hf_round.work_exact): a GPU's time is its speed and its region's cost. */
static inline int hass_regions_confound(const struct hass *h)
{
    return !h->r->work_exact && hass_gpus_alone(h);
}

/* How far a bundle may miss device d's model before it is a surprise to it
 * (cost_model.c: max(10%, 3x its spread)), relative. */
static inline double hass_tolerated(const struct hass *h, int d)
{
    return fmax(0.1, 3.0 * h->model[d].spread);
}

/* Device d's set of bundle sizes (HASS_SIZES slots of chunks + 1, open
 * addressing): the slot of `count`, else the empty one it takes; -1: full. */
static inline long hass_size_find(const struct hass *h, int d, size_t count)
{
    const size_t *set = h->sizes + (size_t)d * HASS_SIZES, key = count + 1;
    for (size_t i = 0, k = key % HASS_SIZES; i < HASS_SIZES; i++, k = (k + 1) % HASS_SIZES)
        if (set[k] == key || set[k] == 0)
            return (long)((size_t)d * HASS_SIZES + k);
    return -1;
}

/* What a bundle of a size device d never ran costs it once: its learned
 * warm-up or what its model's window shows (hf_cost_warmup), the larger. */
static inline double hass_new_size_cost(const struct hass *h, int d)
{
    return fmax(h->warm[d], hf_cost_warmup(&h->model[d]));
}

/* What a bundle of `count` chunks costs device d once: the new size's cost,
 * 0 where d ran that size (a full set counts every size as run). */
static inline double hass_size_cost(const struct hass *h, int d, size_t count)
{
    long k = hass_size_find(h, d, count);
    return k < 0 || h->sizes[k] == count + 1 ? 0.0 : hass_new_size_cost(h, d);
}

/* Empties device d's model; it expects a warm-up on every new size. */
static inline void hass_model_reset(struct hass *h, int d)
{
    hf_cost_init(&h->model[d]);
    h->model[d].warm_fresh = 1;
}

/* Sets model m to the line lat + w * inv + b * inv_bw, fitted (a guess or a
 * saved model: the device's own bundles replace it). */
static inline void hass_model_set(struct hf_cost_model *m, double lat, double inv, double inv_bw)
{
    m->lat = lat;
    m->inv = inv;
    m->inv_bw = inv_bw;
    m->fitted = 1;
}

/* hass_profile.c: round 0. */
void hf__hass_profile_begin(struct hass *h);
int hf__hass_pool_take(struct hass *h, int d, struct hf_span *out);
int hf__hass_profile_stall(struct hass *h, int d, const struct hf_span *span, double work,
                           double seconds, double own, int fit);
void hf__hass_profile_step(struct hass *h, int d, const struct hf_span *span, double work,
                           double seconds, double own, int fit, int first);
void hf__hass_profile_end(struct hass *h, const struct hf_round *r);
int hf__hass_warm_models(struct hass *h);
void hf__hass_save_models(struct hass *h);

/* hass_plan.c: the split under the devices' cost models. */
void hf__hass_refresh_rates(struct hass *h);
void hf__hass_set_models(const struct hass *h, double *lat, double *inv);
void hf__hass_split_model(const struct hass *h, int d, double w, double *lat, double *inv);
double hf__hass_latency(const struct hass *h, int d);
double hf__hass_allowance(const struct hass *h, int d, size_t c, double w);
double hf__hass_finish(const struct hass *h, int d, const size_t *counts, double w, int pad);
int hf__hass_plan_counts(struct hass *h, size_t n, size_t *counts);
int hf__hass_surprise_late(const struct hass *h, int d, size_t count, double w, double ms);
void hf__hass_add_probes(struct hass *h, size_t *counts);
double hf__hass_reserve_for(const struct hass *h, const size_t *counts);
void hf__hass_lay_out(struct hass *h, size_t *counts, size_t base);
void hf__hass_plan_pieces(struct hass *h);
void hf__hass_split_rest(struct hass *h, size_t base);

/* hass_rates.c: the plan of a learned load, by the rates measured. */
void hf__hass_chunks_begin(struct hass *h, const struct hf_round *r);
int hf__hass_plan_by_rates(struct hass *h, const double *work, const double *busy, size_t n);

/* hass_adapt.c: what finished bundles and rounds teach. */
void hf__hass_learn(struct hass *h, int d, const struct hf_span *span, double seconds);
int hf__hass_plan_next(struct hass *h, const double *work, const double *busy, size_t n,
                       int by_rates);
void hf__hass_hedge_surprises(struct hass *h);

/* hass_steal.c: what a device with an empty buffer takes. Each returns 1
 * with a span in out, else 0. */
int hf__hass_steal(struct hass *h, int d, struct hf_span *out);
int hf__hass_cpu_should_leave(const struct hass *h, int c);
int hf__hass_released_piece(struct hass *h, int d, struct hf_span *out);

/* hass_link.c: shared links in the split. */
void hf__hass_links_refresh(struct hass *h);
double hf__hass_link_split(const struct hass *h, const double *lat, const double *inv,
                           const int *use, double work, double rho, double *x);
double hf__hass_link_wait(const struct hass *h, int d, const size_t *counts);
void hf__hass_link_tick(struct hass *h);
void hf__hass_link_give(struct hass *h, int d, double bytes);
int hf__hass_link_fit(struct hass *h, int d);
int hf__hass_link_may_steal(const struct hass *h, int d);
void hf__hass_link_guess(struct hass *h);
double hf__hass_link_finish_plus(const struct hass *h, int d, size_t *counts, double w);
double hf__hass_link_own(const struct hass *h, int d, double bytes, double seconds);

#endif
