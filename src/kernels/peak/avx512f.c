/* In-register loops that measure the machine's peak rate for one
 * instruction (the tour's GEMM section): 12 independent accumulator chains,
 * no memory traffic.  Each returns the floating-point operations done. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/peak-kernels.h"

uint64_t mxp_peak_f32_fma__avx512f(uint64_t iters)
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

uint64_t mxp_peak_f64_fma__avx512f(uint64_t iters)
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
