/* test_mpi_transport.c - the rank transport (framework/mpi/) under 3 ranks.
 *
 * Run plainly (as `make test` does), the program starts itself again under
 * $HF_MPIRUN with 3 ranks (`timeout 90` around it, so that a hang fails the
 * test instead of stalling the suite); built without MPI it skips (exit 77).
 * Every rank runs the same cmocka group; each test is collective, rank 0
 * checking what the transport delivered and the workers playing their part.
 *
 *   spans      a few thousand spans of uneven sizes, handed out dynamically to
 *              ranks 1 and 2: every chunk ran exactly once (rank 0's ledger,
 *              and the workers' own per-chunk counts summed by allreduce), each
 *              completion matches a span handed to that rank, statuses pass
 *              through unchanged, and a stop record ends the workers
 *   bcast      1 MiB + 3 bytes replicated from rank 0
 *   gather     ranges of a result array filled by different ranks land in place
 *   allreduce  min / sum / or on every element type; OR on floats is refused
 *   hung rank  (last, with short deadlines) rank 2 sleeps past the deadline in a
 *              span and later before a collective: rank 0 fails with HF_EDEVICE
 *              within the deadline (+ slack) with a message naming rank 2, and
 *              a worker waiting for a span that never comes names rank 0
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "hetfarm.h"

#ifndef HF_HAVE_MPI
int main(void)
{
    printf("built without MPI (make HAVE_MPI= or no pkg-config ompi-c)\n");
    return 77;
}
#else
#include "mpi/transport.h"

static hf_mpi_t T;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

enum { NSPANS = 3000, PER_RANK = 2 };

/* Span i covers 1 + i % 7 chunks, so spans are uneven and the total is known. */
static uint64_t span_count(int i)
{
    return 1 + (uint64_t)(i % 7);
}

static void test_spans(void **state)
{
    (void)state;
    int rank = hf_mpi_rank(T), size = hf_mpi_size(T);
    uint64_t nchunks = 0;
    for (int i = 0; i < NSPANS; i++)
        nchunks += span_count(i);
    uint32_t *ran = calloc(nchunks, sizeof *ran); /* per chunk: how often this rank ran it */
    assert_non_null(ran);
    uint64_t spans_here = 0;
    if (rank == 0) {
        /* Per rank, the spans handed and not yet collected, in order. */
        struct hf_mpi_span(*fifo)[PER_RANK] = calloc((size_t)size, sizeof *fifo);
        int *head = calloc((size_t)size, sizeof *head);
        assert_non_null(fifo);
        assert_non_null(head);
        uint64_t next = 0;
        int handed = 0, collected = 0;
        while (collected < NSPANS) {
            for (int r = 1; r < size && handed < NSPANS; r++)
                while (hf_mpi_outstanding(T, r) < PER_RANK && handed < NSPANS) {
                    struct hf_mpi_span s = {.first = next, .count = span_count(handed), .round = handed / 1000};
                    int k = (head[r] + hf_mpi_outstanding(T, r)) % PER_RANK;
                    assert_int_equal(hf_mpi_hand(T, r, &s), 0);
                    fifo[r][k] = s;
                    next += s.count;
                    handed++;
                }
            int r = -1;
            struct hf_mpi_done d;
            assert_int_equal(hf_mpi_collect(T, &r, &d), 0);
            assert_true(r >= 1 && r < size);
            const struct hf_mpi_span *want = &fifo[r][head[r]];
            head[r] = (head[r] + 1) % PER_RANK;
            assert_int_equal(d.first, want->first);
            assert_int_equal(d.count, want->count);
            assert_int_equal(d.round, want->round);
            assert_true(d.busy_s >= 0);
            /* Workers fail every span starting at a multiple of 1000 on purpose. */
            assert_int_equal(d.status, d.first % 1000 == 0 ? HF_EAPP : 0);
            for (uint64_t c = d.first; c < d.first + d.count; c++)
                ran[c]++;
            collected++;
        }
        for (uint64_t c = 0; c < nchunks; c++)
            assert_int_equal(ran[c], 1);
        memset(ran, 0, nchunks * sizeof *ran); /* rank 0 ran nothing itself */
        struct hf_mpi_span stop = {.stop = 1};
        for (int r = 1; r < size; r++)
            assert_int_equal(hf_mpi_hand(T, r, &stop), 0);
        free(fifo);
        free(head);
    } else {
        for (;;) {
            struct hf_mpi_span s;
            assert_int_equal(hf_mpi_wait_span(T, &s), 0);
            if (s.stop)
                break;
            double t0 = now_s();
            for (uint64_t c = s.first; c < s.first + s.count; c++)
                ran[c]++;
            struct hf_mpi_done d = {s.first, s.count, now_s() - t0, s.round,
                                    s.first % 1000 == 0 ? HF_EAPP : 0};
            assert_int_equal(hf_mpi_report(T, &d), 0);
            spans_here++;
        }
        assert_true(spans_here > 0); /* both workers took part */
    }
    /* The workers' own view: summed over ranks, every chunk ran exactly once. */
    assert_int_equal(hf_mpi_allreduce(T, ran, nchunks, HF_ELEM_U32, HF_MPI_SUM), 0);
    for (uint64_t c = 0; c < nchunks; c++)
        assert_int_equal(ran[c], 1);
    assert_int_equal(hf_mpi_allreduce(T, &spans_here, 1, HF_ELEM_U64, HF_MPI_SUM), 0);
    assert_int_equal(spans_here, NSPANS);
    free(ran);
}

