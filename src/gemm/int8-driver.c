/* Integer GEMM below the API: configurations, the
 * zero-point corrections (row and column sums) and the BLIS loops, as in
 * driver.c: jc over NC columns, pc over KC (B packed once per step, split
 * across threads), ic over MC rows (each thread its own blocks), then
 * jr/ir over micro-tiles.  The first pc step initializes the sums with the
 * corrections, the last one hands each finished block to job->finish.
 * Integer sums do not depend on their order, so neither do the results on
 * the thread count.  Packing is in int8-pack.c. */
#include <string.h>

#include "core/alloc-internal.h"
#include "core/threads-internal.h"
#include "gemm/int8-internal.h"
#include "kernels/gemm-kernels.h"
#include "kernels/gemv-kernels.h"
#include "mxp/alloc.h"
#include "mxp/cpu.h"
#include "mxp/threads.h"

enum { MAX_THREADS = 64 };

/* Blocks for a core with 32 KiB L1d and 1 MiB L2 (Zen 4), measured: an A
 * micro-panel MR x KC (8 KiB) stays in L1 while the B micro-panel KC x NR
 * (48 KiB) streams from L2, the A block MC x KC (192 KiB) stays in L2, the
 * B block KC x NC (4 MiB) in L3.  KC = 1024 beats 512: C is read and
 * written once per KC.  From 1025 rows of C on (deep_m), KC = 2048 with
 * MC = 96: 2048^3 0.98 -> 0.99-1.00x oneDNN (C read and written half as
 * often), where it cost M = 16 and 128 (N = K = 4096) 1-5% (its 8 MiB B
 * block); integer sums do not depend on KC.  NC = 4032 rather than 2016:
 * A is packed once per NC columns (2048^3: 0.95 -> 1.00x oneDNN, M = 128:
 * +2%).
 *
 * AVX2 (Zen 3: 32 KiB L1d, 512 KiB L2), panels of int16: the B micro-panel
 * KC x NR (32 KiB) is reused by the 16 A micro-panels of an MC x KC block
 * (192 KiB, in L2).  KC = 1024 beats 512 by 4% at 1024^3 (C read and
 * written once); MC 48-192 and NC 2016 or 4032 are within noise. */
static const mxp_u8s8_gemm_config configs[] = {
#if MXP_HAVE_X86_KERNELS
    { "u8s8_gemm_8x48__avx512vnni", MXP_ISA_AVX512BF16, 4, 8, 48, 192, 1024, 4032, 1025,
      mxp_u8s8_gemm_ukernel_8x48__avx512vnni, mxp_u8s8_gemm_ukernel_8x48_a__avx512vnni },
    { "u8s8_gemm_6x16__avx2", MXP_ISA_AVX2, 2, 6, 16, 96, 1024, 2016, 0, mxp_u8s8_gemm_ukernel_6x16__avx2, NULL },
#endif
    { "u8s8_gemm_4x8__scalar", MXP_ISA_SCALAR, 4, 4, 8, 64, 256, 1024, 0, mxp_u8s8_gemm_ukernel_4x8__scalar, NULL },
};

const mxp_u8s8_gemm_config *mxp_u8s8_gemm_config_for(mxp_isa isa)
{
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
        if (configs[i].isa <= isa)
            return &configs[i]; /* listed most capable first */
    return &configs[sizeof configs / sizeof configs[0] - 1];
}

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* ---- the corrections: row_off[i] + col_off[j] ---------------------------- */

/* sums[l] += element (l, p) over p < len, modulo 2^32, of `lines` lines of
 * bytes: line l at base + l * ld when contiguous, else element p of every
 * line at base + p * ld.  Bytes read as int8, or as uint8 after xor. */
