/* sssp_cuda.cu - one piece of an SSSP relaxation round on a GPU.
 *
 * DESIGN
 * ------
 * As BFS's push round (bfs_cuda.cu), which this follows line by line: the
 * CSR, its weights and the distances live on the GPU for the whole run, a
 * piece copies in only its frontier slice and the prefix sums of its degrees,
 * and every thread relaxes the same number of EDGES, finding its vertex by
 * binary search in the prefix sums, so that a hub's edges spread over the
 * whole GPU. dist[v] = min(dist[v], dist[u] + w) is one atomicMin on the int
 * bits of the float: distances are never negative (the loaders reject
 * negative weights) and non-negative IEEE floats, +inf included, order like
 * their bit patterns as signed ints. A thread whose atomicMin lowered v
 * records it (hf_cuda_shared_record) for the merge.
 */
#include <stdint.h>
#include <string.h>

#include "hf_cuda.h"
#include "sssp.h"

#define EDGES_PER_THREAD 8

/* Each thread relaxes EDGES_PER_THREAD consecutive edges of the slice. */
static __global__ void relax_kernel(const uint64_t *offsets, const uint32_t *adj,
                                    const float *weights, float *dist, struct hf_cuda_recorder rec,
                                    const uint32_t *front, const uint64_t *pre, uint32_t n,
                                    uint64_t pre0, uint64_t edges)
{
    uint64_t first = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) * EDGES_PER_THREAD;
    if (first >= edges)
        return;
    uint64_t last = first + EDGES_PER_THREAD < edges ? first + EDGES_PER_THREAD : edges;
    /* Binary search for the item holding edge `first`: pre[k] - pre0 <= first. */
    uint32_t lo = 0, hi = n;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (pre[mid] - pre0 <= first)
            lo = mid;
        else
            hi = mid;
    }
    uint32_t k = lo;
    for (uint64_t e = first; e < last; e++) {
        while (k + 1 < n && pre[k + 1] - pre0 <= e)
            k++;
        uint32_t u = front[k];
        uint64_t j = offsets[u] + (e - (pre[k] - pre0));
        uint32_t v = adj[j];
        float nd = *(volatile float *)&dist[u] + (weights ? weights[j] : 1.0f);
        if (nd < *(volatile float *)&dist[v]) {
            int bits = __float_as_int(nd);
            if (bits < atomicMin((int *)&dist[v], bits))
                hf_cuda_shared_record(rec, v);
        }
    }
}

/* Copies a piece's frontier slice and prefix sums to the arena through the
 * slot's pinned staging buffer (as bfs_cuda.cu does; the frontier is rebuilt
 * every round, so it is not worth pinning). */
static int copy_slice(struct hf_sssp *s, const struct hf_bundle *p, struct hf_cuda *gpu,
                      uint32_t **d_front, uint64_t **d_pre)
{
    size_t n = p->end - p->begin;
    size_t fb = n * sizeof(uint32_t), pb = (n + 1) * sizeof(uint64_t);
    size_t fb_al = (fb + 255) / 256 * 256;
    *d_front = (uint32_t *)hf_cuda_arena_alloc(gpu, fb);
    *d_pre = (uint64_t *)hf_cuda_arena_alloc(gpu, pb);
    if (!*d_front || !*d_pre)
        return hf_fail(HF_EDEVOOM, "sssp: a frontier slice of %zu vertices does not fit", n);
    size_t stage_bytes = 0;
    char *stage = (char *)hf_cuda_staging(gpu, &stage_bytes);
    cudaStream_t st = hf_cuda_phase(gpu, HF_CUDA_COPY_IN);
    const void *hf = s->fr.v + p->begin, *hp = s->fr.pre + p->begin;
    const char *sf = (const char *)hf, *sp = (const char *)hp;
    if (stage && fb_al + pb <= stage_bytes) {
        memcpy(stage, hf, fb);
        memcpy(stage + fb_al, hp, pb);
        sf = stage;
        sp = stage + fb_al;
    }
    int rc = hf_cuda_check(gpu, cudaMemcpyAsync(*d_front, sf, fb, cudaMemcpyHostToDevice, st),
                           "sssp frontier in");
    return rc ? rc
              : hf_cuda_check(gpu, cudaMemcpyAsync(*d_pre, sp, pb, cudaMemcpyHostToDevice, st),
                              "sssp prefix in");
}

extern "C" int hf__sssp_cuda(struct hf_sssp *s, const struct hf_bundle *p, struct hf_cuda *gpu)
{
    const uint64_t *offsets = (const uint64_t *)hf_cuda_shared(gpu, SSSP_OFFSETS);
    const uint32_t *adj = (const uint32_t *)hf_cuda_shared(gpu, SSSP_ADJ);
    const float *weights =
        s->ga.g.weights ? (const float *)hf_cuda_shared(gpu, SSSP_WEIGHTS) : NULL;
    float *dist = (float *)hf_cuda_shared(gpu, s->s_dist);
    if (!offsets || !adj || !dist || (s->ga.g.weights && !weights))
        return hf_fail(HF_EAPP, "sssp: the graph is not on %s", hf_cuda_name(gpu));
    struct hf_cuda_recorder rec = hf_cuda_shared_recorder(gpu, s->s_dist);
    uint32_t *d_front;
    uint64_t *d_pre;
    int rc = copy_slice(s, p, gpu, &d_front, &d_pre);
    if (rc)
        return rc;
    uint64_t edges = s->fr.pre[p->end] - s->fr.pre[p->begin];
    cudaStream_t st = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    if (edges == 0)
        return 0;
    uint64_t threads = (edges + EDGES_PER_THREAD - 1) / EDGES_PER_THREAD;
    relax_kernel<<<(unsigned)((threads + 255) / 256), 256, 0, st>>>(
        offsets, adj, weights, dist, rec, d_front, d_pre, (uint32_t)(p->end - p->begin),
        s->fr.pre[p->begin], edges);
    return hf_cuda_check(gpu, cudaGetLastError(), "sssp relax kernel");
}
