/* The conversion kernel table, expanded from src/kernels/cvt-list.inc.
 * Entries are listed most capable ISA first within a pair. */
#include <stdatomic.h>

#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "core/cpu-internal.h"
#include "kernels/cvt-kernels.h"
#include "kernels/x16-lut-kernels.h"
#include "kernels/u8-lut-kernels.h"

static const mxp_cvt_kernel kernels[] = {
#define MXP_CVT_KERNEL(dst, src, isa, modes, fname) { dst, src, isa, modes, fname, #fname },
#include "kernels/cvt-list.inc"
#undef MXP_CVT_KERNEL
    { MXP_DTYPE_INVALID, MXP_DTYPE_INVALID, MXP_ISA_SCALAR, 0, NULL, NULL },
};

/* Kernels a microarchitecture runs faster than the higher-level kernels
 * that give the same bits, by measurement (docs/conversions.md, "Kernels
 * chosen for the CPU").  Such a kernel wins wherever the ISA level allows
 * it and it implements the mode. */
static const struct {
    mxp_uarch uarch;
    mxp_cvt_fn fn;
} preferred[] = {
#if MXP_HAVE_X86_KERNELS
    /* Zen 4, f32 -> bf16 nearest even, L2-resident (128K elements): the
     * AVX-512F add-and-shift kernel 68 GB/s, AVX2 56, vcvtne2ps2bf16 25. */
    { MXP_UARCH_ZEN4, mxp_f32_bf16_vcvt__avx512f },
    /* Zen 5, the same pair, from the issue that reported it (64M elements,
     * one thread): vcvtne2ps2bf16 0.56x memcpy, the AVX-512F kernel 0.90x
     * (toward zero; nearest even costs one more add).  Not re-measured
     * here: no Zen 5 machine was at hand (docs/conversions.md). */
    { MXP_UARCH_ZEN5, mxp_f32_bf16_vcvt__avx512f },
#endif
    { MXP_UARCH_COUNT, NULL },
};

static int is_preferred(const mxp_cvt_kernel *k, mxp_uarch uarch)
{
    for (size_t i = 0; preferred[i].fn; i++)
        if (preferred[i].uarch == uarch && preferred[i].fn == k->fn)
            return 1;
    return 0;
}

static const mxp_cvt_kernel *scan(mxp_dtype dst, mxp_dtype src, mxp_rounding mode, mxp_isa isa, mxp_uarch uarch)
{
    const mxp_cvt_kernel *best = NULL;
    int best_pref = 0;
    for (const mxp_cvt_kernel *k = kernels; k->fn; k++) {
        if (k->dst != dst || k->src != src || k->isa > isa || !(k->modes >> mode & 1u))
            continue;
        int pref = is_preferred(k, uarch);
        if (!best || pref > best_pref || (pref == best_pref && k->isa > best->isa)) {
            best = k;
            best_pref = pref;
        }
    }
    return best;
}

const mxp_cvt_kernel *mxp_cvt_find_for(mxp_dtype dst, mxp_dtype src, mxp_rounding mode, mxp_isa isa, int uarch)
{
    if ((unsigned)uarch >= MXP_UARCH_COUNT)
        uarch = MXP_UARCH_OTHER;
    return scan(dst, src, mode, isa, (mxp_uarch)uarch);
}

int mxp_cvt_is_preferred(const mxp_cvt_kernel *k)
{
    return k && is_preferred(k, mxp_cpu_uarch_id());
}

/* Every answer, computed once, on first use: small conversions (the
 * elementwise operations' blocks) should not pay for a scan of the list,
 * and a process's first conversion should not pay for all of them (the
 * whole table, every level, dtype pair and mode, took 9-13 ms of the
 * first mxp_convert call on a Zen 4; one answer takes microseconds).  An
 * entry is NULL until computed, then the kernel or `none`; threads that
 * race compute the same answer. */
static _Atomic(const mxp_cvt_kernel *) table[MXP_ISA_COUNT][MXP_DTYPE_COUNT][MXP_DTYPE_COUNT][MXP_ROUNDING_COUNT];
static const mxp_cvt_kernel none; /* "no kernel", as an entry */

const mxp_cvt_kernel *mxp_cvt_find(mxp_dtype dst, mxp_dtype src, mxp_rounding mode, mxp_isa isa)
{
    _Atomic(const mxp_cvt_kernel *) *e = &table[isa][dst][src][mode];
    const mxp_cvt_kernel *k = atomic_load_explicit(e, memory_order_acquire);
    if (!k) {
        k = dst > 0 && src > 0 ? scan(dst, src, mode, isa, mxp_cpu_uarch_id()) : NULL;
        k = k ? k : &none;
        atomic_store_explicit(e, k, memory_order_release);
    }
    return k == &none ? NULL : k;
}

