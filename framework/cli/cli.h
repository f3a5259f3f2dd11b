/* cli.h - what the files of the `hetfarm` command share: the parsed command
 * line, the plan resolved from the config, and the helpers that fail well.
 * Internal to framework/cli/.
 */
#ifndef HF_CLI_H
#define HF_CLI_H

#include <stdio.h>

#include "core/engine.h"

#define EXIT_USAGE 2
/* The most rounds a run may have ([run] rounds, --rounds), and the rounds of
 * an app with an end of its own when [run] rounds is not given. */
#define HF_CLI_MAX_ROUNDS 1000000

enum hf__cmd { CMD_DEVICES, CMD_RUN, CMD_COMPARE, CMD_PROFILE, CMD_REPORT };

/* What the command line said; NULL / -1 fields fall back to the config. */
struct hf__cli {
    enum hf__cmd cmd;
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

/* Everything the CLI resolved from the config and the options (plan.c). */
struct hf__plan {
    struct hf_run_options base;
    const struct hf_sched_ops *sched[64];
    int nsched;
    enum hf_engine_kind engines[2];
    int nengines;
    int passes; /* compare: times the list runs, each in another order (runs.c) */
    int warmup; /* compare on real devices: one untimed load before the first run (runs.c) */
};

/* options.c: parses the options after the command; 0, 1 for --help, or -1
 * (the message is printed). */
int hf__cli_parse(struct hf__cli *c, int argc, char **argv);
/* Prints "hetfarm: <the detailed message of the last failure>" and returns 1. */
int hf__cli_fail(int rc);
/* An unknown app, scheduler or engine name: prints what would have worked and
 * returns EXIT_USAGE. `what` is "app", "scheduler" or "engine". */
int hf__cli_unknown(const char *where, const char *what, const char *name);

/* Catches SIGINT and SIGTERM for the runs: the first asks them to stop
 * (hf_run_interrupt), a second one kills as usual. */
void hf__cli_catch_signals(void);
/* `st` unless the runs were interrupted: then 128 + the signal (130, 143),
 * after saying that nothing was written. */
int hf__cli_exit_status(int st);

/* help.c */
void hf__cli_usage(FILE *f);
void hf__cli_help(FILE *f, enum hf__cmd c);

/* plan.c: reads [run] and [compare] into `p` (0, or an exit status), and
 * after the runs checks that every key of [load] and [devices] was read. */
int hf__cli_read_plan(const struct hf__cli *c, hf_config_t cfg, struct hf__plan *p);
int hf__cli_check_after(hf_config_t cfg);
/* The tables of every key a config for `app` may hold: [run] and [compare],
 * the devices', the app's [load] (every app's when `app` is NULL: help) and
 * every scheduler's section. Returns how many were written (at most cap). */
size_t hf__cli_rules(const struct hf_app *app, struct hf_config_rules *rules, size_t cap);

/* What a run across nodes that failed on rank 0 leaves for
 * results.partial.json (runs.c fills it, partial.c writes it). */
struct hf__cli_failure {
    int keep;                /* a run across nodes failed: write the partial file */
    struct hf_run *partial;  /* the rounds it finished (NULL: none), freed by the caller */
    char scheduler[32], engine[8];
    int rank;                /* the rank its transport waited for in vain, -1: unknown */
    int signal;              /* the signal that interrupted it, 0: none */
    char message[1024];      /* the failure as printed */
};
/* runs.c: one hf_run per (engine, scheduler) of the plan; the first failure
 * stops everything (0 or an exit status; *runs holds *nruns finished runs
 * either way, freed with hf__cli_free_runs; when a run across nodes failed
 * on rank 0 and `failed` is not NULL, *failed says so). Then the outputs:
 * results.json (`out`, may be NULL; a results.partial.json beside it from
 * an earlier failed run is removed), the report (compare), the trace; all
 * or nothing. */
int hf__cli_run_plan(const struct hf__plan *p, hf_config_t cfg, struct hf_run ***runs,
                     int *nruns, struct hf__cli_failure *failed);
int hf__cli_write_outputs(const struct hf__cli *c, const char *out, struct hf_run **runs,
                          int nruns, hf_config_t cfg);
void hf__cli_free_runs(struct hf_run **runs, int nruns);
/* What run, compare and profile share: loads the config (*cfg, destroyed by
 * the caller), resolves the plan, makes the runs with signals caught; returns
 * 0 or the exit status (an interrupt included). */
int hf__cli_make_runs(const struct hf__cli *c, hf_config_t *cfg, struct hf__plan *p,
                      struct hf_run ***runs, int *nruns, struct hf__cli_failure *failed);
/* partial.c: results.partial.json, the file a failed run across nodes leaves
 * beside its results path `out` ("r.json" -> "r.partial.json"). The path
 * (0, or HF_EINVAL when it does not fit); writing it with the runs that
 * finished and what the failed one finished, after removing an earlier
 * run's `out` (0 or an exit status); and removing an earlier failed run's
 * partial file once `out` holds this run's results. */
int hf__cli_partial_path(const char *out, char *buf, size_t size);
int hf__cli_write_partial(const char *out, struct hf_run **runs, int nruns,
                          const struct hf__cli_failure *f, hf_config_t cfg);
void hf__cli_drop_stale_partial(const char *out);

/* cluster.c: a run across nodes. hf__cli_cluster opens the transport when
 * mpirun started the process (NULL otherwise, or in a build without MPI) and
 * sets its deadline; hf__cli_rank is this process's rank (0 alone);
 * hf__cli_cluster_end closes it at the command's end, or, for a non-zero
 * status, ends every rank of the job; returns the status. */
struct hf_mpi *hf__cli_cluster(double timeout_s);
int hf__cli_rank(void);
int hf__cli_cluster_end(int status);
/* cluster.c: the ranks of the job (1 alone); after a failure, the rank the
 * transport waited for in vain (-1: none named); and, from a signal handler,
 * making every wait on another rank give up (hf_mpi_interrupt). */
int hf__cli_ranks(void);
int hf__cli_cluster_failed_rank(void);
void hf__cli_cluster_interrupt(int sig);

/* One function per command (cmd_*.c); each returns the exit status. */
int hf__cmd_run(const struct hf__cli *c);     /* run and compare */
int hf__cmd_profile(const struct hf__cli *c);
int hf__cmd_report(const struct hf__cli *c);
int hf__cmd_devices(void);

#endif
