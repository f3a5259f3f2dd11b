/* run.c - the life of one run: set up, measure, run the rounds, tear down.
 *
 * DESIGN
 * ------
 * hf_run() owns everything a run holds: the device list, the app context, the
 * scheduler, the profile store and the exactly-once pool. It sets them up,
 * asks standalone.c for every device's standalone rate (the rates behind the
 * ideal makespan), then runs the scheduled rounds through engine.c's round
 * steps, and tears everything down in reverse. Keeping this file apart from
 * engine.c is what keeps the call graph a tree: run.c calls standalone.c and
 * engine.c, standalone.c calls engine.c, and engine.c calls neither.
 *
 * A run ends when next_load has no more loads or after [run] rounds rounds.
 * For an app with an end of its own (struct hf_app.stopped) the second is
 * not the app's end, and stopping there silently would leave a user with a
 * missing or half-computed output and a green exit: so the cap is followed
 * by one more draw that never runs (probe_end). Asking next_load itself,
 * rather than a predicate each app would write again, keeps one definition
 * of "finished": the one that ends a run anyway.
 *
 * A run's wall clock starts long before round 0: the app reads its input,
 * the devices start, the standalone passes run (struct hf_run.startup times
 * each). A GPU's start-up is mostly its context, which needs no app data, so
 * each driver's prewarm (device.h) runs on a thread of its own while the app
 * reads its input, and open() then finds the context made: on a run of a
 * graph read in a second, the GPU's start-up is no longer added to it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_internal.h"
#include "engine_starpu.h"
#include "io/progress.h"
#include "io/files.h"
#include "profile.h"
#include "shared.h"

/* The signal that interrupted the runs; an int read and written atomically
 * (lock-free, so a signal handler may store it). */
static int interrupted;

void hf_run_interrupt(int sig)
{
    __atomic_store_n(&interrupted, sig > 0 ? sig : 1, __ATOMIC_SEQ_CST);
}

int hf_run_interrupted(void)
{
    return __atomic_load_n(&interrupted, __ATOMIC_SEQ_CST);
}

/* ---- devices warmed while the app reads its input --------------------------- */

/* One prewarm thread per device whose driver has one (device.h). */
struct warm {
    pthread_t *thread;
    int *started, n;
};

static void *prewarm_thread(void *arg)
{
    const struct hf_device *dev = arg;
    dev->ops->prewarm(dev);
    return NULL;
}

/* Starts every driver's prewarm; a thread that cannot start leaves it to open(). */
static void warm_start(struct warm *w, struct hf__engine *e)
{
    w->n = e->ndev;
    w->thread = calloc((size_t)w->n, sizeof *w->thread);
    w->started = calloc((size_t)w->n, sizeof *w->started);
    for (int d = 0; d < w->n && w->thread && w->started; d++) {
        struct hf_device *dev = hf_devlist_get(e->devs, d);
        if (e->alive[d] && dev->ops && dev->ops->prewarm)
            w->started[d] = pthread_create(&w->thread[d], NULL, prewarm_thread, dev) == 0;
    }
}

static void warm_join(struct warm *w)
{
    for (int d = 0; d < w->n && w->thread && w->started; d++)
        if (w->started[d])
            pthread_join(w->thread[d], NULL);
    free(w->thread);
    free(w->started);
    *w = (struct warm){0};
}

/* Creates the run record with the device list filled in. */
static struct hf_run *new_run(struct hf__engine *e)
{
    struct hf_run *run = calloc(1, sizeof *run);
    if (!run)
        return NULL;
    snprintf(run->scheduler, sizeof run->scheduler, "%s", e->opts->sched->name);
    snprintf(run->app, sizeof run->app, "%s", e->app->name);
    snprintf(run->engine, sizeof run->engine, "%s",
             e->opts->engine == HF_ENGINE_REAL ? "real" : "sim");
    run->ndevices = e->ndev;
    run->devs = calloc((size_t)e->ndev, sizeof *run->devs);
    run->standalone_rate = calloc((size_t)e->ndev, sizeof *run->standalone_rate);
    run->ends = e->app->stopped != NULL;
    if (!run->devs || !run->standalone_rate || !hf__run_round_slot(run)) {
        hf_run_free(run);
        return NULL;
    }
    for (int d = 0; d < e->ndev; d++)
        run->devs[d] = hf_devlist_get(e->devs, d)->info;
    if (hf__nodes_describe(e, run)) {
        hf_run_free(run);
        return NULL;
    }
    return run;
}

