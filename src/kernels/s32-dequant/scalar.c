/* The twins of the dequantization kernels, one element at a time: acc *
 * scale in float64 rounded to odd (the product hi and its exact error lo =
 * fma(acc, scale, -hi): the truncation toward zero with its last bit set
 * when lo != 0), plus the bias (nearest even), rounded once to float32 with
 * the mode: nearest even by the conversion, a directed mode by stepping
 * that result one float32 toward the right side of the exact value. */
#include <math.h>
#include <string.h>

#include "kernels/requant-kernels.h"

#if MXP_HAVE_X86_KERNELS
static double product_odd(int32_t acc, float scale)
{
    const double a = (double)acc, s = (double)scale, hi = a * s, lo = fma(a, s, -hi);
    if (lo == 0)
        return hi;
    uint64_t u;
    memcpy(&u, &hi, 8);
    if ((lo < 0) != (hi < 0)) /* hi is beyond the exact value: one step toward zero */
        u--;
    u |= 1;
    double t;
    memcpy(&t, &u, 8);
    return t;
}

static float round_f32(double x, int mode)
{
    const float f = (float)x; /* nearest even */
    switch (mode) {
    case MXP_ROUND_UP: return (double)f < x ? nextafterf(f, INFINITY) : f;
    case MXP_ROUND_DOWN: return (double)f > x ? nextafterf(f, -INFINITY) : f;
    case MXP_ROUND_TOWARD_ZERO: return fabs((double)f) > fabs(x) ? nextafterf(f, 0.0f) : f;
    default: return f;
    }
}

/* acc[q] with row's zero point taken off, and the scale of column q */
static int32_t row_acc(const int32_t *acc, size_t q, const mxp_s32_dequant_row *row)
{
    if (!row || !row->b_sums)
        return acc[q];
    const uint32_t d = (uint32_t)acc[q] - (uint32_t)row->a_zero_point * (uint32_t)row->b_sums[q];
    int32_t r;
    memcpy(&r, &d, 4); /* wrapping */
    return r;
}

static float row_scale(const float *scale, size_t q, int per_col, const mxp_s32_dequant_row *row)
{
    const float s = scale[per_col ? q : 0];
    return row ? (float)((double)row->a_scale * (double)s) : s; /* exact in float64, one rounding */
}

bool mxp_s32_dequant_f32__scalar(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                 const mxp_s32_dequant_row *row, int mode)
{
    for (size_t q = 0; q < len; q++)
        dst[q] = round_f32(product_odd(row_acc(acc, q, row), row_scale(scale, q, per_col, row)), mode);
    return true;
}

bool mxp_s32_dequant_bias_f32__scalar(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                      const mxp_s32_dequant_row *row, const float *bias, double beta, int mode)
{
    for (size_t q = 0; q < len; q++) {
        double x = product_odd(row_acc(acc, q, row), row_scale(scale, q, per_col, row));
        if (beta != 0) {
            const double bc = beta * (double)dst[q]; /* rounded, then added: no FMA (ISO C: no contraction) */
            x += bc;
        }
        if (bias)
            x += (double)bias[q];
        dst[q] = round_f32(x, mode);
    }
    return true;
}
#endif
