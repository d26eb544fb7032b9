/* Creation: empty, zeros, ones, full, arange, linspace, eye, and seeded
 * counter-based random arrays.  Values are computed in float64 and rounded
 * once to the dtype, in chunks, with mxp_convert. */
#include <math.h>
#include <string.h>

#include "core/profile-internal.h"
#include "core/abi.h"
#include "array/array-internal.h"
#include "kernels/cvt-kernel.h"
#include "core/error.h"
#include "core/fpenv.h"

enum { CHUNK = 1024 };

typedef double (*value_fn)(int64_t i, const void *ctx);

/* Fills a C-contiguous owner with f(i), rounded once by opts. */
static void fill(mxp_array *a, value_fn f, const void *ctx, const mxp_convert_opts *opts)
{
    double chunk[CHUNK];
    const int64_t n = mxp_array_size(a);
    const size_t size = mxp_dtype_itemsize(a->dtype);
    mxp_convert_opts o = { .rounding = MXP_ROUND_NEAREST_EVEN };
    if (opts)
        o = *opts;
    const uint64_t offset0 = o.index_offset;
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
        int64_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
        for (int64_t i = 0; i < m; i++)
            chunk[i] = f(i0 + i, ctx);
        o.index_offset = offset0 + (uint64_t)i0;
        mxp_convert(a->data + i0 * (int64_t)size, a->dtype, chunk, MXP_F64, (size_t)m, &o);
    }
}

static mxp_status make(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape, value_fn f, const void *ctx,
                       const mxp_convert_opts *opts)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    mxp_status st = mxp_convert(NULL, dt, NULL, MXP_F64, 0, opts); /* dtype and options */
    if (st == MXP_OK)
        st = mxp_array_new_owner(out, dt, ndim, shape);
    if (st == MXP_OK && f) {
        const mxp_fpenv env = mxp_fpenv_enter(); /* the values are computed in float64 */
        fill(*out, f, ctx, opts);
        mxp_fpenv_leave(env);
    }
    return st;
}

static double constant(int64_t i, const void *ctx)
{
    (void)i;
    return *(const double *)ctx;
}

mxp_status mxp_array_empty(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape)
{
    return make(out, dt, ndim, shape, NULL, NULL, NULL);
}

mxp_status mxp_array_zeros(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape)
{
    mxp_status st = make(out, dt, ndim, shape, NULL, NULL, NULL);
    if (st == MXP_OK)
        memset((*out)->data, 0, (size_t)mxp_array_size(*out) * mxp_dtype_itemsize(dt)); /* 0 is all-zero bits */
    return st;
}

mxp_status mxp_array_ones(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape)
{
    const double one = 1.0;
    return make(out, dt, ndim, shape, constant, &one, NULL);
}

mxp_status mxp_array_full(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape, double value,
                          const mxp_convert_opts *opts)
{
    MXP_ABI_IN_OUT(opts, convert_opts, "mxp_array_full", out);
    return make(out, dt, ndim, shape, constant, &value, opts);
}

typedef struct affine { double start, step; } affine;

static double arange_value(int64_t i, const void *ctx)
{
    const affine *a = ctx;
    return a->start + (double)i * a->step;
}

mxp_status mxp_array_arange(mxp_array **out, mxp_dtype dt, double start, double stop, double step)
{
    if (!(step != 0) || !isfinite(start) || !isfinite(stop) || !isfinite(step))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "arange: start, stop and step must be finite and step nonzero");
    double count = ceil((stop - start) / step);
    if (!(count < 9e18))
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "arange: %g elements are too many", count);
    int64_t n = count > 0 ? (int64_t)count : 0;
    affine a = { start, step };
    return make(out, dt, 1, &n, arange_value, &a, NULL);
}

typedef struct lin { double start, step, stop, delta, div; int64_t num; bool endpoint, step_zero; } lin;

/* As numpy.linspace: i * step + start, the last one stop exactly. */
static double linspace_value(int64_t i, const void *ctx)
{
    const lin *l = ctx;
    if (l->endpoint && l->num > 1 && i == l->num - 1)
        return l->stop;
    double y = l->step_zero ? (double)i / l->div * l->delta : (double)i * l->step;
    return y + l->start;
}

