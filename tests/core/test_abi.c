/* The struct ABI (docs/abi.md): a caller built against an earlier layout of
 * a public struct, which says so with struct_size = sizeof(its struct), is
 * read and written only within that layout by this library, whatever lies
 * beyond it; a struct larger than this release's is accepted only with
 * zeros beyond; any other struct_size is MXP_ERR_INVALID_ARGUMENT with a
 * sentence.  Linked against the shared library (libmxp.so.1), as an old
 * program would be.  Every entry point, struct by struct: test_abi_entries.c;
 * arrays of reports and the monitor's records: here.
 *
 * The earlier layouts are those of the history of include/mxp/ (git log -p
 * include/mxp/), each with the struct_size field in front:
 *   mxp_convert_opts before index_offset (11f1232),
 *   mxp_gemm_opts before the epilogue (4f5064b), before bias_len (71fed6b)
 *   and before the per-row A parameters (a_zero_points, a_scales),
 *   mxp_memory_stats before the workspace counters (450944f) and before the
 *   huge-page cache counters (9dd06dc). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "abi_entries.h"
#include "mxp.h"

typedef struct old_convert_opts { /* before index_offset */
    size_t struct_size;
    mxp_rounding rounding;
    mxp_overflow overflow;
    uint64_t seed;
    mxp_convert_flags *flags;
} old_convert_opts;

typedef struct old_gemm_opts_0 { /* the first: accumulator and rounding only */
    size_t struct_size;
    mxp_dtype acc_dtype;
    mxp_convert_opts convert;
} old_gemm_opts_0;

typedef struct old_gemm_opts_1 { /* before bias_len */
    size_t struct_size;
    mxp_dtype acc_dtype;
    mxp_convert_opts convert;
    const void *bias;
    mxp_dtype bias_dtype;
    mxp_bias_kind bias_kind;
    mxp_activation activation;
    bool clamp;
    double clamp_lo, clamp_hi;
    int32_t a_zero_point, b_zero_point, c_zero_point;
    const float *scales;
    size_t n_scales;
} old_gemm_opts_1;

typedef struct old_gemm_opts_2 { /* before the per-row A parameters */
    old_gemm_opts_1 s;
    size_t bias_len;
} old_gemm_opts_2;

typedef struct old_memory_stats_0 { /* the first eight counters */
    size_t struct_size;
    uint64_t current_bytes, peak_bytes, allocations, frees, pool_hits, pool_bytes, bytes_copied, bytes_converted;
} old_memory_stats_0;

typedef struct old_memory_stats_1 { /* before the huge-page cache counters */
    size_t struct_size;
    uint64_t current_bytes, peak_bytes, allocations, frees, pool_hits, pool_bytes, bytes_copied, bytes_converted;
    uint64_t workspace_bytes, workspace_reuses, hugepage_allocations;
} old_memory_stats_1;

/* An old struct followed by bytes it does not own (another variable of the
 * old program): whatever the library read there would be garbage, and it
 * must not write there. */
#define TAIL 64
#define GARBAGE 0xA5
#define WITH_TAIL(T) struct { T s; unsigned char tail[TAIL]; }

static void assert_tail_untouched(const unsigned char *tail)
{
    for (int i = 0; i < TAIL; i++)
        assert_int_equal(tail[i], GARBAGE);
}

/* ---- mxp_convert_opts ------------------------------------------------------ */

