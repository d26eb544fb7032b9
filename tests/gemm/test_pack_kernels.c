/* Every line of src/kernels/pack-list.inc that this CPU runs, against its
 * twin (and the twins against the definitions), bit for bit: the 32-bit
 * transposes (float32 operands whose lines run along k, as B in x W^T; the
 * int8 K-quads of transposed B) and the 16-bit ones (a convolution's
 * bfloat16 planes) for every line count up to 48 and word
 * counts 0 .. 40, rows tight, odd, 4 KiB and 1001 bytes apart, aligned and
 * a byte off, written 56 words apart or interleaved (as wide as the lines),
 * the words they must not write left alone; bfloat16 B packed
 * into k-pairs for every kc (odd ones too) and nc around the panel width,
 * with the tiny-value check's answer for one tiny value at every position;
 * the tiny-value scan at every position of every row length 0 .. 150; the
 * integer GEMM's K-quad and K-pair packing around the vector widths; and
 * the line sums of int8 lines and of uint8 lines after an xor, every length
 * 0 .. 200, modulo 2^32 as the corrections need. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/pack-kernels.h"
#include "mxp/cpu.h"
#include "support/prng.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

enum kind {
    X32_TRANSPOSE, X64_TRANSPOSE, X16_TRANSPOSE, BF16_PACK_B, BF16_SCAN, S8_PACK_QUADS, S8_PACK_PAIRS, U8_PACK_PAIRS6,
    S8_SUM_LINES, S8_SCAN
};

typedef union fn {
    mxp_x32_transpose_fn x32_transpose;
    mxp_x64_transpose_fn x64_transpose;
    mxp_x16_transpose_fn x16_transpose;
    mxp_bf16_pack_b_fn bf16_pack_b;
    mxp_bf16_scan_fn bf16_scan;
    mxp_s8_pack_quads_fn s8_pack_quads;
    mxp_s8_pack_pairs_fn s8_pack_pairs;
    mxp_u8_pack_pairs6_fn u8_pack_pairs6;
    mxp_s8_sum_lines_fn s8_sum_lines;
    mxp_s8_scan_fn s8_scan;
} fn;

static const struct entry {
    enum kind kind;
    const char *name;
    mxp_isa isa;
    fn f, twin;
} entries[] = {
#define MXP_X32_TRANSPOSE(f, isa, min_lines, twin) \
    { X32_TRANSPOSE, #f, isa, { .x32_transpose = f }, { .x32_transpose = twin } },
#define MXP_X64_TRANSPOSE(f, isa, min_lines, twin) \
    { X64_TRANSPOSE, #f, isa, { .x64_transpose = f }, { .x64_transpose = twin } },
#define MXP_X16_TRANSPOSE(f, isa, min_lines, twin) \
    { X16_TRANSPOSE, #f, isa, { .x16_transpose = f }, { .x16_transpose = twin } },
#define MXP_BF16_PACK_B(f, isa, twin) { BF16_PACK_B, #f, isa, { .bf16_pack_b = f }, { .bf16_pack_b = twin } },
#define MXP_BF16_SCAN(f, isa, twin) { BF16_SCAN, #f, isa, { .bf16_scan = f }, { .bf16_scan = twin } },
#define MXP_S8_PACK_QUADS(f, isa, twin) { S8_PACK_QUADS, #f, isa, { .s8_pack_quads = f }, { .s8_pack_quads = twin } },
#define MXP_S8_PACK_PAIRS(f, isa, twin) { S8_PACK_PAIRS, #f, isa, { .s8_pack_pairs = f }, { .s8_pack_pairs = twin } },
#define MXP_U8_PACK_PAIRS6(f, isa, twin) \
    { U8_PACK_PAIRS6, #f, isa, { .u8_pack_pairs6 = f }, { .u8_pack_pairs6 = twin } },
#define MXP_S8_SUM_LINES(f, isa, twin) { S8_SUM_LINES, #f, isa, { .s8_sum_lines = f }, { .s8_sum_lines = twin } },
#define MXP_S8_SCAN(f, isa, twin) { S8_SCAN, #f, isa, { .s8_scan = f }, { .s8_scan = twin } },
#include "kernels/pack-list.inc"
};

/* Runs check on every entry of the kind this CPU has; skips when none. */
static void for_each(enum kind kind, void (*check)(const struct entry *e))
{
    int ran = 0;
    for (size_t i = 0; i < NELEMS(entries); i++)
        if (entries[i].kind == kind && entries[i].isa <= mxp_isa_supported()) {
            print_message("%s\n", entries[i].name);
            check(&entries[i]);
            ran++;
        }
    if (!ran)
        skip();
}

