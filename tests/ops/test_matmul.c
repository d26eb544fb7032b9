/* mxp_matmul, mxp_matmul_into and mxp_gemm_strided_batched: NumPy's
 * shapes (1-d promotion, broadcast batch axes of size 1 and 0, k = 0)
 * against a long-double reference computed here from the definition;
 * transposed, F-ordered, sliced and broadcast inputs give the bits of
 * their contiguous copies; output arrays of any layout and dtype, overlap
 * with the inputs; errors and their sentences; bfloat16 within the
 * rounding bound; stochastic rounding that indexes the result in C order
 * whichever path is taken; strided batches with stride 0; integer inputs
 * get what mxp_gemm gives; allocation failures. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/alloc_failures.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))

/* ---- helpers -------------------------------------------------------------- */

static mxp_array *rnd(mxp_dtype dt, int nd, const int64_t *shape, uint64_t seed)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_random_normal(&a, dt, nd, shape, 0.0, 1.0, seed), MXP_OK);
    return a;
}

static mxp_array *view_t(const mxp_array *a, const int *perm)
{
    mxp_array *v = NULL;
    assert_int_equal(mxp_array_transpose(&v, a, perm), MXP_OK);
    return v;
}

static mxp_array *contig(const mxp_array *a)
{
    mxp_array *c = NULL;
    assert_int_equal(mxp_array_astype(&c, a, mxp_array_dtype(a), NULL), MXP_OK);
    return c;
}

static mxp_array *mm(const mxp_array *a, const mxp_array *b, const mxp_gemm_opts *o)
{
    mxp_array *r = NULL;
    mxp_status st = mxp_matmul(&r, a, b, o);
    if (st != MXP_OK)
        fail_msg("mxp_matmul: %s: %s", mxp_status_str(st), mxp_last_error());
    return r;
}

static double at_f64(const mxp_array *x, const int64_t *idx)
{
    const void *p = mxp_array_at(x, idx);
    assert_non_null(p);
    double d;
    assert_int_equal(mxp_convert(&d, MXP_F64, p, mxp_array_dtype(x), 1, NULL), MXP_OK);
    return d;
}

/* Same dtype, shape and bytes (both read in C order). */
static void expect_same(const mxp_array *got, const mxp_array *want, const char *what)
{
    assert_int_equal(mxp_array_dtype(got), mxp_array_dtype(want));
    assert_int_equal(mxp_array_ndim(got), mxp_array_ndim(want));
    assert_memory_equal(mxp_array_shape(got), mxp_array_shape(want), (size_t)mxp_array_ndim(got) * sizeof(int64_t));
    mxp_array *g = contig(got), *w = contig(want);
    size_t bytes = (size_t)mxp_array_size(g) * mxp_array_itemsize(g);
    if (bytes && memcmp(mxp_array_data(g), mxp_array_data(w), bytes))
        fail_msg("%s: the results differ", what);
    mxp_array_free(g);
    mxp_array_free(w);
}

static void expect_shape(const mxp_array *r, int nd, const int64_t *shape)
{
    assert_int_equal(mxp_array_ndim(r), nd);
    for (int i = 0; i < nd; i++)
        assert_int_equal(mxp_array_shape(r)[i], shape[i]);
}

static void expect_error(mxp_status got, mxp_status want, const char *message)
{
    if (got != want)
        fail_msg("status %s, want %s (%s)", mxp_status_str(got), mxp_status_str(want), mxp_last_error());
    if (message && strcmp(mxp_last_error(), message))
        fail_msg("message \"%s\", want \"%s\"", mxp_last_error(), message);
}

/* NumPy's matmul from its definition in long double: val gets the result
 * (shape sr, C order), mag sum_p |a b| (the scale of rounding errors). */
static void reference(const mxp_array *a, const mxp_array *b, int nr, const int64_t *sr, double **val, double **mag)
{
    const int na = mxp_array_ndim(a), nb = mxp_array_ndim(b);
    const int64_t *sa = mxp_array_shape(a), *sb = mxp_array_shape(b);
    const int64_t k = sa[na - 1];
    const int nbatch = nr - (na > 1) - (nb > 1);
    int64_t total = 1;
    for (int i = 0; i < nr; i++)
        total *= sr[i];
    *val = malloc((size_t)(total ? total : 1) * sizeof(double));
    *mag = malloc((size_t)(total ? total : 1) * sizeof(double));
    assert_true(*val && *mag);
    for (int64_t r = 0; r < total; r++) {
        int64_t ri[MXP_MAXDIMS], ia[MXP_MAXDIMS], ib[MXP_MAXDIMS], q = r;
        for (int d = nr - 1; d >= 0; d--) {
            ri[d] = q % sr[d];
            q /= sr[d];
        }
        const int64_t i = na > 1 ? ri[nbatch] : 0, j = nb > 1 ? ri[nr - 1] : 0;
        for (int d = 0; d < na - 2; d++)
            ia[d] = sa[d] == 1 ? 0 : ri[nbatch - (na - 2) + d];
        for (int d = 0; d < nb - 2; d++)
            ib[d] = sb[d] == 1 ? 0 : ri[nbatch - (nb - 2) + d];
        if (na > 1)
            ia[na - 2] = i;
        if (nb > 1)
            ib[nb - 1] = j;
        long double s = 0, m = 0;
        for (int64_t p = 0; p < k; p++) {
            ia[na - 1] = p;
            ib[nb > 1 ? nb - 2 : 0] = p;
            long double prod = (long double)at_f64(a, ia) * at_f64(b, ib);
            s += prod;
            m += fabsl(prod);
        }
        (*val)[r] = (double)s;
        (*mag)[r] = (double)m;
    }
}

/* |got - ref| <= u_out |ref| + (k + 2) u_acc mag, elementwise. */
static void expect_close(const mxp_array *got, const double *val, const double *mag, int64_t k, double u_out,
                         double u_acc, const char *what)
{
    mxp_array *g = contig(got);
    const int64_t n = mxp_array_size(g);
    double *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    assert_int_equal(mxp_convert(v, MXP_F64, mxp_array_data(g), mxp_array_dtype(g), (size_t)n, NULL), MXP_OK);
    for (int64_t i = 0; i < n; i++) {
        double tol = u_out * fabs(val[i]) + (double)(k + 2) * u_acc * mag[i];
        if (!(fabs(v[i] - val[i]) <= tol))
            fail_msg("%s: element %lld is %.17g, reference %.17g (tolerance %.3g)", what, (long long)i, v[i], val[i],
                     tol);
    }
    free(v);
    mxp_array_free(g);
}

