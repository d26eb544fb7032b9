/* The dtype table, names, promotion (against NumPy's own table) and casting. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

static void test_traits_of_every_type_match_the_formats(void **state)
{
    (void)state;
    const mxp_dtype_traits *t = mxp_dtype_get_traits(MXP_F16);
    assert_string_equal(t->name, "float16");
    assert_int_equal(t->itemsize, 2);
    assert_true(t->max == 65504.0 && t->min_normal == 0x1p-14 && t->min_subnormal == 0x1p-24);
    assert_int_equal(t->max_exact_int, 2048);
    t = mxp_dtype_get_traits(MXP_BF16);
    assert_true(t->max == 3.3895313892515355e38 && t->eps == 0.0078125 && t->min_subnormal == 0x1p-133);
    t = mxp_dtype_get_traits(MXP_E4M3);
    assert_true(t->max == 448.0 && !t->has_inf && t->has_nan && t->min_subnormal == 0x1p-9);
    assert_int_equal(t->bias, 7);
    t = mxp_dtype_get_traits(MXP_E5M2);
    assert_true(t->max == 57344.0 && t->has_inf && t->min_subnormal == 0x1p-16 && t->bias == 15);
    t = mxp_dtype_get_traits(MXP_S8);
    assert_true(t->max == 127 && t->lowest == -128 && t->kind == MXP_KIND_INT);
    t = mxp_dtype_get_traits(MXP_U64);
    assert_true(t->max_exact_int == UINT64_MAX && t->kind == MXP_KIND_UINT);
    assert_null(mxp_dtype_get_traits(MXP_DTYPE_INVALID));
    assert_null(mxp_dtype_get_traits(MXP_DTYPE_COUNT));
    assert_null(mxp_dtype_get_traits((mxp_dtype)-3));
}

/* max, min_normal, min_subnormal and eps of every float type, decoded from
 * their bit patterns by the converter, equal the table's numbers. */
static void test_float_traits_agree_with_decoded_bit_patterns(void **state)
{
    (void)state;
    for (int dt = 1; dt < MXP_DTYPE_COUNT; dt++) {
        const mxp_dtype_traits *t = mxp_dtype_get_traits((mxp_dtype)dt);
        if (t->kind != MXP_KIND_FLOAT || dt == MXP_E8M0)
            continue; /* e8m0 has no sign, no mantissa, no subnormals: below */
        uint64_t mmask = (1ull << t->mant_bits) - 1;
        uint64_t eall = (1ull << t->exp_bits) - 1;
        bool fnuz = strstr(t->name, "fnuz") != NULL;
        uint64_t max_bits = t->has_inf ? ((eall - 1) << t->mant_bits) | mmask
                            : (!t->has_nan || fnuz) ? (eall << t->mant_bits) | mmask /* every exponent finite */
                                                    : (eall << t->mant_bits) | (mmask - 1);
        uint64_t pats[4] = { max_bits, 1ull << t->mant_bits, 1, ((uint64_t)t->bias << t->mant_bits) | 1 };
        double want[4] = { t->max, t->min_normal, t->min_subnormal, 1.0 + t->eps };
        for (int i = 0; i < 4; i++) {
            double v;
            assert_int_equal(mxp_convert(&v, MXP_F64, &pats[i], (mxp_dtype)dt, 1, NULL), MXP_OK);
            if (v != want[i])
                fail_msg("%s pattern %d: decoded %a, table says %a", t->name, i, v, want[i]);
        }
        assert_true(t->lowest == -t->max);
        double exact = 2.0 * (double)(1ull << t->mant_bits);
        assert_true((double)t->max_exact_int == (exact < t->max ? exact : floor(t->max)));
        assert_int_equal(t->bits, 1 + t->exp_bits + t->mant_bits);
    }
    const mxp_dtype_traits *t = mxp_dtype_get_traits(MXP_E8M0);
    const uint8_t pats[3] = { 0, 127, 254 };
    const double want[3] = { 0x1p-127, 1.0, 0x1p127 };
    for (int i = 0; i < 3; i++) {
        double v;
        assert_int_equal(mxp_convert(&v, MXP_F64, &pats[i], MXP_E8M0, 1, NULL), MXP_OK);
        assert_true(v == want[i]);
    }
    assert_true(t->max == 0x1p127 && t->lowest == 0x1p-127 && t->min_normal == 0x1p-127 &&
                t->min_subnormal == 0x1p-127 && t->eps == 1.0 && !t->is_signed && t->max_exact_int == 0);
    assert_int_equal(t->bits, t->exp_bits);
}

