/* Prototypes of every conversion kernel, from cvt-list.inc. */
#ifndef MXP_KERNELS_CVT_KERNELS_H
#define MXP_KERNELS_CVT_KERNELS_H

#include "kernels/cvt-kernel.h"

#define MXP_CVT_KERNEL(dst, src, isa, modes, fname) \
    void fname(void *d, const void *s, size_t n, const mxp_cvt_params *p);
#include "kernels/cvt-list.inc"
#undef MXP_CVT_KERNEL

#endif