static double unit_roundoff(mxp_dtype dt)
{
    return ldexp(1.0, -(mxp_dtype_get_traits(dt)->mant_bits + 1));
}

/* ---- shapes --------------------------------------------------------------- */

typedef struct shape_case {
    int na;
    int64_t sa[4];
    int nb;
    int64_t sb[4];
    int nr;
    int64_t sr[4];
} shape_case;

static const shape_case shape_cases[] = {
    { 1, { 3 }, 1, { 3 }, 0, { 0 } },                                /* dot: 0-d */
    { 1, { 3 }, 2, { 3, 4 }, 1, { 4 } },                             /* row vector */
    { 2, { 2, 3 }, 1, { 3 }, 1, { 2 } },                             /* column vector */
    { 2, { 2, 3 }, 2, { 3, 4 }, 2, { 2, 4 } },
    { 2, { 1, 1 }, 2, { 1, 1 }, 2, { 1, 1 } },
    { 3, { 5, 2, 3 }, 2, { 3, 4 }, 3, { 5, 2, 4 } },                 /* B shared: folded */
    { 2, { 2, 3 }, 3, { 5, 3, 4 }, 3, { 5, 2, 4 } },                 /* A shared */
    { 3, { 5, 1, 3 }, 2, { 3, 4 }, 3, { 5, 1, 4 } },                 /* m = 1, folded */
    { 4, { 2, 1, 2, 3 }, 3, { 3, 3, 4 }, 4, { 2, 3, 2, 4 } },        /* size-1 batch axes */
    { 3, { 1, 2, 3 }, 3, { 4, 3, 5 }, 3, { 4, 2, 5 } },
    { 4, { 2, 3, 4, 5 }, 4, { 2, 3, 5, 2 }, 4, { 2, 3, 4, 2 } },
    { 4, { 3, 1, 2, 2 }, 4, { 1, 4, 2, 3 }, 4, { 3, 4, 2, 3 } },
    { 1, { 3 }, 3, { 2, 3, 4 }, 2, { 2, 4 } },                       /* 1-d against a stack */
    { 3, { 2, 3, 4 }, 1, { 4 }, 2, { 2, 3 } },
    { 3, { 0, 2, 3 }, 2, { 3, 4 }, 3, { 0, 2, 4 } },                 /* empty batch */
    { 4, { 1, 0, 2, 3 }, 4, { 5, 1, 3, 2 }, 4, { 5, 0, 2, 2 } },
    { 3, { 2, 0, 3 }, 2, { 3, 4 }, 3, { 2, 0, 4 } },                 /* m = 0 */
    { 2, { 2, 3 }, 2, { 3, 0 }, 2, { 2, 0 } },                       /* n = 0 */
    { 2, { 2, 0 }, 2, { 0, 4 }, 2, { 2, 4 } },                       /* k = 0: zeros */
    { 1, { 0 }, 1, { 0 }, 0, { 0 } },
    { 3, { 3, 2, 0 }, 3, { 1, 0, 5 }, 3, { 3, 2, 5 } },
    { 2, { 7, 33 }, 2, { 33, 19 }, 2, { 7, 19 } },                   /* beyond one tile */
    { 3, { 3, 9, 70 }, 2, { 70, 40 }, 3, { 3, 9, 40 } },
};

static void test_shapes_and_values_follow_numpy(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F32, MXP_F64 };
    for (size_t t = 0; t < NELEMS(types); t++)
        for (size_t c = 0; c < NELEMS(shape_cases); c++) {
            const shape_case *s = &shape_cases[c];
            mxp_array *a = rnd(types[t], s->na, s->sa, 10 + c), *b = rnd(types[t], s->nb, s->sb, 20 + c);
            mxp_array *r = mm(a, b, NULL);
            assert_int_equal(mxp_array_dtype(r), types[t]);
            expect_shape(r, s->nr, s->sr);
            double *val, *mag;
            reference(a, b, s->nr, s->sr, &val, &mag);
            char what[64];
            snprintf(what, sizeof what, "%s case %zu", mxp_dtype_name(types[t]), c);
            expect_close(r, val, mag, s->sa[s->na - 1], unit_roundoff(types[t]), unit_roundoff(types[t]), what);
            free(val);
            free(mag);
            mxp_array_free(a);
            mxp_array_free(b);
            mxp_array_free(r);
        }
}

static void test_result_dtype_is_promoted(void **state)
{
    (void)state;
    const mxp_dtype pairs[][3] = {
        { MXP_F32, MXP_F64, MXP_F64 }, { MXP_BF16, MXP_F32, MXP_F32 },  { MXP_BF16, MXP_BF16, MXP_BF16 },
        { MXP_F16, MXP_F16, MXP_F16 }, { MXP_F16, MXP_BF16, MXP_F32 },  { MXP_E4M3, MXP_E4M3, MXP_E4M3 },
        { MXP_E4M3, MXP_F32, MXP_F32 }, { MXP_E5M2, MXP_F64, MXP_F64 },
    };
    const int64_t sa[2] = { 3, 4 }, sb[2] = { 4, 2 };
    for (size_t i = 0; i < NELEMS(pairs); i++) {
        assert_int_equal(mxp_promote_types(pairs[i][0], pairs[i][1]), pairs[i][2]);
        mxp_array *a = rnd(pairs[i][0], 2, sa, 1), *b = rnd(pairs[i][1], 2, sb, 2);
        mxp_array *r = mm(a, b, NULL);
        assert_int_equal(mxp_array_dtype(r), pairs[i][2]);
        double *val, *mag;
        const int64_t sr[2] = { 3, 2 };
        reference(a, b, 2, sr, &val, &mag);
        const mxp_dtype acc = pairs[i][0] == MXP_F64 || pairs[i][1] == MXP_F64 ? MXP_F64 : MXP_F32;
        expect_close(r, val, mag, 4, unit_roundoff(pairs[i][2]), unit_roundoff(acc), mxp_dtype_name(pairs[i][2]));
        free(val);
        free(mag);
        mxp_array_free(a);
        mxp_array_free(b);
        mxp_array_free(r);
    }
}

/* ---- layouts ------------------------------------------------------------- */

