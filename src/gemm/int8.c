/* Integer GEMM, mxp_gemm's path for uint8 or int8 A by int8 B (docs/gemm.md,
 * "Integer GEMM"): the checks that only integer inputs have, the int32 sums
 * from the driver (src/gemm/int8-driver.c), and the finish of each block of
 * sums while it is hot: int32 C as it is (beta 1: a saturating add), or in
 * float64 scale * acc, alpha, beta * C and the epilogue, rounded once into
 * a floating C, or into int8/uint8 C with its zero point (requantization). */
#include <math.h>
#include <string.h>

#include "core/alloc-internal.h"
#include "core/error.h"
#include "gemm/int8-internal.h"
#include "kernels/requant-kernels.h"
#include "mxp/cpu.h"
#include "mxp/alloc.h"
#include "mxp/threads.h"

enum { CHUNK = 256 };

static bool is_int8(mxp_dtype t)
{
    return t == MXP_U8 || t == MXP_S8;
}

static bool is_float(mxp_dtype t)
{
    return mxp_dtype_is_valid(t) && mxp_dtype_get_traits(t)->kind == MXP_KIND_FLOAT;
}

bool mxp_gemm_int8_input(mxp_dtype t)
{
    return is_int8(t);
}

mxp_status mxp_gemm_int8_check_types(mxp_dtype at, mxp_dtype bt, mxp_dtype ct)
{
    if (!is_int8(at) && !is_int8(bt)) {
        if (is_float(ct))
            return MXP_OK;
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: C is %s but A and B are %s and %s; an integer C needs "
                         "uint8 or int8 A and int8 B", mxp_dtype_name(ct), mxp_dtype_name(at), mxp_dtype_name(bt));
    }
    if (!is_int8(at) || bt != MXP_S8)
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: A is %s and B is %s; integer GEMM multiplies uint8 or int8 "
                         "A by int8 B (floating A and B otherwise)", mxp_dtype_name(at), mxp_dtype_name(bt));
    if (!is_float(ct) && !is_int8(ct) && ct != MXP_S32)
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: C is %s; integer GEMM writes int32, int8, uint8 or a "
                         "floating C", mxp_dtype_name(ct));
    return MXP_OK;
}

const char *mxp_gemm_int8_kernel_name(mxp_dtype at, mxp_dtype bt, const mxp_gemm_opts *opts)
{
    if (!is_int8(at) || bt != MXP_S8 || (opts && opts->acc_dtype && opts->acc_dtype != MXP_S32))
        return "invalid";
    return mxp_u8s8_gemm_config_for(mxp_isa_current())->name;
}

/* ---- checks ------------------------------------------------------------------ */

static bool has_epilogue(const mxp_gemm_opts *o)
{
    return o->bias || o->bias_kind || o->activation || o->clamp;
}

/* The largest K for which no sum of K products (A - za)(B - zb) can leave
 * int32, whatever A and B hold: (2^31 - 1) / (dA dB), dA and dB the largest
 * distances from the zero points to the ends of the types' ranges. */
static size_t k_limit(mxp_dtype at, int32_t za, int32_t zb)
{
    const int64_t alo = at == MXP_U8 ? 0 : -128, ahi = at == MXP_U8 ? 255 : 127;
    const int64_t da = za - alo > ahi - za ? za - alo : ahi - za;
    const int64_t db = zb + 128 > 127 - zb ? zb + 128 : 127 - zb;
    return (size_t)(INT32_MAX / (da * db));
}

static mxp_status check_zero_point(const char *name, int32_t z, int32_t lo, int32_t hi, mxp_dtype t)
{
    if (z < lo || z > hi)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: %s = %d is outside %s's range [%d, %d]", name, (int)z,
                         mxp_dtype_name(t), (int)lo, (int)hi);
    return MXP_OK;
}

