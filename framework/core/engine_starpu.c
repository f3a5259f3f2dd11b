/* engine_starpu.c - a hetfarm app run through StarPU 1.3 under one of StarPU's
 * policies: the "starpu:POLICY" rows of `compare` (engine_starpu.h).
 *
 * DESIGN
 * ------
 * The design is simple: the same app, the same loads and the same chunks as
 * every other row, but StarPU decides who runs what. Each round draws the
 * load (next_load), cuts it with the app's partitioner at the run's grain,
 * and submits one StarPU task per chunk: the grain of a StarPU task is one
 * chunk, the unit a hetfarm CPU device also takes per bundle, so every policy
 * sees as many decisions as hetfarm's schedulers do. The task's function
 * builds the chunk's bundle with the app's bundler and runs it through the
 * driver of the worker's device, then calls collect; then
 * starpu_task_wait_for_all ends the round, every chunk must have run exactly
 * once (else HF_ESCHED, as the pool does for the other engines) and verify
 * checks the load.
 *
 * Devices are StarPU's workers, one hetfarm device each: a CPU worker is a
 * one-thread CPU device ("starpu-cpuN", hf_driver_cpu, so run_cpu with one
 * thread), a CUDA worker a GPU ("starpu-cudaK" for GPU K, hf_driver_cuda, so
 * the app's run_cuda with that GPU's streams, arena and cuBLAS handle, the
 * pipeline of pieces every hetfarm GPU runs). Each device lives as the real
 * engine's do: opened on its own thread (the StarPU worker's, through
 * starpu_execute_on_each_worker) after the app's setup, run only there,
 * closed there before StarPU shuts down; the drivers are reached through
 * their ops tables in device.h, so this file needs nothing of drivers/. The
 * app's setup gets the list, so an app keeping per-device state (strsearch's
 * parts) keeps it per worker, and no device runs two bundles at once, as the
 * app template promises. CUDA workers exist only when the build has CUDA, the
 * StarPU it is built against has CUDA (STARPU_USE_CUDA: Debian's has not;
 * `make starpu-cuda` builds one), the app has run_cuda, and [devices] cuda
 * names GPUs, read through the device list as every other row reads it; the
 * codelet then has a CUDA implementation and StarPU's policy chooses between
 * the CPU workers and the GPUs. A device error fails the round and the run
 * (StarPU cannot give a task to another worker after it ran).
 *
 * The codelet has a history-based performance model whose symbol is the
 * app's name and load signature, keyed by the chunk's units (footprint), so
 * dmda and friends calibrate per chunk size and remember across runs, in
 * the run's profile folder (PROFILES/starpu; $STARPU_PERF_MODEL_DIR wins). Each task's flops are
 * the chunk's work.
 *
 * The record is the other engines' struct hf_run: per round the makespan
 * (first submit to the end of the wait), per device chunks, bundles, work,
 * busy seconds (StarPU's profiling API: the worker's executing time) and share, and the round's bound_s from per-device cost
 * models fed with every task (core/cost_model.c, as engine.c does); every
 * task is an event of the trace, with its copy and kernel times on a GPU.
 * StarPU is started and shut down once per run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "engine_starpu.h"
#include "io/files.h"

/* ---- the names: "starpu:POLICY" as an ops table -------------------------------- */

/* Never called by the StarPU engine; any other engine that gets this table
 * fails cleanly. */
static int sp_create(void **state, const struct hf_sched_env *env)
{
    (void)state;
    (void)env;
    return hf_fail(HF_ENOTSUP, "a starpu:* scheduler runs only through StarPU");
}

int hf__starpu_is(const struct hf_sched_ops *ops)
{
    return ops && ops->create == sp_create;
}

#ifndef HF_HAVE_STARPU

int hf__starpu_has_cuda(void)
{
    return 0;
}

const struct hf_sched_ops *hf__starpu_sched(const char *policy)
{
    hf_fail(HF_ENOTSUP, "scheduler starpu:%s: this build has no StarPU (pkg-config starpu-1.3)",
            policy);
    return NULL;
}

int hf__run_starpu(const struct hf_run_options *opts, struct hf_run **out)
{
    *out = NULL;
    return hf_fail(HF_ENOTSUP, "scheduler %s: this build has no StarPU", opts->sched->name);
}

