/* mxp_convert: argument checks, dispatch to the best kernel for the pair,
 * mode and ISA level, and the strided variant. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "convert/convert-config.h"
#include "convert/convert-ref.h"
#include "convert/convert-route.h"
#include "core/abi.h"
#include "core/cpu-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "core/threads-internal.h"
#include "kernels/x16-lut-kernels.h"
#include "mxp/cpu.h"
#include "mxp/threads.h"

static const char *const rounding_names[MXP_ROUNDING_COUNT] = {
    "nearest_even", "nearest_away", "toward_zero", "up", "down", "stochastic",
};
static const char *const overflow_names[MXP_OVERFLOW_COUNT] = { "inf", "saturate" };

const char *mxp_rounding_name(mxp_rounding r)
{
    return (unsigned)r < MXP_ROUNDING_COUNT ? rounding_names[r] : "invalid";
}

mxp_rounding mxp_rounding_from_name(const char *name)
{
    static const struct { const char *name; mxp_rounding r; } aliases[] = {
        { "rne", MXP_ROUND_NEAREST_EVEN }, { "nearest", MXP_ROUND_NEAREST_EVEN },
        { "rna", MXP_ROUND_NEAREST_AWAY }, { "rtz", MXP_ROUND_TOWARD_ZERO },
        { "zero", MXP_ROUND_TOWARD_ZERO }, { "truncate", MXP_ROUND_TOWARD_ZERO },
        { "ru", MXP_ROUND_UP }, { "ceil", MXP_ROUND_UP }, { "rd", MXP_ROUND_DOWN },
        { "floor", MXP_ROUND_DOWN }, { "sr", MXP_ROUND_STOCHASTIC },
    };
    if (!name)
        return MXP_ROUNDING_COUNT;
    for (int i = 0; i < MXP_ROUNDING_COUNT; i++) {
        if (!strcasecmp(name, rounding_names[i]))
            return (mxp_rounding)i;
    }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        if (!strcasecmp(name, aliases[i].name))
            return aliases[i].r;
    }
    return MXP_ROUNDING_COUNT;
}

const char *mxp_overflow_name(mxp_overflow o)
{
    return (unsigned)o < MXP_OVERFLOW_COUNT ? overflow_names[o] : "invalid";
}

mxp_overflow mxp_overflow_from_name(const char *name)
{
    if (!name)
        return MXP_OVERFLOW_COUNT;
    for (int i = 0; i < MXP_OVERFLOW_COUNT; i++) {
        if (!strcasecmp(name, overflow_names[i]))
            return (mxp_overflow)i;
    }
    if (!strcasecmp(name, "ieee"))
        return MXP_OVERFLOW_INF;
    if (!strcasecmp(name, "sat") || !strcasecmp(name, "satfinite"))
        return MXP_OVERFLOW_SATURATE;
    return MXP_OVERFLOW_COUNT;
}

static mxp_status check_opts(const mxp_convert_opts *opts)
{
    if (!opts)
        return MXP_OK;
    if ((unsigned)opts->rounding >= MXP_ROUNDING_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                         "rounding mode %d is not one of mxp_rounding's (0..%d)",
                         (int)opts->rounding, MXP_ROUNDING_COUNT - 1);
    if ((unsigned)opts->overflow >= MXP_OVERFLOW_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                         "overflow mode %d is not one of mxp_overflow's (0..%d)",
                         (int)opts->overflow, MXP_OVERFLOW_COUNT - 1);
    return MXP_OK;
}

static mxp_status check_types(mxp_dtype dst_type, mxp_dtype src_type)
{
    if (!mxp_dtype_is_valid(src_type))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "source dtype %d is not a valid mxp_dtype", (int)src_type);
    if (!mxp_dtype_is_valid(dst_type))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "destination dtype %d is not a valid mxp_dtype", (int)dst_type);
    return MXP_OK;
}

/* [lo, hi) byte span of n elements of size `size` at p with byte stride s. */
static void span(const void *p, ptrdiff_t s, size_t n, size_t size, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t a = (uintptr_t)p, last = a + (uintptr_t)((ptrdiff_t)(n - 1) * s);
    *lo = s < 0 ? last : a;
    *hi = (s < 0 ? a : last) + size;
}

