/* nodes.c - a run across nodes: rank 0's node devices, and a node's side.
 *
 * DESIGN
 * ------
 * Under mpirun every rank runs the same command on the same config. Rank 0
 * runs the run as always, with one device more per other rank: `node1`,
 * `node2`, ... (framework/mpi/node.c drives them). Its scheduler sees a node
 * as one device whose rate is what the node's own devices do together, so
 * the top level splits by measured node rates, a node that is idle steals
 * from a slower device's tail like a GPU, and adaptation runs per round: the
 * hierarchy of issue 16, with no scheduler knowing about nodes.
 *
 * Every other rank serves (hf_run_serve): it sets the same run up over its
 * own devices, with the same scheduler, and waits for records. Whenever rank
 * 0 draws a load (the standalone passes draw round 0 again) it tells every
 * node, which draws the same load itself (next_load and the partitioner, on
 * the same config and the same shared state, give the same chunks; every
 * node draws every load, in order, so that an app's own state across rounds,
 * BFS's level, say, moves alike everywhere). A span names chunks [first,
 * first + count) of the load drawn last (checked: the serial and the units
 * must match rank 0's); the rank arms them as a round of its own (numbered
 * by the node: its scheduler profiles and adapts over the spans it gets) and
 * runs it on the real engine. It then names the span's results (struct
 * hf_app.results, called once per span: strsearch hands over the counts and
 * matches its devices collected in the span), reports the completion and
 * sends a summary (the regions' sizes, what each of its devices did), the
 * regions, which land in place on rank 0 before rank 0 counts the span done
 * (rank 0's verify then checks the whole load), and the bundles its devices
 * ran (the engine keeps a node's events without recording a run:
 * keep_events), which rank 0 keeps per recorded round as the run's inner
 * events (results.json's node_events, the report's and the trace's lanes).
 *
 * Shared data (apps/graph): the node's own round merges its devices' changes
 * as usual (shared.c); after the results the node sends what its host
 * recorded since its last send (MIN/MAX/OR: indices and values; OWNED: the
 * span's unit range) and forgets it, and rank 0's node device hands that to
 * rank 0's merge like a GPU (mpi/node.c). Rank 0's push comes back as an
 * update record between spans: the node writes it into its host copy, pushes
 * it to its own GPUs and takes rank 0's union as its own (shared.c,
 * hf__shared_apply). Rank 0 pushes every union to a node, even an empty one
 * or one the node made alone, so the node's union is rank 0's whatever
 * spans it ran (none, or several: the recorder keeps adding until the next
 * draw, which made "the node made every change" a weaker guarantee than the
 * push), and next_load builds the same frontier on every rank. Apps decide
 * from the config and hf_devices.ranks, not their own device list, what
 * shapes a load (the graph apps' grain, BFS's fused levels, CC's skipping).
 *
 * Only real-engine runs go across nodes; a sim run in the same plan runs on
 * rank 0 alone (the sim engine models nodes itself). A node that fails ends
 * the run on rank 0 (node.c) and the CLI ends the job, after writing the
 * rounds that finished to results.partial.json (cli/partial.c).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_internal.h"
#include "shared.h"
#ifdef HF_HAVE_MPI
#include "mpi/node.h"
#endif

#ifdef HF_HAVE_MPI
struct hf__nodes {
    hf_mpi_t t;
    int n;                    /* node devices: ranks 1 .. n */
    int first_dev;            /* the device index of node1 (the others follow) */
    struct hf_mpi_node *node; /* their driver state, by rank */
    char (*names)[48];        /* the devices inside each node, by rank ... */
    struct hf_mpi_inner *acc; /* ... and what they did this round */
    int ninner;
    struct hf_event *ev;      /* the bundles they ran in the recorded rounds (run->inner_events) */
    size_t nev, evcap;
};

/* A node's first words once it is set up: how many devices it has, and their
 * names. Rank 0 sizes the node's statistics from them. */
