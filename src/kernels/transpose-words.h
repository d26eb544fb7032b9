/* The words a transpose kernel leaves to copy one at a time (lines
 * [c_lo, c_hi) x words [q_lo, q_hi) of `size` bytes: 4 in
 * src/kernels/x32-transpose/, 2 in x16-transpose/), as their scalar twins
 * copy them: word q of line c, at src + c * ld + size q, to word
 * q * dst_ld + c of dst. */
#ifndef MXP_KERNELS_TRANSPOSE_WORDS_H
#define MXP_KERNELS_TRANSPOSE_WORDS_H

#include <stddef.h>
#include <string.h>

static inline void mxp_transpose_copy_words(const unsigned char *src, size_t ld, size_t c_lo, size_t c_hi,
                                            size_t q_lo, size_t q_hi, void *dst, size_t dst_ld, size_t size)
{
    for (size_t c = c_lo; c < c_hi; c++)
        for (size_t q = q_lo; q < q_hi; q++)
            memcpy((unsigned char *)dst + (q * dst_ld + c) * size, src + c * ld + size * q, size);
}

#endif
