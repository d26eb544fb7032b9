/* The int32 -> float32 dequantization kernels (src/kernels/s32-dequant/,
 * every line of requant-list.inc this CPU runs, and their twins) against
 * an exact reference, bit for bit: dst = round(acc * scale) to
 * float32, nearest even, and with a bias, round(odd(acc * scale) + bias)
 * (the product rounded to odd in float64, the sum in float64, one rounding:
 * the general epilogue's bits).  acc * scale needs up to 55 bits; a long
 * double (64-bit significand) holds it exactly.  Besides random sums and
 * scales, products built so that float64's own rounding lands exactly on a
 * float32 tie from below: a kernel that does not truncate before marking
 * the product odd rounds those up.  A mode a kernel lacks: false, nothing
 * written. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/requant-kernels.h"
#include "mxp/convert.h"
#include "mxp/cpu.h"
#include "support/prng.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

typedef struct line {
    const char *name;
    mxp_s32_dequant_f32_fn fn, twin;
    mxp_s32_dequant_bias_f32_fn bias_fn, bias_twin;
    mxp_isa isa;
    unsigned modes;
} line;

/* The kernels of the list, paired by level (a kernel, then its bias
 * variant, filled in below). */
static line lines[] = {
#define MXP_S32_REQUANT(...)
#define MXP_S32_DEQUANT_F32(f, isa, modes, twin) { #f, f, twin, NULL, NULL, isa, modes },
#define MXP_S32_DEQUANT_BIAS_F32(...)
#define MXP_S32_REQUANT_F64(...)
#include "kernels/requant-list.inc"
#undef MXP_S32_REQUANT_F64
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
    { NULL, NULL, NULL, NULL, NULL, MXP_ISA_SCALAR, 0 },
};

static const struct {
    mxp_s32_dequant_bias_f32_fn fn, twin;
    mxp_isa isa;
} biases[] = {
#define MXP_S32_DEQUANT_F32(...)
#define MXP_S32_DEQUANT_BIAS_F32(f, isa, modes, twin) { f, twin, isa },
#define MXP_S32_REQUANT_F64(...)
#include "kernels/requant-list.inc"
#undef MXP_S32_REQUANT_F64
#undef MXP_S32_REQUANT
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
    { NULL, NULL, MXP_ISA_SCALAR },
};

/* odd(p): p rounded to a double by truncation, its last bit set when inexact. */
static double to_double_odd(long double p)
{
    double d = (double)p; /* nearest even */
    if ((long double)d == p)
        return d;
    if (fabsl((long double)d) > fabsl(p))
        d = nextafter(d, 0.0);
    uint64_t b;
    memcpy(&b, &d, 8);
    b |= 1;
    memcpy(&d, &b, 8);
    return d;
}

static float ref_plain(int32_t acc, float scale) { return (float)((long double)acc * (long double)scale); }

