/* NumPy ufunc loops for the mxp float dtypes.  Every loop is one call of
 * the library's 1-d strided entry points (mxp_binary_strided,
 * mxp_unary_strided): inputs widened exactly in blocks, the operation in
 * float32 or float64, one rounding into the output, SIMD conversions.
 *
 * Operations are found by name (the library names its ops as NumPy's
 * ufuncs), so this file holds only the table of which ufunc has which
 * shape of loop.  add.reduce and multiply.reduce -- NumPy calls the loop
 * with the output aliasing the first input at stride 0 -- accumulate the
 * whole run in float64 and round once (np.sum, np.mean, np.prod). */
#include <string.h>

#include "mxpy.h"

typedef enum loop_kind {
    BINARY,    /* (T, T) -> T */
    PREDICATE2, /* (T, T) -> bool: comparisons, logical_and/or/xor */
    UNARY,     /* T -> T */
    PREDICATE, /* T -> bool */
    FREXP,     /* T -> (T, int32) */
    LDEXP,     /* (T, int) -> T */
    DIVMOD,    /* (T, T) -> (T, T): floor_divide and remainder */
} loop_kind;

typedef struct ufunc_entry {
    const char *numpy_name;
    const char *mxp_name; /* NULL: the same */
    loop_kind kind;
} ufunc_entry;

static const ufunc_entry table[] = {
    { "add", NULL, BINARY }, { "subtract", NULL, BINARY }, { "multiply", NULL, BINARY },
    { "true_divide", "divide", BINARY }, { "floor_divide", NULL, BINARY }, { "remainder", NULL, BINARY },
    { "fmod", NULL, BINARY }, { "power", NULL, BINARY }, { "maximum", NULL, BINARY }, { "minimum", NULL, BINARY },
    { "fmax", NULL, BINARY }, { "fmin", NULL, BINARY }, { "arctan2", NULL, BINARY }, { "hypot", NULL, BINARY },
    { "copysign", NULL, BINARY }, { "nextafter", NULL, BINARY }, { "logaddexp", NULL, BINARY },
    { "logaddexp2", NULL, BINARY },
    { "equal", NULL, PREDICATE2 }, { "not_equal", NULL, PREDICATE2 }, { "less", NULL, PREDICATE2 },
    { "less_equal", NULL, PREDICATE2 }, { "greater", NULL, PREDICATE2 }, { "greater_equal", NULL, PREDICATE2 },
    { "logical_and", NULL, PREDICATE2 }, { "logical_or", NULL, PREDICATE2 }, { "logical_xor", NULL, PREDICATE2 },
    { "negative", NULL, UNARY }, { "positive", NULL, UNARY }, { "absolute", "abs", UNARY }, { "fabs", "abs", UNARY },
    { "sign", NULL, UNARY }, { "reciprocal", NULL, UNARY }, { "square", NULL, UNARY }, { "sqrt", NULL, UNARY },
    { "cbrt", NULL, UNARY }, { "exp", NULL, UNARY }, { "exp2", NULL, UNARY }, { "expm1", NULL, UNARY },
    { "log", NULL, UNARY }, { "log2", NULL, UNARY }, { "log10", NULL, UNARY }, { "log1p", NULL, UNARY },
    { "sin", NULL, UNARY }, { "cos", NULL, UNARY }, { "tan", NULL, UNARY }, { "arcsin", NULL, UNARY },
    { "arccos", NULL, UNARY }, { "arctan", NULL, UNARY }, { "sinh", NULL, UNARY }, { "cosh", NULL, UNARY },
    { "tanh", NULL, UNARY }, { "arcsinh", NULL, UNARY }, { "arccosh", NULL, UNARY }, { "arctanh", NULL, UNARY },
    { "floor", NULL, UNARY }, { "ceil", NULL, UNARY }, { "rint", NULL, UNARY }, { "trunc", NULL, UNARY },
    { "spacing", NULL, UNARY }, { "deg2rad", NULL, UNARY }, { "rad2deg", NULL, UNARY },
    { "radians", "deg2rad", UNARY }, { "degrees", "rad2deg", UNARY },
    { "isnan", NULL, PREDICATE }, { "isinf", NULL, PREDICATE }, { "isfinite", NULL, PREDICATE },
    { "signbit", NULL, PREDICATE }, { "logical_not", NULL, PREDICATE },
    { "frexp", NULL, FREXP }, { "ldexp", NULL, LDEXP }, { "divmod", NULL, DIVMOD },
};
enum { NUFUNCS = sizeof table / sizeof table[0] };

