/* hf_starpu.h - HASS as a StarPU 1.3 scheduling policy (libhetfarm-starpu).
 *
 * An existing StarPU application selects it in its starpu_conf before
 * starpu_init:
 *
 *     #include "hf_starpu.h"
 *     struct starpu_conf conf;
 *     starpu_conf_init(&conf);
 *     conf.sched_policy = &hf_starpu_hass_policy;
 *     starpu_init(&conf);
 *
 * and links build/libhetfarm-starpu.a plus `pkg-config --libs starpu-1.3` -lm.
 * StarPU 1.3 finds policies by name (STARPU_SCHED, conf.sched_policy_name) only
 * among its own predefined ones, so an external policy is chosen through
 * conf.sched_policy; that field takes precedence over STARPU_SCHED.
 *
 * What the policy does with independent tasks (framework/starpu/README.md has
 * the long form): every worker has a cost model per codelet, T(w) = lat + w *
 * inv, fitted from the tasks it ran (the cost model of sched.h); until every
 * worker that can run a codelet has run `profile_tasks` of its tasks, that
 * codelet's tasks sit in one shared pool taken from the front (profiling).
 * After that each pushed task is dealt to the buffer of the worker that would
 * finish it first under the models of the current round, which splits work in
 * proportion to the measured rates; an idle GPU steals a rate-sized span from
 * the tail of the busiest buffer, an idle CPU one task. A round is the work
 * between two barriers (starpu_task_wait_for_all, starpu_task_wait or
 * starpu_do_schedule: the round ends when the last task pushed before the
 * barrier completes), or `round_tasks` completed tasks when that knob is set;
 * at its end the models are refitted and the next round deals by them.
 *
 * A task's work is its starpu_task::flops when set, else its codelet's
 * perfmodel size_base, else the summed size of its data handles, else 1.
 */
#ifndef HF_STARPU_H
#define HF_STARPU_H

#include <starpu.h>

#include "hetfarm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The policy ("hf-hass"); point starpu_conf::sched_policy at it. StarPU may
 * run it in several scheduling contexts at once: each has its own state. */
extern struct starpu_sched_policy hf_starpu_hass_policy;

/* Knobs, read when StarPU initialises the policy (starpu_init or a new
 * scheduling context). */
struct hf_starpu_hass_params {
    unsigned profile_tasks;    /* tasks each worker runs of a codelet before the
                                  codelet is dealt by rates (1..64; default 2) */
    unsigned long round_tasks; /* also end a round after this many completed
                                  tasks; 0 = rounds end at barriers only (default) */
    int steal;                 /* idle workers steal from others' buffers (default 1) */
};

/* Writes the defaults into *p. */
void hf_starpu_hass_default_params(struct hf_starpu_hass_params *p);

/* Sets the knobs for the next initialisation of the policy. Returns 0, or
 * HF_EINVAL on a value out of range (the reason is printed on stderr), in
 * which case the knobs in force are unchanged. Not thread-safe against a
 * concurrent starpu_init. */
int hf_starpu_hass_set_params(const struct hf_starpu_hass_params *p);

/* What one worker did since the policy was initialised. */
struct hf_starpu_hass_worker_stats {
    int present;                       /* the worker belongs to the context */
    int is_cpu;                        /* a CPU worker (else an accelerator) */
    unsigned long tasks;               /* tasks it ran (its own, profiled and stolen) */
    unsigned long dealt;               /* tasks dealt to its buffer by the rate split */
    unsigned long profiled;            /* tasks it took from the shared profiling pool */
    unsigned long stolen;              /* tasks it stole from another worker's buffer */
    double work, busy_s;               /* summed work and measured seconds of its tasks */
    double dealt_work;                 /* summed work of the tasks dealt to it */
    double last_work, last_dealt_work; /* the same over the last complete round */
};

/* The policy's counters for one scheduling context. */
struct hf_starpu_hass_stats {
    unsigned long rounds;                                          /* rounds completed */
    unsigned long tasks;                                           /* tasks run */
    struct hf_starpu_hass_worker_stats worker[STARPU_NMAXWORKERS]; /* by StarPU worker id */
};

/* Copies the counters of context `sched_ctx_id` (0 is the global context)
 * into *out. Returns 0, or HF_ENOENT when that context does not run this
 * policy (or StarPU is not initialised). Safe while tasks run. */
int hf_starpu_hass_get_stats(unsigned sched_ctx_id, struct hf_starpu_hass_stats *out);

/* The model in force (this round's plan) of worker `workerid` for codelet
 * `cl` in context `sched_ctx_id`: seconds per task and per unit of work.
 * Returns 0, or HF_ENOENT when there is no such plan yet (the codelet is
 * still being profiled, or is unknown to the context). */
int hf_starpu_hass_get_model(unsigned sched_ctx_id, const struct starpu_codelet *cl, int workerid,
                             double *lat_s, double *inv_s);

#ifdef __cplusplus
}
#endif
#endif
