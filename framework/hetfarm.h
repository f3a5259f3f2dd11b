/* hetfarm.h - the public API of hetfarm, the heterogeneous task-farm runtime.
 *
 * An application describes a divisible workload by filling `struct hf_app`:
 * a task generator (`next_load`), a partitioner that cuts a load into chunks,
 * a bundler that merges contiguous chunks into one bundle, and kernels that run
 * a bundle on the CPU team or on one GPU. hetfarm runs the loads round by round
 * and a pluggable scheduler (schedulers/) decides which device runs which chunks.
 *
 * Everything here is plain C11 and free of CUDA types; the CUDA-side view of a
 * device (`struct hf_cuda`) is declared in framework/hf_cuda.h.
 */
#ifndef HF_HETFARM_H
#define HF_HETFARM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Errors: every function returns 0 or a negative HF_E* code.                */

/* The one list of error codes; it generates the enum and hf_strerror(). */
#define HF_ERRNO_MAP(XX)                                                    \
    XX(EINVAL, "invalid argument")                                          \
    XX(ENOMEM, "out of memory")                                             \
    XX(EIO, "input/output error")                                           \
    XX(ENOENT, "no such file, app, scheduler or key")                       \
    XX(ECONFIG, "bad configuration")                                        \
    XX(ENODEV, "no such device")                                            \
    XX(EDEVICE, "device failed")                                            \
    XX(EDEVOOM, "device out of memory")                                     \
    XX(EAPP, "application callback failed")                                 \
    XX(ESCHED, "scheduler did not run every chunk exactly once")            \
    XX(ERANGE, "value out of range")                                        \
    XX(ENOTSUP, "not supported by this build")                              \
    XX(EVERIFY, "result differs from the reference")                        \
    XX(EINTR, "interrupted by a signal")

#define HF__ERRNO_INDEX(code, msg) HF__INDEX_##code,
enum hf__errno_index { HF_ERRNO_MAP(HF__ERRNO_INDEX) HF__ERRNO_COUNT };
#undef HF__ERRNO_INDEX

#define HF__ERRNO_VALUE(code, msg) HF_##code = -(HF__INDEX_##code + 1),
enum hf_errno { HF_OK = 0, HF_ERRNO_MAP(HF__ERRNO_VALUE) };
#undef HF__ERRNO_VALUE

/* Returns the fixed description of an HF_E* code ("unknown error" otherwise). */
const char *hf_strerror(int err);

/* Records a detailed message for the calling thread (printf-style) and returns
 * `err`, so that a failure reads `return hf_fail(HF_ECONFIG, "%s:%d: ...", ...)`.
 * The first message recorded since hf_clear_error() is kept. */
int hf_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The detailed message of the calling thread's last failure, or "" if none. */
const char *hf_last_error(void);

/* Forgets the calling thread's last failure message. */
void hf_clear_error(void);

