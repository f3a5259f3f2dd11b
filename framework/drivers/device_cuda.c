/* device_cuda.c - the CUDA driver: one hetfarm device per GPU (or per share of one).
 *
 * DESIGN
 * ------
 * Everything here runs on the GPU's own host thread (the engine creates it and
 * pins it near the GPU), so the device stays current for the whole run and no
 * lock is needed. open() makes the device current and allocates, once: three
 * non-blocking streams (copy-in, compute, copy-out), two "slots" each with a
 * pinned host staging buffer, half of one big device allocation (the arena,
 * thesis §5.2.5: a bump pointer reset per piece instead of a cudaMalloc per
 * bundle) and the CUDA events that time and fence the slot's piece. Staging
 * is pinned in open() although pinning costs a run's start-up 0.3 ms a MiB
 * (41 ms for 2 x 64 MiB on an H100 host): pinned when first asked for, and
 * grown to what was asked, it put kron-22 SSSP's growths inside its rounds
 * (cudaFreeHost waits for the device), 18 -> 37 ms of makespans on the GPU.
 *
 * run() cuts the bundle into pieces along chunk boundaries: about `pieces` of
 * them (default 8, so that the first copy-in and the last copy-out, which cannot
 * overlap anything, are an eighth of the transfers), none smaller than
 * `min_piece_bytes` of traffic (default 8 MiB: small GEMMs are slow, but on an
 * H200 a 32 MiB floor left matmul n = 2048's whole 32 MB bundle one piece with
 * nothing overlapped, 1.13 ms a round against 0.86 in 8 MiB pieces; n = 4096
 * lost 1.5% and vscale's 32 MB load gained 20%: 9edd91b:bench/NOTES.md), none larger
 * than a slot's half of the arena (so a bundle larger than GPU memory streams
 * through it).
 * Piece sizes are powers of two of whole chunks, and a bundle's tail runs as
 * the largest such pieces that fit, so a split that moves by a few chunks
 * reuses piece sizes (GEMM shapes) the GPU has already run: a new shape is
 * a kernel choice and a lazy kernel load in cuBLAS (issue 12: 5 ms per changed
 * split, 40 ms for a first size on an H200).
 * Pieces alternate between the two slots. For each piece the driver waits until
 * the slot's previous piece has finished (its "done" events), adds that piece's
 * phase times to the bundle's, resets the slot's arena half and calls the app's
 * run_cuda, which only enqueues: copy-in on the copy-in stream, kernels on the
 * compute stream, copy-out on the copy-out stream, chained by events that
 * hf_cuda_phase() records. Because the three stages of consecutive pieces live
 * on different streams, the copy-in of piece i+1 overlaps the kernel of piece i
 * and the copy-out of piece i-1, while the host thread is already blocked on the
 * piece before. An HF_EDEVOOM from run_cuda (the arena half or a CUDA allocation
 * was too small) drains the pipeline, halves the piece and retries it; the
 * halved size is remembered for later bundles of loads of the same size. Any
 * other failure is returned with a message naming the GPU, the CUDA error and
 * the chunk range, and the engine retires the GPU.
 *
 * Everything above is per device, not per GPU: a GPU named twice in [devices]
 * cuda (0,0) is two devices, each with its own thread, streams, events,
 * staging, replicas and arena (a share of the GPU's memory, cuda_alloc_arena),
 * all in the GPU's one primary context of this process; their kernels and
 * copies run side by side on it as two GPUs' would, only slower.
 *
 * Fault injection ([faults] cuda_error_at = device:round:bundle) is done by the
 * engine for every driver alike (hf__engine_fault_due fails the bundle before
 * calling run), so this driver does not count bundles a second time; a real
 * CUDA error takes exactly the same path back to the engine.
 */
#include "device.h"
#include "hf_cuda.h"
#include "shared_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA_ALIGN 256
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)
#define CUDA_MIN_ARENA (64 * MIB)

/* Timing events of a piece: start and end of each of the three phases. */
enum { EV_IN_START, EV_IN_END, EV_K_START, EV_K_END, EV_OUT_START, EV_OUT_END, EV_COUNT };
enum { NSTREAMS = 3 };

