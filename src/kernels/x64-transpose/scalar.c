/* The twin of the 64-bit transposes, one word at a time; the levels
 * without a vector kernel run it too. */
#include "kernels/pack-kernels.h"
#include "kernels/transpose-words.h"

void mxp_x64_transpose__scalar(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld)
{
    mxp_transpose_copy_words(src, ld, 0, lines, 0, count, dst, dst_ld, 8);
}
