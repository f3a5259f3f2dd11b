/* registry.c - the static registry of schedulers.
 *
 * DESIGN
 * ------
 * Like StarPU's predefined_policies[], the schedulers are const ops tables
 * listed once, NULL-terminated, in display order (HASS first, then the
 * baselines); `scheduler = NAME` in [run] and `schedulers = ...` in [compare]
 * are looked up here by exact name. Adding a policy is one file plus one line.
 */
#include <string.h>

#include "sched.h"

extern const struct hf_sched_ops hf_sched_hass;
extern const struct hf_sched_ops hf_sched_greedy;
extern const struct hf_sched_ops hf_sched_minmin;
extern const struct hf_sched_ops hf_sched_qilin;
extern const struct hf_sched_ops hf_sched_static;

const struct hf_sched_ops *const hf_schedulers[] = {
    &hf_sched_hass, &hf_sched_greedy, &hf_sched_minmin, &hf_sched_qilin, &hf_sched_static, NULL,
};

const struct hf_sched_ops *hf_sched_find(const char *name)
{
    if (!name)
        return NULL;
    for (int i = 0; hf_schedulers[i]; i++)
        if (strcmp(hf_schedulers[i]->name, name) == 0)
            return hf_schedulers[i];
    return NULL;
}
