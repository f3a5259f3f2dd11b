/* shared_cuda.c - a GPU's replicas of an app's shared data (hetfarm.h,
 * "Shared data"; the merge is core/shared.c).
 *
 * DESIGN
 * ------
 * Every shared array gets a replica in plain device memory when the GPU is
 * opened, before the driver's arena takes what is left, and keeps it for the
 * whole run: READONLY arrays are the resident data of iterative apps (a
 * graph's CSR), never copied again. A MIN/MAX/OR array also gets a change
 * recorder (a bit per element, an index list, a count) that the app's kernels
 * fill with hf_cuda_shared_record, and a gather buffer. Pulling gathers the
 * recorded elements on the GPU and copies just those indices and values to
 * the host right after each bundle, as part of the bundle (while the other
 * devices still work), and the recorder is cleared at once, so that the
 * round's merge reads host memory only and a round that one GPU ran alone
 * needs no further step on that GPU. Pushing copies the merged union back
 * and scatters it. An OWNED array's range is copied back piece by piece, on
 * the copy-out stream after the piece's kernels, so that only the last
 * piece's copy is not hidden behind a kernel: a PageRank bundle over all of
 * kron-22 writes 32 MB, 0.6 ms at the pinned rate, after a 2.1 ms kernel
 * when it was copied once the bundle ended (H200, session 24).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shared_cuda.h"

struct replica {
    void *d_data;
    size_t count, elem;
    enum hf_shared_kind kind;
    void *host;
    uint32_t *d_bits, *d_list;
    unsigned long long *d_count;
    void *d_gather; /* count elements: gathered values, or the values of a push */
    uint32_t *h_idx; /* pinned host copies of this round's changes, grown on demand */
    void *h_vals;
    size_t h_cap;
    size_t held;     /* changes copied to h_idx / h_vals this round (an element may repeat) */
    int pinned;      /* host holds a reference in the pin registry */
    int taken;       /* the host took them: the next bundle starts a new round's list */
};

struct hf__cuda_shared {
    int n;
    struct replica r[];
};

/* Host arrays that move every round (OWNED ranges, pushes of whole arrays)
 * are page-locked once for all GPUs of the process, so that their copies run
 * at the pinned rate instead of through a bounce buffer; every GPU's open
 * takes a reference and its close gives it back. Registration is best
 * effort: an array that cannot be pinned is copied pageable. */
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pinned {
    void *ptr;
    int refs, ok;
} pins[64];

static void pin_host(void *ptr, size_t bytes)
{
    pthread_mutex_lock(&pin_lock);
    int free_slot = -1;
    for (int k = 0; k < 64; k++) {
        if (pins[k].refs > 0 && pins[k].ptr == ptr) {
            pins[k].refs++;
            pthread_mutex_unlock(&pin_lock);
            return;
        }
        if (pins[k].refs == 0 && free_slot < 0)
            free_slot = k;
    }
    if (free_slot >= 0) {
        int ok = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable) == cudaSuccess;
        (void)cudaGetLastError(); /* already registered by the app, or no room: pageable */
        pins[free_slot] = (struct pinned){ptr, 1, ok};
    }
    pthread_mutex_unlock(&pin_lock);
}

static void unpin_host(void *ptr)
{
    pthread_mutex_lock(&pin_lock);
    for (int k = 0; k < 64; k++)
        if (pins[k].refs > 0 && pins[k].ptr == ptr && --pins[k].refs == 0) {
            if (pins[k].ok)
                (void)cudaHostUnregister(ptr);
            (void)cudaGetLastError();
            pins[k].ptr = NULL;
        }
    pthread_mutex_unlock(&pin_lock);
}

static int recorded(enum hf_shared_kind k)
{
    return k == HF_SHARED_MIN || k == HF_SHARED_MAX || k == HF_SHARED_OR;
}

static int pull_room(struct hf_cuda *gpu, struct replica *r, size_t n);

