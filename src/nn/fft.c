/* FFT over any axes of mxp arrays through KISS FFT (nn/kissfft.h): each
 * pass transforms every line along one axis, the lines split over mxp's
 * threads, each thread with plans and buffers of its own; a line is
 * gathered and widened exactly into the compute type (float32 or
 * float64), cut or zero-padded, transformed, scaled, and rounded once into
 * the output (or kept in the compute type between two passes). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "array/array-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/profile-internal.h"
#include "core/threads-internal.h"
#include "nn/kissfft.h"

enum { C2C, R2C, C2R };

/* One pass: lines of src along axis, into dst along the same axis. */
typedef struct fft_pass {
    const mxp_array *src; /* complex (trailing 2) unless kind == R2C or real_src */
    mxp_array *dst;       /* complex unless kind == C2R */
    int axis;             /* of the logical arrays (without the trailing 2) */
    int kind;
    bool real_src;        /* C2C of a real array */
    bool inverse;
    bool f64;             /* the compute type */
    int64_t n;            /* transform length */
    double scale;
    int64_t lines;
    int lnd;              /* logical ndim */
    int64_t src_len, dst_len;
    atomic_int failed;
} fft_pass;

static int64_t complex_len(int64_t n) { return n / 2 + 1; }

/* The byte offsets of line l in src and dst: l in C order over the other
 * axes of the logical shape. */
static void line_offsets(const fft_pass *p, int64_t l, ptrdiff_t *so, ptrdiff_t *dof)
{
    *so = 0, *dof = 0;
    for (int d = p->lnd - 1; d >= 0; d--) {
        if (d == p->axis)
            continue;
        const int64_t i = l % p->src->shape[d];
        l /= p->src->shape[d];
        *so += (ptrdiff_t)(i * p->src->strides[d]);
        *dof += (ptrdiff_t)(i * p->dst->strides[d]);
    }
}

/* len elements (complex: re and im) from a strided line into buf (ct),
 * zero beyond len up to n. */
static void gather(const fft_pass *p, const char *line, bool complex_src, int64_t len, void *buf)
{
    const mxp_dtype ct = p->f64 ? MXP_F64 : MXP_F32;
    const size_t cs = mxp_dtype_itemsize(ct);
    const ptrdiff_t step = (ptrdiff_t)p->src->strides[p->axis];
    const int64_t cplx_n = p->kind == C2R ? complex_len(p->n) : p->n;
    const int64_t take = len < cplx_n ? len : cplx_n;
    const bool out_complex = p->kind != R2C;
    const size_t width = out_complex ? 2 : 1;
    memset(buf, 0, (size_t)cplx_n * width * cs);
    if (!complex_src) {
        mxp_convert_strided(buf, ct, (ptrdiff_t)(width * cs), line, p->src->dtype, step, (size_t)take, NULL);
        return;
    }
    const ptrdiff_t im = (ptrdiff_t)p->src->strides[p->lnd];
    if (p->src->dtype == ct && step == (ptrdiff_t)(2 * cs) && im == (ptrdiff_t)cs) { /* interleaved: a copy */
        memcpy(buf, line, (size_t)take * 2 * cs);
        return;
    }
    mxp_convert_strided(buf, ct, (ptrdiff_t)(2 * cs), line, p->src->dtype, step, (size_t)take, NULL);
    mxp_convert_strided((char *)buf + cs, ct, (ptrdiff_t)(2 * cs), line + im, p->src->dtype, step, (size_t)take,
                        NULL);
}

static void scatter(const fft_pass *p, char *line, const void *buf, int64_t len)
{
    const mxp_dtype ct = p->f64 ? MXP_F64 : MXP_F32;
    const size_t cs = mxp_dtype_itemsize(ct);
    const ptrdiff_t step = (ptrdiff_t)p->dst->strides[p->axis];
    if (p->kind == C2R) {
        mxp_convert_strided(line, p->dst->dtype, step, buf, ct, (ptrdiff_t)cs, (size_t)len, NULL);
        return;
    }
    const ptrdiff_t im = (ptrdiff_t)p->dst->strides[p->lnd];
    if (p->dst->dtype == ct && step == (ptrdiff_t)(2 * cs) && im == (ptrdiff_t)cs) { /* interleaved: a copy */
        memcpy(line, buf, (size_t)len * 2 * cs);
        return;
    }
    mxp_convert_strided(line, p->dst->dtype, step, buf, ct, (ptrdiff_t)(2 * cs), (size_t)len, NULL);
    mxp_convert_strided(line + im, p->dst->dtype, step, (const char *)buf + cs, ct, (ptrdiff_t)(2 * cs), (size_t)len,
                        NULL);
}

