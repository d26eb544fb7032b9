/* The loop of the byte-lane table kernels (x16-lut-kernels.h), shared by
 * src/kernels/x16-lut/avx512vbmi.c (bfloat16/float16 sources) and
 * x32-lut/avx512vbmi.c (float32): bfloat16/float16/float32 -> the 8-bit
 * float formats and the small integers with AVX512_VBMI, 64 elements a
 * step.  vpmultishiftqb takes two bytes out of each lane of its
 * quadword (bfloat16: the significand byte and the exponent; float16: bits
 * 3-10 and the low byte, whose bits 0-2 give the sticky bit), vpermt2b
 * gathers each kind and the high bytes (the signs; float16's row index)
 * into one vector, and the four 128-entry tables are eight zmm registers
 * that vpermi2b reads (the index's top bit ignored).  float32 is rounded to
 * odd into bfloat16 first.  About 18-22 vector operations per 64 elements
 * where the 16-bit arithmetic of cvt-h16-f8-avx512.h takes about 50: on a
 * Zen 4, which retires two 512-bit integer operations a cycle, that kept
 * bfloat16 -> the 0.2 formats at 0.5-0.7x of an L3-resident memcpy.  Twins:
 * mxp_x16_lut_x8_ref, mxp_x32_lut_x8_ref (src/convert/convert-ref.c). */
#ifndef MXP_KERNELS_X16_LUT_LUT_LOOP_H
#define MXP_KERNELS_X16_LUT_LUT_LOOP_H

#include <immintrin.h>
#include <stdint.h>

#include "kernels/cvt-h16-f8-avx512.h"
#include "kernels/x16-lut-kernels.h"
#include "kernels/stream-loop.h"

/* Elements [first, last + 64) hold patterns the tables leave to rest: the
 * loop only notes them (a call there would make the compiler keep every
 * table in memory: calls clobber the vector registers), a second pass
 * hands them over. */
typedef struct lut_marks {
    size_t first, last;
} lut_marks;

typedef struct lut_ctx {
    __m512i row[2], inc[2], key[2], cls[4];
    __m512i shift; /* vpmultishiftqb: bytes 0-3 of a quadword the Y bytes of its lanes, 4-7 the second bytes */
    __m512i pick_y, pick_e, pick_s; /* vpermt2b: the Y bytes, the second bytes, the sources' high bytes */
    __m512i elow, xnorm, ovf, sign_bit, int_max, int_mask;
    lut_marks *marks;
} lut_ctx;

MXP_INLINE __m512i pick(__m512i a, __m512i idx, __m512i b) { return _mm512_permutex2var_epi8(a, idx, b); }

/* 64 results of the 32-lane vectors h0, h1; *special: the lanes the tables
 * leave to t->rest. */
