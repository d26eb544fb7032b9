/* mxp_compare of an array from its pieces: mxp_compare_merge of the pieces'
 * reports against mxp_compare of the whole, the buckets (both ways of
 * counting them) against a sort, their merge against the buckets of the
 * union, and the select over pieces: exact percentiles equal mxp_compare's
 * bit for bit (one pass, refined passes, collected passes), estimates lie
 * within their bounds, and misuse is refused. */
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

/* v (n doubles, wrapped) in a new array of dtype dt. */
static mxp_array *from_doubles(const double *v, int64_t n, mxp_dtype dt)
{
    mxp_array *w = NULL, *out = NULL;
    assert_int_equal(mxp_array_wrap(&w, (void *)(uintptr_t)v, MXP_F64, 1, &n, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_astype(&out, w, dt, NULL), MXP_OK);
    mxp_array_free(w);
    return out;
}

/* n pairs: reference, and test = reference rounded to dt plus a little noise. */
static void pairs(double *r, double *t, int n, uint64_t seed, double noise)
{
    uint64_t st = seed;
    for (int i = 0; i < n; i++) {
        r[i] = (prng_uniform(&st) - 0.5) * 8;
        t[i] = r[i] * (1 + noise * (prng_uniform(&st) - 0.5));
    }
}

/* The pieces [cut[j], cut[j+1]) of the pairs: reports, sums and errors. */
typedef struct pieces {
    int n;
    mxp_compare_report rep[8];
    mxp_compare_sums sums[8];
    double *rel[8];
} pieces;

static void make_pieces(pieces *p, const double *r, const double *t, const int *cut, int n, mxp_dtype dt)
{
    p->n = n;
    for (int j = 0; j < n; j++) {
        const int64_t len = cut[j + 1] - cut[j];
        mxp_array *a = from_doubles(r + cut[j], len, MXP_F64), *b = from_doubles(t + cut[j], len, dt);
        p->rel[j] = malloc((size_t)len * sizeof(double));
        assert_int_equal(mxp_compare_piece(a, b, &p->rep[j], &p->sums[j], p->rel[j]), MXP_OK);
        if (p->rep[j].worst_index >= 0)
            p->rep[j].worst_index += cut[j];
        mxp_array_free(a);
        mxp_array_free(b);
    }
}

static void free_pieces(pieces *p)
{
    for (int j = 0; j < p->n; j++)
        free(p->rel[j]);
}

/* The pieces' buckets of one group, merged. */
static mxp_compare_bucket *merged_buckets(const pieces *p, uint64_t prefix, int pshift, int shift, size_t *nb)
{
    mxp_compare_bucket *acc = NULL;
    *nb = 0;
    for (int j = 0; j < p->n; j++) {
        mxp_compare_bucket *b = NULL, *m = NULL;
        size_t n = 0, nm = 0;
        assert_int_equal(mxp_compare_buckets(&b, &n, p->rel[j], (size_t)p->rep[j].count, prefix, pshift, shift),
                         MXP_OK);
        assert_int_equal(mxp_compare_buckets_merge(&m, &nm, acc, *nb, b, n), MXP_OK);
        mxp_free(acc);
        mxp_free(b);
        acc = m, *nb = nm;
    }
    return acc;
}

/* Runs the select over the pieces; returns the passes it took. */
static int run_select(const pieces *p, bool exact, int64_t collect, mxp_compare_report *rep, double bounds[4])
{
    mxp_compare_select *s = NULL;
    assert_int_equal(mxp_compare_select_create(&s, exact, collect), MXP_OK);
    int passes = 0;
    uint64_t prefix[8];
    int pshift[8], shift, ng;
    while ((ng = mxp_compare_select_groups(s, prefix, pshift, &shift)) > 0) {
        mxp_compare_bucket *b[8];
        size_t nb[8];
        for (int g = 0; g < ng; g++)
            b[g] = merged_buckets(p, prefix[g], pshift[g], shift, &nb[g]);
        assert_int_equal(mxp_compare_select_step(s, (const mxp_compare_bucket *const *)b, nb), MXP_OK);
        for (int g = 0; g < ng; g++)
            mxp_free(b[g]);
        passes++;
    }
    assert_int_equal(mxp_compare_select_finish(s, rep, bounds), MXP_OK);
    mxp_compare_select_free(s);
    return passes;
}

static void test_merged_reports_equal_the_whole(void **state)
{
    (void)state;
    enum { N = 5000 };
    static double r[N], t[N];
    pairs(r, t, N, 11, 1e-2);
    r[17] = 0.0; /* a zero reference */
    const int cut[5] = { 0, 1000, 1001, 3333, N };
    for (int mismatch = 0; mismatch < 2; mismatch++) {
        if (mismatch) { /* a NaN in the third piece, an infinity in the fourth */
            t[2000] = NAN;
            r[4000] = INFINITY;
        }
        mxp_array *a = from_doubles(r, N, MXP_F64), *b = from_doubles(t, N, MXP_BF16);
        mxp_compare_report whole = { 0 };
        assert_int_equal(mxp_compare(a, b, &whole), MXP_OK);
        pieces p = { 0 };
        make_pieces(&p, r, t, cut, 4, MXP_BF16);
        mxp_compare_report rep = p.rep[0];
        mxp_compare_sums sums = p.sums[0];
        for (int j = 1; j < 4; j++)
            assert_int_equal(mxp_compare_merge(&rep, &sums, &p.rep[j], &p.sums[j]), MXP_OK);
        mxp_compare_finish(&rep, &sums);
        assert_int_equal(run_select(&p, true, 0, &rep, NULL), 2);
        assert_true(rep.max_abs_error == whole.max_abs_error && rep.max_rel_error == whole.max_rel_error);
        assert_true(rep.max_ulp == whole.max_ulp);
        assert_int_equal(rep.worst_index, whole.worst_index);
        assert_int_equal(rep.count, whole.count);
        assert_int_equal(rep.nan_mismatches, whole.nan_mismatches);
        assert_int_equal(rep.inf_mismatches, whole.inf_mismatches);
        assert_memory_equal(rep.histogram, whole.histogram, sizeof whole.histogram);
        assert_memory_equal(rep.histogram_edges, whole.histogram_edges, sizeof whole.histogram_edges);
        assert_true(rep.p50_rel_error == whole.p50_rel_error && rep.p90_rel_error == whole.p90_rel_error);
        assert_true(rep.p99_rel_error == whole.p99_rel_error && rep.p999_rel_error == whole.p999_rel_error);
        assert_true(fabs(rep.mean_rel_error - whole.mean_rel_error) <= 1e-13 * whole.mean_rel_error);
        assert_true(mismatch ? isinf(rep.mse) && rep.psnr_db == -INFINITY
                             : fabs(rep.mse - whole.mse) <= 1e-13 * whole.mse);
        free_pieces(&p);
        mxp_array_free(a);
        mxp_array_free(b);
    }
    mxp_compare_report x = { 0 };
    mxp_compare_sums s = { 0 };
    assert_int_equal(mxp_compare_merge(NULL, &s, &x, &s), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare_merge(&x, &s, &x, NULL), MXP_ERR_INVALID_ARGUMENT);
}

/* The worst index: the larger error, the smaller index at a tie, a piece
 * without finite pairs (-1) ignored, and a mismatch first of all. */
static void test_merge_worst_index(void **state)
{
    (void)state;
    mxp_compare_sums s = { 0 };
    mxp_compare_report a = { .max_abs_error = 2, .worst_index = 40 }, b = { .max_abs_error = 2, .worst_index = 7 };
    assert_int_equal(mxp_compare_merge(&a, &s, &b, &s), MXP_OK);
    assert_int_equal(a.worst_index, 7);
    mxp_compare_report c = { .max_abs_error = 3, .worst_index = 90 }, none = { .worst_index = -1 };
    assert_int_equal(mxp_compare_merge(&a, &s, &none, &s), MXP_OK);
    assert_int_equal(a.worst_index, 7);
    assert_int_equal(mxp_compare_merge(&a, &s, &c, &s), MXP_OK);
    assert_int_equal(a.worst_index, 90);
    mxp_compare_report m1 = { .nan_mismatches = 1, .max_abs_error = INFINITY, .worst_index = 120 };
    mxp_compare_report m2 = { .inf_mismatches = 2, .max_abs_error = INFINITY, .worst_index = 100 };
    assert_int_equal(mxp_compare_merge(&a, &s, &m1, &s), MXP_OK);
    assert_int_equal(a.worst_index, 120);
    assert_int_equal(mxp_compare_merge(&a, &s, &c, &s), MXP_OK); /* a larger finite error: still the mismatch */
    assert_int_equal(a.worst_index, 120);
    assert_int_equal(mxp_compare_merge(&a, &s, &m2, &s), MXP_OK);
    assert_true(a.worst_index == 100 && a.nan_mismatches == 1 && a.inf_mismatches == 2 && isinf(a.max_abs_error));
}

static int cmp_u64(const void *x, const void *y)
{
    const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* The buckets against a sort of the values with the prefix, for small
 * pieces (sorted) and large ones (tables), shifts 47, 31 and 0. */
static void test_buckets_against_a_sort(void **state)
{
    (void)state;
    enum { N = 20000 };
    static double e[N];
    static uint64_t v[N];
    uint64_t st = 5;
    for (int i = 0; i < N; i++) /* repeats, zeros and a wide range */
        e[i] = i % 13 == 0 ? 0.0 : i % 7 == 0 ? 0.25 : ldexp(prng_uniform(&st), -(int)(prng_next(&st) % 40));
    const int sizes[3] = { 1, 300, N };
    for (int z = 0; z < 3; z++) {
        const size_t n = (size_t)sizes[z];
        for (int c = 0; c < 3; c++) {
            const int pshift = c == 0 ? 63 : 47, shift = c == 0 ? 47 : c == 1 ? 31 : 0;
            uint64_t b0;
            memcpy(&b0, &e[n - 1], sizeof b0);
            const uint64_t prefix = c == 0 ? 0 : b0 >> 47;
            size_t m = 0;
            for (size_t i = 0; i < n; i++) {
                uint64_t b;
                memcpy(&b, &e[i], sizeof b);
                if (b >> pshift == prefix)
                    v[m++] = b;
            }
            qsort(v, m, sizeof *v, cmp_u64);
            mxp_compare_bucket *out = NULL;
            size_t nb = 0;
            assert_int_equal(mxp_compare_buckets(&out, &nb, e, n, prefix, pshift, shift), MXP_OK);
            size_t at = 0;
            for (size_t k = 0; k < nb; k++) {
                assert_true(k == 0 || out[k].key > out[k - 1].key);
                assert_true(out[k].count > 0 && out[k].lo == v[at] && out[k].hi == v[at + out[k].count - 1]);
                for (uint64_t j = 0; j < out[k].count; j++)
                    assert_true(v[at + j] >> shift == out[k].key);
                at += out[k].count;
                assert_true(at == m || v[at] >> shift != out[k].key);
            }
            assert_int_equal(at, m);
            mxp_free(out);
        }
    }
    mxp_compare_bucket *out = (mxp_compare_bucket *)1;
    size_t nb = 9;
    assert_int_equal(mxp_compare_buckets(&out, &nb, e, 0, 0, 63, 47), MXP_OK);
    assert_true(out == NULL && nb == 0);
    assert_int_equal(mxp_compare_buckets(&out, &nb, e, 4, 0, 64, 47), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare_buckets(&out, &nb, e, 4, 0, 31, 47), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare_buckets(&out, &nb, NULL, 4, 0, 63, 47), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare_buckets(NULL, &nb, e, 4, 0, 63, 47), MXP_ERR_INVALID_ARGUMENT);
}

/* Merged buckets of two halves equal the buckets of the whole. */
static void test_buckets_merge(void **state)
{
    (void)state;
    enum { N = 9000, H = 4100 };
    static double e[N];
    uint64_t st = 9;
    for (int i = 0; i < N; i++)
        e[i] = i % 5 == 0 ? 1.0 : ldexp(prng_uniform(&st), -(int)(prng_next(&st) % 20));
    for (int shift = 47; shift >= 0; shift -= 47) {
        mxp_compare_bucket *a = NULL, *b = NULL, *m = NULL, *w = NULL;
        size_t na, nb, nm, nw;
        assert_int_equal(mxp_compare_buckets(&a, &na, e, H, 0, 63, shift), MXP_OK);
        assert_int_equal(mxp_compare_buckets(&b, &nb, e + H, N - H, 0, 63, shift), MXP_OK);
        assert_int_equal(mxp_compare_buckets(&w, &nw, e, N, 0, 63, shift), MXP_OK);
        assert_int_equal(mxp_compare_buckets_merge(&m, &nm, a, na, b, nb), MXP_OK);
        assert_int_equal(nm, nw);
        assert_memory_equal(m, w, nw * sizeof *w);
        mxp_free(m);
        assert_int_equal(mxp_compare_buckets_merge(&m, &nm, b, nb, a, na), MXP_OK); /* either order */
        assert_memory_equal(m, w, nw * sizeof *w);
        mxp_free(m);
        assert_int_equal(mxp_compare_buckets_merge(&m, &nm, NULL, 0, a, na), MXP_OK);
        assert_memory_equal(m, a, na * sizeof *a);
        mxp_free(m);
        mxp_free(a);
        mxp_free(b);
        mxp_free(w);
    }
    mxp_compare_bucket *m = NULL;
    size_t nm;
    assert_int_equal(mxp_compare_buckets_merge(&m, &nm, NULL, 3, NULL, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare_buckets_merge(&m, &nm, NULL, 0, NULL, 0), MXP_OK);
    assert_true(m == NULL && nm == 0);
}

/* Exact percentiles over pieces equal mxp_compare's whatever the passes
 * (few errors in many buckets, or many in few, refined or collected);
 * estimates lie within their bounds, themselves below 2^-5 relative. */
static void test_select_percentiles(void **state)
{
    (void)state;
    enum { N = 300000 };
    double *r = malloc(N * sizeof *r), *t = malloc(N * sizeof *t);
    const int cut[4] = { 0, 70000, 140001, N };
    for (int kind = 0; kind < 2; kind++) {
        if (kind == 0) {
            pairs(r, t, N, 3, 1e-2);
        } else { /* 300k errors in a handful of buckets */
            uint64_t st = 8;
            for (int i = 0; i < N; i++) {
                r[i] = 1.0;
                t[i] = 1 + 0.001 + 0.0001 * prng_uniform(&st);
            }
        }
        mxp_array *a = from_doubles(r, N, MXP_F64), *b = from_doubles(t, N, MXP_F64);
        mxp_compare_report whole = { 0 };
        assert_int_equal(mxp_compare(a, b, &whole), MXP_OK);
        pieces p = { 0 };
        make_pieces(&p, r, t, cut, 3, MXP_F64);
        const double want[4] = { whole.p50_rel_error, whole.p90_rel_error, whole.p99_rel_error,
                                 whole.p999_rel_error };
        const int64_t collects[3] = { 0, 1000, 1 };
        for (int c = 0; c < 3; c++) {
            mxp_compare_report rep = { 0 };
            double bounds[4] = { 9, 9, 9, 9 };
            const int passes = run_select(&p, true, collects[c], &rep, bounds);
            const double got[4] = { rep.p50_rel_error, rep.p90_rel_error, rep.p99_rel_error, rep.p999_rel_error };
            for (int q = 0; q < 4; q++)
                assert_true(got[q] == want[q] && bounds[q] == 0.0);
            assert_true(passes >= 2 && passes <= 5);
        }
        mxp_compare_report est = { 0 };
        double bounds[4];
        assert_int_equal(run_select(&p, false, 0, &est, bounds), 1);
        const double got[4] = { est.p50_rel_error, est.p90_rel_error, est.p99_rel_error, est.p999_rel_error };
        for (int q = 0; q < 4; q++) {
            assert_true(fabs(got[q] - want[q]) <= bounds[q] * (1 + 1e-12));
            assert_true(bounds[q] <= ldexp(want[q], -5) * 1.0001);
        }
        free_pieces(&p);
        mxp_array_free(a);
        mxp_array_free(b);
    }
    free(r);
    free(t);
}

/* No errors (every pair a mismatch), one error, and misuse. */
static void test_select_edges(void **state)
{
    (void)state;
    mxp_compare_select *s = NULL;
    mxp_compare_report rep = { .p50_rel_error = 5 };
    double bounds[4];
    assert_int_equal(mxp_compare_select_create(&s, true, 0), MXP_OK);
    assert_int_equal(mxp_compare_select_finish(s, &rep, bounds), MXP_ERR_INVALID_ARGUMENT); /* before pass 0 */
    const mxp_compare_bucket *none[1] = { NULL };
    size_t zero[1] = { 0 };
    assert_int_equal(mxp_compare_select_step(s, none, zero), MXP_OK);
    assert_int_equal(mxp_compare_select_groups(s, NULL, NULL, NULL), 0);
    assert_int_equal(mxp_compare_select_finish(s, &rep, bounds), MXP_OK);
    assert_true(rep.p50_rel_error == 0 && rep.p999_rel_error == 0 && bounds[3] == 0);
    assert_int_equal(mxp_compare_select_step(s, none, zero), MXP_ERR_INVALID_ARGUMENT); /* after the last */
    mxp_compare_select_free(s);

    const double e = 0.125;
    mxp_compare_bucket *b = NULL;
    size_t nb;
    assert_int_equal(mxp_compare_buckets(&b, &nb, &e, 1, 0, 63, 47), MXP_OK);
    assert_int_equal(mxp_compare_select_create(&s, false, 0), MXP_OK);
    const mxp_compare_bucket *one[1] = { b };
    assert_int_equal(mxp_compare_select_step(s, one, &nb), MXP_OK);
    assert_int_equal(mxp_compare_select_finish(s, &rep, NULL), MXP_OK);
    assert_true(rep.p50_rel_error == 0.125 && rep.p999_rel_error == 0.125);
    mxp_compare_select_free(s);

    /* buckets that hold fewer errors than a later pass's ranks need */
    mxp_compare_bucket two[1] = { { 0, 2, 0x3ff0000000000000u, 0x3ff0000000000001u } };
    const mxp_compare_bucket *pass0[1] = { two };
    size_t n1 = 1;
    assert_int_equal(mxp_compare_select_create(&s, true, 0), MXP_OK);
    assert_int_equal(mxp_compare_select_step(s, pass0, &n1), MXP_OK);
    uint64_t prefix[8];
    int pshift[8], shift;
    assert_int_equal(mxp_compare_select_groups(s, prefix, pshift, &shift), 1);
    assert_true(prefix[0] == 0 && pshift[0] == 47 && shift == 0);
    mxp_compare_bucket half[1] = { { 0x3ff0000000000000u, 1, 0x3ff0000000000000u, 0x3ff0000000000000u } };
    const mxp_compare_bucket *pass1[1] = { half };
    assert_int_equal(mxp_compare_select_step(s, pass1, &n1), MXP_ERR_INVALID_ARGUMENT);
    mxp_compare_select_free(s);
    mxp_free(b);
    assert_int_equal(mxp_compare_select_create(NULL, true, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare_select_create(&s, true, -1), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_compare_select_groups(NULL, NULL, NULL, NULL), 0);
    mxp_compare_select_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merged_reports_equal_the_whole),
        cmocka_unit_test(test_merge_worst_index),
        cmocka_unit_test(test_buckets_against_a_sort),
        cmocka_unit_test(test_buckets_merge),
        cmocka_unit_test(test_select_percentiles),
        cmocka_unit_test(test_select_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
