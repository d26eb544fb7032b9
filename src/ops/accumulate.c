/* Running sums, products and extremes of a 1-d strided run (NumPy's
 * add.accumulate, np.cumsum, np.cumprod, maximum.accumulate ...) for the
 * float dtypes: the running value is kept in float64 and each output is
 * rounded once from it, so a bfloat16 cumsum is the correctly rounded
 * prefix sum of the float64 values, not a chain of bfloat16 roundings.
 *
 * The call continues a run: out[0] = start op a[0] (start, of out's type,
 * is the previous output -- NumPy's inner loop passes it), or out[0] = a[0]
 * when start is NULL; then out[i] = out[i-1] op a[i] with out[i-1] the
 * float64 running value.  out may be a itself, element for element. */
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/fpenv.h"
#include "ops/ops-internal.h"

enum { BLOCK = 512 };

static double apply(mxp_binary_op op, double acc, double x)
{
    switch (op) {
    case MXP_OP_ADD: return acc + x;
    case MXP_OP_MULTIPLY: return acc * x;
    case MXP_OP_MAXIMUM: return mxp_ew_maximum(acc, x);
    case MXP_OP_MINIMUM: return mxp_ew_minimum(acc, x);
    case MXP_OP_FMAX: return mxp_ew_fmax(acc, x);
    default: return mxp_ew_fmin(acc, x); /* MXP_OP_FMIN */
    }
}

static bool supported(mxp_binary_op op)
{
    return op == MXP_OP_ADD || op == MXP_OP_MULTIPLY || op == MXP_OP_MAXIMUM || op == MXP_OP_MINIMUM ||
           op == MXP_OP_FMAX || op == MXP_OP_FMIN;
}

static mxp_status check(mxp_binary_op op, size_t n, const void *out, mxp_dtype out_type, ptrdiff_t os, const void *a,
                        mxp_dtype a_type, ptrdiff_t as)
{
    const char *fn = "mxp_accumulate_strided";
    const mxp_dtype_traits *to = mxp_dtype_get_traits(out_type), *ta = mxp_dtype_get_traits(a_type);
    if (!to || !ta)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: %d is not a dtype", fn, (int)(to ? a_type : out_type));
    if ((unsigned)op >= MXP_BINARY_OP_COUNT || !supported(op))
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: op %d is none of add, multiply, maximum, minimum, fmax, fmin", fn,
                         (int)op);
    if (to->kind != MXP_KIND_FLOAT)
        return mxp_error(MXP_ERR_UNSUPPORTED, "%s: out is %s; running values are kept for float outputs", fn,
                         to->name);
    if (n == 0)
        return MXP_OK;
    if (!out || !a)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: %s is NULL with n = %zu", fn, out ? "a" : "out", n);
    if (n > 1 && (os == 0 || (os < 0 ? (size_t)0 - (size_t)os : (size_t)os) < to->itemsize))
        return mxp_error(MXP_ERR_OVERLAP, "%s: out_stride %td overlaps out's %zu-byte elements", fn, os, to->itemsize);
    /* every byte offset (n - 1) |stride| + itemsize fits in ptrdiff_t (the blocks' own checks see one block) */
    const size_t uo = os < 0 ? (size_t)0 - (size_t)os : (size_t)os, ua = as < 0 ? (size_t)0 - (size_t)as : (size_t)as;
    const size_t max_off = (size_t)PTRDIFF_MAX - 8;
    if (n - 1 > max_off / (uo ? uo : 1) || (ua && n - 1 > max_off / ua))
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "%s: n = %zu elements at strides %td/%td bytes overflow the address space",
                         fn, n, os, as);
    return MXP_OK;
}

mxp_status mxp_accumulate_strided(mxp_binary_op op, size_t n, void *out, mxp_dtype out_type, ptrdiff_t out_stride,
                                  const void *a, mxp_dtype a_type, ptrdiff_t a_stride, const void *start)
{
    mxp_status st = check(op, n, out, out_type, out_stride, a, a_type, a_stride);
    if (st != MXP_OK || n == 0)
        return st;
    mxp_fpenv env = mxp_fpenv_enter();
    double acc = 0, buf[BLOCK];
    bool have = start != NULL;
    if (have)
        st = mxp_convert(&acc, MXP_F64, start, out_type, 1, NULL);
    for (size_t j = 0; j < n && st == MXP_OK; j += BLOCK) {
        size_t m = n - j < BLOCK ? n - j : BLOCK;
        /* read the block whole before writing it: out may be a */
        st = mxp_convert_strided(buf, MXP_F64, sizeof(double), (const char *)a + (ptrdiff_t)j * a_stride, a_type,
                                 a_stride, m, NULL);
        for (size_t i = 0; i < m && st == MXP_OK; i++) {
            acc = have ? apply(op, acc, buf[i]) : buf[i];
            have = true;
            buf[i] = acc;
        }
        if (st == MXP_OK)
            st = mxp_convert_strided((char *)out + (ptrdiff_t)j * out_stride, out_type, out_stride, buf, MXP_F64,
                                     sizeof(double), m, NULL);
    }
    mxp_fpenv_leave(env);
    return st;
}
