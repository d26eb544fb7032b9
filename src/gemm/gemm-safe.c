/* mxp_gemm_safe: a float64 bound on |alpha op(A) op(B) + beta C| from one
 * pass over the inputs, and what to do when it exceeds C's range (refuse,
 * clip, scale by a power of two, or write a wider matrix).  Built on the
 * public mxp_gemm; see docs/gemm.md, "Overflow handling (mxp_gemm_safe)". */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "gemm/gemm-internal.h"
#include "mxp/alloc.h"
#include "mxp/gemm.h"

enum { CHUNK = 512 };

static mxp_status check_matrix(const char *name, const void *p, size_t rows, size_t cols, size_t ld, mxp_dtype t)
{
    return mxp_gemm_check_matrix("mxp_gemm_safe", name, p, rows, cols, ld, t);
}

/* max |x| over a stored rows x cols matrix, converted to float64 in
 * chunks; NaNs are ignored (they propagate whatever is done). */
static double max_abs(const void *p, mxp_dtype t, size_t rows, size_t cols, size_t ld)
{
    double buf[CHUNK], mx = 0;
    const size_t size = mxp_dtype_itemsize(t);
    for (size_t r = 0; r < rows; r++)
        for (size_t j = 0; j < cols; j += CHUNK) {
            size_t len = cols - j < CHUNK ? cols - j : CHUNK;
            mxp_convert(buf, MXP_F64, (const unsigned char *)p + (r * ld + j) * size, t, len, NULL);
            for (size_t q = 0; q < len; q++) {
                double v = fabs(buf[q]);
                if (v > mx)
                    mx = v;
            }
        }
    return mx;
}

/* Rows of the float64 workspace (m x n) times 2^-e, rounded once into
 * dst (dt, ldd); stochastic rounding indexes C's elements in row-major
 * order, as mxp_gemm does. */
static void round_rows(void *dst, mxp_dtype dt, size_t ldd, const double *w, size_t m, size_t n, int e,
                       const mxp_convert_opts *co)
{
    double buf[CHUNK];
    const size_t ds = mxp_dtype_itemsize(dt);
    const double s = ldexp(1.0, -e);
    mxp_convert_opts o = *co;
    const uint64_t offset0 = o.index_offset;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j += CHUNK) {
            size_t len = n - j < CHUNK ? n - j : CHUNK;
            for (size_t q = 0; q < len; q++)
                buf[q] = w[i * n + j + q] * s;
            o.index_offset = offset0 + i * n + j;
            mxp_convert((unsigned char *)dst + (i * ldd + j) * ds, dt, buf, MXP_F64, len, &o);
        }
}

/* promote_to is written while A, B, C (with beta) and the bias are read:
 * it must share no byte with them (C is documented untouched, too). */
static mxp_status check_promote_apart(const mxp_gemm_safe_opts *so, mxp_trans ta, mxp_trans tb, size_t m, size_t n,
                                      size_t k, const void *a, mxp_dtype at, size_t lda, const void *b, mxp_dtype bt,
                                      size_t ldb, const void *c, mxp_dtype ct, size_t ldc, const mxp_gemm_opts *o)
{
    const mxp_gemm_region p = mxp_gemm_region_of(so->promote_to, m, n, so->ldp, so->promote_dtype);
    const size_t bias_n = o && o->bias ? (o->bias_kind == MXP_BIAS_PER_ROW ? m : n) : 0;
    const mxp_gemm_region others[4] = {
        mxp_gemm_region_of(a, ta ? k : m, ta ? m : k, lda, at),
        mxp_gemm_region_of(b, tb ? n : k, tb ? k : n, ldb, bt),
        mxp_gemm_region_of(c, m, n, ldc, ct),
        mxp_gemm_region_of(bias_n ? o->bias : NULL, bias_n ? 1 : 0, bias_n, bias_n, bias_n ? o->bias_dtype : MXP_F64),
    };
    static const char *const names[4] = { "A", "B", "C", "the bias" };
    for (int i = 0; i < 4; i++)
        if (mxp_gemm_regions_overlap(&p, &others[i]))
            return mxp_error(MXP_ERR_OVERLAP, "mxp_gemm_safe: promote_to overlaps %s; give it a buffer of its own",
                             names[i]);
    return MXP_OK;
}

static mxp_status finish(mxp_status st, mxp_gemm_safe_report *report, const mxp_gemm_safe_report *r)
{
    if (report)
        *report = *r;
    return st;
}

