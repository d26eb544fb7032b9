/* The reference: the quotient in float64 (exact to within far less than the
 * distance of any float32 quotient from a rounding boundary), rounded to
 * nearest even with integer arithmetic only (independent of the FP
 * environment), saturated, offset by the zero point, clamped. */
#include "kernels/quant-kernels.h"

void mxp_f32_quant__scalar(uint8_t *dst, const float *x, size_t n, float scale, int32_t zp, int32_t qmin,
                           int32_t qmax)
{
    const double s = (double)scale;
    for (size_t i = 0; i < n; i++) {
        double v = (double)x[i] / s;
        v = v == v ? v : 0.0; /* NaN -> the zero point */
        v = v < -1024.0 ? -1024.0 : v > 1024.0 ? 1024.0 : v; /* saturates alike: |codes - zp| <= 383 */
        int64_t t = (int64_t)v; /* truncation, then floor */
        t -= v < (double)t;
        const double f = v - (double)t; /* exact */
        t += (f > 0.5) | ((f == 0.5) & (int)(t & 1));
        t += zp;
        t = t < qmin ? qmin : t > qmax ? qmax : t;
        dst[i] = (uint8_t)(t & 0xff); /* the code's byte, int8 or uint8 */
    }
}

void mxp_f32_quant_cols__scalar(uint8_t *dst, const float *x, size_t n, const float *rinv, const float *scale,
                                const int32_t *zp, int32_t qmin, int32_t qmax)
{
    (void)rinv; /* the reference divides */
    for (size_t i = 0; i < n; i++)
        mxp_f32_quant__scalar(dst + i, x + i, 1, scale[i], zp[i], qmin, qmax);
}