/* The new formats' numbers, as ml_dtypes.finfo / iinfo give them. */
static void test_traits_of_the_new_formats_equal_ml_dtypes_finfo(void **state)
{
    (void)state;
    struct { mxp_dtype t; int bits; double max, tiny, sub, eps; } f[] = {
        { MXP_E3M4, 8, 15.5, 0.25, 0x1p-6, 0.0625 },
        { MXP_E4M3IEEE, 8, 240.0, 0x1p-6, 0x1p-9, 0.125 },
        { MXP_E4M3B11, 8, 30.0, 0x1p-10, 0x1p-13, 0.125 },
        { MXP_E4M3FNUZ, 8, 240.0, 0x1p-7, 0x1p-10, 0.125 },
        { MXP_E5M2FNUZ, 8, 57344.0, 0x1p-15, 0x1p-17, 0.25 },
        { MXP_E2M3, 6, 7.5, 1.0, 0.125, 0.125 },
        { MXP_E3M2, 6, 28.0, 0.25, 0.0625, 0.25 },
        { MXP_E2M1, 4, 6.0, 1.0, 0.5, 0.5 },
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        const mxp_dtype_traits *t = mxp_dtype_get_traits(f[i].t);
        if (t->bits != f[i].bits || t->max != f[i].max || t->min_normal != f[i].tiny ||
            t->min_subnormal != f[i].sub || t->eps != f[i].eps || t->itemsize != 1)
            fail_msg("%s: traits differ from ml_dtypes.finfo", t->name);
    }
    struct { mxp_dtype t; int bits; double lo, hi; } n[] = {
        { MXP_S4, 4, -8, 7 }, { MXP_U4, 4, 0, 15 }, { MXP_S2, 2, -2, 1 },
        { MXP_U2, 2, 0, 3 },  { MXP_S1, 1, -1, 0 }, { MXP_U1, 1, 0, 1 },
    };
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++) {
        const mxp_dtype_traits *t = mxp_dtype_get_traits(n[i].t);
        if (t->bits != n[i].bits || t->lowest != n[i].lo || t->max != n[i].hi || t->itemsize != 1 ||
            t->max_exact_int != (uint64_t)n[i].hi)
            fail_msg("%s: traits differ from ml_dtypes.iinfo", t->name);
    }
    assert_false(mxp_dtype_get_traits(MXP_E2M1)->has_nan);
    assert_false(mxp_dtype_get_traits(MXP_E4M3FNUZ)->has_inf);
    assert_true(mxp_dtype_get_traits(MXP_E3M4)->has_inf);
}

