/* mxp — neural-network operations on arrays: softmax, normalization,
 * gathers and row products, with their backward passes.  See docs/nn.md.
 *
 * Every operation reads any dtype (each element widened exactly to
 * float64), computes in float64 and rounds each result once, to nearest
 * even, into the output dtype: the same bits at every thread count and
 * ISA level (softmax's exp: mxp's float64 one at AVX2/AVX-512, within 1.1
 * ulps, libm's at the scalar level, docs/nn.md).  Except: softmax,
 * log_softmax, layer norm, RMS norm and L2 normalization into bfloat16
 * from bfloat16 or float32 compute in float32 with float64 sums, each
 * result within half an ulp + 2^-16 of the exact one (docs/nn.md: the
 * same bits at every thread count and layout; ISA levels agree).
 * out_dtype 0 means the input's dtype when it is a float
 * type, else float64 (mxp_take: the table's dtype; mxp_take_scaled:
 * float32).  The `_into` forms write into an existing array of the
 * result's shape, in its dtype (read-only: MXP_ERR_READONLY); an output
 * that overlaps an input other than element for element is written
 * through a temporary. */
#ifndef MXP_NN_H
#define MXP_NN_H

#include "array.h"
#include "gemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- softmax ------------------------------------------------------------- */

/* softmax(x)_i = exp(x_i - max) / sum_j exp(x_j - max) along axis
 * (negative counts from the end), and log_softmax = (x_i - max) -
 * log(sum_j exp(x_j - max)): no overflow for any finite input.  mask
 * (NULL: none) broadcasts to x's shape: a bool mask keeps the elements
 * where it is true (false ones count as -inf), any other dtype is added to
 * x first (an additive attention mask).  A row whose elements are all -inf
 * (all masked) gives NaN, as torch does; a NaN or +inf in a row gives a
 * row of NaN.  The output dtype must be a float type. */
MXP_API mxp_status mxp_softmax(mxp_array **out, const mxp_array *x, int axis, const mxp_array *mask,
                               mxp_dtype out_dtype);
MXP_API mxp_status mxp_softmax_into(mxp_array *out, const mxp_array *x, int axis, const mxp_array *mask);
MXP_API mxp_status mxp_log_softmax(mxp_array **out, const mxp_array *x, int axis, const mxp_array *mask,
                                   mxp_dtype out_dtype);
MXP_API mxp_status mxp_log_softmax_into(mxp_array *out, const mxp_array *x, int axis, const mxp_array *mask);

/* The gradient with respect to the input, from the gradient dy with
 * respect to the output and the forward output y (same shapes):
 * softmax dx = y (dy - sum(dy y)), log_softmax dx = dy - exp(y) sum(dy),
 * the sums along axis.  dx gets y's dtype when out_dtype is 0; both must
 * be float types. */
MXP_API mxp_status mxp_softmax_backward(mxp_array **dx, const mxp_array *dy, const mxp_array *y, int axis,
                                        mxp_dtype out_dtype);
MXP_API mxp_status mxp_log_softmax_backward(mxp_array **dx, const mxp_array *dy, const mxp_array *y, int axis,
                                            mxp_dtype out_dtype);

/* ---- normalization ------------------------------------------------------- */

/* Layer norm over the last nnorm axes (1 <= nnorm <= ndim): y = (x -
 * mean) / sqrt(var + eps) * weight + bias, mean and the biased variance
 * (two passes) of each group of nnorm axes.  weight and bias (NULL: 1 and
 * 0) have exactly the shape of those axes (torch's normalized_shape);
 * eps >= 0 and finite. */
MXP_API mxp_status mxp_layer_norm(mxp_array **out, const mxp_array *x, int nnorm, const mxp_array *weight,
                                  const mxp_array *bias, double eps, mxp_dtype out_dtype);
MXP_API mxp_status mxp_layer_norm_into(mxp_array *out, const mxp_array *x, int nnorm, const mxp_array *weight,
                                       const mxp_array *bias, double eps);
/* RMS norm: y = x / sqrt(mean(x^2) + eps) * weight (NULL: 1). */
MXP_API mxp_status mxp_rms_norm(mxp_array **out, const mxp_array *x, int nnorm, const mxp_array *weight,
                                double eps, mxp_dtype out_dtype);
