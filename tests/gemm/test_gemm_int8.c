/* Integer mxp_gemm (uint8/int8 A by int8 B) against an exact reference
 * computed here: int64 sums of (A - za)(B - zb), then for int32 C the sums
 * (beta 1: C + sums, saturated), for int8/uint8 C round(scale * acc) + zp
 * saturated, and for float C the correctly rounded scale * acc, both with
 * every rounding mode, by exact integer arithmetic on scale = M * 2^E.
 * Every transpose and edge shape, padded leading dimensions with guard
 * bytes, zero points at their extremes, K at the documented limit (sums
 * near +-2^31, raw byte sums that wrap), per-tensor and per-column scales,
 * alpha/beta and the epilogue (within a tolerance), every ISA level bit for
 * bit, any thread count, bad arguments (C untouched), allocation failures
 * and kernel names. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/alloc_failures.h"
#include "support/matrix.h"
#include "support/prng.h"

static const mxp_rounding det_modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_NEAREST_AWAY, MXP_ROUND_TOWARD_ZERO,
                                          MXP_ROUND_UP, MXP_ROUND_DOWN };

/* ---- matrices as stored, with guards ------------------------------------ */

/* Padding and guards get a nonzero pattern: a read of them would change
 * the sums; a write is seen by mat_expect_padding_untouched. */
#define FILL 0x7e, 0x81

static int64_t get_int(const mat *x, size_t r, size_t c)
{
    const unsigned char *p = x->data + (r * x->ld + c) * x->isz;
    if (x->dt == MXP_U8)
        return *p;
    if (x->dt == MXP_S8)
        return (int8_t)*p;
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static void set_int(mat *x, size_t r, size_t c, int64_t v)
{
    unsigned char *p = x->data + (r * x->ld + c) * x->isz;
    if (x->dt == MXP_U8 || x->dt == MXP_S8) {
        *p = (unsigned char)(v & 0xff);
    } else {
        int32_t w = (int32_t)v;
        memcpy(p, &w, 4);
    }
}

static double get_f64(const mat *x, size_t r, size_t c)
{
    double v;
    assert_int_equal(mxp_convert(&v, MXP_F64, x->data + (r * x->ld + c) * x->isz, x->dt, 1, NULL), MXP_OK);
    return v;
}

/* ---- exact rounding of N * 2^E --------------------------------------------- */

enum rest { EXACT, BELOW_HALF, HALF, ABOVE_HALF };

/* floor(N / 2^s), s >= 0, and where the remainder lies. */
static int64_t floor_shift(int64_t n, int s, enum rest *rest)
{
    if (s == 0) {
        *rest = EXACT;
        return n;
    }
    if (s >= 62) { /* |n| < 2^55: the quotient is 0 or -1 */
        *rest = n == 0 ? EXACT : n > 0 ? BELOW_HALF : ABOVE_HALF;
        return n < 0 ? -1 : 0;
    }
    const int64_t two = (int64_t)1 << s, half = two / 2;
    int64_t q = n / two, r = n % two;
    if (r < 0) {
        q--;
        r += two;
    }
    *rest = r == 0 ? EXACT : r < half ? BELOW_HALF : r == half ? HALF : ABOVE_HALF;
    return q;
}

/* n / 2^s rounded to an integer with the mode; *other: the other neighbour
 * (stochastic rounding may give either). */
static int64_t round_shift(int64_t n, int s, mxp_rounding mode, int64_t *other)
{
    enum rest rest;
    const int64_t q = floor_shift(n, s, &rest);
    if (other)
        *other = rest == EXACT ? q : q + 1;
    if (rest == EXACT)
        return q;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: return rest == BELOW_HALF ? q : rest == ABOVE_HALF ? q + 1 : q + (q % 2 != 0);
    case MXP_ROUND_NEAREST_AWAY: return rest == BELOW_HALF ? q : rest == ABOVE_HALF ? q + 1 : n > 0 ? q + 1 : q;
    case MXP_ROUND_TOWARD_ZERO: return n < 0 ? q + 1 : q;
    case MXP_ROUND_UP: return q + 1;
    default: return q; /* down; stochastic's first candidate */
    }
}

/* The float scale as M * 2^E exactly. */
static void split_float(float s, int64_t *m, int *e)
{
    int ex;
    *m = (int64_t)ldexp(frexp(s, &ex), 24);
    *e = ex - 24;
}

/* round(acc * s) with the mode, clamped to +-2^40 (beyond every C range). */
static int64_t round_product_int(int64_t acc, float s, mxp_rounding mode, int64_t *other)
{
    int64_t m;
    int e;
    split_float(s, &m, &e);
    const int64_t n = acc * m;
    if (e < 0)
        return round_shift(n, -e, mode, other);
    int64_t v;
    if (n == 0)
        v = 0;
    else if (e >= 40 || llabs(n) >= ((int64_t)1 << (62 - e)))
        v = n > 0 ? (int64_t)1 << 40 : -((int64_t)1 << 40);
    else
        v = n * ((int64_t)1 << e);
    if (other)
        *other = v;
    return v;
}

/* acc * s rounded to `bits` significant bits with the mode (the result must
 * be a normal number of the target: the tests choose scales for that). */
static double round_product_float(int64_t acc, float s, int bits, mxp_rounding mode, double *other)
{
    int64_t m;
    int e;
    split_float(s, &m, &e);
    const int64_t n = acc * m;
    int len = 0;
    for (uint64_t u = (uint64_t)llabs(n); u; u >>= 1)
        len++;
    if (len <= bits) {
        if (other)
            *other = ldexp((double)n, e);
        return ldexp((double)n, e);
    }
    int64_t q2;
    const int64_t q = round_shift(n, len - bits, mode, &q2);
    if (other)
        *other = ldexp((double)q2, e + len - bits);
    return ldexp((double)q, e + len - bits);
}

static int mant_bits(mxp_dtype t)
{
    return mxp_dtype_get_traits(t)->mant_bits + 1; /* with the implicit bit */
}

/* ---- one case ------------------------------------------------------------- */

/* How A and B are filled: uniform bytes; a few values around the middle;
 * only the two ends of the range; the end farthest from the zero point
 * (every product the largest, odd rows of A at the other end); within 8
 * of that end. */
/* GEN_A7: uint8 A below 128 (a third 127), B a third -128 and a third 127
 * (the 7-bit-A kernel's extreme pair sums); GEN_A7_BUT: the same with
 * about one A value in 61 set to 248-255 (the K-pair kernel then). */
/* GEN_NARROW_B: B's K-pairs (rows 2t, 2t + 1 of a column of op(B)) with
 * |b0| + |b1| <= 128, often at 128, A over its whole range, a third at
 * each end (the vpmaddubsw kernel's extreme pair sums, +-255 * 128, A
 * full-range); GEN_NARROW_B_BUT: the same with B's last pair wide and
 * about one in 97 past its 64 x 64 corner (the K-pair kernel then, found
 * late). */
enum gen { GEN_RANDOM, GEN_SMALL, GEN_EXTREME, GEN_FAR, GEN_HIGH, GEN_A7, GEN_A7_BUT, GEN_NARROW_B, GEN_NARROW_B_BUT };

typedef struct icase {
    mxp_trans ta, tb;
    size_t m, n, k;
    double alpha, beta;
    mxp_dtype at, ct;            /* B is int8 */
    size_t pad_a, pad_b, pad_c;
    mxp_gemm_opts opts;
    enum gen gen;
    uint64_t seed;
} icase;

static icase base_case(mxp_dtype at, mxp_dtype ct)
{
    icase c;
    memset(&c, 0, sizeof c);
    c.alpha = 1.0;
    c.at = at;
    c.ct = ct;
    c.seed = 1;
    return c;
}

static void describe(char *d, size_t size, const icase *c)
{
    const mxp_gemm_opts *o = &c->opts;
    snprintf(d, size, "%s x int8 -> %s, ta=%d tb=%d m=%zu n=%zu k=%zu pads %zu/%zu/%zu alpha=%g beta=%g zp %d/%d/%d "
             "%zu scales%s rounding %s, isa %s", mxp_dtype_name(c->at), mxp_dtype_name(c->ct), (int)c->ta,
             (int)c->tb, c->m, c->n, c->k, c->pad_a, c->pad_b, c->pad_c, c->alpha, c->beta, (int)o->a_zero_point,
             (int)o->b_zero_point, (int)o->c_zero_point, o->n_scales, o->bias || o->activation || o->clamp ?
             ", epilogue" : "", mxp_rounding_name(o->convert.rounding), mxp_isa_name(mxp_isa_current()));
}

static int64_t far_end(int64_t lo, int64_t hi, int64_t z)
{
    return z - lo >= hi - z ? lo : hi;
}

/* Element p % 2 of GEN_NARROW_B's pair (p / 2, j) of op(B): a function
 * of the pair's place and the seed, so that its two elements agree. */
static int64_t narrow_b_value(const icase *c, size_t p, size_t j)
{
    static const int ends[][2] = { { -128, 0 }, { 0, -128 }, { 64, 64 }, { -64, -64 }, { 127, 1 }, { -1, -127 },
                                   { 100, -28 }, { 127, 127 } };
    uint64_t h = prng_seed(c->seed * 1000003u + (p / 2) * 7919u + j);
    const uint64_t x = prng_next(&h);
    const size_t e = (size_t)(x % 7);
    const bool corner = p < 64 && j < 64; /* the library looks there first */
    if (c->gen == GEN_NARROW_B_BUT && (((x >> 8) % 97 == 0 && !corner) || (p / 2 == (c->k - 2) / 2 && j == c->n - 1)))
        return ends[7][p % 2]; /* a wide pair: now and then past the corner, and B's last pair */
    if (((x >> 16) & 3) == 0) { /* within the bound, at random */
        const int m0 = (int)((x >> 24) % 129), m1 = (int)((x >> 32) % (129 - (uint64_t)m0));
        return p % 2 ? ((x >> 41) & 1 ? -m1 : m1) : ((x >> 40) & 1 ? -m0 : m0);
    }
    return ends[e][p % 2];
}

