/* Elementwise operations: result types, compute types, and the blocked
 * loop that converts inputs to the compute type, applies the operation on
 * contiguous scratch and rounds once into the output.
 *
 * Compute types: float32 when every float involved (inputs and output) has
 * at most 16 bits — float32's 24 bits are >= 2p+2 for p <= 11, so + - * /
 * and sqrt are correctly rounded after the one final rounding — float64
 * otherwise and for the transcendental functions; int64 (uint64 when the
 * common type is uint64) for integer arithmetic. */
#include <math.h>
#include <string.h>

#include "array/array-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "ops/ops-internal.h"

static const char *const binary_names[MXP_BINARY_OP_COUNT] = {
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
};
static const char *const unary_names[MXP_UNARY_OP_COUNT] = {
    "negative", "abs", "sqrt", "exp", "log", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu",
};

const char *mxp_binary_op_name(mxp_binary_op op)
{
    return (unsigned)op < MXP_BINARY_OP_COUNT ? binary_names[op] : "invalid";
}

const char *mxp_unary_op_name(mxp_unary_op op)
{
    return (unsigned)op < MXP_UNARY_OP_COUNT ? unary_names[op] : "invalid";
}

static bool is_float(mxp_dtype t) { return mxp_dtype_get_traits(t)->kind == MXP_KIND_FLOAT; }
static bool is_compare(mxp_binary_op op) { return op >= MXP_OP_EQUAL; }

mxp_dtype mxp_binary_result_type(mxp_binary_op op, mxp_dtype a, mxp_dtype b)
{
    mxp_dtype p = mxp_promote_types(a, b);
    if (p == MXP_DTYPE_INVALID || (unsigned)op >= MXP_BINARY_OP_COUNT)
        return MXP_DTYPE_INVALID;
    if (is_compare(op))
        return MXP_BOOL;
    if (op == MXP_OP_DIVIDE && !is_float(p))
        return MXP_F64; /* true division, as NumPy */
    if (op == MXP_OP_POWER && p == MXP_BOOL)
        return MXP_S8; /* NumPy has no bool power loop */
    return p;
}

/* Float functions of integers: the smallest float NumPy would use. */
mxp_dtype mxp_unary_result_type(mxp_unary_op op, mxp_dtype a)
{
    if (!mxp_dtype_is_valid(a) || (unsigned)op >= MXP_UNARY_OP_COUNT)
        return MXP_DTYPE_INVALID;
    if (op == MXP_OP_NEGATIVE || op == MXP_OP_ABS || op == MXP_OP_RELU || is_float(a))
        return a;
    return mxp_promote_types(a, MXP_F16);
}

static int float_bits(mxp_dtype t) { return is_float(t) ? mxp_dtype_get_traits(t)->bits : 0; }

static mxp_dtype int_compute_type(mxp_dtype common)
{
    return common == MXP_U64 ? MXP_U64 : MXP_S64;
}

/* The type the arithmetic is done in. */
static mxp_dtype binary_compute_type(mxp_binary_op op, mxp_dtype a, mxp_dtype b, mxp_dtype out)
{
    mxp_dtype common = mxp_promote_types(a, b);
    if (is_compare(op))
        return is_float(common) ? MXP_F64 : int_compute_type(common);
    bool any_float = is_float(a) || is_float(b) || is_float(out) || op == MXP_OP_DIVIDE || op == MXP_OP_POWER;
    if (!any_float)
        return int_compute_type(common);
    int widest = float_bits(a);
    widest = float_bits(b) > widest ? float_bits(b) : widest;
    widest = float_bits(out) > widest ? float_bits(out) : widest;
    bool narrow_in = (is_float(a) || mxp_dtype_itemsize(a) == 1) && (is_float(b) || mxp_dtype_itemsize(b) == 1);
    /* float32 when its one rounding is the final one (a float32 output), or
     * when 24 bits >= 2p + 2 for every float involved (p <= 11). */
    bool f32_ok = narrow_in && (widest <= 16 || (out == MXP_F32 && float_bits(a) <= 32 && float_bits(b) <= 32));
    return f32_ok && op != MXP_OP_POWER ? MXP_F32 : MXP_F64;
}

