/* Affine quantization: hand-computed qparams and codes, per-channel and
 * grouped layouts, zero/constant tensors, the NaN/infinity policy,
 * saturation, rounding modes, round-trip error bounds, the observers
 * (min/max, moving average, percentile, MSE, KL), int4 / uint4 codes and
 * their packing (exact bytes), float8 with a scale, allocation failures
 * and bad input. */
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
#include "support/alloc_failures.h"

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

static void expect_first(const mxp_array *q, const double *want, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        assert_true(at(q, i) == want[i]);
}

static void expect_codes(const mxp_array *q, const double *want, int64_t n)
{
    assert_int_equal(mxp_array_size(q), n);
    expect_first(q, want, n);
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

/* int8 and uint8 codes into float32 (the vector path: widened to int32
 * 256 at a time, the GEMMs' dequantization kernel): each value
 * float32((code - z) s), the exact float64 product rounded once, per
 * tensor, per channel along each axis (inner runs of 1, 37 and 222
 * values, chunks that end inside them) and in groups; scales from
 * subnormal to near FLT_MAX (infinities). */
static void test_dequantize_int8_float32_exact(void **state)
{
    (void)state;
    const int64_t shape[3] = { 5, 6, 37 }, n = 5 * 6 * 37;
    double *v = malloc((size_t)n * sizeof *v), *c = malloc((size_t)n * sizeof *c);
    uint64_t r = 12345;
    for (int64_t i = 0; i < n; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (double)(r >> 40) / (double)(1ull << 24) * 200 - 100;
        c[i] = (double)(r >> 33 & 255);
    }
    mxp_array *x = make(MXP_F64, 3, shape, v);
    const mxp_dtype types[2] = { MXP_U8, MXP_S8 };
    const int axes[5] = { -1, 0, 1, 2, 1 };
    for (int t = 0; t < 2; t++)
        for (int ai = 0; ai < 5; ai++) {
            mxp_qparams qp;
            assert_int_equal(mxp_calibrate_minmax(x, types[t], false, axes[ai], ai == 4 ? 3 : 0, &qp), MXP_OK);
            for (int64_t k = 0; k < qp.count; k++) { /* scales from 2^-140 to 2^127, zero points in range */
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                qp.scales[k] = ldexpf(1.0f + (float)(r >> 41) / (float)(1u << 23), (int)(r >> 20 & 255) - 140);
                qp.zero_points[k] = (int32_t)(r >> 8 & 255) - (types[t] == MXP_S8 ? 128 : 0);
            }
            double *cv = malloc((size_t)n * sizeof *cv);
            for (int64_t i = 0; i < n; i++)
                cv[i] = types[t] == MXP_S8 ? c[i] - 128 : c[i];
            mxp_array *q = make(types[t], 3, shape, cv), *d = NULL;
            assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_OK);
            const float *got = mxp_array_data(d);
            for (int64_t i = 0; i < n; i++) {
                const int64_t o = i / (6 * 37), a = i / 37 % 6, in = i % 37;
                int64_t k = 0;
                if (ai == 4) /* groups of 3 along axis 1: [5][2][37] pairs */
                    k = (o * 2 + a / 3) * 37 + in;
                else if (axes[ai] == 0)
                    k = o;
                else if (axes[ai] == 1)
                    k = a;
                else if (axes[ai] == 2)
                    k = in;
                const float want = (float)((cv[i] - qp.zero_points[k]) * (double)qp.scales[k]);
                if (memcmp(&got[i], &want, 4))
                    fail_msg("%s axis %d%s: element %lld = %a, want %a", mxp_dtype_name(types[t]), axes[ai],
                             ai == 4 ? " groups of 3" : "", (long long)i, (double)got[i], (double)want);
            }
            mxp_array_free(d);
            mxp_array_free(q);
            free(cv);
            mxp_qparams_free(&qp);
        }
    mxp_array_free(x);
    free(v), free(c);
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
        { MXP_QINT4, true, -1, 0 }, { MXP_QUINT4, false, 2, 4 }, { MXP_QINT4, false, 1, 0 },
        { MXP_QUINT4, true, 0, 2 },
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

/* Histograms counted in pieces with the whole data's max |x| add up to the
 * histogram of one observer fed everything in one batch, and the qparams
 * from them are that observer's, bit for bit, for every histogram kind. */
static void test_observer_from_histogram_pieces(void **state)
{
    (void)state;
    enum { N = 20000, BINS = 512 };
    double *v = malloc(N * sizeof *v);
    uint64_t r = 42;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < N; i++) {
        r = r * 6364136223846793005u + 1442695040888963407u;
        double u = ((double)(r >> 11) + 0.5) * 0x1p-53;
        v[i] = (float)((u < 0.5 ? -1 : 1) * log(1 - 2 * fabs(u - 0.5)) * 0.7 + 0.3); /* Laplace, shifted; vec() is float32 */
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
    }
    v[17] = NAN;
    v[99] = -INFINITY;
    const double hmax = fmax(-lo, hi);
    const mxp_calib_kind kinds[3] = { MXP_CALIB_PERCENTILE, MXP_CALIB_MSE, MXP_CALIB_KL };
    const struct { mxp_dtype qt; bool sym; } types[4] = { { MXP_S8, true }, { MXP_U8, false }, { MXP_QINT4, true },
                                                          { MXP_E4M3, true } };
    double counts[BINS];
    memset(counts, 0, sizeof counts);
    mxp_array *p1 = vec(v, 7001), *p2 = vec(v + 7001, N - 7001), *all = vec(v, N);
    assert_int_equal(mxp_histogram_abs(p2, hmax, BINS, counts), MXP_OK);
    assert_int_equal(mxp_histogram_abs(p1, hmax, BINS, counts), MXP_OK);
    double total = 0;
    for (int b = 0; b < BINS; b++)
        total += counts[b];
    assert_true(total == N - 2); /* NaN and -inf left out */
    for (int k = 0; k < 3; k++)
        for (int t = 0; t < 4; t++) {
            mxp_observer_opts o = { .percentile = 99.9, .bins = BINS };
            mxp_observer *obs = NULL;
            mxp_qparams want, got;
            assert_int_equal(mxp_observer_create(&obs, kinds[k], types[t].qt, types[t].sym, -1, &o), MXP_OK);
            assert_int_equal(mxp_observer_update(obs, all), MXP_OK);
            assert_int_equal(mxp_observer_compute(obs, &want), MXP_OK);
            assert_int_equal(mxp_observer_qparams_from_histogram(&got, kinds[k], types[t].qt, types[t].sym, &o,
                                                                 counts, hmax, lo, hi),
                             MXP_OK);
            assert_int_equal(got.count, 1);
            assert_memory_equal(got.scales, want.scales, sizeof(float));
            assert_int_equal(got.zero_points[0], want.zero_points[0]);
            mxp_qparams_free(&want);
            mxp_qparams_free(&got);
            mxp_observer_free(obs);
        }
    /* bad input */
    mxp_qparams qp;
    mxp_observer_opts o = { .bins = BINS };
    assert_int_equal(mxp_histogram_abs(p1, -1.0, BINS, counts), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_histogram_abs(p1, hmax, 0, counts), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_histogram_abs(p1, hmax, BINS, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_observer_qparams_from_histogram(&qp, MXP_CALIB_MINMAX, MXP_S8, true, &o, counts, hmax, lo,
                                                         hi),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_observer_qparams_from_histogram(&qp, MXP_CALIB_KL, MXP_S8, true, &(mxp_observer_opts){ .bins = 100 },
                                                         counts, hmax, lo, hi),
                     MXP_ERR_INVALID_ARGUMENT); /* KL needs 256 bins for 8 bits */
    assert_int_equal(mxp_observer_qparams_from_histogram(&qp, MXP_CALIB_MSE, MXP_E4M3, false, &o, counts, hmax, lo, hi),
                     MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_observer_qparams_from_histogram(&qp, MXP_CALIB_MSE, MXP_S8, true, &o, counts, NAN, lo, hi),
                     MXP_ERR_INVALID_ARGUMENT);
    counts[3] = -1.0;
    assert_int_equal(mxp_observer_qparams_from_histogram(&qp, MXP_CALIB_MSE, MXP_S8, true, &o, counts, hmax, lo, hi),
                     MXP_ERR_INVALID_ARGUMENT);
    /* no finite value: hmax 0, the range empty -> scale 1 */
    memset(counts, 0, sizeof counts);
    assert_int_equal(mxp_observer_qparams_from_histogram(&qp, MXP_CALIB_PERCENTILE, MXP_U8, false, &o, counts, 0.0,
                                                         INFINITY, -INFINITY),
                     MXP_OK);
    assert_true(qp.scales[0] == 1.0f);
    mxp_qparams_free(&qp);
    mxp_array_free(p1);
    mxp_array_free(p2);
    mxp_array_free(all);
    free(v);
}

/* ---- int4 / uint4 ------------------------------------------------------------ */

static mxp_array *codes_of(mxp_dtype dt, int ndim, const int64_t *shape, const double *v)
{
    return make(dt, ndim, shape, v);
}

static void expect_bytes(const mxp_array *a, const uint8_t *want, int64_t n)
{
    assert_int_equal(mxp_array_dtype(a), MXP_U8);
    assert_int_equal(mxp_array_size(a), n);
    assert_true(mxp_array_flags(a) & MXP_ARRAY_C_CONTIGUOUS);
    assert_memory_equal(mxp_array_data(a), want, (size_t)n);
}

static void test_qtype_names(void **state)
{
    (void)state;
    assert_string_equal(mxp_qtype_name(MXP_QINT4), "int4");
    assert_string_equal(mxp_qtype_name(MXP_QUINT4), "uint4");
    assert_string_equal(mxp_qtype_name(MXP_S8), "int8");
    assert_string_equal(mxp_qtype_name(MXP_E4M3), "float8_e4m3fn");
    assert_false(mxp_dtype_is_valid(MXP_QINT4));
    assert_false(mxp_dtype_is_valid(MXP_QUINT4));
    assert_true((int)MXP_QINT4 >= (int)MXP_DTYPE_COUNT && (int)MXP_QUINT4 >= (int)MXP_DTYPE_COUNT);
    mxp_array *x = vec((double[]){ 1, 2 }, 2);
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, (mxp_dtype)66, true, -1, 0, &qp), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_BF16, true, -1, 0, &qp), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "int4"));
    mxp_array_free(x);
}

