/* Packing for the integer GEMM (src/gemm/int8.c): op(A) and op(B)
 * blocks into the micro-kernels' panels, zero-padded, in the config's
 * layout: K-quads of bytes, [kc/4][MR][4] uint8 (int8 A with its top bit
 * flipped) and [kc/4][NR][4] int8 (vpdpbusd, the scalar kernel), or the
 * same values widened to int16 in K-pairs, [kc/2][MR][2] and [kc/2][NR][2]
 * (vpmaddwd, AVX2). */
#include <assert.h>
#include <string.h>

#include "gemm/int8-internal.h"

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* ---- K-quads of bytes ------------------------------------------------------ */

/* op(A)[i0 .. i0+mc, p0 .. p0+kc] as MR-row panels [kc/4][MR][4] of
 * uint8, int8 A with its top bit flipped (A + 128); zero-padded. */
static void pack_a_quads(const mxp_gemm_config *cfg, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0,
                         size_t kc, uint8_t *dst)
{
    const size_t mr = cfg->mr, kcp = (kc + 3) / 4 * 4;
    const uint8_t flip = a->dtype == MXP_S8 ? 0x80 : 0;
    const uint32_t flip4 = flip * 0x01010101u;
    for (size_t i = 0; i < mc; i += mr, dst += mr * kcp) {
        const size_t rows = min_size(mr, mc - i);
        if (rows < mr || kcp != kc)
            memset(dst, 0, mr * kcp);
        if (!a->trans) { /* rows: k contiguous; the panel written in order, a quad per row */
            const uint8_t *src = a->base + (i0 + i) * a->ld + p0;
            size_t p = 0;
            if (rows == 8 && mr == 8) /* the usual panel: a fixed count the compiler unrolls */
                for (; p + 4 <= kc; p += 4)
                    for (size_t r = 0; r < 8; r++) {
                        uint32_t q;
                        memcpy(&q, src + r * a->ld + p, 4);
                        q ^= flip4;
                        memcpy(dst + p * 8 + 4 * r, &q, 4);
                    }
            for (; p + 4 <= kc; p += 4)
                for (size_t r = 0; r < rows; r++) {
                    uint32_t q;
                    memcpy(&q, src + r * a->ld + p, 4);
                    q ^= flip4;
                    memcpy(dst + p * mr + 4 * r, &q, 4);
                }
            for (; p < kc; p++)
                for (size_t r = 0; r < rows; r++)
                    dst[p / 4 * 4 * mr + 4 * r + p % 4] = src[r * a->ld + p] ^ flip;
        } else { /* stored row p holds the panel's rows contiguously */
            for (size_t p = 0; p < kc; p++) {
                const uint8_t *src = a->base + (p0 + p) * a->ld + i0 + i;
                uint8_t *d = dst + p / 4 * 4 * mr + p % 4;
                for (size_t r = 0; r < rows; r++)
                    d[4 * r] = src[r] ^ flip;
            }
        }
    }
}

/* op(B)[p0 .. p0+kc, j0 .. j0+nc] as NR-column panels [kc/4][NR][4];
 * zero-padded (the padding of A~ then multiplies zeros).  Not transposed,
 * four stored rows at a time across all the panels, so that reads run
 * along B's rows.  With check, stops and returns true at the first K-pair
 * (rows p0 + 2t, p0 + 2t + 1; p0 is even) with |b0| + |b1| > 128, which
 * the vpmaddubsw kernel cannot take (src/gemm/int8.c); false otherwise. */
