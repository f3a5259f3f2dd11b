/* hf_cuda.h - the CUDA side of hetfarm: GPU discovery and what an app's
 * run_cuda sees of one GPU (`struct hf_cuda`). Plain C (no C++), included by
 * .c files and by .cu files alike; available only in builds with HF_HAVE_CUDA.
 *
 * HOW A BUNDLE RUNS ON A GPU (framework/drivers/device_cuda.c)
 *
 * The driver cuts a bundle into pieces along chunk boundaries (each piece is a
 * `struct hf_bundle` covering a sub-range of the bundle's chunks and units) and
 * calls the app's run_cuda(ctx, piece, gpu) once per piece, from the GPU's own
 * host thread, with the device already current (cudaSetDevice). run_cuda only
 * ENQUEUES work and returns at once; the driver owns every event and every
 * synchronisation. Pieces alternate between two slots; each slot has its own
 * pinned host staging buffer and its own half of the device arena, and the
 * driver calls run_cuda for a slot only after that slot's previous piece has
 * finished, so the app may overwrite the slot's buffers freely.
 *
 * Inside run_cuda the app goes through three phases in order, asking for each
 * phase's stream with hf_cuda_phase():
 *
 *     char *d_in  = hf_cuda_arena_alloc(gpu, in_bytes);     // NULL: does not fit
 *     char *d_out = hf_cuda_arena_alloc(gpu, out_bytes);
 *     if (!d_in || !d_out)
 *         return hf_fail(HF_EDEVOOM, "...");                // the driver splits the piece
 *     cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_COPY_IN);
 *     rc = hf_cuda_check(gpu, cudaMemcpyAsync(d_in, h_in, in_bytes, cudaMemcpyHostToDevice, s),
 *                        "copy in");
 *     s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);               // waits for the copy-in
 *     my_kernel_launcher(d_in, d_out, s);                   // or cuBLAS: hf_cuda_cublas(gpu)
 *     s = hf_cuda_phase(gpu, HF_CUDA_COPY_OUT);             // waits for the kernel
 *     rc = hf_cuda_check(gpu, cudaMemcpyAsync(h_out, d_out, out_bytes, cudaMemcpyDeviceToHost, s),
 *                        "copy out");
 *     return rc;
 *
 * Each phase has its own stream (copy-in, compute, copy-out), so the copy-in of
 * piece i+1 runs while the kernel of piece i computes and the copy-out of piece
 * i-1 drains: the classic three-stage pipeline. The driver times each phase with
 * CUDA events and reports the sums in struct hf_bundle_times. Host pointers given
 * to cudaMemcpyAsync must be pinned (arrays from hf_host_alloc, see hetfarm.h,
 * or the slot's staging buffer) for the copies to be asynchronous.
 *
 * Errors: run_cuda returns 0 or an HF_E* code. HF_EDEVOOM (from a full arena, or
 * cudaErrorMemoryAllocation mapped by hf_cuda_check) makes the driver wait for
 * the pipeline, halve the piece and call run_cuda again for the smaller piece,
 * so a piece may be run more than once and must write only its own outputs. Any
 * other error fails the bundle with HF_EDEVICE / HF_EAPP, and the engine retires
 * the GPU and gives its chunks to the other devices.
 */
#ifndef HF_CUDA_H
#define HF_CUDA_H

#include <stddef.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "device.h" /* hf_cuda_device_count, hf_cuda_describe */
#include "hetfarm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hf_device;

/* ------------------------------------------------------------------------ */
/* The app's view of one opened GPU, valid inside run_cuda.                   */

/* The three phases of a piece, in the order the app must enter them. */
enum hf_cuda_phase {
    HF_CUDA_COPY_IN = 0, /* host -> device copies, on the copy-in stream */
    HF_CUDA_KERNEL = 1,  /* kernels and library calls, on the compute stream */
    HF_CUDA_COPY_OUT = 2 /* device -> host copies, on the copy-out stream */
};

/* Enters phase `p` (never backwards; entering the current phase again just
 * returns its stream) and returns its stream. The new phase's stream waits for
 * everything the earlier phases of this piece enqueued. */
cudaStream_t hf_cuda_phase(struct hf_cuda *gpu, enum hf_cuda_phase p);

/* The raw streams, for apps that order their work themselves with events. */
cudaStream_t hf_cuda_copy_in_stream(struct hf_cuda *gpu);
cudaStream_t hf_cuda_compute_stream(struct hf_cuda *gpu);
cudaStream_t hf_cuda_copy_out_stream(struct hf_cuda *gpu);

/* The GPU's cuBLAS handle, bound to the compute stream. For an app that sets
 * struct hf_app.cublas the driver creates it when the GPU is opened (so its
 * start-up cost, the library's opening included, stays out of timed
 * bundles), and on first use otherwise or if that failed; NULL (with
 * hf_fail details) when cuBLAS cannot be opened or initialised. hetfarm
 * forwards the cuBLAS functions it calls to the library it opens on first
 * use (drivers/cublas_cuda.c, where an app's further cuBLAS calls are
 * added). */
cublasHandle_t hf_cuda_cublas(struct hf_cuda *gpu);

/* The CUDA ordinal of this GPU and its index in the run's device list
 * (struct hf_device_info.index, the index apps use for per-GPU state). */
int hf_cuda_ordinal(const struct hf_cuda *gpu);
int hf_cuda_device_index(const struct hf_cuda *gpu);
/* The device's name ("cuda0") for messages. */
const char *hf_cuda_name(const struct hf_cuda *gpu);

