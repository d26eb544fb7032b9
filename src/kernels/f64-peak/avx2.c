/* The float64 peak-rate loop of AVX2 + FMA: 12 independent accumulator
 * chains of 4 lanes, no memory traffic.  See peak-kernels.h. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/peak-kernels.h"

uint64_t mxp_f64_peak_fma__avx2(uint64_t iters)
{
    __m256d acc[12];
    const __m256d x = _mm256_set1_pd(1.0000001), y = _mm256_set1_pd(0.9999999);
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++)
        acc[i] = _mm256_set1_pd((double)i);
    for (uint64_t it = 0; it < iters; it++) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++)
            acc[i] = _mm256_fmadd_pd(acc[i], x, y);
    }
    __m256d s = acc[0];
    for (int i = 1; i < 12; i++)
        s = _mm256_add_pd(s, acc[i]);
    double lanes[4];
    _mm256_storeu_pd(lanes, s);
    volatile double sink = lanes[0] + lanes[3];
    (void)sink;
    return iters * 12 * 4 * 2;
}
