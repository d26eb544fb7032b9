/* The reference's arithmetic on 8 int64 lanes: vpmuldq for acc * m,
 * variable shifts for the floor and the remainder, the mode's increment as
 * a mask, vpmovqb for the bytes. */
#include <immintrin.h>
#include <stdbool.h>

#include "kernels/requant-kernels.h"
#include "mxp/convert.h"

#define MXP_INLINE static inline __attribute__((always_inline))

MXP_INLINE __m512i requant8(__m512i acc, __m512i m, __m512i s, __m512i zp, __m512i lo, __m512i hi, int mode)
{
    const __m512i one = _mm512_set1_epi64(1), bias = _mm512_set1_epi64((int64_t)1 << 62);
    const __m512i p = _mm512_mul_epi32(acc, m); /* signed low halves: |p| < 2^55 */
    const __m512i u = _mm512_add_epi64(p, bias);
    const __m512i rem = _mm512_and_si512(u, _mm512_sub_epi64(_mm512_sllv_epi64(one, s), one));
    const __m512i half = _mm512_sllv_epi64(one, _mm512_sub_epi64(s, one));
    const __m512i fl = _mm512_sub_epi64(_mm512_srlv_epi64(u, s), _mm512_srlv_epi64(bias, s));
    __mmask8 inc = 0;
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        inc = _mm512_cmpgt_epu64_mask(rem, half) |
              (_mm512_cmpeq_epu64_mask(rem, half) & _mm512_test_epi64_mask(fl, one));
        break;
    case MXP_ROUND_NEAREST_AWAY:
        inc = _mm512_cmpgt_epu64_mask(rem, half) |
              (_mm512_cmpeq_epu64_mask(rem, half) & _mm512_cmpgt_epi64_mask(p, _mm512_setzero_si512()));
        break;
    case MXP_ROUND_TOWARD_ZERO:
        inc = _mm512_test_epi64_mask(rem, rem) & _mm512_cmplt_epi64_mask(p, _mm512_setzero_si512());
        break;
    case MXP_ROUND_UP:
        inc = _mm512_test_epi64_mask(rem, rem);
        break;
    default:
        break;
    }
    const __m512i x = _mm512_add_epi64(_mm512_mask_add_epi64(fl, inc, fl, one), zp);
    return _mm512_min_epi64(_mm512_max_epi64(x, lo), hi);
}

MXP_INLINE void run(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m, const int32_t *shift, int per_col,
                    int32_t zp, int32_t lo, int32_t hi, int mode)
{
    const __m512i z = _mm512_set1_epi64(zp), l = _mm512_set1_epi64(lo), h = _mm512_set1_epi64(hi);
    __m512i mv = _mm512_set1_epi64(m[0]), sv = _mm512_set1_epi64(shift[0]);
    size_t q = 0;
    for (; q + 8 <= len; q += 8) {
        if (per_col) {
            mv = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(m + q)));
            sv = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(shift + q)));
        }
        const __m512i a = _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(acc + q)));
        _mm_storel_epi64((__m128i *)(void *)(dst + q), _mm512_cvtepi64_epi8(requant8(a, mv, sv, z, l, h, mode)));
    }
    if (q < len) {
        const __mmask8 k = (__mmask8)((1u << (len - q)) - 1);
        if (per_col) {
            mv = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(k, m + q));
            sv = _mm512_cvtepi32_epi64(_mm256_mask_loadu_epi32(_mm256_set1_epi32(1), k, shift + q));
        }
        const __m512i a = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(k, acc + q));
        _mm512_mask_cvtepi64_storeu_epi8(dst + q, k, requant8(a, mv, sv, z, l, h, mode));
    }
}

void mxp_s32_requant__avx512f(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m, const int32_t *shift,
                              int per_col, int32_t zp, int32_t lo, int32_t hi, int mode)
{
    switch (mode) { /* one loop per mode, the switch hoisted */
    case MXP_ROUND_NEAREST_EVEN: run(dst, acc, len, m, shift, per_col, zp, lo, hi, MXP_ROUND_NEAREST_EVEN); break;
    case MXP_ROUND_NEAREST_AWAY: run(dst, acc, len, m, shift, per_col, zp, lo, hi, MXP_ROUND_NEAREST_AWAY); break;
    case MXP_ROUND_TOWARD_ZERO: run(dst, acc, len, m, shift, per_col, zp, lo, hi, MXP_ROUND_TOWARD_ZERO); break;
    case MXP_ROUND_UP: run(dst, acc, len, m, shift, per_col, zp, lo, hi, MXP_ROUND_UP); break;
    default: run(dst, acc, len, m, shift, per_col, zp, lo, hi, MXP_ROUND_DOWN); break;
    }
}

