/* shared_kernels.cu - the three small kernels of the shared-data merge:
 * gather the recorded elements into a dense buffer (so that a pull copies
 * only what changed), scatter merged values back into a replica, and clear
 * the recorder's bits of the elements recorded this round (instead of
 * clearing the whole bitmap, whose size is the array's).
 */
#include <stdint.h>

#include "shared_cuda.h"

/* An index of count or more (an app kernel that recorded a wrong element)
 * is counted in *bad and gathers nothing. */
template <typename T>
static __global__ void gather_kernel(T *out, const T *src, const uint32_t *idx, size_t n,
                                     size_t count, unsigned long long *bad)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
         k += (size_t)gridDim.x * blockDim.x) {
        if (idx[k] < count)
            out[k] = src[idx[k]];
        else
            atomicAdd(bad, 1ull);
    }
}

template <typename T>
static __global__ void scatter_kernel(T *dst, const uint32_t *idx, const T *vals, size_t n)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
         k += (size_t)gridDim.x * blockDim.x)
        dst[idx[k]] = vals[k];
}

static __global__ void clear_bits_kernel(uint32_t *bits, const uint32_t *list, size_t n,
                                         size_t count)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
         k += (size_t)gridDim.x * blockDim.x)
        if (list[k] < count)
            bits[list[k] >> 5] = 0;
}

/* Enough blocks to cover n with 256 threads, capped (grid-stride loops). */
static unsigned grid_for(size_t n)
{
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 65535 ? (b ? b : 1) : 65535);
}

extern "C" cudaError_t hf__cuda_gather(void *d_out, const void *d_src, const uint32_t *d_idx,
                                       size_t n, size_t elem, size_t count,
                                       unsigned long long *d_bad, cudaStream_t s)
{
    if (n == 0)
        return cudaSuccess;
    if (elem == 1)
        gather_kernel<<<grid_for(n), 256, 0, s>>>((uint8_t *)d_out, (const uint8_t *)d_src, d_idx, n,
                                                 count, d_bad);
    else if (elem == 4)
        gather_kernel<<<grid_for(n), 256, 0, s>>>((uint32_t *)d_out, (const uint32_t *)d_src, d_idx,
                                                 n, count, d_bad);
    else
        gather_kernel<<<grid_for(n), 256, 0, s>>>((uint64_t *)d_out, (const uint64_t *)d_src, d_idx,
                                                 n, count, d_bad);
    return cudaGetLastError();
}

extern "C" cudaError_t hf__cuda_scatter(void *d_dst, const uint32_t *d_idx, const void *d_vals,
                                        size_t n, size_t elem, cudaStream_t s)
{
    if (n == 0)
        return cudaSuccess;
    if (elem == 1)
        scatter_kernel<<<grid_for(n), 256, 0, s>>>((uint8_t *)d_dst, d_idx, (const uint8_t *)d_vals,
                                                  n);
    else if (elem == 4)
        scatter_kernel<<<grid_for(n), 256, 0, s>>>((uint32_t *)d_dst, d_idx,
                                                  (const uint32_t *)d_vals, n);
    else
        scatter_kernel<<<grid_for(n), 256, 0, s>>>((uint64_t *)d_dst, d_idx,
                                                  (const uint64_t *)d_vals, n);
    return cudaGetLastError();
}

extern "C" cudaError_t hf__cuda_clear_bits(uint32_t *d_bits, const uint32_t *d_list, size_t n,
                                           size_t count, cudaStream_t s)
{
    if (n == 0)
        return cudaSuccess;
    clear_bits_kernel<<<grid_for(n), 256, 0, s>>>(d_bits, d_list, n, count);
    return cudaGetLastError();
}
