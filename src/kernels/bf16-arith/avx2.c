/* bfloat16 add, subtract, multiply in one pass, AVX2 + F16C (h16_loop of
 * h16-arith-avx2.h).  See arith-kernels.h. */
#include "kernels/h16-arith-avx2.h"

void mxp_bf16_arith__avx2(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n)
{
    switch (op) {
    case MXP_ARITH_ADD: h16_loop(1, MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_ARITH_SUB: h16_loop(1, MXP_ARITH_SUB, y, a, b, n); break;
    default: h16_loop(1, MXP_ARITH_MUL, y, a, b, n); break;
    }
}
