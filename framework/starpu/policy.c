/* policy.c - HASS as a `struct starpu_sched_policy` (hf_starpu.h): StarPU's
 * callbacks, the knobs and the counters; the decisions are in deal.c.
 *
 * DESIGN
 * ------
 * The design is simple: one state per scheduling context (StarPU's policy
 * data), one mutex in it, and every callback takes that mutex for as long as
 * it touches the state, like hetfarm's engine lock around a scheduler. StarPU
 * calls pop_task with the popping worker's own mutex held and asks that a
 * worker be woken (starpu_wake_worker_relax_light) after a task was queued
 * for it; waking happens after our mutex is released, because waking may
 * wait for the woken worker, which may be waiting for our mutex in pop.
 *
 * push_task deals the task (deal.c) or, while its codelet is profiled, puts
 * it in the shared pool, and wakes the worker it went to (the pool: every
 * idle worker). pop_task first reads an atomic count of queued tasks without
 * the mutex: a worker of a non-blocking driver polls pop_task in a loop, and
 * an empty policy must cost it no lock. pre_exec_hook notes when a task
 * starts on its worker and post_exec_hook measures it, feeds the worker's
 * model and ends the round when due; do_schedule (called by StarPU at every
 * starpu_task_wait_for_all and starpu_task_wait) announces a barrier.
 *
 * Only StarPU's public API is used (starpu.h and what it includes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hass_starpu.h"

static struct hf_starpu_hass_params params = {.profile_tasks = 2, .round_tasks = 0, .steal = 1};

void hf_starpu_hass_default_params(struct hf_starpu_hass_params *p)
{
    *p = (struct hf_starpu_hass_params){.profile_tasks = 2, .round_tasks = 0, .steal = 1};
}

int hf_starpu_hass_set_params(const struct hf_starpu_hass_params *p)
{
    if (!p) {
        fprintf(stderr, "hetfarm-starpu: hf_starpu_hass_set_params: NULL params\n");
        return HF_EINVAL;
    }
    if (p->profile_tasks < 1 || p->profile_tasks > 64) {
        fprintf(stderr, "hetfarm-starpu: profile_tasks = %u: expected 1..64\n", p->profile_tasks);
        return HF_EINVAL;
    }
    if (p->steal != 0 && p->steal != 1) {
        fprintf(stderr, "hetfarm-starpu: steal = %d: expected 0 or 1\n", p->steal);
        return HF_EINVAL;
    }
    params = *p;
    return 0;
}

static void hass_init(unsigned ctx);

/* The state of a context, or NULL when the context does not run this policy.
 * StarPU runs a copy of the policy struct, so the policy is recognised by its
 * init function. */
static struct hf__sp *state_of(unsigned ctx)
{
    if (!starpu_is_initialized() || ctx >= STARPU_NMAX_SCHED_CTXS)
        return NULL;
    struct starpu_sched_policy *p = starpu_sched_ctx_get_sched_policy(ctx);
    if (!p || p->init_sched != hass_init)
        return NULL;
    return starpu_sched_ctx_get_policy_data(ctx);
}

static void hass_init(unsigned ctx)
{
    struct hf__sp *s = calloc(1, sizeof *s);
    /* StarPU's init_sched cannot fail: out of memory here is fatal, as in
     * StarPU's own policies (_STARPU_MALLOC aborts). */
    HF_ASSERT_MSG(s != NULL, "hetfarm-starpu: out of memory creating the HASS policy state");
    pthread_mutex_init(&s->lock, NULL);
    s->ctx = ctx;
    s->par = params;
    starpu_task_list_init(&s->pool);
    for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
        starpu_task_list_init(&s->w[w].buf);
        atomic_init(&s->idle[w], 0);
        atomic_init(&s->seen[w], 0);
    }
    atomic_init(&s->queued, 0);
    atomic_init(&s->news, 1);
    starpu_sched_ctx_set_policy_data(ctx, s);
}