static void line_sums(const uint8_t *base, size_t ld, bool contiguous, bool is_signed, uint8_t flip, size_t lines,
                      size_t len, uint32_t *sums)
{
#if MXP_HAVE_X86_KERNELS
    if (contiguous && mxp_isa_current() >= MXP_ISA_AVX512) {
        mxp_s8_line_sums__avx512f(base, ld, lines, len, is_signed, flip, sums);
        return;
    }
#endif
    memset(sums, 0, lines * sizeof *sums);
    for (size_t x = 0; x < (contiguous ? lines : len); x++) {
        const uint8_t *row = base + x * ld;
        if (contiguous) {
            uint32_t s = 0;
            for (size_t p = 0; p < len; p++)
                s += is_signed ? (uint32_t)(int32_t)(int8_t)row[p] : (uint32_t)(uint8_t)(row[p] ^ flip);
            sums[x] = s;
        } else {
            for (size_t l = 0; l < lines; l++)
                sums[l] += is_signed ? (uint32_t)(int32_t)(int8_t)row[l] : (uint32_t)(uint8_t)(row[l] ^ flip);
        }
    }
}

static int32_t wrap_s32(uint32_t x)
{
    return x <= INT32_MAX ? (int32_t)x : -(int32_t)~x - 1;
}

/* row_off (m) and col_off (n), see int8-internal.h; sums only where a zero
 * point needs them. */
static void corrections(const mxp_int8_job *job, int32_t *row_off, int32_t *col_off)
{
    const int32_t za = job->a.dtype == MXP_S8 ? job->a_zero + 128 : job->a_zero, zb = job->b_zero;
    const uint32_t kzz = (uint32_t)((int64_t)job->k * za * zb);
    uint32_t *sums = (uint32_t *)row_off; /* computed in place */
    if (zb != 0)
        line_sums(job->a.base, job->a.ld, !job->a.trans, false, job->a.dtype == MXP_S8 ? 0x80 : 0, job->m, job->k,
                  sums);
    for (size_t i = 0; i < job->m; i++)
        row_off[i] = wrap_s32(kzz - (zb != 0 ? (uint32_t)zb * sums[i] : 0));
    sums = (uint32_t *)col_off;
    if (za != 0)
        line_sums(job->b.base, job->b.ld, job->b.trans, true, 0, job->n, job->k, sums);
    for (size_t j = 0; j < job->n; j++)
        col_off[j] = wrap_s32(za != 0 ? 0u - (uint32_t)za * sums[j] : 0);
}

/* ---- the loops ------------------------------------------------------------- */

typedef struct step {
    const mxp_u8s8_gemm_config *cfg;
    const mxp_int8_job *job;
    size_t mc_step, kc_step, jc, nc, pc, kc;
    bool first, last;
    bool split_n; /* threads split the columns (few rows) instead of the rows */
    bool a_in_place; /* uint8 A read where it is stored (cfg->ukernel_a), not packed */
    int8_t *pb;
    uint8_t *pa[MAX_THREADS];
    const int32_t *row_off, *col_off;
    int32_t *w;       /* sum (i, j) at w[i * ldw + j - wcol] */
    size_t ldw, wcol;
} step;

/* The step that splits `total` into as few blocks of at most `block` as
 * it can, all about the same size (no thin last one), rounded up to a
 * multiple of `unit` (block is one). */
static size_t even_block(size_t total, size_t block, size_t unit)
{
    const size_t count = (total + block - 1) / block;
    return ((total + count - 1) / count + unit - 1) / unit * unit;
}

/* Thread t's share of one (jc, pc) step: a contiguous range of rows (equal
 * to within MR) in MC blocks of about the same size, all columns; or, with
 * split_n (few rows), all rows and a range of NR panels.  On the last pc
 * step each block, complete, goes to job->finish while in cache. */
