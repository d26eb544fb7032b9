/* Every row of src/kernels/f32-softmax-list.inc and bf16-softmax-list.inc
 * that the machine runs gives its twin's bits once rounded (the twin's exp
 * is libm's, the kernels' SLEEF's: within a float64 ulp): rows of every
 * length to 70 and longer ones, unaligned starts, softmax and log_softmax,
 * special rows (a NaN, +inf, every element -inf, one element, values far
 * apart so that most exps underflow), in place; exact values; the
 * dispatch table is the list; and the layer's generic path (a strided
 * input) gives the kernels' bits at this ISA level.  The exp they share
 * (src/kernels/f64-expshift/, expshift.h): within 1.1 float64 ulps of long
 * double's expl over every binade of [-746, 0], +0 below, the edges. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/fpenv.h"
#include "mxp.h"
#include "nn/nn-internal.h"
#include "support/kernel_list.h"
#include "nn/nn_util.h"
#include "support/prng.h"

static const kl_listed f32_listed[] = {
#define MXP_F32_SOFTMAX(isa, tile, fn, twin) { #fn, isa },
#include "kernels/f32-softmax-list.inc"
#undef MXP_F32_SOFTMAX
};
static const kl_listed exp_listed[] = {
#define MXP_F64_EXPSHIFT(isa, tile, fn, twin) { #fn, isa },
#include "kernels/f64-expshift-list.inc"
#undef MXP_F64_EXPSHIFT
};
static const kl_listed bf16_listed[] = {
#define MXP_BF16_SOFTMAX(isa, tile, fn, twin) { #fn, isa },
#include "kernels/bf16-softmax-list.inc"
#undef MXP_BF16_SOFTMAX
};

static void test_tables_are_the_lists(void **state)
{
    (void)state;
    size_t n;
    const mxp_kernel *k = nn_f32_softmax_kernels(&n);
    kl_expect_table(k, n, f32_listed, sizeof f32_listed / sizeof f32_listed[0]);
    k = nn_bf16_softmax_kernels(&n);
    kl_expect_table(k, n, bf16_listed, sizeof bf16_listed / sizeof bf16_listed[0]);
    k = nn_f64_expshift_kernels(&n);
    kl_expect_table(k, n, exp_listed, sizeof exp_listed / sizeof exp_listed[0]);
    for (int isa = 0; isa < MXP_ISA_COUNT; isa++) {
        assert_non_null(nn_f32_softmax_kernel((mxp_isa)isa));
        assert_non_null(nn_bf16_softmax_kernel((mxp_isa)isa));
        assert_non_null(nn_f64_expshift_kernel((mxp_isa)isa));
    }
}

static void fill(float *x, size_t n, uint64_t *rng, int kind)
{
    for (size_t i = 0; i < n; i++) {
        const double u = prng_uniform(rng) - 0.3;
        x[i] = kind == 0 ? (float)(u * 12) : kind == 1 ? (float)(u * 3000) : kind == 2 ? -7.25f : (float)(u * 1e-40);
    }
    if (kind == 4 && n > 2)
        x[n / 2] = NAN;
    if (kind == 5)
        x[n - 1] = INFINITY;
    if (kind == 6)
        for (size_t i = 0; i < n; i++)
            x[i] = -INFINITY;
    if (kind == 7 && n > 1) /* -inf among finite values: exp gives 0 */
        x[0] = -INFINITY;
}

/* bf16: the bfloat16 kernels, their input x bfloat16 (bf16 1), float32
 * (2), float32 with an additive mask (3); the float32 kernels without (0)
 * and with (4) the mask. */
static void call(const mxp_kernel *k, bool twin, int bf16, void *y, const void *x, size_t n, double *e, int lg,
                 const float *mask)
{
    mxp_kernel_any f = twin ? k->twin : k->fn;
    const mxp_narrow_src src = { x, bf16 >= 2, bf16 == 3 ? mask : NULL };
    uint16_t *yr = y;
    if (bf16 >= 1 && bf16 <= 3)
        ((mxp_bf16_softmax_ukernel *)f)(&yr, &src, 1, n, (float *)(void *)e, lg);
    else
        ((mxp_f32_softmax_ukernel *)f)(y, x, bf16 == 4 ? mask : NULL, n, e, lg);
}

