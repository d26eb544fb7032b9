/* Widening with AVX2 (+F16C): bf16, f16, e4m3, e5m2, s8, u8 -> float32,
 * exact in every mode: the loop of the src/kernels/<src>-f32-vcvt/avx2.c
 * kernels.  No FP arithmetic whose result depends on MXCSR (vcvtph2ps
 * ignores DAZ for its float16 input; int -> float here is exact); NaNs
 * come out quiet with the payload kept, as the reference's policy
 * (cvt-widen-avx512.h).  Tails go through a small zero-padded buffer. */
#ifndef MXP_KERNELS_CVT_WIDEN_AVX2_H
#define MXP_KERNELS_CVT_WIDEN_AVX2_H

#include <immintrin.h>
#include <string.h>

#include "kernels/cvt-kernel.h"

#ifndef MXP_INLINE
#define MXP_INLINE static inline __attribute__((always_inline))
#endif

typedef enum { WIDEN2_BF16, WIDEN2_F16, WIDEN2_S8, WIDEN2_U8, WIDEN2_E4M3, WIDEN2_E5M2 } mxp_widen_src2;

MXP_INLINE __m256 mxp_widen8_avx2(const void *p, mxp_widen_src2 k, int saturate)
{
    __m256 r;
    switch (k) {
    case WIDEN2_F16:
        r = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
        break;
    case WIDEN2_BF16: {
        __m256i x = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16);
        __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
        x = _mm256_or_si256(x, _mm256_and_si256(nan, _mm256_set1_epi32(0x00400000)));
        r = _mm256_castsi256_ps(x);
        break;
    }
    case WIDEN2_S8:
        return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
    case WIDEN2_E5M2: /* the top byte of a float16 */
        r = _mm256_cvtph_ps(_mm_slli_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)p)), 8));
        break;
    case WIDEN2_E4M3: {
        /* s eeee mmm as cvt-widen-avx512.h widens it: sign-extended, shifted
         * left by 7, bit 14 cleared -- the float16 of its value times 2^-8 --
         * then vcvtph2ps and times 2^8, exactly; S.1111.111 (NaN) keeps bit
         * 14 set: float16's 0x7f80, the quiet NaN 0x7ff00000 with the sign.
         * No infinity: nothing to saturate. */
        const __m128i t = _mm_slli_epi16(_mm_cvtepi8_epi16(_mm_loadl_epi64((const __m128i *)p)), 7);
        const __m128i nan = _mm_cmpeq_epi16(_mm_and_si128(t, _mm_set1_epi16(0x3f80)), _mm_set1_epi16(0x3f80));
        const __m128i h = _mm_or_si128(_mm_and_si128(t, _mm_set1_epi16((short)0xbfff)),
                                       _mm_and_si128(nan, _mm_set1_epi16(0x4000)));
        return _mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_set1_ps(256.0f));
    }
    default:
        return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p)));
    }
    if (saturate) { /* no infinity in the output: +-inf -> +-max */
        __m256i b = _mm256_castps_si256(r);
        __m256i inf = _mm256_cmpeq_epi32(_mm256_and_si256(b, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
        r = _mm256_castsi256_ps(_mm256_add_epi32(b, inf));
    }
    return r;
}

MXP_INLINE void mxp_widen_loop_avx2(float *d, const void *src, size_t n, mxp_widen_src2 k, int saturate)
{
    const size_t ss = k <= WIDEN2_F16 ? 2 : 1;
    const unsigned char *s = src;
    size_t i = 0;
    /* Large outputs bypass the cache (as memcpy does); the head is
     * converted until dst is aligned. */
    const int stream = n * (4 + ss) >= (4u << 20) && (uintptr_t)d % 4 == 0;
    if (stream) {
        size_t head = ((32 - (uintptr_t)d % 32) % 32) / 4;
        head = head < n ? head : n;
        if (head) {
            unsigned char in[16] = { 0 };
            float out[8];
            memcpy(in, s, head * ss);
            _mm256_storeu_ps(out, mxp_widen8_avx2(in, k, saturate));
            memcpy(d, out, head * 4);
            i = head;
        }
        for (; i + 16 <= n; i += 16) {
            __m256 r0 = mxp_widen8_avx2(s + i * ss, k, saturate), r1 = mxp_widen8_avx2(s + (i + 8) * ss, k, saturate);
            _mm256_stream_ps(d + i, r0);
            _mm256_stream_ps(d + i + 8, r1);
        }
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, mxp_widen8_avx2(s + i * ss, k, saturate));
    if (i < n) {
        unsigned char in[16] = { 0 };
        float out[8];
        memcpy(in, s + i * ss, (n - i) * ss);
        _mm256_storeu_ps(out, mxp_widen8_avx2(in, k, saturate));
        memcpy(d + i, out, (n - i) * 4);
    }
    if (stream)
        _mm_sfence();
}

#endif
