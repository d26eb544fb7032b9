/* Every line of src/kernels/requant-list.inc this CPU runs.  The
 * requantization kernels (src/kernels/s32-requant/) against an oracle
 * written here another way (C's truncating division and remainder, then
 * the mode's correction), byte for byte: every mode, int32 extremes, scales
 * m up to +-(2^24 - 1), shifts 1..62, per tensor and per column, int8 and
 * uint8 ranges with zero points, every length 0..40 (the vector tails).
 * The dequantization kernels (src/kernels/s32-dequant/) in each of their
 * modes against mxp_convert of the exact product and against their twins,
 * and the twins in every mode the kernels have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "kernels/requant-kernels.h"
#include "support/prng.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

typedef struct named {
    const char *name;
    mxp_s32_requant_fn fn;
    mxp_isa needs;
} named;

static const named kernels[] = {
#define MXP_S32_REQUANT(f, isa, twin) { #f, f, isa },
#define MXP_S32_DEQUANT_F32(...)
#define MXP_S32_DEQUANT_BIAS_F32(...)
#include "kernels/requant-list.inc"
#undef MXP_S32_REQUANT
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
};

/* The dequantization lines, a kernel with its bias variant of the same
 * level (the list has them in that order). */
typedef struct dequant {
    const char *name;
    mxp_s32_dequant_f32_fn fn, twin;
    mxp_isa needs;
    unsigned modes;
} dequant;

static const dequant dequants[] = {
#define MXP_S32_REQUANT(...)
#define MXP_S32_DEQUANT_F32(f, isa, modes, twin) { #f, f, twin, isa, modes },
#define MXP_S32_DEQUANT_BIAS_F32(...)
#include "kernels/requant-list.inc"
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
    { NULL, NULL, NULL, MXP_ISA_SCALAR, 0 },
};

typedef struct dequant_bias {
    const char *name;
    mxp_s32_dequant_bias_f32_fn fn, twin;
    mxp_isa needs;
    unsigned modes;
} dequant_bias;

static const dequant_bias dequant_biases[] = {
#define MXP_S32_DEQUANT_F32(...)
#define MXP_S32_DEQUANT_BIAS_F32(f, isa, modes, twin) { #f, f, twin, isa, modes },
#include "kernels/requant-list.inc"
#undef MXP_S32_REQUANT
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
    { NULL, NULL, NULL, MXP_ISA_SCALAR, 0 },
};

static int64_t oracle_round(int64_t p, int s, mxp_rounding mode)
{
    const int64_t d = (int64_t)1 << s;
    int64_t q = p / d, r = p % d; /* q toward zero, r has p's sign */
    const int64_t twice = 2 * (r < 0 ? -r : r); /* compared with d: below, at or above the half */
    const int sign = r < 0 ? -1 : 1;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        if (twice > d || (twice == d && q % 2 != 0))
            q += sign;
        break;
    case MXP_ROUND_NEAREST_AWAY:
        if (twice >= d)
            q += sign;
        break;
    case MXP_ROUND_UP:
        if (r > 0)
            q += 1;
        break;
    case MXP_ROUND_DOWN:
        if (r < 0)
            q -= 1;
        break;
    default: /* toward zero */
        break;
    }
    return q;
}

static uint64_t rng = 88172645463325252u;
static uint32_t next(void)
{
    return (uint32_t)(prng_next(&rng) >> 16);
}

