/* Every row of the vector-math lists this machine runs
 * (src/kernels/f32-vmath-list.inc, f64-vmath-list.inc, f16-vmath-list.inc,
 * f32-gelu-list.inc, f64-gelu-list.inc: expanded here and checked against
 * the tables of src/ops/kernel-config.c; empty in a build without SLEEF),
 * against its twin (src/ops/kernel-refs.c: libm in float64, as the scalar
 * level computes), with the bounds docs/ops.md promises:
 *
 *   f32-vmath for float32    within 1 ulp of the twin (libm rounded once)
 *   f32-vmath to_f16/to_bf16 rounded to float16 / bfloat16: the twin's bits,
 *                            on every one of the 65,536 inputs
 *   f64-vmath                rounded to float16 / bfloat16: the twin's bits
 *                            on every 16-bit input; rounded to float32:
 *                            within 1 ulp on the float32 samples
 *   f16-vmath                the twin's bits on every float16 input
 *   f32-gelu                 the twin's bits (both correctly rounded)
 *   f64-gelu                 within 2^-44 |twin| for |x| < 14.5 (the
 *                            approximation is within 2^-44.9 of the exact
 *                            value: the premise of the float32 check)
 *
 * for every function a row serves; inputs: float32 patterns sampled across
 * all binades, the special values, every 16-bit pattern; every length to
 * KC_TAIL at unaligned starts, nothing written outside the output. */
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

enum { GUARD = 16, N16 = 65536 };

static size_t rows_of(mxp_ops_list l, const mxp_kernel **out, size_t cap)
{
    size_t n;
    const mxp_kernel *rows = mxp_ops_kernels(l, &n);
    return kc_runnable(rows, n, out, cap);
}

/* float32 samples: every 65521st pattern of all 2^32 (every binade, both
 * signs, NaNs and infinities among them) and the special values. */
static float *f32_samples(size_t *n)
{
    const size_t ns = sizeof kc_f32_specials / sizeof kc_f32_specials[0];
    float *x = malloc((65600 + ns) * sizeof *x);
    size_t k = 0;
    for (uint64_t b = 12345; b < (1ull << 32); b += 65521)
        x[k++] = kc_f32((uint32_t)b);
    for (size_t i = 0; i < ns; i++)
        x[k++] = kc_f32(kc_f32_specials[i]);
    *n = k;
    return x;
}

/* Every float16 (bf16 false) or bfloat16 pattern as float32. */
static float *all_16bit(bool bf16)
{
    uint16_t *h = malloc(N16 * 2);
    float *x = malloc(N16 * sizeof *x);
    for (uint32_t i = 0; i < N16; i++)
        h[i] = (uint16_t)i;
    assert_int_equal(mxp_convert(x, MXP_F32, h, bf16 ? MXP_BF16 : MXP_F16, N16, NULL), MXP_OK);
    free(h);
    return x;
}

/* float32 results as the test compares them: themselves (out MXP_F32) or
 * rounded to nearest even into out (float16, bfloat16), as 16-bit
 * patterns in the low bits. */
static uint32_t as_out(float y, mxp_dtype out)
{
    if (out == MXP_F32)
        return kc_f32_bits(y);
    uint16_t h;
    mxp_convert(&h, out, &y, MXP_F32, 1, NULL);
    return h;
}

/* got and want agree: float32 within 1 ulp (the same sign, both finite and
 * nonzero) or the same bits; 16-bit outputs the same bits; NaN and NaN. */
static bool agree(uint32_t got, uint32_t want, mxp_dtype out)
{
    if (got == want)
        return true;
    if (out != MXP_F32) {
        const uint32_t e = out == MXP_F16 ? 0x7c00u : 0x7f80u;
        return (got & 0x7fffu) > e && (want & 0x7fffu) > e;
    }
    const float g = kc_f32(got), w = kc_f32(want);
    if (g != g || w != w)
        return g != g && w != w;
    return (got ^ want) < 0x80000000u && g != 0 && w != 0 && !isinf(g) && !isinf(w) && kc_f32_ulps(g, w) <= 1;
}

