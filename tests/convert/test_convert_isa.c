/* Every SIMD conversion kernel against the reference converter, bit for bit:
 * the rounding-deciding values of cases.c and random bits, every mode the
 * kernel claims, both overflow policies, odd lengths and offsets for the
 * tails, with and without MXCSR FTZ/DAZ; and mxp_convert at every ISA level
 * the machine has.  Levels the machine lacks are skipped, and say so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "convert/cases.h"
#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "core/cpu-internal.h"
#include "kernels/cvt-kernels.h"
#include "mxp.h"

enum { CAP = 1 << 17 };

static uint64_t *bits;
static unsigned char *src, *want, *got;

static void set_ftz_daz(int on)
{
#if defined(__SSE__)
    unsigned csr = _mm_getcsr();
    _mm_setcsr(on ? csr | 0x8040u : csr & ~0x8040u);
#else
    (void)on;
#endif
}

static size_t compare(const void *a, const void *b, size_t n, size_t size, const char *what, const uint64_t *in)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = 0, y = 0;
        memcpy(&x, (const unsigned char *)a + i * size, size);
        memcpy(&y, (const unsigned char *)b + i * size, size);
        if (x != y && bad++ < 8)
            print_error("%s: element %zu (src 0x%llx): kernel 0x%llx, reference 0x%llx\n", what, i,
                        (unsigned long long)(in ? in[i] : 0), (unsigned long long)y, (unsigned long long)x);
    }
    return bad;
}

/* One kernel, one mode, one overflow policy, over the case set. */
static size_t check_kernel_mode(const mxp_cvt_kernel *k, size_t n, mxp_rounding mode, mxp_overflow ov,
                                uint64_t index0)
{
    size_t ds = mxp_dtype_itemsize(k->dst);
    mxp_cvt_params p = { mode, ov, 0x1234567887654321ull, index0, NULL };
    char what[160];
    snprintf(what, sizeof what, "%s %s/%s index0=%llu", k->name, mxp_rounding_name(mode), mxp_overflow_name(ov),
             (unsigned long long)index0);
    mxp_convert_ref(want, k->dst, src, k->src, n, &p);
    memset(got, 0xa5, n * ds + 64);
    k->fn(got, src, n, &p);
    size_t bad = compare(want, got, n, ds, what, bits);
    /* Nothing past the end is written. */
    for (size_t i = n * ds; i < n * ds + 64; i++)
        if (got[i] != 0xa5 && bad++ < 8)
            print_error("%s: wrote past the end (byte %zu)\n", what, i);
    /* Odd lengths and unaligned starts of the source and the destination
     * exercise the masked tails and the heads; nothing around the
     * destination is written. */
    static const size_t more[] = { 97, 255, 1021 };
    for (size_t j = 0; j < 10 + sizeof more / sizeof more[0]; j++) {
        const size_t len = j < 10 ? 7 * j : more[j - 10];
        const size_t off = (len * 13) % 17, doff = (len * 5) % 11;
        if (off + len > n)
            continue;
        unsigned char *out = got + doff * ds;
        p.index0 = index0 + off;
        mxp_convert_ref(want, k->dst, src + off * mxp_dtype_itemsize(k->src), k->src, len, &p);
        memset(got, 0xa5, (doff + len) * ds + 64);
        k->fn(out, src + off * mxp_dtype_itemsize(k->src), len, &p);
        bad += compare(want, out, len, ds, what, bits + off);
        for (size_t i = 0; i < (doff + len) * ds + 64; i++)
            bad += (i < doff * ds || i >= (doff + len) * ds) && got[i] != 0xa5;
    }
    return bad;
}

/* Large arrays take the streaming-store path, with a destination that
 * starts off alignment so the head is converted separately. */
