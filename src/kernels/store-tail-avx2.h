/* The first n floats of an AVX2 vector stored (n >= 8: all eight), for
 * the ends of rows in hot loops: n < 8 by 4-, 2- and 1-float stores from
 * the register.  vmaskmovps stores are slow on AMD Zen (a 56 x 56 max
 * plane 1083 ns with them, 527 with unmasked stores), and a store through
 * a buffer and memcpy stalls the buffer's loads on its vector store (64
 * max planes of 56 x 56, 3 x 3 stride 2, in L2 on a Zen 4: 29.2-29.4 us
 * through the buffer, 26.8-27.6 us so). */
#ifndef MXP_KERNELS_STORE_TAIL_AVX2_H
#define MXP_KERNELS_STORE_TAIL_AVX2_H

#include <immintrin.h>
#include <stddef.h>

static inline void mxp_store_tail_ps_avx2(float *y, __m256 m, size_t n)
{
    if (n >= 8) {
        _mm256_storeu_ps(y, m);
        return;
    }
    __m128 v = _mm256_castps256_ps128(m);
    if (n & 4) {
        _mm_storeu_ps(y, v);
        v = _mm256_extractf128_ps(m, 1);
        y += 4;
    }
    if (n & 2) {
        _mm_storel_pi((__m64 *)(void *)y, v);
        v = _mm_movehl_ps(v, v);
        y += 2;
    }
    if (n & 1)
        _mm_store_ss(y, v);
}

#endif