MXP_INLINE __m512i lut_step(__m512i h0, __m512i h1, const lut_ctx *c, int f16, int fnuz, int kind, int wide,
                            __mmask64 *special)
{
    const __m512i b0 = _mm512_multishift_epi64_epi8(c->shift, h0), b1 = _mm512_multishift_epi64_epi8(c->shift, h1);
    __m512i y = pick(b0, c->pick_y, b1);
    const __m512i e = pick(b0, c->pick_e, b1); /* float16: the low bytes */
    const __m512i hi = pick(h0, c->pick_s, h1);
    __m512i x, row, idx;
    __mmask64 normal;
    /* the patterns left to rest: float16's E = 31, bfloat16's E >= elow + 127 (X >= 127; past 127 vpermi2b
     * would wrap); the fnuz formats' overflowing rows (0x80) need no second pass: min() keeps their NaN */
    if (f16) { /* X: the high byte (the sign ignored); Y's last bit |= significand bits 2..0 */
        y = _mm512_mask_mov_epi8(y, _mm512_test_epi8_mask(e, _mm512_set1_epi8(7)),
                                 _mm512_or_si512(y, _mm512_set1_epi8(1)));
        x = hi;
        row = pick(c->row[0], x, c->row[1]);
        idx = _mm512_or_si512(row, pick(c->key[0], y, c->key[1]));
        const __m512i hi2 = _mm512_add_epi8(hi, hi);
        *special = _mm512_cmpge_epu8_mask(hi2, _mm512_set1_epi8((char)0xf8));
        normal = _mm512_cmpge_epu8_mask(hi2, c->xnorm);
    } else {
        x = _mm512_subs_epu8(e, c->elow);
        row = pick(c->row[0], x, c->row[1]);
        idx = _mm512_or_si512(row, pick(c->key[0], y, c->key[1]));
        *special = _mm512_cmpge_epu8_mask(x, _mm512_set1_epi8(127));
        normal = _mm512_cmpge_epu8_mask(x, c->xnorm);
    }
    __m512i sub = pick(c->cls[0], idx, c->cls[1]);
    if (wide) /* entries 128-191 by the index's top bit */
        sub = _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), sub, pick(c->cls[2], idx, c->cls[3]));
    __m512i r = _mm512_mask_add_epi8(sub, normal, row, pick(c->inc[0], y, c->inc[1]));
    r = _mm512_min_epu8(r, c->ovf);
    __mmask64 neg = _mm512_movepi8_mask(hi);
    if (kind == MXP_X16_LUT_SIGNED) /* -r in b bits, or at most int_max */
        return _mm512_and_si512(_mm512_mask_sub_epi8(_mm512_min_epu8(r, c->int_max), neg, _mm512_setzero_si512(), r),
                                c->int_mask);
    if (kind == MXP_X16_LUT_UNSIGNED)
        return _mm512_maskz_mov_epi8(~neg, r);
    if (fnuz) /* no -0, and the NaN (0x80) has no sign to add */
        neg = _mm512_mask_test_epi8_mask(neg, r, _mm512_set1_epi8(0x7f));
    return _mm512_mask_add_epi8(r, neg, r, c->sign_bit); /* r < sign_bit: an OR */
}

MXP_INLINE void lut_mark(const lut_ctx *c, size_t i)
{
    if (c->marks->first == SIZE_MAX)
        c->marks->first = i;
    c->marks->last = i;
}

MXP_INLINE __mmask64 low_bits64(size_t count) { return count >= 64 ? ~0ull : ~(~0ull << count); }

/* Elements [i, i + count), count <= 64, as two vectors of 16-bit patterns
 * (zeros past count); float32 rounded to odd into bfloat16, which keeps
 * every bit the tables' rounding looks at (cvt-h16-f8-avx512.h). */
MXP_INLINE void lut_load(const void *src, size_t i, size_t count, int f32, __m512i *h0, __m512i *h1)
{
    const __mmask64 m = low_bits64(count);
    if (f32) {
        const float *s = (const float *)src + i;
        __m512i x[4];
        for (int k = 0; k < 4; k++)
            x[k] = count >= 64 ? _mm512_loadu_si512((const void *)(s + 16 * k))
                               : _mm512_maskz_loadu_epi32((__mmask16)(m >> (16 * k)), s + 16 * k);
        *h0 = mxp_f32_to_bf16_odd32_avx512(x[0], x[1]);
        *h1 = mxp_f32_to_bf16_odd32_avx512(x[2], x[3]);
    } else if (count >= 64) {
        *h0 = _mm512_loadu_si512((const void *)((const uint16_t *)src + i));
        *h1 = _mm512_loadu_si512((const void *)((const uint16_t *)src + i + 32));
    } else {
        *h0 = _mm512_maskz_loadu_epi16((__mmask32)m, (const uint16_t *)src + i);
        *h1 = _mm512_maskz_loadu_epi16((__mmask32)(m >> 32), (const uint16_t *)src + i + 32);
    }
}

