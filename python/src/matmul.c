/* np.matmul (and so `a @ b`) for the mxp float dtypes: each matrix of the
 * stack is one mxp_matmul_strided (one mxp_gemm: float32 accumulation, the
 * library's threads, one rounding into the result's dtype; the library
 * decides which layouts it reads in place and which it copies). */
#include "mxpy.h"

/* The gufunc loop, signature (m,n),(n,p)->(m,p): dims = {N, m, n, p},
 * steps = {3 outer strides, then a_m, a_n, b_n, b_p, c_m, c_p}. */
static void matmul_loop(char **args, npy_intp const *dims, npy_intp const *steps, void *data)
{
    const mxpy_float *t = data;
    const size_t m = (size_t)dims[1], n = (size_t)dims[2], p = (size_t)dims[3];
    for (npy_intp i = 0; i < dims[0]; i++) {
        mxp_status st = mxp_matmul_strided(m, p, n, args[0] + i * steps[0], t->dt, steps[3], steps[4],
                                           args[1] + i * steps[1], t->dt, steps[5], steps[6], args[2] + i * steps[2],
                                           t->dt, steps[7], steps[8], NULL);
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
