/* Integer GEMM, mxp_gemm's path for uint8 or int8 A by int8 B (docs/gemm.md,
 * "Integer GEMM"): the checks that only integer inputs have, the
 * zero-point corrections (row and column sums) and the M = 1 shortcut, the
 * int32 sums from the driver (src/gemm/driver.c: the first KC step adds
 * the corrections) and their finish into C (src/gemm/int8-finish.c).
 * Integer sums do not depend on their order, so neither do the results on
 * the thread count. */
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "core/alloc-internal.h"
#include "core/error.h"
#include "gemm/driver.h"
#include "gemm/int8-internal.h"
#include "mxp/alloc.h"
#include "mxp/threads.h"

static bool is_int8(mxp_dtype t)
{
    return t == MXP_U8 || t == MXP_S8;
}

bool mxp_gemm_int8_input(mxp_dtype t)
{
    return is_int8(t);
}

mxp_status mxp_gemm_int8_check_types(mxp_dtype at, mxp_dtype bt, mxp_dtype ct)
{
    if (!is_int8(at) && !is_int8(bt)) {
        if (mxp_is_float_dtype(ct))
            return MXP_OK;
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: C is %s but A and B are %s and %s; an integer C needs "
                         "uint8 or int8 A and int8 B", mxp_dtype_name(ct), mxp_dtype_name(at), mxp_dtype_name(bt));
    }
    if (!is_int8(at) || bt != MXP_S8)
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: A is %s and B is %s; integer GEMM multiplies uint8 or int8 "
                         "A by int8 B (floating A and B otherwise)", mxp_dtype_name(at), mxp_dtype_name(bt));
    if (!mxp_is_float_dtype(ct) && !is_int8(ct) && ct != MXP_S32)
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: C is %s; integer GEMM writes int32, int8, uint8 or a "
                         "floating C", mxp_dtype_name(ct));
    return MXP_OK;
}

/* The configuration for an m x n x k product: the level's, but the AMX
 * tiles pad k to 64 and n to 32, and on narrow products the VNNI kernel of
 * the level below was faster (Intel Xeon 6/0xa7, one thread, M = 4096:
 * N x K = 16 x 16 187 against 51 GOPS, 16 x 144 460 / 292, 32 x 144 634 /
 * 562; 32 x 288 631 / 800, 64 x 576 613 / 1431).  Integer sums give the
 * same bits either way. */
static const mxp_gemm_config *int8_config(mxp_dtype at, mxp_dtype bt, size_t n, size_t k)
{
    const mxp_gemm_config *cfg = mxp_gemm_config_for(MXP_S32, at, bt, mxp_isa_current());
    if (cfg->kpack == 64 && (k < 256 || n < 32))
        cfg = mxp_gemm_config_for(MXP_S32, at, bt, (mxp_isa)(cfg->isa - 1));
    return cfg;
}

/* Whether every byte of op(A) (m x k uint8, lda apart) is below 128,
 * read eight at a time, stopping at the first that is not. */
static bool below_128(const uint8_t *a, size_t lda, bool trans, size_t m, size_t k)
{
    const size_t lines = trans ? k : m, len = trans ? m : k; /* stored lines */
    for (size_t l = 0; l < lines; l++) {
        const uint8_t *row = a + l * lda;
        uint64_t any = 0;
        size_t p = 0;
        for (; p + 8 <= len; p += 8) {
            uint64_t w;
            memcpy(&w, row + p, 8);
            any |= w;
        }
        for (; p < len; p++)
            any |= row[p];
        if (any & 0x8080808080808080u)
            return false;
    }
    return true;
}

/* The K-pair kernel's level takes the K-quad kernel of vpmaddubsw
 * (u8s8-gemm-a7, u8s8-gemm-list.inc) where no int16 sum of a pair of
 * products can saturate: the same sums, faster (docs/gemm.md, "Narrow
 * operands").  That holds
 * - for uint8 A below 128 (7-bit activations), seen by a pass over A;
 * - for B whose every K-pair has |b0| + |b1| <= 128 (7-bit weights, as
 *   oneDNN asks of them without VNNI, or any narrower spread), whatever A
 *   holds (uint8, or int8 with its top bit flipped): 255 * 128 = 32640 <
 *   32767.  A wide pair in B's first SCAN_B_CORNER rows and columns
 *   settles it (full-range weights have one there).  Then, where the
 *   first attempt's writes do not count (can_redo: beta == 0, no
 *   counters), B is checked while it is packed and, at the first wide
 *   pair, the product starts over with the K-pair kernel (*redo);
 *   otherwise by a pass over B that stops at the first wide pair, from
 *   SCAN_B_ROWS rows of C on: run to its end it reads B once more (M =
 *   128, N = K = 4096: ~4% of the call).
 * M = 1 takes the GEMV and never asks. */
