/* The 1-d strided entry points (NumPy ufunc inner loops): equal to
 * mxp_binary/mxp_unary on the same data, with negative, zero (broadcast)
 * and non-unit strides, n = 0, 1, odd sizes and sizes across blocks, in
 * place, stochastic rounding's element index; sum and product; bad input. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static void fill_random(void *p, size_t bytes, uint64_t seed)
{
    unsigned char *c = p;
    for (size_t i = 0; i < bytes; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        c[i] = (unsigned char)(seed >> 56);
    }
}

static mxp_array *vec(mxp_dtype dt, const void *data, int64_t n)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_empty(&a, dt, 1, &n), MXP_OK);
    if (n)
        memcpy(mxp_array_data(a), data, (size_t)n * mxp_dtype_itemsize(dt));
    return a;
}

/* Bits equal, or both NaN of a float dtype (payloads may differ). */
static void assert_same_elements(mxp_dtype dt, const unsigned char *x, const unsigned char *y, size_t n,
                                 const char *what)
{
    const size_t size = mxp_dtype_itemsize(dt);
    for (size_t i = 0; i < n; i++) {
        if (!memcmp(x + i * size, y + i * size, size))
            continue;
        double a, b;
        mxp_convert(&a, MXP_F64, x + i * size, dt, 1, NULL);
        mxp_convert(&b, MXP_F64, y + i * size, dt, 1, NULL);
        if (!(isnan(a) && isnan(b)))
            fail_msg("%s: element %zu of %zu: %.9g != %.9g", what, i, n, a, b);
    }
}

typedef struct bcase { mxp_binary_op op; mxp_dtype a, b; } bcase;
typedef struct ucase { mxp_unary_op op; mxp_dtype a; } ucase;

static const bcase bcases[] = {
    { MXP_OP_ADD, MXP_BF16, MXP_BF16 },         { MXP_OP_MULTIPLY, MXP_F16, MXP_E4M3 },
    { MXP_OP_DIVIDE, MXP_S8, MXP_S8 },          { MXP_OP_FLOOR_DIVIDE, MXP_S16, MXP_S16 },
    { MXP_OP_REMAINDER, MXP_BF16, MXP_BF16 },   { MXP_OP_ARCTAN2, MXP_E5M2, MXP_E5M2 },
    { MXP_OP_NEXTAFTER, MXP_BF16, MXP_F32 },    { MXP_OP_LESS, MXP_BF16, MXP_F64 },
    { MXP_OP_LOGICAL_OR, MXP_E4M3, MXP_U8 },    { MXP_OP_FMAX, MXP_F32, MXP_F32 },
    { MXP_OP_SUBTRACT, MXP_F64, MXP_BF16 },     { MXP_OP_LDEXP, MXP_BF16, MXP_S8 },
};
static const ucase ucases[] = {
    { MXP_OP_SQRT, MXP_BF16 }, { MXP_OP_SIN, MXP_F16 },       { MXP_OP_RINT, MXP_E4M3 },
    { MXP_OP_ISNAN, MXP_BF16 }, { MXP_OP_SPACING, MXP_E5M2 }, { MXP_OP_SQUARE, MXP_S8 },
    { MXP_OP_GELU, MXP_F32 },  { MXP_OP_FREXP_EXPONENT, MXP_BF16 }, { MXP_OP_NEGATIVE, MXP_F64 },
};

/* Contiguous strided calls give mxp_binary's and mxp_unary's bits, for
 * sizes around the 1024-element block. */
