/* Hostile arguments (test_api_hostile): array.h and io.h. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api_hostile.h"

/* Outputs go to a global: a call that wrongly succeeds leaves no leak for
 * LeakSanitizer to blame on the library. */
static mxp_array *out;
static char *text;
static size_t len;
static void *bytes;
static int ndim_out;
static int64_t shape_out[MXP_MAXDIMS + 1];
static double d;
static mxp_dtype dtype;
static bool swapped;
static char long_descr[4001];

#define S4 ((const int64_t[]){ 4 })
#define NO_TAIL
#define FULL_TAIL , 1.0, NULL
#define RANDOM_TAIL , 0.0, 1.0, 7

/* Every creation function that takes (out, dt, ndim, shape, ...). */
#define SHAPE_CASES(f, TAIL)                                                                                          \
    ERR("out NULL", f, NULL, MXP_F32, 1, S4 TAIL);                                                                    \
    ERR("dtype 9999", f, &out, BAD_DT, 1, S4 TAIL);                                                                   \
    ERR("dtype -1", f, &out, NEG_DT, 1, S4 TAIL);                                                                     \
    ERR("dtype 0", f, &out, MXP_DTYPE_INVALID, 1, S4 TAIL);                                                           \
    ERR("dtype MXP_QINT4 (no array dtype)", f, &out, MXP_QINT4, 1, S4 TAIL);                                          \
    ERR("ndim -1", f, &out, MXP_F32, -1, S4 TAIL);                                                                    \
    ERR("ndim 33 (MXP_MAXDIMS + 1)", f, &out, MXP_F32, MXP_MAXDIMS + 1, big33 TAIL);                                  \
    ERR("ndim INT_MAX", f, &out, MXP_F32, INT_MAX, big33 TAIL);                                                       \
    ERR("shape NULL, ndim 2", f, &out, MXP_F32, 2, NULL TAIL);                                                        \
    ERR("shape (-1, 3)", f, &out, MXP_F32, 2, ((const int64_t[]){ -1, 3 }) TAIL);                                     \
    ERR("shape (INT64_MIN,)", f, &out, MXP_F32, 1, ((const int64_t[]){ INT64_MIN }) TAIL);                            \
    ERR("shape (0, -1) (the product 0 hides the negative)", f, &out, MXP_F32, 2, ((const int64_t[]){ 0, -1 }) TAIL); \
    ERR("shape (INT64_MAX, INT64_MAX) (the size overflows)", f, &out, MXP_F32, 2,                                     \
        ((const int64_t[]){ INT64_MAX, INT64_MAX }) TAIL);                                                            \
    ERR("shape (INT64_MAX,) float32 (the bytes overflow)", f, &out, MXP_F32, 1,                                       \
        ((const int64_t[]){ INT64_MAX }) TAIL);                                                                       \
    ERR("shape (2^31, 2^31, 2^31) (the size overflows)", f, &out, MXP_F32, 3,                                         \
        ((const int64_t[]){ INT64_C(1) << 31, INT64_C(1) << 31, INT64_C(1) << 31 }) TAIL);                            \
    ANY("shape (0, 2^62, 2^62) (empty; the strides overflow)", f, &out, MXP_F32, 3,                                   \
        ((const int64_t[]){ 0, INT64_C(1) << 62, INT64_C(1) << 62 }) TAIL)

static void noop_release(void *ctx, void *data)
{
    (void)ctx, (void)data;
}

/* A small valid file, opened once per child (kept: the child exits). */
/* mxp_safetensors_save_made's make that always fails */
static mxp_status hostile_make(void *ctx, size_t offset, size_t nbytes, void *buf)
{
    (void)ctx, (void)offset, (void)nbytes, (void)buf;
    return MXP_ERR_IO;
}

static mxp_safetensors *small_st(void)
{
    static mxp_safetensors *st;
    static const char file[] = "\x38\0\0\0\0\0\0\0{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}  "
                               "\0\0\x80\x3f";
    if (!st && mxp_safetensors_open_buffer(&st, file, sizeof file - 1) != MXP_OK)
        abort(); /* the cases on it would test nothing */
    return st;
}

