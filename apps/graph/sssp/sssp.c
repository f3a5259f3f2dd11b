/* sssp.c - single-source shortest paths: the hetfarm template filled in, one
 * round per relaxation step of a frontier, near-far buckets optional.
 *
 * DESIGN
 * ------
 * The distances are a shared MIN array of floats (hetfarm.h, "Shared data"):
 * every device lowers distances in its own copy and records what it lowered,
 * the framework merges the copies with min at the round's end and moves only
 * what changed. The CSR (with its weights; an unweighted graph has weight 1)
 * is resident on every GPU.
 *
 * Round r relaxes the out-edges of its frontier (units = frontier items,
 * chunk work = their edges, as BFS's push rounds): dist[v] = min(dist[v],
 * dist[u] + w) with an atomic min (CPU: compare-and-swap on the float; GPU:
 * atomicMin on the int bits, which order like the floats since distances are
 * never negative), recording v when it went down. The next frontier is what
 * changed anywhere (hf_shared_last_changes): a vertex lowered in round r is
 * expanded again in round r + 1 with its merged distance, so when a round
 * changes nothing every edge satisfies dist[v] <= dist[u] + w and the
 * distances are exact (Bellman-Ford with a frontier, chaotic relaxation).
 *
 * With [load] delta > 0 the frontier is split near-far (Davidson et al.
 * 2014): of what changed, only vertices closer than the current threshold
 * are expanded now, the others wait on the host in a far pile (each vertex
 * once). When no near vertex is left the threshold moves to the bucket of
 * the closest waiting vertex and the pile is split again; a waiting vertex
 * whose distance is the one it was last expanded with is dropped (nothing
 * new to push). Expanding in distance order wastes fewer relaxations on
 * distances that will be lowered again, at the price of more rounds: the
 * trade of delta-stepping. delta = auto (the default) takes Davidson et al.'s
 * width, mean weight * 32 / mean degree; delta = 0 is plain Bellman-Ford.
 *
 * verify checks once the run is complete (a round changed nothing and the
 * far pile holds nothing new): against Dijkstra (sssp_ref.c) to 1e-5 relative
 * up to [load] verify_full vertices; beyond that, soundly in one pass:
 * dist[src] = 0, no edge can still relax, and (symmetric graphs) every
 * reached vertex but the source has a neighbour that gives it its distance.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sssp.h"
#ifdef HF_HAVE_CUDA
#include "hf_cuda.h"
#endif

/* Davidson et al.'s bucket width: the mean weight times a warp's width over
 * the mean degree, so that a bucket's vertices bring about a warp's worth of
 * edges per vertex's worth of distance. Measured on 2 CPU threads it beat
 * plain Bellman-Ford on both families (kron scale 18 ~2x, 1024^2 grid ~10x). */
static double auto_delta(const struct hf_graph *g)
{
    double wsum = 0;
    for (uint64_t j = 0; j < g->ne; j++)
        wsum += g->weights ? g->weights[j] : 1.0;
    double mean_w = g->ne ? wsum / (double)g->ne : 1.0;
    double mean_deg = (double)g->ne / (double)g->nv;
    double d = mean_w * 32.0 / (mean_deg > 1.0 ? mean_deg : 1.0);
    return d > 0 ? d : 1.0;
}

static int sssp_create(void **ctx, hf_config_t cfg)
{
    struct hf_sssp *s = calloc(1, sizeof *s);
    if (!s)
        return hf_fail(HF_ENOMEM, "sssp: out of memory");
    *ctx = s;
    const char *delta;
    int rc = hf_config_str(cfg, "load", "delta", "auto", &delta);
    int autodelta = !rc && strcmp(delta, "auto") == 0;
    if (!rc && !autodelta)
        rc = hf_config_double(cfg, "load", "delta", 0.0, 0.0, 1e30, &s->delta);
    if (!rc)
        rc = hf_config_long(cfg, "load", "verify_full", 1L << 21, 0, __LONG_MAX__, &s->verify_full);
    if (rc)
        return rc;
    if ((rc = hf__gapp_create(&s->ga, cfg, 1, 1)))
        return rc;
    if (autodelta)
        s->delta = auto_delta(&s->ga.g);
    uint64_t nv = s->ga.g.nv;
    s->dist = malloc(nv * sizeof *s->dist);
    s->far = malloc(nv * sizeof *s->far);
    s->far_next = malloc(nv * sizeof *s->far_next);
    s->in_far = malloc(nv);
    s->expanded = malloc(nv * sizeof *s->expanded);
    if (!s->dist || !s->far || !s->far_next || !s->in_far || !s->expanded)
        return hf_fail(HF_ENOMEM, "sssp: out of memory for %llu distances", (unsigned long long)nv);
    return hf__frontier_reserve(&s->fr, nv);
}

