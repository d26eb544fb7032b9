/* float32 matrix-vector products for M = 1 GEMMs, AVX2 + FMA + F16C (the
 * AVX-512 kernel of avx512f.c at 8 lanes): B streamed once from the
 * caller's memory, no packing.
 *   y[j] = sum_p x[p] * B[p][j]   (B rows contiguous: 4 rows per pass over y)
 *   y[j] = sum_p x[p] * B[j][p]   (B transposed: a dot product per column)
 * Each y[j] of the rows form is the same chain of fused multiply-adds in p
 * order as at AVX-512, so the two give the same bits; the tails go
 * element by element with fmaf. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemv-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

/* 8 values of B's row at element j, widened to float32. */
MXP_INLINE __m256 load8(const void *row, size_t j, int kind)
{
    switch (kind) {
    case MXP_GEMV_BF16:
        return _mm256_castsi256_ps(_mm256_slli_epi32(
            _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)row + j))), 16));
    case MXP_GEMV_F16:
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)row + j)));
    case MXP_GEMV_E5M2: /* float16's top byte */
        return _mm256_cvtph_ps(_mm_slli_epi16(
            _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)((const uint8_t *)row + j))), 8));
    case MXP_GEMV_E4M3: { /* the sign-extended bits shifted by 7, bit 14 cleared: the value 2^-8 as float16 */
        const __m128i t = _mm_slli_epi16(
            _mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)((const uint8_t *)row + j))), 7);
        const __m128i nan = _mm_cmpeq_epi16(_mm_and_si128(t, _mm_set1_epi16(0x3f80)), _mm_set1_epi16(0x3f80));
        return _mm256_cvtph_ps(
            _mm_blendv_epi8(_mm_and_si128(t, _mm_set1_epi16((short)0xbfff)), _mm_set1_epi16(0x7e00), nan));
    }
    default:
        return _mm256_loadu_ps((const float *)row + j);
    }
}

/* One value of B's row at element j, widened to float32. */
MXP_INLINE float load1(const void *row, size_t j, int kind)
{
    uint16_t h;
    float f;
    switch (kind) {
    case MXP_GEMV_BF16: {
        memcpy(&h, (const uint16_t *)row + j, 2);
        const uint32_t u = (uint32_t)h << 16;
        memcpy(&f, &u, 4);
        return f;
    }
    case MXP_GEMV_F16:
        memcpy(&h, (const uint16_t *)row + j, 2);
        return _cvtsh_ss(h);
    case MXP_GEMV_E5M2:
        return _cvtsh_ss((unsigned short)(((const uint8_t *)row)[j] << 8));
    case MXP_GEMV_E4M3: {
        const unsigned b = ((const uint8_t *)row)[j];
        return (b & 0x7f) == 0x7f ? NAN : _cvtsh_ss((unsigned short)((b & 0x7f) << 7 | (b & 0x80) << 8));
    }
    default:
        memcpy(&f, (const float *)row + j, 4);
        return f;
    }
}

/* y += the R rows of B from p times x[p..], one pass over y (R a constant:
 * 8, 4 or 1); each y[j] takes the rows in order. */
MXP_INLINE void rows_pass(int R, size_t p, size_t n, const float *x, const unsigned char *b, size_t ld_bytes, float *y,
                          int kind)
{
    const size_t n8 = n / 8 * 8;
    const unsigned char *r[8];
    __m256 xv[8];
    for (int q = 0; q < R; q++) {
        r[q] = b + (p + (size_t)q) * ld_bytes;
        xv[q] = _mm256_set1_ps(x[p + (size_t)q]);
    }
    for (size_t j = 0; j < n8; j += 8) {
        __m256 acc = _mm256_loadu_ps(y + j);
        for (int q = 0; q < R; q++)
            acc = _mm256_fmadd_ps(xv[q], load8(r[q], j, kind), acc);
        _mm256_storeu_ps(y + j, acc);
    }
    for (size_t j = n8; j < n; j++) {
        float acc = y[j];
        for (int q = 0; q < R; q++)
            acc = fmaf(x[p + (size_t)q], load1(r[q], j, kind), acc);
        y[j] = acc;
    }
}

MXP_INLINE float hsum8(__m256 v)
{
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

#define MXP_DOTS_T float
#define MXP_DOTS_V __m256
#define MXP_DOTS_V_(op) _mm256_##op##_ps
#define MXP_DOTS_ROW const unsigned char *
#define MXP_DOTS_LOAD(row, p) load8(row, p, kind)
#define MXP_DOTS_HSUM hsum8
#define MXP_DOTS_LOAD1(row, p) load1(row, p, kind)
#define MXP_DOTS_FMA fmaf
#include "kernels/gemv-dots-template.h"
#include "kernels/gemv-f32-kinds.h"

void mxp_f32_gemv__avx2(int trans_b, int kind, size_t k, size_t n, const float *x, const void *b,
                           size_t ld_bytes, float *y)
{
    mxp_f32_gemv_by_kind(trans_b, kind, k, n, x, b, ld_bytes, y);
}
