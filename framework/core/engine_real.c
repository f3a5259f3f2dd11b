/* engine_real.c - the real engine: one host thread per device, wall-clock time.
 *
 * DESIGN
 * ------
 * Every device gets a host thread for the whole run, pinned with hwloc to the
 * device's cores (the CPU team's cores, or the core closest to a GPU), so a
 * driver can bind a CUDA context, streams and pinned buffers to it once. The
 * threads share one lock with the main thread: under the lock a thread
 * takes a span (which asks the scheduler), then it runs the bundle with the
 * lock released, then it records the result under the lock and wakes the
 * other devices, because a finished bundle is what lets an idle device steal.
 * The lock is held only for bookkeeping, never across a kernel, so the cost
 * per chunk is two lock round-trips and two clock reads.
 *
 * The main thread waits on a condition variable of its own, signalled only
 * when it has something to do (a device opened, the round ended or failed, a
 * task finished), not after every bundle: a CPU team of as many threads as
 * cores runs one chunk per bundle, and a main thread woken at each of them
 * takes a core from the team while the team's barrier waits for the thread
 * it displaced.
 *
 * A GPU's host thread has its core to itself (the other threads are kept off
 * it), so before it sleeps it polls for SPIN_S: the next round, or the
 * merge's task, usually comes within that, and finds it running. Woken from
 * sleep on the GPU machine's vCPUs it took 1.3 ms to start a round's bundle,
 * and 4-7 ms in some runs (kron-22 BFS, whose whole search is 1-2 ms).
 * SPIN_S covers the host's own work between two rounds as well: make run's
 * config verifies 16 rows of C per round (44 ms), and with 20 ms of polling
 * its 0.8 ms rounds were held 0.03-0.07 ms on average past the GPU's bundle,
 * 0.2-0.3 ms in some (0.006-0.016 ms without the verification).
 * wake_gen counts the wake-ups, so that polling misses none.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_internal.h"

struct hf__real {
    pthread_mutex_t lock;
    pthread_cond_t cond;      /* the device threads wait here */
    pthread_cond_t main_cond; /* the main thread waits here */
    pthread_t *threads;
    int nthreads;
    int stop;           /* threads exit */
    int round_active;   /* devices may take work */
    int inflight;       /* bundles running outside the lock */
    int opened;         /* threads that finished open() */
    hf_topo_confinement_t confined; /* other threads kept off the GPU host cores */
    int omp_threads;    /* the main thread's OpenMP team size before, when it was cut */
    int open_error;
    char open_msg[512];
    /* A task for every device thread (hf__real_each_device). */
    int (*task)(struct hf__engine *e, int dev, void *arg);
    void *task_arg;
    unsigned long task_gen;  /* bumped for each new task */
    unsigned long *task_seen;/* per device: the last task_gen it ran */
    const int *task_want;    /* per device: run the task (NULL: every device) */
    int task_left, task_rc;
    unsigned long wake_gen;  /* bumped (under the lock) at every wake-up of the devices */
};

#define SPIN_S 0.1 /* a GPU's host thread polls this long before it sleeps */

