/* bfloat16 add, subtract, multiply in one pass, AVX-512 (the loop of
 * h16-arith-avx512f.h).  See arith-kernels.h. */
#include "kernels/h16-arith-avx512f.h"

void mxp_bf16_arith__avx512f(int op, uint16_t *y, const uint16_t *a, const uint16_t *b, size_t n)
{
    switch (op) { /* one loop per op: no branch inside */
    case MXP_ARITH_ADD: bf16_loop(MXP_ARITH_ADD, y, a, b, n); break;
    case MXP_ARITH_SUB: bf16_loop(MXP_ARITH_SUB, y, a, b, n); break;
    default: bf16_loop(MXP_ARITH_MUL, y, a, b, n); break;
    }
}
