/* Sorting, argsort and argmax/argmin of 1-d strided runs in NumPy's order,
 * for every dtype: NumPy's sort, argsort, unique, median, percentile,
 * searchsorted and argmax reach these through the Python extension's array
 * functions, so bfloat16 and float8 sort in O(n) instead of through a
 * comparison callback per pair.
 *
 * Each element becomes an unsigned key whose integer order is NumPy's order:
 *
 *   unsigned int   the value
 *   signed int     the value with its sign bit flipped
 *   float          +x: bits | sign bit;  -x: ~bits  (so -inf < -1 < -0 ...)
 *                  -0 takes +0's key (they are equal), every NaN the
 *                  largest key (NaNs last, in their original order)
 *
 * and a least-significant-digit radix sort on bytes of the key carries the
 * element's index: stable, and a byte on which all keys agree is skipped
 * (so a 16-bit type takes at most two passes, an 8-bit one one). */
#include <stdint.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "core/error.h"
#include "mxp/alloc.h"
#include "mxp/ops.h"

typedef struct keyed {
    uint64_t key;
    int64_t index;
} keyed;

typedef struct key_rule {
    mxp_kind kind;
    uint64_t sign, mask; /* the sign bit; all bits of the type */
    uint64_t nan;        /* floats: the smallest |x| that is a NaN */
    uint64_t nan_bits;   /* fnuz floats: the one NaN, the negative-zero pattern */
    uint64_t shift;      /* fnuz: 1, the keys of zero and the positive values move down one
                            (into the slot -0 would have) so that +max is below the NaN's key */
} key_rule;

static key_rule rule_for(const mxp_dtype_traits *t)
{
    const mxp_dtype type = t->dtype;
    key_rule r = { t->kind, UINT64_C(1) << (t->bits - 1), 0, UINT64_MAX, UINT64_MAX, 0 };
    r.mask = t->bits == 64 ? UINT64_MAX : (UINT64_C(1) << t->bits) - 1;
    if (t->kind == MXP_KIND_FLOAT) {
        uint64_t exp_mask = ((UINT64_C(1) << t->exp_bits) - 1) << t->mant_bits;
        uint64_t mant_mask = (UINT64_C(1) << t->mant_bits) - 1;
        /* IEEE: above infinity; float8_e4m3fn (no infinity): the one NaN
         * magnitude, all exponent and mantissa bits; fnuz: 0x80 alone;
         * float6/float4: none; e8m0 (no sign, 0xff NaN): ordered as its bits */
        switch (mxp_float_style_of(type)) {
        case MXP_FLOAT_IEEE: r.nan = exp_mask + 1; break;
        case MXP_FLOAT_FN: r.nan = exp_mask | mant_mask; break;
        case MXP_FLOAT_FNUZ: r.nan_bits = r.sign, r.shift = 1; break;
        case MXP_FLOAT_E8M0: r.kind = MXP_KIND_UINT; break;
        default: break;
        }
    }
    return r;
}

/* Every NaN gets the largest key, mask: no number has it (+inf's key has
 * the NaN patterns above it; float8_e4m3fn's 448 is one pattern below).
 * Sub-byte types: the bits above the type are ignored. */
static inline uint64_t key_of(const key_rule *r, uint64_t b)
{
    b &= r->mask;
    switch (r->kind) {
    case MXP_KIND_INT: return b ^ r->sign;
    case MXP_KIND_FLOAT: {
        uint64_t mag = b & ~r->sign;
        if (mag >= r->nan || b == r->nan_bits)
            return r->mask;
        if (mag == 0) /* -0 == +0 */
            return r->sign - r->shift;
        return (b & r->sign) ? ~b & r->mask : (b | r->sign) - r->shift;
    }
    default: return b; /* unsigned, bool */
    }
}

/* The keys of n strided elements.  Called with constant size and kind, so
 * that each (size, kind) gets its own loop with the type's branch hoisted
 * out (GCC and Clang inline it at each call below). */
static inline __attribute__((always_inline)) void keys_loop(uint64_t *out, const unsigned char *p, ptrdiff_t stride,
                                                           size_t n, const key_rule *r, size_t size, mxp_kind kind)
{
    key_rule k = *r;
    k.kind = kind;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = 0;
        memcpy(&b, p + (ptrdiff_t)i * stride, size); /* little-endian */
        out[i] = key_of(&k, b);
    }
}

