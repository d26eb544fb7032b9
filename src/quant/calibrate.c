/* Observers: calibration statistics fed batch by batch (min/max, moving
 * average, and histogram-based percentile, MSE and KL thresholds).
 * The methods are described in docs/quant.md. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "quant/quant-internal.h"
#include "array/array-internal.h"
#include "core/fpenv.h"
#include "core/abi.h"
#include "core/error.h"

enum { DEFAULT_BINS = 2048, MSE_STEPS = 256, GRID_CHUNK = 256 };

struct mxp_observer {
    mxp_calib_kind kind;
    mxp_dtype qtype;
    quant_type qt;
    bool symmetric;
    int axis;
    int ndim;
    int64_t axis_len;
    mxp_observer_opts opts;
    int64_t batches;
    int64_t count;     /* pairs (min/max kinds), 1 for histograms */
    double *mins, *maxs;
    /* histogram of |x| over [0, hmax], opts.bins bins */
    double *hist;
    double hmax;
};

/* The type (*qt) and opts with the defaults filled in (*o), checked for
 * kind and the type. */
static mxp_status observer_opts(mxp_calib_kind kind, mxp_dtype qtype, bool symmetric, const mxp_observer_opts *opts,
                                const char *what, quant_type *qt, mxp_observer_opts *o)
{
    mxp_status st = mxp_quant_calib_type(qtype, symmetric, what, qt);
    if (st != MXP_OK)
        return st;
    *o = opts ? *opts : (mxp_observer_opts){ 0 };
    if (kind < MXP_CALIB_MINMAX || kind > MXP_CALIB_KL)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %d is not an mxp_calib_kind", what, (int)kind);
    if (o->momentum == 0.0)
        o->momentum = 0.9;
    if (o->percentile == 0.0)
        o->percentile = 99.99;
    if (o->bins == 0)
        o->bins = DEFAULT_BINS;
    if (!(o->momentum > 0.0 && o->momentum < 1.0) || !(o->percentile > 0.0 && o->percentile <= 100.0) ||
        o->bins < (kind == MXP_CALIB_KL ? 2 * qt->kl_bins : 2) || o->bins > MXP_OBSERVER_MAX_BINS || o->group_size < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                         "%s: bad options (momentum %g in (0, 1), percentile %g in (0, 100], bins %d in [%d, %d])",
                         what, o->momentum, o->percentile, o->bins, kind == MXP_CALIB_KL ? 2 * qt->kl_bins : 2,
                         MXP_OBSERVER_MAX_BINS);
    return MXP_OK;
}

