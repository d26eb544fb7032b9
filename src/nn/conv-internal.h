/* Internal: what convolution and pooling share (src/nn/conv*.c, window.c,
 * pool.c): the geometry of a 2-d sliding window over NCHW or NHWC, its
 * checks, and the direct loops of the windows that are not a GEMM
 * (depthwise convolution, pooling). */
#ifndef MXP_NN_CONV_INTERNAL_H
#define MXP_NN_CONV_INTERNAL_H

#include "kernels/bnorm-kernels.h"
#include "kernels/winograd-kernels.h"
#include "kernels/dwconv-kernels.h"
#include "kernels/pool-kernels.h"
#include "nn/nn-internal.h"

/* A window sliding over x: input [n, c, h, w] in the given layout, output
 * [n, o, oh, ow] in the same layout, window kh x kw, its steps, symmetric
 * paddings and dilations. */
typedef struct nn_geom {
    bool nhwc;
    int64_t n, c, h, w;
    int64_t o, kh, kw, groups;
    int64_t oh, ow;
    int64_t sh, sw, ph, pw, dh, dw;
} nn_geom;

/* x's axes as (n, c, h, w) whatever the layout (the output's likewise). */
static inline void nn_geom_nchw(const mxp_array *a, bool nhwc, int64_t *d)
{
    const int64_t *s = a->shape;
    d[0] = s[0];
    d[1] = nhwc ? s[3] : s[1];
    d[2] = nhwc ? s[1] : s[2];
    d[3] = nhwc ? s[2] : s[3];
}

/* The output's shape in the layout. */
void nn_geom_out_shape(const nn_geom *g, int64_t *shape);

/* Output size along one axis: (size + 2 pad - dil (k - 1) - 1) / stride + 1
 * (ceil: rounded up, a last window starting in the padding dropped, as
 * torch's pooling); MXP_ERR_SHAPE with a sentence when the dilated window
 * does not fit in the padded input, MXP_ERR_SIZE_OVERFLOW when the sizes
 * overflow. */
mxp_status nn_window_out(const char *fn, const char *axis, int64_t size, int64_t k, int64_t stride, int64_t pad,
                         int64_t dil, bool ceil, int64_t *out);

/* The C-contiguous layout of a, its strides all positive (what a GEMM
 * reads with a leading dimension). */
bool nn_dense(const mxp_array *a);

/* out, or a dense temporary of its shape and dtype (nn_out_begin's rules,
 * and a temporary too when out is not dense); end with nn_out_end. */
mxp_status nn_dense_out_begin(const char *fn, mxp_array *out, const mxp_array *const *in, int n, mxp_array **work);

/* ---- direct window loops (src/nn/window.c) ------------------------------ */

enum nn_window_kind { NN_WIN_DEPTHWISE, NN_WIN_MAX, NN_WIN_AVG };

/* One window operation over dense x into dense y: depthwise convolution
 * (groups == c == o; wk: the kh*kw*c weights widened to float64 as
 * [kh][kw][c]; bias: c values or NULL; the epilogue of gemm o), max or
 * average pooling (exclude_pad: average over the elements inside x).
 * Every value widened exactly to float64, each result rounded once into
 * y's dtype; rows of the output over the thread pool. */
typedef struct nn_window {
    int kind;
    nn_geom g;
    const double *wk, *bias;
    mxp_activation act;
    bool clamp;
    double lo, hi;
    bool exclude_pad;
} nn_window;

mxp_status nn_window_run(const nn_window *win, const mxp_array *x, mxp_array *y);

/* The output columns j whose input column j * stride + off lies in x:
 * [*lo, *hi). */
void nn_window_columns(const nn_window *win, int64_t off, int64_t *lo, int64_t *hi);
/* The depthwise epilogue (bias, activation, clamp) or the average's
 * division on output row i: ow pixels of vl values, channels ch0 ... */
void nn_window_finish(const nn_window *win, double *acc, int64_t i, int64_t vl, int64_t ch0);

/* Depthwise convolution of dense float32 x (4-byte aligned) in float32
 * sums (src/nn/dwconv.c): wk the weights widened to float32 as
 * [kh][kw][c]; win's bias and epilogue in float64; y dense. */
mxp_status nn_dwconv_f32(const nn_window *win, const float *x, const float *wk, mxp_array *y);
/* Whether nn_dwconv_f32 sums NCHW planes of this geometry in registers
 * (the taps kernel's one-channel form: stride 1, windows of up to 32 rows
 * and 1024 taps); the others are better transposed to NHWC. */
bool nn_dwconv_nchw_direct(const nn_geom *g);

/* The float32 depthwise row kernel for an ISA level (never NULL) and the
 * rows of its list for the tests (src/nn/nn-config.c). */
mxp_f32_dwconv_ukernel *nn_f32_dwconv_kernel(mxp_isa isa);
const mxp_kernel *nn_f32_dwconv_kernels(size_t *n);
mxp_f32_dwconv_taps_ukernel *nn_f32_dwconv_taps_kernel(mxp_isa isa);
const mxp_kernel *nn_f32_dwconv_taps_kernels(size_t *n);

/* Max and average pooling of dense float32 x (4-byte aligned) through
 * the row kernels (src/nn/pool-f32.c): the generic path's bits; y dense,
 * any float dtype. */
enum { NN_POOL_MAX_KH = 16 };
mxp_status nn_pool_f32(const nn_window *win, const float *x, mxp_array *y);

/* The float32 pooling row kernel and the max plane kernel for an ISA
 * level (never NULL) and the rows of their lists for the tests
 * (src/nn/nn-config.c). */
mxp_f32_pool_ukernel *nn_f32_pool_kernel(mxp_isa isa);
const mxp_kernel *nn_f32_pool_kernels(size_t *n);
mxp_f32_pool_plane_ukernel *nn_f32_pool_plane_kernel(mxp_isa isa);
const mxp_kernel *nn_f32_pool_plane_kernels(size_t *n);

/* The float32 batch-norm block kernel for an ISA level (never NULL) and
 * the rows of its list for the tests (src/nn/nn-config.c). */
mxp_f32_bnorm_ukernel *nn_f32_bnorm_kernel(mxp_isa isa);
const mxp_kernel *nn_f32_bnorm_kernels(size_t *n);

/* The float32 Winograd transform kernel (src/kernels/f32-winograd/) for
 * an ISA level (never NULL) and the rows of its list for the tests. */
mxp_f32_wino_ukernel *nn_f32_wino_kernel(mxp_isa isa);
const mxp_kernel *nn_f32_wino_kernels(size_t *n);

/* The window of output (i, j) along rows and columns, clipped to x:
 * rows [*h0, *h1), columns [*w0, *w1), and the average's divisor. */
void nn_window_bounds(const nn_window *win, int64_t i, int64_t j, int64_t *h0, int64_t *h1, int64_t *w0,
                      int64_t *w1, double *div);
/* Every output's divisor, div[i ow + j] (oh x ow): nn_window_bounds's,
 * computed as the product of a row's and a column's count. */
void nn_window_divisors(const nn_window *win, double *div);

#endif
