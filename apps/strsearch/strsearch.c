/* strsearch.c - multi-pattern text search: the hetfarm template filled in.
 *
 * DESIGN
 * ------
 * The text is memory-mapped once (setup) and never read whole: a load is one
 * SEGMENT of it ([load] segment bytes, default the whole file), round r
 * searching segment r mod nseg for `passes` passes over the text, and
 * next_load returns 0 after the last one. Units are bytes of the segment.
 *
 * Partitioner: fixed chunks of [load] chunk bytes ([run] grain is not used:
 * the chunk is the app's own key, checked against the longest pattern).
 * Chunks are plain ranges; every matcher reads (longest pattern - 1) bytes
 * past its range (the overlap, which may reach into the next segment) and
 * keeps only matches whose first byte is inside, so each occurrence belongs to
 * exactly one chunk. The bundler is the default merge of contiguous ranges;
 * a chunk's `bytes` counts its overlap, since a GPU must receive it too.
 *
 * Running a bundle fills per-device PARTS (strsearch.h: counters and matches
 * of one range): the CPU splits the bundle into a few ranges per thread and
 * scans them with Hyperscan under OpenMP; a GPU gets one part per piece the
 * CUDA driver cuts (pieces may repeat a range after an out-of-memory split, and
 * then the latest part of a range wins). collect, on the same device thread,
 * walks the parts covering the bundle and merges them into the round's counts
 * and match list under one lock (collects of disjoint bundles run
 * concurrently). The collect that completes the segment sorts its matches and
 * files the segment's result; a segment searched again (profiling rounds, a
 * later pass) replaces its earlier result, so the output is per text, never
 * doubled.
 *
 * Output: written at teardown, atomically (temporary name + rename), when
 * every segment has a complete result, the last round finished and nothing
 * failed verification. Teardown cannot fail the run, so create checks that
 * the output directory is writable up front. `counts`: one `<count>\t<pattern>`
 * line per pattern in file order; `matches`: `<offset>\t<index>` lines sorted
 * by offset then 0-based pattern index.
 *
 * Across nodes (mpirun; framework/core/nodes.c) the text is a file, so each
 * rank reads its own ranges from it: every rank maps the same path (which
 * must be one every node sees, a shared filesystem) and a node scans only
 * the spans rank 0 hands it; no text crosses the network, and no rank but a
 * lone process reads the file ahead. A node's collects merge its devices'
 * parts as above, but it files no segment: its results hook (ss_results),
 * called once per span, hands over the counts and matches the span
 * collected (checked to be the whole span) and starts the next span from
 * zero. On rank 0 the same hook makes the node device a part for the span,
 * sized by the match bytes the node sent, and the bytes land in it; collect
 * then merges it like a GPU's part, so the segment's sort gives the file
 * order and each match is counted once, by the chunk that owns its first
 * byte, whichever rank scanned the chunk. Only rank 0 verifies and writes.
 *
 * verify compares with the reference (strsearch_ref.c): the whole segment
 * when it is at most [load] verify bytes, else up to four parts that collect
 * set aside (whole CPU sub-ranges or GPU pieces, so the device's own result is
 * what is checked) within the same byte budget.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <omp.h>

#include "strsearch.h"
#ifdef HF_HAVE_CUDA
#include "hf_cuda.h"
#endif

enum { SS_COUNTS, SS_MATCHES };
#define SS_SAMPLES 4

/* A device's parts of the bundle it is running (pointers: parts never move,
 * since a GPU's host callback may still hold one). On rank 0 of a run across
 * nodes a node device's part is the span the node ran, filled by ss_results. */
struct ss_dev {
    struct hf__ss_part **parts;
    size_t n, cap;
    int node; /* a node device (another rank) */
};

/* A part set aside for verify: its range and its counters. */
struct ss_sample {
    uint64_t begin, end;
    uint64_t *counts;
};