/* ---- 32- and 16-bit transposes --------------------------------------------- */

/* A transpose kernel of `size`-byte words (8: x64, 4: x32, 2: x16) through one type. */
static void transpose_call(const struct entry *e, bool twin, const void *src, size_t ld, size_t lines, size_t count,
                           void *dst, size_t dst_ld)
{
    const fn *f = twin ? &e->twin : &e->f;
    if (e->kind == X32_TRANSPOSE)
        f->x32_transpose(src, ld, lines, count, dst, dst_ld);
    else if (e->kind == X64_TRANSPOSE)
        f->x64_transpose(src, ld, lines, count, dst, dst_ld);
    else
        f->x16_transpose(src, ld, lines, count, dst, dst_ld);
}

static void check_transpose(const struct entry *e)
{
    enum { MAXL = 48, MAXQ = 40, DLD = 56 };
    const size_t size = e->kind == X64_TRANSPOSE ? 8 : e->kind == X32_TRANSPOSE ? 4 : 2;
    const size_t lds[] = { size * MAXQ, size * MAXQ + 3, 4096, 1001 }; /* bytes: tight, odd, 4 KiB apart, odd */
    uint64_t rng = 7;
    static unsigned char src[MAXL * 4096 + 64];
    static uint64_t got[DLD * MAXQ + 16], want[DLD * MAXQ + 16];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (unsigned char)prng_next(&rng);
    for (size_t li = 0; li < NELEMS(lds); li++)
        for (size_t off = 0; off < 2; off++) /* an aligned source and one a byte off */
            for (size_t lines = 0; lines <= MAXL; lines++)
                for (size_t count = 0; count <= MAXQ; count++)
                    for (int dense = 0; dense < 2; dense++) { /* rows DLD apart, or as wide as the lines */
                        const size_t ld = lds[li], dld = dense && lines ? lines : DLD;
                        memset(got, 0x55, sizeof got);
                        memset(want, 0x55, sizeof want);
                        transpose_call(e, true, src + off, ld, lines, count, want, dld);
                        transpose_call(e, false, src + off, ld, lines, count, got, dld);
                        if (memcmp(got, want, sizeof got) != 0)
                            fail_msg("%s: lines %zu, count %zu, ld %zu, offset %zu, dst_ld %zu: the words differ",
                                     e->name, lines, count, ld, off, dld);
                    }
    /* the twin itself against the definition */
    transpose_call(e, true, src, 4096, 3, 5, got, DLD);
    for (size_t q = 0; q < 5; q++)
        for (size_t c = 0; c < 3; c++) {
            uint64_t w = 0, g = 0;
            memcpy(&w, src + c * 4096 + size * q, size);
            memcpy(&g, (const unsigned char *)got + (q * DLD + c) * size, size);
            assert_int_equal(g, w);
        }
}

static void test_x32_transposes_equal_their_twin(void **state)
{
    (void)state;
    for_each(X32_TRANSPOSE, check_transpose);
}

static void test_x64_transposes_equal_their_twin(void **state)
{
    (void)state;
    for_each(X64_TRANSPOSE, check_transpose);
}

static void test_x16_transposes_equal_their_twin(void **state)
{
    (void)state;
    for_each(X16_TRANSPOSE, check_transpose);
}

/* ---- bfloat16: B into k-pairs, the tiny-value scan -------------------------- */

enum {
    TINY = (127 - 70) << 7,  /* 2^-70: tiny */
    LIMIT = (127 - 63) << 7, /* 2^-63: the smallest magnitude that is not */
};

