/* mxp_roundtrip_analysis (streamed in roundtrip.c) and the dtype advisor:
 * one round trip of every candidate, then the choice and its sentence. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/analysis-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "mxp/alloc.h"

static const mxp_dtype advisor_candidates[MXP_ADVISOR_CANDIDATES] = {
    MXP_E4M3, MXP_E5M2, MXP_F16, MXP_BF16, MXP_F32, MXP_F64,
};

const mxp_dtype *mxp_advisor_candidates(void)
{
    return advisor_candidates;
}

static mxp_status roundtrip_analysis_in_env(const mxp_array *x, const mxp_dtype *candidates, int ncandidates,
                                  mxp_roundtrip_row *rows)
{
    mxp_status st = mxp_analysis_check_pair(x, x);
    if (st != MXP_OK)
        return st;
    if (ncandidates < 0 || (ncandidates > 0 && (!candidates || !rows)))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "roundtrip analysis: %d candidates, candidates or rows NULL",
                         ncandidates);
    for (int i = 0; i < ncandidates; i++) {
        if (!mxp_dtype_is_valid(candidates[i]))
            return mxp_error(MXP_ERR_INVALID_DTYPE, "roundtrip analysis: candidate %d (dtype %d) is not valid", i,
                             (int)candidates[i]);
    }
    return mxp_roundtrip_rows(x, candidates, ncandidates, rows, NULL);
}

/* Under the library's floating-point environment (core/fpenv.h); the rows
 * are filled in this release's layout and copied into the caller's. */
mxp_status mxp_roundtrip_analysis(const mxp_array *x, const mxp_dtype *candidates, int ncandidates,
                                  mxp_roundtrip_row *rows)
{
    const size_t count = ncandidates > 0 ? (size_t)ncandidates : 0;
    MXP_ABI_OUT_ARRAY(rows, count, roundtrip_row, "mxp_roundtrip_analysis");
    mxp_roundtrip_row *full = rows && count ? mxp_malloc(count * sizeof *full) : NULL;
    if (rows && count && !full)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_roundtrip_analysis: no memory for %zu rows", count);
    if (full)
        memset(full, 0, count * sizeof *full);
    const mxp_fpenv env = mxp_fpenv_enter();
    mxp_status st = roundtrip_analysis_in_env(x, candidates, ncandidates, full);
    mxp_fpenv_leave(env);
    if (st == MXP_OK)
        mxp_abi_out_array(rows, full, count, rows_abi_n_, rows_abi_stride_, &mxp_abi_roundtrip_row);
    mxp_free(full);
    return st;
}

static bool meets(const mxp_roundtrip_row *row, const mxp_requirement *req)
{
    const mxp_compare_report *r = &row->report;
    const bool clean = row->overflow == 0 && row->nan == 0 && r->nan_mismatches == 0 && r->inf_mismatches == 0;
    switch (req->kind) {
    case MXP_REQUIRE_MAX_REL_ERROR:
        return clean && r->max_rel_error <= req->value;
    case MXP_REQUIRE_MIN_PSNR:
        return clean && r->psnr_db >= req->value;
    default:
        return clean;
    }
}

/* Is a better than b for req (at equal size)? */
static bool better(const mxp_roundtrip_row *a, const mxp_roundtrip_row *b, const mxp_requirement *req)
{
    if (req->kind == MXP_REQUIRE_MAX_REL_ERROR && a->report.max_rel_error != b->report.max_rel_error)
        return a->report.max_rel_error < b->report.max_rel_error;
    return a->report.psnr_db > b->report.psnr_db;
}

/* Appends s to buf if it fits whole. */
static void append(char *buf, size_t size, const char *s)
{
    const size_t len = strlen(buf);
    if (len + strlen(s) < size) /* whole clauses only */
        memcpy(buf + len, s, strlen(s) + 1);
}

/* Checks the requirement. */
static mxp_status check_requirement(const mxp_requirement *req)
{
    switch (req->kind) {
    case MXP_REQUIRE_MAX_REL_ERROR:
        if (!(req->value >= 0) || isinf(req->value))
            return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                             "recommend dtype: max relative error %g must be finite and >= 0", req->value);
        return MXP_OK;
    case MXP_REQUIRE_MIN_PSNR:
        if (!isfinite(req->value))
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "recommend dtype: minimum PSNR %g must be finite",
                             req->value);
        return MXP_OK;
    case MXP_REQUIRE_NO_OVERFLOW:
        return MXP_OK;
    default:
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "recommend dtype: requirement kind %d is not one of mxp_requirement_kind",
                         (int)req->kind);
    }
}