static void scale_buf(const fft_pass *p, void *buf, int64_t count)
{
    if (p->scale == 1)
        return;
    if (p->f64) {
        double *b = buf;
        for (int64_t i = 0; i < count; i++)
            b[i] *= p->scale;
    } else {
        float *b = buf;
        const float s = (float)p->scale;
        for (int64_t i = 0; i < count; i++)
            b[i] *= s;
    }
}

/* The plans of one thread: c2c, or the real plan of an even n (odd n
 * goes through c2c). */
typedef struct plans {
    void *c2c, *real;
} plans;

static bool make_plans(const fft_pass *p, plans *pl)
{
    const int n = (int)p->n;
    const bool real = p->kind != C2C && n % 2 == 0;
    const int inverse = p->kind == C2R || (p->kind == C2C && p->inverse);
    pl->c2c = pl->real = NULL;
    if (real)
        pl->real = p->f64 ? mxp_kissfftr_plan_f64(n, inverse) : mxp_kissfftr_plan_f32(n, inverse);
    else
        pl->c2c = p->f64 ? mxp_kissfft_plan_f64(n, inverse) : mxp_kissfft_plan_f32(n, inverse);
    return pl->c2c || pl->real;
}

/* in (gathered) -> out: the transform of one line. */
static void transform(const fft_pass *p, const plans *pl, void *in, void *out)
{
    const int64_t n = p->n, h = complex_len(n);
    if (pl->real) {
        if (p->kind == R2C)
            p->f64 ? mxp_kissfftr_f64(pl->real, in, out) : mxp_kissfftr_f32(pl->real, in, out);
        else
            p->f64 ? mxp_kissfftri_f64(pl->real, in, out) : mxp_kissfftri_f32(pl->real, in, out);
        return;
    }
    if (p->kind == R2C) { /* odd n: widen the reals to complex in place (from the end) */
        if (p->f64)
            for (int64_t i = n - 1; i >= 0; i--)
                ((double *)in)[2 * i] = ((double *)in)[i], ((double *)in)[2 * i + 1] = 0;
        else
            for (int64_t i = n - 1; i >= 0; i--)
                ((float *)in)[2 * i] = ((float *)in)[i], ((float *)in)[2 * i + 1] = 0;
    }
    if (p->kind == C2R) { /* odd n: the Hermitian rest of the spectrum: X[n - k] = conj X[k] */
        for (int64_t k = h; k < n; k++) {
            if (p->f64)
                ((double *)in)[2 * k] = ((double *)in)[2 * (n - k)], ((double *)in)[2 * k + 1] = -((double *)in)[2 * (n - k) + 1];
            else
                ((float *)in)[2 * k] = ((float *)in)[2 * (n - k)], ((float *)in)[2 * k + 1] = -((float *)in)[2 * (n - k) + 1];
        }
    }
    p->f64 ? mxp_kissfft_f64(pl->c2c, in, out) : mxp_kissfft_f32(pl->c2c, in, out);
    if (p->kind == C2R) { /* the real parts, packed */
        if (p->f64)
            for (int64_t i = 0; i < n; i++)
                ((double *)out)[i] = ((double *)out)[2 * i];
        else
            for (int64_t i = 0; i < n; i++)
                ((float *)out)[i] = ((float *)out)[2 * i];
    }
}

static void pass_share(void *ctx, int t, int nthreads)
{
    fft_pass *p = ctx;
    size_t lo, hi;
    mxp_share_range((size_t)p->lines, 1, t, nthreads, &lo, &hi);
    if (lo >= hi)
        return;
    const size_t cs = p->f64 ? 8 : 4;
    plans pl;
    /* the C2R of an even n reads a Hermitian half: kiss_fftri wants n/2 + 1 values */
    void *in = malloc((size_t)(p->n + 1) * 2 * cs), *out = malloc((size_t)(p->n + 1) * 2 * cs);
    if (!in || !out || !make_plans(p, &pl)) {
        free(in), free(out);
        atomic_store(&p->failed, 1);
        return;
    }
    const int64_t dst_count = p->kind == C2R ? p->dst_len : 2 * p->dst_len;
    for (size_t l = lo; l < hi; l++) {
        ptrdiff_t so, dof;
        line_offsets(p, (int64_t)l, &so, &dof);
        gather(p, p->src->data + so, p->kind == C2R || (p->kind == C2C && !p->real_src), p->src_len, in);
        transform(p, &pl, in, out);
        scale_buf(p, out, dst_count);
        scatter(p, p->dst->data + dof, out, p->dst_len);
    }
    mxp_kissfft_free(pl.c2c ? pl.c2c : pl.real);
    free(in);
    free(out);
}

