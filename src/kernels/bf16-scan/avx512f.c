/* The GEMM's check before the bfloat16 kernel: does a matrix hold a nonzero
 * |x| < 2^-63, whose products vdpbf16ps could flush?  32 values per
 * compare; the portable twin is scalar.c. */
#include <immintrin.h>

#include "kernels/pack-kernels.h"

/* ---- bfloat16 values too small for vdpbf16ps ------------------------------ */

bool mxp_bf16_scan_tiny__avx512f(const uint16_t *x, size_t rows, size_t cols, size_t ld)
{
    const __m512i mag = _mm512_set1_epi16(0x7fff), one = _mm512_set1_epi16(1);
    const __m512i limit = _mm512_set1_epi16((127 - 63) << 7); /* the bits of 2^-63 */
    /* 0 < |v| < limit  <=>  |v| - 1 < limit - 1 unsigned (|v| = 0 wraps to
     * 0xffff): the running unsigned minimum of |v| - 1 over a row, compared
     * once (a mask per vector cost twice the time) */
    for (size_t r = 0; r < rows; r++) {
        const uint16_t *row = x + r * ld;
        __m512i lo0 = _mm512_set1_epi16(-1), lo1 = lo0;
        size_t c = 0;
        for (; c + 64 <= cols; c += 64) {
            const __m512i v0 = _mm512_and_si512(_mm512_loadu_si512((const void *)(row + c)), mag);
            const __m512i v1 = _mm512_and_si512(_mm512_loadu_si512((const void *)(row + c + 32)), mag);
            lo0 = _mm512_min_epu16(lo0, _mm512_sub_epi16(v0, one));
            lo1 = _mm512_min_epu16(lo1, _mm512_sub_epi16(v1, one));
        }
        for (; c < cols; c += 32) { /* masked-off lanes load 0: 0xffff after the subtraction */
            const __mmask32 m = cols - c >= 32 ? ~0u : (__mmask32)((1u << (cols - c)) - 1);
            const __m512i v = _mm512_and_si512(_mm512_maskz_loadu_epi16(m, row + c), mag);
            lo0 = _mm512_min_epu16(lo0, _mm512_sub_epi16(v, one));
        }
        if (_mm512_cmplt_epu16_mask(_mm512_min_epu16(lo0, lo1), _mm512_sub_epi16(limit, one)))
            return true;
    }
    return false;
}
