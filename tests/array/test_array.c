/* Arrays: creation, views (slices with negative steps, transpose, reshape,
 * squeeze, expand_dims, broadcasting), copies, reference counts, and the
 * allocator (statistics, alignment, custom allocators, failure injection). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"
#include "support/alloc_failures.h"

static float f32_at(const mxp_array *a, int64_t i, int64_t j)
{
    int64_t idx[2] = { i, j };
    float v;
    memcpy(&v, mxp_array_at(a, idx), 4);
    return v;
}

/* A 3x4 float32 array holding 0..11. */
static mxp_array *iota34(void)
{
    mxp_array *r = NULL, *a = NULL;
    const int64_t shape[2] = { 3, 4 };
    assert_int_equal(mxp_array_arange(&r, MXP_F32, 0, 12, 1), MXP_OK);
    assert_int_equal(mxp_array_reshape(&a, r, 2, shape), MXP_OK);
    mxp_array_free(r);
    return a;
}

static void test_creation_functions_fill_exact_values(void **state)
{
    (void)state;
    mxp_array *a = NULL;
    const int64_t shape[2] = { 2, 3 };
    assert_int_equal(mxp_array_zeros(&a, MXP_BF16, 2, shape), MXP_OK);
    assert_int_equal(mxp_array_size(a), 6);
    assert_true(mxp_array_flags(a) & MXP_ARRAY_C_CONTIGUOUS);
    assert_true(mxp_array_flags(a) & MXP_ARRAY_OWNDATA);
    assert_int_equal(mxp_array_strides(a)[0], 6);
    for (int i = 0; i < 6; i++)
        assert_int_equal(((uint16_t *)mxp_array_data(a))[i], 0);
    mxp_array_free(a);
    assert_int_equal(mxp_array_ones(&a, MXP_E4M3, 2, shape), MXP_OK);
    assert_int_equal(((uint8_t *)mxp_array_data(a))[5], 0x38);
    mxp_array_free(a);
    mxp_convert_opts up = { .rounding = MXP_ROUND_UP };
    assert_int_equal(mxp_array_full(&a, MXP_BF16, 2, shape, 0.1, &up), MXP_OK);
    assert_int_equal(((uint16_t *)mxp_array_data(a))[0], 0x3dcd);
    mxp_array_free(a);
    assert_int_equal(mxp_array_arange(&a, MXP_S32, 5, -5, -3), MXP_OK); /* 5, 2, -1, -4 */
    assert_int_equal(mxp_array_size(a), 4);
    assert_int_equal(((int32_t *)mxp_array_data(a))[3], -4);
    mxp_array_free(a);
    assert_int_equal(mxp_array_linspace(&a, MXP_F64, 0, 1, 5, true), MXP_OK);
    assert_true(((double *)mxp_array_data(a))[1] == 0.25 && ((double *)mxp_array_data(a))[4] == 1.0);
    mxp_array_free(a);
    assert_int_equal(mxp_array_linspace(&a, MXP_F64, 0, 1, 4, false), MXP_OK);
    assert_true(((double *)mxp_array_data(a))[3] == 0.75);
    mxp_array_free(a);
    assert_int_equal(mxp_array_eye(&a, MXP_F32, 3, 4, 1), MXP_OK);
    assert_true(f32_at(a, 0, 1) == 1.0f && f32_at(a, 2, 3) == 1.0f && f32_at(a, 0, 0) == 0.0f && f32_at(a, 1, 1) == 0.0f);
    mxp_array_free(a);
    assert_int_equal(mxp_array_empty(&a, MXP_F32, 0, NULL), MXP_OK); /* 0-d: one element */
    assert_int_equal(mxp_array_size(a), 1);
    mxp_array_free(a);
    const int64_t zero[2] = { 0, 5 };
    assert_int_equal(mxp_array_zeros(&a, MXP_F32, 2, zero), MXP_OK);
    assert_int_equal(mxp_array_size(a), 0);
    assert_true((mxp_array_flags(a) & (MXP_ARRAY_C_CONTIGUOUS | MXP_ARRAY_F_CONTIGUOUS)) ==
                (MXP_ARRAY_C_CONTIGUOUS | MXP_ARRAY_F_CONTIGUOUS));
    mxp_array_free(a);
}

