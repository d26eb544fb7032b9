/* The BLIS loops, the same for every dtype: jc over NC columns of B and C,
 * pc over KC of the shared dimension (B's panel packed once), ic over MC
 * rows of A (packed, or read in place), then jr/ir over the micro-tiles.
 * What changes with the dtype comes from the context (driver.h): the
 * packers, the micro-tile (the first pc step applies beta, or adds the
 * integer corrections; later ones add), the element sizes and the block
 * policy.  Threads take a slab of columns each and run these loops
 * independently (no barrier), or, with too few columns, share each step's
 * B~ and split its rows.  A C tile is always computed by one thread in the
 * same order, so results do not depend on the thread count. */
#include <stdatomic.h>
#include <stdint.h>

#include "core/alloc-internal.h"
#include "core/threads-internal.h"
#include "gemm/driver.h"
#include "mxp/alloc.h"
#include "mxp/threads.h"

enum { MAX_THREADS = 64 };

static size_t min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

static size_t round_up(size_t x, size_t unit)
{
    return (x + unit - 1) / unit * unit;
}

/* Bytes of packed panels `width` lines wide holding kc values of k, padded
 * to whole k-groups. */
static size_t panel_bytes(const mxp_gemm_loops *L, size_t width, size_t kc)
{
    return width * round_up(kc, L->kpack) * L->packed_size;
}

typedef struct step {
    const mxp_gemm_loops *L;
    size_t mc_step;          /* the most rows of a block (before evening) */
    size_t jc, nc, pc, kc;
    bool last;               /* the last pc step: blocks are complete */
    bool split_n;            /* threads split the columns (few rows) instead of the rows */
    bool a_in_place;         /* A read where it is stored, not packed */
    bool a_packed;           /* A~ (one MC block: all rows) already packed for this pc */
    unsigned char *pb;
    unsigned char *pa[MAX_THREADS];
    unsigned char *w;        /* sum (i, j) at w + (i * ldw + j - wcol) * w_size */
    size_t ldw, wcol;
    atomic_bool *tiny;       /* NULL: B unchecked; else set when B holds a value the kernel cannot take */
} step;

/* The most bytes of B~ a thread's share of a step may hold for the AMX
 * tiles to run row panels outer (3/4 of the Xeon's 2 MiB L2: each row panel
 * sweeps them all). */
enum { ROWS_OUTER_B_BYTES = 1536 * 1024 };

/* Thread t's share of one (jc, pc) step: a contiguous range of rows (equal
 * to within MR), MC at a time, all columns; or, with split_n (few rows),
 * all rows and a range of NR panels (each thread packs the small A
 * itself).  On the last pc step each block, complete, goes to finish while
 * in cache. */
static void run_blocks(void *ctx, int t, int nthreads)
{
    const step *s = ctx;
    const mxp_gemm_loops *L = s->L;
    const size_t kcp = round_up(s->kc, L->kpack), ps = L->packed_size, ws = L->w_size;
    unsigned char *pa = s->pa[t];
    size_t r0 = 0, r1 = L->m, j0 = 0, j1 = s->nc;
    if (s->split_n) /* a contiguous range of NR panels, as equal as can be */
        mxp_share_range(s->nc, L->nr, t, nthreads, &j0, &j1);
    else /* a contiguous range of rows, as equal as MR allows */
        mxp_share_range(L->m, L->mr, t, nthreads, &r0, &r1);
    if (r0 >= r1 || j0 >= j1)
        return;
    const size_t mc_step = L->even ? mxp_gemm_even_block(r1 - r0, s->mc_step, L->mr) : s->mc_step;
    const size_t lda = L->a->ld;
    for (size_t ic = r0; ic < r1; ic += mc_step) {
        const size_t mc = min_size(mc_step, r1 - ic);
        unsigned char *wb = s->w + (ic * s->ldw + s->jc - s->wcol) * ws;
        if (!s->a_in_place && !s->a_packed)
            L->pack_a(L->kernel, L->a, ic, mc, s->pc, s->kc, pa);
        /* the tiles (ir, jr) in one order or the other (L->rows_outer, while the B~ panels the
           row panels sweep stay in L2) */
        const bool rows_outer = L->rows_outer && kcp * (j1 - j0) * ps <= ROWS_OUTER_B_BYTES;
        const size_t n_outer = rows_outer ? mc : j1, step_outer = rows_outer ? L->mr : L->nr;
        const size_t n_inner = rows_outer ? j1 : mc, step_inner = rows_outer ? L->nr : L->mr;
        for (size_t o = rows_outer ? 0 : j0; o < n_outer; o += step_outer)
            for (size_t q = rows_outer ? j0 : 0; q < n_inner; q += step_inner) {
                const size_t ir = rows_outer ? o : q, jr = rows_outer ? q : o;
                const size_t mr = min_size(L->mr, mc - ir), nr = min_size(L->nr, j1 - jr);
                const unsigned char *bp = s->pb + jr * kcp * ps;
                unsigned char *c = wb + (ir * s->ldw + jr) * ws;
                if (s->a_in_place)
                    L->tile(L->kernel, ic + ir, s->jc + jr, mr, nr, kcp, L->a->base + ((ic + ir) * lda + s->pc) * ps,
                            lda, bp, c, s->ldw, s->pc == 0);
                else
                    L->tile(L->kernel, ic + ir, s->jc + jr, mr, nr, kcp, pa + ir * kcp * ps, 0, bp, c, s->ldw,
                            s->pc == 0);
            }
        if (s->last && L->finish)
            L->finish(L->finish_ctx, ic, mc, s->jc + j0, j1 - j0, wb + j0 * ws, s->ldw);
    }
    if (L->release)
        L->release();
}

