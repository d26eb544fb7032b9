/* Affine quantization: hand-computed qparams and codes, per-channel and
 * grouped layouts, zero/constant tensors, the NaN/infinity policy,
 * saturation, rounding modes, round-trip error bounds, the observers
 * (min/max, moving average, percentile, MSE, KL) and bad input. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static mxp_array *make(mxp_dtype dt, int ndim, const int64_t *shape, const double *v)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_empty(&a, MXP_F64, ndim, shape), MXP_OK);
    memcpy(mxp_array_data(a), v, (size_t)mxp_array_size(a) * sizeof(double));
    if (dt == MXP_F64)
        return a;
    mxp_array *b = NULL;
    assert_int_equal(mxp_array_astype(&b, a, dt, NULL), MXP_OK);
    mxp_array_free(a);
    return b;
}

static mxp_array *vec(const double *v, int64_t n)
{
    return make(MXP_F32, 1, &n, v);
}

/* Element i of an integer or float array, as a double. */
static double at(const mxp_array *a, int64_t i)
{
    double d = 0.0;
    const char *p = (const char *)mxp_array_data(a) + (size_t)i * mxp_array_itemsize(a);
    assert_int_equal(mxp_convert(&d, MXP_F64, p, mxp_array_dtype(a), 1, NULL), MXP_OK);
    return d;
}

static void expect_codes(const mxp_array *q, const double *want, int64_t n)
{
    assert_int_equal(mxp_array_size(q), n);
    for (int64_t i = 0; i < n; i++)
        assert_true(at(q, i) == want[i]);
}

/* Caller-owned qparams (per tensor) pointing at static storage. */
static mxp_qparams tensor_qp(mxp_dtype qt, float *scale, int32_t *zp)
{
    return (mxp_qparams){ .qtype = qt, .axis = -1, .count = 1, .scales = scale, .zero_points = zp };
}

/* ---- hand-computed cases ------------------------------------------------ */

/* [-1, 0, 0.5, 1] int8 symmetric: scale = 1/127, 0.5 * 127 = 63.5 -> 64. */
static void test_symmetric_int8(void **state)
{
    (void)state;
    mxp_array *x = vec((double[]){ -1, 0, 0.5, 1 }, 4), *q = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, -1, 0, &qp), MXP_OK);
    assert_int_equal(qp.count, 1);
    assert_true(qp.scales[0] == (float)(1.0 / 127.0));
    assert_int_equal(qp.zero_points[0], 0);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(q), MXP_S8);
    expect_codes(q, (double[]){ -127, 0, 64, 127 }, 4);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    assert_null(qp.scales);
    mxp_array_free(x);
}

/* uint8 asymmetric on [0, 2.55]: scale 0.01, zp 0; on [-1, 3]: scale 4/255,
 * zp = round(63.75) = 64 (uint8) and round(-128 + 63.75) = -64 (int8). */
static void test_asymmetric(void **state)
{
    (void)state;
    mxp_array *x = vec((double[]){ 0, 1, 2.55 }, 3), *q = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_U8, false, -1, 0, &qp), MXP_OK);
    assert_float_equal(qp.scales[0], 0.01, 1e-8);
    assert_int_equal(qp.zero_points[0], 0);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 0, 100, 255 }, 3);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);

    x = vec((double[]){ -1, 0, 3 }, 3);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_U8, false, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == (float)(4.0 / 255.0));
    assert_int_equal(qp.zero_points[0], 64);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 0, 64, 255 }, 3);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, false, -1, 0, &qp), MXP_OK);
    assert_int_equal(qp.zero_points[0], -64);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ -128, -64, 127 }, 3);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);
}