static size_t check_kernel_large(const mxp_cvt_kernel *k, mxp_rounding mode)
{
    enum { N = (1 << 20) + 13 };
    size_t ss = mxp_dtype_itemsize(k->src), ds = mxp_dtype_itemsize(k->dst);
    unsigned char *in = malloc(N * ss), *a = malloc(N * ds + 64), *b = malloc(N * ds + 64);
    assert_non_null(in);
    assert_non_null(a);
    assert_non_null(b);
    uint64_t rng = 7;
    for (size_t i = 0; i < N; i++) {
        uint64_t v = cases_rand64(&rng);
        memcpy(in + i * ss, &v, ss);
    }
    mxp_cvt_params p = { mode, MXP_OVERFLOW_INF, 3, 0, NULL };
    mxp_convert_ref(a + ds, k->dst, in, k->src, N, &p);
    k->fn(b + ds, in, N, &p);
    char what[128];
    snprintf(what, sizeof what, "%s %s large", k->name, mxp_rounding_name(mode));
    size_t bad = compare(a + ds, b + ds, N, ds, what, NULL);
    free(in);
    free(a);
    free(b);
    return bad;
}

static void check_kernels(int ftz_daz)
{
    size_t count, tested = 0, skipped = 0, bad = 0;
    const mxp_cvt_kernel *ks = mxp_cvt_kernels(&count);
    for (size_t i = 0; i < count; i++) {
        const mxp_cvt_kernel *k = &ks[i];
        if (k->isa > mxp_isa_supported()) {
            if (!ftz_daz)
                print_message("skipped %s: this machine lacks %s\n", k->name, mxp_isa_name(k->isa));
            skipped++;
            continue;
        }
        size_t n = cases_build(k->src, k->dst, bits, CAP, 0xc0ffee + i, 50000);
        cases_store(src, k->src, bits, n);
        set_ftz_daz(ftz_daz);
        for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++) {
            if (!(k->modes >> mode & 1u))
                continue;
            for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
                bad += check_kernel_mode(k, n, (mxp_rounding)mode, (mxp_overflow)ov, 0);
                if (mode == MXP_ROUND_STOCHASTIC)
                    bad += check_kernel_mode(k, n, (mxp_rounding)mode, (mxp_overflow)ov, (5ull << 32) + 77);
            }
        }
        if (!ftz_daz) {
            for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++)
                if (k->modes >> mode & 1u)
                    bad += check_kernel_large(k, (mxp_rounding)mode);
        }
        set_ftz_daz(0);
        tested++;
    }
    print_message("%zu kernels checked%s, %zu skipped\n", tested, ftz_daz ? " with FTZ/DAZ set" : "", skipped);
    assert_true(tested + skipped == count);
    if (bad)
        fail_msg("%zu kernel results differ from the reference", bad);
}

static void test_every_kernel_matches_reference_bit_for_bit(void **state)
{
    (void)state;
    check_kernels(0);
}

static void test_every_kernel_ignores_mxcsr_ftz_daz(void **state)
{
    (void)state;
    check_kernels(1);
}

/* Through the public entry point, at every level: same bits as scalar. */
static void test_mxp_convert_gives_same_bits_at_every_isa_level(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2, MXP_S8, MXP_U8, MXP_S32 };
    const size_t nt = sizeof types / sizeof types[0];
    size_t bad = 0;
    for (size_t a = 0; a < nt; a++) {
        for (size_t b = 0; b < nt; b++) {
            mxp_dtype st = types[a], dt = types[b];
            size_t n = cases_build(st, dt, bits, CAP, 99 + a * 16 + b, 5000);
            cases_store(src, st, bits, n);
            size_t ds = mxp_dtype_itemsize(dt);
            /* both overflow policies; stochastic also from an index just
             * below 2^32 (the stream's key changes at 2^32) */
            for (int run = 0; run < 2 * MXP_ROUNDING_COUNT + 1; run++) {
                const int mode = run < 2 * MXP_ROUNDING_COUNT ? run / 2 : MXP_ROUND_STOCHASTIC;
                mxp_convert_opts o = { .rounding = (mxp_rounding)mode, .overflow = (mxp_overflow)(run % 2), .seed = 42, .flags = NULL };
                if (run == 2 * MXP_ROUNDING_COUNT)
                    o.index_offset = (1ull << 32) - 777;
                assert_int_equal(mxp_set_isa(MXP_ISA_SCALAR), MXP_OK);
                assert_int_equal(mxp_convert(want, dt, src, st, n, &o), MXP_OK);
                for (int isa = MXP_ISA_AVX2; isa <= (int)mxp_isa_supported(); isa++) {
                    assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
                    assert_int_equal(mxp_convert(got, dt, src, st, n, &o), MXP_OK);
                    char what[256];
                    snprintf(what, sizeof what, "%s->%s %s/%s at %s (%s)", mxp_dtype_name(st), mxp_dtype_name(dt),
                             mxp_rounding_name((mxp_rounding)mode), mxp_overflow_name(o.overflow),
                             mxp_isa_name((mxp_isa)isa),
                             mxp_convert_kernel_name(dt, st, &o));
                    bad += compare(want, got, n, ds, what, bits);
                }
            }
        }
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
    if (bad)
        fail_msg("%zu results depend on the ISA level", bad);
}