static mxp_status check_int8(size_t n, size_t k, double alpha, mxp_dtype at, double beta, mxp_dtype ct,
                             const mxp_gemm_opts *o)
{
    const bool ua = at == MXP_U8;
    mxp_status st = check_zero_point("a_zero_point", o->a_zero_point, ua ? 0 : -128, ua ? 255 : 127, at);
    if (st == MXP_OK)
        st = check_zero_point("b_zero_point", o->b_zero_point, -128, 127, MXP_S8);
    if (st == MXP_OK && is_int8(ct))
        st = check_zero_point("c_zero_point", o->c_zero_point, ct == MXP_U8 ? 0 : -128, ct == MXP_U8 ? 255 : 127, ct);
    if (st != MXP_OK)
        return st;
    if (!is_int8(ct) && o->c_zero_point != 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: c_zero_point = %d, but C is %s; only int8/uint8 C has "
                         "a zero point", (int)o->c_zero_point, mxp_dtype_name(ct));
    if (ct == MXP_S32) {
        if (alpha != 1 || (beta != 0 && beta != 1))
            return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: int32 C holds the exact sums: alpha must be 1 and beta "
                             "0 or 1 (got alpha %g, beta %g)", alpha, beta);
        if (o->scales)
            return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: scales need an int8/uint8 or floating C; int32 C holds "
                             "the unscaled sums");
        if (has_epilogue(o))
            return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: the epilogue (bias, activation, clamp) needs an "
                             "int8/uint8 or floating C; int32 C holds the exact sums");
    } else if (!is_float(ct) && beta != 0) {
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: beta = %g, but %s C is only written (requantized): beta "
                         "must be 0", beta, mxp_dtype_name(ct));
    }
    if (!o->scales && o->n_scales != 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: n_scales = %zu but scales is NULL", o->n_scales);
    if (o->scales && o->n_scales != 1 && o->n_scales != n)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: n_scales = %zu: give 1 scale (per tensor) or n = %zu "
                         "(one per column of C)", o->n_scales, n);
    for (size_t j = 0; o->scales && j < o->n_scales; j++)
        if (!isfinite(o->scales[j]))
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: scales[%zu] = %g is not finite", j,
                             (double)o->scales[j]);
    const size_t kmax = k_limit(at, o->a_zero_point, o->b_zero_point);
    if (k > kmax)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_gemm: k = %zu is beyond %zu, the most for which int32 sums of "
                         "(A - a_zero_point)(B - b_zero_point) cannot overflow with zero points %d and %d", k, kmax,
                         (int)o->a_zero_point, (int)o->b_zero_point);
    return MXP_OK;
}

/* ---- the finish: sums into C ------------------------------------------------- */

/* A scale as m * p exactly: m an odd integer (|m| < 2^24, 0 for a zero
 * scale), p > 0 a power of two, 2^-shift when 1 <= shift <= 62 (shift 0
 * otherwise); s the scale itself. */
typedef struct col_scale {
    int64_t m;
    double p;
    int shift;
    float s;
} col_scale;

static col_scale split_scale(float s)
{
    col_scale c = { 0, 1.0, 1, s };
    if (s == 0)
        return c;
    int e;
    int64_t m = (int64_t)ldexp(frexp(s, &e), 24); /* float: 24 significant bits, exact */
    e -= 24;
    while (m % 2 == 0) {
        m /= 2;
        e++;
    }
    c.m = m;
    c.p = ldexp(1.0, e);
    c.shift = e <= -1 && e >= -62 ? -e : 0;
    return c;
}

/* scale * acc in float64: exact when it fits 53 bits (|acc * m| < 2^53),
 * otherwise rounded to odd, which keeps the one later rounding into C (24
 * bits at most, 31 for an integer) the correct rounding of the exact
 * product.  A zero product gets IEEE's sign. */
static double scaled(int32_t acc, const col_scale *c)
{
    const int64_t p = acc * c->m; /* |p| < 2^55 */
    if (p == 0)
        return (double)acc * (double)c->s;
    uint64_t u = p < 0 ? 0 - (uint64_t)p : (uint64_t)p;
    double two_s = 1.0;
    if (u >> 53) {
        const int s = u >> 54 ? 2 : 1;
        u = (u >> s) | ((u & ((1u << s) - 1)) != 0); /* round to odd */
        two_s = s == 2 ? 4.0 : 2.0;
    }
    const double d = (double)u * two_s * c->p; /* powers of two: exact */
    return p < 0 ? -d : d;
}

typedef struct finish {
    const mxp_gemm_opts *o;
    mxp_dtype ct;
    unsigned char *c;
    size_t ldc, cs, n;
    double alpha, beta;
    bool plain;               /* alpha 1, beta 0, no epilogue: t = scale * acc */
    bool shifts;              /* plain int8 C, every scale with a shift, a deterministic mode, no counters */
    bool epilogue;
    const col_scale *scale;   /* scale[j], or scale[0] for every column */
    bool per_col;
    int32_t zp, lo, hi;       /* int8/uint8 C */
    const int32_t *qm, *qs;   /* shifts: the scales' m and shift, n entries (per_col) or 1 */
    mxp_s32_requant_fn requant;
    bool dequant_simd;        /* plain float32 C in a hardware rounding mode (AVX2: nearest even) */
    bool avx512;              /* the AVX-512 dequantization kernels, else the AVX2 ones */
    const float *dequant_bias; /* as dequant_simd, with only a finite float32 bias per column as epilogue */
    float one_scale;          /* 1.0 when no scales are given */
} finish;

