/* pagerank.c - pull PageRank: the hetfarm template filled in, one round per
 * Jacobi sweep over every vertex.
 *
 * DESIGN
 * ------
 * A round recomputes every rank from the previous round's ranks: vertex v
 * pulls rank(u) / outdeg(u) from each in-neighbour u. That needs two copies of
 * the ranks, the one being read and the one being written, and a GPU must see
 * the previous round's ranks of EVERY vertex, not just of its own range. Both
 * copies therefore live in ONE OWNED shared array of 2 * nv doubles (hetfarm.h,
 * "Shared data"): round r reads half (r + 1) & 1 and writes half r & 1, and
 * its units are the element indices of the half it writes, (r & 1) * nv + v.
 * That keeps the OWNED contract exactly (a bundle over units [b, e) writes
 * elements [b, e) and nothing else, and the driver copies exactly those back),
 * and at the round's end the framework sends the merged array to every GPU,
 * so every replica holds the new ranks in the half the next round reads. The
 * price is that the push moves both halves (2 * nv * 8 bytes per GPU per
 * round) where only one changed; a push of the ranges a GPU did not compute
 * would halve it, and is the framework's to add, not this app's.
 *
 * What is stored is not the rank but rank(v) / max(outdeg(v), 1), what v
 * gives each out-neighbour, so that an edge costs one load and one add. A
 * dangling vertex (outdeg 0) is nobody's in-neighbour, so its entry is its
 * rank, and the dangling mass of a round is the sum of those entries; with
 * base = (1 - d) / n + d * dangling / n a vertex's new rank is base +
 * d * (sum of its in-neighbours' entries), and the ranks keep summing to 1.
 * next_load reads the host copy (merged) between rounds: the L1 change of the
 * last sweep (stop below [load] tol, or after [load] max_iters sweeps) and
 * the next round's base, summed over the host's team in fixed blocks added
 * in order, so that a run's sweeps do not depend on its team. Pull needs
 * in-edges: a symmetric graph is its own transpose, a directed one
 * (symmetrise = no) gets a transposed CSR here, and that CSR is what every
 * GPU keeps. Chunks are vertex ranges costed by their in-edges
 * (hf__vertex_partition), shifted into the half being written.
 *
 * On the CPU a bundle is one parallel region over its vertices, but the
 * vertices of more than HF_PR_PIECE in-edges (a scale-free graph's hubs: one
 * may hold 10^5 of them) are cut into pieces of HF_PR_PIECE edges that any
 * thread sums, and each hub then adds its pieces' sums in piece order, so
 * the result does not depend on the thread count. Without the cut, the
 * thread that drew a hub ran alone at every bundle's end while the rest of
 * the team waited: one barrier per bundle, several bundles per sweep.
 *
 * verify checks the finished run: against the serial reference (push style,
 * on the out-edges, the same number of iterations) to 1e-6 relative up to
 * [load] verify_full vertices; beyond that, that the ranks sum to 1 and that
 * a sample of vertices satisfies the last sweep's equation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/placement/graph_place.h"
#include "pagerank.h"
#ifdef HF_HAVE_CUDA
#include "hf_cuda.h"
#endif

/* Builds the in-edge CSR of g (sorted lists, since u runs ascending). */
static int transpose(const struct hf_graph *g, struct hf_graph *t)
{
    memset(t, 0, sizeof *t);
    t->nv = g->nv;
    t->ne = g->ne;
    t->base = g->base;
    t->offsets = calloc(g->nv + 1, sizeof *t->offsets);
    t->adj = malloc((g->ne ? g->ne : 1) * sizeof *t->adj);
    uint64_t *fill = malloc(g->nv * sizeof *fill);
    if (!t->offsets || !t->adj || !fill) {
        free(fill);
        return hf_fail(HF_ENOMEM, "pagerank: out of memory for the transposed graph");
    }
    for (uint64_t j = 0; j < g->ne; j++)
        t->offsets[g->adj[j] + 1]++;
    for (uint64_t v = 0; v < g->nv; v++)
        t->offsets[v + 1] += t->offsets[v];
    memcpy(fill, t->offsets, g->nv * sizeof *fill);
    for (uint64_t u = 0; u < g->nv; u++)
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++)
            t->adj[fill[g->adj[j]]++] = (hf_vid_t)u;
    free(fill);
    return 0;
}