/* A value of A (is_a; row `row` of op(A)) or of B (element (p, j) of
 * op(B)). */
static int64_t gen_value(const icase *c, bool is_a, size_t row, size_t p, size_t j, uint64_t *s)
{
    const bool is_signed = !is_a || c->at == MXP_S8;
    const int64_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
    const int64_t far = far_end(lo, hi, is_a ? c->opts.a_zero_point : c->opts.b_zero_point);
    const uint64_t r = prng_next(s);
    switch (c->gen) {
    case GEN_EXTREME: return r & 1 ? hi : lo;
    case GEN_SMALL: return (lo + hi + 1) / 2 + (int64_t)(r % 9) - 4;
    case GEN_FAR: return is_a && row % 2 ? lo + hi - far : far;
    case GEN_HIGH: return far == lo ? far + (int64_t)(r % 8) : far - (int64_t)(r % 8);
    case GEN_A7:
    case GEN_A7_BUT:
        if (!is_a)
            return r % 3 == 0 ? -128 : r % 3 == 1 ? 127 : -128 + (int64_t)(r >> 8) % 256;
        if (c->gen == GEN_A7_BUT && r % 61 == 0)
            return 255 - (int64_t)(r >> 8) % 8; /* pair sums that would saturate vpmaddubsw */
        return r % 3 == 0 ? 127 : (int64_t)(r >> 8) % 128;
    case GEN_NARROW_B:
    case GEN_NARROW_B_BUT:
        if (!is_a)
            return narrow_b_value(c, p, j);
        return r % 3 == 0 ? hi : r % 3 == 1 ? lo : lo + (int64_t)((r >> 8) % 256);
    default: return lo + (int64_t)(r % 256);
    }
}

static double act_ref(mxp_activation a, double x)
{
    const long double t = x;
    switch (a) {
    case MXP_ACT_RELU: return x > 0 ? x : 0;
    case MXP_ACT_GELU: return (double)(0.5L * t * (1 + erfl(t / sqrtl(2))));
    case MXP_ACT_GELU_TANH:
        return (double)(0.5L * t * (1 + tanhl(sqrtl(2 / 3.14159265358979323846L) * (t + 0.044715L * t * t * t))));
    case MXP_ACT_SILU: return (double)(t / (1 + expl(-t)));
    default: return x;
    }
}

/* Accepted results of element (i, j): exactly one of two values (the same
 * one unless stochastic rounding), or, with alpha/beta/epilogue on a
 * non-int32 C, the interval [lo, hi]. */
typedef struct accepted {
    bool interval;
    double a, b;
} accepted;

static float scale_of(const mxp_gemm_opts *o, size_t j)
{
    return o->scales ? o->scales[o->n_scales > 1 ? j : 0] : 1.0f;
}

static accepted expected(const icase *c, int64_t acc, double c0, size_t i, size_t j)
{
    const mxp_gemm_opts *o = &c->opts;
    const mxp_rounding mode = o->convert.rounding;
    const bool stochastic = mode == MXP_ROUND_STOCHASTIC;
    accepted w = { false, 0, 0 };
    if (c->ct == MXP_S32) {
        assert_true(acc >= INT32_MIN && acc <= INT32_MAX); /* the documented K limit */
        int64_t v = acc + (c->beta != 0 ? (int64_t)c0 : 0);
        v = v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v;
        w.a = w.b = (double)v;
        return w;
    }
    const bool is_int = c->ct == MXP_U8 || c->ct == MXP_S8;
    const double lo = c->ct == MXP_U8 ? 0 : -128, hi = c->ct == MXP_U8 ? 255 : 127;
    const float s = scale_of(o, j);
    const bool plain = c->alpha == 1 && c->beta == 0 && !o->bias && !o->activation && !o->clamp;
    if (plain && is_int) {
        int64_t other;
        const int64_t q = round_product_int(acc, s, stochastic ? MXP_ROUND_DOWN : mode, &other);
        w.a = fmin(fmax((double)(q + o->c_zero_point), lo), hi);
        w.b = fmin(fmax((double)((stochastic ? other : q) + o->c_zero_point), lo), hi);
        return w;
    }
    if (plain) {
        double other;
        w.a = round_product_float(acc, s, mant_bits(c->ct), stochastic ? MXP_ROUND_DOWN : mode, &other);
        w.b = stochastic ? other : w.a;
        const double x = fabs(w.a);
        assert_true(x == 0 || (x >= ldexp(1, -126) && x < 0x1p127)); /* a test for normal results */
        return w;
    }
    /* float64 arithmetic in the library: a tolerance around the long double value */
    long double t = (long double)c->alpha * s * acc, bound = fabsl(t);
    if (c->beta != 0) {
        t += (long double)c->beta * c0;
        bound += fabsl((long double)c->beta * c0);
    }
    if (o->bias) {
        const float bv = ((const float *)o->bias)[o->bias_kind == MXP_BIAS_PER_COL ? j : i];
        t += bv;
        bound += fabsf(bv);
    }
    double x = act_ref(o->activation, (double)t);
    if (o->clamp)
        x = fmin(fmax(x, o->clamp_lo), o->clamp_hi);
    const double err = 1e-12 * (double)bound + 1e-300;
    w.interval = true;
    if (is_int) {
        w.a = fmin(fmax(floor(x - err) + o->c_zero_point, lo), hi);
        w.b = fmin(fmax(ceil(x + err) + o->c_zero_point, lo), hi);
    } else {
        const double ulp = ldexp(fabs(x) + err, -(mant_bits(c->ct) - 1)) + mxp_dtype_get_traits(c->ct)->min_subnormal;
        w.a = x - err - ulp;
        w.b = x + err + ulp;
    }
    return w;
}

/* Runs the case and checks everything; returns C's bytes (to free). */
static unsigned char *run_case(const icase *c)
{
    char desc[512];
    describe(desc, sizeof desc, c);
    const size_t m = c->m, n = c->n, k = c->k;
    const size_t ar = c->ta ? k : m, ac = c->ta ? m : k, br = c->tb ? n : k, bc = c->tb ? k : n;
    mat A = mat_new(c->at, ar, ac, ld_for(ac, c->pad_a), FILL);
    mat B = mat_new(MXP_S8, br, bc, ld_for(bc, c->pad_b), FILL);
    mat C = mat_new(c->ct, m, n, ld_for(n, c->pad_c), FILL);
    uint64_t s = prng_seed(c->seed);
    for (size_t r = 0; r < ar; r++)
        for (size_t q = 0; q < ac; q++)
            set_int(&A, r, q, gen_value(c, true, c->ta ? q : r, 0, 0, &s));
    for (size_t r = 0; r < br; r++)
        for (size_t q = 0; q < bc; q++)
            set_int(&B, r, q, gen_value(c, false, 0, c->tb ? q : r, c->tb ? r : q, &s));
    double *c0 = malloc((m * n + 1) * sizeof *c0);
    assert_non_null(c0);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            if (c->ct == MXP_S32) { /* some near the ends, for the saturating beta = 1 */
                const uint64_t r = prng_next(&s);
                const int64_t v = r % 4 == 0 ? INT32_MAX - (int64_t)(r >> 40) % 1000
                                : r % 4 == 1 ? INT32_MIN + (int64_t)(r >> 40) % 1000 : (int64_t)(r >> 40) % 100000;
                set_int(&C, i, j, v);
            } else if (c->ct != MXP_U8 && c->ct != MXP_S8) {
                const double v = prng_range(&s, -2, 2);
                assert_int_equal(mxp_convert(C.data + (i * C.ld + j) * C.isz, c->ct, &v, MXP_F64, 1, NULL), MXP_OK);
            }
            c0[i * n + j] = c->ct == MXP_U8 || c->ct == MXP_S8 ? 0 : c->ct == MXP_S32 ? (double)get_int(&C, i, j)
                                                                                     : get_f64(&C, i, j);
        }
    unsigned char *a0 = dup_bytes(A.buf, A.bytes), *b0 = dup_bytes(B.buf, B.bytes), *cb = dup_bytes(C.buf, C.bytes);

    const mxp_status st = mxp_gemm(c->ta, c->tb, m, n, k, c->alpha, A.data, c->at, A.ld, B.data, MXP_S8, B.ld,
                                   c->beta, C.data, c->ct, C.ld, &c->opts);
    if (st != MXP_OK)
        fail_msg("%s: %s (%s)", desc, mxp_status_str(st), mxp_last_error());
    if (memcmp(A.buf, a0, A.bytes) || memcmp(B.buf, b0, B.bytes))
        fail_msg("%s: A or B (or bytes around them) changed", desc);
    mat_expect_padding_untouched(&C, cb, desc);

    const int64_t za = c->opts.a_zero_point, zb = c->opts.b_zero_point;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            int64_t acc = 0;
            for (size_t p = 0; p < k && c->alpha != 0; p++)
                acc += (get_int(&A, c->ta ? p : i, c->ta ? i : p) - za) *
                       (get_int(&B, c->tb ? j : p, c->tb ? p : j) - zb);
            const accepted w = expected(c, acc, c0[i * n + j], i, j);
            const double g = c->ct == MXP_S32 || c->ct == MXP_U8 || c->ct == MXP_S8 ? (double)get_int(&C, i, j)
                                                                                     : get_f64(&C, i, j);
            if (w.interval ? !(g >= w.a && g <= w.b) : !(g == w.a || g == w.b))
                fail_msg("%s: C[%zu][%zu] = %.17g, want %s%.17g%s%.17g%s (acc %lld)", desc, i, j, g,
                         w.interval ? "[" : "", w.a, w.interval ? ", " : w.a == w.b ? "" : " or ",
                         w.interval || w.a != w.b ? w.b : 0.0, w.interval ? "]" : "", (long long)acc);
        }
    unsigned char *result = dup_bytes(C.data, m * C.ld * C.isz);
    free(a0);
    free(b0);
    free(cb);
    free(c0);
    mat_free(&A);
    mat_free(&B);
    mat_free(&C);
    return result;
}