static int app_setup(struct hf__engine *e, const struct hf_run_options *o);

int hf__run_setup(struct hf__engine *e, const struct hf_run_options *o)
{
    e->opts = o;
    e->app = o->app;
    int simulated = o->engine == HF_ENGINE_SIM;
    /* Whether the GPUs start is decided first: a GPU left unstarted is not
     * even counted (their cores go to the CPU). */
    int rc = hf__repay_open(e, o);
    if (rc == 0)
        rc = e->repay.unstarted ? hf__devlist_init_without(&e->devs, o->cfg, -1, e->repay.unstarted)
                                : hf_devlist_init(&e->devs, o->cfg, simulated);
    if (rc == 0)
        rc = hf__nodes_add(e);
    if (rc)
        return rc;
    e->ndev = hf_devlist_count(e->devs);
    e->executes = !simulated || o->execute;
    e->sim_now = 0;
    e->rng = hf__sim_rng_state(o->seed);
    e->stall_key = hf__sim_rng_state(o->seed ^ 0x5354414c4cull); /* "STALL" */
    e->alive = calloc((size_t)e->ndev, sizeof *e->alive);
    e->sat_out = calloc((size_t)e->ndev, sizeof *e->sat_out);
    e->stats = calloc((size_t)e->ndev, sizeof *e->stats);
    e->asked_gen = calloc((size_t)e->ndev, sizeof *e->asked_gen);
    e->last_event = calloc((size_t)e->ndev, sizeof *e->last_event);
    e->launched = calloc((size_t)e->ndev, sizeof *e->launched);
    e->cost = calloc((size_t)e->ndev, sizeof *e->cost);
    if (!e->alive || !e->sat_out || !e->stats || !e->asked_gen || !e->last_event || !e->cost ||
        !e->launched)
        return hf_fail(HF_ENOMEM, "engine: out of memory");
    for (int d = 0; d < e->ndev; d++)
        hf__engine_reset_cost(e, d);
    /* A real GPU cannot run an app without a GPU kernel. */
    int any = 0;
    for (int d = 0; d < e->ndev; d++) {
        const struct hf_device *dev = hf_devlist_get(e->devs, d);
        e->alive[d] = !(dev->info.kind == HF_DEV_CUDA && !e->app->run_cuda);
        any |= e->alive[d];
    }
    if (!any)
        return hf_fail(HF_ENODEV, "app %s has no GPU kernel and no CPU device is configured",
                       e->app->name);
    if ((rc = hf_pool_init(&e->pool)))
        return rc;
    double t0 = hf__now();
    struct warm warm = {0};
    if (o->engine == HF_ENGINE_REAL)
        warm_start(&warm, e);
    rc = app_setup(e, o);
    e->startup.app_s = hf__now() - t0;
    warm_join(&warm);
    e->startup.input_s = hf__now() - t0;
    if (rc)
        return rc;
    t0 = hf__now();
    if (o->engine == HF_ENGINE_REAL && (rc = hf__real_start(e)))
        return rc;
    e->startup.devices_s = hf__now() - t0;
    return 0;
}

/* The app's side of the set-up: its context (its input read), its profile
 * key, its data (setup) and its shared arrays. */