/* Where B~ packed before the call (L->b_packed) holds the panels of step
 * pc's columns from j0 (a multiple of NR): every KC step's panels of all
 * N columns (NR-padded) in turn, a step's NR panels side by side
 * (mxp_gemm_pack_b_all). */
static unsigned char *packed_b_at(const mxp_gemm_loops *L, size_t pc, size_t j0)
{
    const size_t kc = min_size(L->kc, L->k - pc);
    return (unsigned char *)(uintptr_t)L->b_packed + pc / L->kc * panel_bytes(L, round_up(L->n, L->nr), L->kc) +
           panel_bytes(L, j0, kc);
}

size_t mxp_gemm_packed_b_bytes(const mxp_gemm_loops *L)
{
    const size_t steps = (L->k + L->kc - 1) / L->kc, last = L->k - (steps - 1) * L->kc;
    return (steps - 1) * panel_bytes(L, round_up(L->n, L->nr), L->kc) + panel_bytes(L, round_up(L->n, L->nr), last);
}

void mxp_gemm_pack_b_all(const mxp_gemm_loops *L, void *dst)
{
    mxp_gemm_loops at = *L;
    at.b_packed = dst;
    for (size_t pc = 0; pc < L->k; pc += L->kc)
        (void)L->pack_b(L->kernel, L->b, pc, min_size(L->kc, L->k - pc), 0, L->n, packed_b_at(&at, pc, 0), false);
}

/* Packs B~ for columns j0 .. j0+nc of the (jc, pc) step into pb, checked
 * when s->tiny is set; false when the product is abandoned: a value was
 * found, here or by another thread. */
static bool pack_b_checked(const step *s, size_t j0, size_t nc, unsigned char *pb)
{
    const mxp_gemm_loops *L = s->L;
    if (L->pack_b(L->kernel, L->b, s->pc, s->kc, j0, nc, pb, s->tiny != NULL))
        atomic_store_explicit(s->tiny, true, memory_order_relaxed);
    return !(s->tiny && atomic_load_explicit(s->tiny, memory_order_relaxed));
}

/* Thread t's share of packing B for one (jc, pc) step: a contiguous range
 * of NR panels, so that rows of B are read in runs. */
static void pack_b_share(void *ctx, int t, int nthreads)
{
    const step *s = ctx;
    size_t j0, j1;
    mxp_share_range(s->nc, s->L->nr, t, nthreads, &j0, &j1);
    if (j0 < j1)
        (void)pack_b_checked(s, s->jc + j0, j1 - j0, s->pb + panel_bytes(s->L, j0, s->kc)); /* the caller looks at tiny */
}

/* One (jc, pc) step's bounds. */
static void set_step(step *s, size_t jc, size_t nc, size_t pc)
{
    const mxp_gemm_loops *L = s->L;
    s->jc = jc;
    s->nc = nc;
    s->pc = pc;
    s->kc = min_size(L->kc, L->k - pc);
    s->last = pc + s->kc >= L->k;
}

/* The NC step over columns j0 .. j1. */
static size_t nc_step(const mxp_gemm_loops *L, size_t j0, size_t j1)
{
    return L->even ? mxp_gemm_even_block(j1 - j0, L->nc, L->nr) : L->nc;
}

/* Bytes of B~ packed at a time when the rows are few (below). */
enum { FEW_ROWS_B_BYTES = 512 * 1024 };