/* Lists the heavy vertices of the in-edge graph and cuts their in-edges
 * into pieces (see the design note). */
static int heavy_pieces(struct hf_pagerank *p)
{
    const struct hf_graph *in = &p->in;
    size_t nheavy = 0, npieces = 0;
    for (uint64_t v = 0; v < in->nv; v++) {
        uint64_t d = hf_graph_degree(in, (hf_vid_t)v);
        if (d > HF_PR_PIECE) {
            nheavy++;
            npieces += (d + HF_PR_PIECE - 1) / HF_PR_PIECE;
        }
    }
    p->heavy = malloc((nheavy ? nheavy : 1) * sizeof *p->heavy);
    p->piece_first = malloc((nheavy + 1) * sizeof *p->piece_first);
    p->piece_owner = malloc((npieces ? npieces : 1) * sizeof *p->piece_owner);
    p->piece_sum = malloc((npieces ? npieces : 1) * sizeof *p->piece_sum);
    if (!p->heavy || !p->piece_first || !p->piece_owner || !p->piece_sum)
        return hf_fail(HF_ENOMEM, "pagerank: out of memory for %zu heavy vertices", nheavy);
    size_t k = 0, pc = 0;
    for (uint64_t v = 0; v < in->nv; v++) {
        uint64_t d = hf_graph_degree(in, (hf_vid_t)v);
        if (d <= HF_PR_PIECE)
            continue;
        p->heavy[k] = (uint32_t)v;
        p->piece_first[k] = pc;
        for (uint64_t e = 0; e < d; e += HF_PR_PIECE)
            p->piece_owner[pc++] = (uint32_t)k;
        k++;
    }
    p->piece_first[k] = pc;
    p->nheavy = nheavy;
    return 0;
}

