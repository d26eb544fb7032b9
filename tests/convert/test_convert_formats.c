/* The formats added in 0.2 (float8_e3m4, float8_e4m3, the fnuz float8s,
 * float8_e8m0fnu, float6, float4, int4/int2/int1 and their unsigned twins)
 * with hand-computed expected bits: each format's own rule for zeros, NaN,
 * infinities and overflow (docs/conversions.md "Formats without infinity,
 * NaN or negative zero"), ties, subnormals, saturation, the counters and the
 * sub-byte storage (low bits, the bits above ignored on read).  Values from
 * the OCP OFP8 / MX v1.0 specifications and ml_dtypes 0.6. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

#define RNE MXP_ROUND_NEAREST_EVEN
#define RNA MXP_ROUND_NEAREST_AWAY
#define RTZ MXP_ROUND_TOWARD_ZERO
#define RU MXP_ROUND_UP
#define RD MXP_ROUND_DOWN
#define INF MXP_OVERFLOW_INF
#define SAT MXP_OVERFLOW_SATURATE

static unsigned to8(mxp_dtype dst, double x, mxp_rounding mode, mxp_overflow ov, mxp_convert_flags *fl)
{
    uint8_t out = 0xaa;
    mxp_convert_opts o = { .rounding = mode, .overflow = ov, .flags = fl };
    assert_int_equal(mxp_convert(&out, dst, &x, MXP_F64, 1, &o), MXP_OK);
    return out;
}

static unsigned rne(mxp_dtype dst, double x) { return to8(dst, x, RNE, INF, NULL); }

static double from8(mxp_dtype src, unsigned bits)
{
    uint8_t b = (uint8_t)bits;
    double v;
    assert_int_equal(mxp_convert(&v, MXP_F64, &b, src, 1, NULL), MXP_OK);
    return v;
}

static bool is_neg_zero(double v) { return v == 0 && signbit(v); }

static void test_fnuz_types_have_one_nan_and_no_negative_zero(void **state)
{
    (void)state;
    const mxp_dtype t[] = { MXP_E4M3FNUZ, MXP_E5M2FNUZ, MXP_E4M3B11 };
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(rne(t[i], -0.0), 0x00);            /* -0 -> +0 */
        assert_int_equal(rne(t[i], -1e-300), 0x00);         /* underflow: +0 */
        assert_int_equal(to8(t[i], -1e-300, RD, INF, NULL), 0x81); /* toward -inf: -min_subnormal */
        assert_int_equal(rne(t[i], NAN), 0x80);
        assert_int_equal(rne(t[i], -NAN), 0x80);
        assert_int_equal(rne(t[i], INFINITY), 0x80);        /* no infinity: NaN */
        assert_int_equal(rne(t[i], -INFINITY), 0x80);
        assert_int_equal(to8(t[i], -INFINITY, RNE, SAT, NULL), 0xff); /* saturate: -max */
        assert_int_equal(to8(t[i], 1e30, RTZ, INF, NULL), 0x7f);      /* toward zero: max */
        assert_int_equal(to8(t[i], -1e30, RU, INF, NULL), 0xff);
        assert_int_equal(to8(t[i], -1e30, RD, INF, NULL), 0x80);      /* toward -inf: NaN */
        assert_true(isnan(from8(t[i], 0x80)));
        assert_true(from8(t[i], 0x00) == 0 && !signbit(from8(t[i], 0x00)));
    }
    /* every exponent is finite: 0x7f is max */
    assert_true(from8(MXP_E4M3FNUZ, 0x7f) == 240.0);
    assert_true(from8(MXP_E5M2FNUZ, 0x7f) == 57344.0);
    assert_true(from8(MXP_E4M3B11, 0x7f) == 30.0);
    assert_true(from8(MXP_E4M3FNUZ, 0x01) == 0x1p-10);
    assert_true(from8(MXP_E5M2FNUZ, 0x01) == 0x1p-17);
    assert_true(from8(MXP_E4M3B11, 0x01) == 0x1p-13);
    assert_int_equal(rne(MXP_E4M3FNUZ, 1.0), 0x40);      /* bias 8 */
    assert_int_equal(rne(MXP_E5M2FNUZ, 1.0), 0x40);      /* bias 16 */
    assert_int_equal(rne(MXP_E4M3B11, 1.0), 0x58);       /* bias 11 */
    assert_int_equal(rne(MXP_E4M3FNUZ, 248.0), 0x80);    /* above max + half ulp: NaN */
    assert_int_equal(rne(MXP_E4M3FNUZ, 247.9), 0x7f);    /* below the midpoint: max */
    assert_int_equal(to8(MXP_E4M3FNUZ, 248.0, RNE, SAT, NULL), 0x7f);
}

