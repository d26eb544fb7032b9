/* Conversions without a kernel of their own, as steps through a wider
 * type a block at a time (src/convert/convert.c calls them where no kernel
 * and no table serves): two kernels through float32 (exact sources),
 * float64 through float32 rounded to odd, and the wide integers (int16 ..
 * uint64) from and to the other types through float64, and into each
 * other.  docs/conversions.md, "Kernels and dispatch" and "Integers and
 * bool". */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "convert/convert-route.h"
#include "core/element-bits.h"
#include "mxp/cpu.h"

/* The caller's arrays need not be aligned to their element size: every
 * access to them below goes through these (core/element-bits.h: memcpy of
 * a constant size, one move). */
static inline __attribute__((always_inline)) uint64_t load_bits(const void *p, size_t i, size_t size)
{
    return mxp_element_bits((const unsigned char *)p + i * size, size);
}

static inline __attribute__((always_inline)) void store_bits(void *p, size_t i, size_t size, uint64_t v)
{
    mxp_element_set_bits((unsigned char *)p + i * size, size, v);
}

/* Sources that float32 holds exactly: converting through float32 is then
 * still one rounding from the exact value (NaNs keep sign and top payload
 * bits either way; widening never overflows), so a pair without a kernel of
 * its own runs as two: widen a block into float32 in L1, convert that. */
static int widens_to_f32_exactly(mxp_dtype t)
{
    /* every 8-bit type holds at most 8 significant bits inside float32's range (e8m0's 2^-127 a float32
     * subnormal) */
    return t == MXP_BF16 || t == MXP_F16 || (mxp_dtype_itemsize(t) == 1 && t != MXP_BOOL);
}

typedef struct cvt_chain {
    const mxp_cvt_kernel *widen, *narrow; /* src -> f32, f32 -> dst */
} cvt_chain;

static cvt_chain chain_find(mxp_dtype dst_type, mxp_dtype src_type, mxp_rounding mode, mxp_isa isa)
{
    cvt_chain c = { NULL, NULL };
    if (!widens_to_f32_exactly(src_type) || dst_type == MXP_F32)
        return c;
    c.widen = mxp_cvt_find(MXP_F32, src_type, MXP_ROUND_NEAREST_EVEN, isa);
    c.narrow = mxp_cvt_find(dst_type, MXP_F32, mode, isa);
    if (!c.widen || !c.narrow)
        c.widen = c.narrow = NULL;
    return c;
}

static void chain_run(const cvt_chain *c, void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type,
                      size_t n, const mxp_cvt_params *p)
{
    const size_t ss = mxp_dtype_itemsize(src_type), ds = mxp_dtype_itemsize(dst_type);
    /* Infinities stay infinite in float32; the second step saturates. */
    const mxp_cvt_params w = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL };
    mxp_cvt_params q = *p;
    _Alignas(64) float buf[CHAIN_BLOCK];
    for (size_t done = 0; done < n;) {
        size_t m = n - done < CHAIN_BLOCK ? n - done : CHAIN_BLOCK;
        /* kernels draw the stochastic stream within one 2^32-index block */
        uint64_t room = (1ull << 32) - (uint32_t)q.index0;
        m = (uint64_t)m < room ? m : (size_t)room;
        c->widen->fn(buf, (const unsigned char *)src + done * ss, m, &w);
        c->narrow->fn((unsigned char *)dst + done * ds, buf, m, &q);
        done += m;
        q.index0 += m;
    }
}

/* float64 into the types of at most 16 bits without a kernel of their own
 * (the 0.2 float8/6/4 formats, the sub-byte integers, uint8): float64 ->
 * float32 rounded to odd (toward zero, the last bit set where inexact),
 * then the float32 kernel in the mode -- one correct rounding in every
 * deterministic mode for a target of at most 22 significand bits (the odd
 * intermediate never lands on a target value unless the source is one, so
 * each mode sees the source's own interval and tie; docs/conversions.md,
 * "Rounded to odd").  Beyond float32's range the intermediate is +-max,
 * beyond every target's as the source was; below it +-2^-149 (odd), under
 * every target's half quantum; NaNs keep the sign and top payload bits. */
