/* fractal_ref.c - the plain reference of the fractal app.
 *
 * DESIGN
 * ------
 * The reference is the textbook escape-time loop, one pixel at a time: z = 0,
 * then z = z^2 + c until |z|^2 > 4 or max_iter steps. It computes in double
 * with one rounding per operation (C11 contracts no a * b + c into a fused
 * multiply-add unless asked, and the build does not ask), and the CPU and GPU
 * kernels perform the same operations in the same order, so a count is an
 * exact function of c and verify compares with ==. The counts are chaotic near
 * the set's boundary: a kernel that rounded one step differently would differ
 * there, which is why an exact comparison is a real test of the kernels.
 */
#include "fractal.h"

uint32_t hf__fractal_ref_point(double cx, double cy, uint32_t max_iter)
{
    double zr = 0.0, zi = 0.0;
    uint32_t n = 0;
    while (n < max_iter && zr * zr + zi * zi <= 4.0) {
        double re = zr * zr - zi * zi + cx;
        zi = 2.0 * zr * zi + cy;
        zr = re;
        n++;
    }
    return n;
}

void hf__fractal_ref_row(const struct hf_fractal_grid *g, size_t row, uint32_t *out)
{
    double cy = g->y0 - (double)row * g->step;
    for (size_t col = 0; col < g->width; col++)
        out[col] = hf__fractal_ref_point(g->x0 + (double)col * g->step, cy, g->max_iter);
}
