/* mxp_take and mxp_take_scaled: NumPy's take on every axis of a 3-d table
 * (computed here by index arithmetic), every dtype copied bit for bit,
 * negative indices, every integer index dtype, out-of-range indices
 * refused before anything is written, converted outputs, quantized
 * tables dequantized with per-row scales. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernels/stream-loop.h"
#include "mxp.h"
#include "nn/nn_util.h"

static void test_take_every_axis_matches_index_arithmetic(void **state)
{
    (void)state;
    const int64_t shape[3] = { 2, 3, 4 };
    double t[24];
    for (int i = 0; i < 24; i++)
        t[i] = i;
    mxp_array *tab = mk(MXP_F32, 3, shape, t);
    const double iv[4] = { -1, 0, 1, -2 };
    mxp_array *idx = mk(MXP_S8, 2, (int64_t[]){ 2, 2 }, iv);
    for (int axis = -3; axis < 3; axis++) {
        const int ax = axis < 0 ? axis + 3 : axis;
        mxp_array *y = NULL;
        assert_int_equal(mxp_take(&y, tab, idx, axis, MXP_F64), MXP_OK);
        assert_int_equal(mxp_array_ndim(y), 4);
        double got[96];
        vals(y, got);
        /* out[pre, j0, j1, post] = t[pre, idx[j0, j1], post] */
        int64_t pre = 1, post = 1;
        for (int i = 0; i < ax; i++)
            pre *= shape[i];
        for (int i = ax + 1; i < 3; i++)
            post *= shape[i];
        int n = 0;
        for (int64_t p = 0; p < pre; p++)
            for (int j = 0; j < 4; j++)
                for (int64_t q = 0; q < post; q++) {
                    const int64_t i = (int64_t)iv[j] < 0 ? (int64_t)iv[j] + shape[ax] : (int64_t)iv[j];
                    const double want = t[(p * shape[ax] + i) * post + q];
                    if (got[n] != want)
                        fail_msg("axis %d element %d: %g, want %g", axis, n, got[n], want);
                    n++;
                }
        mxp_array_free(y);
    }
    mxp_array_free(idx);
    mxp_array_free(tab);
}

/* The embedding lookup (a 2-d table, one axis of indices: the path that
 * prefetches the row eight indices ahead), on a table read forward and on
 * one whose rows run backward (a view with step -1 on both axes), past
 * the last rows the prefetch reads indices for. */
static void test_take_rows_forward_and_backward(void **state)
{
    (void)state;
    enum { R = 37, D = 700, N = 50 };
    double *t = malloc(R * D * sizeof(double)), iv[N], *got = malloc(N * D * sizeof(double));
    for (int i = 0; i < R * D; i++)
        t[i] = i;
    for (int k = 0; k < N; k++)
        iv[k] = (k * 17 + 3) % R;
    mxp_array *tab = mk(MXP_F32, 2, (int64_t[]){ R, D }, t), *idx = mk(MXP_S64, 1, (int64_t[]){ N }, iv), *rev = NULL;
    const mxp_slice back[2] = { { MXP_SLICE_NONE, MXP_SLICE_NONE, -1 }, { MXP_SLICE_NONE, MXP_SLICE_NONE, -1 } };
    assert_int_equal(mxp_array_slice(&rev, tab, 2, back), MXP_OK);
    for (int b = 0; b < 2; b++) {
        mxp_array *y = NULL;
        assert_int_equal(mxp_take(&y, b ? rev : tab, idx, 0, MXP_F64), MXP_OK);
        vals(y, got);
        for (int k = 0; k < N; k++)
            for (int c = 0; c < D; c++) {
                const int row = (int)iv[k], at = b ? (R - 1 - row) * D + (D - 1 - c) : row * D + c;
                if (got[k * D + c] != t[at])
                    fail_msg("%s: out[%d][%d] = %g, want %g", b ? "backward" : "forward", k, c, got[k * D + c], t[at]);
            }
        mxp_array_free(y);
    }
    mxp_array_free(rev);
    mxp_array_free(idx);
    mxp_array_free(tab);
    free(t);
    free(got);
}