static cvt_chain odd_chain_find(mxp_dtype dst_type, mxp_dtype src_type, mxp_rounding mode, mxp_isa isa)
{
    cvt_chain c = { NULL, NULL };
    if (src_type != MXP_F64 || mode == MXP_ROUND_STOCHASTIC || mxp_dtype_itemsize(dst_type) > 2 ||
        dst_type == MXP_BOOL)
        return c;
    c.widen = mxp_cvt_find(MXP_F32, MXP_F64, MXP_ROUND_TOWARD_ZERO, isa);
    c.narrow = mxp_cvt_find(dst_type, MXP_F32, mode, isa);
    if (!c.widen || !c.narrow)
        c.widen = c.narrow = NULL;
    return c;
}

/* f[i] (float64 s[i] converted toward zero) with its last bit set where it
 * differs from s[i]: odd where inexact (a NaN's lowest payload bit, below
 * every target's).  Four at a time by SSE2 (x86-64's baseline; the scalar
 * loop took half the chain's time), the rest one by one. */
static void set_odd(float *f, const unsigned char *s, size_t m)
{
    size_t i = 0;
#if defined(__SSE2__)
    const __m128i one = _mm_set1_epi32(1);
    for (; i + 4 <= m; i += 4) {
        const __m128 v = _mm_loadu_ps(f + i);
        const __m128d lo = _mm_cmpneq_pd(_mm_cvtps_pd(v), _mm_loadu_pd((const double *)(const void *)(s + 8 * i)));
        const __m128d hi = _mm_cmpneq_pd(_mm_cvtps_pd(_mm_movehl_ps(v, v)),
                                         _mm_loadu_pd((const double *)(const void *)(s + 8 * i + 16)));
        const __m128i ne =
            _mm_castps_si128(_mm_shuffle_ps(_mm_castpd_ps(lo), _mm_castpd_ps(hi), _MM_SHUFFLE(2, 0, 2, 0)));
        _mm_storeu_ps(f + i, _mm_castsi128_ps(_mm_or_si128(_mm_castps_si128(v), _mm_and_si128(ne, one))));
    }
#endif
    for (; i < m; i++) {
        uint32_t u;
        double x;
        memcpy(&x, s + 8 * i, sizeof x); /* the caller's: perhaps unaligned */
        memcpy(&u, f + i, sizeof u);
        u |= (uint32_t)((double)f[i] != x);
        memcpy(f + i, &u, sizeof u);
    }
}

static void odd_chain_run(const cvt_chain *c, void *dst, mxp_dtype dst_type, const void *src, size_t n,
                          const mxp_cvt_params *p)
{
    const size_t ds = mxp_dtype_itemsize(dst_type);
    const mxp_cvt_params z = { MXP_ROUND_TOWARD_ZERO, MXP_OVERFLOW_INF, 0, 0, NULL };
    _Alignas(64) float buf[CHAIN_BLOCK];
    for (size_t done = 0; done < n;) {
        const size_t m = n - done < CHAIN_BLOCK ? n - done : CHAIN_BLOCK;
        const unsigned char *s = (const unsigned char *)src + done * sizeof(double);
        c->widen->fn(buf, s, m, &z);
        set_odd(buf, s, m);
        c->narrow->fn((unsigned char *)dst + done * ds, buf, m, p);
        done += m;
    }
}

/* The wide integers (int16 .. uint64) into the float types and the 8-bit
 * and sub-byte ones, which had the reference converter alone (~9 ns an
 * element): a block widened to float64 by a plain loop, then the float64
 * kernel (or the odd chain above) in the mode -- one rounding, float64
 * holding every value of 32 bits or fewer, and of 64-bit blocks whose
 * values all lie within 2^53 (a block with one beyond goes to the
 * reference converter).  Into float64 itself the widening is the result. */
static bool wide_int(mxp_dtype t)
{
    return t == MXP_S16 || t == MXP_U16 || t == MXP_S32 || t == MXP_U32 || t == MXP_S64 || t == MXP_U64;
}

typedef struct cvt_wide {
    bool ok;
    const mxp_cvt_kernel *k; /* float64 -> dst, or NULL: */
    cvt_chain odd;           /* ... through float32 rounded to odd, or neither: dst is float64 */
} cvt_wide;

static cvt_wide wide_find(mxp_dtype dst_type, mxp_dtype src_type, mxp_rounding mode, mxp_isa isa)
{
    cvt_wide w = { false, NULL, { NULL, NULL } };
    if (!wide_int(src_type) || wide_int(dst_type) || dst_type == MXP_BOOL)
        return w;
    if (dst_type != MXP_F64 && !(w.k = mxp_cvt_find(dst_type, MXP_F64, mode, isa)) &&
        !(w.odd = odd_chain_find(dst_type, MXP_F64, mode, isa)).widen)
        return w;
    w.ok = true;
    return w;
}

