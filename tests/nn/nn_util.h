/* Small helpers of the nn tests: arrays from doubles and back. */
#ifndef NN_UTIL_H
#define NN_UTIL_H

#include <math.h>
#include <string.h>

#include "mxp.h"

/* A new C-ordered array of dt holding vals (n = its size) rounded once. */
static inline mxp_array *mk(mxp_dtype dt, int ndim, const int64_t *shape, const double *vals)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_empty(&a, dt, ndim, shape), MXP_OK);
    if (vals)
        assert_int_equal(mxp_convert(mxp_array_data(a), dt, vals, MXP_F64, (size_t)mxp_array_size(a), NULL), MXP_OK);
    return a;
}

/* The elements of a in C order, widened to float64 into v. */
static inline void vals(const mxp_array *a, double *v)
{
    mxp_array *d = NULL;
    assert_int_equal(mxp_array_astype(&d, a, MXP_F64, NULL), MXP_OK);
    memcpy(v, mxp_array_data(d), (size_t)mxp_array_size(d) * sizeof(double));
    mxp_array_free(d);
}

/* want rounded once to dt, as a double. */
static inline double rounded(double want, mxp_dtype dt)
{
    unsigned char b[8];
    double r;
    assert_int_equal(mxp_convert(b, dt, &want, MXP_F64, 1, NULL), MXP_OK);
    assert_int_equal(mxp_convert(&r, MXP_F64, b, dt, 1, NULL), MXP_OK);
    return r;
}

/* got equals want rounded into dt (NaN equals NaN); for float64 within
 * ulps units in the last place of max(|want|, floor) (floor: the size of
 * the terms a result cancels from). */
static inline void expect_near(const char *what, int i, double got, double want, mxp_dtype dt, double ulps,
                               double floor)
{
    if (isnan(want) && isnan(got))
        return;
    if (dt == MXP_F64) {
        const double m = fabs(want) > floor ? fabs(want) : floor;
        const double tol = ulps * (m > 0x1p-1022 ? m * 0x1p-52 : 0x1p-1074);
        if (!(fabs(got - want) <= tol))
            fail_msg("%s[%d]: got %.17g, want %.17g", what, i, got, want);
        return;
    }
    const double r = rounded(want, dt);
    if (!(got == r) && !(isnan(r) && isnan(got)))
        fail_msg("%s[%d] (%s): got %.17g, want %.17g (exactly %.17g)", what, i, mxp_dtype_name(dt), got, r, want);
}

static inline void expect_rounded(const char *what, int i, double got, double want, mxp_dtype dt, double ulps)
{
    expect_near(what, i, got, want, dt, ulps, 0);
}

/* The rows a bfloat16 row kernel wrote when given several at once (row r
 * at got + r stride): each row's first n values the bits of want's (its
 * twin on the row alone) and the 16 after them untouched (0x5a5a). */
static inline void expect_rows_as_alone(const char *name, size_t rows, size_t n, int variant, const uint16_t *got,
                                        const uint16_t *want, size_t stride)
{
    for (size_t r = 0; r < rows; r++) {
        const uint16_t *g = got + r * stride, *w = want + r * stride;
        int clean = 1;
        for (size_t t = n; t < n + 16; t++)
            clean &= g[t] == 0x5a5a;
        if (memcmp(g, w, n * sizeof g[0]) || !clean)
            fail_msg("%s: %zu rows of %zu, variant %d: row %zu differs from its twin alone", name, rows, n, variant, r);
    }
}

#endif
