/* cc.c - connected components: the hetfarm template filled in, Afforest's
 * rounds (Sutton et al. 2018, GAP's cc) on every device: neighbour sampling,
 * then full sweeps that skip the big component, with labels that only ever
 * decrease.
 *
 * DESIGN
 * ------
 * label[v] is a pointer into v's own component that never points up:
 * label[v] <= v, and it starts at v. The labels form a forest whose roots
 * label themselves, and every change LOWERS a label, so they are a shared MIN
 * array (hetfarm.h, "Shared data"): each device works on its own copy (the
 * CPU on the host's, a GPU on its replica), records what it lowered, and the
 * framework merges the copies with min at the round's end, moving only what
 * changed. The min of two valid pointers is a valid pointer, so the merge
 * never breaks the invariant.
 *
 * A vertex's edges are joined by Afforest's LINK: walk the trees of both ends
 * until one root hangs under the other's smaller vertex (a compare-and-swap
 * on a root, the only kind of label a link re-points), so that the edge is
 * inside one tree, whichever end is the smaller. SHORTCUT points a vertex at
 * its tree's root (pointer jumping). Rounds (units = vertex ids):
 *   - HF_CC_SAMPLES sampling rounds: round r links each vertex to its
 *     neighbour number r, then shortcuts it: most of a scale-free graph's
 *     giant component is joined in two rounds of one edge a vertex;
 *   - full sweeps: each vertex is shortcut, skipped when its root is `big`
 *     (the largest component's label, sampled by next_load from the merged
 *     host copy), else linked to each of its neighbours. A skipped vertex's
 *     edge to another tree is linked from the other end, which is not
 *     skipped; an edge between two skipped vertices is inside big's tree.
 * Every device runs the same rounds (cc_cuda.cu is this file's loops spread
 * over GPU threads), so the device set changes neither the rounds nor the
 * work a round declares.
 *
 * How the run ends depends on whether every link so far landed in one copy.
 * collect notes the copy each bundle linked in (the CPU teams share the
 * host's; each GPU has its own), so this is what the rounds ran on, not what
 * the device list holds: a scheduler that leaves the CPU out of every round
 * of a CPU + GPU run gets the GPU alone's rounds.
 *   - one copy (every round so far ran on the CPU teams alone, or on one
 *     GPU): a link, once made, stays. Then ONE full sweep links every edge
 *     but the sampled ones (already in the copy), and a last round, the
 *     compress round, points every vertex at its root: label = the
 *     component's smallest vertex, no confirming sweep needed;
 *   - several copies (from the first round that ran in two, or across
 *     ranks): two devices may re-point one root to different vertices in one
 *     round, and the merge keeps the smaller, so the other link is undone.
 *     Full sweeps therefore link every edge (sampled ones too) and go on
 *     until one changed nothing: then every unskipped vertex's edges joined
 *     nothing new and its shortcut moved nothing, so each edge lies in one
 *     tree and each label is its root, the tree's least vertex. That final
 *     sweep (cheap: nearly everything is in big's tree by then) is the price
 *     of knowing. A one-copy sweep that ran in two copies proves nothing (it
 *     skipped the sampled edges): the sweeps of every edge follow it.
 * Before Afforest ran on the GPU, a run with one had to sweep every edge from
 * round 0 (the GPU hooked one way only, so nothing could be skipped), and on
 * an H200 with 16 cores (kron-22) CPU + GPU took 2x the CPU alone.
 *
 * Components need an undirected graph: symmetrise = no is refused (as is a
 * .hfg file holding a directed graph). verify checks the finished labels
 * against union-find (cc_ref.c) exactly, at any size (it is O(m)), and that
 * the counts agree.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/placement/graph_place.h"
#include "cc.h"
#ifdef HF_HAVE_CUDA
#include "hf_cuda.h"
#endif

static int cc_create(void **ctx, hf_config_t cfg)
{
    struct hf_cc *c = calloc(1, sizeof *c);
    if (!c)
        return hf_fail(HF_ENOMEM, "cc: out of memory");
    *ctx = c;
    int sym;
    int rc = hf_config_bool(cfg, "load", "symmetrise", 1, &sym);
    if (rc)
        return rc;
    if (!sym)
        return hf_fail(HF_ECONFIG,
                       "%s: [load] symmetrise = no: connected components are "
                       "defined on undirected graphs (leave symmetrise = yes)",
                       hf_config_where(cfg, "load", "symmetrise"));
    if ((rc = hf__gapp_create(&c->ga, cfg, 0, 0)) || (rc = hf__gapp_place(&c->ga, cfg)))
        return rc;
    if (!c->ga.g.symmetric)
        return hf_fail(HF_ECONFIG,
                       "%s: cc: the graph %s is directed (a .hfg of a directed "
                       "graph?): components need an undirected one",
                       hf_config_path(cfg), c->ga.g.source_desc);
    if (!(c->label = malloc(c->ga.g.nv * sizeof *c->label)))
        return hf_fail(HF_ENOMEM, "cc: out of memory for %llu labels",
                       (unsigned long long)c->ga.g.nv);
    return 0;
}

/* Which copy each device links in: CPU teams share the host's, a GPU (or a
 * node) keeps its own. Across nodes another rank has copies of its own, and
 * the end rule shapes the loads, which must be the same on every rank: there
 * the rounds are several copies' from the start. */
