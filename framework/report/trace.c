/* trace.c - Chrome trace-event JSON of one or more runs (Perfetto, chrome://tracing).
 *
 * DESIGN
 * ------
 * The trace shows what every device did and when: one process per run
 * (pid = run index, named "scheduler (engine)"), one thread per device
 * (tid = device index, named after the device), one complete ("X") slice per
 * bundle named "round R chunks a..b" with its work and whether it was stolen.
 * A GPU bundle also gets copy-in, kernel and copy-out slices laid end to end
 * inside it, so the viewer nests them under the bundle and a transfer-bound
 * GPU is visible at a glance. The driver's three times may overlap (double
 * buffering) and then add up to more than the bundle; they are scaled down
 * to fit, keeping their proportions, because a child slice that sticks out
 * of its parent breaks the viewer's nesting. Round starts are process-wide
 * instant events. Times are microseconds, as the format requires; sim runs
 * show virtual time. The file is written atomically.
 *
 * A run across nodes also has the devices inside the nodes (node1:cpu,
 * node1:cuda0): each is one more thread (tid = ndevices + its index in the
 * run's inner list), sorted right under its node's thread, with its own
 * bundles, on the run's clock (core/nodes.c maps them there).
 */
#include "report.h"

#include "io/files.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A metadata event `what` of thread tid, its (empty) args in *args. */
static cJSON *meta_event(const char *what, int pid, int tid, cJSON **args)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", what);
    cJSON_AddStringToObject(o, "ph", "M");
    cJSON_AddNumberToObject(o, "pid", pid);
    cJSON_AddNumberToObject(o, "tid", tid);
    *args = cJSON_AddObjectToObject(o, "args");
    return o;
}

static cJSON *meta(const char *what, int pid, int tid, const char *name)
{
    cJSON *args, *o = meta_event(what, pid, tid, &args);
    cJSON_AddStringToObject(args, "name", name);
    return o;
}

static cJSON *slice(const char *name, const char *cat, int pid, int tid, double ts_s,
                    double dur_s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "cat", cat);
    cJSON_AddStringToObject(o, "ph", "X");
    cJSON_AddNumberToObject(o, "pid", pid);
    cJSON_AddNumberToObject(o, "tid", tid);
    cJSON_AddNumberToObject(o, "ts", ts_s * 1e6);
    cJSON_AddNumberToObject(o, "dur", dur_s > 0 ? dur_s * 1e6 : 0);
    return o;
}

/* A thread's place in the viewer: the devices in order, each node's inner
 * devices right under it. */
static cJSON *sort_index(int pid, int tid, int index)
{
    cJSON *args, *o = meta_event("thread_sort_index", pid, tid, &args);
    cJSON_AddNumberToObject(args, "sort_index", index);
    return o;
}

/* Adds the copy-in / kernel / copy-out / shared-data slices of a GPU bundle
 * on thread tid. */
static void gpu_parts(cJSON *ev, const struct hf_event *e, int pid, int tid)
{
    const char *names[4] = {"copy-in", "kernel", "copy-out", "shared data home"};
    double t[4] = {e->t.copy_in_s, e->t.kernel_s, e->t.copy_out_s, e->t.shared_s};
    double sum = t[0] + t[1] + t[2] + t[3], dur = e->end_s - e->start_s;
    double scale = sum > dur && sum > 0 ? dur / sum : 1;
    double at = e->start_s;
    for (int k = 0; k < 4; k++) {
        if (t[k] <= 0)
            continue;
        cJSON_AddItemToArray(ev, slice(names[k], "gpu", pid, tid, at, t[k] * scale));
        at += t[k] * scale;
    }
}

/* One bundle's slice on thread tid (with its copy and kernel slices when it
 * ran on a GPU). */
