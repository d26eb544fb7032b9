/* Python-style scalar operands: a op 0.5, 3 - a, with NumPy 1.24's
 * value-based result types (np.result_type(array, python_scalar)).
 *
 * A scalar with an array of n >= 1 dimensions whose kind (bool < integer <
 * float) is at least the scalar's takes the smallest type that holds its
 * value (np.min_scalar_type: a float: float16 if |v| < 65000 or not
 * finite, float32 if |v| < 3.4e38, else float64; an integer >= 0: the
 * smallest unsigned, < 0: the smallest signed), and a small unsigned value
 * (one that also fits the signed type of its size) counts as that signed
 * type next to a signed or float array.  Otherwise — a scalar of a higher
 * kind, or a 0-d array — the scalar is float64 (a float) or int64 (an
 * int).  The result type is the promotion of the array's dtype and that
 * type.  bfloat16 and float8 arrays, which NumPy lacks, keep their dtype
 * for any scalar within their range (a float or an integer with |v| <=
 * max, NaN, and inf where the format has it), and otherwise promote as
 * above.  The scalar is rounded once to the result type, as NumPy casts it
 * for the loop. */
#include <math.h>

#include "array/array-internal.h"
#include "core/abi.h"
#include "core/dtype-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "mxp/ops.h"
#include "ops/ops-internal.h"

typedef struct scalar {
    bool is_int;
    int64_t i;
    double f;
} scalar;

static int kind_order(mxp_kind k)
{
    return k == MXP_KIND_BOOL ? 0 : k == MXP_KIND_FLOAT ? 2 : 1;
}

static bool numpy_type(mxp_dtype dt)
{
    return mxp_is_numpy_dtype(dt);
}

/* np.min_scalar_type, with NumPy's small-unsigned rule applied against a
 * signed or float array (signed_context). */
static mxp_dtype min_scalar_type(const scalar *s, bool signed_context)
{
    if (!s->is_int) {
        const double v = s->f;
        if ((v > -65000 && v < 65000) || !isfinite(v))
            return MXP_F16;
        return v > -3.4e38 && v < 3.4e38 ? MXP_F32 : MXP_F64;
    }
    const int64_t v = s->i;
    if (v >= 0) {
        if (v <= 255)
            return signed_context && v <= 127 ? MXP_S8 : MXP_U8;
        if (v <= 65535)
            return signed_context && v <= 32767 ? MXP_S16 : MXP_U16;
        if (v <= 4294967295LL)
            return signed_context && v <= 2147483647LL ? MXP_S32 : MXP_U32;
        return signed_context ? MXP_S64 : MXP_U64;
    }
    return v >= -128 ? MXP_S8 : v >= -32768 ? MXP_S16 : v >= -2147483648LL ? MXP_S32 : MXP_S64;
}

/* Is the scalar within the range of a bfloat16/float8 dtype? */
static bool fits(const scalar *s, const mxp_dtype_traits *t)
{
    if (s->is_int)
        return (double)(s->i < 0 ? -(s->i + 1) : s->i) < t->max; /* |v| <= max, without overflow */
    if (isnan(s->f))
        return t->has_nan;
    if (isinf(s->f))
        return t->has_inf;
    return fabs(s->f) <= t->max;
}

static mxp_dtype result_type(mxp_dtype a, int ndim, const scalar *s)
{
    if (!mxp_dtype_is_valid(a))
        return MXP_DTYPE_INVALID;
    const mxp_dtype_traits *t = mxp_dtype_get_traits(a);
    const int sk = s->is_int ? 1 : 2, ak = kind_order(t->kind);
    if (ndim == 0 || sk > ak) /* NumPy: the scalar's default type */
        return mxp_promote_types(a, s->is_int ? MXP_S64 : MXP_F64);
    if (!numpy_type(a) && fits(s, t))
        return a;
    const bool signed_context = t->kind == MXP_KIND_INT || t->kind == MXP_KIND_FLOAT;
    return mxp_promote_types(a, min_scalar_type(s, signed_context));
}

mxp_dtype mxp_scalar_result_type(mxp_dtype a, int ndim, double value)
{
    const scalar s = { false, 0, value };
    return result_type(a, ndim, &s);
}