mxp_status mxp_observer_create(mxp_observer **out, mxp_calib_kind kind, mxp_dtype qtype, bool symmetric, int axis,
                               const mxp_observer_opts *opts)
{
    MXP_ABI_IN_OUT(opts, observer_opts, "mxp_observer_create", out);
    const char *what = "mxp_observer_create";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
    *out = NULL;
    quant_type qt = { 0 };
    mxp_observer_opts o;
    mxp_status st = observer_opts(kind, qtype, symmetric, opts, what, &qt, &o);
    if (st != MXP_OK)
        return st;
    bool hist = kind >= MXP_CALIB_PERCENTILE;
    if (axis < -1)
        return mxp_error(MXP_ERR_INDEX, "%s: axis %d is out of range (-1: per tensor)", what, axis);
    if (hist && (axis != -1 || o.group_size != 0))
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: histogram observers are per tensor only (axis -1)", what);
    if (o.group_size > 0 && axis < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: group_size needs an axis >= 0", what);
    mxp_observer *obs = mxp_malloc(sizeof *obs);
    if (!obs)
        return mxp_error(MXP_ERR_NO_MEMORY, "%s: out of memory", what);
    *obs = (mxp_observer){ .kind = kind, .qtype = qtype, .qt = qt, .symmetric = symmetric, .axis = axis, .opts = o };
    if (hist) {
        obs->hist = mxp_malloc((size_t)o.bins * sizeof *obs->hist);
        if (!obs->hist) {
            mxp_free(obs);
            return mxp_error(MXP_ERR_NO_MEMORY, "%s: out of memory", what);
        }
        memset(obs->hist, 0, (size_t)o.bins * sizeof *obs->hist);
    }
    *out = obs;
    return MXP_OK;
}

void mxp_observer_free(mxp_observer *obs)
{
    if (!obs)
        return;
    mxp_free(obs->mins);
    mxp_free(obs->maxs);
    mxp_free(obs->hist);
    mxp_free(obs);
}

/* Grows the histogram range to at least amax: old bins are moved by their
 * centres (exact when nothing was recorded yet). */
static void hist_grow(mxp_observer *obs, double amax)
{
    int nb = obs->opts.bins;
    if (amax <= obs->hmax)
        return;
    double old = obs->hmax;
    obs->hmax = amax;
    if (old == 0.0)
        return; /* only zeros so far, all in bin 0 */
    double tmp[DEFAULT_BINS];
    double *t = nb <= DEFAULT_BINS ? tmp : NULL;
    double *heap = t ? NULL : mxp_malloc((size_t)nb * sizeof *heap);
    t = t ? t : heap;
    if (!t)
        return; /* left as is: approximate, never wrong in kind */
    memcpy(t, obs->hist, (size_t)nb * sizeof *t);
    memset(obs->hist, 0, (size_t)nb * sizeof *t);
    for (int b = 0; b < nb; b++) {
        double c = (b + 0.5) * old / nb;
        int64_t nbi = (int64_t)(c / amax * nb);
        obs->hist[nbi < nb ? nbi : nb - 1] += t[b];
    }
    mxp_free(heap);
}

/* Counts the finite |v[e]| in bins of width hmax / nb over [0, hmax]:
 * bin floor(|v| / hmax * nb), the last bin closed (and holding anything
 * above hmax); hmax 0: bin 0. */
static void hist_add(double *hist, int nb, double hmax, const double *v, int64_t n)
{
    for (int64_t e = 0; e < n; e++) {
        if (!isfinite(v[e]))
            continue;
        int64_t b = hmax > 0.0 ? (int64_t)(fabs(v[e]) / hmax * nb) : 0;
        hist[b < nb ? b : nb - 1] += 1.0;
    }
}

static mxp_status observer_update(mxp_observer *obs, const mxp_array *batch)
{
    const char *what = "mxp_observer_update";
    if (!obs)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: observer is NULL", what);
    quant_layout L;
    mxp_status st = mxp_quant_layout(batch, obs->axis, obs->opts.group_size, what, &L);
    if (st != MXP_OK)
        return st;
    if (obs->batches > 0 && obs->axis >= 0 &&
        (batch->ndim != obs->ndim || L.len != obs->axis_len || L.count != obs->count))
        return mxp_error(MXP_ERR_SHAPE, "%s: the batch does not match the earlier ones along axis %d", what,
                         obs->axis);
    mxp_array *xd = NULL;
    st = mxp_quant_as_f64(&xd, batch);
    if (st != MXP_OK)
        return st;
    const double *v = mxp_array_data(xd);
    double *bmin = mxp_malloc((size_t)L.count * sizeof *bmin);
    double *bmax = mxp_malloc((size_t)L.count * sizeof *bmax);
    if (!bmin || !bmax) {
        st = mxp_error(MXP_ERR_NO_MEMORY, "%s: out of memory", what);
        goto done;
    }
    mxp_quant_pair_ranges(&L, v, bmin, bmax);
    if (obs->batches == 0) {
        obs->mins = bmin, obs->maxs = bmax, bmin = bmax = NULL;
        obs->count = L.count;
        obs->ndim = batch->ndim;
        obs->axis_len = L.len;
    } else {
        for (int64_t k = 0; k < L.count; k++) {
            if (obs->kind == MXP_CALIB_MOVING_AVERAGE && obs->mins[k] <= obs->maxs[k] && bmin[k] <= bmax[k]) {
                double m = obs->opts.momentum;
                obs->mins[k] = m * obs->mins[k] + (1 - m) * bmin[k];
                obs->maxs[k] = m * obs->maxs[k] + (1 - m) * bmax[k];
            } else if (obs->kind != MXP_CALIB_MOVING_AVERAGE || !(obs->mins[k] <= obs->maxs[k])) {
                obs->mins[k] = fmin(obs->mins[k], bmin[k]);
                obs->maxs[k] = fmax(obs->maxs[k], bmax[k]);
            }
        }
    }
    if (obs->hist) {
        double amax = 0.0;
        for (int64_t e = 0; e < L.size; e++)
            if (isfinite(v[e]))
                amax = fmax(amax, fabs(v[e]));
        hist_grow(obs, amax);
        hist_add(obs->hist, obs->opts.bins, obs->hmax, v, L.size);
    }
    obs->batches++;
done:
    mxp_free(bmin);
    mxp_free(bmax);
    mxp_array_free(xd);
    return st;
}

/* Under the library's floating-point environment (core/fpenv.h). */
mxp_status mxp_observer_update(mxp_observer *obs, const mxp_array *batch)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = observer_update(obs, batch);
    mxp_fpenv_leave(env);
    return st;
}

