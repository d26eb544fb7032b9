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
    printf("usage: mxp analyze FILE.npy [--require psnr>=DB | relerr<=E | no-overflow] [--also DTYPES] [--json]\n"
           "       mxp analyze MODEL.safetensors [--require ...] [--json]\n\n"
           "Loads FILE.npy, converts its values to each float dtype (float8_e4m3fn,\n"
           "float8_e5m2, float16, bfloat16, float32, float64; nearest even) and back,\n"
           "and prints per dtype: memory, max and p99 relative error, PSNR and SNR\n"
           "in dB, cosine similarity, and the counts of overflow (finite values that\n"
           "became inf/NaN), underflow (nonzero values that became zero) and\n"
           "subnormal results.  Then the smallest dtype meeting the requirement\n"
           "(default psnr>=40) and why (mxp_recommend_dtype_rows: one analysis for\n"
           "both).  The values are streamed: memory is the file's data plus a few MiB\n"
           "(at most 22 MiB more for 2-byte inputs).  Definitions of the metrics:\n"
           "docs/analysis.md.\n\n"
           "  --also DTYPES  more rows after the candidates, a comma-separated list of\n"
           "           any dtypes (float8_e4m3fnuz,float6_e2m3fn,float4_e2m1fn,int4,...);\n"
           "           sub-byte types count their packed bytes.  They are shown, not\n"
           "           recommended (JSON: \"also\", objects as the candidates')\n"
           "  --json   one JSON object: file, shape, dtype, elements, candidates (one\n"
           "           object per dtype: dtype, bytes, max_rel_error, p99_rel_error,\n"
           "           psnr_db, snr_db, cosine, overflow, underflow, subnormal; null\n"
           "           where a value is not finite, such as the PSNR of an exact\n"
           "           round trip), requirement, recommended, reason\n\n"
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

/* The dtypes of --also: at most MAX_ALSO, each a name mxp knows. */
enum { MAX_ALSO = 32 };
typedef struct also_list {
    int n;
    mxp_dtype dt[MAX_ALSO];
    mxp_roundtrip_row rows[MAX_ALSO];
} also_list;

static int parse_also(const char *s, also_list *also)
{
    char name[64];
    while (*s) {
        const char *end = strchr(s, ',');
        const size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len == 0 || len >= sizeof name)
            return cli_usage_error("analyze", "--also: an empty or overlong dtype name in the list");
        memcpy(name, s, len);
        name[len] = '\0';
        const mxp_dtype dt = mxp_dtype_from_name(name);
        if (dt == MXP_DTYPE_INVALID)
            return cli_usage_error("analyze", "--also: unknown dtype '%s'", name);
        if (also->n == MAX_ALSO)
            return cli_usage_error("analyze", "--also: more than %d dtypes", MAX_ALSO);
        also->dt[also->n++] = dt;
        s += len + (end ? 1 : 0);
        if (end && !*s)
            return cli_usage_error("analyze", "--also: the list ends with a comma");
    }
    return CLI_OK;
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

static void print_table(const char *path, const mxp_array *a, const mxp_roundtrip_row *rows, const also_list *also)
{
    char shape[800];
    printf("file %s: shape %s, dtype %s, %lld elements\n\n", path, cli_shape(shape, sizeof shape, a),
           mxp_dtype_name(mxp_array_dtype(a)), (long long)mxp_array_size(a));
    printf("%-18s %10s %11s %11s %9s %9s %10s %9s %9s %9s\n", "dtype", "memory", "max relerr", "p99 relerr",
           "PSNR dB", "SNR dB", "cosine", "overflow", "underflow", "subnormal");
    for (int i = 0; i < MXP_ADVISOR_CANDIDATES; i++)
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

static void print_json(const char *path, const mxp_array *a, const mxp_roundtrip_row *rows, const also_list *also,
                       const char *require, const mxp_advice *adv)
{
    cli_json_begin("analyze");
    cli_json_str("file", path);
    cli_json_shape("shape", a);
    cli_json_str("dtype", mxp_dtype_name(mxp_array_dtype(a)));
    cli_json_int("elements", (long long)mxp_array_size(a));
    cli_json_array("candidates");
    json_rows(rows, MXP_ADVISOR_CANDIDATES);
    cli_json_close();
    cli_json_array("also");
    json_rows(also->rows, also->n);
    cli_json_close();
    cli_json_str("requirement", require ? require : "psnr>=40");
    cli_json_str("recommended", mxp_dtype_name(adv->dtype));
    cli_json_str("reason", adv->reason);
    cli_json_end();
}

void cli_analyze_json_candidates(const mxp_roundtrip_row *rows)
{
    cli_json_array("candidates");
    json_rows(rows, MXP_ADVISOR_CANDIDATES);
    cli_json_close();
}

/* The table and the advice from one streamed analysis. */
static mxp_status measure(const mxp_array *a, const mxp_requirement *req, mxp_roundtrip_row *rows, mxp_advice *adv,
                          also_list *also)
{
    cli_progress_set("round trips through every candidate", -1);
    mxp_status st = mxp_recommend_dtype_rows(a, req, adv, rows);
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
    also.n = 0;
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
        return cli_analyze_safetensors(path, &req, require, json);
    }

    mxp_array *a = NULL;
    mxp_roundtrip_row rows[MXP_ADVISOR_CANDIDATES] = { 0 };
    mxp_advice adv = { 0 };
    cli_progress_begin("analyze");
    cli_progress_set("loading", -1);
    int rc = cli_load_npy("analyze", path, &a);
    mxp_status st = rc == CLI_OK ? measure(a, &req, rows, &adv, &also) : MXP_OK;
    cli_progress_end();
    if (st != MXP_OK)
        rc = cli_mxp_error("analyze", NULL, st);
    if (rc == CLI_OK && json) {
        print_json(path, a, rows, &also, require, &adv);
    } else if (rc == CLI_OK) {
        print_table(path, a, rows, &also);
        printf("\nrequirement  %s\nrecommended  %s\nreason       %s\n", require ? require : "psnr>=40 (default)",
               mxp_dtype_name(adv.dtype), adv.reason);
    }
    mxp_array_free(a);
    return rc;
}