/* Programmer misuse: print the message with its location and abort. */
#define HF_ASSERT_MSG(cond, msg)                                            \
    do {                                                                    \
        if (!(cond))                                                        \
            hf__assert_fail(#cond, (msg), __FILE__, __LINE__);              \
    } while (0)
void hf__assert_fail(const char *cond, const char *msg, const char *file, int line)
    __attribute__((noreturn));

/* ------------------------------------------------------------------------ */
/* Configuration: an INI file read once, with typed getters that name the     */
/* file, line, section and key of any bad value.                              */

typedef struct hf_config *hf_config_t;

/* Reads an INI file. Fails with HF_EIO (unreadable) or HF_ECONFIG (malformed,
 * the message names file:line). */
int hf_config_load(hf_config_t *cfg, const char *path);
/* Parses INI text held in memory; `name` stands for the file in messages. */
int hf_config_parse(hf_config_t *cfg, const char *name, const char *text);
void hf_config_destroy(hf_config_t cfg);

/* The raw value of section.key, or NULL when absent. Marks the key as read. */
const char *hf_config_get(hf_config_t cfg, const char *section, const char *key);
/* Typed getters: absent keys yield `def` and return 0; present but malformed
 * or out-of-range values return HF_ECONFIG with "file:line: [section] key = value: why". */
int hf_config_str(hf_config_t cfg, const char *section, const char *key, const char *def,
                  const char **out);
int hf_config_long(hf_config_t cfg, const char *section, const char *key, long def, long min,
                   long max, long *out);
int hf_config_double(hf_config_t cfg, const char *section, const char *key, double def,
                     double min, double max, double *out);
/* Sizes accept suffixes K, M, G, T (powers of 1024) and KiB/MiB/GiB/TiB. */
int hf_config_size(hf_config_t cfg, const char *section, const char *key, size_t def,
                   size_t min, size_t max, size_t *out);
int hf_config_bool(hf_config_t cfg, const char *section, const char *key, int def, int *out);
/* A comma-separated list; items are trimmed. Returns the count (>= 0) or an
 * HF_E* code; `items` is a NULL-terminated array the caller frees with free(). */
int hf_config_list(hf_config_t cfg, const char *section, const char *key, char ***items);
/* Whether a section exists in the file. */
int hf_config_has_section(hf_config_t cfg, const char *section);
/* The file:line of section.key for messages ("file" alone when absent). */
const char *hf_config_where(hf_config_t cfg, const char *section, const char *key);
/* Fails with HF_ECONFIG naming the first key, in any section listed in
 * `sections` (NULL-terminated), that nothing read: catches misspelt keys. */
int hf_config_check_unused(hf_config_t cfg, const char *const *sections);
/* The path the configuration was read from. */
const char *hf_config_path(hf_config_t cfg);
/* A 64-bit digest of every entry (section, key, value, in file order) but
 * those `skip` names (NULL-terminated: "section" for a whole section,
 * "section.key" for one key). A value naming an existing file mixes in the
 * file's size and modification time, so that a rewritten input changes it. */
uint64_t hf_config_digest(hf_config_t cfg, const char *const *skip);

/* Config keys: one table-driven rule for every section and key. Each owner
 * declares its keys in one table (the framework's [run], [compare],
 * [devices], [sim.NAME] and [faults]; an app's [load] through `hf_app.keys`;
 * a scheduler's [<name>] through `hf_sched_ops.keys`), one line per key, and
 * hf_config_validate() checks a whole file against the tables before anything
 * runs: unknown sections and keys, types, ranges. `hetfarm run --help` prints
 * the same tables. A new key is one line in its owner's table. */
enum hf_key_type {
    HF_KEY_STR,  /* any text, or one of `choices` */
    HF_KEY_INT,  /* an integer (42, 0x2a) in [min, max], or one of `choices` */
    HF_KEY_NUM,  /* a finite number in [min, max] */
    HF_KEY_SIZE, /* a byte count such as 4096, 64K, 2MiB in [min, max] */
    HF_KEY_BOOL, /* yes/no, true/false, on/off, 1/0 */
    HF_KEY_LIST, /* comma-separated items, each one of `choices` when given */
};

/* Flags of a key. */
#define HF_KEY_MIN_OPEN 1u  /* min itself is not valid: (min, max] */
#define HF_KEY_MAX_OPEN 2u  /* max itself is not valid: [min, max) */
#define HF_KEY_REQUIRED 4u  /* the key must be given (in every matching section) */
#define HF_KEY_NAMES_SECTIONS 8u /* LIST: each item X names a section [<choices>.X], and
                                    every such section must be named (e.g. [devices] sim) */

struct hf_config_key {
    const char *section;  /* "run", or "sim.*" for every [sim.NAME]; NULL in an app's or a
                             scheduler's table: the owner's section ([load], [<scheduler>]) */
    const char *key;
    enum hf_key_type type;
    double min, max;      /* INT, NUM, SIZE: the valid range (see the flags) */
    unsigned flags;       /* HF_KEY_* */
    const char *choices;  /* "real|sim": words accepted (STR, INT besides numbers, LIST items) */
    const char *def;      /* the default as help shows it ("10", "app default"), or NULL */
    const char *help;     /* one line for `hetfarm run --help` */
};

/* One owner's table: `keys` ends with an entry whose key is NULL; `section`
 * stands for a NULL section in its keys and names a section that is valid
 * even when it holds no key. `keys` NULL means the owner declared no table
 * (an app or scheduler written before tables): any key of `section` passes
 * here and is checked when read, as before. */
struct hf_config_rules {
    const char *section;
    const struct hf_config_key *keys;
    const char *owner; /* for help only: who reads the keys ("matmul"), or NULL */
};

/* Checks every section and key of the file against the tables, in file
 * order; the first problem fails with HF_ECONFIG and
 * "file:line: [section] key = value: why" (unknown ones list the valid
 * sections or keys). Marks nothing read. */
int hf_config_validate(hf_config_t cfg, const struct hf_config_rules *rules, size_t nrules);
/* Prints the tables as help: one line per key with its default, type or
 * range, and help text. */
void hf_config_keys_help(FILE *f, const struct hf_config_rules *rules, size_t nrules);

/* ------------------------------------------------------------------------ */
/* Work: loads, chunks, bundles.                                              */

/* One unit of work drawn from the task pool per round (one GEMM, one text
 * segment). `units` is what the partitioner divides (rows, bytes); `work` is
 * in app units (flops for matmul) and `bytes` is what a GPU must receive and
 * send back for the whole load; both are spread over chunks in proportion. */
struct hf_load {
    int round;      /* set by the engine before next_load */
    size_t units;   /* partitionable size of the load */
    double work;    /* total work, app units */
    double bytes;   /* total host<->GPU traffic for the whole load */
    void *data;     /* app-owned */
    struct hf__shared_set *shared; /* set by the engine: the run's shared data (hf_shared_changed) */
    unsigned long serial; /* set by the engine: loads drawn before this one in the run (the
                             standalone passes draw round 0 again; a node draws with it) */
    int cpu_only;   /* set by next_load (0 by default): the load has no GPU kernel, so a
                       GPU given its chunks could only run the CPU code on its one host
                       thread; GPUs then sit this round out and the scheduler splits it
                       over the other devices. Ignored when no other device is alive
                       (a run of GPUs alone). */
    int work_exact; /* set by next_load (0 by default): each chunk's work is what it
                       costs (matmul's rows), so the engine never learns chunk costs
                       from the bundles' times (core/chunk_cost.c), whose noise on real
                       devices can pass for an irregular load. */
    double solo_rounds; /* set by next_load (0 = 1): how many rounds of the split path one
                       device alone covers when it runs this load whole (a search fused on
                       one GPU runs several levels in one round; links between parts add
                       rounds a single device does not need). The schedulers' choice of
                       device sets divides a single device's predicted round by it. */
};

/* An independent piece of a load: units [begin, end). */
struct hf_chunk {
    size_t index;
    size_t begin, end;
    double work;
    double bytes;
};

/* Contiguous chunks [first, first + count) given to one device at once,
 * covering units [begin, end). */
struct hf_bundle {
    const struct hf_load *load;
    size_t first, count;
    size_t begin, end;
    double work;
    double bytes;
    int device; /* index of the device running it */
};

/* ------------------------------------------------------------------------ */
/* Devices as an app sees them.                                               */

enum hf_device_kind { HF_DEV_CPU, HF_DEV_CUDA, HF_DEV_SIM, HF_DEV_NODE };

struct hf_device_info {
    int index;                /* 0..count-1, in the order of [devices] */
    enum hf_device_kind kind; /* sim devices model either a CPU or a GPU */
    int is_gpu;               /* a GPU (real or modelled): gets whole bundles, may steal */
    char name[48];            /* "cpu", "cuda0", "sim:h200#1" ... */
    int nthreads;             /* CPU team size (cpu devices) */
    int cuda_ordinal;         /* CUDA device number (cuda devices), else -1 */
    int shares_gpu;           /* cuda devices on one GPU ([devices] cuda = 0,0: 2, named
                                 cuda0#1, cuda0#2): a correctness mode whose times are
                                 not several GPUs'; 0 = the device has its GPU to itself */
    int host_core;            /* core the device's host thread is pinned to, -1 if none */
    /* A shared link: devices with the same link > 0 move their bundles' bytes
     * (hf_chunk.bytes) through one link, one transfer at a time (the nodes of a
     * run behind rank 0's network link; GPUs behind one PCIe switch). 0: the
     * device's transfers are its own. Schedulers may plan with it (HASS's split
     * keeps the link's bytes within the round: schedulers/hass_link.c). */
    int link;
    double link_bandwidth;    /* bytes of hf_chunk.bytes per second the link carries;
                                 0 = unknown (a scheduler learns it) */
};

struct hf_devices {
    int count;
    const struct hf_device_info *dev;
    int executes; /* 1 when bundles really run (real engine, or sim with execute = yes) */
    /* The processes of a run across nodes (mpirun -np N: N, the same on every
     * rank), else 1. With ranks > 1 every rank draws every load and must cut
     * the same chunks: what shapes a load (next_load, partition) must then
     * not follow this list, which differs from rank to rank (rank 0 lists
     * the nodes, a node its own devices). */
    int ranks;
};

/* ------------------------------------------------------------------------ */
/* Host memory for arrays that GPUs copy to and from, without CUDA calls.     */

/* Allocates `bytes` (0 is allowed) of uninitialised, page-aligned host memory
 * for arrays whose pieces run_cuda copies to or from a GPU. When `devs` (the
 * list setup receives) has a real GPU and the build has CUDA, the memory is
 * page-locked (pinned, for every GPU of the run), so those copies are
 * asynchronous and overlap kernels; otherwise (CPU-only runs or builds,
 * simulated devices, devs NULL, or the system refusing to pin) it is plain
 * memory, which is correct but copies synchronously. Pinning places every
 * page at once, on the NUMA node of the calling thread, before the app's
 * first touch. Returns NULL with hf_fail details (HF_ENOMEM) on failure.
 * Thread-safe; usually called from setup. */
void *hf_host_alloc(const struct hf_devices *devs, size_t bytes);
/* Frees memory from hf_host_alloc (NULL: does nothing), unpinning it first:
 * every pin is undone exactly once, so whatever reuses the addresses later
 * (the next scheduler of a comparison) starts with no stale registration.
 * It takes no device list because the allocation remembers whether it was
 * pinned, and teardown, which frees, has none. */
void hf_host_free(void *p);
/* 1 when p lies inside memory from hf_host_alloc that is pinned, else 0. */
int hf_host_pinned(const void *p);
/* Fills `bytes` at p with all-one bytes - NaN as float and as double - so that
 * output no device writes fails verify (poison it in next_load). Streaming
 * stores on the calling thread's OpenMP team keep the lines out of the CPU's
 * caches, where they would slow a GPU's copy of its results into them. */
void hf_host_poison(void *p, size_t bytes);

struct hf__shared_set; /* the engine's view of an app's shared data (core/shared.c) */
struct hf_cuda; /* a GPU's streams, staging buffers and arena: framework/hf_cuda.h */

/* ------------------------------------------------------------------------ */
/* Shared data: what iterative apps keep on every device across rounds.       */
/*
 * An app that runs many rounds over the same data (a graph's CSR, matmul's B)
 * and carries state from round to round (BFS depths, ranks, component labels)
 * declares that data once, through `struct hf_app.shared`, and the framework
 * keeps it on every device:
 *
 *   HF_SHARED_READONLY  uploaded to every GPU once, before round 0, and kept
 *                       there until the run ends (the "resident data").
 *   HF_SHARED_OWNED     a state vector whose element i belongs to unit i: a
 *                       bundle covering units [begin, end) writes exactly
 *                       elements [begin, end) (pull PageRank's new ranks). A
 *                       GPU's bundle range is copied back to the host when
 *                       the bundle ends; at the round's end every GPU gets the
 *                       ranges the other devices computed.
 *   HF_SHARED_MIN/MAX/OR a state vector any bundle may lower / raise / OR at
 *                       any element (BFS depths, SSSP distances, CC labels).
 *                       A bundle records each element it changed (CPU:
 *                       hf_shared_changed; GPU: hf_cuda_shared_record); at
 *                       the round's end the framework merges every device's
 *                       changed elements into the host copy with the op, and
 *                       sends only the elements that changed anywhere back to
 *                       every GPU. Per-round traffic is what changed.
 *
 * The host array is the merged copy. The CPU device works on it directly
 * (concurrent bundles of one round must update it atomically, e.g. with
 * __atomic builtins); a GPU works on its own replica (hf_cuda_shared). Between
 * rounds, after the merge, every replica equals the host copy, so next_load
 * may read the host copy to build the next round's load (a frontier).
 * next_load may change shared arrays only in round 0 (to initialise or reset
 * them): the framework then sends them whole to every device.
 *
 * Across nodes (mpirun; framework/mpi) every rank keeps the arrays and draws
 * every load; rank 0's merge takes each node's changes like a GPU's and sends
 * every node the merged values and the round's union, so next_load and
 * hf_shared_last_changes see the same on every rank. An app that runs across
 * nodes must then shape its loads the same on every rank (struct
 * hf_devices.ranks).
 */
enum hf_elem { HF_ELEM_U8, HF_ELEM_I32, HF_ELEM_U32, HF_ELEM_F32, HF_ELEM_I64, HF_ELEM_U64,
               HF_ELEM_F64 };
enum hf_shared_kind { HF_SHARED_READONLY, HF_SHARED_OWNED, HF_SHARED_MIN, HF_SHARED_MAX,
                      HF_SHARED_OR };

struct hf_shared {
    const char *name;          /* for messages ("graph.adj", "bfs.depth") */
    void *host;                /* count elements, owned by the app */
    size_t count;
    enum hf_elem elem;
    enum hf_shared_kind kind;  /* HF_SHARED_OR needs an integer element type */
};

/* Bytes of one element of type `e`. */
size_t hf_elem_size(enum hf_elem e);

/* Records that element i of shared array s (its index in the app's `shared`
 * list) changed on the host, from run_cpu (pass b->load).
 * Thread-safe and lock-free; recording an element twice in a round is
 * harmless. Only for HF_SHARED_MIN/MAX/OR arrays. */
void hf_shared_changed(const struct hf_load *load, int s, size_t i);

/* The elements of MIN/MAX/OR array s that changed anywhere in the last
 * round (each once, in no particular order; *n of them), valid in next_load
 * and verify: a frontier app builds its next frontier from it without
 * scanning the array. Empty in round 0. */
const uint32_t *hf_shared_last_changes(const struct hf_load *load, int s, size_t *n);

/* A bundle that did more work than its chunks declare says how much, in
 * the load's unit of work: a GPU that went on with the next levels of a
 * search within the round (bfs's fused search) ran work no chunk holds.
 * Its device's rates are then taken over all it ran (its cost model, its
 * standalone rate, the work the schedulers are told it did), so that a
 * device that ran more is not read as slower, and no chunk cost is learned
 * from that bundle (its time is not its chunks'). Call it from the
 * bundle's run function, on the thread that called it, at most once a
 * bundle; for apps with shared data (ignored without). */
void hf_bundle_did_more(const struct hf_bundle *b, double work);

/* Bytes of host memory that a bundle wrote: what a run across nodes sends
 * from the rank that ran the bundle to rank 0 (struct hf_app.results). */
struct hf_region {
    void *ptr;
    size_t bytes;
};

/* One figure of an app's results: a name ("gteps"), a value, a unit ("1e9 edges/s"). */
struct hf_figure {
    const char *name;
    double value;
    const char *unit;
};

/* What an app's results are when [run] rounds ended the run before the app
 * reached its own end (struct hf_app.stopped). */
enum hf_stop {
    HF_STOP_NONE = 0,        /* the app ended by itself, or has no end of its own */
    HF_STOP_NO_RESULT = 1,   /* unfinished results are wrong (a search half done): the app
                                writes none, and `hetfarm run` exits HF_EXIT_UNFINISHED */
    HF_STOP_APPROXIMATE = 2, /* unfinished results approximate the answer (PageRank short of
                                its tolerance): written, marked converged: false */
};
/* The exit status of `hetfarm run` and `compare` when a run's app stopped
 * with HF_STOP_NO_RESULT (results.json is written, the app's output is not). */
#define HF_EXIT_UNFINISHED 3

/* ------------------------------------------------------------------------ */
/* The app template. Every callback returns 0 or a negative HF_E* code; an
 * error stops the run cleanly with a message naming the app, device and
 * chunk. Callbacks marked optional may be NULL and get framework defaults. */

struct hf_app {
    const char *name;
    const char *summary; /* one line for `hetfarm run --help` */

    /* Reads the app's keys from [load] and allocates the context; allocates
     * no large data (a simulated run never calls setup). Required. */
    int (*create)(void **ctx, hf_config_t cfg);
    /* Allocates and fills the data, e.g. replicates read-only inputs on every
     * GPU. Called once before round 0 when bundles really run. Optional. */
    int (*setup)(void *ctx, const struct hf_devices *devs);
    /* Task generator: fills `load` for round load->round. Returns 1 when a load
     * was produced, 0 when there are no more loads. Required. */
    int (*next_load)(void *ctx, struct hf_load *load);
    /* Partitioner: cuts the load into chunks of about `grain` units. With
     * out == NULL returns the number of chunks it would make. Optional
     * (default hf_partition_even). */
    size_t (*partition)(void *ctx, const struct hf_load *load, size_t grain,
                        struct hf_chunk *out, size_t cap);
    /* Bundler: merges n contiguous chunks into one bundle. Optional (default
     * hf_bundle_merge). */
    int (*bundle)(void *ctx, const struct hf_chunk *c, size_t n, struct hf_bundle *out);
    /* Runs a bundle on the CPU team with `nthreads` threads: the team's size,
     * or 1 for a bundle too small to repay waking the team (drivers/cpu_team.c).
     * Called from the CPU device's host thread; bundles of one round never
     * overlap. Required. */
    int (*run_cpu)(void *ctx, const struct hf_bundle *b, int nthreads);
    /* Runs a bundle on one GPU: stage in, launch, stage out on gpu's streams.
     * Optional (NULL: the app is CPU-only and GPUs get no chunks). */
    int (*run_cuda)(void *ctx, const struct hf_bundle *b, struct hf_cuda *gpu);
    /* 1 when run_cuda calls cuBLAS (hf_cuda_cublas): each GPU then makes its
     * handle when it opens, so that opening the library (hetfarm opens it
     * on first use: drivers/cublas_cuda.c) is part of the start-up, never of
     * a timed bundle. 0 (the default): runs never open cuBLAS. */
    int cublas;
    /* Result collector, called after a bundle ran, from the device's host
     * thread (concurrently for disjoint bundles). Optional. */
    int (*collect)(void *ctx, const struct hf_bundle *b);
    /* Where bundle b's results are in host memory: fills up to `cap` regions
     * and returns how many (0: the bundle leaves nothing to send, < 0: an
     * HF_E* code). For runs across nodes (framework/mpi): a node runs the
     * bundle (a span of rank 0's load, as one round of its own), calls this
     * once, after every collect of the span, with out[i].bytes 0, and sends
     * the regions' bytes; rank 0 calls it for the same bundle, from the node
     * device's thread, with out[i].bytes already holding the sizes the node
     * sent, and the bytes land in rank 0's regions before its collect. The
     * regions must agree in number and size (checked): results at fixed
     * places (matmul's rows of C) are the same regions on every rank; results
     * whose size only the node knows (strsearch's match list) are sized on
     * rank 0 from out[i].bytes. Optional (NULL: the app's results are its
     * shared data, or it runs on one node only, and `mpirun` then stops with
     * a clear message). */
    int (*results)(void *ctx, const struct hf_bundle *b, struct hf_region *out, int cap);
    /* Checks the finished load against the app's plain reference; returns
     * HF_EVERIFY (with hf_fail details) on a mismatch. Optional. */
    int (*verify)(void *ctx, const struct hf_load *load);
    /* Frees everything. Optional. */
    void (*teardown)(void *ctx);
    /* The data every device keeps across rounds (see "Shared data" above):
     * fills up to `cap` entries of `out` and returns how many the app has.
     * Called once, after setup, when bundles really run; the arrays must
     * stay valid until teardown. Optional (NULL: nothing shared). */
    int (*shared)(void *ctx, struct hf_shared *out, int cap);
    /* What the run achieved in the app's own terms (a BFS's levels, edges and
     * GTEPS): fills up to `cap` figures and returns how many. `seconds` is the
     * sum of the rounds' makespans. Called once after the last round, when
     * bundles really ran; the figures go to results.json ("app_figures") and
     * under `hetfarm run`'s table. Optional. */
    int (*figures)(void *ctx, double seconds, struct hf_figure *out, int cap);
    /* The app's own figures of the round that just ended (a graph app's
     * cross-device traffic): fills up to `cap` figures and returns how many.
     * Called after the round's merge and verify, when bundles really ran,
     * from the engine's thread; hf_shared_last_changes(load, ...) is valid.
     * They go to results.json under the round ("app_figures"). The real and
     * sim engines call it; the StarPU engine does not (yet). Optional. */
    int (*round_figures)(void *ctx, const struct hf_load *load, struct hf_figure *out, int cap);
    /* For an app with an end of its own: next_load returns 0 once its work is
     * done (a search, a partition, PageRank at its tolerance). Having this
     * hook makes [run] rounds default to "until the app ends". When the run
     * used every round [run] rounds allows, the engine draws the next load
     * once more, as a probe that never runs: 0 means the app ended exactly
     * there (all is as if it had ended by itself); 1 means the cap stopped it
     * early, and the engine calls this hook with the probe load (its round,
     * units and work; hf_shared_last_changes valid, as in next_load). The app
     * writes what was left into `left` (a few words: "level 3, a frontier of
     * 1204 vertices"), takes back from its figures what the probe drew, and
     * returns HF_STOP_NO_RESULT (it writes no output) or HF_STOP_APPROXIMATE
     * (it writes its results, those of the last round run), or an HF_E* code. The run records it
     * (struct hf_run.stop; results.json "stopped": "rounds") and `hetfarm`
     * says so on stderr. Called from the engine's thread, before figures and
     * teardown, when bundles really ran or not. Optional (NULL: rounds are
     * repetitions and the cap is the end: matmul, strsearch). */
    int (*stopped)(void *ctx, const struct hf_load *next, char *left, size_t len);
    /* Describes the load in a few words ("n=4096 dtype=float32"): the key of
     * its profile and a label in results. Required. */
    void (*signature)(void *ctx, char *buf, size_t len);

    /* Units per chunk when the config names none. 0: the app's partitioner
     * chooses, called with grain 0 (the graph apps size chunks by the CPU
     * team and the load); without a partitioner, 0 means one unit a chunk. */
    size_t default_grain;
    /* The keys of [load] this app reads (section NULL), for validation and
     * help; NULL-key terminated. Optional: NULL leaves [load] unchecked until
     * the run reads it; an empty table means [load] takes no key. */
    const struct hf_config_key *keys;
};

/* Default partitioner: equal ranges of `grain` units (the last may be short);
 * work and bytes are spread in proportion to units. */
size_t hf_partition_even(void *ctx, const struct hf_load *load, size_t grain,
                         struct hf_chunk *out, size_t cap);
/* Default bundler: one bundle spanning the n contiguous chunks. */
int hf_bundle_merge(void *ctx, const struct hf_chunk *c, size_t n, struct hf_bundle *out);

/* The registry of bundled apps (apps/registry.c), NULL-terminated. */
extern const struct hf_app *const hf_apps[];
/* Looks an app up by name; NULL when unknown. */
const struct hf_app *hf_app_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
