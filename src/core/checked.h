/* Internal: int64 arithmetic that says when the exact result does not fit
 * (instead of signed overflow, which is undefined behaviour).  Each returns
 * true and stores the result when it fits, false otherwise. */
#ifndef MXP_CORE_CHECKED_H
#define MXP_CORE_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

static inline bool mxp_checked_mul_i64(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_mul_overflow(a, b, r);
}

static inline bool mxp_checked_add_i64(int64_t a, int64_t b, int64_t *r)
{
    return !__builtin_add_overflow(a, b, r);
}

#endif
