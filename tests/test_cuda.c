/* test_cuda.c - the CUDA driver and matmul's cuBLAS path on a real GPU.
 *
 * DESIGN
 * ------
 * Exits 77 (skipped) when no CUDA device is found, so the suite passes on
 * machines without a GPU. With one, it opens GPU 0 through hf_driver_cuda the
 * way the engine does (same thread for open, run and close) and runs matmul
 * bundles through the driver with a minimal app table, checking every row of
 * the bundle against the float64 reference and every row outside it for the
 * NaN it was poisoned with: odd sizes, both dtypes, pipelined against single
 * pieces, a tiny arena that forces OOM splits, a real CUDA error, and the arena
 * allocator itself; then whole runs through the real engine (CPU + GPU, GPU
 * alone, and an injected fault that retires the GPU while the run completes;
 * the same on two GPU devices, every GPU or GPU 0 twice where there is one,
 * gpu_pair.h, with the shares' arenas checked);
 * then hf_host_alloc's pinned memory, and the vscale template (which uses it)
 * run under several schedulers in a row, as `compare` does.
 */
#ifndef HF_HAVE_CUDA
/* A build without nvcc (NVCC=, or the sanitizer builds) has no CUDA driver. */
#include <stdio.h>
int main(void)
{
    printf("this build has no CUDA (no nvcc at build time)\n");
    return 77;
}
#else
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matmul/matmul.h"
#include "device.h"
#include "core/engine.h"
#include "sched.h"
#include "hf_cuda.h"
#include "gpu_pair.h"

static const struct hf_app mm_app = {
    .name = "matmul",
    .run_cuda = hf__matmul_run_cuda,
};

/* Opens GPU 0 as device index 0 of a run, the way devices.c fills it. */
static void open_gpu(struct hf_device *d)
{
    memset(d, 0, sizeof *d);
    d->info.index = 0;
    d->info.kind = HF_DEV_CUDA;
    d->info.is_gpu = 1;
    d->info.cuda_ordinal = 0;
    d->info.host_core = -1;
    snprintf(d->info.name, sizeof d->info.name, "cuda0");
    d->ops = &hf_driver_cuda;
    d->fault_round = d->fault_bundle = -1;
    int rc = hf_driver_cuda.open(d);
    if (rc)
        fprintf(stderr, "open: %s\n", hf_last_error());
    assert_int_equal(rc, 0);
    assert_non_null(hf_cuda_of(d));
}

/* GPU 0 as share k (0-based) of two devices, index k of a run: cuda0#1, cuda0#2
 * as devices.c names them for cuda = 0,0. */
static void open_share(struct hf_device *d, int k)
{
    memset(d, 0, sizeof *d);
    d->info.index = k;
    d->info.kind = HF_DEV_CUDA;
    d->info.is_gpu = 1;
    d->info.cuda_ordinal = 0;
    d->info.host_core = -1;
    d->info.shares_gpu = 2;
    d->ops = &hf_driver_cuda;
    d->fault_round = d->fault_bundle = -1;
    snprintf(d->info.name, sizeof d->info.name, "cuda0#%d", k + 1);
    int rc = hf_driver_cuda.open(d);
    if (rc)
        fprintf(stderr, "open %s: %s\n", d->info.name, hf_last_error());
    assert_int_equal(rc, 0);
}

/* A matmul context of size n with random A and B, C poisoned with NaN, and B
 * replicated on GPU 0. */
static void mm_init(struct hf_matmul *m, size_t n, size_t elem)
{
    memset(m, 0, sizeof *m);
    m->n = n;
    m->elem = elem;
    m->A = malloc(n * n * elem);
    m->B = malloc(n * n * elem);
    m->C = malloc(n * n * elem);
    assert_true(m->A && m->B && m->C);
    unsigned long long x = 12345;
    for (size_t k = 0; k < n * n; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double a = (double)(x >> 11) / 9007199254740992.0 * 2 - 1;
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double b = (double)(x >> 11) / 9007199254740992.0 * 2 - 1;
        if (elem == 4) {
            ((float *)m->A)[k] = (float)a;
            ((float *)m->B)[k] = (float)b;
        } else {
            ((double *)m->A)[k] = a;
            ((double *)m->B)[k] = b;
        }
    }
    struct hf_device_info info = {.index = 0, .kind = HF_DEV_CUDA, .is_gpu = 1,
                                  .cuda_ordinal = 0, .name = "cuda0"};
    struct hf_devices devs = {.count = 1, .dev = &info, .executes = 1};
    int rc = hf__matmul_cuda_setup(m, &devs);
    if (rc)
        fprintf(stderr, "setup: %s\n", hf_last_error());
    assert_int_equal(rc, 0);
}

