/* Stochastic rounding's decision, element by element: docs/conversions.md
 * says an element rounds its magnitude up iff r < floor(frac * 2^32),
 * r the element's 32-bit draw.  The draw is recomputed here from the
 * documented hash (written out again, not taken from the library), and
 * inputs are built whose discarded fraction, read as 32 bits, equals the
 * element's draw, the draw + 1 and the draw - 1: equal must not round up
 * (a `<=` in place of `<` would), one more must, one less must not.  An
 * exact input stays put even when its draw is 0.  Every ISA level the
 * machine has, every path that rounds stochastically: float32 -> bfloat16
 * (16 bits discarded: the draws whose low 16 bits are 0), float64 ->
 * bfloat16 (45 bits: any draw) and float64 -> float32 (29 bits), float32 ->
 * float16 and float8. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mxp/convert.h"
#include "mxp/cpu.h"

/* ---- the documented draw (src/kernels/cvt-kernel.h's comment) --------- */

static uint64_t splitmix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void key_for(uint64_t seed, uint64_t index, uint32_t *k1, uint32_t *k2)
{
    const uint64_t z = splitmix64(seed ^ ((index >> 32) * 0xd1b54a32d192ed03ull));
    *k1 = (uint32_t)z;
    *k2 = (uint32_t)(z >> 32);
}

static uint32_t draw(uint64_t seed, uint64_t index)
{
    uint32_t k1, k2;
    key_for(seed, index, &k1, &k2);
    uint32_t x = (uint32_t)index + k1;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x ^= k2;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* The index below 2^32 whose draw is r (the hash is a bijection of
 * index + k1 for a fixed key): each step undone in reverse. */
static uint32_t inverse_mul(uint32_t a)
{
    uint32_t x = a; /* Newton: x = x (2 - a x), doubling the correct bits */
    for (int i = 0; i < 5; i++)
        x *= 2 - a * x;
    return x;
}

static uint64_t index_with_draw(uint64_t seed, uint32_t r)
{
    uint32_t k1, k2;
    key_for(seed, 0, &k1, &k2);
    uint32_t x = r;
    x ^= x >> 16;
    x *= inverse_mul(0x846ca68bu);
    x ^= k2;
    x ^= (x >> 15) ^ (x >> 30);
    x *= inverse_mul(0x7feb352du);
    x ^= x >> 16;
    const uint64_t index = (uint32_t)(x - k1);
    assert_int_equal(draw(seed, index), r);
    return index;
}

/* ---- one element, converted alone at its index ---------------------------- */

static void convert_at(void *dst, mxp_dtype dt, const void *src, mxp_dtype st, uint64_t seed, uint64_t index)
{
    const mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .seed = seed, .index_offset = index };
    assert_int_equal(mxp_convert(dst, dt, src, st, 1, &o), MXP_OK);
}

/* The same element in a call of 64 that starts 17 before it: the vector
 * kernels see it in a lane of a full vector. */
static void convert_in_a_run(void *dst, mxp_dtype dt, const void *src, mxp_dtype st, uint64_t seed, uint64_t index)
{
    enum { RUN = 64, AT = 17 };
    unsigned char in[RUN * 8], out[RUN * 8];
    const size_t is = mxp_dtype_itemsize(st), os = mxp_dtype_itemsize(dt);
    for (int i = 0; i < RUN; i++)
        memcpy(in + (size_t)i * is, src, is);
    const uint64_t first = index >= AT ? index - AT : 0, at = index - first;
    const mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .seed = seed, .index_offset = first };
    assert_int_equal(mxp_convert(out, dt, in, st, RUN, &o), MXP_OK);
    memcpy(dst, out + at * os, os);
}

typedef void convert_fn(void *, mxp_dtype, const void *, mxp_dtype, uint64_t, uint64_t);
static convert_fn *const converters[] = { convert_at, convert_in_a_run };

