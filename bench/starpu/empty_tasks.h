/* empty_tasks.h - what the StarPU empty-task benches share (bench/starpu_noop.c,
 * bench/starpu/policy_overhead.c): an empty CPU codelet without data handles
 * or perfmodel, a batch of N of its tasks submitted and waited for (only
 * submit + wait timed: an application pays task creation too), and the small
 * helpers of their command lines. Static functions in a header because each
 * bench is one file built on its own (bench/dispatch.sh compiles starpu_noop.c
 * with a plain cc line). */
#ifndef HF_BENCH_EMPTY_TASKS_H
#define HF_BENCH_EMPTY_TASKS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <starpu.h>

/* The empty CPU implementation: the whole cost of a task is StarPU's own. */
static void noop_cpu(void *buffers[], void *arg)
{
    (void)buffers;
    (void)arg;
}

static struct starpu_codelet noop_cl = {
    .where = STARPU_CPU,
    .cpu_funcs = {noop_cpu},
    .nbuffers = 0,
    .model = NULL, /* no performance model: nothing to calibrate or write to ~/.starpu */
    .name = "noop",
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Submits `ntasks` empty tasks and waits for all of them; returns the seconds
 * it took, or a negative value after printing (as `prog`) why StarPU refused. */
static double run_batch(const char *prog, long ntasks)
{
    double t0 = now_s();
    for (long i = 0; i < ntasks; i++) {
        struct starpu_task *task = starpu_task_create(); /* destroyed by StarPU when done */
        task->cl = &noop_cl;
        int rc = starpu_task_submit(task);
        if (rc != 0) {
            fprintf(stderr, "%s: starpu_task_submit failed at task %ld: %s\n", prog, i,
                    strerror(-rc));
            return -1.0;
        }
    }
    int rc = starpu_task_wait_for_all();
    if (rc != 0) {
        fprintf(stderr, "%s: starpu_task_wait_for_all failed: %s\n", prog, strerror(-rc));
        return -1.0;
    }
    return now_s() - t0;
}

/* A conf of `workers` CPU workers and nothing else (CUDA, OpenCL, MIC and MPI
 * master-slave off, so a machine with a GPU measures what one without does),
 * taking precedence over STARPU_* variables so that a stray STARPU_SCHED or
 * STARPU_NCPU cannot change what is measured. The caller sets the policy. */
static void cpu_only_conf(struct starpu_conf *conf, long workers)
{
    starpu_conf_init(conf);
    conf->precedence_over_environment_variables = 1;
    conf->ncpus = (int)workers;
    conf->ncuda = 0;
    conf->nopencl = 0;
    conf->nmic = 0;
    conf->nmpi_ms = 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether `name` is one of StarPU's predefined policies. starpu_init does not
 * fail on an unknown name: it warns and falls back to its default policy,
 * which would silently measure something else, so names are checked first. */
static int policy_predefined(const char *name)
{
    for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; p++)
        if ((*p)->policy_name && strcmp((*p)->policy_name, name) == 0)
            return 1;
    return 0;
}

/* Parses a positive integer option value; exits (2) with a message naming
 * the option otherwise. */
static long parse_count(const char *prog, const char *opt, const char *val, long max)
{
    char *end = NULL;
    errno = 0;
    long v = val ? strtol(val, &end, 10) : 0;
    if (!val || errno || *end || v < 1 || v > max) {
        fprintf(stderr, "%s: %s = %s: expected an integer in 1..%ld\n", prog, opt,
                val ? val : "(missing)", max);
        exit(2);
    }
    return v;
}

#endif
