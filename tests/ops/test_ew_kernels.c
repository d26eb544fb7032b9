/* Every row of the elementwise and reduction kernel lists this machine
 * runs (src/kernels/f32-arith-list.inc, f64-arith-list.inc,
 * f16-arith-list.inc, bf16-arith-list.inc, f32-canonical-nan-list.inc,
 * f64-canonical-nan-list.inc, f32-sum-list.inc: expanded here and checked
 * against the tables of src/ops/kernel-config.c), against its twin:
 *
 *   f32-arith, f64-arith   + - * /: the twin's bits (a NaN result may carry
 *                          either operand's payload: both NaN; the loops
 *                          make every NaN canonical after the kernel)
 *   f16-arith, bf16-arith  + - *: the twin's bits, NaNs included
 *   f32/f64-canonical-nan  the twin's bits
 *   f32-sum                the twin's float64 bits (both NaN for a NaN sum)
 *
 * on special values (NaNs with payloads, infinities, signed zeros,
 * subnormals, the extremes) mixed with random ones, every length to
 * KC_TAIL and some long ones, operands at different unaligned starts, in
 * place, nothing written outside the output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "ops/kernel-config.h"
#include "support/kernel_check.h"

enum { CAP = 4200, GUARD = 16 };
static const size_t longs[] = { 127, 128, 129, 255, 256, 257, 333, 1037, 4099 };

/* The rows of list l this machine runs (the scalar twins included). */
static size_t rows_of(mxp_ops_list l, const mxp_kernel **out, size_t cap)
{
    size_t n;
    const mxp_kernel *rows = mxp_ops_kernels(l, &n);
    return kc_runnable(rows, n, out, cap);
}

/* Length number i of the lengths every test walks: 0..KC_TAIL, then longs. */
static size_t length(size_t i)
{
    return i <= KC_TAIL ? i : longs[i - KC_TAIL - 1];
}
enum { NLENGTHS = KC_TAIL + 1 + sizeof longs / sizeof longs[0] };

/* ---- + - * / ------------------------------------------------------------ */

static size_t elem_size(mxp_ops_list l)
{
    return l == MXP_LIST_F32_ARITH ? 4 : l == MXP_LIST_F64_ARITH ? 8 : 2;
}

static void arith(mxp_ops_list l, mxp_kernel_any fn, int op, void *y, const void *a, const void *b, size_t n)
{
    if (l == MXP_LIST_F32_ARITH)
        ((mxp_f32_arith_ukernel *)fn)(op, y, a, b, n);
    else if (l == MXP_LIST_F64_ARITH)
        ((mxp_f64_arith_ukernel *)fn)(op, y, a, b, n);
    else
        ((mxp_h16_arith_ukernel *)fn)(op, y, a, b, n);
}

/* Element i of got and want agree: the same bits, or (float32, float64)
 * both NaN. */
static bool agree(mxp_ops_list l, const unsigned char *got, const unsigned char *want, size_t i)
{
    const size_t s = elem_size(l);
    if (!memcmp(got + i * s, want + i * s, s))
        return true;
    if (l == MXP_LIST_F32_ARITH) {
        float g, w;
        memcpy(&g, got + i * 4, 4);
        memcpy(&w, want + i * 4, 4);
        return g != g && w != w;
    }
    if (l == MXP_LIST_F64_ARITH) {
        double g, w;
        memcpy(&g, got + i * 8, 8);
        memcpy(&w, want + i * 8, 8);
        return g != g && w != w;
    }
    return false;
}

static void fill(mxp_ops_list l, void *x, size_t n, uint64_t *rng)
{
    if (l == MXP_LIST_F32_ARITH)
        kc_fill_f32(x, n, rng);
    else if (l == MXP_LIST_F64_ARITH)
        kc_fill_f64(x, n, rng);
    else
        kc_fill_u16(x, n, rng);
}

/* One row, one op, one length: a, b and y at three different unaligned
 * starts, then in place (y = a, y = b). */