/* [[1, -2, 0.5], [4, 0, -8]]: per row amax 2, 8; per column 4, 2, 8. */
static void test_per_channel(void **state)
{
    (void)state;
    int64_t shape[2] = { 2, 3 };
    mxp_array *x = make(MXP_F32, 2, shape, (double[]){ 1, -2, 0.5, 4, 0, -8 }), *q = NULL, *d = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, 0, 0, &qp), MXP_OK);
    assert_int_equal(qp.count, 2);
    assert_true(qp.scales[0] == (float)(2.0 / 127) && qp.scales[1] == (float)(8.0 / 127));
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_true(at(q, 1) == -127 && at(q, 5) == -127 && at(q, 4) == 0);
    assert_true(at(q, 0) == 64 && at(q, 3) == 64); /* 63.5 (float scale a bit small) */
    mxp_array_free(q);
    mxp_qparams_free(&qp);

    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, 1, 0, &qp), MXP_OK);
    assert_int_equal(qp.count, 3);
    assert_true(qp.scales[0] == (float)(4.0 / 127) && qp.scales[1] == (float)(2.0 / 127) &&
                qp.scales[2] == (float)(8.0 / 127));
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_true(at(q, 3) == 127 && at(q, 1) == -127 && at(q, 5) == -127 && at(q, 0) == 32);
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F64), MXP_OK);
    for (int64_t i = 0; i < 6; i++)
        assert_true(fabs(at(d, i) - at(x, i)) <= qp.scales[i % 3] / 2.0);
    mxp_array_free(d);
    mxp_array_free(q);

    /* a transposed (non-contiguous) view along its axis 0 is the same */
    mxp_array *t = NULL, *qt = NULL;
    mxp_qparams qp2;
    assert_int_equal(mxp_array_transpose(&t, x, NULL), MXP_OK);
    assert_int_equal(mxp_calibrate_minmax(t, MXP_S8, true, 0, 0, &qp2), MXP_OK);
    assert_memory_equal(qp.scales, qp2.scales, 3 * sizeof(float));
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_quantize(&qt, t, &qp2, NULL), MXP_OK);
    for (int64_t r = 0; r < 2; r++)
        for (int64_t c = 0; c < 3; c++)
            assert_true(at(q, r * 3 + c) == at(qt, c * 2 + r));
    mxp_array_free(qt);
    mxp_array_free(q);
    mxp_array_free(t);
    mxp_qparams_free(&qp2);
    mxp_qparams_free(&qp);
    mxp_array_free(x);

    /* a float64 input is left as it was */
    int64_t n = 2;
    x = make(MXP_F64, 1, &n, (double[]){ 0.3, -0.7 });
    assert_int_equal(mxp_calibrate_minmax(x, MXP_U8, false, -1, 0, &qp), MXP_OK);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_true(at(x, 0) == 0.3 && at(x, 1) == -0.7);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);
}

/* [[1, 2, 3, 4], [5, 6, 7, 8]] in groups of 2 along axis 1: amax 2, 4, 6, 8. */
static void test_groups(void **state)
{
    (void)state;
    int64_t shape[2] = { 2, 4 };
    mxp_array *x = make(MXP_F32, 2, shape, (double[]){ 1, 2, 3, 4, 5, 6, 7, 8 }), *q = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, 1, 2, &qp), MXP_OK);
    assert_int_equal(qp.count, 4);
    for (int k = 0; k < 4; k++)
        assert_true(qp.scales[k] == (float)((2.0 * k + 2) / 127));
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    for (int64_t i = 0; i < 8; i++) /* 63.5 or 127, as the float scale rounds */
        assert_true(at(q, i) == (i % 2 ? 127 : nearbyint((double)(i + 1) / qp.scales[i / 2])));
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    /* groups along axis 0 of a [4, 1] array: 2 groups */
    int64_t s2[2] = { 4, 1 };
    mxp_array *y = make(MXP_F32, 2, s2, (double[]){ 1, -1, 3, 0 });
    assert_int_equal(mxp_calibrate_minmax(y, MXP_S8, true, 0, 2, &qp), MXP_OK);
    assert_int_equal(qp.count, 2);
    assert_true(qp.scales[0] == (float)(1.0 / 127) && qp.scales[1] == (float)(3.0 / 127));
    mxp_qparams_free(&qp);
    mxp_array_free(y);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, 1, 3, &qp), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, -1, 2, &qp), MXP_ERR_INVALID_ARGUMENT);
    mxp_array_free(x);
}

