/* float32 exp, log, tanh, sin, cos and the activations through SLEEF, AVX2:
 * 8 lanes, the tail through a padded copy.  See vmath-kernels.h. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/vmath-avx2.h"

size_t mxp_f32_vmath__avx2(int fn, float *y, const float *x, size_t n)
{
    const f32_fn f = fn < MXP_VMATH_F32_COUNT ? f32_fns[fn] : NULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        _mm256_storeu_ps(y + i, canonical_nan(f ? f(v) : f32_via_f64(fn, v)));
    }
    if (i < n) {
        float t[8] = { 0 };
        memcpy(t, x + i, (n - i) * sizeof t[0]);
        const __m256 v = _mm256_loadu_ps(t);
        _mm256_storeu_ps(t, canonical_nan(f ? f(v) : f32_via_f64(fn, v)));
        memcpy(y + i, t, (n - i) * sizeof t[0]);
    }
    return 0;
}

/* The checked loop of a 16-bit output: f32_h16 (float16) or f32_bf16,
 * bf16 a constant once inlined. */
static inline size_t h16_loop(int fn, float *y, const float *x, size_t n, int bf16)
{
    size_t i = 0, redo = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        _mm256_storeu_ps(y + i, bf16 ? f32_bf16(fn, v, &redo) : f32_h16(fn, v, &redo));
    }
    if (i < n) {
        float t[8] = { 0 }; /* the zeros: exp 1, log -inf, the rest 0: all settled */
        memcpy(t, x + i, (n - i) * sizeof t[0]);
        const __m256 v = _mm256_loadu_ps(t);
        _mm256_storeu_ps(t, bf16 ? f32_bf16(fn, v, &redo) : f32_h16(fn, v, &redo));
        memcpy(y + i, t, (n - i) * sizeof t[0]);
    }
    return redo;
}

size_t mxp_f32_vmath_to_f16__avx2(int fn, float *y, const float *x, size_t n)
{
    return h16_loop(fn, y, x, n, 0);
}

size_t mxp_f32_vmath_to_bf16__avx2(int fn, float *y, const float *x, size_t n)
{
    return h16_loop(fn, y, x, n, 1);
}
#else
typedef int mxp_f32_vmath_avx2_unused; /* built without SLEEF: nothing here */
#endif