static size_t check_arith(mxp_ops_list l, const mxp_kernel *k, int op, size_t n, size_t off, const unsigned char *a,
                          const unsigned char *b)
{
    const size_t s = elem_size(l), oa = off, ob = (off + 1) % KC_OFFSETS, oy = (off + 2) % KC_OFFSETS;
    static unsigned char want[CAP * 8], got[(CAP + GUARD) * 8];
    size_t bad = 0;
    arith(l, k->twin, op, want, a + oa * s, b + ob * s, n);
    memset(got, 0xa5, sizeof got);
    arith(l, k->fn, op, got + oy * s, a + oa * s, b + ob * s, n);
    for (size_t i = 0; i < n; i++)
        bad += !agree(l, got + oy * s, want, i);
    for (size_t i = 0; i < oy * s; i++)
        bad += got[i] != 0xa5;
    for (size_t i = (oy + n) * s; i < (oy + n + GUARD) * s; i++)
        bad += got[i] != 0xa5;
    for (int side = 0; side < 2; side++) { /* in place */
        memcpy(got + oy * s, (side ? b + ob * s : a + oa * s), n * s);
        arith(l, k->fn, op, got + oy * s, side ? a + oa * s : got + oy * s, side ? got + oy * s : b + ob * s, n);
        for (size_t i = 0; i < n; i++)
            bad += !agree(l, got + oy * s, want, i);
    }
    if (bad)
        print_error("%s: op %d, length %zu, offset %zu: %zu elements differ from %s\n", k->name, op, n, off, bad,
                    k->twin_name);
    return bad;
}

static void check_arith_list(mxp_ops_list l, int nops, size_t min_rows)
{
    static unsigned char a[CAP * 8], b[CAP * 8];
    const mxp_kernel *ks[8];
    const size_t nk = rows_of(l, ks, 8);
    assert_true(nk >= min_rows);
    uint64_t rng = 0x243f6a8885a308d3ull;
    size_t bad = 0, runs = 0;
    for (size_t r = 0; r < nk; r++)
        for (int op = 0; op < nops; op++)
            for (size_t li = 0; li < NLENGTHS; li++) {
                fill(l, a, CAP, &rng);
                fill(l, b, CAP, &rng);
                bad += check_arith(l, ks[r], op, length(li), li % KC_OFFSETS, a, b);
                runs++;
            }
    print_message("%zu rows, %zu runs\n", nk, runs);
    assert_int_equal(bad, 0);
}

static void test_f32_arith_rows_match_their_twin(void **state)
{
    (void)state;
    check_arith_list(MXP_LIST_F32_ARITH, 4, 1);
}

static void test_f64_arith_rows_match_their_twin(void **state)
{
    (void)state;
    check_arith_list(MXP_LIST_F64_ARITH, 4, 1);
}

static void test_f16_arith_rows_match_their_twin(void **state)
{
    (void)state;
    check_arith_list(MXP_LIST_F16_ARITH, 3, 0);
}

static void test_bf16_arith_rows_match_their_twin(void **state)
{
    (void)state;
    check_arith_list(MXP_LIST_BF16_ARITH, 3, 0);
}

/* Every pair of the 16-bit patterns' specials (NaNs, infinities, zeros,
 * subnormals, max) through each 16-bit row: all 2^16 top-byte pairs. */
static void test_h16_arith_rows_on_every_top_byte_pair(void **state)
{
    (void)state;
    enum { N = 65536 };
    uint16_t *a = malloc(N * 2), *b = malloc(N * 2), *got = malloc(N * 2), *want = malloc(N * 2);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(got);
    assert_non_null(want);
    for (uint32_t i = 0; i < N; i++) {
        a[i] = (uint16_t)((i & 0xff00) | (i * 37 & 0x7f) | (i >> 15 << 7));
        b[i] = (uint16_t)((i << 8) | (i * 11 & 0xff));
    }
    const mxp_ops_list lists[2] = { MXP_LIST_F16_ARITH, MXP_LIST_BF16_ARITH };
    size_t bad = 0;
    for (int li = 0; li < 2; li++) {
        const mxp_kernel *ks[8];
        const size_t nk = rows_of(lists[li], ks, 8);
        for (size_t r = 0; r < nk; r++)
            for (int op = 0; op < 3; op++) {
                arith(lists[li], ks[r]->twin, op, want, a, b, N);
                arith(lists[li], ks[r]->fn, op, got, a, b, N);
                const size_t d = (size_t)(memcmp(got, want, N * 2) != 0);
                if (d)
                    print_error("%s: op %d differs from %s\n", ks[r]->name, op, ks[r]->twin_name);
                bad += d;
            }
    }
    free(a);
    free(b);
    free(got);
    free(want);
    assert_int_equal(bad, 0);
}

