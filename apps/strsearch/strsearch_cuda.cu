/* strsearch_cuda.cu - the strsearch app's GPU side: a PFAC matcher.
 *
 * DESIGN
 * ------
 * PFAC (Lin et al., "Accelerating string matching using multi-threaded
 * algorithm on GPU", the failure-less Aho-Corasick): the automaton is just the
 * trie of the patterns, without failure links, and one GPU thread starts at
 * every text position and walks the trie until it falls off (state 0). Each
 * state reached that ends one or more patterns reports them for the thread's
 * start position, so overlapping matches, prefixes and repeated patterns come
 * out naturally and a walk never goes deeper than the longest pattern.
 *
 * The trie is built once on the host (hf__ss_pfac_build) as a dense table of
 * 256 next-states per state (state 0 dead, state 1 the root) plus, per state,
 * the slice of pattern ids it ends, and uploaded to each GPU on that GPU's
 * first piece (synchronously, once; the table stays read-only, cached through
 * __ldg). Each block copies its tile of text (2048 start positions plus the
 * overlap) into shared memory with coalesced loads, and with up to 4096
 * patterns keeps its counters in shared memory too, adding them to the global
 * ones once per block instead of one atomic per match.
 *
 * A piece follows framework/hf_cuda.h: text in on the copy-in stream (from the
 * pinned mapping directly, or through the slot's pinned staging buffer), the
 * kernel on the compute stream, the counters and the match buffer out into the
 * staging buffer, and a host callback (cudaLaunchHostFunc) that moves them into
 * the app's part once they have arrived. The match buffer has a fixed capacity
 * (a 64th of the piece's bytes); when it overflows, the part says so and the
 * app's collect searches the range again on the CPU, so results are never lost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetfarm.h"
#include "hf_cuda.h"
#include "strsearch.h"

#define PFAC_TPB 256
#define PFAC_PER 8 /* start positions per thread: a tile is TPB * PER positions */
#define PFAC_TILE (PFAC_TPB * PFAC_PER)
#define PFAC_SHARED_PATS 4096
#define PFAC_MAX_GPUS 64
#define PFAC_MAX_TABLE ((size_t)2 << 30)

/* One GPU's copy of the automaton. */
struct pfac_gpu {
    int ordinal;
    uint32_t *d_next, *d_ofirst, *d_ocnt, *d_ids;
};

struct hf__ss_pfac {
    uint32_t nstates;        /* with the dead state 0 and the root 1 */
    uint32_t *next;          /* nstates * 256 */
    uint32_t *ofirst, *ocnt; /* per state: ids[ofirst .. ofirst + ocnt) end there */
    uint32_t *ids;
    size_t npat;
    unsigned maxlen;
    struct pfac_gpu gpu[PFAC_MAX_GPUS];
};

/* Everything the host callback needs to fill the part after the copy-out. */
struct pfac_done {
    struct hf__ss_part *part;
    const unsigned char *h_out; /* counters, then the match count, then the matches */
    size_t npat, mcap;
};

static size_t align256(size_t n)
{
    return (n + 255) & ~(size_t)255;
}

