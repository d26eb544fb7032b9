/* mxp_gemm: argument checks, the accumulator and configuration, the
 * workspace when C is not of the accumulator's dtype, and the final
 * rounding into C. */
#include <string.h>

#include "convert/convert-config.h"
#include "core/abi.h"
#include "core/alloc-internal.h"
#include "core/dtype-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/lowp.h"
#include "core/profile-internal.h"
#include "core/threads-internal.h"
#include "kernels/bf16-round.h"
#include "gemm/driver.h"
#include "mxp/alloc.h"
#include "mxp/threads.h"

static mxp_status check_type(mxp_dtype t, const char *which)
{
    if (!mxp_dtype_is_valid(t))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "mxp_gemm: %s dtype %d is not a valid mxp_dtype", which, (int)t);
    if (!mxp_is_float_dtype(t) && !mxp_gemm_int8_input(t) && !(t == MXP_S32 && which[0] == 'C') &&
        !(mxp_gemm_sub_byte_int(t) && which[0] != 'C'))
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: %s is %s; GEMM takes floating types, or uint8/int8 A by "
                                              "int8 B, or sub-byte integers as A or B (docs/gemm.md)", which,
                         mxp_dtype_name(t));
    return MXP_OK;
}

mxp_status mxp_gemm_check_matrix(const char *fn, const char *name, const void *p, size_t rows, size_t cols,
                                 size_t ld, mxp_dtype t)
{
    if (ld < cols || ld == 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: ld%s = %zu is smaller than its stored row of %zu", fn, name,
                         ld, cols ? cols : 1);
    if (rows == 0 || cols == 0)
        return MXP_OK;
    if (!p)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL for a %zu x %zu matrix", fn, name, rows, cols);
    size_t size = mxp_dtype_itemsize(t);
    if (cols > (size_t)PTRDIFF_MAX / size || rows - 1 > ((size_t)PTRDIFF_MAX / size - cols) / ld)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: %s (%zu x %zu, ld %zu) overflows the address space", fn, name,
                         rows, cols, ld);
    return MXP_OK;
}

static mxp_status check_matrix(const char *name, const void *p, size_t rows, size_t cols, size_t ld, mxp_dtype t)
{
    return mxp_gemm_check_matrix("mxp_gemm", name, p, rows, cols, ld, t);
}

/* vdpbf16ps reads bf16 subnormals as zero and flushes float32 results
 * below 2^-126.  Inputs with a nonzero |x| < 2^-63 (so a product could be
 * that small) take the float32 kernel instead: a pass over A and B
 * (src/kernels/bf16-scan/), small next to the multiply. */
static bool rows_have_tiny_bf16(const uint16_t *p, size_t rows, size_t cols, size_t ld)
{
    return mxp_bf16_scan_kernel(mxp_isa_current())(p, rows, cols, ld);
}

enum { SCAN_MAX_THREADS = 64 };

typedef struct tiny_scan {
    const uint16_t *p;
    size_t rows, cols, ld;
    bool found[SCAN_MAX_THREADS];
} tiny_scan;

static void scan_share(void *ctx, int t, int nthreads)
{
    tiny_scan *s = ctx;
    size_t r0, r1;
    mxp_share_range(s->rows, 1, t, nthreads, &r0, &r1);
    s->found[t] = rows_have_tiny_bf16(s->p + r0 * s->ld, r1 - r0, s->cols, s->ld);
}

/* Matrices from 128K elements (a weight matrix read from memory next to a
 * few rows of A; a transformer's activations) are scanned by all the
 * threads: a pass that one thread does not make at the machine's bandwidth
 * (M = 128, N = K = 4096, two threads: +1-3%), and that was serial time in
 * every GEMM on 1056 x 384 activations (from 1M elements before). */
bool mxp_gemm_has_tiny_bf16(const void *x, mxp_dtype t, size_t rows, size_t cols, size_t ld)
{
    if (t != MXP_BF16)
        return false;
    int nthreads = mxp_get_num_threads();
    nthreads = nthreads > SCAN_MAX_THREADS ? SCAN_MAX_THREADS : nthreads;
    if (nthreads < 2 || (double)rows * (double)cols < (double)(1 << 17) || rows < (size_t)nthreads)
        return rows_have_tiny_bf16(x, rows, cols, ld);
    tiny_scan s = { x, rows, cols, ld, { false } };
    mxp_parallel(nthreads, scan_share, &s);
    for (int i = 0; i < nthreads; i++)
        if (s.found[i])
            return true;
    return false;
}

