/* mxp_roundtrip_analysis (streamed in roundtrip.c) and the dtype advisor:
 * one round trip of every candidate, then the choice and its sentence. */
#include <limits.h>
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

/* Every float storage format, smallest first (float8_e8m0fnu left out: a
 * scale format, no zero and no sign). */
static const mxp_dtype advisor_candidates_all[] = {
    MXP_E2M1,                                                                            /* 4 bits */
    MXP_E2M3, MXP_E3M2,                                                                  /* 6 bits */
    MXP_E4M3, MXP_E4M3IEEE, MXP_E4M3FNUZ, MXP_E4M3B11, MXP_E5M2, MXP_E5M2FNUZ, MXP_E3M4, /* 8 bits */
    MXP_F16, MXP_BF16, MXP_F32, MXP_F64,                                                 /* 16 to 64 bits */
};

const mxp_dtype *mxp_advisor_candidates_all(int *count)
{
    if (count)
        *count = (int)(sizeof advisor_candidates_all / sizeof advisor_candidates_all[0]);
    return advisor_candidates_all;
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

/* Appends s to buf if it fits whole (true), else nothing. */
static bool append(char *buf, size_t size, const char *s)
{
    const size_t len = strlen(buf);
    if (len + strlen(s) >= size) /* whole clauses only */
        return false;
    memcpy(buf + len, s, strlen(s) + 1);
    return true;
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

static int bits_of(const mxp_roundtrip_row *row)
{
    return mxp_dtype_get_traits(row->dtype)->bits;
}

/* Values whose round trip is lost: turned into inf or NaN or with their
 * infinity changed (the mismatches count each such value once), or, in a
 * format with neither inf nor NaN, saturated (overflow: no mismatch). */
static int64_t lost(const mxp_roundtrip_row *row)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(row->dtype);
    const int64_t saturated = t->has_inf || t->has_nan ? 0 : row->overflow;
    return row->report.nan_mismatches + row->report.inf_mismatches + saturated;
}

/* The choice and its sentence, from the candidates' rows in increasing
 * bits (a stable order: ties keep the caller's).  False when none meets
 * req: advice->dtype is then MXP_DTYPE_INVALID, advice->row the closest's
 * and the sentence names it; but with `last` the last (largest) is chosen
 * then, as mxp_recommend_dtype always has (float64: an input without a
 * finite value has PSNR 0 in every row). */
static bool advise(const mxp_roundtrip_row *const *rows, int n, double max_abs, const mxp_requirement *req,
                   bool last, mxp_advice *advice)
{
    /* Groups of equal size, smallest first; within a group the better one. */
    int chosen = -1;
    for (int i = 0; i < n && chosen < 0;) {
        int j = i;
        while (j < n && bits_of(rows[j]) == bits_of(rows[i]))
            j++;
        for (int k = i; k < j; k++) {
            if (meets(rows[k], req) && (chosen < 0 || better(rows[k], rows[chosen], req)))
                chosen = k;
        }
        i = j;
    }
    if (chosen < 0 && last)
        chosen = n - 1;
    const bool found = chosen >= 0;
    if (!found) { /* the closest: the fewest values lost, then the better metric, then the first */
        chosen = 0;
        for (int k = 1; k < n; k++) {
            const int64_t lk = lost(rows[k]), lc = lost(rows[chosen]);
            if (lk < lc || (lk == lc && better(rows[k], rows[chosen], req)))
                chosen = k;
        }
    }

    /* The sentence: why each smaller candidate (every candidate, when none
     * meets req) fell short, then the choice (written first, so that it
     * always fits). */
    const mxp_roundtrip_row *c = rows[chosen];
    const char *name = mxp_dtype_name(c->dtype);
    char tail[160];
    if (!found) {
        char want[64], how[64];
        if (req->kind == MXP_REQUIRE_MAX_REL_ERROR)
            snprintf(want, sizeof want, "meets max rel error <= %g", req->value);
        else if (req->kind == MXP_REQUIRE_MIN_PSNR)
            snprintf(want, sizeof want, "meets PSNR >= %g dB", req->value);
        else
            snprintf(want, sizeof want, "holds the range (max |x| = %.3g)", max_abs);
        if (lost(c) > 0)
            snprintf(how, sizeof how, "%lld values overflow or turn into NaN", (long long)lost(c));
        else if (req->kind == MXP_REQUIRE_MAX_REL_ERROR)
            snprintf(how, sizeof how, "max rel error %.3g", c->report.max_rel_error);
        else
            snprintf(how, sizeof how, "PSNR %.1f dB", c->report.psnr_db);
        snprintf(tail, sizeof tail, "no candidate %s; the closest is %s (%s)", want, name, how);
    } else if (req->kind == MXP_REQUIRE_MAX_REL_ERROR)
        snprintf(tail, sizeof tail, "%s has max rel error %.3g <= %g", name, c->report.max_rel_error, req->value);
    else if (req->kind == MXP_REQUIRE_MIN_PSNR)
        snprintf(tail, sizeof tail, "%s holds the range with PSNR %.1f dB >= %g dB", name, c->report.psnr_db,
                 req->value);
    else
        snprintf(tail, sizeof tail, "%s holds the range (max |x| = %.3g) with PSNR %.1f dB", name, max_abs,
                 c->report.psnr_db);
    char reason[sizeof advice->reason] = "", clause[160];
    const size_t room = sizeof reason - strlen(tail) - 2;
    const int my_bits = found ? bits_of(c) : INT_MAX;
    bool in_overflow_list = false; /* the last clause (appended) lists the maxima max |x| exceeds */
    for (int k = 0; k < n && bits_of(rows[k]) <= my_bits; k++) {
        if ((found && k == chosen) || meets(rows[k], req))
            continue;
        const mxp_roundtrip_row *r = rows[k];
        const mxp_dtype_traits *t = mxp_dtype_get_traits(r->dtype);
        bool head = false;
        if (r->overflow > 0) {
            if (in_overflow_list)
                snprintf(clause, sizeof clause, ", %s's %g", t->name, t->max);
            else
                snprintf(clause, sizeof clause, "%smax |x| = %.3g exceeds %s's %g", reason[0] ? "; " : "", max_abs,
                         t->name, t->max);
            head = !in_overflow_list;
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
        /* A list whose first clause did not fit starts again at the next
         * overflow, so that no ", NAME's MAX" follows another clause. */
        if (!append(reason, room, clause) && head)
            in_overflow_list = false;
    }
    if (reason[0])
        append(reason, sizeof reason, "; ");
    append(reason, sizeof reason, tail);

    memset(advice, 0, sizeof *advice);
    advice->dtype = found ? c->dtype : MXP_DTYPE_INVALID;
    advice->row = *c;
    memcpy(advice->reason, reason, sizeof reason);
    return found;
}

/* The rows in increasing bits, ties in the caller's order (n is small). */
static void sort_by_bits(const mxp_roundtrip_row *rows, int n, const mxp_roundtrip_row **sorted)
{
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0 && bits_of(sorted[j - 1]) > bits_of(&rows[i]); j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = &rows[i];
    }
}

/* Checks the candidates of mxp_recommend_dtype_among. */
static mxp_status check_candidates(const mxp_dtype *candidates, int n)
{
    if (n < 1 || n > MXP_ADVISOR_MAX_CANDIDATES)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "recommend dtype: %d candidates, not 1 to %d", n,
                         MXP_ADVISOR_MAX_CANDIDATES);
    if (!candidates)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "recommend dtype: candidates is NULL");
    for (int i = 0; i < n; i++) {
        const mxp_dtype_traits *t = mxp_dtype_get_traits(candidates[i]);
        if (!t)
            return mxp_error(MXP_ERR_INVALID_DTYPE, "recommend dtype: candidate %d (dtype %d) is not a dtype", i,
                             (int)candidates[i]);
        if (t->kind != MXP_KIND_FLOAT)
            return mxp_error(MXP_ERR_INVALID_DTYPE,
                             "recommend dtype: candidate %d (%s) is not a float dtype: the advisor measures float "
                             "storage formats (integers are quantization's, mxp/quant.h)",
                             i, t->name);
        for (int j = 0; j < i; j++) {
            if (candidates[j] == candidates[i])
                return mxp_error(MXP_ERR_INVALID_ARGUMENT, "recommend dtype: candidate %d (%s) repeats candidate %d",
                                 i, t->name, j);
        }
    }
    return MXP_OK;
}

