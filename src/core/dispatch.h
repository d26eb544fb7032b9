/* Internal: one row of a kernel list, and the one choice made from a list.
 *
 * Each operation's kernels are listed once, in an X-macro file
 * src/kernels/<dtype>-<op>-list.inc (the XNNPACK shape): the function, the
 * ISA level it needs, its parameter (elements per step, operations per
 * iteration ...) and its reference twin.  The per-op dispatch files expand
 * the list into a table of these rows with MXP_KERNEL_ROW, answer "which
 * kernel now" with mxp_kernel_pick, and hand the table to the tests, which
 * run every row against its twin.  Nothing else compares ISA levels. */
#ifndef MXP_CORE_DISPATCH_H
#define MXP_CORE_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "mxp/cpu.h"

/* Any kernel; the list's own typedef says what it really is. */
typedef void (*mxp_kernel_any)(void);

typedef struct mxp_kernel {
    const char *name;      /* the function's name, as grep finds it */
    mxp_kernel_any fn;
    const char *twin_name; /* the portable reference it is tested against */
    mxp_kernel_any twin;
    mxp_isa isa;           /* the lowest level it runs at */
    uint64_t features;     /* MXP_CPU_* bits it needs beyond the level (0: none) */
    int param;             /* the list's parameter (see the list) */
    uint32_t tags;         /* what the row serves, bits its list defines (functions,
                              output types ...); 0 where a list has one kind */
} mxp_kernel;

#define MXP_KERNEL_ROW(isa, features, param, tags, fn, twin) \
    { #fn, (mxp_kernel_any)(fn), #twin, (mxp_kernel_any)(twin), isa, features, param, tags }

/* Whether the machine runs k at level isa. */
static inline int mxp_kernel_runs(const mxp_kernel *k, mxp_isa isa)
{
    return k->isa <= isa && (!k->features || (k->features & mxp_cpu_features()) == k->features);
}

/* The most capable of the n rows that runs at level isa and serves every
 * bit of need, or NULL.  The first such row of the highest level wins. */
static inline const mxp_kernel *mxp_kernel_pick(const mxp_kernel *list, size_t n, mxp_isa isa, uint32_t need)
{
    const mxp_kernel *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const mxp_kernel *k = &list[i];
        if ((k->tags & need) == need && mxp_kernel_runs(k, isa) && (!best || k->isa > best->isa))
            best = k;
    }
    return best;
}

/* The rows of src/kernels/peak-list.inc, in its order (src/core/peak.c:
 * mxp_peak_gflops measures them), for the tests. */
const mxp_kernel *mxp_peak_kernels(size_t *n);
/* mxp_peak_gflops, the scalar level's loop too (the profiler's roof there). */
double mxp_peak_gflops_any_level(mxp_peak_op op, int reps);

#endif
