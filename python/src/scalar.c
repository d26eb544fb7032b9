/* The scalar types (mxp.bfloat16(1.5), ...): subclasses of numpy.generic
 * holding one element's bits.  Arithmetic with Python numbers or a scalar
 * of the same type is the library's float64 arithmetic (mxp_binary_f64)
 * rounded once (float64's 53 bits are >= 2p + 2, so + - * / are correctly
 * rounded); anything else goes through NumPy's array machinery and so
 * through the ufunc loops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mxpy.h"

double mxpy_to_double(const mxpy_float *t, uint16_t bits)
{
    double v = 0;
    mxp_convert(&v, MXP_F64, &bits, t->dt, 1, NULL);
    return v;
}

static bool is_int_row(const mxpy_float *t)
{
    return mxp_dtype_get_traits(t->dt)->kind != MXP_KIND_FLOAT;
}

/* Into the integer rows (int4 ...) truncated, as NumPy's int8(2.7) is 2;
 * into the float rows to nearest even. */
static const mxp_convert_opts *opts_into(const mxpy_float *t)
{
    static const mxp_convert_opts truncate = { .rounding = MXP_ROUND_TOWARD_ZERO };
    return is_int_row(t) ? &truncate : NULL;
}

uint16_t mxpy_from_double(const mxpy_float *t, double v)
{
    uint16_t bits = 0;
    mxp_convert(&bits, t->dt, &v, MXP_F64, 1, opts_into(t));
    return bits;
}

PyObject *mxpy_scalar_new(const mxpy_float *t, uint16_t bits)
{
    mxpy_scalar *s = (mxpy_scalar *)t->scalar_type->tp_alloc(t->scalar_type, 0);
    if (s)
        s->bits = bits;
    return (PyObject *)s;
}

static mxpy_float *scalar_float(PyObject *obj)
{
    return mxpy_float_by_scalar_type(Py_TYPE(obj));
}

/* A NumPy scalar of a type mxp knows: converted from its own type, one
 * rounding.  1: done, 0: not such a scalar. */
static int bits_from_numpy_scalar(const mxpy_float *t, PyObject *obj, uint16_t *bits)
{
    if (!PyArray_IsScalar(obj, Generic))
        return 0;
    PyArray_Descr *d = PyArray_DescrFromScalar(obj);
    if (!d)
        return -1;
    mxp_dtype from = mxpy_dtype_from_typenum(d->type_num);
    if (from != MXP_DTYPE_INVALID) {
        _Alignas(16) unsigned char buf[16];
        PyArray_ScalarAsCtype(obj, buf);
        *bits = 0;
        mxp_convert(bits, t->dt, buf, from, 1, opts_into(t));
    }
    Py_DECREF(d);
    return from != MXP_DTYPE_INVALID;
}

int mxpy_bits_from_object(const mxpy_float *t, PyObject *obj, uint16_t *bits)
{
    mxpy_float *src = scalar_float(obj);
    if (src) {
        *bits = 0;
        mxp_convert(bits, t->dt, &((mxpy_scalar *)obj)->bits, src->dt, 1, opts_into(t));
        return 0;
    }
    if (PyLong_Check(obj)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (!overflow) {
            int64_t i = v;
            *bits = 0;
            mxp_convert(bits, t->dt, &i, MXP_S64, 1, NULL);
            return 0;
        }
    }
    int r = bits_from_numpy_scalar(t, obj, bits);
    if (r)
        return r < 0 ? -1 : 0;
    PyObject *f = PyUnicode_Check(obj) || PyBytes_Check(obj) ? PyFloat_FromString(obj) : PyNumber_Float(obj);
    if (!f) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "cannot convert a %.200s to %s", Py_TYPE(obj)->tp_name, t->name);
        }
        return -1;
    }
    *bits = mxpy_from_double(t, PyFloat_AS_DOUBLE(f));
    Py_DECREF(f);
    return 0;
}

