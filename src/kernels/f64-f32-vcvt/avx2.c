/* float64 -> float32 with AVX2: nearest even, toward zero, up and down by
 * vcvtpd2ps in that MXCSR rounding (_hw, cvt-f64-avx2.h); the plain kernel
 * adds nearest away and stochastic rounding, from the truncation (below).
 * Tails through a zero-padded buffer; forward, so in-place narrowing
 * works. */
#include <immintrin.h>
#include <string.h>

#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f64-avx2.h"

void mxp_f64_f32_vcvt__avx2_hw(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f64_by_mode_avx2(dst, src, n, p, F64_TO_F32);
}

/* ---- float64 -> float32, nearest away and stochastic -----------------------
 * h = the float32 truncation (vcvtpd2ps toward zero); its next value up in
 * magnitude is h's bits + 1 (carrying into the exponent, or onto infinity
 * past max, where the ulp is 2^104).  rem = |x| - |h| and ulp = |next| - |h| are exact in float64,
 * and so is frac * 2^32 = rem / ulp * 2^32 (ulp a power of two): away
 * rounds up iff 2 rem >= ulp, stochastic iff r < floor(frac * 2^32), both
 * compared in float64 exactly.  inf and NaN keep vcvtpd2ps's result (rem
 * is NaN there: no compare holds). */
MXP_INLINE __m256d absd(__m256d v)
{
    return _mm256_and_pd(v, _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll)));
}

/* all-ones 32-bit lanes where |x| rounds up, for 4 doubles (the low 4 lanes of the result) */
MXP_INLINE __m128i up4(__m256d x, __m128 h, __m128i r, mxp_rounding mode)
{
    const __m128i hb = _mm_and_si128(_mm_castps_si128(h), _mm_set1_epi32(0x7fffffff));
    const __m256d hd = _mm256_cvtps_pd(_mm_castsi128_ps(hb));
    const __m256d nd = _mm256_cvtps_pd(_mm_castsi128_ps(_mm_add_epi32(hb, _mm_set1_epi32(1))));
    const __m256d rem = _mm256_sub_pd(absd(x), hd);
    /* at max, the next value is infinity: its ulp is 2^104 */
    const __m256d ulp = _mm256_blendv_pd(_mm256_sub_pd(nd, hd), _mm256_set1_pd(0x1p104),
                                         _mm256_cmp_pd(hd, _mm256_set1_pd(0x1.fffffep127), _CMP_EQ_OQ));
    __m256d up;
    if (mode == MXP_ROUND_NEAREST_AWAY) {
        up = _mm256_cmp_pd(_mm256_add_pd(rem, rem), ulp, _CMP_GE_OQ);
    } else {
        /* rem / ulp * 2^32 by a multiply: 2^32 / ulp, ulp a power of two (2^-149 .. 2^104) */
        const __m256i inv = _mm256_sub_epi64(_mm256_set1_epi64x((long long)((2046ull + 32) << 52)), _mm256_castpd_si256(ulp));
        const __m256d f = _mm256_floor_pd(_mm256_mul_pd(rem, _mm256_castsi256_pd(inv)));
        const __m256d rd = _mm256_add_pd(_mm256_cvtepi32_pd(_mm_xor_si128(r, _mm_set1_epi32((int)0x80000000u))),
                                         _mm256_set1_pd(2147483648.0));
        up = _mm256_cmp_pd(rd, f, _CMP_LT_OQ);
    }
    const __m256i u = _mm256_castpd_si256(up);
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(u, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}

MXP_INLINE __m256i f32_8(const double *s, mxp_rounding mode, int saturate, __m256i r)
{
    const __m256d x0 = _mm256_loadu_pd(s), x1 = _mm256_loadu_pd(s + 4);
    const __m128 h0 = _mm256_cvtpd_ps(x0), h1 = _mm256_cvtpd_ps(x1);
    const __m128i u0 = up4(x0, h0, _mm256_castsi256_si128(r), mode);
    const __m128i u1 = up4(x1, h1, _mm256_extracti128_si256(r, 1), mode);
    __m256i h = _mm256_castps_si256(_mm256_set_m128(h1, h0));
    h = _mm256_sub_epi32(h, _mm256_set_m128i(u1, u0)); /* + 1 on the magnitude's bits */
    if (saturate) { /* +-inf - 1 ulp = +-max */
        __m256i inf = _mm256_cmpeq_epi32(_mm256_and_si256(h, MXP_V8(0x7fffffff)), MXP_V8(0x7f800000));
        h = _mm256_add_epi32(h, inf);
    }
    return h;
}

MXP_INLINE void f32_full(float *d, const double *s, mxp_rounding mode, int saturate, __m256i idx, mxp_sr_key key,
                         int stream)
{
    __m256i r = mode == MXP_ROUND_STOCHASTIC ? mxp_sr_mix_avx2(idx, key) : _mm256_setzero_si256();
    mxp_store256_avx2(d, f32_8(s, mode, saturate, r), stream);
}

MXP_INLINE void f32_step(float *d, const double *s, size_t count, mxp_rounding mode, int saturate, __m256i idx,
                         mxp_sr_key key, int stream)
{
    if (count == 8) {
        f32_full(d, s, mode, saturate, idx, key, stream);
        return;
    }
    double in[8] = { 0 };
    float out[8];
    memcpy(in, s, count * 8);
    f32_full(out, in, mode, saturate, idx, key, 0);
    memcpy(d, out, count * 4);
}

MXP_INLINE void f32_loop(float *d, const double *s, size_t n, const mxp_cvt_params *p, mxp_rounding mode)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const mxp_sr_key key = mxp_sr_key_for(p->seed, p->index0);
    const __m256i idx = mxp_sr_index_avx2(p->index0);
    size_t i = 0;
    const int stream = mxp_streams(n * 12) && (uintptr_t)d % 4 == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)d % 32) % 32) / 4;
        head = head < n ? head : n;
        if (head) {
            f32_step(d, s, head, mode, saturate, idx, key, 0);
            i = head;
        }
    }
    for (; i + 8 <= n; i += 8) {
        _mm_prefetch((const char *)(s + i + 128), _MM_HINT_T0);
        f32_step(d + i, s + i, 8, mode, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key, stream);
    }
    if (i < n)
        f32_step(d + i, s + i, n - i, mode, saturate, _mm256_add_epi32(idx, MXP_V8(i)), key, 0);
    if (stream)
        _mm_sfence();
}

void mxp_f64_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    if (p->rounding != MXP_ROUND_NEAREST_AWAY && p->rounding != MXP_ROUND_STOCHASTIC) {
        mxp_f64_by_mode_avx2(dst, src, n, p, F64_TO_F32);
        return;
    }
    const mxp_fpenv env = mxp_fpenv_enter();
    const unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | 0x6000u); /* toward zero, for vcvtpd2ps (the rest is exact) */
    if (p->rounding == MXP_ROUND_NEAREST_AWAY)
        f32_loop(dst, src, n, p, MXP_ROUND_NEAREST_AWAY);
    else
        f32_loop(dst, src, n, p, MXP_ROUND_STOCHASTIC);
    _mm_setcsr((csr & ~(unsigned)MXP_MXCSR_FLAGS) | (_mm_getcsr() & MXP_MXCSR_FLAGS));
    mxp_fpenv_leave(env);
}
