/* safetensors files (docs/safetensors.md): the library's own byte vectors
 * written exactly, a round trip of every mxp dtype (views, conversions,
 * metadata, a non-contiguous array), files on disk, and one test per rule
 * of "What is refused", each checking the status and the sentence.  The
 * comparison with the safetensors library itself is
 * tests/python/test_safetensors_peer.py. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mxp.h"

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("\"%s\" does not contain \"%s\"", text, part);
}

/* A file: the 8-byte length, the header text, then data bytes. */
static size_t build(unsigned char *buf, size_t cap, const char *header, const void *data, size_t n)
{
    const size_t h = strlen(header);
    assert_true(8 + h + n <= cap);
    for (int b = 0; b < 8; b++)
        buf[b] = (unsigned char)((uint64_t)h >> (8 * b));
    memcpy(buf + 8, header, h);
    if (n)
        memcpy(buf + 8 + h, data, n);
    return 8 + h + n;
}

/* The safetensors library's own vectors (its Rust tests): one float32
 * tensor "attn.0" of shape [1, 2, 3]; no tensors; no tensors with metadata. */
static void test_safetensors_writes_the_library_bytes(void **state)
{
    (void)state;
    static const unsigned char want[] = {
        64,  0,  0,   0,   0,   0,   0,   0,   123, 34,  97,  116, 116, 110, 46,  48,  34,  58,  123, 34,  100,
        116, 121, 112, 101, 34,  58,  34,  70,  51,  50,  34,  44,  34,  115, 104, 97,  112, 101, 34,  58,  91,
        49,  44,  50,  44,  51,  93,  44,  34,  100, 97,  116, 97,  95,  111, 102, 102, 115, 101, 116, 115, 34,
        58,  91,  48,  44,  50,  52,  93,  125, 125, 0,   0,   0,   0,   0,   0,   128, 63,  0,   0,   0,   64,
        0,   0,   64,  64,  0,   0,   128, 64,  0,   0,   160, 64
    };
    const float v[6] = { 0, 1, 2, 3, 4, 5 };
    const int64_t shape[3] = { 1, 2, 3 };
    mxp_array *a;
    assert_int_equal(mxp_array_empty(&a, MXP_F32, 3, shape), MXP_OK);
    memcpy(mxp_array_data(a), v, sizeof v);
    const char *names[] = { "attn.0" };
    const mxp_array *arrays[] = { a };
    void *buf;
    size_t size;
    assert_int_equal(mxp_safetensors_save_buffer(&buf, &size, 1, names, arrays, 0, NULL, NULL), MXP_OK);
    assert_int_equal(size, sizeof want);
    assert_memory_equal(buf, want, sizeof want);
    mxp_free(buf);
    mxp_array_free(a);

    static const unsigned char empty[] = { 8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' ' };
    assert_int_equal(mxp_safetensors_save_buffer(&buf, &size, 0, NULL, NULL, 0, NULL, NULL), MXP_OK);
    assert_int_equal(size, sizeof empty);
    assert_memory_equal(buf, empty, sizeof empty);
    mxp_safetensors *st;
    assert_int_equal(mxp_safetensors_open_buffer(&st, buf, size), MXP_OK); /* "{}": no tensors, no metadata */
    assert_int_equal(mxp_safetensors_count(st), 0);
    assert_int_equal(mxp_safetensors_metadata_count(st), 0);
    mxp_safetensors_close(st);
    mxp_free(buf);

    const char *keys[] = { "framework" }, *values[] = { "pt" };
    const char *text = "{\"__metadata__\":{\"framework\":\"pt\"}}     ";
    assert_int_equal(mxp_safetensors_save_buffer(&buf, &size, 0, NULL, NULL, 1, keys, values), MXP_OK);
    assert_int_equal(size, 8 + 40);
    assert_int_equal(((unsigned char *)buf)[0], 40);
    assert_memory_equal((char *)buf + 8, text, 40);
    assert_int_equal(mxp_safetensors_open_buffer(&st, buf, size), MXP_OK);
    assert_int_equal(mxp_safetensors_count(st), 0);
    assert_string_equal(mxp_safetensors_metadata_get(st, "framework"), "pt");
    mxp_safetensors_close(st);
    mxp_free(buf);
}

/* Every mxp dtype, a scalar, an empty tensor and a transposed view go out
 * and come back: names in the library's order, views of the same bytes,
 * shapes, metadata with escapes and non-ASCII text, conversions on read. */
