/* plan.c - from the config and the options to the runs to make.
 *
 * DESIGN
 * ------
 * [run] names the app, the scheduler, the engine and the numbers of a run;
 * [compare] lists the schedulers and engines of a comparison. Command-line
 * options win over both, but the keys are still read, so that they are
 * validated and marked used. Keys nobody read are errors (a misspelt
 * "rouds = 3" would otherwise silently run 10 rounds): [run] and [compare]
 * belong to the CLI and are checked before running; [load] and [devices] are
 * read by the app and the engine, so they are checked once the runs are done.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/engine_starpu.h"
#include "device.h"

/* The keys of [run] and [compare], one line each (hetfarm.h): the validation
 * and `hetfarm run --help` read this table. */
static const struct hf_config_key run_keys[] = {
    {"run", "app", HF_KEY_STR, 0, 0, 0, NULL, NULL, "the app to run (apps below)"},
    {"run", "scheduler", HF_KEY_STR, 0, 0, 0, NULL, "hass", "the scheduler (schedulers below)"},
    {"run", "rounds", HF_KEY_INT, 1, HF_CLI_MAX_ROUNDS, 0, NULL, "10; apps that end: their end",
     "loads to run, one per round (at most; an app that ends by itself stops there)"},
    {"run", "engine", HF_KEY_STR, 0, 0, 0, NULL, "real", "real | sim: devices or simulator"},
    {"run", "seed", HF_KEY_INT, 0, 9.2233720368547748e18, 0, NULL, "1",
     "seed of loads and simulated noise"},
    {"run", "grain", HF_KEY_SIZE, 1, 281474976710656.0, 0, NULL, "the app's",
     "units per chunk"},
    {"run", "verify", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "check every round with the reference"},
    {"run", "execute", HF_KEY_BOOL, 0, 0, 0, NULL, "no", "sim: also run every bundle on the CPU"},
    {"run", "devices_fixed", HF_KEY_BOOL, 0, 0, 0, NULL, "no",
     "every round on every device: no device set is left out when it would be faster"},
    {"run", "progress", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "the progress line on a terminal"},
    {"run", "node_timeout", HF_KEY_NUM, 0, 1e9, HF_KEY_MIN_OPEN, NULL, "600",
     "mpirun: seconds a rank may stay silent before the run ends"},
    {"compare", "schedulers", HF_KEY_LIST, 0, 0, 0, NULL, "all", "the schedulers to compare"},
    {"compare", "engines", HF_KEY_LIST, 0, 0, 0, NULL, "[run] engine",
     "the engines to compare on: real, sim"},
    {"compare", "passes", HF_KEY_INT, 1, 1000, 0, NULL, "1",
     "runs of the list, each in another order (every position, every predecessor), "
     "pass p with seed + p - 1"},
    {"compare", "warmup", HF_KEY_BOOL, 0, 0, 0, NULL, "yes",
     "real devices: one untimed load under static before the first timed run, so that "
     "every scheduler finds them warm and the same files"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

size_t hf__cli_rules(const struct hf_app *app, struct hf_config_rules *rules, size_t cap)
{
    size_t n = 0;
    if (n < cap)
        rules[n++] = (struct hf_config_rules){NULL, run_keys, NULL};
    if (n < cap)
        rules[n++] = (struct hf_config_rules){NULL, hf_device_keys, NULL};
    for (const struct hf_app *const *a = hf_apps; *a && n < cap; a++)
        if (!app || *a == app)
            rules[n++] = (struct hf_config_rules){"load", (*a)->keys, (*a)->name};
    for (const struct hf_sched_ops *const *s = hf_schedulers; *s && n < cap; s++)
        rules[n++] = (struct hf_config_rules){(*s)->name, (*s)->keys, NULL};
    return n;
}

/* Maps an engine name to its kind; -1 when unknown. */
static int engine_kind(const char *name, enum hf_engine_kind *out)
{
    if (strcmp(name, "real") == 0)
        *out = HF_ENGINE_REAL;
    else if (strcmp(name, "sim") == 0)
        *out = HF_ENGINE_SIM;
    else
        return -1;
    return 0;
}

/* Frees what hf_config_list returned (NULL-terminated; NULL is fine). */
static void free_list(char **list)
{
    for (char **i = list; i && *i; i++)
        free(*i);
    free(list);
}

/* The app. A missing app is a usage error like an unknown one: the user has
 * to pick one, so the message lists them. */
static int read_app(hf_config_t cfg, struct hf_run_options *o)
{
    const char *s;
    hf_config_str(cfg, "run", "app", NULL, &s);
    if (!s || !s[0]) {
        fprintf(stderr, "hetfarm: %s: [run] app is missing; valid apps:", hf_config_path(cfg));
        for (const struct hf_app *const *a = hf_apps; *a; a++)
            fprintf(stderr, " %s", (*a)->name);
        fputc('\n', stderr);
        return EXIT_USAGE;
    }
    if (!(o->app = hf_app_find(s)))
        return hf__cli_unknown(hf_config_where(cfg, "run", "app"), "app", s);
    return 0;
}

/* Numbers and switches of [run]; CLI options win. */
static int read_numbers(const struct hf__cli *c, hf_config_t cfg, struct hf_run_options *o)
{
    long l;
    int b, rc;
    size_t grain;
    /* An app with an end of its own (a search, a partition) runs to it: a
     * default cap would stop it part way, and the user would have to guess
     * how many rounds its graph needs. */
    long def = o->app && o->app->stopped ? HF_CLI_MAX_ROUNDS : 10;
    if ((rc = hf_config_long(cfg, "run", "rounds", def, 1, HF_CLI_MAX_ROUNDS, &l)))
        return hf__cli_fail(rc);
    o->rounds = (int)(c->rounds > 0 ? c->rounds : l);
    if ((rc = hf_config_long(cfg, "run", "seed", 1, 0, __LONG_MAX__, &l)))
        return hf__cli_fail(rc);
    o->seed = (uint64_t)(c->seed >= 0 ? c->seed : l);
    if ((rc = hf_config_size(cfg, "run", "grain", 0, 1, (size_t)1 << 48, &grain)))
        return hf__cli_fail(rc);
    o->grain = grain;
    if ((rc = hf_config_bool(cfg, "run", "verify", 1, &b)))
        return hf__cli_fail(rc);
    o->verify = b;
    if ((rc = hf_config_bool(cfg, "run", "execute", 0, &b)))
        return hf__cli_fail(rc);
    o->execute = b;
    /* Read by the planning schedulers (schedulers/device_set.c); checked here,
     * before anything runs, and so never unused when a run has none of them. */
    if ((rc = hf_config_bool(cfg, "run", "devices_fixed", 0, &b)))
        return hf__cli_fail(rc);
    if ((rc = hf_config_bool(cfg, "run", "progress", 1, &b)))
        return hf__cli_fail(rc);
    o->progress = b;
    o->profile_dir = c->profiles ? c->profiles : "profiles";
    double timeout;
    if ((rc = hf_config_double(cfg, "run", "node_timeout", 600, 0, 1e9, &timeout)))
        return hf__cli_fail(rc);
    if (timeout <= 0)
        return hf__cli_fail(hf_fail(HF_ECONFIG, "%s: node_timeout = %g: must be > 0 seconds",
                                    hf_config_where(cfg, "run", "node_timeout"), timeout));
    o->nodes = hf__cli_cluster(timeout);
    return 0;
}

/* Engines: --engine, else [compare] engines (compare only), else [run] engine. */
static int read_engines(const struct hf__cli *c, hf_config_t cfg, struct hf__plan *p)
{
    const char *run_engine;
    hf_config_str(cfg, "run", "engine", "real", &run_engine);
    char **list = NULL;
    int n = hf_config_list(cfg, "compare", "engines", &list);
    if (n < 0)
        return hf__cli_fail(n);
    int st = 0;
    p->nengines = 0;
    if (c->engine) {
        if (engine_kind(c->engine, &p->engines[0]))
            st = hf__cli_unknown("--engine", "engine", c->engine);
        p->nengines = 1;
    } else if (c->cmd == CMD_COMPARE && n > 0) {
        for (int i = 0; i < n && !st; i++) {
            enum hf_engine_kind k;
            if (engine_kind(list[i], &k)) {
                st = hf__cli_unknown(hf_config_where(cfg, "compare", "engines"), "engine",
                                     list[i]);
                break;
            }
            int dup = 0;
            for (int j = 0; j < p->nengines; j++)
                dup |= p->engines[j] == k;
            if (!dup)
                p->engines[p->nengines++] = k;
        }
    } else {
        if (engine_kind(run_engine, &p->engines[0]))
            st = hf__cli_unknown(hf_config_where(cfg, "run", "engine"), "engine", run_engine);
        p->nengines = 1;
    }
    free_list(list);
    return st;
}

/* A scheduler by name: hetfarm's own, or "starpu:POLICY" (core/engine_starpu.c).
 * NULL after printing why, with the exit status in *st. */
static const struct hf_sched_ops *find_sched(const char *where, const char *name, int *st)
{
    const struct hf_sched_ops *ops = hf_sched_find(name);
    if (!ops && strncmp(name, "starpu:", 7) == 0) {
        hf_clear_error();
        if (!(ops = hf__starpu_sched(name + 7))) {
            fprintf(stderr, "hetfarm: %s: %s\n", where, hf_last_error());
            *st = EXIT_USAGE;
        }
    } else if (!ops) {
        *st = hf__cli_unknown(where, "scheduler", name);
    }
    return ops;
}

/* Schedulers: run and profile use one, compare a list (default: all). Every
 * scheduler of a comparison runs with the same seed, so they see the same
 * loads and the same sim jitter. With [compare] passes = P the list runs P
 * times (runs.c): on real devices the order counts (the first of a compare
 * on one H200 host ran its identical GPU bundles 3-5% faster), so the
 * passes vary it (each scheduler in every position, after every other), and
 * pass p has seed + p - 1, so that passes on the sim engine are fresh draws. */
static int read_schedulers(const struct hf__cli *c, hf_config_t cfg, struct hf__plan *p)
{
    const char *sname;
    hf_config_str(cfg, "run", "scheduler", "hass", &sname);
    char **list = NULL;
    int n = hf_config_list(cfg, "compare", "schedulers", &list);
    if (n < 0)
        return hf__cli_fail(n);
    int st = 0;
    p->nsched = 0;
    if (c->cmd == CMD_COMPARE && n > 0) {
        for (int i = 0; i < n && !st; i++) {
            const struct hf_sched_ops *ops =
                find_sched(hf_config_where(cfg, "compare", "schedulers"), list[i], &st);
            if (ops && p->nsched < 64)
                p->sched[p->nsched++] = ops;
        }
    } else if (c->cmd == CMD_COMPARE) {
        for (const struct hf_sched_ops *const *s = hf_schedulers; *s && p->nsched < 64; s++)
            p->sched[p->nsched++] = *s;
    } else {
        const char *name = c->scheduler ? c->scheduler : sname;
        p->sched[0] = find_sched(c->scheduler ? "--scheduler"
                                              : hf_config_where(cfg, "run", "scheduler"),
                                 name, &st);
        p->nsched = 1;
    }
    free_list(list);
    if (st)
        return st;
    long passes;
    int rc = hf_config_long(cfg, "compare", "passes", 1, 1, 1000, &passes);
    p->passes = c->cmd == CMD_COMPARE ? (int)passes : 1;
    int warm = 1;
    if (rc == 0)
        rc = hf_config_bool(cfg, "compare", "warmup", 1, &warm);
    p->warmup = c->cmd == CMD_COMPARE && warm;
    return rc ? hf__cli_fail(rc) : 0;
}

int hf__cli_read_plan(const struct hf__cli *c, hf_config_t cfg, struct hf__plan *p)
{
    p->base.cfg = cfg;
    int st;
    if ((st = read_app(cfg, &p->base)))
        return st;
    /* Every section and key against the tables, before anything runs. */
    struct hf_config_rules rules[64];
    int rc = hf_config_validate(cfg, rules, hf__cli_rules(p->base.app, rules, 64));
    if (rc)
        return hf__cli_fail(rc);
    if ((st = read_numbers(c, cfg, &p->base)) ||
        (st = read_engines(c, cfg, p)) || (st = read_schedulers(c, cfg, p)))
        return st;
    /* Everything in [run] and [compare] is the CLI's: check before a long run. */
    static const char *const mine[] = {"run", "compare", NULL};
    rc = hf_config_check_unused(cfg, mine);
    return rc ? hf__cli_fail(rc) : 0;
}

/* The device keys of the engine that did not run are valid, so they are
 * marked read before the check. */
int hf__cli_check_after(hf_config_t cfg)
{
    static const char *const devkeys[] = {"cpu", "cpu_teams", "cuda", "sim", "nodes", NULL};
    for (const char *const *k = devkeys; *k; k++)
        hf_config_get(cfg, "devices", *k);
    static const char *const sections[] = {"run", "load", "devices", "compare", NULL};
    int rc = hf_config_check_unused(cfg, sections);
    return rc ? hf__cli_fail(rc) : 0;
}
