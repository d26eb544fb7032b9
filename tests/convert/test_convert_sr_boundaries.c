/* Stochastic-rounding kernels against the reference, bit for bit, on inputs
 * built around each target's boundaries and around the random stream:
 * just below and above the smallest normal and the largest finite value,
 * overflow to infinity or saturation, NaN, inf, +-0, source subnormals,
 * dropped bits all zero or all one, and dropped bits equal to the random
 * draw's top bits for that element (where the SIMD kernels' fast carry is
 * undecided and the exact path must answer).  Many seeds and start
 * indices, unaligned starts, odd lengths, with and without MXCSR FTZ/DAZ;
 * then the same through mxp_convert at every ISA level. */
#include <math.h>
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

#include "convert/convert-config.h"
#include "kernels/cvt-kernel.h"
#include "convert/convert-ref.h"
#include "mxp.h"

enum { N = 6000 };

static unsigned char *src, *want, *got;

static uint64_t rand64(uint64_t *s)
{
    return mxp_splitmix64((*s)++);
}

static void set_ftz_daz(int on)
{
#if defined(__SSE__)
    unsigned csr = _mm_getcsr();
    _mm_setcsr(on ? csr | 0x8040u : csr & ~0x8040u);
#else
    (void)on;
#endif
}

/* A target's facts: mantissa bits, smallest normal exponent, largest
 * finite value and the first magnitude that overflows. */
typedef struct target {
    int mbits, emin;
    double max, ovf;
} target;

static int target_of(mxp_dtype t, target *out)
{
    switch (t) {
    case MXP_F16: *out = (target){ 10, -14, 65504.0, 65536.0 }; return 1;
    case MXP_BF16: *out = (target){ 7, -126, 0x1.fep127, 0x1p128 }; return 1;
    case MXP_E4M3: *out = (target){ 3, -6, 448.0, 480.0 }; return 1;
    case MXP_E5M2: *out = (target){ 2, -14, 57344.0, 65536.0 }; return 1;
    case MXP_S8: *out = (target){ 0, 0, 127.0, 128.0 }; return 1;
    case MXP_U8: *out = (target){ 0, 0, 255.0, 256.0 }; return 1;
    case MXP_E8M0: *out = (target){ 0, -127, 0x1p127, 0x1p128 }; return 1;
    /* the wide integers (float64 rounding loop, convert-route.c) */
    case MXP_S16: *out = (target){ 0, 0, 32767.0, 32768.0 }; return 1;
    case MXP_U16: *out = (target){ 0, 0, 65535.0, 65536.0 }; return 1;
    case MXP_S32: *out = (target){ 0, 0, 0x1p31 - 1, 0x1p31 }; return 1;
    case MXP_U32: *out = (target){ 0, 0, 0x1p32 - 1, 0x1p32 }; return 1;
    case MXP_S64: *out = (target){ 0, 0, 0x1p63 - 1024, 0x1p63 }; return 1; /* the largest double below */
    case MXP_U64: *out = (target){ 0, 0, 0x1p64 - 2048, 0x1p64 }; return 1;
    default: return 0;
    }
}

static int is_float_target(mxp_dtype t)
{
    return t == MXP_F16 || t == MXP_BF16 || t == MXP_E4M3 || t == MXP_E5M2 || t == MXP_E8M0;
}

/* Stores v into element i of src in the source type (f32: exactly when
 * representable, else rounded by the cast). */
static void put(mxp_dtype st, size_t i, double v)
{
    if (st == MXP_F32) {
        float f = (float)v;
        memcpy(src + i * 4, &f, 4);
    } else {
        memcpy(src + i * 8, &v, 8);
    }
}

static void put_bits(mxp_dtype st, size_t i, uint64_t b)
{
    memcpy(src + i * mxp_dtype_itemsize(st), &b, mxp_dtype_itemsize(st));
}