/* m values of s (type t) into d exactly; false (d unfinished) when a 64-bit
 * value lies beyond 2^53 */
static bool ints_to_f64(double *d, const void *s, mxp_dtype t, size_t m)
{
    switch (t) {
    case MXP_S16: for (size_t i = 0; i < m; i++) d[i] = (int16_t)load_bits(s, i, 2); return true;
    case MXP_U16: for (size_t i = 0; i < m; i++) d[i] = (uint16_t)load_bits(s, i, 2); return true;
    case MXP_S32: for (size_t i = 0; i < m; i++) d[i] = (int32_t)load_bits(s, i, 4); return true;
    case MXP_U32: for (size_t i = 0; i < m; i++) d[i] = (uint32_t)load_bits(s, i, 4); return true;
    case MXP_S64: {
        uint64_t far = 0; /* |v| > 2^53: v + 2^53 outside [0, 2^54] */
        for (size_t i = 0; i < m; i++) {
            const int64_t v = (int64_t)load_bits(s, i, 8);
            far |= ((uint64_t)v + (1ull << 53)) > (1ull << 54);
            d[i] = (double)v;
        }
        return !far;
    }
    default: {
        uint64_t far = 0;
        for (size_t i = 0; i < m; i++) {
            const uint64_t v = load_bits(s, i, 8);
            far |= v > (1ull << 53);
            d[i] = (double)v;
        }
        return !far;
    }
    }
}

static void wide_run(const cvt_wide *w, void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type,
                     size_t n, const mxp_cvt_params *p)
{
    const size_t ss = mxp_dtype_itemsize(src_type), ds = mxp_dtype_itemsize(dst_type);
    mxp_cvt_params q = *p;
    _Alignas(64) double buf[CHAIN_BLOCK];
    for (size_t done = 0; done < n;) {
        size_t m = n - done < CHAIN_BLOCK ? n - done : CHAIN_BLOCK;
        uint64_t room = (1ull << 32) - (uint32_t)q.index0; /* one 2^32-index block a kernel call */
        m = (uint64_t)m < room ? m : (size_t)room;
        const unsigned char *s = (const unsigned char *)src + done * ss;
        unsigned char *d = (unsigned char *)dst + done * ds;
        if (!ints_to_f64(buf, s, src_type, m))
            mxp_convert_ref(d, dst_type, s, src_type, m, &q);
        else if (dst_type == MXP_F64)
            memcpy(d, buf, m * sizeof buf[0]);
        else if (w->k)
            w->k->fn(d, buf, m, &q);
        else
            odd_chain_run(&w->odd, d, dst_type, buf, m, &q);
        done += m;
        q.index0 += m;
    }
}

/* Into the wide integers from the float types and the 8-bit and sub-byte
 * ones (int8 -> int32 ...), which had the reference converter alone too:
 * a block widened exactly to float64 (float32 by a loop; the others
 * through their float32 widening kernel first), then rounded by the mode
 * (nearbyint in the library's nearest-even environment, round, trunc,
 * ceil, floor) and saturated to the type's range, NaN -> 0 -- the
 * reference's rule (rounding, then saturation, on the value).  Stochastic
 * rounding by the draws of the stream (sr_round_block).  Not from the
 * wide integers themselves. */
typedef struct cvt_to_wide {
    bool ok;
    const mxp_cvt_kernel *widen; /* src -> float32 (NULL: src is float32 or float64) */
} cvt_to_wide;

static cvt_to_wide to_wide_find(mxp_dtype dst_type, mxp_dtype src_type, mxp_isa isa)
{
    cvt_to_wide w = { false, NULL };
    if (!wide_int(dst_type) || wide_int(src_type) || src_type == MXP_BOOL)
        return w;
    if (src_type != MXP_F64 && src_type != MXP_F32 &&
        !(widens_to_f32_exactly(src_type) && (w.widen = mxp_cvt_find(MXP_F32, src_type, MXP_ROUND_NEAREST_EVEN, isa))))
        return w;
    w.ok = true;
    return w;
}

