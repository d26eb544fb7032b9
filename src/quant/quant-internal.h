/* Internal: shared by src/quant/affine.c and src/quant/calibrate.c. */
#ifndef MXP_QUANT_INTERNAL_H
#define MXP_QUANT_INTERNAL_H

#include <stdbool.h>

#include "core/dispatch.h"
#include "kernels/quant-kernels.h"
#include "mxp/mx.h"
#include "mxp/quant.h"

/* x viewed as [outer, len, inner] around the axis (len = size, inner = 1
 * for per tensor); pair index of element (o, a, i) is quant_index(). */
typedef struct quant_layout {
    int64_t outer, len, inner, size, count, group;
    int axis; /* -1 or normalized */
} quant_layout;

static inline int64_t quant_index(const quant_layout *L, int64_t o, int64_t a, int64_t i)
{
    if (L->axis < 0)
        return 0;
    if (L->group == 0)
        return a;
    return (o * (L->len / L->group) + a / L->group) * L->inner + i;
}

/* Everything about one quantized type (src/quant/qtype.c). */
typedef struct quant_type {
    mxp_dtype qtype;
    mxp_dtype code;     /* dtype of the code array: S8, U8 (4-bit too), E4M3, E5M2 */
    bool is_float;      /* float8: scale only, zero point 0, no integer rounding */
    int32_t qmin, qmax; /* integer code range; [0, 0] (the zero point) for float8 */
    double sym_max;     /* symmetric scale = amax / sym_max: 127, 7, 448, 57344 */
    int32_t sym_zp;     /* symmetric zero point: 0, 128 (uint8), 8 (uint4) */
    int kl_bins;        /* KL's target bins: the grid's non-negative levels (128, 8) */
} quant_type;

/* Fills *t; MXP_ERR_INVALID_DTYPE for a value that is neither a dtype nor
 * a quantization type, MXP_ERR_UNSUPPORTED for other dtypes. */
mxp_status mxp_quant_type_info(mxp_dtype qtype, const char *what, quant_type *t);

/* As mxp_quant_type_info, and asymmetric float8 is MXP_ERR_UNSUPPORTED. */
mxp_status mxp_quant_calib_type(mxp_dtype qtype, bool symmetric, const char *what, quant_type *t);

/* Checks x (non-empty), axis (-1 or in range: MXP_ERR_INDEX) and group_size
 * (needs axis >= 0 and to divide the axis length), fills *L. */
mxp_status mxp_quant_layout(const mxp_array *x, int axis, int64_t group, const char *what, quant_layout *L);

/* qp checked against an array of x's shape, as mxp_quantize checks it. */
mxp_status mxp_quant_check_qparams(const mxp_qparams *qp, const mxp_array *x, const char *what);

/* The finite min and max of each pair's elements of v (x as float64, C
 * order, laid out as L): +inf and -inf for a pair with none. */
void mxp_quant_pair_ranges(const quant_layout *L, const double *v, double *mins, double *maxs);

/* uint8 codes in [0, qmax] (qmax 127: 7-bit activations, torch's
 * reduce_range): per-tensor asymmetric parameters from x's finite min/max
 * as mxp_calibrate_minmax gives them for [0, 255], with qmax for 255; and
 * x quantized by qp (uint8, per tensor, checked as mxp_quantize checks it)
 * with its codes clamped to [0, qmax]. */
mxp_status mxp_quant_u8_calibrate_upto(const mxp_array *x, int32_t qmax, mxp_qparams *out);
mxp_status mxp_quant_u8_quantize_upto(mxp_array **out, const mxp_array *x, const mxp_qparams *qp, int32_t qmax);

/* x as a C-contiguous float64 array (a new reference). */
mxp_status mxp_quant_as_f64(mxp_array **out, const mxp_array *x);

/* One pair's scale and zero point from its range [lo, hi] (lo > hi: it
 * saw no finite value, treated as [0, 0]): calibration's rule
 * (docs/quant.md), shared by mxp_qparams_from_ranges and
 * mxp_quantize_rows. */
void mxp_quant_pair_from_range(const quant_type *t, bool symmetric, double lo, double hi, float *scale, int32_t *zp);

/* Fills *out from per-pair ranges (mins[k] <= maxs[k] finite, or mins[k] >
 * maxs[k] when the pair saw no finite value: treated as [0, 0]). */
mxp_status mxp_qparams_from_ranges(mxp_qparams *out, mxp_dtype qtype, bool symmetric, int axis, int64_t group,
                                   int64_t count, const double *mins, const double *maxs);

/* Fast paths (affine-fast.c).  mxp_quant_fast_runs: true when x is
 * C-contiguous, of a dtype float32 holds exactly, and its pairs apply to
 * runs of >= 16 consecutive elements (*run_len; per tensor, per channel with
 * inner >= 16, groups along the last axis).  mxp_quant_fast then writes the
 * nearest-even codes' bytes of all of x into dst. */
bool mxp_quant_fast_runs(const mxp_array *x, const quant_layout *L, int64_t *run_len);
void mxp_quant_fast(uint8_t *dst, const mxp_array *x, const quant_layout *L, int64_t run_len,
                    const mxp_qparams *qp, int32_t qmin, int32_t qmax);
/* Finite min and max of a C-contiguous x of such a dtype (+inf/-inf when
 * none); false (nothing done) for other arrays. */
bool mxp_quant_fast_minmax(const mxp_array *x, double *lo, double *hi);
/* Per channel on the last axis (a pair per element of each row, >= 16 of
 * them, every scale in the SIMD kernels' range): the codes' bytes into dst,
 * true; false (nothing written) for other layouts.  The calibration's
 * counterpart fills per-column finite mins/maxs (+-inf when none). */
bool mxp_quant_fast_cols(uint8_t *dst, const mxp_array *x, const quant_layout *L, const mxp_qparams *qp,
                         int32_t qmin, int32_t qmax);
bool mxp_quant_fast_minmax_cols(const mxp_array *x, const quant_layout *L, double *mins, double *maxs);
bool mxp_quant_fast_minmax_blocks(const mxp_array *x, const quant_layout *L, double *mins, double *maxs);
/* Either fast path, when one applies (nearest even is the caller's
 * condition): true when dst holds the codes. */
bool mxp_quant_fast_try(uint8_t *dst, const mxp_array *x, const quant_layout *L, const mxp_qparams *qp,
                        int32_t qmin, int32_t qmax);

/* The quantization kernels (src/quant/quant-config.c): the rows of the
 * f32-quant list (minmax false) or the f32-minmax list (true), in list
 * order, for the tests, each row tagged with its kind; and the kernel of
 * each kind for the current ISA level (never NULL: the lists have scalar
 * rows). */
enum { MXP_QUANT_TAG_ONE = 1, MXP_QUANT_TAG_COLS = 2 };
const mxp_kernel *mxp_quant_kernels(bool minmax, size_t *n);
mxp_f32_quant_ukernel *mxp_f32_quant_kernel(void);
mxp_f32_quant_cols_ukernel *mxp_f32_quant_cols_kernel(void);
mxp_f32_minmax_ukernel *mxp_f32_minmax_kernel(void);
mxp_f32_minmax_cols_ukernel *mxp_f32_minmax_cols_kernel(void);

/* Elements [first, first + n) of an MX / NVFP4 tensor of any length at src,
 * first a multiple of the format's block (src/quant/mx.c; the format and
 * sizes checked by the caller). */
mxp_status mxp_mx_dequantize_part(float *dst, const void *src, mxp_mx_format f, size_t first, size_t n);

#endif
