/* The caller's floating-point environment never reaches a result: with
 * flush-to-zero and denormals-are-zero set, and under each IEEE rounding
 * direction, GEMM (float32, float64, bfloat16, float16 and int8 -> float32
 * with a subnormal scale), conversions, quantization, elementwise
 * operations, reductions and matmul give the bits they give in the default
 * state, on one thread and on two; and every call hands the caller's state
 * back unchanged.  ctest runs this file once per MXP_ISA level. */
#include <fenv.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
#define HAVE_MXCSR 1
enum { MXCSR_DEFAULT = 0x1f80, MXCSR_DAZ = 1 << 6, MXCSR_FTZ = 1 << 15, MXCSR_FLAGS = 0x3f };
#endif

/* A state the caller may be in: a rounding direction and, where the CPU
 * has them, FTZ and DAZ. */
typedef struct caller_state {
    const char *name;
    int round;
    bool ftz_daz;
} caller_state;

static const caller_state states[] = {
    { "ftz_daz", FE_TONEAREST, true },
    { "downward", FE_DOWNWARD, false },
    { "upward", FE_UPWARD, false },
    { "toward_zero", FE_TOWARDZERO, false },
    { "ftz_daz_upward", FE_UPWARD, true },
};

static void enter_state(const caller_state *s)
{
    assert_int_equal(fesetround(s->round), 0);
#ifdef HAVE_MXCSR
    if (s->ftz_daz)
        __builtin_ia32_ldmxcsr(__builtin_ia32_stmxcsr() | MXCSR_FTZ | MXCSR_DAZ);
#endif
}

/* Back to the default state, after checking that the library left the
 * caller's state as it was (control bits; the status flags may change). */
static void leave_state(const caller_state *s)
{
    const int round = fegetround();
#ifdef HAVE_MXCSR
    const unsigned csr = __builtin_ia32_stmxcsr();
    __builtin_ia32_ldmxcsr(MXCSR_DEFAULT);
#endif
    assert_int_equal(fesetround(FE_TONEAREST), 0);
    assert_int_equal(round, s->round);
#ifdef HAVE_MXCSR
    const unsigned want = (s->ftz_daz ? MXCSR_DEFAULT | MXCSR_FTZ | MXCSR_DAZ : MXCSR_DEFAULT);
    if ((csr & ~(unsigned)MXCSR_FLAGS & ~0x6000u) != want) {
        print_error("state %s: mxcsr 0x%x after the call, expected control bits 0x%x\n", s->name, csr, want);
        fail();
    }
#endif
}

/* ---- deterministic inputs ----------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform_pm1(uint64_t *s)
{
    return (double)(splitmix64(s) >> 11) * 0x1p-52 - 1.0;
}

/* rows x cols doubles: uniform in [-1, 1], every 7th row scaled by tiny
 * (so that its products are subnormal in the accumulator: FTZ/DAZ would
 * flush them) */
static double *make_values(size_t rows, size_t cols, double tiny, uint64_t seed)
{
    double *v = malloc(rows * cols * sizeof *v);
    assert_non_null(v);
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            v[r * cols + c] = uniform_pm1(&seed) * (r % 7 == 3 ? tiny : 1.0);
    return v;
}

static void *as_dtype(const double *v, size_t n, mxp_dtype dt)
{
    void *p = malloc(n * mxp_dtype_itemsize(dt));
    assert_non_null(p);
    assert_int_equal(mxp_convert(p, dt, v, MXP_F64, n, NULL), MXP_OK);
    return p;
}

/* ---- the harness: one computation, every state, one and two threads ---- */

/* Computes into out (bytes), returns MXP_OK. */
typedef mxp_status (*computation)(void *ctx, void *out);

static void expect_same_bits_everywhere(const char *what, computation f, void *ctx, size_t bytes)
{
    unsigned char *want = malloc(bytes), *got = malloc(bytes);
    assert_non_null(want);
    assert_non_null(got);
    assert_int_equal(mxp_set_num_threads(1), MXP_OK);
    assert_int_equal(f(ctx, want), MXP_OK);
    for (size_t s = 0; s < NELEMS(states); s++) {
        for (int threads = 1; threads <= 2; threads++) {
            assert_int_equal(mxp_set_num_threads(threads), MXP_OK);
            memset(got, 0xa5, bytes);
            enter_state(&states[s]);
            const mxp_status st = f(ctx, got);
            leave_state(&states[s]);
            assert_int_equal(st, MXP_OK);
            if (memcmp(want, got, bytes) != 0) {
                size_t at = 0;
                while (want[at] == got[at])
                    at++;
                print_error("%s (ISA %s): state %s, %d thread(s): byte %zu of %zu differs from the default "
                            "state's\n", what, mxp_isa_name(mxp_isa_current()), states[s].name, threads, at, bytes);
                fail();
            }
        }
    }
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
    free(want);
    free(got);
}

