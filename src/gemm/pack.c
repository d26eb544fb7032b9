/* Packing: panels of op(A) and op(B) in the micro-kernel's order, converted
 * exactly to the accumulator type on the way by the SIMD conversion kernels
 * (called directly: gemm/widen.h).  Edge panels are zero-padded. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "gemm/gemm-internal.h"

/* The check of bfloat16 B for the vdpbf16ps kernel while it is packed
 * (mxp_gemm_pack_b): a nonzero |v| < 2^-63 is tiny.  key(v) = |v| - 1 as
 * uint16 (0 wraps to 0xffff), and v is tiny exactly when key(v) <
 * TINY_KEY_LIMIT: a running minimum over the values, compared once. */
enum { TINY_KEY_LIMIT = ((127 - 63) << 7) - 1 }; /* the bits of 2^-63, less one */

static inline uint16_t tiny_key(uint16_t v)
{
    return (uint16_t)((v & 0x7fffu) - 1u);
}

static inline uint16_t min_u16(uint16_t x, uint16_t y)
{
    return x < y ? x : y;
}

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

/* pack_panel when the operand already has the packed dtype (4 or 8 bytes):
 * bit copies, without mxp_convert's per-call cost (one call per k or per
 * line was a sixth of a float32 GEMM's time). */
#define PACK_COPY(T)                                                                                   \
    do {                                                                                               \
        T *dd = (T *)(void *)d;                                                                        \
        if (across_contiguous) { /* the lines of one k are adjacent in memory */                       \
            for (size_t p = 0; p < kc; p++)                                                            \
                memcpy(dd + p * width, src + (p0 + p) * ld + l0, lines * sizeof(T));                   \
        } else { /* each line is contiguous along k: interleave them */                                \
            const T *rows[64];                                                                         \
            for (size_t l = 0; l < lines; l++)                                                         \
                rows[l] = src + (l0 + l) * ld + p0;                                                    \
            if (lines == 6 && width == 6) { /* the usual MR: a fixed count the compiler unrolls */    \
                const T *r0 = rows[0], *r1 = rows[1], *r2 = rows[2], *r3 = rows[3], *r4 = rows[4];      \
                const T *r5 = rows[5];                                                                 \
                for (size_t p = 0; p < kc; p++, dd += 6) {                                             \
                    dd[0] = r0[p], dd[1] = r1[p], dd[2] = r2[p];                                       \
                    dd[3] = r3[p], dd[4] = r4[p], dd[5] = r5[p];                                       \
                }                                                                                      \
                break;                                                                                 \
            }                                                                                          \
            for (size_t p = 0; p < kc; p++)                                                            \
                for (size_t l = 0; l < lines; l++)                                                     \
                    dd[p * width + l] = rows[l][p];                                                    \
        }                                                                                              \
    } while (0)

static void pack_panel_copy(const mxp_gemm_operand *x, int lines_are_rows, int across_contiguous, size_t l0,
                            size_t lines, size_t width, size_t p0, size_t kc, size_t as, unsigned char *d)
{
    (void)lines_are_rows; /* stored rows: k (across) or lines (not across) */
    const size_t ld = x->ld;
    if (as == 4 && !across_contiguous && (lines >= 8 || (lines >= 4 && lines == width))) {
        /* lines along k, ld apart (B transposed: x W^T; A's rows, 6 at
         * AVX2): whole cache lines of them transposed in registers; one word
         * at a time from 32 rows 4 KiB apart thrashed L1's sets (f32 x W^T at
         * 128x1024x1024 took 5.0 ms against 2.8 for x W) */
        mxp_x32_transpose_kernel(mxp_isa_current(), lines)(x->base + (l0 * ld + p0) * 4, ld * 4, lines, kc, d, width);
        return;
    }
    if (as == 8 && !across_contiguous && lines >= 2) {
        /* float64 lines along k (A's rows; B in x W^T): 4 x 4 blocks
         * transposed in registers; a word at a time, A's packing was 4.5% of
         * a float64 512^3 product (AVX-512, Zen 4) */
        mxp_x64_transpose_kernel(mxp_isa_current(), lines)(x->base + (l0 * ld + p0) * 8, ld * 8, lines, kc, d, width);
        return;
    }
    if (as == 4) {
        const uint32_t *src = (const uint32_t *)(const void *)x->base;
        PACK_COPY(uint32_t);
    } else {
        const uint64_t *src = (const uint64_t *)(const void *)x->base;
        PACK_COPY(uint64_t);
    }
}
#undef PACK_COPY

