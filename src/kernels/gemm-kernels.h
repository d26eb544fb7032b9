/* Prototypes of the GEMM micro-kernels (see src/gemm/gemm-internal.h for
 * the contract): mxp_<acc>_gemm_ukernel_<MR>x<NR>__<isa>. */
#ifndef MXP_KERNELS_GEMM_KERNELS_H
#define MXP_KERNELS_GEMM_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MXP_GEMM_UKERNEL(name) \
    void name(size_t mr, size_t nr, size_t kc, const void *a, const void *b, void *c, size_t ldc, double alpha, \
              double beta);

MXP_GEMM_UKERNEL(mxp_f32_gemm_ukernel_4x8__scalar)
MXP_GEMM_UKERNEL(mxp_f64_gemm_ukernel_4x4__scalar)
MXP_GEMM_UKERNEL(mxp_f32_gemm_ukernel_6x16__avx2)
MXP_GEMM_UKERNEL(mxp_f64_gemm_ukernel_6x8__avx2)
MXP_GEMM_UKERNEL(mxp_f32_gemm_ukernel_6x32__avx512f)
MXP_GEMM_UKERNEL(mxp_f64_gemm_ukernel_6x16__avx512f)
MXP_GEMM_UKERNEL(mxp_bf16_gemm_ukernel_6x32__avx512bf16)

#undef MXP_GEMM_UKERNEL

/* The same with A read in place: mr rows lda elements apart, k contiguous
 * (kc a multiple of the kernel's k-packing); rows beyond mr are not read. */
#define MXP_GEMM_UKERNEL_A(name) \
    void name(size_t mr, size_t nr, size_t kc, const void *a, size_t lda, const void *b, void *c, size_t ldc, \
              double alpha, double beta);

MXP_GEMM_UKERNEL_A(mxp_f32_gemm_ukernel_6x32_a__avx512f)
MXP_GEMM_UKERNEL_A(mxp_bf16_gemm_ukernel_6x32_a__avx512bf16)

#undef MXP_GEMM_UKERNEL_A

/* Small-M micro-kernels reading B in place (rows ldb elements apart), A
 * packed [k][MR]: c = alpha * A~B + beta * c on an mr x nr tile. */
#define MXP_GEMM_DIRECT_UKERNEL(name) \
    void name(size_t mr, size_t nr, size_t kc, const void *a, const void *b, size_t ldb, void *c, size_t ldc, \
              double alpha, double beta);

MXP_GEMM_DIRECT_UKERNEL(mxp_f32_gemm_direct_8x48__avx512f)
MXP_GEMM_DIRECT_UKERNEL(mxp_f32_gemm_direct_6x16__avx2)
MXP_GEMM_DIRECT_UKERNEL(mxp_f64_gemm_direct_8x24__avx512f)
MXP_GEMM_DIRECT_UKERNEL(mxp_bf16_gemm_direct_8x32__avx512bf16)

#undef MXP_GEMM_DIRECT_UKERNEL

/* Integer micro-kernels (src/gemm/int8-internal.h): on one tile,
 * c = (row_off ? row_off[i] + col_off[j] : c) + A~ B~ modulo 2^32, kc a
 * multiple of the kernel's K-group: K-quads of bytes, A~ uint8
 * [kc/4][MR][4] and B~ int8 [kc/4][NR][4] (vpdpbusd, the scalar twin), or
 * K-pairs widened to int16, A~ [kc/2][MR][2] and B~ [kc/2][NR][2]
 * (vpmaddwd, AVX2). */
#define MXP_U8S8_GEMM_UKERNEL(name) \
    void name(size_t mr, size_t nr, size_t kc, const void *a, const void *b, int32_t *c, size_t ldc, \
              const int32_t *row_off, const int32_t *col_off);

