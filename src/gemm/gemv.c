/* M = 1: C (1 x n) = alpha * x B + beta * C with B streamed once from the
 * caller's memory by a GEMV kernel (no packing), then the epilogue and one
 * rounding into C.  Used when the machine has AVX2 or AVX-512 and B is
 * float32, bfloat16, float16, float8_e4m3fn or float8_e5m2 (float32
 * accumulation; float8 weights of one-token inference: packing them for
 * the GEMM kernel had cost 4x the stream), or A and B are float64. */
#include <math.h>
#include <string.h>

#include "core/alloc-internal.h"
#include "core/error.h"
#include "core/threads-internal.h"
#include "gemm/gemm-internal.h"
#include "mxp/alloc.h"
#include "mxp/threads.h"

/* The GEMV kernels on column ranges across threads: every y[j] is one
 * thread's dot product in the same order, so the bits do not depend on the
 * thread count.  Columns in multiples of 32 (the kernels' vectors). */
typedef struct gemv_job {
    const mxp_gemv_kernel *g;
    int trans_b;
    size_t k, n, ld, itemsize; /* ld in elements of B */
    const void *x, *b;
    void *y;
} gemv_job;

static void gemv_share(void *ctx, int t, int nt)
{
    const gemv_job *job = ctx;
    const mxp_gemv_kernel *g = job->g;
    size_t j0, j1;
    mxp_share_range(job->n, 32, t, nt, &j0, &j1);
    if (j0 >= j1)
        return;
    /* B's columns j0..: along a row (not transposed) or whole rows (transposed) */
    const unsigned char *b = (const unsigned char *)job->b + (job->trans_b ? j0 * job->ld : j0) * job->itemsize;
    if (g->f64)
        g->f64(job->trans_b, job->k, j1 - j0, job->x, (const double *)(const void *)b, job->ld, (double *)job->y + j0);
    else if (g->s16s8)
        g->s16s8(job->trans_b, job->k, j1 - j0, job->x, (const int8_t *)(const void *)b, job->ld,
                 (int32_t *)job->y + j0);
    else
        g->f32(job->trans_b, g->kind, job->k, j1 - j0, job->x, b, job->ld * job->itemsize, (float *)job->y + j0);
}

void mxp_gemm_gemv_run(const mxp_gemv_kernel *g, int trans_b, size_t k, size_t n, const void *x, const void *b,
                       size_t ld, size_t itemsize, void *y)
{
    gemv_job job = { g, trans_b, k, n, ld, itemsize, x, b, y };
    int nt = mxp_get_num_threads();
    const double bytes = (double)k * (double)n * (double)itemsize;
    if (bytes < (1 << 21)) /* a few microseconds of streaming: one thread */
        nt = 1;
    if ((size_t)nt > (n + 31) / 32)
        nt = (int)((n + 31) / 32);
    mxp_parallel(nt < 1 ? 1 : nt, gemv_share, &job);
}

/* alpha * y + beta * C, the epilogue, one rounding into C (y float32 or
 * float64: one of yf, yd). */
static void finish_row(size_t n, double alpha, const float *yf, const double *yd, double beta, void *c,
                       mxp_dtype c_type, const mxp_gemm_opts *opts)
{
    enum { CHUNK = 512 };
    double t[CHUNK], tmp[CHUNK];
    const size_t cs = mxp_dtype_itemsize(c_type);
    const mxp_gemm_opts none = { .acc_dtype = 0 };
    const mxp_gemm_opts *o = opts ? opts : &none;
    mxp_gemm_epilogue epi;
    mxp_gemm_epilogue_init(&epi, o);
    mxp_convert_opts co = o->convert;
    const uint64_t offset0 = co.index_offset;
    for (size_t j = 0; j < n; j += CHUNK) {
        size_t len = n - j < CHUNK ? n - j : CHUNK;
        for (size_t q = 0; q < len; q++)
            t[q] = alpha * (yf ? (double)yf[j + q] : yd[j + q]);
        if (beta != 0) {
            mxp_convert(tmp, MXP_F64, (const unsigned char *)c + j * cs, c_type, len, NULL);
            for (size_t q = 0; q < len; q++)
                t[q] += beta * tmp[q];
        }
        mxp_gemm_epilogue_row(&epi, t, 0, j, len, tmp);
        co.index_offset = offset0 + j;
        mxp_convert((unsigned char *)c + j * cs, c_type, t, MXP_F64, len, &co);
    }
}