static void test_random_arrays_are_reproducible_and_distributed(void **state)
{
    (void)state;
    enum { N = 200000 };
    const int64_t n = N;
    mxp_array *a = NULL, *b = NULL, *c = NULL;
    assert_int_equal(mxp_array_random_normal(&a, MXP_F64, 1, &n, 2.0, 3.0, 42), MXP_OK);
    assert_int_equal(mxp_array_random_normal(&b, MXP_F64, 1, &n, 2.0, 3.0, 42), MXP_OK);
    assert_int_equal(mxp_array_random_normal(&c, MXP_F64, 1, &n, 2.0, 3.0, 43), MXP_OK);
    assert_memory_equal(mxp_array_data(a), mxp_array_data(b), N * 8);
    assert_memory_not_equal(mxp_array_data(a), mxp_array_data(c), N * 8);
    const double *x = mxp_array_data(a);
    double s = 0, s2 = 0;
    for (int i = 0; i < N; i++) {
        s += x[i];
        s2 += x[i] * x[i];
    }
    double mean = s / N, sd = sqrt(s2 / N - mean * mean);
    assert_true(fabs(mean - 2.0) < 5 * 3.0 / sqrt(N)); /* 5 sigma */
    assert_true(fabs(sd - 3.0) < 0.05);
    mxp_array_free(a);
    mxp_array_free(b);
    mxp_array_free(c);
    assert_int_equal(mxp_array_random_uniform(&a, MXP_BF16, 1, &n, -1, 1, 7), MXP_OK);
    double back[16];
    mxp_convert(back, MXP_F64, mxp_array_data(a), MXP_BF16, 16, NULL);
    for (int i = 0; i < 16; i++)
        assert_true(back[i] >= -1 && back[i] <= 1);
    mxp_array_free(a);
}

static void test_slices_with_negative_steps_view_the_same_memory(void **state)
{
    (void)state;
    mxp_array *a = iota34(), *v = NULL, *w = NULL;
    /* a[::-1, 3:0:-2] -> rows 2,1,0 and columns 3,1 */
    mxp_slice s[2] = { { MXP_SLICE_NONE, MXP_SLICE_NONE, -1 }, { 3, 0, -2 } };
    assert_int_equal(mxp_array_slice(&v, a, 2, s), MXP_OK);
    assert_int_equal(mxp_array_shape(v)[0], 3);
    assert_int_equal(mxp_array_shape(v)[1], 2);
    assert_true(f32_at(v, 0, 0) == 11.0f && f32_at(v, 0, 1) == 9.0f && f32_at(v, 2, 1) == 1.0f);
    assert_true(mxp_array_base(v) == mxp_array_base(a) || mxp_array_base(v) == a);
    assert_false(mxp_array_flags(v) & MXP_ARRAY_C_CONTIGUOUS);
    /* Out-of-range bounds clip; empty results are fine. */
    mxp_slice t[1] = { { -100, 100, 1 } };
    assert_int_equal(mxp_array_slice(&w, a, 1, t), MXP_OK);
    assert_int_equal(mxp_array_shape(w)[0], 3);
    mxp_array_free(w);
    mxp_slice e[1] = { { 2, 1, 1 } };
    assert_int_equal(mxp_array_slice(&w, a, 1, e), MXP_OK);
    assert_int_equal(mxp_array_size(w), 0);
    mxp_array_free(w);
    mxp_slice bad[1] = { { 0, 1, 0 } };
    assert_int_equal(mxp_array_slice(&w, a, 1, bad), MXP_ERR_INDEX);
    assert_null(w);
    /* Index: a[:, -1] */
    assert_int_equal(mxp_array_index(&w, a, 1, -1), MXP_OK);
    assert_int_equal(mxp_array_ndim(w), 1);
    assert_true(*(float *)mxp_array_at(w, (int64_t[]){ 2 }) == 11.0f);
    mxp_array_free(w);
    assert_int_equal(mxp_array_index(&w, a, 1, 4), MXP_ERR_INDEX);
    assert_int_equal(mxp_array_index(&w, a, 2, 0), MXP_ERR_INDEX);
    /* The view keeps the memory alive after the owner is released. */
    mxp_array_free(a);
    assert_true(f32_at(v, 1, 0) == 7.0f);
    mxp_array_free(v);
}