/* The jc and pc loops over columns j0 .. j1 on one thread: B packed into
 * s->pb, then the blocks (run_blocks as thread 0 of 1); a workspace (no w)
 * holds one NC block.  With one MC block of rows, each B~ panel serves only
 * that block's few tiles, right after it is packed: a whole NC block of B~
 * (f32: 4 MiB) went out to L3 between its packing and its use, so B is
 * packed and used FEW_ROWS_B_BYTES at a time, A~ packed once per pc step.
 * Each element of C still takes its pc steps in order: the same bits.
 * Xeon, one thread, M x N x K = 64 x 3136 x 576 (a convolution's): f32
 * 0.67 -> 0.81x oneDNN, f64 0.91 -> 1.07x OpenBLAS, bf16 (AMX) 477 -> 666
 * GFLOPS; M = 16-64, N = K = 4096 +10-40%; int8 +15-57% except at that
 * shape (-15%, still 1.7x oneDNN). */
static void serial_loops(step *s, size_t j0, size_t j1, bool workspace)
{
    const mxp_gemm_loops *L = s->L;
    const size_t ncs = nc_step(L, j0, j1);
    size_t sub = ncs;
    if (L->m <= s->mc_step) {
        const size_t fit = FEW_ROWS_B_BYTES / panel_bytes(L, 1, min_size(L->kc, L->k)) / L->nr * L->nr;
        sub = fit < L->nr ? L->nr : fit;
    }
    for (size_t jc = j0; jc < j1; jc += ncs) {
        s->wcol = workspace ? jc : 0;
        const size_t nc = min_size(ncs, j1 - jc);
        for (size_t pc = 0; pc < L->k; pc += L->kc)
            for (size_t jb = jc; jb < jc + nc; jb += sub) {
                set_step(s, jb, min_size(sub, jc + nc - jb), pc);
                s->a_packed = jb != jc;
                if (L->b_packed) /* packed before the call: the step's panels where they lie */
                    s->pb = packed_b_at(L, pc, jb);
                else if (!pack_b_checked(s, jb, s->nc, s->pb))
                    return;
                run_blocks(s, 0, 1);
            }
    }
}

/* Slabs: each thread an independent GEMM on its own range of columns (from
 * a multiple of slab_unit), packing its own B~ (pb[t]) into its own workspace: no
 * barrier between packing and multiplying, so one thread's packing (memory
 * bound) overlaps the other's multiply-adds. */
typedef struct slabs {
    step base; /* pa[t]: thread t's A~ */
    unsigned char *pb[MAX_THREADS];
    unsigned char *ws[MAX_THREADS]; /* NULL: the sums go to L->w */
} slabs;

static void run_slab(void *ctx, int t, int nthreads)
{
    const slabs *S = ctx;
    const mxp_gemm_loops *L = S->base.L;
    size_t j0, j1;
    mxp_share_range(L->n, L->slab_unit, t, nthreads, &j0, &j1);
    if (j0 >= j1)
        return;
    step s = S->base;
    s.pa[0] = S->base.pa[t];
    s.pb = S->pb[t];
    if (S->ws[t]) { /* sums into this thread's workspace, a block of its columns wide */
        s.w = S->ws[t];
        s.ldw = min_size(j1 - j0, nc_step(L, j0, j1));
    }
    serial_loops(&s, j0, j1, S->ws[t] != NULL);
}

/* How a context runs its product: the threads, how they share it, and the
 * buffers, in one block of `bytes`. */
typedef struct plan {
    int nthreads;
    bool split_n, use_slabs, a_in_place;
    int buffers_a, buffers_b; /* buffers_b: B~ and a workspace each */
    size_t mc_step, nc_max;
    size_t extra, a_bytes, b_bytes, ws_bytes, bytes;
} plan;

/* Threads pay off from a few million multiply-adds, each with at least
 * two MR panels of rows, or (split_n) two NR panels of columns when the
 * rows are too few to share. */
static int threads_for(const mxp_gemm_loops *L, bool *split_n)
{
    int t = L->max_threads;
    const size_t row_shares = (L->m + 2 * L->mr - 1) / (2 * L->mr);
    const size_t col_shares = (L->n + 2 * L->nr - 1) / (2 * L->nr);
    if ((double)L->m * (double)L->n * (double)L->k < 4e6)
        t = 1;
    *split_n = t > 1 && row_shares < (size_t)t && col_shares > row_shares;
    const size_t shares = *split_n ? col_shares : row_shares;
    if ((size_t)t > shares)
        t = (int)shares;
    return t < 1 ? 1 : t > MAX_THREADS ? MAX_THREADS : t;
}

