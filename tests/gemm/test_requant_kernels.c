/* Every line of src/kernels/requant-list.inc this CPU runs.  The
 * requantization kernels (src/kernels/s32-requant/) against an oracle
 * written here another way (C's truncating division and remainder, then
 * the mode's correction), byte for byte: every mode, int32 extremes, scales
 * m up to +-(2^24 - 1), shifts 1..62, per tensor and per column, int8 and
 * uint8 ranges with zero points, every length 0..40 (the vector tails).
 * The dequantization kernels (src/kernels/s32-dequant/) in each of their
 * modes against mxp_convert of the exact product and against their twins,
 * and the twins in every mode the kernels have. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "kernels/requant-kernels.h"
#include "support/prng.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

typedef struct named {
    const char *name;
    mxp_s32_requant_fn fn;
    mxp_isa needs;
} named;

static const named kernels[] = {
#define MXP_S32_REQUANT(f, isa, twin) { #f, f, isa },
#define MXP_S32_DEQUANT_F32(...)
#define MXP_S32_DEQUANT_BIAS_F32(...)
#define MXP_S32_REQUANT_F64(...)
#include "kernels/requant-list.inc"
#undef MXP_S32_REQUANT_F64
#undef MXP_S32_REQUANT
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
};

/* The dequantization lines, a kernel with its bias variant of the same
 * level (the list has them in that order). */
typedef struct dequant {
    const char *name;
    mxp_s32_dequant_f32_fn fn, twin;
    mxp_isa needs;
    unsigned modes;
} dequant;

static const dequant dequants[] = {
#define MXP_S32_REQUANT(...)
#define MXP_S32_DEQUANT_F32(f, isa, modes, twin) { #f, f, twin, isa, modes },
#define MXP_S32_DEQUANT_BIAS_F32(...)
#define MXP_S32_REQUANT_F64(...)
#include "kernels/requant-list.inc"
#undef MXP_S32_REQUANT_F64
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
    { NULL, NULL, NULL, MXP_ISA_SCALAR, 0 },
};

typedef struct dequant_bias {
    const char *name;
    mxp_s32_dequant_bias_f32_fn fn, twin;
    mxp_isa needs;
    unsigned modes;
} dequant_bias;

static const dequant_bias dequant_biases[] = {
#define MXP_S32_DEQUANT_F32(...)
#define MXP_S32_DEQUANT_BIAS_F32(f, isa, modes, twin) { #f, f, twin, isa, modes },
#define MXP_S32_REQUANT_F64(...)
#include "kernels/requant-list.inc"
#undef MXP_S32_REQUANT_F64
#undef MXP_S32_REQUANT
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
    { NULL, NULL, NULL, MXP_ISA_SCALAR, 0 },
};

static int64_t oracle_round(int64_t p, int s, mxp_rounding mode)
{
    const int64_t d = (int64_t)1 << s;
    int64_t q = p / d, r = p % d; /* q toward zero, r has p's sign */
    const int64_t twice = 2 * (r < 0 ? -r : r); /* compared with d: below, at or above the half */
    const int sign = r < 0 ? -1 : 1;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        if (twice > d || (twice == d && q % 2 != 0))
            q += sign;
        break;
    case MXP_ROUND_NEAREST_AWAY:
        if (twice >= d)
            q += sign;
        break;
    case MXP_ROUND_UP:
        if (r > 0)
            q += 1;
        break;
    case MXP_ROUND_DOWN:
        if (r < 0)
            q -= 1;
        break;
    default: /* toward zero */
        break;
    }
    return q;
}

static uint64_t rng = 88172645463325252u;
static uint32_t next(void)
{
    return (uint32_t)(prng_next(&rng) >> 16);
}