static mxp_status check_common(void *dst, mxp_dtype dst_type, ptrdiff_t dst_stride, const void *src,
                               mxp_dtype src_type, ptrdiff_t src_stride, size_t n,
                               const mxp_convert_opts *opts)
{
    mxp_status st = check_types(dst_type, src_type);
    if (st == MXP_OK)
        st = check_opts(opts);
    if (st != MXP_OK || n == 0)
        return st;
    if (!src || !dst)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_convert: %s is NULL but n = %zu",
                         !src ? "src" : "dst", n);
    const size_t ss = mxp_dtype_itemsize(src_type), ds = mxp_dtype_itemsize(dst_type);
    /* Every byte offset (n-1)*|stride| + itemsize must fit in ptrdiff_t. */
    const size_t max_off = (size_t)PTRDIFF_MAX - 8;
    /* |stride| without negating PTRDIFF_MIN (undefined behaviour) */
    size_t as = src_stride < 0 ? (size_t)0 - (size_t)src_stride : (size_t)src_stride;
    size_t ad = dst_stride < 0 ? (size_t)0 - (size_t)dst_stride : (size_t)dst_stride;
    if (n > max_off / (ss > ds ? ss : ds) || (as && n - 1 > max_off / as) || (ad && n - 1 > max_off / ad))
        return mxp_error(MXP_ERR_SIZE_OVERFLOW,
                         "mxp_convert: n = %zu elements with strides %td/%td bytes overflow the address space",
                         n, dst_stride, src_stride);
    if (n > 1 && dst_stride == 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_convert_strided: dst_stride is 0 with n = %zu", n);
    uintptr_t slo, shi, dlo, dhi;
    span(src, src_stride, n, ss, &slo, &shi);
    span(dst, dst_stride, n, ds, &dlo, &dhi);
    if (slo < dhi && dlo < shi) {
        /* In place: each output element lies within its own input element
         * or within input elements already read. */
        int in_place = (const void *)dst == src && ds <= ss &&
                       ((dst_stride == src_stride && as >= ss) ||
                        (dst_stride == (ptrdiff_t)ds && src_stride == (ptrdiff_t)ss));
        if (!in_place)
            return mxp_error(MXP_ERR_OVERLAP,
                             "mxp_convert: source and destination overlap; only dst == src with "
                             "equal strides and itemsize(%s) <= itemsize(%s) is allowed",
                             mxp_dtype_name(dst_type), mxp_dtype_name(src_type));
    }
    return MXP_OK;
}

static mxp_cvt_params make_params(const mxp_convert_opts *opts)
{
    mxp_cvt_params p = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL };
    if (opts) {
        p.rounding = opts->rounding;
        p.overflow = opts->overflow;
        p.seed = opts->seed;
        p.flags = opts->flags;
        p.index0 = opts->index_offset;
    }
    return p;
}

/* ---- 8-bit sources to 8-bit, 16-bit and float64 results: a table -------- */

/* An 8-bit source has 256 patterns: in a deterministic mode the reference
 * converter fills a 256-entry table once per call and a lookup kernel
 * applies it, for arrays long enough to pay for the table: the table costs
 * ~2 us (256 reference conversions), so from LUT_MIN elements where two
 * kernels (a chain) would do the work, from LUT_MIN_ALONE where the
 * reference converter would (~10 ns an element: the 0.2 float8/6/4 formats
 * into float32 at AVX2 ran 0.45 GB/s on 16K elements, 50x the table). */
enum { LUT_MIN = 32768, LUT_MIN_ALONE = 256 };

typedef struct cvt_lut {
    mxp_cvt_lut8_fn to8;   /* 8-bit results */
    mxp_cvt_lut16_fn to16; /* 16-bit results */
    mxp_cvt_lut32_fn to32; /* 32-bit results */
    mxp_cvt_lut64_fn to64; /* float64: at most 12 significand bits, the low 40 bits 0 */
    const mxp_cvt_kernel *widen; /* float32 results: to16 into bfloat16 (which holds every
                                    8-bit type's values), then this kernel bfloat16 -> float32 */
} cvt_lut;

/* The 32-bit table's gathers (mxp_u8_lut_x32__avx2) against the 16-bit
 * table's vpermi2b (AVX512_VBMI) into bfloat16 plus the bfloat16 -> float32
 * kernel, a block at a time.  The gathers win on Intel (Xeon 6/0xa7:
 * 1.33-1.36x memcpy against 0.61-0.75x); AMD's gathers are slow: on a Zen 4
 * (avx512bf16 level, 64K elements in cache) float8_e4m3fnuz -> float32 took
 * 20 ns per 32 elements by gathers against 2.4 + 1.9 by the two kernels. */
