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
 * times (1 + jitter * g) with g a standard normal draw from the run's seed. */
struct hf_sim_model {
    double rate;        /* work/s of the whole device */
    double latency_s;   /* fixed cost per bundle */
    double bandwidth;   /* host<->device bytes/s (GPUs); 0 = transfers are free */
    double jitter;      /* relative noise on each bundle's time */
};

/* Where the time of one bundle went (seconds, from the driver's clock). */
struct hf_bundle_times {
    double copy_in_s, kernel_s, copy_out_s; /* 0 where not applicable (CPU) */
};

struct hf_device;

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
    /* Frees what open allocated; called on the host thread. */
    void (*close)(struct hf_device *dev);
};

struct hf_device {
    struct hf_device_info info;
    const struct hf_driver_ops *ops; /* NULL for sim devices */
    struct hf_sim_model model;       /* sim devices */
    int core_first, core_count;      /* cores of the CPU team / the host thread's core */
    void *drv;                       /* driver state */
    /* Fault injection ([faults] cuda_error_at = device:round:bundle): the
     * driver fails the bundle with that 0-based index in that round. -1 = none. */
    int fault_round, fault_bundle, bundles_this_round;
};

extern const struct hf_driver_ops hf_driver_cpu;
#ifdef HF_HAVE_CUDA
extern const struct hf_driver_ops hf_driver_cuda;
#endif

/* The keys of [devices], [sim.NAME] and [faults] (drivers/devices.c), for
 * hf_config_validate() and help; NULL-key terminated. */
extern const struct hf_config_key hf_device_keys[];

/* The device list of a run, built from [devices] (see README's config
 * reference). Opaque; the public view is `struct hf_devices`. */
typedef struct hf_devlist *hf_devlist_t;

/* Builds the list. `simulated` selects the sim engine's `sim = ...` devices
 * (each from a [sim.NAME] section); otherwise `cpu = N` and `cuda = all|0,1`.
 * Fails with HF_ENODEV when more devices are asked for than exist and with
 * HF_ECONFIG naming file:line for malformed values. */
int hf_devlist_init(hf_devlist_t *list, hf_config_t cfg, int simulated);
void hf_devlist_destroy(hf_devlist_t list);
int hf_devlist_count(hf_devlist_t list);
struct hf_device *hf_devlist_get(hf_devlist_t list, int i);
/* The app's view (info array and count); valid while the list lives. */
const struct hf_devices *hf_devlist_view(hf_devlist_t list);

/* Topology (hwloc), shared by the CPU and CUDA drivers and `hetfarm devices`. */
int hf_topo_cores(void);              /* physical cores the process may use */
int hf_topo_numa_nodes(void);
/* Pins the calling thread to cores [first, first + count) (logical core indices). */
int hf_topo_pin_cores(int first, int count);
/* The first core close to a PCI device (bus id "0000:3b:00.0"), or -1. */
int hf_topo_core_near_pci(const char *busid);
/* Writes a human description of the machine (CPU model, cores, NUMA, GPUs). */
void hf_topo_describe(void *file /* FILE* */);
/* The CPU model string (from /proc/cpuinfo), never NULL. */
const char *hf_topo_cpu_model(void);

/* "OpenBLAS 0.3.21 ... core=SkylakeX (OPENBLAS_CORETYPE=SkylakeX)": what the
 * loaded BLAS runs (drivers/blas_env.c), for `hetfarm devices` and results.json. */
const char *hf_blas_describe(void);

#ifdef HF_HAVE_CUDA
/* GPU discovery (drivers/device_cuda.c), from any thread. The number of CUDA
 * devices; 0 when there is no driver, no device, or the runtime fails in any
 * way (never an error). */
int hf_cuda_device_count(void);
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