enum { SCAN_B_ROWS = 64, SCAN_B_CORNER = 64 };

static const mxp_gemm_config *quads_config(const mxp_gemm_config *cfg, const mxp_gemm_operand *a,
                                           const mxp_gemm_operand *b, size_t m, size_t n, size_t k, bool can_redo,
                                           const mxp_gemm_config **redo)
{
    *redo = NULL;
    if (cfg->kpack != 2 || m < 2)
        return cfg;
    const mxp_gemm_config *a7 = mxp_gemm_config_a7_for(mxp_isa_current());
    if (!a7 || a7->isa < cfg->isa)
        return cfg;
    if (a->dtype == MXP_U8 && below_128(a->base, a->ld, a->trans, m, k))
        return a7;
    /* a corner of B first: full-range weights show a wide pair there at
     * once, and take the K-pair kernel without a start-over (which would
     * compute the zero points' sums twice) */
    const mxp_s8_scan_fn scan = mxp_s8_scan_kernel(mxp_isa_current());
    const size_t corner = SCAN_B_CORNER;
    if (scan((const int8_t *)b->base, b->ld, b->trans, k < corner ? k : corner, n < corner ? n : corner))
        return cfg;
    if (can_redo) {
        *redo = cfg;
        return a7;
    }
    if (m >= SCAN_B_ROWS && !scan((const int8_t *)b->base, b->ld, b->trans, k, n))
        return a7;
    return cfg;
}

const char *mxp_gemm_int8_kernel_name(mxp_dtype at, mxp_dtype bt, const mxp_gemm_opts *opts)
{
    if (!is_int8(at) || bt != MXP_S8 || (opts && opts->acc_dtype && opts->acc_dtype != MXP_S32))
        return "invalid";
    return mxp_gemm_config_for(MXP_S32, at, bt, mxp_isa_current())->name;
}

/* ---- checks ------------------------------------------------------------------ */

static bool has_epilogue(const mxp_gemm_opts *o)
{
    return o->bias || o->bias_kind || o->activation || o->clamp;
}

/* The largest K for which no sum of K products (A - za)(B - zb) can leave
 * int32, whatever A and B hold: (2^31 - 1) / (dA dB), dA and dB the largest
 * distances from the zero points to the ends of the types' ranges. */
static int64_t span(mxp_dtype at, int32_t za, int32_t zb)
{
    const int64_t alo = at == MXP_U8 ? 0 : -128, ahi = at == MXP_U8 ? 255 : 127;
    const int64_t da = za - alo > ahi - za ? za - alo : ahi - za;
    const int64_t db = zb + 128 > 127 - zb ? zb + 128 : 127 - zb;
    return da * db;
}

static size_t k_limit(mxp_dtype at, int32_t za, int32_t zb)
{
    return (size_t)(INT32_MAX / span(at, za, zb));
}

static mxp_status check_zero_point(const char *name, int32_t z, int32_t lo, int32_t hi, mxp_dtype t)
{
    if (z < lo || z > hi)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: %s = %d is outside %s's range [%d, %d]", name, (int)z,
                         mxp_dtype_name(t), (int)lo, (int)hi);
    return MXP_OK;
}

/* A's per-row parameters (mxp_gemm_opts.a_zero_points, a_scales): zero
 * points in A's range (a_zero_point 0), finite scales whose products with
 * the column scales stay within float32; *kmax lowered to the least K
 * limit of the rows' zero points. */
