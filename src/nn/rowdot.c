/* Dot products and cosine similarities of rows.  Paired rows: each dot
 * product summed left to right in float64.  Every pair (outer): one
 * float64 GEMM of the rows widened to float64 (its fused multiply-adds in
 * k order: the same bits at every ISA level), then scaled by the norms. */
#include <math.h>

#include "core/error.h"
#include "core/fpenv.h"
#include "mxp/alloc.h"
#include "mxp/ops.h"
#include "nn/nn-internal.h"

typedef struct dot_job {
    int64_t d;
    mxp_dtype at, bt, ot;
    int64_t as, bs;
    bool cosine;
    double eps;
} dot_job;

enum { A, B, OUT };

static double norm_or_eps(const double *x, int64_t n, double eps)
{
    const double s = sqrt(nn_sumsq(x, n, 0));
    return s > eps ? s : eps;
}

static void dot_row(const void *ctx, char **p, double *a, int64_t row)
{
    (void)row;
    const dot_job *j = ctx;
    double *b = a + j->d;
    nn_load(a, p[A], j->at, j->as, j->d);
    nn_load(b, p[B], j->bt, j->bs, j->d);
    double s = nn_dot(a, b, j->d);
    if (j->cosine)
        s /= norm_or_eps(a, j->d, j->eps) * norm_or_eps(b, j->d, j->eps);
    nn_store(p[OUT], j->ot, 1, &s, 1);
}

/* out's shape: the broadcast leading axes (paired) or (n, m) (outer). */
static mxp_status dot_shape(const char *fn, const mxp_array *a, const mxp_array *b, bool outer, int *nd,
                            int64_t *shape)
{
    mxp_status st = nn_check_input(fn, "a", a);
    if (st == MXP_OK)
        st = nn_check_input(fn, "b", b);
    if (st != MXP_OK)
        return st;
    if (a->ndim < 1 || b->ndim < 1 || a->shape[a->ndim - 1] != b->shape[b->ndim - 1]) {
        char sa[512], sb[512];
        mxp_format_shape(sa, sizeof sa, a->ndim, a->shape);
        mxp_format_shape(sb, sizeof sb, b->ndim, b->shape);
        return mxp_error(MXP_ERR_SHAPE, "%s: rows of a %s and b %s differ in length", fn, sa, sb);
    }
    if (outer) {
        if (a->ndim != 2 || b->ndim != 2)
            return mxp_error(MXP_ERR_SHAPE, "%s: every pair needs 2-d a and b (rows, d), not %d-d and %d-d", fn,
                             a->ndim, b->ndim);
        *nd = 2;
        shape[0] = a->shape[0];
        shape[1] = b->shape[0];
        return MXP_OK;
    }
    return mxp_broadcast_shapes(nd, shape, a->ndim - 1, a->shape, b->ndim - 1, b->shape);
}

static mxp_status paired(const char *fn, mxp_array *work, const mxp_array *a, const mxp_array *b, dot_job *j)
{
    (void)fn;
    int64_t shape[MXP_MAXDIMS];
    const int nd = work->ndim;
    for (int i = 0; i < nd; i++)
        shape[i] = work->shape[i];
    shape[nd] = j->d;
    mxp_array *av = NULL, *bv = NULL, *ov = NULL;
    mxp_status st = mxp_array_broadcast_to(&av, a, nd + 1, shape);
    if (st == MXP_OK)
        st = mxp_array_broadcast_to(&bv, b, nd + 1, shape);
    if (st == MXP_OK)
        st = mxp_array_expand_dims(&ov, work, nd);
    if (st == MXP_OK) {
        j->as = nn_step(av);
        j->bs = nn_step(bv);
        const mxp_array *arrs[3] = { av, bv, ov };
        nn_rows r;
        nn_rows_init(&r, nd, arrs, 3);
        st = nn_run_rows(&r, j->d, 2 * (size_t)j->d, true, dot_row, j);
    }
    mxp_array_free(av);
    mxp_array_free(bv);
    mxp_array_free(ov);
    return st;
}

/* The norms (or eps) of x's rows, widened, into n. */
static void row_norms(double *n, const mxp_array *x64, double eps)
{
    const int64_t d = x64->shape[1];
    for (int64_t i = 0; i < x64->shape[0]; i++)
        n[i] = norm_or_eps((const double *)(const void *)(x64->data + i * x64->strides[0]), d, eps);
}

