/* mxp bench peak — the in-register peak of the multiply-add instructions
 * the GEMM kernels of the ISA level in use are built on (mxp_peak_gflops),
 * on the calling thread: the ceiling a GEMM's "% of peak" is measured
 * against (python/benchmarks/goals.py, the tour's part 8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The ops, in the order printed, with their units. */
static const struct {
    mxp_peak_op op;
    const char *unit;
} ops[] = {
    { MXP_PEAK_F32_FMA, "GFLOPS" },
    { MXP_PEAK_F64_FMA, "GFLOPS" },
    { MXP_PEAK_BF16_DOT, "GFLOPS" },
    { MXP_PEAK_U8S8_DOT, "GOPS" },
};
enum { OPS = sizeof ops / sizeof ops[0] };

static void usage(FILE *f)
{
    fprintf(f, "usage: mxp bench peak [--reps R] [--json]\n\n"
               "Measures, on one thread, the peak rate of the multiply-add instructions the\n"
               "GEMM kernels of the ISA level in use are built on: an in-register loop of\n"
               "12 independent chains (no loads), the best of R runs of ~10 ms after a\n"
               "warm-up (the best, not the median: interference only ever slows a run).\n"
               "MXP_ISA=scalar|avx2|avx512|avx512bf16|amx caps the level, as for every command.\n\n"
               "  f32_fma, f64_fma   vfmadd (256-bit at avx2, 512-bit from avx512): GFLOPS,\n"
               "                     a multiply-add counting 2\n"
               "  bf16_dot           vdpbf16ps (avx512bf16 level): GFLOPS\n"
               "  u8s8_dot           vpdpbusd (avx512bf16 level): GOPS, integer operations\n"
               "The scalar level has no loop: nothing is printed for it.\n\n"
               "  --reps R   runs, the best reported (default 9)\n"
               "  --json     one JSON object: isa, reps and results, one object per loop:\n"
               "             op, kernel, unit, gflops\n");
}

int cli_bench_peak(int argc, char **argv)
{
    bool json = false;
    int reps = 9;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (cli_option(argc, argv, &i, "--reps", &v) == 1) {
            reps = atoi(v);
            if (reps < 1 || reps > 1000)
                return cli_usage_error("bench peak", "--reps wants 1..1000, not '%s'", v);
        } else {
            return cli_bad_argument("bench peak", argv[i]);
        }
    }
    const mxp_isa isa = mxp_get_isa();
    if (json) {
        cli_json_begin("bench peak");
        cli_json_str("isa", mxp_isa_name(isa));
        cli_json_int("reps", reps);
        cli_json_array("results");
    } else {
        printf("peak of one thread at the isa level %s (best of %d runs)\n\n", mxp_isa_name(isa), reps);
        printf("  %-9s %-32s %10s\n", "op", "kernel", "rate");
    }
    int printed = 0;
    for (int l = 0; l < OPS; l++) {
        const char *kernel = mxp_peak_kernel_name(ops[l].op);
        if (!kernel)
            continue;
        const char *op = mxp_peak_op_name(ops[l].op);
        const double g = mxp_peak_gflops(ops[l].op, reps);
        printed++;
        if (json) {
            cli_json_object(NULL);
            cli_json_str("op", op);
            cli_json_str("kernel", kernel);
            cli_json_str("unit", ops[l].unit);
            cli_json_num("gflops", g);
            cli_json_close();
        } else {
            printf("  %-9s %-32s %10.1f %s\n", op, kernel, g, ops[l].unit);
        }
    }
    if (json)
        cli_json_end();
    else if (!printed)
        printf("  (no peak loop at this level)\n");
    return CLI_OK;
}
