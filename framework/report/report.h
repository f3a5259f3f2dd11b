/* report.h - what a finished run becomes: results.json and the table
 * (results.c), a Chrome trace (trace.c), and the HTML report drawn from a
 * results.json (report.c, `hetfarm report`). */
#ifndef HF_REPORT_H
#define HF_REPORT_H

#include <stddef.h>

#include "core/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes results.json for one or more runs atomically (temporary
 * file, then rename), with the machine description and the config path. */
int hf_results_write(const char *path, struct hf_run *const *runs, int nruns, hf_config_t cfg);
/* What ended a run across nodes early: results.partial.json's "failed". */
struct hf_results_failure {
    const char *scheduler, *engine; /* the run that failed */
    int rank;             /* the rank it waited for in vain (hung, died); -1: unknown */
    int signal;           /* the signal that ended rank 0's waits (mpirun ends the job
                             with SIGTERM when a rank dies); 0: none */
    const char *message;  /* the failure as printed */
    int rounds_completed; /* its rounds in the file (0: the failed run is not there) */
};
/* Writes results.partial.json (atomically): the document of
 * hf_results_write for the runs given (those that finished, then what the
 * failed one finished), with a top-level "failed" object from `why`. */
int hf_results_write_partial(const char *path, struct hf_run *const *runs, int nruns,
                             hf_config_t cfg, const struct hf_results_failure *why);
/* Prints the comparison table, one row per run, to `file` (FILE*). */
void hf_results_table(void *file, struct hf_run *const *runs, int nruns);

/* The round from which a run's plan stopped moving: the first round whose
 * planned shares are within 1% (relative; absolute below a 0.1% share) of the
 * previous round's, and stay so for the rest of the run. plans[i] is round i's
 * plan of ndev shares, or NULL when the scheduler made none. Returns -1 when
 * fewer than two rounds have a plan, -2 when the plan never settled. Used by
 * the CLI table and the HTML report alike. */
int hf_plan_stable_round(const double *const *plans, const int *rounds, int nrounds, int ndev);

/* One run as the summary over [compare] passes sees it. */
struct hf_pass_run {
    const char *name, *engine; /* its scheduler and engine */
    double mean;               /* its mean makespan from round 2 */
    double eff;                /* its mean efficiency there (NaN: none) */
};
/* One scheduler on one engine over its runs of [compare] passes. */
struct hf_pass_group {
    int first;               /* the index of its first run */
    int n;                   /* its runs */
    double mean, least, most; /* of the runs' mean makespans from round 2 */
    double eff;              /* the mean of the runs' mean efficiencies (NaN: none) */
    int neff;                /* the runs with an efficiency */
};
/* Groups runs by scheduler and engine, in the order of their first runs.
 * Writes one group per pair to out (room for nruns) and returns how many.
 * Used by the CLI table and the HTML report alike. */
int hf_pass_groups(const struct hf_pass_run *runs, int nruns, struct hf_pass_group *out);

/* Writes Chrome trace-event JSON (Perfetto, chrome://tracing). */
int hf_trace_write(const char *path, struct hf_run *const *runs, int nruns);

/* Reads the results.json at `results_json_path` (as written by
 * hf_results_write) and writes one self-contained HTML file to `html_path`:
 * inline SVG and CSS only, nothing fetched, no scripts. It holds a summary
 * table, a Gantt chart per run, each device's share of the work per round,
 * makespan against the ideal and efficiency per round, and the machine and
 * config. The file is written atomically (temporary name, then rename).
 * Returns 0; HF_EIO when a file cannot be read or written, HF_EINVAL when
 * the input is not JSON or lacks a field (the hf_fail message names the file
 * and the field, e.g. "r.json: runs[0].events[3]: missing number \"end_s\"");
 * on failure nothing is written. */
int hf_report_write(const char *results_json_path, const char *html_path);

/* The default report path for a results file: "report.html" in the same
 * directory ("out/results.json" -> "out/report.html", "r.json" ->
 * "report.html"). Returns 0, or HF_EINVAL if it does not fit in `size` bytes. */
int hf_report_default_path(const char *results_json_path, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
