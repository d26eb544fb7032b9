/* One float32 row of layer norm, RMS norm or L2 normalization, computed
 * in float64 (src/kernels/f32-norm/, list f32-norm-list.inc; the operation
 * is src/nn/norm.c, L2 src/nn/softmax.c).  Bfloat16 rows compute in
 * float32 (src/kernels/bf16-norm/, bf16-narrow.h); their type is here.
 *
 *   mean = sum(x) / n                 (0 for RMS norm, mode MXP_NORM_RMS)
 *   rstd = 1 / sqrt(sum((x - mean)^2) / n + eps)
 *   y[i] = round(((x[i] - mean) * rstd) * w[i] + b[i])
 *
 * with w NULL: no product (h itself), b NULL: + 0; and L2 normalization
 * (mode MXP_NORM_L2; w, b unused):
 *
 *   s = sqrt(sum(x^2)); s = s > eps ? s : eps;   y[i] = round(x[i] / s)
 *
 * each sum in the order of mxp_sum8 (sum8.h): element i into running sum
 * i mod 8, folded pairwise, the tail after -- eight float64 lanes of a
 * vector.  The arithmetic is the portable code's, operation for operation
 * (no fused multiply-adds), and round is nearest even (the cast under the
 * library's environment): every kernel gives its twin's bits, which are
 * those of src/nn/'s generic path.
 * n >= 1; x and y may be the same row. */
#ifndef MXP_KERNELS_NORM_KERNELS_H
#define MXP_KERNELS_NORM_KERNELS_H

#include <math.h>
#include <stddef.h>

#include <stdint.h>

#include "kernels/bf16-narrow.h"
#include "kernels/sum8.h"

/* mode: the row's operation; MXP_NORM_STREAM or'd in: the vector kernels
 * write the rows they keep widened (wide given) whose start is aligned to
 * their vector by streaming stores (the same bits; the caller fences:
 * nn_run_rows' shares end with one), for outputs of megabytes, whose lines
 * are then not read in before they are written (float32 layer norm over
 * 10922 rows of 384 on a Zen 4: 10.5-11.3 -> 15-16 GB/s, docs/nn.md). */
enum { MXP_NORM_LAYER, MXP_NORM_RMS, MXP_NORM_L2, MXP_NORM_STREAM = 4 };

/* rows (1 to MXP_NORM_ROWS) rows of n at x[r], results at y[r] (y[r] may
 * be x[r]; rows do not overlap otherwise), each exactly as alone: the
 * vector kernels interleave the rows' sums, whose float64 chains are
 * otherwise latency-bound (one running-sum register a row).
 * wide: MXP_NORM_ROWS n doubles of scratch, or NULL: the vector kernels'
 * first pass keeps row r widened to float64 at wide + r n, and the later
 * passes read it there instead of widening x again (vcvtps2pd is two
 * operations a vector on the Xeon; with the source prefetched ahead, layer
 * norm over 384-wide rows went 0.52-0.63x -> 0.63-0.64x memcpy there,
 * docs/nn.md); callers give it to rows of up to MXP_NORM_WIDE_MAX. */
enum { MXP_NORM_ROWS = 4, MXP_NORM_WIDE_MAX = 8192 };
_Static_assert((int)MXP_NORM_ROWS == (int)MXP_NARROW_ROWS, "the bfloat16 norm kernels take as many rows");
typedef void mxp_f32_norm_ukernel(float *const *y, const float *const *x, size_t rows, size_t n, const double *w,
                                  const double *b, double eps, int mode, double *wide);

/* The doubles of scratch a caller gives the kernel for rows of n: 0 (and
 * wide NULL) beyond MXP_NORM_WIDE_MAX. */
static inline size_t mxp_norm_wide_doubles(size_t n)
{
    return n <= MXP_NORM_WIDE_MAX ? MXP_NORM_ROWS * n : 0;
}
/* Bfloat16 rows compute in float32 (bf16-narrow.h), weight and bias
 * float32 too: rows (1 .. MXP_NORM_ROWS) rows of n, row r from x[r] into
 * y[r], all rows' sums first, then their scalars and their outputs (the
 * latencies of one row's folds, square root and division overlap the
 * next's), each row's bits those of the row alone; x[r].mask NULL. */
typedef void mxp_bf16_norm_ukernel(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n, const float *w,
                                   const float *b, double eps, int mode);

/* The scalar pieces every float32 kernel shares: element i widened, what
 * it adds to a sum (sq: (x - c)^2, else x), the sums folded with the
 * elements from i on, the statistics, and output elements from i on. */