/* A large gather (9.8 MB moved, rows of whole 64-byte lines: the size
 * where the conversions switch to streaming stores) copies every bit: into
 * a new array, into an output view whose rows start 16 bytes past a line,
 * and with rows of 4000 bytes (not whole lines). */
static void test_take_large_rows_bit_for_bit(void **state)
{
    (void)state;
    enum { R = 300, N = 1200 };
    for (int c = 0; c < 3; c++) {
        const int64_t d = c == 2 ? 1000 : 1024, ts[2] = { R, d }, n = N, os[2] = { N, d + 4 };
        mxp_array *tab = NULL, *idx = NULL, *y = NULL, *big = NULL;
        assert_int_equal(mxp_array_empty(&tab, MXP_F32, 2, ts), MXP_OK);
        assert_int_equal(mxp_array_empty(&idx, MXP_S64, 1, &n), MXP_OK);
        uint32_t *t = mxp_array_data(tab);
        int64_t *iv = mxp_array_data(idx);
        for (int64_t i = 0; i < R * d; i++)
            t[i] = (uint32_t)(i * 2654435761u); /* any bits, NaN payloads too */
        for (int64_t k = 0; k < N; k++)
            iv[k] = (k * 7919 + 13) % R;
        if (c == 1) { /* out: columns 4 .. d + 3 of [N, d + 4]: rows 16 bytes past a line */
            assert_int_equal(mxp_array_zeros(&big, MXP_F32, 2, os), MXP_OK);
            const mxp_slice cols[2] = { MXP_SLICE_ALL, { 4, MXP_SLICE_NONE, 1 } };
            assert_int_equal(mxp_array_slice(&y, big, 2, cols), MXP_OK);
            assert_int_equal(mxp_take_into(y, tab, idx, 0), MXP_OK);
        } else {
            assert_int_equal(mxp_take(&y, tab, idx, 0, 0), MXP_OK);
        }
        for (int64_t k = 0; k < N; k++) {
            const uint32_t *row = (const uint32_t *)(const void *)((const char *)mxp_array_data(y) +
                                                                     k * mxp_array_strides(y)[0]);
            if (memcmp(row, t + iv[k] * d, (size_t)d * 4))
                fail_msg("case %d: row %lld differs from table row %lld", c, (long long)k, (long long)iv[k]);
        }
        if (big) /* the columns before the view untouched */
            for (int64_t k = 0; k < N; k++)
                for (int q = 0; q < 4; q++)
                    assert_true(((const uint32_t *)mxp_array_data(big))[k * (d + 4) + q] == 0);
        mxp_array_free(y), mxp_array_free(big), mxp_array_free(idx), mxp_array_free(tab);
    }
}

/* mxp_stream_copy (large gathers' rows) against memcpy, its twin: every
 * offset of the destination in a line, lengths across 0 to three lines
 * and more; the bytes around the destination untouched. */
static void test_stream_copy_every_offset_and_length(void **state)
{
    (void)state;
    enum { CAP = 512 };
    uint8_t src[CAP], *dst = mxp_malloc(CAP + 128), want[CAP + 128];
    assert_non_null(dst);
    for (int i = 0; i < CAP; i++)
        src[i] = (uint8_t)(i * 37 + 11);
    for (int off = 0; off < 64; off++)
        for (int len = 0; len <= 300; len += len < 140 ? 1 : 17) {
            memset(dst, 0xa5, CAP + 128);
            memset(want, 0xa5, CAP + 128);
            memcpy(want + off, src + (off * 7) % 64, (size_t)len);
            mxp_stream_copy(dst + off, src + (off * 7) % 64, (size_t)len);
            _mm_sfence();
            if (memcmp(dst, want, CAP + 128))
                fail_msg("offset %d, %d bytes: not memcpy's bytes", off, len);
        }
    mxp_free(dst);
}

