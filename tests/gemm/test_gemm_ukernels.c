/* Every GEMM micro-kernel of src/kernels/gemm-list.inc and
 * u8s8-gemm-list.inc that this CPU runs, against its twin on random panels,
 * bit for bit: every mr <= MR, nr from 1 to NR (edges on both sides of the
 * vector widths), kc = 1, odd values and a few hundred (a kernel that packs
 * pairs gets an odd kc's zero-padded last pair), alpha 1 and not, beta 0
 * with NaN already in C (which must be overwritten), beta 1 and others;
 * operands read in place at an unaligned start, a float A read in place
 * ending where a page without access begins (its rows beyond mr never
 * read: the sanitizers do not see the intrinsics' loads); C's elements
 * outside the tile left alone.  The float kernels' promise is each element's chain of
 * fused multiply-adds in k order (vdpbf16ps: the odd product of a pair,
 * then the even one), then alpha * sum + beta * C in one fused
 * multiply-add; the integer kernels', the sums modulo 2^32 (every order
 * gives them).  The scalar level's own kernels are their own twins: they
 * are checked against sums computed here (plain multiply and add). */
#define _GNU_SOURCE /* mmap's MAP_ANONYMOUS */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "kernels/gemm-kernels.h"
#include "mxp/cpu.h"
#include "mxp/dtype.h"
#include "support/prng.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

enum form { PACKED, A_IN_PLACE, DIRECT, DIRECT_A, TAPS };

/* One line of the float list; an A-in-place line takes its parameters from
 * the line of the kernel it varies (`of`). */
typedef struct fline {
    const char *name;
    enum form form;
    mxp_gemm_ukernel_fn packed, packed_twin, of;
    mxp_gemm_ukernel_a_fn in_place, in_place_twin;
    mxp_gemm_direct_fn direct, direct_twin, direct_of; /* direct_of: the direct kernel a DIRECT_A line varies */
    mxp_gemm_direct_a_fn direct_a, direct_a_twin;
    mxp_gemm_ukernel_taps_fn taps, taps_twin;
    mxp_dtype acc, type; /* type: the panels' elements */
    size_t kpack;
    mxp_isa isa;
    size_t mr, nr;
} fline;

static fline flines[] = {
#define MXP_GEMM_UKERNEL(f, acc, packed, kpack, isa, mr, nr, mc, kc, nc, twin) \
    { #f, PACKED, f, twin, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, acc, packed, kpack, isa, mr,    \
      nr },
#define MXP_GEMM_UKERNEL_A(f, of, max_n, twin)                                                                    \
    { #f, A_IN_PLACE, NULL, NULL, of, f, twin, NULL, NULL, NULL, NULL, NULL, NULL, NULL, MXP_DTYPE_INVALID,          \
      MXP_DTYPE_INVALID, 0, 0, 0, 0 },
#define MXP_GEMM_UKERNEL_TAPS(f, of, twin)                                                                        \
    { #f, TAPS, NULL, NULL, of, NULL, NULL, NULL, NULL, NULL, NULL, NULL, f, twin, MXP_DTYPE_INVALID,                \
      MXP_DTYPE_INVALID, 0, 0, 0, 0 },
#define MXP_GEMM_DIRECT(f, acc, packed, kpack, isa, mr, nr, kc, step, step_multi, max_m, twin) \
    { #f, DIRECT, NULL, NULL, NULL, NULL, NULL, f, twin, NULL, NULL, NULL, NULL, NULL, acc, packed, kpack, isa, mr,  \
      nr },
#define MXP_GEMM_DIRECT_A(f, of, twin)                                                                            \
    { #f, DIRECT_A, NULL, NULL, NULL, NULL, NULL, NULL, NULL, of, f, twin, NULL, NULL, MXP_DTYPE_INVALID,            \
      MXP_DTYPE_INVALID, 0, 0, 0, 0 },
#include "kernels/gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_UKERNEL_TAPS
#undef MXP_GEMM_DIRECT
#undef MXP_GEMM_DIRECT_A
};

typedef struct iline {
    const char *name;
    mxp_u8s8_gemm_ukernel_fn packed, packed_twin, of;
    mxp_u8s8_gemm_ukernel_a_fn in_place, in_place_twin;
    mxp_dtype type;
    size_t kpack;
    mxp_isa isa;
    size_t mr, nr;
    bool a7; /* the vpmaddubsw kernel: A below 128 or B's pairs narrow only */
} iline;