static int cc_setup(void *ctx, const struct hf_devices *devs)
{
    struct hf_cc *c = ctx;
    c->copy_of = malloc((size_t)(devs->count > 0 ? devs->count : 1) * sizeof *c->copy_of);
    if (!c->copy_of)
        return hf_fail(HF_ENOMEM, "cc: out of memory for %d devices", devs->count);
    c->ndev = devs->count;
    for (int d = 0; d < devs->count; d++)
        c->copy_of[d] =
            devs->dev[d].kind == HF_DEV_CUDA || devs->dev[d].kind == HF_DEV_NODE ? d : -1;
    c->single_rank = devs->ranks <= 1;
    /* The CPU's changed labels are recorded for the merge into GPU replicas
     * and for hf_shared_last_changes: the end test of a run of several copies
     * and the cross-device traffic figures (two devices or more). A one-copy
     * run on one device has no other copy and no reader (it ends on its
     * count of rounds), and recording cost more than the links themselves
     * on a CPU (kron-20, 2 threads: 16 of round 0's 38 ms of CPU), so it
     * records nothing there (a GPU's driver records its own). Nothing else
     * reads the host's change list (shared.c). */
    c->record = devs->ranks > 1 || devs->count > 1;
    return hf__gapp_setup(&c->ga, devs, 1);
}

/* Cross-device traffic (app/graph_traffic.c): each bundle's work counts for
 * its device; and the copy it linked in is noted, so that the round's end
 * knows whether every link of the round landed in one copy (see DESIGN).
 * Device threads call this concurrently. */
static int cc_collect(void *ctx, const struct hf_bundle *b)
{
    struct hf_cc *c = ctx;
    hf__gapp_traffic_add(&c->ga, b);
    int copy = b->device >= 0 && b->device < c->ndev ? c->copy_of[b->device] : b->device;
    int seen = INT_MIN;
    if (!__atomic_compare_exchange_n(&c->round_copy, &seen, copy, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED) &&
        seen != copy)
        __atomic_store_n(&c->round_several, 1, __ATOMIC_RELAXED);
    return 0;
}

/* ... and the round's changed labels are what moves. */
static int cc_round_figures(void *ctx, const struct hf_load *load, struct hf_figure *out, int cap)
{
    struct hf_cc *c = ctx;
    size_t n;
    const uint32_t *changed = hf_shared_last_changes(load, CC_LABEL, &n);
    return hf__gapp_traffic_round(&c->ga, changed, n, out, cap);
}

static int cc_shared(void *ctx, struct hf_shared *out, int cap)
{
    struct hf_cc *c = ctx;
    int n = hf__gapp_shared_csr(&c->ga, 0, out, cap);
    if (n < 0 || n >= cap)
        return n < 0 ? n : hf_fail(HF_EAPP, "cc: no room for the label array");
    out[n] = (struct hf_shared){"cc.label", c->label, c->ga.g.nv, HF_ELEM_U32, HF_SHARED_MIN};
    return n + 1;
}

