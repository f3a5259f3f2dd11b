/* blas_env.c - make OpenBLAS run the kernels the CPU really supports, and say which.
 *
 * DESIGN
 * ------
 * OpenBLAS (DYNAMIC_ARCH) selects its core in a library constructor, before
 * main() runs, from CPUID; on virtual machines the hypervisor often masks the
 * bits it looks at and the 0.3.21 in Debian falls back to "Prescott", whose
 * SGEMM reaches ~0.2 TFLOP/s where SkylakeX kernels reach 1.2-1.6. The only
 * supported override is the OPENBLAS_CORETYPE environment variable, read by
 * that same constructor, so setting it from main() is too late for this
 * process: we set it and re-execute ourselves once. HF_BLAS_REEXEC=1 marks the
 * second process so that a failing override can never loop, and a user who
 * set OPENBLAS_CORETYPE keeps full control. We ask the compiler's CPU probe
 * (__builtin_cpu_supports, which reads the CPUID feature bits that the guest
 * kernel also trusts) and map the widest vector extension to OpenBLAS's core:
 * avx512bf16 -> Cooperlake, avx512f -> SkylakeX, avx2 -> Haswell.
 */
#include "blas_env.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* The core OpenBLAS should use on this CPU, or NULL to leave its choice. */
static const char *best_core(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512bf16"))
        return "Cooperlake";
    if (__builtin_cpu_supports("avx512f"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2"))
        return "Haswell";
    return NULL;
}

void hf_blas_select_core(char **argv)
{
    if (getenv("OPENBLAS_CORETYPE") || getenv("HF_BLAS_REEXEC") || !argv)
        return;
    const char *want = best_core();
    if (!want)
        return;
    /* Nothing to do when OpenBLAS already picked it (bare metal). */
    const char *have = openblas_get_corename();
    if (have && strcasecmp(have, want) == 0)
        return;
    if (setenv("OPENBLAS_CORETYPE", want, 1) != 0 || setenv("HF_BLAS_REEXEC", "1", 1) != 0)
        return;
    fflush(NULL);
    execv("/proc/self/exe", argv);
    /* The exec failed (no /proc, seccomp): carry on with the library's own
     * choice, and leave the variables so that children inherit the choice. */
}

const char *hf_blas_describe(void)
{
    static _Thread_local char buf[512];
    const char *cfg = openblas_get_config();
    const char *core = openblas_get_corename();
    const char *env = getenv("OPENBLAS_CORETYPE");
    char *c = cfg ? strdup(cfg) : NULL;
    if (c) {
        size_t n = strlen(c);
        while (n > 0 && (c[n - 1] == ' ' || c[n - 1] == '\n'))
            c[--n] = '\0';
    }
    /* openblas_get_config() already starts with "OpenBLAS <version>". */
    int len = snprintf(buf, sizeof buf, "%s%s core=%s",
                       c && strncmp(c, "OpenBLAS", 8) == 0 ? "" : "OpenBLAS ",
                       c ? c : "(unknown config)", core ? core : "?");
    if (env && len > 0 && (size_t)len < sizeof buf)
        snprintf(buf + len, sizeof buf - (size_t)len, " (OPENBLAS_CORETYPE=%s)", env);
    free(c);
    return buf;
}
