/* The reference's arithmetic on 4 int64 lanes (AVX2): vpmuldq for acc * m,
 * variable shifts for the floor and the remainder (logical shifts serve:
 * the biased product is positive), the mode's increment as a compare
 * mask; AVX2 has no unsigned or 64-bit min/max compare, but rem and half
 * are below 2^62 and the clamp compares signed.  The portable twin is
 * scalar.c. */
#include <immintrin.h>
#include <stdbool.h>
#include <string.h>

#include "kernels/requant-kernels.h"
#include "mxp/convert.h"

#define MXP_INLINE static inline __attribute__((always_inline))

MXP_INLINE __m256i requant4(__m256i acc, __m256i m, __m256i s, __m256i zp, __m256i lo, __m256i hi, int mode)
{
    const __m256i one = _mm256_set1_epi64x(1), zero = _mm256_setzero_si256();
    const __m256i bias = _mm256_set1_epi64x((int64_t)1 << 62);
    const __m256i p = _mm256_mul_epi32(acc, m); /* signed low halves: |p| < 2^55 */
    const __m256i u = _mm256_add_epi64(p, bias);
    const __m256i rem = _mm256_and_si256(u, _mm256_sub_epi64(_mm256_sllv_epi64(one, s), one));
    const __m256i half = _mm256_sllv_epi64(one, _mm256_sub_epi64(s, one));
    const __m256i fl = _mm256_sub_epi64(_mm256_srlv_epi64(u, s), _mm256_srlv_epi64(bias, s));
    const __m256i above = _mm256_cmpgt_epi64(rem, half), tie = _mm256_cmpeq_epi64(rem, half);
    const __m256i inexact = _mm256_xor_si256(_mm256_cmpeq_epi64(rem, zero), _mm256_set1_epi64x(-1));
    __m256i inc = zero; /* all ones where 1 is added */
    switch (mode) {
    case MXP_ROUND_NEAREST_EVEN:
        inc = _mm256_or_si256(above, _mm256_andnot_si256(_mm256_cmpeq_epi64(_mm256_and_si256(fl, one), zero), tie));
        break;
    case MXP_ROUND_NEAREST_AWAY:
        inc = _mm256_or_si256(above, _mm256_and_si256(tie, _mm256_cmpgt_epi64(p, zero)));
        break;
    case MXP_ROUND_TOWARD_ZERO:
        inc = _mm256_and_si256(inexact, _mm256_cmpgt_epi64(zero, p));
        break;
    case MXP_ROUND_UP:
        inc = inexact;
        break;
    default:
        break;
    }
    __m256i x = _mm256_add_epi64(_mm256_sub_epi64(fl, inc), zp); /* inc is -1 where set */
    x = _mm256_blendv_epi8(x, lo, _mm256_cmpgt_epi64(lo, x));
    return _mm256_blendv_epi8(x, hi, _mm256_cmpgt_epi64(x, hi));
}

/* The low bytes of eight int64 lanes (values in [-128, 255]). */
MXP_INLINE void store8(uint8_t *dst, __m256i a, __m256i b)
{
    const __m256i low = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    const __m128i a4 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(a, low));
    const __m128i b4 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(b, low));
    const __m128i w = _mm_packs_epi32(a4, b4); /* exact: |x| < 2^15 */
    const __m128i bytes = _mm_shuffle_epi8(w, _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1));
    _mm_storel_epi64((__m128i *)(void *)dst, bytes);
}

