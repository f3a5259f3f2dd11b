/* matmul_cuda.cu - the matmul app's GPU side: cuBLAS on row blocks of C.
 *
 * DESIGN
 * ------
 * setup replicates B on every GPU of the run once (a cudaMalloc and a copy per
 * GPU, made current with cudaSetDevice from the main thread) and pins A and C in
 * place with cudaHostRegister, so a piece's rows of A go host -> device and its
 * rows of C come back at full PCIe speed straight from the user's arrays. If
 * pinning fails (locked-memory limits), the rows travel through the slot's
 * pinned staging buffer instead: A's rows are copied in on the host before the
 * upload, and C's rows are copied out by a host function queued on the copy-out
 * stream after the download.
 *
 * run_cuda is called by the CUDA driver once per piece (a block of rows) and only
 * enqueues: H2D of the rows of A on the copy-in stream, one cuBLAS GEMM on the
 * compute stream, D2H of the rows of C on the copy-out stream (see hf_cuda.h).
 * cuBLAS is column-major, and a row-major matrix is its transpose seen
 * column-major, so C_blk = A_blk * B (row-major) is computed as
 * C_blk^T = B^T * A_blk^T (column-major): B is cuBLAS's first operand.
 * Device buffers for the rows come from the driver's arena; when they do not fit
 * the piece fails with HF_EDEVOOM and the driver splits it.
 */
#include "hf_cuda.h"
#include "matmul.h"

#include <stdlib.h>
#include <string.h>

/* A host copy queued on the copy-out stream (staging fallback only). */
struct mm_copy {
    void *dst;
    const void *src;
    size_t bytes;
};

/* What matmul keeps per GPU (in m->gpu[device index]). */
struct mm_gpu {
    int ordinal;
    void *d_B;           /* B replicated on this GPU */
    void *A, *C;         /* the host arrays pinned at setup (NULL: not pinned) */
    struct mm_copy out[2]; /* per slot: pending staging -> C copy */
};

/* Runs on a CUDA runtime thread once the copy-out of a piece has arrived in the
 * staging buffer: moves the rows to C. Must not call CUDA. */
static void CUDART_CB mm_copy_back(void *arg)
{
    const struct mm_copy *c = (const struct mm_copy *)arg;
    memcpy(c->dst, c->src, c->bytes);
}

/* Pins a host array for asynchronous copies from every GPU; returns it, or NULL
 * when the system refuses (the caller falls back to staging). */
static void *mm_pin(void *p, size_t bytes)
{
    if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) == cudaSuccess)
        return p;
    (void)cudaGetLastError();
    return NULL;
}

extern "C" void hf__matmul_cuda_teardown(struct hf_matmul *m)
{
    void *pinned_A = NULL, *pinned_C = NULL;
    for (int i = 0; i < HF_MATMUL_MAX_DEVICES; i++) {
        struct mm_gpu *g = (struct mm_gpu *)m->gpu[i];
        if (!g)
            continue;
        (void)cudaSetDevice(g->ordinal);
        if (g->d_B)
            (void)cudaFree(g->d_B);
        if (g->A)
            pinned_A = g->A;
        if (g->C)
            pinned_C = g->C;
        free(g);
        m->gpu[i] = NULL;
    }
    if (pinned_A)
        (void)cudaHostUnregister(pinned_A);
    if (pinned_C)
        (void)cudaHostUnregister(pinned_C);
    (void)cudaGetLastError();
}

/* Replicates B on every GPU in devs and pins A and C once for all of them. */
extern "C" int hf__matmul_cuda_setup(struct hf_matmul *m, const struct hf_devices *devs)
{
    size_t bytes = m->n * m->n * m->elem;
    int prev = 0, ngpu = 0, rc = 0;
    (void)cudaGetDevice(&prev);
    for (int i = 0; i < devs->count && !rc; i++) {
        const struct hf_device_info *d = &devs->dev[i];
        if (d->kind != HF_DEV_CUDA)
            continue;
        if (d->index < 0 || d->index >= HF_MATMUL_MAX_DEVICES) {
            rc = hf_fail(HF_ERANGE, "matmul: %s: device index %d; GPUs need indices below %d",
                         d->name, d->index, HF_MATMUL_MAX_DEVICES);
            break;
        }
        struct mm_gpu *g = (struct mm_gpu *)calloc(1, sizeof *g);
        if (!g) {
            rc = hf_fail(HF_ENOMEM, "matmul: out of memory");
            break;
        }
        g->ordinal = d->cuda_ordinal;
        m->gpu[d->index] = g;
        ngpu++;
        cudaError_t e = cudaSetDevice(g->ordinal);
        if (e == cudaSuccess)
            e = cudaMalloc(&g->d_B, bytes);
        if (e == cudaSuccess)
            e = cudaMemcpy(g->d_B, m->B, bytes, cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            g->d_B = e == cudaErrorMemoryAllocation ? NULL : g->d_B;
            (void)cudaGetLastError();
            rc = hf_fail(e == cudaErrorMemoryAllocation ? HF_EDEVOOM : HF_EDEVICE,
                         "matmul: %s: cannot replicate B (n=%zu, %.1f MiB): %s", d->name, m->n,
                         (double)bytes / 1048576.0, cudaGetErrorString(e));
        }
    }
    if (!rc && ngpu > 0) {
        void *A = mm_pin(m->A, bytes), *C = mm_pin(m->C, bytes);
        for (int i = 0; i < HF_MATMUL_MAX_DEVICES; i++) {
            struct mm_gpu *g = (struct mm_gpu *)m->gpu[i];
            if (g) {
                g->A = A;
                g->C = C;
            }
        }
    }
    (void)cudaSetDevice(prev);
    return rc;
}

