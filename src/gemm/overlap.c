/* The buffers of one GEMM call: the bias long enough for what the epilogue
 * reads, and C sharing no byte with what is read while C is written (A, B,
 * the bias, the scales, A's per-row zero points and scales): the
 * micro-kernels and the epilogue write C's blocks while later blocks of
 * the inputs are still to be read, so an
 * overlap would return MXP_OK with a wrong product.
 *
 * Matrices are compared as stored, row by row: A and C side by side in one
 * buffer (rows that interleave, no byte shared) are accepted.
 *
 *     x: |rrrr....|rrrr....|rrrr....|        rows of x.width bytes, x.stride apart
 *     y:       |yyy.....|yyy.....|           each row of y against the rows of x */
#include <stdint.h>

#include "core/error.h"
#include "gemm/gemm-internal.h"

/* Does the byte range [d, d + w) (relative to x's start) meet a row of x? */
static bool meets_a_row(const mxp_gemm_region *x, int64_t d, int64_t w)
{
    const int64_t xs = (int64_t)x->stride, xw = (int64_t)x->width, last = (int64_t)x->rows - 1;
    if (d + w <= 0) /* before row 0 */
        return false;
    /* the rows i >= 0 with i xs < d + w and i xs + xw > d (xs >= xw > 0) */
    const int64_t hi = (d + w - 1) / xs;
    const int64_t lo = d - xw < 0 ? 0 : (d - xw) / xs + 1;
    return lo <= (hi < last ? hi : last);
}

bool mxp_gemm_regions_overlap(const mxp_gemm_region *x, const mxp_gemm_region *y)
{
    if (!x->rows || !x->width || !y->rows || !y->width)
        return false;
    const uintptr_t xa = (uintptr_t)x->base, ya = (uintptr_t)y->base;
    const size_t xe = (x->rows - 1) * x->stride + x->width, ye = (y->rows - 1) * y->stride + y->width;
    if (xa >= ya + ye || ya >= xa + xe) /* the spans are apart (mxp_gemm checked that they fit) */
        return false;
    if (x->rows < y->rows) { /* walk the one with fewer rows */
        const mxp_gemm_region *t = x;
        x = y;
        y = t;
    }
    const int64_t d0 = (int64_t)((uintptr_t)y->base - (uintptr_t)x->base); /* the spans meet: small */
    for (size_t j = 0; j < y->rows; j++)
        if (meets_a_row(x, d0 + (int64_t)(j * y->stride), (int64_t)y->width))
            return true;
    return false;
}

mxp_gemm_region mxp_gemm_region_of(const void *p, size_t rows, size_t cols, size_t ld, mxp_dtype t)
{
    const size_t size = mxp_dtype_itemsize(t);
    return (mxp_gemm_region){ p, rows, cols * size, ld * size };
}

mxp_status mxp_gemm_check_buffers(const char *fn, mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                  const void *a, mxp_dtype at, size_t lda, const void *b, mxp_dtype bt, size_t ldb,
                                  const void *c, mxp_dtype ct, size_t ldc, const mxp_gemm_opts *o)
{
    if (m == 0 || n == 0)
        return MXP_OK;
    const bool bias = o && o->bias;
    const size_t bias_need = bias ? (o->bias_kind == MXP_BIAS_PER_ROW ? m : n) : 0;
    if (bias && o->bias_len && o->bias_len < bias_need)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: bias_len = %zu, but a bias per %s needs %zu values", fn,
                         o->bias_len, o->bias_kind == MXP_BIAS_PER_ROW ? "row (m)" : "column (n)", bias_need);
    const bool rows = o && (o->a_zero_points || o->a_scales);
    if (rows && o->a_rows_len && o->a_rows_len < m)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: a_rows_len = %zu, but A's per-row zero points and scales "
                         "need m = %zu values", fn, o->a_rows_len, m);
    const mxp_gemm_region C = mxp_gemm_region_of(c, m, n, ldc, ct);
    const mxp_gemm_region inputs[6] = {
        mxp_gemm_region_of(a, ta ? k : m, ta ? m : k, lda, at),
        mxp_gemm_region_of(b, tb ? n : k, tb ? k : n, ldb, bt),
        mxp_gemm_region_of(bias ? o->bias : NULL, bias ? 1 : 0, bias_need, bias_need, bias ? o->bias_dtype : MXP_F32),
        mxp_gemm_region_of(o ? o->scales : NULL, o && o->scales ? 1 : 0, o ? o->n_scales : 0,
                           o ? o->n_scales : 0, MXP_F32),
        mxp_gemm_region_of(rows ? o->a_zero_points : NULL, rows && o->a_zero_points ? 1 : 0, m, m, MXP_S32),
        mxp_gemm_region_of(rows ? o->a_scales : NULL, rows && o->a_scales ? 1 : 0, m, m, MXP_F32),
    };
    static const char *const names[6] = { "A", "B", "the bias", "the scales", "a_zero_points", "a_scales" };
    for (int i = 0; i < 6; i++)
        if (mxp_gemm_regions_overlap(&C, &inputs[i]))
            return mxp_error(MXP_ERR_OVERLAP, "%s: C overlaps %s (read while C is written); give C memory of "
                                              "its own", fn, names[i]);
    return MXP_OK;
}

mxp_status mxp_gemm_refuse_a_rows(const char *fn, const mxp_gemm_opts *o)
{
    if (o && (o->a_zero_points || o->a_scales))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: a_zero_points and a_scales give one matrix's rows; call "
                         "mxp_gemm for each matrix", fn);
    return MXP_OK;
}
