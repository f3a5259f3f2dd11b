/* report_load.c - reading and validating a results.json for the HTML report.
 *
 * DESIGN
 * ------
 * The report validates its whole input before drawing anything, so that a
 * truncated or hand-edited results.json fails with one clear message (the
 * file and the JSON path of the field: "r.json: runs[0].events[3]: missing
 * number \"end_s\"") and no half-drawn page is written. Fields the charts
 * cannot do without are required; descriptive ones (app, signature, copy
 * times, stolen) default, so that results from older versions still draw.
 * Strings stay in the cJSON tree, which lives as long as the document.
 * NaN is written by cJSON as null, so the per-round numbers accept null and
 * read it back as NaN ("-" in the table, a gap in the charts).
 *
 * A run across nodes also names the devices inside its nodes ("node_devices":
 * node1:cpu, node1:cuda0), what they did per round (rounds[].node_devices)
 * and their bundles ("node_events"). They join the run's device list after
 * its own devices, so that every chart draws them like the others: each gets
 * a Gantt lane under its node's and a line of shares, its share of the
 * round's work being its share of its node's work times the node's share.
 * All three are optional (runs without nodes, older files); when present
 * they must agree with each other, as the run's own devices must.
 */
#include "report_internal.h"

#include "hetfarm.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Reading and validating.                                                    */

enum { OPT = 0, REQ = 1, NULLOK = 2 };

/* Reads number `key` of object `o` into *out. Missing: an error if REQ, else
 * `dflt`. JSON null: NaN if NULLOK (cJSON writes NaN as null), else an error. */
static int get_num(const char *file, const char *where, const cJSON *o, const char *key,
                   int flags, double dflt, double *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) {
        if (flags & REQ)
            return hf_fail(HF_EINVAL, "%s: %s: missing number \"%s\"", file, where, key);
        *out = dflt;
    } else if (cJSON_IsNull(it) && (flags & NULLOK)) {
        *out = NAN;
    } else if (cJSON_IsNumber(it)) {
        *out = it->valuedouble;
    } else {
        return hf_fail(HF_EINVAL, "%s: %s: \"%s\" is not a number", file, where, key);
    }
    return 0;
}

/* Reads string `key`; missing or null gives `dflt` unless REQ. */
static int get_str(const char *file, const char *where, const cJSON *o, const char *key,
                   int flags, const char *dflt, const char **out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it || cJSON_IsNull(it)) {
        if (flags & REQ)
            return hf_fail(HF_EINVAL, "%s: %s: missing string \"%s\"", file, where, key);
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsString(it))
        return hf_fail(HF_EINVAL, "%s: %s: \"%s\" is not a string", file, where, key);
    *out = it->valuestring;
    return 0;
}

/* Reads a boolean `key`; missing gives `dflt`. */
static int get_bool(const char *file, const char *where, const cJSON *o, const char *key,
                    int dflt, int *out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) {
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsBool(it))
        return hf_fail(HF_EINVAL, "%s: %s: \"%s\" is not true or false", file, where, key);
    *out = cJSON_IsTrue(it);
    return 0;
}

/* Finds the required array `key` of `o`. */
static int get_arr(const char *file, const char *where, const cJSON *o, const char *key,
                   const cJSON **out)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it)
        return hf_fail(HF_EINVAL, "%s: %s: missing array \"%s\"", file, where, key);
    if (!cJSON_IsArray(it))
        return hf_fail(HF_EINVAL, "%s: %s: \"%s\" is not an array", file, where, key);
    *out = it;
    return 0;
}

static int not_object(const char *file, const char *where, const cJSON *it)
{
    return cJSON_IsObject(it) ? 0 : hf_fail(HF_EINVAL, "%s: %s: not an object", file, where);
}

/* Reads rounds[i].node_devices of run `ri` (w names the round) into the
 * shares of the devices inside the nodes (see DESIGN); absent: NaN. */