static mxp_status check_a_rows(size_t m, mxp_dtype at, const mxp_gemm_opts *o, size_t *kmax)
{
    const bool ua = at == MXP_U8;
    if (o->a_zero_points && o->a_zero_point != 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: a_zero_point = %d with a_zero_points: row i's zero "
                         "point is a_zero_points[i] (a_zero_point must be 0)", (int)o->a_zero_point);
    for (size_t i = 0; o->a_zero_points && i < m; i++) {
        const int32_t z = o->a_zero_points[i];
        if (z < (ua ? 0 : -128) || z > (ua ? 255 : 127))
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: a_zero_points[%zu] = %d is outside %s's range "
                             "[%d, %d]", i, (int)z, mxp_dtype_name(at), ua ? 0 : -128, ua ? 255 : 127);
        const size_t lim = k_limit(at, z, o->b_zero_point);
        *kmax = lim < *kmax ? lim : *kmax;
    }
    double amax = 0, smax = 1;
    for (size_t i = 0; o->a_scales && i < m; i++) {
        if (!isfinite(o->a_scales[i]))
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: a_scales[%zu] = %g is not finite", i,
                             (double)o->a_scales[i]);
        amax = fmax(amax, fabs((double)o->a_scales[i]));
    }
    for (size_t j = 0; o->a_scales && o->scales && j < o->n_scales; j++)
        smax = j == 0 ? fabs((double)o->scales[0]) : fmax(smax, fabs((double)o->scales[j]));
    if (o->a_scales && amax * smax > FLT_MAX)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: a_scales times scales reach %g, beyond float32 (the "
                         "scale of C[i][j] is float32(a_scales[i] * scales[j]))", amax * smax);
    return MXP_OK;
}

static mxp_status check_int8(size_t m, size_t n, size_t k, double alpha, mxp_dtype at, double beta, mxp_dtype ct,
                             const mxp_gemm_opts *o)
{
    const bool ua = at == MXP_U8;
    mxp_status st = check_zero_point("a_zero_point", o->a_zero_point, ua ? 0 : -128, ua ? 255 : 127, at);
    if (st == MXP_OK)
        st = check_zero_point("b_zero_point", o->b_zero_point, -128, 127, MXP_S8);
    if (st == MXP_OK && is_int8(ct))
        st = check_zero_point("c_zero_point", o->c_zero_point, ct == MXP_U8 ? 0 : -128, ct == MXP_U8 ? 255 : 127, ct);
    if (st != MXP_OK)
        return st;
    if (!is_int8(ct) && o->c_zero_point != 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: c_zero_point = %d, but C is %s; only int8/uint8 C has "
                         "a zero point", (int)o->c_zero_point, mxp_dtype_name(ct));
    if (ct == MXP_S32) {
        if (alpha != 1 || (beta != 0 && beta != 1))
            return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: int32 C holds the exact sums: alpha must be 1 and beta "
                             "0 or 1 (got alpha %g, beta %g)", alpha, beta);
        if (o->scales || o->a_scales)
            return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: %s need an int8/uint8 or floating C; int32 C holds "
                             "the unscaled sums", o->scales ? "scales" : "a_scales");
        if (has_epilogue(o))
            return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: the epilogue (bias, activation, clamp) needs an "
                             "int8/uint8 or floating C; int32 C holds the exact sums");
    } else if (!mxp_is_float_dtype(ct) && beta != 0) {
        return mxp_error(MXP_ERR_UNSUPPORTED, "mxp_gemm: beta = %g, but %s C is only written (requantized): beta "
                         "must be 0", beta, mxp_dtype_name(ct));
    }
    if (!o->scales && o->n_scales != 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: n_scales = %zu but scales is NULL", o->n_scales);
    if (o->scales && o->n_scales != 1 && o->n_scales != n)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: n_scales = %zu: give 1 scale (per tensor) or n = %zu "
                         "(one per column of C)", o->n_scales, n);
    for (size_t j = 0; o->scales && j < o->n_scales; j++)
        if (!isfinite(o->scales[j]))
            return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_gemm: scales[%zu] = %g is not finite", j,
                             (double)o->scales[j]);
    size_t kmax = k_limit(at, o->a_zero_point, o->b_zero_point);
    if ((st = check_a_rows(m, at, o, &kmax)) != MXP_OK)
        return st;
    if (k > kmax)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_gemm: k = %zu is beyond %zu, the most for which int32 sums of "
                         "(A - a_zero_point)(B - b_zero_point) cannot overflow with zero points %d and %d", k, kmax,
                         (int)o->a_zero_point, (int)o->b_zero_point);
    return MXP_OK;
}


