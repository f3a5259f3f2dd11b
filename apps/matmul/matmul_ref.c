/* matmul_ref.c - the plain reference for matmul, used by verify and the tests.
 *
 * DESIGN
 * ------
 * The design is simple on purpose: row i of C is computed by the textbook loop
 * over k, in float64, from the same stored A and B the kernels read. It is slow
 * (n^2 flops per row) and obviously correct, so only sampled rows are checked
 * for large n.
 *
 * The tolerance is a bound that really holds for any summation order: a dot
 * product of n terms computed in precision u has |error| <= gamma_n * sum |a b|
 * with gamma_n = n u / (1 - n u), plus one rounding of each product when the
 * kernel does not fuse multiply and add. We therefore measure the error relative
 * to sum_k |A_ik B_kj| (not to |C_ij|, which cancellation can make tiny) and allow
 * 2 (n + 2) u. Blocked GEMMs are typically ~sqrt(n) u, far inside the bound, while
 * a wrong or unwritten element is off by O(1) of that scale and is always caught.
 */
#include "matmul.h"

#include <math.h>

double hf__matmul_tolerance(size_t elem, size_t n)
{
    double u = elem == 4 ? ldexp(1.0, -24) : ldexp(1.0, -53);
    return 2.0 * ((double)n + 2.0) * u;
}

/* Row i of C = A * B in float64, and each element's sum of |products|. */
void hf__matmul_ref_row_mag(const struct hf_matmul *m, size_t i, double *out, double *mag)
{
    size_t n = m->n;
    /* Column blocks are independent, so threads take whole blocks; inside a
     * block the plain i-k-j order walks B row by row (usable at n = 32768). */
    const size_t block = 512;
    #pragma omp parallel for schedule(dynamic)
    for (size_t j0 = 0; j0 < n; j0 += block) {
        size_t j1 = j0 + block < n ? j0 + block : n;
        for (size_t j = j0; j < j1; j++) {
            out[j] = 0.0;
            if (mag)
                mag[j] = 0.0;
        }
        for (size_t k = 0; k < n; k++) {
            double aik = m->elem == 4 ? ((const float *)m->A)[i * n + k]
                                      : ((const double *)m->A)[i * n + k];
            for (size_t j = j0; j < j1; j++) {
                double bkj = m->elem == 4 ? ((const float *)m->B)[k * n + j]
                                          : ((const double *)m->B)[k * n + j];
                out[j] += aik * bkj;
                if (mag)
                    mag[j] += fabs(aik * bkj);
            }
        }
    }
}

void hf__matmul_ref_row(const struct hf_matmul *m, size_t i, double *out)
{
    hf__matmul_ref_row_mag(m, i, out, NULL);
}
