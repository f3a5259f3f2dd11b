/* partial.c - what a run across nodes that failed leaves: results.partial.json.
 *
 * DESIGN
 * ------
 * A rank that hangs or dies ends a run across nodes (core/nodes.c,
 * cluster.c), and no results.json is written: results.json means "this run,
 * complete". The rounds that did finish are still worth having (a long run
 * that lost a node in round 90), so rank 0 writes them to a file of another
 * name beside where results.json would have gone, "results.partial.json" for
 * "results.json" ("out/r.json" -> "out/r.partial.json"): the runs of the
 * plan that finished, then the rounds the failed run finished, and a
 * top-level "failed" object naming the run, the rank it waited for (null
 * when it cannot tell: a rank that died is seen by mpirun, which names it
 * and ends the job with SIGTERM, then "signal" is 15) and the message. It is
 * written atomically, like results.json (io/files.c through report/).
 *
 * A user who finds a results.json beside it may take it for this run's, but
 * it is an earlier run's work, and hetfarm loses nothing it did not write in
 * this run: a failed run leaves a results.json an earlier run left at its
 * path, and a run that succeeds leaves an earlier failure's partial file
 * beside its results; the command says on stderr which file is an earlier
 * run's. (Each file names its run: config, machine, and "failed" in the
 * partial one.)
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "report/report.h"

int hf__cli_partial_path(const char *out, char *buf, size_t size)
{
    size_t n = strlen(out);
    int stem = n > 5 && strcmp(out + n - 5, ".json") == 0 ? (int)(n - 5) : (int)n;
    int w = snprintf(buf, size, "%.*s.partial.json", stem, out);
    if (w < 0 || (size_t)w >= size)
        return hf_fail(HF_EINVAL, "%s: path too long for the partial results beside it", out);
    return 0;
}

/* Says that `path`, when it is there, is an earlier run's; `what` names it. */
static void note_earlier(const char *path, const char *what)
{
    if (access(path, F_OK) == 0)
        fprintf(stderr, "hetfarm: note: %s is %s, left as it was\n", path, what);
}

int hf__cli_write_partial(const char *out, struct hf_run **runs, int nruns,
                          const struct hf__cli_failure *f, hf_config_t cfg)
{
    char path[4096];
    hf_clear_error();
    int rc = hf__cli_partial_path(out, path, sizeof path);
    if (rc)
        return hf__cli_fail(rc);
    note_earlier(out, "an earlier run's results (this run failed and wrote none)");
    struct hf_run **all = calloc((size_t)nruns + 1, sizeof *all);
    if (!all)
        return hf__cli_fail(hf_fail(HF_ENOMEM, "out of memory writing %s", path));
    memcpy(all, runs, (size_t)nruns * sizeof *all);
    int n = nruns;
    if (f->partial)
        all[n++] = f->partial;
    const struct hf_results_failure why = {
        .scheduler = f->scheduler, .engine = f->engine, .rank = f->rank, .signal = f->signal,
        .message = f->message, .rounds_completed = f->partial ? f->partial->nrounds : 0,
    };
    rc = hf_results_write_partial(path, all, n, cfg, &why);
    free(all);
    if (rc)
        return hf__cli_fail(rc);
    fprintf(stderr, "hetfarm: %s (%s) failed after %d finished round(s); what finished is in %s, "
                    "no %s was written\n",
            f->scheduler, f->engine, why.rounds_completed, path, out);
    return 0;
}

void hf__cli_drop_stale_partial(const char *out)
{
    char path[4096];
    if (hf__cli_partial_path(out, path, sizeof path) == 0)
        note_earlier(path, "an earlier failed run's partial results, not this run's");
}