static int load_round_inner(const char *file, const char *w, const cJSON *o,
                            const struct hf__rp_run *r, struct hf__rp_round *rd)
{
    for (int k = 0; k < r->ninner; k++)
        rd->share[r->ndev + k] = NAN;
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "node_devices"), *x;
    if (!in || r->ninner == 0)
        return 0;
    if (!cJSON_IsArray(in) || cJSON_GetArraySize(in) != r->ninner)
        return hf_fail(HF_EINVAL, "%s: %s: \"node_devices\" is not an array of the run's %d "
                                  "devices inside its nodes", file, w, r->ninner);
    int k = 0, rc;
    cJSON_ArrayForEach(x, in)
    {
        char wd[128];
        double of_node;
        snprintf(wd, sizeof wd, "%s.node_devices[%d]", w, k);
        if ((rc = not_object(file, wd, x)) ||
            (rc = get_num(file, wd, x, "share_of_node", REQ | NULLOK, 0, &of_node)))
            return rc;
        rd->share[r->ndev + k] = of_node * rd->share[r->dev[r->ndev + k].node];
        k++;
    }
    return 0;
}

/* Reads a round's optional "device_set" (the devices that took part are
 * marked by its devices' "left_out"; here what the choice predicted). */
static int load_round_set(const char *file, const char *w, const cJSON *o, struct hf__rp_round *rd)
{
    const cJSON *ds = cJSON_GetObjectItemCaseSensitive(o, "device_set");
    if (!ds)
        return 0;
    char wd[128];
    snprintf(wd, sizeof wd, "%s.device_set", w);
    int rc = not_object(file, wd, ds);
    if (!rc)
        rc = get_num(file, wd, ds, "predicted_s", OPT | NULLOK, NAN, &rd->set_pred);
    if (!rc)
        rc = get_num(file, wd, ds, "full_predicted_s", OPT | NULLOK, NAN, &rd->set_full);
    if (!rc)
        rc = get_num(file, wd, ds, "part_s", OPT | NULLOK, NAN, &rd->set_part);
    const cJSON *probe = cJSON_GetObjectItemCaseSensitive(ds, "probe");
    if (!rc && probe && !cJSON_IsBool(probe))
        rc = hf_fail(HF_EINVAL, "%s: %s: \"probe\" is not a boolean", file, wd);
    rd->probe = cJSON_IsTrue(probe);
    rd->has_set = !rc;
    return rc;
}

