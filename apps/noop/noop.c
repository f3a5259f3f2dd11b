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
 *
 * Units need not cost the same (issue 18): [load] shape gives each unit a cost
 * factor, normalised to a mean of 1 so a load's total work does not change -
 * uniform (all 1), hump (a smooth bump in the middle, ~200x its edges, like an
 * escape-time fractal's rows), tail (heavy-tailed random, Pareto with alpha
 * 1.5, from shape_seed) and hot (1% of the units, drawn from shape_seed, cost
 * 50x). The partitioner sets each chunk's work to the sum of its units' costs,
 * which the sim engine turns into time, and the real kernels spin spin_ns per
 * unit of cost, so an irregular load runs on real devices without a new app.
 * With cost_known = yes (the default) the chunks' work is exact
 * (hf_load.work_exact: the engine never learns it). With cost_known = no the
 * chunks' work stays even over units while the real kernels still spin by
 * cost and a bundle's work (what the sim engine times) is its units' cost:
 * an app that cannot tell what its units cost (an escape-time fractal's
 * rows), for the framework's estimates to cope with.
 * [load] cpu_only marks loads as having no GPU kernel (hf_load.cpu_only), in
 * the odd rounds or all, for the tests of GPUs sitting rounds out.
 */
#include "hetfarm.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>

struct noop {
    size_t chunks;
    double work_per_chunk, bytes_per_chunk;
    long spin_ns;
    const char *shape;
    int cost_known;          /* chunks' work follows the cost (else: even over units) */
    const char *cpu_only;    /* none | odd | all: loads marked cpu_only (GPUs sit them out) */
    double *cost;            /* per unit cost factor, mean 1; NULL = uniform */
    _Atomic unsigned *count; /* runs per chunk, when executing */
};

/* A uniform draw in (0, 1) from unit i and the seed (splitmix64 of both). */
static double unit_random(uint64_t seed, size_t i)
{
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + (uint64_t)i + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* Fills o->cost for [load] shape (see DESIGN); 0 or an HF_E* code. */
static int make_shape(struct noop *o, hf_config_t cfg, long seed)
{
    if (strcmp(o->shape, "uniform") == 0)
        return 0;
    if (strcmp(o->shape, "hump") && strcmp(o->shape, "tail") && strcmp(o->shape, "hot"))
        return hf_fail(HF_ECONFIG, "%s: [load] shape = %s: expected uniform, hump, tail or hot",
                       hf_config_where(cfg, "load", "shape"), o->shape);
    if (!(o->cost = malloc(o->chunks * sizeof *o->cost)))
        return hf_fail(HF_ENOMEM, "noop: out of memory for %zu unit costs", o->chunks);
    double sum = 0.0;
    for (size_t i = 0; i < o->chunks; i++) {
        double x = ((double)i + 0.5) / (double)o->chunks, u = unit_random((uint64_t)seed, i);
        double c = o->shape[1] == 'u' ? 0.005 + exp(-(x - 0.5) * (x - 0.5) / (2 * 0.1 * 0.1))
                   : o->shape[0] == 't' ? pow(u, -1.0 / 1.5)
                                        : (u < 0.01 ? 50.0 : 1.0);
        o->cost[i] = c;
        sum += c;
    }
    for (size_t i = 0; i < o->chunks; i++)
        o->cost[i] *= (double)o->chunks / sum;
    return 0;
}

/* The cost of units [b, e) in units of work_per_chunk. */
static double units_cost(const struct noop *o, size_t b, size_t e)
{
    if (!o->cost)
        return (double)(e - b);
    double c = 0.0;
    for (size_t i = b; i < e && i < o->chunks; i++)
        c += o->cost[i];
    return c;
}

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
    long seed;
    const char *shape;
    if ((rc = hf_config_double(cfg, "load", "work_per_chunk", 1.0, 0.0, 1e30, &work)) ||
        (rc = hf_config_double(cfg, "load", "bytes_per_chunk", 0.0, 0.0, 1e30, &bytes)) ||
        (rc = hf_config_long(cfg, "load", "spin_ns", 0, 0, 1000000000L, &spin)) ||
        (rc = hf_config_str(cfg, "load", "shape", "uniform", &shape)) ||
        (rc = hf_config_long(cfg, "load", "shape_seed", 1, 0, 1L << 62, &seed)))
        return rc;
    const char *cpu_only;
    if ((rc = hf_config_str(cfg, "load", "cpu_only", "none", &cpu_only)))
        return rc;
    int known;
    if ((rc = hf_config_bool(cfg, "load", "cost_known", 1, &known)))
        return rc;
    struct noop *o = calloc(1, sizeof *o);
    if (!o)
        return hf_fail(HF_ENOMEM, "noop: out of memory for the context");
    o->chunks = (size_t)chunks;
    o->work_per_chunk = work;
    o->bytes_per_chunk = bytes;
    o->spin_ns = spin;
    o->shape = shape;
    o->cost_known = known;
    o->cpu_only = cpu_only;
    if ((rc = make_shape(o, cfg, seed))) {
        free(o);
        return rc;
    }
    *ctx = o;
    return 0;
}