/* Region allocator: device memory allocated once when the GPU is opened, split
 * in two halves (one per slot). Returns `bytes` of device memory (aligned to
 * 256 bytes) from the current slot's half, or NULL when it does not fit. The
 * driver resets the half before each piece; memory never outlives a piece. */
void *hf_cuda_arena_alloc(struct hf_cuda *gpu, size_t bytes);
/* Bytes still free in the current slot's half. */
size_t hf_cuda_arena_free(const struct hf_cuda *gpu);
/* Frees everything allocated from the current slot's half (the driver does it
 * before each piece; apps rarely need it). */
void hf_cuda_arena_reset(struct hf_cuda *gpu);

/* The current slot (0 or 1) and its pinned host staging buffer, allocated once
 * when the GPU is opened (HF_CUDA_STAGING_MB, default 64): the buffer when it
 * holds `bytes`, else NULL. Apps whose host data is not pinned copy through it
 * (and may use cudaLaunchHostFunc on the copy-out stream to move results out
 * of it once they have arrived). */
int hf_cuda_slot(const struct hf_cuda *gpu);
void *hf_cuda_staging(struct hf_cuda *gpu, size_t bytes);

/* A per-GPU pointer owned by the app (e.g. its replicated read-only inputs),
 * NULL until the app stores something there; the driver never frees it. */
void **hf_cuda_app_slot(struct hf_cuda *gpu);

/* Shared data (hetfarm.h, "Shared data"): the device copy of shared array s,
 * uploaded when the GPU was opened and kept current by the framework between
 * rounds. NULL when s is out of range. */
void *hf_cuda_shared(struct hf_cuda *gpu, int s);

/* The change recorder of a HF_SHARED_MIN/MAX/OR array on this GPU: a kernel
 * that changes element i calls hf_cuda_shared_record(rec, i) (below), and the
 * framework merges the recorded elements at the round's end. */
struct hf_cuda_recorder {
    unsigned int *bits;             /* one bit per element: recorded this round */
    unsigned int *list;             /* the recorded element indices */
    unsigned long long *count;      /* how many are in list */
};
struct hf_cuda_recorder hf_cuda_shared_recorder(struct hf_cuda *gpu, int s);

/* Maps a CUDA / cuBLAS status to 0, HF_EDEVOOM (allocation failures) or
 * HF_EDEVICE, recording with hf_fail a message that names the GPU, `what`,
 * the CUDA error string and the chunk range of the current piece. */
int hf_cuda_check(struct hf_cuda *gpu, cudaError_t err, const char *what);
int hf_cuda_check_cublas(struct hf_cuda *gpu, cublasStatus_t st, const char *what);

/* ------------------------------------------------------------------------ */
/* Driver side (framework/drivers/device_cuda.c): hf_driver_cuda in device.h.  */

/* The view of an opened CUDA device (between open and close), or NULL. Used by
 * tests to exercise the arena outside a run. */
struct hf_cuda *hf_cuda_of(struct hf_device *dev);

/* Pipelining knobs of an opened GPU: split bundles into about `pieces` pieces
 * (1 = no pipelining), but no piece smaller than `min_piece_bytes` of host<->GPU
 * traffic. Defaults: HF_CUDA_PIECES (8) and HF_CUDA_MIN_PIECE_MB (8) from the
 * environment. Sizes of the arena and the staging buffers are read when the GPU
 * is opened: HF_CUDA_ARENA_MB (default: free memory minus a quarter of the
 * total, so that apps can still replicate inputs and cuBLAS has its workspace)
 * and HF_CUDA_STAGING_MB (64 per slot). */
void hf_cuda_set_pieces(struct hf_cuda *gpu, int pieces, size_t min_piece_bytes);

/* Statistics of the last bundle: pieces run and OOM splits made. */
void hf_cuda_last_bundle_stats(const struct hf_cuda *gpu, int *pieces, int *splits);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cooperative_groups.h>
/* Device side of the recorder: the first thread to change element i appends
 * it to the list (later ones find its bit set), so the list holds each
 * changed element once. The threads of a warp that append together take
 * their slots with ONE atomic add (warp-aggregated), since a BFS level may
 * append millions of vertices to one counter. Call it after the change is
 * written. */
static __device__ __forceinline__ void hf_cuda_shared_record_claimed(struct hf_cuda_recorder rec,
                                                                     unsigned int i);
static __device__ __forceinline__ void hf_cuda_shared_record(struct hf_cuda_recorder rec,
                                                             unsigned int i)
{
    unsigned int bit = 1u << (i & 31u);
    if (rec.bits[i >> 5] & bit || atomicOr(&rec.bits[i >> 5], bit) & bit)
        return;
    hf_cuda_shared_record_claimed(rec, i);
}

/* The same for an element that only this thread can change in this bundle
 * (it claimed it with a compare-and-swap of its own, as BFS claims a vertex
 * from "unseen"): appended without the bit, one dependent atomic less, which
 * is a tenth of a road BFS level on the GPU. */
static __device__ __forceinline__ void hf_cuda_shared_record_claimed(struct hf_cuda_recorder rec,
                                                                     unsigned int i)
{
    cooperative_groups::coalesced_group g = cooperative_groups::coalesced_threads();
    unsigned long long base = 0;
    if (g.thread_rank() == 0)
        base = atomicAdd(rec.count, (unsigned long long)g.size());
    base = g.shfl(base, 0);
    rec.list[base + g.thread_rank()] = i;
}
#endif
#endif
