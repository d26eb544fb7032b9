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

/* Uniform in [0, 1) with 53 random bits. */
static inline double prng_uniform(uint64_t *state)
{
    return (double)(prng_next(state) >> 11) / 9007199254740992.0;
}

#endif
