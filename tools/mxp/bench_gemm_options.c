/* mxp bench gemm: the options, the help text and the standard shape sets.
 * The runner is bench_gemm.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_gemm.h"

static const char *const cmd_name = "bench gemm";


/* The standard set (make bench): square sizes, then the LLM shapes: one
 * token (M = 1, a matrix-vector product that streams B), a small and a
 * larger batch against a 4096 x 4096 weight matrix. */
static const gemm_shape standard_shapes[] = {
    { 256, 256, 256 }, { 512, 512, 512 }, { 1024, 1024, 1024 }, { 2048, 2048, 2048 },
    { 1, 4096, 4096 }, { 16, 4096, 4096 }, { 128, 4096, 4096 },
};
/* --set small: where per-call costs (checks, dispatch, workspaces,
 * threads) show next to the arithmetic. */
static const gemm_shape small_shapes[] = { { 32, 32, 32 }, { 64, 64, 64 }, { 128, 128, 128 } };
static const mxp_dtype standard_dtypes[] = { MXP_F32, MXP_F64, MXP_BF16, MXP_U8 };
static const mxp_dtype supported_dtypes[] = { MXP_F32, MXP_F64, MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2, MXP_U8 };

static void print_help(void)
{
    printf("usage: mxp bench gemm [--dtype D] [--m M] [--n N] [--k K] [--threads T] [--reps R]\n"
           "                      [--alternate] [--json]\n"
           "       mxp bench gemm --set standard|small [--dtype D] [--threads T] [--reps R]\n"
           "                      [--alternate] [--json]\n\n"
           "Times C = A * B (row-major, no transposes, alpha 1, beta 0) with mxp_gemm and\n"
           "with the peer library for the dtype, in this process: each run of R goes\n"
           "through every implementation in turn (the starting one rotating), after one\n"
           "untimed warm-up call each (then ~50 ms more of calls; calls shorter than\n"
           "20 ms are timed in batches of at least 20 ms), and the median time per\n"
           "implementation is reported.  A and B hold random normal values of the\n"
           "dtype (no subnormals); u8s8's A is uniform over 0..255;\n"
           "C is float32, float64 for f64.\n\n"
           "  --dtype D      f32, f64, bf16, f16, e4m3, e5m2 or u8s8 (uint8 A x int8 B ->\n"
           "                 int32 C; GFLOPS then counts integer operations) (default f32)\n"
           "  --m M, --n N, --k K\n"
           "                 A is M x K, B is K x N (default 1024 each; suffixes K, M)\n"
           "  --threads T    threads for mxp (mxp_set_num_threads) and for the peers\n"
           "                 (OPENBLAS_NUM_THREADS / openblas_set_num_threads, OMP_NUM_THREADS /\n"
           "                 omp_set_num_threads for oneDNN's OpenMP); default 1.  mxp splits\n"
           "                 the rows of C, or its columns when M is small.  With T > 1 the\n"
           "                 peers' idle threads are asked not to spin through the others'\n"
           "                 runs (OMP_WAIT_POLICY=passive, OPENBLAS_THREAD_TIMEOUT=4, unless\n"
           "                 set); on a shared machine such figures are rough\n"
           "  --reps R       timed runs of each implementation, median reported (default 7;\n"
           "                 31 with --alternate)\n"
           "  --alternate    cold calls: no warm-up and no batches; from the first call on,\n"
           "                 mxp and the peers are called in turn, one call each per round\n"
           "                 (the first one rotating), each call timed alone, so every mxp\n"
           "                 call follows another library's (its allocations, its use of the\n"
           "                 caches).  ms is the median per call; the notes add the first\n"
           "                 call's time and the minor page faults per call (getrusage,\n"
           "                 the process's: other threads' too).  Shows what per-call setup\n"
           "                 (workspaces, page faults, thread start) costs\n"
           "  --set standard the standard set, as `make bench` runs it: M = N = K = 256,\n"
           "                 512, 1024, 2048, then M = 1, 16, 128 with N = K = 4096, for\n"
           "                 f32, f64, bf16 and u8s8 (or only --dtype D); not with\n"
           "                 --m/--n/--k\n"
           "  --set small    M = N = K = 32, 64, 128 of --dtype D (default f32): the\n"
           "                 per-call costs next to the arithmetic\n"
           "  --json         one JSON object instead of the table: threads, reps, isa,\n"
           "                 peers (the libraries found, null for missing ones) and\n"
           "                 results, one object per implementation and case: dtype m n\n"
           "                 k impl available seconds gflops ratio b_gbps diff detail\n"
           "                 (null where a column shows \"-\")\n\n"
           "Implementations compared (the row \"mxp\" is mxp_gemm on the dtype itself):\n"
           "  f32            OpenBLAS cblas_sgemm and oneDNN dnnl_sgemm\n"
           "  f64            OpenBLAS cblas_dgemm\n"
           "  bf16           oneDNN matmul primitive, bf16 x bf16 -> f32\n"
           "  u8s8           oneDNN dnnl_gemm_u8s8s32, zero points 0; and \"mxp, wide B\",\n"
           "                 mxp_gemm on a B uniform over -128..127.  The normal B (|b| <=\n"
           "                 55) has no K-pair with |b0| + |b1| > 128, so without VNNI\n"
           "                 the row \"mxp\" takes the vpmaddubsw kernel (as 7-bit weights\n"
           "                 do); a wide B takes the exact K-pair kernel (docs/gemm.md)\n"
           "  f16, e4m3, e5m2\n"
           "                 no library multiplies these on a CPU: the row \"mxp f32\" is\n"
           "                 mxp_gemm on A and B widened to float32 beforehand (outside\n"
           "                 the timing), i.e. what the narrow inputs save or cost; for\n"
           "                 f16 with 2*M*N*K <= 1.1e8, NumPy's float16 matmul is also\n"
           "                 timed, by /usr/bin/python3 in a child process (its output is\n"
           "                 float16; it runs at well under 1 GFLOPS)\n\n"
           "Columns:\n"
           "  GFLOPS         2*M*N*K / median time / 1e9\n"
           "  ms             median time of one call, milliseconds\n"
           "  mxp/this       mxp's GFLOPS / this row's GFLOPS: above 1, mxp is faster;\n"
           "                 on the memcpy row, mxp's B GB/s / memcpy's B GB/s\n"
           "  B GB/s         M = 1 only: K*N*itemsize (B's bytes) / median time, the rate\n"
           "                 at which the call streams B; the memcpy row copies B's bytes\n"
           "                 to another buffer in the same alternation (it reads and\n"
           "                 writes them, so it moves twice what the column counts)\n"
           "  diff           max |C - C_mxp| / max |C_mxp| over C, from the warm-up calls:\n"
           "                 a check that both computed the same product (a warning is\n"
           "                 printed above 1e-3, 1e-10 for f64)\n"
           "  kernel / notes mxp's micro-kernel; the peer's library, version and\n"
           "                 implementation; or why a peer is missing\n\n"
           "Peers (optional; loaded with dlopen, absent ones print \"-\"):\n"
           "  OpenBLAS       /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 or\n"
           "                 libopenblas.so.0: Debian package libopenblas0-pthread\n"
           "                 (libopenblas-dev pulls it in)\n"
           "  oneDNN         libdnnl.so.2 (or .so.3): Debian 12 package libdnnl2\n"
           "                 (libdnnl-dev pulls it in)\n"
           "  `scripts/install-deps.sh bench` installs both; `make bench` runs it first.\n");
}

