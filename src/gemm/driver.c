/* The BLIS loops, the same for every dtype: jc over NC columns of B and C,
 * pc over KC of the shared dimension (B's panel packed once), ic over MC
 * rows of A (packed, or read in place), then jr/ir over the micro-tiles.
 * The first pc step applies beta; later ones add.  Threads take a slab of
 * columns each and run these loops independently (no barrier), or, with
 * too few columns, share each step's B~ and split its rows.  A C tile is
 * always computed by one thread in the same order, so results do not
 * depend on the thread count. */
#include <stdatomic.h>
#include <string.h>

#include "core/alloc-internal.h"
#include "core/error.h"
#include "core/threads-internal.h"
#include "gemm/gemm-internal.h"
#include "mxp/alloc.h"
#include "mxp/threads.h"

enum { MAX_THREADS = 64 };

typedef struct step {
    const mxp_gemm_config *cfg;
    const mxp_gemm_operand *a;
    size_t m, jc, nc, pc, kc;
    double alpha, beta;
    const mxp_gemm_operand *b;
    unsigned char *pb;
    unsigned char *pa[MAX_THREADS];
    unsigned char *w;
    size_t ldw;
    bool last;    /* the last pc step: blocks are complete */
    bool split_n; /* threads split the columns (few rows) instead of the rows */
    bool a_in_place; /* A read where it is stored (cfg->ukernel_a), not packed */
    mxp_gemm_finish_fn finish;
    void *finish_ctx;
    atomic_bool *tiny; /* NULL: B unchecked; else set when B holds a value the kernel would flush */
} step;

/* Thread t's share of one (jc, pc) step: its rows of C, MC at a time, all
 * columns; or, with split_n (few rows), all rows and its range of NR
 * panels (each thread packs the small A itself). */
