/* cublas_cuda.c - cuBLAS opened when a GPU first needs it, not when hetfarm
 * starts.
 *
 * DESIGN
 * ------
 * A process linked with libcublas pays its loading before main: its
 * initialisers touch some 200 MB of the library's pages. Measured on the
 * 2-core dev VM: `hetfarm --help` took 0.35 s, an empty C program linked
 * with -lcublas 0.37 s and 216 MB, without it 0.00 s. Every run paid that,
 * a CPU run of a small graph seven times its rounds, and only matmul's GPU
 * kernel calls cuBLAS. So hetfarm does not link it: the cuBLAS entry points
 * the framework and its apps call are defined here, and the first call of
 * any of them opens the library (dlopen, once for the process) and forwards
 * to it. A GPU makes its handle when it opens only for an app that says its
 * kernels call cuBLAS (struct hf_app.cublas), so that the library's cost
 * falls in the device start-up and never in a timed bundle; other apps
 * never open it. When the library is missing, the call fails with
 * CUBLAS_STATUS_NOT_INITIALIZED and the error names the library and the
 * loader's reason. An app that calls another cuBLAS function adds it here,
 * one forwarder each.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "hf_cuda.h"

#define HF_STR2(x) #x
#define HF_STR(x) HF_STR2(x)
#define CUBLAS_SONAME "libcublas.so." HF_STR(CUBLAS_VER_MAJOR)

static struct {
    cublasStatus_t (*create)(cublasHandle_t *);
    cublasStatus_t (*destroy)(cublasHandle_t);
    cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t);
    cublasStatus_t (*sgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const float *, const float *, int, const float *, int, const float *,
                            float *, int);
    cublasStatus_t (*dgemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const double *, const double *, int, const double *, int,
                            const double *, double *, int);
    const char *(*status_string)(cublasStatus_t);
} api;
static pthread_once_t opened = PTHREAD_ONCE_INIT;
static char open_error[256];

static void open_cublas(void)
{
    void *lib = dlopen(CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(open_error, sizeof open_error, "%s", dlerror());
        return;
    }
    /* Every entry or none: a library without one of them is not used. */
    *(void **)&api.create = dlsym(lib, "cublasCreate_v2");
    *(void **)&api.destroy = dlsym(lib, "cublasDestroy_v2");
    *(void **)&api.set_stream = dlsym(lib, "cublasSetStream_v2");
    *(void **)&api.sgemm = dlsym(lib, "cublasSgemm_v2");
    *(void **)&api.dgemm = dlsym(lib, "cublasDgemm_v2");
    *(void **)&api.status_string = dlsym(lib, "cublasGetStatusString");
    if (!api.create || !api.destroy || !api.set_stream || !api.sgemm || !api.dgemm ||
        !api.status_string) {
        snprintf(open_error, sizeof open_error, "%s lacks an entry point hetfarm calls",
                 CUBLAS_SONAME);
        api.create = NULL;
    }
}

/* Whether the library is open; else records why (the caller's error). */
static int ready(void)
{
    pthread_once(&opened, open_cublas);
    if (api.create)
        return 1;
    hf_fail(HF_EDEVICE, "cannot open cuBLAS (%s): %s", CUBLAS_SONAME, open_error);
    return 0;
}

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
{
    return ready() ? api.create(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
{
    return ready() ? api.destroy(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream)
{
    return ready() ? api.set_stream(handle, stream) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                              int m, int n, int k, const float *alpha, const float *a, int lda,
                              const float *b, int ldb, const float *beta, float *c, int ldc)
{
    return ready() ? api.sgemm(handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
                   : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                              int m, int n, int k, const double *alpha, const double *a, int lda,
                              const double *b, int ldb, const double *beta, double *c, int ldc)
{
    return ready() ? api.dgemm(handle, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
                   : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    pthread_once(&opened, open_cublas);
    return api.status_string ? api.status_string(status) : "cuBLAS not opened";
}
