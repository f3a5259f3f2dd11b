/* startup_repay.c - whether a run starts its GPUs: a start-up the run cannot
 * repay is not paid.
 *
 * DESIGN
 * ------
 * Starting a GPU costs wall clock whatever the load: its context (made while
 * the app reads its input, so only what outlasts the read is waited for), its
 * staging buffers and the shared data's upload (its open), page-locking the
 * app's arrays, and its close at the end. On an H100 host that is 0.2-0.3 s
 * (context 193-205 ms, staging 41 ms; bench/gpu/startup_steps.c). A run whose
 * whole work takes the CPU a few milliseconds cannot repay it: the shipped
 * graph configs took 1.4-1.9x as long on CPU + GPU as on the CPU alone,
 * counted on the wall clock, while their rounds were faster.
 *
 * A run cannot know its work before it ran, and the GPUs are started before
 * the input is read (so that their contexts overlap it); the decision comes
 * even before any GPU is looked for, since counting them starts the CUDA
 * driver (about 0.1 s), which a run that leaves them out must not pay (nor
 * its results file, to describe the machine). So the decision
 * rests on what this host measured on earlier runs of the same load: a
 * record in the profile store, keyed by a digest of the config (every key
 * but the device list and the schedulers'; an input file's size and time are
 * part of it), not by the app's signature, which needs the input read. A run
 * with CPU and GPUs records its wall clock in two parts: what depends on the
 * device set (set-up: input read, devices' open, their wait and close) and
 * the rest (the rounds), with the ratio by which its devices' rates exceed
 * the CPU's alone (each device's work over its busy time across the run; its
 * standalone rate where it ran nothing). A run on the CPU alone records the
 * same two parts. The next run starts its GPUs unless the CPU alone is
 * faster by more than REPAY_MARGIN of the wall clock with them (the wall
 * clock's noise): measured when a CPU-alone run of the load exists, else
 * the CPU run's set-up is taken as the GPU run's app set-up and its rounds
 * as the GPU run's stretched by the rate ratio (host time stretched too:
 * an overestimate, so that a doubt keeps the GPUs). A wrong prediction
 * corrects itself: the CPU-alone run it causes is measured and recorded.
 * Only a record decides: the first run of a load starts everything. Runs
 * across nodes, simulations, runs without a profile directory, the runs of
 * a comparison (every scheduler must meet the same devices), runs with
 * injected [faults] and `[run] devices_fixed = yes` start every device and
 * record nothing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "profile.h"
#include "startup_repay.h"

/* The least share of the wall clock that leaving the GPUs out must save:
 * repeated runs of one load on one host differ by 5-20% on the wall clock
 * (the shipped graph configs on an H100 host), and a start-up that costs a
 * run less than this keeps the GPUs, whose rounds a larger load is run for
 * (kron-22 cc: 0.12 s of start-up in a 3.9 s run, rounds 4x faster). */
#define REPAY_MARGIN 0.05

/* Config entries that do not change a run's work: its devices, the
 * schedulers and how results are shown. */
static const char *const not_the_load[] = {
    "devices", "compare", "report", "hass", "qilin", "static", "minmin", "greedy", "faults",
    "run.scheduler", "run.progress", "run.devices_fixed", NULL};

static int counts(const struct hf__engine *e, int *cpus, int *gpus)
{
    *cpus = *gpus = 0;
    for (int d = 0; d < e->ndev; d++) {
        const struct hf_device *dev = hf_devlist_get(e->devs, d);
        if (dev->info.kind == HF_DEV_CPU)
            ++*cpus;
        else if (dev->info.kind == HF_DEV_CUDA)
            ++*gpus;
        else
            return 0; /* a node or a simulated device: no decision */
    }
    return 1;
}

int hf__repay_start_gpus(hf_profile_t record, char *why, size_t len)
{
    double with[4], without[2]; /* see startup_repay.h */
    if (hf_profile_get(record, HF_REPAY_WITH, "wall_s", with, 4) != 4)
        return 1; /* the first run of this load: everything starts, and is measured */
    int measured = hf_profile_get(record, HF_REPAY_WITHOUT, "wall_s", without, 2) == 2;
    double t_with = with[0] + with[1];
    double t_without = measured ? without[0] + without[1] : with[2] + with[1] * with[3];
    if (t_without >= (1.0 - REPAY_MARGIN) * t_with)
        return 1;
    snprintf(why, len, "the GPUs were not started: this load's last runs here took %.3f s "
                       "with them against %.3f s %s for the CPU alone (%s)",
             t_with, t_without, measured ? "measured" : "predicted", hf_profile_path(record));
    return 0;
}

