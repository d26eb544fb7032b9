/* Float32 depthwise-convolution rows, AVX-512: sixteen channels a step
 * (NHWC; the rest masked), or sixteen output columns of one channel (NCHW,
 * stride 1); and whole windows of two pixels, up to 64 channels, or of 64
 * output columns of one channel (NCHW, stride 1), in registers (the taps
 * kernel).  Multiply, then add, the accumulator the first source
 * (fp-order.h: where both are NaNs, x86 keeps the first's): the twin's
 * bits.  See dwconv-kernels.h. */
#include <immintrin.h>

#include "kernels/dwconv-kernels.h"
#include "kernels/fp-order.h"

void mxp_f32_dwconv__avx512f(float *acc, const float *x, const float *w, size_t n, size_t ch, size_t step)
{
    if (ch == 1 && step == 1) {
        const __m512 wv = _mm512_set1_ps(w[0]);
        size_t j = 0;
        for (; j + 16 <= n; j += 16)
            _mm512_storeu_ps(acc + j, mxp_add_first_ps512(_mm512_loadu_ps(acc + j), mxp_mul_first_ps512(_mm512_loadu_ps(x + j), wv)));
        const __mmask16 m = (__mmask16)((1u << (n - j)) - 1);
        _mm512_mask_storeu_ps(acc + j, m, mxp_add_first_ps512(_mm512_maskz_loadu_ps(m, acc + j),
                                                         mxp_mul_first_ps512(_mm512_maskz_loadu_ps(m, x + j), wv)));
        return;
    }
    const size_t c16 = ch / 16 * 16;
    const __mmask16 m = (__mmask16)((1u << (ch - c16)) - 1);
    for (size_t j = 0; j < n; j++) {
        float *a = acc + j * ch;
        const float *xj = x + j * step;
        size_t c = 0;
        for (; c < c16; c += 16)
            _mm512_storeu_ps(a + c, mxp_add_first_ps512(_mm512_loadu_ps(a + c),
                                                  mxp_mul_first_ps512(_mm512_loadu_ps(xj + c), _mm512_loadu_ps(w + c))));
        if (m)
            _mm512_mask_storeu_ps(a + c, m, mxp_add_first_ps512(_mm512_maskz_loadu_ps(m, a + c),
                                                           mxp_mul_first_ps512(_mm512_maskz_loadu_ps(m, xj + c),
                                                                         _mm512_maskz_loadu_ps(m, w + c))));
    }
}

/* Two pixels (j, j + 1; one when two is 0) x nv vectors of channels from
 * c (the last masked by m), every tap summed in registers. */
static inline __attribute__((always_inline)) void taps_block(float *acc, const float *const *rows, const float *const *wrows, size_t nrows,
                              size_t kw, size_t ch, size_t step, size_t dstep, size_t j, size_t c, int nv, int two,
                              __mmask16 m)
{
    __m512 a0[4], a1[4];
    for (int v = 0; v < nv; v++)
        a0[v] = a1[v] = _mm512_setzero_ps();
    for (size_t r = 0; r < nrows; r++)
        for (size_t q = 0; q < kw; q++) {
            const float *xp = rows[r] + j * step + q * dstep + c, *wp = wrows[r] + q * ch + c;
            for (int v = 0; v < nv; v++) {
                const __mmask16 mv = v == nv - 1 ? m : 0xffff;
                const __m512 wv = _mm512_maskz_loadu_ps(mv, wp + 16 * v);
                a0[v] = mxp_add_first_ps512(a0[v], mxp_mul_first_ps512(_mm512_maskz_loadu_ps(mv, xp + 16 * v), wv));
                if (two)
                    a1[v] = mxp_add_first_ps512(a1[v], mxp_mul_first_ps512(_mm512_maskz_loadu_ps(mv, xp + step + 16 * v), wv));
            }
        }
    for (int v = 0; v < nv; v++) {
        const __mmask16 mv = v == nv - 1 ? m : 0xffff;
        _mm512_mask_storeu_ps(acc + j * ch + c + 16 * v, mv, a0[v]);
        if (two)
            _mm512_mask_storeu_ps(acc + (j + 1) * ch + c + 16 * v, mv, a1[v]);
    }
}

