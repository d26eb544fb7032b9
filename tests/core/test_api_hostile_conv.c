/* Hostile arguments (test_api_hostile): nn.h's convolution, pooling and
 * batch norm.  The 4-d arrays are made by the case that needs them (in its
 * child), never while the cases are listed. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/api_hostile.h"

static mxp_array *out, *g1, *g2;

static mxp_array *made[8];
static int nmade;

static void free_made(void)
{
    for (int i = 0; i < nmade; i++)
        mxp_array_free(made[i]);
}

/* A new zero array of dtype dt and shape (a, b, c, d) (d = 0: (a,)), freed
 * at exit (before LeakSanitizer looks). */
static mxp_array *arr(mxp_dtype dt, int64_t a, int64_t b, int64_t c, int64_t d)
{
    mxp_array *r = NULL;
    const int64_t s[4] = { a, b, c, d };
    (void)mxp_array_zeros(&r, dt, d ? 4 : 1, s);
    if (!nmade)
        atexit(free_made);
    if (nmade < 8)
        made[nmade++] = r;
    return r;
}

#define X4 arr(MXP_F32, 1, 4, 5, 5)
#define W4 arr(MXP_F32, 2, 4, 3, 3)
#define DY4 arr(MXP_F32, 1, 2, 3, 3)
#define C2 arr(MXP_F32, 2, 0, 0, 0)
#define C4 arr(MXP_F32, 4, 0, 0, 0)

