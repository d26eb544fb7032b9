/* mxp quant-gemm — the quantized pipeline end to end: float32 activations
 * and weights, min/max calibration (activations uint8 asymmetric per
 * tensor, weights int8 symmetric per output channel), quantization, the
 * int8 GEMM with int32 sums dequantized to float32 or requantized to int8,
 * each compared with the float32 GEMM.  The tour's part 9 uses
 * quant_gemm_measure too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { QG_OUTLIERS = 8 };

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

mxp_status quant_gemm_measure(size_t m, size_t n, size_t k, uint64_t seed, int reps, quant_gemm_result *r)
{
    memset(r, 0, sizeof *r);
    if (reps < 1 || reps > QG_MAX_REPS)
        return MXP_ERR_INVALID_ARGUMENT;
    const int64_t sa[2] = { (int64_t)m, (int64_t)k }, sb[2] = { (int64_t)k, (int64_t)n }, sc[2] = { (int64_t)m, (int64_t)n };
    mxp_array *a = NULL, *b = NULL, *c32 = NULL, *cdq = NULL, *c8 = NULL, *c8f = NULL, *qa = NULL, *qb = NULL;
    mxp_qparams pa, pb;
    memset(&pa, 0, sizeof pa);
    memset(&pb, 0, sizeof pb);
    float *scales = malloc(n * sizeof *scales);
    mxp_status st = scales ? MXP_OK : MXP_ERR_NO_MEMORY;
    if (st == MXP_OK)
        st = mxp_array_random_normal(&a, MXP_F32, 2, sa, 0, 1, seed);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&b, MXP_F32, 2, sb, 0, 0.05, seed + 1);
    if (st == MXP_OK) {
        add_outliers(b);
        st = mxp_array_empty(&c32, MXP_F32, 2, sc);
    }
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
    mxp_array_free(a);
    mxp_array_free(b);
    mxp_array_free(c32);
    mxp_array_free(cdq);
    mxp_array_free(c8);
    mxp_array_free(c8f);
    mxp_array_free(qa);
    mxp_array_free(qb);
    return st;
}

const char *const quant_gemm_path_names[3] = { "float32 GEMM", "int8 GEMM -> float32", "int8 GEMM -> int8" };

static void usage(FILE *f)
{
    fprintf(f, "usage: mxp quant-gemm [--m M] [--n N] [--k K] [--seed S]\n\n"
               "The quantized pipeline: C = A B with A (M x K, default 128 x 1024) float32\n"
               "N(0,1) activations and B (K x N, default 1024 x 1024) N(0, 0.05) weights with\n"
               "%d outliers of +-1.  Min/max calibration: A uint8 asymmetric per tensor, B int8\n"
               "symmetric per output channel (B's columns; B is quantized once, ahead of time).\n"
               "The int8 GEMM sums in int32 and either dequantizes to float32 (scale\n"
               "a_scale * b_scale[j] per column) or requantizes to int8 (output scale from\n"
               "the float result's range).  Each path is compared with the float32 GEMM.\n"
               "Times: median of %d runs, GEMM alone and the pipeline with the activations'\n"
               "calibration and quantization; threads: mxp's default.\n",
            QG_OUTLIERS, QG_REPS);
}

static int parse_dim(const char *opt, const char *v, size_t *out)
{
    if (cli_parse_size(v, out) || *out == 0 || *out > 65536)
        return cli_usage_error("quant-gemm", "%s wants 1..65536, not '%s'", opt, v);
    return CLI_OK;
}

int cli_quant_gemm(int argc, char **argv)
{
    size_t m = 128, n = 1024, k = 1024;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int rc = CLI_OK;
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        } else if (cli_option(argc, argv, &i, "--m", &v) == 1) {
            rc = parse_dim("--m", v, &m);
        } else if (cli_option(argc, argv, &i, "--n", &v) == 1) {
            rc = parse_dim("--n", v, &n);
        } else if (cli_option(argc, argv, &i, "--k", &v) == 1) {
            rc = parse_dim("--k", v, &k);
        } else if (cli_option(argc, argv, &i, "--seed", &v) == 1) {
            char *end;
            seed = strtoull(v, &end, 10);
            if (!*v || *end)
                rc = cli_usage_error("quant-gemm", "--seed wants an integer, not '%s'", v);
        } else {
            return cli_usage_error("quant-gemm", "unknown option '%s'", argv[i]);
        }
        if (rc != CLI_OK)
            return rc;
    }
    quant_gemm_result r;
    mxp_status st = quant_gemm_measure(m, n, k, seed, QG_REPS, &r);
    if (st != MXP_OK)
        return cli_mxp_error("quant-gemm", st);
    printf("# C = A B: A %zu x %zu float32 N(0,1), B %zu x %zu float32 N(0, 0.05) with %d outliers; seed %llu\n",
           m, k, k, n, QG_OUTLIERS, (unsigned long long)seed);
    printf("# A: uint8 asymmetric per tensor (scale %.4g, zero point %d); B: int8 symmetric per column\n"
           "# (%zu scales, quantized once in %.2f ms); int32 sums; int8 C: output scale %.4g\n",
           r.a_scale, r.a_zero_point, n, r.weights_s * 1e3, r.out_scale);
    printf("# times: median of %d runs, %d threads; speed-up = float32 GEMM time / this time\n", QG_REPS,
           mxp_get_num_threads());
    printf("%-22s %9s %12s %9s %12s %8s %12s %12s\n", "path", "GEMM ms", "pipeline ms", "GEMM x", "pipeline x",
           "PSNR dB", "max abs err", "p99 rel err");
    for (int p = 0; p < 3; p++) {
        const quant_gemm_path *q = &r.path[p];
        char psnr[32] = "ref", maxabs[32] = "0", p99[32] = "0";
        if (p > 0) {
            snprintf(psnr, sizeof psnr, "%.1f", q->report.psnr_db);
            snprintf(maxabs, sizeof maxabs, "%.3g", q->report.max_abs_error);
            snprintf(p99, sizeof p99, "%.3g", q->report.p99_rel_error);
        }
        printf("%-22s %9.3f %12.3f %8.2fx %11.2fx %8s %12s %12s\n", quant_gemm_path_names[p], q->gemm_s * 1e3,
               q->pipeline_s * 1e3, r.path[0].gemm_s / q->gemm_s, r.path[0].gemm_s / q->pipeline_s, psnr, maxabs,
               p99);
    }
    printf("(p99 relative error is large where C is near 0: the error is absolute, about the\n"
           "quantization step of the inputs times sqrt(K); PSNR relates it to max |C|.)\n");
    return CLI_OK;
}
