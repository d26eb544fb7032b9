/* Helpers shared by the subcommands: errors, option parsing, number
 * formatting, the machine summary, timing, aligned buffers, random data. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

const mxp_dtype cli_float_types[6] = { MXP_F64, MXP_F32, MXP_BF16, MXP_F16, MXP_E4M3, MXP_E5M2 };

const cli_pair cli_main_pairs[11] = {
    { MXP_F32, MXP_BF16 }, { MXP_BF16, MXP_F32 }, { MXP_F32, MXP_F16 }, { MXP_F16, MXP_F32 },
    { MXP_F64, MXP_BF16 }, { MXP_F64, MXP_F16 }, { MXP_F32, MXP_E4M3 }, { MXP_E4M3, MXP_F32 },
    { MXP_F32, MXP_E5M2 }, { MXP_E5M2, MXP_F32 }, { MXP_F32, MXP_S8 },
};

/* ---- errors and options ------------------------------------------------ */

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "mxp%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'mxp%s%s --help'.\n", cmd ? " " : "", cmd ? cmd : "");
    return CLI_USAGE;
}

int cli_mxp_error(const char *cmd, const char *what, mxp_status st)
{
    const char *why = mxp_last_error();
    fprintf(stderr, "mxp %s: %s%s%s\n", cmd, what ? what : "", what ? ": " : "",
            why && *why ? why : mxp_status_str(st));
    return CLI_FAILED;
}

int cli_bad_argument(const char *cmd, const char *arg)
{
    if (arg[0] == '-' && arg[1] != '\0')
        return cli_usage_error(cmd, "unknown option '%s'", arg);
    return cli_usage_error(cmd, "unexpected argument '%s'", arg);
}

int cli_load_npy(const char *cmd, const char *path, mxp_array **out)
{
    mxp_status st = mxp_npy_load(out, path);
    return st == MXP_OK ? CLI_OK : cli_mxp_error(cmd, NULL, st);
}

