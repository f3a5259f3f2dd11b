/* test_cpu_team.c - a bundle too small to repay waking the CPU team runs on one thread.
 *
 * DESIGN
 * ------
 * The rule (drivers/cpu_team.c) is checked on made-up bundle times, where
 * each estimate's source is known: no choice before both are measured, none
 * from large bundles' unevenness, one thread where one thread's time is
 * below the team's wake-up, the team again once one-thread bundles show the
 * work costlier. The last case runs the CPU driver itself on an app whose
 * bundles sleep for set times and record the thread count they were handed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "device.h"
#include "drivers/cpu_team.h"

/* A team of 8 whose bundles run at 1e-9 s per unit of work on one thread. */
#define N 8
#define ONE 1e-9

/* Large bundles: their time is the work over the team plus 10% unevenness. */
static void ran_large(struct hf__cpu_team *t, int times)
{
    for (int i = 0; i < times; i++) {
        double w = 1e7 * (1 + i % 3);
        hf__cpu_team_ran(t, N, w, 1.1 * w * ONE / N);
    }
}

static void nothing_measured_runs_the_team(void **state)
{
    (void)state;
    struct hf__cpu_team t;
    hf__cpu_team_init(&t, N);
    assert_int_equal(hf__cpu_team_pick(&t, 1), N);
    hf__cpu_team_init(&t, 1);
    assert_int_equal(hf__cpu_team_pick(&t, 1), 1);
    hf__cpu_team_init(&t, 0);
    assert_int_equal(hf__cpu_team_pick(&t, 1), 1);
}

/* Large bundles' unevenness is no wake-up: it grows with the work, and one
 * thread would pay it too. */
static void large_bundles_alone_keep_the_team(void **state)
{
    (void)state;
    struct hf__cpu_team t;
    hf__cpu_team_init(&t, N);
    ran_large(&t, 10);
    assert_int_equal(t.nwake, 0);
    assert_int_equal(hf__cpu_team_pick(&t, 1), N);
    assert_int_equal(hf__cpu_team_pick(&t, 0), N);
}

/* Small team bundles that take 0.5 ms whatever their work: a bundle whose
 * one-thread time is below that runs on one thread, a larger one on the team
 * (one thread's time 0.5 ms at 5e5 units; the team's 0.5 ms + 1/8 of it). */
static void small_bundles_run_alone(void **state)
{
    (void)state;
    struct hf__cpu_team t;
    hf__cpu_team_init(&t, N);
    ran_large(&t, 4);
    for (int i = 0; i < 5; i++)
        hf__cpu_team_ran(&t, N, 10.0 * (i + 1), 5e-4);
    assert_int_equal(t.nwake, 5);
    assert_int_equal(hf__cpu_team_pick(&t, 1), 1);
    assert_int_equal(hf__cpu_team_pick(&t, 4e5), 1);
    assert_int_equal(hf__cpu_team_pick(&t, 7e5), N);
    assert_int_equal(hf__cpu_team_pick(&t, 1e7), N);
    assert_int_equal(hf__cpu_team_pick(&t, -1), N);
}

/* One-thread bundles that show the work 100x costlier than the large bundles
 * bounded it: once they fill the window, the same bundle goes back to the team. */
static void costlier_work_returns_to_the_team(void **state)
{
    (void)state;
    struct hf__cpu_team t;
    hf__cpu_team_init(&t, N);
    ran_large(&t, 4);
    for (int i = 0; i < 5; i++)
        hf__cpu_team_ran(&t, N, 10, 5e-4);
    assert_int_equal(hf__cpu_team_pick(&t, 4e4), 1);
    for (int i = 0; i < HF__CPU_TEAM_WINDOW; i++)
        hf__cpu_team_ran(&t, 1, 4e4, 4e4 * 100 * ONE);
    assert_int_equal(hf__cpu_team_pick(&t, 4e4), N);
    assert_int_equal(hf__cpu_team_pick(&t, 10), 1);
}

/* The driver: an app whose bundles sleep (work 1e6: 8 ms; work 10: 1 ms) and
 * record the threads they were handed. */
static int handed;

static int sleepy_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    (void)ctx;
    handed = nthreads;
    struct timespec ts = {0, b->work > 1e3 ? 8000000 : 1000000};
    nanosleep(&ts, NULL);
    return 0;
}

static int run_one(struct hf_device *dev, const struct hf_app *app, double work)
{
    struct hf_bundle b = {.begin = 0, .end = 1, .count = 1, .work = work};
    struct hf_bundle_times times;
    assert_int_equal(dev->ops->run(dev, app, NULL, &b, &times), 0);
    return handed;
}

static void the_driver_hands_the_count(void **state)
{
    (void)state;
    struct hf_app app = {.name = "sleepy", .run_cpu = sleepy_run_cpu};
    struct hf_device dev = {.info = {.kind = HF_DEV_CPU, .nthreads = 2}, .ops = &hf_driver_cpu};
    assert_int_equal(dev.ops->open(&dev), 0);
    assert_int_equal(run_one(&dev, &app, 1e6), 2);
    assert_int_equal(run_one(&dev, &app, 10), 2); /* 1 ms past its share: the wake-up */
    assert_int_equal(run_one(&dev, &app, 10), 1);
    assert_int_equal(run_one(&dev, &app, 1e6), 2);
    dev.ops->close(&dev);
    assert_null(dev.drv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothing_measured_runs_the_team),
        cmocka_unit_test(large_bundles_alone_keep_the_team),
        cmocka_unit_test(small_bundles_run_alone),
        cmocka_unit_test(costlier_work_returns_to_the_team),
        cmocka_unit_test(the_driver_hands_the_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
