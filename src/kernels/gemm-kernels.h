/* The GEMM micro-kernels' contracts and prototypes, expanded from
 * src/kernels/gemm-list.inc (float) and u8s8-gemm-list.inc (integer). */
#ifndef MXP_KERNELS_GEMM_KERNELS_H
#define MXP_KERNELS_GEMM_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* c (mr x nr of ldc elements, accumulator type) = alpha * A~ B~ + beta * c,
 * where A~ is an MR x kc packed panel ([k][MR], or [k/2][MR][2] when the
 * kernel packs pairs) and B~ a kc x NR one likewise, zero-padded; kc is a
 * multiple of the kernel's kpack.  beta == 0 overwrites c, NaN included. */
typedef void (*mxp_gemm_ukernel_fn)(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c,
                                    size_t ldc, double alpha, double beta);

/* The same with A read in place (no A~): mr rows lda elements apart, k
 * contiguous, kc a multiple of kpack; rows beyond mr are never read. */
typedef void (*mxp_gemm_ukernel_a_fn)(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b,
                                      void *c, size_t ldc, double alpha, double beta);

/* A read in place through a row pointer each, its k values in nseg
 * segments of seglen: k = s * seglen + p of row i at rows[i] + off[s] + p
 * elements (rows beyond mr are never read; a convolution's taps, read in
 * x: src/nn/conv-taps.c); B~ packed for the nseg * seglen values of k.
 * Each element's sum is one chain through the segments. */
typedef void (*mxp_gemm_ukernel_taps_fn)(size_t mr, size_t nr, size_t nseg, size_t seglen, const void *const *rows,
                                         const ptrdiff_t *off, const void *b, void *c, size_t ldc, double alpha,
                                         double beta);

/* Small M: B read in place (rows ldb elements apart, columns beyond nr
 * never read), A~ packed [k][MR] (or [k/2][MR][2]); any kc, an odd one's
 * last pair taking a zero second row of B. */
typedef void (*mxp_gemm_direct_fn)(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb,
                                   void *c, size_t ldc, double alpha, double beta);

/* A direct kernel with A read where it is stored too, element (i, p) at
 * a[i * a_row + p * a_k] (A: a_row = lda, a_k = 1; A transposed: 1, lda):
 * a tiny product's tiles, nothing packed. */
typedef void (*mxp_gemm_direct_a_fn)(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k,
                                     const void *b, size_t ldb, void *c, size_t ldc, double alpha, double beta);

/* Integer: on one tile, c = (row_off ? row_off[i] + col_off[j] : c) + A~ B~
 * modulo 2^32, kc a multiple of the kernel's K-group: K-quads of bytes, A~
 * uint8 [kc/4][MR][4] and B~ int8 [kc/4][NR][4] (vpdpbusd), or K-pairs
 * widened to int16, A~ [kc/2][MR][2] and B~ [kc/2][NR][2] (vpmaddwd). */
typedef void (*mxp_u8s8_gemm_ukernel_fn)(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c,
                                         size_t ldc, const int32_t *row_off, const int32_t *col_off);

/* The same with uint8 A read in place: mr rows lda bytes apart (rows
 * beyond mr never read), kc % 4 == 0. */
typedef void (*mxp_u8s8_gemm_ukernel_a_fn)(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda,
                                           const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                                           const int32_t *col_off);

/* An edge panel of mr < 6 rows computes 2 or 4 rows of sums, not 6 (M =
 * 128 ends in a panel of 2 rows: 1/22 of the work); each row's sums are
 * the same bits either way.  Calls f(R, ...) with R the fewest of 6, 4, 2
 * rows covering mr (a constant in each call, for f's unrolled loops). */
#define MXP_GEMM_BY_ROWS(mr, f, ...)                                                                              \
    do {                                                                                                           \
        if ((mr) > 4)                                                                                              \
            f(6, __VA_ARGS__);                                                                                     \
        else if ((mr) > 2)                                                                                         \
            f(4, __VA_ARGS__);                                                                                     \
        else                                                                                                       \
            f(2, __VA_ARGS__);                                                                                     \
    } while (0)

#define MXP_GEMM_UKERNEL(FN, ACC, PACKED, KPACK, ISA, MR, NR, MC, KC, NC, TWIN)                                   \
    void FN(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c, size_t ldc, double alpha,        \
            double beta);                                                                                          \
    void TWIN(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c, size_t ldc, double alpha,      \
              double beta);
#define MXP_GEMM_UKERNEL_A(FN, OF, MAX_N, TWIN)                                                                      \
    void FN(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b, void *c, size_t ldc,          \
            double alpha, double beta);                                                                            \
    void TWIN(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b, void *c, size_t ldc,        \
              double alpha, double beta);
#define MXP_GEMM_DIRECT(FN, ACC, PACKED, KPACK, ISA, MR, NR, KC, STEP, STEP_MULTI, MAX_M, TWIN)                   \
    void FN(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb, void *c, size_t ldc,          \
            double alpha, double beta);                                                                            \
    void TWIN(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb, void *c, size_t ldc,        \
              double alpha, double beta);
#define MXP_GEMM_DIRECT_A(FN, OF, TWIN)                                                                            \
    void FN(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k, const void *b, size_t ldb,   \
            void *c, size_t ldc, double alpha, double beta);                                                       \
    void TWIN(size_t mr, size_t nr, size_t kc, const void *a, size_t a_row, size_t a_k, const void *b, size_t ldb, \
              void *c, size_t ldc, double alpha, double beta);
#define MXP_GEMM_UKERNEL_TAPS(FN, OF, TWIN)                                                                        \
    void FN(size_t mr, size_t nr, size_t nseg, size_t seglen, const void *const *rows, const ptrdiff_t *off,         \
            const void *b, void *c, size_t ldc, double alpha, double beta);                                        \
    void TWIN(size_t mr, size_t nr, size_t nseg, size_t seglen, const void *const *rows, const ptrdiff_t *off,       \
              const void *b, void *c, size_t ldc, double alpha, double beta);
#define MXP_GEMM_UKERNEL_RELEASE(OF, RELEASE) void RELEASE(void);
#include "kernels/gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_UKERNEL_TAPS
#undef MXP_GEMM_UKERNEL_RELEASE
#undef MXP_GEMM_DIRECT
#undef MXP_GEMM_DIRECT_A

#define MXP_U8S8_GEMM_UKERNEL(FN, PACKED, KPACK, ISA, MR, NR, MC, KC, NC, DEEP_M, TWIN)                           \
    void FN(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c, size_t ldc,                   \
            const int32_t *row_off, const int32_t *col_off);                                                       \
    void TWIN(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c, size_t ldc,                 \
              const int32_t *row_off, const int32_t *col_off);
#define MXP_U8S8_GEMM_UKERNEL_A(FN, OF, TWIN)                                                                      \
    void FN(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c, size_t ldc,  \
            const int32_t *row_off, const int32_t *col_off);                                                       \
    void TWIN(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda, const int8_t *b, int32_t *c,           \
              size_t ldc, const int32_t *row_off, const int32_t *col_off);
#define MXP_GEMM_UKERNEL_RELEASE(OF, RELEASE) void RELEASE(void);
#define MXP_U8S8_GEMM_UKERNEL_U7 MXP_U8S8_GEMM_UKERNEL
#include "kernels/u8s8-gemm-list.inc"
#undef MXP_U8S8_GEMM_UKERNEL
#undef MXP_U8S8_GEMM_UKERNEL_A
#undef MXP_U8S8_GEMM_UKERNEL_U7
#undef MXP_GEMM_UKERNEL_RELEASE

#endif