/* B (bfloat16 for the vdpbf16ps kernel) checked for tiny values while it
 * is packed instead of by a pass before: that pass read all of B from
 * memory once more (M = 128, N = K = 4096: 7% of the call).  When one is
 * found the product starts over with the float32 kernel, which only works
 * when the first attempt's writes do not count: beta == 0 (C is only
 * written), no conversion counters (they would count C twice), and B
 * packed at all (the small-M kernel reads it in place). */
static bool check_b_while_packing(double beta, const mxp_gemm_direct_config *dcfg, const mxp_convert_opts *co)
{
    return beta == 0 && !dcfg && !(co && co->flags);
}

static mxp_dtype acc_for(mxp_dtype at, mxp_dtype bt, const mxp_gemm_opts *opts)
{
    if (opts && opts->acc_dtype)
        return opts->acc_dtype;
    return at == MXP_F64 || bt == MXP_F64 ? MXP_F64 : MXP_F32;
}

static bool has_epilogue(const mxp_gemm_opts *o)
{
    return o && (o->bias || o->bias_kind || o->activation || o->clamp);
}

static mxp_status check_epilogue(const mxp_gemm_opts *o)
{
    if (!has_epilogue(o))
        return MXP_OK;
    if ((unsigned)o->bias_kind > MXP_BIAS_PER_COL)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: bias_kind %d is not one of mxp_bias_kind's",
                         (int)o->bias_kind);
    if (!o->bias != !o->bias_kind)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: bias %s but bias_kind is %s",
                         o->bias ? "is given" : "is NULL", o->bias_kind ? "set" : "MXP_BIAS_NONE");
    if (o->bias && !mxp_is_float_dtype(o->bias_dtype))
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: bias dtype %s: use a floating type",
                         mxp_dtype_name(o->bias_dtype));
    if ((unsigned)o->activation > MXP_ACT_SILU)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: activation %d is not one of mxp_activation's",
                         (int)o->activation);
    if (o->clamp && !(o->clamp_lo <= o->clamp_hi))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: clamp needs clamp_lo <= clamp_hi (got %g, %g)",
                         o->clamp_lo, o->clamp_hi);
    return MXP_OK;
}

/* a_made: A is made by a gather (a NULL, not checked). */
static mxp_status check_all(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, const void *a, mxp_dtype at,
                            size_t lda, const void *b, mxp_dtype bt, size_t ldb, void *c, mxp_dtype ct, size_t ldc,
                            const mxp_gemm_opts *opts, bool a_made)
{
    if ((unsigned)ta > MXP_TRANS || (unsigned)tb > MXP_TRANS)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: %s = %d must be MXP_NO_TRANS or MXP_TRANS",
                         (unsigned)ta > MXP_TRANS ? "ta" : "tb", (unsigned)ta > MXP_TRANS ? (int)ta : (int)tb);
    mxp_status st = check_type(at, "A");
    if (st == MXP_OK)
        st = check_type(bt, "B");
    if (st == MXP_OK)
        st = check_type(ct, "C");
    /* the integer combinations, with sub-byte integers as they are widened */
    const mxp_dtype aw = mxp_gemm_widened_type(at, bt, false), bw = mxp_gemm_widened_type(bt, at, true);
    if (st == MXP_OK)
        st = mxp_gemm_int8_check_types(aw, bw, ct);
    if (st == MXP_OK && opts) {
        const bool int8 = mxp_gemm_int8_input(aw);
        if (opts->acc_dtype && (int8 ? opts->acc_dtype != MXP_S32
                                     : opts->acc_dtype != MXP_F32 && opts->acc_dtype != MXP_F64 &&
                                           !mxp_lowp_dtype(opts->acc_dtype)))
            st = mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: accumulator %s: use %s", mxp_dtype_name(opts->acc_dtype),
                           int8 ? "int32 for integer inputs"
                                : "float32 or float64 (or float16/bfloat16: an emulation, docs/gemm.md)");
        else if (!int8 && (opts->scales || opts->n_scales || opts->a_zero_point || opts->b_zero_point ||
                           opts->c_zero_point || opts->a_zero_points || opts->a_scales))
            /* would be ignored: refused, not a silently unscaled C */
            st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: scales and zero points apply to integer GEMM "
                           "(uint8/int8 A by int8 B); A and B are %s and %s", mxp_dtype_name(at), mxp_dtype_name(bt));
        else
            st = mxp_convert(NULL, MXP_F32, NULL, MXP_F32, 0, &opts->convert);
        if (st == MXP_OK)
            st = check_epilogue(opts);
    }
    if (st != MXP_OK)
        return st;
    size_t kk = m && n ? k : 0; /* A and B are not read when C is empty */
    if (!a_made)
        st = check_matrix("a", a, ta ? kk : (m && n ? m : 0), ta ? (m && n ? m : 0) : kk, lda, at);
    if (st == MXP_OK)
        st = check_matrix("b", b, tb ? (m && n ? n : 0) : kk, tb ? kk : (m && n ? n : 0), ldb, bt);
    if (st == MXP_OK)
        st = check_matrix("c", c, m, n, ldc, ct);
    if (st == MXP_OK)
        st = mxp_gemm_check_buffers("mxp_gemm", ta, tb, m, n, k, a, at, lda, b, bt, ldb, c, ct, ldc, opts);
    return st;
}

