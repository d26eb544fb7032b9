/* Several program threads inside mxp at once: each runs GEMM (float32,
 * bfloat16, int8, matmul), conversions (stochastic rounding too),
 * quantization, MX blocks, elementwise operations, reductions and a custom
 * operator, in its own order, while another thread turns the allocator's
 * pool and huge pages on and off, releases the GEMM workspaces and calls
 * mxp_shutdown; every result must equal, bit for
 * bit, the one computed first on one thread.  `make check-tsan` runs this
 * under ThreadSanitizer, which also reports any data race on the way. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "mxp.h"

enum { M = 96, N = 160, K = 288 }; /* M N K > 4e6: GEMM uses two threads */
enum { V = 5760 };                 /* vector length: 96 rows of 60, 180 MX blocks */
enum { CALLERS = 3, ROUNDS = 3 };

static float a32[M * K], b32[K * N], vec[V], vec2[V];
static uint16_t a16[M * K], b16[K * N];
static uint8_t a8[M * K];
static int8_t b8[K * N];

/* ---- the jobs: each writes its result's bytes into out ------------------- */

typedef mxp_status (*job_fn)(void *out);

static mxp_status gemm_f32(void *out)
{
    return mxp_gemm(MXP_NO_TRANS, MXP_TRANS, M, N, K, 0.75, a32, MXP_F32, K, b32, MXP_F32, K, 0.0, out, MXP_F32, N,
                    NULL);
}

static mxp_status gemm_bf16(void *out)
{
    const mxp_gemm_opts o = { .activation = MXP_ACT_GELU_TANH, .convert = { .rounding = MXP_ROUND_STOCHASTIC,
                                                                            .seed = 7 } };
    return mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a16, MXP_BF16, K, b16, MXP_BF16, N, 0.0, out, MXP_BF16,
                    N, &o);
}

static mxp_status gemm_u8s8(void *out)
{
    static const float scale = 0x1p-12f;
    const mxp_gemm_opts o = { .scales = &scale, .n_scales = 1, .a_zero_point = 100 };
    return mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, M, N, K, 1.0, a8, MXP_U8, K, b8, MXP_S8, N, 0.0, out, MXP_F32, N, &o);
}

static mxp_array *wrap(void *data, mxp_dtype dt, int64_t rows, int64_t cols)
{
    mxp_array *x = NULL;
    const int64_t shape[2] = { rows, cols };
    return mxp_array_wrap(&x, data, dt, 2, shape, NULL, false, NULL, NULL) == MXP_OK ? x : NULL;
}

/* An array result copied out (and freed). */
static mxp_status take(mxp_status st, mxp_array *r, void *out)
{
    if (st == MXP_OK)
        memcpy(out, mxp_array_data(r), (size_t)mxp_array_size(r) * mxp_array_itemsize(r));
    mxp_array_free(r);
    return st;
}

static mxp_status matmul_f32(void *out)
{
    mxp_array *x = wrap(a32, MXP_F32, M, K), *w = wrap(b32, MXP_F32, K, N), *r = NULL;
    const mxp_status st = mxp_matmul(&r, x, w, NULL);
    mxp_array_free(x);
    mxp_array_free(w);
    return take(st, r, out);
}

static mxp_status convert_bf16_stochastic(void *out)
{
    const mxp_convert_opts o = { .rounding = MXP_ROUND_STOCHASTIC, .seed = 11 };
    return mxp_convert(out, MXP_BF16, vec, MXP_F32, V, &o);
}

static mxp_status convert_e4m3_saturate(void *out)
{
    const mxp_convert_opts o = { .overflow = MXP_OVERFLOW_SATURATE };
    return mxp_convert_strided(out, MXP_E4M3, 1, vec, MXP_F32, 2 * sizeof(float), V / 2, &o);
}

static mxp_status quantize_dequantize(void *out)
{
    mxp_array *x = wrap(vec, MXP_F32, 60, V / 60), *q = NULL, *d = NULL;
    mxp_qparams qp;
    memset(&qp, 0, sizeof qp);
    mxp_status st = mxp_calibrate_minmax(x, MXP_U8, false, 0, 0, &qp);
    if (st == MXP_OK)
        st = mxp_quantize(&q, x, &qp, NULL);
    if (st == MXP_OK)
        st = mxp_dequantize(&d, q, &qp, MXP_F32);
    mxp_qparams_free(&qp);
    mxp_array_free(q);
    mxp_array_free(x);
    return take(st, d, out);
}

static mxp_status mx_blocks(void *out)
{
    return mxp_mx_quantize(out, MXP_MXFP8_E4M3, vec, V, NULL);
}

static mxp_status ops_chain(void *out)
{
    mxp_array *x = wrap(vec, MXP_F32, 60, V / 60), *y = wrap(vec2, MXP_F32, 60, V / 60), *s = NULL, *g = NULL,
              *r = NULL;
    mxp_status st = mxp_binary(&s, MXP_OP_MULTIPLY, x, y, NULL);
    if (st == MXP_OK)
        st = mxp_unary(&g, MXP_OP_TANH, s, NULL);
    const int axis[1] = { 0 };
    if (st == MXP_OK)
        st = mxp_reduce(&r, MXP_REDUCE_SUM, g, 1, axis, NULL);
    mxp_array_free(x);
    mxp_array_free(y);
    mxp_array_free(s);
    mxp_array_free(g);
    return take(st, r, out);
}

static void twice(void *out, const void *in, size_t n, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++)
        ((double *)out)[i] = 2 * ((const double *)in)[i];
}

