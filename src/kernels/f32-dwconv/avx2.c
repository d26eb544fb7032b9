/* Float32 depthwise-convolution rows, AVX2: eight channels a step (NHWC),
 * or eight output columns of one channel (NCHW, stride 1).  Multiply, then
 * add, the accumulator the first source (fp-order.h): the twin's bits; and whole windows of two pixels, up to 32
 * channels, or of 32 output columns of one channel (NCHW, stride 1), in
 * registers (the taps kernel).  See dwconv-kernels.h. */
#include <immintrin.h>

#include "kernels/dwconv-kernels.h"
#include "kernels/fp-order.h"

void mxp_f32_dwconv__avx2(float *acc, const float *x, const float *w, size_t n, size_t ch, size_t step)
{
    if (ch == 1 && step == 1) {
        const __m256 wv = _mm256_set1_ps(w[0]);
        size_t j = 0;
        for (; j + 8 <= n; j += 8)
            _mm256_storeu_ps(acc + j, mxp_add_first_ps256(_mm256_loadu_ps(acc + j), mxp_mul_first_ps256(_mm256_loadu_ps(x + j), wv)));
        mxp_f32_dwconv_tail(acc + j, x + j, w, n - j, 1, 1, 0);
        return;
    }
    const size_t c8 = ch / 8 * 8;
    for (size_t j = 0; j < n; j++) {
        float *a = acc + j * ch;
        const float *xj = x + j * step;
        for (size_t c = 0; c < c8; c += 8)
            _mm256_storeu_ps(a + c, mxp_add_first_ps256(_mm256_loadu_ps(a + c),
                                                  mxp_mul_first_ps256(_mm256_loadu_ps(xj + c), _mm256_loadu_ps(w + c))));
    }
    mxp_f32_dwconv_tail(acc, x, w, n, ch, step, c8);
}

/* Two pixels (j, j + 1; one when two is 0) x nv vectors of 8 channels
 * from c, every tap summed in registers. */
static inline __attribute__((always_inline)) void taps_block(float *acc, const float *const *rows, const float *const *wrows, size_t nrows,
                              size_t kw, size_t ch, size_t step, size_t dstep, size_t j, size_t c, int nv, int two)
{
    __m256 a0[4], a1[4];
    for (int v = 0; v < nv; v++)
        a0[v] = a1[v] = _mm256_setzero_ps();
    for (size_t r = 0; r < nrows; r++)
        for (size_t q = 0; q < kw; q++) {
            const float *xp = rows[r] + j * step + q * dstep + c, *wp = wrows[r] + q * ch + c;
            for (int v = 0; v < nv; v++) {
                const __m256 wv = _mm256_loadu_ps(wp + 8 * v);
                a0[v] = mxp_add_first_ps256(a0[v], mxp_mul_first_ps256(_mm256_loadu_ps(xp + 8 * v), wv));
                if (two)
                    a1[v] = mxp_add_first_ps256(a1[v], mxp_mul_first_ps256(_mm256_loadu_ps(xp + step + 8 * v), wv));
            }
        }
    for (int v = 0; v < nv; v++) {
        _mm256_storeu_ps(acc + j * ch + c + 8 * v, a0[v]);
        if (two)
            _mm256_storeu_ps(acc + (j + 1) * ch + c + 8 * v, a1[v]);
    }
}

/* 3 taps a row, stride 1, no dilation (the common 3x3 window), as the
 * AVX-512 kernel's: four pixels x 16 channels from (j, c), each input
 * vector loaded once (into a register) for the (up to three) pixels
 * whose window it is in -- pixel p takes position u = p + q as its tap q,
 * so its taps still come in order.  Fourteen accumulators and weights of
 * the sixteen registers. */
static inline __attribute__((always_inline)) void taps3_block(float *acc, const float *const *rows,
                                                              const float *const *wrows, size_t nrows, size_t ch,
                                                              size_t j, size_t c)
{
    __m256 a[4][2];
    for (int p = 0; p < 4; p++)
        a[p][0] = a[p][1] = _mm256_setzero_ps();
    for (size_t r = 0; r < nrows; r++) {
        const float *xp = rows[r] + j * ch + c, *wp = wrows[r] + c;
        __m256 w[3][2];
        for (int q = 0; q < 3; q++)
            for (int v = 0; v < 2; v++)
                w[q][v] = _mm256_loadu_ps(wp + q * ch + 8 * v);
        for (int u = 0; u < 6; u++, xp += ch)
            for (int v = 0; v < 2; v++) {
                __m256 xv = _mm256_loadu_ps(xp + 8 * v);
                for (int p = 0; p < 4; p++) {
                    const int q = u - p;
                    if (q >= 0 && q < 3)
                        a[p][v] = mxp_add_first_ps256(a[p][v], mxp_mul_first_ps256(xv, w[q][v]));
                }
            }
    }
    float *ap = acc + j * ch + c;
    for (int p = 0; p < 4; p++, ap += ch)
        for (int v = 0; v < 2; v++)
            _mm256_storeu_ps(ap + 8 * v, a[p][v]);
}

