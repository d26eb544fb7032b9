/* mxp — affine (scale, zero point) quantization of arrays to int8, uint8,
 * int4, uint4, int2, uint2 and scaled float8/float6/float4: quantization parameters, calibration and
 * observers, quantize, dequantize, fake-quantize, int4 packing.  Formulas
 * and policies are in docs/quant.md. */
#ifndef MXP_QUANT_H
#define MXP_QUANT_H

#include "array.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Quantization-only code types: not array dtypes (mxp_dtype_is_valid() is
 * false for them), only values of mxp_qparams.qtype and of the qtype
 * arguments below.  Their codes live unpacked in int8 (int4, [-8, 7]) or
 * uint8 (uint4, [0, 15]) arrays; mxp_pack_int4 stores two per byte. */
#define MXP_QINT4 ((mxp_dtype)64)
#define MXP_QUINT4 ((mxp_dtype)65)

/* "int4", "uint4", else mxp_dtype_name(qtype). */
MXP_API const char *mxp_qtype_name(mxp_dtype qtype);
/* The quantized types, i = 0, 1, ...: MXP_S8, MXP_U8, MXP_QINT4, MXP_QUINT4,
 * MXP_E4M3, MXP_E5M2, MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ,
 * MXP_E5M2FNUZ, MXP_E2M3, MXP_E3M2, MXP_E2M1 (every float8/float6/float4
 * with a scale but e8m0), then MXP_DTYPE_INVALID.  The sub-byte integer
 * dtypes MXP_S4, MXP_U4, MXP_S2, MXP_U2 are quantized types too, with codes
 * in arrays of their own dtype (not enumerated: "int4"/"uint4" name the
 * quantization-only types).  mxp_qtype_code_dtype: the dtype of a type's
 * codes (what mxp_quantize returns: int8 for MXP_QINT4, uint8 for
 * MXP_QUINT4, else the type itself), MXP_DTYPE_INVALID for another value. */
MXP_API mxp_dtype mxp_qtype_at(int i);
MXP_API mxp_dtype mxp_qtype_code_dtype(mxp_dtype qtype);
/* The integer codes' range, [qmin, qmax] ([-128, 127], [0, 255], [-8, 7],
 * [0, 15]; [0, 0] for float8, whose codes are floats).  Another value:
 * MXP_ERR_INVALID_DTYPE or MXP_ERR_UNSUPPORTED. */
MXP_API mxp_status mxp_qtype_limits(mxp_dtype qtype, int32_t *qmin, int32_t *qmax);

/* q = clamp(round(x / scale) + zero_point, qmin, qmax);  x' = (q - zp) * scale.
 * axis -1: one pair for the whole tensor.  axis k >= 0: one pair per index
 * along axis k (count = shape[k]), or with group_size g > 0 one pair per g
 * consecutive indices along axis k for every position of the other axes
 * (count = size / g, indexed in C order of the array with axis k of length
 * shape[k] / g).  The struct owns scales and zero_points. */
typedef struct mxp_qparams {
    mxp_dtype qtype;      /* a type of mxp_qtype_at, or MXP_S4/U4/S2/U2 */
    bool symmetric;       /* zero point 0 (signed, float) or 128 / 8 / 2 (uint8 /
                             uint4 / uint2), scale = amax / 127, 7, 1, or the
                             float type's largest finite (448, 57344, ...) */
    int axis;             /* -1 per tensor, else per channel along axis */
    int64_t group_size;   /* 0: none; else per group of this many along axis */
    int64_t count;        /* number of (scale, zero point) pairs */
    float *scales;        /* count entries, finite and > 0 */
    int32_t *zero_points; /* count entries, within the qtype's range (0 for float8) */
} mxp_qparams;

/* Frees scales and zero_points and zeroes the struct (NULL is fine). */
MXP_API void mxp_qparams_free(mxp_qparams *qp);

/* Min/max calibration over x (NaN and infinities are ignored).  *out is
 * overwritten (not freed first).  float8 is symmetric only (asymmetric:
 * MXP_ERR_UNSUPPORTED). */
