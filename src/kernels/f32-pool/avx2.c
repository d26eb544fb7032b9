/* Float32 pooling rows, AVX2.  Every output vector stays in registers
 * over the window's offsets (p, q) in order, then is stored once: eight
 * output columns of one channel (NCHW, strides 1 and 2: one_channel_k, the
 * columns outside x masked), or eight channels of a pixel (NHWC, and the
 * global sum's eight lanes along a wide window); the last channels and
 * other strides by the portable loop.  Max: vmaxps
 * (x > a ? x : a), then a NaN x taken (one channel: vmaxps alone, the
 * block redone so where a NaN turns up); sums widened and added in
 * float64.  Below them the plane kernel (one channel, a whole plane
 * a call).  See pool-kernels.h. */
#include <immintrin.h>

#include "kernels/f32-pool/acc-avx2.h"
#include "kernels/pool-kernels.h"
#include "kernels/store-tail-avx2.h"
#include "kernels/stream-loop.h"

/* One block's accumulators over every row and tap.  Max: exact (the
 * portable fold, a NaN tap taken) or fast (vmaxps alone, x > a ? x : a,
 * the same first maximum; the taps' sum notes a NaN, or inf - inf: *redo
 * set, the block is folded again exactly). */
MXP_INLINE void block_k(acc8 *r, const mxp_f32_pool_params *p, int kind, ptrdiff_t s, size_t kw, ptrdiff_t c0,
                        int edge, const __m256i *mk, const __m256 *fm, int exact, int *redo)
{
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw;
    const __m256 fill = _mm256_set1_ps(kind == MXP_POOL_MAX ? -INFINITY : 0.0f);
    __m256 ns = _mm256_setzero_ps();
    acc_init(kind, r);
    for (size_t pr = 0; pr < p->kh; pr++) {
        const float *x = p->rows[pr];
        if (!x)
            continue;
        __m256 h = fill;
        for (size_t t = 0; t < loads; t++) {
            const ptrdiff_t c = c0 + (ptrdiff_t)(s == 2 ? 2 * t : t);
            __m256 tap[2];
            size_t taps = 1;
            if (s == 1) {
                tap[0] = load8(x, c, edge, mk[2 * t], fm[2 * t]);
            } else {
                const __m256 v0 = load8(x, c, edge, mk[2 * t], fm[2 * t]);
                const __m256 v1 = load8(x, c + 8, edge, mk[2 * t + 1], fm[2 * t + 1]);
                tap[0] = evens(v0, v1, 0);
                if (2 * t + 1 < kw) {
                    tap[1] = evens(v0, v1, 1);
                    taps = 2;
                }
            }
            for (size_t u = 0; u < taps; u++) {
                if (kind != MXP_POOL_MAX) {
                    acc_add(kind, r, tap[u]);
                } else if (exact) {
                    h = fold_max(h, tap[u]);
                } else {
                    h = _mm256_max_ps(tap[u], h);
                    ns = _mm256_add_ps(ns, tap[u]);
                }
            }
        }
        if (kind == MXP_POOL_MAX)
            r->m = exact ? fold_max(r->m, h) : _mm256_max_ps(h, r->m);
    }
    *redo = kind == MXP_POOL_MAX && !exact && _mm256_movemask_ps(_mm256_cmp_ps(ns, ns, _CMP_UNORD_Q));
}

/* One channel (NCHW), strides 1 and 2: eight output columns a block, as
 * the AVX-512 kernel's one_channel_k (the same fold orders, the same
 * bits); the last block's n < 8 columns through a local row.  The edge
 * blocks' load masks are made once a block. */
