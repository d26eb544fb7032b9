/* The quantized pipeline of `mxp quant-gemm` and the tour's part 9:
 * float32 activations A and weights B, min/max calibration (A uint8
 * asymmetric per tensor, B int8 symmetric per output channel),
 * quantization, the int8 GEMM with int32 sums dequantized to float32 or
 * requantized to int8, each timed and compared with the float32 GEMM. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return t[n / 2];
}

/* A few weights 20 standard deviations out (+-1.0 for N(0, 0.05)), at
 * fixed scattered places: what per-channel scales are for. */
static void add_outliers(mxp_array *b)
{
    float *w = mxp_array_data(b);
    const uint64_t size = (uint64_t)mxp_array_size(b);
    for (uint64_t i = 0; i < QG_OUTLIERS; i++)
        w[(i * 2654435761u + 12345u) % size] = i % 2 ? -1.0f : 1.0f;
}

/* Calibrates and quantizes the activations (uint8 asymmetric per tensor)
 * and fills the per-column scales a_scale * b_scale[j] / out_scale. */
static mxp_status quantize_activations(const mxp_array *a, const mxp_qparams *pb, double out_scale, mxp_qparams *pa,
                                       mxp_array **qa, float *scales)
{
    mxp_qparams_free(pa);
    mxp_array_free(*qa);
    *qa = NULL;
    mxp_status st = mxp_calibrate_minmax(a, MXP_U8, false, -1, 0, pa);
    if (st == MXP_OK)
        st = mxp_quantize(qa, a, pa, NULL);
    for (int64_t j = 0; st == MXP_OK && j < pb->count; j++)
        scales[j] = (float)((double)pa->scales[0] * pb->scales[j] / out_scale);
    return st;
}

mxp_status quant_gemm_random(size_t m, size_t n, size_t k, uint64_t seed, mxp_array **a, mxp_array **b)
{
    const int64_t sa[2] = { (int64_t)m, (int64_t)k }, sb[2] = { (int64_t)k, (int64_t)n };
    *a = *b = NULL;
    mxp_status st = mxp_array_random_normal(a, MXP_F32, 2, sa, 0, 1, seed);
    if (st == MXP_OK)
        st = mxp_array_random_normal(b, MXP_F32, 2, sb, 0, 0.05, seed + 1);
    if (st == MXP_OK)
        add_outliers(*b);
    return st;
}

