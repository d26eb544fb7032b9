/* The float32 peak-rate loop of AVX-512: 12 independent accumulator chains
 * of 16 lanes, no memory traffic.  See peak-kernels.h. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/peak-kernels.h"

uint64_t mxp_f32_peak_fma__avx512f(uint64_t iters)
{
    __m512 acc[12];
    const __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(0.9999999f);
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++)
        acc[i] = _mm512_set1_ps((float)i);
    for (uint64_t it = 0; it < iters; it++) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++)
            acc[i] = _mm512_fmadd_ps(acc[i], x, y);
    }
    __m512 s = acc[0];
    for (int i = 1; i < 12; i++)
        s = _mm512_add_ps(s, acc[i]);
    volatile float sink = _mm512_reduce_add_ps(s);
    (void)sink;
    return iters * 12 * 16 * 2;
}