static bool gathers_lose(mxp_isa isa)
{
    return mxp_cpu_uarch_id() != MXP_UARCH_INTEL && isa >= MXP_ISA_AVX512 &&
           (mxp_cpu_features() & MXP_CPU_AVX512VBMI);
}

static cvt_lut lut_find(mxp_dtype dst_type, mxp_dtype src_type, const mxp_cvt_params *p, mxp_isa isa,
                        const char **name)
{
    cvt_lut l = { NULL, NULL, NULL, NULL, NULL };
    if (mxp_dtype_itemsize(src_type) != 1 || p->rounding == MXP_ROUND_STOCHASTIC)
        return l;
    /* float32 through bfloat16: saturation would turn the source's infinities into max */
    const bool via_bf16 = dst_type == MXP_F32 &&
                          !(p->overflow == MXP_OVERFLOW_SATURATE && mxp_dtype_get_traits(src_type)->has_inf);
    if (mxp_dtype_itemsize(dst_type) == 1)
        l.to8 = mxp_cvt_find_lut8(isa, name);
    else if (mxp_dtype_itemsize(dst_type) == 2)
        l.to16 = mxp_cvt_find_lut16(isa, name);
    else if (mxp_dtype_itemsize(dst_type) == 4 && !(via_bf16 && gathers_lose(isa)) &&
             (l.to32 = mxp_cvt_find_lut32(isa, name)))
        return l;
    else if (via_bf16 && (l.widen = mxp_cvt_find(MXP_F32, MXP_BF16, MXP_ROUND_NEAREST_EVEN, isa)) &&
             !(l.to16 = mxp_cvt_find_lut16(isa, name)))
        l.widen = NULL;
    else if (dst_type == MXP_F64 && /* 8-bit values have at most 8 significand bits; */
             !(p->overflow == MXP_OVERFLOW_SATURATE && mxp_dtype_get_traits(src_type)->has_inf)) /* not max */
        l.to64 = mxp_cvt_find_lut64(isa, name);
    return l;
}

/* Where a table beats the kernel found for an 8-bit source (deterministic
 * modes, from LUT_MIN elements):
 * - float8_e4m3fn into float32 below the avx512 level on Intel: the
 *   table's gathers (mxp_u8_lut_x32__avx2) beat the arithmetic kernel
 *   there (Intel Xeon 6/0xa7 at MXP_ISA=avx2, 16M elements: 0.81-0.98x ->
 *   1.35x memcpy).  AMD's gathers are slow: on a Zen 4 at MXP_ISA=avx2 the
 *   table ran 12.8 ns per 32 elements in cache against the kernel's 4.4
 *   (4M elements: 0.55x memcpy), so AMD and the others keep the kernel.
 *   The other 8-bit sources' kernels into float32 (e5m2, int8, uint8) ran
 *   4-9% ahead of the table on the Xeon and keep it;
 * - the byte formats' AVX2 kernels into 16- and 32-bit results
 *   (cvt-byte-widen-avx2.h): written for the CPUs with slow gathers, they
 *   leave Intel its gathers (as above, not measured pair by pair), and
 *   every CPU with AVX512_VBMI its vpermi2b tables at the avx512 levels
 *   (Zen 4: int4 -> float32 on 1M elements 0.118 ms by the table and the
 *   bfloat16 widening, 0.152 by the AVX2 kernel). */
static bool byte_widen(const mxp_cvt_kernel *k, mxp_dtype dst_type, mxp_dtype src_type)
{
    const bool widen2 = dst_type == MXP_F32 &&
                        (src_type == MXP_E4M3 || src_type == MXP_E5M2 || src_type == MXP_S8 || src_type == MXP_U8);
    return k->isa == MXP_ISA_AVX2 && mxp_dtype_itemsize(src_type) == 1 && mxp_dtype_itemsize(dst_type) >= 2 &&
           !widen2;
}

