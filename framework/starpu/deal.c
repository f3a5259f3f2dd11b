/* deal.c - the HASS StarPU policy's decisions: models per codelet and worker,
 * the rate split, stealing, and the end of a round (policy.c calls these with
 * the context's lock held).
 *
 * DESIGN
 * ------
 * hetfarm's HASS (schedulers/hass.c) splits a round's chunks with
 * hf_cost_split and hands a GPU its share as ONE bundle. A StarPU task is
 * indivisible and always its own bundle, and tasks arrive one at a time
 * (push_task) without the round's total being known, so the split cannot be
 * computed up front. What carries over unchanged is the cost model of sched.h
 * (core/cost_model.c: robust affine fit, outliers, drift), one per codelet
 * and worker, and the rule the split implements: every worker finishes
 * together. Dealing each task to the worker that would finish it first
 * (its buffered seconds plus what is left of its running task plus the
 * task's time under the plan) meets that rule task by task: for tasks of
 * one codelet, worker d ends up with work in proportion to 1/inv_d, which is
 * hf_cost_split's answer when every task is its own bundle (each pays its
 * latency, so latency folds into the cost per task), and tasks of several
 * codelets or sizes mix without a common unit of work. Reusing hass.c itself
 * would need its spans, rounds and reports: the engine's world, not StarPU's.
 *
 * Profiling is HASS's round 0: a codelet whose workers are not all measured
 * keeps its tasks in a shared pool taken from the front, one task per
 * request, until each worker able to run it has run `profile_tasks` of them;
 * then the pool's tasks of that codelet are dealt at once.
 *
 * Stealing keeps the end of a round short when the plan was wrong or noisy.
 * An idle worker with an empty buffer and nothing in the pool looks at the
 * buffer with the most predicted seconds left (counting its owner's running
 * task); a GPU (any non-CPU worker) takes tasks from its tail while it would
 * finish them before the owner finishes them, a CPU takes one task when it
 * would finish it before the owner gets through its buffer. A thief without
 * a plan for the tail's codelet takes one task: that measures it.
 *
 * The plan (lat, inv per worker) is frozen for a round and replaced at its
 * end by the refitted models: the "adapt" step. The live models keep
 * learning in between (their own lazy refits), so the next round starts from
 * everything measured.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hass_starpu.h"

double hf__sp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The work is what makes tasks of one codelet comparable: flops when the
 * application states them, the perfmodel's size when it defines one, the bytes
 * the task touches otherwise. */
double hf__sp_task_work(struct starpu_task *task)
{
    if (task->flops > 0.0)
        return task->flops;
    const struct starpu_codelet *cl = task->cl;
    if (cl && cl->model && cl->model->size_base) {
        size_t sz = cl->model->size_base(task, 0);
        if (sz > 0)
            return (double)sz;
    }
    double bytes = 0.0;
    if (cl) {
        unsigned n = STARPU_TASK_GET_NBUFFERS(task);
        for (unsigned i = 0; i < n; i++) {
            starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, i);
            if (h)
                bytes += (double)starpu_data_get_size(h);
        }
    }
    return bytes > 0.0 ? bytes : 1.0;
}

/* Recomputes which present workers can run the codelet (after workers came or
 * went). StarPU decides this from the codelet's implementations and its
 * can_execute callback; the cache assumes the latter does not depend on the
 * task, as in every StarPU example. */
static void refresh_can(struct hf__sp *s, struct hf__sp_codelet *c, struct starpu_task *task)
{
    for (int w = 0; w < STARPU_NMAXWORKERS; w++)
        c->can[w] =
            s->w[w].present && starpu_worker_can_execute_task_first_impl((unsigned)w, task, NULL);
    c->gen = s->gen;
    c->planned = 0; /* re-checked by the caller against the new workers */
}

/* Whether every worker able to run the codelet has a plan; takes the plan from
 * the live models when `take` (a round ended, or profiling just finished). */
static int plan_codelet(struct hf__sp *s, struct hf__sp_codelet *c, int take)
{
    int any = 0, all = 1;
    for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
        if (!c->can[w])
            continue;
        any = 1;
        struct hf_cost_model *m = &c->model[w];
        if (c->samples[w] < s->par.profile_tasks) {
            all = 0;
            continue;
        }
        if (take || !(c->inv[w] > 0.0)) {
            hf_cost_refit(m);
            if (m->fitted) {
                c->lat[w] = m->lat;
                c->inv[w] = m->inv;
            }
        }
        if (!(c->inv[w] > 0.0))
            all = 0;
    }
    c->planned = any && all;
    return c->planned;
}

