/* Large elementwise operations split over threads give the bits and flag
 * counters of one thread, whatever the thread count (1 against 2, 3, 7):
 * unary and binary ops in float32, float16, bfloat16, float64 and int8
 * (saturating), new and existing outputs, stochastic rounding with an index
 * offset and counters, in place, broadcasting, a transposed view, and the
 * 1-d strided entry points (strides, a negative stride, a broadcast scalar);
 * and the split happens (mxp_ew_threads) only above the size threshold. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "ops/ops-internal.h"

/* 4M + 37 elements: > 8 MiB touched by every cheap op below (int8
 * negative: 2 bytes each), so at least 2 shares; 7 shares for float32.  Share
 * boundaries fall mid-row and off the vector length. */
enum { N = (4 << 20) + 37 };
static const int counts[] = { 2, 3, 7 };

static mxp_array *input(mxp_dtype t, int64_t n, uint64_t seed)
{
    mxp_array *a = NULL;
    const double scale = t == MXP_S8 ? 80.0 : 3.0; /* int8: sums that saturate */
    assert_int_equal(mxp_array_random_normal(&a, t, 1, &n, 0.25, scale, seed), MXP_OK);
    if (t != MXP_S8) { /* a few specials: NaN, infinities, huge, tiny */
        mxp_array *sp = NULL;
        const double v[] = { NAN, INFINITY, -INFINITY, 1e300, 1e-300, -0.0, 70000.0 };
        for (int k = 0; k < 7; k++) {
            assert_int_equal(mxp_array_scalar(&sp, v[k], t), MXP_OK);
            for (int64_t i = k * 977 + 5; i < n; i += 104729)
                memcpy((char *)mxp_array_data(a) + i * (int64_t)mxp_array_itemsize(a), mxp_array_data(sp),
                       mxp_array_itemsize(a));
            mxp_array_free(sp);
        }
    }
    return a;
}

static void assert_same(const mxp_array *x, const mxp_array *y)
{
    assert_int_equal(mxp_array_dtype(x), mxp_array_dtype(y));
    assert_int_equal(mxp_array_size(x), mxp_array_size(y));
    assert_true(mxp_array_flags(x) & MXP_ARRAY_C_CONTIGUOUS);
    assert_true(mxp_array_flags(y) & MXP_ARRAY_C_CONTIGUOUS);
    assert_memory_equal(mxp_array_data(x), mxp_array_data(y), (size_t)mxp_array_size(x) * mxp_array_itemsize(x));
}

static void assert_same_flags(const mxp_convert_flags *x, const mxp_convert_flags *y)
{
    assert_true(x->inexact == y->inexact && x->overflow == y->overflow && x->underflow == y->underflow &&
                x->invalid == y->invalid);
}

/* One op at 1 thread and at 2, 3, 7 (nin 1: unary op; 2: binary op). */
static void check_op(int nin, int op, mxp_dtype t, const mxp_ops_opts *base)
{
    mxp_array *a = input(t, N, 1), *b = input(t, N, 2), *ref = NULL;
    mxp_convert_flags f1 = { 0 };
    mxp_ops_opts o = base ? *base : (mxp_ops_opts){ 0 };
    if (base && base->convert.flags)
        o.convert.flags = &f1;
    mxp_set_num_threads(1);
    assert_int_equal(nin == 1 ? mxp_unary(&ref, op, a, &o) : mxp_binary(&ref, op, a, b, &o), MXP_OK);
    mxp_ew_plan p;
    if (nin == 1)
        mxp_ew_plan_unary(&p, op, t, mxp_array_dtype(ref), &o.convert);
    else
        mxp_ew_plan_binary(&p, op, t, t, mxp_array_dtype(ref), &o.convert);
    assert_int_equal(mxp_ew_threads(&p, N), 1);
    for (int c = 0; c < 3; c++) {
        mxp_set_num_threads(counts[c]);
        const int th = mxp_ew_threads(&p, N);
        assert_true(th >= 2 && th <= counts[c]);
        assert_int_equal(mxp_ew_threads(&p, 4096), 1); /* small: no split */
        mxp_array *r = NULL;
        mxp_convert_flags f = { 0 };
        if (o.convert.flags)
            o.convert.flags = &f;
        assert_int_equal(nin == 1 ? mxp_unary(&r, op, a, &o) : mxp_binary(&r, op, a, b, &o), MXP_OK);
        assert_same(ref, r);
        if (o.convert.flags)
            assert_same_flags(&f1, &f);
        /* into an existing array, and in place (out is a) when the dtypes allow */
        memset(mxp_array_data(r), 0x5a, (size_t)N * mxp_array_itemsize(r));
        f = (mxp_convert_flags){ 0 };
        assert_int_equal(nin == 1 ? mxp_unary_into(r, op, a, &o) : mxp_binary_into(r, op, a, b, &o), MXP_OK);
        assert_same(ref, r);
        if (o.convert.flags)
            assert_same_flags(&f1, &f);
        if (mxp_array_dtype(ref) == t) {
            mxp_array *x = NULL;
            assert_int_equal(mxp_array_astype(&x, a, t, NULL), MXP_OK);
            assert_int_equal(nin == 1 ? mxp_unary_into(x, op, x, &o) : mxp_binary_into(x, op, x, b, &o), MXP_OK);
            assert_same(ref, x);
            mxp_array_free(x);
        }
        mxp_array_free(r);
    }
    mxp_set_num_threads(0);
    mxp_array_free(a);
    mxp_array_free(b);
    mxp_array_free(ref);
}