static mxp_status run_pass(fft_pass *p)
{
    p->lines = 1;
    for (int d = 0; d < p->lnd; d++)
        if (d != p->axis)
            p->lines *= p->src->shape[d];
    if (p->lines == 0 || p->dst_len == 0)
        return MXP_OK;
    const double work = (double)p->lines * (double)p->n * log2((double)p->n + 1);
    int nthreads = mxp_get_num_threads();
    if (work < 65536 || p->lines < 2)
        nthreads = 1;
    nthreads = (int64_t)nthreads > p->lines ? (int)p->lines : nthreads;
    atomic_store(&p->failed, 0);
    mxp_parallel(nthreads, pass_share, p);
    return atomic_load(&p->failed) ? mxp_error(MXP_ERR_NO_MEMORY, "fft: no memory for a plan of %lld points",
                                 (long long)p->n)
                     : MXP_OK;
}

/* ---- checks and the passes ------------------------------------------------ */

typedef struct fft_plan {
    int lnd, naxes, axes[2];
    int64_t n[2];
    bool f64;
    mxp_dtype out;
} fft_plan;

static mxp_status plan_fft(const char *fn, int kind, const mxp_array *x, const mxp_fft_opts *o, fft_plan *f)
{
    mxp_status st = mxp_require_array(x, fn);
    if (st != MXP_OK)
        return st;
    const mxp_dtype_traits *t = mxp_dtype_get_traits(x->dtype);
    if (t->kind != MXP_KIND_FLOAT)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: x is %s; the FFT takes float arrays (convert integers first)",
                         fn, t->name);
    const bool complex_in = kind == C2R || (kind == C2C && !o->real_input);
    f->lnd = x->ndim - complex_in;
    if (complex_in && (x->ndim < 1 || x->shape[x->ndim - 1] != 2))
        return mxp_error(MXP_ERR_SHAPE, "%s: a complex x has a trailing axis of length 2 (re, im); this one's "
                         "shape ends in %lld", fn, x->ndim ? (long long)x->shape[x->ndim - 1] : 0LL);
    if (o->naxes < 0 || o->naxes > 2)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: naxes %d: 1 or 2 axes (0: the last)", fn, o->naxes);
    if ((unsigned)o->norm >= MXP_FFT_NORM_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: norm %d is not an mxp_fft_norm", fn, (int)o->norm);
    f->naxes = o->naxes ? o->naxes : 1;
    for (int i = 0; i < f->naxes; i++) {
        f->axes[i] = o->naxes ? o->axes[i] : -1;
        if (f->lnd < 1 || (st = mxp_normalize_axis(&f->axes[i], f->lnd, fn)) != MXP_OK)
            return f->lnd < 1 ? mxp_error(MXP_ERR_INDEX, "%s: x has no axis to transform", fn) : st;
        const int64_t len = x->shape[f->axes[i]];
        f->n[i] = o->n[i] ? o->n[i] : (kind == C2R && i == f->naxes - 1 ? 2 * (len - 1) : len);
        if (f->n[i] < 1 || f->n[i] > INT32_MAX / 4)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %lld points along axis %d (1 to 2^29)", fn,
                             (long long)f->n[i], f->axes[i]);
    }
    if (f->naxes == 2 && f->axes[0] == f->axes[1])
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: the two axes are both %d", fn, f->axes[0]);
    f->f64 = x->dtype == MXP_F64 || o->out_dtype == MXP_F64;
    f->out = o->out_dtype ? o->out_dtype : x->dtype == MXP_F64 ? MXP_F64 : MXP_F32;
    const mxp_dtype_traits *ot = mxp_dtype_get_traits(f->out);
    if (!ot || ot->kind != MXP_KIND_FLOAT || ot->bits < 8)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: out_dtype %s: the result needs a float dtype of 8 bits or more",
                         fn, ot ? ot->name : "(invalid)");
    return MXP_OK;
}

