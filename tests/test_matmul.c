/* test_matmul.c - the matmul app: partitioning, bundling, the CPU kernel against
 * the plain reference, verification, and bad [load] keys.
 *
 * The app is driven through its struct hf_app callbacks exactly as the engine
 * drives them (create, setup, next_load, partition, bundle, run_cpu, verify),
 * at odd sizes (n = 67, grain 5) where an off-by-one in a row block shows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetfarm.h"
#include "matmul/matmul.h"

/* An app instance made from INI text; setup runs when `execute` is set. */
struct inst {
    const struct hf_app *app;
    hf_config_t cfg;
    void *ctx;
    struct hf_load load;
    struct hf_chunk *chunks;
    size_t nchunks;
};

static const struct hf_devices no_devices = {.count = 0, .dev = NULL, .executes = 1};

static int make(struct inst *in, const char *ini, int execute)
{
    memset(in, 0, sizeof *in);
    in->app = hf_app_find("matmul");
    assert_non_null(in->app);
    hf_clear_error();
    int rc = hf_config_parse(&in->cfg, "test.ini", ini);
    assert_int_equal(rc, 0);
    rc = in->app->create(&in->ctx, in->cfg);
    if (rc)
        return rc;
    if (execute)
        assert_int_equal(in->app->setup(in->ctx, &no_devices), 0);
    return 0;
}

/* Draws round r's load and partitions it with `grain`, as the engine does. */
static void load_round(struct inst *in, int round, size_t grain)
{
    memset(&in->load, 0, sizeof in->load);
    in->load.round = round;
    assert_int_equal(in->app->next_load(in->ctx, &in->load), 1);
    size_t n = in->app->partition(in->ctx, &in->load, grain, NULL, 0);
    assert_true(n > 0);
    free(in->chunks);
    in->chunks = calloc(n, sizeof *in->chunks);
    assert_int_equal(in->app->partition(in->ctx, &in->load, grain, in->chunks, n), n);
    in->nchunks = n;
}

/* Runs chunks [first, first + count) as one bundle on the CPU. */
static int run_span(struct inst *in, size_t first, size_t count, int nthreads)
{
    struct hf_bundle b = {0};
    assert_int_equal(in->app->bundle(in->ctx, in->chunks + first, count, &b), 0);
    b.load = &in->load;
    return in->app->run_cpu(in->ctx, &b, nthreads);
}

static void destroy(struct inst *in)
{
    if (in->ctx)
        in->app->teardown(in->ctx);
    hf_config_destroy(in->cfg);
    free(in->chunks);
}

static void test_registry(void **state)
{
    (void)state;
    assert_non_null(hf_app_find("matmul"));
    assert_non_null(hf_app_find("noop"));
    assert_non_null(hf_app_find("vscale"));
    assert_null(hf_app_find("nosuchapp"));
    assert_null(hf_app_find(NULL));
    size_t count = 0;
    for (const struct hf_app *const *a = hf_apps; *a; a++, count++)
        assert_ptr_equal(hf_app_find((*a)->name), *a);
    assert_true(count >= 3);
}

/* Row blocks cover every row exactly once, in order; work and bytes add up. */
static void test_partition_covers_rows(void **state)
{
    (void)state;
    struct inst in;
    assert_int_equal(make(&in, "[load]\nn = 67\n", 0), 0);
    load_round(&in, 0, 5);
    assert_int_equal(in.nchunks, 14); /* 13 of 5 rows and one of 2 */
    double work = 0, bytes = 0;
    size_t next = 0;
    for (size_t i = 0; i < in.nchunks; i++) {
        assert_int_equal(in.chunks[i].begin, next);
        assert_true(in.chunks[i].end > in.chunks[i].begin);
        assert_true(in.chunks[i].end - in.chunks[i].begin <= 5);
        next = in.chunks[i].end;
        work += in.chunks[i].work;
        bytes += in.chunks[i].bytes;
    }
    assert_int_equal(next, 67);
    assert_int_equal(in.chunks[13].end - in.chunks[13].begin, 2);
    assert_true(fabs(work - 2.0 * 67 * 67 * 67) < 1e-6 * work);
    assert_true(fabs(bytes - 2.0 * 67 * 67 * 4) < 1e-6 * bytes);
    destroy(&in);

    /* The default grain is 64 rows, but at least 16 chunks for small n; other
     * grains are kept. */
    assert_int_equal(make(&in, "[load]\nn = 2048\n", 0), 0);
    load_round(&in, 0, in.app->default_grain);
    assert_int_equal(in.nchunks, 32);
    load_round(&in, 1, 100);
    assert_int_equal(in.nchunks, 21);
    destroy(&in);
    assert_int_equal(make(&in, "[load]\nn = 67\n", 0), 0);
    load_round(&in, 0, in.app->default_grain);
    assert_int_equal(in.nchunks, 17); /* 4 rows each, the last 3 */
    destroy(&in);
    assert_int_equal(make(&in, "[load]\nn = 16384\n", 0), 0);
    load_round(&in, 0, in.app->default_grain);
    assert_int_equal(in.nchunks, 256);
    destroy(&in);
}

