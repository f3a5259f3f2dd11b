/* node.h - a node of a run across nodes, as one device of rank 0.
 *
 * Rank 0 lists every other rank as a device of its own (`node1`, `node2`,
 * ...; kind HF_DEV_NODE) driven by hf_driver_node: running a bundle on it
 * means handing the bundle's chunk span to that rank, waiting for its
 * completion and receiving the bundle's results (struct hf_app.results) into
 * rank 0's own memory, with the span's shared-data changes, which the node
 * device hands to rank 0's merge like a GPU (shared_pull), and takes the
 * merged updates to the rank (shared_push). The rank runs the span with its
 * own scheduler over its own devices (core/nodes.c, hf_run_serve). Built only
 * with MPI.
 */
#ifndef HF_MPI_NODE_H
#define HF_MPI_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "mpi/transport.h"

/* The most result regions one bundle may name (struct hf_app.results). */
#define HF_NODE_REGIONS 16

/* What one device inside a node did: per span on the wire (a node sends one
 * per device after each span's results), summed per round on rank 0. */
struct hf_mpi_inner {
    double chunks, bundles, work, busy_s;
};

/* One bundle that a device inside a node ran in a span: per span on the
 * wire after the devices' statistics (a count, then the bundles), kept by the
 * node device until rank 0's engine takes them at the round's end. On the
 * wire `start`/`end` are seconds since the node began the span and `first`
 * is a chunk of rank 0's load; the node device turns the times into rank
 * 0's clock (see node.c). `device` indexes the node's own devices; `stolen`
 * and `outlier` are 0 or 1. */
struct hf_mpi_inner_event {
    double device, first, count, work, start, end, copy_in, kernel, copy_out, stolen, outlier;
};

/* The most devices one node may have. */
#define HF_NODE_DEVICES 64
/* The most bundles a node's devices may report for one span. */
#define HF_NODE_EVENTS (1 << 20)

/* What a node sends first after a span's completion, in one message: the
 * sizes of the span's result regions (rank 0 hands them to the app's
 * results callback, which checks them or, for results whose size only the
 * node knows, a match list, sizes its regions by them) and what each of its
 * `ninner` devices did; only the first ninner entries of `inner` travel. */
struct hf_mpi_summary {
    uint64_t nregions;
    uint64_t region_bytes[HF_NODE_REGIONS];
    struct hf_mpi_inner inner[HF_NODE_DEVICES];
};

/* Bytes of a summary for a node of `ninner` devices. */
#define HF_MPI_SUMMARY_BYTES(ninner)                                        \
    (offsetof(struct hf_mpi_summary, inner) + (size_t)(ninner) * sizeof(struct hf_mpi_inner))

/* The most shared arrays of an app that runs across nodes (core/shared.h's
 * HF__SHARED_MAX). */
#define HF_NODE_SHARED 16

/* The changes of one MIN/MAX/OR shared array the node sent this round, for
 * the merge to pull (`pulled`: the merge took them; the next span starts over). */
struct hf_mpi_changes {
    uint32_t *idx;
    unsigned char *val;
    size_t n, cap;
    int pulled;
};

/* Driver state of one node device: the transport, the rank it stands for,
 * what its devices did this round (`ninner` of them, summed by the driver on
 * the node device's thread, read and reset by the engine between rounds),
 * the bundles they ran this round (`ev`, times on rank 0's CLOCK_MONOTONIC
 * clock; appended on the node device's thread, taken and emptied by the
 * engine between rounds) and the shared-data changes it sent, per array. */
struct hf_mpi_node {
    hf_mpi_t t;
    int rank;
    int ninner;
    struct hf_mpi_inner *acc;
    struct hf_mpi_inner_event *ev;
    size_t nev, evcap;
    struct hf_mpi_changes ch[HF_NODE_SHARED];
};

extern const struct hf_driver_ops hf_driver_node;

#endif