static void test_ieee_style_float8s_have_infinities(void **state)
{
    (void)state;
    assert_int_equal(rne(MXP_E4M3IEEE, INFINITY), 0x78);
    assert_int_equal(rne(MXP_E4M3IEEE, -INFINITY), 0xf8);
    assert_int_equal(rne(MXP_E4M3IEEE, 240.0), 0x77);
    assert_int_equal(rne(MXP_E4M3IEEE, 248.0), 0x78);    /* the tie above max: infinity */
    assert_int_equal(rne(MXP_E4M3IEEE, 247.0), 0x77);
    assert_int_equal(to8(MXP_E4M3IEEE, 1e9, RNE, SAT, NULL), 0x77);
    assert_int_equal(rne(MXP_E4M3IEEE, -0.0), 0x80);
    assert_true(isnan(from8(MXP_E4M3IEEE, 0x79)) && isnan(from8(MXP_E4M3IEEE, 0x7f)));
    assert_true(from8(MXP_E4M3IEEE, 0x01) == 0x1p-9);
    assert_int_equal(rne(MXP_E3M4, 15.5), 0x6f);
    assert_int_equal(rne(MXP_E3M4, 16.0), 0x70);          /* tie above max -> inf */
    assert_int_equal(rne(MXP_E3M4, 1.0), 0x30);          /* bias 3 */
    assert_int_equal(rne(MXP_E3M4, 1.0 + 1.0 / 32), 0x30); /* tie to even */
    assert_int_equal(rne(MXP_E3M4, 1.0 + 3.0 / 32), 0x32);
    assert_int_equal(to8(MXP_E3M4, 1.0 + 1.0 / 32, RNA, INF, NULL), 0x31);
    assert_true(from8(MXP_E3M4, 0x01) == 0x1p-6);
}

static void test_e8m0_is_powers_of_two_without_zero_or_sign(void **state)
{
    (void)state;
    mxp_convert_flags fl = { 0 };
    assert_int_equal(rne(MXP_E8M0, 1.0), 127);
    assert_int_equal(rne(MXP_E8M0, 0x1p127), 254);
    assert_int_equal(rne(MXP_E8M0, 0x1p-127), 0);
    assert_int_equal(rne(MXP_E8M0, 3.0), 129);              /* 1.5 * 2: ties go up */
    assert_int_equal(rne(MXP_E8M0, 1.5), 128);
    assert_int_equal(rne(MXP_E8M0, 1.4999), 127);
    assert_int_equal(to8(MXP_E8M0, 1.5, RTZ, INF, NULL), 127);
    assert_int_equal(to8(MXP_E8M0, 1.01, RU, INF, NULL), 128);
    assert_int_equal(to8(MXP_E8M0, 1.99, RD, INF, NULL), 127);
    assert_int_equal(to8(MXP_E8M0, 1e-300, RNE, INF, &fl), 0);  /* no zero: 2^-127 */
    assert_int_equal(fl.underflow, 1);
    assert_int_equal(to8(MXP_E8M0, 0.0, RNE, INF, &fl), 0xff);  /* zero: NaN */
    assert_int_equal(to8(MXP_E8M0, -0.0, RNE, SAT, &fl), 0xff);
    assert_int_equal(to8(MXP_E8M0, -4.0, RNE, SAT, &fl), 0xff); /* negative: NaN */
    assert_int_equal(fl.invalid, 3);
    assert_int_equal(rne(MXP_E8M0, NAN), 0xff);
    assert_int_equal(rne(MXP_E8M0, INFINITY), 0xff);
    assert_int_equal(to8(MXP_E8M0, INFINITY, RNE, SAT, NULL), 254);
    assert_int_equal(rne(MXP_E8M0, 0x1.8p127), 0xff);        /* rounds past 2^127: NaN */
    assert_int_equal(to8(MXP_E8M0, 0x1.8p127, RTZ, INF, NULL), 254);
    assert_true(from8(MXP_E8M0, 0) == 0x1p-127);
    assert_true(from8(MXP_E8M0, 127) == 1.0);
    assert_true(from8(MXP_E8M0, 254) == 0x1p127);
    assert_true(isnan(from8(MXP_E8M0, 255)));
}