static mxp_status custom_op(void *out)
{
    mxp_array *x = wrap(vec, MXP_F32, 60, V / 60), *r = NULL;
    const mxp_status st = mxp_call_unary_op(&r, "test_concurrency_twice", x, NULL);
    mxp_array_free(x);
    return take(st, r, out);
}

static const struct {
    const char *name;
    job_fn fn;
    size_t bytes;
} jobs[] = {
    { "gemm float32", gemm_f32, M * N * 4 },
    { "gemm bfloat16 + gelu, stochastic", gemm_bf16, M * N * 2 },
    { "gemm uint8 x int8 -> float32", gemm_u8s8, M * N * 4 },
    { "matmul float32", matmul_f32, M * N * 4 },
    { "convert float32 -> bfloat16, stochastic", convert_bf16_stochastic, V * 2 },
    { "convert strided float32 -> e4m3", convert_e4m3_saturate, V / 2 },
    { "calibrate, quantize, dequantize", quantize_dequantize, V * 4 },
    { "MXFP8 blocks", mx_blocks, V + V / 32 },
    { "multiply, tanh, sum", ops_chain, V / 60 * 4 },
    { "custom operator", custom_op, V * 4 },
};
enum { JOBS = sizeof jobs / sizeof jobs[0] };

static unsigned char *expected[JOBS];

/* ---- the threads ----------------------------------------------------------- */

static atomic_int stop, mismatches;

static void *caller(void *arg)
{
    const int id = (int)(intptr_t)arg;
    unsigned char *got = malloc(M * N * 4);
    if (!got)
        return (void *)1;
    for (int round = 0; round < ROUNDS; round++)
        for (int i = 0; i < JOBS; i++) {
            const int j = (i * (2 * id + 1) + round + id) % JOBS; /* each caller its own order */
            memset(got, 0xa5, jobs[j].bytes);
            if (jobs[j].fn(got) != MXP_OK || memcmp(got, expected[j], jobs[j].bytes) != 0) {
                fprintf(stderr, "caller %d, round %d: %s differs from the one-thread result (%s)\n", id, round,
                        jobs[j].name, mxp_last_error());
                atomic_fetch_add(&mismatches, 1);
            }
        }
    free(got);
    return NULL;
}

/* Meanwhile: the allocator's pool toggled, huge pages turned on and off,
 * the idle GEMM workspaces released, the thread pool shut down. */
static void *disturber(void *arg)
{
    (void)arg;
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        mxp_set_pool(i % 2 == 0);
        mxp_set_hugepages(i % 3 != 0);
        if (i % 4 == 2)
            mxp_release_workspaces();
        if (i % 8 == 0)
            mxp_shutdown();
        mxp_memory_stats s = { 0 };
        mxp_memory_stats_get(&s);
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void fill_inputs(void)
{
    uint64_t s = 12345;
    for (int i = 0; i < M * K; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        a32[i] = (float)((int64_t)(s >> 40) - (1 << 23)) * 0x1p-23f;
        a8[i] = (uint8_t)(s >> 56);
    }
    for (int i = 0; i < K * N; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        b32[i] = (float)((int64_t)(s >> 40) - (1 << 23)) * 0x1p-22f;
        b8[i] = (int8_t)(s >> 56);
    }
    assert_int_equal(mxp_convert(a16, MXP_BF16, a32, MXP_F32, M * K, NULL), MXP_OK);
    assert_int_equal(mxp_convert(b16, MXP_BF16, b32, MXP_F32, K * N, NULL), MXP_OK);
    for (int i = 0; i < V; i++) {
        vec[i] = (float)(i % 97 - 48) * 9.3f + (float)i * 1e-3f;
        vec2[i] = (float)(i % 13) * 0.01f - 0.05f;
    }
}

static void test_concurrent_callers_get_the_one_thread_bits(void **state)
{
    (void)state;
    fill_inputs();
    assert_int_equal(mxp_register_unary_op("test_concurrency_twice", MXP_F64, twice, NULL), MXP_OK);
    assert_int_equal(mxp_set_num_threads(1), MXP_OK);
    for (int j = 0; j < JOBS; j++) {
        expected[j] = malloc(jobs[j].bytes);
        assert_non_null(expected[j]);
        if (jobs[j].fn(expected[j]) != MXP_OK) {
            print_error("%s: %s\n", jobs[j].name, mxp_last_error());
            fail();
        }
    }
    assert_int_equal(mxp_set_num_threads(2), MXP_OK);
    pthread_t callers[CALLERS], other;
    assert_int_equal(pthread_create(&other, NULL, disturber, NULL), 0);
    for (int t = 0; t < CALLERS; t++)
        assert_int_equal(pthread_create(&callers[t], NULL, caller, (void *)(intptr_t)t), 0);
    int failed = 0;
    for (int t = 0; t < CALLERS; t++) {
        void *r = NULL;
        assert_int_equal(pthread_join(callers[t], &r), 0);
        failed += r != NULL;
    }
    atomic_store(&stop, 1);
    assert_int_equal(pthread_join(other, NULL), 0);
    assert_int_equal(failed, 0);
    assert_int_equal(atomic_load(&mismatches), 0);
    for (int j = 0; j < JOBS; j++)
        free(expected[j]);
    assert_int_equal(mxp_unregister_op("test_concurrency_twice"), MXP_OK);
    mxp_set_pool(false);
    mxp_set_hugepages(true);
    assert_int_equal(mxp_set_num_threads(0), MXP_OK);
    mxp_shutdown();
    mxp_memory_stats ms = { 0 };
    mxp_memory_stats_get(&ms);
    assert_int_equal(ms.workspace_bytes, 0); /* every caller's workspace was given back, then released */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_callers_get_the_one_thread_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
