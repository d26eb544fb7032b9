/* mxp quant-gemm — the quantized pipeline (quant_gemm_pipeline.c) on
 * random data or on A and B from .npy files, each path compared with the
 * float32 GEMM, as a table or one JSON object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "quant_gemm.h"

typedef struct qg_args {
    size_t m, n, k;
    uint64_t seed;
    const char *a_path, *b_path;
    bool dims_given, seed_given, json;
} qg_args;

static void usage(FILE *f)
{
    fprintf(f, "usage: mxp quant-gemm [--m M] [--n N] [--k K] [--seed S] [--json]\n"
               "       mxp quant-gemm --a A.npy --b B.npy [--json]\n\n"
               "The quantized pipeline: C = A B with A (M x K, default 128 x 1024) float32\n"
               "N(0,1) activations and B (K x N, default 1024 x 1024) N(0, 0.05) weights with\n"
               "%d outliers of +-1, or A and B read from .npy files: 2-d float32 or float64\n"
               "(rounded to float32), A's columns as many as B's rows.  Min/max calibration:\n"
               "A uint8 asymmetric per tensor, B int8 symmetric per output channel (B's\n"
               "columns; B is quantized once, ahead of time).  The int8 GEMM sums in int32\n"
               "and either dequantizes to float32 (scale a_scale * b_scale[j] per column) or\n"
               "requantizes to int8 (output scale from the float result's range).  Each path\n"
               "is compared with the float32 GEMM.  Times: median of %d runs, GEMM alone and\n"
               "the pipeline with the activations' calibration and quantization; threads:\n"
               "mxp's default (MXP_NUM_THREADS).\n\n"
               "  --json   one JSON object: inputs (\"random\" or \"files\"), a, b, seed, m, n,\n"
               "           k, a_scale, a_zero_point, out_scale, weights_ms, reps, threads, and\n"
               "           paths (one object per path: path, gemm_ms, pipeline_ms,\n"
               "           gemm_speedup, pipeline_speedup, psnr_db, max_abs_error,\n"
               "           p99_rel_error; null where not finite)\n",
            QG_OUTLIERS, QG_REPS);
}

static int parse_dim(const char *opt, const char *v, size_t *out)
{
    if (cli_parse_size(v, out) || *out == 0 || *out > 65536)
        return cli_usage_error("quant-gemm", "%s wants 1..65536, not '%s'", opt, v);
    return CLI_OK;
}

static int parse_args(qg_args *q, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v;
        int rc = CLI_OK;
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return -1;
        } else if (!strcmp(argv[i], "--json")) {
            q->json = true;
        } else if (cli_option(argc, argv, &i, "--m", &v) == 1) {
            rc = parse_dim("--m", v, &q->m);
            q->dims_given = true;
        } else if (cli_option(argc, argv, &i, "--n", &v) == 1) {
            rc = parse_dim("--n", v, &q->n);
            q->dims_given = true;
        } else if (cli_option(argc, argv, &i, "--k", &v) == 1) {
            rc = parse_dim("--k", v, &q->k);
            q->dims_given = true;
        } else if (cli_option(argc, argv, &i, "--a", &v) == 1) {
            q->a_path = v;
        } else if (cli_option(argc, argv, &i, "--b", &v) == 1) {
            q->b_path = v;
        } else if (cli_option(argc, argv, &i, "--seed", &v) == 1) {
            char *end;
            q->seed = strtoull(v, &end, 10);
            q->seed_given = true;
            if (!*v || *end)
                rc = cli_usage_error("quant-gemm", "--seed wants an integer, not '%s'", v);
        } else {
            return cli_bad_argument("quant-gemm", argv[i]);
        }
        if (rc != CLI_OK)
            return rc;
    }
    if (!q->a_path != !q->b_path)
        return cli_usage_error("quant-gemm", "--a and --b go together (missing %s)", q->a_path ? "--b" : "--a");
    if (q->a_path && (q->dims_given || q->seed_given))
        return cli_usage_error("quant-gemm", "--m, --n, --k and --seed shape the random data: not with --a and --b");
    return CLI_OK;
}

mxp_status quant_gemm_operand(const char *opt, const char *name, const mxp_array *x, mxp_array **out, char *err,
                              size_t err_size)
{
    *out = NULL;
    const mxp_dtype dt = mxp_array_dtype(x);
    if (mxp_array_ndim(x) != 2 || mxp_array_size(x) == 0 || (dt != MXP_F32 && dt != MXP_F64)) {
        char shape[800];
        snprintf(err, err_size, "%s %s holds %s %s; it must be a 2-d float32 or float64 matrix", opt, name,
                 mxp_dtype_name(dt), cli_shape(shape, sizeof shape, x));
        return MXP_ERR_FORMAT;
    }
    mxp_status st = mxp_array_astype(out, x, MXP_F32, NULL);
    if (st != MXP_OK) {
        snprintf(err, err_size, "%s: %s", name, mxp_last_error());
        *out = NULL;
    }
    return st;
}

mxp_status quant_gemm_operands_agree(const mxp_array *a, const mxp_array *b, char *err, size_t err_size)
{
    const int64_t *sa = mxp_array_shape(a), *sb = mxp_array_shape(b);
    if (sa[1] == sb[0])
        return MXP_OK;
    snprintf(err, err_size, "A (%lld x %lld) and B (%lld x %lld) do not multiply: A has %lld columns, B %lld rows",
             (long long)sa[0], (long long)sa[1], (long long)sb[0], (long long)sb[1], (long long)sa[1],
             (long long)sb[0]);
    return MXP_ERR_SHAPE;
}

/* A 2-d float32 or float64 .npy file as a C-contiguous float32 array. */
static int load_operand(const char *opt, const char *path, mxp_array **out)
{
    mxp_array *x = NULL;
    if (cli_load_npy("quant-gemm", path, &x) != CLI_OK)
        return CLI_FAILED;
    char err[1024];
    mxp_status st = quant_gemm_operand(opt, path, x, out, err, sizeof err);
    mxp_array_free(x);
    if (st != MXP_OK)
        fprintf(stderr, "mxp quant-gemm: %s\n", err);
    return st == MXP_OK ? CLI_OK : CLI_FAILED;
}

