/* progress.h - a one-line progress display on stderr for long runs.
 *
 * Drawn only when stderr is a terminal and at most ~10 times a second, so the
 * engine may call hf__progress() after every bundle. Logs and pipes get nothing.
 */
#ifndef HF_PROGRESS_H
#define HF_PROGRESS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Shows "label  round r/n  xx.x%  elapsed, ~ETA left" (`round` is 0-based). `done` and
 * `total` count the work (chunks, units) of the whole run; elapsed_s is since
 * the run began. Thread-safe. */
void hf__progress(const char *label, int round, int nrounds, size_t done, size_t total,
                  double elapsed_s);
/* Clears the line if one was drawn (call before printing anything else). */
void hf__progress_end(void);

#ifdef __cplusplus
}
#endif
#endif
