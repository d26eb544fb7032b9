/* Matrix-vector products for M = 1 GEMMs (one token of a language model):
 * B is streamed once, straight from the caller's memory, no packing.
 *   y[j] = sum_p x[p] * B[p][j]   (B rows contiguous: 4 rows per pass)
 *   y[j] = sum_p x[p] * B[j][p]   (B transposed: 4 dot products per pass)
 * B is float32, bfloat16 or float16 (widened exactly in registers), x and y
 * float32; or all float64. */
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
    default:
        return _mm512_maskz_loadu_ps(m, (const float *)row + j);
    }
}

MXP_INLINE void rows_kernel(size_t k, size_t n, const float *x, const unsigned char *b, size_t ld_bytes, float *y,
                            int kind)
{
    for (size_t j = 0; j < n; j++)
        y[j] = 0;
    size_t p = 0;
    for (; p + 4 <= k; p += 4) {
        const unsigned char *r0 = b + p * ld_bytes, *r1 = r0 + ld_bytes, *r2 = r1 + ld_bytes, *r3 = r2 + ld_bytes;
        const __m512 x0 = _mm512_set1_ps(x[p]), x1 = _mm512_set1_ps(x[p + 1]);
        const __m512 x2 = _mm512_set1_ps(x[p + 2]), x3 = _mm512_set1_ps(x[p + 3]);
        for (size_t j = 0; j < n; j += 16) {
            __mmask16 m = n - j >= 16 ? 0xffff : (__mmask16)((1u << (n - j)) - 1);
            __m512 acc = _mm512_maskz_loadu_ps(m, y + j);
            acc = _mm512_fmadd_ps(x0, load16(r0, j, kind, m), acc);
            acc = _mm512_fmadd_ps(x1, load16(r1, j, kind, m), acc);
            acc = _mm512_fmadd_ps(x2, load16(r2, j, kind, m), acc);
            acc = _mm512_fmadd_ps(x3, load16(r3, j, kind, m), acc);
            _mm512_mask_storeu_ps(y + j, m, acc);
        }
    }
    for (; p < k; p++) {
        const __m512 xp = _mm512_set1_ps(x[p]);
        for (size_t j = 0; j < n; j += 16) {
            __mmask16 m = n - j >= 16 ? 0xffff : (__mmask16)((1u << (n - j)) - 1);
            __m512 acc = _mm512_fmadd_ps(xp, load16(b + p * ld_bytes, j, kind, m), _mm512_maskz_loadu_ps(m, y + j));
            _mm512_mask_storeu_ps(y + j, m, acc);
        }
    }
}

MXP_INLINE void dots_kernel(size_t k, size_t n, const float *x, const unsigned char *b, size_t ld_bytes, float *y,
                            int kind)
{
    for (size_t j = 0; j < n; j++) {
        const unsigned char *row = b + j * ld_bytes;
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
        size_t p = 0;
        for (; p + 32 <= k; p += 32) {
            acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + p), load16(row, p, kind, 0xffff), acc0);
            acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + p + 16), load16(row, p + 16, kind, 0xffff), acc1);
        }
        for (; p < k; p += 16) {
            __mmask16 m = k - p >= 16 ? 0xffff : (__mmask16)((1u << (k - p)) - 1);
            acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + p), load16(row, p, kind, m), acc0);
        }
        y[j] = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
    }
}

void mxp_gemv_f32acc__avx512f(int trans_b, int kind, size_t k, size_t n, const float *x, const void *b,
                              size_t ld_bytes, float *y)
{
    switch (kind) {
    case MXP_GEMV_BF16:
        if (trans_b)
            dots_kernel(k, n, x, b, ld_bytes, y, MXP_GEMV_BF16);
        else
            rows_kernel(k, n, x, b, ld_bytes, y, MXP_GEMV_BF16);
        break;
    case MXP_GEMV_F16:
        if (trans_b)
            dots_kernel(k, n, x, b, ld_bytes, y, MXP_GEMV_F16);
        else
            rows_kernel(k, n, x, b, ld_bytes, y, MXP_GEMV_F16);
        break;
    default:
        if (trans_b)
            dots_kernel(k, n, x, b, ld_bytes, y, MXP_GEMV_F32);
        else
            rows_kernel(k, n, x, b, ld_bytes, y, MXP_GEMV_F32);
        break;
    }
}

