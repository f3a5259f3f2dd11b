/* partition_gpu.cuh - what the partitioner's two GPU files share
 * (partition_cuda.cu: residency, coarsening, the entry point;
 * partition_refine_cuda.cu: refinement): a GPU's copy of the level, device
 * helpers and the copy-back of a piece's results. CUDA C++ only.
 */
#ifndef HF_PARTITION_GPU_CUH
#define HF_PARTITION_GPU_CUH

#include <stddef.h>
#include <stdint.h>

#include "hf_cuda.h"
#include "partition_internal.h"

#define BLOCK 256 /* a multiple of 32: whole warps, whole tiles */

/* A level's CSR as a GPU keeps it from the level's coarsening to the end of
 * its refinement (partition_cuda.cu, "Residency"). */
struct part_gpu_csr {
    unsigned long made;       /* the level's hf_plevel.made when uploaded; 0 = none */
    uint64_t *d_offsets;      /* nv + 1 */
    uint32_t *d_adj;          /* ne */
    int64_t *d_ew;            /* ne, or NULL (unit weights) */
    int64_t *d_vw;            /* nv, or NULL (unit weights) */
    uint32_t *hubs;           /* host: the level's vertices of more than HUB_DEGREE arcs,
                                 ascending (REFINE gives each a block) */
    uint64_t nhubs;
    uint32_t *d_hubs;         /* nhubs: the same on the GPU */
};

/* What one GPU holds: every level's CSR it kept, which of them the rounds
 * now work on, and the scratch of those rounds. */
struct part_gpu {
    int ordinal;              /* its CUDA device, for the release */
    unsigned long level_gen;  /* the level held (c->level_gen when uploaded) */
    unsigned long round_id;   /* the round whose inputs are uploaded (c->round_id) */
    const struct part_gpu_csr *lvl; /* the level held: &csr[c->cur] */
    uint32_t *d_match;        /* nv */
    uint32_t *d_cmap;         /* nv */
    uint32_t *d_leader;       /* nv (a level has at most nv coarse vertices) */
    uint64_t *d_ub;           /* nv + 1 */
    uint32_t *d_part;         /* nv: REFINE's parts */
    int64_t *d_pw;            /* k: REFINE's part weights */
    uint64_t scratch_nv;      /* the vertices the scratch above holds */
    unsigned long from_slots; /* levels built from the contraction's pinned slots rather
                                 than uploaded from pageable memory (partition_cuda_check
                                 checks which way a level came) */
    struct part_gpu_csr csr[HF_PART_MAX_LEVELS]; /* every level kept, by level */
};

/* Vertices of more arcs than this are refined a block each rather than a
 * thread each (partition_refine_cuda.cu). */
#define HUB_DEGREE 128

/* Loads and stores that another thread's writes may race (relaxed, as
 * the CPU code's __atomic builtins), and an edge or vertex weight (1 when
 * the level has none). */
static __device__ __forceinline__ uint32_t vload(const uint32_t *p)
{
    return *(const volatile uint32_t *)p;
}
static __device__ __forceinline__ void vstore(uint32_t *p, uint32_t x)
{
    *(volatile uint32_t *)p = x;
}
static __device__ __forceinline__ int64_t vload64(const int64_t *p)
{
    return *(const volatile int64_t *)p;
}
static __device__ __forceinline__ int64_t weight_of(const int64_t *w, uint64_t i)
{
    return w ? w[i] : 1;
}

/* Blocks of BLOCK threads for `threads` threads. */
static inline unsigned blocks_for(uint64_t threads)
{
    return (unsigned)((threads + BLOCK - 1) / BLOCK);
}

/* Copies a piece's results back to the host on the copy-out stream. */
static inline int copy_back(struct hf_cuda *gpu, void *h, const void *d, size_t bytes,
                            const char *what)
{
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_COPY_OUT);
    return hf_cuda_check(gpu, cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s), what);
}

/* partition_refine_cuda.cu: one REFINE or MEASURE piece, vertices [b, e)
 * of level c->cur, on the GPU's copy g of the level. */
int hf__part_refine_cuda(struct hf_partition *c, struct part_gpu *g, uint64_t b, uint64_t e,
                         struct hf_cuda *gpu);
int hf__part_measure_cuda(struct hf_partition *c, struct part_gpu *g, uint64_t b, uint64_t e,
                          struct hf_cuda *gpu);

#endif
