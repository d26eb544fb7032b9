/* float32 -> bfloat16, round to nearest even, with AVX512_BF16's
 * vcvtne2ps2bf16.  The instruction reads float32 subnormals as zero; a
 * vector holding one is converted by the integer path of cvt-round-avx512.h
 * instead, so results equal the reference.  Its NaN result, (x >> 16) | 0x40,
 * is the reference's payload policy. */
#include "kernels/cvt-kernels.h"
#include "kernels/cvt-round-avx512.h"

static const mxp_narrow_fmt bf16_fmt = { 16, 7, 127, 1, 0 };

/* Float32 subnormal lanes (exponent field 0, not zero). */
MXP_INLINE __mmask16 subnormal_lanes(__m512i x)
{
    return _mm512_testn_epi32_mask(x, _mm512_set1_epi32(0x7f800000)) &
           _mm512_test_epi32_mask(x, _mm512_set1_epi32(0x7fffffff));
}

/* 32 lanes: x0 gives the low 16 results, x1 the high 16. */
MXP_INLINE __m512i bf16x32(__m512i x0, __m512i x1, int saturate)
{
    __m512i r;
    if (subnormal_lanes(x0) | subnormal_lanes(x1)) {
        __m512i zero = _mm512_setzero_si512();
        __m256i lo = _mm512_cvtepi32_epi16(mxp_f32_to_narrow_avx512(x0, bf16_fmt, MXP_ROUND_NEAREST_EVEN, 0, zero));
        __m256i hi = _mm512_cvtepi32_epi16(mxp_f32_to_narrow_avx512(x1, bf16_fmt, MXP_ROUND_NEAREST_EVEN, 0, zero));
        r = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
    } else {
        r = (__m512i)_mm512_cvtne2ps_pbh(_mm512_castsi512_ps(x1), _mm512_castsi512_ps(x0));
    }
    if (saturate) {
        __mmask32 inf = _mm512_cmpeq_epi16_mask(_mm512_and_si512(r, _mm512_set1_epi16(0x7fff)), _mm512_set1_epi16(0x7f80));
        r = _mm512_mask_sub_epi16(r, inf, r, _mm512_set1_epi16(1)); /* +-inf - 1 ulp = +-max */
    }
    return r;
}

void mxp_f32_bf16_vcvt__avx512bf16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const float *s = src;
    uint16_t *d = dst;
    size_t i = 0;
    int stream = n * 6 >= MXP_STREAM_BYTES && (uintptr_t)dst % 2 == 0;
    if (stream) {
        size_t head = ((64 - (uintptr_t)dst % 64) % 64) / 2;
        if (head) {
            __mmask32 mask = (__mmask32)((1ull << head) - 1);
            __m512i x0 = _mm512_maskz_loadu_epi32((__mmask16)mask, s);
            __m512i x1 = _mm512_maskz_loadu_epi32((__mmask16)(mask >> 16), s + 16);
            _mm512_mask_storeu_epi16(d, mask, bf16x32(x0, x1, saturate));
            i = head;
        }
    }
    for (; i + 32 <= n; i += 32) {
        __m512i r = bf16x32(_mm512_loadu_si512((const void *)(s + i)), _mm512_loadu_si512((const void *)(s + i + 16)),
                            saturate);
        if (stream)
            _mm512_stream_si512((__m512i *)(d + i), r);
        else
            _mm512_storeu_si512((void *)(d + i), r);
    }
    if (i < n) {
        __mmask32 mask = (__mmask32)((1ull << (n - i)) - 1);
        __m512i x0 = _mm512_maskz_loadu_epi32((__mmask16)mask, s + i);
        __m512i x1 = _mm512_maskz_loadu_epi32((__mmask16)(mask >> 16), s + i + 16);
        _mm512_mask_storeu_epi16(d + i, mask, bf16x32(x0, x1, saturate));
    }
    if (stream)
        _mm_sfence();
}