struct strsearch {
    /* [load] */
    const char *text_path, *pat_path, *out_path;
    int mode;
    size_t chunk, segment, verify_bytes, cpu_split;
    long passes;
    int pin;
    struct hf__ss_patterns pats;
    /* the text */
    int fd;
    uint64_t size;
    const unsigned char *map;
    size_t nseg;
    int pinned;
    struct hf__ss_hs *hs;
#ifdef HF_HAVE_CUDA
    struct hf__ss_pfac *pfac;
#endif
    int ndev;
    struct ss_dev *dev;
    int serving;             /* this rank is a node of a run across nodes (not rank 0) */
    uint64_t handed;         /* serving: bytes collected up to the last span handed over */
    uint64_t *sent_counts;   /* serving: the last span's counts and matches, being sent */
    struct hf__ss_part sent_m;
    /* the current round, under lock */
    pthread_mutex_t lock;
    size_t seg;
    uint64_t seg_begin, seg_len, collected;
    int started, complete, failed;
    uint64_t *counts;
    struct hf__ss_part round_m; /* the round's match list (counts unused) */
    struct ss_sample sample[SS_SAMPLES];
    int nsample;
    uint64_t sample_budget;
    /* per-segment results */
    uint64_t **seg_counts;
    struct hf__ss_part *seg_m;
    unsigned char *seg_done;
};

/* Checks that the output can be created, so that teardown (which cannot fail
 * the run) is unlikely to fail writing it. */
static int check_writable(const char *where, const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return hf_fail(HF_EIO, "%s: [load] out = %s: cannot create %s: %s", where, path, tmp,
                       strerror(errno));
    close(fd);
    unlink(tmp);
    return 0;
}

static void ss_teardown(void *ctx);

/* Reads [load], the patterns file and the text's size; allocates nothing big. */
static int ss_create(void **ctx, hf_config_t cfg)
{
    struct strsearch *s = calloc(1, sizeof *s);
    if (!s)
        return hf_fail(HF_ENOMEM, "strsearch: out of memory");
    s->fd = -1;
    pthread_mutex_init(&s->lock, NULL);
    *ctx = s;
    const char *mode, *where = hf_config_where(cfg, "load", "text");
    int rc = hf_config_str(cfg, "load", "text", NULL, &s->text_path);
    if (!rc)
        rc = hf_config_str(cfg, "load", "patterns", NULL, &s->pat_path);
    if (!rc)
        rc = hf_config_str(cfg, "load", "output", "counts", &mode);
    if (!rc)
        rc = hf_config_str(cfg, "load", "out", NULL, &s->out_path);
    if (!rc)
        rc = hf_config_size(cfg, "load", "chunk", (size_t)4 << 20, 1, (size_t)1 << 30, &s->chunk);
    if (!rc)
        rc = hf_config_size(cfg, "load", "segment", 0, 0, (size_t)1 << 50, &s->segment);
    if (!rc)
        rc = hf_config_long(cfg, "load", "passes", 1, 1, 1000000, &s->passes);
    if (!rc)
        rc = hf_config_size(cfg, "load", "verify", (size_t)64 << 20, 0, (size_t)1 << 50,
                            &s->verify_bytes);
    if (!rc)
        rc = hf_config_bool(cfg, "load", "pin", 1, &s->pin);
    if (!rc)
        rc = hf_config_size(cfg, "load", "cpu_split", (size_t)256 << 10, 1, (size_t)1 << 30,
                            &s->cpu_split);
    if (rc)
        goto fail;
    if (!s->text_path || !s->pat_path) {
        const char *key = s->text_path ? "patterns" : "text";
        rc = hf_fail(HF_ECONFIG, "%s: [load] %s is missing: strsearch needs text = PATH and "
                     "patterns = PATH", hf_config_path(cfg), key);
        goto fail;
    }
    if (strcmp(mode, "counts") == 0 || strcmp(mode, "matches") == 0) {
        s->mode = mode[0] == 'c' ? SS_COUNTS : SS_MATCHES;
    } else {
        rc = hf_fail(HF_ECONFIG, "%s: [load] output = %s: expected counts or matches",
                     hf_config_where(cfg, "load", "output"), mode);
        goto fail;
    }
    if ((rc = hf__ss_patterns_load(s->pat_path, &s->pats)))
        goto fail;
    if (s->pats.maxlen > s->chunk) {
        rc = hf_fail(HF_ECONFIG, "%s: [load] chunk = %zu: shorter than the longest pattern "
                     "(%zu bytes) of %s", hf_config_where(cfg, "load", "chunk"), s->chunk,
                     s->pats.maxlen, s->pat_path);
        goto fail;
    }
    if ((rc = hf__ss_text_open(where, s->text_path, &s->fd, &s->size)))
        goto fail;
    if (s->out_path && (rc = check_writable(hf_config_where(cfg, "load", "out"), s->out_path)))
        goto fail;
    uint64_t seg = s->segment ? s->segment : s->size;
    s->nseg = (size_t)((s->size + seg - 1) / seg);
    s->seg_counts = calloc(s->nseg, sizeof *s->seg_counts);
    s->seg_m = calloc(s->nseg, sizeof *s->seg_m);
    s->seg_done = calloc(s->nseg, 1);
    s->counts = calloc(s->pats.n, sizeof *s->counts);
    s->sent_counts = calloc(s->pats.n, sizeof *s->sent_counts);
    if (!s->seg_counts || !s->seg_m || !s->seg_done || !s->counts || !s->sent_counts) {
        rc = hf_fail(HF_ENOMEM, "strsearch: out of memory for %zu segments", s->nseg);
        goto fail;
    }
    return 0;
fail:
    ss_teardown(s);
    *ctx = NULL;
    return rc;
}