static void mm_poison(struct hf_matmul *m)
{
    for (size_t k = 0; k < m->n * m->n; k++)
        if (m->elem == 4)
            ((float *)m->C)[k] = NAN;
        else
            ((double *)m->C)[k] = NAN;
}

static void mm_free(struct hf_matmul *m)
{
    hf__matmul_cuda_teardown(m);
    free(m->A);
    free(m->B);
    free(m->C);
}

static double mm_c(const struct hf_matmul *m, size_t i, size_t j)
{
    return m->elem == 4 ? ((float *)m->C)[i * m->n + j] : ((double *)m->C)[i * m->n + j];
}

/* Checks rows [begin, end) against the reference and every other row for NaN. */
static void mm_check(const struct hf_matmul *m, size_t begin, size_t end)
{
    size_t n = m->n;
    double *ref = malloc(2 * n * sizeof *ref);
    double tol = hf__matmul_tolerance(m->elem, n);
    for (size_t i = 0; i < n; i++) {
        if (i < begin || i >= end) {
            for (size_t j = 0; j < n; j++)
                if (!isnan(mm_c(m, i, j)))
                    fail_msg("row %zu outside the bundle [%zu, %zu) was written", i, begin, end);
            continue;
        }
        hf__matmul_ref_row_mag(m, i, ref, ref + n);
        for (size_t j = 0; j < n; j++) {
            double err = fabs(mm_c(m, i, j) - ref[j]) / (ref[n + j] > 0 ? ref[n + j] : 1e-300);
            if (!(err <= tol))
                fail_msg("C[%zu][%zu] = %g, reference %g (n=%zu elem=%zu)", i, j, mm_c(m, i, j),
                         ref[j], n, m->elem);
        }
    }
    free(ref);
}

/* The bundle of chunks [first, first + count) of a load of n rows cut into
 * chunks of g rows (the last one short), as the even partitioner makes them. */
static struct hf_bundle mm_bundle(const struct hf_load *load, size_t g, size_t first,
                                  size_t count)
{
    struct hf_bundle b = {.load = load, .first = first, .count = count};
    b.begin = first * g;
    b.end = (first + count) * g < load->units ? (first + count) * g : load->units;
    double frac = (double)(b.end - b.begin) / (double)load->units;
    b.work = load->work * frac;
    b.bytes = load->bytes * frac;
    return b;
}

static struct hf_load mm_load(const struct hf_matmul *m, int round)
{
    double n = (double)m->n;
    struct hf_load l = {.round = round, .units = m->n, .work = 2 * n * n * n,
                        .bytes = 2 * n * n * (double)m->elem, .data = (void *)m};
    return l;
}

static int mm_run(struct hf_device *d, struct hf_matmul *m, const struct hf_bundle *b,
                  struct hf_bundle_times *t)
{
    hf_clear_error();
    int rc = hf_driver_cuda.run(d, &mm_app, m, b, t);
    if (rc)
        fprintf(stderr, "run: %s\n", hf_last_error());
    return rc;
}

static void test_describe(void **state)
{
    (void)state;
    char name[64] = "", bus[32] = "";
    size_t mem = 0;
    assert_int_equal(hf_cuda_describe(0, name, sizeof name, bus, sizeof bus, &mem), 0);
    assert_true(name[0] != '\0');
    assert_true(mem > 0);
    unsigned dom, busn, devn, fn;
    assert_int_equal(sscanf(bus, "%x:%x:%x.%x", &dom, &busn, &devn, &fn), 4);
    for (const char *c = bus; *c; c++)
        assert_false(*c >= 'A' && *c <= 'F');
    assert_int_equal(hf_cuda_describe(hf_cuda_device_count(), NULL, 0, NULL, 0, NULL),
                     HF_ENODEV);
}

