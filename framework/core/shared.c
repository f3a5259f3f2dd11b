/* shared.c - an app's shared data across devices and rounds (hetfarm.h,
 * "Shared data"): host-side change recording and the merge at a round's end.
 *
 * DESIGN
 * ------
 * The host array is the merged copy and the CPU device works on it directly;
 * every GPU works on a replica its driver keeps (drivers/shared_cuda.c). For
 * a MIN/MAX/OR array each side records which elements it changed: the host in
 * a recorder (recorder.c: a bit per element and a list filled by thread-local
 * blocks, so each element enters once however often it changed), a GPU in
 * its own, which its driver drains to host memory after every bundle.
 *
 * At the round's end, after every bundle ran, hf__shared_merge() does three
 * steps:
 *   1. pull: each GPU hands over the indices and values it recorded (its
 *      driver copied them to host memory at the end of each bundle);
 *   2. merge (here): each pulled value is combined into the host copy with
 *      the array's op; an element the merge changed is recorded on the host
 *      side too, so the host's list becomes the union of everything that
 *      changed anywhere this round;
 *   3. push, on each GPU's own host thread (its context and streams belong
 *      to it), all GPUs side by side: each receives the host values of that
 *      union, except a GPU that made every change of the round itself.
 * The union stays readable until the next load was drawn: next_load reads it
 * (hf_shared_last_changes) to build the next frontier without a scan.
 * When one device made every change of the round (a round one GPU ran
 * alone), step 2 does not combine (take_sole): its values are the merged
 * ones already, so many of them are one copy of its whole array over the
 * host's (the driver's shared_fetch) and few are plain stores. Its pulled
 * list of one bundle is the union, read in place; a list of several bundles
 * may name an element once per bundle, so the union is built from it without
 * repeats, and its values come from the copy only (a store per entry could
 * leave an earlier bundle's value).
 * Why this is right for MIN (MAX and OR alike): a GPU starts the round equal
 * to the host, and lowers an element only below that start; so after the
 * merge, an element whose host value differs from some replica is one that
 * changed this round, is in the union, and is overwritten by the push.
 * Per-round traffic is therefore what changed, not the array's size.
 *
 * OWNED arrays need no recording: a GPU copies its bundle's range back when
 * the bundle ends (bundles of a round cover disjoint ranges), and step 3
 * sends each GPU the ranges the other devices computed. READONLY arrays never
 * move after the GPU was opened.
 *
 * Across nodes (core/nodes.c, mpi/node.c) a node device takes part like a
 * GPU: its pull is what the node sent after each span, its push goes to the
 * node. One difference: a node keeps a union of its own for its next_load,
 * so it is pushed every union of a MIN/MAX/OR array, even an empty one or
 * one it made alone (keeps_union), and takes it as its own
 * (hf__shared_apply, the node's side).
 */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "recorder.h"
#include "shared.h"

struct hf__shared_set {
    int n;
    struct hf_shared *arr;       /* the app's declarations */
    struct hf__recorder *rec;    /* per array; bits == NULL for READONLY/OWNED */
    const uint32_t **pull_idx;   /* per device: pulled indices (the driver's buffer) */
    const unsigned char **pull_val; /* per device: pulled values (the driver's buffer) */
    unsigned char *push_val;     /* the union's host values, gathered for the push */
    size_t push_cap;
    long *pulled;                /* per device: elements pulled of the array being merged */
    int *want;                   /* per device: takes part in the current merge step */
    int *skip_push;              /* per device: has every change already (see merge) */
    double *more;                /* per device: work its running bundle did past its chunks' */
    struct ran { int dev; size_t begin, end; } *ran; /* this round's bundles' unit ranges */
    size_t nran, ran_cap;
};

