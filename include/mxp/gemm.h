/* mxp — general matrix multiply in mixed precision, BLAS-like, row-major:
 *     C = alpha * op(A) * op(B) + beta * C
 * with op(A) M x K, op(B) K x N, C M x N.  See docs/gemm.md. */
#ifndef MXP_GEMM_H
#define MXP_GEMM_H

#include "convert.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mxp_trans {
    MXP_NO_TRANS = 0,
    MXP_TRANS = 1
} mxp_trans;

typedef enum mxp_activation {
    MXP_ACT_NONE = 0,
    MXP_ACT_RELU,
    MXP_ACT_GELU,      /* erf form */
    MXP_ACT_GELU_TANH,
    MXP_ACT_SILU
} mxp_activation;

typedef enum mxp_bias_kind {
    MXP_BIAS_NONE = 0,
    MXP_BIAS_PER_ROW,  /* bias[i] added to row i (m values) */
    MXP_BIAS_PER_COL   /* bias[j] added to column j (n values) */
} mxp_bias_kind;

/* Zero-initialized (or NULL) means: the default accumulator for the input
 * types (float64 for float64, float32 for float32/f16/bf16/fp8, int32 for
 * int8), no epilogue, the result rounded to C's dtype to nearest even.
 *
 * The epilogue runs on each tile in the accumulator's precision, in this
 * order:  t = alpha * A B (+ beta * C)  [integer: t = alpha * scale_j * acc
 *         (+ beta * C for a float C), in float64]
 *         t += bias;  t = activation(t);  t = clamp(t, lo, hi);
 *         C = round(t) into C's dtype with `convert` (int8 C: + c_zero_point,
 *         saturated). */
typedef struct mxp_gemm_opts {
    size_t struct_size;       /* 0: this release's layout, or sizeof(mxp_gemm_opts);
                                 docs/abi.md */
    mxp_dtype acc_dtype;      /* 0: default; MXP_F32 or MXP_F64 (MXP_S32 for int8);
                                 MXP_F16 / MXP_BF16: an emulation of a unit that
                                 accumulates in them — float32 products, the
                                 running sum rounded after every addition, K in
                                 order; a slow reference path (docs/gemm.md) */
    mxp_convert_opts convert; /* how the result is rounded into C */
    /* epilogue */
    const void *bias;         /* NULL: none */
    mxp_dtype bias_dtype;     /* any float dtype */
    mxp_bias_kind bias_kind;
    mxp_activation activation;
    bool clamp;
    double clamp_lo, clamp_hi;
    /* int8 x int8 (A uint8 or int8, B int8): zero points subtracted from
     * the inputs (each within its type's range), giving exact int32 sums
     * acc[i][j] = sum_k (A[i][k] - a_zero_point) (B[k][j] - b_zero_point);
     * for int8/uint8 C (requantize) or float C (dequantize) the sums are
     * multiplied by scales (1 per tensor, or n per output column) and, for
     * int8/uint8 C, C's zero point added after the rounding, saturated.
     * NULL scales mean 1.0 (n_scales 0).  int32 C takes no scales, zero
     * point or epilogue.  With floating A and B, scales or a nonzero zero
     * point are MXP_ERR_INVALID_ARGUMENT (they would be ignored).  See
     * docs/gemm.md, "Integer GEMM". */
    int32_t a_zero_point, b_zero_point, c_zero_point;
    const float *scales;
    size_t n_scales;          /* 1 or n (0 with NULL scales) */
    /* The number of values at bias.  0: not given, and mxp_gemm reads the
     * m (MXP_BIAS_PER_ROW) or n (PER_COL) values it needs there, as it reads
     * A and B; otherwise fewer than it needs is MXP_ERR_INVALID_ARGUMENT.
     * mxp_matmul and mxp_matmul_into require it with a bias. */
    size_t bias_len;
    /* Integer GEMM with A quantized per row (per token, as dynamic
     * quantization of activations gives): NULL, or m values each.
     * a_zero_points[i] is row i's zero point (within A's type's range;
     * a_zero_point must then be 0): acc[i][j] = sum_k (A[i][k] -
     * a_zero_points[i]) (B[k][j] - b_zero_point), exact.  a_scales[i]
     * (finite) multiplies row i's sums: the scale of C[i][j] is
     * float32(a_scales[i] * s_j) (the product in float64, one rounding; s_j
     * the scales above, 1 without), as mxp_qmatmul_scales combines a
     * per-tensor one, then the epilogue and C's rounding as above.
     * a_scales needs an int8/uint8 or floating C.  mxp_gemm only
     * (mxp_matmul and the batched GEMM refuse them).  See docs/gemm.md,
     * "Integer GEMM". */
    const int32_t *a_zero_points;
    const float *a_scales;
    size_t a_rows_len;        /* the values at each: 0 not given (m read), else at least m */
} mxp_gemm_opts;