/* ---- the corrections: row_off[i] + col_off[j] ---------------------------- */

/* sums[l] += element (l, p) over p < len, modulo 2^32, of `lines` lines of
 * bytes: line l at base + l * ld when contiguous (a kernel), else element
 * p of every line at base + p * ld.  Bytes read as int8, or as uint8 after
 * xor. */
static void line_sums(const uint8_t *base, size_t ld, bool contiguous, bool is_signed, uint8_t flip, size_t lines,
                      size_t len, uint32_t *sums)
{
    if (contiguous) {
        mxp_s8_sum_lines_kernel(mxp_isa_current())(base, ld, lines, len, is_signed, flip, sums);
        return;
    }
    memset(sums, 0, lines * sizeof *sums);
    for (size_t p = 0; p < len; p++) {
        const uint8_t *row = base + p * ld;
        for (size_t l = 0; l < lines; l++)
            sums[l] += is_signed ? (uint32_t)(int32_t)(int8_t)row[l] : (uint32_t)(uint8_t)(row[l] ^ flip);
    }
}


/* The product and what its micro-tile needs: the configuration, and the
 * corrections (m of row_off, then n of col_off; see int8-internal.h),
 * computed in the driver's workspace once it is there. */
typedef struct int8_kernel {
    const mxp_gemm_config *cfg;
    mxp_u8s8_gemm_ukernel_a_fn ukernel_a;
    size_t m, n, k;
    const mxp_gemm_operand *a, *b;
    int32_t a_zero, b_zero; /* as the user gave them */
    const int32_t *row_off, *col_off;
    mxp_int8_b_cache *cache; /* NULL: B packed step by step */
    const uint32_t *b_sums;  /* NULL, or B's column sums, kept with its panels */
} int8_kernel;

static void corrections(void *kernel, void *extra)
{
    int8_kernel *K = kernel;
    int32_t *row_off = extra, *col_off = row_off + K->m;
    const int32_t za = K->a->dtype == MXP_S8 ? K->a_zero + 128 : K->a_zero, zb = K->b_zero;
    const uint32_t kzz = (uint32_t)((int64_t)K->k * za * zb);
    uint32_t *sums = (uint32_t *)row_off; /* computed in place */
    if (zb != 0)
        line_sums(K->a->base, K->a->ld, !K->a->trans, false, K->a->dtype == MXP_S8 ? 0x80 : 0, K->m, K->k, sums);
    for (size_t i = 0; i < K->m; i++)
        row_off[i] = mxp_wrap_s32(kzz - (zb != 0 ? (uint32_t)zb * sums[i] : 0));
    sums = (uint32_t *)col_off;
    if (za != 0 && K->b_sums)
        memcpy(sums, K->b_sums, K->n * sizeof *sums);
    else if (za != 0)
        line_sums(K->b->base, K->b->ld, K->b->trans, true, 0, K->n, K->k, sums);
    for (size_t j = 0; j < K->n; j++)
        col_off[j] = mxp_wrap_s32(za != 0 ? 0u - (uint32_t)za * sums[j] : 0);
    K->row_off = row_off;
    K->col_off = col_off;
}

/* ---- the driver's context ------------------------------------------------- */

static void tile(const void *kernel, size_t i, size_t j, size_t mr, size_t nr, size_t kcp, const void *a, size_t lda,
                 const void *b, void *c, size_t ldc, bool first)
{
    const int8_kernel *K = kernel;
    const int32_t *ro = first ? K->row_off + i : NULL, *co = first ? K->col_off + j : NULL;
    if (lda)
        K->ukernel_a(mr, nr, kcp, a, lda, b, c, ldc, ro, co);
    else
        K->cfg->ukernel_s32(mr, nr, kcp, a, b, c, ldc, ro, co);
}

static void pack_a(const void *kernel, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0, size_t kc,
                   void *dst)
{
    mxp_int8_pack_a(((const int8_kernel *)kernel)->cfg, a, i0, mc, p0, kc, dst);
}

static bool pack_b(const void *kernel, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0, size_t nc,
                   void *dst, bool check)
{
    return mxp_int8_pack_b(((const int8_kernel *)kernel)->cfg, b, p0, kc, j0, nc, dst, check);
}

