/* Conversion semantics with hand-computed expected bits: ties, one rounding
 * from wide sources (no double rounding), subnormals, overflow per mode,
 * saturation, NaN sign and payload, integers, bool, and the flag counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static uint64_t cvt(mxp_dtype dst, mxp_dtype src, uint64_t bits, mxp_rounding mode, mxp_overflow ov)
{
    uint64_t out = 0;
    mxp_convert_opts o = { .rounding = mode, .overflow = ov, .seed = 0, .flags = NULL };
    assert_int_equal(mxp_convert(&out, dst, &bits, src, 1, &o), MXP_OK);
    return out;
}

static uint64_t f32b(float x) { uint32_t b; memcpy(&b, &x, 4); return b; }
static uint64_t f64b(double x) { uint64_t b; memcpy(&b, &x, 8); return b; }

#define RNE MXP_ROUND_NEAREST_EVEN
#define RNA MXP_ROUND_NEAREST_AWAY
#define RTZ MXP_ROUND_TOWARD_ZERO
#define RU MXP_ROUND_UP
#define RD MXP_ROUND_DOWN
#define INF MXP_OVERFLOW_INF
#define SAT MXP_OVERFLOW_SATURATE

/* Run at every ISA level: the kernels must give these bits too. */
static void at_every_level(void (*check)(void))
{
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        check();
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
}

static void ties_to_even_and_away(void)
{
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x3f808000, RNE, INF), 0x3f80); /* 1 + 2^-8: tie, even down */
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x3f818000, RNE, INF), 0x3f82); /* tie, even up */
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x3f808000, RNA, INF), 0x3f81);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0xbf808000, RNA, INF), 0xbf81);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x3f808000, RU, INF), 0x3f81);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0xbf808000, RU, INF), 0xbf80);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0xbf808000, RD, INF), 0xbf81);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x3f80ffff, RTZ, INF), 0x3f80);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(1.0f + 0x1p-11f), RNE, INF), 0x3c00);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(1.0f + 0x1p-11f), RNA, INF), 0x3c01);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(1.0f + 3 * 0x1p-11f), RNE, INF), 0x3c02);
}

static void test_ties_round_to_even_or_away_by_mode(void **state)
{
    (void)state;
    at_every_level(ties_to_even_and_away);
}

static void one_rounding(void)
{
    /* 1 + 2^-8 + 2^-40: above the bf16 midpoint.  Through float32 it would
     * become the midpoint 1 + 2^-8 and round down to 1.0. */
    assert_int_equal(cvt(MXP_BF16, MXP_F64, f64b(1.0 + 0x1p-8 + 0x1p-40), RNE, INF), 0x3f81);
    assert_int_equal(cvt(MXP_F16, MXP_F64, f64b(1.0 + 0x1p-11 + 0x1p-40), RNE, INF), 0x3c01);
    /* int32 2^24 + 2^16 + 1: above the bf16 midpoint; through float32 it is
     * the midpoint 2^24 + 2^16 and would round to even, 2^24. */
    assert_int_equal(cvt(MXP_BF16, MXP_S32, (uint32_t)(16777216 + 65536 + 1), RNE, INF), 0x4b81);
    assert_int_equal(cvt(MXP_BF16, MXP_S64, (uint64_t)(16777216 + 65536 + 1), RNE, INF), 0x4b81);
    /* int64 -> float16: 65519 is below the max's half-ulp, 65520 is the tie
     * that rounds to 2^16 (even) and overflows. */
    assert_int_equal(cvt(MXP_F16, MXP_S64, 65519, RNE, INF), 0x7bff);
    assert_int_equal(cvt(MXP_F16, MXP_S64, 65520, RNE, INF), 0x7c00);
    assert_int_equal(cvt(MXP_F16, MXP_S64, 2049, RNE, INF), 0x6800);
    assert_int_equal(cvt(MXP_F16, MXP_S64, 2051, RNE, INF), 0x6802);
    /* int64 2^53 + 1 -> float64 */
    assert_int_equal(cvt(MXP_F64, MXP_S64, (1ull << 53) + 1, RNE, INF), f64b(0x1p53));
    assert_int_equal(cvt(MXP_F64, MXP_S64, (1ull << 53) + 1, RU, INF), f64b(0x1p53 + 2));
    assert_int_equal(cvt(MXP_E4M3, MXP_F64, f64b(1.0625 + 0x1p-30), RNE, INF), 0x39); /* above 1.0625 tie */
}