size_t hf_elem_size(enum hf_elem e)
{
    switch (e) {
    case HF_ELEM_U8:
        return 1;
    case HF_ELEM_I32:
    case HF_ELEM_U32:
    case HF_ELEM_F32:
        return 4;
    case HF_ELEM_I64:
    case HF_ELEM_U64:
    case HF_ELEM_F64:
        return 8;
    }
    return 0;
}

static int recorded_kind(enum hf_shared_kind k)
{
    return k == HF_SHARED_MIN || k == HF_SHARED_MAX || k == HF_SHARED_OR;
}

/* Checks one declaration: a misdeclared array would corrupt memory later. */
static int check_decl(const char *app, int s, const struct hf_shared *a)
{
    const char *name = a->name ? a->name : "(unnamed)";
    if (!a->host || a->count == 0)
        return hf_fail(HF_EAPP, "app %s: shared array %d (%s) has no host data", app, s, name);
    if (hf_elem_size(a->elem) == 0 || a->kind < HF_SHARED_READONLY || a->kind > HF_SHARED_OR)
        return hf_fail(HF_EAPP, "app %s: shared array %d (%s): unknown element type or kind",
                       app, s, name);
    if (a->kind == HF_SHARED_OR && (a->elem == HF_ELEM_F32 || a->elem == HF_ELEM_F64))
        return hf_fail(HF_EAPP, "app %s: shared array %s: OR needs an integer element type", app,
                       name);
    if (recorded_kind(a->kind) && a->count > UINT32_MAX)
        return hf_fail(HF_EAPP, "app %s: shared array %s: %zu elements, at most 2^32 can be "
                                "recorded", app, name, a->count);
    return 0;
}

int hf__shared_init(struct hf__shared_set **out, const struct hf_app *app, void *ctx, int ndev)
{
    *out = NULL;
    if (!app->shared)
        return 0;
    struct hf_shared decl[HF__SHARED_MAX];
    hf_clear_error();
    int n = app->shared(ctx, decl, HF__SHARED_MAX);
    if (n < 0)
        return *hf_last_error() ? n : hf_fail(n, "app %s: shared failed", app->name);
    if (n > HF__SHARED_MAX)
        return hf_fail(HF_EAPP, "app %s: %d shared arrays, at most %d", app->name, n,
                       HF__SHARED_MAX);
    if (n == 0)
        return 0;
    for (int s = 0; s < n; s++) {
        int rc = check_decl(app->name, s, &decl[s]);
        if (rc)
            return rc;
    }
    struct hf__shared_set *S = calloc(1, sizeof *S);
    if (!S)
        return hf_fail(HF_ENOMEM, "shared data: out of memory");
    *out = S;
    S->n = n;
    S->arr = calloc((size_t)n, sizeof *S->arr);
    S->rec = calloc((size_t)n, sizeof *S->rec);
    S->pull_idx = calloc((size_t)ndev, sizeof *S->pull_idx);
    S->pull_val = calloc((size_t)ndev, sizeof *S->pull_val);
    S->pulled = calloc((size_t)ndev, sizeof *S->pulled);
    S->skip_push = calloc((size_t)ndev, sizeof *S->skip_push);
    S->want = calloc((size_t)ndev, sizeof *S->want);
    S->more = calloc((size_t)ndev, sizeof *S->more);
    if (!S->arr || !S->rec || !S->pull_idx || !S->pull_val || !S->pulled ||
        !S->skip_push || !S->want || !S->more)
        return hf_fail(HF_ENOMEM, "shared data: out of memory");
    memcpy(S->arr, decl, (size_t)n * sizeof *decl);
    for (int s = 0; s < n; s++) {
        if (!recorded_kind(S->arr[s].kind))
            continue;
        if (hf__recorder_init(&S->rec[s], S->arr[s].count))
            return hf_fail(HF_ENOMEM, "shared array %s: out of memory for its change recorder "
                                      "(%zu elements)", S->arr[s].name, S->arr[s].count);
    }
    return 0;
}

