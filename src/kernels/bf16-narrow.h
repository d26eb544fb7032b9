/* The float32 arithmetic of bfloat16 rows in and out: softmax, log_softmax
 * (bf16-softmax/), layer norm, RMS norm and L2 normalization (bf16-norm/);
 * the portable twins and the scalar pieces every kernel shares.  A
 * bfloat16 result carries 8 bits, so float32 lanes (16 to a 512-bit
 * register, not float64's 8) with float64 sums (softmax) or float32 lane
 * sums gathered in float64 (the norms) round once to within half an ulp
 * plus about 2^-16 of the exact value.  The input is bfloat16 or
 * float32 (mxp_narrow_src), softmax's with an additive float32 mask row
 * (x + mask, a float32 addition, is the element below);
 * src/nn/softmax.c and norm.c run these rows for bfloat16 out from
 * bfloat16 or float32 in, dense or strided (gathered, a bool mask as
 * 0 / -inf), and float64 for every other pair of dtypes.
 *
 *   softmax      m = max(x) (a NaN, +-inf: a NaN row); t = x - m (float32);
 *                e = mxp_sexpf(t); s = sum(e): element i into lane i mod
 *                16, the lanes in float32 over blocks of MXP_NARROW_BLOCK
 *                groups of 16 (e <= 1: no overflow), each block then added
 *                into float64 lanes, the last n mod 16 elements into a
 *                float64 tail in order, folded as mxp_sum16_fold;
 *                y = bf16(e * float(1 / s))     (float32 product)
 *   log_softmax  y = bf16(t - float(log s))
 *   norm sums    fast, about a centre c (0 on the first pass):
 *                d = x - c (float32); s1 = sum(d), s2 = sum(d^2), element i
 *                into float32 lane i mod 32 (d^2 added by one fmaf), over
 *                blocks of MXP_NARROW_FBLOCK groups of 32, each block then
 *                added into float64 lanes, the last n mod 32 elements into
 *                float64 tails in order (d and double(d)^2), folded
 *                s[k] + s[k + 16], then as mxp_sum16_fold.  Each lane adds
 *                four terms in float32 a block: s1 within 3 2^-24 of
 *                sum(|d|), s2 within 3 2^-24 of itself.  Taken where
 *                2^-90 <= s2 < inf (no square overflowed; underflow costs
 *                under n 2^-149 of it); else every sum of the row is exact
 *                (float64 lanes i mod 16 as softmax's, squares exact) and
 *                the steps below take "exact" in brackets.
 *   layer norm   mean = s1 / n; v = s2 / n - mean^2, c = float(mean) where
 *                v >= mean^2 / 4 [exact sums: v >= mean^2 2^-20]; else a
 *                second pass about c0 = float(mean): v = s2' / n - m^2,
 *                m = s1' / n (v >= 0), c = float(c0 + m) [exact sums:
 *                v = s2' / n, c = c0]; r = float(1 / sqrt(v + eps)); then
 *                h = (x - c) * r; y = bf16(fma(h, w, b)) (h * w, h + b, h
 *                without them; w and b as float32).  The centre lies within
 *                2^-22 (|mean| + mean(|x|)) of the mean, v within 2^-18.5
 *                of itself.
 *   RMS norm     v = s2 / n, c = 0
 *   L2           s = sqrt(s2); s = s > eps ? s : eps; y = bf16(x * float(1 / s))
 *
 * bf16(): nearest even, NaNs quieted (mxp_f32_to_bf16_rne); mxp_sexpf:
 * nexpf.h.  Every kernel gives its twin's bits. */
#ifndef MXP_KERNELS_BF16_NARROW_H
#define MXP_KERNELS_BF16_NARROW_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernels/nexpf.h"
#include "kernels/sum8.h"

enum {
    MXP_NARROW_BLOCK = 8, /* softmax's float32 partial sums: groups of 16 a block */
    MXP_NARROW_FBLOCK = 4, /* the norms' fast sums: groups of 32 a block */
    MXP_NARROW_ROWS = 4    /* rows a softmax or norm kernel takes at most (MXP_NORM_ROWS) */
};

static inline float mxp_narrow_bf16(uint16_t b)
{
    const uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* A row's input: bfloat16 or float32 elements x, plus mask (an additive
 * float32 row, softmax only) where not NULL. */
