/* The AVX-512 bodies of bfloat16 rows in float32 arithmetic (bf16-narrow.h):
 * softmax, log_softmax (bf16-softmax/avx512f.c), layer norm, RMS norm and
 * L2 normalization (bf16-norm/avx512f.c), sixteen lanes a step: the
 * float64 sums as two registers (element i into lane i mod 16), exp by
 * FMAs and vscalefps, nearest even into bfloat16 by integer arithmetic.
 * The last n mod 16 elements in the portable code. */
#ifndef MXP_KERNELS_BF16_NARROW_AVX512_H
#define MXP_KERNELS_BF16_NARROW_AVX512_H

#include <immintrin.h>

#include "kernels/bf16-narrow.h"
#include "kernels/bf16-round-avx512.h"
#include "kernels/nexpf-avx512.h"
#include "kernels/stream-loop.h"

/* Sixteen elements of the row from i as float32 (mxp_narrow_x). */
static inline __m512 mxp_narrow_load_avx512(const mxp_narrow_src *x, size_t i)
{
    __m512 v;
    if (x->f32)
        v = _mm512_loadu_ps((const float *)x->x + i);
    else
        v = _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)((const uint16_t *)x->x + i))),
            16));
    return x->mask ? _mm512_add_ps(v, _mm512_loadu_ps(x->mask + i)) : v;
}

/* mxp_f32_to_bf16_rne on sixteen lanes, stored at y: by vcvtneps2bf16
 * where the file is built at the avx512bf16 level (the same bits; the
 * integer rounding is some ten operations a vector, a third of softmax's
 * output pass), else by integer arithmetic. */
static inline void mxp_narrow_store_avx512(uint16_t *y, __m512 v)
{
#ifdef __AVX512BF16__
    _mm256_storeu_si256((__m256i *)(void *)y, mxp_f32_to_bf16_rne_hw_avx512(v));
#else
    _mm256_storeu_si256((__m256i *)(void *)y, mxp_f32_to_bf16_rne_avx512(v));
#endif
}

/* The two float64 registers of sixteen sums into s[16]. */
static inline void mxp_narrow_lanes_avx512(double s[16], __m512d lo, __m512d hi)
{
    _mm512_storeu_pd(s, lo);
    _mm512_storeu_pd(s + 8, hi);
}

static inline void mxp_narrow_add_avx512(__m512d *lo, __m512d *hi, __m512 v, int sq)
{
    const __m512d a = _mm512_cvtps_pd(_mm512_castps512_ps256(v));
    const __m512d b = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    if (sq) { /* exact squares: one rounding, as the add of the product */
        *lo = _mm512_fmadd_pd(a, a, *lo);
        *hi = _mm512_fmadd_pd(b, b, *hi);
    } else {
        *lo = _mm512_add_pd(*lo, a);
        *hi = _mm512_add_pd(*hi, b);
    }
}

/* The row's last n - i < 16 elements (x + mask as float32) in a vector of
 * their own by masked loads, the other lanes -inf: the tails below in
 * registers, the same bits as the portable code's element by element. */
static inline __m512 mxp_narrow_tail_avx512(const mxp_narrow_src *x, size_t i, size_t n)
{
    const __mmask16 k = (__mmask16)((1u << (n - i)) - 1);
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 v;
    if (x->f32)
        v = _mm512_mask_loadu_ps(ninf, k, (const float *)x->x + i);
    else
        v = _mm512_mask_mov_ps(ninf, k, _mm512_castsi512_ps(_mm512_slli_epi32(
                                            _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(k, (const uint16_t *)x->x + i)), 16)));
    return x->mask ? _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, x->mask + i)) : v; /* -inf + 0 beyond */
}

static inline double mxp_narrow_sum_avx512(const mxp_narrow_src *x, size_t n, float c, int sq)
{
    const __m512 vc = _mm512_set1_ps(c);
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = mxp_narrow_load_avx512(x, i);
        mxp_narrow_add_avx512(&lo, &hi, sq ? _mm512_sub_ps(v, vc) : v, sq);
    }
    double s[16];
    mxp_narrow_lanes_avx512(s, lo, hi);
    return mxp_narrow_fold(s, x, i, n, c, sq);
}

