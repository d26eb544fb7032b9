/* The element formats of NumPy's array printing (numpy/core/arrayprint.py
 * of NumPy 1.24: FloatingFormat with floatmode 'maxprec', IntegerFormat,
 * BoolFormat), for mxp_array_format (print.c) and so `mxp show`.  As in NumPy, every element shown is
 * formatted alike: the format is set up from all of them first.
 *
 * Floats print the fewest digits that read back as the same value of the
 * array's own dtype (so float32 0.1 is "0.1"), at most `precision` of them
 * after the point, rounded correctly (ties to even) beyond that; trailing
 * zeros go, the point stays ("1.").  Scientific notation is used when a
 * nonzero |x| is >= 1e8 or < 1e-4, or max/min of them is > 1000. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/print-internal.h"
#include "mxp/convert.h"

/* x rounded to dtype and back to double. */
static mxp_status round_trip(double x, mxp_dtype type, double *out)
{
    uint64_t stored = 0;
    mxp_status st = mxp_convert(&stored, type, &x, MXP_F64, 1, NULL);
    if (st == MXP_OK)
        st = mxp_convert(out, MXP_F64, &stored, type, 1, NULL);
    return st;
}

/* ---- digits --------------------------------------------------------------- */

/* Does the decimal text s read back as v in dtype dt? */
static bool reads_back(const char *s, double v, mxp_dtype dt)
{
    double back;
    return round_trip(strtod(s, NULL), dt, &back) == MXP_OK && back == v;
}

/* Adds dir (+1 or -1) to the last of the p digits in d; a carry out of the
 * first digit raises the exponent (9.99 + 1 ulp = 1.00e+1). */
static void step_digits(char *d, int p, int *e, int dir)
{
    int i = p - 1;
    while (i >= 0 && d[i] == (dir > 0 ? '9' : '0'))
        d[i--] = dir > 0 ? '0' : '9';
    if (i >= 0) {
        d[i] = (char)(d[i] + dir);
    } else if (dir > 0) { /* 99..9 -> 100..0 */
        d[0] = '1';
        ++*e;
    }
}

/* The shortest digits (no point, at most 17) that read back as |v| in dt,
 * and the decimal exponent of the first: |v| ~ d[0].d[1..] x 10^e.  Tries
 * the correctly rounded p digits, then the neighbour on the other side of
 * v, which is the one that reads back when v is a power of two (its gap
 * below is half the gap above); returns p. */
static int shortest_digits(double v, mxp_dtype dt, char d[64], int *e)
{
    v = fabs(v);
    for (int p = 1; p <= 17; p++) {
        char s[40];
        snprintf(s, sizeof s, "%.*e", p - 1, v);
        if (reads_back(s, v, dt) || p == 17) {
            d[0] = s[0];
            memcpy(d + 1, s + 2, (size_t)(p - 1)); /* "d.ddde+XX" */
            d[p] = '\0';
            *e = atoi(strchr(s, 'e') + 1);
            return p;
        }
        char n[20];
        int ne = atoi(strchr(s, 'e') + 1);
        n[0] = s[0];
        memcpy(n + 1, s + 2, (size_t)(p - 1));
        step_digits(n, p, &ne, strtod(s, NULL) < v ? 1 : -1);
        if (n[0] != '0') {
            snprintf(s, sizeof s, "%c.%.*se%d", n[0], p - 1, n + 1, ne);
            if (reads_back(s, v, dt)) {
                memcpy(d, n, (size_t)p);
                d[p] = '\0';
                *e = ne;
                return p;
            }
        }
    }
    return 0; /* not reached: 17 digits always read back */
}

/* Trailing zeros of the fraction removed, the point kept. */
static void trim_zeros(char *s)
{
    char *dot = strchr(s, '.');
    if (!dot) {
        strcat(s, ".");
        return;
    }
    char *end = s + strlen(s);
    while (end > dot + 1 && end[-1] == '0')
        *--end = '\0';
}

/* NumPy's Dragon4 picks where the digits of |v| end: at the power of ten
 * s = max(min(u, lo), hi), where u is where the shortest digits that read
 * back end, lo where they must reach at least (min_digits; INT_MAX for
 * none) and hi the last place allowed (precision).  At s == u it prints
 * the shortest digits; elsewhere |v| rounded correctly at 10^s (past u
 * these are |v|'s exact digits: float32 8.6698689e+10 with 8 digits after
 * the point is 8.66986885e+10). */