static void test_names_and_aliases_round_trip(void **state)
{
    (void)state;
    for (int dt = 1; dt < MXP_DTYPE_COUNT; dt++) {
        const mxp_dtype_traits *t = mxp_dtype_get_traits((mxp_dtype)dt);
        assert_int_equal(mxp_dtype_from_name(t->name), dt);
        assert_int_equal(mxp_dtype_from_name(t->short_name), dt);
        assert_string_equal(mxp_dtype_name((mxp_dtype)dt), t->name);
    }
    assert_int_equal(mxp_dtype_from_name("BFloat16"), MXP_BF16);
    assert_int_equal(mxp_dtype_from_name("e4m3"), MXP_E4M3);
    assert_int_equal(mxp_dtype_from_name("float8_e4m3fn"), MXP_E4M3);
    assert_int_equal(mxp_dtype_from_name("e5m2"), MXP_E5M2);
    assert_int_equal(mxp_dtype_from_name("s8"), MXP_INT8);
    assert_int_equal(mxp_dtype_from_name("u8"), MXP_UINT8);
    assert_int_equal(mxp_dtype_from_name("half"), MXP_F16);
    assert_int_equal(mxp_dtype_from_name("float"), MXP_F64); /* as np.dtype("float") */
    /* ml_dtypes' float8_e4m3 (JAX, MLIR f8E4M3) is the IEEE-style E4M3
     * with infinities, not float8_e4m3fn; the short "e4m3" stays the OCP one */
    assert_int_equal(mxp_dtype_from_name("float8_e4m3"), MXP_E4M3IEEE);
    assert_int_equal(mxp_dtype_from_name("f8e4m3"), MXP_E4M3IEEE);
    assert_int_equal(mxp_dtype_from_name("float8_e8m0fnu"), MXP_E8M0);
    assert_int_equal(mxp_dtype_from_name("FLOAT4_E2M1FN"), MXP_E2M1);
    assert_int_equal(mxp_dtype_from_name("fp4"), MXP_E2M1);
    assert_int_equal(mxp_dtype_from_name("int4"), MXP_S4);
    assert_int_equal(mxp_dtype_from_name("uint2"), MXP_U2);
    assert_int_equal(mxp_dtype_from_name("i4"), MXP_S32); /* NumPy's code: 4 bytes */
    assert_int_equal(mxp_dtype_from_name("float8_e4m3fnuz"), MXP_E4M3FNUZ);
    assert_int_equal(mxp_dtype_from_name("f8e4m3fn"), MXP_E4M3);
    assert_int_equal(mxp_dtype_from_name("fp8_e4m3"), MXP_E4M3);
    assert_int_equal(mxp_dtype_from_name("complex64"), MXP_DTYPE_INVALID);
    assert_int_equal(mxp_dtype_from_name(""), MXP_DTYPE_INVALID);
    assert_int_equal(mxp_dtype_from_name(NULL), MXP_DTYPE_INVALID);
    assert_string_equal(mxp_dtype_name((mxp_dtype)99), "invalid");
    assert_int_equal(mxp_dtype_itemsize((mxp_dtype)99), 0);
}

static int numpy_table_rows(int (*row)(char *line))
{
    char path[1024], line[256];
    snprintf(path, sizeof path, "%s/core/numpy_tables.txt", MXP_TESTS_DIR);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s", path);
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] != '#')
            rows += row(line);
    }
    fclose(f);
    return rows;
}

static int check_promote_row(char *line)
{
    char a[32], b[32], r[32];
    if (sscanf(line, "promote %31s %31s %31s", a, b, r) != 3)
        return 0;
    mxp_dtype got = mxp_promote_types(mxp_dtype_from_name(a), mxp_dtype_from_name(b));
    if (got != mxp_dtype_from_name(r))
        fail_msg("promote_types(%s, %s): numpy %s, mxp %s", a, b, r, mxp_dtype_name(got));
    return 1;
}

static void test_promote_types_equals_numpy_on_numpy_types(void **state)
{
    (void)state;
    assert_int_equal(numpy_table_rows(check_promote_row), 12 * 12);
}

static int check_can_cast_row(char *line)
{
    static const char *const names[] = { "no", "equiv", "safe", "same_kind", "unsafe" };
    char a[32], b[32], c[32];
    int want;
    if (sscanf(line, "can_cast %31s %31s %31s %d", a, b, c, &want) != 4)
        return 0;
    int casting = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(c, names[i]))
            casting = i;
    assert_true(casting >= 0);
    bool got = mxp_can_cast(mxp_dtype_from_name(a), mxp_dtype_from_name(b), (mxp_casting)casting);
    if (got != (bool)want)
        fail_msg("can_cast(%s, %s, %s): numpy %d, mxp %d", a, b, c, want, got);
    return 1;
}

static void test_can_cast_equals_numpy_on_numpy_types(void **state)
{
    (void)state;
    assert_int_equal(numpy_table_rows(check_can_cast_row), 12 * 12 * 5);
}

