/* The reference twin of src/analysis: mxp_compare and
 * mxp_roundtrip_analysis as they were before they were streamed, on
 * whole-array float64 copies with a sort of every relative error. */
#ifndef MXP_TESTS_COMPARE_REF_H
#define MXP_TESTS_COMPARE_REF_H

#include "mxp.h"

mxp_status ref_compare(const mxp_array *reference, const mxp_array *test, mxp_compare_report *report);
mxp_status ref_roundtrip(const mxp_array *x, const mxp_dtype *candidates, int ncandidates, mxp_roundtrip_row *rows);

#endif