/* What a registered loop needs: its dtype and the library's op(s). */
typedef struct loop_data {
    const mxpy_float *t;
    mxp_dtype out; /* the result: t's own, or for the integer rows the library's (int4 / int4 -> float64) */
    int op, op2; /* op2: frexp's exponent */
    bool is_add, is_multiply;
    bool associative; /* maximum, minimum, fmax, fmin: reduced as a tree */
} loop_data;

static loop_data loops[MXPY_NFLOATS][NUFUNCS];

static int find_binary(const char *name)
{
    for (int op = 0; op < MXP_BINARY_OP_COUNT; op++)
        if (!strcmp(mxp_binary_op_name((mxp_binary_op)op), name))
            return op;
    return -1;
}

static int find_unary(const char *name)
{
    for (int op = 0; op < MXP_UNARY_OP_COUNT; op++)
        if (!strcmp(mxp_unary_op_name((mxp_unary_op)op), name))
            return op;
    return -1;
}

static void raise_in_loop(mxp_status st)
{
    NPY_ALLOW_C_API_DEF
    NPY_ALLOW_C_API
    mxpy_raise(st);
    NPY_DISABLE_C_API
}

/* add.reduce / multiply.reduce: out = out op (the whole run), one rounding.
 *
 * NumPy before 2.3 (and any NumPy where it buffers a cast) feeds a long
 * reduction in chunks of its buffer size (8192), and the running value
 * passes through `out` -- in the low-precision type -- between chunks.  So
 * that it is rounded once, not once per chunk, each thread remembers where
 * its last chunk stopped: when the next chunk continues it (same output,
 * the input right after the last chunk, the output still holding the bits
 * written), the float64 running value is picked up instead of the rounded
 * one.  A new reduction never resumes: NumPy starts every one by copying
 * the initial value (the identity, `initial=` or the first element) into
 * the output through the dtype's copyswap or setitem, and both end the run
 * (mxpy_reduction_restart) -- a separate call on the next input into the
 * same output with `initial=` the bits last written starts afresh. */
typedef struct carry {
    char *out;
    const char *next_in;
    npy_intp stride;
    uint16_t bits;
    bool is_add;
    double acc;
} carry;

static _Thread_local carry last;

void mxpy_reduction_restart(void) { last.out = NULL; }

static mxp_status reduce_run(const loop_data *d, char *out, const char *in, npy_intp stride, npy_intp n)
{
    size_t size = mxp_dtype_itemsize(d->t->dt);
    uint16_t now = 0;
    memcpy(&now, out, size);
    double acc = 0, run = 0;
    bool resume = last.out == out && last.next_in == in && last.stride == stride && last.bits == now &&
                  last.is_add == d->is_add;
    if (resume)
        acc = last.acc;
    else
        mxp_convert(&acc, MXP_F64, out, d->t->dt, 1, NULL);
    mxp_status st = d->is_add ? mxp_sum_strided(&run, in, d->t->dt, stride, (size_t)n, MXP_F64)
                              : mxp_prod_strided(&run, in, d->t->dt, stride, (size_t)n, MXP_F64);
    if (st != MXP_OK)
        return st;
    acc = d->is_add ? acc + run : acc * run;
    st = mxp_convert(out, d->t->dt, &acc, MXP_F64, 1, NULL);
    memcpy(&now, out, size);
    last = (carry){ out, in + n * stride, stride, now, d->is_add, acc };
    return st;
}

