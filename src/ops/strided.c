/* The one loop of every elementwise operation — blocks of the inputs
 * converted exactly to the compute type, the operation applied on
 * contiguous scratch, the result rounded once into the output — and the
 * 1-d strided entry points that NumPy ufunc inner loops map onto. */
#include <stdint.h>

#include "core/abi.h"
#include "core/element-bits.h"
#include "convert/convert-config.h"
#include "core/fpenv.h"
#include "core/error.h"
#include "core/threads-internal.h"
#include "mxp/threads.h"
#include "ops/ops-internal.h"

/* Scratch per operand in bytes: blocks of 2048 float32 (1024 float64)
 * compute elements, 24 KiB of stack in all */
enum { SCRATCH = 8192 };

/* A conversion looked up once per row: its kernel, called directly on
 * contiguous blocks (mxp_convert's checks and lookup on every block took
 * roughly a fifth of a contiguous bfloat16 add), else mxp_convert_strided
 * (strides, stochastic rounding, counters, the same dtype) with opts. */
typedef struct block_cvt {
    mxp_dtype dst, src;
    const mxp_cvt_kernel *kernel;
    const mxp_cvt_kernel *to_f32; /* widening to float64 without a direct kernel: src -> float32 -> float64 */
    mxp_cvt_params params;
    const mxp_convert_opts *opts;
} block_cvt;

static block_cvt find_cvt(mxp_dtype dst, mxp_dtype src, const mxp_convert_opts *o, mxp_isa isa)
{
    const mxp_rounding mode = mxp_cvt_effective_mode(dst, src, o->rounding); /* nearest even where nothing rounds */
    block_cvt c = { dst, src, NULL, NULL, { mode, o->overflow, o->seed, 0, NULL }, o };
    if (dst != src && mode != MXP_ROUND_STOCHASTIC && !o->flags)
        c.kernel = mxp_cvt_find(dst, src, mode, isa);
    const mxp_dtype_traits *t = mxp_dtype_get_traits(src);
    /* float16, bfloat16, float8 have SIMD kernels to float32 but not to
     * float64 (the reference converter is ~30x slower); both steps are exact */
    if (!c.kernel && dst == MXP_F64 && t->kind == MXP_KIND_FLOAT && t->bits < 32)
        c.to_f32 = mxp_cvt_find(MXP_F32, src, MXP_ROUND_NEAREST_EVEN, isa);
    return c;
}

/* tmp: scratch for m float32 (the two-step widening) */
static void convert_block(const block_cvt *c, void *dst, ptrdiff_t ds, const void *src, ptrdiff_t ss, size_t m,
                          float *tmp)
{
    const bool contiguous = ds == (ptrdiff_t)mxp_dtype_itemsize(c->dst) && ss == (ptrdiff_t)mxp_dtype_itemsize(c->src);
    if (c->kernel && contiguous) {
        c->kernel->fn(dst, src, m, &c->params);
    } else if (c->to_f32 && contiguous) {
        c->to_f32->fn(tmp, src, m, &c->params);
        double *d = dst;
        for (size_t i = 0; i < m; i++)
            d[i] = tmp[i];
    } else if (c->dst == MXP_BOOL && c->src == MXP_F32 && contiguous) {
        /* comparisons and predicates: float -> bool is x != 0 (NaN true), as
         * the reference converter; it has no kernel of its own */
        const float *s = src;
        bool *d = dst;
        for (size_t i = 0; i < m; i++)
            d[i] = s[i] != 0.0f;
    } else if (c->dst == MXP_BOOL && c->src == MXP_F64 && contiguous) {
        const double *s = src;
        bool *d = dst;
        for (size_t i = 0; i < m; i++)
            d[i] = s[i] != 0.0;
    } else {
        mxp_convert_strided(dst, c->dst, ds, src, c->src, ss, m, c->opts);
    }
}

/* The sign operations on the bits (mxp_ew_plan's sign_mask). */
static void sign_bits_1d(const mxp_ew_plan *p, size_t n, char *out, ptrdiff_t os, const char *const in[2],
                         const ptrdiff_t is[2])
{
    const uint64_t s = p->sign_mask;
    const size_t size = p->sign_size;
    for (size_t i = 0; i < n; i++) {
        const ptrdiff_t k = (ptrdiff_t)i;
        const uint64_t a = mxp_element_bits(in[0] + k * is[0], size);
        uint64_t r;
        if (p->nin == 2) /* copysign */
            r = (a & ~s) | (mxp_element_bits(in[1] + k * is[1], size) & s);
        else if (p->ctx.op == MXP_OP_NEGATIVE)
            r = a ^ s;
        else if (p->ctx.op == MXP_OP_ABS)
            r = a & ~s;
        else /* positive */
            r = a;
        mxp_element_set_bits(out + k * os, size, r & p->sign_width);
    }
}

