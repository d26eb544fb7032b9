/* .npy files that must load and save: every dtype bit for bit, 0-d and
 * empty arrays, Fortran order, views, byte orders, versions 1.0/2.0/3.0,
 * the header spellings Python allows, files on disk, allocation failures.
 * What must be refused is in test_npy_hardening.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "npy_util.h"
#include "support/alloc_failures.h"

/* Deterministic bytes: every bit pattern a dtype has is fair game (NaN
 * payloads, negative zero, e4m3's NaN), since .npy must keep bits exactly. */
static void fill_bits(mxp_array *a, uint64_t seed)
{
    unsigned char *p = mxp_array_data(a);
    const size_t n = (size_t)mxp_array_size(a) * mxp_array_itemsize(a);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = mxp_array_dtype(a) == MXP_BOOL ? (unsigned char)(seed >> 63) : (unsigned char)(seed >> 56);
    }
}

static void assert_same_array(const mxp_array *a, const mxp_array *b)
{
    assert_int_equal(mxp_array_dtype(a), mxp_array_dtype(b));
    assert_int_equal(mxp_array_ndim(a), mxp_array_ndim(b));
    for (int i = 0; i < mxp_array_ndim(a); i++)
        assert_int_equal(mxp_array_shape(a)[i], mxp_array_shape(b)[i]);
    mxp_array *ca = NULL, *cb = NULL; /* compare in C order whatever the layouts */
    assert_int_equal(mxp_array_ascontiguous(&ca, a, 'C'), MXP_OK);
    assert_int_equal(mxp_array_ascontiguous(&cb, b, 'C'), MXP_OK);
    const size_t bytes = (size_t)mxp_array_size(a) * mxp_array_itemsize(a);
    if (bytes)
        assert_memory_equal(mxp_array_data(ca), mxp_array_data(cb), bytes);
    mxp_array_free(ca);
    mxp_array_free(cb);
}

/* save_buffer then load_buffer; returns the loaded array. */
static mxp_array *round_trip(const mxp_array *a)
{
    void *buf = NULL;
    size_t size = 0;
    mxp_array *b = NULL;
    assert_int_equal(mxp_npy_save_buffer(&buf, &size, a), MXP_OK);
    assert_int_equal((size - (size_t)mxp_array_size(a) * mxp_array_itemsize(a)) % 64, 0);
    assert_int_equal(mxp_npy_load_buffer(&b, buf, size), MXP_OK);
    mxp_free(buf);
    assert_same_array(a, b);
    return b;
}

static void test_npy_round_trips_every_dtype_bit_for_bit(void **state)
{
    (void)state;
    const int64_t shape[3] = { 2, 3, 5 };
    for (int t = 1; t < MXP_DTYPE_COUNT; t++) {
        mxp_array *a = NULL, *b = NULL;
        assert_int_equal(mxp_array_empty(&a, (mxp_dtype)t, 3, shape), MXP_OK);
        fill_bits(a, (uint64_t)t);
        mxp_array_free(round_trip(a));
        /* and through a file */
        char path[64];
        snprintf(path, sizeof path, "test_npy_%s.npy", mxp_dtype_name((mxp_dtype)t));
        assert_int_equal(mxp_npy_save(path, a), MXP_OK);
        assert_int_equal(mxp_npy_load(&b, path), MXP_OK);
        assert_same_array(a, b);
        assert_true(mxp_array_flags(b) & MXP_ARRAY_C_CONTIGUOUS);
        assert_true(mxp_array_flags(b) & MXP_ARRAY_OWNDATA);
        remove(path);
        mxp_array_free(a);
        mxp_array_free(b);
    }
}

