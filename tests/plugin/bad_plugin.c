/* Plugins that mxp_ops_load must refuse (one per BAD_* macro: CMake builds
 * this file once per case) and HOSTILE: a plugin that loads but whose
 * operators fail at call time (tests/plugin/test_plugin.c). */
#include <string.h>

#include "mxp/plugin.h"

#ifdef BAD_NOSYMBOL
MXP_PLUGIN_EXPORT int not_a_plugin(void);
MXP_PLUGIN_EXPORT int not_a_plugin(void) { return 0; }
#else
static void copy_f32(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx;
    memcpy(out, in[0], n * sizeof(float));
}

static inline void copy_f64(void *out, const void *const *in, size_t n, void *ctx)
{
    (void)ctx;
    memcpy(out, in[0], n * sizeof(double));
}

static const mxp_op_kernel copy_kernels[] = { { "float32->float32", MXP_ISA_SCALAR, { .elementwise = copy_f32 } } };

#define DEF(...) { .abi_version = MXP_PLUGIN_ABI_VERSION, .struct_size = sizeof(mxp_op_def), __VA_ARGS__ }

#ifdef HOSTILE
static mxp_plugin_host *host;

static int scalar_shape(int *out_ndim, int64_t *out_shape, const mxp_op_tensor *in, int n_in, void *ctx)
{
    (void)out_shape, (void)in, (void)n_in;
    *out_ndim = ctx ? 99 : 0; /* ctx set: a shape mxp must refuse */
    return 0;
}

static int fail_general(mxp_op_tensor *out, const mxp_op_tensor *in, int n_in, void *ctx)
{
    (void)out, (void)in, (void)n_in, (void)ctx;
    host->set_error(host, "the kernel ran out of patience");
    return 1;
}

static const mxp_op_kernel fail_kernels[] = { { "float32->float32", MXP_ISA_SCALAR, { .general = fail_general } } };
static const mxp_op_kernel top_kernels[] = { { "float32->float32", MXP_ISA_AVX512BF16, { .elementwise = copy_f32 } } };
static int bad = 1;
#endif

MXP_PLUGIN_EXPORT int mxp_plugin_register(mxp_plugin_host *h)
{
    mxp_op_def d = DEF(.name = "copy", .kind = MXP_OP_ELEMENTWISE, .n_inputs = 1, .kernels = copy_kernels,
                       .n_kernels = 1);
#if defined(BAD_ABI)
    d.abi_version = 99;
    return h->declare(h, &d);
#elif defined(BAD_DUP)
    h->declare(h, &d);
    return h->declare(h, &d);
#elif defined(BAD_CLASH)
    d.name = "gelu"; /* the example plugin's */
    return h->declare(h, &d);
#elif defined(BAD_SIG)
    static const mxp_op_kernel k[] = { { "float33->float32", MXP_ISA_SCALAR, { .elementwise = copy_f32 } } };
    d.kernels = k;
    return h->declare(h, &d);
#elif defined(BAD_NAME)
    d.name = "Copy-1";
    return h->declare(h, &d);
#elif defined(BAD_FAIL)
    (void)d;
    h->set_error(h, "this plugin needs a GPU");
    return 1;
#elif defined(BAD_NONE)
    (void)h, (void)d;
    return 0;
#elif defined(HOSTILE)
    (void)copy_f64;
    host = h;
    d.name = "hostile_copy"; /* no reference */
    h->declare(h, &d);
    mxp_op_def f = DEF(.name = "always_fails", .kind = MXP_OP_GENERAL, .n_inputs = 1, .kernels = fail_kernels,
                       .n_kernels = 1, .shape = scalar_shape);
    h->declare(h, &f);
    f.name = "bad_shape";
    f.ctx = &bad;
    h->declare(h, &f);
    mxp_op_def t = DEF(.name = "needs_avx512bf16", .kind = MXP_OP_ELEMENTWISE, .n_inputs = 1, .kernels = top_kernels,
                       .n_kernels = 1, .reference = { .elementwise = copy_f64 });
    return h->declare(h, &t);
#else
#error "one of BAD_* or HOSTILE"
#endif
}
#endif
