/* mxp analyze — what storing a .npy file's values in each float dtype
 * costs (a round trip per dtype), and the smallest dtype that meets a
 * requirement; a safetensors file tensor by tensor (analyze_safetensors.c).
 * See docs/analysis.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void print_help(void)
{
    printf("usage: mxp analyze FILE.npy [--require psnr>=DB | relerr<=E | no-overflow]\n"
           "                   [--candidates all|DTYPES] [--also DTYPES] [--json]\n"
           "       mxp analyze MODEL.safetensors [--require ...] [--json]\n\n"
           "Loads FILE.npy, converts its values to each float dtype (float8_e4m3fn,\n"
           "float8_e5m2, float16, bfloat16, float32, float64, or those of\n"
           "--candidates; nearest even) and back, and prints per dtype: memory, max\n"
           "and p99 relative error, PSNR and SNR in dB, cosine similarity, and the\n"
           "counts of overflow (finite values that became inf/NaN, or saturated in\n"
           "float6/float4), underflow (nonzero values that became zero) and\n"
           "subnormal results.  Then the smallest dtype meeting the requirement\n"
           "(default psnr>=40) and why (mxp_recommend_dtype_rows: one analysis for\n"
           "both).  The values are streamed: memory is the file's data plus a few MiB\n"
           "(at most 22 MiB more for 2-byte inputs).  Definitions of the metrics:\n"
           "docs/analysis.md.\n\n"
           "  --candidates all|DTYPES  choose among these float dtypes instead of\n"
           "           the six: all (every float storage format mxp has, smallest first:\n"
           "           float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, the seven float8s,\n"
           "           float16, bfloat16, float32, float64; not float8_e8m0fnu, a scale\n"
           "           format) or a comma-separated list, each dtype once, any order.\n"
           "           The smallest by bits that meets the requirement wins, at equal\n"
           "           bits the better metric (mxp_recommend_dtype_among); the table\n"
           "           lists these candidates.  When none meets it: the table,\n"
           "           \"recommended  none\", the reason naming the closest, exit status 1\n"
           "  --also DTYPES  more rows after the candidates, a comma-separated list of\n"
           "           any dtypes (float8_e4m3fnuz,float6_e2m3fn,float4_e2m1fn,int4,...);\n"
           "           sub-byte types count their packed bytes.  They are shown, not\n"
           "           recommended (JSON: \"also\", objects as the candidates')\n"
           "  --json   one JSON object: file, shape, dtype, elements, candidates (one\n"
           "           object per dtype: dtype, bytes, max_rel_error, p99_rel_error,\n"
           "           psnr_db, snr_db, cosine, overflow, underflow, subnormal; null\n"
           "           where a value is not finite, such as the PSNR of an exact\n"
           "           round trip), requirement, recommended (null when no candidate\n"
           "           meets it), reason\n\n"
           "A safetensors file (docs/safetensors.md): the same analysis for each\n"
           "floating-point tensor, one line each (name, dtype, shape, the recommended\n"
           "dtype and its PSNR, the values float8_e4m3fn, float16 and bfloat16 would\n"
           "overflow or flush to zero), then the bytes of the float tensors now and\n"
           "stored each in its recommended dtype; --json gives every candidate per\n"
           "tensor.  Other tensors are listed as kept.\n");
}

/* "psnr>=40", "relerr<=1e-3", "no-overflow". */
static int parse_requirement(const char *s, mxp_requirement *req)
{
    char *end = NULL;
    if (!strcmp(s, "no-overflow")) {
        *req = (mxp_requirement){ MXP_REQUIRE_NO_OVERFLOW, 0 };
        return 0;
    }
    if (!strncmp(s, "psnr>=", 6)) {
        req->kind = MXP_REQUIRE_MIN_PSNR;
        req->value = strtod(s + 6, &end);
        return end == s + 6 || *end || !isfinite(req->value) ? -1 : 0;
    }
    if (!strncmp(s, "relerr<=", 8)) {
        req->kind = MXP_REQUIRE_MAX_REL_ERROR;
        req->value = strtod(s + 8, &end);
        return end == s + 8 || *end || !(req->value >= 0) || isinf(req->value) ? -1 : 0;
    }
    return -1;
}