/* C = beta * C, rounded into C's dtype; beta == 0 writes zeros. */
static void scale_c(size_t m, size_t n, double beta, void *c, mxp_dtype ct, size_t ldc, const mxp_convert_opts *opts)
{
    double row[256];
    const size_t size = mxp_dtype_itemsize(ct);
    mxp_convert_opts o = opts ? *opts : (mxp_convert_opts){ .rounding = MXP_ROUND_NEAREST_EVEN };
    const mxp_convert_opts *co = &o;
    const uint64_t offset0 = o.index_offset; /* stochastic rounding: C's elements in row-major order */
    for (size_t i = 0; i < m; i++) {
        unsigned char *r = (unsigned char *)c + i * ldc * size;
        for (size_t j = 0; j < n; j += 256) {
            size_t len = n - j < 256 ? n - j : 256;
            if (beta == 0) {
                memset(row, 0, len * sizeof row[0]);
            } else {
                mxp_convert(row, MXP_F64, r + j * size, ct, len, NULL);
                for (size_t q = 0; q < len; q++)
                    row[q] *= beta;
            }
            o.index_offset = offset0 + i * n + j;
            mxp_convert(r + j * size, ct, row, MXP_F64, len, co);
        }
    }
}

/* The workspace into C with the epilogue, rounded once: rows in chunks of
 * float64 (exact for float32/float64 accumulators). */
/* The rounding of finished workspace blocks into C: the epilogue (in
 * float64) when there is one, else a conversion; stochastic rounding
 * indexes C's elements in row-major order whichever thread runs a block. */
typedef struct finish_ctx {
    void *c;
    mxp_dtype ct, acc;
    size_t ldc, n;
    const mxp_gemm_opts *o; /* NULL: no epilogue, nearest even */
    mxp_gemm_epilogue epi;
    bool epilogue;
    /* Without an epilogue, a deterministic mode and no counters: the
     * conversion kernel found once, called row by row (mxp_convert's checks
     * and lookup per row were 6-7% of a 256^3 bf16 -> bf16 GEMM); NULL:
     * mxp_convert. */
    const mxp_cvt_kernel *kernel;
    mxp_cvt_params params;
    /* A float32 workspace with an epilogue into float32 or bfloat16 C,
     * nearest even, no counters: the rows widened and rounded in plain
     * loops (the bits of mxp_convert's), the bias widened once (bias64:
     * n values per column, or m per row; NULL: none) -- two conversion
     * calls and a widening a row were most of the time of rows of 16-64
     * (a convolution's output channels). */
    bool f32_rows;
    const double *bias64;
    /* f32_rows into bfloat16: the float64 -> bfloat16 kernel (nearest
     * even, the same bits as mxp_f64_to_bf16_rne), found once; NULL: that
     * function element by element (a third of a small bf16 GEMM's time). */
    const mxp_cvt_kernel *to_bf16;
    /* f32_rows with a bias and neither activation nor clamp: the bias
     * rows' kernel (src/kernels/f32-finish/: the same bits in one pass;
     * the loops below, compiled for the baseline ISA, cost most of a
     * product's time for K = 384: 1056 x 1152 x 384 into bfloat16 C takes
     * 1.07 ms without a bias, 2.19 with it through the loops, 1.55 through
     * the kernel). */
    mxp_f32_finish_fn finish;
    /* float32 C, a bias per column whose every value float32 holds (and a
     * clamp between floats, no activation): the bias as float32 and the
     * sums plus it in float32 arithmetic (then the clamp: rounding is
     * monotonic, so clamping before or after it gives the same), the same
     * bits (a float32 sum of two floats is the correctly rounded exact sum,
     * as the float64 sum rounded once to float32 is: the float64 sum is
     * exact unless the exponents lie more than 29 apart, and then neither
     * rounding moves the larger) in one plain loop the compiler vectorizes:
     * the pass is memory-bound (MiniLM float32's 24 products a batch: the
     * finish kernel 5 ms, this 1-2); NULL: not so.  Through bias_fn
     * (src/kernels/f32-finish/: 16 lanes at AVX-512; the twin's loop,
     * compiled for the baseline ISA, 4), found with it. */
    const float *bias32;
    mxp_f32_finish_bias_fn bias_fn;
} finish_ctx;