static int app_setup(struct hf__engine *e, const struct hf_run_options *o)
{
    int simulated = o->engine == HF_ENGINE_SIM, rc;
    hf_clear_error();
    if ((rc = e->app->create(&e->app_ctx, o->cfg)))
        return *hf_last_error() ? rc : hf_fail(rc, "app %s: create failed", e->app->name);
    /* A device's rate depends on the chunk size as much as on the load (a
     * 16-row GEMM runs slower per flop than a 64-row one), so the grain is
     * part of the profile's key. Simulated devices have nothing to measure:
     * their numbers stay in memory, so a simulation never depends on what an
     * earlier one left on disk. */
    char app_sig[96] = "", sig[128];
    e->app->signature(e->app_ctx, app_sig, sizeof app_sig);
    snprintf(sig, sizeof sig, "%s grain=%zu", app_sig, o->grain ? o->grain : e->app->default_grain);
    if ((rc = hf_profile_open(&e->profile, simulated ? NULL : o->profile_dir, e->app->name, sig)))
        return rc;
    /* Data is allocated only when bundles really run: a simulated n = 65536
     * GEMM must not ask for 48 GiB. Device threads start last, after the app
     * has its data, because a GPU's open() may already register it. */
    struct hf_devices view = *hf_devlist_view(e->devs);
    view.executes = e->executes;
    view.ranks = hf__nodes_ranks(e);
    if (e->executes && e->app->setup && (rc = e->app->setup(e->app_ctx, &view)))
        return *hf_last_error() ? rc : hf_fail(rc, "app %s: setup failed", e->app->name);
    /* Shared data is declared after setup (the app has its arrays now) and
     * handed to the drivers before they open, so that a GPU uploads it before
     * its arena takes the rest of the memory. */
    hf__part_prior_init(&e->prior);
    if (e->executes && (rc = hf__shared_init(&e->shared, e->app, e->app_ctx, e->ndev)))
        return rc;
    for (int d = 0; d < e->ndev; d++) {
        struct hf_device *dev = hf_devlist_get(e->devs, d);
        dev->shared = hf__shared_list(e->shared, &dev->nshared);
        dev->cublas = e->app->cublas;
    }
    return 0;
}

void hf__run_teardown(struct hf__engine *e)
{
    if (e->real)
        hf__real_stop(e);
    hf__nodes_stop(e);
    if (e->sched_state && e->sched->destroy)
        e->sched->destroy(e->sched_state);
    hf__shared_destroy(e->shared, e->ndev);
    if (e->app_ctx && e->app->teardown)
        e->app->teardown(e->app_ctx);
    hf_profile_destroy(e->profile);
    hf_pool_destroy(e->pool);
    if (e->devs)
        hf_devlist_destroy(e->devs);
    free(e->alive);
    free(e->sat_out);
    free(e->stats);
    free(e->asked_gen);
    free(e->last_event);
    free(e->launched);
    free(e->standalone);
    free(e->cost);
    free(e->sim_sizes);
    free(e->chunks);
    hf__chunk_cost_free(&e->chunk_cost);
    free(e->orphans.v);
    free(e->events);
}

/* Copies the app's figures of a figure list into a run's fixed slots. */
static int keep_figures(struct hf_run_figure *slot, int cap, const struct hf_figure *f, int n)
{
    for (int i = 0; i < n && i < cap; i++) {
        snprintf(slot[i].name, sizeof slot[i].name, "%s", f[i].name);
        snprintf(slot[i].unit, sizeof slot[i].unit, "%s", f[i].unit ? f[i].unit : "");
        slot[i].value = f[i].value;
    }
    return n < 0 ? 0 : n < cap ? n : cap;
}

/* Asks the app for its own figures of the round that just ended
 * (struct hf_app.round_figures). */
static void record_round_figures(struct hf__engine *e, struct hf_round_stats *rs)
{
    if (!e->app->round_figures || !e->executes)
        return;
    struct hf_figure f[HF_ROUND_FIGURES];
    int n = e->app->round_figures(e->app_ctx, &e->load, f, HF_ROUND_FIGURES);
    rs->nfigures = keep_figures(rs->figures, HF_ROUND_FIGURES, f, n);
}

int hf__run_create_sched(struct hf__engine *e)
{
    const struct hf_run_options *o = e->opts;
    struct hf_sched_env env = {
        .ndevices = e->ndev, .dev = hf_devlist_view(e->devs)->dev, .cfg = o->cfg,
        .profile = e->profile, .app = e->app->name, .seed = o->seed,
    };
    e->sched = o->sched;
    hf_clear_error();
    int rc = e->sched->create(&e->sched_state, &env);
    if (rc) {
        e->sched_state = NULL;
        return *hf_last_error() ? rc : hf_fail(rc, "scheduler %s: create failed", e->sched->name);
    }
    return 0;
}