/* The index of the first heavy vertex >= v. */
static size_t heavy_lower_bound(const struct hf_pagerank *p, size_t v)
{
    size_t lo = 0, hi = p->nheavy;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->heavy[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int pr_create(void **ctx, hf_config_t cfg)
{
    struct hf_pagerank *p = calloc(1, sizeof *p);
    if (!p)
        return hf_fail(HF_ENOMEM, "pagerank: out of memory");
    *ctx = p;
    int rc = hf_config_double(cfg, "load", "damping", 0.85, 0.0, 1.0, &p->damping);
    if (!rc)
        rc = hf_config_double(cfg, "load", "tol", 1e-6, -1e300, 1e300, &p->tol);
    if (!rc)
        rc = hf_config_long(cfg, "load", "max_iters", 100, 1, 1L << 30, &p->max_iters);
    if (!rc)
        rc = hf_config_long(cfg, "load", "verify_full", 1L << 20, 0, __LONG_MAX__, &p->verify_full);
    if (rc)
        return rc;
    if (!(p->tol > 0))
        return hf_fail(HF_ECONFIG, "%s: [load] tol = %g: must be > 0",
                       hf_config_where(cfg, "load", "tol"), p->tol);
    if ((rc = hf__gapp_create(&p->ga, cfg, 0, 0)) || (rc = hf__gapp_place(&p->ga, cfg)))
        return rc;
    const struct hf_graph *g = &p->ga.g;
    if (g->symmetric) {
        p->in = *g; /* shallow: the same arrays */
    } else {
        if ((rc = transpose(g, &p->in)))
            return rc;
        p->own_in = 1;
    }
    p->outdeg = malloc(g->nv * sizeof *p->outdeg);
    p->state = malloc(2 * g->nv * sizeof *p->state);
    if (!p->outdeg || !p->state)
        return hf_fail(HF_ENOMEM, "pagerank: out of memory for %llu ranks",
                       (unsigned long long)g->nv);
    for (uint64_t v = 0; v < g->nv; v++)
        p->outdeg[v] = (uint32_t)hf_graph_degree(g, (hf_vid_t)v);
    return heavy_pieces(p);
}

/* The devices, for the automatic grain (hf__gapp_grain). */
static int pr_setup(void *ctx, const struct hf_devices *devs)
{
    struct hf_pagerank *p = ctx;
    return hf__gapp_setup(&p->ga, devs, 1);
}

static int pr_shared(void *ctx, struct hf_shared *out, int cap)
{
    struct hf_pagerank *p = ctx;
    uint64_t nv = p->in.nv, ne = p->in.ne;
    if (cap < 4)
        return hf_fail(HF_EAPP, "pagerank: no room for 4 shared arrays");
    out[PR_OFFSETS] = (struct hf_shared){"pagerank.in_offsets", p->in.offsets, nv + 1, HF_ELEM_U64,
                                         HF_SHARED_READONLY};
    out[PR_ADJ] = (struct hf_shared){"pagerank.in_adj", p->in.adj, ne ? ne : 1, HF_ELEM_U32,
                                     HF_SHARED_READONLY};
    out[PR_OUTDEG] =
        (struct hf_shared){"pagerank.outdeg", p->outdeg, nv, HF_ELEM_U32, HF_SHARED_READONLY};
    out[PR_STATE] =
        (struct hf_shared){"pagerank.state", p->state, 2 * nv, HF_ELEM_F64, HF_SHARED_OWNED};
    return 4;
}

/* The L1 change between the halves (in ranks) and the dangling mass of half
 * h, summed per block over the host's team and the blocks added in order
 * (graph_app.h): the same sums whatever the team, where OpenMP's reduction
 * adds the threads' sums in the order they finish. */
static void sweep_stats(const struct hf_pagerank *p, int h, double *delta, double *dangling)
{
    const double *cur = p->state + (size_t)h * p->ga.g.nv;
    const double *old = p->state + (size_t)(h ^ 1) * p->ga.g.nv;
    size_t nv = p->ga.g.nv;
    double dl[HF_GAPP_BLOCKS], dg[HF_GAPP_BLOCKS];
#pragma omp parallel for schedule(static) if (nv >= HF_GAPP_TEAM_MIN)
    for (int b = 0; b < HF_GAPP_BLOCKS; b++) {
        size_t lo, hi;
        double l = 0, g = 0;
        hf__gapp_block(nv, b, &lo, &hi);
        for (size_t v = lo; v < hi; v++) {
            uint32_t d = p->outdeg[v];
            l += fabs(cur[v] - old[v]) * (double)(d ? d : 1);
            if (d == 0)
                g += cur[v];
        }
        dl[b] = l;
        dg[b] = g;
    }
    *delta = *dangling = 0;
    for (int b = 0; b < HF_GAPP_BLOCKS; b++) {
        *delta += dl[b];
        *dangling += dg[b];
    }
}

/* sweep_stats of round r's sweep, once: verify and the next load both read
 * them, and each pass reads both halves and the degrees (kron-24 on an H100's
 * 16 cores: 8 ms a pass, a round of the GPU alone is 10). */
static void round_stats(struct hf_pagerank *p, int round, double *delta, double *dangling)
{
    if (p->stats_round != round) {
        sweep_stats(p, round & 1, &p->stats_delta, &p->stats_dangling);
        p->stats_round = round;
    }
    *delta = p->stats_delta;
    *dangling = p->stats_dangling;
}

static int pr_next_load(void *ctx, struct hf_load *load)
{
    struct hf_pagerank *p = ctx;
    int64_t nv = (int64_t)p->ga.g.nv;
    double delta = 0, dangling = 0;
    if (load->round == 0) {
        double *state = p->state;
        const uint32_t *outdeg = p->outdeg;
        int64_t ndangling = 0; /* counted: an integer sum is the same whatever the team */
#pragma omp parallel for reduction(+ : ndangling) schedule(static)
        for (int64_t v = 0; v < nv; v++) {
            uint32_t d = outdeg[v];
            state[v] = 0;
            state[nv + v] = 1.0 / (double)nv / (double)(d ? d : 1);
            ndangling += d == 0;
        }
        dangling = (double)ndangling / (double)nv;
        p->stats_round = -1;
        p->finished = 0;
        p->approximate = 0;
        p->last_delta = 0;
        hf__gapp_traffic_reset(&p->ga);
    } else {
        round_stats(p, load->round - 1, &delta, &dangling);
        p->last_delta = delta;
        if (delta < p->tol || load->round >= p->max_iters) {
            p->finished = 1;
            return 0;
        }
    }
    p->last_round = load->round;
    p->base = (1.0 - p->damping) / (double)nv + p->damping * dangling / (double)nv;
    load->units = nv;
    load->work = (double)p->in.ne + (double)nv;
    load->bytes = 0; /* the framework moves the ranks: nothing is staged */
    return 1;
}

/* Vertex ranges costed by their in-edges, shifted into the half this round writes. */
static size_t pr_partition(void *ctx, const struct hf_load *load, size_t grain,
                           struct hf_chunk *out, size_t cap)
{
    struct hf_pagerank *p = ctx;
    size_t n = hf__vertex_partition(&p->in, load, hf__gapp_grain(&p->ga, load, grain), out, cap);
    size_t off = (size_t)(load->round & 1) * p->ga.g.nv;
    for (size_t i = 0; out && i < n && i < cap; i++) {
        out[i].begin += off;
        out[i].end += off;
    }
    return n;
}

/* What vertex v passes to each out-neighbour next sweep, from the sum of its
 * in-neighbours' contributions (the pull sweep stores contributions, not ranks). */
static inline double contribution(const struct hf_pagerank *p, size_t v, double sum)
{
    uint32_t d = p->outdeg[v];
    return (p->base + p->damping * sum) / (double)(d ? d : 1);
}

static int pr_run_cpu(void *ctx, const struct hf_bundle *bu, int nthreads)
{
    struct hf_pagerank *p = ctx;
    const struct hf_graph *in = &p->in;
    size_t nv = p->ga.g.nv, off = (size_t)(bu->load->round & 1) * nv;
    const double *prev = p->state + (nv - off); /* the other half */
    double *next = p->state + off;
    HF_ASSERT_MSG(bu->begin >= off && bu->end <= off + nv, "pagerank: a bundle outside its half");
    size_t vb = bu->begin - off, ve = bu->end - off;
    size_t kb = heavy_lower_bound(p, vb), ke = heavy_lower_bound(p, ve);
    size_t pb = p->piece_first[kb], pe = p->piece_first[ke];
#pragma omp parallel num_threads(nthreads)
    {
        /* The light vertices, and the heavy ones' pieces, nowait: the
         * barrier after the pieces covers both. */
#pragma omp for schedule(dynamic, 256) nowait
        for (size_t v = vb; v < ve; v++) {
            uint64_t b = in->offsets[v], e = in->offsets[v + 1];
            if (e - b > HF_PR_PIECE)
                continue;
            double sum = 0;
            for (uint64_t j = b; j < e; j++)
                sum += prev[in->adj[j]];
            next[v] = contribution(p, v, sum);
        }
#pragma omp for schedule(dynamic, 1)
        for (size_t i = pb; i < pe; i++) {
            size_t k = p->piece_owner[i];
            uint64_t e = in->offsets[p->heavy[k] + 1];
            uint64_t b = in->offsets[p->heavy[k]] + (uint64_t)(i - p->piece_first[k]) * HF_PR_PIECE;
            e = b + HF_PR_PIECE < e ? b + HF_PR_PIECE : e;
            double sum = 0;
            for (uint64_t j = b; j < e; j++)
                sum += prev[in->adj[j]];
            p->piece_sum[i] = sum;
        }
#pragma omp for schedule(static)
        for (size_t k = kb; k < ke; k++) {
            double sum = 0;
            for (size_t i = p->piece_first[k]; i < p->piece_first[k + 1]; i++)
                sum += p->piece_sum[i];
            next[p->heavy[k]] = contribution(p, p->heavy[k], sum);
        }
    }
    return 0;
}

#ifdef HF_HAVE_CUDA
static int pr_run_cuda(void *ctx, const struct hf_bundle *piece, struct hf_cuda *gpu)
{
    return hf__pagerank_cuda(ctx, piece, gpu);
}
#endif

/* Whether |a - b| is within `rel` of b (with a floor for ranks near 0). */
static int close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b) + 1e-300;
}