/* Two doubles rounded to integers by the mode, as doubles, without libm's
 * calls or branches on the data (libm's calls and the mispredicted
 * branches of a scalar loop took 5-15 ns an element): nearest even by
 * adding and subtracting 2^52 with x's sign (the library's environment
 * rounds to nearest even; from 2^52 on x is an integer, and infinities and
 * NaNs pass through), the other modes from it by compares with x (x -
 * trunc(x) is exact).  mode is a constant where it is inlined (below). */
#if defined(__SSE2__)
static inline __attribute__((always_inline)) __m128d round2_by_mode(__m128d x, mxp_rounding mode)
{
    const __m128d sign = _mm_set1_pd(-0.0), one = _mm_set1_pd(1.0), big = _mm_set1_pd(0x1p52);
    const __m128d xs = _mm_and_pd(x, sign), ax = _mm_andnot_pd(sign, x);
    const __m128d c = _mm_or_pd(xs, big);
    const __m128d r0 = _mm_sub_pd(_mm_add_pd(x, c), c);
    const __m128d small = _mm_cmplt_pd(ax, big);
    const __m128d r = _mm_or_pd(_mm_and_pd(small, r0), _mm_andnot_pd(small, x));
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: return r;
    case MXP_ROUND_UP: return _mm_add_pd(r, _mm_and_pd(_mm_cmplt_pd(r, x), one));
    case MXP_ROUND_DOWN: return _mm_sub_pd(r, _mm_and_pd(_mm_cmpgt_pd(r, x), one));
    default: { /* toward zero: one step back where |r| > |x|; away: then one out where |x - z| >= 1/2 */
        const __m128d back = _mm_and_pd(_mm_cmpgt_pd(_mm_andnot_pd(sign, r), ax), one);
        const __m128d z = _mm_sub_pd(r, _mm_or_pd(back, xs));
        if (mode == MXP_ROUND_TOWARD_ZERO)
            return z;
        const __m128d out = _mm_and_pd(_mm_cmpge_pd(_mm_andnot_pd(sign, _mm_sub_pd(x, z)), _mm_set1_pd(0.5)), one);
        return _mm_add_pd(z, _mm_or_pd(out, xs));
    }
    }
}
#endif

/* x rounded to an integer by the mode (the lanes of round2_by_mode; libm's
 * where the build has no SSE2) */
static inline __attribute__((always_inline)) double round_by_mode(double x, mxp_rounding mode)
{
#if defined(__SSE2__)
    return _mm_cvtsd_f64(round2_by_mode(_mm_set1_pd(x), mode));
#else
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN: return nearbyint(x);
    case MXP_ROUND_NEAREST_AWAY: return round(x);
    case MXP_ROUND_TOWARD_ZERO: return trunc(x);
    case MXP_ROUND_UP: return ceil(x);
    default: return floor(x);
    }
#endif
}

/* One rounded value r into a wide integer of `bits` bits: saturated
 * (NaN: 0). */
static inline __attribute__((always_inline)) uint64_t wide_of(double r, int bits, bool is_signed)
{
    const double lo = is_signed ? -ldexp(1.0, bits - 1) : 0.0, past = ldexp(1.0, bits - is_signed);
    const uint64_t max = is_signed ? (uint64_t)INT64_MAX >> (64 - bits) : UINT64_MAX >> (64 - bits);
    const bool over = r >= past, nan = r != r;
    r = r < lo ? lo : r;
    r = over || nan ? 0.0 : r;
    uint64_t u;
    if (!is_signed && bits == 64 && r >= 0x1p63) /* beyond int64: rare */
        u = (uint64_t)(int64_t)(r - 0x1p63) + (1ull << 63);
    else
        u = (uint64_t)(int64_t)r;
    return over ? max : u;
}

/* m doubles into a wide integer type of `bits` bits, rounded by mode and
 * saturated (NaN: 0); the three constant where inlined. */
static inline __attribute__((always_inline)) void f64_to_wide_loop(void *d, const double *s, size_t m,
                                                                    mxp_rounding mode, int bits, bool is_signed)
{
    size_t i = 0;
    uint64_t u[2];
    for (; i < m; i += 2) {
        const size_t k = m - i < 2 ? m - i : 2;
#if defined(__SSE2__)
        double r[2];
        _mm_storeu_pd(r, round2_by_mode(k == 2 ? _mm_loadu_pd(s + i) : _mm_set1_pd(s[i]), mode));
        u[0] = wide_of(r[0], bits, is_signed);
        u[1] = wide_of(r[1], bits, is_signed);
#else
        u[0] = wide_of(round_by_mode(s[i], mode), bits, is_signed);
        u[1] = k == 2 ? wide_of(round_by_mode(s[i + 1], mode), bits, is_signed) : 0;
#endif
        for (size_t q = 0; q < k; q++)
            store_bits(d, i + q, (size_t)bits / 8, u[q]);
    }
}