/* Constant and all-zero tensors: finite nonzero scale, 0 -> zero point. */
static void test_constant_and_zero(void **state)
{
    (void)state;
    mxp_array *x = vec((double[]){ 3, 3, 3 }, 3), *q = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == (float)(3.0 / 127) && qp.zero_points[0] == 0);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 127, 127, 127 }, 3);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_U8, false, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == (float)(3.0 / 255) && qp.zero_points[0] == 0);
    mxp_qparams_free(&qp);
    mxp_array_free(x);

    x = vec((double[]){ -2, -2 }, 2);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_U8, false, -1, 0, &qp), MXP_OK);
    assert_int_equal(qp.zero_points[0], 255);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 0, 0 }, 2);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);

    x = vec((double[]){ 0, 0, 0, 0 }, 4);
    mxp_dtype types[2] = { MXP_S8, MXP_U8 };
    for (int t = 0; t < 2; t++)
        for (int sym = 0; sym < 2; sym++) {
            mxp_array *d = NULL;
            assert_int_equal(mxp_calibrate_minmax(x, types[t], sym, -1, 0, &qp), MXP_OK);
            assert_true(qp.scales[0] == 1.0f);
            assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
            assert_true(at(q, 0) == qp.zero_points[0]);
            assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_OK);
            assert_true(at(d, 0) == 0.0);
            mxp_array_free(d);
            mxp_array_free(q);
            mxp_qparams_free(&qp);
        }
    mxp_array_free(x);

    /* a huge float64 range still gives a finite scale */
    int64_t n = 2;
    x = make(MXP_F64, 1, &n, (double[]){ -1e300, 1e300 });
    assert_int_equal(mxp_calibrate_minmax(x, MXP_U8, false, -1, 0, &qp), MXP_OK);
    assert_true(isfinite(qp.scales[0]) && qp.scales[0] > 0);
    mxp_qparams_free(&qp);
    mxp_array_free(x);
}

/* NaN -> zero point, +-inf and out-of-range values saturate; the zero point
 * is added in int64 (no int32 overflow with a tiny scale). */
static void test_nan_inf_saturation(void **state)
{
    (void)state;
    float s = 0.1f;
    int32_t z = 3;
    mxp_qparams qp = tensor_qp(MXP_U8, &s, &z);
    mxp_array *x = vec((double[]){ NAN, INFINITY, -INFINITY, 1e30, -1e30, 0 }, 6), *q = NULL;
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 3, 255, 0, 255, 0, 3 }, 6);
    mxp_array_free(q);
    qp.qtype = MXP_S8;
    z = 127;
    s = FLT_MIN;
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 127, 127, -128, 127, -128, 127 }, 6);
    mxp_array_free(q);
    z = -128;
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ -128, 127, -128, 127, -128, -128 }, 6);
    mxp_array_free(q);
    /* calibration ignores NaN and infinities */
    mxp_qparams c;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, -1, 0, &c), MXP_OK);
    assert_true(c.scales[0] == (float)(1e30 / 127));
    mxp_qparams_free(&c);
    mxp_array_free(x);
}