static mxp_dtype unary_compute_type(mxp_unary_op op, mxp_dtype a, mxp_dtype out)
{
    if (!is_float(a) && !is_float(out) && (op == MXP_OP_NEGATIVE || op == MXP_OP_ABS || op == MXP_OP_RELU))
        return a == MXP_U64 ? MXP_U64 : MXP_S64;
    if (op == MXP_OP_SQRT && float_bits(a) <= 16 && float_bits(out) <= 16 && is_float(a))
        return MXP_F32;
    return MXP_F64;
}

/* ---- the blocked loop ------------------------------------------------- */

enum { BLOCK = 1024 };

typedef struct plan {
    int nin;
    const mxp_array *in[2];
    mxp_array *out;
    mxp_dtype ct; /* compute type */
    mxp_kernel_fn fn;
    int op;
    mxp_convert_opts convert;
    mxp_unary_kernel_fn custom; /* a caller's kernel instead of fn */
    void *custom_ctx;
} plan;

/* Runs the plan over every element of out, rows of the last axis in blocks. */
static void run(const plan *p)
{
    _Alignas(64) double in_buf[2][BLOCK], out_buf[BLOCK];
    mxp_array *out = p->out;
    const int64_t n = mxp_array_size(out);
    if (n == 0)
        return;
    const size_t cs = mxp_dtype_itemsize(p->ct);
    bool flat = out->flags & MXP_ARRAY_C_CONTIGUOUS;
    for (int k = 0; k < p->nin; k++)
        flat = flat && (p->in[k]->flags & MXP_ARRAY_C_CONTIGUOUS);
    const int last = out->ndim - 1;
    const int64_t len = flat || out->ndim == 0 ? n : out->shape[last];
    const int64_t os = flat || out->ndim == 0 ? (int64_t)mxp_dtype_itemsize(out->dtype) : out->strides[last];
    int64_t is[2] = { 0, 0 };
    for (int k = 0; k < p->nin; k++)
        is[k] = flat || out->ndim == 0 ? (int64_t)mxp_dtype_itemsize(p->in[k]->dtype) : p->in[k]->strides[last];
    int64_t idx[MXP_MAXDIMS] = { 0 };
    char *o = out->data;
    const char *in[2] = { p->nin > 0 ? p->in[0]->data : NULL, p->nin > 1 ? p->in[1]->data : NULL };
    mxp_convert_opts co = p->convert;
    const uint64_t offset0 = co.index_offset;
    for (int64_t row = 0; row < n / len; row++) {
        for (int64_t j = 0; j < len; j += BLOCK) {
            size_t m = (size_t)(len - j < BLOCK ? len - j : BLOCK);
            const void *args[2] = { in_buf[0], in_buf[1] };
            for (int k = 0; k < p->nin; k++) {
                if (p->in[k]->dtype == p->ct && is[k] == (int64_t)cs) /* already the compute type: no copy */
                    args[k] = in[k] + j * is[k];
                else
                    mxp_convert_strided(in_buf[k], p->ct, (ptrdiff_t)cs, in[k] + j * is[k], p->in[k]->dtype,
                                        (ptrdiff_t)is[k], m, NULL);
            }
            const bool direct = out->dtype == p->ct && os == (int64_t)cs;
            void *res = direct ? (void *)(o + j * os) : (void *)out_buf;
            if (p->custom)
                p->custom(res, args[0], m, p->custom_ctx);
            else
                p->fn(p->op, res, args[0], args[1], m);
            co.index_offset = offset0 + (uint64_t)(row * len + j);
            if (!direct)
                mxp_convert_strided(o + j * os, out->dtype, (ptrdiff_t)os, out_buf, p->ct, (ptrdiff_t)cs, m, &co);
        }
        for (int ax = last - 1; ax >= 0 && !flat; ax--) {
            o += out->strides[ax];
            for (int k = 0; k < p->nin; k++)
                in[k] += p->in[k]->strides[ax];
            if (++idx[ax] < out->shape[ax])
                break;
            o -= out->strides[ax] * out->shape[ax];
            for (int k = 0; k < p->nin; k++)
                in[k] -= p->in[k]->strides[ax] * p->in[k]->shape[ax];
            idx[ax] = 0;
        }
    }
}

