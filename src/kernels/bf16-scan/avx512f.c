/* The GEMM's check before the bfloat16 kernel: does a matrix hold a nonzero
 * |x| < 2^-63, whose products vdpbf16ps could flush?  32 values per
 * compare; the portable twin is has_tiny_bf16() in src/gemm/gemm.c. */
#include <immintrin.h>

#include "kernels/gemm-kernels.h"

/* ---- bfloat16 values too small for vdpbf16ps ------------------------------ */

bool mxp_bf16_has_tiny__avx512f(const uint16_t *x, size_t rows, size_t cols, size_t ld)
{
    const __m512i mag = _mm512_set1_epi16(0x7fff), one = _mm512_set1_epi16(1);
    const __m512i limit = _mm512_set1_epi16((127 - 63) << 7); /* the bits of 2^-63 */
    for (size_t r = 0; r < rows; r++) {
        const uint16_t *row = x + r * ld;
        __mmask32 tiny = 0;
        for (size_t c = 0; c < cols; c += 32) {
            const __mmask32 m = cols - c >= 32 ? ~0u : (__mmask32)((1u << (cols - c)) - 1);
            const __m512i v = _mm512_and_si512(_mm512_maskz_loadu_epi16(m, row + c), mag);
            /* 0 < v < limit  <=>  v - 1 < limit - 1 unsigned (v = 0 wraps) */
            tiny |= _mm512_mask_cmplt_epu16_mask(m, _mm512_sub_epi16(v, one), _mm512_sub_epi16(limit, one));
        }
        if (tiny)
            return true;
    }
    return false;
}
