/* The GEMM epilogue on rows of float64 values (exact for float32 and float64
 * accumulators): bias, activation, clamp — before the one rounding into C. */
#include "gemm/gemm-internal.h"
#include "ops/ops-internal.h"

/* The epilogue on one row of float64 values: bias, activation, clamp. */
void mxp_gemm_epilogue_row(const mxp_gemm_opts *o, double *t, size_t i, size_t j0, size_t len, double *tmp)
{
    if (o->bias) {
        const size_t bs = mxp_dtype_itemsize(o->bias_dtype);
        if (o->bias_kind == MXP_BIAS_PER_COL) {
            mxp_convert(tmp, MXP_F64, (const unsigned char *)o->bias + j0 * bs, o->bias_dtype, len, NULL);
            for (size_t q = 0; q < len; q++)
                t[q] += tmp[q];
        } else {
            double b;
            mxp_convert(&b, MXP_F64, (const unsigned char *)o->bias + i * bs, o->bias_dtype, 1, NULL);
            for (size_t q = 0; q < len; q++)
                t[q] += b;
        }
    }
    if (o->activation) {
        static const mxp_unary_op act_op[] = { MXP_OP_RELU, MXP_OP_RELU, MXP_OP_GELU, MXP_OP_GELU_TANH, MXP_OP_SILU };
        const mxp_ew_ctx c = { .op = (int)act_op[o->activation] }; /* float64, no output dtype */
        mxp_unary_kernel(MXP_F64)(&c, t, t, NULL, len);
    }
    if (o->clamp)
        for (size_t q = 0; q < len; q++)
            t[q] = t[q] < o->clamp_lo ? o->clamp_lo : t[q] > o->clamp_hi ? o->clamp_hi : t[q]; /* NaN stays */
}
