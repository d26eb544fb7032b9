/* Reductions over any axes.  The reduced axes are moved last; for each
 * output element the reduced block is read row by row, converted in chunks
 * to the accumulator type and folded in by the chosen algorithm.
 *
 * Arithmetic in a float32 accumulator is done in double and rounded back to
 * float after every operation: for + - * / and sqrt that equals float32
 * arithmetic exactly (53 >= 2*24 + 2), so one code path serves both.  A
 * float16 or bfloat16 accumulator (an emulation of hardware that
 * accumulates in them) is the same path rounding to that format instead
 * (core/lowp.h), every input element rounded to it first. */
#include <math.h>
#include <string.h>

#include "array/array-internal.h"
#include "convert/convert-config.h"
#include "core/abi.h"
#include "core/dtype-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/lowp.h"
#include "core/profile-internal.h"
#include "kernels/pairwise-sum.h"
#include "mxp/ops.h"
#include "ops/kernel-config.h"

static const char *const names[MXP_REDUCE_OP_COUNT] = {
    "sum", "mean", "prod", "max", "min", "argmax", "argmin", "norm2", "var", "std",
};

const char *mxp_reduce_op_name(mxp_reduce_op op)
{
    return (unsigned)op < MXP_REDUCE_OP_COUNT ? names[op] : "invalid";
}

enum { CHUNK = 1024, LEVELS = 64 };

typedef struct acc {
    mxp_reduce_op op;
    mxp_sum_algorithm alg;
    bool f32;       /* round every step to float32 */
    bool lowp;      /* round every step to float16/bfloat16 (fmt) */
    mxp_lowp fmt;
    mxp_dtype kind; /* MXP_F64 (floats, in double), MXP_S64 or MXP_U64 */
    /* float sums */
    double level_sum[LEVELS];
    int64_t level_n[LEVELS];
    int depth;
    double kahan_c, total;
    /* integer sums and products, wrapping */
    uint64_t itotal;
    /* max/min/arg */
    double best;
    uint64_t ibest;
    int64_t best_at, count;
    bool has, nan;
    double mean; /* var/std second pass */
    float *fbuf; /* pairwise float32 sums read the chunk as float32 */
} acc;

static double rnd(const acc *a, double x)
{
    return a->lowp ? mxp_lowp_round(&a->fmt, x) : a->f32 ? (double)(float)x : x;
}

/* mxp_pairwise_f64's order with every addition rounded to a low-precision
 * accumulator. */
static double pairwise_lowp(const acc *a, const double *x, size_t n)
{
    if (n < 8) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s = rnd(a, s + x[i]);
        return s;
    }
    if (n <= 128) {
        double r[8];
        for (int k = 0; k < 8; k++)
            r[k] = x[k];
        size_t i = 8;
        for (; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++)
                r[k] = rnd(a, r[k] + x[i + k]);
        double s = rnd(a, rnd(a, rnd(a, r[0] + r[1]) + rnd(a, r[2] + r[3])) +
                              rnd(a, rnd(a, r[4] + r[5]) + rnd(a, r[6] + r[7])));
        for (; i < n; i++)
            s = rnd(a, s + x[i]);
        return s;
    }
    size_t h = n / 2 / 8 * 8;
    return rnd(a, pairwise_lowp(a, x, h) + pairwise_lowp(a, x + h, n - h));
}

/* Pairwise across chunks: partial sums of equal size merge, like a binary
 * counter, so the whole sum keeps the log n error growth. */
static void push_chunk(acc *a, double s, int64_t n)
{
    a->level_sum[a->depth] = s;
    a->level_n[a->depth++] = n;
    while (a->depth >= 2 && a->level_n[a->depth - 1] >= a->level_n[a->depth - 2]) {
        a->level_sum[a->depth - 2] = rnd(a, a->level_sum[a->depth - 2] + a->level_sum[a->depth - 1]);
        a->level_n[a->depth - 2] += a->level_n[a->depth - 1];
        a->depth--;
    }
}

static void add_floats(acc *a, const double *x, size_t n)
{
    switch (a->alg) {
    case MXP_SUM_KAHAN:
        for (size_t i = 0; i < n; i++) {
            double y = rnd(a, x[i] - a->kahan_c), t = rnd(a, a->total + y);
            a->kahan_c = rnd(a, rnd(a, t - a->total) - y);
            a->total = t;
        }
        break;
    case MXP_SUM_NAIVE:
        for (size_t i = 0; i < n; i++)
            a->total = rnd(a, a->total + x[i]);
        break;
    default:
        push_chunk(a, a->f32    ? (double)mxp_pairwise_f32(a->fbuf, n)
                      : a->lowp ? pairwise_lowp(a, x, n)
                                : mxp_pairwise_f64(x, n),
                   (int64_t)n);
        break;
    }
}