static void test_arena(void **state)
{
    (void)state;
    struct hf_device d;
    open_gpu(&d);
    struct hf_cuda *gpu = hf_cuda_of(&d);
    size_t cap = hf_cuda_arena_free(gpu);
    assert_true(cap >= 1 << 20);
    char *a = hf_cuda_arena_alloc(gpu, 1000);
    char *b = hf_cuda_arena_alloc(gpu, 1);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal((uintptr_t)a % 256, 0);
    assert_int_equal((uintptr_t)b % 256, 0);
    assert_true(b >= a + 1000);
    assert_int_equal(hf_cuda_arena_free(gpu), cap - 1024 - 256);
    assert_null(hf_cuda_arena_alloc(gpu, cap)); /* no longer fits */
    assert_null(hf_cuda_arena_alloc(gpu, (size_t)-1));
    /* The memory is real device memory. */
    assert_int_equal(cudaMemset(a, 0x5a, 1000), cudaSuccess);
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    hf_cuda_arena_reset(gpu);
    assert_int_equal(hf_cuda_arena_free(gpu), cap);
    assert_ptr_equal(hf_cuda_arena_alloc(gpu, cap), a);
    /* Staging holds HF_CUDA_STAGING_MB (64 MiB by default), and no more. */
    char *st = hf_cuda_staging(gpu, (size_t)64 << 20);
    assert_non_null(st);
    st[((size_t)64 << 20) - 1] = 1;
    assert_ptr_equal(hf_cuda_staging(gpu, 1000), st);
    assert_null(hf_cuda_staging(gpu, ((size_t)64 << 20) + 1));
    assert_null(*hf_cuda_app_slot(gpu));
    hf_driver_cuda.close(&d);
    assert_null(d.drv);
}

/* Two bundles of an odd-sized load, pipelined in several pieces, then the rest. */
static void run_matmul(size_t elem)
{
    struct hf_device d;
    open_gpu(&d);
    struct hf_matmul m;
    mm_init(&m, 131, elem);
    struct hf_load load = mm_load(&m, 0);
    size_t g = 17; /* 8 chunks, the last has 12 rows */
    hf_cuda_set_pieces(hf_cuda_of(&d), 3, 0);
    struct hf_bundle_times t;

    mm_poison(&m);
    struct hf_bundle b = mm_bundle(&load, g, 2, 6); /* rows 34..131, includes the short chunk */
    assert_int_equal(mm_run(&d, &m, &b, &t), 0);
    int pieces, splits;
    hf_cuda_last_bundle_stats(hf_cuda_of(&d), &pieces, &splits);
    assert_int_equal(pieces, 3);
    assert_int_equal(splits, 0);
    assert_true(t.kernel_s > 0 && t.copy_in_s >= 0 && t.copy_out_s >= 0);
    mm_check(&m, 34, 131);

    mm_poison(&m);
    b = mm_bundle(&load, g, 0, 1);
    assert_int_equal(mm_run(&d, &m, &b, &t), 0);
    mm_check(&m, 0, 17);

    mm_free(&m);
    hf_driver_cuda.close(&d);
}

static void test_matmul_f32(void **state)
{
    (void)state;
    run_matmul(4);
}

static void test_matmul_f64(void **state)
{
    (void)state;
    run_matmul(8);
}