/* Maps the text, compiles the patterns for the CPU (and the GPUs) and makes
 * the per-device part lists. */
static int ss_setup(void *ctx, const struct hf_devices *devs)
{
    struct strsearch *s = ctx;
    void *m = mmap(NULL, s->size, PROT_READ, MAP_SHARED, s->fd, 0);
    if (m == MAP_FAILED)
        return hf_fail(HF_EIO, "strsearch: cannot map %s: %s", s->text_path, strerror(errno));
    s->map = m;
    /* Alone, the process searches the whole text: read it ahead. Across
     * nodes each rank reads only the ranges it is handed (from a path every
     * node sees): no read-ahead of a corpus it mostly never touches. */
    if (devs->ranks == 1)
        madvise(m, s->size, MADV_WILLNEED);
    s->ndev = devs->count;
    if (!(s->dev = calloc((size_t)devs->count, sizeof *s->dev)))
        return hf_fail(HF_ENOMEM, "strsearch: out of memory");
    /* Rank 0 lists the other ranks as node devices; a rank that lists none
     * in a run across nodes is one of them (hetfarm.h, struct hf_devices). */
    int nodes = 0;
    for (int d = 0; d < devs->count; d++)
        nodes += s->dev[d].node = devs->dev[d].kind == HF_DEV_NODE;
    s->serving = devs->ranks > 1 && nodes == 0;
    int rc = hf__ss_hs_create(&s->hs, &s->pats);
#ifdef HF_HAVE_CUDA
    int gpus = 0;
    for (int d = 0; d < devs->count; d++)
        gpus += devs->dev[d].kind == HF_DEV_CUDA;
    if (rc == 0 && gpus > 0 && s->pats.maxlen > HF_SS_GPU_MAX_PATLEN)
        rc = hf_fail(HF_ENOTSUP,
                     "strsearch: patterns file %s: a pattern of %zu bytes; the GPU matcher "
                     "(PFAC) keeps a tile of text plus the longest pattern in shared memory and "
                     "takes patterns of at most %d bytes: search this set on the CPU only "
                     "([devices] cuda = none)",
                     s->pat_path, s->pats.maxlen, HF_SS_GPU_MAX_PATLEN);
    if (rc == 0 && gpus > 0)
        rc = hf__ss_pfac_build(&s->pfac, &s->pats);
    /* Pinned text makes the host-to-GPU copies asynchronous and full speed;
     * when the system refuses (too large, no driver), copies go through the
     * GPUs' staging buffers. */
    if (rc == 0 && gpus > 0 && s->pin) {
        cudaError_t e = cudaHostRegister(m, s->size, cudaHostRegisterPortable |
                                                          cudaHostRegisterReadOnly);
        s->pinned = e == cudaSuccess;
        if (!s->pinned) {
            (void)cudaGetLastError();
            fprintf(stderr, "strsearch: %s not pinned (%s): GPU copies go through staging\n",
                    s->text_path, cudaGetErrorString(e));
        }
    }
#endif
    return rc;
}

/* One load per round: segment round mod nseg, for `passes` passes. Resets the
 * round's results; counts mode keeps no match list. */