/* Whether float32 holds x (a clamp bound: never NaN) exactly. */
static bool is_float(double x)
{
    return (double)(float)x == x;
}

/* The n values of bias64 as float32 when float32 holds each exactly (NaN
 * not: its payload is the float64 path's); NULL otherwise, or without
 * memory (the float64 path then). */
static float *bias_as_f32(const double *bias64, size_t n)
{
    float *b = mxp_malloc(n * sizeof *b);
    for (size_t j = 0; b && j < n; j++) {
        b[j] = (float)bias64[j];
        if ((double)b[j] != bias64[j]) {
            mxp_free(b);
            return NULL;
        }
    }
    return b;
}

/* finish_block's rows for f32_rows. */
static void finish_f32_rows(const finish_ctx *f, size_t i0, size_t mc, size_t j0, size_t nc, const float *wb,
                            size_t ldw)
{
    enum { CHUNK = 512 };
    double t[CHUNK];
    const mxp_gemm_opts *o = f->o;
    if (f->bias32) { /* float32 C, rows in place or from the workspace; the clamp's bounds are floats */
        const float lo = (float)o->clamp_lo, hi = (float)o->clamp_hi;
        for (size_t r = 0; r < mc; r++) /* NaN stays, as mxp_gemm_epilogue_act has it */
            f->bias_fn((float *)f->c + (i0 + r) * f->ldc + j0, wb + r * ldw, f->bias32 + j0, nc, o->clamp, lo, hi);
        return;
    }
    if (f->finish) {
        const size_t cs = f->ct == MXP_F32 ? 4 : 2;
        const bool per_col = o->bias_kind == MXP_BIAS_PER_COL;
        for (size_t r = 0; r < mc; r++)
            f->finish((unsigned char *)f->c + ((i0 + r) * f->ldc + j0) * cs, f->ct == MXP_BF16, wb + r * ldw, nc,
                      per_col ? f->bias64 + j0 : f->bias64 + i0 + r, per_col);
        return;
    }
    for (size_t r = 0; r < mc; r++) {
        const size_t i = i0 + r;
        for (size_t q = 0; q < nc; q += CHUNK) {
            const size_t len = nc - q < CHUNK ? nc - q : CHUNK, j = j0 + q;
            const float *src = wb + r * ldw + q;
            for (size_t u = 0; u < len; u++)
                t[u] = src[u];
            if (f->bias64 && o->bias_kind == MXP_BIAS_PER_COL)
                for (size_t u = 0; u < len; u++)
                    t[u] += f->bias64[j + u];
            else if (f->bias64)
                for (size_t u = 0; u < len; u++)
                    t[u] += f->bias64[i];
            mxp_gemm_epilogue_act(o, t, len);
            if (f->ct == MXP_F32) {
                float *dst = (float *)f->c + i * f->ldc + j;
                for (size_t u = 0; u < len; u++)
                    dst[u] = (float)t[u];
            } else if (f->to_bf16) {
                f->to_bf16->fn((uint16_t *)f->c + i * f->ldc + j, t, len, &f->params);
            } else {
                uint16_t *dst = (uint16_t *)f->c + i * f->ldc + j;
                for (size_t u = 0; u < len; u++)
                    dst[u] = mxp_f64_to_bf16_rne(t[u]);
            }
        }
    }
}