#else
#include <starpu.h>

#include "device.h"

/* Whether the tasks have a CUDA implementation (see DESIGN): decided when
 * this file is compiled. */
#if defined(HF_HAVE_CUDA) && defined(STARPU_USE_CUDA)
#define SP_CUDA 1
#else
#define SP_CUDA 0
#endif

int hf__starpu_has_cuda(void)
{
    return SP_CUDA;
}

#define SP_MAX 64
static struct hf_sched_ops sp_ops[SP_MAX];
static char sp_names[SP_MAX][48];
static int sp_n;

const struct hf_sched_ops *hf__starpu_sched(const char *policy)
{
    int known = 0;
    for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; p++)
        known |= (*p)->policy_name && strcmp((*p)->policy_name, policy) == 0;
    if (!known) {
        char list[2048] = "";
        size_t at = 0;
        for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p;
             p++) {
            int n = snprintf(list + at, sizeof list - at, " %s", (*p)->policy_name);
            if (n < 0 || (size_t)n >= sizeof list - at)
                break;
            at += (size_t)n;
        }
        hf_fail(HF_ENOENT, "unknown StarPU policy 'starpu:%s'; StarPU 1.3's policies:%s", policy,
                list);
        return NULL;
    }
    for (int i = 0; i < sp_n; i++)
        if (strcmp(sp_names[i] + 7, policy) == 0)
            return &sp_ops[i];
    if (sp_n == SP_MAX || strlen(policy) + 8 > sizeof sp_names[0]) {
        hf_fail(HF_ERANGE, "too many or too long StarPU policy names");
        return NULL;
    }
    snprintf(sp_names[sp_n], sizeof sp_names[sp_n], "starpu:%s", policy);
    sp_ops[sp_n] = (struct hf_sched_ops){
        .name = sp_names[sp_n],
        .summary = "StarPU 1.3's own policy, through StarPU",
        .create = sp_create,
    };
    return &sp_ops[sp_n++];
}

/* What one task carries and brings back. */
struct sp_task {
    struct sp_run *run;
    size_t chunk;
    int rc, device;
    double start, end; /* monotonic */
    struct hf_bundle_times times;
    char err[160];
};

/* A worker's device: what its driver keeps, whether it is open, how opening
 * it went (opened and closed on the worker's thread). */
struct sp_dev {
    struct hf_device dev;
    int open, rc;
    char err[200];
};

/* One run's state. */
struct sp_run {
    const struct hf_app *app;
    void *ctx;
    struct hf_load load;
    struct hf_chunk *chunks;
    size_t nchunks;
    int *ran;                           /* per chunk: how often it ran this round */
    struct sp_dev *dev;                 /* per device (index of run->devs) */
    int worker_dev[STARPU_NMAXWORKERS]; /* StarPU worker id -> device index, -1 */
};

/* The device of the calling StarPU worker, or NULL. */
static struct sp_dev *sp_here(struct sp_run *r)
{
    int w = starpu_worker_get_id();
    int d = w >= 0 && w < STARPU_NMAXWORKERS ? r->worker_dev[w] : -1;
    return d >= 0 ? &r->dev[d] : NULL;
}

/* Opens the calling worker's device with its driver, on the worker's thread. */
static void sp_open_here(void *arg)
{
    struct sp_dev *d = sp_here(arg);
    if (!d)
        return;
    hf_clear_error();
    d->rc = d->dev.ops->open(&d->dev);
    d->open = d->rc == 0;
    if (d->rc)
        snprintf(d->err, sizeof d->err, "%s",
                 *hf_last_error() ? hf_last_error() : hf_strerror(d->rc));
}

/* Closes the calling worker's device, if open, on the worker's thread. */
static void sp_close_here(void *arg)
{
    struct sp_dev *d = sp_here(arg);
    if (d && d->open) {
        d->dev.ops->close(&d->dev);
        d->open = 0;
    }
}

/* The task's function, the CPU and the CUDA implementation alike: the chunk's
 * bundle through the driver of the worker's device (run_cpu with one thread
 * on a CPU worker, run_cuda's pipeline on a CUDA worker), then collect. */