/* Thirty-two elements of a norm row (no mask) from i as float32, lanes 0
 * .. 15 in *lo: bfloat16 by one load and two vpermw that put each element
 * in the top half of its lane (vpmovzxwd and vpslld: a uop more). */
MXP_INLINE void mxp_narrow_load32_avx512(const void *x, int f32, size_t i, __m512 *lo, __m512 *hi)
{
    if (f32) {
        *lo = _mm512_loadu_ps((const float *)x + i);
        *hi = _mm512_loadu_ps((const float *)x + i + 16);
        return;
    }
    const __m512i v = _mm512_loadu_si512((const void *)((const uint16_t *)x + i));
    const __m512i up = _mm512_set_epi16(15, 0, 14, 0, 13, 0, 12, 0, 11, 0, 10, 0, 9, 0, 8, 0, 7, 0, 6, 0, 5, 0, 4, 0, 3,
                                        0, 2, 0, 1, 0, 0, 0);
    const __mmask32 top = 0xaaaaaaaau;
    *lo = _mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(top, up, v));
    *hi = _mm512_castsi512_ps(_mm512_maskz_permutexvar_epi16(top, _mm512_add_epi16(up, _mm512_set1_epi16(16)), v));
}

/* mxp_narrow_store_avx512 of 32 lanes: by one vcvtne2ps2bf16 at the
 * avx512bf16 level (float32 subnormals, which it reads as zero, found by
 * vfpclassps and rounded by integer arithmetic). */
static inline void mxp_narrow_store32_avx512(uint16_t *y, __m512 lo, __m512 hi)
{
#ifdef __AVX512BF16__
    if (_kortestz_mask16_u8(_mm512_fpclass_ps_mask(lo, 0x20), _mm512_fpclass_ps_mask(hi, 0x20))) {
        _mm512_storeu_si512((void *)y, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));
        return;
    }
#endif
    _mm256_storeu_si256((__m256i *)(void *)y, mxp_f32_to_bf16_rne_avx512(lo));
    _mm256_storeu_si256((__m256i *)(void *)(y + 16), mxp_f32_to_bf16_rne_avx512(hi));
}

/* Thirty-two elements of a softmax row (x + mask) from i, lanes 0 .. 15
 * in *lo. */
MXP_INLINE void mxp_narrow_xload32_avx512(const mxp_narrow_src *x, size_t i, __m512 *lo, __m512 *hi)
{
    mxp_narrow_load32_avx512(x->x, x->f32, i, lo, hi);
    if (x->mask) {
        *lo = _mm512_add_ps(*lo, _mm512_loadu_ps(x->mask + i));
        *hi = _mm512_add_ps(*hi, _mm512_loadu_ps(x->mask + i + 16));
    }
}

/* Softmax's passes (mxp_narrow_max_fn ...), 32 elements a step, the last
 * n mod 16 in a vector of their own (mxp_narrow_tail_avx512). */
static inline float mxp_narrow_max_avx512(const mxp_narrow_src *x, size_t n, int *nan, float *lo)
{
    *lo = -INFINITY; /* (AVX-512's exp test is one operation: a row's minimum measured no faster) */
    const size_t body = n & ~(size_t)15;
    const __m512 vt = body < n ? mxp_narrow_tail_avx512(x, body, n) : _mm512_set1_ps(-INFINITY);
    __m512 mv = vt, mv1 = vt; /* two chains of vmaxps (softmax-avx512.h) */
    __mmask16 nanv = _mm512_cmp_ps_mask(vt, vt, _CMP_UNORD_Q);
    size_t j = 0;
    for (; j + 32 <= body; j += 32) { /* the first pass reads the row from memory: prefetched as the norms' */
        const char *ahead = (const char *)x->x + (x->f32 ? 4 : 2) * j + MXP_STREAM_PREFETCH;
        _mm_prefetch(ahead, _MM_HINT_T0);
        if (x->f32)
            _mm_prefetch(ahead + 64, _MM_HINT_T0);
        __m512 v, v1;
        mxp_narrow_xload32_avx512(x, j, &v, &v1);
        nanv |= _mm512_cmp_ps_mask(v, v1, _CMP_UNORD_Q);
        mv = _mm512_max_ps(v, mv);
        mv1 = _mm512_max_ps(v1, mv1);
    }
    if (j < body) {
        const __m512 v = mxp_narrow_load_avx512(x, j);
        nanv |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        mv = _mm512_max_ps(v, mv);
    }
    *nan = nanv != 0;
    return _mm512_reduce_max_ps(_mm512_max_ps(mv, mv1));
}