/* (k * 2^32 + f) * 2^(q - 32), truncated to the source's significand. */
static double build(uint64_t k, uint32_t f, int q, int sig_bits)
{
    uint64_t n = (k << 32) | f;
    int len = n ? 64 - __builtin_clzll(n) : 0;
    if (len > sig_bits)
        n &= ~((1ull << (len - sig_bits)) - 1);
    return ldexp((double)(n >> 11), q - 32 + 11) + ldexp((double)(n & 0x7ff), q - 32);
}

/* One element i designed around the random draw r for element index0 + i:
 * the discarded fraction (in target ulps, 32 bits) equal to r in its top
 * bits, just above or below r, all zero or all one, or random. */
static double designed(const target *t, int is_float, int sig_bits, uint32_t r, uint64_t *rng)
{
    uint64_t u = rand64(rng);
    int q;          /* exponent of the target's ulp */
    uint64_t k;     /* kept magnitude */
    if (!is_float) {
        q = 0;
        k = u % 300;
    } else if (u % 3 == 0) { /* below the normal range */
        q = t->emin - t->mbits;
        k = (u >> 8) % 4 ? 0 : (u >> 10) % (1u << t->mbits); /* 0: every bit of f kept */
    } else {
        int binades = (int)floor(log2(t->max)) - t->emin + 1; /* emin .. emax */
        q = t->emin + (int)((u >> 8) % (uint64_t)binades) - t->mbits;
        k = (1u << t->mbits) | ((u >> 20) % (1u << t->mbits));
        if ((u >> 30) % 4 == 0) { /* the top binade's last values: max, and past it */
            q = t->emin + binades - 1 - t->mbits;
            k = (2u << t->mbits) - 1 - (unsigned)((u >> 32) % 3);
        }
    }
    if (is_float && (u >> 34) % 8 == 0 && k) /* the last value below a binade: the carry crosses it */
        k = (k | ((1u << t->mbits) - 1));
    uint32_t f;
    unsigned shape = (unsigned)(u >> 40) % 11;
    /* top bits of r kept: often the kernels' d, the bits dropped into y */
    const int d = is_float ? sig_bits - 1 - t->mbits : 15;
    unsigned keep = (u >> 56) % 2 && d < 32 ? (unsigned)d : 1 + (unsigned)(u >> 50) % 31;
    uint32_t top = r & ~(0xffffffffu >> keep);
    switch (shape) {
    case 0: f = top; break;                             /* r's top bits, then zeros */
    case 1: f = top | (0xffffffffu >> keep); break;     /* r's top bits, then ones */
    case 2: f = r; break;
    case 3: f = r + 1; break;
    case 4: f = r - 1; break;
    case 5: f = 0; break;
    case 6: f = 0xffffffffu; break;
    case 7: f = top + (0x80000000u >> (keep - 1)); break; /* the carry lands exactly */
    case 8: f = (top - (0x80000000u >> (keep - 1))) | (0xffffffffu >> keep); break; /* just misses */
    default: f = (uint32_t)rand64(rng); break;
    }
    double v = build(k, f, q, sig_bits);
    return (u >> 62) & 1 ? -v : v;
}