static void test_rows_match_their_twin(void **state)
{
    (void)state;
    enum { MAXN = 1100 };
    static float x[MAXN + 8], y1[MAXN + 8], y2[MAXN + 8], mask[MAXN + 8];
    static uint16_t hx[MAXN + 8];
    static double e[MAXN];
    uint64_t rng = prng_seed(27);
    for (int i = 0; i < MAXN + 8; i++) /* padding (-inf), a bias, nothing */
        mask[i] = i % 7 == 3 ? -INFINITY : i % 5 == 1 ? (float)(prng_uniform(&rng) * 4 - 2) : 0.0f;
    const mxp_fpenv env = mxp_fpenv_enter();
    size_t rows = 0;
    for (int bf16 = 0; bf16 < 5; bf16++) { /* float32; bfloat16 out of bfloat16, float32, masked float32; masked float32 */
        size_t nk;
        const bool narrow = bf16 >= 1 && bf16 <= 3;
        const mxp_kernel *ks = narrow ? nn_bf16_softmax_kernels(&nk) : nn_f32_softmax_kernels(&nk);
        const size_t size = bf16 == 1 ? 2 : 4, ysize = narrow ? 2 : 4;
        for (size_t r = 0; r < nk; r++) {
            if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
                continue;
            for (size_t n = 1; n <= MAXN; n = n < 70 ? n + 1 : n * 2 + 3)
                for (int kind = 0; kind < 8; kind++)
                    for (int variant = 0; variant < 6; variant++) {
                        const size_t off = (size_t)variant % 3;
                        const int lg = variant >= 3;
                        fill(x + off, n, &rng, kind);
                        if (bf16 == 1)
                            mxp_convert(hx, MXP_BF16, x, MXP_F32, MAXN + 8, NULL);
                        const char *in = bf16 == 1 ? (const char *)hx : (const char *)x;
                        char *o1 = (char *)y1, *o2 = (char *)y2;
                        memset(y1, 0x5a, sizeof y1);
                        memset(y2, 0x5a, sizeof y2);
                        call(&ks[r], true, bf16, o1 + off * ysize, in + off * size, n, e, lg, mask + off);
                        call(&ks[r], false, bf16, o2 + off * ysize, in + off * size, n, e, lg, mask + off);
                        if (memcmp(y1, y2, sizeof y1))
                            fail_msg("%s: n %zu kind %d variant %d input %d differs from its twin", ks[r].name, n,
                                     kind, variant, bf16);
                        rows++;
                        if (size != ysize)
                            continue;
                        memcpy(y2, in, (MAXN + 8) * size); /* in place */
                        call(&ks[r], false, bf16, o2 + off * size, o2 + off * size, n, e, lg, mask + off);
                        if (memcmp(o1 + off * size, o2 + off * size, n * size))
                            fail_msg("%s: n %zu in place differs", ks[r].name, n);
                    }
        }
    }
    assert_true(rows > 1000);
    mxp_fpenv_leave(env);
}

/* Values worked out by hand: every kernel at this level. */
/* Up to MXP_NARROW_ROWS bfloat16 rows a call (the kernels take every
 * row's maximum, then the exps, then the outputs): each row's bits those
 * of its twin on the row alone, whatever the other rows hold (NaN, +inf,
 * every element -inf, spreads of every kind), for bfloat16, float32 and
 * masked float32 input, in place too, and nothing past a row written. */