void hf__shared_destroy(struct hf__shared_set *S, int ndev)
{
    if (!S)
        return;
    (void)ndev;
    for (int s = 0; s < S->n && S->rec; s++)
        hf__recorder_free(&S->rec[s]);
    free(S->pull_idx);
    free(S->pull_val);
    free(S->pulled);
    free(S->skip_push);
    free(S->want);
    free(S->more);
    free(S->push_val);
    free(S->ran);
    free(S->rec);
    free(S->arr);
    free(S);
}

const struct hf_shared *hf__shared_list(const struct hf__shared_set *S, int *n)
{
    *n = S ? S->n : 0;
    return S ? S->arr : NULL;
}

void hf_shared_changed(const struct hf_load *load, int s, size_t i)
{
    HF_ASSERT_MSG(load, "hf_shared_changed: no load");
    struct hf__shared_set *S = load->shared;
    if (!S) /* a simulation without execute: nothing is shared */
        return;
    HF_ASSERT_MSG(s >= 0 && s < S->n && S->rec[s].bits,
                  "hf_shared_changed: not a MIN/MAX/OR shared array");
    HF_ASSERT_MSG(i < S->arr[s].count, "hf_shared_changed: element out of range");
    hf__recorder_add(&S->rec[s], i);
}

void hf_bundle_did_more(const struct hf_bundle *b, double work)
{
    HF_ASSERT_MSG(b && b->load, "hf_bundle_did_more: no bundle");
    struct hf__shared_set *S = b->load->shared;
    if (S && work > 0.0) /* each device's slot: written by its bundle, read by its done */
        S->more[b->device] += work;
}

double hf__shared_take_more(struct hf__shared_set *S, int dev)
{
    double w = S ? S->more[dev] : 0.0;
    if (S)
        S->more[dev] = 0.0;
    return w;
}

/* Combining a pulled value into a host element, one function per element
 * type: returns whether the host value changed. A device's pulled list may
 * name an element more than once (two bundles of one GPU changed it), and the
 * list is combined in parallel, so the update is a compare-and-swap loop on
 * the element's bits (U: the unsigned type of T's size). */
#define HF__COMBINE(NAME, T, U, OP)                                                        \
    static int NAME(enum hf_shared_kind k, void *host, size_t i, const unsigned char *v)   \
    {                                                                                      \
        U *p = (U *)host + i, old = __atomic_load_n(p, __ATOMIC_RELAXED), nb;              \
        T x, cur, nv;                                                                      \
        memcpy(&x, v, sizeof x);                                                           \
        for (;;) {                                                                         \
            memcpy(&cur, &old, sizeof cur);                                                \
            nv = k == HF_SHARED_MIN ? (x < cur ? x : cur)                                  \
                 : k == HF_SHARED_MAX ? (x > cur ? x : cur) : OP(cur, x);                  \
            if (nv == cur)                                                                 \
                return 0;                                                                  \
            memcpy(&nb, &nv, sizeof nb);                                                   \
            if (__atomic_compare_exchange_n(p, &old, nb, 1, __ATOMIC_RELAXED,              \
                                            __ATOMIC_RELAXED))                             \
                return 1;                                                                  \
        }                                                                                  \
    }
#define HF__OR(a, b) ((a) | (b))
#define HF__NO_OR(a, b) (a) /* OR is refused for floats at declaration */
HF__COMBINE(combine_u8, uint8_t, uint8_t, HF__OR)
HF__COMBINE(combine_i32, int32_t, uint32_t, HF__OR)
HF__COMBINE(combine_u32, uint32_t, uint32_t, HF__OR)
HF__COMBINE(combine_i64, int64_t, uint64_t, HF__OR)
HF__COMBINE(combine_u64, uint64_t, uint64_t, HF__OR)
HF__COMBINE(combine_f32, float, uint32_t, HF__NO_OR)
HF__COMBINE(combine_f64, double, uint64_t, HF__NO_OR)
#undef HF__COMBINE
#undef HF__OR
#undef HF__NO_OR