mxp_status quant_gemm_measure(const mxp_array *a, const mxp_array *b, int reps, quant_gemm_result *r)
{
    memset(r, 0, sizeof *r);
    if (reps < 1 || reps > QG_MAX_REPS || mxp_array_ndim(a) != 2 || mxp_array_ndim(b) != 2 ||
        mxp_array_dtype(a) != MXP_F32 || mxp_array_dtype(b) != MXP_F32 ||
        mxp_array_shape(a)[1] != mxp_array_shape(b)[0])
        return MXP_ERR_INVALID_ARGUMENT;
    const size_t m = (size_t)mxp_array_shape(a)[0], k = (size_t)mxp_array_shape(a)[1];
    const size_t n = (size_t)mxp_array_shape(b)[1];
    const int64_t sc[2] = { (int64_t)m, (int64_t)n };
    mxp_array *c32 = NULL, *cdq = NULL, *c8 = NULL, *c8f = NULL, *qa = NULL, *qb = NULL;
    mxp_qparams pa, pb;
    memset(&pa, 0, sizeof pa);
    memset(&pb, 0, sizeof pb);
    float *scales = malloc((n ? n : 1) * sizeof *scales);
    mxp_status st = scales ? MXP_OK : MXP_ERR_NO_MEMORY;
    if (st == MXP_OK)
        st = mxp_array_empty(&c32, MXP_F32, 2, sc);
    if (st == MXP_OK)
        st = mxp_array_empty(&cdq, MXP_F32, 2, sc);
    if (st == MXP_OK)
        st = mxp_array_empty(&c8, MXP_S8, 2, sc);
    if (st == MXP_OK)
        st = mxp_array_empty(&c8f, MXP_F32, 2, sc);
    /* The weights are quantized once, ahead of time: per output channel,
     * which is B's column, axis 1 of the K x N array. */
    double t0 = cli_now();
    if (st == MXP_OK)
        st = mxp_calibrate_minmax(b, MXP_S8, true, 1, 0, &pb);
    if (st == MXP_OK)
        st = mxp_quantize(&qb, b, &pb, NULL);
    r->weights_s = cli_now() - t0;
    double tg[QG_MAX_REPS], tp[QG_MAX_REPS];
    /* float32 reference */
    for (int i = 0; i < reps && st == MXP_OK; i++) {
        t0 = cli_now();
        st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, m, n, k, 1.0, mxp_array_data(a), MXP_F32, k, mxp_array_data(b),
                      MXP_F32, n, 0.0, mxp_array_data(c32), MXP_F32, n, NULL);
        tg[i] = cli_now() - t0;
    }
    if (st == MXP_OK)
        r->path[0].gemm_s = r->path[0].pipeline_s = median(tg, reps);
    /* The output scale of the requantized path: the float result's range,
     * calibrated in advance (symmetric int8, zero point 0). */
    double amax = 0;
    const float *cf = mxp_array_data(c32);
    for (size_t i = 0; st == MXP_OK && i < m * n; i++)
        amax = fmax(amax, fabs((double)cf[i]));
    r->out_scale = amax > 0 ? amax / 127 : 1;
    for (int p = 1; p < 3 && st == MXP_OK; p++) {
        const double out_scale = p == 1 ? 1.0 : r->out_scale;
        mxp_array *c = p == 1 ? cdq : c8;
        for (int i = 0; i < reps && st == MXP_OK; i++) {
            t0 = cli_now();
            st = quantize_activations(a, &pb, out_scale, &pa, &qa, scales);
            const double t1 = cli_now();
            mxp_gemm_opts opts;
            memset(&opts, 0, sizeof opts);
            opts.a_zero_point = st == MXP_OK ? pa.zero_points[0] : 0;
            opts.scales = scales;
            opts.n_scales = n;
            if (st == MXP_OK)
                st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, m, n, k, 1.0, mxp_array_data(qa), MXP_U8, k,
                              mxp_array_data(qb), MXP_S8, n, 0.0, mxp_array_data(c), mxp_array_dtype(c), n, &opts);
            const double t2 = cli_now();
            tg[i] = t2 - t1;
            tp[i] = t2 - t0;
        }
        if (st == MXP_OK) {
            r->path[p].gemm_s = median(tg, reps);
            r->path[p].pipeline_s = median(tp, reps);
        }
    }
    if (st == MXP_OK) {
        r->a_scale = pa.scales[0];
        r->a_zero_point = pa.zero_points[0];
        const int8_t *q = mxp_array_data(c8);
        float *d = mxp_array_data(c8f);
        for (size_t i = 0; i < m * n; i++)
            d[i] = (float)(q[i] * r->out_scale);
        st = mxp_compare(c32, c32, &r->path[0].report);
    }
    if (st == MXP_OK)
        st = mxp_compare(c32, cdq, &r->path[1].report);
    if (st == MXP_OK)
        st = mxp_compare(c32, c8f, &r->path[2].report);
    mxp_qparams_free(&pa);
    mxp_qparams_free(&pb);
    free(scales);
    mxp_array_free(c32);
    mxp_array_free(cdq);
    mxp_array_free(c8);
    mxp_array_free(c8f);
    mxp_array_free(qa);
    mxp_array_free(qb);
    return st;
}

const char *const quant_gemm_path_names[3] = { "float32 GEMM", "int8 GEMM -> float32", "int8 GEMM -> int8" };
