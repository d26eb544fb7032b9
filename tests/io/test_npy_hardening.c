/* .npy input that must be refused, one test per rule of docs/npy.md's
 * "What is refused", each checking the status and the sentence; memory
 * bounds on pipes and sparse files (docs/reliability.md); and the
 * fuzzer's findings (tests/fuzz/regressions/) replayed. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "npy_util.h"

#define HEADER(descr, fortran, shape) "{'descr': " descr ", 'fortran_order': " fortran ", 'shape': " shape ", }"

static const unsigned char zeros[64];

static void test_npy_refuses_bad_magic_and_versions(void **state)
{
    (void)state;
    mxp_array *a = NULL;
    unsigned char buf[256];
    size_t n = npy_build(buf, sizeof buf, 1, HEADER("'<f4'", "False", "(1,)"), zeros, 4);
    const unsigned char pickle[] = { 0x80, 0x04, 0x95, 0x10, 0, 0, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(mxp_npy_load_buffer(&a, pickle, sizeof pickle), MXP_ERR_FORMAT);
    npy_assert_contains(mxp_last_error(), "npy: not a .npy file");
    for (size_t cut = 0; cut < 10; cut++) /* every prefix of the preamble */
        assert_int_equal(mxp_npy_load_buffer(&a, buf, cut), MXP_ERR_FORMAT);
    const unsigned char versions[][2] = { { 0, 0 }, { 1, 1 }, { 4, 0 }, { 255, 0 }, { 2, 5 } };
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        buf[6] = versions[i][0];
        buf[7] = versions[i][1];
        assert_int_equal(mxp_npy_load_buffer(&a, buf, n), MXP_ERR_FORMAT);
        assert_null(a);
        npy_assert_contains(mxp_last_error(), "is not supported (mxp reads 1.0, 2.0 and 3.0)");
    }
    buf[6] = 1;
    buf[7] = 0;
    buf[1] = 'n';
    assert_int_equal(mxp_npy_load_buffer(&a, buf, n), MXP_ERR_FORMAT);
}

static void test_npy_names_npz_archives(void **state)
{
    (void)state;
    mxp_array *a = NULL;
    const unsigned char npz[] = { 'P', 'K', 3, 4, 20, 0, 0, 0, 0, 0, 0, 0 };     /* np.savez's first member */
    const unsigned char empty[] = { 'P', 'K', 5, 6, 0, 0, 0, 0, 0, 0, 0, 0 };  /* np.savez() of nothing */
    assert_int_equal(mxp_npy_load_buffer(&a, npz, sizeof npz), MXP_ERR_FORMAT);
    assert_null(a);
    npy_assert_contains(mxp_last_error(), "npy: not a .npy file (an .npz archive?");
    assert_int_equal(mxp_npy_load_buffer(&a, empty, sizeof empty), MXP_ERR_FORMAT);
    npy_assert_contains(mxp_last_error(), "(an .npz archive?");
}

static void test_npy_refuses_headers_over_64k(void **state)
{
    (void)state;
    const size_t limit = 65536, cap = 12 + limit + 8;
    unsigned char *buf = malloc(cap);
    char *text = malloc(limit + 2);
    assert_non_null(buf);
    assert_non_null(text);
    /* Exactly 65536 bytes (padding after the dict) is allowed... */
    memset(text, ' ', limit + 1);
    const char dict[] = HEADER("'<f8'", "False", "()");
    memcpy(text, dict, strlen(dict));
    text[limit] = '\0';
    mxp_array *a = NULL;
    size_t n = npy_build(buf, cap, 2, text, zeros, 8);
    assert_int_equal(mxp_npy_load_buffer(&a, buf, n), MXP_OK);
    mxp_array_free(a);
    /* ...one more is not, whatever follows. */
    text[limit] = ' ';
    text[limit + 1] = '\0';
    n = npy_build(buf, cap, 3, text, NULL, 0);
    assert_int_equal(mxp_npy_load_buffer(&a, buf, n), MXP_ERR_FORMAT);
    npy_assert_contains(mxp_last_error(), "header length 65537 is over the limit of 65536 bytes");
    /* 4 GiB claimed in 12 bytes: refused before reading further. */
    memset(buf + 8, 0xff, 4);
    assert_int_equal(mxp_npy_load_buffer(&a, buf, 12), MXP_ERR_FORMAT);
    npy_assert_contains(mxp_last_error(), "header length 4294967295");
    /* A header length past the end of the input. */
    n = npy_build(buf, cap, 1, dict, NULL, 0);
    assert_int_equal(mxp_npy_load_buffer(&a, buf, n - 5), MXP_ERR_FORMAT);
    npy_assert_contains(mxp_last_error(), "ends inside the header");
    free(text);
    free(buf);
}

