/* What the neural-network operations share: row walks over the thread
 * pool, widening loads and rounding stores, argument checks, outputs. */
#include <math.h>
#include <string.h>
#if MXP_HAVE_X86_KERNELS
#include <xmmintrin.h>

#include "kernels/stream-loop.h"
#endif

#include "convert/convert-config.h"
#include "core/cpu-internal.h"
#include "core/error.h"
#include "core/lowp.h"
#include "core/threads-internal.h"
#include "kernels/bf16-round.h"
#include "kernels/sum8.h"
#include "mxp/alloc.h"
#include "nn/nn-internal.h"

void nn_rows_init(nn_rows *r, int nd, const mxp_array *const *arrs, int narr)
{
    memset(r, 0, sizeof *r);
    r->nd = nd;
    r->narr = narr;
    r->nrows = 1;
    for (int k = 0; k < narr; k++)
        if (arrs[k]) {
            r->base[k] = arrs[k]->data;
            for (int i = 0; i < nd; i++) {
                r->shape[i] = arrs[k]->shape[i];
                r->strides[k][i] = arrs[k]->strides[i];
            }
        }
    for (int i = 0; i < nd; i++)
        r->nrows *= r->shape[i];
}

void nn_row_ptrs(const nn_rows *r, int64_t i, char **p)
{
    for (int k = 0; k < r->narr; k++)
        p[k] = r->base[k];
    for (int ax = r->nd - 1; ax >= 0 && i > 0; ax--) {
        const int64_t j = i % r->shape[ax];
        i /= r->shape[ax];
        for (int k = 0; k < r->narr; k++)
            if (p[k])
                p[k] += j * r->strides[k][ax];
    }
}

typedef struct run_job {
    const nn_rows *r;
    size_t scratch;
    double *buf;
    nn_row_fn *fn;        /* a row at a time, or */
    nn_block_fn *block_fn; /* blocks of up to block rows */
    int block;
    const void *ctx;
} run_job;

static void run_share(void *arg, int t, int nthreads)
{
    const run_job *j = arg;
    size_t lo, hi;
    mxp_share_range((size_t)j->r->nrows, 1, t, nthreads, &lo, &hi);
    double *scratch = j->buf + (size_t)t * j->scratch;
    char *p[NN_MAX_BLOCK][NN_MAXARR];
    for (size_t i = lo; i < hi;) {
        const size_t count = j->block_fn ? (hi - i < (size_t)j->block ? hi - i : (size_t)j->block) : 1;
        for (size_t k = 0; k < count; k++)
            nn_row_ptrs(j->r, (int64_t)(i + k), p[k]);
        if (j->block_fn)
            j->block_fn(j->ctx, p, (int64_t)count, scratch, (int64_t)i);
        else
            j->fn(j->ctx, p[0], scratch, (int64_t)i);
        i += count;
    }
#if MXP_HAVE_X86_KERNELS
    _mm_sfence(); /* rows written by streaming stores (take, float32 norms) in memory before the share ends */
#endif
}

bool nn_streams(const mxp_array *out, uint64_t swept)
{
#if MXP_HAVE_X86_KERNELS
    return mxp_streams(2 * (uint64_t)mxp_array_size(out) * mxp_array_itemsize(out) + swept);
#else
    (void)out, (void)swept;
    return false;
#endif
}

enum { NN_PER_SHARE = 16384 }; /* elements a thread should get at least */

static mxp_status run_rows(const nn_rows *r, int64_t elems_per_row, size_t scratch_doubles, bool parallel,
                           run_job j)
{
    if (r->nrows == 0)
        return MXP_OK;
    const double work = (double)r->nrows * (double)(elems_per_row > 0 ? elems_per_row : 1);
    int nthreads = parallel ? mxp_share_threads(work > 1e18 ? (size_t)1e18 : (size_t)work, NN_PER_SHARE) : 1;
    if ((int64_t)nthreads > r->nrows)
        nthreads = (int)r->nrows;
    const size_t per = scratch_doubles ? scratch_doubles : 1;
    if (per > SIZE_MAX / sizeof(double) / (size_t)nthreads)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "scratch of %zu doubles per thread overflows", per);
    double *buf = mxp_malloc(per * (size_t)nthreads * sizeof(double));
    if (!buf)
        return mxp_error(MXP_ERR_NO_MEMORY, "no memory for %zu doubles of scratch", per * (size_t)nthreads);
    j.r = r, j.scratch = per, j.buf = buf;
    if (nthreads > 1)
        mxp_parallel(nthreads, run_share, &j);
    else
        run_share(&j, 0, 1);
    mxp_free(buf);
    return MXP_OK;
}

