/* The GEMM configurations, one table for every tier and dtype, expanded
 * from the kernel lists (src/kernels/gemm-list.inc, u8s8-gemm-list.inc:
 * the blocks and why are there), and the choice of one for an ISA level:
 * the first at or below it, the lists being most capable first. */
#include "gemm/gemm-internal.h"

/* Each micro-kernel's index in the table. */
enum {
#define MXP_GEMM_UKERNEL(fn, ...) CFG_##fn,
#define MXP_GEMM_UKERNEL_A(...)
#define MXP_GEMM_DIRECT(...)
#define MXP_U8S8_GEMM_UKERNEL(fn, ...) CFG_##fn,
#define MXP_U8S8_GEMM_UKERNEL_A(...)
#define MXP_U8S8_GEMM_UKERNEL_U7(fn, ...) CFG_##fn,
#include "kernels/gemm-list.inc"
#include "kernels/u8s8-gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_DIRECT
#undef MXP_U8S8_GEMM_UKERNEL
#undef MXP_U8S8_GEMM_UKERNEL_A
#undef MXP_U8S8_GEMM_UKERNEL_U7
    CFG_COUNT
};

static const mxp_gemm_config configs[CFG_COUNT] = {
#define MXP_GEMM_UKERNEL(fn, acc, packed, kpack, isa, mr, nr, mc, kc, nc, twin) \
    [CFG_##fn] = { #fn, acc, packed, kpack, isa, mr, nr, mc, kc, nc, 0, fn, NULL },
#define MXP_GEMM_UKERNEL_A(...)
#define MXP_GEMM_DIRECT(...)
#define MXP_U8S8_GEMM_UKERNEL(fn, packed, kpack, isa, mr, nr, mc, kc, nc, deep_m, twin) \
    [CFG_##fn] = { #fn, MXP_S32, packed, kpack, isa, mr, nr, mc, kc, nc, deep_m, NULL, fn, false },
#define MXP_U8S8_GEMM_UKERNEL_A(...)
#define MXP_U8S8_GEMM_UKERNEL_U7(fn, packed, kpack, isa, mr, nr, mc, kc, nc, deep_m, twin) \
    [CFG_##fn] = { #fn, MXP_S32, packed, kpack, isa, mr, nr, mc, kc, nc, deep_m, NULL, fn, true },
#include "kernels/gemm-list.inc"
#include "kernels/u8s8-gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_DIRECT
#undef MXP_U8S8_GEMM_UKERNEL
#undef MXP_U8S8_GEMM_UKERNEL_A
#undef MXP_U8S8_GEMM_UKERNEL_U7
};

/* The A-in-place variants, by the index of the kernel they vary (NULL:
 * none; the entry past the end keeps the initializer from being empty). */
static const mxp_gemm_ukernel_a_fn ukernel_a[CFG_COUNT + 1] = {
    [CFG_COUNT] = NULL,
#define MXP_GEMM_UKERNEL(...)
#define MXP_GEMM_UKERNEL_A(fn, of, max_n, twin) [CFG_##of] = fn,
#define MXP_GEMM_DIRECT(...)
#include "kernels/gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_DIRECT
};

/* ... and the most columns for which each reads A in place. */
static const size_t ukernel_a_max_n[CFG_COUNT + 1] = {
    [CFG_COUNT] = 0,
#define MXP_GEMM_UKERNEL(...)
#define MXP_GEMM_UKERNEL_A(fn, of, max_n, twin) [CFG_##of] = max_n,
#define MXP_GEMM_DIRECT(...)
#include "kernels/gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_DIRECT
};

/* ... and the variants reading A's rows through pointers (convolution taps). */
static const mxp_gemm_ukernel_taps_fn ukernel_taps[CFG_COUNT + 1] = {
    [CFG_COUNT] = NULL,
#define MXP_GEMM_UKERNEL(...)
#define MXP_GEMM_UKERNEL_A(...)
#define MXP_GEMM_UKERNEL_TAPS(fn, of, twin) [CFG_##of] = fn,
#define MXP_GEMM_DIRECT(...)
#include "kernels/gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_UKERNEL_TAPS
#undef MXP_GEMM_DIRECT
};

/* ... and the release of the state some keep between calls (NULL: none). */
static void (*const ukernel_release[CFG_COUNT + 1])(void) = {
    [CFG_COUNT] = NULL,
#define MXP_GEMM_UKERNEL(...)
#define MXP_GEMM_UKERNEL_A(...)
#define MXP_GEMM_UKERNEL_RELEASE(of, release) [CFG_##of] = release,
#define MXP_GEMM_DIRECT(...)
#define MXP_U8S8_GEMM_UKERNEL(...)
#define MXP_U8S8_GEMM_UKERNEL_A(...)
#include "kernels/gemm-list.inc"
#include "kernels/u8s8-gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_UKERNEL_RELEASE
#undef MXP_GEMM_DIRECT
#undef MXP_U8S8_GEMM_UKERNEL
#undef MXP_U8S8_GEMM_UKERNEL_A
};

static const mxp_u8s8_gemm_ukernel_a_fn ukernel_a_s32[CFG_COUNT + 1] = {
    [CFG_COUNT] = NULL,
#define MXP_U8S8_GEMM_UKERNEL(...)
#define MXP_U8S8_GEMM_UKERNEL_A(fn, of, twin) [CFG_##of] = fn,
#include "kernels/u8s8-gemm-list.inc"
#undef MXP_U8S8_GEMM_UKERNEL
#undef MXP_U8S8_GEMM_UKERNEL_A
};

/* Does a float dtype multiply exactly in bfloat16 panels with no value the
 * bfloat16 kernels flush: at most 8 significant bits, nonzero values >=
 * 2^-63 (products never below float32's normal range)?  The float8, float6
 * and float4 types; not e8m0 (2^-127), float16 or bfloat16 itself (whose
 * tiny values are scanned for instead: gemm.c). */
bool mxp_gemm_fits_bf16(mxp_dtype t)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    return tr && tr->kind == MXP_KIND_FLOAT && tr->mant_bits <= 7 && tr->min_subnormal >= 0x1p-63 &&
           tr->max < 0x1p127;
}

/* Does this configuration's packed dtype serve inputs of type t?  The
 * accumulator's own type holds every input exactly; integer panels take
 * the integer inputs.  bfloat16 panels take bfloat16 inputs and the
 * float8/6/4 types, widened while packing, at the AMX kernel (kpack 32)
 * and at the vdpbf16ps one (kpack 2): float8_e4m3fn 1024^3 on a Zen 4, one
 * thread, 105 GFLOPS on the float32 kernel against 196-208 there (once A
 * and B were widened by the SIMD kernel, not element by element: 145-153
 * before). */
static bool packs(const mxp_gemm_config *c, mxp_dtype t)
{
    return c->packed == c->acc || c->acc == MXP_S32 ||
           (c->packed == MXP_BF16 && (t == MXP_BF16 || (c->kpack != 1 && mxp_gemm_fits_bf16(t))));
}

const mxp_gemm_config *mxp_gemm_config_for(mxp_dtype acc, mxp_dtype a_type, mxp_dtype b_type, mxp_isa isa)
{
    for (size_t i = 0; i < CFG_COUNT; i++) {
        const mxp_gemm_config *c = &configs[i];
        if (c->acc == acc && c->isa <= isa && !c->a7 && packs(c, a_type) && packs(c, b_type))
            return c;
    }
    return NULL;
}

const mxp_gemm_config *mxp_gemm_config_a7_for(mxp_isa isa)
{
    for (size_t i = 0; i < CFG_COUNT; i++)
        if (configs[i].a7 && configs[i].isa <= isa)
            return &configs[i];
    return NULL;
}

mxp_gemm_ukernel_a_fn mxp_gemm_config_ukernel_a(const mxp_gemm_config *cfg)
{
    return ukernel_a[cfg - configs];
}

mxp_gemm_ukernel_taps_fn mxp_gemm_config_ukernel_taps(const mxp_gemm_config *cfg)
{
    return ukernel_taps[cfg - configs];
}

size_t mxp_gemm_config_ukernel_a_max_n(const mxp_gemm_config *cfg)
{
    return ukernel_a_max_n[cfg - configs];
}

void (*mxp_gemm_config_release(const mxp_gemm_config *cfg))(void)
{
    return ukernel_release[cfg - configs];
}

mxp_u8s8_gemm_ukernel_a_fn mxp_gemm_config_ukernel_a_s32(const mxp_gemm_config *cfg)
{
    return ukernel_a_s32[cfg - configs];
}

static const mxp_gemm_direct_config direct_configs[] = {
#define MXP_GEMM_UKERNEL(...)
#define MXP_GEMM_UKERNEL_A(...)
#define MXP_GEMM_DIRECT(fn, acc, packed, kpack, isa, mr, nr, kc, step, step_multi, max_m, twin) \
    { #fn, acc, packed, kpack, isa, mr, nr, kc, step, step_multi, max_m, fn },
#include "kernels/gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_DIRECT
    { NULL, 0, 0, 1, MXP_ISA_SCALAR, 0, 0, 0, 1, 1, 0, NULL },
};

/* The direct kernels' variants with A in place too (MXP_GEMM_DIRECT_A), by
 * the kernel they vary. */
static const struct {
    mxp_gemm_direct_fn of;
    mxp_gemm_direct_a_fn fn;
} direct_a[] = {
#define MXP_GEMM_UKERNEL(...)
#define MXP_GEMM_UKERNEL_A(...)
#define MXP_GEMM_DIRECT(...)
#define MXP_GEMM_DIRECT_A(fn, of, twin) { of, fn },
#include "kernels/gemm-list.inc"
#undef MXP_GEMM_UKERNEL
#undef MXP_GEMM_UKERNEL_A
#undef MXP_GEMM_DIRECT
#undef MXP_GEMM_DIRECT_A
    { NULL, NULL },
};

mxp_gemm_direct_a_fn mxp_gemm_direct_a_for(const mxp_gemm_direct_config *d)
{
    for (size_t i = 0; d && direct_a[i].of; i++)
        if (direct_a[i].of == d->ukernel)
            return direct_a[i].fn;
    return NULL;
}

const mxp_gemm_direct_config *mxp_gemm_direct_config_for(mxp_dtype acc, mxp_dtype b_type, mxp_isa isa)
{
    for (size_t i = 0; direct_configs[i].name; i++) {
        const mxp_gemm_direct_config *d = &direct_configs[i];
        if (d->acc == acc && d->packed == b_type && d->isa <= isa)
            return d;
    }
    return NULL;
}
