/* mxp bench — the list of benchmarks; each one lives in bench_<name>.c. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct cli_benchmark {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_benchmark;

static const cli_benchmark benchmarks[] = {
    { "convert", cli_bench_convert, "mxp_convert throughput per dtype pair and rounding mode, vs memcpy" },
    { "ops", cli_bench_ops, "add, sum, exp, tanh, gelu in float32/float16/bfloat16, vs memcpy and NumPy" },
    { "quant", cli_bench_quant, "int8 mxp_quantize vs memcpy and PyTorch; mxp_qlinear vs float32 GEMM and PyTorch" },
    { "gemm", cli_bench_gemm, "mxp_gemm GFLOPS per dtype vs OpenBLAS and oneDNN (when installed)" },
    { "nn", cli_bench_nn, "softmax, layer/RMS norm, l2_normalize, take in float32/bfloat16, vs memcpy (goal 0.8x)" },
    { "peak", cli_bench_peak, "the in-register multiply-add peak of the ISA level in use, one thread" },
    { "fft", cli_bench_fft, "mxp_fft / mxp_rfft float32 vs KISS FFT called directly (goal: within 1.5x)" },
    { "profile", cli_bench_profile, "the profiler's cost per call, off and on (goal: <= 5% on 10 us calls)" },
};
enum { BENCHMARK_COUNT = sizeof benchmarks / sizeof benchmarks[0] };

static void print_usage(FILE *f)
{
    fprintf(f, "usage: mxp bench <benchmark> [options]\n\nBenchmarks:\n\n");
    for (int i = 0; i < BENCHMARK_COUNT; i++)
        fprintf(f, "  %-9s %s\n", benchmarks[i].name, benchmarks[i].summary);
    fprintf(f, "\n'mxp bench <benchmark> --help' describes its options.\n");
}

int cli_bench(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_USAGE;
    }
    if (cli_is_help(argv[1])) {
        print_usage(stdout);
        return CLI_OK;
    }
    for (int i = 0; i < BENCHMARK_COUNT; i++) {
        if (!strcmp(argv[1], benchmarks[i].name))
            return benchmarks[i].run(argc - 1, argv + 1);
    }
    return cli_usage_error("bench", "unknown benchmark '%s'", argv[1]);
}
