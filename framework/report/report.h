/* report.h - the HTML report drawn from a results.json (`hetfarm report`). */
#ifndef HF_REPORT_H
#define HF_REPORT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

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
