/* The stability monitor: per named tensor, statistics against a target
 * dtype at every record, flags from thresholds, a history, and a dtype
 * suggestion from everything seen.  The report is in monitor-report.c. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train/train-internal.h"
#include "core/dtype-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/fpenv.h"

/* floor(log2 |x|) of the nonzero finite values seen, clamped to [-160, 160]:
 * enough to tell what flushes in every float dtype narrower than float64. */
enum { EXP_LO = -160, EXP_HI = 160, EXP_BINS = EXP_HI - EXP_LO + 1, NAME_MAX_LEN = 63 };

typedef struct mon_tensor {
    char name[NAME_MAX_LEN + 1];
    mxp_tensor_role role;
    mxp_tensor_stats *rec;
    size_t nrec, cap;
    double prev_norm;             /* the last record's norm (exploding ratio) */
    bool has_prev;
    int64_t exp_hist[EXP_BINS];   /* over every record, kept or dropped */
    int64_t nonzero, nonfinite;
    double max_abs;
} mon_tensor;

struct mxp_monitor {
    mxp_monitor_opts o;
    double over_t;  /* |x| > over_t overflows the target ... */
    bool over_tie;  /* ... and so does |x| == over_t when this is set */
    double flush_t; /* 0 < |x| <= flush_t rounds to zero */
    double sub_hi;  /* flush_t < |x| < sub_hi rounds to a subnormal */
    mon_tensor **t;
    size_t count, cap;
};

static mxp_status check_opts(mxp_monitor_opts *o)
{
    const char *what = "mxp_monitor_create";
    if (o->target == MXP_DTYPE_INVALID)
        o->target = MXP_F16;
    if (o->underflow_share == 0.0)
        o->underflow_share = 0.01;
    if (o->exploding_norm == 0.0)
        o->exploding_norm = 1e4;
    if (o->exploding_ratio == 0.0)
        o->exploding_ratio = 100.0;
    if (o->vanishing_norm == 0.0)
        o->vanishing_norm = 1e-7;
    if (o->headroom == 0.0)
        o->headroom = 2.0;
    if (!mxp_is_float_dtype(o->target))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: target %s is not a float dtype", what,
                         mxp_dtype_name(o->target));
    if (!(o->overflow_share >= 0.0 && o->overflow_share <= 1.0) ||
        !(o->underflow_share >= 0.0 && o->underflow_share <= 1.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: shares %g and %g must be in [0, 1]", what, o->overflow_share,
                         o->underflow_share);
    if (!(o->exploding_norm > 0.0) || !(o->exploding_ratio > 1.0) || !(o->vanishing_norm >= 0.0) ||
        !(o->headroom >= 1.0 && isfinite(o->headroom)) || o->max_history < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: bad thresholds (exploding %g, ratio %g, vanishing %g, "
                         "headroom %g, history %lld)", what, o->exploding_norm, o->exploding_ratio,
                         o->vanishing_norm, o->headroom, (long long)o->max_history);
    return MXP_OK;
}

/* The target's rounding boundaries (round to nearest even):
 *   overflow   |x| >= max + ulp(max)/2 (the tie goes up when max's last
 *              significand bit is 1: float16, bfloat16, e5m2; not e4m3fn)
 *   flush      |x| <= min_subnormal / 2
 *   subnormal  up to min_normal - min_subnormal / 2 (the tie goes up) */
static void set_thresholds(mxp_monitor *m)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(m->o.target);
    int e;
    (void)frexp(t->max, &e); /* max = f 2^e, f in [0.5, 1) */
    m->over_t = t->max + ldexp(1.0, e - 1 - t->mant_bits - 1);
    double back = 0.0;
    uint64_t bits = 0;
    (void)mxp_convert(&bits, t->dtype, &m->over_t, MXP_F64, 1, NULL);
    (void)mxp_convert(&back, MXP_F64, &bits, t->dtype, 1, NULL);
    m->over_tie = !isfinite(back);
    m->flush_t = t->min_subnormal / 2;
    m->sub_hi = t->min_normal - t->min_subnormal / 2;
}

mxp_status mxp_monitor_create(mxp_monitor **out, const mxp_monitor_opts *opts)
{
    MXP_ABI_IN_OUT(opts, monitor_opts, "mxp_monitor_create", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_monitor_create: out is NULL");
    *out = NULL;
    mxp_monitor_opts o = { 0 };
    if (opts)
        o = *opts;
    mxp_status st = check_opts(&o);
    if (st != MXP_OK)
        return st;
    mxp_monitor *m = mxp_malloc(sizeof *m);
    if (!m)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_monitor_create: out of memory");
    memset(m, 0, sizeof *m);
    m->o = o;
    set_thresholds(m);
    *out = m;
    return MXP_OK;
}

void mxp_monitor_free(mxp_monitor *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->count; i++) {
        mxp_free(m->t[i]->rec);
        mxp_free(m->t[i]);
    }
    mxp_free(m->t);
    mxp_free(m);
}

