/* noop.c - the built-in app whose chunks do nothing.
 *
 * DESIGN
 * ------
 * noop measures the framework's own cost per chunk (pool, scheduler, dispatch)
 * and doubles as the generic synthetic load of the sim engine: every chunk
 * carries [load] work_per_chunk units of work and bytes_per_chunk bytes, which the
 * sim engine turns into time, while the real engine runs kernels that return at
 * once (or busy-wait spin_ns per chunk, for tests that need bundles to overlap).
 *
 * When bundles really execute, setup() allocates one counter per chunk and every
 * kernel bumps the counters of its chunks with relaxed atomics (bundles of one
 * round are disjoint, but CPU and GPU host threads run at the same time).
 * next_load() zeroes them and verify() checks that every chunk of the round ran
 * exactly once: the strongest check of the "exactly once" contract that an app
 * can make. Per round, not cumulative, because the engine also draws loads it
 * runs only in part (a CPU's standalone-rate sample) and never verifies.
 *
 * The GPU kernel is also a host no-op, so that GPUs (real or modelled) take part
 * and the overhead of their host threads is measured too.
 */
#include "hetfarm.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <time.h>

struct noop {
    size_t chunks;
    double work_per_chunk, bytes_per_chunk;
    long spin_ns;
    _Atomic unsigned *count; /* runs per chunk, when executing */
};

static int noop_create(void **ctx, hf_config_t cfg)
{
    long chunks, spin;
    double work, bytes;
    int rc = hf_config_long(cfg, "load", "chunks", 200000, 0, 1L << 40, &chunks);
    if (rc)
        return rc;
    if (chunks == 0)
        return hf_fail(HF_ECONFIG, "%s: [load] chunks = 0: zero-sized load, need at least 1",
                       hf_config_where(cfg, "load", "chunks"));
    if ((rc = hf_config_double(cfg, "load", "work_per_chunk", 1.0, 0.0, 1e30, &work)) ||
        (rc = hf_config_double(cfg, "load", "bytes_per_chunk", 0.0, 0.0, 1e30, &bytes)) ||
        (rc = hf_config_long(cfg, "load", "spin_ns", 0, 0, 1000000000L, &spin)))
        return rc;
    struct noop *o = calloc(1, sizeof *o);
    if (!o)
        return hf_fail(HF_ENOMEM, "noop: out of memory for the context");
    o->chunks = (size_t)chunks;
    o->work_per_chunk = work;
    o->bytes_per_chunk = bytes;
    o->spin_ns = spin;
    *ctx = o;
    return 0;
}

static int noop_setup(void *ctx, const struct hf_devices *devs)
{
    struct noop *o = ctx;
    (void)devs;
    o->count = calloc(o->chunks, sizeof *o->count);
    if (!o->count)
        return hf_fail(HF_ENOMEM, "noop: cannot allocate %zu chunk counters", o->chunks);
    return 0;
}

static int noop_next_load(void *ctx, struct hf_load *load)
{
    struct noop *o = ctx;
    load->units = o->chunks;
    load->work = o->work_per_chunk * (double)o->chunks;
    load->bytes = o->bytes_per_chunk * (double)o->chunks;
    load->data = o;
    /* No bundle runs between rounds, so plain stores are safe here. */
    for (size_t i = 0; o->count && i < o->chunks; i++)
        atomic_store_explicit(&o->count[i], 0u, memory_order_relaxed);
    return 1;
}

/* Busy-waits `ns` nanoseconds on the monotonic clock (a sleep would yield the core). */
static void noop_spin(long ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

/* The kernel of every device kind: count each unit (= chunk at grain 1) run. */
static int noop_run(void *ctx, const struct hf_bundle *b)
{
    struct noop *o = ctx;
    if (o->count)
        for (size_t i = b->begin; i < b->end && i < o->chunks; i++)
            atomic_fetch_add_explicit(&o->count[i], 1u, memory_order_relaxed);
    if (o->spin_ns > 0)
        noop_spin(o->spin_ns * (long)(b->end - b->begin));
    return 0;
}

static int noop_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    (void)nthreads;
    return noop_run(ctx, b);
}

static int noop_run_gpu(void *ctx, const struct hf_bundle *b, struct hf_cuda *gpu)
{
    (void)gpu;
    return noop_run(ctx, b);
}

/* Every unit of the round must have run exactly once. */
static int noop_verify(void *ctx, const struct hf_load *load)
{
    struct noop *o = ctx;
    if (!o->count)
        return 0;
    for (size_t i = 0; i < o->chunks; i++) {
        unsigned c = atomic_load_explicit(&o->count[i], memory_order_relaxed);
        if (c != 1)
            return hf_fail(HF_EVERIFY, "noop: unit %zu ran %u times in round %d: expected "
                           "exactly once", i, c, load->round);
    }
    return 0;
}

static void noop_teardown(void *ctx)
{
    struct noop *o = ctx;
    if (o)
        free((void *)o->count);
    free(o);
}

static void noop_signature(void *ctx, char *buf, size_t len)
{
    const struct noop *o = ctx;
    snprintf(buf, len, "chunks=%zu work=%g bytes=%g", o->chunks, o->work_per_chunk,
             o->bytes_per_chunk);
}

/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key noop_keys[] = {
    {NULL, "chunks", HF_KEY_INT, 1, 1099511627776.0, 0, NULL, "200000", "chunks per load"},
    {NULL, "work_per_chunk", HF_KEY_NUM, 0, 1e30, 0, NULL, "1", "work units of a chunk"},
    {NULL, "bytes_per_chunk", HF_KEY_NUM, 0, 1e30, 0, NULL, "0", "bytes a GPU moves per chunk"},
    {NULL, "spin_ns", HF_KEY_INT, 0, 1e9, 0, NULL, "0", "busy-wait per chunk, nanoseconds"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_noop = {
    .keys = noop_keys,
    .name = "noop",
    .summary = "empty chunks: measures the framework's own overhead; a synthetic sim load",
    .create = noop_create,
    .setup = noop_setup,
    .next_load = noop_next_load,
    .partition = hf_partition_even,
    .bundle = hf_bundle_merge,
    .run_cpu = noop_run_cpu,
    .run_cuda = noop_run_gpu,
    .verify = noop_verify,
    .teardown = noop_teardown,
    .signature = noop_signature,
    .default_grain = 1,
};
