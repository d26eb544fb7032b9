/* Quantized tensors, mxp_qmatmul and mxp_qlinear: hand-computed codes and
 * products, the layer against a reference of the same integer arithmetic
 * (exact int64 sums, the float32 combined scale, the product in long
 * double: exact) at every ISA level the run may use, N-d inputs, empty
 * inputs, allocation failures and bad input. */
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

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

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

/* Element i (C order of a contiguous array) as a double. */
static double at(const mxp_array *a, int64_t i)
{
    double d = 0.0;
    const char *p = (const char *)mxp_array_data(a) + (size_t)i * mxp_array_itemsize(a);
    assert_int_equal(mxp_convert(&d, MXP_F64, p, mxp_array_dtype(a), 1, NULL), MXP_OK);
    return d;
}

static void expect_error(mxp_status got, mxp_status want, const char *word)
{
    assert_int_equal(got, want);
    const char *msg = mxp_last_error();
    if (!msg || !strstr(msg, word))
        fail_msg("error \"%s\" does not mention \"%s\"", msg ? msg : "(none)", word);
}

static void test_quantize_tensor_codes_and_accessors(void **state)
{
    (void)state;
    const int64_t n4 = 4;
    mxp_array *x = make(MXP_F32, 1, &n4, (const double[]){ -1, 0, 0.5, 1 });
    mxp_qtensor *qt = NULL;
    assert_int_equal(mxp_quantize_tensor(&qt, x, NULL, MXP_S8, -1), MXP_OK);
    const mxp_qparams *qp = mxp_qtensor_qparams(qt);
    assert_int_equal(qp->qtype, MXP_S8);
    assert_true(qp->symmetric);
    assert_int_equal(qp->axis, -1);
    assert_int_equal(qp->count, 1);
    assert_true(qp->scales[0] == (float)(1.0 / 127));
    assert_int_equal(qp->zero_points[0], 0);
    const mxp_array *c = mxp_qtensor_codes(qt);
    assert_int_equal(mxp_array_dtype(c), MXP_S8);
    const double want[4] = { -127, 0, 64, 127 };
    for (int i = 0; i < 4; i++)
        assert_true(at(c, i) == want[i]);
    mxp_array *back = NULL;
    assert_int_equal(mxp_qtensor_dequantize(&back, qt, MXP_F64), MXP_OK);
    assert_true(at(back, 2) == 64 * (double)(float)(1.0 / 127));
    mxp_array_free(back);
    mxp_qtensor_free(qt);

    /* uint8 calibrates asymmetric: [0, 2.55] -> scale 0.01, zp 0; [-1, 3] -> 4/255, zp 64 */
    const int64_t n2 = 2;
    mxp_array *y = make(MXP_F32, 1, &n2, (const double[]){ -1, 3 });
    assert_int_equal(mxp_quantize_tensor(&qt, y, NULL, MXP_U8, -1), MXP_OK);
    assert_false(mxp_qtensor_qparams(qt)->symmetric);
    assert_true(mxp_qtensor_qparams(qt)->scales[0] == (float)(4.0 / 255));
    assert_int_equal(mxp_qtensor_qparams(qt)->zero_points[0], 64);
    assert_true(at(mxp_qtensor_codes(qt), 0) == 0 && at(mxp_qtensor_codes(qt), 1) == 255);
    mxp_qtensor_free(qt);
    mxp_array_free(y);

    /* per output channel: a [2, 3] weight, axis 0, one scale per row */
    const int64_t s23[2] = { 2, 3 };
    mxp_array *w = make(MXP_F32, 2, s23, (const double[]){ 1, -0.5, 0.25, 2, 4, -8 });
    assert_int_equal(mxp_quantize_tensor(&qt, w, NULL, MXP_S8, 0), MXP_OK);
    qp = mxp_qtensor_qparams(qt);
    assert_int_equal(qp->axis, 0);
    assert_int_equal(qp->count, 2);
    assert_true(qp->scales[0] == (float)(1.0 / 127) && qp->scales[1] == (float)(8.0 / 127));
    const double wcodes[6] = { 127, -64, 32, 32, 64, -127 }; /* 0.5 * 127 = 63.5 -> 64 with the float32 scale */
    for (int i = 0; i < 6; i++)
        assert_true(at(mxp_qtensor_codes(qt), i) == wcodes[i]);

    /* given parameters are copied: changing the caller's afterwards changes nothing */
    float scale = 0.5f;
    int32_t zp = 3;
    mxp_qparams mine = { MXP_U8, false, -1, 0, 1, &scale, &zp };
    mxp_qtensor *q2 = NULL;
    assert_int_equal(mxp_quantize_tensor(&q2, x, &mine, 0, -1), MXP_OK);
    scale = 4.0f;
    zp = 0;
    assert_true(mxp_qtensor_qparams(q2)->scales[0] == 0.5f && mxp_qtensor_qparams(q2)->zero_points[0] == 3);
    const double want2[4] = { 1, 3, 4, 5 }; /* -2 + 3, 0 + 3, round(1) + 3, 2 + 3 */
    for (int i = 0; i < 4; i++)
        assert_true(at(mxp_qtensor_codes(q2), i) == want2[i]);
    mxp_qtensor_free(q2);
    scale = 0.5f;
    expect_error(mxp_quantize_tensor(&q2, x, &mine, MXP_S8, -1), MXP_ERR_INVALID_ARGUMENT, "qtype");
    assert_null(q2);
    expect_error(mxp_quantize_tensor(&q2, x, &mine, 0, 0), MXP_ERR_INVALID_ARGUMENT, "axis");
    expect_error(mxp_quantize_tensor(&q2, x, NULL, MXP_S8, 1), MXP_ERR_INDEX, "axis 1");
    expect_error(mxp_quantize_tensor(&q2, NULL, NULL, MXP_S8, -1), MXP_ERR_INVALID_ARGUMENT, "NULL");
    expect_error(mxp_quantize_tensor(NULL, x, NULL, MXP_S8, -1), MXP_ERR_INVALID_ARGUMENT, "NULL");
    expect_error(mxp_quantize_tensor(&q2, x, NULL, MXP_F32, -1), MXP_ERR_UNSUPPORTED, "");
    assert_null(q2);
    mxp_qtensor_free(NULL);
    assert_null(mxp_qtensor_codes(NULL));
    assert_null(mxp_qtensor_qparams(NULL));
    expect_error(mxp_qtensor_dequantize(&back, NULL, MXP_F32), MXP_ERR_INVALID_ARGUMENT, "NULL");
    mxp_qtensor_free(qt);
    mxp_array_free(w);
    mxp_array_free(x);
}

