/* Internal: the portable reference converter.  Every pair, every mode,
 * exactly one rounding from the exact source value.  It is the twin that
 * every SIMD kernel is tested against, and the path taken when counters are
 * requested or no kernel exists. */
#ifndef MXP_CONVERT_REF_H
#define MXP_CONVERT_REF_H

#include "kernels/cvt-kernel.h"

void mxp_convert_ref(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type,
                     size_t n, const mxp_cvt_params *p);

/* The table lookups' twins: dst[i] = table[src[i]], 8-bit sources, 8-bit
 * 16-bit or 64-bit results. */
void mxp_lut8_ref(void *dst, const void *src, size_t n, const uint8_t *table);
void mxp_lut16_ref(void *dst, const void *src, size_t n, const uint16_t *table);
void mxp_lut32_ref(void *dst, const void *src, size_t n, const uint32_t *table);
void mxp_lut64_ref(void *dst, const void *src, size_t n, const uint64_t *table);
/* bfloat16/float16 -> the 8-bit float formats by byte-lane tables, one
 * element at a time (kernels/x16-lut-kernels.h): the twin of
 * src/kernels/x16-lut/, x32-lut/. */
struct mxp_x16_lut_tables;
void mxp_x16_lut_x8_ref(void *dst, const void *src, size_t n, const struct mxp_x16_lut_tables *t);
/* float32 sources: rounded to odd into bfloat16, then the bfloat16 tables. */
void mxp_x32_lut_x8_ref(void *dst, const void *src, size_t n, const struct mxp_x16_lut_tables *t);

#endif