static int last_place(int u, int lo, int hi)
{
    const int s = u < lo ? u : lo;
    return s > hi ? s : hi;
}

/* The decimal exponent of |v|'s first digit. */
static int first_place(double v)
{
    char s[64];
    snprintf(s, sizeof s, "%.30e", fabs(v));
    return atoi(strchr(s, 'e') + 1);
}

/* dragon4_positional(v, precision, min_digits (-1: None), unique=True,
 * trim='.'), unpadded. */
static void positional(char *out, size_t size, double v, mxp_dtype dt, int precision, int min_digits)
{
    char d[64];
    int e, p = shortest_digits(v, dt, d, &e);
    const int u = e - p + 1, s = last_place(u, min_digits < 0 ? INT_MAX : -min_digits, -precision);
    if (s != u) {
        snprintf(out, size, "%.*f", -s, v); /* s <= 0 here */
        trim_zeros(out);
        return;
    }
    char buf[384]; /* at most 309 integer digits + '.' + 17: with the sign, fits out's 400 */
    size_t n = 0;
    if (e < 0) {
        n += (size_t)snprintf(buf, sizeof buf, "0.%.*s%s", -e - 1, "0000000000000000000000000000000000000000", d);
    } else {
        for (int i = 0; i <= e; i++)
            buf[n++] = i < p ? d[i] : '0';
        buf[n++] = '.';
        for (int i = e + 1; i < p; i++)
            buf[n++] = d[i];
        buf[n] = '\0';
    }
    snprintf(out, size, "%s%s", signbit(v) ? "-" : "", buf);
    trim_zeros(out);
}

/* dragon4_scientific(v, precision, min_digits (-1: None), unique=True,
 * trim='.' or 'k'), unpadded: the mantissa ("-1.25") and the exponent. */
static void scientific(char *mant, size_t size, int *exp10, double v, mxp_dtype dt, int precision, int min_digits,
                       bool trim)
{
    char d[64], s[80];
    int e, p = shortest_digits(v, dt, d, &e);
    const int first = v == 0 ? 0 : first_place(v), u = e - p + 1;
    const int place = last_place(u, min_digits < 0 ? INT_MAX : first - min_digits, first - precision);
    if (place != u) {
        snprintf(s, sizeof s, "%.*e", first - place, fabs(v));
        e = atoi(strchr(s, 'e') + 1);
        *strchr(s, 'e') = '\0';
        d[0] = s[0];
        p = 1;
        for (const char *q = s + 1; *q && p < (int)sizeof d - 1; q++)
            if (*q != '.')
                d[p++] = *q;
        d[p] = '\0';
    }
    snprintf(mant, size, "%s%c.%s", signbit(v) ? "-" : "", d[0], d + 1);
    if (trim)
        trim_zeros(mant);
    *exp10 = e;
}

/* ---- the format of a set of elements ------------------------------------------ */

static double float_value(const void *elem, mxp_dtype dt)
{
    double v = 0;
    mxp_convert(&v, MXP_F64, elem, dt, 1, NULL);
    return v;
}

static long long int_value(const void *elem, size_t size)
{
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    switch (size) {
    case 1: memcpy(&i8, elem, 1); return i8;
    case 2: memcpy(&i16, elem, 2); return i16;
    case 4: memcpy(&i32, elem, 4); return i32;
    default: memcpy(&i64, elem, 8); return i64;
    }
}

static unsigned long long uint_value(const void *elem, size_t size)
{
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (size) {
    case 1: memcpy(&u8, elem, 1); return u8;
    case 2: memcpy(&u16, elem, 2); return u16;
    case 4: memcpy(&u32, elem, 4); return u32;
    default: memcpy(&u64, elem, 8); return u64;
    }
}

static void int_text(char *out, size_t size, const mxp_print_format *f, const void *elem)
{
    if (f->kind == MXP_KIND_UINT)
        snprintf(out, size, "%llu", uint_value(elem, f->itemsize));
    else
        snprintf(out, size, "%lld", int_value(elem, f->itemsize));
}

/* A threshold or quotient as NumPy compares it: in the array's dtype. */
static double in_dtype(double x, mxp_dtype dt)
{
    double r = x;
    round_trip(x, dt, &r);
    return r;
}