static void test_qtensor_create_keeps_a_view(void **state)
{
    (void)state;
    const int64_t s23[2] = { 2, 3 };
    mxp_array *codes = make(MXP_S8, 2, s23, (const double[]){ 1, -2, 3, -4, 5, -6 });
    float scales[2] = { 0.5f, 0.25f };
    int32_t zps[2] = { 0, 0 };
    mxp_qparams qp = { MXP_S8, true, 0, 0, 2, scales, zps };
    mxp_qtensor *qt = NULL;
    assert_int_equal(mxp_qtensor_create(&qt, codes, &qp), MXP_OK);
    mxp_array_free(codes); /* the qtensor's view keeps the memory */
    mxp_array *d = NULL;
    assert_int_equal(mxp_qtensor_dequantize(&d, qt, MXP_F32), MXP_OK);
    const double want[6] = { 0.5, -1, 1.5, -1, 1.25, -1.5 };
    for (int i = 0; i < 6; i++)
        assert_true(at(d, i) == want[i]);
    mxp_array_free(d);
    mxp_qtensor_free(qt);

    codes = make(MXP_S8, 2, s23, (const double[]){ 1, -2, 3, -4, 5, -9 });
    qp.qtype = MXP_QINT4;
    expect_error(mxp_qtensor_create(&qt, codes, &qp), MXP_ERR_INVALID_ARGUMENT, "-9");
    assert_null(qt);
    qp.qtype = MXP_U8;
    expect_error(mxp_qtensor_create(&qt, codes, &qp), MXP_ERR_INVALID_DTYPE, "uint8");
    qp.qtype = MXP_S8;
    qp.axis = 1; /* 3 pairs needed, 2 given */
    expect_error(mxp_qtensor_create(&qt, codes, &qp), MXP_ERR_INVALID_ARGUMENT, "pairs");
    qp.axis = 2;
    expect_error(mxp_qtensor_create(&qt, codes, &qp), MXP_ERR_INDEX, "axis");
    qp.axis = 0;
    scales[1] = 0.0f;
    expect_error(mxp_qtensor_create(&qt, codes, &qp), MXP_ERR_INVALID_ARGUMENT, "scale");
    expect_error(mxp_qtensor_create(&qt, codes, NULL), MXP_ERR_INVALID_ARGUMENT, "NULL");
    expect_error(mxp_qtensor_create(&qt, NULL, &qp), MXP_ERR_INVALID_ARGUMENT, "NULL");
    assert_null(qt);
    mxp_array_free(codes);
}

/* mxp_qmatmul by hand: a uint8 [2, 3] with zero point 10, b int8 [3, 2]
 * per column. */