static void sp_exec(void *buffers[], void *arg)
{
    (void)buffers;
    struct sp_task *t = arg;
    struct sp_run *r = t->run;
    struct sp_dev *d = sp_here(r);
    t->device = d ? (int)(d - r->dev) : -1;
    t->start = hf__now();
    struct hf_bundle b;
    int (*bundle)(void *, const struct hf_chunk *, size_t, struct hf_bundle *) =
        r->app->bundle ? r->app->bundle : hf_bundle_merge;
    hf_clear_error();
    int rc = !d || !d->open ? HF_EDEVICE : bundle(r->ctx, &r->chunks[t->chunk], 1, &b);
    if (!rc) {
        b.load = &r->load;
        b.device = t->device;
        rc = d->dev.ops->run(&d->dev, r->app, r->ctx, &b, &t->times);
        if (!rc && r->app->collect)
            rc = r->app->collect(r->ctx, &b);
    }
    t->end = hf__now();
    if (rc)
        snprintf(t->err, sizeof t->err, "%s", *hf_last_error() ? hf_last_error() : hf_strerror(rc));
    t->rc = rc;
    __atomic_fetch_add(&r->ran[t->chunk], 1, __ATOMIC_RELAXED);
}

/* The footprint of a task for the history-based model: the chunk's units. */
static uint32_t sp_footprint(struct starpu_task *task)
{
    const struct sp_task *t = task->cl_arg;
    const struct hf_chunk *c = &t->run->chunks[t->chunk];
    return starpu_hash_crc32c_be_n(&(uint64_t){c->end - c->begin}, sizeof(uint64_t), 0);
}

/* Grows the run's event array to hold n more. */
static int reserve_events(struct hf_run *run, size_t *cap, size_t n)
{
    if (run->nevents + n <= *cap)
        return 0;
    size_t want = *cap ? *cap : 1024;
    while (want < run->nevents + n)
        want *= 2;
    struct hf_event *ev = realloc(run->events, want * sizeof *ev);
    if (!ev)
        return HF_ENOMEM;
    run->events = ev;
    *cap = want;
    return 0;
}

