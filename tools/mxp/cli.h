/* The mxp command-line tool: what the subcommand files share.
 * Exit codes: 0 success, 1 an mxp call failed, 2 bad usage. */
#ifndef MXP_CLI_H
#define MXP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "mxp.h"

#if defined(__GNUC__)
#define CLI_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define CLI_PRINTF(fmt, args)
#endif

enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2 };

/* Subcommands: argv[0] is the command's own name ("info", "convert" ...). */
int cli_info(int argc, char **argv);
int cli_tour(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_bench_convert(int argc, char **argv);
int cli_bench_ops(int argc, char **argv);
int cli_bench_nn(int argc, char **argv);
/* mxp bench nn's conv2d, pooling and batch norm rows (bench_conv.c), after its own. */
mxp_status cli_bench_nn_conv(int reps, bool json);
int cli_bench_gemm(int argc, char **argv);
int cli_cast_value(int argc, char **argv);
int cli_stat(int argc, char **argv);
int cli_cast(int argc, char **argv);
int cli_quantize(int argc, char **argv); /* quantize.c: model files */
int cli_analyze(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_check_gemm(int argc, char **argv);
int cli_check_op(int argc, char **argv); /* op.c */
int cli_op(int argc, char **argv);       /* op.c: mxp op list */
int cli_quant_gemm(int argc, char **argv);
int cli_bench_quant(int argc, char **argv);
int cli_bench_peak(int argc, char **argv);
int cli_bench_profile(int argc, char **argv); /* bench_profile.c */
int cli_bench_fft(int argc, char **argv);     /* bench_fft.c */
int cli_show(int argc, char **argv);
int cli_train(int argc, char **argv);

/* The tour's parts 4 and 5 (tour_sums.c) and its heading style (tour.c). */
int tour_sums(void);
int tour_arrays(void); /* part 7, tour_arrays.c */
int tour_gemm(void);   /* part 8, tour_gemm.c */
int tour_quant(void);  /* part 9, tour_quant.c */
int tour_train(int bench); /* part 10, tour_train.c (bench: the timed short run) */
void tour_heading(int number, const char *title);

/* ---- errors and options (cli.c) ------------------------------------- */

/* Prints "mxp <cmd>: <message>" and a hint to use --help; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) CLI_PRINTF(2, 3);

/* Prints "mxp <cmd>: <what>: <mxp_last_error()>" (what may be NULL; the
 * status's name when there is no sentence); returns CLI_FAILED. */
int cli_mxp_error(const char *cmd, const char *what, mxp_status st);

/* The usage error for an argument nothing took: "unknown option '-x'" or
 * "unexpected argument 'x'"; returns CLI_USAGE. */
int cli_bad_argument(const char *cmd, const char *arg);

/* mxp analyze of a safetensors file (analyze_safetensors.c), and what it
 * shares with the .npy analysis (analyze.c): "1.5 MiB", the JSON array of
 * a round trip's candidates. */
int cli_analyze_safetensors(const char *path, const mxp_requirement *req, const char *require, bool json);
const char *cli_memory(char *buf, size_t size, size_t bytes);
void cli_analyze_json_candidates(const mxp_roundtrip_row *rows);

/* ---- derived files (derive.c) ---------------------------------------------
 * A safetensors file made from another tensor by tensor, memory bounded by
 * one tensor (mxp quantize, mxp cast --scale).  A command plans each
 * output tensor (which >= 0: output `which` of input tensor src, as its
 * function adds them; -1: input tensor src as it is, ndim and shape then
 * the input's) and writes; fn computes input tensor src's outputs from x,
 * the tensor read as float32 -- possibly more than once a tensor, when its
 * outputs lie apart in the file (the same outputs each time). */
typedef struct cli_outputs {
    mxp_array **arrays;
    size_t n, cap;
} cli_outputs;

/* Appends array a (taken over, freed on failure). */
mxp_status cli_outputs_add(cli_outputs *o, mxp_array *a);
void cli_outputs_clear(cli_outputs *o);

typedef mxp_status (*cli_derive_fn)(void *ctx, size_t src, const mxp_array *x, cli_outputs *out);
typedef struct cli_planned cli_planned;
typedef struct cli_derive {
    const mxp_safetensors *st;
    cli_derive_fn fn;
    void *ctx;
    cli_planned *p;
    size_t n, cap;
    size_t cached; /* the input tensor whose outputs `out` holds; SIZE_MAX: none */
    cli_outputs out;
    long long bytes; /* of the tensors planned */
} cli_derive;

/* false: no memory */
bool cli_derive_plan(cli_derive *d, const char *name, const char *suffix, mxp_dtype t, int ndim,
                     const int64_t *shape, size_t src, int which);
mxp_status cli_derive_write(cli_derive *d, const char *path, size_t nmeta, const char *const *keys,
                            const char *const *values);
void cli_derive_free(cli_derive *d);

/* mxp cast of a safetensors file (cast_safetensors.c): CLI_OK or CLI_FAILED. */
enum { CLI_SCALE_NONE, CLI_SCALE_TENSOR, CLI_SCALE_CHANNEL };
int cli_cast_safetensors(const char *in, const char *out, mxp_dtype to, mxp_convert_opts opts, int scale);

/* mxp_npy_load, its failure printed as cli_mxp_error does: CLI_OK or CLI_FAILED. */
int cli_load_npy(const char *cmd, const char *path, mxp_array **out);

int cli_is_help(const char *arg); /* "--help" or "-h" */

/* Whether dt is a floating-point dtype (what the safetensors commands convert or quantize). */
static inline bool cli_is_float(mxp_dtype dt)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    return t && t->kind == MXP_KIND_FLOAT;
}

/* Matches argv[*i] against option `name` given as "name VALUE" or
 * "name=VALUE".  Returns 1 and sets *value (advancing *i past a separate
 * value), 0 if argv[*i] is another argument, -1 if the value is missing. */
int cli_option(int argc, char **argv, int *i, const char *name, const char **value);

/* Matches the conversion options --rounding MODE, --overflow inf|saturate
 * and --seed N at argv[*i] into opts.  Returns CLI_OK when one matched,
 * CLI_USAGE (message printed) for a bad or missing value, and -1 when
 * argv[*i] is none of them. */
int cli_convert_option(const char *cmd, int argc, char **argv, int *i, mxp_convert_opts *opts);

/* Parses a benchmark's [--n N] [--reps R] [--json] [--help]: returns -1 to
 * go on, or the exit code (help printed with usage, or a usage error). */
int cli_parse_n_reps(const char *cmd, int argc, char **argv, size_t *n, int *reps, bool *json,
                     void (*usage)(FILE *f));

/* Parses a whole decimal size ("65536", "16M", "1G": binary suffixes).
 * Returns 0 on success. */
int cli_parse_size(const char *s, size_t *out);

/* ---- --json (cli_json.c) -------------------------------------------- */

/* One JSON object on stdout per command, written as the command goes:
 * cli_json_begin("stat") opens it with "command":"stat", members follow
 * with their keys (NULL for the elements of an array), cli_json_end closes
 * whatever is open and ends the line.  Numbers that are not finite (a
 * PSNR of an exact round trip, a missing peer's time) are written null. */
void cli_json_begin(const char *command);
void cli_json_end(void);
void cli_json_object(const char *key);
void cli_json_array(const char *key);
void cli_json_close(void);
void cli_json_str(const char *key, const char *v); /* NULL: null */
void cli_json_put_string(const char *s); /* s quoted and escaped, for JSON printed by hand */
void cli_json_num(const char *key, double v);
void cli_json_int(const char *key, long long v);
void cli_json_uint(const char *key, unsigned long long v);
void cli_json_bool(const char *key, bool v);
void cli_json_null(const char *key);
void cli_json_shape(const char *key, const mxp_array *a); /* [3, 4] */

/* ---- progress (cli_progress.c) -------------------------------------- */

/* Work that may take more than about a second says what it is doing on
 * stderr -- "mxp cast: converting  42%  (3 s)", redrawn a few times a
 * second from the first second on (MXP_PROGRESS_DELAY=S: after S seconds)
 * and erased at the end -- but only when stderr is a terminal. */
void cli_progress_begin(const char *cmd);
void cli_progress_set(const char *phase, double fraction); /* fraction < 0: unknown */
void cli_progress_end(void);

/* ---- numbers and dtypes (cli.c) ------------------------------------- */

/* Compact %g-style number into buf ("1.18e-38", "65504", "inf"). */
const char *cli_num(char *buf, size_t size, double v);

/* An array's shape as Python writes a tuple: "()", "(5,)", "(3, 4)". */
const char *cli_shape(char *buf, size_t size, const mxp_array *a);

/* Largest exactly-representable integer, compactly: "2^24", "2^63-1", "255". */
const char *cli_exact_int(char *buf, size_t size, uint64_t v);

/* Converts one float64 through `type` and back: the value stored. */
mxp_status cli_round_trip(double x, mxp_dtype type, const mxp_convert_opts *opts, double *out);

/* The floating dtypes from widest to narrowest, for the tour's tables. */
extern const mxp_dtype cli_float_types[6];

/* The conversion pairs shown by `info` and `tour` (dst, src). */
typedef struct cli_pair { mxp_dtype src, dst; } cli_pair;
extern const cli_pair cli_main_pairs[11];

/* Prints brand, features and ISA levels, each line starting with `indent`. */
void cli_print_machine(const char *indent);

/* The CPU's brand string without the padding CPUID leaves around it, or
 * "(unknown)". */
const char *cli_cpu_brand(void);

/* ---- timing and benchmark core (cli.c, bench_convert.c) ------------- */

double cli_now(void); /* seconds, CLOCK_MONOTONIC */
double cli_median(double *v, int n); /* sorts v[0 .. n) in place; the middle one */

/* 64-byte aligned allocation of at least `bytes`; NULL on failure. */
void *cli_alloc(size_t bytes);

/* Fills n elements of `type` with normal-ish random values (a few of them
 * subnormal for float types); integer types get values in their range. */
mxp_status cli_fill_random(void *buf, mxp_dtype type, size_t n, uint64_t seed);
/* The same without subnormals (what GEMM benchmarks feed: real activations
 * and weights hold none, and bfloat16 inputs with values below 2^-63 take
 * the float32 kernel; see docs/gemm.md). */
mxp_status cli_fill_normal(void *buf, mxp_dtype type, size_t n, uint64_t seed);

/* One benchmark case: convert n elements src -> dst with `opts`, and copy
 * the same number of bytes with memcpy, alternating, reps times each. */
typedef struct cli_bench_case {
    mxp_dtype src, dst;
    mxp_convert_opts opts;
    size_t n;
    int reps;
    int fresh; /* 1: each run converts into a new buffer from mxp_malloc (freed untimed) */
} cli_bench_case;

typedef struct cli_bench_result {
    double mxp_s, memcpy_s;       /* median seconds per run */
    double mxp_gbps, memcpy_gbps; /* bytes moved / median time / 1e9 */
    size_t bytes;                 /* moved per run: src + dst bytes */
} cli_bench_result;

/* Bytes one memcpy run copies: half of what the conversion reads + writes,
 * so both move the same total.  src holds c->n filled elements of c->src;
 * both buffers must also have room for this many bytes. */
size_t cli_bench_copy_bytes(const cli_bench_case *c);

/* Fills r with the medians of c->reps alternating runs. */
mxp_status cli_bench_run(const cli_bench_case *c, const void *src, void *dst, cli_bench_result *r);

/* ---- the quantized pipeline (quant_gemm_pipeline.c) ---------------- */

enum { QG_REPS = 5, QG_MAX_REPS = 32, QG_OUTLIERS = 8 };

typedef struct quant_gemm_path {
    double gemm_s, pipeline_s;  /* median seconds: GEMM alone; with the activations' quantization */
    mxp_compare_report report;  /* against the float32 GEMM */
} quant_gemm_path;

typedef struct quant_gemm_result {
    quant_gemm_path path[3]; /* float32 GEMM, int8 GEMM -> float32, int8 GEMM -> int8 */
    double weights_s;        /* calibrating and quantizing B once */
    double a_scale, out_scale;
    int a_zero_point;
} quant_gemm_result;

extern const char *const quant_gemm_path_names[3];

/* The random inputs: A (M x K) N(0, 1), B (K x N) N(0, 0.05) with
 * QG_OUTLIERS weights of +-1, float32. */
mxp_status quant_gemm_random(size_t m, size_t n, size_t k, uint64_t seed, mxp_array **a, mxp_array **b);

/* Runs the pipeline on A (M x K) and B (K x N), both float32 and
 * C-contiguous, reps timed runs each. */
mxp_status quant_gemm_measure(const mxp_array *a, const mxp_array *b, int reps, quant_gemm_result *r);

#endif