MXP_INLINE __m256i widen4(const int32_t *p)
{
    return _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* Eight values from acc, m and shift (per_col) at q. */
MXP_INLINE void requant8(uint8_t *dst, const int32_t *acc, const int32_t *m, const int32_t *shift, int per_col,
                         __m256i mv, __m256i sv, __m256i z, __m256i l, __m256i h, int mode)
{
    __m256i m0 = mv, m1 = mv, s0 = sv, s1 = sv;
    if (per_col) {
        m0 = widen4(m), m1 = widen4(m + 4);
        s0 = widen4(shift), s1 = widen4(shift + 4);
    }
    store8(dst, requant4(widen4(acc), m0, s0, z, l, h, mode), requant4(widen4(acc + 4), m1, s1, z, l, h, mode));
}

MXP_INLINE void run(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m, const int32_t *shift, int per_col,
                    int32_t zp, int32_t lo, int32_t hi, int mode)
{
    const __m256i z = _mm256_set1_epi64x(zp), l = _mm256_set1_epi64x(lo), h = _mm256_set1_epi64x(hi);
    const __m256i mv = _mm256_set1_epi64x(m[0]), sv = _mm256_set1_epi64x(shift[0]);
    size_t q = 0;
    for (; q + 8 <= len; q += 8)
        requant8(dst + q, acc + q, per_col ? m + q : m, per_col ? shift + q : shift, per_col, mv, sv, z, l, h, mode);
    if (q < len) { /* the last values through zero-padded copies (shift 1 in the padding) */
        int32_t a8[8] = { 0 }, m8[8] = { 0 }, s8[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
        uint8_t d8[8];
        memcpy(a8, acc + q, (len - q) * sizeof *acc);
        if (per_col) {
            memcpy(m8, m + q, (len - q) * sizeof *m);
            memcpy(s8, shift + q, (len - q) * sizeof *shift);
        }
        requant8(d8, a8, m8, s8, per_col, mv, sv, z, l, h, mode);
        memcpy(dst + q, d8, len - q);
    }
}

void mxp_s32_requant__avx2(uint8_t *dst, const int32_t *acc, size_t len, const int32_t *m, const int32_t *shift,
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

/* mxp_s32_requant_f64__scalar on 4 float64 lanes: the products exact
 * (checked below 2^53); for int8/uint8 C, t clamped into [lo - zp, hi -
 * zp] first (the same codes as saturating after rounding), rounded to
 * nearest even, + zp, packed; the last len % 4 by the twin. */
typedef struct f64_consts {
    __m256d alpha, big, zero, sign, clo, chi, qlo, qhi;
    __m128i zp;
} f64_consts;

MXP_INLINE f64_consts consts_f64(const mxp_s32_requant_f64_params *p)
{
    return (f64_consts){ _mm256_set1_pd(p->alpha),    _mm256_set1_pd(0x1p53),
                         _mm256_setzero_pd(),         _mm256_set1_pd(-0.0),
                         _mm256_set1_pd(p->clamp_lo), _mm256_set1_pd(p->clamp_hi),
                         _mm256_set1_pd((double)p->lo - p->zp), _mm256_set1_pd((double)p->hi - p->zp),
                         _mm_set1_epi32(p->zp) };
}

/* Column q's parameters (4 lanes) as vectors. */
MXP_INLINE void params_f64(const mxp_s32_requant_f64_params *p, size_t q, __m256d *mv, __m256d *pv, __m256d *bv)
{
    *mv = p->per_col ? _mm256_loadu_pd(p->m + q) : _mm256_set1_pd(p->m[0]);
    *pv = p->per_col ? _mm256_loadu_pd(p->p + q) : _mm256_set1_pd(p->p[0]);
    *bv = !p->bias ? _mm256_setzero_pd() : p->bias_per_col ? _mm256_loadu_pd(p->bias + q) : _mm256_set1_pd(p->bias[0]);
}

/* Columns q .. q + 4 of a row with their scale m p and bias (bv; used
 * where p->bias): false, nothing stored, where a lane's product acc m
 * reaches 2^53 (exact: the caller knows none does, not tested). */
MXP_INLINE bool vec_f64(uint8_t *dst, const int32_t *acc, size_t q, __m256d mv, __m256d pv, __m256d bv,
                        const mxp_s32_requant_f64_params *p, const f64_consts *c, int exact)
{
    const __m256d t0 =
        _mm256_mul_pd(_mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)(const void *)(acc + q))), mv);
    if (!exact && _mm256_movemask_pd(_mm256_cmp_pd(_mm256_andnot_pd(c->sign, t0), c->big, _CMP_NLT_UQ)))
        return false;
    __m256d t = _mm256_mul_pd(_mm256_mul_pd(t0, pv), c->alpha);
    if (p->bias)
        t = _mm256_add_pd(t, bv);
    if (p->relu)
        t = _mm256_max_pd(t, c->zero);
    if (p->clamp)
        t = _mm256_min_pd(_mm256_max_pd(t, c->clo), c->chi);
    if (p->f32) {
        _mm_storeu_ps((float *)(void *)(dst + 4 * q), _mm256_cvtpd_ps(t));
        return true;
    }
    t = _mm256_min_pd(_mm256_max_pd(t, c->qlo), c->qhi);
    const __m128i v = _mm_add_epi32(
        _mm256_cvtpd_epi32(_mm256_round_pd(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)), c->zp);
    const __m128i w16 = p->lo == 0 ? _mm_packus_epi32(v, v) : _mm_packs_epi32(v, v);
    const __m128i b8 = p->lo == 0 ? _mm_packus_epi16(w16, w16) : _mm_packs_epi16(w16, w16);
    const int32_t four = _mm_cvtsi128_si32(b8);
    memcpy(dst + q, &four, 4);
    return true;
}

