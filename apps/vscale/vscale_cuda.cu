/* vscale_cuda.cu - the vscale app's GPU side: kernel and extern "C" launcher.
 *
 * DESIGN
 * ------
 * The CUDA boundary of every app (STYLE.md rule 6): kernels are static
 * __global__, the only export is an extern "C" function that the app's run_cuda
 * calls with host pointers of its bundle. It follows the three phases of
 * framework/hf_cuda.h: allocate from the GPU's arena, copy x in on the copy-in
 * stream, launch on the compute stream, copy y out on the copy-out stream, and
 * return without waiting (the driver synchronises). Every CUDA call is checked
 * with hf_cuda_check, which maps it to HF_EDEVICE or HF_EDEVOOM (the driver then
 * halves the piece and calls again).
 *
 * The host arrays come from hf_host_alloc (vscale.c's setup), which pins them
 * when the run has a GPU, so these copies are asynchronous and overlap the
 * kernels of the other slot; the app writes no cudaHostRegister of its own.
 */
#include "hetfarm.h"
#include "hf_cuda.h"

/* y[i] = a * x[i] for i < n: one element per thread, grid-stride for any n. */
static __global__ void vscale_kernel(float *d_y, const float *d_x, float a, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        d_y[i] = a * d_x[i];
}

/* Enqueues y[0..n) = a * x[0..n) on `gpu`: copy in, kernel, copy out. */
extern "C" int hf__vscale_cuda_run(struct hf_cuda *gpu, float a, const float *x, float *y,
                                   size_t n)
{
    size_t bytes = n * sizeof(float);
    float *d_x = (float *)hf_cuda_arena_alloc(gpu, bytes);
    float *d_y = (float *)hf_cuda_arena_alloc(gpu, bytes);
    if (!d_x || !d_y)
        return hf_fail(HF_EDEVOOM, "vscale: %zu elements do not fit %s's arena", n,
                       hf_cuda_name(gpu));
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_COPY_IN);
    int rc = hf_cuda_check(gpu, cudaMemcpyAsync(d_x, x, bytes, cudaMemcpyHostToDevice, s),
                           "vscale copy in");
    if (rc)
        return rc;
    s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    size_t want = (n + 255) / 256;
    unsigned blocks = want < 65535 ? (unsigned)want : 65535u;
    vscale_kernel<<<blocks, 256, 0, s>>>(d_y, d_x, a, n);
    if ((rc = hf_cuda_check(gpu, cudaGetLastError(), "vscale kernel launch")))
        return rc;
    s = hf_cuda_phase(gpu, HF_CUDA_COPY_OUT);
    return hf_cuda_check(gpu, cudaMemcpyAsync(y, d_y, bytes, cudaMemcpyDeviceToHost, s),
                         "vscale copy out");
}