static void test_every_required_pair_has_a_simd_kernel_here(void **state)
{
    (void)state;
    mxp_set_isa(MXP_ISA_COUNT - 1);
    if (mxp_isa_current() < MXP_ISA_AVX512) { /* the machine or MXP_ISA */
        print_message("skipped: needs AVX-512\n");
        skip();
    }
    const struct { mxp_dtype dst, src; } pairs[] = {
        { MXP_BF16, MXP_F32 }, { MXP_F32, MXP_BF16 }, { MXP_F16, MXP_F32 }, { MXP_F32, MXP_F16 },
        { MXP_BF16, MXP_F64 }, { MXP_F16, MXP_F64 }, { MXP_E4M3, MXP_F32 }, { MXP_F32, MXP_E4M3 },
        { MXP_E5M2, MXP_F32 }, { MXP_F32, MXP_E5M2 }, { MXP_S8, MXP_F32 },
    };
    mxp_set_isa(MXP_ISA_COUNT - 1);
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++) {
            mxp_convert_opts o = { .rounding = (mxp_rounding)mode, .overflow = MXP_OVERFLOW_INF, .seed = 0, .flags = NULL };
            const char *name = mxp_convert_kernel_name(pairs[i].dst, pairs[i].src, &o);
            if (!strcmp(name, "reference"))
                fail_msg("%s -> %s %s has no SIMD kernel", mxp_dtype_name(pairs[i].src),
                         mxp_dtype_name(pairs[i].dst), mxp_rounding_name((mxp_rounding)mode));
        }
    }
}

/* Issue 25's pairs at scale, at both tiers (AVX2 and the machine's top
 * level): float32, bfloat16 and float16 into every format added for it in
 * every mode, and every such format back into them in the deterministic
 * modes (widening: every mode's result is the same), each through a SIMD
 * kernel, two of them through float32, or a table kernel -- never the
 * reference converter alone. */
static void test_new_formats_have_simd_paths_at_both_tiers(void **state)
{
    (void)state;
    if (mxp_isa_supported() < MXP_ISA_AVX2) {
        print_message("skipped: needs AVX2\n");
        skip();
    }
    const mxp_dtype wide[] = { MXP_F32, MXP_BF16, MXP_F16 };
    const mxp_dtype formats[] = { MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ, MXP_E5M2FNUZ,
                                  MXP_E8M0, MXP_E2M3, MXP_E3M2, MXP_E2M1, MXP_S4, MXP_U4,
                                  MXP_S2, MXP_U2, MXP_S1, MXP_U1 };
    const mxp_isa levels[] = { MXP_ISA_AVX2, mxp_isa_supported() };
    size_t missing = 0;
    for (size_t l = 0; l < 2; l++) {
        assert_int_equal(mxp_set_isa(levels[l]), MXP_OK);
        for (size_t w = 0; w < 3; w++)
            for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
                for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++)
                    for (int back = 0; back < 2; back++) {
                        if (back && mode == MXP_ROUND_STOCHASTIC)
                            continue;
                        mxp_convert_opts o = { .rounding = (mxp_rounding)mode, .overflow = MXP_OVERFLOW_INF };
                        const mxp_dtype to = back ? wide[w] : formats[f], from = back ? formats[f] : wide[w];
                        if (strcmp(mxp_convert_kernel_name(to, from, &o), "reference") == 0 && missing++ < 8)
                            print_error("%s -> %s %s at %s: the reference converter only\n", mxp_dtype_name(from),
                                        mxp_dtype_name(to), mxp_rounding_name(o.rounding),
                                        mxp_isa_name(levels[l]));
                    }
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
    assert_int_equal(missing, 0);
}