static iline ilines[] = {
#define MXP_U8S8_GEMM_UKERNEL(f, packed, kpack, isa, mr, nr, mc, kc, nc, deep_m, twin) \
    { #f, f, twin, NULL, NULL, NULL, packed, kpack, isa, mr, nr, false },
#define MXP_U8S8_GEMM_UKERNEL_A(f, of, twin) { #f, NULL, NULL, of, f, twin, MXP_DTYPE_INVALID, 0, 0, 0, 0, false },
#define MXP_U8S8_GEMM_UKERNEL_U7(f, packed, kpack, isa, mr, nr, mc, kc, nc, deep_m, twin) \
    { #f, f, twin, NULL, NULL, NULL, packed, kpack, isa, mr, nr, true },
#include "kernels/u8s8-gemm-list.inc"
#undef MXP_U8S8_GEMM_UKERNEL
#undef MXP_U8S8_GEMM_UKERNEL_A
#undef MXP_U8S8_GEMM_UKERNEL_U7
};

/* The A-in-place lines' parameters from the lines they vary. */
static int fill_in_place_lines(void **state)
{
    (void)state;
    for (size_t i = 0; i < NELEMS(flines); i++)
        for (size_t j = 0; (flines[i].form == A_IN_PLACE || flines[i].form == TAPS) && j < NELEMS(flines); j++)
            if (flines[j].form == PACKED && flines[j].packed == flines[i].of) {
                fline *f = &flines[i];
                f->acc = flines[j].acc, f->type = flines[j].type, f->kpack = flines[j].kpack;
                f->isa = flines[j].isa, f->mr = flines[j].mr, f->nr = flines[j].nr;
            }
    for (size_t i = 0; i < NELEMS(flines); i++)
        for (size_t j = 0; flines[i].form == DIRECT_A && j < NELEMS(flines); j++)
            if (flines[j].form == DIRECT && flines[j].direct == flines[i].direct_of) {
                fline *f = &flines[i];
                f->acc = flines[j].acc, f->type = flines[j].type, f->kpack = flines[j].kpack;
                f->isa = flines[j].isa, f->mr = flines[j].mr, f->nr = flines[j].nr;
            }
    for (size_t i = 0; i < NELEMS(ilines); i++)
        for (size_t j = 0; !ilines[i].packed && j < NELEMS(ilines); j++)
            if (ilines[j].packed == ilines[i].of) {
                iline *f = &ilines[i];
                f->type = ilines[j].type, f->kpack = ilines[j].kpack, f->isa = ilines[j].isa;
                f->mr = ilines[j].mr, f->nr = ilines[j].nr, f->a7 = ilines[j].a7;
            }
    for (size_t i = 0; i < NELEMS(flines); i++)
        assert_true(flines[i].mr > 0); /* every A line varies a listed kernel */
    for (size_t i = 0; i < NELEMS(ilines); i++)
        assert_true(ilines[i].mr > 0);
    return 0;
}

static uint64_t rng = 0x243f6a8885a308d3u;

/* A random value of the panels' type, its bits at p: float32 and float64
 * with exponents over 2^-5 .. 2^4 (sums with cancellation and rounding in
 * every position); bfloat16 mostly over 2^-8 .. 2^1, a quarter subnormal
 * (read as zero) and a quarter around 2^-67 (products that vdpbf16ps
 * flushes: the GEMM keeps such values from it, the twin follows it). */
static void random_value(mxp_dtype t, void *p)
{
    const uint64_t r = prng_next(&rng);
    const int e = (int)(r % 10) - 5;
    const double v = ldexp((double)(r >> 11) * 0x1p-53 + 0.5, e) * (r & 1024 ? -1 : 1);
    if (t == MXP_F64) {
        memcpy(p, &v, 8);
    } else if (t == MXP_F32) {
        const float f = (float)v;
        memcpy(p, &f, 4);
    } else { /* bfloat16 */
        const uint64_t kind = (r >> 20) % 4;
        const uint16_t ex = (uint16_t)(kind == 0 ? (r >> 1) % 3 : kind == 1 ? 60 + (r >> 1) % 10 : 119 + (r >> 1) % 10);
        const uint16_t b = (uint16_t)((r & 1) << 15 | ex << 7 | (r >> 8) % 128);
        memcpy(p, &b, 2);
    }
}

static void random_values(mxp_dtype t, void *p, size_t n)
{
    const size_t s = mxp_dtype_itemsize(t);
    for (size_t i = 0; i < n; i++)
        random_value(t, (unsigned char *)p + i * s);
}

/* The sums the scalar level's kernels compute, plain multiply and add in k
 * order, into c (float32 or float64 acc). */
static void plain_tile(mxp_dtype acc, size_t MR, size_t NR, size_t mr, size_t nr, size_t kc, const void *a,
                       const void *b, void *c, size_t ldc, double alpha, double beta)
{
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++)
            if (acc == MXP_F32) {
                const float *pa = a, *pb = b;
                float s = 0, *x = (float *)c + i * ldc + j;
                for (size_t p = 0; p < kc; p++)
                    s += pa[p * MR + i] * pb[p * NR + j];
                *x = beta == 0 ? (float)alpha * s : (float)alpha * s + (float)beta * *x;
            } else {
                const double *pa = a, *pb = b;
                double s = 0, *x = (double *)c + i * ldc + j;
                for (size_t p = 0; p < kc; p++)
                    s += pa[p * MR + i] * pb[p * NR + j];
                *x = beta == 0 ? alpha * s : alpha * s + beta * *x;
            }
}

static const double alphas[] = { 1.0, -1.5, 1.0, 0.3, 1.0, -1.5 };
static const double betas[] = { 0.0, 0.0, 1.0, 1.0, -0.75, 2.5 };

/* Zeroes the second value of a zero-padded last k-pair in a [kcp/2][w][2]
 * panel (kc odd). */
static void pad_last_pair(unsigned char *panel, size_t w, size_t kc, size_t size)
{
    if (kc % 2)
        for (size_t l = 0; l < w; l++)
            memset(panel + ((kc / 2 * w + l) * 2 + 1) * size, 0, size);
}

/* bytes at the end of a page, the next page without access: a read past
 * them faults. */
typedef struct guarded {
    unsigned char *map;
    size_t len;
} guarded;

static unsigned char *guard_end(guarded *g, size_t bytes)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), body = (bytes + page - 1) / page * page;
    g->len = body + page;
    g->map = mmap(NULL, g->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(g->map != MAP_FAILED);
    assert_int_equal(mprotect(g->map + body, page, PROT_NONE), 0);
    return g->map + body - bytes;
}