/* The large-graph check: the ranks sum to 1 and sampled vertices satisfy the
 * sweep's equation against the previous half. */
static int check_sound(const struct hf_pagerank *p, int h)
{
    uint64_t nv = p->ga.g.nv;
    double sum = 0;
    for (uint64_t v = 0; v < nv; v++)
        sum += hf__pagerank_rank(p, h, (hf_vid_t)v);
    if (fabs(sum - 1.0) > 1e-6)
        return hf_fail(HF_EVERIFY, "pagerank: the ranks sum to %.12g, not 1", sum);
    const double *prev = p->state + (size_t)(h ^ 1) * nv;
    uint64_t step = nv / 1000 + 1;
    for (uint64_t v = 7 % nv; v < nv; v += step) {
        double s = 0;
        for (uint64_t j = p->in.offsets[v]; j < p->in.offsets[v + 1]; j++)
            s += prev[p->in.adj[j]];
        double want = p->base + p->damping * s, got = hf__pagerank_rank(p, h, (hf_vid_t)v);
        if (!close_to(got, want, 1e-9))
            return hf_fail(HF_EVERIFY,
                           "pagerank: vertex %llu has rank %.12g, its in-neighbours "
                           "give %.12g",
                           (unsigned long long)hf__gapp_input_id(&p->ga, (hf_vid_t)v) +
                               (uint64_t)p->ga.g.base,
                           got, want);
    }
    return 0;
}

