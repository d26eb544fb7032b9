/* The byte formats (float8 and e8m0, float6 and float4, the sub-byte
 * integers, int8 and uint8: one element a byte) widened to float32,
 * bfloat16 or float16 with AVX2 (+F16C), exact, by arithmetic: the loop of
 * the src/kernels/<src>-{f32,bf16,f16}-vcvt/avx2.c kernels.  Below the
 * AVX512_VBMI tables these pairs ran through the 256-entry table's gathers
 * (mxp_u8_lut_x32__avx2 / _x16), 0.4-0.6 ns an element on a Zen 4
 * (src/convert/convert.c's table_beats keeps those tables where they win).
 *
 * A float format of nb bits (sign, E exponent bits, M fraction bits, bias
 * B; the bits above nb ignored, as the reference converter does) into
 * float32, its magnitude bits mag:
 *   E > 0:  (mag << (23 - M)) + ((127 - B) << 23)   (the fields moved)
 *   E = 0:  float(mag) * 2^(1 - B - M)              (exact: a small integer
 *           times a power of two, the product normal for every format)
 * chosen by a compare, then the sign or-ed in.  Nothing depends on MXCSR:
 * no operand or result is subnormal, and both float operations are exact
 * (the tests run with FTZ and DAZ set too).  Specials, the reference's
 * policy (cvt-widen-avx2.h): where E is all ones an IEEE-style format
 * (float8_e3m4, float8_e4m3) has +-inf (m = 0; +-max of the output when
 * saturating) and quiet NaNs keeping the payload's top bits, and
 * float8_e4m3fn / e5m2 (the first two 8-bit types) the same at S.1111.111
 * / E all ones; an fnuz format's one NaN is 0x80 (-NaN); float6/float4
 * are finite.  e8m0 is the exponent alone: (b << 23), 0 -> 2^-127 (a
 * float32 subnormal, 0x00400000), 0xff -> NaN.  The integers: sign- or
 * zero-extended from nb bits, then vcvtdq2ps.
 *
 * bfloat16 results are the float32 results' top halves (every value of
 * these formats is a bfloat16; the NaNs' payloads and the saturated
 * +-max 0x7f7f too); float16 results vcvtps2ph of them (exact: every
 * format here but e8m0 lies within float16's range), saturation put back
 * after it (+-inf -> +-0x7bff).  Twin: the reference converter. */
#ifndef MXP_KERNELS_CVT_BYTE_WIDEN_AVX2_H
#define MXP_KERNELS_CVT_BYTE_WIDEN_AVX2_H

#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/cvt-kernel.h"
#include "kernels/stream-loop.h"

typedef enum {
    BYTE_IEEE,   /* inf at E all ones, m = 0; NaN at m != 0 (float8_e3m4, float8_e4m3, float8_e5m2) */
    BYTE_FN,     /* float8_e4m3fn: NaN at S.1111.111 only */
    BYTE_FNUZ,   /* NaN at 0x80 only */
    BYTE_FINITE, /* float6/float4 */
    BYTE_E8M0,
    BYTE_SINT,   /* signed integer of nb bits */
    BYTE_UINT
} mxp_byte_style;

typedef struct mxp_byte_fmt {
    int nb, ebits, mbits, bias;
    mxp_byte_style style;
} mxp_byte_fmt;

typedef enum { BYTE_TO_F32, BYTE_TO_BF16, BYTE_TO_F16 } mxp_byte_out;

#define MXP_BV8(c) _mm256_set1_epi32((int)(c))

/* Eight elements (32-bit lanes holding the bytes 0..255) into float32
 * bits; sat: infinities to +-max (float32 and bfloat16 results; float16
 * ones fix theirs after the narrowing). */