/* After the last round [run] rounds allows: whether an app with an end of
 * its own (struct hf_app.stopped) reached it. The engine draws the next load
 * as next_load would see it (the last round's changes still recorded) but
 * never runs it: no more load means the app ended exactly at the cap;
 * another means the cap stopped it, and the app says what was left and what
 * its results are worth. 0 or an HF_E* code (also the run's error). */
static int probe_end(struct hf__engine *e, struct hf_run *run)
{
    if (!e->app->stopped)
        return 0;
    struct hf_load next = {.round = e->opts->rounds, .shared = e->shared, .serial = e->draws++};
    hf_clear_error();
    int rc = e->app->next_load(e->app_ctx, &next);
    if (rc < 0) {
        hf__engine_error(e, rc, "app %s: next_load failed for round %d: %s", e->app->name,
                         next.round, *hf_last_error() ? hf_last_error() : hf_strerror(rc));
        return rc;
    }
    if (rc == 0)
        return 0;
    char left[sizeof run->left] = "";
    hf_clear_error();
    int stop = e->app->stopped(e->app_ctx, &next, left, sizeof left);
    if (stop < 0) {
        hf__engine_error(e, stop, "app %s: stopped failed after round %d: %s", e->app->name,
                         next.round - 1, *hf_last_error() ? hf_last_error() : hf_strerror(stop));
        return stop;
    }
    run->stop = stop == HF_STOP_APPROXIMATE ? HF_STOP_APPROXIMATE : HF_STOP_NO_RESULT;
    snprintf(run->left, sizeof run->left, "%s", left[0] ? left : "more rounds");
    return 0;
}

/* Runs the rounds proper, after the standalone rates are known. */
static int run_rounds(struct hf__engine *e, struct hf_run *run)
{
    const struct hf_run_options *o = e->opts;
    int rc = hf__run_create_sched(e);
    if (rc)
        return rc;
    /* Only the scheduled rounds are recorded and can have faults injected;
     * the standalone passes before them are measurement, not the run. */
    e->recording = 1;
    /* The progress line (a terminal only, so pipes and logs cost nothing)
     * counts wall seconds even in simulation: it tells a person how long to wait. */
    e->show_progress = o->progress && isatty(2);
    e->wall_t0 = hf__now();
    double run_t0 = e->run_t0 = o->engine == HF_ENGINE_REAL ? hf__now() : e->sim_now;
    int r = 0;
    for (; r < o->rounds; r++) {
        if (hf_run_interrupted()) {
            hf__engine_error(e, HF_EINTR, "interrupted by signal %d before round %d",
                             hf_run_interrupted(), r);
            rc = HF_EINTR;
            break;
        }
        rc = hf__engine_prepare_round(e, r);
        if (rc <= 0)
            break;
        e->round_start = o->engine == HF_ENGINE_REAL ? hf__now() : e->sim_now;
        e->round_end = e->round_start;
        size_t first_event = e->nevents;
        if ((rc = hf__engine_execute_round(e)))
            break;
        double t0 = hf__now();
        if ((rc = hf__engine_finish_round(e, run)))
            break;
        double t1 = hf__now();
        rc = hf__engine_verify_round(e);
        if (!rc)
            record_round_figures(e, &run->rounds[run->nrounds - 1]);
        struct hf_round_host *host = &run->rounds[run->nrounds - 1].host;
        host->adapt_s = t1 - t0;
        host->verify_s = hf__now() - t1;
        if (rc)
            break;
        for (size_t i = first_event; i < e->nevents; i++) {
            e->events[i].start_s -= run_t0;
            e->events[i].end_s -= run_t0;
        }
        e->chunks_before += e->nchunks;
        e->rounds_done = run->nrounds;
    }
    if (r == o->rounds && rc == 0)
        rc = probe_end(e, run);
    if (e->show_progress)
        hf__progress_end();
    run->total_work = e->round.total_work;
    return rc < 0 ? rc : 0;
}

