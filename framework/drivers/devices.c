/* devices.c - the device list of a run, built from [devices], [sim.NAME] and [faults].
 *
 * DESIGN
 * ------
 * A run's devices are listed once, in a fixed order: the CPU team(s) first,
 * then the GPUs, so device indices, results and traces line up across
 * schedulers. Real runs take `cpu = N | all` and `cuda = all | none | 0,1`;
 * the CPU team never oversubscribes the machine: every GPU's host thread gets
 * a core of its own (the one hwloc says is closest to the GPU when that core is
 * free), and the team takes what is left. An ordinal may repeat (`cuda =
 * 0,0`): that GPU then serves as several devices, cuda0#1 and cuda0#2, each
 * with its own host thread and core, streams, arena, staging and replicas of
 * the shared data, so that every path between GPUs (merges, steals, hand-
 * overs) runs where one GPU is lent. Nothing in hetfarm talks from GPU to GPU
 * directly (merges go through the host), so the devices need nothing but
 * distinct names (profiles, faults and reports key on them) and their share
 * of the GPU's memory (device_cuda.c); the flag shares_gpu marks them in the
 * results, and a benchmark (HF_BENCH set) refuses them: their times are one
 * GPU's, not two. Simulated runs list modelled devices
 * (`sim = host, h200, h200`), each described by its [sim.NAME] section, so the
 * sim engine can stand in for machines we do not have. `nodes = N` makes that
 * list node 0 of N: the list's devices keep their names and indices, and node
 * devices node1 .. node{N-1} follow, each a node of the same devices behind
 * the network of [sim.net] (core/sim_node.c times them). A node is one device
 * to the top-level scheduler, so it is listed like a GPU (whole bundles,
 * steals); 64 nodes of 9 devices make 72 devices, hence HF_MAX_DEVICES 128.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"
#ifdef HF_HAVE_CUDA
#include "hf_cuda.h"
#endif

#define HF_MAX_DEVICES 128
#define HF_MAX_NODES 64

struct hf_devlist {
    int count;
    struct hf_sim_node node; /* what every node device of a sim run is made of */
    struct hf_device dev[HF_MAX_DEVICES];
    struct hf_device_info info[HF_MAX_DEVICES];
    struct hf_devices view;
};

/* The keys of [devices], [sim.NAME] and [faults], one line each: what the
 * validation checks and `hetfarm run --help` lists (hetfarm.h). */
