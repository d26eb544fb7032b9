/* The example operator plugin (examples/plugins/example_ops.c) loaded from
 * C: listing, calls against float64 oracles and mxp's built-in gelu,
 * broadcasting, output dtypes, out arrays, in place, reductions along any
 * axis, a general operator, per-ISA kernels, and precision checks. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static int setup(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(mxp_ops_load(MXP_EXAMPLE_OPS, &n), MXP_OK);
    assert_int_equal(n, 5);
    return 0;
}

static mxp_array *random_array(mxp_dtype t, int ndim, const int64_t *shape, uint64_t seed)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_random_normal(&a, t, ndim, shape, 0, 2, seed), MXP_OK);
    return a;
}

static double at(const mxp_array *a, int64_t i)
{
    double v;
    assert_int_equal(mxp_convert(&v, MXP_F64, (const char *)mxp_array_data(a) + i * (int64_t)mxp_array_itemsize(a),
                                 mxp_array_dtype(a), 1, NULL), MXP_OK);
    return v;
}

static void test_list(void **state)
{
    (void)state;
    assert_int_equal(mxp_op_count(), 5);
    mxp_op_info info = { 0 };
    assert_int_equal(mxp_op_info_by_name("cosine_similarity", &info), MXP_OK);
    assert_int_equal(info.kind, MXP_OP_GENERAL);
    assert_int_equal(info.n_inputs, 2);
    assert_int_equal(info.has_reference, 1);
    assert_string_equal(info.check_shapes, "64x384,64x384");
    assert_string_equal(info.library, MXP_EXAMPLE_OPS);
    const char *sig;
    mxp_dtype in[2], out;
    assert_int_equal(mxp_op_kernel_at("cosine_similarity", 1, &sig, in, &out, NULL), MXP_OK);
    assert_string_equal(sig, "bfloat16,bfloat16->float32");
    assert_int_equal(in[0], MXP_BF16);
    assert_int_equal(out, MXP_F32);
    assert_string_equal(mxp_op_kind_name(MXP_OP_REDUCTION), "reduction");
    /* the same file again: nothing new */
    int n = 0;
    assert_int_equal(mxp_ops_load(MXP_EXAMPLE_OPS, &n), MXP_OK);
    assert_int_equal(n, 5);
    assert_int_equal(mxp_op_count(), 5);
}

/* The plugin's gelu is the built-in's, bit for bit, for each of its types
 * (both round a float64 evaluation once); float32 within 1 ulp. */
static void test_gelu_matches_builtin(void **state)
{
    (void)state;
    const int64_t n = 100000;
    const mxp_dtype types[] = { MXP_BF16, MXP_F16, MXP_F32 };
    for (int t = 0; t < 3; t++) {
        mxp_array *a = random_array(types[t], 1, &n, 5 + (uint64_t)t), *want = NULL, *got = NULL;
        assert_int_equal(mxp_unary(&want, MXP_OP_GELU, a, NULL), MXP_OK);
        assert_int_equal(mxp_op_call(&got, "gelu", (const mxp_array *[]){ a }, 1, NULL), MXP_OK);
        assert_int_equal(mxp_array_dtype(got), types[t]);
        if (types[t] != MXP_F32) {
            assert_memory_equal(mxp_array_data(got), mxp_array_data(want), (size_t)n * 2);
        } else {
            for (int64_t i = 0; i < n; i++)
                assert_true(fabs(at(got, i) - at(want, i)) <= 0x1p-23 * fabs(at(want, i)) + 0x1p-149);
        }
        mxp_array_free(a), mxp_array_free(want), mxp_array_free(got);
    }
}

/* bias_gelu broadcasts a (16,) bias over (3, 50, 16); float64 oracle; an
 * int8 input is converted safely to the float32 kernel; out dtype. */
