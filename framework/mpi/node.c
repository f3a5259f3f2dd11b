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
 * (its busy seconds and status), then receive the span's summary (the sizes
 * of its result regions and what each of the node's devices did), the result
 * regions into the places the app names for the bundle, given the node's
 * sizes (results whose size only the node knows, strsearch's matches, are
 * sized by them), and the bundles the node's devices ran (for the results'
 * and the report's `node1:cpu`, `node1:cuda0` rows and lanes). The
 * completion comes before the results so that a rank that failed does not
 * leave rank 0 waiting for results that will never come.
 *
 * Shared data (hetfarm.h, "Shared data"): toward rank 0's merge
 * (core/shared.c) a node behaves like a GPU driver. After each span the rank
 * sends, per MIN/MAX/OR array, the elements its devices changed (indices and
 * values, after its own merge), which this driver keeps until the merge pulls
 * them (shared_pull), and per OWNED array the values of the span's units
 * [begin, end), written straight into rank 0's host copy as a GPU copies its
 * range back. shared_push sends the merged update to the rank as an update
 * record and its bytes; the rank applies it between spans (nodes.c).
 *
 * Any failure of a node ends the run (HF_EIO, the message naming the rank):
 * a node that hung or died cannot take part in MPI_Finalize, so the run
 * stops and the CLI ends the job, rather than retiring the node and going on
 * as a GPU fault does. A node's own device faults are handled inside it.
 */
#include "mpi/node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int node_open(struct hf_device *dev)
{
    if (dev->nshared > HF_NODE_SHARED)
        return hf_fail(HF_EINVAL, "%s: an app with %d shared arrays cannot run across nodes "
                                  "(at most %d)", dev->info.name, dev->nshared, HF_NODE_SHARED);
    return 0;
}

static int recorded(enum hf_shared_kind k)
{
    return k == HF_SHARED_MIN || k == HF_SHARED_MAX || k == HF_SHARED_OR;
}

/* Receives the span's shared-data changes (see DESIGN), in the order of the
 * app's arrays, as nodes.c sends them. */
static int recv_changes(struct hf_device *dev, const struct hf_bundle *b)
{
    struct hf_mpi_node *n = dev->drv;
    int rc = 0;
    for (int s = 0; s < dev->nshared && rc == 0; s++) {
        const struct hf_shared *a = &dev->shared[s];
        size_t es = hf_elem_size(a->elem);
        if (a->kind == HF_SHARED_OWNED) {
            if (b->end > a->count || b->begin > b->end)
                return hf_fail(HF_EAPP, "OWNED shared array %s: units [%zu, %zu) beyond its %zu "
                                        "elements", a->name, b->begin, b->end, a->count);
            rc = hf_mpi_recv_bytes(n->t, n->rank, (char *)a->host + b->begin * es,
                                   (b->end - b->begin) * es);
            continue;
        }
        if (!recorded(a->kind))
            continue;
        struct hf_mpi_changes *c = &n->ch[s];
        uint64_t k = 0;
        if ((rc = hf_mpi_recv_bytes(n->t, n->rank, &k, sizeof k)))
            break;
        if (k > a->count)
            return hf_fail(HF_EIO, "%s (rank %d) sent %llu changes of shared array %s, which has "
                                   "%zu elements", dev->info.name, n->rank,
                           (unsigned long long)k, a->name, a->count);
        if (c->pulled)
            c->n = 0, c->pulled = 0;
        if (c->n + k > c->cap) {
            size_t cap = c->cap ? c->cap : 1024;
            while (cap < c->n + k)
                cap *= 2;
            uint32_t *idx = realloc(c->idx, cap * sizeof *idx);
            if (idx)
                c->idx = idx;
            unsigned char *val = realloc(c->val, cap * es);
            if (val)
                c->val = val;
            if (!idx || !val)
                return hf_fail(HF_ENOMEM, "%s: out of memory for %zu shared-data changes",
                               dev->info.name, c->n + (size_t)k);
            c->cap = cap;
        }
        if (k && (rc = hf_mpi_recv_bytes(n->t, n->rank, c->idx + c->n, k * sizeof *c->idx)) == 0)
            rc = hf_mpi_recv_bytes(n->t, n->rank, c->val + c->n * es, k * es);
        c->n += rc == 0 ? k : 0;
    }
    return rc;
}