mxp_dtype mxp_scalar_int_result_type(mxp_dtype a, int ndim, int64_t value)
{
    const scalar s = { true, value, 0 };
    return result_type(a, ndim, &s);
}

/* A 0-d array of dtype dt holding s, rounded once (nearest even). */
static mxp_status make_scalar(mxp_array **out, const scalar *s, mxp_dtype dt)
{
    mxp_status st = mxp_array_new_owner(out, dt, 0, NULL);
    if (st == MXP_OK)
        st = s->is_int ? mxp_convert((*out)->data, dt, &s->i, MXP_S64, 1, NULL)
                       : mxp_convert((*out)->data, dt, &s->f, MXP_F64, 1, NULL);
    if (st != MXP_OK) {
        mxp_array_free(*out);
        *out = NULL;
    }
    return st;
}

static mxp_status binary_scalar(const char *fn, mxp_array **out, mxp_binary_op op, const mxp_array *a,
                                const scalar *s, bool scalar_first, const mxp_ops_opts *opts)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    mxp_status st = mxp_require_array(a, fn);
    if (st != MXP_OK)
        return st;
    if ((unsigned)op >= MXP_BINARY_OP_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: op %d is not one of mxp_binary_op's", fn, (int)op);
    mxp_dtype dt = result_type(a->dtype, a->ndim, s);
    if (op == MXP_OP_LDEXP && !scalar_first && s->is_int)
        dt = MXP_S64; /* the exponent stays an integer; the result is a's float type */
    mxp_array *b = NULL;
    st = make_scalar(&b, s, dt);
    if (st == MXP_OK)
        st = scalar_first ? mxp_binary(out, op, b, a, opts) : mxp_binary(out, op, a, b, opts);
    mxp_array_free(b);
    return st;
}

mxp_status mxp_binary_scalar(mxp_array **out, mxp_binary_op op, const mxp_array *a, double value,
                             const mxp_ops_opts *opts)
{
    MXP_ABI_IN_OUT(opts, ops_opts, "mxp_binary_scalar", out);
    const scalar s = { false, 0, value };
    return binary_scalar("mxp_binary_scalar", out, op, a, &s, false, opts);
}

mxp_status mxp_binary_scalar_int(mxp_array **out, mxp_binary_op op, const mxp_array *a, int64_t value,
                                 const mxp_ops_opts *opts)
{
    MXP_ABI_IN_OUT(opts, ops_opts, "mxp_binary_scalar_int", out);
    const scalar s = { true, value, 0 };
    return binary_scalar("mxp_binary_scalar_int", out, op, a, &s, false, opts);
}

mxp_status mxp_scalar_binary(mxp_array **out, mxp_binary_op op, double value, const mxp_array *a,
                             const mxp_ops_opts *opts)
{
    MXP_ABI_IN_OUT(opts, ops_opts, "mxp_scalar_binary", out);
    const scalar s = { false, 0, value };
    return binary_scalar("mxp_scalar_binary", out, op, a, &s, true, opts);
}

mxp_status mxp_scalar_int_binary(mxp_array **out, mxp_binary_op op, int64_t value, const mxp_array *a,
                                 const mxp_ops_opts *opts)
{
    MXP_ABI_IN_OUT(opts, ops_opts, "mxp_scalar_int_binary", out);
    const scalar s = { true, value, 0 };
    return binary_scalar("mxp_scalar_int_binary", out, op, a, &s, true, opts);
}

/* ---- two Python floats: mxp_binary_f64 ---------------------------------- */

mxp_status mxp_binary_f64(double *out, mxp_binary_op op, double a, double b)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_binary_f64: out is NULL");
    if ((unsigned)op >= MXP_BINARY_OP_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_binary_f64: op %d is not one of mxp_binary_op's", (int)op);
    if (op == MXP_OP_REMAINDER && b == 0) { /* fmod's NaN would carry the machine's sign */
        *out = NAN;
        return MXP_OK;
    }
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_ew_ctx c = { .op = (int)op }; /* float64, no output dtype */
    *out = mxp_ew_binary1(&c, a, b);
    mxp_fpenv_leave(env);
    return MXP_OK;
}