/* Fixed values: boundaries of the target and special values of the source. */
static size_t specials(mxp_dtype st, const target *t, int is_float, double *out)
{
    size_t n = 0;
    const int sig_bits = st == MXP_F32 ? 24 : 53;
    const double ulp_rel = ldexp(1.0, -sig_bits + 1);
    double anchors[8];
    size_t na = 0;
    anchors[na++] = t->max;
    anchors[na++] = t->ovf;
    anchors[na++] = (t->max + t->ovf) / 2;
    if (is_float) {
        double min_normal = ldexp(1.0, t->emin), min_sub = ldexp(1.0, t->emin - t->mbits);
        anchors[na++] = min_normal;
        anchors[na++] = min_sub;
        anchors[na++] = min_sub / 2;
        anchors[na++] = ldexp(1.0, t->emin - t->mbits - 32); /* frac * 2^32 == 1 */
    } else {
        anchors[na++] = 1.0;
    }
    for (size_t a = 0; a < na; a++)
        for (int j = -3; j <= 3; j++) {
            double v = anchors[a] * (1 + j * ulp_rel);
            out[n++] = v;
            out[n++] = -v;
        }
    out[n++] = 0.0;
    out[n++] = -0.0;
    out[n++] = HUGE_VAL;
    out[n++] = -HUGE_VAL;
    if (st == MXP_F32) {
        out[n++] = 0x1p-149;
        out[n++] = 0x1.fffffcp-127;
        out[n++] = -0x1p-126;
        out[n++] = 0x1.fffffep127;
    } else {
        out[n++] = 0x1p-1074;
        out[n++] = -0x1.ffffffffffffep-1023;
        out[n++] = 0x1p-1022;
        out[n++] = 0x1.fffffffffffffp1023;
    }
    return n;
}

static const uint64_t nans32[] = { 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fbfffff, 0x7fffffff, 0x7fe00000, 0x7f812345 };
static const uint64_t nans64[] = { 0x7ff8000000000000ull, 0xfff8000000000000ull, 0x7ff0000000000001ull,
                                   0x7ff7ffffffffffffull, 0x7fffffffffffffffull, 0xfffc000000000000ull };

/* Fills src with n elements for a kernel from st to dt, designed for the
 * draws of (seed, index0 + i). */
static void fill(mxp_dtype st, mxp_dtype dt, size_t n, uint64_t seed, uint64_t index0, uint64_t salt)
{
    target t;
    assert_true(target_of(dt, &t));
    const int is_float = is_float_target(dt), sig_bits = st == MXP_F32 ? 24 : 53;
    double sp[128];
    size_t nsp = specials(st, &t, is_float, sp);
    uint64_t rng = salt;
    for (size_t i = 0; i < n; i++) {
        uint64_t u = rand64(&rng) % 16;
        if (u == 0)
            put(st, i, sp[rand64(&rng) % nsp]);
        else if (u == 1 && st == MXP_F32)
            put_bits(st, i, nans32[rand64(&rng) % (sizeof nans32 / sizeof nans32[0])]);
        else if (u == 1)
            put_bits(st, i, nans64[rand64(&rng) % (sizeof nans64 / sizeof nans64[0])]);
        else
            put(st, i, designed(&t, is_float, sig_bits, mxp_sr_random(seed, index0 + i), &rng));
    }
}

static size_t compare(const void *a, const void *b, size_t n, size_t ds, size_t ss, const unsigned char *in,
                      const char *what)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = 0, y = 0, s = 0;
        memcpy(&x, (const unsigned char *)a + i * ds, ds);
        memcpy(&y, (const unsigned char *)b + i * ds, ds);
        memcpy(&s, in + i * ss, ss);
        if (x != y && bad++ < 8)
            print_error("%s: element %zu (src 0x%llx): got 0x%llx, reference 0x%llx\n", what, i,
                        (unsigned long long)s, (unsigned long long)y, (unsigned long long)x);
    }
    return bad;
}

static const uint64_t seeds[] = { 0, 1, 0x1234567887654321ull, 0xffffffffffffffffull, 42 };
static const uint64_t starts[] = { 0, 1, 77, (5ull << 32) + 13, (1ull << 32) - N - 40 };