/* Reads rounds[i] of run `ri`; its "devices" must list the run's devices in order. */
static int load_round(const char *file, int ri, int i, const cJSON *o, struct hf__rp_run *r,
                      struct hf__rp_round *rd)
{
    char w[96];
    double v = 0;
    const cJSON *devs;
    snprintf(w, sizeof w, "runs[%d].rounds[%d]", ri, i);
    int rc = not_object(file, w, o);
    if (!rc)
        rc = get_num(file, w, o, "round", REQ, 0, &v);
    if (!rc && (v < 0 || v > HF__REPORT_MAX_ROUND || v != floor(v)))
        rc = hf_fail(HF_EINVAL, "%s: %s: \"round\" = %g is not a round number", file, w, v);
    rd->round = rc ? 0 : (int)v; /* (int) of an out-of-range double is undefined */
    if (!rc)
        rc = get_num(file, w, o, "makespan_s", REQ | NULLOK, 0, &rd->makespan);
    if (!rc)
        rc = get_num(file, w, o, "ideal_s", REQ | NULLOK, 0, &rd->ideal);
    if (!rc)
        rc = get_num(file, w, o, "bound_s", OPT | NULLOK, NAN, &rd->bound);
    if (!rc)
        rc = get_num(file, w, o, "efficiency", REQ | NULLOK, 0, &rd->eff);
    if (!rc)
        rc = get_arr(file, w, o, "devices", &devs);
    if (rc)
        return rc;
    if (cJSON_GetArraySize(devs) != r->ndev)
        return hf_fail(HF_EINVAL, "%s: %s: \"devices\" has %d entries, the run has %d devices",
                       file, w, cJSON_GetArraySize(devs), r->ndev);
    rd->share = calloc((size_t)(r->ndev + r->ninner) + 1, sizeof *rd->share);
    if (!rd->share)
        return hf_fail(HF_ENOMEM, "%s: out of memory", file);
    int d = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, devs)
    {
        char wd[128];
        double st, out;
        snprintf(wd, sizeof wd, "%s.devices[%d]", w, d);
        if ((rc = not_object(file, wd, x)) || (rc = get_num(file, wd, x, "share", REQ | NULLOK,
                                                            0, &rd->share[d])) ||
            (rc = get_num(file, wd, x, "stolen", OPT, 0, &st)) ||
            (rc = get_num(file, wd, x, "outliers", OPT, 0, &out)))
            return rc;
        rd->stolen += st;
        rd->outliers += out;
        const cJSON *left = cJSON_GetObjectItemCaseSensitive(x, "left_out");
        if (left && !cJSON_IsBool(left))
            return hf_fail(HF_EINVAL, "%s: %s: \"left_out\" is not a boolean", file, wd);
        if (cJSON_IsTrue(left)) {
            if (!rd->left_out && !(rd->left_out = calloc((size_t)r->ndev, 1)))
                return hf_fail(HF_ENOMEM, "%s: out of memory", file);
            rd->left_out[d] = 1;
        }
        d++;
    }
    if ((rc = load_round_set(file, w, o, rd)))
        return rc;
    if ((rc = load_round_inner(file, w, o, r, rd)))
        return rc;
    /* The plan is optional (older files, policies without one) but, when
     * present, must give one share per device. */
    const cJSON *plan = cJSON_GetObjectItemCaseSensitive(o, "plan");
    if (cJSON_IsArray(plan)) {
        if (cJSON_GetArraySize(plan) != r->ndev)
            return hf_fail(HF_EINVAL, "%s: %s: \"plan\" has %d entries, the run has %d devices",
                           file, w, cJSON_GetArraySize(plan), r->ndev);
        rd->plan = calloc((size_t)r->ndev + 1, sizeof *rd->plan);
        if (!rd->plan)
            return hf_fail(HF_ENOMEM, "%s: out of memory", file);
        d = 0;
        cJSON_ArrayForEach(x, plan)
        {
            if (!cJSON_IsNumber(x))
                return hf_fail(HF_EINVAL, "%s: %s: \"plan\"[%d] is not a number", file, w, d);
            rd->plan[d++] = x->valuedouble;
        }
    }
    return 0;
}

/* Reads bundle i of run `ri`'s array `arr` ("events": "device" indexes the
 * run's own `ndevs` devices; "node_events": the devices inside its nodes). */
static int load_event(const char *file, int ri, const char *arr, size_t i, const cJSON *o,
                      int ndevs, struct hf__rp_event *e)
{
    char w[96];
    double rnd, dev;
    snprintf(w, sizeof w, "runs[%d].%s[%zu]", ri, arr, i);
    int rc = not_object(file, w, o);
    if (!rc)
        rc = get_num(file, w, o, "round", REQ, 0, &rnd);
    if (!rc)
        rc = get_num(file, w, o, "device", REQ, 0, &dev);
    if (!rc)
        rc = get_num(file, w, o, "start_s", REQ, 0, &e->start);
    if (!rc)
        rc = get_num(file, w, o, "end_s", REQ, 0, &e->end);
    if (!rc)
        rc = get_num(file, w, o, "first", OPT, NAN, &e->first);
    if (!rc)
        rc = get_num(file, w, o, "count", OPT, NAN, &e->count);
    if (!rc)
        rc = get_num(file, w, o, "copy_in_s", OPT, 0, &e->cin);
    if (!rc)
        rc = get_num(file, w, o, "kernel_s", OPT, 0, &e->kern);
    if (!rc)
        rc = get_num(file, w, o, "copy_out_s", OPT, 0, &e->cout);
    if (!rc)
        rc = get_bool(file, w, o, "stolen", 0, &e->stolen);
    if (!rc)
        rc = get_bool(file, w, o, "outlier", 0, &e->outlier);
    if (rc)
        return rc;
    if (dev < 0 || dev >= ndevs || dev != floor(dev))
        return hf_fail(HF_EINVAL, "%s: %s: \"device\" = %g is not a device of the run (0..%d)",
                       file, w, dev, ndevs - 1);
    if (rnd < 0 || rnd > HF__REPORT_MAX_ROUND || rnd != floor(rnd))
        return hf_fail(HF_EINVAL, "%s: %s: \"round\" = %g is not a round number", file, w, rnd);
    if (!isfinite(e->start) || !isfinite(e->end) || e->end < e->start)
        return hf_fail(HF_EINVAL, "%s: %s: \"start_s\" = %g, \"end_s\" = %g is not a time span",
                       file, w, e->start, e->end);
    e->round = (int)rnd;
    e->device = (int)dev;
    return 0;
}