static int pr_verify(void *ctx, const struct hf_load *load)
{
    struct hf_pagerank *p = ctx;
    int h = load->round & 1;
    double delta, dangling;
    round_stats(p, load->round, &delta, &dangling);
    if (!(delta < p->tol) && load->round + 1 < p->max_iters)
        return 0; /* not the last sweep: checked when the run has converged */
    const struct hf_graph *g = &p->ga.g;
    if ((long)g->nv > p->verify_full)
        return check_sound(p, h);
    double *ref = malloc(g->nv * sizeof *ref);
    if (!ref)
        return hf_fail(HF_ENOMEM, "pagerank: out of memory for the reference");
    int rc = hf__pagerank_ref(g, p->damping, load->round + 1, ref);
    for (uint64_t v = 0; v < g->nv && !rc; v++) {
        double got = hf__pagerank_rank(p, h, (hf_vid_t)v);
        if (!close_to(got, ref[v], 1e-6))
            rc = hf_fail(HF_EVERIFY,
                         "pagerank: vertex %llu has rank %.12g after %d iterations, "
                         "the reference says %.12g",
                         (unsigned long long)hf__gapp_input_id(&p->ga, (hf_vid_t)v) +
                             (uint64_t)g->base,
                         got, load->round + 1, ref[v]);
    }
    free(ref);
    return rc;
}

static void rank_value(void *ctx, hf_vid_t v, char *buf, size_t len)
{
    const struct hf_pagerank *p = ctx;
    snprintf(buf, len, "%.9g", hf__pagerank_rank(p, p->last_round & 1, v));
}

static void pr_signature(void *ctx, char *buf, size_t len)
{
    const struct hf_pagerank *p = ctx;
    snprintf(buf, len, "%s nv=%llu ne=%llu d=%g", p->ga.g.source_desc,
             (unsigned long long)p->ga.g.nv, (unsigned long long)p->ga.g.ne, p->damping);
}

