/* runtime_env.h - the environment hetfarm's libraries read when they load
 * (framework/drivers/runtime_env.c).
 */
#ifndef HF_RUNTIME_ENV_H
#define HF_RUNTIME_ENV_H

#ifdef __cplusplus
extern "C" {
#endif

/* Runs from the hetfarm executable's .preinit_array (before any library's
 * constructor; arguments as the loader passes them). Adds what the user left
 * unset of OPENBLAS_CORETYPE (the core this CPU supports) and OMP_WAIT_POLICY
 * (passive, unless GOMP_SPINCOUNT is set), then re-executes /proc/self/exe
 * with `argv`, marking the new process with HF_REEXEC=1 so that it never
 * loops. Returns when nothing needs doing, in the re-executed process, or
 * when the exec failed. Calls no function that needs libc set up. */
void hf_runtime_env(int argc, char **argv, char **envp);

/* hf_openmp_describe() is declared in device.h, with the rest of the machine. */

#ifdef __cplusplus
}
#endif
#endif