/* Allocates and fills one replica. A recorded array's pinned pull buffers are
 * sized for every element at once, like its device list: growing them inside
 * a round (cudaHostAlloc) cost 11-14 ms in the round where a Kronecker BFS
 * discovers 2M vertices (9edd91b:bench/NOTES.md). */
static int replica_open(struct hf_cuda *gpu, const struct hf_shared *a, struct replica *r)
{
    r->count = a->count;
    r->elem = hf_elem_size(a->elem);
    r->kind = a->kind;
    r->host = a->host;
    size_t bytes = r->count * r->elem;
    int rc = hf_cuda_check(gpu, cudaMalloc(&r->d_data, bytes), a->name);
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemcpy(r->d_data, a->host, bytes, cudaMemcpyHostToDevice),
                           a->name);
    if (rc || a->kind == HF_SHARED_READONLY)
        return rc;
    pin_host(a->host, bytes);
    r->pinned = 1;
    if (!recorded(a->kind))
        return 0;
    size_t words = (r->count + 31) / 32;
    rc = hf_cuda_check(gpu, cudaMalloc((void **)&r->d_bits, words * 4), "a change recorder");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMalloc((void **)&r->d_list, r->count * 4), "a change list");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMalloc((void **)&r->d_count, sizeof *r->d_count), "a count");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMalloc(&r->d_gather, bytes), "a gather buffer");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemset(r->d_bits, 0, words * 4), "clearing a recorder");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemset(r->d_count, 0, sizeof *r->d_count), "a count");
    return rc ? rc : pull_room(gpu, r, r->count);
}

int hf__cuda_shared_open(struct hf_cuda *gpu, const struct hf_shared *arr, int n,
                         struct hf__cuda_shared **out)
{
    *out = NULL;
    if (n <= 0)
        return 0;
    struct hf__cuda_shared *sh = calloc(1, sizeof *sh + (size_t)n * sizeof sh->r[0]);
    if (!sh)
        return hf_fail(HF_ENOMEM, "%s: out of memory for shared data", hf_cuda_name(gpu));
    sh->n = n;
    *out = sh;
    for (int s = 0; s < n; s++) {
        int rc = replica_open(gpu, &arr[s], &sh->r[s]);
        if (rc)
            return rc;
    }
    return 0;
}

void hf__cuda_shared_close(struct hf__cuda_shared *sh)
{
    if (!sh)
        return;
    for (int s = 0; s < sh->n; s++) {
        struct replica *r = &sh->r[s];
        (void)cudaFree(r->d_data);
        (void)cudaFree(r->d_bits);
        (void)cudaFree(r->d_list);
        (void)cudaFree(r->d_count);
        (void)cudaFree(r->d_gather);
        (void)cudaFreeHost(r->h_idx);
        (void)cudaFreeHost(r->h_vals);
        if (r->pinned)
            unpin_host(r->host);
    }
    (void)cudaGetLastError();
    free(sh);
}

void *hf_cuda_shared(struct hf_cuda *gpu, int s)
{
    struct hf__cuda_shared *sh = hf__cuda_shared_of(gpu);
    return sh && s >= 0 && s < sh->n ? sh->r[s].d_data : NULL;
}

struct hf_cuda_recorder hf_cuda_shared_recorder(struct hf_cuda *gpu, int s)
{
    struct hf__cuda_shared *sh = hf__cuda_shared_of(gpu);
    struct hf_cuda_recorder rec = {NULL, NULL, NULL};
    HF_ASSERT_MSG(sh && s >= 0 && s < sh->n && sh->r[s].d_bits,
                  "hf_cuda_shared_recorder: not a MIN/MAX/OR shared array");
    rec.bits = sh->r[s].d_bits;
    rec.list = sh->r[s].d_list;
    rec.count = sh->r[s].d_count;
    return rec;
}

/* Grows the pinned host buffers of a pull to n elements (doubling, so that a
 * growing frontier reallocates a few times only). */