MXP_INLINE __m256i mxp_byte_f32_avx2(__m256i x, mxp_byte_fmt f, int sat)
{
    const int nb = f.nb, m = f.mbits;
    switch (f.style) {
    case BYTE_SINT:
        return _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(x, 32 - nb), 32 - nb)));
    case BYTE_UINT:
        return _mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_and_si256(x, MXP_BV8((1u << nb) - 1))));
    case BYTE_E8M0: { /* 0 and 0xff: bit 22 set (2^-127, the quiet NaN) */
        const __m256i sp =
            _mm256_or_si256(_mm256_cmpeq_epi32(x, _mm256_setzero_si256()), _mm256_cmpeq_epi32(x, MXP_BV8(255)));
        return _mm256_or_si256(_mm256_slli_epi32(x, 23), _mm256_and_si256(sp, MXP_BV8(0x00400000)));
    }
    default: break;
    }
    const __m256i mag = _mm256_and_si256(x, MXP_BV8((1u << (nb - 1)) - 1));
    const __m256i moved = _mm256_slli_epi32(mag, 23 - m);
    const __m256i normal = _mm256_add_epi32(moved, MXP_BV8((unsigned)(127 - f.bias) << 23));
    const __m256 scale = _mm256_castsi256_ps(MXP_BV8((unsigned)(127 + 1 - f.bias - m) << 23)); /* 2^(1-B-M) */
    const __m256i sub = _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(mag), scale));
    __m256i r = _mm256_blendv_epi8(sub, normal, _mm256_cmpgt_epi32(mag, MXP_BV8((1u << m) - 1)));
    const unsigned top = ((1u << f.ebits) - 1) << m; /* E all ones, m = 0 */
    if (f.style == BYTE_IEEE || f.style == BYTE_FN) {
        /* the special lanes: sign-less inf, or NaN with the payload and the quiet bit */
        const __m256i sp = f.style == BYTE_FN ? _mm256_cmpeq_epi32(mag, MXP_BV8(top | ((1u << m) - 1)))
                                              : _mm256_cmpgt_epi32(mag, MXP_BV8(top - 1));
        const __m256i nan = _mm256_cmpgt_epi32(mag, MXP_BV8(top));
        __m256i v = _mm256_or_si256(_mm256_or_si256(moved, MXP_BV8(0x7f800000)),
                                    _mm256_and_si256(nan, MXP_BV8(0x00400000)));
        if (sat && f.style != BYTE_FN) /* 0x7f800000 - 1: float32's max */
            v = _mm256_add_epi32(v, _mm256_cmpeq_epi32(mag, MXP_BV8(top)));
        r = _mm256_blendv_epi8(r, v, sp);
    }
    r = _mm256_or_si256(r, _mm256_and_si256(_mm256_slli_epi32(x, 32 - nb), MXP_BV8(0x80000000u)));
    if (f.style == BYTE_FNUZ) /* 0x80: -NaN (the sign is there) */
        r = _mm256_or_si256(r, _mm256_and_si256(_mm256_cmpeq_epi32(x, MXP_BV8(0x80)), MXP_BV8(0x7fc00000)));
    return r;
}

typedef struct mxp_byte_ctx {
    mxp_byte_fmt f;
    mxp_byte_out out;
    int sat;
    __m256i sub_lo, sub_hi; /* the 16-lane path: the subnormals' 16-bit patterns, low and high bytes */
} mxp_byte_ctx;

/* Whether a float format's 16-bit results take 16 lanes a vector: its
 * normals are normals of the output (float16: from 2^-14, not
 * float8_e5m2fnuz's 2^-15), its subnormals at most 16 (M <= 4). */
MXP_INLINE int mxp_byte_h16_avx2(mxp_byte_fmt f, mxp_byte_out out)
{
    const int fp = f.style == BYTE_IEEE || f.style == BYTE_FN || f.style == BYTE_FNUZ || f.style == BYTE_FINITE;
    return fp && out != BYTE_TO_F32 && f.mbits <= 4 && (out == BYTE_TO_BF16 || 1 - f.bias >= -14);
}