/* An input that overlaps out other than element for element is copied. */
static mxp_status separate(const mxp_array *out, const mxp_array *in, mxp_array **copy)
{
    *copy = NULL;
    bool same = in->data == out->data && in->ndim == out->ndim &&
                !memcmp(in->strides, out->strides, (size_t)in->ndim * sizeof in->strides[0]) &&
                mxp_dtype_itemsize(in->dtype) >= mxp_dtype_itemsize(out->dtype);
    if (same || !mxp_arrays_may_overlap(out, in))
        return MXP_OK;
    return mxp_array_astype(copy, in, in->dtype, NULL);
}

static mxp_status check_out(mxp_array *out, mxp_dtype want, const mxp_ops_opts *opts, int ndim, const int64_t *shape)
{
    if (!(out->flags & MXP_ARRAY_WRITEABLE))
        return mxp_error(MXP_ERR_READONLY, "the output array is read-only");
    if (opts && opts->out_dtype && opts->out_dtype != out->dtype)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "out_dtype %s differs from the output array's %s",
                         mxp_dtype_name(opts->out_dtype), mxp_dtype_name(out->dtype));
    (void)want;
    if (out->ndim != ndim || memcmp(out->shape, shape, (size_t)ndim * sizeof shape[0]))
        return mxp_error(MXP_ERR_SHAPE, "the output array's shape is not the broadcast shape of the inputs");
    return MXP_OK;
}

static mxp_status check_opts(const mxp_ops_opts *opts)
{
    if (!opts)
        return MXP_OK;
    if (opts->out_dtype && !mxp_dtype_is_valid(opts->out_dtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "out_dtype %d is not a valid mxp_dtype", (int)opts->out_dtype);
    return mxp_convert(NULL, MXP_F32, NULL, MXP_F32, 0, &opts->convert);
}

/* Shared by binary and unary: broadcast, make or check out, run. */
static mxp_status execute_plan(mxp_array **made, mxp_array *given, plan *p, mxp_dtype rt, const mxp_ops_opts *opts)
{
    int nd = p->in[0]->ndim;
    int64_t shape[MXP_MAXDIMS];
    memcpy(shape, p->in[0]->shape, sizeof shape);
    mxp_status st = MXP_OK;
    if (p->nin == 2)
        st = mxp_broadcast_shapes(&nd, shape, p->in[0]->ndim, p->in[0]->shape, p->in[1]->ndim, p->in[1]->shape);
    if (st != MXP_OK)
        return st;
    mxp_array *out = given;
    if (given)
        st = check_out(given, rt, opts, nd, shape);
    else
        st = mxp_array_new_owner(&out, rt, nd, shape);
    mxp_array *views[2] = { NULL, NULL }, *copies[2] = { NULL, NULL };
    for (int k = 0; k < p->nin && st == MXP_OK; k++) {
        st = mxp_array_broadcast_to(&views[k], p->in[k], nd, shape);
        if (st == MXP_OK && given)
            st = separate(given, views[k], &copies[k]);
        if (st == MXP_OK)
            p->in[k] = copies[k] ? copies[k] : views[k];
    }
    if (st == MXP_OK) {
        p->out = out;
        run(p);
    }
    for (int k = 0; k < 2; k++) {
        mxp_array_free(views[k]);
        mxp_array_free(copies[k]);
    }
    if (st != MXP_OK && !given)
        mxp_array_free(out);
    else if (!given)
        *made = out;
    return st;
}

/* execute_plan in the library's floating-point environment (custom
 * kernels run in it too). */
static mxp_status execute(mxp_array **made, mxp_array *given, plan *p, mxp_dtype rt, const mxp_ops_opts *opts)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = execute_plan(made, given, p, rt, opts);
    mxp_fpenv_leave(env);
    return st;
}

