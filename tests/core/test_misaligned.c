/* Misaligned data (docs/reliability.md, "Misaligned data"): element
 * buffers at any byte address and strides of any byte count are read and
 * written as bytes, never through a misaligned typed pointer, and give the
 * bits an aligned copy gives.  Each case runs its work twice -- on buffers
 * at a 64-byte boundary and on the same bytes one past it (and, for the
 * strided calls, with a stride one byte longer than the element) -- and
 * compares the outputs byte for byte, at every ISA level.  Each case runs
 * in a forked child: under make check-sanitize, UBSan's alignment check
 * aborts the child at the first misaligned access, which fails the case
 * by name. */
#define _XOPEN_SOURCE 700
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "mxp.h"

enum { N = 97, BUF = 1 << 18, MAXFILL = 4096 };

/* One run: inputs at in (filled by the case from seed bytes), outputs at
 * out; shift 0 or 1: the byte offset of both from a 64-byte boundary. */
typedef void case_fn(unsigned char *in, unsigned char *out, int shift);

static _Alignas(64) unsigned char in_buf[2][BUF + 64], out_buf[2][BUF + 64];

static void fill_bytes(unsigned char *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (unsigned char)(seed >> 24);
    }
}

/* Values that hold in every dtype (small integers and halves), as bytes
 * of dt at p (n elements, consecutive). */
static void fill_values(void *p, mxp_dtype dt, size_t n, uint32_t seed)
{
    double v[MAXFILL];
    assert_true(n <= MAXFILL);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (double)((int)(seed >> 27) - 16) * 0.5;
    }
    unsigned char tmp[MAXFILL * 8];
    assert_int_equal(mxp_convert(tmp, dt, v, MXP_F64, n, NULL), MXP_OK);
    memcpy(p, tmp, n * mxp_dtype_itemsize(dt));
}

static void must(mxp_status st)
{
    if (st != MXP_OK) {
        fprintf(stderr, "status %s: %s\n", mxp_status_str(st), mxp_last_error());
        _exit(3);
    }
}

/* ---- the cases ------------------------------------------------------------ */

static const mxp_dtype all_types[] = { MXP_F32, MXP_F64, MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2,
                                       MXP_S8,  MXP_U8,  MXP_S16, MXP_U16,  MXP_S32,  MXP_S64 };
#define NTYPES (sizeof all_types / sizeof all_types[0])

static void convert_all_pairs(unsigned char *in, unsigned char *out, int shift)
{
    (void)shift;
    static const mxp_rounding modes[] = { MXP_ROUND_NEAREST_EVEN, MXP_ROUND_TOWARD_ZERO, MXP_ROUND_STOCHASTIC };
    size_t at = 0;
    for (size_t s = 0; s < NTYPES; s++) {
        fill_values(in, all_types[s], N, (uint32_t)s);
        for (size_t d = 0; d < NTYPES; d++) {
            for (size_t m = 0; m < 3; m++) {
                mxp_convert_flags flags = { 0, 0, 0, 0 };
                const mxp_convert_opts o = { .rounding = modes[m], .seed = 7, .flags = m == 1 ? &flags : NULL };
                must(mxp_convert(out + at, all_types[d], in, all_types[s], N, &o));
                at += N * mxp_dtype_itemsize(all_types[d]);
                if (at + N * 8 > BUF)
                    at = 0; /* the later pairs overwrite: compared at the end only */
            }
        }
    }
}

static _Alignas(64) unsigned char strided_out[BUF + 64];

static void convert_strided_odd_strides(unsigned char *in, unsigned char *out, int shift)
{
    size_t at = 0;
    for (size_t s = 0; s < NTYPES; s++) {
        const size_t is = mxp_dtype_itemsize(all_types[s]), ss = is + (size_t)shift;
        for (size_t i = 0; i < N; i++) /* the same elements in both runs: any bytes, NaNs included */
            fill_bytes(in + i * ss, is, (uint32_t)(s * 1000 + i));
        for (size_t d = 0; d < NTYPES; d++) {
            const size_t os = mxp_dtype_itemsize(all_types[d]), ds = os + (size_t)shift;
            unsigned char *o = strided_out + shift;
            must(mxp_convert_strided(o, all_types[d], (ptrdiff_t)ds, in, all_types[s], (ptrdiff_t)ss, N, NULL));
            for (size_t i = 0; i < N; i++, at += os) /* packed, to compare element by element */
                memcpy(out + at % (BUF - 8), o + i * ds, os);
        }
    }
}