static void bundle(cJSON *ev, const struct hf_event *e, int pid, int tid, int gpu)
{
    char name[128];
    snprintf(name, sizeof name, "round %d chunks %zu..%zu", e->round, e->first,
             e->first + e->count - (e->count > 0));
    cJSON *o = slice(name, "bundle", pid, tid, e->start_s, e->end_s - e->start_s);
    cJSON *args = cJSON_AddObjectToObject(o, "args");
    cJSON_AddNumberToObject(args, "work", e->work);
    cJSON_AddNumberToObject(args, "chunks", (double)e->count);
    cJSON_AddBoolToObject(args, "stolen", e->stolen != 0);
    cJSON_AddItemToArray(ev, o);
    if (gpu && e->t.copy_in_s + e->t.kernel_s + e->t.copy_out_s + e->t.shared_s > 0)
        gpu_parts(ev, e, pid, tid);
}

/* Appends all events of run `pid` to the array. */
static void run_events(cJSON *ev, const struct hf_run *r, int pid)
{
    char name[128];
    snprintf(name, sizeof name, "%s (%s)", r->scheduler, r->engine);
    cJSON_AddItemToArray(ev, meta("process_name", pid, 0, name));
    /* Devices sort by index, 1000 apart, their inner devices between. */
    for (int d = 0; d < r->ndevices; d++) {
        cJSON_AddItemToArray(ev, meta("thread_name", pid, d, r->devs[d].name));
        cJSON_AddItemToArray(ev, sort_index(pid, d, 1000 * d));
    }
    for (int k = 0; k < r->ninner; k++) {
        cJSON_AddItemToArray(ev, meta("thread_name", pid, r->ndevices + k, r->inner[k].name));
        int under = 1000 * r->inner[k].node + 1 + k; /* right under its node */
        cJSON_AddItemToArray(ev, sort_index(pid, r->ndevices + k, under));
    }

    /* Round boundaries: the earliest bundle start of each round. */
    int maxround = -1;
    for (size_t i = 0; i < r->nevents; i++)
        if (r->events[i].round > maxround)
            maxround = r->events[i].round;
    double *start = maxround >= 0 ? malloc((size_t)(maxround + 1) * sizeof *start) : NULL;
    for (int k = 0; start && k <= maxround; k++)
        start[k] = -1;
    for (size_t i = 0; start && i < r->nevents; i++) {
        const struct hf_event *e = &r->events[i];
        if (e->round >= 0 && (start[e->round] < 0 || e->start_s < start[e->round]))
            start[e->round] = e->start_s;
    }
    for (int k = 0; start && k <= maxround; k++) {
        if (start[k] < 0)
            continue;
        snprintf(name, sizeof name, "round %d", k);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", name);
        cJSON_AddStringToObject(o, "ph", "i");
        cJSON_AddStringToObject(o, "s", "p");
        cJSON_AddNumberToObject(o, "pid", pid);
        cJSON_AddNumberToObject(o, "tid", 0);
        cJSON_AddNumberToObject(o, "ts", start[k] * 1e6);
        cJSON_AddItemToArray(ev, o);
    }
    free(start);

    for (size_t i = 0; i < r->nevents; i++) {
        const struct hf_event *e = &r->events[i];
        bundle(ev, e, pid, e->device,
               e->device >= 0 && e->device < r->ndevices && r->devs[e->device].is_gpu);
    }
    /* An inner device's bundle is a GPU's when it reported copy times (a
     * node's CPU team reports none). */
    for (size_t i = 0; i < r->ninner_events; i++) {
        const struct hf_event *e = &r->inner_events[i];
        if (e->device >= 0 && e->device < r->ninner)
            bundle(ev, e, pid, r->ndevices + e->device, 1);
    }
}

int hf_trace_write(const char *path, struct hf_run *const *runs, int nruns)
{
    HF_ASSERT_MSG(path && (runs || nruns == 0), "hf_trace_write: bad arguments");
    cJSON *root = cJSON_CreateObject();
    cJSON *ev = cJSON_AddArrayToObject(root, "traceEvents");
    if (!root || !ev) {
        cJSON_Delete(root);
        return hf_fail(HF_ENOMEM, "out of memory building trace %s", path);
    }
    for (int i = 0; i < nruns; i++)
        run_events(ev, runs[i], i);
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    /* Traces get large (one object per bundle); print them compactly. */
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text)
        return hf_fail(HF_ENOMEM, "out of memory building trace %s", path);
    size_t len = strlen(text);
    text[len] = '\n';
    int rc = hf__write_atomic(path, text, len + 1, "trace");
    free(text);
    return rc;
}