static void test_float6_and_float4_are_finite_only(void **state)
{
    (void)state;
    mxp_convert_flags fl = { 0 };
    /* every value of float4_e2m1fn */
    const double e2m1[8] = { 0, 0.5, 1, 1.5, 2, 3, 4, 6 };
    for (unsigned b = 0; b < 16; b++) {
        double v = from8(MXP_E2M1, b);
        double want = (b & 8) ? -e2m1[b & 7] : e2m1[b & 7];
        assert_true(v == want && signbit(v) == signbit(want));
        assert_int_equal(rne(MXP_E2M1, want), b);
    }
    assert_int_equal(rne(MXP_E2M1, 5.0), 0x6);              /* tie 4|6 -> 4 (even) */
    assert_int_equal(to8(MXP_E2M1, 5.0, RNA, INF, NULL), 0x7);
    assert_int_equal(rne(MXP_E2M1, 2.5), 0x4);              /* tie 2|3 -> 2 */
    assert_int_equal(rne(MXP_E2M1, 0.25), 0x0);             /* tie 0|0.5 -> 0 */
    assert_int_equal(rne(MXP_E2M1, 0.26), 0x1);
    assert_int_equal(to8(MXP_E2M1, 1e9, RNE, INF, &fl), 0x7); /* no infinity: max */
    assert_int_equal(to8(MXP_E2M1, -INFINITY, RNE, INF, &fl), 0xf);
    assert_int_equal(fl.overflow, 2);
    /* NaN: ml_dtypes 0.6 gives the zero of the other sign; counted invalid */
    assert_int_equal(to8(MXP_E2M1, NAN, RNE, INF, &fl), 0x8);
    assert_int_equal(to8(MXP_E2M1, -NAN, RNE, INF, &fl), 0x0);
    assert_int_equal(to8(MXP_E2M3, NAN, RNE, SAT, &fl), 0x20);
    assert_int_equal(fl.invalid, 3);
    assert_int_equal(rne(MXP_E2M3, 7.5), 0x1f);
    assert_int_equal(rne(MXP_E2M3, 0.125), 0x01);
    assert_int_equal(rne(MXP_E2M3, -0.0), 0x20);
    assert_int_equal(rne(MXP_E3M2, 28.0), 0x1f);
    assert_int_equal(rne(MXP_E3M2, 0.0625), 0x01);
    assert_int_equal(rne(MXP_E3M2, 30.0), 0x1f);
    assert_true(from8(MXP_E2M3, 0x3f) == -7.5 && from8(MXP_E3M2, 0x1f) == 28.0);
    assert_true(is_neg_zero(from8(MXP_E3M2, 0x20)));
    /* sub-byte storage: the bits above the format are ignored on read */
    assert_true(from8(MXP_E2M1, 0xf7) == 6.0 && from8(MXP_E2M1, 0x17) == 6.0);
    assert_true(from8(MXP_E2M3, 0xc1) == 0.125);
}

