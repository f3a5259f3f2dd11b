/* node.c - the driver of a node device: a bundle handed to another rank.
 *
 * DESIGN
 * ------
 * To rank 0's engine a node is a device like a GPU: it gets whole bundles,
 * one at a time, from its own host thread, and may steal. Running one is
 * three steps on the transport, all for this node's rank alone, so that the
 * host threads of several nodes talk to their ranks side by side
 * (MPI_THREAD_MULTIPLE): hand the span (chunk indices of the load, which the
 * rank draws itself from the same config), collect the rank's completion
 * (its busy seconds and status), then receive the bundle's result regions
 * into place and what each of the node's devices did (for the results'
 * `node1:cpu`, `node1:cuda0` rows). The completion comes before the results so that a rank that
 * failed does not leave rank 0 waiting for results that will never come.
 *
 * Any failure of a node ends the run (HF_EIO, the message naming the rank):
 * a node that hung or died cannot take part in MPI_Finalize, so the run
 * stops and the CLI ends the job, rather than retiring the node and going on
 * as a GPU fault does. A node's own device faults are handled inside it.
 */
#include "mpi/node.h"

#include <stdio.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int node_open(struct hf_device *dev)
{
    (void)dev;
    return 0;
}

/* The run ends on any failure of a node (see DESIGN): HF_EDEVICE, which
 * would retire the node and go on, becomes HF_EIO with the same message. */
static int node_failed(int rc)
{
    return rc == HF_EDEVICE ? hf_fail(HF_EIO, "%s", hf_last_error()) : rc;
}

static int node_run(struct hf_device *dev, const struct hf_app *app, void *app_ctx,
                    const struct hf_bundle *b, struct hf_bundle_times *t)
{
    struct hf_mpi_node *n = dev->drv;
    struct hf_mpi_span span = {.first = b->first, .count = b->count, .round = b->load->round,
                               .serial = b->load->serial};
    struct hf_mpi_done done;
    double t0 = now_s();
    int rc = hf_mpi_hand(n->t, n->rank, &span);
    if (rc == 0)
        rc = hf_mpi_collect_from(n->t, n->rank, &done);
    if (rc)
        return node_failed(rc);
    if (done.status)
        return hf_fail(done.status == HF_EDEVICE ? HF_EIO : done.status,
                       "%s (rank %d) failed chunks [%zu, %zu) of round %d: %s (its own message "
                       "is on its standard error)",
                       dev->info.name, n->rank, b->first, b->first + b->count, b->load->round,
                       hf_strerror(done.status));
    double t1 = now_s();
    struct hf_region reg[HF_NODE_REGIONS];
    int nreg = app->results(app_ctx, b, reg, HF_NODE_REGIONS);
    if (nreg < 0)
        return nreg;
    for (int i = 0; i < nreg && rc == 0; i++)
        rc = hf_mpi_recv_results(n->t, n->rank, reg[i].ptr, reg[i].bytes);
    /* Then what each of the node's devices did in this span. */
    struct hf_mpi_inner in[HF_NODE_DEVICES];
    if (rc == 0)
        rc = hf_mpi_recv_results(n->t, n->rank, in, (size_t)n->ninner * sizeof *in);
    if (rc)
        return node_failed(rc);
    for (int k = 0; k < n->ninner; k++) {
        n->acc[k].chunks += in[k].chunks;
        n->acc[k].bundles += in[k].bundles;
        n->acc[k].work += in[k].work;
        n->acc[k].busy_s += in[k].busy_s;
    }
    /* What the rank spent running the span, and what moving it cost here. */
    t->kernel_s = done.busy_s;
    t->copy_in_s = t1 - t0 > done.busy_s ? t1 - t0 - done.busy_s : 0.0;
    t->copy_out_s = now_s() - t1;
    return 0;
}

static void node_close(struct hf_device *dev)
{
    (void)dev;
}

const struct hf_driver_ops hf_driver_node = {
    .name = "node",
    .open = node_open,
    .run = node_run,
    .close = node_close,
};