static void test_wide_sources_are_rounded_once(void **state)
{
    (void)state;
    at_every_level(one_rounding);
}

static void subnormals(void)
{
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x00000001, RNE, INF), 0x0000);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x00000001, RU, INF), 0x0001);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x80000001, RD, INF), 0x8001);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x00008000, RNE, INF), 0x0000);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x00018000, RNE, INF), 0x0002);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x00010000, RNE, INF), 0x0001);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x007fffff, RNE, INF), 0x0080); /* rounds up to min normal */
    assert_int_equal(cvt(MXP_F32, MXP_BF16, 0x0001, RNE, INF), 0x00010000);
    assert_int_equal(cvt(MXP_F32, MXP_F16, 0x0001, RNE, INF), 0x33800000); /* 2^-24 */
    assert_int_equal(cvt(MXP_F32, MXP_F16, 0x83ff, RNE, INF), 0xb87fc000);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(0x1p-24f), RNE, INF), 0x0001);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(0x1p-25f), RNE, INF), 0x0000);  /* tie to even 0 */
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(0x1.8p-25f), RNE, INF), 0x0001);
    assert_int_equal(cvt(MXP_F16, MXP_F32, 0x00000001, RU, INF), 0x0001);      /* f32 subnormal up */
    assert_int_equal(cvt(MXP_F16, MXP_F32, 0x80000001, RU, INF), 0x8000);
    assert_int_equal(cvt(MXP_F16, MXP_F32, 0x80000001, RD, INF), 0x8001);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(0x1p-9f), RNE, INF), 0x01);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(0x1p-10f), RNE, INF), 0x00);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(0x1.8p-10f), RNE, INF), 0x01);
    assert_int_equal(cvt(MXP_F32, MXP_E4M3, 0x01, RNE, INF), f32b(0x1p-9f));
    assert_int_equal(cvt(MXP_F32, MXP_E4M3, 0x87, RNE, INF), f32b(-0x1.cp-7f));
    assert_int_equal(cvt(MXP_F32, MXP_E5M2, 0x01, RNE, INF), f32b(0x1p-16f));
    assert_int_equal(cvt(MXP_F32, MXP_F64, f64b(1e-46), RNE, INF), 0);
    assert_int_equal(cvt(MXP_F32, MXP_F64, f64b(1e-46), RU, INF), 1);
    assert_int_equal(cvt(MXP_F32, MXP_F64, f64b(-0.0), RNE, INF), 0x80000000);
}

static void test_subnormal_inputs_and_outputs_are_exact(void **state)
{
    (void)state;
    at_every_level(subnormals);
}

