/* NumPy's pairwise summation, one text for every element and sum type:
 * below 8 elements one running sum; blocks of 8 to 128 elements summed by
 * MXP_PW_BLOCK; above that, halves split at a multiple of 8 below n/2.
 *
 * A template, no include guard: each inclusion defines
 *   MXP_PW_S MXP_PW_FN(const MXP_PW_T *x, size_t n)   (static)
 * from MXP_PW_T (the element read), MXP_PW_S (the sum's type), MXP_PW_FN
 * and either MXP_PW_BLOCK (a block function of the includer's: the SIMD
 * kernels of src/kernels/f32-sum/) or MXP_PW_LANES (the name under which
 * the reference block is defined too: 8 running sums, added
 * ((0+1)+(2+3))+((4+5)+(6+7)), then the tail), and undefines them. */
#include <stddef.h>

#ifdef MXP_PW_LANES
static inline MXP_PW_S MXP_PW_LANES(const MXP_PW_T *x, size_t n) /* 8 <= n <= 128 */
{
    MXP_PW_S r[8];
    for (int k = 0; k < 8; k++)
        r[k] = x[k];
    size_t i = 8;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            r[k] += x[i + k];
    MXP_PW_S s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++)
        s += x[i];
    return s;
}
#define MXP_PW_BLOCK MXP_PW_LANES
#endif

/* Not inlined into itself: one function recursing, as written. */
static __attribute__((unused)) MXP_PW_S MXP_PW_FN(const MXP_PW_T *x, size_t n)
{
    if (n < 8) {
        MXP_PW_S s = 0;
        for (size_t i = 0; i < n; i++)
            s += x[i];
        return s;
    }
    if (n <= 128)
        return MXP_PW_BLOCK(x, n);
    const size_t h = n / 2 / 8 * 8;
    return MXP_PW_FN(x, h) + MXP_PW_FN(x + h, n - h);
}

#undef MXP_PW_T
#undef MXP_PW_S
#undef MXP_PW_FN
#undef MXP_PW_BLOCK
#undef MXP_PW_LANES