MXP_INLINE void one_channel_k(void *acc, const mxp_f32_pool_params *p, int kind, ptrdiff_t s, size_t kw)
{
    const ptrdiff_t w = (ptrdiff_t)p->w;
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw, size = kind == MXP_POOL_MAX ? 4 : 8;
    const ptrdiff_t span = s == 2 ? 2 * (ptrdiff_t)loads - 2 + 16 : (ptrdiff_t)kw - 1 + 8; /* columns read */
    const __m256 fill = _mm256_set1_ps(kind == MXP_POOL_MAX ? -INFINITY : 0.0f);
    for (size_t j = 0; j < p->ow; j += 8) {
        const size_t n = p->ow - j < 8 ? p->ow - j : 8;
        const ptrdiff_t c0 = (ptrdiff_t)j * s - (ptrdiff_t)p->pw;
        const int edge = c0 < 0 || c0 + span > w;
        __m256i mk[2 * MXP_POOL_WIDE]; /* each load's columns of x (edges) */
        __m256 fm[2 * MXP_POOL_WIDE];  /* the fill outside them */
        for (size_t t = 0; t < 2 * loads; t++) {
            const ptrdiff_t c = c0 + (ptrdiff_t)(s == 2 ? 2 * (t / 2) + 8 * (t % 2) : t / 2 + 8 * (t % 2));
            mk[t] = edge ? cols8(c, w) : _mm256_setzero_si256();
            fm[t] = _mm256_andnot_ps(_mm256_castsi256_ps(mk[t]), fill);
        }
        acc8 r;
        int redo;
        block_k(&r, p, kind, s, kw, c0, edge, mk, fm, 0, &redo);
        if (redo)
            block_k(&r, p, kind, s, kw, c0, edge, mk, fm, 1, &redo);
        if (s == 2)
            unshuffle(&r);
        char *dst = (char *)acc + j * size;
        float *o32 = kind == MXP_POOL_SUM && p->out32 ? p->out32 + j : NULL;
        if (n == 8) {
            acc_store(p, dst, &r, p->div ? p->div + j : NULL, 0, 1, o32);
            continue;
        }
        double d[8] = { 1, 1, 1, 1, 1, 1, 1, 1 }, row[8];
        float row32[8];
        if (p->div)
            memcpy(d, p->div + j, n * sizeof(double));
        acc_store(p, row, &r, d, 0, 1, row32);
        if (o32)
            memcpy(o32, row32, n * sizeof(float));
        else
            memcpy(dst, row, n * size);
    }
}

static void one_channel(void *acc, const mxp_f32_pool_params *p)
{
    MXP_POOL_ONE_CHANNEL(one_channel_k, acc, p);
}

/* Whether the row takes one_channel_k, which quiets NaNs and rounds
 * float32 sums in its stores. */
static inline int one_channel_row(const mxp_f32_pool_params *p)
{
    return p->kw <= MXP_POOL_WIDE && p->ch == 1 && p->s <= 2;
}

static void narrow(void *acc, const mxp_f32_pool_params *p)
{
    if (one_channel_row(p)) {
        one_channel(acc, p);
        return;
    }
    size_t lo[MXP_POOL_WIDE], hi[MXP_POOL_WIDE];
    for (size_t q = 0; q < p->kw; q++)
        mxp_pool_columns(p, q, &lo[q], &hi[q]);
    const size_t ch = p->ch, size = p->kind == MXP_POOL_MAX ? 4 : 8;
    char *a = acc;
    mxp_pool_init(acc, p);
    const size_t c8 = ch / 8 * 8;
    for (size_t j = 0; j < p->ow; j++) {
        for (size_t c = 0; c < c8; c += 8) {
            acc8 r;
            acc_init(p->kind, &r);
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t q = 0; p->rows[pr] && q < p->kw; q++)
                    if (j >= lo[q] && j < hi[q])
                        acc_add(p->kind, &r, _mm256_loadu_ps(p->rows[pr] + (j * p->s + q - p->pw) * ch + c));
            acc_store(p, a + (j * ch + c) * size, &r, NULL, p->div ? p->div[j] : 1, 0, NULL);
        }
        if (c8 < ch)
            mxp_pool_point(acc, p, lo, hi, j, c8);
    }
}

/* Wide windows: each window's columns in turn, channels eight at a time
 * (the last ones by the portable loop); one channel: eight columns at a
 * time for max, the portable chain for sums. */