/* The blocks for K's configuration: KC split evenly into whole K-groups
 * (integer sums do not depend on where), from deep_m rows on half the MC
 * and twice the KC (the table's comments). */
static void loops_init(mxp_gemm_loops *L, int8_kernel *K, int32_t *w, size_t ldw, mxp_gemm_finish_fn finish,
                       void *finish_ctx, int max_threads)
{
    const mxp_gemm_config *cfg = K->cfg;
    const bool deep = cfg->deep_m && K->m >= cfg->deep_m;
    mxp_gemm_loops_init(L, cfg, K->m, K->n, K->k, K->a, K->b, w, ldw, finish, finish_ctx);
    L->kernel = K;
    L->tile = tile;
    L->pack_a = pack_a;
    L->pack_b = pack_b;
    L->release = mxp_gemm_config_release(cfg);
    /* uint8 A in place: no flip, k contiguous in whole K-groups */
    L->a_in_place = K->ukernel_a && K->a->dtype == MXP_U8 && !K->a->trans && K->k % cfg->kpack == 0;
    L->mc = deep ? cfg->mc / 2 : cfg->mc;
    L->kc = mxp_gemm_even_block(K->k, deep ? 2 * cfg->kc : cfg->kc, cfg->kpack);
    L->even = true;
    L->extra_bytes = (K->m + K->n) * sizeof(int32_t);
    L->prepare = corrections;
    L->max_threads = max_threads;
}

/* ---- M = 1 ----------------------------------------------------------------- */

/* M = 1 (one token): B streamed once from the caller's memory, no packing.
 * x = A - za in int16, y = x B exactly modulo 2^32, minus zb * sum(x).
 * w: C itself (int32, beta 0), or NULL for a workspace and finish. */
static bool int8_gemv(const int8_kernel *K, int32_t *w, mxp_gemm_finish_fn finish, void *finish_ctx, mxp_status *st)
{
    const mxp_gemv_kernel g = { NULL, 0, NULL, mxp_s16s8_gemv_kernel(mxp_isa_current()) };
    if (!g.s16s8 || K->b->dtype != MXP_S8)
        return false;
    const size_t n = K->n, k = K->k, n32 = (n + 31) / 32 * 32;
    int16_t *x = mxp_workspace_get(k * sizeof *x); /* kept between calls */
    int32_t *y = mxp_workspace_get(n32 * sizeof *y);
    if (!x || !y) {
        mxp_workspace_put(x);
        mxp_workspace_put(y);
        *st = MXP_ERR_NO_MEMORY;
        return true;
    }
    const bool u8 = K->a->dtype == MXP_U8;
    const size_t a_step = K->a->trans ? K->a->ld : 1; /* along the one row of op(A) */
    uint32_t sum = 0;
    for (size_t p = 0; p < k; p++) {
        const unsigned char *e = K->a->base + p * a_step;
        const int32_t v = (u8 ? (int32_t)*e : (int32_t)(int8_t)*e) - K->a_zero; /* |v| <= 255 + 128 */
        x[p] = (int16_t)v;
        sum += (uint32_t)v;
    }
    mxp_gemm_gemv_run(&g, K->b->trans, k, n, x, K->b->base, K->b->ld, 1, y);
    const uint32_t corr = (uint32_t)K->b_zero * sum;
    w = w ? w : y;
    for (size_t j = 0; j < n; j++)
        w[j] = (int32_t)((uint32_t)y[j] - corr);
    if (finish)
        finish(finish_ctx, 0, 1, 0, n, w, n);
    mxp_workspace_put(x);
    mxp_workspace_put(y);
    *st = MXP_OK;
    return true;
}

/* ---- B packed once (mxp_int8_b_cache) ----------------------------------------- */

enum { B_CACHE_SLOTS = 4 };

/* B~ of a whole product for one kernel and blocking, and B's column sums. */
typedef struct packed_b {
    const mxp_gemm_config *cfg;
    size_t n, k, kc, ldb;
    bool trans;
    uint32_t *sums;        /* n: line_sums of B's columns, as corrections() takes them */
    unsigned char *panels; /* mxp_gemm_pack_b_all */
} packed_b;