typedef int (*combine_fn)(enum hf_shared_kind, void *, size_t, const unsigned char *);

static combine_fn combiner(enum hf_elem e)
{
    static const combine_fn by_elem[] = {
        [HF_ELEM_U8] = combine_u8,   [HF_ELEM_I32] = combine_i32, [HF_ELEM_U32] = combine_u32,
        [HF_ELEM_F32] = combine_f32, [HF_ELEM_I64] = combine_i64, [HF_ELEM_U64] = combine_u64,
        [HF_ELEM_F64] = combine_f64,
    };
    return by_elem[e];
}

/* What the per-device steps of one merge share. */
struct merge_step {
    struct hf__shared_set *S;
    long *pulled;       /* per device: elements pulled of the current array */
    int s;              /* the array being merged */
    int *skip_push;     /* per device: computed everything this round (OWNED) */
};

/* A node of a run across nodes keeps a union of its own: its next_load reads
 * it. So it receives every union of a MIN/MAX/OR array, even an empty one or
 * one it made alone, and its union is then rank 0's (nodes.c). */
static int keeps_union(const struct hf_device *dev)
{
    return dev->info.kind == HF_DEV_NODE;
}

/* Step 1: device d's recorded changes of array s (the driver brought them
 * to host memory at the end of each bundle). */
static int pull_step(struct hf__engine *e, int d, void *arg)
{
    struct merge_step *m = arg;
    struct hf_device *dev = hf_devlist_get(e->devs, d);
    m->pulled[d] = 0;
    if (!dev->ops || !dev->ops->shared_pull || !e->alive[d] || e->stats[d].bundles == 0)
        return 0;
    const void *vals = NULL;
    long n = dev->ops->shared_pull(dev, m->s, &m->S->pull_idx[d], &vals);
    m->S->pull_val[d] = vals;
    if (n < 0)
        return (int)n;
    m->pulled[d] = n;
    return 0;
}

