/* float32 -> int8/uint8 codes, 32 values per iteration, the AVX-512 kernel's
 * method on 8 lanes (see quant-kernels.h): y = x * (1/scale) (rounded by the
 * MXCSR mode: at most 2 ulp, inside the margin), q = round_even(y), lanes
 * near x.5 or not finite redone one by one by the reference. */
#include <immintrin.h>

#include "kernels/quant-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))
#define RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* Codes of 8 values as int32 lanes; *bad gets the lanes' boundary flags. */
MXP_INLINE __m256i quant8(const float *x, __m256 r, __m256 zp, __m256 lo, __m256 hi, __m256 edge, __m256 absmask,
                          unsigned *bad)
{
    const __m256 y = _mm256_mul_ps(_mm256_loadu_ps(x), r);
    __m256 q = _mm256_round_ps(y, RNE);
    const __m256 d = _mm256_and_ps(_mm256_sub_ps(y, q), absmask);
    *bad = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(d, edge, _CMP_NLE_UQ));
    q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, zp), lo), hi);
    return _mm256_cvtps_epi32(q);
}

void mxp_f32_quant__avx2(uint8_t *dst, const float *x, size_t n, float scale, int32_t zp, int32_t qmin,
                         int32_t qmax)
{
    if (!(scale >= MXP_QUANT_SCALE_MIN && scale <= MXP_QUANT_SCALE_MAX)) {
        mxp_f32_quant__scalar(dst, x, n, scale, zp, qmin, qmax);
        return;
    }
    const __m256 r = _mm256_set1_ps(1.0f / scale), z = _mm256_set1_ps((float)zp);
    const __m256 lo = _mm256_set1_ps((float)qmin), hi = _mm256_set1_ps((float)qmax);
    const __m256 edge = _mm256_set1_ps(0.5f - MXP_QUANT_TIE_MARGIN);
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    const int is_signed = qmin < 0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        unsigned b0, b1, b2, b3;
        const __m256i q0 = quant8(x + i, r, z, lo, hi, edge, absmask, &b0);
        const __m256i q1 = quant8(x + i + 8, r, z, lo, hi, edge, absmask, &b1);
        const __m256i q2 = quant8(x + i + 16, r, z, lo, hi, edge, absmask, &b2);
        const __m256i q3 = quant8(x + i + 24, r, z, lo, hi, edge, absmask, &b3);
        /* int32 -> int16 -> bytes (values already clamped: no saturation happens) */
        const __m256i w01 = _mm256_packs_epi32(q0, q1), w23 = _mm256_packs_epi32(q2, q3);
        const __m256i b = is_signed ? _mm256_packs_epi16(w01, w23) : _mm256_packus_epi16(w01, w23);
        _mm256_storeu_si256((__m256i *)(dst + i), _mm256_permutevar8x32_epi32(b, order));
        for (uint32_t bad = b0 | b1 << 8 | b2 << 16 | b3 << 24; bad; bad &= bad - 1) { /* lane by lane */
            const size_t j = i + (size_t)__builtin_ctz(bad);
            mxp_f32_quant__scalar(dst + j, x + j, 1, scale, zp, qmin, qmax);
        }
    }
    mxp_f32_quant__scalar(dst + i, x + i, n - i, scale, zp, qmin, qmax);
}