/* ---- float64: y = x B, 8 lanes, the same two shapes ------------------------ */

void mxp_gemv_f64__avx512f(int trans_b, size_t k, size_t n, const double *x, const double *b, size_t ldb, double *y)
{
    if (trans_b) { /* y[j] = dot(x, row j of B) */
        for (size_t j = 0; j < n; j++) {
            const double *row = b + j * ldb;
            __m512d acc0 = _mm512_setzero_pd(), acc1 = _mm512_setzero_pd();
            size_t p = 0;
            for (; p + 16 <= k; p += 16) {
                acc0 = _mm512_fmadd_pd(_mm512_loadu_pd(x + p), _mm512_loadu_pd(row + p), acc0);
                acc1 = _mm512_fmadd_pd(_mm512_loadu_pd(x + p + 8), _mm512_loadu_pd(row + p + 8), acc1);
            }
            for (; p < k; p += 8) {
                const __mmask8 m = k - p >= 8 ? 0xff : (__mmask8)((1u << (k - p)) - 1);
                acc0 = _mm512_fmadd_pd(_mm512_maskz_loadu_pd(m, x + p), _mm512_maskz_loadu_pd(m, row + p), acc0);
            }
            y[j] = _mm512_reduce_add_pd(_mm512_add_pd(acc0, acc1));
        }
        return;
    }
    for (size_t j = 0; j < n; j++)
        y[j] = 0;
    size_t p = 0;
    for (; p + 4 <= k; p += 4) { /* four rows of B per pass over y */
        const double *r0 = b + p * ldb, *r1 = r0 + ldb, *r2 = r1 + ldb, *r3 = r2 + ldb;
        const __m512d x0 = _mm512_set1_pd(x[p]), x1 = _mm512_set1_pd(x[p + 1]);
        const __m512d x2 = _mm512_set1_pd(x[p + 2]), x3 = _mm512_set1_pd(x[p + 3]);
        for (size_t j = 0; j < n; j += 8) {
            const __mmask8 m = n - j >= 8 ? 0xff : (__mmask8)((1u << (n - j)) - 1);
            __m512d acc = _mm512_maskz_loadu_pd(m, y + j);
            acc = _mm512_fmadd_pd(x0, _mm512_maskz_loadu_pd(m, r0 + j), acc);
            acc = _mm512_fmadd_pd(x1, _mm512_maskz_loadu_pd(m, r1 + j), acc);
            acc = _mm512_fmadd_pd(x2, _mm512_maskz_loadu_pd(m, r2 + j), acc);
            acc = _mm512_fmadd_pd(x3, _mm512_maskz_loadu_pd(m, r3 + j), acc);
            _mm512_mask_storeu_pd(y + j, m, acc);
        }
    }
    for (; p < k; p++) {
        const __m512d xp = _mm512_set1_pd(x[p]);
        for (size_t j = 0; j < n; j += 8) {
            const __mmask8 m = n - j >= 8 ? 0xff : (__mmask8)((1u << (n - j)) - 1);
            _mm512_mask_storeu_pd(y + j, m,
                                  _mm512_fmadd_pd(xp, _mm512_maskz_loadu_pd(m, b + p * ldb + j),
                                                  _mm512_maskz_loadu_pd(m, y + j)));
        }
    }
}

/* ---- int16 x int8 -> int32 (exact, modulo 2^32): vpmaddwd on pairs of k --- */

/* 32 int8 of a row at column j, sign-extended to int16 (masked tail). */
MXP_INLINE __m512i load32_s8(const int8_t *row, size_t j, __mmask32 m)
{
    return _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(m, row + j));
}