MXP_INLINE void lut_full(void *dst, const void *src, size_t i, int stream, const void *ctx, int f16, int fnuz,
                         int kind, int wide, int f32)
{
    const lut_ctx *c = ctx;
    uint8_t *d = (uint8_t *)dst + i;
    __m512i h0, h1;
    __mmask64 special;
    lut_load(src, i, 64, f32, &h0, &h1);
    const __m512i r = lut_step(h0, h1, c, f16, fnuz, kind, wide, &special);
    if (special)
        lut_mark(c, i);
    if (stream)
        _mm512_stream_si512((__m512i *)d, r);
    else
        _mm512_storeu_si512((void *)d, r);
}

MXP_INLINE void lut_part(void *dst, const void *src, size_t i, size_t count, const void *ctx, int f16, int fnuz,
                         int kind, int wide, int f32)
{
    const lut_ctx *c = ctx;
    __m512i h0, h1;
    __mmask64 special;
    lut_load(src, i, count, f32, &h0, &h1);
    const __m512i r = lut_step(h0, h1, c, f16, fnuz, kind, wide, &special);
    if (special & low_bits64(count))
        lut_mark(c, i);
    _mm512_mask_storeu_epi8((uint8_t *)dst + i, low_bits64(count), r);
}

/* The second pass over [first, last + 64): the vectors holding a pattern
 * the tables leave go to rest whole. */
MXP_INLINE void lut_rest(void *dst, const void *src, size_t n, const lut_ctx *c, const mxp_x16_lut_tables *t, int f16,
                         int wide, int f32)
{
    const size_t end = c->marks->last + 64 < n ? c->marks->last + 64 : n;
    for (size_t i = c->marks->first; i < end; i += 64) {
        const size_t count = end - i < 64 ? end - i : 64;
        __m512i h0, h1;
        __mmask64 special;
        lut_load(src, i, count, f32, &h0, &h1);
        (void)lut_step(h0, h1, c, f16, 0, MXP_X16_LUT_FLOAT, wide, &special);
        if (special & low_bits64(count))
            t->rest((uint8_t *)dst + i, (const char *)src + i * (f32 ? 4 : 2), count, &t->p);
    }
}

#define LUT_STEPS(name, f16, fnuz, kind, wide, f32)                                                                 \
    MXP_INLINE void name##_full(void *dst, const void *src, size_t i, int stream, const void *ctx)                 \
    {                                                                                                               \
        lut_full(dst, src, i, stream, ctx, f16, fnuz, kind, wide, f32);                                             \
    }                                                                                                               \
    MXP_INLINE void name##_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)               \
    {                                                                                                               \
        lut_part(dst, src, i, count, ctx, f16, fnuz, kind, wide, f32);                                              \
    }
LUT_STEPS(bf16, 0, 0, MXP_X16_LUT_FLOAT, 0, 0)
LUT_STEPS(bf16_fnuz, 0, 1, MXP_X16_LUT_FLOAT, 0, 0)
LUT_STEPS(bf16_wide, 0, 0, MXP_X16_LUT_FLOAT, 1, 0)
LUT_STEPS(bf16_s, 0, 0, MXP_X16_LUT_SIGNED, 0, 0)
LUT_STEPS(bf16_u, 0, 0, MXP_X16_LUT_UNSIGNED, 0, 0)
LUT_STEPS(f16, 1, 0, MXP_X16_LUT_FLOAT, 0, 0)
LUT_STEPS(f16_fnuz, 1, 1, MXP_X16_LUT_FLOAT, 0, 0)
LUT_STEPS(f16_wide, 1, 0, MXP_X16_LUT_FLOAT, 1, 0)
LUT_STEPS(f16_s, 1, 0, MXP_X16_LUT_SIGNED, 0, 0)
LUT_STEPS(f16_u, 1, 0, MXP_X16_LUT_UNSIGNED, 0, 0)
LUT_STEPS(f32, 0, 0, MXP_X16_LUT_FLOAT, 0, 1)
LUT_STEPS(f32_fnuz, 0, 1, MXP_X16_LUT_FLOAT, 0, 1)
LUT_STEPS(f32_wide, 0, 0, MXP_X16_LUT_FLOAT, 1, 1)
#undef LUT_STEPS

