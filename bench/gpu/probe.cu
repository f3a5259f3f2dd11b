/* probe.cu - the raw numbers hetfarm's GPU path is compared with.
 *
 * DESIGN
 * ------
 * For each GPU (all, or those named by --gpus 0,1) this measures, with CUDA
 * events and no hetfarm code at all:
 *   - cuBLAS SGEMM (and DGEMM) TFLOP/s on device-resident n x n matrices of
 *     uniform random values (zeros would run faster than real data);
 *   - the same SGEMM end to end: rows of A host -> device, the GEMM with B
 *     resident, C device -> host, one after the other on one stream from pinned
 *     host memory (what a non-pipelined offload costs);
 *   - pinned host <-> device copy bandwidth for 256 MiB .. 1 GiB buffers, each
 *     direction alone and both at once (the pipeline overlaps them).
 * Every figure is the best and the median of a few repetitions after a warm-up.
 * The results go to a JSON file (written to a temporary name, then renamed) that
 * bench/gpu/run.sh keeps next to hetfarm's own results.
 *
 * usage: gpu-probe OUT.json [--gpus all|0,1] [--sizes 16384,32768] [--quick]
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#define CK(call)                                                                   \
    do {                                                                           \
        cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess) {                                                   \
            fprintf(stderr, "gpu-probe: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                    cudaGetErrorString(e_));                                       \
            exit(1);                                                               \
        }                                                                          \
    } while (0)
#define CKB(call)                                                                  \
    do {                                                                           \
        cublasStatus_t s_ = (call);                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                         \
            fprintf(stderr, "gpu-probe: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                    cublasGetStatusString(s_));                                    \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* Fills x[0..n) with uniform values in [-1, 1] from a counter hash. */