static int send_hello(struct hf__engine *e)
{
    int32_t n = e->ndev;
    char names[HF_NODE_DEVICES][48];
    memset(names, 0, sizeof names);
    for (int d = 0; d < e->ndev && d < HF_NODE_DEVICES; d++)
        snprintf(names[d], sizeof names[d], "%s", hf_devlist_get(e->devs, d)->info.name);
    if (e->ndev > HF_NODE_DEVICES)
        return hf_fail(HF_ERANGE, "a node may have at most %d devices", HF_NODE_DEVICES);
    int rc = hf_mpi_send_results(e->opts->nodes, &n, sizeof n);
    return rc ? rc : hf_mpi_send_results(e->opts->nodes, names, (size_t)n * sizeof names[0]);
}

/* Rank 0: every node's hello, in rank order; fills N->names and N->acc. */
static int receive_hellos(struct hf__nodes *N)
{
    int32_t count[N->n + 1];
    int total = 0;
    for (int r = 1; r <= N->n; r++) {
        int rc = hf_mpi_recv_results(N->t, r, &count[r], sizeof count[r]);
        if (rc)
            return rc;
        if (count[r] < 1 || count[r] > HF_NODE_DEVICES)
            return hf_fail(HF_EIO, "rank %d says it has %d devices", r, (int)count[r]);
        total += count[r];
    }
    N->names = calloc((size_t)total, sizeof *N->names);
    N->acc = calloc((size_t)total, sizeof *N->acc);
    if (!N->names || !N->acc)
        return hf_fail(HF_ENOMEM, "nodes: out of memory");
    N->ninner = total;
    for (int r = 1, at = 0; r <= N->n; at += count[r], r++) {
        int rc = hf_mpi_recv_results(N->t, r, N->names[at], (size_t)count[r] * sizeof *N->names);
        if (rc)
            return rc;
        N->node[r].ninner = count[r];
        N->node[r].acc = N->acc + at;
    }
    return 0;
}

int hf__nodes_add(struct hf__engine *e)
{
    hf_mpi_t t = e->opts->nodes;
    if (!t || hf_mpi_rank(t) != 0 || hf_mpi_size(t) < 2 || e->opts->engine != HF_ENGINE_REAL)
        return 0;
    const char *app = e->app->name;
    if (!e->app->results && !e->app->shared)
        return hf_fail(HF_EINVAL,
                       "app %s does not say where a bundle's results are (struct hf_app.results "
                       "or shared data), so it cannot run across nodes: run it without mpirun",
                       app);
    if (!hf_mpi_threads_ok(t))
        return hf_fail(HF_EIO, "MPI did not grant MPI_THREAD_MULTIPLE, which the node devices "
                               "need (each talks to its rank from its own thread)");
    struct hf__nodes *N = calloc(1, sizeof *N);
    int size = hf_mpi_size(t);
    if (!N || !(N->node = calloc((size_t)size, sizeof *N->node))) {
        free(N);
        return hf_fail(HF_ENOMEM, "nodes: out of memory");
    }
    N->t = t;
    N->first_dev = hf_devlist_count(e->devs);
    e->nodes = N;
    for (int r = 1; r < size; r++) {
        char name[32];
        snprintf(name, sizeof name, "node%d", r);
        N->node[r] = (struct hf_mpi_node){.t = t, .rank = r};
        int rc = hf_devlist_add_node(e->devs, name, &hf_driver_node, &N->node[r]);
        if (rc)
            return rc;
        N->n = r;
    }
    return receive_hellos(N);
}

int hf__nodes_describe(struct hf__engine *e, struct hf_run *run)
{
    struct hf__nodes *N = e->nodes;
    if (!N || !N->ninner)
        return 0;
    if (!(run->inner = calloc((size_t)N->ninner, sizeof *run->inner)))
        return hf_fail(HF_ENOMEM, "nodes: out of memory");
    run->ninner = N->ninner;
    for (int r = 1, k = 0; r <= N->n; r++)
        for (int i = 0; i < N->node[r].ninner; i++, k++) {
            snprintf(run->inner[k].name, sizeof run->inner[k].name, "node%d:%s", r, N->names[k]);
            run->inner[k].node = N->first_dev + r - 1;
        }
    return 0;
}

int hf__nodes_ranks(const struct hf__engine *e)
{
    hf_mpi_t t = e->opts->nodes;
    return t && e->opts->engine == HF_ENGINE_REAL ? hf_mpi_size(t) : 1;
}

