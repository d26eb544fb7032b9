/* FFT against a direct DFT in long double: every length from 1 to 64 and
 * 97 (prime), 128, 1000, 1024, 4096; complex, real (rfft), inverse
 * (irfft) and the round trip; the three normalizations; cut and padded
 * lengths; any axis; two axes; float16/bfloat16 inputs and outputs;
 * threads; Parseval and the round trip at large (prime) lengths; bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

/* X[k] = sum_t x[t] e^{-+2 pi i k t / n}, in long double: the oracle.  The
 * n twiddles are computed once (cosl and sinl of each exactly reduced angle
 * 2 pi j / n) and indexed by k t mod n. */
static void dft(const double *x, double *y, int64_t n, bool inverse)
{
    long double *c = malloc((size_t)n * sizeof *c), *s = malloc((size_t)n * sizeof *s);
    for (int64_t j = 0; j < n; j++) {
        const long double a = (inverse ? 2 : -2) * 3.141592653589793238462643383279502884L * (long double)j / n;
        c[j] = cosl(a), s[j] = sinl(a);
    }
    for (int64_t k = 0; k < n; k++) {
        long double re = 0, im = 0;
        for (int64_t t = 0; t < n; t++) {
            const int64_t j = (k * t) % n;
            re += x[2 * t] * c[j] - x[2 * t + 1] * s[j];
            im += x[2 * t] * s[j] + x[2 * t + 1] * c[j];
        }
        y[2 * k] = (double)re, y[2 * k + 1] = (double)im;
    }
    free(c), free(s);
}

static double *values(int64_t count, uint64_t seed)
{
    double *v = malloc((size_t)count * sizeof *v);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int64_t i = 0; i < count; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        v[i] = (double)(s >> 11) * 0x1p-53 * 2 - 1;
    }
    return v;
}

static mxp_array *wrap(double *v, int ndim, const int64_t *shape)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_wrap(&a, v, MXP_F64, ndim, shape, NULL, true, NULL, NULL), MXP_OK);
    return a;
}

static double get(const mxp_array *a, int64_t i)
{
    double v;
    assert_int_equal(mxp_convert(&v, MXP_F64, (const char *)mxp_array_data(a) + i * (int64_t)mxp_array_itemsize(a),
                                 mxp_array_dtype(a), 1, NULL), MXP_OK);
    return v;
}

/* max |got - want| / max |want| over count values */
static double rel_err(const mxp_array *got, const double *want, int64_t count)
{
    double e = 0, m = 0;
    for (int64_t i = 0; i < count; i++) {
        e = fmax(e, fabs(get(got, i) - want[i]));
        m = fmax(m, fabs(want[i]));
    }
    return m > 0 ? e / m : e;
}

static const int64_t LENGTHS[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 31, 32, 60, 64, 97, 128, 1000, 1024, 4096 };

static void test_c2c_every_length(void **state)
{
    (void)state;
    for (size_t li = 0; li < sizeof LENGTHS / sizeof LENGTHS[0]; li++) {
        const int64_t n = LENGTHS[li], shape[2] = { n, 2 };
        double *x = values(2 * n, (uint64_t)n), *want = malloc((size_t)(2 * n) * sizeof *want);
        mxp_array *xa = wrap(x, 2, shape), *y = NULL;
        for (int inverse = 0; inverse < 2; inverse++) {
            dft(x, want, n, inverse);
            if (inverse)
                for (int64_t i = 0; i < 2 * n; i++)
                    want[i] /= (double)n; /* backward: the inverse divides */
            mxp_fft_opts o = { .inverse = inverse };
            assert_int_equal(mxp_fft(&y, xa, &o), MXP_OK); /* float64 in: float64 out */
            assert_int_equal(mxp_array_dtype(y), MXP_F64);
            const double e64 = rel_err(y, want, 2 * n);
            if (e64 > 1e-13)
                fail_msg("n %lld inverse %d: float64 error %.3g", (long long)n, inverse, e64);
            mxp_array_free(y);
            o.out_dtype = MXP_F32;
            mxp_array *x32 = NULL;
            assert_int_equal(mxp_array_astype(&x32, xa, MXP_F32, NULL), MXP_OK);
            o.out_dtype = 0;
            assert_int_equal(mxp_fft(&y, x32, &o), MXP_OK);
            assert_int_equal(mxp_array_dtype(y), MXP_F32);
            /* float32: the input's rounding (2^-24 relative) grows as log n */
            const double e32 = rel_err(y, want, 2 * n);
            if (e32 > 2e-6 * (1 + log2((double)n)))
                fail_msg("n %lld inverse %d: float32 error %.3g", (long long)n, inverse, e32);
            mxp_array_free(y), mxp_array_free(x32);
        }
        mxp_array_free(xa);
        free(x), free(want);
    }
}