/* int32 C: the sums, or C + sums saturated to int32 when beta is 1. */
static void finish_s32(const finish *f, int32_t *c, const int32_t *acc, size_t len)
{
    if (f->beta == 0) {
        memcpy(c, acc, len * sizeof *c);
        return;
    }
    for (size_t q = 0; q < len; q++) {
        const int64_t x = (int64_t)c[q] + acc[q];
        c[q] = x > INT32_MAX ? INT32_MAX : x < INT32_MIN ? INT32_MIN : (int32_t)x;
    }
}

/* float64 C, plain: scale * acc = (acc m) p rounded once with the mode
 * (acc m may need 55 bits), then times the power of two, exactly. */
static void finish_f64_exact(const finish *f, size_t j, double *c, const int32_t *acc, size_t len,
                             const mxp_convert_opts *co)
{
    int64_t p[CHUNK];
    double t[CHUNK];
    for (size_t q = 0; q < len; q++)
        p[q] = acc[q] * f->scale[f->per_col ? j + q : 0].m;
    mxp_convert(t, MXP_F64, p, MXP_S64, len, co);
    for (size_t q = 0; q < len; q++) {
        const col_scale *s = &f->scale[f->per_col ? j + q : 0];
        t[q] = p[q] == 0 ? (double)acc[q] * (double)s->s : t[q] * s->p;
    }
    memcpy(c, t, len * sizeof *t);
}

/* t rounded to an integer with a deterministic mode, as mxp_convert to
 * int32 rounds it (NaN gives 0), but clamped to +-2^40 instead: beyond
 * every int8 range either way.  Exact: t - trunc(t) is. */
static int64_t round_to_int(double t, mxp_rounding mode)
{
    if (!(t > -0x1p40 && t < 0x1p40))
        return t != t ? 0 : t > 0 ? (int64_t)1 << 40 : -((int64_t)1 << 40);
    const int64_t q = (int64_t)t; /* toward zero */
    const double r = t - (double)q; /* in (-1, 1) */
    const bool odd = q % 2 != 0;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        return r > 0.5 || (r == 0.5 && odd) ? q + 1 : r < -0.5 || (r == -0.5 && odd) ? q - 1 : q;
    case MXP_ROUND_NEAREST_AWAY: return r >= 0.5 ? q + 1 : r <= -0.5 ? q - 1 : q;
    case MXP_ROUND_UP: return r > 0 ? q + 1 : q;
    case MXP_ROUND_DOWN: return r < 0 ? q - 1 : q;
    default: return q; /* toward zero */
    }
}

/* int8/uint8 C: round(t) with the mode, + zero point, saturated.  The
 * counters, if asked for, count inexact roundings and saturated or NaN
 * values as invalid.  Stochastic rounding and the counters go through
 * mxp_convert (its random stream, its counting), the rest inline. */
static void requantize(const finish *f, const double *t, unsigned char *c, size_t len, const mxp_convert_opts *co)
{
    int64_t v[CHUNK];
    mxp_convert_flags local = { 0 };
    if (co->flags || co->rounding == MXP_ROUND_STOCHASTIC) {
        int32_t v32[CHUNK];
        mxp_convert_opts o = *co;
        if (co->flags)
            o.flags = &local;
        mxp_convert(v32, MXP_S32, t, MXP_F64, len, &o);
        for (size_t q = 0; q < len; q++)
            v[q] = v32[q];
    } else {
        for (size_t q = 0; q < len; q++)
            v[q] = round_to_int(t[q], co->rounding);
    }
    uint64_t invalid = 0;
    for (size_t q = 0; q < len; q++) {
        int64_t x = v[q] + f->zp;
        invalid += x < f->lo || x > f->hi || t[q] != t[q];
        x = x < f->lo ? f->lo : x > f->hi ? f->hi : x;
        if (f->ct == MXP_U8)
            c[q] = (unsigned char)x;
        else
            ((int8_t *)(void *)c)[q] = (int8_t)x;
    }
    if (co->flags) {
        co->flags->inexact += local.inexact;
        co->flags->invalid += invalid;
    }
}

