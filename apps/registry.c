/* registry.c - looking apps up by name.
 *
 * DESIGN
 * ------
 * Adding an app directory is enough to register it: the Makefile scans apps/
 * for directories apps/NAME/ holding NAME.c and generates $(BUILD)/apps_registry.c,
 * which declares each `const struct hf_app hf_app_NAME` and lists them in the
 * NULL-terminated hf_apps[] (sorted by name). This file holds only the lookup, so
 * the generated file stays a plain list with no logic to review.
 */
#include <string.h>

#include "hetfarm.h"

/* Returns the registered app called `name`, or NULL (the caller names it). */
const struct hf_app *hf_app_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (const struct hf_app *const *a = hf_apps; *a; a++)
        if (strcmp((*a)->name, name) == 0)
            return *a;
    return NULL;
}