struct hf__sp_codelet *hf__sp_codelet_of(struct hf__sp *s, struct starpu_task *task)
{
    struct hf__sp_codelet *c = NULL;
    for (int i = 0; i < s->ncls && !c; i++)
        if (s->cls[i]->cl == task->cl)
            c = s->cls[i];
    if (!c) {
        if (s->ncls == s->capcls) {
            int cap = s->capcls ? 2 * s->capcls : 8;
            struct hf__sp_codelet **n = realloc(s->cls, (size_t)cap * sizeof *n);
            if (!n)
                return NULL;
            s->cls = n;
            s->capcls = cap;
        }
        c = calloc(1, sizeof *c);
        if (!c)
            return NULL;
        c->cl = task->cl;
        for (int w = 0; w < STARPU_NMAXWORKERS; w++)
            hf_cost_init(&c->model[w]);
        s->cls[s->ncls++] = c;
        refresh_can(s, c, task);
        plan_codelet(s, c, 0);
    } else if (c->gen != s->gen) {
        refresh_can(s, c, task);
        plan_codelet(s, c, 0);
    }
    return c;
}

int hf__sp_can_run(struct hf__sp *s, struct hf__sp_codelet *c, struct starpu_task *task, int w)
{
    if (c->gen != s->gen) {
        refresh_can(s, c, task);
        plan_codelet(s, c, 0);
    }
    return c->can[w];
}

/* The seconds worker w is predicted to need before it could start a task
 * dealt now: its buffer plus what is left of its running task. */
static double backlog(const struct hf__sp *s, int w, double now)
{
    const struct hf__sp_worker *k = &s->w[w];
    double left = k->run_pred_s > 0.0 ? k->run_pred_s - (now - k->run_start) : 0.0;
    return k->queued_s + (left > 0.0 ? left : 0.0);
}

/* A task's seconds on worker w under the plan; 0 when w has none. */
static double plan_time(const struct hf__sp_codelet *c, int w, double work)
{
    return c->inv[w] > 0.0 ? c->lat[w] + c->inv[w] * work : 0.0;
}

/* Puts a task at the back of w's buffer, predicted to take `pred` seconds. */
static void buffer_push(struct hf__sp *s, int w, struct starpu_task *task, double pred)
{
    struct hf__sp_worker *k = &s->w[w];
    task->predicted = pred * 1e6; /* StarPU's unit: microseconds */
    starpu_task_list_push_back(&k->buf, task);
    k->nbuf++;
    k->queued_s += pred;
}

/* Removes a task from w's buffer (front or back) and its predicted seconds. */
static struct starpu_task *buffer_take(struct hf__sp *s, int w, int back)
{
    struct hf__sp_worker *k = &s->w[w];
    struct starpu_task *t =
        back ? starpu_task_list_pop_back(&k->buf) : starpu_task_list_pop_front(&k->buf);
    k->nbuf--;
    k->queued_s = k->nbuf ? fmax(0.0, k->queued_s - t->predicted * 1e-6) : 0.0;
    return t;
}

int hf__sp_deal(struct hf__sp *s, struct hf__sp_codelet *c, struct starpu_task *task, double now)
{
    double work = hf__sp_task_work(task), best = INFINITY, best_t = 0.0;
    int to = -1;
    for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
        if (!c->can[w] || !(c->inv[w] > 0.0))
            continue;
        double t = plan_time(c, w, work), fin = backlog(s, w, now) + t;
        if (fin < best) {
            best = fin;
            best_t = t;
            to = w;
        }
    }
    if (to < 0)
        return -1;
    buffer_push(s, to, task, best_t);
    s->w[to].st.dealt++;
    s->w[to].st.dealt_work += work;
    s->w[to].round_dealt_work += work;
    return to;
}

/* Moves tasks from the buffer of the worker with the most predicted seconds
 * left to w's buffer (see DESIGN); returns how many. */
static int steal(struct hf__sp *s, int w)
{
    double now = hf__sp_now(), most = 0.0;
    int v = -1;
    for (int u = 0; u < STARPU_NMAXWORKERS; u++) {
        if (u == w || !s->w[u].nbuf)
            continue;
        double b = backlog(s, u, now);
        if (v < 0 || b > most) {
            most = b;
            v = u;
        }
    }
    if (v < 0)
        return 0;
    int taken = 0, gpu = !s->w[w].is_cpu;
    double mine = 0.0; /* seconds of what w stole so far */
    while (s->w[v].nbuf) {
        struct starpu_task *t = starpu_task_list_back(&s->w[v].buf);
        struct hf__sp_codelet *c = hf__sp_codelet_of(s, t);
        if (!c || !hf__sp_can_run(s, c, t, w))
            break;
        double work = hf__sp_task_work(t), tw = plan_time(c, w, work);
        double owner = backlog(s, v, now); /* when v would finish everything, t included */
        if (tw > 0.0 && mine + tw >= owner)
            break; /* v finishes it sooner */
        buffer_take(s, v, 1);
        buffer_push(s, w, t, tw);
        s->w[w].st.stolen++;
        mine += tw;
        taken++;
        if (!gpu || !(tw > 0.0))
            break; /* a CPU, or a thief without a plan, takes one */
    }
    return taken;
}

