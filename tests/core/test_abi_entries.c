/* The struct ABI at every public entry point that takes a sized struct
 * (docs/abi.md, "The structs"): one row per entry point and struct, run
 * through one harness.  Each is called with struct_size 0 and sizeof (the
 * same result), with sizes that are no layout (refused with a sentence
 * naming the function; a report is left as it was; an object given through
 * out is NULL), with a larger struct (zeros beyond: accepted, the bytes
 * beyond left as they were; a nonzero byte beyond: refused), and with a
 * wrong struct_size in an embedded struct (refused).  A report is filled
 * whole within struct_size and not one byte beyond; every struct_size in
 * it, the embedded ones too, stays as the caller set it.  Removing the
 * check from any one entry point fails its row. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "abi_entries.h"
#include "mxp.h"

/* ---- fixtures: made once, read by every call ------------------------------ */

enum { N = 8 };
static float xs[N] = { 0.3f, -1.7f, 2.5f, 1e-3f, -0.25f, 3.75f, 1.1f, -2.9f };
static float ys[N] = { 0.31f, -1.69f, 2.5f, 2e-3f, -0.26f, 3.7f, 1.0f, -2.9f };
static float am[6] = { 1.5f, -2.25f, 0.5f, 3.0f, 1.0f, -0.75f }; /* 2 x 3 */
static float bm[6] = { 0.25f, 2.0f, -1.0f, 1.5f, 3.0f, -0.5f };  /* 3 x 2 */
static mxp_array *X, *Y, *A2, *B2;
static mxp_qparams qp;
static mxp_monitor *history; /* one record of "w" */
static const int64_t shape8[1] = { N }, shape22[2] = { 2, 2 };

int abi_entries_setup(void **state)
{
    (void)state;
    const int64_t sa[2] = { 2, 3 }, sb[2] = { 3, 2 };
    if (mxp_array_wrap(&X, xs, MXP_F32, 1, shape8, NULL, false, NULL, NULL) ||
        mxp_array_wrap(&Y, ys, MXP_F32, 1, shape8, NULL, false, NULL, NULL) ||
        mxp_array_wrap(&A2, am, MXP_F32, 2, sa, NULL, false, NULL, NULL) ||
        mxp_array_wrap(&B2, bm, MXP_F32, 2, sb, NULL, false, NULL, NULL) ||
        mxp_calibrate_minmax(X, MXP_S8, true, -1, 0, &qp) || mxp_monitor_create(&history, NULL) ||
        mxp_monitor_record(history, 3, "w", MXP_ROLE_WEIGHT, X, NULL))
        return -1;
    return 0;
}

int abi_entries_teardown(void **state)
{
    (void)state;
    mxp_monitor_free(history);
    mxp_qparams_free(&qp);
    mxp_array_free(X);
    mxp_array_free(Y);
    mxp_array_free(A2);
    mxp_array_free(B2);
    return 0;
}

/* ---- digests of what a call produced ------------------------------------- */

static uint64_t hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t hash_array(const mxp_array *a)
{
    mxp_array *c = NULL;
    assert_int_equal(mxp_array_ascontiguous(&c, a, 'C'), MXP_OK);
    const uint64_t h = hash((uint64_t)mxp_array_dtype(a), mxp_array_data(c),
                            (size_t)mxp_array_size(c) * mxp_array_itemsize(c));
    mxp_array_free(c);
    return h;
}

/* An array given through *out (read after the call): its digest, or NULL
 * after an error. */
static mxp_status made(mxp_status st, mxp_array **out, uint64_t *d)
{
    if (st != MXP_OK) {
        assert_null(*out);
        return st;
    }
    *d = hash_array(*out);
    mxp_array_free(*out);
    return st;
}

static mxp_array *new_array(mxp_dtype dt, int ndim, const int64_t *shape)
{
    mxp_array *a = NULL;
    assert_int_equal(mxp_array_zeros(&a, dt, ndim, shape), MXP_OK);
    return a;
}

static mxp_status into(mxp_status st, mxp_array *out, uint64_t *d)
{
    *d = hash_array(out);
    mxp_array_free(out);
    return st;
}

/* A function without a status: refused when it set mxp_last_error(). */
static mxp_status by_error(void)
{
    return mxp_last_error()[0] ? MXP_ERR_INVALID_ARGUMENT : MXP_OK;
}

static mxp_status by_name(const char *name, uint64_t *d)
{
    *d = hash(0, name, strlen(name));
    return strcmp(name, "invalid") ? MXP_OK : MXP_ERR_INVALID_ARGUMENT;
}

#define GARBAGE_PTR ((void *)(uintptr_t)0x10)

/* ---- mxp_convert_opts ------------------------------------------------------- */

static void init_convert(void *s)
{
    mxp_convert_opts *o = s;
    o->rounding = MXP_ROUND_UP;
}

static mxp_status c_convert(void *s, uint64_t *d)
{
    uint16_t out[N] = { 0 };
    mxp_status st = mxp_convert(out, MXP_BF16, xs, MXP_F32, N, s);
    *d = hash(0, out, sizeof out);
    return st;
}