struct cuda_slot {
    void *h_stage;          /* pinned host staging buffer */
    size_t stage_bytes;
    char *d_base;           /* this slot's half of the arena */
    size_t cap, used;
    cudaEvent_t ev[EV_COUNT];
    cudaEvent_t done[NSTREAMS]; /* recorded on every stream after the piece */
    int busy;               /* a piece was enqueued and not yet waited for */
    struct hf_bundle piece;
};

struct hf_cuda {
    struct hf_device *dev;
    int ordinal, index;
    char name[48];
    cudaStream_t stream[NSTREAMS]; /* indexed by enum hf_cuda_phase */
    cublasHandle_t blas;
    char *d_arena;
    size_t arena_bytes;
    struct cuda_slot slot[2];
    int cur;                  /* slot of the piece being enqueued */
    int phase;                /* its current phase, -1 outside run_cuda */
    cudaError_t err;          /* first error of the phase bookkeeping */
    const struct hf_bundle *piece; /* for messages; NULL outside a piece */
    const struct hf_bundle *bundle; /* the bundle being run, NULL outside run() */
    void *app_slot;
    struct hf__cuda_shared *shared; /* replicas of the app's shared data */
    int pieces;
    size_t min_piece_bytes;
    size_t cap_units, cap_load_units; /* learned after an OOM split */
    int last_pieces, last_splits;
};

/* ------------------------------------------------------------------------ */
/* Discovery.                                                                 */

static _Atomic int driver_started; /* hf_cuda_device_count was called */

int hf_cuda_device_count(void)
{
    int n = 0;
    driver_started = 1;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver or no device: not an error here */
        return 0;
    }
    return n;
}

int hf_cuda_driver_started(void)
{
    return driver_started;
}

/* The kernel module's version says more than the runtime's (which driver
 * release ran the numbers); the runtime's is the fallback. */
void hf_cuda_driver_version(char *buf, size_t len)
{
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    char line[512] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
        fclose(f);
    }
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." or, for
     * the open modules, "... UNIX Open Kernel Module for x86_64  580.159.04 ...":
     * the first word after "Kernel Module" that starts with a digit. */
    const char *k = strstr(line, "Kernel Module");
    for (char word[64]; k && sscanf(k, "%63s", word) == 1; k = strstr(k, word) + strlen(word))
        if (word[0] >= '0' && word[0] <= '9') {
            snprintf(buf, len, "%s", word);
            return;
        }
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0)
        snprintf(buf, len, "CUDA %d.%d", v / 1000, (v % 1000) / 10);
    else
        snprintf(buf, len, "unknown");
}