/* ---- canonical NaNs ----------------------------------------------------- */

static void canonical_nan(bool f64, mxp_kernel_any fn, void *x, size_t n)
{
    if (f64)
        ((mxp_f64_canonical_nan_ukernel *)fn)(x, n);
    else
        ((mxp_f32_canonical_nan_ukernel *)fn)(x, n);
}

static void check_canonical_nan_list(bool f64)
{
    static unsigned char x[CAP * 8], want[CAP * 8], got[(CAP + GUARD) * 8];
    const mxp_kernel *ks[8];
    const size_t nk = rows_of(f64 ? MXP_LIST_F64_CANONICAL_NAN : MXP_LIST_F32_CANONICAL_NAN, ks, 8);
    assert_true(nk >= 1);
    const size_t s = f64 ? 8 : 4;
    uint64_t rng = 0x13198a2e03707344ull;
    size_t bad = 0;
    for (size_t r = 0; r < nk; r++)
        for (size_t li = 0; li < NLENGTHS; li++) {
            const size_t n = length(li), off = li % KC_OFFSETS;
            if (f64)
                kc_fill_f64((double *)(void *)x, CAP, &rng);
            else
                kc_fill_f32((float *)(void *)x, CAP, &rng);
            memcpy(want, x, n * s);
            canonical_nan(f64, ks[r]->twin, want, n);
            memset(got, 0xa5, sizeof got);
            memcpy(got + off * s, x, n * s);
            canonical_nan(f64, ks[r]->fn, got + off * s, n);
            size_t d = (size_t)(memcmp(got + off * s, want, n * s) != 0);
            for (size_t i = 0; i < off * s; i++)
                d += got[i] != 0xa5;
            for (size_t i = (off + n) * s; i < (off + n + GUARD) * s; i++)
                d += got[i] != 0xa5;
            if (d)
                print_error("%s: length %zu offset %zu differs from %s\n", ks[r]->name, n, off, ks[r]->twin_name);
            bad += d;
        }
    assert_int_equal(bad, 0);
}

static void test_f32_canonical_nan_rows_match_their_twin(void **state)
{
    (void)state;
    check_canonical_nan_list(false);
}

static void test_f64_canonical_nan_rows_match_their_twin(void **state)
{
    (void)state;
    check_canonical_nan_list(true);
}

/* The twins themselves: every NaN becomes the positive quiet NaN, nothing
 * else changes. */
static void test_canonical_nan_twins_do_what_they_say(void **state)
{
    (void)state;
    const size_t n32 = sizeof kc_f32_specials / sizeof kc_f32_specials[0];
    uint32_t x[sizeof kc_f32_specials / sizeof kc_f32_specials[0]];
    memcpy(x, kc_f32_specials, sizeof x);
    mxp_f32_canonical_nan__scalar((float *)(void *)x, n32);
    for (size_t i = 0; i < n32; i++) {
        const bool nan = (kc_f32_specials[i] & 0x7fffffffu) > 0x7f800000u;
        assert_int_equal(x[i], nan ? 0x7fc00000u : kc_f32_specials[i]);
    }
    const size_t n64 = sizeof kc_f64_specials / sizeof kc_f64_specials[0];
    uint64_t y[sizeof kc_f64_specials / sizeof kc_f64_specials[0]];
    memcpy(y, kc_f64_specials, sizeof y);
    mxp_f64_canonical_nan__scalar((double *)(void *)y, n64);
    for (size_t i = 0; i < n64; i++) {
        const bool nan = (kc_f64_specials[i] & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
        assert_true(y[i] == (nan ? 0x7ff8000000000000ull : kc_f64_specials[i]));
    }
}

/* ---- the float32 sum in float64 ----------------------------------------- */

/* Values of every magnitude 2^-30 .. 2^30 (so that any other order of the
 * additions shows in the bits); with specials where specials is set. */
static void fill_sum(float *x, size_t n, bool specials, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = prng_next(rng);
        x[i] = (float)ldexp(prng_uniform(rng) * 2 - 1, (int)(r % 61) - 30);
        if (specials && r % 97 == 0)
            x[i] = kc_f32(kc_f32_specials[(r >> 8) % (sizeof kc_f32_specials / sizeof kc_f32_specials[0])]);
    }
}

