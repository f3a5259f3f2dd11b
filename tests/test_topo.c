/* test_topo.c - the GPU host threads' cores are theirs alone while a run lasts.
 *
 * hf_topo_confine_threads must move every thread the process has (the main
 * thread and a helper standing in for an OpenMP or OpenBLAS worker) off the
 * reserved cores, let threads created afterwards inherit that, and
 * hf_topo_release_threads must give back exactly the old bindings. The
 * reserved core's CPUs are learned by pinning a thread to it with
 * hf_topo_pin_cores, so the test does not depend on how the OS numbers them.
 * Needs two cores; skips (77) on one.
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "device.h"

static pid_t gettid_(void)
{
    return (pid_t)syscall(SYS_gettid);
}

static cpu_set_t mask_of(pid_t tid)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    assert_int_equal(sched_getaffinity(tid, sizeof s, &s), 0);
    return s;
}

/* A helper thread that reports its tid and waits until told to end. */
struct helper {
    pthread_t th;
    pid_t tid;
    int stop;
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

static void *helper_main(void *arg)
{
    struct helper *h = arg;
    pthread_mutex_lock(&h->lock);
    h->tid = gettid_();
    pthread_cond_broadcast(&h->cond);
    while (!h->stop)
        pthread_cond_wait(&h->cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static void helper_start(struct helper *h)
{
    memset(h, 0, sizeof *h);
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cond, NULL);
    assert_int_equal(pthread_create(&h->th, NULL, helper_main, h), 0);
    pthread_mutex_lock(&h->lock);
    while (!h->tid)
        pthread_cond_wait(&h->cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
}

static void helper_stop(struct helper *h)
{
    pthread_mutex_lock(&h->lock);
    h->stop = 1;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
    pthread_join(h->th, NULL);
}

/* The CPUs of core `core`, as a thread pinned there sees them. */
static void *pin_probe(void *arg)
{
    cpu_set_t *out = arg;
    int ncores = hf_topo_cores();
    if (hf_topo_pin_cores(ncores - 1, 1) != 0)
        CPU_ZERO(out);
    else
        *out = mask_of(gettid_());
    return NULL;
}

static void confine_moves_every_thread_and_release_restores(void **state)
{
    (void)state;
    int ncores = hf_topo_cores();
    cpu_set_t reserved_cpus;
    pthread_t probe;
    assert_int_equal(pthread_create(&probe, NULL, pin_probe, &reserved_cpus), 0);
    pthread_join(probe, NULL);
    if (CPU_COUNT(&reserved_cpus) == 0)
        skip(); /* pinning refused (a VM or container): nothing to confine */

    struct helper before;
    helper_start(&before);
    cpu_set_t main0 = mask_of(gettid_()), helper0 = mask_of(before.tid);

    unsigned char reserved[HF_MAX_CORES] = {0};
    reserved[ncores - 1] = 1;
    hf_topo_confinement_t c = NULL;
    assert_int_equal(hf_topo_confine_threads(reserved, ncores, &c), 0);
    assert_non_null(c);

    cpu_set_t want;
    CPU_ZERO(&want);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &main0) && !CPU_ISSET(cpu, &reserved_cpus))
            CPU_SET(cpu, &want);
    cpu_set_t m = mask_of(gettid_()), hm = mask_of(before.tid);
    assert_true(CPU_EQUAL(&m, &want));
    assert_true(CPU_EQUAL(&hm, &want));

    /* A thread made now inherits the confinement. */
    struct helper after;
    helper_start(&after);
    cpu_set_t am = mask_of(after.tid);
    assert_true(CPU_EQUAL(&am, &want));
    helper_stop(&after);

    hf_topo_release_threads(c);
    m = mask_of(gettid_());
    hm = mask_of(before.tid);
    assert_true(CPU_EQUAL(&m, &main0));
    assert_true(CPU_EQUAL(&hm, &helper0));
    helper_stop(&before);
}

static void nothing_reserved_moves_nothing(void **state)
{
    (void)state;
    cpu_set_t m0 = mask_of(gettid_());
    unsigned char reserved[HF_MAX_CORES] = {0};
    hf_topo_confinement_t c = (hf_topo_confinement_t)&m0; /* must be overwritten */
    assert_int_equal(hf_topo_confine_threads(reserved, HF_MAX_CORES, &c), 0);
    assert_null(c);
    cpu_set_t m = mask_of(gettid_());
    assert_true(CPU_EQUAL(&m, &m0));
    hf_topo_release_threads(NULL); /* a no-op */
}

int main(void)
{
    if (hf_topo_cores() < 2)
        return 77;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(confine_moves_every_thread_and_release_restores),
        cmocka_unit_test(nothing_reserved_moves_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
