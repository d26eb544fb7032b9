/* float64 -> float32 with AVX-512F: every rounding mode by the integer
 * method (cvt-f64-avx512.h); nearest even, toward zero, up and down faster
 * by vcvtpd2ps with the mode embedded (_hw). */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-f64-avx512.h"

void mxp_f64_f32_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    mxp_f64_by_mode_avx512(dst, src, n, p, (mxp_f64_fmt){ 32, 23, 127, 1 });
}

/* float64 -> float32 in the IEEE modes: vcvtpd2ps with the mode embedded
 * (correctly rounded, NaN payloads as the reference's policy). */
MXP_INLINE __m256 f64_f32_hw8(__m512i x, mxp_rounding mode, int saturate)
{
    __m512d d = _mm512_castsi512_pd(x);
    __m256 r;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: r = _mm512_cvt_roundpd_ps(d, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_TOWARD_ZERO: r = _mm512_cvt_roundpd_ps(d, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); break;
    case MXP_ROUND_UP: r = _mm512_cvt_roundpd_ps(d, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); break;
    default: r = _mm512_cvt_roundpd_ps(d, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); break;
    }
    if (saturate) {
        __m256i b = _mm256_castps_si256(r);
        __mmask8 inf = _mm256_cmpeq_epi32_mask(_mm256_and_si256(b, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
        r = _mm256_castsi256_ps(_mm256_mask_sub_epi32(b, inf, b, _mm256_set1_epi32(1)));
    }
    return r;
}

MXP_INLINE void f32_hw_loop(float *d, const double *s, size_t n, const mxp_cvt_params *p, mxp_rounding mode)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    size_t i = 0;
    int stream = mxp_streams(n * 12) && (uintptr_t)d % 4 == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)d % 32) % 32) / 4;
        head = head < n ? head : n;
        if (head) {
            __mmask8 mask = (__mmask8)((1u << head) - 1);
            _mm256_mask_storeu_ps(d, mask, f64_f32_hw8(_mm512_maskz_loadu_epi64(mask, s), mode, saturate));
            i = head;
        }
    }
    for (; i + 8 <= n; i += 8) {
        __m256 r = f64_f32_hw8(_mm512_loadu_si512((const void *)(s + i)), mode, saturate);
        if (stream)
            _mm256_stream_ps(d + i, r);
        else
            _mm256_storeu_ps(d + i, r);
    }
    if (i < n) {
        __mmask8 mask = (__mmask8)((1u << (n - i)) - 1);
        _mm256_mask_storeu_ps(d + i, mask, f64_f32_hw8(_mm512_maskz_loadu_epi64(mask, s + i), mode, saturate));
    }
    if (stream)
        _mm_sfence();
}

void mxp_f64_f32_vcvt__avx512f_hw(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const mxp_fpenv env = mxp_fpenv_enter(); /* no flush of float32 subnormal results */
    switch (p->rounding) {
    case MXP_ROUND_NEAREST_EVEN: f32_hw_loop(dst, src, n, p, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_TOWARD_ZERO: f32_hw_loop(dst, src, n, p, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: f32_hw_loop(dst, src, n, p, MXP_ROUND_UP); break;
    default: f32_hw_loop(dst, src, n, p, MXP_ROUND_DOWN); break;
    }
    mxp_fpenv_leave(env);
}