static void test_safetensors_round_trip_of_every_dtype(void **state)
{
    (void)state;
    /* the dtypes safetensors has codes for (F4 and F6 are stored packed:
     * not read or written by mxp yet) */
    const mxp_dtype types[] = { MXP_BOOL, MXP_S8, MXP_S16, MXP_S32, MXP_S64, MXP_U8, MXP_U16,
                                MXP_U32, MXP_U64, MXP_F16, MXP_BF16, MXP_F32, MXP_F64,
                                MXP_E4M3, MXP_E5M2, MXP_E8M0 };
    enum { N = sizeof types / sizeof types[0] };
    char names_buf[N + 3][24];
    const char *names[N + 3];
    const mxp_array *arrays[N + 3];
    mxp_array *own[N + 3];
    const int64_t shape[2] = { 3, 5 };
    int f32_at = -1, f64_at = -1;
    for (int i = 0; i < N; i++) {
        assert_int_equal(mxp_array_arange(&own[i], types[i], 1, 16, 1), MXP_OK);
        mxp_array *r;
        assert_int_equal(mxp_array_reshape(&r, own[i], 2, shape), MXP_OK);
        mxp_array_free(own[i]);
        own[i] = r;
        snprintf(names_buf[i], sizeof names_buf[0], "t_%s", mxp_dtype_name(types[i]));
        f32_at = types[i] == MXP_F32 ? i : f32_at;
        f64_at = types[i] == MXP_F64 ? i : f64_at;
    }
    const int64_t none[1] = { 0 };
    assert_int_equal(mxp_array_scalar(&own[N], -2.5, MXP_F64), MXP_OK);
    assert_int_equal(mxp_array_empty(&own[N + 1], MXP_S16, 1, none), MXP_OK);
    assert_int_equal(mxp_array_transpose(&own[N + 2], own[f32_at], NULL), MXP_OK); /* 5 x 3, not contiguous */
    snprintf(names_buf[N], sizeof names_buf[0], "scalar");
    snprintf(names_buf[N + 1], sizeof names_buf[0], "empty");
    snprintf(names_buf[N + 2], sizeof names_buf[0], "f32 \"T\"\n");
    for (int i = 0; i < N + 3; i++)
        names[i] = names_buf[i], arrays[i] = own[i];
    const char *keys[] = { "format", "note" }, *values[] = { "mxp", "tab\there \\ \xc3\xa9 \x01" };
    void *buf;
    size_t size;
    assert_int_equal(mxp_safetensors_save_buffer(&buf, &size, N + 3, names, arrays, 2, keys, values), MXP_OK);
    mxp_safetensors *st;
    assert_int_equal(mxp_safetensors_open_buffer(&st, buf, size), MXP_OK);
    assert_int_equal(mxp_safetensors_count(st), N + 3);
    /* widest first (u64 before i64 before f64 ...), bool last */
    assert_string_equal(mxp_safetensors_name(st, 0), "t_uint64");
    assert_string_equal(mxp_safetensors_dtype_name(st, 0), "U64");
    assert_string_equal(mxp_safetensors_name(st, N + 2), "t_bool");
    assert_string_equal(mxp_safetensors_metadata_key(st, 1), "note");
    assert_string_equal(mxp_safetensors_metadata_value(st, 1), values[1]);
    assert_null(mxp_safetensors_metadata_get(st, "absent"));
    for (int i = 0; i < N + 3; i++) {
        size_t at, nbytes;
        assert_int_equal(mxp_safetensors_find(st, names[i], &at), MXP_OK);
        mxp_array *c;
        assert_int_equal(mxp_array_ascontiguous(&c, arrays[i], 'C'), MXP_OK);
        assert_int_equal(mxp_safetensors_dtype(st, at), mxp_array_dtype(c));
        assert_int_equal(mxp_safetensors_ndim(st, at), mxp_array_ndim(c));
        for (int k = 0; k < mxp_array_ndim(c); k++)
            assert_int_equal(mxp_safetensors_shape(st, at)[k], mxp_array_shape(c)[k]);
        const void *view = mxp_safetensors_data(st, at, &nbytes);
        assert_int_equal(nbytes, (size_t)mxp_array_size(c) * mxp_array_itemsize(c));
        if (nbytes)
            assert_memory_equal(view, mxp_array_data(c), nbytes);
        mxp_array *r;
        assert_int_equal(mxp_safetensors_read(&r, st, at, MXP_DTYPE_INVALID, NULL), MXP_OK);
        if (nbytes)
            assert_memory_equal(mxp_array_data(r), mxp_array_data(c), nbytes);
        mxp_array_free(r);
        mxp_array_free(c);
    }
    /* read converting: float64 -> bfloat16 as mxp_convert rounds, stochastic included */
    size_t at;
    assert_int_equal(mxp_safetensors_find(st, "t_float64", &at), MXP_OK);
    mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 7 };
    mxp_array *r, *want;
    assert_int_equal(mxp_safetensors_read(&r, st, at, MXP_BF16, &o), MXP_OK);
    assert_int_equal(mxp_array_astype(&want, own[f64_at], MXP_BF16, &o), MXP_OK);
    assert_int_equal(mxp_array_dtype(r), MXP_BF16);
    assert_memory_equal(mxp_array_data(r), mxp_array_data(want), 15 * 2);
    mxp_array_free(r);
    /* into an existing array: the same bits; a strided, a read-only or a
     * wrongly shaped one refused */
    assert_int_equal(mxp_array_zeros(&r, MXP_BF16, 2, shape), MXP_OK);
    assert_int_equal(mxp_safetensors_read_into(r, st, at, &o), MXP_OK);
    assert_memory_equal(mxp_array_data(r), mxp_array_data(want), 15 * 2);
    mxp_array *t;
    assert_int_equal(mxp_array_transpose(&t, r, NULL), MXP_OK);
    assert_int_equal(mxp_safetensors_read_into(t, st, at, &o), MXP_ERR_SHAPE);
    mxp_array_free(t);
    const int64_t flat[1] = { 15 };
    assert_int_equal(mxp_array_reshape(&t, r, 1, flat), MXP_OK);
    assert_int_equal(mxp_safetensors_read_into(t, st, at, &o), MXP_ERR_SHAPE);
    assert_contains(mxp_last_error(), "dst's shape is not tensor 't_float64''s");
    mxp_array_free(t);
    mxp_array *wide;
    assert_int_equal(mxp_array_zeros(&wide, MXP_BF16, 2, (const int64_t[]){ 3, 10 }), MXP_OK);
    assert_int_equal(mxp_array_slice(&t, wide, 2, (const mxp_slice[]){ { 0, 3, 1 }, { 0, 10, 2 } }), MXP_OK);
    assert_int_equal(mxp_safetensors_read_into(t, st, at, &o), MXP_ERR_INVALID_ARGUMENT); /* 3 x 5, strided */
    assert_contains(mxp_last_error(), "dst is not C-contiguous");
    mxp_array_free(t);
    mxp_array_free(wide);
    mxp_array_free(r);
    mxp_array_free(want);
    assert_int_equal(mxp_safetensors_find(st, "nothing", &at), MXP_ERR_INDEX);
    assert_contains(mxp_last_error(), "no tensor named 'nothing'");
    assert_int_equal(mxp_safetensors_read(&r, st, N + 3, MXP_DTYPE_INVALID, NULL), MXP_ERR_INDEX);
    assert_null(r);
    assert_int_equal(mxp_safetensors_read(&r, st, 0, (mxp_dtype)99, NULL), MXP_ERR_INVALID_DTYPE);
    assert_null(mxp_safetensors_name(st, N + 3));
    assert_int_equal(mxp_safetensors_ndim(st, N + 3), -1);
    mxp_safetensors_close(st);
    mxp_free(buf);
    for (int i = 0; i < N + 3; i++)
        mxp_array_free(own[i]);
    /* a dtype without a safetensors code: refused, saying which */
    mxp_array *fnuz;
    assert_int_equal(mxp_array_zeros(&fnuz, MXP_E4M3FNUZ, 2, shape), MXP_OK);
    const char *one_name[1] = { "w" };
    const mxp_array *one[1] = { fnuz };
    assert_int_equal(mxp_safetensors_save_buffer(&buf, &size, 1, one_name, one, 0, NULL, NULL),
                     MXP_ERR_INVALID_DTYPE);
    assert_contains(mxp_last_error(), "tensor 0 is float8_e4m3fnuz, a dtype safetensors has no code for");
    mxp_array_free(fnuz);
}

