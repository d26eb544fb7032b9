/* The reference's arithmetic on 8 int64 lanes: vpmuldq for acc * m,
 * variable shifts for the floor and the remainder, the mode's increment as
 * a mask, vpmovqb for the bytes. */
#include <immintrin.h>
#include <stdbool.h>

#include "kernels/requant-kernels.h"
#include "mxp/convert.h"

#define MXP_INLINE static inline __attribute__((always_inline))

MXP_INLINE __m512i requant8(__m512i acc, __m512i m, __m512i s, __m512i zp, __m512i lo, __m512i hi, int mode)
{
    const __m512i one = _mm512_set1_epi64(1), bias = _mm512_set1_epi64((int64_t)1 << 62);
    const __m512i p = _mm512_mul_epi32(acc, m); /* signed low halves: |p| < 2^55 */
    const __m512i u = _mm512_add_epi64(p, bias);
    const __m512i rem = _mm512_and_si512(u, _mm512_sub_epi64(_mm512_sllv_epi64(one, s), one));
    const __m512i half = _mm512_sllv_epi64(one, _mm512_sub_epi64(s, one));
    const __m512i fl = _mm512_sub_epi64(_mm512_srlv_epi64(u, s), _mm512_srlv_epi64(bias, s));
    __mmask8 inc = 0;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        inc = _mm512_cmpgt_epu64_mask(rem, half) |
              (_mm512_cmpeq_epu64_mask(rem, half) & _mm512_test_epi64_mask(fl, one));
        break;
    case MXP_ROUND_NEAREST_AWAY:
        inc = _mm512_cmpgt_epu64_mask(rem, half) |
              (_mm512_cmpeq_epu64_mask(rem, half) & _mm512_cmpgt_epi64_mask(p, _mm512_setzero_si512()));
        break;
    case MXP_ROUND_TOWARD_ZERO:
        inc = _mm512_test_epi64_mask(rem, rem) & _mm512_cmplt_epi64_mask(p, _mm512_setzero_si512());
        break;
    case MXP_ROUND_UP:
        inc = _mm512_test_epi64_mask(rem, rem);
        break;
    default:
        break;
    }
    const __m512i x = _mm512_add_epi64(_mm512_mask_add_epi64(fl, inc, fl, one), zp);
    return _mm512_min_epi64(_mm512_max_epi64(x, lo), hi);
}

MXP_INLINE void run(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m, const int32_t *shift, int per_col,
                    int32_t zp, int32_t lo, int32_t hi, int mode)
{
    const __m512i z = _mm512_set1_epi64(zp), l = _mm512_set1_epi64(lo), h = _mm512_set1_epi64(hi);
    __m512i mv = _mm512_set1_epi64(m[0]), sv = _mm512_set1_epi64(shift[0]);
    size_t q = 0;
    for (; q + 8 <= len; q += 8) {
        if (per_col) {
            mv = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(m + q)));
            sv = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(shift + q)));
        }
        const __m512i a = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(acc + q)));
        _mm_storel_epi64((__m128i *)(void *)(dst + q), _mm512_cvtepi64_epi8(requant8(a, mv, sv, z, l, h, mode)));
    }
    if (q < len) {
        const __mmask8 k = (__mmask8)((1u << (len - q)) - 1);
        if (per_col) {
            mv = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(k, m + q));
            sv = _mm512_cvtepi32_epi64(_mm256_mask_loadu_epi32(_mm256_set1_epi32(1), k, shift + q));
        }
        const __m512i a = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(k, acc + q));
        _mm512_mask_cvtepi64_storeu_epi8(dst + q, k, requant8(a, mv, sv, z, l, h, mode));
    }
}

void mxp_s32_requant__avx512f(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m, const int32_t *shift,
                              int per_col, int32_t zp, int32_t lo, int32_t hi, int mode)
{
    switch (mode) { /* one loop per mode, the switch hoisted */
    case MXP_ROUND_NEAREST_EVEN: run(dst, acc, len, m, shift, per_col, zp, lo, hi, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: run(dst, acc, len, m, shift, per_col, zp, lo, hi, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: run(dst, acc, len, m, shift, per_col, zp, lo, hi, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: run(dst, acc, len, m, shift, per_col, zp, lo, hi, MXP_ROUND_UP); break;
    default: run(dst, acc, len, m, shift, per_col, zp, lo, hi, MXP_ROUND_DOWN); break;
    }
}
