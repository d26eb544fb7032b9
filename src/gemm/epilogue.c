/* The GEMM epilogue on rows of float64 values (exact for float32 and float64
 * accumulators): bias, activation, clamp -- before the one rounding into C.
 * The bias is widened by the conversion kernel found once per call
 * (gemm/widen.h); the activations are src/core/activation.h's, the
 * elementwise operations' own definitions, in loops the compiler
 * vectorizes where it can. */
#include "core/activation.h"
#include "gemm/gemm-internal.h"

void mxp_gemm_epilogue_init(mxp_gemm_epilogue *e, const mxp_gemm_opts *o)
{
    e->o = o;
    e->bias = mxp_gemm_widener_for(MXP_F64, o && o->bias ? o->bias_dtype : MXP_F64);
}

static void activate(mxp_activation act, double *t, size_t len)
{
    switch (act) {
    case MXP_ACT_RELU: for (size_t q = 0; q < len; q++) t[q] = mxp_relu(t[q]); break;
    case MXP_ACT_GELU: for (size_t q = 0; q < len; q++) t[q] = mxp_gelu(t[q]); break;
    case MXP_ACT_GELU_TANH: for (size_t q = 0; q < len; q++) t[q] = mxp_gelu_tanh(t[q]); break;
    case MXP_ACT_SILU: for (size_t q = 0; q < len; q++) t[q] = mxp_silu(t[q]); break;
    default: break;
    }
}

void mxp_gemm_epilogue_row(const mxp_gemm_epilogue *e, double *t, size_t i, size_t j0, size_t len, double *tmp)
{
    const mxp_gemm_opts *o = e->o;
    if (o->bias) {
        const size_t bs = mxp_dtype_itemsize(o->bias_dtype);
        if (o->bias_kind == MXP_BIAS_PER_COL) {
            mxp_gemm_widen(&e->bias, tmp, (const unsigned char *)o->bias + j0 * bs, len);
            for (size_t q = 0; q < len; q++)
                t[q] += tmp[q];
        } else {
            double b;
            mxp_gemm_widen(&e->bias, &b, (const unsigned char *)o->bias + i * bs, 1);
            for (size_t q = 0; q < len; q++)
                t[q] += b;
        }
    }
    mxp_gemm_epilogue_act(o, t, len);
}

void mxp_gemm_epilogue_act(const mxp_gemm_opts *o, double *t, size_t len)
{
    if (o->activation)
        activate(o->activation, t, len);
    if (o->clamp)
        for (size_t q = 0; q < len; q++)
            t[q] = t[q] < o->clamp_lo ? o->clamp_lo : t[q] > o->clamp_hi ? o->clamp_hi : t[q]; /* NaN stays */
}
