/* mxp_sort_strided, mxp_argsort_strided, mxp_argmax/argmin_strided
 * against an independent oracle: a stable merge sort of the elements'
 * float64 values (exact for every dtype but 64-bit integers, which are
 * compared as integers) under NumPy's rule -- NaNs last, -0 == +0 -- on
 * every bit pattern of the 8- and 16-bit types, random runs of the wider
 * ones, strides (negative too), n = 0 and 1, stability, and bad input. */
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

static const mxp_dtype ALL[] = { MXP_BOOL, MXP_S8, MXP_S16, MXP_S32, MXP_S64, MXP_U8, MXP_U16, MXP_U32,
                                 MXP_U64, MXP_F16, MXP_BF16, MXP_F32, MXP_F64, MXP_E4M3, MXP_E5M2,
                                 MXP_E3M4, MXP_E4M3IEEE, MXP_E4M3B11, MXP_E4M3FNUZ, MXP_E5M2FNUZ, MXP_E8M0,
                                 MXP_E2M3, MXP_E3M2, MXP_E2M1, MXP_S4, MXP_U4, MXP_S2, MXP_U2, MXP_S1, MXP_U1 };
enum { NALL = sizeof ALL / sizeof ALL[0] };

static uint64_t state = 88172645463325252u;
static uint64_t next(void) { return prng_next(&state); }

typedef struct elem {
    double v;   /* the value (floats, ints below 2^53) */
    uint64_t u; /* the raw bits, for 64-bit integers */
    bool nan;
    int64_t at;
} elem;

static mxp_dtype cmp_type;

/* NumPy's order: NaNs last; -0 == +0 (their order is the input's). */
static int less(const elem *a, const elem *b)
{
    if (a->nan || b->nan)
        return !a->nan && b->nan;
    if (cmp_type == MXP_S64)
        return (int64_t)a->u < (int64_t)b->u;
    if (cmp_type == MXP_U64)
        return a->u < b->u;
    return a->v < b->v;
}

static void merge_sort(elem *x, elem *tmp, size_t n) /* stable */
{
    if (n < 2)
        return;
    size_t h = n / 2;
    merge_sort(x, tmp, h);
    merge_sort(x + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = less(&x[j], &x[i]) ? x[j++] : x[i++];
    while (i < h)
        tmp[k++] = x[i++];
    while (j < n)
        tmp[k++] = x[j++];
    memcpy(x, tmp, n * sizeof *x);
}

static elem *oracle(const unsigned char *data, mxp_dtype t, ptrdiff_t stride, size_t n)
{
    size_t size = mxp_dtype_itemsize(t);
    elem *e = calloc(n + 1, sizeof *e), *tmp = calloc(n + 1, sizeof *tmp);
    assert_non_null(e);
    assert_non_null(tmp);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = data + (ptrdiff_t)i * stride;
        memcpy(&e[i].u, p, size);
        assert_int_equal(mxp_convert(&e[i].v, MXP_F64, p, t, 1, NULL), MXP_OK);
        e[i].nan = isnan(e[i].v);
        e[i].at = (int64_t)i;
    }
    cmp_type = t;
    merge_sort(e, tmp, n);
    free(tmp);
    return e;
}

