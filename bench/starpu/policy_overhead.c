/* policy_overhead.c - StarPU's cost per empty task under several scheduling
 * policies, hetfarm's HASS policy (hf_starpu.h) among them, side by side in
 * one process.
 *
 * DESIGN
 * ------
 * The measurement is bench/starpu_noop.c's (an empty CPU codelet without
 * data handles and without a perfmodel; starpu_task_create + submit in a
 * loop, then starpu_task_wait_for_all; only submit + wait timed; CUDA, OpenCL,
 * MIC and MPI off; the conf over STARPU_* variables), extended in two ways.
 * A policy is either one of StarPU's predefined names or "hf-hass", which is
 * passed as conf.sched_policy (StarPU cannot find an external policy by name).
 * And the policies are interleaved: each repetition starts StarPU once per
 * policy, runs one untimed warm-up batch and `batches` timed ones, and shuts
 * it down, policy after policy, so that a machine shared with other builds
 * slows every policy alike instead of whichever ran during a busy minute.
 *
 * For hf-hass every batch is a round (it ends at the wait): empty tasks are
 * profiled in the first batch, then dealt by the models of the last round.
 *
 * Prints one JSON object: per policy the median seconds of a timed batch,
 * microseconds per task and every sample. bench/starpu/overhead.py adds the
 * machine and writes bench/results/.
 *
 * Usage: policy_overhead [--policies eager,ws,dmda,hf-hass] [--workers N]
 *                        [--tasks N] [--batches N] [--reps N]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <starpu.h>

#include "empty_tasks.h"
#include "hf_starpu.h"

#define MAXPOL 16

/* Whether `name` is hf-hass or a StarPU predefined policy; lists them if not. */
static int policy_known(const char *name)
{
    if (!strcmp(name, "hf-hass") || policy_predefined(name))
        return 1;
    fprintf(stderr, "policy_overhead: unknown policy '%s' (known: hf-hass", name);
    for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; p++)
        fprintf(stderr, " %s", (*p)->policy_name);
    fprintf(stderr, ")\n");
    return 0;
}


/* One StarPU life under `policy`: a warm-up batch, then `batches` timed
 * batches appended to samples. Returns 0 or -1. */
static int one_rep(const char *policy, long workers, long ntasks, long batches, double *samples)
{
    struct starpu_conf conf;
    cpu_only_conf(&conf, workers);
    if (!strcmp(policy, "hf-hass"))
        conf.sched_policy = &hf_starpu_hass_policy;
    else
        conf.sched_policy_name = policy;
    int rc = starpu_init(&conf);
    if (rc != 0) {
        fprintf(stderr, "policy_overhead: starpu_init (%s) failed: %s\n", policy, strerror(-rc));
        return -1;
    }
    if ((long)starpu_cpu_worker_get_count() != workers) {
        fprintf(stderr, "policy_overhead: asked for %ld CPU workers, StarPU started %u\n", workers,
                starpu_cpu_worker_get_count());
        starpu_shutdown();
        return -1;
    }
    int failed = run_batch("policy_overhead", ntasks) < 0;
    for (long b = 0; b < batches && !failed; b++) {
        samples[b] = run_batch("policy_overhead", ntasks);
        failed = samples[b] < 0;
    }
    starpu_shutdown();
    return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
    char polbuf[256] = "eager,ws,dmda,hf-hass";
    long workers = 2, ntasks = 20000, batches = 3, reps = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: policy_overhead [--policies eager,ws,dmda,hf-hass] [--workers N]\n"
                   "                       [--tasks N] [--batches N] [--reps N]\n");
            return 0;
        } else if (!strcmp(a, "--policies") && v && strlen(v) < sizeof polbuf) {
            strcpy(polbuf, v);
        } else if (!strcmp(a, "--workers")) {
            workers = parse_count("policy_overhead", a, v, STARPU_MAXCPUS);
        } else if (!strcmp(a, "--tasks")) {
            ntasks = parse_count("policy_overhead", a, v, 100000000L);
        } else if (!strcmp(a, "--batches")) {
            batches = parse_count("policy_overhead", a, v, 1000);
        } else if (!strcmp(a, "--reps")) {
            reps = parse_count("policy_overhead", a, v, 1000);
        } else {
            fprintf(stderr, "policy_overhead: unknown or incomplete option '%s'\n", a);
            return 2;
        }
        i++;
    }
    const char *pol[MAXPOL];
    int npol = 0;
    for (char *save = NULL, *t = strtok_r(polbuf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (npol == MAXPOL || !policy_known(t))
            return 2;
        pol[npol++] = t;
    }
    if (npol == 0) {
        fprintf(stderr, "policy_overhead: --policies is empty\n");
        return 2;
    }
    setenv("STARPU_SILENT", "1", 1);

    long per = reps * batches;
    double *samples = calloc((size_t)(npol * per), sizeof *samples);
    double *sorted = malloc((size_t)per * sizeof *sorted);
    if (!samples || !sorted)
        return 1;
    for (long r = 0; r < reps; r++)
        for (int p = 0; p < npol; p++)
            if (one_rep(pol[p], workers, ntasks, batches, samples + p * per + r * batches) < 0)
                return 1;

    printf("{\"workers\": %ld, \"tasks\": %ld, \"batches\": %ld, \"reps\": %ld, \"policies\": {",
           workers, ntasks, batches, reps);
    for (int p = 0; p < npol; p++) {
        const double *s = samples + p * per;
        memcpy(sorted, s, (size_t)per * sizeof *sorted);
        qsort(sorted, (size_t)per, sizeof *sorted, cmp_double);
        double med = per % 2 ? sorted[per / 2] : 0.5 * (sorted[per / 2 - 1] + sorted[per / 2]);
        printf("%s\"%s\": {\"seconds\": %.6f, \"us_per_task\": %.4f, \"samples_s\": [",
               p ? ", " : "", pol[p], med, med / (double)ntasks * 1e6);
        for (long k = 0; k < per; k++)
            printf("%s%.6f", k ? ", " : "", s[k]);
        printf("]}");
    }
    printf("}}\n");
    free(sorted);
    free(samples);
    return 0;
}