/* bfloat16 in [-2, 2) with a random exponent's worth of spread, never tiny
 * (|x| >= 2^-8) nor zero. */
static uint16_t random_bf16(uint64_t *s)
{
    const uint64_t r = prng_next(s);
    const uint16_t sign = (uint16_t)((r & 1) << 15), exp = (uint16_t)(127 - 8 + (r >> 1) % 9);
    return (uint16_t)(sign | exp << 7 | (r >> 8) % 128);
}

/* Every kc (odd ones too) and nc around the panel width, B's rows ld apart
 * with tiny values in the padding; checked against the layout element by
 * element, zeros included, and the check's answer with one tiny value
 * (either sign, at the limit's neighbour) at every position, and with
 * 2^-63, zeros and larger values only. */
static void check_bf16_pack(const struct entry *e)
{
    const size_t kcs[] = { 1, 2, 3, 8, 9, 17 }, ncs[] = { 1, 5, 31, 32, 33, 64, 70 };
    const uint16_t tinies[] = { 0x0001, 0x8001, LIMIT - 1, 0x8000 | (LIMIT - 1), TINY };
    uint64_t seed = 5;
    for (size_t a = 0; a < NELEMS(kcs); a++)
        for (size_t b = 0; b < NELEMS(ncs); b++) {
            const size_t kc = kcs[a], nc = ncs[b], ld = nc + 3, pairs = (kc + 1) / 2, panels = (nc + 31) / 32;
            uint16_t *x = malloc(kc * ld * sizeof *x);
            uint32_t *d = malloc(panels * 32 * pairs * sizeof *d);
            assert_true(x && d);
            for (size_t i = 0; i < kc * ld; i++) {
                const size_t c = i % ld;
                x[i] = c >= nc ? 0x0001 : c % 7 == 0 ? 0x0000 : c % 7 == 1 ? LIMIT : random_bf16(&seed);
            }
            memset(d, 0xab, panels * 32 * pairs * sizeof *d);
            assert_false(e->f.bf16_pack_b(x, ld, kc, nc, d));
            for (size_t jp = 0; jp < panels; jp++)
                for (size_t q = 0; q < pairs; q++)
                    for (size_t l = 0; l < 32; l++) {
                        const size_t c = jp * 32 + l;
                        const uint32_t lo = c < nc ? x[2 * q * ld + c] : 0;
                        const uint32_t hi = c < nc && 2 * q + 1 < kc ? x[(2 * q + 1) * ld + c] : 0;
                        const uint32_t got = d[(jp * pairs + q) * 32 + l];
                        if (got != (lo | hi << 16))
                            fail_msg("%s, kc %zu nc %zu: panel %zu pair %zu column %zu is 0x%08x, not 0x%08x",
                                     e->name, kc, nc, jp, q, l, (unsigned)got, (unsigned)(lo | hi << 16));
                    }
            for (size_t p = 0; p < kc; p++)
                for (size_t c = 0; c < nc; c++) {
                    const uint16_t keep = x[p * ld + c];
                    x[p * ld + c] = tinies[(p + c) % NELEMS(tinies)];
                    if (!e->f.bf16_pack_b(x, ld, kc, nc, d))
                        fail_msg("%s, kc %zu nc %zu: tiny 0x%04x at (%zu, %zu) not found", e->name, kc, nc,
                                 x[p * ld + c], p, c);
                    x[p * ld + c] = keep;
                }
            free(x);
            free(d);
        }
}

static void test_bf16_pack_b_kernels_write_the_layout_and_find_every_tiny_value(void **state)
{
    (void)state;
    for_each(BF16_PACK_B, check_bf16_pack);
}

/* One nonzero |x| < 2^-63 at every position of every row length 0..150 is
 * found, in both signs and at the limit's neighbours; zeros, 2^-63 itself
 * and larger values, and tiny values in the padding between rows, are
 * not. */
