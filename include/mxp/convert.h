/* mxp — conversions between every pair of dtypes, correctly rounded.
 * Semantics (rounding, overflow, NaN, subnormals, integers, overlap) are in
 * docs/conversions.md. */
#ifndef MXP_CONVERT_H
#define MXP_CONVERT_H

#include "dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mxp_rounding {
    MXP_ROUND_NEAREST_EVEN = 0, /* default; IEEE roundTiesToEven */
    MXP_ROUND_NEAREST_AWAY,     /* ties away from zero */
    MXP_ROUND_TOWARD_ZERO,
    MXP_ROUND_UP,               /* toward +infinity */
    MXP_ROUND_DOWN,             /* toward -infinity */
    MXP_ROUND_STOCHASTIC,       /* up with probability = discarded fraction */
    MXP_ROUNDING_COUNT
} mxp_rounding;

typedef enum mxp_overflow {
    MXP_OVERFLOW_INF = 0,  /* default: IEEE result for the rounding mode;
                              float8_e4m3fn (no infinity) gives NaN */
    MXP_OVERFLOW_SATURATE, /* clamp to +-max finite, infinities too */
    MXP_OVERFLOW_COUNT
} mxp_overflow;

/* Counts of what happened, like IEEE exception flags but per element.
 * Counters are added to, never reset, by mxp_convert. */
typedef struct mxp_convert_flags {
    uint64_t inexact;   /* result differs from the input value */
    uint64_t overflow;  /* finite input beyond the target's finite range */
    uint64_t underflow; /* inexact result from a nonzero input below the
                           target's smallest normal (tininess before rounding) */
    uint64_t invalid;   /* NaN or out-of-range value to an integer type */
} mxp_convert_flags;

/* Zero-initialized (or NULL) means: round to nearest even, IEEE overflow,
 * seed 0, no counters.  Embedded in mxp_gemm_opts, mxp_ops_opts and
 * mxp_reduce_opts it follows their layout: its struct_size is 0 (or its
 * sizeof) there. */
typedef struct mxp_convert_opts {
    size_t struct_size;        /* 0: this release's layout, or sizeof(mxp_convert_opts);
                                  docs/abi.md */
    mxp_rounding rounding;
    mxp_overflow overflow;
    uint64_t seed;             /* stochastic rounding: same seed, same result */
    mxp_convert_flags *flags;  /* optional: counters to add to (slower path) */
    uint64_t index_offset;     /* stochastic rounding: element 0 of this call is
                                  element index_offset of the random stream, so
                                  an array split across calls or threads gets
                                  the bits of one whole call */
} mxp_convert_opts;

/* Converts n contiguous elements.  src and dst must not overlap, except
 * dst == src with itemsize(dst) <= itemsize(src) (in place, narrowing or
 * same size).  n == 0 is a no-op and allows NULL pointers.  On error nothing
 * is written. */
MXP_API mxp_status mxp_convert(void *dst, mxp_dtype dst_type,
                               const void *src, mxp_dtype src_type,
                               size_t n, const mxp_convert_opts *opts);

/* As mxp_convert with byte strides (may be negative or zero for src; dst
 * stride must not be 0 when n > 1).  Element i is read at src + i*src_stride
 * and written at dst + i*dst_stride.  Stochastic rounding uses i as the
 * element index, so results equal the contiguous call's. */
MXP_API mxp_status mxp_convert_strided(void *dst, mxp_dtype dst_type, ptrdiff_t dst_stride,
                                       const void *src, mxp_dtype src_type, ptrdiff_t src_stride,
                                       size_t n, const mxp_convert_opts *opts);

MXP_API const char *mxp_rounding_name(mxp_rounding r);   /* "nearest_even", ... */
MXP_API mxp_rounding mxp_rounding_from_name(const char *name); /* MXP_ROUNDING_COUNT if unknown */
MXP_API const char *mxp_overflow_name(mxp_overflow o);   /* "inf", "saturate" */
MXP_API mxp_overflow mxp_overflow_from_name(const char *name); /* MXP_OVERFLOW_COUNT if unknown */

/* Packed forms of the sub-byte types (float6, float4, int4/2/1 and
 * uint4/2/1), which arrays hold one element a byte.  Packed, n elements
 * take mxp_packed_bytes(t, n) = ceil(n * bits / 8) bytes, element i at bits
 * [i * bits, (i + 1) * bits) of the little-endian bit string: 4-bit types
 * element 2i in the low nibble of byte i (MXFP4, torch's float4_e2m1fn_x2,
 * safetensors' F4), 6-bit types four elements in three bytes (MXFP6,
 * safetensors' F6); the unused bits of the last byte are zero.
 * mxp_packed_bytes: 0 for a type that is not sub-byte or a size that does
 * not fit size_t.  mxp_pack reads the low bits of each source byte (the
 * bits above are ignored, as by every conversion); mxp_unpack writes them
 * with the bits above zero.  dst and src must not overlap.  n == 0 is a
 * no-op and allows NULL pointers. */
MXP_API size_t mxp_packed_bytes(mxp_dtype t, size_t n);
MXP_API mxp_status mxp_pack(void *dst, const void *src, mxp_dtype t, size_t n);
MXP_API mxp_status mxp_unpack(void *dst, const void *src, mxp_dtype t, size_t n);

/* Convenience scalar conversions (round to nearest even, IEEE overflow). */
MXP_API uint16_t mxp_f32_to_bf16(float x);
MXP_API float mxp_bf16_to_f32(uint16_t x);
MXP_API uint16_t mxp_f32_to_f16(float x);
MXP_API float mxp_f16_to_f32(uint16_t x);
MXP_API uint8_t mxp_f32_to_e4m3(float x);
MXP_API float mxp_e4m3_to_f32(uint8_t x);
MXP_API uint8_t mxp_f32_to_e5m2(float x);
MXP_API float mxp_e5m2_to_f32(uint8_t x);

/* Name of the kernel mxp_convert would use now for this pair and mode
 * ("f32_bf16_cvt__avx512bf16", or "reference"). */
MXP_API const char *mxp_convert_kernel_name(mxp_dtype dst_type, mxp_dtype src_type,
                                            const mxp_convert_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