static void guard_free(guarded *g)
{
    munmap(g->map, g->len);
}

/* One case of a float line: both functions on the same operands and C. */
static void check_float(const fline *f, size_t mr, size_t nr, size_t kc, double alpha, double beta)
{
    const size_t MR = f->mr, NR = f->nr, ts = mxp_dtype_itemsize(f->type), cs = mxp_dtype_itemsize(f->acc);
    const size_t kcp = (kc + f->kpack - 1) / f->kpack * f->kpack, ldc = NR + 3, lda = kcp + 3, ldb = NR + 5;
    /* A~ [kcp][MR] (in place: MR rows lda apart); B~ [kcp][NR] (direct: kcp rows ldb apart); one element more
     * in front: the operands read in place start there, unaligned */
    unsigned char *a = malloc((MR * lda + 1) * ts), *b = malloc((kcp * ldb + 1) * ts);
    unsigned char *c = malloc(MR * ldc * cs), *c_twin = malloc(MR * ldc * cs);
    assert_true(a && b && c && c_twin);
    random_values(f->type, a, MR * lda + 1);
    random_values(f->type, b, kcp * ldb + 1);
    if (f->form != A_IN_PLACE && f->kpack == 2)
        pad_last_pair(a, MR, kc, ts);
    if (f->form == PACKED && f->kpack == 2)
        pad_last_pair(b, NR, kc, ts);
    random_values(f->acc, c, MR * ldc);
    for (size_t i = 0; i < mr && beta == 0; i++) /* beta 0 overwrites NaN */
        for (size_t j = 0; j < nr; j++)
            memcpy(c + (i * ldc + j) * cs, f->acc == MXP_F32 ? (const void *)&(const float){ NAN }
                                                               : (const void *)&(const double){ NAN }, cs);
    memcpy(c_twin, c, MR * ldc * cs);
    switch (f->form) {
    case PACKED:
        f->packed(mr, nr, kcp, a, b, c, ldc, alpha, beta);
        if (f->packed_twin == f->packed)
            plain_tile(f->acc, MR, NR, mr, nr, kcp, a, b, c_twin, ldc, alpha, beta);
        else
            f->packed_twin(mr, nr, kcp, a, b, c_twin, ldc, alpha, beta);
        break;
    case A_IN_PLACE: { /* A's mr rows end at a page without access: rows beyond mr are never read */
        const size_t bytes = ((mr - 1) * lda + kcp) * ts;
        guarded g;
        unsigned char *ax = guard_end(&g, bytes);
        memcpy(ax, a + ts, bytes);
        f->in_place(mr, nr, kcp, ax, lda, b, c, ldc, alpha, beta);
        f->in_place_twin(mr, nr, kcp, ax, lda, b, c_twin, ldc, alpha, beta);
        guard_free(&g);
        break;
    }
    case DIRECT:
        f->direct(mr, nr, kc, a, b + ts, ldb, c, ldc, alpha, beta);
        f->direct_twin(mr, nr, kc, a, b + ts, ldb, c_twin, ldc, alpha, beta);
        break;
    case DIRECT_A: { /* A's mr rows end where a page without access begins (a read past them faults: the
                        sanitizers do not see the intrinsics' loads); then the same values transposed (k rows of
                        mr + 2, the last one ending at such a page), the second product added */
        const size_t bytes = ((mr - 1) * lda + kc) * ts, ldt = mr + 2, tbytes = ((kc - 1) * ldt + mr) * ts;
        guarded g1, g2;
        unsigned char *ax = guard_end(&g1, bytes), *at = guard_end(&g2, tbytes);
        memcpy(ax, a + ts, bytes);
        for (size_t i = 0; i < mr; i++)
            for (size_t p = 0; p < kc; p++)
                memcpy(at + (p * ldt + i) * ts, ax + (i * lda + p) * ts, ts);
        f->direct_a(mr, nr, kc, ax, lda, 1, b + ts, ldb, c, ldc, alpha, beta);
        f->direct_a_twin(mr, nr, kc, ax, lda, 1, b + ts, ldb, c_twin, ldc, alpha, beta);
        f->direct_a(mr, nr, kc, at, 1, ldt, b + ts, ldb, c, ldc, alpha, 1.0);
        f->direct_a_twin(mr, nr, kc, at, 1, ldt, b + ts, ldb, c_twin, ldc, alpha, 1.0);
        guard_free(&g1);
        guard_free(&g2);
        break;
    }
    case TAPS: /* check_taps */
        break;
    }
    for (size_t i = 0; i < MR * ldc; i++)
        if (memcmp(c + i * cs, c_twin + i * cs, cs) != 0) {
            const double got = cs == 4 ? (double)((float *)(void *)c)[i] : ((double *)(void *)c)[i];
            const double want = cs == 4 ? (double)((float *)(void *)c_twin)[i] : ((double *)(void *)c_twin)[i];
            fail_msg("%s: mr %zu nr %zu kc %zu alpha %g beta %g: c[%zu][%zu] = %a, the twin's %a", f->name, mr, nr,
                     kc, alpha, beta, i / ldc, i % ldc, got, want);
        }
    free(a);
    free(b);
    free(c);
    free(c_twin);
}