int hf_cuda_describe(int ordinal, char *name, size_t nlen, char *busid, size_t blen,
                     size_t *mem_bytes)
{
    struct cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, ordinal);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return hf_fail(HF_ENODEV, "cuda%d: no such CUDA device (%s)", ordinal,
                       cudaGetErrorString(e));
    }
    if (name && nlen)
        snprintf(name, nlen, "%s", p.name);
    if (mem_bytes)
        *mem_bytes = p.totalGlobalMem;
    if (busid && blen) {
        /* hwloc and nvidia-smi print lower-case hex; cudart prints upper case. */
        if (cudaDeviceGetPCIBusId(busid, (int)blen, ordinal) != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(busid, blen, "%04x:%02x:%02x.0", (unsigned)p.pciDomainID,
                     (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
        }
        for (char *c = busid; *c; c++)
            if (*c >= 'A' && *c <= 'F')
                *c = (char)(*c - 'A' + 'a');
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Errors.                                                                    */

/* Records a message naming the GPU, `what`, the error text and the current
 * piece's chunks; returns `code`. */
static int cuda_fail(struct hf_cuda *gpu, int code, const char *what, const char *detail)
{
    const struct hf_bundle *p = gpu->piece, *b = gpu->bundle ? gpu->bundle : p;
    if (p && p->count > 0 && b->count > 0)
        return hf_fail(code, "%s: %s: %s (chunks %zu..%zu of bundle %zu..%zu, units %zu..%zu)",
                       gpu->name, what, detail, p->first, p->first + p->count - 1, b->first,
                       b->first + b->count - 1, p->begin, p->end);
    return hf_fail(code, "%s: %s: %s", gpu->name, what, detail);
}

int hf_cuda_check(struct hf_cuda *gpu, cudaError_t err, const char *what)
{
    if (err == cudaSuccess)
        return 0;
    char detail[160];
    snprintf(detail, sizeof detail, "%s (%s)", cudaGetErrorString(err), cudaGetErrorName(err));
    return cuda_fail(gpu, err == cudaErrorMemoryAllocation ? HF_EDEVOOM : HF_EDEVICE, what,
                     detail);
}

int hf_cuda_check_cublas(struct hf_cuda *gpu, cublasStatus_t st, const char *what)
{
    if (st == CUBLAS_STATUS_SUCCESS)
        return 0;
    return cuda_fail(gpu, st == CUBLAS_STATUS_ALLOC_FAILED ? HF_EDEVOOM : HF_EDEVICE, what,
                     cublasGetStatusString(st));
}

/* ------------------------------------------------------------------------ */
/* The app's view.                                                            */

/* Moves the current piece from its phase to the next one: ends the phase on its
 * stream, makes the next stream wait for it and starts the next phase there. */
static void cuda_advance(struct hf_cuda *gpu)
{
    struct cuda_slot *sl = &gpu->slot[gpu->cur];
    int q = gpu->phase;
    cudaError_t e = cudaEventRecord(sl->ev[2 * q + 1], gpu->stream[q]);
    if (e == cudaSuccess)
        e = cudaStreamWaitEvent(gpu->stream[q + 1], sl->ev[2 * q + 1], 0);
    if (e == cudaSuccess)
        e = cudaEventRecord(sl->ev[2 * q + 2], gpu->stream[q + 1]);
    if (e != cudaSuccess && gpu->err == cudaSuccess)
        gpu->err = e;
    gpu->phase = q + 1;
}

cudaStream_t hf_cuda_phase(struct hf_cuda *gpu, enum hf_cuda_phase p)
{
    HF_ASSERT_MSG(gpu->phase >= 0, "hf_cuda_phase called outside run_cuda");
    HF_ASSERT_MSG((int)p >= gpu->phase && (int)p <= HF_CUDA_COPY_OUT,
                  "hf_cuda_phase: phases go copy-in, kernel, copy-out, never backwards");
    while (gpu->phase < (int)p)
        cuda_advance(gpu);
    return gpu->stream[p];
}

cudaStream_t hf_cuda_copy_in_stream(struct hf_cuda *gpu)
{
    return gpu->stream[HF_CUDA_COPY_IN];
}

cudaStream_t hf_cuda_compute_stream(struct hf_cuda *gpu)
{
    return gpu->stream[HF_CUDA_KERNEL];
}

cudaStream_t hf_cuda_copy_out_stream(struct hf_cuda *gpu)
{
    return gpu->stream[HF_CUDA_COPY_OUT];
}

/* Creates the handle on first use, on the GPU's thread, bound to the compute
 * stream (every cuBLAS call of a piece belongs to its kernel phase). */
cublasHandle_t hf_cuda_cublas(struct hf_cuda *gpu)
{
    if (gpu->blas)
        return gpu->blas;
    cublasHandle_t h;
    cublasStatus_t st = cublasCreate(&h);
    if (st != CUBLAS_STATUS_SUCCESS) {
        hf_cuda_check_cublas(gpu, st, "cublasCreate");
        return NULL;
    }
    st = cublasSetStream(h, gpu->stream[HF_CUDA_KERNEL]);
    if (st != CUBLAS_STATUS_SUCCESS) {
        hf_cuda_check_cublas(gpu, st, "cublasSetStream");
        cublasDestroy(h);
        return NULL;
    }
    gpu->blas = h;
    return h;
}

int hf_cuda_ordinal(const struct hf_cuda *gpu)
{
    return gpu->ordinal;
}

int hf_cuda_device_index(const struct hf_cuda *gpu)
{
    return gpu->index;
}

const char *hf_cuda_name(const struct hf_cuda *gpu)
{
    return gpu->name;
}

void *hf_cuda_arena_alloc(struct hf_cuda *gpu, size_t bytes)
{
    struct cuda_slot *sl = &gpu->slot[gpu->cur];
    size_t need = (bytes + CUDA_ALIGN - 1) / CUDA_ALIGN * CUDA_ALIGN;
    if (need < bytes || need > sl->cap - sl->used)
        return NULL;
    void *p = sl->d_base + sl->used;
    sl->used += need;
    return p;
}

size_t hf_cuda_arena_free(const struct hf_cuda *gpu)
{
    const struct cuda_slot *sl = &gpu->slot[gpu->cur];
    return sl->cap - sl->used;
}

void hf_cuda_arena_reset(struct hf_cuda *gpu)
{
    gpu->slot[gpu->cur].used = 0;
}

int hf_cuda_slot(const struct hf_cuda *gpu)
{
    return gpu->cur;
}

void *hf_cuda_staging(struct hf_cuda *gpu, size_t bytes)
{
    const struct cuda_slot *sl = &gpu->slot[gpu->cur];
    return bytes <= sl->stage_bytes ? sl->h_stage : NULL;
}

struct hf__cuda_shared *hf__cuda_shared_of(struct hf_cuda *gpu)
{
    return gpu->shared;
}

void **hf_cuda_app_slot(struct hf_cuda *gpu)
{
    return &gpu->app_slot;
}

struct hf_cuda *hf_cuda_of(struct hf_device *dev)
{
    return dev && dev->ops == &hf_driver_cuda ? dev->drv : NULL;
}

void hf_cuda_set_pieces(struct hf_cuda *gpu, int pieces, size_t min_piece_bytes)
{
    HF_ASSERT_MSG(pieces >= 1, "hf_cuda_set_pieces: pieces must be >= 1");
    gpu->pieces = pieces;
    gpu->min_piece_bytes = min_piece_bytes;
    gpu->cap_units = gpu->cap_load_units = 0;
}

void hf_cuda_last_bundle_stats(const struct hf_cuda *gpu, int *pieces, int *splits)
{
    if (pieces)
        *pieces = gpu->last_pieces;
    if (splits)
        *splits = gpu->last_splits;
}

/* ------------------------------------------------------------------------ */
/* open / close.                                                              */

/* A size in MiB from the environment, or `def` when unset or malformed. */
static size_t env_mib(const char *name, size_t def)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return def;
    unsigned long long x = strtoull(v, &end, 10);
    return *end == '\0' ? (size_t)x * MIB : def;
}

static void cuda_close(struct hf_device *dev)
{
    struct hf_cuda *gpu = dev->drv;
    if (!gpu)
        return;
    /* Errors are ignored: after a sticky fault every call fails, and close must
     * still release what it can. */
    (void)cudaSetDevice(gpu->ordinal);
    for (int k = 0; k < NSTREAMS; k++)
        if (gpu->stream[k])
            (void)cudaStreamSynchronize(gpu->stream[k]);
    if (gpu->blas)
        cublasDestroy(gpu->blas);
    for (int s = 0; s < 2; s++) {
        struct cuda_slot *sl = &gpu->slot[s];
        if (sl->h_stage)
            (void)cudaFreeHost(sl->h_stage);
        for (int k = 0; k < EV_COUNT; k++)
            if (sl->ev[k])
                (void)cudaEventDestroy(sl->ev[k]);
        for (int k = 0; k < NSTREAMS; k++)
            if (sl->done[k])
                (void)cudaEventDestroy(sl->done[k]);
    }
    if (gpu->d_arena)
        (void)cudaFree(gpu->d_arena);
    hf__cuda_shared_close(gpu->shared);
    for (int k = 0; k < NSTREAMS; k++)
        if (gpu->stream[k])
            (void)cudaStreamDestroy(gpu->stream[k]);
    (void)cudaGetLastError();
    free(gpu);
    dev->drv = NULL;
}

/* Allocates the arena: HF_CUDA_ARENA_MB, or the free memory less a quarter of
 * the total (apps replicate inputs after open, and cuBLAS needs a workspace).
 * A GPU that serves as k devices (cuda = 0,0) gives each at most a k-th of
 * what it has beyond that quarter, whichever device opens first: otherwise the
 * first would take it all and leave the others the smallest arena.
 * Halves the request while cudaMalloc refuses it. */
static int cuda_alloc_arena(struct hf_cuda *gpu)
{
    size_t free_b = 0, total_b = 0;
    int rc = hf_cuda_check(gpu, cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    if (rc)
        return rc;
    size_t reserve = total_b / 4 > GIB ? total_b / 4 : GIB;
    size_t want = free_b > reserve + CUDA_MIN_ARENA ? free_b - reserve : CUDA_MIN_ARENA;
    int k = gpu->dev->info.shares_gpu;
    if (k > 1 && total_b > reserve && want > (total_b - reserve) / (size_t)k)
        want = (total_b - reserve) / (size_t)k;
    if (want < CUDA_MIN_ARENA)
        want = CUDA_MIN_ARENA;
    want = env_mib("HF_CUDA_ARENA_MB", want);
    want = want / (2 * CUDA_ALIGN) * (2 * CUDA_ALIGN);
    while (want >= 2 * CUDA_ALIGN) {
        cudaError_t e = cudaMalloc((void **)&gpu->d_arena, want);
        if (e == cudaSuccess)
            break;
        (void)cudaGetLastError();
        gpu->d_arena = NULL;
        if (e != cudaErrorMemoryAllocation || want <= CUDA_MIN_ARENA)
            return hf_cuda_check(gpu, e, "cudaMalloc of the arena");
        want = want / 2 / (2 * CUDA_ALIGN) * (2 * CUDA_ALIGN);
    }
    gpu->arena_bytes = want;
    for (int s = 0; s < 2; s++) {
        gpu->slot[s].d_base = gpu->d_arena + (size_t)s * (want / 2);
        gpu->slot[s].cap = want / 2;
    }
    return 0;
}

/* Makes the device current on this thread and allocates streams, events,
 * staging buffers and the arena, once for the whole run. */
static int cuda_open(struct hf_device *dev)
{
    struct hf_cuda *gpu = calloc(1, sizeof *gpu);
    if (!gpu)
        return hf_fail(HF_ENOMEM, "%s: out of memory for the driver state", dev->info.name);
    gpu->dev = dev;
    gpu->ordinal = dev->info.cuda_ordinal;
    gpu->index = dev->info.index;
    gpu->phase = -1;
    snprintf(gpu->name, sizeof gpu->name, "%s", dev->info.name[0] ? dev->info.name : "cuda");
    const char *pv = getenv("HF_CUDA_PIECES");
    gpu->pieces = pv && atoi(pv) >= 1 ? atoi(pv) : 8;
    gpu->min_piece_bytes = env_mib("HF_CUDA_MIN_PIECE_MB", 8 * MIB);
    dev->drv = gpu;

    int rc = hf_cuda_check(gpu, cudaSetDevice(gpu->ordinal), "cudaSetDevice");
    for (int k = 0; k < NSTREAMS && !rc; k++)
        rc = hf_cuda_check(gpu, cudaStreamCreateWithFlags(&gpu->stream[k], cudaStreamNonBlocking),
                           "cudaStreamCreate");
    size_t stage = env_mib("HF_CUDA_STAGING_MB", 64 * MIB);
    for (int s = 0; s < 2 && !rc; s++) {
        struct cuda_slot *sl = &gpu->slot[s];
        for (int k = 0; k < EV_COUNT && !rc; k++)
            rc = hf_cuda_check(gpu, cudaEventCreate(&sl->ev[k]), "cudaEventCreate");
        for (int k = 0; k < NSTREAMS && !rc; k++)
            rc = hf_cuda_check(gpu, cudaEventCreateWithFlags(&sl->done[k], cudaEventDisableTiming),
                               "cudaEventCreate");
        if (!rc && stage) {
            rc = hf_cuda_check(gpu, cudaHostAlloc(&sl->h_stage, stage, cudaHostAllocPortable),
                               "cudaHostAlloc of the staging buffer");
            sl->stage_bytes = rc ? 0 : stage;
        }
    }
    /* Shared data first: the arena takes most of what is left. */
    if (!rc)
        rc = hf__cuda_shared_open(gpu, dev->shared, dev->nshared, &gpu->shared);
    if (!rc)
        rc = cuda_alloc_arena(gpu);
    /* cuBLAS, for an app that calls it, is created now rather than inside the
     * first (timed) bundle, which would otherwise carry its start-up cost (the
     * library's opening, drivers/cublas_cuda.c) into the standalone rate. A
     * failure here is not fatal: hf_cuda_cublas tries again and reports it. */
    if (!rc && dev->cublas && !hf_cuda_cublas(gpu)) {
        (void)cudaGetLastError();
        hf_clear_error();
    }
    if (rc)
        cuda_close(dev);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Pieces.                                                                    */

/* The nominal chunk size of a bundle. Chunks of one load are equal except the
 * last, so begin / first is exact when the bundle does not start the load;
 * otherwise every chunk but possibly the last has ceil(units / count) units. */
static size_t bundle_chunk_units(const struct hf_bundle *b)
{
    size_t units = b->end - b->begin;
    if (b->count <= 1)
        return units;
    if (b->first > 0 && b->begin % b->first == 0) {
        size_t g = b->begin / b->first;
        if (g > 0 && (b->count - 1) * g < units && b->count * g >= units)
            return g;
    }
    return (units + b->count - 1) / b->count;
}

/* Fills `p` with the piece of `b` that starts at unit u and has about pu units:
 * whole chunks when pu is at least a chunk, else part of u's chunk. */
static void make_piece(const struct hf_bundle *b, size_t g, size_t u, size_t pu,
                       struct hf_bundle *p)
{
    size_t rel = u - b->begin, end;
    if (u + pu >= b->end) {
        end = b->end; /* the rest of the bundle: the bundle's end is a chunk boundary */
    } else if (pu >= g) {
        size_t target = rel + pu;
        end = b->begin + target / g * g; /* the last chunk boundary within reach */
        if (end <= u)
            end = u + pu;
    } else {
        size_t next = b->begin + (rel / g + 1) * g;
        end = u + pu < next ? u + pu : next;
    }
    if (end > b->end)
        end = b->end;
    size_t nc = b->count ? b->count : 1;
    size_t c0 = rel / g, c1 = (end - 1 - b->begin) / g;
    if (c0 >= nc)
        c0 = nc - 1;
    if (c1 >= nc)
        c1 = nc - 1;
    double frac = (double)(end - u) / (double)(b->end - b->begin);
    *p = *b;
    p->first = b->first + c0;
    p->count = c1 - c0 + 1;
    p->begin = u;
    p->end = end;
    p->work = b->work * frac;
    p->bytes = b->bytes * frac;
}

/* The piece size (units) for bundle b: about units / pieces rounded to whole
 * chunks, at least min_piece_bytes of traffic, at most what a slot's arena half
 * holds (estimated from the bundle's bytes per unit), and no more than the size
 * an earlier OOM split settled on for loads of this size. */
static size_t piece_units(const struct hf_cuda *gpu, const struct hf_bundle *b, size_t g)
{
    size_t units = b->end - b->begin;
    double bpu = b->bytes > 0 ? b->bytes / (double)units : 0;
    size_t pu = (units + (size_t)gpu->pieces - 1) / (size_t)gpu->pieces;
    if (bpu > 0 && (double)pu * bpu < (double)gpu->min_piece_bytes)
        pu = (size_t)((double)gpu->min_piece_bytes / bpu);
    /* Pipelining never cuts a chunk: whole chunks, and a power of two of them
     * (the nearest), so that bundles of different sizes are cut into pieces of
     * the same few sizes (see tail_units). */
    if (pu >= units) {
        pu = units;
    } else {
        size_t k = 1, want = pu < g ? 1 : (pu + g / 2) / g;
        while (k * 2 <= want)
            k *= 2;
        pu = (want - k > 2 * k - want ? 2 * k : k) * g;
    }
    if (bpu > 0) {
        size_t cap = (size_t)((double)gpu->slot[0].cap / bpu);
        if (pu > cap)
            pu = cap;
    }
    if (gpu->cap_units && b->load && b->load->units == gpu->cap_load_units && pu > gpu->cap_units)
        pu = gpu->cap_units;
    if (pu > units)
        pu = units;
    return pu ? pu : 1;
}

/* The units of the piece that starts at u: pu, or, in the bundle's tail where
 * fewer than pu units are left, the largest power of two of whole chunks that
 * fits. A new bundle size then adds no new piece size: the GEMM shapes (and so
 * the library kernels chosen and loaded for them) of a changed split are ones
 * the GPU has run before. On the 2x H200 node a changed split cost up to 5 ms
 * per round and a first bundle size 40 ms while the pieces followed the bundle
 * size (ceil(units / pieces)): every split change was a set of new SGEMM shapes
 * for cuBLAS to pick and lazily load kernels for. */
static size_t tail_units(const struct hf_bundle *b, size_t g, size_t u, size_t pu)
{
    /* In chunks: the load's last chunk may be short. */
    size_t left = (b->end - u + g - 1) / g;
    if (pu < g || left >= pu / g)
        return pu;
    size_t k = 1;
    while (k * 2 <= left)
        k *= 2;
    return k * g;
}

/* Waits until slot s's piece has finished and adds its phase times to t. */
static int slot_wait(struct hf_cuda *gpu, int s, struct hf_bundle_times *t)
{
    struct cuda_slot *sl = &gpu->slot[s];
    if (!sl->busy)
        return 0;
    sl->busy = 0;
    gpu->piece = &sl->piece;
    for (int k = 0; k < NSTREAMS; k++) {
        int rc = hf_cuda_check(gpu, cudaEventSynchronize(sl->done[k]), "running the piece");
        if (rc)
            return rc == HF_EDEVOOM ? HF_EDEVICE : rc; /* an OOM here is not retryable */
    }
    float ms[3] = {0, 0, 0};
    for (int q = 0; q < 3; q++)
        if (cudaEventElapsedTime(&ms[q], sl->ev[2 * q], sl->ev[2 * q + 1]) != cudaSuccess) {
            (void)cudaGetLastError();
            ms[q] = 0;
        }
    t->copy_in_s += ms[0] / 1e3;
    t->kernel_s += ms[1] / 1e3;
    t->copy_out_s += ms[2] / 1e3;
    gpu->piece = NULL;
    return 0;
}

/* Waits for everything enqueued on the GPU's streams, ignoring errors; used
 * before retrying a piece and after a failure. */
static void drain(struct hf_cuda *gpu)
{
    for (int k = 0; k < NSTREAMS; k++)
        (void)cudaStreamSynchronize(gpu->stream[k]);
    gpu->slot[0].busy = gpu->slot[1].busy = 0;
}

/* Enqueues slot s's piece through the app's run_cuda and fences it. */
static int piece_enqueue(struct hf_cuda *gpu, const struct hf_app *app, void *ctx, int s)
{
    struct cuda_slot *sl = &gpu->slot[s];
    gpu->cur = s;
    sl->used = 0;
    gpu->piece = &sl->piece;
    gpu->err = cudaSuccess;
    (void)cudaGetLastError(); /* a stale, non-sticky error is not this piece's */
    int rc = hf_cuda_check(gpu, cudaEventRecord(sl->ev[EV_IN_START], gpu->stream[0]),
                           "cudaEventRecord");
    if (rc)
        return rc;
    gpu->phase = HF_CUDA_COPY_IN;
    rc = app->run_cuda(ctx, &sl->piece, gpu);
    if (rc) {
        gpu->phase = -1;
        return hf_fail(rc, "%s: app %s: run_cuda failed on chunks %zu..%zu: %s", gpu->name,
                       app->name, sl->piece.first, sl->piece.first + sl->piece.count - 1,
                       hf_strerror(rc));
    }
    /* Launch errors the app did not check, and errors of the phase events. */
    if (!rc)
        rc = hf_cuda_check(gpu, cudaGetLastError(), "after run_cuda");
    if (!rc)
        rc = hf_cuda_check(gpu, gpu->err, "recording the phase events");
    while (!rc && gpu->phase < HF_CUDA_COPY_OUT)
        cuda_advance(gpu);
    gpu->phase = -1;
    if (!rc)
        rc = hf__cuda_shared_piece_out(gpu, gpu->shared, &sl->piece, gpu->stream[2]);
    if (!rc)
        rc = hf_cuda_check(gpu, cudaEventRecord(sl->ev[EV_OUT_END], gpu->stream[2]),
                           "cudaEventRecord");
    for (int k = 0; k < NSTREAMS && !rc; k++)
        rc = hf_cuda_check(gpu, cudaEventRecord(sl->done[k], gpu->stream[k]), "cudaEventRecord");
    if (!rc)
        rc = hf_cuda_check(gpu, gpu->err, "recording the phase events");
    return rc;
}

/* Runs a bundle as a pipeline of pieces (see DESIGN above). */
static int cuda_run(struct hf_device *dev, const struct hf_app *app, void *app_ctx,
                    const struct hf_bundle *b, struct hf_bundle_times *t)
{
    struct hf_cuda *gpu = dev->drv;
    HF_ASSERT_MSG(gpu, "hf_driver_cuda.run before open");
    memset(t, 0, sizeof *t);
    gpu->last_pieces = gpu->last_splits = 0;
    if (!app->run_cuda)
        return hf_fail(HF_ENOTSUP, "%s: app %s has no GPU kernel (run_cuda)", gpu->name,
                       app->name);
    if (b->end <= b->begin)
        return 0;
    gpu->piece = gpu->bundle = b;
    int rc = hf_cuda_check(gpu, cudaSetDevice(gpu->ordinal), "cudaSetDevice");
    if (rc) {
        gpu->piece = gpu->bundle = NULL;
        return rc;
    }

    if ((rc = hf__cuda_shared_bundle_start(gpu, gpu->shared)))
        goto fail;
    size_t g = bundle_chunk_units(b);
    size_t pu = piece_units(gpu, b, g);
    size_t u = b->begin;
    int i = 0;
    while (u < b->end) {
        int s = i & 1;
        if ((rc = slot_wait(gpu, s, t)))
            goto fail;
        struct cuda_slot *sl = &gpu->slot[s];
        make_piece(b, g, u, tail_units(b, g, u, pu), &sl->piece);
        rc = piece_enqueue(gpu, app, app_ctx, s);
        if (rc == HF_EDEVOOM) {
            size_t had = sl->piece.end - sl->piece.begin;
            /* Finish the other slot's piece properly, then drop this one's partial work. */
            if ((rc = slot_wait(gpu, s ^ 1, t)))
                goto fail;
            drain(gpu);
            if (had <= 1) {
                rc = HF_EDEVOOM; /* the app's message says what did not fit */
                goto fail;
            }
            (void)cudaGetLastError();
            hf_clear_error();
            pu = had / 2;
            if (b->load) {
                gpu->cap_units = pu;
                gpu->cap_load_units = b->load->units;
            }
            gpu->last_splits++;
            i = 0; /* both slots are free again */
            continue;
        }
        if (rc)
            goto fail;
        sl->busy = 1;
        u = sl->piece.end;
        i++;
        gpu->last_pieces++;
    }
    if ((rc = slot_wait(gpu, i & 1, t)) || (rc = slot_wait(gpu, (i + 1) & 1, t)))
        goto fail;
    double shared_t0 = hf__now();
    if ((rc = hf__cuda_shared_bundle_done(gpu, gpu->shared)))
        goto fail;
    t->shared_s = hf__now() - shared_t0;
    t->pieces = gpu->last_pieces;
    gpu->piece = gpu->bundle = NULL;
    return 0;
fail:
    drain(gpu);
    gpu->piece = gpu->bundle = NULL;
    return rc;
}

static long cuda_shared_pull(struct hf_device *dev, int s, const uint32_t **idx,
                             const void **vals)
{
    struct hf_cuda *gpu = dev->drv;
    return gpu->shared ? hf__cuda_shared_pull(gpu, gpu->shared, s, idx, vals) : 0;
}

static int cuda_shared_push(struct hf_device *dev, int s, const uint32_t *idx, const void *vals,
                            size_t n, size_t first)
{
    struct hf_cuda *gpu = dev->drv;
    return gpu->shared ? hf__cuda_shared_push(gpu, gpu->shared, s, idx, vals, n, first) : 0;
}

static int cuda_shared_fetch(struct hf_device *dev, int s)
{
    struct hf_cuda *gpu = dev->drv;
    return gpu->shared ? hf__cuda_shared_fetch(gpu, gpu->shared, s) : 0;
}

/* The GPU's primary context (the runtime's, shared by every thread of the
 * process): the part of a GPU's start-up that needs no app data. */
static void cuda_prewarm(const struct hf_device *dev)
{
    if (cudaSetDevice(dev->info.cuda_ordinal) == cudaSuccess)
        (void)cudaFree(0);
    (void)cudaGetLastError();
}

const struct hf_driver_ops hf_driver_cuda = {
    .name = "cuda",
    .open = cuda_open,
    .prewarm = cuda_prewarm,
    .run = cuda_run,
    .close = cuda_close,
    .shared_pull = cuda_shared_pull,
    .shared_push = cuda_shared_push,
    .shared_fetch = cuda_shared_fetch,
};
