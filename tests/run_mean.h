/* run_mean.h - the mean makespan of a run's rounds from round 2, for tests
 * that compare schedulers past their first, profiling rounds. */
#ifndef HF_TEST_RUN_MEAN_H
#define HF_TEST_RUN_MEAN_H

#include "core/engine.h"

static inline double mean_from_round_2(const struct hf_run *run)
{
    double sum = 0.0;
    for (int r = 2; r < run->nrounds; r++)
        sum += run->rounds[r].makespan_s;
    return sum / (run->nrounds - 2);
}

#endif