/* Every kernel that claims stochastic rounding from f32 or f64 to a target above. */
static size_t check_kernel(const mxp_cvt_kernel *k)
{
    const size_t ss = mxp_dtype_itemsize(k->src), ds = mxp_dtype_itemsize(k->dst);
    size_t bad = 0;
    for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++)
        for (size_t xi = 0; xi < sizeof starts / sizeof starts[0]; xi++) {
            const uint64_t index0 = starts[xi];
            fill(k->src, k->dst, N, seeds[si], index0, 1000 * si + xi);
            for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++)
                for (int ftz = 0; ftz < 2; ftz++) {
                    mxp_cvt_params p = { MXP_ROUND_STOCHASTIC, (mxp_overflow)ov, seeds[si], index0, NULL };
                    char what[200];
                    snprintf(what, sizeof what, "%s seed %llx index0 %llu %s%s", k->name,
                             (unsigned long long)seeds[si], (unsigned long long)index0,
                             mxp_overflow_name((mxp_overflow)ov), ftz ? " FTZ/DAZ" : "");
                    mxp_convert_ref(want, k->dst, src, k->src, N, &p);
                    set_ftz_daz(ftz);
                    memset(got, 0xa5, N * ds + 64);
                    k->fn(got, src, N, &p);
                    set_ftz_daz(0);
                    bad += compare(want, got, N, ds, ss, src, what);
                    for (size_t i = N * ds; i < N * ds + 64; i++)
                        bad += got[i] != 0xa5;
                    /* unaligned starts and odd lengths: the heads and tails */
                    for (size_t off = 1; off < 40; off += 3) {
                        size_t len = (off * 37) % 71;
                        mxp_cvt_params q = p;
                        q.index0 = index0 + off;
                        memset(got, 0xa5, len * ds + 64);
                        k->fn(got, src + off * ss, len, &q);
                        bad += compare(want + off * ds, got, len, ds, ss, src + off * ss, what);
                        for (size_t i = len * ds; i < len * ds + 64; i++)
                            bad += got[i] != 0xa5;
                    }
                }
        }
    return bad;
}

static void test_stochastic_kernels_match_reference_at_boundaries(void **state)
{
    (void)state;
    size_t count, tested = 0, bad = 0;
    const mxp_cvt_kernel *ks = mxp_cvt_kernels(&count);
    target t;
    for (size_t i = 0; i < count; i++) {
        const mxp_cvt_kernel *k = &ks[i];
        if (!(k->modes >> MXP_ROUND_STOCHASTIC & 1u) || (k->src != MXP_F32 && k->src != MXP_F64) ||
            !target_of(k->dst, &t))
            continue;
        if (k->isa > mxp_isa_supported()) {
            print_message("skipped %s: this machine lacks %s\n", k->name, mxp_isa_name(k->isa));
            continue;
        }
        bad += check_kernel(k);
        tested++;
    }
    print_message("%zu stochastic kernels checked\n", tested);
    if (bad)
        fail_msg("%zu kernel results differ from the reference", bad);
}

/* Float32 and float64 into the wide integers by mxp_convert (no kernel:
 * the float64 rounding loop's stochastic rounding, convert-route.c), on
 * values designed around each element's draw (the fraction's top 32 bits
 * equal to it, one above, one below, ...), against the reference: every
 * seed and start (across a 2^32 block of the stream too), both policies,
 * unaligned pieces. */
