/* The AVX-512 GEMM micro-tiles, one text for float32 (8 x 48, with B~
 * packed or A in place, and 8 x 48 with B in place:
 * src/kernels/f32-gemm/avx512f.c), float64 (8 x 24, both ways:
 * f64-gemm/avx512f.c) and bfloat16 (6 x 32 of float32 sums:
 * bf16-gemm/avx512bf16.c).  The packed tile holds MR x NV accumulators of
 * one vector each (a row of B~ is NV vectors wide) in registers: 8 x 3 = 24
 * for float32/float64, 6 x 2 = 12 for the bf16 pairs; C is written through
 * masked loads and stores, alpha * sum (+ beta * C by one fma).
 *
 * A template: the kernel file defines, before including it,
 *   MXP_TILE_T              the element of A~ and B~: float, double, uint16_t
 *   MXP_TILE_C              the element of C and of the sums, when not T: float
 *   MXP_TILE_V              the sums' vector: __m512 or __m512d
 *   MXP_TILE_V_(op)         the intrinsic _mm512_<op>_ps or _mm512_<op>_pd
 *   MXP_TILE_MASK           a mask of one vector's lanes: __mmask16 or __mmask8
 *   MXP_TILE_ROWS, MXP_TILE_VECS  the packed tile's shape (gemm-tile.h;
 *                           6 and 2 by default, 8 and 3 at most)
 * and, where a step takes KPACK = 2 values of k (bf16 pairs; by default 1,
 * an fma of A's broadcast value and B's vector),
 *   MXP_TILE_KPACK          2
 *   MXP_TILE_B              B~'s vector: __m512bh
 *   MXP_TILE_LOAD_B(p)      that vector from p
 *   MXP_TILE_SET1_A(p)      the KPACK values of A at p in every lane
 *   MXP_TILE_DOT(acc, a, b) acc + a * b: vdpbf16ps of pairs
 * and calls mxp_avx512_tile() (and, with KPACK 1, mxp_avx512_direct_8x3())
 * from its kernels.  Only for files built at AVX-512F or above; included
 * once per file.
 *
 * Why 8 x 3 for float32/float64 (measured on the Xeon with AMX, one
 * core, the kernel alone on a 256-deep B~ in L1, medians of runs: FMA
 * peak 240 GFLOPS float32, 120 float64): 6 x 2 reached 182-201 / 101, 12 x
 * 2 208-223 / 94, 8 x 3 with the k loop unrolled twice 217-230 / 114 (each
 * k step's 3 loads of B~ and 8 broadcasts of A feed 24 fmas; one of them
 * without the unrolling: 189 / 99). */
#ifndef MXP_KERNELS_GEMM_AVX512_TILE_H
#define MXP_KERNELS_GEMM_AVX512_TILE_H

#include "kernels/gemm-tile.h"

#ifndef MXP_TILE_KPACK
#define MXP_TILE_KPACK 1
#define MXP_TILE_B MXP_TILE_V
#define MXP_TILE_LOAD_B(p) MXP_TILE_V_(loadu)(p)
#define MXP_TILE_SET1_A(p) MXP_TILE_V_(set1)(*(p))
#define MXP_TILE_DOT(acc, a, b) MXP_TILE_V_(fmadd)(a, b, acc)
#endif

/* The lanes of a row's vector v (columns v * LANES on) that lie below nr. */
MXP_INLINE MXP_TILE_MASK mxp_avx512_cols(size_t nr, size_t v)
{
    const size_t lo = v * MXP_TILE_LANES;
    return nr >= lo + MXP_TILE_LANES ? (MXP_TILE_MASK)~0u : nr > lo ? (MXP_TILE_MASK)((1u << (nr - lo)) - 1) : 0;
}

/* One vector of a row of C, masked: alpha * acc (+ beta * C). */
MXP_INLINE void mxp_avx512_row_update(MXP_TILE_C *c, MXP_TILE_V acc, MXP_TILE_MASK m, MXP_TILE_V va, MXP_TILE_V vb,
                                      int with_beta)
{
    MXP_TILE_V x = MXP_TILE_V_(mul)(va, acc);
    if (with_beta)
        x = MXP_TILE_V_(fmadd)(vb, MXP_TILE_V_(maskz_loadu)(m, c), x);
    MXP_TILE_V_(mask_storeu)(c, m, x);
}

/* The mr x nr corner of a tile of R rows (R <= 8) and NV vectors a row (1
 * to 3; acc1, acc2 unread for fewer): row i's sums in acc0[i], acc1[i], acc2[i], rows
 * ldc apart.  Unrolled with constant indices: once inlined, the sums stay
 * in registers. */