const char *cli_memory(char *buf, size_t size, size_t bytes)
{
    if (bytes >= (size_t)1 << 30)
        snprintf(buf, size, "%.1f GiB", (double)bytes / (1 << 30));
    else if (bytes >= (size_t)1 << 20)
        snprintf(buf, size, "%.1f MiB", (double)bytes / (1 << 20));
    else if (bytes >= (size_t)1 << 10)
        snprintf(buf, size, "%.1f KiB", (double)bytes / (1 << 10));
    else
        snprintf(buf, size, "%zu B", bytes);
    return buf;
}

/* The dtypes of --also (at most MAX_ALSO, each a name mxp knows) and of
 * --candidates (float dtypes, each once; n 0: mxp_recommend_dtype's six). */
enum { MAX_ALSO = 32 };
typedef struct also_list {
    int n;
    mxp_dtype dt[MAX_ALSO];
    mxp_roundtrip_row rows[MAX_ALSO];
} also_list;
typedef struct candidate_list {
    int n;
    mxp_dtype dt[MXP_ADVISOR_MAX_CANDIDATES];
    mxp_roundtrip_row rows[MXP_ADVISOR_MAX_CANDIDATES];
} candidate_list;

/* A comma-separated list of dtype names after `option` into dt[*n..max). */
static int parse_dtypes(const char *option, const char *s, mxp_dtype *dt, int *n, int max)
{
    char name[64];
    while (*s) {
        const char *end = strchr(s, ',');
        const size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len == 0 || len >= sizeof name)
            return cli_usage_error("analyze", "%s: an empty or overlong dtype name in the list", option);
        memcpy(name, s, len);
        name[len] = '\0';
        const mxp_dtype d = mxp_dtype_from_name(name);
        if (d == MXP_DTYPE_INVALID)
            return cli_usage_error("analyze", "%s: unknown dtype '%s'", option, name);
        if (*n == max)
            return cli_usage_error("analyze", "%s: more than %d dtypes", option, max);
        dt[(*n)++] = d;
        s += len + (end ? 1 : 0);
        if (end && !*s)
            return cli_usage_error("analyze", "%s: the list ends with a comma", option);
    }
    return CLI_OK;
}

static int parse_also(const char *s, also_list *also)
{
    return parse_dtypes("--also", s, also->dt, &also->n, MAX_ALSO);
}

/* "all" or a list of float dtypes, each once. */
static int parse_candidates(const char *s, candidate_list *cand)
{
    if (cand->n)
        return cli_usage_error("analyze", "one --candidates at a time");
    if (!strcmp(s, "all")) {
        const mxp_dtype *all = mxp_advisor_candidates_all(&cand->n);
        memcpy(cand->dt, all, (size_t)cand->n * sizeof *all);
        return CLI_OK;
    }
    const int rc = parse_dtypes("--candidates", s, cand->dt, &cand->n, MXP_ADVISOR_MAX_CANDIDATES);
    for (int i = 0; rc == CLI_OK && i < cand->n; i++) {
        const mxp_dtype_traits *t = mxp_dtype_get_traits(cand->dt[i]);
        if (t->kind != MXP_KIND_FLOAT)
            return cli_usage_error("analyze", "--candidates: '%s' is not a float dtype", t->name);
        for (int j = 0; j < i; j++) {
            if (cand->dt[j] == cand->dt[i])
                return cli_usage_error("analyze", "--candidates: '%s' is in the list twice", t->name);
        }
    }
    return rc;
}

static void print_row(const mxp_roundtrip_row *r)
{
    char mem[32], b1[32], b2[32], b3[32], b4[32];
    printf("%-18s %10s %11s %11s %9s %9s %10.7f %9lld %9lld %9lld\n", mxp_dtype_name(r->dtype),
           cli_memory(mem, sizeof mem, r->bytes), cli_num(b1, sizeof b1, r->report.max_rel_error),
           cli_num(b2, sizeof b2, r->report.p99_rel_error), cli_num(b3, sizeof b3, r->report.psnr_db),
           cli_num(b4, sizeof b4, r->report.snr_db), r->report.cosine_similarity, (long long)r->overflow,
           (long long)r->underflow_to_zero, (long long)r->subnormal);
}

