/* Widening conversions with AVX-512F: bf16, f16, e4m3, e5m2, s8, u8 -> float32
 * and float32 -> float64.  Every value is exact in the target, so one kernel
 * serves every rounding mode.  No FP arithmetic is used whose result depends
 * on MXCSR: vcvtph2ps ignores DAZ for its float16 input, int -> float
 * conversions here are exact, and float32 subnormals are fixed up for
 * vcvtps2pd.  NaNs come out quiet with the payload kept, as the reference's
 * policy. */
#include <immintrin.h>

#include "kernels/cvt-kernels.h"
#include "kernels/widen-vcvt/widen-avx512.h"

#define MXP_INLINE static inline __attribute__((always_inline))
#define MXP_STREAM_BYTES (4u << 20)

/* MXP_OVERFLOW_SATURATE: no infinity in the output, +-inf becomes +-max. */
MXP_INLINE __m512 saturate_inf(__m512 x)
{
    __m512i b = _mm512_castps_si512(x);
    __mmask16 inf = _mm512_cmpeq_epi32_mask(_mm512_and_si512(b, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x7f800000));
    return _mm512_castsi512_ps(_mm512_mask_sub_epi32(b, inf, b, _mm512_set1_epi32(1)));
}

MXP_INLINE __m512 convert16(const void *src, size_t i, src_kind k, __mmask16 mask, int saturate)
{
    __m512 r = mxp_widen16_avx512(src, i, k, mask);
    return saturate && k != SRC_S8 && k != SRC_U8 && k != SRC_E4M3 ? saturate_inf(r) : r;
}

MXP_INLINE void loop(float *dst, const void *src, size_t n, src_kind k, int saturate)
{
    size_t i = 0;
    int stream = n * (k <= SRC_F16 ? 6 : 5) >= MXP_STREAM_BYTES && (uintptr_t)dst % 4 == 0;
    if (stream) {
        size_t head = ((64 - (uintptr_t)dst % 64) % 64) / 4;
        if (head) {
            __mmask16 mask = (__mmask16)((1u << head) - 1);
            _mm512_mask_storeu_ps(dst, mask, convert16(src, 0, k, mask, saturate));
            i = head;
        }
    }
    for (; i + 16 <= n; i += 16) {
        if (stream)
            _mm512_stream_ps(dst + i, convert16(src, i, k, 0xffff, saturate));
        else
            _mm512_storeu_ps(dst + i, convert16(src, i, k, 0xffff, saturate));
    }
    if (i < n) {
        __mmask16 mask = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(dst + i, mask, convert16(src, i, k, mask, saturate));
    }
    if (stream)
        _mm_sfence();
}

void mxp_bf16_f32_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_BF16, p->overflow == MXP_OVERFLOW_SATURATE);
}

void mxp_f16_f32_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_F16, p->overflow == MXP_OVERFLOW_SATURATE);
}

void mxp_e4m3_f32_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_E4M3, p->overflow == MXP_OVERFLOW_SATURATE);
}

void mxp_e5m2_f32_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_E5M2, p->overflow == MXP_OVERFLOW_SATURATE);
}

void mxp_s8_f32_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_S8, p->overflow == MXP_OVERFLOW_SATURATE);
}

void mxp_u8_f32_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_U8, p->overflow == MXP_OVERFLOW_SATURATE);
}

/* float32 -> float64, exact.  vcvtps2pd reads float32 subnormals as zero
 * under MXCSR.DAZ, so vectors holding one convert those lanes from the
 * integer mantissa: m * 2^-149, a normal float64 product of normal inputs. */
MXP_INLINE __m512d f32x8_to_f64(__m256i x, int saturate)
{
    __m512d r = _mm512_cvtps_pd(_mm256_castsi256_ps(x));
    __m256i a = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
    __mmask8 sub = _mm256_testn_epi32_mask(x, _mm256_set1_epi32(0x7f800000)) & _mm256_test_epi32_mask(a, a);
    if (sub) {
        __m512d m = _mm512_mul_pd(_mm512_cvtepi64_pd(_mm512_cvtepu32_epi64(a)), _mm512_set1_pd(0x1p-149));
        __m512i sign = _mm512_slli_epi64(_mm512_cvtepu32_epi64(_mm256_srli_epi32(x, 31)), 63);
        r = _mm512_mask_mov_pd(r, sub, _mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(m), sign)));
    }
    if (saturate) {
        __m512i b = _mm512_castpd_si512(r);
        __mmask8 inf = _mm512_cmpeq_epi64_mask(_mm512_and_si512(b, _mm512_set1_epi64(0x7fffffffffffffffll)),
                                               _mm512_set1_epi64(0x7ff0000000000000ll));
        r = _mm512_castsi512_pd(_mm512_mask_sub_epi64(b, inf, b, _mm512_set1_epi64(1)));
    }
    return r;
}

void mxp_f32_f64_vcvt__avx512f(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const uint32_t *s = src;
    double *d = dst;
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm512_storeu_pd(d + i, f32x8_to_f64(_mm256_loadu_si256((const __m256i *)(s + i)), saturate));
    if (i < n) {
        __mmask8 mask = (__mmask8)((1u << (n - i)) - 1);
        _mm512_mask_storeu_pd(d + i, mask, f32x8_to_f64(_mm256_maskz_loadu_epi32(mask, s + i), saturate));
    }
}
