/* The finish of the integer GEMM (src/gemm/int8.c): each block of int32
 * sums, while it is hot, into C: int32 C as it is (beta 1: a saturating
 * add), or in float64 scale * acc, alpha, beta * C and the epilogue, rounded
 * once into a floating C, or into int8/uint8 C with its zero point
 * (requantization); plain requantization and dequantization by the kernels
 * of src/kernels/s32-requant/ and s32-dequant/ where they serve. */
#include <math.h>
#include <string.h>

#include "core/alloc-internal.h"
#include "gemm/int8-internal.h"
#include "mxp/alloc.h"

enum { CHUNK = 256 };

static bool is_int8(mxp_dtype t)
{
    return t == MXP_U8 || t == MXP_S8;
}

static bool has_epilogue(const mxp_gemm_opts *o)
{
    return o->bias || o->bias_kind || o->activation || o->clamp;
}

static mxp_int8_scale split_scale(float s)
{
    mxp_int8_scale c = { 0, 1.0, 1, s };
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
static double scaled(int32_t acc, const mxp_int8_scale *c)
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


/* int32 C: the sums, or C + sums saturated to int32 when beta is 1. */
static void finish_s32(const mxp_int8_finish *f, int32_t *c, const int32_t *acc, size_t len)
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
static void finish_f64_exact(const mxp_int8_scale *sc, bool per_col, double *c, const int32_t *acc, size_t len,
                             const mxp_convert_opts *co)
{
    int64_t p[CHUNK];
    double t[CHUNK];
    for (size_t q = 0; q < len; q++)
        p[q] = acc[q] * sc[per_col ? q : 0].m;
    mxp_convert(t, MXP_F64, p, MXP_S64, len, co);
    for (size_t q = 0; q < len; q++) {
        const mxp_int8_scale *s = &sc[per_col ? q : 0];
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
static void requantize(const mxp_int8_finish *f, const double *t, unsigned char *c, size_t len,
                       const mxp_convert_opts *co)
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

/* Sums acc[0 .. len) of row i, columns j .. j+len, into C. */
static void finish_chunk(const mxp_int8_finish *f, size_t i, size_t j, size_t len, const int32_t *acc)
{
    unsigned char *crow = f->c + (i * f->ldc + j) * f->cs;
    if (f->per_row && f->ct == MXP_F32 && (f->dequant || f->dequant_bias)) { /* A per row: its pair into the kernel */
        const bool zp = f->o->a_zero_points && f->b_sums;
        const mxp_s32_dequant_row row = { f->o->a_scales ? f->o->a_scales[i] : 1.0f, zp ? f->o->a_zero_points[i] : 0,
                                          zp ? f->b_sums + j : NULL };
        const float *scales = f->o->scales ? f->o->scales + (f->per_col ? j : 0) : &f->one_scale;
        const int mode = (int)f->o->convert.rounding;
        if (f->dequant ? f->dequant((float *)(void *)crow, acc, len, scales, f->per_col, &row, mode)
                       : f->dequant_bias((float *)(void *)crow, acc, len, scales, f->per_col, &row,
                                         f->bias_f32 ? f->bias_f32 + j : NULL, f->beta, mode))
            return;
    }
    int32_t row_acc[CHUNK];
    if (f->per_row && f->o->a_zero_points && f->b_sums) { /* the sums less row i's zero point times B's */
        const uint32_t za = (uint32_t)f->o->a_zero_points[i];
        for (size_t q = 0; q < len; q++)
            row_acc[q] = mxp_wrap_s32((uint32_t)acc[q] - za * (uint32_t)f->b_sums[j + q]);
        acc = row_acc;
    }
    if (f->ct == MXP_S32) {
        finish_s32(f, (int32_t *)(void *)crow, acc, len);
        return;
    }
    if (f->shifts) { /* plain requantization in integers: a kernel (src/kernels/s32-requant/) */
        f->requant(crow, acc, len, f->qm + (f->per_col ? j : 0), f->qs + (f->per_col ? j : 0), f->per_col, f->zp,
                   f->lo, f->hi, (int)f->o->convert.rounding);
        return;
    }
    if (f->rq64) { /* the float64 requantization in vectors; the general path from where it stops */
        mxp_s32_requant_f64_params prm = f->rq;
        double b = 0;
        if (f->per_col) {
            prm.m += j;
            prm.p += j;
        }
        if (f->rq_bias) {
            prm.bias = f->rq_bias + j;
        } else if (f->o->bias) { /* per row */
            mxp_gemm_widen(&f->epi.bias, &b, (const unsigned char *)f->o->bias + i * mxp_dtype_itemsize(f->o->bias_dtype),
                           1);
            prm.bias = &b;
        }
        const size_t done = isfinite(b) ? f->rq64(crow, acc, len, &prm) : 0; /* a NaN or infinite bias: below */
        if (done == len)
            return;
        crow += done * f->cs;
        acc += done;
        j += done;
        len -= done;
    }
    /* the scales of columns j .. j+len: the per-column ones, or row i's (the shifts and rq64 paths
       above never run with A per row) */
    bool per_col = f->per_col;
    const float *scales = f->o->scales ? f->o->scales + (per_col ? j : 0) : &f->one_scale;
    const mxp_int8_scale *sc = f->scale + (per_col ? j : 0);
    float row_scales[CHUNK];
    mxp_int8_scale row_sc[CHUNK];
    if (f->per_row && f->o->a_scales) { /* float32(a_scales[i] s_j): a float64 product is exact */
        const double sa = f->o->a_scales[i];
        for (size_t q = 0; q < len; q++)
            row_scales[q] = (float)(sa * (double)scales[per_col ? q : 0]);
        scales = row_scales;
        sc = NULL; /* split below, where the general path needs them */
        per_col = true;
    }
    if (f->dequant && /* float32 C, plain, a mode a kernel rounds in: the same bits */
        f->dequant((float *)(void *)crow, acc, len, scales, per_col, NULL, (int)f->o->convert.rounding))
        return;
    if (f->dequant_bias && f->dequant_bias((float *)(void *)crow, acc, len, scales, per_col, NULL,
                                           f->bias_f32 ? f->bias_f32 + j : NULL, f->beta, (int)f->o->convert.rounding))
        return;
    mxp_convert_opts co = f->o->convert;
    co.index_offset += i * f->n + j; /* stochastic rounding: C's elements in row-major order */
    if (!sc) {
        for (size_t q = 0; q < len; q++)
            row_sc[q] = split_scale(row_scales[q]);
        sc = row_sc;
    }
    if (f->plain && f->ct == MXP_F64) {
        finish_f64_exact(sc, per_col, (double *)(void *)crow, acc, len, &co);
        return;
    }
    double t[CHUNK], tmp[CHUNK];
    for (size_t q = 0; q < len; q++)
        t[q] = scaled(acc[q], &sc[per_col ? q : 0]);
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
            mxp_gemm_epilogue_row(&f->epi, t, i, j, len, tmp);
    }
    if (is_int8(f->ct))
        requantize(f, t, crow, len, &co);
    else
        mxp_convert(crow, f->ct, t, MXP_F64, len, &co);
}

/* The float64 requantization kernel where it serves (f->rq64 NULL
 * otherwise, or when its arrays cannot be had: the general path). */
static mxp_status rq64_init(mxp_int8_finish *f, const mxp_gemm_opts *o, size_t n)
{
    const bool act = o->activation == MXP_ACT_NONE || o->activation == MXP_ACT_RELU;
    if (!(is_int8(f->ct) || (f->ct == MXP_F32 && !f->plain)) || f->shifts || f->per_row || f->beta != 0 ||
        !isfinite(f->alpha) ||
        !act || o->convert.flags ||
        o->convert.rounding != MXP_ROUND_NEAREST_EVEN)
        return MXP_OK;
    if (o->bias && o->bias_kind != MXP_BIAS_PER_COL && o->bias_kind != MXP_BIAS_PER_ROW)
        return MXP_OK;
    const size_t ns = f->per_col ? n : 1, nb = o->bias && o->bias_kind == MXP_BIAS_PER_COL ? n : 0;
    double *buf = mxp_malloc((2 * ns + nb) * sizeof(double));
    if (!buf)
        return MXP_OK;
    for (size_t j = 0; j < ns; j++) {
        buf[j] = (double)f->scale[j].m;
        buf[ns + j] = f->scale[j].p;
    }
    if (nb)
        mxp_gemm_widen(&f->epi.bias, buf + 2 * ns, o->bias, nb);
    for (size_t j = 0; j < nb; j++)
        if (!isfinite(buf[2 * ns + j])) { /* NaN or infinite biases: the general path's rules */
            mxp_free(buf);
            return MXP_OK;
        }
    f->rq_m = buf;
    f->rq_p = buf + ns;
    f->rq_bias = nb ? buf + 2 * ns : NULL;
    f->rq = (mxp_s32_requant_f64_params){ f->rq_m, f->rq_p, f->per_col, f->alpha, NULL, nb != 0,
                                          o->activation == MXP_ACT_RELU, o->clamp, o->clamp_lo, o->clamp_hi,
                                          f->zp, f->lo, f->hi, f->ct == MXP_F32, 1, 0, 0, 0 };
    f->rq64 = mxp_s32_requant_f64_kernel(mxp_isa_current());
    return MXP_OK;
}

void mxp_int8_finish_bound(mxp_int8_finish *f, double acc_max)
{
    if (!f->rq64)
        return;
    double mmax = 0;
    for (size_t j = 0; j < (f->per_col ? f->n : 1); j++)
        mmax = fabs(f->rq_m[j]) > mmax ? fabs(f->rq_m[j]) : mmax;
    f->rq.exact = acc_max * mmax < 0x1p53;
}

void mxp_int8_finish_block(void *ctx, size_t i0, size_t mc, size_t j0, size_t nc, const void *wb, size_t ldw)
{
    const mxp_int8_finish *f = ctx;
    const int32_t *w = wb;
    if (f->rq64 && !(f->o->bias && !f->rq_bias)) { /* the kernel row by row, its parameters set once */
        mxp_s32_requant_f64_params prm = f->rq;
        if (f->per_col) {
            prm.m += j0;
            prm.p += j0;
        }
        if (f->rq_bias)
            prm.bias = f->rq_bias + j0;
        prm.ld_dst = f->ldc, prm.ld_acc = ldw;
        for (size_t r = 0; r < mc && nc;) { /* the rows in one call, until one stops */
            prm.rows = mc - r;
            const size_t done = f->rq64(f->c + ((i0 + r) * f->ldc + j0) * f->cs, w + r * ldw, nc, &prm);
            r += done / nc;
            if (r == mc)
                break;
            for (size_t q = done % nc; q < nc; q += CHUNK) /* from the lane that needs rounding to odd */
                finish_chunk(f, i0 + r, j0 + q, nc - q < CHUNK ? nc - q : CHUNK, w + r * ldw + q);
            r++;
        }
        return;
    }
    for (size_t r = 0; r < mc; r++)
        for (size_t q = 0; q < nc; q += CHUNK)
            finish_chunk(f, i0 + r, j0 + q, nc - q < CHUNK ? nc - q : CHUNK, w + r * ldw + q);
}

/* float32 C with alpha 1, a float32 bias per column or none, beta C
 * (finite beta), nothing else, not plain: the dequantization kernels with
 * a bias take it (finite biases only: NaN payloads are left to mxp_convert);
 * *bias is the bias or NULL */
static bool epi_kernel_ok(const mxp_gemm_opts *o, size_t n, double alpha, double beta, mxp_dtype ct,
                          const float **bias)
{
    *bias = NULL;
    if (!(alpha == 1 && isfinite(beta) && (o->bias || beta != 0) && !o->activation && !o->clamp && ct == MXP_F32 &&
          !o->convert.flags && o->convert.overflow == MXP_OVERFLOW_INF))
        return false;
    if (!o->bias)
        return true;
    if (o->bias_kind != MXP_BIAS_PER_COL || o->bias_dtype != MXP_F32)
        return false;
    const float *b = o->bias;
    for (size_t j = 0; j < n; j++)
        if (!isfinite(b[j]))
            return false;
    *bias = b;
    return true;
}

mxp_status mxp_int8_finish_init(mxp_int8_finish *f, const mxp_gemm_opts *o, mxp_dtype c_type, void *c, size_t ldc,
                                size_t n, double alpha, double beta)
{
    memset(f, 0, sizeof *f);
    f->o = o;
    mxp_gemm_epilogue_init(&f->epi, o);
    f->ct = c_type;
    f->c = c;
    f->ldc = ldc;
    f->cs = mxp_dtype_itemsize(c_type);
    f->n = n;
    f->alpha = alpha;
    f->beta = beta;
    f->epilogue = has_epilogue(o);
    f->per_col = o->scales && o->n_scales > 1;
    f->one_scale = 1.0f;
    f->plain = alpha == 1 && beta == 0 && !f->epilogue;
    f->zp = o->c_zero_point;
    f->lo = c_type == MXP_U8 ? 0 : -128;
    f->hi = c_type == MXP_U8 ? 255 : 127;
    f->one = split_scale(o->scales ? o->scales[0] : 1.0f);
    if (f->per_col && !(f->cols = mxp_workspace_get(n * sizeof *f->cols))) /* kept between calls */
        return MXP_ERR_NO_MEMORY;
    for (size_t j = 0; f->per_col && j < n; j++)
        f->cols[j] = split_scale(o->scales[j]);
    f->scale = f->per_col ? f->cols : &f->one;
    f->per_row = o->a_zero_points || o->a_scales;
    f->shifts = f->plain && is_int8(c_type) && !o->convert.flags && o->convert.rounding != MXP_ROUND_STOCHASTIC &&
                !f->per_row;
    for (size_t j = 0; j < (f->per_col ? n : 1) && f->shifts; j++)
        f->shifts = f->scale[j].shift != 0;
    const mxp_rounding rm = o->convert.rounding;
    const mxp_isa isa = mxp_isa_current();
    if (f->plain && c_type == MXP_F32 && !o->convert.flags && o->convert.overflow == MXP_OVERFLOW_INF)
        f->dequant = mxp_s32_dequant_f32_kernel(isa, rm);
    if (!f->plain && epi_kernel_ok(o, n, alpha, beta, c_type, &f->bias_f32))
        f->dequant_bias = mxp_s32_dequant_bias_f32_kernel(isa, rm);
    f->one_m = (int32_t)f->one.m;
    f->one_s = f->one.shift;
    if (f->shifts) {
        f->requant = mxp_s32_requant_kernel(isa);
        f->qm = &f->one_m;
        f->qs = &f->one_s;
        if (f->per_col) {
            if (!(f->qms = mxp_workspace_get(2 * n * sizeof *f->qms))) {
                mxp_workspace_put(f->cols);
                f->cols = NULL;
                return MXP_ERR_NO_MEMORY;
            }
            for (size_t j = 0; j < n; j++) {
                f->qms[j] = (int32_t)f->cols[j].m; /* |m| < 2^24 */
                f->qms[n + j] = f->cols[j].shift;
            }
            f->qm = f->qms;
            f->qs = f->qms + n;
        }
    }
    return rq64_init(f, o, n);
}

void mxp_int8_finish_release(mxp_int8_finish *f)
{
    mxp_workspace_put(f->cols);
    mxp_workspace_put(f->qms);
    mxp_free(f->rq_m);
}
