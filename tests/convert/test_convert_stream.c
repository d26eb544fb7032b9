/* The streaming-store threshold (mxp_stream_threshold, mxp/alloc.h): its
 * default from the L3 (mxp_cpu_l3_bytes), the override, and the one thing
 * it may not change: the bits.  Conversions of every family of kernels
 * that can stream (float32, float64, 16-bit and 8-bit sources; narrowing,
 * widening, the integer and sub-byte targets; every deterministic mode and
 * stochastic rounding) and the row operations that stream (take, the
 * float32 norms), with streaming stores forced (threshold 1) and never
 * taken (SIZE_MAX), at every ISA level: the same bytes, nothing written
 * past the output.  The destinations start off a vector boundary, so the
 * streaming loops' separate heads run too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mxp.h"

enum { N = 70001, GUARD = 64, MIB = 1 << 20 };

static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void test_threshold_default_and_override(void **state)
{
    (void)state;
    const size_t l3 = mxp_cpu_l3_bytes();
    assert_int_equal(l3 % 64, 0);
    if (l3) { /* a cache of some MiB, not a misread leaf */
        assert_true(l3 >= 256 * 1024);
        assert_true(l3 <= (size_t)4 << 30);
    }
    mxp_set_stream_threshold(0);
    if (!getenv("MXP_STREAM_BYTES")) {
        const size_t half = l3 / 2;
        const size_t lo = 4 * (size_t)MIB, hi = 64 * (size_t)MIB;
        const size_t want = half < lo ? lo : half > hi ? hi : half;
        assert_int_equal(mxp_stream_threshold(), want);
    }
    const size_t dflt = mxp_stream_threshold();
    mxp_set_stream_threshold(12345);
    assert_int_equal(mxp_stream_threshold(), 12345);
    mxp_set_stream_threshold(SIZE_MAX);
    assert_int_equal(mxp_stream_threshold(), SIZE_MAX);
    mxp_set_stream_threshold(0);
    assert_int_equal(mxp_stream_threshold(), dflt);
}

typedef struct pair {
    mxp_dtype src, dst;
} pair;

/* Random source bits: NaNs, infinities, subnormals and huge values among
 * them, so that every branch of a kernel (and the reference's) runs. */
static void fill_bits(unsigned char *p, size_t bytes, uint64_t seed)
{
    for (size_t i = 0; i < bytes; i += 8) {
        const uint64_t v = next(&seed);
        memcpy(p + i, &v, bytes - i < 8 ? bytes - i : 8);
    }
}

/* Values near 1 in float64, converted into the source dtype (most
 * elements in range of every target). */
static void fill_values(unsigned char *p, mxp_dtype t, size_t n, uint64_t seed)
{
    double *d = malloc(n * sizeof *d);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++)
        d[i] = ((double)(next(&seed) >> 11) * 0x1p-53 - 0.5) * (i % 7 == 0 ? 1e-3 : 12.0);
    assert_int_equal(mxp_convert(p, t, d, MXP_F64, n, NULL), MXP_OK);
    free(d);
}

static void test_conversions_same_bits_streaming_or_not(void **state)
{
    (void)state;
    static const pair pairs[] = {
        { MXP_F32, MXP_BF16 },           { MXP_F32, MXP_F16 },           { MXP_F32, MXP_E4M3 },
        { MXP_F32, MXP_S8 },             { MXP_F32, MXP_S4 },            { MXP_F64, MXP_F32 },
        { MXP_F64, MXP_BF16 },           { MXP_F64, MXP_E5M2 },       { MXP_BF16, MXP_F32 },
        { MXP_F16, MXP_F32 },            { MXP_E4M3, MXP_F32 },       { MXP_BF16, MXP_E4M3 },
        { MXP_BF16, MXP_E2M1 },     { MXP_BF16, MXP_S4 },           { MXP_F16, MXP_E3M4 },
        { MXP_F16, MXP_E2M3 },      { MXP_F16, MXP_U2 },            { MXP_F16, MXP_S8 },
    };
    static const mxp_rounding modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_UP, MXP_ROUND_TOWARD_ZERO,
                                          MXP_ROUND_STOCHASTIC };
    unsigned char *src = malloc(N * 8), *a = malloc(N * 8 + 2 * GUARD), *b = malloc(N * 8 + 2 * GUARD);
    assert_non_null(src);
    assert_non_null(a);
    assert_non_null(b);
    size_t runs = 0;
    for (int isa = MXP_ISA_SCALAR; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
            const pair pr = pairs[k];
            const size_t ss = mxp_dtype_itemsize(pr.src), ds = mxp_dtype_itemsize(pr.dst);
            for (int values = 0; values < 2; values++) {
                if (values)
                    fill_values(src, pr.src, N, 7 + k);
                else
                    fill_bits(src, N * ss, 11 + k);
                for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
                    const mxp_convert_opts o = { .rounding = modes[m], .seed = 42, .index_offset = 5 };
                    const size_t off = ds; /* one element past a vector boundary */
                    memset(a, 0xa5, N * ds + 2 * GUARD);
                    memset(b, 0xa5, N * ds + 2 * GUARD);
                    mxp_set_stream_threshold(1);
                    assert_int_equal(mxp_convert(a + GUARD + off, pr.dst, src, pr.src, N - 1, &o), MXP_OK);
                    mxp_set_stream_threshold(SIZE_MAX);
                    assert_int_equal(mxp_convert(b + GUARD + off, pr.dst, src, pr.src, N - 1, &o), MXP_OK);
                    if (memcmp(a, b, N * ds + 2 * GUARD) != 0) {
                        print_error("%s -> %s, %s, %s source, at %s: streaming and plain stores differ\n",
                                    mxp_dtype_name(pr.src), mxp_dtype_name(pr.dst), mxp_rounding_name(modes[m]),
                                    values ? "valued" : "random-bit", mxp_isa_name((mxp_isa)isa));
                        fail();
                    }
                    for (size_t i = 0; i < GUARD + off; i++) /* nothing before the output */
                        assert_int_equal(a[i], 0xa5);
                    for (size_t i = GUARD + off + (N - 1) * ds; i < N * ds + 2 * GUARD; i++) /* nor after */
                        assert_int_equal(a[i], 0xa5);
                    runs++;
                }
            }
        }
    }
    assert_int_equal(mxp_set_isa(mxp_isa_supported()), MXP_OK);
    mxp_set_stream_threshold(0);
    assert_true(runs >= sizeof pairs / sizeof pairs[0] * 8);
    free(src);
    free(a);
    free(b);
}