static void finish_block(void *ctx, size_t i0, size_t mc, size_t j0, size_t nc, const void *wb, size_t ldw)
{
    enum { CHUNK = 512 };
    const finish_ctx *f = ctx;
    double t[CHUNK], tmp[CHUNK];
    const size_t cs = mxp_dtype_itemsize(f->ct), as = mxp_dtype_itemsize(f->acc);
    if (f->f32_rows) {
        finish_f32_rows(f, i0, mc, j0, nc, wb, ldw);
        return;
    }
    if (f->kernel) {
        for (size_t r = 0; r < mc; r++)
            f->kernel->fn((unsigned char *)f->c + ((i0 + r) * f->ldc + j0) * cs,
                          (const unsigned char *)wb + r * ldw * as, nc, &f->params);
        return;
    }
    mxp_convert_opts co = f->o ? f->o->convert : (mxp_convert_opts){ .rounding = MXP_ROUND_NEAREST_EVEN };
    const uint64_t offset0 = co.index_offset;
    for (size_t r = 0; r < mc; r++) {
        const size_t i = i0 + r;
        for (size_t q = 0; q < nc; q += CHUNK) {
            const size_t len = nc - q < CHUNK ? nc - q : CHUNK, j = j0 + q;
            const unsigned char *src = (const unsigned char *)wb + (r * ldw + q) * as;
            unsigned char *dst = (unsigned char *)f->c + (i * f->ldc + j) * cs;
            co.index_offset = offset0 + i * f->n + j;
            if (f->epilogue) {
                mxp_convert(t, MXP_F64, src, f->acc, len, NULL);
                mxp_gemm_epilogue_row(&f->epi, t, i, j, len, tmp);
                mxp_convert(dst, f->ct, t, MXP_F64, len, &co);
            } else {
                mxp_convert(dst, f->ct, src, f->acc, len, &co);
            }
        }
    }
}

/* Converts rows between C (ct, ldc) and the workspace (acc, n). */
static void copy_rows(void *dst, mxp_dtype dt, size_t ldd, const void *src, mxp_dtype st, size_t lds, size_t m,
                      size_t n, const mxp_convert_opts *co)
{
    const size_t ds = mxp_dtype_itemsize(dt), ss = mxp_dtype_itemsize(st);
    mxp_convert_opts o = co ? *co : (mxp_convert_opts){ .rounding = MXP_ROUND_NEAREST_EVEN };
    const uint64_t offset0 = o.index_offset;
    for (size_t i = 0; i < m; i++) {
        o.index_offset = offset0 + i * n; /* stochastic rounding: C's elements in row-major order */
        mxp_convert((unsigned char *)dst + i * ldd * ds, dt, (const unsigned char *)src + i * lds * ss, st, n, &o);
    }
}

static mxp_status gemm_float(const mxp_gemm_config *cfg, const mxp_gemm_direct_config *dcfg,
                             const mxp_gemm_config *redo, mxp_dtype acc, size_t m, size_t n, size_t k, double alpha,
                             const mxp_gemm_operand *A, const mxp_gemm_operand *B, double beta, void *c,
                             mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts);