static void check_bf16_scan(const struct entry *e)
{
    const uint16_t tinies[] = { 0x0001, 0x8001, LIMIT - 1, (uint16_t)(0x8000 | (LIMIT - 1)), 0x0040 /* subnormal */ };
    const uint16_t fine[] = { 0x0000, 0x8000, LIMIT, (uint16_t)(0x8000 | LIMIT), 0x3f80 /* 1 */, 0x7f80 /* inf */,
                              0x7fc0 /* NaN */ };
    enum { MAXC = 150, ROWS = 3, PAD = 5 };
    uint16_t *x = malloc((size_t)ROWS * (MAXC + PAD) * sizeof *x);
    assert_non_null(x);
    for (size_t cols = 0; cols <= MAXC; cols++) {
        const size_t ld = cols + PAD;
        for (size_t i = 0; i < ROWS * ld; i++)
            x[i] = (i % ld) >= cols ? 0x0001 : fine[i % NELEMS(fine)]; /* tiny only in the padding */
        assert_false(e->f.bf16_scan(x, ROWS, cols, ld));
        for (size_t pos = 0; pos < ROWS * cols; pos++) {
            const size_t at = pos / cols * ld + pos % cols;
            const uint16_t keep = x[at];
            x[at] = tinies[pos % NELEMS(tinies)];
            if (!e->f.bf16_scan(x, ROWS, cols, ld))
                fail_msg("%s, cols %zu: tiny 0x%04x at row %zu column %zu not found", e->name, cols, x[at],
                         pos / cols, pos % cols);
            x[at] = keep;
        }
    }
    free(x);
}

static void test_bf16_scans_find_every_tiny_value_and_nothing_else(void **state)
{
    (void)state;
    for_each(BF16_SCAN, check_bf16_scan);
}

/* ---- integer packing ----------------------------------------------------------- */

static void fill_random(void *p, size_t n, uint64_t *rng)
{
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)prng_next(rng);
}

/* Rows into K-quads of panels 16 and 48 columns wide, 1 to 3 quads,
 * every column count 0 .. 70, rows at odd offsets, panels apart by more
 * than they fill (the gaps must stay untouched); the check off, then on:
 * bytes whose pairs (rows 4q and 4q + 1, 4q + 2 and 4q + 3) are within
 * |b0| + |b1| <= 128, at 128 often, not found wide, then one pair of each
 * column made wide by one in turn, found (and with no check: false). */
