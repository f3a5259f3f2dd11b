/* help.c - the text of `hetfarm --help` and `hetfarm COMMAND --help`.
 *
 * DESIGN
 * ------
 * The lists of apps and schedulers come from their registries, and the config
 * keys from the tables the validation uses (plan.c's hf__cli_rules), so a new
 * app, scheduler or key shows up in `--help` without touching the CLI. The options
 * shared by run, compare and profile are written once.
 */
#include "cli.h"

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
    fprintf(f, "  %-10s %s\n", "starpu:P", "StarPU 1.3's policy P (eager, ws, dmda, ...) through "
                                           "StarPU, one task per chunk (builds with StarPU)");
}

/* Every config key, from the same tables the validation checks against. */
static void list_keys(FILE *f)
{
    struct hf_config_rules rules[64];
    size_t n = hf__cli_rules(NULL, rules, 64);
    fprintf(f, "\nconfig keys (INI; an unknown section or key is an error):\n");
    hf_config_keys_help(f, rules, n);
}

static const char common_opts[] =
    "  -o FILE            write results JSON to FILE (default ./results.json)\n"
    "  --trace FILE       also write a Chrome trace-event JSON (open in Perfetto)\n"
    "  --engine real|sim  override [run] engine (and [compare] engines)\n"
    "  --rounds N         override [run] rounds\n"
    "  --seed N           override [run] seed\n"
    "  --profiles DIR     profile store (default ./profiles)\n"
    "  -h, --help         this help\n";

void hf__cli_usage(FILE *f)
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

void hf__cli_help(FILE *f, enum hf__cmd c)
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
                   "apps:\n",
                common_opts);
        list_apps(f);
        fprintf(f, "\nschedulers:\n");
        list_schedulers(f);
        list_keys(f);
        break;
    case CMD_COMPARE:
        fprintf(f, "usage: hetfarm compare CONFIG [OPTIONS]\n\n"
                   "Runs every scheduler of [compare] schedulers (default: all) on the same loads\n"
                   "and seed, once per engine of [compare] engines (default: [run] engine),\n"
                   "prints one table row per run and writes all runs to the results JSON.\n"
                   "[compare] passes = P runs the list P times in varied orders (on real\n"
                   "devices a run's place in the list counts): over n passes of n schedulers\n"
                   "(2n for odd n) each runs once in every place and after every other one\n"
                   "equally often; pass p has seed + p - 1. The table then adds each\n"
                   "scheduler's mean makespan from round 2 over its passes.\n\n"
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