static mon_tensor *find(const mxp_monitor *m, const char *name)
{
    for (size_t i = 0; i < m->count; i++) {
        if (!strcmp(m->t[i]->name, name))
            return m->t[i];
    }
    return NULL;
}

static mxp_status add_tensor(mxp_monitor *m, const char *name, mxp_tensor_role role, mon_tensor **out)
{
    if (m->count == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 8;
        mon_tensor **grown = mxp_malloc(cap * sizeof *grown);
        if (!grown)
            return mxp_error(MXP_ERR_NO_MEMORY, "mxp_monitor_record: out of memory");
        if (m->count)
            memcpy(grown, m->t, m->count * sizeof *grown);
        mxp_free(m->t);
        m->t = grown;
        m->cap = cap;
    }
    mon_tensor *t = mxp_malloc(sizeof *t);
    if (!t)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_monitor_record: out of memory");
    memset(t, 0, sizeof *t);
    strcpy(t->name, name);
    t->role = role;
    m->t[m->count++] = t;
    *out = t;
    return MXP_OK;
}

static mxp_status push_record(const mxp_monitor *m, mon_tensor *t, const mxp_tensor_stats *r)
{
    const size_t limit = (size_t)m->o.max_history;
    if (limit && t->nrec == limit) {
        memmove(t->rec, t->rec + 1, (t->nrec - 1) * sizeof *t->rec);
        t->nrec--;
    }
    if (t->nrec == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        if (limit && cap > limit)
            cap = limit;
        mxp_tensor_stats *grown = mxp_malloc(cap * sizeof *grown);
        if (!grown)
            return mxp_error(MXP_ERR_NO_MEMORY, "mxp_monitor_record: out of memory");
        if (t->nrec)
            memcpy(grown, t->rec, t->nrec * sizeof *grown);
        mxp_free(t->rec);
        t->rec = grown;
        t->cap = cap;
    }
    t->rec[t->nrec++] = *r;
    return MXP_OK;
}

/* Counts and sums of one array (read as float64 in chunks). */
static void measure(const mxp_monitor *m, const mxp_array *c, mxp_tensor_stats *r, int64_t *hist)
{
    const int64_t n = mxp_array_size(c);
    double buf[TRAIN_CHUNK], sumsq = 0.0, flushed_sq = 0.0;
    r->count = n;
    r->min_abs = INFINITY;
    for (int64_t off = 0; off < n; off += TRAIN_CHUNK) {
        const size_t k = (size_t)(n - off < TRAIN_CHUNK ? n - off : TRAIN_CHUNK);
        mxp_train_read_f64(c, off, k, buf);
        for (size_t i = 0; i < k; i++) {
            const double a = fabs(buf[i]);
            if (a != a) {
                r->nan++;
                continue;
            }
            if (a == INFINITY) {
                r->inf++;
                continue;
            }
            sumsq += a * a;
            if (a == 0.0) {
                r->zeros++;
                continue;
            }
            r->max_abs = a > r->max_abs ? a : r->max_abs;
            r->min_abs = a < r->min_abs ? a : r->min_abs;
            int e;
            (void)frexp(a, &e);
            e -= 1; /* floor(log2 a) */
            hist[(e < EXP_LO ? EXP_LO : e > EXP_HI ? EXP_HI : e) - EXP_LO]++;
            if (a > m->over_t || (a == m->over_t && m->over_tie))
                r->overflow++;
            else if (a <= m->flush_t) {
                r->underflow++;
                flushed_sq += a * a;
            }
            else if (a < m->sub_hi)
                r->subnormal++;
        }
    }
    if (r->min_abs == INFINITY)
        r->min_abs = 0.0;
    r->norm = sqrt(sumsq);
    const int64_t finite = n - r->nan - r->inf, nonzero = finite - r->zeros;
    r->overflow_share = finite ? (double)r->overflow / (double)finite : 0.0;
    r->underflow_share = nonzero ? (double)r->underflow / (double)nonzero : 0.0;
    r->underflow_norm_share = sumsq > 0.0 ? flushed_sq / sumsq : 0.0;
}

static unsigned flags_of(const mxp_monitor *m, const mon_tensor *t, const mxp_tensor_stats *r)
{
    const mxp_monitor_opts *o = &m->o;
    unsigned f = 0;
    if (r->nan + r->inf > 0)
        f |= MXP_MONITOR_NONFINITE;
    if (r->overflow_share > o->overflow_share)
        f |= MXP_MONITOR_OVERFLOW;
    if (r->underflow_share > o->underflow_share)
        f |= MXP_MONITOR_UNDERFLOW;
    if (t->role == MXP_ROLE_GRADIENT && r->count > 0) {
        if (r->norm > o->exploding_norm || (t->has_prev && t->prev_norm > 0 && r->norm > o->exploding_ratio * t->prev_norm))
            f |= MXP_MONITOR_EXPLODING;
        if (r->norm < o->vanishing_norm)
            f |= MXP_MONITOR_VANISHING;
    }
    return f;
}

