/* Calling plugin operators on mxp arrays: the kernel for the inputs'
 * dtypes, broadcasting, blocks converted to the kernel's dtypes, threads. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "array/array-internal.h"
#include "core/abi.h"
#include "core/error.h"
#include "core/profile-internal.h"
#include "core/threads-internal.h"
#include "plugin/plugin-internal.h"

enum { BLOCK = 1024,           /* elements per kernel call of an elementwise operator */
       ROW_BYTES = 256 << 10,  /* a reduction's rows per kernel call: about this many bytes */
       PER_SHARE = 1 << 15 };  /* elements that make a thread's share worth starting */

/* ---- the kernel ------------------------------------------------------- */

static bool kernel_runs(const mxp_op_kernel_entry *k) { return k->isa <= mxp_get_isa(); }

/* The best runnable kernel with k's signature (k itself if none better). */
static const mxp_op_kernel_entry *best_level(const mxp_op_entry *e, const mxp_op_kernel_entry *k)
{
    const mxp_op_kernel_entry *best = k;
    for (int i = 0; i < e->n_kernels; i++) {
        const mxp_op_kernel_entry *c = &e->kernels[i];
        if (kernel_runs(c) && c->isa > best->isa && !strcmp(c->signature, k->signature))
            best = c;
    }
    return best;
}

static void list_signatures(const mxp_op_entry *e, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < e->n_kernels && used < cap; i++) {
        bool seen = false;
        for (int j = 0; j < i; j++)
            seen |= !strcmp(e->kernels[j].signature, e->kernels[i].signature);
        if (!seen)
            used += (size_t)snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", e->kernels[i].signature);
    }
}

mxp_status mxp_op_pick_kernel(const mxp_op_entry *e, const mxp_dtype *types, int n, const char *signature,
                              const mxp_op_kernel_entry **kernel)
{
    char canon[96], sigs[512];
    mxp_dtype in[MXP_OP_MAX_INPUTS], out;
    *kernel = NULL;
    mxp_status st;
    if (signature && (st = mxp_op_parse_signature(signature, e->n_inputs, in, &out, canon, sizeof canon, e->name)))
        return st;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < e->n_kernels; i++) {
            const mxp_op_kernel_entry *k = &e->kernels[i];
            if (!kernel_runs(k) || (signature && strcmp(k->signature, canon)))
                continue;
            bool fits = true;
            for (int j = 0; j < n && fits; j++)
                fits = pass == 0 ? types[j] == k->in[j] : mxp_can_cast(types[j], k->in[j], MXP_CASTING_SAFE);
            if (fits) {
                *kernel = best_level(e, k);
                return MXP_OK;
            }
        }
    }
    list_signatures(e, sigs, sizeof sigs);
    char got[160];
    size_t used = 0;
    for (int j = 0; j < n; j++)
        used += (size_t)snprintf(got + used, sizeof got - used, "%s%s", j ? ", " : "", mxp_dtype_name(types[j]));
    if (signature)
        return mxp_error(MXP_ERR_UNSUPPORTED, "operator '%s': no kernel %s runs for inputs (%s) at ISA level %s; "
                         "its signatures: %s", e->name, canon, got, mxp_isa_name(mxp_get_isa()), sigs);
    return mxp_error(MXP_ERR_UNSUPPORTED, "operator '%s' has no kernel for inputs (%s) at ISA level %s; its "
                     "signatures: %s", e->name, got, mxp_isa_name(mxp_get_isa()), sigs);
}

/* ---- elementwise ------------------------------------------------------ */

typedef struct ew_job {
    const mxp_op_entry *e;
    const mxp_op_kernel_entry *k;
    const mxp_array *in[MXP_OP_MAX_INPUTS]; /* broadcast to the result's shape */
    bool direct[MXP_OP_MAX_INPUTS];         /* read in place: C-contiguous, the kernel's dtype */
    mxp_array *res;                         /* C-contiguous */
    mxp_convert_opts convert;
    atomic_int failed;
} ew_job;

