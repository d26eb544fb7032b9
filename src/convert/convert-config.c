/* The conversion kernel table, expanded from src/kernels/cvt-list.inc.
 * Entries are listed most capable ISA first within a pair. */
#include <pthread.h>

#include "convert/convert-config.h"
#include "kernels/cvt-kernels.h"

static const mxp_cvt_kernel kernels[] = {
#define MXP_CVT_KERNEL(dst, src, isa, modes, fname) { dst, src, isa, modes, fname, #fname },
#include "kernels/cvt-list.inc"
#undef MXP_CVT_KERNEL
    { MXP_DTYPE_INVALID, MXP_DTYPE_INVALID, MXP_ISA_SCALAR, 0, NULL, NULL },
};

static const mxp_cvt_kernel *scan(mxp_dtype dst, mxp_dtype src, mxp_rounding mode, mxp_isa isa)
{
    const mxp_cvt_kernel *best = NULL;
    for (const mxp_cvt_kernel *k = kernels; k->fn; k++) {
        if (k->dst == dst && k->src == src && k->isa <= isa && (k->modes >> mode & 1u) &&
            (!best || k->isa > best->isa))
            best = k;
    }
    return best;
}

/* Every answer, computed once: small conversions (the elementwise
 * operations' blocks) should not pay for a scan of the list. */
static const mxp_cvt_kernel *table[MXP_ISA_COUNT][MXP_DTYPE_COUNT][MXP_DTYPE_COUNT][MXP_ROUNDING_COUNT];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fill_table(void)
{
    for (int isa = 0; isa < MXP_ISA_COUNT; isa++)
        for (int d = 1; d < MXP_DTYPE_COUNT; d++)
            for (int s = 1; s < MXP_DTYPE_COUNT; s++)
                for (int m = 0; m < MXP_ROUNDING_COUNT; m++)
                    table[isa][d][s][m] = scan((mxp_dtype)d, (mxp_dtype)s, (mxp_rounding)m, (mxp_isa)isa);
}

const mxp_cvt_kernel *mxp_cvt_find(mxp_dtype dst, mxp_dtype src, mxp_rounding mode, mxp_isa isa)
{
    pthread_once(&once, fill_table);
    return table[isa][dst][src][mode];
}

const mxp_cvt_kernel *mxp_cvt_kernels(size_t *count)
{
    *count = sizeof kernels / sizeof kernels[0] - 1;
    return kernels;
}
