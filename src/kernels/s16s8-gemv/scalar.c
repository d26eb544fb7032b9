/* The twin of the int16 x int8 GEMV kernel: exact sums modulo 2^32, which
 * every order gives. */
#include "kernels/gemv-kernels.h"

#if MXP_HAVE_X86_KERNELS
void mxp_s16s8_gemv__scalar(int trans_b, size_t k, size_t n, const int16_t *x, const int8_t *b, size_t ldb, int32_t *y)
{
    for (size_t j = 0; j < n; j++) {
        uint32_t s = 0;
        for (size_t p = 0; p < k; p++)
            s += (uint32_t)(x[p] * (trans_b ? b[j * ldb + p] : b[p * ldb + j]));
        y[j] = s <= INT32_MAX ? (int32_t)s : -(int32_t)~s - 1;
    }
}
#endif