static double float_sum(const acc *a)
{
    if (a->alg != MXP_SUM_PAIRWISE)
        return a->total;
    double s = 0;
    for (int i = a->depth - 1; i >= 0; i--)
        s = rnd(a, s + a->level_sum[i]);
    return s;
}

/* Feeds n values (in buf, of a->kind) that start at flat index first. */
static void feed(acc *a, void *buf, size_t n, int64_t first)
{
    double *x = buf;
    const int64_t *s = buf;
    const uint64_t *u = buf;
    if (a->lowp && a->kind == MXP_F64 && a->op != MXP_REDUCE_MAX && a->op != MXP_REDUCE_MIN &&
        a->op != MXP_REDUCE_ARGMAX && a->op != MXP_REDUCE_ARGMIN)
        for (size_t i = 0; i < n; i++) /* the inputs enter the accumulator's format */
            x[i] = rnd(a, x[i]);
    switch (a->op) {
    case MXP_REDUCE_SUM:
    case MXP_REDUCE_MEAN:
        if (a->kind == MXP_F64 && a->f32 && a->alg == MXP_SUM_PAIRWISE) {
            a->fbuf = buf; /* walk_block converted this chunk to float32 */
            add_floats(a, NULL, n);
        } else if (a->kind == MXP_F64)
            add_floats(a, x, n);
        else
            for (size_t i = 0; i < n; i++)
                a->itotal += a->kind == MXP_S64 ? (uint64_t)s[i] : u[i];
        break;
    case MXP_REDUCE_NORM2:
    case MXP_REDUCE_VAR:
    case MXP_REDUCE_STD:
        for (size_t i = 0; i < n; i++) {
            double d = a->op == MXP_REDUCE_NORM2 ? x[i] : rnd(a, x[i] - a->mean);
            x[i] = rnd(a, d * d);
        }
        add_floats(a, x, n);
        break;
    case MXP_REDUCE_PROD:
        for (size_t i = 0; i < n; i++) {
            if (a->kind == MXP_F64)
                a->total = rnd(a, a->total * x[i]);
            else
                a->itotal *= a->kind == MXP_S64 ? (uint64_t)s[i] : u[i];
        }
        break;
    default: { /* max, min, argmax, argmin */
        bool want_max = a->op == MXP_REDUCE_MAX || a->op == MXP_REDUCE_ARGMAX;
        for (size_t i = 0; i < n && !a->nan; i++) {
            bool better;
            if (a->kind == MXP_F64) {
                if (x[i] != x[i]) {
                    a->nan = true;
                    a->best = x[i];
                    a->best_at = first + (int64_t)i;
                    break;
                }
                better = !a->has || (want_max ? x[i] > a->best : x[i] < a->best);
                if (better)
                    a->best = x[i];
            } else {
                uint64_t v = a->kind == MXP_S64 ? (uint64_t)s[i] : u[i];
                bool gt = a->kind == MXP_S64 ? (int64_t)v > (int64_t)a->ibest : v > a->ibest;
                bool lt = a->kind == MXP_S64 ? (int64_t)v < (int64_t)a->ibest : v < a->ibest;
                better = !a->has || (want_max ? gt : lt);
                if (better)
                    a->ibest = v;
            }
            if (better) {
                a->best_at = first + (int64_t)i;
                a->has = true;
            }
        }
        break;
    }
    }
    a->count += (int64_t)n;
}

typedef struct job {
    const mxp_array *v; /* the input, reduced axes last */
    int nkeep;          /* leading kept axes */
    mxp_dtype in_kind;  /* what rows are converted to */
} job;

/* Feeds len elements of dtype at row (byte stride) in chunks converted to
 * the accumulator's input kind; element 0 has flat index first. */
