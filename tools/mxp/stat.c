/* mxp stat — what a .npy file holds: shape, dtype, order, bytes, and
 * statistics of its values computed in float64. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void print_help(void)
{
    printf("usage: mxp stat FILE.npy\n\n"
           "Loads FILE.npy with mxp_npy_load and prints, one 'name value' per line:\n"
           "  shape, dtype, order (C or F), bytes (of data), elements;\n"
           "  counts of finite, zero, subnormal (nonzero |x| below the dtype's\n"
           "  smallest normal; float types only), nan and inf values;\n"
           "  min, max, mean and std (population, ddof 0) of the finite values.\n"
           "Values are converted to float64 first (exact for every float type; int64\n"
           "and uint64 beyond 2^53 are rounded).  'n/a' where there is no finite value.\n");
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

static void print_value(const char *name, double v, bool have, int digits)
{
    if (have)
        printf("%-10s %.*g\n", name, digits, v);
    else
        printf("%-10s n/a\n", name);
}

int cli_stat(int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            print_help();
            return CLI_OK;
        }
        if (argv[i][0] == '-' && argv[i][1] != '\0')
            return cli_usage_error("stat", "unknown option '%s'", argv[i]);
        if (path)
            return cli_usage_error("stat", "more than one FILE ('%s' and '%s')", path, argv[i]);
        path = argv[i];
    }
    if (!path)
        return cli_usage_error("stat", "missing FILE.npy");

    mxp_array *a = NULL, *d = NULL;
    mxp_status st = mxp_npy_load(&a, path);
    if (st != MXP_OK)
        return cli_mxp_error("mxp_npy_load", st);
    if ((st = mxp_array_astype(&d, a, MXP_F64, NULL)) != MXP_OK) {
        mxp_array_free(a);
        return cli_mxp_error("mxp_array_astype", st);
    }
    const mxp_dtype_traits *t = mxp_dtype_get_traits(mxp_array_dtype(a));
    const unsigned flags = mxp_array_flags(a);
    const int64_t n = mxp_array_size(a);
    stats s;
    compute(mxp_array_data(d), n, t->min_normal, t->kind == MXP_KIND_FLOAT, &s);
    char shape[800];
    printf("%-10s %s\n", "file", path);
    printf("%-10s %s\n", "shape", cli_shape(shape, sizeof shape, a));
    printf("%-10s %s\n", "dtype", t->name);
    printf("%-10s %s\n", "order", (flags & MXP_ARRAY_C_CONTIGUOUS) ? "C" : "F");
    printf("%-10s %llu\n", "bytes", (unsigned long long)n * t->itemsize);
    printf("%-10s %lld\n", "elements", (long long)n);
    printf("%-10s %lld\n", "finite", (long long)s.finite);
    printf("%-10s %lld\n", "zero", (long long)s.zero);
    printf("%-10s %lld\n", "subnormal", (long long)s.subnormal);
    printf("%-10s %lld\n", "nan", (long long)s.nan);
    printf("%-10s %lld\n", "inf", (long long)s.inf);
    print_value("min", s.min, s.finite > 0, 17);
    print_value("max", s.max, s.finite > 0, 17);
    print_value("mean", s.mean, s.finite > 0, 10);
    print_value("std", s.std, s.finite > 0, 10);
    mxp_array_free(d);
    mxp_array_free(a);
    return CLI_OK;
}