/* Reads run `ri`'s optional "node_devices" (w names the run) into
 * r->dev[ndev ..], growing r->dev: each names the node device it sits in. */
static int load_inner_devices(const char *file, const char *w, const cJSON *o,
                              struct hf__rp_run *r)
{
    const cJSON *in = cJSON_GetObjectItemCaseSensitive(o, "node_devices"), *x;
    if (!in)
        return 0;
    if (!cJSON_IsArray(in))
        return hf_fail(HF_EINVAL, "%s: %s: \"node_devices\" is not an array", file, w);
    int n = cJSON_GetArraySize(in), k = 0, rc;
    struct hf__rp_dev *dev = realloc(r->dev, (size_t)(r->ndev + n) * sizeof *dev);
    if (!dev)
        return hf_fail(HF_ENOMEM, "%s: out of memory", file);
    r->dev = dev;
    cJSON_ArrayForEach(x, in)
    {
        char wd[96];
        const char *node;
        struct hf__rp_dev *d = &r->dev[r->ndev + k];
        *d = (struct hf__rp_dev){.kind = "", .node = -1};
        snprintf(wd, sizeof wd, "%s.node_devices[%d]", w, k);
        if ((rc = not_object(file, wd, x)) ||
            (rc = get_str(file, wd, x, "name", REQ, NULL, &d->name)) ||
            (rc = get_str(file, wd, x, "node", REQ, NULL, &node)))
            return rc;
        for (int i = 0; i < r->ndev && d->node < 0; i++)
            if (strcmp(r->dev[i].name, node) == 0)
                d->node = i;
        if (d->node < 0)
            return hf_fail(HF_EINVAL, "%s: %s: \"node\" = \"%s\" is not a device of the run",
                           file, wd, node);
        r->ninner = ++k;
    }
    return 0;
}

/* Numbers the Gantt lanes: the run's own devices in order, each followed by
 * the devices inside it; a device inside a node counts as a GPU when a
 * bundle of its reported copy or kernel times (its node says no more). */
static void lay_out_lanes(struct hf__rp_run *r)
{
    int row = 0;
    for (int d = 0; d < r->ndev; d++) {
        r->dev[d].row = row++;
        for (int k = r->ndev; k < r->ndev + r->ninner; k++)
            if (r->dev[k].node == d)
                r->dev[k].row = row++;
    }
    for (size_t i = 0; i < r->nev; i++) {
        const struct hf__rp_event *e = &r->ev[i];
        if (e->device >= r->ndev && (e->cin > 0 || e->kern > 0 || e->cout > 0))
            r->dev[e->device].is_gpu = 1;
    }
}