static void walk_row(acc *a, const char *row, mxp_dtype dtype, ptrdiff_t stride, int64_t len, mxp_dtype in_kind,
                     int64_t first)
{
    _Alignas(64) double buf[CHUNK];
    /* pairwise float32 sums read the chunk as float32 (see feed) */
    const bool f32 = a->f32 && a->alg == MXP_SUM_PAIRWISE && a->kind == MXP_F64 &&
                     (a->op == MXP_REDUCE_SUM || a->op == MXP_REDUCE_MEAN);
    /* floats of up to 32 bits reach float64 through float32: both steps are
     * exact, and float32 has SIMD converters from every such type where a
     * direct float64 one may be missing (the reference converter is ~30x
     * slower) */
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dtype);
    const bool via_f32 = !f32 && in_kind == MXP_F64 && t->kind == MXP_KIND_FLOAT && t->bits <= 32 &&
                         !(dtype == MXP_F32 && stride == 4 && /* contiguous float32: one SIMD widening */
                           mxp_cvt_find(MXP_F64, MXP_F32, MXP_ROUND_NEAREST_EVEN, mxp_isa_current()));
    /* contiguous float32 summed pairwise in float64: the list's kernel
     * widens in registers (src/kernels/f32-sum/: the bits of converting the
     * chunk and mxp_pairwise_f64; at the scalar level the twin, which
     * does that) */
    mxp_f32_sum_f64_ukernel *const fused = in_kind == MXP_F64 && !a->f32 && dtype == MXP_F32 && stride == 4 &&
                                                   !((uintptr_t)row & 3) && a->alg == MXP_SUM_PAIRWISE &&
                                                   (a->op == MXP_REDUCE_SUM || a->op == MXP_REDUCE_MEAN)
                                               ? mxp_f32_sum_f64_kernel(mxp_isa_current())
                                               : NULL;
    if (fused) {
        for (int64_t k = 0; k < len; k += CHUNK) {
            const size_t m = (size_t)(len - k < CHUNK ? len - k : CHUNK);
            push_chunk(a, fused((const float *)(const void *)row + k, m), (int64_t)m);
            a->count += (int64_t)m;
        }
        return;
    }
    _Alignas(64) float narrow[CHUNK];
    for (int64_t k = 0; k < len; k += CHUNK) {
        size_t m = (size_t)(len - k < CHUNK ? len - k : CHUNK);
        if (via_f32) {
            mxp_convert_strided(narrow, MXP_F32, 4, row + k * stride, dtype, stride, m, NULL);
            for (size_t i = 0; i < m; i++)
                buf[i] = narrow[i];
        } else {
            mxp_convert_strided(buf, f32 ? MXP_F32 : in_kind, f32 ? 4 : 8, row + k * stride, dtype, stride, m, NULL);
        }
        feed(a, buf, m, first + k);
    }
}

/* Walks the reduced block at base (axes nkeep..ndim-1) in C order. */
static void walk_block(const job *j, const char *base, acc *a)
{
    const mxp_array *v = j->v;
    const int nd = v->ndim;
    int64_t len = nd > j->nkeep ? v->shape[nd - 1] : 1, rows = 1;
    for (int ax = j->nkeep; ax < nd - 1; ax++)
        rows *= v->shape[ax];
    if (nd == j->nkeep)
        rows = 1;
    const int64_t stride = nd > j->nkeep ? v->strides[nd - 1] : 0;
    int64_t idx[MXP_MAXDIMS] = { 0 };
    const char *row = base;
    for (int64_t r = 0; r < rows && len > 0; r++) {
        walk_row(a, row, v->dtype, (ptrdiff_t)stride, len, j->in_kind, r * len);
        for (int ax = nd - 2; ax >= j->nkeep; ax--) {
            row += v->strides[ax];
            if (++idx[ax] < v->shape[ax])
                break;
            row -= v->strides[ax] * v->shape[ax];
            idx[ax] = 0;
        }
    }
}

static mxp_dtype default_out(mxp_reduce_op op, mxp_dtype in)
{
    if (op == MXP_REDUCE_ARGMAX || op == MXP_REDUCE_ARGMIN)
        return MXP_S64;
    if (op == MXP_REDUCE_MAX || op == MXP_REDUCE_MIN || mxp_is_float_dtype(in))
        return in;
    if (op == MXP_REDUCE_SUM || op == MXP_REDUCE_PROD)
        return mxp_dtype_get_traits(in)->kind == MXP_KIND_UINT ? MXP_U64 : MXP_S64;
    return MXP_F64;
}