/* pack_panel from bfloat16 into float32: the widening is a shift (the
 * bits of the conversion kernel's, NaNs included, which the products
 * quiet anyway), written straight into the panel -- a kernel call per k
 * for 6 or 16 elements was a seventh of a small bf16 GEMM at AVX2. */
static void pack_panel_bf16_f32(const mxp_gemm_operand *x, int lines_are_rows, int across_contiguous, size_t l0,
                                size_t lines, size_t width, size_t p0, size_t kc, uint32_t *d)
{
    const uint16_t *base = (const uint16_t *)(const void *)x->base;
    if (across_contiguous) {
        for (size_t p = 0; p < kc; p++) {
            const size_t sr = x->trans ? (lines_are_rows ? p0 + p : l0) : (lines_are_rows ? l0 : p0 + p);
            const size_t sc = x->trans ? (lines_are_rows ? l0 : p0 + p) : (lines_are_rows ? p0 + p : l0);
            const uint16_t *s = base + sr * x->ld + sc;
            uint32_t *o = d + p * width;
            for (size_t l = 0; l < lines; l++)
                o[l] = (uint32_t)s[l] << 16;
        }
        return;
    }
    for (size_t l = 0; l < lines; l++) {
        const uint16_t *s = base + (l0 + l) * x->ld + p0; /* a stored line: k contiguous */
        for (size_t p = 0; p < kc; p++)
            d[p * width + l] = (uint32_t)s[p] << 16;
    }
}

/* A panel of `width` lines (rows of A~ or columns of B~) by kc, written as
 * [k][width].  When the operand is contiguous across the lines (A
 * transposed, B not), one conversion per k covers the whole panel width;
 * otherwise one strided conversion per line. */
/* pack_panel's widened lines into float32: at most WIDEN_LINES lines,
 * WIDEN_K of k at a time (a 16 KiB block on the stack). */
enum { WIDEN_LINES = 32, WIDEN_K = 128 };