static void test_npy_header_is_a_dict_with_exactly_three_keys(void **state)
{
    (void)state;
    const char *msg;
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, "{'descr': '<f4', 'fortran_order': False}", NULL, 0);
    npy_assert_contains(msg, "npy: the header has no 'shape' key");
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, "{}", NULL, 0);
    npy_assert_contains(msg, "no 'descr' key");
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}",
                           zeros, 4);
    npy_assert_contains(msg, "unknown key 'x'");
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, "{'descr': '<f4', 'shape': (1,), 'descr': '<f4', 'fortran_order': False}",
                           zeros, 4);
    npy_assert_contains(msg, "key 'descr' appears twice");
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, "['descr', 'fortran_order', 'shape']", NULL, 0);
    npy_assert_contains(msg, "expected '{' to open the header dict");
    npy_expect_error(MXP_ERR_FORMAT, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)", zeros, 4);
    npy_expect_error(MXP_ERR_FORMAT, 1, "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}", zeros, 4);
    npy_expect_error(MXP_ERR_FORMAT, 1, "{'descr': '<f4',, 'fortran_order': False, 'shape': (1,)}", zeros, 4);
    npy_expect_error(MXP_ERR_FORMAT, 1, "{, 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", zeros, 4);
    npy_expect_error(MXP_ERR_FORMAT, 1, "{descr: '<f4', 'fortran_order': False, 'shape': (1,)}", zeros, 4);
    npy_expect_error(MXP_ERR_FORMAT, 1, "", NULL, 0);
}

static void test_npy_each_value_is_validated(void **state)
{
    (void)state;
    const char *msg;
    const char *const orders[] = { "'False'", "0", "None", "Falsey", "true", "" };
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; i++) {
        char h[128];
        snprintf(h, sizeof h, "{'descr': '<f4', 'fortran_order': %s, 'shape': (1,)}", orders[i]);
        msg = npy_expect_error(MXP_ERR_FORMAT, 1, h, zeros, 4);
        npy_assert_contains(msg, "'fortran_order' must be True or False");
    }
    const char *const shapes[] = { "[1]", "1", "'(1,)'", "((1,),)", "(1, [2])", "None", "(1 2)" };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        char h[128];
        snprintf(h, sizeof h, "{'descr': '<f4', 'fortran_order': False, 'shape': %s}", shapes[i]);
        npy_expect_error(MXP_ERR_FORMAT, 1, h, zeros, 4);
    }
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("'<f4'", "False", "(3)"), zeros, 12);
    npy_assert_contains(msg, "'shape' must be a tuple: write (3,), not (3)");
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("4", "False", "(1,)"), zeros, 4);
    npy_assert_contains(msg, "expected a quoted string for 'descr'");
    npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("None", "False", "(1,)"), zeros, 4);
    npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("b'<f4'", "False", "(1,)"), zeros, 4);
}

static void test_npy_shape_entries_are_non_negative_integers_up_to_32_dims(void **state)
{
    (void)state;
    const char *msg;
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("'<f4'", "False", "(2, -1)"), zeros, 8);
    npy_assert_contains(msg, "is negative");
    const char *const bad[] = { "(1.0,)", "(0x10,)", "(1e3,)", "(1_0,)", "(+1,)", "(True,)", "(1j,)" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char h[128];
        snprintf(h, sizeof h, HEADER("'|u1'", "False", "%s"), bad[i]);
        npy_expect_error(MXP_ERR_FORMAT, 1, h, zeros, 64);
    }
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("'|u1'", "False", "(99999999999999999999,)"), NULL, 0);
    npy_assert_contains(msg, "too large");
    char h[512];
    int n = snprintf(h, sizeof h, "{'descr': '|b1', 'fortran_order': False, 'shape': (");
    for (int i = 0; i < 32; i++)
        n += snprintf(h + n, sizeof h - (size_t)n, "1, ");
    snprintf(h + n, sizeof h - (size_t)n, ")}");
    mxp_array *a = npy_expect_ok(1, h, "\x01", 1);
    assert_int_equal(mxp_array_ndim(a), 32);
    mxp_array_free(a);
    snprintf(h + n, sizeof h - (size_t)n, "1)}");
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, h, "\x01", 1);
    npy_assert_contains(msg, "more than 32 dimensions");
}