static void test_npy_saves_what_numpy_saves(void **state)
{
    (void)state;
    static const char f32_34[] = "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }"
                                 "                                                          \n";
    static const char bf16_3[] = "\x93NUMPY\x01\x00v\x00{'descr': [('bfloat16', '<u2')], 'fortran_order': False, "
                                 "'shape': (3,), }                                            \n";
    static const char u8_0d[] = "\x93NUMPY\x01\x00v\x00{'descr': '|u1', 'fortran_order': False, 'shape': (), }"
                                "                                                              \n";
    const struct { mxp_dtype dt; int ndim; int64_t shape[2]; const char *prefix; } cases[] = {
        { MXP_F32, 2, { 3, 4 }, f32_34 }, { MXP_BF16, 1, { 3 }, bf16_3 }, { MXP_U8, 0, { 0 }, u8_0d } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mxp_array *a = NULL;
        void *buf = NULL;
        size_t size = 0;
        assert_int_equal(mxp_array_zeros(&a, cases[i].dt, cases[i].ndim, cases[i].shape), MXP_OK);
        assert_int_equal(mxp_npy_save_buffer(&buf, &size, a), MXP_OK);
        assert_int_equal(size, 128 + (size_t)mxp_array_size(a) * mxp_array_itemsize(a));
        assert_memory_equal(buf, cases[i].prefix, 128);
        mxp_free(buf);
        mxp_array_free(a);
    }
}

static void test_npy_0d_and_empty_arrays_round_trip(void **state)
{
    (void)state;
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_full(&a, MXP_F64, 0, NULL, -2.5, NULL), MXP_OK);
    mxp_array *b = round_trip(a);
    assert_int_equal(mxp_array_ndim(b), 0);
    assert_true(*(double *)mxp_array_data(b) == -2.5);
    mxp_array_free(a);
    mxp_array_free(b);
    const int64_t shapes[3][3] = { { 0 }, { 3, 0, 2 }, { 0, 0, 7 } };
    const int ndims[3] = { 1, 3, 3 };
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mxp_array_empty(&a, MXP_E5M2, ndims[i], shapes[i]), MXP_OK);
        b = round_trip(a);
        assert_int_equal(mxp_array_size(b), 0);
        mxp_array_free(a);
        mxp_array_free(b);
    }
    /* an empty array needs no data bytes at all */
    b = npy_expect_ok(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (4, 0), }", NULL, 0);
    assert_int_equal(mxp_array_size(b), 0);
    mxp_array_free(b);
}

/* An array without elements is written in C order whatever its strides
 * (np.save's rule: NumPy calls it C- and F-contiguous). */
static void test_npy_empty_arrays_are_saved_in_c_order(void **state)
{
    (void)state;
    uint16_t x = 0;
    const int64_t shape[2] = { 0, 3 }, strides[2] = { 0, 0 };
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_wrap(&a, &x, MXP_BF16, 2, shape, strides, true, NULL, NULL), MXP_OK);
    void *buf = NULL;
    size_t size = 0;
    assert_int_equal(mxp_npy_save_buffer(&buf, &size, a), MXP_OK);
    npy_assert_contains((const char *)buf + 10, "'fortran_order': False, 'shape': (0, 3)");
    mxp_free(buf);
    mxp_array_free(a);
}

