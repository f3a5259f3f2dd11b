/* results.c - results.json (cJSON) and the comparison table printed by the CLI.
 *
 * DESIGN
 * ------
 * results.json is the durable record of a run: the machine it ran on (host,
 * CPU model, cores, NUMA nodes, the BLAS core actually used, GPUs), the config
 * path, and per run everything struct hf_run holds: per round the makespan,
 * the ideal makespan and the efficiency, the scheduler's plan, what each device
 * did; and every bundle as an event (in a run across nodes also the devices
 * inside the nodes: "node_devices", per round "node_devices", and their
 * bundles, "node_events"). Benchmarks and plots read it, so its
 * field names are a stable interface (README's "Output formats").
 * The document is built in memory with cJSON and written atomically, so a
 * failed write never leaves half a file (or the previous run's file) behind.
 * A run across nodes that failed leaves the same document under another
 * name, results.partial.json, with the runs (and rounds) that finished and
 * a top-level "failed" object saying which run, which rank and why.
 *
 * The table is the human summary, one row per run: final-round makespan and
 * efficiency, the mean efficiency from round 2 on (round 0 profiles, round 1
 * is the first adapted split), the round from which the scheduler's planned
 * shares stop moving (< 1% relative change in every share for the rest of
 * the run), and the chunks stolen. Simulated runs are labelled SIMULATED so
 * that modelled seconds are never mistaken for measurements, and devices that
 * share one GPU (cuda = 0,0) are named under the table as SHARED GPU, so
 * that their seconds are never taken for two GPUs'.
 */
#include "report.h"

#include "device.h"
#include "io/files.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *kind_name(enum hf_device_kind k)
{
    switch (k) {
    case HF_DEV_CPU:
        return "cpu";
    case HF_DEV_CUDA:
        return "cuda";
    case HF_DEV_SIM:
        return "sim";
    case HF_DEV_NODE:
        return "node";
    }
    return "?";
}


/* The "machine" object: where the numbers were measured. */
static cJSON *machine_json(void)
{
    cJSON *m = cJSON_CreateObject();
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "unknown");
    cJSON_AddStringToObject(m, "host", host);
    cJSON_AddStringToObject(m, "cpu_model", hf_topo_cpu_model());
    cJSON_AddNumberToObject(m, "cores", hf_topo_cores());
    cJSON_AddNumberToObject(m, "numa_nodes", hf_topo_numa_nodes());
    cJSON_AddStringToObject(m, "blas", hf_blas_describe());
    cJSON_AddStringToObject(m, "openmp", hf_openmp_describe());
#ifdef HF_HAVE_CUDA
    /* Looking for GPUs starts the CUDA driver (0.1 s on an H100 host): a
     * process that never looked (every run on the CPU alone, or its GPUs
     * left unstarted) says so rather than paying for the description. */
    int n = hf_cuda_driver_started() ? hf_cuda_device_count() : -1;
    if (n < 0)
        cJSON_AddStringToObject(m, "gpus", "not looked for: no run of this file started a GPU");
    if (n > 0) {
        cJSON *gpus = cJSON_AddArrayToObject(m, "gpus");
        for (int i = 0; i < n; i++) {
            char name[128] = "", busid[64] = "";
            size_t mem = 0;
            if (hf_cuda_describe(i, name, sizeof name, busid, sizeof busid, &mem) != 0)
                continue;
            cJSON *g = cJSON_CreateObject();
            cJSON_AddNumberToObject(g, "ordinal", i);
            cJSON_AddStringToObject(g, "name", name);
            cJSON_AddStringToObject(g, "pci_bus_id", busid);
            cJSON_AddNumberToObject(g, "memory_bytes", (double)mem);
            cJSON_AddItemToArray(gpus, g);
        }
        char driver[64];
        hf_cuda_driver_version(driver, sizeof driver);
        cJSON_AddStringToObject(m, "gpu_driver", driver);
    }
