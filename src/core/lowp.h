/* Internal: rounding a double to float16 or bfloat16 (nearest even,
 * overflow to infinity), returned as a double — the running sum of a
 * low-precision accumulator (reductions and GEMM with acc_dtype float16
 * or bfloat16).  No conversion call per element: the magic-number trick
 * (|x| + c) - c rounds |x| to a multiple of its ulp in the target format
 * under the library's rounding mode (nearest even, core/fpenv.h).
 *
 * x + y of two values of the format is exact in double, so rounding it
 * once is the format's correctly rounded sum; a float32 product rounded
 * here is a double rounding, innocuous since 24 >= 2 * 11 + 2 (and the
 * tests compare against NumPy's float16, which rounds the same way). */
#ifndef MXP_CORE_LOWP_H
#define MXP_CORE_LOWP_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mxp/dtype.h"

typedef struct mxp_lowp {
    int mant;   /* stored mantissa bits: 10 (float16), 7 (bfloat16) */
    int emin;   /* exponent of the smallest normal: -14, -126 */
    int emax;   /* exponent of the largest: 15, 127 */
    double max; /* largest finite value */
} mxp_lowp;

static inline bool mxp_lowp_dtype(mxp_dtype dt)
{
    return dt == MXP_F16 || dt == MXP_BF16;
}

static inline mxp_lowp mxp_lowp_for(mxp_dtype dt)
{
    return dt == MXP_F16 ? (mxp_lowp){ 10, -14, 15, 65504.0 } : (mxp_lowp){ 7, -126, 127, 0x1.fep127 };
}

/* Branch-free, so loops over it vectorize: NaN and infinities come out
 * of the same arithmetic (c is finite, inf + c - c = inf, NaN stays NaN),
 * zeros too ((0 + c) - c = 0, the sign put back), and the exponent is
 * clamped to [emin, emax + 1]: below emin the target's subnormal step,
 * above emax a value that rounds past max, hence inf. */
static inline double mxp_lowp_round(const mxp_lowp *f, double x)
{
    const double a = fabs(x);
    uint64_t u;
    memcpy(&u, &a, sizeof u);
    int64_t e = (int64_t)(u >> 52) - 1023; /* a in [2^e, 2^(e+1)) */
    e = e < f->emin ? f->emin : e;
    e = e > f->emax + 1 ? f->emax + 1 : e;
    const uint64_t cbits = (uint64_t)(e - f->mant + 52 + 1023) << 52;
    double c;
    memcpy(&c, &cbits, sizeof c); /* c = ulp * 2^52: a + c has that ulp */
    double r = (a + c) - c;       /* no -ffast-math: not folded */
    r = r > f->max ? INFINITY : r;
    return copysign(r, x);
}

#endif
