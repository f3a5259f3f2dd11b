/* blas_env.h - choosing and reporting OpenBLAS's CPU kernel.
 *
 * Debian's OpenBLAS (0.3.21) is built with DYNAMIC_ARCH and picks its kernels
 * when the library loads. On virtualised Xeons and EPYCs it often falls back to
 * the generic "Prescott" core (5-7x slower GEMM), because the hypervisor hides
 * the CPUID bits it checks. hetfarm sets OPENBLAS_CORETYPE from what the CPU
 * really supports and re-executes itself once so the library loads with it.
 */
#ifndef HF_BLAS_ENV_H
#define HF_BLAS_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* Called first thing in main(). If OPENBLAS_CORETYPE is unset and OpenBLAS
 * chose a weaker core than the CPU supports, sets OPENBLAS_CORETYPE (and
 * HF_BLAS_REEXEC=1, which prevents loops) and re-executes /proc/self/exe with
 * `argv`. Returns normally when nothing needs doing or the exec failed. */
void hf_blas_select_core(char **argv);

/* hf_blas_describe() is declared in device.h, with the rest of the machine. */

#ifdef __cplusplus
}
#endif
#endif
