/* Internal: the profiler's hooks (profile.c).  A public entry point that
 * is an operation of its own wraps its work:
 *
 *     if (!mxp_prof_on())
 *         return work(...);
 *     mxp_prof p;
 *     mxp_prof_enter(&p, "gemm", bytes, flops);
 *     mxp_status st = work(...);
 *     mxp_prof_leave(&p);
 *     return st;
 *
 * Off, that is one relaxed atomic load and a predictable branch.  Calls
 * inside a profiled call (a GEMM inside a conv2d) are not recorded: the
 * outermost one on a thread is. */
#ifndef MXP_CORE_PROFILE_INTERNAL_H
#define MXP_CORE_PROFILE_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mxp/array.h"
#include "mxp/profile.h"

extern atomic_int mxp_prof_enabled;

static inline bool mxp_prof_on(void)
{
    return __builtin_expect(atomic_load_explicit(&mxp_prof_enabled, memory_order_relaxed) != 0, 0);
}

typedef struct mxp_prof {
    const char *op; /* static storage (or a plugin operator's name: never freed) */
    double bytes, flops;
    double t0;
    long minflt0, majflt0; /* -1: not sampled */
    bool outer;
} mxp_prof;

void mxp_prof_enter(mxp_prof *p, const char *op, double bytes, double flops);
void mxp_prof_leave(mxp_prof *p);
/* In a public entry point: returns `call` (an mxp_status expression),
 * recorded as one call of op moving `bytes` with `flops` when profiling is
 * on (bytes and flops are evaluated only then, before the call). */
#define MXP_PROF_RETURN(op, bytes, flops, call)              \
    do {                                                     \
        if (!mxp_prof_on())                                  \
            return (call);                                   \
        mxp_prof prof_;                                      \
        mxp_prof_enter(&prof_, (op), (bytes), (flops));      \
        const mxp_status prof_st_ = (call);                  \
        mxp_prof_leave(&prof_);                              \
        return prof_st_;                                     \
    } while (0)

/* The same with bytes and flops evaluated after the call (they may use the
 * array it made: mxp_prof_made(out)); in_bytes_, the inputs' bytes known
 * before, decides whether page faults are counted. */
#define MXP_PROF_RETURN_AFTER(op, call, in_bytes_, bytes_, flops_) \
    do {                                                     \
        if (!mxp_prof_on())                                  \
            return (call);                                   \
        mxp_prof prof_;                                      \
        mxp_prof_enter(&prof_, (op), (in_bytes_), 0);        \
        const mxp_status prof_st_ = (call);                  \
        prof_.bytes = (bytes_);                              \
        prof_.flops = (flops_);                              \
        mxp_prof_leave(&prof_);                              \
        return prof_st_;                                     \
    } while (0)

/* mxp_parallel: a job of n threads ran within the current call. */
void mxp_prof_note_threads(int n);
/* The pool's workers: every call they make is inside the caller's. */
void mxp_prof_worker_thread(void);

/* The bytes of an array's elements, its element count (0 for NULL), and
 * the array an entry point made (NULL when out is NULL or it failed). */
static inline double mxp_prof_size(const mxp_array *a) { return a ? (double)mxp_array_size(a) : 0.0; }
static inline double mxp_prof_array_bytes(const mxp_array *a)
{
    return a ? (double)mxp_array_size(a) * (double)mxp_array_itemsize(a) : 0.0;
}
static inline const mxp_array *mxp_prof_made(mxp_array *const *out) { return out ? *out : NULL; }
/* A convolution's FLOPs: 2 per multiply-add, each output element summing
 * over the weight's other axes (C/groups x KH x KW in either layout). */
static inline double mxp_prof_conv_flops(const mxp_array *out, const mxp_array *weight)
{
    if (!out || !weight || mxp_array_ndim(weight) < 1 || mxp_array_shape(weight)[0] == 0)
        return 0;
    return 2.0 * (double)mxp_array_size(out) * (double)mxp_array_size(weight) / (double)mxp_array_shape(weight)[0];
}

/* ---- what the report (profile-report.c) reads ------------- */

enum { MXP_PROF_MAX_KINDS = 128 };
#define MXP_PROF_SMALL_S 10e-6 /* a call this short is mostly fixed costs */

typedef struct mxp_prof_kind {
    const char *op;
    uint64_t calls;
    double total_s, min_s, max_s, bytes, flops;
    double small_s; /* the time of calls shorter than MXP_PROF_SMALL_S */
    uint64_t minflt, majflt, sampled_calls;
    int max_threads;
} mxp_prof_kind;

typedef struct mxp_prof_event {
    const char *op;
    double ts_us, dur_us, bytes, flops;
    uint32_t tid;
} mxp_prof_event;

/* A copy of the kinds recorded (up to cap; out NULL: none, the count of
 * all), and of the events:
 * *events is a new array (malloc) of *n_events, *dropped counts events
 * past the cap. */
int mxp_prof_snapshot(mxp_prof_kind *kinds, int cap);
mxp_status mxp_prof_events(mxp_prof_event **events, size_t *n_events, uint64_t *dropped);

#endif