/* rfft gives the first n/2 + 1 bins of the complex transform; irfft
 * inverts it (odd and even n, the Nyquist bin's imaginary part ignored). */
static void test_real(void **state)
{
    (void)state;
    for (size_t li = 0; li < sizeof LENGTHS / sizeof LENGTHS[0]; li++) {
        const int64_t n = LENGTHS[li], h = n / 2 + 1;
        double *r = values(n, 100 + (uint64_t)n), *c = calloc((size_t)(2 * n), sizeof *c),
               *want = malloc((size_t)(2 * n) * sizeof *want);
        for (int64_t i = 0; i < n; i++)
            c[2 * i] = r[i];
        dft(c, want, n, false);
        mxp_array *ra = wrap(r, 1, &n), *y = NULL, *back = NULL;
        assert_int_equal(mxp_rfft(&y, ra, NULL), MXP_OK);
        assert_int_equal(mxp_array_dtype(y), MXP_F64);
        assert_int_equal(mxp_array_ndim(y), 2);
        assert_int_equal(mxp_array_shape(y)[0], h);
        if (rel_err(y, want, 2 * h) > 1e-13)
            fail_msg("rfft n %lld: %.3g", (long long)n, rel_err(y, want, 2 * h));
        mxp_fft_opts o = { .naxes = 1, .axes = { 0 }, .n = { n } };
        assert_int_equal(mxp_irfft(&back, y, &o), MXP_OK);
        assert_int_equal(mxp_array_shape(back)[0], n);
        if (rel_err(back, r, n) > 1e-13)
            fail_msg("irfft n %lld: %.3g", (long long)n, rel_err(back, r, n));
        mxp_array_free(back);
        /* the real input through mxp_fft (real_input) equals the full spectrum */
        o = (mxp_fft_opts){ .real_input = true };
        assert_int_equal(mxp_fft(&back, ra, &o), MXP_OK);
        if (rel_err(back, want, 2 * n) > 1e-13)
            fail_msg("fft of real n %lld", (long long)n);
        mxp_array_free(back), mxp_array_free(y), mxp_array_free(ra);
        free(r), free(c), free(want);
    }
}

/* The normalizations: ortho keeps the norm (Parseval), forward divides the
 * forward transform; n cuts or pads. */
static void test_norm_and_length(void **state)
{
    (void)state;
    const int64_t n = 24, shape[2] = { n, 2 };
    double *x = values(2 * n, 7), *want = malloc(2 * 40 * sizeof *want);
    mxp_array *xa = wrap(x, 2, shape), *y = NULL;
    mxp_fft_opts o = { .norm = MXP_FFT_ORTHO };
    assert_int_equal(mxp_fft(&y, xa, &o), MXP_OK);
    double e_in = 0, e_out = 0;
    for (int64_t i = 0; i < 2 * n; i++)
        e_in += x[i] * x[i], e_out += get(y, i) * get(y, i);
    assert_true(fabs(e_in - e_out) <= 1e-12 * e_in);
    mxp_array_free(y);
    o = (mxp_fft_opts){ .norm = MXP_FFT_FORWARD };
    assert_int_equal(mxp_fft(&y, xa, &o), MXP_OK);
    dft(x, want, n, false);
    for (int64_t i = 0; i < 2 * n; i++)
        want[i] /= (double)n;
    assert_true(rel_err(y, want, 2 * n) < 1e-13);
    mxp_array_free(y);
    /* padded to 40 and cut to 10 */
    for (int64_t m = 10; m <= 40; m += 30) {
        double *xm = calloc((size_t)(2 * m), sizeof *xm);
        memcpy(xm, x, (size_t)(2 * (m < n ? m : n)) * sizeof *xm);
        dft(xm, want, m, false);
        o = (mxp_fft_opts){ .n = { m } };
        assert_int_equal(mxp_fft(&y, xa, &o), MXP_OK);
        assert_int_equal(mxp_array_shape(y)[0], m);
        assert_true(rel_err(y, want, 2 * m) < 1e-13);
        mxp_array_free(y);
        free(xm);
    }
    mxp_array_free(xa);
    free(x), free(want);
}