static mxp_s32_requant_fn requant_kernel(void)
{
#if MXP_HAVE_X86_KERNELS
    if (mxp_isa_current() >= MXP_ISA_AVX512)
        return mxp_s32_requant__avx512f;
#endif
    return mxp_s32_requant__scalar;
}

/* Sums acc[0 .. len) of row i, columns j .. j+len, into C. */
static void finish_chunk(const finish *f, size_t i, size_t j, size_t len, const int32_t *acc)
{
    unsigned char *crow = f->c + (i * f->ldc + j) * f->cs;
    if (f->ct == MXP_S32) {
        finish_s32(f, (int32_t *)(void *)crow, acc, len);
        return;
    }
    if (f->shifts) { /* plain requantization in integers: a kernel (src/kernels/s32-requant/) */
        f->requant(crow, acc, len, f->qm + (f->per_col ? j : 0), f->qs + (f->per_col ? j : 0), f->per_col, f->zp,
                   f->lo, f->hi, (int)f->o->convert.rounding);
        return;
    }
#if MXP_HAVE_X86_KERNELS
    if (f->dequant_simd && /* float32 C, plain, a hardware rounding mode: SIMD, the same bits */
        (f->avx512 ? mxp_s32_dequant_f32__avx512f : mxp_s32_dequant_f32__avx2)(
            (float *)(void *)crow, acc, len, f->o->scales ? f->o->scales + (f->per_col ? j : 0) : &f->one_scale,
            f->per_col, (int)f->o->convert.rounding))
        return;
#endif
#if MXP_HAVE_X86_KERNELS
    if (f->dequant_bias &&
        (f->avx512 ? mxp_s32_dequant_bias_f32__avx512f : mxp_s32_dequant_bias_f32__avx2)(
            (float *)(void *)crow, acc, len, f->o->scales ? f->o->scales + (f->per_col ? j : 0) : &f->one_scale,
            f->per_col, f->dequant_bias + j, (int)f->o->convert.rounding))
        return;
#endif
    mxp_convert_opts co = f->o->convert;
    co.index_offset += i * f->n + j; /* stochastic rounding: C's elements in row-major order */
    if (f->plain && f->ct == MXP_F64) {
        finish_f64_exact(f, j, (double *)(void *)crow, acc, len, &co);
        return;
    }
    double t[CHUNK], tmp[CHUNK];
    for (size_t q = 0; q < len; q++)
        t[q] = scaled(acc[q], &f->scale[f->per_col ? j + q : 0]);
    if (!f->plain) {
        if (f->alpha != 1)
            for (size_t q = 0; q < len; q++)
                t[q] *= f->alpha;
        if (f->beta != 0) {
            mxp_convert(tmp, MXP_F64, crow, f->ct, len, NULL);
            for (size_t q = 0; q < len; q++)
                t[q] += f->beta * tmp[q];
        }
        if (f->epilogue)
            mxp_gemm_epilogue_row(f->o, t, i, j, len, tmp);
    }
    if (is_int8(f->ct))
        requantize(f, t, crow, len, &co);
    else
        mxp_convert(crow, f->ct, t, MXP_F64, len, &co);
}

/* mxp_int8_finish_fn */
static void finish_block(void *ctx, size_t i0, size_t mc, size_t j0, size_t nc, const int32_t *w, size_t ldw)
{
    const finish *f = ctx;
    for (size_t r = 0; r < mc; r++)
        for (size_t q = 0; q < nc; q += CHUNK)
            finish_chunk(f, i0 + r, j0 + q, nc - q < CHUNK ? nc - q : CHUNK, w + r * ldw + q);
}

/* ---- the entry ------------------------------------------------------------- */

