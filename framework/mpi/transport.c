/* transport.c - the rank transport: spans out, completions back, a broadcast,
 * a gather by ranges and an allreduce, every wait bounded by a deadline.
 *
 * DESIGN
 * ------
 * A blocking MPI call waits forever on a rank that hangs, and Open MPI's
 * mpirun only notices ranks that exit. So nothing here blocks inside MPI:
 * every operation is started nonblocking (MPI_Isend / MPI_Irecv / MPI_Ibcast /
 * MPI_Iallreduce) and completed by polling MPI_Test against a deadline
 * (wait_all below). Between polls the thread yields, and after the first
 * millisecond it sleeps 50 µs per poll: with more ranks than cores
 * (--oversubscribe on a 2-core VM) a spinning rank would steal the core the
 * rank it waits for needs.
 *
 * Spans are point-to-point: rank 0 sends a small fixed record to the worker
 * (TAG_SPAN) and collects completions from any source (TAG_DONE). Rank 0 keeps,
 * per rank, how many spans are outstanding and since when the oldest has waited,
 * so that a timeout names the rank that is late, not just "something hung".
 *
 * A collective cannot say which rank failed to join. So the collectives first
 * run an arrival step: every worker sends a small message to rank 0, which
 * waits for all of them under the deadline and names the ranks that did not
 * arrive. Only then the collective itself runs (still under the deadline, in
 * case a rank dies in between). This costs one message per rank per
 * collective; the broadcast is done once per run and the allreduce once per
 * round, so that is cheap next to a round.
 *
 * Records travel as bytes (MPI_BYTE): the ranks of one job run the same
 * binary on the same architecture, as hetfarm's nodes do.
 *
 * A failure breaks the transport: a request that timed out may still be
 * matched later, so nothing after it can be trusted. Later calls fail at once
 * with the first message, and the run should end with hf_mpi_abort().
 * The failure remembers the rank it waited for when there was one
 * (hf_mpi_failed_rank), for the record of a failed run. A signal
 * (hf_mpi_interrupt: mpirun ends every rank with SIGTERM when one dies)
 * fails every wait at its next poll, so that rank 0 can still write what it
 * has before mpirun's SIGKILL follows.
 */
#include "mpi/transport.h"

#include <mpi.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_SPAN = 1, TAG_DONE, TAG_ARRIVE, TAG_RANGES, TAG_DATA, TAG_RESULT };

struct hf_mpi {
    MPI_Comm comm;
    int rank, size;
    int finalize; /* hf_mpi_init called MPI_Init_thread */
    int multiple; /* MPI_THREAD_MULTIPLE was granted */
    double timeout_s;
    pthread_mutex_t lock;     /* broken/why: node threads of rank 0 may fail at once */
    int broken;               /* first error code, 0 while healthy */
    char why[512];            /* its message */
    int culprit;              /* the rank it names as late, -1 when none (hf_mpi_failed_rank) */
    int *outstanding;         /* rank 0: spans handed and not collected, per rank */
    double *waiting_since;    /* rank 0: when the oldest outstanding span was handed */
    MPI_Op u8_sum;            /* wrapping u8 sum (see hf_mpi_allreduce) */
    struct hf_mpi_span *last; /* rank 0: the last span handed, for the message */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Records the first failure, breaks the transport and returns the code. */
static int fail(struct hf_mpi *t, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct hf_mpi *t, int code, const char *fmt, ...)
{
    pthread_mutex_lock(&t->lock);
    if (!t->broken) {
        va_list ap;
        va_start(ap, fmt);
        int n = snprintf(t->why, sizeof t->why, "[rank %d] ", t->rank);
        vsnprintf(t->why + n, sizeof t->why - (size_t)n, fmt, ap);
        va_end(ap);
        t->broken = code;
    }
    int rc = hf_fail(t->broken, "%s", t->why);
    pthread_mutex_unlock(&t->lock);
    return rc;
}

/* Names `rank` as the one the failure about to be recorded waited for; only
 * the first failure's rank counts. */
static void blame(struct hf_mpi *t, int rank)
{
    pthread_mutex_lock(&t->lock);
    if (!t->broken && t->culprit < 0)
        t->culprit = rank;
    pthread_mutex_unlock(&t->lock);
}

int hf_mpi_failed_rank(hf_mpi_t t)
{
    pthread_mutex_lock(&t->lock);
    int r = t->broken ? t->culprit : -1;
    pthread_mutex_unlock(&t->lock);
    return r;
}

/* The signal that asked every wait to stop (hf_mpi_interrupt), 0 while none. */
static int interrupted;

void hf_mpi_interrupt(int sig)
{
    __atomic_store_n(&interrupted, sig > 0 ? sig : 1, __ATOMIC_SEQ_CST);
}

/* Fails a wait that a signal interrupted, its requests cancelled first: the
 * process is ending, and a late message must not land in a buffer given up. */
static int interrupted_wait(struct hf_mpi *t, MPI_Request *req, int n, const char *what);

/* Fails a call on a broken transport with the first message. */
static int check_broken(struct hf_mpi *t)
{
    pthread_mutex_lock(&t->lock);
    int rc = t->broken ? hf_fail(t->broken, "%s", t->why) : 0;
    pthread_mutex_unlock(&t->lock);
    return rc;
}

static int mpi_fail(struct hf_mpi *t, int rc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, s, &len);
    return fail(t, HF_EIO, "%s failed: %s", what, s);
}