/* Pairs without a kernel whose source float32 holds exactly run as two
 * kernels through float32, 8-bit sources through a table, 16-bit sources to
 * 8-bit and 16-bit types in one pass, stochastic rounding included (checked bit for bit by the tests
 * above and by test_convert_pairs). */
static void test_pairs_from_exact_sources_chain_two_kernels(void **state)
{
    (void)state;
    mxp_set_isa(MXP_ISA_COUNT - 1);
    if (mxp_get_isa() < MXP_ISA_AVX512) { /* the machine or MXP_ISA */
        print_message("skipped: needs AVX-512\n");
        skip();
    }
    const mxp_dtype srcs[] = { MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2, MXP_S8, MXP_U8 };
    const mxp_dtype dsts[] = { MXP_F64, MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2, MXP_S8 };
    mxp_set_isa(MXP_ISA_COUNT - 1);
    for (size_t a = 0; a < sizeof srcs / sizeof srcs[0]; a++)
        for (size_t b = 0; b < sizeof dsts / sizeof dsts[0]; b++) {
            if (srcs[a] == dsts[b])
                continue;
            for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++) {
                mxp_convert_opts o = { .rounding = (mxp_rounding)mode };
                const char *name = mxp_convert_kernel_name(dsts[b], srcs[a], &o);
                /* 8-bit to 8-bit, deterministic modes: a table instead;
                 * to 16-bit results and float64 too where the CPU has
                 * AVX512_VBMI */
                const int vbmi = (mxp_cpu_features() & MXP_CPU_AVX512VBMI) != 0;
                const size_t ds = mxp_dtype_itemsize(dsts[b]);
                /* integer into integer: no value rounds, every mode nearest even's path */
                const int int_pair = (srcs[a] == MXP_S8 || srcs[a] == MXP_U8) && dsts[b] == MXP_S8;
                const int table = mxp_dtype_itemsize(srcs[a]) == 1 && (ds == 1 || (ds >= 2 && vbmi)) &&
                                  (mode != MXP_ROUND_STOCHASTIC || int_pair);
                const char *table_name = ds == 8   ? "mxp_u8_lut_x64__avx512vbmi"
                                         : ds == 2 ? "mxp_u8_lut_x16__avx512vbmi"
                                         : vbmi  ? "mxp_u8_lut_x8__avx512vbmi"
                                                 : "mxp_u8_lut_x8__avx512f";
                /* 16-bit to 8-bit and 16-bit to 16-bit, deterministic
                 * modes: one pass (src/kernels/cvt-h16-avx512.h) */
                const int one_pass = mxp_dtype_itemsize(srcs[a]) == 2 && ds <= 2 && mode != MXP_ROUND_STOCHASTIC;
                /* stochastic rounding from 16-bit and 8-bit types to f16,
                 * float8, int8, and float16 -> bf16: one pass too
                 * (src/kernels/cvt-sr-avx512.h) */
                const int one_pass_sr = ds <= 2 && (dsts[b] != MXP_BF16 || srcs[a] == MXP_F16) &&
                                        mode == MXP_ROUND_STOCHASTIC && !int_pair;
                char one_pass_name[64];
                snprintf(one_pass_name, sizeof one_pass_name, "mxp_%s_%s_vcvt__avx512f%s",
                         mxp_dtype_get_traits(srcs[a])->short_name, mxp_dtype_get_traits(dsts[b])->short_name,
                         one_pass_sr ? "_sr" : "");
                /* bfloat16/float16 -> float8_e4m3fn, bfloat16 -> float8_e5m2 in
                 * the sign-symmetric modes: the byte-lane tables where the CPU
                 * has AVX512_VBMI (convert-x16-lut.c) */
                const int sym = mode == MXP_ROUND_NEAREST_EVEN || mode == MXP_ROUND_NEAREST_AWAY ||
                                mode == MXP_ROUND_TOWARD_ZERO;
                const int lanes = vbmi && sym && (srcs[a] == MXP_BF16 || srcs[a] == MXP_F16) &&
                                  (dsts[b] == MXP_E4M3 || (dsts[b] == MXP_E5M2 && srcs[a] == MXP_BF16));
                /* 8-bit types -> bfloat16, stochastic rounding (exact: any
                 * mode's bits): the byte formats' kernel (cvt-byte-widen-avx2.h) */
                const int byte_sr = mxp_dtype_itemsize(srcs[a]) == 1 && dsts[b] == MXP_BF16 &&
                                    mode == MXP_ROUND_STOCHASTIC;
                char byte_name[64];
                snprintf(byte_name, sizeof byte_name, "mxp_%s_bf16_vcvt__avx2",
                         mxp_dtype_get_traits(srcs[a])->short_name);
                if (byte_sr ? strcmp(name, byte_name) != 0
                    : lanes ? strcmp(name, "mxp_x16_lut_x8__avx512vbmi") != 0
                    : one_pass || one_pass_sr ? strcmp(name, one_pass_name) != 0
                    : table                   ? strcmp(name, table_name) != 0
                                              : !strchr(name, '+'))
                    fail_msg("%s -> %s %s: %s, not two kernels", mxp_dtype_name(srcs[a]), mxp_dtype_name(dsts[b]),
                             mxp_rounding_name((mxp_rounding)mode), name);
            }
            mxp_convert_flags f = { 0 };
            mxp_convert_opts counted = { .flags = &f };
            assert_string_equal(mxp_convert_kernel_name(dsts[b], srcs[a], &counted), "reference");
        }
    mxp_convert_opts o = { 0 };
    /* int32 does not fit float32: through float64 (exact) and its kernel (convert-route.c) */
    assert_true(strncmp(mxp_convert_kernel_name(MXP_BF16, MXP_S32, &o), "float64 loop+mxp_f64_bf16_vcvt__", 32) == 0);
}