/* Files: saved, opened (mapped), read; a missing file, a directory and an
 * empty file refused; a failed save leaves the old file. */
static void test_safetensors_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/mxp-st-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/m.safetensors", dir);
    mxp_array *a;
    assert_int_equal(mxp_array_arange(&a, MXP_BF16, 0, 8, 1), MXP_OK);
    const char *names[] = { "w" };
    const mxp_array *arrays[] = { a };
    assert_int_equal(mxp_safetensors_save(path, 1, names, arrays, 0, NULL, NULL), MXP_OK);
    mxp_safetensors *st;
    assert_int_equal(mxp_safetensors_open(&st, path), MXP_OK);
    mxp_array *r;
    assert_int_equal(mxp_safetensors_read(&r, st, 0, MXP_F32, NULL), MXP_OK);
    double x;
    const int64_t idx[1] = { 7 };
    assert_int_equal(mxp_array_get_f64(r, idx, &x), MXP_OK);
    assert_true(x == 7.0);
    mxp_array_free(r);
    mxp_safetensors_close(st);
    /* a failed save (a duplicate name) leaves the file as it was */
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    const char *twice[] = { "w", "w" };
    const mxp_array *two[] = { a, a };
    assert_int_equal(mxp_safetensors_save(path, 2, twice, two, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_contains(mxp_last_error(), "tensor name 'w' twice");
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(before.st_size, after.st_size);
    assert_int_equal(mxp_safetensors_open(&st, "/nonexistent/m.safetensors"), MXP_ERR_IO);
    assert_null(st);
    assert_contains(mxp_last_error(), "cannot open");
    assert_int_equal(mxp_safetensors_open(&st, dir), MXP_ERR_IO);
    assert_contains(mxp_last_error(), "a directory");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(mxp_safetensors_open(&st, path), MXP_ERR_FORMAT);
    assert_contains(mxp_last_error(), "m.safetensors: 0 bytes: shorter than the 8-byte header length");
    unlink(path);
    rmdir(dir);
    mxp_array_free(a);
}

/* Bytes of a whole file (malloc'ed), *size set. */
static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*size ? *size : 1);
    assert_true(fread(b, 1, *size, f) == *size);
    fclose(f);
    return b;
}

/* mxp_safetensors_cast against the arrays read with the conversion and
 * saved (mxp_safetensors_save): the same file byte for byte -- float
 * tensors of several dtypes (packed float6 in, packed float4 out), an
 * integer one kept, metadata, stochastic rounding's one stream across the
 * tensors, tensors spanning several 6 MiB chunks (float64 out; 13 M
 * values into float4, a chunk boundary inside the packed bytes); the
 * counts; bad arguments; a failure leaves the old file. */