MXP_API mxp_status mxp_rms_norm_into(mxp_array *out, const mxp_array *x, int nnorm, const mxp_array *weight,
                                     double eps);

/* Gradients of layer norm / rms norm from dy (x's shape), the forward
 * input x and the forward weight (NULL: 1), the statistics recomputed:
 * *dx (x's dtype), *dweight and *dbias (the normalized shape, in weight's
 * dtype, x's without a weight) summed over the other axes.  Any of dx,
 * dweight, dbias may be NULL: not computed.  x must be of a float type. */
MXP_API mxp_status mxp_layer_norm_backward(mxp_array **dx, mxp_array **dweight, mxp_array **dbias,
                                           const mxp_array *dy, const mxp_array *x, int nnorm,
                                           const mxp_array *weight, double eps);
MXP_API mxp_status mxp_rms_norm_backward(mxp_array **dx, mxp_array **dweight, const mxp_array *dy,
                                         const mxp_array *x, int nnorm, const mxp_array *weight, double eps);

/* ---- gathers -------------------------------------------------------------- */

/* NumPy's take: out = table.shape[:axis] + indices.shape +
 * table.shape[axis+1:], out[..., j, ...] = table[..., indices[j], ...].
 * indices of any integer dtype; negative ones count from the end as in
 * NumPy.  Every index is checked before anything is written: one outside
 * [-n, n) is MXP_ERR_INDEX naming it.  out_dtype 0 or the table's: a copy, bit
 * for bit; another dtype: each element converted once. */
MXP_API mxp_status mxp_take(mxp_array **out, const mxp_array *table, const mxp_array *indices, int axis,
                            mxp_dtype out_dtype);
MXP_API mxp_status mxp_take_into(mxp_array *out, const mxp_array *table, const mxp_array *indices, int axis);
/* Rows of a quantized 2-d table (int8, float8 ... codes [rows, d]) with
 * one scale per row (scales: 1-d, rows entries of any dtype), dequantized
 * on the way: out[..., :] = table[i, :] * scales[i] (out: indices.shape +
 * (d,)), each product exact in float64 and rounded once; out_dtype 0:
 * float32.  Indices as mxp_take. */
MXP_API mxp_status mxp_take_scaled(mxp_array **out, const mxp_array *table, const mxp_array *scales,
                                   const mxp_array *indices, mxp_dtype out_dtype);
MXP_API mxp_status mxp_take_scaled_into(mxp_array *out, const mxp_array *table, const mxp_array *scales,
                                        const mxp_array *indices);

/* ---- row products ----------------------------------------------------------- */

/* Dot products of rows (the last axis, of equal length d), accumulated in
 * float64.  outer false: a and b broadcast over their leading axes, out
 * has that shape (a: [n, d], b: [n, d] -> [n]); outer true: a [n, d] and
 * b [m, d], 2-d, give every pair, out [n, m]. */
MXP_API mxp_status mxp_rowdot(mxp_array **out, const mxp_array *a, const mxp_array *b, bool outer,
                              mxp_dtype out_dtype);
MXP_API mxp_status mxp_rowdot_into(mxp_array *out, const mxp_array *a, const mxp_array *b, bool outer);
/* Cosine similarity of rows, torch's: a.b / (max(|a|, eps) max(|b|, eps)),
 * shapes as mxp_rowdot; eps >= 0 and finite (torch's default 1e-8). */
MXP_API mxp_status mxp_cosine_similarity(mxp_array **out, const mxp_array *a, const mxp_array *b, bool outer,
                                         double eps, mxp_dtype out_dtype);
MXP_API mxp_status mxp_cosine_similarity_into(mxp_array *out, const mxp_array *a, const mxp_array *b, bool outer,
                                              double eps);
/* x / max(|x|, eps) along axis, |x| the Euclidean norm (torch's
 * F.normalize with p = 2; its default eps 1e-12). */
MXP_API mxp_status mxp_l2_normalize(mxp_array **out, const mxp_array *x, int axis, double eps, mxp_dtype out_dtype);
MXP_API mxp_status mxp_l2_normalize_into(mxp_array *out, const mxp_array *x, int axis, double eps);

/* ---- convolution, pooling, batch norm ------------------------------------- */