MXP_INLINE void mxp_avx512_tile_store(int R, int NV, MXP_TILE_C *c, size_t ldc, size_t mr, size_t nr,
                                      const MXP_TILE_V *acc0, const MXP_TILE_V *acc1, const MXP_TILE_V *acc2,
                                      double alpha, double beta)
{
    const MXP_TILE_MASK m0 = mxp_avx512_cols(nr, 0), m1 = mxp_avx512_cols(nr, 1), m2 = mxp_avx512_cols(nr, 2);
    const MXP_TILE_V va = MXP_TILE_V_(set1)((MXP_TILE_C)alpha), vb = MXP_TILE_V_(set1)((MXP_TILE_C)beta);
#pragma GCC unroll 8
    for (int i = 0; i < R; i++) {
        if ((size_t)i >= mr)
            break;
        MXP_TILE_C *row = c + (size_t)i * ldc;
        mxp_avx512_row_update(row, acc0[i], m0, va, vb, beta != 0);
        if (NV > 1)
            mxp_avx512_row_update(row + MXP_TILE_LANES, acc1[i], m1, va, vb, beta != 0);
        if (NV > 2)
            mxp_avx512_row_update(row + 2 * MXP_TILE_LANES, acc2[i], m2, va, vb, beta != 0);
    }
}

/* C's lines of an mr-row tile fetched while the k loop runs. */
MXP_INLINE void mxp_avx512_tile_prefetch_c(int NV, const MXP_TILE_C *c, size_t ldc, size_t mr)
{
    for (size_t i = 0; i < mr; i++) {
#pragma GCC unroll 3
        for (int v = 0; v < NV; v++)
            _mm_prefetch((const char *)(c + i * ldc + v * MXP_TILE_LANES), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + NV * MXP_TILE_LANES - 1), _MM_HINT_T0);
    }
}

/* kc values of k into the R x NV sums: row i's KPACK values at k = p at
 * ar[i] + p / KPACK * k_stride, B~'s rows from pb on; returns B~ past
 * them. */
MXP_INLINE const MXP_TILE_T *mxp_avx512_tile_steps(int R, int NV, const MXP_TILE_T *const *ar, size_t kc,
                                                   size_t k_stride, const MXP_TILE_T *pb, MXP_TILE_V *acc0,
                                                   MXP_TILE_V *acc1, MXP_TILE_V *acc2)
{
    enum { NR = MXP_TILE_NR, L = MXP_TILE_LANES, KP = MXP_TILE_KPACK };
    /* k steps per loop iteration: twice for the 8 x 3 tile (above) */
    enum { UNROLL = MXP_TILE_NV > 2 ? 2 : 1 };
#pragma GCC unroll UNROLL
    for (size_t p = 0; p < kc; p += KP) {
        const MXP_TILE_B b0 = MXP_TILE_LOAD_B(pb);
        const MXP_TILE_B b1 = NV > 1 ? MXP_TILE_LOAD_B(pb + L * KP) : b0;
        const MXP_TILE_B b2 = NV > 2 ? MXP_TILE_LOAD_B(pb + 2 * L * KP) : b0;
        const size_t q = p / KP * k_stride;
#pragma GCC unroll 8
        for (int i = 0; i < R; i++) {
            const MXP_TILE_B ai = MXP_TILE_SET1_A(ar[i] + q);
            acc0[i] = MXP_TILE_DOT(acc0[i], ai, b0);
            if (NV > 1)
                acc1[i] = MXP_TILE_DOT(acc1[i], ai, b1);
            if (NV > 2)
                acc2[i] = MXP_TILE_DOT(acc2[i], ai, b2);
        }
        pb += NR * KP;
    }
    return pb;
}

/* The packed tile with A read through MR row pointers: the KPACK values
 * at k = p of row i at a + i * row_stride + p / KPACK * k_stride elements
 * (packed A~: 1 and MR for floats, 2 and 2 * MR for bf16 pairs; A in
 * place: lda and KPACK).  Rows of a beyond `rows` repeat the last one; R
 * rows of sums are computed (R >= mr), the others stay 0, never stored. */