/* One case of a taps line: A's rows through pointers into a buffer (each
 * row somewhere else, unaligned), k in nseg segments of seglen at offsets
 * (forward, backward, overlapping); the kernel against its twin, and
 * against the A-in-place kernel of the same level on the rows gathered
 * (k contiguous): the same chain of fused multiply-adds. */
static void check_taps(const fline *f, mxp_gemm_ukernel_a_fn in_place, size_t mr, size_t nr, size_t nseg,
                       size_t seglen, int spaced, double alpha, double beta)
{
    const size_t MR = f->mr, NR = f->nr, ts = mxp_dtype_itemsize(f->type), cs = mxp_dtype_itemsize(f->acc);
    const size_t kc = nseg * seglen, ldc = NR + 3, span = 8192, lda = kc + 32;
    unsigned char *x = malloc(span * ts), *g = malloc(MR * lda * ts), *b = malloc(kc * NR * ts);
    unsigned char *c = malloc(MR * ldc * cs), *c_twin = malloc(MR * ldc * cs), *c_a = malloc(MR * ldc * cs);
    assert_true(x && g && b && c && c_twin && c_a);
    random_values(f->type, x, span);
    random_values(f->type, b, kc * NR);
    ptrdiff_t off[16];
    const void *rows[32];
    for (size_t s = 0; s < nseg; s++) /* within [-1024, 1024), seglen past it in x */
        off[s] = (ptrdiff_t)(prng_next(&rng) % 2048) - 1024;
    /* every row's segments inside x: anywhere (spaced 0), or a run of rows equally spaced (the pixels
       of an image row: the AMX kernel loads them as a tile; spaced 2: but for one row of the second half) */
    const size_t gap = seglen + 5, at = 1025 + prng_next(&rng) % 64;
    for (size_t i = 0; i < MR; i++) {
        const bool run = spaced && !(spaced == 2 && i == 20);
        rows[i] = x + (run ? at + i * gap : 1025 + prng_next(&rng) % (span - 2048 - seglen - 2)) * ts;
    }
    for (size_t i = 0; i < MR; i++)
        for (size_t s = 0; s < nseg; s++)
            memcpy(g + (i * lda + s * seglen) * ts, (const unsigned char *)rows[i] + (size_t)off[s] * ts, seglen * ts);
    random_values(f->acc, c, MR * ldc);
    for (size_t i = 0; i < mr && beta == 0; i++) /* beta 0 overwrites NaN */
        for (size_t j = 0; j < nr; j++)
            memcpy(c + (i * ldc + j) * cs, &(const float){ NAN }, cs);
    memcpy(c_twin, c, MR * ldc * cs);
    memcpy(c_a, c, MR * ldc * cs);
    f->taps(mr, nr, nseg, seglen, rows, off, b, c, ldc, alpha, beta);
    f->taps_twin(mr, nr, nseg, seglen, rows, off, b, c_twin, ldc, alpha, beta);
    in_place(mr, nr, kc, g, lda, b, c_a, ldc, alpha, beta);
    for (size_t i = 0; i < MR * ldc; i++)
        if (memcmp(c + i * cs, c_twin + i * cs, cs) != 0 || memcmp(c + i * cs, c_a + i * cs, cs) != 0)
            fail_msg("%s: mr %zu nr %zu %zu segments of %zu alpha %g beta %g: c[%zu][%zu] = %a, the twin's %a, "
                     "the A-in-place kernel's %a", f->name, mr, nr, nseg, seglen, alpha, beta, i / ldc, i % ldc,
                     (double)((float *)(void *)c)[i], (double)((float *)(void *)c_twin)[i],
                     (double)((float *)(void *)c_a)[i]);
    free(x), free(g), free(b), free(c), free(c_twin), free(c_a);
}