#define F64_TO_WIDE_MODES(bits, sgn)                                                                        \
    switch (mode) {                                                                                        \
    case MXP_ROUND_NEAREST_EVEN: f64_to_wide_loop(d, s, m, MXP_ROUND_NEAREST_EVEN, bits, sgn); return;      \
    case MXP_ROUND_NEAREST_AWAY: f64_to_wide_loop(d, s, m, MXP_ROUND_NEAREST_AWAY, bits, sgn); return;      \
    case MXP_ROUND_TOWARD_ZERO: f64_to_wide_loop(d, s, m, MXP_ROUND_TOWARD_ZERO, bits, sgn); return;        \
    case MXP_ROUND_UP: f64_to_wide_loop(d, s, m, MXP_ROUND_UP, bits, sgn); return;                          \
    default: f64_to_wide_loop(d, s, m, MXP_ROUND_DOWN, bits, sgn); return;                                  \
    }

/* m doubles into the wide integer type t, rounded by mode and saturated */
static void f64_to_wide(void *d, mxp_dtype t, const double *s, size_t m, mxp_rounding mode)
{
    switch (t) {
    case MXP_S16: F64_TO_WIDE_MODES(16, true)
    case MXP_U16: F64_TO_WIDE_MODES(16, false)
    case MXP_S32: F64_TO_WIDE_MODES(32, true)
    case MXP_U32: F64_TO_WIDE_MODES(32, false)
    case MXP_S64: F64_TO_WIDE_MODES(64, true)
    default: F64_TO_WIDE_MODES(64, false)
    }
}
#undef F64_TO_WIDE_MODES

/* Stochastic rounding of m doubles to integers, in place, element i by the
 * stream's draw r for index0 + i: the magnitude t = trunc(|x|) goes up
 * to t + 1 iff r < floor(f 2^32), f = |x| - t, the reference's rule
 * (mxp_cvt_params).  As r + 1 is an integer, that is r + 1 <= f 2^32,
 * which float64 decides exactly: f is exact (x - trunc(x) always is),
 * f 2^32 only rescales it, and r + 1 <= 2^32 is a double.  NaN stays
 * NaN, infinities infinite (f is NaN there: no step), and the values then
 * saturate as the other modes' (f64_to_wide in nearest even, its cheapest
 * mode, which leaves integers as they are). */
static void sr_round_block(double *x, size_t m, uint64_t seed, uint64_t index0)
{
    uint64_t block = index0 >> 32;
    mxp_sr_key key = mxp_sr_key_for(seed, index0);
    for (size_t i = 0; i < m; i += 2) {
        const size_t k = m - i < 2 ? m - i : 2;
        double r1[2] = { 0, 0 };
        for (size_t q = 0; q < k; q++) {
            const uint64_t index = index0 + i + q;
            if (index >> 32 != block) {
                block = index >> 32;
                key = mxp_sr_key_for(seed, index);
            }
            r1[q] = (double)mxp_sr_mix((uint32_t)index, key) + 1.0;
        }
#if defined(__SSE2__)
        const __m128d sign = _mm_set1_pd(-0.0);
        const __m128d v = k == 2 ? _mm_loadu_pd(x + i) : _mm_set1_pd(x[i]);
        const __m128d ax = _mm_andnot_pd(sign, v), t = round2_by_mode(ax, MXP_ROUND_TOWARD_ZERO);
        const __m128d f = _mm_mul_pd(_mm_sub_pd(ax, t), _mm_set1_pd(0x1p32));
        const __m128d up = _mm_and_pd(_mm_cmple_pd(_mm_set_pd(r1[1], r1[0]), f), _mm_set1_pd(1.0));
        const __m128d y = _mm_or_pd(_mm_add_pd(t, up), _mm_and_pd(v, sign));
        if (k == 2) /* registers, not a buffer: a store forwarded to a wider load stalls */
            _mm_storeu_pd(x + i, y);
        else
            _mm_store_sd(x + i, y);
#else
        for (size_t q = 0; q < k; q++) {
            const double ax = fabs(x[i + q]), t = trunc(ax);
            x[i + q] = copysign(t + (r1[q] <= (ax - t) * 0x1p32 ? 1.0 : 0.0), x[i + q]);
        }
#endif
    }
}

