/* node.h - a node of a run across nodes, as one device of rank 0.
 *
 * Rank 0 lists every other rank as a device of its own (`node1`, `node2`,
 * ...; kind HF_DEV_NODE) driven by hf_driver_node: running a bundle on it
 * means handing the bundle's chunk span to that rank, waiting for its
 * completion and receiving the bundle's results (struct hf_app.results) into
 * rank 0's own memory. The rank runs the span with its own scheduler over its
 * own devices (core/nodes.c, hf_run_serve). Built only with MPI.
 */
#ifndef HF_MPI_NODE_H
#define HF_MPI_NODE_H

#include "device.h"
#include "mpi/transport.h"

/* The most result regions one bundle may name (struct hf_app.results). */
#define HF_NODE_REGIONS 16

/* Driver state of one node device: the transport and the rank it stands for. */
struct hf_mpi_node {
    hf_mpi_t t;
    int rank;
};

extern const struct hf_driver_ops hf_driver_node;

#endif