static void ew_share(const void *ctx, size_t lo, size_t hi, mxp_convert_flags *counts)
{
    ew_job *j = (ew_job *)ctx;
    const int n_in = j->e->n_inputs;
    const size_t osize = mxp_dtype_itemsize(j->res->dtype), ksize = mxp_dtype_itemsize(j->k->out);
    const bool out_direct = j->res->dtype == j->k->out;
    size_t bytes = out_direct ? 0 : BLOCK * ksize;
    for (int i = 0; i < n_in; i++)
        bytes += j->direct[i] ? 0 : BLOCK * mxp_dtype_itemsize(j->k->in[i]) + 64;
    char *scratch = bytes ? mxp_malloc(bytes) : NULL;
    if (bytes && !scratch) {
        atomic_store(&j->failed, 1);
        return;
    }
    mxp_convert_opts c = j->convert;
    c.flags = counts;
    for (size_t s = lo; s < hi; s += BLOCK) {
        const size_t nb = hi - s < BLOCK ? hi - s : BLOCK;
        const void *ptr[MXP_OP_MAX_INPUTS];
        char *at = scratch;
        for (int i = 0; i < n_in; i++) {
            const size_t isz = mxp_dtype_itemsize(j->k->in[i]);
            if (j->direct[i]) {
                ptr[i] = j->in[i]->data + s * isz;
                continue;
            }
            mxp_array_convert_range(j->in[i], (int64_t)s, (int64_t)nb, at, j->k->in[i]);
            ptr[i] = at;
            at += (BLOCK * isz + 63) & ~(size_t)63;
        }
        char *dst = j->res->data + s * osize;
        j->k->fn.elementwise(out_direct ? dst : at, ptr, nb, j->e->ctx);
        if (!out_direct) {
            c.index_offset = j->convert.index_offset + s;
            mxp_convert(dst, j->res->dtype, at, j->k->out, nb, &c);
        }
    }
    mxp_free(scratch);
}

static mxp_status run_elementwise(const mxp_op_entry *e, const mxp_op_kernel_entry *k, const mxp_array *const *in,
                                  mxp_array *res, const mxp_convert_opts *convert)
{
    ew_job j = { .e = e, .k = k, .res = res, .convert = convert ? *convert : (mxp_convert_opts){ 0 } };
    mxp_status st = MXP_OK;
    int made = 0;
    for (; made < e->n_inputs && st == MXP_OK; made++) {
        mxp_array *v;
        st = mxp_array_broadcast_to(&v, in[made], res->ndim, res->shape);
        if (st != MXP_OK)
            break;
        j.in[made] = v;
        j.direct[made] = (v->flags & MXP_ARRAY_C_CONTIGUOUS) && v->dtype == k->in[made] &&
                         !mxp_arrays_may_overlap(v, res);
    }
    const size_t n = (size_t)mxp_array_size(res);
    if (st == MXP_OK && n) {
        mxp_parallel_shares(mxp_share_threads(n, PER_SHARE), n, j.convert.flags, ew_share, &j);
        if (atomic_load(&j.failed))
            st = mxp_error(MXP_ERR_NO_MEMORY, "operator '%s': no memory for its blocks", e->name);
    }
    for (int i = 0; i < made; i++)
        mxp_array_free((mxp_array *)j.in[i]);
    return st;
}

/* ---- reductions ------------------------------------------------------- */

typedef struct red_job {
    const mxp_op_entry *e;
    const mxp_op_kernel_entry *k;
    const mxp_array *in; /* the reduced axis last: row r is elements [r n, r n + n) in C order */
    size_t n;            /* elements per row */
    bool direct;
    mxp_array *res;
    mxp_convert_opts convert;
    atomic_int failed;
} red_job;

static void red_share(const void *ctx, size_t lo, size_t hi, mxp_convert_flags *counts)
{
    red_job *j = (red_job *)ctx;
    const size_t isz = mxp_dtype_itemsize(j->k->in[0]), ksize = mxp_dtype_itemsize(j->k->out);
    const size_t osize = mxp_dtype_itemsize(j->res->dtype);
    size_t rows = ROW_BYTES / (j->n * isz);
    rows = rows ? rows : 1;
    const bool out_direct = j->res->dtype == j->k->out;
    char *buf = j->direct ? NULL : mxp_malloc(rows * j->n * isz);
    char *obuf = out_direct ? NULL : mxp_malloc(rows * ksize);
    if ((!j->direct && !buf) || (!out_direct && !obuf)) {
        atomic_store(&j->failed, 1);
        mxp_free(buf);
        mxp_free(obuf);
        return;
    }
    mxp_convert_opts c = j->convert;
    c.flags = counts;
    for (size_t r = lo; r < hi; r += rows) {
        const size_t nr = hi - r < rows ? hi - r : rows;
        const char *src = j->in->data + r * j->n * isz;
        if (!j->direct) {
            mxp_array_convert_range(j->in, (int64_t)(r * j->n), (int64_t)(nr * j->n), buf, j->k->in[0]);
            src = buf;
        }
        char *dst = j->res->data + r * osize;
        j->k->fn.reduce(out_direct ? dst : obuf, src, nr, j->n, j->e->ctx);
        if (!out_direct) {
            c.index_offset = j->convert.index_offset + r;
            mxp_convert(dst, j->res->dtype, obuf, j->k->out, nr, &c);
        }
    }
    mxp_free(buf);
    mxp_free(obuf);
}