static void check_case(const icase *c)
{
    free(run_case(c));
}

/* ---- 1. the reference ------------------------------------------------------- */

static void test_int8_reference_rounding_is_right(void **state)
{
    (void)state;
    /* acc * 0.5 for acc = 5, -5, 7, -7, 6: ties and exact values */
    const int64_t accs[] = { 5, -5, 7, -7, 6 };
    const int64_t table[5][5] = {
        /* nearest even, away, toward zero, up, down */
        { 2, -2, 4, -4, 3 }, { 3, -3, 4, -4, 3 }, { 2, -2, 3, -3, 3 }, { 3, -2, 4, -3, 3 }, { 2, -3, 3, -4, 3 },
    };
    for (size_t d = 0; d < NELEMS(det_modes); d++)
        for (size_t i = 0; i < NELEMS(accs); i++)
            assert_int_equal(round_product_int(accs[i], 0.5f, det_modes[d], NULL), table[d][i]);
    /* 1/3 of 10 is 3.33...; 0.1f is not 0.1 */
    assert_int_equal(round_product_int(10, 1.0f / 3, MXP_ROUND_UP, NULL), 4);
    assert_int_equal(round_product_int(-10, 1.0f / 3, MXP_ROUND_TOWARD_ZERO, NULL), -3);
    assert_int_equal(round_product_int(5, 0.1f, MXP_ROUND_NEAREST_EVEN, NULL), 1); /* 0.1f > 0.1: 0.50000001 */
    assert_true(round_product_float(3, 1.0f, 2, MXP_ROUND_NEAREST_EVEN, NULL) == 3.0);
    assert_true(round_product_float(5, 1.0f, 2, MXP_ROUND_NEAREST_EVEN, NULL) == 4.0); /* 101 -> 100 */
    assert_true(round_product_float(7, 1.0f, 2, MXP_ROUND_NEAREST_EVEN, NULL) == 8.0); /* 111 -> 1000 */
    assert_true(round_product_float(-5, 1.0f, 2, MXP_ROUND_DOWN, NULL) == -6.0);
    /* and mxp_gemm on a 2 x 2 by 2 x 2, uint8 x int8 -> int32 with zero points */
    const uint8_t a[4] = { 1, 2, 3, 4 };
    const int8_t b[4] = { 5, -6, 7, 8 };
    int32_t c[4];
    mxp_gemm_opts o;
    memset(&o, 0, sizeof o);
    o.a_zero_point = 1;
    o.b_zero_point = -1;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 2, 1.0, a, MXP_U8, 2, b, MXP_S8, 2, 0.0, c, MXP_S32,
                              2, &o), MXP_OK);
    /* (A - 1) = [0 1; 2 3], (B + 1) = [6 -5; 8 9] */
    assert_int_equal(c[0], 8);
    assert_int_equal(c[1], 9);
    assert_int_equal(c[2], 36);
    assert_int_equal(c[3], 17);
}

/* ---- 2. shapes x transposes x zero points, int32 C ---------------------------- */

static const size_t shape_set[] = { 0, 1, 2, 3, 7, 31, 64, 65, 127, 131 };

static void test_int8_s32_is_exact_on_every_shape_transpose_and_zero_point(void **state)
{
    (void)state;
    const mxp_dtype ats[] = { MXP_U8, MXP_S8 };
    const int32_t zas[2][4] = { { 0, 128, 255, 1 }, { 0, -128, 127, 3 } };
    const int32_t zbs[] = { 0, -128, 127, -7 };
    const size_t ks[] = { 1, 5, 64, 131 };
    uint64_t seed = 100;
    for (size_t d = 0; d < NELEMS(ats); d++)
        for (int t = 0; t < 4; t++)
            for (size_t im = 0; im < NELEMS(shape_set); im++)
                for (size_t in = 0; in < NELEMS(shape_set); in++)
                    for (size_t ik = 0; ik < NELEMS(ks); ik++) {
                        icase c = base_case(ats[d], MXP_S32);
                        c.ta = trans_pairs[t][0];
                        c.tb = trans_pairs[t][1];
                        c.m = shape_set[im];
                        c.n = shape_set[in];
                        c.k = ks[ik];
                        c.opts.a_zero_point = zas[d][(im + ik) % 4];
                        c.opts.b_zero_point = zbs[(in + ik + (size_t)t) % 4];
                        c.seed = seed++;
                        check_case(&c);
                    }
}

/* Tiles one row or column short and over: MR/NR +-1 of every kernel (4 x 8,
 * 6 x 16, 8 x 48), an odd k and k = 1, and blocks beyond MC, KC (also K
 * not a multiple of 4 or 2, and the deeper blocks of tall C) and NC. */
static void test_int8_edge_tiles_and_cache_blocks_at_every_level(void **state)
{
    (void)state;
    const struct {
        size_t m, n, k;
    } shapes[] = {
        { 3, 7, 9 },   { 4, 8, 4 },    { 5, 9, 3 },     { 7, 47, 6 },   { 8, 48, 17 },   { 9, 49, 2 },
        { 17, 97, 33 }, { 65, 193, 257 }, { 200, 70, 600 }, { 7, 2100, 13 }, { 193, 50, 1029 }, { 385, 3, 5 },
        { 5, 15, 1 },  { 6, 16, 2 },    { 7, 17, 3 },    { 11, 31, 7 },  { 13, 33, 1 },   { 97, 41, 2049 },
        { 1030, 20, 2100 }, /* VNNI from 1025 rows: blocks of 96 rows and K 2048 */
        /* AMX (k >= 256, n >= 32): int8 A packed; uint8 A in place (k % 64 == 0), with a last tile of 6 and of
         * 17 rows read through the zero-padded copy */
        { 40, 64, 512 }, { 70, 40, 320 }, { 33, 32, 256 }, { 17, 33, 256 },
        /* one MC block of rows: B packed and used ~512 KiB of columns at a time (driver.c) */
        { 40, 1100, 1000 },
    };
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        uint64_t seed = 300;
        for (size_t s = 0; s < NELEMS(shapes); s++)
            for (int t = 0; t < 4; t++) {
                icase c = base_case(s % 2 ? MXP_S8 : MXP_U8, MXP_S32);
                c.ta = trans_pairs[t][0];
                c.tb = trans_pairs[t][1];
                c.m = shapes[s].m;
                c.n = shapes[s].n;
                c.k = shapes[s].k;
                c.opts.a_zero_point = s % 2 ? -3 : 200;
                c.opts.b_zero_point = t % 2 ? 9 : 0;
                c.pad_a = (size_t)t;
                c.pad_b = 2;
                c.pad_c = 1;
                c.seed = seed++;
                check_case(&c);
            }
    }
}

/* M = 1 (the GEMV path at AVX-512 levels, the tiled one below them): long
 * rows and columns with tails, every transpose pair, zero points, extreme
 * and random values, int32 / requantized int8 / dequantized float32 C. */
static void test_int8_one_row_at_every_level(void **state)
{
    (void)state;
    const size_t ns[] = { 4096 + 5, 33, 1 }, ks[] = { 1003, 4, 1 };
    const mxp_dtype cts[] = { MXP_S32, MXP_S8, MXP_F32 };
    const enum gen gens[] = { GEN_RANDOM, GEN_EXTREME, GEN_HIGH };
    float sc = 0.0123f;
    uint64_t seed = 900;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t s = 0; s < NELEMS(ns); s++)
            for (int t = 0; t < 4; t++)
                for (size_t g = 0; g < NELEMS(gens); g++) {
                    icase c = base_case(g % 2 ? MXP_S8 : MXP_U8, cts[(s + g + (size_t)t) % 3]);
                    c.ta = trans_pairs[t][0];
                    c.tb = trans_pairs[t][1];
                    c.m = 1;
                    c.n = ns[s];
                    c.k = ks[s];
                    c.gen = gens[g];
                    c.opts.a_zero_point = g % 2 ? -128 : 255;
                    c.opts.b_zero_point = t % 2 ? 127 : -128;
                    if (c.ct != MXP_S32) {
                        c.opts.scales = &sc;
                        c.opts.n_scales = 1;
                    }
                    c.pad_a = (size_t)t;
                    c.pad_b = 3;
                    c.seed = seed++;
                    check_case(&c);
                }
    }
}

typedef struct mnk {
    size_t m, n, k;
} mnk;

/* A case of the narrow-operand tests below: shape, transposes ta / tb
 * (trans_pairs rows), generator, A padded by t and B by pad_b, and where C
 * is not int32 the scale sc and C's zero point (100 for uint8). */
