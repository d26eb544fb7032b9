/* Float32 rows of max and average pooling (src/kernels/f32-pool/, list
 * f32-pool-list.inc; the operation is src/nn/pool-f32.c).  One call makes
 * one output row of ow pixels of ch channels from the kh input rows its
 * windows cover:
 *
 *   for p < kh (rows[p] != NULL), q < kw, j < ow (column j s + q - pw in
 *   [0, w)), c < ch:
 *     max: acc[j ch + c] = x > a || x != x ? x : a   (floats; the last NaN)
 *     sum: acc[j ch + c] += (double)x                  (doubles)
 *
 * with x = rows[p][(j s + q - pw) ch + c] and a = acc[j ch + c], acc set to
 * -inf (max) or +0 (sum) first; then, where div is given, each sum
 * divided by div[j] (the average); where quiet is set, NaN maxima made
 * quiet (bit 22 set: what float64's conversions give); where out32 is
 * given, the sums' results rounded once to float32 (nearest even, the
 * library's environment: what float64 -> float32 conversion gives) into
 * out32, acc then scratch of ow * ch doubles.  The order of
 * src/nn/window.c's float64
 * loop, so every kernel gives its twin's bits and the pooling those of the
 * generic path (max is exact in float32; each sum is the same sequence of
 * float64 additions and one division).  Rows are w pixels of ch floats,
 * any alignment; acc is aligned to its element (float or double). */
#ifndef MXP_KERNELS_POOL_KERNELS_H
#define MXP_KERNELS_POOL_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { MXP_POOL_MAX, MXP_POOL_SUM };

typedef struct mxp_f32_pool_params {
    const float *const *rows; /* kh rows, NULL where the window leaves x */
    size_t kh, kw, w, ow, ch, s, pw;
    int kind;          /* MXP_POOL_MAX: acc is ow * ch floats, MXP_POOL_SUM: doubles */
    const double *div; /* sums: ow divisors, or NULL */
    int quiet;         /* max: NaN results made quiet */
    float *out32;      /* sums: the results as float32 here (ow * ch), or NULL: as doubles in acc */
} mxp_f32_pool_params;

typedef void mxp_f32_pool_ukernel(void *acc, const mxp_f32_pool_params *p);

#define MXP_F32_POOL(isa, tile, fn, twin) mxp_f32_pool_ukernel fn;
#include "kernels/f32-pool-list.inc"
#undef MXP_F32_POOL

/* The output columns j whose input column j s + q - pw lies in [0, w):
 * [*lo, *hi). */
static inline void mxp_pool_columns(const mxp_f32_pool_params *p, size_t q, size_t *lo, size_t *hi)
{
    const ptrdiff_t off = (ptrdiff_t)q - (ptrdiff_t)p->pw, s = (ptrdiff_t)p->s, w = (ptrdiff_t)p->w;
    const ptrdiff_t ow = (ptrdiff_t)p->ow;
    ptrdiff_t a = off >= 0 ? 0 : (-off + s - 1) / s;
    ptrdiff_t b = w - 1 - off < 0 ? 0 : (w - 1 - off) / s + 1;
    a = a < ow ? a : ow;
    b = b < ow ? b : ow;
    *lo = (size_t)a;
    *hi = (size_t)(b > a ? b : a);
}

static inline float mxp_pool_max1(float a, float x)
{
    return x > a || x != x ? x : a;
}

static inline void mxp_pool_init(void *acc, const mxp_f32_pool_params *p)
{
    const size_t n = p->ow * p->ch;
    if (p->kind == MXP_POOL_MAX)
        for (size_t t = 0; t < n; t++)
            ((float *)acc)[t] = -INFINITY;
    else
        for (size_t t = 0; t < n; t++)
            ((double *)acc)[t] = 0;
}

/* Output columns [j0, j1), channels [c0, ch) of offset q from row x: the
 * portable loop, the twin's body and the kernels' tails. */