/* The reduced axis of opts (MXP_OP_ALL_AXES: -1 with every axis reduced)
 * and the result's shape. */
static mxp_status reduce_shape(const mxp_op_entry *e, const mxp_array *a, const mxp_op_call_opts *o, int *axis,
                               int *ndim, int64_t *shape)
{
    *ndim = 0;
    if (o->set_axis && o->axis == MXP_OP_ALL_AXES) {
        *axis = -1;
        for (int d = 0; o->keepdims && d < a->ndim; d++)
            shape[(*ndim)++] = 1;
        return MXP_OK;
    }
    if (a->ndim == 0)
        return mxp_error(MXP_ERR_INDEX, "operator '%s': a 0-d array has no axis to reduce", e->name);
    *axis = o->set_axis ? o->axis : a->ndim - 1;
    mxp_status st = mxp_normalize_axis(axis, a->ndim, e->name);
    if (st != MXP_OK)
        return st;
    for (int d = 0; d < a->ndim; d++)
        if (d != *axis || o->keepdims)
            shape[(*ndim)++] = d == *axis ? 1 : a->shape[d];
    return MXP_OK;
}

static mxp_status run_reduction(const mxp_op_entry *e, const mxp_op_kernel_entry *k, const mxp_array *a, int axis,
                                mxp_array *res, const mxp_convert_opts *convert)
{
    red_job j = { .e = e, .k = k, .res = res, .convert = convert ? *convert : (mxp_convert_opts){ 0 } };
    mxp_array *moved = NULL;
    mxp_status st = MXP_OK;
    if (axis >= 0) {
        int perm[MXP_MAXDIMS], p = 0;
        for (int d = 0; d < a->ndim; d++)
            if (d != axis)
                perm[p++] = d;
        perm[p] = axis;
        st = mxp_array_transpose(&moved, a, perm);
        if (st != MXP_OK)
            return st;
        j.n = (size_t)a->shape[axis];
    } else {
        j.n = (size_t)mxp_array_size(a);
    }
    j.in = moved ? moved : a;
    const size_t rows = (size_t)mxp_array_size(res);
    if (rows && !j.n)
        st = mxp_error(MXP_ERR_SHAPE, "operator '%s': the reduced axis has length 0", e->name);
    j.direct = (j.in->flags & MXP_ARRAY_C_CONTIGUOUS) && j.in->dtype == k->in[0];
    if (st == MXP_OK && rows) {
        size_t per = PER_SHARE / j.n;
        mxp_parallel_shares(mxp_share_threads(rows, per ? per : 1), rows, j.convert.flags, red_share, &j);
        if (atomic_load(&j.failed))
            st = mxp_error(MXP_ERR_NO_MEMORY, "operator '%s': no memory for a block of rows", e->name);
    }
    mxp_array_free(moved);
    return st;
}

/* ---- general operators ------------------------------------------------ */

static mxp_status plugin_failed(const mxp_op_entry *e, const char *what)
{
    const char *why = mxp_plugin_error();
    mxp_status st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator '%s': %s: %s", e->name, what,
                              why[0] ? why : "the plugin gave no reason");
    mxp_plugin_error_clear();
    return st;
}

static mxp_status general_shape(const mxp_op_entry *e, const mxp_array *const *in, int *ndim, int64_t *shape)
{
    mxp_op_tensor t[MXP_OP_MAX_INPUTS];
    for (int i = 0; i < e->n_inputs; i++)
        t[i] = (mxp_op_tensor){ .data = NULL, .dtype = in[i]->dtype, .ndim = in[i]->ndim, .shape = in[i]->shape };
    *ndim = -1;
    mxp_plugin_error_clear();
    if (e->shape(ndim, shape, t, e->n_inputs, e->ctx) != 0)
        return plugin_failed(e, "its shape function refused the inputs");
    if (*ndim < 0 || *ndim > MXP_MAXDIMS)
        return mxp_error(MXP_ERR_SHAPE, "operator '%s': its shape function gave %d dimensions", e->name, *ndim);
    int64_t size;
    return mxp_check_shape(*ndim, shape, MXP_F64, &size);
}