/* Runs run(line, mr, nr, i, w) for every mr <= MR, nr at the edges of the
 * vectors (1, 2, 7, 8, 9 ... NR) and i < count (a kc), w a number that
 * varies with all three. */
static void each_tile(const void *line, size_t MR, size_t NR, size_t count,
                      void (*run)(const void *line, size_t mr, size_t nr, size_t i, size_t w))
{
    const size_t v[] = { 1, 2, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47 };
    for (size_t mr = 1; mr <= MR; mr++)
        for (size_t in = 0; in <= NELEMS(v); in++) {
            const size_t nr = in < NELEMS(v) && v[in] < NR ? v[in] : NR;
            for (size_t i = 0; i < count; i++)
                run(line, mr, nr, i, mr * 7 + in * 3 + i);
            if (nr == NR)
                break;
        }
}

static const size_t kcs[] = { 1, 2, 3, 5, 8, 17, 64, 255 };

static void run_float(const void *line, size_t mr, size_t nr, size_t i, size_t w)
{
    const fline *f = line;
    if (f->form == A_IN_PLACE && kcs[i] % f->kpack)
        return; /* A in place: whole k-groups */
    check_float(f, mr, nr, kcs[i], alphas[w % NELEMS(alphas)], betas[w % NELEMS(betas)]);
}

/* segments x seglen: one segment, odd lengths past the 4-step turns, a 3x3 window of 16 and 64 channels,
   multiples of 32 (the AMX kernel's chunks: it takes only those) */
static const size_t taps_shapes[][2] = { { 1, 1 }, { 1, 67 }, { 2, 3 }, { 3, 4 }, { 2, 5 }, { 9, 16 }, { 4, 17 },
                                         { 9, 64 }, { 1, 32 }, { 3, 96 }, { 2, 64 } };