static void hass_deinit(unsigned ctx)
{
    struct hf__sp *s = starpu_sched_ctx_get_policy_data(ctx);
    HF_ASSERT_MSG(s->npool == 0 && atomic_load(&s->queued) == 0,
                  "hetfarm-starpu: the HASS policy is shut down with tasks still queued");
    hf__sp_free_codelets(s);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Wakes the listed workers (after the mutex was released; see DESIGN). */
static void wake_all(const int *wake, int n)
{
    for (int i = 0; i < n; i++)
        starpu_wake_worker_relax_light(wake[i]);
}

/* Adds to wake[] every worker of the context but `except` that found nothing
 * last time: a queued task may be theirs to take from the pool or to steal. */
static int idle_workers(struct hf__sp *s, int *wake, int n, int except)
{
    for (int w = 0; w < STARPU_NMAXWORKERS && n < STARPU_NMAXWORKERS; w++)
        if (w != except && s->w[w].present && atomic_load(&s->idle[w]))
            wake[n++] = w;
    return n;
}

static int hass_push(struct starpu_task *task)
{
    struct hf__sp *s = starpu_sched_ctx_get_policy_data(task->sched_ctx);
    int wake[STARPU_NMAXWORKERS], n = 0;
    pthread_mutex_lock(&s->lock);
    struct hf__sp_codelet *c = hf__sp_codelet_of(s, task);
    int to = c && c->planned ? hf__sp_deal(s, c, task, hf__sp_now()) : -1;
    if (to < 0) {
        /* Profiling (or no memory for the codelet's models, or no plan that
         * can run it): the shared pool, from which any worker able to run
         * the task takes it. */
        starpu_task_list_push_back(&s->pool, task);
        s->npool++;
    } else {
        wake[n++] = to;
    }
    /* The others matter only when the task may be theirs: taken from the
     * pool, or stolen because its worker is busy. */
    int others = to < 0 || !atomic_load(&s->idle[to]);
    atomic_fetch_add(&s->queued, 1);
    atomic_fetch_add(&s->news, 1);
    s->inflight++;
    starpu_push_task_end(task);
    if (others)
        n = idle_workers(s, wake, n, to);
    pthread_mutex_unlock(&s->lock);
    wake_all(wake, n);
    return 0;
}

static struct starpu_task *hass_pop(unsigned ctx)
{
    struct hf__sp *s = starpu_sched_ctx_get_policy_data(ctx);
    int w = starpu_worker_get_id();
    if (w < 0 || w >= STARPU_NMAXWORKERS)
        return NULL;
    /* Idle first, then look, both sequentially consistent, as push adds to
     * `queued` and `news` and then reads `idle`: either this worker sees the
     * push, or the push sees this worker idle and wakes it (a worker that is
     * popping is kept awake by StarPU's wake), so no push is slept through. */
    atomic_store(&s->idle[w], 1);
    /* Nothing queued, or nothing new since this worker last found nothing
     * to take: a buffer it could steal from only shrinks until tasks are
     * added, so asking again under the lock would only slow the others. */
    unsigned long news = atomic_load(&s->news);
    if (atomic_load(&s->queued) == 0 ||
        atomic_load_explicit(&s->seen[w], memory_order_relaxed) == news)
        return NULL;
    pthread_mutex_lock(&s->lock);
    news = atomic_load(&s->news); /* before looking: a later push is news */
    struct starpu_task *t = s->w[w].present ? hf__sp_next(s, w) : NULL;
    if (t) {
        atomic_fetch_sub(&s->queued, 1);
        atomic_store(&s->idle[w], 0);
    } else {
        atomic_store_explicit(&s->seen[w], news, memory_order_relaxed);
    }
    pthread_mutex_unlock(&s->lock);
    return t;
}

static void hass_pre_exec(struct starpu_task *task, unsigned ctx)
{
    (void)task;
    struct hf__sp *s = starpu_sched_ctx_get_policy_data(ctx);
    int w = starpu_worker_get_id();
    if (w < 0 || w >= STARPU_NMAXWORKERS)
        return;
    atomic_store_explicit(&s->w[w].run_start, hf__sp_now(), memory_order_relaxed);
}

static void hass_post_exec(struct starpu_task *task, unsigned ctx)
{
    struct hf__sp *s = starpu_sched_ctx_get_policy_data(ctx);
    int w = starpu_worker_get_id();
    if (w < 0 || w >= STARPU_NMAXWORKERS)
        return;
    double now = hf__sp_now();
    int wake[STARPU_NMAXWORKERS], n = 0;
    pthread_mutex_lock(&s->lock);
    hf__sp_finished(s, w, task, now - s->w[w].run_start, wake, &n);
    pthread_mutex_unlock(&s->lock);
    wake_all(wake, n);
}

/* A barrier: the tasks pushed so far are the round (deal.c). */
static void hass_do_schedule(unsigned ctx)
{
    struct hf__sp *s = starpu_sched_ctx_get_policy_data(ctx);
    pthread_mutex_lock(&s->lock);
    hf__sp_barrier(s);
    pthread_mutex_unlock(&s->lock);
}

static void hass_add_workers(unsigned ctx, int *ids, unsigned n)
{
    struct hf__sp *s = starpu_sched_ctx_get_policy_data(ctx);
    pthread_mutex_lock(&s->lock);
    for (unsigned i = 0; i < n; i++) {
        int w = ids[i];
        if (w < 0 || w >= STARPU_NMAXWORKERS)
            continue;
        s->w[w].present = 1;
        s->w[w].is_cpu = starpu_worker_get_type(w) == STARPU_CPU_WORKER;
        s->w[w].st.present = 1;
        s->w[w].st.is_cpu = s->w[w].is_cpu;
        /* A worker may pop from our lists: StarPU must know the lists are shared. */
        starpu_sched_ctx_worker_shares_tasks_lists(w, (int)ctx);
    }
    s->gen++;
    atomic_fetch_add(&s->news, 1);
    pthread_mutex_unlock(&s->lock);
}

static void hass_remove_workers(unsigned ctx, int *ids, unsigned n)
{
    struct hf__sp *s = starpu_sched_ctx_get_policy_data(ctx);
    pthread_mutex_lock(&s->lock);
    for (unsigned i = 0; i < n; i++) {
        int w = ids[i];
        if (w < 0 || w >= STARPU_NMAXWORKERS)
            continue;
        struct hf__sp_worker *k = &s->w[w];
        /* Its buffered tasks go back to the shared pool, for the others. */
        while (!starpu_task_list_empty(&k->buf)) {
            struct starpu_task *t = starpu_task_list_pop_front(&k->buf);
            t->predicted = 0.0;
            starpu_task_list_push_back(&s->pool, t);
            s->npool++;
        }
        k->nbuf = 0;
        k->queued_s = 0.0;
        k->present = 0;
        k->st.present = 0;
    }
    s->gen++;
    atomic_fetch_add(&s->news, 1);
    pthread_mutex_unlock(&s->lock);
}

int hf_starpu_hass_get_stats(unsigned ctx, struct hf_starpu_hass_stats *out)
{
    struct hf__sp *s = state_of(ctx);
    if (!s || !out)
        return HF_ENOENT;
    pthread_mutex_lock(&s->lock);
    memset(out, 0, sizeof *out);
    out->rounds = s->rounds;
    out->tasks = s->tasks;
    for (int w = 0; w < STARPU_NMAXWORKERS; w++)
        out->worker[w] = s->w[w].st;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int hf_starpu_hass_get_model(unsigned ctx, const struct starpu_codelet *cl, int workerid,
                             double *lat_s, double *inv_s)
{
    struct hf__sp *s = state_of(ctx);
    if (!s || workerid < 0 || workerid >= STARPU_NMAXWORKERS)
        return HF_ENOENT;
    int rc = HF_ENOENT;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->ncls; i++) {
        const struct hf__sp_codelet *c = s->cls[i];
        if (c->cl == cl && c->can[workerid] && c->inv[workerid] > 0.0) {
            *lat_s = c->lat[workerid];
            *inv_s = c->inv[workerid];
            rc = 0;
        }
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

struct starpu_sched_policy hf_starpu_hass_policy = {
    .init_sched = hass_init,
    .deinit_sched = hass_deinit,
    .push_task = hass_push,
    .pop_task = hass_pop,
    .pre_exec_hook = hass_pre_exec,
    .post_exec_hook = hass_post_exec,
    .do_schedule = hass_do_schedule,
    .add_workers = hass_add_workers,
    .remove_workers = hass_remove_workers,
    .policy_name = "hf-hass",
    .policy_description = "hetfarm's HASS: rate split by learned per-worker models, "
                          "stealing, adaptation per round",
    .worker_type = STARPU_WORKER_LIST,
};