static void keys_of(uint64_t *out, const unsigned char *p, ptrdiff_t stride, size_t n, const key_rule *r, size_t size)
{
    switch (size * 256 + (unsigned)r->kind) {
    case 1 * 256 + MXP_KIND_FLOAT: keys_loop(out, p, stride, n, r, 1, MXP_KIND_FLOAT); break;
    case 2 * 256 + MXP_KIND_FLOAT: keys_loop(out, p, stride, n, r, 2, MXP_KIND_FLOAT); break;
    case 4 * 256 + MXP_KIND_FLOAT: keys_loop(out, p, stride, n, r, 4, MXP_KIND_FLOAT); break;
    case 8 * 256 + MXP_KIND_FLOAT: keys_loop(out, p, stride, n, r, 8, MXP_KIND_FLOAT); break;
    case 1 * 256 + MXP_KIND_INT: keys_loop(out, p, stride, n, r, 1, MXP_KIND_INT); break;
    case 2 * 256 + MXP_KIND_INT: keys_loop(out, p, stride, n, r, 2, MXP_KIND_INT); break;
    case 4 * 256 + MXP_KIND_INT: keys_loop(out, p, stride, n, r, 4, MXP_KIND_INT); break;
    case 8 * 256 + MXP_KIND_INT: keys_loop(out, p, stride, n, r, 8, MXP_KIND_INT); break;
    default: keys_loop(out, p, stride, n, r, size, r->kind); break; /* unsigned, bool */
    }
}

static mxp_status check(const char *fn, const void *a, mxp_dtype type, ptrdiff_t stride, size_t n,
                        const mxp_dtype_traits **t);

mxp_status mxp_sort_keys(uint64_t *keys, const void *a, mxp_dtype type, ptrdiff_t stride, size_t n)
{
    const mxp_dtype_traits *t;
    mxp_status st = check("mxp_sort_keys", a, type, stride, n, &t);
    if (st != MXP_OK)
        return st;
    if (n > 0 && !keys)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_sort_keys: keys is NULL");
    key_rule r = rule_for(t);
    keys_of(keys, a, stride, n, &r, t->itemsize);
    return MXP_OK;
}

static mxp_status check(const char *fn, const void *a, mxp_dtype type, ptrdiff_t stride, size_t n,
                        const mxp_dtype_traits **t)
{
    *t = mxp_dtype_get_traits(type);
    if (!*t)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %d is not a dtype", fn, (int)type);
    if (n > 0 && !a)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: the data is NULL", fn);
    if (n > (size_t)INT64_MAX / (2 * sizeof(keyed)))
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: %zu elements are too many", fn, n);
    /* every byte offset (n - 1) |stride| + itemsize fits in ptrdiff_t */
    const size_t s = stride < 0 ? (size_t)0 - (size_t)stride : (size_t)stride;
    if (s && n > 1 && n - 1 > ((size_t)PTRDIFF_MAX - 8) / s)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: n = %zu elements at a stride of %td bytes overflow the address space",
                         fn, n, stride);
    return MXP_OK;
}

/* The sorted (key, index) pairs of a run, in a new buffer (*out). */
static mxp_status sorted_keys(const char *fn, keyed **out, const void *a, const mxp_dtype_traits *t, ptrdiff_t stride,
                              size_t n)
{
    keyed *buf = mxp_malloc(2 * n * sizeof(keyed) + 1);
    if (!buf)
        return mxp_error(MXP_ERR_NO_MEMORY, "%s: no memory for %zu sort keys", fn, n);
    key_rule r = rule_for(t);
    const unsigned char *p = a;
    size_t counts[8][256] = { { 0 } };
    int bytes = (int)t->itemsize;
    enum { BLOCK = 1024 };
    uint64_t block[BLOCK];
    for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
        size_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
        keys_of(block, p + (ptrdiff_t)i0 * stride, stride, m, &r, t->itemsize);
        for (size_t i = 0; i < m; i++) {
            uint64_t k = block[i];
            buf[i0 + i] = (keyed){ k, (int64_t)(i0 + i) };
            for (int d = 0; d < bytes; d++)
                counts[d][(k >> (8 * d)) & 0xff]++;
        }
    }
    keyed *from = buf, *to = buf + n;
    for (int d = 0; d < bytes; d++) {
        size_t *c = counts[d], pos[256], total = 0;
        bool trivial = false; /* every key has the same byte d */
        for (int v = 0; v < 256; v++)
            trivial |= c[v] == n;
        if (trivial)
            continue;
        for (int v = 0; v < 256; v++) {
            pos[v] = total;
            total += c[v];
        }
        for (size_t i = 0; i < n; i++)
            to[pos[(from[i].key >> (8 * d)) & 0xff]++] = from[i];
        keyed *swap = from;
        from = to;
        to = swap;
    }
    if (from != buf)
        memcpy(buf, from, n * sizeof(keyed));
    *out = buf;
    return MXP_OK;
}

mxp_status mxp_sort_strided(void *a, mxp_dtype type, ptrdiff_t stride, size_t n)
{
    const mxp_dtype_traits *t;
    mxp_status st = check("mxp_sort_strided", a, type, stride, n, &t);
    if (st != MXP_OK || n < 2)
        return st;
    keyed *k;
    if ((st = sorted_keys("mxp_sort_strided", &k, a, t, stride, n)) != MXP_OK)
        return st;
    unsigned char *p = a, *tmp = (unsigned char *)(k + n); /* the second half is free now */
    for (size_t i = 0; i < n; i++)
        memcpy(tmp + i * t->itemsize, p + k[i].index * stride, t->itemsize);
    for (size_t i = 0; i < n; i++)
        memcpy(p + (ptrdiff_t)i * stride, tmp + i * t->itemsize, t->itemsize);
    mxp_free(k);
    return MXP_OK;
}