const struct hf_config_key hf_device_keys[] = {
    {"devices", "cpu", HF_KEY_INT, 0, 4096, 0, "all", "all",
     "real: CPU threads (all leaves one core per GPU host thread)"},
    {"devices", "cpu_teams", HF_KEY_INT, 1, 64, 0, NULL, "1", "real: CPU teams the threads form"},
    {"devices", "cuda", HF_KEY_STR, 0, 0, 0, NULL, "all",
     "real: GPUs, all | none | 0,1 (0,0: GPU 0 as two devices, for tests)"},
    {"devices", "sim", HF_KEY_LIST, 0, 0, HF_KEY_NAMES_SECTIONS, "sim", NULL,
     "sim: the modelled devices, each NAME described by [sim.NAME]"},
    {"devices", "nodes", HF_KEY_INT, 1, HF_MAX_NODES, 0, NULL, "1",
     "sim: nodes; node 0 is the sim list, node1.. are node devices of the same list"},
    {"sim.net", "latency_us", HF_KEY_NUM, 0, 1e12, 0, NULL, "required when nodes > 1",
     "microseconds per message between nodes, each way"},
    {"sim.net", "bandwidth_gbs", HF_KEY_NUM, 0, 1e9, HF_KEY_MIN_OPEN, NULL,
     "required when nodes > 1", "GB/s of a link between nodes"},
    {"sim.net", "bytes_share", HF_KEY_NUM, 0, 1, 0, NULL, "1",
     "share of a node bundle's bytes that crosses the network"},
    {"sim.net", "shared", HF_KEY_BOOL, 0, 0, 0, NULL, "yes",
     "every node's transfers share rank 0's one link"},
    {"sim.*", "kind", HF_KEY_STR, 0, 0, 0, "gpu|cpu", "gpu", "what the device models"},
    {"sim.*", "rate", HF_KEY_NUM, 0, 1e300, HF_KEY_MIN_OPEN | HF_KEY_REQUIRED, NULL, NULL,
     "work per second"},
    {"sim.*", "latency_us", HF_KEY_NUM, 0, 1e12, 0, NULL, "0", "microseconds per bundle"},
    {"sim.*", "bandwidth_gbs", HF_KEY_NUM, 0, 1e9, 0, NULL, "0 (no transfer cost)",
     "host<->GPU GB/s"},
    {"sim.*", "jitter", HF_KEY_NUM, 0, 1, HF_KEY_MAX_OPEN, NULL, "0",
     "relative noise per bundle"},
    {"sim.*", "warmup_ms", HF_KEY_NUM, 0, 1e9, 0, NULL, "0",
     "extra milliseconds of the device's first bundle"},
    {"sim.*", "new_size_ms", HF_KEY_NUM, 0, 1e9, 0, NULL, "0",
     "extra milliseconds of a bundle size (chunk count) not run before"},
    {"sim.*", "stall_prob", HF_KEY_NUM, 0, 1, 0, NULL, "0", "chance that a bundle stalls"},
    {"sim.*", "stall_rate", HF_KEY_NUM, 0, 1e6, 0, NULL, "0",
     "stalls per second of a bundle's time (needs stall_ms)"},
    {"sim.*", "stall_ms", HF_KEY_NUM, 0, 1e9, 0, NULL, "0", "milliseconds a stall adds"},
    {"sim.*", "stall_at", HF_KEY_STR, 0, 0, 0, NULL, NULL, "round:bundle that stalls"},
    {"sim.*", "slowdown", HF_KEY_STR, 0, 0, 0, NULL, NULL,
     "factor@round: the device is that much slower from that round on"},
    {"sim.*", "part_us", HF_KEY_NUM, 0, 1e12, 0, NULL, "100 for an app with shared data, else 0",
     "microseconds a round pays for the device's taking part beside others (merge, sync)"},
    {"sim.*", "part_per_unit_s", HF_KEY_NUM, 0, 1e6, 0, NULL, "0",
     "seconds a round pays per unit of work the device ran beside others (its merge)"},
    {"faults", "error_at", HF_KEY_STR, 0, 0, 0, NULL, NULL,
     "device:round:bundle fails that bundle; the device is retired"},
    {"faults", "cuda_error_at", HF_KEY_STR, 0, 0, 0, NULL, NULL, "the same as error_at"},
    {"faults", "node_fails", HF_KEY_STR, 0, 0, 0, NULL, NULL,
     "RANK:hang|exit: under mpirun, that rank hangs or exits at its first span"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

/* Appends a device with default fields; returns it, or NULL when the list is full. */
static struct hf_device *add_device(struct hf_devlist *l, enum hf_device_kind kind, int is_gpu)
{
    if (l->count == HF_MAX_DEVICES)
        return NULL;
    struct hf_device *d = &l->dev[l->count];
    memset(d, 0, sizeof *d);
    d->info.index = l->count++;
    d->info.kind = kind;
    d->info.is_gpu = is_gpu;
    d->info.cuda_ordinal = -1;
    d->info.host_core = -1;
    d->core_first = -1;
    d->fault_round = d->fault_bundle = -1;
    return d;
}

/* Reads the [sim.NAME] keys that model what goes wrong on real devices:
 * warmup_ms, new_size_ms, stall_prob, stall_rate, stall_ms, stall_at = round:bundle and
 * slowdown = factor@round (device.h, struct hf_sim_model). */
static int read_sim_trouble(hf_config_t cfg, const char *section, struct hf_sim_model *m)
{
    double warm_ms, new_ms, stall_ms;
    const char *at, *slow;
    int rc = hf_config_double(cfg, section, "warmup_ms", 0, 0, 1e9, &warm_ms);
    if (rc == 0)
        rc = hf_config_double(cfg, section, "new_size_ms", 0, 0, 1e9, &new_ms);
    if (rc == 0)
        rc = hf_config_double(cfg, section, "stall_prob", 0, 0, 1, &m->stall_prob);
    if (rc == 0)
        rc = hf_config_double(cfg, section, "stall_rate", 0, 0, 1e6, &m->stall_rate);
    if (rc == 0)
        rc = hf_config_double(cfg, section, "stall_ms", 0, 0, 1e9, &stall_ms);
    if (rc == 0)
        rc = hf_config_str(cfg, section, "stall_at", NULL, &at);
    if (rc == 0)
        rc = hf_config_str(cfg, section, "slowdown", NULL, &slow);
    if (rc)
        return rc;
    m->warmup_s = warm_ms * 1e-3;
    m->new_size_s = new_ms * 1e-3;
    m->stall_s = stall_ms * 1e-3;
    if (m->stall_rate > 0 && !(m->stall_s > 0))
        return hf_fail(HF_ECONFIG, "%s: [%s] stall_rate = %g: stalls need their length, stall_ms",
                       hf_config_where(cfg, section, "stall_rate"), section, m->stall_rate);
    m->stall_round = m->stall_bundle = -1;
    m->slow_factor = 1.0;
    m->slow_round = 0;
    int used = 0;
    if (at && (sscanf(at, "%d:%d%n", &m->stall_round, &m->stall_bundle, &used) != 2 || at[used] ||
               m->stall_round < 0 || m->stall_bundle < 0))
        return hf_fail(HF_ECONFIG, "%s: [%s] stall_at = %s: expected round:bundle (0-based)",
                       hf_config_where(cfg, section, "stall_at"), section, at);
    used = 0;
    if (slow && (sscanf(slow, "%lf@%d%n", &m->slow_factor, &m->slow_round, &used) != 2 ||
                 slow[used] || !(m->slow_factor > 0) || m->slow_factor > 1e6 || m->slow_round < 0))
        return hf_fail(HF_ECONFIG, "%s: [%s] slowdown = %s: expected factor@round, e.g. 2@5",
                       hf_config_where(cfg, section, "slowdown"), section, slow);
    return 0;
}

/* Reads the [sim.NAME] keys of what a device's taking part in a round costs
 * beyond its bundles (part_us, part_per_unit_s; engine_sim.c applies them);
 * part_s stays < 0 when part_us is not given, for the engine's default. */
static int read_sim_part(hf_config_t cfg, const char *section, struct hf_sim_model *m)
{
    double us = -1.0;
    int rc = 0;
    if (hf_config_get(cfg, section, "part_us"))
        rc = hf_config_double(cfg, section, "part_us", 0, 0, 1e12, &us);
    if (rc == 0)
        rc = hf_config_double(cfg, section, "part_per_unit_s", 0, 0, 1e6, &m->part_per_unit_s);
    m->part_s = us < 0.0 ? -1.0 : us * 1e-6;
    return rc;
}

/* Reads one [sim.NAME] section into a modelled device. */
static int add_sim_device(struct hf_devlist *l, hf_config_t cfg, const char *name, int ordinal)
{
    char section[96];
    snprintf(section, sizeof section, "sim.%s", name);
    if (!hf_config_has_section(cfg, section))
        return hf_fail(HF_ECONFIG, "%s: [devices] sim names '%s' but there is no [%s] section",
                       hf_config_where(cfg, "devices", "sim"), name, section);
    const char *kind;
    double rate, latency_us, bandwidth_gbs, jitter;
    int rc = hf_config_str(cfg, section, "kind", "gpu", &kind);
    if (rc == 0 && strcmp(kind, "gpu") != 0 && strcmp(kind, "cpu") != 0)
        rc = hf_fail(HF_ECONFIG, "%s: [%s] kind = %s: expected gpu or cpu",
                     hf_config_where(cfg, section, "kind"), section, kind);
    if (rc == 0 && !hf_config_get(cfg, section, "rate"))
        rc = hf_fail(HF_ECONFIG, "%s: [%s] needs rate = work/s", hf_config_path(cfg), section);
    if (rc == 0)
        rc = hf_config_double(cfg, section, "rate", 0, 1e-300, 1e300, &rate);
    if (rc == 0)
        rc = hf_config_double(cfg, section, "latency_us", 0, 0, 1e12, &latency_us);
    if (rc == 0)
        rc = hf_config_double(cfg, section, "bandwidth_gbs", 0, 0, 1e9, &bandwidth_gbs);
    if (rc == 0)
        rc = hf_config_double(cfg, section, "jitter", 0, 0, 1, &jitter);
    struct hf_sim_model trouble = {0};
    if (rc == 0)
        rc = read_sim_trouble(cfg, section, &trouble);
    if (rc == 0)
        rc = read_sim_part(cfg, section, &trouble);
    if (rc)
        return rc;
    int is_gpu = strcmp(kind, "gpu") == 0;
    struct hf_device *d = add_device(l, HF_DEV_SIM, is_gpu);
    if (!d)
        return hf_fail(HF_ERANGE, "[devices] sim: more than %d devices", HF_MAX_DEVICES);
    snprintf(d->info.name, sizeof d->info.name, ordinal ? "sim:%s#%d" : "sim:%s", name, ordinal);
    d->model = trouble;
    d->model.rate = rate;
    d->model.latency_s = latency_us * 1e-6;
    d->model.bandwidth = bandwidth_gbs * 1e9;
    d->model.jitter = jitter;
    d->info.nthreads = is_gpu ? 0 : 1;
    return 0;
}

/* Reads [sim.net] (latency_us and bandwidth_gbs required) into net. */
static int read_sim_net(hf_config_t cfg, long nodes, struct hf_sim_net *net)
{
    static const char *const need[] = {"latency_us", "bandwidth_gbs"};
    for (int i = 0; i < 2; i++)
        if (!hf_config_get(cfg, "sim.net", need[i]))
            return hf_fail(HF_ECONFIG,
                           "%s: [devices] nodes = %ld needs [sim.net] %s (the network between "
                           "the nodes: latency_us = microseconds per message, bandwidth_gbs = GB/s)",
                           hf_config_where(cfg, "devices", "nodes"), nodes, need[i]);
    double lat_us = 0, gbs = 0;
    int rc = hf_config_double(cfg, "sim.net", "latency_us", 0, 0, 1e12, &lat_us);
    if (rc == 0)
        rc = hf_config_double(cfg, "sim.net", "bandwidth_gbs", 0, 0, 1e9, &gbs);
    if (rc == 0 && !(gbs > 0))
        rc = hf_fail(HF_ECONFIG, "%s: [sim.net] bandwidth_gbs = %g: expected a number above 0",
                     hf_config_where(cfg, "sim.net", "bandwidth_gbs"), gbs);
    if (rc == 0)
        rc = hf_config_double(cfg, "sim.net", "bytes_share", 1, 0, 1, &net->bytes_share);
    if (rc == 0)
        rc = hf_config_bool(cfg, "sim.net", "shared", 1, &net->shared);
    net->latency_s = lat_us * 1e-6;
    net->bandwidth = gbs * 1e9;
    return rc;
}

/* Adds node devices node1 .. node{nodes-1}, each made of the list's first
 * `inner` devices (node 0's) behind [sim.net]. */
static int add_sim_nodes(struct hf_devlist *l, hf_config_t cfg, int inner)
{
    long nodes;
    int rc = hf_config_long(cfg, "devices", "nodes", 1, 1, HF_MAX_NODES, &nodes);
    if (rc || nodes == 1)
        return rc;
    if (inner + nodes - 1 > HF_MAX_DEVICES)
        return hf_fail(HF_ERANGE, "%s: [devices] nodes = %ld of %d devices each: more than %d "
                                  "devices in all", hf_config_where(cfg, "devices", "nodes"),
                       nodes, inner, HF_MAX_DEVICES);
    if ((rc = read_sim_net(cfg, nodes, &l->node.net)))
        return rc;
    l->node.inner = l->dev;
    l->node.count = inner;
    for (long k = 1; k < nodes; k++) {
        struct hf_device *d = add_device(l, HF_DEV_NODE, 1);
        snprintf(d->info.name, sizeof d->info.name, "node%ld", k);
        d->node = &l->node;
        /* Rank 0's one link carries bytes_share of every node bundle's bytes:
         * declared to the schedulers in the bundles' own bytes. */
        if (l->node.net.shared && l->node.net.bytes_share > 0.0) {
            d->info.link = 1;
            d->info.link_bandwidth = l->node.net.bandwidth / l->node.net.bytes_share;
        }
        d->model.slow_factor = 1.0;
        d->model.stall_round = d->model.stall_bundle = -1;
    }
    return 0;
}

/* Builds the modelled devices of `sim = a, b, b` (repeated names get #1, #2),
 * then the node devices of `nodes`. */
static int build_simulated(struct hf_devlist *l, hf_config_t cfg)
{
    char **names = NULL;
    int n = hf_config_list(cfg, "devices", "sim", &names);
    if (n < 0)
        return n;
    int rc = n ? 0
               : hf_fail(HF_ECONFIG, "%s: [devices] sim = ...: the sim engine needs at least one "
                                     "modelled device", hf_config_where(cfg, "devices", "sim"));
    for (int i = 0; rc == 0 && i < n; i++)
        if (strcmp(names[i], "net") == 0)
            rc = hf_fail(HF_ECONFIG, "%s: [devices] sim names 'net', but [sim.net] is the network "
                                     "between nodes, not a device: rename the device",
                         hf_config_where(cfg, "devices", "sim"));
    for (int i = 0; rc == 0 && i < n; i++) {
        int seen = 0, total = 0;
        for (int j = 0; j < n; j++) {
            total += strcmp(names[j], names[i]) == 0;
            seen += j < i && strcmp(names[j], names[i]) == 0;
        }
        rc = add_sim_device(l, cfg, names[i], total > 1 ? seen + 1 : 0);
    }
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc ? rc : add_sim_nodes(l, cfg, l->count);
}

/* An ordinal that a list names more than once (cuda = 0,0). */
static int repeats_an_ordinal(const int *ordinals, int n, int *which)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (ordinals[i] == ordinals[j]) {
                *which = ordinals[i];
                return 1;
            }
    return 0;
}

int hf_cuda_list(hf_config_t cfg, int present, int *ordinals, int cap)
{
    const char *spec;
    int rc = hf_config_str(cfg, "devices", "cuda", "all", &spec);
    if (rc)
        return rc;
    if (strcmp(spec, "none") == 0)
        return 0;
    if (strcmp(spec, "all") == 0) {
        int n = present < cap ? present : cap;
        for (int i = 0; i < n; i++)
            ordinals[i] = i;
        return n;
    }
    char **items = NULL;
    int n = hf_config_list(cfg, "devices", "cuda", &items);
    if (n < 0)
        return n;
    const char *where = hf_config_where(cfg, "devices", "cuda");
    int count = 0;
    /* Every item is read before any GPU is looked for, so that a malformed
     * one is named as such on a machine without the GPUs too. */
    for (int i = 0; i < n && rc == 0; i++) {
        char *end;
        long v = strtol(items[i], &end, 10);
        if (*end || end == items[i] || v < 0 || v > 1000000)
            rc = hf_fail(HF_ECONFIG, "%s: [devices] cuda = %s: '%s' is not all, none or a GPU "
                                     "number (0, 1, ...)", where, spec, items[i]);
        else if (count == cap)
            rc = hf_fail(HF_ERANGE, "%s: [devices] cuda = %s: more than %d GPU devices", where,
                         spec, cap);
        else
            ordinals[count++] = (int)v;
    }
    for (int i = 0; i < n; i++)
        free(items[i]);
    free(items);
    /* A shared GPU's times are not two GPUs' times: a benchmark must not
     * record them as such (bench scripts set HF_BENCH). Refused before the
     * GPUs are looked for, on any machine. */
    int twice;
    const char *bench = getenv("HF_BENCH");
    if (rc == 0 && bench && *bench && strcmp(bench, "0") != 0 &&
        repeats_an_ordinal(ordinals, count, &twice))
        rc = hf_fail(HF_ECONFIG, "%s: [devices] cuda = %s names GPU %d more than once: one GPU "
                                 "serving as several devices is a correctness mode, and a "
                                 "benchmark (HF_BENCH=%s) must not count it as several GPUs",
                     where, spec, twice, bench);
    for (int i = 0; i < count && rc == 0; i++)
        if (ordinals[i] >= present)
            rc = hf_fail(HF_ENODEV, "%s: [devices] cuda = %s: GPU %d asked for, but %s", where,
                         spec, ordinals[i],
#ifdef HF_HAVE_CUDA
                         present ? "fewer CUDA devices exist" : "no CUDA device was found"
#else
                         "this build has no CUDA (no nvcc at build time)"
#endif
            );
    return rc ? rc : count;
}

void hf_cuda_device_name(const int *ordinals, int n, int g, char *name, size_t len,
                         int *shares)
{
    int seen = 0, total = 0;
    for (int j = 0; j < n; j++) {
        total += ordinals[j] == ordinals[g];
        seen += j < g && ordinals[j] == ordinals[g];
    }
    if (total > 1)
        snprintf(name, len, "cuda%d#%d", ordinals[g], seen + 1);
    else
        snprintf(name, len, "cuda%d", ordinals[g]);
    if (shares)
        *shares = total > 1 ? total : 0;
}

/* Builds the real devices of a machine with `present` GPUs: GPUs' host
 * threads get a core each, the CPU team(s) the rest. */
static int build_real(struct hf_devlist *l, hf_config_t cfg, int present, uint64_t unstarted)
{
    int ordinals[HF_MAX_DEVICES / 2] = {0};
    int ngpu = hf_cuda_list(cfg, present, ordinals, HF_MAX_DEVICES / 2), kept = 0;
    if (ngpu < 0)
        return ngpu;
    for (int g = 0; g < ngpu; g++)
        if (g >= 64 || !(unstarted >> g & 1))
            ordinals[kept++] = ordinals[g];
    ngpu = kept;
    /* Physical cores, not hardware threads: two GEMM threads on one core's
     * hyperthreads run slower than one, and a GPU host thread that shares a
     * core with the team delays every launch. */
    int cores = hf_topo_cores();
    const char *cpu_spec;
    long threads, teams;
    int rc = hf_config_str(cfg, "devices", "cpu", "all", &cpu_spec);
    if (rc == 0 && strcmp(cpu_spec, "all") == 0)
        threads = cores - ngpu > 0 ? cores - ngpu : 0;
    else if (rc == 0)
        rc = hf_config_long(cfg, "devices", "cpu", 0, 0, 4096, &threads);
    if (rc == 0)
        rc = hf_config_long(cfg, "devices", "cpu_teams", 1, 1, 64, &teams);
    if (rc)
        return rc;
    /* Asking for more than exists is an error, not a clamp: the user's split
     * of the machine would silently not be what ran. */
    if (threads + ngpu > cores)
        return hf_fail(HF_ENODEV,
                       "%s: [devices] cpu = %ld with %d GPU host thread(s) needs %ld cores, but "
                       "this machine has %d: hetfarm never oversubscribes the cores",
                       hf_config_where(cfg, "devices", "cpu"), threads, ngpu, threads + ngpu, cores);
    if (threads > 0 && teams > threads)
        return hf_fail(HF_ECONFIG, "%s: [devices] cpu_teams = %ld exceeds cpu = %ld threads",
                       hf_config_where(cfg, "devices", "cpu_teams"), teams, threads);
    if (threads == 0 && ngpu == 0)
        return hf_fail(HF_ENODEV, "%s: no devices: cpu = 0 and no CUDA device",
                       hf_config_path(cfg));

    /* The team(s) take cores [0, threads); GPU host threads the cores after them. */
    int next_core = 0;
    for (long t = 0; threads > 0 && t < teams; t++) {
        struct hf_device *d = add_device(l, HF_DEV_CPU, 0);
        /* Teams split the threads as evenly as possible (tests use two teams
         * to exercise stealing between CPU devices on a 2-core machine). */
        int n = (int)(threads / teams + (t < threads % teams));
        d->ops = &hf_driver_cpu;
        d->info.nthreads = n;
        d->core_first = next_core;
        d->core_count = n;
        d->info.host_core = next_core;
        next_core += n;
        if (teams == 1)
            snprintf(d->info.name, sizeof d->info.name, "cpu");
        else
            snprintf(d->info.name, sizeof d->info.name, "cpu%ld", t);
    }
    /* GPUs come after the CPU team(s), in the order the config lists them, so
     * device indices mean the same thing in every run of a comparison. Each
     * GPU host thread gets a core of its own: the first free core near its
     * GPU, else the first free core (two GPUs on one socket must not share
     * one core, which would delay each other's launches). */
    unsigned char taken[HF_MAX_CORES] = {0};
    for (int c = 0; c < next_core && c < HF_MAX_CORES; c++)
        taken[c] = 1;
    for (int g = 0; g < ngpu; g++) {
        struct hf_device *d = add_device(l, HF_DEV_CUDA, 1);
        if (!d)
            return hf_fail(HF_ERANGE, "[devices]: more than %d devices", HF_MAX_DEVICES);
        int core = -1;
#ifdef HF_HAVE_CUDA
        d->ops = &hf_driver_cuda;
        char model[64] = "", busid[32] = "";
        size_t mem = 0;
        /* No bus id, no nearby core: the first free one. A GPU that is not
         * there (a list built for tests, hf__devlist_init_with_gpus) leaves
         * no error behind. */
        if (hf_cuda_describe(ordinals[g], model, sizeof model, busid, sizeof busid, &mem))
            hf_clear_error();
        core = busid[0] ? hf_topo_core_near_pci(busid, taken) : -1;
#endif
        for (int c = 0; core < 0 && c < cores && c < HF_MAX_CORES; c++)
            if (!taken[c])
                core = c;
        if (core < 0 || core >= HF_MAX_CORES)
            return hf_fail(HF_ENODEV, "[devices]: no free core for the host thread of GPU %d",
                           ordinals[g]);
        taken[core] = 1;
        d->core_first = core;
        d->core_count = 1;
        d->info.host_core = d->core_first;
        d->info.cuda_ordinal = ordinals[g];
        hf_cuda_device_name(ordinals, ngpu, g, d->info.name, sizeof d->info.name,
                            &d->info.shares_gpu);
    }
    return 0;
}

/* Reads [faults] error_at (alias cuda_error_at) = device:round:bundle. */
static int parse_faults(struct hf_devlist *l, hf_config_t cfg)
{
    const char *key = hf_config_get(cfg, "faults", "cuda_error_at") ? "cuda_error_at" : "error_at";
    const char *spec;
    int rc = hf_config_str(cfg, "faults", key, NULL, &spec);
    if (rc || !spec)
        return rc;
    /* The device name may hold colons itself (sim:h200#1): round and bundle are the last two fields. */
    char dev[64];
    int round = -1, bundle = -1, used = 0;
    const char *c2 = strrchr(spec, ':');
    const char *c1 = c2 ? c2 - 1 : NULL;
    while (c1 && c1 > spec && *c1 != ':')
        c1--;
    if (!c1 || c1 <= spec || *c1 != ':' || (size_t)(c1 - spec) >= sizeof dev ||
        sscanf(c1, ":%d:%d%n", &round, &bundle, &used) != 2 || c1[used] || round < 0 ||
        bundle < 0)
        return hf_fail(HF_ECONFIG, "%s: [faults] %s = %s: expected device:round:bundle",
                       hf_config_where(cfg, "faults", key), key, spec);
    snprintf(dev, sizeof dev, "%.*s", (int)(c1 - spec), spec);
    /* The device may be named ("cuda1", "sim:h200#2") or given by index. */
    for (int i = 0; i < l->count; i++) {
        char idx[16];
        snprintf(idx, sizeof idx, "%d", i);
        if (strcmp(dev, l->dev[i].info.name) == 0 || strcmp(dev, idx) == 0) {
            l->dev[i].fault_round = round;
            l->dev[i].fault_bundle = bundle;
            return 0;
        }
    }
    return hf_fail(HF_ENODEV, "%s: [faults] %s = %s: no device '%s' in this run",
                   hf_config_where(cfg, "faults", key), key, spec, dev);
}

/* Builds the list; present < 0: as many GPUs as the machine has. */
static int devlist_init(hf_devlist_t *list, hf_config_t cfg, int simulated, int present,
                        uint64_t unstarted)
{
    /* Counting the GPUs starts the CUDA driver (0.1 s): not for `cuda =
     * none`, nor for a list that leaves every GPU out (each one named is
     * taken as present, then left out). */
    if (!simulated && present < 0 && unstarted == HF_ALL_GPUS)
        present = INT_MAX;
    if (!simulated && present < 0) {
#ifdef HF_HAVE_CUDA
        const char *spec = hf_config_get(cfg, "devices", "cuda");
        present = spec && strcmp(spec, "none") == 0 ? 0 : hf_cuda_device_count();
#else
        present = 0;
#endif
    }
    struct hf_devlist *l = calloc(1, sizeof *l);
    if (!l)
        return hf_fail(HF_ENOMEM, "devices: out of memory");
    int rc = simulated ? build_simulated(l, cfg) : build_real(l, cfg, present, unstarted);
    if (rc == 0)
        rc = parse_faults(l, cfg);
    if (rc) {
        free(l);
        return rc;
    }
    for (int i = 0; i < l->count; i++)
        l->info[i] = l->dev[i].info;
    l->view.count = l->count;
    l->view.dev = l->info;
    l->view.executes = !simulated;
    *list = l;
    return 0;
}

int hf_devlist_init(hf_devlist_t *list, hf_config_t cfg, int simulated)
{
    return devlist_init(list, cfg, simulated, -1, 0);
}

int hf__devlist_init_with_gpus(hf_devlist_t *list, hf_config_t cfg, int present)
{
    HF_ASSERT_MSG(present >= 0, "hf__devlist_init_with_gpus: a GPU count below 0");
    return devlist_init(list, cfg, 0, present, 0);
}

int hf__devlist_init_without(hf_devlist_t *list, hf_config_t cfg, int present,
                             uint64_t unstarted)
{
    return devlist_init(list, cfg, 0, present, unstarted);
}

int hf_devlist_add_node(hf_devlist_t l, const char *name, const struct hf_driver_ops *ops,
                        void *drv)
{
    HF_ASSERT_MSG(ops && name, "hf_devlist_add_node: no driver or no name");
    if (l->count >= HF_MAX_DEVICES)
        return hf_fail(HF_ERANGE, "devices: more than %d devices with the nodes of the run",
                       HF_MAX_DEVICES);
    struct hf_device *d = &l->dev[l->count];
    memset(d, 0, sizeof *d);
    d->info.index = l->count;
    d->info.kind = HF_DEV_NODE;
    d->info.is_gpu = 1; /* whole bundles, may steal: a node is a device of its own rate */
    d->info.link = 1;   /* every node's messages go through this rank's one link; its
                           bandwidth is left to the schedulers to learn */
    d->info.cuda_ordinal = -1;
    d->info.host_core = -1;
    snprintf(d->info.name, sizeof d->info.name, "%s", name);
    d->ops = ops;
    d->drv = drv;
    d->core_first = -1;
    d->fault_round = d->fault_bundle = -1;
    l->info[l->count] = d->info;
    l->view.count = ++l->count;
    return 0;
}

void hf_devlist_destroy(hf_devlist_t l)
{
    free(l);
}

int hf_devlist_count(hf_devlist_t l)
{
    return l->count;
}

struct hf_device *hf_devlist_get(hf_devlist_t l, int i)
{
    HF_ASSERT_MSG(i >= 0 && i < l->count, "device index out of range");
    return &l->dev[i];
}

const struct hf_devices *hf_devlist_view(hf_devlist_t l)
{
    return &l->view;
}