static bool table_beats(const mxp_cvt_kernel *k, mxp_dtype dst_type, mxp_dtype src_type, const mxp_cvt_params *p)
{
    if (!k || k->isa >= MXP_ISA_AVX512 || p->flags || p->rounding == MXP_ROUND_STOCHASTIC)
        return false;
    const bool intel = mxp_cpu_uarch_id() == MXP_UARCH_INTEL;
    if (src_type == MXP_E4M3 && dst_type == MXP_F32)
        return intel;
    return byte_widen(k, dst_type, src_type) &&
           (intel || (mxp_get_isa() >= MXP_ISA_AVX512 && (mxp_cpu_features() & MXP_CPU_AVX512VBMI)));
}

static void lut_run(const cvt_lut *l, void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type,
                    size_t n, const mxp_cvt_params *p)
{
    uint8_t all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    mxp_cvt_params q = *p;
    q.flags = NULL;
    if (l->to8) {
        uint8_t table[256];
        mxp_convert_ref(table, dst_type, all, src_type, 256, &q);
        l->to8(dst, src, n, table);
    } else if (l->to16 && l->widen) { /* float32: exact through bfloat16, a block at a time in L1 */
        uint16_t table[256];
        const mxp_cvt_params w = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL };
        mxp_convert_ref(table, MXP_BF16, all, src_type, 256, &w);
        _Alignas(64) uint16_t buf[CHAIN_BLOCK];
        for (size_t done = 0; done < n; done += CHAIN_BLOCK) {
            size_t m = n - done < CHAIN_BLOCK ? n - done : CHAIN_BLOCK;
            l->to16(buf, (const uint8_t *)src + done, m, table);
            l->widen->fn((float *)dst + done, buf, m, &w);
        }
    } else if (l->to32) {
        uint32_t table[256];
        mxp_convert_ref(table, dst_type, all, src_type, 256, &q);
        l->to32(dst, src, n, table);
    } else if (l->to16) {
        uint16_t table[256];
        mxp_convert_ref(table, dst_type, all, src_type, 256, &q);
        l->to16(dst, src, n, table);
    } else {
        uint64_t table[256], low = 0;
        mxp_convert_ref(table, dst_type, all, src_type, 256, &q);
        for (int i = 0; i < 256; i++)
            low |= table[i] & ((1ull << 40) - 1);
        if (low) /* not expected (lut_find): the right bits all the same */
            mxp_convert_ref(dst, dst_type, src, src_type, n, p);
        else
            l->to64(dst, src, n, table);
    }
}

/* Contiguous conversion of n elements starting at logical index p->index0. */
static void convert_run(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n,
                        const mxp_cvt_params *p)
{
    mxp_cvt_params q0;
    if (p->rounding != mxp_cvt_effective_mode(dst_type, src_type, p->rounding)) { /* no value rounds */
        q0 = *p;
        q0.rounding = MXP_ROUND_NEAREST_EVEN;
        p = &q0;
    }
    /* The same dtype is a copy, bits kept (signalling NaNs too), unless
     * bytes need normalizing (bool) or infinities saturating. */
    if (dst_type == src_type && dst_type != MXP_BOOL &&
        (p->overflow == MXP_OVERFLOW_INF || !mxp_dtype_get_traits(dst_type)->has_inf)) {
        if (dst != src)
            memmove(dst, src, n * mxp_dtype_itemsize(src_type));
        return;
    }
    const mxp_cvt_kernel *k = p->flags ? NULL : mxp_cvt_find(dst_type, src_type, p->rounding, mxp_get_isa());
    if (n >= LUT_MIN && table_beats(k, dst_type, src_type, p)) {
        const cvt_lut lut = lut_find(dst_type, src_type, p, mxp_get_isa(), NULL);
        if (lut.to16 || lut.to32) {
            lut_run(&lut, dst, dst_type, src, src_type, n, p);
            return;
        }
    }
    if (!k) {
        const bool chain = !p->flags && mxp_cvt_chain_exists(dst_type, src_type, p->rounding, mxp_get_isa());
        const cvt_lut lut = p->flags || n < (chain ? LUT_MIN : LUT_MIN_ALONE)
                                ? (cvt_lut){ NULL, NULL, NULL, NULL, NULL }
                                : lut_find(dst_type, src_type, p, mxp_get_isa(), NULL);
        if (lut.to8 || lut.to16 || lut.to32 || lut.to64) {
            lut_run(&lut, dst, dst_type, src, src_type, n, p);
            return;
        }
        if (p->flags || !mxp_cvt_route_run(dst, dst_type, src, src_type, n, p)) /* convert-route.c */
            mxp_convert_ref(dst, dst_type, src, src_type, n, p);
        return;
    }
    if (p->rounding != MXP_ROUND_STOCHASTIC) {
        mxp_dtype ts = src_type;
        mxp_cvt_x16_lut_fn lut = mxp_cvt_x16_lut_kernel(dst_type, src_type, &ts, NULL);
        mxp_x16_lut_tables t;
        if (lut && mxp_cvt_x16_lut_get(&t, dst_type, ts, p, k->fn, n)) /* convert-x16-lut.c */
            lut(dst, src, n, &t);
        else
            k->fn(dst, src, n, p);
        return;
    }
    /* Kernels draw the random stream for one 2^32-index block per call. */
    const size_t ss = mxp_dtype_itemsize(src_type), ds = mxp_dtype_itemsize(dst_type);
    mxp_cvt_params q = *p;
    for (size_t done = 0; done < n;) {
        uint64_t room = (1ull << 32) - (uint32_t)q.index0;
        size_t m = (uint64_t)(n - done) < room ? n - done : (size_t)room;
        k->fn((unsigned char *)dst + done * ds, (const unsigned char *)src + done * ss, m, &q);
        done += m;
        q.index0 += m;
    }
}