/* The same bundle in one piece and in many pieces gives the same rows. */
static void test_pipelined_equals_single(void **state)
{
    (void)state;
    struct hf_device d;
    open_gpu(&d);
    struct hf_matmul m;
    mm_init(&m, 257, 4);
    struct hf_load load = mm_load(&m, 0);
    struct hf_bundle b = mm_bundle(&load, 8, 0, 33); /* the whole load */
    struct hf_bundle_times t;
    size_t bytes = m.n * m.n * m.elem;
    float *one = malloc(bytes);

    hf_cuda_set_pieces(hf_cuda_of(&d), 1, 0);
    mm_poison(&m);
    assert_int_equal(mm_run(&d, &m, &b, &t), 0);
    int pieces;
    hf_cuda_last_bundle_stats(hf_cuda_of(&d), &pieces, NULL);
    assert_int_equal(pieces, 1);
    mm_check(&m, 0, m.n);
    memcpy(one, m.C, bytes);

    hf_cuda_set_pieces(hf_cuda_of(&d), 7, 0);
    mm_poison(&m);
    assert_int_equal(mm_run(&d, &m, &b, &t), 0);
    hf_cuda_last_bundle_stats(hf_cuda_of(&d), &pieces, NULL);
    assert_true(pieces >= 5);
    mm_check(&m, 0, m.n);
    double tol = hf__matmul_tolerance(4, m.n);
    for (size_t k = 0; k < m.n * m.n; k++)
        assert_true(fabs(((float *)m.C)[k] - one[k]) <= tol * m.n);

    free(one);
    mm_free(&m);
    hf_driver_cuda.close(&d);
}

/* A 1 MiB arena and a bundle that declares no bytes: the first piece does not
 * fit, the driver halves it until it does, and the result is still right. */
static void test_oom_split(void **state)
{
    (void)state;
    setenv("HF_CUDA_ARENA_MB", "1", 1);
    struct hf_device d;
    open_gpu(&d);
    setenv("HF_CUDA_ARENA_MB", "256", 1);
    struct hf_matmul m;
    mm_init(&m, 300, 8); /* 300 rows of A and C: 1.4 MB, a slot holds 0.5 MiB */
    struct hf_load load = mm_load(&m, 0);
    struct hf_bundle b = mm_bundle(&load, 30, 0, 10);
    b.bytes = 0; /* the driver cannot size pieces in advance */
    hf_cuda_set_pieces(hf_cuda_of(&d), 1, 0);
    struct hf_bundle_times t;
    mm_poison(&m);
    assert_int_equal(mm_run(&d, &m, &b, &t), 0);
    int pieces, splits;
    hf_cuda_last_bundle_stats(hf_cuda_of(&d), &pieces, &splits);
    assert_true(splits >= 2);
    assert_true(pieces >= 3);
    mm_check(&m, 0, m.n);

    /* With the bytes known, the pieces are sized to the arena without OOM. */
    b = mm_bundle(&load, 30, 0, 10);
    mm_poison(&m);
    hf_cuda_set_pieces(hf_cuda_of(&d), 1, 0);
    assert_int_equal(mm_run(&d, &m, &b, &t), 0);
    hf_cuda_last_bundle_stats(hf_cuda_of(&d), &pieces, &splits);
    assert_int_equal(splits, 0);
    mm_check(&m, 0, m.n);
    mm_free(&m);
    hf_driver_cuda.close(&d);
}

/* A whole run through the real engine: matmul on the CPU and/or GPU 0, every
 * round verified against the reference by the app. */
static int engine_run(const char *devices, const char *load, const char *extra,
                      struct hf_run **out)
{
    char ini[1024];
    snprintf(ini, sizeof ini, "[load]\n%s\nseed = 3\n[devices]\n%s\n%s", load, devices, extra);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "test_cuda.ini", ini), 0);
    const struct hf_app *app = hf_app_find("matmul");
    const struct hf_sched_ops *sched = hf_sched_find("hass");
    assert_non_null(app);
    assert_non_null(sched);
    struct hf_run_options o = {.app = app, .sched = sched, .cfg = cfg, .engine = HF_ENGINE_REAL,
                               .rounds = 3, .seed = 1, .verify = 1};
    hf_clear_error();
    int rc = hf_run(&o, out);
    if (rc)
        fprintf(stderr, "hf_run: %s\n", hf_last_error());
    hf_config_destroy(cfg);
    return rc;
}

/* Chunks the device named `name` ran over all rounds. */
static size_t chunks_of(const struct hf_run *run, const char *name)
{
    size_t n = 0;
    for (int d = 0; d < run->ndevices; d++)
        if (strcmp(run->devs[d].name, name) == 0)
            for (int r = 0; r < run->nrounds; r++)
                n += run->rounds[r].dev[d].chunks;
    return n;
}

