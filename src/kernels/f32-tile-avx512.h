/* The end of every float32-accumulator AVX-512 micro-kernel: 16 columns of
 * one row of C, masked, become alpha * acc (+ beta * C when beta != 0).
 * Included by kernel files built at AVX-512F or above. */
#ifndef MXP_KERNELS_F32_TILE_AVX512_H
#define MXP_KERNELS_F32_TILE_AVX512_H

#include <immintrin.h>

static inline __attribute__((always_inline)) void mxp_f32_row_update(float *c, __m512 acc, __mmask16 m, __m512 va,
                                                                     __m512 vb, int with_beta)
{
    __m512 x = _mm512_mul_ps(va, acc);
    if (with_beta)
        x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, c), x);
    _mm512_mask_storeu_ps(c, m, x);
}

#endif
