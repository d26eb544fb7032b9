/* The twins of the integer GEMM's B packing kernels, which the levels
 * without them run: K-quads, checked for wide pairs on request, and int16
 * K-pairs (avx2.c). */
#include "kernels/pack-kernels.h"

bool mxp_s8_pack_quads__scalar(const int8_t *r0, const int8_t *r1, const int8_t *r2, const int8_t *r3, size_t cols,
                               int8_t *dst, bool check)
{
    bool wide = false;
    for (size_t c = 0; c < cols; c++) {
        dst[4 * c] = r0[c];
        dst[4 * c + 1] = r1[c];
        dst[4 * c + 2] = r2[c];
        dst[4 * c + 3] = r3[c];
        wide |= mxp_s8_wide_pair(r0[c], r1[c]) | mxp_s8_wide_pair(r2[c], r3[c]);
    }
    return check && wide;
}

void mxp_s8_pack_pairs_16__scalar(const int8_t *src, size_t ld, size_t pairs, size_t cols, int16_t *dst,
                                  size_t panel)
{
    for (size_t c = 0; c < cols; c++)
        for (size_t q = 0; q < pairs; q++) {
            int16_t *d = dst + c / 16 * panel + 32 * q + 2 * (c % 16);
            d[0] = src[2 * q * ld + c];
            d[1] = src[(2 * q + 1) * ld + c];
        }
}