/* ---- the type's slots ---------------------------------------------------- */

static PyObject *scalar_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    mxpy_float *t = mxpy_float_by_scalar_type(type);
    PyObject *x = NULL;
    if (!t || (kwds && PyDict_Size(kwds)) || !PyArg_ParseTuple(args, "|O", &x)) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s() takes at most one positional argument", type->tp_name);
        return NULL;
    }
    if (!x)
        return mxpy_scalar_new(t, 0);
    if (Py_TYPE(x) == type) {
        Py_INCREF(x);
        return x;
    }
    if (PyArray_Check(x)) { /* bfloat16(array) casts the array, as NumPy's scalar types do: a 0-d one to a scalar */
        Py_INCREF(t->descr);
        PyObject *r = PyArray_CastToType((PyArrayObject *)x, t->descr, 0);
        return r ? PyArray_Return((PyArrayObject *)r) : NULL;
    }
    uint16_t bits;
    if (mxpy_bits_from_object(t, x, &bits) < 0)
        return NULL;
    return mxpy_scalar_new(t, bits);
}

/* Written the way Python writes floats ("0.1", "1.0", "inf", "nan"):
 * integers below 10^16 exactly (448.0, not the shorter 450.0 that also
 * reads back as float8_e4m3fn 448), other values as the shortest decimal
 * that reads back to the same bits. */
static PyObject *scalar_repr(PyObject *self)
{
    mxpy_float *t = scalar_float(self);
    double v = mxpy_to_double(t, ((mxpy_scalar *)self)->bits);
    if (is_int_row(t)) /* int4(3) prints 3, as ml_dtypes' */
        return PyUnicode_FromFormat("%lld", (long long)v);
    double shortest = v;
    bool exact = isfinite(v) && v == floor(v) && fabs(v) < 1e16;
    for (int digits = 1; isfinite(v) && !exact && digits <= 17; digits++) {
        char buf[40];
        snprintf(buf, sizeof buf, "%.*g", digits, v);
        double back = strtod(buf, NULL);
        if (mxpy_from_double(t, back) == ((mxpy_scalar *)self)->bits) {
            shortest = back;
            break;
        }
    }
    char *s = PyOS_double_to_string(shortest, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!s)
        return NULL;
    PyObject *r = PyUnicode_FromString(s);
    PyMem_Free(s);
    return r;
}

static double value_of(PyObject *self)
{
    return mxpy_to_double(scalar_float(self), ((mxpy_scalar *)self)->bits);
}

/* Python's float hash, so that x == 1.5 and hash(x) == hash(1.5) agree; a
 * NaN hashes by identity, as a Python float NaN does (3.10+). */
static Py_hash_t scalar_hash(PyObject *self)
{
    if (isnan(value_of(self)))
        return PyBaseObject_Type.tp_hash(self);
    PyObject *f = PyFloat_FromDouble(value_of(self));
    if (!f)
        return -1;
    Py_hash_t h = PyObject_Hash(f);
    Py_DECREF(f);
    return h;
}

/* A Python int/float, or a scalar of type t: its value as a double. */
static int plain_operand(const mxpy_float *t, PyObject *obj, double *v)
{
    if (scalar_float(obj) == t) {
        *v = value_of(obj);
        return 1;
    }
    if (PyFloat_CheckExact(obj)) {
        *v = PyFloat_AS_DOUBLE(obj);
        return 1;
    }
    if (PyLong_CheckExact(obj)) {
        *v = PyLong_AsDouble(obj);
        if (*v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return 0;
        }
        return 1;
    }
    return 0;
}

/* The type for a binary scalar operation computed here, or NULL when NumPy
 * should decide (other NumPy types, arrays, other mxp types). */
static mxpy_float *plain_pair(PyObject *a, PyObject *b, double *x, double *y)
{
    mxpy_float *t = scalar_float(a) ? scalar_float(a) : scalar_float(b);
    if (t && !is_int_row(t) && plain_operand(t, a, x) && plain_operand(t, b, y))
        return t;
    return NULL;
}

