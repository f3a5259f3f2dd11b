/* runs.c - making the runs of a plan and writing what they produced.
 *
 * DESIGN
 * ------
 * One hf_run per (engine, pass, scheduler): pass p (of [compare] passes)
 * runs the list in the order of row p of a Williams design, with seed + p - 1
 * (plan.c says why), and the runs are numbered with it. Over n passes of n
 * schedulers (2n when n is odd) each scheduler runs once in every position
 * and right after every other one equally often: a plain rotation kept each
 * one's predecessor, so whatever a run leaves behind (a CPU-heavy static
 * split's heat, caches, clocks) always fell on the same next scheduler.
 *
 * On real devices the runs of a comparison would not start alike: the first
 * found the devices cold (clocks, caches, the GPU's first launches), measured
 * the standalone rates the later ones read from the profile, and left its
 * learned chunk costs to the next one. So before the first timed run of the
 * real engine one untimed warm-up load runs ([compare] warmup, on by
 * default), under `static`, which saves nothing of its own in the profile:
 * it measures the rates if the profile lacks them, warms every device, and
 * leaves the chunk costs every timed run then starts from (the timed runs
 * read that file and write none back). It is in no row and no results.json.
 * Afterwards every real run's bound_s is the measured split pooled over all
 * the runs of the comparison (core/measured_bound.c): one yardstick per
 * round, whatever the order.
 *
 * The first failure stops everything and
 * no results.json is written, so a stale or half-made results.json is never
 * mistaken for this run's (a run across nodes that fails leaves what it
 * finished in results.partial.json instead: partial.c). Results go out only
 * when every run succeeded; the report (compare) is derived from the results
 * just written; the trace comes last, and if it fails the results are
 * removed again: all or nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "report/report.h"

/* Notes what a run across nodes that failed leaves (struct hf__cli_failure):
 * the run, the rank its transport waited for, the signal, the message. */
static void note_failure(struct hf__cli_failure *f, const struct hf_run_options *o)
{
    f->keep = 1;
    snprintf(f->scheduler, sizeof f->scheduler, "%s", o->sched->name);
    snprintf(f->engine, sizeof f->engine, "%s", o->engine == HF_ENGINE_REAL ? "real" : "sim");
    f->rank = hf__cli_cluster_failed_rank();
    f->signal = hf_run_interrupted();
    snprintf(f->message, sizeof f->message, "%s", hf_last_error());
}

/* Row 0 of a Williams design over n: 0, 1, n-1, 2, n-2, ... */
static int williams_row0(int n, int k)
{
    return k == 0 ? 0 : k % 2 ? (k + 1) / 2 : n - k / 2;
}

/* The scheduler at position k of pass `pass` over n: row `pass` of a
 * Williams design (row r adds r mod n to row 0; for odd n the next n rows
 * are those reversed), its schedulers renamed so that row 0 is the list's
 * own order (a single pass runs the list as written). */
static int pass_order(int n, int pass, int k)
{
    if (n % 2 && (pass / n) % 2)
        k = n - 1 - k;
    int t = (williams_row0(n, k) + pass) % n;
    for (int j = 0; j < n; j++)
        if (williams_row0(n, j) == t)
            return j;
    return t;
}

/* The warm-up load of engine `eng` (see DESIGN): one round under static,
 * seed as pass 1, its run discarded. Rank 0 says so on stderr; the other
 * ranks of mpirun serve it as they serve every run. 0 or an exit status. */
static int warm_up(const struct hf__plan *p, enum hf_engine_kind eng)
{
    struct hf_run_options o = p->base;
    o.engine = eng;
    o.rounds = 1;
    o.sched = hf_sched_find("static");
    HF_ASSERT_MSG(o.sched, "the static scheduler is registered");
    hf_clear_error();
    if (hf__cli_rank() > 0) {
        int rc = hf_run_serve(&o);
        return rc ? hf__cli_fail(rc) : 0;
    }
    fprintf(stderr, "hetfarm: warm-up: one untimed load under static on the real devices "
                    "before the first timed run (in no row)\n");
    struct hf_run *run = NULL;
    int rc = hf_run(&o, &run);
    hf_run_free(run);
    return rc ? hf__cli_fail(rc) : 0;
}

/* Pools the real runs' bounds (measured_bound.c); 0 or an exit status. */
static int pool_bounds(struct hf_run **runs, int nruns)
{
    struct hf_run **real = malloc((size_t)(nruns > 0 ? nruns : 1) * sizeof *real);
    if (!real)
        return hf__cli_fail(hf_fail(HF_ENOMEM, "out of memory pooling the bounds"));
    int n = 0;
    for (int i = 0; i < nruns; i++)
        if (strcmp(runs[i]->engine, "real") == 0)
            real[n++] = runs[i];
    int rc = hf_bound_measured(real, n);
    free(real);
    return rc ? hf__cli_fail(hf_fail(rc, "out of memory pooling the bounds")) : 0;
}