/* Threshold at percentile p of |x|, interpolated inside its bin. */
static double percentile_threshold(const double *h, int nb, double width, double p)
{
    double total = 0.0;
    for (int b = 0; b < nb; b++)
        total += h[b];
    double need = total * p / 100.0, cum = 0.0;
    for (int b = 0; b < nb; b++) {
        if (h[b] > 0.0 && cum + h[b] >= need)
            return width * (b + (need - cum) / h[b]);
        cum += h[b];
    }
    return width * nb;
}

/* v[0..n) (multiples of the scale) rounded to the qtype's symmetric grid:
 * integers, or float8 values (nearest even, saturating). */
static void round_to_grid(double *v, int n, const quant_type *qt)
{
    if (!qt->is_float) {
        for (int j = 0; j < n; j++)
            v[j] = nearbyint(v[j]);
        return;
    }
    static const mxp_convert_opts sat = { .overflow = MXP_OVERFLOW_SATURATE };
    uint8_t q[GRID_CHUNK];
    mxp_convert(q, qt->code, v, MXP_F64, (size_t)n, &sat);
    mxp_convert(v, MXP_F64, q, qt->code, (size_t)n, NULL);
}

/* Estimated squared error of symmetric quantization with threshold t of
 * the histogram (bin centres stand for their elements), on the grid of
 * scale t / sym_max. */
static double mse_of(const double *h, int nb, double width, double t, const quant_type *qt)
{
    double s = t / qt->sym_max, err = 0.0, c[GRID_CHUNK], g[GRID_CHUNK];
    for (int b0 = 0; b0 < nb; b0 += GRID_CHUNK) {
        int m = nb - b0 < GRID_CHUNK ? nb - b0 : GRID_CHUNK;
        for (int j = 0; j < m; j++) {
            c[j] = (b0 + j + 0.5) * width;
            g[j] = c[j] / s;
        }
        round_to_grid(g, m, qt);
        for (int j = 0; j < m; j++) {
            if (h[b0 + j] == 0.0)
                continue;
            double d = c[j] > t ? c[j] - t : c[j] - g[j] * s;
            err += h[b0 + j] * d * d;
        }
    }
    return err;
}

