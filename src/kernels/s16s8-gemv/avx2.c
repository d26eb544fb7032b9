/* int16 x int8 -> int32 matrix-vector products for the integer GEMM's M = 1
 * (exact, modulo 2^32), AVX2: as avx512f.c, vpmaddwd on pairs of k, B
 * streamed once from the caller's memory, 16 columns (or 16 k) a vector;
 * the columns or k left over go through a zero-padded copy or one at a
 * time (no masked byte loads in AVX2). */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/gemv-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

/* 16 int8 at p, sign-extended to int16. */
MXP_INLINE __m256i load16_s8(const int8_t *p)
{
    return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* Rows r0 and r1 (16 int8 each) times the pair xx added into a 16-column
 * block of y kept in the unpack order: lo holds columns 8q+t, hi columns
 * 8q+4+t of each 128-bit lane q (t = 0..3). */
MXP_INLINE void pair_pass(const int8_t *r0, const int8_t *r1, __m256i xx, __m256i *lo, __m256i *hi)
{
    const __m256i b0 = load16_s8(r0), b1 = load16_s8(r1);
    *lo = _mm256_add_epi32(*lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(b0, b1), xx));
    *hi = _mm256_add_epi32(*hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(b0, b1), xx));
}

MXP_INLINE __m256i pair_of(int16_t a, int16_t b)
{
    return _mm256_set1_epi32((int32_t)((uint32_t)(uint16_t)a | (uint32_t)(uint16_t)b << 16));
}

static int32_t wrap_s32(uint32_t s)
{
    return s <= INT32_MAX ? (int32_t)s : -(int32_t)~s - 1;
}

/* y[j] = dot(x, row j of B). */
static void dots(size_t k, size_t n, const int16_t *x, const int8_t *b, size_t ldb, int32_t *y)
{
    for (size_t j = 0; j < n; j++) {
        const int8_t *row = b + j * ldb;
        __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
        size_t p = 0;
        for (; p + 32 <= k; p += 32) {
            const __m256i x0 = _mm256_loadu_si256((const __m256i *)(const void *)(x + p));
            const __m256i x1 = _mm256_loadu_si256((const __m256i *)(const void *)(x + p + 16));
            acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(x0, load16_s8(row + p)));
            acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(x1, load16_s8(row + p + 16)));
        }
        const __m256i acc = _mm256_add_epi32(acc0, acc1);
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
        uint32_t sum = (uint32_t)_mm_cvtsi128_si32(s);
        for (; p < k; p++)
            sum += (uint32_t)(x[p] * row[p]);
        y[j] = wrap_s32(sum);
    }
}

void mxp_s16s8_gemv__avx2(int trans_b, size_t k, size_t n, const int16_t *x, const int8_t *b, size_t ldb, int32_t *y)
{
    if (trans_b) {
        dots(k, n, x, b, ldb, y);
        return;
    }
    /* y (room for n rounded up to 32) accumulates in the unpack order, four
     * rows of B per pass, and is put in order at the end */
    const size_t n16 = (n + 15) / 16 * 16, whole = n / 16 * 16;
    memset(y, 0, n16 * sizeof *y);
    for (size_t p = 0; p < k; p += 4) {
        const size_t rows = k - p < 4 ? k - p : 4;
        const int8_t *r[4]; /* past k: row p again, times x = 0 */
        for (size_t i = 0; i < 4; i++)
            r[i] = b + (p + (i < rows ? i : 0)) * ldb;
        const __m256i x01 = pair_of(x[p], rows > 1 ? x[p + 1] : 0);
        const __m256i x23 = pair_of(rows > 2 ? x[p + 2] : 0, rows > 3 ? x[p + 3] : 0);
        for (size_t j = 0; j < whole; j += 16) {
            __m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)(y + j));
            __m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(y + j + 8));
            pair_pass(r[0] + j, r[1] + j, x01, &lo, &hi);
            pair_pass(r[2] + j, r[3] + j, x23, &lo, &hi);
            _mm256_storeu_si256((__m256i *)(void *)(y + j), lo);
            _mm256_storeu_si256((__m256i *)(void *)(y + j + 8), hi);
        }
        if (whole < n) { /* the last columns, zero-padded to 16 */
            int8_t t[4][16] = { { 0 } };
            for (size_t i = 0; i < rows; i++)
                memcpy(t[i], r[i] + whole, n - whole);
            __m256i lo = _mm256_loadu_si256((const __m256i *)(const void *)(y + whole));
            __m256i hi = _mm256_loadu_si256((const __m256i *)(const void *)(y + whole + 8));
            pair_pass(t[0], t[1], x01, &lo, &hi);
            pair_pass(t[2], t[3], x23, &lo, &hi);
            _mm256_storeu_si256((__m256i *)(void *)(y + whole), lo);
            _mm256_storeu_si256((__m256i *)(void *)(y + whole + 8), hi);
        }
    }
    for (size_t j = 0; j < n16; j += 16) {
        int32_t out[16];
        for (int q = 0; q < 2; q++)
            for (int t = 0; t < 4; t++) {
                out[8 * q + t] = y[j + 4 * q + t];
                out[8 * q + 4 + t] = y[j + 8 + 4 * q + t];
            }
        memcpy(y + j, out, sizeof out);
    }
}