/* Wakes every device thread; with the lock held. */
static void wake_devices(struct hf__real *R)
{
    __atomic_add_fetch(&R->wake_gen, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&R->cond);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Waits, with the lock held, until the device threads are woken. A thread
 * that polls (a GPU's, on its own core) first watches wake_gen for SPIN_S
 * with the lock released. */
static void wait_for_wake(struct hf__real *R, int polls)
{
    if (polls) {
        unsigned long seen = R->wake_gen;
        pthread_mutex_unlock(&R->lock);
        double until = hf__now() + SPIN_S;
        for (unsigned k = 1; __atomic_load_n(&R->wake_gen, __ATOMIC_ACQUIRE) == seen; k++) {
            cpu_relax();
            if (k % 256 == 0 && hf__now() > until)
                break;
        }
        pthread_mutex_lock(&R->lock);
        if (R->wake_gen != seen)
            return;
    }
    pthread_cond_wait(&R->cond, &R->lock);
}

struct thread_arg {
    struct hf__engine *e;
    int dev;
};

/* Runs one claimed span on the device, outside the lock. Returns the driver's
 * code and fills the times; `msg` receives the thread's error detail. */
static int run_span(struct hf__engine *e, struct hf_device *d, const struct hf_span *span,
                    int fault, double *start, double *end, struct hf_bundle_times *t, char *msg,
                    size_t msglen)
{
    struct hf_bundle b;
    memset(t, 0, sizeof *t);
    hf_clear_error();
    *start = hf__now();
    int rc = hf__engine_bundle(e, d->info.index, span, &b);
    if (rc == 0 && fault)
        rc = hf_fail(HF_EDEVICE, "injected fault ([faults] in the config)");
    if (rc == 0)
        rc = d->ops->run(d, e->app, e->app_ctx, &b, t);
    if (rc == 0 && e->app->collect)
        rc = e->app->collect(e->app_ctx, &b);
    *end = hf__now();
    if (rc == 0 && d->ops->ran)
        d->ops->ran(d, &b, *end - *start);
    snprintf(msg, msglen, "%s", rc ? hf_last_error() : "");
    return rc;
}

/* Runs the current each-device task on device dev's thread; called and
 * returns with the lock held, releasing it while the task runs. */
static void run_task(struct hf__engine *e, int dev)
{
    struct hf__real *R = e->real;
    R->task_seen[dev] = R->task_gen;
    int rc = 0;
    if (hf__engine_keeps_state(e, dev) && (!R->task_want || R->task_want[dev])) {
        pthread_mutex_unlock(&R->lock);
        hf_clear_error();
        rc = R->task(e, dev, R->task_arg);
        pthread_mutex_lock(&R->lock);
        if (rc && !R->task_rc) {
            R->task_rc = rc;
            hf__engine_error(e, rc, "%s: %s", hf_devlist_get(e->devs, dev)->info.name,
                             *hf_last_error() ? hf_last_error() : hf_strerror(rc));
        }
    }
    if (--R->task_left == 0)
        pthread_cond_broadcast(&R->main_cond);
}

/* The host thread of one device: open the driver, then take and run spans
 * whenever a round is active, until the run stops. */
static void *device_thread(void *arg)
{
    struct thread_arg *a = arg;
    struct hf__engine *e = a->e;
    struct hf__real *R = e->real;
    int dev = a->dev;
    struct hf_device *d = hf_devlist_get(e->devs, dev);
    free(a);

    if (d->core_first >= 0 && d->core_count > 0)
        hf_topo_pin_cores(d->core_first, d->core_count); /* best effort: a VM may refuse */
    hf_clear_error();
    int orc = d->ops->open ? d->ops->open(d) : 0;
    pthread_mutex_lock(&R->lock);
    if (orc && !R->open_error) {
        R->open_error = orc;
        snprintf(R->open_msg, sizeof R->open_msg, "%s: cannot open the device: %s", d->info.name,
                 *hf_last_error() ? hf_last_error() : hf_strerror(orc));
    }
    R->opened++;
    pthread_cond_broadcast(&R->main_cond);

    char msg[512];
    /* Only a GPU's host thread, on the core kept for it, polls. */
    int polls = d->info.is_gpu && d->core_first >= 0 && R->confined;
    while (!R->stop) {
        if (R->task && R->task_seen[dev] != R->task_gen) {
            run_task(e, dev);
            continue;
        }
        struct hf_span span;
        int got = 0;
        if (R->round_active && !e->error && e->alive[dev] && !orc) {
            got = hf__engine_take(e, dev, &span);
            if (got == 0) {
                e->asked_gen[dev] = e->progress_gen;
                hf__engine_stalled(e, R->inflight);
            }
            if (e->error) {
                wake_devices(R);
                pthread_cond_broadcast(&R->main_cond);
            }
        }
        if (got <= 0) {
            wait_for_wake(R, polls);
            continue;
        }
        int fault = hf__engine_fault_due(e, dev);
        R->inflight++;
        pthread_mutex_unlock(&R->lock);

        double start, end;
        struct hf_bundle_times t;
        int rc = run_span(e, d, &span, fault, &start, &end, &t, msg, sizeof msg);

        pthread_mutex_lock(&R->lock);
        R->inflight--;
        if (rc == 0)
            hf__engine_done(e, dev, &span, start, end, &t);
        else
            hf__engine_failed(e, dev, &span, rc, msg);
        if (e->error || hf__engine_round_complete(e))
            R->round_active = 0;
        wake_devices(R);
        if (!R->round_active || e->error) /* the round is over, or this was its last bundle */
            pthread_cond_broadcast(&R->main_cond);
    }
    pthread_mutex_unlock(&R->lock);
    if (d->ops->close && !orc)
        d->ops->close(d);
    return NULL;
}

int hf__real_start(struct hf__engine *e)
{
    struct hf__real *R = calloc(1, sizeof *R);
    if (!R)
        return hf_fail(HF_ENOMEM, "engine: out of memory");
    R->threads = calloc((size_t)e->ndev, sizeof *R->threads);
    R->task_seen = calloc((size_t)e->ndev, sizeof *R->task_seen);
    if (!R->threads || !R->task_seen) {
        free(R->threads);
        free(R->task_seen);
        free(R);
        return hf_fail(HF_ENOMEM, "engine: out of memory");
    }
    pthread_mutex_init(&R->lock, NULL);
    pthread_cond_init(&R->cond, NULL);
    pthread_cond_init(&R->main_cond, NULL);
    e->real = R;
    /* A GPU host thread's core is its own while the run lasts (topo.c says why). */
    unsigned char reserved[HF_MAX_CORES] = {0};
    int any = 0;
    for (int d = 0; d < e->ndev; d++) {
        const struct hf_device *dev = hf_devlist_get(e->devs, d);
        if (dev->info.is_gpu && dev->core_first >= 0 && dev->core_first < HF_MAX_CORES)
            any = reserved[dev->core_first] = 1;
    }
    if (any && hf_topo_confine_threads(reserved, HF_MAX_CORES, &R->confined)) {
        hf__real_stop(e);
        return HF_ENOMEM;
    }
    /* The main thread's OpenMP team (next_load, verify, the merge) must fit the
     * CPUs left to it: one thread more than cores spins at every barrier while
     * the thread it waits for is descheduled. Measured on one H100's 16-core
     * host, PageRank kron-22: 17 ms of host time per round with 16 threads on
     * 15 CPUs, 3.8 ms with 15. */
    int left = hf_topo_confined_cpus(R->confined), team = omp_get_max_threads();
    if (left > 0 && left < team) {
        R->omp_threads = team;
        omp_set_num_threads(left);
    }
    for (int d = 0; d < e->ndev; d++) {
        struct thread_arg *a = malloc(sizeof *a);
        if (a)
            *a = (struct thread_arg){.e = e, .dev = d};
        if (!a || pthread_create(&R->threads[d], NULL, device_thread, a)) {
            free(a);
            hf__real_stop(e);
            return hf_fail(HF_ENOMEM, "engine: cannot start the host thread of device %d", d);
        }
        R->nthreads++;
    }
    pthread_mutex_lock(&R->lock);
    while (R->opened < R->nthreads)
        pthread_cond_wait(&R->main_cond, &R->lock);
    int rc = R->open_error;
    pthread_mutex_unlock(&R->lock);
    return rc ? hf_fail(rc, "%s", R->open_msg) : 0;
}

int hf__real_round(struct hf__engine *e)
{
    struct hf__real *R = e->real;
    pthread_mutex_lock(&R->lock);
    e->round_start = hf__now();
    e->round_end = e->round_start;
    R->round_active = 1;
    wake_devices(R);
    /* Woken by the devices, and every 50 ms to notice an interrupt: a signal
     * handler may not touch the condition variable itself. */
    while (R->round_active && !e->error) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&R->main_cond, &R->lock, &until);
        if (hf_run_interrupted() && !e->error) {
            hf__engine_error(e, HF_EINTR, "interrupted by signal %d in round %d",
                             hf_run_interrupted(), e->round.round);
            wake_devices(R);
        }
    }
    R->round_active = 0;
    /* Let bundles already running finish before the round is judged. */
    while (R->inflight > 0)
        pthread_cond_wait(&R->main_cond, &R->lock);
    pthread_mutex_unlock(&R->lock);
    return e->error;
}

