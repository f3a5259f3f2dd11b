/* engine_starpu.h - StarPU's own policies as rows of `compare` (engine_starpu.c).
 *
 * A scheduler named "starpu:POLICY" (POLICY one of StarPU 1.3's predefined
 * policies: eager, ws, dmda, ...) is not a hetfarm scheduler: the run goes
 * through StarPU, each chunk of a round one StarPU task whose CPU function
 * calls the app's run_cpu (and, with a StarPU built with CUDA, whose CUDA
 * function calls its run_cuda), and StarPU's POLICY decides where it runs.
 * run.c hands such runs to hf__run_starpu; cli/plan.c resolves the names.
 */
#ifndef HF_ENGINE_STARPU_H
#define HF_ENGINE_STARPU_H

#include "engine.h"

/* The ops table that stands for "starpu:POLICY" in a plan (its callbacks are
 * never driven: create fails with HF_ENOTSUP). NULL with hf_fail details when
 * POLICY is not a StarPU policy (the message lists them) or the build has no
 * StarPU. */
const struct hf_sched_ops *hf__starpu_sched(const char *policy);
/* Whether ops stands for a StarPU policy. */
int hf__starpu_is(const struct hf_sched_ops *ops);
/* 1 when StarPU's tasks have a CUDA implementation (run_cuda on the GPU of a
 * StarPU CUDA worker): the build has CUDA and the StarPU it was built against
 * too (`make starpu-cuda`; Debian's has none). Else 0: CPU workers only. */
int hf__starpu_has_cuda(void);
/* hf_run for such a scheduler: same options, same record (see engine_starpu.c). */
int hf__run_starpu(const struct hf_run_options *opts, struct hf_run **out);

#endif
