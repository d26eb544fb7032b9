/* 32-bit transposes for packing (AVX2): as avx512f.c, in blocks of 8 lines
 * x 8 words (eight 32-byte loads, an 8 x 8 transpose, eight 32-byte
 * stores).  The portable twin is scalar.c. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/pack-kernels.h"
#include "kernels/x32-transpose/blocks8.h"

void mxp_x32_transpose__avx2(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld)
{
    mxp_x32_transpose_blocks8(src, ld, lines, count, dst, dst_ld);
}