/* The choice and its sentence, from the candidates' rows. */
static void advise(const mxp_roundtrip_row rows[MXP_ADVISOR_CANDIDATES], double max_abs,
                   const mxp_requirement *req, mxp_advice *advice)
{
    /* Groups of equal size, smallest first; within a group the better one. */
    int chosen = -1;
    for (int i = 0; i < MXP_ADVISOR_CANDIDATES && chosen < 0;) {
        int j = i;
        while (j < MXP_ADVISOR_CANDIDATES &&
               mxp_dtype_itemsize(advisor_candidates[j]) == mxp_dtype_itemsize(advisor_candidates[i]))
            j++;
        for (int k = i; k < j; k++) {
            if (meets(&rows[k], req) && (chosen < 0 || better(&rows[k], &rows[chosen], req)))
                chosen = k;
        }
        i = j;
    }
    if (chosen < 0)
        chosen = MXP_ADVISOR_CANDIDATES - 1; /* float64 round trips exactly; defensive */

    /* The sentence: why each smaller candidate fell short, then the choice
     * (written first, so that it always fits). */
    const mxp_roundtrip_row *c = &rows[chosen];
    const char *name = mxp_dtype_name(c->dtype);
    char tail[160];
    if (req->kind == MXP_REQUIRE_MAX_REL_ERROR)
        snprintf(tail, sizeof tail, "%s has max rel error %.3g <= %g", name, c->report.max_rel_error, req->value);
    else if (req->kind == MXP_REQUIRE_MIN_PSNR)
        snprintf(tail, sizeof tail, "%s holds the range with PSNR %.1f dB >= %g dB", name, c->report.psnr_db,
                 req->value);
    else
        snprintf(tail, sizeof tail, "%s holds the range (max |x| = %.3g) with PSNR %.1f dB", name, max_abs,
                 c->report.psnr_db);
    char reason[sizeof advice->reason] = "", clause[160];
    const size_t room = sizeof reason - strlen(tail) - 2;
    const size_t my_size = mxp_dtype_itemsize(advisor_candidates[chosen]);
    bool in_overflow_list = false;
    for (int k = 0; k < MXP_ADVISOR_CANDIDATES && mxp_dtype_itemsize(advisor_candidates[k]) <= my_size; k++) {
        if (k == chosen || meets(&rows[k], req))
            continue;
        const mxp_roundtrip_row *r = &rows[k];
        const mxp_dtype_traits *t = mxp_dtype_get_traits(r->dtype);
        if (r->overflow > 0) {
            if (in_overflow_list)
                snprintf(clause, sizeof clause, ", %s's %g", t->name, t->max);
            else
                snprintf(clause, sizeof clause, "%smax |x| = %.3g exceeds %s's %g", reason[0] ? "; " : "", max_abs,
                         t->name, t->max);
            in_overflow_list = true;
        } else {
            in_overflow_list = false;
            if (r->nan > 0 || r->report.nan_mismatches > 0 || r->report.inf_mismatches > 0)
                snprintf(clause, sizeof clause, "%s%s turns %lld values into NaN or changes infinities",
                         reason[0] ? "; " : "", t->name,
                         (long long)(r->nan + r->report.nan_mismatches + r->report.inf_mismatches));
            else if (req->kind == MXP_REQUIRE_MAX_REL_ERROR)
                snprintf(clause, sizeof clause, "%s%s's max rel error %.3g > %g", reason[0] ? "; " : "", t->name,
                         r->report.max_rel_error, req->value);
            else
                snprintf(clause, sizeof clause, "%s%s's PSNR %.1f dB < %g dB", reason[0] ? "; " : "", t->name,
                         r->report.psnr_db, req->value);
        }
        append(reason, room, clause);
    }
    if (reason[0])
        append(reason, sizeof reason, "; ");
    append(reason, sizeof reason, tail);

    memset(advice, 0, sizeof *advice);
    advice->dtype = c->dtype;
    advice->row = *c;
    memcpy(advice->reason, reason, sizeof reason);
}

/* advice and rows[MXP_ADVISOR_CANDIDATES] in this release's layout. */
static mxp_status recommend_dtype_rows_in_env(const mxp_array *x, const mxp_requirement *req, mxp_advice *advice,
                                              mxp_roundtrip_row *rows)
{
    if (!x)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "recommend dtype: array is NULL");
    if (!req || !advice)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "recommend dtype: requirement or advice is NULL");
    mxp_status st = check_requirement(req);
    if (st == MXP_OK)
        st = mxp_analysis_check_pair(x, x);
    double max_abs = 0; /* over the finite values, for the sentence */
    if (st == MXP_OK)
        st = mxp_roundtrip_rows(x, advisor_candidates, MXP_ADVISOR_CANDIDATES, rows, &max_abs);
    if (st != MXP_OK)
        return st;
    advise(rows, max_abs, req, advice);
    return MXP_OK;
}

/* Under the library's floating-point environment (core/fpenv.h); the
 * advice and the rows are copied into the caller's layouts. */
static mxp_status recommend(const char *where, const mxp_array *x, const mxp_requirement *req, mxp_advice *advice,
                            mxp_roundtrip_row *rows_out)
{
    MXP_ABI_OUT(advice, advice, where);
    MXP_ABI_OUT_ARRAY(rows_out, MXP_ADVISOR_CANDIDATES, roundtrip_row, where);
    mxp_advice adv = { 0 };
    mxp_roundtrip_row rows[MXP_ADVISOR_CANDIDATES];
    const mxp_fpenv env = mxp_fpenv_enter();
    mxp_status st = recommend_dtype_rows_in_env(x, req, advice ? &adv : NULL, rows);
    mxp_fpenv_leave(env);
    if (st == MXP_OK) {
        mxp_abi_out(advice, &adv, advice_abi_n_, &mxp_abi_advice);
        mxp_abi_out_array(rows_out, rows, MXP_ADVISOR_CANDIDATES, rows_out_abi_n_, rows_out_abi_stride_,
                          &mxp_abi_roundtrip_row);
    }
    return st;
}

mxp_status mxp_recommend_dtype(const mxp_array *x, const mxp_requirement *req, mxp_advice *advice)
{
    return recommend("mxp_recommend_dtype", x, req, advice, NULL);
}

mxp_status mxp_recommend_dtype_rows(const mxp_array *x, const mxp_requirement *req, mxp_advice *advice,
                                    mxp_roundtrip_row *rows_out)
{
    return recommend("mxp_recommend_dtype_rows", x, req, advice, rows_out);
}
