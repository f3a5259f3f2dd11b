/* device_set.h - the choice of the devices that take part in a round, shared by
 * the planning schedulers (HASS, min-min, Qilin). Internal to schedulers/.
 *
 * A planner gives each device's affine model of its bundles (seconds = lat +
 * work * inv) at round_begin; hf__devset_begin compares the full set with the
 * sets that leave devices out, each priced as its split plus what taking part
 * costs that set (learned from the rounds it ran), and returns the round as
 * the planner must see it: the devices left out are not alive in it.
 */
#ifndef HF_DEVICE_SET_H
#define HF_DEVICE_SET_H

#include <stdint.h>

#include "sched.h"

#define HF__DEVSET_SETS 32  /* device sets whose taking-part cost is remembered */
#define HF__DEVSET_WINDOW 8 /* rounds of one set its cost is fitted from */

/* What one device set cost beyond its split, round by round: the round's
 * work and its seconds past the split's prediction. */
struct hf__set_cost {
    uint64_t mask;
    int n, at;
    double w[HF__DEVSET_WINDOW], t[HF__DEVSET_WINDOW];
    double m[HF__DEVSET_WINDOW]; /* the round's makespan: what the set measured in all */
    unsigned char cold[HF__DEVSET_WINDOW]; /* a device of the set ran its first round */
};

/* What one device measured, round by round: the work it ran, its seconds
 * running bundles, and the round's work. */
struct hf__dev_cost {
    int n, at;
    double w[HF__DEVSET_WINDOW], t[HF__DEVSET_WINDOW], round_w[HF__DEVSET_WINDOW];
};

struct hf__devset {
    int ndev;
    struct hf__dev_cost *devc; /* per device */
    int on;                  /* the choice runs: not devices_fixed, 2..64 devices */
    const struct hf_device_info *dev;
    struct hf__set_cost set[HF__DEVSET_SETS];
    int nsets, evict;
    /* This round. */
    struct hf_round view;    /* the round with the left-out devices not alive */
    int *alive;              /* view.alive */
    int chose;               /* a choice was made (models known, 2+ devices alive) */
    uint64_t full, chosen;
    uint64_t last;           /* the set chosen last (not a probe's or a trial's), 0: none */
    double prior_s;          /* the engine's prior for the full set's part (hf_round) */
    int seen_standalone;     /* the standalone pass was taken as a measurement */
    uint64_t warmed;         /* the devices that ran a round (see hf__set_cost.cold) */
    double split_s;          /* the chosen set's predicted split (what its cost is past) */
    double pred_s, full_s, part_s;
    int probe;
    /* Re-measuring the devices left out. */
    int since_probe;         /* rounds run on a subset since the full set last ran */
    double spent_s;          /* seconds of the rounds chosen so far (exploration's budget) */
    int explore;             /* this round tries a set never measured at its size */
    double gap_s;            /* what the full set is predicted to lose against the choice */
    /* How far the chosen sets' predicted rounds missed their makespans. */
    double miss[HF__DEVSET_WINDOW]; /* |makespan - predicted| / makespan, recent rounds */
    int nmiss, miss_at;
};

/* Sets the choice up for env's devices; reads [run] devices_fixed. 0 or an
 * HF_E* code (HF_ECONFIG with hf_fail on a bad value). */
int hf__devset_init(struct hf__devset *s, const struct hf_sched_env *env);
void hf__devset_free(struct hf__devset *s);

/* Chooses the round's device set. Each device is priced by what it measured
 * in the rounds so far, else by the planner's model (lat[d], inv[d] per
 * device, in r's work; inv[d] <= 0 or not finite: no model). A device with
 * neither, or lat and inv NULL (the planner is measuring), and no choice is
 * made: every alive device takes part. Returns the round the
 * planner must plan (r itself, or the view with the left-out devices not
 * alive), valid until the next call. */
const struct hf_round *hf__devset_begin(struct hf__devset *s, const struct hf_round *r,
                                        const double *lat, const double *inv);

/* Learns what the round's set cost beyond its split (its makespan past the
 * split predicted at hf__devset_begin). Call from round_end. */
void hf__devset_end(struct hf__devset *s, const struct hf_round_report *rep);

/* The sched op: the round's choice (1), or 0 when none was made. */
int hf__devset_report(const struct hf__devset *s, struct hf_set_choice *out);

/* The predicted round of device set `mask` for round r (its split in
 * *split, its part in *part), priced as hf__devset_begin prices it (lat,
 * inv: the planner's models, as there); NAN where a device of r has no
 * model. For tools that show the choice (bench/devset_replay.c). */
double hf__devset_price(const struct hf__devset *s, const struct hf_round *r, const double *lat,
                        const double *inv, uint64_t mask, double *split, double *part);

/* The predicted cost past its split of the device set `mask` for a round of
 * `work`: its own fit where it ran, else the most any set inside it cost
 * (taking part never gets cheaper with more devices), else 0. */
double hf__devset_part(const struct hf__devset *s, uint64_t mask, double work);

#endif
