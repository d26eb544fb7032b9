/* Hostile arguments (test_api_hostile): ops.h and gemm.h. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/api_hostile.h"

static mxp_array *out;
static double d;
static int ndim;

#define BAD_BOP ((mxp_binary_op)9999)
#define BAD_UOP ((mxp_unary_op)9999)

static void twice(void *o, const void *in, size_t n, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++)
        ((float *)o)[i] = 2 * ((const float *)in)[i];
}

/* Scalar operand functions share their hostile cases. */
#define SCALAR_CASES(f, v)                                                                            \
    ERR("out NULL", f, NULL, MXP_OP_ADD, v, H.f32_4, NULL);                                           \
    ERR("op 9999", f, &out, BAD_BOP, v, H.f32_4, NULL);                                               \
    ERR("op -1", f, &out, (mxp_binary_op)-1, v, H.f32_4, NULL);                                       \
    ERR("a NULL", f, &out, MXP_OP_ADD, v, NULL, NULL);                                                \
    ERR("out_dtype 9999", f, &out, MXP_OP_ADD, v, H.f32_4, &(mxp_ops_opts){ .out_dtype = BAD_DT });   \
    ERR("rounding 9999", f, &out, MXP_OP_ADD, v, H.f32_4,                                             \
        &(mxp_ops_opts){ .convert.rounding = (mxp_rounding)9999 })
/* The array-first forms take (out, op, a, value, opts): argument order swapped by a wrapper-free macro. */
#define ARRAY_SCALAR_CASES(f, v)                                                                      \
    ERR("out NULL", f, NULL, MXP_OP_ADD, H.f32_4, v, NULL);                                           \
    ERR("op 9999", f, &out, BAD_BOP, H.f32_4, v, NULL);                                               \
    ERR("op -1", f, &out, (mxp_binary_op)-1, H.f32_4, v, NULL);                                       \
    ERR("a NULL", f, &out, MXP_OP_ADD, NULL, v, NULL);                                                \
    ERR("out_dtype 9999", f, &out, MXP_OP_ADD, H.f32_4, v, &(mxp_ops_opts){ .out_dtype = BAD_DT });   \
    ERR("rounding 9999", f, &out, MXP_OP_ADD, H.f32_4, v,                                             \
        &(mxp_ops_opts){ .convert.rounding = (mxp_rounding)9999 })

/* The strided sort family: (dst, a, type, stride, n). */
#define SORT_CASES(f, dst)                                                                            \
    ERR("out NULL, n 4", f, NULL, H.buf_f32, MXP_F32, 4, 4);                                          \
    ERR("a NULL, n 4", f, dst, NULL, MXP_F32, 4, 4);                                                  \
    ERR("type 9999", f, dst, H.buf_f32, BAD_DT, 4, 4);                                                \
    ERR("type -1", f, dst, H.buf_f32, NEG_DT, 4, 4);                                                  \
    ERR("n SIZE_MAX", f, dst, H.buf_f32, MXP_F32, 4, SIZE_MAX);                                       \
    ERR("stride PTRDIFF_MIN, n 3", f, dst, H.buf_f32, MXP_F32, PTRDIFF_MIN, 3);                       \
    ERR("stride PTRDIFF_MAX / 2, n 3 (the offsets overflow)", f, dst, H.buf_f32, MXP_F32,              \
        PTRDIFF_MAX / 2, 3)