/* op(view) against op(its contiguous copy), on either side: the same bits. */
static void expect_layout_matches(const mxp_array *a, const mxp_array *b, const char *what)
{
    mxp_array *ac = contig(a), *bc = contig(b);
    mxp_array *r = mm(a, b, NULL), *want = mm(ac, bc, NULL);
    expect_same(r, want, what);
    mxp_array_free(r);
    mxp_array_free(want);
    mxp_array_free(ac);
    mxp_array_free(bc);
}

static void test_layouts_match_contiguous_copies(void **state)
{
    (void)state;
    const mxp_dtype types[] = { MXP_F32, MXP_F64, MXP_BF16 };
    for (size_t t = 0; t < NELEMS(types); t++) {
        const mxp_dtype dt = types[t];
        const int64_t s2[2] = { 13, 10 }, s3[3] = { 4, 10, 13 }, sb[2] = { 13, 9 }, sv[1] = { 13 };
        mxp_array *x = rnd(dt, 2, s2, 3), *y = rnd(dt, 3, s3, 4), *b = rnd(dt, 2, sb, 5), *v = rnd(dt, 1, sv, 6);
        mxp_array *xt = view_t(x, NULL); /* (10, 13), F-ordered */
        expect_layout_matches(xt, b, "F-ordered a");
        mxp_array *bt_base = rnd(dt, 2, (const int64_t[]){ 9, 13 }, 7), *bt = view_t(bt_base, NULL);
        expect_layout_matches(xt, bt, "F-ordered a and b");
        /* rows every other one: row-major with lda = 2 k */
        mxp_array *big = rnd(dt, 2, (const int64_t[]){ 20, 13 }, 8), *rows = NULL, *cols = NULL, *rev = NULL;
        mxp_slice every2[2] = { { MXP_SLICE_NONE, MXP_SLICE_NONE, 2 }, MXP_SLICE_ALL };
        assert_int_equal(mxp_array_slice(&rows, big, 2, every2), MXP_OK);
        expect_layout_matches(rows, b, "every other row");
        /* columns every other one: copied */
        mxp_slice cols2[2] = { MXP_SLICE_ALL, { MXP_SLICE_NONE, MXP_SLICE_NONE, 2 } };
        mxp_array *wide = rnd(dt, 2, (const int64_t[]){ 5, 26 }, 9);
        assert_int_equal(mxp_array_slice(&cols, wide, 2, cols2), MXP_OK);
        expect_layout_matches(cols, b, "every other column");
        /* reversed rows: copied */
        mxp_slice back[1] = { { MXP_SLICE_NONE, MXP_SLICE_NONE, -1 } };
        assert_int_equal(mxp_array_slice(&rev, x, 1, back), MXP_OK);
        expect_layout_matches(rev, xt, "reversed rows as a");
        expect_layout_matches(bt_base, rev, "reversed rows as b");
        /* a broadcast row (stride 0 in the matrix axes): copied */
        mxp_array *rowb = NULL;
        assert_int_equal(mxp_array_broadcast_to(&rowb, v, 2, (const int64_t[]){ 6, 13 }), MXP_OK);
        expect_layout_matches(rowb, b, "broadcast rows");
        /* a strided and a reversed vector */
        mxp_array *vs = NULL, *vr = NULL, *col = NULL;
        mxp_slice every2_1[1] = { { MXP_SLICE_NONE, MXP_SLICE_NONE, 2 } };
        mxp_array *v26 = rnd(dt, 1, (const int64_t[]){ 26 }, 10);
        assert_int_equal(mxp_array_slice(&vs, v26, 1, every2_1), MXP_OK);
        assert_int_equal(mxp_array_slice(&vr, v, 1, back), MXP_OK);
        expect_layout_matches(vs, b, "strided row vector");
        expect_layout_matches(vr, b, "reversed row vector");
        expect_layout_matches(xt, vs, "strided column vector");
        expect_layout_matches(vs, vr, "strided dot");
        assert_int_equal(mxp_array_index(&col, big, 1, 3), MXP_OK); /* a column: stride 13 */
        expect_layout_matches(col, col, "dot of columns");
        mxp_array *c13 = NULL;
        assert_int_equal(mxp_array_slice(&c13, col, 1, (const mxp_slice[]){ { 0, 13, 1 } }), MXP_OK);
        expect_layout_matches(xt, c13, "column slice as b");
        /* stacks: batch axes permuted, matrices transposed, broadcast batch */
        mxp_array *yb = view_t(y, (const int[]){ 1, 0, 2 }); /* (10, 4, 13) */
        mxp_array *ym = view_t(y, (const int[]){ 0, 2, 1 }); /* (4, 13, 10): TRANS per matrix */
        expect_layout_matches(yb, b, "batch axes permuted");
        expect_layout_matches(ym, xt, "matrices transposed");
        expect_layout_matches(xt, ym, "stack of transposed b");
        mxp_array *yz = NULL;
        assert_int_equal(mxp_array_broadcast_to(&yz, x, 3, (const int64_t[]){ 4, 13, 10 }), MXP_OK);
        expect_layout_matches(y, yz, "a batch that repeats one matrix");
        /* unaligned data (one byte past an aligned address): copied */
        const size_t bytes = 13 * 9 * mxp_dtype_itemsize(dt);
        unsigned char *raw = malloc(bytes + 1);
        assert_non_null(raw);
        memcpy(raw + 1, mxp_array_data(b), bytes);
        mxp_array *ub = NULL;
        assert_int_equal(mxp_array_wrap(&ub, raw + 1, dt, 2, sb, NULL, true, NULL, NULL), MXP_OK);
        assert_false(mxp_array_flags(ub) & MXP_ARRAY_ALIGNED);
        expect_layout_matches(xt, ub, "unaligned b");
        expect_layout_matches(ub, bt_base, "unaligned a");
        mxp_array *arrays[] = { x, y, b, v, xt, bt_base, bt, big, rows, cols, wide, rev, rowb,
                                vs, vr, col, v26, c13, yb, ym, yz, ub };
        for (size_t i = 0; i < NELEMS(arrays); i++)
            mxp_array_free(arrays[i]);
        free(raw);
    }
}

/* ---- output arrays ------------------------------------------------------- */

