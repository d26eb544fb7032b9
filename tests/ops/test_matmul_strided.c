/* mxp_matmul_strided (one matrix by byte strides: NumPy's matmul inner
 * loop) gives the bits of mxp_gemm on C-ordered copies for every layout of
 * A, B and C (float16, bfloat16, float8; float32 and float64 to rounding): row- and column-major in wider buffers, reversed, repeated
 * (stride 0) and stepped rows and columns, misaligned starts; C written as
 * C^T = B^T A^T when column-major, through a copy with a bias or
 * stochastic rounding.  mxp_matmul_shape gives mxp_matmul's shapes and
 * sentences.  Errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/prng.h"

/* A matrix of rows x cols items of sz bytes laid out in a buffer: element
 * (i, j) at base + off + i * rs + j * cs. */
typedef enum { ROW, COL, WIDE_ROW, WIDE_COL, REV_ROWS, STEP, REPEAT, ODD, NLAYOUTS } layout;

typedef struct mat {
    unsigned char *buf;
    size_t off;
    ptrdiff_t rs, cs;
} mat;

static mat make(layout l, int64_t r, int64_t c, size_t sz)
{
    const size_t cap = ((size_t)(r + 2) * (size_t)(c + 2) * 2 + 8) * sz;
    mat x = { calloc(1, cap), 0, 0, 0 };
    const ptrdiff_t s = (ptrdiff_t)sz;
    switch (l) {
    case ROW: x.rs = c * s, x.cs = s; break;
    case COL: x.rs = s, x.cs = r * s; break;
    case WIDE_ROW: x.rs = (c + 2) * s, x.cs = s; break;
    case WIDE_COL: x.rs = s, x.cs = (r + 1) * s; break;
    case REV_ROWS: x.rs = -c * s, x.cs = s, x.off = r ? (size_t)((r - 1) * c) * sz : 0; break;
    case STEP: x.rs = 2 * c * s, x.cs = 2 * s; break;
    case REPEAT: x.rs = 0, x.cs = s; break; /* every row the same */
    default: x.rs = c * s, x.cs = s, x.off = 1; break; /* ODD: a misaligned start */
    }
    return x;
}

static void *at(const mat *x, int64_t i, int64_t j)
{
    return x->buf + x->off + i * x->rs + j * x->cs;
}

/* x's elements from the C-ordered v (a repeated row: row 0's). */
static void fill(mat *x, const unsigned char *v, int64_t r, int64_t c, size_t sz)
{
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++)
            memcpy(at(x, i, j), v + (size_t)((x->rs ? i : 0) * c + j) * sz, sz);
}

static void gather(unsigned char *v, const mat *x, int64_t r, int64_t c, size_t sz)
{
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++)
            memcpy(v + (size_t)(i * c + j) * sz, at(x, i, j), sz);
}

static void random_values(unsigned char *v, size_t n, mxp_dtype dt, uint64_t seed)
{
    double *d = malloc(n * sizeof *d + 1);
    for (size_t i = 0; i < n; i++)
        d[i] = prng_uniform(&seed) * 4 - 2;
    assert_int_equal(mxp_convert(v, dt, d, MXP_F64, n, NULL), MXP_OK);
    free(d);
}

/* The same bits; for float32 and float64, whose kernels sum a transposed
 * operand in another order, the same to their rounding (|x| <= 2, so a
 * sum of k products is off by at most 4k ulp of 1 per step). */
static bool same(const unsigned char *got, const unsigned char *want, size_t n, mxp_dtype dt, int64_t k)
{
    if (dt != MXP_F32 && dt != MXP_F64)
        return memcmp(got, want, n * mxp_dtype_itemsize(dt)) == 0;
    for (size_t i = 0; i < n; i++) {
        double g, w;
        mxp_convert(&g, MXP_F64, got + i * mxp_dtype_itemsize(dt), dt, 1, NULL);
        mxp_convert(&w, MXP_F64, want + i * mxp_dtype_itemsize(dt), dt, 1, NULL);
        if (fabs(g - w) > 4.0 * (double)(k + 1) * (double)(k + 1) * (dt == MXP_F32 ? 0x1p-24 : 0x1p-53))
            return false;
    }
    return true;
}

