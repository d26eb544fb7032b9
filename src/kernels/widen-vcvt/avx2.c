/* Widening conversions with AVX2 (+F16C): bf16, f16, e4m3, e5m2, s8, u8 -> float32, exact in every mode.
 * No FP arithmetic whose result depends on MXCSR (vcvtph2ps ignores DAZ for
 * its float16 input; int -> float here is exact); NaNs come out quiet with
 * the payload kept, as the reference's policy (widen-avx512.h).
 * Tails go through a small zero-padded buffer. */
#include <immintrin.h>
#include <string.h>

#include "kernels/cvt-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

typedef enum { SRC_BF16, SRC_F16, SRC_S8, SRC_U8, SRC_E4M3, SRC_E5M2 } src_kind;

MXP_INLINE __m256 widen8(const void *p, src_kind k, int saturate)
{
    __m256 r;
    switch (k) {
    case SRC_F16:
        r = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
        break;
    case SRC_BF16: {
        __m256i x = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16);
        __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
        x = _mm256_or_si256(x, _mm256_and_si256(nan, _mm256_set1_epi32(0x00400000)));
        r = _mm256_castsi256_ps(x);
        break;
    }
    case SRC_S8:
        return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
    case SRC_E5M2: /* the top byte of a float16 */
        r = _mm256_cvtph_ps(_mm_slli_epi16(_mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)p)), 8));
        break;
    case SRC_E4M3: {
        /* s eeee mmm.  Normal: rebias 7 -> 127; subnormal m * 2^-9 from a
         * table; S.1111.111 is NaN (the quiet NaN 0x7ff00000 with the sign). */
        const __m256i sub_table = _mm256_setr_epi32(0, 0x3b000000, 0x3b800000, 0x3bc00000, 0x3c000000,
                                                    0x3c200000, 0x3c400000, 0x3c600000);
        __m256i x = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
        __m256i em = _mm256_and_si256(x, _mm256_set1_epi32(0x7f));
        __m256i b = _mm256_add_epi32(_mm256_slli_epi32(em, 20), _mm256_set1_epi32(120 << 23));
        __m256i sub = _mm256_cmpgt_epi32(_mm256_set1_epi32(8), em);
        b = _mm256_blendv_epi8(b, _mm256_permutevar8x32_epi32(sub_table, em), sub);
        __m256i nan = _mm256_cmpeq_epi32(em, _mm256_set1_epi32(0x7f));
        b = _mm256_blendv_epi8(b, _mm256_set1_epi32(0x7ff00000), nan);
        b = _mm256_or_si256(b, _mm256_slli_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x80)), 24));
        return _mm256_castsi256_ps(b); /* no infinity: nothing to saturate */
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

MXP_INLINE void loop(float *d, const void *src, size_t n, src_kind k, int saturate)
{
    const size_t ss = k <= SRC_F16 ? 2 : 1;
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
            _mm256_storeu_ps(out, widen8(in, k, saturate));
            memcpy(d, out, head * 4);
            i = head;
        }
        for (; i + 16 <= n; i += 16) {
            __m256 r0 = widen8(s + i * ss, k, saturate), r1 = widen8(s + (i + 8) * ss, k, saturate);
            _mm256_stream_ps(d + i, r0);
            _mm256_stream_ps(d + i + 8, r1);
        }
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, widen8(s + i * ss, k, saturate));
    if (i < n) {
        unsigned char in[16] = { 0 };
        float out[8];
        memcpy(in, s + i * ss, (n - i) * ss);
        _mm256_storeu_ps(out, widen8(in, k, saturate));
        memcpy(d + i, out, (n - i) * 4);
    }
    if (stream)
        _mm_sfence();
}

void mxp_bf16_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_BF16, p->overflow == MXP_OVERFLOW_SATURATE);
}

void mxp_f16_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_F16, p->overflow == MXP_OVERFLOW_SATURATE);
}

void mxp_s8_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    (void)p;
    loop(dst, src, n, SRC_S8, 0);
}

void mxp_u8_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    (void)p;
    loop(dst, src, n, SRC_U8, 0);
}

void mxp_e4m3_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    (void)p;
    loop(dst, src, n, SRC_E4M3, 0);
}

void mxp_e5m2_f32_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    loop(dst, src, n, SRC_E5M2, p->overflow == MXP_OVERFLOW_SATURATE);
}

/* float32 -> float64, exact (as mxp_f32_f64_vcvt__avx512f): vcvtps2pd,
 * except that under MXCSR.DAZ it would read float32 subnormals as zero, so
 * vectors holding one convert those lanes from the integer mantissa: m *
 * 2^-149, a normal float64 product.  Saturation turns infinities into
 * float64's largest finite value. */
static inline __attribute__((always_inline)) __m256d f32x4_to_f64(__m128i x, int saturate)
{
    __m256d r = _mm256_cvtps_pd(_mm_castsi128_ps(x));
    const __m128i a = _mm_and_si128(x, _mm_set1_epi32(0x7fffffff));
    const __m128i sub = _mm_andnot_si128(_mm_cmpeq_epi32(a, _mm_setzero_si128()),
                                         _mm_cmpeq_epi32(_mm_and_si128(x, _mm_set1_epi32(0x7f800000)), _mm_setzero_si128()));
    if (!_mm_testz_si128(sub, sub)) {
        const __m256d m = _mm256_mul_pd(_mm256_cvtepi32_pd(a), _mm256_set1_pd(0x1p-149));
        const __m256i sign = _mm256_slli_epi64(_mm256_cvtepu32_epi64(_mm_srli_epi32(x, 31)), 63);
        const __m256d fixed = _mm256_castsi256_pd(_mm256_or_si256(_mm256_castpd_si256(m), sign));
        r = _mm256_blendv_pd(r, fixed, _mm256_castsi256_pd(_mm256_cvtepi32_epi64(sub)));
    }
    if (saturate) {
        const __m256i b = _mm256_castpd_si256(r);
        const __m256i inf = _mm256_cmpeq_epi64(_mm256_and_si256(b, _mm256_set1_epi64x(0x7fffffffffffffffll)),
                                               _mm256_set1_epi64x(0x7ff0000000000000ll));
        r = _mm256_castsi256_pd(_mm256_add_epi64(b, inf)); /* inf - 1: the largest finite, signed */
    }
    return r;
}

void mxp_f32_f64_vcvt__avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p)
{
    const int saturate = p->overflow == MXP_OVERFLOW_SATURATE;
    const unsigned char *s = src;
    unsigned char *d = dst;
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd((double *)(void *)(d + 8 * i),
                         f32x4_to_f64(_mm_loadu_si128((const __m128i *)(const void *)(s + 4 * i)), saturate));
    if (i < n) {
        unsigned char in[16] = { 0 };
        double out[4];
        memcpy(in, s + 4 * i, (n - i) * 4);
        _mm256_storeu_pd(out, f32x4_to_f64(_mm_loadu_si128((const __m128i *)(const void *)in), saturate));
        memcpy(d + 8 * i, out, (n - i) * 8);
    }
}
