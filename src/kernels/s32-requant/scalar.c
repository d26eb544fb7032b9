/* The reference: p = acc * m in int64 (|p| < 2^55), p / 2^shift rounded
 * exactly by the mode through a positive bias (so that shifts floor). */
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