static void test_bcast(void **state)
{
    (void)state;
    size_t n = ((size_t)1 << 20) + 3;
    unsigned char *buf = malloc(n);
    assert_non_null(buf);
    for (size_t i = 0; i < n; i++)
        buf[i] = hf_mpi_rank(T) == 0 ? (unsigned char)(i * 31 + 7) : 0;
    assert_int_equal(hf_mpi_bcast(T, buf, n), 0);
    for (size_t i = 0; i < n; i++)
        if (buf[i] != (unsigned char)(i * 31 + 7))
            fail_msg("rank %d: byte %zu is %u", hf_mpi_rank(T), i, buf[i]);
    free(buf);
}

/* Update records and bytes both ways, as a run across nodes with shared data
 * uses them: rank 0 sends each worker an update record (no completion is
 * owed for it) and its bytes, the worker echoes the bytes back, each changed
 * by its rank, and a run span handed after it still completes in order. */
static void test_updates(void **state)
{
    (void)state;
    int rank = hf_mpi_rank(T), size = hf_mpi_size(T);
    enum { N = 100003 };
    uint32_t *buf = malloc(N * sizeof *buf);
    assert_non_null(buf);
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            struct hf_mpi_span u = {.kind = HF_MPI_UPDATE, .array = 3, .count = N, .indexed = 1};
            assert_int_equal(hf_mpi_hand(T, r, &u), 0);
            assert_int_equal(hf_mpi_outstanding(T, r), 0);
            for (uint32_t i = 0; i < N; i++)
                buf[i] = i * 7u + (uint32_t)r;
            assert_int_equal(hf_mpi_send_bytes(T, r, buf, N * sizeof *buf), 0);
            struct hf_mpi_span s = {.kind = HF_MPI_RUN, .first = 5, .count = 2, .round = 9};
            assert_int_equal(hf_mpi_hand(T, r, &s), 0);
            assert_int_equal(hf_mpi_outstanding(T, r), 1);
        }
        for (int r = 1; r < size; r++) {
            struct hf_mpi_done d;
            assert_int_equal(hf_mpi_collect_from(T, r, &d), 0);
            assert_int_equal(d.first, 5);
            assert_int_equal(d.round, 9);
            memset(buf, 0, N * sizeof *buf);
            assert_int_equal(hf_mpi_recv_bytes(T, r, buf, N * sizeof *buf), 0);
            for (uint32_t i = 0; i < N; i++)
                if (buf[i] != i * 7u + (uint32_t)r + 1000u * (uint32_t)r)
                    fail_msg("from rank %d: element %u is %u", r, i, buf[i]);
        }
    } else {
        struct hf_mpi_span u, s;
        assert_int_equal(hf_mpi_wait_span(T, &u), 0);
        assert_int_equal(u.kind, HF_MPI_UPDATE);
        assert_int_equal(u.array, 3);
        assert_int_equal(u.count, N);
        assert_int_equal(hf_mpi_recv_bytes(T, 0, buf, N * sizeof *buf), 0);
        assert_int_equal(hf_mpi_wait_span(T, &s), 0);
        assert_int_equal(s.kind, HF_MPI_RUN);
        struct hf_mpi_done d = {s.first, s.count, 0.0, s.round, 0};
        assert_int_equal(hf_mpi_report(T, &d), 0);
        for (uint32_t i = 0; i < N; i++)
            buf[i] += 1000u * (uint32_t)rank;
        assert_int_equal(hf_mpi_send_bytes(T, 0, buf, N * sizeof *buf), 0);
    }
    free(buf);
}

static double value_at(size_t i)
{
    return (double)i * 0.5 - 3.0;
}

