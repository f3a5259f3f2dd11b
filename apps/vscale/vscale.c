/* vscale.c - the "vector scale" app y[i] = a * x[i], and the template for new apps.
 * DESIGN
 * ------
 * A load is the whole vector and its units are elements; the even partitioner cuts
 * it into chunks and a bundle is a range [begin, end) of elements for one device. */
#include "hetfarm.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct vscale {
    size_t n;     /* [load] n: elements */
    float a;      /* [load] a: the scale */
    float *x, *y; /* the data, allocated by setup (one block of 2n floats, hf_host_alloc) */
};

float hf__vscale_ref(float a, float x); /* vscale_ref.c: the plain reference */

/* Reads [load] only; no big allocation, since a simulated run never calls setup. */
static int vscale_create(void **ctx, hf_config_t cfg)
{
    long n;
    double a;
    int rc = hf_config_long(cfg, "load", "n", 1 << 20, 1, 1L << 40, &n);
    if (rc || (rc = hf_config_double(cfg, "load", "a", 2.0, -1e30, 1e30, &a)))
        return rc;
    struct vscale *v = *ctx = calloc(1, sizeof *v);
    if (!v)
        return hf_fail(HF_ENOMEM, "vscale: out of memory");
    v->n = (size_t)n, v->a = (float)a;
    return 0;
}

/* Allocates and fills the input once, before round 0, when bundles really run.
 * hf_host_alloc pins the block when the run has a GPU, so that run_cuda's
 * copies overlap its kernels; hf_host_free in teardown unpins it again. */
static int vscale_setup(void *ctx, const struct hf_devices *devs)
{
    struct vscale *v = ctx;
    if (!(v->x = hf_host_alloc(devs, 2 * v->n * sizeof(float))))
        return hf_fail(HF_ENOMEM, "vscale: cannot allocate n=%zu (%d devices)", v->n, devs->count);
    v->y = v->x + v->n;
    for (size_t i = 0; i < v->n; i++)
        v->x[i] = (float)(i % 1000) * 0.5f;
    return 0;
}

/* One load per round: units to split, work (flops), bytes a GPU moves (x in, y out). */
static int vscale_next_load(void *ctx, struct hf_load *load)
{
    struct vscale *v = ctx;
    load->units = v->n, load->work = (double)v->n, load->bytes = 8.0 * (double)v->n;
    load->work_exact = 1; /* every element costs the same: the engine never re-learns it */
    hf_host_poison(v->y, v->y ? v->n * sizeof *v->y : 0); /* NaN: an element nobody */
    return 1; /* computes fails verify; always a load: the engine stops after [run] rounds */
}

/* The CPU kernel: elements [begin, end) on the CPU team's threads. */
static int vscale_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    struct vscale *v = ctx;
    #pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t i = b->begin; i < b->end; i++)
        v->y[i] = v->a * v->x[i];
    return 0;
}

/* Where a bundle's results are: y[begin, end) (sent to rank 0 in a run across nodes). */
static int vscale_results(void *ctx, const struct hf_bundle *b, struct hf_region *out, int cap)
{
    struct vscale *v = ctx;
    if (cap < 1 || b->end <= b->begin)
        return 0;
    out[0] = (struct hf_region){v->y + b->begin, (b->end - b->begin) * sizeof *v->y};
    return 1;
}

/* Checks the finished load against the reference (a NaN fails too). */
static int vscale_verify(void *ctx, const struct hf_load *load)
{
    struct vscale *v = ctx;
    for (size_t i = 0; v->y && i < v->n; i++)
        if (!(v->y[i] == hf__vscale_ref(v->a, v->x[i])))
            return hf_fail(HF_EVERIFY, "vscale: y[%zu] = %g, reference %g (round %d)", i,
                           v->y[i], hf__vscale_ref(v->a, v->x[i]), load->round);
    return 0;
}

#ifdef HF_HAVE_CUDA
/* The GPU kernel (vscale_cuda.cu) enqueues copy-in, kernel and copy-out of one piece. */
int hf__vscale_cuda_run(struct hf_cuda *gpu, float a, const float *x, float *y, size_t n);
static int vscale_run_cuda(void *ctx, const struct hf_bundle *b, struct hf_cuda *gpu)
{
    struct vscale *v = ctx;
    return hf__vscale_cuda_run(gpu, v->a, v->x + b->begin, v->y + b->begin, b->end - b->begin);
}
#endif

static void vscale_teardown(void *ctx)
{
    hf_host_free(((struct vscale *)ctx)->x);
    free(ctx);
}

static void vscale_signature(void *ctx, char *buf, size_t len)
{
    snprintf(buf, len, "n=%zu", ((struct vscale *)ctx)->n);
}

/* The app table; the Makefile registers hf_app_NAME of every apps/NAME/NAME.c. */
/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key vscale_keys[] = {
    {NULL, "n", HF_KEY_INT, 1, 1099511627776.0, 0, NULL, "1048576", "vector length"},
    {NULL, "a", HF_KEY_NUM, -1e30, 1e30, 0, NULL, "2", "the scale: y = a * x"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_vscale = {
    .keys = vscale_keys,
    .name = "vscale", .summary = "y = a * x (the new-app template)",
    .create = vscale_create, .setup = vscale_setup, .next_load = vscale_next_load,
    .run_cpu = vscale_run_cpu,
#ifdef HF_HAVE_CUDA
    .run_cuda = vscale_run_cuda,
#endif
    .results = vscale_results, .verify = vscale_verify, .teardown = vscale_teardown,
    .signature = vscale_signature, .default_grain = 1 << 16,
};
