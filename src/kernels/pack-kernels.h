/* The GEMM packing kernels' contracts and prototypes, expanded from
 * src/kernels/pack-list.inc. */
#ifndef MXP_KERNELS_PACK_KERNELS_H
#define MXP_KERNELS_PACK_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* dst[q * dst_ld + c] = the 32-bit word at src + c * ld + 4q (ld in bytes,
 * any alignment) for c < lines, q < count: float32 operands whose lines run
 * along k (B in x W^T), int8 K-quads of transposed B. */
typedef void (*mxp_x32_transpose_fn)(const void *src, size_t ld, size_t lines, size_t count, void *dst,
                                     size_t dst_ld);

/* dst[q * dst_ld + c] = the 64-bit word at src + c * ld + 8q (ld in bytes,
 * any alignment; dst 8-byte aligned) for c < lines, q < count: float64
 * operands whose lines run along k (A's rows, B in x W^T). */
typedef void (*mxp_x64_transpose_fn)(const void *src, size_t ld, size_t lines, size_t count, void *dst,
                                     size_t dst_ld);

/* dst[q * dst_ld + c] = the 16-bit word at src + c * ld + 2q (ld in bytes,
 * any alignment; dst 2-byte aligned) for c < lines, q < count: bfloat16 and
 * float16 NCHW planes into NHWC pixels and back. */
typedef void (*mxp_x16_transpose_fn)(const void *src, size_t ld, size_t lines, size_t count, void *dst,
                                     size_t dst_ld);

/* The kc x nc block of bfloat16 B at b (rows ld apart) into B~ for the
 * vdpbf16ps kernel: ceil(nc / 32) panels of [ceil(kc / 2)][32][2], each
 * 32 * ceil(kc / 2) pairs after the last, rows 2q and 2q + 1 interleaved;
 * columns from nc on and an odd kc's last second row are zeros.  Returns
 * whether the block holds a nonzero |x| < 2^-63 (whose products vdpbf16ps
 * could flush). */
typedef bool (*mxp_bf16_pack_b_fn)(const uint16_t *b, size_t ld, size_t kc, size_t nc, uint32_t *dst);

/* Does the rows x cols bfloat16 matrix (rows ld apart) hold a nonzero
 * |x| < 2^-63?  The GEMM's check before the bfloat16 kernel. */
typedef bool (*mxp_bf16_scan_fn)(const uint16_t *x, size_t rows, size_t cols, size_t ld);

/* Rows of int8 B into K-quads of `width`-column panels, `panel` bytes
 * apart: dst[(c / width) panel + 4 (width q + c % width) + t] =
 * src[(4q + t) ld + c] for q < quads, c < cols, t < 4 (a last panel's
 * columns from cols on are not written).  With check, returns whether a
 * pair of rows (4q, 4q + 1) or (4q + 2, 4q + 3) holds a column with
 * |b0| + |b1| > 128 (mxp_s8_wide_pair, below), found on the way; false
 * otherwise. */
typedef bool (*mxp_s8_pack_quads_fn)(const int8_t *src, size_t ld, size_t quads, size_t cols, size_t width,
                                     int8_t *dst, size_t panel, bool check);

/* Pairs of int8 rows into 16-column panels of int16 K-pairs [pairs][16][2]
 * (`panel` int16 apart): dst[c / 16 * panel + 32q + 2 (c % 16) + t] =
 * src[(2q + t) * ld + c] for q < pairs, c < cols, t < 2; a last panel's
 * columns from cols on are not written. */
typedef void (*mxp_s8_pack_pairs_fn)(const int8_t *src, size_t ld, size_t pairs, size_t cols, int16_t *dst,
                                     size_t panel);

/* dst[p/2][r][p%2] = src[r * ld + p] ^ flip for r < 6, p < k (int16
 * [ceil(k/2)][6][2]; an odd k's last pair ends with 0): six rows of uint8
 * A into int16 K-pairs. */
typedef void (*mxp_u8_pack_pairs6_fn)(const uint8_t *src, size_t ld, size_t k, uint8_t flip, int16_t *dst);

/* sums[l] = sum_p (src[l ld + p] ^ x) - (is_signed ? 128 len : 0) modulo
 * 2^32, x = is_signed ? 0x80 : flip, for l < lines: int8 lines' sums (or
 * uint8 after xor with flip). */
typedef void (*mxp_s8_sum_lines_fn)(const uint8_t *src, size_t ld, size_t lines, size_t len, bool is_signed,
                                    uint8_t flip, uint32_t *sums);

/* Whether int8 op(B) (k x n; stored rows ld apart, or stored lines of k
 * when trans) holds a K-pair, rows 2q and 2q + 1 of a column, with
 * |b0| + |b1| > 128: where it holds none, vpmaddubsw's int16 sum of a
 * pair's products with any uint8 A cannot saturate (255 * 128 < 32767).
 * An odd k's last row pairs with nothing. */
typedef bool (*mxp_s8_scan_fn)(const int8_t *b, size_t ld, bool trans, size_t k, size_t n);

/* |b0| + |b1| > 128 (|-128| is 128): the scans' test, element by element. */
static inline bool mxp_s8_wide_pair(int8_t b0, int8_t b1)
{
    const int m0 = b0 < 0 ? -(int)b0 : b0, m1 = b1 < 0 ? -(int)b1 : b1;
    return m0 + m1 > 128;
}

#define MXP_X32_TRANSPOSE(FN, ISA, MIN_LINES, TWIN) \
    void FN(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld);
#define MXP_X64_TRANSPOSE(FN, ISA, MIN_LINES, TWIN) \
    void FN(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld);
#define MXP_X16_TRANSPOSE(FN, ISA, MIN_LINES, TWIN) \
    void FN(const void *src, size_t ld, size_t lines, size_t count, void *dst, size_t dst_ld);
#define MXP_BF16_PACK_B(FN, ISA, TWIN) bool FN(const uint16_t *b, size_t ld, size_t kc, size_t nc, uint32_t *dst);
#define MXP_BF16_SCAN(FN, ISA, TWIN) bool FN(const uint16_t *x, size_t rows, size_t cols, size_t ld);
#define MXP_S8_PACK_QUADS(FN, ISA, TWIN) \
    bool FN(const int8_t *src, size_t ld, size_t quads, size_t cols, size_t width, int8_t *dst, size_t panel, \
            bool check);
#define MXP_S8_PACK_PAIRS(FN, ISA, TWIN) \
    void FN(const int8_t *src, size_t ld, size_t pairs, size_t cols, int16_t *dst, size_t panel);
#define MXP_U8_PACK_PAIRS6(FN, ISA, TWIN) \
    void FN(const uint8_t *src, size_t ld, size_t k, uint8_t flip, int16_t *dst);
#define MXP_S8_SUM_LINES(FN, ISA, TWIN) \
    void FN(const uint8_t *src, size_t ld, size_t lines, size_t len, bool is_signed, uint8_t flip, uint32_t *sums);
#define MXP_S8_SCAN(FN, ISA, TWIN) bool FN(const int8_t *b, size_t ld, bool trans, size_t k, size_t n);
#include "kernels/pack-list.inc"
#undef MXP_X32_TRANSPOSE
#undef MXP_X64_TRANSPOSE
#undef MXP_X16_TRANSPOSE
#undef MXP_BF16_PACK_B
#undef MXP_BF16_SCAN
#undef MXP_S8_PACK_QUADS
#undef MXP_S8_PACK_PAIRS
#undef MXP_U8_PACK_PAIRS6
#undef MXP_S8_SUM_LINES
#undef MXP_S8_SCAN

#endif
