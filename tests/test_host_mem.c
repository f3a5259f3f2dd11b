/* test_host_mem.c - hf_host_alloc / hf_host_free / hf_host_poison (framework/drivers/host_mem*.c).
 *
 * Without a real GPU in the device list (always so here: a GPU test case is in
 * test_cuda.c) the memory is plain: page-aligned, writable end to end, not
 * pinned, and freed without complaint, however often it is reused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hetfarm.h"

static void test_plain_without_gpu(void **state)
{
    (void)state;
    struct hf_device_info cpu = {.index = 0, .kind = HF_DEV_CPU, .nthreads = 1,
                                 .cuda_ordinal = -1, .host_core = -1};
    struct hf_device_info sim = {.index = 1, .kind = HF_DEV_SIM, .is_gpu = 1,
                                 .cuda_ordinal = -1, .host_core = -1};
    struct hf_device_info both[2] = {cpu, sim};
    const struct hf_devices lists[] = {
        {.count = 0, .dev = NULL, .executes = 1},
        {.count = 2, .dev = both, .executes = 1}, /* a modelled GPU is no GPU to pin for */
    };
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    static const size_t sizes[] = {0, 1, 4095, 4096, 4097, 3 << 20};
    for (size_t l = 0; l < 3; l++)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            const struct hf_devices *devs = l < 2 ? &lists[l] : NULL;
            unsigned char *p = hf_host_alloc(devs, sizes[k]);
            assert_non_null(p);
            assert_int_equal((uintptr_t)p % page, 0);
            assert_int_equal(hf_host_pinned(p), 0);
            memset(p, 0xab, sizes[k]);
            for (size_t i = 0; i < sizes[k]; i += 997)
                assert_int_equal(p[i], 0xab);
            hf_host_free(p);
        }
    hf_host_free(NULL);
}

/* Allocate, fill, free, many times over: every round of a comparison does it. */
static void test_reuse(void **state)
{
    (void)state;
    for (int r = 0; r < 50; r++) {
        float *x = hf_host_alloc(NULL, 1000 * sizeof *x);
        assert_non_null(x);
        for (int i = 0; i < 1000; i++)
            x[i] = (float)(i + r);
        assert_true(x[999] == (float)(999 + r));
        hf_host_free(x);
    }
}

/* An impossible size fails with HF_ENOMEM and says why. */
/* hf_host_poison fills exactly [p, p + bytes) with all-one bytes, which read
 * as NaN in float and in double, from any alignment and for any length
 * (streaming stores for the aligned body, plain ones for the edges). */
static void test_poison(void **state)
{
    (void)state;
    enum { CAP = 3 * 65536 + 64 };
    unsigned char *buf = malloc(CAP);
    assert_non_null(buf);
    const size_t offsets[] = {0, 1, 7, 16};
    const size_t lengths[] = {0, 1, 15, 16, 17, 4096, 65536, 2 * 65536 + 33};
    for (size_t o = 0; o < sizeof offsets / sizeof *offsets; o++)
        for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
            memset(buf, 0x5a, CAP);
            hf_host_poison(buf + offsets[o], lengths[l]);
            for (size_t i = 0; i < CAP; i++) {
                int inside = i >= offsets[o] && i < offsets[o] + lengths[l];
                if (buf[i] != (inside ? 0xff : 0x5a))
                    fail_msg("offset %zu length %zu: byte %zu is 0x%02x", offsets[o], lengths[l],
                             i, buf[i]);
            }
        }
    float f;
    double d;
    hf_host_poison(buf, 64);
    memcpy(&f, buf, sizeof f);
    memcpy(&d, buf + 8, sizeof d);
    assert_true(isnan(f));
    assert_true(isnan(d));
    hf_host_poison(NULL, 0); /* nothing to do */
    free(buf);
}

static void test_too_big(void **state)
{
    (void)state;
    hf_clear_error();
    assert_null(hf_host_alloc(NULL, SIZE_MAX - 10));
    assert_non_null(strstr(hf_last_error(), "hf_host_alloc"));
    hf_clear_error();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_without_gpu),
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_poison),
        cmocka_unit_test(test_too_big),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
