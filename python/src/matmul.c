/* np.matmul (and so `a @ b`) for the mxp float dtypes: each matrix of the
 * stack is one mxp_gemm (float32 accumulation, the library's threads, one
 * rounding into the result's dtype).  Operands are read in place when a
 * matrix is row- or column-major with a usable leading dimension; other
 * layouts (negative, zero or odd strides) are copied first. */
#include <string.h>

#include "mxpy.h"

/* One matrix operand of the gufunc: rows x cols with byte strides. */
typedef struct operand {
    char *data;
    npy_intp rows, cols, rs, cs;
} operand;

typedef struct layout {
    mxp_trans trans;
    size_t ld;
} layout;

/* Whether x can be read in place, and how. */
static bool find_layout(operand x, size_t size, layout *l)
{
    npy_intp s = (npy_intp)size;
    if (x.rows == 0 || x.cols == 0) {
        *l = (layout){ MXP_NO_TRANS, x.cols > 0 ? (size_t)x.cols : 1 };
        return true;
    }
    if (x.cols == 1)
        x.cs = s;
    if (x.rows == 1)
        x.rs = x.cols * s;
    if (x.cs == s && x.rs > 0 && x.rs % s == 0 && x.rs / s >= x.cols) {
        *l = (layout){ MXP_NO_TRANS, (size_t)(x.rs / s) };
        return true;
    }
    if (x.rows == 1)
        x.rs = s;
    if (x.cols == 1)
        x.cs = x.rows * s;
    if (x.rs == s && x.cs > 0 && x.cs % s == 0 && x.cs / s >= x.rows) {
        *l = (layout){ MXP_TRANS, (size_t)(x.cs / s) };
        return true;
    }
    return false;
}

/* Copies x row by row into a C-ordered buffer (or back, to_buffer false). */
static void copy_matrix(char *buf, operand x, mxp_dtype dt, bool to_buffer)
{
    size_t size = mxp_dtype_itemsize(dt);
    for (npy_intp i = 0; i < x.rows; i++) {
        char *row = buf + (size_t)(i * x.cols) * size;
        if (to_buffer)
            mxp_convert_strided(row, dt, (ptrdiff_t)size, x.data + i * x.rs, dt, x.cs, (size_t)x.cols, NULL);
        else
            mxp_convert_strided(x.data + i * x.rs, dt, x.cs, row, dt, (ptrdiff_t)size, (size_t)x.cols, NULL);
    }
}

/* In place, or a C-ordered copy in *tmp (freed by the caller). */
static mxp_status prepare(operand *x, mxp_dtype dt, layout *l, char **tmp)
{
    size_t size = mxp_dtype_itemsize(dt);
    *tmp = NULL;
    if (find_layout(*x, size, l))
        return MXP_OK;
    *tmp = PyMem_RawMalloc((size_t)(x->rows * x->cols) * size + 1);
    if (!*tmp)
        return MXP_ERR_NO_MEMORY;
    copy_matrix(*tmp, *x, dt, true);
    *l = (layout){ MXP_NO_TRANS, (size_t)x->cols };
    x->data = *tmp;
    return MXP_OK;
}

static mxp_trans flip(mxp_trans t) { return t == MXP_TRANS ? MXP_NO_TRANS : MXP_TRANS; }

/* C = A B for one matrix of the stack. */
static mxp_status matmul_one(mxp_dtype dt, operand a, operand b, operand c)
{
    size_t size = mxp_dtype_itemsize(dt);
    layout la, lb, lc;
    char *ta = NULL, *tb = NULL, *tc = NULL;
    mxp_status st = prepare(&a, dt, &la, &ta);
    if (st == MXP_OK)
        st = prepare(&b, dt, &lb, &tb);
    bool copy_c = st == MXP_OK && !find_layout(c, size, &lc);
    if (copy_c) {
        tc = PyMem_RawMalloc((size_t)(c.rows * c.cols) * size + 1);
        st = tc ? MXP_OK : MXP_ERR_NO_MEMORY;
        lc = (layout){ MXP_NO_TRANS, (size_t)c.cols };
    }
    size_t m = (size_t)c.rows, n = (size_t)c.cols, k = (size_t)a.cols;
    char *cdata = copy_c ? tc : c.data;
    if (st == MXP_OK && lc.trans == MXP_NO_TRANS)
        st = mxp_gemm(la.trans, lb.trans, m, n, k, 1.0, a.data, dt, la.ld, b.data, dt, lb.ld, 0.0, cdata, dt, lc.ld,
                      NULL);
    else if (st == MXP_OK) /* a column-major C: C^T = B^T A^T, row-major */
        st = mxp_gemm(flip(lb.trans), flip(la.trans), n, m, k, 1.0, b.data, dt, lb.ld, a.data, dt, la.ld, 0.0,
                      cdata, dt, lc.ld, NULL);
    if (st == MXP_OK && copy_c)
        copy_matrix(tc, c, dt, false);
    PyMem_RawFree(ta);
    PyMem_RawFree(tb);
    PyMem_RawFree(tc);
    return st;
}

/* The gufunc loop, signature (m,n),(n,p)->(m,p): dims = {N, m, n, p},
 * steps = {3 outer strides, then a_m, a_n, b_n, b_p, c_m, c_p}. */
static void matmul_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data)
{
    const mxpy_float *t = data;
    npy_intp m = dims[1], n = dims[2], p = dims[3];
    for (npy_intp i = 0; i < dims[0]; i++) {
        operand a = { args[0] + i * steps[0], m, n, steps[3], steps[4] };
        operand b = { args[1] + i * steps[1], n, p, steps[5], steps[6] };
        operand c = { args[2] + i * steps[2], m, p, steps[7], steps[8] };
        if (m == 0 || p == 0)
            return;
        mxp_status st = matmul_one(t->dt, a, b, c);
        if (st != MXP_OK) {
            NPY_ALLOW_C_API_DEF
            NPY_ALLOW_C_API
            mxpy_raise(st);
            NPY_DISABLE_C_API
            return;
        }
    }
}

int mxpy_init_matmul(PyObject *numpy)
{
    PyObject *ufunc = PyObject_GetAttrString(numpy, "matmul");
    if (!ufunc)
        return -1;
    int rc = 0;
    for (int i = 0; i < MXPY_NFLOATS && rc == 0; i++) {
        int types[3] = { mxpy_floats[i].typenum, mxpy_floats[i].typenum, mxpy_floats[i].typenum };
        rc = PyUFunc_RegisterLoopForType((PyUFuncObject *)ufunc, mxpy_floats[i].typenum, matmul_loop, types,
                                         &mxpy_floats[i]);
    }
    Py_DECREF(ufunc);
    return rc;
}