/* The kernel on dense inputs of its dtypes into res (its dtype k->out). */
static mxp_status run_general(const mxp_op_entry *e, const mxp_op_kernel_entry *k, const mxp_array *const *in,
                              mxp_array *res)
{
    mxp_array *dense[MXP_OP_MAX_INPUTS] = { 0 };
    mxp_op_tensor t[MXP_OP_MAX_INPUTS];
    mxp_status st = MXP_OK;
    for (int i = 0; i < e->n_inputs && st == MXP_OK; i++) {
        const mxp_array *a = in[i];
        if (!(a->flags & MXP_ARRAY_C_CONTIGUOUS) || a->dtype != k->in[i] || mxp_arrays_may_overlap(a, res)) {
            st = mxp_array_astype(&dense[i], a, k->in[i], NULL);
            a = dense[i];
        }
        if (st == MXP_OK)
            t[i] = (mxp_op_tensor){ .data = a->data, .dtype = a->dtype, .ndim = a->ndim, .shape = a->shape };
    }
    if (st == MXP_OK) {
        mxp_op_tensor o = { .data = res->data, .dtype = res->dtype, .ndim = res->ndim, .shape = res->shape };
        mxp_plugin_error_clear();
        if (k->fn.general(&o, t, e->n_inputs, e->ctx) != 0)
            st = plugin_failed(e, "its kernel failed");
    }
    for (int i = 0; i < e->n_inputs; i++)
        mxp_array_free(dense[i]);
    return st;
}

/* ---- the entry points ------------------------------------------------- */

/* What a call needs before it has an output: the operator, its kernel and
 * the result's shape. */
typedef struct call_plan {
    const mxp_op_entry *e;
    const mxp_op_kernel_entry *k;
    int axis;
    int ndim;
    int64_t shape[MXP_MAXDIMS];
} call_plan;

static mxp_status plan_call(call_plan *p, const char *name, const mxp_array *const *in, int n_in,
                            const mxp_op_call_opts *o)
{
    mxp_status st = mxp_op_find(name, &p->e);
    if (st != MXP_OK)
        return st;
    const mxp_op_entry *e = p->e;
    if (n_in != e->n_inputs || (n_in && !in))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "operator '%s' takes %d input%s, not %d", e->name, e->n_inputs,
                         e->n_inputs == 1 ? "" : "s", n_in);
    mxp_dtype types[MXP_OP_MAX_INPUTS];
    for (int i = 0; i < n_in; i++) {
        if ((st = mxp_require_array(in[i], e->name)) != MXP_OK)
            return st;
        types[i] = in[i]->dtype;
    }
    if ((st = mxp_op_pick_kernel(e, types, n_in, o->signature, &p->k)) != MXP_OK)
        return st;
    if (e->kind == MXP_OP_REDUCTION)
        return reduce_shape(e, in[0], o, &p->axis, &p->ndim, p->shape);
    if (e->kind == MXP_OP_GENERAL)
        return general_shape(e, in, &p->ndim, p->shape);
    p->ndim = in[0]->ndim;
    memcpy(p->shape, in[0]->shape, (size_t)p->ndim * sizeof *p->shape);
    for (int i = 1; i < n_in && st == MXP_OK; i++)
        st = mxp_broadcast_shapes(&p->ndim, p->shape, p->ndim, p->shape, in[i]->ndim, in[i]->shape);
    return st;
}

/* Runs the plan into res (C-contiguous, of the result's shape). */
static mxp_status run_plan(const call_plan *p, const mxp_array *const *in, mxp_array *res, const mxp_op_call_opts *o)
{
    if (p->e->kind == MXP_OP_ELEMENTWISE)
        return run_elementwise(p->e, p->k, in, res, &o->convert);
    if (p->e->kind == MXP_OP_REDUCTION)
        return run_reduction(p->e, p->k, in[0], p->axis, res, &o->convert);
    if (res->dtype == p->k->out)
        return run_general(p->e, p->k, in, res);
    mxp_array *tmp;
    mxp_status st = mxp_array_new_owner(&tmp, p->k->out, p->ndim, p->shape);
    if (st == MXP_OK)
        st = run_general(p->e, p->k, in, tmp);
    if (st == MXP_OK)
        st = mxp_convert(res->data, res->dtype, tmp->data, tmp->dtype, (size_t)mxp_array_size(tmp), &o->convert);
    mxp_array_free(tmp);
    return st;
}