struct mxp_int8_b_cache {
    const void *b;
    _Atomic(packed_b *) slot[B_CACHE_SLOTS];
};

static _Thread_local mxp_int8_b_cache *bound_cache;

mxp_int8_b_cache *mxp_int8_b_cache_new(const void *b)
{
    mxp_int8_b_cache *c = mxp_malloc(sizeof *c);
    if (!c)
        return NULL;
    c->b = b;
    for (int i = 0; i < B_CACHE_SLOTS; i++)
        atomic_init(&c->slot[i], NULL);
    return c;
}

static void packed_b_free(packed_b *pk)
{
    if (pk) {
        mxp_free(pk->sums);
        mxp_free(pk->panels);
        mxp_free(pk);
    }
}

void mxp_int8_b_cache_free(mxp_int8_b_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < B_CACHE_SLOTS; i++)
        packed_b_free(atomic_load_explicit(&c->slot[i], memory_order_acquire));
    mxp_free(c);
}

mxp_int8_b_cache *mxp_int8_b_cache_bind(mxp_int8_b_cache *c)
{
    mxp_int8_b_cache *before = bound_cache;
    bound_cache = c;
    return before;
}

static bool packed_b_fits(const packed_b *pk, const mxp_gemm_loops *L, const int8_kernel *K)
{
    return pk->cfg == K->cfg && pk->n == L->n && pk->k == L->k && pk->kc == L->kc && pk->ldb == K->b->ld &&
           pk->trans == K->b->trans;
}

/* The kept B~ for L (K's kernel), built and kept in a free slot when there
 * is none (*temporary: kept nowhere, the caller frees it: the slots were
 * full); NULL without memory. */
static packed_b *cached_b(mxp_int8_b_cache *c, const mxp_gemm_loops *L, const int8_kernel *K, bool *temporary)
{
    *temporary = false;
    for (int i = 0; i < B_CACHE_SLOTS; i++) {
        packed_b *pk = atomic_load_explicit(&c->slot[i], memory_order_acquire);
        if (pk && packed_b_fits(pk, L, K))
            return pk;
    }
    packed_b *pk = mxp_malloc(sizeof *pk);
    if (!pk)
        return NULL;
    *pk = (packed_b){ K->cfg, L->n, L->k, L->kc, K->b->ld, K->b->trans, mxp_malloc(L->n * sizeof(uint32_t)),
                      mxp_malloc(mxp_gemm_packed_b_bytes(L)) };
    if (!pk->sums || !pk->panels) {
        packed_b_free(pk);
        return NULL;
    }
    mxp_gemm_pack_b_all(L, pk->panels);
    line_sums(K->b->base, K->b->ld, K->b->trans, true, 0, K->n, K->k, pk->sums);
    for (int i = 0; i < B_CACHE_SLOTS; i++) {
        packed_b *empty = NULL;
        if (atomic_compare_exchange_strong_explicit(&c->slot[i], &empty, pk, memory_order_acq_rel,
                                                    memory_order_acquire))
            return pk;
        if (packed_b_fits(empty, L, K)) { /* another thread kept the same first */
            packed_b_free(pk);
            return empty;
        }
    }
    *temporary = true;
    return pk;
}

/* The sums into w (C itself, or NULL: a workspace) and finish; redo
 * (NULL: none) the configuration to start over with where K's vpmaddubsw
 * kernel meets a wide pair of B (quads_config). */
static mxp_status sums(int8_kernel *K, const mxp_gemm_config *redo, int32_t *w, size_t ldw,
                       mxp_gemm_finish_fn finish, void *finish_ctx, int max_threads)
{
    mxp_status st = MXP_OK;
    if (K->m == 1 && int8_gemv(K, w, finish, finish_ctx, &st))
        return st;
    mxp_gemm_loops L, L_redo;
    loops_init(&L, K, w, ldw, finish, finish_ctx, max_threads);
    if (!redo) {
        bool temporary = false;
        packed_b *pk = K->cache ? cached_b(K->cache, &L, K, &temporary) : NULL;
        if (pk) {
            L.b_packed = pk->panels;
            K->b_sums = pk->sums;
        }
        st = mxp_gemm_drive(&L, NULL);
        if (temporary)
            packed_b_free(pk);
        return st;
    }
    int8_kernel R = *K;
    R.cfg = redo;
    R.ukernel_a = mxp_gemm_config_ukernel_a_s32(redo);
    loops_init(&L_redo, &R, w, ldw, finish, finish_ctx, max_threads);
    return mxp_gemm_drive(&L, &L_redo);
}

