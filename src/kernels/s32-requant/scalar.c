/* The reference: p = acc * m in int64 (|p| < 2^55), p / 2^shift rounded
 * exactly by the mode through a positive bias (so that shifts floor). */
#include <stdbool.h>
#include <string.h>

#include "kernels/requant-kernels.h"
#include "mxp/convert.h"

static inline int64_t round_shift(int64_t p, int s, int mode)
{
    const int64_t bias = (int64_t)1 << 62; /* a multiple of 2^s that makes p + bias positive */
    const uint64_t u = (uint64_t)(p + bias);
    const uint64_t rem = u & (((uint64_t)1 << s) - 1), half = (uint64_t)1 << (s - 1);
    const int64_t fl = (int64_t)(u >> s) - (bias >> s); /* floor */
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: return fl + (rem > half || (rem == half && fl % 2 != 0));
    case MXP_ROUND_NEAREST_AWAY: return fl + (rem > half || (rem == half && p > 0));
    case MXP_ROUND_TOWARD_ZERO: return fl + (rem != 0 && p < 0);
    case MXP_ROUND_UP: return fl + (rem != 0);
    default: return fl; /* down */
    }
}

void mxp_s32_requant__scalar(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m, const int32_t *shift,
                             int per_col, int32_t zp, int32_t lo, int32_t hi, int mode)
{
    for (size_t q = 0; q < len; q++) {
        const size_t c = per_col ? q : 0;
        int64_t x = round_shift((int64_t)acc[q] * m[c], shift[c], mode) + zp;
        x = x < lo ? lo : x > hi ? hi : x;
        dst[q] = (uint8_t)(x & 0xff);
    }
}

/* round_to_int of src/gemm/int8-finish.c for nearest even (|t| < 2^40). */
static inline int64_t round_even(double t)
{
    const int64_t q = (int64_t)t; /* toward zero */
    const double r = t - (double)q;
    const bool odd = q % 2 != 0;
    return r > 0.5 || (r == 0.5 && odd) ? q + 1 : r < -0.5 || (r == -0.5 && odd) ? q - 1 : q;
}

/* One row: how many elements it did. */
static size_t row_f64(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    for (size_t q = 0; q < len; q++) {
        const size_t c = p->per_col ? q : 0;
        const double t0 = (double)acc[q] * p->m[c];
        if (!(t0 > -0x1p53 && t0 < 0x1p53))
            return q;
        double t = t0 * p->p[c] * p->alpha;
        if (p->bias)
            t += p->bias[p->bias_per_col ? q : 0];
        if (p->relu)
            t = t > 0 ? t : 0.0;
        if (p->clamp)
            t = t < p->clamp_lo ? p->clamp_lo : t > p->clamp_hi ? p->clamp_hi : t;
        if (p->f32) {
            const float f = (float)t;
            memcpy(dst + 4 * q, &f, 4);
            continue;
        }
        const int64_t v = t > -0x1p40 && t < 0x1p40 ? round_even(t) : t > 0 ? (int64_t)1 << 40 : -((int64_t)1 << 40);
        int64_t x = v + p->zp;
        x = x < p->lo ? p->lo : x > p->hi ? p->hi : x;
        dst[q] = (uint8_t)(x & 0xff);
    }
    return len;
}

size_t mxp_s32_requant_f64__scalar(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    return mxp_s32_requant_f64_rows(row_f64, dst, acc, len, p);
}