/* ---- f32-vmath ------------------------------------------------------------ */

static mxp_dtype row_out(const mxp_kernel *k)
{
    return k->tags & MXP_VMATH_FOR_F16 ? MXP_F16 : k->tags & MXP_VMATH_FOR_BF16 ? MXP_BF16 : MXP_F32;
}

/* One row, one function over x[0..n): every result against the twin's;
 * then every length to KC_TAIL at unaligned starts. */
static size_t check_f32_row(const mxp_kernel *k, int fn, const float *x, size_t n)
{
    const mxp_dtype out = row_out(k);
    mxp_f32_vmath_ukernel *f = (mxp_f32_vmath_ukernel *)k->fn, *twin = (mxp_f32_vmath_ukernel *)k->twin;
    float *got = malloc((n + GUARD) * sizeof *got), *want = malloc(n * sizeof *want);
    size_t bad = 0;
    assert_true(f(fn, got, x, n) <= n);
    twin(fn, want, x, n);
    for (size_t i = 0; i < n; i++)
        if (!agree(as_out(got[i], out), as_out(want[i], out), out) && bad++ < 3)
            print_error("%s fn %d: x = %a (0x%08x) gives 0x%08x, %s 0x%08x\n", k->name, fn, (double)x[i],
                        kc_f32_bits(x[i]), as_out(got[i], out), k->twin_name, as_out(want[i], out));
    for (size_t len = 0; len <= KC_TAIL && len + KC_OFFSETS <= n; len++) {
        const size_t ox = len % KC_OFFSETS, oy = (len + 1) % KC_OFFSETS;
        for (size_t i = 0; i < len + GUARD + KC_OFFSETS; i++)
            got[i] = kc_f32(0x7fa5a5a5u);
        f(fn, got + oy, x + ox, len);
        twin(fn, want, x + ox, len);
        for (size_t i = 0; i < len; i++)
            bad += !agree(as_out(got[oy + i], out), as_out(want[i], out), out);
        for (size_t i = 0; i < oy; i++)
            bad += kc_f32_bits(got[i]) != 0x7fa5a5a5u;
        for (size_t i = oy + len; i < oy + len + GUARD; i++)
            bad += kc_f32_bits(got[i]) != 0x7fa5a5a5u;
    }
    free(got);
    free(want);
    return bad;
}

static void test_f32_vmath_rows_match_their_twin(void **state)
{
    (void)state;
    const mxp_kernel *ks[16];
    const size_t nk = rows_of(MXP_LIST_F32_VMATH, ks, 16);
    size_t ns, bad = 0, runs = 0;
    float *samples = f32_samples(&ns), *f16 = all_16bit(false), *bf16 = all_16bit(true);
    for (size_t r = 0; r < nk; r++) {
        const mxp_dtype out = row_out(ks[r]);
        /* a 16-bit output comes from a 16-bit input: every one of them */
        const float *x = out == MXP_F16 ? f16 : out == MXP_BF16 ? bf16 : samples;
        const size_t n = out == MXP_F32 ? ns : N16;
        for (int fn = 0; fn < MXP_VMATH_COUNT; fn++)
            if (ks[r]->tags & MXP_VMATH_FN(fn)) {
                bad += check_f32_row(ks[r], fn, x, n);
                runs++;
            }
    }
    print_message("%zu rows, %zu functions checked\n", nk, runs);
    free(samples);
    free(f16);
    free(bf16);
    assert_int_equal(bad, 0);
}

/* ---- f64-vmath ------------------------------------------------------------ */

/* One row, one function: float32 inputs x (as float64) whose results are
 * rounded into out and compared as agree() does. */
