/* Internal: what a conversion kernel is given, and the stochastic-rounding
 * random stream every implementation (reference and SIMD) shares.
 * It lives among the kernels (a leaf: it includes only src/core/rng.h and
 * the public convert.h) so that kernels include nothing above them; the
 * convert layer includes it too. */
#ifndef MXP_KERNELS_CVT_KERNEL_H
#define MXP_KERNELS_CVT_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "core/rng.h"
#include "mxp/convert.h"

typedef struct mxp_cvt_params {
    mxp_rounding rounding;
    mxp_overflow overflow;
    uint64_t seed;
    uint64_t index0;          /* logical index of element 0 (stochastic rounding) */
    mxp_convert_flags *flags; /* only the reference path counts; kernels see NULL */
} mxp_cvt_params;

/* Converts n contiguous elements.  Kernels never validate and never fail. */
typedef void (*mxp_cvt_fn)(void *dst, const void *src, size_t n, const mxp_cvt_params *p);

/* Stochastic rounding draws 32 random bits r per element from (seed, index):
 * the magnitude rounds up iff r < floor(frac * 2^32), frac being the
 * discarded part of an ulp.  The stream depends only on seed and the element
 * index, so thread count and ISA cannot change a result.  SIMD kernels
 * compute the same three multiply-xorshift rounds lane by lane.
 *   key1, key2 = two 32-bit halves of splitmix64(seed ^ hi32(index))
 *   x = lo32(index) + key1;  x ^= x >> 16;  x *= 0x7feb352d;
 *   x ^= x >> 15;  x ^= key2;  x *= 0x846ca68b;  r = x ^ (x >> 16)            */
typedef struct mxp_sr_key { uint32_t k1, k2; } mxp_sr_key;

static inline mxp_sr_key mxp_sr_key_for(uint64_t seed, uint64_t index)
{
    uint64_t z = mxp_splitmix64(seed ^ ((index >> 32) * 0xd1b54a32d192ed03ull));
    mxp_sr_key k = { (uint32_t)z, (uint32_t)(z >> 32) };
    return k;
}

/* lowbias32 (C. Wellons' hash-prospector) with the second key mixed in
 * between its two multiply rounds. */
static inline uint32_t mxp_sr_mix(uint32_t x, mxp_sr_key k)
{
    x += k.k1;
    x ^= x >> 16; x *= 0x7feb352du;
    x ^= x >> 15; x ^= k.k2; x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static inline uint32_t mxp_sr_random(uint64_t seed, uint64_t index)
{
    return mxp_sr_mix((uint32_t)index, mxp_sr_key_for(seed, index));
}

#endif