void mxp_ew_run_1d(const mxp_ew_plan *p, size_t n, char *out, ptrdiff_t os, const char *const in[2],
                   const ptrdiff_t is[2], uint64_t index0)
{
    if (p->sign_size && !p->custom) {
        sign_bits_1d(p, n, out, os, in, is);
        return;
    }
    const uint16_t *table = p->lut16 ? mxp_ew_lut16(p, n) : NULL;
    if (table) { /* a costly 16-bit operation: one lookup per element */
        mxp_lut16_u16_ref(out, os, in[0], is[0], n, table);
        return;
    }
    if ((p->h16 || p->h16_unary) && os == 2 && is[0] == 2 && (p->nin == 1 || is[1] == 2) &&
        !(((uintptr_t)out | (uintptr_t)in[0] | (uintptr_t)in[1]) & 1)) { /* one pass, no scratch */
        uint16_t *y = (uint16_t *)(void *)out;
        const uint16_t *a = (const uint16_t *)(const void *)in[0], *b = (const uint16_t *)(const void *)in[1];
        if (p->h16)
            p->h16(p->h16_op, y, a, b, n);
        else
            (void)p->h16_unary(p->h16_op, y, a, n);
        return;
    }
    _Alignas(64) unsigned char in_buf[2][SCRATCH], out_buf[SCRATCH];
    const ptrdiff_t cs = (ptrdiff_t)mxp_dtype_itemsize(p->ct);
    const size_t block = SCRATCH / (size_t)cs;
    const mxp_isa isa = mxp_isa_current();
    static const mxp_convert_opts exact = { .rounding = MXP_ROUND_NEAREST_EVEN };
    const block_cvt widen[2] = { find_cvt(p->ct, p->in[0], &exact, isa),
                                 find_cvt(p->ct, p->nin > 1 ? p->in[1] : p->ct, &exact, isa) };
    mxp_convert_opts co = p->convert; /* index_offset set per block */
    const block_cvt narrow = find_cvt(p->out, p->ct, &co, isa);
    const void *args[2] = { in_buf[0], in_buf[1] };
    bool fixed[2] = { false, false };
    for (int k = 0; k < p->nin; k++) {
        if (is[k] == 0 && n > 1) { /* a broadcast scalar: converted once */
            mxp_convert_strided(in_buf[k], p->ct, cs, in[k], p->in[k], 0, n < block ? n : block, NULL);
            fixed[k] = true;
        }
    }
    /* The compute type is the output's: the loop writes it where it lies
     * (unless infinities must saturate, which is a conversion's job, or it
     * lies at a misaligned address: the loops take typed pointers; an
     * input likewise is read where it lies only when aligned, else copied
     * as bytes into the scratch). */
    const bool direct_out = p->out == p->ct && os == cs && co.overflow == MXP_OVERFLOW_INF && !((uintptr_t)out % (uintptr_t)cs);
    for (size_t j = 0; j < n; j += block) {
        const size_t m = n - j < block ? n - j : block;
        for (int k = 0; k < p->nin; k++) {
            const char *src = in[k] + (ptrdiff_t)j * is[k];
            if (fixed[k])
                continue;
            if (p->in[k] == p->ct && is[k] == cs && !((uintptr_t)src % (uintptr_t)cs)) { /* the compute type: no copy */
                args[k] = src;
            } else {
                convert_block(&widen[k], in_buf[k], cs, src, is[k], m, (float *)(void *)out_buf); /* free until the loop */
                args[k] = in_buf[k];
            }
        }
        char *dst = out + (ptrdiff_t)j * os;
        void *res = direct_out ? (void *)dst : (void *)out_buf;
        if (p->custom)
            p->custom(res, args[0], m, p->custom_ctx);
        else
            p->fn(&p->ctx, res, args[0], args[1], m);
        if (p->nan_f32 && !p->custom)
            p->nan_f32(res, m);
        else if (p->nan_f64 && !p->custom)
            p->nan_f64(res, m);
        if (!direct_out) {
            co.index_offset = p->convert.index_offset + index0 + j;
            convert_block(&narrow, dst, os, out_buf, cs, m, NULL);
        }
    }
}

/* ---- large operations over the thread pool ----------------------------- */

/* Bytes (read + written) per share, so that an operation stays on the
 * calling thread below twice this: 4 MiB (as conversions) for the cheap
 * operations, which run near memory speed (~30 GB/s: 8 MiB take ~0.3 ms),
 * a quarter of it for a function per element (exp, tanh, gelu ... run at
 * 1-10 GB/s).  Waking a sleeping worker costs tens of microseconds, and far
 * more when the other cores are busy; measured on a 2-core Zen 4
 * (docs/ops.md, Threads). */
