/* part_prior.h - what a round of every alive device is expected to cost past
 * its bundles before any such round was measured (part_prior.c). Internal to
 * core/.
 */
#ifndef HF_CORE_PART_PRIOR_H
#define HF_CORE_PART_PRIOR_H

#include <stddef.h>

#define HF__PRIOR_WINDOW 8 /* merges the per-element cost is the median of */

struct hf__part_prior {
    double per_elem[HF__PRIOR_WINDOW]; /* seconds per merged element, recent merges */
    int n, at;
    double changes_per_work; /* the last round's changed elements per unit of work; < 0: none */
};

struct hf__engine;

void hf__part_prior_init(struct hf__part_prior *p);
/* The prior for a round of `work` on every alive device (hf_round.part_prior_s). */
double hf__part_prior(const struct hf__engine *e, double work);
/* Learns from the round just merged (its work, the devices that ran in it)
 * and the merge's seconds. */
void hf__part_prior_learn(struct hf__engine *e, double merge_s);

#endif