/* maximum.reduce and friends: order does not change the result, so each
 * block is halved in place until one value is left -- log2(block) calls
 * of the vector loop instead of one call per element. */
static mxp_status reduce_tree(const loop_data *d, char *out, const char *in, npy_intp stride, npy_intp n)
{
    enum { BLOCK = 4096 };
    mxp_dtype dt = d->t->dt;
    const ptrdiff_t size = (ptrdiff_t)mxp_dtype_itemsize(dt);
    _Alignas(64) uint16_t buf[BLOCK]; /* elements of at most 2 bytes */
    mxp_binary_op op = (mxp_binary_op)d->op;
    mxp_status st = MXP_OK;
    for (npy_intp i = 0; i < n && st == MXP_OK; i += BLOCK) {
        size_t m = (size_t)(n - i < BLOCK ? n - i : BLOCK);
        st = mxp_convert_strided(buf, dt, size, in + i * stride, dt, stride, m, NULL);
        while (st == MXP_OK && m > 1) {
            size_t h = m / 2; /* buf[0, h) = op(buf[0, h), buf[m - h, m)): disjoint halves */
            st = mxp_binary_strided(op, h, buf, dt, size, buf, dt, size, (char *)buf + (m - h) * (size_t)size, dt,
                                    size, NULL);
            m -= h;
        }
        if (st == MXP_OK)
            st = mxp_binary_strided(op, 1, out, dt, size, out, dt, size, buf, dt, size, NULL);
    }
    return st;
}

/* op.accumulate (np.cumsum, np.cumprod ...): NumPy calls the loop with
 * the first input one output element behind the output, out[i] =
 * out[i-1] op in[i].  add, multiply and the extremes keep a float64
 * running value (mxp_accumulate_strided); the other operations go element
 * by element, each step rounded as NumPy's own loops do. */
static bool is_accumulate(char **args, npy_intp const *steps)
{
    return steps[0] == steps[2] && steps[2] != 0 && args[2] == args[0] + steps[0];
}

static mxp_status accumulate(const loop_data *d, char **args, npy_intp const *dims, npy_intp const *steps)
{
    mxp_dtype dt = d->t->dt;
    mxp_binary_op op = (mxp_binary_op)d->op;
    if (d->is_add || d->is_multiply || d->associative)
        return mxp_accumulate_strided(op, (size_t)dims[0], args[2], dt, steps[2], args[1], dt, steps[1], args[0]);
    mxp_status st = MXP_OK;
    for (npy_intp i = 0; i < dims[0] && st == MXP_OK; i++)
        st = mxp_binary_strided(op, 1, args[2] + i * steps[2], dt, 0, args[0] + i * steps[0], dt, 0,
                                args[1] + i * steps[1], dt, 0, NULL);
    return st;
}

static void binary_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data)
{
    const loop_data *d = data;
    mxp_dtype dt = d->t->dt;
    mxp_status st = MXP_OK;
    bool reduce = args[0] == args[2] && steps[0] == 0 && steps[2] == 0;
    if (!reduce && dims[0] > 0 && is_accumulate(args, steps)) {
        st = accumulate(d, args, dims, steps);
    } else if (reduce && (d->is_add || d->is_multiply)) {
        st = reduce_run(d, args[2], args[1], steps[1], dims[0]);
    } else if (reduce && d->associative) {
        st = reduce_tree(d, args[2], args[1], steps[1], dims[0]);
    } else if (reduce) { /* sequential semantics: one element at a time */
        for (npy_intp i = 0; i < dims[0] && st == MXP_OK; i++)
            st = mxp_binary_strided((mxp_binary_op)d->op, 1, args[2], dt, 0, args[0], dt, 0, args[1] + i * steps[1],
                                    dt, 0, NULL);
    } else {
        st = mxp_binary_strided((mxp_binary_op)d->op, (size_t)dims[0], args[2], d->out, steps[2], args[0], dt,
                                steps[0], args[1], dt, steps[1], NULL);
    }
    if (st != MXP_OK)
        raise_in_loop(st);
}

