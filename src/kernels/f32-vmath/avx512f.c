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

size_t mxp_f32_vmath_to_f16__avx512f(int fn, float *y, const float *x, size_t n)
{
    size_t i = 0, redo = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, f32_h16(fn, _mm512_loadu_ps(x + i), &redo));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        /* the zeros beyond n: exp 1, log -inf, the rest 0: all settled */
        _mm512_mask_storeu_ps(y + i, m, f32_h16(fn, _mm512_maskz_loadu_ps(m, x + i), &redo));
    }
    return redo;
}

size_t mxp_f32_vmath_to_bf16__avx512f(int fn, float *y, const float *x, size_t n)
{
    size_t i = 0, redo = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(y + i, f32_bf16(fn, _mm512_loadu_ps(x + i), &redo));
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        /* the zeros beyond n: exp 1, log -inf, the rest 0: all settled */
        _mm512_mask_storeu_ps(y + i, m, f32_bf16(fn, _mm512_maskz_loadu_ps(m, x + i), &redo));
    }
    return redo;
}
#else
typedef int mxp_f32_vmath_avx512f_unused; /* built without SLEEF: nothing here */
#endif