static void print_table(const char *path, const mxp_array *a, const mxp_roundtrip_row *rows, int nrows,
                        const also_list *also)
{
    char shape[800];
    printf("file %s: shape %s, dtype %s, %lld elements\n\n", path, cli_shape(shape, sizeof shape, a),
           mxp_dtype_name(mxp_array_dtype(a)), (long long)mxp_array_size(a));
    printf("%-18s %10s %11s %11s %9s %9s %10s %9s %9s %9s\n", "dtype", "memory", "max relerr", "p99 relerr",
           "PSNR dB", "SNR dB", "cosine", "overflow", "underflow", "subnormal");
    for (int i = 0; i < nrows; i++)
        print_row(&rows[i]);
    if (also->n)
        printf("also (shown, not recommended):\n");
    for (int i = 0; i < also->n; i++)
        print_row(&also->rows[i]);
}

static void json_rows(const mxp_roundtrip_row *rows, int n)
{
    for (int i = 0; i < n; i++) {
        const mxp_roundtrip_row *r = &rows[i];
        cli_json_object(NULL);
        cli_json_str("dtype", mxp_dtype_name(r->dtype));
        cli_json_int("bytes", (long long)r->bytes);
        cli_json_num("max_rel_error", r->report.max_rel_error);
        cli_json_num("p99_rel_error", r->report.p99_rel_error);
        cli_json_num("psnr_db", r->report.psnr_db);
        cli_json_num("snr_db", r->report.snr_db);
        cli_json_num("cosine", r->report.cosine_similarity);
        cli_json_int("overflow", (long long)r->overflow);
        cli_json_int("underflow", (long long)r->underflow_to_zero);
        cli_json_int("subnormal", (long long)r->subnormal);
        cli_json_close();
    }
}

static void print_json(const char *path, const mxp_array *a, const mxp_roundtrip_row *rows, int nrows,
                       const also_list *also, const char *require, const mxp_advice *adv)
{
    cli_json_begin("analyze");
    cli_json_str("file", path);
    cli_json_shape("shape", a);
    cli_json_str("dtype", mxp_dtype_name(mxp_array_dtype(a)));
    cli_json_int("elements", (long long)mxp_array_size(a));
    cli_json_array("candidates");
    json_rows(rows, nrows);
    cli_json_close();
    cli_json_array("also");
    json_rows(also->rows, also->n);
    cli_json_close();
    cli_json_str("requirement", require ? require : "psnr>=40");
    cli_json_str("recommended", adv->dtype != MXP_DTYPE_INVALID ? mxp_dtype_name(adv->dtype) : NULL);
    cli_json_str("reason", adv->reason);
    cli_json_end();
}

void cli_analyze_json_candidates(const mxp_roundtrip_row *rows)
{
    cli_json_array("candidates");
    json_rows(rows, MXP_ADVISOR_CANDIDATES);
    cli_json_close();
}

/* The table and the advice from one streamed analysis.  *none_meets: no
 * candidate of --candidates meets req (the rows and adv are there, adv's
 * dtype MXP_DTYPE_INVALID); the status is then MXP_OK. */
static mxp_status measure(const mxp_array *a, const mxp_requirement *req, candidate_list *cand, mxp_advice *adv,
                          also_list *also, bool *none_meets)
{
    cli_progress_set("round trips through every candidate", -1);
    mxp_status st;
    *none_meets = false;
    if (cand->n) {
        st = mxp_recommend_dtype_among(a, req, cand->dt, cand->n, adv, cand->rows);
        if (st == MXP_ERR_INVALID_ARGUMENT && adv->dtype == MXP_DTYPE_INVALID && adv->reason[0]) {
            *none_meets = true;
            st = MXP_OK;
        }
    } else {
        st = mxp_recommend_dtype_rows(a, req, adv, cand->rows);
    }
    if (st == MXP_OK && also->n) {
        cli_progress_set("round trips through --also", -1);
        st = mxp_roundtrip_analysis(a, also->dt, also->n, also->rows);
    }
    return st;
}

