/* The end of every float32-accumulator AVX-512 micro-kernel: 16 columns of
 * one row of C, masked, become alpha * acc (+ beta * C when beta != 0).
 * Included by kernel files built at AVX-512F or above. */
#ifndef MXP_KERNELS_F32_TILE_AVX512_H
#define MXP_KERNELS_F32_TILE_AVX512_H

#include <immintrin.h>
#include <stddef.h>

static inline __attribute__((always_inline)) void mxp_f32_row_update(float *c, __m512 acc, __mmask16 m, __m512 va,
                                                                     __m512 vb, int with_beta)
{
    __m512 x = _mm512_mul_ps(va, acc);
    if (with_beta)
        x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, c), x);
    _mm512_mask_storeu_ps(c, m, x);
}

/* The mr x nr corner (mr <= 6, nr <= 32) of a 6 x 32 tile held in acc0
 * (columns 0-15) and acc1 (16-31), rows ldc apart.  Unrolled with constant
 * indices: once inlined, the accumulators stay in registers. */
static inline __attribute__((always_inline)) void mxp_f32_tile_store_6x32(float *c, size_t ldc, size_t mr, size_t nr,
                                                                          const __m512 acc0[6], const __m512 acc1[6],
                                                                          double alpha, double beta)
{
    const __mmask16 m0 = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr >= 32 ? 0xffff : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
    const __m512 va = _mm512_set1_ps((float)alpha), vb = _mm512_set1_ps((float)beta);
#pragma GCC unroll 6
    for (int i = 0; i < 6; i++) {
        if ((size_t)i >= mr)
            break;
        float *row = c + (size_t)i * ldc;
        mxp_f32_row_update(row, acc0[i], m0, va, vb, beta != 0);
        mxp_f32_row_update(row + 16, acc1[i], m1, va, vb, beta != 0);
    }
}

#endif