static mxp_status c_convert_strided(void *s, uint64_t *d)
{
    uint16_t out[2 * N] = { 0 };
    mxp_status st = mxp_convert_strided(out, MXP_BF16, 4, xs, MXP_F32, 4, N, s);
    *d = hash(0, out, sizeof out);
    return st;
}

static mxp_status c_convert_kernel_name(void *s, uint64_t *d)
{
    return by_name(mxp_convert_kernel_name(MXP_BF16, MXP_F32, s), d);
}

static mxp_status c_array_full(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_array_full(&o, MXP_BF16, 1, shape8, 1.0 / 3, s), &o, d);
}

static mxp_status c_array_astype(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_array_astype(&o, X, MXP_BF16, s), &o, d);
}

static mxp_status c_array_copyto(void *s, uint64_t *d)
{
    mxp_array *o = new_array(MXP_BF16, 1, shape8);
    return into(mxp_array_copyto(o, X, MXP_CASTING_UNSAFE, s), o, d);
}

static mxp_status c_mx_quantize(void *s, uint64_t *d)
{
    unsigned char out[64] = { 0 };
    assert_true(mxp_mx_bytes(MXP_MXFP8_E4M3, N) <= sizeof out);
    mxp_status st = mxp_mx_quantize(out, MXP_MXFP8_E4M3, xs, N, s);
    *d = hash(0, out, sizeof out);
    return st;
}

static mxp_status c_binary_strided(void *s, uint64_t *d)
{
    uint16_t out[N] = { 0 };
    mxp_status st = mxp_binary_strided(MXP_OP_ADD, N, out, MXP_BF16, 2, xs, MXP_F32, 4, ys, MXP_F32, 4, s);
    *d = hash(0, out, sizeof out);
    return st;
}

static mxp_status c_unary_strided(void *s, uint64_t *d)
{
    uint16_t out[N] = { 0 };
    mxp_status st = mxp_unary_strided(MXP_OP_EXP, N, out, MXP_BF16, 2, xs, MXP_F32, 4, s);
    *d = hash(0, out, sizeof out);
    return st;
}

static mxp_status c_quantize(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_quantize(&o, X, &qp, s), &o, d);
}

static mxp_status c_quantize_into(void *s, uint64_t *d)
{
    mxp_array *o = new_array(MXP_S8, 1, shape8);
    return into(mxp_quantize_into(o, X, &qp, s), o, d);
}

static mxp_status c_fake_quantize(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_fake_quantize(&o, X, &qp, s), &o, d);
}

/* ---- mxp_gemm_opts ---------------------------------------------------------- */

static void init_gemm(void *s)
{
    mxp_gemm_opts *o = s;
    o->convert.rounding = MXP_ROUND_UP;
    o->activation = MXP_ACT_RELU;
}

static mxp_status c_gemm(void *s, uint64_t *d)
{
    uint16_t c[4] = { 0 };
    mxp_status st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1.0, am, MXP_F32, 3, bm, MXP_F32, 2, 0.0, c,
                             MXP_BF16, 2, s);
    *d = hash(0, c, sizeof c);
    return st;
}

static mxp_status c_gemm_kernel_name(void *s, uint64_t *d)
{
    return by_name(mxp_gemm_kernel_name(MXP_F32, MXP_F32, s), d);
}

static mxp_status c_gemm_safe_gemm_opts(void *s, uint64_t *d)
{
    uint16_t c[4] = { 0 };
    mxp_status st = mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1.0, am, MXP_F32, 3, bm, MXP_F32, 2, 0.0, c,
                                  MXP_BF16, 2, s, NULL, NULL);
    *d = hash(0, c, sizeof c);
    return st;
}

static mxp_status c_matmul(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_matmul(&o, A2, B2, s), &o, d);
}

static mxp_status c_matmul_into(void *s, uint64_t *d)
{
    mxp_array *o = new_array(MXP_BF16, 2, shape22);
    return into(mxp_matmul_into(o, A2, B2, s), o, d);
}

static mxp_status c_gemm_strided_batched(void *s, uint64_t *d)
{
    uint16_t c[8] = { 0 };
    mxp_status st = mxp_gemm_strided_batched(2, MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1.0, am, MXP_F32, 3, 0, bm,
                                             MXP_F32, 2, 0, 0.0, c, MXP_BF16, 2, 4, s);
    *d = hash(0, c, sizeof c);
    return st;
}

/* ---- mxp_memory_stats ------------------------------------------------------- */

static mxp_status c_get_memory_stats(void *s, uint64_t *d)
{
    (void)d;
    mxp_get_memory_stats(s);
    return by_error();
}

static mxp_status c_memory_stats_get(void *s, uint64_t *d)
{
    (void)d;
    mxp_memory_stats_get(s);
    return by_error();
}

/* ---- mxp_ops_opts ----------------------------------------------------------- */

static void init_ops(void *s)
{
    mxp_ops_opts *o = s;
    o->out_dtype = MXP_BF16;
    o->convert.rounding = MXP_ROUND_UP;
}

static mxp_status c_binary(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_binary(&o, MXP_OP_ADD, X, Y, s), &o, d);
}

static mxp_status c_binary_into(void *s, uint64_t *d)
{
    mxp_array *o = new_array(MXP_BF16, 1, shape8);
    return into(mxp_binary_into(o, MXP_OP_ADD, X, Y, s), o, d);
}