static void wide(void *acc, const mxp_f32_pool_params *p)
{
    const size_t ch = p->ch, size = p->kind == MXP_POOL_MAX ? 4 : 8, c8 = ch / 8 * 8;
    if (ch == 1 && p->kind != MXP_POOL_MAX) { /* one chain: the additions' order */
        mxp_f32_pool__scalar(acc, p);
        return;
    }
    mxp_pool_init(acc, p);
    for (size_t j = 0; j < p->ow; j++) {
        size_t w0 = j * p->s, w1 = w0 + p->kw;
        w0 = w0 > p->pw ? w0 - p->pw : 0;
        w1 = w1 > p->pw ? w1 - p->pw : 0;
        w1 = w1 < p->w ? w1 : p->w;
        if (ch == 1) { /* eight lane maxima, NaNs noted; the last columns one by one */
            __m256 m = _mm256_set1_ps(-INFINITY), nan = _mm256_setzero_ps();
            float mt = -INFINITY;
            int nant = 0;
            for (size_t pr = 0; pr < p->kh; pr++) {
                const float *x = p->rows[pr];
                size_t w = w0;
                for (; x && w + 8 <= w1; w += 8) {
                    const __m256 v = _mm256_loadu_ps(x + w);
                    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
                    m = _mm256_max_ps(v, m);
                }
                for (; x && w < w1; w++) {
                    nant |= x[w] != x[w];
                    mt = x[w] > mt ? x[w] : mt;
                }
            }
            float l[8];
            _mm256_storeu_ps(l, m);
            for (int k = 0; k < 8; k++)
                mt = l[k] > mt ? l[k] : mt;
            mxp_pool_wide_max1(acc, p, j, w0, w1, mt, nant || _mm256_movemask_ps(nan));
            continue;
        }
        for (size_t c = 0; c < c8; c += 8) {
            acc8 r;
            acc_init(p->kind, &r);
            for (size_t pr = 0; pr < p->kh; pr++)
                for (size_t w = w0; p->rows[pr] && w < w1; w++)
                    acc_add(p->kind, &r, _mm256_loadu_ps(p->rows[pr] + w * ch + c));
            acc_store(p, (char *)acc + (j * ch + c) * size, &r, NULL, p->div ? p->div[j] : 1, 0, NULL);
        }
        for (size_t pr = 0; c8 < ch && pr < p->kh; pr++)
            if (p->rows[pr] && w1 > w0)
                mxp_pool_wide_tail(acc, p, p->rows[pr], j, w0, w1, c8);
        mxp_pool_divide(acc, p, j, j + 1, c8);
    }
}

void mxp_f32_pool__avx2(void *acc, const mxp_f32_pool_params *p)
{
    if (p->kw > MXP_POOL_WIDE)
        wide(acc, p);
    else
        narrow(acc, p);
    if (one_channel_row(p))
        return;
    mxp_pool_quiet(acc, p, 0, p->ow * p->ch);
    size_t t = 0;
    if (p->kind == MXP_POOL_SUM && p->out32) /* the float32 results, vcvtpd2ps as the conversion */
        for (; t + 4 <= p->ow * p->ch; t += 4)
            _mm_storeu_ps(p->out32 + t, _mm256_cvtpd_ps(_mm256_loadu_pd((const double *)acc + t)));
    mxp_pool_round32(acc, p, t);
}

/* ---- pooling a plane at a time (pool-kernels.h) --------------------------- */

/* Block c0's load masks and fills (each load's columns of x; stride 2:
 * loads 2 t and 2 t + 1 the columns from c0 + 2 t and c0 + 2 t + 8;
 * stride 1: load t the columns from c0 + t). */
static inline void plane_masks(__m256i *mk, __m256 *fm, ptrdiff_t c0, ptrdiff_t s, size_t loads, ptrdiff_t w)
{
    const __m256 fill = _mm256_set1_ps(-INFINITY);
    for (size_t t = 0; t < (s == 2 ? 2 * loads : loads); t++) {
        mk[t] = cols8(c0 + (s == 2 ? 2 * (ptrdiff_t)(t / 2) + 8 * (ptrdiff_t)(t % 2) : (ptrdiff_t)t), w);
        fm[t] = _mm256_andnot_ps(_mm256_castsi256_ps(mk[t]), fill);
    }
}

/* The maxima of eight output columns from c0 (stride s) of row x, in
 * evens' order for stride 2: each window's taps in q order, the first tap
 * as it is; exact: fold_max, else vmaxps alone.  edge: the loads masked
 * by mk to the columns of x, fm's -inf elsewhere. */
MXP_INLINE __m256 plane_hblock(const float *x, ptrdiff_t c0, ptrdiff_t s, size_t kw, int edge, const __m256i *mk,
                               const __m256 *fm, int exact)
{
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw;
    const __m256i z = _mm256_setzero_si256();
    const __m256 zf = _mm256_setzero_ps();
    __m256 h = _mm256_set1_ps(-INFINITY);
    for (size_t t = 0; t < loads; t++) {
        __m256 tap[2];
        size_t taps = 1;
        if (s == 1) {
            tap[0] = load8(x, c0 + (ptrdiff_t)t, edge, edge ? mk[t] : z, edge ? fm[t] : zf);
        } else {
            const ptrdiff_t c = c0 + 2 * (ptrdiff_t)t;
            const __m256 v0 = load8(x, c, edge, edge ? mk[2 * t] : z, edge ? fm[2 * t] : zf);
            const __m256 v1 = load8(x, c + 8, edge, edge ? mk[2 * t + 1] : z, edge ? fm[2 * t + 1] : zf);
            tap[0] = evens(v0, v1, 0);
            if (2 * t + 1 < kw) {
                tap[1] = evens(v0, v1, 1);
                taps = 2;
            }
        }
        for (size_t u = 0; u < taps; u++)
            h = t == 0 && u == 0 ? tap[u] : exact ? fold_max(h, tap[u]) : _mm256_max_ps(tap[u], h);
    }
    return h;
}