/* f32 and masked constants in each copy (the stores to e made the loop
 * reload them from x). */
MXP_INLINE double mxp_narrow_exps_k_avx512(const mxp_narrow_src *xp, size_t n, float m, float *e, int lg, int f32,
                                           int masked)
{
    const mxp_narrow_src xs = { xp->x, f32, masked ? xp->mask : NULL }, *x = &xs;
    const size_t body = n & ~(size_t)15, tail = n - body;
    const __m512 vm = _mm512_set1_ps(m);
    __m512d lo = _mm512_setzero_pd(), hi = _mm512_setzero_pd();
    for (size_t i = 0; i < body;) { /* a block: MXP_NARROW_BLOCK groups of 16, added in order */
        const size_t end = body - i < 16 * MXP_NARROW_BLOCK ? body : i + 16 * MXP_NARROW_BLOCK;
        __m512 f = _mm512_setzero_ps();
        for (; i + 32 <= end; i += 32) {
            __m512 a, b;
            mxp_narrow_xload32_avx512(x, i, &a, &b);
            const __m512 ea = mxp_nexp_ps_k_avx512(_mm512_sub_ps(a, vm), 1);
            const __m512 eb = mxp_nexp_ps_k_avx512(_mm512_sub_ps(b, vm), 1);
            if (!lg) {
                _mm512_storeu_ps(e + i, ea);
                _mm512_storeu_ps(e + i + 16, eb);
            }
            f = _mm512_add_ps(_mm512_add_ps(f, ea), eb);
        }
        if (i < end) {
            const __m512 ev = mxp_nexp_ps_k_avx512(_mm512_sub_ps(mxp_narrow_load_avx512(x, i), vm), 1);
            if (!lg)
                _mm512_storeu_ps(e + i, ev);
            f = _mm512_add_ps(f, ev);
            i += 16;
        }
        mxp_narrow_add_avx512(&lo, &hi, f, 0);
    }
    double s[16], t = 0;
    mxp_narrow_lanes_avx512(s, lo, hi);
    if (tail) {
        float et[16];
        _mm512_storeu_ps(et, mxp_nexp_ps_k_avx512(_mm512_sub_ps(mxp_narrow_tail_avx512(x, body, n), vm), 1));
        for (size_t k = 0; k < tail; k++) /* in order, as the portable code's tail */
            t += e[body + k] = et[k];
    }
    return mxp_sum16_fold(s, t);
}

static inline double mxp_narrow_exps_avx512(const mxp_narrow_src *x, size_t n, float m, float low, float *e, int lg)
{
    (void)low;
    if (x->mask)
        return mxp_narrow_exps_k_avx512(x, n, m, e, lg, x->f32, 1);
    return x->f32 ? mxp_narrow_exps_k_avx512(x, n, m, e, lg, 1, 0) : mxp_narrow_exps_k_avx512(x, n, m, e, lg, 0, 0);
}

/* One output vector from element i (16 lanes: v the x + mask, or e). */
MXP_INLINE __m512 mxp_narrow_smout16_avx512(__m512 v, __m512 vm, __m512 vr, __m512 vls, int lg)
{
    return lg ? _mm512_sub_ps(_mm512_sub_ps(v, vm), vls) : _mm512_mul_ps(v, vr);
}