static mxp_status c_unary(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_unary(&o, MXP_OP_EXP, X, s), &o, d);
}

static mxp_status c_unary_into(void *s, uint64_t *d)
{
    mxp_array *o = new_array(MXP_BF16, 1, shape8);
    return into(mxp_unary_into(o, MXP_OP_EXP, X, s), o, d);
}

static mxp_status c_binary_scalar(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_binary_scalar(&o, MXP_OP_MULTIPLY, X, 0.3, s), &o, d);
}

static mxp_status c_binary_scalar_int(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_binary_scalar_int(&o, MXP_OP_ADD, X, 3, s), &o, d);
}

static mxp_status c_scalar_binary(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_scalar_binary(&o, MXP_OP_SUBTRACT, 0.3, X, s), &o, d);
}

static mxp_status c_scalar_int_binary(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_scalar_int_binary(&o, MXP_OP_SUBTRACT, 3, X, s), &o, d);
}

static void third(void *out, const void *in, size_t n, void *ctx)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++)
        ((float *)out)[i] = ((const float *)in)[i] / 3;
}

static mxp_status c_call_unary_op(void *s, uint64_t *d)
{
    assert_int_equal(mxp_register_unary_op("abi_third", MXP_F32, third, NULL), MXP_OK);
    mxp_array *o = GARBAGE_PTR;
    mxp_status st = made(mxp_call_unary_op(&o, "abi_third", X, s), &o, d);
    assert_int_equal(mxp_unregister_op("abi_third"), MXP_OK);
    return st;
}

/* ---- mxp_reduce_opts -------------------------------------------------------- */

static void init_reduce(void *s)
{
    mxp_reduce_opts *o = s;
    o->algorithm = MXP_SUM_KAHAN;
    o->out_dtype = MXP_BF16;
    o->keepdims = true;
    o->convert.rounding = MXP_ROUND_UP;
}

static mxp_status c_reduce(void *s, uint64_t *d)
{
    mxp_array *o = GARBAGE_PTR;
    return made(mxp_reduce(&o, MXP_REDUCE_SUM, X, 0, NULL, s), &o, d);
}

/* ---- mxp_print_opts --------------------------------------------------------- */

static void init_print(void *s)
{
    mxp_print_opts *o = s;
    o->precision = 3;
    o->repr = true;
}

static mxp_status c_array_format(void *s, uint64_t *d)
{
    char *text = GARBAGE_PTR;
    size_t len = 0;
    mxp_status st = mxp_array_format(&text, &len, X, s);
    if (st != MXP_OK) {
        assert_null(text);
        return st;
    }
    *d = hash(0, text, len);
    mxp_free(text);
    return st;
}

static mxp_status c_array_fprint(void *s, uint64_t *d)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    mxp_status st = mxp_array_fprint(f, X, s);
    char text[512] = { 0 };
    rewind(f);
    const size_t len = fread(text, 1, sizeof text, f);
    fclose(f);
    *d = hash(0, text, len);
    return st;
}

/* ---- mxp_gemm_safe_opts, mxp_gemm_safe_report -------------------------------- */

static void init_gemm_safe(void *s)
{
    mxp_gemm_safe_opts *o = s;
    o->strategy = MXP_OVERFLOW_STRATEGY_CLIP;
}

/* alpha 1e5 into float16: at risk, clipped */
static mxp_status gemm_safe16(const mxp_gemm_safe_opts *safe, mxp_gemm_safe_report *report, uint64_t *d)
{
    uint16_t c[4] = { 0 };
    static const mxp_gemm_safe_opts clip = { .strategy = MXP_OVERFLOW_STRATEGY_CLIP };
    mxp_status st = mxp_gemm_safe(MXP_NO_TRANS, MXP_NO_TRANS, 2, 2, 3, 1e5, am, MXP_F32, 3, bm, MXP_F32, 2, 0.0, c,
                                  MXP_F16, 2, NULL, safe ? safe : &clip, report);
    *d = hash(0, c, sizeof c);
    return st;
}

static mxp_status c_gemm_safe_safe(void *s, uint64_t *d)
{
    return gemm_safe16(s, NULL, d);
}

static mxp_status c_gemm_safe_report(void *s, uint64_t *d)
{
    return gemm_safe16(NULL, s, d);
}

/* ---- mxp_observer_opts ------------------------------------------------------ */

static void init_observer(void *s)
{
    mxp_observer_opts *o = s;
    o->percentile = 90;
    o->bins = 16;
}

static uint64_t hash_qparams(mxp_qparams *q)
{
    const uint64_t h = hash(hash(0, q->scales, (size_t)q->count * sizeof *q->scales), q->zero_points,
                            (size_t)q->count * sizeof *q->zero_points);
    mxp_qparams_free(q);
    return h;
}