static int by_begin(const void *a, const void *b)
{
    const struct ran *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Pushes to device d the OWNED array's ranges that other devices computed
 * this round, adjacent ranges as one copy (ran[] is sorted by begin). */
static int push_owned_ranges(struct hf__engine *e, int d, const struct merge_step *m)
{
    struct hf_device *dev = hf_devlist_get(e->devs, d);
    const struct hf_shared *a = &m->S->arr[m->s];
    size_t es = hf_elem_size(a->elem);
    for (size_t k = 0; k < m->S->nran;) {
        if (m->S->ran[k].dev == d) {
            k++;
            continue;
        }
        size_t b = m->S->ran[k].begin, end = m->S->ran[k].end;
        for (k++; k < m->S->nran && m->S->ran[k].dev != d && m->S->ran[k].begin == end; k++)
            end = m->S->ran[k].end;
        if (end > a->count)
            return hf_fail(HF_EAPP, "OWNED shared array %s: units %zu..%zu beyond its %zu "
                                    "elements", a->name, b, end - 1, a->count);
        int rc = dev->ops->shared_push(dev, m->s, NULL, (const char *)a->host + b * es, end - b, b);
        if (rc)
            return rc;
    }
    return 0;
}

/* Step 3 on device d's thread: the union's host values, or for an OWNED
 * array the ranges the other devices computed. */
static int push_step(struct hf__engine *e, int d, void *arg)
{
    struct merge_step *m = arg;
    struct hf_device *dev = hf_devlist_get(e->devs, d);
    const struct hf_shared *a = &m->S->arr[m->s];
    if (!dev->ops || !dev->ops->shared_push)
        return 0;
    if (a->kind == HF_SHARED_OWNED)
        return m->skip_push[d] ? 0 : push_owned_ranges(e, d, m);
    struct hf__recorder *r = &m->S->rec[m->s];
    if ((m->skip_push[d] || !r->count) && !keeps_union(dev))
        return 0;
    return dev->ops->shared_push(dev, m->s, hf__recorder_list(r), m->S->push_val, r->count, 0);
}

/* On the sole device's thread: its whole copy over the host's (take_sole). */
static int fetch_step(struct hf__engine *e, int d, void *arg)
{
    struct merge_step *m = arg;
    struct hf_device *dev = hf_devlist_get(e->devs, d);
    return dev->ops->shared_fetch(dev, m->s);
}

/* Step 2 for a sole changer: its values are not combined; 0, 1 (nothing
 * done: the combining merge runs, which skips an element out of range) or an
 * HF_E* code. A Kronecker BFS round on one GPU brings 2-3M changed depths, a
 * road graph's search on one GPU 24M: a compare-and-swap and a recorder add
 * per element cost 3-20 ms and ~160 ms of those rounds on 15 host threads
 * (their cache lines bounce between the cores). So when the changes are more
 * than an eighth of the array and the driver can, the device's whole copy is
 * copied over the host's (one DMA, 16 MB or 96 MB; a driver with
 * shared_fetch checks its indices' range itself, device.h). Then a list of
 * one bundle (each element once: a driver records an element once per
 * bundle) is the union as it is, and a list of several bundles (the round-0
 * profile bundles of a GPU alone) enters the recorder at once, its repeats
 * dropped range by range without atomics (hf__recorder_add_many: round 0's
 * merge of a kron-24 cc run on an H100's host took 13.6 ms so, 23 with an
 * atomic add per entry, 45 combined). A short list of one bundle is stored
 * entry by entry (plain stores, once its range was checked); a short list
 * of several bundles is combined, which orders its repeats by the op. */
static int take_sole(struct hf__engine *e, struct merge_step *m, int d)
{
    const struct hf_shared *a = &m->S->arr[m->s];
    const struct hf_device *dev = hf_devlist_get(e->devs, d);
    const uint32_t *idx = m->S->pull_idx[d];
    const unsigned char *val = m->S->pull_val[d];
    struct hf__recorder *r = &m->S->rec[m->s];
    size_t es = hf_elem_size(a->elem), n = (size_t)m->pulled[d];
    int once = e->stats[d].bundles == 1;
    if (n > a->count / 8 && dev->ops->shared_fetch) {
        int *want = m->S->want;
        for (int k = 0; k < e->ndev; k++)
            want[k] = k == d;
        int rc = hf__real_each_device(e, fetch_step, m, want);
        if (rc)
            return rc;
        if (!once)
            return hf__recorder_add_many(r, idx, n)
                       ? hf_fail(HF_ENOMEM, "shared data: out of memory for a merge")
                       : 0;
    } else {
        if (!once)
            return 1;
        uint32_t top = 0;
#pragma omp parallel for schedule(static) reduction(max : top) if (n > 65536)
        for (size_t k = 0; k < n; k++)
            top = idx[k] > top ? idx[k] : top;
        if (n && top >= a->count)
            return 1;
        unsigned char *host = a->host;
#pragma omp parallel for schedule(static) if (n > 65536)
        for (size_t k = 0; k < n; k++) {
            if (es == 4)
                memcpy(host + (size_t)idx[k] * 4, val + k * 4, 4);
            else if (es == 8)
                memcpy(host + (size_t)idx[k] * 8, val + k * 8, 8);
            else
                host[idx[k]] = val[k];
        }
    }
    hf__recorder_take(r, idx, n);
    return 0;
}

/* Step 2: the pulled values into the host copy; the union in the host
 * recorder. Entries are combined in parallel (atomically: a list may repeat
 * an element); devices follow one another. A device `sole` (>= 0) made
 * every change of the round: its values are the merged ones already (it
 * started the round from the host's values, which nobody else changed), so
 * they are taken, not combined, where take_sole can. */
static int merge_pulled(struct hf__engine *e, struct merge_step *m, int sole)
{
    const struct hf_shared *a = &m->S->arr[m->s];
    struct hf__recorder *r = &m->S->rec[m->s];
    size_t es = hf_elem_size(a->elem);
    combine_fn combine = combiner(a->elem);
    int rc = sole >= 0 ? take_sole(e, m, sole) : 1;
    if (rc <= 0)
        return rc;
    for (int d = 0; d < e->ndev; d++) {
        const uint32_t *idx = m->S->pull_idx[d];
        const unsigned char *val = m->S->pull_val[d];
        long n = m->pulled[d];
#pragma omp parallel for schedule(static) if (n > 65536)
        for (long k = 0; k < n; k++) {
            uint32_t i = idx[k];
            if (i < a->count && combine(a->kind, a->host, i, val + (size_t)k * es))
                hf__recorder_add(r, i);
        }
    }
    hf__recorder_seal(r);
    return 0;
}

/* Gathers the host values of the union for the push. */
static int gather_union(struct hf__shared_set *S, int s)
{
    const struct hf_shared *a = &S->arr[s];
    struct hf__recorder *r = &S->rec[s];
    size_t es = hf_elem_size(a->elem), n = r->count;
    if (S->push_cap < n * es) {
        free(S->push_val);
        S->push_cap = 0;
        if (!(S->push_val = malloc(n * es)))
            return hf_fail(HF_ENOMEM, "shared data: out of memory for a push");
        S->push_cap = n * es;
    }
    const unsigned char *host = a->host;
    unsigned char *out = S->push_val;
    const uint32_t *list = hf__recorder_list(r);
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t k = 0; k < n; k++) {
        if (es == 4)
            memcpy(out + k * 4, host + (size_t)list[k] * 4, 4);
        else if (es == 8)
            memcpy(out + k * 8, host + (size_t)list[k] * 8, 8);
        else
            out[k] = host[list[k]];
    }
    return 0;
}