/* mxp_s32_requant_f64__scalar on 8 float64 lanes: the products exact
 * (checked below 2^53 unless p->exact); for int8/uint8 C, t clamped into
 * [lo - zp, hi - zp], converted to int32 rounding to nearest even, + zp,
 * vpmovdb. */
typedef struct f64_consts {
    __m512d alpha, big, clo, chi, zero, qlo, qhi;
    __m256i zp;
} f64_consts;

MXP_INLINE f64_consts consts_f64(const mxp_s32_requant_f64_params *p)
{
    return (f64_consts){ _mm512_set1_pd(p->alpha),  _mm512_set1_pd(0x1p53),
                         _mm512_set1_pd(p->clamp_lo), _mm512_set1_pd(p->clamp_hi),
                         _mm512_setzero_pd(),        _mm512_set1_pd((double)p->lo - p->zp),
                         _mm512_set1_pd((double)p->hi - p->zp), _mm256_set1_epi32(p->zp) };
}

/* t of columns q .. q + 8 of a row under mask k (0xff: all eight) with
 * their scale m p (pv; folded: p alpha, one exact product) and bias (bv;
 * used where p->bias); *ok false where a lane's product acc m reaches
 * 2^53 (exact: the caller knows none does, not tested). */
MXP_INLINE __m512d value_f64(const int32_t *acc, size_t q, __mmask8 k, __m512d mv, __m512d pv, __m512d bv,
                             const mxp_s32_requant_f64_params *p, const f64_consts *c, int exact, int folded, bool *ok)
{
    const __m256i a = k == 0xff ? _mm256_loadu_si256((const __m256i *)(const void *)(acc + q))
                                : _mm256_maskz_loadu_epi32(k, acc + q);
    const __m512d t0 = _mm512_mul_pd(_mm512_cvtepi32_pd(a), mv);
    *ok = exact || !(_mm512_cmp_pd_mask(_mm512_abs_pd(t0), c->big, _CMP_NLT_UQ) & k);
    __m512d t = folded ? _mm512_mul_pd(t0, pv) : _mm512_mul_pd(_mm512_mul_pd(t0, pv), c->alpha);
    if (p->bias)
        t = _mm512_add_pd(t, bv);
    if (p->relu)
        t = _mm512_max_pd(t, c->zero);
    if (p->clamp)
        t = _mm512_min_pd(_mm512_max_pd(t, c->clo), c->chi);
    return t;
}

/* The codes of t (int8/uint8 C) as int32 lanes: clamped into [lo - zp,
 * hi - zp] first (integer bounds: the same codes as saturating after the
 * rounding), rounded to int32, + zp. */
MXP_INLINE __m256i codes_f64(__m512d t, const f64_consts *c)
{
    t = _mm512_min_pd(_mm512_max_pd(t, c->qlo), c->qhi);
    return _mm256_add_epi32(_mm512_cvt_roundpd_epi32(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), c->zp);
}

MXP_INLINE void store_f64(uint8_t *dst, size_t q, __mmask8 k, __m512d t, int f32, const f64_consts *c)
{
    if (f32)
        _mm256_mask_storeu_ps(dst + 4 * q, k, _mm512_cvtpd_ps(t));
    else if (k == 0xff)
        _mm_storel_epi64((__m128i *)(void *)(dst + q), _mm256_cvtepi32_epi8(codes_f64(t, c)));
    else
        _mm_mask_storeu_epi8(dst + q, k, _mm256_cvtepi32_epi8(codes_f64(t, c)));
}

/* Column q's parameters (8 lanes under k) as vectors. */
MXP_INLINE void params_f64(const mxp_s32_requant_f64_params *p, size_t q, __mmask8 k, __m512d *mv, __m512d *pv,
                           __m512d *bv)
{
    if (p->per_col) {
        *mv = _mm512_maskz_loadu_pd(k, p->m + q);
        *pv = _mm512_maskz_loadu_pd(k, p->p + q);
    } else {
        *mv = _mm512_set1_pd(p->m[0]);
        *pv = _mm512_set1_pd(p->p[0]);
    }
    *bv = !p->bias ? _mm512_setzero_pd()
          : p->bias_per_col ? _mm512_maskz_loadu_pd(k, p->bias + q)
                            : _mm512_set1_pd(p->bias[0]);
}

MXP_INLINE __mmask8 mask_f64(size_t len, size_t q)
{
    return len - q >= 8 ? 0xff : (__mmask8)((1u << (len - q)) - 1);
}