#endif
    return m;
}

/* One round: its timing, the plan the scheduler made for the next round
 * (null when the policy has none, e.g. greedy) and what each device did. */
static cJSON *round_json(const struct hf_run *r, const struct hf_round_stats *rs)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "round", rs->round);
    cJSON_AddNumberToObject(o, "makespan_s", rs->makespan_s);
    cJSON_AddNumberToObject(o, "bound_s", rs->bound_s);
    cJSON_AddNumberToObject(o, "ideal_s", rs->ideal_s);
    cJSON_AddNumberToObject(o, "efficiency", rs->efficiency);
    if (rs->sim_bound_s > 0.0)
        cJSON_AddNumberToObject(o, "sim_bound_s", rs->sim_bound_s);
    if (rs->sim_chunk_bound_s > 0.0)
        cJSON_AddNumberToObject(o, "sim_chunk_bound_s", rs->sim_chunk_bound_s);
    cJSON_AddNumberToObject(o, "load_units", (double)rs->load_units);
    cJSON_AddNumberToObject(o, "load_work", rs->load_work);
    cJSON *host = cJSON_AddObjectToObject(o, "host");
    cJSON_AddNumberToObject(host, "next_load_s", rs->host.next_load_s);
    cJSON_AddNumberToObject(host, "partition_s", rs->host.partition_s);
    cJSON_AddNumberToObject(host, "merge_s", rs->host.merge_s);
    cJSON_AddNumberToObject(host, "adapt_s", rs->host.adapt_s);
    cJSON_AddNumberToObject(host, "verify_s", rs->host.verify_s);
    cJSON_AddNumberToObject(host, "cpu_s", rs->host.cpu_s);
    if (rs->has_plan && rs->plan)
        cJSON_AddItemToObject(o, "plan", cJSON_CreateDoubleArray(rs->plan, r->ndevices));
    else
        cJSON_AddNullToObject(o, "plan");
    /* The device set the scheduler chose for the round (schedulers/device_set.c):
     * who took part, the chosen set's predicted round, the full set's, and the
     * chosen set's predicted cost past its split; probe: the full set ran to
     * re-measure devices left out. */
    if (rs->has_set && rs->set.use) {
        cJSON *ds = cJSON_AddObjectToObject(o, "device_set");
        cJSON *used = cJSON_AddArrayToObject(ds, "used");
        for (int d = 0; d < r->ndevices; d++)
            if (rs->set.use[d])
                cJSON_AddItemToArray(used, cJSON_CreateString(r->devs[d].name));
        cJSON_AddNumberToObject(ds, "predicted_s", rs->set.pred_s);
        cJSON_AddNumberToObject(ds, "full_predicted_s", rs->set.full_s);
        cJSON_AddNumberToObject(ds, "part_s", rs->set.part_s);
        cJSON_AddBoolToObject(ds, "probe", rs->set.probe != 0);
    }
    if (rs->nfigures) {
        cJSON *figs = cJSON_AddObjectToObject(o, "app_figures");
        for (int i = 0; i < rs->nfigures; i++) {
            cJSON *x = cJSON_AddObjectToObject(figs, rs->figures[i].name);
            cJSON_AddNumberToObject(x, "value", rs->figures[i].value);
            cJSON_AddStringToObject(x, "unit", rs->figures[i].unit);
        }
    }
    cJSON *devs = cJSON_AddArrayToObject(o, "devices");
    for (int d = 0; d < r->ndevices && rs->dev; d++) {
        const struct hf_round_device *rd = &rs->dev[d];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", r->devs[d].name);
        cJSON_AddNumberToObject(x, "chunks", (double)rd->chunks);
        cJSON_AddNumberToObject(x, "bundles", (double)rd->bundles);
        cJSON_AddNumberToObject(x, "stolen", (double)rd->stolen);
        cJSON_AddNumberToObject(x, "work", rd->work);
        if (rd->more_work > 0) /* past its chunks' (hf_bundle_did_more) */
            cJSON_AddNumberToObject(x, "more_work", rd->more_work);
        cJSON_AddNumberToObject(x, "share", rd->share);
        cJSON_AddNumberToObject(x, "busy_s", rd->busy_s);
        cJSON_AddNumberToObject(x, "outliers", (double)rd->outliers);
        if (rs->has_set && rs->set.use && !rs->set.use[d])
            cJSON_AddBoolToObject(x, "left_out", 1);
        cJSON_AddItemToArray(devs, x);
    }
    /* The devices inside the nodes of a run across nodes (run's "node_devices"). */
    if (r->ninner && rs->inner) {
        cJSON *in = cJSON_AddArrayToObject(o, "node_devices");
        for (int k = 0; k < r->ninner; k++) {
            const struct hf_round_device *rd = &rs->inner[k];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "name", r->inner[k].name);
            cJSON_AddNumberToObject(x, "chunks", (double)rd->chunks);
            cJSON_AddNumberToObject(x, "bundles", (double)rd->bundles);
            cJSON_AddNumberToObject(x, "work", rd->work);
            cJSON_AddNumberToObject(x, "share_of_node", rd->share);
            cJSON_AddNumberToObject(x, "busy_s", rd->busy_s);
            cJSON_AddItemToArray(in, x);
        }
    }
    return o;
}