static void overflow(void)
{
    /* float8_e4m3fn: max 448 = S.1111.110; 464 is the tie with the missing
     * 480 and goes to even (448); beyond it NaN, as OCP's non-saturating mode. */
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(448.0f), RNE, INF), 0x7e);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(464.0f), RNE, INF), 0x7e);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(465.0f), RNE, INF), 0x7f);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(-500.0f), RNE, INF), 0xff);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(500.0f), RTZ, INF), 0x7e);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(500.0f), RD, INF), 0x7e);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(-500.0f), RU, INF), 0xfe);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, f32b(500.0f), RNE, SAT), 0x7e);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, 0x7f800000, RNE, SAT), 0x7e);   /* inf saturates */
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, 0xff800000, RNE, INF), 0xff);   /* -inf -> NaN */
    /* float8_e5m2: max 57344 = 1.11b x 2^15; 61440 ties to 2^16 and overflows. */
    assert_int_equal(cvt(MXP_E5M2, MXP_F32, f32b(57344.0f), RNE, INF), 0x7b);
    assert_int_equal(cvt(MXP_E5M2, MXP_F32, f32b(61439.0f), RNE, INF), 0x7b);
    assert_int_equal(cvt(MXP_E5M2, MXP_F32, f32b(61440.0f), RNE, INF), 0x7c);
    assert_int_equal(cvt(MXP_E5M2, MXP_F32, f32b(1e6f), RTZ, INF), 0x7b);
    assert_int_equal(cvt(MXP_E5M2, MXP_F32, f32b(-1e6f), RNE, SAT), 0xfb);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(65520.0f), RNE, INF), 0x7c00);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(65519.0f), RNE, INF), 0x7bff);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(1e9f), RTZ, INF), 0x7bff);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(1e9f), RD, INF), 0x7bff);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(1e9f), RU, INF), 0x7c00);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(-1e9f), RU, INF), 0xfbff);
    assert_int_equal(cvt(MXP_F16, MXP_F32, f32b(-1e9f), RNE, SAT), 0xfbff);
    assert_int_equal(cvt(MXP_F16, MXP_F32, 0xff800000, RNE, SAT), 0xfbff);
    assert_int_equal(cvt(MXP_F16, MXP_F32, 0x7f800000, RTZ, INF), 0x7c00);  /* inf stays inf */
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x7f7fffff, RNE, INF), 0x7f80);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x7f7fffff, RNE, SAT), 0x7f7f);
    assert_int_equal(cvt(MXP_BF16, MXP_F64, f64b(1e300), RNE, INF), 0x7f80);
    assert_int_equal(cvt(MXP_F32, MXP_F64, f64b(-1e300), RTZ, INF), 0xff7fffff);
}

static void test_overflow_follows_the_mode_and_policy(void **state)
{
    (void)state;
    at_every_level(overflow);
}

static void nans(void)
{
    /* Sign kept, quiet bit set, top payload bits kept (truncated). */
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0xffc00001, RNE, INF), 0xffc0);
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x7f800001, RNE, INF), 0x7fc0);  /* sNaN never becomes inf */
    assert_int_equal(cvt(MXP_BF16, MXP_F32, 0x7fa10000, RNE, INF), 0x7fe1);
    assert_int_equal(cvt(MXP_F16, MXP_F32, 0x7f800001, RNE, INF), 0x7e00);
    assert_int_equal(cvt(MXP_F16, MXP_F32, 0x7fa00000, RNE, INF), 0x7f00);
    assert_int_equal(cvt(MXP_F16, MXP_F32, 0xffc00000, RNE, SAT), 0xfe00);  /* NaN is not saturated */
    assert_int_equal(cvt(MXP_F32, MXP_F16, 0x7d00, RNE, INF), 0x7fe00000);
    assert_int_equal(cvt(MXP_F32, MXP_BF16, 0xff81, RNE, INF), 0xffc10000);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, 0xffc00000, RNE, INF), 0xff);
    assert_int_equal(cvt(MXP_E4M3, MXP_F32, 0x7f800001, RNE, INF), 0x7f);
    assert_int_equal(cvt(MXP_E5M2, MXP_F32, 0x7fc00000, RNE, INF), 0x7e);
    assert_int_equal(cvt(MXP_E5M2, MXP_F32, 0xff800001, RNE, INF), 0xfe);
    assert_int_equal(cvt(MXP_F32, MXP_E4M3, 0xff, RNE, INF), 0xfff00000);
    assert_int_equal(cvt(MXP_F64, MXP_F32, 0xffc00001, RNE, INF), 0xfff8000020000000ull);
    assert_int_equal(cvt(MXP_S8, MXP_F32, 0x7fc00000, RNE, INF), 0);
    assert_int_equal(cvt(MXP_U64, MXP_F64, f64b(-__builtin_nan("")), RU, INF), 0);
    assert_int_equal(cvt(MXP_BOOL, MXP_F32, 0x7fc00000, RNE, INF), 1);
}