static inline double mxp_norm_term(const float *x, size_t i, double c, int sq)
{
    const double d = (double)x[i] - c;
    return sq ? d * d : (double)x[i];
}

static inline double mxp_norm_fold(const double s[8], const float *x, size_t i, size_t n, double c, int sq)
{
    double t = 0;
    for (; i < n; i++)
        t += mxp_norm_term(x, i, c, sq);
    return mxp_sum8_fold(s, t);
}

/* The prefetch of the next call's rows.  A call reads its rows from
 * memory in its first pass only; its later passes compute from registers
 * and scratch, and without a prefetch the memory stood idle there while
 * the next call's first pass waited on it (float32 layer norm over 10922
 * rows of 384 on a Zen 4: 2.4-2.9 cycles an element from memory, 1.3 in
 * L2; 1.8-2.1 with it).  The bfloat16 kernels' first pass prefetches 2 KiB
 * ahead, past the next rows of 384 already (there this measured no gain).
 * Where the rows x lie evenly spaced (a dense array's next rows, the
 * usual case): the bytes from each to the same row of the next call's;
 * else 0 (also for one row: no step to go by). */
static inline ptrdiff_t mxp_norm_rows_ahead(const float *const *x, size_t rows)
{
    if (rows < 2)
        return 0;
    const uintptr_t step = (uintptr_t)x[1] - (uintptr_t)x[0]; /* addresses: the rows may walk backwards */
    for (size_t r = 2; r < rows; r++)
        if ((uintptr_t)x[r] - (uintptr_t)x[r - 1] != step)
            return 0;
    return (ptrdiff_t)(step * rows);
}

/* Prefetches bytes (at most 4 KiB: a longer row's first pass fetches the
 * rest ahead itself) from p + ahead: an address only, never read, so past
 * the array is fine. */
static inline void mxp_norm_rows_prefetch(const void *p, size_t bytes, ptrdiff_t ahead)
{
    if (!ahead)
        return;
    const uintptr_t a = (uintptr_t)p + (uintptr_t)ahead;
    for (uintptr_t o = 0; o < bytes && o < 4096; o += 64)
        __builtin_prefetch((const void *)(a + o));
}

static inline double mxp_norm_rstd(double sumsq, size_t n, double eps)
{
    return 1 / sqrt(sumsq / (double)n + eps);
}

static inline void mxp_norm_out(float *y, const float *x, size_t i, size_t n, const double *w, const double *b,
                                double mean, double rstd)
{
    for (; i < n; i++) {
        const double h = ((double)x[i] - mean) * rstd;
        y[i] = (float)((w ? h * w[i] : h) + (b ? b[i] : 0));
    }
}

/* L2: the divisor from the sum of squares, and outputs i .. n. */
static inline double mxp_norm_l2_div(double sumsq, double eps)
{
    const double s = sqrt(sumsq);
    return s > eps ? s : eps;
}

static inline void mxp_norm_l2_out(float *y, const float *x, size_t i, size_t n, double s)
{
    for (; i < n; i++)
        y[i] = (float)((double)x[i] / s);
}

/* The portable twin of the float32 list. */
static inline double mxp_norm_sum_portable(const float *x, size_t n, double c, int sq)
{
    double s[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += mxp_norm_term(x, i + k, c, sq);
    return mxp_norm_fold(s, x, i, n, c, sq);
}

static inline void mxp_norm_portable(float *y, const float *x, size_t n, const double *w, const double *b, double eps,
                                     int mode)
{
    mode &= ~MXP_NORM_STREAM; /* plain stores: the same bits */
    if (mode == MXP_NORM_L2) {
        mxp_norm_l2_out(y, x, 0, n, mxp_norm_l2_div(mxp_norm_sum_portable(x, n, 0, 1), eps));
        return;
    }
    const double mean = mode == MXP_NORM_RMS ? 0 : mxp_norm_sum_portable(x, n, 0, 0) / (double)n;
    mxp_norm_out(y, x, 0, n, w, b, mean, mxp_norm_rstd(mxp_norm_sum_portable(x, n, mean, 1), n, eps));
}

#define MXP_F32_NORM(isa, tile, fn, twin) mxp_f32_norm_ukernel fn;
#include "kernels/f32-norm-list.inc"
#undef MXP_F32_NORM
#define MXP_BF16_NORM(isa, tile, fn, twin) mxp_bf16_norm_ukernel fn;
#include "kernels/bf16-norm-list.inc"
#undef MXP_BF16_NORM

#endif