/* The tables in registers, the gathers' indices (lut_ctx). */
MXP_INLINE void lut_setup(lut_ctx *c, const mxp_x16_lut_tables *t)
{
    for (int k = 0; k < 2; k++) {
        c->row[k] = _mm512_loadu_si512((const void *)(t->row + 64 * k));
        c->inc[k] = _mm512_loadu_si512((const void *)(t->inc + 64 * k));
        c->key[k] = _mm512_loadu_si512((const void *)(t->key + 64 * k));
        c->cls[k] = _mm512_loadu_si512((const void *)(t->cls + 64 * k));
        c->cls[2 + k] = _mm512_loadu_si512((const void *)(t->cls + 128 + 64 * k));
    }
    /* Y: bfloat16's low byte (E's last bit on top, ignored), float16's bits
     * 3-10 (E's last bit on top); second: bfloat16's E (bits 7-14), float16's
     * low byte (its bits 0-2 give the sticky bit) */
    const int sy = t->f16 ? 3 : 0, se = t->f16 ? 0 : 7;
    _Alignas(64) uint8_t shift[64], py[64], pe[64], ps[64];
    for (int b = 0; b < 64; b++) {
        const int j = b % 8;
        shift[b] = (uint8_t)(j < 4 ? 16 * j + sy : 16 * (j - 4) + se);
        const int v = b / 32, l = b % 32; /* lane b: vector v, lane l there: quadword l / 4, place l % 4 */
        py[b] = (uint8_t)(v << 6 | (8 * (l / 4) + l % 4));
        pe[b] = (uint8_t)(py[b] + 4);
        ps[b] = (uint8_t)(v << 6 | (2 * l + 1));
    }
    c->shift = _mm512_load_si512((const void *)shift);
    c->pick_y = _mm512_load_si512((const void *)py);
    c->pick_e = _mm512_load_si512((const void *)pe);
    c->pick_s = _mm512_load_si512((const void *)ps);
    c->elow = _mm512_set1_epi8((char)t->elow);
    c->xnorm = _mm512_set1_epi8((char)t->xnorm);
    c->ovf = _mm512_set1_epi8((char)t->ovf);
    c->sign_bit = _mm512_set1_epi8((char)t->sign_bit);
    c->int_max = _mm512_set1_epi8((char)t->int_max);
    c->int_mask = _mm512_set1_epi8((char)t->int_mask);
}

/* What both entries do first: false where rest did the whole conversion
 * (source and results overlap: the second pass would read sources the
 * results may have overwritten). */
MXP_INLINE int lut_begin(lut_ctx *c, lut_marks *marks, void *dst, const void *src, size_t n, size_t in_size,
                         const mxp_x16_lut_tables *t)
{
    if ((uintptr_t)dst < (uintptr_t)src + in_size * n && (uintptr_t)src < (uintptr_t)dst + n) {
        t->rest(dst, src, n, &t->p);
        return 0;
    }
    lut_setup(c, t);
    *marks = (lut_marks){ SIZE_MAX, 0 };
    c->marks = marks;
    return 1;
}

/* ... and last: the second pass, if the loop noted anything. */
MXP_INLINE void lut_end(void *dst, const void *src, size_t n, const lut_ctx *c, const mxp_x16_lut_tables *t, int f32)
{
    if (c->marks->first == SIZE_MAX)
        return;
    if (t->f16)
        t->wide ? lut_rest(dst, src, n, c, t, 1, 1, 0) : lut_rest(dst, src, n, c, t, 1, 0, 0);
    else if (f32)
        t->wide ? lut_rest(dst, src, n, c, t, 0, 1, 1) : lut_rest(dst, src, n, c, t, 0, 0, 1);
    else
        t->wide ? lut_rest(dst, src, n, c, t, 0, 1, 0) : lut_rest(dst, src, n, c, t, 0, 0, 0);
}

/* The loop over [0, n) with the steps `name`_full and `name`_part (ctx c,
 * stream shape sh in scope). */
#define LUT_LOOP(name) mxp_stream_loop(dst, src, n, sh, name##_full, name##_part, &c)

#endif