/* The byte table lookup against its twin: random tables, every length to
 * 200 and long ones, offsets, in place, nothing written past the end. */
static void test_lut8_kernel_matches_its_twin(void **state)
{
    (void)state;
    const char *name = NULL;
    mxp_cvt_lut8_fn fn = mxp_cvt_find_lut8(mxp_isa_supported(), &name);
    if (!fn) {
        print_message("skipped: no table-lookup kernel at this level\n");
        skip();
    }
    uint8_t table[256];
    uint64_t rng = 77;
    size_t bad = 0;
    for (int t = 0; t < 4; t++) {
        for (int i = 0; i < 256; i++)
            table[i] = t == 0 ? (uint8_t)(255 - i) : (uint8_t)cases_rand64(&rng);
        for (size_t i = 0; i < 70000; i++)
            src[i] = (unsigned char)cases_rand64(&rng);
        for (size_t len = 0; len < 70000; len = len < 200 ? len + 1 : len * 3 + 17) {
            size_t off = len % 13;
            mxp_lut8_ref(want, src + off, len, table);
            memset(got, 0xa5, len + 64);
            fn(got, src + off, len, table);
            bad += memcmp(want, got, len) != 0;
            for (size_t i = len; i < len + 64; i++)
                bad += got[i] != 0xa5;
        }
        /* the streaming path: 4 MiB moved, destination off alignment */
        enum { BIG = (2 << 20) + 77 };
        unsigned char *in = malloc(BIG), *a = malloc(BIG + 1), *b = malloc(BIG + 1);
        assert_non_null(in);
        assert_non_null(a);
        assert_non_null(b);
        for (size_t i = 0; i < BIG; i++)
            in[i] = (unsigned char)cases_rand64(&rng);
        mxp_lut8_ref(a + 1, in, BIG, table);
        fn(b + 1, in, BIG, table);
        bad += memcmp(a + 1, b + 1, BIG) != 0;
        free(in);
        free(a);
        free(b);
        memcpy(got, src, 70000); /* in place */
        fn(got, got, 70000, table);
        mxp_lut8_ref(want, src, 70000, table);
        bad += memcmp(want, got, 70000) != 0;
    }
    print_message("%s checked\n", name);
    assert_int_equal(bad, 0);
}

