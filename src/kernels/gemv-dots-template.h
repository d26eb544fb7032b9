/* The transposed form of the GEMV kernels, y[j] = dot(x, row j of B), one
 * text for src/kernels/f32-gemv/ and f64-gemv/ at AVX2 and AVX-512: per
 * column two accumulators of one vector, 2 * LANES values of k a turn;
 * then with AVX-512 the tail in masked steps and the vector's sum, with
 * AVX2 the vector's sum and the tail element by element.
 *
 * A template: the kernel file defines, before including it,
 *   MXP_DOTS_T              x's and y's element: float or double
 *   MXP_DOTS_V              its vector: __m256, __m256d, __m512, __m512d
 *   MXP_DOTS_V_(op)         the intrinsic _mm256_<op>_ps ... _mm512_<op>_pd
 *   MXP_DOTS_ROW            B's row pointer: const double *, or const
 *                           unsigned char * (rows ld bytes apart)
 *   MXP_DOTS_LOAD(row, p)   a vector of row at element p (may use `kind`,
 *                           the kernel's argument)
 * and, for AVX-512,
 *   MXP_DOTS_MASK                  __mmask16 or __mmask8
 *   MXP_DOTS_LOAD_MASKED(row, p, m) the same, lanes beyond m zero, unread
 * or, for AVX2,
 *   MXP_DOTS_HSUM(v)        the sum of v's lanes
 *   MXP_DOTS_LOAD1(row, p)  one value of row at element p
 *   MXP_DOTS_FMA            fmaf or fma
 * and calls mxp_gemv_dots().  Included once per file. */
#ifndef MXP_KERNELS_GEMV_DOTS_TEMPLATE_H
#define MXP_KERNELS_GEMV_DOTS_TEMPLATE_H

#include <immintrin.h>
#include <stddef.h>

static inline __attribute__((always_inline)) void mxp_gemv_dots(size_t k, size_t n, const MXP_DOTS_T *x,
                                                                MXP_DOTS_ROW b, size_t ld, MXP_DOTS_T *y, int kind)
{
    enum { L = sizeof(MXP_DOTS_V) / sizeof(MXP_DOTS_T) };
    (void)kind;
    for (size_t j = 0; j < n; j++) {
        MXP_DOTS_ROW row = b + j * ld;
        MXP_DOTS_V acc0 = MXP_DOTS_V_(setzero)(), acc1 = MXP_DOTS_V_(setzero)();
        size_t p = 0;
        for (; p + 2 * L <= k; p += 2 * L) {
            acc0 = MXP_DOTS_V_(fmadd)(MXP_DOTS_V_(loadu)(x + p), MXP_DOTS_LOAD(row, p), acc0);
            acc1 = MXP_DOTS_V_(fmadd)(MXP_DOTS_V_(loadu)(x + p + L), MXP_DOTS_LOAD(row, p + L), acc1);
        }
#ifdef MXP_DOTS_MASK
        for (; p < k; p += L) {
            const MXP_DOTS_MASK m = k - p >= L ? (MXP_DOTS_MASK)~0u : (MXP_DOTS_MASK)((1u << (k - p)) - 1);
            acc0 = MXP_DOTS_V_(fmadd)(MXP_DOTS_V_(maskz_loadu)(m, x + p), MXP_DOTS_LOAD_MASKED(row, p, m), acc0);
        }
        y[j] = MXP_DOTS_V_(reduce_add)(MXP_DOTS_V_(add)(acc0, acc1));
#else
        MXP_DOTS_T s = MXP_DOTS_HSUM(MXP_DOTS_V_(add)(acc0, acc1));
        for (; p < k; p++)
            s = MXP_DOTS_FMA(x[p], MXP_DOTS_LOAD1(row, p), s);
        y[j] = s;
#endif
    }
}

#endif
