/* mxp_gemm with sub-byte integer operands (int4/uint4, int2/uint2,
 * int1/uint1: a byte per element): each is widened exactly into a copy of
 * its span before the call -- to int8 (uint8 for an unsigned A) when the
 * other operand is an integer, so the int8 kernels and their zero points,
 * scales and epilogues serve it, or to float32 when the other is a float.
 * The copy is one pass over the operand (a byte per element in, one or
 * four out), small beside the product for all but the thinnest shapes.
 * See docs/gemm.md, "Sub-byte integer operands". */
#include "core/dtype-internal.h"
#include "core/error.h"
#include "gemm/gemm-internal.h"
#include "mxp/alloc.h"

bool mxp_gemm_sub_byte_int(mxp_dtype t)
{
    return t == MXP_S4 || t == MXP_U4 || t == MXP_S2 || t == MXP_U2 || t == MXP_S1 || t == MXP_U1;
}

mxp_dtype mxp_gemm_widened_type(mxp_dtype t, mxp_dtype other, bool is_b)
{
    if (!mxp_gemm_sub_byte_int(t))
        return t;
    if (mxp_is_float_dtype(other))
        return MXP_F32;
    if (is_b) /* integer GEMM takes int8 B: every sub-byte value fits */
        return MXP_S8;
    return mxp_dtype_get_traits(t)->is_signed ? MXP_S8 : MXP_U8;
}

/* The widened copy of a rows x cols span with leading dimension ld: the
 * bytes between rows are converted too (any byte is a valid sub-byte
 * element: the bits above are ignored), so the copy keeps ld. */
static mxp_status widen(const void *p, mxp_dtype t, mxp_dtype to, size_t rows, size_t cols, size_t ld, void **copy)
{
    *copy = NULL;
    if (to == t || !rows || !cols)
        return MXP_OK;
    const size_t n = (rows - 1) * ld + cols; /* fits: mxp_gemm checked the span */
    if (n > SIZE_MAX / mxp_dtype_itemsize(to) || !(*copy = mxp_malloc(n * mxp_dtype_itemsize(to))))
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_gemm: no memory to widen a %s operand (%zu elements)",
                         mxp_dtype_name(t), n);
    return mxp_convert(*copy, to, p, t, n, NULL); /* exact */
}

mxp_status mxp_gemm_sub_byte_copies(mxp_gemm_fn run, mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                    double alpha, const void *a, mxp_dtype a_type, size_t lda, const void *b,
                                    mxp_dtype b_type, size_t ldb, double beta, void *c, mxp_dtype c_type, size_t ldc,
                                    const mxp_gemm_opts *opts)
{
    const mxp_dtype aw = mxp_gemm_widened_type(a_type, b_type, false);
    const mxp_dtype bw = mxp_gemm_widened_type(b_type, a_type, true);
    void *ac = NULL, *bc = NULL;
    mxp_status st = widen(a, a_type, aw, ta ? k : m, ta ? m : k, lda, &ac);
    if (st == MXP_OK)
        st = widen(b, b_type, bw, tb ? n : k, tb ? k : n, ldb, &bc);
    if (st == MXP_OK)
        st = run(ta, tb, m, n, k, alpha, ac ? ac : a, aw, lda, bc ? bc : b, bw, ldb, beta, c, c_type, ldc, opts);
    mxp_free(ac);
    mxp_free(bc);
    return st;
}