static inline void mxp_pool_tail(void *acc, const mxp_f32_pool_params *p, const float *x, size_t q, size_t j0,
                                 size_t j1, size_t c0)
{
    const size_t ch = p->ch, step = p->s * ch;
    const float *x0 = x + ((ptrdiff_t)q - (ptrdiff_t)p->pw) * (ptrdiff_t)ch;
    for (size_t j = j0; j < j1; j++)
        for (size_t c = c0; c < ch; c++) {
            const float v = x0[j * step + c];
            if (p->kind == MXP_POOL_MAX)
                ((float *)acc)[j * ch + c] = mxp_pool_max1(((float *)acc)[j * ch + c], v);
            else
                ((double *)acc)[j * ch + c] += (double)v;
        }
}

/* Windows wider than this are reduced a window at a time (as window.c's
 * reduce_columns), narrower ones an offset q at a time. */
enum { MXP_POOL_WIDE = 8 };

/* One plane of pooling (NCHW float32, one channel, into float32;
 * src/kernels/f32-pool-plane-list.inc): y[i][j], i < oh, j < ow, over
 * x[i sh - ph + p][j sw - pw + q], p < kh, q < kw, in (p, q) order (those
 * inside the h x w plane):
 *
 *   max: the fold x > a || x != x ? x : a from -inf, NaN results made
 *        quiet -- mxp_f32_pool's max rows with quiet set, the same bits.
 *        Separable: each input row's fold over q (its row maxima) made
 *        once into a ring of rows, then each output row folds its rows'
 *        maxima in order -- the rows' fold of the rows' folds is the (p, q)
 *        fold (the last NaN, else the first maximum), and a row shared by
 *        two windows (sh < kh) is reduced once.  The vector kernels first
 *        fold in any order (column maxima, then along the row), which
 *        gives the same bits where the plane holds no NaN and no -0, and
 *        fold separably where it does.
 *   sum: the float64 sum from +0, divided by div[i ow + j], rounded to
 *        float32 -- mxp_f32_pool's sum rows with out32, the same bits
 *        (where recip is given, a product by it: the same quotient, exact).
 *
 * Windows up to MXP_POOL_PLANE_KH x MXP_POOL_WIDE, sw 1 or 2; x and y
 * dense (rows of w and ow floats), any alignment; hbuf aligned to a
 * double. */
enum { MXP_POOL_PLANE_KH = 16, MXP_POOL_PLANE_LANES = 16 };

typedef struct mxp_f32_pool_plane_params {
    int kind; /* MXP_POOL_MAX or MXP_POOL_SUM */
    const float *x;
    size_t h, w;
    float *y;
    size_t oh, ow;
    size_t kh, kw, sh, sw, ph, pw;
    const double *div; /* sums: oh x ow divisors */
    double recip;      /* sums: 1 / the divisor where every divisor is that one power of two, else 0 */
    void *hbuf;        /* scratch: mxp_pool_plane_scratch(kh, w, ow) floats */
} mxp_f32_pool_plane_params;

typedef void mxp_f32_pool_plane_ukernel(const mxp_f32_pool_plane_params *p);

#define MXP_F32_POOL_PLANE(isa, tile, fn, twin) mxp_f32_pool_plane_ukernel fn;
#include "kernels/f32-pool-plane-list.inc"
#undef MXP_F32_POOL_PLANE

/* A ring row's floats (ow rounded up to whole vectors), the ring's rows
 * (kh rounded up to a power of two: a row's slot is r & (rows - 1), no
 * division; at least two: the sums' row of doubles) and the floats from
 * hbuf to the vector kernels' row of column maxima. */
static inline size_t mxp_pool_plane_stride(size_t ow)
{
    return (ow + MXP_POOL_PLANE_LANES - 1) / MXP_POOL_PLANE_LANES * MXP_POOL_PLANE_LANES;
}

static inline size_t mxp_pool_plane_ring_rows(size_t kh)
{
    size_t n = 2;
    while (n < kh)
        n *= 2;
    return n;
}

static inline size_t mxp_pool_plane_ring_floats(size_t kh, size_t ow)
{
    return mxp_pool_plane_ring_rows(kh) * mxp_pool_plane_stride(ow);
}

/* The vector kernels' column maxima of an output row's input rows:
 * MXP_POOL_PLANE_PAD floats of -inf, then w floats, then -inf as far
 * as any window's loads reach (an output block of 16 with stride 2 reads
 * 32 + 2 (kw + 1) / 2 - 2 columns). */
