/* Conversions from 16-bit and 8-bit sources, exhaustively: all 65,536
 * bfloat16/float16 patterns and all 256 patterns of each 8-bit type, to
 * every other type, every mode, both overflow policies, bit for bit against
 * the reference converter.  Through each one-pass kernel directly, through
 * the table-lookup kernels (vpshufb and, where the CPU has AVX512_VBMI,
 * vpermi2b: to 8-bit, 16-bit and float64 results) directly, and through mxp_convert at the level in use (ctest
 * runs this file capped at each level), with unaligned starts and tails. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "kernels/cvt-kernels.h"
#include "kernels/u8-lut-kernels.h"
#include "mxp.h"

/* 8-bit inputs repeat to this length, past the tables' threshold
 * (LUT_MIN in convert.c) and odd. */
enum { N8 = 40000 + 37, N16 = 1 << 16, OFF = 3, CAP = (N16 + 64) * 8 };

/* The x86 build has the table kernels (src/kernels/u8-lut). */
#if defined(__x86_64__) || defined(__amd64__)
#define HAVE_TABLE_KERNELS 1
#else
#define HAVE_TABLE_KERNELS 0
#endif

static const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2, MXP_S8, MXP_U8,
                                   /* the types of 0.2: tables from and (float32) through bfloat16 */
                                   MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ, MXP_E5M2FNUZ, MXP_E8M0,
                                   MXP_E2M3, MXP_E3M2, MXP_E2M1, MXP_S4, MXP_U4, MXP_U1 };
enum { NTYPES = sizeof types / sizeof types[0] };

static unsigned char *src, *want, *got;

/* Every pattern of an 8-bit or 16-bit source, starting at src + OFF
 * elements (an unaligned start); the count. */
static size_t fill(mxp_dtype t)
{
    const size_t ss = mxp_dtype_itemsize(t);
    const size_t n = ss == 1 ? N8 : N16;
    for (size_t i = 0; i < n; i++) {
        const uint16_t v = (uint16_t)(ss == 1 ? (i * 167) & 0xff : i);
        memcpy(src + (OFF + i) * ss, &v, ss);
    }
    return n;
}

static size_t compare(const unsigned char *a, const unsigned char *b, size_t n, size_t size, const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = 0, y = 0;
        memcpy(&x, a + i * size, size);
        memcpy(&y, b + i * size, size);
        if (x != y && bad++ < 4)
            print_error("%s: element %zu: 0x%llx, reference 0x%llx\n", what, i, (unsigned long long)y,
                        (unsigned long long)x);
    }
    return bad;
}

/* f(got + OFF elements, ...) against the reference, whole and in short
 * pieces at odd offsets (the masked heads and tails), nothing written past
 * the end. */
typedef void (*run_fn)(void *ctx, void *dst, const void *src, size_t n, const mxp_cvt_params *p);

static size_t check(run_fn f, void *ctx, mxp_dtype dt, mxp_dtype st, size_t n, const mxp_cvt_params *p,
                    const char *what)
{
    const size_t ss = mxp_dtype_itemsize(st), ds = mxp_dtype_itemsize(dt);
    const unsigned char *in = src + OFF * ss;
    mxp_cvt_params q = *p;
    mxp_convert_ref(want, dt, in, st, n, &q);
    memset(got, 0xa5, (n + OFF) * ds + 64);
    f(ctx, got + OFF * ds, in, n, &q);
    size_t bad = compare(want, got + OFF * ds, n, ds, what);
    for (size_t i = 0; i < OFF * ds; i++)
        bad += got[i] != 0xa5;
    for (size_t i = (n + OFF) * ds; i < (n + OFF) * ds + 64; i++)
        bad += got[i] != 0xa5;
    for (size_t len = 1, off = 1; len < 200 && off + len <= n; len += 13, off += 7) {
        q.index0 = p->index0 + off;
        mxp_convert_ref(want, dt, in + off * ss, st, len, &q);
        memset(got, 0xa5, len * ds + 64);
        f(ctx, got + 1, in + off * ss, len, &q);
        bad += compare(want, got + 1, len, ds, what);
        bad += got[0] != 0xa5 || got[len * ds + 1] != 0xa5;
    }
    return bad;
}