static int ss_next_load(void *ctx, struct hf_load *load)
{
    struct strsearch *s = ctx;
    if ((uint64_t)load->round >= (uint64_t)s->nseg * (uint64_t)s->passes)
        return 0;
    uint64_t seg = s->segment ? s->segment : s->size;
    s->seg = (size_t)load->round % s->nseg;
    s->seg_begin = (uint64_t)s->seg * seg;
    s->seg_len = s->size - s->seg_begin < seg ? s->size - s->seg_begin : seg;
    s->collected = 0;
    s->handed = 0;
    s->started = 1;
    s->complete = 0;
    memset(s->counts, 0, s->pats.n * sizeof *s->counts);
    s->round_m.nm = 0;
    s->round_m.want_m = s->mode == SS_MATCHES;
    s->nsample = 0;
    s->sample_budget = s->seg_len <= s->verify_bytes ? 0 : s->verify_bytes;
    for (int d = 0; d < s->ndev; d++)
        s->dev[d].n = 0;
    uint64_t chunks = (s->seg_len + s->chunk - 1) / s->chunk;
    load->units = s->seg_len;
    load->work = (double)s->seg_len;
    load->bytes = (double)s->seg_len + (double)chunks * (double)(s->pats.maxlen - 1);
    load->data = NULL;
    /* A scan's time is linear in its bytes (Hyperscan's literal matcher, PFAC's thread
     * per byte): the engine never re-learns them (a real host's noise, learned,
     * made a uniform text's chunks 0.55-4x one another; tests/test_strsearch.c). */
    load->work_exact = 1;
    return 1;
}

/* The overlap a range ending at segment offset `end` must also read. */
static uint64_t overlap_after(const struct strsearch *s, uint64_t end)
{
    uint64_t left = s->size - (s->seg_begin + end);
    return left < s->pats.maxlen - 1 ? left : s->pats.maxlen - 1;
}

/* Fixed chunks of [load] chunk bytes; bytes include the overlap a GPU receives. */
static size_t ss_partition(void *ctx, const struct hf_load *load, size_t grain,
                           struct hf_chunk *out, size_t cap)
{
    struct strsearch *s = ctx;
    (void)grain;
    size_t n = (size_t)((load->units + s->chunk - 1) / s->chunk);
    for (size_t i = 0; out && i < n && i < cap; i++) {
        size_t b = i * s->chunk, e = load->units - b > s->chunk ? b + s->chunk : load->units;
        out[i] = (struct hf_chunk){.index = i, .begin = b, .end = e, .work = (double)(e - b),
                                   .bytes = (double)(e - b + overlap_after(s, e))};
    }
    return n;
}

/* Makes room for n more parts of device d and returns the first new one. */
static struct hf__ss_part **dev_parts(struct strsearch *s, int d, size_t n)
{
    struct ss_dev *dv = &s->dev[d];
    if (dv->n + n > dv->cap) {
        size_t cap = dv->cap ? dv->cap : 8;
        while (cap < dv->n + n)
            cap *= 2;
        void *v = realloc(dv->parts, cap * sizeof *dv->parts);
        if (!v)
            return NULL;
        dv->parts = v;
        memset(dv->parts + dv->cap, 0, (cap - dv->cap) * sizeof *dv->parts);
        dv->cap = cap;
    }
    for (size_t i = dv->n; i < dv->n + n; i++)
        if (!dv->parts[i] && !(dv->parts[i] = calloc(1, sizeof **dv->parts)))
            return NULL;
    struct hf__ss_part **p = dv->parts + dv->n;
    dv->n += n;
    return p;
}

/* The CPU kernel: the bundle cut into a few sub-ranges per thread (a bundle
 * may be one chunk, and every thread should scan), each scanned by Hyperscan
 * with the overlap; one part per sub-range. */
static int ss_run_cpu(void *ctx, const struct hf_bundle *b, int nthreads)
{
    struct strsearch *s = ctx;
    uint64_t len = b->end - b->begin, base = s->seg_begin + b->begin;
    if (nthreads < 1)
        nthreads = 1;
    uint64_t sub = nthreads == 1 ? len : (len + 4 * (uint64_t)nthreads - 1) / (4 * nthreads);
    if (sub < s->cpu_split)
        sub = s->cpu_split; /* smaller sub-ranges are not worth a thread */
    size_t n = (size_t)((len + sub - 1) / sub);
    struct hf__ss_part **parts = dev_parts(s, b->device, n);
    if (!parts)
        return hf_fail(HF_ENOMEM, "strsearch: out of memory for %zu parts", n);
    int want_m = s->mode == SS_MATCHES, rc = 0;
    #pragma omp parallel for num_threads(nthreads) schedule(dynamic, 1) if (n > 1)
    for (size_t i = 0; i < n; i++) {
        uint64_t pb = base + i * sub, pe = pb + sub < base + len ? pb + sub : base + len;
        int prc = hf__ss_part_reset(parts[i], s->pats.n, pb, pe, want_m);
        if (!prc)
            prc = hf__ss_hs_scan(s->hs, s->map, s->size, parts[i]);
        parts[i]->err = prc;
    }
    for (size_t i = 0; i < n && !rc; i++)
        rc = parts[i]->err;
    return rc;
}