/* Builds the trie of the patterns. */
extern "C" int hf__ss_pfac_build(struct hf__ss_pfac **out, const struct hf__ss_patterns *p)
{
    struct hf__ss_pfac *pf = (struct hf__ss_pfac *)calloc(1, sizeof *pf);
    size_t cap = 1024, n = 2;
    uint32_t *next = (uint32_t *)calloc(cap * 256, sizeof *next);
    uint32_t *head = (uint32_t *)malloc(cap * sizeof *head); /* first pattern ending here */
    uint32_t *link = (uint32_t *)malloc(p->n * sizeof *link); /* next pattern, same state */
    if (!pf || !next || !head || !link)
        goto oom;
    memset(head, 0xff, cap * sizeof *head);
    for (size_t i = 0; i < p->n; i++) {
        uint32_t s = 1;
        for (size_t j = 0; j < p->len[i]; j++) {
            uint32_t *t = &next[(size_t)s * 256 + p->p[i][j]];
            if (*t == 0) {
                if (n == cap) {
                    if ((cap * 2) * 256 * sizeof *next > PFAC_MAX_TABLE) {
                        free(pf), free(next), free(head), free(link);
                        return hf_fail(HF_ENOTSUP, "strsearch: the patterns' automaton needs "
                                       "more than %zu MiB on the GPU", PFAC_MAX_TABLE >> 20);
                    }
                    uint32_t *nx = (uint32_t *)realloc(next, cap * 2 * 256 * sizeof *next);
                    uint32_t *hd = (uint32_t *)realloc(head, cap * 2 * sizeof *head);
                    if (nx)
                        next = nx;
                    if (hd)
                        head = hd;
                    if (!nx || !hd)
                        goto oom;
                    memset(next + cap * 256, 0, cap * 256 * sizeof *next);
                    memset(head + cap, 0xff, cap * sizeof *head);
                    cap *= 2;
                    t = &next[(size_t)s * 256 + p->p[i][j]];
                }
                *t = (uint32_t)n++;
            }
            s = *t;
        }
        link[i] = head[s];
        head[s] = (uint32_t)i;
    }
    pf->nstates = (uint32_t)n;
    pf->next = next;
    pf->ofirst = (uint32_t *)calloc(n, sizeof(uint32_t));
    pf->ocnt = (uint32_t *)calloc(n, sizeof(uint32_t));
    pf->ids = (uint32_t *)malloc(p->n * sizeof(uint32_t));
    if (!pf->ofirst || !pf->ocnt || !pf->ids)
        goto oom;
    /* Flattens the per-state lists, ids in increasing order within a state. */
    for (size_t s = 0, k = 0; s < n; s++) {
        pf->ofirst[s] = (uint32_t)k;
        size_t first = k;
        for (uint32_t i = head[s]; i != 0xffffffffu; i = link[i])
            pf->ids[k++] = i;
        pf->ocnt[s] = (uint32_t)(k - first);
        for (size_t a = first, b = k; a + 1 < b; a++, b--) {
            uint32_t t = pf->ids[a];
            pf->ids[a] = pf->ids[b - 1];
            pf->ids[b - 1] = t;
        }
    }
    free(head);
    free(link);
    pf->npat = p->n;
    pf->maxlen = (unsigned)p->maxlen;
    *out = pf;
    return 0;
oom:
    if (pf) {
        free(pf->ofirst);
        free(pf->ocnt);
        free(pf->ids);
    }
    free(pf), free(next), free(head), free(link);
    return hf_fail(HF_ENOMEM, "strsearch: out of memory building the GPU automaton");
}

extern "C" void hf__ss_pfac_destroy(struct hf__ss_pfac *pf)
{
    if (!pf)
        return;
    for (int g = 0; g < PFAC_MAX_GPUS; g++) {
        struct pfac_gpu *c = &pf->gpu[g];
        if (!c->d_next)
            continue;
        /* The GPU may be closed already; its memory went with it then. */
        if (cudaSetDevice(c->ordinal) == cudaSuccess) {
            cudaFree(c->d_next);
            cudaFree(c->d_ofirst);
            cudaFree(c->d_ocnt);
            cudaFree(c->d_ids);
        }
        (void)cudaGetLastError();
    }
    free(pf->next);
    free(pf->ofirst);
    free(pf->ocnt);
    free(pf->ids);
    free(pf);
}

/* Uploads the automaton to this GPU on its first piece (synchronously, once). */
static int pfac_upload(struct hf_cuda *gpu, struct hf__ss_pfac *pf, struct pfac_gpu **out)
{
    int idx = hf_cuda_device_index(gpu);
    if (idx < 0 || idx >= PFAC_MAX_GPUS)
        return hf_fail(HF_ENOTSUP, "strsearch: device index %d: at most %d GPUs", idx,
                       PFAC_MAX_GPUS);
    struct pfac_gpu *c = &pf->gpu[idx];
    *out = c;
    if (c->d_next)
        return 0;
    size_t n = pf->nstates, tb = n * 256 * sizeof(uint32_t);
    c->ordinal = hf_cuda_ordinal(gpu);
    int rc = hf_cuda_check(gpu, cudaMalloc((void **)&c->d_next, tb), "automaton alloc");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMalloc((void **)&c->d_ofirst, n * 4), "automaton alloc");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMalloc((void **)&c->d_ocnt, n * 4), "automaton alloc");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMalloc((void **)&c->d_ids, pf->npat * 4), "automaton alloc");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemcpy(c->d_next, pf->next, tb, cudaMemcpyHostToDevice),
                           "automaton upload");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemcpy(c->d_ofirst, pf->ofirst, n * 4,
                                           cudaMemcpyHostToDevice), "automaton upload");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemcpy(c->d_ocnt, pf->ocnt, n * 4, cudaMemcpyHostToDevice),
                           "automaton upload");
    if (!rc)
        rc = hf_cuda_check(gpu, cudaMemcpy(c->d_ids, pf->ids, pf->npat * 4,
                                           cudaMemcpyHostToDevice), "automaton upload");
    if (rc) {
        cudaFree(c->d_next);
        cudaFree(c->d_ofirst);
        cudaFree(c->d_ocnt);
        cudaFree(c->d_ids);
        memset(c, 0, sizeof *c);
        /* An OOM here is not the piece's size: do not let the driver halve it forever. */
        return rc == HF_EDEVOOM ? HF_EDEVICE : rc;
    }
    return 0;
}

