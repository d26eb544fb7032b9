/* The float32 GEMM finish kernels (src/kernels/f32-finish/, every line of
 * f32-finish-list.inc this CPU runs: the finish and the bias kernels)
 * against their twin, bit for bit:
 * round(float64(sum) + bias) into float32 and bfloat16, the bias per
 * column, one per row or none, on sums and biases of every kind (NaNs with
 * payloads, infinities, float32 subnormals, values near the formats'
 * largest, ties of bfloat16 that only the float64 sum decides) and every
 * length up to a few vectors plus a long row.  Hand-computed cases pin the
 * twin itself: one rounding from float64, not two. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/finish-kernels.h"
#include "mxp/cpu.h"
#include "support/prng.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

typedef struct line {
    const char *name;
    mxp_f32_finish_fn fn, twin;
    mxp_isa isa;
} line;

static const line lines[] = {
#define MXP_F32_FINISH(f, isa, twin) { #f, f, twin, isa },
#define MXP_F32_FINISH_BIAS(f, isa, twin)
#include "kernels/f32-finish-list.inc"
#undef MXP_F32_FINISH
#undef MXP_F32_FINISH_BIAS
    { NULL, NULL, NULL, MXP_ISA_SCALAR },
};

typedef struct bias_line {
    const char *name;
    mxp_f32_finish_bias_fn fn, twin;
    mxp_isa isa;
} bias_line;

static const bias_line bias_lines[] = {
#define MXP_F32_FINISH(f, isa, twin)
#define MXP_F32_FINISH_BIAS(f, isa, twin) { #f, f, twin, isa },
#include "kernels/f32-finish-list.inc"
#undef MXP_F32_FINISH
#undef MXP_F32_FINISH_BIAS
    { NULL, NULL, NULL, MXP_ISA_SCALAR },
};

static float f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* A float32 sum of some kind, chosen by r. */
static float some_sum(uint64_t *st)
{
    const uint64_t r = prng_next(st);
    switch (r % 10) {
    case 0: return f32_bits(0x7fc00000u | (uint32_t)(r >> 40) | ((uint32_t)(r >> 32) & 0x80000000u)); /* NaN */
    case 1: return (r >> 8) & 1 ? INFINITY : -INFINITY;
    case 2: return f32_bits((uint32_t)(r >> 20) & 0x807fffffu); /* subnormal or zero */
    case 3: return (r >> 8) & 1 ? 3.3895e38f : -3.3895e38f;    /* near float32's and bfloat16's largest */
    case 4: return f32_bits(0x3f808000u | ((uint32_t)(r >> 40) & 0x1u)); /* 1 + 2^-8: a bfloat16 tie */
    default: return (float)prng_range(st, -1000, 1000);
    }
}

static double some_bias(uint64_t *st)
{
    const uint64_t r = prng_next(st);
    switch (r % 8) {
    case 0: return 0x1p-30; /* decides the ties above */
    case 1: return -0x1p-30;
    case 2: return (r >> 8) & 1 ? INFINITY : -INFINITY;
    case 3: return 0x1.fffffffffffffp1023 * ((r >> 8) & 1 ? 1 : -1);
    case 4: return 1e-310; /* a float64 subnormal */
    default: return prng_range(st, -10, 10);
    }
}

static void test_finish_kernels_match_their_twin(void **state)
{
    (void)state;
    enum { LONG = 1000 };
    static float src[LONG];
    static double bias[LONG];
    static unsigned char got[LONG * 4], want[LONG * 4];
    uint64_t st = prng_seed(51);
    size_t checked = 0;
    for (size_t li = 0; lines[li].name; li++) {
        if (lines[li].isa > mxp_isa_supported())
            continue;
        for (size_t len = 0; len <= LONG; len = len < 40 ? len + 1 : LONG + 1)
            for (int kind = 0; kind < 3; kind++) /* bias per column, one per row, none */
                for (int bf16 = 0; bf16 < 2; bf16++) {
                    for (size_t q = 0; q < len; q++) {
                        src[q] = some_sum(&st);
                        bias[q] = some_bias(&st);
                    }
                    const size_t size = bf16 ? 2 : 4;
                    memset(got, 0xa5, sizeof got);
                    memset(want, 0xa5, sizeof want);
                    const double *b = kind == 2 ? NULL : bias;
                    lines[li].fn(got, bf16, src, len, b, kind == 0);
                    lines[li].twin(want, bf16, src, len, b, kind == 0);
                    for (size_t q = 0; q < len; q++)
                        if (memcmp(got + q * size, want + q * size, size)) {
                            print_error("%s: %s sum %a + bias %a: element %zu of %zu differs from the twin\n",
                                        lines[li].name, bf16 ? "bfloat16" : "float32", (double)src[q],
                                        b ? b[kind == 0 ? q : 0] : 0.0, q, len);
                            fail();
                        }
                    assert_memory_equal(got + len * size, want + len * size, sizeof got - len * size); /* nothing past len */
                    checked++;
                }
        print_message("%s: %zu rows\n", lines[li].name, checked);
    }
}

/* The twin rounds once from the float64 sum: 1 + 2^-8 is a bfloat16 tie
 * (to even: 1.0), 2^-30 more breaks it upward, which float32 first would
 * lose; float32 C takes the float64 sum's nearest float32. */