/* Eight floats of y (n < 8: the first n): kernels/store-tail-avx2.h. */
static inline void store_n(float *y, __m256 m, size_t n)
{
    mxp_store_tail_ps_avx2(y, m, n);
}

/* Eight output columns of stride s from evens' order back to the
 * columns', stored (n < 8: the first n). */
static inline void plane_store(float *y, __m256 m, ptrdiff_t s, size_t n)
{
    if (s == 2)
        m = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m), _MM_SHUFFLE(3, 1, 2, 0)));
    store_n(y, m, n);
}

/* Eight floats of a row at p; the last vector of a row (last) masked to
 * tail, tfill's -inf elsewhere. */
static inline __m256 plane_load8(const float *p, int last, __m256i tail, __m256 tfill)
{
    return last ? _mm256_or_ps(_mm256_maskload_ps(p, tail), tfill) : _mm256_loadu_ps(p);
}

/* The column maxima of the eight columns from c over rows [0, n) of x
 * (rows of w floats), -inf past w (tail, tfill: the last vector's
 * columns); rows from knew (not read before) checked: NaNs into *nan
 * (vcmpunordps, one for two rows where two are new), -0 as the least
 * int32, 0x80000000, into *least (vpminsd).  steady: stride 2's rows of
 * 3 x 3 (the last two new) written out. */
MXP_INLINE __m256 plane_colmax(const float *x, size_t w, size_t c, size_t n, size_t knew, __m256i tail, __m256 tfill,
                               __m256 *nan, __m256i *least, int steady)
{
    if (c >= w)
        return _mm256_set1_ps(-INFINITY);
    const int last = c + 8 > w;
    const float *xt = x + c;
    if (steady) {
        const __m256 x0 = plane_load8(xt, last, tail, tfill), x1 = plane_load8(xt + w, last, tail, tfill);
        const __m256 x2 = plane_load8(xt + 2 * w, last, tail, tfill);
        *nan = _mm256_or_ps(*nan, _mm256_cmp_ps(x1, x2, _CMP_UNORD_Q)); /* either a NaN */
        *least = _mm256_min_epi32(*least, _mm256_min_epi32(_mm256_castps_si256(x1), _mm256_castps_si256(x2)));
        return _mm256_max_ps(x2, _mm256_max_ps(x1, x0));
    }
    __m256 m = _mm256_set1_ps(-INFINITY);
    for (size_t k = 0; k < n; k++) { /* a whole window's rows unrolled where n is a constant */
        const __m256 xv = plane_load8(xt + k * w, last, tail, tfill);
        if (k >= knew) {
            *nan = _mm256_or_ps(*nan, _mm256_cmp_ps(xv, xv, _CMP_UNORD_Q));
            *least = _mm256_min_epi32(*least, _mm256_castps_si256(xv));
        }
        m = k == 0 ? xv : _mm256_max_ps(xv, m);
    }
    return m;
}

/* v1 moved by sh lanes (-8 < sh < 8) across its neighbours: lane i is
 * lane i + sh of v0 v1 v2 laid end to end (v1 from lane 0). */
static inline __m256 plane_shift(__m256 v0, __m256 v1, __m256 v2, ptrdiff_t sh)
{
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i ix = _mm256_and_si256(_mm256_add_epi32(lane, _mm256_set1_epi32((int)sh)), _mm256_set1_epi32(7));
    if (sh == 0)
        return v1;
    if (sh < 0) /* lanes i < -sh from v0 */
        return _mm256_blendv_ps(_mm256_permutevar8x32_ps(v1, ix), _mm256_permutevar8x32_ps(v0, ix),
                                _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32((int)-sh), lane)));
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(v1, ix), _mm256_permutevar8x32_ps(v2, ix), /* i >= 8 - sh */
                            _mm256_castsi256_ps(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32((int)(7 - sh)))));
}