/* Runs one round: load, chunks, one task per chunk, wait, check, record. */
static int sp_round(const struct hf_run_options *o, struct sp_run *r, struct starpu_codelet *cl,
                    struct hf_run *run, struct hf_cost_model *cost, size_t *evcap, double t0,
                    int round)
{
    const struct hf_app *app = r->app;
    memset(&r->load, 0, sizeof r->load);
    r->load.round = round;
    hf_clear_error();
    int rc = app->next_load(r->ctx, &r->load);
    if (rc <= 0)
        return rc < 0 ? hf_fail(rc, "app %s: next_load failed for round %d", app->name, round) : 0;
    rc = 0;
    size_t grain = o->grain ? o->grain : app->default_grain;
    size_t (*part)(void *, const struct hf_load *, size_t, struct hf_chunk *, size_t) =
        app->partition ? app->partition : hf_partition_even;
    if (grain == 0 && !app->partition) /* 0: the app's partitioner chooses */
        grain = 1;
    size_t n = part(r->ctx, &r->load, grain, NULL, 0);
    if (n == 0)
        return hf_fail(HF_EINVAL, "app %s: the partitioner made no chunks", app->name);
    free(r->chunks);
    free(r->ran);
    r->chunks = calloc(n, sizeof *r->chunks);
    r->ran = calloc(n, sizeof *r->ran);
    struct sp_task *tasks = calloc(n, sizeof *tasks);
    if (!r->chunks || !r->ran || !tasks) {
        free(tasks);
        return hf_fail(HF_ENOMEM, "starpu engine: cannot hold %zu chunks", n);
    }
    r->nchunks = part(r->ctx, &r->load, grain, r->chunks, n);
    double total = 0;
    for (size_t i = 0; i < r->nchunks; i++) {
        r->chunks[i].index = i;
        total += r->chunks[i].work;
    }

    /* Each worker's busy time of the round comes from StarPU's own profiling
     * (reading a worker's info resets it): cleared here, read after the wait. */
    for (unsigned w = 0; w < starpu_worker_get_count(); w++)
        starpu_profiling_worker_get_info((int)w, NULL);
    double start = hf__now();
    for (size_t i = 0; i < r->nchunks && !rc; i++) {
        tasks[i] = (struct sp_task){.run = r, .chunk = i, .device = -1};
        struct starpu_task *t = starpu_task_create();
        t->cl = cl;
        if (r->load.cpu_only && starpu_cpu_worker_get_count() > 0)
            t->where = STARPU_CPU; /* no GPU kernel: the CUDA workers sit it out */
        t->cl_arg = &tasks[i];
        t->cl_arg_size = sizeof tasks[i];
        t->flops = r->chunks[i].work;
        int src = starpu_task_submit(t);
        if (src)
            rc = hf_fail(HF_EAPP, "starpu_task_submit failed for chunk %zu: %s", i, strerror(-src));
    }
    int wrc = starpu_task_wait_for_all();
    double end = hf__now();
    if (!rc && wrc)
        rc = hf_fail(HF_EAPP, "starpu_task_wait_for_all failed: %s", strerror(-wrc));
    for (size_t i = 0; i < r->nchunks && !rc; i++) {
        if (r->ran[i] != 1)
            rc = hf_fail(HF_ESCHED, "round %d: chunk %zu ran %d times under %s", round, i,
                         r->ran[i], o->sched->name);
        else if (tasks[i].rc)
            rc = hf_fail(tasks[i].rc, "app %s, round %d, chunk %zu: %s", app->name, round, i,
                         tasks[i].err);
    }
    if (!rc && o->verify && app->verify) {
        hf_clear_error();
        if ((rc = app->verify(r->ctx, &r->load)))
            rc = hf_fail(rc, "app %s: round %d failed verification under %s: %s", app->name, round,
                         o->sched->name, hf_last_error());
    }

    int nd = run->ndevices;
    struct hf_round_stats *rs = hf__run_round_slot(run);
    if (!rs) {
        free(tasks);
        return rc ? rc : hf_fail(HF_ENOMEM, "starpu engine: out of memory for the record");
    }
    rs->dev = calloc((size_t)nd, sizeof *rs->dev);
    if (!rc && (!rs->dev || reserve_events(run, evcap, r->nchunks)))
        rc = hf_fail(HF_ENOMEM, "starpu engine: out of memory for the record");
    for (size_t i = 0; i < r->nchunks && !rc; i++) {
        const struct sp_task *t = &tasks[i];
        struct hf_round_device *d = &rs->dev[t->device];
        d->chunks++;
        d->bundles++;
        d->work += r->chunks[i].work;
        hf_cost_add(&cost[t->device], r->chunks[i].work, 0.0, t->end - t->start);
        run->events[run->nevents++] = (struct hf_event){
            .round = round,
            .device = t->device,
            .first = i,
            .count = 1,
            .work = r->chunks[i].work,
            .start_s = t->start - t0,
            .end_s = t->end - t0,
            .t = t->times,
        };
    }
    for (unsigned w = 0; w < starpu_worker_get_count() && !rc; w++) {
        struct starpu_profiling_worker_info info;
        int dev = w < STARPU_NMAXWORKERS ? r->worker_dev[w] : -1;
        if (dev >= 0 && starpu_profiling_worker_get_info((int)w, &info) == 0)
            rs->dev[dev].busy_s =
                (double)info.executing_time.tv_sec + 1e-9 * (double)info.executing_time.tv_nsec;
    }
    if (!rc) {
        for (int d = 0; d < nd; d++)
            rs->dev[d].share = total > 0 ? rs->dev[d].work / total : 0;
        rs->round = round;
        rs->makespan_s = end - start;
        rs->load_units = r->load.units;
        rs->load_work = total;
        /* Every device, a GPU too, runs one chunk per task here, so each pays
         * its latency per chunk (what hf__round_bound models for CPU teams). */
        int cpu[nd];
        for (int d = 0; d < nd; d++)
            cpu[d] = 1;
        rs->bound_s = hf__round_bound(cost, rs->dev, cpu, NULL, nd, total, 0.0, r->nchunks, NULL,
                                      0.0);
        rs->efficiency = rs->makespan_s > 0 ? rs->bound_s / rs->makespan_s : 0;
        run->total_work = total;
        run->nrounds++;
    }
    if (rc) { /* the round is not recorded: hf_run_free would not see its devices */
        free(rs->dev);
        rs->dev = NULL;
    }
    free(tasks);
    return rc ? rc : 1;
}

