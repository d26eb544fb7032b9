/* Test helper of the analysis tests: a 1-D array of dtype dt holding v
 * (rounded once from float64 by mxp_array_astype), asserted to succeed.
 * Include after <cmocka.h>. */
#ifndef MXP_TESTS_ARRAY_FROM_H
#define MXP_TESTS_ARRAY_FROM_H

#include <string.h>

#include "mxp.h"

static inline mxp_array *from_doubles(const double *v, int64_t n, mxp_dtype dt)
{
    mxp_array *d = NULL, *out = NULL;
    assert_int_equal(mxp_array_empty(&d, MXP_F64, 1, &n), MXP_OK);
    memcpy(mxp_array_data(d), v, (size_t)n * sizeof *v);
    assert_int_equal(mxp_array_astype(&out, d, dt, NULL), MXP_OK);
    mxp_array_free(d);
    return out;
}

#endif