static void test_promote_types_of_new_types_follow_the_exactness_rule(void **state)
{
    (void)state;
    struct { mxp_dtype a, b, want; } cases[] = {
        { MXP_BF16, MXP_F16, MXP_F32 },   { MXP_BF16, MXP_S8, MXP_BF16 },
        { MXP_BF16, MXP_U8, MXP_BF16 },   { MXP_BF16, MXP_S16, MXP_F32 },
        { MXP_BF16, MXP_S32, MXP_F64 },   { MXP_BF16, MXP_S64, MXP_F64 },
        { MXP_BF16, MXP_F32, MXP_F32 },   { MXP_BF16, MXP_BOOL, MXP_BF16 },
        { MXP_E4M3, MXP_E5M2, MXP_F16 },  { MXP_E4M3, MXP_BF16, MXP_BF16 },
        { MXP_E5M2, MXP_BF16, MXP_BF16 }, { MXP_E4M3, MXP_F16, MXP_F16 },
        { MXP_E4M3, MXP_S8, MXP_F16 },    { MXP_E5M2, MXP_U8, MXP_F16 },
        { MXP_E4M3, MXP_S16, MXP_F32 },   { MXP_E4M3, MXP_BOOL, MXP_E4M3 },
        { MXP_E4M3, MXP_E4M3, MXP_E4M3 }, { MXP_E5M2, MXP_F64, MXP_F64 },
        { MXP_E5M2, MXP_U64, MXP_F64 },   { MXP_BF16, MXP_U16, MXP_F32 },
        { MXP_E2M1, MXP_E3M2, MXP_E3M2 }, { MXP_E2M3, MXP_E3M2, MXP_E4M3 },
        { MXP_E2M1, MXP_E2M3, MXP_E2M3 }, { MXP_E4M3FNUZ, MXP_E4M3, MXP_F16 },
        { MXP_E4M3FNUZ, MXP_E5M2FNUZ, MXP_F16 }, { MXP_E4M3B11, MXP_E4M3FNUZ, MXP_F16 },
        { MXP_E8M0, MXP_F16, MXP_F32 },   { MXP_E8M0, MXP_BF16, MXP_BF16 },
        { MXP_E8M0, MXP_E4M3, MXP_BF16 }, { MXP_E3M4, MXP_E4M3IEEE, MXP_F16 },
        { MXP_E4M3IEEE, MXP_E4M3, MXP_F16 }, { MXP_E2M1, MXP_E4M3IEEE, MXP_E4M3IEEE },
        { MXP_S4, MXP_U4, MXP_S8 },       { MXP_S4, MXP_S8, MXP_S8 },
        { MXP_U4, MXP_U8, MXP_U8 },       { MXP_U2, MXP_S1, MXP_S4 },
        { MXP_U4, MXP_S8, MXP_S8 },       { MXP_U8, MXP_S4, MXP_S16 },
        { MXP_S4, MXP_E2M1, MXP_E3M2 },   { MXP_S4, MXP_F16, MXP_F16 },
        { MXP_S4, MXP_F32, MXP_F32 },     { MXP_S4, MXP_BOOL, MXP_S4 },
        { MXP_U1, MXP_E2M1, MXP_E2M1 },   { MXP_S4, MXP_E8M0, MXP_BF16 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mxp_dtype got = mxp_promote_types(cases[i].a, cases[i].b);
        if (got != cases[i].want)
            fail_msg("promote(%s, %s) = %s, want %s", mxp_dtype_name(cases[i].a),
                     mxp_dtype_name(cases[i].b), mxp_dtype_name(got), mxp_dtype_name(cases[i].want));
        assert_int_equal(mxp_promote_types(cases[i].b, cases[i].a), got);
    }
    assert_int_equal(mxp_promote_types(MXP_DTYPE_INVALID, MXP_F32), MXP_DTYPE_INVALID);
    assert_int_equal(mxp_promote_types(MXP_F32, (mxp_dtype)42), MXP_DTYPE_INVALID);
}

/* Every value of each 8- and 16-bit type survives the round trip through
 * promote_types(a, b) for every partner b (int64/uint64 aside, as NumPy). */
static void test_promoted_type_holds_every_small_value_exactly(void **state)
{
    (void)state;
    static uint16_t src[65536], back[65536];
    static double wide[65536];
    for (int a = 1; a < MXP_DTYPE_COUNT; a++) {
        size_t sa = mxp_dtype_itemsize((mxp_dtype)a);
        if (sa > 2 || a == MXP_BOOL)
            continue;
        int bits = mxp_dtype_get_traits((mxp_dtype)a)->bits;
        size_t n = (size_t)1 << bits; /* sub-byte types: the low bits only */
        for (size_t i = 0; i < n; i++) {
            if (sa == 1)
                ((uint8_t *)src)[i] = (uint8_t)i;
            else
                src[i] = (uint16_t)i;
        }
        for (int b = 1; b < MXP_DTYPE_COUNT; b++) {
            if (b == MXP_S64 || b == MXP_U64)
                continue;
            mxp_dtype r = mxp_promote_types((mxp_dtype)a, (mxp_dtype)b);
            assert_int_equal(mxp_convert(wide, r, src, (mxp_dtype)a, n, NULL), MXP_OK);
            assert_int_equal(mxp_convert(back, (mxp_dtype)a, wide, r, n, NULL), MXP_OK);
            for (size_t i = 0; i < n; i++) {
                uint16_t x = sa == 1 ? ((uint8_t *)src)[i] : src[i];
                uint16_t y = sa == 1 ? ((uint8_t *)back)[i] : back[i];
                double d;
                mxp_convert(&d, MXP_F64, &x, (mxp_dtype)a, 1, NULL);
                if (d != d)
                    continue; /* NaN payloads may be quieted */
                if (x != y)
                    fail_msg("%s value 0x%x does not survive %s (promoted with %s)",
                             mxp_dtype_name((mxp_dtype)a), x, mxp_dtype_name(r), mxp_dtype_name((mxp_dtype)b));
            }
        }
    }
}

static void test_can_cast_rules_for_new_types(void **state)
{
    (void)state;
    assert_true(mxp_can_cast(MXP_BF16, MXP_F32, MXP_CASTING_SAFE));
    assert_false(mxp_can_cast(MXP_BF16, MXP_F16, MXP_CASTING_SAFE));
    assert_true(mxp_can_cast(MXP_BF16, MXP_F16, MXP_CASTING_SAME_KIND));
    assert_true(mxp_can_cast(MXP_E4M3, MXP_BF16, MXP_CASTING_SAFE));
    assert_true(mxp_can_cast(MXP_E5M2, MXP_F16, MXP_CASTING_SAFE));
    assert_false(mxp_can_cast(MXP_F16, MXP_E5M2, MXP_CASTING_SAFE));
    assert_true(mxp_can_cast(MXP_S8, MXP_BF16, MXP_CASTING_SAFE));
    assert_false(mxp_can_cast(MXP_S8, MXP_E4M3, MXP_CASTING_SAFE));
    assert_true(mxp_can_cast(MXP_S8, MXP_E4M3, MXP_CASTING_SAME_KIND));
    assert_false(mxp_can_cast(MXP_BF16, MXP_S8, MXP_CASTING_SAME_KIND));
    assert_true(mxp_can_cast(MXP_BF16, MXP_S8, MXP_CASTING_UNSAFE));
    assert_true(mxp_can_cast(MXP_BF16, MXP_BF16, MXP_CASTING_NO));
    assert_false(mxp_can_cast(MXP_BF16, MXP_F32, MXP_CASTING_EQUIV));
    assert_false(mxp_can_cast(MXP_BF16, MXP_F32, (mxp_casting)17));
    assert_false(mxp_can_cast((mxp_dtype)0, MXP_F32, MXP_CASTING_UNSAFE));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_traits_of_every_type_match_the_formats),
        cmocka_unit_test(test_float_traits_agree_with_decoded_bit_patterns),
        cmocka_unit_test(test_traits_of_the_new_formats_equal_ml_dtypes_finfo),
        cmocka_unit_test(test_names_and_aliases_round_trip),
        cmocka_unit_test(test_promote_types_equals_numpy_on_numpy_types),
        cmocka_unit_test(test_can_cast_equals_numpy_on_numpy_types),
        cmocka_unit_test(test_promote_types_of_new_types_follow_the_exactness_rule),
        cmocka_unit_test(test_promoted_type_holds_every_small_value_exactly),
        cmocka_unit_test(test_can_cast_rules_for_new_types),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
