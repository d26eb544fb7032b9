/* The twins of the integer GEMM's B packing kernels, which the levels
 * without them run: K-quads, checked for wide pairs on request, and int16
 * K-pairs (avx2.c). */
#include "kernels/pack-kernels.h"

bool mxp_s8_pack_quads__scalar(const int8_t *src, size_t ld, size_t quads, size_t cols, size_t width, int8_t *dst,
                               size_t panel, bool check)
{
    bool wide = false;
    for (size_t q = 0; q < quads; q++) {
        const int8_t *r = src + 4 * q * ld;
        for (size_t c = 0; c < cols; c++) {
            int8_t *d = dst + c / width * panel + 4 * (width * q + c % width);
            for (size_t t = 0; t < 4; t++)
                d[t] = r[t * ld + c];
            wide |= mxp_s8_wide_pair(r[c], r[ld + c]) | mxp_s8_wide_pair(r[2 * ld + c], r[3 * ld + c]);
        }
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
