/* B~ for the vdpbf16ps kernel (src/kernels/bf16-gemm/), with the check for
 * values it would flush on the way: the portable twin is scalar.c. */
#include <immintrin.h>

#include "kernels/pack-kernels.h"

/* Rows 2q and 2q+1 of 32 columns into [32][2] (one row of a panel):
 *   x = r0[0] r0[1] ... r0[31], y = r1[0] ... r1[31]
 *   out0 = r0[0] r1[0] r0[1] r1[1] ... r0[15] r1[15], out1 = columns 16 .. 31
 * and the running minimum of |v| - 1 (0 wraps to 0xffff) over both rows. */
static inline void pair_row(__m512i x, __m512i y, __m512i lo_idx, __m512i hi_idx, uint32_t *out, __m512i *lo)
{
    const __m512i mag = _mm512_set1_epi16(0x7fff), one = _mm512_set1_epi16(1);
    _mm512_storeu_si512((void *)out, _mm512_permutex2var_epi16(x, lo_idx, y));
    _mm512_storeu_si512((void *)(out + 16), _mm512_permutex2var_epi16(x, hi_idx, y));
    const __m512i kx = _mm512_sub_epi16(_mm512_and_si512(x, mag), one);
    const __m512i ky = _mm512_sub_epi16(_mm512_and_si512(y, mag), one);
    *lo = _mm512_min_epu16(*lo, _mm512_min_epu16(kx, ky));
}

bool mxp_bf16_pack_b_pairs_32__avx512f(const uint16_t *b, size_t ld, size_t kc, size_t nc, uint32_t *dst)
{
    enum { NR = 32, PAIRS = 4 }; /* pairs of rows at a time: each panel's 4 x 128 bytes written together */
    __m512i lo_idx, hi_idx; /* word 2c <- x[c], 2c + 1 <- y[c] (index 32 + c) */
    {
        uint16_t lo_i[32], hi_i[32];
        for (int c = 0; c < 16; c++) {
            lo_i[2 * c] = (uint16_t)c, lo_i[2 * c + 1] = (uint16_t)(32 + c);
            hi_i[2 * c] = (uint16_t)(16 + c), hi_i[2 * c + 1] = (uint16_t)(48 + c);
        }
        lo_idx = _mm512_loadu_si512((const void *)lo_i);
        hi_idx = _mm512_loadu_si512((const void *)hi_i);
    }
    const size_t pairs = (kc + 1) / 2, panel = NR * pairs, panels = (nc + NR - 1) / NR;
    __m512i lo = _mm512_set1_epi16(-1);
    for (size_t q0 = 0; q0 < pairs; q0 += PAIRS) {
        const size_t q1 = pairs - q0 < PAIRS ? pairs : q0 + PAIRS;
        for (size_t jp = 0; jp < panels; jp++) {
            const size_t c = jp * NR;
            /* masked-off columns load 0: zero padding, and 0xffff keys */
            const __mmask32 m = nc - c >= NR ? ~(__mmask32)0 : (__mmask32)((1u << (nc - c)) - 1);
            for (size_t q = q0; q < q1; q++) {
                const uint16_t *r0 = b + 2 * q * ld + c;
                const __m512i x = _mm512_maskz_loadu_epi16(m, r0);
                const __m512i y = 2 * q + 1 < kc ? _mm512_maskz_loadu_epi16(m, r0 + ld) : _mm512_setzero_si512();
                pair_row(x, y, lo_idx, hi_idx, dst + jp * panel + q * NR, &lo);
            }
        }
    }
    return _mm512_cmplt_epu16_mask(lo, _mm512_set1_epi16(((127 - 63) << 7) - 1)) != 0; /* 2^-63's bits - 1 */
}