static void test_out_arrays(void **state)
{
    (void)state;
    const int64_t sa[3] = { 3, 5, 7 }, sb[2] = { 7, 6 }, sr[3] = { 3, 5, 6 };
    mxp_array *a = rnd(MXP_F32, 3, sa, 11), *b = rnd(MXP_F32, 2, sb, 12), *want = mm(a, b, NULL);
    /* a C-contiguous out: the same bits */
    mxp_array *o = NULL;
    assert_int_equal(mxp_array_full(&o, MXP_F32, 3, sr, NAN, NULL), MXP_OK);
    assert_int_equal(mxp_matmul_into(o, a, b, NULL), MXP_OK);
    expect_same(o, want, "C-contiguous out");
    /* an out whose matrices are column-major (through a temporary) */
    mxp_array *ft_base = NULL, *ft = NULL;
    assert_int_equal(mxp_array_full(&ft_base, MXP_F32, 3, (const int64_t[]){ 6, 5, 3 }, NAN, NULL), MXP_OK);
    ft = view_t(ft_base, NULL);
    assert_int_equal(mxp_matmul_into(ft, a, b, NULL), MXP_OK);
    expect_same(ft, want, "F-ordered out");
    /* every other row of a taller array: written in place, the rest untouched */
    mxp_array *tall = NULL, *half = NULL, *skip = NULL;
    assert_int_equal(mxp_array_full(&tall, MXP_F32, 3, (const int64_t[]){ 3, 10, 6 }, -7.0, NULL), MXP_OK);
    assert_int_equal(mxp_array_slice(&half, tall, 2,
                                     (const mxp_slice[]){ MXP_SLICE_ALL, { 0, MXP_SLICE_NONE, 2 } }), MXP_OK);
    assert_int_equal(mxp_array_slice(&skip, tall, 2,
                                     (const mxp_slice[]){ MXP_SLICE_ALL, { 1, MXP_SLICE_NONE, 2 } }), MXP_OK);
    assert_int_equal(mxp_matmul_into(half, a, b, NULL), MXP_OK);
    expect_same(half, want, "every other row of out");
    for (int64_t i = 0; i < 3; i++)
        for (int64_t r = 0; r < 5; r++)
            for (int64_t c = 0; c < 6; c++)
                assert_true(at_f64(skip, (const int64_t[]){ i, r, c }) == -7.0);
    /* another dtype: what mxp_gemm gives with that C and these options */
    mxp_gemm_opts tz = { .convert = { .rounding = MXP_ROUND_TOWARD_ZERO } };
    mxp_array *h = NULL, *hw = NULL;
    assert_int_equal(mxp_array_empty(&h, MXP_BF16, 3, sr), MXP_OK);
    assert_int_equal(mxp_array_empty(&hw, MXP_BF16, 3, sr), MXP_OK);
    assert_int_equal(mxp_matmul_into(h, a, b, &tz), MXP_OK);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 15, 6, 7, 1.0, mxp_array_data(a), MXP_F32, 7,
                              mxp_array_data(b), MXP_F32, 6, 0.0, mxp_array_data(hw), MXP_BF16, 6, &tz), MXP_OK);
    expect_same(h, hw, "bfloat16 out, toward zero");
    /* out overlapping an input: the inputs are read first */
    const int64_t sq[2] = { 6, 6 };
    mxp_array *p = rnd(MXP_F64, 2, sq, 13), *q = rnd(MXP_F64, 2, sq, 14), *pq = mm(p, q, NULL), *pp = NULL;
    mxp_array *pc = contig(p);
    assert_int_equal(mxp_matmul_into(p, p, q, NULL), MXP_OK); /* p = p q */
    expect_same(p, pq, "out is a");
    pp = mm(q, q, NULL);
    assert_int_equal(mxp_matmul_into(q, q, q, NULL), MXP_OK); /* q = q q */
    expect_same(q, pp, "out is a and b");
    mxp_array *pct = view_t(pc, NULL), *want_t = mm(pct, pc, NULL);
    assert_int_equal(mxp_matmul_into(pc, pct, pc, NULL), MXP_OK); /* out = its own transpose times itself */
    expect_same(pc, want_t, "out is b and a's transpose");
    /* k = 0 writes zeros over whatever out held */
    mxp_array *e1 = NULL, *e2 = NULL, *z = NULL;
    assert_int_equal(mxp_array_empty(&e1, MXP_F32, 2, (const int64_t[]){ 4, 0 }), MXP_OK);
    assert_int_equal(mxp_array_empty(&e2, MXP_F32, 2, (const int64_t[]){ 0, 3 }), MXP_OK);
    assert_int_equal(mxp_array_full(&z, MXP_F32, 2, (const int64_t[]){ 4, 3 }, NAN, NULL), MXP_OK);
    assert_int_equal(mxp_matmul_into(z, e1, e2, NULL), MXP_OK);
    for (int64_t i = 0; i < 4; i++)
        for (int64_t j = 0; j < 3; j++)
            assert_true(at_f64(z, (const int64_t[]){ i, j }) == 0.0);
    /* 1-d x 1-d into a 0-d array */
    mxp_array *u = rnd(MXP_F64, 1, (const int64_t[]){ 5 }, 15), *dot = NULL, *dot_want = mm(u, u, NULL);
    assert_int_equal(mxp_array_zeros(&dot, MXP_F64, 0, NULL), MXP_OK);
    assert_int_equal(mxp_matmul_into(dot, u, u, NULL), MXP_OK);
    expect_same(dot, dot_want, "0-d out");
    /* read-only and wrong-shape outs: errors, nothing written */
    mxp_array *ro = NULL;
    assert_int_equal(mxp_array_broadcast_to(&ro, o, 3, sr), MXP_OK);
    expect_error(mxp_matmul_into(ro, a, b, NULL), MXP_ERR_READONLY, "matmul: the output array is read-only");
    mxp_array *bad = NULL;
    assert_int_equal(mxp_array_zeros(&bad, MXP_F32, 2, (const int64_t[]){ 5, 6 }), MXP_OK);
    expect_error(mxp_matmul_into(bad, a, b, NULL), MXP_ERR_SHAPE,
                 "matmul: the output array has shape (5,6), the result (3,5,6)");
    expect_error(mxp_matmul_into(dot, u, b, NULL), MXP_ERR_SHAPE, "matmul: a has shape (5,) and b (7,6): k 5 != 7");
    expect_error(mxp_matmul_into(NULL, a, b, NULL), MXP_ERR_INVALID_ARGUMENT, "mxp_matmul_into: out is NULL");
    for (int64_t i = 0; i < 5; i++)
        for (int64_t j = 0; j < 6; j++)
            assert_true(at_f64(bad, (const int64_t[]){ i, j }) == 0.0);
    mxp_array *arrays[] = { a, b, want, o, ft_base, ft, tall, half, skip, h, hw, p, q, pq, pp, pc, pct, want_t,
                            e1, e2, z, u, dot, dot_want, ro, bad };
    for (size_t i = 0; i < NELEMS(arrays); i++)
        mxp_array_free(arrays[i]);
}

