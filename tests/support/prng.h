/* The tests' pseudo-random numbers: xorshift64 (Marsaglia), deterministic
 * from a state the test owns, so a failure replays.  New tests use this;
 * older ones still carry copies of their own. */
#ifndef MXP_TESTS_SUPPORT_PRNG_H
#define MXP_TESTS_SUPPORT_PRNG_H

#include <stdint.h>

static inline uint64_t prng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

/* A state from any number, 0 and neighbouring seeds included: the seed's
 * bits spread by splitmix64's finalizer (xorshift64 from a small state
 * starts with small numbers, and neighbouring states stay alike for a
 * while). */
static inline uint64_t prng_seed(uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : 1;
}

/* Uniform in [0, 1) with 53 random bits. */
static inline double prng_uniform(uint64_t *state)
{
    return (double)(prng_next(state) >> 11) / 9007199254740992.0;
}

/* Uniform in [lo, hi). */
static inline double prng_range(uint64_t *state, double lo, double hi)
{
    return lo + (hi - lo) * prng_uniform(state);
}

/* An integer in [-vmax, vmax]. */
static inline int prng_int(uint64_t *state, int vmax)
{
    return (int)(prng_next(state) % (uint64_t)(2 * vmax + 1)) - vmax;
}

#endif
