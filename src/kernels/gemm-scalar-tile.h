/* The portable GEMM micro-kernels, one text for float32
 * (src/kernels/f32-gemm/scalar.c) and float64 (f64-gemm/scalar.c):
 * mxp_scalar_tile, the scalar level's MR x NR tile, plain multiply then add
 * (ISO C: no contraction into FMA); and mxp_scalar_fma_tile, the twin of
 * the SIMD kernels, one per shape: each element's chain of fused
 * multiply-adds in k order, then alpha * sum and beta * C in one fused
 * multiply-add, as the vector kernels compute it.
 *
 * A template: the kernel file defines, before including it,
 *   MXP_TILE_T    the element: float or double
 *   MXP_TILE_FMA  its fused multiply-add: fmaf or fma
 *   MR, NR        the scalar level's tile
 * Included once per file, after kernels/gemm-kernels.h. */
#ifndef MXP_KERNELS_GEMM_SCALAR_TILE_H
#define MXP_KERNELS_GEMM_SCALAR_TILE_H

#include <math.h>
#include <stddef.h>
#include <string.h>

static inline __attribute__((always_inline)) void mxp_scalar_tile(size_t mr, size_t nr, size_t kc,
                                                                  const MXP_TILE_T *pa, const MXP_TILE_T *pb,
                                                                  MXP_TILE_T *pc, size_t ldc, double alpha,
                                                                  double beta)
{
    MXP_TILE_T acc[MR][NR];
    memset(acc, 0, sizeof acc);
    for (size_t p = 0; p < kc; p++)
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++)
                acc[i][j] += pa[p * MR + i] * pb[p * NR + j];
    const MXP_TILE_T fa = (MXP_TILE_T)alpha, fb = (MXP_TILE_T)beta;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            MXP_TILE_T *x = &pc[i * ldc + j];
            *x = beta == 0 ? fa * acc[i][j] : fa * acc[i][j] + fb * *x;
        }
}

#if MXP_HAVE_X86_KERNELS
/* Element (i, p) of A at a[i * a_row + p * a_k], (p, j) of B at b[p * ldb + j]. */
static void mxp_scalar_fma_tile(size_t mr, size_t nr, size_t kc, const MXP_TILE_T *a, size_t a_row, size_t a_k,
                                const MXP_TILE_T *b, size_t ldb, MXP_TILE_T *c, size_t ldc, double alpha, double beta)
{
    const MXP_TILE_T fa = (MXP_TILE_T)alpha, fb = (MXP_TILE_T)beta;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            MXP_TILE_T s = 0;
            for (size_t p = 0; p < kc; p++)
                s = MXP_TILE_FMA(a[i * a_row + p * a_k], b[p * ldb + j], s);
            const MXP_TILE_T x = fa * s;
            c[i * ldc + j] = beta != 0 ? MXP_TILE_FMA(fb, c[i * ldc + j], x) : x;
        }
}

/* The taps kernels' twin: row i's k = s * seglen + p at rows[i][off[s] + p],
 * B~ packed [k][NR]. */
static inline void mxp_scalar_fma_taps_tile(size_t mr, size_t nr, size_t nseg, size_t seglen, const void *const *rows,
                                            const ptrdiff_t *off, const MXP_TILE_T *b, size_t nrp, MXP_TILE_T *c,
                                            size_t ldc, double alpha, double beta)
{
    const MXP_TILE_T fa = (MXP_TILE_T)alpha, fb = (MXP_TILE_T)beta;
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            const MXP_TILE_T *a = rows[i];
            MXP_TILE_T s = 0;
            for (size_t sg = 0; sg < nseg; sg++)
                for (size_t p = 0; p < seglen; p++)
                    s = MXP_TILE_FMA(a[off[sg] + (ptrdiff_t)p], b[(sg * seglen + p) * nrp + j], s);
            const MXP_TILE_T x = fa * s;
            c[i * ldc + j] = beta != 0 ? MXP_TILE_FMA(fb, c[i * ldc + j], x) : x;
        }
}
#endif

#endif