static void check_layouts(mxp_dtype dt, int64_t m, int64_t k, int64_t n, const mxp_gemm_opts *opts)
{
    const size_t sz = mxp_dtype_itemsize(dt);
    unsigned char *va = malloc((size_t)(m * k) * sz + 1), *vb = malloc((size_t)(k * n) * sz + 1);
    unsigned char *want = calloc((size_t)(m * n) + 1, sz), *got = calloc((size_t)(m * n) + 1, sz);
    random_values(va, (size_t)(m * k), dt, 3);
    random_values(vb, (size_t)(k * n), dt, 4);
    for (int la = 0; la < NLAYOUTS; la++) {
        /* REPEAT needs rows that are equal: A's copy for that layout */
        unsigned char *a_vals = va;
        if (la == REPEAT) {
            a_vals = malloc((size_t)(m * k) * sz + 1);
            for (int64_t i = 0; i < m; i++)
                memcpy(a_vals + (size_t)(i * k) * sz, va, (size_t)k * sz);
        }
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, (size_t)m, (size_t)n, (size_t)k, 1.0, a_vals, dt,
                                  (size_t)(k > 1 ? k : 1), vb, dt, (size_t)(n > 1 ? n : 1), 0.0, want, dt,
                                  (size_t)(n > 1 ? n : 1), opts), MXP_OK);
        for (int lb = 0; lb < NLAYOUTS; lb++) {
            for (int lc = 0; lc < NLAYOUTS; lc++) {
                if (lb == REPEAT || lc == REPEAT)
                    continue; /* B's rows differ; C is written */
                mat A = make((layout)la, m, k, sz), B = make((layout)lb, k, n, sz), C = make((layout)lc, m, n, sz);
                fill(&A, a_vals, m, k, sz);
                fill(&B, vb, k, n, sz);
                mxp_status st = mxp_matmul_strided((size_t)m, (size_t)n, (size_t)k, at(&A, 0, 0), dt, A.rs, A.cs,
                                                   at(&B, 0, 0), dt, B.rs, B.cs, at(&C, 0, 0), dt, C.rs, C.cs, opts);
                if (st != MXP_OK)
                    fail_msg("layouts %d %d %d: %s: %s", la, lb, lc, mxp_status_str(st), mxp_last_error());
                gather(got, &C, m, n, sz);
                if (!same(got, want, (size_t)(m * n), dt, k))
                    fail_msg("%s %lldx%lldx%lld, layouts A %d B %d C %d: not mxp_gemm's bits", mxp_dtype_name(dt),
                             (long long)m, (long long)k, (long long)n, la, lb, lc);
                free(A.buf);
                free(B.buf);
                free(C.buf);
            }
        }
        if (a_vals != va)
            free(a_vals);
    }
    free(va);
    free(vb);
    free(want);
    free(got);
}

static void test_every_layout_gives_the_bits_of_contiguous_copies(void **state)
{
    (void)state;
    static const int64_t sizes[][3] = { { 1, 7, 5 }, { 5, 7, 1 }, { 1, 1, 1 }, { 4, 0, 3 }, { 9, 33, 17 },
                                        { 1, 300, 70 }, { 40, 65, 3 } };
    static const mxp_dtype types[] = { MXP_BF16, MXP_E4M3, MXP_E5M2, MXP_F16, MXP_F32, MXP_F64 };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            check_layouts(types[t], sizes[s][0], sizes[s][1], sizes[s][2], NULL);
}

/* A bias per column and stochastic rounding keep C's orientation (through
 * a copy when C is column-major): the bits of the row-major call. */
static void test_options_that_forbid_the_flip(void **state)
{
    (void)state;
    float bias[17];
    for (int j = 0; j < 17; j++)
        bias[j] = (float)j * 0.25f - 2;
    mxp_gemm_opts with_bias = { .bias = bias, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL, .bias_len = 17 };
    mxp_gemm_opts stochastic = { .convert = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 5 } };
    check_layouts(MXP_BF16, 9, 33, 17, &with_bias);
    check_layouts(MXP_BF16, 9, 33, 17, &stochastic);
}

