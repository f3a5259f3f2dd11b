/* matmul.h - the matmul app's context, shared by its CPU side (matmul.c), its
 * GPU side (matmul_cuda.cu) and its reference (matmul_ref.c).
 *
 * C = A * B, all n x n, row-major, float32 or float64. A load is one GEMM; its
 * units are rows of C, so a chunk is a block of rows and a bundle of contiguous
 * row blocks is one GEMM call of (rows x n) * (n x n).
 */
#ifndef HF_MATMUL_H
#define HF_MATMUL_H

#include "hetfarm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-GPU state is kept by device index, and a GPU's index can be large: the
 * StarPU rows of compare list one device per CPU worker before their GPUs. */
#define HF_MATMUL_MAX_DEVICES 256

struct hf_matmul {
    size_t n;
    size_t elem;          /* 4 (float32) or 8 (float64) */
    uint64_t seed;        /* inputs are drawn from it */
    int rounds;           /* loads still to produce; 0 = no natural end (unused now) */
    void *A, *B, *C;      /* host matrices (A and C pinned by the CUDA side when present) */
    void *gpu[HF_MATMUL_MAX_DEVICES]; /* per-GPU state owned by matmul_cuda.cu, by device index */
};

/* Relative error bound of one element of C against the float64 reference. */
double hf__matmul_tolerance(size_t elem, size_t n);
/* Reference: row i of C computed plainly in float64 into out[0..n-1]. */
void hf__matmul_ref_row(const struct hf_matmul *m, size_t i, double *out);
/* Reference with magnitudes: also mag[j] = sum_k |A_ik * B_kj|, the scale the
 * tolerance is relative to (mag may be NULL). */
void hf__matmul_ref_row_mag(const struct hf_matmul *m, size_t i, double *out, double *mag);

#ifdef HF_HAVE_CUDA
/* GPU side (matmul_cuda.cu): replicate B on every GPU of `devs` and pin A/C. */
int hf__matmul_cuda_setup(struct hf_matmul *m, const struct hf_devices *devs);
/* Runs bundle b (rows [b->begin, b->end)) with cuBLAS on `gpu`. */
int hf__matmul_run_cuda(void *ctx, const struct hf_bundle *b, struct hf_cuda *gpu);
/* Frees what hf__matmul_cuda_setup allocated. */
void hf__matmul_cuda_teardown(struct hf_matmul *m);
#endif

#ifdef __cplusplus
}
#endif
#endif