int hf__nodes_drawn(struct hf__engine *e)
{
    struct hf__nodes *N = e->nodes;
    if (!N)
        return 0;
    const struct hf_mpi_span draw = {.kind = HF_MPI_DRAW, .round = e->load.round,
                                     .serial = e->load.serial};
    for (int r = 1; r <= N->n; r++) {
        int rc = hf_mpi_hand(N->t, r, &draw);
        if (rc)
            return rc == HF_EDEVICE ? hf_fail(HF_EIO, "%s", hf_last_error()) : rc;
    }
    return 0;
}

void hf__nodes_round_start(struct hf__engine *e)
{
    struct hf__nodes *N = e->nodes;
    if (!N)
        return;
    if (N->acc)
        memset(N->acc, 0, (size_t)N->ninner * sizeof *N->acc);
    for (int r = 1; r <= N->n; r++)
        N->node[r].nev = 0;
}

/* Keeps the bundles node n's devices ran this round as events of the run:
 * `device` becomes the index into run->inner (the node's first inner device
 * is `at`), the round rank 0's, the times relative to round 0's start. */
static int keep_inner_events(struct hf__engine *e, struct hf__nodes *N,
                             const struct hf_mpi_node *n, int at)
{
    if (N->nev + n->nev > N->evcap) {
        size_t cap = N->evcap ? N->evcap : 1024;
        while (cap < N->nev + n->nev)
            cap *= 2;
        struct hf_event *v = realloc(N->ev, cap * sizeof *v);
        if (!v)
            return hf_fail(HF_ENOMEM, "nodes: out of memory for the bundles of their devices");
        N->ev = v;
        N->evcap = cap;
    }
    for (size_t i = 0; i < n->nev; i++) {
        const struct hf_mpi_inner_event *x = &n->ev[i];
        N->ev[N->nev++] = (struct hf_event){
            .round = e->round.round, .device = at + (int)x->device, .first = (size_t)x->first,
            .count = (size_t)x->count, .work = x->work, .start_s = x->start - e->run_t0,
            .end_s = x->end - e->run_t0,
            .t = {.copy_in_s = x->copy_in, .kernel_s = x->kernel, .copy_out_s = x->copy_out},
            .stolen = x->stolen != 0, .outlier = x->outlier != 0,
        };
    }
    return 0;
}

void hf__nodes_take_events(struct hf__engine *e, struct hf_run *run)
{
    struct hf__nodes *N = e->nodes;
    if (!N)
        return;
    run->inner_events = N->ev;
    run->ninner_events = N->nev;
    N->ev = NULL;
    N->nev = N->evcap = 0;
}

