/* The profiler's records: per operation kind, the outermost calls' time,
 * bytes, FLOPs, page faults and threads, and one trace event per call
 * (profile-internal.h; the report is profile-report.c). */
#define _GNU_SOURCE /* RUSAGE_SELF's fields, syscall */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/profile-internal.h"

atomic_int mxp_prof_enabled;

enum { MAX_EVENTS = 1 << 20,          /* trace events kept per profile */
       FAULT_SAMPLE_BYTES = 4 << 20 }; /* calls moving less skip getrusage (0.3-0.6 us each) */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf */
static mxp_prof_kind kinds[MXP_PROF_MAX_KINDS];
static int n_kinds;
static mxp_prof_event *events;
static size_t n_events, cap_events;
static uint64_t dropped;
static double origin; /* the begin's time: trace timestamps count from it */
static int running;

static _Thread_local int depth;
static _Thread_local int threads_seen;
static _Thread_local uint32_t tid; /* gettid() costs a system call: once per thread */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void mxp_prof_worker_thread(void) { depth = 1; }

void mxp_prof_note_threads(int n)
{
    if (n > threads_seen)
        threads_seen = n;
}

void mxp_prof_enter(mxp_prof *p, const char *op, double bytes, double flops)
{
    p->outer = depth++ == 0;
    if (!p->outer)
        return;
    p->op = op;
    p->bytes = bytes;
    p->flops = flops;
    p->minflt0 = p->majflt0 = -1;
    threads_seen = 1;
    if (bytes >= FAULT_SAMPLE_BYTES) {
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) == 0)
            p->minflt0 = ru.ru_minflt, p->majflt0 = ru.ru_majflt;
    }
    p->t0 = now_s();
}

static mxp_prof_kind *kind_of(const char *op)
{
    for (int i = 0; i < n_kinds; i++)
        if (kinds[i].op == op || !strcmp(kinds[i].op, op))
            return &kinds[i];
    if (n_kinds == MXP_PROF_MAX_KINDS)
        return NULL;
    kinds[n_kinds] = (mxp_prof_kind){ .op = op, .min_s = 1e300 };
    return &kinds[n_kinds++];
}

void mxp_prof_leave(mxp_prof *p)
{
    depth--;
    if (!p->outer)
        return;
    const double t1 = now_s(), dt = t1 - p->t0;
    long minflt = 0, majflt = 0;
    if (p->minflt0 >= 0) {
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) == 0)
            minflt = ru.ru_minflt - p->minflt0, majflt = ru.ru_majflt - p->majflt0;
    }
    if (!tid)
        tid = (uint32_t)syscall(SYS_gettid);
    pthread_mutex_lock(&lock);
    if (running) { /* an end may have come while this call ran */
        mxp_prof_kind *k = kind_of(p->op);
        if (k) {
            k->calls++;
            k->total_s += dt;
            k->small_s += dt < MXP_PROF_SMALL_S ? dt : 0;
            k->min_s = dt < k->min_s ? dt : k->min_s;
            k->max_s = dt > k->max_s ? dt : k->max_s;
            k->bytes += p->bytes;
            k->flops += p->flops;
            k->minflt += (uint64_t)minflt;
            k->majflt += (uint64_t)majflt;
            k->sampled_calls += p->minflt0 >= 0;
            k->max_threads = threads_seen > k->max_threads ? threads_seen : k->max_threads;
        }
        if (n_events == cap_events && cap_events < MAX_EVENTS) {
            size_t cap = cap_events ? cap_events * 2 : 4096;
            mxp_prof_event *e = realloc(events, cap * sizeof *e);
            if (e)
                events = e, cap_events = cap;
        }
        if (n_events < cap_events)
            events[n_events++] = (mxp_prof_event){ p->op, (p->t0 > origin ? p->t0 - origin : 0) * 1e6, dt * 1e6, p->bytes, p->flops, tid };
        else
            dropped++;
    }
    pthread_mutex_unlock(&lock);
}

static void drop_records(void) /* under the lock */
{
    n_kinds = 0;
    n_events = 0;
    dropped = 0;
    origin = now_s();
}

mxp_status mxp_profile_begin(void)
{
    pthread_mutex_lock(&lock);
    if (running) {
        pthread_mutex_unlock(&lock);
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_profile_begin: a profile is already running (begin and "
                                                   "end do not nest; end it first)");
    }
    drop_records();
    running = 1;
    atomic_store(&mxp_prof_enabled, 1);
    pthread_mutex_unlock(&lock);
    return MXP_OK;
}

mxp_status mxp_profile_end(void)
{
    pthread_mutex_lock(&lock);
    const int was = running;
    running = 0;
    atomic_store(&mxp_prof_enabled, 0);
    pthread_mutex_unlock(&lock);
    return was ? MXP_OK : mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_profile_end: no profile is running");
}

void mxp_profile_reset(void)
{
    pthread_mutex_lock(&lock);
    drop_records();
    pthread_mutex_unlock(&lock);
}

int mxp_profile_active(void)
{
    pthread_mutex_lock(&lock);
    const int r = running;
    pthread_mutex_unlock(&lock);
    return r;
}

int mxp_prof_snapshot(mxp_prof_kind *out, int cap)
{
    pthread_mutex_lock(&lock);
    const int n = n_kinds;
    if (out)
        memcpy(out, kinds, (size_t)(n < cap ? n : cap) * sizeof *out);
    pthread_mutex_unlock(&lock);
    return out && cap < n ? cap : n;
}

mxp_status mxp_prof_events(mxp_prof_event **out, size_t *n, uint64_t *n_dropped)
{
    pthread_mutex_lock(&lock);
    *out = malloc((n_events ? n_events : 1) * sizeof **out);
    if (*out) {
        memcpy(*out, events, n_events * sizeof **out);
        *n = n_events;
        *n_dropped = dropped;
    }
    pthread_mutex_unlock(&lock);
    return *out ? MXP_OK : mxp_error(MXP_ERR_NO_MEMORY, "profile: no memory for a copy of the trace");
}

/* ---- MXP_PROFILE=1 ------------------------------------------------------- */

static void at_exit(void) /* the report of MXP_PROFILE=1 */
{
    if (!mxp_profile_active())
        return;
    mxp_profile_end();
    mxp_profile_write(stderr, MXP_PROFILE_TABLE);
    const char *json = getenv("MXP_PROFILE_JSON"), *trace = getenv("MXP_PROFILE_TRACE");
    if (json && *json && mxp_profile_save(json, MXP_PROFILE_JSON) != MXP_OK)
        fprintf(stderr, "mxp: MXP_PROFILE_JSON: %s\n", mxp_last_error());
    if (trace && *trace && mxp_profile_save(trace, MXP_PROFILE_TRACE) != MXP_OK)
        fprintf(stderr, "mxp: MXP_PROFILE_TRACE: %s\n", mxp_last_error());
}

__attribute__((constructor)) static void profile_from_env(void)
{
    const char *v = getenv("MXP_PROFILE");
    if (!v || !*v || !strcmp(v, "0"))
        return;
    if (strcmp(v, "1") != 0) {
        fprintf(stderr, "mxp: MXP_PROFILE='%s' is not 0 or 1; ignored\n", v);
        return;
    }
    if (mxp_profile_begin() == MXP_OK)
        atexit(at_exit);
}
