/* The peak-rate loops (src/kernels/peak-list.inc) and their measurement:
 * mxp_peak_kernel_name, mxp_peak_gflops.  Only the SIMD rows are
 * measured; the scalar rows are their twins, for the tests. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "core/dispatch.h"
#include "kernels/peak-kernels.h"
#include "mxp/cpu.h"

static const mxp_kernel loops[] = {
#define MXP_PEAK(op, isa, ops, fn, twin) MXP_KERNEL_ROW(isa, 0, ops, 1u << (op), fn, twin),
#include "kernels/peak-list.inc"
#undef MXP_PEAK
};

const mxp_kernel *mxp_peak_kernels(size_t *n)
{
    *n = sizeof loops / sizeof loops[0];
    return loops;
}

static const mxp_kernel *loop_for(mxp_peak_op op, bool scalar_too)
{
    if ((unsigned)op >= MXP_PEAK_OP_COUNT)
        return NULL;
    const mxp_kernel *k = mxp_kernel_pick(loops, sizeof loops / sizeof loops[0], mxp_get_isa(), 1u << op);
    return k && (scalar_too || k->isa > MXP_ISA_SCALAR) ? k : NULL;
}

const char *mxp_peak_op_name(mxp_peak_op op)
{
    static const char *const names[MXP_PEAK_OP_COUNT] = { "f32_fma", "f64_fma", "bf16_dot", "u8s8_dot" };
    return (unsigned)op < MXP_PEAK_OP_COUNT ? names[op] : "invalid";
}

const char *mxp_peak_kernel_name(mxp_peak_op op)
{
    const mxp_kernel *k = loop_for(op, false);
    return k ? k->name : NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double measure(const mxp_kernel *k, int reps)
{
    if (!k || reps < 1)
        return 0;
    mxp_peak_ukernel *loop = (mxp_peak_ukernel *)k->fn;
    loop(100000); /* wakes the vector unit up to its full clock */
    double best = 0;
    for (int r = 0; r < reps; r++) {
        const double t0 = now();
        const uint64_t ops = loop(400000);
        const double g = (double)ops / (now() - t0) / 1e9;
        best = g > best ? g : best;
    }
    return best;
}

double mxp_peak_gflops(mxp_peak_op op, int reps) { return measure(loop_for(op, false), reps); }

double mxp_peak_gflops_any_level(mxp_peak_op op, int reps) { return measure(loop_for(op, true), reps); }