static size_t check_f64_row(const mxp_kernel *k, int fn, const float *x, size_t n, mxp_dtype out)
{
    mxp_f64_vmath_ukernel *f = (mxp_f64_vmath_ukernel *)k->fn, *twin = (mxp_f64_vmath_ukernel *)k->twin;
    double *xd = malloc(n * 8), *got = malloc((n + GUARD) * 8), *want = malloc(n * 8);
    for (size_t i = 0; i < n; i++)
        xd[i] = x[i];
    size_t bad = 0;
    f(fn, got, xd, n);
    twin(fn, want, xd, n);
    if (out == MXP_F32) { /* rounded to float32 (nearest even) */
        for (size_t i = 0; i < n; i++)
            if (!agree(kc_f32_bits((float)got[i]), kc_f32_bits((float)want[i]), MXP_F32) && bad++ < 3)
                print_error("%s fn %d: x = %a gives %a, %s %a\n", k->name, fn, xd[i], got[i], k->twin_name, want[i]);
    } else { /* one rounding of the float64 value into the 16-bit type */
        uint16_t *g = malloc(n * 2), *w = malloc(n * 2);
        mxp_convert(g, out, got, MXP_F64, n, NULL);
        mxp_convert(w, out, want, MXP_F64, n, NULL);
        for (size_t i = 0; i < n; i++)
            if (!agree(g[i], w[i], out) && bad++ < 3)
                print_error("%s fn %d: x = %a gives %a (0x%04x), %s %a (0x%04x)\n", k->name, fn, xd[i], got[i],
                            g[i], k->twin_name, want[i], w[i]);
        free(g);
        free(w);
    }
    for (size_t len = 0; len <= KC_TAIL && len + KC_OFFSETS <= n; len++) {
        const size_t ox = len % KC_OFFSETS, oy = (len + 1) % KC_OFFSETS;
        for (size_t i = 0; i < len + GUARD + KC_OFFSETS; i++)
            got[i] = -1234.5;
        f(fn, got + oy, xd + ox, len);
        twin(fn, want, xd + ox, len);
        for (size_t i = 0; i < len; i++)
            bad += !agree(kc_f32_bits((float)got[oy + i]), kc_f32_bits((float)want[i]), MXP_F32);
        for (size_t i = 0; i < oy; i++)
            bad += got[i] != -1234.5;
        for (size_t i = oy + len; i < oy + len + GUARD; i++)
            bad += got[i] != -1234.5;
    }
    free(xd);
    free(got);
    free(want);
    return bad;
}

static void test_f64_vmath_rows_match_their_twin(void **state)
{
    (void)state;
    const mxp_kernel *ks[16];
    const size_t nk = rows_of(MXP_LIST_F64_VMATH, ks, 16);
    size_t ns, bad = 0;
    float *samples = f32_samples(&ns), *f16 = all_16bit(false), *bf16 = all_16bit(true);
    for (size_t r = 0; r < nk; r++)
        for (int fn = 0; fn < MXP_VMATH_COUNT; fn++) {
            bad += check_f64_row(ks[r], fn, samples, ns, MXP_F32);
            bad += check_f64_row(ks[r], fn, f16, N16, MXP_F16);
            bad += check_f64_row(ks[r], fn, bf16, N16, MXP_BF16);
        }
    print_message("%zu rows checked\n", nk);
    free(samples);
    free(f16);
    free(bf16);
    assert_int_equal(bad, 0);
}

/* ---- f16-vmath ------------------------------------------------------------ */

