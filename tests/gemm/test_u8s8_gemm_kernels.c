/* The integer GEMM configurations (micro-kernels of src/kernels/u8s8-gemm/
 * with the packing of src/gemm/int8-pack.c and src/kernels/s8-pack/,
 * u8-pack/), one tile at a time, against
 * sums computed here in 64 bits and wrapped to 32, bit for bit: every
 * configuration this machine runs, every mr <= MR and nr <= NR, kc from 1
 * (odd, not a multiple of the K-group) to beyond the point where the raw
 * sums wrap, values at the ends of the ranges (255 * -128 pairs, which
 * vpmaddubsw would saturate), the corrections (row_off + col_off) or C
 * added to, C outside the tile untouched; and the SIMD packing equal to
 * its portable twin. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gemm/int8-internal.h"
#include "mxp.h"
#include "support/prng.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint32_t next(void)
{
    return (uint32_t)(prng_next(&rng) >> 16);
}

/* Values of one case: uniform, or only the ends (every pair of products
 * 255 * -128 + 255 * -128, beyond int16), or only the largest magnitudes. */
enum gen { GEN_RANDOM, GEN_ENDS, GEN_LARGEST };

static void fill(unsigned char *x, size_t count, enum gen g, bool is_signed)
{
    for (size_t i = 0; i < count; i++) {
        const uint32_t r = next();
        if (g == GEN_RANDOM)
            x[i] = (unsigned char)r;
        else if (g == GEN_ENDS)
            x[i] = r & 1 ? (is_signed ? 0x80 : 0xff) : (is_signed ? 0x7f : 0x00);
        else
            x[i] = is_signed ? 0x80 : 0xff;
    }
}

static int32_t from_bits(uint32_t u)
{
    int32_t v;
    memcpy(&v, &u, 4);
    return v;
}

/* The distinct configurations of the levels this machine has. */
static size_t configs(const mxp_gemm_config **out, mxp_isa *levels)
{
    size_t n = 0;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        const mxp_gemm_config *c = mxp_gemm_config_for(MXP_S32, MXP_U8, MXP_S8, (mxp_isa)isa);
        if (n == 0 || out[n - 1] != c) {
            levels[n] = (mxp_isa)isa;
            out[n++] = c;
        }
    }
    return n;
}

enum { GUARD_COLS = 3 };
#define GUARD_VALUE 0x5a5a5a5a

/* One tile: A mr x kc (uint8, or int8 that packing flips), B kc x nr, both
 * packed by the library; C (ldc = NR + GUARD_COLS, MR rows) starts as
 * guards, or as values the kernel adds to. */