/* The root of v's tree in the host copy (between rounds: no one writes). */
static uint32_t root_of(const uint32_t *label, uint32_t v)
{
    while (label[v] != v)
        v = label[v];
    return v;
}

static int by_value(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The root most of 1024 evenly spread vertices lead to: the largest
 * component's label, most likely (Afforest's sample). Any answer is correct;
 * a good one lets full sweeps skip the most. *rest: the share of the
 * samples' edges (their degrees) whose vertex is not in that tree, an
 * estimate of the share of all edges a skipping sweep still links. */
static uint32_t sample_big(const struct hf_cc *c, double *rest)
{
    enum { SAMPLES = 1024 };
    uint32_t roots[SAMPLES];
    const struct hf_graph *g = &c->ga.g;
    uint64_t nv = g->nv;
#define CC_SAMPLE_V(i) ((uint32_t)(((uint64_t)(i)*2654435761u) % nv))
    for (uint64_t i = 0; i < SAMPLES; i++)
        roots[i] = root_of(c->label, CC_SAMPLE_V(i));
    qsort(roots, SAMPLES, sizeof *roots, by_value);
    uint32_t best = roots[0];
    size_t best_n = 0;
    for (size_t i = 0, j; i < SAMPLES; i = j) {
        for (j = i; j < SAMPLES && roots[j] == roots[i]; j++)
            ;
        if (j - i > best_n)
            best = roots[i], best_n = j - i;
    }
    double all = 0, out = 0;
    for (uint64_t i = 0; i < SAMPLES; i++) {
        uint32_t v = CC_SAMPLE_V(i);
        double deg = (double)(g->offsets[v + 1] - g->offsets[v]);
        all += deg;
        out += root_of(c->label, v) == best ? 0 : deg;
    }
#undef CC_SAMPLE_V
    *rest = all > 0 ? out / all : 1.0;
    return best;
}

static int cc_next_load(void *ctx, struct hf_load *load)
{
    struct hf_cc *c = ctx;
    const struct hf_graph *g = &c->ga.g;
    if (load->round == 0) {
#pragma omp parallel for schedule(static)
        for (uint64_t v = 0; v < g->nv; v++)
            c->label[v] = (uint32_t)v;
        c->finished = 0;
        c->skipped = 0;
        c->sample = HF_CC_SAMPLES > 0 ? 0 : -1;
        c->compress = 0;
        c->one_copy = c->single_rank;
        hf__gapp_traffic_reset(&c->ga);
    } else {
        size_t n;
        hf_shared_last_changes(load, CC_LABEL, &n);
        /* One copy: the compress round after the one full sweep ends it;
         * several: a full sweep of every edge that changed nothing does. A
         * round that ran in two copies ends the one-copy rounds for good, and
         * a one-copy sweep that did proves nothing (see DESIGN). */
        int every_edge = !c->one_copy;
        if (c->round_several)
            c->one_copy = 0;
        if (c->compress || (c->sample < 0 && every_edge && n == 0)) {
            c->finished = 1;
            return 0;
        }
        c->compress = c->one_copy && c->sample < 0;
        c->sample = c->sample >= 0 && c->sample + 1 < HF_CC_SAMPLES ? c->sample + 1 : -1;
    }
    c->round_copy = INT_MIN;
    c->round_several = 0;
    double rest = 1.0; /* the share of edges a full sweep links (estimate) */
    c->big = c->sample < 0 && !c->compress ? sample_big(c, &rest) : UINT32_MAX;
    c->rounds = load->round + 1;
    load->units = g->nv;
    /* What the round costs: a sampling round links each vertex along one
     * edge and shortcuts it, one edge and one vertex a vertex whatever its
     * degree; declaring its edges instead made its chunks (the automatic
     * grain) 15x too small for their work on a Kronecker graph. The compress
     * round is one vertex a vertex. A full sweep whose big component holds
     * all but `rest` of the edges (estimated) visits every vertex but links
     * only rest * ne edges: when those are fewer than the vertices, it costs
     * about the same a vertex too, and is cut evenly (kron-20: 16 chunks, not
     * 62 cut for edges it skips). */
    double linked = rest * (double)g->ne;
    c->flat = c->sample >= 0 || c->compress || linked <= (double)g->nv;
    if (c->compress)
        load->work = (double)g->nv;
    else if (c->sample >= 0)
        load->work = 2.0 * (double)g->nv;
    else if (c->flat)
        load->work = (double)g->nv + linked;
    else
        load->work = (double)g->ne + (double)g->nv;
    load->bytes = 0; /* nothing is staged: the labels move as shared data */
    return 1;
}