/* Which devices take part in a push: those whose driver keeps copies, when
 * there is something to send (for a node, every union of a recorded array).
 * A round on the CPU alone costs no thread hand-off. */
static const int *want_devices(struct hf__engine *e, int something, int recorded)
{
    struct hf__shared_set *S = e->shared;
    for (int d = 0; d < e->ndev; d++) {
        const struct hf_device *dev = hf_devlist_get(e->devs, d);
        int node = recorded && keeps_union(dev);
        S->want[d] = (something || node) && dev->ops && dev->ops->shared_push &&
                     (!S->skip_push[d] || node);
    }
    return S->want;
}

/* The one device that made every change of the round (no other device and
 * not the host changed anything), or -1. It already holds the merged values:
 * it is spared the push, and its changes are taken, not combined
 * (take_sole). The common case of a round small enough to run on one
 * device. */
static int sole_changer(const struct hf__engine *e, size_t host_changes)
{
    const struct hf__shared_set *S = e->shared;
    int changers = host_changes > 0, last = -1;
    for (int d = 0; d < e->ndev; d++)
        if (S->pulled[d] > 0)
            changers++, last = d;
    return changers == 1 ? last : -1;
}

int hf__shared_merge(struct hf__engine *e)
{
    struct hf__shared_set *S = e->shared;
    if (!S)
        return 0;
    if (e->opts->engine != HF_ENGINE_REAL) { /* simulated devices work on the host copies */
        for (int s = 0; s < S->n; s++)
            if (S->rec[s].bits)
                hf__recorder_seal(&S->rec[s]);
        return 0;
    }
    qsort(S->ran, S->nran, sizeof *S->ran, by_begin);
    for (int s = 0; s < S->n; s++) {
        for (int d = 0; d < e->ndev; d++) /* for OWNED: it computed every range */
            S->skip_push[d] = e->stats[d].chunks == e->nchunks;
        const struct hf_shared *a = &S->arr[s];
        struct merge_step m = {.S = S, .pulled = S->pulled, .s = s, .skip_push = S->skip_push};
        int rc = 0;
        if (a->kind == HF_SHARED_READONLY)
            continue;
        if (recorded_kind(a->kind)) {
            memset(S->pulled, 0, (size_t)e->ndev * sizeof *S->pulled);
            size_t host_changes = hf__recorder_seal(&S->rec[s]);
            for (int d = 0; d < e->ndev && !rc; d++)
                rc = pull_step(e, d, &m);
            if (rc)
                return rc;
            int sole = sole_changer(e, host_changes);
            if ((rc = merge_pulled(e, &m, sole)))
                return rc;
            for (int d = 0; d < e->ndev; d++)
                S->skip_push[d] = d == sole;
        }
        int something = a->kind == HF_SHARED_OWNED || S->rec[s].count > 0, pushes = 0;
        const int *want = want_devices(e, something, recorded_kind(a->kind));
        for (int d = 0; d < e->ndev; d++)
            pushes |= want[d];
        /* The union's values are gathered only for a device that will
         * receive them: a run on the CPU alone gathers nothing. */
        if (pushes && recorded_kind(a->kind) && (rc = gather_union(S, s)))
            return rc;
        if (pushes && (rc = hf__real_each_device(e, push_step, &m, want)))
            return rc;
    }
    return 0;
}