static void check_tile(const mxp_gemm_config *cfg, mxp_dtype at, size_t mr, size_t nr, size_t kc, enum gen g,
                       bool corrections)
{
    const size_t MR = cfg->mr, NR = cfg->nr, ldc = NR + GUARD_COLS;
    unsigned char *a = malloc(mr * kc), *b = malloc(kc * nr);
    void *pa = malloc(mxp_int8_panel_bytes(cfg, MR, kc)), *pb = malloc(mxp_int8_panel_bytes(cfg, NR, kc));
    int32_t *c = malloc(MR * ldc * sizeof *c), *row_off = malloc(MR * sizeof *row_off);
    int32_t *col_off = malloc(NR * sizeof *col_off);
    assert_true(a && b && pa && pb && c && row_off && col_off);
    fill(a, mr * kc, g, at == MXP_S8);
    fill(b, kc * nr, g, true);
    for (size_t i = 0; i < MR * ldc; i++)
        c[i] = (i % ldc < nr && i / ldc < mr && !corrections) ? from_bits(next()) : GUARD_VALUE;
    for (size_t i = 0; i < MR; i++)
        row_off[i] = from_bits(next());
    for (size_t j = 0; j < NR; j++)
        col_off[j] = from_bits(next());
    const mxp_gemm_operand oa = { a, at, kc, 0, NULL }, ob = { b, MXP_S8, nr, 0, NULL };
    mxp_int8_pack_a(cfg, &oa, 0, mr, 0, kc, pa);
    (void)mxp_int8_pack_b(cfg, &ob, 0, kc, 0, nr, pb, false);
    int32_t *want = malloc(MR * ldc * sizeof *want);
    assert_non_null(want);
    memcpy(want, c, MR * ldc * sizeof *c);
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            uint32_t s = corrections ? (uint32_t)row_off[i] + (uint32_t)col_off[j] : (uint32_t)c[i * ldc + j];
            for (size_t p = 0; p < kc; p++) { /* the packed A': uint8, int8 + 128 */
                const int32_t x = at == MXP_S8 ? (int8_t)a[i * kc + p] + 128 : a[i * kc + p];
                s += (uint32_t)(x * (int8_t)b[p * nr + j]);
            }
            want[i * ldc + j] = from_bits(s);
        }
    const size_t kcp = (kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack;
    cfg->ukernel_s32(mr, nr, kcp, pa, pb, c, ldc, corrections ? row_off : NULL, corrections ? col_off : NULL);
    for (size_t i = 0; i < MR * ldc; i++)
        if (c[i] != want[i])
            fail_msg("%s: %s A, mr %zu nr %zu kc %zu gen %d corrections %d: c[%zu][%zu] = %d, want %d", cfg->name,
                     mxp_dtype_name(at), mr, nr, kc, (int)g, (int)corrections, i / ldc, i % ldc, c[i], want[i]);
    free(a);
    free(b);
    free(pa);
    free(pb);
    free(c);
    free(want);
    free(row_off);
    free(col_off);
}

static void test_u8s8_ukernels_give_the_exact_sums_on_every_edge_tile(void **state)
{
    (void)state;
    const mxp_gemm_config *cfg[MXP_ISA_COUNT];
    mxp_isa level[MXP_ISA_COUNT];
    const size_t ncfg = configs(cfg, level);
    const size_t kcs[] = { 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33, 64, 255 };
    for (size_t f = 0; f < ncfg; f++) {
        assert_int_equal(mxp_set_isa(level[f]), MXP_OK); /* its packing kernels */
        print_message("%s (kpack %zu)\n", cfg[f]->name, cfg[f]->kpack);
        for (size_t mr = 1; mr <= cfg[f]->mr; mr++)
            for (size_t nr = 1; nr <= cfg[f]->nr; nr++)
                for (size_t ik = 0; ik < NELEMS(kcs); ik++) {
                    const size_t w = mr * 131 + nr * 7 + ik;
                    check_tile(cfg[f], w % 2 ? MXP_S8 : MXP_U8, mr, nr, kcs[ik], (enum gen)(w % 3), w % 4 < 2);
                }
    }
}

/* K beyond 2^31 / (255 * 128): the raw sums of the extremes wrap modulo
 * 2^32, as the scalar twin's do; so do the corrections added to them. */
static void test_u8s8_ukernels_wrap_their_raw_sums_at_the_largest_k(void **state)
{
    (void)state;
    const mxp_gemm_config *cfg[MXP_ISA_COUNT];
    mxp_isa level[MXP_ISA_COUNT];
    const size_t ncfg = configs(cfg, level);
    for (size_t f = 0; f < ncfg; f++) {
        assert_int_equal(mxp_set_isa(level[f]), MXP_OK);
        const size_t MR = cfg[f]->mr, NR = cfg[f]->nr;
        for (int g = GEN_ENDS; g <= GEN_LARGEST; g++) {
            check_tile(cfg[f], MXP_U8, MR, NR, 70001, (enum gen)g, g == GEN_ENDS);
            check_tile(cfg[f], MXP_S8, MR - 1, NR - 1, 131071, (enum gen)g, g != GEN_ENDS);
        }
    }
}