static bool pack_b_quads(const mxp_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                         size_t nc, int8_t *dst, bool check)
{
    const size_t nr = cfg->nr, kcp = (kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack; /* kpack 4, or 64 (AMX) */
    for (size_t j = 0; j < nc; j += nr)
        if (min_size(nr, nc - j) < nr || kcp != kc)
            memset(dst + j / nr * nr * kcp, 0, nr * kcp);
    if (b->trans) { /* column j is stored row j: copy quads */
        /* as 32-bit words: word q of stored row c -> dst word nr q + c */
        const mxp_x32_transpose_fn quads_t = mxp_x32_transpose_kernel(mxp_isa_current(), min_size(nr, nc));
        const mxp_s8_scan_fn scan = mxp_s8_scan_kernel(mxp_isa_current());
        for (size_t j = 0; j < nc; j += nr) {
            const size_t cols = min_size(nr, nc - j);
            int8_t *pd = dst + j / nr * nr * kcp;
            const int8_t *src = (const int8_t *)b->base + (j0 + j) * b->ld + p0;
            if (check && scan(src, b->ld, true, kc, cols)) /* the panel's lines, read again from L1 below */
                return true;
            quads_t(src, b->ld, cols, kc / 4, pd, nr);
            for (size_t c = 0; c < cols; c++) /* the last rows of an incomplete quad */
                for (size_t p = kc / 4 * 4; p < kc; p++)
                    pd[p / 4 * 4 * nr + 4 * c + p % 4] = src[c * b->ld + p];
        }
        return false;
    }
    const mxp_s8_pack_quads_fn interleave = mxp_s8_pack_quads_kernel(mxp_isa_current());
    /* QUADS quads of rows at a time across all the panels in one call,
     * each panel's written together: one quad at a time wrote lines in
     * every panel of a B~ block larger than L2, each a read-for-ownership
     * (as in pack.c); one call per panel and quad cost M = 16, N = K =
     * 4096 a fifth of its time (docs/gemm.md, "Narrow operands") */
    enum { QUADS = 2 }; /* M = 128, N = K = 4096: +4% over 1 (4: no better) */
    const size_t whole = kc / 4 * 4;
    size_t p = 0;
    for (; p < whole; p += 4 * QUADS) {
        const size_t quads = min_size(whole - p, 4 * QUADS) / 4;
        const int8_t *src = (const int8_t *)b->base + (p0 + p) * b->ld + j0;
        if (interleave(src, b->ld, quads, nc, nr, dst + p * nr, nr * kcp, check))
            return true;
    }
    p = whole;
    for (; p < kc; p++) { /* the last rows of an incomplete quad (the rest stays zero) */
        const int8_t *src = (const int8_t *)b->base + (p0 + p) * b->ld + j0;
        for (size_t j = 0; j < nc; j++) {
            dst[j / nr * nr * kcp + p / 4 * 4 * nr + 4 * (j % nr) + p % 4] = src[j];
            if (check && p % 2 == 1 && mxp_s8_wide_pair((src - b->ld)[j], src[j]))
                return true;
        }
    }
    return false;
}

/* op(A)[i0 .. i0+mc, p0 .. p0+kc] as MR-row panels [kcp/64][MR][64] of
 * uint8 (the AMX kernel: each row's 64 values of k contiguous), int8 A
 * with its top bit flipped; zero-padded. */
static void pack_a_chunks(const mxp_gemm_config *cfg, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0,
                          size_t kc, uint8_t *dst)
{
    const size_t mr = cfg->mr, kcp = (kc + 63) / 64 * 64;
    const uint8_t flip = a->dtype == MXP_S8 ? 0x80 : 0;
    for (size_t i = 0; i < mc; i += mr, dst += mr * kcp) {
        const size_t rows = min_size(mr, mc - i);
        if (rows < mr || kcp != kc)
            memset(dst, 0, mr * kcp);
        for (size_t r = 0; r < rows; r++) {
            uint8_t *d = dst + r * 64;
            if (!a->trans) { /* k contiguous: along the row, a chunk at a time (loops the compiler vectorizes) */
                const uint8_t *src = a->base + (i0 + i + r) * a->ld + p0;
                for (size_t p = 0; p < kc; p += 64) {
                    const size_t n = min_size(64, kc - p);
                    if (n == 64)
                        for (size_t t = 0; t < 64; t++)
                            d[p * mr + t] = src[p + t] ^ flip;
                    else
                        for (size_t t = 0; t < n; t++)
                            d[p * mr + t] = src[p + t] ^ flip;
                }
            } else {
                for (size_t p = 0; p < kc; p++)
                    d[p / 64 * 64 * mr + p % 64] = a->base[(p0 + p) * a->ld + i0 + i + r] ^ flip;
            }
        }
    }
}

/* ---- K-pairs of int16 ------------------------------------------------------ */

/* op(A)[i0 .. i0+mc, p0 .. p0+kc] as MR-row panels [kc/2][MR][2] of int16:
 * the uint8 values (int8 A with its top bit flipped) widened. */
static void pack_a_pairs(const mxp_gemm_config *cfg, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0,
                         size_t kc, int16_t *dst)
{
    const size_t mr = cfg->mr, kcp = (kc + 1) / 2 * 2;
    const uint8_t flip = a->dtype == MXP_S8 ? 0x80 : 0;
    /* whole panels of six stored rows: a kernel (src/kernels/u8-pack/) */
    const mxp_u8_pack_pairs6_fn pack6 = mr == 6 && !a->trans ? mxp_u8_pack_pairs6_kernel(mxp_isa_current()) : NULL;
    for (size_t i = 0; i < mc; i += mr, dst += mr * kcp) {
        const size_t rows = min_size(mr, mc - i);
        if (pack6 && rows == 6) {
            pack6(a->base + (i0 + i) * a->ld + p0, a->ld, kc, flip, dst);
            continue;
        }
        if (rows < mr || kcp != kc)
            memset(dst, 0, mr * kcp * sizeof *dst);
        if (!a->trans) { /* rows: k contiguous */
            for (size_t r = 0; r < rows; r++) {
                const uint8_t *src = a->base + (i0 + i + r) * a->ld + p0;
                for (size_t p = 0; p < kc; p++)
                    dst[p / 2 * 2 * mr + 2 * r + p % 2] = (int16_t)(src[p] ^ flip);
            }
        } else { /* stored row p holds the panel's rows contiguously */
            for (size_t p = 0; p < kc; p++) {
                const uint8_t *src = a->base + (p0 + p) * a->ld + i0 + i;
                int16_t *d = dst + p / 2 * 2 * mr + p % 2;
                for (size_t r = 0; r < rows; r++)
                    d[2 * r] = (int16_t)(src[r] ^ flip);
            }
        }
    }
}

/* op(B)[p0 .. p0+kc, j0 .. j0+nc] as NR-column panels [kc/2][NR][2] of
 * int16; not transposed, eight stored rows at a time across all the
 * panels, as in pack_b_quads. */
static void pack_b_pairs(const mxp_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                         size_t nc, int16_t *dst)
{
    const size_t nr = cfg->nr, kcp = (kc + 1) / 2 * 2;
    for (size_t j = 0; j < nc; j += nr)
        if (min_size(nr, nc - j) < nr || kcp != kc)
            memset(dst + j / nr * nr * kcp, 0, nr * kcp * sizeof *dst);
    if (b->trans) { /* column j is stored row j */
        /* widened into rows of int16 (a loop the compiler vectorizes), then
         * as 32-bit words, pair q of row c -> dst word nr q + c: one element
         * at a time cost the layer x W^T more than its multiply-adds */
        enum { CHUNK = 128 }; /* k values per pass: 16 rows of int16, 4 KiB */
        const mxp_x32_transpose_fn pairs_t = mxp_x32_transpose_kernel(mxp_isa_current(), min_size(nr, nc));
        int16_t wide[16 * CHUNK];
        assert(nr <= 16);
        for (size_t j = 0; j < nc; j += nr) {
            const size_t cols = min_size(nr, nc - j);
            int16_t *pd = dst + j / nr * nr * kcp;
            const int8_t *src = (const int8_t *)b->base + (j0 + j) * b->ld + p0;
            for (size_t p = 0; p < kc; p += CHUNK) {
                const size_t len = min_size(CHUNK, kc - p), even = len / 2 * 2;
                for (size_t c = 0; c < cols; c++)
                    for (size_t q = 0; q < len; q++)
                        wide[c * CHUNK + q] = src[c * b->ld + p + q];
                pairs_t(wide, CHUNK * sizeof *wide, cols, even / 2, pd + p * nr, nr);
                for (size_t c = 0; c < cols && even < len; c++) /* an odd kc's last value, alone in its pair */
                    pd[(p + even) * nr + 2 * c] = wide[c * CHUNK + even];
            }
        }
        return;
    }
    assert(nr == 16); /* the width of the K-pair kernels */
    const mxp_s8_pack_pairs_fn pack_b16 = mxp_s8_pack_pairs_kernel(mxp_isa_current());
    enum { PAIRS = 4 };
    const size_t whole = kc / 2 * 2;
    for (size_t p = 0; p < whole; p += 2 * PAIRS)
        pack_b16((const int8_t *)b->base + (p0 + p) * b->ld + j0, b->ld, (min_size(whole, p + 2 * PAIRS) - p) / 2, nc,
                 dst + p * nr, nr * kcp);
    if (kc % 2) { /* the last row, alone in its pair (the other stays zero) */
        const int8_t *src = (const int8_t *)b->base + (p0 + kc - 1) * b->ld + j0;
        for (size_t j = 0; j < nc; j++)
            dst[j / nr * nr * kcp + (kc - 1) * nr + 2 * (j % nr)] = src[j];
    }
}

/* ---- by layout --------------------------------------------------------------- */

void mxp_int8_pack_a(const mxp_gemm_config *cfg, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0,
                     size_t kc, void *dst)
{
    if (cfg->kpack == 2)
        pack_a_pairs(cfg, a, i0, mc, p0, kc, dst);
    else if (cfg->kpack == 64)
        pack_a_chunks(cfg, a, i0, mc, p0, kc, dst);
    else
        pack_a_quads(cfg, a, i0, mc, p0, kc, dst);
}

bool mxp_int8_pack_b(const mxp_gemm_config *cfg, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0,
                     size_t nc, void *dst, bool check)
{
    if (cfg->kpack == 2) {
        pack_b_pairs(cfg, b, p0, kc, j0, nc, dst);
        return false;
    }
    return pack_b_quads(cfg, b, p0, kc, j0, nc, dst, check);
}
