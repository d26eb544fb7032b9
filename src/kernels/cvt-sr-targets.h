/* The stochastic-rounding targets of the add-and-shift kernels
 * (cvt-sr-avx2.h, cvt-sr-avx512.h): one list, one table of the float
 * formats, the integer targets' ranges -- shared by both tiers. */
#ifndef MXP_KERNELS_CVT_SR_TARGETS_H
#define MXP_KERNELS_CVT_SR_TARGETS_H

#include <stddef.h>

#ifndef MXP_INLINE
#define MXP_INLINE static inline __attribute__((always_inline))
#endif

typedef enum {
    SR_F16, SR_BF16, SR_E4M3, SR_E5M2, SR_S8, SR_U8,
    /* the 0.2 formats: float8_e3m4, e4m3 (IEEE), e4m3b11fnuz, e4m3fnuz, e5m2fnuz, float6, float4 */
    SR_E3M4, SR_E4M3IEEE, SR_E4M3B11, SR_E4M3FNUZ, SR_E5M2FNUZ, SR_E2M3, SR_E3M2, SR_E2M1,
    /* the sub-byte integers, a byte each: int8's method, then clamped (signed: the low bits) */
    SR_S4, SR_U4, SR_S2, SR_U2, SR_S1, SR_U1
} mxp_sr_target;

/* A float target's special values: IEEE's or E4M3's (as has_inf says), fnuz
 * (no infinity, the -0 pattern is the NaN) or finite (float6/float4: no
 * infinity, no NaN).  The values of cvt-round-avx2.h's MXP_NARROW_FNUZ and
 * MXP_NARROW_FINITE (and the _512 ones), which the cores check. */
enum { MXP_SR_FNUZ = 1, MXP_SR_FINITE = 2 };

/* A float target.  Encodings are of the magnitude: the sign is or-ed in. */
typedef struct mxp_sr_fmt {
    int bits;          /* 16, 8, or 6 and 4 (float6/float4: the low bits of a byte) */
    int mbits;         /* mantissa bits */
    int bias;
    int has_inf;       /* 0: OCP E4M3, S.1111.111 is the only NaN */
    unsigned ovf_bits; /* float32 bits of the first pattern past the largest finite (infinity or none) */
    int style;         /* MXP_SR_FNUZ, MXP_SR_FINITE; 0: as has_inf says */
} mxp_sr_fmt;

static const mxp_sr_fmt mxp_sr_fmts[] = {
    [SR_F16] = { 16, 10, 15, 1, 0x47800000, 0 },              /* 65536 */
    [SR_BF16] = { 16, 7, 127, 1, 0x7f800000, 0 },             /* 2^128 */
    [SR_E4M3] = { 8, 3, 7, 0, 0x43f00000, 0 },                /* 480: 0x7f is NaN */
    [SR_E5M2] = { 8, 2, 15, 1, 0x47800000, 0 },               /* 65536 */
    [SR_E3M4] = { 8, 4, 3, 1, 0x41800000, 0 },                /* 16 */
    [SR_E4M3IEEE] = { 8, 3, 7, 1, 0x43800000, 0 },            /* 256 */
    [SR_E4M3B11] = { 8, 3, 11, 0, 0x42000000, MXP_SR_FNUZ },  /* 32 */
    [SR_E4M3FNUZ] = { 8, 3, 8, 0, 0x43800000, MXP_SR_FNUZ },  /* 256 */
    [SR_E5M2FNUZ] = { 8, 2, 16, 0, 0x47800000, MXP_SR_FNUZ }, /* 65536 */
    [SR_E2M3] = { 6, 3, 1, 0, 0x41000000, MXP_SR_FINITE },    /* 8 */
    [SR_E3M2] = { 6, 2, 3, 0, 0x42000000, MXP_SR_FINITE },    /* 32 */
    [SR_E2M1] = { 4, 1, 1, 0, 0x41000000, MXP_SR_FINITE },    /* 8 */
};

MXP_INLINE size_t mxp_sr_out_size(mxp_sr_target t)
{
    return t == SR_F16 || t == SR_BF16 ? 2 : 1;
}

/* The integer targets: whether, signed, and their range */
MXP_INLINE int mxp_sr_int(mxp_sr_target t)
{
    return t == SR_S8 || t == SR_U8 || t >= SR_S4;
}

MXP_INLINE int mxp_sr_signed(mxp_sr_target t)
{
    return t == SR_S8 || t == SR_S4 || t == SR_S2 || t == SR_S1;
}

MXP_INLINE int mxp_sr_hi(mxp_sr_target t)
{
    switch (t) {
    case SR_S8: return 127;
    case SR_S4: return 7;
    case SR_U4: return 15;
    case SR_S2: return 1;
    case SR_U2: return 3;
    case SR_S1: return 0;
    case SR_U1: return 1;
    default: return 255;
    }
}

MXP_INLINE int mxp_sr_lo(mxp_sr_target t)
{
    return mxp_sr_signed(t) ? -mxp_sr_hi(t) - 1 : 0;
}

#endif
