/* Source values for conversion tests: every pattern of 8- and 16-bit types,
 * and for wider types the values that decide rounding for a given target
 * (midpoints, midpoints +-1, sticky bits, carries into the next binade, the
 * subnormal range, overflow boundaries), every exponent, and random bits. */
#ifndef MXP_TEST_CASES_H
#define MXP_TEST_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "mxp.h"

/* Fills out[0..cap) with bit patterns of src values chosen for converting to
 * dst; returns how many.  n_random random patterns are appended (seeded). */
size_t cases_build(mxp_dtype src, mxp_dtype dst, uint64_t *out, size_t cap, uint64_t seed,
                   size_t n_random);

/* Writes patterns as a typed buffer (itemsize of src). */
void cases_store(void *buf, mxp_dtype src, const uint64_t *bits, size_t n);

uint64_t cases_rand64(uint64_t *state);

#endif
