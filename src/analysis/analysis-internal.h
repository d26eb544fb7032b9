/* Internal: what compare.c and advisor.c share. */
#ifndef MXP_ANALYSIS_INTERNAL_H
#define MXP_ANALYSIS_INTERNAL_H

#include "mxp/analysis.h"

/* Checks both arrays (non-NULL, same shape, not empty). */
mxp_status mxp_analysis_check_pair(const mxp_array *reference, const mxp_array *test);

/* The statistics of n float64 pairs; test_dt decides the ulp and the
 * relative error at r == 0. */
mxp_status mxp_compare_f64(const double *r, const double *t, int64_t n, mxp_dtype test_dt,
                           mxp_compare_report *report);

#endif
