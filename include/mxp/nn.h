/* mxp — neural-network operations on arrays: softmax, normalization,
 * gathers and row products, with their backward passes.  See docs/nn.md.
 *
 * Every operation reads any dtype (each element widened exactly to
 * float64), computes in float64 and rounds each result once, to nearest
 * even, into the output dtype: the same bits at every thread count and
 * ISA level (softmax's exp: SLEEF's float64 one at AVX2/AVX-512, libm's
 * at the scalar level, docs/nn.md).  out_dtype 0 means the input's dtype when it is a float
 * type, else float64 (mxp_take: the table's dtype; mxp_take_scaled:
 * float32).  The `_into` forms write into an existing array of the
 * result's shape, in its dtype (read-only: MXP_ERR_READONLY); an output
 * that overlaps an input other than element for element is written
 * through a temporary. */
#ifndef MXP_NN_H
#define MXP_NN_H

#include "array.h"

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

#ifdef __cplusplus
}
#endif
#endif