static const mxp_dtype types[] = { MXP_F32, MXP_F16, MXP_BF16, MXP_F64, MXP_S8 };

static void test_unary_ops(void **state)
{
    (void)state;
    const int ops[] = { MXP_OP_TANH, MXP_OP_EXP, MXP_OP_GELU, MXP_OP_SQRT, MXP_OP_NEGATIVE, MXP_OP_RELU };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            if (types[t] == MXP_S8 && ops[k] != MXP_OP_NEGATIVE && ops[k] != MXP_OP_RELU)
                continue; /* float results: covered by the float types */
            check_op(1, ops[k], types[t], NULL);
        }
    }
}

static void test_binary_ops(void **state)
{
    (void)state;
    const int ops[] = { MXP_OP_ADD, MXP_OP_MULTIPLY, MXP_OP_DIVIDE, MXP_OP_POWER, MXP_OP_LESS };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            if (types[t] != MXP_S8 || ops[k] != MXP_OP_DIVIDE)
                check_op(2, ops[k], types[t], NULL);
}

/* Stochastic rounding (its stream offset per share) with counters; int8
 * saturating from float32 sums. */
static void test_stochastic_and_counters(void **state)
{
    (void)state;
    mxp_convert_flags dummy;
    mxp_ops_opts o = { .out_dtype = MXP_BF16,
                       .convert = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 77, .flags = &dummy,
                                    .index_offset = 123456789 } };
    check_op(2, MXP_OP_ADD, MXP_F32, &o);
    check_op(1, MXP_OP_TANH, MXP_F32, &o);
    o.out_dtype = MXP_F16;
    check_op(1, MXP_OP_EXP, MXP_F32, &o);
    check_op(2, MXP_OP_MULTIPLY, MXP_F16, &o);
    o.out_dtype = MXP_E4M3;
    o.convert.overflow = MXP_OVERFLOW_SATURATE;
    check_op(1, MXP_OP_GELU, MXP_BF16, &o);
    o = (mxp_ops_opts){ .out_dtype = MXP_S8, .convert = { .flags = &dummy } };
    check_op(2, MXP_OP_ADD, MXP_F32, &o);
    o = (mxp_ops_opts){ .convert = { .rounding = MXP_ROUND_TOWARD_ZERO, .flags = &dummy } };
    check_op(2, MXP_OP_DIVIDE, MXP_BF16, &o);
}

/* Broadcasting (rows of a view with stride 0; share boundaries mid-row)
 * and a transposed input: the n-d walk from any flat index. */