static mxp_status gemm(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha, const void *a,
                       mxp_dtype a_type, size_t lda, const void *b, mxp_dtype b_type, size_t ldb, double beta,
                       void *c, mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts)
{
    mxp_status st = check_all(ta, tb, m, n, k, a, a_type, lda, b, b_type, ldb, c, c_type, ldc, opts, false);
    if (st == MXP_OK && m && n && (mxp_gemm_sub_byte_int(a_type) || mxp_gemm_sub_byte_int(b_type)))
        return mxp_gemm_sub_byte_copies(gemm, ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type,
                                        ldc, opts); /* src/gemm/sub-byte.c */
    if (st == MXP_OK && m && n && mxp_gemm_misaligned(k, a, a_type, b, b_type, c, c_type)) /* src/gemm/misaligned.c */
        return mxp_gemm_aligned_copies(gemm, ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type,
                                       ldc, opts);
    if (st == MXP_OK && mxp_gemm_int8_input(a_type)) /* src/gemm/int8.c */
        return mxp_gemm_int8(ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc, opts);
    if (st != MXP_OK || m == 0 || n == 0)
        return st;
    const mxp_convert_opts *co = opts ? &opts->convert : NULL;
    if (k == 0 || alpha == 0) {
        scale_c(m, n, beta, c, c_type, ldc, co);
        return MXP_OK;
    }
    const mxp_dtype acc = acc_for(a_type, b_type, opts);
    const mxp_gemm_operand A = { a, a_type, lda, ta == MXP_TRANS, NULL }, B = { b, b_type, ldb, tb == MXP_TRANS, NULL };
    if (mxp_lowp_dtype(acc)) /* src/gemm/lowp-acc.c */
        return mxp_gemm_lowp_acc(acc, m, n, k, alpha, &A, &B, beta, c, c_type, ldc, opts, has_epilogue(opts));
    if (m == 1 && mxp_gemm_gemv(n, k, alpha, &A, &B, beta, c, c_type, opts, &st))
        return st; /* widens exactly: no tiny-value question */
    const mxp_gemm_config *cfg = mxp_gemm_config_for(acc, a_type, b_type, mxp_isa_current());
    /* small M with B of the dtype the packed configuration multiplies: read in place, by a kernel
     * of the packed one's level (bf16 M = 16, N = K = 4096 on the Xeon: the avx512bf16 direct
     * kernel 10.2 ms, AMX packed 4.3) */
    const mxp_gemm_direct_config *dcfg = mxp_gemm_direct_config_for(acc, b_type, mxp_isa_current());
    /* tiny products, C of the accumulator's dtype: A and B read in place, nothing packed */
    if (dcfg && cfg->packed == dcfg->packed && dcfg->isa >= cfg->isa && c_type == acc && !has_epilogue(opts) &&
        mxp_gemm_drive_tiny(dcfg, cfg->kc, m, n, k, alpha, &A, &B, beta, c, ldc))
        return MXP_OK;
    if (!(dcfg && m <= dcfg->max_m && !B.trans && cfg->packed == dcfg->packed && dcfg->isa >= cfg->isa))
        dcfg = NULL;
    const mxp_gemm_config *redo = NULL; /* B checked while packed (mxp_gemm_float_drive) */
    if (cfg->packed == MXP_BF16) { /* keep tiny values exact: the float32 kernel */
        const mxp_gemm_config *f32 = mxp_gemm_config_for(acc, MXP_F32, MXP_F32, mxp_isa_current());
        if (mxp_gemm_has_tiny_bf16(a, a_type, ta ? k : m, ta ? m : k, lda))
            cfg = f32;
        else if (check_b_while_packing(beta, dcfg, co))
            redo = f32;
        else if (mxp_gemm_has_tiny_bf16(b, b_type, tb ? n : k, tb ? k : n, ldb))
            cfg = f32;
        if (cfg == f32)
            dcfg = NULL; /* the bf16 direct kernel is no longer the packed one */
    }
    return gemm_float(cfg, dcfg, redo, acc, m, n, k, alpha, &A, &B, beta, c, c_type, ldc, opts);
}

/* The float product by cfg (dcfg: the small-M loops instead; redo: see
 * mxp_gemm_float_drive) into C with the epilogue, rounded once. */