/* A simulated run never calls setup: no matrices, and next_load still works. */
static void test_create_allocates_nothing(void **state)
{
    (void)state;
    struct inst in;
    assert_int_equal(make(&in, "[load]\nn = 16384\ndtype = float64\n", 0), 0);
    const struct hf_matmul *m = in.ctx;
    assert_null(m->A);
    assert_null(m->C);
    load_round(&in, 0, 64);
    assert_true(in.load.work == 2.0 * 16384.0 * 16384.0 * 16384.0);
    assert_true(in.load.bytes == 2.0 * 16384.0 * 16384.0 * 8);
    assert_int_equal(in.app->verify(in.ctx, &in.load), 0);
    char sig[64];
    in.app->signature(in.ctx, sig, sizeof sig);
    assert_string_equal(sig, "n=16384 dtype=float64");
    destroy(&in);
}

/* The bundler merges contiguous chunks into one span and refuses a gap. */
static void test_bundle_merges(void **state)
{
    (void)state;
    struct inst in;
    assert_int_equal(make(&in, "[load]\nn = 67\n", 0), 0);
    load_round(&in, 0, 5);
    struct hf_bundle b = {0};
    assert_int_equal(in.app->bundle(in.ctx, in.chunks + 3, 5, &b), 0);
    assert_int_equal(b.first, 3);
    assert_int_equal(b.count, 5);
    assert_int_equal(b.begin, 15);
    assert_int_equal(b.end, 40);
    double work = 0;
    for (size_t i = 3; i < 8; i++)
        work += in.chunks[i].work;
    assert_true(fabs(b.work - work) <= 1e-9 * work);
    /* The last, short chunk alone. */
    assert_int_equal(in.app->bundle(in.ctx, in.chunks + 13, 1, &b), 0);
    assert_int_equal(b.begin, 65);
    assert_int_equal(b.end, 67);
    /* Not contiguous: chunks 2 and 4. */
    struct hf_chunk gap[2] = {in.chunks[2], in.chunks[4]};
    hf_clear_error();
    assert_int_equal(in.app->bundle(in.ctx, gap, 2, &b), HF_EINVAL);
    assert_non_null(strstr(hf_last_error(), "does not follow"));
    assert_int_equal(in.app->bundle(in.ctx, gap, 0, &b), HF_EINVAL);
    destroy(&in);
}

/* Runs a whole round in bundles of 1, 2, 3, ... chunks and checks every element. */
static void check_dtype(const char *ini, int nthreads)
{
    struct inst in;
    assert_int_equal(make(&in, ini, 1), 0);
    const struct hf_matmul *m = in.ctx;
    for (int round = 0; round < 2; round++) {
        load_round(&in, round, 5);
        size_t first = 0, size = 1;
        while (first < in.nchunks) {
            size_t count = size < in.nchunks - first ? size : in.nchunks - first;
            assert_int_equal(run_span(&in, first, count, nthreads), 0);
            first += count;
            size++;
        }
        hf_clear_error();
        assert_int_equal(in.app->verify(in.ctx, &in.load), 0);
    }
    /* Independently of verify: every element against the reference. */
    double *ref = malloc(m->n * sizeof *ref);
    double tol = hf__matmul_tolerance(m->elem, m->n);
    for (size_t i = 0; i < m->n; i++) {
        hf__matmul_ref_row(m, i, ref);
        for (size_t j = 0; j < m->n; j++) {
            size_t k = i * m->n + j;
            double c = m->elem == 4 ? ((float *)m->C)[k] : ((double *)m->C)[k];
            /* |C| <= n since inputs are in [-1, 1]; a loose absolute check suffices. */
            assert_true(fabs(c - ref[j]) <= tol * (double)m->n);
        }
    }
    free(ref);
    destroy(&in);
}

static void test_run_cpu_float32(void **state)
{
    (void)state;
    check_dtype("[load]\nn = 67\ndtype = float32\nseed = 7\n", 1);
    check_dtype("[load]\nn = 67\ndtype = float32\nseed = 8\n", 2);
}

static void test_run_cpu_float64(void **state)
{
    (void)state;
    check_dtype("[load]\nn = 67\ndtype = float64\n", 2);
    check_dtype("[load]\nn = 1\ndtype = float64\n", 1);
}