/* mxp_npy_descr_dtype reads a descr as the loader reads a header's. */
static void test_npy_descr_dtype(void **state)
{
    (void)state;
    static const struct {
        const char *descr;
        mxp_status st;
        mxp_dtype dt;
        bool swapped;
    } cases[] = {
        { "'<f4'", MXP_OK, MXP_F32, false },
        { "'>i8'", MXP_OK, MXP_S64, true },
        { "'|u1'", MXP_OK, MXP_U8, false },
        { "[('bfloat16', '<u2')]", MXP_OK, MXP_BF16, false },
        { "[('bfloat16', '>u2')]", MXP_OK, MXP_BF16, true },
        { " [ ( 'float8_e5m2' , '|u1' , ) , ] ", MXP_OK, MXP_E5M2, false },
        { "[('float8_e4m3fn', '|u1')]", MXP_OK, MXP_E4M3, false },
        { "'<c8'", MXP_ERR_UNSUPPORTED, 0, false },
        { "[('float32', '<f4')]", MXP_ERR_UNSUPPORTED, 0, false },
        { "[('bfloat16', '<u2'), ('x', '<u2')]", MXP_ERR_UNSUPPORTED, 0, false },
        { "[('bfloat16', '<u2', (2,))]", MXP_ERR_UNSUPPORTED, 0, false },
        { "[('bfloat16', '<f4')]", MXP_ERR_FORMAT, 0, false },
        { "[('float8_e4m3fn', '<u2')]", MXP_ERR_FORMAT, 0, false },
        { "'<f4' x", MXP_ERR_FORMAT, 0, false },
        { "<f4", MXP_ERR_FORMAT, 0, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mxp_dtype dt = MXP_DTYPE_INVALID;
        bool sw = false;
        const mxp_status st = mxp_npy_descr_dtype(&dt, &sw, cases[i].descr);
        if (st != cases[i].st)
            fail_msg("%s: %s, want %s (%s)", cases[i].descr, mxp_status_str(st), mxp_status_str(cases[i].st),
                     mxp_last_error());
        const uint16_t one = 1;
        const bool little = *(const unsigned char *)&one == 1; /* the table says what a little-endian host gets */
        const bool want = little ? cases[i].swapped : strchr(cases[i].descr, '<') != NULL;
        if (st == MXP_OK && (dt != cases[i].dt || sw != want))
            fail_msg("%s: %s, swapped %d", cases[i].descr, mxp_dtype_name(dt), (int)sw);
    }
    mxp_dtype dt;
    bool sw;
    assert_int_equal(mxp_npy_descr_dtype(&dt, &sw, "[('bfloat16', '<f4')]"), MXP_ERR_FORMAT);
    npy_assert_contains(mxp_last_error(), "npy: descr [('bfloat16', '<f4')]: field 'bfloat16' must hold the bits as u2");
    assert_int_equal(mxp_npy_descr_dtype(NULL, &sw, "'<f4'"), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_npy_descr_dtype(&dt, &sw, NULL), MXP_ERR_INVALID_ARGUMENT);
}

static void test_npy_fortran_order_is_kept_both_ways(void **state)
{
    (void)state;
    mxp_array *r = NULL, *c = NULL, *f = NULL;
    const int64_t shape[2] = { 3, 4 };
    assert_int_equal(mxp_array_arange(&r, MXP_S16, 0, 12, 1), MXP_OK);
    assert_int_equal(mxp_array_reshape(&c, r, 2, shape), MXP_OK);
    assert_int_equal(mxp_array_transpose(&f, c, NULL), MXP_OK); /* 4x3, F-contiguous only */
    assert_int_equal(mxp_array_flags(f) & (MXP_ARRAY_C_CONTIGUOUS | MXP_ARRAY_F_CONTIGUOUS), MXP_ARRAY_F_CONTIGUOUS);
    void *buf = NULL;
    size_t size = 0;
    assert_int_equal(mxp_npy_save_buffer(&buf, &size, f), MXP_OK);
    assert_non_null(strstr((const char *)buf + 10, "'fortran_order': True"));
    assert_memory_equal((char *)buf + 128, mxp_array_data(r), 24); /* the buffer as it is, no copy */
    mxp_free(buf);
    mxp_array *b = round_trip(f);
    assert_true(mxp_array_flags(b) & MXP_ARRAY_F_CONTIGUOUS);
    assert_false(mxp_array_flags(b) & MXP_ARRAY_C_CONTIGUOUS);
    assert_int_equal(*(int16_t *)mxp_array_at(b, (int64_t[]){ 3, 1 }), 7); /* f[3][1] = c[1][3] */
    mxp_array_free(b);
    mxp_array_free(f);
    mxp_array_free(c);
    mxp_array_free(r);
    /* Fortran data built by hand: bytes are column by column. */
    const uint8_t cols[6] = { 1, 4, 2, 5, 3, 6 };
    b = npy_expect_ok(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2, 3), }", cols, 6);
    assert_int_equal(*(uint8_t *)mxp_array_at(b, (int64_t[]){ 0, 2 }), 3);
    assert_int_equal(*(uint8_t *)mxp_array_at(b, (int64_t[]){ 1, 0 }), 4);
    mxp_array_free(b);
}