static void test_gather(void **state)
{
    (void)state;
    enum { N = 10007, BLOCK = 97 };
    int rank = hf_mpi_rank(T), size = hf_mpi_size(T);
    double *buf = malloc(N * sizeof *buf);
    struct hf_mpi_range *mine = calloc(N / BLOCK + 1, sizeof *mine);
    assert_non_null(buf);
    assert_non_null(mine);
    int nmine = 0;
    for (size_t i = 0; i < N; i++)
        buf[i] = -1.0;
    /* Block b belongs to rank b % size; the last block is short. */
    for (size_t b = 0, first = 0; first < N; b++, first += BLOCK) {
        if ((int)(b % (size_t)size) != rank)
            continue;
        size_t count = N - first < BLOCK ? N - first : BLOCK;
        mine[nmine++] = (struct hf_mpi_range){first, count};
        for (size_t i = first; i < first + count; i++)
            buf[i] = value_at(i);
    }
    assert_int_equal(hf_mpi_gather_ranges(T, buf, sizeof *buf, mine, nmine), 0);
    if (rank == 0)
        for (size_t i = 0; i < N; i++)
            if (buf[i] != value_at(i))
                fail_msg("element %zu is %g, expected %g", i, buf[i], value_at(i));
    free(buf);
    free(mine);
}

/* Checks min / sum / or of `v(rank, i)` over ranks for one element type. */
#define CHECK_ALLREDUCE(type, elem, with_or)                                                       \
    do {                                                                                           \
        enum { N = 1000 };                                                                         \
        type a[N], want_min[N], want_sum[N], want_or[N];                                           \
        for (int op = 0; op < 3; op++) {                                                           \
            if (op == HF_MPI_OR && !(with_or))                                                     \
                continue;                                                                          \
            for (int i = 0; i < N; i++) {                                                          \
                want_min[i] = 0, want_sum[i] = 0, want_or[i] = 0;                                  \
                for (int r = 0; r < size; r++) {                                                   \
                    type v = (type)((i * 7 + r * 13) % 101);                                       \
                    if (r == 0 || v < want_min[i])                                                 \
                        want_min[i] = v;                                                           \
                    want_sum[i] = (type)(want_sum[i] + v);                                         \
                    if (with_or)                                                                   \
                        want_or[i] = (type)((uint64_t)want_or[i] | (uint64_t)v);                   \
                }                                                                                  \
                a[i] = (type)((i * 7 + rank * 13) % 101);                                          \
            }                                                                                      \
            assert_int_equal(hf_mpi_allreduce(T, a, N, elem, (enum hf_mpi_op)op), 0);              \
            const type *want = op == HF_MPI_MIN   ? want_min                                       \
                               : op == HF_MPI_SUM ? want_sum                                       \
                                                  : want_or;                                       \
            for (int i = 0; i < N; i++)                                                            \
                if (a[i] != want[i])                                                               \
                    fail_msg(#type " op %d element %d: %g, expected %g", op, i, (double)a[i],      \
                             (double)want[i]);                                                     \
        }                                                                                          \
    } while (0)

static void test_allreduce(void **state)
{
    (void)state;
    int rank = hf_mpi_rank(T), size = hf_mpi_size(T);
    CHECK_ALLREDUCE(uint8_t, HF_ELEM_U8, 1);
    CHECK_ALLREDUCE(int32_t, HF_ELEM_I32, 1);
    CHECK_ALLREDUCE(uint32_t, HF_ELEM_U32, 1);
    CHECK_ALLREDUCE(int64_t, HF_ELEM_I64, 1);
    CHECK_ALLREDUCE(uint64_t, HF_ELEM_U64, 1);
    CHECK_ALLREDUCE(float, HF_ELEM_F32, 0);
    CHECK_ALLREDUCE(double, HF_ELEM_F64, 0);
    double x = 1;
    hf_clear_error();
    assert_int_equal(hf_mpi_allreduce(T, &x, 1, HF_ELEM_F64, HF_MPI_OR), HF_EINVAL);
    assert_non_null(strstr(hf_last_error(), "OR of floating-point"));
}