/* [-1, 0, 0.5, 1] int4 symmetric: scale (float)(1/7), a bit above 1/7, so
 * 0.5 / scale = 3.4999998 -> 3.  With amax 7 the scale is 1 and the ties
 * are exact: 2.5 -> 2, 3.5 -> 4 (nearest even); uint4 adds 8. */
static void test_int4_symmetric(void **state)
{
    (void)state;
    mxp_array *x = vec((double[]){ -1, 0, 0.5, 1 }, 4), *q = NULL, *d = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_QINT4, true, -1, 0, &qp), MXP_OK);
    assert_int_equal(qp.qtype, MXP_QINT4);
    assert_true(qp.scales[0] == (float)(1.0 / 7.0));
    assert_int_equal(qp.zero_points[0], 0);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(q), MXP_S8);
    expect_codes(q, (double[]){ -7, 0, 3, 7 }, 4);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);

    x = vec((double[]){ -7, 0, 2.5, 3.5, 7 }, 5);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_QINT4, true, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == 1.0f);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ -7, 0, 2, 4, 7 }, 5);
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_OK);
    assert_int_equal(mxp_array_dtype(d), MXP_F32);
    expect_codes(d, (double[]){ -7, 0, 2, 4, 7 }, 5);
    mxp_array_free(d);
    mxp_array_free(q);
    mxp_qparams_free(&qp);

    assert_int_equal(mxp_calibrate_minmax(x, MXP_QUINT4, true, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == 1.0f);
    assert_int_equal(qp.zero_points[0], 8);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(q), MXP_U8);
    expect_codes(q, (double[]){ 1, 8, 10, 12, 15 }, 5);
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F64), MXP_OK);
    expect_codes(d, (double[]){ -7, 0, 2, 4, 7 }, 5);
    mxp_array_free(d);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);
}

/* [-2, 1.75]: span 3.75 / 15 = 0.25 exactly; uint4 zp = round(0 + 8) = 8,
 * int4 zp = round(-8 + 8) = 0.  0.125 / 0.25 = 0.5 -> 0, 0.375 -> 1.5 -> 2. */
static void test_int4_asymmetric(void **state)
{
    (void)state;
    mxp_array *x = vec((double[]){ -2, -1, 0, 0.125, 0.375, 1.75 }, 6), *q = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_QUINT4, false, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == 0.25f);
    assert_int_equal(qp.zero_points[0], 8);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 0, 4, 8, 8, 10, 15 }, 6);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_QINT4, false, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == 0.25f);
    assert_int_equal(qp.zero_points[0], 0);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ -8, -4, 0, 0, 2, 7 }, 6);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);

    /* [0, 3]: the range is [0, 3], scale (float)0.2, int4 zp = qmin = -8 */
    x = vec((double[]){ 0, 1, 3 }, 3);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_QINT4, false, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == 0.2f);
    assert_int_equal(qp.zero_points[0], -8);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ -8, -3, 7 }, 3); /* 1 / 0.2f = 4.99999993 -> 5 */
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);

    /* per channel along axis 0 of [[1, -2, 0.5], [4, 0, -8]]: scales 2/7, 8/7 */
    int64_t shape[2] = { 2, 3 };
    x = make(MXP_F32, 2, shape, (double[]){ 1, -2, 0.5, 4, 0, -8 });
    assert_int_equal(mxp_calibrate_minmax(x, MXP_QINT4, true, 0, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == (float)(2.0 / 7) && qp.scales[1] == (float)(8.0 / 7));
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 3, -7, 2, 3, 0, -7 }, 6); /* 3.4999998, 1.7499999 */
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);
}

/* NaN -> zero point, +-inf and out-of-range values saturate to the 4-bit
 * range, in the fast path and the general one (other rounding modes). */
static void test_int4_saturation(void **state)
{
    (void)state;
    float s = 1.0f;
    int32_t z = 0;
    mxp_qparams qp = tensor_qp(MXP_QINT4, &s, &z);
    mxp_array *x = vec((double[]){ NAN, INFINITY, -INFINITY, 100, -100, 7.5, -8.5, 0, 6.5 }, 9), *q = NULL;
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 0, 7, -8, 7, -8, 7, -8, 0, 6 }, 9);
    mxp_array_free(q);
    mxp_convert_opts away = { .rounding = MXP_ROUND_NEAREST_AWAY };
    assert_int_equal(mxp_quantize(&q, x, &qp, &away), MXP_OK);
    assert_int_equal(mxp_array_dtype(q), MXP_S8);
    expect_codes(q, (double[]){ 0, 7, -8, 7, -8, 7, -8, 0, 7 }, 9);
    mxp_array_free(q);
    qp.qtype = MXP_QUINT4;
    z = 3;
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(q), MXP_U8);
    expect_codes(q, (double[]){ 3, 15, 0, 15, 0, 11, 0, 3, 9 }, 9);
    mxp_array_free(q);
    assert_int_equal(mxp_quantize(&q, x, &qp, &away), MXP_OK);
    expect_codes(q, (double[]){ 3, 15, 0, 15, 0, 11, 0, 3, 10 }, 9);
    mxp_array_free(q);
    /* a zero point at the edge: 1 + 7 saturates to 7 */
    qp.qtype = MXP_QINT4;
    z = 7;
    mxp_array *one = vec((double[]){ 1, -15, -16 }, 3);
    assert_int_equal(mxp_quantize(&q, one, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 7, -8, -8 }, 3);
    mxp_array_free(q);
    mxp_array_free(one);
    /* zero points outside the 4-bit range */
    int32_t bad_s4[2] = { 8, -9 }, bad_u4[2] = { 16, -1 };
    for (int i = 0; i < 2; i++) {
        qp.qtype = MXP_QINT4;
        z = bad_s4[i];
        assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_ERR_INVALID_ARGUMENT);
        assert_null(q);
        qp.qtype = MXP_QUINT4;
        z = bad_u4[i];
        assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_ERR_INVALID_ARGUMENT);
    }
    assert_non_null(strstr(mxp_last_error(), "uint4"));
    mxp_array_free(x);
}

/* (q - zp) * scale; codes outside the 4-bit range and wrong code dtypes are
 * refused. */