static void test_transpose_reshape_squeeze_expand(void **state)
{
    (void)state;
    mxp_array *a = iota34(), *t = NULL, *r = NULL, *c = NULL;
    assert_int_equal(mxp_array_transpose(&t, a, NULL), MXP_OK);
    assert_true(f32_at(t, 3, 2) == 11.0f && f32_at(t, 1, 0) == 1.0f);
    assert_true(mxp_array_flags(t) & MXP_ARRAY_F_CONTIGUOUS);
    /* Reshaping the transpose to 1-d needs a copy. */
    const int64_t flat = -1;
    assert_int_equal(mxp_array_reshape(&r, t, 1, &flat), MXP_ERR_SHAPE);
    assert_non_null(strstr(mxp_last_error(), "reshape_copy"));
    assert_int_equal(mxp_array_reshape_copy(&r, t, 1, &flat), MXP_OK);
    const float *x = mxp_array_data(r);
    assert_true(x[0] == 0.0f && x[1] == 4.0f && x[2] == 8.0f && x[3] == 1.0f);
    mxp_array_free(r);
    /* A contiguous array reshapes as a view. */
    const int64_t s26[3] = { 2, 1, 6 };
    assert_int_equal(mxp_array_reshape(&r, a, 3, s26), MXP_OK);
    assert_ptr_equal(mxp_array_data(r), mxp_array_data(a));
    assert_int_equal(mxp_array_squeeze(&c, r, MXP_ALL_AXES), MXP_OK);
    assert_int_equal(mxp_array_ndim(c), 2);
    mxp_array_free(c);
    assert_int_equal(mxp_array_squeeze(&c, r, 0), MXP_ERR_SHAPE);
    assert_int_equal(mxp_array_expand_dims(&c, a, -1), MXP_OK);
    assert_int_equal(mxp_array_ndim(c), 3);
    assert_int_equal(mxp_array_shape(c)[2], 1);
    mxp_array_free(c);
    const int64_t bad[2] = { 5, -1 };
    assert_int_equal(mxp_array_reshape(&c, a, 2, bad), MXP_ERR_SHAPE);
    int perm[2] = { 0, 0 };
    assert_int_equal(mxp_array_transpose(&c, a, perm), MXP_ERR_INDEX);
    mxp_array_free(r);
    mxp_array_free(t);
    mxp_array_free(a);
}

static void test_broadcasting(void **state)
{
    (void)state;
    int nd;
    int64_t out[4];
    const int64_t s1[2] = { 3, 1 }, s2[3] = { 2, 1, 4 }, s3[1] = { 5 }, s4[2] = { 3, 4 };
    assert_int_equal(mxp_broadcast_shapes(&nd, out, 2, s1, 3, s2), MXP_OK);
    assert_int_equal(nd, 3);
    assert_true(out[0] == 2 && out[1] == 3 && out[2] == 4);
    assert_int_equal(mxp_broadcast_shapes(&nd, out, 2, s4, 1, s3), MXP_ERR_SHAPE);
    assert_non_null(strstr(mxp_last_error(), "(3,4) and (5,)"));
    mxp_array *a = iota34(), *row = NULL, *b = NULL;
    assert_int_equal(mxp_array_index(&row, a, 0, 1), MXP_OK); /* [4 5 6 7] */
    const int64_t to[3] = { 2, 3, 4 };
    assert_int_equal(mxp_array_broadcast_to(&b, row, 3, to), MXP_OK);
    assert_int_equal(mxp_array_strides(b)[0], 0);
    assert_false(mxp_array_flags(b) & MXP_ARRAY_WRITEABLE);
    assert_true(*(float *)mxp_array_at(b, (int64_t[]){ 1, 2, 3 }) == 7.0f);
    mxp_array_free(b);
    assert_int_equal(mxp_array_broadcast_to(&b, a, 1, s3), MXP_ERR_SHAPE);
    mxp_array_free(row);
    mxp_array_free(a);
}