static void test_requant_kernels_vs_oracle(void **state)
{
    (void)state;
    enum { N = 40 };
    const mxp_rounding modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_NEAREST_AWAY, MXP_ROUND_TOWARD_ZERO,
                                   MXP_ROUND_UP, MXP_ROUND_DOWN };
    const int32_t specials[] = { 0, 1, -1, 2, -2, 3, -3, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1, 1 << 20 };
    const struct {
        int32_t zp, lo, hi;
    } ranges[] = { { 0, -128, 127 }, { -5, -128, 127 }, { 128, 0, 255 }, { 3, 0, 255 } };
    long checked = 0;
    for (int trial = 0; trial < 3000; trial++) {
        int32_t acc[N], m[N], sh[N];
        uint8_t want[N], got[N + 8];
        const size_t len = (size_t)trial % (N + 1);
        const int per_col = trial % 3 != 0;
        const mxp_rounding mode = modes[trial % 5];
        for (size_t q = 0; q < N; q++) {
            const uint32_t u = next();
            acc[q] = u % 5 == 0 ? specials[next() % 12] : (int32_t)(next() % 2 ? next() : next() % 4096) * (u & 1 ? 1 : -1);
            const int32_t mm = (int32_t)(next() % ((1u << 24) - 1)) | 1; /* odd, as split_scale makes them */
            m[q] = next() % 7 == 0 ? (1 << 24) - 1 : next() % 2 ? mm : -mm;
            if (next() % 9 == 0)
                m[q] = next() % 2 ? 1 : -1;
            sh[q] = 1 + (int32_t)(next() % 62);
            if (next() % 4 == 0) /* shifts that keep codes in range: where the rounding shows */
                sh[q] = 24 + (int32_t)(next() % 16);
        }
        const int r = trial % 4;
        for (size_t q = 0; q < len; q++) {
            const size_t c = per_col ? q : 0;
            int64_t x = oracle_round((int64_t)acc[q] * m[c], sh[c], mode) + ranges[r].zp;
            x = x < ranges[r].lo ? ranges[r].lo : x > ranges[r].hi ? ranges[r].hi : x;
            want[q] = (uint8_t)(x & 0xff);
        }
        for (size_t k = 0; k < NELEMS(kernels); k++) {
            if (kernels[k].needs > mxp_isa_supported())
                continue;
            memset(got, 0xee, sizeof got);
            kernels[k].fn(got, acc, len, m, sh, per_col, ranges[r].zp, ranges[r].lo, ranges[r].hi, (int)mode);
            for (size_t q = 0; q < len; q++)
                if (got[q] != want[q])
                    fail_msg("%s mode %s: acc %d * m %d / 2^%d + zp %d gives %u, want %u", kernels[k].name,
                             mxp_rounding_name(mode), acc[q], m[per_col ? q : 0], sh[per_col ? q : 0], ranges[r].zp,
                             got[q], want[q]);
            for (size_t q = len; q < sizeof got; q++)
                assert_int_equal(got[q], 0xee);
            checked += (long)len;
        }
    }
    assert_true(checked > 50000);
}

/* Exact halves: acc * m = (2t + 1) * 2^(s-1) for every mode and sign. */
/* The float64 requantization lines (MXP_S32_REQUANT_F64) against their
 * twin: random sums, scales of 1 to 24 bits with exponents -30..+5, alpha,
 * biases per column and one, relu, clamp, zero points, both output
 * ranges, lengths 0-41 at any start; and each stops before a lane whose
 * product needs 54 bits or more (the twin at it, the vector at its block). */
typedef struct named64 {
    const char *name;
    mxp_s32_requant_f64_fn fn, twin;
    mxp_isa needs;
} named64;

static const named64 f64_kernels[] = {
#define MXP_S32_REQUANT(...)
#define MXP_S32_DEQUANT_F32(...)
#define MXP_S32_DEQUANT_BIAS_F32(...)
#define MXP_S32_REQUANT_F64(f, isa, twin) { #f, f, twin, isa },
#include "kernels/requant-list.inc"
#undef MXP_S32_REQUANT
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
#undef MXP_S32_REQUANT_F64
};