static void float_setup(mxp_print_format *f, const void *const *elems, size_t count)
{
    double lo = INFINITY, hi = 0;
    bool nonfinite = false, neginf = false, finite = false;
    for (size_t i = 0; i < count; i++) {
        const double v = float_value(elems[i], f->dtype), a = fabs(v);
        if (!isfinite(v)) {
            nonfinite = true;
            neginf |= isinf(v) && v < 0;
            continue;
        }
        finite = true;
        if (a != 0) {
            lo = a < lo ? a : lo;
            hi = a > hi ? a : hi;
        }
    }
    f->exp_format = hi > 0 && (hi >= 1e8 || lo < in_dtype(1e-4, f->dtype) || in_dtype(hi / lo, f->dtype) > 1000);
    f->pad_left = f->pad_right = f->exp_size = f->frac_digits = 0;
    for (size_t i = 0; finite && i < count; i++) {
        const double v = float_value(elems[i], f->dtype);
        char s[400];
        int e = 0;
        if (!isfinite(v))
            continue;
        if (f->exp_format)
            scientific(s, sizeof s, &e, v, f->dtype, f->precision, -1, true);
        else
            positional(s, sizeof s, v, f->dtype, f->precision, -1);
        const int left = (int)(strchr(s, '.') - s), right = (int)strlen(s) - left - 1;
        char es[16];
        const int exp_len = f->exp_format ? snprintf(es, sizeof es, "%02d", abs(e)) : 0;
        f->pad_left = left > f->pad_left ? left : f->pad_left;
        f->frac_digits = right > f->frac_digits ? right : f->frac_digits;
        f->exp_size = exp_len > f->exp_size ? exp_len : f->exp_size;
    }
    f->pad_right = f->exp_format ? f->exp_size + 2 + f->frac_digits : f->frac_digits;
    if (nonfinite) { /* room for "nan", "inf", "-inf" */
        const int offset = f->pad_right + 1, inflen = 3 + neginf;
        f->pad_left = 3 - offset > f->pad_left ? 3 - offset : f->pad_left;
        f->pad_left = inflen - offset > f->pad_left ? inflen - offset : f->pad_left;
    }
}

void mxp_print_format_init(mxp_print_format *f, mxp_dtype dt, int ndim, int precision, const void *const *elems, size_t count)
{
    memset(f, 0, sizeof *f);
    f->dtype = dt;
    f->kind = mxp_dtype_get_traits(dt)->kind;
    f->itemsize = mxp_dtype_itemsize(dt);
    f->precision = precision;
    f->ndim = ndim;
    if (f->kind == MXP_KIND_FLOAT) {
        float_setup(f, elems, count);
    } else if (f->kind != MXP_KIND_BOOL) { /* the longer of str(max) and str(min) */
        for (size_t i = 0; i < count; i++) {
            char s[32];
            int_text(s, sizeof s, f, elems[i]);
            const int len = (int)strlen(s);
            f->width = len > f->width ? len : f->width;
        }
    }
}

void mxp_print_format_element(const mxp_print_format *f, const void *elem, char *out, size_t size)
{
    if (f->kind == MXP_KIND_BOOL) {
        const bool b = *(const unsigned char *)elem != 0;
        snprintf(out, size, "%s", b ? (f->ndim > 0 ? " True" : "True") : "False");
        return;
    }
    char s[400];
    if (f->kind != MXP_KIND_FLOAT) {
        int_text(s, sizeof s, f, elem);
        snprintf(out, size, "%*s", f->width, s);
        return;
    }
    const double v = float_value(elem, f->dtype);
    if (!isfinite(v)) {
        snprintf(out, size, "%*s", f->pad_left + f->pad_right + 1, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        return;
    }
    if (f->exp_format) { /* every mantissa with frac_digits digits after the point */
        int e;
        scientific(s, sizeof s, &e, v, f->dtype, f->frac_digits, f->frac_digits, false);
        const int left = (int)(strchr(s, '.') - s);
        snprintf(out, size, "%*s%se%c%0*d", f->pad_left - left, "", s, e < 0 ? '-' : '+', f->exp_size, abs(e));
    } else { /* integer digits exact (min_digits 0) */
        positional(s, sizeof s, v, f->dtype, f->precision, 0);
        const int left = (int)(strchr(s, '.') - s), right = (int)strlen(s) - left - 1;
        snprintf(out, size, "%*s%s%*s", f->pad_left - left, "", s, f->pad_right - right, "");
    }
}
