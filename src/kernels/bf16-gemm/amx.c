/* bfloat16 GEMM micro-kernel, 32 x 32, AMX: four float32 C tiles of 16 x
 * 16, two A tiles (16 rows x 32 k) and two B tiles (16 k-pairs x 16
 * columns) per 32 values of k, each `tdpbf16ps` 16 x 16 x 32.
 *
 * Panels: A~ [k/32][32][32] (each row's 32 values of k contiguous, as a
 * tile row wants them), B~ [k/2][32][2] (the vdpbf16ps kernel's layout: a
 * B tile is 16 of its pair rows, 128 bytes apart), kc a multiple of 32.
 *
 * The instruction's arithmetic, per element and per 32 values of k
 * (measured on an Intel Xeon 6/0xa7 against this model: 0 mismatches in
 * 10^7 elements over every exponent range; the SDM's pseudo-code has the
 * two chains too): the even-k products and the odd-k products in two
 * chains of fused multiply-adds from +0, then C + (even + odd), every step
 * rounding to nearest even, bfloat16 subnormal inputs read as zero and
 * float32 subnormal results flushed.  The twin (scalar.c) computes exactly
 * that; alpha and beta come after, as in every float kernel. */
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/amx-tiles.h"
#include "kernels/gemm-kernels.h"

void mxp_bf16_gemm_release__amx(void)
{
    mxp_amx_tiles_release();
}

/* Tiles 0-3 = A times B~, A's rows a_row elements apart, 32 values of
 * k a_step elements apart (A~: 32 and 32 x 32; in place: lda and 32). */
static inline __attribute__((always_inline)) void multiply(size_t mr, size_t kc, const uint16_t *pa, size_t a_row,
                                                           size_t a_step, bool in_place, const uint16_t *pb)
{
    mxp_amx_tiles_configure();
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    mxp_amx_2x2(MXP_AMX_BF16, mr, kc / 32, (const uint8_t *)pa, a_row * 2, a_step * 2, in_place,
                (const uint8_t *)pb);
}

/* C (mr x nr, rows ldc apart) = alpha * the four tiles + beta * C. */
static inline __attribute__((always_inline)) void store(size_t mr, size_t nr, float *pc, size_t ldc, double alpha,
                                                        double beta)
{
    if (alpha == 1 && beta == 0 && mr == 32 && nr == 32) { /* the sums are the result: stored in place */
        mxp_amx_store_sums(pc, ldc * 4);
        return;
    }
    float sum[32][32] __attribute__((aligned(64)));
    mxp_amx_store_sums(sum, 128);
    mxp_amx_tile_memory_barrier();
    const __m512 va = _mm512_set1_ps((float)alpha), vb = _mm512_set1_ps((float)beta);
    for (size_t i = 0; i < mr; i++, pc += ldc)
        for (size_t j = 0; j < nr; j += 16) {
            const __mmask16 m = nr - j >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nr - j)) - 1);
            __m512 x = _mm512_mul_ps(va, _mm512_load_ps(&sum[i][j]));
            if (beta != 0)
                x = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m, pc + j), x);
            _mm512_mask_storeu_ps(pc + j, m, x);
        }
}

void mxp_bf16_gemm_ukernel_32x32__amx(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                      size_t ldc, double alpha, double beta)
{
    multiply(mr, kc, a, 32, 32 * 32, false, b);
    store(mr, nr, c, ldc, alpha, beta);
}

/* A in place: rows lda elements apart, k contiguous, kc a multiple of 32. */
void mxp_bf16_gemm_ukernel_32x32_a__amx(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                        void *c, size_t ldc, double alpha, double beta)
{
    multiply(mr, kc, a, lda, 32, true, b);
    store(mr, nr, c, ldc, alpha, beta);
}