/* Where the channels are: NCHW (x [N, C, H, W]; conv weights OIHW
 * [O, C/groups, KH, KW]) or NHWC (x [N, H, W, C]; conv weights OHWI
 * [O, KH, KW, C/groups]).  The output has the input's layout. */
typedef enum mxp_nn_layout {
    MXP_NCHW = 0,
    MXP_NHWC = 1
} mxp_nn_layout;

/* How a float convolution is computed (mxp_conv_opts.algorithm):
 * AUTO takes Winograd F(2x2, 3x3) where it applies (float32 x, weights
 * and output, a 3x3 kernel, stride 1, dilation 1, one group) and pays
 * (the avx2 level or above, 16 or more input and output channels, 48 or
 * more 2x2 tiles covering the outputs closely, 4096 channel pairs or 256
 * tiles: docs/nn.md), else DIRECT: each output one chain of float32 fused multiply-adds over its
 * products (docs/nn.md).  WINOGRAD asks for it where it applies
 * (MXP_ERR_UNSUPPORTED elsewhere): 2.25 times fewer multiply-adds, other
 * bits than the direct chain's, errors no larger on ResNet shapes
 * (docs/nn.md, "Winograd"). */
typedef enum mxp_conv_algorithm {
    MXP_CONV_AUTO = 0,
    MXP_CONV_DIRECT = 1,
    MXP_CONV_WINOGRAD = 2
} mxp_conv_algorithm;

/* Zero-initialized (or NULL) means torch's defaults: NCHW, stride 1, no
 * padding, dilation 1, one group, no activation.  [0] is the row (H)
 * axis, [1] the column (W) axis; a 0 stride, dilation or groups means 1,
 * a negative one is MXP_ERR_INVALID_ARGUMENT.  Padding is symmetric:
 * padding[0] zero rows above and below. */
typedef struct mxp_conv_opts {
    size_t struct_size;       /* 0: this release's layout, or sizeof(mxp_conv_opts) */
    mxp_nn_layout layout;
    int64_t stride[2], padding[2], dilation[2];
    int64_t groups;
    /* the GEMM epilogue, after the bias: activation, then clamp */
    mxp_activation activation;
    bool clamp;
    double clamp_lo, clamp_hi;
    /* uint8/int8 x by int8 weights (ONNX's ConvInteger, QLinearConv): the
     * zero points (x's in its dtype's range, the weights' and an int8
     * output's in int8's, a uint8 output's in uint8's) and the scales
     * (0: 1; w_scales NULL: 1, else 1 or O values); see mxp_conv2d. */
    int32_t x_zero_point, w_zero_point, y_zero_point;
    double x_scale, y_scale;
    const float *w_scales;
    size_t n_w_scales;
    mxp_conv_algorithm algorithm; /* float convolutions: see mxp_conv_algorithm */
} mxp_conv_opts;

/* 2-d convolution (cross-correlation, as torch's conv2d):
 * out[n, o, i, j] = bias[o] + sum_{c, p, q} x[n, g Cg + c, i s0 - p0 + p d0,
 * j s1 - p1 + q d1] w[o, c, p, q] over the group g of o (zero outside x),
 * OH = (H + 2 p0 - d0 (KH - 1) - 1) / s0 + 1 (and OW likewise).  x and
 * weight of any float dtypes (mixed freely), bias (NULL: none) of any
 * float dtype with O values; the products accumulated in float32 (float64
 * when x or weight is float64) through mxp_gemm in chunks of output
 * pixels (never a whole im2col copy), the epilogue in float64 and one
 * rounding into out_dtype (0: x's dtype).
 *
 * Quantized (x uint8 or int8, weight int8): the sums
 * acc = sum (x - x_zero_point) (w - w_zero_point) are exact int32 (the
 * padding counts as x_zero_point, i.e. 0), on mxp's integer GEMM, and
 * out_dtype (0: int32) says what is made of them: int32 the sums
 * themselves (ConvInteger; no bias, epilogue or scales), uint8/int8
 * requantized (QLinearConv): y = saturate(round(x_scale w_scale[o] /
 * y_scale (acc + bias[o])) + y_zero_point), a float dtype dequantized:
 * x_scale w_scale[o] (acc + bias[o]); bias (NULL: none) int32 as ONNX's
 * (in the scale x_scale w_scale[o]), the activation and clamp after it in
 * the output's scale, everything in float64 and rounded once (nearest
 * even). */