static void test_int4_dequantize(void **state)
{
    (void)state;
    float s = 0.5f;
    int32_t z = 1;
    mxp_qparams qp = tensor_qp(MXP_QINT4, &s, &z);
    int64_t n3 = 3, n1 = 1;
    mxp_array *q = codes_of(MXP_S8, 1, &n3, (double[]){ -8, 7, 0 }), *d = NULL;
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_OK);
    expect_codes(d, (double[]){ -4.5, 3, -0.5 }, 3);
    mxp_array_free(d);
    mxp_array_free(q);
    double bad[2] = { 8, -9 };
    for (int i = 0; i < 2; i++) {
        q = codes_of(MXP_S8, 1, &n1, &bad[i]);
        assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_ERR_INVALID_ARGUMENT);
        assert_null(d);
        mxp_array_free(q);
    }
    q = codes_of(MXP_U8, 1, &n3, (double[]){ 0, 15, 3 });
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_ERR_INVALID_DTYPE); /* int4 codes are int8 */
    qp.qtype = MXP_QUINT4;
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_OK);
    expect_codes(d, (double[]){ -0.5, 7, 1 }, 3);
    mxp_array_free(d);
    mxp_array_free(q);
    q = codes_of(MXP_U8, 1, &n1, (double[]){ 16 });
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_ERR_INVALID_ARGUMENT);
    mxp_array_free(q);
    q = codes_of(MXP_F32, 1, &n1, (double[]){ 1 });
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_ERR_INVALID_DTYPE);
    assert_null(d);
    mxp_array_free(q);

    /* fake quantization in x's dtype */
    mxp_array *x = vec((double[]){ -1, 0.3, 1 }, 3), *f = NULL;
    mxp_qparams c;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_QINT4, true, -1, 0, &c), MXP_OK);
    assert_int_equal(mxp_fake_quantize(&f, x, &c, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(f), MXP_F32);
    double sc = c.scales[0];
    expect_codes(f, (double[]){ (float)(-7 * sc), (float)(2 * sc), (float)(7 * sc) }, 3); /* 0.3 * 7 = 2.1 */
    mxp_array_free(f);
    mxp_qparams_free(&c);
    mxp_array_free(x);
}

/* [1, -1, 7] -> [0xF1, 0x07]; rows are packed independently. */
static void test_pack_int4_bytes(void **state)
{
    (void)state;
    int64_t n3 = 3;
    mxp_array *c = codes_of(MXP_S8, 1, &n3, (double[]){ 1, -1, 7 }), *p = NULL, *u = NULL;
    assert_int_equal(mxp_pack_int4(&p, c), MXP_OK);
    assert_int_equal(mxp_array_ndim(p), 1);
    expect_bytes(p, (uint8_t[]){ 0xF1, 0x07 }, 2);
    assert_int_equal(mxp_unpack_int4(&u, p, 3, MXP_S8), MXP_OK);
    assert_int_equal(mxp_array_dtype(u), MXP_S8);
    expect_codes(u, (double[]){ 1, -1, 7 }, 3);
    mxp_array_free(u);
    mxp_array_free(p);
    mxp_array_free(c);

    /* even rows */
    int64_t s24[2] = { 2, 4 };
    c = codes_of(MXP_S8, 2, s24, (double[]){ -8, 7, 0, -1, 3, -3, 5, 2 });
    assert_int_equal(mxp_pack_int4(&p, c), MXP_OK);
    assert_int_equal(mxp_array_ndim(p), 2);
    assert_true(mxp_array_shape(p)[0] == 2 && mxp_array_shape(p)[1] == 2);
    expect_bytes(p, (uint8_t[]){ 0x78, 0xF0, 0xD3, 0x25 }, 4);
    assert_int_equal(mxp_unpack_int4(&u, p, 4, MXP_S8), MXP_OK);
    assert_memory_equal(mxp_array_data(u), mxp_array_data(c), 8);
    mxp_array_free(u);
    mxp_array_free(p);
    mxp_array_free(c);

    /* odd rows: each row ends in its own byte with high nibble 0 */
    int64_t s23[2] = { 2, 3 };
    c = codes_of(MXP_S8, 2, s23, (double[]){ 1, 2, 3, -1, -2, -3 });
    assert_int_equal(mxp_pack_int4(&p, c), MXP_OK);
    assert_true(mxp_array_shape(p)[0] == 2 && mxp_array_shape(p)[1] == 2);
    expect_bytes(p, (uint8_t[]){ 0x21, 0x03, 0xEF, 0x0D }, 4);
    assert_int_equal(mxp_unpack_int4(&u, p, 3, MXP_S8), MXP_OK);
    assert_true(mxp_array_shape(u)[0] == 2 && mxp_array_shape(u)[1] == 3);
    assert_memory_equal(mxp_array_data(u), mxp_array_data(c), 6);
    mxp_array_free(u);
    /* 4 per row fits the same bytes: the last code is the zero nibble */
    assert_int_equal(mxp_unpack_int4(&u, p, 4, MXP_S8), MXP_OK);
    expect_codes(u, (double[]){ 1, 2, 3, 0, -1, -2, -3, 0 }, 8);
    mxp_array_free(u);
    /* the unused high nibble is ignored */
    ((uint8_t *)mxp_array_data(p))[1] = 0xA3;
    assert_int_equal(mxp_unpack_int4(&u, p, 3, MXP_S8), MXP_OK);
    assert_memory_equal(mxp_array_data(u), mxp_array_data(c), 6);
    mxp_array_free(u);
    mxp_array_free(p);

    /* a transposed (non-contiguous) input: [[1, -1], [2, -2], [3, -3]] */
    mxp_array *t = NULL;
    assert_int_equal(mxp_array_transpose(&t, c, NULL), MXP_OK);
    assert_int_equal(mxp_pack_int4(&p, t), MXP_OK);
    assert_true(mxp_array_shape(p)[0] == 3 && mxp_array_shape(p)[1] == 1);
    expect_bytes(p, (uint8_t[]){ 0xF1, 0xE2, 0xD3 }, 3);
    mxp_array_free(p);
    mxp_array_free(t);
    mxp_array_free(c);

    /* uint4, and its unpacking as uint8 (no sign extension) */
    int64_t n5 = 5;
    c = codes_of(MXP_U8, 1, &n5, (double[]){ 0, 15, 9, 6, 10 });
    assert_int_equal(mxp_pack_int4(&p, c), MXP_OK);
    expect_bytes(p, (uint8_t[]){ 0xF0, 0x69, 0x0A }, 3);
    assert_int_equal(mxp_unpack_int4(&u, p, 5, MXP_U8), MXP_OK);
    assert_int_equal(mxp_array_dtype(u), MXP_U8);
    expect_codes(u, (double[]){ 0, 15, 9, 6, 10 }, 5);
    mxp_array_free(u);
    assert_int_equal(mxp_unpack_int4(&u, p, 5, MXP_S8), MXP_OK);
    expect_codes(u, (double[]){ 0, -1, -7, 6, -6 }, 5);
    mxp_array_free(u);
    mxp_array_free(p);
    mxp_array_free(c);

    /* a 0-d input counts as shape [1] */
    c = codes_of(MXP_S8, 0, NULL, (double[]){ -3 });
    assert_int_equal(mxp_pack_int4(&p, c), MXP_OK);
    assert_int_equal(mxp_array_ndim(p), 1);
    expect_bytes(p, (uint8_t[]){ 0x0D }, 1);
    mxp_array_free(p);
    mxp_array_free(c);

    /* empty rows and no rows */
    int64_t s20[2] = { 2, 0 }, s05[2] = { 0, 5 };
    assert_int_equal(mxp_array_empty(&c, MXP_S8, 2, s20), MXP_OK);
    assert_int_equal(mxp_pack_int4(&p, c), MXP_OK);
    assert_true(mxp_array_shape(p)[0] == 2 && mxp_array_shape(p)[1] == 0);
    assert_int_equal(mxp_unpack_int4(&u, p, 0, MXP_S8), MXP_OK);
    assert_true(mxp_array_shape(u)[0] == 2 && mxp_array_shape(u)[1] == 0);
    mxp_array_free(u);
    mxp_array_free(p);
    mxp_array_free(c);
    assert_int_equal(mxp_array_empty(&c, MXP_U8, 2, s05), MXP_OK);
    assert_int_equal(mxp_pack_int4(&p, c), MXP_OK);
    assert_true(mxp_array_shape(p)[0] == 0 && mxp_array_shape(p)[1] == 3);
    mxp_array_free(p);
    mxp_array_free(c);
}