static mxp_gemm_ukernel_a_fn in_place_of(const fline *f)
{
    for (size_t j = 0; j < NELEMS(flines); j++)
        if (flines[j].form == A_IN_PLACE && flines[j].of == f->of)
            return flines[j].in_place;
    return NULL;
}

static void run_taps(const void *line, size_t mr, size_t nr, size_t i, size_t w)
{
    const fline *f = line;
    const mxp_gemm_ukernel_a_fn in_place = in_place_of(f);
    assert_non_null(in_place); /* every taps kernel has an A-in-place sibling to agree with */
    if (taps_shapes[i][1] % f->kpack)
        return; /* segments of whole k-groups */
    check_taps(f, in_place, mr, nr, taps_shapes[i][0], taps_shapes[i][1], (int)(w % 3), alphas[w % NELEMS(alphas)],
               betas[w % NELEMS(betas)]);
}

static void test_float_ukernels_equal_their_twins(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t i = 0; i < NELEMS(flines); i++)
        if (flines[i].form == TAPS && flines[i].isa <= mxp_isa_supported()) {
            print_message("%s\n", flines[i].name);
            each_tile(&flines[i], flines[i].mr, flines[i].nr, NELEMS(taps_shapes), run_taps);
            ran++;
        } else if (flines[i].isa <= mxp_isa_supported()) {
            print_message("%s\n", flines[i].name);
            each_tile(&flines[i], flines[i].mr, flines[i].nr, NELEMS(kcs), run_float);
            ran++;
        }
    if (!ran)
        skip();
}

/* ---- integer ----------------------------------------------------------------- */

/* Panels of the K-group layout: K-quads of bytes (A~ uint8, B~ int8) or
 * int16 K-pairs holding those ranges, as packing makes them.  The K-quad
 * vpmaddubsw kernel (a7 lines) takes two kinds of operands whose pair
 * sums cannot saturate, each at its extremes: NARROW_A, A below 128, a
 * third of it 127 and a third of B -128, B's other third 127 (2 * 127 *
 * -128 and 2 * 127 * 127 reached often); NARROW_B, B's pairs (bytes 2t,
 * 2t + 1 of a quad) with |b0| + |b1| <= 128, often at 128 ((-128, 0),
 * (64, 64), (-127, -1), ...), a third of A 255 (+-255 * 128). */
enum narrow { NARROW_NONE, NARROW_A, NARROW_B };

static uint8_t narrow_b_byte(size_t i, uint64_t x, uint8_t *partner)
{
    static const int8_t ends[][2] = { { -128, 0 }, { 0, -128 }, { 64, 64 }, { -64, -64 }, { 127, 1 }, { -127, -1 },
                                      { 100, -28 } };
    if (i % 2) /* the pair's second byte, chosen with the first */
        return *partner;
    const size_t e = (size_t)(x >> 16) % 8;
    int b0, b1;
    if (e < 7) {
        b0 = ends[e][0], b1 = ends[e][1];
    } else {
        const int m0 = (int)((x >> 24) % 129), m1 = (int)((x >> 32) % (129 - (uint64_t)m0));
        b0 = (x >> 40) & 1 ? -m0 : m0, b1 = (x >> 41) & 1 ? -m1 : m1;
    }
    *partner = (uint8_t)(int8_t)b1;
    return (uint8_t)(int8_t)b0;
}

static void random_int_panel(mxp_dtype type, bool is_a, enum narrow narrow, void *p, size_t n)
{
    uint8_t partner = 0;
    for (size_t i = 0; i < n; i++) {
        const uint64_t x = prng_next(&rng);
        uint8_t r = (uint8_t)x;
        if (narrow == NARROW_A)
            r = is_a ? (x >> 8) % 3 == 0 ? 127 : r & 0x7f : (x >> 8) % 3 == 0 ? 0x80 : (x >> 8) % 3 == 1 ? 127 : r;
        else if (narrow == NARROW_B)
            r = is_a ? (x >> 8) % 3 == 0 ? 255 : r : narrow_b_byte(i, x, &partner);
        if (type == MXP_U8)
            ((uint8_t *)p)[i] = r;
        else
            ((int16_t *)p)[i] = is_a ? (int16_t)r : (int16_t)(int8_t)r;
    }
}

static int32_t wrap(uint32_t x)
{
    return x <= INT32_MAX ? (int32_t)x : -(int32_t)~x - 1;
}