/* ---- errors -------------------------------------------------------------- */

static void test_errors_name_the_shapes(void **state)
{
    (void)state;
    mxp_array *s = NULL, *a = NULL, *b = NULL, *v3 = NULL, *v4 = NULL, *x = NULL, *y = NULL, *r = NULL;
    assert_int_equal(mxp_array_ones(&s, MXP_F32, 0, NULL), MXP_OK);
    assert_int_equal(mxp_array_ones(&a, MXP_F32, 2, (const int64_t[]){ 2, 3 }), MXP_OK);
    assert_int_equal(mxp_array_ones(&b, MXP_F32, 2, (const int64_t[]){ 4, 5 }), MXP_OK);
    assert_int_equal(mxp_array_ones(&v3, MXP_F32, 1, (const int64_t[]){ 3 }), MXP_OK);
    assert_int_equal(mxp_array_ones(&v4, MXP_F32, 1, (const int64_t[]){ 4 }), MXP_OK);
    assert_int_equal(mxp_array_ones(&x, MXP_F32, 3, (const int64_t[]){ 2, 3, 4 }), MXP_OK);
    assert_int_equal(mxp_array_ones(&y, MXP_F32, 3, (const int64_t[]){ 5, 4, 6 }), MXP_OK);
    r = (mxp_array *)&r; /* must come back NULL */
    expect_error(mxp_matmul(&r, a, b, NULL), MXP_ERR_SHAPE, "matmul: a has shape (2,3) and b (4,5): k 3 != 4");
    assert_null(r);
    expect_error(mxp_matmul(&r, v3, v4, NULL), MXP_ERR_SHAPE, "matmul: a has shape (3,) and b (4,): k 3 != 4");
    expect_error(mxp_matmul(&r, a, v4, NULL), MXP_ERR_SHAPE, "matmul: a has shape (2,3) and b (4,): k 3 != 4");
    expect_error(mxp_matmul(&r, v4, a, NULL), MXP_ERR_SHAPE, "matmul: a has shape (4,) and b (2,3): k 4 != 2");
    expect_error(mxp_matmul(&r, x, y, NULL), MXP_ERR_SHAPE,
                 "matmul: a has shape (2,3,4) and b (5,4,6): the batch axes (2,) and (5,) are not broadcastable");
    expect_error(mxp_matmul(&r, s, a, NULL), MXP_ERR_SHAPE,
                 "matmul: a is 0-d; matmul needs at least 1 dimension (multiply scalars with mxp_binary)");
    expect_error(mxp_matmul(&r, a, s, NULL), MXP_ERR_SHAPE,
                 "matmul: b is 0-d; matmul needs at least 1 dimension (multiply scalars with mxp_binary)");
    expect_error(mxp_matmul(&r, NULL, a, NULL), MXP_ERR_INVALID_ARGUMENT, "mxp_matmul: a is NULL");
    expect_error(mxp_matmul(&r, a, NULL, NULL), MXP_ERR_INVALID_ARGUMENT, "mxp_matmul: b is NULL");
    expect_error(mxp_matmul(NULL, a, b, NULL), MXP_ERR_INVALID_ARGUMENT, "mxp_matmul: out is NULL");
    assert_null(r);
    /* batch axes whose product does not fit: refused, as NumPy does */
    mxp_array *e1 = NULL, *e2 = NULL;
    assert_int_equal(mxp_array_empty(&e1, MXP_F32, 4, (const int64_t[]){ INT64_C(1) << 40, 1, 0, 3 }), MXP_OK);
    assert_int_equal(mxp_array_empty(&e2, MXP_F32, 4, (const int64_t[]){ 1, INT64_C(1) << 40, 3, 0 }), MXP_OK);
    expect_error(mxp_matmul(&r, e1, e2, NULL), MXP_ERR_SIZE_OVERFLOW, NULL);
    assert_null(r);
    mxp_array_free(e1);
    mxp_array_free(e2);
    /* options mxp_gemm refuses are refused before anything is made */
    mxp_gemm_opts bad = { .acc_dtype = MXP_E4M3 };
    mxp_memory_stats before = { 0 }, after = { 0 };
    mxp_memory_stats_get(&before);
    mxp_status want = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1.0, mxp_array_data(a), MXP_F32, 3,
                               mxp_array_data(a), MXP_F32, 2, 0.0, mxp_array_data(b), MXP_F32, 5, &bad);
    assert_int_not_equal(want, MXP_OK);
    expect_error(mxp_matmul(&r, a, v3, &bad), want, NULL);
    mxp_memory_stats_get(&after);
    assert_int_equal(after.allocations, before.allocations);
    assert_null(r);
    mxp_array *arrays[] = { s, a, b, v3, v4, x, y };
    for (size_t i = 0; i < NELEMS(arrays); i++)
        mxp_array_free(arrays[i]);
}

/* ---- bfloat16 -------------------------------------------------------------- */

static void test_bf16_within_the_rounding_bound(void **state)
{
    (void)state;
    const int64_t sa[3] = { 3, 17, 40 }, sb[2] = { 40, 23 }, sr[3] = { 3, 17, 23 };
    mxp_array *a = rnd(MXP_BF16, 3, sa, 21), *b = rnd(MXP_BF16, 2, sb, 22);
    mxp_array *bt_base = rnd(MXP_BF16, 2, (const int64_t[]){ 23, 40 }, 23), *bt = view_t(bt_base, NULL);
    double *val, *mag;
    reference(a, b, 3, sr, &val, &mag);
    const double u32 = ldexp(1.0, -24);
    mxp_array *r = mm(a, b, NULL);
    assert_int_equal(mxp_array_dtype(r), MXP_BF16);
    expect_close(r, val, mag, 40, ldexp(1.0, -8), u32, "bfloat16 out");
    mxp_array *f = NULL;
    assert_int_equal(mxp_array_empty(&f, MXP_F32, 3, sr), MXP_OK);
    assert_int_equal(mxp_matmul_into(f, a, b, NULL), MXP_OK);
    expect_close(f, val, mag, 40, u32, u32, "float32 out");
    mxp_gemm_opts acc64 = { .acc_dtype = MXP_F64 };
    mxp_array *d = NULL;
    assert_int_equal(mxp_array_empty(&d, MXP_F64, 3, sr), MXP_OK);
    assert_int_equal(mxp_matmul_into(d, a, b, &acc64), MXP_OK);
    expect_close(d, val, mag, 40, 0x1p-53, 0x1p-53, "float64 accumulator");
    free(val);
    free(mag);
    /* b transposed (MXP_TRANS on bfloat16 pairs) */
    reference(a, bt, 3, sr, &val, &mag);
    mxp_array *rt = mm(a, bt, NULL);
    expect_close(rt, val, mag, 40, ldexp(1.0, -8), u32, "bfloat16, b transposed");
    free(val);
    free(mag);
    mxp_array *arrays[] = { a, b, bt_base, bt, r, f, d, rt };
    for (size_t i = 0; i < NELEMS(arrays); i++)
        mxp_array_free(arrays[i]);
}

