/* y[i] = f(x[i]) for i < n, a vector at a time, written once over the
 * vector names of the simd-*.h header the kernel file includes first (the
 * loops of src/kernels/f32-gelu/ and f64-gelu/).  The file defines
 * MXP_MAP_FN(v, count), the function of one vector, before including this;
 * count is the size_t * the caller passes (what f counts, such as lanes
 * redone; f may ignore it).  The tail is masked where the ISA has masked
 * loads (MXP_SIMD_MASKED), a zero-padded copy where not: either way the
 * lanes beyond n hold 0, so f must be harmless on 0. */
#ifndef MXP_KERNELS_MAP_TEMPLATE_H
#define MXP_KERNELS_MAP_TEMPLATE_H

#ifndef MXP_SIMD_V
#error "include a simd-*.h before map-template.h"
#endif

#include <stddef.h>
#include <string.h>

static inline __attribute__((always_inline)) void mxp_simd_map(MXP_SIMD_T *y, const MXP_SIMD_T *x, size_t n,
                                                              size_t *count)
{
    (void)count;
    size_t i = 0;
    for (; i + MXP_SIMD_N <= n; i += MXP_SIMD_N)
        MXP_SIMD_STOREU(y + i, MXP_MAP_FN(MXP_SIMD_LOADU(x + i), count));
    if (i < n) {
#if MXP_SIMD_MASKED
        const MXP_SIMD_MASK m = MXP_SIMD_TAIL_MASK(n - i);
        MXP_SIMD_MASK_STOREU(y + i, m, MXP_MAP_FN(MXP_SIMD_MASKZ_LOADU(m, x + i), count));
#else
        MXP_SIMD_T buf[MXP_SIMD_N] = { 0 };
        memcpy(buf, x + i, (n - i) * sizeof *x);
        MXP_SIMD_STOREU(buf, MXP_MAP_FN(MXP_SIMD_LOADU(buf), count));
        memcpy(y + i, buf, (n - i) * sizeof *y);
#endif
    }
}

#endif
