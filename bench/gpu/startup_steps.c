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
 * The close is timed step by step too (close() takes the same steps), and
 * two modes measure what a run pays for a GPU it never waits for:
 * `--abandon-ms N` starts the context on a thread, returns from main after
 * N ms without joining it, `--no-close` opens everything and returns from
 * main without closing (the runtime's exit handlers tear the context down),
 * and `--quick-exit` opens everything and ends with _exit(), skipping those
 * handlers; time the process from outside (its exit is the cost).
 *
 *   cc -O2 bench/gpu/startup_steps.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64 \
 *      -lcublas -lcudart -lpthread -o build/startup_steps && build/startup_steps --replica-mb 16
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

static void *context_thread(void *arg)
{
    (void)arg;
    step("context on a thread", cudaSetDevice(0) ?: cudaFree(0));
    return NULL;
}

int main(int argc, char **argv)
{
    size_t replica_mb = 16;
    int abandon_ms = -1, no_close = 0, quick_exit = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--replica-mb") == 0 && i + 1 < argc)
            replica_mb = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--abandon-ms") == 0 && i + 1 < argc)
            abandon_ms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--no-close") == 0)
            no_close = 1;
        else if (strcmp(argv[i], "--quick-exit") == 0)
            quick_exit = 1;
    double t0 = now();
    t_last = t0;
    if (abandon_ms >= 0) {
        pthread_t t;
        pthread_create(&t, NULL, context_thread, NULL);
        struct timespec ts = {abandon_ms / 1000, (long)(abandon_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        printf("returning from main after %d ms, context not joined\n", abandon_ms);
        fflush(stdout);
        return 0;
    }
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
    fflush(stdout);
    if (quick_exit)
        _exit(0);
    if (no_close)
        return 0;
    t0 = t_last = now();
    step("cublasDestroy", cudaSuccess + (cublasDestroy(h) != CUBLAS_STATUS_SUCCESS));
    step("arena cudaFree", cudaFree(arena));
    step("cudaHostUnregister", cudaHostUnregister(host));
    step("replica cudaFree", cudaFree(dev));
    e = cudaSuccess;
    for (int k = 0; k < 2; k++)
        e = cudaFreeHost(stage[k]) ?: e;
    step("2 x cudaFreeHost (staging)", e);
    for (int k = 0; k < 3; k++)
        e = cudaStreamDestroy(s[k]) ?: e;
    step("3 stream destroys", e);
    printf("%-34s %8.1f ms\n", "close total", 1e3 * (now() - t0));
    fflush(stdout);
    free(host);
    return 0;
}