static void run_kernel(void *ctx, void *dst, const void *s, size_t n, const mxp_cvt_params *p)
{
    ((const mxp_cvt_kernel *)ctx)->fn(dst, s, n, p);
}

/* Every kernel from an 8-bit or 16-bit source, every input pattern. */
static void test_one_pass_kernels_on_every_16bit_and_8bit_input(void **state)
{
    (void)state;
    size_t count, tested = 0, bad = 0;
    const mxp_cvt_kernel *ks = mxp_cvt_kernels(&count);
    for (size_t i = 0; i < count; i++) {
        const mxp_cvt_kernel *k = &ks[i];
        if (mxp_dtype_itemsize(k->src) > 2 || k->isa > mxp_isa_current())
            continue;
        const size_t n = fill(k->src);
        for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++) {
            if (!(k->modes >> mode & 1u))
                continue;
            /* stochastic rounding: three streams (seed, first index within
             * one 2^32-index block, as mxp_convert calls kernels) */
            static const uint64_t seeds[3] = { 42, 0x9e3779b97f4a7c15ull, 7 };
            static const uint64_t starts[3] = { 0, 123456789, (5ull << 32) + 4000000000ull };
            const int streams = mode == MXP_ROUND_STOCHASTIC ? 3 : 1;
            for (int sidx = 0; sidx < streams; sidx++)
                for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
                    mxp_cvt_params p = { (mxp_rounding)mode, (mxp_overflow)ov, seeds[sidx], starts[sidx], NULL };
                    char what[160];
                    snprintf(what, sizeof what, "%s %s/%s seed %d", k->name, mxp_rounding_name(p.rounding),
                             mxp_overflow_name(p.overflow), sidx);
                    bad += check(run_kernel, (void *)k, k->dst, k->src, n, &p, what);
                }
        }
        tested++;
    }
    print_message("%zu kernels from 8-bit and 16-bit sources checked at %s\n", tested,
                  mxp_isa_name(mxp_isa_current()));
    assert_int_equal(bad, 0);
}

typedef struct lut_ctx {
    mxp_u8_lut_x8_ukernel *to8;
    mxp_u8_lut_x16_ukernel *to16;
    mxp_u8_lut_x64_ukernel *to64;
    mxp_dtype dt, st;
} lut_ctx;

static void run_lut(void *ctx, void *dst, const void *s, size_t n, const mxp_cvt_params *p)
{
    const lut_ctx *c = ctx;
    uint8_t all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    _Alignas(8) unsigned char table[2048];
    mxp_convert_ref(table, c->dt, all, c->st, 256, p);
    if (c->to8)
        c->to8(dst, s, n, table);
    else if (c->to16)
        c->to16(dst, s, n, (const uint16_t *)(const void *)table);
    else
        c->to64(dst, s, n, (const uint64_t *)(const void *)table);
}

/* Both byte-table kernels and the 16-bit one, each named, on tables the
 * reference fills: every 8-bit pair, every deterministic mode. */