static icase narrow_case(mxp_dtype at, mxp_dtype ct, mnk shape, int ta, int tb, enum gen gen, const float *sc,
                         int t, size_t pad_b, uint64_t seed)
{
    icase c = base_case(at, ct);
    c.ta = trans_pairs[ta][0];
    c.tb = trans_pairs[tb][1];
    c.m = shape.m;
    c.n = shape.n;
    c.k = shape.k;
    c.gen = gen;
    if (c.ct != MXP_S32) {
        c.opts.scales = sc;
        c.opts.n_scales = 1;
        c.opts.c_zero_point = c.ct == MXP_U8 ? 100 : 0;
    }
    c.pad_a = (size_t)t;
    c.pad_b = pad_b;
    c.seed = seed;
    return c;
}

/* uint8 A below 128 (7-bit activations: torch's reduce_range) takes the
 * K-quad vpmaddubsw kernel at the K-pair kernel's levels (avx2, avx512):
 * exact sums against the reference at every level, on edge tiles and
 * blocks, every transpose, zero points, int32 / requantized / float C; and
 * the same with a few A values above 247, which take the K-pair kernel. */
static void test_int8_seven_bit_a_is_exact_at_every_level(void **state)
{
    (void)state;
    const mnk shapes[] = { { 2, 1, 1 }, { 5, 9, 3 }, { 6, 16, 4 }, { 7, 17, 9 }, { 13, 33, 130 }, { 97, 41, 2049 },
                           { 200, 70, 600 } };
    const mxp_dtype cts[] = { MXP_S32, MXP_U8, MXP_F32 };
    const int32_t zas[] = { 0, 127, 64, 255 };
    const float sc = 0.0071f;
    uint64_t seed = 2300;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t s = 0; s < NELEMS(shapes); s++)
            for (int t = 0; t < 4; t++)
                for (int g = 0; g < 2; g++) {
                    icase c = narrow_case(MXP_U8, cts[(s + (size_t)t) % 3], shapes[s], t, t, g ? GEN_A7_BUT : GEN_A7,
                                          &sc, t, 1, seed++);
                    c.opts.a_zero_point = zas[(s + (size_t)g) % 4];
                    c.opts.b_zero_point = t % 2 ? 0 : -5;
                    check_case(&c);
                }
    }
}

/* int8 B whose K-pairs all have |b0| + |b1| <= 128 (7-bit weights, and
 * narrower) takes the vpmaddubsw kernel whatever A holds -- checked while
 * packed where beta is 0, by a pass before from 64 rows of C on where it
 * is not: exact sums against the reference at every level, uint8 and int8
 * A at their ends, every transpose, odd K, zero points, int32 /
 * requantized / float C, beta 0 and 1; and the same with a few wide pairs
 * (the product started over, or never begun, with the K-pair kernel). */
static void test_int8_narrow_b_is_exact_at_every_level(void **state)
{
    (void)state;
    const mnk shapes[] = { { 2, 5, 8 }, { 64, 1, 1 }, { 64, 17, 9 }, { 65, 33, 130 }, { 97, 41, 2049 },
                           { 200, 70, 600 } };
    const mxp_dtype cts[] = { MXP_S32, MXP_U8, MXP_F32 };
    const float sc = 0.0013f;
    uint64_t seed = 2600;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t s = 0; s < NELEMS(shapes); s++)
            for (int t = 0; t < 4; t++)
                for (int g = 0; g < 2; g++) {
                    icase c = narrow_case(t / 2 ? MXP_S8 : MXP_U8, cts[(s + (size_t)t) % 3], shapes[s], t, (t + g) % 4,
                                          g ? GEN_NARROW_B_BUT : GEN_NARROW_B, &sc, t, 2, seed++);
                    c.beta = (t == 1 || t == 2) && c.ct != MXP_U8 ? 1.0 : 0.0;
                    c.opts.a_zero_point = c.at == MXP_S8 ? (g ? -128 : 3) : (g ? 255 : 0);
                    c.opts.b_zero_point = t % 2 ? 0 : 7;
                    check_case(&c);
                }
    }
}

/* ---- 3. leading dimensions with padding ----------------------------------- */

static void test_int8_padded_leading_dimensions_leave_padding_and_inputs_untouched(void **state)
{
    (void)state;
    const mxp_dtype cts[] = { MXP_S32, MXP_U8, MXP_S8, MXP_F32, MXP_BF16 };
    static const float sc = 0.01f;
    uint64_t seed = 400;
    for (size_t d = 0; d < NELEMS(cts); d++)
        for (int t = 0; t < 4; t++) {
            icase c = base_case(t % 2 ? MXP_S8 : MXP_U8, cts[d]);
            c.ta = trans_pairs[t][0];
            c.tb = trans_pairs[t][1];
            c.m = 13;
            c.n = 50;
            c.k = 37;
            c.pad_a = 5;
            c.pad_b = 3;
            c.pad_c = 7;
            if (cts[d] != MXP_S32) {
                c.opts.scales = &sc;
                c.opts.n_scales = 1;
            }
            c.opts.c_zero_point = cts[d] == MXP_U8 ? 100 : cts[d] == MXP_S8 ? -10 : 0;
            c.seed = seed++;
            check_case(&c);
        }
}

/* ---- 4. K at its limit: sums near +-2^31, raw sums that wrap ----------- */

static void test_int8_k_limit_is_exact_at_the_limit_and_refused_beyond(void **state)
{
    (void)state;
    const struct {
        mxp_dtype at;
        int32_t za, zb;
        size_t kmax;
    } lim[] = {
        { MXP_U8, 0, 0, 65793 },      /* 255 * 128 */
        { MXP_U8, 255, 127, 33025 },  /* 255 * 255 */
        { MXP_U8, 128, -128, 65793 }, /* 128 * 255 */
        { MXP_S8, 0, 0, 131071 },     /* 128 * 128 */
        { MXP_S8, 127, -128, 33025 },
    };
    for (size_t l = 0; l < NELEMS(lim); l++) {
        for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++)
            for (int g = 0; g < 2; g++) {
                assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
                icase c = base_case(lim[l].at, MXP_S32);
                c.m = 4;
                c.n = 5;
                c.k = lim[l].kmax;
                c.tb = l % 2 ? MXP_TRANS : MXP_NO_TRANS;
                c.opts.a_zero_point = lim[l].za;
                c.opts.b_zero_point = lim[l].zb;
                c.gen = g ? GEN_EXTREME : GEN_FAR; /* GEN_FAR: |sums| = dA dB K, just below 2^31 */
                c.seed = 500 + l;
                check_case(&c);
            }
        /* one more is refused, C untouched */
        const size_t k = lim[l].kmax + 1;
        uint8_t *a = calloc(k, 1);
        int8_t *b = calloc(k, 1);
        int32_t cv = 12345;
        assert_true(a && b);
        mxp_gemm_opts o;
        memset(&o, 0, sizeof o);
        o.a_zero_point = lim[l].za;
        o.b_zero_point = lim[l].zb;
        mxp_clear_error();
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 1, 1, k, 1.0, a, lim[l].at, k, b, MXP_S8, 1, 0.0, &cv,
                                  MXP_S32, 1, &o), MXP_ERR_SIZE_OVERFLOW);
        assert_non_null(strstr(mxp_last_error(), "k = "));
        assert_int_equal(cv, 12345);
        free(a);
        free(b);
    }
    /* the extremes by hand: 255 * 128 * 65793 = 2147483520 = 2^31 - 128 */
    const size_t k = 65793;
    uint8_t *a = malloc(k);
    int8_t *b = malloc(k);
    assert_true(a && b);
    memset(a, 255, k);
    memset(b, -128, k);
    int32_t cv = 0;
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 1, 1, k, 1.0, a, MXP_U8, k, b, MXP_S8, 1, 0.0, &cv,
                                  MXP_S32, 1, NULL), MXP_OK);
        assert_int_equal(cv, -2147483520);
    }
    free(a);
    free(b);
}

/* ---- 5. int32 C with beta = 1 ------------------------------------------------ */

static void test_int8_s32_beta_one_adds_and_saturates(void **state)
{
    (void)state;
    uint64_t seed = 600;
    for (int t = 0; t < 4; t++) {
        icase c = base_case(t < 2 ? MXP_U8 : MXP_S8, MXP_S32);
        c.ta = trans_pairs[t][0];
        c.tb = trans_pairs[t][1];
        c.m = 37;
        c.n = 53;
        c.k = 300;
        c.beta = 1.0;
        c.pad_c = 2;
        c.gen = GEN_EXTREME; /* |sums| ~ 300 * 2^14: C near the ends saturates */
        c.seed = seed++;
        check_case(&c);
        c.k = 1100; /* across K blocks (KC 256 and 1024): C added once */
        check_case(&c);
        c.k = 0; /* C unchanged */
        check_case(&c);
        c.beta = 0.0; /* C = 0 */
        check_case(&c);
    }
    /* float C: beta * C added once across K blocks too */
    static const float sc = 0.001f;
    icase c = base_case(MXP_S8, MXP_F32);
    c.m = 20;
    c.n = 30;
    c.k = 1100;
    c.beta = -0.75;
    c.opts.scales = &sc;
    c.opts.n_scales = 1;
    c.seed = seed;
    check_case(&c);
}

/* Stochastic rounding draws element i * n + j of the stream for C[i][j]
 * (with convert.index_offset added), as one mxp_convert of the row-major
 * values would: the same bits at every level and thread count. */
