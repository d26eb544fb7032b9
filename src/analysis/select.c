/* Exact order statistics in passes: a radix select on the bit patterns of
 * non-negative doubles, finished by sorting what is left once it is small
 * (see select.h). */
#include <stdlib.h>
#include <string.h>

#include "analysis/select.h"
#include "mxp/alloc.h"

enum {
    FIRST_BITS = 16,
    NEXT_BITS = 12,
    COLLECT_MAX = 1 << 19 /* values collected at most, over all groups (4 MiB) */
};

static void free_groups(mxp_select *s)
{
    for (int j = 0; j < s->ngroups; j++) {
        mxp_free(s->group[j].count);
        mxp_free(s->group[j].lo);
        mxp_free(s->group[j].hi);
        mxp_free(s->group[j].vals);
    }
    s->ngroups = 0;
}

/* A new group of the values whose bits above `shift` are `prefix`: counted
 * by the `bits` bits below, or (bits == 0) collected, `size` of them. */
static mxp_status add_group(mxp_select *s, uint64_t prefix, int shift, int bits, int64_t size)
{
    mxp_select_group *g = &s->group[s->ngroups];
    *g = (mxp_select_group){ .prefix = prefix, .shift = shift, .bits = bits, .size = size };
    if (!bits) {
        g->vals = mxp_malloc((size_t)size * sizeof *g->vals);
        if (!g->vals)
            return MXP_ERR_NO_MEMORY;
        s->ngroups++;
        return MXP_OK;
    }
    const size_t bytes = ((size_t)1 << bits) * sizeof(uint64_t);
    g->count = mxp_malloc(bytes);
    g->lo = mxp_malloc(bytes);
    g->hi = mxp_malloc(bytes);
    s->ngroups++; /* freed with the others on failure */
    if (!g->count || !g->lo || !g->hi)
        return MXP_ERR_NO_MEMORY;
    memset(g->count, 0, bytes);
    memset(g->lo, 0xff, bytes);
    memset(g->hi, 0, bytes);
    return MXP_OK;
}

mxp_status mxp_select_init(mxp_select *s, int64_t n)
{
    memset(s, 0, sizeof *s);
    const bool small = n > 0 && n <= MXP_SELECT_SMALL;
    mxp_status st = add_group(s, 0, 63, small ? 0 : FIRST_BITS, small ? n : 0); /* bit 63, the sign, is 0 */
    if (st != MXP_OK)
        free_groups(s);
    return st;
}

static inline void count_value(mxp_select_group *g, uint64_t b, int64_t times)
{
    if (g->vals) {
        for (; times > 0 && g->nvals < g->size; times--)
            g->vals[g->nvals++] = b;
        return;
    }
    const uint64_t k = (b >> (g->shift - g->bits)) & (((uint64_t)1 << g->bits) - 1);
    g->count[k] += (uint64_t)times;
    g->lo[k] = b < g->lo[k] ? b : g->lo[k];
    g->hi[k] = b > g->hi[k] ? b : g->hi[k];
}

/* The group of value b, or NULL (it is not wanted this pass). */
static inline mxp_select_group *group_of(mxp_select *s, uint64_t b)
{
    if (s->pass == 0)
        return &s->group[0];
    for (int j = 0; j < s->ngroups; j++) { /* the groups' prefixes are disjoint */
        if (b >> s->group[j].shift == s->group[j].prefix)
            return &s->group[j];
    }
    return NULL;
}

void mxp_select_add(mxp_select *s, const double *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        uint64_t b;
        memcpy(&b, &v[i], sizeof b);
        mxp_select_group *g = group_of(s, b);
        if (g)
            count_value(g, b, 1);
    }
}

void mxp_select_add_counted(mxp_select *s, double v, int64_t count)
{
    uint64_t b;
    memcpy(&b, &v, sizeof b);
    mxp_select_group *g = group_of(s, b);
    if (g)
        count_value(g, b, count);
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Settles rank i from its group, or moves it into the bucket that holds
 * it: *prefix, *shift and *size name that bucket for the next pass. */
static void descend(mxp_select *s, int i, int64_t rank, uint64_t *prefix, int *shift, int64_t *size)
{
    mxp_select_group *g = &s->group[s->of[i]];
    const int64_t want = rank - s->below[i];
    if (g->vals) { /* sorted once, by the first rank that reads it */
        if (!g->sorted)
            qsort(g->vals, (size_t)g->nvals, sizeof *g->vals, cmp_u64);
        g->sorted = true;
        s->value[i] = g->vals[want < g->nvals ? want : g->nvals - 1];
        s->of[i] = -1;
        return;
    }
    const uint64_t last = ((uint64_t)1 << g->bits) - 1;
    uint64_t k = 0, c = 0;
    while (k < last && c + g->count[k] <= (uint64_t)want)
        c += g->count[k++];
    s->below[i] += (int64_t)c;
    if (g->lo[k] == g->hi[k]) {
        s->value[i] = g->lo[k];
        s->of[i] = -1;
        return;
    }
    *prefix = g->prefix << g->bits | k;
    *shift = g->shift - g->bits;
    *size = (int64_t)g->count[k];
}

/* The groups of the next pass: one per distinct prefix of the unresolved
 * ranks, collected if they are few enough in all, else counted. */
static mxp_status next_groups(mxp_select *s, int nranks, const uint64_t *prefix, const int *shift,
                              const int64_t *size)
{
    int64_t total = 0;
    for (int i = 0; i < nranks; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen |= s->of[j] >= 0 && prefix[j] == prefix[i];
        total += s->of[i] >= 0 && !seen ? size[i] : 0;
    }
    for (int i = 0; i < nranks; i++) {
        if (s->of[i] < 0)
            continue;
        int j = 0;
        while (j < s->ngroups && s->group[j].prefix != prefix[i])
            j++;
        const int bits = total <= COLLECT_MAX ? 0 : shift[i] < NEXT_BITS ? shift[i] : NEXT_BITS;
        mxp_status st = j < s->ngroups ? MXP_OK : add_group(s, prefix[i], shift[i], bits, size[i]);
        if (st != MXP_OK)
            return st;
        s->of[i] = j;
    }
    return MXP_OK;
}

mxp_status mxp_select_next(mxp_select *s, const int64_t *ranks, int nranks, bool *more)
{
    uint64_t prefix[MXP_SELECT_RANKS];
    int shift[MXP_SELECT_RANKS];
    int64_t size[MXP_SELECT_RANKS];
    for (int i = 0; i < nranks; i++) {
        if (s->pass == 0)
            s->of[i] = 0;
        if (s->of[i] >= 0)
            descend(s, i, ranks[i], &prefix[i], &shift[i], &size[i]);
    }
    free_groups(s);
    s->pass++;
    mxp_status st = next_groups(s, nranks, prefix, shift, size);
    if (st != MXP_OK)
        free_groups(s);
    *more = st == MXP_OK && s->ngroups > 0;
    return st;
}

double mxp_select_value(const mxp_select *s, int i)
{
    double v;
    memcpy(&v, &s->value[i], sizeof v);
    return v;
}

void mxp_select_free(mxp_select *s)
{
    free_groups(s);
}