/* ---- GEMM ------------------------------------------------------------------ */

/* Large enough for two threads (m n k >= 4e6), odd edges. */
enum { GM = 197, GN = 161, GK = 160 };

typedef struct gemm_case {
    mxp_dtype at, bt, ct;
    const void *a, *b;
    mxp_gemm_opts opts;
    double alpha;
} gemm_case;

static mxp_status run_gemm(void *ctx, void *out)
{
    const gemm_case *g = ctx;
    return mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, GM, GN, GK, g->alpha, g->a, g->at, GK, g->b, g->bt, GN, 0.0, out,
                    g->ct, GN, &g->opts);
}

static void check_float_gemm(mxp_dtype in, mxp_dtype out, double tiny)
{
    double *a = make_values(GM, GK, tiny, 1), *b = make_values(GK, GN, 1.0, 2);
    gemm_case g = { in, in, out, as_dtype(a, GM * GK, in), as_dtype(b, GK * GN, in), { 0 }, 1.0 / 3.0 };
    char what[64];
    snprintf(what, sizeof what, "%s GEMM into %s", mxp_dtype_name(in), mxp_dtype_name(out));
    expect_same_bits_everywhere(what, run_gemm, &g, (size_t)GM * GN * mxp_dtype_itemsize(out));
    free((void *)g.a);
    free((void *)g.b);
    free(a);
    free(b);
}

static void test_fpenv_gemm_f32_bits_independent_of_caller_state_and_threads(void **state)
{
    (void)state;
    check_float_gemm(MXP_F32, MXP_F32, 0x1p-120);
}

static void test_fpenv_gemm_f64_bits_independent_of_caller_state_and_threads(void **state)
{
    (void)state;
    check_float_gemm(MXP_F64, MXP_F64, 0x1p-1015);
}

static void test_fpenv_gemm_bf16_bits_independent_of_caller_state_and_threads(void **state)
{
    (void)state;
    check_float_gemm(MXP_BF16, MXP_F32, 0x1p-120);
    check_float_gemm(MXP_BF16, MXP_BF16, 1.0);
}

static void test_fpenv_gemm_f16_bits_independent_of_caller_state_and_threads(void **state)
{
    (void)state;
    check_float_gemm(MXP_F16, MXP_F16, 1.0);
    check_float_gemm(MXP_F16, MXP_F32, 1.0);
}

static void test_fpenv_gemm_int8_subnormal_scale_is_not_flushed(void **state)
{
    (void)state;
    uint8_t *a = malloc(GM * GK);
    int8_t *b = malloc(GK * GN);
    assert_non_null(a);
    assert_non_null(b);
    uint64_t seed = 3;
    for (size_t i = 0; i < GM * GK; i++)
        a[i] = (uint8_t)(splitmix64(&seed) >> 56);
    for (size_t i = 0; i < GK * GN; i++)
        b[i] = (int8_t)(splitmix64(&seed) >> 56);
    static const float scale = 0x1p-140f; /* subnormal: DAZ would read it as zero */
    gemm_case g = { MXP_U8, MXP_S8, MXP_F32, a, b, { .scales = &scale, .n_scales = 1, .a_zero_point = 128 }, 1.0 };
    expect_same_bits_everywhere("uint8 x int8 GEMM into float32, subnormal scale", run_gemm, &g, GM * GN * 4);
    /* and the result is not all zeros */
    float *c = malloc(GM * GN * 4);
    assert_non_null(c);
    assert_int_equal(run_gemm(&g, c), MXP_OK);
    size_t nonzero = 0;
    for (size_t i = 0; i < GM * GN; i++)
        nonzero += c[i] != 0;
    assert_true(nonzero > GM * GN / 2);
    g.opts.convert.rounding = MXP_ROUND_DOWN; /* a mode of the library's own, not the caller's */
    expect_same_bits_everywhere("uint8 x int8 GEMM into float32, rounding down", run_gemm, &g, GM * GN * 4);
    free(c);
    free(a);
    free(b);
}

