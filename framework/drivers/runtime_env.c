/* runtime_env.c - set the environment the libraries read when they load, then re-execute.
 *
 * DESIGN
 * ------
 * Two libraries read settings from the environment in their constructors,
 * before main() runs: OpenBLAS its core (OPENBLAS_CORETYPE, see blas_env.c)
 * and libgomp how an idle OpenMP thread waits (OMP_WAIT_POLICY,
 * GOMP_SPINCOUNT). Setting them from main() is too late for this process,
 * so hf_runtime_env sets what the user left unset and re-executes the
 * program once; HF_REEXEC=1 marks the second process, so a failing override
 * can never loop, and a user who set a variable keeps it.
 *
 * OpenMP waits passively: an idle team thread sleeps at once instead of
 * spinning. The CPU team runs one parallel region per bundle, a sub-range
 * or so per thread, so a thread that loses its core for a scheduler time
 * slice holds the whole bundle; and while GPUs run, every other thread of
 * the process - the CUDA driver's callback worker among them - is confined
 * to the team's cores (topo.c), where spinning team threads keep it waiting.
 * On an H200 host (strsearch, CPU + 1 H200, 4 MiB bundles) 7-12% of the
 * CPU's bundles took 3-10x their time, in runs, while the GPU's pieces
 * waited up to 11 ms for their host callback, and HASS gave the CPU 0.8-13% of
 * the load: 11.3-12.2 ms a round. Passive: 8.9-9.5 ms, the CPU 11-15% of the
 * load (the runs: git show 016a13f:bench/results/gpu/strsearch-cpu-h200-s16).
 * make run's matmul was unchanged (0.83-0.86 ms), and the CPU alone within its
 * noise (strsearch 45-70 ms against 48-55, noop's 200000 chunks 102-110 against
 * 81-125).
 */
#include "runtime_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "blas_env.h"
#include "device.h"

void hf_runtime_env(char **argv)
{
    if (getenv("HF_REEXEC") || !argv)
        return;
    int changed = 0;
    const char *core = getenv("OPENBLAS_CORETYPE") ? NULL : hf__blas_core_wanted();
    if (core)
        changed |= setenv("OPENBLAS_CORETYPE", core, 1) == 0;
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT"))
        changed |= setenv("OMP_WAIT_POLICY", "passive", 1) == 0;
    if (!changed || setenv("HF_REEXEC", "1", 1) != 0)
        return;
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* The exec failed (no /proc, seccomp): carry on as loaded, and leave the
     * variables so that children inherit the choice. */
}

const char *hf_openmp_describe(void)
{
    static _Thread_local char buf[128];
    const char *policy = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
    snprintf(buf, sizeof buf, "OMP_WAIT_POLICY=%s%s%s", policy ? policy : "(unset)",
             spin ? " GOMP_SPINCOUNT=" : "", spin ? spin : "");
    return buf;
}