static int parse_dim(const char *opt, const char *v, size_t *out)
{
    if (cli_parse_size(v, out) || *out == 0 || *out > MAX_DIM)
        return cli_usage_error(cmd_name, "%s wants 1..%d, not '%s'", opt, MAX_DIM, v);
    return CLI_OK;
}

static int parse_int(const char *opt, const char *v, int lo, int hi, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end != '\0' || x < lo || x > hi)
        return cli_usage_error(cmd_name, "%s wants %d..%d, not '%s'", opt, lo, hi, v);
    *out = (int)x;
    return CLI_OK;
}

static int parse_dtype(gemm_args *a, const char *v)
{
    mxp_dtype t = strcmp(v, "u8s8") ? mxp_dtype_from_name(v) : MXP_U8; /* MXP_U8 stands for u8 x s8 */
    if (t == MXP_U8 && strcmp(v, "u8s8"))
        t = 0;
    for (size_t i = 0; t && i < sizeof supported_dtypes / sizeof supported_dtypes[0]; i++) {
        if (supported_dtypes[i] == t) {
            a->dtypes[0] = t;
            a->dtype_count = 1;
            a->dtype_given = 1;
            return CLI_OK;
        }
    }
    return cli_usage_error(cmd_name, "--dtype wants f32, f64, bf16, f16, e4m3, e5m2 or u8s8, not '%s'", v);
}

