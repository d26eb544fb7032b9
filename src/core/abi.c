/* The ABI of the public structs: the layouts the library knows and the
 * check every entry point makes (abi.h, docs/abi.md). */
#include "core/abi.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

/* The earlier layouts, from the history of include/mxp/ (each the prefix
 * of this release's layout up to the first field it lacked). */
static const size_t convert_opts_older[] = {
    offsetof(mxp_convert_opts, index_offset), /* before index_offset */
};
static const size_t gemm_opts_older[] = {
    offsetof(mxp_gemm_opts, bias),     /* acc_dtype and convert only (no epilogue) */
    offsetof(mxp_gemm_opts, bias_len), /* before bias_len */
    offsetof(mxp_gemm_opts, a_zero_points), /* before the per-row A parameters */
};
static const size_t conv_opts_older[] = {
    offsetof(mxp_conv_opts, algorithm), /* before algorithm */
};
static const size_t memory_stats_older[] = {
    offsetof(mxp_memory_stats, workspace_bytes),      /* current .. bytes_converted */
    offsetof(mxp_memory_stats, hugepage_cache_bytes), /* .. hugepage_allocations */
};

/* The structs with a struct_size of their own inside others (each list in
 * ascending offsets). */
#define EMBED(outer, field, type) { offsetof(mxp_##outer, field), sizeof(mxp_##type), #field }
static const mxp_abi_embedded gemm_opts_embedded[] = { EMBED(gemm_opts, convert, convert_opts) };
static const mxp_abi_embedded ops_opts_embedded[] = { EMBED(ops_opts, convert, convert_opts) };
static const mxp_abi_embedded reduce_opts_embedded[] = { EMBED(reduce_opts, convert, convert_opts) };
static const mxp_abi_embedded op_call_opts_embedded[] = { EMBED(op_call_opts, convert, convert_opts) };
static const mxp_abi_embedded roundtrip_row_embedded[] = { EMBED(roundtrip_row, report, compare_report) };
static const mxp_abi_embedded advice_embedded[] = {
    EMBED(advice, row, roundtrip_row),
    EMBED(advice, row.report, compare_report),
};

#define COUNT(a) (int)(sizeof a / sizeof a[0])
#define OLDER(a) .older = a, .n_older = COUNT(a)
#define EMBEDS(a) .embedded = a, .n_embedded = COUNT(a)
#define LAYOUT(T, ...) const mxp_abi_layout mxp_abi_##T = { .name = "mxp_" #T, .size = sizeof(mxp_##T), __VA_ARGS__ }
#define LAYOUT0(T) const mxp_abi_layout mxp_abi_##T = { .name = "mxp_" #T, .size = sizeof(mxp_##T) }

/* options */
LAYOUT(convert_opts, OLDER(convert_opts_older));
LAYOUT(gemm_opts, OLDER(gemm_opts_older), EMBEDS(gemm_opts_embedded));
LAYOUT(ops_opts, EMBEDS(ops_opts_embedded));
LAYOUT(reduce_opts, EMBEDS(reduce_opts_embedded));
LAYOUT0(print_opts);
LAYOUT0(gemm_safe_opts);
LAYOUT0(observer_opts);
LAYOUT0(optimizer_opts);
LAYOUT0(loss_scaler_opts);
LAYOUT0(monitor_opts);
LAYOUT(conv_opts, OLDER(conv_opts_older));
LAYOUT0(pool_opts);
LAYOUT(op_call_opts, EMBEDS(op_call_opts_embedded));
LAYOUT0(op_check_opts);
LAYOUT0(fft_opts);
/* reports */
LAYOUT(memory_stats, OLDER(memory_stats_older));
LAYOUT0(gemm_safe_report);
LAYOUT0(compare_report);
LAYOUT0(op_check_report);
LAYOUT0(profile_machine);
LAYOUT0(profile_entry);
LAYOUT(roundtrip_row, EMBEDS(roundtrip_row_embedded));
LAYOUT(advice, EMBEDS(advice_embedded));
LAYOUT0(tensor_stats);

/* An earlier layout ends where a field begins, on a size_t boundary. */
_Static_assert(offsetof(mxp_convert_opts, index_offset) % sizeof(size_t) == 0, "layout");
_Static_assert(offsetof(mxp_gemm_opts, bias) % sizeof(size_t) == 0, "layout");
_Static_assert(offsetof(mxp_gemm_opts, bias_len) % sizeof(size_t) == 0, "layout");
_Static_assert(offsetof(mxp_gemm_opts, a_zero_points) % sizeof(size_t) == 0, "layout");
_Static_assert(offsetof(mxp_conv_opts, algorithm) % sizeof(size_t) == 0, "layout");
_Static_assert(offsetof(mxp_memory_stats, workspace_bytes) % sizeof(size_t) == 0, "layout");
_Static_assert(offsetof(mxp_memory_stats, hugepage_cache_bytes) % sizeof(size_t) == 0, "layout");

static void sizes_text(char *buf, size_t cap, const mxp_abi_layout *l)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < l->n_older && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%zu, ", l->older[i]);
    if (used < cap)
        snprintf(buf + used, cap - used, "%zu", l->size);
}

