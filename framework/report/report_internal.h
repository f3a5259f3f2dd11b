/* report_internal.h - the validated content of a results.json, shared by
 * report_load.c (reading) and report.c (drawing). Private to the framework.
 */
#ifndef HF_REPORT_INTERNAL_H
#define HF_REPORT_INTERNAL_H

#include <cJSON.h>
#include <stddef.h>

/* Bars drawn per Gantt lane before consecutive bundles are merged. */
#define HF__REPORT_MAX_BARS 5000
/* The largest round number accepted (round numbers index small arrays). */
#define HF__REPORT_MAX_ROUND 1000000
/* The most config text shown in the page. */
#define HF__REPORT_MAX_CONFIG (256 * 1024)

/* A device of a run: its own (dev[0 .. ndev)) or, in a run across nodes,
 * one inside a node (dev[ndev .. ndev + ninner): "node1:cpu"). */
struct hf__rp_dev {
    const char *name, *kind;
    int is_gpu;   /* inside a node: whether any of its bundles reported copy times */
    int shares_gpu; /* devices on its one GPU ([devices] cuda = 0,0: 2), 0: its own GPU */
    int node;     /* inside a node: the index of its node device; -1 for the run's own */
    int row;      /* its lane in the Gantt chart, top to bottom: each node's devices under it */
};

struct hf__rp_round {
    int round;
    double makespan, ideal, eff, bound;
    double *share; /* per device, then per device inside a node: the share of the round's
                      work (its share of its node's work times the node's; NaN: not said) */
    double *plan;  /* per device: the scheduler's plan for the next round, NULL if none */
    double stolen; /* chunks stolen, all devices */
    double outliers; /* bundles flagged as outliers, all devices */
    int has_set;     /* the round says which devices took part ("device_set") */
    int probe;       /* ... the full set ran to re-measure devices left out */
    double set_pred, set_full, set_part; /* ... its predicted seconds (NaN: not said) */
    unsigned char *left_out; /* per own device: left out of the round's set (NULL: none) */
};

struct hf__rp_event {
    int round, stolen, outlier;
    int device;   /* index into the run's dev[] (a device inside a node: >= ndev) */
    double first, count, start, end, cin, kern, cout;
};

struct hf__rp_run {
    const char *sched, *app, *engine, *sig, *fault; /* sched: the name, "hass (pass 2)" ... */
    const char *unstarted; /* why configured GPUs were not started ("": all were) */
    char label[64];  /* ... for a run of [compare] passes (its "pass") */
    const char *name; /* the scheduler's name alone */
    int pass;         /* its pass of [compare] passes, 0: not one of several */
    int sim, ndev, nrounds;
    int ninner;   /* devices inside the nodes (run's "node_devices"), after the ndev own ones */
    size_t nev;
    double wall_s;
    struct hf__rp_dev *dev;
    struct hf__rp_round *rd;
    struct hf__rp_event *ev;
};

struct hf__rp_doc {
    const char *file;
    cJSON *root;
    const cJSON *machine;
    const char *version, *config;
    const char *failed; /* results.partial.json: why the run failed ("failed".message), or NULL */
    int nruns;
    struct hf__rp_run *runs;
};

/* Reads and validates the whole results file into *doc (release with
 * hf__report_free, also after a failure). 0, HF_EIO (unreadable), HF_EINVAL
 * (not JSON, or a field missing or mistyped: the message names the file and
 * the field's JSON path) or HF_ENOMEM. */
int hf__report_load(const char *file, struct hf__rp_doc *doc);
/* The same from `len` bytes of text in memory (the fuzz harness's entry);
 * `file` names it in messages and must outlive the document. */
int hf__report_parse(const char *file, const char *text, size_t len, struct hf__rp_doc *doc);
void hf__report_free(struct hf__rp_doc *doc);
/* Draws a validated document as one HTML page into a malloc'd buffer. */
int hf__report_render(const struct hf__rp_doc *doc, char **html, size_t *len);
struct hf__sb; /* svg.h's string builder */
/* gantt.c: the Gantt chart of run `ri`, its time axis `tspan` seconds long. */
int hf__report_gantt(struct hf__sb *b, const struct hf__rp_run *r, int ri, double tspan);
/* report.c: the "SIMULATED" badge of a run's heading (nothing for real runs). */
void hf__report_sim_badge(struct hf__sb *b, const struct hf__rp_run *r);

/* Reads a whole file into a NUL-terminated buffer (at most `max` bytes, 0 =
 * no limit) and sets *len; NULL with errno set on failure. */
char *hf__report_slurp(const char *path, size_t max, size_t *len);

#endif