static void test_engine_cpu_gpu(void **state)
{
    (void)state;
    struct hf_run *run = NULL;
    assert_int_equal(engine_run("cpu = 1\ncuda = 0", "n = 301\ndtype = float32\nverify = 301", "",
                                &run), 0);
    assert_string_equal(run->fault, "");
    assert_true(chunks_of(run, "cuda0") > 0);
    hf_run_free(run);
}

static void test_engine_gpu_only(void **state)
{
    (void)state;
    struct hf_run *run = NULL;
    assert_int_equal(engine_run("cpu = 0\ncuda = 0", "n = 203\ndtype = float64\nverify = 203", "",
                                &run), 0);
    assert_string_equal(run->fault, "");
    assert_true(chunks_of(run, "cuda0") > 0);
    hf_run_free(run);
}

/* [faults] cuda_error_at = cuda0:0:0: the GPU's first bundle of round 1 fails
 * with HF_EDEVICE, the engine retires it, the CPU finishes and verify passes. */
static void test_engine_injected_fault(void **state)
{
    (void)state;
    struct hf_run *run = NULL;
    assert_int_equal(engine_run("cpu = 1\ncuda = 0", "n = 256\ndtype = float32\nverify = 256",
                                "[faults]\ncuda_error_at = cuda0:0:0\n", &run), 0);
    if (!strstr(run->fault, "cuda0")) {
        for (int r = 0; r < run->nrounds; r++)
            fprintf(stderr, "round %d: cuda0 ran %zu chunks in %zu bundles\n", r,
                    run->rounds[r].dev[1].chunks, run->rounds[r].dev[1].bundles);
        fail_msg("fault = '%s'", run->fault);
    }
    hf_run_free(run);
}

/* Two devices on GPU 0 (cuda = 0,0), opened without HF_CUDA_ARENA_MB: each
 * gets about half of what the GPU has beyond its reserve, so the second is
 * not left the smallest arena; both arenas are real and distinct. */
static void test_shared_gpu_arenas(void **state)
{
    (void)state;
    size_t total = 0;
    assert_int_equal(hf_cuda_describe(0, NULL, 0, NULL, 0, &total), 0);
    const char *keep = getenv("HF_CUDA_ARENA_MB");
    char saved[32];
    snprintf(saved, sizeof saved, "%s", keep ? keep : "");
    unsetenv("HF_CUDA_ARENA_MB");
    struct hf_device d[2];
    open_share(&d[0], 0);
    open_share(&d[1], 1);
    size_t a0 = 2 * hf_cuda_arena_free(hf_cuda_of(&d[0]));
    size_t a1 = 2 * hf_cuda_arena_free(hf_cuda_of(&d[1]));
    size_t reserve = total / 4 > ((size_t)1 << 30) ? total / 4 : (size_t)1 << 30;
    fprintf(stderr, "GPU 0 of %.1f GiB as two devices: arenas %.2f and %.2f GiB\n",
            total / 1073741824.0, a0 / 1073741824.0, a1 / 1073741824.0);
    assert_true(a0 <= (total - reserve) / 2 + 512);
    assert_true(a1 <= (total - reserve) / 2 + 512);
    assert_true(a1 >= a0 / 2);
    char *p0 = hf_cuda_arena_alloc(hf_cuda_of(&d[0]), 1 << 20);
    char *p1 = hf_cuda_arena_alloc(hf_cuda_of(&d[1]), 1 << 20);
    assert_true(p0 && p1 && (p1 >= p0 + a0 / 2 || p0 >= p1 + a1 / 2));
    hf_driver_cuda.close(&d[1]);
    hf_driver_cuda.close(&d[0]);
    if (saved[0])
        setenv("HF_CUDA_ARENA_MB", saved, 1);
}

/* matmul through the real engine on two GPU devices (every GPU, or GPU 0
 * twice where there is one), next to the CPU and alone: results verified
 * every round; then a fault retires the first GPU device in round 0 and the
 * other GPU device and the CPU finish the run. */