MXP_API mxp_status mxp_calibrate_minmax(const mxp_array *x, mxp_dtype qtype, bool symmetric, int axis,
                                        int64_t group_size, mxp_qparams *out);

/* Quantizes x (any real dtype) into a new array of x's shape: dtype
 * qp->qtype, or int8 / uint8 holding unpacked codes for int4 / uint4.
 * opts: rounding (stochastic: seed, index_offset, element index in C order),
 * flags; NULL is nearest even.  Integers: NaN gives the zero point, +-inf
 * saturate.  float8: x / scale rounded once, saturating (opts->overflow is
 * ignored), +-inf to +-max, NaN stays NaN. */
MXP_API mxp_status mxp_quantize(mxp_array **out, const mxp_array *x, const mxp_qparams *qp,
                                const mxp_convert_opts *opts);
/* mxp_quantize into an existing array: out must have x's shape, the code
 * dtype mxp_quantize would give (else MXP_ERR_SHAPE / MXP_ERR_INVALID_DTYPE)
 * and be writeable (MXP_ERR_READONLY); any layout; memory shared with x is
 * handled (through a temporary).  The same codes as mxp_quantize, without
 * allocating the output each call (fresh pages cost more than the
 * quantization itself on large tensors). */
MXP_API mxp_status mxp_quantize_into(mxp_array *out, const mxp_array *x, const mxp_qparams *qp,
                                     const mxp_convert_opts *opts);
/* Dynamic quantization per row (per token, as W8A8 inference quantizes
 * activations before each integer GEMM), in one pass over x: x [rows, cols]
 * (float32, bfloat16 or float16, C-contiguous), each row first multiplied
 * by col_scale (NULL: none; else cols float32 values, the product rounded
 * to float32 as NumPy's x * col_scale: SmoothQuant's 1/s), quantized with
 * its own min/max into codes (an existing [rows, cols] array of qtype's
 * code dtype), scales[r] and zero_points[r] (rows values each).  The bytes
 * of mxp_calibrate_minmax(y, qtype, symmetric, axis 0) then mxp_quantize
 * (nearest even) of y = x * col_scale, for any thread count; rows are
 * split over mxp's threads; a row with no finite value (or no columns)
 * takes calibration's pair for [0, 0] (scale 1).  qtype int8 or uint8
 * (others: MXP_ERR_UNSUPPORTED).  rows == 0 allows NULL scales and
 * zero_points. */
MXP_API mxp_status mxp_quantize_rows(mxp_array *codes, float *scales, int32_t *zero_points, const mxp_array *x,
                                     const float *col_scale, mxp_dtype qtype, bool symmetric);
/* (q - zp) * scale computed exactly in float64, rounded once (nearest even)
 * to out_dtype.  q must have a shape matching qp and the dtype that
 * mxp_quantize gives (else MXP_ERR_INVALID_DTYPE); int4 / uint4 codes
 * outside [-8, 7] / [0, 15]: MXP_ERR_INVALID_ARGUMENT. */
MXP_API mxp_status mxp_dequantize(mxp_array **out, const mxp_array *q, const mxp_qparams *qp, mxp_dtype out_dtype);
/* dequantize(quantize(x)) in x's dtype. */
MXP_API mxp_status mxp_fake_quantize(mxp_array **out, const mxp_array *x, const mxp_qparams *qp,
                                     const mxp_convert_opts *opts);

/* ---- int4 packing: two codes per byte ------------------------------------
 * Each row (the last dimension, n elements) is packed on its own into
 * ceil(n / 2) bytes: element 2j in the LOW nibble of byte j, element 2j+1 in
 * the HIGH nibble (int4 as a two's complement nibble); an odd row's last
 * byte has high nibble 0.  int4 codes [1, -1, 7] -> bytes [0xF1, 0x07]. */

/* codes: int8 in [-8, 7] or uint8 in [0, 15], any layout (else
 * MXP_ERR_INVALID_DTYPE / MXP_ERR_INVALID_ARGUMENT, and *out is NULL).
 * *out: a new C-contiguous uint8 array of shape [..., ceil(n / 2)]; a 0-d
 * input counts as shape [1]. */