void hostile_ops(hctx *c)
{
    const mxp_array *a = H.f32_23;
    float *f = H.buf_f32;
    const mxp_ops_opts bad_out = { .out_dtype = BAD_DT };
    const mxp_ops_opts qint_out = { .out_dtype = MXP_QINT4 };
    const mxp_ops_opts bad_round = { .convert.rounding = (mxp_rounding)9999 };
    const mxp_convert_opts cbad_round = { .rounding = (mxp_rounding)9999 };

    /* elementwise */
    ERR("out NULL", mxp_binary, NULL, MXP_OP_ADD, a, a, NULL);
    ERR("op 9999", mxp_binary, &out, BAD_BOP, a, a, NULL);
    ERR("op -1", mxp_binary, &out, (mxp_binary_op)-1, a, a, NULL);
    ERR("op MXP_BINARY_OP_COUNT", mxp_binary, &out, MXP_BINARY_OP_COUNT, a, a, NULL);
    ERR("a NULL", mxp_binary, &out, MXP_OP_ADD, NULL, a, NULL);
    ERR("b NULL", mxp_binary, &out, MXP_OP_ADD, a, NULL, NULL);
    ERR("(2, 3) and (4,)", mxp_binary, &out, MXP_OP_ADD, a, H.f32_4, NULL);
    ERR("out_dtype 9999", mxp_binary, &out, MXP_OP_ADD, a, a, &bad_out);
    ERR("out_dtype MXP_QINT4", mxp_binary, &out, MXP_OP_ADD, a, a, &qint_out);
    ERR("rounding 9999", mxp_binary, &out, MXP_OP_ADD, a, a, &bad_round);
    ERR("ldexp by float32 exponents", mxp_binary, &out, MXP_OP_LDEXP, a, a, NULL);
    ERR("out NULL", mxp_binary_into, NULL, MXP_OP_ADD, H.f32_4, H.f32_4, NULL);
    ERR("op 9999", mxp_binary_into, H.f32_4, BAD_BOP, H.f32_4, H.f32_4, NULL);
    ERR("a NULL", mxp_binary_into, H.f32_4, MXP_OP_ADD, NULL, H.f32_4, NULL);
    ERR("b NULL", mxp_binary_into, H.f32_4, MXP_OP_ADD, H.f32_4, NULL, NULL);
    ERR("out read-only", mxp_binary_into, H.readonly_4, MXP_OP_ADD, H.f32_4, H.f32_4, NULL);
    ERR("out (4,) for (2, 3)", mxp_binary_into, H.f32_4, MXP_OP_ADD, a, a, NULL);
    ERR("out_dtype float64 for a float32 out", mxp_binary_into, H.f32_4, MXP_OP_ADD, H.f32_4, H.f32_4,
        &(mxp_ops_opts){ .out_dtype = MXP_F64 });
    ERR("rounding 9999", mxp_binary_into, H.f32_4, MXP_OP_ADD, H.f64_4, H.f64_4, &bad_round);
    ERR("out NULL", mxp_unary, NULL, MXP_OP_EXP, a, NULL);
    ERR("op 9999", mxp_unary, &out, BAD_UOP, a, NULL);
    ERR("op -1", mxp_unary, &out, (mxp_unary_op)-1, a, NULL);
    ERR("op MXP_UNARY_OP_COUNT", mxp_unary, &out, MXP_UNARY_OP_COUNT, a, NULL);
    ERR("a NULL", mxp_unary, &out, MXP_OP_EXP, NULL, NULL);
    ERR("out_dtype 9999", mxp_unary, &out, MXP_OP_EXP, a, &bad_out);
    ERR("rounding 9999", mxp_unary, &out, MXP_OP_EXP, a, &bad_round);
    ERR("out NULL", mxp_unary_into, NULL, MXP_OP_EXP, H.f32_4, NULL);
    ERR("op 9999", mxp_unary_into, H.f32_4, BAD_UOP, H.f32_4, NULL);
    ERR("a NULL", mxp_unary_into, H.f32_4, MXP_OP_EXP, NULL, NULL);
    ERR("out read-only", mxp_unary_into, H.readonly_4, MXP_OP_EXP, H.f32_4, NULL);
    ERR("out (4,) for (2, 3)", mxp_unary_into, H.f32_4, MXP_OP_EXP, a, NULL);
    ARRAY_SCALAR_CASES(mxp_binary_scalar, 0.5);
    ARRAY_SCALAR_CASES(mxp_binary_scalar_int, INT64_MIN);
    SCALAR_CASES(mxp_scalar_binary, 0.5);
    SCALAR_CASES(mxp_scalar_int_binary, INT64_MIN);
    ERR("out NULL", mxp_binary_f64, NULL, MXP_OP_ADD, 1.0, 2.0);
    ERR("op 9999", mxp_binary_f64, &d, BAD_BOP, 1.0, 2.0);
    ERR("op -1", mxp_binary_f64, &d, (mxp_binary_op)-1, 1.0, 2.0);
    ERR("op MXP_BINARY_OP_COUNT", mxp_binary_f64, &d, MXP_BINARY_OP_COUNT, 1.0, 2.0);
    ANY("remainder of NaN by zero", mxp_binary_f64, &d, MXP_OP_REMAINDER, NAN, 0.0);
    ANY("ldexp by 1e300", mxp_binary_f64, &d, MXP_OP_LDEXP, 1.0, 1e300);
    VAL("a 9999", MXP_DTYPE_INVALID, mxp_scalar_result_type, BAD_DT, 1, 1.0);
    VAL("a -1", MXP_DTYPE_INVALID, mxp_scalar_result_type, NEG_DT, 1, 1.0);
    VAL("a MXP_QINT4", MXP_DTYPE_INVALID, mxp_scalar_result_type, MXP_QINT4, 1, 1.0);
    VAL("a 9999", MXP_DTYPE_INVALID, mxp_scalar_int_result_type, BAD_DT, 1, INT64_MIN);
    VAL("a 0", MXP_DTYPE_INVALID, mxp_scalar_int_result_type, MXP_DTYPE_INVALID, 1, 1);
    STR("op 9999", "invalid", mxp_binary_op_name, BAD_BOP);
    STR("op -1", "invalid", mxp_binary_op_name, (mxp_binary_op)-1);
    STR("op 9999", "invalid", mxp_unary_op_name, BAD_UOP);
    STR("op -1", "invalid", mxp_unary_op_name, (mxp_unary_op)-1);
    NOARGS_NONNUL(mxp_vector_math);
    VAL("op 9999", MXP_DTYPE_INVALID, mxp_binary_result_type, BAD_BOP, MXP_F32, MXP_F32);
    VAL("a 9999", MXP_DTYPE_INVALID, mxp_binary_result_type, MXP_OP_ADD, BAD_DT, MXP_F32);
    VAL("b -1", MXP_DTYPE_INVALID, mxp_binary_result_type, MXP_OP_ADD, MXP_F32, NEG_DT);
    VAL("op 9999", MXP_DTYPE_INVALID, mxp_unary_result_type, BAD_UOP, MXP_F32);
    VAL("a 9999", MXP_DTYPE_INVALID, mxp_unary_result_type, MXP_OP_EXP, BAD_DT);
    VAL("a MXP_QINT4", MXP_DTYPE_INVALID, mxp_unary_result_type, MXP_OP_EXP, MXP_QINT4);

    /* 1-d strided loops */
    ERR("op 9999", mxp_binary_strided, BAD_BOP, 4, f, MXP_F32, 4, f + 8, MXP_F32, 4, f + 16, MXP_F32, 4, NULL);
    ERR("out NULL, n 4", mxp_binary_strided, MXP_OP_ADD, 4, NULL, MXP_F32, 4, f + 8, MXP_F32, 4, f + 16, MXP_F32, 4,
        NULL);
    ERR("a NULL, n 4", mxp_binary_strided, MXP_OP_ADD, 4, f, MXP_F32, 4, NULL, MXP_F32, 4, f + 16, MXP_F32, 4, NULL);
    ERR("b NULL, n 4", mxp_binary_strided, MXP_OP_ADD, 4, f, MXP_F32, 4, f + 8, MXP_F32, 4, NULL, MXP_F32, 4, NULL);
    ERR("out_type 9999", mxp_binary_strided, MXP_OP_ADD, 4, f, BAD_DT, 4, f + 8, MXP_F32, 4, f + 16, MXP_F32, 4,
        NULL);
    ERR("a_type -1", mxp_binary_strided, MXP_OP_ADD, 4, f, MXP_F32, 4, f + 8, NEG_DT, 4, f + 16, MXP_F32, 4, NULL);
    ERR("b_type 0", mxp_binary_strided, MXP_OP_ADD, 4, f, MXP_F32, 4, f + 8, MXP_F32, 4, f + 16,
        MXP_DTYPE_INVALID, 4, NULL);
    ERR("n SIZE_MAX", mxp_binary_strided, MXP_OP_ADD, SIZE_MAX, f, MXP_F32, 4, f + 8, MXP_F32, 4, f + 16, MXP_F32, 4,
        NULL);
    ERR("out_stride PTRDIFF_MIN, n 3", mxp_binary_strided, MXP_OP_ADD, 3, f, MXP_F32, PTRDIFF_MIN, f + 8, MXP_F32, 4,
        f + 16, MXP_F32, 4, NULL);
    ERR("a_stride PTRDIFF_MAX, n 3", mxp_binary_strided, MXP_OP_ADD, 3, f, MXP_F32, 4, f + 8, MXP_F32, PTRDIFF_MAX,
        f + 16, MXP_F32, 4, NULL);
    ERR("out overlapping a by 2 bytes", mxp_binary_strided, MXP_OP_ADD, 4, (char *)(f + 8) + 2, MXP_F32, 4, f + 8,
        MXP_F32, 4, f + 16, MXP_F32, 4, NULL);
    ERR("rounding 9999", mxp_binary_strided, MXP_OP_ADD, 4, f, MXP_BF16, 2, f + 8, MXP_F32, 4, f + 16, MXP_F32, 4,
        &cbad_round);
    ERR("op 9999", mxp_unary_strided, BAD_UOP, 4, f, MXP_F32, 4, f + 8, MXP_F32, 4, NULL);
    ERR("out NULL, n 4", mxp_unary_strided, MXP_OP_EXP, 4, NULL, MXP_F32, 4, f + 8, MXP_F32, 4, NULL);
    ERR("a NULL, n 4", mxp_unary_strided, MXP_OP_EXP, 4, f, MXP_F32, 4, NULL, MXP_F32, 4, NULL);
    ERR("out_type 9999", mxp_unary_strided, MXP_OP_EXP, 4, f, BAD_DT, 4, f + 8, MXP_F32, 4, NULL);
    ERR("a_type -1", mxp_unary_strided, MXP_OP_EXP, 4, f, MXP_F32, 4, f + 8, NEG_DT, 4, NULL);
    ERR("n SIZE_MAX", mxp_unary_strided, MXP_OP_EXP, SIZE_MAX, f, MXP_F32, 4, f + 8, MXP_F32, 4, NULL);
    ERR("a_stride PTRDIFF_MIN, n 3", mxp_unary_strided, MXP_OP_EXP, 3, f, MXP_F32, 4, f + 8, MXP_F32, PTRDIFF_MIN,
        NULL);
    ERR("rounding 9999", mxp_unary_strided, MXP_OP_EXP, 4, f, MXP_BF16, 2, f + 8, MXP_F32, 4, &cbad_round);
    ERR("result NULL", mxp_sum_strided, NULL, f, MXP_F32, 4, 4, MXP_F64);
    ERR("a NULL, n 4", mxp_sum_strided, &d, NULL, MXP_F32, 4, 4, MXP_F64);
    ERR("a_type 9999", mxp_sum_strided, &d, f, BAD_DT, 4, 4, MXP_F64);
    ERR("acc_type 9999", mxp_sum_strided, &d, f, MXP_F32, 4, 4, BAD_DT);
    ERR("acc_type int32", mxp_sum_strided, &d, f, MXP_F32, 4, 4, MXP_S32);
    ERR("n SIZE_MAX", mxp_sum_strided, &d, f, MXP_F32, 4, SIZE_MAX, MXP_F64);
    ERR("stride PTRDIFF_MIN, n 3", mxp_sum_strided, &d, f, MXP_F32, PTRDIFF_MIN, 3, MXP_F64);
    ERR("result NULL", mxp_prod_strided, NULL, f, MXP_F32, 4, 4, MXP_F64);
    ERR("a NULL, n 4", mxp_prod_strided, &d, NULL, MXP_F32, 4, 4, MXP_F64);
    ERR("a_type -1", mxp_prod_strided, &d, f, NEG_DT, 4, 4, MXP_F64);
    ERR("acc_type int8", mxp_prod_strided, &d, f, MXP_F32, 4, 4, MXP_S8);
    ERR("n SIZE_MAX", mxp_prod_strided, &d, f, MXP_F32, 4, SIZE_MAX, MXP_F64);
    ERR("op 9999", mxp_accumulate_strided, BAD_BOP, 4, f, MXP_F32, 4, f + 8, MXP_F32, 4, NULL);
    ERR("op subtract (no accumulation)", mxp_accumulate_strided, MXP_OP_SUBTRACT, 4, f, MXP_F32, 4, f + 8, MXP_F32, 4,
        NULL);
    ERR("out NULL, n 4", mxp_accumulate_strided, MXP_OP_ADD, 4, NULL, MXP_F32, 4, f + 8, MXP_F32, 4, NULL);
    ERR("a NULL, n 4", mxp_accumulate_strided, MXP_OP_ADD, 4, f, MXP_F32, 4, NULL, MXP_F32, 4, NULL);
    ERR("out_type int32 (not a float)", mxp_accumulate_strided, MXP_OP_ADD, 4, f, MXP_S32, 4, f + 8, MXP_F32, 4, NULL);
    ERR("out_type 9999", mxp_accumulate_strided, MXP_OP_ADD, 4, f, BAD_DT, 4, f + 8, MXP_F32, 4, NULL);
    ERR("a_type -1", mxp_accumulate_strided, MXP_OP_ADD, 4, f, MXP_F32, 4, f + 8, NEG_DT, 4, NULL);
    ERR("n SIZE_MAX", mxp_accumulate_strided, MXP_OP_ADD, SIZE_MAX, f, MXP_F32, 4, f + 8, MXP_F32, 4, NULL);
    ERR("a_stride PTRDIFF_MIN, n 3", mxp_accumulate_strided, MXP_OP_ADD, 3, f, MXP_F32, 4, f + 8, MXP_F32,
        PTRDIFF_MIN, NULL);
    ERR("a NULL, n 4", mxp_sort_strided, NULL, MXP_F32, 4, 4);
    ERR("type 9999", mxp_sort_strided, f, BAD_DT, 4, 4);
    ERR("type -1", mxp_sort_strided, f, NEG_DT, 4, 4);
    ERR("n SIZE_MAX", mxp_sort_strided, f, MXP_F32, 4, SIZE_MAX);
    ERR("stride PTRDIFF_MIN, n 3", mxp_sort_strided, f, MXP_F32, PTRDIFF_MIN, 3);
    ANY("stride 0, n 4 (every element the same one: sorted)", mxp_sort_strided, f, MXP_F32, 0, 4);
    SORT_CASES(mxp_argsort_strided, H.buf_i64);
    SORT_CASES(mxp_argmax_strided, H.buf_i64);
    ERR("n 0", mxp_argmax_strided, H.buf_i64, f, MXP_F32, 4, 0);
    SORT_CASES(mxp_argmin_strided, H.buf_i64);
    ERR("n 0", mxp_argmin_strided, H.buf_i64, f, MXP_F32, 4, 0);
    SORT_CASES(mxp_sort_keys, H.buf_u64);

    /* custom operators */
    ERR("name NULL", mxp_register_unary_op, NULL, MXP_F32, twice, NULL);
    ERR("name \"\"", mxp_register_unary_op, "", MXP_F32, twice, NULL);
    ERR("fn NULL", mxp_register_unary_op, "hostile_twice", MXP_F32, NULL, NULL);
    ERR("dtype 9999", mxp_register_unary_op, "hostile_twice", BAD_DT, twice, NULL);
    ERR("dtype -1", mxp_register_unary_op, "hostile_twice", NEG_DT, twice, NULL);
    if (hcase(c, "mxp_register_unary_op", "name of 4999 characters")) {
        static char name[5000];
        memset(name, 'n', sizeof name - 1);
        hstatus(c, mxp_register_unary_op(name, MXP_F32, twice, NULL));
    }
    if (hcase(c, "mxp_register_unary_op", "a 257th registration (256 at most)")) {
        mxp_status st = MXP_OK;
        char name[32];
        for (int i = 0; i < 300 && st == MXP_OK; i++) {
            snprintf(name, sizeof name, "hostile_%d", i);
            st = mxp_register_unary_op(name, MXP_F32, twice, NULL);
        }
        hstatus(c, st);
    }
    ERR("name NULL", mxp_unregister_op, NULL);
    ERR("name \"\"", mxp_unregister_op, "");
    ERR("a name never registered", mxp_unregister_op, "hostile_never_registered");
    ERR("out NULL", mxp_call_unary_op, NULL, "hostile_twice", a, NULL);
    ERR("name NULL", mxp_call_unary_op, &out, NULL, a, NULL);
    ERR("a name never registered", mxp_call_unary_op, &out, "hostile_never_registered", a, NULL);
    if (hcase(c, "mxp_call_unary_op", "a NULL"))
        hstatus(c, mxp_register_unary_op("hostile_twice", MXP_F32, twice, NULL) != MXP_OK
                       ? MXP_OK
                       : mxp_call_unary_op(&out, "hostile_twice", NULL, NULL));
    if (hcase(c, "mxp_call_unary_op", "out_dtype 9999"))
        hstatus(c, mxp_register_unary_op("hostile_twice", MXP_F32, twice, NULL) != MXP_OK
                       ? MXP_OK
                       : mxp_call_unary_op(&out, "hostile_twice", a, &bad_out));

    /* reductions */
    ERR("out NULL", mxp_reduce, NULL, MXP_REDUCE_SUM, a, 0, NULL, NULL);
    ERR("op 9999", mxp_reduce, &out, (mxp_reduce_op)9999, a, 0, NULL, NULL);
    ERR("op -1", mxp_reduce, &out, (mxp_reduce_op)-1, a, 0, NULL, NULL);
    ERR("a NULL", mxp_reduce, &out, MXP_REDUCE_SUM, NULL, 0, NULL, NULL);
    ERR("naxes -1", mxp_reduce, &out, MXP_REDUCE_SUM, a, -1, ((const int[]){ 0 }), NULL);
    ERR("naxes 33", mxp_reduce, &out, MXP_REDUCE_SUM, a, MXP_MAXDIMS + 1, ((const int[MXP_MAXDIMS + 1]){ 0 }), NULL);
    ANY("naxes 1, axes NULL (documented: every axis)", mxp_reduce, &out, MXP_REDUCE_SUM, a, 1, NULL, NULL);
    ERR("axes (5,)", mxp_reduce, &out, MXP_REDUCE_SUM, a, 1, ((const int[]){ 5 }), NULL);
    ERR("axes (-3,)", mxp_reduce, &out, MXP_REDUCE_SUM, a, 1, ((const int[]){ -3 }), NULL);
    ERR("axes (INT_MIN,)", mxp_reduce, &out, MXP_REDUCE_SUM, a, 1, ((const int[]){ INT_MIN }), NULL);
    ERR("axes (0, 0) (repeated)", mxp_reduce, &out, MXP_REDUCE_SUM, a, 2, ((const int[]){ 0, 0 }), NULL);
    ERR("axes (1, -1) (repeated)", mxp_reduce, &out, MXP_REDUCE_SUM, a, 2, ((const int[]){ 1, -1 }), NULL);
    ERR("argmax over two axes", mxp_reduce, &out, MXP_REDUCE_ARGMAX, a, 2, ((const int[]){ 0, 1 }), NULL);
    ERR("acc_dtype 9999", mxp_reduce, &out, MXP_REDUCE_SUM, a, 0, NULL,
        &(mxp_reduce_opts){ .acc_dtype = BAD_DT });
    ERR("algorithm 9999", mxp_reduce, &out, MXP_REDUCE_SUM, a, 0, NULL,
        &(mxp_reduce_opts){ .algorithm = (mxp_sum_algorithm)9999 });
    ERR("out_dtype -1", mxp_reduce, &out, MXP_REDUCE_SUM, a, 0, NULL, &(mxp_reduce_opts){ .out_dtype = NEG_DT });
    ERR("rounding 9999", mxp_reduce, &out, MXP_REDUCE_SUM, a, 0, NULL,
        &(mxp_reduce_opts){ .out_dtype = MXP_BF16, .convert.rounding = (mxp_rounding)9999 });
    ERR("argmax of an empty array", mxp_reduce, &out, MXP_REDUCE_ARGMAX, H.f32_empty, 0, NULL, NULL);
    STR("op 9999", "invalid", mxp_reduce_op_name, (mxp_reduce_op)9999);
    STR("op -1", "invalid", mxp_reduce_op_name, (mxp_reduce_op)-1);

    /* matmul */
    ERR("out NULL", mxp_matmul, NULL, H.f32_23, H.f32_32, NULL);
    ERR("a NULL", mxp_matmul, &out, NULL, H.f32_32, NULL);
    ERR("b NULL", mxp_matmul, &out, H.f32_23, NULL, NULL);
    ERR("a 0-d", mxp_matmul, &out, H.f32_0d, H.f32_32, NULL);
    ERR("k 3 and 2", mxp_matmul, &out, H.f32_23, H.f32_23, NULL);
    ERR("acc_dtype 9999", mxp_matmul, &out, H.f32_23, H.f32_32, &(mxp_gemm_opts){ .acc_dtype = BAD_DT });
    ERR("bias without bias_len", mxp_matmul, &out, H.f32_23, H.f32_32,
        &(mxp_gemm_opts){ .bias = f, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL });
    ERR("bias_kind 9999", mxp_matmul, &out, H.f32_23, H.f32_32,
        &(mxp_gemm_opts){ .bias = f, .bias_dtype = MXP_F32, .bias_kind = (mxp_bias_kind)9999, .bias_len = 8 });
    ERR("activation 9999", mxp_matmul, &out, H.f32_23, H.f32_32,
        &(mxp_gemm_opts){ .activation = (mxp_activation)9999 });
    ERR("out NULL", mxp_matmul_into, NULL, H.f32_23, H.f32_32, NULL);
    ERR("a NULL", mxp_matmul_into, H.f32_4, NULL, H.f32_32, NULL);
    ERR("out read-only", mxp_matmul_into, H.readonly_4, H.f32_4, H.f32_4, NULL);
    ERR("out (4,) for (2, 2)", mxp_matmul_into, H.f32_4, H.f32_23, H.f32_32, NULL);

    /* gemm (2 x 3 by 3 x 2 into 2 x 2 in the buffers) */
    float *A = f, *B = f + 32, *C = f + 64;
    ERR("ta 9999", mxp_gemm, (mxp_trans)9999, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C, MXP_F32, 2,
        NULL);
    ERR("tb -1", mxp_gemm, MXP_NO_TRANS, (mxp_trans)-1, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C, MXP_F32, 2,
        NULL);
    ERR("a NULL", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, NULL, MXP_F32, 3, B, MXP_F32, 2, 0, C, MXP_F32, 2,
        NULL);
    ERR("b NULL", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, NULL, MXP_F32, 2, 0, C, MXP_F32, 2,
        NULL);
    ERR("c NULL", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, NULL, MXP_F32, 2,
        NULL);
    ERR("a_type 9999", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, BAD_DT, 3, B, MXP_F32, 2, 0, C, MXP_F32, 2,
        NULL);
    ERR("b_type -1", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, NEG_DT, 2, 0, C, MXP_F32, 2,
        NULL);
    ERR("c_type 0", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_DTYPE_INVALID, 2, NULL);
    ERR("c_type bool", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C, MXP_BOOL,
        2, NULL);
    ERR("lda 2 < k 3", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 2, B, MXP_F32, 2, 0, C, MXP_F32, 2,
        NULL);
    ERR("lda 1 < m 2 (A transposed)", mxp_gemm, MXP_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 1, B, MXP_F32, 2, 0,
        C, MXP_F32, 2, NULL);
    ERR("ldb 1 < n 2", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 1, 0, C, MXP_F32, 2,
        NULL);
    ERR("ldb 2 < k 3 (B transposed)", mxp_gemm, MXP_NO_TRANS, MXP_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0,
        C, MXP_F32, 2, NULL);
    ERR("ldc 1 < n 2", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C, MXP_F32, 1,
        NULL);
    ERR("ldc 0", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C, MXP_F32, 0,
        NULL);
    ERR("m SIZE_MAX (m * ldc overflows)", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, SIZE_MAX, 2, 3, 1, A, MXP_F32, 3, B,
        MXP_F32, 2, 0, C, MXP_F32, 2, NULL);
    ERR("k SIZE_MAX", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, SIZE_MAX, 1, A, MXP_F32, SIZE_MAX, B, MXP_F32, 2, 0,
        C, MXP_F32, 2, NULL);
    ERR("n 2^62, ldb and ldc 2^62 (the bytes overflow)", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, (size_t)1 << 62, 3,
        1, A, MXP_F32, 3, B, MXP_F32, (size_t)1 << 62, 0, C, MXP_F32, (size_t)1 << 62, NULL);
    ERR("lda SIZE_MAX", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, SIZE_MAX, B, MXP_F32, 2, 0, C,
        MXP_F32, 2, NULL);
    ERR("C == A (overlap)", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, A,
        MXP_F32, 2, NULL);
    ERR("acc_dtype 9999", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_F32, 2, &(mxp_gemm_opts){ .acc_dtype = BAD_DT });
    ERR("scales with float inputs (would be ignored)", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3,
        B, MXP_F32, 2, 0, C, MXP_F32, 2, &(mxp_gemm_opts){ .scales = f + 100, .n_scales = 1 });
    ERR("a_zero_point with float inputs", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32,
        2, 0, C, MXP_F32, 2, &(mxp_gemm_opts){ .a_zero_point = 3 });
    ERR("acc_dtype int32 for float inputs", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B,
        MXP_F32, 2, 0, C, MXP_F32, 2, &(mxp_gemm_opts){ .acc_dtype = MXP_S32 });
    ERR("bias_kind 9999", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_F32, 2,
        &(mxp_gemm_opts){ .bias = f + 100, .bias_dtype = MXP_F32, .bias_kind = (mxp_bias_kind)9999 });
    ERR("bias_dtype 9999", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_F32, 2, &(mxp_gemm_opts){ .bias = f + 100, .bias_dtype = BAD_DT, .bias_kind = MXP_BIAS_PER_ROW });
    ERR("bias NULL with bias_kind per row", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B,
        MXP_F32, 2, 0, C, MXP_F32, 2, &(mxp_gemm_opts){ .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_ROW });
    ERR("bias_len 1 < m 2", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_F32, 2,
        &(mxp_gemm_opts){ .bias = f + 100, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_ROW, .bias_len = 1 });
    ERR("activation 9999", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_F32, 2, &(mxp_gemm_opts){ .activation = (mxp_activation)9999 });
    ERR("clamp lo NaN", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C, MXP_F32,
        2, &(mxp_gemm_opts){ .clamp = true, .clamp_lo = NAN, .clamp_hi = 1 });
    ERR("clamp lo 1 > hi -1", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_F32, 2, &(mxp_gemm_opts){ .clamp = true, .clamp_lo = 1, .clamp_hi = -1 });
    ERR("rounding 9999", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_BF16, 2, &(mxp_gemm_opts){ .convert.rounding = (mxp_rounding)9999 });
    ERR("int8: a_zero_point 1000 for uint8", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, H.buf_u8, MXP_U8, 3,
        H.buf_u8 + 32, MXP_S8, 2, 0, C, MXP_F32, 2, &(mxp_gemm_opts){ .a_zero_point = 1000 });
    ERR("int8: n_scales 5 with scales NULL", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, H.buf_u8, MXP_U8, 3,
        H.buf_u8 + 32, MXP_S8, 2, 0, C, MXP_F32, 2, &(mxp_gemm_opts){ .n_scales = 5 });
    ERR("int8: n_scales 3 (neither 1 nor n)", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, H.buf_u8, MXP_U8, 3,
        H.buf_u8 + 32, MXP_S8, 2, 0, C, MXP_F32, 2, &(mxp_gemm_opts){ .scales = f + 200, .n_scales = 3 });
    ERR("int8: k 100000 (int32 sums could overflow)", mxp_gemm, MXP_NO_TRANS, MXP_NO_TRANS, 1, 1, 100000, 1, H.buf_u8,
        MXP_U8, 100000, H.buf_u8, MXP_S8, 1, 0, C, MXP_S32, 1, NULL);
    STR("a_type 9999", "invalid", mxp_gemm_kernel_name, BAD_DT, MXP_F32, NULL);
    STR("b_type -1", "invalid", mxp_gemm_kernel_name, MXP_F32, NEG_DT, NULL);
    STR("acc_dtype 9999", "invalid", mxp_gemm_kernel_name, MXP_F32, MXP_F32, &(mxp_gemm_opts){ .acc_dtype = BAD_DT });
    ERR("ta 9999", mxp_gemm_safe, (mxp_trans)9999, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_F16, 2, NULL, NULL, NULL);
    ERR("a NULL", mxp_gemm_safe, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, NULL, MXP_F32, 3, B, MXP_F32, 2, 0, C, MXP_F16,
        2, NULL, NULL, NULL);
    ERR("c_type 9999", mxp_gemm_safe, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        BAD_DT, 2, NULL, NULL, NULL);
    ERR("lda 2 < k 3", mxp_gemm_safe, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 2, B, MXP_F32, 2, 0, C,
        MXP_F16, 2, NULL, NULL, NULL);
    ERR("ldc 1 < n 2", mxp_gemm_safe, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_F16, 1, NULL, NULL, NULL);
    ERR("m SIZE_MAX", mxp_gemm_safe, MXP_NO_TRANS, MXP_NO_TRANS, SIZE_MAX, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_F16, 2, NULL, NULL, NULL);
    ERR("strategy 9999", mxp_gemm_safe, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, B, MXP_F32, 2, 0, C,
        MXP_F16, 2, NULL, &(mxp_gemm_safe_opts){ .strategy = (mxp_overflow_strategy)9999 }, NULL);
    ERR("PROMOTE with promote_to NULL", mxp_gemm_safe, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1e30, A, MXP_F32, 3, B,
        MXP_F32, 2, 0, C, MXP_F16, 2, NULL,
        &(mxp_gemm_safe_opts){ .strategy = MXP_OVERFLOW_STRATEGY_PROMOTE, .promote_dtype = MXP_F32, .ldp = 2 }, NULL);
    ERR("PROMOTE to int8", mxp_gemm_safe, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1e30, A, MXP_F32, 3, B, MXP_F32, 2, 0,
        C, MXP_F16, 2, NULL,
        &(mxp_gemm_safe_opts){
            .strategy = MXP_OVERFLOW_STRATEGY_PROMOTE, .promote_to = f + 128, .promote_dtype = MXP_S8, .ldp = 2 },
        NULL);
    ERR("PROMOTE with ldp 1 < n 2", mxp_gemm_safe, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1e30, A, MXP_F32, 3, B,
        MXP_F32, 2, 0, C, MXP_F16, 2, NULL,
        &(mxp_gemm_safe_opts){
            .strategy = MXP_OVERFLOW_STRATEGY_PROMOTE, .promote_to = f + 128, .promote_dtype = MXP_F32, .ldp = 1 },
        NULL);
    ERR("batch SIZE_MAX (the offsets overflow)", mxp_gemm_strided_batched, SIZE_MAX, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2,
        3, 1, A, MXP_F32, 3, 6, B, MXP_F32, 2, 6, 0, C, MXP_F32, 2, 4, NULL);
    ERR("stride_c PTRDIFF_MAX, batch 2", mxp_gemm_strided_batched, 2, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A,
        MXP_F32, 3, 0, B, MXP_F32, 2, 0, 0, C, MXP_F32, 2, PTRDIFF_MAX, NULL);
    ERR("stride_a PTRDIFF_MIN, batch 2", mxp_gemm_strided_batched, 2, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A,
        MXP_F32, 3, PTRDIFF_MIN, B, MXP_F32, 2, 0, 0, C, MXP_F32, 2, 4, NULL);
    ERR("stride_c 0, batch 2 (the C_i overlap)", mxp_gemm_strided_batched, 2, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1,
        A, MXP_F32, 3, 0, B, MXP_F32, 2, 0, 0, C, MXP_F32, 2, 0, NULL);
    ERR("a NULL", mxp_gemm_strided_batched, 2, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, NULL, MXP_F32, 3, 6, B, MXP_F32,
        2, 6, 0, C, MXP_F32, 2, 4, NULL);
    ERR("c NULL", mxp_gemm_strided_batched, 2, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, 6, B, MXP_F32, 2,
        6, 0, NULL, MXP_F32, 2, 4, NULL);
    ERR("lda 2 < k 3", mxp_gemm_strided_batched, 2, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 2, 6, B,
        MXP_F32, 2, 6, 0, C, MXP_F32, 2, 4, NULL);
    ERR("ta 9999", mxp_gemm_strided_batched, 2, (mxp_trans)9999, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, 6, B,
        MXP_F32, 2, 6, 0, C, MXP_F32, 2, 4, NULL);
    ERR("c_type 9999", mxp_gemm_strided_batched, 2, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1, A, MXP_F32, 3, 6, B,
        MXP_F32, 2, 6, 0, C, BAD_DT, 2, 4, NULL);
    STR("activation 9999", "invalid", mxp_activation_name, (mxp_activation)9999);
    STR("activation -1", "invalid", mxp_activation_name, (mxp_activation)-1);
    STR("strategy 9999", "invalid", mxp_overflow_strategy_name, (mxp_overflow_strategy)9999);
    STR("strategy -1", "invalid", mxp_overflow_strategy_name, (mxp_overflow_strategy)-1);

    /* one matrix by byte strides (2 x 3 by 3 x 2, rows of 12 and 8 bytes) */
    ERR("a NULL", mxp_matmul_strided, 2, 2, 3, NULL, MXP_F32, 12, 4, B, MXP_F32, 8, 4, C, MXP_F32, 8, 4, NULL);
    ERR("b NULL", mxp_matmul_strided, 2, 2, 3, A, MXP_F32, 12, 4, NULL, MXP_F32, 8, 4, C, MXP_F32, 8, 4, NULL);
    ERR("c NULL", mxp_matmul_strided, 2, 2, 3, A, MXP_F32, 12, 4, B, MXP_F32, 8, 4, NULL, MXP_F32, 8, 4, NULL);
    ERR("a_type 9999", mxp_matmul_strided, 2, 2, 3, A, BAD_DT, 12, 4, B, MXP_F32, 8, 4, C, MXP_F32, 8, 4, NULL);
    ERR("c_type -1", mxp_matmul_strided, 2, 2, 3, A, MXP_F32, 12, 4, B, MXP_F32, 8, 4, C, NEG_DT, 8, 4, NULL);
    ERR("int16 by int16", mxp_matmul_strided, 2, 2, 3, A, MXP_S16, 6, 2, B, MXP_S16, 4, 2, C, MXP_F32, 8, 4, NULL);
    ERR("a_rs PTRDIFF_MIN", mxp_matmul_strided, 2, 2, 3, A, MXP_F32, PTRDIFF_MIN, 4, B, MXP_F32, 8, 4, C, MXP_F32, 8,
        4, NULL);
    ERR("b_cs PTRDIFF_MAX", mxp_matmul_strided, 2, 2, 3, A, MXP_F32, 12, 4, B, MXP_F32, 8, PTRDIFF_MAX, C, MXP_F32, 8,
        4, NULL);
    ERR("c_rs PTRDIFF_MAX / 2 + 1, c_cs the same", mxp_matmul_strided, 2, 2, 3, A, MXP_F32, 12, 4, B, MXP_F32, 8, 4,
        C, MXP_F32, PTRDIFF_MAX / 2 + 1, PTRDIFF_MAX / 2 + 1, NULL);
    ERR("m SIZE_MAX", mxp_matmul_strided, SIZE_MAX, 2, 3, A, MXP_F32, 12, 4, B, MXP_F32, 8, 4, C, MXP_F32, 8, 4, NULL);
    ERR("struct_size 3", mxp_matmul_strided, 2, 2, 3, A, MXP_F32, 12, 4, B, MXP_F32, 8, 4, C, MXP_F32, 8, 4,
        &(mxp_gemm_opts){ .struct_size = 3 });
    ERR("activation 9999", mxp_matmul_strided, 2, 2, 3, A, MXP_F32, 12, 4, B, MXP_F32, 8, 4, C, MXP_F32, 8, 4,
        &(mxp_gemm_opts){ .activation = (mxp_activation)9999 });
    ANY("m 0 (nothing to write)", mxp_matmul_strided, 0, 2, 3, A, MXP_F32, 12, 4, B, MXP_F32, 8, 4, C, MXP_F32, 8, 4,
        NULL);
    ERR("ndim_out NULL", mxp_matmul_shape, NULL, H.buf_i64, 1, ((const int64_t[]){ 3 }), 1, ((const int64_t[]){ 3 }));
    ERR("shape_out NULL", mxp_matmul_shape, &ndim, NULL, 1, ((const int64_t[]){ 3 }), 1, ((const int64_t[]){ 3 }));
    ERR("shape_a NULL, ndim_a 2", mxp_matmul_shape, &ndim, H.buf_i64, 2, NULL, 1, ((const int64_t[]){ 3 }));
    ERR("ndim_a -1", mxp_matmul_shape, &ndim, H.buf_i64, -1, ((const int64_t[]){ 3 }), 1, ((const int64_t[]){ 3 }));
    ERR("ndim_b 33", mxp_matmul_shape, &ndim, H.buf_i64, 1, ((const int64_t[]){ 3 }), 33, H.buf_i64);
    ERR("a 0-d", mxp_matmul_shape, &ndim, H.buf_i64, 0, NULL, 1, ((const int64_t[]){ 3 }));
    ERR("k 3 and 4", mxp_matmul_shape, &ndim, H.buf_i64, 1, ((const int64_t[]){ 3 }), 1, ((const int64_t[]){ 4 }));
    ERR("a dimension -1", mxp_matmul_shape, &ndim, H.buf_i64, 2, ((const int64_t[]){ -1, 3 }), 1,
        ((const int64_t[]){ 3 }));
    ERR("batch axes (2,) and (3,)", mxp_matmul_shape, &ndim, H.buf_i64, 3, ((const int64_t[]){ 2, 1, 1 }), 3,
        ((const int64_t[]){ 3, 1, 1 }));
}
