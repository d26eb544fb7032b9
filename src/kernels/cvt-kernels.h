/* Prototypes of every conversion kernel, from cvt-list.inc. */
#ifndef MXP_KERNELS_CVT_KERNELS_H
#define MXP_KERNELS_CVT_KERNELS_H

#include "convert/convert-kernel.h"

#define MXP_CVT_KERNEL(dst, src, isa, modes, fname) \
    void fname(void *d, const void *s, size_t n, const mxp_cvt_params *p);
#include "kernels/cvt-list.inc"
#undef MXP_CVT_KERNEL

/* Table lookup for 8-bit sources to 8-bit results: dst[i] = table[src[i]]
 * (table: 256 entries).  Twin: mxp_lut8_ref. */
typedef void (*mxp_lut8_fn)(void *dst, const void *src, size_t n, const uint8_t *table);
void mxp_lut8_u8__avx512f(void *dst, const void *src, size_t n, const uint8_t *table);
void mxp_lut8_u8__avx512vbmi(void *dst, const void *src, size_t n, const uint8_t *table);

/* The same for 16-bit results (table: 256 entries).  Twin: mxp_lut16_ref. */
void mxp_lut8_u16__avx512vbmi(void *dst, const void *src, size_t n, const uint16_t *table);

/* And 64-bit results whose low 40 bits are 0 in every entry (float64
 * values of 8-bit sources).  Twin: mxp_lut64_ref. */
void mxp_lut8_u64__avx512vbmi(void *dst, const void *src, size_t n, const uint64_t *table);

#endif
