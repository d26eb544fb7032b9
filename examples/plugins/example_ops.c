/* An example mxp operator plugin (docs/plugins.md walks through it):
 *
 *   gelu          x * Phi(x), the erf form: float32, float16, bfloat16
 *   gelu_tanh     the tanh form, with a fast exp: float32 (a portable and
 *                 an AVX2 kernel: mxp's dispatch picks one), float16, bfloat16
 *   bias_gelu     gelu(x + bias), bias broadcast: float32, bfloat16
 *   logsumexp     a reduction: log(sum(exp(x))) of each row, float32
 *   cosine_similarity  a general operator: rows of two (B, D) arrays to
 *                 (B,), float32 and bfloat16 inputs, float32 output
 *
 * Each has a float64 reference that `mxp check op` compares with.  The
 * plugin includes only <mxp/plugin.h>: it does not link libmxp; the 16-bit
 * kernels widen and narrow through host->convert.
 *
 * Build (-O3 -fno-trapping-math let GCC vectorize the gelu_tanh loops):
 *   cc -O3 -fno-trapping-math -shared -fPIC -I<mxp>/include example_ops.c -o libmxp_example_ops.so -lm */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mxp/plugin.h"

static mxp_plugin_host *host; /* kept for convert and set_error */

enum { CHUNK = 256 }; /* 16-bit kernels widen this many elements at a time */

/* ---- gelu (erf form) -------------------------------------------------- */

/* x Phi(x) = x erfc(-x / sqrt 2) / 2: no cancellation for negative x. */
static double gelu64(double x) { return 0.5 * x * erfc(-x * 0.70710678118654752440); }

static void gelu_f64(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx;
    const double *x = in[0];
    double *y = out;
    for (size_t i = 0; i < n; i++)
        y[i] = gelu64(x[i]);
}

/* float32 from a float64 evaluation: within one rounding of the exact value
 * except near the double's own error. */
static void gelu_f32(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx;
    const float *x = in[0];
    float *y = out;
    for (size_t i = 0; i < n; i++)
        y[i] = (float)gelu64(x[i]);
}

/* 16-bit types: widened exactly to float32, computed in float64, rounded
 * once (float32 -> 16-bit would round twice: the float64 result goes
 * straight to the 16-bit type).  Not quite correctly rounded: for
 * subnormal x, gelu(x) = x/2 + O(x^2) is a tie in float64 and rounds to
 * even, one ulp from mxp's built-in gelu (which sees the x^2 term). */
static void gelu_h16(void *out, const void *const *in, size_t n, mxp_dtype t)
{
    float xf[CHUNK];
    double y[CHUNK];
    for (size_t s = 0; s < n; s += CHUNK) {
        size_t m = n - s < CHUNK ? n - s : CHUNK;
        host->convert(xf, MXP_F32, (const uint16_t *)in[0] + s, t, m);
        for (size_t i = 0; i < m; i++)
            y[i] = gelu64(xf[i]);
        host->convert((uint16_t *)out + s, t, y, MXP_F64, m);
    }
}
static void gelu_bf16(void *out, const void *const *in, size_t n, void *ctx) { (void)ctx, gelu_h16(out, in, n, MXP_BF16); }
static void gelu_f16(void *out, const void *const *in, size_t n, void *ctx) { (void)ctx, gelu_h16(out, in, n, MXP_F16); }

/* ---- gelu_tanh with a fast exp ---------------------------------------- */

