/* take (NumPy's, along any axis) and the rows of a quantized table with
 * per-row scales.  Every index is read and checked before anything is
 * written; then each output row (the last axis after the indexed one, or
 * one element) is one conversion from the table row it names. */
#include <string.h>

#include "core/error.h"
#include "core/fpenv.h"
#include "mxp/alloc.h"
#include "nn/nn-internal.h"
#if MXP_HAVE_X86_KERNELS
#include "kernels/stream-loop.h"
#endif

typedef struct take_job {
    int64_t len;           /* elements of a row */
    mxp_dtype tt, ot;
    int64_t ts, os;        /* row steps */
    int64_t axis_stride;   /* table bytes per index */
    const double *scales;  /* per table row, or NULL */
    int64_t ahead;         /* rows whose index lies TAKE_AHEAD rows on (a one-axis walk): [0, ahead) */
    bool stream;           /* copies by streaming stores (a large output) */
} take_job;

enum { OUT, TAB, IDX };

/* The table row TAKE_AHEAD output rows on is prefetched into L2 (its
 * index read from the same dense indices): the rows are gathered from
 * anywhere in the table, which the hardware prefetchers cannot guess.  A
 * copy that moves mxp_stream_threshold() or more (read + written, the
 * table's bytes counted too: the rows come from all of it) writes by
 * streaming stores, as the conversions do: the output's lines are not
 * read before they are written, and the cache is left to the table (4 M
 * bfloat16 elements from a 23 MB table on the Zen 4, 16 MiB threshold:
 * plain stores 0.86-1.06x memcpy, streaming 1.11-1.22x).  AMD Zen 4, 4 M elements in rows of 384
 * from a 30522-row table, one thread (`mxp bench nn`, alternating builds):
 * float32 13-15 -> 24-32 GB/s, bfloat16 16-19 -> 29-34 GB/s against a
 * prefetch into L1 four rows on with memcpy'd rows; either change alone
 * gave a third of that (docs/nn.md). */
enum {
    TAKE_AHEAD = 8,         /* rows */
    TAKE_AHEAD_BYTES = 4096 /* of a row at most: a longer row's own reads bring the rest in time */
};

static void take_prefetch(const take_job *j, char **p, int64_t row)
{
    if (row >= j->ahead)
        return;
    const int64_t i = ((const int64_t *)(const void *)p[IDX])[TAKE_AHEAD];
    const uintptr_t a = (uintptr_t)p[TAB] + (uintptr_t)(i * j->axis_stride); /* an address: never read */
    const uintptr_t bytes = (uintptr_t)(j->len * j->ts); /* ts > 0 (take_in_env) */
    for (uintptr_t b = 0; b < bytes && b < TAKE_AHEAD_BYTES; b += 64)
        __builtin_prefetch((const void *)(a + b), 0, 1); /* prefetcht2: L2 */
}

/* A row copied whole: by streaming stores in a large gather (fenced at
 * the end of the thread's share, nn_run_rows), else memcpy. */
static void copy_row(char *dst, const char *src, size_t bytes, bool stream)
{
#if MXP_HAVE_X86_KERNELS
    if (stream) {
        mxp_stream_copy(dst, src, bytes);
        return;
    }
#else
    (void)stream;
#endif
    memcpy(dst, src, bytes);
}

static void take_row(const void *ctx, char **p, double *buf, int64_t row)
{
    const take_job *j = ctx;
    const int64_t i = *(const int64_t *)(const void *)p[IDX];
    const char *src = p[TAB] + i * j->axis_stride;
    take_prefetch(j, p, row);
    if (!j->scales && j->tt == j->ot) { /* a copy: every bit kept (NaN payloads, bools) */
        const size_t size = mxp_dtype_itemsize(j->tt);
        if (j->ts == (int64_t)size && j->os == (int64_t)size)
            copy_row(p[OUT], src, (size_t)j->len * size, j->stream);
        else
            for (int64_t k = 0; k < j->len; k++)
                memcpy(p[OUT] + k * j->os, src + k * j->ts, size);
        return;
    }
    if (!j->scales) {
        mxp_convert_strided(p[OUT], j->ot, (ptrdiff_t)j->os, src, j->tt, (ptrdiff_t)j->ts, (size_t)j->len, NULL);
        return;
    }
    nn_load(buf, src, j->tt, j->ts, j->len);
    for (int64_t k = 0; k < j->len; k++)
        buf[k] *= j->scales[i];
    nn_store(p[OUT], j->ot, j->os, buf, j->len);
}