/* TensorRT's entropy calibration with `target` levels (128 for 8 bits):
 * for i = target .. nb bins, P = h[0..i) with the tail folded into bin i-1,
 * Q = h[0..i) merged into `target` bins and spread back over the non-empty
 * bins; the i minimizing KL(P || Q) gives the threshold (i + 0.5) * width.
 * Bin 0 is left out of both: its values (|x| under one bin, exact zeros
 * above all: half of a ReLU's output) land in the first level at every
 * candidate threshold, and counted they swamp P, so that the clipped tail
 * weighs nothing and the smallest threshold wins (post-ReLU activations
 * were clipped 4-16x: 42 of 450 right in the digits CNN, docs/cnn.md).
 * An exact fit (KL 0) goes to the largest threshold that has one: on data
 * of a few distinct values (an image of 17 gray levels) KL(P || Q) is 0
 * both where the first level is isolated (0.0625 of 1) and over the
 * whole range. */
static double kl_threshold(const double *h_in, int nb, double width, int target)
{
    double *p = mxp_malloc((size_t)nb * 3 * sizeof *p);
    if (!p)
        return width * nb;
    double *q = p + nb, *h = q + nb;
    memcpy(h, h_in, (size_t)nb * sizeof *h);
    h[0] = 0.0;

    double tail = 0.0;
    for (int b = 0; b < nb; b++)
        tail += h[b];
    for (int b = 0; b < target; b++)
        tail -= h[b];
    double best = INFINITY;
    int best_i = nb;
    for (int i = target; i <= nb; i++) {
        if (i > target)
            tail -= h[i - 1];
        memcpy(p, h, (size_t)i * sizeof *p);
        p[i - 1] += tail;
        int merged = i / target;
        for (int j = 0; j < target; j++) {
            int start = j * merged, stop = j == target - 1 ? i : start + merged;
            double sum = 0.0;
            int nonzero = 0;
            for (int b = start; b < stop; b++) {
                sum += h[b];
                nonzero += h[b] != 0.0;
            }
            for (int b = start; b < stop; b++)
                q[b] = h[b] != 0.0 ? sum / nonzero : 0.0;
        }
        double ps = 0.0, qs = 0.0;
        for (int b = 0; b < i; b++)
            ps += p[b], qs += q[b];
        if (ps == 0.0 || qs == 0.0)
            continue;
        double kl = 0.0;
        for (int b = 0; b < i; b++) {
            if (p[b] == 0.0)
                continue;
            double pb = p[b] / ps, qb = q[b] / qs;
            kl += qb > 0.0 ? pb * log(pb / qb) : pb * log(pb / 1e-12); /* P > 0 where Q is empty */
        }
        if (kl < best || (kl == 0.0 && best == 0.0)) { /* exact fits: the widest */
            best = kl;
            best_i = i;
        }
    }
    mxp_free(p);
    return fmin((best_i + 0.5) * width, width * nb);
}

/* The qparams of a histogram observer: threshold from the counts over
 * [0, hmax], then the finite range [lo, hi] (lo > hi: none) clipped to it,
 * or [-T, T] when symmetric.  opts and qt are checked. */
static mxp_status hist_qparams(mxp_qparams *out, mxp_calib_kind kind, const quant_type *qt, bool symmetric,
                               const mxp_observer_opts *o, const double *hist, double hmax, double lo, double hi)
{
    int nb = o->bins;
    double width = hmax / nb, t = hmax;
    if (hmax > 0.0) {
        if (kind == MXP_CALIB_PERCENTILE) {
            t = percentile_threshold(hist, nb, width, o->percentile);
        } else if (kind == MXP_CALIB_MSE) {
            double best = INFINITY;
            for (int k = 1; k <= MSE_STEPS; k++) {
                double c = hmax * k / MSE_STEPS;
                double e = mse_of(hist, nb, width, c, qt);
                if (e < best)
                    best = e, t = c;
            }
        } else {
            t = kl_threshold(hist, nb, width, qt->kl_bins);
        }
    }
    if (lo <= hi) {
        lo = fmax(lo, -t);
        hi = fmin(hi, t);
    }
    if (symmetric) /* the threshold itself is the clipping range */
        lo = -t, hi = t;
    return mxp_qparams_from_ranges(out, qt->qtype, symmetric, -1, 0, 1, &lo, &hi);
}

