/* Internal: the exact widenings of GEMM (packing, the epilogue's bias), n
 * contiguous elements at a time, through the conversion kernel itself,
 * found once per call, panel or block of rows: mxp_convert repeats its
 * argument checks, kernel lookup, thread split and floating-point guard on
 * every call.  The kernels' results are mxp_convert's (the conversion tests
 * compare them with the reference at every level); pairs without a kernel
 * keep mxp_convert. */
#ifndef MXP_GEMM_WIDEN_H
#define MXP_GEMM_WIDEN_H

#include "convert/convert-config.h"
#include "mxp/convert.h"

typedef struct mxp_gemm_widener {
    mxp_dtype to, from;
    const mxp_cvt_kernel *k;
} mxp_gemm_widener;

static inline mxp_gemm_widener mxp_gemm_widener_for(mxp_dtype to, mxp_dtype from)
{
    mxp_gemm_widener w = { to, from, NULL };
    if (to != from)
        w.k = mxp_cvt_find(to, from, MXP_ROUND_NEAREST_EVEN, mxp_isa_current());
    return w;
}

static inline void mxp_gemm_widen(const mxp_gemm_widener *w, void *dst, const void *src, size_t n)
{
    static const mxp_cvt_params exact = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL };
    if (w->k)
        w->k->fn(dst, src, n, &exact);
    else
        mxp_convert(dst, w->to, src, w->from, n, NULL);
}

#endif
