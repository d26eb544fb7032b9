/* mxp — the profiler: per operation kind, calls, time, bytes moved, FLOPs,
 * achieved GB/s and GFLOPS against this machine's measured memory
 * bandwidth and FMA peak, page faults, threads, and a verdict with one
 * line of advice (docs/profiling.md).
 *
 *     mxp_profile_begin();
 *     ... the program's mxp calls ...
 *     mxp_profile_end();
 *     mxp_profile_write(stderr, MXP_PROFILE_TABLE);
 *
 * MXP_PROFILE=1 in the environment does the same around the whole process
 * (the table on stderr at exit). */
#ifndef MXP_PROFILE_H
#define MXP_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What bounds an operation kind's time, from its calls together. */
typedef enum mxp_verdict {
    MXP_VERDICT_MEMORY = 0, /* below the roofline's ridge: bytes, not FLOPs, set the time */
    MXP_VERDICT_COMPUTE,    /* above the ridge: FLOPs set the time */
    MXP_VERDICT_OVERHEAD,   /* most of the time in calls under 10 us: fixed costs dominate */
    MXP_VERDICT_FAULTS,     /* page faults take a large share: new buffers each call */
    MXP_VERDICT_COUNT
} mxp_verdict;

/* "memory-bound", "compute-bound", "overhead-bound", "fault-bound". */
MXP_API const char *mxp_verdict_name(mxp_verdict v);

/* Starts recording (the records of an earlier run are dropped).
 * MXP_ERR_INVALID_ARGUMENT if a profile is already running (begin and end
 * do not nest). */
MXP_API mxp_status mxp_profile_begin(void);
/* Stops recording; the records stay for the functions below until the
 * next begin.  MXP_ERR_INVALID_ARGUMENT if none is running. */
MXP_API mxp_status mxp_profile_end(void);
MXP_API int mxp_profile_active(void);
/* Drops the records kept so far, running or not (a running profile goes
 * on from an empty record: a warm-up left out, a loop measured per phase);
 * the trace's timestamps count from the reset. */
MXP_API void mxp_profile_reset(void);

/* This machine's roofline: memory bandwidth (a streaming copy of 2 x 64
 * MiB on one thread, bytes read + written, best of 5), the float32 FMA
 * peak of one core at the ISA level in use (mxp_peak_gflops), and the cost
 * of a page fault (touching fresh 4 KiB pages of 32 MiB, best of 3).
 * Measured once (about half a second) and kept in
 * $XDG_CACHE_HOME/mxp/roofline (~/.cache/mxp/roofline), one line per CPU
 * and ISA level; MXP_PROFILE_MACHINE="GBPS,GFLOPS,FAULT_US" gives them
 * instead. */
typedef struct mxp_profile_machine {
    size_t struct_size;   /* 0: this release's layout, or sizeof(mxp_profile_machine) */
    double memory_gbps;
    double peak_gflops;   /* one thread */
    double fault_us;      /* one minor page fault on a fresh 4 KiB page (the trap and the zeroing) */
    char cpu[96];         /* mxp_cpu_brand() and the ISA level */
    int source;           /* 0 measured now, 1 from the cache file, 2 MXP_PROFILE_MACHINE */
} mxp_profile_machine;
MXP_API mxp_status mxp_profile_get_machine(mxp_profile_machine *m);

/* One operation kind of the last (or running) profile. */
typedef struct mxp_profile_entry {
    size_t struct_size;   /* 0: this release's layout, or sizeof(mxp_profile_entry) */
    const char *op;       /* "gemm", "convert", "unary", "conv2d", "op:gelu" (a plugin's) ... */
    uint64_t calls;
    double total_s, min_s, max_s;
    double bytes;         /* read + written, every call */
    double flops;
    double gbps, gflops;  /* bytes / total_s, flops / total_s */
    double memory_fraction;  /* gbps / the measured bandwidth */
    double peak_fraction;    /* gflops / (the one-thread peak x max_threads) */
    uint64_t minor_faults, major_faults; /* counted on calls whose inputs are >= 4 MiB */
    int max_threads;      /* the most threads one call used */
    mxp_verdict verdict;
    const char *advice;   /* one line */
} mxp_profile_entry;

/* Entries, the kinds that took the most time first. */
MXP_API int mxp_profile_count(void);
MXP_API mxp_status mxp_profile_entry_at(int index, mxp_profile_entry *e);

typedef enum mxp_profile_format {
    MXP_PROFILE_TABLE = 0, /* text: one line per kind, the machine named */
    MXP_PROFILE_JSON,      /* one object: machine, entries */
    MXP_PROFILE_TRACE,     /* Chrome trace events (chrome://tracing, Perfetto): one per call */
    MXP_PROFILE_FORMAT_COUNT
} mxp_profile_format;

MXP_API mxp_status mxp_profile_write(FILE *f, mxp_profile_format format);
/* The same into a file, written atomically (docs/npy.md's rule). */
MXP_API mxp_status mxp_profile_save(const char *path, mxp_profile_format format);

#ifdef __cplusplus
}
#endif

#endif