static int load_inputs(const qg_args *q, mxp_array **a, mxp_array **b)
{
    if (!q->a_path) {
        mxp_status st = quant_gemm_random(q->m, q->n, q->k, q->seed, a, b);
        return st == MXP_OK ? CLI_OK : cli_mxp_error("quant-gemm", NULL, st);
    }
    if (load_operand("--a", q->a_path, a) != CLI_OK || load_operand("--b", q->b_path, b) != CLI_OK)
        return CLI_FAILED;
    char err[256];
    if (quant_gemm_operands_agree(*a, *b, err, sizeof err) != MXP_OK) {
        fprintf(stderr, "mxp quant-gemm: %s\n", err);
        return CLI_FAILED;
    }
    return CLI_OK;
}

static void print_json(const qg_args *q, size_t m, size_t n, size_t k, const quant_gemm_result *r)
{
    cli_json_begin("quant-gemm");
    cli_json_str("inputs", q->a_path ? "files" : "random");
    cli_json_str("a", q->a_path);
    cli_json_str("b", q->b_path);
    if (q->a_path)
        cli_json_null("seed");
    else
        cli_json_uint("seed", q->seed);
    cli_json_int("m", (long long)m);
    cli_json_int("n", (long long)n);
    cli_json_int("k", (long long)k);
    cli_json_num("a_scale", r->a_scale);
    cli_json_int("a_zero_point", r->a_zero_point);
    cli_json_num("out_scale", r->out_scale);
    cli_json_num("weights_ms", r->weights_s * 1e3);
    cli_json_int("reps", QG_REPS);
    cli_json_int("threads", mxp_get_num_threads());
    cli_json_array("paths");
    for (int p = 0; p < 3; p++) {
        const quant_gemm_path *qp = &r->path[p];
        cli_json_object(NULL);
        cli_json_str("path", quant_gemm_path_names[p]);
        cli_json_num("gemm_ms", qp->gemm_s * 1e3);
        cli_json_num("pipeline_ms", qp->pipeline_s * 1e3);
        cli_json_num("gemm_speedup", r->path[0].gemm_s / qp->gemm_s);
        cli_json_num("pipeline_speedup", r->path[0].gemm_s / qp->pipeline_s);
        cli_json_num("psnr_db", qp->report.psnr_db);
        cli_json_num("max_abs_error", qp->report.max_abs_error);
        cli_json_num("p99_rel_error", qp->report.p99_rel_error);
        cli_json_close();
    }
    cli_json_end();
}