static size_t cc_partition(void *ctx, const struct hf_load *load, size_t grain,
                           struct hf_chunk *out, size_t cap)
{
    struct hf_cc *c = ctx;
    grain = hf__gapp_grain(&c->ga, load, grain);
    return c->flat ? hf_partition_even(ctx, load, grain, out, cap) /* the same cost a vertex */
                   : hf__vertex_partition(&c->ga.g, load, grain, out, cap);
}

/* Shortcuts u: points it at the root of its tree (pointer jumping); returns
 * the root. Plain stores, no compare-and-swap, as in GAP's compress: a label
 * that is not a root is written by nobody but the thread shortcutting its
 * vertex (a link re-points roots only, with a CAS), and u belongs to one
 * bundle. If u is a root a link may hang it under a lower root meanwhile;
 * then ll was read after that link and is what label[u] holds or lower.
 * Either way each store lowers label[u] and is recorded (rec: the load, or
 * NULL when the run records nothing, see cc_setup). */
static uint32_t shortcut(uint32_t *label, const struct hf_load *rec, uint32_t u)
{
    uint32_t l = __atomic_load_n(&label[u], __ATOMIC_RELAXED);
    uint32_t ll = __atomic_load_n(&label[l], __ATOMIC_RELAXED);
    while (ll < l) {
        __atomic_store_n(&label[u], ll, __ATOMIC_RELAXED);
        if (rec)
            hf_shared_changed(rec, CC_LABEL, u);
        l = ll;
        ll = __atomic_load_n(&label[l], __ATOMIC_RELAXED);
    }
    return l;
}

/* Afforest's link: walks the trees of u and v until one root hangs under the
 * other's smaller vertex, so that afterwards u and v are in one tree. Only a
 * root (label[x] == x) is ever re-pointed, and only lower, so the forest
 * stays a forest of labels <= their vertex. */
static void link(uint32_t *label, const struct hf_load *rec, uint32_t u, uint32_t v)
{
    uint32_t p1 = __atomic_load_n(&label[u], __ATOMIC_RELAXED);
    uint32_t p2 = __atomic_load_n(&label[v], __ATOMIC_RELAXED);
    while (p1 != p2) {
        uint32_t high = p1 > p2 ? p1 : p2, low = p1 + p2 - high;
        uint32_t ph = __atomic_load_n(&label[high], __ATOMIC_RELAXED);
        if (ph == low)
            break;
        if (ph == high) {
            uint32_t expect = high;
            if (__atomic_compare_exchange_n(&label[high], &expect, low, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED)) {
                if (rec)
                    hf_shared_changed(rec, CC_LABEL, high);
                break;
            }
        }
        p1 = __atomic_load_n(&label[__atomic_load_n(&label[high], __ATOMIC_RELAXED)],
                             __ATOMIC_RELAXED);
        p2 = __atomic_load_n(&label[low], __ATOMIC_RELAXED);
    }
}

/* One parallel region per bundle: a sampling round links every vertex to one
 * neighbour, then shortcuts them all; the compress round only shortcuts; a
 * full sweep shortcuts each vertex, skips it when its root is `big`, else
 * links it to every neighbour (one copy: but the sampled ones, whose links
 * are in the copy already; the compress round shortcuts afterwards). */