void hostile_conv(hctx *c)
{
    /* convolution */
    ERR("out NULL", mxp_conv2d, NULL, X4, W4, NULL, NULL, 0);
    ERR("x NULL", mxp_conv2d, &out, NULL, W4, NULL, NULL, 0);
    ERR("weight 2-d", mxp_conv2d, &out, X4, H.f32_23, NULL, NULL, 0);
    ERR("weight of 2 channels for 4", mxp_conv2d, &out, X4, arr(MXP_F32, 2, 2, 3, 3), NULL, NULL, 0);
    ERR("groups 3 for 4 channels", mxp_conv2d, &out, X4, W4, NULL, &(mxp_conv_opts){ .groups = 3 }, 0);
    ERR("stride -1", mxp_conv2d, &out, X4, W4, NULL, &(mxp_conv_opts){ .stride = { -1, 1 } }, 0);
    ERR("padding INT64_MAX", mxp_conv2d, &out, X4, W4, NULL, &(mxp_conv_opts){ .padding = { INT64_MAX, 0 } }, 0);
    ERR("dilation INT64_MAX", mxp_conv2d, &out, X4, W4, NULL, &(mxp_conv_opts){ .dilation = { 1, INT64_MAX } }, 0);
    ERR("kernel 9 over 5 rows", mxp_conv2d, &out, X4, arr(MXP_F32, 2, 4, 9, 3), NULL, NULL, 0);
    ERR("bias (4,) for 2 outputs", mxp_conv2d, &out, X4, W4, C4, NULL, 0);
    ERR("x int8", mxp_conv2d, &out, arr(MXP_S8, 1, 4, 5, 5), W4, NULL, NULL, 0);
    ERR("layout 7", mxp_conv2d, &out, X4, W4, NULL, &(mxp_conv_opts){ .layout = 7 }, 0);
    ERR("activation 99", mxp_conv2d, &out, X4, W4, NULL, &(mxp_conv_opts){ .activation = 99 }, 0);
    ERR("clamp NaN", mxp_conv2d, &out, X4, W4, NULL, &(mxp_conv_opts){ .clamp = true, .clamp_lo = NAN }, 0);
    ERR("out_dtype 9999", mxp_conv2d, &out, X4, W4, NULL, NULL, BAD_DT);
    ERR("opts struct_size 3", mxp_conv2d, &out, X4, W4, NULL, &(mxp_conv_opts){ .struct_size = 3 }, 0);
    ERR("out NULL", mxp_conv2d_into, NULL, X4, W4, NULL, NULL);
    ERR("out (4,) for (1, 2, 3, 3)", mxp_conv2d_into, H.f32_4, X4, W4, NULL, NULL);
    ERR("out read-only", mxp_conv2d_into, (mxp_array *)H.readonly_4, X4, W4, NULL, NULL);
    ERR("out int8", mxp_conv2d_into, arr(MXP_S8, 1, 2, 3, 3), X4, W4, NULL, NULL);
    ERR("x 4-d", mxp_conv1d, &out, X4, W4, NULL, NULL, 0);
    ERR("out NULL", mxp_conv1d, NULL, H.f32_23, H.f32_23, NULL, NULL, 0);
    ERR("dy (1, 2, 3, 3) wrong: (4,)", mxp_conv2d_backward, &out, &g1, &g2, H.f32_4, X4, W4, NULL);
    ERR("dy NULL", mxp_conv2d_backward, &out, &g1, &g2, NULL, X4, W4, NULL);
    ERR("dy int8", mxp_conv2d_backward, &out, &g1, &g2, arr(MXP_S8, 1, 2, 3, 3), X4, W4, NULL);
    ERR("groups -2", mxp_conv2d_backward, &out, &g1, &g2, DY4, X4, W4, &(mxp_conv_opts){ .groups = -2 });
    ERR("x uint8, dy quantized", mxp_conv2d_backward, &out, &g1, &g2, DY4, arr(MXP_U8, 1, 4, 5, 5),
        arr(MXP_S8, 2, 4, 3, 3), NULL);

    /* quantized convolution */
    ERR("x uint8, weight uint8", mxp_conv2d, &out, arr(MXP_U8, 1, 4, 5, 5), arr(MXP_U8, 2, 4, 3, 3), NULL, NULL, 0);
    ERR("int32 bias for float", mxp_conv2d, &out, X4, W4, arr(MXP_S32, 2, 0, 0, 0), NULL, 0);
    ERR("x_zero_point 999", mxp_conv2d, &out, arr(MXP_U8, 1, 4, 5, 5), arr(MXP_S8, 2, 4, 3, 3), NULL,
        &(mxp_conv_opts){ .x_zero_point = 999 }, 0);
    ERR("w_zero_point INT32_MIN", mxp_conv2d, &out, arr(MXP_S8, 1, 4, 5, 5), arr(MXP_S8, 2, 4, 3, 3), NULL,
        &(mxp_conv_opts){ .w_zero_point = INT32_MIN }, 0);
    ERR("int32 out with a bias", mxp_conv2d, &out, arr(MXP_U8, 1, 4, 5, 5), arr(MXP_S8, 2, 4, 3, 3),
        arr(MXP_S32, 2, 0, 0, 0), NULL, MXP_S32);
    ERR("7 weight scales for 2 outputs", mxp_conv2d, &out, arr(MXP_U8, 1, 4, 5, 5), arr(MXP_S8, 2, 4, 3, 3), NULL,
        &(mxp_conv_opts){ .w_scales = H.buf_f32, .n_w_scales = 7 }, MXP_U8);
    ERR("y_scale NaN", mxp_conv2d, &out, arr(MXP_U8, 1, 4, 5, 5), arr(MXP_S8, 2, 4, 3, 3), NULL,
        &(mxp_conv_opts){ .y_scale = NAN }, MXP_S8);
    ERR("y_zero_point 200 for int8", mxp_conv2d, &out, arr(MXP_U8, 1, 4, 5, 5), arr(MXP_S8, 2, 4, 3, 3), NULL,
        &(mxp_conv_opts){ .y_zero_point = 200 }, MXP_S8);
    ERR("out int16", mxp_conv2d, &out, arr(MXP_U8, 1, 4, 5, 5), arr(MXP_S8, 2, 4, 3, 3), NULL, NULL, MXP_S16);

    /* pooling */
    ERR("out NULL", mxp_max_pool2d, NULL, X4, NULL, 0);
    ERR("x 2-d", mxp_max_pool2d, &out, H.f32_23, NULL, 0);
    ERR("kernel 6 over 5", mxp_max_pool2d, &out, X4, &(mxp_pool_opts){ .kernel = { 6, 2 } }, 0);
    ERR("padding over half the kernel", mxp_max_pool2d, &out, X4,
        &(mxp_pool_opts){ .kernel = { 2, 2 }, .padding = { 0, 2 } }, 0);
    ERR("stride INT64_MIN", mxp_avg_pool2d, &out, X4, &(mxp_pool_opts){ .stride = { INT64_MIN, 1 } }, 0);
    ERR("out_dtype uint8", mxp_avg_pool2d, &out, X4, NULL, MXP_U8);
    ERR("opts struct_size 1", mxp_avg_pool2d, &out, X4, &(mxp_pool_opts){ .struct_size = 1 }, 0);
    ERR("out NULL", mxp_max_pool2d_into, NULL, X4, NULL);
    ERR("out (4,) for (1, 4, 1, 1)", mxp_max_pool2d_into, H.f32_4, X4, NULL);
    ERR("out read-only", mxp_avg_pool2d_into, (mxp_array *)H.readonly_4, X4, NULL);
    ERR("dx NULL", mxp_max_pool2d_backward, NULL, DY4, X4, NULL);
    ERR("dy (1, 2, 3, 3) for (1, 4, 1, 1)", mxp_max_pool2d_backward, &out, DY4, X4, NULL);
    ERR("x int8", mxp_avg_pool2d_backward, &out, arr(MXP_F32, 1, 4, 1, 1), arr(MXP_S8, 1, 4, 5, 5), NULL);

    /* batch norm */
    ERR("out NULL", mxp_batch_norm, NULL, H.f32_23, 1, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, 0);
    ERR("axis 2 of 2", mxp_batch_norm, &out, H.f32_23, 2, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, 0);
    ERR("inference without running stats", mxp_batch_norm, &out, H.f32_23, 1, NULL, NULL, NULL, NULL, false, 0.1,
        1e-5, 0);
    ERR("running_mean read-only", mxp_batch_norm, &out, H.f32_4, 0, (mxp_array *)H.readonly_4, NULL, NULL, NULL,
        true, 0.1, 1e-5, 0);
    ERR("weight (4,) for 3 channels", mxp_batch_norm, &out, H.f32_23, 1, NULL, NULL, H.f32_4, NULL, true, 0.1, 1e-5,
        0);
    ERR("momentum NaN", mxp_batch_norm, &out, H.f32_23, 1, NULL, NULL, NULL, NULL, true, NAN, 1e-5, 0);
    ERR("one value per channel", mxp_batch_norm, &out, H.f32_4, 0, NULL, NULL, NULL, NULL, true, 0.1, 1e-5, 0);
    ERR("out NULL", mxp_batch_norm_into, NULL, H.f32_23, 1, NULL, NULL, NULL, NULL, true, 0.1, 1e-5);
    ERR("out read-only", mxp_batch_norm_into, (mxp_array *)H.readonly_4, H.f32_4, 0, NULL, NULL, NULL, NULL, true,
        0.1, 1e-5);
    ERR("dy (3, 2) for (2, 3)", mxp_batch_norm_backward, &out, &g1, &g2, H.f32_32, H.f32_23, 1, NULL, 1e-5);
    ERR("eps -1", mxp_batch_norm_backward, &out, &g1, &g2, H.f32_23, H.f32_23, 1, NULL, -1);
    ERR("x uint8", mxp_batch_norm_backward, &out, &g1, &g2, H.u8_23, H.u8_23, 1, NULL, 1e-5);
    ERR("outputs NULL", mxp_fold_batch_norm, NULL, &g1, W4, NULL, NULL, NULL, C2, C2, 1e-5);
    ERR("mean NULL", mxp_fold_batch_norm, &out, &g1, W4, NULL, NULL, NULL, NULL, C2, 1e-5);
    ERR("var (4,) for 2 outputs", mxp_fold_batch_norm, &out, &g1, W4, NULL, NULL, NULL, C2, C4, 1e-5);
    ERR("weight int8", mxp_fold_batch_norm, &out, &g1, H.s8_32, NULL, NULL, NULL, C2, C2, 1e-5);
    ERR("eps NaN", mxp_fold_batch_norm, &out, &g1, W4, NULL, NULL, NULL, C2, C2, NAN);
}