static void test_shapes(void **state)
{
    (void)state;
    int nd = -1;
    int64_t out[MXP_MAXDIMS];
    const int64_t a3[3] = { 2, 3, 4 }, b2[2] = { 4, 5 }, b1[1] = { 4 }, a1[1] = { 3 }, b4[4] = { 7, 1, 3, 5 };
    assert_int_equal(mxp_matmul_shape(&nd, out, 3, a3, 2, b2), MXP_OK);
    assert_true(nd == 3 && out[0] == 2 && out[1] == 3 && out[2] == 5);
    assert_int_equal(mxp_matmul_shape(&nd, out, 3, a3, 1, b1), MXP_OK); /* b a column: its axis removed */
    assert_true(nd == 2 && out[0] == 2 && out[1] == 3);
    assert_int_equal(mxp_matmul_shape(&nd, out, 1, a1, 4, b4), MXP_OK); /* a a row */
    assert_true(nd == 3 && out[0] == 7 && out[1] == 1 && out[2] == 5);
    assert_int_equal(mxp_matmul_shape(&nd, out, 1, b1, 1, b1), MXP_OK);
    assert_int_equal(nd, 0);
    assert_int_equal(mxp_matmul_shape(&nd, out, 3, a3, 2, a3), MXP_ERR_SHAPE);
    assert_string_equal(mxp_last_error(), "matmul: a has shape (2,3,4) and b (2,3): k 4 != 2");
    const int64_t a4[4] = { 2, 2, 3, 4 }, b3[3] = { 3, 4, 5 };
    assert_int_equal(mxp_matmul_shape(&nd, out, 4, a4, 3, b3), MXP_ERR_SHAPE);
    assert_string_equal(mxp_last_error(), "matmul: a has shape (2,2,3,4) and b (3,4,5): the batch axes (2,2) and "
                                          "(3,) are not broadcastable");
    assert_int_equal(mxp_matmul_shape(&nd, out, 0, NULL, 2, b2), MXP_ERR_SHAPE);
    assert_int_equal(mxp_matmul_shape(&nd, NULL, 3, a3, 2, b2), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_matmul_shape(&nd, out, 33, a3, 2, b2), MXP_ERR_INVALID_ARGUMENT);
    const int64_t neg[2] = { -1, 4 };
    assert_int_equal(mxp_matmul_shape(&nd, out, 2, neg, 2, b2), MXP_ERR_SHAPE);
}

static void test_errors(void **state)
{
    (void)state;
    float a[4] = { 1, 2, 3, 4 }, c[4] = { 9, 9, 9, 9 };
    int16_t s[4] = { 0 };
    assert_int_equal(mxp_matmul_strided(2, 2, 2, s, MXP_S16, 4, 2, s, MXP_S16, 4, 2, c, MXP_F32, 8, 4, NULL),
                     MXP_ERR_UNSUPPORTED);
    assert_int_equal(mxp_matmul_strided(2, 2, 2, NULL, MXP_F32, 8, 4, a, MXP_F32, 8, 4, c, MXP_F32, 8, 4, NULL),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_matmul_strided(0, 2, 2, a, MXP_F32, 8, 4, a, MXP_F32, 8, 4, c, MXP_F32, 8, 4, NULL), MXP_OK);
    assert_true(c[0] == 9 && c[3] == 9); /* nothing written */
    mxp_gemm_opts bad = { .struct_size = 3 };
    assert_int_equal(mxp_matmul_strided(2, 2, 2, a, MXP_F32, 8, 4, a, MXP_F32, 8, 4, c, MXP_F32, 8, 4, &bad),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_matmul_strided(2, 2, 2, a, MXP_F32, 8, 4, a, MXP_F32, 8, 4, c, MXP_F32, 8, 4, NULL), MXP_OK);
    assert_true(c[0] == 7 && c[1] == 10 && c[2] == 15 && c[3] == 22);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_layout_gives_the_bits_of_contiguous_copies),
        cmocka_unit_test(test_options_that_forbid_the_flip),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
