/* The 6-row AVX2 + FMA GEMM micro-tile, one text for float32 (6 x 16,
 * src/kernels/f32-gemm/avx2.c) and float64 (6 x 8, f64-gemm/avx2.c): 12
 * accumulators of one vector each (B~'s row is two vectors wide) held in
 * registers.  A whole tile is written from the registers; a partial one
 * through a 6 x NR buffer (AVX2 has no masked stores of arbitrary width
 * without maskmov's cost).
 *
 * A template: the kernel file defines, before including it,
 *   MXP_TILE_T          the element: float or double
 *   MXP_TILE_V          its vector: __m256 or __m256d
 *   MXP_TILE_V_(op)     the intrinsic _mm256_<op>_ps or _mm256_<op>_pd
 *   MXP_TILE_BROADCAST  _mm256_broadcast_ss or _mm256_broadcast_sd
 *   MXP_TILE_FMA        the scalar fused multiply-add: fmaf or fma
 *   MXP_TILE_ASM_LOOP   MXP_AVX2_6ROW_LOOP(...) of gemm-avx2-asm.h for them
 *   MXP_TILE_ASM_LOOP_A MXP_AVX2_6ROW_LOOP_A(...), the same with A in place
 * and calls mxp_avx2_tile() from its kernel (the shape: kernels/gemm-tile.h).  Only for files built with the
 * AVX2 + FMA flags; included once per file. */
#ifndef MXP_KERNELS_GEMM_AVX2_TILE_H
#define MXP_KERNELS_GEMM_AVX2_TILE_H

#include <math.h>

#include "kernels/gemm-avx2-asm.h"
#include "kernels/gemm-tile.h"

/* alpha * the sums into t, for an edge tile's mr x nr corner (constant
 * indices: indexing the accumulators by the run-time mr would keep all
 * twelve in memory, stored on every k step). */
MXP_INLINE void mxp_avx2_tile_scaled(MXP_TILE_T t[MXP_TILE_MR][MXP_TILE_NR], const MXP_TILE_V acc0[MXP_TILE_MR],
                                     const MXP_TILE_V acc1[MXP_TILE_MR], MXP_TILE_V va)
{
#pragma GCC unroll 6
    for (int i = 0; i < MXP_TILE_MR; i++) {
        MXP_TILE_V_(storeu)(t[i], MXP_TILE_V_(mul)(va, acc0[i]));
        MXP_TILE_V_(storeu)(t[i] + MXP_TILE_LANES, MXP_TILE_V_(mul)(va, acc1[i]));
    }
}

/* alpha * the sums (+ beta * C) into C's mr x nr corner. */
MXP_INLINE void mxp_avx2_tile_store(const MXP_TILE_V acc0[MXP_TILE_MR], const MXP_TILE_V acc1[MXP_TILE_MR], size_t mr,
                                    size_t nr, void *c, size_t ldc, double alpha, double beta)
{
    enum { MR = MXP_TILE_MR, NR = MXP_TILE_NR };
    const MXP_TILE_V va = MXP_TILE_V_(set1)((MXP_TILE_T)alpha), vb = MXP_TILE_V_(set1)((MXP_TILE_T)beta);
    MXP_TILE_T *pc = c;
    if (mr == MR && nr == NR) { /* a whole tile: constant indices, the sums stay in registers */
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++) {
            MXP_TILE_T *row = pc + (size_t)i * ldc;
            MXP_TILE_V x0 = MXP_TILE_V_(mul)(va, acc0[i]), x1 = MXP_TILE_V_(mul)(va, acc1[i]);
            if (beta != 0) {
                x0 = MXP_TILE_V_(fmadd)(vb, MXP_TILE_V_(loadu)(row), x0);
                x1 = MXP_TILE_V_(fmadd)(vb, MXP_TILE_V_(loadu)(row + NR / 2), x1);
            }
            MXP_TILE_V_(storeu)(row, x0);
            MXP_TILE_V_(storeu)(row + NR / 2, x1);
        }
        return;
    }
    /* An edge tile: the sums go to a buffer, then its mr x nr corner into C. */
    MXP_TILE_T t[MR][NR];
    mxp_avx2_tile_scaled(t, acc0, acc1, va);
    const MXP_TILE_T fb = (MXP_TILE_T)beta;
    for (size_t i = 0; i < mr; i++) {
        MXP_TILE_T *row = pc + i * ldc;
        for (size_t j = 0; j < nr; j++) /* beta * C + alpha * sum, as the vector path's fma rounds */
            row[j] = beta != 0 ? MXP_TILE_FMA(fb, row[j], t[i][j]) : t[i][j];
    }
}

/* k steps p0 .. kc into the R rows' sums by intrinsics: row i's value at
 * k = p at ar[i] + p * k_stride, B~'s rows from pb on. */