static void predicate2_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data)
{
    const loop_data *d = data;
    mxp_status st = mxp_binary_strided((mxp_binary_op)d->op, (size_t)dims[0], args[2], MXP_BOOL, steps[2], args[0],
                                       d->t->dt, steps[0], args[1], d->t->dt, steps[1], NULL);
    if (st != MXP_OK)
        raise_in_loop(st);
}

static void unary_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data)
{
    const loop_data *d = data;
    mxp_status st = mxp_unary_strided((mxp_unary_op)d->op, (size_t)dims[0], args[1], d->out, steps[1], args[0],
                                      d->t->dt, steps[0], NULL);
    if (st != MXP_OK)
        raise_in_loop(st);
}

static void predicate_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data)
{
    const loop_data *d = data;
    mxp_status st = mxp_unary_strided((mxp_unary_op)d->op, (size_t)dims[0], args[1], MXP_BOOL, steps[1], args[0],
                                      d->t->dt, steps[0], NULL);
    if (st != MXP_OK)
        raise_in_loop(st);
}

static void frexp_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data)
{
    const loop_data *d = data;
    mxp_status st = mxp_unary_strided((mxp_unary_op)d->op, (size_t)dims[0], args[1], d->t->dt, steps[1], args[0],
                                      d->t->dt, steps[0], NULL);
    if (st == MXP_OK)
        st = mxp_unary_strided((mxp_unary_op)d->op2, (size_t)dims[0], args[2], MXP_S32, steps[2], args[0], d->t->dt,
                               steps[0], NULL);
    if (st != MXP_OK)
        raise_in_loop(st);
}

/* divmod: the two results, each the float64 one rounded once (floor_divide
 * and remainder as their own ufuncs give them). */
static void divmod_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data)
{
    const loop_data *d = data;
    mxp_dtype dt = d->t->dt;
    mxp_status st = mxp_binary_strided((mxp_binary_op)d->op, (size_t)dims[0], args[2], d->out, steps[2], args[0], dt,
                                       steps[0], args[1], dt, steps[1], NULL);
    if (st == MXP_OK)
        st = mxp_binary_strided((mxp_binary_op)d->op2, (size_t)dims[0], args[3], d->out, steps[3], args[0], dt,
                                steps[0], args[1], dt, steps[1], NULL);
    if (st != MXP_OK)
        raise_in_loop(st);
}

/* ldexp's exponent is int32 or int64 (NumPy's 'fi->f' and 'fl->f'). */
static void ldexp_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data, mxp_dtype exp_type)
{
    const loop_data *d = data;
    mxp_status st = mxp_binary_strided((mxp_binary_op)d->op, (size_t)dims[0], args[2], d->t->dt, steps[2], args[0],
                                       d->t->dt, steps[0], args[1], exp_type, steps[1], NULL);
    if (st != MXP_OK)
        raise_in_loop(st);
}

static void ldexp_int_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data)
{
    ldexp_loop(args, dims, steps, data, mxpy_dtype_from_typenum(NPY_INT));
}

static void ldexp_long_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data)
{
    ldexp_loop(args, dims, steps, data, mxpy_dtype_from_typenum(NPY_LONG));
}

static int add_loop(PyObject *ufunc, const mxpy_float *t, PyUFuncGenericFunction fn, const int *types, void *data)
{
    return PyUFunc_RegisterLoopForType((PyUFuncObject *)ufunc, t->typenum, fn, (int *)types, data);
}