static void gemm_types(unsigned char *in, unsigned char *out, int shift)
{
    (void)shift;
    static const mxp_dtype ab[][3] = {
        { MXP_F32, MXP_F32, MXP_F32 },  { MXP_F64, MXP_F64, MXP_F64 },  { MXP_BF16, MXP_BF16, MXP_F32 },
        { MXP_F16, MXP_F16, MXP_F32 },  { MXP_E4M3, MXP_E4M3, MXP_F32 }, { MXP_BF16, MXP_BF16, MXP_BF16 },
        { MXP_U8, MXP_S8, MXP_S32 },    { MXP_S8, MXP_S8, MXP_S32 },     { MXP_F32, MXP_BF16, MXP_F32 },
    };
    enum { M = 19, K = 23, NN = 21 };
    for (size_t t = 0; t < sizeof ab / sizeof ab[0]; t++) {
        unsigned char *a = in, *b = in + 8 * M * K + 8;
        fill_values(a, ab[t][0], M * K, (uint32_t)t);
        fill_values(b, ab[t][1], K * NN, (uint32_t)t + 100);
        unsigned char *c = out + t * (8 * M * NN + 8);
        fill_values(c, ab[t][2], M * NN, 3);
        const double beta = ab[t][2] == MXP_S32 ? 0.0 : 0.5;
        must(mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, NN, K, 1.0, a, ab[t][0], K, b, ab[t][1], NN, beta, c, ab[t][2],
                      NN, NULL));
        must(mxp_gemm(MXP_TRANS, MXP_TRANS, M, NN, K, 1.0, a, ab[t][0], M, b, ab[t][1], K, 0.0, c, ab[t][2], NN,
                      NULL));
    }
}

static void elementwise_strided(unsigned char *in, unsigned char *out, int shift)
{
    static const mxp_dtype types[] = { MXP_F32, MXP_F64, MXP_F16, MXP_BF16, MXP_E4M3, MXP_S32 };
    static const mxp_binary_op bops[] = { MXP_OP_ADD, MXP_OP_MULTIPLY, MXP_OP_DIVIDE, MXP_OP_MAXIMUM, MXP_OP_LESS };
    static const mxp_unary_op uops[] = { MXP_OP_EXP, MXP_OP_SQRT, MXP_OP_GELU, MXP_OP_NEGATIVE, MXP_OP_ISNAN,
                                         MXP_OP_TANH };
    size_t at = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const mxp_dtype dt = types[t];
        const size_t s = mxp_dtype_itemsize(dt);
        for (int strided = 0; strided < 2; strided++) {
            const ptrdiff_t st = (ptrdiff_t)(s * (size_t)(1 + strided) + (size_t)(strided ? shift : 0));
            unsigned char *a = in, *b = in + BUF / 2;
            for (size_t i = 0; i < N; i++) { /* the same values in both runs */
                fill_values(a + (ptrdiff_t)i * st, dt, 1, (uint32_t)(i + t));
                fill_values(b + (ptrdiff_t)i * st, dt, 1, (uint32_t)(i * 7 + t + 1));
            }
            for (size_t k = 0; k < sizeof bops / sizeof bops[0]; k++) {
                const mxp_dtype rt = mxp_binary_result_type(bops[k], dt, dt);
                const size_t rs = mxp_dtype_itemsize(rt);
                must(mxp_binary_strided(bops[k], N, out + at, rt, (ptrdiff_t)rs, a, dt, st, b, dt, st, NULL));
                at += N * rs;
            }
            for (size_t k = 0; k < sizeof uops / sizeof uops[0]; k++) {
                const mxp_dtype rt = mxp_unary_result_type(uops[k], dt);
                const size_t rs = mxp_dtype_itemsize(rt);
                must(mxp_unary_strided(uops[k], N, out + at, rt, (ptrdiff_t)rs, a, dt, st, NULL));
                at += N * rs;
            }
            double sum = 0, prod = 0;
            must(mxp_sum_strided(&sum, a, dt, st, N, MXP_F64));
            must(mxp_prod_strided(&prod, b, dt, st, 5, MXP_F64));
            memcpy(out + at, &sum, 8);
            memcpy(out + at + 8, &prod, 8);
            at += 16;
            int64_t idx[N];
            must(mxp_argsort_strided(idx, a, dt, st, N));
            memcpy(out + at, idx, sizeof idx);
            at += sizeof idx;
            must(mxp_argmax_strided(idx, a, dt, st, N));
            must(mxp_argmin_strided(idx + 1, a, dt, st, N));
            memcpy(out + at, idx, 16);
            at += 16;
            uint64_t keys[N];
            must(mxp_sort_keys(keys, a, dt, st, N));
            memcpy(out + at, keys, sizeof keys);
            at += sizeof keys;
            if (dt != MXP_S32) {
                must(mxp_accumulate_strided(MXP_OP_ADD, N, out + at, dt, (ptrdiff_t)s, a, dt, st, NULL));
                at += N * s;
            }
            must(mxp_sort_strided(a, dt, st, N));
            for (size_t i = 0; i < N; i++)
                memcpy(out + at + i * s, a + (ptrdiff_t)i * st, s);
            at += N * s;
            assert_true(at < BUF);
        }
    }
}