static int cc_run_cpu(void *ctx, const struct hf_bundle *bu, int nthreads)
{
    struct hf_cc *c = ctx;
    const struct hf_graph *g = &c->ga.g;
    const struct hf_load *load = c->record ? bu->load : NULL; /* where changes are recorded */
    uint32_t *label = c->label, big = c->big;
    int r = c->sample, last = c->one_copy;
    uint64_t from = c->one_copy ? HF_CC_SAMPLES : 0, skipped = 0;
    if (c->compress) {
#pragma omp parallel for num_threads(nthreads) schedule(static)
        for (size_t u = bu->begin; u < bu->end; u++)
            shortcut(label, load, (uint32_t)u);
        return 0;
    }
#pragma omp parallel num_threads(nthreads) reduction(+ : skipped)
    {
        if (r >= 0) {
#pragma omp for schedule(dynamic, 1024)
            for (size_t u = bu->begin; u < bu->end; u++)
                if (g->offsets[u] + (uint64_t)r < g->offsets[u + 1])
                    link(label, load, (uint32_t)u, g->adj[g->offsets[u] + (uint64_t)r]);
#pragma omp for schedule(static)
            for (size_t u = bu->begin; u < bu->end; u++)
                shortcut(label, load, (uint32_t)u);
        } else {
#pragma omp for schedule(dynamic, 256)
            for (size_t u = bu->begin; u < bu->end; u++) {
                if (shortcut(label, load, (uint32_t)u) == big) {
                    skipped++;
                    continue;
                }
                for (uint64_t j = g->offsets[u] + from; j < g->offsets[u + 1]; j++)
                    link(label, load, (uint32_t)u, g->adj[j]);
                if (!last)
                    shortcut(label, load, (uint32_t)u);
            }
        }
    }
    __atomic_fetch_add(&c->skipped, skipped, __ATOMIC_RELAXED);
    return 0;
}

#ifdef HF_HAVE_CUDA
static int cc_run_cuda(void *ctx, const struct hf_bundle *piece, struct hf_cuda *gpu)
{
    return hf__cc_cuda(ctx, piece, gpu);
}
#endif

static int cc_verify(void *ctx, const struct hf_load *load)
{
    struct hf_cc *c = ctx;
    size_t n;
    hf_shared_last_changes(load, CC_LABEL, &n);
    if (!c->compress && (n != 0 || c->sample >= 0 || c->one_copy))
        return 0; /* not final yet: checked after the compress round (one copy) or
                     after the full sweep that changes nothing */
    const struct hf_graph *g = &c->ga.g;
    for (uint64_t u = 0; u < g->nv; u++)
        for (uint64_t j = g->offsets[u]; j < g->offsets[u + 1]; j++)
            if (c->label[u] != c->label[g->adj[j]])
                return hf_fail(HF_EVERIFY, "cc: edge %llu-%u joins labels %u and %u",
                               (unsigned long long)hf__gapp_input_id(&c->ga, (hf_vid_t)u) +
                                   (uint64_t)g->base,
                               hf__gapp_input_id(&c->ga, g->adj[j]) + (unsigned)g->base,
                               hf__gapp_input_id(&c->ga, c->label[u]) + (unsigned)g->base,
                               hf__gapp_input_id(&c->ga, c->label[g->adj[j]]) + (unsigned)g->base);
    uint32_t *ref = malloc(g->nv * sizeof *ref);
    if (!ref)
        return hf_fail(HF_ENOMEM, "cc: out of memory for the reference");
    uint64_t want = hf__cc_ref(g, ref), got = 0;
    int rc = 0;
    for (uint64_t v = 0; v < g->nv && !rc; v++) {
        got += c->label[v] == v;
        if (ref[v] != c->label[v])
            rc = hf_fail(HF_EVERIFY, "cc: vertex %llu has label %u, the reference says %u",
                         (unsigned long long)hf__gapp_input_id(&c->ga, (hf_vid_t)v) +
                             (uint64_t)g->base,
                         hf__gapp_input_id(&c->ga, c->label[v]) + (unsigned)g->base,
                         hf__gapp_input_id(&c->ga, ref[v]) + (unsigned)g->base);
    }
    if (!rc && got != want)
        rc = hf_fail(HF_EVERIFY, "cc: %llu components, union-find finds %llu",
                     (unsigned long long)got, (unsigned long long)want);
    free(ref);
    return rc;
}

/* A label as the input numbers it: a component's smallest vertex in the
 * input's numbering (out_label when placement relabelled the graph). */
static uint32_t input_label(const struct hf_cc *c, hf_vid_t v)
{
    return c->out_label ? c->out_label[c->label[v]] : c->label[v];
}

static void label_value(void *ctx, hf_vid_t v, char *buf, size_t len)
{
    const struct hf_cc *c = ctx;
    snprintf(buf, len, "%llu",
             (unsigned long long)input_label(c, v) + (unsigned long long)c->ga.g.base);
}

