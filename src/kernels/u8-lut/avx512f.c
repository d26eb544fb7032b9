/* dst[i] = table[src[i]] for 8-bit sources and a 256-entry table of 8-bit
 * results, with AVX-512BW: 64 bytes per step, one vpshufb per high nibble
 * (16 entries of the table each, chosen by a compare of the high nibble).
 * The table is the reference converter's answer for every source pattern
 * (src/convert/convert.c), so results equal the reference's by
 * construction; the twin is mxp_lut8_ref (src/convert/convert-ref.c).
 * Reads 64 bytes before writing them: safe in place. */
#include <immintrin.h>

#include "kernels/u8-lut-kernels.h"

#include "kernels/stream-loop.h"

MXP_INLINE __m512i lookup64(__m512i x, const __m512i *t)
{
    const __m512i lo = _mm512_and_si512(x, _mm512_set1_epi8(0x0f));
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), _mm512_set1_epi8(0x0f));
    __m512i r = _mm512_shuffle_epi8(t[0], lo);
    for (int k = 1; k < 16; k++)
        r = _mm512_mask_shuffle_epi8(r, _mm512_cmpeq_epi8_mask(hi, _mm512_set1_epi8((char)k)), t[k], lo);
    return r;
}

#include "kernels/u8-lut/x8-step.h"

void mxp_u8_lut_x8__avx512f(void *dst, const void *src, size_t n, const uint8_t *table)
{
    __m512i t[16];
    for (int k = 0; k < 16; k++)
        t[k] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(table + 16 * k)));
    mxp_stream_loop(dst, src, n, (mxp_stream_shape){ 1, 1, 64, 64 }, lut8_full, lut8_part, t);
}