int hf__cli_run_plan(const struct hf__plan *p, hf_config_t cfg, struct hf_run ***runs,
                     int *nruns, struct hf__cli_failure *failed)
{
    *nruns = 0;
    int passes = p->passes > 1 ? p->passes : 1;
    if (!(*runs = calloc((size_t)p->nengines * (size_t)passes * (size_t)p->nsched, sizeof **runs)))
        return hf__cli_fail(HF_ENOMEM);
    int st = 0;
    for (int e = 0; e < p->nengines && !st; e++) {
        int warm = p->warmup && p->engines[e] == HF_ENGINE_REAL && passes * p->nsched > 1;
        if (warm && (st = warm_up(p, p->engines[e])))
            break;
        for (int i = 0; i < passes * p->nsched && !st; i++) {
            int pass = i / p->nsched, s = pass_order(p->nsched, pass, i % p->nsched);
            struct hf_run_options o = p->base;
            o.engine = p->engines[e];
            o.sched = p->sched[s];
            o.seed = p->base.seed + (uint64_t)pass;
            o.cost_read_only = warm;
            o.repay = passes * p->nsched == 1;
            hf_clear_error();
            /* A node of a run across nodes serves rank 0's real-engine runs
             * and records none (cluster.c). */
            if (hf__cli_rank() > 0) {
                int rc = o.engine == HF_ENGINE_REAL ? hf_run_serve(&o) : 0;
                if (rc)
                    st = hf__cli_fail(rc);
                continue;
            }
            /* A run across nodes that fails keeps what it finished (partial.c). */
            int across = failed && o.nodes && o.engine == HF_ENGINE_REAL && hf__cli_ranks() > 1;
            int rc = hf_run_keep_partial(&o, &(*runs)[*nruns], across ? &failed->partial : NULL);
            if (rc != 0 && across)
                note_failure(failed, &o);
            if (rc != 0 || !(*runs)[*nruns])
                st = hf__cli_fail(rc ? rc : HF_EINVAL);
            else
                (*runs)[(*nruns)++]->pass = passes > 1 ? pass + 1 : 0;
        }
    }
    if (!st && hf__cli_rank() == 0)
        st = pool_bounds(*runs, *nruns);
    return st ? st : hf__cli_check_after(cfg);
}

int hf__cli_write_outputs(const struct hf__cli *c, const char *out, struct hf_run **runs,
                          int nruns, hf_config_t cfg)
{
    int rc;
    hf_clear_error();
    if (out) {
        if ((rc = hf_results_write(out, runs, nruns, cfg)) != 0)
            return hf__cli_fail(rc);
        printf("results: %s\n", out);
        hf__cli_drop_stale_partial(out);
    }
    if (out && c->cmd == CMD_COMPARE) {
        /* If the report fails, results.json stays (`hetfarm report` can redo it). */
        char html[4096];
        hf_clear_error();
        if ((rc = hf_report_default_path(out, html, sizeof html)) != 0 ||
            (rc = hf_report_write(out, html)) != 0)
            return hf__cli_fail(rc);
        printf("report: %s\n", html);
    }
    if (c->trace) {
        if ((rc = hf_trace_write(c->trace, runs, nruns)) != 0) {
            if (out)
                unlink(out);
            return hf__cli_fail(rc);
        }
        printf("trace: %s\n", c->trace);
    }
    return 0;
}

int hf__cli_make_runs(const struct hf__cli *c, hf_config_t *cfg, struct hf__plan *p,
                      struct hf_run ***runs, int *nruns, struct hf__cli_failure *failed)
{
    memset(p, 0, sizeof *p);
    *runs = NULL;
    *nruns = 0;
    int rc = hf_config_load(cfg, c->config);
    if (rc)
        return hf__cli_fail(rc);
    int st = hf__cli_read_plan(c, *cfg, p);
    if (!st && c->cmd == CMD_PROFILE) {
        /* The standalone rates are measured before round 0: one round is the
         * least a run does, and reprofile ignores the rates already stored. */
        p->base.rounds = 1;
        p->base.reprofile = 1;
    }
    if (!st) {
        hf__cli_catch_signals();
        st = hf__cli_run_plan(p, *cfg, runs, nruns, failed);
    }
    /* An interrupt writes nothing, even when it came after the last round. */
    return hf__cli_exit_status(st);
}

void hf__cli_free_runs(struct hf_run **runs, int nruns)
{
    for (int i = 0; i < nruns; i++)
        hf_run_free(runs[i]);
    free(runs);
}
