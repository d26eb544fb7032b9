/* mxp_gemm on element buffers at any address: the misaligned operands are
 * copied once into aligned blocks (with their leading dimension), the
 * checked call runs on those, and C is copied back.  The packers and
 * micro-kernels read A, B and C through typed pointers, which must be
 * aligned; a copy costs one pass over the operand, small beside the
 * product.  See gemm-internal.h. */
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "gemm/gemm-internal.h"
#include "mxp/alloc.h"

static bool off(const void *p, mxp_dtype t)
{
    const size_t size = mxp_dtype_itemsize(t);
    return p && size > 1 && (uintptr_t)p % (size < 8 ? size : 8) != 0;
}

/* With k == 0, A and B span no bytes and are never read: a misaligned one
 * needs no copy (and counting it would send the copies' call here again,
 * with nothing copied, for ever). */
bool mxp_gemm_misaligned(size_t k, const void *a, mxp_dtype at, const void *b, mxp_dtype bt, const void *c,
                         mxp_dtype ct)
{
    return (k && (off(a, at) || off(b, bt))) || off(c, ct);
}

/* The bytes a rows x cols matrix with leading dimension ld spans (the
 * sizes were checked: they fit). */
static size_t span(size_t rows, size_t cols, size_t ld, mxp_dtype t)
{
    return rows && cols ? ((rows - 1) * ld + cols) * mxp_dtype_itemsize(t) : 0;
}

/* An aligned copy of p's span, or p itself when aligned (or empty). */
static mxp_status aligned(const void *p, mxp_dtype t, size_t bytes, void **copy)
{
    *copy = NULL;
    if (!off(p, t) || !bytes)
        return MXP_OK;
    if (!(*copy = mxp_malloc(bytes)))
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_gemm: no memory for an aligned copy of a misaligned operand (%zu bytes)",
                         bytes);
    memcpy(*copy, p, bytes);
    return MXP_OK;
}

mxp_status mxp_gemm_aligned_copies(mxp_gemm_fn run, mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                   double alpha, const void *a, mxp_dtype a_type, size_t lda, const void *b,
                                   mxp_dtype b_type, size_t ldb, double beta, void *c, mxp_dtype c_type, size_t ldc,
                                   const mxp_gemm_opts *opts)
{
    const size_t a_bytes = ta ? span(k, m, lda, a_type) : span(m, k, lda, a_type);
    const size_t b_bytes = tb ? span(n, k, ldb, b_type) : span(k, n, ldb, b_type);
    const size_t c_bytes = span(m, n, ldc, c_type);
    void *ac = NULL, *bc = NULL, *cc = NULL;
    mxp_status st = aligned(a, a_type, a_bytes, &ac);
    if (st == MXP_OK)
        st = aligned(b, b_type, b_bytes, &bc);
    if (st == MXP_OK)
        st = aligned(c, c_type, c_bytes, &cc); /* C's old values: beta, and the bytes between its rows */
    if (st == MXP_OK) {
        st = run(ta, tb, m, n, k, alpha, ac ? ac : a, a_type, lda, bc ? bc : b, b_type, ldb, beta, cc ? cc : c, c_type,
                 ldc, opts);
        if (st == MXP_OK && cc)
            memcpy(c, cc, c_bytes);
    }
    mxp_free(ac);
    mxp_free(bc);
    mxp_free(cc);
    return st;
}