static mxp_status c_observer_create(void *s, uint64_t *d)
{
    mxp_observer *obs = GARBAGE_PTR;
    mxp_status st = mxp_observer_create(&obs, MXP_CALIB_PERCENTILE, MXP_S8, true, -1, s);
    if (st != MXP_OK) {
        assert_null(obs);
        return st;
    }
    mxp_qparams q = { 0 };
    assert_int_equal(mxp_observer_update(obs, X), MXP_OK);
    assert_int_equal(mxp_observer_compute(obs, &q), MXP_OK);
    mxp_observer_free(obs);
    *d = hash_qparams(&q);
    return st;
}

static mxp_status c_observer_qparams_from_histogram(void *s, uint64_t *d)
{
    static const double counts[16] = { 5, 3, 1, 0, 2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1 };
    mxp_qparams q = { 0 };
    mxp_status st = mxp_observer_qparams_from_histogram(&q, MXP_CALIB_PERCENTILE, MXP_S8, true, s, counts, 4.0,
                                                        -3.0, 4.0);
    if (st == MXP_OK)
        *d = hash_qparams(&q);
    return st;
}

/* ---- the training options --------------------------------------------------- */

static void init_optimizer(void *s)
{
    mxp_optimizer_opts *o = s;
    o->lr = 0.25;
    o->momentum = 0.5;
}

static mxp_status c_optimizer_create(void *s, uint64_t *d)
{
    mxp_optimizer *opt = GARBAGE_PTR;
    mxp_status st = mxp_optimizer_create(&opt, MXP_OPTIM_SGD, s);
    if (st != MXP_OK) {
        assert_null(opt);
        return st;
    }
    const double lr = mxp_optimizer_lr(opt);
    *d = hash(0, &lr, sizeof lr);
    mxp_optimizer_free(opt);
    return st;
}

static void init_loss_scaler(void *s)
{
    mxp_loss_scaler_opts *o = s;
    o->init_scale = 1024;
}

static mxp_status c_loss_scaler_create(void *s, uint64_t *d)
{
    mxp_loss_scaler *ls = GARBAGE_PTR;
    mxp_status st = mxp_loss_scaler_create(&ls, s);
    if (st != MXP_OK) {
        assert_null(ls);
        return st;
    }
    const double scale = mxp_loss_scaler_scale(ls);
    *d = hash(0, &scale, sizeof scale);
    mxp_loss_scaler_free(ls);
    return st;
}

static void init_monitor(void *s)
{
    mxp_monitor_opts *o = s;
    o->target = MXP_BF16;
}

static mxp_status c_monitor_create(void *s, uint64_t *d)
{
    mxp_monitor *m = GARBAGE_PTR;
    mxp_status st = mxp_monitor_create(&m, s);
    if (st != MXP_OK) {
        assert_null(m);
        return st;
    }
    const mxp_dtype t = mxp_monitor_target(m);
    *d = hash(0, &t, sizeof t);
    mxp_monitor_free(m);
    return st;
}

/* ---- mxp_conv_opts, mxp_pool_opts -------------------------------------------- */

/* X as (1, 2, 2, 2) and Y as (4, 2, 1, 1) (views; ndim 3: (1, 2, 4) and (4, 2, 1)). */
static mxp_array *view_of(const mxp_array *a, int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    mxp_array *v = NULL;
    const int64_t s[4] = { d0, d1, d2, d3 };
    assert_int_equal(mxp_array_reshape(&v, a, ndim, s), MXP_OK);
    return v;
}

static void init_conv(void *s)
{
    mxp_conv_opts *o = s;
    o->padding[0] = o->padding[1] = 1;
    o->stride[1] = 2;
    o->activation = MXP_ACT_RELU;
}

static mxp_status c_conv2d(void *s, uint64_t *d)
{
    mxp_array *x = view_of(X, 4, 1, 2, 2, 2), *w = view_of(Y, 4, 4, 2, 1, 1), *o = GARBAGE_PTR;
    mxp_status st = made(mxp_conv2d(&o, x, w, NULL, s, 0), &o, d);
    mxp_array_free(x), mxp_array_free(w);
    return st;
}

static mxp_status c_conv2d_into(void *s, uint64_t *d)
{
    mxp_array *x = view_of(X, 4, 1, 2, 2, 2), *w = view_of(Y, 4, 4, 2, 1, 1);
    const mxp_conv_opts *o = s;
    const int64_t shape[4] = { 1, 4, 4, o->stride[1] == 2 ? 2 : 4 };
    mxp_array *out = new_array(MXP_F32, 4, shape);
    mxp_status st = into(mxp_conv2d_into(out, x, w, NULL, s), out, d);
    mxp_array_free(x), mxp_array_free(w);
    return st;
}

static mxp_status c_conv1d(void *s, uint64_t *d)
{
    mxp_array *x = view_of(X, 3, 1, 2, 4, 0), *w = view_of(Y, 3, 4, 2, 1, 0), *o = GARBAGE_PTR;
    mxp_status st = made(mxp_conv1d(&o, x, w, NULL, s, 0), &o, d);
    mxp_array_free(x), mxp_array_free(w);
    return st;
}

