/* shared_cuda.h - a GPU's copies of an app's shared data (shared_cuda.c, with
 * its kernels in shared_kernels.cu). Internal to drivers/; the app's view
 * is hf_cuda_shared() and hf_cuda_shared_recorder() in hf_cuda.h.
 */
#ifndef HF_SHARED_CUDA_H
#define HF_SHARED_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "hf_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hf__cuda_shared;

/* Allocates a replica of every shared array on the current GPU and uploads
 * the host values (and, for MIN/MAX/OR arrays, an empty change recorder).
 * Called from the driver's open, before the arena takes the rest. */
int hf__cuda_shared_open(struct hf_cuda *gpu, const struct hf_shared *arr, int n,
                         struct hf__cuda_shared **out);
void hf__cuda_shared_close(struct hf__cuda_shared *sh);
/* Before a bundle runs: clears the recorders whose changes the host took. */
int hf__cuda_shared_bundle_start(struct hf_cuda *gpu, struct hf__cuda_shared *sh);
/* After a piece's kernels, on the copy-out stream `st`: enqueues the copy of
 * its unit range of every OWNED array back to the host (pinned), so that it
 * overlaps the next pieces' kernels. */
int hf__cuda_shared_piece_out(struct hf_cuda *gpu, struct hf__cuda_shared *sh,
                              const struct hf_bundle *piece, cudaStream_t st);
/* After a bundle ran (its pieces all done): brings the changes it recorded
 * to the pinned host buffers. */
int hf__cuda_shared_bundle_done(struct hf_cuda *gpu, struct hf__cuda_shared *sh);
/* The driver ops of device.h (shared_pull, shared_push). */
long hf__cuda_shared_pull(struct hf_cuda *gpu, struct hf__cuda_shared *sh, int s,
                          const uint32_t **idx, const void **vals);
int hf__cuda_shared_push(struct hf_cuda *gpu, struct hf__cuda_shared *sh, int s,
                         const uint32_t *idx, const void *vals, size_t n, size_t first);
/* The whole replica of array s over the host copy (device.h, shared_fetch). */
int hf__cuda_shared_fetch(struct hf_cuda *gpu, struct hf__cuda_shared *sh, int s);
/* device_cuda.c: the GPU's shared-data state (NULL before open). */
struct hf__cuda_shared *hf__cuda_shared_of(struct hf_cuda *gpu);

/* shared_kernels.cu: launchers on `s` (elem is 1, 4 or 8 bytes). */
/* gather counts in *d_bad the indices of count or more, and skips them. */
cudaError_t hf__cuda_gather(void *d_out, const void *d_src, const uint32_t *d_idx, size_t n,
                            size_t elem, size_t count, unsigned long long *d_bad, cudaStream_t s);
cudaError_t hf__cuda_scatter(void *d_dst, const uint32_t *d_idx, const void *d_vals, size_t n,
                             size_t elem, cudaStream_t s);
cudaError_t hf__cuda_clear_bits(uint32_t *d_bits, const uint32_t *d_list, size_t n,
                                size_t count, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