/* One bundle as it ran; "device" is the index into the run's "devices" (in
 * "node_events": into its "node_devices"). */
static cJSON *event_json(const struct hf_event *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "round", e->round);
    cJSON_AddNumberToObject(o, "device", e->device);
    cJSON_AddNumberToObject(o, "first", (double)e->first);
    cJSON_AddNumberToObject(o, "count", (double)e->count);
    cJSON_AddNumberToObject(o, "work", e->work);
    cJSON_AddNumberToObject(o, "start_s", e->start_s);
    cJSON_AddNumberToObject(o, "end_s", e->end_s);
    cJSON_AddNumberToObject(o, "copy_in_s", e->t.copy_in_s);
    cJSON_AddNumberToObject(o, "kernel_s", e->t.kernel_s);
    cJSON_AddNumberToObject(o, "copy_out_s", e->t.copy_out_s);
    if (e->t.shared_s > 0)
        cJSON_AddNumberToObject(o, "shared_s", e->t.shared_s);
    if (e->t.pieces > 0)
        cJSON_AddNumberToObject(o, "pieces", e->t.pieces);
    cJSON_AddBoolToObject(o, "stolen", e->stolen != 0);
    if (e->outlier)
        cJSON_AddBoolToObject(o, "outlier", 1);
    return o;
}

/* One run. "simulated" is explicit so that no script has to know that the
 * engine named "sim" reports virtual seconds. */