/* Runs round 0 fully and returns the instance for corruption tests. */
static void run_full_round(struct inst *in, const char *ini)
{
    assert_int_equal(make(in, ini, 1), 0);
    load_round(in, 0, 5);
    assert_int_equal(run_span(in, 0, in->nchunks, 2), 0);
    assert_int_equal(in->app->verify(in->ctx, &in->load), 0);
}

static void test_verify_catches_corruption(void **state)
{
    (void)state;
    struct inst in;
    run_full_round(&in, "[load]\nn = 67\n");
    struct hf_matmul *m = in.ctx;
    ((float *)m->C)[10 * 67 + 20] += 0.01f;
    hf_clear_error();
    assert_int_equal(in.app->verify(in.ctx, &in.load), HF_EVERIFY);
    assert_non_null(strstr(hf_last_error(), "C[10][20]"));
    destroy(&in);

    /* float64, with sampled rows: corrupt every row so any sample sees it. */
    run_full_round(&in, "[load]\nn = 67\ndtype = float64\nverify = 3\n");
    m = in.ctx;
    for (size_t i = 0; i < 67; i++)
        ((double *)m->C)[i * 67 + 66] *= 1.0 + 1e-9;
    ((double *)m->C)[66] += 1e-9; /* in case C[0][66] was 0 */
    hf_clear_error();
    assert_int_equal(in.app->verify(in.ctx, &in.load), HF_EVERIFY);
    assert_non_null(strstr(hf_last_error(), "reference"));
    destroy(&in);
}

static void test_verify_catches_nan_row(void **state)
{
    (void)state;
    struct inst in;
    run_full_round(&in, "[load]\nn = 67\nverify = 0\n");
    struct hf_matmul *m = in.ctx;
    for (size_t j = 0; j < 67; j++)
        ((float *)m->C)[33 * 67 + j] = NAN;
    hf_clear_error();
    assert_int_equal(in.app->verify(in.ctx, &in.load), HF_EVERIFY);
    assert_non_null(strstr(hf_last_error(), "C[33][0]"));
    destroy(&in);

    /* A row block nobody ran in the next round stays NaN and is caught. */
    run_full_round(&in, "[load]\nn = 67\n");
    load_round(&in, 1, 5);
    assert_int_equal(run_span(&in, 0, 6, 1), 0);
    assert_int_equal(run_span(&in, 7, in.nchunks - 7, 1), 0);
    hf_clear_error();
    assert_int_equal(in.app->verify(in.ctx, &in.load), HF_EVERIFY);
    assert_non_null(strstr(hf_last_error(), "C[30][0] = nan"));
    destroy(&in);
}

/* Bad [load] keys fail in create with a message naming file:line, key and value. */
static void expect_bad(const char *ini, const char *needle1, const char *needle2)
{
    struct inst in;
    int rc = make(&in, ini, 0);
    assert_int_equal(rc, HF_ECONFIG);
    assert_null(in.ctx);
    const char *msg = hf_last_error();
    if (!strstr(msg, needle1) || !strstr(msg, needle2))
        fail_msg("message '%s' lacks '%s' or '%s'", msg, needle1, needle2);
    destroy(&in);
}

static void test_bad_config(void **state)
{
    (void)state;
    expect_bad("[load]\nn = 64\ndtype = float16\n", "test.ini:3", "dtype = float16");
    expect_bad("[load]\nn = 0\n", "test.ini:2", "[load] n");
    expect_bad("[load]\ndtype = float32\n", "[load] n", "missing");
    expect_bad("[load]\nn = many\n", "test.ini:2", "n");
    expect_bad("[load]\nn = 8\nverify = 9\n", "test.ini:3", "verify");
}

static void test_tolerance(void **state)
{
    (void)state;
    /* float32 at n = 4096 allows 2^-24 * 2 * 4098 ~ 4.9e-4 of sum |a b|. */
    assert_true(hf__matmul_tolerance(4, 4096) > 4e-4 && hf__matmul_tolerance(4, 4096) < 6e-4);
    assert_true(hf__matmul_tolerance(8, 4096) < 1e-12);
    assert_true(hf__matmul_tolerance(8, 67) < hf__matmul_tolerance(4, 67));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_partition_covers_rows),
        cmocka_unit_test(test_create_allocates_nothing),
        cmocka_unit_test(test_bundle_merges),
        cmocka_unit_test(test_run_cpu_float32),
        cmocka_unit_test(test_run_cpu_float64),
        cmocka_unit_test(test_verify_catches_corruption),
        cmocka_unit_test(test_verify_catches_nan_row),
        cmocka_unit_test(test_bad_config),
        cmocka_unit_test(test_tolerance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