/* Gives the core away while waiting: yield during the first millisecond (a
 * reply on a quiet machine comes in microseconds), then sleep briefly. */
static void pause_poll(double started)
{
    if (now_s() - started < 1e-3) {
        sched_yield();
    } else {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}

/* Cancels and frees the requests still pending after a timeout, so that a
 * late message does not land in a buffer the caller has given up. */
static void cancel_all(MPI_Request *req, int n)
{
    for (int i = 0; i < n; i++)
        if (req[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&req[i]);
            MPI_Request_free(&req[i]);
        }
}

/* Completes n requests by polling until `deadline`. Returns 0, or 1 with
 * *late set to the index of the first incomplete request, or a negative MPI
 * failure. Completed requests become MPI_REQUEST_NULL. */
static int wait_all(struct hf_mpi *t, MPI_Request *req, int n, double deadline, int *late,
                    const char *what)
{
    double started = now_s();
    for (;;) {
        int pending = -1;
        for (int i = 0; i < n; i++) {
            if (req[i] == MPI_REQUEST_NULL)
                continue;
            int done = 0, rc = MPI_Test(&req[i], &done, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                return mpi_fail(t, rc, what);
            if (!done && pending < 0)
                pending = i;
        }
        if (pending < 0)
            return 0;
        if (__atomic_load_n(&interrupted, __ATOMIC_SEQ_CST))
            return interrupted_wait(t, req, n, what);
        if (now_s() > deadline) {
            *late = pending;
            return 1;
        }
        pause_poll(started);
    }
}

static int interrupted_wait(struct hf_mpi *t, MPI_Request *req, int n, const char *what)
{
    cancel_all(req, n);
    int sig = __atomic_load_n(&interrupted, __ATOMIC_SEQ_CST);
    return fail(t, HF_EINTR, "%s: interrupted by signal %d%s", what, sig,
                sig == SIGTERM ? " (SIGTERM: mpirun sends it to every rank when one of them "
                                 "dies, and its own message names that rank)" : "");
}

/* Sum of bytes modulo 256, as C's unsigned arithmetic does it. */
static void u8_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const uint8_t *a = in;
    uint8_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (uint8_t)(b[i] + a[i]);
}

int hf_mpi_init(hf_mpi_t *out, int *argc, char ***argv, double timeout_s)
{
    HF_ASSERT_MSG(out != NULL && timeout_s > 0, "hf_mpi_init: NULL handle or timeout <= 0");
    *out = NULL;
    struct hf_mpi *t = calloc(1, sizeof *t);
    if (t == NULL)
        return hf_fail(HF_ENOMEM, "hf_mpi_init: out of memory");
    t->timeout_s = timeout_s;
    t->culprit = -1;
    pthread_mutex_init(&t->lock, NULL);
    int inited = 0, provided = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        /* Rank 0's node devices talk to their ranks from their own host
         * threads, side by side (framework/mpi/README.md). */
        int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
        if (rc != MPI_SUCCESS) {
            free(t);
            return hf_fail(HF_EIO, "MPI_Init_thread failed (code %d)", rc);
        }
        t->finalize = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    t->multiple = provided >= MPI_THREAD_MULTIPLE;
    /* Errors come back as codes, mapped to HF_EIO, instead of aborting the job. */
    MPI_Comm_dup(MPI_COMM_WORLD, &t->comm);
    MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(t->comm, &t->rank);
    MPI_Comm_size(t->comm, &t->size);
    MPI_Op_create(u8_sum, 1, &t->u8_sum);
    t->outstanding = calloc((size_t)t->size, sizeof *t->outstanding);
    t->waiting_since = calloc((size_t)t->size, sizeof *t->waiting_since);
    t->last = calloc((size_t)t->size, sizeof *t->last);
    if (!t->outstanding || !t->waiting_since || !t->last) {
        hf_mpi_destroy(t);
        return hf_fail(HF_ENOMEM, "hf_mpi_init: out of memory");
    }
    *out = t;
    return 0;
}

void hf_mpi_destroy(hf_mpi_t t)
{
    if (t == NULL)
        return;
    MPI_Op_free(&t->u8_sum);
    MPI_Comm_free(&t->comm);
    if (t->finalize)
        MPI_Finalize();
    free(t->outstanding);
    free(t->waiting_since);
    free(t->last);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

int hf_mpi_threads_ok(hf_mpi_t t)
{
    return t->multiple;
}

_Noreturn void hf_mpi_abort(hf_mpi_t t, int code)
{
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(t ? t->comm : MPI_COMM_WORLD, code);
    abort(); /* MPI_Abort does not return; this only tells the compiler */
}

int hf_mpi_rank(hf_mpi_t t)
{
    return t->rank;
}
int hf_mpi_size(hf_mpi_t t)
{
    return t->size;
}
double hf_mpi_timeout(hf_mpi_t t)
{
    return t->timeout_s;
}

void hf_mpi_set_timeout(hf_mpi_t t, double timeout_s)
{
    HF_ASSERT_MSG(timeout_s > 0, "hf_mpi_set_timeout: timeout <= 0");
    t->timeout_s = timeout_s;
}

int hf_mpi_outstanding(hf_mpi_t t, int rank)
{
    HF_ASSERT_MSG(rank >= 0 && rank < t->size, "hf_mpi_outstanding: no such rank");
    return t->outstanding[rank];
}

/* Sends one small record and waits for the send to complete (it does at once
 * for eager-sized records unless the network is stuck). */
static int send_record(struct hf_mpi *t, const void *rec, int bytes, int to, int tag,
                       const char *what)
{
    MPI_Request req;
    int rc = MPI_Isend(rec, bytes, MPI_BYTE, to, tag, t->comm, &req), late = 0;
    if (rc != MPI_SUCCESS)
        return mpi_fail(t, rc, what);
    rc = wait_all(t, &req, 1, now_s() + t->timeout_s, &late, what);
    if (rc == 1) {
        cancel_all(&req, 1);
        blame(t, to);
        return fail(t, HF_EDEVICE, "%s: rank %d did not take the message within %.3g s", what, to,
                    t->timeout_s);
    }
    return rc;
}

int hf_mpi_hand(hf_mpi_t t, int rank, const struct hf_mpi_span *span)
{
    HF_ASSERT_MSG(t->rank == 0 && rank > 0 && rank < t->size,
                  "hf_mpi_hand: only rank 0 hands spans, to ranks 1 .. size-1");
    int rc = check_broken(t);
    if (rc == 0)
        rc = send_record(t, span, (int)sizeof *span, rank, TAG_SPAN, "handing a span");
    if (rc != 0)
        return rc;
    if (span->stop || span->kind != HF_MPI_RUN)
        return 0; /* a stop, draw or update record has no completion to wait for */
    if (t->outstanding[rank]++ == 0)
        t->waiting_since[rank] = now_s();
    t->last[rank] = *span;
    return 0;
}

int hf_mpi_collect(hf_mpi_t t, int *rank, struct hf_mpi_done *done)
{
    HF_ASSERT_MSG(t->rank == 0, "hf_mpi_collect: only rank 0 collects");
    int any = 0;
    for (int r = 1; r < t->size; r++)
        any |= t->outstanding[r] > 0;
    HF_ASSERT_MSG(any, "hf_mpi_collect: no span is outstanding");
    int rc = check_broken(t);
    if (rc != 0)
        return rc;
    MPI_Request req;
    MPI_Status st;
    rc = MPI_Irecv(done, (int)sizeof *done, MPI_BYTE, MPI_ANY_SOURCE, TAG_DONE, t->comm, &req);
    if (rc != MPI_SUCCESS)
        return mpi_fail(t, rc, "collecting a completion");
    double started = now_s();
    for (;;) {
        int flag = 0;
        rc = MPI_Test(&req, &flag, &st);
        if (rc != MPI_SUCCESS)
            return mpi_fail(t, rc, "collecting a completion");
        if (flag)
            break;
        /* The late rank is the one whose oldest outstanding span waited longest. */
        double now = now_s();
        int late = -1;
        for (int r = 1; r < t->size; r++)
            if (t->outstanding[r] > 0 && now - t->waiting_since[r] > t->timeout_s &&
                (late < 0 || t->waiting_since[r] < t->waiting_since[late]))
                late = r;
        if (late > 0) {
            cancel_all(&req, 1);
            const struct hf_mpi_span *s = &t->last[late];
            blame(t, late);
            return fail(t, HF_EDEVICE,
                        "rank %d reported nothing within %.3g s (hung or dead); %d span(s) "
                        "outstanding, the last [%llu, %llu) of round %d",
                        late, t->timeout_s, t->outstanding[late], (unsigned long long)s->first,
                        (unsigned long long)(s->first + s->count), (int)s->round);
        }
        if (__atomic_load_n(&interrupted, __ATOMIC_SEQ_CST))
            return interrupted_wait(t, &req, 1, "collecting a completion");
        pause_poll(started);
    }
    int src = st.MPI_SOURCE;
    if (src <= 0 || src >= t->size || t->outstanding[src] == 0)
        return fail(t, HF_EIO, "a completion came from rank %d, which had no span", src);
    *rank = src;
    /* A rank works its spans one after the other: the clock of its next one
     * starts when this one is reported. */
    if (--t->outstanding[src] > 0)
        t->waiting_since[src] = now_s();
    return 0;
}

int hf_mpi_wait_span(hf_mpi_t t, struct hf_mpi_span *span)
{
    HF_ASSERT_MSG(t->rank != 0, "hf_mpi_wait_span: rank 0 hands spans, it does not wait for them");
    int rc = check_broken(t), late = 0;
    if (rc != 0)
        return rc;
    MPI_Request req;
    rc = MPI_Irecv(span, (int)sizeof *span, MPI_BYTE, 0, TAG_SPAN, t->comm, &req);
    if (rc != MPI_SUCCESS)
        return mpi_fail(t, rc, "waiting for a span");
    rc = wait_all(t, &req, 1, now_s() + t->timeout_s, &late, "waiting for a span");
    if (rc == 1) {
        cancel_all(&req, 1);
        return fail(t, HF_EDEVICE, "rank 0 handed no span within %.3g s (hung or dead)",
                    t->timeout_s);
    }
    return rc;
}

int hf_mpi_report(hf_mpi_t t, const struct hf_mpi_done *done)
{
    HF_ASSERT_MSG(t->rank != 0, "hf_mpi_report: only worker ranks report");
    int rc = check_broken(t);
    return rc ? rc : send_record(t, done, (int)sizeof *done, 0, TAG_DONE, "reporting a span");
}

int hf_mpi_collect_from(hf_mpi_t t, int rank, struct hf_mpi_done *done)
{
    HF_ASSERT_MSG(t->rank == 0 && rank > 0 && rank < t->size && t->outstanding[rank] > 0,
                  "hf_mpi_collect_from: only rank 0 collects, from a rank with a span out");
    int rc = check_broken(t), late = 0;
    if (rc != 0)
        return rc;
    MPI_Request req;
    rc = MPI_Irecv(done, (int)sizeof *done, MPI_BYTE, rank, TAG_DONE, t->comm, &req);
    if (rc != MPI_SUCCESS)
        return mpi_fail(t, rc, "collecting a completion");
    char what[64];
    snprintf(what, sizeof what, "collecting rank %d's completion", rank);
    rc = wait_all(t, &req, 1, t->waiting_since[rank] + t->timeout_s, &late, what);
    if (rc == 1) {
        cancel_all(&req, 1);
        const struct hf_mpi_span *s = &t->last[rank];
        blame(t, rank);
        return fail(t, HF_EDEVICE,
                    "rank %d reported nothing within %.3g s (hung or dead); the span [%llu, %llu) "
                    "of round %d was outstanding",
                    rank, t->timeout_s, (unsigned long long)s->first,
                    (unsigned long long)(s->first + s->count), (int)s->round);
    }
    if (rc == 0 && --t->outstanding[rank] > 0)
        t->waiting_since[rank] = now_s();
    return rc;
}

/* Bytes between rank 0 and a worker (TAG_RESULT, either direction: the
 * source tells them apart), in pieces of at most 1 GiB (MPI counts are ints). */
static int move_bytes(struct hf_mpi *t, int send, int peer, void *buf, size_t bytes)
{
    const char *what = send ? "sending bytes" : "receiving bytes";
    int rc = check_broken(t), late = 0;
    for (size_t off = 0; rc == 0 && off < bytes;) {
        size_t piece = bytes - off < ((size_t)1 << 30) ? bytes - off : (size_t)1 << 30;
        MPI_Request req;
        rc = send ? MPI_Isend((char *)buf + off, (int)piece, MPI_BYTE, peer, TAG_RESULT, t->comm,
                              &req)
                  : MPI_Irecv((char *)buf + off, (int)piece, MPI_BYTE, peer, TAG_RESULT, t->comm,
                              &req);
        if (rc != MPI_SUCCESS)
            return mpi_fail(t, rc, what);
        if ((rc = wait_all(t, &req, 1, now_s() + t->timeout_s, &late, what)) == 1) {
            cancel_all(&req, 1);
            blame(t, peer);
            return fail(t, HF_EDEVICE, "%s: rank %d did not %s %zu bytes within %.3g s", what,
                        peer, send ? "take" : "send", piece, t->timeout_s);
        }
        off += piece;
    }
    return rc;
}

int hf_mpi_send_results(hf_mpi_t t, const void *buf, size_t bytes)
{
    HF_ASSERT_MSG(t->rank != 0, "hf_mpi_send_results: only worker ranks send results");
    return move_bytes(t, 1, 0, (void *)buf, bytes);
}

int hf_mpi_recv_results(hf_mpi_t t, int rank, void *buf, size_t bytes)
{
    HF_ASSERT_MSG(t->rank == 0 && rank > 0 && rank < t->size,
                  "hf_mpi_recv_results: rank 0 receives, from a worker rank");
    return move_bytes(t, 0, rank, buf, bytes);
}

/* Exactly one side is rank 0 (checked: workers do not talk to each other). */
static void check_peer(const struct hf_mpi *t, int peer)
{
    HF_ASSERT_MSG(peer >= 0 && peer < t->size && (t->rank == 0) != (peer == 0),
                  "hf_mpi_send_bytes/recv_bytes: between rank 0 and a worker rank");
}

int hf_mpi_send_bytes(hf_mpi_t t, int peer, const void *buf, size_t bytes)
{
    check_peer(t, peer);
    return move_bytes(t, 1, peer, (void *)buf, bytes);
}

int hf_mpi_recv_bytes(hf_mpi_t t, int peer, void *buf, size_t bytes)
{
    check_peer(t, peer);
    return move_bytes(t, 0, peer, buf, bytes);
}

/* The arrival step before a collective (see DESIGN): workers send `payload`
 * (an int) to rank 0, which receives every rank's into `all` (size entries,
 * may be NULL when unused) and names the ranks that did not arrive. */
static int arrive(struct hf_mpi *t, int payload, int *all, const char *what)
{
    int rc = check_broken(t);
    if (rc != 0)
        return rc;
    if (t->rank != 0)
        return send_record(t, &payload, (int)sizeof payload, 0, TAG_ARRIVE, what);
    int n = t->size - 1, late = 0;
    if (n == 0)
        return 0;
    int *buf = all ? all : calloc((size_t)t->size, sizeof *buf);
    MPI_Request *req = malloc((size_t)n * sizeof *req);
    if (buf == NULL || req == NULL) {
        free(req);
        if (!all)
            free(buf);
        return hf_fail(HF_ENOMEM, "%s: out of memory", what);
    }
    for (int r = 1; r < t->size && rc == 0; r++) {
        rc = MPI_Irecv(&buf[r], 1, MPI_INT, r, TAG_ARRIVE, t->comm, &req[r - 1]);
        if (rc != MPI_SUCCESS)
            rc = mpi_fail(t, rc, what);
    }
    if (rc == 0)
        rc = wait_all(t, req, n, now_s() + t->timeout_s, &late, what);
    if (rc == 1) {
        char names[256] = "";
        size_t used = 0;
        for (int i = 0; i < n && used < sizeof names - 16; i++)
            if (req[i] != MPI_REQUEST_NULL) {
                int done = 0;
                MPI_Test(&req[i], &done, MPI_STATUS_IGNORE);
                if (!done)
                    used += (size_t)snprintf(names + used, sizeof names - used, "%s%d",
                                             used ? ", " : "", i + 1);
            }
        cancel_all(req, n);
        rc = fail(t, HF_EDEVICE, "%s: rank %s did not join within %.3g s (hung or dead)", what,
                  names, t->timeout_s);
    }
    free(req);
    if (!all)
        free(buf);
    return rc;
}

/* Runs a started collective to completion under the deadline. */
static int finish_collective(struct hf_mpi *t, int rc, MPI_Request *req, const char *what)
{
    int late = 0;
    if (rc != MPI_SUCCESS)
        return mpi_fail(t, rc, what);
    rc = wait_all(t, req, 1, now_s() + t->timeout_s, &late, what);
    if (rc == 1) {
        /* Collectives cannot be cancelled; the transport is broken anyway. */
        return fail(t, HF_EDEVICE, "%s did not complete within %.3g s (%s)", what, t->timeout_s,
                    t->rank == 0 ? "a rank left after joining" : "rank 0 or a peer hung or died");
    }
    return rc;
}

int hf_mpi_bcast(hf_mpi_t t, void *buf, size_t bytes)
{
    int rc = arrive(t, 0, NULL, "broadcast");
    for (size_t off = 0; rc == 0 && off < bytes;) {
        /* MPI counts are ints: a large blob goes in pieces of at most 1 GiB. */
        size_t piece = bytes - off < ((size_t)1 << 30) ? bytes - off : (size_t)1 << 30;
        MPI_Request req;
        rc = finish_collective(
            t, MPI_Ibcast((char *)buf + off, (int)piece, MPI_BYTE, 0, t->comm, &req), &req,
            "broadcast");
        off += piece;
    }
    return rc;
}

int hf_mpi_gather_ranges(hf_mpi_t t, void *buf, size_t elem, const struct hf_mpi_range *mine,
                         int nmine)
{
    HF_ASSERT_MSG(elem > 0 && nmine >= 0 && (nmine == 0 || mine != NULL),
                  "hf_mpi_gather_ranges: bad element size or ranges");
    int *counts = t->rank == 0 ? calloc((size_t)t->size, sizeof *counts) : NULL;
    if (t->rank == 0 && counts == NULL)
        return hf_fail(HF_ENOMEM, "gather: out of memory");
    for (int i = 0; i < nmine; i++)
        if (mine[i].count > (uint64_t)INT_MAX / elem) {
            free(counts);
            return hf_fail(HF_ERANGE, "gather: range [%llu, +%llu) is over 2 GiB",
                           (unsigned long long)mine[i].first, (unsigned long long)mine[i].count);
        }
    int rc = arrive(t, nmine, counts, "gather");
    if (rc != 0) {
        free(counts);
        return rc;
    }
    int late = 0;
    if (t->rank != 0) {
        /* The range list, then each range's bytes, in the same order. */
        MPI_Request *req = malloc((size_t)(nmine + 1) * sizeof *req);
        if (req == NULL)
            return hf_fail(HF_ENOMEM, "gather: out of memory");
        rc =
            MPI_Isend(mine, (int)(nmine * sizeof *mine), MPI_BYTE, 0, TAG_RANGES, t->comm, &req[0]);
        for (int i = 0; i < nmine && rc == MPI_SUCCESS; i++)
            rc = MPI_Isend((char *)buf + mine[i].first * elem, (int)(mine[i].count * elem),
                           MPI_BYTE, 0, TAG_DATA, t->comm, &req[i + 1]);
        if (rc != MPI_SUCCESS)
            rc = mpi_fail(t, rc, "gather");
        else if ((rc = wait_all(t, req, nmine + 1, now_s() + t->timeout_s, &late, "gather")) == 1)
            rc = fail(t, HF_EDEVICE, "gather: rank 0 did not take the results within %.3g s",
                      t->timeout_s);
        free(req);
        return rc;
    }
    /* Rank 0: per rank, its range list, then its ranges straight into place. */
    for (int r = 1; r < t->size && rc == 0; r++) {
        int n = counts[r];
        struct hf_mpi_range *rs = malloc((size_t)(n > 0 ? n : 1) * sizeof *rs);
        MPI_Request *req = malloc((size_t)(n > 0 ? n : 1) * sizeof *req);
        if (rs == NULL || req == NULL) {
            free(rs), free(req), free(counts);
            return hf_fail(HF_ENOMEM, "gather: out of memory");
        }
        double deadline = now_s() + t->timeout_s;
        rc = MPI_Irecv(rs, (int)(n * sizeof *rs), MPI_BYTE, r, TAG_RANGES, t->comm, &req[0]);
        if (rc != MPI_SUCCESS)
            rc = mpi_fail(t, rc, "gather");
        else if ((rc = wait_all(t, req, 1, deadline, &late, "gather")) == 1)
            rc = fail(t, HF_EDEVICE, "gather: rank %d did not send its ranges within %.3g s", r,
                      t->timeout_s);
        for (int i = 0; i < n && rc == 0; i++) {
            if (rs[i].count > (uint64_t)INT_MAX / elem)
                rc = fail(t, HF_ERANGE, "gather: rank %d sent a range over 2 GiB", r);
            else if ((rc = MPI_Irecv((char *)buf + rs[i].first * elem, (int)(rs[i].count * elem),
                                     MPI_BYTE, r, TAG_DATA, t->comm, &req[i])) != MPI_SUCCESS)
                rc = mpi_fail(t, rc, "gather");
        }
        if (rc == 0 && (rc = wait_all(t, req, n, deadline, &late, "gather")) == 1) {
            cancel_all(req, n);
            rc =
                fail(t, HF_EDEVICE, "gather: rank %d did not send range [%llu, %llu) within %.3g s",
                     r, (unsigned long long)rs[late].first,
                     (unsigned long long)(rs[late].first + rs[late].count), t->timeout_s);
        }
        free(rs);
        free(req);
    }
    free(counts);
    return rc;
}

/* MPI's datatype for an element type, or MPI_DATATYPE_NULL. */
static MPI_Datatype mpi_type(enum hf_elem type)
{
    switch (type) {
    case HF_ELEM_U8:
        return MPI_UINT8_T;
    case HF_ELEM_I32:
        return MPI_INT32_T;
    case HF_ELEM_U32:
        return MPI_UINT32_T;
    case HF_ELEM_F32:
        return MPI_FLOAT;
    case HF_ELEM_I64:
        return MPI_INT64_T;
    case HF_ELEM_U64:
        return MPI_UINT64_T;
    case HF_ELEM_F64:
        return MPI_DOUBLE;
    }
    return MPI_DATATYPE_NULL;
}

int hf_mpi_allreduce(hf_mpi_t t, void *vec, size_t n, enum hf_elem type, enum hf_mpi_op op)
{
    MPI_Datatype dt = mpi_type(type);
    if (dt == MPI_DATATYPE_NULL)
        return hf_fail(HF_EINVAL, "allreduce: unknown element type %d", (int)type);
    if (op == HF_MPI_OR && (type == HF_ELEM_F32 || type == HF_ELEM_F64))
        return hf_fail(HF_EINVAL, "allreduce: OR of floating-point elements");
    if (n > INT_MAX)
        return hf_fail(HF_ERANGE, "allreduce: %zu elements (at most INT_MAX)", n);
    MPI_Op mop = op == HF_MPI_MIN ? MPI_MIN : op == HF_MPI_SUM ? MPI_SUM : MPI_BOR;
    /* Open MPI 4.1.4's built-in MPI_SUM on MPI_UINT8_T saturates at 255 (its
     * AVX op component; caught by tests/test_mpi_transport.c) where C wraps
     * modulo 256: bytes are summed by our own op instead. */
    if (op == HF_MPI_SUM && type == HF_ELEM_U8)
        mop = t->u8_sum;
    int rc = arrive(t, 0, NULL, "allreduce");
    if (rc != 0)
        return rc;
    MPI_Request req;
    return finish_collective(t, MPI_Iallreduce(MPI_IN_PLACE, vec, (int)n, dt, mop, t->comm, &req),
                             &req, "allreduce");
}