static void test_int8_stochastic_requantization_follows_the_element_order(void **state)
{
    (void)state;
    const size_t m = 37, n = 300, k = 50;
    static const float sc = 0x1p-6f; /* scale * acc is exact in float64 */
    uint8_t *a = malloc(m * k), *c = malloc(m * n), *want = malloc(m * n);
    int8_t *b = malloc(k * n);
    double *t = malloc(m * n * sizeof *t);
    int32_t *q = malloc(m * n * sizeof *q);
    assert_true(a && b && c && want && t && q);
    uint64_t s = prng_seed(1500);
    for (size_t i = 0; i < m * k; i++)
        a[i] = (uint8_t)prng_next(&s);
    for (size_t i = 0; i < k * n; i++)
        b[i] = (int8_t)prng_next(&s);
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            int64_t acc = 0;
            for (size_t p = 0; p < k; p++)
                acc += (int64_t)(a[i * k + p] - 7) * b[p * n + j];
            t[i * n + j] = (double)acc * sc;
        }
    mxp_gemm_opts o;
    memset(&o, 0, sizeof o);
    o.a_zero_point = 7;
    o.scales = &sc;
    o.n_scales = 1;
    o.c_zero_point = 100;
    o.convert.rounding = MXP_ROUND_STOCHASTIC;
    o.convert.seed = 42;
    o.convert.index_offset = 1000;
    assert_int_equal(mxp_convert(q, MXP_S32, t, MXP_F64, m * n, &o.convert), MXP_OK);
    for (size_t i = 0; i < m * n; i++)
        want[i] = (uint8_t)(q[i] + 100 < 0 ? 0 : q[i] + 100 > 255 ? 255 : q[i] + 100);
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++)
        for (int threads = 1; threads <= 2; threads++) {
            assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
            assert_int_equal(mxp_set_num_threads(threads), MXP_OK);
            memset(c, 0, m * n);
            assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, m, n, k, 1.0, a, MXP_U8, k, b, MXP_S8, n, 0.0, c,
                                      MXP_U8, n, &o), MXP_OK);
            for (size_t i = 0; i < m * n; i++)
                if (c[i] != want[i])
                    fail_msg("level %s, %d threads: C[%zu][%zu] = %d, want %d (t = %g)",
                             mxp_isa_name((mxp_isa)isa), threads, i / n, i % n, c[i], want[i], t[i]);
        }
    free(a);
    free(b);
    free(c);
    free(want);
    free(t);
    free(q);
}

/* ---- 6. requantization: int8/uint8 C -------------------------------------- */

static void test_int8_requantization_rounds_exactly_in_every_mode_and_saturates(void **state)
{
    (void)state;
    float col[97];
    uint64_t s = prng_seed(700);
    for (size_t j = 0; j < NELEMS(col); j++) /* negative, zero, odd 24-bit mantissas */
        col[j] = j == 5 ? 0.0f : j == 6 ? -0.0f : (float)prng_range(&s, -0.01, 0.01);
    static const float halves = 0.5f, third = 1.0f / 3, tiny = 0x1p-20f, big = 3.0f, odd = 0.0123456789f;
    const struct {
        const float *scales;
        size_t n_scales;
    } scales[] = { { &halves, 1 }, { &third, 1 }, { &tiny, 1 }, { &big, 1 }, { &odd, 1 }, { col, 97 }, { NULL, 0 } };
    const mxp_dtype cts[] = { MXP_U8, MXP_S8 };
    const int32_t zps[2][3] = { { 0, 128, 255 }, { -128, 0, 127 } };
    uint64_t seed = 710;
    for (size_t d = 0; d < NELEMS(cts); d++)
        for (size_t sc = 0; sc < NELEMS(scales); sc++)
            for (size_t r = 0; r <= NELEMS(det_modes); r++) {
                icase c = base_case(r % 2 ? MXP_S8 : MXP_U8, cts[d]);
                c.ta = trans_pairs[sc % 4][0];
                c.tb = trans_pairs[r % 4][1];
                c.m = 11;
                c.n = 97;
                c.k = sc == 0 ? 3 : 40;
                c.gen = sc == 0 ? GEN_SMALL : GEN_RANDOM; /* halves: small sums, many ties */
                c.opts.scales = scales[sc].scales;
                c.opts.n_scales = scales[sc].n_scales;
                c.opts.c_zero_point = zps[d][(sc + r) % 3];
                c.opts.a_zero_point = r % 2 ? -1 : 130;
                c.opts.b_zero_point = (int32_t)sc - 3;
                c.opts.convert.rounding = r < NELEMS(det_modes) ? det_modes[r] : MXP_ROUND_STOCHASTIC;
                c.opts.convert.seed = 99;
                c.seed = seed++;
                check_case(&c);
            }
}

/* Sums near 2^31 with a full 24-bit scale mantissa: acc * M needs 55 bits,
 * the float64 product alone would round twice. */
static void test_int8_large_sums_round_once_at_every_level(void **state)
{
    (void)state;
    static const float s_int = 1e-7f, s_f32 = 0.1f, s_bf16 = 1.2345678e-3f, s_f64 = 3.3333333e-3f;
    const struct {
        mxp_dtype ct;
        const float *scale;
    } outs[] = { { MXP_S8, &s_int }, { MXP_U8, &s_int }, { MXP_F32, &s_f32 }, { MXP_BF16, &s_bf16 },
                 { MXP_F64, &s_f64 } };
    const int top = (int)mxp_isa_supported();
    for (int isa = 0; isa <= top; isa += top ? top : 1) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t o = 0; o < NELEMS(outs); o++)
            for (size_t r = 0; r < NELEMS(det_modes); r++) {
                icase c = base_case(MXP_U8, outs[o].ct);
                c.m = 2;
                c.n = 40;
                c.k = 33025;
                c.tb = MXP_TRANS;
                c.opts.a_zero_point = 255; /* A - za in [-255, 0], B - zb in [0, 255] */
                c.opts.b_zero_point = -128;
                c.opts.c_zero_point = outs[o].ct == MXP_S8 ? 127 : outs[o].ct == MXP_U8 ? 255 : 0;
                c.opts.scales = outs[o].scale;
                c.opts.n_scales = 1;
                c.opts.convert.rounding = det_modes[r];
                c.gen = GEN_HIGH; /* sums from -2^31 to -2^31 + 2^27 */
                c.seed = 800 + r;
                check_case(&c);
            }
    }
}

/* Sums and scales found by a search so that acc * M (scale = M 2^E) needs
 * 54 bits and lies one unit above a tie of the target: a float64 product
 * truncated to 53 bits, instead of rounded to odd, would land on the tie
 * and round to even the wrong way. */
static void test_int8_products_beyond_53_bits_keep_their_sticky_bit(void **state)
{
    (void)state;
    const struct {
        int64_t acc;
        int64_t m;
        int e;
        mxp_dtype ct;
        int bits; /* the target's: shift = bits of acc m - bits */
    } cases[] = {
        { 2118527329, 8403617, -47, MXP_U8, 7 },    /* acc m = 253 * 2^46 + 1: t = 126.5 + 2^-47 */
        { -2118527329, 8403617, -47, MXP_S8, 7 },
        { 1349600177, 11609425, -40, MXP_F32, 24 },  /* (2Q + 1) 2^29 + 1 */
        { -860772331, 16718019, -60, MXP_BF16, 8 }, /* (2Q + 1) 2^45 + 1 */
    };
    const size_t k = 33025;
    uint8_t *a = malloc(k);
    int8_t *b = malloc(k);
    assert_true(a && b);
    const int top = (int)mxp_isa_supported();
    for (size_t i = 0; i < NELEMS(cases); i++) {
        const int64_t acc = cases[i].acc, sgn = acc < 0 ? -1 : 1, mag = acc * sgn;
        const int64_t n = mag * cases[i].m;
        enum rest rest;
        floor_shift(n - 1, 54 - cases[i].bits, &rest);
        assert_int_equal(rest, HALF); /* the case is what it claims */
        /* acc = sum a (b - zb): 255 * 255 terms, then the remainder */
        const int8_t zb = sgn > 0 ? -128 : 127;
        memset(a, 0, k);
        memset(b, zb, k);
        const int64_t full = mag / 65025, rem = mag % 65025;
        for (int64_t p = 0; p < full; p++) {
            a[p] = 255;
            b[p] = (int8_t)(zb + sgn * 255);
        }
        a[full] = 255;
        b[full] = (int8_t)(zb + sgn * (rem / 255));
        a[full + 1] = (uint8_t)(rem % 255);
        b[full + 1] = (int8_t)(zb + sgn);
        const float scale = ldexpf((float)cases[i].m, cases[i].e);
        mxp_gemm_opts o;
        memset(&o, 0, sizeof o);
        o.b_zero_point = zb;
        o.scales = &scale;
        o.n_scales = 1;
        for (int isa = 0; isa <= top; isa += top ? top : 1)
            for (size_t r = 0; r < NELEMS(det_modes); r++) {
                assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
                o.convert.rounding = det_modes[r];
                unsigned char c[8];
                assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 1, 1, k, 1.0, a, MXP_U8, k, b, MXP_S8, 1, 0.0,
                                          c, cases[i].ct, 1, &o), MXP_OK);
                const bool is_int = cases[i].ct == MXP_U8 || cases[i].ct == MXP_S8;
                double got, exact;
                assert_int_equal(mxp_convert(&got, MXP_F64, c, cases[i].ct, 1, NULL), MXP_OK);
                if (is_int)
                    exact = (double)round_product_int(acc, scale, det_modes[r], NULL);
                else
                    exact = round_product_float(acc, scale, cases[i].bits, det_modes[r], NULL);
                if (got != exact)
                    fail_msg("acc %lld * scale %a -> %s, %s, level %s: %.17g, want %.17g", (long long)acc,
                             (double)scale, mxp_dtype_name(cases[i].ct), mxp_rounding_name(det_modes[r]),
                             mxp_isa_name(mxp_isa_current()), got, exact);
            }
    }
    free(a);
    free(b);
}