/* The CUDA ordinals that [devices] cuda names (all | none | 0,1), read by the
 * device list as every other row reads them (the same checks and messages;
 * a GPU named twice, 0,0, is refused: StarPU has one worker per GPU),
 * or an HF_E* code. None when the tasks have no CUDA implementation or the
 * app no run_cuda. */
static int sp_cuda_ordinals(hf_config_t cfg, const struct hf_app *app, int *ord, int cap)
{
    if (!SP_CUDA || !app->run_cuda)
        return 0;
    hf_devlist_t list;
    int rc = hf_devlist_init(&list, cfg, 0);
    if (rc)
        return rc;
    int n = 0;
    for (int i = 0; i < hf_devlist_count(list) && !rc; i++) {
        const struct hf_device *d = hf_devlist_get(list, i);
        if (d->info.kind != HF_DEV_CUDA)
            continue;
        if (d->info.shares_gpu > 1)
            rc = hf_fail(HF_ECONFIG, "%s: [devices] cuda names GPU %d more than once: StarPU "
                                     "runs one CUDA worker per GPU (engine = starpu); a shared "
                                     "GPU is for the real engine", hf_config_where(cfg, "devices",
                                     "cuda"), d->info.cuda_ordinal);
        else if (n == cap)
            rc = hf_fail(HF_ERANGE, "[devices] cuda: this StarPU has at most %d CUDA workers", cap);
        else
            ord[n++] = d->info.cuda_ordinal;
    }
    hf_devlist_destroy(list);
    return rc ? rc : n;
}

/* Adds StarPU worker w as device *ndev of `devs` (and of r->dev), driven by
 * `ops`. */
static void sp_add_device(struct sp_run *r, struct hf_device_info *devs, int *ndev, int w,
                          const struct hf_driver_ops *ops)
{
    int gpu = starpu_worker_get_type(w) == STARPU_CUDA_WORKER;
    struct hf_device_info *d = &devs[*ndev];
    d->index = *ndev;
    d->kind = gpu ? HF_DEV_CUDA : HF_DEV_CPU;
    d->is_gpu = gpu;
    d->nthreads = 1;
    d->cuda_ordinal = gpu ? starpu_worker_get_devid(w) : -1;
    d->host_core = starpu_worker_get_bindid(w);
    if (gpu)
        snprintf(d->name, sizeof d->name, "starpu-cuda%d", d->cuda_ordinal);
    else
        snprintf(d->name, sizeof d->name, "starpu-cpu%d", *ndev);
    struct hf_device *dev = &r->dev[*ndev].dev;
    dev->info = *d;
    dev->ops = ops;
    dev->core_first = d->host_core;
    dev->core_count = 1;
    dev->fault_round = dev->fault_bundle = -1;
    r->worker_dev[w] = (*ndev)++;
}

/* Starts StarPU under `policy` with its CPU workers and, where the tasks can
 * run on GPUs (see DESIGN), a CUDA worker per GPU [devices] cuda names, and
 * lists them as devices, CPU workers first as in every other row. [devices]
 * cpu sets how many CPU workers, as it sets the CPU threads of the other rows:
 * "all" is StarPU's default (every core but one per GPU), a number that many
 * workers. */