static void test_npy_views_are_saved_as_c_order_copies(void **state)
{
    (void)state;
    mxp_array *r = NULL, *m = NULL, *v = NULL;
    const int64_t shape[3] = { 4, 3, 5 };
    assert_int_equal(mxp_array_arange(&r, MXP_F32, 0, 60, 1), MXP_OK);
    assert_int_equal(mxp_array_reshape(&m, r, 3, shape), MXP_OK);
    mxp_slice s[3] = { { MXP_SLICE_NONE, MXP_SLICE_NONE, -2 }, MXP_SLICE_ALL, { 1, 5, 3 } };
    assert_int_equal(mxp_array_slice(&v, m, 3, s), MXP_OK); /* 2x3x2, negative stride */
    void *buf = NULL;
    size_t size = 0;
    assert_int_equal(mxp_npy_save_buffer(&buf, &size, v), MXP_OK);
    assert_non_null(strstr((const char *)buf + 10, "'fortran_order': False, 'shape': (2, 3, 2)"));
    const float first[4] = { 46, 49, 51, 54 }; /* m[3,0,1], m[3,0,4], m[3,1,1], m[3,1,4] */
    assert_memory_equal((char *)buf + 128, first, sizeof first);
    mxp_free(buf);
    mxp_array_free(round_trip(v));
    mxp_array_free(v);
    mxp_array_free(m);
    mxp_array_free(r);
}