MXP_API mxp_status mxp_pack_int4(mxp_array **out, const mxp_array *codes);
/* The inverse: packed is uint8 (else MXP_ERR_INVALID_DTYPE) with ndim >= 1
 * and last dimension ceil(last_dim / 2) (else MXP_ERR_SHAPE); *out is a new
 * C-contiguous array of code_dtype (MXP_S8: nibbles sign-extended, MXP_U8)
 * and shape [..., last_dim].  The unused high nibble of an odd row's last
 * byte is ignored. */
MXP_API mxp_status mxp_unpack_int4(mxp_array **out, const mxp_array *packed, int64_t last_dim,
                                   mxp_dtype code_dtype);

/* ---- observers: statistics fed batch by batch ----------------------------- */
typedef enum mxp_calib_kind {
    MXP_CALIB_MINMAX = 1,     /* running min and max */
    MXP_CALIB_MOVING_AVERAGE, /* min, max = m * old + (1 - m) * batch's */
    MXP_CALIB_PERCENTILE,     /* threshold: percentile of |x| (histogram) */
    MXP_CALIB_MSE,            /* threshold minimizing the quantization MSE */
    MXP_CALIB_KL              /* TensorRT entropy: threshold minimizing KL(P || Q) */
} mxp_calib_kind;

/* Zero-initialized (or NULL) means the defaults. */
/* The most histogram bins an observer takes (8 MiB of counts). */
#define MXP_OBSERVER_MAX_BINS (1 << 20)

typedef struct mxp_observer_opts {
    size_t struct_size; /* 0: this release's layout, or sizeof(mxp_observer_opts); docs/abi.md */
    double momentum;    /* MOVING_AVERAGE: weight of the old value, [0, 1); 0: 0.9 */
    double percentile;  /* PERCENTILE: (0, 100]; 0: 99.99 */
    int64_t group_size; /* MINMAX, MOVING_AVERAGE with axis >= 0: 0 none */
    int bins;           /* histogram kinds: 0: 2048 (KL needs >= 256; 16 for 4-bit);
                           at most MXP_OBSERVER_MAX_BINS */
} mxp_observer_opts;

typedef struct mxp_observer mxp_observer; /* opaque */

/* Histogram kinds (PERCENTILE, MSE, KL) are per tensor only: axis must be -1
 * (else MXP_ERR_UNSUPPORTED).  float8 qtypes: symmetric only. */
MXP_API mxp_status mxp_observer_create(mxp_observer **out, mxp_calib_kind kind, mxp_dtype qtype, bool symmetric,
                                       int axis, const mxp_observer_opts *opts);
/* Per channel, every batch must have the same ndim and length along axis
 * (else MXP_ERR_SHAPE); per tensor, any shape. */
MXP_API mxp_status mxp_observer_update(mxp_observer *obs, const mxp_array *batch);
/* MXP_ERR_INVALID_ARGUMENT if no batch was seen. */
MXP_API mxp_status mxp_observer_compute(const mxp_observer *obs, mxp_qparams *out);
MXP_API void mxp_observer_free(mxp_observer *obs);

/* ---- histogram observers in pieces -----------------------------------------
 * A histogram observer counts |x| in opts.bins equal bins over [0, hmax]:
 * bin floor(|x| / hmax * bins), NaN and infinities left out.  Counted piece
 * by piece with one hmax (the largest finite |x| of all the data), the
 * counts add up, and the threshold follows from their sum: a calibration
 * spread over machines (mxp.dask) gets the qparams of one observer fed all
 * the data in one batch. */

/* Adds the counts of x's finite |values| to counts[0..bins); values above
 * hmax count in the last bin, and hmax 0 puts everything in bin 0. */