static int sp_start(hf_config_t cfg, const char *profile_dir, const char *policy,
                    const struct hf_app *app, struct sp_run *r, struct hf_device_info **devs,
                    int *ndev)
{
    const char *spec;
    long ncpus = -1;
    int rc = hf_config_str(cfg, "devices", "cpu", "all", &spec);
    if (!rc && strcmp(spec, "all") != 0)
        rc = hf_config_long(cfg, "devices", "cpu", 0, 1, STARPU_MAXCPUS, &ncpus);
    if (rc)
        return hf_fail(rc, "%s (this StarPU has at most %d CPU workers)", hf_last_error(),
                       STARPU_MAXCPUS);
    int ord[STARPU_MAXCUDADEVS + 1];
    int ncuda = sp_cuda_ordinals(cfg, app, ord, STARPU_MAXCUDADEVS);
    if (ncuda < 0)
        return ncuda;
    setenv("STARPU_SILENT", "1", 0);
    /* StarPU's performance models are kept with hetfarm's profiles (PROFILES/starpu),
     * unless the user points StarPU elsewhere; StarPU reads the variable when it
     * starts. In-memory profiles leave StarPU's own default ($STARPU_HOME). */
    static int model_dir_is_ours;
    if (profile_dir && (model_dir_is_ours || !getenv("STARPU_PERF_MODEL_DIR"))) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/starpu", profile_dir);
        if ((rc = hf__mkdir_p(dir)))
            return rc;
        setenv("STARPU_PERF_MODEL_DIR", dir, 1);
        model_dir_is_ours = 1;
    }
    struct starpu_conf conf;
    starpu_conf_init(&conf);
    conf.precedence_over_environment_variables = 1;
    conf.sched_policy_name = policy;
    conf.ncpus = (int)ncpus;
    conf.ncuda = ncuda;
    conf.use_explicit_workers_cuda_gpuid = ncuda > 0;
    for (int i = 0; i < ncuda; i++)
        conf.workers_cuda_gpuid[i] = (unsigned)ord[i];
    conf.nopencl = 0;
    conf.nmic = 0;
    conf.nmpi_ms = 0;
    rc = starpu_init(&conf);
    if (rc)
        return hf_fail(HF_EDEVICE, "starpu_init (policy %s, %d GPUs) failed: %s", policy, ncuda,
                       strerror(-rc));
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE); /* workers' busy time (sp_round) */
    int n = (int)starpu_worker_get_count();
    *devs = calloc((size_t)(n > 0 ? n : 1), sizeof **devs);
    r->dev = calloc((size_t)(n > 0 ? n : 1), sizeof *r->dev);
    if (!*devs || !r->dev) {
        starpu_shutdown();
        return hf_fail(HF_ENOMEM, "starpu engine: out of memory");
    }
    *ndev = 0;
    for (int w = 0; w < STARPU_NMAXWORKERS; w++)
        r->worker_dev[w] = -1;
    for (int w = 0; w < n; w++)
        if (starpu_worker_get_type(w) == STARPU_CPU_WORKER)
            sp_add_device(r, *devs, ndev, w, &hf_driver_cpu);
#if SP_CUDA
    for (int w = 0; w < n; w++)
        if (starpu_worker_get_type(w) == STARPU_CUDA_WORKER)
            sp_add_device(r, *devs, ndev, w, &hf_driver_cuda);
#endif
    return 0;
}

/* Opens every worker's device on the worker's own thread; the first failure
 * is the result. */
static int sp_open(struct sp_run *r, int ndev)
{
    starpu_execute_on_each_worker_ex(sp_open_here, r, STARPU_CPU | STARPU_CUDA, "hetfarm-open");
    for (int d = 0; d < ndev; d++)
        if (!r->dev[d].open)
            return hf_fail(r->dev[d].rc ? r->dev[d].rc : HF_EDEVICE, "%s: open failed: %s",
                           r->dev[d].dev.info.name,
                           r->dev[d].rc ? r->dev[d].err : "StarPU did not run it on its worker");
    return 0;
}