static void test_convert_old_layout(void **state)
{
    (void)state;
    enum { N = 257 };
    float src[N];
    uint16_t want[N], got[N];
    for (int i = 0; i < N; i++)
        src[i] = 1.0f + (float)i / 3000.0f;
    mxp_convert_flags fw = { 0 }, fg = { 0 };
    const mxp_convert_opts now = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 42, .flags = &fw };
    assert_int_equal(mxp_convert(want, MXP_BF16, src, MXP_F32, N, &now), MXP_OK);

    WITH_TAIL(old_convert_opts) old;
    memset(&old, GARBAGE, sizeof old); /* index_offset, as this release reads it, would be garbage */
    old.s = (old_convert_opts){ sizeof(old_convert_opts), MXP_ROUND_STOCHASTIC, MXP_OVERFLOW_INF, 42, &fg };
    assert_int_equal(mxp_convert(got, MXP_BF16, src, MXP_F32, N, (const mxp_convert_opts *)&old), MXP_OK);
    assert_memory_equal(got, want, sizeof want); /* index_offset 0, its default */
    assert_int_equal(fg.inexact, fw.inexact);
    assert_true(fg.inexact > 0);
    assert_tail_untouched(old.tail);

    /* the other entry points that take the options */
    memset(got, 0, sizeof got);
    assert_int_equal(mxp_convert_strided(got, MXP_BF16, 2, src, MXP_F32, 4, N, (const mxp_convert_opts *)&old),
                     MXP_OK);
    assert_memory_equal(got, want, sizeof want);
    assert_string_equal(mxp_convert_kernel_name(MXP_BF16, MXP_F32, (const mxp_convert_opts *)&old),
                        mxp_convert_kernel_name(MXP_BF16, MXP_F32, &now));
    int64_t shape[1] = { N };
    mxp_array *x = NULL, *y = NULL;
    assert_int_equal(mxp_array_wrap(&x, src, MXP_F32, 1, shape, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_astype(&y, x, MXP_BF16, (const mxp_convert_opts *)&old), MXP_OK);
    assert_memory_equal(mxp_array_data(y), want, sizeof want);
    mxp_array_free(y);
    mxp_array_free(x);
}

/* ---- mxp_gemm_opts --------------------------------------------------------- */

enum { M = 3, N = 5, K = 4 };

static void gemm_inputs(float *a, float *b)
{
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 7) - 2.5f;
    for (int i = 0; i < K * N; i++)
        b[i] = (float)(i % 5) * 0.75f - 1.0f;
}

static void test_gemm_old_layouts(void **state)
{
    (void)state;
    float a[M * K], b[K * N], bias[N] = { 1, -2, 3, -4, 5 };
    float want[M * N], got[M * N];
    gemm_inputs(a, b);

    /* before bias_len: a per-column bias with relu, bias_len "not given" */
    const mxp_gemm_opts now = { .bias = bias, .bias_dtype = MXP_F32, .bias_kind = MXP_BIAS_PER_COL,
                                .activation = MXP_ACT_RELU };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, want,
                              MXP_F32, N, &now),
                     MXP_OK);
    WITH_TAIL(old_gemm_opts_1) o1;
    memset(&o1, GARBAGE, sizeof o1); /* bias_len, as this release reads it, would be huge garbage */
    memset(&o1.s, 0, sizeof o1.s);
    o1.s.struct_size = sizeof(old_gemm_opts_1);
    o1.s.bias = bias;
    o1.s.bias_dtype = MXP_F32;
    o1.s.bias_kind = MXP_BIAS_PER_COL;
    o1.s.activation = MXP_ACT_RELU;
    memset(got, 0, sizeof got);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, got,
                              MXP_F32, N, (const mxp_gemm_opts *)&o1),
                     MXP_OK);
    assert_memory_equal(got, want, sizeof want);
    assert_tail_untouched(o1.tail);

    /* a bias_len of 1 where the library read garbage would be refused */
    o1.tail[0] = 1;
    memset(o1.tail + 1, 0, sizeof(size_t) - 1);
    memset(got, 0, sizeof got);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, got,
                              MXP_F32, N, (const mxp_gemm_opts *)&o1),
                     MXP_OK);
    assert_memory_equal(got, want, sizeof want);

    /* the first layout: stochastic rounding into bfloat16, nothing else */
    uint16_t want16[M * N], got16[M * N];
    const mxp_gemm_opts now0 = { .convert = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 7 } };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 0.1, a, MXP_F32, K, b, MXP_F32, N, 0.0, want16,
                              MXP_BF16, N, &now0),
                     MXP_OK);
    WITH_TAIL(old_gemm_opts_0) o0;
    memset(&o0, GARBAGE, sizeof o0); /* bias and every epilogue field: garbage */
    memset(&o0.s, 0, sizeof o0.s);
    o0.s.struct_size = sizeof(old_gemm_opts_0);
    o0.s.convert = (mxp_convert_opts){ .rounding = MXP_ROUND_STOCHASTIC, .seed = 7 };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 0.1, a, MXP_F32, K, b, MXP_F32, N, 0.0, got16,
                              MXP_BF16, N, (const mxp_gemm_opts *)&o0),
                     MXP_OK);
    assert_memory_equal(got16, want16, sizeof want16);
    assert_tail_untouched(o0.tail);
    assert_string_equal(mxp_gemm_kernel_name(MXP_F32, MXP_F32, (const mxp_gemm_opts *)&o0),
                        mxp_gemm_kernel_name(MXP_F32, MXP_F32, &now0));

    /* mxp_matmul with the old layout (it requires bias_len with a bias: none here) */
    int64_t sa[2] = { M, K }, sb[2] = { K, N };
    mxp_array *xa = NULL, *xb = NULL, *xc = NULL;
    assert_int_equal(mxp_array_wrap(&xa, a, MXP_F32, 2, sa, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_array_wrap(&xb, b, MXP_F32, 2, sb, NULL, false, NULL, NULL), MXP_OK);
    assert_int_equal(mxp_matmul(&xc, xa, xb, (const mxp_gemm_opts *)&o0), MXP_OK);
    assert_int_equal(mxp_array_dtype(xc), MXP_F32);
    mxp_array_free(xc);
    mxp_array_free(xb);
    mxp_array_free(xa);

    /* before a_zero_points: an integer GEMM with per-column scales, garbage where the per-row pointers now are */
    uint8_t a8[M * K];
    int8_t b8[K * N];
    for (int i = 0; i < M * K; i++)
        a8[i] = (uint8_t)(i * 37 % 251);
    for (int i = 0; i < K * N; i++)
        b8[i] = (int8_t)(i * 11 % 200 - 100);
    float sc[N] = { 0.5f, 0.25f, 1.5f, 2, 0.125f };
    const mxp_gemm_opts now2 = { .a_zero_point = 3, .scales = sc, .n_scales = N };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a8, MXP_U8, K, b8, MXP_S8, N, 0.0, want,
                              MXP_F32, N, &now2),
                     MXP_OK);
    WITH_TAIL(old_gemm_opts_2) o2;
    memset(&o2, GARBAGE, sizeof o2);
    memset(&o2.s, 0, sizeof o2.s);
    o2.s.s.struct_size = sizeof(old_gemm_opts_2);
    o2.s.s.a_zero_point = 3;
    o2.s.s.scales = sc;
    o2.s.s.n_scales = N;
    memset(got, 0, sizeof got);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a8, MXP_U8, K, b8, MXP_S8, N, 0.0, got,
                              MXP_F32, N, (const mxp_gemm_opts *)&o2),
                     MXP_OK);
    assert_memory_equal(got, want, sizeof want);
    assert_tail_untouched(o2.tail);
}