static mxp_status check_record(const mxp_monitor *m, const char *name, mxp_tensor_role role, const mxp_array *x)
{
    const char *what = "mxp_monitor_record";
    if (!m || !x || !name)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, !m ? "monitor" : !x ? "array" : "name");
    const size_t len = strlen(name);
    if (len == 0 || len > NAME_MAX_LEN)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: a name has 1 to %d characters, not %zu", what, NAME_MAX_LEN,
                         len);
    if ((unsigned)role >= MXP_ROLE_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %d is not an mxp_tensor_role", what, (int)role);
    const mon_tensor *t = find(m, name);
    if (t && t->role != role)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: '%s' was recorded as a %s, not a %s", what, name,
                         mxp_tensor_role_name(t->role), mxp_tensor_role_name(role));
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(mxp_array_dtype(x));
    if (!tr || tr->kind == MXP_KIND_BOOL)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: '%s' is %s, not a number type", what, name,
                         mxp_dtype_name(mxp_array_dtype(x)));
    return MXP_OK;
}

mxp_status mxp_monitor_record(mxp_monitor *m, int64_t step, const char *name, mxp_tensor_role role,
                              const mxp_array *x, mxp_tensor_stats *stats)
{
    MXP_ABI_OUT(stats, tensor_stats, "mxp_monitor_record");
    mxp_status st = check_record(m, name, role, x);
    if (st != MXP_OK)
        return st;
    mxp_array *c = NULL;
    st = mxp_array_ascontiguous(&c, x, 'C');
    if (st != MXP_OK)
        return st;
    mxp_tensor_stats r;
    memset(&r, 0, sizeof r);
    r.struct_size = sizeof r; /* the records of mxp_monitor_history say their layout */
    r.step = step;
    int64_t hist[EXP_BINS] = { 0 };
    const mxp_fpenv env = mxp_fpenv_enter();
    measure(m, c, &r, hist);
    mxp_fpenv_leave(env);
    mxp_array_free(c);
    mon_tensor *t = find(m, name);
    if (!t && (st = add_tensor(m, name, role, &t)) != MXP_OK)
        return st;
    r.flags = flags_of(m, t, &r);
    if ((st = push_record(m, t, &r)) != MXP_OK) {
        if (t->nrec == 0) { /* added just now: no tensor without a record */
            mxp_free(t->rec);
            mxp_free(t);
            m->count--;
        }
        return st;
    }
    for (int i = 0; i < EXP_BINS; i++)
        t->exp_hist[i] += hist[i];
    t->nonzero += r.count - r.nan - r.inf - r.zeros;
    t->nonfinite += r.nan + r.inf;
    t->max_abs = r.max_abs > t->max_abs ? r.max_abs : t->max_abs;
    t->prev_norm = r.norm;
    t->has_prev = true;
    mxp_abi_out(stats, &r, stats_abi_n_, &mxp_abi_tensor_stats);
    return MXP_OK;
}

size_t mxp_monitor_tensor_count(const mxp_monitor *m)
{
    return m ? m->count : 0;
}

const char *mxp_monitor_tensor_name(const mxp_monitor *m, size_t i)
{
    return m && i < m->count ? m->t[i]->name : NULL;
}

mxp_tensor_role mxp_monitor_tensor_role(const mxp_monitor *m, size_t i)
{
    return m && i < m->count ? m->t[i]->role : MXP_ROLE_COUNT;
}

mxp_dtype mxp_monitor_target(const mxp_monitor *m)
{
    return m ? m->o.target : MXP_DTYPE_INVALID;
}