static void test_engine_two_gpus(void **state)
{
    (void)state;
    char devices[64];
    const char *first = hf_test_gpu_first();
    for (int cpu = 1; cpu >= 0; cpu--) {
        snprintf(devices, sizeof devices, "cpu = %d\ncuda = %s", cpu, hf_test_gpus());
        struct hf_run *run = NULL;
        assert_int_equal(engine_run(devices, "n = 517\ndtype = float32\nverify = 517", "", &run),
                         0);
        assert_string_equal(run->fault, "");
        size_t gpu_chunks = 0;
        int ngpu = 0;
        for (int d = 0; d < run->ndevices; d++)
            if (run->devs[d].kind == HF_DEV_CUDA) {
                ngpu++;
                gpu_chunks += chunks_of(run, run->devs[d].name);
                fprintf(stderr, "cpu = %d: %s ran %zu chunks\n", cpu, run->devs[d].name,
                        chunks_of(run, run->devs[d].name));
            }
        assert_true(ngpu >= 2);
        assert_non_null(strstr(run->devs[cpu].name, "cuda0"));
        assert_true(gpu_chunks > 0);
        hf_run_free(run);
    }
    char faults[96];
    snprintf(faults, sizeof faults, "[faults]\ncuda_error_at = %s:0:0\n", first);
    snprintf(devices, sizeof devices, "cpu = 1\ncuda = %s", hf_test_gpus());
    struct hf_run *run = NULL;
    assert_int_equal(engine_run(devices, "n = 256\ndtype = float32\nverify = 256", faults, &run),
                     0);
    if (!strstr(run->fault, first))
        fail_msg("fault = '%s'", run->fault);
    hf_run_free(run);
}

/* An app whose copy fails with a CUDA error. */
static int bad_run_cuda(void *ctx, const struct hf_bundle *b, struct hf_cuda *gpu)
{
    (void)ctx;
    (void)b;
    void *d = hf_cuda_arena_alloc(gpu, 64);
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_COPY_IN);
    /* More bytes than the destination could ever hold: cudaErrorInvalidValue. */
    return hf_cuda_check(gpu, cudaMemcpyAsync(d, NULL, (size_t)1 << 62, cudaMemcpyHostToDevice, s),
                         "bad copy");
}

static void test_cuda_error(void **state)
{
    (void)state;
    struct hf_device d;
    open_gpu(&d);
    struct hf_load load = {.round = 0, .units = 100, .work = 100, .bytes = 100};
    struct hf_bundle b = {.load = &load, .first = 3, .count = 2, .begin = 30, .end = 50};
    const struct hf_app bad = {.name = "bad", .run_cuda = bad_run_cuda};
    struct hf_bundle_times t;
    hf_clear_error();
    assert_int_equal(hf_driver_cuda.run(&d, &bad, NULL, &b, &t), HF_EDEVICE);
    const char *msg = hf_last_error();
    fprintf(stderr, "expected failure: %s\n", msg);
    assert_non_null(strstr(msg, "cuda0"));
    assert_non_null(strstr(msg, "bad copy"));
    assert_non_null(strstr(msg, "chunks 3..3 of bundle 3..4")); /* one piece per chunk */
    /* A non-sticky error leaves the GPU usable. */
    struct hf_matmul m;
    mm_init(&m, 40, 8);
    struct hf_load l = mm_load(&m, 0);
    struct hf_bundle ok = mm_bundle(&l, 10, 0, 4);
    mm_poison(&m);
    assert_int_equal(mm_run(&d, &m, &ok, &t), 0);
    mm_check(&m, 0, 40);
    mm_free(&m);
    hf_driver_cuda.close(&d);
}

/* hf_host_alloc with a real GPU in the list: pinned (the CUDA runtime says
 * so), copies to and from it work, and hf_host_free unpins what it pinned:
 * after a free, nothing at those addresses is still registered, so the next
 * allocation (the next run of a comparison) pins afresh. */
