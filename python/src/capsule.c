/* The library's objects (optimizers, loss scalers, autocast tables,
 * monitors, observers, compare selections, prepacked weights) handed to Python in PyCapsules:
 * one destructor for every kind, and the argument and result conventions
 * the module functions on them share. */
#include "mxpy.h"

static void optimizer_free(void *p) { mxp_optimizer_free(p); }
static void loss_scaler_free(void *p) { mxp_loss_scaler_free(p); }
static void autocast_free(void *p) { mxp_autocast_free(p); }
static void monitor_free(void *p) { mxp_monitor_free(p); }
static void observer_free(void *p) { mxp_observer_free(p); }
static void compare_select_free(void *p) { mxp_compare_select_free(p); }
static void qtensor_free(void *p) { mxp_qtensor_free(p); }

const mxpy_kind mxpy_kind_optimizer = { "mxp.optimizer", optimizer_free };
const mxpy_kind mxpy_kind_loss_scaler = { "mxp.loss_scaler", loss_scaler_free };
const mxpy_kind mxpy_kind_autocast = { "mxp.autocast", autocast_free };
const mxpy_kind mxpy_kind_monitor = { "mxp.monitor", monitor_free };
const mxpy_kind mxpy_kind_observer = { "mxp.observer", observer_free };
const mxpy_kind mxpy_kind_compare_select = { "mxp.compare_select", compare_select_free };
const mxpy_kind mxpy_kind_qtensor = { "mxp.qtensor", qtensor_free };

/* The capsule's context is its kind. */
static void free_capsule(PyObject *cap)
{
    const mxpy_kind *kind = PyCapsule_GetContext(cap);
    if (kind)
        kind->free(PyCapsule_GetPointer(cap, kind->name));
}

PyObject *mxpy_capsule_new(mxp_status st, void *obj, const mxpy_kind *kind)
{
    if (st != MXP_OK)
        return mxpy_raise(st);
    PyObject *cap = PyCapsule_New(obj, kind->name, free_capsule);
    if (!cap) {
        kind->free(obj);
        return NULL;
    }
    if (PyCapsule_SetContext(cap, (void *)kind) < 0) {
        Py_DECREF(cap); /* without a context the destructor leaves obj */
        kind->free(obj);
        return NULL;
    }
    return cap;
}

void *mxpy_capsule_get(PyObject *cap, const mxpy_kind *kind)
{
    return PyCapsule_GetPointer(cap, kind->name);
}

int mxpy_object_conv(PyObject *cap, void *arg)
{
    mxpy_object *o = arg;
    o->obj = mxpy_capsule_get(cap, o->kind);
    return o->obj != NULL;
}

PyObject *mxpy_none(mxp_status st)
{
    if (st != MXP_OK)
        return mxpy_raise(st);
    Py_RETURN_NONE;
}