static mxp_status lookup(const mxp_monitor *m, const char *name, const char *what, const mon_tensor **out)
{
    if (!m || !name)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", what, m ? "name" : "monitor");
    *out = find(m, name);
    if (!*out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: no tensor '%s' was recorded", what, name);
    return MXP_OK;
}

mxp_status mxp_monitor_history(const mxp_monitor *m, const char *name, const mxp_tensor_stats **records,
                               size_t *count)
{
    const mon_tensor *t = NULL;
    if (!records || !count)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_monitor_history: %s is NULL", records ? "count" : "records");
    mxp_status st = lookup(m, name, "mxp_monitor_history", &t);
    if (st != MXP_OK)
        return st;
    *records = t->rec;
    *count = t->nrec;
    return MXP_OK;
}

mxp_status mxp_monitor_history_get(const mxp_monitor *m, const char *name, size_t i, mxp_tensor_stats *out)
{
    MXP_ABI_OUT(out, tensor_stats, "mxp_monitor_history_get");
    const mon_tensor *t = NULL;
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_monitor_history_get: out is NULL");
    mxp_status st = lookup(m, name, "mxp_monitor_history_get", &t);
    if (st != MXP_OK)
        return st;
    if (i >= t->nrec)
        return mxp_error(MXP_ERR_INDEX, "mxp_monitor_history_get: record %zu of '%s', which has %zu", i, name,
                         t->nrec);
    mxp_abi_out(out, &t->rec[i], out_abi_n_, &mxp_abi_tensor_stats);
    return MXP_OK;
}

unsigned mxp_monitor_flags(const mxp_monitor *m)
{
    unsigned f = 0;
    for (size_t i = 0; m && i < m->count; i++) {
        for (size_t k = 0; k < m->t[i]->nrec; k++)
            f |= m->t[i]->rec[k].flags;
    }
    return f;
}

const char *mxp_monitor_flag_name(unsigned flag)
{
    switch (flag) {
    case MXP_MONITOR_NONFINITE: return "nonfinite";
    case MXP_MONITOR_OVERFLOW: return "overflow";
    case MXP_MONITOR_UNDERFLOW: return "underflow";
    case MXP_MONITOR_EXPLODING: return "exploding";
    case MXP_MONITOR_VANISHING: return "vanishing";
    default: return "invalid";
    }
}

const char *mxp_tensor_role_name(mxp_tensor_role role)
{
    static const char *const names[MXP_ROLE_COUNT] = { "weight", "activation", "gradient" };
    return (unsigned)role < MXP_ROLE_COUNT ? names[role] : "invalid";
}

/* The share of the nonzero finite values seen that would flush to zero in
 * dt: those below min_subnormal / 2, i.e. with floor(log2 |x|) at most
 * log2(min_subnormal) - 2 (the bin at - 1 mostly rounds up: not counted). */
static double flush_share(const mon_tensor *t, const mxp_dtype_traits *dt)
{
    if (t->nonzero == 0)
        return 0.0;
    int e;
    (void)frexp(dt->min_subnormal, &e); /* min_subnormal = 2^(e - 1) */
    int64_t flushed = 0;
    for (int b = EXP_LO; b <= e - 3 && b <= EXP_HI; b++)
        flushed += t->exp_hist[b - EXP_LO];
    return (double)flushed / (double)t->nonzero;
}

/* Whether dt holds what t has seen; if not, why, into buf. */
static bool holds(const mxp_monitor *m, const mon_tensor *t, const mxp_dtype_traits *dt, char *buf, size_t size)
{
    const double flush = flush_share(t, dt);
    if (t->max_abs * m->o.headroom > dt->max) {
        snprintf(buf, size, "max |x| %.3g exceeds %s's %g with x%g headroom", t->max_abs, dt->name, dt->max,
                 m->o.headroom);
        return false;
    }
    if (flush > m->o.underflow_share) {
        snprintf(buf, size, "%.2f%% of the values would flush to zero in %s", 100.0 * flush, dt->name);
        return false;
    }
    snprintf(buf, size, "%s holds max |x| %.3g (x%g headroom) with %.2f%% flushed to zero", dt->name, t->max_abs,
             m->o.headroom, 100.0 * flush);
    return true;
}

mxp_status mxp_monitor_suggest(const mxp_monitor *m, const char *name, mxp_dtype *dtype, char *reason,
                               size_t reason_size)
{
    const mon_tensor *t = NULL;
    if (!dtype)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_monitor_suggest: dtype is NULL");
    mxp_status st = lookup(m, name, "mxp_monitor_suggest", &t);
    if (st != MXP_OK)
        return st;
    char f16[120], bf16[120], buf[256];
    if (t->nonfinite > 0) {
        *dtype = MXP_F32;
        snprintf(buf, sizeof buf, "%lld inf/NaN values were seen: keep float32 and find their cause",
                 (long long)t->nonfinite);
    } else if (holds(m, t, mxp_dtype_get_traits(MXP_F16), f16, sizeof f16)) {
        *dtype = MXP_F16;
        snprintf(buf, sizeof buf, "%s", f16);
    } else if (holds(m, t, mxp_dtype_get_traits(MXP_BF16), bf16, sizeof bf16)) {
        *dtype = MXP_BF16;
        snprintf(buf, sizeof buf, "%s; %s", f16, bf16);
    } else {
        *dtype = MXP_F32;
        snprintf(buf, sizeof buf, "%s; %s: float32", f16, bf16);
    }
    if (reason && reason_size)
        snprintf(reason, reason_size, "%s", buf);
    return MXP_OK;
}
