/* matmul.c - the matmul app: C = A * B on the CPU team through OpenBLAS.
 *
 * DESIGN
 * ------
 * A load is one n x n GEMM whose units are the rows of C. The even partitioner
 * cuts it into row blocks and the default bundler merges contiguous blocks, so a
 * bundle is exactly one GEMM call: (rows x n) * (n x n) into the same rows of C.
 * The CPU kernel is a single cblas_sgemm/dgemm on that block; OpenBLAS's thread
 * count follows the CPU team size, set only when it changes because the call
 * takes a lock inside OpenBLAS.
 *
 * create() reads [load] and nothing else: a simulated run at n = 16384 must not
 * allocate 3 GiB. setup() runs only when bundles really execute; it fills A and B
 * from a counter-based hash of (seed, index), so the values do not depend on how
 * many OpenMP threads filled them. Each executed round first fills C with NaN so
 * that a row nobody wrote is caught by verify(), which scans all of C for NaN and
 * checks the sampled rows against the float64 reference (matmul_ref.c).
 *
 * The GPU side (matmul_cuda.cu) is called through hf__matmul_cuda_setup and
 * hf__matmul_run_cuda when the build has CUDA.
 */
#include "matmul.h"

#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rows checked per round when n is larger than this and [load] verify is unset. */
#define MATMUL_VERIFY_ALL_MAX 512
#define MATMUL_VERIFY_SAMPLED 16
#define MATMUL_GRAIN 64
#define MATMUL_MIN_CHUNKS 16

/* State beyond the shared context: only this file uses it. */
struct matmul_app {
    struct hf_matmul m; /* first, so ctx can be passed where struct hf_matmul * is expected */
    size_t verify_rows;
    _Atomic int blas_threads; /* what openblas_set_num_threads was last told; 0 = never
                               * (atomic: several CPU teams may run bundles at once) */
    int have_data;      /* setup ran */
};

/* splitmix64: a counter-based generator, so element k gets the same value
 * whichever thread fills it. */
