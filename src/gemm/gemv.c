/* M = 1: C (1 x n) = alpha * x B + beta * C with B streamed once from the
 * caller's memory by a GEMV kernel (no packing), then the epilogue and one
 * rounding into C.  Used when the machine has AVX-512 and B is float32,
 * bfloat16 or float16 (float32 accumulation). */
#include <string.h>

#include "gemm/gemm-internal.h"
#include "kernels/gemv-kernels.h"
#include "mxp/alloc.h"

bool mxp_gemm_gemv(size_t n, size_t k, double alpha, const mxp_gemm_operand *a, const mxp_gemm_operand *b,
                   double beta, void *c, mxp_dtype c_type, const mxp_gemm_opts *opts, mxp_status *st)
{
#if MXP_HAVE_X86_KERNELS
    int kind = b->dtype == MXP_F32 ? MXP_GEMV_F32 : b->dtype == MXP_BF16 ? MXP_GEMV_BF16
             : b->dtype == MXP_F16 ? MXP_GEMV_F16 : -1;
    if (kind < 0 || mxp_isa_current() < MXP_ISA_AVX512 || (opts && opts->acc_dtype && opts->acc_dtype != MXP_F32) ||
        a->dtype == MXP_F64)
        return false;
    float *x = mxp_malloc(k * sizeof *x), *y = mxp_malloc(n * sizeof *y);
    if (!x || !y) {
        mxp_free(x);
        mxp_free(y);
        *st = MXP_ERR_NO_MEMORY;
        return true;
    }
    /* x = the one row of op(A), widened exactly */
    const size_t as = mxp_dtype_itemsize(a->dtype);
    mxp_convert_strided(x, MXP_F32, 4, a->base, a->dtype, (ptrdiff_t)(a->trans ? a->ld * as : as), k, NULL);
    mxp_gemv_f32acc__avx512f(b->trans, kind, k, n, x, b->base, b->ld * mxp_dtype_itemsize(b->dtype), y);
    /* alpha * y + beta * C, the epilogue, one rounding */
    enum { CHUNK = 512 };
    double t[CHUNK], tmp[CHUNK];
    const size_t cs = mxp_dtype_itemsize(c_type);
    const mxp_gemm_opts none = { .acc_dtype = 0 };
    const mxp_gemm_opts *o = opts ? opts : &none;
    mxp_convert_opts co = o->convert;
    const uint64_t offset0 = co.index_offset;
    for (size_t j = 0; j < n; j += CHUNK) {
        size_t len = n - j < CHUNK ? n - j : CHUNK;
        if (beta != 0) {
            mxp_convert(tmp, MXP_F64, (const unsigned char *)c + j * cs, c_type, len, NULL);
            for (size_t q = 0; q < len; q++)
                t[q] = alpha * (double)y[j + q] + beta * tmp[q];
        } else {
            for (size_t q = 0; q < len; q++)
                t[q] = alpha * (double)y[j + q];
        }
        mxp_gemm_epilogue_row(o, t, 0, j, len, tmp);
        co.index_offset = offset0 + j;
        mxp_convert((unsigned char *)c + j * cs, c_type, t, MXP_F64, len, &co);
    }
    mxp_free(x);
    mxp_free(y);
    *st = MXP_OK;
    return true;
#else
    (void)n; (void)k; (void)alpha; (void)a; (void)b; (void)beta; (void)c; (void)c_type; (void)opts; (void)st;
    return false;
#endif
}