/* Packing at each level (SIMD where it has it) against the same
 * configuration packed at the scalar level (the portable loops): A and B,
 * either layout, transposed or not, every offset and size around the
 * vector widths and the K-group. */
static void test_int8_packing_equals_its_portable_twin(void **state)
{
    (void)state;
    const mxp_gemm_config *cfg[MXP_ISA_COUNT];
    mxp_isa level[MXP_ISA_COUNT];
    const size_t ncfg = configs(cfg, level);
    const size_t rows = 80, ld = 83; /* op(X) blocks reach row and column 9 + 61, 4 + 70 */
    unsigned char *x = malloc(rows * ld);
    assert_non_null(x);
    fill(x, rows * ld, GEN_RANDOM, true);
    const size_t sizes[][2] = { { 1, 1 }, { 5, 3 }, { 6, 16 }, { 7, 17 }, { 13, 33 }, { 48, 63 }, { 61, 70 } };
    for (size_t f = 1; f < ncfg; f++)
        for (size_t s = 0; s < NELEMS(sizes); s++)
            for (int t = 0; t < 4; t++) {
                const size_t w = sizes[s][0], k = sizes[s][1], i0 = (size_t)t * 3, p0 = s % 5;
                const mxp_gemm_operand a = { x, t % 2 ? MXP_S8 : MXP_U8, ld, t / 2, NULL };
                const mxp_gemm_operand b = { x, MXP_S8, ld, t / 2, NULL };
                const size_t abytes = mxp_int8_panel_bytes(cfg[f], (w + cfg[f]->mr - 1) / cfg[f]->mr * cfg[f]->mr, k);
                const size_t bbytes = mxp_int8_panel_bytes(cfg[f], (w + cfg[f]->nr - 1) / cfg[f]->nr * cfg[f]->nr, k);
                unsigned char *got = malloc(abytes + bbytes), *want = malloc(abytes + bbytes);
                assert_true(got && want);
                memset(got, 0xa5, abytes + bbytes); /* every byte must be written */
                memset(want, 0x3c, abytes + bbytes);
                assert_int_equal(mxp_set_isa(level[f]), MXP_OK);
                mxp_int8_pack_a(cfg[f], &a, i0, w, p0, k, got);
                (void)mxp_int8_pack_b(cfg[f], &b, p0, k, i0, w, got + abytes, false);
                assert_int_equal(mxp_set_isa(MXP_ISA_SCALAR), MXP_OK);
                mxp_int8_pack_a(cfg[f], &a, i0, w, p0, k, want);
                (void)mxp_int8_pack_b(cfg[f], &b, p0, k, i0, w, want + abytes, false);
                if (memcmp(got, want, abytes + bbytes))
                    fail_msg("%s: packing %zu x %zu (trans %d, %s A) differs from the portable loops", cfg[f]->name,
                             w, k, t / 2, t % 2 ? "int8" : "uint8");
                if (cfg[f]->kpack == 4 && p0 % 2 == 0) { /* the wide-pair check: the same answer at both levels */
                    const bool want_wide = mxp_int8_pack_b(cfg[f], &b, p0, k, i0, w, want + abytes, true);
                    assert_int_equal(mxp_set_isa(level[f]), MXP_OK);
                    if (mxp_int8_pack_b(cfg[f], &b, p0, k, i0, w, got + abytes, true) != want_wide)
                        fail_msg("%s: B %zu x %zu (trans %d) checked for wide pairs: %d, the portable loops %d",
                                 cfg[f]->name, k, w, t / 2, (int)!want_wide, (int)want_wide);
                }
                free(got);
                free(want);
            }
    free(x);
}

static int restore_isa(void **state)
{
    (void)state;
    mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1));
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_u8s8_ukernels_give_the_exact_sums_on_every_edge_tile, restore_isa),
        cmocka_unit_test_teardown(test_u8s8_ukernels_wrap_their_raw_sums_at_the_largest_k, restore_isa),
        cmocka_unit_test_teardown(test_int8_packing_equals_its_portable_twin, restore_isa),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
