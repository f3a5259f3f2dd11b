/* startup_steps.c - what a GPU's start-up costs, step by step, as the CUDA
 * driver (framework/drivers/device_cuda.c) takes those steps in open().
 *
 * DESIGN
 * ------
 * A run's wall clock carries the GPU's start-up: its context (the driver's
 * prewarm, overlapped with reading the input), then open(): three streams,
 * two pinned staging buffers, the shared data's replicas, the arena (most of
 * the free memory in one cudaMalloc) and a cuBLAS handle. This program takes
 * the same steps in the same order on GPU 0 and prints each one's seconds,
 * so that a change to open() is made against measured costs. Replicas are
 * stood in for by one upload of `--replica-mb` MiB from pageable memory.
 *
 *   cc -O2 bench/gpu/startup_steps.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64 \
 *      -lcublas -lcudart -o build/startup_steps && build/startup_steps --replica-mb 16
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double t_last;

static void step(const char *what, cudaError_t e)
{
    double t = now();
    printf("%-34s %8.1f ms%s%s\n", what, 1e3 * (t - t_last), e == cudaSuccess ? "" : "  FAILED: ",
           e == cudaSuccess ? "" : cudaGetErrorString(e));
    t_last = now();
}

int main(int argc, char **argv)
{
    size_t replica_mb = 16;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--replica-mb") == 0)
            replica_mb = (size_t)atol(argv[++i]);
    double t0 = now();
    t_last = t0;
    step("cudaSetDevice + cudaFree(0) (context)", cudaSetDevice(0) ?: cudaFree(0));
    cudaStream_t s[3];
    cudaError_t e = cudaSuccess;
    for (int k = 0; k < 3 && e == cudaSuccess; k++)
        e = cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking);
    step("3 streams", e);
    cudaEvent_t ev[18];
    for (int k = 0; k < 18 && e == cudaSuccess; k++)
        e = cudaEventCreate(&ev[k]);
    step("18 events", e);
    void *stage[2] = {NULL, NULL};
    for (int k = 0; k < 2 && e == cudaSuccess; k++)
        e = cudaHostAlloc(&stage[k], 64u << 20, cudaHostAllocPortable);
    step("2 x 64 MiB cudaHostAlloc (staging)", e);
    size_t bytes = replica_mb << 20;
    char *host = malloc(bytes), *dev = NULL;
    if (!host)
        return 1;
    memset(host, 1, bytes);
    t_last = now();
    e = cudaMalloc((void **)&dev, bytes);
    if (e == cudaSuccess)
        e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    char label[64];
    snprintf(label, sizeof label, "replica: %zu MiB malloc + upload", replica_mb);
    step(label, e);
    e = cudaHostRegister(host, bytes, cudaHostRegisterPortable);
    snprintf(label, sizeof label, "cudaHostRegister %zu MiB", replica_mb);
    step(label, e);
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    size_t reserve = total_b / 4 > (1u << 30) ? total_b / 4 : (1u << 30);
    size_t want = free_b > reserve ? free_b - reserve : (64u << 20);
    void *arena = NULL;
    e = cudaMalloc(&arena, want);
    snprintf(label, sizeof label, "arena cudaMalloc %.1f GiB", (double)want / (1u << 30));
    step(label, e);
    cublasHandle_t h;
    cublasStatus_t st = cublasCreate(&h);
    step("cublasCreate", st == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown);
    printf("%-34s %8.1f ms\n", "total", 1e3 * (now() - t0));
    cublasDestroy(h);
    cudaFree(arena);
    cudaHostUnregister(host);
    cudaFree(dev);
    for (int k = 0; k < 2; k++)
        cudaFreeHost(stage[k]);
    free(host);
    return 0;
}
