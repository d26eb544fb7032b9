/* mxp — the command-line tool: finds the subcommand and runs it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

static const cli_command commands[] = {
    { "info", cli_info, "version, CPU, ISA level, vector math (SLEEF/libm), dtype traits, conversion kernels" },
    { "tour", cli_tour, "a guided report: the machine, dtypes, rounding error, speed (make demo)" },
    { "bench", cli_bench, "benchmarks: mxp bench convert|ops|nn|gemm|quant|peak [options] [--json]" },
    { "check", cli_check, "consistency checks: mxp check gemm (every implementation vs float64), mxp check op NAME" },
    { "op", cli_op, "operator plugins: mxp op list --plugin lib.so (docs/plugins.md)" },
    { "cast-value", cli_cast_value, "convert one number to a dtype; show its bits and flags" },
    { "stat", cli_stat, "what a .npy file holds: shape, dtype, order, min/max/mean/std, NaN/inf counts" },
    { "show", cli_show, "print a .npy file's array as NumPy prints it" },
    { "cast", cli_cast, "convert a .npy or .safetensors file to another dtype: mxp cast IN OUT --to bf16" },
    { "quantize", cli_quantize, "a .safetensors model's 2-d weights to int8, int4, mxfp4 or nvfp4 in the common layouts" },
    { "quant-gemm", cli_quant_gemm, "the int8 pipeline: calibrate, quantize, int8 GEMM, vs float32 GEMM" },
    { "train", cli_train, "mixed-precision training of an MLP (--model cnn: a CNN) on the digits: fp32/bf16/fp16, loss scaling, int8/fp8" },
    { "analyze", cli_analyze, "error of a .npy file (each tensor of a .safetensors) in each float dtype; the smallest meeting --require" },
};
enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };

static void print_usage(FILE *f)
{
    fprintf(f, "usage: mxp <command> [options]\n"
               "       mxp --help | --version\n\n"
               "mxp %s — mixed-precision numerics.  Commands:\n\n", mxp_version());
    for (int i = 0; i < COMMAND_COUNT; i++)
        fprintf(f, "  %-11s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'mxp <command> --help' describes a command's options.  info, stat, analyze,\n"
               "check gemm, quant-gemm and every bench take --json: one JSON object on stdout.\n"
               "Errors go to stderr as 'mxp <command>: what went wrong'; the exit status is 1\n"
               "when the work failed, 2 for a usage error.  cast and analyze show their\n"
               "progress on stderr when it is a terminal and the work takes over a second.\n\n"
               "Environment: MXP_ISA=scalar|avx2|avx512|avx512bf16|amx caps the kernels used;\n"
               "MXP_NUM_THREADS=N sets the threads of GEMM and quantization (default: the CPUs);\n"
               "MXP_HUGEPAGES=0|1 turns off/on huge pages for buffers of 4 MiB and more\n"
               "(default on; 'mxp info' shows the kernel's THP mode);\n"
               "MXP_PROGRESS_DELAY=S shows progress after S seconds instead of 1;\n"
               "MXP_PLUGINS=PATH[:PATH...] loads operator plugins for op list and check op.\n");
}

static const cli_command *find_command(const char *name)
{
    for (int i = 0; i < COMMAND_COUNT; i++) {
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    }
    return NULL;
}

/* "mxp help [command]" is "mxp [command] --help". */
static int run_help(int argc, char **argv)
{
    if (argc < 3) {
        print_usage(stdout);
        return CLI_OK;
    }
    const cli_command *c = find_command(argv[2]);
    if (!c)
        return cli_usage_error(NULL, "unknown command '%s'", argv[2]);
    char help[] = "--help";
    char *sub_argv[] = { argv[2], help, NULL };
    return c->run(2, sub_argv);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (cli_is_help(name)) {
        print_usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V")) {
        printf("mxp %s\n", mxp_version());
        return CLI_OK;
    }
    if (!strcmp(name, "help"))
        return run_help(argc, argv);
    const cli_command *c = find_command(name);
    if (!c) {
        if (name[0] == '-')
            return cli_usage_error(NULL, "unknown option '%s'", name);
        return cli_usage_error(NULL, "unknown command '%s'", name);
    }
    int rc = c->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 && rc == CLI_OK) {
        fprintf(stderr, "mxp %s: writing the output: %s\n", name, strerror(errno));
        rc = CLI_FAILED;
    }
    mxp_shutdown(); /* the pool's workers joined: nothing of mxp's left for a leak checker */
    return rc;
}
