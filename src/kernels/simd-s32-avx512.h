/* int32 vectors of AVX-512F under the names the operation templates use
 * (see simd-f32-avx2.h): the accumulators of the byte dot products.
 * Wrapping addition.  Only for files built with the AVX-512 flags. */
#ifndef MXP_KERNELS_SIMD_S32_AVX512_H
#define MXP_KERNELS_SIMD_S32_AVX512_H

#ifdef MXP_SIMD_V
#error "a kernel file includes one simd-*.h"
#endif

#include <immintrin.h>
#include <stdint.h>

#define MXP_SIMD_T int32_t
#define MXP_SIMD_V __m512i
#define MXP_SIMD_N 16

#define MXP_SIMD_SET1 _mm512_set1_epi32
#define MXP_SIMD_ADD _mm512_add_epi32
#define MXP_SIMD_REDUCE_ADD _mm512_reduce_add_epi32

#endif