static inline void mxp_narrow_smout_avx512(uint16_t *y, const mxp_narrow_src *x, size_t n, float m, const float *e,
                                           double sum, int lg)
{
    const size_t body = n & ~(size_t)15, tail = n - body;
    float r, ls;
    mxp_narrow_softmax_scalars(sum, lg, &r, &ls);
    const __m512 vm = _mm512_set1_ps(m), vr = _mm512_set1_ps(r), vls = _mm512_set1_ps(ls);
    size_t i = 0;
    for (; i + 32 <= body; i += 32) {
        __m512 a, b;
        if (lg) {
            mxp_narrow_xload32_avx512(x, i, &a, &b);
        } else {
            a = _mm512_loadu_ps(e + i);
            b = _mm512_loadu_ps(e + i + 16);
        }
        mxp_narrow_store32_avx512(y + i, mxp_narrow_smout16_avx512(a, vm, vr, vls, lg),
                                  mxp_narrow_smout16_avx512(b, vm, vr, vls, lg));
    }
    if (i < body)
        mxp_narrow_store_avx512(y + i, mxp_narrow_smout16_avx512(lg ? mxp_narrow_load_avx512(x, i)
                                                                    : _mm512_loadu_ps(e + i),
                                                                 vm, vr, vls, lg));
    if (tail) {
        uint16_t yt[16];
        const __mmask16 k = (__mmask16)((1u << tail) - 1);
        mxp_narrow_store_avx512(yt, mxp_narrow_smout16_avx512(lg ? mxp_narrow_tail_avx512(x, body, n)
                                                                 : _mm512_maskz_loadu_ps(k, e + body),
                                                              vm, vr, vls, lg));
        memcpy(y + body, yt, tail * sizeof yt[0]);
    }
}

static inline void mxp_softmax_bf16_avx512(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n, float *e,
                                           int lg)
{
    mxp_narrow_softmax_rows(y, x, rows, n, e, lg, mxp_narrow_max_avx512, mxp_narrow_exps_avx512,
                            mxp_narrow_smout_avx512);
}

/* mxp_sum32_fold of four registers of float64 lanes (lanes 0 .. 7 in
 * a[0]): the same additions, lane against lane. */
static inline double mxp_narrow_fold32_avx512(const __m512d a[4], double t)
{
    const __m512d w = _mm512_add_pd(_mm512_add_pd(a[0], a[2]), _mm512_add_pd(a[1], a[3]));
    const __m512d p = _mm512_add_pd(w, _mm512_permute_pd(w, 0x55));
    const __m512d q = _mm512_add_pd(p, _mm512_permutex_pd(p, _MM_SHUFFLE(1, 0, 3, 2)));
    const __m256d r = _mm256_add_pd(_mm512_castpd512_pd256(q), _mm512_extractf64x4_pd(q, 1));
    return _mm256_cvtsd_f64(r) + t;
}

static inline void mxp_narrow_fadd_avx512(__m512d a[2], __m512 f)
{
    a[0] = _mm512_add_pd(a[0], _mm512_cvtps_pd(_mm512_castps512_ps256(f)));
    a[1] = _mm512_add_pd(a[1], _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(f), 1))));
}

/* The fast sums of mxp_narrow_fsums_portable: the 32 float32 lanes two
 * registers, the float64 ones four; f32, sub (c != 0) and s1 constant in
 * each copy (MXP_NARROW_FSUMS_COPIES). */