static cJSON *run_json(const struct hf_run *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "scheduler", r->scheduler);
    cJSON_AddStringToObject(o, "app", r->app);
    cJSON_AddStringToObject(o, "engine", r->engine);
    cJSON_AddStringToObject(o, "signature", r->signature);
    cJSON_AddBoolToObject(o, "simulated", strcmp(r->engine, "sim") == 0);
    if (r->pass > 0)
        cJSON_AddNumberToObject(o, "pass", r->pass);
    cJSON *devs = cJSON_AddArrayToObject(o, "devices");
    for (int d = 0; d < r->ndevices; d++) {
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "name", r->devs[d].name);
        cJSON_AddStringToObject(x, "kind", kind_name(r->devs[d].kind));
        cJSON_AddBoolToObject(x, "is_gpu", r->devs[d].is_gpu != 0);
        if (r->devs[d].kind == HF_DEV_CPU)
            cJSON_AddNumberToObject(x, "nthreads", r->devs[d].nthreads);
        if (r->devs[d].kind == HF_DEV_CUDA)
            cJSON_AddNumberToObject(x, "cuda_ordinal", r->devs[d].cuda_ordinal);
        if (r->devs[d].shares_gpu > 1) /* cuda = 0,0: one GPU as several devices */
            cJSON_AddNumberToObject(x, "shares_gpu", r->devs[d].shares_gpu);
        cJSON_AddNumberToObject(x, "standalone_rate",
                                r->standalone_rate ? r->standalone_rate[d] : 0);
        cJSON_AddItemToArray(devs, x);
    }
    if (r->ninner) {
        cJSON *in = cJSON_AddArrayToObject(o, "node_devices");
        for (int k = 0; k < r->ninner; k++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "name", r->inner[k].name);
            cJSON_AddStringToObject(x, "node", r->devs[r->inner[k].node].name);
            cJSON_AddItemToArray(in, x);
        }
    }
    cJSON_AddNumberToObject(o, "total_work", r->total_work);
    if (*r->chunk_costs) {
        cJSON_AddStringToObject(o, "chunk_costs", r->chunk_costs);
        cJSON_AddBoolToObject(o, "chunk_costs_loaded", r->chunk_cost_loaded != 0);
    }
    cJSON_AddStringToObject(o, "bound", *r->bound ? r->bound : "model");
    cJSON_AddNumberToObject(o, "wall_s", r->wall_s);
    cJSON_AddNumberToObject(o, "teardown_s", r->teardown_s);
    cJSON *su = cJSON_AddObjectToObject(o, "startup");
    cJSON_AddNumberToObject(su, "input_s", r->startup.input_s);
    cJSON_AddNumberToObject(su, "app_s", r->startup.app_s);
    cJSON_AddNumberToObject(su, "devices_s", r->startup.devices_s);
    cJSON_AddNumberToObject(su, "standalone_s", r->startup.standalone_s);
    cJSON_AddStringToObject(o, "fault", r->fault);
    cJSON_AddStringToObject(o, "unstarted", r->unstarted);
    /* An app with an end of its own: whether it reached it, or [run] rounds
     * stopped it (what was left, and whether its output was written). */
    if (r->ends)
        cJSON_AddStringToObject(o, "stopped", r->stop == HF_STOP_NONE ? "finished" : "rounds");
    if (r->stop != HF_STOP_NONE) {
        cJSON_AddStringToObject(o, "left", r->left);
        cJSON_AddBoolToObject(o, "converged", 0);
        cJSON_AddStringToObject(o, "output",
                                r->stop == HF_STOP_APPROXIMATE ? "approximate" : "none");
    }
    cJSON *figs = cJSON_AddObjectToObject(o, "app_figures");
    for (int i = 0; i < r->nfigures; i++) {
        cJSON *x = cJSON_AddObjectToObject(figs, r->figures[i].name);
        cJSON_AddNumberToObject(x, "value", r->figures[i].value);
        cJSON_AddStringToObject(x, "unit", r->figures[i].unit);
    }
    cJSON *rounds = cJSON_AddArrayToObject(o, "rounds");
    for (int i = 0; i < r->nrounds; i++)
        cJSON_AddItemToArray(rounds, round_json(r, &r->rounds[i]));
    cJSON *events = cJSON_AddArrayToObject(o, "events");
    for (size_t i = 0; i < r->nevents; i++)
        cJSON_AddItemToArray(events, event_json(&r->events[i]));
    if (r->ninner) {
        cJSON *inner = cJSON_AddArrayToObject(o, "node_events");
        for (size_t i = 0; i < r->ninner_events; i++)
            cJSON_AddItemToArray(inner, event_json(&r->inner_events[i]));
    }
    return o;
}

/* The document of results.json (and of results.partial.json, which adds its
 * "failed" object), or NULL when out of memory. */