/* PFAC: thread t of block b starts at positions b * TILE + k * TPB + t of the
 * piece (k < PER) and walks the trie over the tile held in shared memory.
 * Matches start inside [0, own); the tile reaches `scan` (own + overlap). */
static __global__ void pfac_kernel(const unsigned char *d_text, size_t own, size_t scan,
                                   const uint32_t *__restrict__ d_next,
                                   const uint32_t *__restrict__ d_ofirst,
                                   const uint32_t *__restrict__ d_ocnt,
                                   const uint32_t *__restrict__ d_ids,
                                   unsigned long long *d_counts, unsigned long long *d_nm,
                                   struct hf__ss_match *d_m, unsigned long long mcap,
                                   unsigned long long base, unsigned maxlen, unsigned npat,
                                   int shared_counts)
{
    extern __shared__ unsigned char smem[];
    size_t t0 = (size_t)blockIdx.x * PFAC_TILE;
    unsigned tile = PFAC_TILE + maxlen - 1;
    unsigned nload = scan - t0 < tile ? (unsigned)(scan - t0) : tile;
    unsigned char *s_text = smem;
    unsigned *s_counts = (unsigned *)(smem + ((tile + 15) & ~15u));
    for (unsigned i = threadIdx.x; i < nload; i += PFAC_TPB)
        s_text[i] = d_text[t0 + i];
    if (shared_counts)
        for (unsigned i = threadIdx.x; i < npat; i += PFAC_TPB)
            s_counts[i] = 0;
    __syncthreads();
    for (unsigned k = 0; k < PFAC_PER; k++) {
        unsigned p = k * PFAC_TPB + threadIdx.x;
        if (t0 + p >= own)
            break;
        uint32_t st = 1;
        for (unsigned j = p; j < nload; j++) {
            st = __ldg(&d_next[(size_t)st * 256 + s_text[j]]);
            if (st == 0)
                break;
            uint32_t c = __ldg(&d_ocnt[st]);
            if (c == 0)
                continue;
            uint32_t f = __ldg(&d_ofirst[st]);
            for (uint32_t q = 0; q < c; q++) {
                uint32_t id = __ldg(&d_ids[f + q]);
                if (shared_counts)
                    atomicAdd(&s_counts[id], 1u);
                else
                    atomicAdd(&d_counts[id], 1ull);
                if (mcap) {
                    unsigned long long at = atomicAdd(d_nm, 1ull);
                    if (at < mcap) {
                        d_m[at].off = base + t0 + p;
                        d_m[at].pat = id;
                    }
                }
            }
        }
    }
    if (!shared_counts)
        return;
    __syncthreads();
    for (unsigned i = threadIdx.x; i < npat; i += PFAC_TPB)
        if (s_counts[i])
            atomicAdd(&d_counts[i], (unsigned long long)s_counts[i]);
}

/* Host callback after the copy-out: moves counters and matches into the part.
 * It runs on a CUDA thread and calls no CUDA function. */
static void CUDART_CB pfac_done_cb(void *arg)
{
    struct pfac_done *d = (struct pfac_done *)arg;
    struct hf__ss_part *part = d->part;
    memcpy(part->counts, d->h_out, d->npat * sizeof(uint64_t));
    if (d->mcap) {
        size_t off = align256(d->npat * sizeof(uint64_t));
        unsigned long long nm;
        memcpy(&nm, d->h_out + off, sizeof nm);
        if (nm > d->mcap) {
            part->overflow = 1;
        } else {
            if (nm > part->mcap) {
                void *v = realloc(part->m, nm * sizeof *part->m);
                if (!v)
                    part->overflow = 1; /* collect rescans on the CPU */
                else
                    part->m = (struct hf__ss_match *)v, part->mcap = nm;
            }
            if (!part->overflow) {
                memcpy(part->m, d->h_out + off + 256, nm * sizeof *part->m);
                part->nm = nm;
            }
        }
    }
    free(d);
}