/* x times 2^8, exactly, for the float8_e4m3fn kind; false (x unusable)
 * where some |x| >= 2^120, whose product would overflow. */
static bool scale_e4m3_x(float *x, size_t k)
{
    for (size_t p = 0; p < k; p++) {
        if (fabsf(x[p]) >= 0x1p120f)
            return false;
        x[p] *= 256.0f;
    }
    return true;
}

/* The float32 GEMV kernels' kind for B, or -1 where they do not take the
 * call (no kernel at this level, a float64 A, an accumulator asked for
 * that is not float32, B of another dtype). */
static int f32_kind(const mxp_gemm_operand *a, const mxp_gemm_operand *b, const mxp_gemm_opts *opts)
{
    const mxp_dtype acc = opts && opts->acc_dtype ? opts->acc_dtype : 0;
    if (!mxp_f32_gemv_kernel(mxp_isa_current()) || (acc && acc != MXP_F32) || a->dtype == MXP_F64)
        return -1;
    return b->dtype == MXP_F32 ? MXP_GEMV_F32 : b->dtype == MXP_BF16 ? MXP_GEMV_BF16
         : b->dtype == MXP_F16 ? MXP_GEMV_F16 : b->dtype == MXP_E4M3 ? MXP_GEMV_E4M3
         : b->dtype == MXP_E5M2 ? MXP_GEMV_E5M2 : -1;
}

bool mxp_gemm_gemv(size_t n, size_t k, double alpha, const mxp_gemm_operand *a, const mxp_gemm_operand *b,
                   double beta, void *c, mxp_dtype c_type, const mxp_gemm_opts *opts, mxp_status *st)
{
    const mxp_isa isa = mxp_isa_current();
    const mxp_dtype acc = opts && opts->acc_dtype ? opts->acc_dtype : 0;
    const size_t as = mxp_dtype_itemsize(a->dtype);
    const ptrdiff_t a_step = (ptrdiff_t)(a->trans ? a->ld * as : as); /* along the one row of op(A) */
    if (a->dtype == MXP_F64 && b->dtype == MXP_F64 && (!acc || acc == MXP_F64)) {
        const mxp_gemv_kernel g = { NULL, 0, mxp_f64_gemv_kernel(isa), NULL };
        if (!g.f64)
            return false;
        double *x = mxp_workspace_get(k * sizeof *x), *y = mxp_workspace_get(n * sizeof *y); /* kept between calls */
        if (x && y) {
            mxp_convert_strided(x, MXP_F64, 8, a->base, a->dtype, a_step, k, NULL);
            mxp_gemm_gemv_run(&g, b->trans, k, n, x, b->base, b->ld, 8, y);
            finish_row(n, alpha, NULL, y, beta, c, c_type, opts);
        }
        *st = x && y ? MXP_OK : mxp_error(MXP_ERR_NO_MEMORY, "mxp_gemm: out of memory for the GEMV buffers");
        mxp_workspace_put(x);
        mxp_workspace_put(y);
        return true;
    }
    const int kind = f32_kind(a, b, opts);
    const mxp_gemv_kernel g = { mxp_f32_gemv_kernel(isa), kind, NULL, NULL };
    if (kind < 0)
        return false;
    float *x = mxp_workspace_get(k * sizeof *x), *y = mxp_workspace_get(n * sizeof *y); /* kept between calls */
    if (x && y) {
        /* x = the one row of op(A), widened exactly (float8_e4m3fn B: times 2^8, gemv-kernels.h) */
        mxp_convert_strided(x, MXP_F32, 4, a->base, a->dtype, a_step, k, NULL);
        if (kind == MXP_GEMV_E4M3 && !scale_e4m3_x(x, k)) {
            mxp_workspace_put(x);
            mxp_workspace_put(y);
            return false; /* the GEMM kernels then */
        }
        mxp_gemm_gemv_run(&g, b->trans, k, n, x, b->base, b->ld, mxp_dtype_itemsize(b->dtype), y);
        finish_row(n, alpha, y, NULL, beta, c, c_type, opts);
    }
    *st = x && y ? MXP_OK : mxp_error(MXP_ERR_NO_MEMORY, "mxp_gemm: out of memory for the GEMV buffers");
    mxp_workspace_put(x);
    mxp_workspace_put(y);
    return true;
}
