/* The twin of mxp_s8_sum_lines__avx512f, which the levels without it run. */
#include "kernels/pack-kernels.h"

void mxp_s8_sum_lines__scalar(const uint8_t *src, size_t ld, size_t lines, size_t len, bool is_signed, uint8_t flip,
                              uint32_t *sums)
{
    for (size_t l = 0; l < lines; l++) {
        const uint8_t *row = src + l * ld;
        uint32_t s = 0;
        for (size_t p = 0; p < len; p++)
            s += is_signed ? (uint32_t)(int32_t)(int8_t)row[p] : (uint32_t)(uint8_t)(row[p] ^ flip);
        sums[l] = s;
    }
}