static void pack_panel(const mxp_gemm_operand *x, int lines_are_rows, size_t l0, size_t lines, size_t width,
                       size_t p0, size_t kc, mxp_dtype acc, unsigned char *d)
{
    const size_t as = mxp_dtype_itemsize(acc);
    if (lines < width)
        memset(d, 0, width * kc * as);
    /* Lines are rows of op(A) (walk across k) or columns of op(B) (walk down k). */
    const int across_contiguous = lines_are_rows ? x->trans : !x->trans;
    if (x->dtype == acc && (as == 4 || as == 8) && lines <= 64) { /* no conversion: plain copies */
        pack_panel_copy(x, lines_are_rows, across_contiguous, l0, lines, width, p0, kc, as, d);
        return;
    }
    if (x->dtype == MXP_BF16 && acc == MXP_F32) {
        pack_panel_bf16_f32(x, lines_are_rows, across_contiguous, l0, lines, width, p0, kc, (uint32_t *)(void *)d);
        return;
    }
    if (!across_contiguous && as == 4) {
        /* each line contiguous along k (A's rows, B's columns when B is
         * transposed): WIDEN_K of k at a time widened line by line (SIMD)
         * into a block of up to WIDEN_LINES lines, then the block
         * transposed in registers into the panel (the x32 transpose kernel
         * for the lines; fewer than its smallest: its scalar twin).  The
         * whole line widened, then one word at a time: float16 1024^3 at
         * 146 GFLOPS against 158 (AVX-512, the Xeon); float8_e4m3fn B
         * transposed into 48-wide panels, M = 8, N = K = 4096, Zen 4: 16
         * -> 8 ms. */
        float tmp[WIDEN_LINES * WIDEN_K];
        const size_t xs = mxp_dtype_itemsize(x->dtype);
        const mxp_gemm_widener w = mxp_gemm_widener_for(acc, x->dtype);
        for (size_t g = 0; g < lines; g += WIDEN_LINES) {
            const size_t gl = lines - g < WIDEN_LINES ? lines - g : WIDEN_LINES;
            const mxp_x32_transpose_fn t = mxp_x32_transpose_kernel(mxp_isa_current(), gl);
            for (size_t p = 0; p < kc; p += WIDEN_K) {
                const size_t count = kc - p < WIDEN_K ? kc - p : WIDEN_K;
                for (size_t l = 0; l < gl; l++)
                    mxp_gemm_widen(&w, tmp + l * WIDEN_K, x->base + ((l0 + g + l) * x->ld + p0 + p) * xs, count);
                t(tmp, WIDEN_K * sizeof(float), gl, count, d + (p * width + g) * as, width);
            }
        }
        return;
    }
    if (!across_contiguous && (as == 4 || as == 8) && kc <= 1024) {
        /* each line contiguous along k: converted whole (SIMD), then interleaved */
        double tmp[1024];
        const size_t xs = mxp_dtype_itemsize(x->dtype);
        const mxp_gemm_widener w = mxp_gemm_widener_for(acc, x->dtype);
        for (size_t l = 0; l < lines; l++) {
            const size_t line = l0 + l; /* a stored row: k contiguous */
            mxp_gemm_widen(&w, tmp, x->base + (line * x->ld + p0) * xs, kc);
            if (as == 4) {
                const float *t = (const float *)tmp;
                float *o = (float *)(void *)d;
                for (size_t p = 0; p < kc; p++)
                    o[p * width + l] = t[p];
            } else {
                double *o = (double *)(void *)d;
                for (size_t p = 0; p < kc; p++)
                    o[p * width + l] = tmp[p];
            }
        }
        return;
    }
    if (across_contiguous) { /* the lines of one k are adjacent in memory: one widening per k */
        const mxp_gemm_widener w = mxp_gemm_widener_for(acc, x->dtype);
        const size_t xs = mxp_dtype_itemsize(x->dtype);
        for (size_t p = 0; p < kc; p++) {
            const size_t sr = x->trans ? (lines_are_rows ? p0 + p : l0) : (lines_are_rows ? l0 : p0 + p);
            const size_t sc = x->trans ? (lines_are_rows ? l0 : p0 + p) : (lines_are_rows ? p0 + p : l0);
            mxp_gemm_widen(&w, d + p * width * as, x->base + (sr * x->ld + sc) * xs, lines);
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
/* The common case, bf16 already: 32-bit moves of (k, k+1) pairs, the loops
 * ordered so that reads run along stored rows.  An odd kc's last pair has
 * a zero high half (the caller zeroed the panel).  With tiny (NULL: no
 * check), whether a value read is tiny (above). */
static void pack_pairs_bf16(const mxp_gemm_operand *x, int lines_are_rows, size_t l0, size_t lines, size_t width,
                            size_t p0, size_t kc, uint16_t *d, bool *tiny)
{
    const uint16_t *base = (const uint16_t *)(const void *)x->base;
    const size_t ld = x->ld, pairs = kc / 2;
    uint32_t *d32 = (uint32_t *)(void *)d;
    uint16_t lo = 0xffff; /* the least tiny_key */
    /* Lines run along stored rows when a line is a row of op(A) not
     * transposed or a column of op(B) transposed. */
    if (lines_are_rows != x->trans) { /* k contiguous in each line: pairs are adjacent */
        if (lines >= 8 && pairs) { /* the pairs as 32-bit words, transposed in registers; the check by SIMD */
            mxp_x32_transpose_kernel(mxp_isa_current(), lines)(base + l0 * ld + p0, ld * 2, lines, pairs, d32, width);
            if (kc % 2)
                for (size_t l = 0; l < lines; l++)
                    d32[pairs * width + l] = base[(l0 + l) * ld + p0 + kc - 1];
            if (tiny)
                *tiny = mxp_bf16_scan_kernel(mxp_isa_current())(base + l0 * ld + p0, lines, kc, ld);
            return;
        }
        for (size_t l = 0; l < lines; l++) {
            const uint16_t *src = base + (l0 + l) * ld + p0;
            for (size_t q = 0; q < pairs; q++) {
                uint32_t v;
                memcpy(&v, src + 2 * q, 4);
                d32[q * width + l] = v;
            }
            if (kc % 2)
                d32[pairs * width + l] = src[kc - 1];
            for (size_t p = 0; tiny && p < kc; p++)
                lo = min_u16(lo, tiny_key(src[p]));
        }
    } else { /* k strided by ld: interleave two stored rows, lines contiguous */
        for (size_t q = 0; q < pairs; q++) {
            const uint16_t *r0 = base + (p0 + 2 * q) * ld + l0, *r1 = r0 + ld;
            uint32_t *out = d32 + q * width;
            for (size_t l = 0; l < lines; l++)
                out[l] = (uint32_t)r0[l] | (uint32_t)r1[l] << 16;
        }
        if (kc % 2) {
            const uint16_t *r0 = base + (p0 + kc - 1) * ld + l0;
            for (size_t l = 0; l < lines; l++)
                d32[pairs * width + l] = r0[l];
        }
        for (size_t p = 0; tiny && p < kc; p++)
            for (size_t l = 0; l < lines; l++)
                lo = min_u16(lo, tiny_key(base[(p0 + p) * ld + l0 + l]));
    }
    if (tiny)
        *tiny = lo < TINY_KEY_LIMIT;
}

/* kcp: the panel's k, padded with zero pairs (kc rounded up to the
 * kernel's kpack). */
static void pack_pairs_widened(const mxp_gemm_operand *x, size_t l0, size_t lines, size_t width, size_t p0, size_t kc,
                               uint32_t *d32);

static void pack_pairs(const mxp_gemm_operand *x, int lines_are_rows, size_t l0, size_t lines, size_t width,
                       size_t p0, size_t kc, size_t kcp, mxp_dtype packed, unsigned char *d, bool *tiny)
{
    const size_t ps = mxp_dtype_itemsize(packed);
    if (lines < width || kcp != kc)
        memset(d, 0, width * kcp * ps);
    if (x->dtype == MXP_BF16 && packed == MXP_BF16) {
        pack_pairs_bf16(x, lines_are_rows, l0, lines, width, p0, kc, (uint16_t *)(void *)d, tiny);
        return;
    }
    if (packed == MXP_BF16 && lines_are_rows != x->trans && mxp_gemm_fits_bf16(x->dtype)) {
        pack_pairs_widened(x, l0, lines, width, p0, kc, (uint32_t *)(void *)d);
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

/* bfloat16 bits of n values of another float dtype that fit bfloat16
 * exactly (mxp_gemm_fits_bf16): widened to float32 by the SIMD kernel,
 * then the top half of each, a truncation that loses nothing. */
enum { WIDEN_CHUNK = 256 };
static void widen_bf16(const mxp_gemm_widener *w, uint16_t *dst, const void *src, size_t n)
{
    uint32_t tmp[WIDEN_CHUNK];
    const size_t size = mxp_dtype_itemsize(w->from);
    for (size_t i = 0; i < n; i += WIDEN_CHUNK) {
        const size_t len = n - i < WIDEN_CHUNK ? n - i : WIDEN_CHUNK;
        mxp_gemm_widen(w, tmp, (const unsigned char *)src + i * size, len);
        for (size_t t = 0; t < len; t++)
            dst[i + t] = (uint16_t)(tmp[t] >> 16);
    }
}

/* The vdpbf16ps kernel's pairs (kpack 2: [kcp/2][width][2]) of lines
 * whose k is contiguous (rows of A, not transposed), of a float dtype that
 * fits bfloat16: each line's kc values widened (SIMD) WIDEN_CHUNK at a
 * time, then its pairs stored width words apart; padding as pack_pairs'
 * (the caller zeroed it).  The generic line conversion took a tenth of a
 * float8_e4m3fn 1024^3 product on this kernel. */
static void pack_pairs_widened(const mxp_gemm_operand *x, size_t l0, size_t lines, size_t width, size_t p0, size_t kc,
                               uint32_t *d32)
{
    const mxp_gemm_widener w = mxp_gemm_widener_for(MXP_F32, x->dtype);
    const size_t xs = mxp_dtype_itemsize(x->dtype);
    uint16_t line[WIDEN_CHUNK + 1];
    for (size_t l = 0; l < lines; l++)
        for (size_t p = 0; p < kc; p += WIDEN_CHUNK) { /* WIDEN_CHUNK is even: pairs stay whole */
            const size_t n = kc - p < WIDEN_CHUNK ? kc - p : WIDEN_CHUNK;
            widen_bf16(&w, line, x->base + ((l0 + l) * x->ld + p0 + p) * xs, n);
            line[n] = 0; /* an odd kc's last pair */
            uint32_t *o = d32 + p / 2 * width + l;
            for (size_t q = 0; q < (n + 1) / 2; q++)
                o[q * width] = (uint32_t)line[2 * q] | (uint32_t)line[2 * q + 1] << 16;
        }
}

/* The AMX kernel's A~ (kpack 32): rows of op(A) as [kcp/32][width][32] of
 * bfloat16, each row's 32 values of k contiguous; rows past `rows` and k
 * past kc zero.  From bfloat16, or a float dtype that fits it (widened). */
static void pack_chunks_bf16(const mxp_gemm_operand *x, size_t i0, size_t rows, size_t width, size_t p0, size_t kc,
                             size_t kcp, uint16_t *d)
{
    const uint16_t *base = (const uint16_t *)(const void *)x->base;
    const size_t ld = x->ld, xs = mxp_dtype_itemsize(x->dtype);
    const bool convert = x->dtype != MXP_BF16;
    const mxp_gemm_widener w = mxp_gemm_widener_for(MXP_F32, x->dtype);
    uint16_t line[32];
    if (rows < width || kcp != kc)
        memset(d, 0, width * kcp * 2);
    if (!x->trans) { /* k contiguous: copies along each row */
        for (size_t i = 0; i < rows; i++) {
            const unsigned char *src = x->base + ((i0 + i) * ld + p0) * xs;
            uint16_t *o = d + i * 32;
            for (size_t q = 0; q < kc; q += 32) {
                const size_t n = kc - q < 32 ? kc - q : 32;
                if (convert)
                    widen_bf16(&w, o + q * width, src + q * xs, n);
                else if (n == 32) /* a constant size the compiler inlines */
                    memcpy(o + q * width, src + q * 2, 64);
                else
                    memcpy(o + q * width, src + q * 2, n * 2);
            }
        }
        return;
    }
    for (size_t p = 0; p < kc; p++) { /* stored row p0 + p holds the rows' values of k = p contiguously */
        const uint16_t *v = base + (p0 + p) * ld + i0;
        if (convert) {
            widen_bf16(&w, line, x->base + ((p0 + p) * ld + i0) * xs, rows);
            v = line;
        }
        uint16_t *o = d + p / 32 * 32 * width + p % 32;
        for (size_t i = 0; i < rows; i++)
            o[i * 32] = v[i];
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
        if (cfg->kpack == 32) /* bfloat16 panels: bfloat16 A, or a float dtype that fits it (config.c's packs()) */
            pack_chunks_bf16(a, i0 + i, rows, mr, p0, kc, kcp, (uint16_t *)(void *)d);
        else if (cfg->kpack == 2)
            pack_pairs(a, 1, i0 + i, rows, mr, p0, kc, kcp, cfg->packed, d, NULL);
        else
            pack_panel(a, 1, i0 + i, rows, mr, p0, kc, cfg->packed, d);
        d += mr * kcp * ps;
    }
}

/* B not transposed, of a float dtype that fits bfloat16 (mxp_gemm_fits_bf16),
 * into the bfloat16 kernels' [kcp/2][NR][2] pairs: rows 2q and 2q + 1
 * widened to float32 (SIMD) WIDEN_CHUNK columns at a time, their top
 * halves paired into every panel in one pass; the padding (columns past
 * nc, k past kc) zero. */
static void pack_b_pairs_widened(const mxp_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc,
                                 size_t j0, size_t nc, uint32_t *d)
{
    const size_t nr = cfg->nr, kcp = (kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack, xs = mxp_dtype_itemsize(b->dtype);
    const size_t panel = nr * kcp / 2; /* words */
    const mxp_gemm_widener w = mxp_gemm_widener_for(MXP_F32, b->dtype);
    if (nc % nr || kcp != kc)
        memset(d, 0, (nc + nr - 1) / nr * panel * 4);
    uint32_t r0[WIDEN_CHUNK], r1[WIDEN_CHUNK]; /* float32 bits: the bfloat16 of each is its top half, exactly */
    for (size_t q = 0; q < (kc + 1) / 2; q++) {
        const unsigned char *s0 = b->base + ((p0 + 2 * q) * b->ld + j0) * xs;
        for (size_t c0 = 0; c0 < nc; c0 += WIDEN_CHUNK) {
            const size_t cn = nc - c0 < WIDEN_CHUNK ? nc - c0 : WIDEN_CHUNK;
            mxp_gemm_widen(&w, r0, s0 + c0 * xs, cn);
            if (2 * q + 1 < kc)
                mxp_gemm_widen(&w, r1, s0 + (b->ld + c0) * xs, cn);
            else
                memset(r1, 0, cn * 4);
            for (size_t c = 0; c < cn; c += nr) { /* c0 + c starts a panel (WIDEN_CHUNK % nr == 0) */
                uint32_t *o = d + (c0 + c) / nr * panel + q * nr;
                const size_t n = cn - c < nr ? cn - c : nr;
                for (size_t t = 0; t < n; t++) /* a loop the compiler vectorizes */
                    o[t] = r0[c + t] >> 16 | (r1[c + t] & 0xffff0000u);
            }
        }
    }
}

/* B not transposed, no conversion: all the NR panels of nc columns row by
 * row of B, so that reads stream along B's rows (panel by panel they would
 * jump ld elements every NR, which the prefetchers follow badly).  kpack 1:
 * row p of B -> row p of each panel; kpack 2 (bf16 pairs, NR = 32): rows
 * 2q, 2q+1 interleaved by a kernel (src/kernels/bf16-pack/).  Partial last
 * panel and odd kc: zero-padded. */
static bool pack_b_rows(const mxp_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                        size_t nc, unsigned char *d, bool *tiny)
{
    const size_t nr = cfg->nr, ps = mxp_dtype_itemsize(cfg->packed), ld = b->ld;
    const bool convert = b->dtype != cfg->packed; /* kpack 1: float16, float8, ... widened */
    if (!b->trans && convert && cfg->kpack != 1) { /* float8/6/4 into the bf16 kernels' pairs */
        pack_b_pairs_widened(cfg, b, p0, kc, j0, nc, (uint32_t *)(void *)d);
        return true;
    }
    /* kpack 32 (AMX): the same pairs, each panel's k padded to 32s with zeros */
    const bool pairs = (cfg->kpack == 2 || cfg->kpack == 32) && ps == 2 && nr == 32;
    if (b->trans || (convert && cfg->kpack != 1) || !(cfg->kpack == 1 || pairs) ||
        (cfg->kpack == 1 && ps != 4 && ps != 8))
        return false;
    if (pairs) { /* the check rides along (memory bound) */
        const mxp_bf16_pack_b_fn pack = mxp_bf16_pack_b_kernel(mxp_isa_current());
        const uint16_t *src = (const uint16_t *)(const void *)b->base + p0 * ld + j0;
        uint32_t *d32 = (uint32_t *)(void *)d;
        bool found = false;
        if (cfg->kpack == 2 || kc % 32 == 0) {
            found = pack(src, ld, kc, nc, d32);
        } else { /* panel by panel, the pairs from kc to the next 32 zero (the generic loops were a
                  * fifth of an attention product, 33 x 32 x 33, at the amx level) */
            const size_t pk = (kc + 1) / 2, pkp = (kc + 31) / 32 * 16; /* pairs a panel: packed, padded */
            for (size_t j = 0; j < nc; j += 32, d32 += 32 * pkp) {
                found |= pack(src + j, ld, kc, nc - j < 32 ? nc - j : 32, d32);
                memset(d32 + 32 * pk, 0, 32 * (pkp - pk) * sizeof *d32);
            }
        }
        if (tiny)
            *tiny = found;
        return true;
    }
    const size_t panel = nr * kc * ps, full = nc / nr, rest = nc % nr;
    if (rest) /* the partial panel's padding columns (every other entry is written below) */
        memset(d + full * panel, 0, panel);
    /* GROUP rows of B at a time, each panel's GROUP rows written together:
     * one row at a time wrote a line in each of the nc / NR panels, every
     * one a read-for-ownership of a line of a B~ block larger than L2 (M =
     * 128, N = K = 4096: f32 +10%, f64 +9%) */
    enum { GROUP = 8, CHUNK = 256 }; /* CHUNK: room for the columns at a time */
    const size_t chunk = CHUNK / nr * nr; /* whole panels: 256 for NR 32, 240 for 48 */
    const size_t bs = mxp_dtype_itemsize(b->dtype);
    const mxp_gemm_widener w = mxp_gemm_widener_for(cfg->packed, b->dtype);
    double tmp[GROUP * CHUNK]; /* room for the group's CHUNK values of the packed dtype */
    for (size_t p = 0; p < kc; p += GROUP) {
        const size_t g = kc - p < GROUP ? kc - p : GROUP;
        for (size_t c0 = 0; c0 < nc; c0 += chunk) {
            const size_t cn = nc - c0 < chunk ? nc - c0 : chunk;
            const unsigned char *src[GROUP];
            for (size_t r = 0; r < g; r++) {
                src[r] = b->base + ((p0 + p + r) * ld + j0 + c0) * bs;
                if (convert) {
                    mxp_gemm_widen(&w, tmp + r * CHUNK, src[r], cn);
                    src[r] = (const unsigned char *)(tmp + r * CHUNK);
                }
            }
            size_t c = 0;
            /* constant sizes the compiler inlines (a call to memcpy per
             * 64 bytes was 4% of an AVX2 32^3 product) */
            if (nr * ps == 192) /* f32 x 48, f64 x 24 (AVX-512) */
                for (; c + nr <= cn; c += nr)
                    for (size_t r = 0; r < g; r++)
                        memcpy(d + (c0 + c) / nr * panel + (p + r) * 192, src[r] + c * ps, 192);
            if (nr * ps == 64) /* f32 x 16, f64 x 8 (AVX2) */
                for (; c + nr <= cn; c += nr)
                    for (size_t r = 0; r < g; r++)
                        memcpy(d + (c0 + c) / nr * panel + (p + r) * 64, src[r] + c * ps, 64);
            for (; c < cn; c += nr) /* c0 + c starts a panel */
                for (size_t r = 0; r < g; r++)
                    memcpy(d + (c0 + c) / nr * panel + (p + r) * nr * ps, src[r] + c * ps,
                           (cn - c < nr ? cn - c : nr) * ps);
        }
    }
    return true;
}

bool mxp_gemm_pack_b(const mxp_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                     size_t nc, void *dst, bool check_tiny)
{
    bool tiny = false;
    check_tiny = check_tiny && cfg->packed == MXP_BF16 && b->dtype == MXP_BF16;
    if (pack_b_rows(cfg, b, p0, kc, j0, nc, dst, check_tiny ? &tiny : NULL))
        return tiny;
    const size_t nr = cfg->nr, ps = mxp_dtype_itemsize(cfg->packed);
    const size_t kcp = (kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack;
    unsigned char *d = dst;
    for (size_t j = 0; j < nc; j += nr) {
        size_t cols = nc - j < nr ? nc - j : nr;
        bool panel_tiny = false;
        if (cfg->kpack == 2 || cfg->kpack == 32)
            pack_pairs(b, 0, j0 + j, cols, nr, p0, kc, kcp, cfg->packed, d, check_tiny ? &panel_tiny : NULL);
        else
            pack_panel(b, 0, j0 + j, cols, nr, p0, kc, cfg->packed, d);
        tiny |= panel_tiny;
        d += nr * kcp * ps;
    }
    return tiny;
}