static void check_run(const unsigned char *data, mxp_dtype t, ptrdiff_t stride, size_t n)
{
    size_t size = mxp_dtype_itemsize(t);
    elem *want = oracle(data, t, stride, n);
    int64_t *idx = malloc((n + 1) * sizeof *idx);
    assert_non_null(idx);
    assert_int_equal(mxp_argsort_strided(idx, data, t, stride, n), MXP_OK);
    for (size_t i = 0; i < n; i++)
        if (idx[i] != want[i].at)
            fail_msg("%s argsort: position %zu is element %lld, want %lld", mxp_dtype_name(t), i, (long long)idx[i],
                     (long long)want[i].at);
    /* sorting a copy in place moves the elements exactly as argsort says */
    unsigned char *copy = malloc(n * (size_t)(stride < 0 ? -stride : stride) + size);
    assert_non_null(copy);
    ptrdiff_t span = stride < 0 ? -stride : stride;
    unsigned char *base = stride < 0 ? copy + (n ? (n - 1) : 0) * (size_t)span : copy;
    for (size_t i = 0; i < n; i++)
        memcpy(base + (ptrdiff_t)i * stride, data + (ptrdiff_t)i * stride, size);
    assert_int_equal(mxp_sort_strided(base, t, stride, n), MXP_OK);
    for (size_t i = 0; i < n; i++)
        if (memcmp(base + (ptrdiff_t)i * stride, data + want[i].at * stride, size))
            fail_msg("%s sort: position %zu holds other bits than element %lld", mxp_dtype_name(t), i,
                     (long long)want[i].at);
    /* the keys: ascending along the sorted order, equal exactly for equals */
    uint64_t *keys = malloc((n + 1) * sizeof *keys);
    assert_non_null(keys);
    assert_int_equal(mxp_sort_keys(keys, data, t, stride, n), MXP_OK);
    for (size_t i = 0; i + 1 < n; i++) {
        uint64_t a = keys[want[i].at], b = keys[want[i + 1].at];
        bool lt = less(&want[i], &want[i + 1]);
        if (lt ? !(a < b) : a != b)
            fail_msg("%s keys: %llx, %llx at sorted positions %zu, %zu", mxp_dtype_name(t), (unsigned long long)a,
                     (unsigned long long)b, i, i + 1);
    }
    free(keys);
    if (n > 0) {
        /* argmax: the first NaN, else the first of the largest values */
        int64_t amax = -1, amin = -1;
        assert_int_equal(mxp_argmax_strided(&amax, data, t, stride, n), MXP_OK);
        assert_int_equal(mxp_argmin_strided(&amin, data, t, stride, n), MXP_OK);
        /* stable: NaNs keep their input order at the end, and the first of a
         * group of equal values in sorted order is its first in the input */
        int64_t wmax, wmin;
        size_t j = n - 1;
        if (want[n - 1].nan) {
            while (j > 0 && want[j - 1].nan)
                j--;
            wmax = wmin = want[j].at;
        } else {
            while (j > 0 && !less(&want[j - 1], &want[n - 1]))
                j--;
            wmax = want[j].at;
            wmin = want[0].at;
        }
        if (amax != wmax || amin != wmin)
            fail_msg("%s argmax/argmin: %lld/%lld, want %lld/%lld", mxp_dtype_name(t), (long long)amax,
                     (long long)amin, (long long)wmax, (long long)wmin);
    }
    free(copy);
    free(idx);
    free(want);
}

static void test_every_pattern_of_the_small_types(void **state_)
{
    (void)state_;
    for (int k = 0; k < NALL; k++) {
        mxp_dtype t = ALL[k];
        size_t size = mxp_dtype_itemsize(t);
        if (size > 2 || t == MXP_BOOL)
            continue;
        size_t n = (size_t)1 << (8 * size);
        /* every pattern, shuffled, twice over (so equal values meet) */
        unsigned char *d = malloc(2 * n * size);
        assert_non_null(d);
        for (size_t i = 0; i < 2 * n; i++) {
            uint16_t b = (uint16_t)(i % n);
            memcpy(d + i * size, &b, size);
        }
        for (size_t i = 2 * n - 1; i > 0; i--) {
            size_t j = next() % (i + 1);
            unsigned char tmp[2];
            memcpy(tmp, d + i * size, size);
            memcpy(d + i * size, d + j * size, size);
            memcpy(d + j * size, tmp, size);
        }
        check_run(d, t, (ptrdiff_t)size, 2 * n);
        free(d);
    }
}