/* Every code in every position, even and odd rows, 3-d: unpack(pack(c)) == c. */
static void test_pack_int4_round_trip(void **state)
{
    (void)state;
    mxp_dtype dts[2] = { MXP_S8, MXP_U8 };
    int64_t shapes[3][3] = { { 2, 3, 16 }, { 3, 2, 17 }, { 1, 1, 1 } };
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 3; k++) {
            mxp_array *c = NULL, *p = NULL, *u = NULL;
            assert_int_equal(mxp_array_empty(&c, dts[d], 3, shapes[k]), MXP_OK);
            int8_t *v = mxp_array_data(c);
            int64_t n = mxp_array_size(c);
            for (int64_t i = 0; i < n; i++)
                v[i] = (int8_t)(dts[d] == MXP_S8 ? (i * 7) % 16 - 8 : (i * 5) % 16);
            assert_int_equal(mxp_pack_int4(&p, c), MXP_OK);
            assert_int_equal(mxp_array_shape(p)[2], (shapes[k][2] + 1) / 2);
            assert_int_equal(mxp_unpack_int4(&u, p, shapes[k][2], dts[d]), MXP_OK);
            assert_int_equal(mxp_array_ndim(u), 3);
            assert_memory_equal(mxp_array_shape(u), shapes[k], sizeof shapes[k]);
            assert_memory_equal(mxp_array_data(u), v, (size_t)n);
            mxp_array_free(u);
            mxp_array_free(p);
            mxp_array_free(c);
        }

    /* a [out, in] weight: per-row int4 codes packed along `in` and back */
    int64_t shape[2] = { 4, 9 };
    mxp_array *w = NULL, *q = NULL, *p = NULL, *u = NULL, *d1 = NULL, *d2 = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_array_random_normal(&w, MXP_F32, 2, shape, 0, 1, 3), MXP_OK);
    assert_int_equal(mxp_calibrate_minmax(w, MXP_QINT4, true, 0, 0, &qp), MXP_OK);
    assert_int_equal(mxp_quantize(&q, w, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_pack_int4(&p, q), MXP_OK);
    assert_int_equal(mxp_array_shape(p)[1], 5);
    assert_int_equal(mxp_unpack_int4(&u, p, 9, MXP_S8), MXP_OK);
    assert_int_equal(mxp_dequantize(&d1, q, &qp, MXP_F32), MXP_OK);
    assert_int_equal(mxp_dequantize(&d2, u, &qp, MXP_F32), MXP_OK);
    assert_memory_equal(mxp_array_data(d1), mxp_array_data(d2), 36 * sizeof(float));
    mxp_array_free(d1);
    mxp_array_free(d2);
    mxp_array_free(u);
    mxp_array_free(p);
    mxp_array_free(q);
    mxp_array_free(w);
    mxp_qparams_free(&qp);
}

static void test_pack_int4_bad_input(void **state)
{
    (void)state;
    int64_t n2 = 2, n1 = 1, s22[2] = { 2, 2 };
    mxp_array *p = NULL, *c = NULL;
    struct { mxp_dtype dt; double v; mxp_status want; } cases[] = {
        { MXP_S8, 8, MXP_ERR_INVALID_ARGUMENT }, { MXP_S8, -9, MXP_ERR_INVALID_ARGUMENT },
        { MXP_U8, 16, MXP_ERR_INVALID_ARGUMENT }, { MXP_F32, 1, MXP_ERR_INVALID_DTYPE },
        { MXP_S16, 1, MXP_ERR_INVALID_DTYPE },
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        c = codes_of(cases[k].dt, 1, &n2, (double[]){ 0, cases[k].v });
        p = (mxp_array *)c; /* must be reset to NULL */
        assert_int_equal(mxp_pack_int4(&p, c), cases[k].want);
        assert_null(p);
        mxp_array_free(c);
    }
    assert_int_equal(mxp_pack_int4(&p, NULL), MXP_ERR_INVALID_ARGUMENT);
    c = codes_of(MXP_S8, 1, &n1, (double[]){ 1 });
    assert_int_equal(mxp_pack_int4(NULL, c), MXP_ERR_INVALID_ARGUMENT);
    mxp_array_free(c);

    mxp_array *u = NULL;
    mxp_array *packed = codes_of(MXP_U8, 2, s22, (double[]){ 1, 2, 3, 4 });
    assert_int_equal(mxp_unpack_int4(&u, packed, 5, MXP_S8), MXP_ERR_SHAPE); /* needs 3 bytes */
    assert_int_equal(mxp_unpack_int4(&u, packed, 2, MXP_S8), MXP_ERR_SHAPE); /* needs 1 */
    assert_int_equal(mxp_unpack_int4(&u, packed, -1, MXP_S8), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_unpack_int4(&u, packed, 4, MXP_F32), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_unpack_int4(&u, packed, 4, MXP_QINT4), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_unpack_int4(&u, NULL, 4, MXP_S8), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_unpack_int4(NULL, packed, 4, MXP_S8), MXP_ERR_INVALID_ARGUMENT);
    assert_null(u);
    mxp_array_free(packed);
    packed = codes_of(MXP_S8, 2, s22, (double[]){ 1, 2, 3, 4 });
    assert_int_equal(mxp_unpack_int4(&u, packed, 4, MXP_S8), MXP_ERR_INVALID_DTYPE);
    mxp_array_free(packed);
    packed = codes_of(MXP_U8, 0, NULL, (double[]){ 1 });
    assert_int_equal(mxp_unpack_int4(&u, packed, 1, MXP_S8), MXP_ERR_SHAPE);
    assert_null(u);
    mxp_array_free(packed);
}

/* ---- float8 with a scale ------------------------------------------------------- */

/* amax 448 gives scale 1 for e4m3: the codes are mxp_convert's of x. */
static void test_fp8_scale_one(void **state)
{
    (void)state;
    mxp_array *x = vec((double[]){ -448, 0, 1, 2.5, 0.1, 17, 19, 300 }, 8), *q = NULL, *d = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_E4M3, true, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == 1.0f);
    assert_int_equal(qp.zero_points[0], 0);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(q), MXP_E4M3);
    uint8_t want[8];
    assert_int_equal(mxp_convert(want, MXP_E4M3, mxp_array_data(x), MXP_F32, 8, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(q), want, 8);
    /* 0.1 -> 13/128; 17 -> 16 and 19 -> 20 (ties to even); 300 -> 288 */
    expect_codes(q, (double[]){ -448, 0, 1, 2.5, 0.1015625, 16, 20, 288 }, 8);
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_OK);
    expect_codes(d, (double[]){ -448, 0, 1, 2.5, 0.1015625, 16, 20, 288 }, 8);
    mxp_array_free(d);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);

    /* e5m2: amax 57344 -> scale 1; 114688 -> scale 2 */
    x = vec((double[]){ -57344, 3, 4.5, 5.5 }, 4);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_E5M2, true, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == 1.0f);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(q), MXP_E5M2);
    expect_codes(q, (double[]){ -57344, 3, 4, 6 }, 4); /* ties to the even mantissa */
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);
    x = vec((double[]){ 114688, -7, 0 }, 3);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_E5M2, true, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == 2.0f);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 57344, -3.5, 0 }, 3);
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F64), MXP_OK);
    expect_codes(d, (double[]){ 114688, -7, 0 }, 3);
    mxp_array_free(d);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);

    /* all zero: scale 1 */
    x = vec((double[]){ 0, 0 }, 2);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_E4M3, true, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == 1.0f && qp.zero_points[0] == 0);
    mxp_qparams_free(&qp);
    /* asymmetric float8: refused with a sentence */
    assert_int_equal(mxp_calibrate_minmax(x, MXP_E4M3, false, -1, 0, &qp), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "symmetric only"));
    mxp_observer *obs = NULL;
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MINMAX, MXP_E5M2, false, -1, NULL), MXP_ERR_UNSUPPORTED);
    assert_null(obs);
    mxp_array_free(x);
}

/* x / scale rounded once by the mode, saturating: scale 2, amax 896. */
static void test_fp8_rounding_and_saturation(void **state)
{
    (void)state;
    float s = 2.0f;
    int32_t z = 0;
    mxp_qparams qp = tensor_qp(MXP_E4M3, &s, &z);
    mxp_array *x = vec((double[]){ 34, 38, 100, 1000, -1e30, INFINITY, -INFINITY, NAN, -0.0 }, 9), *q = NULL;
    /* /2: 17 -> 16, 19 -> 20, 50 -> 48 (ties to even), 500 and the rest saturate */
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_first(q, (double[]){ 16, 20, 48, 448, -448, 448, -448 }, 7);
    assert_true(isnan(at(q, 7)));
    assert_true(at(q, 8) == 0 && signbit(at(q, 8)));
    mxp_array *d = NULL;
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_OK);
    expect_first(d, (double[]){ 32, 40, 96, 896, -896, 896, -896 }, 7);
    assert_true(isnan(at(d, 7)));
    mxp_array_free(d);
    mxp_array_free(q);
    struct { mxp_rounding r; double want[3]; } cases[] = {
        { MXP_ROUND_NEAREST_AWAY, { 18, 20, 52 } },
        { MXP_ROUND_TOWARD_ZERO, { 16, 18, 48 } },
        { MXP_ROUND_UP, { 18, 20, 52 } },
        { MXP_ROUND_DOWN, { 16, 18, 48 } },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mxp_convert_opts o = { .rounding = cases[c].r }; /* overflow INF is ignored: saturation */
        assert_int_equal(mxp_quantize(&q, x, &qp, &o), MXP_OK);
        expect_first(q, cases[c].want, 3);
        assert_true(fabs(at(q, 3)) == 448 && fabs(at(q, 5)) == 448 && isnan(at(q, 7)));
        mxp_array_free(q);
    }
    /* counters pass through */
    mxp_convert_flags fl = { 0 };
    mxp_convert_opts o = { .flags = &fl };
    assert_int_equal(mxp_quantize(&q, x, &qp, &o), MXP_OK);
    assert_true(fl.inexact >= 3 && fl.overflow >= 2);
    mxp_array_free(q);
    mxp_array_free(x);

    /* stochastic: 17 -> 16 or 18, mean near 17; same seed, same codes */
    enum { N = 4000 };
    double *v = malloc(N * sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = 34;
    x = vec(v, N);
    free(v);
    mxp_array *q2 = NULL;
    mxp_convert_opts so = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 7 };
    assert_int_equal(mxp_quantize(&q, x, &qp, &so), MXP_OK);
    assert_int_equal(mxp_quantize(&q2, x, &qp, &so), MXP_OK);
    assert_memory_equal(mxp_array_data(q), mxp_array_data(q2), N);
    double sum = 0;
    for (int i = 0; i < N; i++) {
        double c = at(q, i);
        assert_true(c == 16 || c == 18);
        sum += c;
    }
    assert_true(fabs(sum / N - 17) < 0.1);
    mxp_array_free(q);
    mxp_array_free(q2);
    mxp_array_free(x);

    /* zero points must be 0; codes must be the float8 type */
    z = 1;
    x = vec((double[]){ 1 }, 1);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_ERR_INVALID_ARGUMENT);
    z = 0;
    assert_int_equal(mxp_dequantize(&q, x, &qp, MXP_F32), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    qp.qtype = MXP_E5M2;
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_ERR_INVALID_DTYPE);
    assert_null(d);
    mxp_array_free(q);
    mxp_array_free(x);
}