static mxp_status observer_compute(const mxp_observer *obs, mxp_qparams *out)
{
    const char *what = "mxp_observer_compute";
    if (!obs || !out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, !obs ? "observer" : "out");
    if (obs->batches == 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: no batch was observed", what);
    if (!obs->hist)
        return mxp_qparams_from_ranges(out, obs->qtype, obs->symmetric, obs->axis, obs->opts.group_size,
                                       obs->count, obs->mins, obs->maxs);
    return hist_qparams(out, obs->kind, &obs->qt, obs->symmetric, &obs->opts, obs->hist, obs->hmax, obs->mins[0],
                        obs->maxs[0]);
}

/* Under the library's floating-point environment (core/fpenv.h). */
mxp_status mxp_observer_compute(const mxp_observer *obs, mxp_qparams *out)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = observer_compute(obs, out);
    mxp_fpenv_leave(env);
    return st;
}

/* ---- histograms in pieces ------------------------------------------------- */

static mxp_status histogram_abs(const mxp_array *x, double hmax, int bins, double *counts)
{
    const char *what = "mxp_histogram_abs";
    if (!counts)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: counts is NULL", what);
    if (!x)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: x is NULL", what);
    if (!(hmax >= 0.0 && isfinite(hmax)) || bins < 1)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: hmax %g (finite, >= 0) and bins %d (>= 1)", what, hmax,
                         bins);
    if (mxp_array_size(x) == 0)
        return MXP_OK;
    mxp_array *xd = NULL;
    mxp_status st = mxp_quant_as_f64(&xd, x);
    if (st != MXP_OK)
        return st;
    hist_add(counts, bins, hmax, mxp_array_data(xd), mxp_array_size(xd));
    mxp_array_free(xd);
    return MXP_OK;
}

/* Under the library's floating-point environment (core/fpenv.h). */
mxp_status mxp_histogram_abs(const mxp_array *x, double hmax, int bins, double *counts)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = histogram_abs(x, hmax, bins, counts);
    mxp_fpenv_leave(env);
    return st;
}

static mxp_status qparams_from_histogram(mxp_qparams *out, mxp_calib_kind kind, mxp_dtype qtype,
                                               bool symmetric, const mxp_observer_opts *opts, const double *counts,
                                               double hmax, double lo, double hi)
{
    const char *what = "mxp_observer_qparams_from_histogram";
    if (!out || !counts)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, !out ? "out" : "counts");
    quant_type qt = { 0 };
    mxp_observer_opts o;
    mxp_status st = observer_opts(kind, qtype, symmetric, opts, what, &qt, &o);
    if (st != MXP_OK)
        return st;
    if (kind < MXP_CALIB_PERCENTILE)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: kind %d is not a histogram kind (percentile, MSE, KL)", what,
                         (int)kind);
    if (!(hmax >= 0.0 && isfinite(hmax)) || (lo <= hi && !(isfinite(lo) && isfinite(hi))))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: hmax %g must be finite and >= 0, the range [%g, %g] finite",
                         what, hmax, lo, hi);
    for (int b = 0; b < o.bins; b++)
        if (!(counts[b] >= 0.0 && isfinite(counts[b])))
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: count %g in bin %d", what, counts[b], b);
    return hist_qparams(out, kind, &qt, symmetric, &o, counts, hmax, lo, hi);
}

/* Under the library's floating-point environment (core/fpenv.h). */
mxp_status mxp_observer_qparams_from_histogram(mxp_qparams *out, mxp_calib_kind kind, mxp_dtype qtype,
                                               bool symmetric, const mxp_observer_opts *opts, const double *counts,
                                               double hmax, double lo, double hi)
{
    MXP_ABI_IN(opts, observer_opts, "mxp_observer_qparams_from_histogram");
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = qparams_from_histogram(out, kind, qtype, symmetric, opts, counts, hmax, lo, hi);
    mxp_fpenv_leave(env);
    return st;
}