/* Scale 0.5: x = [0.25, 0.75, -0.25, -0.75] -> x/s = [0.5, 1.5, -0.5, -1.5]. */
static void test_rounding_modes(void **state)
{
    (void)state;
    float s = 0.5f;
    int32_t z = 0;
    mxp_qparams qp = tensor_qp(MXP_S8, &s, &z);
    mxp_array *x = vec((double[]){ 0.25, 0.75, -0.25, -0.75 }, 4), *q = NULL;
    struct { mxp_rounding r; double want[4]; } cases[] = {
        { MXP_ROUND_NEAREST_EVEN, { 0, 2, 0, -2 } },
        { MXP_ROUND_NEAREST_AWAY, { 1, 2, -1, -2 } },
        { MXP_ROUND_TOWARD_ZERO, { 0, 1, 0, -1 } },
        { MXP_ROUND_UP, { 1, 2, 0, -1 } },
        { MXP_ROUND_DOWN, { 0, 1, -1, -2 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mxp_convert_opts o = { .rounding = cases[c].r };
        assert_int_equal(mxp_quantize(&q, x, &qp, &o), MXP_OK);
        expect_codes(q, cases[c].want, 4);
        mxp_array_free(q);
    }
    mxp_array_free(x);

    /* stochastic: 0.3 steps -> 0 or 1, mean near 0.3, same seed same codes */
    enum { N = 4000 };
    double *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = 0.15;
    x = vec(v, N);
    free(v);
    mxp_array *q2 = NULL, *q3 = NULL;
    mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 42 };
    assert_int_equal(mxp_quantize(&q, x, &qp, &o), MXP_OK);
    assert_int_equal(mxp_quantize(&q2, x, &qp, &o), MXP_OK);
    o.seed = 43;
    assert_int_equal(mxp_quantize(&q3, x, &qp, &o), MXP_OK);
    assert_memory_equal(mxp_array_data(q), mxp_array_data(q2), N);
    assert_memory_not_equal(mxp_array_data(q), mxp_array_data(q3), N);
    double sum = 0;
    for (int i = 0; i < N; i++) {
        double c = at(q, i);
        assert_true(c == 0 || c == 1);
        sum += c;
    }
    assert_true(fabs(sum / N - 0.3) < 0.03);
    mxp_array_free(q);
    mxp_array_free(q2);
    mxp_array_free(q3);
    mxp_array_free(x);
}

/* |dequantize(quantize(x)) - x| <= scale / 2 for nearest modes. */
static void test_round_trip_bound(void **state)
{
    (void)state;
    int64_t shape[3] = { 4, 6, 8 };
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 3, shape, 0.5, 2.0, 7), MXP_OK);
    struct { mxp_dtype t; bool sym; int axis; int64_t g; } cfg[] = {
        { MXP_S8, true, -1, 0 }, { MXP_U8, false, -1, 0 }, { MXP_S8, false, 1, 0 },
        { MXP_U8, true, 2, 0 },  { MXP_U8, false, 2, 4 }, { MXP_S8, true, 0, 2 },
    };
    mxp_rounding modes[2] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_NEAREST_AWAY };
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++)
        for (int m = 0; m < 2; m++) {
            mxp_qparams qp;
            mxp_array *q = NULL, *d = NULL, *f = NULL;
            mxp_convert_opts o = { .rounding = modes[m] };
            assert_int_equal(mxp_calibrate_minmax(x, cfg[c].t, cfg[c].sym, cfg[c].axis, cfg[c].g, &qp), MXP_OK);
            assert_int_equal(mxp_quantize(&q, x, &qp, &o), MXP_OK);
            assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F64), MXP_OK);
            assert_int_equal(mxp_fake_quantize(&f, x, &qp, &o), MXP_OK);
            assert_int_equal(mxp_array_dtype(f), MXP_F32);
            double smax = 0;
            for (int64_t k = 0; k < qp.count; k++)
                smax = fmax(smax, qp.scales[k]);
            for (int64_t i = 0; i < mxp_array_size(x); i++) {
                int64_t a = cfg[c].axis < 0 ? 0 : (i / (cfg[c].axis == 0 ? 48 : cfg[c].axis == 1 ? 8 : 1)) %
                                                      shape[cfg[c].axis];
                double s = cfg[c].g ? smax : qp.scales[cfg[c].axis < 0 ? 0 : a];
                assert_true(fabs(at(d, i) - at(x, i)) <= s / 2 * (1 + 1e-6));
                assert_true(at(f, i) == (double)(float)at(d, i));
            }
            mxp_array_free(q);
            mxp_array_free(d);
            mxp_array_free(f);
            mxp_qparams_free(&qp);
        }
    mxp_array_free(x);
}

/* ---- observers ---------------------------------------------------------- */

static void observe(mxp_observer *obs, const double *v, int64_t n)
{
    mxp_array *b = vec(v, n);
    assert_int_equal(mxp_observer_update(obs, b), MXP_OK);
    mxp_array_free(b);
}