/* Per channel: rows [1, -3.5, 0.5] (amax 3.5 -> scale 2^-7) and
 * [448, 0, -896] (scale 2); dequantize rounds once into the out dtype. */
static void test_fp8_per_channel(void **state)
{
    (void)state;
    int64_t shape[2] = { 2, 3 };
    mxp_array *x = make(MXP_F32, 2, shape, (double[]){ 1, -3.5, 0.5, 448, 0, -896 }), *q = NULL, *d = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_E4M3, true, 0, 0, &qp), MXP_OK);
    assert_int_equal(qp.count, 2);
    assert_true(qp.scales[0] == 0x1p-7f && qp.scales[1] == 2.0f);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    expect_codes(q, (double[]){ 128, -448, 64, 224, 0, -448 }, 6);
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_BF16), MXP_OK);
    assert_int_equal(mxp_array_dtype(d), MXP_BF16);
    expect_codes(d, (double[]){ 1, -3.5, 0.5, 448, 0, -896 }, 6);
    mxp_array_free(d);
    /* a transposed view along its axis 1 gives the same codes */
    mxp_array *t = NULL, *qt = NULL;
    mxp_qparams qp2;
    assert_int_equal(mxp_array_transpose(&t, x, NULL), MXP_OK);
    assert_int_equal(mxp_calibrate_minmax(t, MXP_E4M3, true, 1, 0, &qp2), MXP_OK);
    assert_int_equal(mxp_quantize(&qt, t, &qp2, NULL), MXP_OK);
    for (int64_t r = 0; r < 2; r++)
        for (int64_t c = 0; c < 3; c++)
            assert_true(at(q, r * 3 + c) == at(qt, c * 2 + r));
    mxp_array_free(qt);
    mxp_array_free(t);
    mxp_qparams_free(&qp2);
    mxp_array_free(q);
    mxp_qparams_free(&qp);

    /* groups of 3 along axis 1 of a [2, 6] e5m2 tensor, and one float32
     * rounding of code * scale: 1.25 * 0.1f */
    float s[2] = { 0.1f, 0.5f };
    int32_t z[2] = { 0, 0 };
    mxp_qparams g = { .qtype = MXP_E5M2, .symmetric = true, .axis = 1, .group_size = 3, .count = 2,
                      .scales = s, .zero_points = z };
    int64_t s16[2] = { 1, 6 };
    mxp_array *c = make(MXP_E5M2, 2, s16, (double[]){ 1.25, -2, 0, 1.25, 6, -0.0 });
    assert_int_equal(mxp_dequantize(&d, c, &g, MXP_F32), MXP_OK);
    expect_codes(d, (double[]){ (float)(1.25 * (double)0.1f), (float)(-2 * (double)0.1f), 0, 0.625, 3, 0 }, 6);
    mxp_array_free(d);
    mxp_array_free(c);
    mxp_array_free(x);

    /* fake quantization in x's dtype */
    x = vec((double[]){ 0.3, -1, 0.05 }, 3);
    mxp_array *f = NULL;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_E4M3, true, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == (float)(1.0 / 448));
    assert_int_equal(mxp_fake_quantize(&f, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(f), MXP_F32);
    for (int64_t i = 0; i < 3; i++) {
        double want = at(x, i) / (double)qp.scales[0];
        uint8_t code = 0;
        assert_int_equal(mxp_convert(&code, MXP_E4M3, &want, MXP_F64, 1, NULL), MXP_OK);
        want = mxp_e4m3_to_f32(code);
        assert_true(at(f, i) == (double)(float)(want * (double)qp.scales[0]));
        assert_true(fabs(at(f, i) - at(x, i)) <= fabs(at(x, i)) / 16);
    }
    mxp_array_free(f);
    mxp_qparams_free(&qp);
    mxp_array_free(x);
}

/* Observers for int4 and float8: min/max, the MSE grid and KL's levels. */
static void test_observer_4bit_and_fp8(void **state)
{
    (void)state;
    mxp_observer *obs = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MINMAX, MXP_QUINT4, false, -1, NULL), MXP_OK);
    observe(obs, (double[]){ -2, 1 }, 2);
    observe(obs, (double[]){ 1.75, -1 }, 2);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    assert_int_equal(qp.qtype, MXP_QUINT4);
    assert_true(qp.scales[0] == 0.25f && qp.zero_points[0] == 8);
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);

    enum { N = 100000 };
    double *v = malloc((N + 1) * sizeof *v);
    for (int i = 0; i < N; i++)
        v[i] = -1.0 + 2.0 * (i + 0.5) / N;
    v[N] = 10.0;
    /* int4: grid T / 7, so clipping near 1 beats the outlier's cost */
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MSE, MXP_QINT4, true, -1, NULL), MXP_OK);
    observe(obs, v, N + 1);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    double t4 = qp.scales[0] * 7.0;
    print_message("int4 MSE threshold %g\n", t4);
    assert_true(t4 > 0.5 && t4 < 3.0);
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);
    /* e4m3: relative rounding error, nearly independent of T: no clipping */
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_MSE, MXP_E4M3, true, -1, NULL), MXP_OK);
    observe(obs, v, N + 1);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    double t8 = qp.scales[0] * 448.0;
    print_message("e4m3 MSE threshold %g\n", t8);
    assert_true(t8 > 8.0 && t8 <= 10.0 * (1 + 1e-6));
    assert_int_equal(qp.zero_points[0], 0);
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);

    /* KL: 8 levels for 4 bits (bins >= 16), 128 for float8 */
    for (int i = 0; i < N; i++) {
        double u = (i + 0.5) / N - 0.5;
        v[i] = (u < 0 ? 1 : -1) * log(1 - 2 * fabs(u));
    }
    v[N] = 1000.0;
    mxp_observer_opts small = { .bins = 16 };
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_KL, MXP_QINT4, true, -1, &small), MXP_OK);
    mxp_observer_free(obs);
    small.bins = 15;
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_KL, MXP_QINT4, true, -1, &small), MXP_ERR_INVALID_ARGUMENT);
    small.bins = 255;
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_KL, MXP_S8, true, -1, &small), MXP_ERR_INVALID_ARGUMENT);
    mxp_dtype kl_types[3] = { MXP_QINT4, MXP_QUINT4, MXP_E5M2 };
    double sym_max[3] = { 7, 7, 57344 };
    for (int k = 0; k < 3; k++) {
        assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_KL, kl_types[k], true, -1, NULL), MXP_OK);
        observe(obs, v, N + 1);
        assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
        double t = qp.scales[0] * sym_max[k];
        print_message("%s KL threshold %g\n", mxp_qtype_name(kl_types[k]), t);
        assert_true(t < 500.0 && t > 1.0);
        mxp_qparams_free(&qp);
        mxp_observer_free(obs);
    }
    /* percentile: the threshold over the type's symmetric maximum */
    mxp_observer_opts po = { .percentile = 50 };
    assert_int_equal(mxp_observer_create(&obs, MXP_CALIB_PERCENTILE, MXP_QUINT4, true, -1, &po), MXP_OK);
    for (int i = 0; i < 100; i++)
        v[i] = i + 1;
    observe(obs, v, 100);
    assert_int_equal(mxp_observer_compute(obs, &qp), MXP_OK);
    assert_float_equal(qp.scales[0] * 7.0, 50.0, 100.0 / 2048 * 1.01);
    assert_int_equal(qp.zero_points[0], 8);
    mxp_qparams_free(&qp);
    mxp_observer_free(obs);
    free(v);
}