static void test_strided_equals_the_array_operations(void **state)
{
    (void)state;
    const size_t sizes[] = { 1, 2, 17, 1023, 1024, 1025, 3001 };
    enum { MAXN = 3001 };
    unsigned char *x = malloc(MAXN * 8), *y = malloc(MAXN * 8), *o = malloc(MAXN * 8);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s];
        for (size_t c = 0; c < sizeof bcases / sizeof bcases[0]; c++) {
            const bcase k = bcases[c];
            fill_random(x, n * 8, 3 + c + n);
            fill_random(y, n * 8, 99 + c + n);
            mxp_array *a = vec(k.a, x, (int64_t)n), *b = vec(k.b, y, (int64_t)n), *r = NULL;
            assert_int_equal(mxp_binary(&r, k.op, a, b, NULL), MXP_OK);
            const mxp_dtype rt = mxp_array_dtype(r);
            assert_int_equal(mxp_binary_strided(k.op, n, o, rt, (ptrdiff_t)mxp_dtype_itemsize(rt), x, k.a,
                                                (ptrdiff_t)mxp_dtype_itemsize(k.a), y, k.b,
                                                (ptrdiff_t)mxp_dtype_itemsize(k.b), NULL),
                             MXP_OK);
            assert_same_elements(rt, mxp_array_data(r), o, n, mxp_binary_op_name(k.op));
            mxp_array_free(a);
            mxp_array_free(b);
            mxp_array_free(r);
        }
        for (size_t c = 0; c < sizeof ucases / sizeof ucases[0]; c++) {
            const ucase k = ucases[c];
            fill_random(x, n * 8, 7 + c + n);
            mxp_array *a = vec(k.a, x, (int64_t)n), *r = NULL;
            assert_int_equal(mxp_unary(&r, k.op, a, NULL), MXP_OK);
            const mxp_dtype rt = mxp_array_dtype(r);
            assert_int_equal(mxp_unary_strided(k.op, n, o, rt, (ptrdiff_t)mxp_dtype_itemsize(rt), x, k.a,
                                               (ptrdiff_t)mxp_dtype_itemsize(k.a), NULL),
                             MXP_OK);
            assert_same_elements(rt, mxp_array_data(r), o, n, mxp_unary_op_name(k.op));
            mxp_array_free(a);
            mxp_array_free(r);
        }
    }
    free(x);
    free(y);
    free(o);
}

/* a read backwards (negative stride), b one broadcast scalar (stride 0),
 * out every third element: each element equals a 1-element call. */
static void test_negative_zero_and_non_unit_strides(void **state)
{
    (void)state;
    const size_t sizes[] = { 0, 1, 7, 1025, 2500 };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s];
        uint16_t *a = malloc((n + 1) * 2 * sizeof *a), scalar = mxp_f32_to_bf16(0.375f);
        uint16_t *out = malloc((n + 1) * 3 * sizeof *out);
        fill_random(a, (n + 1) * 2 * sizeof *a, n);
        memset(out, 0xee, (n + 1) * 3 * sizeof *out);
        const uint16_t *last = a + (n ? 2 * (n - 1) : 0);
        assert_int_equal(mxp_binary_strided(MXP_OP_HYPOT, n, out, MXP_BF16, 6, last, MXP_BF16, -4, &scalar, MXP_BF16,
                                            0, NULL),
                         MXP_OK);
        for (size_t i = 0; i < n; i++) {
            uint16_t want;
            assert_int_equal(mxp_binary_strided(MXP_OP_HYPOT, 1, &want, MXP_BF16, 2, last - 2 * i, MXP_BF16, 2,
                                                &scalar, MXP_BF16, 2, NULL),
                             MXP_OK);
            assert_same_elements(MXP_BF16, (unsigned char *)&want, (unsigned char *)&out[3 * i], 1, "hypot");
            assert_int_equal(out[3 * i + 1], 0xeeee); /* the gaps are untouched */
        }
        /* unary with a negative input stride and a negative output stride */
        if (n) {
            assert_int_equal(mxp_unary_strided(MXP_OP_EXPM1, n, out + 3 * (n - 1), MXP_F16, -6, a, MXP_BF16, 4,
                                               NULL),
                             MXP_OK);
            for (size_t i = 0; i < n; i++) {
                uint16_t want;
                assert_int_equal(mxp_unary_strided(MXP_OP_EXPM1, 1, &want, MXP_F16, 2, a + 2 * i, MXP_BF16, 2, NULL),
                                 MXP_OK);
                assert_same_elements(MXP_F16, (unsigned char *)&want, (unsigned char *)&out[3 * (n - 1 - i)], 1,
                                     "expm1");
            }
        }
        free(a);
        free(out);
    }
}