/* ---- mxp_memory_stats ------------------------------------------------------ */

static void test_memory_stats_old_layouts(void **state)
{
    (void)state;
    void *p = mxp_malloc(1000); /* some live bytes */
    mxp_memory_stats now = { 0 };
    mxp_get_memory_stats(&now);
    assert_true(now.current_bytes >= 1000);

    WITH_TAIL(old_memory_stats_0) s0;
    memset(&s0, GARBAGE, sizeof s0);
    s0.s.struct_size = sizeof(old_memory_stats_0);
    mxp_get_memory_stats((mxp_memory_stats *)&s0);
    assert_int_equal(s0.s.struct_size, sizeof(old_memory_stats_0)); /* left as the caller set it */
    assert_int_equal(s0.s.current_bytes, now.current_bytes);
    assert_int_equal(s0.s.allocations, now.allocations);
    assert_int_equal(s0.s.bytes_converted, now.bytes_converted);
    assert_tail_untouched(s0.tail); /* workspace_bytes and after: not written */

    WITH_TAIL(old_memory_stats_1) s1;
    memset(&s1, GARBAGE, sizeof s1);
    s1.s.struct_size = sizeof(old_memory_stats_1);
    mxp_memory_stats_get((mxp_memory_stats *)&s1); /* the old name too */
    assert_int_equal(s1.s.current_bytes, now.current_bytes);
    assert_int_equal(s1.s.workspace_bytes, now.workspace_bytes);
    assert_int_equal(s1.s.hugepage_allocations, now.hugepage_allocations);
    assert_tail_untouched(s1.tail);
    mxp_free(p);
}

/* ---- sizes that are no layout --------------------------------------------- */

