/* The module's constants, made at import from the C library's name tables
 * and enum values, so that the Python files copy none of them:
 *
 *   ROUNDINGS, OVERFLOWS, ACTIVATIONS, STRATEGIES, AUTOCAST_OPS,
 *   TENSOR_ROLES, QTYPES,
 *   ADVISOR_CANDIDATES     tuples of names, in the C library's order
 *   QTYPE_CODES            {qtype name: the dtype of its codes}
 *   QTYPE_RANGES           {integer qtype name: (qmin, qmax)}
 *   CALIB_*, OPTIM_*, REQUIRE_*, MXFP8_*, MXFP4_E2M1, MXINT8, MXFP6_*, NVFP4
 *                          enum values */
#include <string.h>

#include "mxpy.h"

/* The names name(0), name(1), ... up to count or the first "invalid". */
static PyObject *names(const char *(*name)(int), int count)
{
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < count; i++) {
        const char *s = name(i);
        if (!strcmp(s, "invalid"))
            break;
        PyObject *v = PyUnicode_FromString(s);
        if (!v || PyList_Append(list, v) < 0)
            Py_CLEAR(list);
        Py_XDECREF(v);
    }
    PyObject *t = list ? PyList_AsTuple(list) : NULL;
    Py_XDECREF(list);
    return t;
}

static const char *rounding(int i) { return mxp_rounding_name((mxp_rounding)i); }
static const char *overflow(int i) { return mxp_overflow_name((mxp_overflow)i); }
static const char *activation(int i) { return mxp_activation_name((mxp_activation)i); }
static const char *strategy(int i) { return mxp_overflow_strategy_name((mxp_overflow_strategy)i); }
static const char *autocast_op(int i) { return mxp_autocast_op_name((mxp_autocast_op)i); }
static const char *role(int i) { return mxp_tensor_role_name((mxp_tensor_role)i); }
static const char *qtype(int i) { return mxp_qtype_at(i) ? mxp_qtype_name(mxp_qtype_at(i)) : "invalid"; }

static const char *candidate(int i)
{
    return i < MXP_ADVISOR_CANDIDATES ? mxp_dtype_name(mxp_advisor_candidates()[i]) : "invalid";
}

/* {qtype name: the dtype of its codes}, or (ranges) {name: (qmin, qmax)}
 * of the integer types. */
static PyObject *qtype_dict(bool ranges)
{
    PyObject *d = PyDict_New();
    for (int i = 0; d && mxp_qtype_at(i); i++) {
        const mxp_dtype q = mxp_qtype_at(i);
        int32_t lo = 0, hi = 0;
        mxp_qtype_limits(q, &lo, &hi);
        if (ranges && lo == hi)
            continue; /* float8: no integer grid */
        PyObject *v = ranges ? Py_BuildValue("(ii)", (int)lo, (int)hi)
                             : (PyObject *)PyArray_DescrFromType(mxpy_typenum_from_dtype(mxp_qtype_code_dtype(q)));
        if (!v || PyDict_SetItemString(d, mxp_qtype_name(q), v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static PyObject *module; /* borrowed: the module lives as long as the process */

int mxpy_not_one_of(const char *what, const char *value, const char *tuple)
{
    PyObject *t = module ? PyObject_GetAttrString(module, tuple) : NULL;
    PyObject *sep = t ? PyUnicode_FromString(", ") : NULL;
    PyObject *list = sep ? PyUnicode_Join(sep, t) : NULL;
    if (list)
        PyErr_Format(PyExc_ValueError, "%s '%s' is not one of %U", what, value, list);
    Py_XDECREF(t);
    Py_XDECREF(sep);
    Py_XDECREF(list);
    return -1;
}

int mxpy_init_constants(PyObject *m)
{
    module = m;
    static const struct {
        const char *name;
        int value;
    } values[] = {
#define V(x) { #x, MXP_##x }
        V(CALIB_MINMAX), V(CALIB_MOVING_AVERAGE), V(CALIB_PERCENTILE), V(CALIB_MSE), V(CALIB_KL),
        V(OPTIM_SGD), V(OPTIM_ADAM), V(OPTIM_ADAMW),
        V(REQUIRE_MAX_REL_ERROR), V(REQUIRE_MIN_PSNR), V(REQUIRE_NO_OVERFLOW),
        V(MXFP8_E4M3), V(MXFP8_E5M2), V(MXFP4_E2M1), V(MXINT8), V(MXFP6_E2M3), V(MXFP6_E3M2), V(NVFP4),
#undef V
    };
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        if (PyModule_AddIntConstant(m, values[i].name, values[i].value) < 0)
            return -1;
    const struct {
        const char *name;
        PyObject *value;
    } objects[] = {
        { "ROUNDINGS", names(rounding, MXP_ROUNDING_COUNT) },
        { "OVERFLOWS", names(overflow, MXP_OVERFLOW_COUNT) },
        { "ACTIVATIONS", names(activation, 64) },
        { "STRATEGIES", names(strategy, 64) },
        { "AUTOCAST_OPS", names(autocast_op, MXP_AUTOCAST_OP_COUNT) },
        { "TENSOR_ROLES", names(role, MXP_ROLE_COUNT) },
        { "QTYPES", names(qtype, 64) },
        { "QTYPE_CODES", qtype_dict(false) },
        { "QTYPE_RANGES", qtype_dict(true) },
        { "ADVISOR_CANDIDATES", names(candidate, MXP_ADVISOR_CANDIDATES) },
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof objects / sizeof objects[0]; i++) {
        /* PyModule_AddObjectRef: 3.10+; PyModule_AddObject steals only on success */
        if (rc == 0 && (!objects[i].value || PyModule_AddObject(m, objects[i].name, objects[i].value) < 0))
            rc = -1;
        else if (rc == 0)
            continue;
        Py_XDECREF(objects[i].value);
    }
    return rc;
}
