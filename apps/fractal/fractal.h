/* fractal.h - the fractal app's image grid, shared by its CPU side (fractal.c),
 * its GPU side (fractal_cuda.cu) and its reference (fractal_ref.c).
 *
 * The image is the Mandelbrot set's escape counts on a grid of the complex
 * plane: pixel (row, col) is the point c = (x0 + col * step, y0 - row * step),
 * row 0 at the top. Every side computes that point and the iteration
 * z = z^2 + c from z = 0 in double with the same operations in the same order
 * (one rounding each, no fused multiply-add), so their counts agree exactly.
 */
#ifndef HF_FRACTAL_H
#define HF_FRACTAL_H

#include <stddef.h>
#include <stdint.h>

#include "hetfarm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The grid: width x height pixels, the top-left pixel's centre (x0, y0), the
 * distance `step` between pixel centres, and the iteration limit. */
struct hf_fractal_grid {
    size_t width, height;
    uint32_t max_iter;
    double x0, y0, step;
};

/* The escape count of c = (cx, cy): how many times z = z^2 + c ran, from
 * z = 0, before |z|^2 exceeded 4; max_iter when it never did. */
uint32_t hf__fractal_ref_point(double cx, double cy, uint32_t max_iter);
/* The reference of image row `row`: out[0..width) (pixel centres as above). */
void hf__fractal_ref_row(const struct hf_fractal_grid *g, size_t row, uint32_t *out);

#ifdef HF_HAVE_CUDA
/* GPU side (fractal_cuda.cu): enqueues rows [row0, row0 + rows) of the image
 * on `gpu` and their copy into out[0 .. rows * width). */
int hf__fractal_cuda_run(struct hf_cuda *gpu, const struct hf_fractal_grid *g, size_t row0,
                         size_t rows, uint32_t *out);
#endif

#ifdef __cplusplus
}
#endif
#endif