static void test_requant_f64_kernels_vs_twin(void **state)
{
    (void)state;
    enum { MAXL = 41 };
    uint64_t r64 = prng_seed(64);
    int32_t acc[MAXL + 3];
    double m[MAXL + 3], p[MAXL + 3], bias[MAXL + 3];
    uint8_t d0[4 * (MAXL + 3)], d1[4 * (MAXL + 3)];
    size_t runs = 0;
    for (size_t k = 0; k < NELEMS(f64_kernels); k++) {
        if (f64_kernels[k].needs > mxp_isa_supported())
            continue;
        for (int trial = 0; trial < 4000; trial++) {
            const size_t len = (size_t)(prng_next(&r64) % (MAXL + 1)), off = (size_t)(prng_next(&r64) % 3);
            const int big = trial % 7 == 0; /* sums and scales whose products pass 2^53 */
            for (size_t q = 0; q < MAXL + 3; q++) {
                const int bits = 1 + (int)(prng_next(&r64) % 24);
                int64_t mm = (int64_t)(prng_next(&r64) >> (64 - bits)) | 1;
                if (prng_next(&r64) % 9 == 0)
                    mm = 0;
                m[q] = (double)(prng_next(&r64) % 2 ? mm : -mm);
                p[q] = ldexp(1.0, -30 + (int)(prng_next(&r64) % 36));
                acc[q] = big && q % 5 == 3 ? INT32_MAX - (int32_t)(prng_next(&r64) % 9)
                                           : (int32_t)(prng_next(&r64) % 2000001) - 1000000;
                bias[q] = (prng_uniform(&r64) - 0.5) * 300;
            }
            if (big)
                for (size_t q = 0; q < MAXL + 3; q++)
                    m[q] = m[q] == 0 ? 0 : (m[q] > 0 ? 1 : -1) * (double)((1 << 23) + 1);
            const int huge = trial % 13 == 7; /* p alpha overflows: 0 sums must stay 0, not 0 inf */
            for (size_t q = 1; huge && q < MAXL + 3; q += 4)
                acc[q] = 0;
            const int u8 = trial % 2, per_col = trial % 3 != 0, f32 = trial % 8 >= 6;
            const size_t es = f32 ? 4 : 1; /* bytes an output */
            const mxp_s32_requant_f64_params prm = {
                m + off, p + off, per_col, huge ? 0x1p1020 : trial % 4 ? 0.37 + prng_uniform(&r64) : 1.0,
                trial % 5 == 1 ? NULL : bias + off, trial % 5 != 2, trial % 3 == 1, trial % 4 == 2, -20.5, 90.25,
                u8 ? (int32_t)(prng_next(&r64) % 256) : (int32_t)(prng_next(&r64) % 256) - 128, u8 ? 0 : -128,
                u8 ? 255 : 127, f32, 1, 0, 0, !big && trial % 3 == 2 /* true then: |acc m| < 2^44 */ };
            memset(d0, 0xa5, sizeof d0);
            memset(d1, 0xa5, sizeof d1);
            const size_t n0 = f64_kernels[k].fn(d0 + off * es, acc + off, len, &prm);
            const size_t n1 = f64_kernels[k].twin(d1 + off * es, acc + off, len, &prm);
            if (n0 > n1 || (n1 == len && n0 != len) || memcmp(d0 + off * es, d1 + off * es, n0 * es))
                fail_msg("%s: trial %d, len %zu: %zu and %zu done, or bytes differ from the twin", f64_kernels[k].name,
                         trial, len, n0, n1);
            for (size_t q = (off + n0) * es; q < sizeof d0; q++) /* nothing written past what it did */
                if (d0[q] != 0xa5)
                    fail_msg("%s: trial %d wrote byte %zu past its %zu", f64_kernels[k].name, trial, q, n0);
            runs++;
        }
    }
    assert_true(runs >= 4000);
}

/* Several rows a call (ld_dst, ld_acc beyond len; rows of up to 32 take
 * the kernels' narrow loops): each row's bytes those of the kernel on that
 * row alone and the twin's, the returned index r len + q at the
 * first row that stops (a product of 54 bits or more), nothing written
 * between the rows or past the stop's block. */
