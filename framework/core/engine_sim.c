/* engine_sim.c - the sim engine: a discrete-event run of a round in virtual time.
 *
 * DESIGN
 * ------
 * The design is simple: the clock jumps from one bundle completion to the
 * next. Whenever the clock moves, every idle live device is offered work in
 * device order (the same `take` the real engine uses, so schedulers see the
 * same calls); a span taken becomes a completion event at now + its modelled
 * time: latency + bytes / bandwidth (GPUs) + work / rate, scaled by
 * (1 + jitter * g) with g a normal draw from the run's seeded generator
 * (splitmix64, its state mixed from [run] seed so that seeds are independent
 * streams: hf__sim_rng_state). The run is therefore deterministic for a seed,
 * and fast enough to model nodes of 8 GPUs over thousands of chunks. With
 * `execute = yes` each bundle's CPU kernel also runs when its event fires, so
 * tests can check real results against the reference under any policy. A
 * node device ([devices] nodes) is timed by sim_node.c instead: the network's
 * part plus its own devices' split, each of them jittered and troubled like a
 * device of its own.
 *
 * The trouble real GPUs gave HASS is modelled in the scheduled rounds (not the
 * standalone passes, which a real run mostly reads from the profile): a first
 * bundle's warm-up, a cost for every bundle size (chunk count) the device has
 * not run before (cuBLAS picking and loading a kernel for a new GEMM shape),
 * rare stalls (per bundle, per second of a bundle's time, or forced on one
 * bundle), and a slowdown from a given round on. Each is an extra term or factor on the
 * bundle's time. Whether a bundle stalls is a fixed function of the run's
 * seed, the device, the round and the bundle's index in the round (a keyed
 * hash, not a draw from the generator): every scheduler of a comparison
 * meets the same stalls when it hands a device the same number of bundles
 * (common random numbers), and more stalls only by handing out more (per
 * bundle) or by keeping it busy longer (per second: the count of a bundle's
 * stalls is Poisson in its clean time, drawn by inverting the distribution
 * at a second keyed uniform, so a bundle split in two meets about as many
 * stalls as the whole). With
 * draws from the one stream a stall fell wherever the stream stood, so on a
 * 0.2 ms round a 5 ms stall at 1% ranked the schedulers by luck
 * (9edd91b:bench/NOTES.md, eleventh session).
 *
 * Taking part costs a round more than a device's bundles (the shared-data
 * merge and the copy-back of what the device changed, a synchronisation, a
 * host round trip): when two or more devices ran bundles in a round, the
 * round ends, after its last bundle, part_s + part_per_unit_s x (its work)
 * later for every device that ran ([sim.NAME] part_us, part_per_unit_s),
 * paid one after the other as the host merges them. A device alone pays
 * nothing: its copy is the merged one. Without part_us, a device of an app
 * that declares shared data pays HF_SIM_PART_S, what the real drivers
 * measured, and one of an app that does not pays nothing (no merge: its
 * sync is inside its bundles' times).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "sim_node.h"
#include "size_set.h"

/* A round's host turnaround per device beside others, by default, for an app
 * with shared data: ~100 us per round measured on the real engine with one
 * H200 or H100 (road-grid BFS levels with tiny frontiers: thread hand-offs,
 * events, synchronisations, the merge's fixed part; 9edd91b:bench/NOTES.md, "Where a
 * graph round's time goes"). The per-unit part defaults to 0: what changes per
 * unit of work is the app's (kron-22 BFS merged ~2M changed depths in ~10 ms,
 * ~5 ns an element, but a unit of work is an edge, not a changed element). */
#define HF_SIM_PART_S 100e-6

struct pending {
    double start, end;
    struct hf_span span;
    int fault;
};

/* splitmix64's increment (2^64 / golden ratio) and its finaliser, a bijective
 * mix of 64 bits in which every input bit moves about half the output bits. */
#define SPLITMIX_GAMMA 0x9E3779B97F4A7C15ull
static uint64_t splitmix_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* splitmix64: a small, good, seedable generator. Its state walks by
 * SPLITMIX_GAMMA a draw, so it must start from hf__sim_rng_state(seed). */
static uint64_t next_random(uint64_t *s)
{
    return splitmix_mix(*s += SPLITMIX_GAMMA);
}

/* The state was once seed * SPLITMIX_GAMMA + 1: a multiple of the very step
 * the state takes per draw, so seed s + 1's stream was seed s's shifted by one
 * draw, and the seeds of a comparison were one stream, not independent
 * samples (a stall at some bundle of seed 1 hit the next bundle of seed 2;
 * 9edd91b:bench/NOTES.md, issue 12). Through the finaliser, nearby seeds start at
 * unrelated points of the 2^64 cycle (splitmix64's first output for state
 * `seed`, the usual way to seed a generator from a small integer); the run
 * stays deterministic for a seed. */
