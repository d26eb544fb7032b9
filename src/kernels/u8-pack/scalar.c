/* The twin of mxp_u8_pack_pairs_6__avx2, which the levels without it run. */
#include "kernels/pack-kernels.h"

void mxp_u8_pack_pairs_6__scalar(const uint8_t *src, size_t ld, size_t k, uint8_t flip, int16_t *dst)
{
    enum { MR = 6 };
    for (size_t p = 0; p < (k + 1) / 2 * 2; p++)
        for (size_t r = 0; r < MR; r++)
            dst[p / 2 * 2 * MR + 2 * r + p % 2] = p < k ? (int16_t)(src[r * ld + p] ^ flip) : 0;
}
