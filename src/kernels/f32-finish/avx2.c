/* float32 GEMM sums plus a bias into float32 or bfloat16 C, AVX2: eight
 * sums widened to two float64 vectors, the bias added (the twin's operand
 * order), then vcvtpd2ps (float32, nearest even in the library's MXCSR) or,
 * for bfloat16, mxp_f64_to_bf16_rne's steps on eight lanes: the float32
 * nearest, stepped toward zero where it lies beyond the sum, its last bit
 * set where inexact (rounded to odd), then nearest even to bfloat16.  The
 * tail through a buffer.  See finish-kernels.h. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cvt-round-avx2.h"
#include "kernels/finish-kernels.h"

/* A 4 x 64-bit compare mask of each of two vectors as 8 x 32-bit lanes. */
MXP_INLINE __m256i masks32(__m256d m0, __m256d m1)
{
    const __m256i sel = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    return _mm256_blend_epi32(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(m0), sel),
                              _mm256_permutevar8x32_epi32(_mm256_castpd_si256(m1), sel), 0xf0);
}

/* Eight results from src (all eight read and written: the caller pads). */
MXP_INLINE void finish8(void *dst, int bf16, const float *src, const double *bias, int per_col)
{
    const __m256 s = _mm256_loadu_ps(src);
    __m256d t0 = _mm256_cvtps_pd(_mm256_castps256_ps128(s)), t1 = _mm256_cvtps_pd(_mm256_extractf128_ps(s, 1));
    if (bias) {
        t0 = _mm256_add_pd(t0, per_col ? _mm256_loadu_pd(bias) : _mm256_set1_pd(bias[0]));
        t1 = _mm256_add_pd(t1, per_col ? _mm256_loadu_pd(bias + 4) : _mm256_set1_pd(bias[0]));
    }
    const __m128 h0 = _mm256_cvtpd_ps(t0), h1 = _mm256_cvtpd_ps(t1);
    if (!bf16) {
        _mm256_storeu_ps(dst, _mm256_set_m128(h1, h0));
        return;
    }
    const __m256d d0 = _mm256_cvtps_pd(h0), d1 = _mm256_cvtps_pd(h1);
    const __m256d abs = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
    const __m256i inexact = masks32(_mm256_cmp_pd(d0, t0, _CMP_NEQ_UQ), _mm256_cmp_pd(d1, t1, _CMP_NEQ_UQ));
    const __m256i away = masks32(_mm256_cmp_pd(_mm256_and_pd(d0, abs), _mm256_and_pd(t0, abs), _CMP_GT_OQ),
                                 _mm256_cmp_pd(_mm256_and_pd(d1, abs), _mm256_and_pd(t1, abs), _CMP_GT_OQ));
    __m256i u = _mm256_castps_si256(_mm256_set_m128(h1, h0));
    u = _mm256_or_si256(_mm256_add_epi32(u, away), _mm256_and_si256(inexact, MXP_V8(1))); /* to odd */
    const __m256i r = mxp_f32_to_bf16_avx2(u, MXP_ROUND_NEAREST_EVEN, 0, _mm256_setzero_si256());
    _mm_storeu_si128((__m128i *)dst, _mm256_castsi256_si128(mxp_pack16_avx2(r, r)));
}

void mxp_f32_finish__avx2(void *dst, int bf16, const float *src, size_t len, const double *bias, int per_col)
{
    const size_t size = bf16 ? 2 : 4;
    size_t q = 0;
    for (; q + 8 <= len; q += 8)
        finish8((unsigned char *)dst + q * size, bf16, src + q, bias ? bias + (per_col ? q : 0) : NULL, per_col);
    if (q < len) { /* the tail through buffers: the same arithmetic on zeros past len */
        float s[8] = { 0 };
        double b[8] = { 0 };
        unsigned char out[32];
        memcpy(s, src + q, (len - q) * sizeof(float));
        if (bias && per_col)
            memcpy(b, bias + q, (len - q) * sizeof(double));
        else if (bias)
            b[0] = bias[0];
        finish8(out, bf16, s, bias ? b : NULL, per_col);
        memcpy((unsigned char *)dst + q * size, out, (len - q) * size);
    }
}

/* float32 C plus a float32 bias, clamped: eight lanes, both masks from the
 * sum (lo blended last: it wins, as in the twin's conditional); the tail
 * by the twin. */
void mxp_f32_finish_bias__avx2(float *dst, const float *src, const float *bias, size_t len, int clamp, float lo, float hi)
{
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    size_t q = 0;
    for (; q + 8 <= len; q += 8) {
        __m256 v = _mm256_add_ps(_mm256_loadu_ps(src + q), _mm256_loadu_ps(bias + q));
        if (clamp) {
            const __m256 below = _mm256_cmp_ps(v, vlo, _CMP_LT_OQ), above = _mm256_cmp_ps(v, vhi, _CMP_GT_OQ);
            v = _mm256_blendv_ps(_mm256_blendv_ps(v, vhi, above), vlo, below);
        }
        _mm256_storeu_ps(dst + q, v);
    }
    mxp_f32_finish_bias__scalar(dst + q, src + q, bias + q, len - q, clamp, lo, hi);
}