int hf__shared_bundle_ran(struct hf__shared_set *S, int dev, size_t begin, size_t end)
{
    if (S->nran == S->ran_cap) {
        size_t cap = S->ran_cap ? 2 * S->ran_cap : 64;
        struct ran *r = realloc(S->ran, cap * sizeof *r);
        if (!r)
            return hf_fail(HF_ENOMEM, "shared data: out of memory");
        S->ran = r, S->ran_cap = cap;
    }
    S->ran[S->nran++] = (struct ran){dev, begin, end};
    return 0;
}

/* The union stays in the host recorder until the next load was drawn, so that
 * next_load can read it (hf_shared_last_changes); then it is forgotten. */
void hf__shared_round_start(struct hf__shared_set *S)
{
    if (S)
        S->nran = 0;
    for (int s = 0; S && s < S->n; s++)
        if (S->rec[s].bits)
            hf__recorder_clear(&S->rec[s]);
}

void hf__shared_recorded(const struct hf__shared_set *S, size_t *elements, size_t *changed)
{
    *elements = *changed = 0;
    for (int s = 0; S && s < S->n; s++)
        if (recorded_kind(S->arr[s].kind)) {
            *elements += S->arr[s].count;
            *changed += S->rec[s].count;
        }
}

const uint32_t *hf_shared_last_changes(const struct hf_load *load, int s, size_t *n)
{
    struct hf__shared_set *S = load ? load->shared : NULL;
    *n = 0;
    if (!S) /* bundles do not run (a simulation without execute): nothing changes */
        return NULL;
    HF_ASSERT_MSG(s >= 0 && s < S->n && S->rec[s].bits,
                  "hf_shared_last_changes: not a MIN/MAX/OR shared array");
    *n = S->rec[s].count;
    return hf__recorder_list(&S->rec[s]);
}

/* Pushes array s whole to device d (no skipping): the start of round 0. */
static int push_all_step(struct hf__engine *e, int d, void *arg)
{
    struct merge_step *m = arg;
    struct hf_device *dev = hf_devlist_get(e->devs, d);
    const struct hf_shared *a = &m->S->arr[m->s];
    if (!dev->ops || !dev->ops->shared_push)
        return 0;
    return dev->ops->shared_push(dev, m->s, NULL, a->host, a->count, 0);
}