static mxp_status c_conv2d_backward(void *s, uint64_t *d)
{
    mxp_array *x = view_of(X, 4, 1, 2, 2, 2), *w = view_of(Y, 4, 4, 2, 1, 1), *dy = NULL, *dx = GARBAGE_PTR;
    const mxp_conv_opts plain = { .padding = { 1, 1 }, .stride = { 1, 2 } };
    assert_int_equal(mxp_conv2d(&dy, x, w, NULL, &plain, 0), MXP_OK);
    mxp_status st = made(mxp_conv2d_backward(&dx, NULL, NULL, dy, x, w, s), &dx, d);
    mxp_array_free(x), mxp_array_free(w), mxp_array_free(dy);
    return st;
}

static void init_pool(void *s)
{
    mxp_pool_opts *o = s;
    o->kernel[0] = 2, o->kernel[1] = 1;
    o->stride[0] = o->stride[1] = 1;
    o->padding[0] = 1;
    o->exclude_pad = true;
}

static mxp_status c_pool(void *s, uint64_t *d, bool avg, bool to, bool back)
{
    mxp_array *x = view_of(X, 4, 1, 2, 2, 2), *o = GARBAGE_PTR, *y = NULL;
    const mxp_pool_opts plain = { .kernel = { 2, 1 }, .stride = { 1, 1 }, .padding = { 1, 0 } };
    mxp_status st;
    if (back) {
        assert_int_equal(mxp_avg_pool2d(&y, x, &plain, 0), MXP_OK);
        st = made(avg ? mxp_avg_pool2d_backward(&o, y, x, s) : mxp_max_pool2d_backward(&o, y, x, s), &o, d);
    } else if (to) {
        const int64_t shape[4] = { 1, 2, 3, 2 };
        mxp_array *out = new_array(MXP_F32, 4, shape);
        st = into(avg ? mxp_avg_pool2d_into(out, x, s) : mxp_max_pool2d_into(out, x, s), out, d);
    } else {
        st = made(avg ? mxp_avg_pool2d(&o, x, s, 0) : mxp_max_pool2d(&o, x, s, 0), &o, d);
    }
    mxp_array_free(x), mxp_array_free(y);
    return st;
}

static mxp_status c_max_pool2d(void *s, uint64_t *d) { return c_pool(s, d, false, false, false); }
static mxp_status c_max_pool2d_into(void *s, uint64_t *d) { return c_pool(s, d, false, true, false); }
static mxp_status c_max_pool2d_backward(void *s, uint64_t *d) { return c_pool(s, d, false, false, true); }
static mxp_status c_avg_pool2d(void *s, uint64_t *d) { return c_pool(s, d, true, false, false); }
static mxp_status c_avg_pool2d_into(void *s, uint64_t *d) { return c_pool(s, d, true, true, false); }
static mxp_status c_avg_pool2d_backward(void *s, uint64_t *d) { return c_pool(s, d, true, false, true); }

/* ---- the analysis reports --------------------------------------------------- */

static mxp_status c_compare(void *s, uint64_t *d)
{
    (void)d;
    return mxp_compare(X, Y, s);
}

static mxp_status c_compare_piece(void *s, uint64_t *d)
{
    mxp_compare_sums sums = { 0 };
    mxp_status st = mxp_compare_piece(X, Y, s, &sums, NULL);
    *d = hash(0, &sums, sizeof sums);
    return st;
}

static void init_compare_finish(void *s)
{
    mxp_compare_report *r = s;
    r->count = 8;
    r->max_abs_error = 0.5; /* not one of the fields it sets: stays */
}

static mxp_status c_compare_finish(void *s, uint64_t *d)
{
    (void)d;
    const mxp_compare_sums sums = { .rel = 0.25, .ulp = 12, .sq = 0.01, .ref2 = 30, .test2 = 29, .dot = 29.5,
                                    .max_ref = 3.75 };
    mxp_compare_finish(s, &sums);
    return by_error();
}

static void init_compare_merge(void *s)
{
    mxp_compare_report *r = s;
    r->count = 8;
    r->max_abs_error = 0.5;
    r->worst_index = 3;
}

static mxp_status c_compare_merge(void *s, uint64_t *d)
{
    const mxp_compare_report piece = { .count = 4, .max_abs_error = 0.75, .max_rel_error = 0.1, .worst_index = 9,
                                       .histogram = { 1, 2 } };
    mxp_compare_sums sums = { .rel = 0.25, .sq = 0.01, .ref2 = 30 }, more = { .rel = 0.5, .sq = 0.02, .ref2 = 1 };
    mxp_status st = mxp_compare_merge(s, &sums, &piece, &more);
    *d = hash(0, &sums, sizeof sums);
    return st;
}

/* A select over X's and Y's relative errors, to the end. */
static mxp_status c_compare_select_finish(void *s, uint64_t *d)
{
    double e[N];
    for (int i = 0; i < N; i++)
        e[i] = fabs((double)ys[i] - (double)xs[i]) / fabs((double)xs[i]);
    mxp_compare_select *sel = NULL;
    assert_int_equal(mxp_compare_select_create(&sel, true, 0), MXP_OK);
    uint64_t prefix[8];
    int pshift[8], shift, ng;
    while ((ng = mxp_compare_select_groups(sel, prefix, pshift, &shift)) > 0) {
        mxp_compare_bucket *b[8];
        size_t nb[8];
        for (int g = 0; g < ng; g++)
            assert_int_equal(mxp_compare_buckets(&b[g], &nb[g], e, N, prefix[g], pshift[g], shift), MXP_OK);
        assert_int_equal(mxp_compare_select_step(sel, (const mxp_compare_bucket *const *)b, nb), MXP_OK);
        for (int g = 0; g < ng; g++)
            mxp_free(b[g]);
    }
    double bounds[4];
    mxp_status st = mxp_compare_select_finish(sel, s, bounds);
    mxp_compare_select_free(sel);
    *d = hash(0, bounds, sizeof bounds);
    return st;
}

