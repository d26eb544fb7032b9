/* Internal: run fn(ctx, t, nthreads) for t = 0 .. nthreads-1, each on its
 * own thread (t = 0 on the caller's), and wait for all; and the jobs that
 * split a large array over the pool (conversions, elementwise operations). */
#ifndef MXP_CORE_THREADS_INTERNAL_H
#define MXP_CORE_THREADS_INTERNAL_H

#include <stddef.h>

#include "mxp/convert.h"
#include "mxp/threads.h"

void mxp_parallel(int nthreads, void (*fn)(void *ctx, int thread, int nthreads), void *ctx);

/* Threads for n elements when each thread should get at least per_share of
 * them: 1 below two shares, at most mxp_get_num_threads(). */
static inline int mxp_share_threads(size_t n, size_t per_share)
{
    const size_t shares = per_share ? n / per_share : 0;
    const int most = mxp_get_num_threads();
    return shares < 2 ? 1 : shares < (size_t)most ? (int)shares : most;
}

/* Share t of nthreads of n elements: [*lo, *hi), boundaries on multiples of
 * `unit` (64 elements: whole cache lines of contiguous operands; a GEMM's
 * MR rows or NR columns; 1), the units split as evenly as can be (thread
 * t takes units [U t / T, U (t + 1) / T)); empty when *lo >= *hi.  Every
 * element falls in exactly one share. */
static inline void mxp_share_range(size_t n, size_t unit, int t, int nthreads, size_t *lo, size_t *hi)
{
    const size_t units = (n + unit - 1) / unit;
    *lo = units * (size_t)t / (size_t)nthreads * unit;
    *hi = units * (size_t)(t + 1) / (size_t)nthreads * unit;
    *hi = *hi < n ? *hi : n;
}

/* One share of a job over n elements: elements [lo, hi), its flag counters
 * in *counts (NULL: none are kept). */
typedef void mxp_share_fn(const void *ctx, size_t lo, size_t hi, mxp_convert_flags *counts);

/* fn over n elements in nthreads shares, boundaries on multiples of 64
 * elements (whole cache lines of contiguous operands), each element in
 * exactly one, so results do not depend on nthreads.  One thread: the
 * caller's fn(ctx, 0, n, flags).  Else each share counts into counters of
 * its own (when flags is not NULL), summed into *flags after. */
void mxp_parallel_shares(int nthreads, size_t n, mxp_convert_flags *flags, mxp_share_fn *fn, const void *ctx);

#endif
