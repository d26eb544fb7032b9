/* The thread count and a minimal parallel-for on pthreads.  A persistent
 * pool of workers (started on first use, joined by mxp_shutdown, rebuilt
 * on the next use; in a forked child, where they do not exist, forgotten
 * and rebuilt) takes each job: a few microseconds to hand out instead of
 * tens to start threads.  A call made while the pool is busy (another
 * thread of the program, or a nested call from inside a job) starts its
 * own threads (or, inside a worker, runs the shares in turn), so it never
 * waits for the pool.  Every share of every job runs in the library's
 * floating-point environment (core/fpenv.h), whichever thread runs it. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "core/alloc-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "core/threads-internal.h"
#include "mxp/threads.h"

enum { MAX_THREADS = MXP_MAX_THREADS };

static atomic_int requested; /* 0: default */

/* ---- the default: MXP_NUM_THREADS, else the online processors ----------- */

static int env_threads;  /* MXP_NUM_THREADS when valid, else 0 */
static int online_cpus;  /* capped at MAX_THREADS */
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;

/* Decimal digits only: no sign, no spaces, no suffix ("4abc", " 4", "+4",
 * "0x4" are not counts).  *value saturates at INT64_MAX. */
static bool parse_count(const char *s, int64_t *value)
{
    int64_t v = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        const int d = *s - '0';
        v = v > (INT64_MAX - d) / 10 ? INT64_MAX : v * 10 + d;
    }
    *value = v;
    return true;
}

/* Read once per process, with one message on stderr for a value that is
 * not used as given (docs/reliability.md, "Environment variables"). */
static void read_defaults(void)
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    online_cpus = cpus >= 1 ? (cpus < MAX_THREADS ? (int)cpus : MAX_THREADS) : 1;
    const char *env = getenv("MXP_NUM_THREADS");
    if (!env || !*env)
        return;
    int64_t n = 0;
    if (!parse_count(env, &n) || n < 1) {
        fprintf(stderr, "mxp: MXP_NUM_THREADS='%.40s' is not a positive integer; ignored\n", env);
    } else if (n > MAX_THREADS) {
        fprintf(stderr, "mxp: MXP_NUM_THREADS='%.40s' is above the maximum of %d threads; using %d\n", env,
                MAX_THREADS, MAX_THREADS);
        env_threads = MAX_THREADS;
    } else {
        env_threads = (int)n;
    }
}

static int default_threads(void)
{
    pthread_once(&defaults_once, read_defaults);
    return env_threads ? env_threads : online_cpus;
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

/* ---- threads started for one call: the fallback when the pool is busy ---- */

typedef struct worker {
    pthread_t thread;
    void (*fn)(void *ctx, int thread, int nthreads);
    void *ctx;
    int index, count;
} worker;

static void *run_worker(void *p)
{
    worker *w = p;
    mxp_prof_worker_thread();
    const mxp_fpenv env = mxp_fpenv_enter();
    w->fn(w->ctx, w->index, w->count);
    mxp_fpenv_leave(env);
    return NULL;
}

static void parallel_spawn(int nthreads, void (*fn)(void *ctx, int thread, int nthreads), void *ctx)
{
    worker w[MAX_THREADS];
    int started_here = 0;
    for (int t = 1; t < nthreads; t++) {
        w[t] = (worker){ 0, fn, ctx, t, nthreads };
        if (pthread_create(&w[t].thread, NULL, run_worker, &w[t]) != 0)
            break; /* fewer threads: the caller's split must not assume all ran */
        started_here = t;
    }
    for (int t = started_here + 1; t < nthreads; t++) /* could not start them all: the missing shares here */
        fn(ctx, t, nthreads);
    fn(ctx, 0, nthreads);
    for (int t = 1; t <= started_here; t++)
        pthread_join(w[t].thread, NULL);
}

/* ---- the pool ------------------------------------------------------------ */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    atomic_ulong generation; /* bumped (under mu) for each job, and to stop */
    void (*fn)(void *ctx, int thread, int nthreads);
    void *ctx;
    int nthreads;       /* the job's thread count */
    atomic_int pending; /* workers still in the job */
    bool stop;          /* under mu: workers return (mxp_shutdown) */
} pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL, NULL, 0, 0, false };