MXP_API mxp_status mxp_conv2d(mxp_array **out, const mxp_array *x, const mxp_array *weight, const mxp_array *bias,
                              const mxp_conv_opts *opts, mxp_dtype out_dtype);
MXP_API mxp_status mxp_conv2d_into(mxp_array *out, const mxp_array *x, const mxp_array *weight,
                                   const mxp_array *bias, const mxp_conv_opts *opts);
/* conv1d: x [N, C, L] (NCHW: NCL) or [N, L, C] (NHWC: NLC), weight
 * [O, C/groups, K] or [O, K, C/groups]: conv2d with H = 1, the opts' [1]
 * entries along L ([0] ignored). */
MXP_API mxp_status mxp_conv1d(mxp_array **out, const mxp_array *x, const mxp_array *weight, const mxp_array *bias,
                              const mxp_conv_opts *opts, mxp_dtype out_dtype);
/* The gradients of conv2d (no activation or clamp: opts' are ignored)
 * from dy (the output's shape): *dx (x's shape and dtype), *dweight
 * (weight's), *dbias ([O], weight's dtype); any may be NULL (not
 * computed).  Accumulated as the forward (float32, or float64), rounded
 * once. */
MXP_API mxp_status mxp_conv2d_backward(mxp_array **dx, mxp_array **dweight, mxp_array **dbias, const mxp_array *dy,
                                       const mxp_array *x, const mxp_array *weight, const mxp_conv_opts *opts);

/* Pooling windows.  Zero-initialized (or NULL): global pooling (kernel
 * {0, 0}: the whole plane), NCHW.  stride 0: the kernel's; padding <=
 * kernel / 2 (as torch); ceil_mode rounds the output size up (a window
 * must still start inside the input or its left padding);
 * exclude_pad: the average divides by the elements inside x only (torch's
 * count_include_pad = False; the default counts the padding, as torch). */
typedef struct mxp_pool_opts {
    size_t struct_size;       /* 0: this release's layout, or sizeof(mxp_pool_opts) */
    mxp_nn_layout layout;
    int64_t kernel[2], stride[2], padding[2];
    bool ceil_mode;
    bool exclude_pad;
} mxp_pool_opts;

/* Max and average pooling of a 4-d x (any dtype, widened exactly; sums in
 * float64; one rounding into out_dtype, 0: x's float dtype).  Max: NaN in a
 * window gives NaN; padding never wins. */
MXP_API mxp_status mxp_max_pool2d(mxp_array **out, const mxp_array *x, const mxp_pool_opts *opts,
                                  mxp_dtype out_dtype);
MXP_API mxp_status mxp_max_pool2d_into(mxp_array *out, const mxp_array *x, const mxp_pool_opts *opts);
MXP_API mxp_status mxp_avg_pool2d(mxp_array **out, const mxp_array *x, const mxp_pool_opts *opts,
                                  mxp_dtype out_dtype);
MXP_API mxp_status mxp_avg_pool2d_into(mxp_array *out, const mxp_array *x, const mxp_pool_opts *opts);
/* Their gradients: *dx of x's shape and dtype from dy (the output's
 * shape).  Max: each dy goes to its window's first maximum (torch's
 * argmax, recomputed from x); average: dy / divisor to every element the
 * window covered. */
MXP_API mxp_status mxp_max_pool2d_backward(mxp_array **dx, const mxp_array *dy, const mxp_array *x,
                                           const mxp_pool_opts *opts);
MXP_API mxp_status mxp_avg_pool2d_backward(mxp_array **dx, const mxp_array *dy, const mxp_array *x,
                                           const mxp_pool_opts *opts);

/* Batch norm over every axis but the channel axis (torch: 1; -1 for
 * NHWC): y = (x - mean) / sqrt(var + eps) * weight + bias (NULL: 1, 0),
 * all in float64.  training: mean and the biased var of the batch (two
 * passes), and running_mean / running_var (NULL: not kept; 1-d, C values,
 * writeable) updated in place as torch: r = (1 - momentum) r + momentum
 * stat, with the unbiased variance (n / (n - 1)); fewer than 2 values per
 * channel is MXP_ERR_INVALID_ARGUMENT.  Otherwise (inference) the running
 * statistics, required, are used and left alone. */
