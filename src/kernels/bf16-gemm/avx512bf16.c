/* bfloat16 GEMM micro-kernel, 6 x 32, AVX512_BF16: vdpbf16ps adds the dot
 * product of a pair of bf16 from A~ and a pair from B~ into float32 lanes.
 * Panels are [k/2][MR][2] and [k/2][32][2].  The instruction rounds to
 * nearest even and treats bf16 subnormal inputs as zero (documented in
 * docs/gemm.md); float8 inputs arrive as bf16, exactly. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemm-kernels.h"

#define MR 6

void mxp_bf16_gemm_ukernel_6x32__avx512bf16(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                            size_t ldc, double alpha, double beta)
{
    const uint16_t *pa = a, *pb = b;
    for (size_t i = 0; i < mr; i++) { /* C's lines arrive while the k loop runs */
        _mm_prefetch((const char *)((float *)c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)((float *)c + i * ldc + 31), _MM_HINT_T0);
    }
    __m512 acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = _mm512_setzero_ps();
    for (size_t p = 0; p < kc; p += 2) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512((const void *)pb);
        const __m512bh b1 = (__m512bh)_mm512_loadu_si512((const void *)(pb + 32));
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            int32_t pair;
            memcpy(&pair, pa + 2 * i, 4);
            const __m512bh ai = (__m512bh)_mm512_set1_epi32(pair);
            acc0[i] = _mm512_dpbf16_ps(acc0[i], ai, b0);
            acc1[i] = _mm512_dpbf16_ps(acc1[i], ai, b1);
        }
        pa += 2 * MR;
        pb += 64;
    }
    const __mmask16 m0 = nr >= 16 ? 0xffff : (__mmask16)((1u << nr) - 1);
    const __mmask16 m1 = nr >= 32 ? 0xffff : nr > 16 ? (__mmask16)((1u << (nr - 16)) - 1) : 0;
    const __m512 va = _mm512_set1_ps((float)alpha), vb = _mm512_set1_ps((float)beta);
    float *pc = c;
    for (size_t i = 0; i < mr; i++) {
        float *row = pc + i * ldc;
        __m512 x0 = _mm512_mul_ps(va, acc0[i]), x1 = _mm512_mul_ps(va, acc1[i]);
        if (beta != 0) {
            x0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, row), x0);
            x1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, row + 16), x1);
        }
        _mm512_mask_storeu_ps(row, m0, x0);
        _mm512_mask_storeu_ps(row + 16, m1, x1);
    }
}
