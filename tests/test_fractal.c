/* test_fractal.c - the fractal app: known escape counts, kernels equal to the
 * reference, runs through the real engine (the CPU; a GPU where there is one),
 * and rows that differ in cost.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/engine.h"
#include "device.h"
#include "hetfarm.h"
#include "sched.h"
#include "../apps/fractal/fractal.h"

static const struct hf_devices no_devices = {.count = 0, .dev = NULL, .executes = 1};

/* What one load of the app left: its image (height x width counts) and size. */
struct image {
    uint32_t *px;
    size_t width, height;
};

/* Runs `rounds` loads of the app from `ini` on the CPU in bundles of about
 * `grain` rows, verifying each; returns the first error (or 0). Skips chunk
 * `skip` (pass (size_t)-1 to run them all). When `img` is not NULL, copies the
 * last load's image there (read back through the app's results hook). */
static int run_app(const char *ini, int rounds, size_t grain, size_t skip, struct image *img)
{
    const struct hf_app *app = hf_app_find("fractal");
    assert_non_null(app);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "fractal.ini", ini), 0);
    void *ctx = NULL;
    int rc = app->create(&ctx, cfg);
    if (rc == 0 && app->setup)
        rc = app->setup(ctx, &no_devices);
    for (int r = 0; r < rounds && rc == 0; r++) {
        struct hf_load load = {.round = r};
        assert_int_equal(app->next_load(ctx, &load), 1);
        assert_int_equal(load.work_exact, 0); /* rows' costs are the engine's to learn */
        size_t n = hf_partition_even(ctx, &load, grain, NULL, 0);
        struct hf_chunk *c = calloc(n, sizeof *c);
        assert_int_equal(hf_partition_even(ctx, &load, grain, c, n), n);
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (i == skip)
                continue;
            struct hf_bundle b = {0};
            assert_int_equal(hf_bundle_merge(ctx, c + i, 1, &b), 0);
            b.load = &load;
            rc = app->run_cpu(ctx, &b, 2);
        }
        if (rc == 0 && app->verify)
            rc = app->verify(ctx, &load);
        if (rc == 0 && img && r == rounds - 1) {
            /* One bundle of the whole image: its results region is every row. */
            struct hf_bundle all = {.load = &load, .begin = 0, .end = load.units};
            struct hf_region reg;
            assert_int_equal(app->results(ctx, &all, &reg, 1), 1);
            img->height = load.units;
            img->width = reg.bytes / sizeof(uint32_t) / load.units;
            assert_non_null(img->px = malloc(reg.bytes));
            memcpy(img->px, reg.ptr, reg.bytes);
        }
        free(c);
    }
    if (ctx && app->teardown)
        app->teardown(ctx);
    hf_config_destroy(cfg);
    return rc;
}

/* Points whose counts follow by hand: 0 and -1 (a 2-cycle) and -2 (z stays at
 * 2, |z|^2 = 4 is not above 4) never escape; |c| > 2 escapes after the first
 * step; 2i after the second (z = 2i, then -4 + 2i); 1 after the third (1, 2, 5). */
static void test_reference_known_points(void **state)
{
    (void)state;
    assert_int_equal(hf__fractal_ref_point(0.0, 0.0, 100), 100);
    assert_int_equal(hf__fractal_ref_point(-1.0, 0.0, 1000), 1000);
    assert_int_equal(hf__fractal_ref_point(-2.0, 0.0, 77), 77);
    assert_int_equal(hf__fractal_ref_point(-0.1, 0.1, 5000), 5000); /* inside the cardioid */
    assert_int_equal(hf__fractal_ref_point(3.0, 3.0, 100), 1);
    assert_int_equal(hf__fractal_ref_point(-2.5, 0.0, 100), 1);
    assert_int_equal(hf__fractal_ref_point(0.0, 2.0, 100), 2);
    assert_int_equal(hf__fractal_ref_point(1.0, 0.0, 100), 3);
    assert_int_equal(hf__fractal_ref_point(0.0, 0.0, 1), 1);
}

/* A 5 x 5 image of the plane from -2 - 2i to 2 + 2i, one pixel per unit
 * step (scale 5), through the whole app: every count known by hand. Row 0 is
 * the top (+2i); the middle row is the real axis. */
