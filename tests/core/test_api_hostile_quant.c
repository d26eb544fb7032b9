/* Hostile arguments (test_api_hostile): quant.h, mx.h, analysis.h and train.h. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/api_hostile.h"

static mxp_array *out;
static mxp_qparams qp_out;
static mxp_qtensor *qt_out;
static mxp_observer *obs_out;
static mxp_compare_report report;
static mxp_compare_sums sums;
static mxp_roundtrip_row rows[MXP_ADVISOR_CANDIDATES];
static mxp_advice advice;
static mxp_optimizer *opt_out;
static mxp_loss_scaler *scaler_out;
static mxp_autocast *ac_out;
static mxp_monitor *mon_out;
static mxp_loss_scaler_state state_out;
static const mxp_tensor_stats *records;
static mxp_tensor_stats record;
static size_t count;
static double norm;
static bool stepped;
static mxp_dtype dtype_out;
static char reason[128];
static char *text;
static int32_t lo, hi;
static mxp_compare_bucket *buckets;
static size_t nbuckets;
static mxp_compare_select *sel_out;
static int ndim;
static int32_t rows_zp[8];

/* qparams of one pair (int8 per tensor) with the given scale and zero point. */
static float one_scale[1];
static int32_t one_zp[1];
static const mxp_qparams *qp1(mxp_dtype qtype, float scale, int32_t zp, int axis, int64_t count1)
{
    static mxp_qparams qp;
    one_scale[0] = scale;
    one_zp[0] = zp;
    qp = (mxp_qparams){ .qtype = qtype, .axis = axis, .count = count1, .scales = one_scale, .zero_points = one_zp };
    return &qp;
}

static mxp_status monitor_role_change(void)
{
    /* "w" was recorded as a weight by the fixture */
    return mxp_monitor_record(H.monitor, 1, "w", MXP_ROLE_GRADIENT, H.f32_4, NULL);
}

static mxp_array *read_only_grads[1];