/* An mxp_array over misaligned memory (any layout is accepted; its
 * MXP_ARRAY_ALIGNED flag is clear) through the array functions. */
static mxp_array *wrap(void *p, mxp_dtype dt, int64_t rows, int64_t cols)
{
    mxp_array *a = NULL;
    const int64_t shape[2] = { rows, cols };
    must(mxp_array_wrap(&a, p, dt, 2, shape, NULL, true, NULL, NULL));
    return a;
}

static size_t put(unsigned char *out, size_t at, mxp_array *r)
{
    const size_t bytes = (size_t)mxp_array_size(r) * mxp_array_itemsize(r);
    assert_true(at + bytes < BUF);
    mxp_array *c = NULL;
    must(mxp_array_reshape_copy(&c, r, 1, (const int64_t[]){ mxp_array_size(r) }));
    memcpy(out + at, mxp_array_data(c), bytes);
    mxp_array_free(c);
    mxp_array_free(r);
    if (getenv("MXP_TEST_TRACE"))
        fprintf(stderr, "put at %zu..%zu\n", at, at + bytes);
    return at + bytes;
}

static void arrays(unsigned char *in, unsigned char *out, int shift)
{
    (void)shift;
    static const mxp_dtype types[] = { MXP_F32, MXP_F64, MXP_BF16, MXP_F16 };
    size_t at = 0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        const mxp_dtype dt = types[t];
        fill_values(in, dt, 12 * 9, (uint32_t)t);
        fill_values(in + 1024, dt, 9 * 7, (uint32_t)t + 9);
        mxp_array *x = wrap(in, dt, 12, 9), *w = wrap(in + 1024, dt, 9, 7);
        mxp_array *r = NULL;
        must(mxp_binary(&r, MXP_OP_ADD, x, x, NULL));
        at = put(out, at, r);
        must(mxp_unary(&r, MXP_OP_EXP, x, NULL));
        at = put(out, at, r);
        must(mxp_matmul(&r, x, w, NULL));
        at = put(out, at, r);
        must(mxp_array_astype(&r, x, MXP_E4M3, NULL));
        at = put(out, at, r);
        static const mxp_reduce_op rops[] = { MXP_REDUCE_SUM, MXP_REDUCE_MEAN, MXP_REDUCE_VAR, MXP_REDUCE_MAX,
                                              MXP_REDUCE_ARGMAX, MXP_REDUCE_NORM2 };
        for (size_t k = 0; k < sizeof rops / sizeof rops[0]; k++) {
            for (int axis = 0; axis < 2; axis++) {
                must(mxp_reduce(&r, rops[k], x, 1, &axis, NULL));
                at = put(out, at, r);
            }
        }
        mxp_qparams qp;
        must(mxp_calibrate_minmax(x, MXP_S8, true, 0, 0, &qp));
        mxp_array *q = NULL;
        must(mxp_quantize(&q, x, &qp, NULL));
        must(mxp_dequantize(&r, q, &qp, MXP_F32));
        at = put(out, at, r);
        at = put(out, at, q);
        must(mxp_fake_quantize(&r, x, &qp, NULL));
        at = put(out, at, r);
        mxp_qparams_free(&qp);
        double counts[16] = { 0 };
        must(mxp_histogram_abs(x, 8.0, 16, counts));
        memcpy(out + at, counts, sizeof counts);
        at += sizeof counts;
        mxp_compare_report rep = { 0 };
        must(mxp_compare(x, x, &rep));
        memcpy(out + at, &rep.mse, sizeof rep.mse);
        at += sizeof rep.mse;
        mxp_roundtrip_row rows[2] = { 0 };
        const mxp_dtype cand[2] = { MXP_E4M3, MXP_BF16 };
        must(mxp_roundtrip_analysis(x, cand, 2, rows));
        memcpy(out + at, &rows[0].report.max_rel_error, 8);
        at += 8;
        void *npy = NULL;
        size_t npy_n = 0;
        must(mxp_npy_save_buffer(&npy, &npy_n, x));
        memcpy(out + at, npy, npy_n);
        at += npy_n;
        mxp_free(npy);
        mxp_array *o = wrap(in + 4096, dt, 12, 9);
        must(mxp_binary_into(o, MXP_OP_MULTIPLY, x, x, NULL));
        must(mxp_unary_into(o, MXP_OP_SQRT, o, NULL));
        mxp_array_free(o);
        memcpy(out + at, in + 4096, 12 * 9 * mxp_dtype_itemsize(dt));
        at += 12 * 9 * mxp_dtype_itemsize(dt);
        mxp_array_free(x);
        mxp_array_free(w);
    }
}

