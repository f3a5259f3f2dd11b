/* device.h - device drivers, the device list and the machine.
 *
 * Each kind of device is a driver: a const ops table (drivers/device_cpu.c,
 * drivers/device_cuda.c). Whether CUDA exists is decided at build time (HF_HAVE_CUDA and
 * the Makefile's source list). In the real engine every device has its own host
 * thread; the driver's `open`, `run` and `close` are all called from that thread,
 * so a driver may bind a CUDA context, streams and buffers to it and overlap its
 * own copies and kernels inside `run`. The sim engine calls no driver at all: it
 * times bundles with the device's model.
 */
#ifndef HF_DEVICE_H
#define HF_DEVICE_H

#include "hetfarm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the sim engine times a bundle on a modelled device:
 *   seconds = latency_s + bytes / bandwidth (GPUs only) + work / rate,
 * times (1 + jitter * g) with g a standard normal draw from the run's seed.
 * What broke HASS on real GPUs is modelled too, in the scheduled rounds only
 * (not the standalone passes), deterministically for a seed: the device's
 * first bundle costs warmup_s more, a bundle of a chunk count the device has
 * not run before new_size_s more, a bundle stalls for stall_s more with
 * probability stall_prob (and always the bundle stall_bundle of round
 * stall_round), stalls stall_rate times per second of its time on average
 * (Poisson: a long bundle may stall more than once, a short one seldom: real
 * hiccups come with time, not with launches), and from round slow_round on
 * every bundle takes slow_factor times as long. */
struct hf_sim_model {
    double rate;        /* work/s of the whole device */
    double latency_s;   /* fixed cost per bundle */
    double bandwidth;   /* host<->device bytes/s (GPUs); 0 = transfers are free */
    double jitter;      /* relative noise on each bundle's time */
    double warmup_s;    /* extra time of the device's first bundle */
    double new_size_s;  /* extra time of a bundle of a chunk count not run before */
    double stall_prob;  /* probability that a bundle stalls */
    double stall_rate;  /* stalls per second of a bundle's time (Poisson) */
    double stall_s;     /* extra time of a stalled bundle (of each stall) */
    int stall_round, stall_bundle; /* a stall forced on that bundle; -1 = none */
    double slow_factor; /* time factor from slow_round on (1 = none) */
    int slow_round;
    double part_s;      /* a round's extra seconds for the device's taking part beside others
                           (merge, copy-back, sync, host turnaround); < 0: the default
                           (engine_sim.c, HF_SIM_PART_S) */
    double part_per_unit_s; /* ... and per unit of work the device ran in the round */
};

/* The network between the sim engine's nodes ([sim.net], core/sim_node.c):
 * every message costs latency_s, and a node's bundle moves bytes_share times
 * its bytes over `bandwidth` bytes/s; with `shared` every node's transfer
 * goes through rank 0's one link, one transfer at a time. */
struct hf_sim_net {
    double latency_s;   /* one message, each way */
    double bandwidth;   /* bytes/s of a link */
    double bytes_share; /* share of a bundle's bytes that crosses the network */
    int shared;         /* 1: rank 0's link carries every node's transfer */
};

struct hf_device;

/* A modelled node ([devices] nodes = N, sim engine): one device to the
 * top-level scheduler, made of `count` modelled devices of its own (the
 * `sim =` list, the same devices node 0 has) behind the network. */
struct hf_sim_node {
    const struct hf_device *inner; /* count devices */
    int count;
    struct hf_sim_net net;
};

/* Monotonic seconds: the engine's clock, which drivers time their steps by. */
double hf__now(void);

/* Where the time of one bundle went (seconds, from the driver's clock). */
struct hf_bundle_times {
    double copy_in_s, kernel_s, copy_out_s; /* 0 where not applicable (CPU) */
    double shared_s; /* after the kernels: bringing the recorded shared-data changes home
                        (a GPU's; OWNED ranges go home within the copy-out phase) */
    int pieces;      /* pieces the driver cut the bundle into (0: not cut, a CPU) */
};

struct hf_driver_ops {
    const char *name;
    /* Called on the device's host thread before round 0 (after the thread is
     * pinned). Allocates streams, staging buffers, arenas. */
    int (*open)(struct hf_device *dev);
    /* Runs one bundle to completion (synchronously as seen by the caller),
     * calling the app's kernel for this kind, and fills `t`. A device error
     * returns HF_EDEVICE/HF_EDEVOOM; an app error HF_EAPP. */
    int (*run)(struct hf_device *dev, const struct hf_app *app, void *app_ctx,
               const struct hf_bundle *b, struct hf_bundle_times *t);
    /* Optional: the bundle `run` returned for took `seconds`, as the engine
     * timed it (the app's collect included); on the host thread, after a
     * successful run. */
    void (*ran)(struct hf_device *dev, const struct hf_bundle *b, double seconds);
    /* Frees what open allocated; called on the host thread. */
    void (*close)(struct hf_device *dev);
    /* Optional: the device's start-up that needs no app data (a GPU's
     * context), called on a thread of its own while the app reads its input
     * (core/run.c), so that open() finds it done. Errors are left to open(). */
    void (*prewarm)(const struct hf_device *dev);