static void test_stochastic_into_wide_integers_match_reference(void **state)
{
    (void)state;
    const mxp_dtype srcs[] = { MXP_F32, MXP_F64 };
    const mxp_dtype dsts[] = { MXP_S16, MXP_U16, MXP_S32, MXP_U32, MXP_S64, MXP_U64 };
    size_t bad = 0;
    for (size_t a = 0; a < 2; a++)
        for (size_t b = 0; b < sizeof dsts / sizeof dsts[0]; b++)
            for (size_t si = 0; si < sizeof seeds / sizeof seeds[0]; si++)
                for (size_t xi = 0; xi < sizeof starts / sizeof starts[0]; xi++) {
                    const mxp_dtype st = srcs[a], dt = dsts[b];
                    const size_t ss = mxp_dtype_itemsize(st), ds = mxp_dtype_itemsize(dt);
                    fill(st, dt, N, seeds[si], starts[xi], 5000 + 100 * si + 10 * xi + b);
                    for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
                        mxp_cvt_params p = { MXP_ROUND_STOCHASTIC, (mxp_overflow)ov, seeds[si], starts[xi], NULL };
                        mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .overflow = (mxp_overflow)ov,
                                               .seed = seeds[si], .index_offset = starts[xi] };
                        char what[200];
                        snprintf(what, sizeof what, "%s->%s seed %llx index0 %llu %s (%s)", mxp_dtype_name(st),
                                 mxp_dtype_name(dt), (unsigned long long)seeds[si], (unsigned long long)starts[xi],
                                 mxp_overflow_name(o.overflow), mxp_convert_kernel_name(dt, st, &o));
                        mxp_convert_ref(want, dt, src, st, N, &p);
                        memset(got, 0xa5, N * ds + 64);
                        assert_int_equal(mxp_convert(got, dt, src, st, N, &o), MXP_OK);
                        bad += compare(want, got, N, ds, ss, src, what);
                        for (size_t off = 1; off < 40; off += 7) { /* pieces: their own start index */
                            const size_t len = (off * 37) % 71;
                            o.index_offset = starts[xi] + off;
                            assert_int_equal(mxp_convert(got, dt, src + off * ss, st, len, &o), MXP_OK);
                            bad += compare(want + off * ds, got, len, ds, ss, src + off * ss, what);
                        }
                    }
                }
    if (bad)
        fail_msg("%zu results differ from the reference", bad);
}

/* The public entry point at every level gives the scalar level's bits. */
static void test_stochastic_boundaries_same_bits_at_every_isa_level(void **state)
{
    (void)state;
    const mxp_dtype srcs[] = { MXP_F32, MXP_F64 };
    const mxp_dtype dsts[] = { MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2, MXP_S8, MXP_U8 };
    size_t bad = 0;
    for (size_t a = 0; a < 2; a++)
        for (size_t b = 0; b < sizeof dsts / sizeof dsts[0]; b++)
            for (int ov = 0; ov < MXP_OVERFLOW_COUNT; ov++) {
                const mxp_dtype st = srcs[a], dt = dsts[b];
                const uint64_t index0 = (1ull << 32) - N / 2; /* across a block of the stream */
                fill(st, dt, N, 7, index0, 99 + a * 8 + b);
                mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .overflow = (mxp_overflow)ov, .seed = 7,
                                       .flags = NULL, .index_offset = index0 };
                assert_int_equal(mxp_set_isa(MXP_ISA_SCALAR), MXP_OK);
                assert_int_equal(mxp_convert(want, dt, src, st, N, &o), MXP_OK);
                for (int isa = MXP_ISA_AVX2; isa <= (int)mxp_isa_supported(); isa++) {
                    assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
                    assert_int_equal(mxp_convert(got, dt, src, st, N, &o), MXP_OK);
                    char what[200];
                    snprintf(what, sizeof what, "%s->%s %s at %s (%s)", mxp_dtype_name(st), mxp_dtype_name(dt),
                             mxp_overflow_name(o.overflow), mxp_isa_name((mxp_isa)isa),
                             mxp_convert_kernel_name(dt, st, &o));
                    bad += compare(want, got, N, mxp_dtype_itemsize(dt), mxp_dtype_itemsize(st), src, what);
                }
            }
    mxp_set_isa(MXP_ISA_COUNT - 1);
    if (bad)
        fail_msg("%zu results depend on the ISA level", bad);
}

static int setup(void **state)
{
    (void)state;
    src = malloc(N * 8 + 64);
    want = malloc(N * 8 + 64);
    got = malloc(N * 8 + 64);
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
        cmocka_unit_test(test_stochastic_kernels_match_reference_at_boundaries),
        cmocka_unit_test(test_stochastic_boundaries_same_bits_at_every_isa_level),
        cmocka_unit_test(test_stochastic_into_wide_integers_match_reference),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
