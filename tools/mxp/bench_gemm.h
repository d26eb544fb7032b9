/* mxp bench gemm: its options (bench_gemm_options.c) and what the runner
 * (bench_gemm.c) needs of them. */
#ifndef MXP_BENCH_GEMM_H
#define MXP_BENCH_GEMM_H

#include <stddef.h>

#include "cli.h"

enum { MAX_REPS = 1000, MAX_SHAPES = 16, MAX_DTYPES = 6, MAX_THREADS = 256 };
enum { MAX_DIM = 1 << 20 };

typedef struct gemm_shape { size_t m, n, k; } gemm_shape;

typedef struct gemm_args {
    mxp_dtype dtypes[MAX_DTYPES];
    int dtype_count;
    gemm_shape shapes[MAX_SHAPES];
    int shape_count;
    size_t m, n, k; /* the single case */
    int shape_given, dtype_given, standard; /* standard: 1 standard, 2 small */
    int threads, reps, json;
    int alternate, reps_given; /* --alternate: no warm-up, one call at a time */
} gemm_args;

/* Parses argv into *a (defaults, --set expanded into shapes and dtypes).
 * Returns CLI_OK with *done set after --help, CLI_OK to run, or a usage
 * error's status. */
int bench_gemm_parse_args(gemm_args *a, int argc, char **argv, int *done);

#endif
