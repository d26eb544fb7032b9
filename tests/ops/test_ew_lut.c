/* The tables of costly 16-bit unary operations (src/ops/elementwise-lut.c)
 * give the bits of the loop they replace: every float16/bfloat16 bit
 * pattern through every costly unary operation, float16/bfloat16 in and
 * out, at every ISA level the machine has, with the tables off (the plan's
 * own loop) and on (the lookup), contiguous, strided both ways, in place,
 * at an odd address and in short calls; every deterministic rounding mode
 * and both overflow policies for gelu and exp.  Also: when a table is
 * built (65,536 elements seen), when none is (stochastic rounding, flag
 * counters, cheap operations, other dtypes), the cap on tables, and two
 * threads building one table at once. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "ops/ops-internal.h"

enum { N = 65536 };

static const mxp_unary_op costly[] = {
    MXP_OP_EXP,    MXP_OP_LOG,     MXP_OP_TANH,    MXP_OP_SIGMOID, MXP_OP_GELU,    MXP_OP_GELU_TANH, MXP_OP_SILU,
    MXP_OP_CBRT,   MXP_OP_EXP2,    MXP_OP_EXPM1,   MXP_OP_LOG2,    MXP_OP_LOG10,   MXP_OP_LOG1P,     MXP_OP_SIN,
    MXP_OP_COS,    MXP_OP_TAN,     MXP_OP_ARCSIN,  MXP_OP_ARCCOS,  MXP_OP_ARCTAN,  MXP_OP_SINH,      MXP_OP_COSH,
    MXP_OP_ARCSINH, MXP_OP_ARCCOSH, MXP_OP_ARCTANH, MXP_OP_SPACING, MXP_OP_DEG2RAD, MXP_OP_RAD2DEG,
};
static const mxp_dtype h16[2] = { MXP_F16, MXP_BF16 };

static uint16_t patterns[N];

static void fill_patterns(void)
{
    for (uint32_t i = 0; i < N; i++)
        patterns[i] = (uint16_t)i;
}

static bool has_table(mxp_unary_op op, mxp_dtype a, mxp_dtype out, const mxp_convert_opts *o)
{
    mxp_ew_plan p;
    mxp_ew_plan_unary(&p, op, a, out, o);
    return p.lut16 && mxp_ew_lut16(&p, 0) != NULL;
}

static void unary(mxp_unary_op op, mxp_dtype a, mxp_dtype out, uint16_t *y, ptrdiff_t ys, const uint16_t *x,
                  ptrdiff_t xs, size_t n, const mxp_convert_opts *o)
{
    assert_int_equal(mxp_unary_strided(op, n, y, out, ys, x, a, xs, o), MXP_OK);
}

/* Every pattern through op, the tables off, then on in every layout. */
static void compare_one(mxp_unary_op op, mxp_dtype a, mxp_dtype out, const mxp_convert_opts *o, int isa)
{
    static uint16_t want[N], got[N], buf[2 * N + 1];
    mxp_ew_lut16_set_enabled(false);
    unary(op, a, out, want, 2, patterns, 2, N, o);
    mxp_ew_lut16_set_enabled(true);
    unary(op, a, out, got, 2, patterns, 2, N, o); /* builds the table */
    if (!has_table(op, a, out, o))
        fail_msg("%s %s -> %s at ISA level %d: no table after %d elements", mxp_unary_op_name(op),
                 mxp_dtype_name(a), mxp_dtype_name(out), isa, N);
    for (int pass = 0; pass < 5; pass++) {
        memset(got, 0x5a, sizeof got);
        if (pass == 0) { /* contiguous, the table built */
            unary(op, a, out, got, 2, patterns, 2, N, o);
        } else if (pass == 1) { /* strided: every other element, read backwards */
            unary(op, a, out, buf, 4, patterns + N - 1, -2, N, o);
            for (size_t i = 0; i < N; i++)
                got[N - 1 - i] = buf[2 * i];
        } else if (pass == 2) { /* in place */
            memcpy(got, patterns, sizeof got);
            unary(op, a, out, got, 2, got, 2, N, o);
        } else if (pass == 3) { /* an odd address in and out */
            char *odd = (char *)buf + 1;
            memcpy(odd, patterns, sizeof patterns);
            unary(op, a, out, (uint16_t *)(void *)odd, 2, (const uint16_t *)(const void *)odd, 2, N, o);
            memcpy(got, odd, sizeof got);
        } else { /* short calls */
            for (size_t i = 0; i < N; i += 7)
                unary(op, a, out, got + i, 2, patterns + i, 2, N - i < 7 ? N - i : 7, o);
        }
        for (size_t i = 0; i < N; i++)
            if (got[i] != want[i])
                fail_msg("%s %s -> %s (rounding %d, overflow %d) at ISA level %d, layout %d: input 0x%04zx gives "
                         "0x%04x, the loop 0x%04x", mxp_unary_op_name(op), mxp_dtype_name(a), mxp_dtype_name(out),
                         o ? (int)o->rounding : 0, o ? (int)o->overflow : 0, isa, pass, i, got[i], want[i]);
    }
}

