/* cpu_team.h - how many of the CPU team's threads a bundle is worth.
 *
 * The CPU driver (device_cpu.c) asks before each bundle and reports after
 * it; cpu_team.c says why a small bundle runs on one thread.
 */
#ifndef HF_CPU_TEAM_H
#define HF_CPU_TEAM_H

#ifdef __cplusplus
extern "C" {
#endif

#define HF__CPU_TEAM_WINDOW 32 /* bundles each estimate remembers */

struct hf__cpu_team {
    int nthreads; /* the team's size */
    /* One thread's seconds per unit of work, bounded from above by each
     * bundle (below), and the team's seconds past its share of the work;
     * the last HF__CPU_TEAM_WINDOW of each, in rings. */
    double per_work[HF__CPU_TEAM_WINDOW], wake[HF__CPU_TEAM_WINDOW];
    int nper_work, nwake;
    unsigned long bundles; /* reported so far: the rings' next slots */
    unsigned long waked;
};

void hf__cpu_team_init(struct hf__cpu_team *t, int nthreads);

/* The threads to run a bundle of `work` on: 1 or the whole team. */
int hf__cpu_team_pick(const struct hf__cpu_team *t, double work);

/* A bundle of `work` ran on `threads` threads in `seconds`. */
void hf__cpu_team_ran(struct hf__cpu_team *t, int threads, double work, double seconds);

#ifdef __cplusplus
}
#endif
#endif