MXP_U8S8_GEMM_UKERNEL(mxp_u8s8_gemm_ukernel_4x8__scalar)
MXP_U8S8_GEMM_UKERNEL(mxp_u8s8_gemm_ukernel_6x16__avx2)
MXP_U8S8_GEMM_UKERNEL(mxp_u8s8_gemm_ukernel_8x48__avx512vnni)

#undef MXP_U8S8_GEMM_UKERNEL

/* The same with uint8 A read in place: mr rows lda bytes apart, kc % 4 == 0. */
void mxp_u8s8_gemm_ukernel_8x48_a__avx512vnni(size_t mr, size_t nr, size_t kc, const uint8_t *a, size_t lda,
                                              const int8_t *b, int32_t *c, size_t ldc, const int32_t *row_off,
                                              const int32_t *col_off);

/* dst[4c + q] = r_q[c] for c < cols: four int8 rows into K-quads
 * (src/kernels/s8-pack/). */
void mxp_s8_interleave4__avx512f(const int8_t *r0, const int8_t *r1, const int8_t *r2, const int8_t *r3, size_t cols,
                                 int8_t *dst);

/* 32-bit transposes (src/kernels/x32-transpose/): dst[q * dst_ld + c] =
 * the 32-bit word at src + c * ld + 4q (ld in bytes, any alignment) for
 * c < lines, q < count.  Packs transposed float32 operands and int8
 * K-quads; the portable twin is mxp_x32_transpose_ref (src/gemm/pack.c). */
void mxp_x32_transpose__avx512f(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld);
void mxp_x32_transpose__avx2(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld);

/* sums[l] = sum_p (src[l ld + p] ^ x) - (is_signed ? 128 len : 0) modulo
 * 2^32, x = is_signed ? 0x80 : flip, for l < lines: int8 lines' sums (or
 * uint8 after xor with flip). */
void mxp_s8_line_sums__avx512f(const uint8_t *src, size_t ld, size_t lines, size_t len, bool is_signed, uint8_t flip,
                               uint32_t *sums);

/* Pairs of int8 rows into 16-column panels of int16 K-pairs [pairs][16][2]
 * (`panel` int16 apart): dst[c / 16 * panel + 32q + 2 (c % 16) + t] =
 * src[(2q + t) * ld + c] for q < pairs, c < cols, t < 2; a last panel's
 * columns from cols on are not written. */
void mxp_s8_s16_pack_b16__avx2(const int8_t *src, size_t ld, size_t pairs, size_t cols, int16_t *dst, size_t panel);

/* dst[p/2][r][p%2] = src[r * ld + p] ^ flip for r < 6, p < k (int16
 * [ceil(k/2)][6][2]; an odd k's last pair ends with 0): six rows of uint8
 * A into int16 K-pairs. */
void mxp_u8_s16_pack6__avx2(const uint8_t *src, size_t ld, size_t k, uint8_t flip, int16_t *dst);

/* Does the rows x cols bfloat16 matrix (rows ld apart) hold a nonzero
 * |x| < 2^-63 (whose products vdpbf16ps could flush)?  The GEMM's check
 * before the bf16 kernel (src/gemm/gemm.c has the portable twin). */
bool mxp_bf16_has_tiny__avx512f(const uint16_t *x, size_t rows, size_t cols, size_t ld);

/* The kc x nc block of bfloat16 B at b (rows ld apart) into B~ for the
 * vdpbf16ps kernel: ceil(nc / 32) panels of [ceil(kc / 2)][32][2], each
 * 32 * ceil(kc / 2) pairs after the last, rows 2q and 2q + 1 interleaved;
 * columns from nc on and an odd kc's last second row are zeros.  Returns
 * whether the block holds a nonzero |x| < 2^-63 (the check above, on the
 * way); src/gemm/pack.c has the portable twin. */
bool mxp_bf16_pack_b_pairs_32__avx512f(const uint16_t *b, size_t ld, size_t kc, size_t nc, uint32_t *dst);

#endif