void hostile_quant(hctx *c)
{
    const mxp_qparams *qp = &H.qp_s8;
    const mxp_array *x = H.f32_4;
    float *f = H.buf_f32;
    const mxp_convert_opts bad_round = { .rounding = (mxp_rounding)9999 };

    /* quant.h */
    STR("qtype 9999", "invalid", mxp_qtype_name, BAD_DT);
    STR("qtype -1", "invalid", mxp_qtype_name, NEG_DT);
    VAL("i -1", MXP_DTYPE_INVALID, mxp_qtype_at, -1);
    VAL("i INT_MAX", MXP_DTYPE_INVALID, mxp_qtype_at, INT_MAX);
    VAL("qtype 9999", MXP_DTYPE_INVALID, mxp_qtype_code_dtype, BAD_DT);
    VAL("qtype float32", MXP_DTYPE_INVALID, mxp_qtype_code_dtype, MXP_F32);
    ERR("qtype 9999", mxp_qtype_limits, BAD_DT, &lo, &hi);
    ERR("qtype float32", mxp_qtype_limits, MXP_F32, &lo, &hi);
    ERR("qmin NULL", mxp_qtype_limits, MXP_S8, NULL, &hi);
    ERR("qmax NULL", mxp_qtype_limits, MXP_S8, &lo, NULL);
    ERR("out NULL, n 4", mxp_qmatmul_scales, NULL, 1.0f, f, 4, 1.0);
    ERR("b_scales NULL, n 4", mxp_qmatmul_scales, f + 64, 1.0f, NULL, 4, 1.0);
    ERR("out_scale 0", mxp_qmatmul_scales, f + 64, 1.0f, f, 4, 0.0);
    ERR("out_scale NaN", mxp_qmatmul_scales, f + 64, 1.0f, f, 4, NAN);
    ERR("n SIZE_MAX", mxp_qmatmul_scales, f + 64, 1.0f, f, SIZE_MAX, 1.0);
    RUN("qp NULL", mxp_qparams_free, NULL);
    RUN("qp with count 5 and NULL arrays", mxp_qparams_free, &(mxp_qparams){ .count = 5 });
    ERR("x NULL", mxp_calibrate_minmax, NULL, MXP_S8, true, -1, 0, &qp_out);
    ERR("out NULL", mxp_calibrate_minmax, x, MXP_S8, true, -1, 0, NULL);
    ERR("qtype float32", mxp_calibrate_minmax, x, MXP_F32, true, -1, 0, &qp_out);
    ERR("qtype 9999", mxp_calibrate_minmax, x, BAD_DT, true, -1, 0, &qp_out);
    ERR("axis 1 of 1", mxp_calibrate_minmax, x, MXP_S8, true, 1, 0, &qp_out);
    ERR("axis -2", mxp_calibrate_minmax, x, MXP_S8, true, -2, 0, &qp_out);
    ERR("axis INT_MIN", mxp_calibrate_minmax, x, MXP_S8, true, INT_MIN, 0, &qp_out);
    ERR("group_size -1", mxp_calibrate_minmax, x, MXP_S8, true, 0, -1, &qp_out);
    ERR("group_size 3 of 4 (not a divisor)", mxp_calibrate_minmax, x, MXP_S8, true, 0, 3, &qp_out);
    ERR("group_size INT64_MIN", mxp_calibrate_minmax, x, MXP_S8, true, 0, INT64_MIN, &qp_out);
    ERR("float8 asymmetric", mxp_calibrate_minmax, x, MXP_E4M3, false, -1, 0, &qp_out);
    ERR("out NULL", mxp_quantize, NULL, x, qp, NULL);
    ERR("x NULL", mxp_quantize, &out, NULL, qp, NULL);
    ERR("qp NULL", mxp_quantize, &out, x, NULL, NULL);
    ERR("count 0, arrays NULL", mxp_quantize, &out, x, &(mxp_qparams){ .qtype = MXP_S8, .axis = -1 }, NULL);
    ERR("scale -1", mxp_quantize, &out, x, qp1(MXP_S8, -1, 0, -1, 1), NULL);
    ERR("scale 0", mxp_quantize, &out, x, qp1(MXP_S8, 0, 0, -1, 1), NULL);
    ERR("scale NaN", mxp_quantize, &out, x, qp1(MXP_S8, NAN, 0, -1, 1), NULL);
    ERR("scale +inf", mxp_quantize, &out, x, qp1(MXP_S8, INFINITY, 0, -1, 1), NULL);
    ERR("zero point 1000 for int8", mxp_quantize, &out, x, qp1(MXP_S8, 1, 1000, -1, 1), NULL);
    ERR("zero point INT32_MIN", mxp_quantize, &out, x, qp1(MXP_U8, 1, INT32_MIN, -1, 1), NULL);
    ERR("qtype 9999", mxp_quantize, &out, x, qp1(BAD_DT, 1, 0, -1, 1), NULL);
    ERR("qtype float32", mxp_quantize, &out, x, qp1(MXP_F32, 1, 0, -1, 1), NULL);
    ERR("axis 5", mxp_quantize, &out, x, qp1(MXP_S8, 1, 0, 5, 1), NULL);
    ERR("axis 0 with count 1 for 4", mxp_quantize, &out, x, qp1(MXP_S8, 1, 0, 0, 1), NULL);
    ERR("count -1", mxp_quantize, &out, x, qp1(MXP_S8, 1, 0, -1, -1), NULL);
    ERR("count INT64_MAX per tensor", mxp_quantize, &out, x, qp1(MXP_S8, 1, 0, -1, INT64_MAX), NULL);
    ERR("group_size -2", mxp_quantize, &out, x,
        &(mxp_qparams){ .qtype = MXP_S8, .axis = 0, .group_size = -2, .count = 1, .scales = one_scale,
                        .zero_points = one_zp },
        NULL);
    ERR("rounding 9999", mxp_quantize, &out, x, qp, &bad_round);
    ERR("out NULL", mxp_quantize_into, NULL, x, qp, NULL);
    ERR("x NULL", mxp_quantize_into, H.s8_4, NULL, qp, NULL);
    ERR("qp NULL", mxp_quantize_into, H.s8_4, x, NULL, NULL);
    ERR("out float32 (not the code dtype)", mxp_quantize_into, H.f32_5, H.f32_5, qp, NULL);
    ERR("out uint8 for int8 codes", mxp_quantize_into, H.u8_4, x, qp, NULL);
    ERR("out (4,) for x (2, 3)", mxp_quantize_into, H.s8_4, H.f32_23, qp, NULL);
    ERR("scale NaN", mxp_quantize_into, H.s8_4, x, qp1(MXP_S8, NAN, 0, -1, 1), NULL);
    ERR("codes NULL", mxp_quantize_rows, NULL, f, rows_zp, H.f32_23, NULL, MXP_U8, false);
    ERR("x NULL", mxp_quantize_rows, H.u8_23, f, rows_zp, NULL, NULL, MXP_U8, false);
    ERR("scales NULL, 2 rows", mxp_quantize_rows, H.u8_23, NULL, rows_zp, H.f32_23, NULL, MXP_U8, false);
    ERR("zero_points NULL, 2 rows", mxp_quantize_rows, H.u8_23, f, NULL, H.f32_23, NULL, MXP_U8, false);
    ERR("qtype 9999", mxp_quantize_rows, H.u8_23, f, rows_zp, H.f32_23, NULL, BAD_DT, false);
    ERR("qtype float32", mxp_quantize_rows, H.u8_23, f, rows_zp, H.f32_23, NULL, MXP_F32, false);
    ERR("qtype float8 (not one code a byte of int8/uint8)", mxp_quantize_rows, H.u8_23, f, rows_zp, H.f32_23, NULL,
        MXP_E4M3, true);
    ERR("qtype int4", mxp_quantize_rows, H.u8_23, f, rows_zp, H.f32_23, NULL, MXP_QINT4, true);
    ERR("x 1-d", mxp_quantize_rows, H.u8_4, f, rows_zp, x, NULL, MXP_U8, false);
    ERR("x uint8 (not float)", mxp_quantize_rows, H.u8_23, f, rows_zp, H.u8_23, NULL, MXP_U8, false);
    ERR("codes (3, 2) for x (2, 3)", mxp_quantize_rows, H.u8_23, f, rows_zp, H.f32_32, NULL, MXP_U8, false);
    ERR("codes uint8 for int8", mxp_quantize_rows, H.u8_23, f, rows_zp, H.f32_23, NULL, MXP_S8, true);
    ERR("codes float32", mxp_quantize_rows, H.f32_23, f, rows_zp, H.f32_23, NULL, MXP_U8, false);
    ERR("out NULL", mxp_dequantize, NULL, H.s8_4, qp, MXP_F32);
    ERR("q NULL", mxp_dequantize, &out, NULL, qp, MXP_F32);
    ERR("qp NULL", mxp_dequantize, &out, H.s8_4, NULL, MXP_F32);
    ERR("out_dtype 9999", mxp_dequantize, &out, H.s8_4, qp, BAD_DT);
    ANY("out_dtype int8 (rounded to it)", mxp_dequantize, &out, H.s8_4, qp, MXP_S8);
    ERR("q float32 (not int8)", mxp_dequantize, &out, x, qp, MXP_F32);
    ERR("scale -1", mxp_dequantize, &out, H.s8_4, qp1(MXP_S8, -1, 0, -1, 1), MXP_F32);
    ERR("int4 codes out of [-8, 7]", mxp_dequantize, &out, H.s8_big, qp1(MXP_QINT4, 1, 0, -1, 1), MXP_F32);
    ERR("out NULL", mxp_fake_quantize, NULL, x, qp, NULL);
    ERR("x NULL", mxp_fake_quantize, &out, NULL, qp, NULL);
    ERR("qp NULL", mxp_fake_quantize, &out, x, NULL, NULL);
    ERR("scale 0", mxp_fake_quantize, &out, x, qp1(MXP_S8, 0, 0, -1, 1), NULL);
    ERR("rounding 9999", mxp_fake_quantize, &out, x, qp, &bad_round);
    ERR("out NULL", mxp_pack_int4, NULL, H.s8_4);
    ERR("codes NULL", mxp_pack_int4, &out, NULL);
    ERR("codes float32", mxp_pack_int4, &out, x);
    ERR("int8 codes out of [-8, 7]", mxp_pack_int4, &out, H.s8_big);
    ERR("uint8 codes out of [0, 15]", mxp_pack_int4, &out, H.u8_big);
    ERR("out NULL", mxp_unpack_int4, NULL, H.u8_4, 8, MXP_S8);
    ERR("packed NULL", mxp_unpack_int4, &out, NULL, 8, MXP_S8);
    ERR("packed int8 (not uint8)", mxp_unpack_int4, &out, H.s8_4, 8, MXP_S8);
    ERR("last_dim -1", mxp_unpack_int4, &out, H.u8_4, -1, MXP_S8);
    ERR("last_dim 5 for 4 bytes", mxp_unpack_int4, &out, H.u8_4, 5, MXP_S8);
    ERR("last_dim INT64_MAX", mxp_unpack_int4, &out, H.u8_4, INT64_MAX, MXP_S8);
    ERR("last_dim INT64_MIN", mxp_unpack_int4, &out, H.u8_4, INT64_MIN, MXP_S8);
    ERR("code_dtype float32", mxp_unpack_int4, &out, H.u8_4, 8, MXP_F32);
    ERR("code_dtype 9999", mxp_unpack_int4, &out, H.u8_4, 8, BAD_DT);
    ERR("packed 0-d", mxp_unpack_int4, &out, H.f32_0d, 2, MXP_S8);
    ERR("out NULL", mxp_observer_create, NULL, MXP_CALIB_MINMAX, MXP_S8, true, -1, NULL);
    ERR("kind 0", mxp_observer_create, &obs_out, (mxp_calib_kind)0, MXP_S8, true, -1, NULL);
    ERR("kind 9999", mxp_observer_create, &obs_out, (mxp_calib_kind)9999, MXP_S8, true, -1, NULL);
    ERR("qtype 9999", mxp_observer_create, &obs_out, MXP_CALIB_MINMAX, BAD_DT, true, -1, NULL);
    ERR("qtype float32", mxp_observer_create, &obs_out, MXP_CALIB_MINMAX, MXP_F32, true, -1, NULL);
    ERR("axis -2", mxp_observer_create, &obs_out, MXP_CALIB_MINMAX, MXP_S8, true, -2, NULL);
    ERR("axis INT_MIN", mxp_observer_create, &obs_out, MXP_CALIB_MINMAX, MXP_S8, true, INT_MIN, NULL);
    ERR("percentile kind per channel", mxp_observer_create, &obs_out, MXP_CALIB_PERCENTILE, MXP_S8, true, 0, NULL);
    ERR("float8 asymmetric", mxp_observer_create, &obs_out, MXP_CALIB_MINMAX, MXP_E4M3, false, -1, NULL);
    ERR("momentum 1", mxp_observer_create, &obs_out, MXP_CALIB_MOVING_AVERAGE, MXP_S8, true, -1,
        &(mxp_observer_opts){ .momentum = 1 });
    ERR("momentum -0.5", mxp_observer_create, &obs_out, MXP_CALIB_MOVING_AVERAGE, MXP_S8, true, -1,
        &(mxp_observer_opts){ .momentum = -0.5 });
    ERR("momentum NaN", mxp_observer_create, &obs_out, MXP_CALIB_MOVING_AVERAGE, MXP_S8, true, -1,
        &(mxp_observer_opts){ .momentum = NAN });
    ERR("percentile 101", mxp_observer_create, &obs_out, MXP_CALIB_PERCENTILE, MXP_S8, true, -1,
        &(mxp_observer_opts){ .percentile = 101 });
    ERR("percentile -1", mxp_observer_create, &obs_out, MXP_CALIB_PERCENTILE, MXP_S8, true, -1,
        &(mxp_observer_opts){ .percentile = -1 });
    ERR("percentile NaN", mxp_observer_create, &obs_out, MXP_CALIB_PERCENTILE, MXP_S8, true, -1,
        &(mxp_observer_opts){ .percentile = NAN });
    ERR("bins INT_MAX (16 GiB of counts)", mxp_observer_create, &obs_out, MXP_CALIB_PERCENTILE, MXP_S8, true, -1,
        &(mxp_observer_opts){ .bins = INT_MAX });
    ERR("bins MXP_OBSERVER_MAX_BINS + 1", mxp_observer_create, &obs_out, MXP_CALIB_MSE, MXP_S8, true, -1,
        &(mxp_observer_opts){ .bins = MXP_OBSERVER_MAX_BINS + 1 });
    ERR("bins -1", mxp_observer_create, &obs_out, MXP_CALIB_MSE, MXP_S8, true, -1, &(mxp_observer_opts){ .bins = -1 });
    ERR("bins 16 for KL on int8 (256 at least)", mxp_observer_create, &obs_out, MXP_CALIB_KL, MXP_S8, true, -1,
        &(mxp_observer_opts){ .bins = 16 });
    ERR("group_size -1", mxp_observer_create, &obs_out, MXP_CALIB_MINMAX, MXP_S8, true, 0,
        &(mxp_observer_opts){ .group_size = -1 });
    ERR("obs NULL", mxp_observer_update, NULL, x);
    ERR("batch NULL", mxp_observer_update, H.obs_fresh, NULL);
    ERR("obs NULL", mxp_observer_compute, NULL, &qp_out);
    ERR("out NULL", mxp_observer_compute, H.obs_minmax, NULL);
    ERR("no batch seen", mxp_observer_compute, H.obs_fresh, &qp_out);
    RUN("obs NULL", mxp_observer_free, NULL);
    ERR("x NULL", mxp_histogram_abs, NULL, 1, 16, H.counts);
    ERR("counts NULL", mxp_histogram_abs, x, 1, 16, NULL);
    ERR("bins 0", mxp_histogram_abs, x, 1, 0, H.counts);
    ERR("bins -1", mxp_histogram_abs, x, 1, -1, H.counts);
    ERR("hmax -1", mxp_histogram_abs, x, -1, 16, H.counts);
    ERR("hmax NaN", mxp_histogram_abs, x, NAN, 16, H.counts);
    ERR("hmax +inf", mxp_histogram_abs, x, INFINITY, 16, H.counts);
    ERR("out NULL", mxp_observer_qparams_from_histogram, NULL, MXP_CALIB_MSE, MXP_S8, true, NULL, H.counts, 1, -1, 1);
    ERR("kind MINMAX (no histogram)", mxp_observer_qparams_from_histogram, &qp_out, MXP_CALIB_MINMAX, MXP_S8, true,
        NULL, H.counts, 1, -1, 1);
    ERR("kind 9999", mxp_observer_qparams_from_histogram, &qp_out, (mxp_calib_kind)9999, MXP_S8, true, NULL, H.counts,
        1, -1, 1);
    ERR("qtype 9999", mxp_observer_qparams_from_histogram, &qp_out, MXP_CALIB_MSE, BAD_DT, true, NULL, H.counts, 1, -1,
        1);
    ERR("counts NULL", mxp_observer_qparams_from_histogram, &qp_out, MXP_CALIB_MSE, MXP_S8, true, NULL, NULL, 1, -1, 1);
    ERR("hmax -1", mxp_observer_qparams_from_histogram, &qp_out, MXP_CALIB_MSE, MXP_S8, true, NULL, H.counts, -1, -1,
        1);
    ERR("hmax NaN", mxp_observer_qparams_from_histogram, &qp_out, MXP_CALIB_MSE, MXP_S8, true, NULL, H.counts, NAN, -1,
        1);
    ERR("bins -1", mxp_observer_qparams_from_histogram, &qp_out, MXP_CALIB_MSE, MXP_S8, true,
        &(mxp_observer_opts){ .bins = -1 }, H.counts, 1, -1, 1);
    ERR("a negative count", mxp_observer_qparams_from_histogram, &qp_out, MXP_CALIB_MSE, MXP_S8, true,
        &(mxp_observer_opts){ .bins = 16 }, ((const double[16]){ 1, -5 }), 1, -1, 1);
    ERR("a NaN count", mxp_observer_qparams_from_histogram, &qp_out, MXP_CALIB_PERCENTILE, MXP_S8, true,
        &(mxp_observer_opts){ .bins = 16 }, ((const double[16]){ 1, NAN }), 1, -1, 1);
    ERR("out NULL", mxp_quantize_tensor, NULL, x, NULL, MXP_S8, -1);
    ERR("x NULL", mxp_quantize_tensor, &qt_out, NULL, NULL, MXP_S8, -1);
    ERR("qtype 9999", mxp_quantize_tensor, &qt_out, x, NULL, BAD_DT, -1);
    ERR("qtype float32", mxp_quantize_tensor, &qt_out, x, NULL, MXP_F32, -1);
    ERR("axis 5", mxp_quantize_tensor, &qt_out, x, NULL, MXP_S8, 5);
    ERR("axis -2", mxp_quantize_tensor, &qt_out, x, NULL, MXP_S8, -2);
    ERR("qp int8 with qtype uint8", mxp_quantize_tensor, &qt_out, x, qp, MXP_U8, -1);
    ERR("qp with scale NaN", mxp_quantize_tensor, &qt_out, x, qp1(MXP_S8, NAN, 0, -1, 1), 0, -1);
    ERR("out NULL", mxp_qtensor_create, NULL, H.s8_4, qp);
    ERR("codes NULL", mxp_qtensor_create, &qt_out, NULL, qp);
    ERR("qp NULL", mxp_qtensor_create, &qt_out, H.s8_4, NULL);
    ERR("codes float32", mxp_qtensor_create, &qt_out, x, qp);
    ERR("int4 codes out of [-8, 7]", mxp_qtensor_create, &qt_out, H.s8_big, qp1(MXP_QINT4, 1, 0, -1, 1));
    ERR("qp axis 3 of a 1-d array", mxp_qtensor_create, &qt_out, H.s8_4, qp1(MXP_S8, 1, 0, 3, 1));
    RUN("qt NULL", mxp_qtensor_free, NULL);
    NUL("qt NULL", mxp_qtensor_codes, NULL);
    NUL("qt NULL", mxp_qtensor_qparams, NULL);
    ERR("out NULL", mxp_qtensor_dequantize, NULL, H.qt_s8_32, MXP_F32);
    ERR("qt NULL", mxp_qtensor_dequantize, &out, NULL, MXP_F32);
    ERR("out_dtype 9999", mxp_qtensor_dequantize, &out, H.qt_s8_32, BAD_DT);
    ANY("out_dtype int32 (rounded to it)", mxp_qtensor_dequantize, &out, H.qt_s8_32, MXP_S32);
    ERR("out NULL", mxp_qmatmul, NULL, H.qt_u8_23, H.qt_s8_32, MXP_F32, NULL);
    ERR("a NULL", mxp_qmatmul, &out, NULL, H.qt_s8_32, MXP_F32, NULL);
    ERR("b NULL", mxp_qmatmul, &out, H.qt_u8_23, NULL, MXP_F32, NULL);
    ERR("out_dtype 9999", mxp_qmatmul, &out, H.qt_u8_23, H.qt_s8_32, BAD_DT, NULL);
    ERR("out_dtype int8 without out_params", mxp_qmatmul, &out, H.qt_u8_23, H.qt_s8_32, MXP_S8, NULL);
    ERR("out_params with scale NaN", mxp_qmatmul, &out, H.qt_u8_23, H.qt_s8_32, MXP_S8,
        qp1(MXP_S8, NAN, 0, -1, 1));
    ERR("k 3 and 2 (a by a)", mxp_qmatmul, &out, H.qt_u8_23, H.qt_s8_w, MXP_F32, NULL);
    ERR("b uint8", mxp_qmatmul, &out, H.qt_u8_23, H.qt_u8_23, MXP_F32, NULL);
    ERR("w NULL", mxp_qtensor_prepack, NULL);
    ERR("w uint8 (an activation, not a weight)", mxp_qtensor_prepack, H.qt_u8_23);
    ERR("y NULL", mxp_qlinear, NULL, H.f32_23, H.qt_s8_w, NULL, MXP_F32, NULL);
    ERR("x NULL", mxp_qlinear, &out, NULL, H.qt_s8_w, NULL, MXP_F32, NULL);
    ERR("w NULL", mxp_qlinear, &out, H.f32_23, NULL, NULL, MXP_F32, NULL);
    ERR("out_dtype 9999", mxp_qlinear, &out, H.f32_23, H.qt_s8_w, NULL, BAD_DT, NULL);
    ERR("out_dtype int8 (not a float)", mxp_qlinear, &out, H.f32_23, H.qt_s8_w, NULL, MXP_S8, NULL);
    ERR("x (3, 2): K 2, w K 3", mxp_qlinear, &out, H.f32_32, H.qt_s8_w, NULL, MXP_F32, NULL);
    ERR("bias of 4 for N 2", mxp_qlinear, &out, H.f32_23, H.qt_s8_w, H.f32_4, MXP_F32, NULL);
    ERR("x int8 (not a float)", mxp_qlinear, &out, H.s8_32, H.qt_s8_w, NULL, MXP_F32, NULL);
    ERR("x_params float32", mxp_qlinear, &out, H.f32_23, H.qt_s8_w, NULL, MXP_F32, qp1(MXP_F32, 1, 0, -1, 1));
    ERR("x_params scale -1", mxp_qlinear, &out, H.f32_23, H.qt_s8_w, NULL, MXP_F32, qp1(MXP_U8, -1, 0, -1, 1));
    ERR("y NULL", mxp_qlinear_reduce_range, NULL, H.f32_23, H.qt_s8_w, NULL, MXP_F32, NULL);
    ERR("x NULL", mxp_qlinear_reduce_range, &out, NULL, H.qt_s8_w, NULL, MXP_F32, NULL);
    ERR("w NULL", mxp_qlinear_reduce_range, &out, H.f32_23, NULL, NULL, MXP_F32, NULL);
    ERR("x (3, 2): K 2, w K 3", mxp_qlinear_reduce_range, &out, H.f32_32, H.qt_s8_w, NULL, MXP_F32, NULL);
    ERR("x_params int8", mxp_qlinear_reduce_range, &out, H.f32_23, H.qt_s8_w, NULL, MXP_F32,
        qp1(MXP_S8, 1, 0, -1, 1));
    ERR("x_params zero point 128", mxp_qlinear_reduce_range, &out, H.f32_23, H.qt_s8_w, NULL, MXP_F32,
        qp1(MXP_U8, 1, 128, -1, 1));
    ERR("x_params scale NaN", mxp_qlinear_reduce_range, &out, H.f32_23, H.qt_s8_w, NULL, MXP_F32,
        qp1(MXP_U8, NAN, 0, -1, 1));

    /* mx.h */
    VAL("format 9999", 0, mxp_mx_bytes, (mxp_mx_format)9999, 32);
    VAL("format 0", 0, mxp_mx_bytes, (mxp_mx_format)0, 32);
    VAL("format -1", 0, mxp_mx_bytes, (mxp_mx_format)-1, 32);
    VAL("n SIZE_MAX (does not fit)", 0, mxp_mx_bytes, MXP_MXFP8_E4M3, SIZE_MAX);
    ERR("dst NULL, n 32", mxp_mx_quantize, NULL, MXP_MXFP8_E4M3, f, 32, NULL);
    ERR("src NULL, n 32", mxp_mx_quantize, H.buf_u8, MXP_MXFP8_E4M3, NULL, 32, NULL);
    ERR("format 9999", mxp_mx_quantize, H.buf_u8, (mxp_mx_format)9999, f, 32, NULL);
    ERR("format 0", mxp_mx_quantize, H.buf_u8, (mxp_mx_format)0, f, 32, NULL);
    ERR("n SIZE_MAX", mxp_mx_quantize, H.buf_u8, MXP_MXFP4_E2M1, f, SIZE_MAX, NULL);
    ERR("rounding 9999", mxp_mx_quantize, H.buf_u8, MXP_MXFP8_E4M3, f, 32, &bad_round);
    ERR("dst NULL, n 32", mxp_mx_dequantize, NULL, H.buf_u8, MXP_MXFP8_E4M3, 32);
    ERR("src NULL, n 32", mxp_mx_dequantize, f, NULL, MXP_MXFP8_E4M3, 32);
    ERR("format 9999", mxp_mx_dequantize, f, H.buf_u8, (mxp_mx_format)9999, 32);
    ERR("format -1", mxp_mx_dequantize, f, H.buf_u8, (mxp_mx_format)-1, 32);
    ERR("n SIZE_MAX", mxp_mx_dequantize, f, H.buf_u8, MXP_MXINT8, SIZE_MAX);
    /* mxp_mx_matmul: C (1 x 2) = A (1 x 32) W^T, W 2 x 32 of zeros in buf_u8 */
    float *mc = f + 128, *ma = f + 160;
    ERR("c NULL", mxp_mx_matmul, NULL, MXP_F32, 2, ma, MXP_F32, 32, 1, 32, H.buf_u8, MXP_MXFP8_E4M3, 2, NULL);
    ERR("a NULL", mxp_mx_matmul, mc, MXP_F32, 2, NULL, MXP_F32, 32, 1, 32, H.buf_u8, MXP_MXFP8_E4M3, 2, NULL);
    ERR("w NULL", mxp_mx_matmul, mc, MXP_F32, 2, ma, MXP_F32, 32, 1, 32, NULL, MXP_MXFP8_E4M3, 2, NULL);
    ERR("format 9999", mxp_mx_matmul, mc, MXP_F32, 2, ma, MXP_F32, 32, 1, 32, H.buf_u8, (mxp_mx_format)9999, 2, NULL);
    ERR("k 20: not whole blocks", mxp_mx_matmul, mc, MXP_F32, 2, ma, MXP_F32, 20, 1, 20, H.buf_u8, MXP_MXINT8, 2, NULL);
    ERR("ldc 1 < n 2", mxp_mx_matmul, mc, MXP_F32, 1, ma, MXP_F32, 32, 1, 32, H.buf_u8, MXP_MXFP8_E4M3, 2, NULL);
    ERR("lda 16 < k 32", mxp_mx_matmul, mc, MXP_F32, 2, ma, MXP_F32, 16, 1, 32, H.buf_u8, MXP_MXFP8_E4M3, 2, NULL);
    ERR("n * k overflows", mxp_mx_matmul, mc, MXP_F32, SIZE_MAX, ma, MXP_F32, 32, 1, 32, H.buf_u8, MXP_MXFP8_E4M3,
        SIZE_MAX / 16, NULL);
    ERR("a_type 9999", mxp_mx_matmul, mc, MXP_F32, 2, ma, BAD_DT, 32, 1, 32, H.buf_u8, MXP_MXFP8_E4M3, 2, NULL);
    ERR("c_type int4", mxp_mx_matmul, mc, MXP_S4, 2, ma, MXP_F32, 32, 1, 32, H.buf_u8, MXP_MXFP8_E4M3, 2, NULL);
    ERR("bias of 1 for 2 columns", mxp_mx_matmul, mc, MXP_F32, 2, ma, MXP_F32, 32, 1, 32, H.buf_u8, MXP_MXFP8_E4M3, 2,
        &(mxp_gemm_opts){ .bias = f, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL, .bias_len = 1 });
    ERR("rounding 9999", mxp_mx_matmul, mc, MXP_F32, 2, ma, MXP_F32, 32, 1, 32, H.buf_u8, MXP_MXFP8_E4M3, 2,
        &(mxp_gemm_opts){ .convert = bad_round });
    ERR("opts struct_size 3", mxp_mx_matmul, mc, MXP_F32, 2, ma, MXP_F32, 32, 1, 32, H.buf_u8, MXP_MXFP8_E4M3, 2,
        &(mxp_gemm_opts){ .struct_size = 3 });
    STR("format 9999", "invalid", mxp_mx_format_name, (mxp_mx_format)9999);
    STR("format 0", "invalid", mxp_mx_format_name, (mxp_mx_format)0);

    /* analysis.h */
    ERR("reference NULL", mxp_compare, NULL, x, &report);
    ERR("test NULL", mxp_compare, x, NULL, &report);
    ERR("report NULL", mxp_compare, x, x, NULL);
    ERR("shapes (4,) and (5,)", mxp_compare, x, H.f32_5, &report);
    ERR("empty arrays", mxp_compare, H.f32_empty, H.f32_empty, &report);
    ERR("reference NULL", mxp_compare_piece, NULL, x, &report, &sums, NULL);
    ERR("test NULL", mxp_compare_piece, x, NULL, &report, &sums, NULL);
    ERR("report NULL", mxp_compare_piece, x, x, NULL, &sums, NULL);
    ERR("sums NULL", mxp_compare_piece, x, x, &report, NULL, NULL);
    ERR("shapes (4,) and (5,)", mxp_compare_piece, x, H.f32_5, &report, &sums, NULL);
    RUN("report NULL", mxp_compare_finish, NULL, &sums);
    RUN("sums NULL", mxp_compare_finish, &report, NULL);
    ERR("report NULL", mxp_compare_merge, NULL, &sums, &report, &sums);
    ERR("sums NULL", mxp_compare_merge, &report, NULL, &report, &sums);
    ERR("piece NULL", mxp_compare_merge, &report, &sums, NULL, &sums);
    ERR("piece_sums NULL", mxp_compare_merge, &report, &sums, &report, NULL);
    const double *e = H.counts;
    ERR("out NULL", mxp_compare_buckets, NULL, &nbuckets, e, 4, 0, 63, 47);
    ERR("nout NULL", mxp_compare_buckets, &buckets, NULL, e, 4, 0, 63, 47);
    ERR("errors NULL, n 4", mxp_compare_buckets, &buckets, &nbuckets, NULL, 4, 0, 63, 47);
    ERR("n SIZE_MAX", mxp_compare_buckets, &buckets, &nbuckets, e, SIZE_MAX, 0, 63, 47);
    ERR("prefix_shift 64", mxp_compare_buckets, &buckets, &nbuckets, e, 4, 0, 64, 47);
    ERR("shift -1", mxp_compare_buckets, &buckets, &nbuckets, e, 4, 0, 63, -1);
    ERR("shift 48 > prefix_shift 47", mxp_compare_buckets, &buckets, &nbuckets, e, 4, 0, 47, 48);
    ERR("shift INT_MIN", mxp_compare_buckets, &buckets, &nbuckets, e, 4, 0, 63, INT_MIN);
    const mxp_compare_bucket *bk = (const mxp_compare_bucket *)(const void *)H.buf_u64;
    ERR("out NULL", mxp_compare_buckets_merge, NULL, &nbuckets, bk, 2, bk, 2);
    ERR("a NULL, na 3", mxp_compare_buckets_merge, &buckets, &nbuckets, NULL, 3, bk, 2);
    ERR("b NULL, nb 3", mxp_compare_buckets_merge, &buckets, &nbuckets, bk, 2, NULL, 3);
    ERR("na SIZE_MAX", mxp_compare_buckets_merge, &buckets, &nbuckets, bk, SIZE_MAX, bk, 2);
    ERR("na and nb half SIZE_MAX", mxp_compare_buckets_merge, &buckets, &nbuckets, bk, SIZE_MAX / 2, bk,
        SIZE_MAX / 2);
    ERR("out NULL", mxp_compare_select_create, NULL, true, 0);
    ERR("collect -1", mxp_compare_select_create, &sel_out, true, -1);
    ERR("collect INT64_MIN", mxp_compare_select_create, &sel_out, false, INT64_MIN);
    RUN("NULL", mxp_compare_select_free, NULL);
    VAL("NULL", 0, mxp_compare_select_groups, NULL, H.buf_u64, &ndim, &ndim);
    ERR("select NULL", mxp_compare_select_step, NULL, &bk, &nbuckets);
    ERR("select NULL", mxp_compare_select_finish, NULL, &report, NULL);
    if (hcase(c, "mxp_compare_select_step", "buckets NULL")) {
        mxp_compare_select *s = NULL;
        mxp_compare_select_create(&s, true, 0);
        hstatus(c, mxp_compare_select_step(s, NULL, NULL));
        mxp_compare_select_free(s);
    }
    if (hcase(c, "mxp_compare_select_step", "pass 0's buckets hold 2 errors, pass 1's 1 (a rank beyond them)")) {
        static const mxp_compare_bucket two = { 0x7fe0, 2, 0x3ff0000000000000u, 0x3ff0000000000001u };
        static const mxp_compare_bucket one = { 0x3ff0000000000000u, 1, 0x3ff0000000000000u, 0x3ff0000000000000u };
        const mxp_compare_bucket *p0 = &two, *p1 = &one;
        size_t n1 = 1;
        mxp_compare_select *s = NULL;
        mxp_compare_select_create(&s, true, 0);
        mxp_compare_select_step(s, &p0, &n1);
        hstatus(c, mxp_compare_select_step(s, &p1, &n1));
        mxp_compare_select_free(s);
    }
    if (hcase(c, "mxp_compare_select_finish", "before pass 0")) {
        mxp_compare_select *s = NULL;
        mxp_compare_select_create(&s, false, 0);
        hstatus(c, mxp_compare_select_finish(s, &report, NULL));
        mxp_compare_select_free(s);
    }
    if (hcase(c, "mxp_compare_select_finish", "report NULL")) {
        mxp_compare_select *s = NULL;
        mxp_compare_select_create(&s, false, 0);
        hstatus(c, mxp_compare_select_finish(s, NULL, NULL));
        mxp_compare_select_free(s);
    }
    ERR("x NULL", mxp_roundtrip_analysis, NULL, ((const mxp_dtype[]){ MXP_F16 }), 1, rows);
    ERR("candidates NULL", mxp_roundtrip_analysis, x, NULL, 1, rows);
    ERR("rows NULL", mxp_roundtrip_analysis, x, ((const mxp_dtype[]){ MXP_F16 }), 1, NULL);
    ERR("ncandidates -1", mxp_roundtrip_analysis, x, ((const mxp_dtype[]){ MXP_F16 }), -1, rows);
    ERR("ncandidates INT_MIN", mxp_roundtrip_analysis, x, ((const mxp_dtype[]){ MXP_F16 }), INT_MIN, rows);
    ERR("a candidate 9999", mxp_roundtrip_analysis, x, ((const mxp_dtype[]){ MXP_F16, BAD_DT }), 2, rows);
    ERR("a candidate MXP_QINT4", mxp_roundtrip_analysis, x, ((const mxp_dtype[]){ MXP_QINT4 }), 1, rows);
    ERR("x empty", mxp_roundtrip_analysis, H.f32_empty, ((const mxp_dtype[]){ MXP_F16 }), 1, rows);
    NOARGS_NONNUL(mxp_advisor_candidates);
    const mxp_requirement req = { MXP_REQUIRE_MAX_REL_ERROR, 0.01 };
    ERR("x NULL", mxp_recommend_dtype, NULL, &req, &advice);
    ERR("req NULL", mxp_recommend_dtype, x, NULL, &advice);
    ERR("advice NULL", mxp_recommend_dtype, x, &req, NULL);
    ERR("kind 9999", mxp_recommend_dtype, x, &(mxp_requirement){ (mxp_requirement_kind)9999, 1 }, &advice);
    ERR("kind -1", mxp_recommend_dtype, x, &(mxp_requirement){ (mxp_requirement_kind)-1, 1 }, &advice);
    ERR("max rel error -1", mxp_recommend_dtype, x, &(mxp_requirement){ MXP_REQUIRE_MAX_REL_ERROR, -1 }, &advice);
    ERR("max rel error NaN", mxp_recommend_dtype, x, &(mxp_requirement){ MXP_REQUIRE_MAX_REL_ERROR, NAN }, &advice);
    ERR("min PSNR NaN", mxp_recommend_dtype, x, &(mxp_requirement){ MXP_REQUIRE_MIN_PSNR, NAN }, &advice);
    ERR("x empty", mxp_recommend_dtype, H.f32_empty, &req, &advice);
    ERR("x NULL", mxp_recommend_dtype_rows, NULL, &req, &advice, rows);
    ERR("req NULL", mxp_recommend_dtype_rows, x, NULL, &advice, rows);
    ERR("advice NULL", mxp_recommend_dtype_rows, x, &req, NULL, rows);
    ERR("kind 9999", mxp_recommend_dtype_rows, x, &(mxp_requirement){ (mxp_requirement_kind)9999, 1 }, &advice, rows);
    NONNUL("count NULL", mxp_advisor_candidates_all, NULL);
    const mxp_dtype f16[] = { MXP_F16 };
    ERR("x NULL", mxp_recommend_dtype_among, NULL, &req, f16, 1, &advice, rows);
    ERR("req NULL", mxp_recommend_dtype_among, x, NULL, f16, 1, &advice, rows);
    ERR("advice NULL", mxp_recommend_dtype_among, x, &req, f16, 1, NULL, rows);
    ERR("candidates NULL", mxp_recommend_dtype_among, x, &req, NULL, 1, &advice, rows);
    ERR("ncandidates 0", mxp_recommend_dtype_among, x, &req, f16, 0, &advice, rows);
    ERR("ncandidates -1", mxp_recommend_dtype_among, x, &req, f16, -1, &advice, rows);
    ERR("ncandidates INT_MIN", mxp_recommend_dtype_among, x, &req, f16, INT_MIN, &advice, rows);
    ERR("ncandidates INT_MAX", mxp_recommend_dtype_among, x, &req, f16, INT_MAX, &advice, NULL);
    ERR("a candidate 9999", mxp_recommend_dtype_among, x, &req, ((const mxp_dtype[]){ MXP_F16, BAD_DT }), 2, &advice,
        rows);
    ERR("a candidate -1", mxp_recommend_dtype_among, x, &req, ((const mxp_dtype[]){ NEG_DT }), 1, &advice, rows);
    ERR("an integer candidate", mxp_recommend_dtype_among, x, &req, ((const mxp_dtype[]){ MXP_S8 }), 1, &advice, rows);
    ERR("a candidate twice", mxp_recommend_dtype_among, x, &req, ((const mxp_dtype[]){ MXP_F16, MXP_F16 }), 2, &advice,
        rows);
    ERR("kind 9999", mxp_recommend_dtype_among, x, &(mxp_requirement){ (mxp_requirement_kind)9999, 1 }, f16, 1,
        &advice, rows);
    ERR("x empty", mxp_recommend_dtype_among, H.f32_empty, &req, f16, 1, &advice, rows);
}

