/* mxp tour, part 8: GEMM throughput per dtype at n = 1024 beside the
 * machine's measured peak for the instruction the kernel uses, and each
 * dtype's error against float64 — the "dtype performance table", measured. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { N = 1024, NE = 192 };

static double gemm_gflops(mxp_dtype dt, mxp_dtype ct, const void *a, const void *b, void *c)
{
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        double t0 = cli_now();
        if (mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, N, N, N, 1.0, a, dt, N, b, dt, N, 0.0, c, ct, N, NULL) != MXP_OK)
            return -1;
        double t = cli_now() - t0;
        best = t < best ? t : best;
    }
    return 2.0 * N * N * N / best / 1e9;
}

/* Max |C - C64| / max |C64| on an NE^3 product of N(0,1) inputs. */
static double error_vs_f64(mxp_dtype dt, const double *a64, const double *b64, const double *c64)
{
    size_t sz = mxp_dtype_itemsize(dt);
    void *a = malloc(NE * NE * sz), *b = malloc(NE * NE * sz);
    double *c = malloc(NE * NE * sizeof *c);
    float *c32 = malloc(NE * NE * sizeof *c32);
    mxp_convert(a, dt, a64, MXP_F64, NE * NE, NULL);
    mxp_convert(b, dt, b64, MXP_F64, NE * NE, NULL);
    mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, NE, NE, NE, 1.0, a, dt, NE, b, dt, NE, 0.0, c32, MXP_F32, NE, NULL);
    mxp_convert(c, MXP_F64, c32, MXP_F32, NE * NE, NULL);
    double worst = 0, scale = 0;
    for (int i = 0; i < NE * NE; i++) {
        worst = fmax(worst, fabs(c[i] - c64[i]));
        scale = fmax(scale, fabs(c64[i]));
    }
    free(a);
    free(b);
    free(c);
    free(c32);
    return worst / scale;
}

int tour_gemm(void)
{
    tour_heading(8, "GEMM: throughput and error per dtype");
    printf("C = A B at n = %d on one thread, beside the peak of the instruction the kernel\n"
           "uses (measured now by an in-register loop), and the error against a float64\n"
           "product of the same N(0,1) data (n = %d, relative to max |C|).  Narrow types buy\n"
           "speed and memory with precision; look at the last column.\n\n", N, NE);
    const int saved_threads = mxp_get_num_threads();
    mxp_set_num_threads(1);
    /* the peak loops' GFLOPS, the best of 9 runs (0: none at this level) */
    const double p32 = mxp_peak_gflops(MXP_PEAK_F32_FMA, 9), p64 = mxp_peak_gflops(MXP_PEAK_F64_FMA, 9);
    const double pbf = mxp_peak_gflops(MXP_PEAK_BF16_DOT, 9);
    const int64_t big = (int64_t)N * N, small = NE * NE;
    mxp_array *x = NULL, *y = NULL, *ex = NULL, *ey = NULL;
    mxp_status st = mxp_array_random_normal(&x, MXP_F32, 1, &big, 0, 1, 1);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&y, MXP_F32, 1, &big, 0, 1, 2);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&ex, MXP_F64, 1, &small, 0, 1, 3);
    if (st == MXP_OK)
        st = mxp_array_random_normal(&ey, MXP_F64, 1, &small, 0, 1, 4);
    double *c64 = malloc(NE * NE * sizeof *c64);
    void *a = malloc((size_t)big * 8), *b = malloc((size_t)big * 8), *c = malloc((size_t)big * 8);
    if (st == MXP_OK)
        st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, NE, NE, NE, 1.0, mxp_array_data(ex), MXP_F64, NE,
                      mxp_array_data(ey), MXP_F64, NE, 0.0, c64, MXP_F64, NE, NULL);
    printf("  %-14s %-38s %9s %14s %7s %12s\n", "dtype", "kernel", "GFLOPS", "peak GFLOPS", "of peak", "error");
    const mxp_dtype types[] = { MXP_F64, MXP_F32, MXP_F16, MXP_BF16, MXP_E4M3, MXP_E5M2 };
    for (size_t t = 0; t < sizeof types / sizeof types[0] && st == MXP_OK; t++) {
        mxp_dtype dt = types[t], ct = dt == MXP_F64 ? MXP_F64 : MXP_F32;
        mxp_convert(a, dt, mxp_array_data(x), MXP_F32, (size_t)big, NULL);
        mxp_convert(b, dt, mxp_array_data(y), MXP_F32, (size_t)big, NULL);
        double g = gemm_gflops(dt, ct, a, b, c);
        const char *kernel = mxp_gemm_kernel_name(dt, dt, NULL);
        double pk = dt == MXP_F64 ? p64 : (strncmp(kernel, "mxp_bf16_", 9) == 0 ? pbf : p32);
        double err = dt == MXP_F64 ? 0 : error_vs_f64(dt, mxp_array_data(ex), mxp_array_data(ey), c64);
        char pks[32] = "-", pct[16] = "-";
        if (pk > 0) {
            snprintf(pks, sizeof pks, "%.0f", pk);
            snprintf(pct, sizeof pct, "%.0f%%", 100 * g / pk);
        }
        printf("  %-14s %-38s %9.1f %14s %7s %12.2e\n", mxp_dtype_name(dt), kernel, g, pks, pct, err);
    }
    printf("\nfloat16 and float8 are widened to float32 while packing, so they run at the\n"
           "float32 rate; bfloat16 uses vdpbf16ps.  The errors are those of rounding the\n"
           "inputs: the products accumulate in float32.\n");
    mxp_set_num_threads(saved_threads);
    free(a);
    free(b);
    free(c);
    free(c64);
    mxp_array_free(x);
    mxp_array_free(y);
    mxp_array_free(ex);
    mxp_array_free(ey);
    return st == MXP_OK ? CLI_OK : cli_mxp_error("tour", NULL, st);
}