/* 16 elements (bytes b) into bfloat16 or float16 patterns in 16-bit
 * lanes, the method above on the output's fields: normals (mag << (P -
 * M)) + ((W - B) << P) (P the output's fraction bits, W its bias), the
 * subnormals' patterns from two vpshufb tables (mag < 2^M <= 16; the
 * other lanes' lookups are blended away), the specials' quiet bit 1 <<
 * (P - 1), saturation +-inf - 1 (+-max). */
MXP_INLINE __m256i mxp_byte_h16x16_avx2(__m128i b, const mxp_byte_ctx *c)
{
    const mxp_byte_fmt f = c->f;
    const int nb = f.nb, m = f.mbits, f16 = c->out == BYTE_TO_F16;
    const int P = f16 ? 10 : 7, W = f16 ? 15 : 127;
    const unsigned inf = f16 ? 0x7c00 : 0x7f80;
    const __m256i x = nb == 8 ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
    const __m256i mag = _mm256_and_si256(x, _mm256_set1_epi16((short)((1u << (nb - 1)) - 1)));
    const __m256i moved = _mm256_slli_epi16(mag, P - m);
    const __m256i normal = _mm256_add_epi16(moved, _mm256_set1_epi16((short)((W - f.bias) << P)));
    const __m256i sub = _mm256_or_si256(_mm256_shuffle_epi8(c->sub_lo, mag),
                                        _mm256_slli_epi16(_mm256_shuffle_epi8(c->sub_hi, mag), 8));
    __m256i r = _mm256_blendv_epi8(sub, normal, _mm256_cmpgt_epi16(mag, _mm256_set1_epi16((short)((1u << m) - 1))));
    const unsigned top = ((1u << f.ebits) - 1) << m;
    if (f.style == BYTE_IEEE || f.style == BYTE_FN) {
        const __m256i sp = f.style == BYTE_FN
                               ? _mm256_cmpeq_epi16(mag, _mm256_set1_epi16((short)(top | ((1u << m) - 1))))
                               : _mm256_cmpgt_epi16(mag, _mm256_set1_epi16((short)(top - 1)));
        const __m256i nan = _mm256_cmpgt_epi16(mag, _mm256_set1_epi16((short)top));
        __m256i v = _mm256_or_si256(_mm256_or_si256(moved, _mm256_set1_epi16((short)inf)),
                                    _mm256_and_si256(nan, _mm256_set1_epi16((short)(1u << (P - 1)))));
        if (c->sat && f.style != BYTE_FN)
            v = _mm256_add_epi16(v, _mm256_cmpeq_epi16(mag, _mm256_set1_epi16((short)top)));
        r = _mm256_blendv_epi8(r, v, sp);
    }
    const __m256i sign = nb == 8 ? x : _mm256_slli_epi16(x, 16 - nb);
    r = _mm256_or_si256(r, _mm256_and_si256(sign, _mm256_set1_epi16((short)0x8000)));
    if (f.style == BYTE_FNUZ) /* 0x80 (sign-extended: 0xff80): -NaN */
        r = _mm256_or_si256(r, _mm256_and_si256(_mm256_cmpeq_epi16(x, _mm256_set1_epi16((short)0xff80)),
                                                _mm256_set1_epi16((short)(inf | 1u << (P - 1)))));
    return r;
}

/* 16 elements at s: two float32 vectors */
MXP_INLINE void mxp_byte_f32x16_avx2(const uint8_t *s, const mxp_byte_ctx *c, int sat, __m256i *r0, __m256i *r1)
{
    const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)s);
    *r0 = mxp_byte_f32_avx2(_mm256_cvtepu8_epi32(b), c->f, sat);
    *r1 = mxp_byte_f32_avx2(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(b, b)), c->f, sat);
}

/* 16 float16 results of the float32 bits r0, r1; saturating: +-inf
 * (from an infinity: no finite value overflows) -> +-0x7bff */
