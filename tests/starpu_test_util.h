/* starpu_test_util.h - what the StarPU engine's tests share (include after
 * <cmocka.h>): a temporary folder with the strsearch files' paths, StarPU's
 * home in it, and a run of one starpu:POLICY row on INI text. */
#ifndef HF_STARPU_TEST_UTIL_H
#define HF_STARPU_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "test_files.h"

#include "core/engine.h"
#include "core/engine_starpu.h"

static char dir[256], text_path[300], pat_path[300], out_path[300];

/* Makes the folder /tmp/NAME.XXXXXX (dir) and the paths in it; StarPU's bus
 * and task models start empty there. 0, or -1 when mkdtemp fails. */
static int sp_open(const char *name)
{
    snprintf(dir, sizeof dir, "/tmp/%s.XXXXXX", name);
    if (!mkdtemp(dir))
        return -1;
    snprintf(text_path, sizeof text_path, "%s/text", dir);
    snprintf(pat_path, sizeof pat_path, "%s/patterns", dir);
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    setenv("STARPU_HOME", dir, 1);
    return 0;
}

/* Runs starpu:`policy` on INI text ([run] app, default noop) with `engine`
 * for `rounds` rounds, verify on; returns hf_run's code and the run in *out
 * (the message of a failure is printed). */
static int run_ini(const char *policy, const char *ini, enum hf_engine_kind engine, int rounds,
                   size_t grain, struct hf_run **out)
{
    hf_config_t cfg;
    assert_int_equal(hf_config_parse(&cfg, "starpu.ini", ini), 0);
    const char *app = NULL;
    assert_int_equal(hf_config_str(cfg, "run", "app", "noop", &app), 0);
    hf_clear_error();
    const struct hf_sched_ops *ops = hf__starpu_sched(policy);
    assert_non_null(ops);
    struct hf_run_options o = {.app = hf_app_find(app),
                               .sched = ops,
                               .cfg = cfg,
                               .engine = engine,
                               .rounds = rounds,
                               .seed = 1,
                               .grain = grain,
                               .verify = 1};
    assert_non_null(o.app);
    hf_clear_error();
    *out = NULL;
    int rc = hf_run(&o, out);
    if (rc)
        print_message("# starpu:%s on %s: %s: %s\n", policy, app, hf_strerror(rc),
                      hf_last_error());
    hf_config_destroy(cfg);
    return rc;
}

#endif