#define MXP_EW_SHARE_BYTES ((size_t)4 << 20)
enum { COSTLY_FACTOR = 4 };

int mxp_ew_threads(const mxp_ew_plan *p, size_t n)
{
    if (p->custom)
        return 1;
    size_t bytes = mxp_dtype_itemsize(p->out);
    for (int k = 0; k < p->nin; k++)
        bytes += mxp_dtype_itemsize(p->in[k]);
    return mxp_share_threads(n, MXP_EW_SHARE_BYTES / (p->costly ? COSTLY_FACTOR : 1) / bytes);
}

typedef struct ew_job {
    const mxp_ew_plan *p;
    mxp_ew_range_fn fn;
    const void *ctx;
} ew_job;

/* Elements [lo, hi) of a share (mxp_parallel_shares). */
static void ew_share(const void *ctx, size_t lo, size_t hi, mxp_convert_flags *counts)
{
    const ew_job *j = ctx;
    if (counts == j->p->convert.flags) { /* the caller's own counters (or none): the plan as it is */
        j->fn(j->p, j->ctx, lo, hi);
        return;
    }
    mxp_ew_plan q = *j->p;
    q.convert.flags = counts;
    j->fn(&q, j->ctx, lo, hi);
}

void mxp_ew_parallel(const mxp_ew_plan *p, size_t n, mxp_ew_range_fn fn, const void *ctx)
{
    const ew_job job = { p, fn, ctx };
    mxp_parallel_shares(mxp_ew_threads(p, n), n, p->convert.flags, ew_share, &job);
}

/* ---- the public strided entry points ---------------------------------- */

static size_t magnitude(ptrdiff_t s) { return s < 0 ? (size_t)0 - (size_t)s : (size_t)s; }

/* [lo, hi): the bytes n elements of `size` bytes at p with stride s touch. */
static void span(const void *p, ptrdiff_t s, size_t n, size_t size, uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t a = (uintptr_t)p, last = a + (uintptr_t)((ptrdiff_t)(n - 1) * s);
    *lo = s < 0 ? last : a;
    *hi = (s < 0 ? a : last) + size;
}

static mxp_status check_operand(const char *fn, const char *name, const void *p, ptrdiff_t stride, size_t n)
{
    if (!p)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL with n = %zu", fn, name, n);
    /* Every byte offset (n - 1) |stride| + itemsize must fit in ptrdiff_t. */
    const size_t s = magnitude(stride);
    if (s && n - 1 > ((size_t)PTRDIFF_MAX - 8) / s)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: n = %zu elements at a stride of %td bytes overflow the address space",
                         fn, n, stride);
    return MXP_OK;
}

/* Out may be an input element for element: the same pointer and stride,
 * no wider than it, each input element read before its output is written. */
static mxp_status check_overlap(const char *fn, const char *name, const void *out, size_t osize, ptrdiff_t os,
                                const void *in, size_t isize, ptrdiff_t is, size_t n)
{
    uintptr_t olo, ohi, ilo, ihi;
    span(out, os, n, osize, &olo, &ohi);
    span(in, is, n, isize, &ilo, &ihi);
    if (ohi <= ilo || ihi <= olo)
        return MXP_OK;
    if (out == in && osize <= isize && (n == 1 || (os == is && magnitude(is) >= isize)))
        return MXP_OK;
    return mxp_error(MXP_ERR_OVERLAP, "%s: out overlaps %s other than element for element (in place needs the same "
                     "pointer and stride and itemsize(out) <= itemsize(%s))", fn, name, name);
}

/* The checks every strided call makes once its op and dtypes are valid. */
static mxp_status check_strided(const char *fn, const mxp_ew_plan *p, size_t n, const void *out, ptrdiff_t os,
                                const char *const in[2], const ptrdiff_t is[2])
{
    static const char *const names[2] = { "a", "b" };
    const size_t osize = mxp_dtype_itemsize(p->out);
    mxp_status st = check_operand(fn, "out", out, os, n);
    if (st == MXP_OK && n > 1 && magnitude(os) < osize)
        st = mxp_error(MXP_ERR_OVERLAP, "%s: out_stride %td is smaller than out's %zu-byte elements", fn, os, osize);
    for (int k = 0; k < p->nin && st == MXP_OK; k++) {
        st = check_operand(fn, names[k], in[k], is[k], n);
        if (st == MXP_OK)
            st = check_overlap(fn, names[k], out, osize, os, in[k], mxp_dtype_itemsize(p->in[k]), is[k], n);
    }
    return st;
}

