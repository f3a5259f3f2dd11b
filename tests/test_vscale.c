/* test_vscale.c - the vscale app (the new-app template) runs and verifies.
 *
 * `make new-app NAME=foo` copies this file to tests/test_foo.c with every
 * "vscale" renamed, so it must pass for the untouched template of any name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hetfarm.h"

static const struct hf_devices no_devices = {.count = 0, .dev = NULL, .executes = 1};

/* Runs `rounds` loads of the app from `ini` on the CPU in bundles of about `grain`
 * units, verifying each; returns the first error (or 0). Skips chunk `skip`
 * (pass (size_t)-1 to run them all). */
static int run_app(const char *ini, int rounds, size_t grain, size_t skip)
{
    const struct hf_app *app = hf_app_find("vscale");
    assert_non_null(app);
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "vscale.ini", ini), 0);
    void *ctx = NULL;
    int rc = app->create(&ctx, cfg);
    if (rc == 0 && app->setup)
        rc = app->setup(ctx, &no_devices);
    for (int r = 0; r < rounds && rc == 0; r++) {
        struct hf_load load = {.round = r};
        assert_int_equal(app->next_load(ctx, &load), 1);
        size_t (*part)(void *, const struct hf_load *, size_t, struct hf_chunk *, size_t) =
            app->partition ? app->partition : hf_partition_even;
        size_t n = part(ctx, &load, grain, NULL, 0);
        struct hf_chunk *c = calloc(n, sizeof *c);
        assert_int_equal(part(ctx, &load, grain, c, n), n);
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (i == skip)
                continue;
            struct hf_bundle b = {0};
            assert_int_equal((app->bundle ? app->bundle : hf_bundle_merge)(ctx, c + i, 1, &b), 0);
            b.load = &load;
            rc = app->run_cpu(ctx, &b, 2);
        }
        free(c);
        if (rc == 0 && app->verify)
            rc = app->verify(ctx, &load);
    }
    if (ctx && app->teardown)
        app->teardown(ctx);
    hf_config_destroy(cfg);
    return rc;
}

static void test_runs_and_verifies(void **state)
{
    (void)state;
    assert_int_equal(run_app("[load]\nn = 100003\na = 3\n", 3, 1000, (size_t)-1), 0);
    assert_int_equal(run_app("[load]\nn = 1\n", 1, 7, (size_t)-1), 0);
}

static void test_default_config(void **state)
{
    (void)state;
    const struct hf_app *app = hf_app_find("vscale");
    assert_non_null(app);
    assert_true(app->default_grain > 0);
    assert_int_equal(run_app("[load]\n", 1, app->default_grain, (size_t)-1), 0);
}

/* An unrun chunk leaves NaN behind and verify says which element. */
static void test_verify_catches_missing_chunk(void **state)
{
    (void)state;
    hf_clear_error();
    assert_int_equal(run_app("[load]\nn = 5000\n", 2, 1000, 3), HF_EVERIFY);
    assert_non_null(strstr(hf_last_error(), "y[3000]"));
}

static void test_bad_config(void **state)
{
    (void)state;
    hf_clear_error();
    assert_int_equal(run_app("[load]\nn = 0\n", 1, 1, (size_t)-1), HF_ECONFIG);
    assert_non_null(strstr(hf_last_error(), "vscale.ini:2"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_and_verifies),
        cmocka_unit_test(test_default_config),
        cmocka_unit_test(test_verify_catches_missing_chunk),
        cmocka_unit_test(test_bad_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
