/* test_partition.c - the default partitioner (hf_partition_even) and bundler
 * (hf_bundle_merge) at their edges: grain larger than the load, a short last
 * chunk, a too-small output array, huge loads, and grain 0 (a programmer error
 * that must abort, not clamp).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hetfarm.h"

static void test_grain_larger_than_units(void **state)
{
    (void)state;
    struct hf_load load = {.units = 7, .work = 70, .bytes = 700};
    struct hf_chunk c[2];
    assert_int_equal(hf_partition_even(NULL, &load, 100, NULL, 0), 1);
    assert_int_equal(hf_partition_even(NULL, &load, 100, c, 2), 1);
    assert_int_equal(c[0].index, 0);
    assert_int_equal(c[0].begin, 0);
    assert_int_equal(c[0].end, 7);
    assert_true(c[0].work == 70 && c[0].bytes == 700);
}

static void test_short_last_chunk(void **state)
{
    (void)state;
    struct hf_load load = {.units = 10, .work = 1.0, .bytes = 3.0};
    struct hf_chunk c[4];
    assert_int_equal(hf_partition_even(NULL, &load, 3, c, 4), 4);
    size_t expect[4][2] = {{0, 3}, {3, 6}, {6, 9}, {9, 10}};
    double work = 0, bytes = 0;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(c[i].index, i);
        assert_int_equal(c[i].begin, expect[i][0]);
        assert_int_equal(c[i].end, expect[i][1]);
        work += c[i].work;
        bytes += c[i].bytes;
    }
    assert_true(c[3].work < c[0].work); /* in proportion to units */
    assert_true(work > 1.0 - 1e-12 && work < 1.0 + 1e-12);
    assert_true(bytes > 3.0 - 1e-12 && bytes < 3.0 + 1e-12);

    /* Exact division: no empty trailing chunk. */
    load.units = 12;
    assert_int_equal(hf_partition_even(NULL, &load, 3, NULL, 0), 4);
    load.units = 0;
    assert_int_equal(hf_partition_even(NULL, &load, 3, NULL, 0), 0);
}

/* With a small cap it writes cap chunks and still returns the full count. */
static void test_cap(void **state)
{
    (void)state;
    struct hf_load load = {.units = 10, .work = 10};
    struct hf_chunk c[3];
    memset(c, 0xab, sizeof c);
    assert_int_equal(hf_partition_even(NULL, &load, 1, c, 2), 10);
    assert_int_equal(c[1].end, 2);
    assert_int_equal(c[2].index, (size_t)0xabababababababab); /* untouched */
}

/* A load near SIZE_MAX units does not overflow the chunk count. */
static void test_huge(void **state)
{
    (void)state;
    struct hf_load load = {.units = SIZE_MAX, .work = 1};
    assert_int_equal(hf_partition_even(NULL, &load, SIZE_MAX / 2, NULL, 0), 3);
    struct hf_chunk c[3];
    hf_partition_even(NULL, &load, SIZE_MAX / 2, c, 3);
    assert_int_equal(c[2].end, SIZE_MAX);
    assert_int_equal(c[2].begin, SIZE_MAX - 1);
}

/* grain 0 is misuse: HF_ASSERT_MSG aborts with a message (checked in a child). */
static void test_grain_zero_aborts(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        (void)!freopen("/dev/null", "w", stderr);
        struct hf_load load = {.units = 10};
        hf_partition_even(NULL, &load, 0, NULL, 0);
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGABRT);
}

static void test_bundle_merge(void **state)
{
    (void)state;
    struct hf_load load = {.units = 10, .work = 10, .bytes = 20};
    struct hf_chunk c[4];
    hf_partition_even(NULL, &load, 3, c, 4);
    struct hf_bundle b = {.device = 5};
    assert_int_equal(hf_bundle_merge(NULL, c + 1, 3, &b), 0);
    assert_int_equal(b.first, 1);
    assert_int_equal(b.count, 3);
    assert_int_equal(b.begin, 3);
    assert_int_equal(b.end, 10);
    assert_true(b.work > 7 - 1e-12 && b.work < 7 + 1e-12);
    assert_true(b.bytes > 14 - 1e-12 && b.bytes < 14 + 1e-12);
    assert_int_equal(b.device, 5); /* the caller's field */

    struct hf_chunk swapped[2] = {c[1], c[0]};
    hf_clear_error();
    assert_int_equal(hf_bundle_merge(NULL, swapped, 2, &b), HF_EINVAL);
    assert_non_null(strstr(hf_last_error(), "does not follow"));
    assert_int_equal(hf_bundle_merge(NULL, c, 0, &b), HF_EINVAL);
    assert_int_equal(hf_bundle_merge(NULL, NULL, 1, &b), HF_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grain_larger_than_units),
        cmocka_unit_test(test_short_last_chunk),
        cmocka_unit_test(test_cap),
        cmocka_unit_test(test_huge),
        cmocka_unit_test(test_grain_zero_aborts),
        cmocka_unit_test(test_bundle_merge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