static void test_nan_keeps_sign_and_payload_policy(void **state)
{
    (void)state;
    at_every_level(nans);
}

static void integers(void)
{
    const uint64_t p25 = f32b(2.5f), m25 = f32b(-2.5f);
    assert_int_equal(cvt(MXP_S8, MXP_F32, p25, RNE, INF), 2);
    assert_int_equal(cvt(MXP_S8, MXP_F32, p25, RNA, INF), 3);
    assert_int_equal(cvt(MXP_S8, MXP_F32, p25, RTZ, INF), 2);
    assert_int_equal(cvt(MXP_S8, MXP_F32, p25, RU, INF), 3);
    assert_int_equal(cvt(MXP_S8, MXP_F32, p25, RD, INF), 2);
    assert_int_equal((int8_t)cvt(MXP_S8, MXP_F32, m25, RNE, INF), -2);
    assert_int_equal((int8_t)cvt(MXP_S8, MXP_F32, m25, RNA, INF), -3);
    assert_int_equal((int8_t)cvt(MXP_S8, MXP_F32, m25, RU, INF), -2);
    assert_int_equal((int8_t)cvt(MXP_S8, MXP_F32, m25, RD, INF), -3);
    assert_int_equal(cvt(MXP_S8, MXP_F32, f32b(300.0f), RNE, INF), 127);
    assert_int_equal((int8_t)cvt(MXP_S8, MXP_F32, f32b(-1e10f), RNE, INF), -128);
    assert_int_equal(cvt(MXP_S8, MXP_F32, 0x7f800000, RNE, INF), 127);
    assert_int_equal((int8_t)cvt(MXP_S8, MXP_F32, 0xff800000, RNE, INF), -128);
    assert_int_equal((int8_t)cvt(MXP_S8, MXP_F32, f32b(-128.4f), RNE, INF), -128);
    assert_int_equal(cvt(MXP_S8, MXP_F32, f32b(127.5f), RNE, INF), 127);
    assert_int_equal(cvt(MXP_U8, MXP_F32, f32b(-0.7f), RNE, INF), 0);
    assert_int_equal(cvt(MXP_U8, MXP_F32, f32b(-0.3f), RNE, INF), 0);
    assert_int_equal(cvt(MXP_U8, MXP_F32, f32b(255.5f), RNE, INF), 255);
    assert_int_equal(cvt(MXP_U8, MXP_F32, f32b(254.5f), RNE, INF), 254);
    assert_int_equal(cvt(MXP_S64, MXP_F64, f64b(0x1p63), RNE, INF), (uint64_t)INT64_MAX);
    assert_int_equal(cvt(MXP_S64, MXP_F64, f64b(-0x1p63), RNE, INF), (uint64_t)INT64_MIN);
    assert_int_equal(cvt(MXP_U64, MXP_F64, f64b(1e20), RNE, INF), UINT64_MAX);
    assert_int_equal(cvt(MXP_S32, MXP_F32, f32b(-2147483648.0f), RNE, INF), 0x80000000u);
    assert_int_equal(cvt(MXP_S8, MXP_S16, 300, RNE, INF), 127);       /* ints saturate, not wrap */
    assert_int_equal(cvt(MXP_S8, MXP_S16, (uint16_t)-300, RNE, INF), 0x80);
    assert_int_equal(cvt(MXP_U8, MXP_S32, (uint32_t)-1, RNE, INF), 0);
    assert_int_equal(cvt(MXP_S64, MXP_U64, UINT64_MAX, RNE, INF), (uint64_t)INT64_MAX);
    assert_int_equal(cvt(MXP_U16, MXP_S8, 0x7f, RNE, INF), 127);
    assert_int_equal(cvt(MXP_BOOL, MXP_F32, f32b(-0.0f), RNE, INF), 0);
    assert_int_equal(cvt(MXP_BOOL, MXP_F32, f32b(0.25f), RNE, INF), 1);
    assert_int_equal(cvt(MXP_F32, MXP_BOOL, 2, RNE, INF), f32b(1.0f));
    assert_int_equal(cvt(MXP_S8, MXP_BOOL, 1, RNE, INF), 1);
}