#ifdef HF_HAVE_CUDA
/* The GPU kernel: one part per piece; strsearch_cuda.cu enqueues the copies
 * and the PFAC kernel, and its host callback fills the part. */
static int ss_run_cuda(void *ctx, const struct hf_bundle *b, struct hf_cuda *gpu)
{
    struct strsearch *s = ctx;
    struct hf__ss_part **p = dev_parts(s, hf_cuda_device_index(gpu), 1);
    if (!p)
        return hf_fail(HF_ENOMEM, "strsearch: out of memory for a part");
    int rc = hf__ss_part_reset(*p, s->pats.n, s->seg_begin + b->begin, s->seg_begin + b->end,
                               s->mode == SS_MATCHES);
    return rc ? rc : hf__ss_cuda_run(gpu, s->pfac, s->map, s->size, s->pinned, *p);
}
#endif

/* The latest part of device d that starts at file offset `at`, or NULL. */
static struct hf__ss_part *find_part(struct strsearch *s, int d, uint64_t at)
{
    for (size_t i = s->dev[d].n; i-- > 0;)
        if (s->dev[d].parts[i]->begin == at)
            return s->dev[d].parts[i];
    return NULL;
}

/* Makes room for `n` matches in part `p` (used as a growable array). */
static int reserve_matches(struct hf__ss_part *p, size_t n)
{
    if (n > p->mcap) {
        size_t cap = p->mcap ? p->mcap : 1024;
        while (cap < n)
            cap *= 2;
        void *v = realloc(p->m, cap * sizeof *p->m);
        if (!v)
            return hf_fail(HF_ENOMEM, "strsearch: out of memory for %zu matches", n);
        p->m = v;
        p->mcap = cap;
    }
    return 0;
}

/* Appends `n` matches to list `to` (a part used as a growable array). */
static int append_matches(struct hf__ss_part *to, const struct hf__ss_match *m, size_t n)
{
    int rc = reserve_matches(to, to->nm + n);
    if (rc)
        return rc;
    memcpy(to->m + to->nm, m, n * sizeof *m);
    to->nm += n;
    return 0;
}

/* Sets a part aside for verify when the byte budget still allows it. */
static void maybe_sample(struct strsearch *s, const struct hf__ss_part *p)
{
    uint64_t len = p->end - p->begin;
    if (s->nsample >= SS_SAMPLES || len > s->sample_budget)
        return;
    struct ss_sample *sm = &s->sample[s->nsample];
    if (!sm->counts && !(sm->counts = malloc(s->pats.n * sizeof *sm->counts)))
        return; /* verify then checks fewer parts */
    memcpy(sm->counts, p->counts, s->pats.n * sizeof *sm->counts);
    sm->begin = p->begin;
    sm->end = p->end;
    s->sample_budget -= len;
    s->nsample++;
}

/* Files the completed round as its segment's result (replacing an earlier one). */
static int finish_segment(struct strsearch *s)
{
    size_t g = s->seg;
    if (!s->seg_counts[g] && !(s->seg_counts[g] = malloc(s->pats.n * sizeof(uint64_t))))
        return hf_fail(HF_ENOMEM, "strsearch: out of memory");
    memcpy(s->seg_counts[g], s->counts, s->pats.n * sizeof(uint64_t));
    hf__ss_sort_matches(s->round_m.m, s->round_m.nm);
    struct hf__ss_part t = s->seg_m[g]; /* swap buffers: no copy of the list */
    s->seg_m[g] = s->round_m;
    s->round_m = t;
    s->round_m.nm = 0;
    s->seg_done[g] = 1;
    s->complete = 1;
    return 0;
}

/* Merges the device's parts covering the bundle into the round's results. A
 * GPU part whose match buffer overflowed is searched again on the CPU. */
