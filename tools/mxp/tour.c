/* mxp tour — a short guided report (what `make demo` shows): the machine,
 * the formats, what rounding does to single values and to long sums, and
 * how fast conversion runs next to memcpy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_help(void)
{
    printf("usage: mxp tour [--no-bench]\n\n"
           "A guided report in ten parts, each table preceded by what to look at:\n"
           "  1. the machine: CPU, ISA level, conversion kernels chosen\n"
           "  2. the floating-point formats: range and precision\n"
           "  3. round trips float64 -> type -> float64 for a few values\n"
           "  4. adding 0.1 ten thousand times in each format, and with a float32 accumulator\n"
           "  5. the same sum in bfloat16 with stochastic rounding\n"
           "  6. conversion speed next to memcpy (about a second)\n"
           "  7. arrays: a float32 array through every dtype, summation algorithms, memory\n"
           "  8. GEMM throughput per dtype beside the measured instruction peak, and error\n"
           "  9. quantization: round-trip table, the dtype advisor, the int8 GEMM pipeline\n"
           " 10. training: the autocast table, the loss scaler, a short `mxp train`\n\n"
           "  --no-bench   skip the timed parts 6, 8 and 9 and the run in 10\n");
}

void tour_heading(int number, const char *title)
{
    printf("\n%d. %s\n", number, title);
    for (size_t i = 0; i < strlen(title) + 3; i++)
        putchar('=');
    printf("\n\n");
}

/* ---- 1. the machine ----------------------------------------------------- */

static void print_kernel(const char *label, mxp_dtype dst, mxp_dtype src, mxp_rounding mode)
{
    mxp_convert_opts opts = { .rounding = mode };
    printf("  %-24s %s\n", label, mxp_convert_kernel_name(dst, src, &opts));
}

static void section_machine(void)
{
    tour_heading(1, "The machine");
    printf("mxp %s checks the CPU once and uses the most capable kernels it and the OS\n"
           "allow (MXP_ISA=scalar|avx2|avx512|avx512bf16|amx caps the level).  \"reference\" is\n"
           "the portable converter that every SIMD kernel is tested against.\n\n",
           mxp_version());
    cli_print_machine("  ");
    printf("\n  kernel for\n");
    print_kernel("f32 -> bf16", MXP_BF16, MXP_F32, MXP_ROUND_NEAREST_EVEN);
    print_kernel("f32 -> bf16 stochastic", MXP_BF16, MXP_F32, MXP_ROUND_STOCHASTIC);
    print_kernel("bf16 -> f32", MXP_F32, MXP_BF16, MXP_ROUND_NEAREST_EVEN);
    print_kernel("f32 -> f16", MXP_F16, MXP_F32, MXP_ROUND_NEAREST_EVEN);
    print_kernel("f16 -> f32", MXP_F32, MXP_F16, MXP_ROUND_NEAREST_EVEN);
    print_kernel("f32 -> e4m3", MXP_E4M3, MXP_F32, MXP_ROUND_NEAREST_EVEN);
}

/* ---- 2. the formats ----------------------------------------------------- */

static void section_formats(void)
{
    tour_heading(2, "The floating-point formats");
    printf("Exponent bits buy range (max, min subnormal); mantissa bits buy precision\n"
           "(eps, the gap above 1.0).  Compare bfloat16 with float16: bfloat16 keeps\n"
           "float32's range with only 7 mantissa bits; float16 is 8x more precise but\n"
           "overflows past 65504.  (`mxp info` lists every dtype, integers too.)\n\n");
    printf("  %-14s %4s %8s %11s %13s %10s  %s\n", "type", "bits", "exp/mant", "max",
           "min subnormal", "eps", "inf/nan");
    for (size_t i = 0; i < sizeof cli_float_types / sizeof cli_float_types[0]; i++) {
        const mxp_dtype_traits *t = mxp_dtype_get_traits(cli_float_types[i]);
        char em[16], max[16], sub[16], eps[16];
        snprintf(em, sizeof em, "%d/%d", t->exp_bits, t->mant_bits);
        printf("  %-14s %4d %8s %11s %13s %10s  %s/%s\n", t->name, t->bits, em,
               cli_num(max, sizeof max, t->max), cli_num(sub, sizeof sub, t->min_subnormal),
               cli_num(eps, sizeof eps, t->eps), t->has_inf ? "yes" : "no", t->has_nan ? "yes" : "no");
    }
}

/* ---- 3. round trips ----------------------------------------------------- */

static const char *what_happened(double in, double out, const mxp_dtype_traits *t)
{
    if (isinf(out) || isnan(out))
        return "overflow";
    if (out == in)
        return "exact";
    if (out == 0)
        return "underflow";
    if (fabs(out) < t->min_normal)
        return "subnormal";
    return "rounded";
}

static int round_trip_row(double v, int first, mxp_dtype type)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(type);
    double out;
    mxp_status st = cli_round_trip(v, type, NULL, &out);
    if (st != MXP_OK)
        return cli_mxp_error("tour", NULL, st);
    char vbuf[24] = "", rel[24] = "0";
    if (first)
        snprintf(vbuf, sizeof vbuf, "%g", v);
    if (out != v)
        snprintf(rel, sizeof rel, "%.2e", isfinite(out) ? fabs(out - v) / fabs(v) : INFINITY);
    printf("  %-7s %-14s %16.9g %10s   %s\n", vbuf, t->name, out, rel, what_happened(v, out, t));
    return CLI_OK;
}