/* ---- stochastic rounding: the result's elements in C order ----------------- */

static void test_stochastic_rounding_indexes_the_result_in_c_order(void **state)
{
    (void)state;
    const int64_t sa[3] = { 4, 5, 9 }, sb[2] = { 9, 6 }, sb3[3] = { 4, 9, 6 }, sr[3] = { 4, 5, 6 };
    mxp_array *a = rnd(MXP_F32, 3, sa, 31), *b = rnd(MXP_F32, 2, sb, 32), *bb = NULL, *b3 = NULL;
    assert_int_equal(mxp_array_broadcast_to(&bb, b, 3, sb3), MXP_OK);
    b3 = contig(bb); /* the same matrices, not shared: one GEMM per matrix */
    mxp_gemm_opts sr_opts = { .convert = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 77, .index_offset = 5 } };
    mxp_array *folded = NULL, *looped = NULL, *ft_base = NULL, *ft = NULL, *one = NULL;
    assert_int_equal(mxp_array_empty(&folded, MXP_BF16, 3, sr), MXP_OK);
    assert_int_equal(mxp_array_empty(&looped, MXP_BF16, 3, sr), MXP_OK);
    assert_int_equal(mxp_array_empty(&one, MXP_BF16, 3, sr), MXP_OK);
    assert_int_equal(mxp_array_empty(&ft_base, MXP_BF16, 3, (const int64_t[]){ 6, 5, 4 }), MXP_OK);
    ft = view_t(ft_base, NULL);
    assert_int_equal(mxp_matmul_into(folded, a, b, &sr_opts), MXP_OK);
    assert_int_equal(mxp_matmul_into(looped, a, b3, &sr_opts), MXP_OK);
    assert_int_equal(mxp_matmul_into(ft, a, b3, &sr_opts), MXP_OK);
    /* one mxp_gemm over the stacked rows of A */
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 20, 6, 9, 1.0, mxp_array_data(a), MXP_F32, 9,
                              mxp_array_data(b), MXP_F32, 6, 0.0, mxp_array_data(one), MXP_BF16, 6, &sr_opts),
                     MXP_OK);
    expect_same(folded, one, "B shared (one GEMM)");
    expect_same(looped, one, "one GEMM per matrix");
    expect_same(ft, one, "through a temporary");
    /* and the rounding is stochastic: another seed changes some elements */
    mxp_gemm_opts other = sr_opts;
    other.convert.seed = 78;
    mxp_array *r2 = NULL;
    assert_int_equal(mxp_array_empty(&r2, MXP_BF16, 3, sr), MXP_OK);
    assert_int_equal(mxp_matmul_into(r2, a, b, &other), MXP_OK);
    assert_true(memcmp(mxp_array_data(r2), mxp_array_data(one), 120 * 2) != 0);
    mxp_array *arrays[] = { a, b, bb, b3, folded, looped, ft_base, ft, one, r2 };
    for (size_t i = 0; i < NELEMS(arrays); i++)
        mxp_array_free(arrays[i]);
}

/* A batch of small products shared over the threads (each below the
 * GEMM's threshold for threads; src/ops/matmul.c, threads_for_batch):
 * the bits of one thread and of one mxp_gemm per matrix, stochastic
 * rounding's element indices included, for float32 and bfloat16 inputs. */
static void test_threads_share_a_batch_of_small_products(void **state)
{
    (void)state;
    enum { NB = 2, H = 150, M = 17, K = 16, N = 15 };
    const int64_t sa[4] = { NB, H, M, K }, sb[4] = { NB, H, K, N }, sr[4] = { NB, H, M, N };
    const mxp_dtype dts[2] = { MXP_F32, MXP_BF16 };
    const int threads0 = mxp_get_num_threads();
    for (int d = 0; d < 2; d++) {
        mxp_array *a = rnd(dts[d], 4, sa, 41 + d), *b = rnd(dts[d], 4, sb, 43 + d), *r[2] = { NULL, NULL }, *one = NULL;
        const mxp_gemm_opts o = { .convert = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 5, .index_offset = 3 } };
        for (int t = 0; t < 2; t++) {
            assert_int_equal(mxp_set_num_threads(t + 1), MXP_OK);
            assert_int_equal(mxp_array_empty(&r[t], MXP_BF16, 4, sr), MXP_OK);
            assert_int_equal(mxp_matmul_into(r[t], a, b, &o), MXP_OK);
        }
        expect_same(r[1], r[0], "two threads against one");
        assert_int_equal(mxp_array_empty(&one, MXP_BF16, 4, sr), MXP_OK);
        const size_t es = mxp_dtype_itemsize(dts[d]);
        for (int i = 0; i < NB * H; i++) {
            mxp_gemm_opts oi = o;
            oi.convert.index_offset = 3 + (uint64_t)i * M * N;
            assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0,
                                      (const char *)mxp_array_data(a) + (size_t)i * M * K * es, dts[d], K,
                                      (const char *)mxp_array_data(b) + (size_t)i * K * N * es, dts[d], N, 0.0,
                                      (uint16_t *)mxp_array_data(one) + (size_t)i * M * N, MXP_BF16, N, &oi),
                             MXP_OK);
        }
        expect_same(r[1], one, "one GEMM per matrix");
        mxp_array *arrays[] = { a, b, r[0], r[1], one };
        for (size_t i = 0; i < NELEMS(arrays); i++)
            mxp_array_free(arrays[i]);
    }
    assert_int_equal(mxp_set_num_threads(threads0), MXP_OK);
}