/* Hands the run the learned per-chunk costs of its last load and saves them
 * beside the profile (real runs; simulated profiles live in memory). */
static int keep_chunk_cost(struct hf__engine *e, struct hf_run *run)
{
    const struct hf__chunk_cost *c = &e->chunk_cost;
    if (c->n == 0 || c->n != e->nchunks)
        return 0;
    if (!(run->chunk_cost = malloc(c->n * sizeof *run->chunk_cost)))
        return hf_fail(HF_ENOMEM, "engine: out of memory");
    memcpy(run->chunk_cost, c->learning ? c->est : c->decl, c->n * sizeof *run->chunk_cost);
    run->nchunk_cost = c->n;
    run->chunk_cost_loaded = e->chunk_cost_loaded;
    snprintf(run->chunk_costs, sizeof run->chunk_costs, "%s",
             hf__chunk_cost_verdict(c, e->load.work_exact));
    const char *path = hf_profile_path(e->profile);
    if (!*path || e->opts->cost_read_only)
        return 0;
    char cost[4096];
    snprintf(cost, sizeof cost, "%.*s.cost", (int)(strlen(path) - 5), path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", cost);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    int rc = slash ? hf__mkdir_p(dir) : 0;
    return rc ? rc : hf__chunk_cost_save(c, cost);
}

/* Asks the app for its own figures of the run (struct hf_app.figures). */
static void record_figures(struct hf__engine *e, struct hf_run *run)
{
    if (!e->app->figures || !e->executes)
        return;
    double seconds = 0;
    for (int i = 0; i < run->nrounds; i++)
        seconds += run->rounds[i].makespan_s;
    struct hf_figure f[HF_RUN_FIGURES];
    int n = e->app->figures(e->app_ctx, seconds, f, HF_RUN_FIGURES);
    run->nfigures = keep_figures(run->figures, HF_RUN_FIGURES, f, n);
}

/* Keeps the events of the rounds before `rounds` (a failed run's finished
 * ones: a later round's may be half recorded, on the clock not yet moved to
 * the run's origin); returns how many were kept. */
static size_t keep_events_before(struct hf_event *ev, size_t n, int rounds)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].round < rounds)
            ev[k++] = ev[i];
    return k;
}

/* What a failed run leaves for hf_run_keep_partial: the run record cut to
 * the rounds it finished (their statistics, plans, figures and bundles, the
 * devices inside its nodes' too), or NULL when it finished none. The app's
 * figures of the whole run are left out: they would describe a run that did
 * not happen. Takes the engine's events. */
static struct hf_run *partial_run(struct hf__engine *e, struct hf_run *run, double wall0)
{
    if (!run || e->rounds_done == 0)
        return NULL;
    for (int i = e->rounds_done; i < run->nrounds; i++) {
        free(run->rounds[i].dev);
        free(run->rounds[i].plan);
        free(run->rounds[i].set.use);
        free(run->rounds[i].inner);
        memset(&run->rounds[i], 0, sizeof run->rounds[i]);
    }
    run->nrounds = e->rounds_done;
    e->app->signature(e->app_ctx, run->signature, sizeof run->signature);
    if (e->standalone)
        memcpy(run->standalone_rate, e->standalone, (size_t)e->ndev * sizeof *e->standalone);
    memcpy(run->fault, e->fault, sizeof run->fault);
    if (e->events) { /* not yet taken: the run failed before its end */
        free(run->events);
        run->events = e->events;
        run->nevents = e->nevents;
        e->events = NULL;
    }
    run->nevents = keep_events_before(run->events, run->nevents, run->nrounds);
    if (!run->inner_events)
        hf__nodes_take_events(e, run);
    run->ninner_events = keep_events_before(run->inner_events, run->ninner_events, run->nrounds);
    run->wall_s = hf__now() - wall0;
    return run;
}

int hf_run(const struct hf_run_options *o, struct hf_run **out)
{
    return hf_run_keep_partial(o, out, NULL);
}

/* A real run's bound_s is the measured split over its own spans
 * (measured_bound.c); `compare` pools it with the other runs of the
 * comparison afterwards. Sim runs keep the engine's (and sim_bound_s). */