/* Last: breaks the transports on purpose (short deadlines, rank 2 sleeping). */
static void test_hung_rank(void **state)
{
    (void)state;
    const double deadline = 0.5, slack = 0.5, nap = 2.0;
    int rank = hf_mpi_rank(T);
    hf_mpi_set_timeout(T, deadline);
    if (rank == 0) {
        struct hf_mpi_span s1 = {.first = 0, .count = 4, .round = 7},
                           s2 = {.first = 4, .count = 4, .round = 7};
        assert_int_equal(hf_mpi_hand(T, 1, &s1), 0);
        assert_int_equal(hf_mpi_hand(T, 2, &s2), 0);
        int r = -1;
        struct hf_mpi_done d;
        assert_int_equal(hf_mpi_collect(T, &r, &d), 0);
        assert_int_equal(r, 1);
        hf_clear_error();
        double t0 = now_s();
        assert_int_equal(hf_mpi_collect(T, &r, &d), HF_EDEVICE);
        double waited = now_s() - t0;
        printf("rank 0 gave up after %.3f s: %s\n", waited, hf_last_error());
        assert_true(waited < deadline + slack);
        assert_non_null(strstr(hf_last_error(), "rank 2 reported nothing"));
        assert_non_null(
            strstr(hf_last_error(), "1 span(s) outstanding, the last [4, 8) of round 7"));
        /* Broken: the next call fails at once with the same message. */
        hf_clear_error();
        t0 = now_s();
        assert_int_equal(hf_mpi_collect(T, &r, &d), HF_EDEVICE);
        assert_true(now_s() - t0 < 0.1);
        assert_non_null(strstr(hf_last_error(), "rank 2 reported nothing"));
    } else {
        struct hf_mpi_span s;
        assert_int_equal(hf_mpi_wait_span(T, &s), 0);
        if (rank == 2)
            sleep_s(nap); /* hung past rank 0's deadline */
        struct hf_mpi_done d = {s.first, s.count, 0.0, s.round, 0};
        assert_int_equal(hf_mpi_report(T, &d), 0);
        if (rank == 1) {
            /* Rank 0 hands nothing more: the worker names rank 0. */
            hf_clear_error();
            double t0 = now_s();
            assert_int_equal(hf_mpi_wait_span(T, &s), HF_EDEVICE);
            assert_true(now_s() - t0 < deadline + slack);
            assert_non_null(strstr(hf_last_error(), "rank 0 handed no span"));
        }
    }

    /* A collective that rank 2 joins late, on a second transport (the first is
     * broken on ranks 0 and 1). Rank 0 names rank 2 at the arrival step. */
    hf_mpi_t t2 = NULL;
    assert_int_equal(hf_mpi_init(&t2, NULL, NULL, deadline), 0);
    if (rank == 2)
        sleep_s(nap);
    uint64_t v = 1;
    hf_clear_error();
    double t0 = now_s();
    int rc = hf_mpi_allreduce(t2, &v, 1, HF_ELEM_U64, HF_MPI_SUM);
    double waited = now_s() - t0;
    assert_int_equal(rc, HF_EDEVICE); /* every rank: 0 at arrival, 1 and 2 in the collective */
    assert_true(waited < 2 * deadline + slack);
    if (rank == 0) {
        printf("rank 0 gave up after %.3f s: %s\n", waited, hf_last_error());
        assert_non_null(strstr(hf_last_error(), "allreduce: rank 2 did not join"));
    }
    hf_mpi_destroy(t2);
}

/* Re-executes this program under mpirun with 3 ranks (see the top comment). */
static int under_mpirun(const char *self)
{
    const char *mpirun = getenv("HF_MPIRUN");
    if (mpirun == NULL || mpirun[0] == '\0')
        mpirun = "mpirun --oversubscribe --allow-run-as-root";
    /* Under ASan (make asan), LeakSanitizer would fail every rank on Open MPI's
     * own allocations kept past MPI_Finalize: suppress those (and only those,
     * tests/lsan_openmpi.supp) unless the caller set its own options. The
     * variables are inherited by the ranks mpirun starts and are ignored by a
     * build without ASan. */
    char supp[4096];
    if (getenv("LSAN_OPTIONS") == NULL && realpath("tests/lsan_openmpi.supp", supp) != NULL) {
        char opt[4200];
        snprintf(opt, sizeof opt, "suppressions=%s", supp);
        setenv("LSAN_OPTIONS", opt, 0);
        if (getenv("ASAN_OPTIONS") == NULL)
            setenv("ASAN_OPTIONS", "fast_unwind_on_malloc=0", 0);
    }
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "command -v mpirun >/dev/null 2>&1 || { echo 'no mpirun (openmpi-bin)'; exit 77; }; "
             "exec timeout 90 %s -np 3 '%s'",
             mpirun, self);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    perror("execl /bin/sh");
    return 1;
}

int main(int argc, char **argv)
{
    if (getenv("OMPI_COMM_WORLD_SIZE") == NULL)
        return under_mpirun(argv[0]);
    if (hf_mpi_init(&T, &argc, &argv, 10.0) != 0) {
        fprintf(stderr, "hf_mpi_init: %s\n", hf_last_error());
        return 1;
    }
    if (hf_mpi_size(T) != 3) {
        fprintf(stderr, "test_mpi_transport wants 3 ranks, got %d\n", hf_mpi_size(T));
        hf_mpi_abort(T, 1);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spans),     cmocka_unit_test(test_updates),
        cmocka_unit_test(test_bcast),
        cmocka_unit_test(test_gather),    cmocka_unit_test(test_allreduce),
        cmocka_unit_test(test_hung_rank),
    };
    char name[32];
    snprintf(name, sizeof name, "mpi_transport rank %d", hf_mpi_rank(T));
    int failed = _cmocka_run_group_tests(name, tests, sizeof tests / sizeof tests[0], NULL, NULL);
    hf_mpi_destroy(T);
    return failed ? 1 : 0;
}
#endif