static void test_tiny_image_by_hand(void **state)
{
    (void)state;
    static const uint32_t want[5][5] = {
        {1, 1, 2, 1, 1},    /* |c|^2 = 8, 5, 4, 5, 8 */
        {1, 3, 50, 2, 1},   /* -2+i, -1+i, i (a 2-cycle: i-1, -i), 1+i, 2+i */
        {50, 50, 50, 3, 2}, /* -2, -1, 0 stay; 1: 1, 2, 5; 2: 2, 6 */
        {1, 3, 50, 2, 1},   /* the mirror image of row 1 */
        {1, 1, 2, 1, 1},
    };
    struct image img;
    assert_int_equal(run_app("[load]\nwidth = 5\nheight = 5\nmax_iter = 50\ncenter_x = 0\n"
                             "scale = 5\n",
                             1, 2, (size_t)-1, &img),
                     0);
    assert_int_equal(img.width, 5);
    assert_int_equal(img.height, 5);
    for (size_t r = 0; r < 5; r++)
        for (size_t c = 0; c < 5; c++) {
            if (img.px[r * 5 + c] != want[r][c])
                fprintf(stderr, "pixel (%zu, %zu): %u, by hand %u\n", r, c, img.px[r * 5 + c],
                        want[r][c]);
            assert_int_equal(img.px[r * 5 + c], want[r][c]);
        }
    free(img.px);
}

/* The CPU kernel equals the reference on every pixel, on a view across the
 * set's boundary (where one differently rounded step would change counts),
 * odd sizes and bundles of several rows; and verify agrees. */
static void test_cpu_equals_reference(void **state)
{
    (void)state;
    struct image img;
    assert_int_equal(run_app("[load]\nwidth = 97\nheight = 61\nmax_iter = 3000\n"
                             "center_x = -0.7453\ncenter_y = 0.1127\nscale = 0.01\n",
                             2, 7, (size_t)-1, &img),
                     0);
    /* The same grid as fractal.c's create, from the same formulas. */
    double step = 0.01 / 61.0;
    struct hf_fractal_grid g = {.width = 97,
                                .height = 61,
                                .max_iter = 3000,
                                .step = step,
                                .x0 = -0.7453 - step * 96.0 / 2.0,
                                .y0 = 0.1127 + step * 60.0 / 2.0};
    uint32_t want[97];
    size_t inside = 0, escaped = 0;
    for (size_t r = 0; r < g.height; r++) {
        hf__fractal_ref_row(&g, r, want);
        for (size_t c = 0; c < g.width; c++) {
            assert_int_equal(img.px[r * g.width + c], want[c]);
            inside += want[c] == 3000;
            escaped += want[c] < 3000;
        }
    }
    assert_true(inside > 0 && escaped > 0); /* the view straddles the boundary */
    free(img.px);
}

/* A chunk nobody ran leaves poison behind and verify names its first pixel. */
static void test_verify_catches_missing_rows(void **state)
{
    (void)state;
    hf_clear_error();
    assert_int_equal(run_app("[load]\nwidth = 40\nheight = 30\nmax_iter = 64\n", 1, 4, 2, NULL),
                     HF_EVERIFY);
    assert_non_null(strstr(hf_last_error(), "row 8, col 0"));
}

/* Rows differ in cost: at 64 x 64 and the default view and iterations, the
 * middle row's iterations sum to over 100x the top row's (about 360x). */
static void test_row_cost_spread(void **state)
{
    (void)state;
    struct image img;
    assert_int_equal(run_app("[load]\nwidth = 64\nheight = 64\n", 1, 8, (size_t)-1, &img), 0);
    double first = 0.0, middle = 0.0;
    for (size_t c = 0; c < img.width; c++) {
        first += img.px[c];
        middle += img.px[(img.height / 2) * img.width + c];
    }
    fprintf(stderr, "64 x 64, 1024 iterations: top row %.0f, middle row %.0f (%.0fx)\n", first,
            middle, middle / first);
    assert_true(first >= (double)img.width); /* every pixel takes a step */
    assert_true(middle >= 100.0 * first);
    free(img.px);
}

/* Runs `sched` for `rounds` rounds of the app through the whole real engine
 * (partition, scheduler, devices, a pixel-for-pixel verify every round) on
 * `ini`, in chunks of `grain` rows; returns the run (free with hf_run_free). */