/* The indices as int64 in [0, n), C order, in a new array. */
static mxp_status read_indices(const char *fn, mxp_array **idx, const mxp_array *indices, int axis, int64_t n)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(indices->dtype);
    if (t->kind != MXP_KIND_INT && t->kind != MXP_KIND_UINT)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "%s: indices of dtype %s: an integer dtype is needed", fn, t->name);
    const bool u64 = indices->dtype == MXP_U64;
    mxp_status st = mxp_array_astype(idx, indices, u64 ? MXP_U64 : MXP_S64, NULL);
    if (st != MXP_OK)
        return st;
    int64_t *v = (int64_t *)(void *)(*idx)->data;
    const int64_t count = mxp_array_size(*idx);
    for (int64_t k = 0; k < count; k++) {
        if (u64 && (uint64_t)v[k] > (uint64_t)INT64_MAX) {
            st = mxp_error(MXP_ERR_INDEX, "%s: index %llu is out of bounds for axis %d with size %lld", fn,
                           (unsigned long long)(uint64_t)v[k], axis, (long long)n);
            break;
        }
        if (v[k] < -n || v[k] >= n) {
            st = mxp_error(MXP_ERR_INDEX, "%s: index %lld is out of bounds for axis %d with size %lld", fn,
                           (long long)v[k], axis, (long long)n);
            break;
        }
        v[k] += v[k] < 0 ? n : 0;
    }
    if (st != MXP_OK) {
        mxp_array_free(*idx);
        *idx = NULL;
    }
    return st;
}

/* out's shape: table.shape[:axis] + indices.shape + table.shape[axis+1:]. */
static mxp_status take_shape(const char *fn, const mxp_array *table, const mxp_array *indices, int axis, int *nd,
                             int64_t *shape)
{
    *nd = table->ndim - 1 + indices->ndim;
    if (*nd > MXP_MAXDIMS)
        return mxp_error(MXP_ERR_SHAPE, "%s: the result would have %d dimensions, more than %d", fn, *nd,
                         MXP_MAXDIMS);
    int k = 0;
    for (int i = 0; i < axis; i++)
        shape[k++] = table->shape[i];
    for (int i = 0; i < indices->ndim; i++)
        shape[k++] = indices->shape[i];
    for (int i = axis + 1; i < table->ndim; i++)
        shape[k++] = table->shape[i];
    return MXP_OK;
}

static mxp_status check_take(const char *fn, const mxp_array *table, const mxp_array *indices, int *axis)
{
    mxp_status st = nn_check_input(fn, "table", table);
    if (st == MXP_OK)
        st = nn_check_input(fn, "indices", indices);
    if (st == MXP_OK)
        st = mxp_normalize_axis(axis, table->ndim, fn);
    return st;
}

/* The walk: out's axes (and a unit one when nothing follows the indexed
 * axis), the row the last; the table's indexed axis and the indices'
 * axes are stepped by the index read in each row. */
static void take_walk(nn_rows *r, const mxp_array *out, const mxp_array *table, const mxp_array *idx, int axis,
                      bool unit)
{
    memset(r, 0, sizeof *r);
    const int nd = out->ndim + (unit ? 1 : 0), ni = idx->ndim;
    r->nd = nd - 1;
    r->narr = 3;
    r->nrows = 1;
    r->base[OUT] = out->data;
    r->base[TAB] = table->data;
    r->base[IDX] = idx->data;
    int64_t istride = 8;
    for (int d = nd - 2; d >= 0; d--) {
        r->shape[d] = out->shape[d];
        r->strides[OUT][d] = out->strides[d];
        const bool in_idx = d >= axis && d < axis + ni;
        r->strides[TAB][d] = d < axis ? table->strides[d] : in_idx ? 0 : table->strides[d - ni + 1];
        r->strides[IDX][d] = in_idx ? istride : 0;
        if (in_idx)
            istride *= idx->shape[d - axis];
        r->nrows *= r->shape[d];
    }
}

static mxp_status take_in_env(const char *fn, mxp_array *out, const mxp_array *table, const mxp_array *indices,
                              int axis, const double *scales)
{
    int nd;
    int64_t shape[MXP_MAXDIMS];
    mxp_status st = take_shape(fn, table, indices, axis, &nd, shape);
    if (st == MXP_OK)
        st = nn_check_out_shape(fn, out, nd, shape);
    mxp_array *idx = NULL, *work = NULL;
    if (st == MXP_OK)
        st = read_indices(fn, &idx, indices, axis, table->shape[axis]);
    const mxp_array *in[2] = { table, indices };
    if (st == MXP_OK)
        st = nn_out_begin(fn, out, in, 2, 1, &work);
    if (st == MXP_OK) {
        const bool unit = axis == table->ndim - 1;
        nn_rows r;
        take_walk(&r, work, table, idx, axis, unit);
        /* index k of row k, rows forward in memory: prefetched ahead */
        const bool one = r.nd == 1 && r.strides[IDX][0] == 8 && !unit && nn_step(table) > 0;
        const take_job j = { unit ? 1 : table->shape[table->ndim - 1], table->dtype, work->dtype,
                             unit ? 0 : nn_step(table), unit ? 0 : nn_step(work), table->strides[axis], scales,
                             one ? r.nrows - TAKE_AHEAD : 0,
                             nn_streams(work, (uint64_t)mxp_array_size(table) * mxp_array_itemsize(table)) };
        st = nn_run_rows(&r, j.len, scales ? (size_t)j.len : 0, true, take_row, &j);
    }
    mxp_array_free(idx);
    return nn_out_end(out, work, st);
}