static void test_sub_byte_integers_saturate_and_sign_extend(void **state)
{
    (void)state;
    mxp_convert_flags fl = { 0 };
    assert_int_equal(rne(MXP_S4, 7.0), 0x7);
    assert_int_equal(rne(MXP_S4, -8.0), 0x8);
    assert_int_equal(rne(MXP_S4, -1.0), 0xf);               /* the low four bits, the rest zero */
    assert_int_equal(to8(MXP_S4, 100.0, RNE, INF, &fl), 0x7);
    assert_int_equal(to8(MXP_S4, -100.0, RNE, INF, &fl), 0x8);
    assert_int_equal(fl.invalid, 2);
    assert_int_equal(rne(MXP_S4, 2.5), 0x2);
    assert_int_equal(to8(MXP_S4, 2.5, RNA, INF, NULL), 0x3);
    assert_int_equal(rne(MXP_U4, 15.0), 0xf);
    assert_int_equal(rne(MXP_U4, 16.0), 0xf);
    assert_int_equal(rne(MXP_U4, -3.0), 0x0);
    assert_int_equal(rne(MXP_S2, 1.0), 0x1);
    assert_int_equal(rne(MXP_S2, -2.0), 0x2);
    assert_int_equal(rne(MXP_S2, 5.0), 0x1);
    assert_int_equal(rne(MXP_U2, 5.0), 0x3);
    assert_int_equal(rne(MXP_S1, -1.0), 0x1);
    assert_int_equal(rne(MXP_S1, 1.0), 0x0);
    assert_int_equal(rne(MXP_U1, 1.0), 0x1);
    assert_int_equal(rne(MXP_U1, 0.4), 0x0);
    assert_true(from8(MXP_S4, 0x8) == -8.0 && from8(MXP_S4, 0xf) == -1.0 && from8(MXP_S4, 0x7) == 7.0);
    assert_true(from8(MXP_S4, 0xf7) == 7.0 && from8(MXP_S4, 0x0f) == -1.0); /* high bits ignored */
    assert_true(from8(MXP_U4, 0xff) == 15.0 && from8(MXP_S2, 0x3) == -1.0 && from8(MXP_S1, 0x1) == -1.0);
    /* between the integer types: int8 -> int4 saturates, int4 -> int8 sign-extends */
    int8_t s8[4] = { -128, -9, 7, 100 }, back[4];
    uint8_t s4[4];
    assert_int_equal(mxp_convert(s4, MXP_S4, s8, MXP_S8, 4, NULL), MXP_OK);
    assert_int_equal(s4[0], 0x8);
    assert_int_equal(s4[1], 0x8);
    assert_int_equal(s4[2], 0x7);
    assert_int_equal(s4[3], 0x7);
    assert_int_equal(mxp_convert(back, MXP_S8, s4, MXP_S4, 4, NULL), MXP_OK);
    assert_int_equal(back[0], -8);
    assert_int_equal(back[3], 7);
}

/* The new formats between themselves, one rounding: e4m3fn 0.3125 (0x2a,
 * 1.010b x 2^-2) -> e2m1 ties 0 | 0.5 ... ; e3m4 -> e2m3 and fnuz pairs. */
static void test_conversions_between_the_new_formats(void **state)
{
    (void)state;
    for (unsigned b = 0; b < 256; b++) {
        /* e4m3fnuz -> e5m2fnuz -> f64 equals e4m3fnuz -> f64 -> e5m2fnuz -> f64 */
        uint8_t x = (uint8_t)b, y, z;
        double v = from8(MXP_E4M3FNUZ, b), w;
        assert_int_equal(mxp_convert(&y, MXP_E5M2FNUZ, &x, MXP_E4M3FNUZ, 1, NULL), MXP_OK);
        assert_int_equal(mxp_convert(&z, MXP_E5M2FNUZ, &v, MXP_F64, 1, NULL), MXP_OK);
        assert_int_equal(y, z);
        /* float6 e2m3 holds every float4 value: exact */
        if (b < 16) {
            assert_int_equal(mxp_convert(&y, MXP_E2M3, &x, MXP_E2M1, 1, NULL), MXP_OK);
            w = from8(MXP_E2M3, y);
            v = from8(MXP_E2M1, b);
            assert_true(w == v && signbit(w) == signbit(v));
        }
    }
    /* e8m0 scale -> bf16 exact, e.g. 2^-127 is a bfloat16 subnormal */
    uint8_t s = 0;
    uint16_t h;
    assert_int_equal(mxp_convert(&h, MXP_BF16, &s, MXP_E8M0, 1, NULL), MXP_OK);
    assert_int_equal(h, 0x0040);
}