static void test_requant_f64_rows(void **state)
{
    (void)state;
    enum { MAXL = 37, ROWS = 6, LDA = 45, LDD = 43 };
    uint64_t r64 = prng_seed(65);
    int32_t acc[ROWS * LDA];
    double m[MAXL], p[MAXL], bias[MAXL];
    uint8_t d0[4 * ROWS * LDD], d1[4 * ROWS * LDD];
    size_t runs = 0;
    for (size_t k = 0; k < NELEMS(f64_kernels); k++) {
        if (f64_kernels[k].needs > mxp_isa_supported())
            continue;
        for (int trial = 0; trial < 1500; trial++) {
            const size_t len = 1 + (size_t)(prng_next(&r64) % MAXL), rows = 1 + (size_t)(prng_next(&r64) % ROWS);
            const size_t stop_row = trial % 3 == 0 ? (size_t)(prng_next(&r64) % rows) : ROWS; /* a 2^53 product */
            for (size_t q = 0; q < MAXL; q++) {
                m[q] = (double)((int64_t)(prng_next(&r64) % 4001) - 2000) * 2 + 1;
                p[q] = ldexp(1.0, -20 + (int)(prng_next(&r64) % 12));
                bias[q] = (prng_uniform(&r64) - 0.5) * 50;
            }
            for (size_t t = 0; t < ROWS * LDA; t++)
                acc[t] = (int32_t)(prng_next(&r64) % 200001) - 100000;
            if (stop_row < rows) {
                const size_t q = (size_t)(prng_next(&r64) % len);
                acc[stop_row * LDA + q] = INT32_MAX;
                m[q] = (double)((1 << 23) + 1);
            }
            const int f32 = trial % 5 == 4, per_col = trial % 4 != 0;
            const size_t es = f32 ? 4 : 1;
            mxp_s32_requant_f64_params prm = { m, p, per_col, 0.75, trial % 2 ? bias : NULL, trial % 7 != 3,
                                               trial % 3 == 1, trial % 11 == 5, -9.5, 30.25, 7, 0, 255, f32, rows,
                                               LDD, LDA, stop_row >= rows && trial % 2 /* |acc m| < 2^30 */ };
            memset(d0, 0xa5, sizeof d0);
            memset(d1, 0xa5, sizeof d1);
            const size_t done = f64_kernels[k].fn(d0, acc, len, &prm);
            size_t want = rows * len;
            prm.rows = 1;
            for (size_t r = 0; r < rows; r++) { /* row by row */
                const size_t q = f64_kernels[k].fn(d1 + r * LDD * es, acc + r * LDA, len, &prm);
                if (q < len) {
                    want = r * len + q;
                    break;
                }
            }
            if (done != want || memcmp(d0, d1, sizeof d0))
                fail_msg("%s: trial %d, %zu rows of %zu: %zu done (row by row %zu), or bytes differ",
                         f64_kernels[k].name, trial, rows, len, done, want);
            for (size_t r = 0; r * len < done; r++) { /* and the twin's bytes where it did them */
                const size_t q = done - r * len < len ? done - r * len : len;
                memset(d1, 0xa5, sizeof d1);
                f64_kernels[k].twin(d1, acc + r * LDA, q, &prm);
                if (memcmp(d0 + r * LDD * es, d1, q * es))
                    fail_msg("%s: trial %d, %zu rows of %zu: row %zu differs from the twin's", f64_kernels[k].name,
                             trial, rows, len, r);
            }
            runs++;
        }
    }
    assert_true(runs >= 1500);
}

/* The twin's arithmetic by hand: 7 * 3 * 2^-2 * 0.5 + 1.25 = 3.875 -> 4;
 * ties to even; relu; clamp; saturation; the stop at 2^53. */