static void test_copies_astype_and_copyto(void **state)
{
    (void)state;
    mxp_array *a = iota34(), *t = NULL, *f = NULL, *h = NULL, *d = NULL;
    assert_int_equal(mxp_array_transpose(&t, a, NULL), MXP_OK);
    assert_int_equal(mxp_array_ascontiguous(&f, t, 'C'), MXP_OK);
    assert_true(mxp_array_flags(f) & MXP_ARRAY_C_CONTIGUOUS);
    assert_true(((float *)mxp_array_data(f))[1] == 4.0f);
    mxp_array_free(f);
    assert_int_equal(mxp_array_ascontiguous(&f, t, 'F'), MXP_OK);
    assert_ptr_equal(f, t); /* already F-contiguous: the same array */
    mxp_array_free(f);
    /* astype of a strided view equals astype of its contiguous copy, also
     * with stochastic rounding (elements indexed in C order). */
    mxp_convert_opts sr = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 5 };
    mxp_array *c = NULL, *h2 = NULL;
    assert_int_equal(mxp_array_ascontiguous(&c, t, 'C'), MXP_OK);
    assert_int_equal(mxp_array_astype(&h, t, MXP_E4M3, &sr), MXP_OK);
    assert_int_equal(mxp_array_astype(&h2, c, MXP_E4M3, &sr), MXP_OK);
    assert_memory_equal(mxp_array_data(h), mxp_array_data(h2), 12);
    mxp_array_free(c);
    mxp_array_free(h2);
    /* copyto broadcasts and refuses unsafe casts when asked. */
    const int64_t shape[2] = { 3, 4 };
    assert_int_equal(mxp_array_zeros(&d, MXP_F64, 2, shape), MXP_OK);
    mxp_array *row = NULL;
    assert_int_equal(mxp_array_index(&row, a, 0, 2), MXP_OK);
    assert_int_equal(mxp_array_copyto(d, row, MXP_CASTING_SAFE, NULL), MXP_OK);
    assert_true(((double *)mxp_array_data(d))[11] == 11.0 && ((double *)mxp_array_data(d))[0] == 8.0);
    assert_int_equal(mxp_array_copyto(h, d, MXP_CASTING_SAFE, NULL), MXP_ERR_CASTING);
    assert_int_equal(mxp_array_copyto(h, d, MXP_CASTING_SAME_KIND, NULL), MXP_ERR_SHAPE); /* (4,3) vs (3,4) */
    mxp_array *b = NULL;
    assert_int_equal(mxp_array_broadcast_to(&b, row, 2, shape), MXP_OK);
    assert_int_equal(mxp_array_copyto(b, a, MXP_CASTING_UNSAFE, NULL), MXP_ERR_READONLY);
    /* Overlap: a[1:] = a[:-1] reads everything first, as NumPy. */
    mxp_slice lo[1] = { { 1, MXP_SLICE_NONE, 1 } }, hi[1] = { { MXP_SLICE_NONE, -1, 1 } };
    mxp_array *dst = NULL, *srcv = NULL;
    assert_int_equal(mxp_array_slice(&dst, a, 1, lo), MXP_OK);
    assert_int_equal(mxp_array_slice(&srcv, a, 1, hi), MXP_OK);
    assert_int_equal(mxp_array_copyto(dst, srcv, MXP_CASTING_NO, NULL), MXP_OK);
    assert_true(f32_at(a, 2, 3) == 7.0f && f32_at(a, 1, 0) == 0.0f && f32_at(a, 0, 0) == 0.0f);
    mxp_array_free(dst);
    mxp_array_free(srcv);
    mxp_array_free(b);
    mxp_array_free(row);
    mxp_array_free(d);
    mxp_array_free(h);
    mxp_array_free(t);
    mxp_array_free(a);
}

static int released;
static void count_release(void *ctx, void *data)
{
    (void)data;
    released += *(int *)ctx;
}