/* ---- conversions ----------------------------------------------------------- */

enum { CN = 4099 };

typedef struct convert_case {
    mxp_dtype dt, st;
    const void *src;
    mxp_rounding rounding;
} convert_case;

static mxp_status run_convert(void *ctx, void *out)
{
    const convert_case *c = ctx;
    const mxp_convert_opts o = { .rounding = c->rounding };
    return mxp_convert(out, c->dt, c->src, c->st, CN, &o);
}

static void test_fpenv_convert_bits_independent_of_caller_state(void **state)
{
    (void)state;
    double *v = make_values(CN, 1, 0x1p-135, 4);
    for (size_t i = 0; i < CN; i += 5)
        v[i] *= 0x1p-1000; /* float64 subnormals too */
    static const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2, MXP_S8, MXP_S32 };
    for (size_t s = 0; s < NELEMS(types); s++) {
        void *src = as_dtype(v, CN, types[s]);
        for (size_t d = 0; d < NELEMS(types); d++) {
            for (int r = MXP_ROUND_NEAREST_EVEN; r <= MXP_ROUND_DOWN; r += 4) {
                convert_case c = { types[d], types[s], src, (mxp_rounding)r };
                char what[96];
                snprintf(what, sizeof what, "convert %s -> %s, %s", mxp_dtype_name(types[s]),
                         mxp_dtype_name(types[d]), mxp_rounding_name((mxp_rounding)r));
                expect_same_bits_everywhere(what, run_convert, &c, CN * mxp_dtype_itemsize(types[d]));
            }
        }
        free(src);
    }
    free(v);
}

/* ---- arrays: quantization, elementwise, reductions, matmul ----------------- */

typedef struct array_case {
    mxp_array *x, *y;
    mxp_qparams qp;
    int which;
} array_case;

static mxp_status run_array_op_into(const array_case *c, mxp_array **r)
{
    const int axes[1] = { 1 };
    switch (c->which) {
    case 0: return mxp_binary(r, MXP_OP_ADD, c->x, c->y, NULL);
    case 1: return mxp_binary(r, MXP_OP_MULTIPLY, c->x, c->y, NULL);
    case 2: return mxp_unary(r, MXP_OP_GELU_TANH, c->x, NULL);
    case 3: return mxp_unary(r, MXP_OP_EXP, c->x, NULL);
    case 4: return mxp_reduce(r, MXP_REDUCE_SUM, c->x, 1, axes, NULL);
    case 5: return mxp_reduce(r, MXP_REDUCE_STD, c->x, 0, NULL, NULL);
    case 6: return mxp_quantize(r, c->x, &c->qp, NULL);
    case 7: return mxp_fake_quantize(r, c->x, &c->qp, NULL);
    case 8: return mxp_matmul(r, c->x, c->y, NULL);
    default: return mxp_array_astype(r, c->x, MXP_BF16, NULL);
    }
}

static mxp_status run_array_op(void *ctx, void *out)
{
    mxp_array *r = NULL;
    mxp_status st = run_array_op_into(ctx, &r);
    if (st == MXP_OK)
        memcpy(out, mxp_array_data(r), (size_t)mxp_array_size(r) * mxp_array_itemsize(r));
    mxp_array_free(r);
    return st;
}

static mxp_array *array_of(const double *v, mxp_dtype dt, int64_t rows, int64_t cols)
{
    const int64_t shape[2] = { rows, cols };
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_empty(&a, dt, 2, shape), MXP_OK);
    assert_int_equal(mxp_convert(mxp_array_data(a), dt, v, MXP_F64, (size_t)(rows * cols), NULL), MXP_OK);
    return a;
}