static void test_requant_kernels_vs_oracle(void **state)
{
    (void)state;
    enum { N = 40 };
    const mxp_rounding modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_NEAREST_AWAY, MXP_ROUND_TOWARD_ZERO,
                                   MXP_ROUND_UP, MXP_ROUND_DOWN };
    const int32_t specials[] = { 0, 1, -1, 2, -2, 3, -3, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1, 1 << 20 };
    const struct {
        int32_t zp, lo, hi;
    } ranges[] = { { 0, -128, 127 }, { -5, -128, 127 }, { 128, 0, 255 }, { 3, 0, 255 } };
    long checked = 0;
    for (int trial = 0; trial < 3000; trial++) {
        int32_t acc[N], m[N], sh[N];
        uint8_t want[N], got[N + 8];
        const size_t len = (size_t)trial % (N + 1);
        const int per_col = trial % 3 != 0;
        const mxp_rounding mode = modes[trial % 5];
        for (size_t q = 0; q < N; q++) {
            const uint32_t u = next();
            acc[q] = u % 5 == 0 ? specials[next() % 12] : (int32_t)(next() % 2 ? next() : next() % 4096) * (u & 1 ? 1 : -1);
            const int32_t mm = (int32_t)(next() % ((1u << 24) - 1)) | 1; /* odd, as split_scale makes them */
            m[q] = next() % 7 == 0 ? (1 << 24) - 1 : next() % 2 ? mm : -mm;
            if (next() % 9 == 0)
                m[q] = next() % 2 ? 1 : -1;
            sh[q] = 1 + (int32_t)(next() % 62);
            if (next() % 4 == 0) /* shifts that keep codes in range: where the rounding shows */
                sh[q] = 24 + (int32_t)(next() % 16);
        }
        const int r = trial % 4;
        for (size_t q = 0; q < len; q++) {
            const size_t c = per_col ? q : 0;
            int64_t x = oracle_round((int64_t)acc[q] * m[c], sh[c], mode) + ranges[r].zp;
            x = x < ranges[r].lo ? ranges[r].lo : x > ranges[r].hi ? ranges[r].hi : x;
            want[q] = (uint8_t)(x & 0xff);
        }
        for (size_t k = 0; k < NELEMS(kernels); k++) {
            if (kernels[k].needs > mxp_isa_supported())
                continue;
            memset(got, 0xee, sizeof got);
            kernels[k].fn(got, acc, len, m, sh, per_col, ranges[r].zp, ranges[r].lo, ranges[r].hi, (int)mode);
            for (size_t q = 0; q < len; q++)
                if (got[q] != want[q])
                    fail_msg("%s mode %s: acc %d * m %d / 2^%d + zp %d gives %u, want %u", kernels[k].name,
                             mxp_rounding_name(mode), acc[q], m[per_col ? q : 0], sh[per_col ? q : 0], ranges[r].zp,
                             got[q], want[q]);
            for (size_t q = len; q < sizeof got; q++)
                assert_int_equal(got[q], 0xee);
            checked += (long)len;
        }
    }
    assert_true(checked > 50000);
}

/* Exact halves: acc * m = (2t + 1) * 2^(s-1) for every mode and sign. */
static void test_requant_ties(void **state)
{
    (void)state;
    const mxp_rounding modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_NEAREST_AWAY, MXP_ROUND_TOWARD_ZERO,
                                   MXP_ROUND_UP, MXP_ROUND_DOWN };
    /* acc = 2t + 1, m = 1, shift 1: value t + 1/2 */
    int32_t acc[16], m = 1, s = 1;
    for (int i = 0; i < 16; i++)
        acc[i] = 2 * (i - 8) + 1; /* -15 .. 15 odd: -7.5 .. 7.5 */
    const int64_t want[5][16] = {
        { -8, -6, -6, -4, -4, -2, -2, 0, 0, 2, 2, 4, 4, 6, 6, 8 },   /* even */
        { -8, -7, -6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7, 8 },  /* away */
        { -7, -6, -5, -4, -3, -2, -1, 0, 0, 1, 2, 3, 4, 5, 6, 7 },   /* toward zero */
        { -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8 },   /* up */
        { -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7 },  /* down */
    };
    for (int md = 0; md < 5; md++)
        for (size_t k = 0; k < NELEMS(kernels); k++) {
            if (kernels[k].needs > mxp_isa_supported())
                continue;
            uint8_t got[16];
            kernels[k].fn(got, acc, 16, &m, &s, 0, 0, -128, 127, (int)modes[md]);
            for (int i = 0; i < 16; i++)
                if ((int8_t)got[i] != want[md][i])
                    fail_msg("%s %s: %d / 2 gives %d, want %lld", kernels[k].name, mxp_rounding_name(modes[md]),
                             acc[i], (int8_t)got[i], (long long)want[md][i]);
        }
}

/* float32 C: each dequantization kernel against mxp_convert of the product
 * computed exactly here (int64, then to double rounded to odd by hand) in
 * each of its modes, and against its twin: scales of every kind
 * (subnormal, negative, +-0, huge enough to overflow), int32 extremes, per
 * tensor and per column.  With a bias per column: that product plus the
 * bias in float64, then mxp_convert, as the general epilogue. */
static double product_odd(int32_t acc, float scale)
{
    uint32_t bits;
    memcpy(&bits, &scale, 4);
    const int ex = (int)(bits >> 23 & 0xff);
    const int64_t m = ex ? (int64_t)(bits & 0x7fffff) | 0x800000 : (int64_t)(bits & 0x7fffff);
    const int e = (ex ? ex : 1) - 150;
    const int64_t p = (int64_t)acc * m;
    const int neg_s = (int)(bits >> 31);
    if (p == 0)
        return (neg_s ^ (acc < 0 && m == 0)) ? -0.0 : 0.0;
    uint64_t u = p < 0 ? 0 - (uint64_t)p : (uint64_t)p;
    int extra = 0;
    while (u >> 53) { /* to 53 bits, rounded to odd */
        u = (u >> 1) | (u & 1);
        extra++;
    }
    double d = ldexp((double)u, e + extra);
    return ((p < 0) ^ neg_s) ? -d : d;
}