static void test_table_kernels_on_every_8bit_input(void **state)
{
    (void)state;
    if (mxp_isa_current() < MXP_ISA_AVX512 || !HAVE_TABLE_KERNELS) {
        print_message("skipped: the table kernels need AVX-512\n");
        skip();
    }
#if HAVE_TABLE_KERNELS
    if (!(mxp_cpu_features() & MXP_CPU_AVX512VBMI))
        print_message("the vpermi2b kernels skipped: this CPU lacks AVX512_VBMI\n");
    size_t nk, bad = 0, runs = 0;
    const mxp_kernel *ks = mxp_cvt_lut_kernels(&nk); /* src/kernels/u8-lut-list.inc */
    for (size_t a = 0; a < NTYPES; a++) {
        if (mxp_dtype_itemsize(types[a]) != 1)
            continue;
        const size_t n = fill(types[a]);
        for (size_t b = 0; b < NTYPES; b++) {
            const size_t ds = mxp_dtype_itemsize(types[b]);
            if (a == b || (ds > 2 && types[b] != MXP_F64))
                continue;
            for (size_t r = 0; r < nk; r++) {
                if (!mxp_kernel_runs(&ks[r], mxp_isa_current()) || (size_t)ks[r].param != 8 * ds)
                    continue;
                lut_ctx c = { NULL, NULL, NULL, types[b], types[a] };
                if (ds == 1)
                    c.to8 = (mxp_u8_lut_x8_ukernel *)ks[r].fn;
                else if (ds == 2)
                    c.to16 = (mxp_u8_lut_x16_ukernel *)ks[r].fn;
                else
                    c.to64 = (mxp_u8_lut_x64_ukernel *)ks[r].fn;
                for (int mode = 0; mode < MXP_ROUND_STOCHASTIC; mode++)
                    for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
                        mxp_cvt_params p = { (mxp_rounding)mode, (mxp_overflow)ov, 0, 0, NULL };
                        /* float64 max (a saturated infinity) has low bits: no table */
                        if (c.to64 && ov == MXP_OVERFLOW_SATURATE && mxp_dtype_get_traits(types[a])->has_inf)
                            continue;
                        char what[160];
                        snprintf(what, sizeof what, "%s %s->%s %s/%s", ks[r].name, mxp_dtype_name(types[a]),
                                 mxp_dtype_name(types[b]), mxp_rounding_name(p.rounding),
                                 mxp_overflow_name(p.overflow));
                        bad += check(run_lut, &c, types[b], types[a], n, &p, what);
                        runs++;
                    }
            }
        }
    }
    print_message("%zu table runs checked\n", runs);
    assert_int_equal(bad, 0);
#endif
}

static void run_convert(void *ctx, void *dst, const void *s, size_t n, const mxp_cvt_params *p)
{
    const lut_ctx *c = ctx;
    mxp_convert_opts o = { .rounding = p->rounding, .overflow = p->overflow, .seed = p->seed,
                           .index_offset = p->index0 };
    assert_int_equal(mxp_convert(dst, c->dt, s, c->st, n, &o), MXP_OK);
}

/* mxp_convert of the n inputs at src (type st) into dt, every mode
 * (stochastic too) and both policies, at the level in use, against the
 * reference: the count of mismatches. */
static size_t check_every_mode(mxp_dtype dt, mxp_dtype st, size_t n)
{
    size_t bad = 0;
    lut_ctx c = { NULL, NULL, NULL, dt, st };
    for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++)
        for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
            mxp_cvt_params p = { (mxp_rounding)mode, (mxp_overflow)ov, 7, 1000, NULL };
            mxp_convert_opts o = { .rounding = p.rounding, .overflow = p.overflow };
            char what[200];
            snprintf(what, sizeof what, "%s->%s %s/%s at %s (%s)", mxp_dtype_name(st), mxp_dtype_name(dt),
                     mxp_rounding_name(p.rounding), mxp_overflow_name(p.overflow), mxp_isa_name(mxp_isa_current()),
                     mxp_convert_kernel_name(dt, st, &o));
            bad += check(run_convert, &c, dt, st, n, &p, what);
        }
    return bad;
}

/* mxp_convert from every 16-bit and 8-bit pattern to every other type,
 * every mode (stochastic too), both policies, at the level in use; and
 * with counters (the reference path), the same bits. */
