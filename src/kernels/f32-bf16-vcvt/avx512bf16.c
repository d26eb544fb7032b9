/* float32 -> bfloat16, round to nearest even, with AVX512_BF16's
 * vcvtne2ps2bf16.  The instruction reads float32 subnormals as zero; those
 * lanes take the integer rounding of bf16-round-avx512.h instead, so
 * results equal the reference.  Its NaN result, (x >> 16) | 0x40,
 * is the reference's payload policy. */
#include "kernels/cvt-kernels.h"
#include "kernels/bf16-round-avx512.h"
#include "kernels/stream-loop.h"

/* 16 lanes (mxp_f32_to_bf16_rne_hw_avx512: subnormal lanes are blended
 * in from the integer rounding behind a branch; with one subnormal in 61
 * elements, mxp bench convert's data, a third of the vectors hold one:
 * 0.075 ns an element in cache on an Intel Xeon against 0.065 without;
 * the former branch to the generic integer path cost 0.187). */
MXP_INLINE __m256i bf16x16(__m512i x, int saturate)
{
    __m256i r = mxp_f32_to_bf16_rne_hw_avx512(_mm512_castsi512_ps(x));
    if (saturate) {
        __mmask16 inf = _mm256_cmpeq_epi16_mask(_mm256_and_si256(r, _mm256_set1_epi16(0x7fff)), _mm256_set1_epi16(0x7f80));
        r = _mm256_mask_sub_epi16(r, inf, r, _mm256_set1_epi16(1)); /* +-inf - 1 ulp = +-max */
    }
    return r;
}

void mxp_f32_bf16_vcvt__avx512bf16(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const float *s = src;
    uint16_t *d = dst;
    size_t i = 0;
    int stream = mxp_streams(n * 6) && (uintptr_t)dst % 2 == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)dst % 32) % 32) / 2;
        if (head) {
            __mmask16 mask = (__mmask16)((1u << head) - 1);
            _mm256_mask_storeu_epi16(d, mask, bf16x16(_mm512_maskz_loadu_epi32(mask, s), saturate));
            i = head;
        }
    }
    for (; i + 16 <= n; i += 16) {
        if (stream)
            mxp_stream_prefetch(s + i, 64);
        __m256i r = bf16x16(_mm512_loadu_si512((const void *)(s + i)), saturate);
        if (stream)
            _mm256_stream_si256((__m256i *)(d + i), r);
        else
            _mm256_storeu_si256((__m256i *)(d + i), r);
    }
    if (i < n) {
        __mmask16 mask = (__mmask16)((1u << (n - i)) - 1);
        _mm256_mask_storeu_epi16(d + i, mask, bf16x16(_mm512_maskz_loadu_epi32(mask, s + i), saturate));
    }
    if (stream)
        _mm_sfence();
}