/* Whether [devices] names a CPU and any GPU, read before any device is looked
 * for (counting the GPUs starts the CUDA driver, which an unstarted GPU must
 * not cost). */
static int configured(hf_config_t cfg, int *cpus, int *gpus)
{
    const char *cpu, *cuda;
    int rc = hf_config_str(cfg, "devices", "cpu", "all", &cpu);
    if (rc == 0)
        rc = hf_config_str(cfg, "devices", "cuda", "all", &cuda);
    if (rc == 0) {
        *cpus = strcmp(cpu, "all") == 0 || strtol(cpu, NULL, 10) > 0;
        *gpus = strcmp(cuda, "none") != 0;
    }
    return rc;
}

int hf__repay_open(struct hf__engine *e, const struct hf_run_options *o)
{
    struct hf__repay *r = &e->repay;
    *r = (struct hf__repay){0};
    int cpus = 0, gpus = 0, fixed = 0, rc;
    if (!o->repay || o->engine != HF_ENGINE_REAL || !o->profile_dir || o->nodes ||
        hf_config_has_section(o->cfg, "faults"))
        return 0; /* (a run with injected faults is about its devices: it starts them all) */
    if ((rc = configured(o->cfg, &cpus, &gpus)) || !cpus)
        return rc;
    if ((rc = hf_config_bool(o->cfg, "run", "devices_fixed", 0, &fixed)) || fixed)
        return rc;
    char key[80];
    snprintf(key, sizeof key, "load=%016" PRIx64 " rounds=%d grain=%zu",
             hf_config_digest(o->cfg, not_the_load), o->rounds, o->grain);
    if ((rc = hf_profile_open(&r->record, o->profile_dir, e->app->name, key)))
        return rc;
    if (gpus && !hf__repay_start_gpus(r->record, r->why, sizeof r->why))
        r->unstarted = HF_ALL_GPUS;
    return 0;
}

void hf__repay_note(struct hf__engine *e, const struct hf_run *run, double rounds_s)
{
    struct hf__repay *r = &e->repay;
    if (!r->record)
        return;
    int cpus, gpus;
    if (!counts(e, &cpus, &gpus))
        return;
    double rate_all = 0.0, rate_cpu = 0.0;
    for (int d = 0; d < e->ndev; d++) {
        double work = 0.0, busy = 0.0;
        for (int k = 0; k < run->nrounds; k++)
            work += run->rounds[k].dev[d].work, busy += run->rounds[k].dev[d].busy_s;
        double rate = work > 0.0 && busy > 0.0 ? work / busy
                      : e->standalone ? e->standalone[d] : 0.0;
        rate_all += rate;
        if (hf_devlist_get(e->devs, d)->info.kind == HF_DEV_CPU)
            rate_cpu += rate;
    }
    r->rounds_s = rounds_s;
    r->app_s = e->startup.app_s;
    r->ratio = rate_cpu > 0.0 && rate_all > rate_cpu ? rate_all / rate_cpu : 1.0;
    r->with_gpus = gpus > 0;
    r->noted = 1;
}

int hf__repay_save(struct hf__repay *r, const struct hf_run_startup *s, double teardown_s)
{
    int rc = 0;
    if (r->record && r->noted) {
        double setup = s->input_s + s->devices_s + teardown_s;
        double with[4] = {setup, r->rounds_s, r->app_s, r->ratio};
        double without[2] = {setup, r->rounds_s};
        rc = r->with_gpus ? hf_profile_set(r->record, HF_REPAY_WITH, "wall_s", with, 4)
                          : hf_profile_set(r->record, HF_REPAY_WITHOUT, "wall_s", without, 2);
        if (rc == 0)
            rc = hf_profile_save(r->record);
    }
    hf_profile_destroy(r->record);
    r->record = NULL;
    return rc;
}
