/* The float64 peak-rate loop of AVX-512: 12 independent accumulator chains
 * of 8 lanes, no memory traffic.  See peak-kernels.h. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/peak-kernels.h"

uint64_t mxp_f64_peak_fma__avx512f(uint64_t iters)
{
    __m512d acc[12];
    const __m512d x = _mm512_set1_pd(1.0000001), y = _mm512_set1_pd(0.9999999);
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++)
        acc[i] = _mm512_set1_pd((double)i);
    for (uint64_t it = 0; it < iters; it++) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++)
            acc[i] = _mm512_fmadd_pd(acc[i], x, y);
    }
    __m512d s = acc[0];
    for (int i = 1; i < 12; i++)
        s = _mm512_add_pd(s, acc[i]);
    volatile double sink = _mm512_reduce_add_pd(s);
    (void)sink;
    return iters * 12 * 8 * 2;
}
