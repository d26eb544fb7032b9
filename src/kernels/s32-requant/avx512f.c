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

/* mxp_s32_requant_f64__scalar on 8 float64 lanes: the products exact
 * (checked below 2^53); for int8/uint8 C, t clamped into [lo - zp, hi -
 * zp], converted to int32 rounding to nearest even, + zp, vpmovdb. */
MXP_INLINE size_t row_f64(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    const __m512d alpha = _mm512_set1_pd(p->alpha), big = _mm512_set1_pd(0x1p53);
    const __m512d clo = _mm512_set1_pd(p->clamp_lo), chi = _mm512_set1_pd(p->clamp_hi), zero = _mm512_setzero_pd();
    const __m512d qlo = _mm512_set1_pd((double)p->lo - p->zp), qhi = _mm512_set1_pd((double)p->hi - p->zp);
    const __m256i z = _mm256_set1_epi32(p->zp);
    __m512d mv = _mm512_set1_pd(p->m[0]), pv = _mm512_set1_pd(p->p[0]);
    __m512d bv = _mm512_set1_pd(p->bias ? p->bias[0] : 0);
    for (size_t q = 0; q < len; q += 8) {
        const __mmask8 k = len - q >= 8 ? 0xff : (__mmask8)((1u << (len - q)) - 1);
        if (p->per_col) {
            mv = _mm512_maskz_loadu_pd(k, p->m + q);
            pv = _mm512_maskz_loadu_pd(k, p->p + q);
        }
        const __m512d t0 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm256_maskz_loadu_epi32(k, acc + q)), mv);
        if (_mm512_cmp_pd_mask(_mm512_abs_pd(t0), big, _CMP_NLT_UQ) & k)
            return q;
        __m512d t = _mm512_mul_pd(_mm512_mul_pd(t0, pv), alpha);
        if (p->bias) {
            if (p->bias_per_col)
                bv = _mm512_maskz_loadu_pd(k, p->bias + q);
            t = _mm512_add_pd(t, bv);
        }
        if (p->relu)
            t = _mm512_max_pd(t, zero);
        if (p->clamp)
            t = _mm512_min_pd(_mm512_max_pd(t, clo), chi);
        if (p->f32) {
            _mm256_mask_storeu_ps(dst + 4 * q, k, _mm512_cvtpd_ps(t));
            continue;
        }
        /* clamped into [lo - zp, hi - zp] first (integer bounds: the same
           codes as saturating after the rounding), rounded to int32 */
        t = _mm512_min_pd(_mm512_max_pd(t, qlo), qhi);
        const __m256i v = _mm512_cvt_roundpd_epi32(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_mask_storeu_epi8(dst + q, k, _mm256_cvtepi32_epi8(_mm256_add_epi32(v, z)));
    }
    return len;
}

size_t mxp_s32_requant_f64__avx512f(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    return mxp_s32_requant_f64_rows(row_f64, dst, acc, len, p);
}