static const char *isa_now(void) { return mxp_isa_name(mxp_get_isa()); }

/* float32 x = 1.m with its low 16 bits `low`, to bfloat16: up iff r < low << 16. */
static void check_f32_bf16(uint64_t seed, uint64_t index, uint32_t low, int want_up)
{
    const uint32_t hi = 0x3f81u; /* 1.0078125 */
    const uint32_t bits = hi << 16 | low;
    float x;
    memcpy(&x, &bits, sizeof x);
    for (size_t c = 0; c < sizeof converters / sizeof converters[0]; c++) {
        uint16_t y = 0;
        converters[c](&y, MXP_BF16, &x, MXP_F32, seed, index);
        if (y != (uint16_t)(hi + (uint32_t)want_up))
            fail_msg("%s: f32 0x%08x at index %llu (draw 0x%08x) -> bf16 0x%04x, want 0x%04x", isa_now(), bits,
                     (unsigned long long)index, draw(seed, index), y, hi + (uint32_t)want_up);
    }
}

/* float64 1.m to a target keeping `kept` of its 52 fraction bits: the
 * discarded bits as a 32-bit fraction are `top` (with more than 32
 * discarded, the bits below are `rest`: truncated away by the documented
 * rule, so they never change the decision; with fewer, top's low bits
 * must be 0). */
static void check_f64(mxp_dtype dt, int kept, uint64_t seed, uint64_t index, uint32_t top, uint64_t rest, int want_up)
{
    const int d = 52 - kept; /* discarded bits */
    const uint64_t kept_bits = 0x3ff0000000000000ull | (uint64_t)0x5 << (52 - 3); /* 1.625 */
    uint64_t bits = kept_bits;
    if (d >= 32) {
        bits |= (uint64_t)top << (d - 32) | (rest & ((1ull << (d - 32)) - 1));
    } else {
        assert_int_equal(top & ((1u << (32 - d)) - 1), 0);
        bits |= top >> (32 - d);
    }
    double x;
    memcpy(&x, &bits, sizeof x);
    for (size_t c = 0; c < sizeof converters / sizeof converters[0]; c++) {
        double back = 0;
        if (dt == MXP_BF16) {
            uint16_t y = 0;
            converters[c](&y, dt, &x, MXP_F64, seed, index);
            uint32_t f = (uint32_t)y << 16;
            float g;
            memcpy(&g, &f, sizeof g);
            back = g;
        } else {
            float y = 0;
            converters[c](&y, dt, &x, MXP_F64, seed, index);
            back = y;
        }
        uint64_t want_bits = (kept_bits >> d) + (uint64_t)want_up;
        want_bits <<= d;
        double want;
        memcpy(&want, &want_bits, sizeof want);
        if (back != want)
            fail_msg("%s: f64 0x%016llx at index %llu (draw 0x%08x) -> %s %.17g, want %.17g", isa_now(),
                     (unsigned long long)bits, (unsigned long long)index, draw(seed, index), mxp_dtype_name(dt), back,
                     want);
    }
}

static void for_every_isa(void (*body)(void))
{
    for (int isa = MXP_ISA_SCALAR; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        body();
    }
    assert_int_equal(mxp_set_isa(mxp_isa_supported()), MXP_OK);
}

static const uint64_t seeds[] = { 0, 1, 0x5eed, 0xfedcba9876543210ull };

