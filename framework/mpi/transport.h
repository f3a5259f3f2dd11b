/* transport.h - hetfarm's rank transport over MPI: the primitives a run across
 * nodes needs (framework/mpi/README.md), each with a deadline.
 *
 * Built only when the Makefile finds Open MPI (HF_HAVE_MPI). The header is plain
 * C and does not include <mpi.h>: callers never touch MPI types.
 *
 * Errors (the HF_E* vocabulary of hetfarm.h):
 *   HF_EDEVICE  a rank did not answer within the deadline (hung or dead); the
 *               message names the rank ("rank 2 did not ...") and the
 *               transport is broken from then on: every later call fails at
 *               once with HF_EDEVICE, and the run should end with
 *               hf_mpi_abort() (a hung rank cannot take part in MPI_Finalize).
 *               A rank is a node-device to the top level, hence "device failed".
 *   HF_EIO      an MPI call itself returned an error (its MPI error string is
 *               in the message); the transport is broken as above.
 *   HF_EINVAL   a bad argument: an operation a type does not support (OR on
 *               floating point), an unknown element type.
 *   HF_ERANGE   a message larger than MPI's int count allows (2 GiB - 1 bytes
 *               per message).
 *   HF_ENOMEM   a host allocation failed.
 * Misuse (a worker-only call on rank 0, collecting with nothing outstanding)
 * stops with HF_ASSERT_MSG.
 */
#ifndef HF_MPI_TRANSPORT_H
#define HF_MPI_TRANSPORT_H

#include "hetfarm.h"

#include <stddef.h>
#include <stdint.h>

typedef struct hf_mpi *hf_mpi_t;

/* What a record from rank 0 to a worker asks (struct hf_mpi_span.kind). */
enum hf_mpi_kind {
    HF_MPI_RUN = 0, /* run chunks [first, first + count), units [begin, end) */
    HF_MPI_DRAW,    /* draw round `round`'s load, rank 0's `serial`-th draw */
    HF_MPI_UPDATE,  /* shared array `array` changed: bytes follow (see below) */
};

/* A record handed by rank 0 to a worker rank, by kind: HF_MPI_RUN: chunks
 * [first, first + count) (units [begin, end)) of round `round`, of the load
 * rank 0 drew as its `serial`-th (struct hf_load.serial); HF_MPI_DRAW: the
 * worker draws that load now (every load rank 0 draws, in order, so that an
 * app's next_load sees the same sequence on every rank); HF_MPI_UPDATE: rank
 * 0's values of shared array `array`, `count` elements, which follow as bytes
 * (hf_mpi_send_bytes): with `indexed` set first `count` uint32_t indices then
 * the values, else the values of elements [first, first + count). `stop` set
 * (and count 0) tells the worker there is no more. Only HF_MPI_RUN records
 * expect a completion. */
struct hf_mpi_span {
    uint64_t first, count, serial;
    uint64_t begin, end;
    int32_t round;
    int32_t stop;
    int32_t kind;
    int32_t array;
    int32_t indexed;
    int32_t pad;
};

/* A worker's completion of one span: the span, the seconds it was busy and its
 * status (0 or a negative HF_E* code, passed through to rank 0 unchanged). */
struct hf_mpi_done {
    uint64_t first, count;
    double busy_s;
    int32_t round;
    int32_t status;
};

/* A range of elements [first, first + count) of a result array. */
struct hf_mpi_range {
    uint64_t first, count;
};

enum hf_mpi_op { HF_MPI_MIN, HF_MPI_SUM, HF_MPI_OR };

/* Initialises MPI (asking for MPI_THREAD_MULTIPLE: rank 0's node devices
 * each talk to their own rank from their own thread) unless the program
 * already did, and opens the transport
 * on a private duplicate of MPI_COMM_WORLD. `timeout_s` (> 0) is the deadline
 * of every call that waits on another rank. `argc`/`argv` may be NULL.
 * Collective over MPI_COMM_WORLD (MPI_Comm_dup) and, unlike the calls below,
 * not bounded by the deadline: call it at start-up, on every rank. */
int hf_mpi_init(hf_mpi_t *t, int *argc, char ***argv, double timeout_s);
/* Closes the transport, and finalises MPI if hf_mpi_init initialised it. */
void hf_mpi_destroy(hf_mpi_t t);
/* Ends every rank of the job at once (MPI_Abort) with exit status `code`; for
 * a run that failed because a rank hung. Does not return. */
_Noreturn void hf_mpi_abort(hf_mpi_t t, int code);