static void test_mxp_convert_on_every_16bit_and_8bit_input(void **state)
{
    (void)state;
    size_t bad = 0;
    for (size_t a = 0; a < NTYPES; a++) {
        if (mxp_dtype_itemsize(types[a]) > 2)
            continue;
        const size_t n = fill(types[a]);
        for (size_t b = 0; b < NTYPES; b++) {
            if (a == b)
                continue;
            bad += check_every_mode(types[b], types[a], n);
            /* counters: the reference path, the same bits */
            mxp_convert_flags f = { 0 };
            mxp_convert_opts o = { .flags = &f };
            const size_t ds = mxp_dtype_itemsize(types[b]), ss = mxp_dtype_itemsize(types[a]);
            assert_int_equal(mxp_convert(got, types[b], src + OFF * ss, types[a], n, &o), MXP_OK);
            mxp_cvt_params p = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL };
            mxp_convert_ref(want, types[b], src + OFF * ss, types[a], n, &p);
            bad += compare(want, got, n, ds, "with counters");
        }
    }
    assert_int_equal(bad, 0);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* float64 inputs where a rounding through float32 could go wrong, for a
 * target t: every value of t, every midpoint between neighbours and the
 * doubles a few ulps and 2^-30 (relative, below float32's ulp) either
 * side of each, with both signs; the extremes and specials around them;
 * random patterns.  Returns the count written to s (as doubles). */
static size_t fill_f64(mxp_dtype t)
{
    double *d = (double *)(void *)(src + OFF * 8), vals[256];
    size_t nv = 0, n = 0;
    if (mxp_dtype_itemsize(t) == 1) {
        uint8_t all[256];
        for (int i = 0; i < 256; i++)
            all[i] = (uint8_t)i;
        const mxp_cvt_params p = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL };
        mxp_convert_ref(vals, MXP_F64, all, t, 256, &p); /* exact */
        for (int i = 0; i < 256; i++)
            if (isfinite(vals[i]) && vals[i] >= 0)
                vals[nv++] = vals[i];
        qsort(vals, nv, sizeof vals[0], cmp_double);
    }
    for (size_t i = 0; i < nv; i++) {
        const double v = vals[i], mid = i + 1 < nv ? 0.5 * (v + vals[i + 1]) : 2 * v + 1;
        const double around[] = { v, mid, nextafter(mid, 0), nextafter(mid, INFINITY),
                                  nextafter(nextafter(mid, INFINITY), INFINITY), mid * (1 + 0x1p-30),
                                  mid * (1 - 0x1p-30), nextafter(v, INFINITY), nextafter(v, 0) };
        for (size_t k = 0; k < sizeof around / sizeof around[0]; k++) {
            d[n++] = around[k];
            d[n++] = -around[k];
        }
    }
    const double specials[] = { 0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e300, -1e300, 1e-300, -1e-300,
                                0x1p-1074, 0x1p-149, 0x1.8p-149, 0x1p-150, 0x1.fffffep127, 0x1.fffffe8p127,
                                0x1p128, 0x1p-126, 0x1p-127, 0x1.8p-127, 0x1p127, 0x1.7p127, 65504.0, 65520.0 };
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
        d[n++] = specials[k];
    uint64_t rng = 0x5eed5eed12345ull;
    for (int k = 0; k < 4000; k++) { /* random patterns, exponents near the targets' and everywhere */
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t b = rng ^ (rng >> 29);
        if (k % 2)
            b = (b & 0x800fffffffffffffull) | (uint64_t)(1023 - 20 + (int)((rng >> 40) % 40)) << 52;
        memcpy(&d[n++], &b, 8);
    }
    return n;
}

/* float64 into every 8-bit and sub-byte type (and bfloat16, float16),
 * every mode and policy, through mxp_convert at the level in use: the
 * pairs without a kernel run float64 -> float32 rounded to odd, then the
 * float32 kernel (src/convert/convert.c, odd_chain_run); one rounding. */
static void test_float64_sources_round_once(void **state)
{
    (void)state;
    size_t bad = 0;
    for (size_t b = 0; b < NTYPES; b++) {
        if (mxp_dtype_itemsize(types[b]) > 2)
            continue;
        bad += check_every_mode(types[b], MXP_F64, fill_f64(types[b]));
    }
    assert_int_equal(bad, 0);
}