static void test_safetensors_cast_is_read_convert_save(void **state)
{
    (void)state;
    char dir[] = "/tmp/mxp-stc-XXXXXX", in[128], got[128], want[128];
    assert_non_null(mkdtemp(dir));
    snprintf(in, sizeof in, "%s/in.safetensors", dir);
    snprintf(got, sizeof got, "%s/got.safetensors", dir);
    snprintf(want, sizeof want, "%s/want.safetensors", dir);
    const int64_t big = 13000000, mid = 2000000, small = 40;
    mxp_array *a[5], *t = NULL;
    assert_int_equal(mxp_array_random_normal(&t, MXP_F32, 1, &big, 0, 2, 1), MXP_OK);
    assert_int_equal(mxp_array_astype(&a[0], t, MXP_F16, NULL), MXP_OK); /* 13 M float16 */
    mxp_array_free(t);
    assert_int_equal(mxp_array_random_normal(&a[1], MXP_F32, 1, &mid, 0, 1e3, 2), MXP_OK);
    assert_int_equal(mxp_array_random_normal(&t, MXP_F32, 1, &small, 0, 3, 3), MXP_OK);
    assert_int_equal(mxp_array_astype(&a[2], t, MXP_E3M2, NULL), MXP_OK); /* stored packed */
    mxp_array_free(t);
    assert_int_equal(mxp_array_arange(&a[3], MXP_S64, -5, 5, 1), MXP_OK);
    assert_int_equal(mxp_array_random_normal(&a[4], MXP_F64, 1, &small, 0, 1, 4), MXP_OK);
    const char *names[] = { "h.big", "f.mid", "e3m2", "ids", "d" };
    const char *keys[] = { "format", "note" }, *values[] = { "pt", "cast test" };
    assert_int_equal(mxp_safetensors_save(in, 5, names, (const mxp_array *const *)a, 2, keys, values), MXP_OK);
    mxp_safetensors *st;
    assert_int_equal(mxp_safetensors_open(&st, in), MXP_OK);
    const struct { mxp_dtype to; mxp_rounding mode; } cases[] = {
        { MXP_BF16, MXP_ROUND_NEAREST_EVEN }, { MXP_F64, MXP_ROUND_NEAREST_EVEN }, { MXP_E2M1, MXP_ROUND_UP },
        { MXP_E4M3, MXP_ROUND_STOCHASTIC },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mxp_convert_flags f1 = { 0 }, f2 = { 0 };
        mxp_convert_opts o = { .rounding = cases[c].mode, .overflow = MXP_OVERFLOW_SATURATE, .seed = 7,
                               .index_offset = 100, .flags = &f1 };
        size_t converted = 0;
        uint64_t elements = 0;
        assert_int_equal(mxp_safetensors_cast(got, st, cases[c].to, &o, &converted, &elements), MXP_OK);
        assert_int_equal(converted, 4);
        assert_true(elements == (uint64_t)(big + mid + 2 * small));
        /* the oracle: each tensor read (converted with the stream's offset) and saved */
        const size_t n = mxp_safetensors_count(st);
        mxp_array *r[5];
        const char *rn[5];
        mxp_convert_opts q = o;
        q.flags = &f2;
        uint64_t at = 0;
        for (size_t i = 0; i < n; i++) {
            const mxp_dtype from = mxp_safetensors_dtype(st, i);
            const bool fl = mxp_dtype_get_traits(from)->kind == MXP_KIND_FLOAT;
            q.index_offset = 100 + at;
            rn[i] = mxp_safetensors_name(st, i);
            assert_int_equal(mxp_safetensors_read(&r[i], st, i, fl ? cases[c].to : from, &q), MXP_OK);
            if (fl)
                at += (uint64_t)mxp_array_size(r[i]);
        }
        const char *mk[2], *mv[2];
        for (size_t j = 0; j < 2; j++)
            mk[j] = mxp_safetensors_metadata_key(st, j), mv[j] = mxp_safetensors_metadata_value(st, j);
        assert_int_equal(mxp_safetensors_save(want, n, rn, (const mxp_array *const *)r, 2, mk, mv), MXP_OK);
        size_t gs, ws;
        unsigned char *gb = slurp(got, &gs), *wb = slurp(want, &ws);
        if (gs != ws || memcmp(gb, wb, gs))
            fail_msg("cast to %s (case %zu): %zu bytes, the read-convert-save file %zu, or other bytes",
                     mxp_dtype_name(cases[c].to), c, gs, ws);
        assert_true(f1.inexact == f2.inexact && f1.overflow == f2.overflow && f1.underflow == f2.underflow);
        assert_true(cases[c].to == MXP_F64 ? f1.inexact == 0 : f1.inexact > 0); /* float64 holds every value */
        free(gb), free(wb);
        for (size_t i = 0; i < n; i++)
            mxp_array_free(r[i]);
    }
    /* refused: a dtype that is not a float with a code, NULL arguments, an unwritable path; the old file stays */
    size_t before, after;
    free(slurp(got, &before));
    assert_int_equal(mxp_safetensors_cast(got, st, MXP_S8, NULL, NULL, NULL), MXP_ERR_INVALID_DTYPE);
    assert_contains(mxp_last_error(), "not a floating-point dtype");
    assert_int_equal(mxp_safetensors_cast(NULL, st, MXP_BF16, NULL, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_safetensors_cast(got, NULL, MXP_BF16, NULL, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_safetensors_cast("/nonexistent/x.safetensors", st, MXP_BF16, NULL, NULL, NULL), MXP_ERR_IO);
    const mxp_convert_opts bad = { .rounding = (mxp_rounding)99 };
    assert_int_not_equal(mxp_safetensors_cast(got, st, MXP_BF16, &bad, NULL, NULL), MXP_OK);
    free(slurp(got, &after));
    assert_true(before == after);
    /* the file itself as the destination: the new one replaces it, the mapping keeps the old */
    assert_int_equal(mxp_safetensors_cast(in, st, MXP_F16, NULL, NULL, NULL), MXP_OK);
    mxp_safetensors_close(st);
    assert_int_equal(mxp_safetensors_open(&st, in), MXP_OK);
    for (size_t i = 0; i < mxp_safetensors_count(st); i++)
        assert_true(mxp_safetensors_dtype(st, i) == MXP_F16 || mxp_safetensors_dtype(st, i) == MXP_S64);
    mxp_safetensors_close(st);
    for (int i = 0; i < 5; i++)
        mxp_array_free(a[i]);
    unlink(in), unlink(got), unlink(want);
    rmdir(dir);
}

typedef struct bad_case {
    const char *header;
    size_t data_bytes;
    const char *sentence;
} bad_case;

#define T(name, dtype, shape, b, e) "\"" name "\":{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

/* One header per rule, each refused with MXP_ERR_FORMAT and its sentence. */
static void test_safetensors_refuses_bad_headers(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        { "[]", 0, "header byte 0: the header must be a JSON object" },
        { "{" T("a", "F32", "[1]", 0, 4) "} x", 4, "bytes after the header's object" },
        { "{" T("a", "F32", "[1]", 0, 4) ",}", 4, "a string was expected" },
        { "{\"a\" " T("", "F32", "[1]", 0, 4) "}", 4, "':' was expected" },
        { "{\"a\\q\":1}", 0, "a bad escape in a string" },
        { "{\"a\xff\":1}", 0, "a string is not valid UTF-8" },
        { "{\"a\xc0\x80\":1}", 0, "a string is not valid UTF-8" },     /* overlong */
        { "{\"a\xed\xa0\x80\":1}", 0, "a string is not valid UTF-8" }, /* a surrogate in UTF-8 */
        { "{\"a\tb\":1}", 0, "a control character in a string" },
        { "{\"a\\u0000\":1}", 0, "U+0000 in a string" },
        { "{\"a\\ud800\":1}", 0, "a lone surrogate" },
        { "{\"a\\udc00x\":1}", 0, "a lone surrogate" },
        { "{\"a", 0, "a string is not closed" },
        { "{" T("a", "F32", "[01]", 0, 4) "}", 4, "an integer with a leading zero" },
        { "{" T("a", "F32", "[-1]", 0, 4) "}", 4, "an unsigned integer was expected" },
        { "{" T("a", "F32", "[1.0]", 0, 4) "}", 4, "an integer was expected, not a fraction" },
        { "{" T("a", "F32", "[9223372036854775808]", 0, 4) "}", 4, "an integer of 2^63 or more" },
        { "{" T("a", "F32", "1", 0, 4) "}", 4, "a shape must be a list" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 4, "data_offsets must hold two" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, "data_offsets must hold two" },
        { "{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 0, "tensor 'a': wants one dtype, shape and data_offsets" },
        { "{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "wants one dtype" },
        { "{\"a\":[1]}", 0, "a tensor entry must be an object" },
        { "{\"a\":{}}", 0, "tensor 'a': wants one dtype, shape and data_offsets" },
        { "{\"a\":{ }}  ", 0, "tensor 'a': wants one dtype" },
        { "{" T("a", "F31", "[1]", 0, 4) "}", 4, "tensor 'a': dtype 'F31' is not one of the format's" },
        { "{" T("a", "f32", "[1]", 0, 4) "}", 4, "dtype 'f32' is not one of the format's" },
        { "{" T("a", "F32", "[1]", 0, 4) "," T("a", "F32", "[1]", 4, 8) "}", 8, "tensor 'a' named twice" },
        { "{\"__metadata__\":{\"k\":1}}", 0, "__metadata__ values must be strings" },
        { "{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}", 0, "__metadata__ key 'k' twice" },
        { "{\"__metadata__\":{},\"__metadata__\":{}}", 0, "__metadata__ twice" },
        { "{\"__metadata__\":[]}", 0, "__metadata__ must be an object of strings" },
        { "{\"a\":{\"x\":" "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
          "}}", 0, "JSON nested too deep" },
        { "{\"a\":{\"x\":01}}", 0, "a JSON value was expected" },
        { "{\"a\":{\"x\":tru}}", 0, "a JSON value was expected" },
        { "{\"a\":{\"x\":1.}}", 0, "a digit was expected" },
        /* the offsets against the data */
        { "{" T("a", "F32", "[1]", 4, 8) "}", 8, "tensor 'a': data_offsets [4, 8] do not follow" },
        { "{" T("a", "F32", "[1]", 0, 4) "," T("b", "F32", "[1]", 8, 12) "}", 12, "tensor 'b': data_offsets [8, 12]" },
        { "{" T("a", "F32", "[2]", 0, 8) "," T("b", "F32", "[1]", 4, 8) "}", 12, "tensor 'b': data_offsets [4, 8]" },
        { "{" T("a", "F32", "[1]", 8, 4) "}", 4, "do not follow" },
        { "{" T("a", "F32", "[2]", 0, 4) "}", 4, "tensor 'a': data_offsets hold 4 bytes, its dtype F32 and shape need 8" },
        { "{" T("a", "F32", "[1]", 0, 4) "}", 8, "the tensors' data ends at byte 4 of the data, the file's at 8" },
        { "{" T("a", "F32", "[1]", 0, 4) "}", 2, "the tensors' data ends at byte 4 of the data, the file's at 2" },
        { "{" T("a", "F32", "[4294967296,4294967296]", 0, 4) "}", 4, "tensor 'a': its shape overflows a size" },
        { "{" T("a", "F4", "[3]", 0, 1) "}", 1, "tensor 'a': 12 bits of F4 are not whole bytes" },
        { "{" T("a", "BF16", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
                              "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", 0, 2) "}",
          2, "too many entries in a shape" },
    };
    static const unsigned char data[16];
    unsigned char buf[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const size_t n = build(buf, sizeof buf, cases[i].header, data, cases[i].data_bytes);
        mxp_safetensors *st = (mxp_safetensors *)&st;
        const mxp_status s = mxp_safetensors_open_buffer(&st, buf, n);
        if (s != MXP_ERR_FORMAT || !strstr(mxp_last_error(), cases[i].sentence))
            fail_msg("case %zu (%s): %s \"%s\", want \"%s\"", i, cases[i].header, mxp_status_str(s), mxp_last_error(),
                     cases[i].sentence);
        assert_null(st);
    }
}

/* The 8-byte length: every prefix of a file, a header longer than the
 * file or than the format's limit. */
static void test_safetensors_refuses_bad_lengths(void **state)
{
    (void)state;
    unsigned char buf[64];
    const size_t n = build(buf, sizeof buf, "{" T("a", "U8", "[1]", 0, 1) "}", "x", 1);
    mxp_safetensors *st;
    for (size_t cut = 0; cut < n; cut++) {
        assert_int_equal(mxp_safetensors_open_buffer(&st, buf, cut), MXP_ERR_FORMAT);
        assert_null(st);
    }
    assert_int_equal(mxp_safetensors_open_buffer(&st, buf, n), MXP_OK);
    mxp_safetensors_close(st);
    assert_int_equal(mxp_safetensors_open_buffer(&st, buf, 7), MXP_ERR_FORMAT);
    assert_contains(mxp_last_error(), "7 bytes: shorter than the 8-byte header length");
    buf[7] = 0x80; /* 2^63 + ... */
    assert_int_equal(mxp_safetensors_open_buffer(&st, buf, n), MXP_ERR_FORMAT);
    assert_contains(mxp_last_error(), "more than the format's 100000000");
    memset(buf, 0, 8);
    buf[0] = 100; /* past the end */
    assert_int_equal(mxp_safetensors_open_buffer(&st, buf, n), MXP_ERR_FORMAT);
    assert_contains(mxp_last_error(), "a header of 100 bytes runs past the end of the file");
}

/* Dtypes of the format that mxp has no type for (C64): listed and seen in
 * place, refused by read with their name.  F8_E8M0, F4 and F6 (stored
 * packed, element 0 in the low bits) read as mxp's types; more dimensions
 * than mxp's refused. */
static void test_safetensors_dtypes_mxp_lacks(void **state)
{
    (void)state;
    unsigned char buf[512], data[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
    const size_t n = build(buf, sizeof buf,
                           "{" T("c", "C64", "[1]", 0, 8) "," T("e", "F8_E8M0", "[2]", 8, 10) ","
                           T("f4", "F4", "[4]", 10, 12) "," T("f6", "F6_E2M3", "[4]", 12, 15) ","
                           T("deep", "U8", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", 15, 16) "}",
                           data, 16);
    mxp_safetensors *st;
    assert_int_equal(mxp_safetensors_open_buffer(&st, buf, n), MXP_OK);
    assert_int_equal(mxp_safetensors_count(st), 5);
    assert_string_equal(mxp_safetensors_dtype_name(st, 0), "C64");
    assert_int_equal(mxp_safetensors_dtype(st, 0), MXP_DTYPE_INVALID);
    mxp_array *r;
    assert_int_equal(mxp_safetensors_read(&r, st, 0, MXP_F32, NULL), MXP_ERR_UNSUPPORTED);
    assert_null(r);
    assert_contains(mxp_last_error(), "C64, which mxp has no type for yet");
    /* F8_E8M0 bytes 9, 10: 2^(byte - 127).  F4 bytes 11 = 0x0b, 12 = 0x0c:
     * nibbles 0xb (-1.5), 0, 0xc (-2), 0.  F6_E2M3 bytes 13, 14, 15 =
     * 0x0f0e0d as 24 bits: 001101 (1.625), 111000 (-4), 110000 (-2),
     * 000011 (3/8, subnormal). */
    const char *names[] = { "F8_E8M0", "F4", "F6_E2M3" };
    const mxp_dtype types[] = { MXP_E8M0, MXP_E2M1, MXP_E2M3 };
    const double want[3][4] = { { 0x1p-118, 0x1p-117 }, { -1.5, 0, -2, 0 }, { 1.625, -4, -2, 0.375 } };
    const unsigned char own[3][4] = { { 9, 10 }, { 0xb, 0, 0xc, 0 }, { 13, 56, 48, 3 } };
    for (size_t i = 1; i < 4; i++) {
        assert_string_equal(mxp_safetensors_dtype_name(st, i), names[i - 1]);
        assert_int_equal(mxp_safetensors_dtype(st, i), types[i - 1]);
        const size_t count = i == 1 ? 2 : 4;
        mxp_array *e;
        assert_int_equal(mxp_safetensors_read(&e, st, i, MXP_F64, NULL), MXP_OK);
        assert_int_equal(mxp_array_size(e), count);
        for (size_t k = 0; k < count; k++)
            assert_true(((const double *)mxp_array_data(e))[k] == want[i - 1][k]);
        mxp_array_free(e);
        assert_int_equal(mxp_safetensors_read(&e, st, i, MXP_DTYPE_INVALID, NULL), MXP_OK); /* its own type */
        assert_int_equal(mxp_array_dtype(e), types[i - 1]);
        assert_memory_equal(mxp_array_data(e), own[i - 1], count);
        mxp_array_free(e);
    }
    size_t nbytes;
    const unsigned char *v = mxp_safetensors_data(st, 1, &nbytes);
    assert_int_equal(nbytes, 2);
    assert_int_equal(v[0], 9);
    assert_int_equal(mxp_safetensors_ndim(st, 4), 33);
    assert_int_equal(mxp_safetensors_read(&r, st, 4, MXP_DTYPE_INVALID, NULL), MXP_ERR_SHAPE);
    assert_contains(mxp_last_error(), "33 dimensions, more than mxp's 32");
    mxp_safetensors_close(st);
}

/* float4/float6 arrays (a byte per element) are written packed, as torch
 * writes float4_e2m1fn_x2 (element 0 in the low nibble), with their element
 * count as the shape; they come back bit for bit and convert on read with
 * the stochastic stream of one whole call; counts that are not whole bytes
 * are refused. */
static void test_safetensors_packed_float4_float6(void **state)
{
    (void)state;
    mxp_array *f4, *f6, *g6, *odd4, *odd6;
    assert_int_equal(mxp_array_empty(&f4, MXP_E2M1, 1, (const int64_t[]){ 16 }), MXP_OK);
    assert_int_equal(mxp_array_empty(&f6, MXP_E2M3, 2, (const int64_t[]){ 4, 16 }), MXP_OK);
    for (int k = 0; k < 64; k++)
        ((unsigned char *)mxp_array_data(f6))[k] = (unsigned char)k;
    assert_int_equal(mxp_array_arange(&g6, MXP_E3M2, 0, 4, 1), MXP_OK);
    for (int k = 0; k < 16; k++) /* every float4 code */
        ((unsigned char *)mxp_array_data(f4))[k] = (unsigned char)k;
    const char *names[] = { "f4", "f6", "g6" };
    const mxp_array *arrays[] = { f4, f6, g6 };
    void *buf;
    size_t size;
    assert_int_equal(mxp_safetensors_save_buffer(&buf, &size, 3, names, arrays, 0, NULL, NULL), MXP_OK);
    mxp_safetensors *st;
    assert_int_equal(mxp_safetensors_open_buffer(&st, buf, size), MXP_OK);
    size_t i4, i6, j6, nbytes;
    assert_int_equal(mxp_safetensors_find(st, "f4", &i4), MXP_OK);
    assert_int_equal(mxp_safetensors_find(st, "f6", &i6), MXP_OK);
    assert_int_equal(mxp_safetensors_find(st, "g6", &j6), MXP_OK);
    assert_string_equal(mxp_safetensors_dtype_name(st, i4), "F4");
    assert_string_equal(mxp_safetensors_dtype_name(st, i6), "F6_E2M3");
    assert_string_equal(mxp_safetensors_dtype_name(st, j6), "F6_E3M2");
    assert_int_equal(mxp_safetensors_shape(st, i6)[1], 16);
    const unsigned char *p = mxp_safetensors_data(st, i4, &nbytes);
    assert_int_equal(nbytes, 8);
    for (int k = 0; k < 8; k++) /* codes 2k and 2k+1 share byte k, the first low */
        assert_int_equal(p[k], (2 * k + 1) << 4 | 2 * k);
    p = mxp_safetensors_data(st, i6, &nbytes);
    assert_int_equal(nbytes, 48);
    assert_int_equal(p[0], 0x40); /* 0, 1, 2, 3: 000000 100000 010000 110000 read from the low bit */
    assert_int_equal(p[1], 0x20);
    assert_int_equal(p[2], 0x0c);
    mxp_array *back;
    assert_int_equal(mxp_safetensors_read(&back, st, i6, MXP_DTYPE_INVALID, NULL), MXP_OK);
    assert_memory_equal(mxp_array_data(back), mxp_array_data(f6), 64);
    mxp_array_free(back);
    /* into bf16 with stochastic rounding from E3M2 -> exact anyway; into
     * float4 from E2M3 rounds: the same as converting the unpacked codes */
    mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 7 };
    unsigned char want[64];
    assert_int_equal(mxp_convert(want, MXP_E2M1, mxp_array_data(f6), MXP_E2M3, 64, &o), MXP_OK);
    assert_int_equal(mxp_safetensors_read(&back, st, i6, MXP_E2M1, &o), MXP_OK);
    assert_memory_equal(mxp_array_data(back), want, 64);
    mxp_array_free(back);
    assert_int_equal(mxp_safetensors_read(&back, st, i4, MXP_F32, NULL), MXP_OK);
    const float f4v[16] = { 0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6 };
    assert_memory_equal(mxp_array_data(back), f4v, sizeof f4v);
    mxp_array_free(back);
    mxp_safetensors_close(st);
    mxp_free(buf);
    /* 3 float4 (12 bits) and 2 float6 (12 bits) are not whole bytes */
    assert_int_equal(mxp_array_zeros(&odd4, MXP_E2M1, 1, (const int64_t[]){ 3 }), MXP_OK);
    assert_int_equal(mxp_array_zeros(&odd6, MXP_E3M2, 1, (const int64_t[]){ 2 }), MXP_OK);
    const mxp_array *bad4[] = { odd4 }, *bad6[] = { odd6 };
    assert_int_equal(mxp_safetensors_save_buffer(&buf, &size, 1, names, bad4, 0, NULL, NULL), MXP_ERR_SHAPE);
    assert_contains(mxp_last_error(), "tensor 'f4': 3 elements of F4 are not whole bytes");
    assert_int_equal(mxp_safetensors_save_buffer(&buf, &size, 1, names + 1, bad6, 0, NULL, NULL), MXP_ERR_SHAPE);
    assert_contains(mxp_last_error(), "tensor 'f6': 2 elements of F6_E3M2 are not whole bytes");
    mxp_array_free(f4);
    mxp_array_free(f6);
    mxp_array_free(g6);
    mxp_array_free(odd4);
    mxp_array_free(odd6);
}

/* Arguments the writer refuses, each with its sentence. */
static void test_safetensors_save_refuses_bad_arguments(void **state)
{
    (void)state;
    mxp_array *a;
    assert_int_equal(mxp_array_zeros(&a, MXP_F32, 1, (const int64_t[]){ 2 }), MXP_OK);
    const mxp_array *arrays[] = { a };
    void *buf = (void *)&buf;
    size_t size = 1;
    const struct {
        const char *name, *key, *value, *sentence;
    } cases[] = {
        { "__metadata__", NULL, NULL, "the name __metadata__" },
        { "bad\xff", NULL, NULL, "a name that is not UTF-8" },
        { "ok", "k", "bad\xc3", "metadata that is not UTF-8" },
        { NULL, NULL, NULL, "NULL name of tensor 0" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *names[] = { cases[i].name }, *keys[] = { cases[i].key }, *values[] = { cases[i].value };
        const mxp_status s = mxp_safetensors_save_buffer(&buf, &size, 1, names, arrays, cases[i].key ? 1 : 0, keys,
                                                         values);
        assert_int_equal(s, MXP_ERR_INVALID_ARGUMENT);
        assert_contains(mxp_last_error(), cases[i].sentence);
        assert_null(buf);
        assert_int_equal(size, 0);
    }
    const char *keys2[] = { "k", "k" }, *values2[] = { "1", "2" };
    assert_int_equal(mxp_safetensors_save_buffer(&buf, &size, 0, NULL, NULL, 2, keys2, values2),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_contains(mxp_last_error(), "metadata key 'k' twice");
    assert_int_equal(mxp_safetensors_save_buffer(&buf, &size, 1, NULL, arrays, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_safetensors_save(NULL, 0, NULL, NULL, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_int_equal(mxp_safetensors_open_buffer(NULL, "", 0), MXP_ERR_INVALID_ARGUMENT);
    mxp_safetensors_close(NULL);
    mxp_array_free(a);
}

/* mxp_safetensors_save_made's make: the array's bytes as saved (float4
 * packed), counting the calls and their pieces; fail_at: the call that
 * fails (0: none), saying nothing or its own sentence. */
typedef struct made_ctx {
    const mxp_array *a;
    const unsigned char *bytes; /* packed float4, or the array's data */
    size_t calls, next, order, *clock;
    int fail_at, say;
} made_ctx;

static mxp_status made_make(void *ctx, size_t offset, size_t len, void *buf)
{
    made_ctx *c = ctx;
    if (offset != c->next || (offset && len > (6u << 20)))
        return MXP_ERR_INDEX;
    c->order = ++*c->clock;
    c->next = offset + len;
    if (++c->calls == (size_t)c->fail_at) {
        if (c->say)
            (void)mxp_convert(buf, MXP_F32, buf, (mxp_dtype)9999, 1, NULL); /* a sentence of the library's */
        return c->say ? MXP_ERR_INVALID_DTYPE : MXP_ERR_IO;
    }
    memcpy(buf, c->bytes + offset, len);
    return MXP_OK;
}

/* mxp_safetensors_save_made: the file mxp_safetensors_save writes for the
 * same arrays and metadata, byte for byte (tensors given out of the
 * file's order, a 0-d one, an empty one, packed float4, one of 7 M
 * float32 made in several 6 MiB pieces, in order); make called in the
 * file's order; a failing make (with its sentence, or without one: the
 * library's) leaves the old file; bad arguments. */
static void test_safetensors_save_made_is_save(void **state)
{
    (void)state;
    char dir[] = "/tmp/mxp-stm-XXXXXX", got[128], want[128];
    assert_non_null(mkdtemp(dir));
    snprintf(got, sizeof got, "%s/got.safetensors", dir);
    snprintf(want, sizeof want, "%s/want.safetensors", dir);
    const int64_t big = 7000000, none = 0, f4n = 6;
    mxp_array *a[5];
    assert_int_equal(mxp_array_random_normal(&a[0], MXP_F32, 1, &big, 0, 1, 5), MXP_OK);
    assert_int_equal(mxp_array_arange(&a[1], MXP_S64, 0, 5, 1), MXP_OK);
    assert_int_equal(mxp_array_zeros(&a[2], MXP_BF16, 0, NULL), MXP_OK);
    assert_int_equal(mxp_array_zeros(&a[3], MXP_F16, 1, &none), MXP_OK);
    assert_int_equal(mxp_array_zeros(&a[4], MXP_E2M1, 1, &f4n), MXP_OK);
    for (int k = 0; k < 6; k++)
        ((unsigned char *)mxp_array_data(a[4]))[k] = (unsigned char)(k + 9);
    ((uint16_t *)mxp_array_data(a[2]))[0] = 0x3f80;
    const char *names[] = { "w", "ids", "scalar", "empty", "f4" };
    const char *keys[] = { "format", "note" }, *values[] = { "pt", "made \"piece\" by piece" };
    const mxp_array *arrays[] = { a[0], a[1], a[2], a[3], a[4] };
    assert_int_equal(mxp_safetensors_save(want, 5, names, arrays, 2, keys, values), MXP_OK);
    unsigned char packed[3];
    assert_int_equal(mxp_pack(packed, mxp_array_data(a[4]), MXP_E2M1, 6), MXP_OK);
    size_t clock = 0;
    made_ctx c[5];
    mxp_safetensors_source src[5];
    for (int i = 0; i < 5; i++) {
        c[i] = (made_ctx){ a[i], i == 4 ? packed : mxp_array_data(a[i]), 0, 0, 0, &clock, 0, 0 };
        src[i] = (mxp_safetensors_source){ names[i], mxp_array_dtype(a[i]), mxp_array_ndim(a[i]),
                                           mxp_array_shape(a[i]), made_make, &c[i], NULL };
    }
    assert_int_equal(mxp_safetensors_save_made(got, 5, src, 2, keys, values), MXP_OK);
    size_t ng, nw;
    unsigned char *bg = slurp(got, &ng), *bw = slurp(want, &nw);
    assert_int_equal(ng, nw);
    assert_memory_equal(bg, bw, nw);
    free(bg);
    assert_int_equal(c[0].calls, 5); /* 28 MB: four whole 6 MiB pieces and the rest */
    assert_int_equal(c[0].next, 28000000);
    assert_int_equal(c[3].calls, 0); /* nothing to make */
    /* the file's order: by dtype (I64 ids, F32 w, BF16 scalar, F16 empty,
     * F4 f4: the safetensors library's, widest rank first), then by name */
    assert_true(c[1].order < c[0].order && c[0].order < c[2].order && c[2].order < c[4].order);

    /* a make that fails, with a sentence and without: the old file stays */
    for (int say = 0; say < 2; say++) {
        for (int i = 0; i < 5; i++)
            c[i].calls = c[i].next = 0;
        c[0].fail_at = 3, c[0].say = say;
        assert_int_equal(mxp_safetensors_save_made(want, 5, src, 0, NULL, NULL),
                         say ? MXP_ERR_INVALID_DTYPE : MXP_ERR_IO);
        assert_contains(mxp_last_error(), say ? "9999" : "tensor 'w': make failed (MXP_ERR_IO)");
        bg = slurp(want, &ng);
        assert_int_equal(ng, nw);
        assert_memory_equal(bg, bw, nw);
        free(bg);
    }
    free(bw);

    /* bad arguments */
    mxp_safetensors_source bad = src[1];
    assert_int_equal(mxp_safetensors_save_made(NULL, 1, &bad, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_contains(mxp_last_error(), "path is NULL");
    assert_int_equal(mxp_safetensors_save_made(got, 1, NULL, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_contains(mxp_last_error(), "tensors is NULL");
    bad.make = NULL;
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_contains(mxp_last_error(), "NULL make of tensor 0");
    bad = src[1], bad.name = NULL;
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_contains(mxp_last_error(), "NULL name of tensor 0");
    bad = src[1], bad.ndim = 65;
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_contains(mxp_last_error(), "an ndim out of range");
    bad = src[1], bad.shape = NULL;
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_contains(mxp_last_error(), "NULL shape of tensor 0");
    const int64_t neg = -1, huge[2] = { INT64_MAX, INT64_MAX }, three = 3;
    bad = src[1], bad.shape = &neg;
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_ERR_SHAPE);
    assert_contains(mxp_last_error(), "negative extent");
    bad = src[1], bad.ndim = 2, bad.shape = huge;
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_ERR_SIZE_OVERFLOW);
    bad = src[4], bad.shape = &three;
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_ERR_SHAPE);
    assert_contains(mxp_last_error(), "3 elements of F4 are not whole bytes");
    bad = src[1], bad.dtype = (mxp_dtype)9999;
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_ERR_INVALID_DTYPE);
    bad.dtype = MXP_DTYPE_INVALID;
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_ERR_INVALID_DTYPE);
    assert_contains(mxp_last_error(), "tensor 0 has no dtype");
    bad.dtype_name = "C6"; /* the format's name decides, dtype unused */
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_ERR_INVALID_DTYPE);
    assert_contains(mxp_last_error(), "tensor 0: 'C6' is not a safetensors dtype");
    bad.dtype_name = "C64"; /* 5 int64 are 5 complex64: written so */
    c[1].next = 0;
    assert_int_equal(mxp_safetensors_save_made(got, 1, &bad, 0, NULL, NULL), MXP_OK);
    mxp_safetensors *cst;
    assert_int_equal(mxp_safetensors_open(&cst, got), MXP_OK);
    assert_string_equal(mxp_safetensors_dtype_name(cst, 0), "C64");
    size_t cb;
    assert_memory_equal(mxp_safetensors_data(cst, 0, &cb), mxp_array_data(a[1]), 40);
    assert_int_equal(cb, 40);
    mxp_safetensors_close(cst);
    mxp_safetensors_source twice[2] = { src[1], src[1] };
    assert_int_equal(mxp_safetensors_save_made(got, 2, twice, 0, NULL, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_contains(mxp_last_error(), "tensor name 'ids' twice");
    assert_int_equal(mxp_safetensors_save_made(got, 0, NULL, 1, keys, NULL), MXP_ERR_INVALID_ARGUMENT);
    assert_contains(mxp_last_error(), "values is NULL");
    for (int i = 0; i < 5; i++)
        mxp_array_free(a[i]);
    unlink(got), unlink(want), rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_safetensors_writes_the_library_bytes),
        cmocka_unit_test(test_safetensors_round_trip_of_every_dtype),
        cmocka_unit_test(test_safetensors_files),
        cmocka_unit_test(test_safetensors_cast_is_read_convert_save),
        cmocka_unit_test(test_safetensors_refuses_bad_headers),
        cmocka_unit_test(test_safetensors_refuses_bad_lengths),
        cmocka_unit_test(test_safetensors_dtypes_mxp_lacks),
        cmocka_unit_test(test_safetensors_packed_float4_float6),
        cmocka_unit_test(test_safetensors_save_refuses_bad_arguments),
        cmocka_unit_test(test_safetensors_save_made_is_save),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
