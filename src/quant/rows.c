/* mxp_quantize_rows: dynamic per-row quantization (activations per token,
 * as W8A8 inference quantizes them before each integer GEMM) in one pass
 * over x.  Each row is widened to float32 (and multiplied by col_scale,
 * SmoothQuant's per-channel factor), its finite min/max taken, its pair
 * made by calibration's rule (mxp_quant_pair_from_range) and its codes by
 * the float32 quantization kernel, while the row is in the L1 cache: the
 * bytes of mxp_calibrate_minmax(y, axis 0) then mxp_quantize(y) for y =
 * x * col_scale, which read x from memory twice (three times with the
 * multiply) on one thread.  Rows are split over the threads; a row's codes
 * depend on it alone, so the bytes are the same for any thread count. */
#include <math.h>

#include "quant/quant-internal.h"
#include "array/array-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "core/threads-internal.h"
#include "mxp/convert.h"
#include "mxp/threads.h"

/* Rows go to threads from this many elements per thread on (a share's
 * dispatch costs a few microseconds; a 384-wide row ~0.1). */
enum { ROWS_MIN_PER_THREAD = 1 << 15 };

typedef struct rows_job {
    const unsigned char *x;
    mxp_dtype dtype;
    size_t itemsize, rows, cols;
    const float *col_scale;
    uint8_t *codes;
    float *scales;
    int32_t *zps;
    float *buf; /* cols floats per thread */
    const quant_type *t;
    bool symmetric;
    mxp_f32_minmax_ukernel *minmax;
    mxp_f32_quant_ukernel *quant;
} rows_job;

static void rows_share(void *ctx, int th, int nth)
{
    const rows_job *J = ctx;
    size_t r0, r1;
    mxp_share_range(J->rows, 1, th, nth, &r0, &r1);
    float *buf = J->buf ? J->buf + (size_t)th * J->cols : NULL;
    for (size_t r = r0; r < r1; r++) {
        const void *src = J->x + r * J->cols * J->itemsize;
        const float *y = src; /* float32 without a factor: read in place */
        if (J->dtype != MXP_F32) {
            mxp_convert(buf, MXP_F32, src, J->dtype, J->cols, NULL); /* exact: widening */
            y = buf;
        }
        if (J->col_scale) { /* one float32 rounding, as x * col_scale in NumPy */
            for (size_t k = 0; k < J->cols; k++)
                buf[k] = y[k] * J->col_scale[k];
            y = buf;
        }
        float lo = INFINITY, hi = -INFINITY;
        J->minmax(y, J->cols, &lo, &hi);
        mxp_quant_pair_from_range(J->t, J->symmetric, lo, hi, &J->scales[r], &J->zps[r]);
        J->quant(J->codes + r * J->cols, y, J->cols, J->scales[r], J->zps[r], J->t->qmin, J->t->qmax);
    }
}

static mxp_status check_rows(const mxp_array *codes, const float *scales, const int32_t *zero_points,
                             const mxp_array *x, mxp_dtype qtype, bool symmetric, const char *what, quant_type *t)
{
    mxp_status st = mxp_quant_calib_type(qtype, symmetric, what, t);
    if (st != MXP_OK)
        return st;
    if (t->is_float || t->code != qtype)
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: qtype %s: only int8 and uint8 (one code a byte)", what,
                         mxp_qtype_name(qtype));
    if (!x || !codes)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, x ? "codes" : "x");
    if (x->ndim != 2)
        return mxp_error(MXP_ERR_SHAPE, "%s: x must be 2-d [rows, cols], not %d-d", what, x->ndim);
    if (x->dtype != MXP_F32 && x->dtype != MXP_BF16 && x->dtype != MXP_F16)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: x is %s; float32, bfloat16 or float16 only", what,
                         mxp_dtype_name(x->dtype));
    if (!(x->flags & MXP_ARRAY_C_CONTIGUOUS) || (uintptr_t)x->data % mxp_dtype_itemsize(x->dtype))
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: x must be C-contiguous and aligned", what);
    if (codes->ndim != 2 || codes->shape[0] != x->shape[0] || codes->shape[1] != x->shape[1])
        return mxp_error(MXP_ERR_SHAPE, "%s: codes' shape differs from x's", what);
    if (codes->dtype != t->code)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: codes are %s; %s codes are %s", what,
                         mxp_dtype_name(codes->dtype), mxp_qtype_name(qtype), mxp_dtype_name(t->code));
    if (!(codes->flags & MXP_ARRAY_C_CONTIGUOUS))
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: codes must be C-contiguous", what);
    if (!(codes->flags & MXP_ARRAY_WRITEABLE))
        return mxp_error(MXP_ERR_READONLY, "%s: codes are read-only", what);
    if (mxp_arrays_may_overlap(codes, x))
        return mxp_error(MXP_ERR_OVERLAP, "%s: codes share memory with x", what);
    if (x->shape[0] > 0 && (!scales || !zero_points))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, scales ? "zero_points" : "scales");
    return MXP_OK;
}

static mxp_status quantize_rows(mxp_array *codes, float *scales, int32_t *zero_points, const mxp_array *x,
                                const float *col_scale, mxp_dtype qtype, bool symmetric)
{
    const char *what = "mxp_quantize_rows";
    quant_type t = { 0 };
    mxp_status st = check_rows(codes, scales, zero_points, x, qtype, symmetric, what, &t);
    if (st != MXP_OK)
        return st;
    const size_t rows = (size_t)x->shape[0], cols = (size_t)x->shape[1];
    if (rows == 0)
        return MXP_OK;
    const double size = (double)rows * (double)cols;
    int nt = mxp_get_num_threads();
    if (size < (double)nt * ROWS_MIN_PER_THREAD)
        nt = (int)(size / ROWS_MIN_PER_THREAD);
    nt = nt < 1 ? 1 : (size_t)nt > rows ? (int)rows : nt;
    float *buf = NULL;
    if (cols && (x->dtype != MXP_F32 || col_scale)) {
        buf = mxp_malloc((size_t)nt * cols * sizeof *buf);
        if (!buf)
            return mxp_error(MXP_ERR_NO_MEMORY, "%s: out of memory for %d rows of %zu", what, nt, cols);
    }
    rows_job J = { (const unsigned char *)x->data, x->dtype, mxp_dtype_itemsize(x->dtype), rows, cols, col_scale, mxp_array_data(codes),
                   scales, zero_points, buf, &t, symmetric, mxp_f32_minmax_kernel(), mxp_f32_quant_kernel() };
    mxp_parallel(nt, rows_share, &J);
    mxp_free(buf);
    return MXP_OK;
}

static mxp_status quantize_rows_entry(mxp_array *codes, float *scales, int32_t *zero_points, const mxp_array *x,
                                      const float *col_scale, mxp_dtype qtype, bool symmetric)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = quantize_rows(codes, scales, zero_points, x, col_scale, qtype, symmetric);
    mxp_fpenv_leave(env);
    return st;
}

mxp_status mxp_quantize_rows(mxp_array *codes, float *scales, int32_t *zero_points, const mxp_array *x,
                             const float *col_scale, mxp_dtype qtype, bool symmetric)
{
    MXP_PROF_RETURN_AFTER("quantize", quantize_rows_entry(codes, scales, zero_points, x, col_scale, qtype, symmetric),
                          mxp_prof_array_bytes(x), mxp_prof_array_bytes(x) + mxp_prof_array_bytes(codes),
                          mxp_prof_size(x));
}
