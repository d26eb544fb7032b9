/* The peak-rate loop of AVX512_VNNI's byte dot product (the avx512bf16
 * level has VNNI): vpdpbusd does 16 x 4 multiply-adds; 12 independent
 * chains, no memory traffic.  See peak-kernels.h. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/peak-kernels.h"

uint64_t mxp_u8s8_peak_dot__avx512bf16(uint64_t iters)
{
    __m512i acc[12];
    const __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-2);
#pragma GCC unroll 12
    for (int i = 0; i < 12; i++) /* distinct, or the compiler merges the chains into one */
        acc[i] = _mm512_set1_epi32(i);
    for (uint64_t it = 0; it < iters; it++) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++)
            acc[i] = _mm512_dpbusd_epi32(acc[i], x, y);
    }
    __m512i s = acc[0];
    for (int i = 1; i < 12; i++)
        s = _mm512_add_epi32(s, acc[i]);
    volatile int sink = _mm512_reduce_add_epi32(s);
    (void)sink;
    return iters * 12 * 16 * 4 * 2;
}