/* The devices, for the automatic grain (hf__gapp_grain). */
static int sssp_setup(void *ctx, const struct hf_devices *devs)
{
    struct hf_sssp *s = ctx;
    return hf__gapp_setup(&s->ga, devs, 0);
}

static int sssp_shared(void *ctx, struct hf_shared *out, int cap)
{
    struct hf_sssp *s = ctx;
    int n = hf__gapp_shared_csr(&s->ga, 1, out, cap);
    if (n < 0 || n >= cap)
        return n < 0 ? n : hf_fail(HF_EAPP, "sssp: no room for the distance array");
    s->s_dist = n;
    out[n] = (struct hf_shared){"sssp.dist", s->dist, s->ga.g.nv, HF_ELEM_F32, HF_SHARED_MIN};
    return n + 1;
}

/* Where vertex v of a list goes: 1 the frontier, 2 the far pile, 0 neither.
 * A changed vertex (pile 0) below the threshold is expanded, else it joins
 * the pile unless it waits there already; a vertex of the pile (pile 1) is
 * dropped when its distance is the one it was last expanded with, expanded
 * below the threshold, else kept. */
static int place(const struct hf_sssp *s, hf_vid_t v, int pile)
{
    if (pile && s->dist[v] == s->expanded[v])
        return 0;
    if (s->dist[v] < s->thresh)
        return 1;
    return pile || !s->in_far[v] ? 2 : 0;
}

/* Sorts the n vertices of `list` (each once) into the frontier and the far
 * pile, in the list's order: a round's changes (pile 0) are added to both;
 * the pile itself (pile 1, list = far) is rewritten into far_next, which then
 * becomes the pile. From HF_GAPP_TEAM_MIN vertices on the list is split over
 * the host's team in blocks (graph_app.h), counted, then written at each
 * block's offset: one vertex at a time it was 40-90 ms of an H100 host's
 * kron-22 rounds of 1-4M changes (random reads of dist and in_far). */
static void sort_out(struct hf_sssp *s, const hf_vid_t *list, size_t n, int pile)
{
    hf_vid_t *far = pile ? s->far_next : s->far;
    size_t near_at[HF_GAPP_BLOCKS + 1] = {0}, far_at[HF_GAPP_BLOCKS + 1] = {0};
#pragma omp parallel for schedule(static) if (n >= HF_GAPP_TEAM_MIN)
    for (int b = 0; b < HF_GAPP_BLOCKS; b++) {
        size_t lo, hi, to[3] = {0};
        hf__gapp_block(n, b, &lo, &hi);
        for (size_t k = lo; k < hi; k++)
            to[place(s, list[k], pile)]++;
        near_at[b + 1] = to[1];
        far_at[b + 1] = to[2];
    }
    near_at[0] = s->fr.n;
    far_at[0] = pile ? 0 : s->nfar;
    for (int b = 0; b < HF_GAPP_BLOCKS; b++) {
        near_at[b + 1] += near_at[b];
        far_at[b + 1] += far_at[b];
    }
#pragma omp parallel for schedule(static) if (n >= HF_GAPP_TEAM_MIN)
    for (int b = 0; b < HF_GAPP_BLOCKS; b++) {
        size_t lo, hi, near = near_at[b], nfar = far_at[b];
        hf__gapp_block(n, b, &lo, &hi);
        for (size_t k = lo; k < hi; k++) {
            hf_vid_t v = list[k];
            int to = place(s, v, pile);
            if (pile && to != 2)
                s->in_far[v] = 0; /* it leaves the pile */
            if (to == 1) {
                s->expanded[v] = s->dist[v];
                s->fr.v[near++] = v;
            } else if (to == 2) {
                s->in_far[v] = 1;
                far[nfar++] = v;
            }
        }
        HF_ASSERT_MSG(near == near_at[b + 1] && nfar == far_at[b + 1],
                      "sssp: a list named a vertex twice");
    }
    s->fr.n = near_at[HF_GAPP_BLOCKS];
    s->nfar = far_at[HF_GAPP_BLOCKS];
    if (pile) {
        s->far_next = s->far;
        s->far = far;
    }
}

/* Moves the threshold to the bucket of the closest waiting vertex and takes
 * the far pile's vertices below it, dropping those with nothing new (the
 * minimum and the move over the host's team, as sort_out). Returns 0 when
 * the pile held nothing new: then every vertex is dropped, and the run is
 * done. */