static mxp_status c_matmul_strided(void *s, uint64_t *d)
{
    uint16_t c[4] = { 0 };
    mxp_status st = mxp_matmul_strided(2, 2, 3, am, MXP_F32, 12, 4, bm, MXP_F32, 8, 4, c, MXP_BF16, 4, 2, s);
    *d = hash(0, c, sizeof c);
    return st;
}

static mxp_status c_roundtrip_analysis(void *s, uint64_t *d)
{
    (void)d;
    static const mxp_dtype cand[1] = { MXP_BF16 };
    return mxp_roundtrip_analysis(X, cand, 1, s);
}

static const mxp_requirement no_overflow = { MXP_REQUIRE_NO_OVERFLOW, 0 };

static mxp_status c_recommend_dtype(void *s, uint64_t *d)
{
    (void)d;
    return mxp_recommend_dtype(X, &no_overflow, s);
}

static mxp_status c_recommend_dtype_rows(void *s, uint64_t *d)
{
    mxp_roundtrip_row rows[MXP_ADVISOR_CANDIDATES] = { 0 };
    mxp_status st = mxp_recommend_dtype_rows(X, &no_overflow, s, rows);
    *d = hash(0, rows, sizeof rows);
    return st;
}

static mxp_status c_recommend_dtype_among(void *s, uint64_t *d)
{
    static const mxp_dtype cand[3] = { MXP_BF16, MXP_FLOAT4_E2M1FN, MXP_FLOAT6_E3M2FN };
    mxp_roundtrip_row rows[3] = { 0 };
    mxp_status st = mxp_recommend_dtype_among(X, &no_overflow, cand, 3, s, rows);
    *d = hash(0, rows, sizeof rows);
    return st;
}

/* ---- mxp_tensor_stats ------------------------------------------------------- */

static mxp_status c_monitor_record(void *s, uint64_t *d)
{
    (void)d;
    mxp_monitor *m = NULL;
    assert_int_equal(mxp_monitor_create(&m, NULL), MXP_OK);
    mxp_status st = mxp_monitor_record(m, 3, "w", MXP_ROLE_WEIGHT, X, s);
    mxp_monitor_free(m);
    return st;
}

static mxp_status c_monitor_history_get(void *s, uint64_t *d)
{
    (void)d;
    return mxp_monitor_history_get(history, "w", 0, s);
}

/* ---- the table ---------------------------------------------------------------- */

enum { OPTS, REPORT, INOUT }; /* INOUT: a report the function reads too */

typedef struct entry {
    const char *fn, *type;
    size_t size;
    int kind;
    mxp_status (*call)(void *s, uint64_t *digest);
    void (*init)(void *s);
    size_t embedded[2]; /* offsets of embedded structs (their own struct_size first), 0: none */
    size_t embedded_size[2];
    bool varies;        /* a report that differs call to call (the allocator's counters) */
} entry;

#define ROW(F, T, K, C, I, ...) { .fn = F, .type = #T, .size = sizeof(T), .kind = K, .call = C, .init = I, __VA_ARGS__ }
#define OPT(F, T, I, ...) ROW(#F, T, OPTS, c_##F, I, __VA_ARGS__)
#define REP(F, T, ...) ROW(#F, T, REPORT, c_##F, NULL, __VA_ARGS__)
#define EMB(T, field, E) .embedded = { offsetof(T, field) }, .embedded_size = { sizeof(E) }
#define EMB_CONVERT(T) EMB(T, convert, mxp_convert_opts)
#define EMB_ADVICE                                                                       \
    .embedded = { offsetof(mxp_advice, row), offsetof(mxp_advice, row.report) },         \
    .embedded_size = { sizeof(mxp_roundtrip_row), sizeof(mxp_compare_report) }