static void check_s8_quads(const struct entry *e)
{
    enum { MAXC = 70, LD = 83, MAXQ = 3, BYTES = 5 * 4 * 48 * MAXQ + 64 };
    static int8_t src[4 * MAXQ * LD], got[BYTES], want[BYTES];
    static const size_t widths[] = { 16, 48 };
    uint64_t rng = 13;
    for (int narrow = 0; narrow < 2; narrow++) {
        if (narrow) /* pairs at the bound: 64 + 64, -128 + 0, ... */
            for (size_t i = 0; i < 2 * MAXQ * LD; i++) {
                const uint64_t r = prng_next(&rng);
                const int v = (int)(r % 129);
                const size_t at = i / LD * 2 * LD + i % LD; /* row 2 (i / LD), the first of a pair */
                src[at] = (int8_t)((r >> 8) & 1 ? -v : v);
                src[at + LD] = (int8_t)((r >> 9) & 1 ? -(128 - v) : 128 - v);
            }
        else
            fill_random(src, sizeof src, &rng);
        for (size_t wi = 0; wi < NELEMS(widths); wi++)
            for (size_t quads = 1; quads <= MAXQ; quads++)
                for (size_t off = 0; off < 3; off++)
                    for (size_t cols = 0; cols + off <= MAXC; cols++) {
                        const size_t width = widths[wi], panel = 4 * width * quads + 7;
                        const int8_t *r = src + off;
                        memset(got, 0x5a, sizeof got);
                        memset(want, 0x5a, sizeof want);
                        const bool found = e->f.s8_pack_quads(r, LD, quads, cols, width, got, panel, narrow);
                        const bool twin = e->twin.s8_pack_quads(r, LD, quads, cols, width, want, panel, narrow);
                        if (memcmp(got, want, sizeof got))
                            fail_msg("%s: %zu quads of %zu columns at offset %zu, panels of %zu: differ from the twin",
                                     e->name, quads, cols, off, width);
                        if (found || twin)
                            fail_msg("%s: %zu quads of %zu columns: a wide pair found (the twin: %d) where none is%s",
                                     e->name, quads, cols, (int)twin, narrow ? "" : " (no check asked)");
                        for (size_t c = 0; narrow && c < cols; c++) {
                            const size_t row = 2 * (c % (2 * quads)), at = row * LD + off + c; /* rows row, row + 1 */
                            const int8_t s0 = src[at], s1 = src[at + LD];
                            src[at] = (int8_t)(s0 < 0 ? -65 : 65);
                            src[at + LD] = (int8_t)(c % 3 ? 64 : -64);
                            const bool f1 = e->f.s8_pack_quads(r, LD, quads, cols, width, got, panel, true);
                            const bool t1 = e->twin.s8_pack_quads(r, LD, quads, cols, width, want, panel, true);
                            const bool f0 = e->f.s8_pack_quads(r, LD, quads, cols, width, got, panel, false);
                            if (!f1 || !t1 || f0)
                                fail_msg("%s: %zu quads of %zu columns: the wide pair in rows %zu, %zu of column %zu: "
                                         "found %d, the twin %d, unchecked %d", e->name, quads, cols, row, row + 1, c,
                                         (int)f1, (int)t1, (int)f0);
                            src[at] = s0, src[at + LD] = s1;
                        }
                    }
    }
    fill_random(src, sizeof src, &rng);
    memset(want, 0x5a, sizeof want);
    e->twin.s8_pack_quads(src, LD, 2, 18, 16, want, 200, false); /* the twin: the definition */
    for (size_t q = 0; q < 2; q++)
        for (size_t c = 0; c < 18; c++)
            for (size_t t = 0; t < 4; t++)
                assert_int_equal(want[c / 16 * 200 + 4 * (16 * q + c % 16) + t], src[(4 * q + t) * LD + c]);
    assert_int_equal(want[4 * 16 * 2], 0x5a); /* between the panels */
}

static void test_s8_quad_packing_equals_its_twin(void **state)
{
    (void)state;
    for_each(S8_PACK_QUADS, check_s8_quads);
}

/* Pairs of rows into int16 panels of 16 columns, every column count 0 ..
 * 50 and 0 .. 5 pairs; the words past the columns must stay. */
static void check_s8_pairs(const struct entry *e)
{
    enum { MAXC = 50, MAXP = 5, LD = 61, PANEL = 16 * 2 * MAXP + 4 };
    static int8_t src[2 * MAXP * LD];
    static int16_t got[4 * PANEL], want[4 * PANEL];
    uint64_t rng = 17;
    fill_random(src, sizeof src, &rng);
    for (size_t pairs = 0; pairs <= MAXP; pairs++)
        for (size_t cols = 0; cols <= MAXC; cols++) {
            memset(got, 0x5a, sizeof got);
            memset(want, 0x5a, sizeof want);
            e->f.s8_pack_pairs(src + 1, LD, pairs, cols, got, PANEL);
            e->twin.s8_pack_pairs(src + 1, LD, pairs, cols, want, PANEL);
            if (memcmp(got, want, sizeof got))
                fail_msg("%s: %zu pairs of %zu columns differ from the twin", e->name, pairs, cols);
        }
    e->twin.s8_pack_pairs(src, LD, 2, 20, want, PANEL); /* the twin: the definition */
    for (size_t c = 0; c < 20; c++)
        for (size_t q = 0; q < 2; q++)
            for (size_t t = 0; t < 2; t++)
                assert_int_equal(want[c / 16 * PANEL + 32 * q + 2 * (c % 16) + t], src[(2 * q + t) * LD + c]);
}

static void test_s8_pair_packing_equals_its_twin(void **state)
{
    (void)state;
    for_each(S8_PACK_PAIRS, check_s8_pairs);
}

/* Six rows of A into int16 K-pairs, every k 0 .. 40 (odd ones end with a
 * zero), int8 (flip 0x80) and uint8. */