MXP_INLINE size_t row_f64(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    const f64_consts c = consts_f64(p);
    for (size_t q = 0; q < len; q += 8) {
        const __mmask8 k = mask_f64(len, q);
        __m512d mv, pv, bv;
        params_f64(p, q, k, &mv, &pv, &bv);
        bool ok;
        const __m512d t = value_f64(acc, q, k, mv, pv, bv, p, &c, 0, 0, &ok);
        if (!ok)
            return q;
        store_f64(dst, q, k, t, p->f32, &c);
    }
    return len;
}

/* Rows of at most 32 outputs (the small-N GEMMs of convolutions with 16
 * or 32 output channels: a call a row cost three times the arithmetic):
 * the columns' parameters and masks made once for every row, nv vectors
 * a row written out, two at a time into bytes by one vpmovdb (nv, exact
 * and f32 constants in each copy; where every p alpha is a normal float64
 * or zero, that product exact, it replaces the two).  row_f64's bits. */
MXP_INLINE size_t rows_narrow(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p,
                              int nv, int exact, int f32)
{
    const f64_consts c = consts_f64(p);
    __m512d mv[4], pv[4], bv[4];
    __mmask8 k[4];
    bool normal = true;
    for (int v = 0; v < nv; v++) {
        k[v] = mask_f64(len, 8 * (size_t)v);
        params_f64(p, 8 * (size_t)v, k[v], &mv[v], &pv[v], &bv[v]);
        const __m512d pa = _mm512_mul_pd(pv[v], c.alpha);
        normal = normal && !_mm512_fpclass_pd_mask(pa, 0x20 | 0x10 | 0x08 | 0x80 | 0x01); /* subnormal, inf, NaN */
    }
    if (normal)
        for (int v = 0; v < nv; v++)
            pv[v] = _mm512_mul_pd(pv[v], c.alpha);
    const size_t rows = p->rows ? p->rows : 1;
    for (size_t r = 0; r < rows; r++) {
        uint8_t *d = dst + r * p->ld_dst * (f32 ? 4 : 1);
        const int32_t *a = acc + r * p->ld_acc;
        for (int v = 0; v < nv; v += 2) {
            const size_t q = 8 * (size_t)v;
            bool ok0, ok1 = true;
            const __m512d t0 = value_f64(a, q, k[v], mv[v], pv[v], bv[v], p, &c, exact, normal, &ok0);
            if (!ok0)
                return r * len + q;
            if (v + 1 == nv) {
                store_f64(d, q, k[v], t0, f32, &c);
                break;
            }
            const __m512d t1 =
                value_f64(a, q + 8, k[v + 1], mv[v + 1], pv[v + 1], bv[v + 1], p, &c, exact, normal, &ok1);
            if (f32 || !ok1) {
                store_f64(d, q, k[v], t0, f32, &c);
                if (!ok1)
                    return r * len + q + 8;
                store_f64(d, q + 8, k[v + 1], t1, f32, &c);
                continue;
            }
            const __m512i pair = _mm512_inserti64x4(_mm512_castsi256_si512(codes_f64(t0, &c)), codes_f64(t1, &c), 1);
            const __mmask16 k2 = (__mmask16)(k[v] | (unsigned)k[v + 1] << 8);
            if (k2 == 0xffff)
                _mm_storeu_si128((__m128i *)(void *)(d + q), _mm512_cvtepi32_epi8(pair));
            else
                _mm_mask_storeu_epi8(d + q, k2, _mm512_cvtepi32_epi8(pair));
        }
    }
    return rows * len;
}

#define MXP_RQ_NARROW(nv)                                                                                            \
    case nv:                                                                                                         \
        return prm.exact ? (prm.f32 ? rows_narrow(dst, acc, len, &prm, nv, 1, 1)                                     \
                                    : rows_narrow(dst, acc, len, &prm, nv, 1, 0))                                    \
                         : (prm.f32 ? rows_narrow(dst, acc, len, &prm, nv, 0, 1)                                     \
                                    : rows_narrow(dst, acc, len, &prm, nv, 0, 0));

size_t mxp_s32_requant_f64__avx512f(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    const mxp_s32_requant_f64_params prm = *p; /* a copy the stores to dst cannot change */
    switch ((len + 7) / 8) {
    MXP_RQ_NARROW(1)
    MXP_RQ_NARROW(2)
    MXP_RQ_NARROW(3)
    MXP_RQ_NARROW(4)
    default: return mxp_s32_requant_f64_rows(row_f64, dst, acc, len, &prm);
    }
}
#undef MXP_RQ_NARROW
