/* runtime_env.c - set the environment the libraries read when they load, then re-execute.
 *
 * DESIGN
 * ------
 * Two libraries read settings from the environment in their constructors,
 * before main() runs: OpenBLAS its core (OPENBLAS_CORETYPE, see blas_env.c)
 * and libgomp how an idle OpenMP thread waits (OMP_WAIT_POLICY,
 * GOMP_SPINCOUNT). Setting them from main() is too late for this process,
 * so hf_runtime_env adds what the user left unset and re-executes the
 * program once; HF_REEXEC=1 marks the second process, so a failing override
 * can never loop, and a user who set a variable keeps it.
 *
 * It runs from the hetfarm executable's .preinit_array (cli/main.c): after
 * the libraries were mapped and relocated, before any of their constructors.
 * So the first process never runs cuBLAS's, which register its kernels with
 * the CUDA runtime: 0.4-0.6 s a process on the dev VM, paid twice while the
 * re-exec came from main() (`hetfarm --help` took 0.79-0.99 s, 0.41-0.59 s
 * with the re-exec skipped). This early, libc's environment functions are not
 * set up yet (a setenv() there is lost), so the new environment is the old
 * one plus the additions, in static storage, handed to execve(). And
 * OpenBLAS cannot yet say which core it would pick, so the core this CPU
 * supports is always named; that is the one it ends up with either way (a
 * different pick was always overridden).
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
#include <string.h>
#include <unistd.h>

#include "blas_env.h"
#include "device.h"

#define MAX_ENV 4096

/* Whether envp sets `name`. */
static int env_has(char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (; *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return 1;
    return 0;
}

void hf_runtime_env(int argc, char **argv, char **envp)
{
    static char *next[MAX_ENV];
    static char core_var[64] = "OPENBLAS_CORETYPE=";
    (void)argc;
    if (!argv || !envp || env_has(envp, "HF_REEXEC"))
        return;
    int n = 0, added = 0;
    while (envp[n])
        n++;
    if (n + 4 > MAX_ENV)
        return;
    memcpy(next, envp, (size_t)n * sizeof *envp);
    const char *core = env_has(envp, "OPENBLAS_CORETYPE") ? NULL : hf__blas_core_best();
    size_t at = strlen(core_var);
    if (core && at + strlen(core) < sizeof core_var) {
        memcpy(core_var + at, core, strlen(core) + 1);
        next[n + added++] = core_var;
    }
    if (!env_has(envp, "OMP_WAIT_POLICY") && !env_has(envp, "GOMP_SPINCOUNT"))
        next[n + added++] = "OMP_WAIT_POLICY=passive";
    if (!added)
        return;
    next[n + added++] = "HF_REEXEC=1";
    next[n + added] = NULL;
    execve("/proc/self/exe", argv, next);
    /* The exec failed (no /proc, seccomp): carry on as loaded. */
}

const char *hf_openmp_describe(void)
{
    static _Thread_local char buf[128];
    const char *policy = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
    snprintf(buf, sizeof buf, "OMP_WAIT_POLICY=%s%s%s", policy ? policy : "(unset)",
             spin ? " GOMP_SPINCOUNT=" : "", spin ? spin : "");
    return buf;
}
