/* blas_env.h - choosing and reporting OpenBLAS's CPU kernel.
 *
 * Debian's OpenBLAS (0.3.21) is built with DYNAMIC_ARCH and picks its kernels
 * when the library loads. On virtualised Xeons and EPYCs it often falls back to
 * the generic "Prescott" core (5-7x slower GEMM), because the hypervisor hides
 * the CPUID bits it checks. runtime_env.c sets OPENBLAS_CORETYPE from what the
 * CPU really supports and re-executes the program once so the library loads
 * with it.
 */
#ifndef HF_BLAS_ENV_H
#define HF_BLAS_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* The OpenBLAS core this CPU supports (the value OPENBLAS_CORETYPE should
 * have), or NULL to leave OpenBLAS's choice. From CPUID alone: callable
 * before any library's constructor ran. */
const char *hf__blas_core_best(void);

/* hf_blas_describe() is declared in device.h, with the rest of the machine. */

#ifdef __cplusplus
}
#endif
#endif