static int pull_room(struct hf_cuda *gpu, struct replica *r, size_t n)
{
    if (n <= r->h_cap)
        return 0;
    size_t cap = r->h_cap ? r->h_cap : 4096;
    while (cap < n)
        cap *= 2;
    uint32_t *idx = NULL;
    void *vals = NULL;
    int rc = hf_cuda_check(gpu, cudaHostAlloc((void **)&idx, cap * 4, cudaHostAllocPortable),
                           "pinned pull buffer");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaHostAlloc(&vals, cap * r->elem, cudaHostAllocPortable),
                           "pinned pull buffer");
    if (rc) {
        (void)cudaFreeHost(idx);
        return rc;
    }
    if (r->held) { /* keep what this round's earlier bundles brought */
        memcpy(idx, r->h_idx, r->held * 4);
        memcpy(vals, r->h_vals, r->held * r->elem);
    }
    (void)cudaFreeHost(r->h_idx);
    (void)cudaFreeHost(r->h_vals);
    r->h_idx = idx, r->h_vals = vals, r->h_cap = cap;
    return 0;
}

/* Drains the recorder after a bundle: the recorded elements' indices and
 * CURRENT values go to the pinned host buffers (appended to what earlier
 * bundles of the round brought), then the recorder is cleared on the GPU. A
 * later bundle of the same round that changes an element again records it
 * again, so the host sees every element's last value (the merge combines
 * repeats with the op). Draining per bundle, not per round, is what keeps a
 * value from going stale between two bundles of one GPU. */
static int drain(struct hf_cuda *gpu, struct replica *r, int s, cudaStream_t st)
{
    unsigned long long n = 0;
    int rc = hf_cuda_check(gpu, cudaMemcpyAsync(&n, r->d_count, sizeof n, cudaMemcpyDeviceToHost,
                                                st), "reading a change count");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaStreamSynchronize(st), "reading a change count");
    if (rc)
        return rc;
    if (n > r->count) /* a recorder never holds an element twice */
        return hf_fail(HF_EDEVICE, "%s: shared array %d recorded %llu changes of %zu elements",
                       hf_cuda_name(gpu), s, n, r->count);
    if (r->taken)
        r->held = 0, r->taken = 0;
    if (n == 0)
        return 0;
    if ((rc = pull_room(gpu, r, r->held + (size_t)n)))
        return rc;
    /* The count, read, now counts indices out of range (an app kernel's
     * wrong record): the host is promised indices below r->count. */
    unsigned long long bad = 0;
    rc = hf_cuda_check(gpu, cudaMemsetAsync(r->d_count, 0, sizeof *r->d_count, st),
                       "clearing a count");
    if (!rc)
        rc = hf_cuda_check(gpu, hf__cuda_gather(r->d_gather, r->d_data, r->d_list, n, r->elem,
                                                r->count, r->d_count, st),
                           "gathering changes");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemcpyAsync(&bad, r->d_count, sizeof bad,
                                                cudaMemcpyDeviceToHost, st),
                           "reading a range check");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemcpyAsync(r->h_idx + r->held, r->d_list, n * 4,
                                                cudaMemcpyDeviceToHost, st),
                           "pulling changed indices");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemcpyAsync((char *)r->h_vals + r->held * r->elem,
                                                r->d_gather, n * r->elem, cudaMemcpyDeviceToHost,
                                                st), "pulling changed values");
    if (!rc)
        rc = hf_cuda_check(gpu, hf__cuda_clear_bits(r->d_bits, r->d_list, n, r->count, st),
                           "clearing a recorder");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemsetAsync(r->d_count, 0, sizeof *r->d_count, st),
                           "clearing a count");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaStreamSynchronize(st), "pulling changes");
    if (!rc && bad)
        return hf_fail(HF_EAPP, "%s: shared array %d: %llu recorded elements are beyond its %zu "
                                "(a kernel recorded a wrong index)", hf_cuda_name(gpu), s, bad,
                       r->count);
    if (!rc)
        r->held += (size_t)n;
    return rc;
}

int hf__cuda_shared_bundle_start(struct hf_cuda *gpu, struct hf__cuda_shared *sh)
{
    (void)gpu;
    for (int s = 0; sh && s < sh->n; s++)
        if (sh->r[s].taken) /* a new round: the host has the last one's changes */
            sh->r[s].held = 0, sh->r[s].taken = 0;
    return 0;
}