static mxp_status every_pair(mxp_array *work, const mxp_array *a, const mxp_array *b, const dot_job *j)
{
    mxp_array *a64 = NULL, *b64 = NULL, *bt = NULL, *c = NULL;
    double *na = NULL;
    mxp_status st = mxp_array_astype(&a64, a, MXP_F64, NULL);
    if (st == MXP_OK)
        st = mxp_array_astype(&b64, b, MXP_F64, NULL);
    if (st == MXP_OK)
        st = mxp_array_transpose(&bt, b64, NULL);
    if (st == MXP_OK)
        st = mxp_array_new_owner(&c, MXP_F64, 2, work->shape);
    if (st == MXP_OK)
        st = mxp_matmul_into(c, a64, bt, NULL);
    const int64_t n = work->shape[0], m = work->shape[1];
    if (st == MXP_OK && j->cosine) {
        na = mxp_malloc((size_t)(n + m + 1) * sizeof(double));
        st = na ? MXP_OK : mxp_error(MXP_ERR_NO_MEMORY, "no memory for %lld norms", (long long)(n + m));
    }
    if (st == MXP_OK && j->cosine) {
        double *nb = na + n, *v = (double *)(void *)c->data;
        row_norms(na, a64, j->eps);
        row_norms(nb, b64, j->eps);
        for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < m; k++)
                v[i * m + k] /= na[i] * nb[k];
    }
    if (st == MXP_OK)
        st = mxp_array_copyto(work, c, MXP_CASTING_UNSAFE, NULL);
    mxp_free(na);
    mxp_array_free(a64);
    mxp_array_free(b64);
    mxp_array_free(bt);
    mxp_array_free(c);
    return st;
}

static mxp_status dot_into(const char *fn, mxp_array *out, const mxp_array *a, const mxp_array *b, bool outer,
                           bool cosine, double eps)
{
    int nd;
    int64_t shape[MXP_MAXDIMS];
    mxp_status st = nn_check_input(fn, "out", out);
    if (st == MXP_OK)
        st = dot_shape(fn, a, b, outer, &nd, shape);
    if (st == MXP_OK)
        st = nn_check_out_shape(fn, out, nd, shape);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", out->dtype);
    if (st == MXP_OK && cosine)
        st = nn_check_eps(fn, eps);
    if (st != MXP_OK)
        return st;
    const mxp_fpenv env = mxp_fpenv_enter();
    mxp_array *work = NULL;
    const mxp_array *in[2] = { a, b };
    st = nn_out_begin(fn, out, in, 2, 1, &work);
    dot_job j = { .d = a->shape[a->ndim - 1], .at = a->dtype, .bt = b->dtype, .ot = out->dtype, .cosine = cosine,
                  .eps = eps };
    if (st == MXP_OK)
        st = outer ? every_pair(work, a, b, &j) : paired(fn, work, a, b, &j);
    st = nn_out_end(out, work, st);
    mxp_fpenv_leave(env);
    return st;
}

static mxp_status dot_new(const char *fn, mxp_array **out, const mxp_array *a, const mxp_array *b, bool outer,
                          bool cosine, double eps, mxp_dtype dt)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    int nd;
    int64_t shape[MXP_MAXDIMS];
    mxp_status st = dot_shape(fn, a, b, outer, &nd, shape);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", dt = nn_out_dtype(dt, mxp_promote_types(a->dtype, b->dtype)));
    mxp_array *r = NULL;
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, dt, nd, shape);
    if (st == MXP_OK)
        st = dot_into(fn, r, a, b, outer, cosine, eps);
    return nn_give_out(out, r, st);
}

mxp_status mxp_rowdot(mxp_array **out, const mxp_array *a, const mxp_array *b, bool outer, mxp_dtype out_dtype)
{
    return dot_new("mxp_rowdot", out, a, b, outer, false, 0, out_dtype);
}

mxp_status mxp_rowdot_into(mxp_array *out, const mxp_array *a, const mxp_array *b, bool outer)
{
    return dot_into("mxp_rowdot_into", out, a, b, outer, false, 0);
}

mxp_status mxp_cosine_similarity(mxp_array **out, const mxp_array *a, const mxp_array *b, bool outer, double eps,
                                 mxp_dtype out_dtype)
{
    return dot_new("mxp_cosine_similarity", out, a, b, outer, true, eps, out_dtype);
}

mxp_status mxp_cosine_similarity_into(mxp_array *out, const mxp_array *a, const mxp_array *b, bool outer,
                                      double eps)
{
    return dot_into("mxp_cosine_similarity_into", out, a, b, outer, true, eps);
}