/* Values of the wide integer type t: every int16/uint16; for 32 and 64
 * bits 0, +-2^k + {-3 .. 3} (ties of float32, bfloat16, float16 and the
 * float8s among them) and random values of every width; 64-bit values
 * beyond 2^53 only in the last 1024 (the converter's block: the earlier
 * blocks take the float64 path).  Returns the count written at src + OFF. */
static size_t fill_wide(mxp_dtype t)
{
    const size_t size = mxp_dtype_itemsize(t);
    unsigned char *d = src + OFF * size;
    size_t n = 0;
    if (size == 2) {
        for (uint32_t v = 0; v < 65536; v++, n++)
            memcpy(d + n * 2, &v, 2); /* little-endian: the low bytes */
        return n;
    }
    const int bits = (int)size * 8, sgn = t == MXP_S32 || t == MXP_S64;
    uint64_t rng = 0xfeedbeef1234ull, big[600];
    size_t nb = 0;
    for (int k = 0; k < bits; k++)
        for (int o = -3; o <= 3; o++)
            for (int neg = 0; neg <= sgn; neg++) {
                uint64_t v = (k ? 1ull << k : 0) + (uint64_t)(int64_t)o;
                v = neg ? 0 - v : v;
                if (size == 4)
                    v &= 0xffffffffu;
                const bool far = size == 8 && (sgn ? ((uint64_t)v + (1ull << 53)) > (1ull << 54) : v > (1ull << 53));
                if (far)
                    big[nb++] = v;
                else
                    memcpy(d + n++ * size, &v, size);
            }
    for (int i = 0; i < 20000; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        const int w = (int)(rng >> 58) % (size == 8 ? 53 : bits) + 1; /* within 2^53 here */
        uint64_t v = (rng >> 3) & (w == 64 ? ~0ull : (1ull << w) - 1);
        if (sgn && (rng & 4))
            v = 0 - v;
        memcpy(d + n++ * size, &v, size);
    }
    n = (n + 1023) / 1024 * 1024; /* the far ones in a block of their own (padding: zeros) */
    memset(d + (n - 1) * size, 0, size);
    for (size_t i = 0; i < nb; i++)
        memcpy(d + n++ * size, &big[i], size);
    return n;
}

/* The wide integers (int16 .. uint64) into every float, 8-bit and
 * sub-byte type, every mode and policy, through mxp_convert at the level
 * in use: widened to float64 by a loop, then the float64 kernel (or the
 * odd chain); 64-bit blocks beyond 2^53 by the reference converter; and
 * into each other (a saturating loop). */
static void test_wide_integer_sources(void **state)
{
    (void)state;
    const mxp_dtype wides[] = { MXP_S16, MXP_U16, MXP_S32, MXP_U32, MXP_S64, MXP_U64 };
    size_t bad = 0;
    for (size_t a = 0; a < sizeof wides / sizeof wides[0]; a++) {
        memset(src, 0, CAP);
        const size_t n = fill_wide(wides[a]);
        for (size_t b = 0; b < NTYPES + sizeof wides / sizeof wides[0]; b++) { /* every type, then each wide one */
            const mxp_dtype to = b < NTYPES ? types[b] : wides[b - NTYPES];
            if (to == wides[a])
                continue;
            bad += check_every_mode(to, wides[a], n);
        }
    }
    assert_int_equal(bad, 0);
}

/* float32/float64 values where rounding to an integer and saturating can
 * go wrong: k + {0, +-1/4, +-1/2, +-3/4} and the neighbours of k +- 1/2
 * for small k and around every power of two to 2^65, both signs; NaN,
 * infinities, zeros, subnormals; random patterns. */
