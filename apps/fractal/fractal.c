/* fractal.c - the escape-time fractal app: the Mandelbrot set's iteration counts.
 *
 * DESIGN
 * ------
 * A load is one image and its units are rows; a bundle is a range of rows, and
 * its output is one uint32 iteration count per pixel (the only bytes a GPU
 * copies: nothing goes in but the grid's few numbers). A pixel costs as many
 * steps of z = z^2 + c as its count, from 1 far outside the set to max_iter
 * inside it, so rows differ in cost by as much as the view makes them: the
 * default view (centre -0.75 + 0i, 4 high, so the rows run from +2i to -2i)
 * puts the set's interior across the middle rows, whose pixels run to
 * max_iter over two fifths of the row's width, while every pixel of the top
 * and bottom rows escapes in one or two steps. At 2048 x 2048 and 1024
 * iterations the top row sums 2,112 iterations and the middle one 900,374
 * (426x); in time, best of 5 on the 2-core dev VM, 5 us against 4.1 ms (~800x:
 * a step inside the set waits on the one before, while the escaping pixels'
 * single steps overlap). tests/test_fractal.c checks the spread at a small size.
 *
 * The app cannot tell a row's cost without computing it, so it declares every
 * row the same work (width x max_iter, the most a row can cost) and leaves
 * work_exact at 0: the engine learns each chunk's real cost from the times of
 * the bundles that ran (framework/core/chunk_cost.c), and schedulers then cut
 * the image by cost, not by rows. The CPU kernel spreads a bundle's rows over
 * the team with a dynamic schedule, since the rows of one bundle differ too.
 * The reference and both kernels compute in double with the same operations
 * in the same order (fractal.h), so verify compares every pixel exactly.
 */
#include "fractal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct fractal {
    struct hf_fractal_grid grid; /* from [load] width, height, max_iter, center_x/y, scale */
    double center_x, center_y, scale;
    uint32_t *image; /* height x width counts, row-major (hf_host_alloc) */
};

/* Reads [load] only; no big allocation, since a simulated run never calls setup. */
static int fractal_create(void **ctx, hf_config_t cfg)
{
    long w, h, iters;
    double cx, cy, scale;
    int rc;
    if ((rc = hf_config_long(cfg, "load", "width", 2048, 1, 1L << 20, &w)) ||
        (rc = hf_config_long(cfg, "load", "height", 2048, 1, 1L << 20, &h)) ||
        (rc = hf_config_long(cfg, "load", "max_iter", 1024, 1, 1L << 30, &iters)) ||
        (rc = hf_config_double(cfg, "load", "center_x", -0.75, -1e6, 1e6, &cx)) ||
        (rc = hf_config_double(cfg, "load", "center_y", 0.0, -1e6, 1e6, &cy)) ||
        (rc = hf_config_double(cfg, "load", "scale", 4.0, 0.0, 1e6, &scale)))
        return rc;
    if (scale <= 0.0)
        return hf_fail(HF_ECONFIG, "%s: [load] scale = %g: the view's height must be > 0",
                       hf_config_where(cfg, "load", "scale"), scale);
    struct fractal *f = *ctx = calloc(1, sizeof *f);
    if (!f)
        return hf_fail(HF_ENOMEM, "fractal: out of memory");
    f->center_x = cx, f->center_y = cy, f->scale = scale;
    /* Square pixels, the view centred on (cx, cy): pixel centres sit half a
     * step inside the view's edges. */
    double step = scale / (double)h;
    f->grid = (struct hf_fractal_grid){.width = (size_t)w,
                                       .height = (size_t)h,
                                       .max_iter = (uint32_t)iters,
                                       .step = step,
                                       .x0 = cx - step * (double)(w - 1) / 2.0,
                                       .y0 = cy + step * (double)(h - 1) / 2.0};
    return 0;
}

/* Allocates the image once, before round 0, when bundles really run (pinned
 * by hf_host_alloc when the run has a GPU, so the copy-out is asynchronous). */
static int fractal_setup(void *ctx, const struct hf_devices *devs)
{
    struct fractal *f = ctx;
    size_t bytes = f->grid.width * f->grid.height * sizeof *f->image;
    if (!(f->image = hf_host_alloc(devs, bytes)))
        return hf_fail(HF_ENOMEM, "fractal: cannot allocate a %zu x %zu image (%zu bytes)",
                       f->grid.width, f->grid.height, bytes);
    return 0;
}

/* One load per round: the whole image. Every row declares the same work, the
 * most it can cost; the engine learns what rows really cost (see DESIGN). */
static int fractal_next_load(void *ctx, struct hf_load *load)
{
    struct fractal *f = ctx;
    double pixels = (double)f->grid.width * (double)f->grid.height;
    load->units = f->grid.height;
    load->work = pixels * (double)f->grid.max_iter;
    load->bytes = pixels * sizeof *f->image;
    load->work_exact = 0;
    /* All-one bytes read as 2^32 - 1, above any max_iter: a row nobody
     * computes fails verify. */
    hf_host_poison(f->image, f->image ? f->grid.width * f->grid.height * sizeof *f->image : 0);
    return 1; /* always a load: the engine stops after [run] rounds */
}

/* The escape count of c, as fractal_ref.c computes it but keeping the squares
 * for the next step's test: the same operations in the same order. */
