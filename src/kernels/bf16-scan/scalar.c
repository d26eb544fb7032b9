/* The twin of the tiny-value scan (avx512f.c), which the levels below
 * AVX-512 run: 0 < |v| < 2^-63 exactly when |v| - 1, as unsigned, is below
 * the bits of 2^-63 less one. */
#include "kernels/pack-kernels.h"

bool mxp_bf16_scan_tiny__scalar(const uint16_t *x, size_t rows, size_t cols, size_t ld)
{
    for (size_t r = 0; r < rows; r++) {
        unsigned tiny = 0; /* branch-free over the row: the compiler vectorizes it */
        for (size_t c = 0; c < cols; c++) {
            const unsigned v = x[r * ld + c] & 0x7fffu;
            tiny |= (unsigned)(v - 1u < (unsigned)((127 - 63) << 7) - 1u); /* 0 < v < 2^-63's bits */
        }
        if (tiny)
            return true;
    }
    return false;
}