static mxp_status binary(mxp_array **made, mxp_array *given, mxp_binary_op op, const mxp_array *a,
                         const mxp_array *b, const mxp_ops_opts *opts)
{
    mxp_status st = mxp_require_array(a, "a");
    if (st == MXP_OK)
        st = mxp_require_array(b, "b");
    if (st == MXP_OK && (unsigned)op >= MXP_BINARY_OP_COUNT)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "binary op %d is not one of mxp_binary_op's", (int)op);
    if (st == MXP_OK)
        st = check_opts(opts);
    if (st != MXP_OK)
        return st;
    mxp_dtype rt = given ? given->dtype : opts && opts->out_dtype ? opts->out_dtype : mxp_binary_result_type(op, a->dtype, b->dtype);
    plan p = { 2, { a, b }, NULL, binary_compute_type(op, a->dtype, b->dtype, rt), NULL, (int)op,
               { .rounding = MXP_ROUND_NEAREST_EVEN }, NULL, NULL };
    p.fn = mxp_binary_kernel(p.ct);
    if (opts)
        p.convert = opts->convert;
    return execute(made, given, &p, rt, opts);
}

mxp_status mxp_binary(mxp_array **out, mxp_binary_op op, const mxp_array *a, const mxp_array *b,
                      const mxp_ops_opts *opts)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_binary: out is NULL");
    *out = NULL;
    return binary(out, NULL, op, a, b, opts);
}

mxp_status mxp_binary_into(mxp_array *out, mxp_binary_op op, const mxp_array *a, const mxp_array *b,
                           const mxp_ops_opts *opts)
{
    mxp_status st = mxp_require_array(out, "out");
    return st == MXP_OK ? binary(NULL, out, op, a, b, opts) : st;
}

static mxp_status unary(mxp_array **made, mxp_array *given, mxp_unary_op op, const mxp_array *a,
                        const mxp_ops_opts *opts)
{
    mxp_status st = mxp_require_array(a, "a");
    if (st == MXP_OK && (unsigned)op >= MXP_UNARY_OP_COUNT)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "unary op %d is not one of mxp_unary_op's", (int)op);
    if (st == MXP_OK)
        st = check_opts(opts);
    if (st != MXP_OK)
        return st;
    mxp_dtype rt = given ? given->dtype : opts && opts->out_dtype ? opts->out_dtype : mxp_unary_result_type(op, a->dtype);
    plan p = { 1, { a, NULL }, NULL, unary_compute_type(op, a->dtype, rt), NULL, (int)op,
               { .rounding = MXP_ROUND_NEAREST_EVEN }, NULL, NULL };
    p.fn = mxp_unary_kernel(p.ct);
    if (opts)
        p.convert = opts->convert;
    return execute(made, given, &p, rt, opts);
}

mxp_status mxp_unary(mxp_array **out, mxp_unary_op op, const mxp_array *a, const mxp_ops_opts *opts)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_unary: out is NULL");
    *out = NULL;
    return unary(out, NULL, op, a, opts);
}

mxp_status mxp_unary_into(mxp_array *out, mxp_unary_op op, const mxp_array *a, const mxp_ops_opts *opts)
{
    mxp_status st = mxp_require_array(out, "out");
    return st == MXP_OK ? unary(NULL, out, op, a, opts) : st;
}

mxp_status mxp_ops_run_custom(mxp_array **out, const mxp_array *a, mxp_dtype ct, mxp_dtype rt,
                              mxp_unary_kernel_fn fn, void *ctx, const mxp_ops_opts *opts)
{
    plan p = { 1, { a, NULL }, NULL, ct, NULL, 0, { .rounding = MXP_ROUND_NEAREST_EVEN }, fn, ctx };
    mxp_status st = check_opts(opts);
    if (st != MXP_OK)
        return st;
    if (opts)
        p.convert = opts->convert;
    return execute(out, NULL, &p, rt, opts);
}