static void check_u8_pairs6(const struct entry *e)
{
    enum { MAXK = 40, LD = 45 };
    static uint8_t src[6 * LD];
    static int16_t got[6 * (MAXK + 2) + 8], want[6 * (MAXK + 2) + 8];
    uint64_t rng = 19;
    fill_random(src, sizeof src, &rng);
    for (int flip = 0; flip < 2; flip++)
        for (size_t k = 0; k <= MAXK; k++) {
            memset(got, 0x5a, sizeof got);
            memset(want, 0x5a, sizeof want);
            e->f.u8_pack_pairs6(src + 3, LD, k, flip ? 0x80 : 0, got);
            e->twin.u8_pack_pairs6(src + 3, LD, k, flip ? 0x80 : 0, want);
            if (memcmp(got, want, sizeof got))
                fail_msg("%s: k %zu, flip %d differs from the twin", e->name, k, flip);
        }
    e->twin.u8_pack_pairs6(src, LD, 3, 0x80, want); /* the twin: the definition */
    for (size_t p = 0; p < 4; p++)
        for (size_t r = 0; r < 6; r++)
            assert_int_equal(want[p / 2 * 12 + 2 * r + p % 2], p < 3 ? src[r * LD + p] ^ 0x80 : 0);
}

static void test_u8_pair_packing_equals_its_twin(void **state)
{
    (void)state;
    for_each(U8_PACK_PAIRS6, check_u8_pairs6);
}

/* Random bytes, all 0xff, all 0x80; int8, uint8, uint8 ^ 0x80 (int8 A read
 * as uint8); the twin against the loop here. */
static void check_line_sums(const struct entry *e)
{
    enum { LINES = 5, MAXLEN = 200, LD = 211 };
    static uint8_t src[LINES * LD];
    uint64_t rng = 11;
    for (int fill = 0; fill < 3; fill++) {
        for (size_t i = 0; i < sizeof src; i++)
            src[i] = fill == 0 ? (uint8_t)prng_next(&rng) : fill == 1 ? 0xff : 0x80;
        for (size_t len = 0; len <= MAXLEN; len++)
            for (int kind = 0; kind < 3; kind++) {
                const bool is_signed = kind == 0;
                const uint8_t flip = kind == 2 ? 0x80 : 0;
                uint32_t got[LINES], twin[LINES], want[LINES];
                for (size_t l = 0; l < LINES; l++) {
                    uint32_t s = 0;
                    for (size_t p = 0; p < len; p++)
                        s += is_signed ? (uint32_t)(int32_t)(int8_t)src[l * LD + p] : (uint32_t)(src[l * LD + p] ^ flip);
                    want[l] = s;
                }
                e->f.s8_sum_lines(src, LD, LINES, len, is_signed, flip, got);
                e->twin.s8_sum_lines(src, LD, LINES, len, is_signed, flip, twin);
                if (memcmp(got, twin, sizeof got) != 0 || memcmp(twin, want, sizeof got) != 0)
                    fail_msg("%s: fill %d, len %zu, kind %d: line 0 sum %u, the twin's %u, the loop's %u", e->name,
                             fill, len, kind, got[0], twin[0], want[0]);
            }
    }
}

static void test_line_sums_equal_their_twin_and_the_loop(void **state)
{
    (void)state;
    for_each(S8_SUM_LINES, check_line_sums);
}

/* ---- the wide-pair scan ------------------------------------------------------ */

/* A pair with |b0| + |b1| <= 128 (the bound itself often), or past it
 * by one when wide. */
