/* The fast paths of affine quantization: C-contiguous input of a dtype that
 * float32 holds exactly, nearest-even rounding, and runs of elements that
 * share one (scale, zero point) — per tensor, per channel on a leading axis,
 * groups along the last axis — or a pair per element of each row (per
 * channel on the last axis).  Float32 kernels (src/kernels/f32-quant/,
 * f32-minmax/) as their lists give them for the ISA level
 * (quant-config.c); other dtypes are widened in blocks.  Large arrays are
 * split across threads (each element's code depends on it alone, so the
 * bytes are the same for any thread count). */
#include <math.h>

#include "quant/quant-internal.h"
#include "array/array-internal.h"
#include "core/threads-internal.h"
#include "mxp/convert.h"
#include "mxp/threads.h"

/* The element type's alignment: the kernels read float32 (and the
 * conversions their own types) through typed loads. */
static bool aligned(const mxp_array *x)
{
    return (uintptr_t)x->data % mxp_dtype_itemsize(x->dtype) == 0;
}

/* Dtypes whose every value float32 holds exactly. */
static bool widens_exactly(mxp_dtype dt)
{
    switch (dt) {
    case MXP_BOOL: case MXP_S8: case MXP_U8: case MXP_S16: case MXP_U16:
    case MXP_F16: case MXP_BF16: case MXP_F32: case MXP_E4M3: case MXP_E5M2:
        return true;
    default:
        return false;
    }
}

enum { BLOCK = 2048, MIN_PER_THREAD = 1 << 18 };

typedef struct quant_job {
    const float *scales;
    const int32_t *zps;
    int64_t pairs; /* run r uses pair r % pairs */
    const unsigned char *x;
    mxp_dtype dtype;
    size_t itemsize;
    uint8_t *dst;
    int64_t size, run_len;
    mxp_f32_quant_ukernel *fn;
    int32_t qmin, qmax;
} quant_job;

/* Elements [e0, e1) of the job, split at run and block boundaries. */
static void quant_range(const quant_job *J, int64_t e0, int64_t e1)
{
    float buf[BLOCK];
    while (e0 < e1) {
        const int64_t run = e0 / J->run_len, run_end = (run + 1) * J->run_len;
        int64_t m = (run_end < e1 ? run_end : e1) - e0;
        m = m < BLOCK ? m : BLOCK;
        const float *src = (const float *)(J->x + (size_t)e0 * J->itemsize);
        if (J->dtype != MXP_F32) {
            mxp_convert(buf, MXP_F32, src, J->dtype, (size_t)m, NULL);
            src = buf;
        }
        const int64_t k = run % J->pairs;
        J->fn(J->dst + e0, src, (size_t)m, J->scales[k], J->zps[k], J->qmin, J->qmax);
        e0 += m;
    }
}

static void quant_thread(void *ctx, int t, int nt)
{
    const quant_job *J = ctx;
    const int64_t per = (J->size + nt - 1) / nt;
    const int64_t e0 = per * t, e1 = e0 + per < J->size ? e0 + per : J->size;
    if (e0 < e1)
        quant_range(J, e0, e1);
}

static int threads_for(int64_t size)
{
    const int64_t most = size / MIN_PER_THREAD;
    const int nt = mxp_get_num_threads();
    return most < 1 ? 1 : most < nt ? (int)most : nt;
}

bool mxp_quant_fast_runs(const mxp_array *x, const quant_layout *L, int64_t *run_len)
{
    if (!(x->flags & MXP_ARRAY_C_CONTIGUOUS) || !widens_exactly(x->dtype) || !aligned(x))
        return false;
    if (L->axis < 0)
        *run_len = L->size; /* per tensor: one run */
    else if (L->group == 0 && L->inner >= 16)
        *run_len = L->inner; /* per channel: pair a for inner consecutive elements */
    else if (L->group > 0 && L->inner == 1 && L->group >= 16)
        *run_len = L->group; /* groups along the last axis */
    else
        return false;
    return true;
}

