/* cpu_team.c - how many of the CPU team's threads a bundle is worth.
 *
 * DESIGN
 * ------
 * A bundle on the team costs its work spread over the team plus the team's
 * wake-up: OpenMP waits passively (runtime_env.c says why), so a parallel
 * region first wakes every sleeping thread, and its closing barrier waits
 * for the last of them. On an H100's 16-core host that was 0.1-3.5 ms a
 * bundle: the CPU's bundles of an SSSP search's tail rounds (1-15 vertices,
 * microseconds of work for one thread) took that long, 2-10x what the GPU
 * took for the whole round. One thread runs such a bundle without waking
 * anyone. So a bundle of work w runs on one thread when
 *     w b  <  W + w b / n
 * (one thread's time against the team's), and on the whole team otherwise,
 * with n the team's size and two estimates learned from the bundles this
 * device ran:
 *   b  one thread's seconds per unit of work. A team of n is at most n times
 *      faster than one of its threads, so each bundle bounds b from above
 *      (n t / w on the team, t / w alone); b is the least of the last
 *      HF__CPU_TEAM_WINDOW bounds, the tightest of them.
 *   W  the team's wake-up: what a team bundle took past its share of the
 *      work at that rate (t - w b / n), counted only where that is most of
 *      the bundle (at least the share itself), since in a large bundle it is
 *      the work's own unevenness, which one thread would pay n times over.
 *      The median of the last HF__CPU_TEAM_WINDOW.
 * Until both are known the whole team runs. A bundle whose work is mispriced
 * costs at most a few W on one thread; the team's wake-up it avoids is paid
 * by every small bundle. The two are the only choices: where waking is a
 * barrier over every thread woken, a team of any size pays it.
 */
#include "cpu_team.h"

#include <stdlib.h>
#include <string.h>

void hf__cpu_team_init(struct hf__cpu_team *t, int nthreads)
{
    memset(t, 0, sizeof *t);
    t->nthreads = nthreads > 0 ? nthreads : 1;
}

static double least(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[HF__CPU_TEAM_WINDOW];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, by_value);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

int hf__cpu_team_pick(const struct hf__cpu_team *t, double work)
{
    int n = t->nthreads;
    if (n <= 1 || !(work > 0) || t->nper_work == 0 || t->nwake == 0)
        return n;
    double b = least(t->per_work, t->nper_work), W = median(t->wake, t->nwake);
    return work * b < W + work * b / n ? 1 : n;
}

void hf__cpu_team_ran(struct hf__cpu_team *t, int threads, double work, double seconds)
{
    if (!(work > 0) || !(seconds > 0) || threads < 1)
        return;
    t->per_work[t->bundles++ % HF__CPU_TEAM_WINDOW] = threads * seconds / work;
    if (t->nper_work < HF__CPU_TEAM_WINDOW)
        t->nper_work++;
    if (threads == 1)
        return;
    double share = work * least(t->per_work, t->nper_work) / threads;
    if (seconds - share < share)
        return;
    t->wake[t->waked++ % HF__CPU_TEAM_WINDOW] = seconds - share;
    if (t->nwake < HF__CPU_TEAM_WINDOW)
        t->nwake++;
}