static void test_oversized_and_bad_sizes(void **state)
{
    (void)state;
    float src[4] = { 1, 2, 3, 4 };
    uint16_t dst[4] = { 0 };

    /* a newer caller's larger struct: zeros beyond this release's fields are fine */
    struct { mxp_convert_opts o; uint64_t newer[4]; } big;
    memset(&big, 0, sizeof big);
    big.o.struct_size = sizeof big;
    assert_int_equal(mxp_convert(dst, MXP_BF16, src, MXP_F32, 4, &big.o), MXP_OK);
    /* ... a field this library does not know, set: refused, nothing written */
    big.newer[2] = 0xdeadbeef;
    memset(dst, 0, sizeof dst);
    assert_int_equal(mxp_convert(dst, MXP_BF16, src, MXP_F32, 4, &big.o), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "struct_size"));
    assert_non_null(strstr(mxp_last_error(), "mxp_convert"));
    for (int i = 0; i < 4; i++)
        assert_int_equal(dst[i], 0);
    assert_string_equal(mxp_convert_kernel_name(MXP_BF16, MXP_F32, &big.o), "invalid");

    /* not 0, not a layout's size */
    const size_t bad[] = { 1, sizeof(size_t), sizeof(old_convert_opts) - 4, sizeof(old_convert_opts) + 4,
                           sizeof(mxp_convert_opts) + 1000000, (size_t)-1 };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mxp_convert_opts o = { .struct_size = bad[i] };
        mxp_clear_error();
        assert_int_equal(mxp_convert(dst, MXP_BF16, src, MXP_F32, 4, &o), MXP_ERR_INVALID_ARGUMENT);
        assert_true(strlen(mxp_last_error()) > 20);
    }
    mxp_convert_opts exact = { .struct_size = sizeof(mxp_convert_opts) };
    assert_int_equal(mxp_convert(dst, MXP_BF16, src, MXP_F32, 4, &exact), MXP_OK);

    /* gemm: the outer struct, and the convert options embedded in it, which
     * follow the outer layout (0 or this release's size) */
    float a[M * K], b[K * N], c[M * N];
    gemm_inputs(a, b);
    struct { mxp_gemm_opts o; unsigned char newer[24]; } g;
    memset(&g, 0, sizeof g);
    g.o.struct_size = sizeof g;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c,
                              MXP_F32, N, &g.o),
                     MXP_OK);
    g.newer[23] = 1;
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c,
                              MXP_F32, N, &g.o),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "mxp_gemm"));
    mxp_gemm_opts ge = { .convert = { .struct_size = sizeof(old_convert_opts) } };
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c,
                              MXP_F32, N, &ge),
                     MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "opts->convert"));
    ge.convert.struct_size = sizeof(mxp_convert_opts);
    assert_int_equal(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a, MXP_F32, K, b, MXP_F32, N, 0.0, c,
                              MXP_F32, N, &ge),
                     MXP_OK);
    assert_string_equal(mxp_gemm_kernel_name(MXP_F32, MXP_F32, &g.o), "invalid");

    /* a report the library fills: a bad size gets nothing written */
    struct { mxp_memory_stats s; uint64_t newer[2]; } ms;
    memset(&ms, GARBAGE, sizeof ms);
    ms.s.struct_size = sizeof ms;
    mxp_clear_error();
    mxp_get_memory_stats(&ms.s);
    assert_int_equal(ms.s.current_bytes, 0xA5A5A5A5A5A5A5A5ull); /* untouched */
    assert_non_null(strstr(mxp_last_error(), "mxp_get_memory_stats"));
    memset(&ms, 0, sizeof ms);
    ms.s.struct_size = sizeof ms;
    mxp_get_memory_stats(&ms.s);
    assert_true(ms.s.allocations > 0);
    assert_int_equal(ms.newer[0], 0);
    assert_int_equal(ms.newer[1], 0);
}

/* ---- arrays of reports ------------------------------------------------------ */

/* The bytes after struct_size, the embedded report's struct_size aside. */
static void assert_same_row(const mxp_roundtrip_row *got, const mxp_roundtrip_row *want)
{
    mxp_roundtrip_row g = *got, w = *want;
    g.struct_size = w.struct_size = 0;
    g.report.struct_size = w.report.struct_size = 0;
    assert_memory_equal(&g, &w, sizeof g);
}

