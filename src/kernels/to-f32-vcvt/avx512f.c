/* bf16, f16, e4m3, e5m2, s8, u8 -> float32 with AVX-512F.  Every value is
 * exact in float32, so one kernel serves every rounding mode.  No FP
 * arithmetic is used except vcvtph2ps, which ignores MXCSR.DAZ for its
 * float16 input, and int -> float conversions, which are exact here.  NaNs
 * come out quiet with the payload kept, as the reference's policy. */
#include <immintrin.h>

#include "kernels/cvt-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))
#define MXP_STREAM_BYTES (4u << 20)

typedef enum { SRC_BF16, SRC_F16, SRC_E4M3, SRC_E5M2, SRC_S8, SRC_U8 } src_kind;

/* 16 source elements, zero-extended to 32-bit lanes (or to 16-bit for f16). */
MXP_INLINE __m512 widen16(const void *src, size_t i, src_kind k, __mmask16 mask)
{
    if (k == SRC_BF16 || k == SRC_F16) {
        const uint16_t *s = (const uint16_t *)src + i;
        __m256i h = mask == 0xffff ? _mm256_loadu_si256((const __m256i *)s) : _mm256_maskz_loadu_epi16(mask, s);
        if (k == SRC_F16)
            return _mm512_cvtph_ps(h);
        __m512i r = _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
        __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(r, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
        return _mm512_castsi512_ps(_mm512_mask_or_epi32(r, nan, r, _mm512_set1_epi32(0x00400000)));
    }
    const uint8_t *s = (const uint8_t *)src + i;
    __m128i b = mask == 0xffff ? _mm_loadu_si128((const __m128i *)s) : _mm_maskz_loadu_epi8(mask, s);
    switch (k) {
    case SRC_S8: return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b));
    case SRC_U8: return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(b));
    case SRC_E5M2: /* the top byte of a float16 */
        return _mm512_cvtph_ps(_mm256_slli_epi16(_mm256_cvtepu8_epi16(b), 8));
    default: {
        /* E4M3: s eeee mmm.  Normal: rebias 7 -> 127; subnormal m * 2^-9
         * from a table; S.1111.111 is NaN. */
        const __m512i sub_table = _mm512_setr_epi32(0, 0x3b000000, 0x3b800000, 0x3bc00000, 0x3c000000,
                                                    0x3c200000, 0x3c400000, 0x3c600000, 0, 0, 0, 0, 0, 0, 0, 0);
        __m512i x = _mm512_cvtepu8_epi32(b);
        __m512i em = _mm512_and_si512(x, _mm512_set1_epi32(0x7f));
        __m512i r = _mm512_add_epi32(_mm512_slli_epi32(em, 20), _mm512_set1_epi32(120 << 23));
        __mmask16 sub = _mm512_cmplt_epi32_mask(em, _mm512_set1_epi32(8));
        r = _mm512_mask_permutexvar_epi32(r, sub, em, sub_table);
        __mmask16 nan = _mm512_cmpeq_epi32_mask(em, _mm512_set1_epi32(0x7f));
        r = _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(0x7ff00000));
        r = _mm512_or_si512(r, _mm512_slli_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0x80)), 24));
        return _mm512_castsi512_ps(r);
    }
    }
}

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
    __m512 r = widen16(src, i, k, mask);
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
