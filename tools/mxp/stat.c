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
           "Values are converted to float64 (exact for every float type; int64 and\n"
           "uint64 beyond 2^53 are rounded), 65536 at a time: memory is the file's data\n"
           "plus 512 KiB.  'n/a' where there is no finite value.  FILE may be a pipe\n"
           "(mxp stat /dev/stdin); its data is believed only as it arrives.\n\n"
           "  --json   one JSON object with the same names as keys (shape a list;\n"
           "           null for n/a; the counts only for float types)\n");
}

typedef struct stats {
    int64_t finite, zero, subnormal, nan, inf;
    double min, max, mean, std;
    double sum;              /* of the finite values, left to right: the mean */
    double run_mean, m2;     /* the finite values so far: their mean and sum of squared deviations */
    double min_normal;
    bool is_float;
} stats;

enum { CHUNK = 1 << 16 }; /* values converted to float64 at a time */

/* The counts and extremes of a chunk; its finite values are moved to the
 * front of x, their number returned. */
static int64_t add_values(double *x, int64_t n, stats *s)
{
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(x[i])) {
            s->nan++;
        } else if (isinf(x[i])) {
            s->inf++;
        } else {
            s->zero += x[i] == 0;
            s->subnormal += s->is_float && x[i] != 0 && fabs(x[i]) < s->min_normal;
            s->min = x[i] < s->min ? x[i] : s->min;
            s->max = x[i] > s->max ? x[i] : s->max;
            s->sum += x[i];
            x[m++] = x[i];
        }
    }
    return m;
}

/* The spread of m finite values, merged into the running one (Chan et
 * al.'s pairwise update: the chunk's squared deviations from its own mean,
 * then the shift between the means; no cancellation). */
static void add_spread(const double *x, int64_t m, stats *s)
{
    if (m == 0)
        return;
    double sum = 0, m2 = 0;
    for (int64_t i = 0; i < m; i++)
        sum += x[i];
    const double mean = sum / (double)m;
    for (int64_t i = 0; i < m; i++)
        m2 += (x[i] - mean) * (x[i] - mean);
    const double n = (double)s->finite, total = n + (double)m, delta = mean - s->run_mean;
    s->m2 += m2 + delta * delta * n * (double)m / total;
    s->run_mean += delta * (double)m / total;
    s->finite += m;
}

/* One pass over a's values (C- or F-contiguous, as loaded: its buffer in
 * memory order), CHUNK at a time in float64: memory stays at the file's
 * own size plus 512 KiB, and each value is converted once. */
static mxp_status compute(const mxp_array *a, stats *s)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(mxp_array_dtype(a));
    memset(s, 0, sizeof *s);
    s->min = INFINITY;
    s->max = -INFINITY;
    s->min_normal = t->min_normal;
    s->is_float = t->kind == MXP_KIND_FLOAT;
    double *buf = mxp_malloc(CHUNK * sizeof *buf);
    if (!buf)
        return MXP_ERR_NO_MEMORY;
    const unsigned char *p = mxp_array_data(a);
    const int64_t n = mxp_array_size(a);
    mxp_status st = MXP_OK;
    for (int64_t i = 0; st == MXP_OK && i < n; i += CHUNK) {
        const int64_t k = n - i < CHUNK ? n - i : CHUNK;
        st = mxp_convert(buf, MXP_F64, p + (size_t)i * t->itemsize, t->dtype, (size_t)k, NULL);
        if (st == MXP_OK)
            add_spread(buf, add_values(buf, k, s), s);
    }
    mxp_free(buf);
    if (s->finite) {
        s->mean = s->sum / (double)s->finite;
        s->std = sqrt(s->m2 / (double)s->finite);
    }
    return st;
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

    mxp_array *a = NULL, *c = NULL;
    if (cli_load_npy("stat", path, &a) != CLI_OK)
        return CLI_FAILED;
    mxp_status st = MXP_OK;
    if (!(mxp_array_flags(a) & (MXP_ARRAY_C_CONTIGUOUS | MXP_ARRAY_F_CONTIGUOUS)))
        st = mxp_array_ascontiguous(&c, a, 'C'); /* a loaded array always is one */
    stats s;
    if (st == MXP_OK)
        st = compute(c ? c : a, &s);
    mxp_array_free(c);
    if (st != MXP_OK) {
        mxp_array_free(a);
        return cli_mxp_error("stat", NULL, st);
    }
    print_stats(path, a, &s, json);
    mxp_array_free(a);
    return CLI_OK;
}