static void test_broadcast_and_views(void **state)
{
    (void)state;
    const int64_t rows = 1531, cols = 2053; /* 3.1M elements */
    const int64_t shape[2] = { rows, cols }, row[2] = { 1, cols }, col[2] = { rows, 1 }, tshape[2] = { cols, rows };
    const mxp_dtype ts[] = { MXP_F32, MXP_BF16 };
    for (int d = 0; d < 2; d++) {
        mxp_array *a = NULL, *b = NULL, *c = NULL, *at = NULL, *tv = NULL;
        assert_int_equal(mxp_array_random_normal(&a, ts[d], 2, shape, 0, 2, 3), MXP_OK);
        assert_int_equal(mxp_array_random_normal(&b, ts[d], 2, row, 0, 2, 4), MXP_OK);
        assert_int_equal(mxp_array_random_normal(&c, ts[d], 2, col, 0, 2, 5), MXP_OK);
        assert_int_equal(mxp_array_random_normal(&at, ts[d], 2, tshape, 0, 2, 6), MXP_OK);
        assert_int_equal(mxp_array_transpose(&tv, at, NULL), MXP_OK);
        mxp_array *ref[4] = { NULL };
        mxp_convert_flags fl[2] = { { 0 } };
        mxp_ops_opts o = { .out_dtype = MXP_F16,
                           .convert = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 9, .flags = &fl[0] } };
        mxp_set_num_threads(1);
        assert_int_equal(mxp_binary(&ref[0], MXP_OP_ADD, a, b, NULL), MXP_OK);
        assert_int_equal(mxp_binary(&ref[1], MXP_OP_HYPOT, c, b, &o), MXP_OK);
        assert_int_equal(mxp_binary(&ref[2], MXP_OP_MULTIPLY, tv, a, NULL), MXP_OK);
        assert_int_equal(mxp_unary(&ref[3], MXP_OP_SIGMOID, tv, NULL), MXP_OK);
        for (int k = 0; k < 3; k++) {
            mxp_set_num_threads(counts[k]);
            mxp_array *r[4] = { NULL };
            o.convert.flags = &fl[1];
            fl[1] = (mxp_convert_flags){ 0 };
            assert_int_equal(mxp_binary(&r[0], MXP_OP_ADD, a, b, NULL), MXP_OK);
            assert_int_equal(mxp_binary(&r[1], MXP_OP_HYPOT, c, b, &o), MXP_OK);
            assert_int_equal(mxp_binary(&r[2], MXP_OP_MULTIPLY, tv, a, NULL), MXP_OK);
            assert_int_equal(mxp_unary(&r[3], MXP_OP_SIGMOID, tv, NULL), MXP_OK);
            assert_same_flags(&fl[0], &fl[1]);
            for (int i = 0; i < 4; i++) {
                assert_same(ref[i], r[i]);
                mxp_array_free(r[i]);
            }
            o.convert.flags = &fl[0];
        }
        mxp_set_num_threads(0);
        for (int i = 0; i < 4; i++)
            mxp_array_free(ref[i]);
        mxp_array_free(a);
        mxp_array_free(b);
        mxp_array_free(c);
        mxp_array_free(at);
        mxp_array_free(tv);
    }
}

/* mxp_unary_strided / mxp_binary_strided: every other element, a negative
 * output stride, a broadcast scalar (stride 0), stochastic rounding with
 * counters, in place. */