/* ---- allocation failures ------------------------------------------------------- */

static mxp_status quant_workload(void)
{
    int64_t shape[2] = { 3, 5 };
    mxp_array *x = NULL, *t = NULL, *q = NULL, *p = NULL, *u = NULL, *d = NULL, *f = NULL;
    mxp_qparams qp = { 0 }, q8 = { 0 };
    mxp_observer *obs = NULL;
    mxp_convert_opts away = { .rounding = MXP_ROUND_NEAREST_AWAY };
    mxp_status st = mxp_array_random_normal(&x, MXP_F32, 2, shape, 0, 1, 5);
    if (st == MXP_OK)
        st = mxp_array_transpose(&t, x, NULL);
    if (st == MXP_OK)
        st = mxp_calibrate_minmax(x, MXP_QINT4, false, 0, 0, &qp);
    if (st == MXP_OK)
        st = mxp_quantize(&q, x, &qp, NULL);
    if (st == MXP_OK)
        st = mxp_pack_int4(&p, q);
    if (st == MXP_OK)
        st = mxp_unpack_int4(&u, p, 5, MXP_S8);
    if (st == MXP_OK)
        st = mxp_dequantize(&d, u, &qp, MXP_F16);
    mxp_array_free(q);
    mxp_array_free(p);
    mxp_array_free(d);
    q = p = d = NULL;
    if (st == MXP_OK)
        st = mxp_fake_quantize(&f, x, &qp, &away);
    mxp_array *ut = NULL;
    if (st == MXP_OK)
        st = mxp_array_transpose(&ut, u, NULL);
    if (st == MXP_OK)
        st = mxp_pack_int4(&p, ut); /* a contiguous copy first */
    mxp_array_free(ut);
    if (st == MXP_OK)
        st = mxp_calibrate_minmax(t, MXP_E4M3, true, 1, 0, &q8);
    if (st == MXP_OK)
        st = mxp_quantize(&q, t, &q8, NULL);
    if (st == MXP_OK)
        st = mxp_dequantize(&d, q, &q8, MXP_F32);
    if (st == MXP_OK)
        st = mxp_observer_create(&obs, MXP_CALIB_MSE, MXP_E5M2, true, -1, NULL);
    if (st == MXP_OK)
        st = mxp_observer_update(obs, x);
    mxp_qparams_free(&q8);
    if (st == MXP_OK)
        st = mxp_observer_compute(obs, &q8);
    mxp_observer_free(obs);
    mxp_qparams_free(&qp);
    mxp_qparams_free(&q8);
    mxp_array_free(x);
    mxp_array_free(t);
    mxp_array_free(q);
    mxp_array_free(p);
    mxp_array_free(u);
    mxp_array_free(d);
    mxp_array_free(f);
    return st;
}

static void test_int4_fp8_allocation_failures(void **state)
{
    (void)state;
    int failures = check_every_allocation_failure(quant_workload);
    print_message("int4 / float8 workload: %d allocation failures checked\n", failures);
    assert_true(failures >= 10);
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

/* The quantized types listed in order, their code dtypes and ranges. */
static void test_qtype_list(void **state)
{
    (void)state;
    static const struct {
        mxp_dtype q, code;
        int32_t lo, hi;
        const char *name;
    } want[] = {
        { MXP_S8, MXP_S8, -128, 127, "int8" },       { MXP_U8, MXP_U8, 0, 255, "uint8" },
        { MXP_QINT4, MXP_S8, -8, 7, "int4" },        { MXP_QUINT4, MXP_U8, 0, 15, "uint4" },
        { MXP_E4M3, MXP_E4M3, 0, 0, "float8_e4m3fn" }, { MXP_E5M2, MXP_E5M2, 0, 0, "float8_e5m2" },
        { MXP_E3M4, MXP_E3M4, 0, 0, "float8_e3m4" },   { MXP_E4M3IEEE, MXP_E4M3IEEE, 0, 0, "float8_e4m3" },
        { MXP_E4M3B11, MXP_E4M3B11, 0, 0, "float8_e4m3b11fnuz" },
        { MXP_E4M3FNUZ, MXP_E4M3FNUZ, 0, 0, "float8_e4m3fnuz" },
        { MXP_E5M2FNUZ, MXP_E5M2FNUZ, 0, 0, "float8_e5m2fnuz" },
        { MXP_E2M3, MXP_E2M3, 0, 0, "float6_e2m3fn" }, { MXP_E3M2, MXP_E3M2, 0, 0, "float6_e3m2fn" },
        { MXP_E2M1, MXP_E2M1, 0, 0, "float4_e2m1fn" },
    };
    enum { NQ = sizeof want / sizeof want[0] };
    for (int i = 0; i < NQ; i++) {
        int32_t lo = 1, hi = -1;
        assert_int_equal(mxp_qtype_at(i), want[i].q);
        assert_int_equal(mxp_qtype_code_dtype(want[i].q), want[i].code);
        assert_int_equal(mxp_qtype_limits(want[i].q, &lo, &hi), MXP_OK);
        assert_true(lo == want[i].lo && hi == want[i].hi);
        assert_string_equal(mxp_qtype_name(want[i].q), want[i].name);
    }
    assert_int_equal(mxp_qtype_at(NQ), MXP_DTYPE_INVALID);
    /* the sub-byte integer dtypes: codes in their own dtype, not enumerated */
    const struct { mxp_dtype q; int32_t lo, hi; } sub[] = {
        { MXP_S4, -8, 7 }, { MXP_U4, 0, 15 }, { MXP_S2, -2, 1 }, { MXP_U2, 0, 3 } };
    for (int i = 0; i < 4; i++) {
        int32_t lo = 1, hi = -1;
        assert_int_equal(mxp_qtype_code_dtype(sub[i].q), sub[i].q);
        assert_int_equal(mxp_qtype_limits(sub[i].q, &lo, &hi), MXP_OK);
        assert_true(lo == sub[i].lo && hi == sub[i].hi);
    }
    assert_int_equal(mxp_qtype_code_dtype(MXP_E8M0), MXP_DTYPE_INVALID); /* unsigned, no zero */
    assert_int_equal(mxp_qtype_code_dtype(MXP_S1), MXP_DTYPE_INVALID);
    assert_int_equal(mxp_qtype_at(-1), MXP_DTYPE_INVALID);
    assert_int_equal(mxp_qtype_code_dtype(MXP_F32), MXP_DTYPE_INVALID);
    int32_t lo, hi;
    assert_int_equal(mxp_qtype_limits(MXP_F32, &lo, &hi), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_qtype_limits((mxp_dtype)99, &lo, &hi), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_qtype_limits(MXP_S8, NULL, &hi), MXP_ERR_INVALID_ARGUMENT);
}

/* The formats added in 0.2: every float8/float6/float4 with a scale puts
 * amax on its largest finite value and rounds x / scale once (the same
 * bytes as mxp_convert of the scaled values, saturating); the sub-byte
 * integer dtypes keep codes in their own dtype, the bits above zero. */
static void test_new_format_qtypes(void **state)
{
    (void)state;
    const struct { mxp_dtype q; double max; } fl[] = {
        { MXP_E3M4, 15.5 }, { MXP_E4M3IEEE, 240 }, { MXP_E4M3B11, 30 }, { MXP_E4M3FNUZ, 240 },
        { MXP_E5M2FNUZ, 57344 }, { MXP_E2M3, 7.5 }, { MXP_E3M2, 28 }, { MXP_E2M1, 6 } };
    for (int i = 0; i < 8; i++) {
        /* amax = 4 * max: scale 4 exactly, so the scaled values are exact */
        const double m = fl[i].max;
        double v[8] = { -4 * m, 4 * m, 0, 1, -2.5, 0.3 * m, 1.1 * m, m / 7 };
        mxp_array *x = make(MXP_F64, 1, (const int64_t[]){ 8 }, v), *q = NULL, *d = NULL;
        mxp_qparams qp;
        assert_int_equal(mxp_calibrate_minmax(x, fl[i].q, true, -1, 0, &qp), MXP_OK);
        assert_true(qp.scales[0] == 4.0f && qp.zero_points[0] == 0);
        assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
        assert_int_equal(mxp_array_dtype(q), fl[i].q);
        double scaled[8];
        uint8_t want[8];
        for (int k = 0; k < 8; k++)
            scaled[k] = v[k] / 4;
        const mxp_convert_opts sat = { .overflow = MXP_OVERFLOW_SATURATE };
        assert_int_equal(mxp_convert(want, fl[i].q, scaled, MXP_F64, 8, &sat), MXP_OK);
        assert_memory_equal(mxp_array_data(q), want, 8);
        assert_true(at(q, 0) == -m && at(q, 1) == m && at(q, 2) == 0);
        /* dequantize: code x scale, exact */
        assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F64), MXP_OK);
        for (int k = 0; k < 8; k++)
            assert_true(at(d, k) == at(q, k) * 4);
        mxp_array_free(d);
        mxp_array_free(q);
        /* stochastic rounding: reproducible by seed */
        mxp_convert_opts so = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 11 };
        mxp_array *q2 = NULL;
        assert_int_equal(mxp_quantize(&q, x, &qp, &so), MXP_OK);
        assert_int_equal(mxp_quantize(&q2, x, &qp, &so), MXP_OK);
        assert_memory_equal(mxp_array_data(q), mxp_array_data(q2), 8);
        mxp_array_free(q);
        mxp_array_free(q2);
        assert_int_equal(mxp_calibrate_minmax(x, fl[i].q, false, -1, 0, &(mxp_qparams){ 0 }), MXP_ERR_UNSUPPORTED);
        mxp_qparams_free(&qp);
        mxp_array_free(x);
    }
    /* float4 by hand: amax 12 -> scale 2; 3 -> 1.5, 5 -> 2.5 -> 2 (even), 9 -> 4.5 -> 4, 11 -> 5.5 -> 6 */
    mxp_array *x = vec((double[]){ 12, 3, 5, 9, 11, -0.4 }, 6), *q = NULL;
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(x, MXP_E2M1, true, -1, 0, &qp), MXP_OK);
    assert_true(qp.scales[0] == 2.0f);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(q), ((const uint8_t[]){ 0x7, 0x3, 0x4, 0x6, 0x7, 0x8 }), 6);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);

    /* int4 / int2 dtypes: symmetric amax 14 -> scale 2 (int4), 3 (int2: amax / 1) */
    x = vec((double[]){ -14, 14, 3, -5, 0, -16, 100, 1 }, 8);
    /* int4: -7, 7, 2 (1.5 -> 2), -2 (-2.5 -> -2), 0, -8, 7 (saturated), 0 (0.5 -> 0) */
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S4, true, -1, 0, &qp), MXP_OK);
    qp.scales[0] = 2.0f; /* a round scale for hand-computed codes */
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(q), MXP_S4);
    assert_memory_equal(mxp_array_data(q), ((const uint8_t[]){ 0x9, 0x7, 0x2, 0xe, 0x0, 0x8, 0x7, 0x0 }), 8);
    mxp_array *d = NULL;
    assert_int_equal(mxp_dequantize(&d, q, &qp, MXP_F32), MXP_OK);
    expect_codes(d, (double[]){ -14, 14, 4, -4, 0, -16, 14, 0 }, 8);
    mxp_array_free(d);
    mxp_array *into = NULL; /* quantize_into an int4 array: the same bytes */
    assert_int_equal(mxp_array_zeros(&into, MXP_S4, 1, (const int64_t[]){ 8 }), MXP_OK);
    assert_int_equal(mxp_quantize_into(into, x, &qp, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(into), mxp_array_data(q), 8);
    mxp_array_free(into);
    mxp_array_free(q);
    qp.qtype = MXP_S2; /* [-2, 1]: -7 -> -2, 7 -> 1, 1.5 -> 2 -> 1, -2.5 -> -2 */
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(q), ((const uint8_t[]){ 0x2, 0x1, 0x1, 0x2, 0x0, 0x2, 0x1, 0x0 }), 8);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    /* uint4 asymmetric: [-14, 100] over 15 steps, zero point from the range */
    assert_int_equal(mxp_calibrate_minmax(x, MXP_U4, false, -1, 0, &qp), MXP_OK);
    assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(q), MXP_U4);
    assert_true(at(q, 6) == 15 && at(q, 5) == 0);
    for (int k = 0; k < 8; k++)
        assert_true(((const uint8_t *)mxp_array_data(q))[k] <= 15);
    mxp_array_free(q);
    mxp_qparams_free(&qp);
    mxp_array_free(x);
    /* 64 contiguous float32 (the SIMD path): int4 dtype codes are the
     * int8-held int4 codes' low nibbles, per tensor and per channel */
    double big[64];
    for (int k = 0; k < 64; k++)
        big[k] = (k * 37 % 64 - 31.5) * 0.37;
    x = make(MXP_F32, 2, (const int64_t[]){ 4, 16 }, big);
    for (int axis = -1; axis <= 1; axis += 2) {
        mxp_qparams q4;
        mxp_array *a = NULL;
        assert_int_equal(mxp_calibrate_minmax(x, MXP_S4, true, axis, 0, &qp), MXP_OK);
        assert_int_equal(mxp_calibrate_minmax(x, MXP_QINT4, true, axis, 0, &q4), MXP_OK);
        assert_int_equal(mxp_quantize(&q, x, &qp, NULL), MXP_OK);
        assert_int_equal(mxp_quantize(&a, x, &q4, NULL), MXP_OK);
        for (int k = 0; k < 64; k++)
            assert_int_equal(((const uint8_t *)mxp_array_data(q))[k], ((const uint8_t *)mxp_array_data(a))[k] & 15);
        mxp_array_free(a);
        mxp_array_free(q);
        mxp_qparams_free(&qp);
        mxp_qparams_free(&q4);
    }
    mxp_array_free(x);
    /* e8m0 and int1 are no quantized types */
    x = vec((double[]){ 1, 2 }, 2);
    assert_int_equal(mxp_calibrate_minmax(x, MXP_E8M0, true, -1, 0, &qp), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "quantized type float8_e8m0fnu is not supported"));
    assert_int_equal(mxp_calibrate_minmax(x, MXP_S1, true, -1, 0, &qp), MXP_ERR_UNSUPPORTED);
    mxp_array_free(x);
}