/* Polls before sleeping on a condition variable, both the idle workers
 * and the caller waiting for them: a sleeping thread takes 5-20 us to
 * wake, up to a quarter of a two-thread 256^3 GEMM (back-to-back 256^3
 * f32 calls on two threads: 120 -> 145 GFLOPS, bf16 280 -> 400), and a
 * model's calls come with gaps of tens to hundreds of microseconds of the
 * caller's own work between them.  The poll lasts SPIN_US: a pause hint
 * takes 25 ns on Zen 4 and 13.5 ns on the Intel Xeon (AMX), so a fixed
 * count of 4000 hints was 100 us on one and 54 us on the other, and
 * MiniLM's bfloat16 forward on two threads on the Xeon took 52-57 ms with
 * 54 us, 48-51 with 100 us, 48 with 250 us and 47-48 with 540 us (libgomp
 * polls longer by default).  The hints in SPIN_US are counted once, when
 * the first worker starts; the hint lets a sibling hyperthread run
 * meanwhile. */
enum { SPIN_US = 250, SPIN_MIN = 1000, SPIN_MAX = 1000000 };
static int spin_count = 4000; /* set by calibrate_spin before any worker exists */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* spin_count: the hints (or, without them, polls) in SPIN_US on this CPU. */
static void calibrate_spin(void)
{
    enum { PROBE = 2000 };
    atomic_int probe = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < PROBE && atomic_load(&probe) == 0; i++) /* the poll loops' body */
        cpu_relax();
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / PROBE;
    const double n = ns > 0 ? SPIN_US * 1e3 / ns : SPIN_MAX;
    spin_count = n < SPIN_MIN ? SPIN_MIN : n > SPIN_MAX ? SPIN_MAX : (int)n;
}

static pthread_mutex_t pool_busy = PTHREAD_MUTEX_INITIALIZER; /* one job at a time; guards started, workers */
static int started;                                          /* workers 1 .. started exist */
static pthread_t workers[MAX_THREADS];                       /* joinable: mxp_shutdown joins them */
static unsigned long start_generation[MAX_THREADS];          /* the generation a worker starts after */
static _Thread_local int in_worker;                          /* this thread is a pool worker */
static _Thread_local int in_job;                             /* this thread holds pool_busy */

/* The pool's workers are named, so that `top -H`, gdb and /proc tell them
 * from the program's own threads (Linux; a no-op elsewhere). */
static void name_worker(void)
{
#ifdef __linux__
    prctl(PR_SET_NAME, "mxp-worker", 0, 0, 0);
#endif
}

static void *pool_worker(void *arg)
{
    const int index = (int)(intptr_t)arg;
    name_worker();
    in_worker = 1;
    mxp_prof_worker_thread();
    unsigned long seen = start_generation[index];
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        if (atomic_load(&pool.generation) == seen) {
            /* poll first: the next job of a GEMM follows within microseconds */
            pthread_mutex_unlock(&pool.mu);
            for (int spin = 0; spin < spin_count && atomic_load(&pool.generation) == seen; spin++)
                cpu_relax();
            pthread_mutex_lock(&pool.mu);
            while (atomic_load(&pool.generation) == seen)
                pthread_cond_wait(&pool.wake, &pool.mu);
        }
        seen = atomic_load(&pool.generation);
        if (pool.stop)
            break;
        if (index < pool.nthreads) {
            void (*fn)(void *, int, int) = pool.fn;
            void *ctx = pool.ctx;
            const int n = pool.nthreads;
            pthread_mutex_unlock(&pool.mu);
            const mxp_fpenv env = mxp_fpenv_enter();
            fn(ctx, index, n);
            mxp_fpenv_leave(env);
            pthread_mutex_lock(&pool.mu);
            if (atomic_fetch_sub(&pool.pending, 1) == 1)
                pthread_cond_signal(&pool.done);
        }
    }
    pthread_mutex_unlock(&pool.mu);
    return NULL;
}

/* A forked child has only the thread that called fork: none of the
 * parent's workers, and locks that threads now gone may have held.  The
 * pool starts afresh (its next job starts new workers). */
static void pool_reset_in_child(void)
{
    started = 0;
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.wake, NULL);
    pthread_cond_init(&pool.done, NULL);
    pthread_mutex_init(&pool_busy, NULL);
    atomic_store(&pool.pending, 0);
    pool.stop = false;
}

/* At load, before any thread of the library exists (registering on first
 * use would leave a window in which a concurrent fork misses it). */
__attribute__((constructor)) static void register_atfork(void)
{
    pthread_atfork(NULL, NULL, pool_reset_in_child);
}