/* Stride 2 as the AVX-512 kernel's (one output row a step: two spilled
 * AVX2's sixteen registers, 437 -> 500 ns a 56 x 56 plane on Zen 4), in
 * blocks of eight columns from sixteen column maxima split by vpermps and
 * vperm2f128 (e0 / o0, e1 / o1, e2 / o2: the blocks before and after). */
MXP_INLINE void plane_s2_row(const float *x, size_t w, size_t n, size_t knew, size_t kw, size_t pw, __m256i tail,
                             __m256 tfill, float *y, size_t ow, size_t nb, __m256 *nan, __m256i *least, int steady)
{
    const __m256i split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    __m256 a = plane_colmax(x, w, 0, n, knew, tail, tfill, nan, least, steady);
    __m256 b = plane_colmax(x, w, 8, n, knew, tail, tfill, nan, least, steady);
    __m256 sa = _mm256_permutevar8x32_ps(a, split), sb = _mm256_permutevar8x32_ps(b, split);
    __m256 e0 = _mm256_set1_ps(-INFINITY), o0 = e0;
    __m256 e1 = _mm256_permute2f128_ps(sa, sb, 0x20), o1 = _mm256_permute2f128_ps(sa, sb, 0x31);
    for (size_t t = 0; t < nb; t++) {
        a = plane_colmax(x, w, 16 * t + 16, n, knew, tail, tfill, nan, least, steady);
        b = plane_colmax(x, w, 16 * t + 24, n, knew, tail, tfill, nan, least, steady);
        sa = _mm256_permutevar8x32_ps(a, split), sb = _mm256_permutevar8x32_ps(b, split);
        const __m256 e2 = _mm256_permute2f128_ps(sa, sb, 0x20), o2 = _mm256_permute2f128_ps(sa, sb, 0x31);
        __m256 m = e1;
        for (size_t q = 0; q < kw; q++) {
            const ptrdiff_t d = (ptrdiff_t)q - (ptrdiff_t)pw, sh = (d - (d & 1)) / 2;
            const __m256 tap = d & 1 ? plane_shift(o0, o1, o2, sh) : plane_shift(e0, e1, e2, sh);
            m = q == 0 ? tap : _mm256_max_ps(tap, m);
        }
        store_n(y + 8 * t, m, ow - 8 * t);
        e0 = e1, o0 = o1, e1 = e2, o1 = o2;
    }
}

/* The fast plane (as the AVX-512 kernel's): with no NaN and no -0 in x,
 * each output row's input rows' column maxima (any order), then the
 * windows' maxima along them -- stride 2 in registers (plane_s2_rows),
 * stride 1 through the row v, padded with -inf.  Returns whether x held
 * a NaN or a -0 (each row checked as it is first read, plane_colmax).
 * kh: the window's height where a constant, else 0.  No software
 * prefetch: on AMD Zen 4 the rows eight output rows ahead cost 6% (1153
 * -> 1085 ns a max plane before the rows went to registers). */
