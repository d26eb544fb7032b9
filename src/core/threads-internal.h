/* Internal: run fn(ctx, t, nthreads) for t = 0 .. nthreads-1, each on its
 * own thread (t = 0 on the caller's), and wait for all. */
#ifndef MXP_CORE_THREADS_INTERNAL_H
#define MXP_CORE_THREADS_INTERNAL_H

void mxp_parallel(int nthreads, void (*fn)(void *ctx, int thread, int nthreads), void *ctx);

#endif
