/* dispatch.c - the cost of handing a span to another rank (framework/mpi/)
 * next to handing it to a thread of the same process.
 *
 * DESIGN
 * ------
 * Run under mpirun with 3 ranks (bench/mpi/run.sh). Rank 0 measures, for
 * empty spans (the worker does no work, only receives and reports):
 *
 *   remote_rt        one span in flight at a time, alternating ranks 1 and 2:
 *                    hf_mpi_hand + hf_mpi_collect, i.e. the round trip a rank
 *                    pays when it finishes a span and must wait for the next;
 *   remote_pipelined 4 spans in flight per worker rank (as a node device would
 *                    keep a small queue): the cost per span at throughput;
 *   local_rt         the same record handed to a second thread of rank 0 and
 *                    its completion handed back, through a mutex and a
 *                    condition variable (the waiting thread sleeps);
 *   local_spin_rt    the same through two atomic flags that both threads poll
 *                    with sched_yield, as the transport polls MPI_Test: the
 *                    like-for-like local round trip.
 * While rank 0 measures the local ones, ranks 1 and 2 are idle in
 * hf_mpi_wait_span, polling (yield, then 50 µs sleeps): on 3 ranks over 2
 * cores they share the cores with the local threads, as they would in a run.
 *
 * The three are interleaved repetition by repetition so that drift on a
 * shared machine hits all alike; rank 0 prints one JSON object with the
 * per-repetition figures and their medians (run.sh adds the machine).
 * Usage: dispatch [SPANS [REPS]]  (defaults 20000 and 5).
 */
#include "mpi/transport.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The local hand-off: one slot each way, guarded by one lock. */
struct local {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    struct hf_mpi_span span;
    struct hf_mpi_done done;
    int has_span, has_done;
};

static void *local_worker(void *arg)
{
    struct local *l = arg;
    for (;;) {
        pthread_mutex_lock(&l->lock);
        while (!l->has_span)
            pthread_cond_wait(&l->cv, &l->lock);
        struct hf_mpi_span s = l->span;
        l->has_span = 0;
        l->done = (struct hf_mpi_done){s.first, s.count, 0.0, s.round, 0};
        l->has_done = 1;
        pthread_cond_broadcast(&l->cv);
        pthread_mutex_unlock(&l->lock);
        if (s.stop)
            return NULL;
    }
}

static double local_rt(long n)
{
    struct local l = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    pthread_t th;
    if (pthread_create(&th, NULL, local_worker, &l) != 0)
        return -1;
    double t0 = now_s();
    for (long i = 0; i <= n; i++) {
        pthread_mutex_lock(&l.lock);
        l.span = (struct hf_mpi_span){.first = (uint64_t)i, .count = 1, .stop = i == n};
        l.has_span = 1;
        pthread_cond_broadcast(&l.cv);
        while (!l.has_done)
            pthread_cond_wait(&l.cv, &l.lock);
        l.has_done = 0;
        pthread_mutex_unlock(&l.lock);
    }
    double t = now_s() - t0;
    pthread_join(th, NULL);
    return t / (double)(n + 1) * 1e6;
}

/* The polling hand-off: flag 1 = a span is waiting, 2 = its completion is. */
struct spin {
    _Atomic int flag;
    struct hf_mpi_span span;
    struct hf_mpi_done done;
};

static void *spin_worker(void *arg)
{
    struct spin *p = arg;
    for (;;) {
        while (atomic_load_explicit(&p->flag, memory_order_acquire) != 1)
            sched_yield();
        struct hf_mpi_span s = p->span;
        p->done = (struct hf_mpi_done){s.first, s.count, 0.0, s.round, 0};
        atomic_store_explicit(&p->flag, 2, memory_order_release);
        if (s.stop)
            return NULL;
    }
}

static double local_spin_rt(long n)
{
    struct spin p = {0};
    pthread_t th;
    if (pthread_create(&th, NULL, spin_worker, &p) != 0)
        return -1;
    double t0 = now_s();
    for (long i = 0; i <= n; i++) {
        p.span = (struct hf_mpi_span){.first = (uint64_t)i, .count = 1, .stop = i == n};
        atomic_store_explicit(&p.flag, 1, memory_order_release);
        while (atomic_load_explicit(&p.flag, memory_order_acquire) != 2)
            sched_yield();
    }
    double t = now_s() - t0;
    pthread_join(th, NULL);
    return t / (double)(n + 1) * 1e6;
}