MXP_INLINE void mxp_avx512_tile_rows(int R, int NV, size_t mr, size_t nr, size_t kc, const MXP_TILE_T *a,
                                     size_t rows, size_t row_stride, size_t k_stride, const MXP_TILE_T *pb,
                                     MXP_TILE_C *c, size_t ldc, double alpha, double beta)
{
    enum { MR = MXP_TILE_MR };
    const MXP_TILE_T *ar[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
        ar[i] = a + ((size_t)i < rows ? (size_t)i : rows - 1) * row_stride;
    mxp_avx512_tile_prefetch_c(NV, c, ldc, mr);
    MXP_TILE_V acc0[MR], acc1[MR], acc2[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = acc2[i] = MXP_TILE_V_(setzero)();
    mxp_avx512_tile_steps(R, NV, ar, kc, k_stride, pb, acc0, acc1, acc2);
    mxp_avx512_tile_store(MR, NV, c, ldc, mr, nr, acc0, acc1, acc2, alpha, beta);
}

/* ... for rows R (a constant) and the fewest vectors that hold nr columns
 * (a narrow last panel, N = 64 or 256 with 48-wide panels: its columns
 * past nr are zero in B~, their multiply-adds wasted). */
MXP_INLINE void mxp_avx512_tile_cols(int R, size_t mr, size_t nr, size_t kc, const MXP_TILE_T *a, size_t rows,
                                     size_t row_stride, size_t k_stride, const MXP_TILE_T *pb, MXP_TILE_C *c,
                                     size_t ldc, double alpha, double beta)
{
    if (MXP_TILE_NV < 3 || nr > 2 * MXP_TILE_LANES)
        mxp_avx512_tile_rows(R, MXP_TILE_NV, mr, nr, kc, a, rows, row_stride, k_stride, pb, c, ldc, alpha, beta);
    else if (nr > MXP_TILE_LANES)
        mxp_avx512_tile_rows(R, 2, mr, nr, kc, a, rows, row_stride, k_stride, pb, c, ldc, alpha, beta);
    else
        mxp_avx512_tile_rows(R, 1, mr, nr, kc, a, rows, row_stride, k_stride, pb, c, ldc, alpha, beta);
}

MXP_INLINE void mxp_avx512_tile(size_t mr, size_t nr, size_t kc, const MXP_TILE_T *a, size_t rows, size_t row_stride,
                                size_t k_stride, const MXP_TILE_T *pb, MXP_TILE_C *c, size_t ldc, double alpha,
                                double beta)
{
    if (MXP_TILE_MR > 6 && mr > 6)
        mxp_avx512_tile_cols(MXP_TILE_MR, mr, nr, kc, a, rows, row_stride, k_stride, pb, c, ldc, alpha, beta);
    else
        MXP_GEMM_BY_ROWS(mr, mxp_avx512_tile_cols, mr, nr, kc, a, rows, row_stride, k_stride, pb, c, ldc, alpha,
                         beta);
}

/* The packed tile with A's rows where they lie, their k values in nseg
 * segments of seglen (k = s * seglen + p of row i at rows[i] + off[s] + p
 * elements: a convolution's taps read in x, src/nn/conv-taps.c); rows
 * beyond mr repeat the last.  The sums run through every segment in
 * registers, B~ holding nseg * seglen rows. */
MXP_INLINE void mxp_avx512_tile_taps_rows(int R, int NV, size_t mr, size_t nr, size_t nseg, size_t seglen,
                                          const MXP_TILE_T *const *rows, const ptrdiff_t *off,
                                          const MXP_TILE_T *pb, MXP_TILE_C *c, size_t ldc, double alpha,
                                          double beta)
{
    enum { MR = MXP_TILE_MR };
    mxp_avx512_tile_prefetch_c(NV, c, ldc, mr);
    MXP_TILE_V acc0[MR], acc1[MR], acc2[MR];
#pragma GCC unroll 8
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = acc2[i] = MXP_TILE_V_(setzero)();
    for (size_t sg = 0; sg < nseg; sg++) {
        const MXP_TILE_T *ar[MR];
#pragma GCC unroll 8
        for (int i = 0; i < MR; i++)
            ar[i] = rows[(size_t)i < mr ? (size_t)i : mr - 1] + off[sg];
        pb = mxp_avx512_tile_steps(R, NV, ar, seglen, MXP_TILE_KPACK, pb, acc0, acc1, acc2);
    }
    mxp_avx512_tile_store(MR, NV, c, ldc, mr, nr, acc0, acc1, acc2, alpha, beta);
}

MXP_INLINE void mxp_avx512_tile_taps_cols(int R, size_t mr, size_t nr, size_t nseg, size_t seglen,
                                          const MXP_TILE_T *const *rows, const ptrdiff_t *off,
                                          const MXP_TILE_T *pb, MXP_TILE_C *c, size_t ldc, double alpha,
                                          double beta)
{
    if (MXP_TILE_NV < 3 || nr > 2 * MXP_TILE_LANES)
        mxp_avx512_tile_taps_rows(R, MXP_TILE_NV, mr, nr, nseg, seglen, rows, off, pb, c, ldc, alpha, beta);
    else if (nr > MXP_TILE_LANES)
        mxp_avx512_tile_taps_rows(R, 2, mr, nr, nseg, seglen, rows, off, pb, c, ldc, alpha, beta);
    else
        mxp_avx512_tile_taps_rows(R, 1, mr, nr, nseg, seglen, rows, off, pb, c, ldc, alpha, beta);
}

MXP_INLINE void mxp_avx512_tile_taps(size_t mr, size_t nr, size_t nseg, size_t seglen, const MXP_TILE_T *const *rows,
                                     const ptrdiff_t *off, const MXP_TILE_T *pb, MXP_TILE_C *c, size_t ldc,
                                     double alpha, double beta)
{
    if (MXP_TILE_MR > 6 && mr > 6)
        mxp_avx512_tile_taps_cols(MXP_TILE_MR, mr, nr, nseg, seglen, rows, off, pb, c, ldc, alpha, beta);
    else
        MXP_GEMM_BY_ROWS(mr, mxp_avx512_tile_taps_cols, mr, nr, nseg, seglen, rows, off, pb, c, ldc, alpha, beta);
}

#if MXP_TILE_KPACK == 1
/* Small M: 8 rows of NV vectors (a constant) with B read in place (rows
 * ldb apart, not packed: for a few rows of C, packing B would cost more
 * than the multiply) and A packed [k][8] (ars 1, aks 8) or where it is
 * stored (element (i, p) at pa[i ars + p aks]; rows from mr on repeat the
 * last).  Up to 24
 * accumulators; B's columns beyond nr are masked off, never read. */
MXP_INLINE void mxp_avx512_direct_8xv(int NV, size_t mr, size_t nr, size_t kc, const MXP_TILE_T *pa, size_t ars,
                                      size_t aks, const MXP_TILE_T *pb, size_t ldb, MXP_TILE_C *c, size_t ldc,
                                      double alpha, double beta)
{
    enum { L = MXP_TILE_LANES };
    const MXP_TILE_MASK m0 = mxp_avx512_cols(nr, 0), m1 = mxp_avx512_cols(nr, 1), m2 = mxp_avx512_cols(nr, 2);
    MXP_TILE_V acc0[8], acc1[8], acc2[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++)
        acc0[i] = acc1[i] = acc2[i] = MXP_TILE_V_(setzero)();
    for (size_t p = 0; p < kc; p++) {
        const MXP_TILE_V b0 = MXP_TILE_V_(maskz_loadu)(m0, pb);
        const MXP_TILE_V b1 = NV > 1 ? MXP_TILE_V_(maskz_loadu)(m1, pb + L) : b0;
        const MXP_TILE_V b2 = NV > 2 ? MXP_TILE_V_(maskz_loadu)(m2, pb + 2 * L) : b0;
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            const MXP_TILE_V ai = MXP_TILE_SET1_A(pa + ((size_t)i < mr ? (size_t)i : mr - 1) * ars);
            acc0[i] = MXP_TILE_DOT(acc0[i], ai, b0);
            if (NV > 1)
                acc1[i] = MXP_TILE_DOT(acc1[i], ai, b1);
            if (NV > 2)
                acc2[i] = MXP_TILE_DOT(acc2[i], ai, b2);
        }
        pa += aks;
        pb += ldb;
    }
    mxp_avx512_tile_store(8, NV, c, ldc, mr, nr, acc0, acc1, acc2, alpha, beta);
}

/* ... with the fewest vectors that hold nr columns: a strip of N = 16 or
 * a narrow last one had run three vectors' multiply-adds for one (Zen 4,
 * one thread: 16^3 float32 0.53 -> 0.36 us, float64 0.51 -> 0.36). */
MXP_INLINE void mxp_avx512_direct_8x3(size_t mr, size_t nr, size_t kc, const MXP_TILE_T *pa, size_t ars, size_t aks,
                                      const MXP_TILE_T *pb, size_t ldb, MXP_TILE_C *c, size_t ldc, double alpha,
                                      double beta)
{
    if (nr > 2 * MXP_TILE_LANES)
        mxp_avx512_direct_8xv(3, mr, nr, kc, pa, ars, aks, pb, ldb, c, ldc, alpha, beta);
    else if (nr > MXP_TILE_LANES)
        mxp_avx512_direct_8xv(2, mr, nr, kc, pa, ars, aks, pb, ldb, c, ldc, alpha, beta);
    else
        mxp_avx512_direct_8xv(1, mr, nr, kc, pa, ars, aks, pb, ldb, c, ldc, alpha, beta);
}
#endif

#endif