static void mx_blocks(unsigned char *in, unsigned char *out, int shift)
{
    (void)shift;
    static const mxp_mx_format fmts[] = { MXP_MXFP8_E4M3, MXP_MXFP8_E5M2, MXP_MXFP4_E2M1, MXP_MXINT8 };
    enum { MN = 100 };
    fill_values(in, MXP_F32, MN, 5);
    size_t at = 0;
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
        const size_t bytes = mxp_mx_bytes(fmts[f], MN);
        float *src = (float *)(void *)in; /* (misaligned: the API takes any address) */
        must(mxp_mx_quantize(out + at, fmts[f], src, MN, NULL));
        must(mxp_mx_dequantize((float *)(void *)(out + at + bytes), out + at, fmts[f], MN));
        at += bytes + MN * 4;
    }
}

typedef struct named_case {
    const char *name;
    case_fn *fn;
} named_case;

static const named_case cases[] = {
    { "mxp_convert, every pair, three modes", convert_all_pairs },
    { "mxp_convert_strided, strides itemsize + 1", convert_strided_odd_strides },
    { "mxp_gemm, nine type triples, both transposes", gemm_types },
    { "elementwise, reductions, sorting, accumulate (strided)", elementwise_strided },
    { "array functions on a misaligned mxp_array", arrays },
    { "mxp_mx_quantize / mxp_mx_dequantize", mx_blocks },
};

/* Runs c at shift 0 and 1 in a child; 0 when both runs agree. */
static int run_case(const named_case *c, int isa)
{
    fflush(NULL);
    const pid_t pid = fork();
    if (pid == 0) {
        signal(SIGABRT, SIG_DFL);
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        alarm(120);
        if (mxp_set_isa((mxp_isa)isa) != MXP_OK)
            _exit(4);
        for (int shift = 0; shift < 2; shift++) {
            memset(in_buf[shift], 0, sizeof in_buf[shift]);
            memset(out_buf[shift], 0, sizeof out_buf[shift]);
            c->fn(in_buf[shift] + shift, out_buf[shift] + shift, shift);
        }
        for (size_t i = 0; i < BUF; i++) {
            if (out_buf[0][i] != out_buf[1][i + 1]) {
                fprintf(stderr, "%s at %s: output byte %zu differs (aligned 0x%02x, misaligned 0x%02x)\n", c->name,
                        mxp_isa_name((mxp_isa)isa), i, out_buf[0][i], out_buf[1][i + 1]);
                _exit(2);
            }
        }
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "%s at %s: killed by signal %d\n", c->name, mxp_isa_name((mxp_isa)isa), WTERMSIG(status));
        return 1;
    }
    if (WEXITSTATUS(status) != 0)
        fprintf(stderr, "%s at %s: exit %d\n", c->name, mxp_isa_name((mxp_isa)isa), WEXITSTATUS(status));
    return WEXITSTATUS(status) != 0;
}

static void test_misaligned_buffers_give_the_aligned_bits(void **state)
{
    (void)state;
    int failed = 0;
    for (int isa = MXP_ISA_SCALAR; isa <= (int)mxp_isa_supported(); isa++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            failed += run_case(&cases[c], isa);
    assert_int_equal(failed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_misaligned_buffers_give_the_aligned_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
