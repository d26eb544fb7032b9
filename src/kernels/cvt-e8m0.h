/* float32, bfloat16 and float16 -> float8_e8m0fnu (the MX scale: 2^(E-127),
 * E = 0..254, 0xff NaN, no zero, no sign), every rounding mode: what the
 * AVX2 and AVX-512 loops (cvt-e8m0-avx2.h, cvt-e8m0-avx512.h) share.
 * The 16-bit sources are widened exactly to float32 bits first.
 *
 * On the float32 bits b of a positive finite x the result is the exponent
 * field E = b >> 23 plus one where the mode rounds up to the next power.
 * The part above 2^E decides: a 23-bit fraction f = b & 0x7fffff (below
 * 2^-126, b in [0x400000, 0x800000): E = 0 and f = (b << 1) & 0x7fffff,
 * and below 2^-127 the result is 0 in every mode, the smallest value).
 *   nearest (even and away): f >= 1/2  -- a tie rounds up in both, for the
 *     kept significand (1) is odd;  toward zero, down: never;  up: f > 0;
 *   stochastic: r < f * 2^32 (r: the element's 32 random bits).
 * The deterministic modes are one add and one shift, (b + c) >> 23 with
 * c = 0x400000, 0x7fffff or 0 (c / 2 below 2^-126).  The carry out of
 * E = 254 gives 255, NaN, as overflow does but saturating (254); +inf
 * takes the same road (E = 255, f = 0).  Zero, negative values and NaN
 * give NaN.  Twin: the reference converter (convert-ref.c, encode_float). */
#ifndef MXP_KERNELS_CVT_E8M0_H
#define MXP_KERNELS_CVT_E8M0_H

#include "kernels/cvt-kernel.h"
#include "kernels/stream-loop.h"

typedef enum { E8M0_FROM_F32, E8M0_FROM_BF16, E8M0_FROM_F16 } mxp_e8m0_src;

typedef struct mxp_e8m0_ctx {
    mxp_e8m0_src src;
    mxp_rounding mode;
    int saturate;
    mxp_sr_key key;
    uint64_t index0;
} mxp_e8m0_ctx;

/* The rounding add of the deterministic modes for a normal x (float32
 * bits; bfloat16's is this >> 16, float16's >> 13). */
MXP_INLINE int mxp_e8m0_add(mxp_rounding mode)
{
    return mode == MXP_ROUND_NEAREST_EVEN || mode == MXP_ROUND_NEAREST_AWAY ? 0x400000
           : mode == MXP_ROUND_UP                                          ? 0x7fffff
                                                                           : 0;
}

/* One instantiation of a loop per rounding mode, so the mode is a constant
 * (down is toward zero for the positive values that have a result). */
#define MXP_E8M0_BY_MODE(name, loop)                                                                                   \
    MXP_INLINE void name(void *dst, const void *src, size_t n, const mxp_cvt_params *p, mxp_e8m0_src sk)               \
    {                                                                                                                  \
        mxp_e8m0_ctx c = { sk, p->rounding, p->overflow == MXP_OVERFLOW_SATURATE,                                     \
                           mxp_sr_key_for(p->seed, p->index0), p->index0 };                                           \
        switch (p->rounding) {                                                                                         \
        case MXP_ROUND_NEAREST_EVEN: c.mode = MXP_ROUND_NEAREST_EVEN; loop(dst, src, n, c); break;                    \
        case MXP_ROUND_NEAREST_AWAY: c.mode = MXP_ROUND_NEAREST_AWAY; loop(dst, src, n, c); break;                    \
        case MXP_ROUND_UP: c.mode = MXP_ROUND_UP; loop(dst, src, n, c); break;                                        \
        case MXP_ROUND_STOCHASTIC: c.mode = MXP_ROUND_STOCHASTIC; loop(dst, src, n, c); break;                        \
        default: c.mode = MXP_ROUND_TOWARD_ZERO; loop(dst, src, n, c); break;                                         \
        }                                                                                                              \
    }

#endif