static float ref_bias(int32_t acc, float scale, float bias)
{
    return (float)(to_double_odd((long double)acc * (long double)scale) + (double)bias);
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

enum { N = 4099 };

static int32_t acc[N];
static float scale[N], bias[N], got[N];

/* acc[i] * m = H 2^31 + 2^30 -+ 1 with a 55-bit product (2^54 <= P < 2^55):
 * the float32 tie H 2^31 + 2^30 lies between the exact value and its
 * float64 rounding (- 1: float64 rounds up to the tie, float32 must round
 * down) or its float64 truncation (+ 1: truncated to the tie, float32 must
 * round up: only the odd bit says so). */
static size_t tie_cases(uint64_t *seed)
{
    size_t n = 0;
    while (n < 64) {
        const uint32_t m = (uint32_t)(prng_next(seed) % (1u << 23)) | (1u << 23) | 1u; /* odd, 24 bits */
        uint32_t inv = m; /* m^-1 mod 2^31 (Newton) */
        for (int k = 0; k < 5; k++)
            inv *= 2u - m * inv;
        const uint32_t r = n % 4 ? (1u << 30) - 1 : (1u << 30) + 1;
        const uint32_t a = (uint32_t)(((uint64_t)r * inv) & 0x7fffffffu);
        const uint64_t p = (uint64_t)a * m;
        if (p < (1ull << 54) || p >= (1ull << 55) || p % (1ull << 31) != r)
            continue;
        const float s = ldexpf((float)m, -30); /* scale = m 2^-30: the product's bits are p's */
        acc[n] = (int32_t)a;
        scale[n] = s;
        acc[n + 1] = -(int32_t)a;
        scale[n + 1] = s;
        n += 2;
    }
    return n;
}

static void check(const char *name, mxp_s32_dequant_f32_fn plain, mxp_s32_dequant_bias_f32_fn with_bias)
{
    uint64_t seed = 12345;
    size_t n = tie_cases(&seed);
    for (; n < N; n++) { /* any int32, scales of every magnitude that keeps the result finite */
        acc[n] = (int32_t)(uint32_t)prng_next(&seed);
        const int e = (int)(prng_next(&seed) % 120) - 100;
        scale[n] = ldexpf(1.0f + (float)(prng_next(&seed) % (1u << 23)) / (float)(1u << 23), e);
        if (n % 7 == 0)
            scale[n] = -scale[n];
        bias[n] = (float)((int64_t)(prng_next(&seed) % 2001) - 1000) * ldexpf(1.0f, e + 20);
    }
    for (size_t i = 0; i < 64; i++)
        bias[i] = 0.0f;
    for (int per_col = 0; per_col < 2; per_col++) {
        for (size_t len = N; len >= N - 3; len--) { /* the tails */
            memset(got, 0, sizeof got);
            assert_true(plain(got, acc, len, scale, 1, NULL, MXP_ROUND_NEAREST_EVEN));
            for (size_t i = 0; i < len; i++) {
                const float want = ref_plain(acc[i], scale[i]);
                if (bits_of(got[i]) != bits_of(want))
                    fail_msg("%s: %d * %a = 0x%08x, want 0x%08x (%s)", name, acc[i], (double)scale[i], bits_of(got[i]),
                             bits_of(want), i < 64 ? "a float32 tie between the product and its float64 rounding" : "random");
            }
            assert_true(with_bias(got, acc, len, scale, 1, NULL, bias, 0.0, MXP_ROUND_NEAREST_EVEN));
            for (size_t i = 0; i < len; i++) {
                const float want = ref_bias(acc[i], scale[i], bias[i]);
                if (bits_of(got[i]) != bits_of(want))
                    fail_msg("%s with bias: %d * %a + %a = 0x%08x, want 0x%08x", name, acc[i], (double)scale[i],
                             (double)bias[i], bits_of(got[i]), bits_of(want));
            }
        }
        /* one scale for every column */
        assert_true(plain(got, acc, 100, scale + 5, 0, NULL, MXP_ROUND_NEAREST_EVEN));
        for (size_t i = 0; i < 100; i++)
            assert_int_equal(bits_of(got[i]), bits_of(ref_plain(acc[i], scale[5])));
        (void)per_col;
    }
}

/* With A's row: the sums less its zero point times B's sums (wrapping), the
 * scale float32(a_scale * scale): against the long double reference. */
static void check_row(const char *name, mxp_s32_dequant_bias_f32_fn with_bias)
{
    static int32_t b_sums[N];
    static float out[N];
    uint64_t seed = 7;
    for (size_t i = 0; i < N; i++)
        b_sums[i] = (int32_t)(prng_next(&seed) % 40001) - 20000;
    const mxp_s32_dequant_row row = { 0x1.8p-7f, 37, b_sums };
    assert_true(with_bias(out, acc, N, scale, 1, &row, bias, 0.0, MXP_ROUND_NEAREST_EVEN));
    for (size_t i = 0; i < N; i++) {
        const int32_t a = (int32_t)((uint32_t)acc[i] - 37u * (uint32_t)b_sums[i]);
        const float s = (float)((double)row.a_scale * (double)scale[i]);
        const float want = ref_bias(a, s, bias[i]);
        if (bits_of(out[i]) != bits_of(want))
            fail_msg("%s with A's row: element %zu 0x%08x, want 0x%08x", name, i, bits_of(out[i]), bits_of(want));
    }
}

/* C updated (beta 1, then -0.75, no bias): acc * scale rounded to odd, +
 * beta C (a float64 product, rounded), rounded once to float32. */
static void check_beta(const char *name, mxp_s32_dequant_bias_f32_fn with_bias)
{
    static float out[N], c0[N];
    uint64_t seed = 5;
    for (size_t i = 0; i < N; i++)
        c0[i] = (float)((int64_t)(prng_next(&seed) % 4001) - 2000) * 0x1p-9f * fabsf(scale[i]);
    for (int v = 0; v < 2; v++) {
        const double beta = v ? -0.75 : 1.0;
        memcpy(out, c0, sizeof out);
        assert_true(with_bias(out, acc, N, scale, 1, NULL, v ? NULL : bias, beta, MXP_ROUND_NEAREST_EVEN));
        for (size_t i = 0; i < N; i++) {
            const double bc = beta * (double)c0[i];
            double x = to_double_odd((long double)acc[i] * (long double)scale[i]) + bc;
            if (!v)
                x += (double)bias[i];
            const float want = (float)x;
            if (bits_of(out[i]) != bits_of(want))
                fail_msg("%s, beta %g: element %zu 0x%08x, want 0x%08x", name, beta, i, bits_of(out[i]),
                         bits_of(want));
        }
    }
}

static void test_dequantization_kernels_round_once_bit_for_bit(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t k = 0; lines[k].fn; k++) {
        line *l = &lines[k];
        assert_int_equal(biases[k].isa, l->isa);
        l->bias_fn = biases[k].fn;
        l->bias_twin = biases[k].twin;
        check("twin", l->twin, l->bias_twin);
        check_row("twin", l->bias_twin);
        check_beta("twin", l->bias_twin);
        if (l->isa > mxp_isa_supported())
            continue;
        check(l->name, l->fn, l->bias_fn);
        check_row(l->name, l->bias_fn);
        check_beta(l->name, l->bias_fn);
        /* every mode of its line: the twin's bits (check() left its data in acc, scale, bias), without A's
           row, with one (its zero point and scale), and with its scale only */
        static float want[N], want_c[N];
        static int32_t b_sums[N];
        uint64_t seed = 99;
        for (size_t i = 0; i < N; i++) {
            b_sums[i] = (int32_t)(uint32_t)prng_next(&seed); /* any: the subtraction wraps */
            want_c[i] = i % 97 == 3 ? NAN : (float)((int64_t)(prng_next(&seed) % 2001) - 1000) * 0x1p-7f * scale[i];
        }
        const mxp_s32_dequant_row row_zp = { 0x1.4p-3f, 131, b_sums }, row_scale_only = { 3.0e-5f, 0, NULL };
        for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++) {
            if (!((l->modes >> mode) & 1))
                continue;
            for (int r = 0; r < 3; r++)
            for (int per_col = 0; per_col < 2; per_col++) {
                const mxp_s32_dequant_row *rw = r == 0 ? NULL : r == 1 ? &row_zp : &row_scale_only;
                assert_true(l->fn(got, acc, N - 4, scale + 3, per_col, rw, mode));
                assert_true(l->twin(want, acc, N - 4, scale + 3, per_col, rw, mode));
                for (size_t i = 0; i < N - 4; i++)
                    if (bits_of(got[i]) != bits_of(want[i]))
                        fail_msg("%s %s: element %zu 0x%08x, twin 0x%08x", l->name, mxp_rounding_name(mode), i,
                                 bits_of(got[i]), bits_of(want[i]));
                /* with a bias, beta C (C's old values: want_c), both, and beta C alone */
                static const double betas[4] = { 0.0, 1.0, -0.75, 3.0 };
                for (int v = 0; v < 4; v++) {
                    const float *bv = v == 3 ? NULL : bias;
                    for (size_t i = 0; i < N - 4; i++)
                        got[i] = want[i] = want_c[i];
                    assert_true(l->bias_fn(got, acc, N - 4, scale + 3, per_col, rw, bv, betas[v], mode));
                    assert_true(l->bias_twin(want, acc, N - 4, scale + 3, per_col, rw, bv, betas[v], mode));
                    for (size_t i = 0; i < N - 4; i++)
                        if (bits_of(got[i]) != bits_of(want[i]))
                            fail_msg("%s with bias, beta %g %s: element %zu 0x%08x, twin 0x%08x", l->name, betas[v],
                                     mxp_rounding_name(mode), i, bits_of(got[i]), bits_of(want[i]));
                }
            }
        }
        /* the modes that are not its: false, nothing written */
        for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++)
            if (!((l->modes >> mode) & 1)) {
                float d = 7.0f;
                const int32_t a = 3;
                const float s = 0.5f, b = 1.0f;
                assert_false(l->fn(&d, &a, 1, &s, 0, NULL, mode));
                assert_false(l->bias_fn(&d, &a, 1, &s, 0, NULL, &b, 0.0, mode));
                assert_true(d == 7.0f);
            }
        ran++;
    }
    print_message("%d kernels checked\n", ran);
    if (!ran)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dequantization_kernels_round_once_bit_for_bit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
