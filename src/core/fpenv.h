/* Internal: the floating-point environment the library computes in, set
 * on entry and handed back on exit, so that the caller's state (flush to
 * zero, denormals are zero, a directed rounding, unmasked exceptions)
 * never reaches a result (docs/reliability.md, "Floating-point
 * environment").
 *
 *     mxp_fpenv env = mxp_fpenv_enter();
 *     ... float work ...
 *     mxp_fpenv_leave(env);
 *
 * Every public entry that computes in floating point does this, and so does
 * every share of a parallel job on every thread (src/core/threads.c).
 * Nested pairs cost one read of the control register: entering when the
 * library's state is already set changes nothing.
 *
 * x86: MXCSR, the register SSE/AVX arithmetic reads (the library has no
 * x87 arithmetic: no long double).
 *
 *     bit  15  14..13  12 11 10  9  8  7   6    5..0
 *          FZ   RC     PM UM OM ZM DM IM  DAZ  flags (PE UE OE ZE DE IE)
 *
 *     library: 0x1f80 = FZ 0, RC 00 (nearest even), all six masked, DAZ 0.
 *
 * The status flags are left alone (a call may raise some; the library
 * promises nothing about them: its counters are mxp_convert_flags).
 * Elsewhere: C99 <fenv.h>, the default environment (FE_DFL_ENV) for the
 * call, the caller's restored after it. */
#ifndef MXP_CORE_FPENV_H
#define MXP_CORE_FPENV_H

#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))

enum { MXP_MXCSR_LIBRARY = 0x1f80, MXP_MXCSR_FLAGS = 0x3f };

typedef struct mxp_fpenv {
    unsigned mxcsr; /* the caller's */
} mxp_fpenv;

static inline mxp_fpenv mxp_fpenv_enter(void)
{
    const mxp_fpenv saved = { __builtin_ia32_stmxcsr() };
    if ((saved.mxcsr & ~(unsigned)MXP_MXCSR_FLAGS) != MXP_MXCSR_LIBRARY)
        __builtin_ia32_ldmxcsr(MXP_MXCSR_LIBRARY | (saved.mxcsr & MXP_MXCSR_FLAGS));
    return saved;
}

static inline void mxp_fpenv_leave(mxp_fpenv saved)
{
    if ((saved.mxcsr & ~(unsigned)MXP_MXCSR_FLAGS) != MXP_MXCSR_LIBRARY)
        __builtin_ia32_ldmxcsr(saved.mxcsr | (__builtin_ia32_stmxcsr() & MXP_MXCSR_FLAGS));
}

#else

#include <fenv.h>

typedef struct mxp_fpenv {
    fenv_t env; /* the caller's */
} mxp_fpenv;

static inline mxp_fpenv mxp_fpenv_enter(void)
{
    mxp_fpenv saved;
    fegetenv(&saved.env);
    fesetenv(FE_DFL_ENV);
    return saved;
}

static inline void mxp_fpenv_leave(mxp_fpenv saved)
{
    fesetenv(&saved.env);
}

#endif
#endif