static void test_f16_vmath_rows_match_their_twin(void **state)
{
    (void)state;
    const mxp_kernel *ks[16];
    const size_t nk = rows_of(MXP_LIST_F16_VMATH, ks, 16);
    uint16_t *x = malloc(N16 * 2), *got = malloc((N16 + GUARD) * 2), *want = malloc(N16 * 2);
    for (uint32_t i = 0; i < N16; i++)
        x[i] = (uint16_t)(i * 40503u); /* every pattern, scattered over the lanes */
    size_t bad = 0;
    for (size_t r = 0; r < nk; r++) {
        mxp_f16_vmath_ukernel *f = (mxp_f16_vmath_ukernel *)ks[r]->fn, *twin = (mxp_f16_vmath_ukernel *)ks[r]->twin;
        for (int fn = 0; fn < MXP_VMATH_COUNT; fn++) {
            if (!(ks[r]->tags & MXP_VMATH_FN(fn)))
                continue;
            assert_true(f(fn, got, x, N16) <= N16);
            twin(fn, want, x, N16);
            for (size_t i = 0; i < N16; i++)
                if (got[i] != want[i] && bad++ < 3)
                    print_error("%s fn %d: x = 0x%04x gives 0x%04x, %s 0x%04x\n", ks[r]->name, fn, x[i], got[i],
                                ks[r]->twin_name, want[i]);
            for (size_t len = 0; len <= KC_TAIL; len++) {
                const size_t ox = len % KC_OFFSETS, oy = (len + 1) % KC_OFFSETS;
                for (size_t i = 0; i < len + GUARD + KC_OFFSETS; i++)
                    got[i] = 0xa5a5;
                f(fn, got + oy, x + ox, len);
                twin(fn, want, x + ox, len);
                bad += memcmp(got + oy, want, len * 2) != 0;
                for (size_t i = 0; i < oy; i++)
                    bad += got[i] != 0xa5a5;
                for (size_t i = oy + len; i < oy + len + GUARD; i++)
                    bad += got[i] != 0xa5a5;
            }
        }
    }
    print_message("%zu rows checked on every float16 input\n", nk);
    free(x);
    free(got);
    free(want);
    assert_int_equal(bad, 0);
}

/* ---- f32-gelu, f64-gelu --------------------------------------------------- */

/* gelu's inputs: the samples, and 2048 float32 on each side of the fast
 * path's thresholds (0, 2^-54, 0.5, 1, 1.5 ... 13.5, 14.356, 14.5), both
 * signs. */
static float *gelu_samples(size_t *n)
{
    size_t ns;
    float *s = f32_samples(&ns);
    static const float edges[] = { 0, 0x1p-54f, 0.5f, 1, 1.5f, 2.5f, 3.5f, 4.5f, 5.3475156f, 6.5f, 7.5f, 8.5f,
                                   9.5f, 10.5f, 11.5f, 12.5f, 13.5f, 14.356068f, 14.5f };
    const size_t ne = sizeof edges / sizeof edges[0];
    float *x = malloc((ns + ne * 4096 * 2) * sizeof *x);
    memcpy(x, s, ns * sizeof *x);
    size_t k = ns;
    for (size_t e = 0; e < ne; e++) {
        const uint32_t c = kc_f32_bits(edges[e]), lo = c >= 2048 ? c - 2048 : 0;
        for (uint32_t b = lo; b < lo + 4096; b++) {
            x[k++] = kc_f32(b);
            x[k++] = kc_f32(b | 0x80000000u);
        }
    }
    free(s);
    *n = k;
    return x;
}

static void test_f32_gelu_rows_match_their_twin(void **state)
{
    (void)state;
    const mxp_kernel *ks[16];
    const size_t nk = rows_of(MXP_LIST_F32_GELU, ks, 16);
    size_t n, bad = 0;
    float *x = gelu_samples(&n), *got = malloc((n + GUARD) * sizeof *got), *want = malloc(n * sizeof *want);
    for (size_t r = 0; r < nk; r++) {
        mxp_f32_gelu_ukernel *f = (mxp_f32_gelu_ukernel *)ks[r]->fn, *twin = (mxp_f32_gelu_ukernel *)ks[r]->twin;
        assert_true(f(got, x, n) <= n);
        twin(want, x, n);
        for (size_t i = 0; i < n; i++) {
            const bool same = kc_f32_bits(got[i]) == kc_f32_bits(want[i]) || (got[i] != got[i] && want[i] != want[i]);
            if (!same && bad++ < 3)
                print_error("%s: gelu(%a) = %a, %s %a\n", ks[r]->name, (double)x[i], (double)got[i],
                            ks[r]->twin_name, (double)want[i]);
        }
        for (size_t len = 0; len <= KC_TAIL; len++) {
            const size_t ox = n - len - len % KC_OFFSETS, oy = (len + 1) % KC_OFFSETS; /* the edges' end */
            for (size_t i = 0; i < len + GUARD + KC_OFFSETS; i++)
                got[i] = kc_f32(0x7fa5a5a5u);
            f(got + oy, x + ox, len);
            twin(want, x + ox, len);
            for (size_t i = 0; i < len; i++)
                bad += kc_f32_bits(got[oy + i]) != kc_f32_bits(want[i]) && !(want[i] != want[i] && got[oy + i] != got[oy + i]);
            for (size_t i = 0; i < oy; i++)
                bad += kc_f32_bits(got[i]) != 0x7fa5a5a5u;
            for (size_t i = oy + len; i < oy + len + GUARD; i++)
                bad += kc_f32_bits(got[i]) != 0x7fa5a5a5u;
        }
    }
    print_message("%zu rows, %zu inputs each\n", nk, n);
    free(x);
    free(got);
    free(want);
    assert_int_equal(bad, 0);
}