static void test_qmatmul_by_hand(void **state)
{
    (void)state;
    const int64_t s23[2] = { 2, 3 }, s32[2] = { 3, 2 };
    mxp_array *ac = make(MXP_U8, 2, s23, (const double[]){ 10, 20, 0, 255, 10, 11 });
    mxp_array *bc = make(MXP_S8, 2, s32, (const double[]){ 1, -1, 2, 3, -128, 127 });
    float sa = 0.5f, sb[2] = { 0.25f, 2.0f }, so = 3.0f;
    int32_t za = 10, zb[2] = { 0, 0 }, zo = 100;
    mxp_qparams pa = { MXP_U8, false, -1, 0, 1, &sa, &za }, pb = { MXP_S8, true, 1, 0, 2, sb, zb };
    /* b per tensor with zero point 3: acc = (a - za)(b - 3), here column 0: [0, 10, -10] . [-2, -1, -131] */
    {
        int32_t z3 = 3;
        mxp_qparams pt = { MXP_S8, false, -1, 0, 1, &sb[0], &z3 };
        mxp_qtensor *qa3 = NULL, *qb3 = NULL;
        mxp_array *c3 = NULL;
        assert_int_equal(mxp_qtensor_create(&qa3, ac, &pa), MXP_OK);
        assert_int_equal(mxp_qtensor_create(&qb3, bc, &pt), MXP_OK);
        assert_int_equal(mxp_qmatmul(&c3, qa3, qb3, MXP_S32, NULL), MXP_OK);
        const double acc3[4] = { 0 * -2 + 10 * -1 + -10 * -131, 0 * -4 + 10 * 0 + -10 * 124, 245 * -2 + 1 * -131,
                                 245 * -4 + 1 * 124 };
        for (int i = 0; i < 4; i++)
            assert_true(at(c3, i) == acc3[i]);
        mxp_array_free(c3);
        mxp_qtensor_free(qa3);
        mxp_qtensor_free(qb3);
    }
    mxp_qtensor *qa = NULL, *qb = NULL;
    assert_int_equal(mxp_qtensor_create(&qa, ac, &pa), MXP_OK);
    assert_int_equal(mxp_qtensor_create(&qb, bc, &pb), MXP_OK);
    /* a - za = [[0, 10, -10], [245, 0, 1]] */
    const double acc[4] = { 0 * 1 + 10 * 2 + -10 * -128, 0 * -1 + 10 * 3 + -10 * 127, 245 * 1 + 1 * -128,
                            245 * -1 + 1 * 127 };
    mxp_array *c = NULL;
    assert_int_equal(mxp_qmatmul(&c, qa, qb, MXP_S32, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(c), MXP_S32);
    for (int i = 0; i < 4; i++)
        assert_true(at(c, i) == acc[i]);
    mxp_array_free(c);
    assert_int_equal(mxp_qmatmul(&c, qa, qb, MXP_F32, NULL), MXP_OK);
    for (int i = 0; i < 4; i++)
        assert_true(at(c, i) == acc[i] * sa * sb[i % 2]);
    mxp_array_free(c);
    /* requantized: round(acc * sa * sb_j / so) + zo, saturated to [0, 255] */
    mxp_qparams po = { MXP_U8, false, -1, 0, 1, &so, &zo };
    assert_int_equal(mxp_qmatmul(&c, qa, qb, MXP_U8, &po), MXP_OK);
    for (int i = 0; i < 4; i++) {
        const float cs = (float)((double)sa * sb[i % 2] / so); /* the combined scale, rounded once */
        const double t = nearbyint(acc[i] * (double)cs) + zo;
        assert_true(at(c, i) == fmin(255, fmax(0, t)));
    }
    mxp_array_free(c);

    /* bad input */
    expect_error(mxp_qmatmul(&c, qa, qb, MXP_U8, NULL), MXP_ERR_INVALID_ARGUMENT, "out_params");
    expect_error(mxp_qmatmul(&c, qa, qb, MXP_S8, &po), MXP_ERR_INVALID_ARGUMENT, "out_params");
    expect_error(mxp_qmatmul(&c, qa, qb, MXP_F32, &po), MXP_ERR_INVALID_ARGUMENT, "out_params");
    expect_error(mxp_qmatmul(&c, qa, qb, MXP_S16, NULL), MXP_ERR_UNSUPPORTED, "out_dtype");
    expect_error(mxp_qmatmul(&c, qb, qb, MXP_F32, NULL), MXP_ERR_UNSUPPORTED, "per tensor");
    expect_error(mxp_qmatmul(&c, qa, qa, MXP_F32, NULL), MXP_ERR_INVALID_DTYPE, "int8");
    expect_error(mxp_qmatmul(&c, qb, qa, MXP_F32, NULL), MXP_ERR_UNSUPPORTED, "per tensor");
    expect_error(mxp_qmatmul(&c, NULL, qb, MXP_F32, NULL), MXP_ERR_INVALID_ARGUMENT, "NULL");
    expect_error(mxp_qmatmul(NULL, qa, qb, MXP_F32, NULL), MXP_ERR_INVALID_ARGUMENT, "NULL");
    mxp_qtensor *qa2 = NULL; /* a [2, 3] by a [2, 3]: K differs */
    mxp_array *a2 = make(MXP_S8, 2, s23, (const double[]){ 1, 2, 3, 4, 5, 6 });
    float s1 = 1.0f;
    int32_t z0 = 0;
    mxp_qparams p1 = { MXP_S8, true, -1, 0, 1, &s1, &z0 };
    assert_int_equal(mxp_qtensor_create(&qa2, a2, &p1), MXP_OK);
    expect_error(mxp_qmatmul(&c, qa2, qa2, MXP_F32, NULL), MXP_ERR_SHAPE, "[K, N]");
    assert_null(c);
    mxp_qtensor_free(qa2);
    mxp_array_free(a2);
    mxp_qtensor_free(qa);
    mxp_qtensor_free(qb);
    mxp_array_free(ac);
    mxp_array_free(bc);
}

/* N(0, 1) data with a few large values, x in [m, k] and w in [n, k]. */
static mxp_array *random_matrix(int64_t r, int64_t c, double sd, uint64_t seed)
{
    const int64_t s[2] = { r, c };
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_random_normal(&a, MXP_F32, 2, s, 0.1, sd, seed), MXP_OK);
    float *p = mxp_array_data(a);
    for (int64_t i = 0; i < r * c; i += 37)
        p[i] *= 8.0f;
    return a;
}

/* The reference: the codes mxp_quantize gives (tested on their own against
 * torch and MPFR), sums in int64, the float32 combined scale, the product
 * and the bias in long double (64-bit significand: the product of a 24-bit
 * scale and a 31-bit sum is exact), then one rounding.  Without a bias the
 * layer's result is that rounding, bit for bit; with one, the layer adds in
 * float64 (the product rounded to odd beyond 53 bits), so the result is
 * within half an ulp of the float output plus 2^-52 of the exact value. */
/* 7-bit x (mxp_qlinear_reduce_range), computed here: the float32 x's
 * finite min and max widened to hold 0, scale = float32(hi / 127 - lo /
 * 127), zero point nearbyint(-lo / scale) in [0, 127] (torch's
 * _choose_qparams_per_tensor(x, True); the Python tests compare the two),
 * or the given parameters; codes round-half-even(x / scale) + zero point
 * clamped to [0, 127]. */
static void reduced_codes(const mxp_array *x, const mxp_qparams *given, float *scale, int32_t *zp, uint8_t *codes)
{
    const int64_t size = mxp_array_size(x);
    if (given) {
        *scale = given->scales[0], *zp = given->zero_points[0];
    } else {
        double lo = 0, hi = 0;
        for (int64_t e = 0; e < size; e++)
            if (isfinite(at(x, e)))
                lo = fmin(lo, at(x, e)), hi = fmax(hi, at(x, e));
        const double sc = hi / 127 - lo / 127;
        *scale = sc > 0 ? (float)sc : 1.0f;
        *zp = (int32_t)fmin(fmax(nearbyint(-lo / *scale), 0), 127);
    }
    for (int64_t e = 0; e < size; e++) {
        const double v = at(x, e) / (double)*scale, r = v - floor(v);
        double q = floor(v) + (r > 0.5 || (r == 0.5 && fmod(floor(v), 2) != 0));
        q = isnan(v) ? 0 : q + *zp;
        codes[e] = (uint8_t)(q < 0 ? 0 : q > 127 ? 127 : q);
    }
}