typedef struct mxp_narrow_src {
    const void *x;
    int f32;           /* x holds float32, else bfloat16 */
    const float *mask; /* NULL: none */
} mxp_narrow_src;

/* Element i of the row as float32: x[i], + mask[i] (a float32 addition). */
static inline float mxp_narrow_x(const mxp_narrow_src *x, size_t i)
{
    const float v = x->f32 ? ((const float *)x->x)[i] : mxp_narrow_bf16(((const uint16_t *)x->x)[i]);
    return x->mask ? v + x->mask[i] : v;
}

/* float32 to bfloat16, nearest even; a NaN quieted, sign and top payload
 * kept (as mxp_f64_to_bf16_rne). */
static inline uint16_t mxp_f32_to_bf16_rne(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (f != f)
        return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

/* Sixteen running float64 sums (element i into sum i mod 16; the last
 * n mod 16 elements into t, in order), folded as s[k] + s[k + 8] and then
 * mxp_sum8's order. */
static inline double mxp_sum16_fold(const double s[16], double t)
{
    double u[8];
    for (int k = 0; k < 8; k++)
        u[k] = s[k] + s[k + 8];
    return mxp_sum8_fold(u, t);
}

/* What element i adds to a sum: x (sq 0) or double(x - c)^2 in float32
 * then exactly squared in float64. */
static inline double mxp_narrow_term(const mxp_narrow_src *x, size_t i, float c, int sq)
{
    const float v = mxp_narrow_x(x, i);
    if (!sq)
        return v;
    const double d = v - c;
    return d * d;
}

/* The sum of elements from i on into the tail after the vector lanes s. */
static inline double mxp_narrow_fold(const double s[16], const mxp_narrow_src *x, size_t i, size_t n, float c, int sq)
{
    double t = 0;
    for (; i < n; i++)
        t += mxp_narrow_term(x, i, c, sq);
    return mxp_sum16_fold(s, t);
}

static inline double mxp_narrow_sum_portable(const mxp_narrow_src *x, size_t n, float c, int sq)
{
    double s[16] = { 0 };
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++)
            s[k] += mxp_narrow_term(x, i + k, c, sq);
    return mxp_narrow_fold(s, x, i, n, c, sq);
}

/* Softmax: outputs i .. n from e (r = float(1 / s)) or, log_softmax, from
 * x (ls = float(log s)). */
static inline void mxp_narrow_softmax_out(uint16_t *y, const mxp_narrow_src *x, const float *e, size_t i, size_t n, float m,
                                          float r, float ls, int lg)
{
    for (; i < n; i++)
        y[i] = mxp_f32_to_bf16_rne(lg ? (mxp_narrow_x(x, i) - m) - ls : e[i] * r);
}

/* The scalars after the sums: r = float(1 / s) or ls = float(log s). */
static inline void mxp_narrow_softmax_scalars(double sum, int lg, float *r, float *ls)
{
    *r = (float)(1 / sum);
    *ls = lg ? (float)log(sum) : 0.0f;
}

/* A row whose maximum is NaN or infinite: NaNs (the float64 path's row). */
static inline int mxp_narrow_nan_row(uint16_t *y, size_t n, float m, int nan)
{
    if (!nan && m != -INFINITY && m != INFINITY)
        return 0;
    for (size_t i = 0; i < n; i++)
        y[i] = 0x7fc0;
    return 1;
}

/* Softmax's passes over one row, the portable ones below and each ISA's:
 * the maximum (*nan: whether a NaN was met; *lo: the minimum where the
 * pass finds it, else -inf), the exps into e (softmax; log_softmax stores
 * none but the last n mod 16) and their sum (lo: a kernel may skip the
 * tests of exp's small arguments where lo - m shows there are none), the
 * outputs. */
typedef float mxp_narrow_max_fn(const mxp_narrow_src *x, size_t n, int *nan, float *lo);
typedef double mxp_narrow_exps_fn(const mxp_narrow_src *x, size_t n, float m, float lo, float *e, int lg);
typedef void mxp_narrow_smout_fn(uint16_t *y, const mxp_narrow_src *x, size_t n, float m, const float *e, double sum,
                                 int lg);