static void test_take_every_dtype_bit_for_bit(void **state)
{
    (void)state;
    for (int d = MXP_BOOL; d < MXP_DTYPE_COUNT; d++) {
        const mxp_dtype dt = (mxp_dtype)d;
        const size_t size = mxp_dtype_itemsize(dt);
        mxp_array *tab = mk(dt, 2, (int64_t[]){ 5, 3 }, NULL);
        unsigned char *tp = mxp_array_data(tab);
        for (size_t i = 0; i < 15 * size; i++)
            tp[i] = (unsigned char)(i * 37 + 11); /* any bits, NaN payloads too */
        const double iv[3] = { 4, -5, 2 };
        for (int k = 0; k < 4; k++) {
            const mxp_dtype it = k == 0 ? MXP_S64 : k == 1 ? MXP_S16 : k == 2 ? MXP_U64 : MXP_S32;
            mxp_array *idx = mk(it, 1, (int64_t[]){ 3 }, iv), *y = NULL;
            if (it == MXP_U64) { /* no negative ones */
                mxp_array_free(idx);
                idx = mk(it, 1, (int64_t[]){ 3 }, (const double[]){ 4, 0, 2 });
            }
            assert_int_equal(mxp_take(&y, tab, idx, 0, 0), MXP_OK);
            assert_int_equal(mxp_array_dtype(y), dt);
            const unsigned char *yp = mxp_array_data(y);
            const int rows[3] = { 4, 0, 2 };
            for (int r = 0; r < 3; r++)
                assert_memory_equal(yp + (size_t)r * 3 * size, tp + (size_t)rows[r] * 3 * size, 3 * size);
            mxp_array_free(y);
            mxp_array_free(idx);
        }
        mxp_array_free(tab);
    }
}