int cli_is_help(const char *arg)
{
    return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

int cli_option(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

int cli_convert_option(const char *cmd, int argc, char **argv, int *i, mxp_convert_opts *opts)
{
    const char *v = NULL;
    int m;
    if ((m = cli_option(argc, argv, i, "--rounding", &v)) > 0) {
        if ((opts->rounding = mxp_rounding_from_name(v)) == MXP_ROUNDING_COUNT)
            return cli_usage_error(cmd, "unknown rounding mode '%s'", v);
    } else if (m == 0 && (m = cli_option(argc, argv, i, "--overflow", &v)) > 0) {
        if ((opts->overflow = mxp_overflow_from_name(v)) == MXP_OVERFLOW_COUNT)
            return cli_usage_error(cmd, "unknown overflow mode '%s' (inf or saturate)", v);
    } else if (m == 0 && (m = cli_option(argc, argv, i, "--seed", &v)) > 0) {
        char *end;
        errno = 0;
        opts->seed = strtoull(v, &end, 0);
        if (errno || end == v || *end != '\0')
            return cli_usage_error(cmd, "--seed wants an integer, not '%s'", v);
    }
    if (m < 0)
        return cli_usage_error(cmd, "option '%s' needs a value", argv[*i]);
    return m > 0 ? CLI_OK : -1;
}

int cli_parse_size(const char *s, size_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    int shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    default: break;
    }
    if (*end != '\0' || v > (SIZE_MAX >> shift))
        return -1;
    *out = (size_t)v << shift;
    return 0;
}

/* ---- numbers ----------------------------------------------------------- */

const char *cli_shape(char *buf, size_t size, const mxp_array *a)
{
    const int ndim = mxp_array_ndim(a);
    const int64_t *shape = mxp_array_shape(a);
    size_t n = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (n < size)
        snprintf(buf + n, size - n, "%s)", ndim == 1 ? "," : "");
    return buf;
}

const char *cli_num(char *buf, size_t size, double v)
{
    if (isnan(v))
        snprintf(buf, size, "nan");
    else if (isinf(v))
        snprintf(buf, size, "%sinf", v < 0 ? "-" : "");
    else
        snprintf(buf, size, "%.5g", v);
    return buf;
}

const char *cli_exact_int(char *buf, size_t size, uint64_t v)
{
    int k = 0;
    while (k < 63 && (v >> (k + 1)) != 0)
        k++; /* k = index of the top bit */
    if (v >= 1024 && v == (uint64_t)1 << k)
        snprintf(buf, size, "2^%d", k);
    else if (v >= 1023 && (v == UINT64_MAX || v + 1 == (uint64_t)1 << (k + 1)))
        snprintf(buf, size, "2^%d-1", k + 1);
    else
        snprintf(buf, size, "%llu", (unsigned long long)v);
    return buf;
}

mxp_status cli_round_trip(double x, mxp_dtype type, const mxp_convert_opts *opts, double *out)
{
    uint64_t stored = 0;
    mxp_status st = mxp_convert(&stored, type, &x, MXP_F64, 1, opts);
    if (st == MXP_OK)
        st = mxp_convert(out, MXP_F64, &stored, type, 1, NULL);
    return st;
}

const char *cli_cpu_brand(void)
{
    static char brand[64];
    snprintf(brand, sizeof brand, "%s", mxp_cpu_brand());
    size_t n = strlen(brand);
    while (n > 0 && brand[n - 1] == ' ')
        brand[--n] = '\0';
    return n ? brand : "(unknown)";
}

void cli_print_machine(const char *indent)
{
    const char *features = mxp_cpu_features_string();
    printf("%scpu        %s\n", indent, cli_cpu_brand());
    if (mxp_cpu_vendor()[0])
        printf("%scpuid      %s family 0x%x model 0x%x (%s)\n", indent, mxp_cpu_vendor(), mxp_cpu_family(),
               mxp_cpu_model(), mxp_cpu_uarch());
    printf("%sfeatures   %s\n", indent, features[0] ? features : "(none that mxp uses)");
    printf("%sisa level  %s in use (this machine supports up to %s)\n", indent,
           mxp_isa_name(mxp_get_isa()), mxp_isa_name(mxp_isa_supported()));
}

/* ---- timing, buffers, random data -------------------------------------- */

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cli_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

void *cli_alloc(size_t bytes)
{
    size_t rounded = (bytes + 63) / 64 * 64;
    return aligned_alloc(64, rounded ? rounded : 64);
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *state)
{
    return (double)(next_random(state) >> 11) * 0x1p-53;
}

/* Irwin-Hall: the sum of four uniforms, scaled to mean 0 and variance 1. */
static double normalish(uint64_t *state)
{
    double s = uniform01(state) + uniform01(state) + uniform01(state) + uniform01(state);
    return (s - 2.0) * 1.7320508075688772;
}

/* One value for `type`: N(0,1) for floats, with `subnormals` one in 61 of
 * them in the subnormal range; integers spread over a quarter of their
 * range. */
static double random_value(const mxp_dtype_traits *t, size_t i, uint64_t *state, bool subnormals)
{
    if (t->kind == MXP_KIND_BOOL)
        return (double)(next_random(state) & 1);
    if (t->kind != MXP_KIND_FLOAT) {
        double v = normalish(state) * t->max / 8.0;
        return t->kind == MXP_KIND_UINT ? fabs(v) : v;
    }
    if (subnormals && i % 61 == 0)
        return (next_random(state) & 1 ? -1 : 1) * t->min_normal * uniform01(state);
    return normalish(state);
}

static mxp_status fill(void *buf, mxp_dtype type, size_t n, uint64_t seed, bool subnormals)
{
    enum { CHUNK = 4096 };
    const mxp_dtype_traits *t = mxp_dtype_get_traits(type);
    if (!t)
        return mxp_convert(buf, type, NULL, MXP_F64, 0, NULL); /* sets the error */
    double chunk[CHUNK];
    uint64_t state = seed;
    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
        for (size_t i = 0; i < m; i++)
            chunk[i] = random_value(t, i0 + i, &state, subnormals);
        mxp_status st = mxp_convert((char *)buf + i0 * t->itemsize, type, chunk, MXP_F64, m, NULL);
        if (st != MXP_OK)
            return st;
    }
    return MXP_OK;
}

mxp_status cli_fill_random(void *buf, mxp_dtype type, size_t n, uint64_t seed)
{
    return fill(buf, type, n, seed, true);
}

mxp_status cli_fill_normal(void *buf, mxp_dtype type, size_t n, uint64_t seed)
{
    return fill(buf, type, n, seed, false);
}

int cli_parse_n_reps(const char *cmd, int argc, char **argv, size_t *n, int *reps, bool *json,
                     void (*usage)(FILE *f))
{
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        } else if (!strcmp(argv[i], "--json")) {
            *json = true;
        } else if (cli_option(argc, argv, &i, "--n", &v) == 1) {
            if (cli_parse_size(v, n) || *n == 0)
                return cli_usage_error(cmd, "--n wants a positive size, not '%s'", v);
        } else if (cli_option(argc, argv, &i, "--reps", &v) == 1) {
            *reps = atoi(v);
            if (*reps < 1 || *reps > 64)
                return cli_usage_error(cmd, "--reps wants 1..64, not '%s'", v);
        } else {
            return cli_bad_argument(cmd, argv[i]);
        }
    }
    return -1;
}