static void test_npy_shape_size_overflow_is_refused(void **state)
{
    (void)state;
    const char *msg;
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("'<f8'", "False", "(4611686018427387904, 4)"), NULL, 0);
    npy_assert_contains(msg, "shape entry 0 (4611686018427387904) makes the array larger than memory");
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("'<u2'", "False", "(4294967296, 4294967296)"), NULL, 0);
    npy_assert_contains(msg, "shape entry 1");
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("'|u1'", "False", "(9223372036854775807, 2)"), NULL, 0);
    npy_assert_contains(msg, "shape entry 1");
    /* A zero dimension does not excuse the others, as in NumPy: the strides
     * of the (empty) array must still fit.  (Found by the fuzzer: a
     * (0, 2**63-1) uint64 array overflowed its C strides.) */
    npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("'<f8'", "False", "(4611686018427387904, 0)"), NULL, 0);
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("'>u8'", "False", "(0, 9223372036854775807)"), NULL, 0);
    npy_assert_contains(msg, "shape entry 1 (9223372036854775807) makes the array larger than memory");
    mxp_array *a = npy_expect_ok(1, HEADER("'<f8'", "True", "(0, 1152921504606846975)"), NULL, 0);
    assert_int_equal(mxp_array_size(a), 0);
    mxp_array_free(a);
}

static void test_npy_truncated_data_is_refused_before_any_allocation(void **state)
{
    (void)state;
    mxp_memory_stats before = { 0 }, after = { 0 };
    mxp_memory_stats_get(&before);
    const char *msg = npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("'<f8'", "False", "(1099511627776,)"), zeros, 16);
    npy_assert_contains(msg, "npy: file has 16 data bytes, shape (1099511627776,) float64 needs 8796093022208");
    mxp_memory_stats_get(&after);
    assert_int_equal(after.allocations, before.allocations);
    msg = npy_expect_error(MXP_ERR_FORMAT, 1, HEADER("'<i4'", "True", "(2, 3)"), zeros, 23);
    npy_assert_contains(msg, "file has 23 data bytes, shape (2, 3) int32 needs 24");
    /* On disk: only the header text is allocated, never the 8 TiB. */
    unsigned char buf[256];
    size_t n = npy_build(buf, sizeof buf, 1, HEADER("'<f8'", "False", "(1099511627776,)"), zeros, 16);
    FILE *f = fopen("test_npy_huge.npy", "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
    mxp_memory_stats_reset();
    mxp_array *a = NULL;
    assert_int_equal(mxp_npy_load(&a, "test_npy_huge.npy"), MXP_ERR_FORMAT);
    npy_assert_contains(mxp_last_error(), "test_npy_huge.npy: file has 16 data bytes");
    mxp_memory_stats_get(&after);
    assert_true(after.peak_bytes < after.current_bytes + 4096);
    assert_int_equal(after.current_bytes, before.current_bytes);
    remove("test_npy_huge.npy");
}

/* A pipe holding image[0..n) and then its end (a child writes what does
 * not fit the pipe's buffer); returns "/dev/fd/N" for mxp_npy_load. */
static const char *pipe_of(const unsigned char *image, size_t n, int *fd, pid_t *writer)
{
    static char path[32];
    int p[2];
    assert_int_equal(pipe(p), 0);
    *writer = fork();
    assert_true(*writer >= 0);
    if (*writer == 0) {
        close(p[0]);
        for (size_t off = 0; off < n;) {
            const ssize_t w = write(p[1], image + off, n - off);
            if (w <= 0)
                _exit(1);
            off += (size_t)w;
        }
        _exit(0);
    }
    close(p[1]);
    *fd = p[0];
    snprintf(path, sizeof path, "/dev/fd/%d", p[0]);
    return path;
}

static void close_pipe(int fd, pid_t writer)
{
    close(fd);
    int status;
    assert_int_equal(waitpid(writer, &status, 0), writer);
}

/* Under 150 bytes on a pipe that declare 8 GiB: refused, having held no
 * more than the stream's first 1 MiB buffer. */