static void run_blocks(void *ctx, int t, int nthreads)
{
    const step *s = ctx;
    const mxp_gemm_config *cfg = s->cfg;
    const size_t ps = mxp_dtype_itemsize(cfg->packed), cs = mxp_dtype_itemsize(cfg->acc);
    const size_t kcp = (s->kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack; /* packed depth */
    unsigned char *pa = s->pa[t];
    size_t r0 = 0, r1 = s->m, j0 = 0, j1 = s->nc;
    if (s->split_n) { /* a contiguous range of NR panels, as equal as can be */
        const size_t panels = (s->nc + cfg->nr - 1) / cfg->nr;
        j0 = panels * (size_t)t / (size_t)nthreads * cfg->nr;
        j1 = panels * (size_t)(t + 1) / (size_t)nthreads * cfg->nr;
        j1 = j1 < s->nc ? j1 : s->nc;
        if (j0 >= j1)
            return;
    } else { /* a contiguous range of rows, as equal as MR allows */
        const size_t panels = (s->m + cfg->mr - 1) / cfg->mr;
        r0 = panels * (size_t)t / (size_t)nthreads * cfg->mr;
        r1 = t + 1 == nthreads ? s->m : panels * (size_t)(t + 1) / (size_t)nthreads * cfg->mr;
    }
    const size_t lda = s->a->ld;
    for (size_t ic = r0; ic < r1; ic += cfg->mc) {
        size_t mc = r1 - ic < cfg->mc ? r1 - ic : cfg->mc;
        if (!s->a_in_place)
            mxp_gemm_pack_a(cfg, s->a, ic, mc, s->pc, s->kc, pa);
        for (size_t jr = j0; jr < j1; jr += cfg->nr) {
            size_t nr = j1 - jr < cfg->nr ? j1 - jr : cfg->nr;
            const unsigned char *bp = s->pb + jr * kcp * ps;
            for (size_t ir = 0; ir < mc; ir += cfg->mr) {
                size_t mr = mc - ir < cfg->mr ? mc - ir : cfg->mr;
                unsigned char *c = s->w + ((ic + ir) * s->ldw + s->jc + jr) * cs;
                if (s->a_in_place)
                    cfg->ukernel_a(mr, nr, kcp, s->a->base + ((ic + ir) * lda + s->pc) * ps, lda, bp, c, s->ldw,
                                   s->alpha, s->beta);
                else
                    cfg->ukernel(mr, nr, kcp, pa + ir * kcp * ps, bp, c, s->ldw, s->alpha, s->beta);
            }
        }
        if (s->last && s->finish) /* the finished block, while in cache, by this thread */
            s->finish(s->finish_ctx, ic, mc, s->jc + j0, j1 - j0, s->w + (ic * s->ldw + s->jc + j0) * cs, s->ldw);
    }
}

/* Packs the (jc, pc) step's B~ (or this thread's share of it), checked for
 * values the kernel cannot take when s->tiny is set; false when the
 * product is abandoned: a value was found, here or by another thread. */
static bool pack_b_checked(const step *s, const mxp_gemm_operand *b, size_t j0, size_t nc, unsigned char *pb)
{
    if (mxp_gemm_pack_b(s->cfg, b, s->pc, s->kc, j0, nc, pb, s->tiny != NULL))
        atomic_store_explicit(s->tiny, true, memory_order_relaxed);
    return !(s->tiny && atomic_load_explicit(s->tiny, memory_order_relaxed));
}

/* Thread t's share of packing B for one (jc, pc) step. */
static void pack_b_share(void *ctx, int t, int nthreads)
{
    const step *s = ctx;
    const mxp_gemm_config *cfg = s->cfg;
    const size_t ps = mxp_dtype_itemsize(cfg->packed);
    const size_t kcp = (s->kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack;
    /* a contiguous range of panels per thread: rows of B are read in runs */
    const size_t panels = (s->nc + cfg->nr - 1) / cfg->nr;
    const size_t first = panels * (size_t)t / (size_t)nthreads, end = panels * (size_t)(t + 1) / (size_t)nthreads;
    if (first < end) {
        const size_t j0 = first * cfg->nr, j1 = end * cfg->nr < s->nc ? end * cfg->nr : s->nc;
        (void)pack_b_checked(s, s->b, s->jc + j0, j1 - j0, s->pb + j0 * kcp * ps); /* the caller looks at s->tiny */
    }
}

/* Threads pay off from a few million multiply-adds, each with at least
 * two MR panels of rows, or (split_n) two NR panels of columns when the
 * rows are too few to share. */
static int threads_for(const mxp_gemm_config *cfg, size_t m, size_t n, size_t k, bool *split_n)
{
    int t = mxp_get_num_threads();
    const size_t row_shares = (m + 2 * cfg->mr - 1) / (2 * cfg->mr);
    const size_t col_shares = (n + 2 * cfg->nr - 1) / (2 * cfg->nr);
    if ((double)m * (double)n * (double)k < 4e6)
        t = 1;
    *split_n = t > 1 && row_shares < (size_t)t && col_shares > row_shares;
    const size_t shares = *split_n ? col_shares : row_shares;
    if ((size_t)t > shares)
        t = (int)shares;
    return t < 1 ? 1 : t > MAX_THREADS ? MAX_THREADS : t;
}

/* The jc and pc loops over columns j0 .. j1 on one thread: B packed into
 * s->pb, then the blocks (run_blocks as thread 0 of 1). */
static void serial_loops(step *s, const mxp_gemm_operand *b, size_t j0, size_t j1, size_t k, double beta)
{
    const mxp_gemm_config *cfg = s->cfg;
    for (size_t jc = j0; jc < j1; jc += cfg->nc) {
        s->jc = jc;
        s->nc = j1 - jc < cfg->nc ? j1 - jc : cfg->nc;
        for (size_t pc = 0; pc < k; pc += cfg->kc) {
            s->pc = pc;
            s->kc = k - pc < cfg->kc ? k - pc : cfg->kc;
            s->beta = pc == 0 ? beta : 1.0;
            s->last = pc + s->kc >= k;
            if (!pack_b_checked(s, b, jc, s->nc, s->pb))
                return;
            run_blocks(s, 0, 1);
        }
    }
}

/* Slabs: each thread an independent GEMM on its own range of columns (whole
 * NR panels), packing its own B~ (pb[t]): no barrier between packing and
 * multiplying, so one thread's packing (memory bound) overlaps the other's
 * multiply-adds. */
typedef struct slabs {
    step base; /* pa[t]: thread t's A~ */
    size_t n, k;
    double beta;
    unsigned char *pb[MAX_THREADS];
} slabs;

static void run_slab(void *ctx, int t, int nthreads)
{
    const slabs *S = ctx;
    const size_t nr = S->base.cfg->nr, panels = (S->n + nr - 1) / nr;
    const size_t j0 = panels * (size_t)t / (size_t)nthreads * nr;
    size_t j1 = panels * (size_t)(t + 1) / (size_t)nthreads * nr;
    j1 = j1 < S->n ? j1 : S->n;
    if (j0 >= j1)
        return;
    step s = S->base;
    s.pa[0] = S->base.pa[t];
    s.pb = S->pb[t];
    serial_loops(&s, s.b, j0, j1, S->k, S->beta);
}

/* How a configuration runs one product: the threads, how they share it,
 * and the buffers, in one block of `bytes`. */
typedef struct plan {
    int nthreads;
    bool split_n, use_slabs, a_in_place;
    int buffers_a, buffers_b;
    size_t a_bytes, b_bytes, bytes;
} plan;

static plan plan_for(const mxp_gemm_config *cfg, size_t m, size_t n, size_t k, const mxp_gemm_operand *a)
{
    plan p = { 0 };
    const size_t as = mxp_dtype_itemsize(cfg->packed);
    const size_t kc_max = (k < cfg->kc ? k : cfg->kc) + cfg->kpack - 1;
    const size_t mc_max = (m < cfg->mc ? (m + cfg->mr - 1) / cfg->mr * cfg->mr : cfg->mc);
    p.nthreads = threads_for(cfg, m, n, k, &p.split_n);
    /* Slabs of columns, one per thread, when each gets at least two NR
     * panels (measured, two threads: 256^3 f32 0.78 -> 0.98x oneDNN, 512^3
     * 0.74 -> 0.95x, M = 128, N = K = 4096 0.51-0.85 -> 0.99x; one panel
     * each loses at N = 64).  Otherwise the threads share one B~ and split
     * the rows (or, with few rows, the columns) of every (jc, pc) step. */
    const size_t panels = (n + cfg->nr - 1) / cfg->nr;
    p.use_slabs = p.nthreads > 1 && panels >= 2 * (size_t)p.nthreads;
    const size_t width = p.use_slabs ? (panels + (size_t)p.nthreads - 1) / (size_t)p.nthreads * cfg->nr : n;
    const size_t nc_max = (width < cfg->nc ? (width + cfg->nr - 1) / cfg->nr * cfg->nr : cfg->nc);
    /* A in place when stored in the packed dtype with k contiguous, and k
     * fills whole k-groups (an odd k's last bf16 pair needs a zero).  Only
     * when at most 1024 columns reuse each A block: packing it costs in
     * proportion to the few columns that reuse it (256^3 f32: 5% of the
     * time, 1024^3: 2%), while from 1536 on, reading A's rows in place
     * loses 1-2% (measured). */
    p.a_in_place = cfg->ukernel_a && a->dtype == cfg->packed && !a->trans && k % cfg->kpack == 0 && width <= 1024;
    p.buffers_b = p.use_slabs ? p.nthreads : 1;
    p.buffers_a = p.a_in_place ? 0 : p.nthreads;
    p.b_bytes = (nc_max * kc_max * as + 63) / 64 * 64;
    p.a_bytes = (mc_max * kc_max * as + 63) / 64 * 64;
    p.bytes = (size_t)p.buffers_b * p.b_bytes + (size_t)p.buffers_a * p.a_bytes;
    return p;
}

/* One product by plan p in block; with tiny set, B checked while packed
 * and the product abandoned on a find (then *tiny is true). */
static void run_plan(const plan *p, step s, size_t n, size_t k, unsigned char *block, atomic_bool *tiny)
{
    const mxp_gemm_config *cfg = s.cfg;
    const double beta = s.beta;
    slabs S;
    memset(&S, 0, sizeof S);
    for (int t = 0; t < p->buffers_b; t++)
        S.pb[t] = block + (size_t)t * p->b_bytes;
    for (int t = 0; t < p->buffers_a; t++)
        s.pa[t] = block + (size_t)p->buffers_b * p->b_bytes + (size_t)t * p->a_bytes;
    s.pb = S.pb[0];
    s.split_n = p->split_n && !p->use_slabs;
    s.a_in_place = p->a_in_place;
    s.tiny = tiny;
    if (p->use_slabs) {
        S.base = s;
        S.n = n;
        S.k = k;
        S.beta = beta;
        mxp_parallel(p->nthreads, run_slab, &S);
        return;
    }
    if (p->nthreads == 1) {
        serial_loops(&s, s.b, 0, n, k, beta);
        return;
    }
    for (size_t jc = 0; jc < n; jc += cfg->nc) {
        s.jc = jc;
        s.nc = n - jc < cfg->nc ? n - jc : cfg->nc;
        for (size_t pc = 0; pc < k; pc += cfg->kc) {
            s.pc = pc;
            s.kc = k - pc < cfg->kc ? k - pc : cfg->kc;
            s.beta = pc == 0 ? beta : 1.0;
            s.last = pc + s.kc >= k;
            /* both phases split by thread; tiles never shared */
            mxp_parallel(p->nthreads, pack_b_share, &s);
            if (tiny && atomic_load_explicit(tiny, memory_order_relaxed))
                return;
            mxp_parallel(p->nthreads, run_blocks, &s);
        }
    }
}

mxp_status mxp_gemm_drive_finish(const mxp_gemm_config *cfg, size_t m, size_t n, size_t k, double alpha,
                                 const mxp_gemm_operand *a, const mxp_gemm_operand *b, double beta, void *w,
                                 size_t ldw, mxp_gemm_finish_fn finish, void *finish_ctx,
                                 const mxp_gemm_config *redo)
{
    const plan p = plan_for(cfg, m, n, k, a);
    plan p_redo = p;
    if (redo)
        p_redo = plan_for(redo, m, n, k, a);
    /* All the buffers in one block, a workspace kept between calls (and
     * between calls of other libraries): allocated afresh, glibc gave the
     * freed pages back to the kernel and every call faulted them in again
     * (two threads at 256^3: 4% of the time; docs/gemm.md, Workspaces).
     * Large enough for a redo too: once C is written, nothing may fail. */
    unsigned char *block = mxp_workspace_get(p.bytes > p_redo.bytes ? p.bytes : p_redo.bytes);
    if (!block)
        return MXP_ERR_NO_MEMORY;
    step s = { cfg, a, m, 0, 0, 0, 0, alpha, beta, b, NULL, { NULL }, w, ldw, false, false, false,
               finish, finish_ctx, NULL };
    atomic_bool tiny;
    atomic_init(&tiny, false);
    run_plan(&p, s, n, k, block, redo ? &tiny : NULL);
    if (redo && atomic_load_explicit(&tiny, memory_order_relaxed)) { /* all of it again, from the start */
        s.cfg = redo;
        run_plan(&p_redo, s, n, k, block, NULL);
    }
    mxp_workspace_put(block);
    return MXP_OK;
}

/* ---- small M: B read in place --------------------------------------------- */


typedef struct direct_step {
    const mxp_gemm_direct_config *cfg;
    const mxp_gemm_config *pack_cfg; /* A's packing as a configuration of this MR */
    const mxp_gemm_operand *a, *b;
    size_t m, n, k;
    double alpha, beta;
    unsigned char *pa[MAX_THREADS]; /* each thread's A~: ceil(m / MR) panels of KC x MR */
    unsigned char *w;
    size_t ldw;
    mxp_gemm_finish_fn finish;
    void *finish_ctx;
} direct_step;

/* Thread t's strips of columns, all of k: A packed by each thread for
 * itself (a few rows: cheap), so that the threads never wait for each
 * other. */
static void run_direct(void *ctx, int t, int nthreads)
{
    const direct_step *s = ctx;
    const mxp_gemm_direct_config *cfg = s->cfg;
    const size_t cs = mxp_dtype_itemsize(cfg->acc), ps = mxp_dtype_itemsize(cfg->packed);
    const size_t strips = (s->n + cfg->nr - 1) / cfg->nr;
    const size_t j0 = strips * (size_t)t / (size_t)nthreads * cfg->nr;
    size_t j1 = strips * (size_t)(t + 1) / (size_t)nthreads * cfg->nr;
    j1 = j1 < s->n ? j1 : s->n;
    if (j0 >= j1)
        return;
    /* rank-`step` updates: that many rows of B across all of this thread's strips,
     * so that B streams along its rows (strip by strip over all KC rows
     * would walk B down its columns); C stays in L2 */
    const size_t rank = s->m > cfg->mr ? cfg->step_multi : cfg->step;
    const size_t m = s->m, mr_max = cfg->mr, nr_max = cfg->nr, ldb = s->b->ld, ldw = s->ldw;
    const mxp_gemm_direct_fn ukernel = cfg->ukernel;
    unsigned char *pa = s->pa[t], *w = s->w;
    for (size_t pc = 0; pc < s->k; pc += cfg->kc) {
        const size_t kc = s->k - pc < cfg->kc ? s->k - pc : cfg->kc;
        const size_t kcp = (kc + cfg->kpack - 1) / cfg->kpack * cfg->kpack;
        const unsigned char *b = s->b->base + pc * ldb * ps;
        mxp_gemm_pack_a(s->pack_cfg, s->a, 0, m, pc, kc, pa);
        for (size_t p = 0; p < kc; p += rank) {
            const size_t sub = kc - p < rank ? kc - p : rank;
            const double beta = pc == 0 && p == 0 ? s->beta : 1.0;
            for (size_t jr = j0; jr < j1; jr += nr_max) {
                const size_t nr = j1 - jr < nr_max ? j1 - jr : nr_max;
                /* the next strip's rows of B, from memory, while this one
                 * is multiplied: B's rows are sub separate streams, more
                 * than the prefetchers follow (M = 16, N = K = 4096: f32
                 * and f64 +9%; one strip ahead beat two and three) */
                if (jr + nr_max < j1)
                    for (size_t r = 0; r < sub; r++) {
                        const unsigned char *row = b + ((p + r) * ldb + jr + nr_max) * ps;
                        for (size_t o = 0; o < nr_max * ps; o += 64)
                            __builtin_prefetch(row + o, 0, 3);
                    }
                for (size_t ir = 0; ir < m; ir += mr_max) {
                    const size_t mr = m - ir < mr_max ? m - ir : mr_max;
                    ukernel(mr, nr, sub, pa + (ir * kcp + p * mr_max) * ps, b + (p * ldb + jr) * ps, ldb,
                            w + (ir * ldw + jr) * cs, ldw, s->alpha, beta);
                }
            }
        }
    }
    if (s->finish)
        s->finish(s->finish_ctx, 0, s->m, j0, j1 - j0, s->w + j0 * cs, s->ldw);
}

mxp_status mxp_gemm_drive_direct(const mxp_gemm_direct_config *cfg, size_t m, size_t n, size_t k, double alpha,
                                 const mxp_gemm_operand *a, const mxp_gemm_operand *b, double beta, void *w,
                                 size_t ldw, mxp_gemm_finish_fn finish, void *finish_ctx)
{
    const size_t ps = mxp_dtype_itemsize(cfg->packed), mrp = (m + cfg->mr - 1) / cfg->mr * cfg->mr;
    const size_t kc_max = k < cfg->kc ? k : cfg->kc;
    const size_t kcp_max = (kc_max + cfg->kpack - 1) / cfg->kpack * cfg->kpack;
    /* A's packing as a configuration of this MR (converting A exactly) */
    const mxp_gemm_config pack_cfg = { cfg->name, cfg->acc, cfg->packed, cfg->kpack, cfg->isa, cfg->mr, cfg->nr,
                                       mrp, kc_max, cfg->nr, NULL, NULL };
    int nthreads = mxp_get_num_threads();
    const size_t strips = (n + cfg->nr - 1) / cfg->nr;
    if ((double)m * (double)n * (double)k < 4e6)
        nthreads = 1;
    if ((size_t)nthreads > (strips + 1) / 2)
        nthreads = (int)((strips + 1) / 2);
    nthreads = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : nthreads;
    direct_step s = { cfg, &pack_cfg, a, b, m, n, k, alpha, beta, { NULL }, w, ldw, finish, finish_ctx };
    const size_t a_bytes = (mrp * kcp_max * ps + 63) / 64 * 64;
    unsigned char *block = mxp_workspace_get((size_t)nthreads * a_bytes); /* see mxp_gemm_drive_finish */
    if (!block)
        return MXP_ERR_NO_MEMORY;
    for (int t = 0; t < nthreads; t++)
        s.pa[t] = block + (size_t)t * a_bytes;
    if (nthreads > 1)
        mxp_parallel(nthreads, run_direct, &s);
    else
        run_direct(&s, 0, 1);
    mxp_workspace_put(block);
    return MXP_OK;
}