uint64_t hf__sim_rng_state(uint64_t seed)
{
    return splitmix_mix(seed + SPLITMIX_GAMMA);
}

/* A standard normal draw (Box-Muller). */
double hf__sim_normal(uint64_t *s)
{
    double u1 = ((double)(next_random(s) >> 11) + 1.0) / 9007199254740993.0;
    double u2 = (double)(next_random(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double hf__sim_jitter(const struct hf_sim_model *m, uint64_t *rng, double s)
{
    if (m->jitter > 0) {
        double f = 1.0 + m->jitter * hf__sim_normal(rng);
        s *= f < 0.05 ? 0.05 : f;
    }
    return s;
}

double hf__sim_bundle_seconds(const struct hf_device *d, const struct hf_bundle *b)
{
    const struct hf_sim_model *m = &d->model;
    double s = m->latency_s + b->work / m->rate;
    if (d->info.is_gpu && m->bandwidth > 0)
        s += b->bytes / m->bandwidth;
    return s;
}

/* Whether device d has run a bundle of `count` chunks before in the scheduled
 * rounds; remembers it. An open-addressing set per device, allocated on first
 * use; when it is full every size counts as seen (no more warm-ups). */
#define SIM_SIZES 4096
static int size_seen(struct hf__engine *e, int d, size_t count)
{
    if (!e->sim_sizes && !(e->sim_sizes = calloc((size_t)e->ndev * SIM_SIZES, sizeof(size_t))))
        return 1;
    return hf__size_set_add(e->sim_sizes + (size_t)d * SIM_SIZES, SIM_SIZES, count);
}

/* When bundle `nb` of device d runs (see sim_node.h): whether it is the
 * device's first, whether its chunk count is new to the device. The size
 * sets are touched in the order they always were (the first-bundle mark,
 * then the count only where a new size costs something: node devices pass
 * their inner devices' cost on), so runs draw what they drew before nodes. */
static struct hf__sim_when sim_when(struct hf__engine *e, int d, const struct hf_span *span,
                                    int nb)
{
    const struct hf_device *dev = hf_devlist_get(e->devs, d);
    struct hf__sim_when w = {.recording = e->recording, .round = e->round.round, .bundle = nb};
    if (!e->recording)
        return w;
    w.key = hf__sim_stall_key(
        hf__sim_stall_key(hf__sim_stall_key(e->stall_key, (uint64_t)d), (uint64_t)w.round),
        (uint64_t)nb);
    w.first = !size_seen(e, d, 0); /* size 0 never runs: it marks "has run anything" */
    if (dev->node || dev->model.new_size_s > 0)
        w.new_size = !size_seen(e, d, span->count);
    return w;
}

uint64_t hf__sim_stall_key(uint64_t key, uint64_t i)
{
    return splitmix_mix(key ^ splitmix_mix(i + SPLITMIX_GAMMA));
}

/* A uniform in [0, 1) from a stall key's top 53 bits. */
static double key_uniform(uint64_t key)
{
    return (double)(key >> 11) / 9007199254740992.0;
}

/* The per-second stalls' key is the bundle's keyed again with an index no
 * part of a node reaches, so they fall independently of the per-bundle ones. */
#define STALL_RATE_SALT 0xD1B54A32D192ED03ull

/* The count k of a Poisson(mean) variable at which its distribution first
 * exceeds u (inversion; capped at 1000 stalls, and the mean itself where
 * exp(-mean) underflows). */
static int poisson_at(double mean, double u)
{
    double p = exp(-mean), acc = p;
    if (!(p > 0.0))
        return mean < 1000.0 ? (int)mean : 1000;
    int k = 0;
    while (u >= acc && k < 1000 && p > 0.0) {
        k++;
        p *= mean / k;
        acc += p;
    }
    return k;
}

/* The modelled trouble of one bundle (see DESIGN): extra seconds and factors on
 * top of its clean, jittered time s. */
double hf__sim_trouble(const struct hf_sim_model *m, const struct hf__sim_when *w, double s)
{
    if (!w->recording)
        return s;
    double clean = s; /* before any trouble: what stalls per second scale with */
    if (w->first)
        s += m->warmup_s;
    if (m->new_size_s > 0 && w->new_size)
        s += m->new_size_s;
    int stall = w->round == m->stall_round && w->bundle == m->stall_bundle;
    if (m->stall_prob > 0)
        stall |= key_uniform(w->key) < m->stall_prob;
    if (stall)
        s += m->stall_s;
    if (m->stall_rate > 0) {
        double u = key_uniform(hf__sim_stall_key(w->key, STALL_RATE_SALT));
        s += m->stall_s * (double)poisson_at(m->stall_rate * clean, u);
    }
    if (m->slow_factor != 1.0 && w->round >= m->slow_round)
        s *= m->slow_factor;
    return s;
}

/* Offers work to every idle live device; returns an error code or 0. */
static int dispatch(struct hf__engine *e, struct pending *p, int *busy)
{
    for (int d = 0; d < e->ndev; d++) {
        if (busy[d] || !e->alive[d])
            continue;
        struct hf_span span;
        int got = hf__engine_take(e, d, &span);
        if (got < 0)
            return got;
        if (got == 0) {
            e->asked_gen[d] = e->progress_gen;
            continue;
        }
        struct hf_bundle b;
        int rc = hf__engine_bundle(e, d, &span, &b);
        if (rc) {
            hf__engine_error(e, rc, "app %s: bundler failed for chunks [%zu, %zu)", e->app->name,
                             span.first, span.first + span.count);
            return rc;
        }
        const struct hf_device *dev = hf_devlist_get(e->devs, d);
        double s;
        if (dev->node) {
            struct hf__sim_when w = sim_when(e, d, &span, dev->bundles_this_round);
            s = hf__sim_node_seconds(dev->node, &b, &w, &e->rng, e->sim_now, &e->sim_link_free);
        } else {
            s = hf__sim_jitter(&dev->model, &e->rng, hf__sim_bundle_seconds(dev, &b));
            struct hf__sim_when w = sim_when(e, d, &span, dev->bundles_this_round);
            s = hf__sim_trouble(&dev->model, &w, s);
        }
        p[d] = (struct pending){.start = e->sim_now, .end = e->sim_now + s, .span = span,
                               .fault = hf__engine_fault_due(e, d)};
        busy[d] = 1;
    }
    return 0;
}

/* Runs the bundle's CPU kernel for real (execute = yes). */
static int execute(struct hf__engine *e, int d, const struct hf_span *span, char *msg, size_t len)
{
    struct hf_bundle b;
    hf_clear_error();
    int rc = hf__engine_bundle(e, d, span, &b);
    if (rc == 0)
        rc = e->app->run_cpu(e->app_ctx, &b, 1);
    if (rc == 0 && e->app->collect)
        rc = e->app->collect(e->app_ctx, &b);
    snprintf(msg, len, "%s", rc ? hf_last_error() : "");
    return rc;
}

/* Ends the round after its devices' taking part (see DESIGN), when two or
 * more devices ran bundles in it. */
static void pay_taking_part(struct hf__engine *e)
{
    int ran = 0;
    for (int d = 0; d < e->ndev; d++)
        ran += e->stats[d].bundles > 0;
    if (ran < 2)
        return;
    double extra = 0.0;
    for (int d = 0; d < e->ndev; d++) {
        const struct hf_device *dev = hf_devlist_get(e->devs, d);
        if (e->stats[d].bundles == 0 || dev->node)
            continue;
        double part = dev->model.part_s >= 0.0 ? dev->model.part_s
                      : e->app->shared          ? HF_SIM_PART_S
                                                : 0.0;
        extra += part + dev->model.part_per_unit_s * e->stats[d].work;
    }
    e->round_end = fmax(e->round_end, e->sim_now) + extra;
    e->sim_now = e->round_end;
}

int hf__sim_round(struct hf__engine *e)
{
    struct pending *p = calloc((size_t)e->ndev, sizeof *p);
    int *busy = calloc((size_t)e->ndev, sizeof *busy);
    int rc = p && busy ? 0 : hf_fail(HF_ENOMEM, "sim: out of memory");
    e->round_start = e->round_end = e->sim_now;
    while (rc == 0 && !e->error && !hf__engine_round_complete(e)) {
        if ((rc = dispatch(e, p, busy)))
            break;
        int next = -1, inflight = 0;
        for (int d = 0; d < e->ndev; d++)
            if (busy[d]) {
                inflight++;
                if (next < 0 || p[d].end < p[next].end)
                    next = d;
            }
        if (next < 0) {
            hf__engine_stalled(e, inflight);
            if (!e->error)
                hf__engine_error(e, HF_ESCHED, "sim: no device could take work in round %d",
                                 e->round.round);
            break;
        }
        struct pending ev = p[next];
        busy[next] = 0;
        e->sim_now = ev.end;
        char msg[512] = "";
        int brc = ev.fault ? HF_EDEVICE : 0;
        if (ev.fault)
            snprintf(msg, sizeof msg, "injected fault ([faults] in the config)");
        else if (e->executes)
            brc = execute(e, next, &ev.span, msg, sizeof msg);
        struct hf_bundle_times t = {0};
        if (brc == 0)
            hf__engine_done(e, next, &ev.span, ev.start, ev.end, &t);
        else
            hf__engine_failed(e, next, &ev.span, brc, msg);
    }
    /* The round ends when its last bundle does, and its devices' taking
     * part is paid (see DESIGN); faults may leave busy devices idle. */
    if (rc == 0 && !e->error && e->recording)
        pay_taking_part(e);
    free(p);
    free(busy);
    return rc ? rc : e->error;
}
