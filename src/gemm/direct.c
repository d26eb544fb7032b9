/* Small M (a few rows of C): B read in place by the direct micro-kernels,
 * not packed; A packed once per KC step by each thread for itself; NR
 * strips of columns split across threads.  For a few rows, packing B would
 * cost more than the multiply-adds. */
#include "core/alloc-internal.h"
#include "core/threads-internal.h"
#include "gemm/driver.h"
#include "mxp/alloc.h"

enum { MAX_THREADS = 64 };

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
    size_t j0, j1; /* whole strips of NR columns */
    mxp_share_range(s->n, cfg->nr, t, nthreads, &j0, &j1);
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
    const mxp_gemm_config pack_cfg = { .name = cfg->name, .acc = cfg->acc, .packed = cfg->packed,
                                       .kpack = cfg->kpack, .isa = cfg->isa, .mr = cfg->mr, .nr = cfg->nr,
                                       .mc = mrp, .kc = kc_max, .nc = cfg->nr };
    int nthreads = mxp_get_num_threads();
    const size_t strips = (n + cfg->nr - 1) / cfg->nr;
    if ((double)m * (double)n * (double)k < 4e6)
        nthreads = 1;
    if ((size_t)nthreads > (strips + 1) / 2)
        nthreads = (int)((strips + 1) / 2);
    nthreads = nthreads < 1 ? 1 : nthreads > MAX_THREADS ? MAX_THREADS : nthreads;
    direct_step s = { cfg, &pack_cfg, a, b, m, n, k, alpha, beta, { NULL }, w, ldw, finish, finish_ctx };
    const size_t a_bytes = (mrp * kcp_max * ps + 63) / 64 * 64;
    unsigned char *block = mxp_workspace_get((size_t)nthreads * a_bytes); /* kept between calls: see mxp_gemm_drive */
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

/* A tiny product: at most TINY_MNK multiply-adds and B within TINY_B_BYTES
 * (read again for every MR rows of C, from L1/L2), k within the packed
 * configuration's KC (its summation order: the same bits as the packed
 * loops).  Packing B, the loops and the thread decision had been a third
 * of a 32^3 float32 product (Zen 4 at the AVX2 level: 65 -> 85 GFLOPS
 * with this path; from 128^3 on the packed loops win, 103 against 106). */
enum { TINY_MNK = 96 * 96 * 96, TINY_B_BYTES = 64 * 1024 };

bool mxp_gemm_drive_tiny(const mxp_gemm_direct_config *cfg, size_t kc_max, size_t m, size_t n, size_t k,
                         double alpha, const mxp_gemm_operand *a, const mxp_gemm_operand *b, double beta, void *c,
                         size_t ldc)
{
    const mxp_gemm_direct_a_fn tile = mxp_gemm_direct_a_for(cfg);
    const size_t es = mxp_dtype_itemsize(cfg->packed);
    if (!tile || b->trans || a->dtype != cfg->packed || b->dtype != cfg->packed || cfg->acc != cfg->packed ||
        cfg->kpack != 1 || k > kc_max || (double)m * (double)n * (double)k > TINY_MNK ||
        (double)k * (double)n * (double)es > TINY_B_BYTES)
        return false;
    const unsigned char *ab = a->base, *bb = b->base;
    unsigned char *cb = c;
    for (size_t i = 0; i < m; i += cfg->mr) {
        const size_t mr = m - i < cfg->mr ? m - i : cfg->mr;
        for (size_t j = 0; j < n; j += cfg->nr)
            tile(mr, n - j < cfg->nr ? n - j : cfg->nr, k, ab + (a->trans ? i : i * a->ld) * es,
                 a->trans ? 1 : a->ld, a->trans ? a->ld : 1, bb + j * es, b->ld, cb + (i * ldc + j) * es, ldc, alpha,
                 beta);
    }
    return true;
}
