/* The maximum pass of the AVX2 softmax rows (softmax-avx2.h for float32,
 * bf16-narrow-avx2.h for bfloat16): 16 elements a step into two chains
 * each of the maximum, the minimum and the NaN test (one chain of vmaxps,
 * latency 4, held the pass at 4 cycles per 8 elements). */
#ifndef MXP_KERNELS_MAXMIN_AVX2_H
#define MXP_KERNELS_MAXMIN_AVX2_H

#include <immintrin.h>

/* v0 into chain 0 and v1 into chain 1 of m (maxima), l (minima), n (NaN
 * lanes). */
static inline __attribute__((always_inline)) void mxp_maxmin2_avx2(__m256 v0, __m256 v1, __m256 m[2], __m256 l[2],
                                                                   __m256 n[2])
{
    n[0] = _mm256_or_ps(n[0], _mm256_cmp_ps(v0, v0, _CMP_UNORD_Q));
    n[1] = _mm256_or_ps(n[1], _mm256_cmp_ps(v1, v1, _CMP_UNORD_Q));
    m[0] = _mm256_max_ps(v0, m[0]);
    m[1] = _mm256_max_ps(v1, m[1]);
    l[0] = _mm256_min_ps(v0, l[0]);
    l[1] = _mm256_min_ps(v1, l[1]);
}

#endif
