/* The loop of the byte-lane table kernels (x16-lut-kernels.h), shared by
 * src/kernels/x16-lut/avx512vbmi.c (bfloat16/float16 sources) and
 * x32-lut/avx512vbmi.c (float32): bfloat16/float16/float32 -> the 8-bit
 * float formats and the small integers with AVX512_VBMI, 64 elements a
 * step.  vpermt2b gathers one byte of each 16-bit lane into one vector:
 * bfloat16's low byte (Y) and the high byte of 2h (E; the sign shifted
 * out), float16's high byte (the row index; the sign is ignored) and the
 * low byte of h >> 3 (bits 3-10; bits 0-2 give the sticky bit); the four
 * 128-entry tables are eight zmm registers that vpermi2b reads (the
 * index's top bit ignored).  On a Zen 4, where a 512-bit shuffle or shift
 * takes one of two pipes for two cycles and an add one of four,
 * bfloat16's E by vpaddw rather than vpmultishiftqb: 1.72 -> 1.64 ns per
 * 32 elements into float8_e4m3fn (in L2).  float32 is rounded to
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
    __m512i pick_lo, pick_hi; /* vpermt2b: the 64 lanes' low bytes, their high bytes */
    __m512i elow, xnorm, ovf, sign_bit, int_max, int_mask;
    __m128i sign_shift; /* 8 - the target's bits: a byte's bit 7 to its sign bit */
    lut_marks *marks;
} lut_ctx;

MXP_INLINE __m512i pick(__m512i a, __m512i idx, __m512i b) { return _mm512_permutex2var_epi8(a, idx, b); }

/* 64 results of the 32-lane vectors h0, h1; *special: the lanes the tables
 * leave to t->rest. */
MXP_INLINE __m512i lut_step(__m512i h0, __m512i h1, const lut_ctx *c, int f16, int fnuz, int kind, int wide,
                            int narrow, __mmask64 *special)
{
    __m512i x, y, row, idx, hi = _mm512_setzero_si512();
    __mmask64 normal;
    /* the patterns left to rest: float16's E = 31, bfloat16's E >= elow + 127 (X >= 127; past 127 vpermi2b
     * would wrap); the fnuz formats' overflowing rows (0x80) need no second pass: min() keeps their NaN */
    if (f16) { /* X: the high byte (the sign ignored); Y: bits 3-10, its last bit |= bits 2..0 */
        y = pick(_mm512_srli_epi16(h0, 3), c->pick_lo, _mm512_srli_epi16(h1, 3));
        const __m512i seven = _mm512_set1_epi16(7);
        const __mmask64 sticky = _mm512_kunpackd(_mm512_test_epi16_mask(h1, seven), _mm512_test_epi16_mask(h0, seven));
        y = _mm512_mask_mov_epi8(y, sticky, _mm512_or_si512(y, _mm512_set1_epi8(1)));
        hi = pick(h0, c->pick_hi, h1);
        x = hi;
        row = pick(c->row[0], x, c->row[1]);
        idx = _mm512_or_si512(row, pick(c->key[0], y, c->key[1]));
        const __m512i hi2 = _mm512_add_epi8(hi, hi);
        *special = _mm512_cmpge_epu8_mask(hi2, _mm512_set1_epi8((char)0xf8));
        normal = _mm512_cmpge_epu8_mask(hi2, c->xnorm);
    } else { /* Y: the low byte (E's last bit on top, ignored); E: the high byte of 2h */
        y = pick(h0, c->pick_lo, h1);
        const __m512i e = pick(_mm512_add_epi16(h0, h0), c->pick_hi, _mm512_add_epi16(h1, h1));
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
    /* the sign, the source's high byte's top bit, by vector operations where they beat the mask registers
     * (on a Zen 4 vpmovw2m, kunpckdq and the masked adds run one a cycle, 512-bit shuffles and shifts one
     * a cycle, adds two; ns per 32 in L2): an 8-bit float target's by one vpternlogd (bfloat16 ->
     * float8_e4m3fn 1.63 -> 1.56, float16 1.93 -> 1.78), float16 -> float6/float4's moved down by a shift
     * (1.94 -> 1.86), fnuz's where r is not 0 (bfloat16 1.89 -> 1.77, float16 2.15 -> 2.03: no -0; r +
     * 0x7f has bit 7 then, and the NaN 0x80 keeps its bits); bfloat16 -> float6/float4 and the integers
     * keep the masks */
    if (kind == MXP_X16_LUT_FLOAT && !fnuz && !narrow)
        return _mm512_ternarylogic_epi32(r, f16 ? hi : pick(h0, c->pick_hi, h1), c->sign_bit, 0xf8); /* r | s & 0x80 */
    if (kind == MXP_X16_LUT_FLOAT && !fnuz && f16)
        return _mm512_ternarylogic_epi32(r, _mm512_srl_epi16(hi, c->sign_shift), c->sign_bit, 0xf8);
    if (fnuz) {
        const __m512i s = _mm512_and_si512(f16 ? hi : pick(h0, c->pick_hi, h1), c->sign_bit);
        return _mm512_ternarylogic_epi32(r, s, _mm512_add_epi8(r, _mm512_set1_epi8(0x7f)), 0xf8); /* r | s & nz */
    }
    const __mmask64 neg = f16 ? _mm512_movepi8_mask(hi)
                              : _mm512_kunpackd(_mm512_movepi16_mask(h1), _mm512_movepi16_mask(h0));
    if (kind == MXP_X16_LUT_SIGNED) /* -r in b bits, or at most int_max */
        return _mm512_and_si512(_mm512_mask_sub_epi8(_mm512_min_epu8(r, c->int_max), neg, _mm512_setzero_si512(), r),
                                c->int_mask);
    if (kind == MXP_X16_LUT_UNSIGNED)
        return _mm512_maskz_mov_epi8(~neg, r);
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
                         int kind, int wide, int narrow, int f32)
{
    const lut_ctx *c = ctx;
    uint8_t *d = (uint8_t *)dst + i;
    __m512i h0, h1;
    __mmask64 special;
    lut_load(src, i, 64, f32, &h0, &h1);
    const __m512i r = lut_step(h0, h1, c, f16, fnuz, kind, wide, narrow, &special);
    if (special)
        lut_mark(c, i);
    if (stream)
        _mm512_stream_si512((__m512i *)d, r);
    else
        _mm512_storeu_si512((void *)d, r);
}

MXP_INLINE void lut_part(void *dst, const void *src, size_t i, size_t count, const void *ctx, int f16, int fnuz,
                         int kind, int wide, int narrow, int f32)
{
    const lut_ctx *c = ctx;
    __m512i h0, h1;
    __mmask64 special;
    lut_load(src, i, count, f32, &h0, &h1);
    const __m512i r = lut_step(h0, h1, c, f16, fnuz, kind, wide, narrow, &special);
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
        (void)lut_step(h0, h1, c, f16, 0, MXP_X16_LUT_FLOAT, wide, 0, &special);
        if (special & low_bits64(count))
            t->rest((uint8_t *)dst + i, (const char *)src + i * (f32 ? 4 : 2), count, &t->p);
    }
}