/* Row-major GEMM.  lda/ldb/ldc are in elements and at least the row length
 * of the matrix as stored (A: K if NO_TRANS else M; B: N if NO_TRANS else
 * K; C: N).  Supported today: A, B and C of any floating dtype (float64,
 * float32, float16, bfloat16, every float8/float6/float4), converted
 * exactly to the accumulator while packing (bfloat16/float8 stay bfloat16
 * for the AVX512_BF16 dot-product kernel; see docs/gemm.md for its float32
 * subnormal flushing).  Or integers: uint8 or int8 A by int8 B into
 * int32 C (alpha 1, beta 0 or 1: C + acc saturated), int8/uint8 C
 * (requantized, beta 0) or a float C (dequantized); K is limited so that
 * no int32 sum can overflow (MXP_ERR_SIZE_OVERFLOW beyond: 65793 for
 * uint8 x int8 with zero points 0, at least 33025 for any zero points).
 * A or B may be a sub-byte integer (int4, uint4, int2, uint2, int1, uint1):
 * widened exactly to int8 (uint8 for an unsigned A) beside an integer
 * operand, to float32 beside a float one (docs/gemm.md).
 * beta == 0 ignores what C holds
 * (NaN included); alpha == 0 leaves beta*C.  C must not share memory with
 * A, B, the bias or the scales (MXP_ERR_OVERLAP; matrices side by side in
 * one buffer, rows interleaved but no byte shared, are fine).  On error C
 * is untouched. */
MXP_API mxp_status mxp_gemm(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                            double alpha, const void *a, mxp_dtype a_type, size_t lda,
                            const void *b, mxp_dtype b_type, size_t ldb,
                            double beta, void *c, mxp_dtype c_type, size_t ldc,
                            const mxp_gemm_opts *opts);

/* "none", "relu", "gelu", "gelu_tanh", "silu"; "invalid" for another value. */
MXP_API const char *mxp_activation_name(mxp_activation a);

/* The micro-kernel mxp_gemm would use for these types now ("f32_gemm_8x48__avx512f"). */
MXP_API const char *mxp_gemm_kernel_name(mxp_dtype a_type, mxp_dtype b_type, const mxp_gemm_opts *opts);

/* ---- Overflow handling for a low-precision C (docs/gemm.md, "Overflow
 * handling (mxp_gemm_safe)") ---- */

/* What mxp_gemm_safe does when the result may overflow C's dtype.  As a
 * request, NONE (the zero value) computes as mxp_gemm would and only
 * reports; as `applied` in the report, NONE means nothing was changed. */
typedef enum mxp_overflow_strategy {
    MXP_OVERFLOW_STRATEGY_NONE = 0, /* compute as mxp_gemm (IEEE overflow), report */
    MXP_OVERFLOW_STRATEGY_REFUSE,   /* MXP_ERR_SIZE_OVERFLOW, C untouched */
    MXP_OVERFLOW_STRATEGY_CLIP,     /* round saturating: |C| <= C's max, never inf */
    MXP_OVERFLOW_STRATEGY_SCALE,    /* C = result * 2^-scale_exponent */
    MXP_OVERFLOW_STRATEGY_PROMOTE   /* the result goes to promote_to; C untouched */
} mxp_overflow_strategy;

/* "none", "refuse", "clip", "scale", "promote"; "invalid" for another value. */
MXP_API const char *mxp_overflow_strategy_name(mxp_overflow_strategy s);

/* Zero-initialized (or NULL) means NONE. */
typedef struct mxp_gemm_safe_opts {
    size_t struct_size; /* 0: this release's layout, or sizeof(mxp_gemm_safe_opts); docs/abi.md */
    mxp_overflow_strategy strategy;
    /* PROMOTE only: an m x n float32 or float64 matrix (leading dimension
     * ldp >= n) that receives alpha op(A) op(B) + beta C when C is at risk. */
    void *promote_to;
    mxp_dtype promote_dtype;
    size_t ldp;
} mxp_gemm_safe_opts;

/* Set struct_size (0: this release's layout) before the call: the library
 * fills only the fields within it (docs/abi.md). */
typedef struct mxp_gemm_safe_report {
    size_t struct_size;              /* 0 or sizeof(mxp_gemm_safe_report) */
    double max_abs_a, max_abs_b;     /* over op(A), op(B) as stored (NaN ignored) */
    double max_abs_c;                /* over C when beta != 0, else 0 */
    double bound;                    /* K max|A| max|B| |alpha| + |beta| max|C|,
                                        + max|bias|, capped by a clamp */
    double c_max;                    /* largest finite value of C's dtype */
    bool at_risk;                    /* bound > c_max */
    mxp_overflow_strategy applied;   /* what was done (NONE: nothing needed or asked) */
    int scale_exponent;              /* SCALE: C holds the result times 2^-scale_exponent */
    char what[200];                  /* a sentence */
} mxp_gemm_safe_report;

/* mxp_gemm with an overflow check: the arguments of mxp_gemm, then safe
 * (NULL: NONE) and report (NULL allowed).  The bound is computed in
 * float64 from one pass over A, B (and C when beta != 0).  When
 * bound <= c_max, or the strategy is NONE, C is what mxp_gemm writes, bit
 * for bit.  Otherwise REFUSE returns MXP_ERR_SIZE_OVERFLOW (C untouched),
 * CLIP/SCALE/PROMOTE compute in a float64 workspace (a float64
 * accumulator when float32 could overflow) and round once into C (or
 * promote_to).  Integer GEMM is MXP_ERR_UNSUPPORTED (it saturates by
 * itself).  promote_to must not share memory with A, B, C or the bias
 * (MXP_ERR_OVERLAP).  On error C and promote_to are untouched. */
MXP_API mxp_status mxp_gemm_safe(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k,
                                 double alpha, const void *a, mxp_dtype a_type, size_t lda,
                                 const void *b, mxp_dtype b_type, size_t ldb,
                                 double beta, void *c, mxp_dtype c_type, size_t ldc,
                                 const mxp_gemm_opts *opts, const mxp_gemm_safe_opts *safe,
                                 mxp_gemm_safe_report *report);

#ifdef __cplusplus
}
#endif
#endif