static void test_host_alloc_pinned(void **state)
{
    (void)state;
    struct hf_device_info gpu = {.index = 0, .kind = HF_DEV_CUDA, .is_gpu = 1,
                                 .cuda_ordinal = 0, .host_core = -1};
    const struct hf_devices devs = {.count = 1, .dev = &gpu, .executes = 1};
    for (int pass = 0; pass < 3; pass++) {
        size_t n = ((size_t)1 << 20) + 3 * (size_t)pass;
        float *h = hf_host_alloc(&devs, n * sizeof *h);
        assert_non_null(h);
        assert_int_equal(hf_host_pinned(h), 1);
        assert_int_equal(hf_host_pinned(h + n - 1), 1);
        struct cudaPointerAttributes at;
        assert_int_equal(cudaPointerGetAttributes(&at, h), cudaSuccess);
        assert_int_equal(at.type, cudaMemoryTypeHost);
        for (size_t i = 0; i < n; i++)
            h[i] = (float)i;
        float *d_x = NULL;
        cudaStream_t s;
        assert_int_equal(cudaSetDevice(0), cudaSuccess);
        assert_int_equal(cudaStreamCreate(&s), cudaSuccess);
        assert_int_equal(cudaMalloc((void **)&d_x, n * sizeof *h), cudaSuccess);
        assert_int_equal(cudaMemcpyAsync(d_x, h, n * sizeof *h, cudaMemcpyHostToDevice, s),
                         cudaSuccess);
        assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
        for (size_t i = 0; i < n; i++)
            h[i] = NAN;
        assert_int_equal(cudaMemcpyAsync(h, d_x, n * sizeof *h, cudaMemcpyDeviceToHost, s),
                         cudaSuccess);
        assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
        for (size_t i = 0; i < n; i += 4099)
            assert_true(h[i] == (float)i);
        (void)cudaFree(d_x);
        (void)cudaStreamDestroy(s);
        hf_host_free(h);
        assert_int_equal(hf_host_pinned(h), 0);
    }
    /* Without a GPU in the list the same call gives plain memory. */
    void *p = hf_host_alloc(NULL, 4096);
    assert_non_null(p);
    assert_int_equal(hf_host_pinned(p), 0);
    hf_host_free(p);
}

/* vscale (the template, on hf_host_alloc) on the CPU and GPU 0 through the
 * real engine, once per scheduler in a row like `compare`: every run
 * verifies, so a stale registration of the previous run would fail here. */
static void test_vscale_runs_back_to_back(void **state)
{
    (void)state;
    static const char *const scheds[] = {"hass", "greedy", "static"};
    const char *ini = "[load]\nn = 3000017\n[devices]\ncpu = 1\ncuda = 0\n";
    for (size_t k = 0; k < sizeof scheds / sizeof *scheds; k++) {
        hf_config_t cfg;
        assert_int_equal(hf_config_parse(&cfg, "vscale.ini", ini), 0);
        struct hf_run_options o = {.app = hf_app_find("vscale"), .sched = hf_sched_find(scheds[k]),
                                   .cfg = cfg, .engine = HF_ENGINE_REAL, .rounds = 3, .seed = 1,
                                   .verify = 1, .grain = 1 << 18};
        assert_non_null(o.app);
        assert_non_null(o.sched);
        struct hf_run *run = NULL;
        hf_clear_error();
        int rc = hf_run(&o, &run);
        if (rc)
            fprintf(stderr, "vscale under %s: %s\n", scheds[k], hf_last_error());
        assert_int_equal(rc, 0);
        assert_true(chunks_of(run, "cuda0") > 0 || k == 2);
        hf_run_free(run);
        hf_config_destroy(cfg);
    }
}

int main(void)
{
    if (hf_cuda_device_count() == 0) {
        printf("no CUDA device found\n");
        return 77;
    }
    setenv("HF_CUDA_ARENA_MB", "256", 1); /* fast opens; the tests are small */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_matmul_f32),
        cmocka_unit_test(test_matmul_f64),
        cmocka_unit_test(test_pipelined_equals_single),
        cmocka_unit_test(test_oom_split),
        cmocka_unit_test(test_engine_cpu_gpu),
        cmocka_unit_test(test_engine_gpu_only),
        cmocka_unit_test(test_engine_injected_fault),
        cmocka_unit_test(test_shared_gpu_arenas),
        cmocka_unit_test(test_engine_two_gpus),
        cmocka_unit_test(test_cuda_error),
        cmocka_unit_test(test_host_alloc_pinned),
        cmocka_unit_test(test_vscale_runs_back_to_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif /* HF_HAVE_CUDA */
