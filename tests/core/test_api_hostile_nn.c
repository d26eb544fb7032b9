/* Hostile arguments (test_api_hostile): nn.h. */
#include <math.h>

#include "core/api_hostile.h"

static mxp_array *out, *dw, *db;

void hostile_nn(hctx *c)
{
    const mxp_array *a = H.f32_23, *w3 = H.f32_4, *ro = H.readonly_4;

    /* softmax, log_softmax, l2_normalize */
    ERR("out NULL", mxp_softmax, NULL, a, 1, NULL, 0);
    ERR("x NULL", mxp_softmax, &out, NULL, 1, NULL, 0);
    ERR("axis 2 of 2", mxp_softmax, &out, a, 2, NULL, 0);
    ERR("axis INT_MIN", mxp_softmax, &out, a, -2147483647 - 1, NULL, 0);
    ERR("mask (4,) for (2, 3)", mxp_softmax, &out, a, 1, w3, 0);
    ERR("out_dtype 9999", mxp_softmax, &out, a, 1, NULL, BAD_DT);
    ERR("out_dtype int8", mxp_softmax, &out, a, 1, NULL, MXP_S8);
    ERR("x 0-d", mxp_softmax, &out, H.f32_0d, 0, NULL, 0);
    ERR("out NULL", mxp_softmax_into, NULL, a, 1, NULL);
    ERR("out read-only", mxp_softmax_into, (mxp_array *)ro, H.f32_4, 0, NULL);
    ERR("out (4,) for (2, 3)", mxp_softmax_into, H.f32_4, a, 1, NULL);
    ERR("out int8", mxp_softmax_into, H.s8_4, H.f32_4, 0, NULL);
    ERR("out NULL", mxp_log_softmax, NULL, a, 1, NULL, 0);
    ERR("axis -3", mxp_log_softmax, &out, a, -3, NULL, 0);
    ERR("x NULL", mxp_log_softmax_into, H.f32_4, NULL, 0, NULL);
    ERR("axis 1 of 1", mxp_log_softmax_into, H.f32_4, H.f32_4, 1, NULL);
    ERR("dx NULL", mxp_softmax_backward, NULL, a, a, 1, 0);
    ERR("dy (3, 2) for y (2, 3)", mxp_softmax_backward, &out, H.f32_32, a, 1, 0);
    ERR("y int8", mxp_softmax_backward, &out, H.s8_4, H.s8_4, 0, 0);
    ERR("dy NULL", mxp_log_softmax_backward, &out, NULL, a, 1, 0);
    ERR("axis 5", mxp_log_softmax_backward, &out, a, a, 5, 0);
    ERR("out NULL", mxp_l2_normalize, NULL, a, 1, 1e-12, 0);
    ERR("eps NaN", mxp_l2_normalize, &out, a, 1, NAN, 0);
    ERR("eps -1", mxp_l2_normalize, &out, a, 1, -1, 0);
    ERR("eps inf", mxp_l2_normalize_into, H.f32_4, H.f32_4, 0, INFINITY);
    ERR("out read-only", mxp_l2_normalize_into, (mxp_array *)ro, H.f32_4, 0, 0);

    /* norms */
    ERR("out NULL", mxp_layer_norm, NULL, a, 1, NULL, NULL, 1e-5, 0);
    ERR("x NULL", mxp_layer_norm, &out, NULL, 1, NULL, NULL, 1e-5, 0);
    ERR("nnorm 0", mxp_layer_norm, &out, a, 0, NULL, NULL, 1e-5, 0);
    ERR("nnorm 3 of 2", mxp_layer_norm, &out, a, 3, NULL, NULL, 1e-5, 0);
    ERR("nnorm -1", mxp_layer_norm, &out, a, -1, NULL, NULL, 1e-5, 0);
    ERR("weight (4,) for (3,)", mxp_layer_norm, &out, a, 1, w3, NULL, 1e-5, 0);
    ERR("bias (4,) for (3,)", mxp_layer_norm, &out, a, 1, NULL, w3, 1e-5, 0);
    ERR("eps NaN", mxp_layer_norm, &out, a, 1, NULL, NULL, NAN, 0);
    ERR("out_dtype 9999", mxp_layer_norm, &out, a, 1, NULL, NULL, 1e-5, BAD_DT);
    ERR("out NULL", mxp_layer_norm_into, NULL, a, 1, NULL, NULL, 1e-5);
    ERR("out read-only", mxp_layer_norm_into, (mxp_array *)ro, H.f32_4, 1, NULL, NULL, 1e-5);
    ERR("out (4,) for (2, 3)", mxp_layer_norm_into, H.f32_4, a, 1, NULL, NULL, 1e-5);
    ERR("out NULL", mxp_rms_norm, NULL, a, 1, NULL, 1e-5, 0);
    ERR("eps -inf", mxp_rms_norm, &out, a, 1, NULL, -INFINITY, 0);
    ERR("out_dtype uint8", mxp_rms_norm, &out, a, 1, NULL, 1e-5, MXP_U8);
    ERR("x NULL", mxp_rms_norm_into, H.f32_4, NULL, 1, NULL, 1e-5);
    ERR("dy NULL", mxp_layer_norm_backward, &out, &dw, &db, NULL, a, 1, NULL, 1e-5);
    ERR("x NULL", mxp_layer_norm_backward, &out, &dw, &db, a, NULL, 1, NULL, 1e-5);
    ERR("dy (3, 2) for x (2, 3)", mxp_layer_norm_backward, &out, &dw, &db, H.f32_32, a, 1, NULL, 1e-5);
    ERR("x uint8", mxp_layer_norm_backward, &out, NULL, NULL, H.u8_23, H.u8_23, 1, NULL, 1e-5);
    ERR("nnorm 9", mxp_rms_norm_backward, &out, &dw, a, a, 9, NULL, 1e-5);
    ERR("weight (4,) for (3,)", mxp_rms_norm_backward, &out, &dw, a, a, 1, w3, 1e-5);

    /* gathers */
    ERR("out NULL", mxp_take, NULL, a, H.s8_4, 0, 0);
    ERR("table NULL", mxp_take, &out, NULL, H.s8_4, 0, 0);
    ERR("indices NULL", mxp_take, &out, a, NULL, 0, 0);
    ERR("indices float32", mxp_take, &out, a, H.f32_4, 0, 0);
    ERR("axis 2 of 2", mxp_take, &out, a, H.s8_4, 2, 0);
    ERR("table 0-d", mxp_take, &out, H.f32_0d, H.s8_4, 0, 0);
    ERR("indices uint8 200.. for 2 rows", mxp_take, &out, a, H.u8_big, 0, 0);
    ERR("out_dtype 9999", mxp_take, &out, a, H.s8_4, 0, BAD_DT);
    ERR("out NULL", mxp_take_into, NULL, a, H.s8_4, 0);
    ERR("out read-only", mxp_take_into, (mxp_array *)ro, H.f32_4, H.s8_4, 0);
    ERR("out (4,) for (4, 3)", mxp_take_into, H.f32_4, a, H.s8_4, 0);
    ERR("out NULL", mxp_take_scaled, NULL, H.s8_32, H.f32_4, H.s8_4, 0);
    ERR("scales (4,) for 3 rows", mxp_take_scaled, &out, H.s8_32, H.f32_4, H.s8_4, 0);
    ERR("table 1-d", mxp_take_scaled, &out, H.s8_4, H.f32_4, H.s8_4, 0);
    ERR("scales NULL", mxp_take_scaled, &out, H.s8_32, NULL, H.s8_4, 0);
    ERR("out_dtype int32", mxp_take_scaled, &out, H.s8_32, H.f32_4, H.s8_4, MXP_S32);
    ERR("out NULL", mxp_take_scaled_into, NULL, H.s8_32, H.f32_4, H.s8_4);
    ERR("out int8", mxp_take_scaled_into, H.s8_4, H.s8_4, H.f32_4, H.s8_4);

    /* row products */
    ERR("out NULL", mxp_rowdot, NULL, a, a, false, 0);
    ERR("a NULL", mxp_rowdot, &out, NULL, a, false, 0);
    ERR("b NULL", mxp_rowdot, &out, a, NULL, false, 0);
    ERR("rows of 3 and 2", mxp_rowdot, &out, a, H.f32_32, false, 0);
    ERR("outer with 1-d", mxp_rowdot, &out, H.f32_4, H.f32_4, true, 0);
    ERR("0-d", mxp_rowdot, &out, H.f32_0d, H.f32_0d, false, 0);
    ERR("rows of 3 and 0", mxp_rowdot, &out, a, H.f32_empty, false, 0);
    ERR("out NULL", mxp_rowdot_into, NULL, a, a, true);
    ERR("out (4,) for (2, 2)", mxp_rowdot_into, H.f32_4, a, a, true);
    ERR("out read-only", mxp_rowdot_into, (mxp_array *)ro, a, a, true);
    ERR("eps NaN", mxp_cosine_similarity, &out, a, a, true, NAN, 0);
    ERR("out_dtype 9999", mxp_cosine_similarity, &out, a, a, true, 1e-8, BAD_DT);
    ERR("out NULL", mxp_cosine_similarity_into, NULL, a, a, false, 1e-8);
    ERR("eps -1", mxp_cosine_similarity_into, H.f32_4, a, a, false, -1);

    /* FFT: complex arrays end in an axis of 2 (f32_23 does not; f32_32's rows are 2 long) */
    const mxp_array *cx = H.f32_32;
    ERR("out NULL", mxp_fft, NULL, cx, NULL);
    ERR("x NULL", mxp_fft, &out, NULL, NULL);
    ERR("not complex: trailing axis 3", mxp_fft, &out, a, NULL);
    ERR("int8 x", mxp_fft, &out, H.s8_32, NULL);
    ERR("naxes 3", mxp_fft, &out, cx, &(mxp_fft_opts){ .naxes = 3 });
    ERR("axis 5", mxp_fft, &out, cx, &(mxp_fft_opts){ .naxes = 1, .axes = { 5 } });
    ERR("axes 0 and 0", mxp_fft, &out, cx, &(mxp_fft_opts){ .naxes = 2, .axes = { 0, 0 } });
    ERR("n -1", mxp_fft, &out, cx, &(mxp_fft_opts){ .n = { -1 } });
    ERR("n 2^40", mxp_fft, &out, cx, &(mxp_fft_opts){ .n = { (int64_t)1 << 40 } });
    ERR("norm 9999", mxp_fft, &out, cx, &(mxp_fft_opts){ .norm = (mxp_fft_norm)9999 });
    ERR("out_dtype int8", mxp_fft, &out, cx, &(mxp_fft_opts){ .out_dtype = MXP_S8 });
    ERR("out_dtype 9999", mxp_fft, &out, cx, &(mxp_fft_opts){ .out_dtype = BAD_DT });
    ERR("opts struct_size 3", mxp_fft, &out, cx, &(mxp_fft_opts){ .struct_size = 3 });
    ERR("0-d x", mxp_rfft, &out, H.f32_0d, NULL);
    ERR("out NULL", mxp_rfft, NULL, a, NULL);
    ERR("int8 x", mxp_rfft, &out, H.s8_4, NULL);
    ERR("not complex: shape (4,)", mxp_irfft, &out, H.f32_4, NULL);
    ERR("out NULL", mxp_irfft, NULL, cx, NULL);

    hostile_conv(c); /* convolution, pooling, batch norm: test_api_hostile_conv.c */
}
