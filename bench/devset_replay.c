/* devset_replay.c - replays a real run's rounds through the device-set choice
 * (schedulers/device_set.c) and prints what it would choose at each round.
 *
 * DESIGN
 * ------
 * The choice is a function of what the rounds before measured: each device's
 * work and busy seconds, each set's makespan and time outside its bundles.
 * bench/devset_replay.py takes those from a results.json; this program feeds
 * them to hf__devset round by round, as the run measured them on the set that
 * really ran (whatever it would itself choose), so the choice and prices it
 * prints at round k are what the code built here decides from the run's first
 * k rounds. It reproduces the run's own choices where the planner's models
 * did not decide them (from the standalone rates: lat 0, inv 1/rate), and
 * shows what a change to device_set.c does to a real run without a GPU. A
 * different choice is not followed by what that set would have cost: the
 * replay judges decisions, not their outcome.
 *
 *   python3 bench/devset_replay.py results.json > rounds.txt
 *   make build/devset_replay && build/devset_replay [-v] rounds.txt
 * -v prints each round's price of every device alone and of the full set
 * (split and part) before the choice.
 */
#include <stdio.h>
#include <string.h>

#include "../schedulers/device_set.h"

#define MAXDEV 8

/* The devices of a mask as "cpu+cuda0". */
static const char *set_name(unsigned mask, const struct hf_device_info *dev, int ndev, char *buf,
                            size_t len)
{
    buf[0] = '\0';
    for (int d = 0; d < ndev; d++)
        if (mask >> d & 1u)
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? "+" : "", dev[d].name);
    return buf;
}

int main(int argc, char **argv)
{
    int verbose = argc == 3 && strcmp(argv[1], "-v") == 0;
    FILE *f = argc == 2 + verbose ? fopen(argv[1 + verbose], "r") : NULL;
    if (!f) {
        fprintf(stderr, "usage: devset_replay [-v] ROUNDS.txt (from bench/devset_replay.py; -v: "
                        "each device alone and the full set priced)\n");
        return 2;
    }
    argv += verbose;
    int ndev = 0;
    double rate[MAXDEV], lat[MAXDEV] = {0}, inv[MAXDEV];
    struct hf_device_info dev[MAXDEV];
    if (fscanf(f, "%d", &ndev) != 1 || ndev < 2 || ndev > MAXDEV) {
        fprintf(stderr, "%s: line 1: expected the device count (2-%d)\n", argv[1], MAXDEV);
        return 1;
    }
    for (int d = 0; d < ndev; d++) {
        int gpu = 0;
        dev[d] = (struct hf_device_info){0};
        if (fscanf(f, "%47s %d %lf", dev[d].name, &gpu, &rate[d]) != 3 || !(rate[d] > 0.0)) {
            fprintf(stderr, "%s: device %d: expected name, is_gpu, standalone rate > 0\n",
                    argv[1], d);
            return 1;
        }
        inv[d] = 1.0 / rate[d];
        dev[d].is_gpu = gpu;
    }
    struct hf_sched_env env = {.ndevices = ndev, .dev = dev};
    struct hf__devset s;
    if (hf__devset_init(&s, &env))
        return 1;
    static struct hf_chunk c[100];
    int round, units, as_ran = 0, rounds = 0;
    unsigned ran;
    double W, makespan, outside;
    while (fscanf(f, "%d %lf %d %lf %lf %u", &round, &W, &units, &makespan, &outside, &ran) == 6) {
        double work[MAXDEV], busy[MAXDEV];
        size_t chunks[MAXDEV] = {0};
        int alive[MAXDEV];
        for (int d = 0; d < ndev; d++) {
            alive[d] = 1;
            if (fscanf(f, "%lf %lf", &work[d], &busy[d]) != 2) {
                fprintf(stderr, "%s: round %d: expected work and busy of %d devices\n", argv[1],
                        round, ndev);
                return 1;
            }
        }
        int n = units < 100 ? (units > 0 ? units : 1) : 100;
        for (int i = 0; i < n; i++)
            c[i] = (struct hf_chunk){.index = (size_t)i, .work = W / n};
        struct hf_round r = {.round = round, .nchunks = (size_t)n, .chunks = c, .total_work = W,
                             .alive = alive, .solo_rounds = 1.0, .standalone_rate = rate};
        /* -v: the prices before the choice, each device alone, then the full set. */
        double T[MAXDEV + 1], split[MAXDEV + 1], part[MAXDEV + 1];
        unsigned mask[MAXDEV + 1];
        for (int k = 0; verbose && k <= ndev; k++) {
            mask[k] = k < ndev ? 1u << k : (1u << ndev) - 1u;
            T[k] = hf__devset_price(&s, &r, lat, inv, mask[k], &split[k], &part[k]);
        }
        const struct hf_round *v = hf__devset_begin(&s, &r, lat, inv);
        unsigned pick = 0;
        for (int d = 0; d < ndev; d++)
            pick |= (unsigned)(v->alive[d] != 0) << d;
        char a[256], b[256];
        printf("round %3d  work %12.0f  ran %-16s %8.3f ms  chooses %-16s predicted %8.3f ms "
               "(full set %8.3f)\n",
               round, W, set_name(ran, dev, ndev, a, sizeof a), 1e3 * makespan,
               set_name(pick, dev, ndev, b, sizeof b), 1e3 * s.pred_s, 1e3 * s.full_s);
        for (int k = 0; verbose && k <= ndev; k++)
            printf("    %-16s %8.3f ms  (split %8.3f, part %8.3f)\n",
                   set_name(mask[k], dev, ndev, a, sizeof a),
                   1e3 * T[k], 1e3 * split[k], 1e3 * part[k]);
        rounds++;
        as_ran += pick == ran;
        /* What the run measured, on the set it ran. */
        s.chosen = s.last = ran;
        struct hf_round_report rep = {.round = round, .makespan_s = makespan, .work = work,
                                      .busy_s = busy, .chunks = chunks, .outside_s = outside};
        hf__devset_end(&s, &rep);
    }
    printf("%d of %d rounds choose the set that ran\n", as_ran, rounds);
    hf__devset_free(&s);
    fclose(f);
    return 0;
}
