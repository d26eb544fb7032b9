/* Table lookup from 8-bit sources (src/kernels/u8-lut/, list
 * u8-lut-list.inc): dst[i] = table[src[i]] for n bytes of src and a
 * 256-entry table of 8-bit, 16-bit, 32-bit or 64-bit results (the _x8,
 * _x16, _x32, _x64 kernels; the 64-bit entries have their low 40 bits 0:
 * float64 values of 8-bit sources).  The conversions fill the table with the reference
 * converter's answers for all 256 patterns (src/convert/convert.c), so the
 * results are the reference's by construction; the twins are
 * mxp_lut8_ref, mxp_lut16_ref, mxp_lut32_ref and mxp_lut64_ref
 * (src/convert/convert-ref.c).
 * The 8-bit kernels read each step's source before writing: safe in
 * place. */
#ifndef MXP_KERNELS_U8_LUT_KERNELS_H
#define MXP_KERNELS_U8_LUT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

typedef void mxp_u8_lut_x8_ukernel(void *dst, const void *src, size_t n, const uint8_t *table);
typedef void mxp_u8_lut_x16_ukernel(void *dst, const void *src, size_t n, const uint16_t *table);
typedef void mxp_u8_lut_x32_ukernel(void *dst, const void *src, size_t n, const uint32_t *table);
typedef void mxp_u8_lut_x64_ukernel(void *dst, const void *src, size_t n, const uint64_t *table);

#define MXP_U8_LUT(isa, features, width, fn, twin) mxp_u8_lut_x##width##_ukernel fn;
#include "kernels/u8-lut-list.inc"
#undef MXP_U8_LUT

#endif