void hostile_train(hctx *c)
{
    const mxp_array *x = H.f32_4;
    mxp_array *grads[] = { H.f32_4 };
    read_only_grads[0] = H.readonly_4;
    mxp_array *null_grads[] = { NULL };

    /* optimizers */
    ERR("out NULL", mxp_optimizer_create, NULL, MXP_OPTIM_SGD, NULL);
    ERR("kind 0", mxp_optimizer_create, &opt_out, (mxp_optimizer_kind)0, NULL);
    ERR("kind 9999", mxp_optimizer_create, &opt_out, (mxp_optimizer_kind)9999, NULL);
    ERR("lr -1", mxp_optimizer_create, &opt_out, MXP_OPTIM_SGD, &(mxp_optimizer_opts){ .lr = -1 });
    ERR("lr NaN", mxp_optimizer_create, &opt_out, MXP_OPTIM_SGD, &(mxp_optimizer_opts){ .lr = NAN });
    ERR("lr +inf", mxp_optimizer_create, &opt_out, MXP_OPTIM_ADAM, &(mxp_optimizer_opts){ .lr = INFINITY });
    ERR("momentum 1", mxp_optimizer_create, &opt_out, MXP_OPTIM_SGD, &(mxp_optimizer_opts){ .momentum = 1 });
    ERR("momentum -0.5", mxp_optimizer_create, &opt_out, MXP_OPTIM_SGD, &(mxp_optimizer_opts){ .momentum = -0.5 });
    ERR("dampening 2", mxp_optimizer_create, &opt_out, MXP_OPTIM_SGD, &(mxp_optimizer_opts){ .dampening = 2 });
    ERR("nesterov without momentum", mxp_optimizer_create, &opt_out, MXP_OPTIM_SGD,
        &(mxp_optimizer_opts){ .nesterov = true });
    ERR("weight_decay -1", mxp_optimizer_create, &opt_out, MXP_OPTIM_ADAMW,
        &(mxp_optimizer_opts){ .weight_decay = -1 });
    ERR("weight_decay NaN", mxp_optimizer_create, &opt_out, MXP_OPTIM_SGD,
        &(mxp_optimizer_opts){ .weight_decay = NAN });
    ERR("beta1 1", mxp_optimizer_create, &opt_out, MXP_OPTIM_ADAM, &(mxp_optimizer_opts){ .beta1 = 1 });
    ERR("beta2 -0.1", mxp_optimizer_create, &opt_out, MXP_OPTIM_ADAM, &(mxp_optimizer_opts){ .beta2 = -0.1 });
    ERR("eps -1", mxp_optimizer_create, &opt_out, MXP_OPTIM_ADAM, &(mxp_optimizer_opts){ .eps = -1 });
    ERR("max_grad_norm -1", mxp_optimizer_create, &opt_out, MXP_OPTIM_SGD,
        &(mxp_optimizer_opts){ .max_grad_norm = -1 });
    ERR("master 9999", mxp_optimizer_create, &opt_out, MXP_OPTIM_SGD,
        &(mxp_optimizer_opts){ .master = (mxp_master_mode)9999 });
    ERR("rounding 9999", mxp_optimizer_create, &opt_out, MXP_OPTIM_SGD,
        &(mxp_optimizer_opts){ .rounding = (mxp_rounding)9999 });
    RUN("opt NULL", mxp_optimizer_free, NULL);
    ERR("opt NULL", mxp_optimizer_add_param, NULL, H.f32_4, H.f32_4, NULL);
    ERR("param NULL", mxp_optimizer_add_param, H.sgd, NULL, H.f32_4, NULL);
    ERR("grad NULL", mxp_optimizer_add_param, H.sgd, H.f32_4, NULL, NULL);
    ERR("grad (5,) for param (4,)", mxp_optimizer_add_param, H.sgd, H.f32_4, H.f32_5, NULL);
    ERR("param float64", mxp_optimizer_add_param, H.sgd, H.f64_4, H.f64_4, NULL);
    ERR("param int8", mxp_optimizer_add_param, H.sgd, H.s8_4, H.f32_4, NULL);
    ERR("param read-only", mxp_optimizer_add_param, H.sgd, H.readonly_4, H.f32_4, NULL);
    ERR("grad int8", mxp_optimizer_add_param, H.sgd, H.f32_4, H.s8_4, NULL);
    ERR("master_init (5,) for param (4,)", mxp_optimizer_add_param, H.sgd, H.f32_4, H.f32_4, H.f32_5);
    ERR("opt NULL", mxp_optimizer_step, NULL);
    ERR("opt NULL", mxp_optimizer_step_scaled, NULL, 1);
    ERR("grad_scale 0", mxp_optimizer_step_scaled, H.sgd, 0);
    ERR("grad_scale -1", mxp_optimizer_step_scaled, H.sgd, -1);
    ERR("grad_scale NaN", mxp_optimizer_step_scaled, H.sgd, NAN);
    ERR("grad_scale +inf", mxp_optimizer_step_scaled, H.sgd, INFINITY);
    ERR("opt NULL", mxp_optimizer_set_lr, NULL, 0.1);
    ERR("lr -1", mxp_optimizer_set_lr, H.sgd, -1);
    ERR("lr NaN", mxp_optimizer_set_lr, H.sgd, NAN);
    ISNAN("opt NULL", mxp_optimizer_lr, NULL);
    VAL("opt NULL", 0, mxp_optimizer_steps, NULL);
    VAL("opt NULL", 0, mxp_optimizer_param_count, NULL);
    NUL("opt NULL", mxp_optimizer_master, NULL, 0);
    NUL("i 99 of 0", mxp_optimizer_master, H.sgd, 99);
    NUL("i SIZE_MAX", mxp_optimizer_master, H.sgd, SIZE_MAX);
    ISNAN("opt NULL", mxp_optimizer_last_grad_norm, NULL);
    ERR("grads NULL, n 1", mxp_clip_grad_norm, NULL, 1, 1, &norm);
    ERR("grads[0] NULL", mxp_clip_grad_norm, null_grads, 1, 1, &norm);
    ERR("max_norm -1", mxp_clip_grad_norm, grads, 1, -1, &norm);
    ERR("max_norm NaN", mxp_clip_grad_norm, grads, 1, NAN, &norm);
    ERR("a read-only gradient", mxp_clip_grad_norm, read_only_grads, 1, 1e-3, &norm);

    /* loss scaler */
    ERR("out NULL", mxp_loss_scaler_create, NULL, NULL);
    ERR("init_scale -1", mxp_loss_scaler_create, &scaler_out, &(mxp_loss_scaler_opts){ .init_scale = -1 });
    ERR("init_scale NaN", mxp_loss_scaler_create, &scaler_out, &(mxp_loss_scaler_opts){ .init_scale = NAN });
    ERR("init_scale +inf", mxp_loss_scaler_create, &scaler_out, &(mxp_loss_scaler_opts){ .init_scale = INFINITY });
    ERR("init_scale 1e300 (no float32)", mxp_loss_scaler_create, &scaler_out,
        &(mxp_loss_scaler_opts){ .init_scale = 1e300 });
    ERR("growth_factor 0.5", mxp_loss_scaler_create, &scaler_out, &(mxp_loss_scaler_opts){ .growth_factor = 0.5 });
    ERR("backoff_factor 1.5", mxp_loss_scaler_create, &scaler_out, &(mxp_loss_scaler_opts){ .backoff_factor = 1.5 });
    ERR("backoff_factor -1", mxp_loss_scaler_create, &scaler_out, &(mxp_loss_scaler_opts){ .backoff_factor = -1 });
    ERR("growth_interval -1", mxp_loss_scaler_create, &scaler_out,
        &(mxp_loss_scaler_opts){ .growth_interval = -1 });
    ERR("min_scale 4 > max_scale 2", mxp_loss_scaler_create, &scaler_out,
        &(mxp_loss_scaler_opts){ .init_scale = 2, .min_scale = 4, .max_scale = 2 });
    ERR("min_scale -1", mxp_loss_scaler_create, &scaler_out, &(mxp_loss_scaler_opts){ .min_scale = -1 });
    RUN("s NULL", mxp_loss_scaler_free, NULL);
    ISNAN("s NULL", mxp_loss_scaler_scale, NULL);
    ISNAN("s NULL", mxp_loss_scaler_scale_loss, NULL, 1.0);
    ERR("s NULL", mxp_loss_scaler_unscale, NULL, H.f32_4);
    ERR("grad NULL", mxp_loss_scaler_unscale, H.scaler, NULL);
    ERR("grad read-only", mxp_loss_scaler_unscale, H.scaler, H.readonly_4);
    ERR("grad int8", mxp_loss_scaler_unscale, H.scaler, H.s8_4);
    ERR("s NULL", mxp_loss_scaler_check, NULL, x);
    ERR("x NULL", mxp_loss_scaler_check, H.scaler, NULL);
    VAL("s NULL", false, mxp_loss_scaler_found_inf, NULL);
    ERR("s NULL", mxp_loss_scaler_step, NULL, H.sgd, &stepped);
    ERR("opt NULL", mxp_loss_scaler_step, H.scaler, NULL, &stepped);
    ERR("s NULL", mxp_loss_scaler_update, NULL);
    ERR("s NULL", mxp_loss_scaler_get_state, NULL, &state_out);
    ERR("out NULL", mxp_loss_scaler_get_state, H.scaler, NULL);
    ERR("s NULL", mxp_loss_scaler_set_state, NULL, &(mxp_loss_scaler_state){ 1024, 0, 0, 0 });
    ERR("state NULL", mxp_loss_scaler_set_state, H.scaler, NULL);
    ERR("scale -1", mxp_loss_scaler_set_state, H.scaler, &(mxp_loss_scaler_state){ -1, 0, 0, 0 });
    ERR("scale NaN", mxp_loss_scaler_set_state, H.scaler, &(mxp_loss_scaler_state){ NAN, 0, 0, 0 });
    ERR("scale 0.1 (no float32 value)", mxp_loss_scaler_set_state, H.scaler, &(mxp_loss_scaler_state){ 0.1, 0, 0, 0 });
    ERR("growth_tracker -1", mxp_loss_scaler_set_state, H.scaler, &(mxp_loss_scaler_state){ 1024, -1, 0, 0 });
    ERR("growth_tracker 2000 (= growth_interval)", mxp_loss_scaler_set_state, H.scaler,
        &(mxp_loss_scaler_state){ 1024, 2000, 0, 0 });
    ERR("steps -1", mxp_loss_scaler_set_state, H.scaler, &(mxp_loss_scaler_state){ 1024, 0, -1, 0 });
    ERR("skipped 5 > steps 1", mxp_loss_scaler_set_state, H.scaler, &(mxp_loss_scaler_state){ 1024, 0, 1, 5 });

    /* autocast */
    ERR("out NULL", mxp_autocast_create, NULL, "bf16");
    ERR("policy \"bogus\"", mxp_autocast_create, &ac_out, "bogus");
    ERR("policy \"int8\" (no float)", mxp_autocast_create, &ac_out, "int8");
    ERR("policy \"\"", mxp_autocast_create, &ac_out, "");
    RUN("ac NULL", mxp_autocast_free, NULL);
    VAL("ac NULL", MXP_DTYPE_INVALID, mxp_autocast_dtype, NULL, MXP_AUTOCAST_MATMUL);
    VAL("op 9999", MXP_DTYPE_INVALID, mxp_autocast_dtype, H.autocast, (mxp_autocast_op)9999);
    VAL("op -1", MXP_DTYPE_INVALID, mxp_autocast_dtype, H.autocast, (mxp_autocast_op)-1);
    ERR("ac NULL", mxp_autocast_set, NULL, MXP_AUTOCAST_MATMUL, MXP_F16);
    ERR("op 9999", mxp_autocast_set, H.autocast, (mxp_autocast_op)9999, MXP_F16);
    ERR("op MXP_AUTOCAST_OP_COUNT", mxp_autocast_set, H.autocast, MXP_AUTOCAST_OP_COUNT, MXP_F16);
    ERR("dtype 9999", mxp_autocast_set, H.autocast, MXP_AUTOCAST_MATMUL, BAD_DT);
    ERR("dtype int8 (no float)", mxp_autocast_set, H.autocast, MXP_AUTOCAST_MATMUL, MXP_S8);
    STR("ac NULL", "invalid", mxp_autocast_policy_name, NULL);
    ERR("out NULL", mxp_autocast_cast, NULL, H.autocast, MXP_AUTOCAST_MATMUL, x);
    ERR("ac NULL", mxp_autocast_cast, &out, NULL, MXP_AUTOCAST_MATMUL, x);
    ERR("op 9999", mxp_autocast_cast, &out, H.autocast, (mxp_autocast_op)9999, x);
    ERR("x NULL", mxp_autocast_cast, &out, H.autocast, MXP_AUTOCAST_MATMUL, NULL);
    STR("op 9999", "invalid", mxp_autocast_op_name, (mxp_autocast_op)9999);
    STR("op -1", "invalid", mxp_autocast_op_name, (mxp_autocast_op)-1);
    VAL("name NULL", MXP_AUTOCAST_OP_COUNT, mxp_autocast_op_from_name, NULL);
    VAL("name \"bogus\"", MXP_AUTOCAST_OP_COUNT, mxp_autocast_op_from_name, "bogus");

    /* monitor */
    ERR("out NULL", mxp_monitor_create, NULL, NULL);
    ERR("target 9999", mxp_monitor_create, &mon_out, &(mxp_monitor_opts){ .target = BAD_DT });
    ERR("target int8 (no float)", mxp_monitor_create, &mon_out, &(mxp_monitor_opts){ .target = MXP_S8 });
    ERR("overflow_share -1", mxp_monitor_create, &mon_out, &(mxp_monitor_opts){ .overflow_share = -1 });
    ERR("underflow_share 2", mxp_monitor_create, &mon_out, &(mxp_monitor_opts){ .underflow_share = 2 });
    ERR("underflow_share NaN", mxp_monitor_create, &mon_out, &(mxp_monitor_opts){ .underflow_share = NAN });
    ERR("exploding_norm -1", mxp_monitor_create, &mon_out, &(mxp_monitor_opts){ .exploding_norm = -1 });
    ERR("headroom -1", mxp_monitor_create, &mon_out, &(mxp_monitor_opts){ .headroom = -1 });
    ERR("max_history -1", mxp_monitor_create, &mon_out, &(mxp_monitor_opts){ .max_history = -1 });
    RUN("m NULL", mxp_monitor_free, NULL);
    ERR("m NULL", mxp_monitor_record, NULL, 0, "a", MXP_ROLE_WEIGHT, x, NULL);
    ERR("name NULL", mxp_monitor_record, H.monitor, 0, NULL, MXP_ROLE_WEIGHT, x, NULL);
    ERR("name \"\"", mxp_monitor_record, H.monitor, 0, "", MXP_ROLE_WEIGHT, x, NULL);
    ERR("name of 64 characters", mxp_monitor_record, H.monitor, 0,
        "0123456789012345678901234567890123456789012345678901234567890123", MXP_ROLE_WEIGHT, x, NULL);
    ERR("role 9999", mxp_monitor_record, H.monitor, 0, "a", (mxp_tensor_role)9999, x, NULL);
    ERR("role -1", mxp_monitor_record, H.monitor, 0, "a", (mxp_tensor_role)-1, x, NULL);
    ERR("x NULL", mxp_monitor_record, H.monitor, 0, "a", MXP_ROLE_WEIGHT, NULL, NULL);
    if (hcase(c, "mxp_monitor_record", "a name recorded as a weight, now a gradient"))
        hstatus(c, monitor_role_change());
    VAL("m NULL", 0, mxp_monitor_tensor_count, NULL);
    NUL("m NULL", mxp_monitor_tensor_name, NULL, 0);
    NUL("i 99 of 1", mxp_monitor_tensor_name, H.monitor, 99);
    NUL("i SIZE_MAX", mxp_monitor_tensor_name, H.monitor, SIZE_MAX);
    VAL("m NULL", MXP_ROLE_COUNT, mxp_monitor_tensor_role, NULL, 0);
    VAL("i SIZE_MAX", MXP_ROLE_COUNT, mxp_monitor_tensor_role, H.monitor, SIZE_MAX);
    VAL("m NULL", MXP_DTYPE_INVALID, mxp_monitor_target, NULL);
    ERR("m NULL", mxp_monitor_history, NULL, "w", &records, &count);
    ERR("name NULL", mxp_monitor_history, H.monitor, NULL, &records, &count);
    ERR("records NULL", mxp_monitor_history, H.monitor, "w", NULL, &count);
    ERR("count NULL", mxp_monitor_history, H.monitor, "w", &records, NULL);
    ERR("a name never recorded", mxp_monitor_history, H.monitor, "never", &records, &count);
    ERR("m NULL", mxp_monitor_history_get, NULL, "w", 0, &record);
    ERR("name NULL", mxp_monitor_history_get, H.monitor, NULL, 0, &record);
    ERR("out NULL", mxp_monitor_history_get, H.monitor, "w", 0, NULL);
    ERR("a name never recorded", mxp_monitor_history_get, H.monitor, "never", 0, &record);
    ERR("i 1 of 1 record", mxp_monitor_history_get, H.monitor, "w", 1, &record);
    ERR("i SIZE_MAX", mxp_monitor_history_get, H.monitor, "w", SIZE_MAX, &record);
    ERR("out->struct_size 3", mxp_monitor_history_get, H.monitor, "w", 0, &(mxp_tensor_stats){ .struct_size = 3 });
    VAL("m NULL", 0, mxp_monitor_flags, NULL);
    STR("flag 0", "invalid", mxp_monitor_flag_name, 0);
    STR("two flags at once", "invalid", mxp_monitor_flag_name, MXP_MONITOR_OVERFLOW | MXP_MONITOR_UNDERFLOW);
    STR("flag 0x80000000", "invalid", mxp_monitor_flag_name, 0x80000000u);
    STR("role 9999", "invalid", mxp_tensor_role_name, (mxp_tensor_role)9999);
    STR("role -1", "invalid", mxp_tensor_role_name, (mxp_tensor_role)-1);
    ERR("m NULL", mxp_monitor_suggest, NULL, "w", &dtype_out, reason, sizeof reason);
    ERR("name NULL", mxp_monitor_suggest, H.monitor, NULL, &dtype_out, reason, sizeof reason);
    ERR("dtype NULL", mxp_monitor_suggest, H.monitor, "w", NULL, reason, sizeof reason);
    ERR("a name never recorded", mxp_monitor_suggest, H.monitor, "never", &dtype_out, reason, sizeof reason);
    ANY("reason with reason_size 0", mxp_monitor_suggest, H.monitor, "w", &dtype_out, reason, 0);
    ERR("m NULL", mxp_monitor_report, NULL, false, &text);
    ERR("out NULL", mxp_monitor_report, H.monitor, true, NULL);
}