static mxp_status gemm_float(const mxp_gemm_config *cfg, const mxp_gemm_direct_config *dcfg,
                             const mxp_gemm_config *redo, mxp_dtype acc, size_t m, size_t n, size_t k, double alpha,
                             const mxp_gemm_operand *A, const mxp_gemm_operand *B, double beta, void *c,
                             mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts)
{
    const mxp_convert_opts *co = opts ? &opts->convert : NULL;
    mxp_status st;
    const bool epilogue = has_epilogue(opts);
    if (c_type == acc && !epilogue) /* accumulate in C itself */
        return dcfg ? mxp_gemm_drive_direct(dcfg, m, n, k, alpha, A, B, beta, c, ldc, NULL, NULL)
                    : mxp_gemm_float_drive(cfg, m, n, k, alpha, A, B, beta, c, ldc, NULL, NULL, redo);
    /* Otherwise the sums accumulate in C itself when it has the accumulator's type (the epilogue
     * then rounds each finished block in place: every finish below reads an element before it
     * writes it), else in a workspace of that type, rounded into C once.  (A workspace for a
     * float32 C with a bias cost a copy of C for beta and a pass: 1056 x 1152 x 384 with a bias
     * 5.82 ms, 5.29 without.) */
    const size_t as = mxp_dtype_itemsize(acc);
    const bool in_place = c_type == acc;
    if (!in_place && m > SIZE_MAX / as / n)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_gemm: a %zu x %zu workspace is too large", m, n);
    void *w = in_place ? c : mxp_workspace_get(m * n * as); /* kept for the next call (docs/gemm.md, Workspaces) */
    const size_t ldw = in_place ? ldc : n;
    if (!w)
        return MXP_ERR_NO_MEMORY;
    if (beta != 0 && !in_place)
        copy_rows(w, acc, n, c, c_type, ldc, m, n, NULL);
    finish_ctx f = { c, c_type, acc, ldc, n, opts, { 0 }, epilogue, NULL,
                     { MXP_ROUND_NEAREST_EVEN, MXP_OVERFLOW_INF, 0, 0, NULL }, false, NULL, NULL, NULL, NULL, NULL };
    if (epilogue)
        mxp_gemm_epilogue_init(&f.epi, opts);
    if (co) {
        f.params.rounding = co->rounding;
        f.params.overflow = co->overflow;
    }
    if (!epilogue && f.params.rounding != MXP_ROUND_STOCHASTIC && !(co && co->flags))
        f.kernel = mxp_cvt_find(c_type, acc, f.params.rounding, mxp_isa_current());
    double *bias64 = NULL;
    if (epilogue && acc == MXP_F32 && (c_type == MXP_F32 || c_type == MXP_BF16) &&
        f.params.rounding == MXP_ROUND_NEAREST_EVEN && f.params.overflow == MXP_OVERFLOW_INF && !co->flags) {
        const size_t nb = !opts->bias ? 0 : opts->bias_kind == MXP_BIAS_PER_COL ? n : m;
        bias64 = nb ? mxp_malloc(nb * sizeof(double)) : NULL;
        if (!nb || bias64) {
            if (bias64)
                mxp_gemm_widen(&f.epi.bias, bias64, opts->bias, nb);
            f.f32_rows = true;
            f.bias64 = bias64;
            if (c_type == MXP_BF16)
                f.to_bf16 = mxp_cvt_find(MXP_BF16, MXP_F64, MXP_ROUND_NEAREST_EVEN, mxp_isa_current());
            if (bias64 && !opts->activation && c_type == MXP_F32 && opts->bias_kind == MXP_BIAS_PER_COL &&
                (!opts->clamp || (is_float(opts->clamp_lo) && is_float(opts->clamp_hi))))
                f.bias32 = bias_as_f32(bias64, n);
            if (f.bias32) {
                f.bias_fn = mxp_f32_finish_bias_kernel(mxp_isa_current());
                if (!f.bias_fn)
                    f.bias_fn = mxp_f32_finish_bias__scalar;
            }
            if (!f.bias32 && bias64 && !opts->activation && !opts->clamp)
                f.finish = mxp_f32_finish_kernel(mxp_isa_current());
        }
    }
    st = dcfg ? mxp_gemm_drive_direct(dcfg, m, n, k, alpha, A, B, beta, w, ldw, finish_block, &f)
              : mxp_gemm_float_drive(cfg, m, n, k, alpha, A, B, beta, w, ldw, finish_block, &f, redo);
    mxp_free(bias64);
    mxp_free((void *)f.bias32);
    if (!in_place)
        mxp_workspace_put(w);
    return st;
}

/* The configuration a gathered A of a_type takes, or NULL (mxp_gemm_gather_ok). */
static const mxp_gemm_config *gather_config(mxp_dtype a_type, mxp_dtype b_type, const mxp_gemm_opts *opts)
{
    const mxp_dtype acc = acc_for(a_type, b_type, opts);
    if (acc != MXP_F32 && acc != MXP_F64)
        return NULL;
    const mxp_gemm_config *cfg = mxp_gemm_config_for(acc, a_type, b_type, mxp_isa_current());
    return cfg && cfg->packed == a_type && mxp_gemm_config_ukernel_a(cfg) ? cfg : NULL;
}

bool mxp_gemm_gather_ok(mxp_dtype a_type, const void *b, mxp_dtype b_type, const void *c, mxp_dtype c_type,
                        const mxp_gemm_opts *opts)
{
    return mxp_dtype_is_valid(a_type) && mxp_dtype_is_valid(b_type) && mxp_dtype_is_valid(c_type) &&
           !mxp_gemm_misaligned(1, NULL, a_type, b, b_type, c, c_type) && gather_config(a_type, b_type, opts);
}