/* With placement = partition a finished label is the smallest RELABELLED id
 * of its component; what the output promises is the smallest input id, so
 * out_label[root] = min over the component of to_old (the labels are roots). */
static int input_labels(struct hf_cc *c)
{
    if (!c->ga.to_old)
        return 0;
    uint64_t nv = c->ga.g.nv;
    if (!(c->out_label = malloc(nv * sizeof *c->out_label)))
        return hf_fail(HF_ENOMEM, "cc: out of memory for %llu labels", (unsigned long long)nv);
    for (uint64_t v = 0; v < nv; v++)
        c->out_label[v] = UINT32_MAX;
    for (uint64_t v = 0; v < nv; v++) {
        uint32_t r = c->label[v], old = c->ga.to_old[v];
        c->out_label[r] = old < c->out_label[r] ? old : c->out_label[r];
    }
    return 0;
}

static void cc_signature(void *ctx, char *buf, size_t len)
{
    const struct hf_cc *c = ctx;
    snprintf(buf, len, "%s nv=%llu ne=%llu", c->ga.g.source_desc, (unsigned long long)c->ga.g.nv,
             (unsigned long long)c->ga.g.ne);
}

/* The rounds and what full sweeps skipped, in results.json. */
static int cc_figures(void *ctx, double seconds, struct hf_figure *out, int cap)
{
    struct hf_cc *c = ctx;
    uint64_t comps = 0;
    for (uint64_t v = 0; v < c->ga.g.nv; v++)
        comps += c->label[v] == v;
    struct hf_figure f[] = {
        {"rounds", c->rounds, ""},
        {"components", (double)comps, ""},
        {"skipped", (double)c->skipped,
         "vertex visits the CPU's full sweeps skipped (big component)"},
        {"seconds", seconds, "s"},
    };
    int n = (int)(sizeof f / sizeof f[0]);
    for (int i = 0; i < n && i < cap; i++)
        out[i] = f[i];
    n = n < cap ? n : cap;
    return n + hf__gapp_traffic_figures(&c->ga, out + n, cap - n);
}

/* [run] rounds stopped the sweeps (struct hf_app.stopped): labels may still
 * fall, so none are written (cc_teardown writes only final ones). */
static int cc_stopped(void *ctx, const struct hf_load *next, char *left, size_t len)
{
    struct hf_cc *c = ctx;
    c->rounds = next->round; /* the probe's sweep never ran */
    size_t n = 0;
    hf_shared_last_changes(next, CC_LABEL, &n);
    snprintf(left, len, "%s; the last sweep changed %zu labels",
             c->compress      ? "the compress round"
             : c->sample >= 0 ? "sampling rounds and sweeps"
                              : "more sweeps",
             n);
    return HF_STOP_NO_RESULT;
}

static void cc_teardown(void *ctx)
{
    struct hf_cc *c = ctx;
    if (!c)
        return;
    if (c->finished && (input_labels(c) || hf__gapp_write_values(&c->ga, c, label_value)))
        fprintf(stderr, "hetfarm: cc: %s\n", hf_last_error());
    free(c->out_label);
    free(c->copy_of);
    free(c->label);
    hf__gapp_destroy(&c->ga);
    free(c);
}

/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key cc_keys[] = {
    HF_GAPP_KEYS,
    HF_GAPP_PLACEMENT_KEYS,
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_cc = {
    .keys = cc_keys,
    .name = "cc",
    .summary = "connected components: Afforest's sampled links and skipping sweeps on min labels",
    .create = cc_create,
    .setup = cc_setup,
    .next_load = cc_next_load,
    .partition = cc_partition,
    .run_cpu = cc_run_cpu,
#ifdef HF_HAVE_CUDA
    .run_cuda = cc_run_cuda,
#endif
    .verify = cc_verify,
    .teardown = cc_teardown,
    .signature = cc_signature,
    .shared = cc_shared,
    .collect = cc_collect,
    .figures = cc_figures,
    .round_figures = cc_round_figures,
    .stopped = cc_stopped,
    .default_grain = 0, /* hf__gapp_grain */
};