MXP_INLINE void mxp_avx2_tile_steps(int R, const MXP_TILE_T *const *ar, size_t k_stride, size_t p0, size_t kc,
                                    const MXP_TILE_T *pb, MXP_TILE_V *acc0, MXP_TILE_V *acc1)
{
    enum { NR = MXP_TILE_NR };
#define STEP(q)                                                                                                    \
    do {                                                                                                           \
        const MXP_TILE_V b0 = MXP_TILE_V_(loadu)(pb + NR * (q)), b1 = MXP_TILE_V_(loadu)(pb + NR * (q) + NR / 2); \
        _Pragma("GCC unroll 6") for (int i = 0; i < R; i++)                                                        \
        {                                                                                                          \
            const MXP_TILE_V ai = MXP_TILE_BROADCAST(ar[i] + (p + (q)) * k_stride);                                \
            acc0[i] = MXP_TILE_V_(fmadd)(ai, b0, acc0[i]);                                                         \
            acc1[i] = MXP_TILE_V_(fmadd)(ai, b1, acc1[i]);                                                         \
        }                                                                                                          \
    } while (0)
    size_t p = p0;
    for (; p + 4 <= kc; p += 4) { /* four k steps a turn, B~ fetched 8 steps ahead */
        _mm_prefetch((const char *)(pb + 8 * NR), _MM_HINT_T0);
        _mm_prefetch((const char *)(pb + 9 * NR), _MM_HINT_T0);
        STEP(0);
        STEP(1);
        STEP(2);
        STEP(3);
        pb += 4 * NR;
    }
    for (; p < kc; p++) {
        STEP(0);
        pb += NR;
    }
#undef STEP
}

/* C's lines of an mr-row tile fetched while the k loop runs. */
MXP_INLINE void mxp_avx2_tile_prefetch_c(const void *c, size_t ldc, size_t mr)
{
    for (size_t i = 0; i < mr; i++) {
        _mm_prefetch((const char *)((const MXP_TILE_T *)c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)((const MXP_TILE_T *)c + i * ldc + MXP_TILE_NR - 1), _MM_HINT_T0);
    }
}

/* The tile's sums for R rows (R >= mr; the others stay 0, never stored),
 * A's element (i, p) at a[i * row_stride + p * k_stride]: packed A~ 1 and
 * MR, A in place lda and 1 (rows beyond `rows` then repeat the last one:
 * they are computed, never stored, and must not be read past A's end). */