static uint32_t escape_count(double cx, double cy, uint32_t max_iter)
{
    double zr = 0.0, zi = 0.0, zr2 = 0.0, zi2 = 0.0;
    uint32_t n = 0;
    while (n < max_iter && zr2 + zi2 <= 4.0) {
        zi = 2.0 * zr * zi + cy;
        zr = zr2 - zi2 + cx;
        zr2 = zr * zr, zi2 = zi * zi;
        n++;
    }
    return n;
}

/* The CPU kernel: rows [begin, end) on the team's threads, one row at a time
 * to whichever thread is free (rows differ in cost). */
static int fractal_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    struct fractal *f = ctx;
    const struct hf_fractal_grid *g = &f->grid;
#pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1)
    for (size_t row = b->begin; row < b->end; row++) {
        double cy = g->y0 - (double)row * g->step;
        uint32_t *out = f->image + row * g->width;
        for (size_t col = 0; col < g->width; col++)
            out[col] = escape_count(g->x0 + (double)col * g->step, cy, g->max_iter);
    }
    return 0;
}

/* Where a bundle's results are: its rows of the image. */
static int fractal_results(void *ctx, const struct hf_bundle *b, struct hf_region *out, int cap)
{
    struct fractal *f = ctx;
    if (cap < 1 || b->end <= b->begin)
        return 0;
    size_t w = f->grid.width;
    out[0] =
        (struct hf_region){f->image + b->begin * w, (b->end - b->begin) * w * sizeof *f->image};
    return 1;
}

/* Checks every pixel against the reference. The reference costs as much as
 * the image, so its rows are spread over the machine's threads; the first
 * differing pixel in row order is reported. */
static int fractal_verify(void *ctx, const struct hf_load *load)
{
    struct fractal *f = ctx;
    const struct hf_fractal_grid *g = &f->grid;
    if (!f->image)
        return 0;
    int nt = omp_get_max_threads();
    uint32_t *ref = malloc((size_t)nt * g->width * sizeof *ref);
    if (!ref)
        return hf_fail(HF_ENOMEM, "fractal: out of memory for the reference rows");
    size_t bad = g->width * g->height; /* the first differing pixel, or past the end */
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
    for (size_t row = 0; row < g->height; row++) {
        uint32_t *want = ref + (size_t)omp_get_thread_num() * g->width;
        const uint32_t *got = f->image + row * g->width;
        hf__fractal_ref_row(g, row, want);
        for (size_t col = 0; col < g->width; col++)
            if (got[col] != want[col]) {
#pragma omp critical(fractal_verify)
                if (row * g->width + col < bad)
                    bad = row * g->width + col;
                break;
            }
    }
    int rc = 0;
    if (bad < g->width * g->height) {
        size_t row = bad / g->width, col = bad % g->width;
        uint32_t want;
        hf__fractal_ref_row(g, row, ref);
        want = ref[col];
        rc = hf_fail(HF_EVERIFY,
                     "fractal: pixel (row %zu, col %zu) = %u iterations, reference "
                     "%u (round %d)",
                     row, col, (unsigned)f->image[bad], (unsigned)want, load->round);
    }
    free(ref);
    return rc;
}

#ifdef HF_HAVE_CUDA
/* The GPU kernel (fractal_cuda.cu) enqueues the rows and their copy-out. */
static int fractal_run_cuda(void *ctx, const struct hf_bundle *b, struct hf_cuda *gpu)
{
    struct fractal *f = ctx;
    return hf__fractal_cuda_run(gpu, &f->grid, b->begin, b->end - b->begin,
                                f->image + b->begin * f->grid.width);
}
#endif

static void fractal_teardown(void *ctx)
{
    hf_host_free(((struct fractal *)ctx)->image);
    free(ctx);
}

/* The load's key for profiles: size, iterations and view all change its cost. */
static void fractal_signature(void *ctx, char *buf, size_t len)
{
    const struct fractal *f = ctx;
    snprintf(buf, len, "%zux%zu iter=%u view=%g,%g,%g", f->grid.width, f->grid.height,
             (unsigned)f->grid.max_iter, f->center_x, f->center_y, f->scale);
}

/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key fractal_keys[] = {
    {NULL, "width", HF_KEY_INT, 1, 1048576, 0, NULL, "2048", "image width, pixels"},
    {NULL, "height", HF_KEY_INT, 1, 1048576, 0, NULL, "2048", "image height, pixels (the units)"},
    {NULL, "max_iter", HF_KEY_INT, 1, 1073741824, 0, NULL, "1024", "iterations at most per pixel"},
    {NULL, "center_x", HF_KEY_NUM, -1e6, 1e6, 0, NULL, "-0.75", "the view's centre, real part"},
    {NULL, "center_y", HF_KEY_NUM, -1e6, 1e6, 0, NULL, "0", "the view's centre, imaginary part"},
    {NULL, "scale", HF_KEY_NUM, 0, 1e6, HF_KEY_MIN_OPEN, NULL, "4",
     "the view's height in the complex plane (square pixels)"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

/* The app table; the Makefile registers hf_app_NAME of every apps/NAME/NAME.c. */
const struct hf_app hf_app_fractal = {
    .keys = fractal_keys,
    .name = "fractal",
    .summary = "Mandelbrot escape counts; rows (the units) differ ~1000x in cost",
    .create = fractal_create,
    .setup = fractal_setup,
    .next_load = fractal_next_load,
    .run_cpu = fractal_run_cpu,
#ifdef HF_HAVE_CUDA
    .run_cuda = fractal_run_cuda,
#endif
    .results = fractal_results,
    .verify = fractal_verify,
    .teardown = fractal_teardown,
    .signature = fractal_signature,
    .default_grain = 16,
};
