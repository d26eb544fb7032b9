/* Float32 depthwise-convolution rows, AVX-512: sixteen channels a step
 * (NHWC; the rest masked), or sixteen output columns of one channel (NCHW,
 * stride 1).  Multiply, then add: the twin's bits.  See dwconv-kernels.h. */
#include <immintrin.h>

#include "kernels/dwconv-kernels.h"

void mxp_f32_dwconv__avx512f(float *acc, const float *x, const float *w, size_t n, size_t ch, size_t step)
{
    if (ch == 1 && step == 1) {
        const __m512 wv = _mm512_set1_ps(w[0]);
        size_t j = 0;
        for (; j + 16 <= n; j += 16)
            _mm512_storeu_ps(acc + j, _mm512_add_ps(_mm512_loadu_ps(acc + j), _mm512_mul_ps(_mm512_loadu_ps(x + j), wv)));
        const __mmask16 m = (__mmask16)((1u << (n - j)) - 1);
        _mm512_mask_storeu_ps(acc + j, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, acc + j),
                                                         _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + j), wv)));
        return;
    }
    const size_t c16 = ch / 16 * 16;
    const __mmask16 m = (__mmask16)((1u << (ch - c16)) - 1);
    for (size_t j = 0; j < n; j++) {
        float *a = acc + j * ch;
        const float *xj = x + j * step;
        size_t c = 0;
        for (; c < c16; c += 16)
            _mm512_storeu_ps(a + c, _mm512_add_ps(_mm512_loadu_ps(a + c),
                                                  _mm512_mul_ps(_mm512_loadu_ps(xj + c), _mm512_loadu_ps(w + c))));
        if (m)
            _mm512_mask_storeu_ps(a + c, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, a + c),
                                                           _mm512_mul_ps(_mm512_maskz_loadu_ps(m, xj + c),
                                                                         _mm512_maskz_loadu_ps(m, w + c))));
    }
}