enum { MXP_POOL_PLANE_PAD = 16 };

static inline size_t mxp_pool_plane_vbuf(size_t w, size_t ow)
{
    const size_t right = 2 * mxp_pool_plane_stride(ow) + 2 * MXP_POOL_PLANE_PAD;
    return MXP_POOL_PLANE_PAD + (w + MXP_POOL_PLANE_PAD > right ? w + MXP_POOL_PLANE_PAD : right);
}

static inline size_t mxp_pool_plane_scratch(size_t kh, size_t w, size_t ow)
{
    return mxp_pool_plane_ring_floats(kh, ow) + mxp_pool_plane_vbuf(w, ow);
}

/* Whether a plane's windows (kh, kw, column stride sw) are the kernels'. */
static inline int mxp_pool_plane_fits(size_t kh, size_t kw, size_t sw)
{
    return kh >= 1 && kh <= MXP_POOL_PLANE_KH && kw >= 1 && kw <= MXP_POOL_WIDE && (sw == 1 || sw == 2);
}

/* fn(p, s, kw, kh), an always-inline plane body, with the common
 * windows' column stride, width and height constants (3x3 and 2x2 with
 * stride 2, 3x3 with stride 1) or, for the rest, p's (kh 0: not a
 * constant). */
#define MXP_POOL_PLANE_WINDOWS(fn, p)                                                                              \
    do {                                                                                                              \
        if ((p)->sw == 2 && (p)->kw == 3 && (p)->kh == 3)                                                             \
            fn(p, 2, 3, 3);                                                                                           \
        else if ((p)->sw == 2 && (p)->kw == 2 && (p)->kh == 2)                                                        \
            fn(p, 2, 2, 2);                                                                                           \
        else if ((p)->sw == 1 && (p)->kw == 3 && (p)->kh == 3)                                                        \
            fn(p, 1, 3, 3);                                                                                           \
        else                                                                                                          \
            fn(p, (ptrdiff_t)(p)->sw, (p)->kw, 0);                                                                    \
    } while (0)

/* The recip of n divisors: 1 / d where every one is d, a power of two
 * (the product then is the quotient, exactly), else 0. */
static inline double mxp_pool_plane_recip(const double *div, size_t n)
{
    uint64_t b = 1;
    if (n)
        memcpy(&b, &div[0], 8);
    if (!n || !(div[0] >= 1) || (b & 0x000fffffffffffffull))
        return 0;
    for (size_t t = 1; t < n; t++)
        if (div[t] != div[0])
            return 0;
    return 1 / div[0];
}

/* The input rows [*r0, *r1) of output row i (clipped to the plane). */
static inline void mxp_pool_plane_rows(const mxp_f32_pool_plane_params *p, size_t i, size_t *r0, size_t *r1)
{
    const ptrdiff_t a = (ptrdiff_t)(i * p->sh) - (ptrdiff_t)p->ph, b = a + (ptrdiff_t)p->kh;
    const ptrdiff_t h = (ptrdiff_t)p->h;
    *r0 = (size_t)(a < 0 ? 0 : a > h ? h : a);
    *r1 = (size_t)(b < 0 ? 0 : b > h ? h : b);
    *r1 = *r1 > *r0 ? *r1 : *r0;
}

/* Input row r's maxima in the ring. */
static inline float *mxp_pool_plane_ring(const mxp_f32_pool_plane_params *p, size_t r)
{
    return (float *)p->hbuf + (r & (mxp_pool_plane_ring_rows(p->kh) - 1)) * mxp_pool_plane_stride(p->ow);
}

/* The vector kernels' row of column maxima (from column 0; the padding
 * before it). */
static inline float *mxp_pool_plane_vrow(const mxp_f32_pool_plane_params *p)
{
    return (float *)p->hbuf + mxp_pool_plane_ring_floats(p->kh, p->ow) + MXP_POOL_PLANE_PAD;
}

/* Output row i of a sum plane through a row kernel: the rows (NULL
 * outside the plane) and the parameters of mxp_f32_pool's sum with out32. */