void mxp_quant_fast(uint8_t *dst, const mxp_array *x, const quant_layout *L, int64_t run_len,
                    const mxp_qparams *qp, int32_t qmin, int32_t qmax)
{
    quant_job J = { .scales = qp->scales, .zps = qp->zero_points,
                    .pairs = L->axis < 0 ? 1 : L->group == 0 ? L->len : L->count, .x = (const unsigned char *)x->data, .dtype = x->dtype, .itemsize = mxp_dtype_itemsize(x->dtype),
                    .dst = dst, .size = L->size, .run_len = run_len, .fn = mxp_f32_quant_kernel(),
                    .qmin = qmin, .qmax = qmax };
    mxp_parallel(threads_for(L->size), quant_thread, &J);
}

bool mxp_quant_fast_minmax(const mxp_array *x, double *lo, double *hi)
{
    if (!(x->flags & MXP_ARRAY_C_CONTIGUOUS) || !widens_exactly(x->dtype) || !aligned(x))
        return false;
    mxp_f32_minmax_ukernel *const fn = mxp_f32_minmax_kernel();
    const int64_t size = mxp_array_size(x);
    const size_t is = mxp_dtype_itemsize(x->dtype);
    float a = INFINITY, b = -INFINITY, buf[BLOCK];
    for (int64_t e = 0; e < size; e += BLOCK) {
        const size_t m = (size_t)(size - e < BLOCK ? size - e : BLOCK);
        const float *src = (const float *)((const unsigned char *)x->data + (size_t)e * is);
        if (x->dtype != MXP_F32) {
            mxp_convert(buf, MXP_F32, src, x->dtype, m, NULL);
            src = buf;
        }
        fn(src, m, &a, &b);
    }
    *lo = a;
    *hi = b;
    return true;
}

/* ---- per channel on the last axis: one pair per element of a row ---------- */

typedef struct cols_job {
    const unsigned char *x;
    mxp_dtype dtype;
    size_t itemsize;
    uint8_t *dst;
    int64_t rows, len;
    const float *rinv, *scales;
    const int32_t *zps;
    mxp_f32_quant_cols_ukernel *fn;
    int32_t qmin, qmax;
} cols_job;

static void cols_thread(void *ctx, int t, int nt)
{
    const cols_job *J = ctx;
    float buf[BLOCK];
    size_t r0, r1;
    mxp_share_range((size_t)J->rows, 1, t, nt, &r0, &r1);
    for (int64_t r = (int64_t)r0; r < (int64_t)r1; r++)
        for (int64_t c = 0; c < J->len; c += BLOCK) {
            const int64_t m = J->len - c < BLOCK ? J->len - c : BLOCK, e = r * J->len + c;
            const float *src = (const float *)(const void *)(J->x + (size_t)e * J->itemsize);
            if (J->dtype != MXP_F32) {
                mxp_convert(buf, MXP_F32, src, J->dtype, (size_t)m, NULL);
                src = buf;
            }
            J->fn(J->dst + e, src, (size_t)m, J->rinv + c, J->scales + c, J->zps + c, J->qmin, J->qmax);
        }
}

bool mxp_quant_fast_cols(uint8_t *dst, const mxp_array *x, const quant_layout *L, const mxp_qparams *qp,
                         int32_t qmin, int32_t qmax)
{
    if (!(x->flags & MXP_ARRAY_C_CONTIGUOUS) || !widens_exactly(x->dtype) || !aligned(x) ||
        L->axis < 0 || L->inner != 1 ||
        L->group != 0 || L->len < 16)
        return false;
    for (int64_t k = 0; k < L->len; k++)
        if (!(qp->scales[k] >= MXP_QUANT_SCALE_MIN && qp->scales[k] <= MXP_QUANT_SCALE_MAX))
            return false;
    float *rinv = mxp_malloc((size_t)L->len * sizeof *rinv);
    if (!rinv)
        return false; /* the general path still works */
    for (int64_t k = 0; k < L->len; k++)
        rinv[k] = 1.0f / qp->scales[k];
    cols_job J = { (const unsigned char *)x->data, x->dtype, mxp_dtype_itemsize(x->dtype), dst, L->outer, L->len,
                   rinv, qp->scales, qp->zero_points,
                   mxp_f32_quant_cols_kernel(), qmin, qmax };
    const int64_t most = L->size / MIN_PER_THREAD;
    int nt = threads_for(L->size);
    nt = most < 1 ? 1 : (int64_t)nt > L->outer ? (int)L->outer : nt;
    mxp_parallel(nt, cols_thread, &J);
    mxp_free(rinv);
    return true;
}