static inline float mxp_narrow_max_portable(const mxp_narrow_src *x, size_t n, int *nan, float *lo)
{
    *lo = -INFINITY;
    float m = -INFINITY;
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        const float v = mxp_narrow_x(x, i);
        any |= v != v;
        m = v > m ? v : m;
    }
    *nan = any;
    return m;
}

static inline double mxp_narrow_exps_portable(const mxp_narrow_src *x, size_t n, float m, float lo, float *e, int lg)
{
    (void)lo, (void)lg;
    double s[16] = { 0 }, t = 0;
    size_t i = 0;
    while (i + 16 <= n) { /* a block of up to MXP_NARROW_BLOCK groups of 16 in float32 */
        float f[16] = { 0 };
        for (int v = 0; v < MXP_NARROW_BLOCK && i + 16 <= n; v++, i += 16)
            for (int k = 0; k < 16; k++)
                f[k] += e[i + k] = mxp_sexpf(mxp_narrow_x(x, i + k) - m);
        for (int k = 0; k < 16; k++)
            s[k] += f[k];
    }
    for (; i < n; i++)
        t += e[i] = mxp_sexpf(mxp_narrow_x(x, i) - m);
    return mxp_sum16_fold(s, t);
}

static inline void mxp_narrow_smout_portable(uint16_t *y, const mxp_narrow_src *x, size_t n, float m, const float *e,
                                             double sum, int lg)
{
    float r, ls;
    mxp_narrow_softmax_scalars(sum, lg, &r, &ls);
    mxp_narrow_softmax_out(y, x, e, 0, n, m, r, ls, lg);
}

/* rows (1 .. MXP_NARROW_ROWS) rows of n, row k from x[k] into y[k] (y[k]
 * may be x[k]'s row; rows do not overlap otherwise), with e rows n floats
 * of scratch: every row's maximum, then every row's exps and sum, then
 * every row's outputs, so that one row's reductions, division and
 * logarithm overlap the next one's passes (one row alone spends a quarter
 * of its time waiting on them).  Each row's bits are those of the row
 * alone.  An ISA's kernel is this loop on its passes (always inlined:
 * the passes' addresses are constants there). */
static inline __attribute__((always_inline)) void
mxp_narrow_softmax_rows(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n, float *e, int lg,
                        mxp_narrow_max_fn *max, mxp_narrow_exps_fn *exps, mxp_narrow_smout_fn *out)
{
    float m[MXP_NARROW_ROWS], lo[MXP_NARROW_ROWS];
    double s[MXP_NARROW_ROWS];
    int skip[MXP_NARROW_ROWS];
    for (size_t k = 0; k < rows; k++) {
        int nan;
        m[k] = max(&x[k], n, &nan, &lo[k]);
        skip[k] = mxp_narrow_nan_row(y[k], n, m[k], nan);
    }
    for (size_t k = 0; k < rows; k++)
        if (!skip[k])
            s[k] = exps(&x[k], n, m[k], lo[k], e + k * n, lg);
    for (size_t k = 0; k < rows; k++)
        if (!skip[k])
            out(y[k], &x[k], n, m[k], e + k * n, s[k], lg);
}

static inline void mxp_softmax_bf16_portable(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n,
                                             float *e, int lg)
{
    mxp_narrow_softmax_rows(y, x, rows, n, e, lg, mxp_narrow_max_portable, mxp_narrow_exps_portable,
                            mxp_narrow_smout_portable);
}

/* Norm: h = d * r then the weight and bias, as float32. */
static inline float mxp_narrow_affine(float h, const float *w, const float *b, size_t i)
{
    if (w && b)
        return fmaf(h, w[i], b[i]);
    return w ? h * w[i] : b ? h + b[i] : h;
}

static inline void mxp_narrow_norm_out(uint16_t *y, const mxp_narrow_src *x, size_t i, size_t n, const float *w,
                                       const float *b, float c, float r)
{
    for (; i < n; i++)
        y[i] = mxp_f32_to_bf16_rne(mxp_narrow_affine((mxp_narrow_x(x, i) - c) * r, w, b, i));
}

static inline void mxp_narrow_l2_out(uint16_t *y, const mxp_narrow_src *x, size_t i, size_t n, float r)
{
    for (; i < n; i++)
        y[i] = mxp_f32_to_bf16_rne(mxp_narrow_x(x, i) * r);
}