    /* Shared data (hetfarm.h, "Shared data"), for drivers whose device keeps
     * its own copies (NULL for the CPU, which works on the host copies). Both
     * run between rounds.
     * shared_pull: points *idx and *vals at the indices and values of the
     * elements of HF_SHARED_MIN/MAX/OR array s that this device's bundles
     * recorded this round, in host buffers of the driver's own (a driver
     * brings them there at the end of each bundle, as part of the bundle),
     * and returns how many (>= 0) or an HF_E* code; the device forgets them
     * before it records again. Called on the main thread, between rounds: no
     * device work. (shared_push is called on the device's thread.) */
    long (*shared_pull)(struct hf_device *dev, int s, const uint32_t **idx, const void **vals);
    /* shared_push: brings the device copy of array s up to date with the host
     * copy: element idx[k] becomes vals[k] for k < n, or, with idx == NULL,
     * elements [first, first + n) become vals[0, n). */
    int (*shared_push)(struct hf_device *dev, int s, const uint32_t *idx, const void *vals,
                       size_t n, size_t first);
    /* shared_fetch (optional): copies the device's whole copy of array s over
     * the host copy. The merge calls it, on the device's thread, for a round
     * whose every change this device made in one bundle, when they are many:
     * one copy then costs less than storing them one by one. A driver that
     * has it promises that shared_pull's indices are below the array's count
     * (it checks them as it gathers; the merge then reads the list as the
     * round's union without a pass over it). */
    int (*shared_fetch)(struct hf_device *dev, int s);
};

struct hf_device {
    struct hf_device_info info;
    const struct hf_driver_ops *ops; /* NULL for sim devices */
    struct hf_sim_model model;       /* sim devices */
    const struct hf_sim_node *node;  /* sim node devices (HF_DEV_NODE), else NULL */
    int core_first, core_count;      /* cores of the CPU team / the host thread's core */
    void *drv;                       /* driver state */
    /* Fault injection ([faults] cuda_error_at = device:round:bundle): the
     * driver fails the bundle with that 0-based index in that round. -1 = none. */
    int fault_round, fault_bundle, bundles_this_round;
    /* The app's shared data, set by the engine before open (NULL, 0: none). */
    const struct hf_shared *shared;
    int nshared;
    int cublas; /* the app's GPU kernel calls cuBLAS (struct hf_app.cublas); set before open */
};

extern const struct hf_driver_ops hf_driver_cpu;
#ifdef HF_HAVE_CUDA
extern const struct hf_driver_ops hf_driver_cuda;
#endif

/* The keys of [devices], [sim.NAME], [sim.net] and [faults] (drivers/devices.c), for
 * hf_config_validate() and help; NULL-key terminated. */
extern const struct hf_config_key hf_device_keys[];

/* The device list of a run, built from [devices] (see README's config
 * reference). Opaque; the public view is `struct hf_devices`. */
typedef struct hf_devlist *hf_devlist_t;

/* Builds the list. `simulated` selects the sim engine's `sim = ...` devices
 * (each from a [sim.NAME] section), followed by the node devices node1 ..
 * node{N-1} of `nodes = N`, each made of the same list behind [sim.net];
 * otherwise `cpu = N` and `cuda = all|0,1`.
 * Fails with HF_ENODEV when more devices are asked for than exist and with
 * HF_ECONFIG naming file:line for malformed values. */
int hf_devlist_init(hf_devlist_t *list, hf_config_t cfg, int simulated);
/* The real list as though the machine had `present` GPUs (cuda = all means
 * 0 .. present-1), for tests of the list where no GPU is lent; its devices
 * must not be opened beyond the GPUs that exist. */
int hf__devlist_init_with_gpus(hf_devlist_t *list, hf_config_t cfg, int present);
/* The real list without the GPUs whose positions in [devices] cuda's list
 * are set in `unstarted` (bit g: the g-th GPU named): a run that does not
 * start them (core/startup_repay.c). `cpu = all` then counts their host
 * threads' cores back to the CPU. `present` as above, < 0: the machine's. */
int hf__devlist_init_without(hf_devlist_t *list, hf_config_t cfg, int present,
                             uint64_t unstarted);
/* `unstarted` for every GPU: the list is built without looking for any. */
#define HF_ALL_GPUS (~0ull)
void hf_devlist_destroy(hf_devlist_t list);
/* Appends a node of a run across nodes (framework/mpi): one device to this
 * rank's schedulers (kind HF_DEV_NODE, whole bundles like a GPU), driven by
 * `ops` with driver state `drv` (owned by the caller). HF_ERANGE when the list
 * is full. Call before the engine starts its threads. */
