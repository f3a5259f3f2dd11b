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
 * own devices, with the same scheduler, and waits for spans. A span names
 * chunks [first, first + count) of round r's load (rank 0's serial-th draw:
 * the standalone passes draw round 0 again); the rank draws that load
 * itself (next_load and the partitioner, on the same config, give the same
 * chunks: an app's next_load must depend on the round alone, which is why
 * apps with shared data, whose loads follow the merged state, are refused
 * for now), arms the span's chunks as a round of its own (numbered by the
 * node: its scheduler profiles and adapts over the spans it gets) and runs it
 * on the real engine. It then reports the completion and sends the span's
 * results (struct hf_app.results), which land in place on rank 0 before rank
 * 0 counts the span done: rank 0's verify then checks the whole load.
 *
 * Only real-engine runs go across nodes; a sim run in the same plan runs on
 * rank 0 alone (the sim engine models nodes itself). A node that fails ends
 * the run on rank 0 (node.c) and the CLI ends the job.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_internal.h"
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
    if (!e->app->results)
        return hf_fail(HF_EINVAL,
                       "app %s does not say where a bundle's results are (struct hf_app.results), "
                       "so it cannot run across nodes: run it without mpirun",
                       app);
    if (e->app->shared)
        return hf_fail(HF_EINVAL,
                       "app %s keeps shared data across rounds, and merging it across nodes is "
                       "not built yet: run it without mpirun",
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

void hf__nodes_round_start(struct hf__engine *e)
{
    if (e->nodes && e->nodes->acc)
        memset(e->nodes->acc, 0, (size_t)e->nodes->ninner * sizeof *e->nodes->acc);
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

/* Runs span s of the drawn load as the node's round `sub`; *busy_s is its
 * wall time. */
static int run_span(struct hf__engine *e, struct drawn *d, const struct hf_mpi_span *s, int sub,
                    double *busy_s)
{
    int rc = 0;
    if (d->serial != s->serial && (rc = draw(e, d, s->round, s->serial)))
        return rc;
    if (s->count == 0 || s->first > d->n || s->count > d->n - s->first)
        return hf_fail(HF_EINVAL, "rank 0 handed chunks [%llu, %llu) of round %d, whose load has "
                                  "%zu chunks here: the ranks disagree on the load",
                       (unsigned long long)s->first, (unsigned long long)(s->first + s->count),
                       (int)s->round, d->n);
    if ((rc = hf__engine_hold_chunks(e, s->count)))
        return rc;
    memcpy(e->chunks, d->chunks + s->first, s->count * sizeof *e->chunks);
    e->nchunks = s->count;
    double t0 = hf__now();
    if ((rc = hf__engine_arm_round(e, sub, 0)) == 0)
        rc = hf__engine_execute_round(e);
    *busy_s = hf__now() - t0;
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

/* Sends the results of the span just run: the regions the app names for the
 * whole span, as rank 0 names them for the same bundle (node.c). */
static int send_results(struct hf__engine *e, const struct hf_mpi_span *s)
{
    struct hf_bundle b;
    memset(&b, 0, sizeof b);
    int rc = (e->app->bundle ? e->app->bundle : hf_bundle_merge)(e->app_ctx, e->chunks,
                                                                   s->count, &b);
    if (rc)
        return rc;
    b.load = &e->load;
    b.first = s->first;
    b.count = s->count;
    struct hf_region reg[HF_NODE_REGIONS];
    int n = e->app->results(e->app_ctx, &b, reg, HF_NODE_REGIONS);
    if (n < 0)
        return n;
    for (int i = 0; i < n && rc == 0; i++)
        rc = hf_mpi_send_results(e->opts->nodes, reg[i].ptr, reg[i].bytes);
    /* What each of this node's devices did in the span (node.c sums it). */
    struct hf_mpi_inner in[HF_NODE_DEVICES];
    for (int d = 0; d < e->ndev; d++)
        in[d] = (struct hf_mpi_inner){(double)e->stats[d].chunks, (double)e->stats[d].bundles,
                                      e->stats[d].work, e->stats[d].busy_s};
    return rc ? rc : hf_mpi_send_results(e->opts->nodes, in, (size_t)e->ndev * sizeof *in);
}

/* [faults] node_fails = RANK:hang|exit: what this rank does at its first span
 * (0 nothing, 1 hang, 2 exit), for the tests of a node that hangs or dies. */
static int read_node_fault(hf_config_t cfg, int rank, int *what)
{
    *what = 0;
    const char *v = NULL;
    hf_config_str(cfg, "faults", "node_fails", NULL, &v);
    if (!v)
        return 0;
    int r = -1, n = 0;
    char how[8] = "";
    if (sscanf(v, "%d:%7[a-z]%n", &r, how, &n) != 2 || v[n] || r < 1 ||
        (strcmp(how, "hang") && strcmp(how, "exit")))
        return hf_fail(HF_ECONFIG, "%s: node_fails = '%s': expected RANK:hang or RANK:exit "
                                   "with RANK >= 1",
                       hf_config_where(cfg, "faults", "node_fails"), v);
    if (r == rank)
        *what = strcmp(how, "hang") == 0 ? 1 : 2;
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
    if (rc == 0 && (!e.app->results || e.shared))
        rc = hf_fail(HF_EINVAL, "app %s cannot run across nodes (no results, or shared data)",
                     e.app->name);
    int fault = 0;
    if (rc == 0)
        rc = read_node_fault(o->cfg, hf_mpi_rank(o->nodes), &fault);
    if (rc == 0)
        rc = send_hello(&e);
    if (rc == 0)
        rc = hf__run_create_sched(&e);
    for (int sub = 0; rc == 0; sub++) {
        struct hf_mpi_span s;
        if ((rc = hf_mpi_wait_span(o->nodes, &s)) || s.stop)
            break;
        if (fault == 2)
            _exit(3); /* a node that dies mid-run: mpirun sees it */
        while (fault == 1)
            pause(); /* a node that hangs: rank 0's deadline sees it */
        struct hf_mpi_done done = {.first = s.first, .count = s.count, .round = s.round};
        hf_clear_error();
        done.status = run_span(&e, &d, &s, sub, &done.busy_s);
        char why[512];
        snprintf(why, sizeof why, "%s", hf_last_error());
        if ((rc = hf_mpi_report(o->nodes, &done)) == 0 && done.status == 0)
            rc = send_results(&e, &s);
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

void hf__nodes_round_start(struct hf__engine *e)
{
    (void)e;
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