/* Reads runs[ri]: its identity, devices, rounds and events. */
static int load_run(const char *file, int ri, const cJSON *o, struct hf__rp_run *r)
{
    char w[64];
    const cJSON *devs, *rounds, *events, *inner_events = NULL, *x;
    snprintf(w, sizeof w, "runs[%d]", ri);
    int rc = not_object(file, w, o);
    if (!rc)
        rc = get_str(file, w, o, "scheduler", REQ, NULL, &r->sched);
    double pass = 0;
    if (!rc)
        rc = get_num(file, w, o, "pass", OPT, 0, &pass);
    if (!rc && !(pass >= 0 && pass <= 1e6 && pass == floor(pass)))
        rc = hf_fail(HF_EINVAL, "%s: %s: \"pass\" = %g is not a pass number", file, w, pass);
    r->name = r->sched;
    r->pass = rc ? 0 : (int)pass;
    if (!rc && r->pass > 0) {
        snprintf(r->label, sizeof r->label, "%s (pass %d)", r->sched, r->pass);
        r->sched = r->label;
    }
    if (!rc)
        rc = get_str(file, w, o, "engine", REQ, NULL, &r->engine);
    if (!rc)
        rc = get_str(file, w, o, "app", OPT, "", &r->app);
    if (!rc)
        rc = get_str(file, w, o, "signature", OPT, "", &r->sig);
    if (!rc)
        rc = get_str(file, w, o, "fault", OPT, "", &r->fault);
    if (!rc)
        rc = get_str(file, w, o, "unstarted", OPT, "", &r->unstarted);
    if (!rc)
        rc = get_bool(file, w, o, "simulated", strcmp(r->engine, "sim") == 0, &r->sim);
    if (!rc)
        rc = get_num(file, w, o, "wall_s", OPT | NULLOK, NAN, &r->wall_s);
    if (!rc)
        rc = get_arr(file, w, o, "devices", &devs);
    if (!rc)
        rc = get_arr(file, w, o, "rounds", &rounds);
    if (!rc)
        rc = get_arr(file, w, o, "events", &events);
    if (rc)
        return rc;
    r->ndev = cJSON_GetArraySize(devs);
    if (r->ndev == 0)
        return hf_fail(HF_EINVAL, "%s: %s: \"devices\" is empty", file, w);
    if (cJSON_GetObjectItemCaseSensitive(o, "node_events") &&
        (rc = get_arr(file, w, o, "node_events", &inner_events)))
        return rc;
    r->nrounds = cJSON_GetArraySize(rounds);
    r->nev = (size_t)cJSON_GetArraySize(events) + (size_t)cJSON_GetArraySize(inner_events);
    r->dev = calloc((size_t)r->ndev, sizeof *r->dev);
    r->rd = calloc((size_t)r->nrounds + 1, sizeof *r->rd);
    r->ev = calloc(r->nev + 1, sizeof *r->ev);
    if (!r->dev || !r->rd || !r->ev)
        return hf_fail(HF_ENOMEM, "%s: out of memory", file);
    int d = 0;
    cJSON_ArrayForEach(x, devs)
    {
        char wd[96];
        double shares = 0;
        snprintf(wd, sizeof wd, "%s.devices[%d]", w, d);
        if ((rc = not_object(file, wd, x)) ||
            (rc = get_str(file, wd, x, "name", REQ, NULL, &r->dev[d].name)) ||
            (rc = get_str(file, wd, x, "kind", OPT, "", &r->dev[d].kind)) ||
            (rc = get_bool(file, wd, x, "is_gpu", 0, &r->dev[d].is_gpu)) ||
            (rc = get_num(file, wd, x, "shares_gpu", OPT, 0, &shares)))
            return rc;
        if (!(shares >= 0 && shares <= 1e6))
            return hf_fail(HF_EINVAL, "%s: %s: \"shares_gpu\" = %g is not a device count", file,
                           wd, shares);
        r->dev[d].shares_gpu = (int)shares;
        r->dev[d].node = -1;
        d++;
    }
    if ((rc = load_inner_devices(file, w, o, r)))
        return rc;
    if (inner_events && !r->ninner)
        return hf_fail(HF_EINVAL, "%s: %s: \"node_events\" without \"node_devices\"", file, w);
    int i = 0;
    cJSON_ArrayForEach(x, rounds)
    {
        if ((rc = load_round(file, ri, i, x, r, &r->rd[i])) != 0)
            return rc;
        i++;
    }
    size_t k = 0;
    cJSON_ArrayForEach(x, events)
    {
        if ((rc = load_event(file, ri, "events", k, x, r->ndev, &r->ev[k])) != 0)
            return rc;
        k++;
    }
    size_t own = k;
    cJSON_ArrayForEach(x, inner_events)
    {
        if ((rc = load_event(file, ri, "node_events", k - own, x, r->ninner, &r->ev[k])) != 0)
            return rc;
        r->ev[k++].device += r->ndev;
    }
    lay_out_lanes(r);
    return 0;
}