/* ---- 7. dequantization: float C -------------------------------------------- */

static void test_int8_dequantization_to_float_is_correctly_rounded(void **state)
{
    (void)state;
    float col[70];
    uint64_t s = prng_seed(900);
    for (size_t j = 0; j < NELEMS(col); j++)
        col[j] = j == 3 ? -0.0f : (float)prng_range(&s, -1e-3, 1e-3);
    static const float one = 1.0f, odd = 3.3333333e-4f;
    const struct {
        const float *scales;
        size_t n;
    } scales[] = { { NULL, 0 }, { &one, 1 }, { &odd, 1 }, { col, 70 } };
    const mxp_dtype cts[] = { MXP_F32, MXP_BF16, MXP_F64 };
    uint64_t seed = 910;
    for (size_t d = 0; d < NELEMS(cts); d++)
        for (size_t sc = 0; sc < NELEMS(scales); sc++)
            for (size_t r = 0; r <= NELEMS(det_modes); r++) {
                icase c = base_case(r % 2 ? MXP_S8 : MXP_U8, cts[d]);
                c.ta = trans_pairs[r % 4][0];
                c.tb = trans_pairs[sc % 4][1];
                c.m = 9;
                c.n = 70;
                c.k = 130;
                c.opts.scales = scales[sc].scales;
                c.opts.n_scales = scales[sc].n;
                c.opts.a_zero_point = r % 2 ? 5 : 77;
                c.opts.b_zero_point = -20;
                c.opts.convert.rounding = r < NELEMS(det_modes) ? det_modes[r] : MXP_ROUND_STOCHASTIC;
                c.seed = seed++;
                check_case(&c);
            }
}

/* ---- 8. alpha, beta and the epilogue ------------------------------------- */

static void test_int8_alpha_beta_and_epilogue_within_tolerance(void **state)
{
    (void)state;
    float bias_row[23], bias_col[61], col[61];
    uint64_t s = prng_seed(1000);
    for (size_t i = 0; i < NELEMS(bias_row); i++)
        bias_row[i] = (float)prng_range(&s, -3, 3);
    for (size_t j = 0; j < NELEMS(bias_col); j++) {
        bias_col[j] = (float)prng_range(&s, -50, 50);
        col[j] = (float)prng_range(&s, 0.001, 0.02);
    }
    static const float sc = 0.004f;
    const mxp_dtype cts[] = { MXP_F32, MXP_BF16, MXP_F64, MXP_F16, MXP_U8, MXP_S8 };
    const mxp_activation acts[] = { MXP_ACT_NONE, MXP_ACT_RELU, MXP_ACT_GELU, MXP_ACT_GELU_TANH, MXP_ACT_SILU };
    uint64_t seed = 1010;
    for (size_t d = 0; d < NELEMS(cts); d++)
        for (size_t a = 0; a < NELEMS(acts); a++)
            for (int v = 0; v < 4; v++) {
                const bool is_int = cts[d] == MXP_U8 || cts[d] == MXP_S8;
                icase c = base_case(v % 2 ? MXP_S8 : MXP_U8, cts[d]);
                c.ta = trans_pairs[v][0];
                c.tb = trans_pairs[((size_t)v + a) % 4][1];
                c.m = 23;
                c.n = 61;
                c.k = 70;
                c.alpha = v == 0 ? 1.0 : v == 1 ? 0.5 : v == 2 ? -2.0 : 0.0;
                c.beta = is_int || v == 0 ? 0.0 : v == 1 ? 1.0 : -0.75;
                c.opts.scales = v % 2 ? col : &sc;
                c.opts.n_scales = v % 2 ? 61 : 1;
                c.opts.a_zero_point = 20;
                c.opts.b_zero_point = 1;
                c.opts.c_zero_point = cts[d] == MXP_U8 ? 128 : 0;
                c.opts.activation = acts[a];
                if (a != 1 || v != 0) { /* relu alone, v 0: no bias */
                    c.opts.bias = v < 2 ? (const void *)bias_col : (const void *)bias_row;
                    c.opts.bias_dtype = MXP_F32;
                    c.opts.bias_kind = v < 2 ? MXP_BIAS_PER_COL : MXP_BIAS_PER_ROW;
                }
                c.opts.clamp = a == 2;
                c.opts.clamp_lo = -20;
                c.opts.clamp_hi = 90;
                c.seed = seed++;
                check_case(&c);
            }
}

/* ---- 9. levels and threads ------------------------------------------------ */

static unsigned char *run_at(const icase *c, int isa, int threads)
{
    assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
    assert_int_equal(mxp_set_num_threads(threads), MXP_OK);
    return run_case(c);
}

static icase mixed_case(size_t which, size_t m, size_t n, size_t k, const float *col)
{
    const mxp_dtype cts[] = { MXP_S32, MXP_U8, MXP_S8, MXP_F32, MXP_BF16 };
    icase c = base_case(which % 2 ? MXP_S8 : MXP_U8, cts[which % NELEMS(cts)]);
    c.ta = trans_pairs[which % 4][0];
    c.tb = trans_pairs[which / 2 % 4][1];
    c.m = m;
    c.n = n;
    c.k = k;
    c.opts.a_zero_point = which % 2 ? -100 : 100;
    c.opts.b_zero_point = (int32_t)which - 5;
    if (c.ct != MXP_S32) {
        c.opts.scales = col;
        c.opts.n_scales = n;
        c.opts.c_zero_point = c.ct == MXP_U8 ? 128 : 0;
        c.opts.convert.rounding = MXP_ROUND_STOCHASTIC; /* the stream is tied to C's elements */
        c.opts.convert.seed = 5;
    }
    c.pad_c = 3;
    c.seed = 1100 + which;
    return c;
}

static void test_int8_every_level_gives_the_same_bits(void **state)
{
    (void)state;
    float col[300];
    uint64_t s = prng_seed(1200);
    for (size_t j = 0; j < NELEMS(col); j++)
        col[j] = (float)prng_range(&s, 1e-4, 3e-3);
    const struct {
        size_t m, n, k;
    } shapes[] = { { 1, 1, 1 }, { 9, 49, 7 }, { 70, 300, 129 }, { 200, 51, 520 } };
    for (size_t w = 0; w < 10; w++) {
        const icase c = mixed_case(w, shapes[w % 4].m, shapes[w % 4].n, shapes[w % 4].k, col);
        unsigned char *ref = run_at(&c, 0, 1);
        for (int isa = 1; isa <= (int)mxp_isa_supported(); isa++) {
            unsigned char *got = run_at(&c, isa, 1);
            if (memcmp(got, ref, c.m * ld_for(c.n, c.pad_c) * mxp_dtype_itemsize(c.ct)))
                fail_msg("case %zu: level %s differs from scalar", w, mxp_isa_name((mxp_isa)isa));
            free(got);
        }
        free(ref);
    }
}

static void test_int8_results_identical_for_any_thread_count(void **state)
{
    (void)state;
    static float col[8200];
    uint64_t s = prng_seed(1300);
    for (size_t j = 0; j < NELEMS(col); j++)
        col[j] = (float)prng_range(&s, 1e-4, 3e-3);
    const int top = (int)mxp_isa_supported();
    /* several MC blocks, a slab of columns per thread; two slabs of two NC
     * blocks each; columns too few for slabs (a shared B~, rows split) */
    const size_t shapes[][3] = { { 450, 260, 140 }, { 20, 8200, 40 }, { 450, 60, 300 } };
    for (size_t w = 0; w < 9; w++) {
        const icase c = mixed_case(w, shapes[w % 3][0], shapes[w % 3][1], shapes[w % 3][2], col);
        unsigned char *one = run_at(&c, top, 1);
        for (int t = 2; t <= 3; t++) {
            unsigned char *got = run_at(&c, top, t);
            if (memcmp(got, one, c.m * ld_for(c.n, c.pad_c) * mxp_dtype_itemsize(c.ct)))
                fail_msg("case %zu: %d threads differ from one", w, t);
            free(got);
        }
        free(one);
    }
}

/* ---- 10. k = 0, alpha = 0 ---------------------------------------------------- */

static void test_int8_k_zero_and_alpha_zero_give_the_finished_zero_sums(void **state)
{
    (void)state;
    static const float sc = 0.5f, bias[4] = { 1.5f, -2.5f, 300.0f, -7.25f };
    const mxp_dtype cts[] = { MXP_S32, MXP_U8, MXP_S8, MXP_F32 };
    for (size_t d = 0; d < NELEMS(cts); d++)
        for (int alpha0 = 0; alpha0 < 2; alpha0++) {
            if (cts[d] == MXP_S32 && alpha0)
                continue; /* int32 C: alpha must be 1 */
            icase c = base_case(MXP_U8, cts[d]);
            c.m = 3;
            c.n = 4;
            c.k = alpha0 ? 6 : 0;
            c.alpha = alpha0 ? 0.0 : 1.0;
            c.beta = cts[d] == MXP_F32 ? 0.5 : 0.0;
            if (cts[d] != MXP_S32) {
                c.opts.scales = &sc;
                c.opts.n_scales = 1;
                c.opts.bias = bias;
                c.opts.bias_dtype = MXP_F32;
                c.opts.bias_kind = MXP_BIAS_PER_COL;
                c.opts.c_zero_point = cts[d] == MXP_U8 ? 3 : 0;
            }
            check_case(&c);
        }
    /* m or n zero: nothing written, NULL allowed */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 0, 4, 5, 1.0, NULL, MXP_U8, 5, NULL, MXP_S8, 4, 0.0, NULL,
                              MXP_S32, 4, NULL), MXP_OK);
}

