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

/* mxp_add_first_ps<bits>(a, b): a + b, a in the sum's register (an
 * accumulator stays put); mxp_mul_first_ps<bits>(a, b): a * b into a new
 * register (a factor used again is not copied). */
#define MXP_FP_FIRST_OPS(bits, type, reg)                                                                             \
    static inline type mxp_add_first_ps##bits(type a, type b)                                                        \
    {                                                                                                                 \
        __asm__("vaddps %1, %0, %0" : "+" reg(a) : reg(b));                                                           \
        return a;                                                                                                     \
    }                                                                                                                 \
    static inline type mxp_mul_first_ps##bits(type a, type b)                                                        \
    {                                                                                                                 \
        type r;                                                                                                       \
        __asm__("vmulps %2, %1, %0" : "=" reg(r) : reg(a), reg(b));                                                   \
        return r;                                                                                                     \
    }

#if defined(__AVX__)
MXP_FP_FIRST_OPS(256, __m256, "x")
#endif
#if defined(__AVX512F__)
MXP_FP_FIRST_OPS(512, __m512, "v")
#endif

#endif
