/* What the GEMM register-tile templates (gemm-avx2-tile.h,
 * gemm-avx512-tile.h) share: the tile's shape, MR = MXP_TILE_ROWS rows of
 * MXP_TILE_VECS vectors MXP_TILE_V (by default 6 rows of 2), each of
 * MXP_TILE_LANES sums of type MXP_TILE_C (by default the element,
 * MXP_TILE_T), and the inlining the templates rely on to keep the
 * accumulators in registers.  Included by those templates only, after the
 * kernel file's macros. */
#ifndef MXP_KERNELS_GEMM_TILE_H
#define MXP_KERNELS_GEMM_TILE_H

#include <immintrin.h>
#include <stddef.h>

#include "kernels/gemm-kernels.h"

#define MXP_INLINE static inline __attribute__((always_inline))

#ifndef MXP_TILE_C
#define MXP_TILE_C MXP_TILE_T
#endif

#ifndef MXP_TILE_ROWS
#define MXP_TILE_ROWS 6
#endif
#ifndef MXP_TILE_VECS
#define MXP_TILE_VECS 2
#endif

enum {
    MXP_TILE_MR = MXP_TILE_ROWS,
    MXP_TILE_NV = MXP_TILE_VECS,
    MXP_TILE_LANES = sizeof(MXP_TILE_V) / sizeof(MXP_TILE_C),
    MXP_TILE_NR = MXP_TILE_VECS * MXP_TILE_LANES, /* AVX2: 64 bytes a row; AVX-512: 128 or 192 */
};

#endif