static void print_table(const qg_args *q, size_t m, size_t n, size_t k, const quant_gemm_result *r)
{
    const int threads = mxp_get_num_threads();
    if (q->a_path)
        printf("# C = A B: A %s (%zu x %zu), B %s (%zu x %zu), as float32\n", q->a_path, m, k, q->b_path, k, n);
    else
        printf("# C = A B: A %zu x %zu float32 N(0,1), B %zu x %zu float32 N(0, 0.05) with %d outliers; seed %llu\n",
               m, k, k, n, QG_OUTLIERS, (unsigned long long)q->seed);
    printf("# A: uint8 asymmetric per tensor (scale %.4g, zero point %d); B: int8 symmetric per column\n"
           "# (%zu scales, quantized once in %.2f ms); int32 sums; int8 C: output scale %.4g\n",
           r->a_scale, r->a_zero_point, n, r->weights_s * 1e3, r->out_scale);
    printf("# times: median of %d runs, %d thread%s; speed-up = float32 GEMM time / this time\n", QG_REPS, threads,
           threads == 1 ? "" : "s");
    printf("%-22s %9s %12s %9s %12s %8s %12s %12s\n", "path", "GEMM ms", "pipeline ms", "GEMM x", "pipeline x",
           "PSNR dB", "max abs err", "p99 rel err");
    for (int p = 0; p < 3; p++) {
        const quant_gemm_path *qp = &r->path[p];
        char psnr[32] = "ref", maxabs[32] = "0", p99[32] = "0";
        if (p > 0) {
            snprintf(psnr, sizeof psnr, "%.1f", qp->report.psnr_db);
            snprintf(maxabs, sizeof maxabs, "%.3g", qp->report.max_abs_error);
            snprintf(p99, sizeof p99, "%.3g", qp->report.p99_rel_error);
        }
        printf("%-22s %9.3f %12.3f %8.2fx %11.2fx %8s %12s %12s\n", quant_gemm_path_names[p], qp->gemm_s * 1e3,
               qp->pipeline_s * 1e3, r->path[0].gemm_s / qp->gemm_s, r->path[0].gemm_s / qp->pipeline_s, psnr, maxabs,
               p99);
    }
    printf("(p99 relative error is large where C is near 0: the error is absolute, about the\n"
           "quantization step of the inputs times sqrt(K); PSNR relates it to max |C|.)\n");
}

int cli_quant_gemm(int argc, char **argv)
{
    qg_args q = { .m = 128, .n = 1024, .k = 1024, .seed = 1 };
    int rc = parse_args(&q, argc, argv);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc;
    mxp_array *a = NULL, *b = NULL;
    rc = load_inputs(&q, &a, &b);
    quant_gemm_result r;
    if (rc == CLI_OK) {
        mxp_status st = quant_gemm_measure(a, b, QG_REPS, &r);
        if (st != MXP_OK)
            rc = cli_mxp_error("quant-gemm", NULL, st);
    }
    if (rc == CLI_OK) {
        const size_t m = (size_t)mxp_array_shape(a)[0], k = (size_t)mxp_array_shape(a)[1];
        const size_t n = (size_t)mxp_array_shape(b)[1];
        if (q.json)
            print_json(&q, m, n, k, &r);
        else
            print_table(&q, m, n, k, &r);
    }
    mxp_array_free(a);
    mxp_array_free(b);
    return rc;
}