static int next_bucket(struct hf_sssp *s)
{
    float best = INFINITY;
    size_t n = s->nfar;
#pragma omp parallel for schedule(static) reduction(min : best) if (n >= HF_GAPP_TEAM_MIN)
    for (size_t k = 0; k < n; k++) {
        hf_vid_t v = s->far[k];
        if (s->dist[v] != s->expanded[v] && s->dist[v] < best)
            best = s->dist[v];
    }
    if (best < INFINITY)
        s->thresh = (float)((floor((double)best / s->delta) + 1) * s->delta);
    sort_out(s, s->far, n, 1);
    return best < INFINITY;
}

static int sssp_next_load(void *ctx, struct hf_load *load)
{
    struct hf_sssp *s = ctx;
    const struct hf_graph *g = &s->ga.g;
    s->fr.n = 0;
    if (load->round == 0) {
        int64_t nv = (int64_t)g->nv;
#pragma omp parallel for schedule(static) if (g->nv >= HF_GAPP_TEAM_MIN)
        for (int64_t v = 0; v < nv; v++) {
            s->dist[v] = INFINITY;
            s->expanded[v] = -1.0f; /* never expanded: equal to no distance */
            s->in_far[v] = 0;
        }
        s->nfar = 0;
        s->dist[s->ga.src] = 0;
        s->thresh = s->delta > 0 ? (float)s->delta : INFINITY;
        s->finished = 0;
        s->edges_relaxed = 0;
        s->expanded[s->ga.src] = 0;
        s->fr.v[s->fr.n++] = s->ga.src;
    } else {
        size_t n;
        const uint32_t *changed = hf_shared_last_changes(load, s->s_dist, &n);
        sort_out(s, changed, n, 0);
        while (s->fr.n == 0)
            if (s->nfar == 0 || !next_bucket(s)) {
                s->finished = 1;
                return 0;
            }
    }
    uint64_t m_f = hf__frontier_prefix(&s->fr, g);
    s->edges_relaxed += m_f;
    load->units = s->fr.n;
    load->work = (double)m_f + (double)s->fr.n;
    load->bytes = 12.0 * (double)s->fr.n; /* the frontier slice and its prefix sums */
    return 1;
}

static size_t sssp_partition(void *ctx, const struct hf_load *load, size_t grain,
                             struct hf_chunk *out, size_t cap)
{
    struct hf_sssp *s = ctx;
    return hf__frontier_partition(&s->fr, load, hf__gapp_grain(&s->ga, load, grain), out, cap);
}

/* dist[v] = min(dist[v], d); records v when it went down. */
static void relax(struct hf_sssp *s, const struct hf_load *load, hf_vid_t v, float d)
{
    float old;
    __atomic_load(&s->dist[v], &old, __ATOMIC_RELAXED);
    while (d < old)
        if (__atomic_compare_exchange(&s->dist[v], &old, &d, 1, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
            hf_shared_changed(load, s->s_dist, v);
            return;
        }
}

static int sssp_run_cpu(void *ctx, const struct hf_bundle *bu, int nthreads)
{
    struct hf_sssp *s = ctx;
    const struct hf_graph *g = &s->ga.g;
#pragma omp parallel for schedule(dynamic, 64) num_threads(nthreads)
    for (size_t k = bu->begin; k < bu->end; k++) {
        hf_vid_t u = s->fr.v[k];
        float du;
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++) {
            __atomic_load(&s->dist[u], &du, __ATOMIC_RELAXED);
            relax(s, bu->load, g->adj[j], du + (g->weights ? g->weights[j] : 1.0f));
        }
    }
    return 0;
}

#ifdef HF_HAVE_CUDA
static int sssp_run_cuda(void *ctx, const struct hf_bundle *piece, struct hf_cuda *gpu)
{
    return hf__sssp_cuda(ctx, piece, gpu);
}
#endif

/* The cheap sound check of finished distances (any size). */
static int check_sound(const struct hf_sssp *s)
{
    const struct hf_graph *g = &s->ga.g;
    if (s->dist[s->ga.src] != 0)
        return hf_fail(HF_EVERIFY, "sssp: the source has distance %g", s->dist[s->ga.src]);
    for (uint64_t u = 0; u < g->nv; u++) {
        float du = s->dist[u];
        int parent = u == s->ga.src || du == INFINITY;
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++) {
            float w = g->weights ? g->weights[j] : 1.0f, dv = s->dist[g->adj[j]];
            if (dv > du + w)
                return hf_fail(HF_EVERIFY,
                               "sssp: edge %llu-%u (weight %g) still relaxes: "
                               "%.9g + %g < %.9g",
                               (unsigned long long)u + (uint64_t)g->base,
                               g->adj[j] + (unsigned)g->base, w, du, w, dv);
            parent |= du <= dv + w && du >= (dv + w) * (1 - 1e-6f); /* (v, u) is tight */
        }
        if (!parent && g->symmetric)
            return hf_fail(HF_EVERIFY,
                           "sssp: vertex %llu at distance %.9g: no neighbour "
                           "gives it that distance",
                           (unsigned long long)u + (uint64_t)g->base, du);
    }
    return 0;
}

