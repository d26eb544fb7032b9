/* int16 x int8 -> int32 matrix-vector products for the integer GEMM's M = 1
 * (exact, modulo 2^32): vpmaddwd on pairs of k, B streamed once from the
 * caller's memory. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemv-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

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

void mxp_s16s8_gemv__avx512f(int trans_b, size_t k, size_t n, const int16_t *x, const int8_t *b, size_t ldb,
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