static void test_bf16_rows_together_are_each_rows_bits(void **state)
{
    (void)state;
    enum { MAXN = 700, R = MXP_NARROW_ROWS };
    static float x[R][MAXN + 8], mask[R][MAXN + 8];
    static uint16_t hx[R][MAXN + 16], want[R][MAXN + 16], got[R][MAXN + 16];
    static float e[R * MAXN + 16];
    uint64_t rng = prng_seed(45);
    const mxp_fpenv env = mxp_fpenv_enter();
    size_t nk, checked = 0;
    const mxp_kernel *ks = nn_bf16_softmax_kernels(&nk);
    for (size_t k = 0; k < nk; k++) {
        if (!mxp_kernel_runs(&ks[k], mxp_isa_supported()))
            continue;
        mxp_bf16_softmax_ukernel *fn = (mxp_bf16_softmax_ukernel *)ks[k].fn;
        mxp_bf16_softmax_ukernel *twin = (mxp_bf16_softmax_ukernel *)ks[k].twin;
        for (size_t n = 1; n <= MAXN; n = n < 40 ? n + 1 : n * 2 + 7)
            for (size_t rows = 1; rows <= R; rows++)
                for (int variant = 0; variant < 8; variant++) {
                    const int lg = variant & 1, input = variant / 2; /* bf16, f32, masked f32, bf16 in place */
                    uint16_t *yk[R];
                    mxp_narrow_src xk[R];
                    for (size_t r = 0; r < rows; r++) {
                        fill(x[r], n, &rng, (int)((r * 3 + (size_t)variant + n) % 8));
                        for (size_t i = 0; i < n; i++)
                            mask[r][i] = i % 5 == 2 ? -INFINITY : (float)((double)(i % 3) * r * 0.25);
                        mxp_convert(hx[r], MXP_BF16, x[r], MXP_F32, n, NULL);
                        xk[r] = (mxp_narrow_src){ input == 1 || input == 2 ? (const void *)x[r] : (const void *)hx[r],
                                                  input == 1 || input == 2, input == 2 ? mask[r] : NULL };
                        uint16_t *yw = want[r];
                        twin(&yw, &xk[r], 1, n, e, lg); /* the row alone */
                        memset(got[r], 0x5a, sizeof got[r]);
                        if (input == 3) { /* in place: the output row is the input row */
                            memcpy(got[r], hx[r], n * sizeof hx[r][0]);
                            xk[r].x = got[r];
                        }
                        yk[r] = got[r];
                    }
                    memset(e, 0x5a, sizeof e);
                    fn(yk, xk, rows, n, e, lg);
                    expect_rows_as_alone(ks[k].name, rows, n, variant, got[0], want[0], MAXN + 16);
                    checked++;
                }
    }
    mxp_fpenv_leave(env);
    assert_true(checked > 1000);
}

static void test_exact_values(void **state)
{
    (void)state;
    const mxp_fpenv env = mxp_fpenv_enter();
    size_t nk;
    const mxp_kernel *ks = nn_f32_softmax_kernels(&nk);
    double e[16];
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        mxp_f32_softmax_ukernel *k = (mxp_f32_softmax_ukernel *)ks[r].fn;
        float y[12];
        const float big[2] = { 1000, 1000 }, four[4] = { 5, 5, 5, 5 };
        k(y, big, NULL, 2, e, 0);
        assert_true(y[0] == 0.5f && y[1] == 0.5f);
        k(y, four, NULL, 4, e, 0);
        assert_true(y[0] == 0.25f && y[3] == 0.25f);
        k(y, big, NULL, 2, e, 1);
        assert_true(y[0] == (float)-log(2.0) && y[1] == (float)-log(2.0));
        const float one[1] = { -3.5f };
        k(y, one, NULL, 1, e, 0);
        assert_true(y[0] == 1.0f);
        k(y, one, NULL, 1, e, 1);
        assert_true(y[0] == 0.0f && !signbit(y[0]));
        /* a mask: -inf drops two elements (one the largest), a finite value shifts one: 3 + 2 = 5 = 4 + 1 */
        const float x10[10] = { 3, 9, 4, 4, 4, 4, 4, 4, 4, 4 },
                    m10[10] = { 2, -INFINITY, 1, 1, 1, 1, 1, 1, 1, -INFINITY };
        k(y, x10, m10, 10, e, 0);
        for (int i = 0; i < 10; i++)
            assert_true(y[i] == (i == 1 || i == 9 ? 0.0f : 0.125f));
        k(y, x10, m10, 10, e, 1);
        for (int i = 0; i < 10; i++)
            assert_true(y[i] == (i == 1 || i == 9 ? -INFINITY : (float)-log(8.0)));
        const float ninf10[10] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                                   -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY };
        k(y, x10, ninf10, 10, e, 0); /* every element dropped: NaN */
        assert_true(isnan(y[0]) && isnan(y[9]));
        /* eleven elements: ten far below the maximum underflow to exactly 0 */
        float far[11];
        for (int i = 0; i < 11; i++)
            far[i] = i == 7 ? 0.0f : -1000.0f;
        k(y, far, NULL, 11, e, 0);
        for (int i = 0; i < 11; i++)
            assert_true(y[i] == (i == 7 ? 1.0f : 0.0f));
        k(y, far, NULL, 11, e, 1);
        assert_true(y[7] == 0.0f && y[0] == -1000.0f);
        const float withnan[3] = { 1, NAN, 2 }, allninf[3] = { -INFINITY, -INFINITY, -INFINITY };
        k(y, withnan, NULL, 3, e, 0);
        assert_true(isnan(y[0]) && isnan(y[1]) && isnan(y[2]));
        k(y, allninf, NULL, 3, e, 1);
        assert_true(isnan(y[0]) && isnan(y[2]));
    }
    mxp_fpenv_leave(env);
}