mxp_status nn_run_rows(const nn_rows *r, int64_t elems_per_row, size_t scratch_doubles, bool parallel,
                       nn_row_fn *fn, const void *ctx)
{
    const run_job j = { .fn = fn, .ctx = ctx };
    return run_rows(r, elems_per_row, scratch_doubles, parallel, j);
}

mxp_status nn_run_row_blocks(const nn_rows *r, int64_t elems_per_row, size_t scratch_doubles, bool parallel,
                             int block, nn_block_fn *fn, const void *ctx)
{
    const run_job j = { .block_fn = fn, .block = block < 1 ? 1 : block > NN_MAX_BLOCK ? NN_MAX_BLOCK : block,
                        .ctx = ctx };
    return run_rows(r, elems_per_row, scratch_doubles, parallel, j);
}

enum { NN_CHUNK = 256 };

enum { SUM, DOT, SUMSQ };

/* What element j adds to each sum (kind a constant where it is inlined). */
static inline double term(int kind, const double *x, const double *y, double c, int64_t j)
{
    return kind == SUM ? x[j] : kind == DOT ? x[j] * y[j] : (x[j] - c) * (x[j] - c);
}

/* mxp_sum8's order (kernels/sum8.h). */
static inline double sum8(int kind, const double *x, const double *y, double c, int64_t n)
{
    double s[8] = { 0, 0, 0, 0, 0, 0, 0, 0 }, t = 0;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] += term(kind, x, y, c, i + k);
    for (; i < n; i++)
        t += term(kind, x, y, c, i);
    return mxp_sum8_fold(s, t);
}

double nn_sum(const double *x, int64_t n)
{
    return sum8(SUM, x, NULL, 0, n);
}

double nn_dot(const double *x, const double *y, int64_t n)
{
    return sum8(DOT, x, y, 0, n);
}

double nn_sumsq(const double *x, int64_t n, double c)
{
    return sum8(SUMSQ, x, NULL, c, n);
}

/* The conversion kernel for dst <- src at this ISA level, nearest even
 * (the bits of the plain C casts below: the conversion tests hold every
 * kernel to the reference), or NULL. */
static const mxp_cvt_kernel *nn_cvt(mxp_dtype dst, mxp_dtype src)
{
    return mxp_cvt_find(dst, src, MXP_ROUND_NEAREST_EVEN, mxp_isa_current());
}

static const mxp_cvt_params nn_nearest = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL };

void nn_load(double *dst, const char *p, mxp_dtype dt, int64_t step, int64_t n)
{
    /* float32 and bfloat16: exact widenings in plain C, a chunk at a time
     * through a local buffer (any alignment; the compiler's vector loop) */
    if (dt == MXP_F32 || dt == MXP_BF16) {
        const size_t size = dt == MXP_F32 ? 4 : 2;
        const mxp_cvt_kernel *kf = dt == MXP_F32 ? nn_cvt(MXP_F64, MXP_F32) : NULL;
        union { float f[NN_CHUNK]; uint16_t h[NN_CHUNK]; } buf;
        for (int64_t k = 0; k < n; k += NN_CHUNK) {
            const int64_t m = n - k < NN_CHUNK ? n - k : NN_CHUNK;
            if (kf && step == 4) {
                kf->fn(dst + k, p + k * step, (size_t)m, &nn_nearest);
                continue;
            }
            if (step == (int64_t)size)
                memcpy(&buf, p + k * step, (size_t)m * size);
            else
                for (int64_t i = 0; i < m; i++)
                    memcpy((char *)&buf + i * (int64_t)size, p + (k + i) * step, size);
            if (kf)
                kf->fn(dst + k, &buf, (size_t)m, &nn_nearest);
            else if (dt == MXP_F32)
                for (int64_t i = 0; i < m; i++)
                    dst[k + i] = buf.f[i];
            else
                for (int64_t i = 0; i < m; i++)
                    dst[k + i] = mxp_bf16_to_f64_exact(buf.h[i]);
        }
        return;
    }
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    if (t->kind != MXP_KIND_FLOAT || t->bits > 32) {
        /* float64 and integers: one call */
        mxp_convert_strided(dst, MXP_F64, 8, p, dt, (ptrdiff_t)step, (size_t)n, NULL);
        return;
    }
    /* narrower floats reach float64 through float32: both steps exact, and
     * float32 has SIMD converters from each of them */
    float f[NN_CHUNK];
    for (int64_t k = 0; k < n; k += NN_CHUNK) {
        const int64_t m = n - k < NN_CHUNK ? n - k : NN_CHUNK;
        mxp_convert_strided(f, MXP_F32, 4, p + k * step, dt, (ptrdiff_t)step, (size_t)m, NULL);
        for (int64_t i = 0; i < m; i++)
            dst[k + i] = f[i];
    }
}