/* 8-bit to 8-bit arrays long enough for the table: mxp_convert's bits at
 * the top level equal the scalar level's, every deterministic mode, both
 * overflow policies. */
static void test_table_pairs_through_mxp_convert(void **state)
{
    (void)state;
    enum { N = 40000 };
    const mxp_dtype types[] = { MXP_E4M3, MXP_E5M2, MXP_S8, MXP_U8, MXP_BOOL };
    uint64_t rng = 5;
    for (size_t i = 0; i < N; i++)
        src[i] = (unsigned char)cases_rand64(&rng);
    size_t bad = 0;
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++)
            for (int mode = 0; mode < MXP_ROUND_STOCHASTIC; mode++)
                for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
                    mxp_convert_opts o = { .rounding = (mxp_rounding)mode, .overflow = (mxp_overflow)ov };
                    assert_int_equal(mxp_set_isa(MXP_ISA_SCALAR), MXP_OK);
                    assert_int_equal(mxp_convert(want, types[b], src, types[a], N, &o), MXP_OK);
                    mxp_set_isa(MXP_ISA_COUNT - 1);
                    assert_int_equal(mxp_convert(got, types[b], src, types[a], N, &o), MXP_OK);
                    if (memcmp(want, got, N) != 0 && bad++ < 8)
                        print_error("%s -> %s %s/%s (%s) differs from the reference\n", mxp_dtype_name(types[a]),
                                    mxp_dtype_name(types[b]), mxp_rounding_name(o.rounding),
                                    mxp_overflow_name(o.overflow), mxp_convert_kernel_name(types[b], types[a], &o));
                }
    assert_int_equal(bad, 0);
}

/* Every 8-bit source type (float8/6/4, the integers, bool) into every
 * 8-bit type and into float32, bfloat16, float16 and float64, through
 * mxp_convert at each SIMD level the machine has, against the scalar
 * level's results: long enough (LUT_MIN elements) for the table kernels
 * (the AVX2 gathers included, and float8_e4m3fn -> float32's table at
 * AVX2, convert.c's table_beats), every deterministic mode, both
 * overflow policies. */
