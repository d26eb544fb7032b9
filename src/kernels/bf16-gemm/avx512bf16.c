/* bfloat16 GEMM micro-kernel, 6 x 32, AVX512_BF16: vdpbf16ps adds the dot
 * product of a pair of bf16 from A~ and a pair from B~ into float32 lanes.
 * Panels are [k/2][MR][2] and [k/2][32][2].  The instruction rounds to
 * nearest even and treats bf16 subnormal inputs as zero (documented in
 * docs/gemm.md); float8 inputs arrive as bf16, exactly. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemm-kernels.h"

/* A's pair of bf16 at p in every 32-bit lane. */
static inline __attribute__((always_inline)) __m512bh set1_pair(const uint16_t *p)
{
    int32_t pair;
    memcpy(&pair, p, 4);
    return (__m512bh)_mm512_set1_epi32(pair);
}

#define MXP_TILE_T uint16_t
#define MXP_TILE_C float
#define MXP_TILE_V __m512
#define MXP_TILE_V_(op) _mm512_##op##_ps
#define MXP_TILE_MASK __mmask16
#define MXP_TILE_KPACK 2
#define MXP_TILE_B __m512bh
#define MXP_TILE_LOAD_B(p) ((__m512bh)_mm512_loadu_si512((const void *)(p)))
#define MXP_TILE_SET1_A(p) set1_pair(p)
#define MXP_TILE_DOT(acc, a, b) _mm512_dpbf16_ps(acc, a, b)
#include "kernels/gemm-avx512-tile.h"

void mxp_bf16_gemm_ukernel_6x32__avx512bf16(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                            size_t ldc, double alpha, double beta)
{
    mxp_avx512_tile(mr, nr, kc, a, MXP_TILE_MR, 2, 2 * MXP_TILE_MR, b, c, ldc, alpha, beta);
}

/* A in place: rows lda elements apart, k contiguous, kc even. */
void mxp_bf16_gemm_ukernel_6x32_a__avx512bf16(size_t mr, size_t nr, size_t kc, const void *a, size_t lda,
                                              const void *b, void *c, size_t ldc, double alpha, double beta)
{
    mxp_avx512_tile(mr, nr, kc, a, mr, lda, 2, b, c, ldc, alpha, beta);
}

/* A's rows through pointers, k in nseg segments of seglen (even) at
 * rows[i] + off[s] (a convolution's taps: src/nn/conv-taps.c). */
void mxp_bf16_gemm_ukernel_6x32_taps__avx512bf16(size_t mr, size_t nr, size_t nseg, size_t seglen,
                                                 const void *const *rows, const ptrdiff_t *off, const void *b,
                                                 void *c, size_t ldc, double alpha, double beta)
{
    mxp_avx512_tile_taps(mr, nr, nseg, seglen, (const uint16_t *const *)rows, off, b, c, ldc, alpha, beta);
}

/* Small M: 8 x 32 with bfloat16 B read in place (rows ldb elements apart):
 * rows p and p+1 are interleaved into k-pairs in registers (vpunpck*wd
 * works within 128-bit lanes, so the accumulators hold the columns in the
 * order 0-3, 8-11, 16-19, 24-27 | 4-7, 12-15, 20-23, 28-31, put back in
 * order before C is touched).  A packed [k/2][8][2]; an odd kc's last pair
 * has a zero second row. */
void mxp_bf16_gemm_direct_8x32__avx512bf16(size_t mr, size_t nr, size_t kc, const void *a, const void *b,
                                           size_t ldb, void *c, size_t ldc, double alpha, double beta)
{
    const uint16_t *pa = a, *pb = b;
    const __mmask32 mb = nr >= 32 ? ~0u : (__mmask32)((1u << nr) - 1);
    __m512 lo[8], hi[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        lo[i] = hi[i] = _mm512_setzero_ps();
    for (size_t p = 0; p < kc; p += 2) {
        const __m512i r0 = _mm512_maskz_loadu_epi16(mb, pb);
        const __m512i r1 = p + 1 < kc ? _mm512_maskz_loadu_epi16(mb, pb + ldb) : _mm512_setzero_si512();
        const __m512bh b0 = (__m512bh)_mm512_unpacklo_epi16(r0, r1), b1 = (__m512bh)_mm512_unpackhi_epi16(r0, r1);
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            const __m512bh ai = set1_pair(pa + 2 * i);
            lo[i] = _mm512_dpbf16_ps(lo[i], ai, b0);
            hi[i] = _mm512_dpbf16_ps(hi[i], ai, b1);
        }
        pa += 16;
        pb += 2 * ldb;
    }
    /* columns 0-15: lo chunk 0, hi chunk 0, lo chunk 1, hi chunk 1; 16-31 likewise from chunks 2, 3 */
    const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    __m512 x0[8], x1[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
        x0[i] = _mm512_permutex2var_ps(lo[i], first, hi[i]);
        x1[i] = _mm512_permutex2var_ps(lo[i], second, hi[i]);
    }
    mxp_avx512_tile_store(8, 2, c, ldc, mr, nr, x0, x1, x1, alpha, beta);
}