/* The operation through its kernel (contiguous rows) and through the
 * generic path (every other element of a wider array): the same bits. */
static void test_generic_path_gives_the_kernel_bits(void **state)
{
    (void)state;
    enum { R = 7, D = 389 };
    uint64_t rng = 3;
    static float wide[R * D * 2];
    for (int i = 0; i < R * D * 2; i++)
        wide[i] = (float)((prng_uniform(&rng) - 0.5) * 30);
    mxp_array *base = NULL, *strided = NULL, *dense = NULL, *y1 = NULL, *y2 = NULL;
    assert_int_equal(mxp_array_wrap(&base, wide, MXP_F32, 2, (int64_t[]){ R, 2 * D }, NULL, false, NULL, NULL), MXP_OK);
    const mxp_slice every_other[2] = { MXP_SLICE_ALL, { 0, MXP_SLICE_NONE, 2 } };
    assert_int_equal(mxp_array_slice(&strided, base, 2, every_other), MXP_OK);
    assert_int_equal(mxp_array_ascontiguous(&dense, strided, 'C'), MXP_OK);
    for (int k = 0; k < 4; k++) { /* float32 and bfloat16 (in and out), softmax and log_softmax */
        const int lg = k & 1;
        const mxp_dtype dt = k < 2 ? MXP_F32 : MXP_BF16;
        mxp_array *s = NULL, *d = NULL;
        assert_int_equal(mxp_array_astype(&d, dense, dt, NULL), MXP_OK);
        if (dt == MXP_F32) {
            s = strided;
        } else {
            mxp_array *wide2 = NULL;
            assert_int_equal(mxp_array_astype(&wide2, base, dt, NULL), MXP_OK);
            assert_int_equal(mxp_array_slice(&s, wide2, 2, every_other), MXP_OK);
            mxp_array_free(wide2);
        }
        assert_int_equal(lg ? mxp_log_softmax(&y1, s, 1, NULL, 0) : mxp_softmax(&y1, s, 1, NULL, 0), MXP_OK);
        assert_int_equal(lg ? mxp_log_softmax(&y2, d, 1, NULL, 0) : mxp_softmax(&y2, d, 1, NULL, 0), MXP_OK);
        assert_int_equal(mxp_array_dtype(y1), dt);
        assert_memory_equal(mxp_array_data(y1), mxp_array_data(y2), R * D * mxp_dtype_itemsize(dt));
        mxp_array_free(y1);
        mxp_array_free(y2);
        if (s != strided)
            mxp_array_free(s);
        mxp_array_free(d);
    }
    mxp_array_free(dense);
    mxp_array_free(strided);
    mxp_array_free(base);
}

