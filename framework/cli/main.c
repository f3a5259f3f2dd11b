/* main.c - the `hetfarm` command line: devices, run, compare, profile.
 *
 * DESIGN
 * ------
 * The CLI is a thin layer over hf_run(): it reads [run] and [compare] from the
 * config, lets command-line options override them, looks the app, the
 * engine(s) and the scheduler(s) up, runs, prints the table and writes
 * results.json (and a trace on request). Its rules are about failing well:
 *   - unknown names (app, scheduler, engine) and bad usage exit 2 with a
 *     message listing what is valid;
 *   - any other failure prints "hetfarm: <the detailed message>" and exits 1
 *     without writing a results file, so a stale or half-made results.json
 *     is never mistaken for this run's;
 *   - keys nobody read are errors (a misspelt "rouds = 3" would otherwise
 *     silently run 10 rounds). [run] and [compare] belong to the CLI and are
 *     checked before running; [load] and [devices] are read by the app and
 *     the engine, so they are checked once the runs are done.
 * OpenBLAS's core is fixed first of all (blas_env.c), since that may
 * re-execute the program.
 */
#include "blas_env.h"
#include "engine.h"
#include "report.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_USAGE 2

enum cmd { CMD_DEVICES, CMD_RUN, CMD_COMPARE, CMD_PROFILE, CMD_REPORT };

/* What the command line said; NULL / -1 fields fall back to the config. */
struct cli {
    enum cmd cmd;
    const char *cmdname;
    const char *config;
    const char *out;       /* -o */
    const char *trace;     /* --trace */
    const char *engine;    /* --engine */
    const char *scheduler; /* --scheduler */
    const char *profiles;  /* --profiles */
    long rounds;           /* --rounds, -1 = from the config */
    long long seed;        /* --seed, -1 = from the config */
};

static const char *const engine_names[] = {"real", "sim", NULL};

/* ------------------------------------------------------------------------ */
/* Help.                                                                      */

/* The help lists come from the registries, so a new app or scheduler shows
 * up in `--help` without touching the CLI. */
static void list_apps(FILE *f)
{
    for (const struct hf_app *const *a = hf_apps; *a; a++)
        fprintf(f, "  %-10s %s\n", (*a)->name, (*a)->summary ? (*a)->summary : "");
}

static void list_schedulers(FILE *f)
{
    for (const struct hf_sched_ops *const *s = hf_schedulers; *s; s++)
        fprintf(f, "  %-10s %s\n", (*s)->name, (*s)->summary ? (*s)->summary : "");
}

static const char common_opts[] =
    "  -o FILE            write results JSON to FILE (default ./results.json)\n"
    "  --trace FILE       also write a Chrome trace-event JSON (open in Perfetto)\n"
    "  --engine real|sim  override [run] engine (and [compare] engines)\n"
    "  --rounds N         override [run] rounds\n"
    "  --seed N           override [run] seed\n"
    "  --profiles DIR     profile store (default ./profiles)\n"
    "  -h, --help         this help\n";

static void usage(FILE *f)
{
    fprintf(f, "usage: hetfarm COMMAND [OPTIONS]\n\n"
               "hetfarm runs divisible workloads on the CPU and every GPU together, with a\n"
               "pluggable scheduler deciding who runs what.\n\n"
               "commands:\n"
               "  devices            what hwloc and CUDA see: CPU, cores, NUMA nodes, GPUs\n"
               "  run CONFIG         run [run] app under one scheduler; table + results.json\n"
               "  compare CONFIG     run every scheduler of [compare] on the same loads\n"
               "  profile CONFIG     measure and save every device's standalone rate\n"
               "  report RESULTS     draw a results.json as one self-contained HTML page\n"
               "  help [COMMAND]     help on a command\n\n"
               "`hetfarm COMMAND --help` describes a command's options.\n");
}