mxp_status mxp_gemm_int8(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha, const void *a,
                         mxp_dtype a_type, size_t lda, const void *b, mxp_dtype b_type, size_t ldb, double beta,
                         void *c, mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts)
{
    static const mxp_gemm_opts defaults;
    const mxp_gemm_opts *o = opts ? opts : &defaults;
    mxp_status st = check_int8(n, k, alpha, a_type, beta, c_type, o);
    if (st != MXP_OK || m == 0 || n == 0)
        return st;
    if (m > SIZE_MAX / sizeof(int32_t) / n)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_gemm: a %zu x %zu int32 workspace is too large", m, n);
    finish f = { o, c_type, c, ldc, mxp_dtype_itemsize(c_type), n, alpha, beta, false, false, has_epilogue(o),
                 NULL, o->scales && o->n_scales > 1, 0, 0, 0, NULL, NULL, NULL, false, false, NULL, 1.0f };
    f.plain = alpha == 1 && beta == 0 && !f.epilogue;
    f.zp = o->c_zero_point;
    f.lo = c_type == MXP_U8 ? 0 : -128;
    f.hi = c_type == MXP_U8 ? 255 : 127;
    const bool skip = k == 0 || (alpha == 0 && c_type != MXP_S32); /* the sums are 0; A and B unread */
    mxp_int8_job job = { m, n, k, { a, a_type, lda, ta == MXP_TRANS }, { b, b_type, ldb, tb == MXP_TRANS },
                         o->a_zero_point, o->b_zero_point, NULL, 0, finish_block, &f, mxp_get_num_threads() };
    if (o->convert.flags)
        job.max_threads = 1; /* the counters are not shared between threads */
    const mxp_u8s8_gemm_config *cfg = mxp_u8s8_gemm_config_for(mxp_isa_current());
    if (c_type == MXP_S32 && beta == 0 && !skip) { /* the sums go straight into C */
        job.w = c;
        job.ldw = ldc;
        job.finish = NULL;
        return mxp_int8_gemm_drive(cfg, &job);
    }
    col_scale one = split_scale(o->scales ? o->scales[0] : 1.0f), *cols = NULL;
    int32_t *zeros = NULL;
    if (f.per_col && !(cols = mxp_workspace_get(n * sizeof *cols))) /* kept between calls */
        return MXP_ERR_NO_MEMORY;
    for (size_t j = 0; f.per_col && j < n; j++)
        cols[j] = split_scale(o->scales[j]);
    f.scale = f.per_col ? cols : &one;
    f.shifts = f.plain && is_int8(c_type) && !o->convert.flags && o->convert.rounding != MXP_ROUND_STOCHASTIC;
    for (size_t j = 0; j < (f.per_col ? n : 1) && f.shifts; j++)
        f.shifts = f.scale[j].shift != 0;
    const mxp_rounding rm = o->convert.rounding;
    f.avx512 = mxp_isa_current() >= MXP_ISA_AVX512;
    const bool simd_mode = f.avx512 ? (rm == MXP_ROUND_NEAREST_EVEN || rm == MXP_ROUND_UP || rm == MXP_ROUND_DOWN ||
                                       rm == MXP_ROUND_TOWARD_ZERO)
                                    : rm == MXP_ROUND_NEAREST_EVEN && mxp_isa_current() >= MXP_ISA_AVX2;
    f.dequant_simd = f.plain && c_type == MXP_F32 && !o->convert.flags && o->convert.overflow == MXP_OVERFLOW_INF &&
                     simd_mode;
    /* alpha 1, beta 0 and a float32 bias per column, nothing else: the same
     * SIMD path adds it (finite values only: NaN payloads are left to
     * mxp_convert) */
    if (!f.plain && alpha == 1 && beta == 0 && o->bias && o->bias_kind == MXP_BIAS_PER_COL &&
        o->bias_dtype == MXP_F32 && !o->activation && !o->clamp && c_type == MXP_F32 && !o->convert.flags &&
        o->convert.overflow == MXP_OVERFLOW_INF && simd_mode) {
        const float *bias = o->bias;
        bool finite = true;
        for (size_t j = 0; j < n && finite; j++)
            finite = isfinite(bias[j]);
        f.dequant_bias = finite ? bias : NULL;
    }
    int32_t one_m = (int32_t)one.m, one_s = one.shift, *qms = NULL;
    if (f.shifts) {
        f.requant = requant_kernel();
        f.qm = &one_m;
        f.qs = &one_s;
        if (f.per_col) {
            if (!(qms = mxp_workspace_get(2 * n * sizeof *qms))) {
                mxp_workspace_put(cols);
                return MXP_ERR_NO_MEMORY;
            }
            for (size_t j = 0; j < n; j++) {
                qms[j] = (int32_t)cols[j].m; /* |m| < 2^24 */
                qms[n + j] = cols[j].shift;
            }
            f.qm = qms;
            f.qs = qms + n;
        }
    }
    if (skip) { /* every row reads the same n zeros */
        zeros = mxp_malloc(n * sizeof *zeros);
        st = zeros ? MXP_OK : MXP_ERR_NO_MEMORY;
        if (zeros) {
            memset(zeros, 0, n * sizeof *zeros);
            finish_block(&f, 0, m, 0, n, zeros, 0);
        }
    } else {
        st = mxp_int8_gemm_drive(cfg, &job);
    }
    mxp_free(zeros);
    mxp_workspace_put(cols);
    mxp_workspace_put(qms);
    return st;
}
