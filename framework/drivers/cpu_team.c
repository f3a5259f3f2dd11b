/* cpu_team.c - how many of the CPU team's threads a bundle is worth.
 *
 * DESIGN
 * ------
 * A bundle on the team costs the team's wake-up before its work: OpenMP
 * waits passively (runtime_env.c says why), so a parallel region first wakes
 * every sleeping thread, and its closing barrier waits for the last of them.
 * On an H100's 16-core host the CPU's bundles of an SSSP search's last rounds
 * (1-15 vertices: microseconds of work for one thread) took 0.1-3.5 ms on the
 * 15-thread team, 2-10x what the GPU took for the whole round. One thread
 * runs such a bundle without waking anyone. So a bundle runs on one thread
 * when one thread would finish it before the team is awake,
 *     w b  <  W,
 * and on the whole team otherwise, with
 *   W  the team's wake-up, measured when the device opens: the median of a
 *      few empty parallel regions, each after the team fell asleep (1 ms of
 *      start-up);
 *   b  one thread's seconds per unit of work. A team of n is at most n times
 *      faster than one of its threads, so each bundle bounds b from above
 *      (n t / w on the team, t / w alone, t as the engine timed it); b is
 *      the least of the last HF__CPU_TEAM_WINDOW bounds, the tightest.
 * Until a bundle ran the team runs. A bundle of the work of one the team ran
 * is priced on one thread at n times that bundle's time, at least n W, so
 * only a bundle far smaller than those measured goes to one thread: where the
 * app's work misprices it, what it can lose is a few times the W it was
 * predicted below. W is not
 * learned from the run's bundles: a team bundle's time past its work is its
 * wake-up only in a bundle whose work costs nothing, and in the others it is
 * the work's unevenness or a core lost for a while, which sent a 2-core VM's
 * matmul bundles to one thread (2x their time) when it was counted. The two
 * choices are the only ones: where waking is a barrier over every thread
 * woken, a team of any size pays it.
 */
#include "cpu_team.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device.h"

#define WAKE_TRIES 7

void hf__cpu_team_init(struct hf__cpu_team *t, int nthreads, double wake_s)
{
    memset(t, 0, sizeof *t);
    t->nthreads = nthreads > 0 ? nthreads : 1;
    t->wake_s = wake_s > 0.0 ? wake_s : 0.0;
    t->least = INFINITY;
}

int hf__cpu_team_pick(const struct hf__cpu_team *t, double work)
{
    return t->nthreads > 1 && work > 0.0 && work * t->least < t->wake_s ? 1 : t->nthreads;
}

void hf__cpu_team_ran(struct hf__cpu_team *t, int threads, double work, double seconds)
{
    if (!(work > 0.0) || !(seconds > 0.0) || threads < 1)
        return;
    double bound = threads * seconds / work;
    int slot = (int)(t->next++ % HF__CPU_TEAM_WINDOW);
    double left = t->n == HF__CPU_TEAM_WINDOW ? t->per_work[slot] : INFINITY;
    t->per_work[slot] = bound;
    t->n += t->n < HF__CPU_TEAM_WINDOW;
    if (bound <= t->least) {
        t->least = bound;
    } else if (left <= t->least) { /* the least left the window */
        t->least = INFINITY;
        for (int i = 0; i < t->n; i++)
            t->least = fmin(t->least, t->per_work[i]);
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hf__cpu_team_wake(int nthreads)
{
    if (nthreads <= 1)
        return 0.0;
    double took[WAKE_TRIES];
    for (int k = 0; k < WAKE_TRIES; k++) {
        nanosleep(&(struct timespec){0, 100000}, NULL); /* the team falls asleep */
        int woke = 0;
        double start = hf__now();
#pragma omp parallel num_threads(nthreads) reduction(+ : woke)
        woke += 1;
        took[k] = woke == nthreads ? hf__now() - start : 0.0;
    }
    qsort(took, WAKE_TRIES, sizeof *took, by_value);
    return took[WAKE_TRIES / 2];
}