/* safetensors.h */
static void hostile_safetensors(hctx *c, const mxp_array *a)
{
    static mxp_safetensors *st;
    size_t index, nbytes;
    const char *names[] = { "w" }, *null_name[] = { NULL }, *keys[] = { "k" };
    const mxp_array *arrays[] = { a }, *null_array[] = { NULL };
    ERR("out NULL", mxp_safetensors_open, NULL, "/nonexistent/x.safetensors");
    ERR("path NULL", mxp_safetensors_open, &st, NULL);
    ERR("path \"\"", mxp_safetensors_open, &st, "");
    ERR("path missing", mxp_safetensors_open, &st, "/nonexistent/x.safetensors");
    ERR("path a directory", mxp_safetensors_open, &st, "/");
    ERR("path a character device", mxp_safetensors_open, &st, "/dev/null");
    ERR("out NULL", mxp_safetensors_open_buffer, NULL, H.buf_u8, 16);
    ERR("data NULL, size 16", mxp_safetensors_open_buffer, &st, NULL, 16);
    ERR("size 0", mxp_safetensors_open_buffer, &st, H.buf_u8, 0);
    ERR("256 bytes that are no safetensors file", mxp_safetensors_open_buffer, &st, H.buf_u8, sizeof H.buf_u8);
    if (hcase(c, "mxp_safetensors_open_buffer", "a header declaring 2^62 float32 in 100 bytes")) {
        const char *h = "{\"w\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904],\"data_offsets\":[0,4]}}";
        char buf[100] = { (char)strlen(h) };
        memcpy(buf + 8, h, strlen(h));
        hstatus(c, mxp_safetensors_open_buffer(&st, buf, 8 + strlen(h) + 4));
    }
    RUN("NULL", mxp_safetensors_close, NULL);
    VAL("st NULL", 0, mxp_safetensors_count, NULL);
    NUL("st NULL", mxp_safetensors_name, NULL, 0);
    NUL("i past the end", mxp_safetensors_name, small_st(), 1);
    NUL("i SIZE_MAX", mxp_safetensors_name, small_st(), SIZE_MAX);
    ERR("st NULL", mxp_safetensors_find, NULL, "w", &index);
    ERR("name NULL", mxp_safetensors_find, small_st(), NULL, &index);
    ERR("index NULL", mxp_safetensors_find, small_st(), "w", NULL);
    ERR("name absent", mxp_safetensors_find, small_st(), "nothing", &index);
    NUL("st NULL", mxp_safetensors_dtype_name, NULL, 0);
    NUL("i past the end", mxp_safetensors_dtype_name, small_st(), 1);
    VAL("st NULL", MXP_DTYPE_INVALID, mxp_safetensors_dtype, NULL, 0);
    VAL("i past the end", MXP_DTYPE_INVALID, mxp_safetensors_dtype, small_st(), 1);
    VAL("st NULL", -1, mxp_safetensors_ndim, NULL, 0);
    VAL("i past the end", -1, mxp_safetensors_ndim, small_st(), 1);
    NUL("st NULL", mxp_safetensors_shape, NULL, 0);
    NUL("i past the end", mxp_safetensors_shape, small_st(), 1);
    NUL("st NULL", mxp_safetensors_data, NULL, 0, &nbytes);
    NUL("i past the end, nbytes NULL", mxp_safetensors_data, small_st(), 1, NULL);
    ERR("out NULL", mxp_safetensors_read, NULL, small_st(), 0, MXP_F32, NULL);
    ERR("st NULL", mxp_safetensors_read, &out, NULL, 0, MXP_F32, NULL);
    ERR("i past the end", mxp_safetensors_read, &out, small_st(), 1, MXP_F32, NULL);
    ERR("dtype 9999", mxp_safetensors_read, &out, small_st(), 0, (mxp_dtype)9999, NULL);
    ERR("rounding 9999", mxp_safetensors_read, &out, small_st(), 0, MXP_BF16,
        &(mxp_convert_opts){ .rounding = (mxp_rounding)9999 });
    ERR("dst NULL", mxp_safetensors_read_into, NULL, small_st(), 0, NULL);
    ERR("st NULL", mxp_safetensors_read_into, H.f32_4, NULL, 0, NULL);
    ERR("i past the end", mxp_safetensors_read_into, H.f32_4, small_st(), 1, NULL);
    ERR("dst of shape (4,), the tensor's (1,)", mxp_safetensors_read_into, H.f32_4, small_st(), 0, NULL);
    ERR("dst read-only", mxp_safetensors_read_into, H.readonly_4, small_st(), 0, NULL);
    VAL("st NULL", 0, mxp_safetensors_metadata_count, NULL);
    NUL("st NULL", mxp_safetensors_metadata_key, NULL, 0);
    NUL("j past the end", mxp_safetensors_metadata_key, small_st(), 0);
    NUL("st NULL", mxp_safetensors_metadata_value, NULL, 0);
    NUL("j past the end", mxp_safetensors_metadata_value, small_st(), 0);
    NUL("st NULL", mxp_safetensors_metadata_get, NULL, "k");
    NUL("key NULL", mxp_safetensors_metadata_get, small_st(), NULL);
    ERR("path NULL", mxp_safetensors_save, NULL, 1, names, arrays, 0, NULL, NULL);
    ERR("path \"\"", mxp_safetensors_save, "", 1, names, arrays, 0, NULL, NULL);
    ERR("path in a missing directory", mxp_safetensors_save, "/nonexistent/x.safetensors", 1, names, arrays, 0, NULL,
        NULL);
    ERR("path a directory", mxp_safetensors_save, "/", 1, names, arrays, 0, NULL, NULL);
    ERR("names NULL", mxp_safetensors_save, "/nonexistent/x.safetensors", 1, NULL, arrays, 0, NULL, NULL);
    ERR("arrays NULL", mxp_safetensors_save, "/nonexistent/x.safetensors", 1, names, NULL, 0, NULL, NULL);
    ERR("a name NULL", mxp_safetensors_save, "/nonexistent/x.safetensors", 1, null_name, arrays, 0, NULL, NULL);
    ERR("an array NULL", mxp_safetensors_save, "/nonexistent/x.safetensors", 1, names, null_array, 0, NULL, NULL);
    ERR("keys NULL", mxp_safetensors_save, "/nonexistent/x.safetensors", 1, names, arrays, 1, NULL, keys);
    ERR("n SIZE_MAX", mxp_safetensors_save, "/nonexistent/x.safetensors", SIZE_MAX, names, arrays, 0, NULL, NULL);
    ERR("path NULL", mxp_safetensors_cast, NULL, small_st(), MXP_BF16, NULL, NULL, NULL);
    ERR("path \"\"", mxp_safetensors_cast, "", small_st(), MXP_BF16, NULL, NULL, NULL);
    ERR("path in a missing directory", mxp_safetensors_cast, "/nonexistent/x.safetensors", small_st(), MXP_BF16,
        NULL, NULL, NULL);
    ERR("path a directory", mxp_safetensors_cast, "/", small_st(), MXP_BF16, NULL, NULL, NULL);
    ERR("st NULL", mxp_safetensors_cast, "/nonexistent/x.safetensors", NULL, MXP_BF16, NULL, NULL, NULL);
    ERR("to int8", mxp_safetensors_cast, "/nonexistent/x.safetensors", small_st(), MXP_S8, NULL, NULL, NULL);
    ERR("to 9999", mxp_safetensors_cast, "/nonexistent/x.safetensors", small_st(), (mxp_dtype)9999, NULL, NULL,
        NULL);
    ERR("rounding 9999", mxp_safetensors_cast, "/nonexistent/x.safetensors", small_st(), MXP_BF16,
        &(mxp_convert_opts){ .rounding = (mxp_rounding)9999 }, NULL, NULL);
    static const int64_t two = 2, neg = -2;
    const mxp_safetensors_source made = { "t", MXP_F32, 1, &two, hostile_make, NULL, NULL };
    const mxp_safetensors_source made_bad[] = {
        { NULL, MXP_F32, 1, &two, hostile_make, NULL, NULL }, { "t", MXP_F32, 1, &two, NULL, NULL, NULL },
        { "t", MXP_F32, 1, NULL, hostile_make, NULL, NULL },  { "t", MXP_F32, -1, &two, hostile_make, NULL, NULL },
        { "t", MXP_F32, 1, &neg, hostile_make, NULL, NULL },  { "t", (mxp_dtype)9999, 1, &two, hostile_make, NULL, NULL },
        { "t", MXP_E2M1, 1, &(int64_t){ 1 }, hostile_make, NULL, NULL },
        { "t", MXP_F32, 1, &two, hostile_make, NULL, "F3" },
    };
    ERR("path NULL", mxp_safetensors_save_made, NULL, 1, &made, 0, NULL, NULL);
    ERR("path in a missing directory", mxp_safetensors_save_made, "/nonexistent/x.safetensors", 1, &made, 0, NULL,
        NULL);
    ERR("path a directory", mxp_safetensors_save_made, "/", 1, &made, 0, NULL, NULL);
    ERR("tensors NULL", mxp_safetensors_save_made, "/nonexistent/x.safetensors", 1, NULL, 0, NULL, NULL);
    ERR("n SIZE_MAX", mxp_safetensors_save_made, "/nonexistent/x.safetensors", SIZE_MAX, &made, 0, NULL, NULL);
    ERR("keys NULL", mxp_safetensors_save_made, "/nonexistent/x.safetensors", 1, &made, 1, NULL, keys);
    for (size_t k = 0; k < sizeof made_bad / sizeof made_bad[0]; k++)
        ERR("a name, make or shape NULL, ndim -1, an extent -2, dtype 9999, one float4, dtype_name F3",
            mxp_safetensors_save_made,
            "/nonexistent/x.safetensors", 1, &made_bad[k], 0, NULL, NULL);
    ERR("make fails", mxp_safetensors_save_made, "/tmp/mxp-hostile-made.safetensors", 1, &made, 0, NULL, NULL);
    ERR("data NULL", mxp_safetensors_save_buffer, NULL, &len, 1, names, arrays, 0, NULL, NULL);
    ERR("size NULL", mxp_safetensors_save_buffer, &bytes, NULL, 1, names, arrays, 0, NULL, NULL);
    ERR("values NULL", mxp_safetensors_save_buffer, &bytes, &len, 1, names, arrays, 1, keys, NULL);
    ERR("a value NULL", mxp_safetensors_save_buffer, &bytes, &len, 1, names, arrays, 1, keys, null_name);
    ERR("n SIZE_MAX, names NULL", mxp_safetensors_save_buffer, &bytes, &len, SIZE_MAX, NULL, arrays, 0, NULL, NULL);
}

