/* An independent oracle for conversions: MPFR at each target's precision and
 * exponent range, with subnormalization.  Shares no code with src/. */
#ifndef MXP_TEST_ORACLE_H
#define MXP_TEST_ORACLE_H

#include <stdbool.h>
#include <stdint.h>

#include "mxp.h"

typedef struct oracle_result {
    uint64_t bits;   /* expected bit pattern */
    bool is_nan;     /* expected: any NaN with sign nan_sign (payload checked elsewhere) */
    int nan_sign;
} oracle_result;

/* The correctly rounded conversion of the element with bits src_bits of
 * src_type to dst_type in a deterministic mode (not stochastic). */
oracle_result oracle_convert(mxp_dtype dst_type, mxp_dtype src_type, uint64_t src_bits,
                             mxp_rounding mode, mxp_overflow overflow);

/* Does got (bits of dst_type) satisfy the expectation? */
bool oracle_matches(const oracle_result *want, uint64_t got, mxp_dtype dst_type);

/* Reads element i of a typed buffer as raw bits. */
uint64_t test_load_bits(const void *buf, size_t i, size_t itemsize);

#endif
