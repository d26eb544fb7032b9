/* float32 matrix-vector products for M = 1 GEMMs (one token of a language
 * model): B is streamed once, straight from the caller's memory, no packing.
 *   y[j] = sum_p x[p] * B[p][j]   (B rows contiguous: 4 rows per pass)
 *   y[j] = sum_p x[p] * B[j][p]   (B transposed: 4 dot products per pass)
 * B is float32, bfloat16, float16, float8_e4m3fn or float8_e5m2 (widened
 * exactly in registers), x and y float32. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemv-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

/* 16 values of B's row at element j, widened to float32. */
MXP_INLINE __m512 load16(const void *row, size_t j, int kind, __mmask16 m)
{
    switch (kind) {
    case MXP_GEMV_BF16:
        return _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, (const uint16_t *)row + j)), 16));
    case MXP_GEMV_F16:
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint16_t *)row + j));
    case MXP_GEMV_E5M2: /* float16's top byte */
        return _mm512_cvtph_ps(
            _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_maskz_loadu_epi8(m, (const uint8_t *)row + j)), 8));
    case MXP_GEMV_E4M3: { /* the sign-extended bits shifted by 7, bit 14 cleared: the value 2^-8 as float16 */
        const __m256i t = _mm256_slli_epi16(_mm256_cvtepi8_epi16(_mm_maskz_loadu_epi8(m, (const uint8_t *)row + j)), 7);
        const __mmask16 nan = _mm256_cmpeq_epi16_mask(_mm256_and_si256(t, _mm256_set1_epi16(0x3f80)),
                                                      _mm256_set1_epi16(0x3f80));
        const __m256i h = _mm256_mask_mov_epi16(_mm256_and_si256(t, _mm256_set1_epi16((short)0xbfff)), nan,
                                                _mm256_set1_epi16(0x7e00));
        return _mm512_cvtph_ps(h);
    }
    default:
        return _mm512_maskz_loadu_ps(m, (const float *)row + j);
    }
}

/* y += the R rows of B from p times x[p..], one pass over y (R a constant:
 * 8, 4 or 1); each y[j] takes the rows in order. */
MXP_INLINE void rows_pass(int R, size_t p, size_t n, const float *x, const unsigned char *b, size_t ld_bytes, float *y,
                          int kind)
{
    const unsigned char *r[8];
    __m512 xv[8];
    for (int q = 0; q < R; q++) {
        r[q] = b + (p + (size_t)q) * ld_bytes;
        xv[q] = _mm512_set1_ps(x[p + (size_t)q]);
    }
    for (size_t j = 0; j < n; j += 16) {
        const __mmask16 m = n - j >= 16 ? 0xffff : (__mmask16)((1u << (n - j)) - 1);
        __m512 acc = _mm512_maskz_loadu_ps(m, y + j);
        for (int q = 0; q < R; q++)
            acc = _mm512_fmadd_ps(xv[q], load16(r[q], j, kind, m), acc);
        _mm512_mask_storeu_ps(y + j, m, acc);
    }
}

#define MXP_DOTS_T float
#define MXP_DOTS_V __m512
#define MXP_DOTS_V_(op) _mm512_##op##_ps
#define MXP_DOTS_ROW const unsigned char *
#define MXP_DOTS_LOAD(row, p) load16(row, p, kind, 0xffff)
#define MXP_DOTS_MASK __mmask16
#define MXP_DOTS_LOAD_MASKED(row, p, m) load16(row, p, kind, m)
#include "kernels/gemv-dots-template.h"
#include "kernels/gemv-f32-kinds.h"

void mxp_f32_gemv__avx512f(int trans_b, int kind, size_t k, size_t n, const float *x, const void *b,
                              size_t ld_bytes, float *y)
{
    mxp_f32_gemv_by_kind(trans_b, kind, k, n, x, b, ld_bytes, y);
}
