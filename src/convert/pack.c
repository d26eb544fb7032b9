/* Packed forms of the sub-byte types: element i at bits [i * bits, (i + 1)
 * * bits) of a little-endian bit string (include/mxp/convert.h). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "mxp/convert.h"

/* The type's bits if it is a sub-byte type, else 0. */
static int sub_byte_bits(mxp_dtype t)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t);
    return tr && tr->kind != MXP_KIND_BOOL && tr->bits < 8 ? tr->bits : 0;
}

size_t mxp_packed_bytes(mxp_dtype t, size_t n)
{
    const int bits = sub_byte_bits(t);
    if (!bits || n > (SIZE_MAX - 7) / (size_t)bits)
        return 0;
    return (n * (size_t)bits + 7) / 8;
}

static mxp_status check(const char *fn, void *dst, const void *src, mxp_dtype t, size_t n, size_t *packed)
{
    if (!sub_byte_bits(t))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %s is not a sub-byte type (float6, float4, int4/2/1, uint4/2/1)",
                         fn, mxp_dtype_name(t));
    *packed = mxp_packed_bytes(t, n);
    if (n == 0)
        return MXP_OK;
    if (!dst || !src)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL with n = %zu", fn, !dst ? "dst" : "src", n);
    if (*packed == 0)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: %zu elements do not fit size_t bytes", fn, n);
    return MXP_OK;
}

static bool overlap(const void *a, size_t na, const void *b, size_t nb)
{
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + nb && y < x + na;
}

mxp_status mxp_pack(void *dst, const void *src, mxp_dtype t, size_t n)
{
    size_t packed;
    mxp_status st = check("mxp_pack", dst, src, t, n, &packed);
    if (st != MXP_OK || n == 0)
        return st;
    if (overlap(dst, packed, src, n))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_pack: dst and src overlap");
    const unsigned bits = (unsigned)sub_byte_bits(t), mask = (1u << bits) - 1;
    const uint8_t *s = src;
    uint8_t *d = dst;
    uint32_t acc = 0;
    unsigned held = 0;
    for (size_t i = 0; i < n; i++) {
        acc |= (uint32_t)(s[i] & mask) << held;
        held += bits;
        while (held >= 8) {
            *d++ = (uint8_t)acc;
            acc >>= 8;
            held -= 8;
        }
    }
    if (held)
        *d = (uint8_t)acc; /* the unused bits are zero */
    return MXP_OK;
}

mxp_status mxp_unpack(void *dst, const void *src, mxp_dtype t, size_t n)
{
    size_t packed;
    mxp_status st = check("mxp_unpack", dst, src, t, n, &packed);
    if (st != MXP_OK || n == 0)
        return st;
    if (overlap(dst, n, src, packed))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_unpack: dst and src overlap");
    const unsigned bits = (unsigned)sub_byte_bits(t), mask = (1u << bits) - 1;
    const uint8_t *s = src;
    uint8_t *d = dst;
    uint32_t acc = 0;
    unsigned held = 0;
    for (size_t i = 0; i < n; i++) {
        if (held < bits) {
            acc |= (uint32_t)*s++ << held;
            held += 8;
        }
        d[i] = (uint8_t)(acc & mask);
        acc >>= bits;
        held -= bits;
    }
    return MXP_OK;
}