void hostile_array(hctx *c)
{
    static const int64_t big33[MXP_MAXDIMS + 1] = { 1 };
    const mxp_convert_opts bad_round = { .rounding = (mxp_rounding)9999 };
    const mxp_array *a = H.f32_23;
    float *f = H.buf_f32;
    memset(long_descr, '[', sizeof long_descr - 1);

    /* properties */
    RUN("a NULL", mxp_array_free, NULL);
    VAL("a NULL", MXP_DTYPE_INVALID, mxp_array_dtype, NULL);
    VAL("a NULL", 0, mxp_array_ndim, NULL);
    NUL("a NULL", mxp_array_shape, NULL);
    NUL("a NULL", mxp_array_strides, NULL);
    VAL("a NULL", 0, mxp_array_size, NULL);
    VAL("a NULL", 0, mxp_array_itemsize, NULL);
    NUL("a NULL", mxp_array_data, NULL);
    VAL("a NULL", 0, mxp_array_flags, NULL);
    NUL("a NULL", mxp_array_base, NULL);
    NUL("a NULL", mxp_array_at, NULL, ((const int64_t[]){ 0, 0 }));
    NUL("idx NULL for a 2-d array", mxp_array_at, a, NULL);
    NUL("idx (2, 0) of (2, 3)", mxp_array_at, a, ((const int64_t[]){ 2, 0 }));
    NUL("idx (0, -4) of (2, 3)", mxp_array_at, a, ((const int64_t[]){ 0, -4 }));
    NUL("idx (INT64_MIN, 0)", mxp_array_at, a, ((const int64_t[]){ INT64_MIN, 0 }));
    NUL("idx (INT64_MAX, 0)", mxp_array_at, a, ((const int64_t[]){ INT64_MAX, 0 }));
    ERR("a NULL", mxp_array_get_f64, NULL, ((const int64_t[]){ 0, 0 }), &d);
    ERR("idx NULL for a 2-d array", mxp_array_get_f64, a, NULL, &d);
    ERR("out NULL", mxp_array_get_f64, a, ((const int64_t[]){ 0, 0 }), NULL);
    ERR("idx (0, 3) of (2, 3)", mxp_array_get_f64, a, ((const int64_t[]){ 0, 3 }), &d);
    ERR("idx (INT64_MIN, 0)", mxp_array_get_f64, a, ((const int64_t[]){ INT64_MIN, 0 }), &d);

    /* printing */
    ERR("out NULL", mxp_array_format, NULL, &len, a, NULL);
    ERR("a NULL", mxp_array_format, &text, &len, NULL, NULL);
    ERR("precision 41", mxp_array_format, &text, &len, a, &(mxp_print_opts){ .precision = 41 });
    ERR("precision -2", mxp_array_format, &text, &len, a, &(mxp_print_opts){ .precision = -2 });
    ERR("precision INT_MIN", mxp_array_format, &text, &len, a, &(mxp_print_opts){ .precision = INT_MIN });
    ERR("edgeitems 1001", mxp_array_format, &text, &len, a, &(mxp_print_opts){ .edgeitems = 1001 });
    ERR("edgeitems -1", mxp_array_format, &text, &len, a, &(mxp_print_opts){ .edgeitems = -1 });
    ERR("threshold -1", mxp_array_format, &text, &len, a, &(mxp_print_opts){ .threshold = -1 });
    ERR("linewidth -1", mxp_array_format, &text, &len, a, &(mxp_print_opts){ .linewidth = -1 });
    ERR("f NULL", mxp_array_fprint, NULL, a, NULL);
    ERR("a NULL", mxp_array_fprint, stdout, NULL, NULL);
    ERR("precision 41", mxp_array_fprint, stdout, a, &(mxp_print_opts){ .precision = 41 });
    ERR("f opened for reading (the write fails)", mxp_array_fprint, stdin, a, NULL);

    /* creation */
    SHAPE_CASES(mxp_array_empty, NO_TAIL);
    SHAPE_CASES(mxp_array_zeros, NO_TAIL);
    SHAPE_CASES(mxp_array_ones, NO_TAIL);
    SHAPE_CASES(mxp_array_full, FULL_TAIL);
    ERR("rounding 9999", mxp_array_full, &out, MXP_BF16, 1, S4, 0.1, &bad_round);
    SHAPE_CASES(mxp_array_random_uniform, RANDOM_TAIL);
    ERR("low NaN", mxp_array_random_uniform, &out, MXP_F32, 1, S4, NAN, 1.0, 7);
    ERR("high +inf", mxp_array_random_uniform, &out, MXP_F32, 1, S4, 0.0, INFINITY, 7);
    SHAPE_CASES(mxp_array_random_normal, RANDOM_TAIL);
    ERR("stddev -1", mxp_array_random_normal, &out, MXP_F32, 1, S4, 0.0, -1.0, 7);
    ERR("stddev NaN", mxp_array_random_normal, &out, MXP_F32, 1, S4, 0.0, NAN, 7);
    ERR("mean +inf", mxp_array_random_normal, &out, MXP_F32, 1, S4, INFINITY, 1.0, 7);
    ERR("out NULL", mxp_array_scalar, NULL, 1.0, MXP_F32);
    ERR("dtype 9999", mxp_array_scalar, &out, 1.0, BAD_DT);
    ERR("dtype -1", mxp_array_scalar, &out, 1.0, NEG_DT);
    ERR("out NULL", mxp_array_arange, NULL, MXP_F32, 0, 4, 1);
    ERR("dtype 9999", mxp_array_arange, &out, BAD_DT, 0, 4, 1);
    ERR("step 0", mxp_array_arange, &out, MXP_F32, 0, 4, 0);
    ERR("step NaN", mxp_array_arange, &out, MXP_F32, 0, 4, NAN);
    ERR("start NaN", mxp_array_arange, &out, MXP_F32, NAN, 4, 1);
    ERR("stop +inf", mxp_array_arange, &out, MXP_F32, 0, INFINITY, 1);
    ERR("1e300 elements (the count overflows)", mxp_array_arange, &out, MXP_F32, 0, 1e300, 1);
    ERR("2^62 elements of float32 (the bytes overflow)", mxp_array_arange, &out, MXP_F32, 0, 0x1p62, 1);
    ERR("out NULL", mxp_array_linspace, NULL, MXP_F32, 0, 1, 5, true);
    ERR("dtype 9999", mxp_array_linspace, &out, BAD_DT, 0, 1, 5, true);
    ERR("num -1", mxp_array_linspace, &out, MXP_F32, 0, 1, -1, true);
    ERR("num INT64_MIN", mxp_array_linspace, &out, MXP_F32, 0, 1, INT64_MIN, true);
    ERR("num INT64_MAX (the bytes overflow)", mxp_array_linspace, &out, MXP_F32, 0, 1, INT64_MAX, true);
    ERR("out NULL", mxp_array_eye, NULL, MXP_F32, 2, 2, 0);
    ERR("dtype 9999", mxp_array_eye, &out, BAD_DT, 2, 2, 0);
    ERR("n -1", mxp_array_eye, &out, MXP_F32, -1, 2, 0);
    ERR("m -1", mxp_array_eye, &out, MXP_F32, 2, -1, 0);
    ERR("n = m = INT64_MAX (the size overflows)", mxp_array_eye, &out, MXP_F32, INT64_MAX, INT64_MAX, 0);
    ERR("n = m = 2^32 (the bytes overflow)", mxp_array_eye, &out, MXP_F64, INT64_C(1) << 32, INT64_C(1) << 32, 0);
    ANY("k INT64_MIN (no ones)", mxp_array_eye, &out, MXP_F32, 2, 2, INT64_MIN);
    ANY("k INT64_MAX (no ones)", mxp_array_eye, &out, MXP_F32, 2, 2, INT64_MAX);
    ERR("out NULL", mxp_array_wrap, NULL, f, MXP_F32, 1, S4, NULL, true, NULL, NULL);
    ERR("data NULL, shape (4,)", mxp_array_wrap, &out, NULL, MXP_F32, 1, S4, NULL, true, NULL, NULL);
    ERR("dtype 9999", mxp_array_wrap, &out, f, BAD_DT, 1, S4, NULL, true, NULL, NULL);
    ERR("ndim -1", mxp_array_wrap, &out, f, MXP_F32, -1, S4, NULL, true, NULL, NULL);
    ERR("ndim 33", mxp_array_wrap, &out, f, MXP_F32, MXP_MAXDIMS + 1, big33, NULL, true, NULL, NULL);
    ERR("shape NULL, ndim 1", mxp_array_wrap, &out, f, MXP_F32, 1, NULL, NULL, true, NULL, NULL);
    ERR("shape (-4,)", mxp_array_wrap, &out, f, MXP_F32, 1, ((const int64_t[]){ -4 }), NULL, true, noop_release,
        NULL);
    ERR("shape (INT64_MAX, 2) (C strides overflow)", mxp_array_wrap, &out, f, MXP_F32, 2,
        ((const int64_t[]){ INT64_MAX, 2 }), NULL, true, NULL, NULL);
    ERR("strides (INT64_MIN,), shape (2,)", mxp_array_wrap, &out, f, MXP_F32, 1, ((const int64_t[]){ 2 }),
        ((const int64_t[]){ INT64_MIN }), true, NULL, NULL);

    /* views */
    ERR("out NULL", mxp_array_slice, NULL, a, 1, &MXP_SLICE_ALL);
    ERR("a NULL", mxp_array_slice, &out, NULL, 1, &MXP_SLICE_ALL);
    ERR("nslices -1", mxp_array_slice, &out, a, -1, &MXP_SLICE_ALL);
    ERR("nslices 3 for a 2-d array", mxp_array_slice, &out, a, 3,
        ((const mxp_slice[]){ MXP_SLICE_ALL, MXP_SLICE_ALL, MXP_SLICE_ALL }));
    ERR("slices NULL, nslices 1", mxp_array_slice, &out, a, 1, NULL);
    ERR("step 0", mxp_array_slice, &out, a, 1, &(mxp_slice){ 0, 2, 0 });
    ERR("step INT64_MIN", mxp_array_slice, &out, a, 1, &(mxp_slice){ 0, 2, INT64_MIN });
    ANY("start INT64_MAX, stop INT64_MIN + 1, step -1 (clipped)", mxp_array_slice, &out, a, 1,
        &(mxp_slice){ INT64_MAX, INT64_MIN + 1, -1 });
    ERR("out NULL", mxp_array_index, NULL, a, 0, 0);
    ERR("a NULL", mxp_array_index, &out, NULL, 0, 0);
    ERR("axis 2 of 2", mxp_array_index, &out, a, 2, 0);
    ERR("axis -3 of 2", mxp_array_index, &out, a, -3, 0);
    ERR("axis INT_MIN", mxp_array_index, &out, a, INT_MIN, 0);
    ERR("i 2 of 2", mxp_array_index, &out, a, 0, 2);
    ERR("i INT64_MIN", mxp_array_index, &out, a, 0, INT64_MIN);
    ERR("a 0-d", mxp_array_index, &out, H.f32_0d, 0, 0);
    ERR("out NULL", mxp_array_transpose, NULL, a, NULL);
    ERR("a NULL", mxp_array_transpose, &out, NULL, NULL);
    ERR("perm (0, 0)", mxp_array_transpose, &out, a, ((const int[]){ 0, 0 }));
    ERR("perm (0, 2)", mxp_array_transpose, &out, a, ((const int[]){ 0, 2 }));
    ERR("perm (INT_MIN, 0)", mxp_array_transpose, &out, a, ((const int[]){ INT_MIN, 0 }));
    ERR("out NULL", mxp_array_reshape, NULL, a, 1, ((const int64_t[]){ 6 }));
    ERR("a NULL", mxp_array_reshape, &out, NULL, 1, ((const int64_t[]){ 6 }));
    ERR("ndim -1", mxp_array_reshape, &out, a, -1, ((const int64_t[]){ 6 }));
    ERR("ndim 33", mxp_array_reshape, &out, a, MXP_MAXDIMS + 1, big33);
    ERR("shape NULL, ndim 1", mxp_array_reshape, &out, a, 1, NULL);
    ERR("shape (-1, -1)", mxp_array_reshape, &out, a, 2, ((const int64_t[]){ -1, -1 }));
    ERR("shape (-2, 3)", mxp_array_reshape, &out, a, 2, ((const int64_t[]){ -2, 3 }));
    ERR("shape (7,) for 6 elements", mxp_array_reshape, &out, a, 1, ((const int64_t[]){ 7 }));
    ERR("shape (0, -1) for 6 elements", mxp_array_reshape, &out, a, 2, ((const int64_t[]){ 0, -1 }));
    ERR("shape (INT64_MAX, 2) (the size overflows)", mxp_array_reshape, &out, a, 2,
        ((const int64_t[]){ INT64_MAX, 2 }));
    ERR("shape (2^32, 2^32, -1) (the size overflows)", mxp_array_reshape, &out, a, 3,
        ((const int64_t[]){ INT64_C(1) << 32, INT64_C(1) << 32, -1 }));
    ERR("out NULL", mxp_array_reshape_copy, NULL, a, 1, ((const int64_t[]){ 6 }));
    ERR("a NULL", mxp_array_reshape_copy, &out, NULL, 1, ((const int64_t[]){ 6 }));
    ERR("ndim -1", mxp_array_reshape_copy, &out, a, -1, ((const int64_t[]){ 6 }));
    ERR("shape NULL, ndim 1", mxp_array_reshape_copy, &out, a, 1, NULL);
    ERR("shape (-1, -1)", mxp_array_reshape_copy, &out, a, 2, ((const int64_t[]){ -1, -1 }));
    ERR("shape (7,) for 6 elements", mxp_array_reshape_copy, &out, a, 1, ((const int64_t[]){ 7 }));
    ERR("shape (INT64_MAX, 2)", mxp_array_reshape_copy, &out, a, 2, ((const int64_t[]){ INT64_MAX, 2 }));
    ERR("out NULL", mxp_array_squeeze, NULL, a, MXP_ALL_AXES);
    ERR("a NULL", mxp_array_squeeze, &out, NULL, MXP_ALL_AXES);
    ERR("axis 0 of size 2", mxp_array_squeeze, &out, a, 0);
    ERR("axis 5 of 2", mxp_array_squeeze, &out, a, 5);
    ERR("axis INT_MIN + 1", mxp_array_squeeze, &out, a, INT_MIN + 1);
    ERR("out NULL", mxp_array_expand_dims, NULL, a, 0);
    ERR("a NULL", mxp_array_expand_dims, &out, NULL, 0);
    ERR("axis 4 of 3", mxp_array_expand_dims, &out, a, 4);
    ERR("axis -4 of 3", mxp_array_expand_dims, &out, a, -4);
    ERR("axis INT_MIN", mxp_array_expand_dims, &out, a, INT_MIN);
    ERR("axis INT_MAX", mxp_array_expand_dims, &out, a, INT_MAX);
    ERR("out NULL", mxp_array_broadcast_to, NULL, a, 2, ((const int64_t[]){ 2, 3 }));
    ERR("a NULL", mxp_array_broadcast_to, &out, NULL, 2, ((const int64_t[]){ 2, 3 }));
    ERR("ndim -1", mxp_array_broadcast_to, &out, a, -1, ((const int64_t[]){ 2, 3 }));
    ERR("ndim 33", mxp_array_broadcast_to, &out, a, MXP_MAXDIMS + 1, big33);
    ERR("shape NULL, ndim 2", mxp_array_broadcast_to, &out, a, 2, NULL);
    ERR("shape (3, 3) from (2, 3)", mxp_array_broadcast_to, &out, a, 2, ((const int64_t[]){ 3, 3 }));
    ERR("shape (-1, 3)", mxp_array_broadcast_to, &out, a, 2, ((const int64_t[]){ -1, 3 }));
    ERR("shape (3,) from (2, 3) (fewer dims)", mxp_array_broadcast_to, &out, a, 1, ((const int64_t[]){ 3 }));
    ERR("shape (-1, 2, 3)", mxp_array_broadcast_to, &out, a, 3, ((const int64_t[]){ -1, 2, 3 }));
    ERR("ndim_out NULL", mxp_broadcast_shapes, NULL, shape_out, 1, S4, 1, S4);
    ERR("shape_out NULL", mxp_broadcast_shapes, &ndim_out, NULL, 1, S4, 1, S4);
    ERR("ndim_a -1", mxp_broadcast_shapes, &ndim_out, shape_out, -1, S4, 1, S4);
    ERR("ndim_b 33", mxp_broadcast_shapes, &ndim_out, shape_out, 1, S4, MXP_MAXDIMS + 1, big33);
    ERR("shape_a NULL, ndim_a 1", mxp_broadcast_shapes, &ndim_out, shape_out, 1, NULL, 1, S4);
    ERR("shape_b NULL, ndim_b 1", mxp_broadcast_shapes, &ndim_out, shape_out, 1, S4, 1, NULL);
    ERR("(4,) and (3,)", mxp_broadcast_shapes, &ndim_out, shape_out, 1, S4, 1, ((const int64_t[]){ 3 }));
    ERR("(-1,) and (1,)", mxp_broadcast_shapes, &ndim_out, shape_out, 1, ((const int64_t[]){ -1 }), 1,
        ((const int64_t[]){ 1 }));

    /* copies */
    ERR("out NULL", mxp_array_ascontiguous, NULL, a, 'C');
    ERR("a NULL", mxp_array_ascontiguous, &out, NULL, 'C');
    ERR("order 'X'", mxp_array_ascontiguous, &out, a, 'X');
    ERR("order 0", mxp_array_ascontiguous, &out, a, 0);
    ERR("out NULL", mxp_array_astype, NULL, a, MXP_F64, NULL);
    ERR("a NULL", mxp_array_astype, &out, NULL, MXP_F64, NULL);
    ERR("dtype 9999", mxp_array_astype, &out, a, BAD_DT, NULL);
    ERR("dtype MXP_QUINT4", mxp_array_astype, &out, a, MXP_QUINT4, NULL);
    ERR("rounding 9999", mxp_array_astype, &out, a, MXP_BF16, &bad_round);
    ERR("dst NULL", mxp_array_copyto, NULL, H.f32_4, MXP_CASTING_UNSAFE, NULL);
    ERR("src NULL", mxp_array_copyto, H.f32_4, NULL, MXP_CASTING_UNSAFE, NULL);
    ERR("casting 9999", mxp_array_copyto, H.f32_4, H.f32_4, (mxp_casting)9999, NULL);
    ERR("casting -1", mxp_array_copyto, H.f32_4, H.f32_4, (mxp_casting)-1, NULL);
    ERR("float64 into int8, SAFE", mxp_array_copyto, H.s8_4, H.f64_4, MXP_CASTING_SAFE, NULL);
    ERR("dst read-only", mxp_array_copyto, H.readonly_4, H.f32_4, MXP_CASTING_UNSAFE, NULL);
    ERR("(2, 3) into (4,)", mxp_array_copyto, H.f32_4, H.f32_23, MXP_CASTING_UNSAFE, NULL);
    ERR("rounding 9999", mxp_array_copyto, H.f32_4, H.f64_4, MXP_CASTING_UNSAFE, &bad_round);

    /* io.h: every path that could be written is one that cannot be */
    ERR("out NULL", mxp_npy_load, NULL, "/nonexistent/x.npy");
    ERR("path NULL", mxp_npy_load, &out, NULL);
    ERR("path \"\"", mxp_npy_load, &out, "");
    ERR("path missing", mxp_npy_load, &out, "/nonexistent/x.npy");
    ERR("path a directory", mxp_npy_load, &out, "/");
    ERR("dt NULL", mxp_npy_descr_dtype, NULL, &swapped, "'<f4'");
    ERR("swapped NULL", mxp_npy_descr_dtype, &dtype, NULL, "'<f4'");
    ERR("descr NULL", mxp_npy_descr_dtype, &dtype, &swapped, NULL);
    ERR("descr empty", mxp_npy_descr_dtype, &dtype, &swapped, "");
    ERR("descr '<c8' (complex)", mxp_npy_descr_dtype, &dtype, &swapped, "'<c8'");
    ERR("descr with a control byte", mxp_npy_descr_dtype, &dtype, &swapped, "'<f4'\x01");
    ERR("descr [ unclosed", mxp_npy_descr_dtype, &dtype, &swapped, "[('bfloat16', '<u2')");
    ERR("descr 4000 '['", mxp_npy_descr_dtype, &dtype, &swapped, long_descr);
    ERR("out NULL", mxp_npy_load_buffer, NULL, H.buf_u8, 16);
    ERR("data NULL, size 16", mxp_npy_load_buffer, &out, NULL, 16);
    ERR("size 0", mxp_npy_load_buffer, &out, H.buf_u8, 0);
    ERR("256 bytes that are no .npy file", mxp_npy_load_buffer, &out, H.buf_u8, sizeof H.buf_u8);
    if (hcase(c, "mxp_npy_load_buffer", "a header declaring shape (2^62,) float32 in 128 bytes")) {
        char buf[128];
        const char *h = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }";
        memset(buf, ' ', sizeof buf);
        memcpy(buf, "\x93NUMPY\x01\x00\x76\x00", 10);
        memcpy(buf + 10, h, strlen(h));
        buf[127] = '\n';
        hstatus(c, mxp_npy_load_buffer(&out, buf, sizeof buf));
    }
    ERR("path NULL", mxp_npy_save, NULL, a);
    ERR("a NULL", mxp_npy_save, "/nonexistent/x.npy", NULL);
    ERR("path \"\"", mxp_npy_save, "", a);
    ERR("path in a missing directory", mxp_npy_save, "/nonexistent/x.npy", a);
    ERR("path a directory", mxp_npy_save, "/", a);
    ERR("data NULL", mxp_npy_save_buffer, NULL, &len, a);
    ERR("size NULL", mxp_npy_save_buffer, &bytes, NULL, a);
    ERR("a NULL", mxp_npy_save_buffer, &bytes, &len, NULL);
    ERR("path NULL", mxp_file_write, NULL, H.buf_u8, 4);
    ERR("data NULL, size 4", mxp_file_write, "/nonexistent/x.bin", NULL, 4);
    ERR("path \"\"", mxp_file_write, "", H.buf_u8, 4);
    ERR("path in a missing directory", mxp_file_write, "/nonexistent/x.bin", H.buf_u8, 4);
    ERR("path a directory", mxp_file_write, "/", H.buf_u8, 4);
    hostile_safetensors(c, a);
}
