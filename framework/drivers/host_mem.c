/* host_mem.c - host memory an app gives to GPUs: the part both builds share,
 * and the plain path of builds without CUDA.
 *
 * DESIGN
 * ------
 * hf_host_alloc (hetfarm.h) hands out page-aligned memory whose length is
 * rounded up to whole pages. Pinning works on pages, so an allocation that
 * shared a page with its neighbour could not be registered on its own, and a
 * neighbour freed without unregistering would leave that page registered for
 * whoever gets the address next. Whole pages keep every registration to
 * exactly one allocation. Builds with CUDA pin it in host_mem_cuda.c (the
 * Makefile leaves *_cuda.c out of CPU-only builds); a build without CUDA has
 * no GPU to pin for, so below the memory stays plain and is freed with
 * free(). The same alignment in both builds means an app sees the same
 * pointers whether or not it was built with nvcc.
 *
 * hf_host_poison fills an app's output with NaN before a round (so rows no
 * device wrote fail verify) using streaming stores, which leave the lines in
 * memory rather than dirty in the cores' caches. With ordinary stores the
 * GPU's copy of its results into that memory waited on those dirty lines: on
 * an H200 host (16 cores, 2 MB of L2 each) the copy-out of a 16 MB result
 * took 0.34-1.07 ms from round to round (16-47 GB/s) against a steady
 * 0.33 ms for the copy-in (9edd91b:bench/NOTES.md, ninth session).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "hetfarm.h"
#include "host_mem.h"

void *hf__host_pages(size_t bytes, size_t *len)
{
    long ps = sysconf(_SC_PAGESIZE);
    size_t page = ps > 0 ? (size_t)ps : 4096;
    if (bytes > SIZE_MAX - page) {
        hf_fail(HF_ENOMEM, "hf_host_alloc: %zu bytes is more than any host can hold", bytes);
        return NULL;
    }
    size_t n = bytes ? (bytes + page - 1) / page * page : page;
    void *p = NULL;
    if (posix_memalign(&p, page, n) != 0) {
        hf_fail(HF_ENOMEM, "hf_host_alloc: cannot allocate %zu bytes (%.1f MiB)", bytes,
                (double)bytes / 1048576.0);
        return NULL;
    }
    *len = n;
    return p;
}

/* Streaming stores of all-one bytes over [p, p + bytes), p 16-byte aligned. */
static void poison_block(unsigned char *p, size_t bytes)
{
#ifdef __SSE2__
    const __m128i ones = _mm_set1_epi32(-1);
    size_t k = 0;
    for (; k + 16 <= bytes; k += 16)
        _mm_stream_si128((__m128i *)(void *)(p + k), ones);
    memset(p + k, 0xff, bytes - k);
    _mm_sfence(); /* this thread's streaming stores land before the round starts */
#else
    memset(p, 0xff, bytes);
#endif
}

void hf_host_poison(void *p, size_t bytes)
{
    enum { BLOCK = 1 << 16 };
    unsigned char *c = p;
    size_t head = (size_t)(-(uintptr_t)c & 15);
    if (!c || bytes == 0)
        return;
    head = head < bytes ? head : bytes;
    memset(c, 0xff, head);
    c += head;
    bytes -= head;
    size_t blocks = (bytes + BLOCK - 1) / BLOCK;
    #pragma omp parallel for schedule(static)
    for (size_t b = 0; b < blocks; b++)
        poison_block(c + b * BLOCK, b + 1 < blocks ? BLOCK : bytes - b * BLOCK);
}

#ifndef HF_HAVE_CUDA
/* Without CUDA there is no GPU to pin for: plain memory, whatever devs lists. */
void *hf_host_alloc(const struct hf_devices *devs, size_t bytes)
{
    size_t len;
    (void)devs;
    return hf__host_pages(bytes, &len);
}

void hf_host_free(void *p)
{
    free(p);
}

int hf_host_pinned(const void *p)
{
    (void)p;
    return 0;
}
#endif