MXP_INLINE int plane_fast(const mxp_f32_pool_plane_params *p, ptrdiff_t s, size_t kw, size_t kh)
{
    const size_t w = p->w, nv = (w + 7) / 8, nb = (p->ow + 7) / 8;
    const __m256 fill = _mm256_set1_ps(-INFINITY);
    const __m256i tail = cols8(0, (ptrdiff_t)(w - 8 * (nv - 1))), all = _mm256_set1_epi32(-1);
    const __m256 tfill = _mm256_andnot_ps(_mm256_castsi256_ps(tail), fill);
    float *v = mxp_pool_plane_vrow(p);
    if (s != 2) { /* stride 1: the row of maxima in v, padded with -inf */
        const size_t vlen = mxp_pool_plane_vbuf(w, p->ow) - MXP_POOL_PLANE_PAD;
        _mm256_storeu_ps(v - 16, fill);
        _mm256_storeu_ps(v - 8, fill);
        for (size_t c = nv * 8; c < vlen; c += 8)
            store_n(v + c, fill, vlen - c);
    }
    __m256 nan = _mm256_setzero_ps();
    __m256i least = _mm256_setzero_si256();
    size_t next = 0; /* the first input row not checked yet */
    for (size_t i = 0; i < p->oh; i++) {
        size_t r0, r1;
        mxp_pool_plane_rows(p, i, &r0, &r1);
        const float *x = p->x + r0 * w;
        const size_t n = kh && r1 - r0 == kh ? kh : r1 - r0, knew = next > r0 ? next - r0 : 0; /* new from knew */
        next = r1 > next ? r1 : next;
        float *yi = p->y + i * p->ow;
        const int steady = kh == 3 && n == 3 && knew == 1; /* stride 2's rows of 3 x 3, the last two new */
        if (s == 2 && kw == 3 && p->pw == 1 && steady) {
            plane_s2_row(x, w, n, knew, 3, 1, tail, tfill, yi, p->ow, nb, &nan, &least, 1);
        } else if (s == 2 && kw == 3 && p->pw == 1) {
            plane_s2_row(x, w, n, knew, 3, 1, tail, tfill, yi, p->ow, nb, &nan, &least, 0);
        } else if (s == 2 && kw == 2 && p->pw == 0) {
            plane_s2_row(x, w, n, knew, 2, 0, tail, tfill, yi, p->ow, nb, &nan, &least, 0);
        } else if (s == 2) {
            plane_s2_row(x, w, n, knew, kw, p->pw, tail, tfill, yi, p->ow, nb, &nan, &least, steady);
        } else {
            for (size_t t = 0; t < nv; t++)
                _mm256_storeu_ps(v + 8 * t, plane_colmax(x, w, 8 * t, n, knew, tail, tfill, &nan, &least, steady));
            for (size_t b = 0; b < nb; b++) {
                const __m256 m = plane_hblock(v, (ptrdiff_t)b * 8 - (ptrdiff_t)p->pw, 1, kw, 0, NULL, NULL, 0);
                plane_store(yi + 8 * b, m, 1, p->ow - 8 * b);
            }
        }
    }
    const __m256i negzero = _mm256_set1_epi32((int)0x80000000u);
    return _mm256_movemask_ps(nan) || !_mm256_testz_si256(_mm256_cmpeq_epi32(least, negzero), all);
}

/* The exact plane: each input row's maxima folded exactly once into the
 * ring, then each output row's rows folded in order; NaNs made quiet. */
MXP_INLINE void plane_exact(const mxp_f32_pool_plane_params *p, ptrdiff_t s, size_t kw)
{
    const ptrdiff_t w = (ptrdiff_t)p->w, pw = (ptrdiff_t)p->pw;
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw, nb = (p->ow + 7) / 8;
    const ptrdiff_t reach = s == 2 ? 2 * (ptrdiff_t)loads + 14 : (ptrdiff_t)kw + 7; /* columns a block's loads span */
    const size_t rmask = mxp_pool_plane_ring_rows(p->kh) - 1, rstride = mxp_pool_plane_stride(p->ow);
    float *ring = p->hbuf;
    size_t next = 0; /* the first input row whose maxima are not made yet */
    for (size_t i = 0; i < p->oh; i++) {
        size_t r0, r1;
        mxp_pool_plane_rows(p, i, &r0, &r1);
        for (size_t r = r0 > next ? r0 : next; r < r1; r++) {
            const float *x = p->x + r * p->w;
            float *hr = ring + (r & rmask) * rstride; /* mxp_pool_plane_ring */
            for (size_t b = 0; b < nb; b++) {
                const ptrdiff_t c0 = (ptrdiff_t)b * 8 * s - pw;
                __m256i mk[2 * MXP_POOL_WIDE];
                __m256 fm[2 * MXP_POOL_WIDE];
                const int edge = c0 < 0 || c0 + reach > w;
                if (edge)
                    plane_masks(mk, fm, c0, s, loads, w);
                _mm256_storeu_ps(hr + 8 * b, edge ? plane_hblock(x, c0, s, kw, 1, mk, fm, 1)
                                                  : plane_hblock(x, c0, s, kw, 0, NULL, NULL, 1));
            }
        }
        next = r1 > next ? r1 : next;
        for (size_t b = 0; b < nb; b++) {
            __m256 m = _mm256_set1_ps(-INFINITY);
            for (size_t r = r0; r < r1; r++) {
                const __m256 v = _mm256_loadu_ps(ring + (r & rmask) * rstride + 8 * b);
                m = r == r0 ? v : fold_max(m, v);
            }
            m = _mm256_or_ps(m, _mm256_and_ps(_mm256_cmp_ps(m, m, _CMP_UNORD_Q),
                                              _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000))));
            plane_store(p->y + i * p->ow + 8 * b, m, s, p->ow - 8 * b);
        }
    }
}