static void f32_bf16_body(void)
{
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        const uint64_t seed = seeds[s];
        int found = 0;
        for (uint64_t index = 0; found < 3 && index < (1u << 22); index++) {
            const uint32_t r = draw(seed, index);
            if ((r & 0xffffu) != 0 || r == 0)
                continue; /* the draws a 16-bit fraction can equal */
            found++;
            const uint32_t low = r >> 16;
            check_f32_bf16(seed, index, low, 0);     /* frac == r: down */
            check_f32_bf16(seed, index, low - 1, 0); /* frac < r: down */
            if (low < 0xffffu)
                check_f32_bf16(seed, index, low + 1, 1); /* frac > r: up */
        }
        assert_int_equal(found, 3);
        /* Any draw: the fraction just above it rounds up, just below down. */
        for (uint64_t index = 0; index < 200; index++) {
            const uint32_t r = draw(seed, index), low = r >> 16;
            if (low < 0xffffu)
                check_f32_bf16(seed, index, low + 1, 1);
            check_f32_bf16(seed, index, low, 0); /* low << 16 <= r */
        }
    }
}

static void test_float32_to_bfloat16_rounds_up_iff_the_draw_is_below_the_fraction(void **state)
{
    (void)state;
    for_every_isa(f32_bf16_body);
}

static void f64_body(void)
{
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        const uint64_t seed = seeds[s];
        /* to bfloat16, 45 bits discarded: any draw, equal, one above, one below */
        for (uint64_t index = 0; index < 100; index++) {
            const uint64_t i = index * 7919;
            const uint32_t r = draw(seed, i);
            check_f64(MXP_BF16, 7, seed, i, r, 0, 0);
            check_f64(MXP_BF16, 7, seed, i, r, ~0ull, 0); /* the bits below 32 never count */
            if (r < UINT32_MAX)
                check_f64(MXP_BF16, 7, seed, i, r + 1, 0, 1);
            if (r > 0)
                check_f64(MXP_BF16, 7, seed, i, r - 1, ~0ull, 0);
        }
        /* draws 0, 1, 2^31, 2^32 - 1 at the indices that give them */
        const uint32_t special[] = { 0, 1, 0x80000000u, UINT32_MAX };
        for (size_t k = 0; k < sizeof special / sizeof special[0]; k++) {
            const uint64_t i = index_with_draw(seed, special[k]);
            const uint32_t r = special[k];
            check_f64(MXP_BF16, 7, seed, i, r, 0, 0);
            if (r < UINT32_MAX)
                check_f64(MXP_BF16, 7, seed, i, r + 1, 0, 1);
        }
        /* to float32, 29 bits discarded (a fraction in steps of 8): the draws
         * that are a multiple of 8, equal and one step above; any draw, its
         * step below and above */
        for (uint32_t k = 0; k < 50; k++) {
            const uint32_t r = (k * 0x9e3779b9u) & ~7u;
            const uint64_t i = index_with_draw(seed, r);
            check_f64(MXP_F32, 23, seed, i, r, 0, 0);
            if (r < (UINT32_MAX & ~7u))
                check_f64(MXP_F32, 23, seed, i, r + 8, 0, 1);
            const uint32_t q = draw(seed, k), low = q & ~7u;
            check_f64(MXP_F32, 23, seed, k, low, 0, 0);
            if (low < (UINT32_MAX & ~7u))
                check_f64(MXP_F32, 23, seed, k, low + 8, 0, 1);
        }
    }
}

static void test_float64_sources_round_up_iff_the_draw_is_below_the_fraction(void **state)
{
    (void)state;
    for_every_isa(f64_body);
}

/* An exact value never moves, even at an index whose draw is 0 (r < 0 is
 * never true; r <= 0 would be). */
static void exact_body(void)
{
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        const uint64_t seed = seeds[s], i = index_with_draw(seed, 0);
        const float xf[] = { 1.0f, -3.5f, 0.0f, 448.0f, 0.25f };
        const mxp_dtype targets[] = { MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2 };
        for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
            for (size_t k = 0; k < sizeof xf / sizeof xf[0]; k++) {
                for (size_t c = 0; c < sizeof converters / sizeof converters[0]; c++) {
                    uint16_t y = 0;
                    converters[c](&y, targets[t], &xf[k], MXP_F32, seed, i);
                    float back = 0;
                    assert_int_equal(mxp_convert(&back, MXP_F32, &y, targets[t], 1, NULL), MXP_OK);
                    if (back != xf[k])
                        fail_msg("%s: exact %g -> %s with draw 0 gave %g", isa_now(), (double)xf[k],
                                 mxp_dtype_name(targets[t]), (double)back);
                }
            }
            const double xd = 1.5;
            uint16_t y = 0;
            convert_at(&y, targets[t], &xd, MXP_F64, seed, i);
            float back = 0;
            assert_int_equal(mxp_convert(&back, MXP_F32, &y, targets[t], 1, NULL), MXP_OK);
            assert_true(back == 1.5f);
        }
    }
}