static cJSON *results_doc(struct hf_run *const *runs, int nruns, hf_config_t cfg)
{
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    cJSON_AddStringToObject(root, "hetfarm", "0.1");
    cJSON_AddItemToObject(root, "machine", machine_json());
    if (cfg)
        cJSON_AddStringToObject(root, "config", hf_config_path(cfg));
    else
        cJSON_AddNullToObject(root, "config");
    cJSON *arr = cJSON_AddArrayToObject(root, "runs");
    for (int i = 0; i < nruns; i++)
        cJSON_AddItemToArray(arr, run_json(runs[i]));
    return root;
}

/* Prints the document and writes it to `path` atomically; frees it. */
static int write_doc(const char *path, cJSON *root, int nruns)
{
    if (!root)
        return hf_fail(HF_ENOMEM, "out of memory building %s", path);
    /* cJSON_Add* silently drop items on allocation failure; printing the
     * whole tree is the one place where a failure surfaces reliably enough,
     * so also count the runs that made it into the array. */
    char *text = cJSON_Print(root);
    int complete = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "runs")) == nruns;
    cJSON_Delete(root);
    if (!text || !complete) {
        free(text);
        return hf_fail(HF_ENOMEM, "out of memory building %s", path);
    }
    size_t len = strlen(text);
    text[len] = '\n'; /* replace the NUL: a text file ends with a newline */
    int rc = hf__write_atomic(path, text, len + 1, "results");
    free(text);
    return rc;
}

int hf_results_write(const char *path, struct hf_run *const *runs, int nruns, hf_config_t cfg)
{
    HF_ASSERT_MSG(path && (runs || nruns == 0), "hf_results_write: bad arguments");
    return write_doc(path, results_doc(runs, nruns, cfg), nruns);
}

int hf_results_write_partial(const char *path, struct hf_run *const *runs, int nruns,
                             hf_config_t cfg, const struct hf_results_failure *why)
{
    HF_ASSERT_MSG(path && (runs || nruns == 0) && why && why->message && why->scheduler,
                  "hf_results_write_partial: bad arguments");
    cJSON *root = results_doc(runs, nruns, cfg), *f;
    if (root && (f = cJSON_AddObjectToObject(root, "failed"))) {
        cJSON_AddStringToObject(f, "scheduler", why->scheduler);
        cJSON_AddStringToObject(f, "engine", why->engine ? why->engine : "real");
        if (why->rank >= 0)
            cJSON_AddNumberToObject(f, "rank", why->rank);
        else
            cJSON_AddNullToObject(f, "rank");
        if (why->signal > 0)
            cJSON_AddNumberToObject(f, "signal", why->signal);
        else
            cJSON_AddNullToObject(f, "signal");
        cJSON_AddStringToObject(f, "message", why->message);
        cJSON_AddNumberToObject(f, "rounds_completed", why->rounds_completed);
    }
    return write_doc(path, root, nruns);
}

/* ------------------------------------------------------------------------ */
/* The table.                                                                 */

/* Whether two plans differ by less than 1% (relative) in every share; shares
 * below 0.1% are compared absolutely, since a relative change of a share
 * that is essentially zero means nothing. */
static int plans_close(const double *a, const double *b, int n)
{
    for (int d = 0; d < n; d++) {
        double ref = fabs(b[d]) > 1e-3 ? fabs(b[d]) : 1e-3;
        if (fabs(a[d] - b[d]) >= 0.01 * ref)
            return 0;
    }
    return 1;
}

int hf_plan_stable_round(const double *const *plans, const int *rounds, int nrounds, int ndev)
{
    int last = -1, count = 0;
    for (int i = 0; i < nrounds; i++)
        count += plans[i] != NULL;
    if (count < 2)
        return -1;
    int stable = -2; /* the earliest round whose plan matched its predecessor and kept matching */
    for (int i = 0; i < nrounds; i++) {
        if (!plans[i])
            continue;
        if (last >= 0) {
            if (plans_close(plans[i], plans[last], ndev)) {
                if (stable == -2)
                    stable = rounds[i];
            } else {
                stable = -2;
            }
        }
        last = i;
    }
    return stable;
}

