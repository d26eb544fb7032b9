/* The twin of mxp_bf16_pack_b_pairs_32__avx512f: the same panels, and the
 * tiny check as bf16-scan's (a nonzero |v| < 2^-63: |v| - 1, as unsigned,
 * below the bits of 2^-63 less one), as a running minimum. */
#include "kernels/pack-kernels.h"

enum { NR = 32, TINY_KEY_LIMIT = ((127 - 63) << 7) - 1 };

static uint16_t tiny_key(uint16_t v)
{
    return (uint16_t)((v & 0x7fffu) - 1u);
}

bool mxp_bf16_pack_b_pairs_32__scalar(const uint16_t *b, size_t ld, size_t kc, size_t nc, uint32_t *dst)
{
    const size_t pairs = (kc + 1) / 2;
    uint16_t lo = 0xffff; /* the least tiny_key */
    for (size_t j0 = 0; j0 < nc; j0 += NR, dst += NR * pairs)
        for (size_t q = 0; q < pairs; q++)
            for (size_t l = 0; l < NR; l++) {
                uint32_t v = 0;
                if (j0 + l < nc) {
                    const uint16_t x0 = b[2 * q * ld + j0 + l], x1 = 2 * q + 1 < kc ? b[(2 * q + 1) * ld + j0 + l] : 0;
                    v = (uint32_t)x0 | (uint32_t)x1 << 16;
                    lo = tiny_key(x0) < lo ? tiny_key(x0) : lo;
                    lo = tiny_key(x1) < lo ? tiny_key(x1) : lo; /* a padding 0: 0xffff */
                }
                dst[q * NR + l] = v;
            }
    return lo < TINY_KEY_LIMIT;
}