static int measured_bound(const struct hf_run_options *o, struct hf_run *run)
{
    if (o->engine != HF_ENGINE_REAL)
        return 0;
    int rc = hf_bound_measured(&run, 1);
    return rc ? hf_fail(rc, "engine: out of memory for the measured bound") : 0;
}

int hf_run_keep_partial(const struct hf_run_options *o, struct hf_run **out,
                        struct hf_run **partial)
{
    *out = NULL;
    if (partial)
        *partial = NULL;
    HF_ASSERT_MSG(o && o->app && o->sched && o->cfg, "hf_run needs an app, a scheduler and a config");
    if (hf__starpu_is(o->sched)) { /* a StarPU policy: the run goes through StarPU */
        int rc = hf__run_starpu(o, out);
        if (rc == 0 && (rc = measured_bound(o, *out))) {
            hf_run_free(*out);
            *out = NULL;
        }
        return rc;
    }
    if (o->rounds <= 0)
        return hf_fail(HF_EINVAL, "rounds = %d: a run needs at least one round", o->rounds);
    struct hf__engine e = {0};
    struct hf_run *run = NULL;
    double wall0 = hf__now();
    hf_clear_error();
    int rc = hf__run_setup(&e, o);
    if (rc == 0 && !(run = new_run(&e)))
        rc = hf_fail(HF_ENOMEM, "engine: out of memory");
    double t0 = hf__now();
    if (rc == 0)
        rc = hf__measure_standalone(&e);
    e.startup.standalone_s = hf__now() - t0;
    double rounds_s = 0.0;
    if (rc == 0) {
        run->startup = e.startup;
        t0 = hf__now();
        rc = run_rounds(&e, run);
        rounds_s = hf__now() - t0;
    }
    if (rc == 0 && e.error)
        rc = e.error;
    if (rc == 0) {
        e.app->signature(e.app_ctx, run->signature, sizeof run->signature);
        memcpy(run->standalone_rate, e.standalone, (size_t)e.ndev * sizeof *e.standalone);
        memcpy(run->fault, e.fault, sizeof run->fault);
        record_figures(&e, run);
        run->events = e.events;
        run->nevents = e.nevents;
        e.events = NULL;
        hf__nodes_take_events(&e, run);
        rc = hf_profile_save(e.profile);
        if (rc == 0)
            rc = keep_chunk_cost(&e, run);
        if (rc == 0)
            rc = measured_bound(o, run);
        if (rc == 0) {
            hf__repay_note(&e, run, rounds_s);
            snprintf(run->unstarted, sizeof run->unstarted, "%s", e.repay.why);
        }
    }
    if (e.error) {
        hf_clear_error();
        hf_fail(e.error, "%s", e.errmsg);
    }
    /* The partial record is cut before teardown, which still needs the nodes. */
    struct hf_run *kept = rc && partial ? partial_run(&e, run, wall0) : NULL;
    char why[768];
    snprintf(why, sizeof why, "%s", hf_last_error());
    t0 = hf__now();
    hf__run_teardown(&e);
    double teardown_s = hf__now() - t0;
    int saved = hf__repay_save(&e.repay, &e.startup, teardown_s);
    if (rc == 0 && saved) {
        hf_run_free(run);
        return saved;
    }
    if (rc) {
        if (kept)
            *partial = kept;
        else
            hf_run_free(run);
        if (!*why) /* no message to restore */
            return rc;
        hf_clear_error();
        return hf_fail(rc, "%s", why);
    }
    run->wall_s = hf__now() - wall0;
    run->teardown_s = teardown_s;
    *out = run;
    return 0;
}

void hf_run_free(struct hf_run *run)
{
    if (!run)
        return;
    for (int i = 0; i < run->nrounds; i++) {
        free(run->rounds[i].dev);
        free(run->rounds[i].plan);
        free(run->rounds[i].set.use);
        free(run->rounds[i].inner);
    }
    free(run->inner);
    free(run->rounds);
    free(run->devs);
    free(run->standalone_rate);
    free(run->chunk_cost);
    free(run->events);
    free(run->inner_events);
    free(run);
}
