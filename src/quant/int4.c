/* int4 / uint4 codes packed two per byte, each row (last dimension) on its
 * own:
 *
 *     byte j of a row:  bit 7 ... 4 | 3 ... 0
 *                       element 2j+1 | element 2j
 *
 * int4 is stored as its two's complement nibble (-1 -> 0xF, -8 -> 0x8); an
 * odd row's last byte has high nibble 0 (ignored when unpacking). */
#include <string.h>

#include "quant/quant-internal.h"
#include "array/array-internal.h"
#include "core/error.h"

/* ceil(n / 2) without overflow */
static int64_t packed_len(int64_t n)
{
    return n / 2 + n % 2;
}

mxp_status mxp_pack_int4(mxp_array **out, const mxp_array *codes)
{
    const char *what = "mxp_pack_int4";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
    *out = NULL;
    if (!codes)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: codes is NULL", what);
    if (codes->dtype != MXP_S8 && codes->dtype != MXP_U8)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: codes are %s; int4 codes are int8, uint4 codes uint8", what,
                         mxp_dtype_name(codes->dtype));
    const bool is_signed = codes->dtype == MXP_S8;
    const int lo = is_signed ? -8 : 0, hi = is_signed ? 7 : 15;
    mxp_array *c = NULL, *r = NULL;
    mxp_status st = mxp_array_ascontiguous(&c, codes, 'C');
    if (st != MXP_OK)
        return st;
    const uint8_t *src = mxp_array_data(c);
    const int64_t size = mxp_array_size(c);
    for (int64_t e = 0; e < size && st == MXP_OK; e++) {
        const int v = is_signed ? (int)(int8_t)src[e] : (int)src[e];
        if (v < lo || v > hi)
            st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: code %d at index %lld is outside %s's [%d, %d]", what, v,
                           (long long)e, is_signed ? "int4" : "uint4", lo, hi);
    }
    int64_t shape[MXP_MAXDIMS];
    const int nd = codes->ndim > 0 ? codes->ndim : 1; /* 0-d: shape [1] */
    if (codes->ndim > 0)
        memcpy(shape, codes->shape, (size_t)nd * sizeof *shape);
    else
        shape[0] = 1;
    const int64_t n = shape[nd - 1], half = packed_len(n);
    shape[nd - 1] = half;
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, MXP_U8, nd, shape);
    if (st == MXP_OK && n > 0) {
        uint8_t *dst = mxp_array_data(r);
        for (int64_t row = 0; row < size / n; row++, src += n, dst += half) {
            for (int64_t j = 0; j < n / 2; j++)
                dst[j] = (uint8_t)((src[2 * j] & 0xFu) | (unsigned)(src[2 * j + 1] & 0xFu) << 4);
            if (n % 2)
                dst[half - 1] = (uint8_t)(src[n - 1] & 0xFu);
        }
    }
    mxp_array_free(c);
    if (st == MXP_OK)
        *out = r;
    return st;
}

mxp_status mxp_unpack_int4(mxp_array **out, const mxp_array *packed, int64_t last_dim, mxp_dtype code_dtype)
{
    const char *what = "mxp_unpack_int4";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", what);
    *out = NULL;
    if (!packed)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: packed is NULL", what);
    if (code_dtype != MXP_S8 && code_dtype != MXP_U8)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: code_dtype %s is neither int8 (int4) nor uint8 (uint4)", what,
                         mxp_dtype_name(code_dtype));
    if (packed->dtype != MXP_U8)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: packed is %s, not uint8", what, mxp_dtype_name(packed->dtype));
    if (last_dim < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: last_dim is %lld", what, (long long)last_dim);
    const int nd = packed->ndim;
    const int64_t half = packed_len(last_dim);
    if (nd == 0)
        return mxp_error(MXP_ERR_SHAPE, "%s: packed is 0-d (packed rows have ndim >= 1)", what);
    if (packed->shape[nd - 1] != half)
        return mxp_error(MXP_ERR_SHAPE, "%s: %lld codes per row need a last dimension of %lld bytes, packed has %lld",
                         what, (long long)last_dim, (long long)half, (long long)packed->shape[nd - 1]);
    int64_t shape[MXP_MAXDIMS];
    memcpy(shape, packed->shape, (size_t)nd * sizeof *shape);
    shape[nd - 1] = last_dim;
    mxp_array *c = NULL, *r = NULL;
    mxp_status st = mxp_array_new_owner(&r, code_dtype, nd, shape);
    if (st == MXP_OK)
        st = mxp_array_ascontiguous(&c, packed, 'C');
    if (st != MXP_OK) {
        mxp_array_free(r);
        return st;
    }
    const uint8_t *src = mxp_array_data(c);
    uint8_t *dst = mxp_array_data(r);
    const int64_t rows = half > 0 ? mxp_array_size(c) / half : 0;
    for (int64_t row = 0; row < rows; row++, src += half, dst += last_dim)
        for (int64_t j = 0; j < last_dim; j++) {
            const unsigned nib = (j % 2 ? src[j / 2] >> 4 : src[j / 2]) & 0xFu;
            /* sign-extend bit 3: 0x8..0xF -> -8..-1 */
            dst[j] = code_dtype == MXP_S8 ? (uint8_t)(int8_t)((int)(nib ^ 8u) - 8) : (uint8_t)nib;
        }
    mxp_array_free(c);
    *out = r;
    return MXP_OK;
}