static int ss_collect(void *ctx, const struct hf_bundle *b)
{
    struct strsearch *s = ctx;
    uint64_t at = s->seg_begin + b->begin, end = s->seg_begin + b->end;
    int rc = 0;
    pthread_mutex_lock(&s->lock);
    while (rc == 0 && at < end) {
        struct hf__ss_part *p = find_part(s, b->device, at);
        if (!p || p->end > end) {
            rc = hf_fail(HF_EAPP, "strsearch: device %d left no result for text offset %llu "
                         "(chunks %zu..%zu)", b->device, (unsigned long long)at, b->first,
                         b->first + b->count - 1);
            break;
        }
        if (p->overflow && ((rc = hf__ss_part_reset(p, s->pats.n, p->begin, p->end,
                                                     p->want_m)) ||
                            (rc = hf__ss_hs_scan(s->hs, s->map, s->size, p))))
            break;
        for (size_t i = 0; i < s->pats.n; i++)
            s->counts[i] += p->counts[i];
        if (s->mode == SS_MATCHES)
            rc = append_matches(&s->round_m, p->m, p->nm);
        maybe_sample(s, p);
        at = p->end;
    }
    s->dev[b->device].n = 0;
    if (rc == 0) {
        s->collected += b->end - b->begin;
        /* A node's spans are parts of rank 0's segment, handed over by
         * ss_results; only rank 0 files segments (and writes the output). */
        if (s->collected == s->seg_len && !s->serving)
            rc = finish_segment(s);
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* A node hands over the span it ran: the counts and matches its collects
 * merged since the last span (checked to be the whole span), swapped into the
 * buffers being sent, so the next span starts from zero. */
static int hand_over(struct strsearch *s, const struct hf_bundle *b, struct hf_region *out)
{
    uint64_t got = s->collected - s->handed;
    if (got != b->end - b->begin)
        return hf_fail(HF_EAPP, "strsearch: this node collected %llu bytes of the span [%zu, "
                       "%zu) of round %d, %zu expected", (unsigned long long)got, b->begin,
                       b->end, b->load->round, b->end - b->begin);
    s->handed = s->collected;
    uint64_t *c = s->sent_counts;
    s->sent_counts = s->counts;
    s->counts = c;
    memset(s->counts, 0, s->pats.n * sizeof *s->counts);
    struct hf__ss_part t = s->sent_m;
    s->sent_m = s->round_m;
    s->round_m = t;
    s->round_m.nm = 0;
    out[0] = (struct hf_region){s->sent_counts, s->pats.n * sizeof *s->sent_counts};
    out[1] = (struct hf_region){s->sent_m.m, s->sent_m.nm * sizeof *s->sent_m.m};
    return 0;
}

/* Rank 0 receives a node's span as a part of the node device, sized by the
 * match bytes the node sent (out[1].bytes); ss_collect then merges it like
 * any device's part. */
static int receive_part(struct strsearch *s, const struct hf_bundle *b, struct hf_region *out)
{
    size_t nm = out[1].bytes / sizeof(struct hf__ss_match);
    if (out[1].bytes % sizeof(struct hf__ss_match))
        return hf_fail(HF_EIO, "strsearch: a node sent %zu bytes of matches for chunks [%zu, "
                       "%zu), not a whole number of matches", out[1].bytes, b->first,
                       b->first + b->count);
    struct hf__ss_part **p = dev_parts(s, b->device, 1);
    if (!p)
        return hf_fail(HF_ENOMEM, "strsearch: out of memory for a part");
    int rc = hf__ss_part_reset(*p, s->pats.n, s->seg_begin + b->begin, s->seg_begin + b->end,
                               s->mode == SS_MATCHES);
    if (rc == 0)
        rc = reserve_matches(*p, nm);
    if (rc)
        return rc;
    (*p)->nm = nm;
    out[0] = (struct hf_region){(*p)->counts, s->pats.n * sizeof *(*p)->counts};
    out[1] = (struct hf_region){(*p)->m, nm * sizeof *(*p)->m};
    return 0;
}

/* Across nodes (struct hf_app.results): a bundle's results are its counts
 * and, in matches mode, its match list, whose size only the node knows. */
static int ss_results(void *ctx, const struct hf_bundle *b, struct hf_region *out, int cap)
{
    struct strsearch *s = ctx;
    int n = s->mode == SS_MATCHES ? 2 : 1, rc;
    HF_ASSERT_MSG(cap >= 2, "ss_results: room for two regions");
    if (s->serving) {
        pthread_mutex_lock(&s->lock);
        rc = hand_over(s, b, out);
        pthread_mutex_unlock(&s->lock);
    } else if (!s->dev[b->device].node) {
        rc = hf_fail(HF_EAPP, "strsearch: results asked of device %d, which is not a node",
                     b->device);
    } else {
        rc = receive_part(s, b, out);
    }
    return rc ? rc : n;
}

/* Compares part `got` (counts, and matches when `gm` is given) with the
 * reference on the same range. */
static int check_range(struct strsearch *s, uint64_t begin, uint64_t end, const uint64_t *counts,
                       const struct hf__ss_match *gm, size_t gn, int round)
{
    struct hf__ss_part ref = {0};
    int rc = hf__ss_part_reset(&ref, s->pats.n, begin, end, gm != NULL);
    if (!rc)
        rc = hf__ss_ref(&s->pats, s->map, s->size, &ref);
    for (size_t i = 0; rc == 0 && i < s->pats.n; i++)
        if (ref.counts[i] != counts[i])
            rc = hf_fail(HF_EVERIFY, "strsearch: round %d, text [%llu, %llu): pattern %zu "
                         "found %llu times, reference %llu", round, (unsigned long long)begin,
                         (unsigned long long)end, i, (unsigned long long)counts[i],
                         (unsigned long long)ref.counts[i]);
    if (rc == 0 && gm) {
        hf__ss_sort_matches(ref.m, ref.nm);
        if (ref.nm != gn)
            rc = hf_fail(HF_EVERIFY, "strsearch: round %d: %zu matches, reference %zu", round,
                         gn, ref.nm);
        for (size_t i = 0; rc == 0 && i < gn; i++)
            if (gm[i].off != ref.m[i].off || gm[i].pat != ref.m[i].pat)
                rc = hf_fail(HF_EVERIFY, "strsearch: round %d: match %zu is (%llu, %llu), "
                             "reference (%llu, %llu)", round, i, (unsigned long long)gm[i].off,
                             (unsigned long long)gm[i].pat, (unsigned long long)ref.m[i].off,
                             (unsigned long long)ref.m[i].pat);
    }
    hf__ss_part_free(&ref);
    return rc;
}

/* Checks the round: the whole segment when small, else the sampled parts. */
static int ss_verify(void *ctx, const struct hf_load *load)
{
    struct strsearch *s = ctx;
    int rc = 0;
    if (!s->complete)
        rc = hf_fail(HF_EVERIFY, "strsearch: round %d searched %llu of %llu bytes", load->round,
                     (unsigned long long)s->collected, (unsigned long long)s->seg_len);
    else if (s->verify_bytes == 0)
        rc = 0;
    else if (s->seg_len <= s->verify_bytes) {
        const struct hf__ss_part *m = &s->seg_m[s->seg];
        rc = check_range(s, s->seg_begin, s->seg_begin + s->seg_len, s->seg_counts[s->seg],
                         s->mode == SS_MATCHES ? m->m : NULL, m->nm, load->round);
    } else {
        for (int i = 0; i < s->nsample && rc == 0; i++)
            rc = check_range(s, s->sample[i].begin, s->sample[i].end, s->sample[i].counts, NULL,
                             0, load->round);
    }
    if (rc)
        s->failed = 1;
    return rc;
}

/* Writes the output to a temporary file and renames it over [load] out. */
static int write_output(struct strsearch *s)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", s->out_path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return hf_fail(HF_EIO, "strsearch: cannot create %s: %s", tmp, strerror(errno));
    char iobuf[1 << 16];
    setvbuf(f, iobuf, _IOFBF, sizeof iobuf);
    if (s->mode == SS_COUNTS) {
        for (size_t i = 0; i < s->pats.n; i++) {
            uint64_t c = 0;
            for (size_t g = 0; g < s->nseg; g++)
                c += s->seg_counts[g][i];
            fprintf(f, "%llu\t", (unsigned long long)c);
            fwrite(s->pats.p[i], 1, s->pats.len[i], f);
            fputc('\n', f);
        }
    } else {
        for (size_t g = 0; g < s->nseg; g++)
            for (size_t i = 0; i < s->seg_m[g].nm; i++)
                fprintf(f, "%llu\t%llu\n", (unsigned long long)s->seg_m[g].m[i].off,
                        (unsigned long long)s->seg_m[g].m[i].pat);
    }
    int bad = ferror(f);
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, s->out_path) != 0) {
        int e = errno;
        unlink(tmp);
        return hf_fail(HF_EIO, "strsearch: cannot write %s: %s", s->out_path, strerror(e));
    }
    return 0;
}