/* ---- large arrays over the thread pool ---------------------------------- */

/* Each thread gets at least this many bytes (read + written) of a
 * conversion of 4 MiB moved or more (the least streaming-store threshold,
 * mxp_stream_threshold in mxp/alloc.h: each share streams or not by its
 * own size); a smaller conversion (in the caches, stored plainly) is split
 * from MXP_CVT_SMALL_SHARE_BYTES a thread: a model's activations, 1056 x
 * 384 bfloat16 widened to float32 (2.4 MB moved), took 0.14 ms on one
 * thread on the Intel Xeon. */
#define MXP_CVT_SHARE_BYTES ((size_t)4 << 20)
#define MXP_CVT_SMALL_SHARE_BYTES ((size_t)512 << 10)

typedef struct cvt_job {
    unsigned char *dst;
    const unsigned char *src;
    mxp_dtype dst_type, src_type;
    const mxp_cvt_params *p;
} cvt_job;

/* Elements [lo, hi) of a share (mxp_parallel_shares), each with its own
 * index in the stochastic stream, so bits do not depend on the threads. */
static void cvt_share(const void *ctx, size_t lo, size_t hi, mxp_convert_flags *counts)
{
    const cvt_job *j = ctx;
    mxp_cvt_params q = *j->p;
    q.index0 += lo;
    q.flags = counts;
    convert_run(j->dst + lo * mxp_dtype_itemsize(j->dst_type), j->dst_type,
                j->src + lo * mxp_dtype_itemsize(j->src_type), j->src_type, hi - lo, &q);
}

/* Threads for a contiguous conversion: one per MXP_CVT_SHARE_BYTES, at
 * most mxp_get_num_threads().  In-place narrowing stays on one thread (a
 * later share would overwrite input an earlier one has not read yet). */
int mxp_cvt_threads(const void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n)
{
    const size_t ss = mxp_dtype_itemsize(src_type), ds = mxp_dtype_itemsize(dst_type);
    if (dst == src && ds != ss)
        return 1;
    const bool streams = n * (ss + ds) >= MXP_CVT_SHARE_BYTES;
    return mxp_share_threads(n, (streams ? MXP_CVT_SHARE_BYTES : MXP_CVT_SMALL_SHARE_BYTES) / (ss + ds));
}

static void convert_contiguous(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n,
                               const mxp_cvt_params *p)
{
    const cvt_job job = { dst, src, dst_type, src_type, p };
    mxp_parallel_shares(mxp_cvt_threads(dst, dst_type, src, src_type, n), n, p->flags, cvt_share, &job);
}

static mxp_status convert_entry(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n,
                                const mxp_convert_opts *opts)
{
    MXP_ABI_IN(opts, convert_opts, "mxp_convert");
    ptrdiff_t ss = (ptrdiff_t)mxp_dtype_itemsize(src_type), ds = (ptrdiff_t)mxp_dtype_itemsize(dst_type);
    mxp_status st = check_common(dst, dst_type, ds, src, src_type, ss, n, opts);
    if (st != MXP_OK || n == 0)
        return st;
    mxp_cvt_params p = make_params(opts);
    const mxp_fpenv env = mxp_fpenv_enter(); /* the SIMD kernels compute in floating point */
    convert_contiguous(dst, dst_type, src, src_type, n, &p);
    mxp_fpenv_leave(env);
    return MXP_OK;
}