/* Enqueues rows [b->begin, b->end) of C = A * B on `gpu`'s streams. */
extern "C" int hf__matmul_run_cuda(void *ctx, const struct hf_bundle *b, struct hf_cuda *gpu)
{
    struct hf_matmul *m = (struct hf_matmul *)ctx;
    int idx = hf_cuda_device_index(gpu);
    struct mm_gpu *g =
        idx >= 0 && idx < HF_MATMUL_MAX_DEVICES ? (struct mm_gpu *)m->gpu[idx] : NULL;
    if (!g || !g->d_B)
        return hf_fail(HF_EAPP, "matmul: %s: B is not on this GPU (setup did not list device %d)",
                       hf_cuda_name(gpu), idx);
    size_t rows = b->end - b->begin, n = m->n;
    size_t bytes = rows * n * m->elem, off = b->begin * n * m->elem;
    if (rows == 0)
        return 0;

    void *d_A = hf_cuda_arena_alloc(gpu, bytes);
    void *d_C = hf_cuda_arena_alloc(gpu, bytes);
    if (!d_A || !d_C)
        return hf_fail(HF_EDEVOOM, "matmul: %s: %zu rows of A and C (%.1f MiB) do not fit in the "
                       "arena", hf_cuda_name(gpu), rows, 2.0 * (double)bytes / 1048576.0);

    /* Where the rows come from and go to: the pinned arrays, or the staging buffer. */
    const char *h_A = (const char *)m->A + off;
    char *h_C = (char *)m->C + off;
    char *stage = !g->A || !g->C ? (char *)hf_cuda_staging(gpu, 2 * bytes) : NULL;
    int staged_A = !g->A && stage;
    int staged_C = !g->C && stage;
    if ((!g->A || !g->C) && !stage && rows > 1)
        return hf_fail(HF_EDEVOOM, "matmul: %s: %zu rows do not fit the staging buffer",
                       hf_cuda_name(gpu), rows);
    if (staged_A) {
        memcpy(stage, h_A, bytes); /* the driver guarantees this slot is idle */
        h_A = stage;
    }

    int rc;
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_COPY_IN);
    if ((rc = hf_cuda_check(gpu, cudaMemcpyAsync(d_A, h_A, bytes, cudaMemcpyHostToDevice, s),
                            "matmul: copy A in")))
        return rc;

    cublasHandle_t h = hf_cuda_cublas(gpu);
    if (!h)
        return HF_EDEVICE; /* hf_cuda_cublas recorded why */
    (void)hf_cuda_phase(gpu, HF_CUDA_KERNEL); /* the handle is bound to the compute stream */
    int N = (int)n, M = (int)rows;
    if (m->elem == 4) {
        const float one = 1.0f, zero = 0.0f;
        rc = hf_cuda_check_cublas(gpu, cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, N, &one,
                                                   (const float *)g->d_B, N, (const float *)d_A,
                                                   N, &zero, (float *)d_C, N),
                                  "matmul: cublasSgemm");
    } else {
        const double one = 1.0, zero = 0.0;
        rc = hf_cuda_check_cublas(gpu, cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, N, &one,
                                                   (const double *)g->d_B, N, (const double *)d_A,
                                                   N, &zero, (double *)d_C, N),
                                  "matmul: cublasDgemm");
    }
    if (rc)
        return rc;

    s = hf_cuda_phase(gpu, HF_CUDA_COPY_OUT);
    char *dst = staged_C ? stage + bytes : h_C;
    if ((rc = hf_cuda_check(gpu, cudaMemcpyAsync(dst, d_C, bytes, cudaMemcpyDeviceToHost, s),
                            "matmul: copy C out")))
        return rc;
    if (staged_C) {
        struct mm_copy *c = &g->out[hf_cuda_slot(gpu)];
        c->dst = h_C;
        c->src = stage + bytes;
        c->bytes = bytes;
        rc = hf_cuda_check(gpu, cudaLaunchHostFunc(s, mm_copy_back, c), "matmul: copy C back");
    }
    return rc;
}