/* ---- mxp_gemm_strided_batched ---------------------------------------------- */

static void fill(double *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = (double)((int64_t)(seed >> 40) % 1000) / 64.0;
    }
}

static void test_strided_batched(void **state)
{
    (void)state;
    enum { B = 3, M = 5, N = 7, K = 4 };
    double a[M * K], b[B][N * K], c[B][M * (N + 2)], c0[B][M * (N + 2)], want[B][M * (N + 2)];
    fill(a, NELEMS(a), 1);
    fill(&b[0][0], B * N * K, 2);
    fill(&c0[0][0], sizeof c0 / sizeof(double), 3);
    /* one A for every matrix (stride 0), B transposed, C with ldc = N + 2 */
    memcpy(c, c0, sizeof c);
    memcpy(want, c0, sizeof want);
    assert_int_equal(mxp_gemm_strided_batched(B, MXP_NO_TRANS, MXP_TRANS, M, N, K, 0.5, a, MXP_F64, K, 0, b,
                                              MXP_F64, K, N * K, 2.0, c, MXP_F64, N + 2, M * (N + 2), NULL),
                     MXP_OK);
    for (int i = 0; i < B; i++)
        assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_TRANS, M, N, K, 0.5, a, MXP_F64, K, b[i], MXP_F64, K, 2.0,
                                  want[i], MXP_F64, N + 2, NULL), MXP_OK);
    assert_memory_equal(c, want, sizeof c);
    /* B walked backwards (negative stride), A transposed and shared */
    memcpy(c, c0, sizeof c);
    memcpy(want, c0, sizeof want);
    assert_int_equal(mxp_gemm_strided_batched(B, MXP_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F64, M, 0,
                                              b[B - 1], MXP_F64, N, -(ptrdiff_t)(N * K), 0.0, c, MXP_F64, N + 2,
                                              M * (N + 2), NULL), MXP_OK);
    for (int i = 0; i < B; i++)
        assert_int_equal(mxp_gemm(MXP_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F64, M, b[B - 1 - i], MXP_F64, N,
                                  0.0, want[i], MXP_F64, N + 2, NULL), MXP_OK);
    assert_memory_equal(c, want, sizeof c);
    /* stochastic rounding: C_0's elements, then C_1's, as one tall GEMM */
    float af[B * M * K], bf[K * N];
    for (size_t i = 0; i < NELEMS(af); i++)
        af[i] = (float)(a[i % (M * K)] / 3.0 + (double)i / 7.0);
    for (size_t i = 0; i < NELEMS(bf); i++)
        bf[i] = (float)(b[0][i] / 3.0);
    uint16_t hs[B * M * N], ht[B * M * N];
    mxp_gemm_opts sr = { .convert = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 9, .index_offset = 100 } };
    assert_int_equal(mxp_gemm_strided_batched(B, MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, af, MXP_F32, K, M * K,
                                              bf, MXP_F32, N, 0, 0.0, hs, MXP_BF16, N, M * N, &sr), MXP_OK);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, B * M, N, K, 1.0, af, MXP_F32, K, bf, MXP_F32, N, 0.0, ht,
                              MXP_BF16, N, &sr), MXP_OK);
    assert_memory_equal(hs, ht, sizeof hs);
    /* errors leave C untouched */
    memcpy(c, c0, sizeof c);
    expect_error(mxp_gemm_strided_batched(2, MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F64, K, 0, b, MXP_F64,
                                          N, N * K, 0.0, c, MXP_F64, N, 0, NULL),
                 MXP_ERR_OVERLAP, "mxp_gemm_strided_batched: stride_c = 0 is smaller than one 5 x 7 C matrix with "
                                  "ldc 7: the outputs would overlap");
    expect_error(mxp_gemm_strided_batched(2, MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F64, K, 0, b, MXP_F64,
                                          N, N * K, 0.0, c, MXP_F64, N + 2, -((M - 1) * (N + 2) + N - 1), NULL),
                 MXP_ERR_OVERLAP, NULL);
    expect_error(mxp_gemm_strided_batched(3, MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F64, K,
                                          PTRDIFF_MAX / 8, b, MXP_F64, N, N * K, 0.0, c, MXP_F64, N, M * N, NULL),
                 MXP_ERR_SIZE_OVERFLOW, "mxp_gemm_strided_batched: 3 matrices 1152921504606846975 elements apart "
                                        "(stride_a) overflow the address space");
    expect_error(mxp_gemm_strided_batched(1, MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F64, K, 0, b,
                                          (mxp_dtype)99, N, 0, 0.0, c, MXP_F64, N, 0, NULL),
                 MXP_ERR_INVALID_DTYPE, NULL);
    expect_error(mxp_gemm_strided_batched(0, (mxp_trans)7, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F64, K, 0, b, MXP_F64,
                                          N, 0, 0.0, c, MXP_F64, N, 0, NULL),
                 MXP_ERR_INVALID_ARGUMENT, NULL);
    expect_error(mxp_gemm_strided_batched(2, MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F64, K, 0, b, MXP_F64,
                                          N - 1, N * K, 0.0, c, MXP_F64, N, M * N, NULL),
                 MXP_ERR_INVALID_ARGUMENT, NULL); /* ldb < N */
    expect_error(mxp_gemm_strided_batched(2, MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, NULL, MXP_F64, K, 0, b,
                                          MXP_F64, N, N * K, 0.0, c, MXP_F64, N, M * N, NULL),
                 MXP_ERR_INVALID_ARGUMENT, NULL);
    assert_memory_equal(c, c0, sizeof c);
    /* nothing to do: batch, m or n 0 (NULL pointers fine) */
    assert_int_equal(mxp_gemm_strided_batched(0, MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, NULL, MXP_F64, K, 0,
                                              NULL, MXP_F64, N, 0, 0.0, NULL, MXP_F64, N, 0, NULL), MXP_OK);
    assert_int_equal(mxp_gemm_strided_batched(4, MXP_NO_TRANS, MXP_NO_TRANS, 0, N, K, 1.0, NULL, MXP_F64, K, 0,
                                              NULL, MXP_F64, N, 0, 0.0, NULL, MXP_F64, N, 0, NULL), MXP_OK);
    /* k = 0: beta C for every matrix */
    memcpy(c, c0, sizeof c);
    assert_int_equal(mxp_gemm_strided_batched(B, MXP_NO_TRANS, MXP_NO_TRANS, M, N, 0, 1.0, NULL, MXP_F64, 1, 0,
                                              NULL, MXP_F64, N, 0, 0.0, c, MXP_F64, N + 2, M * (N + 2), NULL),
                     MXP_OK);
    for (int i = 0; i < B; i++)
        for (int r = 0; r < M; r++)
            for (int j = 0; j < N + 2; j++)
                assert_true(c[i][r * (N + 2) + j] == (j < N ? 0.0 : c0[i][r * (N + 2) + j]));
}