/* ---- mxp_quantize_rows ---------------------------------------------------- */

/* The reference: y = x * col_scale in float32 (x widened), then calibrate
 * axis 0 and quantize; mxp_quantize_rows must give its bytes exactly. */
static void expect_rows_as_reference(const mxp_array *x, const float *col_scale, mxp_dtype qt, bool symmetric)
{
    const int64_t rows = mxp_array_shape(x)[0], cols = mxp_array_shape(x)[1], shape[2] = { rows, cols };
    mxp_array *xf = NULL, *y = NULL, *want = NULL, *got = NULL;
    assert_int_equal(mxp_array_astype(&xf, x, MXP_F32, NULL), MXP_OK);
    assert_int_equal(mxp_array_empty(&y, MXP_F32, 2, shape), MXP_OK);
    const float *xv = mxp_array_data(xf);
    float *yv = mxp_array_data(y);
    for (int64_t i = 0; i < rows * cols; i++)
        yv[i] = col_scale ? xv[i] * col_scale[i % cols] : xv[i];
    mxp_qparams qp;
    assert_int_equal(mxp_calibrate_minmax(y, qt, symmetric, 0, 0, &qp), MXP_OK);
    assert_int_equal(mxp_quantize(&want, y, &qp, NULL), MXP_OK);
    assert_int_equal(mxp_array_empty(&got, mxp_qtype_code_dtype(qt), 2, shape), MXP_OK);
    float *scales = malloc((size_t)rows * sizeof *scales + 1);
    int32_t *zps = malloc((size_t)rows * sizeof *zps + 1);
    assert_int_equal(mxp_quantize_rows(got, scales, zps, x, col_scale, qt, symmetric), MXP_OK);
    assert_memory_equal(mxp_array_data(got), mxp_array_data(want), (size_t)(rows * cols));
    for (int64_t r = 0; r < rows; r++) {
        assert_true(scales[r] == qp.scales[r]);
        assert_int_equal(zps[r], qp.zero_points[r]);
    }
    free(scales);
    free(zps);
    mxp_qparams_free(&qp);
    mxp_array_free(xf);
    mxp_array_free(y);
    mxp_array_free(want);
    mxp_array_free(got);
}

