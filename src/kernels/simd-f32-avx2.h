/* float32 vectors of AVX2 + FMA under the names the operation templates
 * use (arith-template.h, peak-template.h, ...), in the style of ggml's
 * GGML_F32_VEC_*: a kernel file includes one simd-<dtype>-<isa>.h, then the
 * template, and the template's loop compiles to these intrinsics.  No masked
 * loads at this level (MXP_SIMD_MASKED 0): a template finishes a tail element
 * by element or through a zero-padded copy.  Only for files built with the
 * AVX2 flags. */
#ifndef MXP_KERNELS_SIMD_F32_AVX2_H
#define MXP_KERNELS_SIMD_F32_AVX2_H

#ifdef MXP_SIMD_V
#error "a kernel file includes one simd-*.h"
#endif

#include <immintrin.h>

#define MXP_SIMD_T float
#define MXP_SIMD_V __m256
#define MXP_SIMD_N 8
#define MXP_SIMD_MASKED 0

#define MXP_SIMD_LOADU _mm256_loadu_ps
#define MXP_SIMD_STOREU _mm256_storeu_ps
#define MXP_SIMD_SET1 _mm256_set1_ps
#define MXP_SIMD_ADD _mm256_add_ps
#define MXP_SIMD_SUB _mm256_sub_ps
#define MXP_SIMD_MUL _mm256_mul_ps
#define MXP_SIMD_DIV _mm256_div_ps
#define MXP_SIMD_FMADD _mm256_fmadd_ps

/* the sum of the lanes (pairwise, high half onto low) */
static inline __attribute__((always_inline)) float mxp_simd_reduce_add(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
#define MXP_SIMD_REDUCE_ADD mxp_simd_reduce_add

#endif