static void test_f32_sum_rows_match_their_twin(void **state)
{
    (void)state;
    static float x[CAP + KC_OFFSETS];
    const mxp_kernel *ks[8];
    const size_t nk = rows_of(MXP_LIST_F32_SUM, ks, 8);
    assert_true(nk >= 1);
    uint64_t rng = 0xa4093822299f31d0ull;
    size_t bad = 0;
    for (size_t r = 0; r < nk; r++)
        for (int specials = 0; specials < 2; specials++)
            for (size_t li = 0; li < NLENGTHS; li++) {
                const size_t n = length(li), off = li % KC_OFFSETS;
                fill_sum(x, CAP + KC_OFFSETS, specials, &rng);
                const double want = ((mxp_f32_sum_f64_ukernel *)ks[r]->twin)(x + off, n);
                const double got = ((mxp_f32_sum_f64_ukernel *)ks[r]->fn)(x + off, n);
                if (kc_f64_bits(got) != kc_f64_bits(want) && !(got != got && want != want)) {
                    print_error("%s: length %zu offset %zu: %a, %s gives %a\n", ks[r]->name, n, off, got,
                                ks[r]->twin_name, want);
                    bad++;
                }
            }
    assert_int_equal(bad, 0);
}

/* The twin is pairwise_f64 (src/ops/reduce.c) of the widened values, which
 * mxp_reduce takes at every level: the sum of a float32 array through
 * mxp_reduce equals the twin's on one chunk. */
static void test_f32_sum_twin_is_the_reductions_sum(void **state)
{
    (void)state;
    static float x[1000];
    uint64_t rng = 99;
    fill_sum(x, 1000, false, &rng);
    const int64_t shape = 1000;
    mxp_array *a = NULL, *s = NULL;
    assert_int_equal(mxp_array_wrap(&a, x, MXP_F32, 1, &shape, NULL, false, NULL, NULL), MXP_OK);
    const mxp_reduce_opts o = { .algorithm = MXP_SUM_PAIRWISE, .acc_dtype = MXP_F64, .out_dtype = MXP_F64 };
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        mxp_set_isa((mxp_isa)isa);
        assert_int_equal(mxp_reduce(&s, MXP_REDUCE_SUM, a, 0, NULL, &o), MXP_OK);
        double got;
        assert_int_equal(mxp_array_get_f64(s, NULL, &got), MXP_OK);
        assert_true(kc_f64_bits(got) == kc_f64_bits(mxp_f32_sum_f64__scalar(x, 1000)));
        mxp_array_free(s);
    }
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
    mxp_array_free(a);
}

/* ---- the lists and the getters ---------------------------------------- */

#define NAME(isa, tile, fn, twin) #fn,
static const char *const f32_arith_list[] = {
#define MXP_F32_ARITH NAME
#include "kernels/f32-arith-list.inc"
#undef MXP_F32_ARITH
    NULL,
};
static const char *const f64_arith_list[] = {
#define MXP_F64_ARITH NAME
#include "kernels/f64-arith-list.inc"
#undef MXP_F64_ARITH
    NULL,
};
static const char *const f16_arith_list[] = {
#define MXP_F16_ARITH NAME
#include "kernels/f16-arith-list.inc"
#undef MXP_F16_ARITH
    NULL,
};
static const char *const bf16_arith_list[] = {
#define MXP_BF16_ARITH NAME
#include "kernels/bf16-arith-list.inc"
#undef MXP_BF16_ARITH
    NULL,
};
static const char *const f32_canonical_nan_list[] = {
#define MXP_F32_CANONICAL_NAN NAME
#include "kernels/f32-canonical-nan-list.inc"
#undef MXP_F32_CANONICAL_NAN
    NULL,
};
static const char *const f64_canonical_nan_list[] = {
#define MXP_F64_CANONICAL_NAN NAME
#include "kernels/f64-canonical-nan-list.inc"
#undef MXP_F64_CANONICAL_NAN
    NULL,
};
static const char *const f32_sum_list[] = {
#define MXP_F32_SUM NAME
#include "kernels/f32-sum-list.inc"
#undef MXP_F32_SUM
    NULL,
};
#undef NAME

