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
 * (checked below 2^53); for int8/uint8 C, t clamped into [lo - zp, hi -
 * zp], converted to int32 rounding to nearest even, + zp, vpmovdb. */
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

/* Columns q .. q + 8 of a row under mask k (0xff: all eight) with their
 * scale m p and bias (bv; used where p->bias): false, nothing stored,
 * where a lane's product acc m reaches 2^53. */
MXP_INLINE bool vec_f64(uint8_t *dst, const int32_t *acc, size_t q, __mmask8 k, __m512d mv, __m512d pv, __m512d bv,
                        const mxp_s32_requant_f64_params *p, const f64_consts *c)
{
    const __m256i a = k == 0xff ? _mm256_loadu_si256((const __m256i *)(const void *)(acc + q))
                                : _mm256_maskz_loadu_epi32(k, acc + q);
    const __m512d t0 = _mm512_mul_pd(_mm512_cvtepi32_pd(a), mv);
    if (_mm512_cmp_pd_mask(_mm512_abs_pd(t0), c->big, _CMP_NLT_UQ) & k)
        return false;
    __m512d t = _mm512_mul_pd(_mm512_mul_pd(t0, pv), c->alpha);
    if (p->bias)
        t = _mm512_add_pd(t, bv);
    if (p->relu)
        t = _mm512_max_pd(t, c->zero);
    if (p->clamp)
        t = _mm512_min_pd(_mm512_max_pd(t, c->clo), c->chi);
    if (p->f32) {
        _mm256_mask_storeu_ps(dst + 4 * q, k, _mm512_cvtpd_ps(t));
        return true;
    }
    /* clamped into [lo - zp, hi - zp] first (integer bounds: the same
       codes as saturating after the rounding), rounded to int32 */
    t = _mm512_min_pd(_mm512_max_pd(t, c->qlo), c->qhi);
    const __m256i v = _mm256_add_epi32(_mm512_cvt_roundpd_epi32(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), c->zp);
    if (k == 0xff)
        _mm_storel_epi64((__m128i *)(void *)(dst + q), _mm256_cvtepi32_epi8(v));
    else
        _mm_mask_storeu_epi8(dst + q, k, _mm256_cvtepi32_epi8(v));
    return true;
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
        if (!vec_f64(dst, acc, q, k, mv, pv, bv, p, &c))
            return q;
    }
    return len;
}

/* Rows of at most 32 outputs (the small-N GEMMs of convolutions with 16
 * or 32 output channels: a call a row cost three times the arithmetic):
 * the columns' parameters and masks made once for every row, nv vectors
 * a row written out (nv a constant in each copy).  row_f64's bits. */
MXP_INLINE size_t rows_narrow(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p,
                              int nv)
{
    const f64_consts c = consts_f64(p);
    __m512d mv[4], pv[4], bv[4];
    __mmask8 k[4];
    for (int v = 0; v < nv; v++) {
        k[v] = mask_f64(len, 8 * (size_t)v);
        params_f64(p, 8 * (size_t)v, k[v], &mv[v], &pv[v], &bv[v]);
    }
    const size_t rows = p->rows ? p->rows : 1, es = p->f32 ? 4 : 1;
    for (size_t r = 0; r < rows; r++)
        for (int v = 0; v < nv; v++)
            if (!vec_f64(dst + r * p->ld_dst * es, acc + r * p->ld_acc, 8 * (size_t)v, k[v], mv[v], pv[v], bv[v], p,
                         &c))
                return r * len + 8 * (size_t)v;
    return rows * len;
}

size_t mxp_s32_requant_f64__avx512f(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    const mxp_s32_requant_f64_params prm = *p; /* a copy the stores to dst cannot change */
    switch ((len + 7) / 8) {
    case 1: return rows_narrow(dst, acc, len, &prm, 1);
    case 2: return rows_narrow(dst, acc, len, &prm, 2);
    case 3: return rows_narrow(dst, acc, len, &prm, 3);
    case 4: return rows_narrow(dst, acc, len, &prm, 4);
    default: return mxp_s32_requant_f64_rows(row_f64, dst, acc, len, &prm);
    }
}
