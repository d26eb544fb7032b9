/* mxp_gemm with sub-byte integer operands (int4/uint4, int2/uint2,
 * int1/uint1; a byte per element, the bits above the type ignored): exact
 * int32 sums against an int64 reference that decodes the low bits itself,
 * both transposes, leading dimensions wider than the rows, zero points;
 * with a float operand the same bytes as the call on a float32 copy; the
 * requantizing epilogue the same bytes as on an int8 copy; refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/prng.h"

enum { M = 7, N = 9, K = 13, LD = 17 };

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint32_t next(void)
{
    return (uint32_t)(prng_next(&state) >> 16);
}

/* The value of a stored byte of sub-byte type t: its low bits, sign-extended
 * for the signed types (the reference's own decoding, not mxp_convert's). */
static int64_t value(uint8_t byte, mxp_dtype t)
{
    const int bits = t == MXP_S4 || t == MXP_U4 ? 4 : t == MXP_S2 || t == MXP_U2 ? 2 : t == MXP_S1 || t == MXP_U1 ? 1 : 8;
    const bool is_signed = t == MXP_S4 || t == MXP_S2 || t == MXP_S1 || t == MXP_S8;
    int64_t v = byte & ((1u << bits) - 1);
    if (bits == 8)
        v = is_signed ? (int8_t)byte : byte;
    else if (is_signed && v >= (1 << (bits - 1)))
        v -= 1 << bits;
    return v;
}

/* rows x cols (stored; LD apart) of random bytes: every sub-byte code with
 * random bits above it. */
static void fill(uint8_t *p, size_t rows, size_t cols)
{
    for (size_t i = 0; i < rows * LD; i++)
        p[i] = (uint8_t)next();
    (void)cols;
}

static int64_t at(const uint8_t *p, mxp_dtype t, bool trans, size_t i, size_t j)
{
    return value(trans ? p[j * LD + i] : p[i * LD + j], t);
}

static void check_int_product(mxp_dtype at_, mxp_dtype bt, int32_t za, int32_t zb)
{
    static uint8_t a[K * LD], b[K * LD];
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            fill(a, ta ? K : M, ta ? M : K);
            fill(b, tb ? N : K, tb ? K : N);
            int32_t c[M * N];
            mxp_gemm_opts o = { .a_zero_point = za, .b_zero_point = zb };
            assert_int_equal(mxp_gemm(ta ? MXP_TRANS : MXP_NO_TRANS, tb ? MXP_TRANS : MXP_NO_TRANS, M, N, K, 1.0, a,
                                      at_, LD, b, bt, LD, 0.0, c, MXP_S32, N, &o),
                             MXP_OK);
            for (size_t i = 0; i < M; i++)
                for (size_t j = 0; j < N; j++) {
                    int64_t s = 0;
                    for (size_t q = 0; q < K; q++)
                        s += (at(a, at_, ta, i, q) - za) * (at(b, bt, tb, q, j) - zb);
                    assert_int_equal(c[i * N + j], s);
                }
        }
}

static void test_integer_products_are_exact(void **state_)
{
    (void)state_;
    check_int_product(MXP_S4, MXP_S8, 0, 0);
    check_int_product(MXP_U4, MXP_S8, 8, 0);
    check_int_product(MXP_S8, MXP_S4, 3, 0);
    check_int_product(MXP_U8, MXP_U4, 0, 0);
    check_int_product(MXP_S4, MXP_S4, 0, 0);
    check_int_product(MXP_U4, MXP_U4, 7, 0);
    check_int_product(MXP_S2, MXP_U2, 0, 0);
    check_int_product(MXP_U1, MXP_S1, 0, 0);
}

/* A sub-byte A (or B) beside a float operand: the bytes of the call with it
 * converted to float32 first. */
