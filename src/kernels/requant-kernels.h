/* Turning int32 GEMM sums into C: the kernels' contracts and prototypes,
 * expanded from src/kernels/requant-list.inc.
 *
 * Requantization into int8/uint8 C with integer arithmetic only
 * (src/kernels/s32-requant/): a scale m * 2^-shift (m an integer with
 * |m| < 2^24, 1 <= shift <= 62) per tensor or per column,
 *   dst[q] = clamp(round(acc[q] * m / 2^shift) + zp, lo, hi)
 * rounded exactly with a deterministic mode (mxp_rounding: nearest even,
 * nearest away, toward zero, up, down), the bytes of int8 or uint8 codes.
 * m and shift: len entries (per_col) or one. */
#ifndef MXP_KERNELS_REQUANT_KERNELS_H
#define MXP_KERNELS_REQUANT_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxp/convert.h"

typedef void (*mxp_s32_requant_fn)(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m,
                                   const int32_t *shift, int per_col, int32_t zp, int32_t lo, int32_t hi, int mode);

/* A's row of a GEMM whose A is quantized per row (mxp_gemm_opts'
 * a_scales / a_zero_points: activations per token), for the
 * dequantization kernels below; NULL there: none.  The sums become
 * acc[q] - a_zero_point * b_sums[q] (int32, wrapping: the exact sums
 * sum_k (a_k - z) b_kq fit) when b_sums is not NULL, and the scale of
 * column q float32(a_scale * scale[q]) (one rounding of the exact
 * product). */
typedef struct mxp_s32_dequant_row {
    float a_scale;
    int32_t a_zero_point;
    const int32_t *b_sums; /* len values (B's column sums), or NULL */
} mxp_s32_dequant_row;

/* Dequantization into float32 C (src/kernels/s32-dequant/): dst[q] =
 * acc[q] * scale rounded once to float32 with mode, exactly; a zero
 * product has IEEE's sign.  scale: finite, len entries (per_col) or one;
 * row: NULL, or A's row as above.
 * Returns false (nothing written) when the MXCSR flushes subnormals
 * (FTZ/DAZ) or for a mode outside its list line's; overflow gives IEEE's
 * infinity or largest finite by the mode.  The reference is mxp_convert of
 * the float64 product rounded to odd (src/gemm/int8-finish.c). */
typedef bool (*mxp_s32_dequant_f32_fn)(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,
                                       const mxp_s32_dequant_row *row, int mode);
/* The same plus beta times C's value and a float32 bias per column:
 * dst[q] = round(acc[q] * scale + beta * dst[q] + bias[q]), the product
 * exact (or rounded to odd) in float64, then beta * dst[q] (a float64
 * product) and bias[q] added in that order in float64 (each nearest even),
 * one rounding with mode: the bits of the general path (scale * acc, beta
 * C, the epilogue's bias, mxp_convert).  beta 0: dst is only written (its
 * NaN ignored); bias: NULL (none) or len finite values. */
typedef bool (*mxp_s32_dequant_bias_f32_fn)(float *dst, const int32_t *acc, size_t len, const float *scale,
                                            int per_col, const mxp_s32_dequant_row *row, const float *bias,
                                            double beta, int mode);

/* Requantization into int8/uint8 C through float64, the general finish's
 * arithmetic (src/gemm/int8-finish.c) for nearest even with alpha, an
 * epilogue of bias, relu and clamp (a quantized convolution's: alpha =
 * x_scale / y_scale), no beta:
 *   t = (acc m) p        exact: the kernel stops before a lane with |acc m| >= 2^53
 *   t = t alpha (+ bias) (relu: t > 0 ? t : 0) (clamp: into [clamp_lo, clamp_hi])
 *   dst = clamp(round_even(t) + zp, lo, hi)   (|t| beyond 2^40 as +-2^40)
 *   or, f32: dst = t rounded to float32, nearest even (a float32 C; dst then
 *   holds floats)
 * m, p: a scale as m * p (m an odd integer or 0, p a power of two), len
 * entries (per_col) or one; bias: NULL, len entries (bias_per_col) or one,
 * finite.  rows rows of len (0: one), row r at dst + r ld_dst outputs and
 * acc + r ld_acc (the small-N GEMMs' rows in one call).  Returns the index
 * r len + q of the first element not done (rows len when all are; a row
 * stops up to a block before the first lane that needs the rounding to
 * odd: the caller's general path finishes that row from there).  exact:
 * the caller knows every |acc m| < 2^53 (its sums' bound), so a kernel
 * may leave out that test (the twin makes it: it never stops then). */
typedef struct mxp_s32_requant_f64_params {
    const double *m, *p;
    int per_col;
    double alpha;
    const double *bias;
    int bias_per_col, relu, clamp;
    double clamp_lo, clamp_hi;
    int32_t zp, lo, hi;
    int f32;
    size_t rows, ld_dst, ld_acc;
    int exact;
} mxp_s32_requant_f64_params;
typedef size_t (*mxp_s32_requant_f64_fn)(uint8_t *dst, const int32_t *acc, size_t len,
                                         const mxp_s32_requant_f64_params *p);

/* The rows of a call through row (a kernel's one-row body, how many it
 * did), the parameters copied into a local that the stores to dst cannot
 * change: every kernel's entry. */
static inline __attribute__((always_inline)) size_t
mxp_s32_requant_f64_rows(size_t (*row)(uint8_t *, const int32_t *, size_t, const mxp_s32_requant_f64_params *),
                         uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    const mxp_s32_requant_f64_params prm = *p;
    const size_t rows = prm.rows ? prm.rows : 1;
    for (size_t r = 0; r < rows; r++) {
        const size_t q = row(dst + r * prm.ld_dst * (prm.f32 ? 4 : 1), acc + r * prm.ld_acc, len, &prm);
        if (q < len)
            return r * len + q;
    }
    return rows * len;
}

/* The modes the AVX-512 dequantization kernels round in (embedded rounding). */
#define MXP_S32_DEQUANT_IEEE_MODES                                                                                 \
    ((1u << MXP_ROUND_NEAREST_EVEN) | (1u << MXP_ROUND_UP) | (1u << MXP_ROUND_DOWN) | (1u << MXP_ROUND_TOWARD_ZERO))

#define MXP_S32_REQUANT(FN, ISA, TWIN)                                                                             \
    void FN(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m, const int32_t *shift, int per_col,       \
            int32_t zp, int32_t lo, int32_t hi, int mode);
#define MXP_S32_DEQUANT_F32(FN, ISA, MODES, TWIN)                                                                  \
    bool FN(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,                           \
            const mxp_s32_dequant_row *row, int mode);                                                             \
    bool TWIN(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,                         \
              const mxp_s32_dequant_row *row, int mode);
#define MXP_S32_DEQUANT_BIAS_F32(FN, ISA, MODES, TWIN)                                                             \
    bool FN(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,                           \
            const mxp_s32_dequant_row *row, const float *bias, double beta, int mode);                             \
    bool TWIN(float *dst, const int32_t *acc, size_t len, const float *scale, int per_col,                         \
              const mxp_s32_dequant_row *row, const float *bias, double beta, int mode);
#define MXP_S32_REQUANT_F64(FN, ISA, TWIN)                                                                         \
    size_t FN(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p);
#include "kernels/requant-list.inc"
#undef MXP_S32_REQUANT
#undef MXP_S32_DEQUANT_F32
#undef MXP_S32_DEQUANT_BIAS_F32
#undef MXP_S32_REQUANT_F64

#endif
