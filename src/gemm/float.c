/* The float path's side of the driver (driver.h): the micro-tile (alpha,
 * beta on the first KC step, 1 on the later ones), the packers of
 * src/gemm/pack.c, a float configuration's sizes and blocks, and the redo
 * with the float32 configuration when bfloat16 B turns out to hold values
 * vdpbf16ps would flush. */
#include "gemm/driver.h"

typedef struct float_kernel {
    const mxp_gemm_config *cfg;
    mxp_gemm_ukernel_a_fn ukernel_a;
    double alpha, beta;
} float_kernel;

static void tile(const void *kernel, size_t i, size_t j, size_t mr, size_t nr, size_t kcp, const void *a, size_t lda,
                 const void *b, void *c, size_t ldc, bool first)
{
    (void)i, (void)j;
    const float_kernel *K = kernel;
    const double beta = first ? K->beta : 1.0;
    if (lda)
        K->ukernel_a(mr, nr, kcp, a, lda, b, c, ldc, K->alpha, beta);
    else
        K->cfg->ukernel(mr, nr, kcp, a, b, c, ldc, K->alpha, beta);
}

/* A made by a gather: its rows row-major at a, kcp apart (the rows ir.. of
 * a block start at ir * kcp elements, where a packed panel would). */
static void tile_rows(const void *kernel, size_t i, size_t j, size_t mr, size_t nr, size_t kcp, const void *a,
                      size_t lda, const void *b, void *c, size_t ldc, bool first)
{
    (void)i, (void)j, (void)lda;
    const float_kernel *K = kernel;
    K->ukernel_a(mr, nr, kcp, a, kcp, b, c, ldc, K->alpha, first ? K->beta : 1.0);
}

static void gather_a(const void *kernel, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0, size_t kc,
                     void *dst)
{
    const size_t kpack = ((const float_kernel *)kernel)->cfg->kpack;
    a->gather->fill(a->gather->ctx, i0, mc, p0, kc, dst, (kc + kpack - 1) / kpack * kpack);
}

static void pack_a(const void *kernel, const mxp_gemm_operand *a, size_t i0, size_t mc, size_t p0, size_t kc,
                   void *dst)
{
    mxp_gemm_pack_a(((const float_kernel *)kernel)->cfg, a, i0, mc, p0, kc, dst);
}

static bool pack_b(const void *kernel, const mxp_gemm_operand *b, size_t p0, size_t kc, size_t j0, size_t nc,
                   void *dst, bool check)
{
    return mxp_gemm_pack_b(((const float_kernel *)kernel)->cfg, b, p0, kc, j0, nc, dst, check);
}

static void loops_init(mxp_gemm_loops *L, float_kernel *K, size_t m, size_t n, size_t k, const mxp_gemm_operand *a,
                       const mxp_gemm_operand *b, void *w, size_t ldw, mxp_gemm_finish_fn finish, void *finish_ctx)
{
    const mxp_gemm_config *cfg = K->cfg;
    /* KC as listed: the float sums' order */
    mxp_gemm_loops_init(L, cfg, m, n, k, a, b, w, ldw, finish, finish_ctx);
    L->kernel = K;
    L->tile = tile;
    L->pack_a = pack_a;
    L->pack_b = pack_b;
    L->release = mxp_gemm_config_release(cfg);
    /* A in place when stored in the packed dtype with k contiguous, and k
     * fills whole k-groups (an odd k's last bf16 pair needs a zero) */
    L->a_in_place = K->ukernel_a && a->dtype == cfg->packed && !a->trans && k % cfg->kpack == 0;
    L->a_max_n = mxp_gemm_config_ukernel_a_max_n(cfg);
    if (a->gather) { /* made block by block into A~'s buffer (mxp_gemm_gather_ok: the tile reads rows) */
        L->a_in_place = false;
        L->tile = tile_rows;
        L->pack_a = gather_a;
    }
}

mxp_status mxp_gemm_float_drive(const mxp_gemm_config *cfg, size_t m, size_t n, size_t k, double alpha,
                                const mxp_gemm_operand *a, const mxp_gemm_operand *b, double beta, void *w,
                                size_t ldw, mxp_gemm_finish_fn finish, void *finish_ctx, const mxp_gemm_config *redo)
{
    float_kernel K = { cfg, mxp_gemm_config_ukernel_a(cfg), alpha, beta };
    float_kernel R = { redo, redo ? mxp_gemm_config_ukernel_a(redo) : NULL, alpha, beta };
    mxp_gemm_loops L, L_redo;
    loops_init(&L, &K, m, n, k, a, b, w, ldw, finish, finish_ctx);
    if (!redo)
        return mxp_gemm_drive(&L, NULL);
    loops_init(&L_redo, &R, m, n, k, a, b, w, ldw, finish, finish_ctx);
    return mxp_gemm_drive(&L, &L_redo);
}