static void test_wrap_uses_the_callers_buffer(void **state)
{
    (void)state;
    float buf[6] = { 1, 2, 3, 4, 5, 6 };
    const int64_t shape[2] = { 2, 3 }, fstrides[2] = { 4, 8 };
    int weight = 1;
    mxp_array *a = NULL, *v = NULL;
    released = 0;
    assert_int_equal(mxp_array_wrap(&a, buf, MXP_F32, 2, shape, fstrides, false, count_release, &weight), MXP_OK);
    assert_ptr_equal(mxp_array_data(a), buf);
    assert_true(mxp_array_flags(a) & MXP_ARRAY_F_CONTIGUOUS);
    assert_true(f32_at(a, 1, 0) == 2.0f);
    assert_int_equal(mxp_array_index(&v, a, 0, 1), MXP_OK);
    mxp_array_free(a);
    assert_int_equal(released, 0); /* the view still holds it */
    mxp_array *z = NULL;
    assert_int_equal(mxp_array_zeros(&z, MXP_F32, 1, (int64_t[]){ 3 }), MXP_OK);
    assert_int_equal(mxp_array_copyto(v, z, MXP_CASTING_NO, NULL), MXP_ERR_READONLY);
    mxp_array_free(z);
    mxp_array_free(v);
    assert_int_equal(released, 1);
    assert_int_equal(mxp_array_wrap(&a, NULL, MXP_F32, 2, shape, NULL, true, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
}

static void test_bad_input_is_refused(void **state)
{
    (void)state;
    mxp_array *a = NULL;
    const int64_t neg[1] = { -1 }, huge[2] = { INT64_MAX / 2, 4 };
    assert_int_equal(mxp_array_empty(&a, MXP_F32, 1, neg), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_empty(&a, MXP_F32, 2, huge), MXP_ERR_SIZE_OVERFLOW);
    const int64_t empty_huge[2] = { 0, INT64_MAX }; /* empty, but its strides would overflow */
    assert_int_equal(mxp_array_empty(&a, MXP_U64, 2, empty_huge), MXP_ERR_SIZE_OVERFLOW);
    assert_int_equal(mxp_array_empty(&a, MXP_F32, 33, huge), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_empty(&a, (mxp_dtype)99, 1, neg), MXP_ERR_INVALID_DTYPE);
    assert_int_equal(mxp_array_arange(&a, MXP_F32, 0, 1, 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_linspace(&a, MXP_F32, 0, 1, -2, true), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_array_slice(&a, NULL, 0, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_null(a);
    assert_null(mxp_array_at(NULL, NULL));
    mxp_array_free(NULL);
}

/* ---- the allocator ---- */

static size_t custom_allocs, custom_frees;
static void *custom_alloc(void *ctx, size_t size, size_t align)
{
    (void)ctx;
    custom_allocs++;
    return aligned_alloc(align, (size + align - 1) / align * align);
}
static void custom_free(void *ctx, void *p, size_t size)
{
    (void)ctx;
    (void)size;
    custom_frees++;
    free(p);
}

static void test_allocator_statistics_alignment_and_custom(void **state)
{
    (void)state;
    mxp_memory_stats s0 = { 0 }, s1 = { 0 };
    mxp_memory_stats_reset();
    mxp_memory_stats_get(&s0);
    mxp_array *a = NULL, *b = NULL;
    const int64_t n = 1000;
    assert_int_equal(mxp_set_alignment(128), MXP_OK);
    assert_int_equal(mxp_array_zeros(&a, MXP_F32, 1, &n), MXP_OK);
    assert_int_equal((uintptr_t)mxp_array_data(a) % 128, 0);
    assert_int_equal(mxp_array_astype(&b, a, MXP_BF16, NULL), MXP_OK);
    mxp_memory_stats_get(&s1);
    assert_true(s1.current_bytes >= s0.current_bytes + 6000);
    assert_true(s1.peak_bytes >= s1.current_bytes);
    assert_int_equal(s1.bytes_converted - s0.bytes_converted, 4000);
    mxp_array_free(a);
    mxp_array_free(b);
    mxp_memory_stats_get(&s1);
    assert_int_equal(s1.current_bytes, s0.current_bytes);
    assert_int_equal(s1.allocations - s0.allocations, s1.frees - s0.frees);
    assert_int_equal(mxp_set_alignment(100), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_set_alignment(64), MXP_OK);
    mxp_allocator custom = { custom_alloc, custom_free, NULL };
    mxp_set_allocator(&custom);
    assert_int_equal(mxp_array_ones(&a, MXP_F16, 1, &n), MXP_OK);
    mxp_set_allocator(NULL); /* a is still freed by the allocator that made it */
    mxp_array_free(a);
    assert_true(custom_allocs >= 2 && custom_allocs == custom_frees);
    /* The pool reuses a freed buffer of the same size. */
    mxp_set_pool(true);
    assert_int_equal(mxp_array_ones(&a, MXP_F32, 1, &n), MXP_OK);
    mxp_array_free(a);
    mxp_memory_stats_get(&s0);
    assert_int_equal(mxp_array_ones(&a, MXP_F32, 1, &n), MXP_OK);
    mxp_memory_stats_get(&s1);
    assert_true(s1.pool_hits > s0.pool_hits);
    mxp_array_free(a);
    mxp_set_pool(false);
    mxp_memory_stats_get(&s1);
    assert_int_equal(s1.pool_bytes, 0);
}

/* A sequence of array calls; returns the first failure. */
static mxp_status workload(void)
{
    mxp_array *a = NULL, *t = NULL, *c = NULL, *h = NULL, *r = NULL;
    const int64_t shape[2] = { 5, 7 }, flat = -1;
    mxp_status st = mxp_array_random_normal(&a, MXP_F32, 2, shape, 0, 1, 1);
    if (st == MXP_OK)
        st = mxp_array_transpose(&t, a, NULL);
    if (st == MXP_OK)
        st = mxp_array_ascontiguous(&c, t, 'C');
    if (st == MXP_OK)
        st = mxp_array_astype(&h, t, MXP_BF16, NULL);
    if (st == MXP_OK)
        st = mxp_array_reshape_copy(&r, t, 1, &flat);
    if (st == MXP_OK)
        st = mxp_array_copyto(c, t, MXP_CASTING_NO, NULL);
    mxp_array_free(a);
    mxp_array_free(t);
    mxp_array_free(c);
    mxp_array_free(h);
    mxp_array_free(r);
    return st;
}

static void test_every_allocation_failure_is_reported_and_leaks_nothing(void **state)
{
    (void)state;
    assert_true(check_every_allocation_failure(workload) >= 8);
}

/* (-3,) with (1,) was broadcast to (-3,) and MXP_OK (issue 24). */
static void test_broadcast_refuses_negative_dimensions(void **state)
{
    (void)state;
    int nd = 7;
    int64_t out[4] = { 9, 9, 9, 9 };
    const int64_t neg[] = { -3 }, one[] = { 1 }, ok[] = { 2, 3 }, row[] = { 3 };
    assert_int_equal(mxp_broadcast_shapes(&nd, out, 1, neg, 1, one), MXP_ERR_SHAPE);
    assert_non_null(strstr(mxp_last_error(), "negative"));
    assert_int_equal(mxp_broadcast_shapes(&nd, out, 1, one, 1, neg), MXP_ERR_SHAPE);
    assert_int_equal(nd, 7);
    assert_int_equal(mxp_broadcast_shapes(&nd, out, 2, ok, 1, row), MXP_OK);
    assert_true(nd == 2 && out[0] == 2 && out[1] == 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_creation_functions_fill_exact_values),
        cmocka_unit_test(test_random_arrays_are_reproducible_and_distributed),
        cmocka_unit_test(test_slices_with_negative_steps_view_the_same_memory),
        cmocka_unit_test(test_transpose_reshape_squeeze_expand),
        cmocka_unit_test(test_broadcasting),
        cmocka_unit_test(test_copies_astype_and_copyto),
        cmocka_unit_test(test_wrap_uses_the_callers_buffer),
        cmocka_unit_test(test_bad_input_is_refused),
        cmocka_unit_test(test_broadcast_refuses_negative_dimensions),
        cmocka_unit_test(test_allocator_statistics_alignment_and_custom),
        cmocka_unit_test(test_every_allocation_failure_is_reported_and_leaks_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