int hf__shared_sync_all(struct hf__engine *e)
{
    struct hf__shared_set *S = e->shared;
    for (int s = 0; S && s < S->n; s++) {
        if (S->arr[s].kind == HF_SHARED_READONLY)
            continue;
        if (S->rec[s].bits)
            hf__recorder_clear(&S->rec[s]);
        for (int d = 0; d < e->ndev; d++)
            S->skip_push[d] = 0;
        struct merge_step m = {.S = S, .pulled = S->pulled, .s = s, .skip_push = S->skip_push};
        int rc = e->opts->engine == HF_ENGINE_REAL
                     ? hf__real_each_device(e, push_all_step, &m, want_devices(e, 1, 0))
                     : 0;
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- a node of a run across nodes (nodes.c) --------------------------------- */

long hf__shared_take_changes(struct hf__shared_set *S, int s, const uint32_t **idx,
                             const void **vals)
{
    HF_ASSERT_MSG(S && s >= 0 && s < S->n && S->rec[s].bits,
                  "hf__shared_take_changes: not a MIN/MAX/OR shared array");
    hf__recorder_seal(&S->rec[s]);
    int rc = gather_union(S, s);
    if (rc)
        return rc;
    *idx = hf__recorder_list(&S->rec[s]);
    *vals = S->push_val;
    return (long)S->rec[s].count;
}

void hf__shared_forget_changes(struct hf__shared_set *S, int s)
{
    hf__recorder_clear(&S->rec[s]);
}

/* What one update asks of each device of this node (apply_step). */
struct apply {
    int s;
    const uint32_t *idx;
    const void *vals;
    size_t n, first;
};

/* On device d's thread: the update into its copy of the array. */
static int apply_step(struct hf__engine *e, int d, void *arg)
{
    const struct apply *u = arg;
    struct hf_device *dev = hf_devlist_get(e->devs, d);
    return dev->ops->shared_push(dev, u->s, u->idx, u->vals, u->n, u->first);
}

int hf__shared_apply(struct hf__engine *e, int s, const uint32_t *idx, const void *vals, size_t n,
                     size_t first)
{
    struct hf__shared_set *S = e->shared;
    HF_ASSERT_MSG(S && s >= 0 && s < S->n, "hf__shared_apply: no such shared array");
    const struct hf_shared *a = &S->arr[s];
    size_t es = hf_elem_size(a->elem);
    if (a->kind == HF_SHARED_READONLY)
        return hf_fail(HF_EINVAL, "rank 0 sent an update of read-only shared array %s", a->name);
    if (!idx && (first > a->count || n > a->count - first))
        return hf_fail(HF_EINVAL, "rank 0 sent elements [%zu, %zu) of shared array %s, which has "
                                  "%zu", first, first + n, a->name, a->count);
    for (size_t k = 0; idx && k < n; k++)
        if (idx[k] >= a->count)
            return hf_fail(HF_EINVAL, "rank 0 sent element %u of shared array %s, which has %zu",
                           (unsigned)idx[k], a->name, a->count);
    /* Rank 0's values are the merged ones: they replace the host's. */
    if (idx)
        for (size_t k = 0; k < n; k++)
            memcpy((char *)a->host + (size_t)idx[k] * es, (const char *)vals + k * es, es);
    else if (n)
        memcpy((char *)a->host + first * es, vals, n * es);
    /* The union is rank 0's: the indices it sent, or nothing after a whole-
     * array push (round 0, as hf__shared_sync_all forgets the host's). */
    if (S->rec[s].bits) {
        hf__recorder_clear(&S->rec[s]);
        for (size_t k = 0; idx && k < n; k++)
            hf__recorder_add(&S->rec[s], idx[k]);
        hf__recorder_seal(&S->rec[s]);
    }
    struct apply u = {.s = s, .idx = idx, .vals = vals, .n = n, .first = first};
    for (int d = 0; d < e->ndev; d++) {
        const struct hf_device *dev = hf_devlist_get(e->devs, d);
        S->want[d] = n > 0 && dev->ops && dev->ops->shared_push;
    }
    return e->opts->engine == HF_ENGINE_REAL ? hf__real_each_device(e, apply_step, &u, S->want)
                                             : 0;
}
