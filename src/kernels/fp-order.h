/* Float additions and products with a fixed first source, for kernels
 * whose results must be their portable twins' bits NaN for NaN.  Where
 * both sources of an x86 vaddps / vmulps are NaNs the result is the first
 * source's NaN (quieted), and GCC treats the intrinsics as commutative: a
 * sum a + p came out as p + a where the register allocation liked it, so
 * an accumulated NaN (say the default -NaN of inf - inf) lost to the next
 * product's NaN, which the twin's scalar a += p keeps (found by
 * test_nn_dwconv_kernels).  These keep a first, as C's a + p is written. */
#ifndef MXP_KERNELS_FP_ORDER_H
#define MXP_KERNELS_FP_ORDER_H

#include <immintrin.h>

#if defined(__AVX__)
static inline __m256 mxp_add_first_ps256(__m256 a, __m256 b)
{
    __asm__("vaddps %1, %0, %0" : "+x"(a) : "x"(b)); /* a into the sum's register: an accumulator stays put */
    return a;
}

static inline __m256 mxp_mul_first_ps256(__m256 a, __m256 b)
{
    __m256 r;
    __asm__("vmulps %2, %1, %0" : "=x"(r) : "x"(a), "x"(b));
    return r;
}
#endif

#if defined(__AVX512F__)
static inline __m512 mxp_add_first_ps512(__m512 a, __m512 b)
{
    __asm__("vaddps %1, %0, %0" : "+v"(a) : "v"(b));
    return a;
}

static inline __m512 mxp_mul_first_ps512(__m512 a, __m512 b)
{
    __m512 r;
    __asm__("vmulps %2, %1, %0" : "=v"(r) : "v"(a), "v"(b));
    return r;
}
#endif

#endif
