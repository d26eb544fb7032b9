/* Every row of the byte-lane table list (src/kernels/x16-lut-list.inc)
 * this machine runs, and its twins (mxp_x16_lut_x8_ref, mxp_x32_lut_x8_ref),
 * against the reference converter: all 65,536 bfloat16/float16 patterns
 * (float32: each on top of a random low half, or of none, or of exactly
 * half an ulp: the rounding to odd's cases) in a shuffled order (so that
 * NaNs and infinities fall into many vectors and take the second pass),
 * the finite ones below twice the target's largest value (the tables
 * alone, overflow included: vectors of huge values go to the second pass),
 * every length to 200 and a long run (the streaming path), unaligned
 * starts, nothing written past the end; for each target, the modes the
 * tables serve and both overflow policies.  The tables' builder must serve exactly
 * the pairs and modes docs/conversions.md lists. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "kernels/x16-lut-kernels.h"
#include "mxp.h"
#include "support/kernel_check.h"
#include "support/prng.h"

enum { N16 = 1 << 16, BIG = (3 << 19) + 45, GUARD = 64, OFF = 5 };

static const mxp_dtype targets[] = { MXP_E4M3, MXP_E5M2, MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ,
                                     MXP_E5M2FNUZ, MXP_E8M0, MXP_E2M3, MXP_E3M2, MXP_E2M1, MXP_S4,
                                     MXP_U4, MXP_S2, MXP_U2, MXP_S8, MXP_U8, MXP_S1, MXP_U1 };
static const mxp_rounding modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_NEAREST_AWAY, MXP_ROUND_TOWARD_ZERO,
                                      MXP_ROUND_UP, MXP_ROUND_DOWN };

/* What the tables serve (x16-lut-kernels.h): the sign-symmetric modes,
 * the float targets of 1-4 significand bits but float8_e8m0fnu and
 * float16 -> float8_e5m2 (float16's top byte), and the 2- and 4-bit
 * integers. */
static int served(mxp_dtype dst, mxp_dtype src, mxp_rounding mode)
{
    const int target = dst == MXP_E4M3 || (dst == MXP_E5M2 && src != MXP_F16) || dst == MXP_E3M4 ||
                       dst == MXP_E4M3IEEE || dst == MXP_E4M3B11 || dst == MXP_E4M3FNUZ || dst == MXP_E5M2FNUZ ||
                       dst == MXP_E2M3 || dst == MXP_E3M2 || dst == MXP_E2M1 || dst == MXP_S4 || dst == MXP_U4 ||
                       dst == MXP_S2 || dst == MXP_U2;
    const int sym = mode == MXP_ROUND_NEAREST_EVEN || mode == MXP_ROUND_NEAREST_AWAY || mode == MXP_ROUND_TOWARD_ZERO;
    return target && sym;
}

/* Finite and below twice the target's largest value. */
static int in_range(uint16_t h, mxp_dtype src, mxp_dtype dst)
{
    double v;
    mxp_convert(&v, MXP_F64, &h, src, 1, NULL);
    const double max = mxp_dtype_get_traits(dst)->max + 1; /* integers: past their ends too */
    return v == v && v < 2 * max && v > -2 * max;
}

