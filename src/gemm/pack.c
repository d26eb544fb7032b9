/* Packing: panels of op(A) and op(B) in the micro-kernel's order, converted
 * exactly to the accumulator type on the way (mxp_convert, so the SIMD
 * conversion kernels do the work).  Edge panels are zero-padded. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gemm/gemm-internal.h"

/* Converts `count` elements of one row or column of an operand, starting at
 * element (r, c) and walking along `along_rows` (down a column) or across,
 * into dst with a byte stride. */
/* Converts `count` elements of op(X) starting at (r, c), every `step`-th
 * one, walking down a column (`down`) or across a row, into dst with a
 * byte stride. */
static void convert_line(const mxp_gemm_operand *x, size_t r, size_t c, int down, size_t step, size_t count,
                         void *dst, ptrdiff_t dst_stride, mxp_dtype acc)
{
    const size_t size = mxp_dtype_itemsize(x->dtype);
    /* stored row-major: op(X)(r, c) is X[r][c], or X[c][r] when transposed */
    size_t sr = x->trans ? c : r, sc = x->trans ? r : c;
    int step_is_row = down != x->trans; /* does the walk move along stored rows? */
    const unsigned char *src = x->base + (sr * x->ld + sc) * size;
    ptrdiff_t src_stride = (ptrdiff_t)(step * (step_is_row ? x->ld * size : size));
    mxp_convert_strided(dst, acc, dst_stride, src, x->dtype, src_stride, count, NULL);
}

/* A panel of `width` lines (rows of A~ or columns of B~) by kc, written as
 * [k][width].  When the operand is contiguous across the lines (A
 * transposed, B not), one conversion per k covers the whole panel width;
 * otherwise one strided conversion per line. */
static void pack_panel(const mxp_gemm_operand *x, int lines_are_rows, size_t l0, size_t lines, size_t width,
                       size_t p0, size_t kc, mxp_dtype acc, unsigned char *d)
{
    const size_t as = mxp_dtype_itemsize(acc);
    if (lines < width)
        memset(d, 0, width * kc * as);
    /* Lines are rows of op(A) (walk across k) or columns of op(B) (walk down k). */
    const int across_contiguous = lines_are_rows ? x->trans : !x->trans;
    if (across_contiguous) {
        for (size_t p = 0; p < kc; p++) {
            size_t r = lines_are_rows ? l0 : p0 + p, c = lines_are_rows ? p0 + p : l0;
            convert_line(x, r, c, lines_are_rows, 1, lines, d + p * width * as, (ptrdiff_t)as, acc);
        }
        return;
    }
    for (size_t l = 0; l < lines; l++) {
        size_t r = lines_are_rows ? l0 + l : p0, c = lines_are_rows ? p0 : l0 + l;
        convert_line(x, r, c, !lines_are_rows, 1, kc, d + l * as, (ptrdiff_t)(width * as), acc);
    }
}

/* The pair layout [k/2][width][2] of dot-product kernels (vdpbf16ps):
 * even and odd k go to alternate slots; an odd kc gets a zero last pair. */
/* The common case, bf16 already: plain 16-bit moves the compiler
 * vectorizes.  The stored matrix is walked row by row. */
static void pack_pairs_bf16(const mxp_gemm_operand *x, int lines_are_rows, size_t l0, size_t lines, size_t width,
                            size_t p0, size_t kc, uint16_t *d)
{
    const uint16_t *base = (const uint16_t *)(const void *)x->base;
    /* Lines run along stored rows when a line is a row of op(A) not
     * transposed or a column of op(B) transposed. */
    const bool line_is_stored_row = lines_are_rows != x->trans;
    for (size_t l = 0; l < lines; l++) {
        if (line_is_stored_row) { /* k contiguous: copy pairs as they are */
            const uint16_t *src = base + (l0 + l) * x->ld + p0;
            for (size_t p = 0; p < kc; p++)
                d[(p / 2) * width * 2 + l * 2 + p % 2] = src[p];
        } else { /* k strided by ld: interleave two stored rows */
            const uint16_t *src = base + p0 * x->ld + l0 + l;
            for (size_t p = 0; p < kc; p++)
                d[(p / 2) * width * 2 + l * 2 + p % 2] = src[p * x->ld];
        }
    }
}

static void pack_pairs(const mxp_gemm_operand *x, int lines_are_rows, size_t l0, size_t lines, size_t width,
                       size_t p0, size_t kc, mxp_dtype packed, unsigned char *d)
{
    const size_t ps = mxp_dtype_itemsize(packed), kcp = (kc + 1) / 2 * 2;
    if (lines < width || kcp != kc)
        memset(d, 0, width * kcp * ps);
    if (x->dtype == MXP_BF16 && packed == MXP_BF16) {
        pack_pairs_bf16(x, lines_are_rows, l0, lines, width, p0, kc, (uint16_t *)(void *)d);
        return;
    }
    for (size_t l = 0; l < lines; l++) {
        for (size_t odd = 0; odd < 2; odd++) {
            size_t count = (kc - odd + 1) / 2;
            if (!count)
                continue;
            size_t r = lines_are_rows ? l0 + l : p0 + odd, c = lines_are_rows ? p0 + odd : l0 + l;
            convert_line(x, r, c, !lines_are_rows, 2, count, d + (l * 2 + odd) * ps, (ptrdiff_t)(width * 2 * ps),
                         packed);
        }
    }
}

void mxp_gemm_pack_a(const mxp_gemm_config *cfg, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0,
                     size_t kc, void *dst)
{
    const size_t mr = cfg->mr, ps = mxp_dtype_itemsize(cfg->packed);
    const size_t kcp = (kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack;
    unsigned char *d = dst;
    for (size_t i = 0; i < mc; i += mr) {
        size_t rows = mc - i < mr ? mc - i : mr;
        if (cfg->kpack == 2)
            pack_pairs(a, 1, i0 + i, rows, mr, p0, kc, cfg->packed, d);
        else
            pack_panel(a, 1, i0 + i, rows, mr, p0, kc, cfg->packed, d);
        d += mr * kcp * ps;
    }
}

void mxp_gemm_pack_b(const mxp_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                     size_t nc, void *dst)
{
    const size_t nr = cfg->nr, ps = mxp_dtype_itemsize(cfg->packed);
    const size_t kcp = (kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack;
    unsigned char *d = dst;
    for (size_t j = 0; j < nc; j += nr) {
        size_t cols = nc - j < nr ? nc - j : nr;
        if (cfg->kpack == 2)
            pack_pairs(b, 0, j0 + j, cols, nr, p0, kc, cfg->packed, d);
        else
            pack_panel(b, 0, j0 + j, cols, nr, p0, kc, cfg->packed, d);
        d += nr * kcp * ps;
    }
}