/* 3 taps a row, stride 1, no dilation (the common 3x3 window): four
 * pixels x 32 channels from (j, c), each input vector loaded once for the
 * (up to three) pixels whose window it is in -- pixel p takes position
 * u = p + q as its tap q, so its taps still come in order.  The loaded
 * vector stays in a register (fp-order.h's products take registers):
 * with intrinsics GCC folded the load into each of its products, and the
 * loads bound the loop (AMD Zen 4, 128 channels in L1: 130 -> 90 cycles
 * a pixel). */
static inline __attribute__((always_inline)) void taps3_block(float *acc, const float *const *rows,
                                                              const float *const *wrows, size_t nrows, size_t ch,
                                                              size_t j, size_t c)
{
    __m512 a[4][2];
    for (int p = 0; p < 4; p++)
        a[p][0] = a[p][1] = _mm512_setzero_ps();
    for (size_t r = 0; r < nrows; r++) {
        const float *xp = rows[r] + j * ch + c, *wp = wrows[r] + c;
        __m512 w[3][2];
        for (int q = 0; q < 3; q++)
            for (int v = 0; v < 2; v++)
                w[q][v] = _mm512_loadu_ps(wp + q * ch + 16 * v);
        for (int u = 0; u < 6; u++, xp += ch)
            for (int v = 0; v < 2; v++) {
                __m512 xv = _mm512_loadu_ps(xp + 16 * v);
                for (int p = 0; p < 4; p++) {
                    const int q = u - p;
                    if (q >= 0 && q < 3)
                        a[p][v] = mxp_add_first_ps512(a[p][v], mxp_mul_first_ps512(xv, w[q][v]));
                }
            }
    }
    float *ap = acc + j * ch + c;
    for (int p = 0; p < 4; p++, ap += ch)
        for (int v = 0; v < 2; v++)
            _mm512_storeu_ps(ap + 16 * v, a[p][v]);
}

/* One channel at stride 1 (NCHW planes): nv vectors of sixteen output
 * columns from j (the last masked by m), every tap summed in registers,
 * its weight broadcast. */
static inline __attribute__((always_inline)) void taps_px_block(float *acc, const float *const *rows,
                                                                const float *const *wrows, size_t nrows, size_t kw,
                                                                size_t dstep, size_t j, int nv, __mmask16 m)
{
    __m512 a[4];
    for (int v = 0; v < nv; v++)
        a[v] = _mm512_setzero_ps();
    for (size_t r = 0; r < nrows; r++)
        for (size_t q = 0; q < kw; q++) {
            const float *xp = rows[r] + j + q * dstep;
            const __m512 wv = _mm512_set1_ps(wrows[r][q]);
            for (int v = 0; v < nv; v++)
                a[v] = mxp_add_first_ps512(a[v], mxp_mul_first_ps512(_mm512_maskz_loadu_ps(v == nv - 1 ? m : 0xffff, xp + 16 * v),
                                                         wv));
        }
    for (int v = 0; v < nv; v++)
        _mm512_mask_storeu_ps(acc + j + 16 * v, v == nv - 1 ? m : 0xffff, a[v]);
}

/* One channel, 3 taps a row at stride 1 (the NCHW 3x3 plane): nv vectors
 * of sixteen output columns from j (the last masked by m), each row's
 * nv + 1 vectors loaded once (masked to the lim floats the row has from
 * j) and its taps 1 and 2 shifted out of them by valignd -- a third of
 * the loads of taps_px_block, whose loads (most of them split across
 * cache lines) bound it: AMD Zen 4, 1x128x56x56 3x3 NCHW 245 -> 228 us. */
static inline __attribute__((always_inline)) void taps3_px_block(float *acc, const float *const *rows,
                                                                 const float *const *wrows, size_t nrows, size_t j,
                                                                 int nv, __mmask16 m, size_t lim)
{
    __m512 a[4];
    for (int v = 0; v < nv; v++)
        a[v] = _mm512_setzero_ps();
    for (size_t r = 0; r < nrows; r++) {
        const float *xp = rows[r] + j;
        const __m512 w0 = _mm512_set1_ps(wrows[r][0]), w1 = _mm512_set1_ps(wrows[r][1]);
        const __m512 w2 = _mm512_set1_ps(wrows[r][2]);
        __m512 x[5];
        for (int v = 0; v <= nv; v++) {
            const size_t at = 16 * (size_t)v;
            const __mmask16 lv = lim >= at + 16 ? (__mmask16)0xffff
                                 : lim > at     ? (__mmask16)((1u << (lim - at)) - 1)
                                                : 0;
            x[v] = _mm512_maskz_loadu_ps(lv, xp + at);
        }
        for (int v = 0; v < nv; v++) {
            const __m512 t1 = _mm512_castsi512_ps(
                _mm512_alignr_epi32(_mm512_castps_si512(x[v + 1]), _mm512_castps_si512(x[v]), 1));
            const __m512 t2 = _mm512_castsi512_ps(
                _mm512_alignr_epi32(_mm512_castps_si512(x[v + 1]), _mm512_castps_si512(x[v]), 2));
            a[v] = mxp_add_first_ps512(a[v], mxp_mul_first_ps512(x[v], w0));
            a[v] = mxp_add_first_ps512(a[v], mxp_mul_first_ps512(t1, w1));
            a[v] = mxp_add_first_ps512(a[v], mxp_mul_first_ps512(t2, w2));
        }
    }
    for (int v = 0; v < nv; v++)
        _mm512_mask_storeu_ps(acc + j + 16 * v, v == nv - 1 ? m : 0xffff, a[v]);
}