/* ---- 11. bad arguments ------------------------------------------------------ */

typedef struct bad_call {
    const char *what;
    mxp_status want;
    const char *word;
    mxp_dtype at, bt, ct;
    double alpha, beta;
    bool null_a, null_b, null_c;
    size_t lda;
    const mxp_gemm_opts *opts;
} bad_call;

static void test_int8_bad_arguments_give_a_status_and_a_sentence_and_leave_c_untouched(void **state)
{
    (void)state;
    static unsigned char a[64], b[64], c[256];
    static const float sc[4] = { 1, 2, 3, 4 }, nan_sc[2] = { 1.0f, NAN }, f32_bias[4] = { 0 };
    static const mxp_gemm_opts scales0 = { .scales = sc, .n_scales = 0 };
    static const mxp_gemm_opts scales2 = { .scales = sc, .n_scales = 2 };
    static const mxp_gemm_opts scales_null = { .n_scales = 3 };
    static const mxp_gemm_opts scales_nan = { .scales = nan_sc + 1, .n_scales = 1 };
    static const mxp_gemm_opts with_scales = { .scales = sc, .n_scales = 1 };
    static const mxp_gemm_opts with_bias = { .bias = f32_bias, .bias_dtype = MXP_F32,
                                             .bias_kind = MXP_BIAS_PER_COL };
    static const mxp_gemm_opts relu = { .activation = MXP_ACT_RELU };
    static const mxp_gemm_opts za256 = { .a_zero_point = 256 }, za_neg = { .a_zero_point = -1 };
    static const mxp_gemm_opts zb128 = { .b_zero_point = 128 }, zc256 = { .c_zero_point = 256 };
    static const mxp_gemm_opts zc_neg = { .c_zero_point = -129 }, zc5 = { .c_zero_point = 5 };
    static const mxp_gemm_opts za128 = { .a_zero_point = 128 };
    static const mxp_gemm_opts acc_f32 = { .acc_dtype = MXP_F32 }, acc_s32 = { .acc_dtype = MXP_S32 };
    const mxp_dtype U8 = MXP_U8, S8 = MXP_S8, S32 = MXP_S32, F32 = MXP_F32;
    const bad_call calls[] = {
        /* types */
        { "int8 x float32", MXP_ERR_UNSUPPORTED, "B", S8, F32, F32, 1, 0, 0, 0, 0, 5, NULL },
        { "float32 x int8", MXP_ERR_UNSUPPORTED, "A", F32, S8, F32, 1, 0, 0, 0, 0, 5, NULL },
        { "uint8 x uint8", MXP_ERR_UNSUPPORTED, "B", U8, U8, S32, 1, 0, 0, 0, 0, 5, NULL },
        { "int8 x uint8", MXP_ERR_UNSUPPORTED, "B", S8, U8, S32, 1, 0, 0, 0, 0, 5, NULL },
        { "int16 C", MXP_ERR_UNSUPPORTED, "C", U8, S8, MXP_S16, 1, 0, 0, 0, 0, 5, NULL },
        { "uint32 C", MXP_ERR_UNSUPPORTED, "C", U8, S8, MXP_U32, 1, 0, 0, 0, 0, 5, NULL },
        { "int32 A", MXP_ERR_UNSUPPORTED, "A", S32, S8, S32, 1, 0, 0, 0, 0, 5, NULL },
        { "float x float -> int8", MXP_ERR_UNSUPPORTED, "C", F32, F32, S8, 1, 0, 0, 0, 0, 5, NULL },
        { "float x float -> int32", MXP_ERR_UNSUPPORTED, "C", F32, F32, S32, 1, 0, 0, 0, 0, 5, NULL },
        { "acc float32", MXP_ERR_UNSUPPORTED, "accumulator", U8, S8, S32, 1, 0, 0, 0, 0, 5, &acc_f32 },
        { "acc int32 for floats", MXP_ERR_UNSUPPORTED, "accumulator", F32, F32, F32, 1, 0, 0, 0, 0, 5, &acc_s32 },
        /* alpha and beta */
        { "alpha 2, int32 C", MXP_ERR_UNSUPPORTED, "alpha", U8, S8, S32, 2, 0, 0, 0, 0, 5, NULL },
        { "beta 0.5, int32 C", MXP_ERR_UNSUPPORTED, "beta", U8, S8, S32, 1, 0.5, 0, 0, 0, 5, NULL },
        { "beta 1, uint8 C", MXP_ERR_UNSUPPORTED, "beta", U8, S8, U8, 1, 1, 0, 0, 0, 5, NULL },
        /* scales */
        { "scales, int32 C", MXP_ERR_UNSUPPORTED, "scales", U8, S8, S32, 1, 0, 0, 0, 0, 5, &with_scales },
        { "n_scales 0", MXP_ERR_INVALID_ARGUMENT, "n_scales", U8, S8, U8, 1, 0, 0, 0, 0, 5, &scales0 },
        { "n_scales 2 for n 4", MXP_ERR_INVALID_ARGUMENT, "n_scales", U8, S8, F32, 1, 0, 0, 0, 0, 5, &scales2 },
        { "n_scales without scales", MXP_ERR_INVALID_ARGUMENT, "n_scales", U8, S8, S8, 1, 0, 0, 0, 0, 5,
          &scales_null },
        { "NaN scale", MXP_ERR_INVALID_ARGUMENT, "scales", U8, S8, S8, 1, 0, 0, 0, 0, 5, &scales_nan },
        /* epilogue */
        { "bias, int32 C", MXP_ERR_UNSUPPORTED, "epilogue", U8, S8, S32, 1, 0, 0, 0, 0, 5, &with_bias },
        { "relu, int32 C", MXP_ERR_UNSUPPORTED, "epilogue", S8, S8, S32, 1, 0, 0, 0, 0, 5, &relu },
        /* zero points */
        { "a_zero_point 256", MXP_ERR_INVALID_ARGUMENT, "a_zero_point", U8, S8, S32, 1, 0, 0, 0, 0, 5, &za256 },
        { "a_zero_point -1, uint8", MXP_ERR_INVALID_ARGUMENT, "a_zero_point", U8, S8, S32, 1, 0, 0, 0, 0, 5,
          &za_neg },
        { "a_zero_point 128, int8", MXP_ERR_INVALID_ARGUMENT, "a_zero_point", S8, S8, S32, 1, 0, 0, 0, 0, 5,
          &za128 },
        { "b_zero_point 128", MXP_ERR_INVALID_ARGUMENT, "b_zero_point", U8, S8, S32, 1, 0, 0, 0, 0, 5, &zb128 },
        { "c_zero_point 256", MXP_ERR_INVALID_ARGUMENT, "c_zero_point", U8, S8, U8, 1, 0, 0, 0, 0, 5, &zc256 },
        { "c_zero_point -129", MXP_ERR_INVALID_ARGUMENT, "c_zero_point", U8, S8, S8, 1, 0, 0, 0, 0, 5, &zc_neg },
        { "c_zero_point, int32 C", MXP_ERR_INVALID_ARGUMENT, "c_zero_point", U8, S8, S32, 1, 0, 0, 0, 0, 5, &zc5 },
        { "c_zero_point, float C", MXP_ERR_INVALID_ARGUMENT, "c_zero_point", U8, S8, F32, 1, 0, 0, 0, 0, 5, &zc5 },
        /* pointers and leading dimensions */
        { "a NULL", MXP_ERR_INVALID_ARGUMENT, "a", U8, S8, S32, 1, 0, 1, 0, 0, 5, NULL },
        { "b NULL", MXP_ERR_INVALID_ARGUMENT, "b", U8, S8, S32, 1, 0, 0, 1, 0, 5, NULL },
        { "c NULL", MXP_ERR_INVALID_ARGUMENT, "c", U8, S8, U8, 1, 0, 0, 0, 1, 5, NULL },
        { "lda < k", MXP_ERR_INVALID_ARGUMENT, "lda", S8, S8, S32, 1, 0, 0, 0, 0, 4, NULL },
    };
    int wrong = 0;
    for (size_t i = 0; i < NELEMS(calls); i++) {
        const bad_call *bc = &calls[i];
        memset(c, 0x5a, sizeof c);
        mxp_clear_error();
        const mxp_status st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 3, 4, 5, bc->alpha, bc->null_a ? NULL : a, bc->at,
                                       bc->lda, bc->null_b ? NULL : b, bc->bt, 4, bc->beta, bc->null_c ? NULL : c,
                                       bc->ct, 4, bc->opts);
        const char *msg = mxp_last_error();
        bool ok = true;
        if (st != bc->want) {
            print_error("%s: got %s (\"%s\"), want %s\n", bc->what, mxp_status_str(st), msg, mxp_status_str(bc->want));
            ok = false;
        } else if (!mentions(msg, bc->word)) {
            print_error("%s: the message \"%s\" does not name '%s'\n", bc->what, msg, bc->word);
            ok = false;
        }
        for (size_t j = 0; j < sizeof c && ok; j++)
            if (c[j] != 0x5a) {
                print_error("%s: C byte %zu was written\n", bc->what, j);
                ok = false;
            }
        wrong += !ok;
    }
    if (wrong)
        fail_msg("%d of %zu bad calls were not refused as documented", wrong, NELEMS(calls));
}

