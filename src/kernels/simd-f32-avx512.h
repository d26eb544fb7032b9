/* float32 vectors of AVX-512F under the names the operation templates use
 * (see simd-f32-avx2.h).  Masked loads and stores (MXP_SIMD_MASKED 1): a
 * template finishes a tail with MXP_SIMD_TAIL_MASK(k), the first k < 32
 * lanes.  Only for files built with the AVX-512 flags. */
#ifndef MXP_KERNELS_SIMD_F32_AVX512_H
#define MXP_KERNELS_SIMD_F32_AVX512_H

#ifdef MXP_SIMD_V
#error "a kernel file includes one simd-*.h"
#endif

#include <immintrin.h>

#define MXP_SIMD_T float
#define MXP_SIMD_V __m512
#define MXP_SIMD_N 16
#define MXP_SIMD_MASKED 1
#define MXP_SIMD_MASK __mmask16
#define MXP_SIMD_MASK_ALL ((__mmask16)0xffff)
#define MXP_SIMD_TAIL_MASK(k) ((__mmask16)((1u << (k)) - 1))

#define MXP_SIMD_LOADU _mm512_loadu_ps
#define MXP_SIMD_STOREU _mm512_storeu_ps
#define MXP_SIMD_MASKZ_LOADU _mm512_maskz_loadu_ps
#define MXP_SIMD_MASK_LOADU _mm512_mask_loadu_ps
#define MXP_SIMD_MASK_STOREU _mm512_mask_storeu_ps
#define MXP_SIMD_SET1 _mm512_set1_ps
#define MXP_SIMD_ADD _mm512_add_ps
#define MXP_SIMD_SUB _mm512_sub_ps
#define MXP_SIMD_MUL _mm512_mul_ps
#define MXP_SIMD_DIV _mm512_div_ps
#define MXP_SIMD_FMADD _mm512_fmadd_ps
#define MXP_SIMD_REDUCE_ADD _mm512_reduce_add_ps

#endif
