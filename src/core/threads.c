/* The thread count and a minimal parallel-for on pthreads: threads are
 * started per call (tens of microseconds), so callers use it only for work
 * of milliseconds; a persistent pool can replace it behind the same
 * interface. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/error.h"
#include "core/threads-internal.h"
#include "mxp/threads.h"

enum { MAX_THREADS = 256 };

static atomic_int requested; /* 0: default */

static int default_threads(void)
{
    const char *env = getenv("MXP_NUM_THREADS");
    if (env && *env) {
        int n = atoi(env);
        if (n >= 1)
            return n < MAX_THREADS ? n : MAX_THREADS;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus >= 1 ? (cpus < MAX_THREADS ? (int)cpus : MAX_THREADS) : 1;
}

mxp_status mxp_set_num_threads(int n)
{
    if (n < 0 || n > MAX_THREADS)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "thread count %d is outside 0..%d", n, MAX_THREADS);
    atomic_store(&requested, n);
    return MXP_OK;
}

int mxp_get_num_threads(void)
{
    int n = atomic_load(&requested);
    return n ? n : default_threads();
}

typedef struct worker {
    pthread_t thread;
    void (*fn)(void *ctx, int thread, int nthreads);
    void *ctx;
    int index, count;
} worker;

static void *run_worker(void *p)
{
    worker *w = p;
    w->fn(w->ctx, w->index, w->count);
    return NULL;
}

void mxp_parallel(int nthreads, void (*fn)(void *ctx, int thread, int nthreads), void *ctx)
{
    worker w[MAX_THREADS];
    int started = 0;
    if (nthreads > MAX_THREADS)
        nthreads = MAX_THREADS;
    for (int t = 1; t < nthreads; t++) {
        w[t] = (worker){ 0, fn, ctx, t, nthreads };
        if (pthread_create(&w[t].thread, NULL, run_worker, &w[t]) != 0)
            break; /* fewer threads: the caller's split must not assume all ran */
        started = t;
    }
    if (started + 1 < nthreads) { /* could not start them all: do the missing shares here */
        for (int t = started + 1; t < nthreads; t++)
            fn(ctx, t, nthreads);
    }
    fn(ctx, 0, nthreads);
    for (int t = 1; t <= started; t++)
        pthread_join(w[t].thread, NULL);
}