#define LUT_STEPS(name, f16, fnuz, kind, wide, narrow, f32)                                                         \
    MXP_INLINE void name##_full(void *dst, const void *src, size_t i, int stream, const void *ctx)                 \
    {                                                                                                               \
        lut_full(dst, src, i, stream, ctx, f16, fnuz, kind, wide, narrow, f32);                                     \
    }                                                                                                               \
    MXP_INLINE void name##_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)               \
    {                                                                                                               \
        lut_part(dst, src, i, count, ctx, f16, fnuz, kind, wide, narrow, f32);                                      \
    }
/* narrow: float6, float4 (the sign below bit 7) */
LUT_STEPS(bf16, 0, 0, MXP_X16_LUT_FLOAT, 0, 0, 0)
LUT_STEPS(bf16_n, 0, 0, MXP_X16_LUT_FLOAT, 0, 1, 0)
LUT_STEPS(bf16_fnuz, 0, 1, MXP_X16_LUT_FLOAT, 0, 0, 0)
LUT_STEPS(bf16_wide, 0, 0, MXP_X16_LUT_FLOAT, 1, 0, 0)
LUT_STEPS(bf16_s, 0, 0, MXP_X16_LUT_SIGNED, 0, 0, 0)
LUT_STEPS(bf16_u, 0, 0, MXP_X16_LUT_UNSIGNED, 0, 0, 0)
LUT_STEPS(f16, 1, 0, MXP_X16_LUT_FLOAT, 0, 0, 0)
LUT_STEPS(f16_n, 1, 0, MXP_X16_LUT_FLOAT, 0, 1, 0)
LUT_STEPS(f16_fnuz, 1, 1, MXP_X16_LUT_FLOAT, 0, 0, 0)
LUT_STEPS(f16_wide, 1, 0, MXP_X16_LUT_FLOAT, 1, 0, 0)
LUT_STEPS(f16_s, 1, 0, MXP_X16_LUT_SIGNED, 0, 0, 0)
LUT_STEPS(f16_u, 1, 0, MXP_X16_LUT_UNSIGNED, 0, 0, 0)
LUT_STEPS(f32, 0, 0, MXP_X16_LUT_FLOAT, 0, 0, 1)
LUT_STEPS(f32_n, 0, 0, MXP_X16_LUT_FLOAT, 0, 1, 1)
LUT_STEPS(f32_fnuz, 0, 1, MXP_X16_LUT_FLOAT, 0, 0, 1)
LUT_STEPS(f32_wide, 0, 0, MXP_X16_LUT_FLOAT, 1, 0, 1)
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
    _Alignas(64) uint8_t lo[64], hi[64];
    for (int b = 0; b < 64; b++) { /* lane b: vector b / 32, lane b % 32 there */
        lo[b] = (uint8_t)((b / 32) << 6 | 2 * (b % 32));
        hi[b] = (uint8_t)(lo[b] + 1);
    }
    c->pick_lo = _mm512_load_si512((const void *)lo);
    c->pick_hi = _mm512_load_si512((const void *)hi);
    c->elow = _mm512_set1_epi8((char)t->elow);
    c->xnorm = _mm512_set1_epi8((char)t->xnorm);
    c->ovf = _mm512_set1_epi8((char)t->ovf);
    c->sign_bit = _mm512_set1_epi8((char)t->sign_bit);
    c->sign_shift = _mm_cvtsi32_si128(__builtin_ctz(0x80u / t->sign_bit));
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