static void test_observer_minmax(void **state)
{
    (void)state;
    mxp_observer *obs = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MINMAX, MXP_U8, false, -1, NULL), MXP_OK);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_ERR_INVALID_ARGUMENT);
    observe(obs, (double[]){ -1, 2 }, 2);
    observe(obs, (double[]){ -3, 1, NAN }, 3);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    assert_true(qp.scales[0] == (float)(5.0 / 255)); /* [-3, 2] */
    assert_int_equal(qp.zero_points[0], 153);       /* round(153.0) */
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);

    /* per channel along axis 1 of [2, 2] batches */
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MINMAX, MXP_S8, true, 1, NULL), MXP_OK);
    int64_t shape[2] = { 2, 2 };
    mxp_array *b1 = make(MXP_F32, 2, shape, (double[]){ 1, -2, 0, 0 });
    mxp_array *b2 = make(MXP_F32, 2, shape, (double[]){ -4, 1, 0, 0 });
    int64_t s3[2] = { 2, 3 };
    mxp_array *b3 = make(MXP_F32, 2, s3, (double[]){ 0, 0, 0, 0, 0, 0 });
    assert_int_equal(mxp_observer_update(obs, b1), MXP_OK);
    assert_int_equal(mxp_observer_update(obs, b2), MXP_OK);
    assert_int_equal(mxp_observer_update(obs, b3), MXP_ERR_SHAPE);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    assert_int_equal(qp.count, 2);
    assert_int_equal(qp.axis, 1);
    assert_true(qp.scales[0] == (float)(4.0 / 127) && qp.scales[1] == (float)(2.0 / 127));
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);
    mxp_array_free(b1);
    mxp_array_free(b2);
    mxp_array_free(b3);
}

/* momentum 0.5: [-2, 2] then [-4, 6] -> [-3, 4]. */
static void test_observer_moving_average(void **state)
{
    (void)state;
    mxp_observer *obs = NULL;
    mxp_qparams qp;
    mxp_observer_opts o = { .momentum = 0.5 };
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MOVING_AVERAGE, MXP_S8, true, -1, &o), MXP_OK);
    observe(obs, (double[]){ -2, 2 }, 2);
    observe(obs, (double[]){ -4, 6 }, 2);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    assert_true(qp.scales[0] == (float)(4.0 / 127));
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);
    /* asymmetric u8: scale 7/255, zp = round(3 / (7/255)) = round(109.29) = 109 */
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MOVING_AVERAGE, MXP_U8, false, -1, &o), MXP_OK);
    observe(obs, (double[]){ -2, 2 }, 2);
    observe(obs, (double[]){ -4, 6 }, 2);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    assert_true(qp.scales[0] == (float)(7.0 / 255));
    assert_int_equal(qp.zero_points[0], 109);
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);
}

/* percentile 50 of |1..100| is 50 (within a bin, 100/2048). */
static void test_observer_percentile(void **state)
{
    (void)state;
    mxp_observer *obs = NULL;
    mxp_qparams qp;
    mxp_observer_opts o = { .percentile = 50 };
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_PERCENTILE, MXP_S8, true, -1, &o), MXP_OK);
    double v[100];
    for (int i = 0; i < 100; i++)
        v[i] = i + 1;
    observe(obs, v, 50);
    observe(obs, v + 50, 50); /* the range grows between batches */
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    assert_float_equal(qp.scales[0] * 127.0, 50.0, 100.0 / 2048 * 1.01);
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);
}

/* 100000 values spread over [-1, 1] and one at 10: clipping near 6-7 beats
 * both 10 (rounding error) and 1 (clipping error). */
static void test_observer_mse(void **state)
{
    (void)state;
    enum { N = 100000 };
    double *v = malloc((N + 1) * sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = -1.0 + 2.0 * (i + 0.5) / N;
    v[N] = 10.0;
    mxp_observer *obs = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MSE, MXP_S8, true, -1, NULL), MXP_OK);
    observe(obs, v, N + 1);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    double t = qp.scales[0] * 127.0;
    assert_true(t < 9.0 && t > 3.0);
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);
    free(v);
}