/* The fast plane, then, where x held a NaN or -0, the exact one. */
MXP_INLINE void plane(const mxp_f32_pool_plane_params *p, ptrdiff_t s, size_t kw, size_t kh)
{
    if (plane_fast(p, s, kw, kh))
        plane_exact(p, s, kw);
}

/* Sums: eight output columns a block, as one_channel_k's (every tap of
 * the window's rows in (p, q) order added into two float64 accumulators
 * from +0 -- stride 2 in evens' order, put right before the division --
 * divided, rounded to float32: the same bits), the edge blocks' load
 * masks made once a plane (masked loads give +0, the fill) and the inner
 * blocks' loads unmasked (2-wide windows of stride 2 there: four loads
 * widened by vcvtps2pd from memory, a pair's two columns split by
 * vunpcklpd / vunpckhpd, no vshufps or vextractf128; the outputs 0 2 1 3
 * | 4 6 5 7, put right once).  kh: the window's height where a constant,
 * else 0. */
/* A block's sums (acc_init'ed a): every tap of rows [0, n) of x (rows of
 * w floats) from column c0, in (p, q) order; mk: the edge block's load
 * masks, or NULL. */
MXP_INLINE void plane_block_sums(const float *x, size_t w, ptrdiff_t c0, size_t n, ptrdiff_t s, size_t kw,
                                 const __m256i *mk, acc8 *a)
{
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw;
    const int pairs = s == 2 && kw == 2 && !mk; /* an inner block of 2-wide windows */
    for (size_t k = 0; k < n; k++) {
        const float *xr = x + k * w + c0;
        if (pairs) { /* widened from memory, each pair's two by vunpcklpd / vunpckhpd */
            const __m256d d0 = _mm256_cvtps_pd(_mm_loadu_ps(xr)), d1 = _mm256_cvtps_pd(_mm_loadu_ps(xr + 4));
            const __m256d d2 = _mm256_cvtps_pd(_mm_loadu_ps(xr + 8));
            const __m256d d3 = _mm256_cvtps_pd(_mm_loadu_ps(xr + 12));
            a->s[0] = _mm256_add_pd(a->s[0], _mm256_unpacklo_pd(d0, d1));
            a->s[0] = _mm256_add_pd(a->s[0], _mm256_unpackhi_pd(d0, d1));
            a->s[1] = _mm256_add_pd(a->s[1], _mm256_unpacklo_pd(d2, d3));
            a->s[1] = _mm256_add_pd(a->s[1], _mm256_unpackhi_pd(d2, d3));
            continue;
        }
        for (size_t t = 0; t < loads; t++) {
            __m256 tap[2];
            size_t taps = 1;
            if (s == 1) {
                tap[0] = mk ? _mm256_maskload_ps(xr + t, mk[t]) : _mm256_loadu_ps(xr + t);
            } else {
                const float *xt = xr + 2 * t;
                const __m256 v0 = mk ? _mm256_maskload_ps(xt, mk[2 * t]) : _mm256_loadu_ps(xt);
                const __m256 v1 = mk ? _mm256_maskload_ps(xt + 8, mk[2 * t + 1]) : _mm256_loadu_ps(xt + 8);
                tap[0] = evens(v0, v1, 0);
                if (2 * t + 1 < kw) {
                    tap[1] = evens(v0, v1, 1);
                    taps = 2;
                }
            }
            for (size_t u = 0; u < taps; u++)
                acc_add(MXP_POOL_SUM, a, tap[u]);
        }
    }
    if (pairs) { /* outputs 0 2 1 3 | 4 6 5 7 back in order */
        a->s[0] = _mm256_permute4x64_pd(a->s[0], _MM_SHUFFLE(3, 1, 2, 0));
        a->s[1] = _mm256_permute4x64_pd(a->s[1], _MM_SHUFFLE(3, 1, 2, 0));
    } else if (s == 2) {
        unshuffle(a);
    }
}