static void test_bias_gelu_broadcast(void **state)
{
    (void)state;
    const int64_t xs[] = { 3, 50, 16 }, bs = 16;
    mxp_array *x = random_array(MXP_F32, 3, xs, 1), *b = random_array(MXP_F32, 1, &bs, 2), *y = NULL;
    assert_int_equal(mxp_op_call(&y, "bias_gelu", (const mxp_array *[]){ x, b }, 2, NULL), MXP_OK);
    assert_int_equal(mxp_array_ndim(y), 3);
    assert_memory_equal(mxp_array_shape(y), xs, sizeof xs);
    for (int64_t i = 0; i < 3 * 50 * 16; i++) {
        double s = at(x, i) + at(b, i % 16);
        float want = (float)(0.5 * s * erfc(-s / sqrt(2.0)));
        assert_true(at(y, i) == (double)want);
    }
    mxp_array_free(y);
    /* bfloat16 output of the float32 kernel */
    mxp_op_call_opts o = { .out_dtype = MXP_BF16 };
    assert_int_equal(mxp_op_call(&y, "bias_gelu", (const mxp_array *[]){ x, b }, 2, &o), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_BF16);
    double v = at(y, 17), s = at(x, 17) + at(b, 1);
    assert_true(fabs(v - 0.5 * s * erfc(-s / sqrt(2.0))) <= 0x1p-8 * fabs(v) + 1e-30);
    mxp_array_free(y);
    /* shapes that do not broadcast */
    const int64_t bad = 15;
    mxp_array *b2 = random_array(MXP_F32, 1, &bad, 3);
    assert_int_equal(mxp_op_call(&y, "bias_gelu", (const mxp_array *[]){ x, b2 }, 2, NULL), MXP_ERR_SHAPE);
    assert_null(y);
    mxp_array_free(b2), mxp_array_free(x), mxp_array_free(b);
}

/* The input dtype picks the kernel: exact first, then a safe conversion;
 * none fits: a sentence naming the signatures. */