static void test_npy_stream_declaring_8_gib_allocates_only_as_data_arrives(void **state)
{
    (void)state;
    unsigned char image[256];
    const size_t n = npy_build(image, sizeof image, 1, HEADER("'<f8'", "False", "(1073741824,)"), zeros, 16);
    assert_true(n < 150);
    int fd;
    pid_t writer;
    const char *path = pipe_of(image, n, &fd, &writer);
    mxp_memory_stats before = { 0 }, after = { 0 };
    mxp_memory_stats_get(&before);
    mxp_memory_stats_reset();
    mxp_array *a = NULL;
    assert_int_equal(mxp_npy_load(&a, path), MXP_ERR_FORMAT);
    assert_null(a);
    mxp_memory_stats_get(&after);
    assert_true(after.peak_bytes - before.current_bytes <= (1u << 20) + 4096);
    assert_int_equal(after.current_bytes, before.current_bytes);
    npy_assert_contains(mxp_last_error(),
                        "the stream ended after 16 data bytes, shape (1073741824,) float64 needs 8589934592");
    close_pipe(fd, writer);
}

/* A whole 6 MiB stream loads through the growing buffer, bit for bit, at a
 * peak of 1.5x its data. */
static void test_npy_stream_loads_whole_at_bounded_peak(void **state)
{
    (void)state;
    const int64_t count = 3 << 20; /* float16: 6 MiB */
    mxp_array *a = NULL, *b = NULL;
    assert_int_equal(mxp_array_random_uniform(&a, MXP_F16, 1, &count, -1, 1, 9), MXP_OK);
    void *image = NULL;
    size_t n = 0;
    assert_int_equal(mxp_npy_save_buffer(&image, &n, a), MXP_OK);
    int fd;
    pid_t writer;
    const char *path = pipe_of(image, n, &fd, &writer);
    mxp_memory_stats before = { 0 }, after = { 0 };
    mxp_memory_stats_get(&before);
    mxp_memory_stats_reset();
    assert_int_equal(mxp_npy_load(&b, path), MXP_OK);
    mxp_memory_stats_get(&after);
    close_pipe(fd, writer);
    const uint64_t data = (uint64_t)count * 2;
    assert_true(after.peak_bytes - before.current_bytes <= data + data / 2 + 4096);
    assert_memory_equal(mxp_array_data(b), mxp_array_data(a), data);
    /* and cut anywhere: refused, nothing kept */
    for (size_t cut = n - 1; cut > 200; cut /= 3) {
        mxp_array_free(b);
        b = NULL;
        path = pipe_of(image, cut, &fd, &writer);
        assert_int_equal(mxp_npy_load(&b, path), MXP_ERR_FORMAT);
        npy_assert_contains(mxp_last_error(), "the stream ended after");
        close_pipe(fd, writer);
    }
    mxp_free(image);
    mxp_array_free(a);
    mxp_array_free(b);
}

/* A sparse file (a few KiB on disk): a size that cannot hold the declared
 * data is refused before any allocation; one that can loads at one times
 * its data, no more (its holes are zeros that a read delivers). */
static void test_npy_sparse_file_costs_its_data_size_at_most(void **state)
{
    (void)state;
    const char *path = "test_npy_sparse.npy";
    unsigned char image[256];
    const struct { const char *shape; mxp_status st; } cases[] = {
        { "(1073741824,)", MXP_ERR_FORMAT }, /* 8 GiB declared in 16 MiB */
        { "(2097152,)", MXP_OK },            /* 16 MiB declared in 16 MiB */
    };
    for (int i = 0; i < 2; i++) {
        char h[128];
        snprintf(h, sizeof h, HEADER("'<f8'", "False", "%s"), cases[i].shape);
        const size_t n = npy_build(image, sizeof image, 1, h, NULL, 0);
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        assert_int_equal(fwrite(image, 1, n, f), n);
        assert_int_equal(ftruncate(fileno(f), (off_t)(n + (16u << 20))), 0);
        fclose(f);
        mxp_memory_stats before = { 0 }, after = { 0 };
        mxp_memory_stats_get(&before);
        mxp_memory_stats_reset();
        mxp_array *a = NULL;
        assert_int_equal(mxp_npy_load(&a, path), cases[i].st);
        mxp_memory_stats_get(&after);
        const uint64_t peak = after.peak_bytes - before.current_bytes;
        if (a) {
            assert_true(peak <= (16u << 20) + 4096);
            assert_int_equal(((const double *)mxp_array_data(a))[12345], 0.0);
        } else {
            assert_true(peak <= 4096); /* the header text only */
            npy_assert_contains(mxp_last_error(), "file has 16777216 data bytes");
        }
        mxp_array_free(a);
    }
    remove(path);
}

