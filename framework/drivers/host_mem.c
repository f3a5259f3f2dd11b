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
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

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
