/* The conversion kernel table, expanded from src/kernels/cvt-list.inc.
 * Entries are listed most capable ISA first within a pair. */
#include "convert/convert-config.h"
#include "kernels/cvt-kernels.h"

static const mxp_cvt_kernel kernels[] = {
#define MXP_CVT_KERNEL(dst, src, isa, modes, fname) { dst, src, isa, modes, fname, #fname },
#include "kernels/cvt-list.inc"
#undef MXP_CVT_KERNEL
    { MXP_DTYPE_INVALID, MXP_DTYPE_INVALID, MXP_ISA_SCALAR, 0, NULL, NULL },
};

const mxp_cvt_kernel *mxp_cvt_find(mxp_dtype dst, mxp_dtype src, mxp_rounding mode, mxp_isa isa)
{
    const mxp_cvt_kernel *best = NULL;
    for (const mxp_cvt_kernel *k = kernels; k->fn; k++) {
        if (k->dst == dst && k->src == src && k->isa <= isa && (k->modes >> mode & 1u) &&
            (!best || k->isa > best->isa))
            best = k;
    }
    return best;
}

const mxp_cvt_kernel *mxp_cvt_kernels(size_t *count)
{
    *count = sizeof kernels / sizeof kernels[0] - 1;
    return kernels;
}