void mxp_f32_dwconv_taps__avx512f(float *acc, const float *const *rows, const float *const *wrows, size_t nrows,
                                  size_t kw, size_t n, size_t ch, size_t step, size_t dstep)
{
    if (ch == 1 && step == 1 && kw == 3 && dstep == 1) { /* 64 columns a block, from 80 loaded once a row */
        for (size_t j = 0; j < n; j += 64) {
            const size_t left = n - j < 64 ? n - j : 64, lim = n + 2 - j;
            const __mmask16 m = left % 16 ? (__mmask16)((1u << (left % 16)) - 1) : 0xffff;
            switch ((left + 15) / 16) {
            case 4: taps3_px_block(acc, rows, wrows, nrows, j, 4, m, lim); break;
            case 3: taps3_px_block(acc, rows, wrows, nrows, j, 3, m, lim); break;
            case 2: taps3_px_block(acc, rows, wrows, nrows, j, 2, m, lim); break;
            default: taps3_px_block(acc, rows, wrows, nrows, j, 1, m, lim); break;
            }
        }
        return;
    }
    if (ch == 1 && step == 1) { /* up to 64 columns a block: up to four chains of additions */
        for (size_t j = 0; j < n; j += 64) {
            const size_t left = n - j < 64 ? n - j : 64;
            const __mmask16 m = left % 16 ? (__mmask16)((1u << (left % 16)) - 1) : 0xffff;
            switch ((left + 15) / 16) {
            case 4: taps_px_block(acc, rows, wrows, nrows, kw, dstep, j, 4, m); break;
            case 3: taps_px_block(acc, rows, wrows, nrows, kw, dstep, j, 3, m); break;
            case 2: taps_px_block(acc, rows, wrows, nrows, kw, dstep, j, 2, m); break;
            default: taps_px_block(acc, rows, wrows, nrows, kw, dstep, j, 1, m); break;
            }
        }
        return;
    }
    size_t c = 0;
    if (kw == 3 && step == ch && dstep == ch) {
        for (; c + 32 <= ch; c += 32) {
            size_t j = 0;
            for (; j + 4 <= n; j += 4)
                taps3_block(acc, rows, wrows, nrows, ch, j, c);
            for (; j + 2 <= n; j += 2)
                taps_block(acc, rows, wrows, nrows, kw, ch, step, dstep, j, c, 2, 1, 0xffff);
            if (j < n)
                taps_block(acc, rows, wrows, nrows, kw, ch, step, dstep, j, c, 2, 0, 0xffff);
        }
    }
    for (; c + 64 <= ch; c += 64) {
        size_t j = 0;
        for (; j + 2 <= n; j += 2)
            taps_block(acc, rows, wrows, nrows, kw, ch, step, dstep, j, c, 4, 1, 0xffff);
        if (j < n)
            taps_block(acc, rows, wrows, nrows, kw, ch, step, dstep, j, c, 4, 0, 0xffff);
    }
    for (; c < ch; c += 16) {
        const __mmask16 m = ch - c >= 16 ? 0xffff : (__mmask16)((1u << (ch - c)) - 1);
        size_t j = 0;
        for (; j + 2 <= n; j += 2)
            taps_block(acc, rows, wrows, nrows, kw, ch, step, dstep, j, c, 1, 1, m);
        if (j < n)
            taps_block(acc, rows, wrows, nrows, kw, ch, step, dstep, j, c, 1, 0, m);
    }
}