static inline mxp_f32_pool_params mxp_pool_plane_sum_row(const mxp_f32_pool_plane_params *p, size_t i,
                                                         const float **rows)
{
    for (size_t q = 0; q < p->kh; q++) {
        const ptrdiff_t r = (ptrdiff_t)(i * p->sh + q) - (ptrdiff_t)p->ph;
        rows[q] = r >= 0 && r < (ptrdiff_t)p->h ? p->x + (size_t)r * p->w : NULL;
    }
    const mxp_f32_pool_params rp = { rows, p->kh, p->kw, p->w, p->ow, 1, p->sw, p->pw, MXP_POOL_SUM,
                                     p->div + i * p->ow, 0, p->y + i * p->ow };
    return rp;
}

/* NaN bits made quiet (bit 22 set), as the float64 path's conversions do. */
static inline float mxp_pool_quiet1(float m)
{
    uint32_t b;
    memcpy(&b, &m, 4);
    b |= (b & 0x7fffffffu) > 0x7f800000u ? 0x00400000u : 0;
    memcpy(&m, &b, 4);
    return m;
}

/* The whole row through fn(acc, p, x, q, lo, hi) -- the runs of one
 * offset q -- or, for wide windows, wide(acc, p, x, j, w0, w1) -- the
 * columns of window j: the loops every kernel has. */
#define MXP_POOL_ROW(acc, p, fn, wide)                                                                                \
    do {                                                                                                              \
        mxp_pool_init(acc, p);                                                                                        \
        if ((p)->kw > MXP_POOL_WIDE) {                                                                                \
            for (size_t p_ = 0; p_ < (p)->kh; p_++)                                                                   \
                for (size_t j_ = 0; (p)->rows[p_] && j_ < (p)->ow; j_++) {                                            \
                    size_t w0_ = j_ * (p)->s, w1_ = w0_ + (p)->kw;                                                    \
                    w0_ = w0_ > (p)->pw ? w0_ - (p)->pw : 0;                                                          \
                    w1_ = w1_ > (p)->pw ? w1_ - (p)->pw : 0;                                                          \
                    w1_ = w1_ < (p)->w ? w1_ : (p)->w;                                                                \
                    if (w1_ > w0_)                                                                                    \
                        wide(acc, p, (p)->rows[p_], j_, w0_, w1_);                                                    \
                }                                                                                                     \
            break;                                                                                                    \
        }                                                                                                             \
        size_t lo_[MXP_POOL_WIDE], hi_[MXP_POOL_WIDE];                                                                \
        for (size_t q_ = 0; q_ < (p)->kw; q_++)                                                                       \
            mxp_pool_columns(p, q_, &lo_[q_], &hi_[q_]);                                                              \
        for (size_t p_ = 0; p_ < (p)->kh; p_++) {                                                                     \
            const float *x_ = (p)->rows[p_];                                                                          \
            for (size_t q_ = 0; x_ && q_ < (p)->kw; q_++)                                                             \
                if (hi_[q_] > lo_[q_])                                                                                \
                    fn(acc, p, x_, q_, lo_[q_], hi_[q_]);                                                             \
        }                                                                                                             \
    } while (0)

/* fn(acc, p, kind, s, kw), an always-inline one-channel body, with the
 * common windows' kind, stride and width constants (max 3x3 and 2x2
 * stride 2, 3x3 stride 1, the same for sums) or, for the rest, p's. */
#define MXP_POOL_ONE_CHANNEL(fn, acc, p)                                                                              \
    do {                                                                                                              \
        if ((p)->kind == MXP_POOL_MAX && (p)->s == 2 && (p)->kw == 3)                                                 \
            fn(acc, p, MXP_POOL_MAX, 2, 3);                                                                           \
        else if ((p)->kind == MXP_POOL_MAX && (p)->s == 2 && (p)->kw == 2)                                            \
            fn(acc, p, MXP_POOL_MAX, 2, 2);                                                                           \
        else if ((p)->kind == MXP_POOL_SUM && (p)->s == 2 && (p)->kw == 2)                                            \
            fn(acc, p, MXP_POOL_SUM, 2, 2);                                                                           \
        else if ((p)->kind == MXP_POOL_SUM && (p)->s == 2 && (p)->kw == 3)                                            \
            fn(acc, p, MXP_POOL_SUM, 2, 3);                                                                           \
        else if ((p)->kind == MXP_POOL_MAX && (p)->s == 1 && (p)->kw == 3)                                            \
            fn(acc, p, MXP_POOL_MAX, 1, 3);                                                                           \
        else if ((p)->kind == MXP_POOL_SUM && (p)->s == 1 && (p)->kw == 3)                                            \
            fn(acc, p, MXP_POOL_SUM, 1, 3);                                                                           \
        else                                                                                                          \
            fn(acc, p, (p)->kind, (ptrdiff_t)(p)->s, (p)->kw);                                                        \
    } while (0)

