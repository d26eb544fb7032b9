/* mxp cast-value — one number through mxp_convert: the bits stored, the
 * value they mean, and the IEEE-style flags raised. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct cast_args {
    const char *value_text;
    double value;
    mxp_dtype to;
    mxp_convert_opts opts;
} cast_args;

static void print_help(void)
{
    printf("usage: mxp cast-value VALUE --to TYPE [--rounding MODE] [--overflow inf|saturate]\n"
           "                        [--seed N]\n\n"
           "Reads VALUE as a float64 (decimal, hex float such as 0x1.8p-3, inf, nan),\n"
           "converts it to TYPE with mxp_convert and prints the bits stored, the value\n"
           "they hold (as a float64, %%.17g) and the flags raised: inexact, overflow,\n"
           "underflow, invalid.\n\n"
           "  --to TYPE         any dtype name: float32, f32, bf16, half, e4m3, int8, u8 ...\n"
           "  --rounding MODE   nearest_even (default), nearest_away, toward_zero, up, down,\n"
           "                    stochastic (aliases: rne, rtz, ceil, floor, sr ...)\n"
           "  --overflow MODE   inf (default: the IEEE result) or saturate (clamp to max)\n"
           "  --seed N          seed for stochastic rounding (default 0)\n");
}

/* The value is the one argument that is not an option; "-1.5" and "-inf"
 * are values, "-x" is a bad option. */
static int parse_value(cast_args *a, const char *arg)
{
    char *end;
    if (a->value_text)
        return cli_usage_error("cast-value", "more than one VALUE ('%s' and '%s')", a->value_text, arg);
    errno = 0;
    a->value = strtod(arg, &end);
    if (end == arg || *end != '\0') {
        if (arg[0] == '-' && !(arg[1] >= '0' && arg[1] <= '9') && arg[1] != '.')
            return cli_usage_error("cast-value", "unknown option '%s'", arg);
        return cli_usage_error("cast-value", "'%s' is not a number", arg);
    }
    a->value_text = arg;
    return CLI_OK;
}

static int parse_option(cast_args *a, int argc, char **argv, int *i)
{
    const char *v = NULL;
    int m;
    if ((m = cli_option(argc, argv, i, "--to", &v)) > 0) {
        if ((a->to = mxp_dtype_from_name(v)) == MXP_DTYPE_INVALID)
            return cli_usage_error("cast-value", "unknown dtype '%s'", v);
    } else if (m == 0) {
        int rc = cli_convert_option("cast-value", argc, argv, i, &a->opts);
        if (rc >= 0)
            return rc;
        return cli_usage_error("cast-value", "unknown option '%s'", argv[*i]);
    }
    if (m < 0)
        return cli_usage_error("cast-value", "option '%s' needs a value", argv[*i]);
    return CLI_OK;
}

static int parse_args(cast_args *a, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int rc;
        if (cli_is_help(argv[i])) {
            print_help();
            return -1;
        }
        if (!strncmp(argv[i], "--", 2))
            rc = parse_option(a, argc, argv, &i);
        else
            rc = parse_value(a, argv[i]);
        if (rc != CLI_OK)
            return rc;
    }
    if (!a->value_text)
        return cli_usage_error("cast-value", "missing VALUE");
    if (a->to == MXP_DTYPE_INVALID)
        return cli_usage_error("cast-value", "missing --to TYPE");
    return CLI_OK;
}

static uint64_t stored_bits(const void *buf, size_t itemsize)
{
    uint8_t b8; uint16_t b16; uint32_t b32; uint64_t b64;
    switch (itemsize) {
    case 1: memcpy(&b8, buf, 1); return b8;
    case 2: memcpy(&b16, buf, 2); return b16;
    case 4: memcpy(&b32, buf, 4); return b32;
    default: memcpy(&b64, buf, 8); return b64;
    }
}

/* Integers are printed as integers (int64 and uint64 may not fit a float64). */
static mxp_status print_stored(const void *buf, const mxp_dtype_traits *t, double *as_f64)
{
    mxp_status st = mxp_convert(as_f64, MXP_F64, buf, t->dtype, 1, NULL);
    if (st != MXP_OK || t->kind == MXP_KIND_FLOAT) {
        printf("stored    %.17g\n", *as_f64);
        return st;
    }
    int64_t s = 0;
    uint64_t u = 0;
    if (t->is_signed && (st = mxp_convert(&s, MXP_S64, buf, t->dtype, 1, NULL)) == MXP_OK)
        printf("stored    %lld\n", (long long)s);
    else if (!t->is_signed && (st = mxp_convert(&u, MXP_U64, buf, t->dtype, 1, NULL)) == MXP_OK)
        printf("stored    %llu\n", (unsigned long long)u);
    return st;
}

static void print_flags(const mxp_convert_flags *f)
{
    printf("flags    ");
    if (f->inexact) printf(" inexact");
    if (f->overflow) printf(" overflow");
    if (f->underflow) printf(" underflow");
    if (f->invalid) printf(" invalid");
    if (!f->inexact && !f->overflow && !f->underflow && !f->invalid)
        printf(" none (exact)");
    printf("\n");
}

static int cast(cast_args *a)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(a->to);
    mxp_convert_flags flags = { 0 };
    uint64_t buf = 0, in_bits;
    double back = 0;
    a->opts.flags = &flags;
    mxp_status st = mxp_convert(&buf, a->to, &a->value, MXP_F64, 1, &a->opts);
    if (st != MXP_OK)
        return cli_mxp_error("cast-value", NULL, st);
    memcpy(&in_bits, &a->value, sizeof in_bits);
    printf("input     %.17g (float64 0x%016llx)\n", a->value, (unsigned long long)in_bits);
    printf("to        %s, rounding %s, overflow %s", t->name, mxp_rounding_name(a->opts.rounding),
           mxp_overflow_name(a->opts.overflow));
    if (a->opts.rounding == MXP_ROUND_STOCHASTIC)
        printf(", seed %llu", (unsigned long long)a->opts.seed);
    printf("\nbits      0x%0*llx\n", (int)(2 * t->itemsize),
           (unsigned long long)stored_bits(&buf, t->itemsize));
    if ((st = print_stored(&buf, t, &back)) != MXP_OK)
        return cli_mxp_error("cast-value", NULL, st);
    if (isfinite(a->value) && isfinite(back) && a->value != 0 && back != a->value)
        printf("error     %+.6g (relative %+.3g)\n", back - a->value, (back - a->value) / fabs(a->value));
    print_flags(&flags);
    return CLI_OK;
}

int cli_cast_value(int argc, char **argv)
{
    cast_args a = { 0 };
    int rc = parse_args(&a, argc, argv);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc;
    return cast(&a);
}