static void test_8bit_sources_through_mxp_convert_at_every_level(void **state)
{
    (void)state;
    enum { N = 32768 + 77 };
    uint64_t rng = 11;
    for (size_t i = 0; i < N; i++)
        src[i] = (unsigned char)cases_rand64(&rng);
    size_t bad = 0, runs = 0;
    for (int a = 1; a < MXP_DTYPE_COUNT; a++) {
        if (mxp_dtype_itemsize((mxp_dtype)a) != 1)
            continue;
        for (int b = 1; b < MXP_DTYPE_COUNT; b++) {
            const size_t ds = mxp_dtype_itemsize((mxp_dtype)b);
            if (ds != 1 && b != MXP_F32 && b != MXP_BF16 && b != MXP_F16 && b != MXP_F64)
                continue;
            for (int mode = 0; mode < MXP_ROUND_STOCHASTIC; mode++)
                for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
                    mxp_convert_opts o = { .rounding = (mxp_rounding)mode, .overflow = (mxp_overflow)ov };
                    assert_int_equal(mxp_set_isa(MXP_ISA_SCALAR), MXP_OK);
                    if (mxp_convert(want, (mxp_dtype)b, src, (mxp_dtype)a, N, &o) != MXP_OK)
                        continue;
                    for (int isa = MXP_ISA_SCALAR + 1; isa <= (int)mxp_isa_supported(); isa++) {
                        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
                        assert_int_equal(mxp_convert(got, (mxp_dtype)b, src, (mxp_dtype)a, N, &o), MXP_OK);
                        runs++;
                        if (memcmp(want, got, N * ds) != 0 && bad++ < 8)
                            print_error("%s -> %s %s/%s at %s (%s) differs from the scalar level\n",
                                        mxp_dtype_name((mxp_dtype)a), mxp_dtype_name((mxp_dtype)b),
                                        mxp_rounding_name(o.rounding), mxp_overflow_name(o.overflow),
                                        mxp_isa_name((mxp_isa)isa),
                                        mxp_convert_kernel_name((mxp_dtype)b, (mxp_dtype)a, &o));
                    }
                }
        }
    }
    mxp_set_isa(MXP_ISA_COUNT - 1);
    print_message("%zu conversions compared\n", runs);
    assert_true(runs > 0);
    assert_int_equal(bad, 0);
}

/* This file's own expansion of src/kernels/cvt-list.inc (built with the
 * library's MXP_HAVE_X86_KERNELS): the table the tests above walk holds
 * every line of the list, in order, and nothing else, so every listed
 * kernel is checked against the reference. */
static const mxp_cvt_kernel listed[] = {
#define MXP_CVT_KERNEL(dst, src, isa, modes, fname) { dst, src, isa, modes, fname, #fname },
#include "kernels/cvt-list.inc"
#undef MXP_CVT_KERNEL
    { MXP_DTYPE_INVALID, MXP_DTYPE_INVALID, MXP_ISA_SCALAR, 0, NULL, NULL },
};

static void test_the_table_is_the_kernel_list(void **state)
{
    (void)state;
    size_t count;
    const mxp_cvt_kernel *ks = mxp_cvt_kernels(&count);
    assert_int_equal(count, sizeof listed / sizeof listed[0] - 1);
    for (size_t i = 0; i < count; i++) {
        assert_string_equal(ks[i].name, listed[i].name);
        assert_ptr_equal(ks[i].fn, listed[i].fn);
        assert_int_equal(ks[i].dst, listed[i].dst);
        assert_int_equal(ks[i].src, listed[i].src);
        assert_int_equal(ks[i].isa, listed[i].isa);
        assert_int_equal(ks[i].modes, listed[i].modes);
        /* the name is the layout: mxp_<src>_<dst>_vcvt__... converts src to dst */
        char prefix[64];
        snprintf(prefix, sizeof prefix, "mxp_%s_%s_vcvt__", mxp_dtype_get_traits(ks[i].src)->short_name,
                 mxp_dtype_get_traits(ks[i].dst)->short_name);
        if (strncmp(ks[i].name, prefix, strlen(prefix)) != 0)
            fail_msg("%s converts %s to %s", ks[i].name, mxp_dtype_name(ks[i].src), mxp_dtype_name(ks[i].dst));
    }
    print_message("%zu kernels listed\n", count);
}

static const mxp_cvt_kernel *kernel_named(const char *name)
{
    size_t count;
    const mxp_cvt_kernel *ks = mxp_cvt_kernels(&count);
    for (size_t i = 0; i < count; i++)
        if (!strcmp(ks[i].name, name))
            return &ks[i];
    return NULL;
}

/* Where kernels give the same bits, the choice follows the CPU family:
 * on Zen 4 the AVX-512F float32 -> bfloat16 kernel beats vcvtne2ps2bf16. */