static size_t size_at(const void *p, size_t offset)
{
    size_t s;
    memcpy(&s, (const unsigned char *)p + offset, sizeof s);
    return s;
}

/* The struct_size of each struct embedded within the first n bytes. */
static mxp_status check_embedded(const void *p, size_t n, const mxp_abi_layout *l, const char *where,
                                 const char *what)
{
    for (int i = 0; i < l->n_embedded; i++) {
        const mxp_abi_embedded *e = &l->embedded[i];
        const size_t s = e->offset + e->size <= n ? size_at(p, e->offset) : 0;
        if (s != 0 && s != e->size)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                             "%s: %s->%s.struct_size is %zu: an embedded struct follows the layout of the struct "
                             "around it, so it must be 0 or %zu",
                             where, what, e->name, s, e->size);
    }
    return MXP_OK;
}

static mxp_status check_size(const void *p, const mxp_abi_layout *l, const char *where, const char *what, size_t *n)
{
    const size_t s = size_at(p, 0);
    if (s == 0 || s == l->size)
        return MXP_OK;
    for (int i = 0; i < l->n_older; i++)
        if (s == l->older[i]) {
            *n = s;
            return MXP_OK;
        }
    char sizes[96];
    sizes_text(sizes, sizeof sizes, l);
    if (s > l->size && s - l->size <= MXP_ABI_MAX_EXTRA) {
        const unsigned char *tail = (const unsigned char *)p + l->size;
        size_t i = 0;
        while (i < s - l->size && tail[i] == 0)
            i++;
        if (i == s - l->size)
            return MXP_OK;
        return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                         "%s: %s->struct_size is %zu, larger than %s (%zu bytes in this release), and byte %zu "
                         "beyond it is not zero: a field this library does not know is set",
                         where, what, s, l->name, l->size, l->size + i);
    }
    return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                     "%s: %s->struct_size is %zu, not a layout of %s (0 for this release's, or %s bytes; "
                     "larger only with zeros beyond %zu)",
                     where, what, s, l->name, sizes, l->size);
}

mxp_status mxp_abi_check(const void *p, const mxp_abi_layout *l, const char *where, const char *what, size_t *n)
{
    *n = l->size;
    if (p == NULL)
        return MXP_OK;
    mxp_status st = check_size(p, l, where, what, n);
    return st == MXP_OK ? check_embedded(p, *n, l, where, what) : st;
}

mxp_status mxp_abi_check_array(const void *p, size_t count, const mxp_abi_layout *l, const char *where,
                               const char *what, size_t *n, size_t *stride)
{
    *n = *stride = l->size;
    if (p == NULL || count == 0)
        return MXP_OK;
    const size_t s = size_at(p, 0);
    char elem[64];
    for (size_t i = 0; i < count; i++) {
        const void *e = (const unsigned char *)p + i * *stride;
        snprintf(elem, sizeof elem, "%s[%zu]", what, i);
        if (i > 0 && size_at(e, 0) != s)
            return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                             "%s: %s.struct_size is %zu, %s[0]'s is %zu: every element of an array has the "
                             "layout of the first",
                             where, elem, size_at(e, 0), what, s);
        mxp_status st = mxp_abi_check(e, l, where, elem, n);
        if (st != MXP_OK)
            return st;
        if (i == 0 && s != 0)
            *stride = s;
    }
    return MXP_OK;
}

mxp_status mxp_abi_in(const void **opts, void *local, const mxp_abi_layout *l, const char *where, const char *what)
{
    size_t n;
    mxp_status st = mxp_abi_check(*opts, l, where, what, &n);
    if (st != MXP_OK || *opts == NULL)
        return st;
    const size_t s = size_at(*opts, 0);
    if (s == 0 || s == l->size)
        return MXP_OK;
    /* An earlier layout, zero-extended, or a larger struct cut to this
     * release's: the struct_size of the copy says so, since the code below
     * may copy the struct and hand it to another entry point. */
    memcpy(local, *opts, n);
    memset((unsigned char *)local + n, 0, l->size - n);
    memcpy(local, &l->size, sizeof l->size);
    *opts = local;
    return MXP_OK;
}

void mxp_abi_out(void *out, const void *full, size_t n, const mxp_abi_layout *l)
{
    if (out == NULL)
        return;
    /* Everything from after struct_size to n, but the struct_size fields of
     * the embedded structs (in ascending order) within n. */
    size_t from = sizeof(size_t);
    for (int i = 0; i <= l->n_embedded; i++) {
        const mxp_abi_embedded *e = i < l->n_embedded ? &l->embedded[i] : NULL;
        const size_t to = e && e->offset + e->size <= n ? e->offset : n;
        if (to > from)
            memcpy((unsigned char *)out + from, (const unsigned char *)full + from, to - from);
        from = to + sizeof(size_t);
        if (to == n)
            break;
    }
}

void mxp_abi_out_array(void *out, const void *full, size_t count, size_t n, size_t stride, const mxp_abi_layout *l)
{
    for (size_t i = 0; out != NULL && i < count; i++)
        mxp_abi_out((unsigned char *)out + i * stride, (const unsigned char *)full + i * l->size, n, l);
}