static void test_tables_give_the_loops_bits_at_every_isa_level(void **state)
{
    (void)state;
    fill_patterns();
    const mxp_isa top = mxp_isa_supported();
    for (int isa = 0; isa <= (int)top; isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t k = 0; k < sizeof costly / sizeof costly[0]; k++)
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++) {
                    compare_one(costly[k], h16[i], h16[j], NULL, isa);
                    mxp_ew_lut16_reset();
                }
    }
    assert_int_equal(mxp_set_isa(top), MXP_OK);
}

static void test_every_deterministic_rounding_and_overflow(void **state)
{
    (void)state;
    fill_patterns();
    const mxp_unary_op ops[] = { MXP_OP_GELU, MXP_OP_EXP, MXP_OP_SINH };
    const mxp_isa top = mxp_isa_supported();
    for (int isa = 0; isa <= (int)top; isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            for (int r = 0; r < MXP_ROUND_STOCHASTIC; r++)
                for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++)
                    for (int i = 0; i < 2; i++)
                        for (int j = 0; j < 2; j++) {
                            const mxp_convert_opts o = { .rounding = (mxp_rounding)r, .overflow = (mxp_overflow)ov };
                            compare_one(ops[k], h16[i], h16[j], &o, isa);
                            mxp_ew_lut16_reset();
                        }
    }
    assert_int_equal(mxp_set_isa(top), MXP_OK);
}

static void test_a_table_is_built_after_65536_elements(void **state)
{
    (void)state;
    fill_patterns();
    mxp_ew_lut16_reset();
    static uint16_t y[N];
    unary(MXP_OP_TANH, MXP_BF16, MXP_BF16, y, 2, patterns, 2, N - 1, NULL);
    assert_false(has_table(MXP_OP_TANH, MXP_BF16, MXP_BF16, NULL));
    unary(MXP_OP_TANH, MXP_BF16, MXP_BF16, y, 2, patterns, 2, 1, NULL);
    assert_true(has_table(MXP_OP_TANH, MXP_BF16, MXP_BF16, NULL));
    /* each key its own count: another dtype, mode or op has none yet */
    assert_false(has_table(MXP_OP_TANH, MXP_BF16, MXP_F16, NULL));
    const mxp_convert_opts up = { .rounding = MXP_ROUND_UP };
    assert_false(has_table(MXP_OP_TANH, MXP_BF16, MXP_BF16, &up));
    assert_false(has_table(MXP_OP_EXP, MXP_BF16, MXP_BF16, NULL));
    mxp_ew_lut16_reset();
}