/* numpy.bool_, as NumPy's own scalars compare (and ml_dtypes'). */
static PyObject *scalar_richcompare(PyObject *a, PyObject *b, int op)
{
    double x, y;
    PyObject *other = scalar_float(a) ? b : a;
    if ((op == Py_EQ || op == Py_NE) && (PyUnicode_Check(other) || PyBytes_Check(other)))
        return PyBool_FromLong(op == Py_NE); /* as float32(1) == "1": a string is never equal */
    if (!plain_pair(a, b, &x, &y))
        return PyGenericArrType_Type.tp_richcompare(a, b, op);
    bool r;
    switch (op) {
    case Py_LT: r = x < y; break;
    case Py_LE: r = x <= y; break;
    case Py_EQ: r = x == y; break;
    case Py_NE: r = x != y; break;
    case Py_GT: r = x > y; break;
    default: r = x >= y; break;
    }
    PyArrayScalar_RETURN_BOOL_FROM_LONG(r);
}

/* x op y in float64 (mxp_binary_f64: the library's rules, Python's divmod
 * for // and %), rounded once into t. */
static PyObject *binop(PyObject *a, PyObject *b, mxp_binary_op op, binaryfunc numpy_op)
{
    double x, y, r;
    mxpy_float *t = plain_pair(a, b, &x, &y);
    if (!t)
        return numpy_op(a, b);
    mxp_status st = mxp_binary_f64(&r, op, x, y);
    return st == MXP_OK ? mxpy_scalar_new(t, mxpy_from_double(t, r)) : mxpy_raise(st);
}

#define GENERIC_NB(slot) PyGenericArrType_Type.tp_as_number->slot
static PyObject *nb_add(PyObject *a, PyObject *b) { return binop(a, b, MXP_OP_ADD, GENERIC_NB(nb_add)); }
static PyObject *nb_sub(PyObject *a, PyObject *b) { return binop(a, b, MXP_OP_SUBTRACT, GENERIC_NB(nb_subtract)); }
static PyObject *nb_mul(PyObject *a, PyObject *b) { return binop(a, b, MXP_OP_MULTIPLY, GENERIC_NB(nb_multiply)); }
static PyObject *nb_div(PyObject *a, PyObject *b) { return binop(a, b, MXP_OP_DIVIDE, GENERIC_NB(nb_true_divide)); }
static PyObject *nb_floordiv(PyObject *a, PyObject *b)
{
    return binop(a, b, MXP_OP_FLOOR_DIVIDE, GENERIC_NB(nb_floor_divide));
}
static PyObject *nb_mod(PyObject *a, PyObject *b) { return binop(a, b, MXP_OP_REMAINDER, GENERIC_NB(nb_remainder)); }

static PyObject *generic_pow(PyObject *a, PyObject *b) { return GENERIC_NB(nb_power)(a, b, Py_None); }

static PyObject *nb_pow(PyObject *a, PyObject *b, PyObject *mod)
{
    if (mod != Py_None)
        return GENERIC_NB(nb_power)(a, b, mod);
    return binop(a, b, MXP_OP_POWER, generic_pow);
}

/* The sign bit of a float type with a sign-magnitude negation (0: none:
 * the integers, fnuz (whose -0 pattern is NaN), e8m0). */
static uint16_t sign_bit(const mxpy_float *t)
{
    const mxp_dtype_traits *tr = mxp_dtype_get_traits(t->dt);
    if (is_int_row(t) || !tr->is_signed || (tr->has_nan && !tr->has_inf && strstr(tr->name, "fnuz")))
        return 0;
    return (uint16_t)(1u << (tr->bits - 1));
}

/* Sign-bit flips where the format has one: exact for every value, NaN
 * included; otherwise through the value (fnuz: -0 is +0; int4: -(-8)
 * saturates to 7). */