void hf__report_free(struct hf__rp_doc *doc)
{
    for (int i = 0; i < doc->nruns && doc->runs; i++) {
        for (int k = 0; k < doc->runs[i].nrounds && doc->runs[i].rd; k++) {
            free(doc->runs[i].rd[k].share);
            free(doc->runs[i].rd[k].plan);
            free(doc->runs[i].rd[k].left_out);
        }
        free(doc->runs[i].dev);
        free(doc->runs[i].rd);
        free(doc->runs[i].ev);
    }
    free(doc->runs);
    cJSON_Delete(doc->root);
    memset(doc, 0, sizeof *doc);
}

/* Opens `path` for reading only when it is a regular file: a results or
 * config path naming a FIFO would otherwise block open() forever. The type is
 * checked before the (non-blocking) open and again on what was opened. */
static FILE *open_regular(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return NULL;
    int fd = S_ISREG(st.st_mode) ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
        errno = S_ISREG(st.st_mode) ? errno : EINVAL;
        return NULL;
    }
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f)
        close(fd);
    return f;
}

char *hf__report_slurp(const char *path, size_t max, size_t *len)
{
    FILE *f = open_regular(path);
    if (!f)
        return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t want = cap - n - 1;
        if (max && n + want > max)
            want = max - n;
        size_t got = fread(buf + n, 1, want, f);
        n += got;
        if (got < want || (max && n >= max))
            break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            errno = ENOMEM;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = buf && ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

int hf__report_load(const char *file, struct hf__rp_doc *doc)
{
    memset(doc, 0, sizeof *doc);
    doc->file = file;
    size_t len = 0;
    char *text = hf__report_slurp(file, 0, &len);
    if (!text)
        return hf_fail(HF_EIO, "%s: cannot read results: %s", file,
                       errno == EINVAL ? "not a regular file" : strerror(errno));
    int rc = hf__report_parse(file, text, len, doc);
    free(text);
    return rc;
}

int hf__report_parse(const char *file, const char *text, size_t len, struct hf__rp_doc *doc)
{
    memset(doc, 0, sizeof *doc);
    doc->file = file;
    const char *end = NULL;
    doc->root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!doc->root) {
        /* Name the line where the parser gave up: that is where to look. */
        const char *at = cJSON_GetErrorPtr();
        int line = 1;
        if (at && at >= text && at <= text + len)
            for (const char *p = text; p < at; p++)
                line += *p == '\n';
        return hf_fail(HF_EINVAL, "%s:%d: not a results file: invalid JSON", file, line);
    }
    if (!cJSON_IsObject(doc->root))
        return hf_fail(HF_EINVAL, "%s: not a results file: the top level is not an object", file);
    const cJSON *runs, *x;
    int rc = get_arr(file, "top level", doc->root, "runs", &runs);
    if (!rc)
        rc = get_str(file, "top level", doc->root, "hetfarm", OPT, "?", &doc->version);
    if (!rc)
        rc = get_str(file, "top level", doc->root, "config", OPT, NULL, &doc->config);
    if (rc)
        return rc;
    /* results.partial.json (a run across nodes that failed) says why. */
    const cJSON *failed = cJSON_GetObjectItemCaseSensitive(doc->root, "failed");
    if (failed && (rc = not_object(file, "\"failed\"", failed)) == 0)
        rc = get_str(file, "\"failed\"", failed, "message", REQ, NULL, &doc->failed);
    if (rc)
        return rc;
    doc->machine = cJSON_GetObjectItemCaseSensitive(doc->root, "machine");
    if (doc->machine && !cJSON_IsObject(doc->machine))
        return hf_fail(HF_EINVAL, "%s: \"machine\" is not an object", file);
    doc->nruns = cJSON_GetArraySize(runs);
    if (doc->nruns == 0)
        return hf_fail(HF_EINVAL, "%s: \"runs\" is empty: nothing to report", file);
    doc->runs = calloc((size_t)doc->nruns, sizeof *doc->runs);
    if (!doc->runs)
        return hf_fail(HF_ENOMEM, "%s: out of memory", file);
    int i = 0;
    cJSON_ArrayForEach(x, runs)
    {
        if ((rc = load_run(file, i, x, &doc->runs[i])) != 0)
            return rc;
        i++;
    }
    return 0;
}
