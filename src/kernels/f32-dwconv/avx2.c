/* Float32 depthwise-convolution rows, AVX2: eight channels a step (NHWC),
 * or eight output columns of one channel (NCHW, stride 1).  Multiply, then
 * add: the twin's bits.  See dwconv-kernels.h. */
#include <immintrin.h>

#include "kernels/dwconv-kernels.h"

void mxp_f32_dwconv__avx2(float *acc, const float *x, const float *w, size_t n, size_t ch, size_t step)
{
    if (ch == 1 && step == 1) {
        const __m256 wv = _mm256_set1_ps(w[0]);
        size_t j = 0;
        for (; j + 8 <= n; j += 8)
            _mm256_storeu_ps(acc + j, _mm256_add_ps(_mm256_loadu_ps(acc + j), _mm256_mul_ps(_mm256_loadu_ps(x + j), wv)));
        mxp_f32_dwconv_tail(acc + j, x + j, w, n - j, 1, 1, 0);
        return;
    }
    const size_t c8 = ch / 8 * 8;
    for (size_t j = 0; j < n; j++) {
        float *a = acc + j * ch;
        const float *xj = x + j * step;
        for (size_t c = 0; c < c8; c += 8)
            _mm256_storeu_ps(a + c, _mm256_add_ps(_mm256_loadu_ps(a + c),
                                                  _mm256_mul_ps(_mm256_loadu_ps(xj + c), _mm256_loadu_ps(w + c))));
    }
    mxp_f32_dwconv_tail(acc, x, w, n, ch, step, c8);
}