/* The scalars of a norm row: the L2 factor, or the centre c and 1/std. */
static inline float mxp_narrow_l2_scalar(double sumsq, double eps)
{
    const double s = sqrt(sumsq);
    return (float)(1 / (s > eps ? s : eps));
}

static inline float mxp_narrow_rstd(double var, double eps)
{
    return (float)(1 / sqrt(var + eps));
}

/* Layer norm's variance from the one-pass sums, or NaN: take the second
 * pass. */
static inline double mxp_narrow_var(double s1, double s2, size_t n)
{
    const double mean = s1 / (double)n, v = s2 / (double)n - mean * mean;
    return v >= mean * mean * 0x1p-20 ? v : NAN;
}

/* Thirty-two running float64 sums, folded as s[k] + s[k + 16], then as
 * mxp_sum16_fold with the tail t. */
static inline double mxp_sum32_fold(const double s[32], double t)
{
    double u[16];
    for (int k = 0; k < 16; k++)
        u[k] = s[k] + s[k + 16];
    return mxp_sum16_fold(u, t);
}

/* The float64 tails of the norms' fast sums: the elements from i on, in
 * order. */
static inline void mxp_narrow_ftails(const mxp_narrow_src *x, size_t i, size_t n, float c, double *ta, double *tq)
{
    *ta = *tq = 0;
    for (; i < n; i++) {
        const double d = mxp_narrow_x(x, i) - c;
        *ta += d;
        *tq += d * d;
    }
}

static inline void mxp_narrow_fsums_portable(const mxp_narrow_src *x, size_t n, float c, double *s1, double *s2)
{
    double a[32] = { 0 }, q[32] = { 0 };
    size_t i = 0;
    while (i + 32 <= n) {
        float f[32] = { 0 }, g[32] = { 0 };
        for (int v = 0; v < MXP_NARROW_FBLOCK && i + 32 <= n; v++, i += 32)
            for (int k = 0; k < 32; k++) {
                const float d = mxp_narrow_x(x, i + k) - c;
                f[k] += d;
                g[k] = fmaf(d, d, g[k]);
            }
        for (int k = 0; k < 32; k++) {
            a[k] += f[k];
            q[k] += g[k];
        }
    }
    double ta, tq;
    mxp_narrow_ftails(x, i, n, c, &ta, &tq);
    if (s1)
        *s1 = mxp_sum32_fold(a, ta);
    *s2 = mxp_sum32_fold(q, tq);
}

/* s1 NULL: the sum of squares alone. */
typedef void mxp_narrow_fsums_fn(const mxp_narrow_src *x, size_t n, float c, double *s1, double *s2);
typedef double mxp_narrow_sum_fn(const mxp_narrow_src *x, size_t n, float c, int sq);

static inline int mxp_narrow_fast_ok(double s2)
{
    return s2 >= 0x1p-90 && s2 < INFINITY;
}

/* The copies of an ISA's fast sums k(x, f32, n, c, sub, s1, s2), each with
 * f32 (float32 input), sub (c != 0) and s1 (NULL or not) constant, so that
 * its loop tests none of them: the body of the ISA's mxp_narrow_fsums_*. */
#define MXP_NARROW_FSUMS_COPIES(k, x, n, c, s1, s2)                                                                    \
    do {                                                                                                               \
        const int f32_ = (x)->f32, sub_ = (c) != 0;                                                                    \
        if (f32_ && sub_)                                                                                              \
            (s1) ? k(x, 1, n, c, 1, s1, s2) : k(x, 1, n, c, 1, NULL, s2);                                              \
        else if (f32_)                                                                                                 \
            (s1) ? k(x, 1, n, c, 0, s1, s2) : k(x, 1, n, c, 0, NULL, s2);                                              \
        else if (sub_)                                                                                                 \
            (s1) ? k(x, 0, n, c, 1, s1, s2) : k(x, 0, n, c, 1, NULL, s2);                                              \
        else                                                                                                           \
            (s1) ? k(x, 0, n, c, 0, s1, s2) : k(x, 0, n, c, 0, NULL, s2);                                              \
    } while (0)

/* The copies of an ISA's output row row(y, x, f32, n, w, b, c, r, l2,
 * centre) for the row *x of mode (MXP_NORM_L2: 2), each with f32, l2 and
 * centre (c != 0, not L2) constant. */