static mxp_status op_call_entry(mxp_array **out, const char *name, const mxp_array *const *in, int n_in,
                                const mxp_op_call_opts *opts)
{
    MXP_ABI_IN_OUT(opts, op_call_opts, "mxp_op_call", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_op_call: out is NULL");
    *out = NULL;
    const mxp_op_call_opts o = opts ? *opts : (mxp_op_call_opts){ 0 };
    if (o.out_dtype != MXP_DTYPE_INVALID && !mxp_dtype_is_valid(o.out_dtype))
        return mxp_error(MXP_ERR_INVALID_DTYPE, "mxp_op_call: out_dtype %d is not a dtype", (int)o.out_dtype);
    call_plan p;
    mxp_status st = plan_call(&p, name, in, n_in, &o);
    if (st != MXP_OK)
        return st;
    mxp_array *res;
    st = mxp_array_new_owner(&res, o.out_dtype ? o.out_dtype : p.k->out, p.ndim, p.shape);
    if (st == MXP_OK)
        st = run_plan(&p, in, res, &o);
    if (st != MXP_OK)
        mxp_array_free(res), res = NULL;
    *out = res;
    return st;
}

static mxp_status op_call_into_entry(mxp_array *out, const char *name, const mxp_array *const *in, int n_in,
                                     const mxp_op_call_opts *opts)
{
    MXP_ABI_IN(opts, op_call_opts, "mxp_op_call_into");
    mxp_status st = mxp_require_array(out, "mxp_op_call_into: out");
    if (st != MXP_OK)
        return st;
    if (!(out->flags & MXP_ARRAY_WRITEABLE))
        return mxp_error(MXP_ERR_READONLY, "mxp_op_call_into: out is read-only");
    const mxp_op_call_opts o = opts ? *opts : (mxp_op_call_opts){ 0 };
    if (o.out_dtype && o.out_dtype != out->dtype)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_op_call_into: opts->out_dtype %s is not out's dtype %s",
                         mxp_dtype_name(o.out_dtype), mxp_dtype_name(out->dtype));
    call_plan p;
    if ((st = plan_call(&p, name, in, n_in, &o)) != MXP_OK)
        return st;
    if (p.ndim != out->ndim || memcmp(p.shape, out->shape, (size_t)p.ndim * sizeof *p.shape)) {
        char want[96], got[96];
        mxp_format_shape(want, sizeof want, p.ndim, p.shape);
        mxp_format_shape(got, sizeof got, out->ndim, out->shape);
        return mxp_error(MXP_ERR_SHAPE, "operator '%s': out has shape %s, the result %s", p.e->name, got, want);
    }
    bool in_place_ok = true;
    for (int i = 0; i < n_in; i++) {
        const mxp_array *a = in[i];
        bool same = a->data == out->data && a->dtype == out->dtype && a->ndim == out->ndim &&
                    !memcmp(a->strides, out->strides, (size_t)a->ndim * sizeof *a->strides);
        if (mxp_arrays_may_overlap(a, out) && !(same && p.e->kind == MXP_OP_ELEMENTWISE))
            in_place_ok = false;
    }
    if (!in_place_ok)
        return mxp_error(MXP_ERR_OVERLAP, "operator '%s': out overlaps an input (only an elementwise operator may "
                                          "write over an input, and only exactly over it)", p.e->name);
    if (out->flags & MXP_ARRAY_C_CONTIGUOUS)
        return run_plan(&p, in, out, &o);
    mxp_array *res;
    if ((st = mxp_array_new_owner(&res, out->dtype, p.ndim, p.shape)) != MXP_OK)
        return st;
    st = run_plan(&p, in, res, &o);
    if (st == MXP_OK)
        mxp_array_copy_rows(out, res, NULL);
    mxp_array_free(res);
    return st;
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

static const char *prof_op_name(const char *name)
{
    const mxp_op_entry *e = mxp_op_lookup(name);
    return e ? e->prof_name : "op:(not loaded)";
}

static double prof_inputs_bytes(const mxp_array *const *in, int n_in)
{
    double b = 0;
    for (int i = 0; in && i < n_in && i < MXP_OP_MAX_INPUTS; i++)
        b += mxp_prof_array_bytes(in[i]);
    return b;
}

mxp_status mxp_op_call(mxp_array **out, const char *name, const mxp_array *const *in, int n_in,
                       const mxp_op_call_opts *opts)
{
    MXP_PROF_RETURN_AFTER(prof_op_name(name), op_call_entry(out, name, in, n_in, opts),
                          prof_inputs_bytes(in, n_in),
                          prof_inputs_bytes(in, n_in) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          mxp_prof_size(mxp_prof_made(out)));
}

mxp_status mxp_op_call_into(mxp_array *out, const char *name, const mxp_array *const *in, int n_in,
                            const mxp_op_call_opts *opts)
{
    MXP_PROF_RETURN_AFTER(prof_op_name(name), op_call_into_entry(out, name, in, n_in, opts),
                          prof_inputs_bytes(in, n_in),
                          prof_inputs_bytes(in, n_in) + mxp_prof_array_bytes(out),
                          mxp_prof_size(out));
}