/* ---- 12. allocation failures ----------------------------------------------- */

typedef struct alloc_job {
    icase c;
    unsigned char *a, *b, *cv, *c_init, *c_want;
    size_t lda, ldb, ldc, c_bytes;
} alloc_job;

static alloc_job alloc_jobs[5];
static float alloc_scales[300];

static mxp_status alloc_job_run(alloc_job *j)
{
    memcpy(j->cv, j->c_init, j->c_bytes);
    return mxp_gemm(j->c.ta, j->c.tb, j->c.m, j->c.n, j->c.k, j->c.alpha, j->a, j->c.at, j->lda, j->b, MXP_S8, j->ldb,
                    j->c.beta, j->cv, j->c.ct, j->ldc, &j->c.opts);
}

static mxp_status int8_workload(void)
{
    for (size_t i = 0; i < NELEMS(alloc_jobs); i++) {
        alloc_job *j = &alloc_jobs[i];
        const mxp_status st = alloc_job_run(j);
        if (st != MXP_OK) {
            if (memcmp(j->cv, j->c_init, j->c_bytes))
                fail_msg("job %zu: %s, but C was written", i, mxp_status_str(st));
            return st;
        }
        if (memcmp(j->cv, j->c_want, j->c_bytes))
            fail_msg("job %zu: the result after earlier failed attempts differs", i);
    }
    return MXP_OK;
}

static void test_int8_every_allocation_failure_is_reported_and_leaves_c_untouched(void **state)
{
    (void)state;
    for (size_t j = 0; j < NELEMS(alloc_scales); j++)
        alloc_scales[j] = 0.001f * (float)(j % 7 + 1);
    const struct {
        mxp_dtype at, ct;
        size_t m, n, k;
        double beta;
        size_t n_scales;
    } spec[NELEMS(alloc_jobs)] = {
        { MXP_U8, MXP_S32, 70, 70, 70, 0, 0 },    /* straight into C */
        { MXP_S8, MXP_S32, 30, 40, 600, 1, 0 },   /* beta 1: workspace */
        { MXP_U8, MXP_U8, 50, 300, 90, 0, 300 },  /* per-column scales */
        { MXP_S8, MXP_F32, 9, 2100, 5, 0.5, 1 },  /* two NC blocks */
        { MXP_U8, MXP_S8, 450, 100, 200, 0, 1 },  /* threaded */
    };
    uint64_t s = prng_seed(1400);
    for (size_t i = 0; i < NELEMS(alloc_jobs); i++) {
        alloc_job *j = &alloc_jobs[i];
        j->c = base_case(spec[i].at, spec[i].ct);
        j->c.ta = (mxp_trans)(i % 2);
        j->c.tb = (mxp_trans)(i / 2 % 2);
        j->c.m = spec[i].m;
        j->c.n = spec[i].n;
        j->c.k = spec[i].k;
        j->c.beta = spec[i].beta;
        j->c.opts.a_zero_point = 3;
        j->c.opts.b_zero_point = -2;
        j->c.opts.scales = spec[i].n_scales ? alloc_scales : NULL;
        j->c.opts.n_scales = spec[i].n_scales;
        j->lda = (j->c.ta ? j->c.m : j->c.k) + 1;
        j->ldb = (j->c.tb ? j->c.k : j->c.n) + 2;
        j->ldc = j->c.n + 3;
        const size_t na = (j->c.ta ? j->c.k : j->c.m) * j->lda, nb = (j->c.tb ? j->c.n : j->c.k) * j->ldb;
        j->c_bytes = j->c.m * j->ldc * mxp_dtype_itemsize(j->c.ct);
        j->a = malloc(na);
        j->b = malloc(nb);
        j->cv = malloc(j->c_bytes);
        j->c_init = malloc(j->c_bytes);
        j->c_want = malloc(j->c_bytes);
        assert_true(j->a && j->b && j->cv && j->c_init && j->c_want);
        for (size_t q = 0; q < na; q++)
            j->a[q] = (unsigned char)prng_next(&s);
        for (size_t q = 0; q < nb; q++)
            j->b[q] = (unsigned char)prng_next(&s);
        for (size_t q = 0; q < j->c_bytes; q++)
            j->c_init[q] = (unsigned char)(q % 4 == 3 ? 0x3c : prng_next(&s)); /* finite float32 */
        assert_int_equal(alloc_job_run(j), MXP_OK);
        memcpy(j->c_want, j->cv, j->c_bytes);
    }
    const int failures = check_every_allocation_failure(int8_workload);
    assert_int_equal(mxp_set_num_threads(3), MXP_OK);
    const int failures3 = check_every_allocation_failure(int8_workload);
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
    print_message("integer mxp_gemm workload: %d allocation failures checked (%d with 3 threads)\n", failures,
                  failures3);
    assert_true(failures >= 5);
    for (size_t i = 0; i < NELEMS(alloc_jobs); i++) {
        alloc_job *j = &alloc_jobs[i];
        free(j->a);
        free(j->b);
        free(j->cv);
        free(j->c_init);
        free(j->c_want);
    }
}

/* ---- 13. kernel names -------------------------------------------------------- */

static void test_int8_kernel_name_names_the_kernel_or_says_invalid(void **state)
{
    (void)state;
    static const mxp_gemm_opts acc32 = { .acc_dtype = MXP_S32 }, accf = { .acc_dtype = MXP_F32 };
    for (int isa = 0; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        const char *u8 = mxp_gemm_kernel_name(MXP_U8, MXP_S8, NULL);
        const mxp_isa level = mxp_isa_current(); /* isa, or less under MXP_ISA */
        print_message("level %s: %s\n", mxp_isa_name(level), u8);
        assert_non_null(strstr(u8, "u8s8_gemm_"));
        assert_string_equal(mxp_gemm_kernel_name(MXP_S8, MXP_S8, NULL), u8);
        assert_string_equal(mxp_gemm_kernel_name(MXP_U8, MXP_S8, &acc32), u8);
        if (level >= MXP_ISA_AMX)
            assert_non_null(strstr(u8, "__amx"));
        else if (level >= MXP_ISA_AVX512BF16)
            assert_non_null(strstr(u8, "avx512vnni"));
        else if (level >= MXP_ISA_AVX2)
            assert_non_null(strstr(u8, "avx2"));
        if (level == MXP_ISA_SCALAR)
            assert_non_null(strstr(u8, "scalar"));
    }
    assert_string_equal(mxp_gemm_kernel_name(MXP_U8, MXP_U8, NULL), "invalid");
    assert_string_equal(mxp_gemm_kernel_name(MXP_S8, MXP_F32, NULL), "invalid");
    assert_string_equal(mxp_gemm_kernel_name(MXP_F32, MXP_S8, NULL), "invalid");
    assert_string_equal(mxp_gemm_kernel_name(MXP_U8, MXP_S8, &accf), "invalid");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_int8_reference_rounding_is_right, restore_defaults),
        cmocka_unit_test_teardown(test_int8_s32_is_exact_on_every_shape_transpose_and_zero_point, restore_defaults),
        cmocka_unit_test_teardown(test_int8_edge_tiles_and_cache_blocks_at_every_level, restore_defaults),
        cmocka_unit_test_teardown(test_int8_one_row_at_every_level, restore_defaults),
        cmocka_unit_test_teardown(test_int8_seven_bit_a_is_exact_at_every_level, restore_defaults),
        cmocka_unit_test_teardown(test_int8_narrow_b_is_exact_at_every_level, restore_defaults),
        cmocka_unit_test_teardown(test_int8_padded_leading_dimensions_leave_padding_and_inputs_untouched,
                                  restore_defaults),
        cmocka_unit_test_teardown(test_int8_k_limit_is_exact_at_the_limit_and_refused_beyond, restore_defaults),
        cmocka_unit_test_teardown(test_int8_s32_beta_one_adds_and_saturates, restore_defaults),
        cmocka_unit_test_teardown(test_int8_stochastic_requantization_follows_the_element_order, restore_defaults),
        cmocka_unit_test_teardown(test_int8_requantization_rounds_exactly_in_every_mode_and_saturates,
                                  restore_defaults),
        cmocka_unit_test_teardown(test_int8_large_sums_round_once_at_every_level, restore_defaults),
        cmocka_unit_test_teardown(test_int8_products_beyond_53_bits_keep_their_sticky_bit, restore_defaults),
        cmocka_unit_test_teardown(test_int8_dequantization_to_float_is_correctly_rounded, restore_defaults),
        cmocka_unit_test_teardown(test_int8_alpha_beta_and_epilogue_within_tolerance, restore_defaults),
        cmocka_unit_test_teardown(test_int8_every_level_gives_the_same_bits, restore_defaults),
        cmocka_unit_test_teardown(test_int8_results_identical_for_any_thread_count, restore_defaults),
        cmocka_unit_test_teardown(test_int8_k_zero_and_alpha_zero_give_the_finished_zero_sums, restore_defaults),
        cmocka_unit_test_teardown(test_int8_bad_arguments_give_a_status_and_a_sentence_and_leave_c_untouched,
                                  restore_defaults),
        cmocka_unit_test_teardown(test_int8_every_allocation_failure_is_reported_and_leaves_c_untouched,
                                  restore_defaults),
        cmocka_unit_test_teardown(test_int8_kernel_name_names_the_kernel_or_says_invalid, restore_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