int hf__cuda_shared_piece_out(struct hf_cuda *gpu, struct hf__cuda_shared *sh,
                              const struct hf_bundle *piece, cudaStream_t st)
{
    for (int s = 0; sh && s < sh->n; s++) {
        struct replica *r = &sh->r[s];
        if (r->kind != HF_SHARED_OWNED || piece->begin >= piece->end)
            continue;
        if (piece->end > r->count)
            return hf_fail(HF_EAPP, "%s: bundle units %zu..%zu beyond OWNED shared array %d "
                                    "(%zu elements)", hf_cuda_name(gpu), piece->begin,
                           piece->end - 1, s, r->count);
        size_t off = piece->begin * r->elem;
        int rc = hf_cuda_check(gpu, cudaMemcpyAsync((char *)r->host + off, (char *)r->d_data + off,
                                                    (piece->end - piece->begin) * r->elem,
                                                    cudaMemcpyDeviceToHost, st),
                               "copying an OWNED range back");
        if (rc)
            return rc;
    }
    return 0;
}

int hf__cuda_shared_bundle_done(struct hf_cuda *gpu, struct hf__cuda_shared *sh)
{
    cudaStream_t st = hf_cuda_compute_stream(gpu);
    for (int s = 0; sh && s < sh->n; s++) {
        struct replica *r = &sh->r[s];
        int rc = r->d_bits ? drain(gpu, r, s, st) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

long hf__cuda_shared_pull(struct hf_cuda *gpu, struct hf__cuda_shared *sh, int s,
                          const uint32_t **idx, const void **vals)
{
    struct replica *r = &sh->r[s];
    (void)gpu;
    *idx = r->h_idx;
    *vals = r->h_vals;
    r->taken = 1;
    return (long)r->held;
}

int hf__cuda_shared_fetch(struct hf_cuda *gpu, struct hf__cuda_shared *sh, int s)
{
    struct replica *r = &sh->r[s];
    cudaStream_t st = hf_cuda_compute_stream(gpu);
    int rc = hf_cuda_check(gpu, cudaMemcpyAsync(r->host, r->d_data, r->count * r->elem,
                                                cudaMemcpyDeviceToHost, st),
                           "fetching a shared array");
    return rc ? rc : hf_cuda_check(gpu, cudaStreamSynchronize(st), "fetching a shared array");
}

int hf__cuda_shared_push(struct hf_cuda *gpu, struct hf__cuda_shared *sh, int s,
                         const uint32_t *idx, const void *vals, size_t n, size_t first)
{
    struct replica *r = &sh->r[s];
    cudaStream_t st = hf_cuda_compute_stream(gpu);
    int rc;
    if (!idx) {
        HF_ASSERT_MSG(first <= r->count && n <= r->count - first, "shared push: bad range");
        rc = hf_cuda_check(gpu, cudaMemcpyAsync((char *)r->d_data + first * r->elem, vals,
                                                n * r->elem, cudaMemcpyHostToDevice, st),
                           "pushing a range");
    } else {
        HF_ASSERT_MSG(n <= r->count && r->d_list, "shared push: bad union");
        rc = hf_cuda_check(gpu, cudaMemcpyAsync(r->d_list, idx, n * 4, cudaMemcpyHostToDevice, st),
                           "pushing changed indices");
        if (!rc)
            rc = hf_cuda_check(gpu, cudaMemcpyAsync(r->d_gather, vals, n * r->elem,
                                                    cudaMemcpyHostToDevice, st),
                               "pushing changed values");
        if (!rc)
            rc = hf_cuda_check(gpu, hf__cuda_scatter(r->d_data, r->d_list, r->d_gather, n,
                                                     r->elem, st), "scattering changes");
    }
    if (!rc)
        rc = hf_cuda_check(gpu, cudaStreamSynchronize(st), "pushing shared data");
    return rc;
}