static size_t fill_float_to_int(mxp_dtype t)
{
    const size_t size = mxp_dtype_itemsize(t);
    unsigned char *d = src + OFF * size;
    size_t n = 0;
    double vals[4096];
    size_t nv = 0;
    for (int k = -40; k <= 40; k++)
        vals[nv++] = k;
    for (int e = 1; e <= 65; e++)
        for (int o = -2; o <= 2; o++)
            vals[nv++] = ldexp(1.0, e) + o;
    const double fr[] = { 0.0, 0.25, 0.5, 0.75, -0.25, -0.5, -0.75 };
    double all[10000]; /* 406 values x 2 signs x 11, the specials */
    size_t na = 0;
    for (size_t i = 0; i < nv; i++)
        for (int sgn = 0; sgn < 2; sgn++)
            for (size_t f = 0; f < sizeof fr / sizeof fr[0]; f++) {
                const double x = (sgn ? -1 : 1) * (vals[i] + fr[f]);
                all[na++] = x;
                if (fr[f] == 0.5 || fr[f] == -0.5) {
                    all[na++] = nextafter(x, INFINITY);
                    all[na++] = nextafter(x, -INFINITY);
                }
            }
    const double sp[] = { NAN, -NAN, INFINITY, -INFINITY, 0.0, -0.0, 0x1p-1074, -0x1p-149, 1e300, -1e300 };
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
        all[na++] = sp[i];
    for (size_t i = 0; i < na; i++) {
        if (size == 8) {
            memcpy(d + n++ * 8, &all[i], 8);
        } else {
            const float f = (float)all[i];
            memcpy(d + n++ * 4, &f, 4);
        }
    }
    uint64_t rng = 0xabcdef987ull;
    for (int i = 0; i < 5000; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        const uint64_t b = rng ^ (rng >> 31);
        memcpy(d + n++ * size, &b, size);
    }
    return n;
}

/* Every float, 8-bit and sub-byte type into the wide integers, every
 * deterministic mode (stochastic too: the reference) and policy, through
 * mxp_convert at the level in use: widened to float64, rounded by the
 * mode, saturated (convert.c's to_wide_run). */
static void test_into_wide_integers(void **state)
{
    (void)state;
    const mxp_dtype wides[] = { MXP_S16, MXP_U16, MXP_S32, MXP_U32, MXP_S64, MXP_U64 };
    size_t bad = 0;
    for (size_t a = 0; a < NTYPES; a++) {
        const size_t n = mxp_dtype_itemsize(types[a]) > 2 ? fill_float_to_int(types[a]) : fill(types[a]);
        for (size_t b = 0; b < sizeof wides / sizeof wides[0]; b++)
            bad += check_every_mode(wides[b], types[a], n);
    }
    assert_int_equal(bad, 0);
}

/* bool from the IEEE float types and the wide integers, and into the wide
 * integers (convert-route.c's loops), against the reference: every 16-bit
 * and 8-bit pattern, the float32/float64 and wide-integer values above
 * (zeros of both signs, NaNs among them). */
static void test_bool_with_floats_and_wide_integers(void **state)
{
    (void)state;
    const mxp_dtype srcs[] = { MXP_F64, MXP_F32, MXP_BF16, MXP_F16, MXP_S16, MXP_U16, MXP_S32, MXP_U32, MXP_S64,
                               MXP_U64, MXP_BOOL };
    const mxp_dtype wides[] = { MXP_S16, MXP_U16, MXP_S32, MXP_U32, MXP_S64, MXP_U64 };
    size_t bad = 0;
    for (size_t a = 0; a < sizeof srcs / sizeof srcs[0]; a++) {
        const mxp_dtype t = srcs[a];
        const size_t n = t == MXP_BOOL ? fill(MXP_U8)
                         : t == MXP_F64 || t == MXP_F32 ? fill_float_to_int(t)
                         : t == MXP_BF16 || t == MXP_F16 ? fill(t)
                                                         : (memset(src, 0, CAP), fill_wide(t));
        for (size_t b = 0; b < (t == MXP_BOOL ? sizeof wides / sizeof wides[0] : 1); b++) {
            const mxp_dtype to = t == MXP_BOOL ? wides[b] : MXP_BOOL;
            lut_ctx c = { NULL, NULL, NULL, to, t };
            mxp_cvt_params p = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 7, 1000, NULL };
            char what[200];
            snprintf(what, sizeof what, "%s->%s at %s (%s)", mxp_dtype_name(t), mxp_dtype_name(to),
                     mxp_isa_name(mxp_isa_current()), mxp_convert_kernel_name(to, t, NULL));
            bad += check(run_convert, &c, to, t, n, &p, what);
        }
    }
    assert_int_equal(bad, 0);
}