enum { STRIDED_BLOCK = 512 };

/* Strided element copies with the size known to the compiler (a memcpy
 * call per element would cost more than the conversion). */
static void copy_strided(unsigned char *dst, ptrdiff_t dst_stride, const unsigned char *src, ptrdiff_t src_stride,
                         size_t size, size_t m)
{
    switch (size) {
    case 1:
        for (size_t i = 0; i < m; i++)
            dst[(ptrdiff_t)i * dst_stride] = src[(ptrdiff_t)i * src_stride];
        break;
    case 2:
        for (size_t i = 0; i < m; i++)
            memcpy(dst + (ptrdiff_t)i * dst_stride, src + (ptrdiff_t)i * src_stride, 2);
        break;
    case 4:
        for (size_t i = 0; i < m; i++)
            memcpy(dst + (ptrdiff_t)i * dst_stride, src + (ptrdiff_t)i * src_stride, 4);
        break;
    default:
        for (size_t i = 0; i < m; i++)
            memcpy(dst + (ptrdiff_t)i * dst_stride, src + (ptrdiff_t)i * src_stride, 8);
        break;
    }
}

/* Gathers blocks, converts each contiguously, scatters it. */
static void convert_blocks(unsigned char *dst, mxp_dtype dst_type, ptrdiff_t dst_stride, const unsigned char *src,
                           mxp_dtype src_type, ptrdiff_t src_stride, size_t n, mxp_cvt_params *p)
{
    const size_t ss = mxp_dtype_itemsize(src_type), ds = mxp_dtype_itemsize(dst_type);
    const uint64_t index0 = p->index0;
    _Alignas(64) unsigned char in[STRIDED_BLOCK * 8], out[STRIDED_BLOCK * 8];
    for (size_t i0 = 0; i0 < n; i0 += STRIDED_BLOCK) {
        size_t m = n - i0 < STRIDED_BLOCK ? n - i0 : STRIDED_BLOCK;
        copy_strided(in, (ptrdiff_t)ss, src + (ptrdiff_t)i0 * src_stride, src_stride, ss, m);
        p->index0 = index0 + i0;
        convert_run(out, dst_type, in, src_type, m, p);
        copy_strided(dst + (ptrdiff_t)i0 * dst_stride, dst_stride, out, (ptrdiff_t)ds, ds, m);
    }
}

static mxp_status convert_strided_entry(void *dst, mxp_dtype dst_type, ptrdiff_t dst_stride, const void *src,
                                        mxp_dtype src_type, ptrdiff_t src_stride, size_t n,
                                        const mxp_convert_opts *opts)
{
    MXP_ABI_IN(opts, convert_opts, "mxp_convert_strided");
    mxp_status st = check_common(dst, dst_type, dst_stride, src, src_type, src_stride, n, opts);
    if (st != MXP_OK || n == 0)
        return st;
    const size_t ss = mxp_dtype_itemsize(src_type), ds = mxp_dtype_itemsize(dst_type);
    mxp_cvt_params p = make_params(opts);
    if (dst_type == src_type && dst_type != MXP_BOOL && (src_stride != (ptrdiff_t)ss || dst_stride != (ptrdiff_t)ds) &&
        (p.overflow == MXP_OVERFLOW_INF || !mxp_dtype_get_traits(dst_type)->has_inf)) {
        /* a strided copy (see convert_run: the same dtype keeps the bits) */
        copy_strided(dst, dst_stride, src, src_stride, ss, n);
        return MXP_OK;
    }
    const mxp_fpenv env = mxp_fpenv_enter(); /* the SIMD kernels compute in floating point */
    if (src_stride == (ptrdiff_t)ss && dst_stride == (ptrdiff_t)ds)
        convert_contiguous(dst, dst_type, src, src_type, n, &p);
    else
        convert_blocks(dst, dst_type, dst_stride, src, src_type, src_stride, n, &p);
    mxp_fpenv_leave(env);
    return MXP_OK;
}