static void help_cmd(FILE *f, enum cmd c)
{
    switch (c) {
    case CMD_DEVICES:
        fprintf(f, "usage: hetfarm devices\n\n"
                   "Prints the CPU model, physical cores, NUMA nodes (with memory), the GPUs\n"
                   "CUDA sees and the OpenBLAS kernel in use.\n");
        break;
    case CMD_RUN:
        fprintf(f, "usage: hetfarm run CONFIG [OPTIONS]\n\n"
                   "Runs [run] app for [run] rounds loads under one scheduler, prints a table\n"
                   "and the per-round split, and writes results JSON.\n\n"
                   "options:\n  --scheduler NAME   override [run] scheduler (default hass)\n%s\n"
                   "[run] keys: app, scheduler, rounds (10), engine (real|sim), seed (1),\n"
                   "  grain (units per chunk), verify (yes), execute (sim only, no), progress (yes)\n\n"
                   "apps:\n",
                common_opts);
        list_apps(f);
        fprintf(f, "\nschedulers:\n");
        list_schedulers(f);
        break;
    case CMD_COMPARE:
        fprintf(f, "usage: hetfarm compare CONFIG [OPTIONS]\n\n"
                   "Runs every scheduler of [compare] schedulers (default: all) on the same loads\n"
                   "and seed, once per engine of [compare] engines (default: [run] engine),\n"
                   "prints one table row per run and writes all runs to the results JSON.\n\n"
                   "options:\n%s\nschedulers:\n",
                common_opts);
        list_schedulers(f);
        break;
    case CMD_REPORT:
        fprintf(f, "usage: hetfarm report RESULTS.json [-o FILE]\n\n"
                   "Writes one self-contained HTML file (inline SVG, nothing fetched): summary\n"
                   "table, Gantt chart per run, work share per round, makespan vs ideal and\n"
                   "efficiency per round, machine and config. Default FILE: report.html next\n"
                   "to RESULTS.json (`hetfarm compare` writes it there too).\n");
        break;
    case CMD_PROFILE:
        fprintf(f, "usage: hetfarm profile CONFIG [OPTIONS]\n\n"
                   "Measures every device's standalone rate for [run] app and its load (the\n"
                   "whole load on that device alone), saves it under the profile store and\n"
                   "prints it. Writes results JSON only with -o.\n\noptions:\n%s",
                common_opts);
        break;
    }
}

/* ------------------------------------------------------------------------ */
/* Failing.                                                                   */

/* Prints the detailed message of the last failure (or the code's text). */
static int fail(int rc)
{
    const char *msg = hf_last_error();
    fprintf(stderr, "hetfarm: %s\n", msg[0] ? msg : hf_strerror(rc));
    return 1;
}

/* An unknown name is a usage error (exit 2): list what would have worked, so
 * that the fix is in the message. */
static int unknown(const char *where, const char *what, const char *name)
{
    fprintf(stderr, "hetfarm: %s: unknown %s '%s'; valid %ss:", where, what, name, what);
    if (strcmp(what, "app") == 0)
        for (const struct hf_app *const *a = hf_apps; *a; a++)
            fprintf(stderr, " %s", (*a)->name);
    else if (strcmp(what, "scheduler") == 0)
        for (const struct hf_sched_ops *const *s = hf_schedulers; *s; s++)
            fprintf(stderr, " %s", (*s)->name);
    else
        for (const char *const *e = engine_names; *e; e++)
            fprintf(stderr, " %s", *e);
    fputc('\n', stderr);
    return EXIT_USAGE;
}

/* ------------------------------------------------------------------------ */
/* Options.                                                                   */

/* Strict integer parsing for options: "--rounds 3x" is an error, not 3. */
static int parse_num(const char *opt, const char *s, long long min, long long max,
                     long long *out)
{
    char *end;
    long long v = strtoll(s, &end, 0);
    if (*s == '\0' || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "hetfarm: %s %s: expected an integer in [%lld, %lld]\n", opt, s, min,
                max);
        return -1;
    }
    *out = v;
    return 0;
}

