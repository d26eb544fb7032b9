/* Module functions: casts with every rounding mode (mxp.astype) and the
 * runtime (mxp.info, threads, allocator statistics). */
#include "mxpy.h"

int mxpy_convert_opts(const char *rounding, const char *overflow, unsigned long long seed, mxp_convert_opts *o)
{
    *o = (mxp_convert_opts){ 0 };
    o->rounding = mxp_rounding_from_name(rounding ? rounding : "nearest_even");
    o->overflow = mxp_overflow_from_name(overflow ? overflow : "inf");
    o->seed = seed;
    if (o->rounding == MXP_ROUNDING_COUNT) {
        mxpy_not_one_of("rounding", rounding, "ROUNDINGS");
        return -1;
    }
    if (o->overflow == MXP_OVERFLOW_COUNT) {
        mxpy_not_one_of("overflow", overflow, "OVERFLOWS");
        return -1;
    }
    return 0;
}

static PyObject *flags_dict(const mxp_convert_flags *f)
{
    return Py_BuildValue("{s:K,s:K,s:K,s:K}", "inexact", (unsigned long long)f->inexact, "overflow",
                         (unsigned long long)f->overflow, "underflow", (unsigned long long)f->underflow, "invalid",
                         (unsigned long long)f->invalid);
}

/* _astype(x, dtype, rounding, overflow, seed, out, stats, index_offset) -> (array, stats dict or None) */
static PyObject *astype(PyObject *self, PyObject *args, PyObject *kwds)
{
    (void)self;
    static char *kw[] = { "x", "dtype", "rounding", "overflow", "seed", "out", "stats", "index_offset", NULL };
    PyObject *x, *dtype, *out;
    const char *rounding, *overflow;
    unsigned long long seed, offset;
    int stats;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOssKOpK", kw, &x, &dtype, &rounding, &overflow, &seed, &out,
                                     &stats, &offset))
        return NULL;
    mxp_convert_opts o;
    mxp_convert_flags flags = { 0 };
    mxp_dtype dt = out == Py_None ? mxpy_dtype_arg(dtype, "astype") : MXP_DTYPE_INVALID;
    if ((out == Py_None && dt == MXP_DTYPE_INVALID) || mxpy_convert_opts(rounding, overflow, seed, &o) < 0)
        return NULL;
    if (stats)
        o.flags = &flags;
    o.index_offset = offset;
    mxp_array *src = mxpy_wrap(x, "astype: x", false);
    PyObject *tmp = NULL; /* out unaligned: an aligned copy, copied back after */
    mxp_array *dst = src && out != Py_None ? mxpy_wrap_ex(out, "astype: out", MXPY_WRITE, &tmp) : NULL;
    if (!src || (out != Py_None && !dst)) {
        mxp_array_free(src);
        return NULL;
    }
    mxp_array *made = NULL;
    mxp_status st;
    Py_BEGIN_ALLOW_THREADS
    st = dst ? mxp_array_copyto(dst, src, MXP_CASTING_UNSAFE, &o) : mxp_array_astype(&made, src, dt, &o);
    Py_END_ALLOW_THREADS
    mxp_array_free(src);
    mxp_array_free(dst);
    if (st != MXP_OK) {
        Py_XDECREF(tmp);
        return mxpy_raise(st);
    }
    if (mxpy_copy_back(out, tmp) < 0)
        return NULL;
    PyObject *result = dst ? (Py_INCREF(out), out) : mxpy_unwrap(made);
    if (!result)
        return NULL;
    PyObject *f = stats ? flags_dict(&flags) : (Py_INCREF(Py_None), Py_None);
    return Py_BuildValue("(NN)", result, f);
}

static PyObject *info(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    PyObject *kernels = PyDict_New();
    const mxp_dtype gemm_types[] = { MXP_F32, MXP_F64, MXP_BF16, MXP_F16, MXP_E4M3, MXP_U8 };
    for (size_t i = 0; kernels && i < sizeof gemm_types / sizeof gemm_types[0]; i++) {
        mxp_dtype b = gemm_types[i] == MXP_U8 ? MXP_S8 : gemm_types[i];
        char key[64];
        snprintf(key, sizeof key, "gemm %s", mxp_dtype_name(gemm_types[i]));
        PyObject *v = PyUnicode_FromString(mxp_gemm_kernel_name(gemm_types[i], b, NULL));
        if (!v || PyDict_SetItemString(kernels, key, v) < 0)
            Py_CLEAR(kernels);
        Py_XDECREF(v);
    }
    const mxp_dtype cvt[][2] = { { MXP_BF16, MXP_F32 }, { MXP_F32, MXP_BF16 }, { MXP_F16, MXP_F32 },
                                 { MXP_E4M3, MXP_F32 }, { MXP_E5M2, MXP_F32 }, { MXP_BF16, MXP_F64 } };
    for (size_t i = 0; kernels && i < sizeof cvt / sizeof cvt[0]; i++) {
        char key[64];
        snprintf(key, sizeof key, "convert %s -> %s", mxp_dtype_name(cvt[i][1]), mxp_dtype_name(cvt[i][0]));
        PyObject *v = PyUnicode_FromString(mxp_convert_kernel_name(cvt[i][0], cvt[i][1], NULL));
        if (!v || PyDict_SetItemString(kernels, key, v) < 0)
            Py_CLEAR(kernels);
        Py_XDECREF(v);
    }
    if (!kernels)
        return NULL;
    return Py_BuildValue("{s:s,s:s,s:s,s:s,s:s,s:i,s:N}", "version", mxp_version(), "isa",
                         mxp_isa_name(mxp_get_isa()), "isa_supported", mxp_isa_name(mxp_isa_supported()), "cpu",
                         mxp_cpu_brand(), "features", mxp_cpu_features_string(), "threads", mxp_get_num_threads(),
                         "kernels", kernels);
}