/* advice and rows[n] in this release's layout; among (the caller's
 * candidates, checked): MXP_ERR_INVALID_ARGUMENT with both filled when no
 * candidate meets req; else mxp_recommend_dtype's six. */
static mxp_status recommend_in_env(const mxp_array *x, const mxp_requirement *req, const mxp_dtype *candidates,
                                   int n, bool among, mxp_advice *advice, mxp_roundtrip_row *rows, bool *filled)
{
    double max_abs = 0; /* over the finite values, for the sentence */
    mxp_status st = mxp_roundtrip_rows(x, candidates, n, rows, &max_abs);
    if (st != MXP_OK)
        return st;
    const mxp_roundtrip_row *sorted[MXP_ADVISOR_MAX_CANDIDATES] = { NULL };
    sort_by_bits(rows, n, sorted);
    *filled = true;
    if (!advise(sorted, n, max_abs, req, !among, advice))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "recommend dtype: %s", advice->reason);
    return MXP_OK;
}

/* The checks of every advisor entry point, in this order. */
static mxp_status check_advisor_args(const mxp_array *x, const mxp_requirement *req, const mxp_advice *advice)
{
    if (!x)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "recommend dtype: array is NULL");
    if (!req || !advice)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "recommend dtype: requirement or advice is NULL");
    return MXP_OK;
}