static void test_report_arrays(void **state)
{
    (void)state;
    float v[6] = { 1e-3f, 70000.0f, -2.5f, 0.1f, 3e-8f, -1.0f };
    const int64_t shape[1] = { 6 };
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_wrap(&x, v, MXP_F32, 1, shape, NULL, false, NULL, NULL), MXP_OK);
    const mxp_dtype cand[3] = { MXP_BF16, MXP_F16, MXP_E4M3 };
    mxp_roundtrip_row want[3] = { 0 };
    assert_int_equal(mxp_roundtrip_analysis(x, cand, 3, want), MXP_OK);
    assert_int_equal(want[1].dtype, MXP_F16);
    assert_true(want[1].overflow == 1);

    /* every row sizeof, the embedded reports' too */
    mxp_roundtrip_row got[3];
    for (int i = 0; i < 3; i++)
        got[i] = (mxp_roundtrip_row){ .struct_size = sizeof got[i], .report.struct_size = sizeof got[i].report };
    assert_int_equal(mxp_roundtrip_analysis(x, cand, 3, got), MXP_OK);
    for (int i = 0; i < 3; i++) {
        assert_same_row(&got[i], &want[i]);
        assert_int_equal(got[i].struct_size, sizeof got[i]);
        assert_int_equal(got[i].report.struct_size, sizeof got[i].report);
    }

    /* a newer caller's larger rows: its sizeof is the stride; the bytes beyond
     * each row are left as they are (zero) */
    struct big { mxp_roundtrip_row r; uint64_t newer[3]; } big[3];
    memset(big, 0, sizeof big);
    for (int i = 0; i < 3; i++)
        big[i].r.struct_size = sizeof big[i];
    assert_int_equal(mxp_roundtrip_analysis(x, cand, 3, &big[0].r), MXP_OK);
    for (int i = 0; i < 3; i++) {
        assert_same_row(&big[i].r, &want[i]);
        assert_int_equal(big[i].r.struct_size, sizeof big[i]);
        for (int k = 0; k < 3; k++)
            assert_int_equal(big[i].newer[k], 0);
    }

    /* rows that disagree, or an embedded report of another size: refused,
     * nothing written */
    memset(got, 0, sizeof got);
    got[0].struct_size = got[2].struct_size = sizeof got[0];
    got[0].dtype = (mxp_dtype)99;
    assert_int_equal(mxp_roundtrip_analysis(x, cand, 3, got), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "mxp_roundtrip_analysis: rows[1].struct_size is 0"));
    assert_int_equal(got[0].dtype, 99);
    got[1].struct_size = sizeof got[1];
    got[2].report.struct_size = sizeof got[2];
    assert_int_equal(mxp_roundtrip_analysis(x, cand, 3, got), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "rows[2]->report.struct_size"));
    assert_int_equal(got[0].dtype, 99);

    /* the advisor's rows and advice: the same rules */
    mxp_roundtrip_row rows[MXP_ADVISOR_CANDIDATES] = { 0 }, rows_sized[MXP_ADVISOR_CANDIDATES];
    mxp_advice adv = { 0 }, adv_sized = { .struct_size = sizeof adv_sized, .row.struct_size = sizeof adv_sized.row };
    const mxp_requirement req = { MXP_REQUIRE_NO_OVERFLOW, 0 };
    assert_int_equal(mxp_recommend_dtype_rows(x, &req, &adv, rows), MXP_OK);
    for (int i = 0; i < MXP_ADVISOR_CANDIDATES; i++)
        rows_sized[i] = (mxp_roundtrip_row){ .struct_size = sizeof rows_sized[i] };
    assert_int_equal(mxp_recommend_dtype_rows(x, &req, &adv_sized, rows_sized), MXP_OK);
    for (int i = 0; i < MXP_ADVISOR_CANDIDATES; i++)
        assert_same_row(&rows_sized[i], &rows[i]);
    assert_int_equal(adv_sized.dtype, adv.dtype);
    assert_string_equal(adv_sized.reason, adv.reason);
    assert_same_row(&adv_sized.row, &adv.row);
    assert_int_equal(adv_sized.row.struct_size, sizeof adv_sized.row); /* as the caller set them */
    assert_int_equal(adv.row.struct_size, 0);
    rows_sized[4].struct_size = 0;
    assert_int_equal(mxp_recommend_dtype_rows(x, &req, &adv_sized, rows_sized), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "mxp_recommend_dtype_rows: rows_out[4].struct_size"));
    /* mxp_recommend_dtype_among: its rows, as many as its candidates, alike */
    const mxp_dtype among[2] = { MXP_F32, MXP_FLOAT4_E2M1FN };
    mxp_roundtrip_row rows2[2] = { 0 };
    assert_int_equal(mxp_recommend_dtype_among(x, &req, among, 2, &adv, rows2), MXP_OK);
    for (int i = 0; i < 2; i++)
        rows_sized[i] = (mxp_roundtrip_row){ .struct_size = sizeof rows_sized[i] };
    assert_int_equal(mxp_recommend_dtype_among(x, &req, among, 2, &adv_sized, rows_sized), MXP_OK);
    for (int i = 0; i < 2; i++)
        assert_same_row(&rows_sized[i], &rows2[i]);
    assert_string_equal(adv_sized.reason, adv.reason);
    rows_sized[1].struct_size = 0;
    assert_int_equal(mxp_recommend_dtype_among(x, &req, among, 2, &adv_sized, rows_sized), MXP_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(mxp_last_error(), "mxp_recommend_dtype_among: rows_out[1].struct_size"));
    mxp_array_free(x);
}