static void test_f64_gelu_rows_within_their_bound(void **state)
{
    (void)state;
    const mxp_kernel *ks[16];
    const size_t nk = rows_of(MXP_LIST_F64_GELU, ks, 16);
    size_t n, bad = 0;
    float *x = gelu_samples(&n);
    double *xd = malloc(n * 8), *got = malloc((n + GUARD) * 8), *want = malloc(n * 8);
    for (size_t i = 0; i < n; i++)
        xd[i] = x[i];
    for (size_t r = 0; r < nk; r++) {
        mxp_f64_gelu_ukernel *f = (mxp_f64_gelu_ukernel *)ks[r]->fn, *twin = (mxp_f64_gelu_ukernel *)ks[r]->twin;
        f(got, xd, n);
        twin(want, xd, n);
        double worst = 0;
        for (size_t i = 0; i < n; i++) {
            if (want[i] != want[i]) {
                bad += got[i] == got[i];
                continue;
            }
            if (!(fabs(xd[i]) < 14.5) || want[i] == 0)
                continue; /* beyond, y is x or -0: the float32 kernel's comparison proves it */
            const double e = fabs(got[i] - want[i]) / fabs(want[i]);
            worst = e > worst ? e : worst;
        }
        print_message("%s: max |y - twin| / |twin| = 2^%.2f\n", ks[r]->name, log2(worst));
        bad += !(worst <= 0x1p-44);
        for (size_t len = 0; len <= KC_TAIL; len++) {
            const size_t ox = len % KC_OFFSETS, oy = (len + 1) % KC_OFFSETS;
            for (size_t i = 0; i < len + GUARD + KC_OFFSETS; i++)
                got[i] = -1234.5;
            f(got + oy, xd + ox, len);
            f(want, xd + ox, len); /* the same kernel at an aligned start: the same bits */
            bad += memcmp(got + oy, want, len * 8) != 0;
            for (size_t i = 0; i < oy; i++)
                bad += got[i] != -1234.5;
            for (size_t i = oy + len; i < oy + len + GUARD; i++)
                bad += got[i] != -1234.5;
        }
    }
    free(x);
    free(xd);
    free(got);
    free(want);
    assert_int_equal(bad, 0);
}

/* ---- the lists and the getters ------------------------------------------ */

#define NAME4(isa, tile, fn, twin) #fn,
#define NAME5(isa, tags, tile, fn, twin) #fn,
static const char *const f32_vmath_list[] = {
#define MXP_F32_VMATH NAME5
#include "kernels/f32-vmath-list.inc"
#undef MXP_F32_VMATH
    NULL,
};
static const char *const f64_vmath_list[] = {
#define MXP_F64_VMATH NAME4
#include "kernels/f64-vmath-list.inc"
#undef MXP_F64_VMATH
    NULL,
};
static const char *const f16_vmath_list[] = {
#define MXP_F16_VMATH NAME5
#include "kernels/f16-vmath-list.inc"
#undef MXP_F16_VMATH
    NULL,
};
static const char *const f32_gelu_list[] = {
#define MXP_F32_GELU NAME4
#include "kernels/f32-gelu-list.inc"
#undef MXP_F32_GELU
    NULL,
};
static const char *const f64_gelu_list[] = {
#define MXP_F64_GELU NAME4
#include "kernels/f64-gelu-list.inc"
#undef MXP_F64_GELU
    NULL,
};
#undef NAME4
#undef NAME5