/* Rows p and p+1 (r1 NULL: zeros) times the pair (x[p], x[p+1]) added into
 * y's 32-column block at j, kept in the unpack order: lo holds columns
 * 8q+t, hi columns 8q+4+t of each 128-bit lane q (t = 0..3). */
MXP_INLINE void pair_pass(const int8_t *r0, const int8_t *r1, __m512i xx, size_t j, __mmask32 m, __m512i *lo,
                          __m512i *hi)
{
    const __m512i b0 = load32_s8(r0, j, m), b1 = r1 ? load32_s8(r1, j, m) : _mm512_setzero_si512();
    *lo = _mm512_add_epi32(*lo, _mm512_madd_epi16(_mm512_unpacklo_epi16(b0, b1), xx));
    *hi = _mm512_add_epi32(*hi, _mm512_madd_epi16(_mm512_unpackhi_epi16(b0, b1), xx));
}

MXP_INLINE __m512i pair_of(int16_t a, int16_t b)
{
    return _mm512_set1_epi32((int32_t)((uint32_t)(uint16_t)a | (uint32_t)(uint16_t)b << 16));
}

void mxp_gemv_s16s8__avx512f(int trans_b, size_t k, size_t n, const int16_t *x, const int8_t *b, size_t ldb,
                             int32_t *y)
{
    if (trans_b) { /* y[j] = dot(x, row j of B) */
        for (size_t j = 0; j < n; j++) {
            const int8_t *row = b + j * ldb;
            __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
            size_t p = 0;
            for (; p + 64 <= k; p += 64) {
                acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(_mm512_loadu_si512(x + p), load32_s8(row, p, ~0u)));
                acc1 = _mm512_add_epi32(acc1,
                                        _mm512_madd_epi16(_mm512_loadu_si512(x + p + 32), load32_s8(row, p + 32, ~0u)));
            }
            for (; p < k; p += 32) {
                const __mmask32 m = k - p >= 32 ? ~0u : (__mmask32)((1u << (k - p)) - 1);
                acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(_mm512_maskz_loadu_epi16(m, x + p), load32_s8(row, p, m)));
            }
            y[j] = _mm512_reduce_add_epi32(_mm512_add_epi32(acc0, acc1));
        }
        return;
    }
    /* y (room for n rounded up to 32) accumulates in the unpack order, four
     * rows of B per pass, and is put in order at the end */
    const size_t n32 = (n + 31) / 32 * 32;
    memset(y, 0, n32 * sizeof *y);
    size_t p = 0;
    for (; p < k; p += 4) {
        const size_t rows = k - p < 4 ? k - p : 4;
        const int8_t *r0 = b + p * ldb, *r1 = rows > 1 ? r0 + ldb : NULL;
        const int8_t *r2 = rows > 2 ? r0 + 2 * ldb : NULL, *r3 = rows > 3 ? r0 + 3 * ldb : NULL;
        const __m512i x01 = pair_of(x[p], rows > 1 ? x[p + 1] : 0);
        const __m512i x23 = pair_of(rows > 2 ? x[p + 2] : 0, rows > 3 ? x[p + 3] : 0);
        for (size_t j = 0; j < n; j += 32) {
            const __mmask32 m = n - j >= 32 ? ~0u : (__mmask32)((1u << (n - j)) - 1);
            __m512i lo = _mm512_loadu_si512(y + j), hi = _mm512_loadu_si512(y + j + 16);
            pair_pass(r0, r1, x01, j, m, &lo, &hi);
            if (r2)
                pair_pass(r2, r3, x23, j, m, &lo, &hi);
            _mm512_storeu_si512(y + j, lo);
            _mm512_storeu_si512(y + j + 16, hi);
        }
    }
    for (size_t j = 0; j < n32; j += 32) {
        int32_t out[32];
        for (int q = 0; q < 4; q++)
            for (int t = 0; t < 4; t++) {
                out[8 * q + t] = y[j + 4 * q + t];
                out[8 * q + 4 + t] = y[j + 16 + 4 * q + t];
            }
        memcpy(y + j, out, sizeof out);
    }
}