MXP_API mxp_status mxp_histogram_abs(const mxp_array *x, double hmax, int bins, double *counts);
/* The qparams mxp_observer_compute gives for an observer of kind
 * PERCENTILE, MSE or KL (opts as for mxp_observer_create; counts has
 * opts->bins entries, or 2048 when 0) whose histogram is `counts` over
 * [0, hmax] and whose data's finite range is [lo, hi] (lo > hi: no finite
 * value).  *out is overwritten (not freed first). */
MXP_API mxp_status mxp_observer_qparams_from_histogram(mxp_qparams *out, mxp_calib_kind kind, mxp_dtype qtype,
                                                       bool symmetric, const mxp_observer_opts *opts,
                                                       const double *counts, double hmax, double lo, double hi);

/* ---- quantized tensors: codes with their parameters ------------------------
 * An mxp_qtensor is the codes array plus the mxp_qparams that made them;
 * mxp_qmatmul and mxp_qlinear take them and combine the scales and zero
 * points themselves.  See docs/quant.md, "Quantized tensors and layers". */
typedef struct mxp_qtensor mxp_qtensor; /* opaque */

/* x quantized (nearest even) into a new *out.  qp non-NULL: those
 * parameters (copied; checked as mxp_quantize checks them), and qtype /
 * axis must be 0 / -1 or equal qp's.  qp NULL: min/max calibration of x
 * (mxp_calibrate_minmax) for qtype: symmetric for MXP_S8, MXP_QINT4 and
 * float8, asymmetric for MXP_U8 and MXP_QUINT4; axis -1 per tensor, k >= 0
 * one pair per index along axis k (axis 0 of an [out, in] weight: per
 * output channel). */
MXP_API mxp_status mxp_quantize_tensor(mxp_qtensor **out, const mxp_array *x, const mxp_qparams *qp, mxp_dtype qtype,
                                       int axis);
/* A quantized tensor from existing codes: codes must have the dtype
 * mxp_quantize gives for qp->qtype and a shape qp fits (else
 * MXP_ERR_INVALID_DTYPE / MXP_ERR_INVALID_ARGUMENT / MXP_ERR_INDEX); int4 /
 * uint4 codes outside [-8, 7] / [0, 15]: MXP_ERR_INVALID_ARGUMENT.  The
 * qtensor keeps a view of the codes (no copy: their memory lives as long as
 * either does) and a copy of qp. */
MXP_API mxp_status mxp_qtensor_create(mxp_qtensor **out, const mxp_array *codes, const mxp_qparams *qp);
MXP_API void mxp_qtensor_free(mxp_qtensor *qt); /* NULL is fine */
/* The codes and the parameters, owned by qt (valid until mxp_qtensor_free). */
MXP_API const mxp_array *mxp_qtensor_codes(const mxp_qtensor *qt);
MXP_API const mxp_qparams *mxp_qtensor_qparams(const mxp_qtensor *qt);
/* mxp_dequantize(codes, qparams, out_dtype). */
MXP_API mxp_status mxp_qtensor_dequantize(mxp_array **out, const mxp_qtensor *qt, mxp_dtype out_dtype);

/* C = A B of quantized matrices through the int8 GEMM: a [M, K] uint8 or
 * int8 per tensor, b [K, N] int8 per tensor or per column (axis 1; every
 * zero point equal, as symmetric quantization gives).  The exact int32 sums
 * acc = sum_k (a - za)(b - zb) become, by out_dtype:
 *   MXP_S32:        acc (out_params NULL);
 *   a float dtype:  round(scale_j * acc), scale_j = float32(sa * sb_j)
 *                   (out_params NULL): the correctly rounded product;
 *   MXP_S8, MXP_U8: saturate(round(scale_j * acc) + zo), scale_j =
 *                   float32(sa * sb_j / so), with out_params per tensor
 *                   of qtype out_dtype (scale so, zero point zo).
 * *out is a new [M, N] array.  Other types, layouts or shapes:
 * MXP_ERR_INVALID_DTYPE / MXP_ERR_UNSUPPORTED / MXP_ERR_SHAPE. */
