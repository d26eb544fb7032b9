/* The words a 16-bit transpose kernel leaves to copy one at a time (lines
 * [c_lo, c_hi) x words [q_lo, q_hi)), as mxp_x16_transpose__scalar copies
 * them: dst[q * dst_ld + c] = the word at src + c * ld + 2q. */
#ifndef MXP_KERNELS_X16_TRANSPOSE_WORDS_H
#define MXP_KERNELS_X16_TRANSPOSE_WORDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline void mxp_x16_copy_words(const unsigned char *src, size_t ld, size_t c_lo, size_t c_hi, size_t q_lo,
                                      size_t q_hi, uint16_t *dst, size_t dst_ld)
{
    for (size_t c = c_lo; c < c_hi; c++)
        for (size_t q = q_lo; q < q_hi; q++)
            memcpy(dst + q * dst_ld + c, src + c * ld + 2 * q, 2);
}

#endif