/* Packed forms: bytes by hand, round trips of every pattern, errors. */
static void test_pack_and_unpack(void **state)
{
    (void)state;
    const uint8_t fp4[5] = { 0x1, 0x7, 0xf, 0x8, 0x3 }; /* 0.5, 6, -6, -0, 1.5 */
    uint8_t packed[4] = { 0xaa, 0xaa, 0xaa, 0xaa }, back[8];
    assert_int_equal(mxp_packed_bytes(MXP_E2M1, 5), 3);
    assert_int_equal(mxp_pack(packed, fp4, MXP_E2M1, 5), MXP_OK);
    assert_int_equal(packed[0], 0x71); /* element 0 low nibble */
    assert_int_equal(packed[1], 0x8f);
    assert_int_equal(packed[2], 0x03); /* the unused high nibble is zero */
    assert_int_equal(packed[3], 0xaa); /* nothing past the packed bytes */
    assert_int_equal(mxp_unpack(back, packed, MXP_E2M1, 5), MXP_OK);
    assert_memory_equal(back, fp4, 5);
    /* six bits: four elements in three bytes, element i at bits [6i, 6i + 6) */
    const uint8_t fp6[5] = { 0x3f, 0x01, 0x20, 0x15, 0xff /* read as 0x3f */ };
    uint8_t p6[4];
    assert_int_equal(mxp_packed_bytes(MXP_E3M2, 5), 4);
    assert_int_equal(mxp_pack(p6, fp6, MXP_E3M2, 5), MXP_OK);
    const uint32_t g = 0x3fu | 0x01u << 6 | 0x20u << 12 | 0x15u << 18;
    assert_int_equal(p6[0], g & 0xff);
    assert_int_equal(p6[1], (g >> 8) & 0xff);
    assert_int_equal(p6[2], g >> 16);
    assert_int_equal(p6[3], 0x3f);
    assert_int_equal(mxp_unpack(back, p6, MXP_E3M2, 5), MXP_OK);
    assert_int_equal(back[4], 0x3f); /* the bits above come back zero */
    /* every type, 1000 values of every pattern, through and back */
    const mxp_dtype types[] = { MXP_E2M3, MXP_E3M2, MXP_E2M1, MXP_S4, MXP_U4, MXP_S2, MXP_U2, MXP_S1, MXP_U1 };
    static uint8_t in[1000], out[1000], mid[1000];
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const int bits = mxp_dtype_get_traits(types[k])->bits;
        for (int i = 0; i < 1000; i++)
            in[i] = (uint8_t)((i * 37 + 11) & ((1 << bits) - 1));
        for (size_t n = 0; n <= 1000; n += 333) {
            assert_int_equal(mxp_packed_bytes(types[k], n), (n * (size_t)bits + 7) / 8);
            assert_int_equal(mxp_pack(mid, in, types[k], n), MXP_OK);
            memset(out, 0xee, sizeof out);
            assert_int_equal(mxp_unpack(out, mid, types[k], n), MXP_OK);
            assert_memory_equal(out, in, n);
            assert_int_equal(out[n < 1000 ? n : 999], n < 1000 ? 0xee : in[999]);
        }
    }
    /* bad input: a type that is not sub-byte, NULL, overlap, sizes */
    assert_int_equal(mxp_packed_bytes(MXP_E4M3, 4), 0);
    assert_int_equal(mxp_packed_bytes(MXP_BOOL, 4), 0);
    assert_int_equal(mxp_packed_bytes(MXP_S4, SIZE_MAX), 0);
    assert_int_equal(mxp_pack(packed, fp4, MXP_E4M3, 5), MXP_ERR_INVALID_DTYPE);
    assert_non_null(strstr(mxp_last_error(), "float8_e4m3fn is not a sub-byte type"));
    assert_int_equal(mxp_unpack(back, packed, (mxp_dtype)99, 5), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_pack(NULL, fp4, MXP_E2M1, 5), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_pack(NULL, NULL, MXP_E2M1, 0), MXP_OK);
    assert_int_equal(mxp_pack(in + 1, in, MXP_E2M1, 8), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "overlap"));
    assert_int_equal(mxp_pack(mid, in, MXP_S4, SIZE_MAX), MXP_ERR_SIZE_OVERFLOW);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fnuz_types_have_one_nan_and_no_negative_zero),
        cmocka_unit_test(test_ieee_style_float8s_have_infinities),
        cmocka_unit_test(test_e8m0_is_powers_of_two_without_zero_or_sign),
        cmocka_unit_test(test_float6_and_float4_are_finite_only),
        cmocka_unit_test(test_sub_byte_integers_saturate_and_sign_extend),
        cmocka_unit_test(test_conversions_between_the_new_formats),
        cmocka_unit_test(test_pack_and_unpack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