static int parse_option(gemm_args *a, int argc, char **argv, int *i)
{
    const char *v = NULL;
    int m;
    if (!strcmp(argv[*i], "--json")) {
        a->json = 1;
        return CLI_OK;
    }
    if (!strcmp(argv[*i], "--alternate")) {
        a->alternate = 1;
        return CLI_OK;
    }
    if ((m = cli_option(argc, argv, i, "--dtype", &v)) > 0)
        return parse_dtype(a, v);
    if (m == 0 && (m = cli_option(argc, argv, i, "--m", &v)) > 0)
        return a->shape_given = 1, parse_dim("--m", v, &a->m);
    if (m == 0 && (m = cli_option(argc, argv, i, "--n", &v)) > 0)
        return a->shape_given = 1, parse_dim("--n", v, &a->n);
    if (m == 0 && (m = cli_option(argc, argv, i, "--k", &v)) > 0)
        return a->shape_given = 1, parse_dim("--k", v, &a->k);
    if (m == 0 && (m = cli_option(argc, argv, i, "--threads", &v)) > 0)
        return parse_int("--threads", v, 1, MAX_THREADS, &a->threads);
    if (m == 0 && (m = cli_option(argc, argv, i, "--reps", &v)) > 0)
        return a->reps_given = 1, parse_int("--reps", v, 1, MAX_REPS, &a->reps);
    if (m == 0 && (m = cli_option(argc, argv, i, "--set", &v)) > 0) {
        if (strcmp(v, "standard") && strcmp(v, "small"))
            return cli_usage_error(cmd_name, "--set knows 'standard' and 'small', not '%s'", v);
        a->standard = strcmp(v, "small") ? 1 : 2;
        return CLI_OK;
    }
    if (m < 0)
        return cli_usage_error(cmd_name, "option '%s' needs a value", argv[*i]);
    return cli_bad_argument(cmd_name, argv[*i]);
}

int bench_gemm_parse_args(gemm_args *a, int argc, char **argv, int *done)
{
    *a = (gemm_args){ .m = 1024, .n = 1024, .k = 1024, .threads = 1, .reps = 7 };
    a->dtypes[0] = MXP_F32;
    a->dtype_count = 1;
    *done = 0;
    int rc = CLI_OK;
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        if (cli_is_help(argv[i])) {
            print_help();
            *done = 1;
            return CLI_OK;
        }
        rc = parse_option(a, argc, argv, &i);
    }
    if (rc != CLI_OK)
        return rc;
    if (a->alternate && !a->reps_given)
        a->reps = 31;
    if (a->standard && a->shape_given)
        return cli_usage_error(cmd_name, "--set fixes the shapes: drop --m, --n and --k");
    if (a->standard == 2) {
        a->shape_count = (int)(sizeof small_shapes / sizeof small_shapes[0]);
        memcpy(a->shapes, small_shapes, sizeof small_shapes);
    } else if (a->standard) {
        a->shape_count = (int)(sizeof standard_shapes / sizeof standard_shapes[0]);
        memcpy(a->shapes, standard_shapes, sizeof standard_shapes);
        if (!a->dtype_given) {
            a->dtype_count = (int)(sizeof standard_dtypes / sizeof standard_dtypes[0]);
            memcpy(a->dtypes, standard_dtypes, sizeof standard_dtypes);
        }
    } else {
        if ((double)a->m * (double)a->k > 0x1p31 || (double)a->k * (double)a->n > 0x1p31 ||
            (double)a->m * (double)a->n > 0x1p31)
            return cli_usage_error(cmd_name, "M*K, K*N and M*N must each stay below 2^31 elements");
        a->shapes[0] = (gemm_shape){ a->m, a->n, a->k };
        a->shape_count = 1;
    }
    return CLI_OK;
}