static const entry entries[] = {
    OPT(convert, mxp_convert_opts, init_convert),
    OPT(convert_strided, mxp_convert_opts, init_convert),
    OPT(convert_kernel_name, mxp_convert_opts, init_convert),
    OPT(array_full, mxp_convert_opts, init_convert),
    OPT(array_astype, mxp_convert_opts, init_convert),
    OPT(array_copyto, mxp_convert_opts, init_convert),
    OPT(mx_quantize, mxp_convert_opts, init_convert),
    OPT(binary_strided, mxp_convert_opts, init_convert),
    OPT(unary_strided, mxp_convert_opts, init_convert),
    OPT(quantize, mxp_convert_opts, init_convert),
    OPT(quantize_into, mxp_convert_opts, init_convert),
    OPT(fake_quantize, mxp_convert_opts, init_convert),
    OPT(gemm, mxp_gemm_opts, init_gemm, EMB_CONVERT(mxp_gemm_opts)),
    OPT(gemm_kernel_name, mxp_gemm_opts, init_gemm, EMB_CONVERT(mxp_gemm_opts)),
    ROW("gemm_safe", mxp_gemm_opts, OPTS, c_gemm_safe_gemm_opts, init_gemm, EMB_CONVERT(mxp_gemm_opts)),
    OPT(matmul, mxp_gemm_opts, init_gemm, EMB_CONVERT(mxp_gemm_opts)),
    OPT(matmul_into, mxp_gemm_opts, init_gemm, EMB_CONVERT(mxp_gemm_opts)),
    OPT(gemm_strided_batched, mxp_gemm_opts, init_gemm, EMB_CONVERT(mxp_gemm_opts)),
    OPT(matmul_strided, mxp_gemm_opts, init_gemm, EMB_CONVERT(mxp_gemm_opts)),
    REP(get_memory_stats, mxp_memory_stats, .varies = true),
    REP(memory_stats_get, mxp_memory_stats, .varies = true),
    OPT(binary, mxp_ops_opts, init_ops, EMB_CONVERT(mxp_ops_opts)),
    OPT(binary_into, mxp_ops_opts, init_ops, EMB_CONVERT(mxp_ops_opts)),
    OPT(unary, mxp_ops_opts, init_ops, EMB_CONVERT(mxp_ops_opts)),
    OPT(unary_into, mxp_ops_opts, init_ops, EMB_CONVERT(mxp_ops_opts)),
    OPT(binary_scalar, mxp_ops_opts, init_ops, EMB_CONVERT(mxp_ops_opts)),
    OPT(binary_scalar_int, mxp_ops_opts, init_ops, EMB_CONVERT(mxp_ops_opts)),
    OPT(scalar_binary, mxp_ops_opts, init_ops, EMB_CONVERT(mxp_ops_opts)),
    OPT(scalar_int_binary, mxp_ops_opts, init_ops, EMB_CONVERT(mxp_ops_opts)),
    OPT(call_unary_op, mxp_ops_opts, init_ops, EMB_CONVERT(mxp_ops_opts)),
    OPT(reduce, mxp_reduce_opts, init_reduce, EMB_CONVERT(mxp_reduce_opts)),
    OPT(array_format, mxp_print_opts, init_print),
    OPT(array_fprint, mxp_print_opts, init_print),
    ROW("gemm_safe", mxp_gemm_safe_opts, OPTS, c_gemm_safe_safe, init_gemm_safe),
    ROW("gemm_safe", mxp_gemm_safe_report, REPORT, c_gemm_safe_report, NULL),
    OPT(observer_create, mxp_observer_opts, init_observer),
    OPT(observer_qparams_from_histogram, mxp_observer_opts, init_observer),
    OPT(optimizer_create, mxp_optimizer_opts, init_optimizer),
    OPT(loss_scaler_create, mxp_loss_scaler_opts, init_loss_scaler),
    OPT(monitor_create, mxp_monitor_opts, init_monitor),
    OPT(conv2d, mxp_conv_opts, init_conv),
    OPT(conv2d_into, mxp_conv_opts, init_conv),
    OPT(conv1d, mxp_conv_opts, init_conv),
    OPT(conv2d_backward, mxp_conv_opts, init_conv),
    OPT(max_pool2d, mxp_pool_opts, init_pool),
    OPT(max_pool2d_into, mxp_pool_opts, init_pool),
    OPT(max_pool2d_backward, mxp_pool_opts, init_pool),
    OPT(avg_pool2d, mxp_pool_opts, init_pool),
    OPT(avg_pool2d_into, mxp_pool_opts, init_pool),
    OPT(avg_pool2d_backward, mxp_pool_opts, init_pool),
    REP(compare, mxp_compare_report),
    REP(compare_piece, mxp_compare_report),
    ROW("compare_finish", mxp_compare_report, INOUT, c_compare_finish, init_compare_finish),
    ROW("compare_merge", mxp_compare_report, INOUT, c_compare_merge, init_compare_merge),
    ROW("compare_select_finish", mxp_compare_report, INOUT, c_compare_select_finish, init_compare_finish),
    REP(roundtrip_analysis, mxp_roundtrip_row, EMB(mxp_roundtrip_row, report, mxp_compare_report)),
    REP(recommend_dtype, mxp_advice, EMB_ADVICE),
    REP(recommend_dtype_rows, mxp_advice, EMB_ADVICE),
    REP(recommend_dtype_among, mxp_advice, EMB_ADVICE),
    REP(monitor_record, mxp_tensor_stats),
    REP(monitor_history_get, mxp_tensor_stats),
};

/* ---- the harness -------------------------------------------------------------- */

enum { EXTRA = 64, BUF = 2048 };
#define FILL 0xA5

static _Alignas(64) unsigned char buf[BUF];
static unsigned char before[BUF];

static void set_size(unsigned char *s, size_t offset, size_t v)
{
    memcpy(s + offset, &v, sizeof v);
}

static size_t size_at(const unsigned char *s, size_t offset)
{
    size_t v;
    memcpy(&v, s + offset, sizeof v);
    return v;
}

/* The struct at buf: options zero, a report all `fill` (its embedded
 * struct_size fields 0), then init; struct_size; `extra` zero bytes beyond
 * and FILL guard bytes after those. */