static mxp_status take_into(const char *fn, mxp_array *out, const mxp_array *table, const mxp_array *indices,
                            int axis)
{
    mxp_status st = nn_check_input(fn, "out", out);
    if (st == MXP_OK)
        st = check_take(fn, table, indices, &axis);
    if (st != MXP_OK)
        return st;
    const mxp_fpenv env = mxp_fpenv_enter();
    st = take_in_env(fn, out, table, indices, axis, NULL);
    mxp_fpenv_leave(env);
    return st;
}

mxp_status mxp_take_into(mxp_array *out, const mxp_array *table, const mxp_array *indices, int axis)
{
    return take_into("mxp_take_into", out, table, indices, axis);
}

mxp_status mxp_take(mxp_array **out, const mxp_array *table, const mxp_array *indices, int axis,
                    mxp_dtype out_dtype)
{
    const char *fn = "mxp_take";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    int nd, ax = axis;
    int64_t shape[MXP_MAXDIMS];
    mxp_status st = check_take(fn, table, indices, &ax);
    if (st == MXP_OK)
        st = take_shape(fn, table, indices, ax, &nd, shape);
    if (st == MXP_OK && out_dtype && !mxp_dtype_is_valid(out_dtype))
        st = mxp_error(MXP_ERR_INVALID_DTYPE, "%s: out_dtype %d is not a valid mxp_dtype", fn, (int)out_dtype);
    mxp_array *r = NULL;
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, out_dtype ? out_dtype : table->dtype, nd, shape);
    if (st == MXP_OK)
        st = take_into(fn, r, table, indices, axis);
    return nn_give_out(out, r, st);
}

/* ---- rows with scales ------------------------------------------------------ */

static mxp_status check_scaled(const char *fn, const mxp_array *table, const mxp_array *scales,
                               const mxp_array *indices)
{
    int axis = 0;
    mxp_status st = check_take(fn, table, indices, &axis);
    if (st == MXP_OK)
        st = nn_check_input(fn, "scales", scales);
    if (st != MXP_OK)
        return st;
    if (table->ndim != 2)
        return mxp_error(MXP_ERR_SHAPE, "%s: the table has %d dimensions, not 2 (rows, d)", fn, table->ndim);
    if (scales->ndim != 1 || scales->shape[0] != table->shape[0])
        return mxp_error(MXP_ERR_SHAPE, "%s: %lld scales are needed (one per table row), a 1-d array", fn,
                         (long long)table->shape[0]);
    return MXP_OK;
}

static mxp_status scaled_into(const char *fn, mxp_array *out, const mxp_array *table, const mxp_array *scales,
                              const mxp_array *indices)
{
    mxp_status st = nn_check_input(fn, "out", out);
    if (st == MXP_OK)
        st = check_scaled(fn, table, scales, indices);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", out->dtype);
    if (st != MXP_OK)
        return st;
    const int64_t rows = table->shape[0];
    double *s = mxp_malloc((size_t)(rows ? rows : 1) * sizeof(double));
    if (!s)
        return mxp_error(MXP_ERR_NO_MEMORY, "%s: no memory for %lld scales", fn, (long long)rows);
    const mxp_fpenv env = mxp_fpenv_enter();
    nn_load(s, scales->data, scales->dtype, nn_step(scales), rows);
    st = take_in_env(fn, out, table, indices, 0, s);
    mxp_fpenv_leave(env);
    mxp_free(s);
    return st;
}

mxp_status mxp_take_scaled_into(mxp_array *out, const mxp_array *table, const mxp_array *scales,
                                const mxp_array *indices)
{
    return scaled_into("mxp_take_scaled_into", out, table, scales, indices);
}

mxp_status mxp_take_scaled(mxp_array **out, const mxp_array *table, const mxp_array *scales,
                           const mxp_array *indices, mxp_dtype out_dtype)
{
    const char *fn = "mxp_take_scaled";
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    int nd;
    int64_t shape[MXP_MAXDIMS];
    const mxp_dtype dt = out_dtype ? out_dtype : MXP_F32;
    mxp_status st = check_scaled(fn, table, scales, indices);
    if (st == MXP_OK)
        st = nn_check_float(fn, "out", dt);
    if (st == MXP_OK)
        st = take_shape(fn, table, indices, 0, &nd, shape);
    mxp_array *r = NULL;
    if (st == MXP_OK)
        st = mxp_array_new_owner(&r, dt, nd, shape);
    if (st == MXP_OK)
        st = scaled_into(fn, r, table, scales, indices);
    return nn_give_out(out, r, st);
}
