/* cmd_profile.c - `hetfarm profile CONFIG`: measure and save every device's
 * standalone rate for the config's app and load.
 *
 * DESIGN
 * ------
 * The standalone rates are measured by every run before round 0, so profiling
 * is a one-round run that ignores the rates already stored (reprofile). The
 * command then reads the store it just saved back, so "(not saved)" would
 * reveal an engine that did not save. Results JSON is written only with -o.
 */
#include <string.h>

#include "cli.h"
#include "core/profile.h"

/* The store is keyed by the load's signature and the grain (core/run.c: a
 * device's rate depends on the chunk size), so the key is rebuilt the same
 * way to read back what the run saved. */
static void print_profile(const struct hf_run *r, const char *dir, size_t grain)
{
    hf_profile_t p = NULL;
    const struct hf_app *app = hf_app_find(r->app);
    char key[192];
    snprintf(key, sizeof key, "%s grain=%zu", r->signature,
             grain ? grain : app ? app->default_grain : 0);
    int have = hf_profile_open(&p, dir, r->app, key) == 0;
    int sim = strcmp(r->engine, "sim") == 0;
    printf("standalone rates for %s (%s)%s:\n", r->app, r->signature,
           sim ? " [SIMULATED: from the device models, not saved]" : "");
    for (int d = 0; d < r->ndevices; d++) {
        double saved = 0;
        int in = have && hf_profile_get(p, r->devs[d].name, "standalone_rate", &saved, 1) > 0;
        printf("  %-16s %12.4g work/s%s\n", r->devs[d].name,
               r->standalone_rate ? r->standalone_rate[d] : 0, in || sim ? "" : "  (not saved)");
    }
    if (have && !sim)
        printf("profile: %s\n", hf_profile_path(p));
    hf_profile_destroy(p);
}

int hf__cmd_profile(const struct hf__cli *c)
{
    hf_config_t cfg = NULL;
    struct hf__plan p;
    struct hf_run **runs = NULL;
    int nruns = 0;
    int st = hf__cli_make_runs(c, &cfg, &p, &runs, &nruns, NULL);
    if (!st && hf__cli_rank() == 0) { /* the other ranks of mpirun served rank 0 */
        print_profile(runs[0], p.base.profile_dir, p.base.grain);
        fflush(stdout);
        st = hf__cli_write_outputs(c, c->out, runs, nruns, cfg);
    }
    hf__cli_free_runs(runs, nruns);
    hf_config_destroy(cfg);
    return st;
}