int cli_analyze(int argc, char **argv)
{
    const char *path = NULL, *require = NULL;
    mxp_requirement req = { MXP_REQUIRE_MIN_PSNR, 40 };
    bool json = false;
    static also_list also; /* static: 32 rows of histograms are too big for the stack */
    static candidate_list cand; /* n 0: mxp_recommend_dtype's six */
    also.n = 0;
    cand.n = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            print_help();
            return CLI_OK;
        }
        if (!strcmp(argv[i], "--json")) {
            json = true;
            continue;
        }
        const char *value = NULL;
        const int ra = cli_option(argc, argv, &i, "--also", &value);
        if (ra < 0)
            return cli_usage_error("analyze", "--also needs a comma-separated list of dtypes");
        if (ra > 0) {
            const int rc = parse_also(value, &also);
            if (rc != CLI_OK)
                return rc;
            continue;
        }
        const int rcand = cli_option(argc, argv, &i, "--candidates", &value);
        if (rcand < 0)
            return cli_usage_error("analyze", "--candidates needs 'all' or a comma-separated list of float dtypes");
        if (rcand > 0) {
            const int rc = parse_candidates(value, &cand);
            if (rc != CLI_OK)
                return rc;
            continue;
        }
        const int r = cli_option(argc, argv, &i, "--require", &value);
        if (r < 0)
            return cli_usage_error("analyze", "--require needs a value (psnr>=DB, relerr<=E or no-overflow)");
        if (r > 0) {
            if (require)
                return cli_usage_error("analyze", "one --require at a time ('%s' and '%s')", require, value);
            if (parse_requirement(value, &req) != 0)
                return cli_usage_error("analyze", "bad requirement '%s' (psnr>=DB, relerr<=E or no-overflow)", value);
            require = value;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_bad_argument("analyze", argv[i]);
        if (path)
            return cli_usage_error("analyze", "more than one FILE ('%s' and '%s')", path, argv[i]);
        path = argv[i];
    }
    if (!path)
        return cli_usage_error("analyze", "missing FILE.npy");
    const size_t plen = strlen(path);
    if (plen >= 12 && !strcmp(path + plen - 12, ".safetensors")) {
        if (also.n)
            return cli_usage_error("analyze", "--also is for .npy files (a safetensors file: one line per tensor)");
        if (cand.n)
            return cli_usage_error("analyze", "--candidates is for .npy files (a safetensors file: the six)");
        return cli_analyze_safetensors(path, &req, require, json);
    }

    mxp_array *a = NULL;
    mxp_advice adv = { 0 };
    bool none_meets = false;
    const int nrows = cand.n ? cand.n : MXP_ADVISOR_CANDIDATES;
    cli_progress_begin("analyze");
    cli_progress_set("loading", -1);
    int rc = cli_load_npy("analyze", path, &a);
    mxp_status st = rc == CLI_OK ? measure(a, &req, &cand, &adv, &also, &none_meets) : MXP_OK;
    cli_progress_end();
    if (st != MXP_OK)
        rc = cli_mxp_error("analyze", NULL, st);
    if (rc == CLI_OK && json) {
        print_json(path, a, cand.rows, nrows, &also, require, &adv);
    } else if (rc == CLI_OK) {
        print_table(path, a, cand.rows, nrows, &also);
        printf("\nrequirement  %s\nrecommended  %s\nreason       %s\n", require ? require : "psnr>=40 (default)",
               none_meets ? "none" : mxp_dtype_name(adv.dtype), adv.reason);
    }
    if (rc == CLI_OK && none_meets) { /* the work is done, the answer is no: failed work's status */
        fflush(stdout);
        fprintf(stderr, "mxp analyze: no candidate meets the requirement (the reason names the closest)\n");
        rc = CLI_FAILED;
    }
    mxp_array_free(a);
    return rc;
}