static struct hf_run *engine_run(const char *ini, const char *sched, int rounds, size_t grain)
{
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "fractal.ini", ini), 0);
    struct hf_run_options o = {.app = hf_app_find("fractal"),
                               .sched = hf_sched_find(sched),
                               .cfg = cfg,
                               .engine = HF_ENGINE_REAL,
                               .rounds = rounds,
                               .seed = 1,
                               .grain = grain,
                               .verify = 1};
    assert_non_null(o.sched);
    struct hf_run *run = NULL;
    hf_clear_error();
    int rc = hf_run(&o, &run);
    if (rc)
        fprintf(stderr, "%s: hf_run: %s\n", sched, hf_last_error());
    assert_int_equal(rc, 0);
    assert_int_equal(run->nrounds, rounds);
    hf_config_destroy(cfg);
    return run;
}

/* Chunks device kind `gpu` (1: GPUs, 0: CPUs) ran in round r. */
static size_t chunks_on(const struct hf_run *run, int r, int gpu)
{
    size_t n = 0;
    for (int d = 0; d < run->ndevices; d++)
        if (run->devs[d].is_gpu == gpu)
            n += run->rounds[r].dev[d].chunks;
    return n;
}

/* The whole engine on the real CPU (no GPU): every scheduler of the app's
 * config splits a small image, and every round verifies pixel for pixel. */
static void test_engine_real_cpu(void **state)
{
    (void)state;
    static const char *const scheds[] = {"hass", "minmin", "qilin", "static"};
    for (size_t s = 0; s < sizeof scheds / sizeof *scheds; s++) {
        struct hf_run *run = engine_run("[load]\nwidth = 256\nheight = 256\nmax_iter = 256\n"
                                        "[devices]\ncpu = 2\ncuda = none\n",
                                        scheds[s], 3, 8);
        assert_int_equal(chunks_on(run, 2, 0), 32);
        hf_run_free(run);
    }
}

/* The CUDA kernel's counts equal the reference's on every pixel: a GPU alone
 * on a view across the set's boundary (where a fused multiply-add would change
 * counts), then the CPU and the GPU together on the default view. Skipped
 * without a GPU. */
static void test_engine_real_gpu(void **state)
{
    (void)state;
#ifdef HF_HAVE_CUDA
    if (hf_cuda_device_count() < 1)
        skip();
    struct hf_run *run = engine_run("[load]\nwidth = 512\nheight = 512\nmax_iter = 3000\n"
                                    "center_x = -0.7453\ncenter_y = 0.1127\nscale = 0.01\n"
                                    "[devices]\ncpu = 0\ncuda = 0\n",
                                    "hass", 2, 8);
    assert_int_equal(chunks_on(run, 1, 1), 64);
    hf_run_free(run);
    run = engine_run("[load]\nwidth = 1024\nheight = 1024\n[devices]\ncpu = all\ncuda = 0\n",
                     "hass", 4, 16);
    size_t on_gpu = 0;
    for (int r = 0; r < 4; r++)
        on_gpu += chunks_on(run, r, 1);
    assert_true(on_gpu > 0);
    hf_run_free(run);
#else
    skip();
#endif
}

/* The defaults and their signature (no run: 2048 x 2048 is a config's size). */
static void test_defaults(void **state)
{
    (void)state;
    const struct hf_app *app = hf_app_find("fractal");
    assert_non_null(app);
    assert_true(app->default_grain > 0);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "fractal.ini", "[load]\n"), 0);
    void *ctx = NULL;
    assert_int_equal(app->create(&ctx, cfg), 0);
    char sig[128];
    app->signature(ctx, sig, sizeof sig);
    assert_string_equal(sig, "2048x2048 iter=1024 view=-0.75,0,4");
    struct hf_load load = {0};
    assert_int_equal(app->next_load(ctx, &load), 1);
    assert_int_equal(load.units, 2048);
    assert_true(load.bytes == 2048.0 * 2048.0 * 4.0);
    app->teardown(ctx);
    hf_config_destroy(cfg);
}

static void test_bad_config(void **state)
{
    (void)state;
    hf_clear_error();
    assert_int_equal(run_app("[load]\nheight = 0\n", 1, 1, (size_t)-1, NULL), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "fractal.ini:2"));
    hf_clear_error();
    assert_int_equal(run_app("[load]\nwidth = 8\nscale = 0\n", 1, 1, (size_t)-1, NULL), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "fractal.ini:3"));
    assert_non_null(strstr(hf_last_error(), "scale"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_known_points),
        cmocka_unit_test(test_tiny_image_by_hand),
        cmocka_unit_test(test_cpu_equals_reference),
        cmocka_unit_test(test_verify_catches_missing_rows),
        cmocka_unit_test(test_row_cost_spread),
        cmocka_unit_test(test_engine_real_cpu),
        cmocka_unit_test(test_engine_real_gpu),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
