/* Internal: the library's one pseudo-random mixer, splitmix64 (Steele,
 * Lea and Flood, "Fast splittable pseudorandom number generators", 2014;
 * the finalizer of Java's SplittableRandom).  Every random stream in mxp is
 * a function of (seed, counter) built from it, never a state carried from
 * call to call, so results depend on neither thread count nor call order:
 *   - stochastic rounding's per-element keys (src/kernels/cvt-kernel.h),
 *   - seeded random arrays (mxp_array_random, src/array/create.c),
 *   - the optimizers' per-(step, parameter) seeds (src/train/optim.c). */
#ifndef MXP_CORE_RNG_H
#define MXP_CORE_RNG_H

#include <stdint.h>

/* splitmix64's output for the state z (the state advanced by the golden
 * gamma, then mixed): a bijection on 64-bit words. */
static inline uint64_t mxp_splitmix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
