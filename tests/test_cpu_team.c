/* test_cpu_team.c - a bundle too small to repay waking the CPU team runs on one thread.
 *
 * DESIGN
 * ------
 * The rule (drivers/cpu_team.c) is checked on made-up bundle times and a
 * given wake-up: no choice before a bundle ran, one thread where one
 * thread's time is below the wake-up, the team for bundles like those
 * measured, the team again once one-thread bundles show the work costlier.
 * The last case runs the CPU driver itself on an app whose bundles sleep for
 * set times and record the thread count they were handed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <time.h>

#include "device.h"
#include "drivers/cpu_team.h"

/* A team of 8 that wakes in 0.5 ms; its bundles run at 1e-9 s per unit of
 * work on one thread. */
#define N 8
#define WAKE 5e-4
#define ONE 1e-9

static void nothing_measured_runs_the_team(void **state)
{
    (void)state;
    struct hf__cpu_team t;
    hf__cpu_team_init(&t, N, WAKE);
    assert_int_equal(hf__cpu_team_pick(&t, 1), N);
    hf__cpu_team_init(&t, 1, WAKE);
    hf__cpu_team_ran(&t, 1, 1e6, 1e-3);
    assert_int_equal(hf__cpu_team_pick(&t, 1), 1);
    hf__cpu_team_init(&t, 0, WAKE);
    assert_int_equal(hf__cpu_team_pick(&t, 1), 1);
}

/* Team bundles of 1e7 units (1.25 ms, 10% uneven): one thread takes a bundle
 * whose time on it (at most 1.1e-9 s a unit) is below the wake-up, the team
 * any other, and every bundle like those measured. */
static void small_bundles_run_alone(void **state)
{
    (void)state;
    struct hf__cpu_team t;
    hf__cpu_team_init(&t, N, WAKE);
    for (int i = 0; i < 4; i++)
        hf__cpu_team_ran(&t, N, 1e7, (1.0 + 0.1 * (i % 2)) * 1e7 * ONE / N);
    assert_int_equal(hf__cpu_team_pick(&t, 1), 1);
    assert_int_equal(hf__cpu_team_pick(&t, 4e5), 1);
    assert_int_equal(hf__cpu_team_pick(&t, 6e5), N);
    assert_int_equal(hf__cpu_team_pick(&t, 1e7), N);
    assert_int_equal(hf__cpu_team_pick(&t, 0), N);
    assert_int_equal(hf__cpu_team_pick(&t, -1), N);
    /* Bundles of one size, each within a few wake-ups on the team: one
     * thread would take n times as long, so they stay on the team. */
    hf__cpu_team_init(&t, N, WAKE);
    for (int i = 0; i < 10; i++)
        hf__cpu_team_ran(&t, N, 1e5, (i % 3 ? 1.0 : 8.0) * WAKE);
    assert_int_equal(hf__cpu_team_pick(&t, 1e5), N);
}

/* One-thread bundles that show the work 100x costlier than the team bundles
 * bounded it: once they fill the window (the least bound leaving it), the
 * same bundle goes back to the team, and a far smaller one stays alone. */
static void costlier_work_returns_to_the_team(void **state)
{
    (void)state;
    struct hf__cpu_team t;
    hf__cpu_team_init(&t, N, WAKE);
    hf__cpu_team_ran(&t, N, 1e7, 1e7 * ONE / N);
    assert_int_equal(hf__cpu_team_pick(&t, 4e4), 1);
    for (int i = 0; i < HF__CPU_TEAM_WINDOW - 1; i++)
        hf__cpu_team_ran(&t, 1, 4e4, 4e4 * 100 * ONE);
    assert_int_equal(hf__cpu_team_pick(&t, 4e4), 1);
    hf__cpu_team_ran(&t, 1, 4e4, 4e4 * 100 * ONE);
    assert_int_equal(hf__cpu_team_pick(&t, 4e4), N);
    assert_int_equal(hf__cpu_team_pick(&t, 4e3), 1);
}

/* The driver: an app whose bundles sleep (work 1e6: 8 ms; else 0.1 ms) and
 * record the threads they were handed; the engine's part (ran, with the
 * bundle's time) is played by the test. */
static int handed;

static int sleepy_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    (void)ctx;
    handed = nthreads;
    nanosleep(&(struct timespec){0, b->work > 1e3 ? 8000000 : 100000}, NULL);
    return 0;
}

static int run_one(struct hf_device *dev, const struct hf_app *app, double work)
{
    struct hf_bundle b = {.begin = 0, .end = 1, .count = 1, .work = work};
    struct hf_bundle_times times;
    assert_int_equal(dev->ops->run(dev, app, NULL, &b, &times), 0);
    dev->ops->ran(dev, &b, work > 1e3 ? 8e-3 : 1e-4);
    return handed;
}

static void the_driver_hands_the_count(void **state)
{
    (void)state;
    struct hf_app app = {.name = "sleepy", .run_cpu = sleepy_run_cpu};
    struct hf_device dev = {.info = {.kind = HF_DEV_CPU, .nthreads = 2}, .ops = &hf_driver_cpu};
    assert_int_equal(dev.ops->open(&dev), 0);
    assert_int_equal(run_one(&dev, &app, 1e6), 2);
    /* one thread: 1.6e-8 s a unit, below any team's wake-up */
    assert_int_equal(run_one(&dev, &app, 1), 1);
    assert_int_equal(run_one(&dev, &app, 1e6), 2);
    dev.ops->close(&dev);
    assert_null(dev.drv);
    assert_true(hf__cpu_team_wake(2) > 0.0);
    assert_true(hf__cpu_team_wake(1) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nothing_measured_runs_the_team),
        cmocka_unit_test(small_bundles_run_alone),
        cmocka_unit_test(costlier_work_returns_to_the_team),
        cmocka_unit_test(the_driver_hands_the_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