mxp_status mxp_argsort_strided(int64_t *index, const void *a, mxp_dtype type, ptrdiff_t stride, size_t n)
{
    const mxp_dtype_traits *t;
    mxp_status st = check("mxp_argsort_strided", a, type, stride, n, &t);
    if (st == MXP_OK && n > 0 && !index)
        st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_argsort_strided: index is NULL");
    if (st != MXP_OK || n == 0)
        return st;
    keyed *k;
    if ((st = sorted_keys("mxp_argsort_strided", &k, a, t, stride, n)) != MXP_OK)
        return st;
    for (size_t i = 0; i < n; i++)
        index[i] = k[i].index;
    mxp_free(k);
    return MXP_OK;
}

/* Key i of a block of 16-bit (width 2) or 64-bit keys. */
static inline __attribute__((always_inline)) uint64_t key_at(const void *keys, int width, size_t i)
{
    return width == 2 ? ((const uint16_t *)keys)[i] : ((const uint64_t *)keys)[i];
}

/* After a block of keys from element i0 on, its extreme e and whether it
 * holds the NaN key: the first NaN wins, as in NumPy (*at its position,
 * true: the search ends); else the block's first e becomes *best and *at
 * when it is the first block or beats *best. */
static inline __attribute__((always_inline)) bool block_done(const void *keys, int width, size_t i0, uint64_t e,
                                                             bool has_nan, uint64_t nan, bool max, uint64_t *best,
                                                             size_t *at)
{
    const uint64_t want = has_nan ? nan : e;
    if (!has_nan && !(i0 == 0 || (max ? e > *best : e < *best)))
        return false;
    size_t i = 0;
    while (key_at(keys, width, i) != want)
        i++;
    *best = e;
    *at = i0 + i;
    return has_nan;
}

/* float16 and bfloat16, contiguous: 16-bit keys, computed and reduced
 * without branches, so that the compiler vectorizes both loops. */
static size_t arg_extreme_h16(const uint16_t *p, size_t n, uint16_t nan_mag, bool max)
{
    enum { BLOCK = 2048 };
    uint16_t k[BLOCK];
    uint64_t best = 0;
    size_t at = 0;
    for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
        size_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
        uint16_t e = max ? 0 : 0xffff, any_nan = 0;
        for (size_t i = 0; i < m; i++) {
            uint16_t b = p[i0 + i], mag = b & 0x7fff;
            uint16_t key = (uint16_t)(b ^ ((b & 0x8000) ? 0xffff : 0x8000));
            key = mag == 0 ? 0x8000 : key;
            key = mag >= nan_mag ? 0xffff : key;
            k[i] = key;
            any_nan |= key == 0xffff;
            e = max ? (key > e ? key : e) : (key < e ? key : e);
        }
        if (block_done(k, 2, i0, e, any_nan, 0xffff, max, &best, &at))
            break;
    }
    return at;
}

static mxp_status arg_extreme(const char *fn, int64_t *index, const void *a, mxp_dtype type, ptrdiff_t stride,
                              size_t n, bool max)
{
    const mxp_dtype_traits *t;
    mxp_status st = check(fn, a, type, stride, n, &t);
    if (st != MXP_OK)
        return st;
    if (!index)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: index is NULL", fn);
    if (n == 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: an empty sequence has no extreme", fn);
    key_rule r = rule_for(t);
    if (t->kind == MXP_KIND_FLOAT && t->itemsize == 2 && stride == 2 && !((uintptr_t)a & 1)) {
        *index = (int64_t)arg_extreme_h16(a, n, (uint16_t)r.nan, max);
        return MXP_OK;
    }
    const unsigned char *p = a;
    enum { BLOCK = 1024 };
    uint64_t block[BLOCK], best = 0, nan = r.mask;
    bool floats = t->kind == MXP_KIND_FLOAT && t->has_nan; /* float6/float4's max has the top key */
    size_t at = 0;
    for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
        size_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
        keys_of(block, p + (ptrdiff_t)i0 * stride, stride, m, &r, t->itemsize);
        if (i0 == 0)
            best = block[0];
        /* the block's extreme without branches on the data, then its first position */
        uint64_t e = block[0];
        bool has_nan = false;
        for (size_t i = 0; i < m; i++) {
            e = max ? (block[i] > e ? block[i] : e) : (block[i] < e ? block[i] : e);
            has_nan |= floats && block[i] == nan;
        }
        if (block_done(block, 8, i0, e, has_nan, nan, max, &best, &at))
            break;
    }
    *index = (int64_t)at;
    return MXP_OK;
}

mxp_status mxp_argmax_strided(int64_t *index, const void *a, mxp_dtype type, ptrdiff_t stride, size_t n)
{
    return arg_extreme("mxp_argmax_strided", index, a, type, stride, n, true);
}

mxp_status mxp_argmin_strided(int64_t *index, const void *a, mxp_dtype type, ptrdiff_t stride, size_t n)
{
    return arg_extreme("mxp_argmin_strided", index, a, type, stride, n, false);
}