/* Workers 1 .. nthreads-1, as many as can be started; returns how many exist. */
static int grow_pool(int nthreads)
{
    if (started == 0 && nthreads > 1)
        calibrate_spin(); /* before any worker reads spin_count */
    while (started < nthreads - 1) {
        const int index = started + 1;
        start_generation[index] = atomic_load(&pool.generation);
        if (pthread_create(&workers[index], NULL, pool_worker, (void *)(intptr_t)index) != 0)
            break;
        started = index;
    }
    return started < nthreads - 1 ? started : nthreads - 1;
}

static void parallel_pool(int nthreads, void (*fn)(void *ctx, int thread, int nthreads), void *ctx)
{
    const int workers_used = grow_pool(nthreads);
    pthread_mutex_lock(&pool.mu);
    pool.fn = fn;
    pool.ctx = ctx;
    pool.nthreads = nthreads; /* workers take shares 1 .. workers_used */
    atomic_store(&pool.pending, workers_used);
    atomic_fetch_add(&pool.generation, 1);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mu);
    for (int t = workers_used + 1; t < nthreads; t++) /* shares no worker could be started for */
        fn(ctx, t, nthreads);
    fn(ctx, 0, nthreads);
    for (int spin = 0; spin < spin_count && atomic_load(&pool.pending) > 0; spin++) /* the workers end soon */
        cpu_relax();
    pthread_mutex_lock(&pool.mu);
    while (atomic_load(&pool.pending) > 0)
        pthread_cond_wait(&pool.done, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
}

void mxp_parallel(int nthreads, void (*fn)(void *ctx, int thread, int nthreads), void *ctx)
{
    const mxp_fpenv env = mxp_fpenv_enter(); /* the caller's shares; workers set their own */
    if (nthreads > MAX_THREADS)
        nthreads = MAX_THREADS;
    if (mxp_prof_on())
        mxp_prof_note_threads(nthreads);
    if (nthreads <= 1 || in_worker) { /* inside a job: the shares in turn */
        for (int t = nthreads - 1; t >= 0; t--)
            fn(ctx, t, nthreads > 1 ? nthreads : 1);
    } else if (pthread_mutex_trylock(&pool_busy) != 0) {
        parallel_spawn(nthreads, fn, ctx);
    } else {
        in_job = 1;
        parallel_pool(nthreads, fn, ctx);
        in_job = 0;
        pthread_mutex_unlock(&pool_busy);
    }
    mxp_fpenv_leave(env);
}

/* ---- a large array in shares ------------------------------------------- */

/* Adds the shares' flag counters into *into (NULL: nothing to add). */
static void flags_sum(mxp_convert_flags *into, const mxp_convert_flags *parts, int nthreads)
{
    for (int t = 0; into && t < nthreads; t++) {
        into->inexact += parts[t].inexact;
        into->overflow += parts[t].overflow;
        into->underflow += parts[t].underflow;
        into->invalid += parts[t].invalid;
    }
}

typedef struct share_job {
    size_t n;
    mxp_share_fn *fn;
    const void *ctx;
    bool counted;
    mxp_convert_flags counts[MXP_MAX_THREADS];
} share_job;

static void run_share(void *ctx, int t, int nthreads)
{
    share_job *j = ctx;
    size_t lo, hi;
    mxp_share_range(j->n, 64, t, nthreads, &lo, &hi);
    if (lo < hi)
        j->fn(j->ctx, lo, hi, j->counted ? &j->counts[t] : NULL);
}

void mxp_parallel_shares(int nthreads, size_t n, mxp_convert_flags *flags, mxp_share_fn *fn, const void *ctx)
{
    if (nthreads <= 1) {
        fn(ctx, 0, n, flags);
        return;
    }
    share_job job, *j = &job; /* 8 KiB of counters */
    memset(j->counts, 0, (size_t)nthreads * sizeof j->counts[0]);
    j->n = n;
    j->fn = fn;
    j->ctx = ctx;
    j->counted = flags != NULL;
    mxp_parallel(nthreads, run_share, j);
    flags_sum(flags, j->counts, nthreads);
}

void mxp_shutdown(void)
{
    if (in_worker || in_job) /* from inside a job: the pool is in use by this very call */
        return;
    pthread_mutex_lock(&pool_busy); /* a job of another thread finishes first */
    if (started > 0) {
        pthread_mutex_lock(&pool.mu);
        pool.stop = true;
        atomic_fetch_add(&pool.generation, 1);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.mu);
        for (int t = 1; t <= started; t++)
            pthread_join(workers[t], NULL);
        started = 0;
        pool.stop = false; /* no worker left to read it */
    }
    pthread_mutex_unlock(&pool_busy);
    mxp_alloc_release_cache();
}
