/* dst[i] = table[src[i]] for 8-bit sources with AVX512_VBMI: the 256-entry
 * table of 8-bit results is four zmm registers, and 64 results take two
 * vpermi2b (entries 0-127 and 128-255, each indexed by the low 7 bits) and
 * one blend on the index's top bit:
 *
 *   x = 1 iiiiiii  ->  t[2..3][iiiiiii]       x = 0 iiiiiii  ->  t[0..1][iiiiiii]
 *
 * 16-bit results keep two such byte planes (the low and the high bytes of
 * every entry) and interleave them with two more vpermi2b.  The tables are
 * the reference converter's answers for all 256 source patterns
 * (src/convert/convert.c), so results equal the reference's by
 * construction; the twins are mxp_lut8_ref and mxp_lut16_ref
 * (src/convert/convert-ref.c).  Each step reads its 64 source bytes before
 * writing: the 8-bit kernel is safe in place. */
#include <immintrin.h>

#include "kernels/u8-lut-kernels.h"

#include "kernels/stream-loop.h"

/* 64 table entries: t[0..3] hold entries 0-63, 64-127, 128-191, 192-255. */
MXP_INLINE __m512i lookup64(__m512i x, const __m512i *t)
{
    const __m512i lo = _mm512_permutex2var_epi8(t[0], x, t[1]);
    const __m512i hi = _mm512_permutex2var_epi8(t[2], x, t[3]);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi);
}

#include "kernels/u8-lut/x8-step.h"

MXP_INLINE __mmask64 low_bits64(size_t k) { return (__mmask64)(k >= 64 ? ~0ull : ~(~0ull << k)); }

void mxp_u8_lut_x8__avx512vbmi(void *dst, const void *src, size_t n, const uint8_t *table)
{
    __m512i t[4];
    for (int k = 0; k < 4; k++)
        t[k] = _mm512_loadu_si512((const void *)(table + 64 * k));
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 1, 1, 64, 64 }, lut8_full, lut8_part, t);
}

/* 16-bit results: byte planes lo[] and hi[], interleaved as
 *   out0 = lo0 hi0 lo1 hi1 ... lo31 hi31,  out1 = lo32 hi32 ... lo63 hi63. */
typedef struct lut16 {
    __m512i lo[4], hi[4], even, odd;
} lut16;

MXP_INLINE void lookup64x16(__m512i x, const lut16 *t, __m512i *out0, __m512i *out1)
{
    const __m512i lo = lookup64(x, t->lo), hi = lookup64(x, t->hi);
    *out0 = _mm512_permutex2var_epi8(lo, t->even, hi);
    *out1 = _mm512_permutex2var_epi8(lo, t->odd, hi);
}

/* Elements [i, i + count), count < 64, unaligned stores. */
MXP_INLINE void lut16_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    uint16_t *d = (uint16_t *)dst + i;
    __m512i r0, r1;
    lookup64x16(_mm512_maskz_loadu_epi8(low_bits64(count), (const uint8_t *)src + i), ctx, &r0, &r1);
    _mm512_mask_storeu_epi16(d, (__mmask32)low_bits64(count), r0);
    if (count > 32)
        _mm512_mask_storeu_epi16(d + 32, (__mmask32)low_bits64(count - 32), r1);
}

MXP_INLINE void lut16_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    uint16_t *d = (uint16_t *)dst + i;
    __m512i r0, r1;
    lookup64x16(_mm512_loadu_si512((const void *)((const uint8_t *)src + i)), ctx, &r0, &r1);
    if (stream) {
        _mm512_stream_si512((__m512i *)d, r0);
        _mm512_stream_si512((__m512i *)(d + 32), r1);
    } else {
        _mm512_storeu_si512((void *)d, r0);
        _mm512_storeu_si512((void *)(d + 32), r1);
    }
}

void mxp_u8_lut_x16__avx512vbmi(void *dst, const void *src, size_t n, const uint16_t *table)
{
    lut16 t;
    _Alignas(64) uint8_t lo[256], hi[256], ie[64], io[64];
    for (int k = 0; k < 256; k++) {
        lo[k] = (uint8_t)table[k];
        hi[k] = (uint8_t)(table[k] >> 8);
    }
    for (int j = 0; j < 32; j++) { /* byte j of lo: index j; of hi: 64 + j */
        ie[2 * j] = (uint8_t)j;
        ie[2 * j + 1] = (uint8_t)(64 + j);
        io[2 * j] = (uint8_t)(32 + j);
        io[2 * j + 1] = (uint8_t)(96 + j);
    }
    for (int k = 0; k < 4; k++) {
        t.lo[k] = _mm512_load_si512((const void *)(lo + 64 * k));
        t.hi[k] = _mm512_load_si512((const void *)(hi + 64 * k));
    }
    t.even = _mm512_load_si512((const void *)ie);
    t.odd = _mm512_load_si512((const void *)io);
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 1, 2, 64, 64 }, lut16_full, lut16_part, &t);
}

