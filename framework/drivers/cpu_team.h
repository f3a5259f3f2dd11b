/* cpu_team.h - how many of the CPU team's threads a bundle is worth.
 *
 * The CPU driver (device_cpu.c) asks before each bundle and reports each
 * bundle's time after it; cpu_team.c says why a small bundle runs on one
 * thread.
 */
#ifndef HF_CPU_TEAM_H
#define HF_CPU_TEAM_H

#ifdef __cplusplus
extern "C" {
#endif

#define HF__CPU_TEAM_WINDOW 32 /* bundles the per-work bound remembers */

struct hf__cpu_team {
    int nthreads;  /* the team's size */
    double wake_s; /* waking the sleeping team (hf__cpu_team_wake) */
    /* Bounds on one thread's seconds per unit of work, one per bundle, the
     * last HF__CPU_TEAM_WINDOW in a ring, and the least of them, kept as
     * bounds come and go: a pick scanning the ring cost noop 0.25 us a
     * bundle (2-core VM: rounds of 200,000 bundles 71 -> 122 ms). */
    double per_work[HF__CPU_TEAM_WINDOW], least;
    int n;
    unsigned long next;
};

void hf__cpu_team_init(struct hf__cpu_team *t, int nthreads, double wake_s);

/* The threads to run a bundle of `work` on: 1 or the whole team. */
int hf__cpu_team_pick(const struct hf__cpu_team *t, double work);

/* A bundle of `work` ran on `threads` threads in `seconds`. */
void hf__cpu_team_ran(struct hf__cpu_team *t, int threads, double work, double seconds);

/* Measures wake_s for the calling thread's OpenMP team of `nthreads`: the
 * median of a few empty parallel regions, each after the team fell asleep. */
double hf__cpu_team_wake(int nthreads);

#ifdef __cplusplus
}
#endif
#endif