static void test_npy_other_byte_orders_are_swapped(void **state)
{
    (void)state;
    const unsigned char f32be[8] = { 0x3f, 0x80, 0, 0, 0xc0, 0x49, 0x0f, 0xdb }; /* 1.0, -3.1415927f */
    mxp_array *a = npy_expect_ok(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f32be, 8);
    assert_true(((float *)mxp_array_data(a))[0] == 1.0f && ((float *)mxp_array_data(a))[1] == -3.14159274f);
    mxp_array_free(a);
    const unsigned char u64be[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    a = npy_expect_ok(1, "{'descr': '>u8', 'fortran_order': False, 'shape': (), }", u64be, 8);
    assert_true(*(uint64_t *)mxp_array_data(a) == 0x0102030405060708ull);
    mxp_array_free(a);
    const unsigned char bf16be[4] = { 0x3f, 0x80, 0x7f, 0xc0 }; /* 1.0, NaN */
    a = npy_expect_ok(1, "{'descr': [('bfloat16', '>u2')], 'fortran_order': False, 'shape': (2,), }", bf16be, 4);
    assert_int_equal(mxp_array_dtype(a), MXP_BF16);
    assert_int_equal(((uint16_t *)mxp_array_data(a))[0], 0x3f80);
    assert_int_equal(((uint16_t *)mxp_array_data(a))[1], 0x7fc0);
    mxp_array_free(a);
    /* '=' and no prefix: this machine's order; 1-byte types take any prefix. */
    const int16_t native[2] = { -2, 300 };
    const char *const headers[] = { "{'descr': '=i2', 'fortran_order': False, 'shape': (2,), }",
                                    "{'descr': 'i2', 'fortran_order': False, 'shape': (2,), }" };
    for (int i = 0; i < 2; i++) {
        a = npy_expect_ok(1, headers[i], native, 4);
        assert_int_equal(mxp_array_dtype(a), MXP_S16);
        assert_memory_equal(mxp_array_data(a), native, 4);
        mxp_array_free(a);
    }
    const char *const bytes[] = { "'|i1'", "'<i1'", "'>i1'", "'=i1'", "'i1'" };
    for (int i = 0; i < 5; i++) {
        char h[128];
        snprintf(h, sizeof h, "{'descr': %s, 'fortran_order': False, 'shape': (1,), }", bytes[i]);
        a = npy_expect_ok(1, h, "\x85", 1);
        assert_int_equal(*(int8_t *)mxp_array_data(a), -123);
        mxp_array_free(a);
    }
}

static void test_npy_versions_2_and_3_are_read(void **state)
{
    (void)state;
    const double x[2] = { 0.5, -0.0 };
    for (int major = 1; major <= 3; major++) {
        mxp_array *a = npy_expect_ok(major, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n", x, 16);
        assert_memory_equal(mxp_array_data(a), x, 16);
        mxp_array_free(a);
    }
    /* A Python 2 long in 1.0/2.0 headers; 3.0 never had them. */
    mxp_array *a = npy_expect_ok(2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }", x, 16);
    mxp_array_free(a);
    npy_expect_error(MXP_ERR_FORMAT, 3, "{'descr': '<f8', 'fortran_order': False, 'shape': (2L,), }", x, 16);
}

static void test_npy_header_spellings_python_allows(void **state)
{
    (void)state;
    const int32_t v[6] = { 1, 2, 3, 4, 5, 6 };
    const char *const headers[] = {
        "{'shape': (2, 3), 'fortran_order': False, 'descr': '<i4'}",
        "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2, 3)}",
        "  {  'descr' :'<i4' ,\n\t'fortran_order':False,'shape':( 2 ,3 , ) , }  \n\r ",
        "{'fortran_order': False, 'descr': '<i4', 'shape': (2,3,),}",
        "{'descr': '<i' + '4', 'fortran_order': False, 'shape': (2, 3)}",
    };
    for (int i = 0; i < 4; i++) {
        mxp_array *a = npy_expect_ok(1, headers[i], v, sizeof v);
        assert_int_equal(mxp_array_ndim(a), 2);
        assert_int_equal(mxp_array_shape(a)[1], 3);
        assert_memory_equal(mxp_array_data(a), v, sizeof v);
        mxp_array_free(a);
    }
    /* An expression is not a literal: mxp does not evaluate Python. */
    npy_expect_error(MXP_ERR_FORMAT, 1, headers[4], v, sizeof v);
    /* A tuple in the descr may have a trailing comma, and the list too. */
    mxp_array *a = npy_expect_ok(1, "{'descr': [(\"float8_e4m3fn\", '|u1',),], 'fortran_order': False, 'shape': (1,)}",
                                 "\x7e", 1);
    assert_int_equal(mxp_array_dtype(a), MXP_E4M3);
    mxp_array_free(a);
}

static void test_npy_trailing_data_is_ignored_as_numpy_does(void **state)
{
    (void)state;
    const uint16_t v[4] = { 1, 2, 0xdead, 0xbeef };
    mxp_array *a = npy_expect_ok(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }", v, sizeof v);
    assert_int_equal(mxp_array_size(a), 2);
    assert_memory_equal(mxp_array_data(a), v, 4);
    mxp_array_free(a);
}

static void test_npy_files_on_disk_and_their_errors(void **state)
{
    (void)state;
    mxp_array *a = (mxp_array *)&a;
    assert_int_equal(mxp_npy_load(&a, "no-such-dir/no-such-file.npy"), MXP_ERR_IO);
    assert_null(a);
    npy_assert_contains(mxp_last_error(), "no-such-file.npy: cannot open: No such file or directory");
    assert_int_equal(mxp_array_ones(&a, MXP_F16, 1, (int64_t[]){ 5 }), MXP_OK);
    assert_int_equal(mxp_npy_save("no-such-dir/x.npy", a), MXP_ERR_IO);
    npy_assert_contains(mxp_last_error(), "cannot create");
    /* A file cut short: the error names the path and both sizes. */
    void *buf = NULL;
    size_t size = 0;
    assert_int_equal(mxp_npy_save_buffer(&buf, &size, a), MXP_OK);
    mxp_array_free(a);
    const size_t cuts[3] = { size - 1, 100, 7 };
    const char *const says[3] = { "file has 9 data bytes, shape (5,) float16 needs 10", "ends inside the header",
                                  "ends inside the preamble" };
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen("test_npy_short.npy", "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(buf, 1, cuts[i], f), cuts[i]);
        fclose(f);
        assert_int_equal(mxp_npy_load(&a, "test_npy_short.npy"), MXP_ERR_FORMAT);
        assert_null(a);
        npy_assert_contains(mxp_last_error(), "npy: test_npy_short.npy: ");
        npy_assert_contains(mxp_last_error(), says[i]);
    }
    remove("test_npy_short.npy");
    mxp_free(buf);
    /* NULL arguments */
    assert_int_equal(mxp_npy_load(NULL, "x"), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_npy_load(&a, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_npy_load_buffer(NULL, "", 0), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_npy_load_buffer(&a, NULL, 5), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_npy_load_buffer(&a, NULL, 0), MXP_ERR_FORMAT);
    assert_int_equal(mxp_npy_save(NULL, a), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_npy_save("x.npy", NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_npy_save_buffer(&buf, &size, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_null(buf);
    assert_int_equal(mxp_npy_save_buffer(NULL, &size, a), MXP_ERR_INVALID_ARGUMENT);
}

/* Saves a view (which needs a copy) and loads it back, through memory and
 * through a file. */
static mxp_status io_workload(void)
{
    mxp_array *r = NULL, *t = NULL, *v = NULL, *b = NULL;
    void *buf = NULL;
    size_t size = 0;
    const int64_t shape[2] = { 6, 7 };
    mxp_slice s[2] = { { 1, 5, 2 }, { MXP_SLICE_NONE, MXP_SLICE_NONE, -1 } };
    mxp_status st = mxp_array_random_uniform(&r, MXP_BF16, 2, shape, -1, 1, 3);
    if (st == MXP_OK)
        st = mxp_array_slice(&v, r, 2, s);
    if (st == MXP_OK)
        st = mxp_npy_save_buffer(&buf, &size, v);
    if (st == MXP_OK)
        st = mxp_npy_load_buffer(&b, buf, size);
    mxp_array_free(b);
    b = NULL;
    if (st == MXP_OK)
        st = mxp_array_transpose(&t, r, NULL);
    if (st == MXP_OK)
        st = mxp_npy_save("test_npy_alloc.npy", t);
    if (st == MXP_OK)
        st = mxp_npy_load(&b, "test_npy_alloc.npy");
    if (st == MXP_OK)
        assert_true(mxp_array_flags(b) & MXP_ARRAY_F_CONTIGUOUS);
    mxp_array_free(b);
    mxp_free(buf);
    mxp_array_free(t);
    mxp_array_free(v);
    mxp_array_free(r);
    return st;
}

static void test_npy_every_allocation_failure_is_reported_and_leaks_nothing(void **state)
{
    (void)state;
    assert_true(check_every_allocation_failure(io_workload) >= 8);
    remove("test_npy_alloc.npy");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npy_round_trips_every_dtype_bit_for_bit),
        cmocka_unit_test(test_npy_saves_what_numpy_saves),
        cmocka_unit_test(test_npy_0d_and_empty_arrays_round_trip),
        cmocka_unit_test(test_npy_empty_arrays_are_saved_in_c_order),
        cmocka_unit_test(test_npy_descr_dtype),
        cmocka_unit_test(test_npy_fortran_order_is_kept_both_ways),
        cmocka_unit_test(test_npy_views_are_saved_as_c_order_copies),
        cmocka_unit_test(test_npy_other_byte_orders_are_swapped),
        cmocka_unit_test(test_npy_versions_2_and_3_are_read),
        cmocka_unit_test(test_npy_header_spellings_python_allows),
        cmocka_unit_test(test_npy_trailing_data_is_ignored_as_numpy_does),
        cmocka_unit_test(test_npy_files_on_disk_and_their_errors),
        cmocka_unit_test(test_npy_every_allocation_failure_is_reported_and_leaks_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