extern "C" int hf__ss_cuda_run(struct hf_cuda *gpu, struct hf__ss_pfac *pf,
                               const unsigned char *text, uint64_t size, int pinned,
                               struct hf__ss_part *part)
{
    struct pfac_gpu *c = NULL;
    int rc = pfac_upload(gpu, pf, &c);
    if (rc)
        return rc;
    uint64_t end = part->end < size ? part->end : size;
    size_t own = (size_t)(end - part->begin);
    size_t overlap = size - end < pf->maxlen - 1 ? (size_t)(size - end) : pf->maxlen - 1;
    size_t scan = own + overlap;
    if (own == 0)
        return 0;
    size_t mcap = part->want_m ? (own / 64 > 1024 ? own / 64 : 1024) : 0;
    size_t count_bytes = align256(pf->npat * sizeof(uint64_t));
    size_t out_bytes = count_bytes + (mcap ? 256 + mcap * sizeof(struct hf__ss_match) : 0);
    unsigned char *d_text = (unsigned char *)hf_cuda_arena_alloc(gpu, scan);
    unsigned char *d_out = (unsigned char *)hf_cuda_arena_alloc(gpu, out_bytes);
    size_t text_stage = pinned ? 0 : align256(scan);
    unsigned char *h_stage = (unsigned char *)hf_cuda_staging(gpu, text_stage + out_bytes);
    if (!d_text || !d_out || !h_stage)
        return hf_fail(HF_EDEVOOM, "strsearch: a piece of %zu bytes does not fit %s's arena "
                       "or staging buffer", scan, hf_cuda_name(gpu));
    struct pfac_done *done = (struct pfac_done *)malloc(sizeof *done);
    if (!done)
        return hf_fail(HF_ENOMEM, "strsearch: out of memory");
    *done = (struct pfac_done){part, h_stage + text_stage, pf->npat, mcap};

    /* Copy-in: straight from the pinned mapping, or through the staging buffer. */
    const unsigned char *src = text + part->begin;
    if (!pinned) {
        memcpy(h_stage, src, scan);
        src = h_stage;
    }
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_COPY_IN);
    rc = hf_cuda_check(gpu, cudaMemcpyAsync(d_text, src, scan, cudaMemcpyHostToDevice, s),
                       "strsearch copy in");
    /* Kernel: zero the counters and the match count, then PFAC. */
    if (!rc) {
        s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
        rc = hf_cuda_check(gpu, cudaMemsetAsync(d_out, 0, count_bytes + (mcap ? 256 : 0), s),
                           "strsearch memset");
    }
    if (!rc) {
        int shared_counts = pf->npat <= PFAC_SHARED_PATS;
        unsigned tile = PFAC_TILE + pf->maxlen - 1;
        size_t smem = ((tile + 15) & ~15u) + (shared_counts ? pf->npat * sizeof(unsigned) : 0);
        size_t blocks = (own + PFAC_TILE - 1) / PFAC_TILE;
        pfac_kernel<<<(unsigned)blocks, PFAC_TPB, smem, s>>>(
            d_text, own, scan, c->d_next, c->d_ofirst, c->d_ocnt, c->d_ids,
            (unsigned long long *)d_out, (unsigned long long *)(d_out + count_bytes),
            (struct hf__ss_match *)(d_out + count_bytes + 256), mcap,
            (unsigned long long)part->begin, pf->maxlen, (unsigned)pf->npat, shared_counts);
        rc = hf_cuda_check(gpu, cudaGetLastError(), "strsearch PFAC kernel launch");
    }
    /* Copy-out into staging, then the callback fills the part. */
    if (!rc) {
        s = hf_cuda_phase(gpu, HF_CUDA_COPY_OUT);
        rc = hf_cuda_check(gpu, cudaMemcpyAsync(h_stage + text_stage, d_out, out_bytes,
                                                cudaMemcpyDeviceToHost, s),
                           "strsearch copy out");
    }
    if (!rc)
        rc = hf_cuda_check(gpu, cudaLaunchHostFunc(s, pfac_done_cb, done),
                           "strsearch host callback");
    if (rc)
        free(done); /* the callback was never enqueued */
    return rc;
}