static void test_quantize_rows_is_calibrate_then_quantize(void **state)
{
    (void)state;
    enum { R = 41, C = 300 };
    const int64_t shape[2] = { R, C };
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 2, shape, 0.5, 3.0, 7), MXP_OK);
    float *v = mxp_array_data(x);
    for (int k = 0; k < C; k++) {
        v[0 * C + k] = 0.0f;                 /* a row of zeros: scale 1 */
        v[1 * C + k] = 2.5f;                 /* a constant row */
        v[2 * C + k] = k == 7 ? -3.0f : NAN; /* one finite value, the rest NaN */
    }
    v[3 * C + 5] = INFINITY; /* ignored by the range, saturated in the codes */
    v[4 * C + 9] = -INFINITY;
    v[5 * C + 1] = 1e-40f; /* a subnormal */
    float s[C];
    for (int k = 0; k < C; k++) /* SmoothQuant-like factors, some tiny enough to make subnormal products */
        s[k] = k % 37 == 0 ? 1e-39f : (float)(0.25 + (k % 11) * 0.3);
    const mxp_dtype qts[2] = { MXP_U8, MXP_S8 };
    for (int q = 0; q < 2; q++)
        for (int sym = 0; sym < 2; sym++) {
            expect_rows_as_reference(x, NULL, qts[q], sym);
            expect_rows_as_reference(x, s, qts[q], sym);
        }
    /* bfloat16 and float16 rows widen exactly first */
    mxp_array *b = NULL, *h = NULL;
    assert_int_equal(mxp_array_astype(&b, x, MXP_BF16, NULL), MXP_OK);
    assert_int_equal(mxp_array_astype(&h, x, MXP_F16, NULL), MXP_OK);
    expect_rows_as_reference(b, NULL, MXP_U8, false);
    expect_rows_as_reference(b, s, MXP_U8, false);
    expect_rows_as_reference(h, s, MXP_S8, true);
    mxp_array_free(b);
    mxp_array_free(h);
    mxp_array_free(x);
}

/* Rows split over two threads (MiniLM's 1056 tokens x 384) give the bytes
 * of one thread, and both the reference's. */
static void test_quantize_rows_threads(void **state)
{
    (void)state;
    const int64_t shape[2] = { 1056, 384 };
    mxp_array *x = NULL, *c1 = NULL, *c2 = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 2, shape, 0, 1, 11), MXP_OK);
    assert_int_equal(mxp_array_empty(&c1, MXP_U8, 2, shape), MXP_OK);
    assert_int_equal(mxp_array_empty(&c2, MXP_U8, 2, shape), MXP_OK);
    static float s1[1056], s2[1056], cs[384];
    static int32_t z1[1056], z2[1056];
    for (int k = 0; k < 384; k++)
        cs[k] = 1.0f / (float)(1 + k % 5);
    const int saved = mxp_get_num_threads();
    assert_int_equal(mxp_set_num_threads(1), MXP_OK);
    assert_int_equal(mxp_quantize_rows(c1, s1, z1, x, cs, MXP_U8, false), MXP_OK);
    assert_int_equal(mxp_set_num_threads(2), MXP_OK);
    assert_int_equal(mxp_quantize_rows(c2, s2, z2, x, cs, MXP_U8, false), MXP_OK);
    assert_memory_equal(mxp_array_data(c1), mxp_array_data(c2), 1056 * 384);
    assert_memory_equal(s1, s2, sizeof s1);
    assert_memory_equal(z1, z2, sizeof z1);
    expect_rows_as_reference(x, cs, MXP_U8, false);
    assert_int_equal(mxp_set_num_threads(saved), MXP_OK);
    mxp_array_free(x);
    mxp_array_free(c1);
    mxp_array_free(c2);
}

static void test_quantize_rows_bad_input(void **state)
{
    (void)state;
    const int64_t shape[2] = { 2, 3 }, empty[2] = { 0, 3 }, other[2] = { 3, 2 };
    mxp_array *x = NULL, *codes = NULL, *s8 = NULL, *wrong = NULL, *x0 = NULL, *c0 = NULL, *xi = NULL;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 2, shape, 0, 1, 1), MXP_OK);
    assert_int_equal(mxp_array_empty(&codes, MXP_U8, 2, shape), MXP_OK);
    assert_int_equal(mxp_array_empty(&s8, MXP_S8, 2, shape), MXP_OK);
    assert_int_equal(mxp_array_empty(&wrong, MXP_U8, 2, other), MXP_OK);
    assert_int_equal(mxp_array_empty(&x0, MXP_F32, 2, empty), MXP_OK);
    assert_int_equal(mxp_array_empty(&c0, MXP_U8, 2, empty), MXP_OK);
    assert_int_equal(mxp_array_empty(&xi, MXP_S32, 2, shape), MXP_OK);
    float sc[2];
    int32_t zp[2];
    memset(mxp_array_data(codes), 0x5a, 6);
    assert_int_equal(mxp_quantize_rows(codes, sc, zp, x, NULL, MXP_QINT4, true), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "only int8 and uint8"));
    assert_int_equal(mxp_quantize_rows(codes, sc, zp, x, NULL, MXP_E4M3, true), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_quantize_rows(codes, sc, zp, x, NULL, MXP_F32, true), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_quantize_rows(codes, sc, zp, xi, NULL, MXP_U8, false), MXP_ERR_INVALID_DTYPE);
    assert_non_null(strstr(mxp_last_error(), "float32, bfloat16 or float16 only"));
    assert_int_equal(mxp_quantize_rows(s8, sc, zp, x, NULL, MXP_U8, false), MXP_ERR_INVALID_DTYPE);
    assert_non_null(strstr(mxp_last_error(), "uint8 codes are uint8"));
    assert_int_equal(mxp_quantize_rows(wrong, sc, zp, x, NULL, MXP_U8, false), MXP_ERR_SHAPE);
    assert_int_equal(mxp_quantize_rows(codes, NULL, zp, x, NULL, MXP_U8, false), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "scales is NULL"));
    assert_int_equal(mxp_quantize_rows(codes, sc, NULL, x, NULL, MXP_U8, false), MXP_ERR_INVALID_ARGUMENT);
    const unsigned char *cb = mxp_array_data(codes);
    for (int i = 0; i < 6; i++) /* nothing written on error */
        assert_int_equal(cb[i], 0x5a);
    /* no rows: nothing to write, NULL scales allowed */
    assert_int_equal(mxp_quantize_rows(c0, NULL, NULL, x0, NULL, MXP_U8, false), MXP_OK);
    /* no columns: each row calibration's pair for [0, 0] */
    const int64_t nocols[2] = { 2, 0 };
    mxp_array *xn = NULL, *cn = NULL;
    assert_int_equal(mxp_array_empty(&xn, MXP_F32, 2, nocols), MXP_OK);
    assert_int_equal(mxp_array_empty(&cn, MXP_U8, 2, nocols), MXP_OK);
    sc[0] = sc[1] = 0.0f;
    zp[0] = zp[1] = -1;
    assert_int_equal(mxp_quantize_rows(cn, sc, zp, xn, NULL, MXP_U8, false), MXP_OK);
    assert_true(sc[0] == 1.0f && sc[1] == 1.0f && zp[0] == 0 && zp[1] == 0);
    mxp_array_free(xn);
    mxp_array_free(cn);
    mxp_array *all[] = { x, codes, s8, wrong, x0, c0, xi };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxp_array_free(all[i]);
}

static mxp_status rows_workload(void)
{
    const int64_t shape[2] = { 4, 40 };
    mxp_array *x = NULL, *b = NULL, *codes = NULL;
    float cs[40], sc[4];
    int32_t zp[4];
    for (int k = 0; k < 40; k++)
        cs[k] = 0.5f + (float)k;
    mxp_status st = mxp_array_random_normal(&x, MXP_F32, 2, shape, 0, 1, 3);
    if (st == MXP_OK)
        st = mxp_array_astype(&b, x, MXP_BF16, NULL);
    if (st == MXP_OK)
        st = mxp_array_empty(&codes, MXP_U8, 2, shape);
    if (st == MXP_OK)
        st = mxp_quantize_rows(codes, sc, zp, b, cs, MXP_U8, false);
    mxp_array_free(x);
    mxp_array_free(b);
    mxp_array_free(codes);
    return st;
}

static void test_quantize_rows_allocation_failures(void **state)
{
    (void)state;
    assert_true(check_every_allocation_failure(rows_workload) >= 3);
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
        cmocka_unit_test(test_observer_from_histogram_pieces),
        cmocka_unit_test(test_qtype_names),
        cmocka_unit_test(test_int4_symmetric),
        cmocka_unit_test(test_int4_asymmetric),
        cmocka_unit_test(test_int4_saturation),
        cmocka_unit_test(test_int4_dequantize),
        cmocka_unit_test(test_dequantize_int8_float32_exact),
        cmocka_unit_test(test_pack_int4_bytes),
        cmocka_unit_test(test_pack_int4_round_trip),
        cmocka_unit_test(test_pack_int4_bad_input),
        cmocka_unit_test(test_fp8_scale_one),
        cmocka_unit_test(test_fp8_rounding_and_saturation),
        cmocka_unit_test(test_fp8_per_channel),
        cmocka_unit_test(test_observer_4bit_and_fp8),
        cmocka_unit_test(test_int4_fp8_allocation_failures),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_qtype_list),
        cmocka_unit_test(test_new_format_qtypes),
        cmocka_unit_test(test_quantize_rows_is_calibrate_then_quantize),
        cmocka_unit_test(test_quantize_rows_threads),
        cmocka_unit_test(test_quantize_rows_bad_input),
        cmocka_unit_test(test_quantize_rows_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
