/* The BLIS loops, the same for every dtype: jc over NC columns of B and C,
 * pc over KC of the shared dimension (B's panel packed once), ic over MC
 * rows of A (packed), then jr/ir over the micro-tiles.  The first pc step
 * applies beta; later ones add. */
#include "core/error.h"
#include "mxp/alloc.h"
#include "gemm/gemm-internal.h"

mxp_status mxp_gemm_drive(const mxp_gemm_config *cfg, size_t m, size_t n, size_t k, double alpha,
                          const mxp_gemm_operand *a, const mxp_gemm_operand *b, double beta, void *w, size_t ldw)
{
    const size_t as = mxp_dtype_itemsize(cfg->acc);
    const size_t kc_max = k < cfg->kc ? k : cfg->kc;
    const size_t mc_max = (m < cfg->mc ? (m + cfg->mr - 1) / cfg->mr * cfg->mr : cfg->mc);
    const size_t nc_max = (n < cfg->nc ? (n + cfg->nr - 1) / cfg->nr * cfg->nr : cfg->nc);
    unsigned char *pa = mxp_malloc(mc_max * kc_max * as), *pb = mxp_malloc(nc_max * kc_max * as);
    if (!pa || !pb) {
        mxp_free(pa);
        mxp_free(pb);
        return MXP_ERR_NO_MEMORY;
    }
    unsigned char *wb = w;
    for (size_t jc = 0; jc < n; jc += cfg->nc) {
        size_t nc = n - jc < cfg->nc ? n - jc : cfg->nc;
        for (size_t pc = 0; pc < k; pc += cfg->kc) {
            size_t kc = k - pc < cfg->kc ? k - pc : cfg->kc;
            double beta_here = pc == 0 ? beta : 1.0;
            mxp_gemm_pack_b(cfg, b, pc, kc, jc, nc, pb);
            for (size_t ic = 0; ic < m; ic += cfg->mc) {
                size_t mc = m - ic < cfg->mc ? m - ic : cfg->mc;
                mxp_gemm_pack_a(cfg, a, ic, mc, pc, kc, pa);
                for (size_t jr = 0; jr < nc; jr += cfg->nr) {
                    size_t nr = nc - jr < cfg->nr ? nc - jr : cfg->nr;
                    const unsigned char *bp = pb + jr * kc * as;
                    for (size_t ir = 0; ir < mc; ir += cfg->mr) {
                        size_t mr = mc - ir < cfg->mr ? mc - ir : cfg->mr;
                        unsigned char *c = wb + ((ic + ir) * ldw + jc + jr) * as;
                        cfg->ukernel(mr, nr, kc, pa + ir * kc * as, bp, c, ldw, alpha, beta_here);
                    }
                }
            }
        }
    }
    mxp_free(pa);
    mxp_free(pb);
    return MXP_OK;
}