static void pair_values(uint64_t *rng, bool wide_pair, int8_t *b0, int8_t *b1)
{
    static const int8_t edge[][2] = { { 64, 64 }, { -64, -64 }, { 127, 1 }, { -127, -1 }, { -128, 0 }, { 0, -128 },
                                      { 100, -28 }, { 0, 0 } };
    static const int8_t past[][2] = { { 64, 65 }, { -65, -64 }, { 127, 2 }, { -128, 1 }, { 1, -128 }, { -128, -128 },
                                      { 127, 127 }, { 2, -127 } };
    const uint64_t r = prng_next(rng);
    const size_t i = (size_t)(r >> 8) % 8;
    if (wide_pair) {
        *b0 = past[i][0], *b1 = past[i][1];
    } else if (r & 1) {
        *b0 = edge[i][0], *b1 = edge[i][1];
    } else { /* random within the bound */
        const int m0 = (int)((r >> 16) % 129), m1 = (int)((r >> 24) % (129 - m0));
        *b0 = (int8_t)((r >> 40) & 1 ? -m0 : m0), *b1 = (int8_t)((r >> 41) & 1 ? -m1 : m1);
    }
}

/* Shapes around the vectors' widths, both layouts, stored lines longer
 * than the matrix (wide pairs there must not count), an odd k's last row
 * alone at -128: no wide pair found; then each pair of a column in turn
 * made wide, found, by the kernel and its twin alike. */
static void check_s8_scan(const struct entry *e)
{
    static const size_t ks[] = { 0, 1, 2, 3, 4, 5, 34, 65, 66, 130 }, ns[] = { 0, 1, 7, 31, 32, 33, 64, 70 };
    enum { PAD = 3 };
    uint64_t rng = 5;
    for (size_t ik = 0; ik < NELEMS(ks); ik++)
        for (size_t in = 0; in < NELEMS(ns); in++)
            for (int trans = 0; trans < 2; trans++) {
                const size_t k = ks[ik], n = ns[in], lines = trans ? n : k, len = trans ? k : n, ld = len + PAD;
                int8_t *b = test_malloc(lines * ld + 1);
                memset(b, 127, lines * ld + 1); /* the padding: wide pairs everywhere */
#define AT(p, j) b[trans ? (j) * ld + (p) : (p) * ld + (j)]
                for (size_t j = 0; j < n; j++) {
                    for (size_t p = 0; p + 2 <= k; p += 2)
                        pair_values(&rng, false, &AT(p, j), &AT(p + 1, j));
                    if (k % 2)
                        AT(k - 1, j) = -128;
                }
                if (e->f.s8_scan(b, ld, trans, k, n) || e->twin.s8_scan(b, ld, trans, k, n))
                    fail_msg("%s: k %zu, n %zu, trans %d: a wide pair found where none is", e->name, k, n, trans);
                for (size_t p = 0; p + 2 <= k; p += 2)
                    for (size_t j = 0; j < n; j += (p % 4 == 0 ? 1 : 5)) {
                        const int8_t s0 = AT(p, j), s1 = AT(p + 1, j);
                        pair_values(&rng, true, &AT(p, j), &AT(p + 1, j));
                        if (!e->f.s8_scan(b, ld, trans, k, n) || !e->twin.s8_scan(b, ld, trans, k, n))
                            fail_msg("%s: k %zu, n %zu, trans %d: the wide pair (%d, %d) at rows %zu, %zu of column "
                                     "%zu missed", e->name, k, n, trans, AT(p, j), AT(p + 1, j), p, p + 1, j);
                        AT(p, j) = s0, AT(p + 1, j) = s1;
                    }
#undef AT
                test_free(b);
            }
}

static void test_s8_scans_find_every_wide_pair_and_nothing_else(void **state)
{
    (void)state;
    for_each(S8_SCAN, check_s8_scan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_x32_transposes_equal_their_twin),
        cmocka_unit_test(test_x64_transposes_equal_their_twin),
        cmocka_unit_test(test_x16_transposes_equal_their_twin),
        cmocka_unit_test(test_bf16_pack_b_kernels_write_the_layout_and_find_every_tiny_value),
        cmocka_unit_test(test_bf16_scans_find_every_tiny_value_and_nothing_else),
        cmocka_unit_test(test_s8_quad_packing_equals_its_twin),
        cmocka_unit_test(test_s8_pair_packing_equals_its_twin),
        cmocka_unit_test(test_u8_pair_packing_equals_its_twin),
        cmocka_unit_test(test_line_sums_equal_their_twin_and_the_loop),
        cmocka_unit_test(test_s8_scans_find_every_wide_pair_and_nothing_else),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
