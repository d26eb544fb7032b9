/* mxp_mx_matmul: C = A W^T with W stored in an MX / NVFP4 block format.
 * W is decoded to float32 a panel of rows at a time and multiplied by
 * mxp_gemm; the panels' C columns and per-column bias are offsets into the
 * caller's.  See docs/mx.md, "Matrix products". */
#include <string.h>

#include "core/abi.h"
#include "core/error.h"
#include "mxp/alloc.h"
#include "quant/quant-internal.h"

enum { PANEL_BYTES = 1 << 20 };

static size_t block_of(mxp_mx_format f)
{
    return f == MXP_NVFP4 ? MXP_NVFP4_BLOCK : MXP_MX_BLOCK;
}

static mxp_status check(void *c, size_t ldc, const void *a, size_t lda, size_t m, size_t k, const void *w,
                        mxp_mx_format f, size_t n)
{
    const char *fn = "mxp_mx_matmul";
    if (!strcmp(mxp_mx_format_name(f), "invalid"))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %d is not an mxp_mx_format", fn, (int)f);
    if (k % block_of(f))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                         "%s: k = %zu is not a multiple of %s's block of %zu (each row of W must start a block)", fn,
                         k, mxp_mx_format_name(f), block_of(f));
    if (ldc < n || lda < k)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s = %zu is smaller than its row of %zu", fn,
                         ldc < n ? "ldc" : "lda", ldc < n ? ldc : lda, ldc < n ? n : k);
    if (m && n && (!c || (k && (!a || !w))))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, !c ? "c" : !a ? "a" : "w");
    if (n && k > SIZE_MAX / n)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: W of %zu x %zu elements overflows size_t", fn, n, k);
    return MXP_OK;
}

static mxp_status mx_matmul(void *c, mxp_dtype c_type, size_t ldc, const void *a, mxp_dtype a_type, size_t lda,
                            size_t m, size_t k, const void *w, mxp_mx_format f, size_t n, const mxp_gemm_opts *opts)
{
    mxp_status st = check(c, ldc, a, lda, m, k, w, f, n);
    if (st == MXP_OK && opts && opts->bias && opts->bias_kind == MXP_BIAS_PER_COL && opts->bias_len &&
        opts->bias_len < n)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_mx_matmul: the bias holds %zu values, C has %zu columns",
                       opts->bias_len, n);
    if (st != MXP_OK || m == 0 || n == 0)
        return st;
    if (k == 0) /* an empty sum: mxp_gemm writes the epilogue of zero */
        return mxp_gemm(MXP_NO_TRANS, MXP_TRANS, m, n, 0, 1.0, a, a_type, lda, w, MXP_F32, 1, 0.0, c, c_type, ldc,
                        opts);
    const bool stochastic = opts && opts->convert.rounding == MXP_ROUND_STOCHASTIC;
    size_t rows = stochastic ? n : PANEL_BYTES / (k * sizeof(float));
    rows = rows < 16 ? 16 : rows > n ? n : rows;
    if (rows > SIZE_MAX / sizeof(float) / k)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_mx_matmul: a panel of %zu x %zu floats overflows size_t", rows,
                         k);
    float *panel = mxp_malloc(rows * k * sizeof(float));
    if (!panel)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_mx_matmul: no memory for a %zu x %zu float32 panel of W", rows, k);
    mxp_gemm_opts o = opts ? *opts : (mxp_gemm_opts){ 0 };
    const size_t cs = mxp_dtype_itemsize(c_type);
    for (size_t j0 = 0; j0 < n && st == MXP_OK; j0 += rows) {
        const size_t nb = n - j0 < rows ? n - j0 : rows;
        st = mxp_mx_dequantize_part(panel, w, f, j0 * k, nb * k);
        if (opts && opts->bias && opts->bias_kind == MXP_BIAS_PER_COL) { /* the panel's columns */
            o.bias = (const unsigned char *)opts->bias + j0 * mxp_dtype_itemsize(opts->bias_dtype);
            o.bias_len = opts->bias_len ? nb : 0;
        }
        if (st == MXP_OK)
            st = mxp_gemm(MXP_NO_TRANS, MXP_TRANS, m, nb, k, 1.0, a, a_type, lda, panel, MXP_F32, k, 0.0,
                          (unsigned char *)c + j0 * cs, c_type, ldc, &o);
    }
    mxp_free(panel);
    return st;
}

mxp_status mxp_mx_matmul(void *c, mxp_dtype c_type, size_t ldc, const void *a, mxp_dtype a_type, size_t lda,
                         size_t m, size_t k, const void *w, mxp_mx_format f, size_t n, const mxp_gemm_opts *opts)
{
    MXP_ABI_IN(opts, gemm_opts, "mxp_mx_matmul");
    return mx_matmul(c, c_type, ldc, a, a_type, lda, m, k, w, f, n, opts);
}