bool mxp_quant_fast_minmax_cols(const mxp_array *x, const quant_layout *L, double *mins, double *maxs)
{
    if (!(x->flags & MXP_ARRAY_C_CONTIGUOUS) || !widens_exactly(x->dtype) || !aligned(x) ||
        L->axis < 0 || L->inner != 1 ||
        L->group != 0)
        return false;
    float *lo = mxp_malloc((size_t)L->len * 2 * sizeof *lo);
    if (!lo)
        return false;
    float *hi = lo + L->len, buf[BLOCK];
    for (int64_t k = 0; k < L->len; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    mxp_f32_minmax_cols_ukernel *const fn = mxp_f32_minmax_cols_kernel();
    const size_t is = mxp_dtype_itemsize(x->dtype);
    for (int64_t r = 0; r < L->outer; r++)
        for (int64_t c = 0; c < L->len; c += BLOCK) {
            const int64_t m = L->len - c < BLOCK ? L->len - c : BLOCK, e = r * L->len + c;
            const float *src = (const float *)(const void *)((const unsigned char *)x->data + (size_t)e * is);
            if (x->dtype != MXP_F32) {
                mxp_convert(buf, MXP_F32, src, x->dtype, (size_t)m, NULL);
                src = buf;
            }
            fn(src, (size_t)m, lo + c, hi + c);
        }
    for (int64_t k = 0; k < L->len; k++)
        mins[k] = lo[k], maxs[k] = hi[k];
    mxp_free(lo);
    return true;
}

/* Per-channel ranges along an axis that is not the last (each channel a
 * contiguous run of inner elements per outer index): the one-range kernel
 * on every run (element by element through float64 it was 20x NumPy's
 * time for a [1536, 384] calibrate(axis=0)). */
bool mxp_quant_fast_minmax_blocks(const mxp_array *x, const quant_layout *L, double *mins, double *maxs)
{
    if (!(x->flags & MXP_ARRAY_C_CONTIGUOUS) || !widens_exactly(x->dtype) || !aligned(x) ||
        L->axis < 0 || L->inner < 8 ||
        L->group != 0)
        return false;
    mxp_f32_minmax_ukernel *const fn = mxp_f32_minmax_kernel();
    const size_t is = mxp_dtype_itemsize(x->dtype);
    float buf[BLOCK];
    for (int64_t a = 0; a < L->len; a++) {
        float lo = INFINITY, hi = -INFINITY;
        for (int64_t o = 0; o < L->outer; o++)
            for (int64_t i = 0; i < L->inner; i += BLOCK) {
                const int64_t m = L->inner - i < BLOCK ? L->inner - i : BLOCK, e = (o * L->len + a) * L->inner + i;
                const float *src = (const float *)(const void *)((const unsigned char *)x->data + (size_t)e * is);
                if (x->dtype != MXP_F32) {
                    mxp_convert(buf, MXP_F32, src, x->dtype, (size_t)m, NULL);
                    src = buf;
                }
                fn(src, (size_t)m, &lo, &hi);
            }
        mins[a] = lo;
        maxs[a] = hi;
    }
    return true;
}

bool mxp_quant_fast_try(uint8_t *dst, const mxp_array *x, const quant_layout *L, const mxp_qparams *qp,
                        int32_t qmin, int32_t qmax)
{
    int64_t run_len = 0;
    if (mxp_quant_fast_runs(x, L, &run_len)) {
        mxp_quant_fast(dst, x, L, run_len, qp, qmin, qmax);
        return true;
    }
    return mxp_quant_fast_cols(dst, x, L, qp, qmin, qmax);
}