/* Axis 0 of a (12, 5) complex array equals the transposed array's last
 * axis; two axes equal two passes; float16/bfloat16 in and out. */
static void test_axes_and_dtypes(void **state)
{
    (void)state;
    const int64_t shape[3] = { 12, 5, 2 };
    double *x = values(120, 9);
    mxp_array *xa = wrap(x, 3, shape), *y = NULL, *t = NULL, *yt = NULL, *tc = NULL;
    mxp_fft_opts o = { .naxes = 1, .axes = { 0 } };
    assert_int_equal(mxp_fft(&y, xa, &o), MXP_OK);
    assert_int_equal(mxp_array_transpose(&t, xa, (const int[]){ 1, 0, 2 }), MXP_OK);
    assert_int_equal(mxp_array_ascontiguous(&tc, t, 'C'), MXP_OK);
    assert_int_equal(mxp_fft(&yt, tc, NULL), MXP_OK);
    for (int64_t i = 0; i < 12; i++)
        for (int64_t j = 0; j < 5; j++)
            for (int c = 0; c < 2; c++)
                assert_true(get(y, (i * 5 + j) * 2 + c) == get(yt, (j * 12 + i) * 2 + c));
    mxp_array_free(yt);
    /* 2-d: the last axis, then axis 0 */
    mxp_array *y2 = NULL, *step = NULL;
    o = (mxp_fft_opts){ .naxes = 2, .axes = { 0, 1 } };
    assert_int_equal(mxp_fft(&y2, xa, &o), MXP_OK);
    o = (mxp_fft_opts){ .naxes = 1, .axes = { 1 } };
    assert_int_equal(mxp_fft(&step, xa, &o), MXP_OK);
    o.axes[0] = 0;
    assert_int_equal(mxp_fft(&yt, step, &o), MXP_OK);
    for (int64_t i = 0; i < 120; i++)
        assert_true(fabs(get(y2, i) - get(yt, i)) <= 1e-12 * 60);
    mxp_array_free(y2), mxp_array_free(yt), mxp_array_free(step);
    /* bfloat16 in, float16 out: computed in float32, rounded once */
    mxp_array *xb = NULL, *xb32 = NULL, *y32 = NULL, *yh = NULL, *want = NULL;
    assert_int_equal(mxp_array_astype(&xb, xa, MXP_BF16, NULL), MXP_OK);
    assert_int_equal(mxp_array_astype(&xb32, xb, MXP_F32, NULL), MXP_OK);
    assert_int_equal(mxp_fft(&y32, xb32, NULL), MXP_OK);
    o = (mxp_fft_opts){ .out_dtype = MXP_F16 };
    assert_int_equal(mxp_fft(&yh, xb, &o), MXP_OK);
    assert_int_equal(mxp_array_dtype(yh), MXP_F16);
    assert_int_equal(mxp_array_astype(&want, y32, MXP_F16, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(yh), mxp_array_data(want), 120 * 2);
    mxp_array_free(xb), mxp_array_free(xb32), mxp_array_free(y32), mxp_array_free(yh), mxp_array_free(want);
    mxp_array_free(y), mxp_array_free(t), mxp_array_free(tc), mxp_array_free(xa);
    free(x);
}

static void test_threads_agree(void **state)
{
    (void)state;
    const int64_t shape[3] = { 300, 256, 2 };
    double *x = values(300 * 256 * 2, 11);
    mxp_array *xa = wrap(x, 3, shape), *a = NULL, *b = NULL;
    mxp_set_num_threads(1);
    assert_int_equal(mxp_fft(&a, xa, NULL), MXP_OK);
    mxp_set_num_threads(2);
    assert_int_equal(mxp_fft(&b, xa, NULL), MXP_OK);
    mxp_set_num_threads(0);
    assert_memory_equal(mxp_array_data(a), mxp_array_data(b), 300 * 256 * 2 * 8);
    mxp_array_free(a), mxp_array_free(b), mxp_array_free(xa);
    free(x);
}

/* Parseval with norm="ortho": sum |x|^2 = sum |X|^2, and the round trip
 * ifft(fft(x)) = x, at lengths no direct DFT here could afford: 4093
 * (prime: KISS FFT's generic butterfly, O(n p)), 2 * 3^2 * 5 * 7 * 11 * 13
 * (mixed radix) and 2^16. */
static void test_parseval_large(void **state)
{
    (void)state;
    static const int64_t big[] = { 4093, 90090, 65536 };
    for (size_t li = 0; li < sizeof big / sizeof big[0]; li++) {
        const int64_t n = big[li], shape[2] = { n, 2 };
        double *x = values(2 * n, 7 + (uint64_t)n);
        mxp_array *xa = wrap(x, 2, shape), *y = NULL, *back = NULL;
        for (int f32 = 0; f32 < 2; f32++) {
            mxp_fft_opts o = { .norm = MXP_FFT_ORTHO, .out_dtype = f32 ? MXP_F32 : MXP_F64 };
            assert_int_equal(mxp_fft(&y, xa, &o), MXP_OK);
            o.inverse = true;
            assert_int_equal(mxp_fft(&back, y, &o), MXP_OK);
            long double ex = 0, ey = 0;
            for (int64_t i = 0; i < 2 * n; i++)
                ex += (long double)x[i] * x[i], ey += (long double)get(y, i) * get(y, i);
            const double tol = f32 ? 1e-5 : 1e-13, de = fabs((double)((ey - ex) / ex));
            if (de > tol)
                fail_msg("n %lld f32 %d: Parseval off by %.3g", (long long)n, f32, de);
            const double rt = rel_err(back, x, 2 * n);
            if (rt > (f32 ? 2e-6 * (1 + log2((double)n)) : 1e-13))
                fail_msg("n %lld f32 %d: round trip error %.3g", (long long)n, f32, rt);
            mxp_array_free(y), mxp_array_free(back);
        }
        mxp_array_free(xa);
        free(x);
    }
}

static void test_bad_input(void **state)
{
    (void)state;
    const int64_t s3[1] = { 3 }, s2[2] = { 4, 2 };
    mxp_array *r = NULL, *c = NULL, *i = NULL, *y = NULL;
    assert_int_equal(mxp_array_zeros(&r, MXP_F32, 1, s3), MXP_OK);
    assert_int_equal(mxp_array_zeros(&c, MXP_F32, 2, s2), MXP_OK);
    assert_int_equal(mxp_array_zeros(&i, MXP_S32, 2, s2), MXP_OK);
    assert_int_equal(mxp_fft(&y, r, NULL), MXP_ERR_SHAPE); /* not complex: trailing 3 */
    assert_non_null(strstr(mxp_last_error(), "trailing axis of length 2"));
    assert_int_equal(mxp_fft(&y, i, NULL), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_fft(NULL, c, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_fft(&y, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_fft(&y, c, &(mxp_fft_opts){ .naxes = 3 }), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_fft(&y, c, &(mxp_fft_opts){ .naxes = 1, .axes = { 1 } }), MXP_ERR_INDEX);
    assert_int_equal(mxp_fft(&y, c, &(mxp_fft_opts){ .n = { -1 } }), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_fft(&y, c, &(mxp_fft_opts){ .norm = (mxp_fft_norm)7 }), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_fft(&y, c, &(mxp_fft_opts){ .out_dtype = MXP_S8 }), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_irfft(&y, c, &(mxp_fft_opts){ .n = { 0 } }), MXP_OK); /* 2 (4 - 1) = 6 reals */
    assert_int_equal(mxp_array_shape(y)[0], 6);
    mxp_array_free(y);
    const int64_t one[2] = { 1, 2 };
    mxp_array *c1 = NULL;
    assert_int_equal(mxp_array_zeros(&c1, MXP_F32, 2, one), MXP_OK);
    assert_int_equal(mxp_irfft(&y, c1, NULL), MXP_ERR_INVALID_ARGUMENT); /* 2 (1 - 1) = 0 points */
    assert_null(y);
    mxp_array_free(r), mxp_array_free(c), mxp_array_free(i), mxp_array_free(c1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c2c_every_length), cmocka_unit_test(test_real),
        cmocka_unit_test(test_norm_and_length),  cmocka_unit_test(test_axes_and_dtypes),
        cmocka_unit_test(test_threads_agree),    cmocka_unit_test(test_parseval_large),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