mxp_status mxp_array_linspace(mxp_array **out, mxp_dtype dt, double start, double stop, int64_t num, bool endpoint)
{
    if (num < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "linspace: num = %lld is negative", (long long)num);
    lin l = { start, 0, stop, stop - start, (double)(endpoint ? num - 1 : num), num, endpoint, false };
    if (l.div > 0) {
        l.step = l.delta / l.div;
        l.step_zero = l.step == 0;
    } else {
        l.step = NAN; /* numpy: num <= 1 with endpoint leaves only start */
    }
    return make(out, dt, 1, &num, linspace_value, &l, NULL);
}

typedef struct diag { int64_t m, k; } diag;

static double eye_value(int64_t i, const void *ctx)
{
    const diag *d = ctx;
    return i % d->m - i / d->m == d->k ? 1.0 : 0.0;
}

mxp_status mxp_array_eye(mxp_array **out, mxp_dtype dt, int64_t n, int64_t m, int64_t k)
{
    const int64_t shape[2] = { n, m };
    diag d = { m ? m : 1, k };
    return make(out, dt, 2, shape, eye_value, &d, NULL);
}

/* ---- random ----------------------------------------------------------- */

/* A uniform double in (0, 1) from (seed, counter): 53 bits, never 0. */
static double uniform_open(uint64_t seed, uint64_t counter)
{
    uint64_t z = mxp_splitmix64(seed ^ mxp_splitmix64(counter));
    return ((double)(z >> 11) + 0.5) * 0x1p-53;
}

typedef struct rnd { double a, b; uint64_t seed; } rnd;

static double uniform_value(int64_t i, const void *ctx)
{
    const rnd *r = ctx;
    return r->a + (r->b - r->a) * uniform_open(r->seed, (uint64_t)i);
}

/* Box-Muller on two uniforms drawn from counters 2i and 2i+1. */
static double normal_value(int64_t i, const void *ctx)
{
    const rnd *r = ctx;
    double u1 = uniform_open(r->seed, 2 * (uint64_t)i), u2 = uniform_open(r->seed, 2 * (uint64_t)i + 1);
    return r->a + r->b * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static mxp_status array_random_uniform_entry(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape, double low,
                                             double high, uint64_t seed)
{
    if (!isfinite(low) || !isfinite(high) || !(low <= high))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "random_uniform: need finite low <= high");
    rnd r = { low, high, seed };
    return make(out, dt, ndim, shape, uniform_value, &r, NULL);
}

static mxp_status array_random_normal_entry(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape, double mean,
                                            double stddev, uint64_t seed)
{
    if (!isfinite(mean) || !isfinite(stddev) || stddev < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "random_normal: need a finite mean and stddev >= 0");
    rnd r = { mean, stddev, seed };
    return make(out, dt, ndim, shape, normal_value, &r, NULL);
}

mxp_status mxp_array_scalar(mxp_array **out, double value, mxp_dtype dt)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_array_scalar: out is NULL");
    *out = NULL;
    if (!mxp_dtype_is_valid(dt))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "mxp_array_scalar: dtype %d is not a valid mxp_dtype", (int)dt);
    return mxp_array_full(out, dt, 0, NULL, value, NULL);
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

mxp_status mxp_array_random_uniform(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape, double low,
                                    double high, uint64_t seed)
{
    MXP_PROF_RETURN_AFTER("random", array_random_uniform_entry(out, dt, ndim, shape, low, high, seed),
                          0,
                          mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(mxp_prof_made(out)));
}

mxp_status mxp_array_random_normal(mxp_array **out, mxp_dtype dt, int ndim, const int64_t *shape, double mean,
                                   double stddev, uint64_t seed)
{
    MXP_PROF_RETURN_AFTER("random", array_random_normal_entry(out, dt, ndim, shape, mean, stddev, seed),
                          0,
                          mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(mxp_prof_made(out)));
}