static double norm_scale(mxp_fft_norm norm, bool inverse, double n)
{
    if (norm == MXP_FFT_ORTHO)
        return 1 / sqrt(n);
    return (norm == MXP_FFT_BACKWARD) == inverse ? 1 / n : 1;
}

/* A new array: x's logical shape with axis set to len, complex or real. */
static mxp_status new_like(mxp_array **out, const mxp_array *x, int lnd, int axis, int64_t len, bool complex,
                           mxp_dtype dt)
{
    int64_t shape[MXP_MAXDIMS + 1];
    memcpy(shape, x->shape, (size_t)lnd * sizeof *shape);
    shape[axis] = len;
    if (complex)
        shape[lnd] = 2;
    return mxp_array_new_owner(out, dt, lnd + complex, shape);
}

/* The passes: axes in reverse (the last first, as numpy.fft.fftn does);
 * the real axis of rfft/irfft is the last given: rfft does it first, irfft
 * last.  Between passes: a complex array of the compute type. */
static mxp_status fft_run(const char *fn, int kind, mxp_array **out, const mxp_array *x, const mxp_fft_opts *opts)
{
    MXP_ABI_IN_OUT(opts, fft_opts, fn, out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    const mxp_fft_opts o = opts ? *opts : (mxp_fft_opts){ 0 };
    fft_plan f;
    mxp_status st = plan_fft(fn, kind, x, &o, &f);
    if (st != MXP_OK)
        return st;
    const mxp_dtype ct = f.f64 ? MXP_F64 : MXP_F32;
    const mxp_array *cur = x;
    mxp_array *tmp = NULL;
    for (int k = 0; k < f.naxes && st == MXP_OK; k++) {
        /* irfft: the complex axes first, its real axis (the last given) last */
        const int i = kind == C2R ? (k == f.naxes - 1 ? f.naxes - 1 : f.naxes - 2 - k) : f.naxes - 1 - k;
        const bool real_axis = kind != C2C && i == f.naxes - 1;
        const bool last = k == f.naxes - 1;
        fft_pass p = { .src = cur, .axis = f.axes[i], .f64 = f.f64, .n = f.n[i], .lnd = f.lnd };
        p.kind = real_axis ? kind : C2C;
        p.inverse = kind == C2R || (kind == C2C && o.inverse);
        p.real_src = kind == C2C && o.real_input && k == 0;
        p.scale = norm_scale(o.norm, p.inverse, (double)p.n);
        p.src_len = cur->shape[p.axis];
        p.dst_len = p.kind == R2C ? complex_len(p.n) : p.n;
        mxp_array *dst = NULL;
        st = new_like(&dst, cur, f.lnd, p.axis, p.dst_len, p.kind != C2R, last ? f.out : ct);
        if (st != MXP_OK)
            break;
        p.dst = dst;
        st = run_pass(&p);
        mxp_array_free(tmp);
        tmp = dst;
        cur = dst;
    }
    if (st != MXP_OK) {
        mxp_array_free(tmp);
        return st;
    }
    *out = tmp;
    return MXP_OK;
}

static double fft_flops(const mxp_array *y)
{
    /* 5 n log2 n per complex transform of n points: the usual count */
    return y ? 5.0 * (double)mxp_array_size(y) * log2((double)mxp_array_size(y) + 1) / 2 : 0;
}

mxp_status mxp_fft(mxp_array **out, const mxp_array *x, const mxp_fft_opts *opts)
{
    MXP_PROF_RETURN_AFTER("fft", fft_run("mxp_fft", C2C, out, x, opts), mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          fft_flops(mxp_prof_made(out)));
}

mxp_status mxp_rfft(mxp_array **out, const mxp_array *x, const mxp_fft_opts *opts)
{
    MXP_PROF_RETURN_AFTER("rfft", fft_run("mxp_rfft", R2C, out, x, opts), mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          fft_flops(mxp_prof_made(out)));
}

mxp_status mxp_irfft(mxp_array **out, const mxp_array *x, const mxp_fft_opts *opts)
{
    MXP_PROF_RETURN_AFTER("irfft", fft_run("mxp_irfft", C2R, out, x, opts), mxp_prof_array_bytes(x),
                          mxp_prof_array_bytes(x) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          fft_flops(mxp_prof_made(out)));
}
