/* cmd_run.c - `hetfarm run CONFIG` and `hetfarm compare CONFIG`.
 *
 * DESIGN
 * ------
 * A thin layer over hf_run(): read the plan, make the runs, print the table
 * (and for `run` the split round by round: how the scheduler converged is the
 * first thing one wants to see of a single run), then write results.json, the
 * report (compare) and the trace on request. A run across nodes that failed
 * leaves results.partial.json instead (partial.c).
 */

#include "cli.h"
#include "report/report.h"

/* The per-round table of a single run: makespan, ideal, efficiency, shares
 * ("-": the device was left out of the round's device set). */
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
        for (int d = 0; d < r->ndevices && rs->dev; d++) {
            if (rs->has_set && rs->set.use && !rs->set.use[d])
                printf(" %12s", "-"); /* left out of the round's device set */
            else
                printf(" %12.3f", rs->dev[d].share);
        }
        putchar('\n');
    }
    putchar('\n');
    if (!r->ninner)
        return;
    /* A run across nodes: how each node split its part over its own devices. */
    printf("%-6s", "round");
    for (int k = 0; k < r->ninner; k++)
        printf(" %14.14s", r->inner[k].name);
    printf("   (share of the node's work)\n");
    for (int i = 0; i < r->nrounds; i++) {
        printf("%-6d", r->rounds[i].round);
        for (int k = 0; k < r->ninner && r->rounds[i].inner; k++)
            printf(" %14.3f", r->rounds[i].inner[k].share);
        putchar('\n');
    }
    putchar('\n');
}

/* The apps' own figures (a BFS's GTEPS), one line per run that has any. */
static void print_figures(struct hf_run **runs, int nruns)
{
    for (int i = 0; i < nruns; i++) {
        if (!runs[i]->nfigures)
            continue;
        printf("%s %s:", runs[i]->scheduler, runs[i]->app);
        for (int k = 0; k < runs[i]->nfigures; k++)
            printf(" %s=%.4g%s%s", runs[i]->figures[k].name, runs[i]->figures[k].value,
                   runs[i]->figures[k].unit[0] ? " " : "", runs[i]->figures[k].unit);
        putchar('\n');
    }
}

/* One line on stderr for every run that [run] rounds stopped before its app
 * reached its end (struct hf_run.stop); returns HF_EXIT_UNFINISHED when some
 * run's app left no output for it, else 0. */
static int report_stops(struct hf_run **runs, int nruns, const struct hf_run_options *o)
{
    int st = 0;
    for (int i = 0; i < nruns; i++) {
        const struct hf_run *r = runs[i];
        if (r->stop == HF_STOP_NONE)
            continue;
        int none = r->stop == HF_STOP_NO_RESULT;
        char what[160];
        if (none)
            snprintf(what, sizeof what, "no output written (exit %d): raise [run] rounds, or "
                                        "leave it out to run to the end", HF_EXIT_UNFINISHED);
        else
            snprintf(what, sizeof what, "the output is written, not converged (results.json: "
                                        "converged = false)");
        fprintf(stderr,
                "hetfarm: %s: %s[run] rounds = %d stopped it under %s after %d round%s, before "
                "its end (left: %s); %s\n",
                r->app, none ? "" : "warning: ", o->rounds, r->scheduler, r->nrounds,
                r->nrounds == 1 ? "" : "s", r->left, what);
        if (none)
            st = HF_EXIT_UNFINISHED;
    }
    return st;
}

int hf__cmd_run(const struct hf__cli *c)
{
    hf_config_t cfg = NULL;
    struct hf__plan p;
    struct hf_run **runs = NULL;
    int nruns = 0;
    struct hf__cli_failure failed = {0};
    int st = hf__cli_make_runs(c, &cfg, &p, &runs, &nruns, &failed);
    const char *out = c->out ? c->out : "results.json";
    if (!st && hf__cli_rank() == 0) { /* the other ranks of mpirun served rank 0 */
        if (c->cmd == CMD_RUN)
            print_rounds(runs[0]);
        hf_results_table(stdout, runs, nruns);
        print_figures(runs, nruns);
        fflush(stdout);
        st = hf__cli_write_outputs(c, out, runs, nruns, cfg);
        int stop = report_stops(runs, nruns, &p.base);
        st = st ? st : stop;
    } else if (st && failed.keep) { /* a run across nodes failed: keep what finished */
        hf__cli_write_partial(out, runs, nruns, &failed, cfg);
    }
    hf_run_free(failed.partial);
    hf__cli_free_runs(runs, nruns);
    hf_config_destroy(cfg);
    return st;
}