static void to_wide_run(const cvt_to_wide *w, void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type,
                        size_t n, const mxp_cvt_params *p)
{
    const size_t ss = mxp_dtype_itemsize(src_type), ds = mxp_dtype_itemsize(dst_type);
    const mxp_cvt_params e = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL };
    _Alignas(64) double buf[CHAIN_BLOCK];
    _Alignas(64) float fbuf[CHAIN_BLOCK];
    for (size_t done = 0; done < n; done += CHAIN_BLOCK) {
        const size_t m = n - done < CHAIN_BLOCK ? n - done : CHAIN_BLOCK;
        const unsigned char *s = (const unsigned char *)src + done * ss;
        if (src_type == MXP_F64) {
            memcpy(buf, s, m * sizeof buf[0]); /* aligned */
        } else {
            if (w->widen)
                w->widen->fn(fbuf, s, m, &e);
            else
                memcpy(fbuf, s, m * sizeof fbuf[0]);
            for (size_t i = 0; i < m; i++)
                buf[i] = fbuf[i];
        }
        mxp_rounding mode = p->rounding;
        if (mode == MXP_ROUND_STOCHASTIC) {
            sr_round_block(buf, m, p->seed, p->index0 + done);
            mode = MXP_ROUND_NEAREST_EVEN; /* integers now: only the saturation is left */
        }
        f64_to_wide((unsigned char *)dst + done * ds, dst_type, buf, m, mode);
    }
}

/* Wide integer into wide integer: the value saturated to the target's
 * range (no rounding: integers are exact), a loop per pair of types (the
 * widths and signs constant: the clamps compile to compares and selects;
 * the reference converter's rule, ~9 ns an element there). */
static inline __attribute__((always_inline)) void wide_to_wide_loop(void *dst, const void *src, size_t n, int sb,
                                                                     bool ss, int db, bool ds)
{
    const int64_t lo = ds ? (int64_t)(~0ull << (db - 1)) : 0; /* -2^(db-1) */
    const uint64_t hi = ds ? (uint64_t)INT64_MAX >> (64 - db) : UINT64_MAX >> (64 - db);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = load_bits(src, i, (size_t)sb / 8);
        if (ss) {
            const int64_t v = sb == 16 ? (int16_t)u : sb == 32 ? (int32_t)u : (int64_t)u;
            const int64_t c = v < lo ? lo : v; /* then at most hi, which is positive */
            u = c > 0 && (uint64_t)c > hi ? hi : (uint64_t)c;
        } else {
            u = u > hi ? hi : u;
        }
        store_bits(dst, i, (size_t)db / 8, u);
    }
}

#define WIDE_TO(sb, ss)                                                                                       \
    switch (dst_type) {                                                                                      \
    case MXP_S16: wide_to_wide_loop(dst, src, n, sb, ss, 16, true); return;                                  \
    case MXP_U16: wide_to_wide_loop(dst, src, n, sb, ss, 16, false); return;                                 \
    case MXP_S32: wide_to_wide_loop(dst, src, n, sb, ss, 32, true); return;                                  \
    case MXP_U32: wide_to_wide_loop(dst, src, n, sb, ss, 32, false); return;                                 \
    case MXP_S64: wide_to_wide_loop(dst, src, n, sb, ss, 64, true); return;                                  \
    default: wide_to_wide_loop(dst, src, n, sb, ss, 64, false); return;                                      \
    }

static void wide_to_wide(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n)
{
    switch (src_type) {
    case MXP_S16: WIDE_TO(16, true)
    case MXP_U16: WIDE_TO(16, false)
    case MXP_S32: WIDE_TO(32, true)
    case MXP_U32: WIDE_TO(32, false)
    case MXP_S64: WIDE_TO(64, true)
    default: WIDE_TO(64, false)
    }
}
#undef WIDE_TO


/* bool from the IEEE float types and the wide integers (x != 0: -0 false,
 * NaN true; a float is zero when its bits but the sign are), and into the
 * wide integers (0 or 1, any nonzero byte true): plain loops. */