/* Parses the options after the command; returns 0, 1 for --help, or -1. */
static int parse_opts(struct cli *c, int argc, char **argv)
{
    enum { O_TRACE = 256, O_ENGINE, O_SCHED, O_ROUNDS, O_SEED, O_PROFILES };
    static const struct option longopts[] = {
        {"help", no_argument, NULL, 'h'},
        {"trace", required_argument, NULL, O_TRACE},
        {"engine", required_argument, NULL, O_ENGINE},
        {"scheduler", required_argument, NULL, O_SCHED},
        {"rounds", required_argument, NULL, O_ROUNDS},
        {"seed", required_argument, NULL, O_SEED},
        {"profiles", required_argument, NULL, O_PROFILES},
        {"output", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0},
    };
    long long v;
    int o;
    /* Our own messages (opterr = 0) name the command; GNU getopt permutes, so
     * options may come before or after CONFIG. */
    opterr = 0;
    optind = 1;
    while ((o = getopt_long(argc, argv, ":ho:", longopts, NULL)) != -1) {
        switch (o) {
        case 'h':
            return 1;
        case 'o':
            c->out = optarg;
            break;
        case O_TRACE:
            c->trace = optarg;
            break;
        case O_ENGINE:
            c->engine = optarg;
            break;
        case O_SCHED:
            c->scheduler = optarg;
            break;
        case O_PROFILES:
            c->profiles = optarg;
            break;
        case O_ROUNDS:
            if (parse_num("--rounds", optarg, 1, 1000000, &v))
                return -1;
            c->rounds = (long)v;
            break;
        case O_SEED:
            if (parse_num("--seed", optarg, 0, (long long)(~0ULL >> 1), &v))
                return -1;
            c->seed = v;
            break;
        case ':':
            fprintf(stderr, "hetfarm %s: option %s needs a value\n", c->cmdname,
                    argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "hetfarm %s: unknown option %s (see hetfarm %s --help)\n",
                    c->cmdname, argv[optind - 1], c->cmdname);
            return -1;
        }
    }
    int npos = argc - optind;
    int want = c->cmd == CMD_DEVICES ? 0 : 1;
    if (npos != want) {
        if (want)
            fprintf(stderr, "hetfarm %s: expects one %s file (see hetfarm %s --help)\n",
                    c->cmdname, c->cmd == CMD_REPORT ? "RESULTS" : "CONFIG", c->cmdname);
        else
            fprintf(stderr, "hetfarm %s: takes no arguments\n", c->cmdname);
        return -1;
    }
    if (want)
        c->config = argv[optind];
    if (c->scheduler && c->cmd == CMD_COMPARE) {
        fprintf(stderr, "hetfarm compare: --scheduler is for `run`; list schedulers in "
                        "[compare] schedulers\n");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Runs.                                                                      */

/* Everything the CLI resolved from the config and the options. */
struct plan {
    struct hf_run_options base;
    const struct hf_sched_ops *sched[64];
    int nsched;
    enum hf_engine_kind engines[2];
    int nengines;
};

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

/* Reads [run] and [compare] into `p`. Returns 0, or an exit status. */
static int read_plan(const struct cli *c, hf_config_t cfg, struct plan *p)
{
    struct hf_run_options *o = &p->base;
    const char *s;
    long l;
    int b, rc;
    o->cfg = cfg;

    /* The app. A missing app is a usage error like an unknown one: the user
     * has to pick one, so the message lists them. */
    hf_config_str(cfg, "run", "app", NULL, &s);
    if (!s || !s[0]) {
        fprintf(stderr, "hetfarm: %s: [run] app is missing; valid apps:", hf_config_path(cfg));
        for (const struct hf_app *const *a = hf_apps; *a; a++)
            fprintf(stderr, " %s", (*a)->name);
        fputc('\n', stderr);
        return EXIT_USAGE;
    }
    if (!(o->app = hf_app_find(s)))
        return unknown(hf_config_where(cfg, "run", "app"), "app", s);

    /* Numbers and switches; CLI options win but the keys are still read
     * (and so validated and marked used). */
    if ((rc = hf_config_long(cfg, "run", "rounds", 10, 1, 1000000, &l)))
        return fail(rc);
    o->rounds = (int)(c->rounds > 0 ? c->rounds : l);
    if ((rc = hf_config_long(cfg, "run", "seed", 1, 0, __LONG_MAX__, &l)))
        return fail(rc);
    o->seed = (uint64_t)(c->seed >= 0 ? c->seed : l);
    size_t grain;
    if ((rc = hf_config_size(cfg, "run", "grain", 0, 0, (size_t)1 << 48, &grain)))
        return fail(rc);
    o->grain = grain;
    if ((rc = hf_config_bool(cfg, "run", "verify", 1, &b)))
        return fail(rc);
    o->verify = b;
    if ((rc = hf_config_bool(cfg, "run", "execute", 0, &b)))
        return fail(rc);
    o->execute = b;
    if ((rc = hf_config_bool(cfg, "run", "progress", 1, &b)))
        return fail(rc);
    o->progress = b;
    o->profile_dir = c->profiles ? c->profiles : "profiles";

    /* Engines: --engine, else [compare] engines (compare only), else [run] engine. */
    const char *run_engine;
    hf_config_str(cfg, "run", "engine", "real", &run_engine);
    char **list = NULL;
    int n = hf_config_list(cfg, "compare", "engines", &list);
    if (n < 0)
        return fail(n);
    int st = 0;
    p->nengines = 0;
    if (c->engine) {
        if (engine_kind(c->engine, &p->engines[0]))
            st = unknown("--engine", "engine", c->engine);
        p->nengines = 1;
    } else if (c->cmd == CMD_COMPARE && n > 0) {
        for (int i = 0; i < n && !st; i++) {
            enum hf_engine_kind k;
            if (engine_kind(list[i], &k)) {
                st = unknown(hf_config_where(cfg, "compare", "engines"), "engine", list[i]);
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
            st = unknown(hf_config_where(cfg, "run", "engine"), "engine", run_engine);
        p->nengines = 1;
    }
    free_list(list);
    if (st)
        return st;

    /* Schedulers: run and profile use one, compare a list (default: all). Every
     * scheduler of a comparison runs with the same seed, so they see the same
     * loads and the same sim jitter. */
    const char *sname;
    hf_config_str(cfg, "run", "scheduler", "hass", &sname);
    n = hf_config_list(cfg, "compare", "schedulers", &list);
    if (n < 0)
        return fail(n);
    p->nsched = 0;
    if (c->cmd == CMD_COMPARE && n > 0) {
        for (int i = 0; i < n && !st; i++) {
            const struct hf_sched_ops *ops = hf_sched_find(list[i]);
            if (!ops)
                st = unknown(hf_config_where(cfg, "compare", "schedulers"), "scheduler", list[i]);
            else if (p->nsched < 64)
                p->sched[p->nsched++] = ops;
        }
    } else if (c->cmd == CMD_COMPARE) {
        for (const struct hf_sched_ops *const *s = hf_schedulers; *s && p->nsched < 64; s++)
            p->sched[p->nsched++] = *s;
    } else {
        const char *name = c->scheduler ? c->scheduler : sname;
        if (!(p->sched[0] = hf_sched_find(name)))
            st = unknown(c->scheduler ? "--scheduler" : hf_config_where(cfg, "run", "scheduler"),
                         "scheduler", name);
        p->nsched = 1;
    }
    free_list(list);
    if (st)
        return st;

    /* Everything in [run] and [compare] is the CLI's: check before a long run. */
    static const char *const mine[] = {"run", "compare", NULL};
    if ((rc = hf_config_check_unused(cfg, mine)))
        return fail(rc);
    return 0;
}

/* After the runs: keys of [load] and [devices] that neither the app nor the
 * engine read are misspelt (or meant for another app). The device keys of the
 * engine that did not run are valid, so they are marked read first. */
static int check_after(hf_config_t cfg)
{
    static const char *const devkeys[] = {"cpu", "cpu_teams", "cuda", "sim", NULL};
    for (const char *const *k = devkeys; *k; k++)
        hf_config_get(cfg, "devices", *k);
    static const char *const sections[] = {"run", "load", "devices", "compare", NULL};
    int rc = hf_config_check_unused(cfg, sections);
    return rc ? fail(rc) : 0;
}

/* `run` shows the split round by round: how the scheduler converged is the
 * first thing one wants to see of a single run. */
static void print_rounds(const struct hf_run *r)
{
    printf("%-6s %12s %12s %6s", "round", "makespan_s", "ideal_s", "eff");
    for (int d = 0; d < r->ndevices; d++)
        printf(" %12.12s", r->devs[d].name);
    printf("   (share of the work)\n");
    for (int i = 0; i < r->nrounds; i++) {
        const struct hf_round_stats *rs = &r->rounds[i];
        printf("%-6d %12.4g %12.4g %6.3f", rs->round, rs->makespan_s, rs->ideal_s,
               rs->efficiency);
        for (int d = 0; d < r->ndevices && rs->dev; d++)
            printf(" %12.3f", rs->dev[d].share);
        putchar('\n');
    }
    putchar('\n');
}

/* `profile` prints the rates it measured and checks them against the store
 * it just saved, so "(not saved)" would reveal an engine that did not save. */
static void print_profile(const struct cli *c, const struct hf_run *r, const char *dir)
{
    hf_profile_t p = NULL;
    int have = hf_profile_open(&p, dir, r->app, r->signature) == 0;
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
    (void)c;
}

/* run, compare and profile: one hf_run per (engine, scheduler); the first
 * failure stops everything and nothing is written. */
static int cmd_run(const struct cli *c)
{
    hf_config_t cfg = NULL;
    int rc = hf_config_load(&cfg, c->config);
    if (rc)
        return fail(rc);
    struct plan p;
    memset(&p, 0, sizeof p);
    int st = read_plan(c, cfg, &p);
    if (st) {
        hf_config_destroy(cfg);
        return st;
    }
    /* Profiling measures the standalone rates (before round 0); one round
     * is the least hf_run does, and reprofile ignores rates already stored. */
    if (c->cmd == CMD_PROFILE) {
        p.base.rounds = 1;
        p.base.reprofile = 1;
    }

    int nruns = 0, cap = p.nengines * p.nsched;
    struct hf_run **runs = calloc((size_t)cap, sizeof *runs);
    if (!runs) {
        hf_config_destroy(cfg);
        return fail(HF_ENOMEM);
    }
    for (int e = 0; e < p.nengines && !st; e++) {
        for (int s = 0; s < p.nsched && !st; s++) {
            struct hf_run_options o = p.base;
            o.engine = p.engines[e];
            o.sched = p.sched[s];
            hf_clear_error();
            if ((rc = hf_run(&o, &runs[nruns])) != 0 || !runs[nruns])
                st = fail(rc ? rc : HF_EINVAL);
            else
                nruns++;
        }
    }
    if (!st)
        st = check_after(cfg);

    if (!st) {
        if (c->cmd == CMD_RUN)
            print_rounds(runs[0]);
        if (c->cmd == CMD_PROFILE)
            print_profile(c, runs[0], p.base.profile_dir);
        else
            hf_results_table(stdout, runs, nruns);
        fflush(stdout);
        /* Results go out only when everything succeeded; the trace is written
         * after them, and if it fails the results are removed again so that
         * a failed command leaves no output at all. */
        const char *out = c->out ? c->out : (c->cmd == CMD_PROFILE ? NULL : "results.json");
        hf_clear_error();
        if (out && (rc = hf_results_write(out, runs, nruns, cfg)) != 0)
            st = fail(rc);
        else if (out)
            printf("results: %s\n", out);
        if (!st && out && c->cmd == CMD_COMPARE) {
            /* The report is derived from the results just written; if it
             * fails, results.json stays (`hetfarm report` can redo it). */
            char html[4096];
            hf_clear_error();
            if ((rc = hf_report_default_path(out, html, sizeof html)) != 0 ||
                (rc = hf_report_write(out, html)) != 0)
                st = fail(rc);
            else
                printf("report: %s\n", html);
        }
        if (!st && c->trace) {
            if ((rc = hf_trace_write(c->trace, runs, nruns)) != 0) {
                st = fail(rc);
                if (out)
                    unlink(out); /* all or nothing */
            } else {
                printf("trace: %s\n", c->trace);
            }
        }
    }
    for (int i = 0; i < nruns; i++)
        hf_run_free(runs[i]);
    free(runs);
    hf_config_destroy(cfg);
    return st;
}

/* `hetfarm report RESULTS [-o FILE]`: the HTML report of a results file,
 * by default report.html next to it. */
static int cmd_report(const struct cli *c)
{
    char def[4096];
    const char *out = c->out;
    int rc = 0;
    hf_clear_error();
    if (!out && (rc = hf_report_default_path(c->config, def, sizeof def)) == 0)
        out = def;
    if (!rc)
        rc = hf_report_write(c->config, out);
    if (rc)
        return fail(rc);
    printf("report: %s\n", out);
    return 0;
}

static int cmd_devices(void)
{
    hf_topo_describe(stdout);
    printf("BLAS:       %s\n", hf_blas_describe());
    return 0;
}

/* Dispatches `hetfarm COMMAND ...` and `hetfarm help COMMAND`. */
int main(int argc, char **argv)
{
    /* First of all: this may re-execute the program with OPENBLAS_CORETYPE. */
    hf_blas_select_core(argv);
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    static const struct {
        const char *name;
        enum cmd cmd;
    } cmds[] = {{"devices", CMD_DEVICES},
                {"run", CMD_RUN},
                {"compare", CMD_COMPARE},
                {"profile", CMD_PROFILE},
                {"report", CMD_REPORT}};
    int help = strcmp(name, "help") == 0;
    if (help) {
        if (argc == 2) {
            usage(stdout);
            return 0;
        }
        name = argv[2];
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        if (strcmp(name, cmds[i].name) != 0)
            continue;
        if (help) {
            help_cmd(stdout, cmds[i].cmd);
            return 0;
        }
        struct cli c = {.cmd = cmds[i].cmd, .cmdname = name, .rounds = -1, .seed = -1};
        int r = parse_opts(&c, argc - 1, argv + 1);
        if (r == 1) {
            help_cmd(stdout, c.cmd);
            return 0;
        }
        if (r < 0)
            return EXIT_USAGE;
        if (c.cmd == CMD_REPORT)
            return cmd_report(&c);
        return c.cmd == CMD_DEVICES ? cmd_devices() : cmd_run(&c);
    }
    fprintf(stderr, "hetfarm: unknown command '%s'\n\n", name);
    usage(stderr);
    return EXIT_USAGE;
}
