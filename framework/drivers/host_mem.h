/* host_mem.h - what the two builds of hf_host_alloc share (drivers/ only).
 *
 * hf_host_alloc and hf_host_free (hetfarm.h) are defined by host_mem_cuda.c in
 * builds with CUDA and by host_mem.c otherwise; both take their memory here.
 */
#ifndef HF_HOST_MEM_H
#define HF_HOST_MEM_H

#include <stddef.h>

/* Page-aligned memory of at least `bytes` (at least one page), its length
 * rounded up to whole pages in *len, so that pinning it never shares a page
 * with another allocation. NULL with hf_fail details (HF_ENOMEM) on failure. */
void *hf__host_pages(size_t bytes, size_t *len);

#endif
