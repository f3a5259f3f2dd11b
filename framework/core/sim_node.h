/* sim_node.h - the sim engine's model of a node behind a network
 * (sim_node.c), and the pieces of a modelled bundle's time that it shares
 * with engine_sim.c. Internal: not part of the public API.
 */
#ifndef HF_SIM_NODE_H
#define HF_SIM_NODE_H

#include <stdint.h>

#include "device.h"

/* When a modelled bundle runs, for the trouble terms of struct hf_sim_model:
 * whether the run records (scheduled rounds; the standalone passes model no
 * trouble), whether this is the device's first bundle, whether its chunk
 * count is new to the device, the round and the bundle's index in it, and
 * the key of its stall draw (engine_sim.c's hf__sim_stall_key). */
struct hf__sim_when {
    int recording, first, new_size, round, bundle;
    uint64_t key;
};

/* A standard normal draw from the run's generator (engine_sim.c). */
double hf__sim_normal(uint64_t *rng);
/* s scaled by (1 + jitter * g), g a normal draw, the factor floored at 0.05;
 * no draw when the model has no jitter (engine_sim.c). */
double hf__sim_jitter(const struct hf_sim_model *m, uint64_t *rng, double s);
/* s with the model's trouble terms of bundle `w` added (engine_sim.c). */
double hf__sim_trouble(const struct hf_sim_model *m, const struct hf__sim_when *w, double s);
/* The key of a stall draw under `key` for part `i` (a node's inner device):
 * a fixed function of both, so it draws nothing from the run's generator. */
uint64_t hf__sim_stall_key(uint64_t key, uint64_t i);

/* The node's inner time for bundle b, clean (no jitter, no trouble): the
 * common finish time of the node's devices under the split that makes them
 * finish together (hf_cost_split), each inner device i modelled as
 * latency_i + x_i * (1 / rate_i + bytes_per_work / bandwidth_i) for a GPU and
 * x_i * (1 / rate_i + latency_i / mean_chunk_work) for a CPU, which runs one
 * chunk at a time. Writes each inner device's work into x[0..node->count).
 * 0 for a bundle of no work. */
double hf__sim_node_inner(const struct hf_sim_node *node, const struct hf_bundle *b, double *x);

/* The network's part of bundle b handed out at `now`: a message out, the
 * bundle's network bytes (net.bytes_share * b->bytes) over a link, a message
 * back. With a shared link the transfer waits for *link_free (rank 0's link
 * busy with other nodes' transfers) and moves it on. Returns seconds. */
double hf__sim_node_network(const struct hf_sim_net *net, const struct hf_bundle *b, double now,
                            double *link_free);

/* The modelled time of bundle b on a node device handed out at `now`: the
 * network's part plus the slowest inner device's jittered, troubled time
 * under the clean split. Draws from rng in inner-device order. */
double hf__sim_node_seconds(const struct hf_sim_node *node, const struct hf_bundle *b,
                            const struct hf__sim_when *w, uint64_t *rng, double now,
                            double *link_free);

#endif
