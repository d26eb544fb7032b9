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
};
static const size_t memory_stats_older[] = {
    offsetof(mxp_memory_stats, workspace_bytes),      /* current .. bytes_converted */
    offsetof(mxp_memory_stats, hugepage_cache_bytes), /* .. hugepage_allocations */
};

#define LAYOUT(name, older) \
    const mxp_abi_layout mxp_abi_##name = { "mxp_" #name, sizeof(mxp_##name), older, (int)(sizeof older / sizeof older[0]) }
#define LAYOUT0(name) const mxp_abi_layout mxp_abi_##name = { "mxp_" #name, sizeof(mxp_##name), NULL, 0 }

LAYOUT(convert_opts, convert_opts_older);
LAYOUT(gemm_opts, gemm_opts_older);
LAYOUT(memory_stats, memory_stats_older);

/* An earlier layout ends where a field begins, on a size_t boundary. */
_Static_assert(offsetof(mxp_convert_opts, index_offset) % sizeof(size_t) == 0, "layout");
_Static_assert(offsetof(mxp_gemm_opts, bias) % sizeof(size_t) == 0, "layout");
_Static_assert(offsetof(mxp_gemm_opts, bias_len) % sizeof(size_t) == 0, "layout");
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

mxp_status mxp_abi_check(const void *p, const mxp_abi_layout *l, const char *where, const char *what, size_t *n)
{
    size_t s;
    *n = l->size;
    if (p == NULL)
        return MXP_OK;
    memcpy(&s, p, sizeof s);
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

mxp_status mxp_abi_in(const void **opts, void *local, const mxp_abi_layout *l, const char *where, const char *what)
{
    size_t n;
    mxp_status st = mxp_abi_check(*opts, l, where, what, &n);
    if (st != MXP_OK || *opts == NULL || n == l->size)
        return st;
    memcpy(local, *opts, n);
    memset((unsigned char *)local + n, 0, l->size - n);
    *opts = local;
    return MXP_OK;
}

mxp_status mxp_abi_check_embedded(size_t struct_size, size_t size, const char *where, const char *what)
{
    if (struct_size == 0 || struct_size == size)
        return MXP_OK;
    return mxp_error(MXP_ERR_INVALID_ARGUMENT,
                     "%s: %s.struct_size is %zu: an embedded struct follows the layout of the struct around it, "
                     "so it must be 0 or %zu",
                     where, what, struct_size, size);
}

void mxp_abi_out(void *out, const void *full, size_t n)
{
    if (out != NULL && n > sizeof(size_t))
        memcpy((unsigned char *)out + sizeof(size_t), (const unsigned char *)full + sizeof(size_t), n - sizeof(size_t));
}