/* One trial's values: len sums and scales (per column or one), biases. */
enum { DQ_N = 37 };

static void dequant_values(int32_t *acc, float *sc, float *bias, int per_col)
{
    const float fixed[] = { 1.0f, -1.0f, 0.0f, -0.0f, 1e-45f, -1e-45f, 1.17549435e-38f, 3.4e38f, -3.4e38f,
                            0.0123f, 1.0f / 65536, 0x1.fffffep-3f, 7.0e-40f };
    for (size_t q = 0; q < DQ_N; q++) {
        const uint32_t u = next();
        acc[q] = u % 4 == 0 ? (int32_t)(INT32_MAX - (int32_t)(next() % 1000)) * (u & 8 ? -1 : 1)
                            : (int32_t)next() / (int32_t)(1 + next() % 65536);
        if (u % 13 == 0)
            acc[q] = u % 26 ? 0 : INT32_MIN;
        const uint32_t r = next();
        if (r % 3 == 0) {
            sc[q] = fixed[next() % NELEMS(fixed)];
        } else {
            uint32_t b = next() & 0xff7fffffu; /* finite: exponent never all ones */
            memcpy(&sc[q], &b, 4);
        }
        const uint32_t v = next() & 0xff7fffffu; /* any finite float, or one near the product */
        memcpy(&bias[q], &v, 4);
        if (v % 3 == 0)
            bias[q] = (float)(-(double)acc[q] * sc[per_col ? q : 0] * (1 + (double)(v % 7) * 0x1p-30));
        if (v % 11 == 0)
            bias[q] = v % 2 ? -0.0f : 0.5f;
    }
}

/* got[0 .. len) equals want bit for bit, and nothing after it was written. */
static void expect_floats(const char *what, const float *got, const float *want, size_t len, const int32_t *acc,
                          const float *sc, int per_col, mxp_rounding mode)
{
    for (size_t q = 0; q < len; q++)
        if (memcmp(&got[q], &want[q], 4) != 0)
            fail_msg("%s, %s: %d * %a gives %a, want %a", what, mxp_rounding_name(mode), acc[q],
                     (double)sc[per_col ? q : 0], (double)got[q], (double)want[q]);
    const unsigned char *tail = (const unsigned char *)(got + len);
    for (size_t b = 0; b < (DQ_N + 4 - len) * 4; b++)
        assert_int_equal(tail[b], 0x5c);
}

static void test_dequant_f32_vs_convert(void **state)
{
    (void)state;
    const mxp_rounding modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_UP, MXP_ROUND_DOWN, MXP_ROUND_TOWARD_ZERO };
    long checked = 0;
    for (int trial = 0; trial < 4000; trial++) {
        int32_t acc[DQ_N];
        float sc[DQ_N], got[DQ_N + 4], want[DQ_N], bias[DQ_N], want_b[DQ_N];
        const int per_col = trial % 2;
        const mxp_rounding mode = modes[trial % 4];
        const size_t len = (size_t)(trial % (DQ_N + 1));
        dequant_values(acc, sc, bias, per_col);
        const mxp_convert_opts co = { .rounding = mode };
        for (size_t q = 0; q < len; q++) {
            const double x = product_odd(acc[q], sc[per_col ? q : 0]);
            assert_int_equal(mxp_convert(&want[q], MXP_F32, &x, MXP_F64, 1, &co), MXP_OK);
            const double xb = x + (double)bias[q];
            assert_int_equal(mxp_convert(&want_b[q], MXP_F32, &xb, MXP_F64, 1, &co), MXP_OK);
        }
        for (size_t k = 0; dequants[k].fn; k++) { /* each kernel in its modes; its twin in all four */
            const dequant *d = &dequants[k];
            const dequant_bias *db = &dequant_biases[k];
            assert_int_equal(d->needs, db->needs);
            for (int twin = 0; twin < 2; twin++) {
                if (!twin && (d->needs > mxp_isa_supported() || !((d->modes >> mode) & 1)))
                    continue;
                memset(got, 0x5c, sizeof got);
                assert_true((twin ? d->twin : d->fn)(got, acc, len, sc, per_col, (int)mode));
                expect_floats(twin ? "twin" : d->name, got, want, len, acc, sc, per_col, mode);
                memset(got, 0x5c, sizeof got);
                assert_true((twin ? db->twin : db->fn)(got, acc, len, sc, per_col, bias, (int)mode));
                expect_floats(twin ? "twin with bias" : db->name, got, want_b, len, acc, sc, per_col, mode);
                checked += (long)len;
            }
        }
    }
    if (!dequants[0].fn)
        skip();
    assert_true(checked > 50000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requant_kernels_vs_oracle),
        cmocka_unit_test(test_requant_ties),
        cmocka_unit_test(test_dequant_f32_vs_convert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
