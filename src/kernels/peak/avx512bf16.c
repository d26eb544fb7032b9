/* Peak loops for the AVX512_BF16 and AVX512_VNNI dot products (see
 * avx512f.c): vdpbf16ps does 16 x 2 multiply-adds, vpdpbusd 16 x 4. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/peak-kernels.h"

uint64_t mxp_peak_bf16_dot__avx512bf16(uint64_t iters)
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

uint64_t mxp_peak_u8s8_dot__avx512bf16(uint64_t iters)
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