/* ---- integer inputs: whatever mxp_gemm does with them ---------------------- */

static void test_integer_inputs_get_what_mxp_gemm_gives(void **state)
{
    (void)state;
    const mxp_dtype pairs[][2] = { { MXP_S8, MXP_S8 }, { MXP_U8, MXP_S8 }, { MXP_S32, MXP_S32 }, { MXP_BOOL, MXP_BOOL } };
    for (size_t i = 0; i < NELEMS(pairs); i++) {
        mxp_array *a = NULL, *b = NULL, *r = NULL, *c = NULL;
        assert_int_equal(mxp_array_full(&a, pairs[i][0], 2, (const int64_t[]){ 2, 3 }, 1.0, NULL), MXP_OK);
        assert_int_equal(mxp_array_full(&b, pairs[i][1], 2, (const int64_t[]){ 3, 4 }, 1.0, NULL), MXP_OK);
        /* uint8/int8 by int8: the quantized product into int32, not NumPy's int16 */
        const bool q8 = (pairs[i][0] == MXP_S8 || pairs[i][0] == MXP_U8) && pairs[i][1] == MXP_S8;
        const mxp_dtype rt = q8 ? MXP_S32 : mxp_promote_types(pairs[i][0], pairs[i][1]);
        assert_int_equal(mxp_array_full(&c, rt, 2, (const int64_t[]){ 2, 4 }, 0.0, NULL), MXP_OK);
        mxp_status want = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 4, 3, 1.0, mxp_array_data(a), pairs[i][0], 3,
                                   mxp_array_data(b), pairs[i][1], 4, 0.0, mxp_array_data(c), rt, 4, NULL);
        mxp_status got = mxp_matmul(&r, a, b, NULL);
        if (got != want)
            fail_msg("%s @ %s: mxp_matmul %s, mxp_gemm %s", mxp_dtype_name(pairs[i][0]), mxp_dtype_name(pairs[i][1]),
                     mxp_status_str(got), mxp_status_str(want));
        if (q8)
            assert_int_equal(got, MXP_OK);
        if (got == MXP_OK) {
            assert_int_equal(mxp_array_dtype(r), rt);
            expect_same(r, c, "integer matmul");
            if (q8)
                assert_int_equal(((const int32_t *)mxp_array_data(r))[7], 3);
        } else {
            assert_null(r);
        }
        mxp_array_free(a);
        mxp_array_free(b);
        mxp_array_free(c);
        mxp_array_free(r);
    }
}

/* ---- allocation failures --------------------------------------------------- */

static mxp_status matmul_workload(void)
{
    mxp_array *a = NULL, *b = NULL, *rev = NULL, *r1 = NULL, *r2 = NULL, *ft_base = NULL, *ft = NULL;
    const int64_t sa[3] = { 2, 4, 5 }, sb[2] = { 5, 3 }, sf[3] = { 3, 4, 2 };
    const mxp_slice back[1] = { { MXP_SLICE_NONE, MXP_SLICE_NONE, -1 } };
    mxp_status st = mxp_array_random_normal(&a, MXP_F32, 3, sa, 0, 1, 1);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&b, MXP_F32, 2, sb, 0, 1, 2);
    if (st == MXP_OK)
        st = mxp_array_slice(&rev, b, 1, back); /* copied by matmul */
    if (st == MXP_OK)
        st = mxp_matmul(&r1, a, rev, NULL);
    if (st == MXP_OK) { /* a bfloat16 result: mxp_gemm's workspace */
        mxp_array *t = NULL;
        st = mxp_array_astype(&t, a, MXP_BF16, NULL);
        if (st == MXP_OK)
            st = mxp_matmul(&r2, t, b, NULL);
        mxp_array_free(t);
    }
    if (st == MXP_OK)
        st = mxp_array_zeros(&ft_base, MXP_F32, 3, sf);
    if (st == MXP_OK)
        st = mxp_array_transpose(&ft, ft_base, NULL); /* through a temporary */
    if (st == MXP_OK)
        st = mxp_matmul_into(ft, a, b, NULL);
    if (st == MXP_OK)
        st = mxp_matmul_into(r1, r1, rev, NULL) == MXP_ERR_SHAPE ? MXP_OK : MXP_ERR_INVALID_ARGUMENT;
    if (st == MXP_OK) { /* out overlapping a: a copied */
        mxp_array *sq = NULL, *sqb = NULL;
        const int64_t s[2] = { 3, 3 };
        st = mxp_array_ones(&sq, MXP_F64, 2, s);
        if (st == MXP_OK)
            st = mxp_array_ones(&sqb, MXP_F64, 2, s);
        if (st == MXP_OK)
            st = mxp_matmul_into(sq, sq, sqb, NULL);
        mxp_array_free(sq);
        mxp_array_free(sqb);
    }
    mxp_array *arrays[] = { a, b, rev, r1, r2, ft_base, ft };
    for (size_t i = 0; i < NELEMS(arrays); i++)
        mxp_array_free(arrays[i]);
    return st;
}

static void test_every_allocation_failure_is_reported_and_leaks_nothing(void **state)
{
    (void)state;
    assert_true(check_every_allocation_failure(matmul_workload) >= 12);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes_and_values_follow_numpy),
        cmocka_unit_test(test_result_dtype_is_promoted),
        cmocka_unit_test(test_layouts_match_contiguous_copies),
        cmocka_unit_test(test_out_arrays),
        cmocka_unit_test(test_errors_name_the_shapes),
        cmocka_unit_test(test_bf16_within_the_rounding_bound),
        cmocka_unit_test(test_stochastic_rounding_indexes_the_result_in_c_order),
        cmocka_unit_test(test_threads_share_a_batch_of_small_products),
        cmocka_unit_test(test_strided_batched),
        cmocka_unit_test(test_integer_inputs_get_what_mxp_gemm_gives),
        cmocka_unit_test(test_every_allocation_failure_is_reported_and_leaks_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