/* out = op(x) with streaming stores forced, then never: equal arrays. */
typedef mxp_status row_op(mxp_array **out, const mxp_array *x, const mxp_array *extra);

static mxp_status op_take(mxp_array **out, const mxp_array *table, const mxp_array *idx)
{
    return mxp_take(out, table, idx, 0, 0);
}

static mxp_status op_rms(mxp_array **out, const mxp_array *x, const mxp_array *w)
{
    return mxp_rms_norm(out, x, 1, w, 1e-6, 0);
}

static mxp_status op_l2(mxp_array **out, const mxp_array *x, const mxp_array *unused)
{
    (void)unused;
    return mxp_l2_normalize(out, x, -1, 1e-12, 0);
}

static void check_row_op(const char *name, row_op *op, const mxp_array *x, const mxp_array *extra)
{
    mxp_array *a = NULL, *b = NULL;
    mxp_set_stream_threshold(1);
    const mxp_status st = op(&a, x, extra);
    if (st != MXP_OK)
        print_error("%s: %s\n", name, mxp_last_error());
    assert_int_equal(st, MXP_OK);
    mxp_set_stream_threshold(SIZE_MAX);
    assert_int_equal(op(&b, x, extra), MXP_OK);
    mxp_set_stream_threshold(0);
    const size_t bytes = (size_t)mxp_array_size(a) * mxp_array_itemsize(a);
    assert_int_equal(mxp_array_size(a), mxp_array_size(b));
    if (memcmp(mxp_array_data(a), mxp_array_data(b), bytes) != 0) {
        print_error("%s at %s: streaming and plain stores differ\n", name, mxp_isa_name(mxp_get_isa()));
        fail();
    }
    mxp_array_free(a);
    mxp_array_free(b);
}

static void test_row_operations_same_bits_streaming_or_not(void **state)
{
    (void)state;
    /* rows of 1027 float32 (not a whole number of vectors), 61 rows */
    const int64_t xs[2] = { 61, 1027 }, ws = 1027, ts[2] = { 300, 1027 }, is = 257;
    mxp_array *x, *w, *table, *idx;
    assert_int_equal(mxp_array_random_normal(&x, MXP_F32, 2, xs, 0, 2, 1), MXP_OK);
    assert_int_equal(mxp_array_random_normal(&w, MXP_F32, 1, &ws, 1, 0.5, 2), MXP_OK);
    assert_int_equal(mxp_array_random_normal(&table, MXP_F32, 2, ts, 0, 1, 3), MXP_OK);
    assert_int_equal(mxp_array_random_uniform(&idx, MXP_S64, 1, &is, -300, 299, 4), MXP_OK);
    for (int isa = MXP_ISA_SCALAR; isa <= (int)mxp_isa_supported(); isa++) {
        assert_int_equal(mxp_set_isa((mxp_isa)isa), MXP_OK);
        check_row_op("take", op_take, table, idx);
        check_row_op("rms_norm", op_rms, x, w);
        check_row_op("l2_normalize", op_l2, x, NULL);
    }
    assert_int_equal(mxp_set_isa(mxp_isa_supported()), MXP_OK);
    mxp_array_free(x);
    mxp_array_free(w);
    mxp_array_free(table);
    mxp_array_free(idx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threshold_default_and_override),
        cmocka_unit_test(test_conversions_same_bits_streaming_or_not),
        cmocka_unit_test(test_row_operations_same_bits_streaming_or_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