MXP_INLINE size_t row_f64_k(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p,
                            int exact)
{
    const f64_consts c = consts_f64(p);
    size_t q = 0;
    for (; q + 4 <= len; q += 4) {
        __m256d mv, pv, bv;
        params_f64(p, q, &mv, &pv, &bv);
        if (!vec_f64(dst, acc, q, mv, pv, bv, p, &c, exact))
            return q;
    }
    if (q == len)
        return len;
    mxp_s32_requant_f64_params rest = *p; /* the last elements by the twin */
    if (p->per_col) {
        rest.m += q;
        rest.p += q;
    }
    if (p->bias && p->bias_per_col)
        rest.bias += q;
    rest.rows = 1;
    return q + mxp_s32_requant_f64__scalar(dst + (p->f32 ? 4 : 1) * q, acc + q, len - q, &rest);
}

/* Wide rows: without the 2^53 test where the caller knows it (exact; the
 * test was a quarter of the operations of a 128 x 1024 layer's finish). */
MXP_INLINE size_t row_f64(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    return row_f64_k(dst, acc, len, p, 0);
}

MXP_INLINE size_t row_f64_exact(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    return row_f64_k(dst, acc, len, p, 1);
}

/* Rows of 4 nv outputs, nv <= 8 (the small-N GEMMs of convolutions with
 * 16 or 32 output channels: a call a row cost three times the
 * arithmetic): the columns' parameters made once for every row, the
 * vectors of a row written out (nv and exact constants in each copy).
 * row_f64's bits. */
MXP_INLINE size_t rows_narrow(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p,
                              int nv, int exact)
{
    const f64_consts c = consts_f64(p);
    __m256d mv[8], pv[8], bv[8];
    for (int v = 0; v < nv; v++)
        params_f64(p, 4 * (size_t)v, &mv[v], &pv[v], &bv[v]);
    const size_t rows = p->rows ? p->rows : 1, es = p->f32 ? 4 : 1;
    for (size_t r = 0; r < rows; r++)
        for (int v = 0; v < nv; v++)
            if (!vec_f64(dst + r * p->ld_dst * es, acc + r * p->ld_acc, 4 * (size_t)v, mv[v], pv[v], bv[v], p, &c,
                         exact))
                return r * len + 4 * (size_t)v;
    return rows * len;
}

#define MXP_RQ_NARROW(nv)                                                                                            \
    case nv:                                                                                                         \
        return prm.exact ? rows_narrow(dst, acc, len, &prm, nv, 1) : rows_narrow(dst, acc, len, &prm, nv, 0);

size_t mxp_s32_requant_f64__avx2(uint8_t *dst, const int32_t *acc, size_t len, const mxp_s32_requant_f64_params *p)
{
    const mxp_s32_requant_f64_params prm = *p; /* a copy the stores to dst cannot change */
    switch (len % 4 == 0 ? len / 4 : 0) {
    MXP_RQ_NARROW(1)
    MXP_RQ_NARROW(2)
    MXP_RQ_NARROW(3)
    MXP_RQ_NARROW(4)
    MXP_RQ_NARROW(6)
    MXP_RQ_NARROW(8)
    default:
        return mxp_s32_requant_f64_rows(prm.exact ? row_f64_exact : row_f64, dst, acc, len, &prm);
    }
}
#undef MXP_RQ_NARROW
