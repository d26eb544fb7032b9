/* float64 -> bfloat16, nearest even, in one rounding, in portable C: the
 * bits of mxp_convert (src/nn/'s stores and the bf16-norm kernels' tails
 * and twin; test_nn_store compares).  To float32 by round-to-odd -- the
 * cast (nearest even under the library's environment, core/fpenv.h), then
 * the value truncated toward zero with its last bit set when the cast was
 * inexact -- then float32 -> bfloat16 to nearest even: two roundings that
 * equal one, as float32 keeps 24 >= 8 + 2 bits.
 *
 *     float32  s eeeeeeee mmmmmmm|mmmmmmmmmmmmmmmm    the top 16 bits: bfloat16
 */
#ifndef MXP_KERNELS_BF16_ROUND_H
#define MXP_KERNELS_BF16_ROUND_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t mxp_f64_to_bf16_rne(double d)
{
    const float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    const uint32_t nan = (u >> 16) | 0x40; /* quiet, sign and top payload kept */
    const uint32_t away = fabs((double)f) > fabs(d), inexact = (double)f != d;
    const uint32_t odd = inexact ? (u - away) | 1 : u; /* toward zero, then odd */
    const uint32_t r = (odd + 0x7fff + ((odd >> 16) & 1)) >> 16;
    return (uint16_t)(f != f ? nan : r); /* selects, no branches */
}

/* bfloat16 is the top half of a float32: widening is a shift. */
static inline double mxp_bf16_to_f64_exact(uint16_t b)
{
    const uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#endif