int hf__real_each_device(struct hf__engine *e, int (*fn)(struct hf__engine *e, int dev, void *arg),
                         void *arg, const int *want)
{
    struct hf__real *R = e->real;
    int any = 0;
    for (int d = 0; d < e->ndev; d++)
        any |= hf__engine_keeps_state(e, d) && (!want || want[d]);
    if (!any)
        return 0;
    pthread_mutex_lock(&R->lock);
    R->task_want = want;
    HF_ASSERT_MSG(!R->round_active && R->inflight == 0, "each-device task during a round");
    R->task = fn;
    R->task_arg = arg;
    R->task_rc = 0;
    R->task_left = R->nthreads;
    R->task_gen++;
    wake_devices(R);
    while (R->task_left > 0)
        pthread_cond_wait(&R->main_cond, &R->lock);
    R->task = NULL;
    int rc = R->task_rc;
    pthread_mutex_unlock(&R->lock);
    return rc;
}

void hf__real_stop(struct hf__engine *e)
{
    struct hf__real *R = e->real;
    pthread_mutex_lock(&R->lock);
    R->stop = 1;
    wake_devices(R);
    pthread_mutex_unlock(&R->lock);
    for (int i = 0; i < R->nthreads; i++)
        pthread_join(R->threads[i], NULL);
    hf_topo_release_threads(R->confined);
    if (R->omp_threads > 0)
        omp_set_num_threads(R->omp_threads);
    pthread_mutex_destroy(&R->lock);
    pthread_cond_destroy(&R->cond);
    pthread_cond_destroy(&R->main_cond);
    free(R->threads);
    free(R->task_seen);
    free(R);
    e->real = NULL;
}