/* Pairs in which no value rounds, so that every mode gives the same bits:
 * integer or bool into integer (saturation is the overflow policy's, not
 * the mode's), anything into bool (only "nonzero" is kept), bool into
 * every float (1 is exact in each; 0 too, but in float8_e8m0fnu, which has
 * no zero: NaN in every mode).  Their stochastic rounding runs nearest
 * even's kernels, tables and loops: the reference converter's bits, which
 * draw nothing for them (test_convert_pairs compares every such pair). */
mxp_rounding mxp_cvt_effective_mode(mxp_dtype dst, mxp_dtype src, mxp_rounding mode)
{
    const mxp_dtype_traits *td = mxp_dtype_get_traits(dst), *ts = mxp_dtype_get_traits(src);
    if (mode != MXP_ROUND_STOCHASTIC || !td || !ts)
        return mode;
    const bool int_src = ts->kind != MXP_KIND_FLOAT, int_dst = td->kind != MXP_KIND_FLOAT;
    const bool free = dst == MXP_BOOL || (int_src && int_dst) || src == MXP_BOOL;
    return free ? MXP_ROUND_NEAREST_EVEN : mode;
}

const mxp_cvt_kernel *mxp_cvt_kernels(size_t *count)
{
    *count = sizeof kernels / sizeof kernels[0] - 1;
    return kernels;
}

/* The table-lookup kernels (src/kernels/u8-lut-list.inc), tagged with
 * their results' width: the first row of the highest level the CPU runs
 * (AVX512_VBMI, a feature beyond the levels, from the avx512 level on). */
static const mxp_kernel luts[] = {
#define MXP_U8_LUT(isa, features, width, fn, twin) MXP_KERNEL_ROW(isa, features, width, width, fn, twin),
#include "kernels/u8-lut-list.inc"
#undef MXP_U8_LUT
    { NULL, NULL, NULL, NULL, MXP_ISA_COUNT, 0, 0, 0 }, /* none in some builds: C has no empty arrays */
};

const mxp_kernel *mxp_cvt_lut_kernels(size_t *count)
{
    *count = sizeof luts / sizeof luts[0] - 1;
    return luts;
}

static mxp_kernel_any find_lut(mxp_isa isa, uint32_t width, const char **name)
{
    const size_t n = sizeof luts / sizeof luts[0] - 1;
    const mxp_kernel *k = mxp_kernel_pick(luts, n, isa, width);
    if (name)
        *name = k ? k->name : NULL;
    return k ? k->fn : NULL;
}

mxp_cvt_lut8_fn mxp_cvt_find_lut8(mxp_isa isa, const char **name)
{
    return (mxp_cvt_lut8_fn)find_lut(isa, 8, name);
}

mxp_cvt_lut16_fn mxp_cvt_find_lut16(mxp_isa isa, const char **name)
{
    return (mxp_cvt_lut16_fn)find_lut(isa, 16, name);
}

mxp_cvt_lut32_fn mxp_cvt_find_lut32(mxp_isa isa, const char **name)
{
    return (mxp_cvt_lut32_fn)find_lut(isa, 32, name);
}

mxp_cvt_lut64_fn mxp_cvt_find_lut64(mxp_isa isa, const char **name)
{
    return (mxp_cvt_lut64_fn)find_lut(isa, 64, name);
}

/* The byte-lane table kernels for bfloat16/float16 -> the 8-bit float
 * formats (src/kernels/x16-lut-list.inc). */
static const mxp_kernel x16_lut[] = {
#define MXP_X16_LUT(isa, features, bits, fn, twin) MXP_KERNEL_ROW(isa, features, bits, bits, fn, twin),
#include "kernels/x16-lut-list.inc"
#undef MXP_X16_LUT
    { NULL, NULL, NULL, NULL, MXP_ISA_COUNT, 0, 0, 0 },
};

const mxp_kernel *mxp_cvt_x16_lut_kernels(size_t *count)
{
    *count = sizeof x16_lut / sizeof x16_lut[0] - 1;
    return x16_lut;
}

mxp_cvt_x16_lut_fn mxp_cvt_find_x16_lut(mxp_isa isa, int bits, const char **name)
{
    const mxp_kernel *k = mxp_kernel_pick(x16_lut, sizeof x16_lut / sizeof x16_lut[0] - 1, isa, (uint32_t)bits);
    if (name)
        *name = k ? k->name : NULL;
    return k ? (mxp_cvt_x16_lut_fn)k->fn : NULL;
}