MXP_INLINE __m256i mxp_byte_f16x16_avx2(__m256i r0, __m256i r1, int sat)
{
    __m256i h = _mm256_set_m128i(_mm256_cvtps_ph(_mm256_castsi256_ps(r1), _MM_FROUND_TO_NEAREST_INT),
                                 _mm256_cvtps_ph(_mm256_castsi256_ps(r0), _MM_FROUND_TO_NEAREST_INT));
    if (sat)
        h = _mm256_add_epi16(h, _mm256_cmpeq_epi16(_mm256_and_si256(h, _mm256_set1_epi16(0x7fff)),
                                                   _mm256_set1_epi16(0x7c00)));
    return h;
}

MXP_INLINE void mxp_byte_store_avx2(void *d, __m256i v, int stream)
{
    if (stream)
        _mm256_stream_si256((__m256i *)d, v);
    else
        _mm256_storeu_si256((__m256i *)d, v);
}

/* 16 elements from element i */
MXP_INLINE void mxp_byte_full_avx2(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const mxp_byte_ctx *c = ctx;
    if (mxp_byte_h16_avx2(c->f, c->out)) {
        const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)((const uint8_t *)src + i));
        mxp_byte_store_avx2((uint16_t *)dst + i, mxp_byte_h16x16_avx2(b, c), stream);
        return;
    }
    __m256i r0, r1;
    mxp_byte_f32x16_avx2((const uint8_t *)src + i, c, c->out != BYTE_TO_F16 && c->sat, &r0, &r1);
    if (c->out == BYTE_TO_F32) {
        mxp_byte_store_avx2((float *)dst + i, r0, stream);
        mxp_byte_store_avx2((float *)dst + i + 8, r1, stream);
    } else if (c->out == BYTE_TO_BF16) { /* the top halves, in order */
        const __m256i h = _mm256_packus_epi32(_mm256_srli_epi32(r0, 16), _mm256_srli_epi32(r1, 16));
        mxp_byte_store_avx2((uint16_t *)dst + i, _mm256_permute4x64_epi64(h, _MM_SHUFFLE(3, 1, 2, 0)), stream);
    } else {
        mxp_byte_store_avx2((uint16_t *)dst + i, mxp_byte_f16x16_avx2(r0, r1, c->sat), stream);
    }
}

/* count < 16 elements through a zero-padded buffer */
MXP_INLINE void mxp_byte_part_avx2(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    const mxp_byte_ctx *c = ctx;
    const size_t os = c->out == BYTE_TO_F32 ? 4 : 2;
    uint8_t in[16] = { 0 };
    _Alignas(32) unsigned char out[64];
    memcpy(in, (const uint8_t *)src + i, count);
    mxp_byte_full_avx2(out, in, 0, 0, ctx);
    memcpy((unsigned char *)dst + i * os, out, count * os);
}

/* The kernels' entry: n elements of format f into out. */
MXP_INLINE void mxp_byte_widen_avx2(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_byte_fmt f,
                                    mxp_byte_out out)
{
    mxp_byte_ctx c = { f, out, p->overflow == MXP_OVERFLOW_SATURATE, _mm256_setzero_si256(), _mm256_setzero_si256() };
    if (mxp_byte_h16_avx2(f, out)) { /* the subnormals m 2^(1-B-M), m < 2^M, as output patterns */
        uint8_t lo[16] = { 0 }, hi[16] = { 0 };
        for (int k = 0; k < 1 << f.mbits; k++) {
            const float v = (float)k * ldexpf(1.0f, 1 - f.bias - f.mbits); /* exact */
            uint32_t u;
            memcpy(&u, &v, sizeof u);
            const unsigned h = out == BYTE_TO_F16 ? (unsigned)_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT) : u >> 16;
            lo[k] = (uint8_t)h;
            hi[k] = (uint8_t)(h >> 8);
        }
        c.sub_lo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)lo));
        c.sub_hi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)hi));
    }
    const size_t os = out == BYTE_TO_F32 ? 4 : 2;
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 1, os, 16, 32 }, mxp_byte_full_avx2, mxp_byte_part_avx2, &c);
}

#endif