/* The dispatch tables are the lists, row for row. */
static void test_tables_are_the_lists(void **state)
{
    (void)state;
    static const struct {
        mxp_ops_list l;
        const char *const *names;
    } lists[] = {
        { MXP_LIST_F32_ARITH, f32_arith_list }, { MXP_LIST_F64_ARITH, f64_arith_list },
        { MXP_LIST_F16_ARITH, f16_arith_list }, { MXP_LIST_BF16_ARITH, bf16_arith_list },
        { MXP_LIST_F32_CANONICAL_NAN, f32_canonical_nan_list }, { MXP_LIST_F64_CANONICAL_NAN, f64_canonical_nan_list },
        { MXP_LIST_F32_SUM, f32_sum_list },
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        size_t n;
        const mxp_kernel *rows = mxp_ops_kernels(lists[i].l, &n);
        assert_true(kc_table_is_list(rows, n, lists[i].names));
    }
}

/* At every level each getter gives the highest row at or below it; the
 * lists with a scalar twin always answer. */
static void test_getters_pick_the_most_capable_row(void **state)
{
    (void)state;
    for (int l = 0; l < MXP_LIST_COUNT; l++) {
        size_t n;
        const mxp_kernel *rows = mxp_ops_kernels((mxp_ops_list)l, &n);
        for (size_t i = 0; i < n; i++) {
            assert_non_null(rows[i].fn);
            assert_non_null(rows[i].twin);
            assert_true(strncmp(rows[i].name, "mxp_", 4) == 0 && strstr(rows[i].name, "__"));
        }
        for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
            const mxp_kernel *k = mxp_ops_kernel((mxp_ops_list)l, (mxp_isa)isa, 0);
            for (size_t i = 0; i < n; i++)
                if (mxp_kernel_runs(&rows[i], (mxp_isa)isa))
                    assert_true(k && k->isa >= rows[i].isa);
            if (k)
                assert_true(k->isa <= (mxp_isa)isa);
        }
    }
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_non_null(mxp_f32_arith_kernel((mxp_isa)isa));
        assert_non_null(mxp_f64_arith_kernel((mxp_isa)isa));
        assert_non_null(mxp_f32_canonical_nan_kernel((mxp_isa)isa));
        assert_non_null(mxp_f64_canonical_nan_kernel((mxp_isa)isa));
        assert_non_null(mxp_f32_sum_f64_kernel((mxp_isa)isa));
    }
    assert_null(mxp_f16_arith_kernel(MXP_ISA_SCALAR)); /* the blocked path below AVX2 */
    assert_null(mxp_bf16_arith_kernel(MXP_ISA_SCALAR));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_arith_rows_match_their_twin),
        cmocka_unit_test(test_f64_arith_rows_match_their_twin),
        cmocka_unit_test(test_f16_arith_rows_match_their_twin),
        cmocka_unit_test(test_bf16_arith_rows_match_their_twin),
        cmocka_unit_test(test_h16_arith_rows_on_every_top_byte_pair),
        cmocka_unit_test(test_f32_canonical_nan_rows_match_their_twin),
        cmocka_unit_test(test_f64_canonical_nan_rows_match_their_twin),
        cmocka_unit_test(test_canonical_nan_twins_do_what_they_say),
        cmocka_unit_test(test_f32_sum_rows_match_their_twin),
        cmocka_unit_test(test_f32_sum_twin_is_the_reductions_sum),
        cmocka_unit_test(test_tables_are_the_lists),
        cmocka_unit_test(test_getters_pick_the_most_capable_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