/* Block b of output row i from its sums: divided, rounded, stored. */
MXP_INLINE void plane_sums_out(const mxp_f32_pool_plane_params *p, size_t i, size_t b, const acc8 *a)
{
    const size_t left = p->ow - 8 * b;
    const double *d = p->div + i * p->ow + 8 * b;
    float *y = p->y + i * p->ow + 8 * b;
    if (p->recip != 0) {
        const __m256d r = _mm256_set1_pd(p->recip);
        const __m256 v = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(_mm256_mul_pd(a->s[0], r))),
                                              _mm256_cvtpd_ps(_mm256_mul_pd(a->s[1], r)), 1);
        store_n(y, v, left);
        return;
    }
    if (left >= 8) {
        const __m256d d0 = _mm256_loadu_pd(d), d1 = _mm256_loadu_pd(d + 4);
        _mm256_storeu_ps(y, _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(divide(a->s[0], d0))),
                                                 _mm256_cvtpd_ps(divide(a->s[1], d1)), 1));
        return;
    }
    double dd[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
    memcpy(dd, d, left * sizeof(double));
    const __m128 lo = _mm256_cvtpd_ps(divide(a->s[0], _mm256_loadu_pd(dd)));
    const __m256 v = _mm256_insertf128_ps(_mm256_castps128_ps256(lo),
                                          _mm256_cvtpd_ps(divide(a->s[1], _mm256_loadu_pd(dd + 4))), 1);
    store_n(y, v, left);
}

MXP_INLINE void plane_sums_k(const mxp_f32_pool_plane_params *p, ptrdiff_t s, size_t kw, size_t kh)
{
    const ptrdiff_t w = (ptrdiff_t)p->w, pw = (ptrdiff_t)p->pw;
    const size_t loads = s == 2 ? (kw + 1) / 2 : kw, nb = (p->ow + 7) / 8;
    const ptrdiff_t reach = s == 2 ? 2 * (ptrdiff_t)loads + 14 : (ptrdiff_t)kw + 7; /* columns a block's loads span */
    __m256i mf[2 * MXP_POOL_WIDE], ml[2 * MXP_POOL_WIDE], mt[2 * MXP_POOL_WIDE];
    __m256 fm[2 * MXP_POOL_WIDE]; /* max's fills: unused */
    plane_masks(mf, fm, -pw, s, loads, w);
    plane_masks(ml, fm, (ptrdiff_t)(nb - 1) * 8 * s - pw, s, loads, w);
    for (size_t i = 0; i < p->oh; i++) {
        size_t r0, r1, q0 = 0, q1 = 0;
        mxp_pool_plane_rows(p, i, &r0, &r1);
        if (kh && i + 1 < p->oh)
            mxp_pool_plane_rows(p, i + 1, &q0, &q1);
        /* two output rows of whole windows at once where the window's rows
           are a constant, as the AVX-512 kernel's (8x64x56x56 2x2 stride 2
           on Zen 4: 289 -> 277 us) */
        const int pair = kh && r1 - r0 == kh && q1 - q0 == kh;
        const float *x = p->x + r0 * p->w, *x2 = p->x + q0 * p->w;
        for (size_t b = 0; b < nb; b++) {
            const ptrdiff_t c0 = (ptrdiff_t)b * 8 * s - pw;
            const __m256i *mk = NULL;
            if (c0 < 0 || c0 + reach > w) { /* an edge block: its loads masked */
                if (b == 0) {
                    mk = mf;
                } else if (b == nb - 1) {
                    mk = ml;
                } else {
                    plane_masks(mt, fm, c0, s, loads, w);
                    mk = mt;
                }
            }
            acc8 a[2];
            acc_init(MXP_POOL_SUM, &a[0]);
            acc_init(MXP_POOL_SUM, &a[1]);
            if (pair) { /* unrolled, straight-line blocks */
                if (mk) {
                    plane_block_sums(x, p->w, c0, kh, s, kw, mk, &a[0]);
                    plane_block_sums(x2, p->w, c0, kh, s, kw, mk, &a[1]);
                } else {
                    plane_block_sums(x, p->w, c0, kh, s, kw, NULL, &a[0]);
                    plane_block_sums(x2, p->w, c0, kh, s, kw, NULL, &a[1]);
                }
                plane_sums_out(p, i, b, &a[0]);
                plane_sums_out(p, i + 1, b, &a[1]);
            } else {
                plane_block_sums(x, p->w, c0, r1 - r0, s, kw, mk, &a[0]);
                plane_sums_out(p, i, b, &a[0]);
            }
        }
        i += pair;
    }
}

static void plane_sums(const mxp_f32_pool_plane_params *p)
{
    MXP_POOL_PLANE_WINDOWS(plane_sums_k, p);
}

void mxp_f32_pool_plane__avx2(const mxp_f32_pool_plane_params *p)
{
    if (p->kind == MXP_POOL_SUM)
        plane_sums(p);
    else
        MXP_POOL_PLANE_WINDOWS(plane, p);
}
