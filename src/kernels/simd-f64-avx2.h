/* float64 vectors of AVX2 + FMA under the names the operation templates
 * use: simd-f32-avx2.h's set for float64 (see there).  Only for files built
 * with the AVX2 flags. */
#ifndef MXP_KERNELS_SIMD_F64_AVX2_H
#define MXP_KERNELS_SIMD_F64_AVX2_H

#ifdef MXP_SIMD_V
#error "a kernel file includes one simd-*.h"
#endif

#include <immintrin.h>

#define MXP_SIMD_T double
#define MXP_SIMD_V __m256d
#define MXP_SIMD_N 4
#define MXP_SIMD_MASKED 0

#define MXP_SIMD_LOADU _mm256_loadu_pd
#define MXP_SIMD_STOREU _mm256_storeu_pd
#define MXP_SIMD_SET1 _mm256_set1_pd
#define MXP_SIMD_ADD _mm256_add_pd
#define MXP_SIMD_SUB _mm256_sub_pd
#define MXP_SIMD_MUL _mm256_mul_pd
#define MXP_SIMD_DIV _mm256_div_pd
#define MXP_SIMD_FMADD _mm256_fmadd_pd

/* the sum of the lanes (pairwise, high half onto low) */
static inline __attribute__((always_inline)) double mxp_simd_reduce_add(__m256d v)
{
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
#define MXP_SIMD_REDUCE_ADD mxp_simd_reduce_add

#endif