static void test_integers_round_by_mode_then_saturate(void **state)
{
    (void)state;
    at_every_level(integers);
}

static void test_flags_count_what_happened(void **state)
{
    (void)state;
    const double in[] = { 1.0, 0.1, 1e10, 1e-10, __builtin_nan(""), -3e-5 };
    uint16_t out[6];
    mxp_convert_flags fl = { 0, 0, 0, 0 };
    mxp_convert_opts o = { .rounding = RNE, .overflow = INF, .seed = 0, .flags = &fl };
    assert_int_equal(mxp_convert(out, MXP_F16, in, MXP_F64, 6, &o), MXP_OK);
    assert_int_equal(fl.inexact, 4);   /* 0.1, 1e10, 1e-10, -3e-5 */
    assert_int_equal(fl.overflow, 1);  /* 1e10 */
    assert_int_equal(fl.underflow, 2); /* 1e-10 -> 0, -3e-5 -> subnormal, inexact */
    assert_int_equal(fl.invalid, 0);
    assert_int_equal(out[2], 0x7c00);
    const float fin[] = { 2.5f, 300.0f, __builtin_nanf(""), -7.0f, 4.0f };
    uint8_t u[5];
    memset(&fl, 0, sizeof fl);
    assert_int_equal(mxp_convert(u, MXP_U8, fin, MXP_F32, 5, &o), MXP_OK);
    assert_int_equal(fl.invalid, 3);  /* 300 saturates, NaN, -7 */
    assert_int_equal(fl.inexact, 1);  /* 2.5 */
    assert_memory_equal(u, ((uint8_t[]){ 2, 255, 0, 0, 4 }), 5);
    /* Counters add up across calls and match the plain call's results. */
    uint8_t u2[5];
    assert_int_equal(mxp_convert(u2, MXP_U8, fin, MXP_F32, 5, &o), MXP_OK);
    assert_int_equal(fl.invalid, 6);
    assert_int_equal(mxp_convert(u2, MXP_U8, fin, MXP_F32, 5, NULL), MXP_OK);
    assert_memory_equal(u, u2, 5);
}

/* Every float value beyond an integer type's range saturates and counts
 * as invalid, for every integer type: 2^64 and above into uint64 too
 * (where the saturated value, UINT64_MAX, is the type's own maximum). */