static void test_random_runs_of_every_type_and_stride(void **state_)
{
    (void)state_;
    const size_t sizes[] = { 0, 1, 2, 3, 17, 1000 };
    for (int k = 0; k < NALL; k++) {
        mxp_dtype t = ALL[k];
        size_t size = mxp_dtype_itemsize(t);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size_t n = sizes[s];
            for (int sd = 0; sd < 3; sd++) {
                ptrdiff_t stride = (ptrdiff_t)size * (sd == 0 ? 1 : sd == 1 ? 3 : -2);
                size_t span = n * (size_t)(stride < 0 ? -stride : stride) + size;
                unsigned char *buf = malloc(span), *base = stride < 0 ? buf + span - size : buf;
                assert_non_null(buf);
                for (size_t i = 0; i < span; i++)
                    buf[i] = (unsigned char)next();
                if (t == MXP_BOOL)
                    for (size_t i = 0; i < n; i++)
                        base[(ptrdiff_t)i * stride] &= 1;
                /* a few repeats and the float specials */
                if (n > 8 && size >= 4) {
                    memcpy(base + 5 * stride, base + 2 * stride, size);
                    memset(base + 7 * stride, 0, size);
                }
                if (n > 8 && t == MXP_F32) {
                    float sp[] = { -0.0f, 0.0f, INFINITY, -INFINITY, NAN, -NAN };
                    for (int i = 0; i < 6; i++)
                        memcpy(base + (ptrdiff_t)i * stride, &sp[i], 4);
                }
                if (n > 8 && t == MXP_F64) {
                    double sp[] = { 0.0, -0.0, NAN, -INFINITY, INFINITY, -NAN };
                    for (int i = 0; i < 6; i++)
                        memcpy(base + (ptrdiff_t)i * stride, &sp[i], 8);
                }
                check_run(base, t, stride, n);
                free(buf);
            }
        }
    }
}

static void test_minus_zero_equals_zero_and_keeps_its_place(void **state_)
{
    (void)state_;
    float x[] = { 0.0f, -0.0f, 1.0f, -0.0f, 0.0f, NAN, -1.0f };
    int64_t idx[7], amax;
    assert_int_equal(mxp_argsort_strided(idx, x, MXP_F32, 4, 7), MXP_OK);
    int64_t want[] = { 6, 0, 1, 3, 4, 2, 5 };
    assert_memory_equal(idx, want, sizeof want);
    float y[] = { -0.0f, 0.0f, -2.0f };
    assert_int_equal(mxp_argmax_strided(&amax, y, MXP_F32, 4, 3), MXP_OK);
    assert_int_equal(amax, 0); /* -0 == +0: the first */
    uint8_t e4[] = { 0x7e, 0xff, 0x7f, 0xfe }; /* float8_e4m3fn: 448, NaN, NaN, -448 */
    assert_int_equal(mxp_sort_strided(e4, MXP_E4M3, 1, 4), MXP_OK);
    assert_int_equal(e4[0], 0xfe);
    assert_int_equal(e4[1], 0x7e);
    assert_int_equal(e4[2], 0xff); /* NaNs last, in their order */
    assert_int_equal(e4[3], 0x7f);
}

static void test_bad_input_is_refused(void **state_)
{
    (void)state_;
    int64_t idx[2];
    float x[2] = { 1, 2 };
    assert_int_equal(mxp_sort_strided(NULL, MXP_F32, 4, 2), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_sort_strided(x, (mxp_dtype)999, 4, 2), MXP_ERR_INVALID_DTYPE);
    assert_non_null(strstr(mxp_last_error(), "mxp_sort_strided"));
    assert_int_equal(mxp_argsort_strided(NULL, x, MXP_F32, 4, 2), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_argmax_strided(idx, x, MXP_F32, 4, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "empty"));
    assert_int_equal(mxp_argmin_strided(NULL, x, MXP_F32, 4, 2), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_sort_strided(x, MXP_F32, 4, SIZE_MAX / 2), MXP_ERR_SIZE_OVERFLOW);
    assert_int_equal(mxp_sort_strided(NULL, MXP_F32, 4, 0), MXP_OK); /* nothing to do */
    uint64_t k[2];
    assert_int_equal(mxp_sort_keys(NULL, x, MXP_F32, 4, 2), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_sort_keys(k, x, MXP_DTYPE_INVALID, 4, 2), MXP_ERR_INVALID_DTYPE);
    assert_true(x[0] == 1 && x[1] == 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_pattern_of_the_small_types),
        cmocka_unit_test(test_random_runs_of_every_type_and_stride),
        cmocka_unit_test(test_minus_zero_equals_zero_and_keeps_its_place),
        cmocka_unit_test(test_bad_input_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