/* Laplace(0, 1) sample (inverse CDF) plus one value at 1000: the KL
 * threshold is far below the max. */
static void test_observer_kl(void **state)
{
    (void)state;
    enum { N = 100000 };
    double *v = malloc((N + 1) * sizeof *v);
    for (int i = 0; i < N; i++) {
        double u = (i + 0.5) / N - 0.5;
        v[i] = (u < 0 ? 1 : -1) * log(1 - 2 * fabs(u));
    }
    v[N] = 1000.0;
    mxp_observer *obs = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_KL, MXP_S8, true, -1, NULL), MXP_OK);
    observe(obs, v, N + 1);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    double t = qp.scales[0] * 127.0;
    print_message("KL threshold %g\n", t);
    assert_true(t < 500.0 && t > 5.0);
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);
    free(v);
}

/* ---- bad input ------------------------------------------------------------- */

static void test_bad_input(void **state)
{
    (void)state;
    mxp_array *x = vec((double[]){ 1, 2 }, 2), *q = NULL, *e = NULL;
    float s = 1.0f;
    int32_t z = 0;
    mxp_qparams qp = tensor_qp(MXP_S8, &s, &z);
    float bad[4] = { 0.0f, -1.0f, NAN, INFINITY };
    for (int i = 0; i < 4; i++) {
        s = bad[i];
        assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_ERR_INVALID_ARGUMENT);
        assert_null(q);
    }
    s = 1.0f;
    z = 200;
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_ERR_INVALID_ARGUMENT);
    z = 0;
    qp.count = 2;
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_ERR_INVALID_ARGUMENT);
    qp.count = 1;
    qp.axis = 1;
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_ERR_INDEX);
    qp.axis = -1;
    qp.qtype = MXP_F32;
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_ERR_UNSUPPORTED);
    qp.qtype = MXP_S8;
    assert_int_equal(mxp_quantize(&q, x, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_quantize(&q, NULL, &qp, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_quantize(NULL, x, &qp, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_dequantize(&q, x, &qp, MXP_F32), MXP_ERR_INVALID_DTYPE); /* x is float32 */

    mxp_qparams c;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, 1, 0, &c), MXP_ERR_INDEX);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, -2, 0, &c), MXP_ERR_INDEX);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S16, true, -1, 0, &c), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S8, true, 0, -1, &c), MXP_ERR_INVALID_ARGUMENT);
    int64_t zero = 0;
    assert_int_equal(mxp_array_empty(&e, MXP_F32, 1, &zero), MXP_OK);
    assert_int_equal(mxp_calibrate_minmax(e, MXP_S8, true, -1, 0, &c), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_quantize(&q, e, &qp, NULL), MXP_ERR_INVALID_ARGUMENT);

    mxp_observer *obs = NULL;
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_KL, MXP_S8, true, 0, NULL), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_observer_create(&obs, (mxp_calib_kind)99, MXP_S8, true, -1, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    mxp_observer_opts o = { .momentum = 1.5 };
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MOVING_AVERAGE, MXP_S8, true, -1, &o),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_null(obs);
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MINMAX, MXP_S8, true, 3, NULL), MXP_OK);
    assert_int_equal(mxp_observer_update(obs, x), MXP_ERR_INDEX);
    assert_int_equal(mxp_observer_update(obs, e), MXP_ERR_INVALID_ARGUMENT);
    mxp_observer_free(obs);
    mxp_observer_free(NULL);
    mxp_qparams_free(NULL);
    mxp_array_free(e);
    mxp_array_free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_symmetric_int8),
        cmocka_unit_test(test_asymmetric),
        cmocka_unit_test(test_per_channel),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_constant_and_zero),
        cmocka_unit_test(test_nan_inf_saturation),
        cmocka_unit_test(test_rounding_modes),
        cmocka_unit_test(test_round_trip_bound),
        cmocka_unit_test(test_observer_minmax),
        cmocka_unit_test(test_observer_moving_average),
        cmocka_unit_test(test_observer_percentile),
        cmocka_unit_test(test_observer_mse),
        cmocka_unit_test(test_observer_kl),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