static void test_flags_count_invalid_beyond_every_integer_range(void **state)
{
    (void)state;
    static const mxp_dtype types[] = { MXP_S8, MXP_S16, MXP_S32, MXP_S64, MXP_U8, MXP_U16, MXP_U32, MXP_U64 };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const mxp_dtype_traits *tr = mxp_dtype_get_traits(types[t]);
        const int bits = 8 * (int)tr->itemsize;
        const double above = __builtin_ldexp(1.0, tr->is_signed ? bits - 1 : bits); /* max + 1 */
        const double below = tr->is_signed ? -__builtin_ldexp(1.0, bits) : -1.0;   /* under min */
        const double in[] = { above, 2 * above, 1e300, __builtin_inf(), below, -1e300, -__builtin_inf(),
                              __builtin_nan("") };
        const size_t n = sizeof in / sizeof in[0];
        uint64_t out[sizeof in / sizeof in[0]];
        mxp_convert_flags fl = { 0, 0, 0, 0 };
        const mxp_convert_opts o = { .rounding = RNE, .flags = &fl };
        for (int src = 0; src < 2; src++) {
            memset(&fl, 0, sizeof fl);
            memset(out, 0, sizeof out);
            float f[sizeof in / sizeof in[0]];
            for (size_t i = 0; i < n; i++)
                f[i] = (float)in[i]; /* 1e300 becomes inf */
            assert_int_equal(mxp_convert(out, types[t], src ? (const void *)f : (const void *)in,
                                         src ? MXP_F32 : MXP_F64, n, &o), MXP_OK);
            if (fl.invalid != n || fl.inexact != 0) {
                print_error("%s -> %s: invalid %llu, inexact %llu; want %zu and 0\n", src ? "float32" : "float64",
                            tr->name, (unsigned long long)fl.invalid, (unsigned long long)fl.inexact, n);
                fail();
            }
            /* saturated: max, max, max, max, min, min, min; NaN 0 (bit patterns of the type) */
            const uint64_t mask = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
            const uint64_t max = tr->is_signed ? mask >> 1 : mask, min = tr->is_signed ? (mask >> 1) + 1 : 0;
            for (size_t i = 0; i < n; i++) {
                uint64_t v = 0;
                memcpy(&v, (const unsigned char *)out + i * tr->itemsize, tr->itemsize); /* little-endian */
                const uint64_t want = i < 4 ? max : i < 7 ? min : 0;
                if (v != want) {
                    print_error("%s -> %s: element %zu is 0x%llx, want 0x%llx\n", src ? "float32" : "float64",
                                tr->name, i, (unsigned long long)v, (unsigned long long)want);
                    fail();
                }
            }
        }
    }
}

static void test_scalar_helpers(void **state)
{
    (void)state;
    assert_int_equal(mxp_f32_to_bf16(1.0f), 0x3f80);
    assert_true(mxp_bf16_to_f32(0x3fc0) == 1.5f);
    assert_int_equal(mxp_f32_to_f16(65504.0f), 0x7bff);
    assert_true(mxp_f16_to_f32(0x3555) == 0x1.554p-2f);
    assert_int_equal(mxp_f32_to_e4m3(-2.0f), 0xc0);
    assert_true(mxp_e4m3_to_f32(0x7e) == 448.0f);
    assert_int_equal(mxp_f32_to_e5m2(0.5f), 0x38);
    assert_true(mxp_e5m2_to_f32(0x7b) == 57344.0f);
}

/* -PTRDIFF_MIN was undefined behaviour in the size check (issue 24). */
static void test_ptrdiff_min_strides_are_refused(void **state)
{
    (void)state;
    float src[2] = { 1, 2 };
    uint16_t dst[2] = { 7, 7 };
    assert_int_equal(mxp_convert_strided(dst, MXP_BF16, 2, src, MXP_F32, PTRDIFF_MIN, 2, NULL), MXP_ERR_SIZE_OVERFLOW);
    assert_int_equal(mxp_convert_strided(dst, MXP_BF16, PTRDIFF_MIN, src, MXP_F32, 4, 2, NULL), MXP_ERR_SIZE_OVERFLOW);
    assert_true(dst[0] == 7 && dst[1] == 7);
    assert_int_equal(mxp_convert_strided(dst, MXP_BF16, 2, src, MXP_F32, PTRDIFF_MIN, 1, NULL), MXP_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ties_round_to_even_or_away_by_mode),
        cmocka_unit_test(test_wide_sources_are_rounded_once),
        cmocka_unit_test(test_subnormal_inputs_and_outputs_are_exact),
        cmocka_unit_test(test_overflow_follows_the_mode_and_policy),
        cmocka_unit_test(test_nan_keeps_sign_and_payload_policy),
        cmocka_unit_test(test_integers_round_by_mode_then_saturate),
        cmocka_unit_test(test_flags_count_what_happened),
        cmocka_unit_test(test_flags_count_invalid_beyond_every_integer_range),
        cmocka_unit_test(test_scalar_helpers),
        cmocka_unit_test(test_ptrdiff_min_strides_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
