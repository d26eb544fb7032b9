/* Custom elementwise operators registered by name. */
#include <pthread.h>
#include <string.h>

#include "array/array-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "ops/ops-internal.h"

enum { MAX_OPS = 256, MAX_NAME = 64 };

typedef struct entry {
    char name[MAX_NAME];
    mxp_dtype dtype;
    mxp_unary_kernel_fn fn;
    void *ctx;
} entry;

static entry table[MAX_OPS];
static int used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* a leaf: nothing else is locked or called under it */

/* fork: taken before, released after in parent and child (see
 * src/core/alloc.c), so that a child's lookup never waits for a thread
 * that does not exist there. */
static void lock_before_fork(void) { pthread_mutex_lock(&lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&lock); }

__attribute__((constructor)) static void register_atfork(void)
{
    pthread_atfork(lock_before_fork, unlock_after_fork, unlock_after_fork);
}

static mxp_status check_name(const char *name)
{
    if (!name || !*name)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator name is NULL or empty");
    if (strlen(name) >= MAX_NAME)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator name '%.20s...' is longer than %d bytes", name,
                         MAX_NAME - 1);
    return MXP_OK;
}

mxp_status mxp_register_unary_op(const char *name, mxp_dtype dtype, mxp_unary_kernel_fn fn, void *ctx)
{
    mxp_status st = check_name(name);
    if (st != MXP_OK)
        return st;
    if (!mxp_dtype_is_valid(dtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "dtype %d is not a valid mxp_dtype", (int)dtype);
    if (!fn)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator '%s': kernel is NULL", name);
    pthread_mutex_lock(&lock);
    int at = -1;
    for (int i = 0; i < used; i++)
        if (table[i].dtype == dtype && !strcmp(table[i].name, name))
            at = i;
    if (at < 0 && used == MAX_OPS) {
        pthread_mutex_unlock(&lock);
        return mxp_error(MXP_ERR_NO_MEMORY, "the operator table is full (%d registrations)", MAX_OPS);
    }
    if (at < 0)
        at = used++;
    strcpy(table[at].name, name);
    table[at].dtype = dtype;
    table[at].fn = fn;
    table[at].ctx = ctx;
    pthread_mutex_unlock(&lock);
    return MXP_OK;
}

mxp_status mxp_unregister_op(const char *name)
{
    mxp_status st = check_name(name);
    if (st != MXP_OK)
        return st;
    pthread_mutex_lock(&lock);
    int kept = 0, removed = 0;
    for (int i = 0; i < used; i++) {
        if (strcmp(table[i].name, name))
            table[kept++] = table[i];
        else
            removed++;
    }
    used = kept;
    pthread_mutex_unlock(&lock);
    return removed ? MXP_OK : mxp_error(MXP_ERR_INVALID_ARGUMENT, "no operator named '%s' is registered", name);
}

/* The registration for dtype, else a float32/float64 one that wraps it. */
static bool lookup(const char *name, mxp_dtype dtype, entry *out)
{
    bool found = false;
    pthread_mutex_lock(&lock);
    for (int pass = 0; pass < 3 && !found; pass++) {
        mxp_dtype want = pass == 0 ? dtype : pass == 1 ? MXP_F32 : MXP_F64;
        for (int i = 0; i < used && !found; i++) {
            if (table[i].dtype == want && !strcmp(table[i].name, name)) {
                *out = table[i];
                found = true;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return found;
}

mxp_status mxp_call_unary_op(mxp_array **out, const char *name, const mxp_array *a, const mxp_ops_opts *opts)
{
    MXP_ABI_IN_OUT(opts, ops_opts, "mxp_call_unary_op", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_call_unary_op: out is NULL");
    *out = NULL;
    mxp_status st = check_name(name);
    if (st == MXP_OK)
        st = mxp_require_array(a, "mxp_call_unary_op: array");
    if (st != MXP_OK)
        return st;
    entry e;
    if (!lookup(name, a->dtype, &e))
        return mxp_error(MXP_ERR_UNSUPPORTED, "no operator '%s' for %s (nor a float32/float64 one)", name,
                         mxp_dtype_name(a->dtype));
    mxp_dtype rt = opts && opts->out_dtype ? opts->out_dtype
                   : mxp_dtype_get_traits(a->dtype)->kind == MXP_KIND_FLOAT ? a->dtype
                   : e.dtype == a->dtype ? a->dtype : MXP_F64;
    return mxp_ops_run_custom(out, a, e.dtype, rt, e.fn, e.ctx, opts);
}