static void test_npy_refuses_objects_pickles_and_unsupported_descrs(void **state)
{
    (void)state;
    const struct { mxp_status st; const char *descr, *says; } cases[] = {
        { MXP_ERR_UNSUPPORTED, "'|O'", "descr '|O' is not supported: an object array holds pickled Python objects" },
        { MXP_ERR_UNSUPPORTED, "'<c8'", "descr '<c8' is not supported: complex" },
        { MXP_ERR_UNSUPPORTED, "'>c16'", "descr '>c16' is not supported: complex" },
        { MXP_ERR_UNSUPPORTED, "'|S10'", "descr '|S10' is not supported: byte strings" },
        { MXP_ERR_UNSUPPORTED, "'<U5'", "descr '<U5' is not supported: unicode strings" },
        { MXP_ERR_UNSUPPORTED, "'|V2'", "descr '|V2' is not supported: raw void bytes" },
        { MXP_ERR_UNSUPPORTED, "'<M8[ns]'", "descr '<M8[ns]' is not supported: datetime" },
        { MXP_ERR_UNSUPPORTED, "'<m8[s]'", "descr '<m8[s]' is not supported: datetime" },
        { MXP_ERR_UNSUPPORTED, "'<f16'", "descr '<f16' is not supported: no mxp dtype is a 16-byte 'f'" },
        { MXP_ERR_UNSUPPORTED, "'<i3'", "descr '<i3' is not supported" },
        { MXP_ERR_FORMAT, "'float32'", "descr 'float32' is not a dtype that mxp knows" },
        { MXP_ERR_FORMAT, "'<q'", "descr '<q' is not a dtype that mxp knows" },
        { MXP_ERR_FORMAT, "''", "descr '' is not a dtype" },
        { MXP_ERR_FORMAT, "'<'", "descr '<' is not a dtype" },
        { MXP_ERR_FORMAT, "'|f4'", "descr '|f4' does not say the byte order of a 4-byte type" },
        { MXP_ERR_UNSUPPORTED, "[('a', '<f4'), ('b', '<f4')]",
          "descr [('a', '<f4'), ('b', '<f4')] is not supported: mxp reads one-field structured dtypes only" },
        { MXP_ERR_UNSUPPORTED, "[('bf16', '<u2')]",
          "descr [('bf16', '<u2')] is not supported: field 'bf16' names no mxp type beyond NumPy's (bfloat16, the "
          "float8/float6/float4 types, int4/uint4/int2/uint2/int1/uint1, as ml_dtypes spells them)" },
        { MXP_ERR_UNSUPPORTED, "[('', '|V2')]", "field '' names no mxp type" },
        { MXP_ERR_FORMAT, "[('bfloat16', '<f2')]", "descr [('bfloat16', '<f2')]: field 'bfloat16' must hold the bits as u2" },
        { MXP_ERR_FORMAT, "[('float8_e5m2', '<u2')]", "field 'float8_e5m2' must hold the bits as u1" },
        { MXP_ERR_FORMAT, "[('float8_e5m2', '|O')]", "field 'float8_e5m2' must hold the bits as u1" },
        { MXP_ERR_UNSUPPORTED, "[('bfloat16', '<u2', (2,))]", "a field with a subarray shape" },
        { MXP_ERR_UNSUPPORTED, "{'names': ['bfloat16'], 'formats': ['<u2']}", "a descr given as a dict" },
        { MXP_ERR_FORMAT, "[]", "expected '(' to open a field" },
        { MXP_ERR_FORMAT, "[('bfloat16', '<u2')", "expected ']' to close the descr" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char h[256];
        snprintf(h, sizeof h, HEADER("%s", "False", "(1,)"), cases[i].descr);
        npy_assert_contains(npy_expect_error(cases[i].st, 1, h, zeros, 64), cases[i].says);
    }
}

static void test_npy_nul_bytes_and_garbage_in_the_header_are_refused(void **state)
{
    (void)state;
    mxp_array *a = NULL;
    unsigned char buf[256];
    const char *text = HEADER("'<f4'", "False", "(1,)") "   \n";
    const size_t n = npy_build(buf, sizeof buf, 1, text, zeros, 4);
    const struct { size_t at; unsigned char byte; const char *says; } cases[] = {
        { 12, 0x00, "NUL byte at offset 2 of the header" },
        { 57, 0x00, "NUL byte at offset 47 of the header" },
        { 11, 0x01, "byte 0x01 at offset 1 of the header is not printable ASCII" },
        { 20, 0xc3, "byte 0xc3 at offset 10" },
        { 20, 0x7f, "byte 0x7f" },
        { 20, 0x1b, "byte 0x1b" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char copy[256];
        memcpy(copy, buf, n);
        copy[cases[i].at] = cases[i].byte;
        assert_int_equal(mxp_npy_load_buffer(&a, copy, n), MXP_ERR_FORMAT);
        assert_null(a);
        npy_assert_contains(mxp_last_error(), cases[i].says);
    }
    const char *const garbage[] = {
        HEADER("'<f4'", "False", "(1,)") " junk",
        HEADER("'<f4'", "False", "(1,)") "}",
        HEADER("'<f4'", "False", "(1,)") " # comment",
        "{'descr': '<f4\", 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f\\x34', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4\n', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}}",
        "{{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,),,}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (,)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1,",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (",
        "{'descr': '<f4', 'fortran_order': False, 'shape': ",
        "{'descr': '<f4', 'fortran_order': False, 'shape'",
        "{'descr': '<f4', 'fortran_order': False, 'sha",
        "{'descr': [",
        "{'descr': [(",
        "{'descr': [('bfloat16'",
        "{'descr': [('bfloat16', '<u2'",
        "{'descr': [('bfloat16', '<u2')",
        "{'descr': '<f4', 'fortran_order': Tru",
        "{",
    };
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++)
        npy_expect_error(MXP_ERR_FORMAT, 1, garbage[i], zeros, 4);
    const char *msg = npy_expect_error(MXP_ERR_FORMAT, 1, garbage[0], zeros, 4);
    npy_assert_contains(msg, "unexpected text after the header dict at offset 58");
}

/* Every file in tests/fuzz/<dir> through mxp_npy_load_buffer: regressions
 * must be refused, the seed corpus must load.  Returns the file count. */
static int replay(const char *dir, bool expect_ok)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/fuzz/%s", MXP_TESTS_DIR, dir);
    DIR *d = opendir(path);
    assert_non_null(d);
    int count = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.' || strstr(e->d_name, ".md"))
            continue;
        snprintf(path, sizeof path, "%s/fuzz/%s/%s", MXP_TESTS_DIR, dir, e->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static unsigned char data[1 << 20];
        size_t n = fread(data, 1, sizeof data, f);
        fclose(f);
        mxp_array *a = NULL;
        mxp_status st = mxp_npy_load_buffer(&a, data, n);
        if ((st == MXP_OK) != expect_ok)
            fail_msg("%s: %s (%s)", path, mxp_status_str(st), mxp_last_error());
        mxp_array_free(a);
        count++;
    }
    closedir(d);
    return count;
}

static void test_npy_fuzz_regressions_are_refused_and_seeds_load(void **state)
{
    (void)state;
    assert_true(replay("regressions", false) >= 1);
    assert_true(replay("corpus", true) >= 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_npy_refuses_bad_magic_and_versions),
        cmocka_unit_test(test_npy_names_npz_archives),
        cmocka_unit_test(test_npy_refuses_headers_over_64k),
        cmocka_unit_test(test_npy_header_is_a_dict_with_exactly_three_keys),
        cmocka_unit_test(test_npy_each_value_is_validated),
        cmocka_unit_test(test_npy_shape_entries_are_non_negative_integers_up_to_32_dims),
        cmocka_unit_test(test_npy_shape_size_overflow_is_refused),
        cmocka_unit_test(test_npy_truncated_data_is_refused_before_any_allocation),
        cmocka_unit_test(test_npy_stream_declaring_8_gib_allocates_only_as_data_arrives),
        cmocka_unit_test(test_npy_stream_loads_whole_at_bounded_peak),
        cmocka_unit_test(test_npy_sparse_file_costs_its_data_size_at_most),
        cmocka_unit_test(test_npy_refuses_objects_pickles_and_unsupported_descrs),
        cmocka_unit_test(test_npy_nul_bytes_and_garbage_in_the_header_are_refused),
        cmocka_unit_test(test_npy_fuzz_regressions_are_refused_and_seeds_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