/* The table's view of a run: its rounds' plans for hf_plan_stable_round. */
static int plan_stable_round(const struct hf_run *r)
{
    const double **plans = calloc((size_t)r->nrounds + 1, sizeof *plans);
    int *rounds = calloc((size_t)r->nrounds + 1, sizeof *rounds);
    int stable = -1;
    if (plans && rounds) {
        for (int i = 0; i < r->nrounds; i++) {
            plans[i] = r->rounds[i].has_plan ? r->rounds[i].plan : NULL;
            rounds[i] = r->rounds[i].round;
        }
        stable = hf_plan_stable_round(plans, rounds, r->nrounds, r->ndevices);
    }
    free(plans);
    free(rounds);
    return stable;
}

/* "cpu,sim:h200#1,..." cut to `width` characters with a trailing "..". */
static void device_list(const struct hf_run *r, char *buf, size_t width)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int d = 0; d < r->ndevices; d++) {
        int w = snprintf(buf + o, width + 1 - o, "%s%s", d ? "," : "", r->devs[d].name);
        if (w < 0 || o + (size_t)w > width) {
            if (width >= 2)
                memcpy(buf + width - 2, "..", 3);
            return;
        }
        o += (size_t)w;
    }
}

/* A run's mean makespan from round 2 (its last round's when it has no round
 * 2), its mean efficiency there (NAN when none), and, where sim_eff is not
 * NULL, its mean sim_bound_s / makespan_s there (NAN unless every such round
 * has a sim_bound_s). */
static double mean_from_round2(const struct hf_run *r, double *eff, double *sim_eff)
{
    double ms = 0.0, ef = 0.0, sim = 0.0;
    int n = 0, all_sim = 1;
    for (int k = 0; k < r->nrounds; k++) {
        const struct hf_round_stats *st = &r->rounds[k];
        if (st->round < 2)
            continue;
        ms += st->makespan_s;
        ef += st->efficiency;
        all_sim &= st->sim_bound_s > 0.0 && st->makespan_s > 0.0;
        sim += all_sim ? st->sim_bound_s / st->makespan_s : 0.0;
        n++;
    }
    *eff = n ? ef / n : NAN;
    if (sim_eff)
        *sim_eff = n && all_sim ? sim / n : NAN;
    return n ? ms / n : r->nrounds ? r->rounds[r->nrounds - 1].makespan_s : 0.0;
}

int hf_pass_groups(const struct hf_pass_run *runs, int nruns, struct hf_pass_group *out)
{
    int ng = 0;
    for (int i = 0; i < nruns; i++) {
        const struct hf_pass_run *r = &runs[i];
        int g = 0;
        while (g < ng && (strcmp(runs[out[g].first].name, r->name) ||
                          strcmp(runs[out[g].first].engine, r->engine)))
            g++;
        if (g == ng)
            out[ng++] = (struct hf_pass_group){.first = i, .least = INFINITY, .most = -INFINITY};
        struct hf_pass_group *p = &out[g];
        p->mean += r->mean; /* a sum until the end */
        p->least = fmin(p->least, r->mean);
        p->most = fmax(p->most, r->mean);
        p->n++;
        if (!isnan(r->eff)) {
            p->eff += r->eff;
            p->neff++;
        }
    }
    for (int g = 0; g < ng; g++) {
        out[g].mean /= out[g].n;
        out[g].eff = out[g].neff ? out[g].eff / out[g].neff : NAN;
    }
    return ng;
}

/* Runs of several passes ([compare] passes): one line per scheduler and
 * engine over its passes, the mean makespan from round 2 averaged, with the
 * least and the most of any pass: where the spread between passes is wider
 * than the gap between two schedulers, the order of the table is luck. */