/* float64 -> float32 rounds to nearest even under the library's
 * environment (core/fpenv.h), as mxp_convert does; bfloat16:
 * mxp_f64_to_bf16_rne (kernels/bf16-round.h);
 * float16: rounded once in float64 to its precision and range
 * (core/lowp.h), then narrowed exactly.  Anything else: mxp_convert. */
void nn_store(char *p, mxp_dtype dt, int64_t step, const double *src, int64_t n)
{
    if (dt == MXP_F32 || dt == MXP_BF16) { /* a chunk at a time through a local buffer, as nn_load */
        const size_t size = dt == MXP_F32 ? 4 : 2;
        /* the SIMD rounding where the level has one (float64 -> bfloat16
         * element by element was most of a layer norm into bfloat16) */
        const mxp_cvt_kernel *kr = nn_cvt(dt, MXP_F64);
        union { float f[NN_CHUNK]; uint16_t h[NN_CHUNK]; } buf;
        for (int64_t k = 0; k < n; k += NN_CHUNK) {
            const int64_t m = n - k < NN_CHUNK ? n - k : NN_CHUNK;
            if (kr && step == (int64_t)size) {
                kr->fn(p + k * step, src + k, (size_t)m, &nn_nearest);
                continue;
            }
            if (kr)
                kr->fn(&buf, src + k, (size_t)m, &nn_nearest);
            else if (dt == MXP_F32)
                for (int64_t i = 0; i < m; i++)
                    buf.f[i] = (float)src[k + i];
            else
                for (int64_t i = 0; i < m; i++)
                    buf.h[i] = mxp_f64_to_bf16_rne(src[k + i]);
            if (step == (int64_t)size)
                memcpy(p + k * step, &buf, (size_t)m * size);
            else
                for (int64_t i = 0; i < m; i++)
                    memcpy(p + (k + i) * step, (const char *)&buf + i * (int64_t)size, size);
        }
        return;
    }
    if (dt != MXP_F16) {
        mxp_convert_strided(p, dt, (ptrdiff_t)step, src, MXP_F64, 8, (size_t)n, NULL);
        return;
    }
    const mxp_lowp fmt = mxp_lowp_for(dt);
    float f[NN_CHUNK];
    for (int64_t k = 0; k < n; k += NN_CHUNK) {
        const int64_t m = n - k < NN_CHUNK ? n - k : NN_CHUNK;
        for (int64_t i = 0; i < m; i++)
            f[i] = (float)mxp_lowp_round(&fmt, src[k + i]); /* exact: the value is one of float16's */
        mxp_convert_strided(p + k * step, dt, (ptrdiff_t)step, f, MXP_F32, 4, (size_t)m, NULL);
    }
}

mxp_dtype nn_out_dtype(mxp_dtype requested, mxp_dtype in)
{
    if (requested)
        return requested;
    const mxp_dtype_traits *t = mxp_dtype_get_traits(in);
    return t && t->kind == MXP_KIND_FLOAT ? in : MXP_F64;
}

mxp_status nn_check_float(const char *fn, const char *what, mxp_dtype dt)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    if (!t)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %s dtype %d is not a valid mxp_dtype", fn, what, (int)dt);
    if (t->kind != MXP_KIND_FLOAT)
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: %s dtype %s is not a float type", fn, what, t->name);
    return MXP_OK;
}

mxp_status nn_check_input(const char *fn, const char *what, const mxp_array *a)
{
    if (!a)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    if (!mxp_dtype_is_valid(a->dtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %s has dtype %d, not a valid mxp_dtype", fn, what,
                         (int)a->dtype);
    return MXP_OK;
}

mxp_status nn_check_eps(const char *fn, double eps)
{
    if (!(eps >= 0) || isinf(eps))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: eps %g is not finite and >= 0", fn, eps);
    return MXP_OK;
}

static bool same_shape(const mxp_array *a, int ndim, const int64_t *shape)
{
    bool same = a->ndim == ndim;
    for (int i = 0; same && i < ndim; i++)
        same = a->shape[i] == shape[i];
    return same;
}

mxp_status nn_check_out_shape(const char *fn, const mxp_array *out, int ndim, const int64_t *shape)
{
    if (same_shape(out, ndim, shape))
        return MXP_OK;
    char want[512], got[512];
    mxp_format_shape(want, sizeof want, ndim, shape);
    mxp_format_shape(got, sizeof got, out->ndim, out->shape);
    return mxp_error(MXP_ERR_SHAPE, "%s: out has shape %s, the result %s", fn, got, want);
}

mxp_status nn_check_same_shape(const char *fn, const char *an, const mxp_array *a, const char *bn,
                               const mxp_array *b)
{
    if (same_shape(a, b->ndim, b->shape))
        return MXP_OK;
    char sa[512], sb[512];
    mxp_format_shape(sa, sizeof sa, a->ndim, a->shape);
    mxp_format_shape(sb, sizeof sb, b->ndim, b->shape);
    return mxp_error(MXP_ERR_SHAPE, "%s: %s has shape %s and %s %s: they must be the same", fn, an, sa, bn, sb);
}

static bool same_elements(const mxp_array *a, const mxp_array *b)
{
    if (a->data != b->data || a->ndim != b->ndim || a->dtype != b->dtype)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i] || (a->shape[i] > 1 && a->strides[i] != b->strides[i]))
            return false;
    return true;
}