static void prepare(const entry *e, size_t struct_size, size_t extra, unsigned char fill)
{
    memset(buf, FILL, sizeof buf);
    memset(buf, e->kind == OPTS ? 0 : fill, e->size);
    memset(buf + e->size, 0, extra);
    for (int i = 0; i < 2 && e->embedded[i]; i++)
        set_size(buf, e->embedded[i], 0);
    if (e->init)
        e->init(buf);
    set_size(buf, 0, struct_size);
    memcpy(before, buf, sizeof buf);
}

/* The report's bytes after struct_size, its embedded struct_size fields left out. */
static uint64_t report_digest(const entry *e)
{
    unsigned char copy[BUF];
    memcpy(copy, buf, e->size);
    for (int i = 0; i < 2 && e->embedded[i]; i++)
        set_size(copy, e->embedded[i], 0);
    return hash(0, copy + sizeof(size_t), e->size - sizeof(size_t));
}

static mxp_status run(const entry *e, uint64_t *digest)
{
    uint64_t d = 0;
    mxp_clear_error();
    const mxp_status st = e->call(buf, &d);
    *digest = e->kind == OPTS || e->varies ? d : d ^ report_digest(e);
    return st;
}

static void expect_untouched_from(size_t from)
{
    assert_memory_equal(buf + from, before + from, sizeof buf - from);
}

static void expect_refused(const entry *e, const char *why)
{
    uint64_t d;
    const mxp_status st = run(e, &d);
    char where[64];
    snprintf(where, sizeof where, "mxp_%s: ", e->fn);
    if (st != MXP_ERR_INVALID_ARGUMENT || strncmp(mxp_last_error(), where, strlen(where)) ||
        !strstr(mxp_last_error(), why))
        fail_msg("mxp_%s (%s, struct_size %zu): %s, \"%s\"; want MXP_ERR_INVALID_ARGUMENT and a sentence "
                 "\"%s... %s...\"", e->fn, e->type, size_at(buf, 0), mxp_status_str(st), mxp_last_error(), where,
                 why);
    expect_untouched_from(0); /* nothing written, the report included */
}

static void check_entry(const entry *e)
{
    /* struct_size 0: this release's layout; a report filled whole, nothing
     * written beyond it, struct_size left 0 */
    uint64_t d0, d;
    prepare(e, 0, 0, FILL);
    mxp_status st = run(e, &d0);
    if (st != MXP_OK)
        fail_msg("mxp_%s (%s, struct_size 0): %s, %s", e->fn, e->type, mxp_status_str(st), mxp_last_error());
    assert_int_equal(size_at(buf, 0), 0);
    expect_untouched_from(e->size);

    /* sizeof, the embedded structs' struct_size set too (and left so); a
     * report filled from other garbage gives the same bytes */
    prepare(e, e->size, 0, e->kind == REPORT ? 0x5A : FILL);
    for (int i = 0; i < 2 && e->embedded[i]; i++)
        set_size(buf, e->embedded[i], e->embedded_size[i]);
    memcpy(before, buf, sizeof buf);
    assert_int_equal(run(e, &d), MXP_OK);
    if (!e->varies)
        assert_true(d == d0);
    assert_int_equal(size_at(buf, 0), e->size);
    for (int i = 0; i < 2 && e->embedded[i]; i++)
        assert_int_equal(size_at(buf, e->embedded[i]), e->embedded_size[i]);
    expect_untouched_from(e->size);

    /* a newer caller's larger struct: zeros beyond are read as nothing and
     * stay zero; a nonzero byte beyond is a field this library does not know */
    prepare(e, e->size + EXTRA, EXTRA, FILL);
    assert_int_equal(run(e, &d), MXP_OK);
    if (!e->varies)
        assert_true(d == d0);
    assert_int_equal(size_at(buf, 0), e->size + EXTRA);
    expect_untouched_from(e->size);
    prepare(e, e->size + EXTRA, EXTRA, FILL);
    buf[e->size + 17] = 1;
    memcpy(before, buf, sizeof buf);
    expect_refused(e, "not zero");

    /* sizes that are no layout (never a multiple of 8, or too far beyond) */
    const size_t bad[] = { 1, 4, e->size - 4, e->size + 4096 + 8, SIZE_MAX,
                           (size_t)0xA5A5A5A5A5A5A5A5ull };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        prepare(e, bad[i], 8, FILL);
        expect_refused(e, "struct_size");
    }

    /* an embedded struct follows the outer layout: only 0 or its size */
    for (int i = 0; i < 2 && e->embedded[i]; i++) {
        const size_t wrong[] = { 8, e->embedded_size[i] - 8, e->embedded_size[i] + 8 };
        for (size_t k = 0; k < 3; k++) {
            prepare(e, e->size, 0, FILL);
            set_size(buf, e->embedded[i], wrong[k]);
            memcpy(before, buf, sizeof buf);
            expect_refused(e, "embedded");
        }
    }
}

void test_abi_every_entry_point(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        print_message("mxp_%s (%s)\n", entries[i].fn, entries[i].type);
        check_entry(&entries[i]);
    }
}
