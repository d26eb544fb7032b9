/* Module functions: the profiler (mxp/profile.h), for python/mxp/profile.py. */
#include "mxpy.h" /* first: Python.h sets _GNU_SOURCE (open_memstream) */

#include <stdio.h>
#include <stdlib.h>

static PyObject *profile_begin(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return mxpy_none(mxp_profile_begin());
}

static PyObject *profile_end(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return mxpy_none(mxp_profile_end());
}

static PyObject *profile_reset(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    mxp_profile_reset();
    Py_RETURN_NONE;
}

static PyObject *profile_active(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    return PyBool_FromLong(mxp_profile_active());
}

static PyObject *profile_machine(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    mxp_profile_machine m = { 0 };
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_profile_get_machine(&m); /* the first call measures (~0.5 s) */
    Py_END_ALLOW_THREADS
    if (st != MXP_OK)
        return mxpy_raise(st);
    static const char *const sources[] = { "measured", "cached", "MXP_PROFILE_MACHINE" };
    return Py_BuildValue("{s:d,s:d,s:d,s:s,s:s}", "memory_gbps", m.memory_gbps, "peak_gflops", m.peak_gflops,
                         "fault_us", m.fault_us, "cpu", m.cpu, "source", sources[m.source]);
}

static PyObject *profile_entries(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    const int n = mxp_profile_count();
    PyObject *list = PyList_New(0);
    for (int i = 0; list && i < n; i++) {
        mxp_profile_entry e = { 0 };
        mxp_status st;
        Py_BEGIN_ALLOW_THREADS
        st = mxp_profile_entry_at(i, &e);
        Py_END_ALLOW_THREADS
        if (st != MXP_OK) {
            Py_DECREF(list);
            return mxpy_raise(st);
        }
        PyObject *d = Py_BuildValue(
            "{s:s,s:K,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:d,s:K,s:K,s:i,s:s,s:s}", "op", e.op, "calls",
            (unsigned long long)e.calls, "total_s", e.total_s, "min_s", e.min_s, "max_s", e.max_s, "bytes", e.bytes,
            "flops", e.flops, "gbps", e.gbps, "gflops", e.gflops, "memory_fraction", e.memory_fraction,
            "peak_fraction", e.peak_fraction, "minor_faults", (unsigned long long)e.minor_faults, "major_faults",
            (unsigned long long)e.major_faults, "max_threads", e.max_threads, "verdict", mxp_verdict_name(e.verdict),
            "advice", e.advice);
        if (!d || PyList_Append(list, d) < 0)
            Py_CLEAR(list);
        Py_XDECREF(d);
    }
    return list;
}

/* _profile_report(format) -> str: 0 table, 1 JSON, 2 Chrome trace */
static PyObject *profile_report(PyObject *self, PyObject *args)
{
    (void)self;
    int format;
    if (!PyArg_ParseTuple(args, "i:_profile_report", &format))
        return NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return PyErr_NoMemory();
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_profile_write(f, (mxp_profile_format)format);
    Py_END_ALLOW_THREADS
    fclose(f);
    PyObject *r = st == MXP_OK ? PyUnicode_DecodeUTF8(buf, (Py_ssize_t)len, "replace") : mxpy_raise(st);
    free(buf);
    return r;
}

/* _profile_save(path, format) */
static PyObject *profile_save(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *path;
    int format;
    if (!PyArg_ParseTuple(args, "O&i:_profile_save", PyUnicode_FSConverter, &path, &format))
        return NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = mxp_profile_save(PyBytes_AS_STRING(path), (mxp_profile_format)format);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    return mxpy_none(st);
}

PyMethodDef mxpy_profile_methods[] = {
    { "_profile_begin", profile_begin, METH_NOARGS, "_profile_begin() (mxp_profile_begin)." },
    { "_profile_end", profile_end, METH_NOARGS, "_profile_end() (mxp_profile_end)." },
    { "_profile_reset", profile_reset, METH_NOARGS, "_profile_reset() (mxp_profile_reset)." },
    { "_profile_active", profile_active, METH_NOARGS, "_profile_active() -> bool." },
    { "_profile_machine", profile_machine, METH_NOARGS, "_profile_machine() -> dict (the roofline)." },
    { "_profile_entries", profile_entries, METH_NOARGS, "_profile_entries() -> [dict], slowest kind first." },
    { "_profile_report", profile_report, METH_VARARGS, "_profile_report(format) -> str (0 table, 1 JSON, 2 trace)." },
    { "_profile_save", profile_save, METH_VARARGS, "_profile_save(path, format), written atomically." },
    { NULL, NULL, 0, NULL },
};
