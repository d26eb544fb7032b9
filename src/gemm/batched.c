/* mxp_gemm_strided_batched: a loop of mxp_gemm over matrices a constant
 * stride apart, with every argument checked before the first is written. */
#include <stdint.h>

#include "core/abi.h"
#include "core/alloc-internal.h"
#include "core/error.h"
#include "gemm/gemm-internal.h"

/* Does i * stride elements of size sz fit in a ptrdiff_t for i < batch? */
static bool stride_fits(size_t batch, ptrdiff_t stride, size_t sz)
{
    if (batch <= 1 || stride == 0)
        return true;
    size_t s = stride < 0 ? (size_t)0 - (size_t)stride : (size_t)stride;
    return s <= (size_t)PTRDIFF_MAX / sz / (batch - 1);
}

static const void *advance(const void *p, size_t i, ptrdiff_t stride, size_t sz)
{
    return p ? (const char *)p + (ptrdiff_t)i * stride * (ptrdiff_t)sz : NULL;
}

mxp_status mxp_gemm_strided_batched(size_t batch, mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                    double alpha, const void *a, mxp_dtype a_type, size_t lda, ptrdiff_t stride_a,
                                    const void *b, mxp_dtype b_type, size_t ldb, ptrdiff_t stride_b, double beta,
                                    void *c, mxp_dtype c_type, size_t ldc, ptrdiff_t stride_c,
                                    const mxp_gemm_opts *opts)
{
    MXP_ABI_IN(opts, gemm_opts, "mxp_gemm_strided_batched");
    /* Transposes, dtypes, leading dimensions and options, as mxp_gemm judges them. */
    mxp_status st = mxp_gemm(ta, tb, 0, n, k, alpha, NULL, a_type, lda, NULL, b_type, ldb, beta, NULL, c_type, ldc,
                             opts);
    if (st == MXP_OK)
        st = mxp_gemm_refuse_a_rows("mxp_gemm_strided_batched", opts);
    if (st != MXP_OK || batch == 0 || m == 0 || n == 0)
        return st;
    const ptrdiff_t strides[3] = { stride_a, stride_b, stride_c };
    const mxp_dtype types[3] = { a_type, b_type, c_type };
    const char names[3] = { 'a', 'b', 'c' };
    for (int i = 0; i < 3; i++)
        if (!stride_fits(batch, strides[i], mxp_dtype_itemsize(types[i])))
            return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_gemm_strided_batched: %zu matrices %td elements apart "
                                                    "(stride_%c) overflow the address space", batch, strides[i],
                             names[i]);
    /* Each C_i apart from its A_i, B_i, the bias and the scales, before any is written. */
    const size_t as = mxp_dtype_itemsize(a_type), bsz = mxp_dtype_itemsize(b_type), cs = mxp_dtype_itemsize(c_type);
    for (size_t i = 0; i < batch && st == MXP_OK; i++)
        st = mxp_gemm_check_buffers("mxp_gemm_strided_batched", ta, tb, m, n, k, advance(a, i, stride_a, as), a_type,
                                    lda, advance(b, i, stride_b, bsz), b_type, ldb, advance(c, i, stride_c, cs),
                                    c_type, ldc, opts);
    if (st != MXP_OK)
        return st;
    /* C's matrices must not overlap: |stride_c| at least one matrix. */
    size_t extent = m - 1 > (SIZE_MAX - n) / ldc ? SIZE_MAX : (m - 1) * ldc + n;
    size_t sc = stride_c < 0 ? (size_t)0 - (size_t)stride_c : (size_t)stride_c;
    if (batch > 1 && sc < extent)
        return mxp_error(MXP_ERR_OVERLAP, "mxp_gemm_strided_batched: stride_c = %td is smaller than one %zu x %zu "
                                          "C matrix with ldc %zu: the outputs would overlap", stride_c, m, n, ldc);
    mxp_gemm_opts o = { 0 };
    if (opts)
        o = *opts;
    const uint64_t offset0 = o.convert.index_offset;
    const bool held = mxp_workspace_hold(); /* the products' workspaces without the allocator's lock */
    for (size_t i = 0; i < batch && st == MXP_OK; i++) {
        o.convert.index_offset = offset0 + (uint64_t)i * m * n; /* stochastic rounding: matrix after matrix */
        st = mxp_gemm(ta, tb, m, n, k, alpha, advance(a, i, stride_a, as), a_type, lda,
                      advance(b, i, stride_b, bsz), b_type, ldb, beta, (void *)advance(c, i, stride_c, cs), c_type,
                      ldc, &o);
    }
    mxp_workspace_unhold(held);
    return st;
}