/* ---- the entry ------------------------------------------------------------- */

mxp_status mxp_gemm_int8(mxp_trans ta, mxp_trans tb, size_t m, size_t n, size_t k, double alpha, const void *a,
                         mxp_dtype a_type, size_t lda, const void *b, mxp_dtype b_type, size_t ldb, double beta,
                         void *c, mxp_dtype c_type, size_t ldc, const mxp_gemm_opts *opts)
{
    static const mxp_gemm_opts defaults;
    const mxp_gemm_opts *o = opts ? opts : &defaults;
    mxp_status st = check_int8(m, n, k, alpha, a_type, beta, c_type, o);
    if (st != MXP_OK || m == 0 || n == 0)
        return st;
    if (m > SIZE_MAX / sizeof(int32_t) / n)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_gemm: a %zu x %zu int32 workspace is too large", m, n);
    const bool skip = k == 0 || (alpha == 0 && c_type != MXP_S32); /* the sums are 0; A and B unread */
    const mxp_gemm_operand A = { a, a_type, lda, ta == MXP_TRANS, NULL }, B = { b, b_type, ldb, tb == MXP_TRANS, NULL };
    const mxp_gemm_config *redo = NULL;
    const bool can_redo = beta == 0 && !o->convert.flags; /* the first attempt's writes do not count */
    const mxp_gemm_config *cfg = skip ? int8_config(a_type, b_type, n, k)
                                      : quads_config(int8_config(a_type, b_type, n, k), &A, &B, m, n, k, can_redo,
                                                     &redo);
    /* a cache bound to this thread for this B (mxp_int8_b_cache_bind) */
    mxp_int8_b_cache *cache = bound_cache && bound_cache->b == b && !skip ? bound_cache : NULL;
    int8_kernel K = { cfg, mxp_gemm_config_ukernel_a_s32(cfg), m, n, k, &A, &B, o->a_zero_point, o->b_zero_point,
                      NULL, NULL, cache, NULL };
    /* the counters are not shared between threads */
    const int max_threads = o->convert.flags ? 1 : mxp_get_num_threads();
    const bool row_zps = o->a_zero_points != NULL;
    if (c_type == MXP_S32 && beta == 0 && !skip && !row_zps) /* the sums go straight into C */
        return sums(&K, redo, c, ldc, NULL, NULL, max_threads);
    mxp_int8_finish f;
    st = mxp_int8_finish_init(&f, o, c_type, c, ldc, n, alpha, beta);
    if (st != MXP_OK)
        return st;
    mxp_int8_finish_bound(&f, (double)k * (double)span(a_type, o->a_zero_point, o->b_zero_point));
    int32_t *b_sums = NULL;
    if (row_zps && !skip) { /* the sums with zero points 0 less a_zero_points[i] sum_k (B[k][j] - zb) */
        if (!(b_sums = mxp_malloc(n * sizeof *b_sums))) {
            mxp_int8_finish_release(&f);
            return MXP_ERR_NO_MEMORY;
        }
        line_sums(B.base, B.ld, B.trans, true, 0, n, k, (uint32_t *)b_sums);
        const uint32_t kzb = (uint32_t)((int64_t)k * o->b_zero_point);
        for (size_t j = 0; j < n; j++)
            b_sums[j] = mxp_wrap_s32((uint32_t)b_sums[j] - kzb);
        f.b_sums = b_sums;
    }
    if (skip) { /* every row reads the same n zeros */
        int32_t *zeros = mxp_malloc(n * sizeof *zeros);
        st = zeros ? MXP_OK : MXP_ERR_NO_MEMORY;
        if (zeros) {
            memset(zeros, 0, n * sizeof *zeros);
            mxp_int8_finish_block(&f, 0, m, 0, n, zeros, 0);
        }
        mxp_free(zeros);
    } else {
        st = sums(&K, redo, NULL, 0, mxp_int8_finish_block, &f, max_threads);
    }
    mxp_free(b_sums);
    mxp_int8_finish_release(&f);
    return st;
}