/* Where the span's result regions go on rank 0: the app's results callback
 * for the same bundle, called with out[i].bytes holding the sizes the node
 * sent (hetfarm.h, struct hf_app.results). The regions must match the node's
 * in number and size: a mismatch would land bytes in the wrong place. */
static int place_results(struct hf_device *dev, const struct hf_app *app, void *app_ctx,
                         const struct hf_bundle *b, const struct hf_mpi_summary *sum,
                         struct hf_region *reg, int *nreg)
{
    struct hf_mpi_node *n = dev->drv;
    if (sum->nregions > HF_NODE_REGIONS)
        return hf_fail(HF_EIO, "%s (rank %d) sent %llu result regions, at most %d", dev->info.name,
                       n->rank, (unsigned long long)sum->nregions, HF_NODE_REGIONS);
    for (int i = 0; i < HF_NODE_REGIONS; i++)
        reg[i] = (struct hf_region){NULL, i < (int)sum->nregions ? sum->region_bytes[i] : 0};
    int k = app->results ? app->results(app_ctx, b, reg, HF_NODE_REGIONS) : 0;
    if (k < 0)
        return k;
    if (k != (int)sum->nregions)
        return hf_fail(HF_EAPP, "app %s names %d result regions for chunks [%zu, %zu) of round "
                                "%d, %s (rank %d) sent %llu", app->name, k, b->first,
                       b->first + b->count, b->load->round, dev->info.name, n->rank,
                       (unsigned long long)sum->nregions);
    for (int i = 0; i < k; i++)
        if (reg[i].bytes != sum->region_bytes[i])
            return hf_fail(HF_EAPP, "app %s: result region %d of chunks [%zu, %zu) of round %d "
                                    "is %zu bytes here, %llu on %s (rank %d)", app->name, i,
                           b->first, b->first + b->count, b->load->round, reg[i].bytes,
                           (unsigned long long)sum->region_bytes[i], dev->info.name, n->rank);
    *nreg = k;
    return 0;
}

/* Receives the bundles the node's devices ran in the span (a count, then
 * the bundles) and keeps them for the engine with their times moved onto
 * this rank's clock: the span began at `span_t0` here, that is, the
 * completion's arrival less the node's own seconds for the span (the
 * message's way back is taken as nothing), so that the inner bundles line
 * up under the node device's bar without the two hosts sharing a clock. */