struct starpu_task *hf__sp_next(struct hf__sp *s, int w)
{
    struct hf__sp_worker *k = &s->w[w];
    if (!k->nbuf) {
        /* The pool first: profiling tasks are taken in submission order. */
        for (struct starpu_task *t = starpu_task_list_begin(&s->pool);
             t != starpu_task_list_end(&s->pool); t = starpu_task_list_next(t)) {
            struct hf__sp_codelet *c = hf__sp_codelet_of(s, t);
            if (c && hf__sp_can_run(s, c, t, w)) {
                starpu_task_list_erase(&s->pool, t);
                s->npool--;
                k->st.profiled++;
                t->predicted = 0.0;
                k->run_pred_s = 0.0;
                return t;
            }
        }
        if (!s->par.steal || !steal(s, w))
            return NULL;
    }
    struct starpu_task *t = buffer_take(s, w, 0);
    k->run_pred_s = t->predicted * 1e-6;
    return t;
}

/* Deals the pool's tasks of codelet c (its profiling just finished). */
static void deal_pool(struct hf__sp *s, struct hf__sp_codelet *c, int *wake, int *nwake)
{
    double now = hf__sp_now();
    struct starpu_task *t = starpu_task_list_begin(&s->pool);
    while (t != starpu_task_list_end(&s->pool)) {
        struct starpu_task *next = starpu_task_list_next(t);
        if (t->cl == c->cl) {
            starpu_task_list_erase(&s->pool, t);
            s->npool--;
            int to = hf__sp_deal(s, c, t, now);
            if (to < 0) { /* cannot happen for a planned codelet; keep the task anyway */
                starpu_task_list_push_back(&s->pool, t);
                s->npool++;
                break;
            }
            if (*nwake < STARPU_NMAXWORKERS)
                wake[(*nwake)++] = to;
            atomic_fetch_add(&s->news, 1);
        }
        t = next;
    }
}

/* The adapt step: every plan is replaced by its refitted model. */
static void round_end(struct hf__sp *s)
{
    for (int i = 0; i < s->ncls; i++)
        plan_codelet(s, s->cls[i], 1);
    for (int w = 0; w < STARPU_NMAXWORKERS; w++) {
        struct hf__sp_worker *k = &s->w[w];
        k->st.last_work = k->round_work;
        k->st.last_dealt_work = k->round_dealt_work;
        k->round_work = k->round_dealt_work = 0.0;
    }
    s->rounds++;
    atomic_fetch_add(&s->news, 1); /* new plans: a steal refused may now pay */
    s->round_done = 0;
    s->barrier = 0;
}

void hf__sp_finished(struct hf__sp *s, int w, struct starpu_task *task, double seconds, int *wake,
                     int *nwake)
{
    struct hf__sp_worker *k = &s->w[w];
    double work = hf__sp_task_work(task);
    k->run_pred_s = 0.0;
    k->st.tasks++;
    k->st.work += work;
    k->st.busy_s += seconds;
    k->round_work += work;
    s->tasks++;
    struct hf__sp_codelet *c = hf__sp_codelet_of(s, task);
    if (c) {
        hf_cost_add(&c->model[w], work, 0.0, seconds); /* CPU workers: no copies */
        c->samples[w]++;
        if (!c->planned && plan_codelet(s, c, 1))
            deal_pool(s, c, wake, nwake);
    }
    /* Tasks StarPU placed on a worker itself (execute_on_a_specific_worker)
     * never went through push_task: they teach the models but are no part of
     * the round's count. */
    if (!task->execute_on_a_specific_worker && s->inflight > 0) {
        s->inflight--;
        s->round_done++;
    }
    if ((s->barrier && s->inflight == 0) ||
        (s->par.round_tasks && s->round_done >= s->par.round_tasks))
        round_end(s);
}

void hf__sp_barrier(struct hf__sp *s)
{
    if (s->inflight == 0) {
        if (s->round_done > 0)
            round_end(s); /* its tasks completed before the barrier came */
    } else {
        s->barrier = 1;
    }
}

void hf__sp_free_codelets(struct hf__sp *s)
{
    for (int i = 0; i < s->ncls; i++)
        free(s->cls[i]);
    free(s->cls);
    s->cls = NULL;
    s->ncls = s->capcls = 0;
}
