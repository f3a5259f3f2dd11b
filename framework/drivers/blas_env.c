/* blas_env.c - which CPU kernel OpenBLAS should run, and which it runs.
 *
 * DESIGN
 * ------
 * OpenBLAS (DYNAMIC_ARCH) selects its core in a library constructor, before
 * main() runs, from CPUID; on virtual machines the hypervisor often masks the
 * bits it looks at and the 0.3.21 in Debian falls back to "Prescott", whose
 * SGEMM reaches ~0.2 TFLOP/s where SkylakeX kernels reach 1.2-1.6. The only
 * supported override is the OPENBLAS_CORETYPE environment variable, read by
 * that same constructor, so runtime_env.c sets it and re-executes the
 * program. We ask the compiler's CPU probe (__builtin_cpu_supports, which
 * reads the CPUID feature bits that the guest kernel also trusts) and map the
 * widest vector extension to OpenBLAS's core: avx512bf16 -> Cooperlake,
 * avx512f -> SkylakeX, avx2 -> Haswell.
 */
#include "blas_env.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *hf__blas_core_best(void)
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