/* out == a element for element: the same bits as out of place, also when
 * out is narrower (float32 in, bfloat16 out at the float32 stride). */
static void test_in_place(void **state)
{
    (void)state;
    enum { N = 2049 };
    uint16_t *a = malloc(N * 2), *b = malloc(N * 2), *want = malloc(N * 2);
    fill_random(a, N * 2, 1);
    fill_random(b, N * 2, 2);
    assert_int_equal(mxp_binary_strided(MXP_OP_ADD, N, want, MXP_BF16, 2, a, MXP_BF16, 2, b, MXP_BF16, 2, NULL),
                     MXP_OK);
    assert_int_equal(mxp_binary_strided(MXP_OP_ADD, N, a, MXP_BF16, 2, a, MXP_BF16, 2, b, MXP_BF16, 2, NULL), MXP_OK);
    assert_same_elements(MXP_BF16, (unsigned char *)want, (unsigned char *)a, N, "add in place");
    float *f = malloc(N * 4);
    for (size_t i = 0; i < N; i++)
        f[i] = (float)i * 0.37f - 100.0f;
    assert_int_equal(mxp_unary_strided(MXP_OP_TANH, N, want, MXP_BF16, 2, f, MXP_F32, 4, NULL), MXP_OK);
    assert_int_equal(mxp_unary_strided(MXP_OP_TANH, N, f, MXP_BF16, 4, f, MXP_F32, 4, NULL), MXP_OK);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(((uint16_t *)f)[2 * i], want[i]);
    free(a);
    free(b);
    free(want);
    free(f);
}

/* Stochastic rounding indexes elements from convert->index_offset, as
 * mxp_binary's does: the same bits for the same seed. */
static void test_stochastic_rounding_matches_mxp_binary(void **state)
{
    (void)state;
    enum { N = 3000 };
    float *x = malloc(N * 4), *y = malloc(N * 4);
    for (size_t i = 0; i < N; i++) {
        x[i] = 1.0f + (float)i * 1e-4f;
        y[i] = 1e-3f * (float)(i % 17);
    }
    mxp_array *a = vec(MXP_F32, x, N), *b = vec(MXP_F32, y, N), *r = NULL;
    mxp_ops_opts o = { .out_dtype = MXP_BF16, .convert = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 5 } };
    assert_int_equal(mxp_binary(&r, MXP_OP_MULTIPLY, a, b, &o), MXP_OK);
    uint16_t *got = malloc(N * 2);
    assert_int_equal(mxp_binary_strided(MXP_OP_MULTIPLY, N, got, MXP_BF16, 2, x, MXP_F32, 4, y, MXP_F32, 4, &o.convert),
                     MXP_OK);
    assert_memory_equal(got, mxp_array_data(r), N * 2);
    /* the second half alone, from index_offset N/2 */
    mxp_convert_opts half = o.convert;
    half.index_offset = N / 2;
    assert_int_equal(mxp_binary_strided(MXP_OP_MULTIPLY, N / 2, got, MXP_BF16, 2, x + N / 2, MXP_F32, 4, y + N / 2,
                                        MXP_F32, 4, &half),
                     MXP_OK);
    assert_memory_equal(got, (uint16_t *)mxp_array_data(r) + N / 2, N);
    mxp_array_free(a);
    mxp_array_free(b);
    mxp_array_free(r);
    free(x);
    free(y);
    free(got);
}