int hf__run_starpu(const struct hf_run_options *o, struct hf_run **out)
{
    *out = NULL;
    const char *policy = o->sched->name + strlen("starpu:");
    const struct hf_app *app = o->app;
    if (o->engine != HF_ENGINE_REAL)
        return hf_fail(HF_ECONFIG, "scheduler %s runs on real devices only (engine real)",
                       o->sched->name);
    if (app->shared)
        return hf_fail(HF_ENOTSUP,
                       "app %s keeps shared data across rounds, which the StarPU engine does "
                       "not carry (scheduler %s)",
                       app->name, o->sched->name);
    struct sp_run r = {.app = app};
    struct hf_run *run = calloc(1, sizeof *run);
    if (!run)
        return hf_fail(HF_ENOMEM, "starpu engine: out of memory");
    snprintf(run->scheduler, sizeof run->scheduler, "%s", o->sched->name);
    snprintf(run->app, sizeof run->app, "%s", app->name);
    snprintf(run->engine, sizeof run->engine, "starpu");
    int rounds = o->rounds > 0 ? o->rounds : 1;
    hf_clear_error();
    int rc = hf__run_round_slot(run) ? app->create(&r.ctx, o->cfg) : HF_ENOMEM;
    if (rc) {
        rc = hf_fail(rc, "app %s: create failed: %s", app->name, hf_last_error());
        hf_run_free(run);
        return rc;
    }
    int started = 0;
    struct hf_device_info *devs = NULL;
    int ndev = 0;
    if (!(rc = sp_start(o->cfg, o->profile_dir, policy, app, &r, &devs, &ndev)))
        started = 1;
    if (!rc && ndev == 0)
        rc = hf_fail(HF_ENODEV, "StarPU started no worker");
    if (!rc) {
        run->ndevices = ndev;
        run->devs = devs;
        devs = NULL;
        struct hf_devices dl = {.count = ndev, .dev = run->devs, .executes = 1};
        hf_clear_error();
        if (app->setup && (rc = app->setup(r.ctx, &dl)))
            rc = hf_fail(rc, "app %s: setup failed: %s", app->name, hf_last_error());
    }
    if (!rc)
        rc = sp_open(&r, ndev); /* after setup, as the real engine opens its devices */
    char sig[128] = "";
    if (!rc) {
        app->signature(r.ctx, sig, sizeof sig);
        snprintf(run->signature, sizeof run->signature, "%s", sig);
    }
    /* The history-based model of this app and load (see DESIGN). */
    char symbol[192];
    snprintf(symbol, sizeof symbol, "hetfarm-%s-%s", app->name, sig);
    for (char *p = symbol; *p; p++)
        if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9') &&
            *p != '-')
            *p = '_';
    struct starpu_perfmodel model = {
        .type = STARPU_HISTORY_BASED,
        .symbol = symbol,
        .footprint = sp_footprint,
    };
    struct starpu_codelet cl = {
        .where = STARPU_CPU,
        .cpu_funcs = {sp_exec},
        .nbuffers = 0,
        .model = &model,
        .name = app->name,
    };
    struct hf_cost_model *cost = calloc((size_t)(ndev > 0 ? ndev : 1), sizeof *cost);
    if (!rc && !cost)
        rc = hf_fail(HF_ENOMEM, "starpu engine: out of memory");
    for (int d = 0; d < ndev && cost; d++)
        hf_cost_init(&cost[d]);
#if SP_CUDA
    cl.where |= STARPU_CUDA;
    cl.cuda_funcs[0] = sp_exec;
#endif
    size_t evcap = 0;
    double t0 = hf__now(), makespans = 0;
    for (int round = 0; round < rounds && !rc; round++) {
        if (hf_run_interrupted()) {
            rc = hf_fail(HF_EINTR, "interrupted");
            break;
        }
        int got = sp_round(o, &r, &cl, run, cost, &evcap, t0, round);
        if (got <= 0) {
            rc = got; /* 0: the app has no more loads */
            break;
        }
        makespans += run->rounds[run->nrounds - 1].makespan_s;
    }
    if (!rc && app->figures) {
        struct hf_figure f[HF_RUN_FIGURES];
        int nf = app->figures(r.ctx, makespans, f, HF_RUN_FIGURES);
        for (int i = 0; i < nf && i < HF_RUN_FIGURES; i++) {
            snprintf(run->figures[i].name, sizeof run->figures[i].name, "%s", f[i].name);
            snprintf(run->figures[i].unit, sizeof run->figures[i].unit, "%s", f[i].unit);
            run->figures[i].value = f[i].value;
            run->nfigures = i + 1;
        }
    }
    run->wall_s = hf__now() - t0;
    if (started) {
        starpu_execute_on_each_worker_ex(sp_close_here, &r, STARPU_CPU | STARPU_CUDA,
                                         "hetfarm-close");
        starpu_shutdown(); /* saves the model's history, then forgets the model */
    }
    if (app->teardown)
        app->teardown(r.ctx);
    free(r.chunks);
    free(r.ran);
    free(r.dev);
    free(cost);
    free(devs);
    if (!rc && run->nrounds == 0)
        rc = hf_fail(HF_EINVAL, "app %s produced no load", app->name);
    if (rc) {
        hf_run_free(run);
        return rc;
    }
    *out = run;
    return 0;
}
#endif