static void test_kernel_choice(void **state)
{
    (void)state;
    const int64_t n = 300;
    mxp_array *a = random_array(MXP_E4M3, 1, &n, 4), *y = NULL, *w = NULL, *a32 = NULL;
    /* float8 -> the first kernel it converts to safely: float32 */
    assert_int_equal(mxp_op_call(&y, "gelu", (const mxp_array *[]){ a }, 1, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_F32);
    assert_int_equal(mxp_array_astype(&a32, a, MXP_F32, NULL), MXP_OK);
    assert_int_equal(mxp_op_call(&w, "gelu", (const mxp_array *[]){ a32 }, 1, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(y), mxp_array_data(w), (size_t)n * 4);
    mxp_array_free(y), mxp_array_free(w), mxp_array_free(a32), mxp_array_free(a);
    mxp_array *i = NULL;
    assert_int_equal(mxp_array_zeros(&i, MXP_S64, 1, &n), MXP_OK);
    assert_int_equal(mxp_op_call(&y, "gelu", (const mxp_array *[]){ i }, 1, NULL), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "float32->float32, bfloat16->bfloat16, float16->float16"));
    /* a forced signature: an unknown dtype name, and one that is not there */
    mxp_op_call_opts o = { .signature = "float64->float64" };
    assert_int_equal(mxp_op_call(&y, "gelu", (const mxp_array *[]){ i }, 1, &o), MXP_ERR_UNSUPPORTED);
    o.signature = "floatXX->float32";
    assert_int_equal(mxp_op_call(&y, "gelu", (const mxp_array *[]){ i }, 1, &o), MXP_ERR_INVALID_ARGUMENT);
    /* inputs: count, NULL, unknown operator */
    assert_int_equal(mxp_op_call(&y, "gelu", (const mxp_array *[]){ i, i }, 2, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_op_call(&y, "gelu", (const mxp_array *[]){ NULL }, 1, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_op_call(&y, "no_such_op", (const mxp_array *[]){ i }, 1, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "no operator named 'no_such_op'"));
    assert_int_equal(mxp_op_call(NULL, "gelu", (const mxp_array *[]){ i }, 1, NULL), MXP_ERR_INVALID_ARGUMENT);
    mxp_array_free(i);
}

/* out arrays: contiguous, strided, in place; refusals. */
static void test_into(void **state)
{
    (void)state;
    const int64_t s[] = { 40, 30 };
    mxp_array *x = random_array(MXP_F32, 2, s, 7), *want = NULL, *out = NULL, *big = NULL, *view = NULL;
    assert_int_equal(mxp_op_call(&want, "gelu_tanh", (const mxp_array *[]){ x }, 1, NULL), MXP_OK);
    assert_int_equal(mxp_array_empty(&out, MXP_F32, 2, s), MXP_OK);
    assert_int_equal(mxp_op_call_into(out, "gelu_tanh", (const mxp_array *[]){ x }, 1, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(out), mxp_array_data(want), 40 * 30 * 4);
    /* a strided out: every other column of (40, 60) */
    const int64_t s2[] = { 40, 60 };
    assert_int_equal(mxp_array_zeros(&big, MXP_F32, 2, s2), MXP_OK);
    mxp_slice sl[2] = { { 0, 40, 1 }, { 0, 60, 2 } };
    assert_int_equal(mxp_array_slice(&view, big, 2, sl), MXP_OK);
    assert_int_equal(mxp_op_call_into(view, "gelu_tanh", (const mxp_array *[]){ x }, 1, NULL), MXP_OK);
    for (int64_t i = 0; i < 40 * 30; i++)
        assert_true(at(big, 2 * i) == at(want, i) && at(big, 2 * i + 1) == 0);
    /* in place */
    assert_int_equal(mxp_op_call_into(x, "gelu_tanh", (const mxp_array *[]){ x }, 1, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(x), mxp_array_data(want), 40 * 30 * 4);
    /* wrong shape, wrong out_dtype, partial overlap */
    mxp_op_call_opts o = { .out_dtype = MXP_F64 };
    assert_int_equal(mxp_op_call_into(big, "gelu_tanh", (const mxp_array *[]){ x }, 1, NULL), MXP_ERR_SHAPE);
    assert_int_equal(mxp_op_call_into(out, "gelu_tanh", (const mxp_array *[]){ x }, 1, &o), MXP_ERR_INVALID_ARGUMENT);
    mxp_array *shifted = NULL;
    mxp_slice sl2[2] = { { 0, 40, 1 }, { 1, 31, 1 } };
    assert_int_equal(mxp_array_slice(&shifted, big, 2, sl2), MXP_OK);
    assert_int_equal(mxp_op_call_into(shifted, "gelu_tanh", (const mxp_array *[]){ view }, 1, NULL), MXP_ERR_OVERLAP);
    mxp_array_free(shifted), mxp_array_free(view), mxp_array_free(big), mxp_array_free(out);
    mxp_array_free(want), mxp_array_free(x);
}

static double lse(const double *v, int n)
{
    double m = -INFINITY, s = 0;
    for (int i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    for (int i = 0; i < n; i++)
        s += exp(v[i] - m);
    return m + log(s);
}

/* logsumexp along each axis (and keepdims, every axis) of (4, 5, 6). */
static void test_reduction_axes(void **state)
{
    (void)state;
    const int64_t s[] = { 4, 5, 6 };
    mxp_array *x = random_array(MXP_F32, 3, s, 9), *y = NULL;
    double v[120];
    for (int i = 0; i < 120; i++)
        v[i] = at(x, i);
    for (int axis = -1; axis < 3; axis++) {
        mxp_op_call_opts o = { .axis = axis, .set_axis = 1 };
        assert_int_equal(mxp_op_call(&y, "logsumexp", (const mxp_array *[]){ x }, 1, &o), MXP_OK);
        const int ax = axis < 0 ? 2 : axis;
        assert_int_equal(mxp_array_ndim(y), 2);
        for (int64_t i = 0; i < mxp_array_size(y); i++) {
            /* the result's index back to the input's */
            int64_t idx[3], r = i, k = 0;
            for (int d = 2; d >= 0; d--)
                if (d != ax)
                    idx[d] = r % s[d], r /= s[d];
            double row[6];
            for (idx[ax] = 0; idx[ax] < s[ax]; idx[ax]++)
                row[k++] = v[(idx[0] * 5 + idx[1]) * 6 + idx[2]];
            assert_true(at(y, i) == (double)(float)lse(row, (int)s[ax]));
        }
        mxp_array_free(y);
    }
    mxp_op_call_opts o = { .axis = 1, .set_axis = 1, .keepdims = 1 };
    assert_int_equal(mxp_op_call(&y, "logsumexp", (const mxp_array *[]){ x }, 1, &o), MXP_OK);
    assert_int_equal(mxp_array_ndim(y), 3);
    assert_int_equal(mxp_array_shape(y)[1], 1);
    mxp_array_free(y);
    o = (mxp_op_call_opts){ .axis = MXP_OP_ALL_AXES, .set_axis = 1 };
    assert_int_equal(mxp_op_call(&y, "logsumexp", (const mxp_array *[]){ x }, 1, &o), MXP_OK);
    assert_int_equal(mxp_array_ndim(y), 0);
    assert_true(fabs(at(y, 0) - lse(v, 120)) <= 1e-6 * fabs(lse(v, 120)));
    mxp_array_free(y);
    o = (mxp_op_call_opts){ .axis = 3, .set_axis = 1 };
    assert_int_equal(mxp_op_call(&y, "logsumexp", (const mxp_array *[]){ x }, 1, &o), MXP_ERR_INDEX);
    const int64_t z[] = { 3, 0 };
    mxp_array *e = NULL;
    assert_int_equal(mxp_array_empty(&e, MXP_F32, 2, z), MXP_OK);
    assert_int_equal(mxp_op_call(&y, "logsumexp", (const mxp_array *[]){ e }, 1, NULL), MXP_ERR_SHAPE);
    mxp_array_free(e), mxp_array_free(x);
}

/* A large reduction and a large elementwise call split over threads give
 * what one thread gives. */
static void test_threads_agree(void **state)
{
    (void)state;
    const int64_t s[] = { 3000, 100 };
    mxp_array *x = random_array(MXP_F32, 2, s, 11), *one = NULL, *two = NULL;
    const char *ops[] = { "logsumexp", "gelu_tanh" };
    for (int k = 0; k < 2; k++) {
        mxp_set_num_threads(1);
        assert_int_equal(mxp_op_call(&one, ops[k], (const mxp_array *[]){ x }, 1, NULL), MXP_OK);
        mxp_set_num_threads(4);
        assert_int_equal(mxp_op_call(&two, ops[k], (const mxp_array *[]){ x }, 1, NULL), MXP_OK);
        assert_memory_equal(mxp_array_data(one), mxp_array_data(two), (size_t)mxp_array_size(one) * 4);
        mxp_array_free(one), mxp_array_free(two);
    }
    mxp_set_num_threads(0);
    mxp_array_free(x);
}

/* cosine_similarity: a float64 oracle; a transposed (strided) input; the
 * shape function's refusal. */
static void test_general(void **state)
{
    (void)state;
    const int64_t s[] = { 7, 33 };
    mxp_array *a = random_array(MXP_BF16, 2, s, 12), *b = random_array(MXP_BF16, 2, s, 13), *y = NULL;
    assert_int_equal(mxp_op_call(&y, "cosine_similarity", (const mxp_array *[]){ a, b }, 2, NULL), MXP_OK);
    assert_int_equal(mxp_array_dtype(y), MXP_F32);
    assert_int_equal(mxp_array_ndim(y), 1);
    for (int r = 0; r < 7; r++) {
        double xy = 0, xx = 0, yy = 0;
        for (int i = 0; i < 33; i++) {
            double p = at(a, r * 33 + i), q = at(b, r * 33 + i);
            xy += p * q, xx += p * p, yy += q * q;
        }
        assert_true(at(y, r) == (double)(float)(xy / sqrt(xx * yy)));
    }
    mxp_array_free(y);
    mxp_array *t = NULL, *tt = NULL;
    assert_int_equal(mxp_array_transpose(&t, a, (const int[]){ 1, 0 }), MXP_OK);
    assert_int_equal(mxp_array_transpose(&tt, b, (const int[]){ 1, 0 }), MXP_OK);
    assert_int_equal(mxp_op_call(&y, "cosine_similarity", (const mxp_array *[]){ t, tt }, 2, NULL), MXP_OK);
    assert_int_equal(mxp_array_shape(y)[0], 33);
    mxp_array_free(y);
    assert_int_equal(mxp_op_call(&y, "cosine_similarity", (const mxp_array *[]){ a, t }, 2, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "two arrays of one shape"));
    mxp_array_free(t), mxp_array_free(tt), mxp_array_free(a), mxp_array_free(b);
}

/* gelu_tanh has a portable and an AVX2 kernel: MXP_ISA picks. */
static void test_isa_variants(void **state)
{
    (void)state;
    mxp_isa isa[2];
    assert_int_equal(mxp_op_kernel_at("gelu_tanh", 0, NULL, NULL, NULL, &isa[0]), MXP_OK);
    assert_int_equal(isa[0], MXP_ISA_SCALAR);
    if (mxp_op_kernel_at("gelu_tanh", 1, NULL, NULL, NULL, &isa[1]) != MXP_OK)
        skip(); /* built without the AVX2 variant */
    const mxp_isa was = mxp_get_isa();
    mxp_op_check_report r = { 0 };
    mxp_op_check_opts o = { .samples = 20000, .signature = "float32->float32" };
    int n;
    assert_int_equal(mxp_set_isa(MXP_ISA_SCALAR), MXP_OK);
    assert_int_equal(mxp_op_check("gelu_tanh", &o, &r, 1, &n), MXP_OK);
    assert_int_equal(r.isa, MXP_ISA_SCALAR);
    const double scalar_ulp = r.max_ulp;
    if (mxp_isa_supported() >= MXP_ISA_AVX2) {
        assert_int_equal(mxp_set_isa(MXP_ISA_AVX2), MXP_OK);
        assert_int_equal(mxp_op_check("gelu_tanh", &o, &r, 1, &n), MXP_OK);
        assert_int_equal(r.isa, MXP_ISA_AVX2);
        assert_true(r.max_ulp <= 4 * scalar_ulp + 4);
    }
    mxp_set_isa(was);
}

/* Precision: gelu correctly rounded but for double's own error (every
 * 16-bit pattern: exhaustive); the fast tanh form within a few ulp;
 * the reduction and the general operator; a built-in reference. */
static void test_check(void **state)
{
    (void)state;
    mxp_op_check_report r[4] = { 0 };
    int n = 0;
    mxp_op_check_opts o = { .samples = 100000, .seed = 3 };
    assert_int_equal(mxp_op_check("gelu", &o, r, 4, &n), MXP_OK);
    assert_int_equal(n, 3);
    assert_string_equal(r[0].signature, "float32->float32");
    assert_int_equal(r[0].exhaustive, 0);
    assert_true(r[0].max_ulp <= 1);
    for (int i = 1; i < 3; i++) {
        assert_int_equal(r[i].exhaustive, 1);
        assert_int_equal(r[i].count, 65536);
        assert_true(r[i].max_ulp == 0);
        assert_int_equal(r[i].nan_mismatch + r[i].inf_mismatch, 0);
    }
    o.signature = "f32->f32";
    assert_int_equal(mxp_op_check("gelu_tanh", &o, r, 4, &n), MXP_OK);
    assert_int_equal(n, 1);
    /* an approximation, and the check sees it: a few ulp, up to 2^8 where
     * results reach the subnormals (x near -10) */
    assert_true(r[0].max_ulp >= 1 && r[0].max_ulp <= 256 && r[0].mean_ulp < 0.5);
    o.signature = NULL;
    o.reference = "gelu_tanh"; /* mxp's own, correctly rounded */
    assert_int_equal(mxp_op_check("gelu_tanh", &o, r, 4, &n), MXP_OK);
    assert_int_equal(n, 3);
    assert_true(r[0].max_ulp <= 256);
    /* bfloat16 and float16 through the float32 kernel: within an ulp, every pattern */
    assert_true(r[1].exhaustive && r[1].max_ulp <= 1 && r[2].exhaustive && r[2].max_ulp <= 1);
    o.reference = NULL;
    assert_int_equal(mxp_op_check("bias_gelu", &o, r, 4, &n), MXP_OK);
    assert_int_equal(n, 2);
    assert_true(r[0].max_ulp <= 1 && r[1].max_ulp <= 1);
    assert_int_equal(mxp_op_check("logsumexp", &o, r, 4, &n), MXP_OK);
    assert_true(r[0].max_ulp <= 1);
    assert_int_equal(r[0].count, 100000 / 256);
    assert_int_equal(mxp_op_check("cosine_similarity", &o, r, 4, &n), MXP_OK);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].count, 64);
    assert_true(r[0].max_ulp <= 1 && r[1].max_ulp <= 1);
    /* errors: a built-in reference for a reduction, an unknown one, cap */
    o.reference = "exp";
    assert_int_equal(mxp_op_check("logsumexp", &o, r, 4, &n), MXP_ERR_INVALID_ARGUMENT);
    o.reference = "no_such_function";
    assert_int_equal(mxp_op_check("gelu", &o, r, 4, &n), MXP_ERR_INVALID_ARGUMENT);
    o.reference = NULL;
    assert_int_equal(mxp_op_check("gelu", &o, r, 1, &n), MXP_ERR_INVALID_ARGUMENT);
}

/* The distance counter on hand-made values. */
static void test_compare(void **state)
{
    (void)state;
    const float got[] = { 1.0f, nextafterf(1.0f, 2), -0.0f, INFINITY, NAN, 1.0f, -1e-45f };
    const float want[] = { 1.0f, 1.0f, 0.0f, INFINITY, NAN, NAN, 1e-45f };
    mxp_op_check_report r = { 0 };
    assert_int_equal(mxp_op_check_compare(got, want, MXP_F32, 7, &r), MXP_OK);
    assert_int_equal(r.count, 7);
    assert_int_equal(r.nan_mismatch, 1);
    assert_int_equal(r.inf_mismatch, 0);
    assert_true(r.max_ulp == 2); /* -min subnormal to +min subnormal */
    assert_int_equal(r.worst_index, 6);
    assert_int_equal(r.histogram[0], 2); /* 1 = 1 and -0 = +0 (equal infinities and NaNs are not distances) */
    assert_int_equal(r.histogram[1], 1);
    assert_int_equal(r.histogram[2], 1);
    const uint16_t bg[] = { 0x3f80, 0x3f90 }, bw[] = { 0x3f81, 0x3f80 };
    assert_int_equal(mxp_op_check_compare(bg, bw, MXP_BF16, 2, &r), MXP_OK);
    assert_true(r.max_ulp == 16);
    assert_int_equal(r.histogram[5], 1); /* (8, 16] */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list),
        cmocka_unit_test(test_gelu_matches_builtin),
        cmocka_unit_test(test_bias_gelu_broadcast),
        cmocka_unit_test(test_kernel_choice),
        cmocka_unit_test(test_into),
        cmocka_unit_test(test_reduction_axes),
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_general),
        cmocka_unit_test(test_isa_variants),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_compare),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
