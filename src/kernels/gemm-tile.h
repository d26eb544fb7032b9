/* What the GEMM register-tile templates (gemm-avx2-tile.h,
 * gemm-avx512-tile.h) share: the tile's shape, MR = 6 rows of two vectors
 * MXP_TILE_V, each of MXP_TILE_LANES sums of type MXP_TILE_C (by default
 * the element, MXP_TILE_T), and the inlining the templates rely on to keep
 * the accumulators in registers.  Included by those templates only, after
 * the kernel file's macros. */
#ifndef MXP_KERNELS_GEMM_TILE_H
#define MXP_KERNELS_GEMM_TILE_H

#include <immintrin.h>
#include <stddef.h>

#include "kernels/gemm-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

#ifndef MXP_TILE_C
#define MXP_TILE_C MXP_TILE_T
#endif

enum {
    MXP_TILE_MR = 6,
    MXP_TILE_LANES = sizeof(MXP_TILE_V) / sizeof(MXP_TILE_C),
    MXP_TILE_NR = 2 * MXP_TILE_LANES, /* AVX2: 64 bytes a row; AVX-512: 128 */
};

#endif