static void test_bad_input_gives_the_right_status_and_writes_nothing(void **state)
{
    (void)state;
    uint16_t a[8] = { 0x3f80, 0x4000, 0x4040, 0x4080, 0x40a0, 0x40c0, 0x40e0, 0x4100 }, out[8];
    memset(out, 0xab, sizeof out);
    const uint16_t sentinel = 0xabab;
    assert_int_equal(mxp_binary_strided((mxp_binary_op)MXP_BINARY_OP_COUNT, 4, out, MXP_BF16, 2, a, MXP_BF16, 2, a,
                                        MXP_BF16, 2, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_true(strlen(mxp_last_error()) > 0);
    assert_int_equal(mxp_unary_strided((mxp_unary_op)-1, 4, out, MXP_BF16, 2, a, MXP_BF16, 2, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_binary_strided(MXP_OP_ADD, 4, out, (mxp_dtype)0, 2, a, MXP_BF16, 2, a, MXP_BF16, 2, NULL),
                     MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_binary_strided(MXP_OP_ADD, 4, out, MXP_BF16, 2, a, MXP_BF16, 2, a, (mxp_dtype)99, 2, NULL),
                     MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_unary_strided(MXP_OP_EXP, 4, out, MXP_BF16, 2, a, MXP_DTYPE_COUNT, 2, NULL),
                     MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_binary_strided(MXP_OP_ADD, 4, out, MXP_BF16, 2, NULL, MXP_BF16, 2, a, MXP_BF16, 2, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_unary_strided(MXP_OP_EXP, 4, NULL, MXP_BF16, 2, a, MXP_BF16, 2, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_binary_strided(MXP_OP_ADD, 0, NULL, MXP_BF16, 2, NULL, MXP_BF16, 2, NULL, MXP_BF16, 2, NULL),
                     MXP_OK); /* n = 0: nothing to read or write */
    assert_int_equal(mxp_binary_strided(MXP_OP_LDEXP, 4, out, MXP_BF16, 2, a, MXP_BF16, 2, a, MXP_BF16, 2, NULL),
                     MXP_ERR_UNSUPPORTED);
    const mxp_convert_opts bad = { .rounding = (mxp_rounding)42 };
    assert_int_equal(mxp_unary_strided(MXP_OP_EXP, 4, out, MXP_BF16, 2, a, MXP_BF16, 2, &bad),
                     MXP_ERR_INVALID_ARGUMENT);
    /* overlap: out one element past a; out wider than a in place; a
     * stride-0 out; out elements that overlap each other */
    assert_int_equal(mxp_unary_strided(MXP_OP_NEGATIVE, 4, a + 1, MXP_BF16, 2, a, MXP_BF16, 2, NULL),
                     MXP_ERR_OVERLAP);
    assert_int_equal(mxp_binary_strided(MXP_OP_ADD, 4, out, MXP_BF16, 2, out + 3, MXP_BF16, -2, a, MXP_BF16, 2, NULL),
                     MXP_ERR_OVERLAP);
    assert_int_equal(mxp_unary_strided(MXP_OP_NEGATIVE, 2, a, MXP_F32, 4, a, MXP_BF16, 4, NULL), MXP_ERR_OVERLAP);
    assert_int_equal(mxp_unary_strided(MXP_OP_NEGATIVE, 4, out, MXP_BF16, 0, a, MXP_BF16, 2, NULL), MXP_ERR_OVERLAP);
    assert_int_equal(mxp_unary_strided(MXP_OP_NEGATIVE, 4, out, MXP_BF16, 1, a, MXP_BF16, 2, NULL), MXP_ERR_OVERLAP);
    assert_int_equal(mxp_binary_strided(MXP_OP_ADD, 4, a, MXP_BF16, 2, a, MXP_BF16, 2, a + 1, MXP_BF16, 2, NULL),
                     MXP_ERR_OVERLAP);
    assert_int_equal(mxp_unary_strided(MXP_OP_NEGATIVE, 4, out, MXP_BF16, 2, a, MXP_BF16, PTRDIFF_MAX / 2, NULL),
                     MXP_ERR_SIZE_OVERFLOW);
    for (size_t i = 0; i < 8; i++)
        assert_int_equal(out[i], sentinel);
    assert_int_equal(a[1], 0x4000);
    /* n = 1: in place whatever the strides */
    assert_int_equal(mxp_unary_strided(MXP_OP_NEGATIVE, 1, a, MXP_BF16, 2, a, MXP_BF16, 0, NULL), MXP_OK);
    assert_int_equal(a[0], 0xbf80);
}

/* ---- sum and product ------------------------------------------------- */

/* float16/bfloat16 + - x of one type into itself take a fused one-pass
 * kernel at the AVX2 and AVX-512 levels (src/kernels/f16-arith/, bf16-arith/): the bits of
 * the blocked float32 path (the scalar level's) for every pair of 512
 * values (specials, subnormals, near-overflow, random patterns), at every
 * length 0..40 (tails) and in place; NaN for NaN (payloads may differ). */
static void test_fused_16bit_add_matches_the_scalar_level(void **state)
{
    (void)state;
    enum { NV = 512 };
    static const uint16_t special16[] = { 0x0000, 0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x0001, 0x8001, 0x03ff,
                                          0x0400, 0x7bff, 0xfbff, 0x3c00, 0xbc00, 0x3c01, 0x7800 };
    static const uint16_t specialb[] = { 0x0000, 0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x0001, 0x8001, 0x007f,
                                         0x0080, 0x7f7f, 0xff7f, 0x3f80, 0xbf80, 0x3f81, 0x7f00 };
    const mxp_dtype types[2] = { MXP_F16, MXP_BF16 };
    const mxp_binary_op ops[3] = { MXP_OP_ADD, MXP_OP_SUBTRACT, MXP_OP_MULTIPLY };
    uint16_t *v = malloc(NV * 2), *a = malloc(NV * NV * 2), *b = malloc(NV * NV * 2), *got = malloc(NV * NV * 2),
             *ref = malloc(NV * NV * 2);
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int t = 0; t < 2; t++) {
        const uint16_t *sp = t ? specialb : special16;
        for (int i = 0; i < NV; i++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            v[i] = i < 16 ? sp[i] : (uint16_t)(r >> 48);
        }
        for (size_t i = 0; i < (size_t)NV * NV; i++) {
            a[i] = v[i / NV];
            b[i] = v[i % NV];
        }
        const size_t n = (size_t)NV * NV;
        for (int o = 0; o < 3; o++) {
            const mxp_isa isa = mxp_isa_current();
            mxp_set_isa(MXP_ISA_SCALAR);
            assert_int_equal(mxp_binary_strided(ops[o], n, ref, types[t], 2, a, types[t], 2, b, types[t], 2, NULL), MXP_OK);
            mxp_set_isa(isa);
            for (size_t len = 0; len <= 40; len++) { /* tails: every length up to 40 */
                memset(got, 0x55, 2 * 48);
                assert_int_equal(mxp_binary_strided(ops[o], len, got, types[t], 2, a + 1000, types[t], 2, b + 1000,
                                                    types[t], 2, NULL), MXP_OK);
                for (size_t i = 0; i < len; i++) {
                    double g, w;
                    assert_int_equal(mxp_convert(&g, MXP_F64, &got[i], types[t], 1, NULL), MXP_OK);
                    assert_int_equal(mxp_convert(&w, MXP_F64, &ref[1000 + i], types[t], 1, NULL), MXP_OK);
                    if (!(isnan(g) && isnan(w)))
                        assert_int_equal(got[i], ref[1000 + i]);
                }
                for (size_t i = len; i < 48; i++)
                    assert_int_equal(got[i], 0x5555); /* nothing written past n */
            }
            memcpy(got, a, n * 2); /* in place: out is a */
            assert_int_equal(mxp_binary_strided(ops[o], n, got, types[t], 2, got, types[t], 2, b, types[t], 2, NULL),
                             MXP_OK);
            for (size_t i = 0; i < n; i++) {
                if (got[i] == ref[i])
                    continue;
                double g, w;
                assert_int_equal(mxp_convert(&g, MXP_F64, &got[i], types[t], 1, NULL), MXP_OK);
                assert_int_equal(mxp_convert(&w, MXP_F64, &ref[i], types[t], 1, NULL), MXP_OK);
                if (!(isnan(g) && isnan(w)))
                    fail_msg("%s %s(0x%04x, 0x%04x) = 0x%04x, the scalar level 0x%04x", mxp_dtype_name(types[t]),
                             mxp_binary_op_name(ops[o]), a[i], b[i], got[i], ref[i]);
            }
        }
    }
    free(v);
    free(a);
    free(b);
    free(got);
    free(ref);
}

/* float32/float64 + - * / take full-width kernels at the AVX2 and AVX-512
 * levels (src/kernels/f32-arith/, f64-arith/): the bits of the portable loop (the scalar
 * level's) for every pair of 256 values (zeros, infinities, NaN,
 * subnormals, the extremes, random patterns), at every length 0..70 (tails,
 * nothing written past n) and in place; NaN for NaN. */
static void test_wide_float_arith_matches_the_scalar_level(void **state)
{
    (void)state;
    enum { NV = 256, N = NV * NV };
    static const uint32_t sp32[] = { 0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001,
                                     0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff,
                                     0x3f800000, 0xbf800000, 0x3f800001, 0x34000000 };
    static const uint64_t sp64[] = { 0, 0x8000000000000000ull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
                                     0x7ff8000000000000ull, 0x7ff0000000000001ull, 1, 0x8000000000000001ull,
                                     0x000fffffffffffffull, 0x0010000000000000ull, 0x7fefffffffffffffull,
                                     0xffefffffffffffffull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
                                     0x3ff0000000000001ull, 0x3ca0000000000000ull };
    const mxp_binary_op ops[4] = { MXP_OP_ADD, MXP_OP_SUBTRACT, MXP_OP_MULTIPLY, MXP_OP_DIVIDE };
    unsigned char *a = malloc(N * 8), *b = malloc(N * 8), *got = malloc(N * 8), *ref = malloc(N * 8);
    uint64_t r = 0x2545f4914f6cdd1dull;
    for (int t = 0; t < 2; t++) {
        const mxp_dtype dt = t ? MXP_F64 : MXP_F32;
        const size_t sz = t ? 8 : 4;
        uint64_t v[NV];
        for (int i = 0; i < NV; i++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            v[i] = i < 16 ? (t ? sp64[i] : sp32[i]) : t ? r : r >> 32;
        }
        for (size_t i = 0; i < N; i++) {
            memcpy(a + i * sz, &v[i / NV], sz); /* little-endian: the low bytes of the 64-bit pattern */
            memcpy(b + i * sz, &v[i % NV], sz);
        }
        for (int o = 0; o < 4; o++) {
            const mxp_isa isa = mxp_isa_current();
            mxp_set_isa(MXP_ISA_SCALAR);
            assert_int_equal(mxp_binary_strided(ops[o], N, ref, dt, (ptrdiff_t)sz, a, dt, (ptrdiff_t)sz, b, dt,
                                                (ptrdiff_t)sz, NULL), MXP_OK);
            mxp_set_isa(isa);
            assert_int_equal(mxp_binary_strided(ops[o], N, got, dt, (ptrdiff_t)sz, a, dt, (ptrdiff_t)sz, b, dt,
                                                (ptrdiff_t)sz, NULL), MXP_OK);
            assert_same_elements(dt, got, ref, N, mxp_binary_op_name(ops[o]));
            for (size_t len = 0; len <= 70; len++) { /* tails, from an odd start */
                memset(got, 0x55, 80 * sz);
                assert_int_equal(mxp_binary_strided(ops[o], len, got, dt, (ptrdiff_t)sz, a + 777 * sz, dt,
                                                    (ptrdiff_t)sz, b + 777 * sz, dt, (ptrdiff_t)sz, NULL), MXP_OK);
                assert_same_elements(dt, got, ref + 777 * sz, len, mxp_binary_op_name(ops[o]));
                for (size_t i = len * sz; i < 80 * sz; i++)
                    assert_int_equal(got[i], 0x55); /* nothing written past n */
            }
            memcpy(got, b, N * sz); /* in place: out is b */
            assert_int_equal(mxp_binary_strided(ops[o], N, got, dt, (ptrdiff_t)sz, a, dt, (ptrdiff_t)sz, got, dt,
                                                (ptrdiff_t)sz, NULL), MXP_OK);
            assert_same_elements(dt, got, ref, N, mxp_binary_op_name(ops[o]));
        }
    }
    free(a);
    free(b);
    free(got);
    free(ref);
}

static void test_sum_and_prod_strided(void **state)
{
    (void)state;
    double r;
    /* 2^20 bfloat16 ones in a float32 accumulator: exact (pairwise) */
    enum { N = 1 << 20 };
    uint16_t *ones = malloc(N * 2);
    for (size_t i = 0; i < N; i++)
        ones[i] = 0x3f80;
    assert_int_equal(mxp_sum_strided(&r, ones, MXP_BF16, 2, N, MXP_F32), MXP_OK);
    assert_true(r == N);
    free(ones);
    /* equal to mxp_reduce for float32 and float64 accumulators; backwards
     * with a negative stride the same set of values; a stride-0 scalar */
    enum { M = 5001 };
    uint16_t *h = malloc(M * 2);
    for (size_t i = 0; i < M; i++)
        h[i] = mxp_f32_to_f16((float)(i % 97) * 0.01f - 0.3f);
    mxp_array *a = vec(MXP_F16, h, M);
    const mxp_dtype accs[2] = { MXP_F32, MXP_F64 };
    for (int k = 0; k < 2; k++) {
        mxp_reduce_opts o = { .acc_dtype = accs[k], .out_dtype = MXP_F64 };
        mxp_array *s = NULL, *p = NULL;
        assert_int_equal(mxp_reduce(&s, MXP_REDUCE_SUM, a, 0, NULL, &o), MXP_OK);
        assert_int_equal(mxp_reduce(&p, MXP_REDUCE_PROD, a, 0, NULL, &o), MXP_OK);
        assert_int_equal(mxp_sum_strided(&r, h, MXP_F16, 2, M, accs[k]), MXP_OK);
        assert_true(r == *(double *)mxp_array_data(s));
        assert_int_equal(mxp_prod_strided(&r, h, MXP_F16, 2, M, accs[k]), MXP_OK);
        assert_true(r == *(double *)mxp_array_data(p) || (isnan(r) && isnan(*(double *)mxp_array_data(p))));
        mxp_array_free(s);
        mxp_array_free(p);
    }
    mxp_array_free(a);
    const float v[5] = { 2, 0.5f, 3, -1, 10 };
    assert_int_equal(mxp_prod_strided(&r, v + 4, MXP_F32, -4, 4, MXP_F64), MXP_OK);
    assert_true(r == -15);
    assert_int_equal(mxp_sum_strided(&r, v + 2, MXP_F32, 0, 7, MXP_F32), MXP_OK);
    assert_true(r == 21);
    assert_int_equal(mxp_sum_strided(&r, v, MXP_F32, 8, 3, MXP_F64), MXP_OK); /* 2 + 3 + 10 */
    assert_true(r == 15);
    assert_int_equal(mxp_sum_strided(&r, NULL, MXP_F32, 4, 0, MXP_F32), MXP_OK);
    assert_true(r == 0);
    assert_int_equal(mxp_prod_strided(&r, NULL, MXP_F32, 4, 0, MXP_F32), MXP_OK);
    assert_true(r == 1);
    const int8_t iv[3] = { 100, 100, 100 };
    assert_int_equal(mxp_sum_strided(&r, iv, MXP_S8, 1, 3, MXP_F64), MXP_OK);
    assert_true(r == 300);
    free(h);
    /* bad input */
    assert_int_equal(mxp_sum_strided(NULL, v, MXP_F32, 4, 5, MXP_F32), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_sum_strided(&r, NULL, MXP_F32, 4, 5, MXP_F32), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_sum_strided(&r, v, (mxp_dtype)0, 4, 5, MXP_F32), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_prod_strided(&r, v, MXP_F32, 4, 5, MXP_S32), MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_prod_strided(&r, v, MXP_F32, PTRDIFF_MAX / 2, 5, MXP_F32), MXP_ERR_SIZE_OVERFLOW);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strided_equals_the_array_operations),
        cmocka_unit_test(test_negative_zero_and_non_unit_strides),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_stochastic_rounding_matches_mxp_binary),
        cmocka_unit_test(test_bad_input_gives_the_right_status_and_writes_nothing),
        cmocka_unit_test(test_sum_and_prod_strided),
        cmocka_unit_test(test_fused_16bit_add_matches_the_scalar_level),
        cmocka_unit_test(test_wide_float_arith_matches_the_scalar_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
