/* The twin of the wide-pair scan (avx2.c), which the scalar level runs:
 * does int8 B hold a K-pair (rows 2q and 2q + 1 of op(B), the pairs that
 * vpmaddubsw adds) whose magnitudes sum past 128?  Below that bound a pair
 * of products with any uint8 A, |a0 b0 + a1 b1| <= 255 * 128 = 32640,
 * fits vpmaddubsw's int16 without saturating (src/gemm/int8.c). */
#include "kernels/pack-kernels.h"

bool mxp_s8_scan_wide_pairs__scalar(const int8_t *b, size_t ld, bool trans, size_t k, size_t n)
{
    if (trans) { /* stored line j is column j: its pairs are adjacent bytes */
        for (size_t j = 0; j < n; j++) {
            const int8_t *line = b + j * ld;
            for (size_t p = 0; p + 2 <= k; p += 2)
                if (mxp_s8_wide_pair(line[p], line[p + 1]))
                    return true;
        }
        return false;
    }
    for (size_t p = 0; p + 2 <= k; p += 2) { /* stored rows p and p + 1 */
        const int8_t *r0 = b + p * ld, *r1 = r0 + ld;
        bool any = false; /* over the row pair without a branch: the compiler vectorizes it */
        for (size_t j = 0; j < n; j++)
            any |= mxp_s8_wide_pair(r0[j], r1[j]);
        if (any)
            return true;
    }
    return false;
}