static int recv_inner_events(struct hf_device *dev, double span_t0)
{
    struct hf_mpi_node *n = dev->drv;
    uint64_t k = 0;
    int rc = hf_mpi_recv_results(n->t, n->rank, &k, sizeof k);
    if (rc || k == 0)
        return rc;
    if (k > HF_NODE_EVENTS)
        return hf_fail(HF_EIO, "%s (rank %d) says its devices ran %llu bundles in one span "
                               "(at most %d)", dev->info.name, n->rank,
                       (unsigned long long)k, HF_NODE_EVENTS);
    if (n->nev + k > n->evcap) {
        size_t cap = n->evcap ? n->evcap : 256;
        while (cap < n->nev + k)
            cap *= 2;
        struct hf_mpi_inner_event *v = realloc(n->ev, cap * sizeof *v);
        if (!v)
            return hf_fail(HF_ENOMEM, "%s: out of memory for %zu bundles of its devices",
                           dev->info.name, n->nev + (size_t)k);
        n->ev = v;
        n->evcap = cap;
    }
    struct hf_mpi_inner_event *got = n->ev + n->nev;
    if ((rc = hf_mpi_recv_results(n->t, n->rank, got, (size_t)k * sizeof *got)))
        return rc;
    for (uint64_t i = 0; i < k; i++) {
        if (!(got[i].device >= 0 && got[i].device < n->ninner))
            return hf_fail(HF_EIO, "%s (rank %d) sent a bundle of its device %g, which it does "
                                   "not have (%d devices)", dev->info.name, n->rank,
                           got[i].device, n->ninner);
        got[i].start += span_t0;
        got[i].end += span_t0;
    }
    n->nev += (size_t)k;
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
    struct hf_mpi_span span = {.kind = HF_MPI_RUN, .first = b->first, .count = b->count,
                               .begin = b->begin, .end = b->end, .round = b->load->round,
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
    /* The span's summary (its regions' sizes, what each device did), then
     * the regions, into the places the app names for the same bundle. */
    struct hf_mpi_summary sum;
    rc = hf_mpi_recv_results(n->t, n->rank, &sum, HF_MPI_SUMMARY_BYTES(n->ninner));
    if (rc)
        return node_failed(rc);
    struct hf_region reg[HF_NODE_REGIONS];
    int nreg = 0;
    if ((rc = place_results(dev, app, app_ctx, b, &sum, reg, &nreg)))
        return rc; /* the node's bytes stay unread: the run ends (see DESIGN) */
    for (int i = 0; i < nreg && rc == 0; i++)
        rc = hf_mpi_recv_results(n->t, n->rank, reg[i].ptr, reg[i].bytes);
    if (rc == 0)
        rc = recv_inner_events(dev, t1 - done.busy_s);
    if (rc == 0)
        rc = recv_changes(dev, b);
    if (rc)
        return node_failed(rc);
    for (int k = 0; k < n->ninner; k++) {
        n->acc[k].chunks += sum.inner[k].chunks;
        n->acc[k].bundles += sum.inner[k].bundles;
        n->acc[k].work += sum.inner[k].work;
        n->acc[k].busy_s += sum.inner[k].busy_s;
    }
    /* What the rank spent running the span, and what moving it cost here. */
    t->kernel_s = done.busy_s;
    t->copy_in_s = t1 - t0 > done.busy_s ? t1 - t0 - done.busy_s : 0.0;
    t->copy_out_s = now_s() - t1;
    return 0;
}

/* The changes the node sent since the last pull; they are forgotten when the
 * next span's arrive (the merge reads them first). */
static long node_shared_pull(struct hf_device *dev, int s, const uint32_t **idx,
                             const void **vals)
{
    struct hf_mpi_node *n = dev->drv;
    struct hf_mpi_changes *c = &n->ch[s];
    *idx = c->idx;
    *vals = c->val;
    long k = c->pulled ? 0 : (long)c->n;
    c->pulled = 1;
    return k;
}

/* Rank 0's update of array s, to the rank: an update record, then the
 * indices (an empty list is an empty union, not a range) and the values. */
static int node_shared_push(struct hf_device *dev, int s, const uint32_t *idx, const void *vals,
                            size_t count, size_t first)
{
    struct hf_mpi_node *n = dev->drv;
    const struct hf_shared *a = &dev->shared[s];
    struct hf_mpi_span u = {.kind = HF_MPI_UPDATE, .array = s, .count = count, .first = first,
                            .indexed = idx != NULL || count == 0};
    int rc = hf_mpi_hand(n->t, n->rank, &u);
    if (rc == 0 && idx && count)
        rc = hf_mpi_send_bytes(n->t, n->rank, idx, count * sizeof *idx);
    if (rc == 0 && count)
        rc = hf_mpi_send_bytes(n->t, n->rank, vals, count * hf_elem_size(a->elem));
    return rc ? node_failed(rc) : 0;
}

static void node_close(struct hf_device *dev)
{
    struct hf_mpi_node *n = dev->drv;
    if (n) {
        free(n->ev);
        n->ev = NULL;
        n->nev = n->evcap = 0;
    }
    for (int s = 0; n && s < HF_NODE_SHARED; s++) {
        free(n->ch[s].idx);
        free(n->ch[s].val);
        memset(&n->ch[s], 0, sizeof n->ch[s]);
    }
}

const struct hf_driver_ops hf_driver_node = {
    .name = "node",
    .open = node_open,
    .run = node_run,
    .close = node_close,
    .shared_pull = node_shared_pull,
    .shared_push = node_shared_push,
};
