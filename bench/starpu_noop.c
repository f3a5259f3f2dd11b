/* starpu_noop.c - StarPU's cost per empty task, the yardstick for hetfarm's dispatch overhead.
 *
 * DESIGN
 * ------
 * The design is simple: start StarPU 1.3 with only CPU workers (CUDA, OpenCL, MIC and MPI
 * master-slave switched off in the conf, so a machine with a GPU measures the same thing as one
 * without), then submit N tasks of a codelet whose CPU function does nothing and which has no
 * data handles, and wait for all of them. Only submit + wait is timed (task creation included,
 * as an application pays it): starpu_init and starpu_shutdown are one-off costs that hetfarm's
 * per-chunk figure does not include either.
 *
 * Each repetition is one timed batch inside the same StarPU instance; one untimed warm-up batch
 * of the same size first lets StarPU grow its task and job allocations (the first batch is
 * often 2-3x slower), so every timed batch sees a warm runtime, as hetfarm's rounds after
 * round 0 do. The program prints one JSON object with the median batch and every sample, so
 * bench/dispatch.sh can take it as it is.
 *
 * The conf takes precedence over STARPU_* environment variables so that a stray STARPU_SCHED or
 * STARPU_NCPU in the caller's shell cannot silently change what is measured.
 *
 * Usage: starpu_noop --policy eager|ws|... --workers N --tasks N [--reps N]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <starpu.h>

#include "starpu/empty_tasks.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: starpu_noop --policy NAME --workers N --tasks N [--reps N]\n"
               "  Times N empty CPU tasks under a StarPU scheduling policy (eager, ws, ...)\n"
               "  and prints {policy, workers, tasks, reps, seconds, us_per_task, samples_s}.\n");
}

int main(int argc, char **argv)
{
    const char *policy = "eager";
    long workers = 1, ntasks = 100000, reps = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--policy") && v) {
            policy = v;
        } else if (!strcmp(a, "--workers")) {
            workers = parse_count("starpu_noop", a, v, STARPU_MAXCPUS);
        } else if (!strcmp(a, "--tasks")) {
            ntasks = parse_count("starpu_noop", a, v, 100000000L);
        } else if (!strcmp(a, "--reps")) {
            reps = parse_count("starpu_noop", a, v, 1000);
        } else {
            fprintf(stderr, "starpu_noop: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
        i++;
    }

    if (!policy_predefined(policy)) {
        fprintf(stderr, "starpu_noop: --policy %s: not a StarPU scheduling policy (known:", policy);
        for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; p++)
            fprintf(stderr, " %s", (*p)->policy_name);
        fprintf(stderr, ")\n");
        return 2;
    }

    /* Quiet StarPU's banner and warnings: they would mix with the JSON on stdout/stderr. */
    setenv("STARPU_SILENT", "1", 1);

    struct starpu_conf conf;
    cpu_only_conf(&conf, workers);
    conf.sched_policy_name = policy;
    int rc = starpu_init(&conf);
    if (rc != 0) {
        fprintf(stderr, "starpu_noop: starpu_init (policy %s, %ld CPU workers) failed: %s\n",
                policy, workers, strerror(-rc));
        return 1;
    }
    /* StarPU may grant fewer CPU workers than asked (e.g. more than the machine has). */
    unsigned got = starpu_cpu_worker_get_count();
    if ((long)got != workers) {
        fprintf(stderr, "starpu_noop: asked for %ld CPU workers, StarPU started %u\n", workers,
                got);
        starpu_shutdown();
        return 1;
    }

    double *samples = calloc((size_t)reps, sizeof *samples);
    if (!samples) {
        starpu_shutdown();
        return 1;
    }
    int failed = run_batch("starpu_noop", ntasks) < 0; /* warm-up at full size, not timed */
    for (long r = 0; r < reps && !failed; r++) {
        samples[r] = run_batch("starpu_noop", ntasks);
        failed = samples[r] < 0;
    }
    starpu_shutdown();
    if (failed) {
        free(samples);
        return 1;
    }

    double *sorted = malloc((size_t)reps * sizeof *sorted);
    if (!sorted) {
        free(samples);
        return 1;
    }
    memcpy(sorted, samples, (size_t)reps * sizeof *sorted);
    qsort(sorted, (size_t)reps, sizeof *sorted, cmp_double);
    double med = reps % 2 ? sorted[reps / 2] : 0.5 * (sorted[reps / 2 - 1] + sorted[reps / 2]);

    printf("{\"policy\": \"%s\", \"workers\": %ld, \"tasks\": %ld, \"reps\": %ld, "
           "\"seconds\": %.6f, \"us_per_task\": %.4f, \"samples_s\": [",
           policy, workers, ntasks, reps, med, med / (double)ntasks * 1e6);
    for (long r = 0; r < reps; r++)
        printf("%s%.6f", r ? ", " : "", samples[r]);
    printf("]}\n");
    free(sorted);
    free(samples);
    return 0;
}