/* Whether the run is complete: nothing changed and nothing new waits. */
static int complete(const struct hf_sssp *s, const struct hf_load *load)
{
    size_t n;
    hf_shared_last_changes(load, s->s_dist, &n);
    if (n != 0)
        return 0;
    for (size_t k = 0; k < s->nfar; k++)
        if (s->dist[s->far[k]] != s->expanded[s->far[k]])
            return 0;
    return 1;
}

static int sssp_verify(void *ctx, const struct hf_load *load)
{
    struct hf_sssp *s = ctx;
    if (!complete(s, load))
        return 0; /* the search goes on: it is checked when complete */
    const struct hf_graph *g = &s->ga.g;
    if ((long)g->nv > s->verify_full)
        return check_sound(s);
    float *ref = malloc(g->nv * sizeof *ref);
    if (!ref)
        return hf_fail(HF_ENOMEM, "sssp: out of memory for the reference");
    int rc = hf__sssp_ref(g, s->ga.src, ref);
    for (uint64_t v = 0; v < g->nv && !rc; v++) {
        float a = s->dist[v], b = ref[v];
        if (a == b || (isfinite(b) && fabsf(a - b) <= 1e-5f * b))
            continue;
        rc = hf_fail(HF_EVERIFY, "sssp: vertex %llu has distance %.9g, the reference says %.9g",
                     (unsigned long long)v + (uint64_t)g->base, a, b);
    }
    free(ref);
    return rc;
}

static void dist_value(void *ctx, hf_vid_t v, char *buf, size_t len)
{
    const struct hf_sssp *s = ctx;
    if (s->dist[v] == INFINITY)
        snprintf(buf, len, "inf");
    else
        snprintf(buf, len, "%.9g", s->dist[v]);
}

static void sssp_signature(void *ctx, char *buf, size_t len)
{
    const struct hf_sssp *s = ctx;
    snprintf(buf, len, "%s nv=%llu ne=%llu src=%ld delta=%g", s->ga.g.source_desc,
             (unsigned long long)s->ga.g.nv, (unsigned long long)s->ga.g.ne, s->ga.source,
             s->delta);
}

/* [run] rounds stopped the search (struct hf_app.stopped): distances may
 * still fall, so none are written (sssp_teardown writes only finished ones). */
static int sssp_stopped(void *ctx, const struct hf_load *next, char *left, size_t len)
{
    (void)next;
    const struct hf_sssp *s = ctx;
    snprintf(left, len, "a frontier of %zu vertices and %zu waiting beyond distance %g", s->fr.n,
             s->nfar, (double)s->thresh);
    return HF_STOP_NO_RESULT;
}

static void sssp_teardown(void *ctx)
{
    struct hf_sssp *s = ctx;
    if (!s)
        return;
    if (s->finished && hf__gapp_write_values(&s->ga, s, dist_value))
        fprintf(stderr, "hetfarm: sssp: %s\n", hf_last_error());
    hf__frontier_free(&s->fr);
    free(s->dist);
    free(s->far);
    free(s->far_next);
    free(s->in_far);
    free(s->expanded);
    hf__gapp_destroy(&s->ga);
    free(s);
}

/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key sssp_keys[] = {
    HF_GAPP_KEYS,
    HF_GAPP_SOURCE_KEY,
    {NULL, "delta", HF_KEY_STR, 0, 0, 0, NULL, "auto",
     "near-far bucket width: auto, 0 (Bellman-Ford) or a distance"},
    {NULL, "verify_full", HF_KEY_INT, 0, 9.2233720368547748e18, 0, NULL, "2097152",
     "vertices up to which verify compares with Dijkstra"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_sssp = {
    .keys = sssp_keys,
    .name = "sssp",
    .summary = "single-source shortest paths: frontier Bellman-Ford, near-far with delta",
    .create = sssp_create,
    .next_load = sssp_next_load,
    .partition = sssp_partition,
    .setup = sssp_setup,
    .run_cpu = sssp_run_cpu,
#ifdef HF_HAVE_CUDA
    .run_cuda = sssp_run_cuda,
#endif
    .verify = sssp_verify,
    .teardown = sssp_teardown,
    .stopped = sssp_stopped,
    .signature = sssp_signature,
    .shared = sssp_shared,
    .default_grain = 0, /* hf__gapp_grain */
};