const char *mxp_convert_kernel_name(mxp_dtype dst_type, mxp_dtype src_type, const mxp_convert_opts *opts)
{
    MXP_ABI_IN_RET(opts, convert_opts, "mxp_convert_kernel_name", "invalid");
    if (check_types(dst_type, src_type) != MXP_OK || check_opts(opts) != MXP_OK)
        return "invalid";
    mxp_cvt_params p = make_params(opts);
    if (p.flags)
        return "reference";
    p.rounding = mxp_cvt_effective_mode(dst_type, src_type, p.rounding);
    const mxp_cvt_kernel *k = mxp_cvt_find(dst_type, src_type, p.rounding, mxp_get_isa());
    const char *lut_name = NULL;
    if (table_beats(k, dst_type, src_type, &p)) {
        const cvt_lut l = lut_find(dst_type, src_type, &p, mxp_get_isa(), &lut_name);
        if (l.to16 || l.to32)
            return lut_name; /* from LUT_MIN elements on */
    }
    const char *lut_name16 = NULL;
    mxp_x16_lut_tables t;
    mxp_dtype ts = src_type;
    if (k && mxp_cvt_x16_lut_kernel(dst_type, src_type, &ts, &lut_name16) &&
        mxp_cvt_x16_lut_tables(&t, dst_type, ts, &p, k->fn))
        return lut_name16; /* for large arrays (convert-x16-lut.c) */
    if (k)
        return k->name;
    const cvt_lut lut = lut_find(dst_type, src_type, &p, mxp_get_isa(), &lut_name);
    if (lut.to8 || lut.to16 || lut.to32 || lut.to64)
        return lut_name; /* from LUT_MIN (LUT_MIN_ALONE without a chain) elements on */
    const char *route = mxp_cvt_route_name(dst_type, src_type, p.rounding, mxp_get_isa()); /* convert-route.c */
    return route ? route : "reference";
}

/* ---- scalar conveniences --------------------------------------------- */

static void convert_one(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type)
{
    mxp_cvt_params p = { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL };
    mxp_convert_ref(dst, dst_type, src, src_type, 1, &p);
}

uint16_t mxp_f32_to_bf16(float x) { uint16_t y; convert_one(&y, MXP_BF16, &x, MXP_F32); return y; }
float mxp_bf16_to_f32(uint16_t x) { float y; convert_one(&y, MXP_F32, &x, MXP_BF16); return y; }
uint16_t mxp_f32_to_f16(float x) { uint16_t y; convert_one(&y, MXP_F16, &x, MXP_F32); return y; }
float mxp_f16_to_f32(uint16_t x) { float y; convert_one(&y, MXP_F32, &x, MXP_F16); return y; }
uint8_t mxp_f32_to_e4m3(float x) { uint8_t y; convert_one(&y, MXP_E4M3, &x, MXP_F32); return y; }
float mxp_e4m3_to_f32(uint8_t x) { float y; convert_one(&y, MXP_F32, &x, MXP_E4M3); return y; }
uint8_t mxp_f32_to_e5m2(float x) { uint8_t y; convert_one(&y, MXP_E5M2, &x, MXP_F32); return y; }
float mxp_e5m2_to_f32(uint8_t x) { float y; convert_one(&y, MXP_F32, &x, MXP_E5M2); return y; }

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

static double convert_bytes(mxp_dtype dst_type, mxp_dtype src_type, size_t n)
{
    return (double)n * (double)(mxp_dtype_itemsize(dst_type) + mxp_dtype_itemsize(src_type));
}

mxp_status mxp_convert(void *dst, mxp_dtype dst_type, const void *src, mxp_dtype src_type, size_t n,
                       const mxp_convert_opts *opts)
{
    MXP_PROF_RETURN("convert", convert_bytes(dst_type, src_type, n), 0,
                    convert_entry(dst, dst_type, src, src_type, n, opts));
}

mxp_status mxp_convert_strided(void *dst, mxp_dtype dst_type, ptrdiff_t dst_stride, const void *src,
                               mxp_dtype src_type, ptrdiff_t src_stride, size_t n, const mxp_convert_opts *opts)
{
    MXP_PROF_RETURN("convert", convert_bytes(dst_type, src_type, n), 0,
                    convert_strided_entry(dst, dst_type, dst_stride, src, src_type, src_stride, n, opts));
}