MXP_INLINE void mxp_narrow_fsums_k_avx512(const mxp_narrow_src *x, int f32, size_t n, float c, int sub, double *s1,
                                          double *s2)
{
    const int one = s1 != NULL;
    __m512d a[4], q[4];
    for (int k = 0; k < 4; k++)
        a[k] = q[k] = _mm512_setzero_pd();
    const void *xp = x->x;
    const __m512 vc = _mm512_set1_ps(c);
    size_t i = 0;
    while (i + 32 <= n) {
        __m512 f0 = _mm512_setzero_ps(), f1 = f0, g0 = f0, g1 = f0;
        for (int v = 0; v < MXP_NARROW_FBLOCK && i + 32 <= n; v++, i += 32) {
            __m512 d0, d1;
            if (!sub) { /* the first pass reads the row from memory */
                const char *ahead = (const char *)xp + (f32 ? 4 : 2) * i + MXP_STREAM_PREFETCH;
                _mm_prefetch(ahead, _MM_HINT_T0);
                if (f32)
                    _mm_prefetch(ahead + 64, _MM_HINT_T0);
            }
            mxp_narrow_load32_avx512(xp, f32, i, &d0, &d1);
            if (sub) {
                d0 = _mm512_sub_ps(d0, vc);
                d1 = _mm512_sub_ps(d1, vc);
            }
            if (one) {
                f0 = _mm512_add_ps(f0, d0);
                f1 = _mm512_add_ps(f1, d1);
            }
            g0 = _mm512_fmadd_ps(d0, d0, g0);
            g1 = _mm512_fmadd_ps(d1, d1, g1);
        }
        if (one) {
            mxp_narrow_fadd_avx512(a, f0);
            mxp_narrow_fadd_avx512(a + 2, f1);
        }
        mxp_narrow_fadd_avx512(q, g0);
        mxp_narrow_fadd_avx512(q + 2, g1);
    }
    double ta, tq;
    mxp_narrow_ftails(x, i, n, c, &ta, &tq);
    if (one)
        *s1 = mxp_narrow_fold32_avx512(a, ta);
    *s2 = mxp_narrow_fold32_avx512(q, tq);
}

static inline void mxp_narrow_fsums_avx512(const mxp_narrow_src *x, size_t n, float c, double *s1, double *s2)
{
    MXP_NARROW_FSUMS_COPIES(mxp_narrow_fsums_k_avx512, x, n, c, s1, s2);
}

/* A norm row's outputs, 32 a step: h = (x - c) * r (x * r: l2), then the
 * weight and bias; f32, l2 and centre constant in each copy
 * (MXP_NARROW_ROW_COPIES). */
MXP_INLINE void mxp_narrow_norm_row_avx512(uint16_t *y, const mxp_narrow_src *x, int f32, size_t n, const float *w,
                                           const float *b, float c, float r, int l2, int centre)
{
    const void *xp = x->x;
    const __m512 vc = _mm512_set1_ps(c), vr = _mm512_set1_ps(r);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 v[2];
        mxp_narrow_load32_avx512(xp, f32, i, &v[0], &v[1]);
        for (int h = 0; h < 2; h++) {
            if (l2) {
                v[h] = _mm512_mul_ps(v[h], vr);
                continue;
            }
            v[h] = _mm512_mul_ps(centre ? _mm512_sub_ps(v[h], vc) : v[h], vr); /* x - 0 is x */
            const size_t j = i + 16 * (size_t)h;
            if (w && b)
                v[h] = _mm512_fmadd_ps(v[h], _mm512_loadu_ps(w + j), _mm512_loadu_ps(b + j));
            else if (w)
                v[h] = _mm512_mul_ps(v[h], _mm512_loadu_ps(w + j));
            else if (b)
                v[h] = _mm512_add_ps(v[h], _mm512_loadu_ps(b + j));
        }
        mxp_narrow_store32_avx512(y + i, v[0], v[1]);
    }
    if (l2)
        mxp_narrow_l2_out(y, x, i, n, r);
    else
        mxp_narrow_norm_out(y, x, i, n, w, b, c, r);
}

static inline void mxp_norm_bf16_avx512(uint16_t *const *y, const mxp_narrow_src *x, size_t rows, size_t n,
                                        const float *w, const float *b, double eps, int mode)
{
    float c[MXP_NARROW_ROWS], r[MXP_NARROW_ROWS];
    mxp_narrow_norm_rows_scalars(x, rows, n, eps, mode, mxp_narrow_fsums_avx512, mxp_narrow_sum_avx512, c, r);
    for (size_t k = 0; k < rows; k++) {
        const mxp_narrow_src xk = x[k]; /* a copy the stores to y cannot touch */
        MXP_NARROW_ROW_COPIES(mxp_narrow_norm_row_avx512, y[k], &xk, n, w, b, c[k], r[k], mode);
    }
}

#endif