static void check_layer_range(const mxp_array *x, const mxp_qtensor *w, const mxp_array *bias, mxp_dtype out_dtype,
                              const mxp_qparams *x_params, bool reduced)
{
    mxp_array *y = NULL;
    if (reduced)
        assert_int_equal(mxp_qlinear_reduce_range(&y, x, w, bias, out_dtype, x_params), MXP_OK);
    else
        assert_int_equal(mxp_qlinear(&y, x, w, bias, out_dtype, x_params), MXP_OK);
    const int64_t k = mxp_array_shape(x)[mxp_array_ndim(x) - 1];
    const int64_t m = mxp_array_size(x) / k;
    const mxp_array *wc = mxp_qtensor_codes(w);
    const mxp_qparams *wp = mxp_qtensor_qparams(w);
    const int64_t n = mxp_array_shape(wc)[0];
    assert_int_equal(mxp_array_dtype(y), out_dtype);
    assert_int_equal(mxp_array_size(y), m * n);
    mxp_qparams cal;
    memset(&cal, 0, sizeof cal);
    float rs = 0;
    int32_t rz = 0;
    mxp_array *xq = NULL;
    if (reduced) {
        const int64_t shape[1] = { mxp_array_size(x) };
        assert_int_equal(mxp_array_empty(&xq, MXP_U8, 1, shape), MXP_OK);
        reduced_codes(x, x_params, &rs, &rz, mxp_array_data(xq));
        cal = (mxp_qparams){ MXP_U8, false, -1, 0, 1, &rs, &rz };
        x_params = &cal;
    } else {
        if (!x_params) {
            assert_int_equal(mxp_calibrate_minmax(x, MXP_U8, false, -1, 0, &cal), MXP_OK);
            x_params = &cal;
        }
        assert_int_equal(mxp_quantize(&xq, x, x_params, NULL), MXP_OK);
    }
    const int64_t zx = x_params->zero_points[0], zw = wp->zero_points[0];
    const bool sx_signed = x_params->qtype == MXP_S8;
    const int8_t *wq = mxp_array_data(wc); /* C-contiguous: made by mxp_quantize */
    const void *xd = mxp_array_data(xq);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            int64_t acc = 0;
            for (int64_t p = 0; p < k; p++) {
                const int64_t xv = sx_signed ? ((const int8_t *)xd)[i * k + p] : ((const uint8_t *)xd)[i * k + p];
                acc += (xv - zx) * (wq[j * k + p] - zw);
            }
            const float cs = (float)((double)x_params->scales[0] * wp->scales[wp->count > 1 ? j : 0]);
            long double ref = (long double)cs * (long double)acc;
            if (bias)
                ref += (long double)at(bias, j);
            const double got = at(y, i * n + j);
            if (!bias) {
                const double want = out_dtype == MXP_F64 ? (double)ref : (double)(float)ref;
                if (got != want)
                    fail_msg("y[%lld, %lld] = %.17g, the reference %.17g (acc %lld)", (long long)i, (long long)j,
                             got, want, (long long)acc);
            } else {
                const double ulp = out_dtype == MXP_F64 ? ldexp(1.0, ilogb(got) - 52) : ldexp(1.0, ilogb(got) - 23);
                const long double err = fabsl((long double)got - ref);
                if (err > 0.5L * ulp + ldexpl(fabsl(ref), -52) && !(got == 0 && ref == 0))
                    fail_msg("y[%lld, %lld] = %.17g, the reference %.21Lg", (long long)i, (long long)j, got, ref);
            }
        }
    if (!reduced)
        mxp_qparams_free(&cal);
    mxp_array_free(xq);
    mxp_array_free(y);
}

static void check_layer(const mxp_array *x, const mxp_qtensor *w, const mxp_array *bias, mxp_dtype out_dtype,
                        const mxp_qparams *x_params)
{
    check_layer_range(x, w, bias, out_dtype, x_params, false);
}

/* mxp_qmatmul_scales: float32(a * b_j / out_scale) from a float64
 * product and quotient, one rounding (a sum that a float32 product would
 * round twice: 1 + 2^-23 squared), for float32 extremes; bad input. */
static void test_qmatmul_scales(void **state)
{
    (void)state;
    const float b[6] = { 1 + 0x1p-23f, FLT_MAX, FLT_TRUE_MIN, -3.5f, 0.1f, 0 };
    float out[6];
    const float as[3] = { 1 + 0x1p-23f, 0.5f, 1e-30f };
    const double os[2] = { 1.0, 0.37 };
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 2; k++) {
            assert_int_equal(mxp_qmatmul_scales(out, as[i], b, 6, os[k]), MXP_OK);
            for (int j = 0; j < 6; j++)
                assert_true(out[j] == (float)((double)as[i] * (double)b[j] / os[k]));
        }
    }
    assert_true(out[0] == (float)((1e-30 * (1 + 0x1p-23)) / 0.37)); /* last: as[2], os[1] */
    assert_int_equal(mxp_qmatmul_scales(out, 1.0f, b, 0, 1.0), MXP_OK);
    assert_int_equal(mxp_qmatmul_scales(NULL, 1.0f, b, 2, 1.0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_qmatmul_scales(out, 1.0f, b, 2, 0.0), MXP_ERR_INVALID_ARGUMENT);
}

