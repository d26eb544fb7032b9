/* mxp stat — what a .npy file holds: shape, dtype, order, bytes, and
 * statistics of its values computed in float64. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void print_help(void)
{
    printf("usage: mxp stat FILE.npy [--json]\n\n"
           "Loads FILE.npy with mxp_npy_load and prints, one 'name value' per line:\n"
           "  shape, dtype, order (C or F), bytes (of data), elements;\n"
           "  float types: counts of finite, zero, subnormal (nonzero |x| below the\n"
           "  dtype's smallest normal), nan and inf values; other types: zero;\n"
           "  min, max, mean and std (population, ddof 0) of the finite values.\n"
           "Values are converted to float64 first (exact for every float type; int64\n"
           "and uint64 beyond 2^53 are rounded).  'n/a' where there is no finite value.\n\n"
           "  --json   one JSON object with the same names as keys (shape a list;\n"
           "           null for n/a; the counts only for float types)\n");
}

typedef struct stats {
    int64_t finite, zero, subnormal, nan, inf;
    double min, max, mean, std;
} stats;

static void compute(const double *x, int64_t n, double min_normal, bool is_float, stats *s)
{
    double sum = 0;
    memset(s, 0, sizeof *s);
    s->min = INFINITY;
    s->max = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i])) {
            s->nan++;
        } else if (isinf(x[i])) {
            s->inf++;
        } else {
            s->finite++;
            s->zero += x[i] == 0;
            s->subnormal += is_float && x[i] != 0 && fabs(x[i]) < min_normal;
            s->min = x[i] < s->min ? x[i] : s->min;
            s->max = x[i] > s->max ? x[i] : s->max;
            sum += x[i];
        }
    }
    if (!s->finite)
        return;
    s->mean = sum / (double)s->finite;
    double sq = 0; /* a second pass: no cancellation */
    for (int64_t i = 0; i < n; i++) {
        if (isfinite(x[i]))
            sq += (x[i] - s->mean) * (x[i] - s->mean);
    }
    s->std = sqrt(sq / (double)s->finite);
}

static void print_value(const char *name, double v, bool have, int digits, bool json)
{
    if (json && have)
        cli_json_num(name, v);
    else if (json)
        cli_json_null(name);
    else if (have)
        printf("%-10s %.*g\n", name, digits, v);
    else
        printf("%-10s n/a\n", name);
}

static void print_count(const char *name, int64_t v, bool json)
{
    if (json)
        cli_json_int(name, (long long)v);
    else
        printf("%-10s %lld\n", name, (long long)v);
}

static void print_text(const char *name, const char *v, bool json)
{
    if (json)
        cli_json_str(name, v);
    else
        printf("%-10s %s\n", name, v);
}

static void print_stats(const char *path, const mxp_array *a, const stats *s, bool json)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(mxp_array_dtype(a));
    const bool is_float = t->kind == MXP_KIND_FLOAT;
    const int64_t n = mxp_array_size(a);
    char shape[800];
    if (json) {
        cli_json_begin("stat");
        cli_json_str("file", path);
        cli_json_shape("shape", a);
    } else {
        printf("%-10s %s\n", "file", path);
        printf("%-10s %s\n", "shape", cli_shape(shape, sizeof shape, a));
    }
    print_text("dtype", t->name, json);
    print_text("order", (mxp_array_flags(a) & MXP_ARRAY_C_CONTIGUOUS) ? "C" : "F", json);
    print_count("bytes", n * (int64_t)t->itemsize, json);
    print_count("elements", n, json);
    if (is_float)
        print_count("finite", s->finite, json);
    print_count("zero", s->zero, json);
    if (is_float) { /* integers and bool have none of these */
        print_count("subnormal", s->subnormal, json);
        print_count("nan", s->nan, json);
        print_count("inf", s->inf, json);
    }
    print_value("min", s->min, s->finite > 0, 17, json);
    print_value("max", s->max, s->finite > 0, 17, json);
    print_value("mean", s->mean, s->finite > 0, 10, json);
    print_value("std", s->std, s->finite > 0, 10, json);
    if (json)
        cli_json_end();
}

int cli_stat(int argc, char **argv)
{
    const char *path = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            print_help();
            return CLI_OK;
        }
        if (!strcmp(argv[i], "--json")) {
            json = true;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_bad_argument("stat", argv[i]);
        if (path)
            return cli_usage_error("stat", "more than one FILE ('%s' and '%s')", path, argv[i]);
        path = argv[i];
    }
    if (!path)
        return cli_usage_error("stat", "missing FILE.npy");

    mxp_array *a = NULL, *d = NULL;
    if (cli_load_npy("stat", path, &a) != CLI_OK)
        return CLI_FAILED;
    mxp_status st = mxp_array_astype(&d, a, MXP_F64, NULL);
    if (st != MXP_OK) {
        mxp_array_free(a);
        return cli_mxp_error("stat", NULL, st);
    }
    const mxp_dtype_traits *t = mxp_dtype_get_traits(mxp_array_dtype(a));
    stats s;
    compute(mxp_array_data(d), mxp_array_size(a), t->min_normal, t->kind == MXP_KIND_FLOAT, &s);
    print_stats(path, a, &s, json);
    mxp_array_free(d);
    mxp_array_free(a);
    return CLI_OK;
}
