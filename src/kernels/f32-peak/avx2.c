/* The float32 peak-rate loop of AVX2 + FMA: 12 independent accumulator
 * chains of 8 lanes, no memory traffic.  See peak-kernels.h. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/peak-kernels.h"

uint64_t mxp_f32_peak_fma__avx2(uint64_t iters)
{
    __m256 acc[12];
    const __m256 x = _mm256_set1_ps(1.0000001f), y = _mm256_set1_ps(0.9999999f);
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++)
        acc[i] = _mm256_set1_ps((float)i);
    for (uint64_t it = 0; it < iters; it++) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++)
            acc[i] = _mm256_fmadd_ps(acc[i], x, y);
    }
    __m256 s = acc[0];
    for (int i = 1; i < 12; i++)
        s = _mm256_add_ps(s, acc[i]);
    float lanes[8];
    _mm256_storeu_ps(lanes, s);
    volatile float sink = lanes[0] + lanes[7];
    (void)sink;
    return iters * 12 * 8 * 2;
}
