/* The peak-rate loop of AVX512_BF16's dot product: vdpbf16ps does 16 x 2
 * multiply-adds; 12 independent chains, no memory traffic.  See
 * peak-kernels.h. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/peak-kernels.h"

uint64_t mxp_bf16_peak_dot__avx512bf16(uint64_t iters)
{
    __m512 acc[12];
    const __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = (__m512bh)_mm512_set1_epi32(0x3f7f3f7f);
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++) /* distinct, or the compiler merges the chains into one */
        acc[i] = _mm512_set1_ps((float)i);
    for (uint64_t it = 0; it < iters; it++) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++)
            acc[i] = _mm512_dpbf16_ps(acc[i], x, y);
    }
    __m512 s = acc[0];
    for (int i = 1; i < 12; i++)
        s = _mm512_add_ps(s, acc[i]);
    volatile float sink = _mm512_reduce_add_ps(s);
    (void)sink;
    return iters * 12 * 16 * 2 * 2;
}