int hf_mpi_rank(hf_mpi_t t);
int hf_mpi_size(hf_mpi_t t);
/* The deadline in seconds; it may be changed between calls. */
double hf_mpi_timeout(hf_mpi_t t);
void hf_mpi_set_timeout(hf_mpi_t t, double timeout_s);

/* Rank 0: hands `span` to worker rank `rank` (1 .. size-1). Several spans may
 * be outstanding per rank; each must be collected. A stop, draw or update
 * record is only sent: it has no completion. */
int hf_mpi_hand(hf_mpi_t t, int rank, const struct hf_mpi_span *span);
/* Rank 0: waits for the next completion from any rank with an outstanding
 * span; sets *rank and *done. Fails with HF_EDEVICE naming the rank whose
 * oldest outstanding span has waited longer than the deadline. */
int hf_mpi_collect(hf_mpi_t t, int *rank, struct hf_mpi_done *done);
/* Rank 0: waits for the next completion of worker `rank` alone (deadline:
 * timeout_s after its oldest outstanding span was handed). Threads may wait
 * on different ranks at once (rank 0's node devices do); a run uses either
 * this or hf_mpi_collect, not both. */
int hf_mpi_collect_from(hf_mpi_t t, int rank, struct hf_mpi_done *done);
/* Results of a span: a worker sends `bytes` bytes to rank 0, which receives
 * them from that worker in the same order (pieces of any size; each call
 * under the deadline). */
int hf_mpi_send_results(hf_mpi_t t, const void *buf, size_t bytes);
int hf_mpi_recv_results(hf_mpi_t t, int rank, void *buf, size_t bytes);
/* Bytes between rank 0 and worker `peer` in either direction (a worker names
 * rank 0, rank 0 names the worker): received in the order sent, pieces of any
 * size, each call under the deadline. The results calls above are these,
 * from a worker to rank 0; rank 0 sends a shared-data update's bytes with it. */
int hf_mpi_send_bytes(hf_mpi_t t, int peer, const void *buf, size_t bytes);
int hf_mpi_recv_bytes(hf_mpi_t t, int peer, void *buf, size_t bytes);
/* 1 when MPI granted MPI_THREAD_MULTIPLE (several threads may call the
 * point-to-point calls above at once, each for its own rank), else 0. */
int hf_mpi_threads_ok(hf_mpi_t t);
/* Number of spans handed to `rank` and not yet collected. */
int hf_mpi_outstanding(hf_mpi_t t, int rank);
/* After a failure: the rank it waited for in vain (a hang, a death, a
 * message not taken), or -1 when the failure names none (or there was none). */
int hf_mpi_failed_rank(hf_mpi_t t);
/* Makes every wait of every transport of the process fail with HF_EINTR at
 * its next poll ("interrupted by signal SIG"), its requests cancelled.
 * Async-signal-safe: for a SIGTERM/SIGINT handler (mpirun ends the job's
 * ranks with SIGTERM when one of them dies). */
void hf_mpi_interrupt(int sig);

/* Worker: waits for the next span from rank 0 (deadline: names rank 0). The
 * deadline also runs while rank 0 does other work (between rounds, say): set
 * it to cover that. */
int hf_mpi_wait_span(hf_mpi_t t, struct hf_mpi_span *span);
/* Worker: reports the completion of a span to rank 0. */
int hf_mpi_report(hf_mpi_t t, const struct hf_mpi_done *done);

/* Every rank: rank 0's `bytes` bytes at `buf` are copied into every other
 * rank's `buf` (a read-only input replicated once). */
int hf_mpi_bcast(hf_mpi_t t, void *buf, size_t bytes);

/* Every rank: rank 0 receives into `buf` (elements of `elem` bytes) the ranges
 * `mine[0 .. nmine)` of every other rank, each taken from that rank's own
 * `buf` at the same offsets; rank 0's own ranges are already in place. The
 * ranges of different ranks must not overlap (not checked: the pool's
 * exactly-once ledger guarantees it for spans). */
int hf_mpi_gather_ranges(hf_mpi_t t, void *buf, size_t elem, const struct hf_mpi_range *mine,
                         int nmine);

/* Every rank: `vec` (n elements of type `type`) becomes the element-wise
 * min / sum / bitwise or of every rank's `vec`. OR takes integer types only. */
int hf_mpi_allreduce(hf_mpi_t t, void *vec, size_t n, enum hf_elem type, enum hf_mpi_op op);

#endif