static inline float pow2i(int32_t k) /* 2^k for -126 <= k <= 128 (128: infinity) */
{
    int32_t bits = (k + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* exp(x) for float32 without a libm call, branch-free so that a compiler
 * vectorizes the loop: 2^k p(r), r = x - k ln 2 in two parts, p of degree
 * 6; about 1-2 ulp for normal results.  2^k is applied in two halves so
 * that results down to the subnormals (x >= -103) come out; below -104
 * zero; above 88.7 infinity; NaN stays NaN. */
static inline float fast_expf(float x)
{
    float c = x < -103.0f ? -103.0f : x > 89.0f ? 89.0f : x;
    c = c == c ? c : 0.0f; /* NaN: any finite value, the NaN is returned below */
    float k = (c * 1.44269504f + 12582912.0f) - 12582912.0f; /* round to nearest: 1.5 * 2^23 */
    float r = c - k * 0.693145752f;
    r = r - k * 1.42860677e-6f;
    float p = 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t ki = (int32_t)k, k1 = ki / 2;
    return x == x ? (x < -104.0f ? 0.0f : p * pow2i(k1) * pow2i(ki - k1)) : x;
}

/* 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi)(x + 0.044715 x^3),
 * from e = exp(-|2u|) <= 1: sigmoid(2u) = 1/(1+e) for u >= 0, e/(1+e)
 * below; no cancellation and no overflow on either side. */
static inline float gelu_tanh32(float x)
{
    float t = 1.5957691216f * (x + 0.044715f * x * x * x);
    float e = fast_expf(-__builtin_fabsf(t));
    return x * ((t >= 0.0f ? 1.0f : e) / (1.0f + e));
}

static void gelu_tanh_f32(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx;
    const float *x = in[0];
    float *y = out;
    for (size_t i = 0; i < n; i++)
        y[i] = gelu_tanh32(x[i]);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same loop compiled for AVX2 + FMA: 8 lanes (the compiler vectorizes
 * it); mxp calls it when the CPU has AVX2 and MXP_ISA allows it. */
__attribute__((target("avx2,fma"))) static void gelu_tanh_f32_avx2(void *out, const void *const *in, size_t n,
                                                                    void *ctx)
{
    (void)ctx;
    const float *x = in[0];
    float *y = out;
    for (size_t i = 0; i < n; i++)
        y[i] = gelu_tanh32(x[i]);
}
#define HAVE_AVX2_KERNEL 1
#endif

/* 16-bit types through the float32 kernel: widened exactly, rounded once
 * more from its float32 result (so up to half a 16-bit ulp beyond it). */
static void gelu_tanh_h16(void *out, const void *const *in, size_t n, mxp_dtype t)
{
    float x[CHUNK], y[CHUNK];
    for (size_t s = 0; s < n; s += CHUNK) {
        size_t m = n - s < CHUNK ? n - s : CHUNK;
        host->convert(x, MXP_F32, (const uint16_t *)in[0] + s, t, m);
        for (size_t i = 0; i < m; i++)
            y[i] = gelu_tanh32(x[i]);
        host->convert((uint16_t *)out + s, t, y, MXP_F32, m);
    }
}
static void gelu_tanh_bf16(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx, gelu_tanh_h16(out, in, n, MXP_BF16);
}
static void gelu_tanh_f16(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx, gelu_tanh_h16(out, in, n, MXP_F16);
}

static void gelu_tanh_f64(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx;
    const double *x = in[0];
    double *y = out;
    for (size_t i = 0; i < n; i++) {
        double u = 0.79788456080286535588 * (x[i] + 0.044715 * x[i] * x[i] * x[i]);
        y[i] = x[i] / (1.0 + exp(-2.0 * u)); /* 0.5 x (1 + tanh u) without its cancellation for x < 0 */
    }
}

/* ---- bias_gelu ---------------------------------------------------------- */

static void bias_gelu_f64(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx;
    const double *x = in[0], *b = in[1];
    double *y = out;
    for (size_t i = 0; i < n; i++)
        y[i] = gelu64(x[i] + b[i]);
}

/* x + b exact in float64 (two float32s), then gelu: one rounding at the end. */
static void bias_gelu_f32(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx;
    const float *x = in[0], *b = in[1];
    float *y = out;
    for (size_t i = 0; i < n; i++)
        y[i] = (float)gelu64((double)x[i] + (double)b[i]);
}

static void bias_gelu_bf16(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx;
    float x[CHUNK], b[CHUNK];
    double y[CHUNK];
    for (size_t s = 0; s < n; s += CHUNK) {
        size_t m = n - s < CHUNK ? n - s : CHUNK;
        host->convert(x, MXP_F32, (const uint16_t *)in[0] + s, MXP_BF16, m);
        host->convert(b, MXP_F32, (const uint16_t *)in[1] + s, MXP_BF16, m);
        for (size_t i = 0; i < m; i++)
            y[i] = gelu64((double)x[i] + (double)b[i]);
        host->convert((uint16_t *)out + s, MXP_BF16, y, MXP_F64, m);
    }
}

/* ---- logsumexp (a reduction) -------------------------------------------- */

static double lse64(const double *x, size_t n)
{
    double m = x[0];
    for (size_t i = 1; i < n; i++)
        m = x[i] > m ? x[i] : m;
    if (isinf(m))
        return m; /* all -inf, or +inf somewhere */
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += exp(x[i] - m);
    return m + log(s);
}

static void logsumexp_f64(void *out, const void *in, size_t rows, size_t n, void *ctx)
{
    (void)ctx;
    for (size_t r = 0; r < rows; r++)
        ((double *)out)[r] = lse64((const double *)in + r * n, n);
}

static void logsumexp_f32(void *out, const void *in, size_t rows, size_t n, void *ctx)
{
    (void)ctx;
    double row[CHUNK];
    for (size_t r = 0; r < rows; r++) {
        const float *x = (const float *)in + r * n;
        float m = x[0];
        for (size_t i = 1; i < n; i++)
            m = x[i] > m ? x[i] : m;
        double s = 0;
        if (isinf(m)) {
            ((float *)out)[r] = m;
            continue;
        }
        for (size_t i = 0; i < n; i += CHUNK) {
            size_t k = n - i < CHUNK ? n - i : CHUNK;
            for (size_t j = 0; j < k; j++)
                row[j] = exp((double)x[i + j] - m);
            for (size_t j = 0; j < k; j++)
                s += row[j];
        }
        ((float *)out)[r] = (float)(m + log(s));
    }
}

/* ---- cosine_similarity (a general operator) ------------------------------ */

static int cosine_shape(int *out_ndim, int64_t *out_shape, const mxp_op_tensor *in, int n_in, void *ctx)
{
    (void)ctx, (void)n_in;
    if (in[0].ndim < 1 || in[0].ndim != in[1].ndim ||
        memcmp(in[0].shape, in[1].shape, (size_t)in[0].ndim * sizeof *in[0].shape)) {
        host->set_error(host, "cosine_similarity takes two arrays of one shape with at least one axis");
        return -1;
    }
    *out_ndim = in[0].ndim - 1;
    memcpy(out_shape, in[0].shape, (size_t)*out_ndim * sizeof *out_shape);
    return 0;
}

/* Rows along the last axis, sums in float64 whatever the input. */
static void cosine_rows(double *out, const double *a, const double *b, size_t rows, size_t d)
{
    for (size_t r = 0; r < rows; r++) {
        const double *x = a + r * d, *y = b + r * d;
        double xy = 0, xx = 0, yy = 0;
        for (size_t i = 0; i < d; i++)
            xy += x[i] * y[i], xx += x[i] * x[i], yy += y[i] * y[i];
        out[r] = xx > 0 && yy > 0 ? xy / sqrt(xx * yy) : 0.0;
    }
}

static size_t rows_of(const mxp_op_tensor *t, size_t *d)
{
    size_t rows = 1;
    for (int i = 0; i + 1 < t->ndim; i++)
        rows *= (size_t)t->shape[i];
    *d = (size_t)t->shape[t->ndim - 1];
    return rows;
}

static int cosine_f64(mxp_op_tensor *out, const mxp_op_tensor *in, int n_in, void *ctx)
{
    (void)ctx, (void)n_in;
    size_t d, rows = rows_of(&in[0], &d);
    cosine_rows(out->data, in[0].data, in[1].data, rows, d);
    return 0;
}

/* float32 or bfloat16 rows widened CHUNK rows' worth at a time. */
static int cosine_any(mxp_op_tensor *out, const mxp_op_tensor *in, int n_in, void *ctx)
{
    (void)ctx, (void)n_in;
    size_t d, rows = rows_of(&in[0], &d);
    const size_t isz = in[0].dtype == MXP_F32 ? 4 : 2;
    double a[4096], b[4096], res[64];
    if (d == 0 || d > 4096) {
        host->set_error(host, "cosine_similarity: rows of 1 to 4096 elements only");
        return -1;
    }
    const size_t per = 4096 / d < 64 ? 4096 / d : 64;
    for (size_t r = 0; r < rows; r += per) {
        size_t k = rows - r < per ? rows - r : per;
        host->convert(a, MXP_F64, (const char *)in[0].data + r * d * isz, in[0].dtype, k * d);
        host->convert(b, MXP_F64, (const char *)in[1].data + r * d * isz, in[1].dtype, k * d);
        cosine_rows(res, a, b, k, d);
        host->convert((float *)out->data + r, MXP_F32, res, MXP_F64, k);
    }
    return 0;
}

/* ---- the declarations ----------------------------------------------------- */

static const mxp_op_kernel gelu_kernels[] = {
    { "float32->float32", MXP_ISA_SCALAR, { .elementwise = gelu_f32 } },
    { "bfloat16->bfloat16", MXP_ISA_SCALAR, { .elementwise = gelu_bf16 } },
    { "float16->float16", MXP_ISA_SCALAR, { .elementwise = gelu_f16 } },
};
static const mxp_op_kernel gelu_tanh_kernels[] = {
    { "float32->float32", MXP_ISA_SCALAR, { .elementwise = gelu_tanh_f32 } },
#ifdef HAVE_AVX2_KERNEL
    { "float32->float32", MXP_ISA_AVX2, { .elementwise = gelu_tanh_f32_avx2 } },
#endif
    { "bfloat16->bfloat16", MXP_ISA_SCALAR, { .elementwise = gelu_tanh_bf16 } },
    { "float16->float16", MXP_ISA_SCALAR, { .elementwise = gelu_tanh_f16 } },
};
static const mxp_op_kernel bias_gelu_kernels[] = {
    { "float32,float32->float32", MXP_ISA_SCALAR, { .elementwise = bias_gelu_f32 } },
    { "bfloat16,bfloat16->bfloat16", MXP_ISA_SCALAR, { .elementwise = bias_gelu_bf16 } },
};
static const mxp_op_kernel logsumexp_kernels[] = {
    { "float32->float32", MXP_ISA_SCALAR, { .reduce = logsumexp_f32 } },
};
static const mxp_op_kernel cosine_kernels[] = {
    { "float32,float32->float32", MXP_ISA_SCALAR, { .general = cosine_any } },
    { "bfloat16,bfloat16->float32", MXP_ISA_SCALAR, { .general = cosine_any } },
};

#define COUNT(a) (int)(sizeof a / sizeof a[0])
#define DEF(...) { .abi_version = MXP_PLUGIN_ABI_VERSION, .struct_size = sizeof(mxp_op_def), __VA_ARGS__ }

static const mxp_op_def defs[] = {
    DEF(.name = "gelu", .doc = "x * Phi(x) (the erf form), rounded once", .kind = MXP_OP_ELEMENTWISE,
        .n_inputs = 1, .kernels = gelu_kernels, .n_kernels = COUNT(gelu_kernels),
        .reference = { .elementwise = gelu_f64 }),
    DEF(.name = "gelu_tanh", .doc = "0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), a fast exp",
        .kind = MXP_OP_ELEMENTWISE, .n_inputs = 1, .kernels = gelu_tanh_kernels,
        .n_kernels = COUNT(gelu_tanh_kernels), .reference = { .elementwise = gelu_tanh_f64 }),
    DEF(.name = "bias_gelu", .doc = "gelu(x + bias), the sum exact", .kind = MXP_OP_ELEMENTWISE, .n_inputs = 2,
        .kernels = bias_gelu_kernels, .n_kernels = COUNT(bias_gelu_kernels),
        .reference = { .elementwise = bias_gelu_f64 }),
    DEF(.name = "logsumexp", .doc = "log(sum(exp(x))) along an axis, stable", .kind = MXP_OP_REDUCTION,
        .n_inputs = 1, .kernels = logsumexp_kernels, .n_kernels = COUNT(logsumexp_kernels),
        .reference = { .reduce = logsumexp_f64 }),
    DEF(.name = "cosine_similarity", .doc = "cosine of the angle between rows (last axis) of two arrays",
        .kind = MXP_OP_GENERAL, .n_inputs = 2, .kernels = cosine_kernels, .n_kernels = COUNT(cosine_kernels),
        .reference = { .general = cosine_f64 }, .shape = cosine_shape, .check_shapes = "64x384,64x384"),
};

MXP_PLUGIN_EXPORT int mxp_plugin_register(mxp_plugin_host *h)
{
    if (h->abi_version != MXP_PLUGIN_ABI_VERSION) /* an mxp of another plugin ABI */
        return -1;
    host = h;
    for (int i = 0; i < COUNT(defs); i++)
        if (h->declare(h, &defs[i]) != 0)
            return -1;
    return 0;
}