static void test_kernel_choice_follows_the_cpu_family(void **state)
{
    (void)state;
    const mxp_cvt_kernel *avx2 = kernel_named("mxp_f32_bf16_vcvt__avx2");
    const mxp_cvt_kernel *bf16 = kernel_named("mxp_f32_bf16_vcvt__avx512bf16");
    const mxp_cvt_kernel *f = kernel_named("mxp_f32_bf16_vcvt__avx512f");
    if (!avx2 || !bf16 || !f) {
        print_message("skipped: no x86 kernels in this build\n");
        skip();
    }
    const mxp_isa top = MXP_ISA_AVX512BF16;
    for (int u = 0; u < MXP_UARCH_COUNT; u++) {
        const mxp_cvt_kernel *rne = u == MXP_UARCH_ZEN4 || u == MXP_UARCH_ZEN5 ? f : bf16;
        assert_ptr_equal(mxp_cvt_find_for(MXP_BF16, MXP_F32, MXP_ROUND_NEAREST_EVEN, top, u), rne);
        /* a mode the preferred kernel lacks: the highest level that has it */
        assert_ptr_equal(mxp_cvt_find_for(MXP_BF16, MXP_F32, MXP_ROUND_TOWARD_ZERO, top, u), f);
        assert_ptr_equal(mxp_cvt_find_for(MXP_BF16, MXP_F32, MXP_ROUND_NEAREST_EVEN, MXP_ISA_AVX512, u), f);
        assert_ptr_equal(mxp_cvt_find_for(MXP_BF16, MXP_F32, MXP_ROUND_NEAREST_EVEN, MXP_ISA_AVX2, u), avx2);
        assert_null(mxp_cvt_find_for(MXP_BF16, MXP_F32, MXP_ROUND_NEAREST_EVEN, MXP_ISA_SCALAR, u));
    }
    /* The dispatch uses this machine's family. */
    const mxp_uarch here = mxp_cpu_uarch_id();
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++)
        for (int m = 0; m < MXP_ROUNDING_COUNT; m++)
            assert_ptr_equal(mxp_cvt_find(MXP_BF16, MXP_F32, (mxp_rounding)m, (mxp_isa)isa),
                             mxp_cvt_find_for(MXP_BF16, MXP_F32, (mxp_rounding)m, (mxp_isa)isa, here));
    assert_int_equal(mxp_cvt_is_preferred(f), here == MXP_UARCH_ZEN4 || here == MXP_UARCH_ZEN5);
    assert_false(mxp_cvt_is_preferred(bf16));
    assert_false(mxp_cvt_is_preferred(avx2));
}

static int setup(void **state)
{
    (void)state;
    bits = malloc(CAP * sizeof *bits);
    src = malloc(CAP * 8 + 64);
    want = malloc(CAP * 8 + 64);
    got = malloc(CAP * 8 + 64);
    return !bits || !src || !want || !got;
}

static int teardown(void **state)
{
    (void)state;
    free(bits);
    free(src);
    free(want);
    free(got);
    return 0;
}

int main(void)
{
    /* the sizes here were chosen for streaming stores from 4 MiB moved: pinned,
       so that the streaming paths are covered whatever the machine's L3 */
    mxp_set_stream_threshold(4u << 20);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_table_is_the_kernel_list),
        cmocka_unit_test(test_every_kernel_matches_reference_bit_for_bit),
        cmocka_unit_test(test_every_kernel_ignores_mxcsr_ftz_daz),
        cmocka_unit_test(test_mxp_convert_gives_same_bits_at_every_isa_level),
        cmocka_unit_test(test_every_required_pair_has_a_simd_kernel_here),
        cmocka_unit_test(test_new_formats_have_simd_paths_at_both_tiers),
        cmocka_unit_test(test_kernel_choice_follows_the_cpu_family),
        cmocka_unit_test(test_pairs_from_exact_sources_chain_two_kernels),
        cmocka_unit_test(test_lut8_kernel_matches_its_twin),
        cmocka_unit_test(test_table_pairs_through_mxp_convert),
        cmocka_unit_test(test_8bit_sources_through_mxp_convert_at_every_level),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