static mxp_dtype default_acc(mxp_reduce_op op, mxp_dtype in)
{
    if (!mxp_is_float_dtype(in) && (op == MXP_REDUCE_SUM || op == MXP_REDUCE_PROD || op == MXP_REDUCE_MAX ||
                          op == MXP_REDUCE_MIN || op == MXP_REDUCE_ARGMAX || op == MXP_REDUCE_ARGMIN))
        return mxp_dtype_get_traits(in)->kind == MXP_KIND_UINT ? MXP_U64 : MXP_S64;
    if (op == MXP_REDUCE_NORM2 || op == MXP_REDUCE_VAR || op == MXP_REDUCE_STD || !mxp_is_float_dtype(in))
        return MXP_F64;
    return mxp_dtype_get_traits(in)->bits <= 16 ? MXP_F32 : MXP_F64;
}

/* NumPy's max(n - ddof, 0): more ddof than elements divides by zero. */
static double dof(int64_t count, int64_t ddof)
{
    return count > ddof ? (double)count - (double)ddof : 0.0; /* in double: ddof = INT64_MIN must not wrap */
}

/* The value an accumulator gives, in double (or raw integer bits). */
static void finish(acc *a, mxp_reduce_op op, int64_t ddof, double *d, uint64_t *bits, bool *integer)
{
    *integer = false;
    switch (op) {
    case MXP_REDUCE_SUM:
    case MXP_REDUCE_PROD:
        if (a->kind != MXP_F64) {
            *bits = a->itotal;
            *integer = true;
        } else {
            *d = op == MXP_REDUCE_SUM ? float_sum(a) : a->total;
        }
        break;
    case MXP_REDUCE_MEAN:
        *d = rnd(a, (a->kind == MXP_F64 ? float_sum(a) : (double)(int64_t)a->itotal) / (double)a->count);
        break;
    case MXP_REDUCE_NORM2: *d = rnd(a, sqrt(float_sum(a))); break;
    case MXP_REDUCE_VAR: *d = rnd(a, float_sum(a) / dof(a->count, ddof)); break;
    case MXP_REDUCE_STD: *d = rnd(a, sqrt(rnd(a, float_sum(a) / dof(a->count, ddof)))); break;
    case MXP_REDUCE_ARGMAX:
    case MXP_REDUCE_ARGMIN:
        *bits = (uint64_t)a->best_at;
        *integer = true;
        break;
    default:
        if (a->kind == MXP_F64 || a->nan) {
            *d = a->best;
        } else {
            *bits = a->ibest;
            *integer = true;
        }
        break;
    }
}

static mxp_status check(mxp_array **out, mxp_reduce_op op, const mxp_array *a, const mxp_reduce_opts *o)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_reduce: out is NULL");
    *out = NULL;
    mxp_status st = mxp_require_array(a, "mxp_reduce: array");
    if (st != MXP_OK)
        return st;
    if ((unsigned)op >= MXP_REDUCE_OP_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "reduce op %d is not one of mxp_reduce_op's", (int)op);
    if ((unsigned)o->algorithm > MXP_SUM_NAIVE)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "summation algorithm %d is not one of mxp_sum_algorithm's",
                         (int)o->algorithm);
    if (o->out_dtype && !mxp_dtype_is_valid(o->out_dtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "out_dtype %d is not a valid mxp_dtype", (int)o->out_dtype);
    if (o->acc_dtype && o->acc_dtype != MXP_F32 && o->acc_dtype != MXP_F64 && o->acc_dtype != MXP_S64 &&
        o->acc_dtype != MXP_U64 && !mxp_lowp_dtype(o->acc_dtype))
        return mxp_error(MXP_ERR_UNSUPPORTED,
                         "accumulator dtype %s: use float16, bfloat16, float32, float64, int64 or uint64",
                         mxp_dtype_name(o->acc_dtype));
    return mxp_convert(NULL, MXP_F32, NULL, MXP_F32, 0, &o->convert);
}

/* Marks the reduced axes; checks range, duplicates and argmax's one axis. */
static mxp_status pick_axes(const mxp_array *a, mxp_reduce_op op, int naxes, const int *axes, bool *reduced)
{
    for (int i = 0; i < a->ndim; i++)
        reduced[i] = !axes;
    if (axes) {
        if (naxes < 0 || naxes > a->ndim)
            return mxp_error(MXP_ERR_INDEX, "mxp_reduce: %d axes for %d dimensions", naxes, a->ndim);
        for (int i = 0; i < naxes; i++) {
            int ax = axes[i];
            mxp_status st = mxp_normalize_axis(&ax, a->ndim, "mxp_reduce");
            if (st != MXP_OK)
                return st;
            if (reduced[ax])
                return mxp_error(MXP_ERR_INDEX, "mxp_reduce: axis %d repeated", ax);
            reduced[ax] = true;
        }
        if ((op == MXP_REDUCE_ARGMAX || op == MXP_REDUCE_ARGMIN) && naxes != 1)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s takes one axis or all of them (axes NULL)",
                             mxp_reduce_op_name(op));
    }
    return MXP_OK;
}