static plan plan_for(const mxp_gemm_loops *L)
{
    plan p = { 0 };
    p.nthreads = threads_for(L, &p.split_n);
    /* Slabs of columns, one per thread, when each gets at least two NR
     * panels (measured, two threads: 256^3 f32 0.78 -> 0.98x oneDNN, 512^3
     * 0.74 -> 0.95x, M = 128, N = K = 4096 0.51-0.85 -> 0.99x; one panel
     * each loses at N = 64).  Otherwise the threads share one B~ and split
     * the rows (or, with few rows, the columns) of every (jc, pc) step. */
    const size_t panels = (L->n + L->nr - 1) / L->nr;
    p.use_slabs = p.nthreads > 1 && panels >= 2 * (size_t)p.nthreads;
    const size_t units = (L->n + L->slab_unit - 1) / L->slab_unit;
    const size_t width =
        p.use_slabs ? (units + (size_t)p.nthreads - 1) / (size_t)p.nthreads * L->slab_unit : L->n;
    /* at least any thread's widest NC block (an evened block is at most NC
     * and at most its range rounded up to NR) */
    p.nc_max = min_size(L->nc, round_up(width, L->nr));
    /* each thread splits its rows into blocks of at most this (a multiple of MR) */
    p.mc_step = min_size(L->mc, round_up(L->m, L->mr));
    const size_t kc_max = min_size(L->k, L->kc);
    /* A in place when the tile can read it so, and only when at most
     * a_max_n columns reuse each A block: packing it costs in proportion to
     * the few columns that reuse it, while reading A's rows in place for
     * many NR panels loses (measured: AVX-512 f32 256^3 +5%, 1024^3 +2%,
     * from 1536 on -1-2%, so 1024; uint8 256^3 +5%, 512^3 +2%; AVX2 f32
     * 32^3 +45%, 64^3 +20%, 256^3 +5%, 512^3 -6%, so 256). */
    p.a_in_place = L->a_in_place && width <= L->a_max_n;
    p.buffers_b = p.use_slabs ? p.nthreads : 1;
    p.buffers_a = p.a_in_place ? 0 : p.nthreads;
    p.extra = round_up(L->extra_bytes, 64);
    p.b_bytes = L->b_packed ? 0 : round_up(panel_bytes(L, p.nc_max, kc_max), 64);
    p.ws_bytes = L->w ? 0 : round_up(L->m * p.nc_max * L->w_size, 64);
    p.a_bytes = round_up(panel_bytes(L, p.mc_step, kc_max), 64);
    p.bytes = p.extra + (size_t)p.buffers_b * (p.b_bytes + p.ws_bytes) + (size_t)p.buffers_a * p.a_bytes;
    return p;
}

/* One product by plan p in block; with tiny set, B checked while packed
 * and the product abandoned on a find (then *tiny is true). */
static void run_plan(const mxp_gemm_loops *L, const plan *p, unsigned char *block, atomic_bool *tiny)
{
    /* the fields one by one, the buffers' only as far as they are used:
     * zeroing the 64-entry arrays cost as much as a small product's loops */
    slabs S;
    step s;
    s.L = L;
    s.mc_step = p->mc_step;
    s.jc = s.nc = s.pc = s.kc = 0;
    s.last = false;
    s.split_n = p->split_n && !p->use_slabs;
    s.a_in_place = p->a_in_place;
    s.a_packed = false;
    s.wcol = 0;
    s.tiny = tiny;
    for (int t = 0; t < p->buffers_b; t++) {
        unsigned char *mine = block + p->extra + (size_t)t * (p->b_bytes + p->ws_bytes);
        S.pb[t] = mine;
        S.ws[t] = L->w ? NULL : mine + p->b_bytes;
    }
    for (int t = 0; t < p->nthreads; t++) /* no buffer: A is read in place */
        s.pa[t] = t < p->buffers_a ? block + p->extra + (size_t)p->buffers_b * (p->b_bytes + p->ws_bytes) +
                                         (size_t)t * p->a_bytes
                                   : NULL;
    s.pb = S.pb[0];
    s.w = L->w ? L->w : S.ws[0];
    s.ldw = L->w ? L->ldw : min_size(L->n, p->nc_max);
    if (p->use_slabs) {
        S.base = s;
        mxp_parallel(p->nthreads, run_slab, &S);
        return;
    }
    if (p->nthreads == 1) {
        serial_loops(&s, 0, L->n, !L->w);
        return;
    }
    const size_t ncs = nc_step(L, 0, L->n);
    for (size_t jc = 0; jc < L->n; jc += ncs) {
        s.wcol = L->w ? 0 : jc;
        for (size_t pc = 0; pc < L->k; pc += L->kc) {
            set_step(&s, jc, min_size(ncs, L->n - jc), pc);
            /* both phases split by thread; tiles never shared */
            if (L->b_packed) {
                s.pb = packed_b_at(L, pc, jc);
            } else {
                mxp_parallel(p->nthreads, pack_b_share, &s);
                if (tiny && atomic_load_explicit(tiny, memory_order_relaxed))
                    return;
            }
            mxp_parallel(p->nthreads, run_blocks, &s);
        }
    }
}