/* The sums of the scalar level's K-quad kernel, computed here. */
static void quad_tile(size_t MR, size_t NR, size_t mr, size_t nr, size_t kc, const uint8_t *a, const int8_t *b,
                      int32_t *c, size_t ldc, const int32_t *row_off, const int32_t *col_off)
{
    for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
            uint32_t s = row_off ? (uint32_t)row_off[i] + (uint32_t)col_off[j] : (uint32_t)c[i * ldc + j];
            for (size_t p = 0; p < kc; p++)
                s += (uint32_t)(a[p / 4 * 4 * MR + 4 * i + p % 4] * b[p / 4 * 4 * NR + 4 * j + p % 4]);
            c[i * ldc + j] = wrap(s);
        }
}

static void check_int(const iline *f, size_t mr, size_t nr, size_t kc, bool corrections, enum narrow narrow)
{
    const size_t MR = f->mr, NR = f->nr, ts = mxp_dtype_itemsize(f->type), ldc = NR + 3, lda = kc + 5;
    unsigned char *a = malloc(MR * lda * ts + 1), *b = malloc(kc * NR * ts);
    int32_t *c = malloc(MR * ldc * sizeof *c), *c_twin = malloc(MR * ldc * sizeof *c);
    int32_t row_off[64], col_off[64];
    assert_true(a && b && c && c_twin && MR <= 64 && NR <= 64);
    random_int_panel(f->type, true, narrow, a, MR * lda + (ts == 1));
    random_int_panel(f->type, false, narrow, b, kc * NR);
    for (size_t i = 0; i < MR * ldc; i++)
        c[i] = (int32_t)prng_next(&rng);
    for (size_t i = 0; i < 64; i++) {
        row_off[i] = (int32_t)prng_next(&rng);
        col_off[i] = (int32_t)prng_next(&rng);
    }
    memcpy(c_twin, c, MR * ldc * sizeof *c);
    const int32_t *ro = corrections ? row_off : NULL, *co = corrections ? col_off : NULL;
    if (f->packed) {
        f->packed(mr, nr, kc, a, b, c, ldc, ro, co);
        if (f->packed_twin == f->packed)
            quad_tile(MR, NR, mr, nr, kc, a, (const int8_t *)b, c_twin, ldc, ro, co);
        else
            f->packed_twin(mr, nr, kc, a, b, c_twin, ldc, ro, co);
    } else { /* uint8 A in place, one byte off */
        f->in_place(mr, nr, kc, a + 1, lda, (const int8_t *)b, c, ldc, ro, co);
        f->in_place_twin(mr, nr, kc, a + 1, lda, (const int8_t *)b, c_twin, ldc, ro, co);
    }
    for (size_t i = 0; i < MR * ldc; i++)
        if (c[i] != c_twin[i])
            fail_msg("%s: mr %zu nr %zu kc %zu corrections %d narrow %d: c[%zu][%zu] = %d, the twin's %d", f->name, mr,
                     nr, kc, (int)corrections, (int)narrow, i / ldc, i % ldc, c[i], c_twin[i]);
    free(a);
    free(b);
    free(c);
    free(c_twin);
}

static const size_t kgroups[] = { 1, 2, 3, 5, 16, 129 }; /* kc = kgroups * kpack */

static void run_int(const void *line, size_t mr, size_t nr, size_t i, size_t w)
{
    const iline *f = line;
    check_int(f, mr, nr, kgroups[i] * f->kpack, w % 2, f->a7 ? NARROW_A : NARROW_NONE);
    if (f->a7)
        check_int(f, mr, nr, kgroups[i] * f->kpack, w % 2, NARROW_B);
}

static void test_integer_ukernels_equal_their_twins(void **state)
{
    (void)state;
    int ran = 0;
    for (size_t i = 0; i < NELEMS(ilines); i++)
        if (ilines[i].isa <= mxp_isa_supported()) {
            print_message("%s\n", ilines[i].name);
            each_tile(&ilines[i], ilines[i].mr, ilines[i].nr, NELEMS(kgroups), run_int);
            ran++;
        }
    if (!ran)
        skip();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_ukernels_equal_their_twins),
        cmocka_unit_test(test_integer_ukernels_equal_their_twins),
    };
    return cmocka_run_group_tests(tests, fill_in_place_lines, NULL);
}