int hf__nodes_round_end(struct hf__engine *e, struct hf_round_stats *rs)
{
    struct hf__nodes *N = e->nodes;
    if (!N || !N->ninner)
        return 0;
    if (!(rs->inner = calloc((size_t)N->ninner, sizeof *rs->inner)))
        return hf_fail(HF_ENOMEM, "nodes: out of memory");
    for (int r = 1; r <= N->n; r++) {
        const struct hf_mpi_node *n = &N->node[r];
        struct hf_round_device *out = rs->inner + (n->acc - N->acc);
        double work = 0;
        for (int i = 0; i < n->ninner; i++)
            work += n->acc[i].work;
        for (int i = 0; i < n->ninner; i++)
            out[i] = (struct hf_round_device){
                .chunks = (size_t)n->acc[i].chunks, .bundles = (size_t)n->acc[i].bundles,
                .work = n->acc[i].work, .busy_s = n->acc[i].busy_s,
                .share = work > 0 ? n->acc[i].work / work : 0,
            };
        int rc = e->recording ? keep_inner_events(e, N, n, (int)(n->acc - N->acc)) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

void hf__nodes_stop(struct hf__engine *e)
{
    struct hf__nodes *N = e->nodes;
    if (!N)
        return;
    const struct hf_mpi_span stop = {.stop = 1};
    for (int r = 1; r <= N->n; r++)
        if (hf_mpi_hand(N->t, r, &stop))
            break; /* a broken transport: the CLI ends the job */
    free(N->node);
    free(N->names);
    free(N->acc);
    free(N->ev);
    free(N);
    e->nodes = NULL;
}

/* The chunks of the load a node drew last, apart from e->chunks, which holds
 * the span being run. */
struct drawn {
    uint64_t serial;            /* rank 0's serial of the load (UINT64_MAX: none yet) */
    struct hf_chunk *chunks;
    size_t n, cap;
};

/* Draws round `round`'s load, rank 0's serial-th, into d (the engine draws
 * into e->chunks, so the two buffers trade places around the draw). */
static int draw(struct hf__engine *e, struct drawn *d, int round, uint64_t serial)
{
    struct hf_chunk *span_buf = e->chunks;
    size_t span_cap = e->chunks_cap;
    e->chunks = d->chunks;
    e->chunks_cap = d->cap;
    int rc = hf__engine_draw_round(e, round);
    d->chunks = e->chunks;
    d->cap = e->chunks_cap;
    d->n = e->nchunks;
    e->chunks = span_buf;
    e->chunks_cap = span_cap;
    e->nchunks = 0;
    if (rc == 0)
        rc = hf_fail(HF_EINVAL, "app %s has no load for round %d, which rank 0 ran",
                     e->app->name, round);
    if (rc < 0)
        return e->error ? hf_fail(e->error, "%s", e->errmsg) : rc;
    d->serial = serial;
    return 0;
}

/* Runs span s of the drawn load as the node's round `sub`; *t0 is when it
 * began (hf__now) and *busy_s its wall time. */
static int run_span(struct hf__engine *e, struct drawn *d, const struct hf_mpi_span *s, int sub,
                    double *t0, double *busy_s)
{
    int rc = 0;
    if (d->serial != s->serial)
        return hf_fail(HF_EINVAL, "rank 0 handed a span of its draw %llu, this node drew %llu "
                                  "last: the ranks disagree on the loads",
                       (unsigned long long)s->serial, (unsigned long long)d->serial);
    if (s->count == 0 || s->first > d->n || s->count > d->n - s->first)
        return hf_fail(HF_EINVAL, "rank 0 handed chunks [%llu, %llu) of round %d, whose load has "
                                  "%zu chunks here: the ranks disagree on the load",
                       (unsigned long long)s->first, (unsigned long long)(s->first + s->count),
                       (int)s->round, d->n);
    if (d->chunks[s->first].begin != s->begin || d->chunks[s->first + s->count - 1].end != s->end)
        return hf_fail(HF_EINVAL, "rank 0's chunks [%llu, %llu) of round %d cover units [%llu, "
                                  "%llu), here [%zu, %zu): the ranks cut the load differently "
                                  "(an app must not size chunks by its own devices across nodes)",
                       (unsigned long long)s->first, (unsigned long long)(s->first + s->count),
                       (int)s->round, (unsigned long long)s->begin, (unsigned long long)s->end,
                       d->chunks[s->first].begin, d->chunks[s->first + s->count - 1].end);
    if ((rc = hf__engine_hold_chunks(e, s->count)))
        return rc;
    memcpy(e->chunks, d->chunks + s->first, s->count * sizeof *e->chunks);
    e->nchunks = s->count;
    e->nevents = 0; /* the last span's bundles went out with its results */
    *t0 = hf__now();
    if ((rc = hf__engine_arm_round(e, sub, 0)) == 0)
        rc = hf__engine_execute_round(e);
    *busy_s = hf__now() - *t0;
    double work[e->ndev], busy[e->ndev];
    size_t chunks[e->ndev];
    for (int k = 0; k < e->ndev; k++) {
        work[k] = e->stats[k].work;
        busy[k] = e->stats[k].busy_s;
        chunks[k] = e->stats[k].chunks;
    }
    if (rc == 0)
        rc = hf__engine_adapt(e, e->round_end - e->round_start, work, busy, chunks);
    return rc && e->error ? hf_fail(e->error, "%s", e->errmsg) : rc;
}

/* Sends what the span changed in the shared data (see DESIGN), array by
 * array, as node.c receives it: for an OWNED array the span's unit range, for
 * a MIN/MAX/OR one the count, indices and values of the changes recorded
 * since the last send, which are then forgotten. */
static int send_changes(struct hf__engine *e, const struct hf_mpi_span *sp)
{
    int ns = 0, rc = 0;
    const struct hf_shared *arr = hf__shared_list(e->shared, &ns);
    for (int s = 0; s < ns && rc == 0; s++) {
        const struct hf_shared *a = &arr[s];
        size_t es = hf_elem_size(a->elem);
        if (a->kind == HF_SHARED_OWNED) {
            if (sp->end > a->count || sp->begin > sp->end)
                return hf_fail(HF_EAPP, "OWNED shared array %s: units [%llu, %llu) beyond its "
                                        "%zu elements", a->name, (unsigned long long)sp->begin,
                               (unsigned long long)sp->end, a->count);
            rc = hf_mpi_send_results(e->opts->nodes, (const char *)a->host + sp->begin * es,
                                     (sp->end - sp->begin) * es);
            continue;
        }
        if (a->kind == HF_SHARED_READONLY)
            continue;
        const uint32_t *idx = NULL;
        const void *val = NULL;
        long n = hf__shared_take_changes(e->shared, s, &idx, &val);
        if (n < 0)
            return (int)n;
        uint64_t k = (uint64_t)n;
        rc = hf_mpi_send_results(e->opts->nodes, &k, sizeof k);
        if (rc == 0 && k)
            rc = hf_mpi_send_results(e->opts->nodes, idx, k * sizeof *idx);
        if (rc == 0 && k)
            rc = hf_mpi_send_results(e->opts->nodes, val, k * es);
        hf__shared_forget_changes(e->shared, s);
    }
    return rc;
}

/* Applies rank 0's update record u: its bytes, then the update (shared.c). */
static int apply_update(struct hf__engine *e, const struct hf_mpi_span *u)
{
    int ns = 0;
    const struct hf_shared *arr = hf__shared_list(e->shared, &ns);
    if (u->array < 0 || u->array >= ns || arr[u->array].kind == HF_SHARED_READONLY)
        return hf_fail(HF_EINVAL, "rank 0 sent an update of shared array %d, which app %s does "
                                  "not keep here", (int)u->array, e->app->name);
    const struct hf_shared *a = &arr[u->array];
    size_t es = hf_elem_size(a->elem), n = u->count;
    if (n > a->count)
        return hf_fail(HF_EINVAL, "rank 0 sent %zu elements of shared array %s, which has %zu",
                       n, a->name, a->count);
    uint32_t *idx = u->indexed && n ? malloc(n * sizeof *idx) : NULL;
    void *val = n ? malloc(n * es) : NULL;
    int rc = 0;
    if ((u->indexed && n && !idx) || (n && !val))
        rc = hf_fail(HF_ENOMEM, "out of memory for an update of %zu elements", n);
    if (rc == 0 && idx)
        rc = hf_mpi_recv_bytes(e->opts->nodes, 0, idx, n * sizeof *idx);
    if (rc == 0 && n)
        rc = hf_mpi_recv_bytes(e->opts->nodes, 0, val, n * es);
    if (rc == 0)
        rc = hf__shared_apply(e, u->array, u->indexed ? idx : NULL, val, n,
                              u->indexed ? 0 : (size_t)u->first);
    free(idx);
    free(val);
    return rc;
}

/* Sends the bundles this node's devices ran in the span begun at t0: a
 * count, then each with its times since t0 and its chunks numbered in rank
 * 0's load (node.c moves the times onto rank 0's clock). */
static int send_inner_events(struct hf__engine *e, const struct hf_mpi_span *s, double t0)
{
    uint64_t k = e->nevents;
    struct hf_mpi_inner_event *v = k ? malloc(k * sizeof *v) : NULL;
    if (k && !v)
        return hf_fail(HF_ENOMEM, "out of memory sending %llu bundles", (unsigned long long)k);
    for (size_t i = 0; i < k; i++) {
        const struct hf_event *x = &e->events[i];
        v[i] = (struct hf_mpi_inner_event){
            .device = x->device, .first = (double)(s->first + x->first),
            .count = (double)x->count, .work = x->work, .start = x->start_s - t0,
            .end = x->end_s - t0, .copy_in = x->t.copy_in_s, .kernel = x->t.kernel_s,
            .copy_out = x->t.copy_out_s, .stolen = x->stolen != 0, .outlier = x->outlier != 0,
        };
    }
    int rc = hf_mpi_send_results(e->opts->nodes, &k, sizeof k);
    if (rc == 0 && k)
        rc = hf_mpi_send_results(e->opts->nodes, v, k * sizeof *v);
    free(v);
    return rc;
}

/* The results of the span just run: the regions the app names for the
 * whole span as one bundle, as rank 0's node device built it (the engine's
 * bundler numbers it by the load's chunks; e->chunks holds the span). Called
 * once per span, before its completion is reported, so that a failure here
 * is the span's status. */
static int take_results(struct hf__engine *e, const struct hf_mpi_span *s, struct hf_region *reg,
                        int *nreg)
{
    struct hf_bundle b;
    int rc = hf__engine_bundle(e, 0, &(struct hf_span){.first = 0, .count = s->count}, &b);
    if (rc)
        return rc;
    memset(reg, 0, HF_NODE_REGIONS * sizeof *reg);
    int n = e->app->results ? e->app->results(e->app_ctx, &b, reg, HF_NODE_REGIONS) : 0;
    if (n < 0)
        return n;
    if (n > HF_NODE_REGIONS)
        return hf_fail(HF_EAPP, "app %s names %d result regions, at most %d", e->app->name, n,
                       HF_NODE_REGIONS);
    *nreg = n;
    return 0;
}

/* Sends the span's summary (its regions' sizes, what each of this node's
 * devices did), its result regions, the bundles its devices ran since t0 and
 * its shared-data changes, as node.c receives them. */
static int send_results(struct hf__engine *e, const struct hf_mpi_span *s,
                        const struct hf_region *reg, int nreg, double t0)
{
    struct hf_mpi_summary sum = {.nregions = (uint64_t)nreg};
    for (int i = 0; i < nreg; i++)
        sum.region_bytes[i] = reg[i].bytes;
    for (int d = 0; d < e->ndev; d++)
        sum.inner[d] = (struct hf_mpi_inner){(double)e->stats[d].chunks,
                                             (double)e->stats[d].bundles, e->stats[d].work,
                                             e->stats[d].busy_s};
    int rc = hf_mpi_send_results(e->opts->nodes, &sum, HF_MPI_SUMMARY_BYTES(e->ndev));
    for (int i = 0; i < nreg && rc == 0; i++)
        rc = hf_mpi_send_results(e->opts->nodes, reg[i].ptr, reg[i].bytes);
    if (rc == 0)
        rc = send_inner_events(e, s, t0);
    return rc ? rc : send_changes(e, s);
}

/* [faults] node_fails = RANK:hang|exit[@ROUND]: what this rank does at its
 * first span of rank 0's round ROUND or later (0, the default: its first
 * span, in the standalone passes), *what 0 nothing, 1 hang, 2 exit; for the
 * tests of a node that hangs or dies, before or after rounds finished. */
static int read_node_fault(hf_config_t cfg, int rank, int *what, int *from_round)
{
    *what = 0;
    *from_round = 0;
    const char *v = NULL;
    hf_config_str(cfg, "faults", "node_fails", NULL, &v);
    if (!v)
        return 0;
    int r = -1, n = 0, round = 0;
    char how[8] = "";
    int ok = sscanf(v, "%d:%7[a-z]%n", &r, how, &n) == 2;
    if (ok && v[n] == '@') {
        int m = 0;
        ok = sscanf(v + n + 1, "%d%n", &round, &m) == 1 && round >= 0 && m > 0;
        n += 1 + m;
    }
    if (!ok || v[n] || r < 1 || (strcmp(how, "hang") && strcmp(how, "exit")))
        return hf_fail(HF_ECONFIG, "%s: node_fails = '%s': expected RANK:hang or RANK:exit "
                                   "with RANK >= 1, optionally @ROUND (ROUND >= 0)",
                       hf_config_where(cfg, "faults", "node_fails"), v);
    if (r == rank) {
        *what = strcmp(how, "hang") == 0 ? 1 : 2;
        *from_round = round;
    }
    return 0;
}

int hf_run_serve(const struct hf_run_options *o)
{
    HF_ASSERT_MSG(o && o->nodes && hf_mpi_rank(o->nodes) > 0 && o->engine == HF_ENGINE_REAL,
                  "hf_run_serve: a worker rank's real-engine run");
    struct hf__engine e = {0};
    struct drawn d = {.serial = UINT64_MAX};
    hf_clear_error();
    int rc = hf__run_setup(&e, o);
    if (rc == 0 && !e.app->results && !e.shared)
        rc = hf_fail(HF_EINVAL, "app %s cannot run across nodes (no results, no shared data)",
                     e.app->name);
    int fault = 0, fault_round = 0, pending = 0; /* pending: a draw or update that failed */
    char pending_why[512] = "";
    if (rc == 0)
        rc = read_node_fault(o->cfg, hf_mpi_rank(o->nodes), &fault, &fault_round);
    if (rc == 0)
        rc = send_hello(&e);
    e.keep_events = 1; /* every span's bundles go to rank 0 (send_inner_events) */
    if (rc == 0)
        rc = hf__run_create_sched(&e);
    for (int sub = 0; rc == 0; sub++) {
        struct hf_mpi_span s;
        if ((rc = hf_mpi_wait_span(o->nodes, &s)) || s.stop)
            break;
        if (s.kind == HF_MPI_DRAW || s.kind == HF_MPI_UPDATE) {
            /* A failure here is reported as the next span's status (rank 0
             * waits for a completion, not for this); an update whose bytes
             * did not arrive leaves the transport broken, which ends it. */
            hf_clear_error();
            int st = s.kind == HF_MPI_DRAW ? draw(&e, &d, s.round, s.serial)
                                           : apply_update(&e, &s);
            if (st && !pending) {
                pending = st;
                snprintf(pending_why, sizeof pending_why, "%s", hf_last_error());
            }
            sub--; /* not a round of the node's */
            continue;
        }
        if (fault == 2 && s.round >= fault_round)
            _exit(3); /* a node that dies mid-run: mpirun sees it */
        while (fault == 1 && s.round >= fault_round)
            pause(); /* a node that hangs: rank 0's deadline sees it */
        struct hf_mpi_done done = {.first = s.first, .count = s.count, .round = s.round};
        struct hf_region reg[HF_NODE_REGIONS];
        int nreg = 0;
        double t0 = 0;
        hf_clear_error();
        done.status = pending ? hf_fail(pending, "%s", pending_why)
                              : run_span(&e, &d, &s, sub, &t0, &done.busy_s);
        if (done.status == 0)
            done.status = take_results(&e, &s, reg, &nreg);
        char why[512];
        snprintf(why, sizeof why, "%s", hf_last_error());
        if ((rc = hf_mpi_report(o->nodes, &done)) == 0 && done.status == 0)
            rc = send_results(&e, &s, reg, nreg, t0);
        if (done.status) {
            rc = hf_fail(done.status, "%s", why);
            break;
        }
    }
    char why[768];
    snprintf(why, sizeof why, "%s", rc ? hf_last_error() : "");
    free(d.chunks);
    hf__run_teardown(&e);
    return rc ? hf_fail(rc, "%s", why) : 0;
}

#else /* no MPI: a run is always this process alone */

int hf__nodes_add(struct hf__engine *e)
{
    (void)e;
    return 0;
}

void hf__nodes_stop(struct hf__engine *e)
{
    (void)e;
}

int hf__nodes_describe(struct hf__engine *e, struct hf_run *run)
{
    (void)e, (void)run;
    return 0;
}

int hf__nodes_ranks(const struct hf__engine *e)
{
    (void)e;
    return 1;
}

int hf__nodes_drawn(struct hf__engine *e)
{
    (void)e;
    return 0;
}

void hf__nodes_round_start(struct hf__engine *e)
{
    (void)e;
}

void hf__nodes_take_events(struct hf__engine *e, struct hf_run *run)
{
    (void)e, (void)run;
}

int hf__nodes_round_end(struct hf__engine *e, struct hf_round_stats *rs)
{
    (void)e, (void)rs;
    return 0;
}

int hf_run_serve(const struct hf_run_options *o)
{
    (void)o;
    return hf_fail(HF_EINVAL, "this hetfarm was built without MPI: it cannot serve as a node");
}
#endif