static void test_take_bad_indices_write_nothing(void **state)
{
    (void)state;
    const double t[6] = { 1, 2, 3, 4, 5, 6 };
    mxp_array *tab = mk(MXP_BF16, 2, (int64_t[]){ 3, 2 }, t), *y = (mxp_array *)&y;
    mxp_array *out = mk(MXP_F32, 2, (int64_t[]){ 2, 2 }, (const double[]){ 9, 9, 9, 9 });
    const double cases[][2] = { { 0, 3 }, { -4, 0 }, { 1, 1e9 } };
    for (int c = 0; c < 3; c++) {
        mxp_array *idx = mk(MXP_S64, 1, (int64_t[]){ 2 }, cases[c]);
        assert_int_equal(mxp_take_into(out, tab, idx, 0), MXP_ERR_INDEX);
        assert_non_null(strstr(mxp_last_error(), "out of bounds for axis 0 with size 3"));
        assert_int_equal(mxp_take(&y, tab, idx, 0, 0), MXP_ERR_INDEX);
        assert_null(y);
        mxp_array_free(idx);
    }
    double got[4];
    vals(out, got);
    for (int i = 0; i < 4; i++)
        assert_true(got[i] == 9);
    uint64_t huge = UINT64_MAX;
    mxp_array *hu = NULL;
    assert_int_equal(mxp_array_wrap(&hu, &huge, MXP_U64, 1, (int64_t[]){ 1 }, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_take(&y, tab, hu, 0, 0), MXP_ERR_INDEX);
    assert_non_null(strstr(mxp_last_error(), "18446744073709551615"));
    mxp_array *fi = mk(MXP_F32, 1, (int64_t[]){ 1 }, t);
    assert_int_equal(mxp_take(&y, tab, fi, 0, 0), MXP_ERR_INVALID_DTYPE);
    mxp_array *bi = mk(MXP_BOOL, 1, (int64_t[]){ 1 }, t);
    assert_int_equal(mxp_take(&y, tab, bi, 0, 0), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_take(&y, tab, hu, 2, 0), MXP_ERR_INDEX); /* axis */
    /* into: converted (bf16 -> f32 exact), and a wrong shape */
    mxp_array *idx = mk(MXP_S32, 1, (int64_t[]){ 2 }, (const double[]){ 2, -3 });
    assert_int_equal(mxp_take_into(out, tab, idx, 0), MXP_OK);
    vals(out, got);
    assert_true(got[0] == 5 && got[1] == 6 && got[2] == 1 && got[3] == 2);
    assert_int_equal(mxp_take(&y, tab, idx, 1, 0), MXP_ERR_INDEX); /* index 2 of axis 1 (size 2) */
    assert_non_null(strstr(mxp_last_error(), "index 2 is out of bounds for axis 1 with size 2"));
    mxp_array *idx1 = mk(MXP_S32, 1, (int64_t[]){ 1 }, (const double[]){ 1 });
    assert_int_equal(mxp_take_into(out, tab, idx1, 0), MXP_ERR_SHAPE);
    /* an empty index array, an empty table axis */
    mxp_array *none = mk(MXP_S32, 1, (int64_t[]){ 0 }, NULL), *et = mk(MXP_F32, 2, (int64_t[]){ 0, 2 }, NULL);
    assert_int_equal(mxp_take(&y, tab, none, 0, 0), MXP_OK);
    assert_int_equal(mxp_array_size(y), 0);
    mxp_array_free(y);
    assert_int_equal(mxp_take(&y, et, idx1, 0, 0), MXP_ERR_INDEX);
    mxp_array_free(none);
    mxp_array_free(et);
    mxp_array_free(idx1);
    mxp_array_free(idx);
    mxp_array_free(bi);
    mxp_array_free(fi);
    mxp_array_free(hu);
    mxp_array_free(out);
    mxp_array_free(tab);
}

static void test_take_scaled_dequantizes_rows(void **state)
{
    (void)state;
    const mxp_dtype codes[] = { MXP_S8, MXP_E4M3, MXP_E5M2, MXP_U8 };
    const double q[8] = { 1, -2, 3, 4, 0.5, 1.5, -8, 64 };
    const double sc[4] = { 0.1, 2, 1.0 / 3, 1e-3 };
    for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++) {
        double qv[8];
        for (int i = 0; i < 8; i++)
            qv[i] = rounded(codes[k] == MXP_U8 ? fabs(q[i]) : q[i], codes[k]);
        mxp_array *tab = mk(codes[k], 2, (int64_t[]){ 4, 2 }, qv);
        mxp_array *s = mk(MXP_F32, 1, (int64_t[]){ 4 }, sc), *idx = mk(MXP_S64, 2, (int64_t[]){ 1, 3 }, (const double[]){ 3, 0, -2 });
        const mxp_dtype outs[] = { 0, MXP_BF16, MXP_F16 };
        for (int o = 0; o < 3; o++) {
            mxp_array *y = NULL;
            assert_int_equal(mxp_take_scaled(&y, tab, s, idx, outs[o]), MXP_OK);
            const mxp_dtype ot = outs[o] ? outs[o] : MXP_F32;
            assert_int_equal(mxp_array_dtype(y), ot);
            assert_int_equal(mxp_array_ndim(y), 3);
            double got[6];
            vals(y, got);
            const int rows[3] = { 3, 0, 2 };
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 2; c++)
                    expect_rounded("take_scaled", r * 2 + c, got[r * 2 + c],
                                   qv[rows[r] * 2 + c] * (double)(float)sc[rows[r]], ot, 0);
            mxp_array_free(y);
        }
        mxp_array *y = NULL, *s3 = mk(MXP_F32, 1, (int64_t[]){ 3 }, sc);
        assert_int_equal(mxp_take_scaled(&y, tab, s3, idx, 0), MXP_ERR_SHAPE);
        assert_int_equal(mxp_take_scaled(&y, tab, s, idx, MXP_S32), MXP_ERR_UNSUPPORTED);
        mxp_array_free(s3);
        mxp_array_free(idx);
        mxp_array_free(s);
        mxp_array_free(tab);
    }
}

int main(void)
{
    /* the sizes here were chosen for streaming stores from 4 MiB moved: pinned,
       so that the streaming paths are covered whatever the machine's L3 */
    mxp_set_stream_threshold(4u << 20);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take_every_axis_matches_index_arithmetic),
        cmocka_unit_test(test_take_rows_forward_and_backward),
        cmocka_unit_test(test_take_large_rows_bit_for_bit),
        cmocka_unit_test(test_stream_copy_every_offset_and_length),
        cmocka_unit_test(test_take_every_dtype_bit_for_bit),
        cmocka_unit_test(test_take_bad_indices_write_nothing),
        cmocka_unit_test(test_take_scaled_dequantizes_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
