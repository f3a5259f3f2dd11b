/* files.h - atomic file writes, shared by everything that writes a file
 * (profiles, results, traces, the report).
 */
#ifndef HF_FILES_H
#define HF_FILES_H

#include <stddef.h>

/* Creates `dir` and its missing parents (mode 0777 & ~umask). 0 or HF_EIO. */
int hf__mkdir_p(const char *dir);

/* Writes `len` bytes to `path` atomically: a temporary file in the same
 * directory, fsync, then rename, so a reader sees the old file or the whole
 * new one and a failure leaves nothing behind. `what` names the file in
 * messages ("results", "trace"). 0, or HF_EIO with hf_fail details. */
int hf__write_atomic(const char *path, const char *data, size_t len, const char *what);


#endif