static int section_round_trips(void)
{
    static const double values[] = { 1.0, 0.1, 0.01, 0.001, 1e-8, 1e-16, 1e5 };
    tour_heading(3, "Round trips: float64 -> type -> float64");
    printf("Each value is converted to the type (round to nearest even) and back.  Look at\n"
           "the relative error: about eps/2 or less while the value is a normal number of\n"
           "the type, larger once it falls among the subnormals (fewer significant bits),\n"
           "total when it underflows to 0.  1e5 is beyond float16's and float8's max.\n\n");
    printf("  %-7s %-14s %16s %10s   %s\n", "value", "type", "stored", "rel.error", "what happened");
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        for (size_t k = 0; k < sizeof cli_float_types / sizeof cli_float_types[0]; k++) {
            if (round_trip_row(values[i], k == 0, cli_float_types[k]) != CLI_OK)
                return CLI_FAILED;
        }
        if (i + 1 < sizeof values / sizeof values[0])
            printf("\n");
    }
    return CLI_OK;
}

/* ---- 6. speed ----------------------------------------------------------- */

enum { SPEED_N = 16 << 20, SPEED_REPS = 5, SPEED_MIN_N = 1 << 20 };
static const double speed_budget_s = 1.2; /* for the timed runs, both pairs */

/* The largest n <= SPEED_N whose 2 x 5 runs fit the budget, judged from one
 * conversion of SPEED_MIN_N elements per pair. */
static size_t speed_size(const float *src, void *dst)
{
    double per_elem = 0;
    for (int p = 0; p < 2; p++) {
        double t0 = cli_now();
        mxp_convert(dst, p ? MXP_F16 : MXP_BF16, src, MXP_F32, SPEED_MIN_N, NULL);
        per_elem += (cli_now() - t0) / SPEED_MIN_N;
    }
    size_t n = SPEED_N;
    while (n > SPEED_MIN_N && per_elem * (double)n * SPEED_REPS * 1.3 > speed_budget_s)
        n /= 2;
    return n;
}

static int speed_row(mxp_dtype dst_type, const float *src, void *dst, size_t n)
{
    cli_bench_case c = { .src = MXP_F32, .dst = dst_type, .n = n, .reps = SPEED_REPS };
    cli_bench_result r;
    mxp_status st = cli_bench_run(&c, src, dst, &r);
    if (st != MXP_OK)
        return cli_mxp_error("tour", NULL, st);
    char pair[24];
    snprintf(pair, sizeof pair, "f32 -> %s", mxp_dtype_get_traits(dst_type)->short_name);
    printf("  %-12s %-28s %9.2f %12.2f %8.2f\n", pair, mxp_convert_kernel_name(dst_type, MXP_F32, NULL),
           r.mxp_gbps, r.memcpy_gbps, r.mxp_gbps / r.memcpy_gbps);
    return CLI_OK;
}

static int section_speed(void)
{
    tour_heading(6, "Conversion speed");
    float *src = cli_alloc((size_t)SPEED_N * sizeof(float));
    void *dst = cli_alloc((size_t)SPEED_N * 3); /* f32 -> 16-bit copies 3 bytes per element */
    int rc = CLI_OK;
    if (!src || !dst) {
        fprintf(stderr, "mxp tour: cannot allocate the benchmark buffers\n");
        rc = CLI_FAILED;
    } else {
        memset(dst, 0, (size_t)SPEED_N * 3);
        mxp_status st = cli_fill_random(src, MXP_F32, SPEED_N, 42);
        if (st != MXP_OK)
            rc = cli_mxp_error("tour", NULL, st);
    }
    if (rc == CLI_OK) {
        size_t n = speed_size(src, dst);
        printf("Converting %zuM float32 values (round to nearest even), median of %d runs,\n"
               "next to memcpy moving as many bytes.  GB/s counts bytes read + written; a\n"
               "ratio near 1 means conversion runs at memory speed.\n", n >> 20, SPEED_REPS);
        if (n < SPEED_N)
            printf("(The kernels in use are slow here, so n is cut down to keep the tour\n"
                   "short; `mxp bench convert` measures 64M.)\n");
        printf("\n");
        printf("  %-12s %-28s %9s %12s %8s\n", "pair", "kernel", "mxp GB/s", "memcpy GB/s", "ratio");
        rc = speed_row(MXP_BF16, src, dst, n);
        if (rc == CLI_OK)
            rc = speed_row(MXP_F16, src, dst, n);
    }
    free(src);
    free(dst);
    return rc;
}

int cli_tour(int argc, char **argv)
{
    int bench = 1;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            print_help();
            return CLI_OK;
        }
        if (strcmp(argv[i], "--no-bench") != 0)
            return cli_bad_argument("tour", argv[i]);
        bench = 0;
    }
    printf("mxp tour: mixed precision in ten short parts.\n");
    section_machine();
    section_formats();
    int rc = section_round_trips();
    if (rc == CLI_OK)
        rc = tour_sums();
    if (rc == CLI_OK && bench)
        rc = section_speed();
    if (rc == CLI_OK)
        rc = tour_arrays();
    if (rc == CLI_OK && bench)
        rc = tour_gemm();
    if (rc == CLI_OK && bench)
        rc = tour_quant();
    if (rc == CLI_OK)
        rc = tour_train(bench);
    return rc;
}