template <typename T> static __global__ void fill(T *x, size_t n, unsigned long long seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = (i + seed) * 0x9e3779b97f4a7c15ull;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        x[i] = (T)((double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    }
}

struct stat2 {
    double best, median;
};

/* Best (smallest) and median of a list of times. */
static stat2 summarize(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return {v.front(), v[v.size() / 2]};
}

/* Times `reps` calls of f on stream s (after one warm-up); seconds each. */
template <typename F> static std::vector<double> time_reps(cudaStream_t s, int reps, F f)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    f();
    CK(cudaStreamSynchronize(s));
    std::vector<double> out;
    for (int r = 0; r < reps; r++) {
        CK(cudaEventRecord(a, s));
        f();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        out.push_back(ms / 1e3);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return out;
}

static void probe_gpu(int dev, const std::vector<size_t> &sizes, bool quick, std::string &js)
{
    CK(cudaSetDevice(dev));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, dev));
    char bus[32] = "";
    CK(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
    size_t freeb, totalb;
    CK(cudaMemGetInfo(&freeb, &totalb));
    cudaStream_t s, s2;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    cublasHandle_t h;
    CKB(cublasCreate(&h));
    CKB(cublasSetStream(h, s));
    char buf[512];
    snprintf(buf, sizeof buf,
             "{\"ordinal\": %d, \"name\": \"%s\", \"busid\": \"%s\", \"mem_bytes\": %zu, "
             "\"sm_count\": %d, \"cc\": \"%d.%d\"",
             dev, p.name, bus, totalb, p.multiProcessorCount, p.major, p.minor);
    js += buf;
    fprintf(stderr, "gpu-probe: GPU %d %s (%s)\n", dev, p.name, bus);

    size_t nmax = *std::max_element(sizes.begin(), sizes.end());
    size_t hbytes = std::max(nmax * nmax * sizeof(float), (size_t)1 << 30);
    char *hA, *hC;
    CK(cudaHostAlloc((void **)&hA, hbytes, cudaHostAllocPortable));
    CK(cudaHostAlloc((void **)&hC, hbytes, cudaHostAllocPortable));
    memset(hA, 0, hbytes); /* touch every page so the first copy is not penalised */
    memset(hC, 0, hbytes);

    std::string sg = ", \"sgemm\": [", e2e = ", \"sgemm_end_to_end\": [", dg = ", \"dgemm\": [";
    for (size_t si = 0; si < sizes.size(); si++) {
        size_t n = sizes[si], nn = n * n;
        int N = (int)n, reps = quick ? 2 : (n > 16384 ? 3 : 5);
        float *dA, *dB, *dC;
        CK(cudaMalloc(&dA, nn * 4));
        CK(cudaMalloc(&dB, nn * 4));
        CK(cudaMalloc(&dC, nn * 4));
        fill<float><<<1024, 256, 0, s>>>(dA, nn, 1);
        fill<float><<<1024, 256, 0, s>>>(dB, nn, 2);
        CK(cudaGetLastError());
        const float one = 1, zero = 0;
        auto gemm = [&]() {
            CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, dB, N, dA, N, &zero, dC, N));
        };
        double flop = 2.0 * (double)n * n * n;
        stat2 t = summarize(time_reps(s, reps, gemm));
        snprintf(buf, sizeof buf, "%s{\"n\": %zu, \"tflops_best\": %.2f, \"tflops_median\": %.2f, "
                 "\"s_best\": %.5f, \"reps\": %d}", si ? ", " : "", n, flop / t.best / 1e12,
                 flop / t.median / 1e12, t.best, reps);
        sg += buf;
        fprintf(stderr, "  sgemm n=%zu: %.1f TFLOP/s\n", n, flop / t.best / 1e12);

        /* End to end: A in, GEMM, C out, serialised on one stream. */
        CK(cudaMemcpy(hA, dA, nn * 4, cudaMemcpyDeviceToHost));
        auto offload = [&]() {
            CK(cudaMemcpyAsync(dA, hA, nn * 4, cudaMemcpyHostToDevice, s));
            gemm();
            CK(cudaMemcpyAsync(hC, dC, nn * 4, cudaMemcpyDeviceToHost, s));
        };
        stat2 te = summarize(time_reps(s, quick ? 1 : 2, offload));
        snprintf(buf, sizeof buf, "%s{\"n\": %zu, \"tflops_best\": %.2f, \"s_best\": %.5f}",
                 si ? ", " : "", n, flop / te.best / 1e12, te.best);
        e2e += buf;
        fprintf(stderr, "  sgemm n=%zu end to end: %.1f TFLOP/s\n", n, flop / te.best / 1e12);
        CK(cudaFree(dA));
        CK(cudaFree(dB));
        CK(cudaFree(dC));

        if (si == 0) { /* DGEMM at the first size only: for the float64 configs */
            double *eA, *eB, *eC;
            CK(cudaMalloc(&eA, nn * 8));
            CK(cudaMalloc(&eB, nn * 8));
            CK(cudaMalloc(&eC, nn * 8));
            fill<double><<<1024, 256, 0, s>>>(eA, nn, 3);
            fill<double><<<1024, 256, 0, s>>>(eB, nn, 4);
            CK(cudaGetLastError());
            const double d1 = 1, d0 = 0;
            stat2 td = summarize(time_reps(s, quick ? 1 : 3, [&]() {
                CKB(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &d1, eB, N, eA, N, &d0, eC,
                                N));
            }));
            snprintf(buf, sizeof buf, "{\"n\": %zu, \"tflops_best\": %.2f, \"s_best\": %.5f}", n,
                     flop / td.best / 1e12, td.best);
            dg += buf;
            fprintf(stderr, "  dgemm n=%zu: %.1f TFLOP/s\n", n, flop / td.best / 1e12);
            CK(cudaFree(eA));
            CK(cudaFree(eB));
            CK(cudaFree(eC));
        }
    }
    js += sg + "]" + e2e + "]" + dg + "]";

    /* Pinned copy bandwidth, each direction alone, then both at once. */
    char *d1, *d2;
    size_t cmax = (size_t)1 << 30;
    CK(cudaMalloc(&d1, cmax));
    CK(cudaMalloc(&d2, cmax));
    js += ", \"copy\": [";
    int creps = quick ? 2 : 5;
    for (size_t b = cmax / 4, i = 0; b <= cmax; b *= 2, i++) {
        stat2 h2d = summarize(time_reps(s, creps, [&]() {
            CK(cudaMemcpyAsync(d1, hA, b, cudaMemcpyHostToDevice, s));
        }));
        stat2 d2h = summarize(time_reps(s, creps, [&]() {
            CK(cudaMemcpyAsync(hC, d1, b, cudaMemcpyDeviceToHost, s));
        }));
        /* Both directions at once: s2 joins s through events so one timer covers both. */
        cudaEvent_t fork, join;
        CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
        stat2 bi = summarize(time_reps(s, creps, [&]() {
            CK(cudaEventRecord(fork, s));
            CK(cudaStreamWaitEvent(s2, fork, 0));
            CK(cudaMemcpyAsync(d1, hA, b, cudaMemcpyHostToDevice, s));
            CK(cudaMemcpyAsync(hC, d2, b, cudaMemcpyDeviceToHost, s2));
            CK(cudaEventRecord(join, s2));
            CK(cudaStreamWaitEvent(s, join, 0));
        }));
        CK(cudaEventDestroy(fork));
        CK(cudaEventDestroy(join));
        double gb = (double)b / 1e9;
        snprintf(buf, sizeof buf, "%s{\"bytes\": %zu, \"h2d_gbs_best\": %.2f, \"h2d_gbs_median\": "
                 "%.2f, \"d2h_gbs_best\": %.2f, \"d2h_gbs_median\": %.2f, "
                 "\"bidir_total_gbs_best\": %.2f}", i ? ", " : "", b, gb / h2d.best,
                 gb / h2d.median, gb / d2h.best, gb / d2h.median, 2 * gb / bi.best);
        js += buf;
        fprintf(stderr, "  copy %zu MiB: H2D %.1f GB/s, D2H %.1f GB/s, both %.1f GB/s\n",
                b >> 20, gb / h2d.best, gb / d2h.best, 2 * gb / bi.best);
    }
    js += "]}";
    CK(cudaFree(d1));
    CK(cudaFree(d2));
    CK(cudaFreeHost(hA));
    CK(cudaFreeHost(hC));
    CKB(cublasDestroy(h));
    CK(cudaStreamDestroy(s));
    CK(cudaStreamDestroy(s2));
}