static PyObject *set_num_threads(PyObject *self, PyObject *arg)
{
    (void)self;
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0 || n > 1024)
        return PyErr_Format(PyExc_ValueError, "set_num_threads: %ld is not in [0, 1024] (0: the default)", n);
    mxp_status st = mxp_set_num_threads((int)n);
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}

static PyObject *get_num_threads(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    return PyLong_FromLong(mxp_get_num_threads());
}

static PyObject *memory_stats(PyObject *self, PyObject *reset)
{
    (void)self;
    mxp_memory_stats s = { 0 }; /* struct_size 0: this release's layout (docs/abi.md) */
    mxp_get_memory_stats(&s);
    if (PyObject_IsTrue(reset))
        mxp_reset_memory_stats();
    return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K}", "current_bytes",
                         (unsigned long long)s.current_bytes,
                         "peak_bytes", (unsigned long long)s.peak_bytes, "allocations",
                         (unsigned long long)s.allocations, "frees", (unsigned long long)s.frees, "pool_hits",
                         (unsigned long long)s.pool_hits, "pool_bytes", (unsigned long long)s.pool_bytes,
                         "bytes_copied", (unsigned long long)s.bytes_copied, "bytes_converted",
                         (unsigned long long)s.bytes_converted, "workspace_bytes",
                         (unsigned long long)s.workspace_bytes, "workspace_reuses",
                         (unsigned long long)s.workspace_reuses, "hugepage_allocations",
                         (unsigned long long)s.hugepage_allocations, "hugepage_cache_bytes",
                         (unsigned long long)s.hugepage_cache_bytes, "hugepage_cache_hits",
                         (unsigned long long)s.hugepage_cache_hits);
}

static PyObject *set_hugepages(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = { "enabled", "threshold", NULL };
    PyObject *enabled = Py_None, *threshold = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OO:hugepages", names, &enabled, &threshold))
        return NULL;
    if (threshold != Py_None) {
        Py_ssize_t t = PyNumber_AsSsize_t(threshold, PyExc_OverflowError);
        if (t == -1 && PyErr_Occurred())
            return NULL;
        if (t < 0)
            return PyErr_Format(PyExc_ValueError, "hugepages: threshold %zd bytes is negative", t);
        mxp_status st = mxp_set_hugepage_threshold((size_t)t);
        if (st != MXP_OK)
            return mxpy_raise(st);
    }
    if (enabled != Py_None) {
        int on = PyObject_IsTrue(enabled);
        if (on < 0)
            return NULL;
        mxp_set_hugepages(on != 0);
    }
    return Py_BuildValue("{s:O,s:n}", "enabled", mxp_hugepages_enabled() ? Py_True : Py_False, "threshold",
                         (Py_ssize_t)mxp_hugepage_threshold());
}

static PyObject *release_workspaces(PyObject *self, PyObject *noargs)
{
    (void)self;
    (void)noargs;
    mxp_release_workspaces();
    Py_RETURN_NONE;
}

PyMethodDef mxpy_runtime_methods[] = {
    { "hugepages", (PyCFunction)(void (*)(void))set_hugepages, METH_VARARGS | METH_KEYWORDS,
      "hugepages(*, enabled=None, threshold=None) -> {'enabled': bool, 'threshold': bytes}: mxp's huge pages for\n"
      "buffers of threshold bytes and more (default on, 4 MiB; MXP_HUGEPAGES=0|1); sets what is given, returns\n"
      "the setting." },
    { "release_workspaces", release_workspaces, METH_NOARGS,
      "release_workspaces(): frees mxp's idle GEMM workspaces and the freed huge-page blocks it keeps for reuse." },
    { "_astype", (PyCFunction)(void (*)(void))astype, METH_VARARGS | METH_KEYWORDS, NULL },
    { "_info", info, METH_NOARGS, NULL },
    { "set_num_threads", set_num_threads, METH_O,
      "set_num_threads(n): threads for mxp's GEMM and other parallel work (0: the default)." },
    { "get_num_threads", get_num_threads, METH_NOARGS, "get_num_threads() -> the threads mxp uses." },
    { "_memory_stats", memory_stats, METH_O, NULL },
    { NULL, NULL, 0, NULL },
};