static mxp_status gemm_safe(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha, const void *a,
                            mxp_dtype a_type, size_t lda, const void *b, mxp_dtype b_type, size_t ldb, double beta,
                            void *c, mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts,
                            const mxp_gemm_safe_opts *safe, mxp_gemm_safe_report *report)
{
    static const mxp_gemm_safe_opts no_safe;
    const mxp_gemm_safe_opts *so = safe ? safe : &no_safe;
    mxp_gemm_safe_report r;
    memset(&r, 0, sizeof r);
    if ((unsigned)so->strategy > MXP_OVERFLOW_STRATEGY_PROMOTE)
        return finish(mxp_error(MXP_ERR_INVALID_ARGUMENT,
                                "mxp_gemm_safe: strategy %d is not one of mxp_overflow_strategy's",
                                (int)so->strategy), report, &r);
    const mxp_dtype types[3] = { a_type, b_type, c_type };
    for (int t = 0; t < 3; t++)
        if (mxp_dtype_is_valid(types[t]) && !mxp_is_float_dtype(types[t]))
            return finish(mxp_error(MXP_ERR_UNSUPPORTED,
                                    "mxp_gemm_safe: %c is %s; the overflow check is for floating GEMM (integer GEMM "
                                    "saturates by itself, docs/gemm.md)", "ABC"[t], mxp_dtype_name(types[t])),
                          report, &r);
    /* Everything mxp_gemm checks that does not depend on the sizes: types,
     * transposes, options, epilogue (an empty product writes nothing). */
    mxp_status st = mxp_gemm(ta, tb, 0, 0, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc, opts);
    if (st != MXP_OK)
        return finish(st, report, &r);
    const size_t kk = m && n ? k : 0, mm = m && n ? m : 0, nn = m && n ? n : 0;
    st = check_matrix("a", a, ta ? kk : mm, ta ? mm : kk, lda, a_type);
    if (st == MXP_OK)
        st = check_matrix("b", b, tb ? nn : kk, tb ? kk : nn, ldb, b_type);
    if (st == MXP_OK)
        st = check_matrix("c", c, m, n, ldc, c_type);
    if (st == MXP_OK && so->strategy == MXP_OVERFLOW_STRATEGY_PROMOTE) {
        if (so->promote_dtype != MXP_F32 && so->promote_dtype != MXP_F64)
            st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm_safe: promote_dtype %s: PROMOTE writes a float32 or "
                           "float64 promote_to", mxp_dtype_is_valid(so->promote_dtype) ?
                           mxp_dtype_name(so->promote_dtype) : "(invalid)");
        else
            st = check_matrix("p (promote_to)", so->promote_to, m, n, so->ldp, so->promote_dtype);
    }
    if (st == MXP_OK)
        st = mxp_gemm_check_buffers("mxp_gemm_safe", ta, tb, m, n, k, a, a_type, lda, b, b_type, ldb, c, c_type, ldc,
                                    opts);
    if (st == MXP_OK && so->strategy == MXP_OVERFLOW_STRATEGY_PROMOTE && mm)
        st = check_promote_apart(so, ta, tb, m, n, kk, a, a_type, lda, b, b_type, ldb, c, c_type, ldc, opts);
    if (st != MXP_OK)
        return finish(st, report, &r);

    /* The bound, in float64. */
    const mxp_dtype_traits *ct = mxp_dtype_get_traits(c_type);
    r.c_max = ct->max;
    if (kk && alpha != 0) {
        r.max_abs_a = max_abs(a, a_type, ta ? kk : mm, ta ? mm : kk, lda);
        r.max_abs_b = max_abs(b, b_type, tb ? nn : kk, tb ? kk : nn, ldb);
    }
    if (mm && beta != 0)
        r.max_abs_c = max_abs(c, c_type, m, n, ldc);
    double bound = 0;
    if (r.max_abs_a > 0 && r.max_abs_b > 0)
        bound = (double)k * r.max_abs_a * r.max_abs_b * fabs(alpha);
    if (r.max_abs_c > 0)
        bound += fabs(beta) * r.max_abs_c;
    if (mm && opts && opts->bias) /* validated above */
        bound += max_abs(opts->bias, opts->bias_dtype, 1, opts->bias_kind == MXP_BIAS_PER_ROW ? m : n,
                         opts->bias_kind == MXP_BIAS_PER_ROW ? m : n);
    /* ReLU, GELU and SiLU never increase |t|; a clamp caps it. */
    if (opts && opts->clamp) {
        double lim = fmax(fabs(opts->clamp_lo), fabs(opts->clamp_hi));
        if (bound > lim)
            bound = lim;
    }
    r.bound = bound;
    r.at_risk = bound > r.c_max;
    const char *cname = ct->name;

    if (!r.at_risk || so->strategy == MXP_OVERFLOW_STRATEGY_NONE) {
        if (r.at_risk)
            snprintf(r.what, sizeof r.what, "the result may reach %.3g, beyond %s's %.6g; computed anyway (no "
                     "strategy): larger values overflow as mxp_gemm rounds them", bound, cname, r.c_max);
        else
            snprintf(r.what, sizeof r.what, "the result stays within %s's range: |C| <= %.3g <= %.6g", cname, bound,
                     r.c_max);
        return finish(mxp_gemm(ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc, opts),
                      report, &r);
    }

    r.applied = so->strategy;
    if (so->strategy == MXP_OVERFLOW_STRATEGY_REFUSE) {
        snprintf(r.what, sizeof r.what, "the result may reach %.3g, beyond %s's %.6g; choose a strategy (clip, "
                 "scale or promote)", bound, cname, r.c_max);
        return finish(mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_gemm_safe: %s", r.what), report, &r);
    }
    double p_max = so->strategy == MXP_OVERFLOW_STRATEGY_PROMOTE ? mxp_dtype_get_traits(so->promote_dtype)->max
                                                                  : r.c_max;
    /* Saturation handles any bound; a scale or a wider type needs a finite one. */
    if ((so->strategy == MXP_OVERFLOW_STRATEGY_SCALE && !isfinite(bound)) ||
        (so->strategy == MXP_OVERFLOW_STRATEGY_PROMOTE && bound > p_max)) {
        r.applied = MXP_OVERFLOW_STRATEGY_REFUSE;
        snprintf(r.what, sizeof r.what, "the result may reach %.3g, beyond %s's %.6g, and %s cannot help%s", bound,
                 cname, r.c_max, mxp_overflow_strategy_name(so->strategy),
                 isfinite(bound) ? " (promote_to's range is too small)" : " (the inputs hold infinities or the "
                                                                          "bound overflows float64)");
        return finish(mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_gemm_safe: %s", r.what), report, &r);
    }

    /* A float64 workspace holding what mxp_gemm would round into C (a
     * float64 accumulator when a float32 one could overflow). */
    if (m > SIZE_MAX / sizeof(double) / n)
        return finish(mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_gemm_safe: a %zu x %zu workspace is too large", m, n),
                      report, &r);
    double *w = mxp_malloc(m * n * sizeof(double));
    if (!w)
        return finish(MXP_ERR_NO_MEMORY, report, &r);
    if (beta != 0) {
        const size_t cs = mxp_dtype_itemsize(c_type);
        for (size_t i = 0; i < m; i++)
            mxp_convert(w + i * n, MXP_F64, (const unsigned char *)c + i * ldc * cs, c_type, n, NULL);
    }
    static const mxp_gemm_opts no_opts;
    mxp_gemm_opts o = opts ? *opts : no_opts;
    memset(&o.convert, 0, sizeof o.convert); /* exact into float64 */
    if (!o.acc_dtype && a_type != MXP_F64 && b_type != MXP_F64 && bound > FLT_MAX / 2)
        o.acc_dtype = MXP_F64;
    st = mxp_gemm(ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, w, MXP_F64, n, &o);
    if (st == MXP_OK) {
        mxp_convert_opts co = opts ? opts->convert : (mxp_convert_opts){ .rounding = MXP_ROUND_NEAREST_EVEN };
        if (so->strategy == MXP_OVERFLOW_STRATEGY_CLIP) {
            co.overflow = MXP_OVERFLOW_SATURATE;
            round_rows(c, c_type, ldc, w, m, n, 0, &co);
            snprintf(r.what, sizeof r.what, "the result may reach %.3g, beyond %s's %.6g; values beyond were "
                     "clipped to +-%.6g", bound, cname, r.c_max, r.c_max);
        } else if (so->strategy == MXP_OVERFLOW_STRATEGY_SCALE) {
            int e = 0;
            for (double s = bound; s > r.c_max / 2; s *= 0.5)
                e++;
            r.scale_exponent = e;
            round_rows(c, c_type, ldc, w, m, n, e, &co);
            snprintf(r.what, sizeof r.what, "the result may reach %.3g, beyond %s's %.6g; C holds the result "
                     "times 2^-%d (multiply by 2^%d to undo)", bound, cname, r.c_max, e, e);
        } else {
            round_rows(so->promote_to, so->promote_dtype, so->ldp, w, m, n, 0, &co);
            snprintf(r.what, sizeof r.what, "the result may reach %.3g, beyond %s's %.6g; it was written to the "
                     "%s promote_to, C is untouched", bound, cname, r.c_max, mxp_dtype_name(so->promote_dtype));
        }
    }
    mxp_free(w);
    return finish(st, report, &r);
}

mxp_status mxp_gemm_safe(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha, const void *a,
                         mxp_dtype a_type, size_t lda, const void *b, mxp_dtype b_type, size_t ldb, double beta,
                         void *c, mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts,
                         const mxp_gemm_safe_opts *safe, mxp_gemm_safe_report *report)
{
    MXP_ABI_IN(opts, gemm_opts, "mxp_gemm_safe");
    MXP_ABI_IN(safe, gemm_safe_opts, "mxp_gemm_safe");
    MXP_ABI_OUT(report, gemm_safe_report, "mxp_gemm_safe");
    mxp_gemm_safe_report r = { 0 };
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = gemm_safe(ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc,
                                    opts, safe, &r);
    mxp_fpenv_leave(env);
    mxp_abi_out(report, &r, report_abi_n_, &mxp_abi_gemm_safe_report);
    return st;
}