/* The pairs in which no value rounds (integer into integer, anything into
 * bool, bool into the floats): stochastic rounding runs
 * nearest even's path (mxp_cvt_effective_mode), named alike, and gives the
 * reference's bits in every mode (from the AVX2 level on, never by the
 * reference converter). */
static void test_rounding_free_pairs_take_nearest_even_paths(void **state)
{
    (void)state;
    const mxp_dtype ints[] = { MXP_BOOL, MXP_S8, MXP_U8, MXP_S4, MXP_U4, MXP_S2, MXP_U2, MXP_S1, MXP_U1,
                               MXP_S16, MXP_U16, MXP_S32, MXP_U32, MXP_S64, MXP_U64 };
    const mxp_dtype floats[] = { MXP_F64, MXP_F32, MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2, MXP_E3M4, MXP_E4M3IEEE,
                                 MXP_E4M3B11, MXP_E4M3FNUZ, MXP_E5M2FNUZ, MXP_E2M3, MXP_E3M2, MXP_E2M1 };
    enum { NI = sizeof ints / sizeof ints[0], NF = sizeof floats / sizeof floats[0] };
    const mxp_convert_opts sr = { .rounding = MXP_ROUND_STOCHASTIC }, rne = { .rounding = MXP_ROUND_NEAREST_EVEN };
    size_t bad = 0, pairs = 0;
    for (size_t a = 0; a < NI + NF; a++) {
        const mxp_dtype st = a < NI ? ints[a] : floats[a - NI];
        for (size_t b = 0; b < NI + NF; b++) {
            const mxp_dtype dt = b < NI ? ints[b] : floats[b - NI];
            const bool free = dt != st && (dt == MXP_BOOL || (a < NI && b < NI) || st == MXP_BOOL);
            if (!free)
                continue;
            const char *named = mxp_convert_kernel_name(dt, st, &sr);
            const bool vector = mxp_isa_current() >= MXP_ISA_AVX2; /* the scalar level has few byte tables */
            if (strcmp(named, mxp_convert_kernel_name(dt, st, &rne)) || (vector && !strcmp(named, "reference"))) {
                print_error("%s->%s stochastic: %s\n", mxp_dtype_name(st), mxp_dtype_name(dt), named);
                bad++;
            }
            const size_t ss = mxp_dtype_itemsize(st);
            const size_t n = ss > 2 ? (memset(src, 0, CAP), st == MXP_F64 || st == MXP_F32 ? fill_float_to_int(st)
                                                                                               : fill_wide(st))
                                    : st == MXP_BOOL ? fill(MXP_U8) : fill(st);
            bad += check_every_mode(dt, st, n);
            pairs++;
        }
    }
    /* float8_e8m0fnu has no zero: bool's 0 is NaN in every mode */
    const bool vector = mxp_isa_current() >= MXP_ISA_AVX2;
    assert_true(!vector || strcmp(mxp_convert_kernel_name(MXP_E8M0, MXP_BOOL, &sr), "reference"));
    fill(MXP_U8);
    bad += check_every_mode(MXP_E8M0, MXP_BOOL, N8);
    print_message("%zu pairs in every mode\n", pairs);
    assert_true(pairs > 200);
    assert_int_equal(bad, 0);
}

/* From the AVX2 level on, no pair and mode is left to the reference
 * converter (docs/conversions.md, Integers and bool): every pair of valid
 * dtypes, every mode, both policies, by mxp_convert_kernel_name. */
