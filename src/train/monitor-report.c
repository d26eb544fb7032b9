/* The stability monitor's report: a text table (one line per tensor) or
 * JSON with every record kept.  Built from the public monitor API. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "train/train-internal.h"
#include "core/error.h"

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool failed;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) MXP_PRINTF(2, 3);

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int need = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (need < 0) {
            b->failed = true;
            return;
        }
        if (b->p && b->len + (size_t)need < b->cap) {
            b->len += (size_t)need;
            return;
        }
        size_t cap = b->cap ? 2 * b->cap : 4096;
        while (cap < b->len + (size_t)need + 1)
            cap *= 2;
        char *grown = mxp_malloc(cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        if (b->p)
            memcpy(grown, b->p, b->len + 1);
        else
            grown[0] = '\0';
        mxp_free(b->p);
        b->p = grown;
        b->cap = cap;
    }
}

/* "overflow,underflow" or "-" */
static const char *flag_list(unsigned flags, char *buf, size_t size, const char *sep, const char *quote)
{
    size_t n = 0;
    buf[0] = '\0';
    for (unsigned f = 1; f <= MXP_MONITOR_VANISHING && n < size; f <<= 1) {
        if (flags & f)
            n += (size_t)snprintf(buf + n, size - n, "%s%s%s%s", n ? sep : "", quote, mxp_monitor_flag_name(f), quote);
    }
    return buf;
}

/* A JSON number: non-finite values are null. */
static void sb_num(sbuf *b, double v)
{
    if (isfinite(v))
        sb_printf(b, "%.9g", v);
    else
        sb_printf(b, "null");
}

static void sb_json_string(sbuf *b, const char *s)
{
    sb_printf(b, "\"");
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sb_printf(b, "\\%c", c);
        else if (c < 0x20)
            sb_printf(b, "\\u%04x", c);
        else
            sb_printf(b, "%c", c);
    }
    sb_printf(b, "\"");
}

static void text_line(sbuf *b, const mxp_monitor *m, size_t i)
{
    const char *name = mxp_monitor_tensor_name(m, i);
    const mxp_tensor_stats *r = NULL;
    size_t n = 0;
    (void)mxp_monitor_history(m, name, &r, &n);
    unsigned all = 0;
    for (size_t k = 0; k < n; k++)
        all |= r[k].flags;
    const mxp_tensor_stats *last = &r[n - 1];
    mxp_dtype dt = MXP_F32;
    (void)mxp_monitor_suggest(m, name, &dt, NULL, 0);
    char flags[96];
    sb_printf(b, "  %-20s %-10s %7zu %10.3e %10.3e %8lld %8.2f%% %8.2f%%  %-9s %s\n", name,
              mxp_tensor_role_name(mxp_monitor_tensor_role(m, i)), n, last->norm, last->max_abs,
              (long long)(last->nan + last->inf), 100.0 * last->overflow_share, 100.0 * last->underflow_share,
              mxp_dtype_get_traits(dt)->short_name, all ? flag_list(all, flags, sizeof flags, ",", "") : "-");
}

static void text_report(sbuf *b, const mxp_monitor *m)
{
    const size_t n = mxp_monitor_tensor_count(m);
    sb_printf(b, "stability monitor: %zu tensors, shares against %s; the last record, flags of all records\n", n,
              mxp_dtype_name(mxp_monitor_target(m)));
    sb_printf(b, "  %-20s %-10s %7s %10s %10s %8s %9s %9s  %-9s %s\n", "tensor", "role", "records", "norm", "max|x|",
              "inf/nan", "overflow", "underflow", "suggest", "flags");
    for (size_t i = 0; i < n; i++)
        text_line(b, m, i);
}

static void json_record(sbuf *b, const mxp_tensor_stats *r)
{
    char flags[128];
    sb_printf(b, "{\"step\": %lld, \"count\": %lld, \"nan\": %lld, \"inf\": %lld, \"zeros\": %lld, "
                 "\"overflow\": %lld, \"underflow\": %lld, \"subnormal\": %lld, \"norm\": ",
              (long long)r->step, (long long)r->count, (long long)r->nan, (long long)r->inf, (long long)r->zeros,
              (long long)r->overflow, (long long)r->underflow, (long long)r->subnormal);
    sb_num(b, r->norm);
    sb_printf(b, ", \"max_abs\": ");
    sb_num(b, r->max_abs);
    sb_printf(b, ", \"min_abs\": ");
    sb_num(b, r->min_abs);
    sb_printf(b, ", \"overflow_share\": ");
    sb_num(b, r->overflow_share);
    sb_printf(b, ", \"underflow_share\": ");
    sb_num(b, r->underflow_share);
    sb_printf(b, ", \"underflow_norm_share\": ");
    sb_num(b, r->underflow_norm_share);
    sb_printf(b, ", \"flags\": [%s]}", flag_list(r->flags, flags, sizeof flags, ", ", "\""));
}

static void json_tensor(sbuf *b, const mxp_monitor *m, size_t i)
{
    const char *name = mxp_monitor_tensor_name(m, i);
    const mxp_tensor_stats *r = NULL;
    size_t n = 0;
    (void)mxp_monitor_history(m, name, &r, &n);
    mxp_dtype dt = MXP_F32;
    char reason[256], flags[128];
    (void)mxp_monitor_suggest(m, name, &dt, reason, sizeof reason);
    unsigned all = 0;
    for (size_t k = 0; k < n; k++)
        all |= r[k].flags;
    sb_printf(b, "    {\"name\": ");
    sb_json_string(b, name);
    sb_printf(b, ", \"role\": \"%s\", \"suggest\": \"%s\", \"reason\": ",
              mxp_tensor_role_name(mxp_monitor_tensor_role(m, i)), mxp_dtype_name(dt));
    sb_json_string(b, reason);
    sb_printf(b, ", \"flags\": [%s],\n     \"history\": [", flag_list(all, flags, sizeof flags, ", ", "\""));
    for (size_t k = 0; k < n; k++) {
        sb_printf(b, "%s\n      ", k ? "," : "");
        json_record(b, &r[k]);
    }
    sb_printf(b, "]}");
}

static void json_report(sbuf *b, const mxp_monitor *m)
{
    char flags[128];
    sb_printf(b, "{\"target\": \"%s\", \"flags\": [%s], \"tensors\": [", mxp_dtype_name(mxp_monitor_target(m)),
              flag_list(mxp_monitor_flags(m), flags, sizeof flags, ", ", "\""));
    for (size_t i = 0; i < mxp_monitor_tensor_count(m); i++) {
        sb_printf(b, "%s\n", i ? "," : "");
        json_tensor(b, m, i);
    }
    sb_printf(b, "]}\n");
}

mxp_status mxp_monitor_report(const mxp_monitor *m, bool json, char **out)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_monitor_report: out is NULL");
    *out = NULL;
    if (!m)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_monitor_report: monitor is NULL");
    sbuf b = { 0 };
    if (json)
        json_report(&b, m);
    else
        text_report(&b, m);
    if (b.failed) {
        mxp_free(b.p);
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_monitor_report: out of memory");
    }
    *out = b.p;
    return MXP_OK;
}