static void test_fpenv_array_operations_bits_independent_of_caller_state_and_threads(void **state)
{
    (void)state;
    enum { R = 192, C = 192 };
    static const char *const names[] = { "add", "multiply", "gelu_tanh", "exp", "sum", "std", "quantize",
                                         "fake_quantize", "matmul", "astype bf16" };
    static const mxp_dtype types[] = { MXP_F32, MXP_F64 };
    double *x = make_values(R, C, 0x1p-128, 5), *y = make_values(R, C, 0x1p-10, 6);
    for (size_t t = 0; t < NELEMS(types); t++) {
        float scale = 0.0078125f * 1.1f;
        int32_t zero_point = 3;
        array_case c = { array_of(x, types[t], R, C), array_of(y, types[t], R, C),
                         { MXP_S8, false, -1, 0, 1, &scale, &zero_point }, 0 };
        for (c.which = 0; c.which < (int)NELEMS(names); c.which++) {
            mxp_array *r = NULL;
            assert_int_equal(run_array_op_into(&c, &r), MXP_OK);
            const size_t bytes = (size_t)mxp_array_size(r) * mxp_array_itemsize(r);
            mxp_array_free(r);
            char what[64];
            snprintf(what, sizeof what, "%s on %s", names[c.which], mxp_dtype_name(types[t]));
            expect_same_bits_everywhere(what, run_array_op, &c, bytes);
        }
        mxp_array_free(c.x);
        mxp_array_free(c.y);
    }
    free(x);
    free(y);
}

/* ---- dequantize: q == zero point is +0 whatever the caller's direction ----- */

static void test_fpenv_dequantize_zero_point_gives_positive_zero_rounding_down(void **state)
{
    (void)state;
    float scale = 0.5f;
    int32_t zero_point = 7;
    const mxp_qparams qp = { MXP_S8, false, -1, 0, 1, &scale, &zero_point };
    int8_t codes[4] = { 7, 7, 8, 6 };
    const int64_t shape[1] = { 4 };
    mxp_array *q = NULL, *r = NULL;
    assert_int_equal(mxp_array_wrap(&q, codes, MXP_S8, 1, shape, NULL, false, NULL, NULL), MXP_OK);
    const caller_state down = { "downward", FE_DOWNWARD, false };
    enter_state(&down);
    const mxp_status st = mxp_dequantize(&r, q, &qp, MXP_F32);
    leave_state(&down);
    assert_int_equal(st, MXP_OK);
    const float *v = mxp_array_data(r);
    assert_false(signbit(v[0]));
    assert_false(signbit(v[1]));
    assert_true(v[2] == 0.5f && v[3] == -0.5f);
    mxp_array_free(r);
    mxp_array_free(q);
}

/* A short or ragged run raises no flag its own elements do not: the
 * AVX-512 tails once divided zero lanes (0/0: invalid), which NumPy
 * reported as "invalid value encountered in divide" for 3/2. */
static void test_fpenv_arithmetic_tails_raise_no_spurious_flags(void **state)
{
    (void)state;
    float a[40], b[40], y[40];
    double da[40], db[40], dy[40];
    for (int i = 0; i < 40; i++) {
        a[i] = 3.0f, b[i] = 2.0f;
        da[i] = 3.0, db[i] = 2.0;
    }
    for (int op = MXP_OP_ADD; op <= MXP_OP_DIVIDE; op++) {
        for (size_t n = 1; n <= 40; n++) {
            feclearexcept(FE_ALL_EXCEPT);
            assert_int_equal(mxp_binary_strided((mxp_binary_op)op, n, y, MXP_F32, 4, a, MXP_F32, 4, b, MXP_F32, 4, NULL),
                             MXP_OK);
            assert_int_equal(mxp_binary_strided((mxp_binary_op)op, n, dy, MXP_F64, 8, da, MXP_F64, 8, db, MXP_F64, 8,
                                                NULL),
                             MXP_OK);
            if (fetestexcept(FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW))
                fail_msg("%s of %zu elements raised a flag", mxp_binary_op_name((mxp_binary_op)op), n);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fpenv_gemm_f32_bits_independent_of_caller_state_and_threads),
        cmocka_unit_test(test_fpenv_gemm_f64_bits_independent_of_caller_state_and_threads),
        cmocka_unit_test(test_fpenv_gemm_bf16_bits_independent_of_caller_state_and_threads),
        cmocka_unit_test(test_fpenv_gemm_f16_bits_independent_of_caller_state_and_threads),
        cmocka_unit_test(test_fpenv_gemm_int8_subnormal_scale_is_not_flushed),
        cmocka_unit_test(test_fpenv_convert_bits_independent_of_caller_state),
        cmocka_unit_test(test_fpenv_array_operations_bits_independent_of_caller_state_and_threads),
        cmocka_unit_test(test_fpenv_dequantize_zero_point_gives_positive_zero_rounding_down),
        cmocka_unit_test(test_fpenv_arithmetic_tails_raise_no_spurious_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