/* 64-bit results whose low 40 bits are zero in every entry (float64 values
 * of 8-bit sources: at most 12 significand bits): three byte planes (bytes
 * 5, 6 and 7 of every entry), each 64 results placed into eight vectors of
 * eight 64-bit lanes by vpermt2b/vpermb under byte masks, the other bytes 0:
 *
 *   lane q of vector j:  0 0 0 0 0 b5[8j+q] b6[8j+q] b7[8j+q]  (bytes, low first) */
typedef struct lut64 {
    __m512i p5[4], p6[4], p7[4];
    const uint8_t *idx; /* idx64's rows */
} lut64;

/* For vector j: idx[j][0..63] feeds bytes 6 and 7 (b6 from 0-63, b7 from
 * 64-127), idx[j][64..127] byte 5; the other bytes are masked off. */
static void idx64(uint8_t idx[8][128])
{
    for (int j = 0; j < 8; j++)
        for (int q = 0; q < 8; q++) {
            idx[j][8 * q + 6] = (uint8_t)(8 * j + q);
            idx[j][8 * q + 7] = (uint8_t)(64 + 8 * j + q);
            idx[j][64 + 8 * q + 5] = (uint8_t)(8 * j + q);
        }
}

MXP_INLINE __m512i place64(__m512i b5, __m512i b6, __m512i b7, const uint8_t *idx, int j)
{
    const __m512i r = _mm512_maskz_permutex2var_epi8((__mmask64)0xc0c0c0c0c0c0c0c0ull, b6,
                                                     _mm512_load_si512((const void *)(idx + 128 * j)), b7);
    return _mm512_mask_permutexvar_epi8(r, (__mmask64)0x2020202020202020ull,
                                        _mm512_load_si512((const void *)(idx + 128 * j + 64)), b5);
}

/* count < 64 elements: masked. */
MXP_INLINE void lut64_part(void *dst, const void *src, size_t i, size_t count, const void *ctx)
{
    const lut64 *t = ctx;
    uint64_t *d = (uint64_t *)dst + i;
    const __m512i x = _mm512_maskz_loadu_epi8(low_bits64(count), (const uint8_t *)src + i);
    const __m512i b5 = lookup64(x, t->p5), b6 = lookup64(x, t->p6), b7 = lookup64(x, t->p7);
    for (int j = 0; 8 * (size_t)j < count; j++) {
        const size_t left = count - 8 * (size_t)j;
        _mm512_mask_storeu_epi64(d + 8 * j, (__mmask8)(left >= 8 ? 0xff : (1u << left) - 1), place64(b5, b6, b7, t->idx, j));
    }
}

MXP_INLINE void lut64_full(void *dst, const void *src, size_t i, int stream, const void *ctx)
{
    const lut64 *t = ctx;
    uint64_t *d = (uint64_t *)dst + i;
    const __m512i x = _mm512_loadu_si512((const void *)((const uint8_t *)src + i));
    const __m512i b5 = lookup64(x, t->p5), b6 = lookup64(x, t->p6), b7 = lookup64(x, t->p7);
    for (int j = 0; j < 8; j++) {
        const __m512i r = place64(b5, b6, b7, t->idx, j);
        if (stream)
            _mm512_stream_si512((__m512i *)(d + 8 * j), r);
        else
            _mm512_storeu_si512((void *)(d + 8 * j), r);
    }
}

void mxp_u8_lut_x64__avx512vbmi(void *dst, const void *src, size_t n, const uint64_t *table)
{
    lut64 t;
    _Alignas(64) uint8_t p[3][256];
    for (int k = 0; k < 256; k++)
        for (int b = 0; b < 3; b++)
            p[b][k] = (uint8_t)(table[k] >> (40 + 8 * b));
    for (int k = 0; k < 4; k++) {
        t.p5[k] = _mm512_load_si512((const void *)(p[0] + 64 * k));
        t.p6[k] = _mm512_load_si512((const void *)(p[1] + 64 * k));
        t.p7[k] = _mm512_load_si512((const void *)(p[2] + 64 * k));
    }
    _Alignas(64) uint8_t idx_rows[8][128] = { { 0 } };
    idx64(idx_rows);
    t.idx = &idx_rows[0][0];
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 1, 8, 64, 64 }, lut64_full, lut64_part, &t);
}