static void run_blocks(void *ctx, int t, int nthreads)
{
    const step *s = ctx;
    const mxp_u8s8_gemm_config *cfg = s->cfg;
    const mxp_int8_job *job = s->job;
    const size_t kcp = (s->kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack;
    uint8_t *pa = s->pa[t];
    size_t r0 = 0, r1 = job->m, j0 = 0, j1 = s->nc;
    if (s->split_n) {
        const size_t panels = (s->nc + cfg->nr - 1) / cfg->nr;
        j0 = panels * (size_t)t / (size_t)nthreads * cfg->nr;
        j1 = min_size(panels * (size_t)(t + 1) / (size_t)nthreads * cfg->nr, s->nc);
    } else {
        const size_t panels = (job->m + cfg->mr - 1) / cfg->mr;
        r0 = panels * (size_t)t / (size_t)nthreads * cfg->mr;
        r1 = t + 1 == nthreads ? job->m : panels * (size_t)(t + 1) / (size_t)nthreads * cfg->mr;
    }
    if (r0 >= r1 || j0 >= j1)
        return;
    const size_t mc_step = even_block(r1 - r0, s->mc_step, cfg->mr);
    for (size_t ic = r0; ic < r1; ic += mc_step) {
        const size_t mc = min_size(mc_step, r1 - ic);
        int32_t *wb = s->w + ic * s->ldw + (s->jc - s->wcol);
        if (!s->a_in_place)
            mxp_int8_pack_a(cfg, &job->a, ic, mc, s->pc, s->kc, pa);
        for (size_t jr = j0; jr < j1; jr += cfg->nr) {
            const size_t nr = min_size(cfg->nr, j1 - jr);
            const int8_t *bp = s->pb + mxp_int8_panel_bytes(cfg, jr, s->kc);
            for (size_t ir = 0; ir < mc; ir += cfg->mr) {
                const size_t mr = min_size(cfg->mr, mc - ir);
                int32_t *c = wb + ir * s->ldw + jr;
                const int32_t *ro = s->first ? s->row_off + ic + ir : NULL, *co = s->first ? s->col_off + s->jc + jr : NULL;
                if (s->a_in_place)
                    cfg->ukernel_a(mr, nr, kcp, job->a.base + (ic + ir) * job->a.ld + s->pc, job->a.ld, bp, c, s->ldw,
                                   ro, co);
                else
                    cfg->ukernel(mr, nr, kcp, pa + mxp_int8_panel_bytes(cfg, ir, s->kc), bp, c, s->ldw, ro, co);
            }
        }
        if (s->last && job->finish)
            job->finish(job->finish_ctx, ic, mc, s->jc + j0, j1 - j0, wb + j0, s->ldw);
    }
}

/* Thread t's share of packing B for one (jc, pc) step: a contiguous range
 * of NR panels. */
static void pack_b_share(void *ctx, int t, int nthreads)
{
    const step *s = ctx;
    const size_t nr = s->cfg->nr;
    const size_t panels = (s->nc + nr - 1) / nr;
    const size_t first = panels * (size_t)t / (size_t)nthreads, end = panels * (size_t)(t + 1) / (size_t)nthreads;
    if (first < end) {
        const size_t j0 = first * nr, j1 = min_size(end * nr, s->nc);
        mxp_int8_pack_b(s->cfg, &s->job->b, s->pc, s->kc, s->jc + j0, j1 - j0,
                        s->pb + mxp_int8_panel_bytes(s->cfg, j0, s->kc));
    }
}

/* Threads pay off from a few million multiply-adds, each with at least
 * two MR panels of rows, or (split_n) two NR panels of columns when the
 * rows are too few to share. */
static int threads_for(const mxp_u8s8_gemm_config *cfg, const mxp_int8_job *job, bool *split_n)
{
    int t = job->max_threads;
    const size_t row_shares = (job->m + 2 * cfg->mr - 1) / (2 * cfg->mr);
    const size_t col_shares = (job->n + 2 * cfg->nr - 1) / (2 * cfg->nr);
    if ((double)job->m * (double)job->n * (double)job->k < 4e6)
        t = 1;
    *split_n = t > 1 && row_shares < (size_t)t && col_shares > row_shares;
    const size_t shares = *split_n ? col_shares : row_shares;
    if ((size_t)t > shares)
        t = (int)shares;
    return t < 1 ? 1 : t > MAX_THREADS ? MAX_THREADS : t;
}

/* M = 1 (one token): B streamed once from the caller's memory, no packing.
 * x = A - za in int16, y = x B exactly modulo 2^32, minus zb * sum(x). */
static bool int8_gemv(const mxp_int8_job *job, mxp_status *st)
{
#if MXP_HAVE_X86_KERNELS
    if (mxp_isa_current() < MXP_ISA_AVX512 || job->b.dtype != MXP_S8)
        return false;
    const size_t n = job->n, k = job->k, n32 = (n + 31) / 32 * 32;
    int16_t *x = mxp_workspace_get(k * sizeof *x); /* kept between calls */
    int32_t *y = mxp_workspace_get(n32 * sizeof *y);
    if (!x || !y) {
        mxp_workspace_put(x);
        mxp_workspace_put(y);
        *st = MXP_ERR_NO_MEMORY;
        return true;
    }
    const bool u8 = job->a.dtype == MXP_U8;
    const size_t a_step = job->a.trans ? job->a.ld : 1; /* along the one row of op(A) */
    uint32_t sum = 0;
    for (size_t p = 0; p < k; p++) {
        const unsigned char *e = job->a.base + p * a_step;
        const int32_t v = (u8 ? (int32_t)*e : (int32_t)(int8_t)*e) - job->a_zero; /* |v| <= 255 + 128 */
        x[p] = (int16_t)v;
        sum += (uint32_t)v;
    }
    mxp_gemm_gemv_run(-2, job->b.trans, k, n, x, job->b.base, job->b.ld, 1, y);
    const uint32_t corr = (uint32_t)job->b_zero * sum;
    int32_t *w = job->w ? job->w : y;
    for (size_t j = 0; j < n; j++)
        w[j] = (int32_t)((uint32_t)y[j] - corr);
    if (job->finish)
        job->finish(job->finish_ctx, 0, 1, 0, n, w, n);
    mxp_workspace_put(x);
    mxp_workspace_put(y);
    *st = MXP_OK;
    return true;
#else
    (void)job; (void)st;
    return false;
#endif
}

/* The jc and pc loops over columns j0 .. j1 on one thread (thread 0 of 1
 * in run_blocks): B packed into s->pb, NC columns at a time, the sums of
 * each NC block in s->w (C, or a workspace of one block). */
static void serial_loops(step *s, size_t j0, size_t j1, bool workspace)
{
    const mxp_u8s8_gemm_config *cfg = s->cfg;
    const size_t k = s->job->k, kc_step = s->kc_step;
    const size_t nc_step = even_block(j1 - j0, cfg->nc, cfg->nr);
    for (size_t jc = j0; jc < j1; jc += nc_step) {
        s->jc = jc;
        s->nc = min_size(nc_step, j1 - jc);
        s->wcol = workspace ? jc : 0;
        for (size_t pc = 0; pc < k; pc += kc_step) {
            s->pc = pc;
            s->kc = min_size(kc_step, k - pc);
            s->first = pc == 0;
            s->last = pc + s->kc == k;
            pack_b_share(s, 0, 1);
            run_blocks(s, 0, 1);
        }
    }
}

/* Slabs: each thread an independent GEMM on its range of columns (whole NR
 * panels) with its own B~, A~ and workspace, without barriers (as in
 * driver.c). */
typedef struct slabs {
    step base;
    int8_t *pb[MAX_THREADS];
    int32_t *ws[MAX_THREADS];
} slabs;

static void run_slab(void *ctx, int t, int nthreads)
{
    const slabs *S = ctx;
    const size_t nr = S->base.cfg->nr, n = S->base.job->n, panels = (n + nr - 1) / nr;
    const size_t j0 = panels * (size_t)t / (size_t)nthreads * nr;
    const size_t j1 = min_size(panels * (size_t)(t + 1) / (size_t)nthreads * nr, n);
    if (j0 >= j1)
        return;
    step s = S->base;
    s.pa[0] = S->base.pa[t];
    s.pb = S->pb[t];
    if (S->ws[t]) { /* sums into this thread's workspace, a block of its columns wide */
        s.w = S->ws[t];
        s.ldw = min_size(j1 - j0, even_block(j1 - j0, s.cfg->nc, nr));
    }
    serial_loops(&s, j0, j1, S->ws[t] != NULL);
}

mxp_status mxp_int8_gemm_drive(const mxp_u8s8_gemm_config *cfg, const mxp_int8_job *job)
{
    mxp_status gst = MXP_OK;
    if (job->m == 1 && int8_gemv(job, &gst))
        return gst;
    const size_t m = job->m, n = job->n, k = job->k;
    bool split_n = false;
    const int nthreads = threads_for(cfg, job, &split_n);
    /* a slab of columns per thread when each gets at least two NR panels
     * (as in driver.c) */
    const size_t panels = (n + cfg->nr - 1) / cfg->nr;
    const bool use_slabs = nthreads > 1 && panels >= 2 * (size_t)nthreads;
    const size_t width = use_slabs ? (panels + (size_t)nthreads - 1) / (size_t)nthreads * cfg->nr : n;
    const bool deep = cfg->deep_m && m >= cfg->deep_m;
    const size_t kc_step = even_block(k, deep ? 2 * cfg->kc : cfg->kc, cfg->kpack);
    /* at least any thread's widest NC block (even_block(x, NC, NR) <= NC and
     * <= x rounded up to NR, but not monotonic in x) */
    const size_t nc_max = min_size(cfg->nc, (width + cfg->nr - 1) / cfg->nr * cfg->nr);
    /* each thread splits its rows in blocks of at most this (a multiple of MR) */
    const size_t mc_step = min_size(deep ? cfg->mc / 2 : cfg->mc, (m + cfg->mr - 1) / cfg->mr * cfg->mr);
    slabs S;
    memset(&S, 0, sizeof S);
    step s;
    memset(&s, 0, sizeof s);
    s.cfg = cfg;
    s.job = job;
    s.mc_step = mc_step;
    s.kc_step = kc_step;
    s.split_n = split_n && !use_slabs;
    /* uint8 A in place (no flip, k contiguous in whole quads) when few
     * columns reuse each packed block, as in driver.c (measured, one
     * thread: 256^3 +5%, 512^3 +2%, 1024^3 +1%, 2048^3 -1%) */
    s.a_in_place = cfg->ukernel_a && job->a.dtype == MXP_U8 && !job->a.trans && k % 4 == 0 && width <= 1024;
    const int shared = use_slabs ? nthreads : 1; /* B~ and workspaces */
    /* every buffer in one block, a workspace kept between calls (see
     * driver.c: allocated afresh, glibc trimmed the freed pages and every
     * call faulted them in again) */
    const int a_buffers = s.a_in_place ? 0 : nthreads;
    const size_t off_bytes = ((m + n) * sizeof(int32_t) + 63) / 64 * 64;
    const size_t b_bytes = (mxp_int8_panel_bytes(cfg, nc_max, kc_step) + 63) / 64 * 64;
    const size_t ws_bytes = job->w ? 0 : (m * nc_max * sizeof(int32_t) + 63) / 64 * 64;
    const size_t a_bytes = (mxp_int8_panel_bytes(cfg, mc_step, kc_step) + 63) / 64 * 64;
    unsigned char *block =
        mxp_workspace_get(off_bytes + (size_t)shared * (b_bytes + ws_bytes) + (size_t)a_buffers * a_bytes);
    const bool ok = block != NULL;
    int32_t *off = (int32_t *)(void *)block;
    for (int t = 0; t < shared && ok; t++) {
        unsigned char *mine = block + off_bytes + (size_t)t * (b_bytes + ws_bytes);
        S.pb[t] = (int8_t *)mine;
        S.ws[t] = job->w ? NULL : (int32_t *)(void *)(mine + b_bytes);
    }
    for (int t = 0; t < a_buffers && ok; t++)
        s.pa[t] = block + off_bytes + (size_t)shared * (b_bytes + ws_bytes) + (size_t)t * a_bytes;
    if (ok) {
        corrections(job, off, off + m);
        s.row_off = off;
        s.col_off = off + m;
        s.w = job->w ? job->w : S.ws[0];
        s.ldw = job->w ? job->ldw : min_size(n, nc_max);
        s.pb = S.pb[0];
    }
    if (ok && use_slabs) {
        S.base = s;
        mxp_parallel(nthreads, run_slab, &S);
    } else if (ok && nthreads == 1) {
        serial_loops(&s, 0, n, !job->w);
    } else if (ok) {
        const size_t nc_step = even_block(n, cfg->nc, cfg->nr);
        for (size_t jc = 0; jc < n; jc += nc_step) {
            s.jc = jc;
            s.nc = min_size(nc_step, n - jc);
            s.wcol = job->w ? 0 : jc;
            for (size_t pc = 0; pc < k; pc += kc_step) {
                s.pc = pc;
                s.kc = min_size(kc_step, k - pc);
                s.first = pc == 0;
                s.last = pc + s.kc == k;
                /* both phases split by thread; tiles never shared */
                mxp_parallel(nthreads, pack_b_share, &s);
                mxp_parallel(nthreads, run_blocks, &s);
            }
        }
    }
    mxp_workspace_put(block);
    return ok ? MXP_OK : MXP_ERR_NO_MEMORY;
}