static void acc_init(acc *x, mxp_reduce_op op, const mxp_reduce_opts *o, mxp_dtype acc_type, mxp_dtype kind)
{
    memset(x, 0, sizeof *x);
    x->op = op;
    x->alg = o->algorithm;
    x->f32 = acc_type == MXP_F32;
    x->lowp = mxp_lowp_dtype(acc_type);
    if (x->lowp)
        x->fmt = mxp_lowp_for(acc_type);
    x->kind = kind;
    if (op == MXP_REDUCE_PROD) {
        x->total = 1;
        x->itotal = 1;
    }
}

static mxp_status reduce_in_env(mxp_array **out, mxp_reduce_op op, const mxp_array *a, int naxes, const int *axes,
                      const mxp_reduce_opts *opts)
{
    const mxp_reduce_opts defaults = { .algorithm = MXP_SUM_PAIRWISE };
    const mxp_reduce_opts *o = opts ? opts : &defaults;
    mxp_status st = check(out, op, a, o);
    bool reduced[MXP_MAXDIMS];
    if (st == MXP_OK)
        st = pick_axes(a, op, naxes, axes, reduced);
    if (st != MXP_OK)
        return st;
    const mxp_dtype out_type = o->out_dtype ? o->out_dtype : default_out(op, a->dtype);
    const mxp_dtype acc_type = o->acc_dtype ? o->acc_dtype : default_acc(op, a->dtype);
    mxp_dtype kind = acc_type == MXP_F32 || mxp_lowp_dtype(acc_type) ? MXP_F64 : acc_type;
    if (op >= MXP_REDUCE_MEAN && op != MXP_REDUCE_PROD && op != MXP_REDUCE_MAX && op != MXP_REDUCE_MIN &&
        op != MXP_REDUCE_ARGMAX && op != MXP_REDUCE_ARGMIN)
        kind = MXP_F64; /* mean, norm2, var, std work in floats */
    int perm[MXP_MAXDIMS], nkeep = 0, keepdims_n = 0;
    int64_t kshape[MXP_MAXDIMS], kdshape[MXP_MAXDIMS], count = 1;
    for (int i = 0; i < a->ndim; i++) {
        if (!reduced[i]) {
            perm[nkeep] = i;
            kshape[nkeep++] = a->shape[i];
        } else {
            count *= a->shape[i];
        }
        kdshape[keepdims_n++] = reduced[i] ? 1 : a->shape[i];
    }
    for (int i = 0, k = nkeep; i < a->ndim; i++)
        if (reduced[i])
            perm[k++] = i;
    if (count == 0 && op != MXP_REDUCE_SUM && op != MXP_REDUCE_PROD && op != MXP_REDUCE_MEAN)
        return mxp_error(MXP_ERR_SHAPE, "%s of an empty selection has no value", mxp_reduce_op_name(op));
    mxp_array *v = NULL, *r = NULL;
    st = mxp_array_transpose(&v, a, perm);
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, out_type, nkeep, kshape);
    const int64_t nout = st == MXP_OK ? mxp_array_size(r) : 0;
    const job j = { v, nkeep, kind };
    int64_t idx[MXP_MAXDIMS] = { 0 };
    const char *base = st == MXP_OK ? v->data : NULL;
    mxp_convert_opts co = o->convert;
    const size_t osize = mxp_dtype_itemsize(out_type);
    for (int64_t k = 0; k < nout; k++) {
        acc x;
        acc_init(&x, op, o, acc_type, kind);
        if (op == MXP_REDUCE_VAR || op == MXP_REDUCE_STD) { /* first pass: the mean */
            acc m;
            acc_init(&m, MXP_REDUCE_MEAN, o, acc_type, kind);
            walk_block(&j, base, &m);
            x.mean = count ? rnd(&m, float_sum(&m) / (double)count) : 0;
        }
        walk_block(&j, base, &x);
        double d = 0;
        uint64_t bits = 0;
        bool integer;
        finish(&x, op, o->ddof, &d, &bits, &integer);
        co.index_offset = o->convert.index_offset + (uint64_t)k;
        mxp_dtype from = integer ? (kind == MXP_U64 && op != MXP_REDUCE_ARGMAX && op != MXP_REDUCE_ARGMIN ? MXP_U64 : MXP_S64)
                                 : MXP_F64;
        mxp_convert(r->data + k * (int64_t)osize, out_type, integer ? (const void *)&bits : (const void *)&d, from, 1, &co);
        for (int ax = nkeep - 1; ax >= 0; ax--) {
            base += v->strides[ax];
            if (++idx[ax] < v->shape[ax])
                break;
            base -= v->strides[ax] * v->shape[ax];
            idx[ax] = 0;
        }
    }
    mxp_array_free(v);
    if (st == MXP_OK && o->keepdims) {
        st = mxp_array_reshape(out, r, keepdims_n, kdshape);
        mxp_array_free(r);
        return st;
    }
    if (st == MXP_OK)
        *out = r;
    else
        mxp_array_free(r);
    return st;
}

