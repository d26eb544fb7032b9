/* bfloat16 and float16 -> the 8-bit float formats (float8, float6, float4;
 * one result a byte) and the sub-byte integers by byte-lane tables
 * (src/kernels/x16-lut/, x32-lut/, list x16-lut-list.inc), for the modes that
 * treat both signs alike (nearest even, nearest away, toward zero).
 *
 * Each 16-bit source pattern becomes two 7-bit indices:
 *
 *   bfloat16:  X = min(max(E - elow, 0), 127)     Y = its 7 significand bits
 *   float16:   X = its high byte without the sign  Y = significand bits 9..3, the last OR-ed
 *              (E and significand bits 9, 8)           with bits 2..0 (a sticky bit: exact for
 *                                                      targets of at most 5 significand bits)
 *
 * and the magnitude's result is
 *
 *   in the target's normal range and above:  min(row[X] + inc[Y], ovf)
 *   below (its subnormals, zero):            min(cls[row[X] | key[Y]], ovf)
 *
 * the normal range being X >= xnorm (bfloat16) or 2X >= xnorm (float16),
 * with the sign bit (sign_bit) OR-ed in where the source's is set (not on
 * a zero result for the fnuz formats, which have no -0).  An integer of
 * b bits is such a format: its magnitudes up to L (2^(b-1) signed: the
 * negative end; 2^b - 1 unsigned) lie on the grid of a float format with
 * p significand bits whose normal range starts at 2^p (2^p <= L < 2^(p+1)),
 * 0.5 to 2^p its subnormal binades, and ovf = L; the tables hold
 * magnitudes, a negative result is then -r in b bits (unsigned: 0) and a
 * positive one at most int_max.  The tables leave to `rest` float16's
 * E = 31 (infinities, NaNs) and bfloat16's X >= 127 (E >= elow + 127:
 * infinities, NaNs, huge values): a vector holding one goes there whole.
 * float8_e3m4's 5-bit keys make six classes of 32 (`wide`: cls by the
 * index's 8 bits).  In the normal
 * range the result is the exponent's base plus the rounded significand,
 * whose carry moves into the exponent and past the largest finite value
 * into ovf (the target's overflow result); below, row[X] is the binade's
 * class and key[Y] the significand's kept and rounding bits plus a sticky
 * bit.  src/convert/convert-x16-lut.c fills the tables from the reference
 * converter's answers (mxp_cvt_x16_lut_tables); the twin is mxp_x16_lut_x8_ref
 * (src/convert/convert-ref.c). */
#ifndef MXP_KERNELS_X16_LUT_KERNELS_H
#define MXP_KERNELS_X16_LUT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cvt-kernel.h"

enum { MXP_X16_LUT_FLOAT, MXP_X16_LUT_SIGNED, MXP_X16_LUT_UNSIGNED };


struct mxp_x16_lut_tables {
    _Alignas(64) uint8_t row[128]; /* by X: the base (X >= xnorm) or the class (X < xnorm) */
    uint8_t inc[128];              /* by Y: the rounded significand added to a normal base */
    uint8_t key[128];              /* by Y: the column of cls */
    uint8_t cls[256];              /* by row[X] | key[Y]: 128 entries, 192 where wide */
    uint8_t elow;  /* bfloat16's X: E - elow */
    uint8_t xnorm; /* the normal range: X >= xnorm (bfloat16), 2X >= xnorm (float16) */
    uint8_t ovf, sign_bit;
    int fnuz;     /* no negative zero */
    int kind;     /* MXP_X16_LUT_FLOAT, _SIGNED, _UNSIGNED: the results */
    int wide;     /* 4 significand bits (float8_e3m4): a 5-bit key, cls by all 8 bits of the index */
    uint8_t int_max, int_mask; /* integers: the largest positive result, b bits */
    int f16;      /* float16 sources (else bfloat16) */
    mxp_cvt_fn rest; /* does what the tables leave */
    mxp_cvt_params p;
};
typedef struct mxp_x16_lut_tables mxp_x16_lut_tables;

typedef void mxp_x16_lut_ukernel(void *dst, const void *src, size_t n, const mxp_x16_lut_tables *t);

#define MXP_X16_LUT(isa, features, bits, fn, twin) mxp_x16_lut_ukernel fn;
#include "kernels/x16-lut-list.inc"
#undef MXP_X16_LUT

#endif