static void test_requant_f64_twin_values(void **state)
{
    (void)state;
    const int32_t acc[5] = { 7, 5, -9, 1000000, INT32_MAX };
    const double m = 3, p = 0.25, b = 1.25;
    uint8_t d[5];
    mxp_s32_requant_f64_params prm = { &m, &p, 0, 0.5, &b, 0, 0, 0, 0, 0, 10, 0, 255, 0, 1, 0, 0, 0 };
    assert_int_equal(mxp_s32_requant_f64__scalar(d, acc, 4, &prm), 4);
    assert_int_equal(d[0], 14);  /* 3.875 -> 4, + 10 */
    assert_int_equal(d[1], 13);  /* 3.125 -> 3 */
    assert_int_equal(d[2], 8);   /* -3.375 + 1.25 = -2.125 -> -2, + 10 */
    assert_int_equal(d[3], 255); /* saturated */
    const double b2 = 0.5; /* 7 * 0.75 / 2 = 2.625 + 0.5 = 3.125; 5 -> 2.375 -> 2; -9 -> -2.875 -> -3 -> relu 0 */
    prm.bias = &b2;
    prm.relu = 1;
    prm.zp = 0;
    assert_int_equal(mxp_s32_requant_f64__scalar(d, acc, 3, &prm), 3);
    assert_int_equal(d[0], 3);
    assert_int_equal(d[1], 2);
    assert_int_equal(d[2], 0);
    const double mbig = (double)(1 << 23);
    prm.m = &mbig; /* INT32_MAX * 2^23 > 2^53: stop there */
    assert_int_equal(mxp_s32_requant_f64__scalar(d, acc, 5, &prm), 4);
    const double half = 1, p1 = 1; /* ties to even: 2.5 -> 2, 3.5 -> 4 (alpha 0.5 on 5 and 7) */
    const int32_t ties[2] = { 5, 7 };
    mxp_s32_requant_f64_params t = { &half, &p1, 0, 0.5, NULL, 0, 0, 0, 0, 0, 0, 0, 255, 0, 1, 0, 0, 0 };
    assert_int_equal(mxp_s32_requant_f64__scalar(d, ties, 2, &t), 2);
    assert_int_equal(d[0], 2);
    assert_int_equal(d[1], 4);
}

/* The integer GEMM into int8/uint8 (and float32) C with alpha, biases, relu and clamp:
 * the same bytes through the kernel and through the general path (which
 * counters select). */
static void test_int8_gemm_requant_f64_path_is_the_general_one(void **state)
{
    (void)state;
    enum { M = 9, N = 21, K = 33 };
    uint8_t a[M * K];
    int8_t b[K * N];
    float scales[N];
    double rb[M];
    float cb[N];
    uint64_t r64 = 77;
    for (int t = 0; t < M * K; t++)
        a[t] = (uint8_t)(prng_next(&r64) % 256);
    for (int t = 0; t < K * N; t++)
        b[t] = (int8_t)(prng_next(&r64) % 256 - 128);
    for (int j = 0; j < N; j++) {
        scales[j] = (float)(prng_uniform(&r64) * 0.01 + 1e-4);
        cb[j] = (float)((prng_uniform(&r64) - 0.5) * 40);
    }
    for (int i = 0; i < M; i++)
        rb[i] = (prng_uniform(&r64) - 0.5) * 40;
    for (int v = 0; v < 12; v++) {
        const mxp_dtype ct = v >= 8 ? MXP_F32 : v & 1 ? MXP_S8 : MXP_U8;
        mxp_gemm_opts o = { .scales = scales, .n_scales = v & 2 ? N : 1, .a_zero_point = 128, .c_zero_point = ct == MXP_F32 ? 0 : 3,
                            .activation = v & 4 ? MXP_ACT_RELU : MXP_ACT_NONE, .clamp = v == 5, .clamp_lo = -7,
                            .clamp_hi = 60 };
        if (v % 3 == 0) {
            o.bias = cb;
            o.bias_dtype = MXP_F32;
            o.bias_kind = MXP_BIAS_PER_COL;
        } else if (v % 3 == 1) {
            o.bias = rb;
            o.bias_dtype = MXP_F64;
            o.bias_kind = MXP_BIAS_PER_ROW;
        }
        float c0[M * N], c1[M * N]; /* bytes, or floats */
        memset(c0, 0, sizeof c0);
        memset(c1, 0, sizeof c1);
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 0.731, a, MXP_U8, K, b, MXP_S8, N, 0, c0, ct, N,
                                  &o),
                         MXP_OK);
        mxp_convert_flags fl = { 0 };
        o.convert.flags = &fl;
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 0.731, a, MXP_U8, K, b, MXP_S8, N, 0, c1, ct, N,
                                  &o),
                         MXP_OK);
        if (memcmp(c0, c1, sizeof c0))
            fail_msg("variant %d: the kernel's bytes differ from the general path's", v);
    }
}