/* Window j's columns [w0, w1) of row x, channels [c0, ch): the portable
 * loop of wide windows. */
static inline void mxp_pool_wide_tail(void *acc, const mxp_f32_pool_params *p, const float *x, size_t j, size_t w0,
                                      size_t w1, size_t c0)
{
    const size_t ch = p->ch;
    for (size_t w = w0; w < w1; w++)
        for (size_t c = c0; c < ch; c++) {
            const float v = x[w * ch + c];
            if (p->kind == MXP_POOL_MAX)
                ((float *)acc)[j * ch + c] = mxp_pool_max1(((float *)acc)[j * ch + c], v);
            else
                ((double *)acc)[j * ch + c] += (double)v;
        }
}

/* Maxima [t0, t1) of the row made quiet where NaN, if p->quiet asks:
 * the portable loops' last step. */
static inline void mxp_pool_quiet(void *acc, const mxp_f32_pool_params *p, size_t t0, size_t t1)
{
    if (p->kind != MXP_POOL_MAX || !p->quiet)
        return;
    float *a = acc;
    for (size_t t = t0; t < t1; t++)
        a[t] = mxp_pool_quiet1(a[t]);
}

/* Output columns [j0, j1), channels [c0, ch): sums divided by div[j]. */
static inline void mxp_pool_divide(void *acc, const mxp_f32_pool_params *p, size_t j0, size_t j1, size_t c0)
{
    if (p->kind != MXP_POOL_SUM || !p->div)
        return;
    for (size_t j = j0; j < j1; j++)
        for (size_t c = c0; c < p->ch; c++)
            ((double *)acc)[j * p->ch + c] /= p->div[j];
}

/* The sums' results [t0, ow ch) of acc rounded to float32 into out32, if
 * p->out32 asks: the portable loops' last step. */
static inline void mxp_pool_round32(const void *acc, const mxp_f32_pool_params *p, size_t t0)
{
    if (p->kind != MXP_POOL_SUM || !p->out32)
        return;
    for (size_t t = t0; t < p->ow * p->ch; t++)
        p->out32[t] = (float)((const double *)acc)[t];
}

/* Output column j, channels [c0, ch), over every (p, q) in order: the
 * vector kernels' edges.  lo, hi: mxp_pool_columns of each q. */
static inline void mxp_pool_point(void *acc, const mxp_f32_pool_params *p, const size_t *lo, const size_t *hi,
                                  size_t j, size_t c0)
{
    for (size_t r = 0; r < p->kh; r++)
        for (size_t q = 0; p->rows[r] && q < p->kw; q++)
            if (j >= lo[q] && j < hi[q])
                mxp_pool_tail(acc, p, p->rows[r], q, j, j + 1, c0);
    mxp_pool_divide(acc, p, j, j + 1, c0);
}

/* Window j of one channel when a vector kernel's lane maxima gave m with
 * nan set where a NaN was seen: m itself, unless the window holds a NaN
 * (which one is last) or its maximum is a zero (which sign came first):
 * then the portable loop. */
static inline void mxp_pool_wide_max1(void *acc, const mxp_f32_pool_params *p, size_t j, size_t w0, size_t w1,
                                      float m, int nan)
{
    if (!nan && m != 0) {
        ((float *)acc)[j] = m;
        return;
    }
    ((float *)acc)[j] = -INFINITY;
    for (size_t r = 0; r < p->kh; r++)
        if (p->rows[r])
            mxp_pool_wide_tail(acc, p, p->rows[r], j, w0, w1, 0);
}

#endif