/* Under the library's floating-point environment (core/fpenv.h). */
static mxp_status reduce_entry(mxp_array **out, mxp_reduce_op op, const mxp_array *a, int naxes, const int *axes,
                               const mxp_reduce_opts *opts)
{
    MXP_ABI_IN_OUT(opts, reduce_opts, "mxp_reduce", out);
    const mxp_fpenv env = mxp_fpenv_enter();
    mxp_status st = reduce_in_env(out, op, a, naxes, axes, opts);
    mxp_fpenv_leave(env);
    return st;
}

/* ---- 1-d strided sum and product (NumPy ufunc reduce loops) ------------ */

static mxp_status reduce_strided_in_env(const char *fn, double *result, mxp_reduce_op op, const void *a, mxp_dtype a_type,
                                 ptrdiff_t a_stride, size_t n, mxp_dtype acc_type)
{
    if (!result)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: result is NULL", fn);
    if (!mxp_dtype_is_valid(a_type))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: a_type %d is not a valid mxp_dtype", fn, (int)a_type);
    if (acc_type != MXP_F32 && acc_type != MXP_F64 && !mxp_lowp_dtype(acc_type))
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: accumulator dtype %s: use float16, bfloat16, float32 or float64",
                         fn, mxp_dtype_name(acc_type));
    if (n > 0 && !a)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: a is NULL with n = %zu", fn, n);
    const size_t s = a_stride < 0 ? (size_t)0 - (size_t)a_stride : (size_t)a_stride;
    if (n > INT64_MAX || (s && n > 0 && n - 1 > ((size_t)PTRDIFF_MAX - 8) / s))
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: n = %zu elements at a stride of %td bytes overflow the address space",
                         fn, n, a_stride);
    const mxp_reduce_opts o = { .algorithm = MXP_SUM_PAIRWISE };
    acc x;
    acc_init(&x, op, &o, acc_type, MXP_F64);
    walk_row(&x, a, a_type, a_stride, (int64_t)n, MXP_F64, 0);
    uint64_t bits;
    bool integer;
    finish(&x, op, 0, result, &bits, &integer);
    return MXP_OK;
}

/* Under the library's floating-point environment (core/fpenv.h). */
static mxp_status reduce_strided(const char *fn, double *result, mxp_reduce_op op, const void *a, mxp_dtype a_type,
                                 ptrdiff_t a_stride, size_t n, mxp_dtype acc_type)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    mxp_status st = reduce_strided_in_env(fn, result, op, a, a_type, a_stride, n, acc_type);
    mxp_fpenv_leave(env);
    return st;
}

mxp_status mxp_sum_strided(double *result, const void *a, mxp_dtype a_type, ptrdiff_t a_stride, size_t n,
                           mxp_dtype acc_type)
{
    return reduce_strided("mxp_sum_strided", result, MXP_REDUCE_SUM, a, a_type, a_stride, n, acc_type);
}

mxp_status mxp_prod_strided(double *result, const void *a, mxp_dtype a_type, ptrdiff_t a_stride, size_t n,
                            mxp_dtype acc_type)
{
    return reduce_strided("mxp_prod_strided", result, MXP_REDUCE_PROD, a, a_type, a_stride, n, acc_type);
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

mxp_status mxp_reduce(mxp_array **out, mxp_reduce_op op, const mxp_array *a, int naxes, const int *axes,
                      const mxp_reduce_opts *opts)
{
    MXP_PROF_RETURN_AFTER("reduce", reduce_entry(out, op, a, naxes, axes, opts),
                          mxp_prof_array_bytes(a),
                          mxp_prof_array_bytes(a) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(a));
}
