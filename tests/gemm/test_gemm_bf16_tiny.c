/* The vdpbf16ps kernel's guard against values it would flush (docs/gemm.md):
 * bfloat16 inputs holding a nonzero |x| < 2^-63 take the float32 kernel.
 * A is scanned before the product; B, when beta == 0 and B is packed, is
 * checked while it is packed and the product redone with the float32
 * kernel on a find.  Either way the result must be, bit for bit, the
 * float32 kernel's: mxp_gemm on the same values widened to float32
 * beforehand (exact), which takes the float32 configuration.  (The packing
 * kernel that does the check: tests/gemm/test_pack_kernels.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/prng.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

enum { TINY = (127 - 70) << 7 }; /* 2^-70: tiny */

/* bfloat16 in [-2, 2) with a random exponent's worth of spread, never tiny
 * (|x| >= 2^-8) nor zero. */
static uint16_t random_bf16(uint64_t *s)
{
    const uint64_t r = prng_next(s);
    const uint16_t sign = (uint16_t)((r & 1) << 15), exp = (uint16_t)(127 - 8 + (r >> 1) % 9);
    return (uint16_t)(sign | exp << 7 | (r >> 8) % 128);
}

/* ---- whole products ------------------------------------------------------------- */

typedef struct operands {
    size_t m, n, k, lda, ldb;
    uint16_t *a, *b; /* as stored, for ta / tb */
    float *a32, *b32;
    unsigned char *c0, *c, *c_ref; /* C before (float32), the two results (float32 or bfloat16) */
} operands;