static void test_no_pair_on_the_reference_converter(void **state)
{
    (void)state;
    if (mxp_isa_current() < MXP_ISA_AVX2) {
        print_message("skipped: the scalar level keeps the reference converter for many pairs\n");
        skip();
    }
    size_t left = 0, seen = 0;
    for (int a = 1; a < MXP_DTYPE_COUNT; a++)
        for (int b = 1; b < MXP_DTYPE_COUNT; b++) {
            if (a == b || !mxp_dtype_is_valid((mxp_dtype)a) || !mxp_dtype_is_valid((mxp_dtype)b))
                continue;
            for (int mode = 0; mode < MXP_ROUNDING_COUNT; mode++)
                for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
                    const mxp_convert_opts o = { .rounding = (mxp_rounding)mode, .overflow = (mxp_overflow)ov };
                    const char *name = mxp_convert_kernel_name((mxp_dtype)b, (mxp_dtype)a, &o);
                    seen++;
                    if (!strcmp(name, "reference") && left++ < 8)
                        print_error("%s -> %s %s: the reference converter\n", mxp_dtype_name((mxp_dtype)a),
                                    mxp_dtype_name((mxp_dtype)b), mxp_rounding_name((mxp_rounding)mode));
                }
        }
    print_message("%zu pair-modes at %s\n", seen, mxp_isa_name(mxp_isa_current()));
    assert_true(seen > 5000);
    assert_int_equal(left, 0);
}

/* In place (dst == src, itemsize not growing): the bits of a separate
 * output, for the kernels above and the float8 ones from float32/float64. */
static void test_in_place_gives_the_same_bits(void **state)
{
    (void)state;
    const struct { mxp_dtype src, dst; } pairs[] = {
        { MXP_BF16, MXP_E4M3 }, { MXP_F16, MXP_E5M2 }, { MXP_BF16, MXP_S8 }, { MXP_F16, MXP_BF16 },
        { MXP_BF16, MXP_F16 },  { MXP_E4M3, MXP_S8 },  { MXP_S8, MXP_E5M2 }, { MXP_F32, MXP_E4M3 },
        { MXP_F64, MXP_E4M3 },
    };
    size_t bad = 0;
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
        const mxp_dtype st = pairs[k].src, dt = pairs[k].dst;
        const size_t ss = mxp_dtype_itemsize(st), ds = mxp_dtype_itemsize(dt);
        const size_t n = N8; /* past the tables' threshold */
        uint64_t r = 11 + k;
        for (size_t i = 0; i < n * ss; i++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            src[i] = (unsigned char)(r >> 56);
        }
        for (int mode = 0; mode < MXP_ROUND_STOCHASTIC; mode++) {
            mxp_convert_opts o = { .rounding = (mxp_rounding)mode };
            assert_int_equal(mxp_convert(want, dt, src, st, n, &o), MXP_OK);
            memcpy(got, src, n * ss);
            assert_int_equal(mxp_convert(got, dt, got, st, n, &o), MXP_OK);
            if (memcmp(want, got, n * ds) != 0 && bad++ < 4)
                print_error("%s -> %s %s in place differs (%s)\n", mxp_dtype_name(st), mxp_dtype_name(dt),
                            mxp_rounding_name(o.rounding), mxp_convert_kernel_name(dt, st, &o));
        }
    }
    assert_int_equal(bad, 0);
}

static int setup(void **state)
{
    (void)state;
    src = malloc(CAP);
    want = malloc(CAP);
    got = malloc(CAP + 64);
    return !src || !want || !got;
}

static int teardown(void **state)
{
    (void)state;
    free(src);
    free(want);
    free(got);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_pass_kernels_on_every_16bit_and_8bit_input),
        cmocka_unit_test(test_table_kernels_on_every_8bit_input),
        cmocka_unit_test(test_mxp_convert_on_every_16bit_and_8bit_input),
        cmocka_unit_test(test_in_place_gives_the_same_bits),
        cmocka_unit_test(test_float64_sources_round_once),
        cmocka_unit_test(test_wide_integer_sources),
        cmocka_unit_test(test_into_wide_integers),
        cmocka_unit_test(test_bool_with_floats_and_wide_integers),
        cmocka_unit_test(test_rounding_free_pairs_take_nearest_even_paths),
        cmocka_unit_test(test_no_pair_on_the_reference_converter),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