static void shuffle(uint16_t *a, size_t n, uint64_t *rng)
{
    for (size_t i = n - 1; i > 0; i--) {
        const size_t j = (size_t)(prng_next(rng) % (i + 1));
        const uint16_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* The pattern of element i of src (2 or 4 bytes). */
static uint32_t pattern(const void *src, size_t es, size_t i)
{
    return es == 2 ? ((const uint16_t *)src)[i] : ((const uint32_t *)src)[i];
}

/* fn (the kernel or its twin) on src[0, n) into dst at OFF bytes in:
 * the reference's bytes, nothing past the end. */
static size_t run_one(mxp_x16_lut_ukernel *fn, const mxp_x16_lut_tables *t, const void *src, size_t n,
                      mxp_dtype dst_type, mxp_dtype src_type, const mxp_cvt_params *p, uint8_t *got, uint8_t *want)
{
    const size_t es = mxp_dtype_itemsize(src_type);
    mxp_convert_ref(want, dst_type, src, src_type, n, p);
    memset(got, 0xa5, n + OFF + GUARD);
    fn(got + OFF, src, n, t);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (got[OFF + i] != want[i] && bad++ < 3)
            print_error("%s <- %s mode %d overflow %d: pattern 0x%x gave 0x%02x, the reference 0x%02x\n",
                        mxp_dtype_name(dst_type), mxp_dtype_name(src_type), (int)p->rounding, (int)p->overflow,
                        (unsigned)pattern(src, es, i), got[OFF + i], want[i]);
    for (size_t i = 0; i < OFF; i++)
        bad += got[i] != 0xa5;
    for (size_t i = 0; i < GUARD; i++)
        bad += got[OFF + n + i] != 0xa5;
    return bad;
}

static void test_tables_serve_the_documented_pairs(void **state)
{
    (void)state;
    const mxp_dtype srcs[] = { MXP_BF16, MXP_F16 };
    for (size_t a = 0; a < 2; a++)
        for (size_t b = 0; b < sizeof targets / sizeof targets[0]; b++)
            for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
                for (int ov = 0; ov < 2; ov++) {
                    const mxp_cvt_params p = { modes[m], ov ? MXP_OVERFLOW_SATURATE : MXP_OVERFLOW_INF, 0, 0, NULL };
                    const mxp_cvt_kernel *k = mxp_cvt_find(targets[b], srcs[a], modes[m], MXP_ISA_AVX512);
                    mxp_x16_lut_tables t;
                    const int want = served(targets[b], srcs[a], modes[m]) && k;
                    assert_int_equal(mxp_cvt_x16_lut_tables(&t, targets[b], srcs[a], &p, k ? k->fn : NULL), want);
                }
    /* counters and stochastic rounding are never served */
    mxp_cvt_params p = { MXP_ROUND_STOCHASTIC, MXP_OVERFLOW_INF, 0, 0, NULL };
    mxp_x16_lut_tables t;
    const mxp_cvt_kernel *k = mxp_cvt_find(MXP_E2M1, MXP_BF16, MXP_ROUND_NEAREST_EVEN, MXP_ISA_AVX512);
    if (k) {
        assert_false(mxp_cvt_x16_lut_tables(&t, MXP_E2M1, MXP_BF16, &p, k->fn));
        p.rounding = MXP_ROUND_NEAREST_EVEN;
        assert_true(mxp_cvt_x16_lut_tables(&t, MXP_E2M1, MXP_BF16, &p, k->fn));
        assert_false(mxp_cvt_x16_lut_tables(&t, MXP_E2M1, MXP_BF16, &p, NULL)); /* nothing to do the rest */
    }
}

/* Element i of a source array of es bytes: from a bfloat16/float16
 * pattern (float32: the bfloat16 pattern on top, the low half random, 0 or
 * exactly half an ulp now and then: the rounding to odd's cases). */
static void put(void *a, size_t es, size_t i, uint16_t h, uint64_t *rng)
{
    if (es == 2) {
        ((uint16_t *)a)[i] = h;
        return;
    }
    const uint64_t r = prng_next(rng);
    const uint32_t low = r % 4 == 0 ? 0 : r % 4 == 1 ? 0x8000 : (uint32_t)(r >> 32) & 0xffff;
    ((uint32_t *)a)[i] = (uint32_t)h << 16 | low;
}

static void test_rows_and_twin_match_the_reference(void **state)
{
    (void)state;
    size_t nk, tested = 0, bad = 0;
    const mxp_kernel *ks = mxp_cvt_x16_lut_kernels(&nk);
    uint16_t *pat = malloc(N16 * 2);
    unsigned char *all = malloc(N16 * 4), *fin = malloc(N16 * 4), *big = malloc((size_t)BIG * 4);
    uint8_t *got = malloc((size_t)BIG + OFF + GUARD), *want = malloc(BIG);
    assert_true(pat && all && fin && big && got && want);
    const mxp_dtype srcs[] = { MXP_BF16, MXP_F16, MXP_F32 };
    uint64_t rng = 0x6a09e667f3bcc908ull;
    for (size_t a = 0; a < 3; a++) {
        const mxp_dtype st = srcs[a], tsrc = st == MXP_F32 ? MXP_BF16 : st; /* the tables' source */
        const size_t es = mxp_dtype_itemsize(st);
        for (size_t i = 0; i < N16; i++)
            pat[i] = (uint16_t)i;
        shuffle(pat, N16, &rng);
        for (size_t i = 0; i < N16; i++)
            put(all, es, i, pat[i], &rng);
        for (size_t b = 0; b < sizeof targets / sizeof targets[0]; b++) {
            if (st == MXP_F32 && mxp_dtype_get_traits(targets[b])->kind != MXP_KIND_FLOAT)
                continue; /* float32 into the integers keeps vcvtps2dq */
            size_t nfin = 0;
            for (size_t i = 0; i < N16; i++)
                if (in_range(pat[i], tsrc, targets[b]))
                    put(fin, es, nfin++, pat[i], &rng);
            for (size_t i = 0; i < BIG; i++) { /* a few NaNs far apart: the second pass on a long run */
                const int nan = i % 100003 == 77;
                if (es == 2)
                    ((uint16_t *)big)[i] =
                        nan ? (uint16_t)(st == MXP_F16 ? 0x7e00 : 0x7fc0) : ((uint16_t *)fin)[i % nfin];
                else
                    ((uint32_t *)big)[i] = nan ? 0x7fc00000u : ((uint32_t *)fin)[i % nfin];
            }
            for (size_t m = 0; m < 3; m++)
                for (int ov = 0; ov < 2; ov++) {
                    const mxp_cvt_params p = { modes[m], ov ? MXP_OVERFLOW_SATURATE : MXP_OVERFLOW_INF, 0, 0, NULL };
                    const mxp_cvt_kernel *k = mxp_cvt_find(targets[b], st, modes[m], MXP_ISA_AVX512);
                    mxp_x16_lut_tables t;
                    if (!k || !mxp_cvt_x16_lut_tables(&t, targets[b], tsrc, &p, k->fn))
                        continue;
                    for (size_t r = 0; r <= nk; r++) { /* r == nk: the twin */
                        if (r < nk && (ks[r].param != (int)(8 * es) || !mxp_kernel_runs(&ks[r], mxp_isa_supported())))
                            continue;
                        mxp_x16_lut_ukernel *fn = r < nk ? (mxp_x16_lut_ukernel *)ks[r].fn
                                                     : es == 4 ? mxp_x32_lut_x8_ref
                                                               : mxp_x16_lut_x8_ref;
                        bad += run_one(fn, &t, all, N16, targets[b], st, &p, got, want);
                        bad += run_one(fn, &t, fin, nfin, targets[b], st, &p, got, want);
                        for (size_t n = 0; n <= 200; n++)
                            bad += run_one(fn, &t, all + (1000 + n) * es, n, targets[b], st, &p, got, want);
                        if (m == 0 && r < nk)
                            bad += run_one(fn, &t, big, BIG, targets[b], st, &p, got, want);
                        tested++;
                    }
                }
        }
    }
    printf("byte-lane tables: %zu kernel and twin runs\n", tested);
    assert_true(tested > 0 || nk == 0);
    assert_int_equal(bad, 0);
    free(pat);
    free(all);
    free(fin);
    free(big);
    free(got);
    free(want);
}

/* The dispatch table is the list, expanded here, row for row. */
static void test_table_is_the_list(void **state)
{
    (void)state;
    static const char *const names[] = {
#define MXP_X16_LUT(isa, features, bits, fn, twin) #fn,
#include "kernels/x16-lut-list.inc"
#undef MXP_X16_LUT
        NULL,
    };
    size_t n;
    const mxp_kernel *rows = mxp_cvt_x16_lut_kernels(&n);
    assert_true(kc_table_is_list(rows, n, names));
}

int main(void)
{
    /* the sizes here were chosen for streaming stores from 4 MiB moved: pinned,
       so that the streaming paths are covered whatever the machine's L3 */
    mxp_set_stream_threshold(4u << 20);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_the_list),
        cmocka_unit_test(test_tables_serve_the_documented_pairs),
        cmocka_unit_test(test_rows_and_twin_match_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
