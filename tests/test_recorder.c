/* test_recorder.c - the host's change list of a shared array (core/recorder.c):
 * every element recorded once whatever the number of threads and repeats,
 * seal squeezes out unfilled block tails, clear forgets, and a list filled to
 * the last element by many threads does not overflow; lists long enough for
 * the parallel seal and clear keep all of that. The short cases run under
 * TSan too; the million-element one uses the caller's OpenMP team, whose
 * barriers TSan cannot see (and takes minutes there).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <omp.h>

#include "core/recorder.h"

/* Checks that list[0, count) holds exactly the elements flagged in want. */
static void expect_set(const struct hf__recorder *r, const uint8_t *want, size_t n)
{
    uint8_t *seen = calloc(n, 1);
    size_t expected = 0;
    for (size_t i = 0; i < n; i++)
        expected += want[i];
    assert_int_equal(r->count, expected);
    const uint32_t *list = hf__recorder_list(r);
    for (size_t k = 0; k < r->count; k++) {
        uint32_t i = list[k];
        assert_true(i < n);
        assert_true(want[i]);
        assert_false(seen[i]); /* once */
        seen[i] = 1;
    }
    free(seen);
}

static void many_threads_record_each_element_once(void **state)
{
    (void)state;
    enum { N = 100003 };
    struct hf__recorder r;
    assert_int_equal(hf__recorder_init(&r, N), 0);
    uint8_t *want = calloc(N, 1);
    for (size_t i = 0; i < N; i += 3)
        want[i] = 1;
    for (int round = 0; round < 3; round++) {
#pragma omp parallel for num_threads(4) schedule(dynamic, 97)
        for (long k = 0; k < 4L * N; k++) { /* every element four times, from any thread */
            size_t i = (size_t)(k % N);
            if (want[i])
                hf__recorder_add(&r, i);
        }
        hf__recorder_seal(&r);
        expect_set(&r, want, N);
        /* More adds after a seal, then another seal (what the merge does). */
        hf__recorder_add(&r, 1);
        hf__recorder_add(&r, 3); /* already there */
        hf__recorder_seal(&r);
        want[1] = 1;
        expect_set(&r, want, N);
        want[1] = 0;
        hf__recorder_clear(&r);
        assert_int_equal(r.count, 0);
        for (size_t w = 0; w < (N + 31) / 32; w++)
            assert_int_equal(r.bits[w], 0);
    }
    free(want);
    hf__recorder_free(&r);
}

/* Every element recorded, by many threads that each waste a block tail. */
static void a_full_list_does_not_overflow(void **state)
{
    (void)state;
    enum { N = 5000 };
    struct hf__recorder r;
    assert_int_equal(hf__recorder_init(&r, N), 0);
#pragma omp parallel for num_threads(8) schedule(static, 1)
    for (long i = 0; i < N; i++)
        hf__recorder_add(&r, (size_t)i);
    assert_int_equal(hf__recorder_seal(&r), N);
    uint8_t want[N];
    memset(want, 1, sizeof want);
    expect_set(&r, want, N);
    hf__recorder_free(&r);
}

/* Two recorders filled in turn by the same threads (MST records a
 * component's best edge and a vertex's settled flag one after the other):
 * each keeps its own block, so nothing is wasted and nothing overflows. */
static void two_recorders_in_turn(void **state)
{
    (void)state;
    enum { N = 200000 };
    struct hf__recorder a, b;
    assert_int_equal(hf__recorder_init(&a, N), 0);
    assert_int_equal(hf__recorder_init(&b, N), 0);
#pragma omp parallel for num_threads(4) schedule(dynamic, 7)
    for (long i = 0; i < N; i++) {
        hf__recorder_add(&a, (size_t)i);
        hf__recorder_add(&b, (size_t)(N - 1 - i));
    }
    assert_true(a.reserved <= (size_t)N + 4 * 256);
    assert_int_equal(hf__recorder_seal(&a), N);
    assert_int_equal(hf__recorder_seal(&b), N);
    hf__recorder_free(&a);
    hf__recorder_free(&b);
}

/* Lists long enough for the team's seal and clear (recorder.c's PAR_MIN):
 * a dense round (every element, so the clear zeroes the whole bitmap) and a
 * sparse one (one element in 20, so the clear zeroes words one by one), each
 * sealed, added to, sealed again, and cleared; then a round with no adds. */
static void long_lists_seal_and_clear_in_parallel(void **state)
{
    (void)state;
    enum { N = 1 << 20 };
    struct hf__recorder r;
    assert_int_equal(hf__recorder_init(&r, N), 0);
    uint8_t *want = calloc(N, 1);
    for (int round = 0; round < 4; round++) {
        size_t step = round % 2 == 0 ? 1 : 20;
        memset(want, 0, N);
        for (size_t i = round; i < N; i += step)
            want[i] = 1;
#pragma omp parallel for num_threads(4) schedule(dynamic, 1000)
        for (long k = 0; k < 2L * N; k++) /* twice each, block tails left unfilled */
            if (want[k % N])
                hf__recorder_add(&r, (size_t)(k % N));
        size_t n = hf__recorder_seal(&r);
        expect_set(&r, want, N);
        assert_int_equal(hf__recorder_seal(&r), n); /* nothing added since */
        expect_set(&r, want, N);
        size_t extra = want[N - 1] ? 0 : N - 1;
        if (extra) {
            hf__recorder_add(&r, extra);
            want[extra] = 1;
        }
        hf__recorder_seal(&r);
        expect_set(&r, want, N);
        for (size_t k = r.count; k < r.cap; k++) /* beyond the list: free slots */
            assert_true(r.list[k] == UINT32_MAX);
        hf__recorder_clear(&r);
        assert_int_equal(r.count, 0);
        for (size_t w = 0; w < (N + 31) / 32; w++)
            assert_int_equal(r.bits[w], 0);
        for (size_t k = 0; k < r.cap; k++)
            assert_true(r.list[k] == UINT32_MAX);
    }
    assert_int_equal(hf__recorder_seal(&r), 0);
    free(want);
    hf__recorder_free(&r);
}

