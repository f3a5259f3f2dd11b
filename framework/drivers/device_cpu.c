/* device_cpu.c - the CPU driver: a team of threads that runs one bundle at a time.
 *
 * DESIGN
 * ------
 * The CPU is one device: a host thread pinned (hwloc) to the team's cores that
 * hands each bundle to the app's run_cpu with the team size, and the app's
 * kernel spreads it over the team (OpenMP, or OpenBLAS's own threads). The
 * team size is fixed when the device list is built, leaving a core to every
 * GPU host thread, so the CPU side never oversubscribes the machine; the
 * OpenMP team of the host thread is sized here, once, because OpenMP's
 * thread count is per calling thread, and started here too: OpenMP creates a
 * thread's team at its first parallel region, which would otherwise be the
 * first bundle's (1-2 ms of round 0's makespan, measured on a graph BFS).
 * A bundle too small to repay waking the team runs on one of its threads
 * (cpu_team.c): the app's run_cpu is handed that count.
 */
#include <omp.h>
#include <stdlib.h>

#include "cpu_team.h"
#include "device.h"

/* Sizes and starts the OpenMP team of the host thread (the engine has pinned
 * it already, so the team's threads inherit its cores), and measures its
 * wake-up. */
static int cpu_open(struct hf_device *dev)
{
    struct hf__cpu_team *team = malloc(sizeof *team);
    if (!team)
        return hf_fail(HF_ENOMEM, "cpu: no memory for the team's state");
    hf__cpu_team_init(team, dev->info.nthreads, 0.0);
    omp_set_num_threads(team->nthreads);
    int started = 0;
#pragma omp parallel reduction(+ : started)
    started += 1;
    if (started == 0) {
        free(team);
        return HF_EDEVICE;
    }
    team->wake_s = hf__cpu_team_wake(team->nthreads);
    dev->drv = team;
    return 0;
}

/* Runs the bundle on the team, or on one thread when it is too small to
 * repay waking the team. The engine names the device and chunks in any error
 * message, so the app's code and message pass through unchanged. */
static int cpu_run(struct hf_device *dev, const struct hf_app *app, void *app_ctx,
                   const struct hf_bundle *b, struct hf_bundle_times *t)
{
    t->copy_in_s = t->kernel_s = t->copy_out_s = 0;
    return app->run_cpu(app_ctx, b, hf__cpu_team_pick(dev->drv, b->work));
}

/* The bundle ran on the threads the pick gave it (nothing learned between). */
static void cpu_ran(struct hf_device *dev, const struct hf_bundle *b, double seconds)
{
    hf__cpu_team_ran(dev->drv, hf__cpu_team_pick(dev->drv, b->work), b->work, seconds);
}

static void cpu_close(struct hf_device *dev)
{
    free(dev->drv);
    dev->drv = NULL;
}

const struct hf_driver_ops hf_driver_cpu = {
    .name = "cpu",
    .open = cpu_open,
    .run = cpu_run,
    .ran = cpu_ran,
    .close = cpu_close,
};