static void test_an_exact_value_stays_put_when_its_draw_is_zero(void **state)
{
    (void)state;
    for_every_isa(exact_body);
}

/* float32 -> float16 and float8: the fraction just above the draw's top
 * bits rounds up, exactly the draw's top bits (its low bits 0) does not. */
static void narrow_body(void)
{
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
        const uint64_t seed = seeds[s];
        /* f32 1.m -> f16 keeps 10 of 23 fraction bits: 13 discarded, frac32 = low13 << 19. */
        const uint64_t i = index_with_draw(seed, 0x5a5a0000u & ~((1u << 19) - 1));
        const uint32_t r = draw(seed, i), low = r >> 19;
        const uint32_t base = 0x3fc00000u; /* 1.5 */
        const uint32_t at = base | low, above = base | (low + 1);
        float x_at, x_above;
        memcpy(&x_at, &at, 4);
        memcpy(&x_above, &above, 4);
        for (size_t c = 0; c < sizeof converters / sizeof converters[0]; c++) {
            uint16_t y = 0;
            converters[c](&y, MXP_F16, &x_at, MXP_F32, seed, i);
            if (y != 0x3e00u)
                fail_msg("%s: f32 0x%08x (fraction == draw 0x%08x) -> f16 0x%04x, want 0x3e00", isa_now(), at, r, y);
            converters[c](&y, MXP_F16, &x_above, MXP_F32, seed, i);
            if (y != 0x3e01u)
                fail_msg("%s: f32 0x%08x (fraction above draw 0x%08x) -> f16 0x%04x, want 0x3e01", isa_now(), above,
                         r, y);
        }
        /* f32 1.m -> e4m3 keeps 3 of 23: 20 discarded, frac32 = low20 << 12. */
        const uint64_t j = index_with_draw(seed, 0x3c3c3000u);
        const uint32_t q = draw(seed, j), low8 = q >> 12;
        const uint32_t b8 = 0x3f800000u, at8 = b8 | low8, above8 = b8 | (low8 + 1);
        memcpy(&x_at, &at8, 4);
        memcpy(&x_above, &above8, 4);
        for (size_t c = 0; c < sizeof converters / sizeof converters[0]; c++) {
            uint8_t y = 0;
            converters[c](&y, MXP_E4M3, &x_at, MXP_F32, seed, j);
            if (y != 0x38u)
                fail_msg("%s: f32 0x%08x (fraction == draw) -> e4m3 0x%02x, want 0x38", isa_now(), at8, y);
            converters[c](&y, MXP_E4M3, &x_above, MXP_F32, seed, j);
            if (y != 0x39u)
                fail_msg("%s: f32 0x%08x (fraction above draw) -> e4m3 0x%02x, want 0x39", isa_now(), above8, y);
        }
    }
}

static void test_float16_and_float8_targets_decide_at_the_draw(void **state)
{
    (void)state;
    for_every_isa(narrow_body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float32_to_bfloat16_rounds_up_iff_the_draw_is_below_the_fraction),
        cmocka_unit_test(test_float64_sources_round_up_iff_the_draw_is_below_the_fraction),
        cmocka_unit_test(test_an_exact_value_stays_put_when_its_draw_is_zero),
        cmocka_unit_test(test_float16_and_float8_targets_decide_at_the_draw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