static void test_with_a_float_operand(void **state_)
{
    (void)state_;
    static uint8_t q[K * LD];
    static float qf[K * LD], f[K * LD];
    fill(q, K, K);
    assert_int_equal(mxp_convert(qf, MXP_F32, q, MXP_S4, K * LD, NULL), MXP_OK);
    for (size_t i = 0; i < K * LD; i++)
        f[i] = (float)((int)(next() % 2001) - 1000) / 64.0f;
    uint16_t h[K * LD];
    assert_int_equal(mxp_convert(h, MXP_F16, f, MXP_F32, K * LD, NULL), MXP_OK);
    float c1[M * N], c2[M * N];
    /* int4 A x float32 B, float32 C */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_TRANS, M, N, K, 0.5, q, MXP_S4, LD, f, MXP_F32, LD, 0.0, c1, MXP_F32,
                              N, NULL), MXP_OK);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_TRANS, M, N, K, 0.5, qf, MXP_F32, LD, f, MXP_F32, LD, 0.0, c2, MXP_F32,
                              N, NULL), MXP_OK);
    assert_memory_equal(c1, c2, sizeof c1);
    /* float16 A x uint4 B */
    assert_int_equal(mxp_convert(qf, MXP_F32, q, MXP_U4, K * LD, NULL), MXP_OK);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, h, MXP_F16, LD, q, MXP_U4, LD, 0.0, c1,
                              MXP_F32, N, NULL), MXP_OK);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, h, MXP_F16, LD, qf, MXP_F32, LD, 0.0, c2,
                              MXP_F32, N, NULL), MXP_OK);
    assert_memory_equal(c1, c2, sizeof c1);
    /* small integers times exact floats: the float64 sum, exactly */
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double s = 0;
            for (size_t k = 0; k < K; k++)
                s += (double)f[i * LD + k] * (double)value(q[k * LD + j], MXP_U4);
            assert_true((double)c1[i * N + j] == s); /* |terms| < 2^14 in steps of 2^-6: exact in float32 */
        }
}

/* Requantized int8 C with per-column scales: the int8 copy's bytes. */
static void test_epilogues_equal_the_int8_copy(void **state_)
{
    (void)state_;
    static uint8_t a[K * LD], b[K * LD];
    static int8_t a8[K * LD];
    fill(a, M, K);
    fill(b, K, N);
    for (size_t i = 0; i < K * LD; i++) {
        a8[i] = (int8_t)value(a[i], MXP_S4);
        b[i] = (uint8_t)(int8_t)(b[i] % 200 - 100);
    }
    float scales[N];
    for (int j = 0; j < N; j++)
        scales[j] = 0.01f * (float)(j + 1);
    mxp_gemm_opts o = { .scales = scales, .n_scales = N, .c_zero_point = -3, .activation = MXP_ACT_RELU };
    int8_t c1[M * N], c2[M * N];
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_S4, LD, b, MXP_S8, LD, 0.0, c1, MXP_S8,
                              N, &o), MXP_OK);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a8, MXP_S8, LD, b, MXP_S8, LD, 0.0, c2, MXP_S8,
                              N, &o), MXP_OK);
    assert_memory_equal(c1, c2, sizeof c1);
    assert_string_equal(mxp_gemm_kernel_name(MXP_S4, MXP_S8, NULL), mxp_gemm_kernel_name(MXP_S8, MXP_S8, NULL));
    assert_string_equal(mxp_gemm_kernel_name(MXP_U4, MXP_U2, NULL), mxp_gemm_kernel_name(MXP_U8, MXP_S8, NULL));
}

static void test_refusals(void **state_)
{
    (void)state_;
    uint8_t a[16] = { 0 }, b[16] = { 0 }, c[16];
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 2, 1.0, a, MXP_S8, 2, b, MXP_S8, 2, 0.0, c, MXP_S4, 2,
                              NULL), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "C is int4"));
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 2, 1.0, a, MXP_S4, 2, b, MXP_U8, 2, 0.0, c, MXP_S32, 2,
                              NULL), MXP_ERR_UNSUPPORTED);
    assert_non_null(strstr(mxp_last_error(), "A is int8 and B is uint8"));
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 2, 1.0, a, MXP_S4, 1, b, MXP_S8, 2, 0.0, c, MXP_S32, 2,
                              NULL), MXP_ERR_INVALID_ARGUMENT); /* lda 1 < 2: checked before any widening */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 2, 1.0, NULL, MXP_S4, 2, b, MXP_S8, 2, 0.0, c,
                              MXP_S32, 2, NULL), MXP_ERR_INVALID_ARGUMENT);
    /* empty products: nothing read, C scaled by beta as always */
    int32_t ci[4] = { 1, 2, 3, 4 };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 0, 1.0, NULL, MXP_S4, 1, NULL, MXP_S8, 2, 1.0, ci,
                              MXP_S32, 2, NULL), MXP_OK);
    assert_int_equal(ci[3], 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integer_products_are_exact),
        cmocka_unit_test(test_with_a_float_operand),
        cmocka_unit_test(test_epilogues_equal_the_int8_copy),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