/* Rank 0: n empty spans with up to `depth` in flight per worker rank;
 * returns µs per span, or -1 on a transport failure. */
static double remote(hf_mpi_t t, long n, int depth)
{
    int size = hf_mpi_size(t), r = 1;
    long handed = 0, collected = 0;
    double t0 = now_s();
    while (collected < n) {
        for (int k = 0; k < size - 1 && handed < n; k++, r = r % (size - 1) + 1)
            if (hf_mpi_outstanding(t, r) < depth) {
                struct hf_mpi_span s = {.first = (uint64_t)handed, .count = 1};
                if (hf_mpi_hand(t, r, &s) != 0)
                    return -1;
                handed++;
                if (depth == 1)
                    break; /* one span in flight in all */
            }
        int from;
        struct hf_mpi_done d;
        if (hf_mpi_collect(t, &from, &d) != 0)
            return -1;
        collected++;
    }
    return (now_s() - t0) / (double)n * 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    double *c = malloc((size_t)n * sizeof *c);
    for (int i = 0; i < n; i++)
        c[i] = v[i];
    qsort(c, (size_t)n, sizeof *c, cmp);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

static void print_series(const char *name, double *v, int reps, int last)
{
    printf("  \"%s\": {\"us_per_span\": %.3f, \"samples_us\": [", name, median(v, reps));
    for (int i = 0; i < reps; i++)
        printf("%s%.3f", i ? ", " : "", v[i]);
    printf("]}%s\n", last ? "" : ",");
}

int main(int argc, char **argv)
{
    hf_mpi_t t;
    if (hf_mpi_init(&t, &argc, &argv, 30.0) != 0) {
        fprintf(stderr, "dispatch: %s\n", hf_last_error());
        return 1;
    }
    long n = argc > 1 ? atol(argv[1]) : 20000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    if (hf_mpi_size(t) < 2 || n < 1 || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: mpirun -np 3 dispatch [SPANS [REPS<=100]]\n");
        hf_mpi_abort(t, 2);
    }
    int rc = 0;
    if (hf_mpi_rank(t) == 0) {
        double rt[100], pipe[100], loc[100], spin[100];
        for (int i = 0; i < reps && rc == 0; i++) {
            rt[i] = remote(t, n, 1);
            pipe[i] = remote(t, n, 4);
            loc[i] = local_rt(n);
            spin[i] = local_spin_rt(n);
            if (rt[i] < 0 || pipe[i] < 0 || loc[i] < 0 || spin[i] < 0)
                rc = 1;
        }
        struct hf_mpi_span stop = {.stop = 1};
        for (int r = 1; r < hf_mpi_size(t) && rc == 0; r++)
            rc = hf_mpi_hand(t, r, &stop) != 0;
        if (rc != 0) {
            fprintf(stderr, "dispatch: %s\n", hf_last_error());
            hf_mpi_abort(t, 1);
        }
        printf("{\"ranks\": %d, \"spans\": %ld, \"reps\": %d,\n", hf_mpi_size(t), n, reps);
        print_series("remote_rt", rt, reps, 0);
        print_series("remote_pipelined", pipe, reps, 0);
        print_series("local_rt", loc, reps, 0);
        print_series("local_spin_rt", spin, reps, 1);
        printf("}\n");
    } else {
        for (;;) {
            struct hf_mpi_span s;
            if (hf_mpi_wait_span(t, &s) != 0) {
                fprintf(stderr, "dispatch: %s\n", hf_last_error());
                hf_mpi_abort(t, 1);
            }
            if (s.stop)
                break;
            struct hf_mpi_done d = {s.first, s.count, 0.0, s.round, 0};
            if (hf_mpi_report(t, &d) != 0) {
                fprintf(stderr, "dispatch: %s\n", hf_last_error());
                hf_mpi_abort(t, 1);
            }
        }
    }
    hf_mpi_destroy(t);
    return rc;
}