MXP_API mxp_status mxp_batch_norm(mxp_array **out, const mxp_array *x, int axis, mxp_array *running_mean,
                                  mxp_array *running_var, const mxp_array *weight, const mxp_array *bias,
                                  bool training, double momentum, double eps, mxp_dtype out_dtype);
MXP_API mxp_status mxp_batch_norm_into(mxp_array *out, const mxp_array *x, int axis, mxp_array *running_mean,
                                       mxp_array *running_var, const mxp_array *weight, const mxp_array *bias,
                                       bool training, double momentum, double eps);
/* The gradients of training-mode batch norm (the batch statistics
 * recomputed from x): dx = w rstd (dy - mean(dy) - xhat mean(dy xhat)),
 * dweight = sum(dy xhat), dbias = sum(dy); as mxp_layer_norm_backward. */
MXP_API mxp_status mxp_batch_norm_backward(mxp_array **dx, mxp_array **dweight, mxp_array **dbias,
                                           const mxp_array *dy, const mxp_array *x, int axis,
                                           const mxp_array *weight, double eps);
/* Folds an inference batch norm into the convolution before it (or any
 * layer whose output channel is axis 0 of its weight): with s = gamma /
 * sqrt(var + eps), w'[o, ...] = w[o, ...] s[o] and b'[o] = (b[o] - mean[o])
 * s[o] + beta[o], in float64, rounded once into weight's dtype (b': the
 * bias's, weight's without one).  conv_bias, gamma, beta NULL: 0, 1, 0. */
MXP_API mxp_status mxp_fold_batch_norm(mxp_array **weight_out, mxp_array **bias_out, const mxp_array *weight,
                                       const mxp_array *conv_bias, const mxp_array *gamma, const mxp_array *beta,
                                       const mxp_array *mean, const mxp_array *var, double eps);

/* ---- FFT --------------------------------------------------------------- */

/* Discrete Fourier transforms through KISS FFT (third_party/kissfft,
 * BSD-3-Clause), computed in float32 for float16, bfloat16 and float32
 * inputs and in float64 for float64 (and 8-bit floats in float32), the
 * result rounded once into the output dtype (default: float32, or float64
 * for float64 input).  Complex arrays are real arrays with a trailing axis
 * of length 2 (re, im); the axes below count the others.  Any length
 * (KISS FFT's mixed radix: 2, 3, 4, 5 and generic butterflies; a length
 * with a large prime factor costs O(n p)).  docs/nn.md#fft. */
typedef enum mxp_fft_norm {
    MXP_FFT_BACKWARD = 0, /* NumPy's default: the inverse divides by n */
    MXP_FFT_ORTHO,        /* both divide by sqrt(n) */
    MXP_FFT_FORWARD,      /* the forward transform divides by n */
    MXP_FFT_NORM_COUNT
} mxp_fft_norm;

typedef struct mxp_fft_opts {
    size_t struct_size;  /* 0: this release's layout, or sizeof(mxp_fft_opts) */
    int naxes;           /* 0: one axis, the last; 1 or 2: axes[] below */
    int axes[2];         /* negative count from the end */
    int64_t n[2];        /* per axis: 0 keeps its length (irfft: 2 (m - 1)); else
                            the input is cut or zero-padded to n */
    mxp_fft_norm norm;
    bool inverse;        /* mxp_fft only: the inverse transform */
    bool real_input;     /* mxp_fft only: x is real (imaginary parts 0) */
    mxp_dtype out_dtype; /* 0: the default above; any float dtype */
} mxp_fft_opts;

/* Complex to complex over opts' axes (numpy.fft.fft / ifft / fftn). */
MXP_API mxp_status mxp_fft(mxp_array **out, const mxp_array *x, const mxp_fft_opts *opts);
/* Real to complex: the last of the axes gives n/2 + 1 values (rfft, rfftn). */
MXP_API mxp_status mxp_rfft(mxp_array **out, const mxp_array *x, const mxp_fft_opts *opts);
/* Complex (Hermitian half spectrum) to real: irfft, irfftn; the last axis
 * gives n reals (imaginary parts of the zero and Nyquist bins ignored). */
MXP_API mxp_status mxp_irfft(mxp_array **out, const mxp_array *x, const mxp_fft_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
