/* starpu_mpi.c - StarPU-MPI's cost for the empty tasks of bench/mpi/dispatch.c:
 * a task that rank 0 hands to another rank and whose completion comes back.
 *
 * DESIGN
 * ------
 * StarPU-MPI has no "hand a span to rank r, collect its completion": every
 * rank inserts every task (starpu_mpi_task_insert) and the owner of the data a
 * task writes runs it, unless STARPU_EXECUTE_ON_NODE names another rank; then
 * the data goes to that rank, the task runs there, and the written data goes
 * back to its owner. So the like-for-like of hetfarm's remote round trip
 * (hf_mpi_hand + hf_mpi_collect, one span in flight, ranks 1 and 2
 * alternating) is a chain of empty tasks, each writing (STARPU_RW) one small
 * variable owned by rank 0 and executed on rank 1 or 2 in turn: each task
 * waits for the previous one's data to come back to rank 0 and go out again.
 * The pipelined figure keeps one such chain per worker rank (two variables,
 * each bound to its rank), as dispatch.c keeps spans in flight per rank.
 *
 * One StarPU CPU worker per rank, Debian's StarPU 1.3 (STARPU_NON_BLOCKING_
 * DRIVERS: idle workers poll). Prints one JSON object from rank 0: per
 * repetition and the medians, µs per task (wall time of the whole batch,
 * from the first insertion to starpu_mpi_wait_for_all, over the tasks).
 * Usage: mpirun -np 3 starpu_mpi [TASKS [REPS]]   (defaults 2000 and 5).
 */
#include <starpu.h>
#include <starpu_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void empty(void *buffers[], void *arg)
{
    (void)buffers, (void)arg;
}

static struct starpu_codelet empty_cl = {
    .cpu_funcs = {empty}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "empty",
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A batch of `tasks` empty tasks alternating ranks 1 and 2, on one variable
 * (`chains` = 1) or one per rank (2); returns µs per task on rank 0. */
static double batch(starpu_data_handle_t h[2], int tasks, int chains)
{
    starpu_mpi_barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    for (int i = 0; i < tasks; i++) {
        int on = 1 + i % 2;
        int ret = starpu_mpi_task_insert(MPI_COMM_WORLD, &empty_cl, STARPU_RW,
                                         h[chains == 2 ? on - 1 : 0], STARPU_EXECUTE_ON_NODE, on,
                                         0);
        if (ret) {
            fprintf(stderr, "starpu_mpi_task_insert failed: %d\n", ret);
            exit(1);
        }
    }
    starpu_mpi_wait_for_all(MPI_COMM_WORLD);
    return (now_s() - t0) * 1e6 / tasks;
}

int main(int argc, char **argv)
{
    int tasks = argc > 1 ? atoi(argv[1]) : 2000, reps = argc > 2 ? atoi(argv[2]) : 5;
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.ncpus = 1;
    conf.ncuda = 0;
    conf.nopencl = 0;
    if (starpu_mpi_init_conf(&argc, &argv, 1, MPI_COMM_WORLD, &conf)) {
        fprintf(stderr, "starpu_mpi_init_conf failed\n");
        return 77;
    }
    int rank, size;
    starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank);
    starpu_mpi_comm_size(MPI_COMM_WORLD, &size);
    if (size != 3) {
        if (rank == 0)
            fprintf(stderr, "starpu_mpi: run with 3 ranks\n");
        starpu_mpi_shutdown();
        return 2;
    }
    long var[2] = {0, 0};
    starpu_data_handle_t h[2];
    for (int k = 0; k < 2; k++) {
        if (rank == 0)
            starpu_variable_data_register(&h[k], STARPU_MAIN_RAM, (uintptr_t)&var[k], sizeof var[k]);
        else
            starpu_variable_data_register(&h[k], -1, (uintptr_t)NULL, sizeof var[k]);
        starpu_mpi_data_register(h[k], 100 + k, 0);
    }
    batch(h, tasks / 10 > 0 ? tasks / 10 : 1, 1); /* warm-up: threads, requests, buffers */
    double rt[reps], piped[reps];
    for (int r = 0; r < reps; r++) {
        rt[r] = batch(h, tasks, 1);
        piped[r] = batch(h, tasks, 2);
    }
    if (rank == 0) {
        printf("{\"tasks\": %d, \"reps\": %d, \"chain_rt\": {\"us_per_task\": [", tasks, reps);
        for (int r = 0; r < reps; r++)
            printf("%s%.3f", r ? ", " : "", rt[r]);
        printf("]");
        qsort(rt, (size_t)reps, sizeof rt[0], cmp);
        printf(", \"median\": %.3f}, \"two_chains\": {\"us_per_task\": [", rt[reps / 2]);
        for (int r = 0; r < reps; r++)
            printf("%s%.3f", r ? ", " : "", piped[r]);
        qsort(piped, (size_t)reps, sizeof piped[0], cmp);
        printf("], \"median\": %.3f}}\n", piped[reps / 2]);
    }
    for (int k = 0; k < 2; k++)
        starpu_data_unregister(h[k]);
    starpu_mpi_shutdown();
    return 0;
}