/* mxp_monitor_history hands out the library's own records, which say their
 * layout; mxp_monitor_history_get copies one into the caller's. */
static void test_tensor_stats_history(void **state)
{
    (void)state;
    mxp_monitor *m = NULL;
    assert_int_equal(mxp_monitor_create(&m, NULL), MXP_OK);
    float v[4] = { 1e-9f, 70000.0f, -2.5f, 0.0f };
    const int64_t shape[1] = { 4 };
    mxp_array *x = NULL;
    assert_int_equal(mxp_array_wrap(&x, v, MXP_F32, 1, shape, NULL, false, NULL, NULL), MXP_OK);
    mxp_tensor_stats rec[3];
    for (int i = 0; i < 3; i++) {
        rec[i] = (mxp_tensor_stats){ .struct_size = i == 1 ? sizeof rec[i] : 0 };
        v[2] = (float)i;
        assert_int_equal(mxp_monitor_record(m, 10 + i, "g", MXP_ROLE_GRADIENT, x, &rec[i]), MXP_OK);
        assert_int_equal(rec[i].struct_size, i == 1 ? sizeof rec[i] : 0);
        assert_int_equal(rec[i].step, 10 + i);
    }
    const mxp_tensor_stats *h = NULL;
    size_t n = 0;
    assert_int_equal(mxp_monitor_history(m, "g", &h, &n), MXP_OK);
    assert_int_equal(n, 3);
    WITH_TAIL(mxp_tensor_stats) got;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(h[i].struct_size, sizeof(mxp_tensor_stats));
        assert_memory_equal((const char *)&h[i] + sizeof(size_t), (const char *)&rec[i] + sizeof(size_t),
                            sizeof h[i] - sizeof(size_t));
        memset(&got, GARBAGE, sizeof got);
        got.s.struct_size = sizeof got.s;
        assert_int_equal(mxp_monitor_history_get(m, "g", i, &got.s), MXP_OK);
        assert_int_equal(got.s.struct_size, sizeof got.s);
        assert_memory_equal((const char *)&got.s + sizeof(size_t), (const char *)&h[i] + sizeof(size_t),
                            sizeof got.s - sizeof(size_t));
        assert_tail_untouched(got.tail);
    }
    assert_int_equal(mxp_monitor_history_get(m, "g", 3, &got.s), MXP_ERR_INDEX);
    mxp_array_free(x);
    mxp_monitor_free(m);
}

/* Zero-initialized structs and designated initializers, as code written
 * against earlier headers has them, mean this release's layout. */
static void test_zero_means_this_release(void **state)
{
    (void)state;
    assert_int_equal(((mxp_convert_opts){ .rounding = MXP_ROUND_UP }).struct_size, 0);
    float src[2] = { 1.0f + 1.0f / 1024, -3.0f };
    uint16_t dst[2];
    const mxp_convert_opts up = { .rounding = MXP_ROUND_UP };
    assert_int_equal(mxp_convert(dst, MXP_BF16, src, MXP_F32, 2, &up), MXP_OK);
    assert_int_equal(dst[0], 0x3f81); /* rounded up */
    mxp_memory_stats s = { 0 };
    mxp_get_memory_stats(&s);
    assert_int_equal(s.struct_size, 0);
    assert_true(s.allocations > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_convert_old_layout),
        cmocka_unit_test(test_gemm_old_layouts),
        cmocka_unit_test(test_memory_stats_old_layouts),
        cmocka_unit_test(test_oversized_and_bad_sizes),
        cmocka_unit_test(test_report_arrays),
        cmocka_unit_test(test_tensor_stats_history),
        cmocka_unit_test(test_zero_means_this_release),
        cmocka_unit_test_setup_teardown(test_abi_every_entry_point, abi_entries_setup, abi_entries_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