static bool bool_route(mxp_dtype dst_type, mxp_dtype src_type)
{
    const bool ieee = src_type == MXP_F64 || src_type == MXP_F32 || src_type == MXP_BF16 || src_type == MXP_F16;
    return (dst_type == MXP_BOOL && (ieee || wide_int(src_type))) || (src_type == MXP_BOOL && wide_int(dst_type));
}

static void bool_run(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n)
{
    if (src_type == MXP_BOOL) {
        const size_t ds = mxp_dtype_itemsize(dst_type);
        for (size_t i = 0; i < n; i++) /* the type grows: never in place (mxp_cvt_route_run) */
            store_bits(dst, i, ds, ((const unsigned char *)src)[i] != 0);
        return;
    }
    const bool fp = !wide_int(src_type);
    const size_t ss = mxp_dtype_itemsize(src_type);
    for (size_t i = 0; i < n; i++) {
        uint64_t v = load_bits(src, i, ss);
        if (fp)
            v <<= 64 - 8 * ss + 1; /* the sign out */
        ((unsigned char *)dst)[i] = v != 0;
    }
}

/* ---- the routes' entry (convert-route.h) ------------------------------- */

bool mxp_cvt_chain_exists(mxp_dtype dst_type, mxp_dtype src_type, mxp_rounding mode, mxp_isa isa)
{
    return chain_find(dst_type, src_type, mode, isa).widen != NULL;
}

bool mxp_cvt_route_run(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n,
                       const mxp_cvt_params *p)
{
    const mxp_isa isa = mxp_get_isa();
    const cvt_chain c = chain_find(dst_type, src_type, p->rounding, isa);
    if (c.widen) {
        chain_run(&c, dst, dst_type, src, src_type, n, p);
        return true;
    }
    if (wide_int(dst_type) && wide_int(src_type) &&
        (dst != src || mxp_dtype_itemsize(dst_type) <= mxp_dtype_itemsize(src_type))) {
        wide_to_wide(dst, dst_type, src, src_type, n);
        return true;
    }
    const cvt_chain odd = odd_chain_find(dst_type, src_type, p->rounding, isa);
    if (odd.widen) {
        odd_chain_run(&odd, dst, dst_type, src, n, p);
        return true;
    }
    const cvt_wide w = wide_find(dst_type, src_type, p->rounding, isa);
    if (w.ok) {
        wide_run(&w, dst, dst_type, src, src_type, n, p);
        return true;
    }
    const cvt_to_wide tw = to_wide_find(dst_type, src_type, isa);
    if (tw.ok) {
        to_wide_run(&tw, dst, dst_type, src, src_type, n, p);
        return true;
    }
    const bool grows = mxp_dtype_itemsize(dst_type) > mxp_dtype_itemsize(src_type);
    if (bool_route(dst_type, src_type) && (dst != src || !grows)) {
        bool_run(dst, dst_type, src, src_type, n);
        return true;
    }
    return false;
}

const char *mxp_cvt_route_name(mxp_dtype dst_type, mxp_dtype src_type, mxp_rounding mode, mxp_isa isa)
{
    static _Thread_local char name[200];
    cvt_chain c = chain_find(dst_type, src_type, mode, isa);
    if (!c.widen)
        c = odd_chain_find(dst_type, src_type, mode, isa); /* its first step rounds to odd */
    if (c.widen) {
        snprintf(name, sizeof name, "%s+%s", c.widen->name, c.narrow->name); /* "widen+narrow" */
        return name;
    }
    if (wide_int(dst_type) && wide_int(src_type))
        return "integer saturating loop";
    if (bool_route(dst_type, src_type))
        return "bool loop";
    const cvt_to_wide tw = to_wide_find(dst_type, src_type, isa);
    if (tw.ok) { /* "kernel+float64 rounding loop" */
        snprintf(name, sizeof name, "%s%sfloat64 rounding loop", tw.widen ? tw.widen->name : "", tw.widen ? "+" : "");
        return name;
    }
    const cvt_wide w = wide_find(dst_type, src_type, mode, isa);
    if (!w.ok)
        return NULL;
    snprintf(name, sizeof name, "float64 loop%s%s%s%s", w.k || w.odd.widen ? "+" : "", /* "float64 loop+kernel" */
             w.k ? w.k->name : w.odd.widen ? w.odd.widen->name : "", w.odd.widen ? "+" : "",
             w.odd.widen ? w.odd.narrow->name : "");
    return name;
}