static void test_qlinear_against_the_integer_reference(void **state)
{
    (void)state;
    const mxp_isa top = mxp_isa_current();
    const struct {
        int64_t m, n, k;
    } shapes[] = { { 1, 1, 1 }, { 1, 64, 256 }, { 3, 7, 9 }, { 17, 97, 33 }, { 64, 50, 130 }, { 130, 33, 1030 },
                   { 70, 150, 517 } };
    uint64_t seed = 7;
    for (int isa = 0; isa <= (int)top; isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t s = 0; s < NELEMS(shapes); s++) {
            mxp_array *x = random_matrix(shapes[s].m, shapes[s].k, 1.0, seed++);
            mxp_array *wf = random_matrix(shapes[s].n, shapes[s].k, 0.05, seed++);
            const int64_t nb = shapes[s].n;
            mxp_array *bias = NULL;
            assert_int_equal(mxp_array_random_normal(&bias, MXP_F32, 1, &nb, 0, 1, seed++), MXP_OK);
            for (int layout = 0; layout < 3; layout++) { /* per tensor, per channel, asymmetric (zero point) */
                mxp_qtensor *w = NULL;
                if (layout < 2) {
                    assert_int_equal(mxp_quantize_tensor(&w, wf, NULL, MXP_S8, layout ? 0 : -1), MXP_OK);
                } else {
                    mxp_qparams asym;
                    assert_int_equal(mxp_calibrate_minmax(wf, MXP_S8, false, -1, 0, &asym), MXP_OK);
                    asym.zero_points[0] = asym.zero_points[0] == 0 ? 5 : asym.zero_points[0];
                    assert_int_equal(mxp_quantize_tensor(&w, wf, &asym, 0, -1), MXP_OK);
                    mxp_qparams_free(&asym);
                }
                check_layer(x, w, NULL, MXP_F32, NULL);
                check_layer(x, w, bias, MXP_F32, NULL);
                check_layer(x, w, NULL, MXP_F64, NULL);
                check_layer(x, w, bias, MXP_F64, NULL);
                /* given x parameters: uint8 of a wider range, int8 symmetric */
                float sx = 0.05f;
                int32_t zx = 120, z0 = 0;
                mxp_qparams pu = { MXP_U8, false, -1, 0, 1, &sx, &zx }, ps = { MXP_S8, true, -1, 0, 1, &sx, &z0 };
                check_layer(x, w, bias, MXP_F32, &pu);
                check_layer(x, w, NULL, MXP_F32, &ps);
                /* 7-bit x: calibrated here, and given (zero point 120: most codes clamped at 127) */
                check_layer_range(x, w, NULL, MXP_F32, NULL, true);
                check_layer_range(x, w, bias, MXP_F64, NULL, true);
                check_layer_range(x, w, NULL, MXP_F64, &pu, true);
                /* kept packed: the first calls pack W^T, the next ones read it (both kernels where the
                   level has two: 8-bit x, 7-bit x) */
                assert_int_equal(mxp_qtensor_prepack(w), MXP_OK);
                for (int again = 0; again < 2; again++) {
                    check_layer(x, w, bias, MXP_F32, NULL);
                    check_layer(x, w, NULL, MXP_F32, &pu);
                    check_layer_range(x, w, bias, MXP_F64, NULL, true);
                }
                mxp_qtensor_free(w);
            }
            mxp_array_free(bias);
            mxp_array_free(wf);
            mxp_array_free(x);
        }
    }
    assert_int_equal(mxp_set_isa(top), MXP_OK);
}

/* x of any rank: [2, 3, K] gives [2, 3, N], the rows of the 2-d result;
 * 1-d x gives [N]; float64 / bfloat16 x; a transposed (strided) weight
 * view; zero rows. */
