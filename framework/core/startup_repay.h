/* startup_repay.h - whether a run starts its GPUs, from this load's record
 * (core/startup_repay.c). Internal to core/ and its tests.
 */
#ifndef HF_CORE_STARTUP_REPAY_H
#define HF_CORE_STARTUP_REPAY_H

#include <stddef.h>

#include "sched.h" /* hf_profile_t */

/* The record's entries: a run with CPU and GPUs stores WITH "wall_s" = {its
 * set-up seconds (what depends on the devices), its rounds' seconds, the
 * app's own set-up seconds, its devices' rates over the CPU's}; a run on
 * the CPU alone stores WITHOUT "wall_s" = {set-up, rounds}. */
#define HF_REPAY_WITH "cpu+gpus"
#define HF_REPAY_WITHOUT "cpu_only"

/* Whether a run with CPU and GPUs should start its GPUs, by `record`: 1
 * (start: no record of a run with them, or the CPU alone was not faster by
 * 5% of its wall clock) or 0, with the comparison in words in why[len]. */
int hf__repay_start_gpus(hf_profile_t record, char *why, size_t len);

#endif
