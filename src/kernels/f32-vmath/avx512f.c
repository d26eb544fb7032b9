/* float32 exp, log, tanh, sin, cos and the activations through SLEEF,
 * AVX-512: 16 lanes, the tail through masked loads and stores.  See
 * vmath-kernels.h. */
#include "kernels/vmath-kernels.h"

#ifdef MXP_HAVE_SLEEF
#include "kernels/vmath-avx512f.h"

size_t mxp_f32_vmath__avx512f(int fn, float *y, const float *x, size_t n)
{
    size_t i = 0;
    if (fn >= MXP_VMATH_F32_COUNT) {
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_ps(y + i, canonical_nan(f32_via_f64(fn, _mm512_loadu_ps(x + i))));
        if (i < n) {
            const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
            _mm512_mask_storeu_ps(y + i, m, canonical_nan(f32_via_f64(fn, _mm512_maskz_loadu_ps(m, x + i))));
        }
        return 0;
    }
    const f32_fn f = f32_fns[fn];
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, canonical_nan(f(_mm512_loadu_ps(x + i))));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, canonical_nan(f(_mm512_maskz_loadu_ps(m, x + i))));
    }
    return 0;
}

/* The checked loop of a 16-bit output: f32_h16 (float16) or f32_bf16,
 * bf16 (and fn, where the caller knows it) a constant once inlined. */
static inline __attribute__((always_inline)) size_t h16_loop(int fn, float *y, const float *x, size_t n, int bf16)
{
    size_t i = 0, redo = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        _mm512_storeu_ps(y + i, bf16 ? f32_bf16(fn, v, &redo) : f32_h16(fn, v, &redo));
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        /* the zeros beyond n: exp 1, log -inf, the rest 0: all settled */
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        _mm512_mask_storeu_ps(y + i, m, bf16 ? f32_bf16(fn, v, &redo) : f32_h16(fn, v, &redo));
    }
    return redo;
}

size_t mxp_f32_vmath_to_f16__avx512f(int fn, float *y, const float *x, size_t n)
{
    return h16_loop(fn, y, x, n, 0);
}

size_t mxp_f32_vmath_to_bf16__avx512f(int fn, float *y, const float *x, size_t n)
{
    if (fn == MXP_VMATH_GELU) /* its own loop: no test of fn a vector, the constants kept in registers */
        return h16_loop(MXP_VMATH_GELU, y, x, n, 1);
    return h16_loop(fn, y, x, n, 1);
}
#else
typedef int mxp_f32_vmath_avx512f_unused; /* built without SLEEF: nothing here */
#endif