static uint64_t matmul_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A uniform value in [-1, 1] for element k of the matrix `which` (0 = A, 1 = B). */
static double matmul_value(uint64_t seed, int which, size_t k)
{
    uint64_t r = matmul_mix(seed * 4 + (uint64_t)which + matmul_mix((uint64_t)k));
    return (double)(r >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static int matmul_create(void **ctx, hf_config_t cfg)
{
    long n, seed, verify;
    const char *dtype;
    int rc = hf_config_long(cfg, "load", "n", 0, 0, 1L << 20, &n);
    if (rc)
        return rc;
    if (!hf_config_get(cfg, "load", "n"))
        return hf_fail(HF_ECONFIG, "%s: [load] n: missing; matmul needs the matrix size",
                       hf_config_where(cfg, "load", "n"));
    if (n < 1)
        return hf_fail(HF_ECONFIG, "%s: [load] n = %ld: zero-sized load, n must be >= 1",
                       hf_config_where(cfg, "load", "n"), n);
    if ((rc = hf_config_str(cfg, "load", "dtype", "float32", &dtype)))
        return rc;
    size_t elem;
    if (strcmp(dtype, "float32") == 0)
        elem = 4;
    else if (strcmp(dtype, "float64") == 0)
        elem = 8;
    else
        return hf_fail(HF_ECONFIG, "%s: [load] dtype = %s: must be float32 or float64",
                       hf_config_where(cfg, "load", "dtype"), dtype);
    if ((rc = hf_config_long(cfg, "load", "seed", 1, 0, __LONG_MAX__, &seed)))
        return rc;
    long def_verify = n <= MATMUL_VERIFY_ALL_MAX ? n : MATMUL_VERIFY_SAMPLED;
    if ((rc = hf_config_long(cfg, "load", "verify", def_verify, 0, n, &verify)))
        return rc;

    struct matmul_app *a = calloc(1, sizeof *a);
    if (!a)
        return hf_fail(HF_ENOMEM, "matmul: out of memory for the context");
    a->m.n = (size_t)n;
    a->m.elem = elem;
    a->m.seed = (uint64_t)seed;
    a->m.rounds = 0; /* no natural end: the engine stops after [run] rounds */
    a->verify_rows = (size_t)verify;
    *ctx = a;
    return 0;
}

/* Allocates one 64-byte aligned n x n matrix, or NULL. */
static void *matmul_alloc(const struct hf_matmul *m)
{
    void *p = NULL;
    if (posix_memalign(&p, 64, m->n * m->n * m->elem) != 0)
        return NULL;
    return p;
}

static int matmul_setup(void *ctx, const struct hf_devices *devs)
{
    struct matmul_app *a = ctx;
    struct hf_matmul *m = &a->m;
    m->A = matmul_alloc(m);
    m->B = matmul_alloc(m);
    m->C = matmul_alloc(m);
    if (!m->A || !m->B || !m->C)
        return hf_fail(HF_ENOMEM, "matmul: cannot allocate 3 matrices of n=%zu (%.1f MiB each)",
                       m->n, (double)(m->n * m->n * m->elem) / 1048576.0);
    size_t nn = m->n * m->n;
    #pragma omp parallel for schedule(static)
    for (size_t k = 0; k < nn; k++) {
        double va = matmul_value(m->seed, 0, k), vb = matmul_value(m->seed, 1, k);
        if (m->elem == 4) {
            ((float *)m->A)[k] = (float)va;
            ((float *)m->B)[k] = (float)vb;
        } else {
            ((double *)m->A)[k] = va;
            ((double *)m->B)[k] = vb;
        }
    }
    a->have_data = 1;
#ifdef HF_HAVE_CUDA
    return hf__matmul_cuda_setup(m, devs);
#else
    (void)devs;
    return 0;
#endif
}

/* One load per round: the same GEMM again (the engine decides how many rounds).
 * When executing, C is poisoned with NaN first so unwritten rows show up. */
static int matmul_next_load(void *ctx, struct hf_load *load)
{
    struct matmul_app *a = ctx;
    struct hf_matmul *m = &a->m;
    double n = (double)m->n;
    load->units = m->n;
    load->work = 2.0 * n * n * n;
    load->bytes = 2.0 * n * n * (double)m->elem; /* rows of A in, rows of C out */
    load->data = m;
    load->work_exact = 1; /* every row costs 2 n^2 flops */
    if (a->have_data)
        hf_host_poison(m->C, m->n * m->n * m->elem);
    return 1;
}

/* Row blocks of `grain` rows. The default, 64 rows, keeps one chunk a GEMM that
 * OpenBLAS runs near full speed (32-row blocks lose ~half of it); for n < 1024 it
 * shrinks to n / 16 so that a small load still has 16 chunks to balance. Any other
 * grain, from the config, is used as it is. */
static size_t matmul_partition(void *ctx, const struct hf_load *load, size_t grain,
                               struct hf_chunk *out, size_t cap)
{
    if (grain == MATMUL_GRAIN && load->units / MATMUL_GRAIN < MATMUL_MIN_CHUNKS)
        grain = load->units / MATMUL_MIN_CHUNKS > 0 ? load->units / MATMUL_MIN_CHUNKS : 1;
    return hf_partition_even(ctx, load, grain, out, cap);
}

/* One GEMM for rows [begin, end) of C: C_blk = A_blk * B. */
static int matmul_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    struct matmul_app *a = ctx;
    struct hf_matmul *m = &a->m;
    if (!a->have_data)
        return hf_fail(HF_EAPP, "matmul: run_cpu before setup");
    if (nthreads < 1)
        nthreads = 1;
    if (atomic_exchange(&a->blas_threads, nthreads) != nthreads)
        openblas_set_num_threads(nthreads);
    int n = (int)m->n, rows = (int)(b->end - b->begin);
    if (rows <= 0)
        return 0;
    size_t off = b->begin * m->n;
    if (m->elem == 4)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, n, n, 1.0f,
                    (const float *)m->A + off, n, (const float *)m->B, n, 0.0f,
                    (float *)m->C + off, n);
    else
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, n, n, 1.0,
                    (const double *)m->A + off, n, (const double *)m->B, n, 0.0,
                    (double *)m->C + off, n);
    return 0;
}

/* A bundle's results are its rows of C (a run across nodes sends them to rank 0). */
static int matmul_results(void *ctx, const struct hf_bundle *b, struct hf_region *out, int cap)
{
    struct hf_matmul *m = &((struct matmul_app *)ctx)->m;
    if (cap < 1 || b->end <= b->begin)
        return 0;
    size_t row = m->n * m->elem;
    out[0] = (struct hf_region){(char *)m->C + b->begin * row, (b->end - b->begin) * row};
    return 1;
}

