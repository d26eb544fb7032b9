/* The binary frame of a .npy file: magic, version and header length, read
 * (mxp_npy_parse_preamble) and written with the header text np.save would
 * write (mxp_npy_format_prefix).  No I/O here. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "io/npy-internal.h"

static const unsigned char npy_magic[MXP_NPY_MAGIC_LEN] = { 0x93, 'N', 'U', 'M', 'P', 'Y' };

bool mxp_npy_host_little(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static mxp_status fail(char msg[MXP_NPY_MSG], const char *fmt, ...) MXP_PRINTF(2, 3);
static mxp_status fail(char msg[MXP_NPY_MSG], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, MXP_NPY_MSG, fmt, ap);
    va_end(ap);
    return MXP_ERR_FORMAT;
}

/* ---- preamble -------------------------------------------------------- */

size_t mxp_npy_preamble_len(int major)
{
    return major == 1 ? 10 : 12;
}

mxp_status mxp_npy_parse_preamble(const unsigned char *p, size_t n, mxp_npy_header *h, char msg[MXP_NPY_MSG])
{
    /* np.savez writes a zip archive of .npy files: local file header "PK\3\4",
     * or an empty archive's end record "PK\5\6". */
    if (n >= 4 && (!memcmp(p, "PK\3\4", 4) || !memcmp(p, "PK\5\6", 4)))
        return fail(msg, "not a .npy file (an .npz archive? it is a zip of .npy files: unzip it, "
                         "or save one array with np.save(\"x.npy\", np.load(path)[\"name\"]))");
    if (n < MXP_NPY_MAGIC_LEN || memcmp(p, npy_magic, MXP_NPY_MAGIC_LEN) != 0)
        return fail(msg, "not a .npy file (it does not start with \"\\x93NUMPY\")");
    if (n < 10)
        return fail(msg, "the file ends inside the preamble (%zu bytes)", n);
    h->major = p[6];
    h->minor = p[7];
    if (h->major < 1 || h->major > 3 || h->minor != 0)
        return fail(msg, "format version %d.%d is not supported (mxp reads 1.0, 2.0 and 3.0)", h->major, h->minor);
    const size_t pre = mxp_npy_preamble_len(h->major);
    if (n < pre)
        return fail(msg, "the file ends inside the preamble (%zu bytes)", n);
    uint32_t len = (uint32_t)p[8] | (uint32_t)p[9] << 8;
    if (h->major > 1)
        len |= (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
    if (len > MXP_NPY_HEADER_MAX)
        return fail(msg, "header length %lu is over the limit of %d bytes", (unsigned long)len, MXP_NPY_HEADER_MAX);
    h->header_len = len;
    h->data_offset = pre + len;
    return MXP_OK;
}

/* ---- writing --------------------------------------------------------- */

/* repr(dtype.descr) as np.save writes it: '<f4', '|u1', or for the types
 * NumPy lacks [('bfloat16', '<u2')]. */
static int format_descr(char *buf, size_t cap, mxp_dtype dt)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    const char order = t->itemsize == 1 ? '|' : mxp_npy_host_little() ? '<' : '>';
    if (mxp_npy_is_numpy_type(dt))
        return snprintf(buf, cap, "'%c%c%zu'", order, (char)t->kind, t->itemsize);
    return snprintf(buf, cap, "[('%s', '%cu%zu')]", t->name, order, t->itemsize);
}

size_t mxp_npy_format_prefix(char *buf, mxp_dtype dt, bool fortran, int ndim, const int64_t *shape)
{
    char descr[64], text[MXP_NPY_PREFIX_MAX];
    format_descr(descr, sizeof descr, dt);
    int n = snprintf(text, sizeof text, "{'descr': %s, 'fortran_order': %s, 'shape': (", descr,
                     fortran ? "True" : "False");
    for (int i = 0; i < ndim; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%lld", i ? ", " : "", (long long)shape[i]);
    n += snprintf(text + n, sizeof text - (size_t)n, "%s), }", ndim == 1 ? "," : "");
    if (ndim > 0) {
        /* np.save leaves room for the growing axis to reach 21 digits. */
        char digits[24];
        int used = snprintf(digits, sizeof digits, "%lld", (long long)shape[fortran ? ndim - 1 : 0]);
        for (int i = used; i < 21; i++)
            text[n++] = ' ';
    }
    /* Spaces and a final '\n' make preamble + header a multiple of 64;
     * np.save adds a full 64 when it already is one.  A header of 32
     * 19-digit dimensions is under 800 bytes, so version 1.0 (a 16-bit
     * length) always holds it; NumPy needs 2.0 only for huge structured
     * dtypes, which mxp does not write. */
    const int major = 1;
    const size_t pre = mxp_npy_preamble_len(major);
    const size_t pad = 64 - (pre + (size_t)n + 1) % 64;
    const size_t hlen = (size_t)n + pad + 1;
    memcpy(buf, npy_magic, MXP_NPY_MAGIC_LEN);
    buf[6] = (char)major;
    buf[7] = 0;
    for (size_t i = 0; i < pre - 8; i++)
        buf[8 + i] = (char)(unsigned char)(hlen >> (8 * i));
    memcpy(buf + pre, text, (size_t)n);
    memset(buf + pre + n, ' ', pad);
    buf[pre + hlen - 1] = '\n';
    return pre + hlen;
}
