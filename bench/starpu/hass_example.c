/* hass_example.c - a plain StarPU program scheduled by hetfarm's HASS policy.
 *
 * DESIGN
 * ------
 * The program is what a StarPU user already has: a vector registered in
 * blocks of uneven sizes (StarPU's vector interface), a codelet that computes
 * y = a*y + 1 over one block a few times, tasks submitted in rounds, and a
 * starpu_task_wait_for_all after each round. The only lines about hetfarm
 * are the include and `conf.sched_policy = &hf_starpu_hass_policy`; at the
 * end it prints what the policy did per worker (hf_starpu_hass_get_stats).
 * The policy takes each task's work from the size of its data handle, so
 * the uneven blocks need nothing more. The result is checked against the
 * same arithmetic done serially; the exit status says whether it matched.
 *
 * Usage: hass_example [--policy hf-hass|eager|ws|dmda|...] [--workers N]
 *                     [--blocks N] [--rounds N]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <starpu.h>

#include "hf_starpu.h"

#define REPEAT 20 /* sweeps over the block per task: some work per byte */

static void axpy_cpu(void *buffers[], void *arg)
{
    (void)arg;
    float *y = (float *)STARPU_VECTOR_GET_PTR(buffers[0]);
    unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
    for (int r = 0; r < REPEAT; r++)
        for (unsigned i = 0; i < n; i++)
            y[i] = 0.5f * y[i] + 1.0f;
}

static struct starpu_codelet axpy_cl = {
    .where = STARPU_CPU,
    .cpu_funcs = {axpy_cpu},
    .nbuffers = 1,
    .modes = {STARPU_RW},
    .name = "hass_example_axpy",
};

int main(int argc, char **argv)
{
    const char *policy = "hf-hass";
    int workers = 2, nblocks = 64, rounds = 4;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--policy"))
            policy = argv[i + 1];
        else if (!strcmp(argv[i], "--workers"))
            workers = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--blocks"))
            nblocks = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "hass_example: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (argc % 2 == 0 || workers < 1 || nblocks < 1 || rounds < 1) {
        fprintf(stderr, "usage: hass_example [--policy NAME] [--workers N] [--blocks N] "
                        "[--rounds N] (all N >= 1)\n");
        return 2;
    }

    struct starpu_conf conf;
    starpu_conf_init(&conf);
    if (!strcmp(policy, "hf-hass"))
        conf.sched_policy = &hf_starpu_hass_policy; /* the one line about hetfarm */
    else
        conf.sched_policy_name = policy;
    conf.ncpus = workers;
    conf.ncuda = 0;
    conf.nopencl = 0;
    int rc = starpu_init(&conf);
    if (rc != 0) {
        fprintf(stderr, "hass_example: starpu_init failed: %d\n", rc);
        return 1;
    }

    /* Blocks of 4k..64k floats, uneven. */
    unsigned *len = malloc((size_t)nblocks * sizeof *len);
    float **blk = malloc((size_t)nblocks * sizeof *blk);
    starpu_data_handle_t *h = malloc((size_t)nblocks * sizeof *h);
    if (!len || !blk || !h)
        return 1;
    for (int b = 0; b < nblocks; b++) {
        len[b] = 4096u * (1u + (unsigned)(b * 7 % 16));
        blk[b] = malloc(len[b] * sizeof(float));
        if (!blk[b])
            return 1;
        for (unsigned i = 0; i < len[b]; i++)
            blk[b][i] = (float)(i % 13);
        starpu_vector_data_register(&h[b], STARPU_MAIN_RAM, (uintptr_t)blk[b], len[b],
                                    sizeof(float));
    }

    double t0 = starpu_timing_now();
    for (int r = 0; r < rounds; r++) {
        for (int b = 0; b < nblocks; b++) {
            rc = starpu_task_insert(&axpy_cl, STARPU_RW, h[b], 0);
            if (rc != 0) {
                fprintf(stderr, "hass_example: starpu_task_insert failed: %d\n", rc);
                return 1;
            }
        }
        starpu_task_wait_for_all(); /* the end of a round for the policy */
    }
    double ms = (starpu_timing_now() - t0) / 1e3;

    struct hf_starpu_hass_stats st;
    int have_stats = hf_starpu_hass_get_stats(0, &st) == 0;
    for (int b = 0; b < nblocks; b++)
        starpu_data_unregister(h[b]);
    starpu_shutdown();

    /* The serial reference: the same float arithmetic, rounds * REPEAT times. */
    long bad = 0;
    for (int b = 0; b < nblocks; b++) {
        for (unsigned i = 0; i < len[b]; i++) {
            float y = (float)(i % 13);
            for (int k = 0; k < rounds * REPEAT; k++)
                y = 0.5f * y + 1.0f;
            bad += blk[b][i] != y;
        }
        free(blk[b]);
    }
    printf("policy %s, %d CPU workers, %d blocks x %d rounds: %.1f ms, result %s\n", policy,
           workers, nblocks, rounds, ms, bad ? "WRONG" : "ok");
    if (have_stats) {
        printf("rounds %lu, tasks %lu\n", st.rounds, st.tasks);
        printf("worker  tasks  dealt  profiled  stolen  work(MB)  busy(ms)\n");
        for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
            const struct hf_starpu_hass_worker_stats *k = &st.worker[w];
            if (k->present)
                printf("%6d %6lu %6lu %9lu %7lu %9.2f %9.2f\n", w, k->tasks, k->dealt, k->profiled,
                       k->stolen, k->work / 1e6, k->busy_s * 1e3);
        }
    }
    free(len);
    free(blk);
    free(h);
    return bad ? 1 : 0;
}