static void passes_table(FILE *f, struct hf_run *const *runs, int nruns)
{
    struct hf_pass_run *pr = calloc((size_t)nruns, sizeof *pr);
    struct hf_pass_group *g = calloc((size_t)nruns, sizeof *g);
    if (pr && g) {
        for (int i = 0; i < nruns; i++) {
            pr[i].name = runs[i]->scheduler;
            pr[i].engine = strcmp(runs[i]->engine, "sim") == 0 ? "SIMULATED" : runs[i]->engine;
            pr[i].mean = mean_from_round2(runs[i], &pr[i].eff, NULL);
        }
        int ng = hf_pass_groups(pr, nruns, g);
        fprintf(f, "\nover the passes: mean makespan from round 2 (s)\n%-14s %-9s %6s %11s %11s "
                   "%11s %9s\n", "scheduler", "engine", "passes", "mean", "least", "most",
                "eff(r>=2)");
        for (int k = 0; k < ng; k++) {
            char ebuf[16] = "-";
            if (!isnan(g[k].eff))
                snprintf(ebuf, sizeof ebuf, "%.3f", g[k].eff);
            fprintf(f, "%-14s %-9s %6d %11.4g %11.4g %11.4g %9s\n", pr[g[k].first].name,
                    pr[g[k].first].engine, g[k].n, g[k].mean, g[k].least, g[k].most, ebuf);
        }
    }
    free(pr);
    free(g);
}

/* The sim runs' mean efficiency from round 2 against sim_bound_s, the bound
 * from the modelled devices' parameters: one yardstick for every scheduler,
 * where each run's bound_s comes from the models it fitted. Only runs that
 * have it in every such round (exact work on plain sim devices). */
static void sim_bound_line(FILE *f, struct hf_run *const *runs, int nruns)
{
    int any = 0;
    for (int i = 0; i < nruns; i++) {
        const struct hf_run *r = runs[i];
        double eff, sim;
        mean_from_round2(r, &eff, &sim);
        if (isnan(sim))
            continue;
        fprintf(f, "%s %s %.3f",
                any ? ","
                    : "eff(r>=2) against the sim's own bound (sim_bound_s, the same for "
                      "every run):",
                r->scheduler, sim);
        if (r->pass > 0)
            fprintf(f, " (p%d)", r->pass);
        any = 1;
    }
    if (any)
        fprintf(f, "\n");
}

/* Names the devices that share a GPU (cuda = 0,0) under the table, once:
 * their seconds are one GPU's shared by several devices, a correctness mode,
 * never a measurement of several GPUs. */
static void shared_gpu_line(FILE *f, struct hf_run *const *runs, int nruns)
{
    for (int i = 0; i < nruns; i++) {
        const struct hf_run *r = runs[i];
        int n = 0;
        for (int d = 0; d < r->ndevices; d++)
            if (r->devs[d].shares_gpu > 1)
                fprintf(f, "%s%s", n++ ? ", " : "SHARED GPU: ", r->devs[d].name);
        if (n) {
            fprintf(f, " are one GPU serving as several devices ([devices] cuda repeats an "
                       "ordinal):\na correctness mode; their times are not several GPUs'.\n");
            return;
        }
    }
}

/* One row per run; the footer explains the columns and flags simulated
 * times and faults, so the table can be pasted into a report as it is. */