int hf_devlist_add_node(hf_devlist_t list, const char *name, const struct hf_driver_ops *ops,
                        void *drv);
int hf_devlist_count(hf_devlist_t list);
struct hf_device *hf_devlist_get(hf_devlist_t list, int i);
/* The app's view (info array and count); valid while the list lives. */
const struct hf_devices *hf_devlist_view(hf_devlist_t list);

/* The GPUs that [devices] cuda names on a machine of `present` GPUs: `all`
 * (0 .. present-1), `none`, or a list of ordinals, in which one may repeat
 * (cuda = 0,0: GPU 0 serves as two devices; a correctness mode for the
 * paths between GPUs, see drivers/devices.c). Fills ordinals[0 .. cap) and
 * returns their count, or fails naming file:line, key and value: HF_ECONFIG
 * (not all, none or a number; negative; a repeated ordinal while HF_BENCH is
 * set in the environment), HF_ENODEV (an ordinal >= present), HF_ERANGE
 * (more than cap). */
int hf_cuda_list(hf_config_t cfg, int present, int *ordinals, int cap);
/* The name of GPU device g of the list ordinals[0 .. n): "cuda1" for a GPU
 * named once, "cuda0#1", "cuda0#2" ... for one named several times; sets
 * *shares (when not NULL) to how many devices share its GPU (0: its own). */
void hf_cuda_device_name(const int *ordinals, int n, int g, char *name, size_t len,
                         int *shares);

/* Topology (hwloc), shared by the CPU and CUDA drivers and `hetfarm devices`. */
int hf_topo_cores(void);              /* physical cores the process may use */
int hf_topo_numa_nodes(void);
/* Pins the calling thread to cores [first, first + count) (logical core indices). */
int hf_topo_pin_cores(int first, int count);
/* The first core close to a PCI device (bus id "0000:3b:00.0") that `taken`
 * (indexed by core, NULL: none) does not mark, or -1. */
int hf_topo_core_near_pci(const char *busid, const unsigned char *taken);
/* Moves every thread the process has now off the cores marked in reserved[0..ncores)
 * (the GPU host threads' own cores), remembering where each was allowed to run;
 * threads it creates later inherit the creator's binding. *out is NULL when
 * nothing was moved (nothing reserved, no topology). Returns 0 or HF_ENOMEM. */
typedef struct hf_topo_confinement *hf_topo_confinement_t;
int hf_topo_confine_threads(const unsigned char *reserved, int ncores,
                            hf_topo_confinement_t *out);
/* Gives the threads moved by hf_topo_confine_threads their old bindings back. */
void hf_topo_release_threads(hf_topo_confinement_t c);
/* How many logical CPUs the confined threads may still use (0 for c NULL). */
int hf_topo_confined_cpus(hf_topo_confinement_t c);
/* The most cores the device list tracks when it gives GPU host threads a core each. */
#define HF_MAX_CORES 4096
/* Writes a human description of the machine (CPU model, cores, NUMA, GPUs). */
void hf_topo_describe(void *file /* FILE* */);
/* The CPU model string (from /proc/cpuinfo), never NULL. */
const char *hf_topo_cpu_model(void);

/* "OpenBLAS 0.3.21 ... core=SkylakeX (OPENBLAS_CORETYPE=SkylakeX)": what the
 * loaded BLAS runs (drivers/blas_env.c), for `hetfarm devices` and results.json. */
const char *hf_blas_describe(void);
/* "OMP_WAIT_POLICY=passive": how the loaded OpenMP runtime's idle threads
 * wait (drivers/runtime_env.c), for `hetfarm devices` and results.json. */
const char *hf_openmp_describe(void);

#ifdef HF_HAVE_CUDA
/* GPU discovery (drivers/device_cuda.c), from any thread. The number of CUDA
 * devices; 0 when there is no driver, no device, or the runtime fails in any
 * way (never an error). */
int hf_cuda_device_count(void);
/* Whether this process has started the CUDA driver (hf_cuda_device_count was
 * called): starting it costs 0.1 s, which a run on the CPU alone does not pay
 * just to describe the machine. */
int hf_cuda_driver_started(void);
/* Describes GPU `ordinal`: its name, PCI bus id ("0000:3b:00.0", the form hwloc
 * and nvidia-smi print) and total memory. Any output may be NULL. Returns 0, or
 * HF_ENODEV with a message when the ordinal does not exist. */
int hf_cuda_describe(int ordinal, char *name, size_t nlen, char *busid, size_t blen,
                     size_t *mem_bytes);
/* The GPU driver's version ("580.159.04", else "CUDA 13.0", else "unknown"). */
void hf_cuda_driver_version(char *buf, size_t len);
#endif

#ifdef __cplusplus
}
#endif
#endif