static void test_requant_ties(void **state)
{
    (void)state;
    const mxp_rounding modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_NEAREST_AWAY, MXP_ROUND_TOWARD_ZERO,
                                   MXP_ROUND_UP, MXP_ROUND_DOWN };
    /* acc = 2t + 1, m = 1, shift 1: value t + 1/2 */
    int32_t acc[16], m = 1, s = 1;
    for (int i = 0; i < 16; i++)
        acc[i] = 2 * (i - 8) + 1; /* -15 .. 15 odd: -7.5 .. 7.5 */
    const int64_t want[5][16] = {
        { -8, -6, -6, -4, -4, -2, -2, 0, 0, 2, 2, 4, 4, 6, 6, 8 },   /* even */
        { -8, -7, -6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7, 8 },  /* away */
        { -7, -6, -5, -4, -3, -2, -1, 0, 0, 1, 2, 3, 4, 5, 6, 7 },   /* toward zero */
        { -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8 },   /* up */
        { -8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7 },  /* down */
    };
    for (int md = 0; md < 5; md++)
        for (size_t k = 0; k < NELEMS(kernels); k++) {
            if (kernels[k].needs > mxp_isa_supported())
                continue;
            uint8_t got[16];
            kernels[k].fn(got, acc, 16, &m, &s, 0, 0, -128, 127, (int)modes[md]);
            for (int i = 0; i < 16; i++)
                if ((int8_t)got[i] != want[md][i])
                    fail_msg("%s %s: %d / 2 gives %d, want %lld", kernels[k].name, mxp_rounding_name(modes[md]),
                             acc[i], (int8_t)got[i], (long long)want[md][i]);
        }
}

/* float32 C: each dequantization kernel against mxp_convert of the product
 * computed exactly here (int64, then to double rounded to odd by hand) in
 * each of its modes, and against its twin: scales of every kind
 * (subnormal, negative, +-0, huge enough to overflow), int32 extremes, per
 * tensor and per column.  With a bias per column: that product plus the
 * bias in float64, then mxp_convert, as the general epilogue. */
static double product_odd(int32_t acc, float scale)
{
    uint32_t bits;
    memcpy(&bits, &scale, 4);
    const int ex = (int)(bits >> 23 & 0xff);
    const int64_t m = ex ? (int64_t)(bits & 0x7fffff) | 0x800000 : (int64_t)(bits & 0x7fffff);
    const int e = (ex ? ex : 1) - 150;
    const int64_t p = (int64_t)acc * m;
    const int neg_s = (int)(bits >> 31);
    if (p == 0)
        return (neg_s ^ (acc < 0 && m == 0)) ? -0.0 : 0.0;
    uint64_t u = p < 0 ? 0 - (uint64_t)p : (uint64_t)p;
    int extra = 0;
    while (u >> 53) { /* to 53 bits, rounded to odd */
        u = (u >> 1) | (u & 1);
        extra++;
    }
    double d = ldexp((double)u, e + extra);
    return ((p < 0) ^ neg_s) ? -d : d;
}

/* One trial's values: len sums and scales (per column or one), biases. */
enum { DQ_N = 37 };

static void dequant_values(int32_t *acc, float *sc, float *bias, int per_col)
{
    const float fixed[] = { 1.0f, -1.0f, 0.0f, -0.0f, 1e-45f, -1e-45f, 1.17549435e-38f, 3.4e38f, -3.4e38f,
                            0.0123f, 1.0f / 65536, 0x1.fffffep-3f, 7.0e-40f };
    for (size_t q = 0; q < DQ_N; q++) {
        const uint32_t u = next();
        acc[q] = u % 4 == 0 ? (int32_t)(INT32_MAX - (int32_t)(next() % 1000)) * (u & 8 ? -1 : 1)
                            : (int32_t)next() / (int32_t)(1 + next() % 65536);
        if (u % 13 == 0)
            acc[q] = u % 26 ? 0 : INT32_MIN;
        const uint32_t r = next();
        if (r % 3 == 0) {
            sc[q] = fixed[next() % NELEMS(fixed)];
        } else {
            uint32_t b = next() & 0xff7fffffu; /* finite: exponent never all ones */
            memcpy(&sc[q], &b, 4);
        }
        const uint32_t v = next() & 0xff7fffffu; /* any finite float, or one near the product */
        memcpy(&bias[q], &v, 4);
        if (v % 3 == 0)
            bias[q] = (float)(-(double)acc[q] * sc[per_col ? q : 0] * (1 + (double)(v % 7) * 0x1p-30));
        if (v % 11 == 0)
            bias[q] = v % 2 ? -0.0f : 0.5f;
    }
}

