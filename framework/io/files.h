/* cli.h - small internal helpers shared by the CLI side of the framework
 * (profiles, results, traces, the progress line): atomic file writes.
 */
#ifndef HF_CLI_H
#define HF_CLI_H

#include <stddef.h>

/* Creates `dir` and its missing parents (mode 0777 & ~umask). 0 or HF_EIO. */
int hf__mkdir_p(const char *dir);

/* Writes `len` bytes to `path` atomically: a temporary file in the same
 * directory, fsync, then rename, so a reader sees the old file or the whole
 * new one and a failure leaves nothing behind. `what` names the file in
 * messages ("results", "trace"). 0, or HF_EIO with hf_fail details. */
int hf__write_atomic(const char *path, const char *data, size_t len, const char *what);

/* The CUDA driver's description of the GPUs (framework/device_cuda.c,
 * declared in hf_cuda.h); used by `hetfarm devices` and results.json. */
#ifdef HF_HAVE_CUDA
#if __has_include("hf_cuda.h")
#include "hf_cuda.h"
#else
int hf_cuda_device_count(void);
int hf_cuda_describe(int ordinal, char *name, size_t nlen, char *busid, size_t blen,
                     size_t *mem_bytes);
#endif
#endif

#endif
