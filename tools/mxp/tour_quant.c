/* mxp tour, part 9: quantization — what a realistic weight tensor loses in
 * each float dtype and in int8 (per-tensor affine), what the advisor picks,
 * and the int8 GEMM next to the float32 one (quant_gemm_pipeline.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { TQ_N = 1 << 18, TQ_OUTLIERS = 16, TQ_GEMM_M = 128, TQ_GEMM_NK = 512 };

static void print_row(const char *name, size_t bytes, const mxp_compare_report *r, int64_t overflow, int64_t zeros)
{
    printf("  %-22s %9zu %8.1f %11.2e %11.2e %9lld %9lld\n", name, bytes, r->psnr_db, r->max_rel_error,
           r->p99_rel_error, (long long)overflow, (long long)zeros);
}

/* int8 per tensor (symmetric min/max) by fake quantization: the same table row. */
static mxp_status int8_row(const mxp_array *x)
{
    mxp_qparams qp;
    memset(&qp, 0, sizeof qp);
    mxp_array *fq = NULL;
    mxp_compare_report rep = { 0 };
    mxp_status st = mxp_calibrate_minmax(x, MXP_S8, true, -1, 0, &qp);
    if (st == MXP_OK)
        st = mxp_fake_quantize(&fq, x, &qp, NULL);
    if (st == MXP_OK)
        st = mxp_compare(x, fq, &rep);
    if (st == MXP_OK) {
        const float *a = mxp_array_data(x), *b = mxp_array_data(fq);
        int64_t zeros = 0;
        for (int64_t i = 0; i < TQ_N; i++)
            zeros += a[i] != 0 && b[i] == 0;
        print_row("int8 (per tensor)", TQ_N, &rep, 0, zeros);
    }
    mxp_array_free(fq);
    mxp_qparams_free(&qp);
    return st;
}

static mxp_status section(const mxp_array *x)
{
    mxp_roundtrip_row rows[MXP_ADVISOR_CANDIDATES] = { 0 };
    const mxp_dtype *cand = mxp_advisor_candidates();
    mxp_status st = mxp_roundtrip_analysis(x, cand, MXP_ADVISOR_CANDIDATES, rows);
    if (st != MXP_OK)
        return st;
    printf("  %-22s %9s %8s %11s %11s %9s %9s\n", "stored as", "bytes", "PSNR dB", "max rel err", "p99 rel err",
           "overflow", "to zero");
    for (int i = 0; i < MXP_ADVISOR_CANDIDATES; i++)
        print_row(mxp_dtype_name(rows[i].dtype), rows[i].bytes, &rows[i].report, rows[i].overflow,
                  rows[i].underflow_to_zero);
    st = int8_row(x);
    if (st != MXP_OK)
        return st;
    mxp_requirement req = { MXP_REQUIRE_MIN_PSNR, 40 };
    mxp_advice adv = { 0 };
    st = mxp_recommend_dtype(x, &req, &adv);
    if (st != MXP_OK)
        return st;
    printf("\nThe advisor, asked for psnr>=40 (floats only): %s.\n  %s\n", mxp_dtype_name(adv.dtype), adv.reason);
    printf("int8's PSNR looks fine because PSNR is relative to max |x| = the outliers; its\n"
           "p99 relative error and the weights flushed to zero show the scale they forced\n"
           "(step = max |x| / 127).  Per-channel scales or clipping the outliers (mxp's\n"
           "percentile, MSE and KL observers) are the usual cures.\n\n");
    quant_gemm_result r;
    mxp_array *a = NULL, *b = NULL;
    st = quant_gemm_random(TQ_GEMM_M, TQ_GEMM_NK, TQ_GEMM_NK, 1, &a, &b);
    if (st == MXP_OK)
        st = quant_gemm_measure(a, b, QG_REPS, &r);
    mxp_array_free(a);
    mxp_array_free(b);
    if (st != MXP_OK)
        return st;
    printf("The quantized GEMM (`mxp quant-gemm`), M = %d, N = K = %d: uint8 activations per\n"
           "tensor by int8 weights per column, int32 sums, dequantized to float32:\n\n",
           TQ_GEMM_M, TQ_GEMM_NK);
    printf("  %-22s %9s %12s %9s %12s %8s\n", "path", "GEMM ms", "pipeline ms", "GEMM x", "pipeline x", "PSNR dB");
    for (int p = 0; p < 2; p++) {
        char psnr[32] = "ref";
        if (p > 0)
            snprintf(psnr, sizeof psnr, "%.1f", r.path[p].report.psnr_db);
        printf("  %-22s %9.3f %12.3f %8.2fx %11.2fx %8s\n", quant_gemm_path_names[p], r.path[p].gemm_s * 1e3,
               r.path[p].pipeline_s * 1e3, r.path[0].gemm_s / r.path[p].gemm_s,
               r.path[0].gemm_s / r.path[p].pipeline_s, psnr);
    }
    printf("\n(pipeline = calibrating and quantizing the activations, then the GEMM.)\n");
    return MXP_OK;
}

int tour_quant(void)
{
    tour_heading(9, "Quantization: int8 next to the float dtypes");
    printf("A weight tensor of %d values N(0, 0.02) with %d outliers 100x larger (+-2),\n"
           "stored in each dtype the advisor tries and in int8 with one scale for the\n"
           "tensor (symmetric min/max, by fake quantization).  Look at p99 relative error\n"
           "and how many weights become zero.\n\n", TQ_N, TQ_OUTLIERS);
    const int64_t len = TQ_N;
    mxp_array *x = NULL;
    mxp_status st = mxp_array_random_normal(&x, MXP_F32, 1, &len, 0, 0.02, 9);
    if (st == MXP_OK) {
        float *w = mxp_array_data(x);
        for (uint64_t i = 0; i < TQ_OUTLIERS; i++)
            w[(i * 2654435761u + 777u) % TQ_N] = i % 2 ? -2.0f : 2.0f;
        st = section(x);
    }
    mxp_array_free(x);
    return st == MXP_OK ? CLI_OK : cli_mxp_error("tour", NULL, st);
}
