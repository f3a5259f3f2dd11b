/* frontier_cuda.cu - a frontier slice onto the GPU, for the push pieces of
 * bfs_cuda.cu and sssp_cuda.cu.
 *
 * DESIGN
 * ------
 * A push piece needs its frontier items and their degree prefix sums on the
 * GPU. Both are copied into the piece's arena through the slot's pinned
 * staging buffer when they fit there (the frontier is rebuilt every round,
 * so it is not worth pinning), else straight from the host arrays.
 */
#include <string.h>

#include "graph_app.h"
#include "hf_cuda.h"

extern "C" int hf__frontier_to_gpu(const struct hf_frontier *f, const struct hf_bundle *p,
                                   struct hf_cuda *gpu, uint32_t **d_front, uint64_t **d_pre)
{
    size_t n = p->end - p->begin;
    size_t fb = n * sizeof(uint32_t), pb = (n + 1) * sizeof(uint64_t);
    size_t fb_al = (fb + 255) / 256 * 256;
    *d_front = (uint32_t *)hf_cuda_arena_alloc(gpu, fb);
    *d_pre = (uint64_t *)hf_cuda_arena_alloc(gpu, pb);
    if (!*d_front || !*d_pre)
        return hf_fail(HF_EDEVOOM, "graph: a frontier slice of %zu vertices does not fit", n);
    char *stage = (char *)hf_cuda_staging(gpu, fb_al + pb);
    const void *src_front = f->v + p->begin, *src_pre = f->pre + p->begin;
    if (stage) {
        memcpy(stage, src_front, fb);
        memcpy(stage + fb_al, src_pre, pb);
        src_front = stage;
        src_pre = stage + fb_al;
    }
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_COPY_IN);
    int rc = hf_cuda_check(gpu, cudaMemcpyAsync(*d_front, src_front, fb, cudaMemcpyHostToDevice, s),
                           "frontier in");
    return rc ? rc
              : hf_cuda_check(gpu, cudaMemcpyAsync(*d_pre, src_pre, pb, cudaMemcpyHostToDevice, s),
                              "frontier prefix in");
}