MXP_INLINE void mxp_avx2_tile_rows(int R, size_t mr, size_t nr, size_t kc, const MXP_TILE_T *a, size_t rows,
                                   size_t row_stride, size_t k_stride, const MXP_TILE_T *pb, void *c, size_t ldc,
                                   double alpha, double beta)
{
    enum { MR = MXP_TILE_MR, NR = MXP_TILE_NR };
    const MXP_TILE_T *ar[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        ar[i] = a + ((size_t)i < rows ? (size_t)i : rows - 1) * row_stride;
    mxp_avx2_tile_prefetch_c(c, ldc, mr);
    MXP_TILE_V acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = MXP_TILE_V_(setzero)();
    size_t p = 0;
#if defined(__x86_64__)
    if (R == 6 && kc >= 4) {
        /* The six-row loop in assembly: twelve accumulators, two B registers
         * and two broadcast registers are 16 ymm registers, and GCC 12
         * spilled two accumulators per turn of the intrinsics' loop (two
         * stores and two reloads per 48 multiply-adds).  The same chain of
         * fused multiply-adds per element as the loop below. */
        size_t turns = kc / 4;
        const MXP_TILE_T *pa = a;
        if (row_stride == 1 && k_stride == MR) {
            __asm__ volatile(MXP_TILE_ASM_LOOP : MXP_AVX2_6ROW_OPERANDS(acc0, acc1) : : MXP_AVX2_6ROW_CLOBBERS);
            p = kc / 4 * 4;
        } else if (k_stride == 1 && rows == MR) {
            const size_t lda_bytes = row_stride * sizeof(MXP_TILE_T);
            __asm__ volatile(MXP_TILE_ASM_LOOP_A
                             : MXP_AVX2_6ROW_OPERANDS_A(acc0, acc1)
                             : [pa] "r"(pa), [lda] "r"(lda_bytes)
                             : MXP_AVX2_6ROW_CLOBBERS_A);
            p = kc / 4 * 4;
        }
    }
#endif
    mxp_avx2_tile_steps(R, ar, k_stride, p, kc, pb, acc0, acc1);
    mxp_avx2_tile_store(acc0, acc1, mr, nr, c, ldc, alpha, beta);
}

#ifdef MXP_TILE_ASM_LOOP_R
/* The tile with A's rows where they lie, their k values in nseg segments
 * of seglen (k = s * seglen + p of row i at rows[i] + off[s] + p
 * elements: a convolution's taps read in x, src/nn/conv-taps.c); rows
 * beyond mr repeat the last.  The sums run through every segment, B~
 * holding nseg * seglen rows. */
MXP_INLINE void mxp_avx2_tile_taps_rows(int R, size_t mr, size_t nr, size_t nseg, size_t seglen,
                                        const MXP_TILE_T *const *rows, const ptrdiff_t *off, const MXP_TILE_T *pb,
                                        void *c, size_t ldc, double alpha, double beta)
{
    enum { MR = MXP_TILE_MR, NR = MXP_TILE_NR };
    mxp_avx2_tile_prefetch_c(c, ldc, mr);
    MXP_TILE_V acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = MXP_TILE_V_(setzero)();
    for (size_t sg = 0; sg < nseg; sg++) {
        const MXP_TILE_T *ar[MR];
#pragma GCC unroll 6
        for (int i = 0; i < MR; i++)
            ar[i] = rows[(size_t)i < mr ? (size_t)i : mr - 1] + off[sg];
        size_t p = 0;
#if defined(__x86_64__)
        if (R == 6 && seglen >= 4) { /* the assembly loop (above), each row through its pointer */
            size_t turns = seglen / 4;
            const MXP_TILE_T *pbs = pb;
            __asm__ volatile(MXP_TILE_ASM_LOOP_R
                             : [pb] "+r"(pbs), [turns] "+r"(turns), MXP_AVX2_6ROW_ACCS(acc0, acc1)
                             : [rows] "r"(ar)
                             : MXP_AVX2_6ROW_CLOBBERS_R);
            p = seglen / 4 * 4;
        }
#endif
        mxp_avx2_tile_steps(R, ar, 1, p, seglen, pb + p * NR, acc0, acc1);
        pb += seglen * NR;
    }
    mxp_avx2_tile_store(acc0, acc1, mr, nr, c, ldc, alpha, beta);
}

MXP_INLINE void mxp_avx2_tile_taps(size_t mr, size_t nr, size_t nseg, size_t seglen, const MXP_TILE_T *const *rows,
                                   const ptrdiff_t *off, const MXP_TILE_T *pb, void *c, size_t ldc, double alpha,
                                   double beta)
{
    MXP_GEMM_BY_ROWS(mr, mxp_avx2_tile_taps_rows, mr, nr, nseg, seglen, rows, off, pb, c, ldc, alpha, beta);
}
#endif

MXP_INLINE void mxp_avx2_tile(size_t mr, size_t nr, size_t kc, const MXP_TILE_T *a, size_t rows, size_t row_stride,
                              size_t k_stride, const MXP_TILE_T *pb, void *c, size_t ldc, double alpha, double beta)
{
    MXP_GEMM_BY_ROWS(mr, mxp_avx2_tile_rows, mr, nr, kc, a, rows, row_stride, k_stride, pb, c, ldc, alpha, beta);
}

/* Small M: R rows (a constant) of two vectors with B read in place (rows
 * ldb apart: no packing of B for a few rows of A) and A packed [k][6]
 * (ars 1, aks 6) or where it is stored (element (i, p) at pa[i ars + p
 * aks]; the rows of R beyond mr repeat row mr - 1, never read past it); a
 * partial strip's columns through masked loads, never reading past nr.
 * The same chain of fused multiply-adds per element as the packed tile. */
MXP_INLINE void mxp_avx2_direct_rows(int R, size_t mr, size_t nr, size_t kc, const MXP_TILE_T *pa, size_t ars,
                                     size_t aks, const MXP_TILE_T *pb, size_t ldb, MXP_TILE_T *c, size_t ldc,
                                     double alpha, double beta)
{
    enum { MR = MXP_TILE_MR, L = MXP_TILE_LANES };
    const size_t n0 = nr < L ? nr : L, n1 = nr > L ? nr - L : 0;
    __m256i m0, m1; /* the lanes of each vector within nr */
    if (sizeof(MXP_TILE_T) == 4) {
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n0), lane);
        m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n1), lane);
    } else {
        const __m256i lane = _mm256_setr_epi64x(0, 1, 2, 3);
        m0 = _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)n0), lane);
        m1 = _mm256_cmpgt_epi64(_mm256_set1_epi64x((long long)n1), lane);
    }
    const int whole = nr == 2 * L;
    size_t off[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        off[i] = ((size_t)i < mr ? (size_t)i : mr - 1) * ars;
    MXP_TILE_V acc0[MR], acc1[MR];
#pragma GCC unroll 6
    for (int i = 0; i < MR; i++)
        acc0[i] = acc1[i] = MXP_TILE_V_(setzero)();
    for (size_t p = 0; p < kc; p++) {
        _mm_prefetch((const char *)(pb + 8 * ldb), _MM_HINT_T0);
        const MXP_TILE_V b0 = whole ? MXP_TILE_V_(loadu)(pb) : MXP_TILE_V_(maskload)(pb, m0);
        const MXP_TILE_V b1 = whole ? MXP_TILE_V_(loadu)(pb + L) : MXP_TILE_V_(maskload)(pb + L, m1);
#pragma GCC unroll 6
        for (int i = 0; i < R; i++) {
            const MXP_TILE_V ai = MXP_TILE_BROADCAST(pa + off[i]);
            acc0[i] = MXP_TILE_V_(fmadd)(ai, b0, acc0[i]);
            acc1[i] = MXP_TILE_V_(fmadd)(ai, b1, acc1[i]);
        }
        pa += aks;
        pb += ldb;
    }
    mxp_avx2_tile_store(acc0, acc1, mr, nr, c, ldc, alpha, beta);
}

#endif