static PyObject *nb_neg(PyObject *self)
{
    mxpy_float *t = scalar_float(self);
    uint16_t sign = sign_bit(t);
    if (!sign)
        return mxpy_scalar_new(t, mxpy_from_double(t, -value_of(self)));
    return mxpy_scalar_new(t, ((mxpy_scalar *)self)->bits ^ sign);
}

static PyObject *nb_abs(PyObject *self)
{
    mxpy_float *t = scalar_float(self);
    uint16_t sign = sign_bit(t);
    if (!sign)
        return mxpy_scalar_new(t, mxpy_from_double(t, fabs(value_of(self))));
    return mxpy_scalar_new(t, ((mxpy_scalar *)self)->bits & (uint16_t)~sign);
}

static PyObject *nb_pos(PyObject *self)
{
    Py_INCREF(self);
    return self;
}

static PyObject *nb_float(PyObject *self) { return PyFloat_FromDouble(value_of(self)); }

/* format(x, spec), f"{x:.2f}": the float's formatting of the exact value
 * (the int's for the integer rows: f"{int4(5):x}" is "5", as ml_dtypes');
 * an empty spec is str(x). */
static PyObject *scalar_format(PyObject *self, PyObject *spec)
{
    if (!PyUnicode_Check(spec))
        return PyErr_Format(PyExc_TypeError, "format spec must be a str, not %.200s", Py_TYPE(spec)->tp_name);
    if (PyUnicode_GetLength(spec) == 0)
        return PyObject_Str(self);
    PyObject *f = is_int_row(scalar_float(self)) ? PyLong_FromDouble(value_of(self))
                                                 : PyFloat_FromDouble(value_of(self));
    PyObject *r = f ? PyObject_Format(f, spec) : NULL;
    Py_XDECREF(f);
    return r;
}

static PyMethodDef scalar_methods[] = {
    { "__format__", scalar_format, METH_O, "format(x, spec): as float(x) (int(x) for the integers) formats." },
    { NULL, NULL, 0, NULL },
};
static PyObject *nb_int(PyObject *self) { return PyLong_FromDouble(value_of(self)); }
static int nb_bool(PyObject *self) { return value_of(self) != 0; }

static PyType_Slot scalar_slots[] = {
    { Py_tp_new, scalar_new },
    { Py_tp_repr, scalar_repr },
    { Py_tp_str, scalar_repr },
    { Py_tp_hash, scalar_hash },
    { Py_tp_richcompare, scalar_richcompare },
    { Py_nb_add, nb_add },
    { Py_nb_subtract, nb_sub },
    { Py_nb_multiply, nb_mul },
    { Py_nb_true_divide, nb_div },
    { Py_nb_floor_divide, nb_floordiv },
    { Py_nb_remainder, nb_mod },
    { Py_nb_power, nb_pow },
    { Py_nb_negative, nb_neg },
    { Py_nb_positive, nb_pos },
    { Py_nb_absolute, nb_abs },
    { Py_nb_float, nb_float },
    { Py_nb_int, nb_int },
    { Py_nb_bool, nb_bool },
    { Py_tp_methods, scalar_methods },
    { Py_tp_doc, (void *)"A low-precision float scalar of mxp (see docs/python.md)." },
    { 0, NULL },
};

PyTypeObject *mxpy_make_scalar_type(const char *qualified_name);
PyTypeObject *mxpy_make_scalar_type(const char *qualified_name)
{
    PyType_Spec spec = { qualified_name, sizeof(mxpy_scalar), 0, Py_TPFLAGS_DEFAULT, scalar_slots };
    PyObject *bases = PyTuple_Pack(1, (PyObject *)&PyGenericArrType_Type);
    if (!bases)
        return NULL;
    PyObject *type = PyType_FromSpecWithBases(&spec, bases);
    Py_DECREF(bases);
    return (PyTypeObject *)type;
}