/* Every pixel, two at a time, for nv vectors of channels from c. */
static inline __attribute__((always_inline)) void taps_cols(float *acc, const float *const *rows,
                                                            const float *const *wrows, size_t nrows, size_t kw,
                                                            size_t n, size_t ch, size_t step, size_t dstep, size_t c,
                                                            int nv)
{
    size_t j = 0;
    for (; j + 2 <= n; j += 2)
        taps_block(acc, rows, wrows, nrows, kw, ch, step, dstep, j, c, nv, 1);
    if (j < n)
        taps_block(acc, rows, wrows, nrows, kw, ch, step, dstep, j, c, nv, 0);
}

/* One channel at stride 1 (NCHW planes): nv vectors of eight output
 * columns from j, every tap summed in registers, its weight broadcast;
 * tail: the last vector's first lanes only (vmaskmovps; the same operand
 * order as the others, so NaNs come out as the twin's). */
static inline __attribute__((always_inline)) void taps_px_block(float *acc, const float *const *rows,
                                                                const float *const *wrows, size_t nrows, size_t kw,
                                                                size_t dstep, size_t j, int nv, size_t tail)
{
    const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)tail), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 a[4];
    for (int v = 0; v < nv; v++)
        a[v] = _mm256_setzero_ps();
    for (size_t r = 0; r < nrows; r++)
        for (size_t q = 0; q < kw; q++) {
            const float *xp = rows[r] + j + q * dstep;
            const __m256 wv = _mm256_set1_ps(wrows[r][q]);
            for (int v = 0; v < nv; v++) {
                const __m256 xv = tail ? _mm256_maskload_ps(xp + 8 * v, lanes) : _mm256_loadu_ps(xp + 8 * v);
                a[v] = mxp_add_first_ps256(a[v], mxp_mul_first_ps256(xv, wv));
            }
        }
    for (int v = 0; v < nv; v++) {
        if (tail)
            _mm256_maskstore_ps(acc + j + 8 * v, lanes, a[v]);
        else
            _mm256_storeu_ps(acc + j + 8 * v, a[v]);
    }
}

void mxp_f32_dwconv_taps__avx2(float *acc, const float *const *rows, const float *const *wrows, size_t nrows,
                               size_t kw, size_t n, size_t ch, size_t step, size_t dstep)
{
    if (ch == 1 && step == 1) { /* 32 columns a block: four chains of additions */
        size_t j = 0;
        for (; j + 32 <= n; j += 32)
            taps_px_block(acc, rows, wrows, nrows, kw, dstep, j, 4, 0);
        switch ((n - j) / 8) { /* the whole vectors left in one block */
        case 3: taps_px_block(acc, rows, wrows, nrows, kw, dstep, j, 3, 0); break;
        case 2: taps_px_block(acc, rows, wrows, nrows, kw, dstep, j, 2, 0); break;
        case 1: taps_px_block(acc, rows, wrows, nrows, kw, dstep, j, 1, 0); break;
        default: break;
        }
        j += (n - j) / 8 * 8;
        if (j < n)
            taps_px_block(acc, rows, wrows, nrows, kw, dstep, j, 1, n - j);
        return;
    }
    size_t c = 0;
    if (kw == 3 && step == ch && dstep == ch) {
        for (; c + 16 <= ch; c += 16) {
            size_t j = 0;
            for (; j + 4 <= n; j += 4)
                taps3_block(acc, rows, wrows, nrows, ch, j, c);
            for (; j + 2 <= n; j += 2)
                taps_block(acc, rows, wrows, nrows, kw, ch, step, dstep, j, c, 2, 1);
            if (j < n)
                taps_block(acc, rows, wrows, nrows, kw, ch, step, dstep, j, c, 2, 0);
        }
    }
    for (; c + 32 <= ch; c += 32)
        taps_cols(acc, rows, wrows, nrows, kw, n, ch, step, dstep, c, 4);
    for (; c + 8 <= ch; c += 8)
        taps_cols(acc, rows, wrows, nrows, kw, n, ch, step, dstep, c, 1);
    if (c < ch)
        mxp_f32_dwconv_taps_tail(acc, rows, wrows, nrows, kw, n, ch, step, dstep, 0, c);
}
