/* mxp_compare: error statistics of one array against another, in float64,
 * streamed (errstats.c holds the statistics). */
#include "analysis/analysis-internal.h"
#include "array/array-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "mxp/alloc.h"

mxp_status mxp_analysis_check_pair(const mxp_array *reference, const mxp_array *test)
{
    if (!reference)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "reference array is NULL");
    if (!test)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "test array is NULL");
    const int nd = mxp_array_ndim(reference);
    const int64_t *rs = mxp_array_shape(reference), *ts = mxp_array_shape(test);
    bool same = nd == mxp_array_ndim(test);
    for (int i = 0; same && i < nd; i++)
        same = rs[i] == ts[i];
    if (!same)
        return mxp_error(MXP_ERR_SHAPE, "compare: reference and test have different shapes (ndim %d and %d)", nd,
                         mxp_array_ndim(test));
    if (mxp_array_size(reference) == 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "compare: the arrays are empty");
    return MXP_OK;
}

/* Both arrays through the accumulator in C order, a chunk at a time in
 * float64, as many passes as the percentiles need.  Memory: two chunks
 * and the accumulator's tables, whatever the arrays' size. */
static mxp_status compare_stream(const mxp_array *r, const mxp_array *t, mxp_err_acc *acc)
{
    const int64_t n = mxp_array_size(r), chunk = mxp_analysis_chunk(n);
    double *rb = mxp_malloc(2 * (size_t)chunk * sizeof *rb);
    if (!rb)
        return MXP_ERR_NO_MEMORY;
    double *tb = rb + chunk;
    mxp_status st = MXP_OK;
    for (bool again = true; st == MXP_OK && again;) {
        for (int64_t i = 0; st == MXP_OK && i < n; i += chunk) {
            const int64_t k = n - i < chunk ? n - i : chunk;
            st = mxp_array_convert_range(r, i, k, rb, MXP_F64);
            if (st == MXP_OK)
                st = mxp_array_convert_range(t, i, k, tb, MXP_F64);
            if (st == MXP_OK)
                mxp_err_acc_add(acc, rb, tb, k);
        }
        if (st == MXP_OK)
            st = mxp_err_acc_end_pass(acc, &again);
    }
    mxp_free(rb);
    return st;
}

static mxp_status compare(const mxp_array *reference, const mxp_array *test, mxp_compare_report *report)
{
    mxp_status st = mxp_analysis_check_pair(reference, test);
    if (st != MXP_OK)
        return st;
    if (!report)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "compare: report is NULL");
    mxp_err_acc acc;
    if ((st = mxp_err_acc_init(&acc, mxp_array_dtype(test), mxp_array_size(test), report)) != MXP_OK)
        return st;
    st = compare_stream(reference, test, &acc);
    mxp_err_acc_free(&acc);
    return st;
}

/* The report is filled in this release's layout and copied into the
 * caller's (within its struct_size) when it is complete. */
mxp_status mxp_compare(const mxp_array *reference, const mxp_array *test, mxp_compare_report *report)
{
    MXP_ABI_OUT(report, compare_report, "mxp_compare");
    mxp_compare_report r = { 0 };
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = compare(reference, test, report ? &r : NULL);
    mxp_fpenv_leave(env);
    if (st == MXP_OK)
        mxp_abi_out(report, &r, report_abi_n_, &mxp_abi_compare_report);
    return st;
}

static mxp_status compare_piece(const mxp_array *reference, const mxp_array *test, mxp_compare_report *report,
                                 mxp_compare_sums *sums, double *rel_errors)
{
    mxp_status st = mxp_analysis_check_pair(reference, test);
    if (st != MXP_OK)
        return st;
    if (!report || !sums)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "compare: %s is NULL", !report ? "report" : "sums");
    mxp_err_acc acc;
    if ((st = mxp_err_acc_init_piece(&acc, mxp_array_dtype(test), mxp_array_size(test), report, rel_errors)) != MXP_OK)
        return st;
    st = compare_stream(reference, test, &acc);
    if (st == MXP_OK)
        *sums = mxp_err_acc_sums(&acc);
    mxp_err_acc_free(&acc);
    return st;
}

mxp_status mxp_compare_piece(const mxp_array *reference, const mxp_array *test, mxp_compare_report *report,
                             mxp_compare_sums *sums, double *rel_errors)
{
    MXP_ABI_OUT(report, compare_report, "mxp_compare_piece");
    mxp_compare_report r = { 0 };
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = compare_piece(reference, test, report ? &r : NULL, sums, rel_errors);
    mxp_fpenv_leave(env);
    if (st == MXP_OK)
        mxp_abi_out(report, &r, report_abi_n_, &mxp_abi_compare_report);
    return st;
}