static bool collapses(const mxp_array *a, int nlast)
{
    if (nlast <= 1)
        return true;
    mxp_array *v = NULL;
    int64_t shape[MXP_MAXDIMS];
    const int keep = a->ndim - nlast;
    memcpy(shape, a->shape, (size_t)keep * sizeof shape[0]);
    shape[keep] = -1;
    int64_t inner = 1;
    for (int i = keep; i < a->ndim; i++)
        inner *= a->shape[i];
    shape[keep] = inner;
    const bool ok = mxp_array_reshape(&v, a, keep + 1, shape) == MXP_OK;
    mxp_array_free(v);
    mxp_clear_error();
    return ok;
}

mxp_status nn_out_begin(const char *fn, mxp_array *out, const mxp_array *const *in, int n, int ncollapse,
                        mxp_array **work)
{
    *work = NULL;
    if (!(out->flags & MXP_ARRAY_WRITEABLE))
        return mxp_error(MXP_ERR_READONLY, "%s: out is read-only", fn);
    bool temp = !collapses(out, ncollapse);
    for (int k = 0; k < n && !temp; k++)
        temp = in[k] && mxp_arrays_may_overlap(out, in[k]) && !same_elements(out, in[k]);
    if (!temp) {
        *work = out;
        return MXP_OK;
    }
    return mxp_array_new_owner(work, out->dtype, out->ndim, out->shape);
}

mxp_status nn_out_end(mxp_array *out, mxp_array *work, mxp_status st)
{
    if (work && work != out) {
        if (st == MXP_OK)
            st = mxp_array_copyto(out, work, MXP_CASTING_NO, NULL);
        mxp_array_free(work);
    }
    return st;
}

mxp_status nn_new_like(const char *fn, mxp_array **out, const mxp_array *x, mxp_dtype dt, nn_into_fn *into,
                       const void *args)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    mxp_status st = nn_check_input(fn, "x", x);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", dt = nn_out_dtype(dt, x->dtype));
    mxp_array *r = NULL;
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, dt, x->ndim, x->shape);
    if (st == MXP_OK)
        st = into(r, args);
    return nn_give_out(out, r, st);
}

mxp_status nn_give_out(mxp_array **out, mxp_array *made, mxp_status st)
{
    if (st != MXP_OK) {
        mxp_array_free(made);
        made = NULL;
    }
    *out = made;
    return st;
}

mxp_status nn_axis_last(mxp_array **v, const mxp_array *a, int axis)
{
    int perm[MXP_MAXDIMS];
    for (int i = 0, k = 0; i < a->ndim; i++)
        if (i != axis)
            perm[k++] = i;
    perm[a->ndim - 1] = axis;
    return mxp_array_transpose(v, a, perm);
}

mxp_status nn_collapse_last(mxp_array **v, const mxp_array *a, int nlast)
{
    int64_t shape[MXP_MAXDIMS];
    const int keep = a->ndim - nlast;
    int64_t inner = 1;
    for (int i = 0; i < keep; i++)
        shape[i] = a->shape[i];
    for (int i = keep; i < a->ndim; i++)
        inner *= a->shape[i];
    shape[keep] = inner;
    if (collapses(a, nlast))
        return mxp_array_reshape(v, a, keep + 1, shape);
    return mxp_array_reshape_copy(v, a, keep + 1, shape);
}

bool nn_dense_rows(const mxp_array *v, mxp_dtype dt)
{
    const int64_t size = (int64_t)mxp_dtype_itemsize(dt);
    bool ok = v->dtype == dt && nn_step(v) == size && !((uintptr_t)v->data % (uintptr_t)size);
    for (int i = 0; ok && i < v->ndim; i++)
        ok = !(v->strides[i] % size);
    return ok;
}

void nn_gather16(uint16_t *dst, const char *p, int64_t step, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        memcpy(&dst[i], p + i * step, sizeof dst[i]);
}

void nn_scatter16(char *p, int64_t step, const uint16_t *src, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        memcpy(p + i * step, &src[i], sizeof src[i]);
}