/* Checks C: every element must be a number, and the checked rows must match the
 * float64 reference within hf__matmul_tolerance, relative to sum_k |A_ik B_kj|. */
static int matmul_verify(void *ctx, const struct hf_load *load)
{
    struct matmul_app *a = ctx;
    struct hf_matmul *m = &a->m;
    size_t n = m->n;
    if (!a->have_data)
        return 0;
    /* The scan is n^2 reads: spread it over the cores (the devices are idle now). */
    size_t first_nan = n * n;
    #pragma omp parallel for reduction(min : first_nan) schedule(static)
    for (size_t k = 0; k < n * n; k++) {
        double v = m->elem == 4 ? ((float *)m->C)[k] : ((double *)m->C)[k];
        if (isnan(v) && k < first_nan)
            first_nan = k;
    }
    if (first_nan < n * n)
        return hf_fail(HF_EVERIFY, "matmul: C[%zu][%zu] = nan in round %d: row %zu was "
                       "never written (or computed NaN)", first_nan / n, first_nan % n,
                       load->round, first_nan / n);
    double *ref = malloc(2 * n * sizeof *ref);
    if (!ref)
        return hf_fail(HF_ENOMEM, "matmul: out of memory for the reference row");
    double tol = hf__matmul_tolerance(m->elem, n);
    int rc = 0;
    size_t rows = a->verify_rows;
    for (size_t r = 0; r < rows && rc == 0; r++) {
        /* All rows in order when checking every row, else rows drawn per round. */
        uint64_t draw = matmul_mix(m->seed ^ ((uint64_t)load->round << 32) ^ r);
        size_t i = rows >= n ? r : (size_t)(draw % n);
        hf__matmul_ref_row_mag(m, i, ref, ref + n);
        for (size_t j = 0; j < n; j++) {
            double c = m->elem == 4 ? ((float *)m->C)[i * n + j] : ((double *)m->C)[i * n + j];
            double mag = ref[n + j] > 0 ? ref[n + j] : 1e-300;
            double err = fabs(c - ref[j]) / mag;
            if (!(err <= tol)) { /* written so that NaN fails too */
                rc = hf_fail(HF_EVERIFY, "matmul: C[%zu][%zu] = %g, reference %g (error %.3g of "
                             "sum|a*b| = %g, tolerance %.3g, n=%zu %s, round %d)", i, j, c,
                             ref[j], err, mag, tol, n, m->elem == 4 ? "float32" : "float64",
                             load->round);
                break;
            }
        }
    }
    free(ref);
    return rc;
}

static void matmul_teardown(void *ctx)
{
    struct matmul_app *a = ctx;
    if (!a)
        return;
#ifdef HF_HAVE_CUDA
    if (a->have_data)
        hf__matmul_cuda_teardown(&a->m);
#endif
    free(a->m.A);
    free(a->m.B);
    free(a->m.C);
    free(a);
}

static void matmul_signature(void *ctx, char *buf, size_t len)
{
    const struct hf_matmul *m = ctx;
    snprintf(buf, len, "n=%zu dtype=%s", m->n, m->elem == 4 ? "float32" : "float64");
}

/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key matmul_keys[] = {
    {NULL, "n", HF_KEY_INT, 1, 1048576, HF_KEY_REQUIRED, NULL, NULL, "matrix size: C = A x B, n x n"},
    {NULL, "dtype", HF_KEY_STR, 0, 0, 0, "float32|float64", "float32", "element type"},
    {NULL, "seed", HF_KEY_INT, 0, 9.2233720368547748e18, 0, NULL, "1", "seed of A and B"},
    {NULL, "verify", HF_KEY_INT, 0, 1048576, 0, NULL, "n, or sampled when large",
     "rows of C checked per round (at most n)"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_matmul = {
    .keys = matmul_keys,
    .name = "matmul",
    .summary = "C = A * B, n x n, float32|float64; rows of C are the units (OpenBLAS, cuBLAS)",
    .create = matmul_create,
    .setup = matmul_setup,
    .next_load = matmul_next_load,
    .partition = matmul_partition,
    .bundle = hf_bundle_merge,
    .run_cpu = matmul_run_cpu,
#ifdef HF_HAVE_CUDA
    .run_cuda = hf__matmul_run_cuda,
    .cublas = 1,
#endif
    .results = matmul_results,
    .verify = matmul_verify,
    .teardown = matmul_teardown,
    .signature = matmul_signature,
    .default_grain = MATMUL_GRAIN,
};