/* [run] rounds stopped the sweeps before the tolerance (struct
 * hf_app.stopped): the ranks of the last sweep are an approximation, written
 * (the run is marked converged: false). The probe drew sweep next->round and
 * measured the change of the one before, last_delta: the figures and the
 * output go back to that last sweep run. */
static int pr_stopped(void *ctx, const struct hf_load *next, char *left, size_t len)
{
    struct hf_pagerank *p = ctx;
    p->last_round = next->round - 1;
    p->approximate = 1;
    snprintf(left, len, "the last sweep changed the ranks by %.3g (L1), tol = %g", p->last_delta,
             p->tol);
    return HF_STOP_APPROXIMATE;
}

static void pr_teardown(void *ctx)
{
    struct hf_pagerank *p = ctx;
    if (!p)
        return;
    if ((p->finished || p->approximate) && hf__gapp_write_values(&p->ga, p, rank_value))
        fprintf(stderr, "hetfarm: pagerank: %s\n", hf_last_error());
    if (p->own_in)
        hf_graph_free(&p->in);
    free(p->outdeg);
    free(p->state);
    free(p->heavy);
    free(p->piece_first);
    free(p->piece_owner);
    free(p->piece_sum);
    hf__gapp_destroy(&p->ga);
    free(p);
}

/* Cross-device traffic (app/graph_traffic.c): each bundle's work for its device ... */
static int pr_collect(void *ctx, const struct hf_bundle *b)
{
    hf__gapp_traffic_add(&((struct hf_pagerank *)ctx)->ga, b);
    return 0;
}

/* ... and a sweep changes every rank. */
static int pr_round_figures(void *ctx, const struct hf_load *load, struct hf_figure *out,
                            int cap)
{
    (void)load;
    struct hf_pagerank *p = ctx;
    return hf__gapp_traffic_round(&p->ga, NULL, p->ga.g.nv, out, cap);
}

/* The sweeps, the last L1 change and the run's traffic, in results.json. */
static int pr_figures(void *ctx, double seconds, struct hf_figure *out, int cap)
{
    struct hf_pagerank *p = ctx;
    if (cap < 3)
        return 0;
    out[0] = (struct hf_figure){"sweeps", (double)p->last_round + 1, ""};
    out[1] = (struct hf_figure){"last_delta", p->last_delta, "L1"};
    out[2] = (struct hf_figure){"seconds", seconds, "s"};
    return 3 + hf__gapp_traffic_figures(&p->ga, out + 3, cap - 3);
}

/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key pagerank_keys[] = {
    HF_GAPP_KEYS,
    HF_GAPP_PLACEMENT_KEYS,
    {NULL, "damping", HF_KEY_NUM, 0, 1, 0, NULL, "0.85", "damping factor d"},
    {NULL, "tol", HF_KEY_NUM, 0, 1e9, HF_KEY_MIN_OPEN, NULL, "1e-6",
     "stop when the L1 change of a sweep is below this"},
    {NULL, "max_iters", HF_KEY_INT, 1, 1073741824, 0, NULL, "100", "at most this many sweeps"},
    {NULL, "verify_full", HF_KEY_INT, 0, 9.2233720368547748e18, 0, NULL, "1048576",
     "vertices up to which verify compares with the reference"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_pagerank = {
    .keys = pagerank_keys,
    .name = "pagerank",
    .summary = "pull PageRank to a tolerance, one round per sweep",
    .create = pr_create,
    .next_load = pr_next_load,
    .partition = pr_partition,
    .setup = pr_setup,
    .run_cpu = pr_run_cpu,
#ifdef HF_HAVE_CUDA
    .run_cuda = pr_run_cuda,
#endif
    .verify = pr_verify,
    .teardown = pr_teardown,
    .signature = pr_signature,
    .shared = pr_shared,
    .collect = pr_collect,
    .figures = pr_figures,
    .round_figures = pr_round_figures,
    .stopped = pr_stopped,
    .default_grain = 0, /* hf__gapp_grain */
};