static operands operands_new(size_t m, size_t n, size_t k, mxp_trans ta, mxp_trans tb, uint64_t seed)
{
    operands o = { m, n, k, ta ? m : k, tb ? k : n, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    const size_t na = m * k, nb = k * n;
    o.a = malloc(na * sizeof *o.a);
    o.b = malloc(nb * sizeof *o.b);
    o.a32 = malloc(na * sizeof *o.a32);
    o.b32 = malloc(nb * sizeof *o.b32);
    o.c0 = malloc(m * n * sizeof(float));
    o.c = malloc(m * n * sizeof(float));
    o.c_ref = malloc(m * n * sizeof(float));
    assert_true(o.a && o.b && o.a32 && o.b32 && o.c0 && o.c && o.c_ref);
    uint64_t s = prng_seed(seed);
    for (size_t i = 0; i < na; i++)
        o.a[i] = random_bf16(&s);
    for (size_t i = 0; i < nb; i++)
        o.b[i] = random_bf16(&s);
    for (size_t i = 0; i < m * n; i++)
        ((float *)(void *)o.c0)[i] = (float)(prng_uniform(&s) * 2 - 0.5);
    return o;
}

static void operands_free(operands *o)
{
    free(o->a);
    free(o->b);
    free(o->a32);
    free(o->b32);
    free(o->c0);
    free(o->c);
    free(o->c_ref);
}

/* C = A B + beta C on the bfloat16 operands and on their float32 copies;
 * true when the two are the same bits. */
static bool same_as_float32(operands *o, mxp_trans ta, mxp_trans tb, double beta, mxp_dtype ct)
{
    const size_t bytes = o->m * o->n * mxp_dtype_itemsize(ct);
    assert_int_equal(mxp_convert(o->a32, MXP_F32, o->a, MXP_BF16, o->m * o->k, NULL), MXP_OK);
    assert_int_equal(mxp_convert(o->b32, MXP_F32, o->b, MXP_BF16, o->k * o->n, NULL), MXP_OK);
    assert_int_equal(mxp_convert(o->c, ct, o->c0, MXP_F32, o->m * o->n, NULL), MXP_OK); /* C's values in ct */
    memcpy(o->c_ref, o->c, bytes);
    assert_int_equal(mxp_gemm(ta, tb, o->m, o->n, o->k, 1.0, o->a, MXP_BF16, o->lda, o->b, MXP_BF16, o->ldb, beta,
                              o->c, ct, o->n, NULL),
                     MXP_OK);
    assert_int_equal(mxp_gemm(ta, tb, o->m, o->n, o->k, 1.0, o->a32, MXP_F32, o->lda, o->b32, MXP_F32, o->ldb, beta,
                              o->c_ref, ct, o->n, NULL),
                     MXP_OK);
    return memcmp(o->c, o->c_ref, bytes) == 0;
}

/* A tiny value at (r, c) of op(X) (A: r < m, c < k; B: r < k, c < n). */
static uint16_t *at_op(uint16_t *x, size_t ld, mxp_trans t, size_t r, size_t c)
{
    return t ? &x[c * ld + r] : &x[r * ld + c];
}

typedef struct spot {
    const char *where;
    char which; /* 'A', 'B', or 0: none */
    size_t r, c;
} spot;

/* One shape with tiny values at the spots, every transpose pair, beta 0
 * (B checked while packed) and 0.5 (scanned before), float32 C (in place)
 * and bfloat16 C (a workspace rounded per finished block), at each thread
 * count and ISA level.  Without a tiny value the bf16 kernel must differ
 * from the float32 one somewhere (float32 C), or the test proves nothing. */
static void check_spots(size_t m, size_t n, size_t k, const spot *spots, size_t nspots, const int *threads,
                        size_t nthreads)
{
    const mxp_isa top = mxp_isa_current(), before = top; /* the machine's best, or MXP_ISA's cap */
    const mxp_dtype cts[] = { MXP_F32, MXP_BF16 };
    const double betas[] = { 0.0, 0.5 };
    for (int isa = (int)MXP_ISA_SCALAR; isa <= (int)top; isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        const bool bf16_kernel = mxp_isa_current() >= MXP_ISA_AVX512BF16;
        /* the float32 kernel on both sides: one transpose pair, beta 0 and bfloat16 C suffice */
        const int pairs = bf16_kernel ? 4 : 1;
        for (int t = 0; t < pairs; t++) {
            const mxp_trans ta = t & 1 ? MXP_TRANS : MXP_NO_TRANS, tb = t & 2 ? MXP_TRANS : MXP_NO_TRANS;
            operands o = operands_new(m, n, k, ta, tb, 1000 + (uint64_t)t);
            for (size_t s = 0; s < nspots; s++) {
                const spot *sp = &spots[s];
                uint16_t *x = sp->which == 'A'   ? at_op(o.a, o.lda, ta, sp->r, sp->c)
                              : sp->which == 'B' ? at_op(o.b, o.ldb, tb, sp->r, sp->c)
                                                 : NULL;
                const uint16_t keep = x ? *x : 0;
                if (x)
                    *x = (uint16_t)((s % 2) << 15 | TINY);
                for (size_t h = 0; h < nthreads; h++) {
                    assert_int_equal(mxp_set_num_threads(threads[h]), MXP_OK);
                    for (size_t bi = 0; bi < (bf16_kernel ? NELEMS(betas) : 1); bi++)
                        for (size_t ci = bf16_kernel ? 0 : 1; ci < NELEMS(cts); ci++) {
                            const bool same = same_as_float32(&o, ta, tb, betas[bi], cts[ci]);
                            const bool want_same = x || !bf16_kernel;
                            if (same != want_same && (want_same || cts[ci] == MXP_F32))
                                fail_msg("%s, m %zu n %zu k %zu, ta %d tb %d, beta %g, %s C, %d threads, level %s: "
                                         "%s the float32 kernel's", sp->where, m, n, k, (int)ta, (int)tb, betas[bi],
                                         mxp_dtype_name(cts[ci]), threads[h], mxp_isa_name(mxp_isa_current()),
                                         same ? "the same bits as" : "not");
                        }
                }
                if (x)
                    *x = keep;
            }
            operands_free(&o);
        }
    }
    assert_int_equal(mxp_set_isa((mxp_isa)(MXP_ISA_COUNT - 1)), MXP_OK);
    assert_int_equal(mxp_isa_current(), before);
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
}

/* Two column blocks (NC = 2048) of which the last ends in a partial NR
 * panel, two KC = 1024 panels of which the last has an odd depth: one
 * thread runs them in turn, two take a slab of 1056 and 1072 columns.
 * Spots at the corners of the blocks and slabs. */
static void test_gemm_bf16_tiny_values_anywhere_give_the_float32_kernels_bits(void **state)
{
    (void)state;
    enum { M = 20, N = 2128, K = 1101 };
    const spot spots[] = {
        { "none", 0, 0, 0 },
        { "B: first K panel, first column", 'B', 0, 0 },
        { "B: first K panel's last row, first column block's last column", 'B', 1023, 2047 },
        { "B: last K panel's first row, second column block's first column", 'B', 1024, 2048 },
        { "B: first slab's last column", 'B', 600, 1055 },
        { "B: second slab's first column", 'B', 601, 1056 },
        { "B: last K row (odd), last column (partial panel)", 'B', K - 1, N - 1 },
        { "A: first element", 'A', 0, 0 },
        { "A: last element", 'A', M - 1, K - 1 },
    };
    const int threads[] = { 1, 2 };
    check_spots(M, N, K, spots, NELEMS(spots), threads, NELEMS(threads));
}

/* Three NR panels of columns, too few for slabs: two or three threads pack
 * one shared B~ (a range of panels each) and split the rows. */
static void test_gemm_bf16_tiny_values_in_a_shared_packed_b_give_the_float32_kernels_bits(void **state)
{
    (void)state;
    enum { M = 48, N = 80, K = 1101 };
    const spot spots[] = {
        { "none", 0, 0, 0 },
        { "B: first element", 'B', 0, 0 },
        { "B: second K panel, second panel's last column", 'B', 1024, 63 },
        { "B: last K row (odd), last column (partial panel)", 'B', K - 1, N - 1 },
        { "A: a middle row", 'A', 30, 700 },
    };
    const int threads[] = { 1, 2, 3 };
    check_spots(M, N, K, spots, NELEMS(spots), threads, NELEMS(threads));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_bf16_tiny_values_anywhere_give_the_float32_kernels_bits),
        cmocka_unit_test(test_gemm_bf16_tiny_values_in_a_shared_packed_b_give_the_float32_kernels_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