static void test_strided(void **state)
{
    (void)state;
    const size_t n = N / 2;
    mxp_array *a = input(MXP_F32, N, 7), *b = input(MXP_F32, N, 8);
    const float *x = mxp_array_data(a), *y = mxp_array_data(b);
    uint16_t *ref = calloc(2 * n, 2), *got = calloc(2 * n, 2);
    float *ip_ref = malloc(N * 4), *ip = malloc(N * 4);
    assert_non_null(ref);
    assert_non_null(got);
    assert_non_null(ip_ref);
    assert_non_null(ip);
    mxp_convert_flags f1 = { 0 }, f = { 0 };
    mxp_convert_opts c = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 5, .index_offset = 99, .flags = &f1 };
    for (int case_ = 0; case_ < 4; case_++) {
        mxp_set_num_threads(1);
        memset(ref, 0, 4 * n);
        f1 = (mxp_convert_flags){ 0 };
        c.flags = &f1;
        mxp_status st;
        uint16_t *last_ref = ref + 2 * (n - 1), *last = got + 2 * (n - 1);
        switch (case_) {
        case 0: st = mxp_unary_strided(MXP_OP_TANH, n, ref, MXP_BF16, 4, x, MXP_F32, 8, &c); break;
        case 1: st = mxp_unary_strided(MXP_OP_EXP, n, last_ref, MXP_F16, -4, x + 1, MXP_F32, 8, NULL); break;
        case 2: st = mxp_binary_strided(MXP_OP_ADD, n, ref, MXP_BF16, 4, x, MXP_F32, 8, y, MXP_F32, 0, &c); break;
        default: st = mxp_binary_strided(MXP_OP_MULTIPLY, N / 2, ref, MXP_F16, 2, x, MXP_F32, 4, y, MXP_F32, 4, &c); break;
        }
        assert_int_equal(st, MXP_OK);
        mxp_ew_plan p;
        mxp_ew_plan_unary(&p, MXP_OP_TANH, MXP_F32, MXP_BF16, &c);
        for (int k = 0; k < 3; k++) {
            mxp_set_num_threads(counts[k]);
            assert_true(mxp_ew_threads(&p, n) >= 2);
            memset(got, 0, 4 * n);
            f = (mxp_convert_flags){ 0 };
            c.flags = &f;
            switch (case_) {
            case 0: st = mxp_unary_strided(MXP_OP_TANH, n, got, MXP_BF16, 4, x, MXP_F32, 8, &c); break;
            case 1: st = mxp_unary_strided(MXP_OP_EXP, n, last, MXP_F16, -4, x + 1, MXP_F32, 8, NULL); break;
            case 2: st = mxp_binary_strided(MXP_OP_ADD, n, got, MXP_BF16, 4, x, MXP_F32, 8, y, MXP_F32, 0, &c); break;
            default: st = mxp_binary_strided(MXP_OP_MULTIPLY, N / 2, got, MXP_F16, 2, x, MXP_F32, 4, y, MXP_F32, 4, &c); break;
            }
            assert_int_equal(st, MXP_OK);
            assert_memory_equal(ref, got, 4 * n);
            assert_same_flags(&f1, &f);
        }
    }
    /* in place: out is a, element for element */
    mxp_set_num_threads(1);
    memcpy(ip_ref, x, N * 4);
    assert_int_equal(mxp_unary_strided(MXP_OP_GELU_TANH, N, ip_ref, MXP_F32, 4, ip_ref, MXP_F32, 4, NULL), MXP_OK);
    for (int k = 0; k < 3; k++) {
        mxp_set_num_threads(counts[k]);
        memcpy(ip, x, N * 4);
        assert_int_equal(mxp_unary_strided(MXP_OP_GELU_TANH, N, ip, MXP_F32, 4, ip, MXP_F32, 4, NULL), MXP_OK);
        assert_memory_equal(ip_ref, ip, N * 4);
        memcpy(ip, x, N * 4);
        assert_int_equal(mxp_binary_strided(MXP_OP_SUBTRACT, N, ip, MXP_F32, 4, ip, MXP_F32, 4, y, MXP_F32, 4, NULL),
                         MXP_OK);
        for (size_t i = 0; i < N; i += 4099)
            assert_true(ip[i] == x[i] - y[i] || (ip[i] != ip[i]));
    }
    mxp_set_num_threads(0);
    free(ref);
    free(got);
    free(ip_ref);
    free(ip);
    mxp_array_free(a);
    mxp_array_free(b);
}

static void dummy_kernel(void *out, const void *in, size_t n, void *ctx)
{
    (void)out, (void)in, (void)n, (void)ctx;
}

/* The threshold: cheap ops split from 8 MiB touched, functions per element
 * from 2 MiB; a caller's kernel never. */
static void test_threshold(void **state)
{
    (void)state;
    mxp_set_num_threads(2);
    mxp_ew_plan p;
    mxp_ew_plan_binary(&p, MXP_OP_ADD, MXP_F32, MXP_F32, MXP_F32, NULL); /* 12 bytes per element */
    assert_int_equal(mxp_ew_threads(&p, (8 << 20) / 12 - 1000), 1);
    assert_int_equal(mxp_ew_threads(&p, (8 << 20) / 12 + 1000), 2);
    mxp_ew_plan_unary(&p, MXP_OP_TANH, MXP_F32, MXP_F32, NULL); /* 8 bytes per element */
    assert_int_equal(mxp_ew_threads(&p, (2 << 20) / 8 - 1000), 1);
    assert_int_equal(mxp_ew_threads(&p, (2 << 20) / 8 + 1000), 2);
    p.custom = dummy_kernel;
    assert_int_equal(mxp_ew_threads(&p, 1 << 30), 1);
    mxp_set_num_threads(1);
    mxp_ew_plan_unary(&p, MXP_OP_TANH, MXP_F32, MXP_F32, NULL);
    assert_int_equal(mxp_ew_threads(&p, 1 << 30), 1);
    mxp_set_num_threads(0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threshold),
        cmocka_unit_test(test_unary_ops),
        cmocka_unit_test(test_binary_ops),
        cmocka_unit_test(test_stochastic_and_counters),
        cmocka_unit_test(test_broadcast_and_views),
        cmocka_unit_test(test_strided),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