static void test_qlinear_shapes_and_layouts(void **state)
{
    (void)state;
    const int64_t k = 40, n = 24;
    mxp_array *x2 = random_matrix(6, k, 1.0, 91), *wf = random_matrix(n, k, 0.1, 92);
    mxp_qtensor *w = NULL;
    assert_int_equal(mxp_quantize_tensor(&w, wf, NULL, MXP_S8, 0), MXP_OK);
    mxp_array *y2 = NULL, *x3 = NULL, *y3 = NULL;
    assert_int_equal(mxp_qlinear(&y2, x2, w, NULL, MXP_F32, NULL), MXP_OK);
    const int64_t s3[3] = { 2, 3, k };
    assert_int_equal(mxp_array_reshape(&x3, x2, 3, s3), MXP_OK);
    assert_int_equal(mxp_qlinear(&y3, x3, w, NULL, MXP_F32, NULL), MXP_OK);
    assert_int_equal(mxp_array_ndim(y3), 3);
    assert_int_equal(mxp_array_shape(y3)[2], n);
    assert_memory_equal(mxp_array_data(y2), mxp_array_data(y3), (size_t)(6 * n) * sizeof(float));
    /* one row, 1-d: the same values as the 2-d product of that row when the
     * row's own range is used for both */
    mxp_array *row = NULL, *y1 = NULL, *row2 = NULL, *yr = NULL;
    assert_int_equal(mxp_array_index(&row, x2, 0, 0), MXP_OK);
    assert_int_equal(mxp_qlinear(&y1, row, w, NULL, MXP_F32, NULL), MXP_OK);
    assert_int_equal(mxp_array_ndim(y1), 1);
    assert_int_equal(mxp_array_shape(y1)[0], n);
    const int64_t s1k[2] = { 1, k };
    assert_int_equal(mxp_array_reshape(&row2, row, 2, s1k), MXP_OK);
    assert_int_equal(mxp_qlinear(&yr, row2, w, NULL, MXP_F32, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(y1), mxp_array_data(yr), (size_t)n * sizeof(float));
    /* float64 and bfloat16 x, float16/bfloat16 out: within the output's rounding of the float32 answer */
    mxp_array *xd = NULL, *yd = NULL, *yh = NULL;
    float sx = 0.04f;
    int32_t zx = 128;
    mxp_qparams px = { MXP_U8, false, -1, 0, 1, &sx, &zx };
    mxp_array *yf = NULL;
    assert_int_equal(mxp_qlinear(&yf, x2, w, NULL, MXP_F32, &px), MXP_OK);
    assert_int_equal(mxp_array_astype(&xd, x2, MXP_F64, NULL), MXP_OK);
    assert_int_equal(mxp_qlinear(&yd, xd, w, NULL, MXP_F32, &px), MXP_OK); /* the same codes: x is exact */
    assert_memory_equal(mxp_array_data(yf), mxp_array_data(yd), (size_t)(6 * n) * sizeof(float));
    assert_int_equal(mxp_qlinear(&yh, xd, w, NULL, MXP_BF16, &px), MXP_OK);
    for (int64_t i = 0; i < 6 * n; i++) {
        const double a = at(yh, i), b = at(yf, i);
        assert_true(fabs(a - b) <= ldexp(fabs(b), -8));
    }
    /* a weight whose codes are a transposed view (column-major storage) */
    mxp_array *wt = NULL, *wtt = NULL, *wcopy = NULL, *yt = NULL;
    assert_int_equal(mxp_array_transpose(&wt, mxp_qtensor_codes(w), NULL), MXP_OK);
    assert_int_equal(mxp_array_ascontiguous(&wcopy, wt, 'C'), MXP_OK);
    assert_int_equal(mxp_array_transpose(&wtt, wcopy, NULL), MXP_OK); /* [n, k] with strides (1, n) */
    mxp_qtensor *w2 = NULL;
    assert_int_equal(mxp_qtensor_create(&w2, wtt, mxp_qtensor_qparams(w)), MXP_OK);
    assert_int_equal(mxp_qlinear(&yt, x2, w2, NULL, MXP_F32, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(y2), mxp_array_data(yt), (size_t)(6 * n) * sizeof(float));
    /* zero rows */
    const int64_t s0[2] = { 0, k };
    mxp_array *x0 = NULL, *y0 = NULL;
    assert_int_equal(mxp_array_empty(&x0, MXP_F32, 2, s0), MXP_OK);
    assert_int_equal(mxp_qlinear(&y0, x0, w, NULL, MXP_F32, NULL), MXP_OK);
    assert_int_equal(mxp_array_shape(y0)[0], 0);
    assert_int_equal(mxp_array_shape(y0)[1], n);
    mxp_array *arrs[] = { x2, wf, y2, x3, y3, row, y1, row2, yr, xd, yd, yh, yf, wt, wtt, wcopy, yt, x0, y0 };
    for (size_t i = 0; i < NELEMS(arrs); i++)
        mxp_array_free(arrs[i]);
    mxp_qtensor_free(w2);
    mxp_qtensor_free(w);
}

static void test_qlinear_bad_input(void **state)
{
    (void)state;
    const int64_t k = 8, n = 4;
    mxp_array *x = random_matrix(3, k, 1.0, 5), *wf = random_matrix(n, k, 0.1, 6), *y = NULL;
    mxp_qtensor *w = NULL, *wu = NULL, *w1 = NULL, *wg = NULL, *wz = NULL;
    assert_int_equal(mxp_quantize_tensor(&w, wf, NULL, MXP_S8, 0), MXP_OK);
    assert_int_equal(mxp_quantize_tensor(&wu, wf, NULL, MXP_U8, -1), MXP_OK);
    assert_int_equal(mxp_quantize_tensor(&w1, wf, NULL, MXP_S8, 1), MXP_OK);
    mxp_qparams g;
    assert_int_equal(mxp_calibrate_minmax(wf, MXP_S8, true, 1, 4, &g), MXP_OK);
    assert_int_equal(mxp_quantize_tensor(&wg, wf, &g, 0, -1), MXP_OK);
    mxp_qparams_free(&g);
    assert_int_equal(mxp_calibrate_minmax(wf, MXP_S8, false, 0, 0, &g), MXP_OK); /* asymmetric: zero points differ */
    g.zero_points[0] = 1, g.zero_points[1] = -2;
    assert_int_equal(mxp_quantize_tensor(&wz, wf, &g, 0, -1), MXP_OK);
    mxp_qparams_free(&g);

    expect_error(mxp_qlinear(NULL, x, w, NULL, MXP_F32, NULL), MXP_ERR_INVALID_ARGUMENT, "NULL");
    expect_error(mxp_qlinear(&y, NULL, w, NULL, MXP_F32, NULL), MXP_ERR_INVALID_ARGUMENT, "x is NULL");
    expect_error(mxp_qlinear(&y, x, NULL, NULL, MXP_F32, NULL), MXP_ERR_INVALID_ARGUMENT, "weight is NULL");
    expect_error(mxp_qlinear(&y, x, wu, NULL, MXP_F32, NULL), MXP_ERR_INVALID_DTYPE, "int8");
    expect_error(mxp_qlinear(&y, x, w1, NULL, MXP_F32, NULL), MXP_ERR_UNSUPPORTED, "axis 1");
    expect_error(mxp_qlinear(&y, x, wg, NULL, MXP_F32, NULL), MXP_ERR_UNSUPPORTED, "groups");
    expect_error(mxp_qlinear(&y, x, wz, NULL, MXP_F32, NULL), MXP_ERR_UNSUPPORTED, "zero points");
    expect_error(mxp_qlinear(&y, x, w, NULL, MXP_S8, NULL), MXP_ERR_UNSUPPORTED, "float");
    expect_error(mxp_qlinear(&y, x, w, NULL, MXP_S32, NULL), MXP_ERR_UNSUPPORTED, "float");
    expect_error(mxp_qlinear(&y, x, w, NULL, (mxp_dtype)999, NULL), MXP_ERR_INVALID_DTYPE, "float");
    /* 7-bit x: uint8 parameters with a zero point in [0, 127] only; the layer's own checks as above */
    {
        float sx = 0.1f;
        int32_t z200 = 200, z0 = 0, zm = -1;
        const mxp_qparams big = { MXP_U8, false, -1, 0, 1, &sx, &z200 }, neg = { MXP_U8, false, -1, 0, 1, &sx, &zm };
        const mxp_qparams s8 = { MXP_S8, true, -1, 0, 1, &sx, &z0 };
        expect_error(mxp_qlinear_reduce_range(&y, x, w, NULL, MXP_F32, &big), MXP_ERR_INVALID_ARGUMENT, "[0, 127]");
        expect_error(mxp_qlinear_reduce_range(&y, x, w, NULL, MXP_F32, &neg), MXP_ERR_INVALID_ARGUMENT, "[0, 127]");
        expect_error(mxp_qlinear_reduce_range(&y, x, w, NULL, MXP_F32, &s8), MXP_ERR_UNSUPPORTED, "uint8");
        expect_error(mxp_qlinear_reduce_range(NULL, x, w, NULL, MXP_F32, NULL), MXP_ERR_INVALID_ARGUMENT, "NULL");
        expect_error(mxp_qlinear_reduce_range(&y, x, wu, NULL, MXP_F32, NULL), MXP_ERR_INVALID_DTYPE, "int8");
        expect_error(mxp_qlinear_reduce_range(&y, x, w, NULL, MXP_S8, NULL), MXP_ERR_UNSUPPORTED, "float");
        assert_null(y);
    }
    /* shapes: x's last axis must be in_features; a weight that is not 2-d */
    mxp_array *xt = NULL, *xi = NULL, *b = NULL, *b2 = NULL, *bi = NULL;
    assert_int_equal(mxp_array_transpose(&xt, x, NULL), MXP_OK); /* [8, 3] */
    expect_error(mxp_qlinear(&y, xt, w, NULL, MXP_F32, NULL), MXP_ERR_SHAPE, "in_features");
    expect_error(mxp_qlinear(&y, x, wu, NULL, MXP_F32, NULL), MXP_ERR_INVALID_DTYPE, "int8");
    assert_int_equal(mxp_array_astype(&xi, x, MXP_S32, NULL), MXP_OK);
    expect_error(mxp_qlinear(&y, xi, w, NULL, MXP_F32, NULL), MXP_ERR_INVALID_DTYPE, "float");
    const int64_t n3 = 3, nn = n;
    assert_int_equal(mxp_array_zeros(&b, MXP_F32, 1, &n3), MXP_OK);
    expect_error(mxp_qlinear(&y, x, w, b, MXP_F32, NULL), MXP_ERR_SHAPE, "bias");
    assert_int_equal(mxp_array_zeros(&bi, MXP_S32, 1, &nn), MXP_OK);
    expect_error(mxp_qlinear(&y, x, w, bi, MXP_F32, NULL), MXP_ERR_INVALID_DTYPE, "bias");
    const int64_t s1n[2] = { 1, n };
    assert_int_equal(mxp_array_zeros(&b2, MXP_F32, 2, s1n), MXP_OK);
    expect_error(mxp_qlinear(&y, x, w, b2, MXP_F32, NULL), MXP_ERR_SHAPE, "1-d");
    mxp_qtensor *w3 = NULL;
    mxp_array *w3f = NULL;
    const int64_t s3[3] = { 2, 2, k };
    assert_int_equal(mxp_array_reshape(&w3f, wf, 3, s3), MXP_OK);
    assert_int_equal(mxp_quantize_tensor(&w3, w3f, NULL, MXP_S8, 0), MXP_OK);
    expect_error(mxp_qlinear(&y, x, w3, NULL, MXP_F32, NULL), MXP_ERR_SHAPE, "2-d");
    /* x parameters: per channel, the wrong type, a bad scale */
    float sc[3] = { 1, 1, 1 }, bad = -1.0f;
    int32_t zc[3] = { 0, 0, 0 }, z = 0;
    mxp_qparams pc = { MXP_U8, false, 0, 0, 3, sc, zc }, pf = { MXP_E4M3, true, -1, 0, 1, sc, zc },
                pb = { MXP_U8, false, -1, 0, 1, &bad, &z };
    expect_error(mxp_qlinear(&y, x, w, NULL, MXP_F32, &pc), MXP_ERR_UNSUPPORTED, "per tensor");
    expect_error(mxp_qlinear(&y, x, w, NULL, MXP_F32, &pf), MXP_ERR_INVALID_DTYPE, "uint8 or int8");
    expect_error(mxp_qlinear(&y, x, w, NULL, MXP_F32, &pb), MXP_ERR_INVALID_ARGUMENT, "scale");
    assert_null(y);
    /* K beyond the int8 GEMM's limit (uint8 x with zero point 128 by int8
     * w: 131071): refused, not wrapped */
    const int64_t kb = 140000;
    mxp_array *xb = random_matrix(1, kb, 1.0, 8), *wbf = random_matrix(1, kb, 1.0, 9);
    mxp_qtensor *wb = NULL;
    assert_int_equal(mxp_quantize_tensor(&wb, wbf, NULL, MXP_S8, 0), MXP_OK);
    float s128 = 0.1f;
    int32_t z128 = 128;
    mxp_qparams p128 = { MXP_U8, false, -1, 0, 1, &s128, &z128 };
    expect_error(mxp_qlinear(&y, xb, wb, NULL, MXP_F32, &p128), MXP_ERR_SIZE_OVERFLOW, "131071");
    assert_null(y);
    mxp_qtensor_free(wb);
    mxp_array_free(xb);
    mxp_array_free(wbf);
    mxp_array *xs[] = { x, wf, xt, xi, b, b2, bi, w3f };
    for (size_t i = 0; i < NELEMS(xs); i++)
        mxp_array_free(xs[i]);
    mxp_qtensor *ws[] = { w, wu, w1, wg, wz, w3 };
    for (size_t i = 0; i < NELEMS(ws); i++)
        mxp_qtensor_free(ws[i]);
}

/* mxp_qtensor_prepack: the kept panels are what later calls read -- a
 * change to the codes is not seen until mxp_qtensor_prepack again (the
 * documented snapshot), except by one row where the GEMV streams W; the
 * reference's at one and two threads (each thread's slab of columns, and
 * few columns shared step by step), for M on both sides of the deep
 * blocking (two kinds kept), K odd; the per-call results bit for bit. */
static void test_qlinear_prepack(void **state)
{
    (void)state;
    const int threads = mxp_get_num_threads();
    const struct {
        int64_t n, k;
    } shapes[] = { { 200, 301 }, { 24, 1030 } };
    for (size_t s = 0; s < NELEMS(shapes); s++)
        for (int t = 1; t <= 2; t++) {
            assert_int_equal(mxp_set_num_threads(t), MXP_OK);
            const int64_t n = shapes[s].n, k = shapes[s].k;
            mxp_array *wf = random_matrix(n, k, 0.05, 40 + s);
            mxp_qtensor *plain = NULL, *w = NULL;
            assert_int_equal(mxp_quantize_tensor(&plain, wf, NULL, MXP_S8, 0), MXP_OK);
            /* a weight over codes of our own, to change them */
            mxp_array *codes = NULL;
            const int64_t cs[2] = { n, k };
            assert_int_equal(mxp_array_empty(&codes, MXP_S8, 2, cs), MXP_OK);
            assert_int_equal(mxp_array_copyto(codes, mxp_qtensor_codes(plain), MXP_CASTING_NO, NULL), MXP_OK);
            assert_int_equal(mxp_qtensor_create(&w, codes, mxp_qtensor_qparams(plain)), MXP_OK);
            assert_int_equal(mxp_qtensor_prepack(w), MXP_OK);
            const int64_t ms[] = { 1, 5, 300 };
            for (size_t mi = 0; mi < NELEMS(ms); mi++) {
                mxp_array *x = random_matrix(ms[mi], k, 1.0, 50 + mi), *y0 = NULL, *y1 = NULL, *y2 = NULL;
                assert_int_equal(mxp_qlinear(&y0, x, plain, NULL, MXP_F32, NULL), MXP_OK);
                check_layer(x, w, NULL, MXP_F32, NULL); /* packs, or reads what an earlier M kept */
                assert_int_equal(mxp_qlinear(&y1, x, w, NULL, MXP_F32, NULL), MXP_OK);
                assert_memory_equal(mxp_array_data(y0), mxp_array_data(y1), (size_t)(ms[mi] * n) * sizeof(float));
                int8_t *c = mxp_array_data(codes);
                for (int64_t i = 0; i < n * k; i += 3)
                    c[i] = (int8_t)(c[i] == 100 ? -100 : 100);
                assert_int_equal(mxp_qlinear(&y2, x, w, NULL, MXP_F32, NULL), MXP_OK);
                const bool same = !memcmp(mxp_array_data(y1), mxp_array_data(y2), (size_t)(ms[mi] * n) * sizeof(float));
                assert_true(same || ms[mi] == 1); /* the kept panels (M = 1: the GEMV reads the codes) */
                assert_int_equal(mxp_qtensor_prepack(w), MXP_OK); /* drops them: the new codes from here */
                check_layer(x, w, NULL, MXP_F32, NULL);
                check_layer(x, w, NULL, MXP_F32, NULL);
                mxp_array_free(y0);
                mxp_array_free(y1);
                mxp_array_free(y2);
                mxp_array_free(x);
                /* back to the first codes for the next M */
                memcpy(c, mxp_array_data(mxp_qtensor_codes(plain)), (size_t)(n * k));
                assert_int_equal(mxp_qtensor_prepack(w), MXP_OK);
            }
            mxp_qtensor_free(w);
            mxp_array_free(codes);
            mxp_qtensor_free(plain);
            mxp_array_free(wf);
        }
    assert_int_equal(mxp_set_num_threads(threads), MXP_OK);
}

/* Out of memory at every allocation: MXP_ERR_NO_MEMORY, nothing leaked. */
static mxp_array *af_x, *af_w, *af_b, *af_bm;
static mxp_status alloc_workload(void)
{
    mxp_qtensor *w = NULL, *xq = NULL, *bq = NULL;
    mxp_array *y = NULL, *c = NULL;
    mxp_status st = mxp_quantize_tensor(&w, af_w, NULL, MXP_S8, 0);
    if (st == MXP_OK)
        st = mxp_qtensor_prepack(w);
    if (st == MXP_OK) /* the kept panels: without memory for them the call packs as before */
        st = mxp_qlinear(&y, af_x, w, af_b, MXP_F32, NULL);
    if (st == MXP_OK) {
        mxp_array_free(y);
        y = NULL;
        st = mxp_qlinear(&y, af_x, w, af_b, MXP_F32, NULL);
    }
    if (st == MXP_OK)
        st = mxp_quantize_tensor(&xq, af_x, NULL, MXP_U8, -1);
    if (st == MXP_OK)
        st = mxp_quantize_tensor(&bq, af_bm, NULL, MXP_S8, 1);
    if (st == MXP_OK)
        st = mxp_qmatmul(&c, xq, bq, MXP_F32, NULL);
    mxp_array_free(y);
    mxp_array_free(c);
    mxp_qtensor_free(w);
    mxp_qtensor_free(xq);
    mxp_qtensor_free(bq);
    return st;
}

static void test_allocation_failures(void **state)
{
    (void)state;
    af_x = random_matrix(5, 16, 1.0, 1);
    af_w = random_matrix(7, 16, 0.1, 2);
    af_bm = random_matrix(16, 7, 0.1, 4);
    const int64_t n = 7;
    assert_int_equal(mxp_array_random_normal(&af_b, MXP_F32, 1, &n, 0, 1, 3), MXP_OK);
    assert_true(check_every_allocation_failure(alloc_workload) > 0);
    mxp_array_free(af_x);
    mxp_array_free(af_w);
    mxp_array_free(af_b);
    mxp_array_free(af_bm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantize_tensor_codes_and_accessors),
        cmocka_unit_test(test_qtensor_create_keeps_a_view),
        cmocka_unit_test(test_qmatmul_by_hand),
        cmocka_unit_test(test_qlinear_against_the_integer_reference),
        cmocka_unit_test(test_qlinear_shapes_and_layouts),
        cmocka_unit_test(test_qmatmul_scales),
        cmocka_unit_test(test_qlinear_bad_input),
        cmocka_unit_test(test_qlinear_prepack),
        cmocka_unit_test(test_allocation_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