/* The dispatch tables are the lists, row for row. */
static void test_tables_are_the_lists(void **state)
{
    (void)state;
    const char *const *names[] = { f32_vmath_list, f64_vmath_list, f16_vmath_list, f32_gelu_list, f64_gelu_list };
    for (int l = MXP_LIST_F32_VMATH; l <= MXP_LIST_F64_GELU; l++) {
        size_t n;
        const mxp_kernel *rows = mxp_ops_kernels((mxp_ops_list)l, &n);
        assert_true(kc_table_is_list(rows, n, names[l - MXP_LIST_F32_VMATH]));
    }
}

/* Built with SLEEF on a machine with AVX2, every vector-math list has rows
 * and the getters answer from the avx2 level on, never below. */
static void test_vmath_getters(void **state)
{
    (void)state;
    for (int l = MXP_LIST_F32_VMATH; l <= MXP_LIST_F64_GELU; l++)
        assert_null(mxp_ops_kernel((mxp_ops_list)l, MXP_ISA_SCALAR, 0));
#ifdef MXP_TEST_EXPECT_SLEEF
    if (mxp_isa_supported() < MXP_ISA_AVX2)
        return;
    assert_non_null(mxp_f32_vmath_kernel(MXP_ISA_AVX2, MXP_VMATH_FOR_F32 | MXP_VMATH_FN(MXP_VMATH_EXP)));
    assert_non_null(mxp_f32_vmath_kernel(MXP_ISA_AVX2, MXP_VMATH_FOR_F16 | MXP_VMATH_FN(MXP_VMATH_COS)));
    assert_null(mxp_f32_vmath_kernel(MXP_ISA_AVX2, MXP_VMATH_FOR_F16 | MXP_VMATH_FN(MXP_VMATH_GELU)));
    assert_non_null(mxp_f32_vmath_kernel(MXP_ISA_AVX2, MXP_VMATH_FOR_BF16 | MXP_VMATH_FN(MXP_VMATH_GELU)));
    assert_null(mxp_f32_vmath_kernel(MXP_ISA_AVX2, MXP_VMATH_FOR_BF16 | MXP_VMATH_FN(MXP_VMATH_SIGMOID)));
    assert_null(mxp_f16_vmath_kernel(MXP_ISA_AVX2, MXP_VMATH_FN(MXP_VMATH_SIGMOID)));
    assert_non_null(mxp_f64_vmath_kernel(MXP_ISA_AVX2));
    assert_non_null(mxp_f32_gelu_kernel(MXP_ISA_AVX2));
    if (mxp_isa_supported() >= MXP_ISA_AVX512) {
        assert_non_null(mxp_f32_vmath_kernel(MXP_ISA_AVX512, MXP_VMATH_FOR_BF16 | MXP_VMATH_FN(MXP_VMATH_GELU)));
        assert_non_null(mxp_f16_vmath_kernel(MXP_ISA_AVX512, MXP_VMATH_FN(MXP_VMATH_GELU)));
    }
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f32_vmath_rows_match_their_twin),
        cmocka_unit_test(test_f64_vmath_rows_match_their_twin),
        cmocka_unit_test(test_f16_vmath_rows_match_their_twin),
        cmocka_unit_test(test_f32_gelu_rows_match_their_twin),
        cmocka_unit_test(test_f64_gelu_rows_within_their_bound),
        cmocka_unit_test(test_tables_are_the_lists),
        cmocka_unit_test(test_vmath_getters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
