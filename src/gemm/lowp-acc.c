/* GEMM with a float16 or bfloat16 accumulator (opts->acc_dtype): an
 * emulation of hardware that accumulates in those formats, a portable
 * reference path only.
 *
 *     acc = 0;  for p = 0 .. k-1:  acc = round_acc(acc + float32(a_ip * b_pj))
 *
 * Each product is computed in float32 (exact for float16, bfloat16 and
 * float8 inputs; rounded once for float32/float64 inputs, which are first
 * rounded to float32), added to the running sum and the sum rounded to
 * the accumulator's format (nearest even, overflow to inf) after every
 * addition, k in order.  Then, in float64 on the accumulator's value:
 * t = alpha acc (+ beta C), the epilogue (bias, activation, clamp), and
 * one rounding into C with opts->convert.
 *
 * op(A) and op(B) are converted to float32 once (m x k and k x n); rows of
 * C are shared among the threads, and each element is computed by one
 * thread in the same order, so results do not depend on the thread
 * count.  Blocks of 64 columns keep 64 running sums per row of A. */
#include <string.h>

#include "core/error.h"
#include "core/lowp.h"
#include "core/threads-internal.h"
#include "gemm/gemm-internal.h"
#include "mxp/alloc.h"
#include "mxp/threads.h"

enum { JB = 64, CHUNK = 512 };

typedef struct lowp_job {
    size_t m, n, k;
    double alpha, beta;
    const float *a; /* m x k, row-major */
    const float *b; /* k x n, row-major */
    void *c;
    mxp_dtype ct;
    size_t ldc;
    const mxp_gemm_opts *o;
    mxp_gemm_epilogue epi;
    bool epilogue;
    mxp_lowp fmt;
} lowp_job;

static void lowp_rows(void *ctx, int t, int nthreads)
{
    const lowp_job *g = ctx;
    size_t r0, r1;
    mxp_share_range(g->m, 1, t, nthreads, &r0, &r1);
    const size_t cs = mxp_dtype_itemsize(g->ct);
    double row[CHUNK], tmp[CHUNK], cin[CHUNK];
    mxp_convert_opts co = g->o ? g->o->convert : (mxp_convert_opts){ .rounding = MXP_ROUND_NEAREST_EVEN };
    const uint64_t offset0 = co.index_offset;
    for (size_t i = r0; i < r1; i++) {
        const float *ai = g->a + i * g->k;
        unsigned char *ci = (unsigned char *)g->c + i * g->ldc * cs;
        for (size_t j0 = 0; j0 < g->n; j0 += CHUNK) {
            const size_t len = g->n - j0 < CHUNK ? g->n - j0 : CHUNK;
            for (size_t jb = 0; jb < len; jb += JB) {
                const size_t w = len - jb < JB ? len - jb : JB;
                double acc[JB] = { 0 };
                for (size_t p = 0; p < g->k; p++) {
                    const float x = ai[p];
                    const float *bp = g->b + p * g->n + j0 + jb;
                    for (size_t q = 0; q < w; q++) {
                        const float prod = x * bp[q]; /* rounded to float32 */
                        acc[q] = mxp_lowp_round(&g->fmt, acc[q] + (double)prod);
                    }
                }
                for (size_t q = 0; q < w; q++)
                    row[jb + q] = g->alpha * acc[q];
            }
            if (g->beta != 0) {
                mxp_convert(cin, MXP_F64, ci + j0 * cs, g->ct, len, NULL);
                for (size_t q = 0; q < len; q++)
                    row[q] += g->beta * cin[q];
            }
            if (g->epilogue)
                mxp_gemm_epilogue_row(&g->epi, row, i, j0, len, tmp);
            co.index_offset = offset0 + i * g->n + j0; /* C's elements in row-major order */
            mxp_convert(ci + j0 * cs, g->ct, row, MXP_F64, len, &co);
        }
    }
}

/* op(X) (rows x cols) as a row-major float32 matrix. */
static void to_f32(float *dst, const mxp_gemm_operand *x, size_t rows, size_t cols)
{
    const size_t s = mxp_dtype_itemsize(x->dtype);
    for (size_t r = 0; r < rows; r++) {
        if (!x->trans) /* row r is contiguous */
            mxp_convert(dst + r * cols, MXP_F32, x->base + r * x->ld * s, x->dtype, cols, NULL);
        else           /* column r of the stored matrix */
            mxp_convert_strided(dst + r * cols, MXP_F32, 4, x->base + r * s, x->dtype, (ptrdiff_t)(x->ld * s),
                                cols, NULL);
    }
}

mxp_status mxp_gemm_lowp_acc(mxp_dtype acc, size_t m, size_t n, size_t k, double alpha, const mxp_gemm_operand *a,
                             const mxp_gemm_operand *b, double beta, void *c, mxp_dtype ct, size_t ldc,
                             const mxp_gemm_opts *opts, bool epilogue)
{
    if (m > SIZE_MAX / 4 / k || n > SIZE_MAX / 4 / k || m * k > SIZE_MAX / 4 - n * k)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_gemm: float32 copies of %zu x %zu and %zu x %zu are too large",
                         m, k, k, n);
    float *af = mxp_malloc(m * k * 4), *bf = af ? mxp_malloc(k * n * 4) : NULL;
    if (!bf) {
        mxp_free(af);
        return MXP_ERR_NO_MEMORY;
    }
    to_f32(af, a, m, k);
    to_f32(bf, b, k, n);
    lowp_job g = { m, n, k, alpha, beta, af, bf, c, ct, ldc, opts, { 0 }, epilogue, mxp_lowp_for(acc) };
    if (epilogue)
        mxp_gemm_epilogue_init(&g.epi, opts);
    int nthreads = mxp_get_num_threads();
    if ((double)m * (double)n * (double)k < 65536.0)
        nthreads = 1;
    if ((size_t)nthreads > m)
        nthreads = (int)m;
    if (nthreads <= 1)
        lowp_rows((void *)&g, 0, 1);
    else
        mxp_parallel(nthreads, lowp_rows, (void *)&g);
    mxp_free(bf);
    mxp_free(af);
    return MXP_OK;
}