static void test_no_table_where_results_are_not_a_function_of_the_bits(void **state)
{
    (void)state;
    mxp_ew_plan p;
    const mxp_convert_opts sr = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 1 };
    mxp_ew_plan_unary(&p, MXP_OP_GELU, MXP_BF16, MXP_BF16, &sr);
    assert_int_equal(p.lut16, 0);
    mxp_convert_flags flags = { 0 };
    const mxp_convert_opts counted = { .flags = &flags };
    mxp_ew_plan_unary(&p, MXP_OP_GELU, MXP_F16, MXP_F16, &counted);
    assert_int_equal(p.lut16, 0);
    mxp_ew_plan_unary(&p, MXP_OP_NEGATIVE, MXP_F16, MXP_F16, NULL); /* cheap */
    assert_int_equal(p.lut16, 0);
    mxp_ew_plan_unary(&p, MXP_OP_GELU, MXP_F32, MXP_F32, NULL);
    assert_int_equal(p.lut16, 0);
    mxp_ew_plan_unary(&p, MXP_OP_GELU, MXP_F16, MXP_F32, NULL);
    assert_int_equal(p.lut16, 0);
    mxp_ew_plan_unary(&p, MXP_OP_GELU, MXP_E4M3, MXP_BF16, NULL);
    assert_int_equal(p.lut16, 0);
    mxp_ew_plan_unary(&p, MXP_OP_GELU, MXP_BF16, MXP_F16, NULL);
    assert_int_not_equal(p.lut16, 0);

    /* stochastic rounding through a large call stays per element: two seeds differ */
    fill_patterns();
    static uint16_t y1[N], y2[N];
    const mxp_convert_opts sr2 = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 2 };
    for (int r = 0; r < 3; r++) {
        unary(MXP_OP_EXP, MXP_BF16, MXP_BF16, y1, 2, patterns, 2, N, &sr);
        unary(MXP_OP_EXP, MXP_BF16, MXP_BF16, y2, 2, patterns, 2, N, &sr2);
    }
    assert_memory_not_equal(y1, y2, sizeof y1);
    /* and the flag counters still count */
    unary(MXP_OP_EXP, MXP_F16, MXP_F16, y1, 2, patterns, 2, N, &counted);
    assert_true(flags.overflow > 0);
    assert_true(flags.inexact > 0);
    mxp_ew_lut16_reset();
}

static void test_at_most_64_tables(void **state)
{
    (void)state;
    fill_patterns();
    mxp_ew_lut16_reset();
    static uint16_t want[N], got[N];
    int built = 0;
    const mxp_isa top = mxp_isa_supported();
    for (int isa = 0; isa <= (int)top; isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t k = 0; k < sizeof costly / sizeof costly[0]; k++)
            for (int i = 0; i < 2; i++) {
                unary(costly[k], h16[i], h16[i], got, 2, patterns, 2, N, NULL);
                if (has_table(costly[k], h16[i], h16[i], NULL))
                    built++;
                else { /* past the cap: the loop, the same bits */
                    mxp_ew_lut16_set_enabled(false);
                    unary(costly[k], h16[i], h16[i], want, 2, patterns, 2, N, NULL);
                    mxp_ew_lut16_set_enabled(true);
                    assert_memory_equal(got, want, sizeof got);
                }
            }
    }
    assert_int_equal(mxp_set_isa(top), MXP_OK);
    const int slots = (int)(top + 1) * (int)(sizeof costly / sizeof costly[0]) * 2;
    assert_int_equal(built, slots < 64 ? slots : 64);
    mxp_ew_lut16_reset();
}

typedef struct racer { uint16_t *y; } racer;

static void *race(void *arg)
{
    racer *r = arg;
    for (int k = 0; k < 4; k++)
        if (mxp_unary_strided(MXP_OP_SILU, N, r->y, MXP_BF16, 2, patterns, MXP_BF16, 2, NULL) != MXP_OK)
            return arg;
    return NULL;
}

static void test_two_threads_building_one_table(void **state)
{
    (void)state;
    fill_patterns();
    mxp_ew_lut16_reset();
    static uint16_t want[N], a[N], b[N];
    mxp_ew_lut16_set_enabled(false);
    unary(MXP_OP_SILU, MXP_BF16, MXP_BF16, want, 2, patterns, 2, N, NULL);
    mxp_ew_lut16_set_enabled(true);
    mxp_set_num_threads(1);
    racer r1 = { a }, r2 = { b };
    pthread_t t1, t2;
    assert_int_equal(pthread_create(&t1, NULL, race, &r1), 0);
    assert_int_equal(pthread_create(&t2, NULL, race, &r2), 0);
    void *e1, *e2;
    pthread_join(t1, &e1);
    pthread_join(t2, &e2);
    assert_null(e1);
    assert_null(e2);
    assert_true(has_table(MXP_OP_SILU, MXP_BF16, MXP_BF16, NULL));
    assert_memory_equal(a, want, sizeof want);
    assert_memory_equal(b, want, sizeof want);
    mxp_ew_lut16_reset();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_give_the_loops_bits_at_every_isa_level),
        cmocka_unit_test(test_every_deterministic_rounding_and_overflow),
        cmocka_unit_test(test_a_table_is_built_after_65536_elements),
        cmocka_unit_test(test_no_table_where_results_are_not_a_function_of_the_bits),
        cmocka_unit_test(test_at_most_64_tables),
        cmocka_unit_test(test_two_threads_building_one_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
