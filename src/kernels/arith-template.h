/* The float32/float64 + - * / loop of src/kernels/f32-arith/ and
 * f64-arith/, written once over the vector names of the simd-*.h header the
 * kernel file includes first: two vectors a step, the tail masked where the
 * ISA has masked loads (MXP_SIMD_MASKED), element by element (the same IEEE
 * operation) where not.  See arith-kernels.h. */
#ifndef MXP_KERNELS_ARITH_TEMPLATE_H
#define MXP_KERNELS_ARITH_TEMPLATE_H

#ifndef MXP_SIMD_V
#error "include a simd-*.h before arith-template.h"
#endif

#include <stddef.h>

#include "kernels/arith-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

MXP_INLINE MXP_SIMD_V arith_v(int op, MXP_SIMD_V x, MXP_SIMD_V y)
{
    switch (op) {
    case MXP_ARITH_ADD: return MXP_SIMD_ADD(x, y);
    case MXP_ARITH_SUB: return MXP_SIMD_SUB(x, y);
    case MXP_ARITH_MUL: return MXP_SIMD_MUL(x, y);
    default: return MXP_SIMD_DIV(x, y);
    }
}

MXP_INLINE MXP_SIMD_T arith_s(int op, MXP_SIMD_T x, MXP_SIMD_T y)
{
    return op == MXP_ARITH_ADD ? x + y : op == MXP_ARITH_SUB ? x - y : op == MXP_ARITH_MUL ? x * y : x / y;
}

MXP_INLINE void arith_loop(int op, MXP_SIMD_T *y, const MXP_SIMD_T *a, const MXP_SIMD_T *b, size_t n)
{
    size_t i = 0;
    for (; i + 2 * MXP_SIMD_N <= n; i += 2 * MXP_SIMD_N) {
        const MXP_SIMD_V r0 = arith_v(op, MXP_SIMD_LOADU(a + i), MXP_SIMD_LOADU(b + i));
        const MXP_SIMD_V r1 = arith_v(op, MXP_SIMD_LOADU(a + i + MXP_SIMD_N), MXP_SIMD_LOADU(b + i + MXP_SIMD_N));
        MXP_SIMD_STOREU(y + i, r0);
        MXP_SIMD_STOREU(y + i + MXP_SIMD_N, r1);
    }
#if MXP_SIMD_MASKED
    /* the lanes past the end hold the first tail element's operands: their
     * result is discarded, and they raise no floating-point flag the real
     * element does not (zeros would: 0/0 sets invalid, which NumPy reports) */
    for (; i < n; i += MXP_SIMD_N) {
        const MXP_SIMD_MASK m = n - i >= MXP_SIMD_N ? MXP_SIMD_MASK_ALL : MXP_SIMD_TAIL_MASK(n - i);
        const MXP_SIMD_V ta = MXP_SIMD_MASK_LOADU(MXP_SIMD_SET1(a[i]), m, a + i);
        const MXP_SIMD_V tb = MXP_SIMD_MASK_LOADU(MXP_SIMD_SET1(b[i]), m, b + i);
        MXP_SIMD_MASK_STOREU(y + i, m, arith_v(op, ta, tb));
    }
#else
    for (; i < n; i++)
        y[i] = arith_s(op, a[i], b[i]);
#endif
}

/* The op is a loop invariant: one loop per op, so the switch is hoisted. */
MXP_INLINE void arith_run(int op, MXP_SIMD_T *y, const MXP_SIMD_T *a, const MXP_SIMD_T *b, size_t n)
{
    switch (op) {
    case MXP_ARITH_ADD: arith_loop(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_ARITH_SUB: arith_loop(MXP_ARITH_SUB, y, a, b, n); break;
    case MXP_ARITH_MUL: arith_loop(MXP_ARITH_MUL, y, a, b, n); break;
    default: arith_loop(MXP_ARITH_DIV, y, a, b, n); break;
    }
}

#endif