/* Parses "a,b,c" into numbers; exits on garbage. */
static std::vector<size_t> parse_list(const char *s, const char *what)
{
    std::vector<size_t> v;
    while (*s) {
        char *end;
        unsigned long long x = strtoull(s, &end, 10);
        if (end == s || (*end && *end != ',')) {
            fprintf(stderr, "gpu-probe: %s = %s: expected numbers separated by commas\n", what, s);
            exit(2);
        }
        v.push_back((size_t)x);
        s = *end ? end + 1 : end;
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: gpu-probe OUT.json [--gpus all|0,1] [--sizes 16384,32768] [--quick]\n");
        return 2;
    }
    const char *out = argv[1], *gpus = "all";
    std::vector<size_t> sizes = {16384, 32768};
    bool quick = false;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--gpus") && i + 1 < argc)
            gpus = argv[++i];
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            sizes = parse_list(argv[++i], "--sizes");
        else if (!strcmp(argv[i], "--quick"))
            quick = true;
        else {
            fprintf(stderr, "gpu-probe: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        fprintf(stderr, "gpu-probe: no CUDA device found\n");
        return 77;
    }
    std::vector<size_t> which;
    if (!strcmp(gpus, "all"))
        for (int d = 0; d < count; d++)
            which.push_back((size_t)d);
    else
        which = parse_list(gpus, "--gpus");
    if (sizes.empty() || which.empty()) {
        fprintf(stderr, "gpu-probe: nothing to measure\n");
        return 2;
    }
    int drv = 0, rt = 0, cbv = 0;
    CK(cudaDriverGetVersion(&drv));
    CK(cudaRuntimeGetVersion(&rt));
    {
        cublasHandle_t h;
        CKB(cublasCreate(&h));
        CKB(cublasGetVersion(h, &cbv));
        CKB(cublasDestroy(h));
    }
    char head[256];
    snprintf(head, sizeof head, "{\"tool\": \"hetfarm gpu-probe\", \"cuda_driver_api\": %d, "
             "\"cuda_runtime\": %d, \"cublas\": %d, \"gpus\": [", drv, rt, cbv);
    std::string js = head;
    for (size_t i = 0; i < which.size(); i++) {
        if ((int)which[i] >= count) {
            fprintf(stderr, "gpu-probe: --gpus %s: GPU %zu does not exist (%d found)\n", gpus,
                    which[i], count);
            return 2;
        }
        if (i)
            js += ", ";
        probe_gpu((int)which[i], sizes, quick, js);
    }
    js += "]}\n";
    std::string tmp = std::string(out) + ".tmp";
    FILE *f = fopen(tmp.c_str(), "w");
    if (!f || fputs(js.c_str(), f) < 0 || fclose(f) != 0 || rename(tmp.c_str(), out) != 0) {
        perror(out);
        return 1;
    }
    fprintf(stderr, "gpu-probe: wrote %s\n", out);
    return 0;
}