/* A list taken at once (a GPU's sole bundle, core/shared.c) is what adds and
 * a seal would give: each element once, in the given order, read in place; a
 * seal changes nothing; clear forgets it and the recorder records again. Short and long
 * (parallel) lists. */
static void a_taken_list_is_recorded_once(void **state)
{
    (void)state;
    static const size_t sizes[] = {1000, 1u << 20};
    for (int t = 0; t < 2; t++) {
        size_t N = sizes[t], n = 0;
        struct hf__recorder r;
        assert_int_equal(hf__recorder_init(&r, N), 0);
        uint8_t *want = calloc(N, 1);
        uint32_t *idx = malloc(N * sizeof *idx);
        for (size_t i = N; i-- > 0;) /* descending, every 7th: the order must be kept */
            if (i % 7 == 2)
                want[i] = 1, idx[n++] = (uint32_t)i;
        hf__recorder_take(&r, idx, n);
        expect_set(&r, want, N);
        for (size_t k = 0; k < n; k++)
            assert_int_equal(hf__recorder_list(&r)[k], idx[k]);
        assert_ptr_equal(hf__recorder_list(&r), idx); /* read in place */
        assert_int_equal(hf__recorder_seal(&r), n);
        expect_set(&r, want, N);
        hf__recorder_clear(&r);
        assert_int_equal(r.count, 0);
        for (size_t w = 0; w < (N + 31) / 32; w++)
            assert_int_equal(r.bits[w], 0);
        memset(want, 0, N);
        want[3] = want[N - 1] = 1;
        hf__recorder_add(&r, 3);
        hf__recorder_add(&r, N - 1);
        hf__recorder_add(&r, 3);
        hf__recorder_seal(&r);
        expect_set(&r, want, N);
        free(idx);
        free(want);
        hf__recorder_free(&r);
    }
}

/* Three bundles' lists, each without repeats but overlapping one another (a
 * GPU's round-0 profile), recorded at once: each element once, its bit set,
 * so that a later add of it adds nothing and a new one is added; clear
 * forgets all. A short list (adds) and long ones of a size that is not a
 * whole number of bitmap words (the pieces). */
static void many_lists_with_repeats_are_recorded_once(void **state)
{
    (void)state;
    static const size_t sizes[] = {1000, (1u << 20) + 13, (1u << 22) + 7};
    for (int t = 0; t < 3; t++) {
        size_t N = sizes[t], n = 0;
        struct hf__recorder r;
        assert_int_equal(hf__recorder_init(&r, N), 0);
        uint8_t *want = calloc(N, 1);
        uint32_t *idx = malloc(3 * N * sizeof *idx);
        for (size_t i = 0; i < N; i++)
            if (i % 3 == 0)
                want[i] = 1, idx[n++] = (uint32_t)i;
        for (size_t i = N; i-- > 0;)
            if (i % 5 == 1)
                want[i] = 1, idx[n++] = (uint32_t)i;
        for (size_t i = 0; i < N; i += 6)
            idx[n++] = (uint32_t)i;
        assert_int_equal(hf__recorder_add_many(&r, idx, n), 0);
        expect_set(&r, want, N);
        size_t count = r.count, last = N - 1;
        while (want[last]) /* the last element not recorded */
            last--;
        hf__recorder_add(&r, 0); /* recorded: nothing added */
        hf__recorder_add(&r, last);
        want[last] = 1;
        assert_int_equal(hf__recorder_seal(&r), count + 1);
        expect_set(&r, want, N);
        hf__recorder_clear(&r);
        assert_int_equal(r.count, 0);
        for (size_t w = 0; w < (N + 31) / 32; w++)
            assert_int_equal(r.bits[w], 0);
        free(idx);
        free(want);
        hf__recorder_free(&r);
    }
}

/* A list longer than the recorder's room (every element twice and a third
 * of them once more): recorded window by window, each element once, and the
 * spare list is left full of sentinels (a parallel seal later squeezes into
 * it). */
static void a_list_longer_than_the_room(void **state)
{
    (void)state;
    size_t N = (1u << 20) + 13, n = 0;
    struct hf__recorder r;
    assert_int_equal(hf__recorder_init(&r, N), 0);
    uint32_t *idx = malloc(3 * N * sizeof *idx);
    uint8_t *want = malloc(N);
    memset(want, 1, N);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < N; i++)
            idx[n++] = (uint32_t)(pass ? N - 1 - i : i);
    for (size_t i = 0; i < N; i += 3)
        idx[n++] = (uint32_t)i;
    assert_true(n > r.cap);
    assert_int_equal(hf__recorder_add_many(&r, idx, n), 0);
    expect_set(&r, want, N);
    for (size_t k = 0; k < r.cap; k++)
        if (r.spare[k] != UINT32_MAX)
            fail_msg("spare slot %zu holds %u", k, r.spare[k]);
    hf__recorder_clear(&r);
    assert_int_equal(r.count, 0);
    free(idx);
    free(want);
    hf__recorder_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_threads_record_each_element_once),
        cmocka_unit_test(a_full_list_does_not_overflow),
        cmocka_unit_test(two_recorders_in_turn),
        cmocka_unit_test(long_lists_seal_and_clear_in_parallel),
        cmocka_unit_test(a_taken_list_is_recorded_once),
        cmocka_unit_test(many_lists_with_repeats_are_recorded_once),
        cmocka_unit_test(a_list_longer_than_the_room),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