void mxp_gemm_loops_init(mxp_gemm_loops *L, const mxp_gemm_config *cfg, size_t m, size_t n, size_t k,
                         const mxp_gemm_operand *a, const mxp_gemm_operand *b, void *w, size_t ldw,
                         mxp_gemm_finish_fn finish, void *finish_ctx)
{
    L->m = m, L->n = n, L->k = k;
    L->a = a, L->b = b;
    L->kernel = NULL;
    L->tile = NULL;
    L->pack_a = NULL;
    L->pack_b = NULL;
    L->release = NULL;
    L->mr = cfg->mr, L->nr = cfg->nr, L->kpack = cfg->kpack;
    /* The float tiles run a narrow last panel with the vectors it needs
     * (gemm-avx512-tile.h): slabs may end inside a 48-wide panel, on a
     * vector of 16 (two threads at 512^3 f32: 11 panels split 6 + 5 gave
     * 1.76x one thread, 16-column units 2.0x). */
    L->slab_unit = cfg->kpack == 1 && cfg->nr > 16 && cfg->nr % 16 == 0 ? 16 : cfg->nr;
    L->packed_size = mxp_dtype_itemsize(cfg->packed);
    L->a_in_place = false;
    L->a_max_n = 1024;
    L->mc = cfg->mc, L->kc = cfg->kc, L->nc = cfg->nc;
    L->even = false;
    /* The AMX tiles (k packed in 32s or 64s) store each 32 x 32 block of
     * sums with tile stores: row panel by row panel, C's rows are written
     * in runs (bf16 1056 x 1152 x 384 on the Xeon: the kernel loops 0.67
     * ms in BLIS's order, 0.56 rows outer), while B~ stays in L2
     * (ROWS_OUTER_B_BYTES; bf16 512^3 1.0 -> 1.25 TFLOPS, u8s8 1024^3 1.46
     * -> 1.86 TOPS; bf16 1024^3, a 2 MiB B~, 1.02 -> 0.83: BLIS's order
     * there) */
    L->rows_outer = cfg->kpack >= 32;
    L->w_size = mxp_dtype_itemsize(cfg->acc);
    L->w = w, L->ldw = ldw;
    L->finish = finish, L->finish_ctx = finish_ctx;
    L->extra_bytes = 0;
    L->prepare = NULL;
    L->max_threads = mxp_get_num_threads();
    L->b_packed = NULL;
}

mxp_status mxp_gemm_drive(const mxp_gemm_loops *loops, const mxp_gemm_loops *redo)
{
    const plan p = plan_for(loops);
    plan p_redo = p;
    if (redo)
        p_redo = plan_for(redo);
    /* All the buffers in one block, a workspace kept between calls (and
     * between calls of other libraries): allocated afresh, glibc gave the
     * freed pages back to the kernel and every call faulted them in again
     * (two threads at 256^3: 4% of the time; docs/gemm.md, Workspaces).
     * Large enough for a redo too: once C is written, nothing may fail. */
    unsigned char *block = mxp_workspace_get(p.bytes > p_redo.bytes ? p.bytes : p_redo.bytes);
    if (!block)
        return MXP_ERR_NO_MEMORY;
    if (loops->prepare)
        loops->prepare(loops->kernel, block);
    atomic_bool tiny;
    atomic_init(&tiny, false);
    run_plan(loops, &p, block, redo ? &tiny : NULL);
    if (redo && atomic_load_explicit(&tiny, memory_order_relaxed)) { /* all of it again, from the start */
        if (redo->prepare)
            redo->prepare(redo->kernel, block);
        run_plan(redo, &p_redo, block, NULL);
    }
    mxp_workspace_put(block);
    return MXP_OK;
}
