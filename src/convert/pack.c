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

/* Whole groups of elements that fill whole bytes (4 bits: 2 in 1 byte, 6
 * bits: 4 in 3, 2 bits: 4 in 1, 1 bit: 8 in 1), in loops the compiler
 * vectorizes; the number of elements done.  The bit-string loops below
 * finish the last partial group. */
static size_t pack_groups(uint8_t *d, const uint8_t *s, unsigned bits, size_t n)
{
    size_t i = 0;
    switch (bits) {
    case 4:
        for (; i + 2 <= n; i += 2)
            *d++ = (uint8_t)((s[i] & 15u) | (unsigned)s[i + 1] << 4);
        break;
    case 6:
        for (; i + 4 <= n; i += 4, d += 3) {
            const uint32_t v = (s[i] & 63u) | (s[i + 1] & 63u) << 6 | (s[i + 2] & 63u) << 12 |
                               (uint32_t)(s[i + 3] & 63u) << 18;
            d[0] = (uint8_t)v, d[1] = (uint8_t)(v >> 8), d[2] = (uint8_t)(v >> 16);
        }
        break;
    case 2:
        for (; i + 4 <= n; i += 4)
            *d++ = (uint8_t)((s[i] & 3u) | (s[i + 1] & 3u) << 2 | (s[i + 2] & 3u) << 4 | (unsigned)s[i + 3] << 6);
        break;
    default:
        for (; i + 8 <= n; i += 8) {
            unsigned v = 0;
            for (unsigned k = 0; k < 8; k++)
                v |= (s[i + k] & 1u) << k;
            *d++ = (uint8_t)v;
        }
        break;
    }
    return i;
}

static size_t unpack_groups(uint8_t *d, const uint8_t *s, unsigned bits, size_t n)
{
    size_t i = 0;
    switch (bits) {
    case 4:
        for (; i + 2 <= n; i += 2, s++)
            d[i] = *s & 15u, d[i + 1] = (uint8_t)(*s >> 4);
        break;
    case 6:
        for (; i + 4 <= n; i += 4, s += 3) {
            const uint32_t v = s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16;
            d[i] = v & 63u, d[i + 1] = (v >> 6) & 63u, d[i + 2] = (v >> 12) & 63u, d[i + 3] = (uint8_t)(v >> 18);
        }
        break;
    case 2:
        for (; i + 4 <= n; i += 4, s++)
            d[i] = *s & 3u, d[i + 1] = (*s >> 2) & 3u, d[i + 2] = (*s >> 4) & 3u, d[i + 3] = (uint8_t)(*s >> 6);
        break;
    default:
        for (; i + 8 <= n; i += 8, s++)
            for (unsigned k = 0; k < 8; k++)
                d[i + k] = (*s >> k) & 1u;
        break;
    }
    return i;
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
    const size_t done = pack_groups(d, s, bits, n);
    d += done * bits / 8;
    uint32_t acc = 0;
    unsigned held = 0;
    for (size_t i = done; i < n; i++) {
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
    uint8_t *d = dst;
    const size_t done = unpack_groups(d, src, bits, n);
    const uint8_t *s = (const uint8_t *)src + done * bits / 8;
    uint32_t acc = 0;
    unsigned held = 0;
    for (size_t i = done; i < n; i++) {
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