#define MXP_NARROW_ROW_COPIES(row, y, x, n, w, b, c, r, mode)                                                          \
    do {                                                                                                               \
        const int f32_ = (x)->f32, l2_ = (mode) == 2, centre_ = !l2_ && (c) != 0;                                      \
        if (l2_)                                                                                                       \
            f32_ ? row(y, x, 1, n, w, b, c, r, 1, 0) : row(y, x, 0, n, w, b, c, r, 1, 0);                              \
        else if (centre_)                                                                                              \
            f32_ ? row(y, x, 1, n, w, b, c, r, 0, 1) : row(y, x, 0, n, w, b, c, r, 0, 1);                              \
        else                                                                                                           \
            f32_ ? row(y, x, 1, n, w, b, c, r, 0, 0) : row(y, x, 0, n, w, b, c, r, 0, 0);                              \
    } while (0)

/* A norm row's centre *c and factor *r (mode: MXP_NORM_LAYER, _RMS, _L2 of
 * norm-kernels.h: 0, 1, 2; L2: c = 0, r = float(1 / s)) from its first
 * fast sums s1 (layer norm), s2 (fs), then a second pass by fs or the
 * exact sums es where needed; every kernel's own two. */
static inline void mxp_narrow_norm_scalars(const mxp_narrow_src *x, size_t n, double eps, int mode, double s1, double s2,
                                           mxp_narrow_fsums_fn *fs, mxp_narrow_sum_fn *es, float *c, float *r)
{
    *c = 0.0f;
    if (mxp_narrow_fast_ok(s2)) {
        if (mode == 2) {
            *r = mxp_narrow_l2_scalar(s2, eps);
            return;
        }
        const double mean = mode == 1 ? 0 : s1 / (double)n, v = s2 / (double)n - mean * mean;
        if (v >= 0.25 * mean * mean) {
            *c = (float)mean;
            *r = mxp_narrow_rstd(v, eps);
            return;
        }
        const float c0 = (float)mean;
        fs(x, n, c0, &s1, &s2);
        if (mxp_narrow_fast_ok(s2)) {
            const double m = s1 / (double)n, v2 = s2 / (double)n - m * m;
            *c = (float)(c0 + m);
            *r = mxp_narrow_rstd(v2 > 0 ? v2 : 0, eps);
            return;
        }
    }
    if (mode == 2) {
        *r = mxp_narrow_l2_scalar(es(x, n, 0.0f, 1), eps);
        return;
    }
    s2 = es(x, n, 0.0f, 1);
    s1 = mode == 1 ? 0 : es(x, n, 0.0f, 0);
    *c = (float)(s1 / (double)n);
    double v = mode == 1 ? s2 / (double)n : mxp_narrow_var(s1, s2, n);
    if (v != v)
        v = es(x, n, *c, 1) / (double)n;
    *r = mxp_narrow_rstd(v, eps);
}

/* The centres and factors of rows rows: every row's first sums, then the
 * rest of each. */
static inline void mxp_narrow_norm_rows_scalars(const mxp_narrow_src *x, size_t rows, size_t n, double eps, int mode,
                                                mxp_narrow_fsums_fn *fs, mxp_narrow_sum_fn *es, float *c, float *r)
{
    double s1[MXP_NARROW_ROWS] = { 0 }, s2[MXP_NARROW_ROWS];
    for (size_t k = 0; k < rows; k++)
        fs(&x[k], n, 0.0f, mode ? NULL : &s1[k], &s2[k]);
    for (size_t k = 0; k < rows; k++)
        mxp_narrow_norm_scalars(&x[k], n, eps, mode, s1[k], s2[k], fs, es, &c[k], &r[k]);
}

static inline void mxp_norm_bf16_portable(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n,
                                          const float *w, const float *b, double eps, int mode)
{
    float c[MXP_NARROW_ROWS], r[MXP_NARROW_ROWS];
    mxp_narrow_norm_rows_scalars(x, rows, n, eps, mode, mxp_narrow_fsums_portable, mxp_narrow_sum_portable, c, r);
    for (size_t k = 0; k < rows; k++)
        if (mode == 2)
            mxp_narrow_l2_out(y[k], &x[k], 0, n, r[k]);
        else
            mxp_narrow_norm_out(y[k], &x[k], 0, n, w, b, c[k], r[k]);
}

#endif