/* Writes the output when the whole text was searched and nothing failed, then
 * frees everything. */
static void ss_teardown(void *ctx)
{
    struct strsearch *s = ctx;
    if (!s)
        return;
    int whole = !s->serving && s->started && s->complete && !s->failed;
    for (size_t g = 0; whole && g < s->nseg; g++)
        whole = s->seg_done[g];
    if (whole && s->out_path && write_output(s))
        fprintf(stderr, "%s\n", hf_last_error());
#ifdef HF_HAVE_CUDA
    if (s->pinned)
        cudaHostUnregister((void *)s->map);
    hf__ss_pfac_destroy(s->pfac);
#endif
    hf__ss_hs_destroy(s->hs);
    if (s->map)
        munmap((void *)s->map, s->size);
    if (s->fd >= 0)
        close(s->fd);
    for (int d = 0; d < s->ndev; d++) {
        for (size_t i = 0; i < s->dev[d].cap; i++)
            if (s->dev[d].parts[i]) {
                hf__ss_part_free(s->dev[d].parts[i]);
                free(s->dev[d].parts[i]);
            }
        free(s->dev[d].parts);
    }
    free(s->dev);
    for (size_t g = 0; g < s->nseg; g++) {
        if (s->seg_counts)
            free(s->seg_counts[g]);
        if (s->seg_m)
            hf__ss_part_free(&s->seg_m[g]);
    }
    free(s->seg_counts);
    free(s->seg_m);
    free(s->seg_done);
    for (int i = 0; i < SS_SAMPLES; i++)
        free(s->sample[i].counts);
    hf__ss_part_free(&s->round_m);
    hf__ss_part_free(&s->sent_m);
    free(s->counts);
    free(s->sent_counts);
    hf__ss_patterns_free(&s->pats);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* The load's key in profiles and results. */
static void ss_signature(void *ctx, char *buf, size_t len)
{
    struct strsearch *s = ctx;
    snprintf(buf, len, "bytes=%llu patterns=%zu maxlen=%zu chunk=%zu",
             (unsigned long long)s->size, s->pats.n, s->pats.maxlen, s->chunk);
}

/* The keys of [load] (hetfarm.h): validation and help read this table. */
static const struct hf_config_key ss_keys[] = {
    {NULL, "text", HF_KEY_STR, 0, 0, HF_KEY_REQUIRED, NULL, NULL,
     "the file to search (under mpirun: a path every node sees)"},
    {NULL, "patterns", HF_KEY_STR, 0, 0, HF_KEY_REQUIRED, NULL, NULL,
     "one pattern per line (at most 10000; GPUs take at most 255 bytes each)"},
    {NULL, "output", HF_KEY_STR, 0, 0, 0, "counts|matches", "counts", "what out holds"},
    {NULL, "out", HF_KEY_STR, 0, 0, 0, NULL, "none", "the output file"},
    {NULL, "chunk", HF_KEY_SIZE, 1, 1073741824.0, 0, NULL, "4MiB", "bytes per chunk"},
    {NULL, "segment", HF_KEY_SIZE, 0, 1125899906842624.0, 0, NULL, "the whole text",
     "bytes of text per round"},
    {NULL, "passes", HF_KEY_INT, 1, 1000000, 0, NULL, "1", "times the whole text is searched"},
    {NULL, "verify", HF_KEY_SIZE, 0, 1125899906842624.0, 0, NULL, "64MiB",
     "bytes per round compared with the reference"},
    {NULL, "pin", HF_KEY_BOOL, 0, 0, 0, NULL, "yes", "pin the text for GPU copies"},
    {NULL, "cpu_split", HF_KEY_SIZE, 1, 1073741824.0, 0, NULL, "256KiB",
     "smallest range a CPU thread scans"},
    {NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

const struct hf_app hf_app_strsearch = {
    .keys = ss_keys,
    .name = "strsearch",
    .summary = "multi-pattern text search (Hyperscan on CPUs, PFAC on GPUs)",
    .create = ss_create,
    .setup = ss_setup,
    .next_load = ss_next_load,
    .partition = ss_partition,
    .run_cpu = ss_run_cpu,
#ifdef HF_HAVE_CUDA
    .run_cuda = ss_run_cuda,
#endif
    .collect = ss_collect,
    .results = ss_results,
    .verify = ss_verify,
    .teardown = ss_teardown,
    .signature = ss_signature,
    .default_grain = (size_t)4 << 20,
};