static void test_finish_twin_rounds_once(void **state)
{
    (void)state;
    const float s[3] = { 0x1.01p0f, 0x1.01p0f, 0x1.01p0f };
    const double b[3] = { 0, 0x1p-30, -0x1p-30 };
    uint16_t h[3];
    mxp_f32_finish__scalar(h, 1, s, 3, b, 1);
    assert_int_equal(h[0], 0x3f80); /* the tie, to even */
    assert_int_equal(h[1], 0x3f81); /* above it */
    assert_int_equal(h[2], 0x3f80); /* below it */
    float f[3];
    const double one[1] = { 0x1p-25 }; /* 1 + 2^-8 + 2^-25: below half a float32 ulp (2^-24) above */
    mxp_f32_finish__scalar(f, 0, s, 3, one, 0);
    assert_true(f[0] == 0x1.01p0f && f[2] == 0x1.01p0f);
    const double more[1] = { 0x1.8p-24 }; /* beyond the half ulp: the next float32 */
    mxp_f32_finish__scalar(f, 0, s, 1, more, 0);
    assert_true(f[0] == 0x1.010002p0f);
}

/* The float32 bias + clamp kernels against their twin: sums and biases of
 * every kind (NaNs, infinities, subnormals, signed zeros, values that
 * round when added), with and without a clamp (bounds -9 / +inf as
 * MiniLM's GELU floor, -0 / +0, and lo > hi: lo wins, the twin's
 * conditional), every length up to a few vectors and a long row, in place
 * too; a NaN result only needs to be a NaN (its payload, when both are
 * NaN, is the hardware's operand order). */
static void test_bias_kernels_match_their_twin(void **state)
{
    (void)state;
    enum { LONG = 1000 };
    static float src[LONG], bias[LONG], got[LONG + 8], want[LONG + 8];
    static const float bounds[][2] = { { -9.0f, INFINITY }, { -0.0f, 0.0f }, { 1.0f, -1.0f }, { -3.5f, 2.25f } };
    uint64_t st = prng_seed(53);
    for (size_t li = 0; bias_lines[li].name; li++) {
        if (bias_lines[li].isa > mxp_isa_supported())
            continue;
        size_t checked = 0;
        for (size_t len = 0; len <= LONG; len = len < 40 ? len + 1 : LONG + 1)
            for (int clamp = 0; clamp < 5; clamp++) {
                for (size_t q = 0; q < len; q++) {
                    src[q] = some_sum(&st);
                    const uint64_t r = prng_next(&st);
                    bias[q] = r % 5 == 0 ? f32_bits(0x7fa00000u | (uint32_t)(r >> 44))            /* NaN */
                              : r % 5 == 1 ? f32_bits((uint32_t)(r >> 20) & 0x807fffffu)         /* subnormal, +-0 */
                              : r % 5 == 2 ? ((r >> 8) & 1 ? -INFINITY : 0x1p-20f)
                                           : (float)prng_range(&st, -20, 20);
                }
                const float lo = clamp ? bounds[clamp - 1][0] : 0, hi = clamp ? bounds[clamp - 1][1] : 0;
                memset(got, 0xa5, sizeof got);
                memset(want, 0xa5, sizeof want);
                bias_lines[li].fn(got, src, bias, len, clamp != 0, lo, hi);
                bias_lines[li].twin(want, src, bias, len, clamp != 0, lo, hi);
                for (size_t q = 0; q < len; q++)
                    if (!(isnan(got[q]) && isnan(want[q])) && memcmp(&got[q], &want[q], 4)) {
                        print_error("%s: %a + %a (clamp %d): element %zu of %zu is %a, the twin's %a\n",
                                    bias_lines[li].name, (double)src[q], (double)bias[q], clamp, q, len,
                                    (double)got[q], (double)want[q]);
                        fail();
                    }
                assert_memory_equal(got + len, want + len, sizeof got - len * 4); /* nothing past len */
                memcpy(got, src, len * 4); /* in place */
                bias_lines[li].fn(got, got, bias, len, clamp != 0, lo, hi);
                for (size_t q = 0; q < len; q++)
                    assert_true((isnan(got[q]) && isnan(want[q])) || !memcmp(&got[q], &want[q], 4));
                checked++;
            }
        print_message("%s: %zu rows\n", bias_lines[li].name, checked);
    }
}

/* The twin: float32 arithmetic, the clamp's lo first, NaN through. */
static void test_bias_twin(void **state)
{
    (void)state;
    const float s[5] = { 1.0f, -20.0f, NAN, 3.0f, 0x1p24f }, b[5] = { 0.5f, 0.0f, 1.0f, 10.0f, 1.0f };
    float y[5];
    mxp_f32_finish_bias__scalar(y, s, b, 5, 1, -9.0f, 12.0f);
    assert_true(y[0] == 1.5f && y[1] == -9.0f && isnan(y[2]) && y[3] == 12.0f);
    assert_true(y[4] == 12.0f);
    mxp_f32_finish_bias__scalar(y, s, b, 5, 0, 0, 0);
    assert_true(y[3] == 13.0f && y[4] == 0x1p24f); /* 2^24 + 1 rounds to even in float32 */
    mxp_f32_finish_bias__scalar(y, s, b, 1, 1, 1.0f, -1.0f); /* lo > hi: 1.5 < 1 is false, 1.5 > -1: hi */
    assert_true(y[0] == -1.0f);
    const float z[1] = { -0.5f }, zb[1] = { 0.0f };
    mxp_f32_finish_bias__scalar(y, z, zb, 1, 1, 1.0f, -1.0f); /* -0.5 < 1: lo */
    assert_true(y[0] == 1.0f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finish_kernels_match_their_twin),
        cmocka_unit_test(test_finish_twin_rounds_once),
        cmocka_unit_test(test_bias_kernels_match_their_twin),
        cmocka_unit_test(test_bias_twin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