/* With a mask: the row kernel (a float32 mask, dense or every other element
 * of a wider one; a float16 one, widened) and the generic path (the same
 * values as a float64 mask) give the same bits, softmax and log_softmax,
 * a row whose elements are all dropped NaN. */
static void test_masked_rows_kernel_and_generic_agree(void **state)
{
    (void)state;
    enum { R = 9, D = 37 };
    uint64_t rng = 5;
    static float x[R * D], m32[R * D], m32w[2 * R * D];
    static double m64[R * D];
    static uint16_t m16[R * D];
    for (int i = 0; i < R * D; i++) {
        x[i] = (float)((prng_uniform(&rng) - 0.5) * 30);
        const int col = i % D, row = i / D;
        m32[i] = row == 4 || col % 5 == 2 ? -INFINITY : col % 3 == 0 ? (float)(col % 7) * 0.25f - 0.5f : 0.0f;
        m64[i] = m32[i];
        m32w[2 * i] = m32[i];
        m32w[2 * i + 1] = 1e30f; /* skipped */
    }
    mxp_convert(m16, MXP_F16, m32, MXP_F32, R * D, NULL); /* multiples of 1/4: exact */
    const int64_t shape[2] = { R, D }, wstrides[2] = { 2 * D * 4, 8 };
    mxp_array *xa = NULL, *ma[4] = { NULL, NULL, NULL, NULL };
    assert_int_equal(mxp_array_wrap(&xa, x, MXP_F32, 2, shape, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_wrap(&ma[0], m64, MXP_F64, 2, shape, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_wrap(&ma[1], m32, MXP_F32, 2, shape, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_wrap(&ma[2], m32w, MXP_F32, 2, shape, wstrides, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_wrap(&ma[3], m16, MXP_F16, 2, shape, NULL, false, NULL, NULL), MXP_OK);
    for (int lg = 0; lg < 2; lg++) {
        mxp_array *want = NULL;
        assert_int_equal(lg ? mxp_log_softmax(&want, xa, 1, ma[0], 0) : mxp_softmax(&want, xa, 1, ma[0], 0), MXP_OK);
        const float *w = mxp_array_data(want);
        assert_true(isnan(w[4 * D]) && isnan(w[5 * D - 1])); /* row 4: every element dropped */
        assert_true(lg ? w[2] == -INFINITY : w[2] == 0.0f);
        for (int k = 1; k < 4; k++) {
            mxp_array *got = NULL;
            assert_int_equal(lg ? mxp_log_softmax(&got, xa, 1, ma[k], 0) : mxp_softmax(&got, xa, 1, ma[k], 0), MXP_OK);
            assert_memory_equal(mxp_array_data(got), w, sizeof x);
            mxp_array_free(got);
        }
        mxp_array_free(want);
    }
    mxp_array_free(xa);
    for (int k = 0; k < 4; k++)
        mxp_array_free(ma[k]);
}

/* |got - want| <= half an ulp of got (bfloat16) + 2^-16 |want| + abs: the
 * float32 arithmetic of bfloat16 rows (kernels/bf16-narrow.h; abs: the
 * absolute error of log_softmax's float(log s), 2^-18). */
static void expect_bf16_close(const char *what, size_t i, uint16_t got, long double want, long double abs)
{
    uint32_t u = (uint32_t)got << 16;
    float g;
    memcpy(&g, &u, sizeof g);
    int ex;
    frexpl(g != 0 ? (long double)g : want, &ex);
    const long double half = ldexpl(1.0L, (ex - 9 > -134 ? ex - 9 : -134));
    if (!(fabsl((long double)g - want) <= half + fabsl(want) * 0x1p-16L + abs))
        fail_msg("%s: element %zu is %a, want %La", what, i, (double)g, want);
}

/* Every bfloat16 kernel against long double: softmax and log_softmax of
 * bfloat16 rows of several lengths and spreads, softmax of float32 rows
 * with a mask, each element rounded once to within the bound above. */
static void test_bf16_rows_near_exact(void **state)
{
    (void)state;
    enum { MAXN = 700 };
    static float x[MAXN], mk[MAXN];
    static uint16_t hx[MAXN], y[MAXN];
    static double e[MAXN];
    uint64_t rng = prng_seed(33);
    size_t nk;
    const mxp_kernel *ks = nn_bf16_softmax_kernels(&nk);
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        for (size_t n = 1; n <= MAXN; n = n * 3 + 1)
            for (int kind = 0; kind < 3; kind++) {
                for (size_t i = 0; i < n; i++)
                    x[i] = (float)((prng_uniform(&rng) - 0.5) * (kind == 0 ? 4 : kind == 1 ? 40 : 200));
                mxp_convert(hx, MXP_BF16, x, MXP_F32, n, NULL);
                long double m = -INFINITY, sum = 0;
                for (size_t i = 0; i < n; i++) {
                    uint32_t u = (uint32_t)hx[i] << 16;
                    memcpy(&x[i], &u, 4);
                    m = x[i] > m ? x[i] : m;
                }
                for (size_t i = 0; i < n; i++)
                    sum += expl(x[i] - m);
                for (int lg = 0; lg < 2; lg++) {
                    const mxp_narrow_src src = { hx, 0, NULL };
                    uint16_t *yr = y;
                    ((mxp_bf16_softmax_ukernel *)ks[r].fn)(&yr, &src, 1, n, (float *)(void *)e, lg);
                    for (size_t i = 0; i < n; i++)
                        expect_bf16_close(ks[r].name, i, y[i], lg ? (x[i] - m) - logl(sum) : expl(x[i] - m) / sum,
                                          lg ? 0x1p-18L : 0);
                }
                /* float32 in, a mask of -inf and small biases on every third element */
                for (size_t i = 0; i < n; i++) {
                    x[i] = (float)((prng_uniform(&rng) - 0.5) * (kind == 0 ? 4 : kind == 1 ? 40 : 200));
                    mk[i] = i % 3 ? 0.0f : i % 2 ? -INFINITY : 0.375f;
                }
                m = -INFINITY;
                sum = 0;
                for (size_t i = 0; i < n; i++)
                    m = (long double)x[i] + mk[i] > m ? (long double)x[i] + mk[i] : m;
                for (size_t i = 0; i < n; i++)
                    sum += expl((long double)x[i] + mk[i] - m);
                const mxp_narrow_src src = { x, 1, mk };
                uint16_t *yr = y;
                ((mxp_bf16_softmax_ukernel *)ks[r].fn)(&yr, &src, 1, n, (float *)(void *)e, 0);
                for (size_t i = 0; i < n && m != -INFINITY; i++) /* (|x| 2^-24: x + mask's float32 rounding) */
                    expect_bf16_close(ks[r].name, i, y[i], expl((long double)x[i] + mk[i] - m) / sum,
                                      expl((long double)x[i] + mk[i] - m) / sum * fabsl(x[i]) * 0x1p-23L);
            }
    }
}

/* The error of y against expl(t) in ulps of y's binade (subnormals: of
 * the smallest normal binade). */
static double ulps(double y, double t)
{
    const long double want = expl((long double)t);
    int ex;
    frexpl(want, &ex);
    const long double ulp = ldexpl(1.0L, (ex - 53 > -1074 ? ex - 53 : -1074));
    return (double)(fabsl((long double)y - want) / ulp);
}

/* Every exp kernel: t from -746 to 0 across each binade (dense near the
 * table's cells and the ends), -inf and below -746 give +0, exp(0) = 1,
 * any count, in place; against expl within 1.1 ulps. */
static void test_exp_within_an_ulp(void **state)
{
    (void)state;
    enum { N = 4099 };
    static double x[N], y[N];
    uint64_t rng = prng_seed(31);
    size_t nk;
    const mxp_kernel *ks = nn_f64_expshift_kernels(&nk);
    for (size_t r = 0; r < nk; r++) {
        if (!mxp_kernel_runs(&ks[r], mxp_isa_supported()))
            continue;
        mxp_f64_expshift_ukernel *k = (mxp_f64_expshift_ukernel *)ks[r].fn;
        double worst = 0;
        for (int round = 0; round < 200; round++) {
            for (int i = 0; i < N; i++) { /* t = x - m, m = 0.25: magnitudes 2^-60 .. 746 */
                const double mag = ldexp(1.0, -60 + (int)(prng_uniform(&rng) * 70)) * (1 + prng_uniform(&rng));
                x[i] = 0.25 - (mag < 746 ? mag : 745.9 * prng_uniform(&rng));
            }
            x[0] = 0.25;        /* t = 0 */
            x[1] = 0.25 - 708;  /* the AVX2 kernel's normal edge */
            x[2] = 0.25 - 745.5; /* subnormal results */
            x[3] = 0.25 - 1e-300;
            const size_t n = (size_t)(N - round % 9);
            k(y, x, n, 0.25);
            for (size_t i = 0; i < n; i++) {
                const double e = ulps(y[i], x[i] - 0.25);
                if (e > worst)
                    worst = e;
                if (e > 1.1)
                    fail_msg("%s: exp(%a) = %a, %.3f ulps", ks[r].name, x[i] - 0.25, y[i], e);
            }
        }
        print_message("%s: largest error %.3f ulps\n", ks[r].name, worst);
        assert_true(worst > 0.4); /* the measure sees errors */
        const double edge[6] = { -INFINITY, -746.5, -1e300, 0.0, -0.0, -2000 }, want[6] = { 0, 0, 0, 1, 1, 0 };
        double out[6], copy[6];
        k(out, edge, 6, 0.0);
        memcpy(copy, edge, sizeof copy);
        k(copy, copy, 6, 0.0); /* in place */
        for (int i = 0; i < 6; i++) {
            assert_true(out[i] == want[i] && !signbit(out[i]));
            assert_true(copy[i] == out[i]);
        }
    }
}

/* Bfloat16 out of float32 in, with a mask: dense rows with a float32
 * additive mask (the kernel reads them in place), the same through a
 * strided input and a bool mask (gathered, the mask made 0 / -inf), and
 * softmax of bfloat16 in: the same bits whichever path. */
static void test_bf16_out_paths_agree(void **state)
{
    (void)state;
    enum { R = 6, D = 133 };
    uint64_t rng = 5;
    static float wide[R * D * 2];
    static double keep[D], add[D];
    for (int i = 0; i < R * D * 2; i++)
        wide[i] = (float)((prng_uniform(&rng) - 0.5) * 16);
    for (int i = 0; i < D; i++) {
        keep[i] = i % 4 != 2;
        add[i] = keep[i] ? 0 : -INFINITY;
    }
    mxp_array *base = NULL, *strided = NULL, *dense = NULL, *mb = NULL, *ma = NULL, *y1 = NULL, *y2 = NULL;
    assert_int_equal(mxp_array_wrap(&base, wide, MXP_F32, 2, (int64_t[]){ R, 2 * D }, NULL, false, NULL, NULL), MXP_OK);
    const mxp_slice every_other[2] = { MXP_SLICE_ALL, { 0, MXP_SLICE_NONE, 2 } };
    assert_int_equal(mxp_array_slice(&strided, base, 2, every_other), MXP_OK);
    assert_int_equal(mxp_array_ascontiguous(&dense, strided, 'C'), MXP_OK);
    mb = mk(MXP_BOOL, 1, (int64_t[]){ D }, keep);
    ma = mk(MXP_F32, 1, (int64_t[]){ D }, add);
    for (int lg = 0; lg < 2; lg++) {
        assert_int_equal(lg ? mxp_log_softmax(&y1, dense, 1, ma, MXP_BF16) : mxp_softmax(&y1, dense, 1, ma, MXP_BF16),
                         MXP_OK);
        assert_int_equal(lg ? mxp_log_softmax(&y2, strided, 1, mb, MXP_BF16)
                            : mxp_softmax(&y2, strided, 1, mb, MXP_BF16),
                         MXP_OK);
        assert_int_equal(mxp_array_dtype(y1), MXP_BF16);
        assert_memory_equal(mxp_array_data(y1), mxp_array_data(y2), R * D * 2);
        /* the kernel on row 0 itself */
        static double e[D];
        static uint16_t row[D];
        const mxp_narrow_src src = { mxp_array_data(dense), 1, mxp_array_data(ma) };
        uint16_t *yr = row;
        nn_bf16_softmax_kernel(mxp_isa_current())(&yr, &src, 1, D, (float *)(void *)e, lg);
        assert_memory_equal(row, mxp_array_data(y1), D * 2);
        mxp_array_free(y1);
        mxp_array_free(y2);
    }
    mxp_array_free(ma);
    mxp_array_free(mb);
    mxp_array_free(dense);
    mxp_array_free(strided);
    mxp_array_free(base);
}

/* The largest error of f in ulps of expl over [-104, 0] (each binade,
 * the normal edge, subnormal results in ulps of the smallest normal
 * binade), failing beyond bound; +0 below -104 and for -inf, 1 at +-0. */
static double exp_worst_ulps(float (*f)(float), const char *name, double bound)
{
    uint64_t rng = prng_seed(35);
    double worst = 0;
    for (int i = 0; i < 2000000; i++) {
        const float t = i < 1000000 ? -(float)(prng_uniform(&rng) * 104)
                                    : -ldexpf(1.0f + (float)prng_uniform(&rng), -40 + (int)(prng_uniform(&rng) * 47));
        if (!(t >= -104.0f))
            continue;
        const float y = f(t);
        const long double want = expl((long double)t);
        int ex;
        frexpl(want, &ex);
        const double e = (double)(fabsl((long double)y - want) / ldexpl(1.0L, (ex - 24 > -149 ? ex - 24 : -149)));
        worst = e > worst ? e : worst;
        if (e > bound)
            fail_msg("%s(%a) = %a, %.3f ulps", name, (double)t, (double)y, e);
    }
    print_message("%s: largest error %.3f ulps\n", name, worst);
    assert_true(f(-INFINITY) == 0 && !signbit(f(-INFINITY)) && f(-104.5f) == 0);
    assert_true(f(0.0f) == 1.0f && f(-0.0f) == 1.0f);
    return worst;
}

/* nexpf.h's float32 exp (gelu's): within 2 ulps. */
static void test_nexpf_within_two_ulps(void **state)
{
    (void)state;
    assert_true(exp_worst_ulps(mxp_nexpf, "mxp_nexpf", 2.0) > 0.3);
}

/* Its short form (the bfloat16 rows'): within 2.2 ulps, and not the long
 * form (its degree-5 polynomial errs more: measured 2.18 on every float32
 * in [-87, 0]). */
static void test_sexpf_within_2_2_ulps(void **state)
{
    (void)state;
    assert_true(exp_worst_ulps(mxp_sexpf, "mxp_sexpf", 2.2) > 1.5);
    int differ = 0;
    for (float t = -20.0f; t < 0; t += 0.01f)
        differ += mxp_sexpf(t) != mxp_nexpf(t);
    assert_true(differ > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_are_the_lists),
        cmocka_unit_test(test_rows_match_their_twin),
        cmocka_unit_test(test_bf16_rows_together_are_each_rows_bits),
        cmocka_unit_test(test_exact_values),
        cmocka_unit_test(test_generic_path_gives_the_kernel_bits),
        cmocka_unit_test(test_masked_rows_kernel_and_generic_agree),
        cmocka_unit_test(test_exp_within_an_ulp),
        cmocka_unit_test(test_bf16_rows_near_exact),
        cmocka_unit_test(test_bf16_out_paths_agree),
        cmocka_unit_test(test_nexpf_within_two_ulps),
        cmocka_unit_test(test_sexpf_within_2_2_ulps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
