/* fractal_cuda.cu - the fractal app's GPU side: kernel and extern "C" launcher.
 *
 * DESIGN
 * ------
 * One thread per pixel (grid-stride for any piece), each running the escape
 * loop of fractal_ref.c. The counts must equal the reference's exactly, and
 * nvcc contracts a * b + c into a fused multiply-add (one rounding, not two) by
 * default, which moves counts near the set's boundary: every operation is
 * therefore written with its round-to-nearest intrinsic (__dmul_rn, __dadd_rn,
 * __dsub_rn), which nvcc never fuses. Nothing is copied in (the grid travels
 * as kernel arguments), so the piece enters the kernel phase at once; the
 * counts go out on the copy-out stream into the pinned image (fractal.c's
 * setup), and the launcher returns without waiting (the driver synchronises).
 * Every CUDA call and the launch are checked with hf_cuda_check.
 */
#include "fractal.h"
#include "hf_cuda.h"

/* Counts of rows [row0, row0 + rows) into d_out, row-major. */
static __global__ void fractal_kernel(uint32_t *d_out, struct hf_fractal_grid g, size_t row0,
                                      size_t rows)
{
    size_t n = rows * g.width, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double cx = __dadd_rn(g.x0, __dmul_rn((double)(i % g.width), g.step));
        double cy = __dsub_rn(g.y0, __dmul_rn((double)(row0 + i / g.width), g.step));
        double zr = 0.0, zi = 0.0, zr2 = 0.0, zi2 = 0.0;
        uint32_t k = 0;
        while (k < g.max_iter && __dadd_rn(zr2, zi2) <= 4.0) {
            zi = __dadd_rn(__dmul_rn(__dmul_rn(2.0, zr), zi), cy);
            zr = __dadd_rn(__dsub_rn(zr2, zi2), cx);
            zr2 = __dmul_rn(zr, zr);
            zi2 = __dmul_rn(zi, zi);
            k++;
        }
        d_out[i] = k;
    }
}

/* Enqueues rows [row0, row0 + rows) on `gpu` and their copy into out. */
extern "C" int hf__fractal_cuda_run(struct hf_cuda *gpu, const struct hf_fractal_grid *g,
                                    size_t row0, size_t rows, uint32_t *out)
{
    size_t n = rows * g->width, bytes = n * sizeof(uint32_t);
    if (n == 0)
        return 0; /* a launch of no blocks would fail */
    uint32_t *d_out = (uint32_t *)hf_cuda_arena_alloc(gpu, bytes);
    if (!d_out)
        return hf_fail(HF_EDEVOOM, "fractal: %zu rows do not fit %s's arena", rows,
                       hf_cuda_name(gpu));
    cudaStream_t s = hf_cuda_phase(gpu, HF_CUDA_KERNEL);
    size_t want = (n + 255) / 256;
    unsigned blocks = want < (1u << 20) ? (unsigned)want : (1u << 20);
    fractal_kernel<<<blocks, 256, 0, s>>>(d_out, *g, row0, rows);
    int rc = hf_cuda_check(gpu, cudaGetLastError(), "fractal kernel launch");
    if (rc)
        return rc;
    s = hf_cuda_phase(gpu, HF_CUDA_COPY_OUT);
    return hf_cuda_check(gpu, cudaMemcpyAsync(out, d_out, bytes, cudaMemcpyDeviceToHost, s),
                         "fractal copy out");
}
