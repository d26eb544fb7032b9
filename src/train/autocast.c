/* The autocast policy table: which dtype each kind of operation computes
 * in.  The low-precision policies follow torch.autocast's op lists:
 * matmul-like ops in the low dtype; softmax, losses, reductions and
 * normalisation in float32 (they exponentiate, sum long rows or divide by
 * small numbers). */
#include <ctype.h>
#include <string.h>

#include "train/train-internal.h"
#include "core/dtype-internal.h"
#include "core/error.h"

struct mxp_autocast {
    int policy; /* index into policies */
    mxp_dtype dtype[MXP_AUTOCAST_OP_COUNT];
};

typedef struct policy_row {
    const char *name;
    mxp_dtype low; /* the dtype of matmul and elementwise ops */
} policy_row;

static const policy_row policies[] = {
    { "fp32", MXP_F32 },
    { "bf16", MXP_BF16 },
    { "fp16", MXP_F16 },
};
enum { POLICY_COUNT = sizeof policies / sizeof policies[0] };

static const char *const op_names[MXP_AUTOCAST_OP_COUNT] = {
    [MXP_AUTOCAST_MATMUL] = "matmul",
    [MXP_AUTOCAST_ELEMENTWISE] = "elementwise",
    [MXP_AUTOCAST_REDUCTION] = "reduction",
    [MXP_AUTOCAST_SOFTMAX] = "softmax",
    [MXP_AUTOCAST_LOSS] = "loss",
    [MXP_AUTOCAST_NORMALIZATION] = "normalization",
};

/* The dtype an op computes in under a policy whose low dtype is `low`. */
static mxp_dtype policy_dtype(mxp_dtype low, mxp_autocast_op op)
{
    return op == MXP_AUTOCAST_MATMUL || op == MXP_AUTOCAST_ELEMENTWISE ? low : MXP_F32;
}

static int find_policy(const char *name)
{
    for (int i = 0; i < POLICY_COUNT; i++) {
        const char *a = policies[i].name, *b = name;
        while (*a && tolower((unsigned char)*b) == *a)
            a++, b++;
        if (!*a && !*b)
            return i;
    }
    const mxp_dtype dt = mxp_dtype_from_name(name);
    for (int i = 0; i < POLICY_COUNT; i++) {
        if (dt == policies[i].low)
            return i;
    }
    return -1;
}

mxp_status mxp_autocast_create(mxp_autocast **out, const char *policy)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_autocast_create: out is NULL");
    *out = NULL;
    const int p = find_policy(policy ? policy : "fp32");
    if (p < 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_autocast_create: unknown policy '%s' (fp32, bf16 or fp16)",
                         policy);
    mxp_autocast *ac = mxp_malloc(sizeof *ac);
    if (!ac)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_autocast_create: out of memory");
    ac->policy = p;
    for (int op = 0; op < MXP_AUTOCAST_OP_COUNT; op++)
        ac->dtype[op] = policy_dtype(policies[p].low, (mxp_autocast_op)op);
    *out = ac;
    return MXP_OK;
}

void mxp_autocast_free(mxp_autocast *ac)
{
    mxp_free(ac);
}

static bool valid_op(mxp_autocast_op op)
{
    return (unsigned)op < MXP_AUTOCAST_OP_COUNT;
}

mxp_dtype mxp_autocast_dtype(const mxp_autocast *ac, mxp_autocast_op op)
{
    return ac && valid_op(op) ? ac->dtype[op] : MXP_DTYPE_INVALID;
}

mxp_status mxp_autocast_set(mxp_autocast *ac, mxp_autocast_op op, mxp_dtype dtype)
{
    if (!ac)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_autocast_set: policy is NULL");
    if (!valid_op(op))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_autocast_set: %d is not an mxp_autocast_op", (int)op);
    if (!mxp_is_float_dtype(dtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "mxp_autocast_set: %s ops cannot compute in %s (a float dtype is "
                         "needed)", op_names[op], mxp_dtype_name(dtype));
    ac->dtype[op] = dtype;
    return MXP_OK;
}

const char *mxp_autocast_policy_name(const mxp_autocast *ac)
{
    if (!ac)
        return "invalid";
    for (int op = 0; op < MXP_AUTOCAST_OP_COUNT; op++) {
        if (ac->dtype[op] != policy_dtype(policies[ac->policy].low, (mxp_autocast_op)op))
            return "custom";
    }
    return policies[ac->policy].name;
}

mxp_status mxp_autocast_cast(mxp_array **out, const mxp_autocast *ac, mxp_autocast_op op, const mxp_array *x)
{
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_autocast_cast: out is NULL");
    *out = NULL;
    if (!ac || !x)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_autocast_cast: %s is NULL", ac ? "array" : "policy");
    if (!valid_op(op))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_autocast_cast: %d is not an mxp_autocast_op", (int)op);
    if (mxp_array_dtype(x) == ac->dtype[op])
        return mxp_array_slice(out, x, 0, NULL); /* a view: no copy */
    return mxp_array_astype(out, x, ac->dtype[op], NULL);
}

const char *mxp_autocast_op_name(mxp_autocast_op op)
{
    return valid_op(op) ? op_names[op] : "invalid";
}

mxp_autocast_op mxp_autocast_op_from_name(const char *name)
{
    for (int op = 0; name && op < MXP_AUTOCAST_OP_COUNT; op++) {
        if (!strcmp(op_names[op], name))
            return (mxp_autocast_op)op;
    }
    return MXP_AUTOCAST_OP_COUNT;
}
