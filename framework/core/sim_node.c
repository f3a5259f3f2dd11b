/* sim_node.c - a node of the sim engine: one device to the top level, made of
 * modelled devices of its own, behind a network.
 *
 * DESIGN
 * ------
 * `[devices] nodes = N` adds node devices node1 .. node{N-1} to node 0's own
 * devices. The top-level scheduler sees each as one GPU-like device (it gets
 * whole bundles and may steal); the sim times a bundle handed to one as what
 * the multi-node design does with it: rank 0 sends a message naming the span,
 * the node runs the span with its own scheduler over its own devices, and a
 * completion message comes back. So a node bundle's time is
 *
 *   network = latency + [wait for rank 0's link] + bytes_share * bytes / bandwidth + latency
 *   inner   = max over the node's devices of their share's time, jittered and troubled
 *
 * What is modelled. The node's scheduler is taken at its steady state: the
 * split that makes every inner device finish together under its affine model
 * (hf_cost_split, the split HASS plans), each device paying its own latency
 * and, for GPUs, the bundle's bytes over its own PCIe bandwidth in proportion
 * to its share; a CPU runs one chunk at a time, so it pays its latency per
 * chunk. Then each inner device's time gets its own jitter draw and its own
 * trouble terms ([sim.NAME] warmup_ms, new_size_ms, stalls, slowdown, keyed by
 * the node's bundle: its first, a chunk count the node has not run), and the
 * node is done when its slowest device is (no stealing inside the node: a
 * pessimistic choice, about 1.5 sigma of jitter for 9 devices). The bytes the
 * sim knows are hf_bundle.bytes: what a GPU moves in and out for the bundle
 * (for matmul the rows of A in and of C out; for noop its bytes_per_chunk). The
 * network moves `bytes_share` of them (1: inputs sent from rank 0 and results
 * returned; 0.5 for matmul whose A every node generates from the seed, so only
 * C comes back; 0 for a search whose text each node reads from its own disk),
 * one figure rather than a new per-load result size, because no app declares
 * its input and output bytes apart. With `shared = yes` (the default) every
 * node's transfer goes through rank 0's one link, first come first served in
 * the order bundles are handed out: rank 0 sends and receives all of it, so
 * its link, not the fabric, is the bottleneck of a star of nodes. The node
 * devices then declare that link to the schedulers (hf_device_info.link, with
 * its bandwidth in the bundles' own bytes: bandwidth / bytes_share), as the
 * MPI engine's node devices declare theirs; HASS's split uses it.
 *
 * What is not modelled. Transfers do not overlap the node's compute (a bundle
 * moves its bytes, then computes: rank 0 hands a node one span at a time and
 * the node has the whole span before its scheduler splits it); a full-duplex
 * link's two directions are one resource; the broadcast of read-only data
 * (matmul's B) before round 0; host memory bandwidth shared by a node's GPUs
 * and its CPU; contention inside the fabric between other pairs of nodes.
 */
#include <math.h>

#include "sched.h"
#include "sim_node.h"

double hf__sim_node_inner(const struct hf_sim_node *node, const struct hf_bundle *b, double *x)
{
    int n = node->count;
    double lat[n], inv[n];
    for (int i = 0; i < n; i++)
        x[i] = 0.0;
    if (!(b->work > 0.0))
        return 0.0;
    double per_work = b->bytes / b->work;
    double chunk = b->count ? b->work / (double)b->count : b->work;
    for (int i = 0; i < n; i++) {
        const struct hf_device *d = &node->inner[i];
        const struct hf_sim_model *m = &d->model;
        lat[i] = m->latency_s;
        inv[i] = 1.0 / m->rate;
        if (d->info.is_gpu && m->bandwidth > 0.0)
            inv[i] += per_work / m->bandwidth;
        if (!d->info.is_gpu) {
            inv[i] += lat[i] / chunk;
            lat[i] = 0.0;
        }
    }
    return hf_cost_split(lat, inv, NULL, n, b->work, x);
}

double hf__sim_node_network(const struct hf_sim_net *net, const struct hf_bundle *b, double now,
                            double *link_free)
{
    double bytes = net->bytes_share * b->bytes;
    double move = bytes > 0.0 ? bytes / net->bandwidth : 0.0;
    double start = now + net->latency_s; /* the span's message reached the node */
    if (net->shared && bytes > 0.0) {
        if (*link_free > start)
            start = *link_free;
        *link_free = start + move;
    }
    return start - now + move + net->latency_s;
}

double hf__sim_node_seconds(const struct hf_sim_node *node, const struct hf_bundle *b,
                            const struct hf__sim_when *w, uint64_t *rng, double now,
                            double *link_free)
{
    double x[node->count];
    hf__sim_node_inner(node, b, x);
    double per_work = b->work > 0.0 ? b->bytes / b->work : 0.0;
    double chunk = b->count ? b->work / (double)b->count : b->work;
    double inner = 0.0;
    for (int i = 0; i < node->count; i++) {
        if (!(x[i] > 0.0))
            continue;
        /* The device's own model for its share (the split made these equal
         * before the noise; computed again per device so that each draws). */
        const struct hf_device *d = &node->inner[i];
        const struct hf_sim_model *m = &d->model;
        double s = x[i] / m->rate;
        if (d->info.is_gpu)
            s += m->latency_s + (m->bandwidth > 0.0 ? x[i] * per_work / m->bandwidth : 0.0);
        else
            s += m->latency_s * x[i] / chunk;
        struct hf__sim_when wi = *w;
        wi.key = hf__sim_stall_key(w->key, (uint64_t)i + 1);
        s = hf__sim_trouble(m, &wi, hf__sim_jitter(m, rng, s));
        inner = fmax(inner, s);
    }
    return hf__sim_node_network(&node->net, b, now, link_free) + inner;
}
