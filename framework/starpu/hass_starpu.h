/* hass_starpu.h - the private state of the HASS StarPU policy, shared by
 * policy.c (StarPU's callbacks) and deal.c (models, dealing, stealing).
 *
 * Locking: one mutex per scheduling context (`lock`) guards everything below
 * except the atomics `queued`, `idle[]`, `news`, `seen[]` and `run_start`, which
 * pop and pre_exec_hook use without it (the fast path of a worker with nothing to do). Every
 * hf__sp_* function expects the lock held.
 */
#ifndef HF_HASS_STARPU_H
#define HF_HASS_STARPU_H

#include <pthread.h>
#include <stdatomic.h>

#include "hf_starpu.h"
#include "sched.h"

/* One codelet's models: per worker the live model (fed by every task it ran)
 * and the plan (lat, inv) in force this round, frozen at round ends. */
struct hf__sp_codelet {
    const struct starpu_codelet *cl;
    struct hf_cost_model model[STARPU_NMAXWORKERS];
    double lat[STARPU_NMAXWORKERS], inv[STARPU_NMAXWORKERS]; /* the plan */
    unsigned samples[STARPU_NMAXWORKERS];                    /* tasks measured per worker */
    unsigned char can[STARPU_NMAXWORKERS];                   /* the worker can run it (cached) */
    unsigned gen; /* workers' generation `can` was computed for */
    int planned;  /* every present worker that can run it has a plan */
};

/* One worker's buffer and counters. */
struct hf__sp_worker {
    int present, is_cpu;
    struct starpu_task_list buf; /* dealt or stolen tasks; front runs next */
    size_t nbuf;
    double queued_s;          /* predicted seconds of buf (sum of task->predicted) */
    double run_pred_s;        /* predicted seconds of the task it runs, 0 if unknown */
    _Atomic double run_start; /* when that task started (pre_exec, written without
                                 the lock by the worker itself), monotonic seconds */
    struct hf_starpu_hass_worker_stats st;
    double round_work, round_dealt_work;
};

struct hf__sp {
    pthread_mutex_t lock;
    unsigned ctx;
    struct hf_starpu_hass_params par;
    struct hf__sp_worker w[STARPU_NMAXWORKERS];
    unsigned gen;                 /* bumped when workers come or go */
    struct starpu_task_list pool; /* tasks of codelets still being profiled */
    size_t npool;
    struct hf__sp_codelet **cls;
    int ncls, capcls;
    atomic_long queued;                  /* tasks in the pool and the buffers */
    atomic_int idle[STARPU_NMAXWORKERS]; /* the worker found nothing last time */
    atomic_ulong news; /* bumped whenever tasks are added to the pool or a buffer */
    atomic_ulong seen[STARPU_NMAXWORKERS]; /* `news` when the worker last found nothing */
    long inflight;                         /* pushed and not yet completed */
    int barrier;              /* a barrier was announced: the round ends when inflight is 0 */
    unsigned long round_done; /* tasks completed this round */
    unsigned long rounds, tasks;
};

/* Monotonic seconds. */
double hf__sp_now(void);
/* A task's work (hf_starpu.h: flops, size_base, data size, or 1). */
double hf__sp_task_work(struct starpu_task *task);
/* The codelet entry of a task, created on first sight; NULL when out of memory. */
struct hf__sp_codelet *hf__sp_codelet_of(struct hf__sp *s, struct starpu_task *task);
/* Whether worker `w` can run the task (uses the codelet's cache). */
int hf__sp_can_run(struct hf__sp *s, struct hf__sp_codelet *c, struct starpu_task *task, int w);
/* Deals a task of a planned codelet to the worker that finishes it first;
 * returns that worker, or -1 when no worker can run it. */
int hf__sp_deal(struct hf__sp *s, struct hf__sp_codelet *c, struct starpu_task *task, double now);
/* Takes the next task for worker w from its buffer, the pool or by stealing;
 * NULL when there is none. */
struct starpu_task *hf__sp_next(struct hf__sp *s, int w);
/* Records that worker w ran `task` in `seconds`; ends the round when due.
 * Appends to wake[] (count in *nwake) the workers that got tasks. */
void hf__sp_finished(struct hf__sp *s, int w, struct starpu_task *task, double seconds, int *wake,
                     int *nwake);
/* A barrier (starpu_task_wait_for_all, starpu_task_wait): the tasks pushed so
 * far are the round, which ends when they are done, at once if they are. */
void hf__sp_barrier(struct hf__sp *s);
/* Frees the codelet table. */
void hf__sp_free_codelets(struct hf__sp *s);

#endif