/* got[0 .. len) equals want bit for bit, and nothing after it was written. */
static void expect_floats(const char *what, const float *got, const float *want, size_t len, const int32_t *acc,
                          const float *sc, int per_col, mxp_rounding mode)
{
    for (size_t q = 0; q < len; q++)
        if (memcmp(&got[q], &want[q], 4) != 0)
            fail_msg("%s, %s: %d * %a gives %a, want %a", what, mxp_rounding_name(mode), acc[q],
                     (double)sc[per_col ? q : 0], (double)got[q], (double)want[q]);
    const unsigned char *tail = (const unsigned char *)(got + len);
    for (size_t b = 0; b < (DQ_N + 4 - len) * 4; b++)
        assert_int_equal(tail[b], 0x5c);
}

static void test_dequant_f32_vs_convert(void **state)
{
    (void)state;
    const mxp_rounding modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_UP, MXP_ROUND_DOWN, MXP_ROUND_TOWARD_ZERO };
    long checked = 0;
    for (int trial = 0; trial < 4000; trial++) {
        int32_t acc[DQ_N];
        float sc[DQ_N], got[DQ_N + 4], want[DQ_N], bias[DQ_N], want_b[DQ_N];
        const int per_col = trial % 2;
        const mxp_rounding mode = modes[trial % 4];
        const size_t len = (size_t)(trial % (DQ_N + 1));
        dequant_values(acc, sc, bias, per_col);
        const mxp_convert_opts co = { .rounding = mode };
        for (size_t q = 0; q < len; q++) {
            const double x = product_odd(acc[q], sc[per_col ? q : 0]);
            assert_int_equal(mxp_convert(&want[q], MXP_F32, &x, MXP_F64, 1, &co), MXP_OK);
            const double xb = x + (double)bias[q];
            assert_int_equal(mxp_convert(&want_b[q], MXP_F32, &xb, MXP_F64, 1, &co), MXP_OK);
        }
        for (size_t k = 0; dequants[k].fn; k++) { /* each kernel in its modes; its twin in all four */
            const dequant *d = &dequants[k];
            const dequant_bias *db = &dequant_biases[k];
            assert_int_equal(d->needs, db->needs);
            for (int twin = 0; twin < 2; twin++) {
                if (!twin && (d->needs > mxp_isa_supported() || !((d->modes >> mode) & 1)))
                    continue;
                memset(got, 0x5c, sizeof got);
                assert_true((twin ? d->twin : d->fn)(got, acc, len, sc, per_col, NULL, (int)mode));
                expect_floats(twin ? "twin" : d->name, got, want, len, acc, sc, per_col, mode);
                memset(got, 0x5c, sizeof got);
                assert_true((twin ? db->twin : db->fn)(got, acc, len, sc, per_col, NULL, bias, 0.0, (int)mode));
                expect_floats(twin ? "twin with bias" : db->name, got, want_b, len, acc, sc, per_col, mode);
                checked += (long)len;
            }
        }
    }
    if (!dequants[0].fn)
        skip();
    assert_true(checked > 50000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requant_kernels_vs_oracle),
        cmocka_unit_test(test_requant_ties),
        cmocka_unit_test(test_requant_f64_kernels_vs_twin),
        cmocka_unit_test(test_requant_f64_rows),
        cmocka_unit_test(test_requant_f64_twin_values),
        cmocka_unit_test(test_int8_gemm_requant_f64_path_is_the_general_one),
        cmocka_unit_test(test_dequant_f32_vs_convert),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
