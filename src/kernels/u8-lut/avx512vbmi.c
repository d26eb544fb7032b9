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

#include "kernels/cvt-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))
#define MXP_LUT_STREAM_BYTES (4u << 20) /* as MXP_STREAM_BYTES */

/* 64 table entries: t[0..3] hold entries 0-63, 64-127, 128-191, 192-255. */
MXP_INLINE __m512i lookup64(__m512i x, const __m512i *t)
{
    const __m512i lo = _mm512_permutex2var_epi8(t[0], x, t[1]);
    const __m512i hi = _mm512_permutex2var_epi8(t[2], x, t[3]);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi);
}

MXP_INLINE __mmask64 low_bits64(size_t k) { return (__mmask64)(k >= 64 ? ~0ull : ~(~0ull << k)); }

void mxp_lut8_u8__avx512vbmi(void *dst, const void *src, size_t n, const uint8_t *table)
{
    __m512i t[4];
    for (int k = 0; k < 4; k++)
        t[k] = _mm512_loadu_si512((const void *)(table + 64 * k));
    const uint8_t *s = src;
    uint8_t *d = dst;
    size_t i = 0;
    /* Large outputs bypass the cache, as memcpy does; the head is converted
     * until dst is aligned. */
    const int stream = n * 2 >= MXP_LUT_STREAM_BYTES;
    if (stream) {
        size_t head = (64 - (uintptr_t)d % 64) % 64;
        head = head < n ? head : n;
        if (head) {
            const __mmask64 mask = low_bits64(head);
            _mm512_mask_storeu_epi8(d, mask, lookup64(_mm512_maskz_loadu_epi8(mask, s), t));
            i = head;
        }
    }
    for (; i + 64 <= n; i += 64) {
        const __m512i r = lookup64(_mm512_loadu_si512((const void *)(s + i)), t);
        if (stream)
            _mm512_stream_si512((__m512i *)(d + i), r);
        else
            _mm512_storeu_si512((void *)(d + i), r);
    }
    if (i < n) {
        const __mmask64 mask = low_bits64(n - i);
        _mm512_mask_storeu_epi8(d + i, mask, lookup64(_mm512_maskz_loadu_epi8(mask, s + i), t));
    }
    if (stream)
        _mm_sfence();
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
MXP_INLINE void part16(uint16_t *d, const uint8_t *s, size_t count, const lut16 *t)
{
    __m512i r0, r1;
    lookup64x16(_mm512_maskz_loadu_epi8(low_bits64(count), s), t, &r0, &r1);
    _mm512_mask_storeu_epi16(d, (__mmask32)low_bits64(count), r0);
    if (count > 32)
        _mm512_mask_storeu_epi16(d + 32, (__mmask32)low_bits64(count - 32), r1);
}

void mxp_lut8_u16__avx512vbmi(void *dst, const void *src, size_t n, const uint16_t *table)
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
    const uint8_t *s = src;
    uint16_t *d = dst;
    size_t i = 0;
    const int stream = n * 3 >= MXP_LUT_STREAM_BYTES && (uintptr_t)d % 2 == 0;
    if (stream) {
        size_t head = ((64 - (uintptr_t)d % 64) % 64) / 2;
        head = head < n ? head : n;
        if (head) {
            part16(d, s, head, &t);
            i = head;
        }
    }
    for (; i + 64 <= n; i += 64) {
        __m512i r0, r1;
        lookup64x16(_mm512_loadu_si512((const void *)(s + i)), &t, &r0, &r1);
        if (stream) {
            _mm512_stream_si512((__m512i *)(d + i), r0);
            _mm512_stream_si512((__m512i *)(d + i + 32), r1);
        } else {
            _mm512_storeu_si512((void *)(d + i), r0);
            _mm512_storeu_si512((void *)(d + i + 32), r1);
        }
    }
    if (i < n)
        part16(d + i, s + i, n - i, &t);
    if (stream)
        _mm_sfence();
}
