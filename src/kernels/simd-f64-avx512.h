/* float64 vectors of AVX-512F under the names the operation templates use
 * (see simd-f32-avx2.h and simd-f32-avx512.h).  Only for files built with
 * the AVX-512 flags. */
#ifndef MXP_KERNELS_SIMD_F64_AVX512_H
#define MXP_KERNELS_SIMD_F64_AVX512_H

#ifdef MXP_SIMD_V
#error "a kernel file includes one simd-*.h"
#endif

#include <immintrin.h>

#define MXP_SIMD_T double
#define MXP_SIMD_V __m512d
#define MXP_SIMD_N 8
#define MXP_SIMD_MASKED 1
#define MXP_SIMD_MASK __mmask8
#define MXP_SIMD_MASK_ALL ((__mmask8)0xff)
#define MXP_SIMD_TAIL_MASK(k) ((__mmask8)((1u << (k)) - 1))

#define MXP_SIMD_LOADU _mm512_loadu_pd
#define MXP_SIMD_STOREU _mm512_storeu_pd
#define MXP_SIMD_MASKZ_LOADU _mm512_maskz_loadu_pd
#define MXP_SIMD_MASK_LOADU _mm512_mask_loadu_pd
#define MXP_SIMD_MASK_STOREU _mm512_mask_storeu_pd
#define MXP_SIMD_SET1 _mm512_set1_pd
#define MXP_SIMD_ADD _mm512_add_pd
#define MXP_SIMD_SUB _mm512_sub_pd
#define MXP_SIMD_MUL _mm512_mul_pd
#define MXP_SIMD_DIV _mm512_div_pd
#define MXP_SIMD_FMADD _mm512_fmadd_pd
#define MXP_SIMD_REDUCE_ADD _mm512_reduce_add_pd

#endif