MXP_API mxp_status mxp_qmatmul(mxp_array **out, const mxp_qtensor *a, const mxp_qtensor *b, mxp_dtype out_dtype,
                               const mxp_qparams *out_params);
/* The scales mxp_qmatmul hands the int8 GEMM: out[j] = float32(a_scale *
 * b_scales[j] / out_scale), the product and the quotient in float64, one
 * rounding (out_scale 1 for a float result), for j < n.  For callers that
 * run the GEMM themselves with mxp_gemm_opts.scales (the Python package's
 * mxp.matmul of quantized tensors, with its epilogue and batch axes). */
MXP_API mxp_status mxp_qmatmul_scales(float *out, float a_scale, const float *b_scales, size_t n, double out_scale);

/* A quantized linear layer, y = x W^T + bias, as PyTorch's dynamic
 * quantized Linear: x [..., K] of a float dtype is quantized per tensor
 * (x_params: uint8 or int8, per tensor; NULL: uint8 asymmetric from the
 * min/max of this x, each call), w is the int8 weight [N, K] (torch's
 * [out_features, in_features]) quantized per tensor or per output channel
 * (axis 0, every zero point equal), bias NULL or N values of a float
 * dtype.  y [..., N] of float dtype out_dtype is
 *   y[i, j] = round(float32(sx * sw_j) * acc[i, j] + bias[j]),
 *   acc[i, j] = sum_k (xq[i, k] - zx) (wq[j, k] - zw)  (exact int32),
 * the product and the sum in float64, one rounding into out_dtype.
 * Bad shapes: MXP_ERR_SHAPE; wrong dtypes: MXP_ERR_INVALID_DTYPE; w with
 * groups, another axis or unequal zero points: MXP_ERR_UNSUPPORTED. */
MXP_API mxp_status mxp_qlinear(mxp_array **y, const mxp_array *x, const mxp_qtensor *w, const mxp_array *bias,
                               mxp_dtype out_dtype, const mxp_qparams *x_params);
/* Keeps the weight w packed for mxp_qlinear and mxp_qlinear_reduce_range,
 * as PyTorch's prepacked Linear keeps its weight: from the next call on,
 * W^T is packed for the GEMM kernel and blocking a call takes at most once
 * (a few kinds kept: the first ones met) and the later calls read it
 * there instead of packing it again -- the same results, bit for bit (a
 * call of one row, M = 1, may stream the codes as before: the GEMV).  A snapshot: the codes
 * must not change while it is kept; calling this again drops what was
 * kept (as mxp_qtensor_free does, not while another thread uses w).
 * Memory: about W's size per kind kept (int16 panels at AVX2 without
 * VNNI: twice it), freed with w.  w must be a weight mxp_qlinear takes
 * (int8, per tensor or per output channel, 2-d): else the error
 * mxp_qlinear would give.  A weight whose codes are not contiguous (a
 * strided view) is packed per call as before.  docs/quant.md. */
MXP_API mxp_status mxp_qtensor_prepack(mxp_qtensor *w);

/* mxp_qlinear with x quantized to 7 bits, codes [0, 127], as PyTorch's
 * dynamic quantized Linear does on x86 (reduce_range=True): x_params NULL
 * calibrates uint8 asymmetric over [0, 127] from this x's min/max (the
 * scale and zero point of torch's _choose_qparams_per_tensor(x, True));
 * given, x_params must be uint8 per tensor (else MXP_ERR_UNSUPPORTED /
 * MXP_ERR_INVALID_DTYPE) with its zero point in [0, 127] (else
 * MXP_ERR_INVALID_ARGUMENT).  The codes are clamped to [0, 127].  The sums
 * stay exact; half the activation resolution of mxp_qlinear buys speed
 * where the CPU has no VNNI (AVX2: the vpmaddubsw kernel, docs/gemm.md). */
MXP_API mxp_status mxp_qlinear_reduce_range(mxp_array **y, const mxp_array *x, const mxp_qtensor *w,
                                            const mxp_array *bias, mxp_dtype out_dtype, const mxp_qparams *x_params);

#ifdef __cplusplus
}
#endif
#endif