/* Under the library's floating-point environment (core/fpenv.h); the
 * advice and the rows are copied into the caller's layouts (also when no
 * candidate meets the requirement: advice->dtype MXP_DTYPE_INVALID).
 * check: the caller's candidates (mxp_recommend_dtype_among), checked
 * after x, req and advice; else mxp_advisor_candidates(). */
static mxp_status recommend(const char *where, const mxp_array *x, const mxp_requirement *req,
                            const mxp_dtype *candidates, int ncandidates, bool check, mxp_advice *advice,
                            mxp_roundtrip_row *rows_out)
{
    const size_t count = ncandidates >= 1 && ncandidates <= MXP_ADVISOR_MAX_CANDIDATES ? (size_t)ncandidates : 0;
    MXP_ABI_OUT(advice, advice, where);
    MXP_ABI_OUT_ARRAY(rows_out, count, roundtrip_row, where);
    mxp_status st = check_advisor_args(x, req, advice);
    if (st == MXP_OK && check)
        st = check_candidates(candidates, ncandidates);
    if (st == MXP_OK)
        st = check_requirement(req);
    if (st == MXP_OK)
        st = mxp_analysis_check_pair(x, x);
    if (st != MXP_OK)
        return st;
    mxp_advice adv = { 0 };
    mxp_roundtrip_row small[MXP_ADVISOR_CANDIDATES];
    mxp_roundtrip_row *rows = count <= MXP_ADVISOR_CANDIDATES ? small : mxp_malloc(count * sizeof *rows);
    if (!rows)
        return mxp_error(MXP_ERR_NO_MEMORY, "%s: no memory for %zu rows", where, count);
    bool filled = false;
    const mxp_fpenv env = mxp_fpenv_enter();
    st = recommend_in_env(x, req, candidates, ncandidates, check, &adv, rows, &filled);
    mxp_fpenv_leave(env);
    if (filled) {
        mxp_abi_out(advice, &adv, advice_abi_n_, &mxp_abi_advice);
        mxp_abi_out_array(rows_out, rows, count, rows_out_abi_n_, rows_out_abi_stride_, &mxp_abi_roundtrip_row);
    }
    if (rows != small)
        mxp_free(rows);
    return st;
}

mxp_status mxp_recommend_dtype(const mxp_array *x, const mxp_requirement *req, mxp_advice *advice)
{
    return recommend("mxp_recommend_dtype", x, req, advisor_candidates, MXP_ADVISOR_CANDIDATES, false, advice,
                     NULL);
}

mxp_status mxp_recommend_dtype_rows(const mxp_array *x, const mxp_requirement *req, mxp_advice *advice,
                                    mxp_roundtrip_row *rows_out)
{
    return recommend("mxp_recommend_dtype_rows", x, req, advisor_candidates, MXP_ADVISOR_CANDIDATES, false, advice,
                     rows_out);
}

mxp_status mxp_recommend_dtype_among(const mxp_array *x, const mxp_requirement *req, const mxp_dtype *candidates,
                                     int ncandidates, mxp_advice *advice, mxp_roundtrip_row *rows_out)
{
    return recommend("mxp_recommend_dtype_among", x, req, candidates, ncandidates, true, advice, rows_out);
}