/* Even ranges of units, each chunk's work the cost of its units (when known). */
static size_t noop_partition(void *ctx, const struct hf_load *load, size_t grain,
                             struct hf_chunk *out, size_t cap)
{
    const struct noop *o = ctx;
    size_t n = hf_partition_even(ctx, load, grain, out, cap);
    for (size_t i = 0; out && o->cost && o->cost_known && i < n && i < cap; i++)
        out[i].work = o->work_per_chunk * units_cost(o, out[i].begin, out[i].end);
    return n;
}

/* A bundle carries what its units really cost, declared or not: the sim
 * engine times a bundle by its work, as a real device would by its spinning. */
static int noop_bundle(void *ctx, const struct hf_chunk *c, size_t n, struct hf_bundle *b)
{
    const struct noop *o = ctx;
    int rc = hf_bundle_merge(ctx, c, n, b);
    if (rc == 0 && o->cost)
        b->work = o->work_per_chunk * units_cost(o, b->begin, b->end);
    return rc;
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
    load->cpu_only =
        !strcmp(o->cpu_only, "all") || (!strcmp(o->cpu_only, "odd") && load->round % 2);
    load->work_exact = o->cost_known; /* the chunks' work is their units' cost */
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
        noop_spin((long)((double)o->spin_ns * units_cost(o, b->begin, b->end)));
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

/* A bundle's results are its units' counters: a node's counts land in rank
 * 0's, whose verify then checks the whole load (framework/core/nodes.c). */
static int noop_results(void *ctx, const struct hf_bundle *b, struct hf_region *out, int cap)
{
    struct noop *o = ctx;
    size_t end = b->end < o->chunks ? b->end : o->chunks;
    if (!o->count || b->begin >= end || cap < 1)
        return 0;
    out[0] = (struct hf_region){(void *)(o->count + b->begin), (end - b->begin) * sizeof *o->count};
    return 1;
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
    if (o) {
        free((void *)o->count);
        free(o->cost);
    }
    free(o);
}

static void noop_signature(void *ctx, char *buf, size_t len)
{
    const struct noop *o = ctx;
    snprintf(buf, len, "chunks=%zu work=%g bytes=%g%s%s%s", o->chunks, o->work_per_chunk,
             o->bytes_per_chunk, o->cost ? " shape=" : "", o->cost ? o->shape : "",
             o->cost && !o->cost_known ? " cost=unknown" : "");
}

/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key noop_keys[] = {
    {NULL, "chunks", HF_KEY_INT, 1, 1099511627776.0, 0, NULL, "200000", "chunks per load"},
    {NULL, "work_per_chunk", HF_KEY_NUM, 0, 1e30, 0, NULL, "1", "work units of a chunk"},
    {NULL, "bytes_per_chunk", HF_KEY_NUM, 0, 1e30, 0, NULL, "0", "bytes a GPU moves per chunk"},
    {NULL, "spin_ns", HF_KEY_INT, 0, 1e9, 0, NULL, "0", "busy-wait per chunk, nanoseconds"},
    {NULL, "shape", HF_KEY_STR, 0, 0, 0, "uniform|hump|tail|hot", "uniform",
     "what units cost: all alike, a smooth hump, heavy-tailed random, 1% hot"},
    {NULL, "shape_seed", HF_KEY_INT, 0, 4611686018427387904.0, 0, NULL, "1",
     "the seed of tail and hot"},
    {NULL, "cost_known", HF_KEY_BOOL, 0, 0, 0, NULL, "yes",
     "chunks' work follows the shape, exactly: never learned (no: even over units, the "
     "kernels still spin by cost)"},
    {NULL, "cpu_only", HF_KEY_STR, 0, 0, 0, "none|odd|all", "none",
     "loads marked as having no GPU kernel (GPUs sit them out): none, odd rounds', all"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_noop = {
    .keys = noop_keys,
    .name = "noop",
    .summary = "empty chunks: measures the framework's own overhead; a synthetic sim load",
    .create = noop_create,
    .setup = noop_setup,
    .next_load = noop_next_load,
    .partition = noop_partition,
    .bundle = noop_bundle,
    .run_cpu = noop_run_cpu,
    .run_cuda = noop_run_gpu,
    .results = noop_results,
    .verify = noop_verify,
    .teardown = noop_teardown,
    .signature = noop_signature,
    .default_grain = 1,
};