void hf_results_table(void *file, struct hf_run *const *runs, int nruns)
{
    FILE *f = file;
    int any_sim = 0, any_fault = 0;
    fprintf(f, "%-10s %-9s %-30s %11s %11s %11s %6s %9s %7s %7s %4s\n", "scheduler", "engine",
            "devices", "makespan_s", "bound_s", "ideal_s", "eff", "eff(r>=2)", "stable",
            "stolen", "out");
    int any_pass = 0;
    for (int i = 0; i < nruns; i++) {
        const struct hf_run *r = runs[i];
        int sim = strcmp(r->engine, "sim") == 0;
        any_sim |= sim;
        any_pass |= r->pass > 0;
        any_fault |= r->fault[0] != '\0';
        char devs[31];
        device_list(r, devs, 30);
        const struct hf_round_stats *last = r->nrounds > 0 ? &r->rounds[r->nrounds - 1] : NULL;
        size_t stolen = 0, outliers = 0;
        for (int k = 0; k < r->nrounds; k++)
            for (int d = 0; d < r->ndevices && r->rounds[k].dev; d++) {
                outliers += r->rounds[k].dev[d].outliers;
                stolen += r->rounds[k].dev[d].stolen;
            }
        double mean;
        mean_from_round2(r, &mean, NULL);
        char meanbuf[16] = "-", stablebuf[16] = "-";
        if (!isnan(mean))
            snprintf(meanbuf, sizeof meanbuf, "%.3f", mean);
        int st = plan_stable_round(r);
        if (st >= 0)
            snprintf(stablebuf, sizeof stablebuf, "%d", st);
        else if (st == -2)
            snprintf(stablebuf, sizeof stablebuf, "never");
        char name[48];
        if (r->pass > 0)
            snprintf(name, sizeof name, "%s p%d", r->scheduler, r->pass);
        else
            snprintf(name, sizeof name, "%s", r->scheduler);
        fprintf(f, "%-10s %-9s %-30s %11.4g %11.4g %11.4g %6.3f %9s %7s %7zu %4zu%s\n",
                name, sim ? "SIMULATED" : r->engine, devs, last ? last->makespan_s : 0,
                last ? last->bound_s : 0, last ? last->ideal_s : 0, last ? last->efficiency : 0,
                meanbuf, stablebuf, stolen, outliers, r->fault[0] ? "  (fault)" : "");
    }
    int any_measured = 0, any_model = 0;
    for (int i = 0; i < nruns; i++) {
        any_measured |= strcmp(runs[i]->bound, HF_BOUND_MEASURED) == 0;
        any_model |= strcmp(runs[i]->bound, HF_BOUND_MEASURED) != 0;
    }
    fprintf(f, "eff = bound_s / makespan_s of the last round, <= 1;");
    if (any_measured)
        fprintf(f, " bound_s %s(" HF_BOUND_MEASURED "): the best split of the round's\n"
                   "chunks under each device's least measured seconds per unit of their cost, "
                   "pooled over\nevery run of the same load: the same in every such row",
                any_model ? "of real runs " : "");
    if (any_model)
        fprintf(f, "%s bound_s %s(model): the best split under the run's own fitted\n"
                   "T(w, bytes) = latency + w/rate + bytes/bandwidth",
                any_measured ? ";" : "", any_measured ? "of the others " : "");
    fprintf(f, ";\nideal_s = work / sum of standalone rates (the older figure);\n"
               "eff(r>=2) = mean over rounds >= 2; stable = round from which the planned shares "
               "change < 1%%;\nout = bundles flagged as outliers (far slower than the device's "
               "model)%s.\n", any_pass ? "; p<N> = pass N of [compare] passes" : "");
    if (any_pass)
        passes_table(f, runs, nruns);
    if (any_sim) {
        fprintf(f, "SIMULATED: virtual seconds from the sim engine's device models, not "
                   "measurements on this machine.\n");
        sim_bound_line(f, runs, nruns);
    }
    shared_gpu_line(f, runs, nruns);
    for (int i = 0; i < nruns; i++)
        if (runs[i]->unstarted[0])
            fprintf(f, "%s: %s\n", runs[i]->scheduler, runs[i]->unstarted);
    if (any_fault)
        for (int i = 0; i < nruns; i++)
            if (runs[i]->fault[0])
                fprintf(f, "fault in %s (%s): %s\n", runs[i]->scheduler, runs[i]->engine,
                        runs[i]->fault);
}
