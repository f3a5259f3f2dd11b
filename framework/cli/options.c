/* options.c - the command line after the command, and failing well.
 *
 * DESIGN
 * ------
 * Options are parsed strictly ("--rounds 3x" is an error, not 3) with GNU
 * getopt, which permutes, so options may come before or after CONFIG. Unknown
 * names (app, scheduler, engine) and bad usage exit 2 with a message listing
 * what is valid; any other failure prints "hetfarm: <the detailed message>"
 * and exits 1.
 */
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const engine_names[] = {"real", "sim", NULL};

/* The handler only records the signal (hf_run_interrupt and
 * hf__cli_cluster_interrupt are async-signal-safe); SA_RESETHAND makes a
 * second Ctrl-C kill the process the usual way. */
static void on_signal(int sig)
{
    hf_run_interrupt(sig);
    hf__cli_cluster_interrupt(sig);
}

void hf__cli_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int hf__cli_exit_status(int st)
{
    int sig = hf_run_interrupted();
    if (!sig)
        return st;
    fprintf(stderr, "hetfarm: interrupted by %s: the devices were stopped and no results were "
                    "written\n", sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
    return 128 + sig;
}

/* Prints the detailed message of the last failure (or the code's text). */
int hf__cli_fail(int rc)
{
    const char *msg = hf_last_error();
    if (hf__cli_rank() > 0 && strncmp(msg, "[rank", 5) != 0) /* the transport names it */
        fprintf(stderr, "hetfarm [rank %d]: %s\n", hf__cli_rank(), msg[0] ? msg : hf_strerror(rc));
    else
        fprintf(stderr, "hetfarm: %s\n", msg[0] ? msg : hf_strerror(rc));
    return 1;
}

/* An unknown name is a usage error (exit 2): list what would have worked, so
 * that the fix is in the message. */
int hf__cli_unknown(const char *where, const char *what, const char *name)
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
int hf__cli_parse(struct hf__cli *c, int argc, char **argv)
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
            if (parse_num("--rounds", optarg, 1, HF_CLI_MAX_ROUNDS, &v))
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