mxp_status mxp_gemm_gathered(const mxp_gemm_gather *ga, mxp_dtype a_type, mxp_trans tb, size_t m, size_t n, size_t k,
                             double alpha, const void *b, mxp_dtype b_type, size_t ldb, double beta, void *c,
                             mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts)
{
    mxp_status st = check_all(MXP_NO_TRANS, tb, m, n, k, NULL, a_type, k, b, b_type, ldb, c, c_type, ldc, opts, true);
    if (st != MXP_OK || m == 0 || n == 0)
        return st;
    const mxp_gemm_config *cfg = gather_config(a_type, b_type, opts);
    if (!cfg || mxp_gemm_misaligned(k, NULL, a_type, b, b_type, c, c_type))
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: no configuration reads a made %s A by %s B (aligned)",
                         mxp_dtype_name(a_type), mxp_dtype_name(b_type));
    if (k == 0 || alpha == 0) {
        scale_c(m, n, beta, c, c_type, ldc, opts ? &opts->convert : NULL);
        return MXP_OK;
    }
    const mxp_gemm_operand A = { NULL, a_type, k, 0, ga }, B = { b, b_type, ldb, tb == MXP_TRANS, NULL };
    const mxp_fpenv env = mxp_fpenv_enter();
    st = gemm_float(cfg, NULL, NULL, acc_for(a_type, b_type, opts), m, n, k, alpha, &A, &B, beta, c, c_type, ldc,
                    opts);
    mxp_fpenv_leave(env);
    return st;
}

static mxp_status gemm_entry(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha, const void *a,
                             mxp_dtype a_type, size_t lda, const void *b, mxp_dtype b_type, size_t ldb, double beta,
                             void *c, mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts)
{
    MXP_ABI_IN(opts, gemm_opts, "mxp_gemm");
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = gemm(ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc, opts);
    mxp_fpenv_leave(env);
    return st;
}

/* What a GEMM moves at least: A, B, and C written (read too when beta != 0). */
static double gemm_bytes(size_t m, size_t n, size_t k, mxp_dtype at, mxp_dtype bt, mxp_dtype ct, double beta)
{
    return (double)m * (double)k * (double)mxp_dtype_itemsize(at) + (double)k * (double)n * (double)mxp_dtype_itemsize(bt) +
           (beta != 0 ? 2.0 : 1.0) * (double)m * (double)n * (double)mxp_dtype_itemsize(ct);
}

mxp_status mxp_gemm(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha, const void *a,
                    mxp_dtype a_type, size_t lda, const void *b, mxp_dtype b_type, size_t ldb, double beta, void *c,
                    mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts)
{
    MXP_PROF_RETURN("gemm", gemm_bytes(m, n, k, a_type, b_type, c_type, beta), 2.0 * (double)m * (double)n * (double)k,
                    gemm_entry(ta, tb, m, n, k, alpha, a, a_type, lda, b, b_type, ldb, beta, c, c_type, ldc, opts));
}

const char *mxp_gemm_kernel_name(mxp_dtype a_type, mxp_dtype b_type, const mxp_gemm_opts *opts)
{
    MXP_ABI_IN_RET(opts, gemm_opts, "mxp_gemm_kernel_name", "invalid");
    const mxp_dtype aw = mxp_gemm_widened_type(a_type, b_type, false); /* sub-byte integers run widened */
    b_type = mxp_gemm_widened_type(b_type, a_type, true);
    a_type = aw;
    if (mxp_gemm_int8_input(a_type) || mxp_gemm_int8_input(b_type))
        return mxp_gemm_int8_kernel_name(a_type, b_type, opts);
    if (!mxp_is_float_dtype(a_type) || !mxp_is_float_dtype(b_type))
        return "invalid";
    mxp_dtype acc = acc_for(a_type, b_type, opts);
    if (acc == MXP_F16 || acc == MXP_BF16)
        return "mxp_gemm_lowp_acc"; /* the portable emulation, src/gemm/lowp-acc.c */
    if (acc != MXP_F32 && acc != MXP_F64)
        return "invalid";
    return mxp_gemm_config_for(acc, a_type, b_type, mxp_isa_current())->name;
}