static int register_entry(PyObject *ufunc, const ufunc_entry *e, const mxpy_float *t, loop_data *d)
{
    const char *name = e->mxp_name ? e->mxp_name : e->numpy_name;
    int T = t->typenum;
    d->t = t;
    d->is_add = !strcmp(name, "add");
    d->is_multiply = !strcmp(name, "multiply");
    d->associative = !strcmp(name, "maximum") || !strcmp(name, "minimum") || !strcmp(name, "fmax") ||
                     !strcmp(name, "fmin");
    bool binary = e->kind == BINARY || e->kind == PREDICATE2 || e->kind == LDEXP;
    d->op = binary              ? find_binary(name)
            : e->kind == FREXP  ? find_unary("frexp_mantissa")
            : e->kind == DIVMOD ? find_binary("floor_divide")
                                : find_unary(name);
    d->op2 = e->kind == FREXP ? find_unary("frexp_exponent") : e->kind == DIVMOD ? find_binary("remainder") : 0;
    if (d->op < 0 || d->op2 < 0) {
        PyErr_Format(PyExc_RuntimeError, "libmxp has no operation for numpy.%s", e->numpy_name);
        return -1;
    }
    d->out = t->dt;
    if (mxp_dtype_get_traits(t->dt)->kind != MXP_KIND_FLOAT) {
        /* the integer rows: the library's result type, as NumPy's integer
         * loops (int4 / int4 -> float64, sqrt(int4) -> float16); none for
         * frexp and ldexp, which NumPy defines for floats only */
        if (e->kind == FREXP || e->kind == LDEXP)
            return 0;
        d->out = e->kind == BINARY || e->kind == DIVMOD ? mxp_binary_result_type((mxp_binary_op)d->op, t->dt, t->dt)
                 : e->kind == UNARY                     ? mxp_unary_result_type((mxp_unary_op)d->op, t->dt)
                                                        : t->dt;
        if (d->out == MXP_DTYPE_INVALID)
            return 0; /* an operation the library does not define for integers */
    }
    const int O = mxpy_typenum_from_dtype(d->out);
    switch (e->kind) {
    case BINARY: return add_loop(ufunc, t, binary_loop, (int[]){ T, T, O }, d);
    case PREDICATE2: return add_loop(ufunc, t, predicate2_loop, (int[]){ T, T, NPY_BOOL }, d);
    case UNARY: return add_loop(ufunc, t, unary_loop, (int[]){ T, O }, d);
    case PREDICATE: return add_loop(ufunc, t, predicate_loop, (int[]){ T, NPY_BOOL }, d);
    case FREXP: return add_loop(ufunc, t, frexp_loop, (int[]){ T, T, NPY_INT }, d);
    case DIVMOD: return add_loop(ufunc, t, divmod_loop, (int[]){ T, T, O, O }, d);
    default:
        if (add_loop(ufunc, t, ldexp_int_loop, (int[]){ T, NPY_INT, T }, d) < 0)
            return -1;
        return add_loop(ufunc, t, ldexp_long_loop, (int[]){ T, NPY_LONG, T }, d);
    }
}

const char *mxpy_binary_ufunc(int i, bool *predicate)
{
    for (int k = 0; k < NUFUNCS; k++) {
        if (table[k].kind != BINARY && table[k].kind != PREDICATE2)
            continue;
        if (i-- == 0) {
            *predicate = table[k].kind == PREDICATE2;
            return table[k].numpy_name;
        }
    }
    return NULL;
}

int mxpy_init_ufuncs(PyObject *numpy)
{
    for (int k = 0; k < NUFUNCS; k++) {
        PyObject *ufunc = PyObject_GetAttrString(numpy, table[k].numpy_name);
        if (!ufunc)
            return -1;
        int rc = 0;
        for (int i = 0; i < MXPY_NFLOATS && rc == 0; i++)
            rc = register_entry(ufunc, &table[k], &mxpy_floats[i], &loops[i][k]);
        Py_DECREF(ufunc);
        if (rc < 0)
            return -1;
    }
    return 0;
}