static mxp_status check_dtypes(const char *fn, mxp_dtype out, mxp_dtype a, mxp_dtype b, int nin)
{
    const mxp_dtype t[3] = { out, a, b };
    static const char *const names[3] = { "out_type", "a_type", "b_type" };
    for (int k = 0; k <= nin; k++) {
        if (!mxp_dtype_is_valid(t[k]))
            return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %s %d is not a valid mxp_dtype", fn, names[k], (int)t[k]);
    }
    return MXP_OK;
}

typedef struct strided_args {
    char *out;
    ptrdiff_t os;
    const char *in[2];
    ptrdiff_t is[2];
} strided_args;

/* Elements [lo, hi) of a strided call (a share of mxp_ew_parallel). */
static void strided_range(const mxp_ew_plan *p, const void *ctx, size_t lo, size_t hi)
{
    const strided_args *x = ctx;
    const ptrdiff_t i = (ptrdiff_t)lo;
    const char *const in[2] = { x->in[0] + i * x->is[0], x->in[1] ? x->in[1] + i * x->is[1] : NULL };
    mxp_ew_run_1d(p, hi - lo, x->out + i * x->os, x->os, in, x->is, lo);
}

/* Checks done, or an error: runs p over the n elements. */
static mxp_status run_strided_in_env(const char *fn, const mxp_ew_plan *p, size_t n, void *out, ptrdiff_t os,
                              const void *a, ptrdiff_t as, const void *b, ptrdiff_t bs)
{
    const char *const in[2] = { a, b };
    const ptrdiff_t is[2] = { as, bs };
    mxp_status st = mxp_convert(NULL, MXP_F32, NULL, MXP_F32, 0, &p->convert); /* the options' checks */
    if (st != MXP_OK || n == 0)
        return st;
    st = check_strided(fn, p, n, out, os, in, is);
    if (st == MXP_OK) {
        const strided_args x = { out, os, { in[0], in[1] }, { is[0], is[1] } };
        mxp_ew_parallel(p, n, strided_range, &x);
    }
    return st;
}

/* Under the library's floating-point environment (core/fpenv.h). */
static mxp_status run_strided(const char *fn, const mxp_ew_plan *p, size_t n, void *out, ptrdiff_t os,
                              const void *a, ptrdiff_t as, const void *b, ptrdiff_t bs)
{
    const mxp_fpenv env = mxp_fpenv_enter();
    mxp_status st = run_strided_in_env(fn, p, n, out, os, a, as, b, bs);
    mxp_fpenv_leave(env);
    return st;
}

mxp_status mxp_binary_strided(mxp_binary_op op, size_t n, void *out, mxp_dtype out_type, ptrdiff_t out_stride,
                              const void *a, mxp_dtype a_type, ptrdiff_t a_stride, const void *b, mxp_dtype b_type,
                              ptrdiff_t b_stride, const mxp_convert_opts *convert)
{
    MXP_ABI_IN(convert, convert_opts, "mxp_binary_strided");
    static const char fn[] = "mxp_binary_strided";
    if ((unsigned)op >= MXP_BINARY_OP_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: op %d is not one of mxp_binary_op's", fn, (int)op);
    mxp_status st = check_dtypes(fn, out_type, a_type, b_type, 2);
    if (st == MXP_OK)
        st = mxp_ew_check_binary(op, a_type, b_type);
    if (st != MXP_OK)
        return st;
    mxp_ew_plan p;
    mxp_ew_plan_binary(&p, op, a_type, b_type, out_type, convert);
    return run_strided(fn, &p, n, out, out_stride, a, a_stride, b, b_stride);
}

mxp_status mxp_unary_strided(mxp_unary_op op, size_t n, void *out, mxp_dtype out_type, ptrdiff_t out_stride,
                             const void *a, mxp_dtype a_type, ptrdiff_t a_stride, const mxp_convert_opts *convert)
{
    MXP_ABI_IN(convert, convert_opts, "mxp_unary_strided");
    static const char fn[] = "mxp_unary_strided";
    if ((unsigned)op >= MXP_UNARY_OP_COUNT)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: op %d is not one of mxp_unary_op's", fn, (int)op);
    mxp_status st = check_dtypes(fn, out_type, a_type, MXP_DTYPE_INVALID, 1);
    if (st != MXP_OK)
        return st;
    mxp_ew_plan p;
    mxp_ew_plan_unary(&p, op, a_type, out_type, convert);
    return run_strided(fn, &p, n, out, out_stride, a, a_stride, NULL, 0);
}
