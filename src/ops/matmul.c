/* mxp_matmul: NumPy's matmul on arrays, as calls of mxp_gemm over the
 * broadcast batch axes.
 *
 * Each operand matrix is handed to mxp_gemm where it lies when its layout
 * allows: row-major (last-axis stride = itemsize, lda = the other stride)
 * or column-major (second-to-last stride = itemsize: MXP_TRANS with the
 * last-axis stride as lda), which covers C- and F-ordered matrices,
 * transposed views and row slices.  Anything else (negative or zero
 * strides in the matrix axes, element steps, unaligned data) is copied to a
 * C-contiguous temporary first; so is an input that overlaps the output.
 * When B is the same matrix for the whole batch and the rows of A and C
 * follow each other at one stride, the batch is folded into M: one GEMM
 * that packs B once. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "array/array-internal.h"
#include "core/abi.h"
#include "core/dtype-internal.h"
#include "core/alloc-internal.h"
#include "core/error.h"
#include "core/fpenv.h"
#include "core/profile-internal.h"
#include "core/threads-internal.h"
#include "gemm/gemm-internal.h"
#include "mxp/ops.h"
#include "mxp/threads.h"

/* ---- one operand as mxp_gemm sees it ------------------------------------ */

/* A stack of matrices: the array it lies in (kept for copies), the matrix
 * axes (rows x cols as the operand, before any transposition) and the byte
 * strides of the result's batch axes (0 where the operand is broadcast). */
typedef struct operand {
    const mxp_array *arr; /* the caller's array or a copy (owned if copy) */
    mxp_array *copy;
    int64_t rows, cols;   /* as the operand: A m x k, B k x n, C m x n */
    int64_t rs, cs;       /* byte strides of rows and columns */
    int64_t bs[MXP_MAXDIMS];
    mxp_trans trans;
    size_t ld;
} operand;

/* The matrix axes of x as a (promote 1-d: 'r' a row (1, k), 'c' a column
 * (k, 1); 0 for a >= 2-d array). */
static void matrix_axes(operand *o, const mxp_array *x, char promote)
{
    o->arr = x;
    if (promote == 'r') {
        o->rows = 1, o->cols = x->shape[0], o->rs = 0, o->cs = x->strides[0];
    } else if (promote == 'c') {
        o->rows = x->shape[0], o->cols = 1, o->rs = x->strides[0], o->cs = 0;
    } else {
        o->rows = x->shape[x->ndim - 2], o->cols = x->shape[x->ndim - 1];
        o->rs = x->strides[x->ndim - 2], o->cs = x->strides[x->ndim - 1];
    }
}

/* Can mxp_gemm read (or write, allow_trans false) an r x c matrix of
 * items of size sz with byte strides rs and cs where it lies?  Row-major
 * (cs = sz, ld = rs / sz) or column-major (rs = sz, MXP_TRANS, ld = cs /
 * sz), with ld at least the row; size-1 axes have no meaningful stride.
 * Sets *trans and *ld.  The one layout rule of mxp_matmul and
 * mxp_matmul_strided. */
static bool layout_of(int64_t r, int64_t c, int64_t rs, int64_t cs, int64_t sz, bool aligned, bool allow_trans,
                      mxp_trans *trans, size_t *ld)
{
    if (r == 0 || c == 0) { /* nothing is read or written */
        *trans = MXP_NO_TRANS;
        *ld = (size_t)(c > 1 ? c : 1);
        return true;
    }
    if (!aligned)
        return false;
    if ((c == 1 || cs == sz) && (r == 1 || (rs > 0 && rs % sz == 0 && rs / sz >= c))) {
        *trans = MXP_NO_TRANS;
        *ld = (size_t)(r == 1 ? c : rs / sz);
        return true;
    }
    if (allow_trans && (r == 1 || rs == sz) && (c == 1 || (cs > 0 && cs % sz == 0 && cs / sz >= r))) {
        *trans = MXP_TRANS;
        *ld = (size_t)(c == 1 ? r : cs / sz);
        return true;
    }
    return false;
}

static bool gemm_layout(operand *o, bool allow_trans)
{
    return layout_of(o->rows, o->cols, o->rs, o->cs, (int64_t)mxp_dtype_itemsize(o->arr->dtype),
                     (o->arr->flags & MXP_ARRAY_ALIGNED) != 0, allow_trans, &o->trans, &o->ld);
}

/* The byte strides of x's batch axes (its first nb_x axes) over the
 * result's nb batch axes, right-aligned, 0 where broadcast. */
static void batch_strides(operand *o, int nb_x, int nb, const int64_t *batch)
{
    const mxp_array *x = o->arr;
    for (int i = 0; i < nb; i++) {
        int j = i - (nb - nb_x);
        o->bs[i] = j >= 0 && x->shape[j] == batch[i] ? x->strides[j] : 0;
    }
}

/* Do the batch axes step through matrices that follow each other at one
 * stride?  Then *ld is the row stride of the whole stack seen as one tall
 * row-major matrix (m rows per batch element). */
static bool stacks_rows(const operand *o, int nb, const int64_t *batch, int64_t m, size_t *ld)
{
    if (o->trans != MXP_NO_TRANS)
        return false;
    const int64_t sz = (int64_t)mxp_dtype_itemsize(o->arr->dtype);
    int64_t row = (int64_t)o->ld * sz;
    if (m == 1) { /* the row stride comes from the innermost batch axis that moves */
        int i = nb - 1;
        while (i >= 0 && batch[i] == 1)
            i--;
        if (i < 0)
            return false;
        row = o->bs[i];
        if (row <= 0 || row % sz || row / sz < o->cols)
            return false;
    }
    int64_t want = row * m;
    for (int i = nb - 1; i >= 0; i--) {
        if (batch[i] == 1)
            continue;
        if (o->bs[i] != want)
            return false;
        want *= batch[i];
    }
    *ld = (size_t)(row / sz);
    return true;
}

/* ---- matmul ------------------------------------------------------------ */

/* The bias is an array of bias_len values here, like every other operand:
 * the length is required and must cover m (per row) or n (per column). */
static mxp_status check_bias_len(const mxp_gemm_opts *o, int64_t m, int64_t n)
{
    const bool per_row = o->bias_kind == MXP_BIAS_PER_ROW;
    const int64_t need = per_row ? m : n;
    if (o->bias_len == 0)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "matmul: opts->bias needs opts->bias_len, the number of values at "
                                                   "bias (%lld: one per %s)", (long long)need,
                         per_row ? "row of the result" : "column of the result");
    if (o->bias_len < (uint64_t)need)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "matmul: bias_len = %zu, but a bias per %s needs %lld values",
                         o->bias_len, per_row ? "row" : "column", (long long)need);
    return MXP_OK;
}

/* NumPy's matmul shape rules (mxp_matmul_shape, without the argument checks). */
static mxp_status result_shape(int *nd, int64_t *shape, int nda, const int64_t *sa, int ndb, const int64_t *sb)
{
    if (nda == 0 || ndb == 0)
        return mxp_error(MXP_ERR_SHAPE, "matmul: %s is 0-d; matmul needs at least 1 dimension (multiply scalars "
                                        "with mxp_binary)", nda == 0 ? "a" : "b");
    const int64_t m = nda == 1 ? 1 : sa[nda - 2], k = sa[nda - 1];
    const int64_t kb = ndb == 1 ? sb[0] : sb[ndb - 2], n = ndb == 1 ? 1 : sb[ndb - 1];
    char ta[256], tb[256];
    if (kb != k) {
        mxp_format_shape(ta, sizeof ta, nda, sa);
        mxp_format_shape(tb, sizeof tb, ndb, sb);
        return mxp_error(MXP_ERR_SHAPE, "matmul: a has shape %s and b %s: k %lld != %lld", ta, tb, (long long)k,
                         (long long)kb);
    }
    /* The batch axes broadcast (NumPy rules). */
    const int nba = nda > 2 ? nda - 2 : 0, nbb = ndb > 2 ? ndb - 2 : 0;
    const int nb = nba > nbb ? nba : nbb;
    for (int i = 0; i < nb; i++) {
        int ia = i - (nb - nba), ib = i - (nb - nbb);
        int64_t x = ia >= 0 ? sa[ia] : 1, y = ib >= 0 ? sb[ib] : 1;
        if (x != y && x != 1 && y != 1) {
            char ba[256], bb[256];
            mxp_format_shape(ta, sizeof ta, nda, sa);
            mxp_format_shape(tb, sizeof tb, ndb, sb);
            mxp_format_shape(ba, sizeof ba, nba, sa);
            mxp_format_shape(bb, sizeof bb, nbb, sb);
            return mxp_error(MXP_ERR_SHAPE, "matmul: a has shape %s and b %s: the batch axes %s and %s are not "
                                            "broadcastable", ta, tb, ba, bb);
        }
        shape[i] = x == 1 ? y : x;
    }
    *nd = nb; /* the result: batch, then m unless a is 1-d, n unless b is 1-d */
    if (nda > 1)
        shape[(*nd)++] = m;
    if (ndb > 1)
        shape[(*nd)++] = n;
    return MXP_OK;
}

mxp_status mxp_matmul_shape(int *ndim_out, int64_t *shape_out, int ndim_a, const int64_t *shape_a, int ndim_b,
                            const int64_t *shape_b)
{
    if (!ndim_out || !shape_out || (ndim_a > 0 && !shape_a) || (ndim_b > 0 && !shape_b))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_matmul_shape: a NULL argument");
    if (ndim_a < 0 || ndim_a > MXP_MAXDIMS || ndim_b < 0 || ndim_b > MXP_MAXDIMS)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_matmul_shape: ndim %d and %d: 0 to %d each", ndim_a, ndim_b,
                         MXP_MAXDIMS);
    for (int i = 0; i < ndim_a + ndim_b; i++)
        if ((i < ndim_a ? shape_a[i] : shape_b[i - ndim_a]) < 0)
            return mxp_error(MXP_ERR_SHAPE, "mxp_matmul_shape: a negative dimension");
    return result_shape(ndim_out, shape_out, ndim_a, shape_a, ndim_b, shape_b);
}

/* A batch of GEMMs, one per index of the batch axes (C order): the
 * operands, the options (index_offset moved per matrix: stochastic
 * rounding numbers C's elements in C order), and for the threads the
 * first failure (its status and sentence, which the failing thread's
 * mxp_last_error holds). */
typedef struct batch_job {
    const operand *A, *B, *C;
    int nb;
    const int64_t *shape;
    size_t m, n, k;
    mxp_dtype rt;
    mxp_gemm_opts o;
    uint64_t offset0, per;
    int64_t total;
    atomic_int failed;
    mxp_status st;
    char msg[256];
} batch_job;

/* Matrices lo .. hi of the batch. */
static mxp_status batch_range(const batch_job *j, int64_t lo, int64_t hi)
{
    int64_t idx[MXP_MAXDIMS] = { 0 }, r = lo;
    const char *pa = j->A->arr->data, *pb = j->B->arr->data;
    char *pc = j->C->arr->data;
    for (int ax = j->nb - 1; ax >= 0; ax--) { /* lo's index */
        idx[ax] = r % j->shape[ax];
        r /= j->shape[ax];
        pa += j->A->bs[ax] * idx[ax], pb += j->B->bs[ax] * idx[ax], pc += j->C->bs[ax] * idx[ax];
    }
    mxp_gemm_opts o = j->o;
    mxp_status st = MXP_OK;
    const bool held = mxp_workspace_hold(); /* one workspace for the thread's products */
    for (int64_t t = lo; t < hi && st == MXP_OK; t++) {
        o.convert.index_offset = j->offset0 + (uint64_t)t * j->per; /* C's elements in C order */
        st = mxp_gemm(j->A->trans, j->B->trans, j->m, j->n, j->k, 1.0, pa, j->A->arr->dtype, j->A->ld, pb,
                      j->B->arr->dtype, j->B->ld, 0.0, pc, j->rt, j->C->ld, &o);
        for (int ax = j->nb - 1; ax >= 0; ax--) { /* next batch index, C order */
            pa += j->A->bs[ax], pb += j->B->bs[ax], pc += j->C->bs[ax];
            if (++idx[ax] < j->shape[ax])
                break;
            pa -= j->A->bs[ax] * j->shape[ax], pb -= j->B->bs[ax] * j->shape[ax], pc -= j->C->bs[ax] * j->shape[ax];
            idx[ax] = 0;
        }
    }
    mxp_workspace_unhold(held);
    return st;
}

/* mxp_parallel's share: matrices 1 .. total split evenly (matrix 0 ran first). */
static void batch_share(void *ctx, int t, int nthreads)
{
    batch_job *j = ctx;
    size_t lo, hi;
    mxp_share_range((size_t)j->total - 1, 1, t, nthreads, &lo, &hi);
    if (lo >= hi)
        return;
    const mxp_status st = batch_range(j, (int64_t)lo + 1, (int64_t)hi + 1);
    int none = 0;
    if (st != MXP_OK && atomic_compare_exchange_strong(&j->failed, &none, 1)) {
        j->st = st;
        snprintf(j->msg, sizeof j->msg, "%s", mxp_last_error());
    }
}

/* Threads for the batch: one unless each product is below the GEMM's own
 * threshold for threads (4 M multiply-adds: src/gemm/driver.c) and there
 * are enough of them; counters (convert.flags) keep one thread, as
 * mxp_gemm's own do. */
static int threads_for_batch(const batch_job *j, int64_t total)
{
    const double each = (double)j->m * (double)j->n * (double)j->k;
    int t = mxp_get_num_threads();
    if (j->o.convert.flags || each >= 4e6 || each * (double)(total - 1) < 1e6)
        return 1;
    return (int64_t)t > total - 1 ? (int)(total - 1) : t;
}

static mxp_status matmul(mxp_array **made, mxp_array *given, const mxp_array *a, const mxp_array *b,
                         const mxp_gemm_opts *opts)
{
    mxp_status st = mxp_require_array(a, "mxp_matmul: a");
    if (st == MXP_OK)
        st = mxp_require_array(b, "mxp_matmul: b");
    if (st == MXP_OK)
        st = mxp_gemm_refuse_a_rows("mxp_matmul", opts);
    if (st != MXP_OK)
        return st;
    int64_t shape[MXP_MAXDIMS], total = 1;
    int nd;
    if ((st = result_shape(&nd, shape, a->ndim, a->shape, b->ndim, b->shape)) != MXP_OK)
        return st;
    char sa[256], sb[256];
    operand A = { 0 }, B = { 0 }, C = { 0 };
    matrix_axes(&A, a, a->ndim == 1 ? 'r' : 0);
    matrix_axes(&B, b, b->ndim == 1 ? 'c' : 0);
    const int64_t m = A.rows, k = A.cols, n = B.cols;
    /* the batch axes: saturated, an output that large is refused when it is made */
    const int nba = a->ndim > 2 ? a->ndim - 2 : 0, nbb = b->ndim > 2 ? b->ndim - 2 : 0;
    const int nb = nba > nbb ? nba : nbb;
    for (int i = 0; i < nb; i++)
        total = total == 0 || shape[i] == 0 ? 0 : total > INT64_MAX / shape[i] ? INT64_MAX : total * shape[i];

    /* uint8/int8 by int8 is the quantized product: exact int32 sums, as
     * mxp_gemm computes them (NumPy's promotion would say int16) */
    const bool quantized = (a->dtype == MXP_U8 || a->dtype == MXP_S8) && b->dtype == MXP_S8;
    const mxp_dtype rt = given ? given->dtype : quantized ? MXP_S32 : mxp_promote_types(a->dtype, b->dtype);
    if (rt == MXP_DTYPE_INVALID)
        return mxp_error(MXP_ERR_INVALID_DTYPE, "matmul: %s and %s have no common dtype", mxp_dtype_name(a->dtype),
                         mxp_dtype_name(b->dtype));
    if (given) {
        if (!(given->flags & MXP_ARRAY_WRITEABLE))
            return mxp_error(MXP_ERR_READONLY, "matmul: the output array is read-only");
        if (given->ndim != nd || memcmp(given->shape, shape, (size_t)nd * sizeof shape[0])) {
            mxp_format_shape(sa, sizeof sa, given->ndim, given->shape);
            mxp_format_shape(sb, sizeof sb, nd, shape);
            return mxp_error(MXP_ERR_SHAPE, "matmul: the output array has shape %s, the result %s", sa, sb);
        }
    }
    /* Dtypes and options as mxp_gemm judges them, before anything is made. */
    const size_t ldn = (size_t)(n > 1 ? n : 1);
    st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 0, (size_t)n, 0, 1.0, NULL, a->dtype, 1, NULL, b->dtype, ldn, 0.0,
                  NULL, rt, ldn, opts);
    if (st == MXP_OK && opts && opts->bias)
        st = check_bias_len(opts, m, n);
    if (st != MXP_OK)
        return st;

    mxp_array *out = given, *tmp = NULL;
    if (!given)
        st = mxp_array_new_owner(&out, rt, nd, shape);
    /* Inputs: copied when they overlap the output or mxp_gemm cannot read them. */
    operand *in[2] = { &A, &B };
    const mxp_array *orig[2] = { a, b };
    for (int i = 0; i < 2 && st == MXP_OK; i++) {
        const mxp_array *x = orig[i];
        /* (astype, not ascontiguous: an unaligned C-contiguous array must be copied too) */
        if ((given && mxp_arrays_may_overlap(given, x)) || !gemm_layout(in[i], true))
            st = mxp_array_astype(&in[i]->copy, x, x->dtype, NULL);
        if (st == MXP_OK && in[i]->copy) {
            matrix_axes(in[i], in[i]->copy, x->ndim == 1 ? (i ? 'c' : 'r') : 0);
            if (!gemm_layout(in[i], true)) /* a new C-contiguous array: never */
                st = mxp_error(MXP_ERR_INVALID_ARGUMENT, "matmul: internal error: a copy mxp_gemm cannot read");
        }
    }
    /* The output: written in place when row-major, else through a temporary. */
    if (st == MXP_OK) {
        C.arr = out;
        C.rows = m, C.cols = n;
        C.rs = a->ndim > 1 ? out->strides[nb] : 0;
        C.cs = b->ndim > 1 ? out->strides[nd - 1] : 0;
        batch_strides(&C, nb, nb, shape);
        bool ok = gemm_layout(&C, false);
        for (int i = 0; i < nb && ok; i++)
            ok = shape[i] == 1 || C.bs[i] != 0; /* a batch axis that repeats one matrix */
        if (!ok) {
            st = mxp_array_new_owner(&tmp, rt, nd, shape);
            if (st == MXP_OK) {
                C.arr = tmp;
                C.rs = a->ndim > 1 ? tmp->strides[nb] : 0;
                C.cs = b->ndim > 1 ? tmp->strides[nd - 1] : 0;
                batch_strides(&C, nb, nb, shape);
                gemm_layout(&C, false);
            }
        }
    }
    if (st == MXP_OK && m > 0 && n > 0 && total > 0) {
        batch_strides(&A, nba, nb, shape);
        batch_strides(&B, nbb, nb, shape);
        mxp_gemm_opts o = { 0 };
        if (opts)
            o = *opts;
        const uint64_t offset0 = o.convert.index_offset;
        const uint64_t per = (uint64_t)m * (uint64_t)n;
        /* One GEMM when B is one matrix for the whole batch and the rows of A
         * and C follow each other (not with a bias per row of m values). */
        bool b_shared = true;
        for (int i = 0; i < nb; i++)
            b_shared = b_shared && (B.bs[i] == 0 || shape[i] == 1);
        size_t lda = 0, ldc = 0;
        const bool per_row = opts && opts->bias_kind == MXP_BIAS_PER_ROW;
        if (total > 1 && b_shared && !per_row && stacks_rows(&A, nb, shape, m, &lda) &&
            stacks_rows(&C, nb, shape, m, &ldc)) {
            st = mxp_gemm(MXP_NO_TRANS, B.trans, (size_t)(total * m), (size_t)n, (size_t)k, 1.0, A.arr->data,
                          A.arr->dtype, lda, B.arr->data, B.arr->dtype, B.ld, 0.0, C.arr->data, rt, ldc, &o);
        } else {
            batch_job j = { &A, &B, &C, nb, shape, (size_t)m, (size_t)n, (size_t)k, rt, o, offset0, per,
                            total, 0, MXP_OK, { 0 } };
            /* the first matrix here (it judges the arguments), the rest over the threads when each
               product is below the GEMM's own threshold for threads (MiniLM's attention: 384 products
               of 33 x 32 x 33 a call) */
            st = batch_range(&j, 0, 1);
            const int threads = threads_for_batch(&j, total);
            if (st == MXP_OK && threads > 1) {
                mxp_parallel(threads, batch_share, &j);
                st = j.st;
                if (st != MXP_OK)
                    st = mxp_error(st, "%s", j.msg);
            } else if (st == MXP_OK) {
                st = batch_range(&j, 1, total);
            }
        }
    }
    if (st == MXP_OK && tmp)
        mxp_array_copy_rows(out, tmp, NULL); /* same dtype: exact */
    mxp_array_free(A.copy);
    mxp_array_free(B.copy);
    mxp_array_free(tmp);
    if (!given) {
        if (st == MXP_OK)
            *made = out;
        else
            mxp_array_free(out);
    }
    return st;
}

static mxp_status matmul_entry(mxp_array **out, const mxp_array *a, const mxp_array *b, const mxp_gemm_opts *opts)
{
    MXP_ABI_IN_OUT(opts, gemm_opts, "mxp_matmul", out);
    if (!out)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_matmul: out is NULL");
    *out = NULL;
    const mxp_fpenv env = mxp_fpenv_enter();
    const mxp_status st = matmul(out, NULL, a, b, opts);
    mxp_fpenv_leave(env);
    return st;
}

static mxp_status matmul_into_entry(mxp_array *out, const mxp_array *a, const mxp_array *b, const mxp_gemm_opts *opts)
{
    MXP_ABI_IN(opts, gemm_opts, "mxp_matmul_into");
    mxp_status st = mxp_require_array(out, "mxp_matmul_into: out");
    if (st != MXP_OK)
        return st;
    const mxp_fpenv env = mxp_fpenv_enter();
    st = matmul(NULL, out, a, b, opts);
    mxp_fpenv_leave(env);
    return st;
}

/* ---- one matrix by byte strides ---------------------------------------- */

/* One operand of mxp_matmul_strided: in place, or a C-ordered copy in tmp. */
typedef struct strided {
    char *p;
    mxp_dtype dt;
    int64_t rows, cols, rs, cs;
    mxp_trans trans;
    size_t ld;
    char *tmp;
} strided;

/* x's elements into its C-ordered copy, or (back) the copy into x. */
static void copy_rows(const strided *x, bool back)
{
    const size_t sz = mxp_dtype_itemsize(x->dt);
    for (int64_t i = 0; i < x->rows; i++) {
        char *row = x->tmp + (size_t)(i * x->cols) * sz, *at = x->p + i * x->rs;
        if (back)
            mxp_convert_strided(at, x->dt, (ptrdiff_t)x->cs, row, x->dt, (ptrdiff_t)sz, (size_t)x->cols, NULL);
        else
            mxp_convert_strided(row, x->dt, (ptrdiff_t)sz, at, x->dt, (ptrdiff_t)x->cs, (size_t)x->cols, NULL);
    }
}

/* x read (or written) where it lies, or through a copy it gets here. */
static mxp_status place(strided *x, bool in_place, const char *name)
{
    if (in_place)
        return MXP_OK;
    const size_t sz = mxp_dtype_itemsize(x->dt);
    if ((uint64_t)x->rows > SIZE_MAX / sz / (uint64_t)x->cols)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_matmul_strided: a copy of %s does not fit", name);
    x->tmp = mxp_malloc((size_t)x->rows * (size_t)x->cols * sz);
    if (!x->tmp)
        return mxp_error(MXP_ERR_NO_MEMORY, "mxp_matmul_strided: no memory for a copy of %s", name);
    x->trans = MXP_NO_TRANS;
    x->ld = (size_t)x->cols;
    return MXP_OK;
}

/* The byte offsets an r x c matrix with strides rs, cs reaches from its
 * first element fit a ptrdiff_t (r, c >= 1). */
static bool offsets_fit(int64_t r, int64_t c, ptrdiff_t rs, ptrdiff_t cs)
{
    const uint64_t ar = rs < 0 ? (uint64_t)0 - (uint64_t)rs : (uint64_t)rs;
    const uint64_t ac = cs < 0 ? (uint64_t)0 - (uint64_t)cs : (uint64_t)cs;
    const uint64_t max = PTRDIFF_MAX;
    if ((r > 1 && ar > max / (uint64_t)(r - 1)) || (c > 1 && ac > max / (uint64_t)(c - 1)))
        return false;
    return (uint64_t)(r - 1) * ar <= max - (uint64_t)(c - 1) * ac;
}

/* C^T = B^T A^T gives C's elements as mxp_gemm of A B would, with these
 * options: nothing that depends on which operand is A (no bias, scales or
 * zero points, float operands) or on the order of C's elements (no
 * stochastic rounding), and neither product of one row, which takes the
 * GEMV kernels (src/gemm/gemv.c: another order of the sums). */
static bool may_flip(const mxp_gemm_opts *o, mxp_dtype at, mxp_dtype bt, size_t m, size_t n)
{
    return m > 1 && n > 1 && mxp_is_float_dtype(at) && mxp_is_float_dtype(bt) &&
           (!o || (!o->bias && !o->scales && !o->a_zero_point && !o->b_zero_point && !o->c_zero_point &&
                   o->convert.rounding != MXP_ROUND_STOCHASTIC));
}

static mxp_trans flip(mxp_trans t) { return t == MXP_TRANS ? MXP_NO_TRANS : MXP_TRANS; }

static mxp_status matmul_strided(size_t m, size_t n, size_t k, strided *A, strided *B, strided *C,
                                 const mxp_gemm_opts *opts)
{
    /* dtypes and options as mxp_gemm judges them */
    const size_t ldn = n > 1 ? n : 1;
    mxp_status st = mxp_gemm(MXP_NO_TRANS, MXP_NO_TRANS, 0, n, 0, 1.0, NULL, A->dt, 1, NULL, B->dt, ldn, 0.0, NULL,
                             C->dt, ldn, opts);
    if (st == MXP_OK)
        st = mxp_gemm_refuse_a_rows("mxp_matmul_strided", opts);
    if (st != MXP_OK || m == 0 || n == 0)
        return st;
    if ((k && (!A->p || !B->p)) || !C->p)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "mxp_matmul_strided: a, b or c is NULL");
    if (m > INT64_MAX || n > INT64_MAX || k > INT64_MAX)
        return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_matmul_strided: m, n or k beyond INT64_MAX");
    A->rows = (int64_t)m, A->cols = (int64_t)k, B->rows = (int64_t)k, B->cols = (int64_t)n;
    C->rows = (int64_t)m, C->cols = (int64_t)n;
    const strided *all[3] = { A, B, C };
    for (int i = 0; i < 3; i++)
        if (all[i]->rows && all[i]->cols && !offsets_fit(all[i]->rows, all[i]->cols, all[i]->rs, all[i]->cs))
            return mxp_error(MXP_ERR_SIZE_OVERFLOW, "mxp_matmul_strided: %c's strides (%lld, %lld) for %lld x %lld "
                             "overflow the address space", "abc"[i], (long long)all[i]->rs, (long long)all[i]->cs,
                             (long long)all[i]->rows, (long long)all[i]->cols);
    const int64_t sa = (int64_t)mxp_dtype_itemsize(A->dt), sb = (int64_t)mxp_dtype_itemsize(B->dt),
                  sc = (int64_t)mxp_dtype_itemsize(C->dt);
    st = place(A, layout_of(A->rows, A->cols, A->rs, A->cs, sa, true, true, &A->trans, &A->ld), "a");
    if (st == MXP_OK)
        st = place(B, layout_of(B->rows, B->cols, B->rs, B->cs, sb, true, true, &B->trans, &B->ld), "b");
    bool in_place = layout_of(C->rows, C->cols, C->rs, C->cs, sc, true, true, &C->trans, &C->ld);
    if (st == MXP_OK)
        st = place(C, in_place && (C->trans == MXP_NO_TRANS || may_flip(opts, A->dt, B->dt, m, n)), "c");
    if (st != MXP_OK)
        return st;
    if (A->tmp)
        copy_rows(A, false);
    if (B->tmp)
        copy_rows(B, false);
    /* k = 0: nothing is read (and a misaligned empty operand is not handed on) */
    const char *pa = !k ? NULL : A->tmp ? A->tmp : A->p, *pb = !k ? NULL : B->tmp ? B->tmp : B->p;
    char *pc = C->tmp ? C->tmp : C->p;
    if (C->trans == MXP_NO_TRANS)
        st = mxp_gemm(A->trans, B->trans, m, n, k, 1.0, pa, A->dt, A->ld, pb, B->dt, B->ld, 0.0, pc, C->dt, C->ld, opts);
    else /* a column-major C: C^T = B^T A^T, row-major */
        st = mxp_gemm(flip(B->trans), flip(A->trans), n, m, k, 1.0, pb, B->dt, B->ld, pa, A->dt, A->ld, 0.0, pc,
                      C->dt, C->ld, opts);
    if (st == MXP_OK && C->tmp)
        copy_rows(C, true);
    return st;
}

mxp_status mxp_matmul_strided(size_t m, size_t n, size_t k, const void *a, mxp_dtype a_type, ptrdiff_t a_rs,
                              ptrdiff_t a_cs, const void *b, mxp_dtype b_type, ptrdiff_t b_rs, ptrdiff_t b_cs, void *c,
                              mxp_dtype c_type, ptrdiff_t c_rs, ptrdiff_t c_cs, const mxp_gemm_opts *opts)
{
    MXP_ABI_IN(opts, gemm_opts, "mxp_matmul_strided");
    strided A = { (char *)(uintptr_t)a, a_type, 0, 0, a_rs, a_cs, MXP_NO_TRANS, 1, NULL };
    strided B = { (char *)(uintptr_t)b, b_type, 0, 0, b_rs, b_cs, MXP_NO_TRANS, 1, NULL };
    strided C = { c, c_type, 0, 0, c_rs, c_cs, MXP_NO_TRANS, 1, NULL };
    const mxp_status st = matmul_strided(m, n, k, &A, &B, &C, opts);
    mxp_free(A.tmp);
    mxp_free(B.tmp);
    mxp_free(C.tmp);
    return st;
}

/* ---- the entry points, profiled (src/core/profile-internal.h) ---------- */

mxp_status mxp_matmul(mxp_array **out, const mxp_array *a, const mxp_array *b, const mxp_gemm_opts *opts)
{
    MXP_PROF_RETURN_AFTER("matmul", matmul_entry(out, a, b, opts),
                          mxp_prof_array_bytes(a) + mxp_prof_array_bytes(b),
                          mxp_prof_array_bytes(a) + mxp_prof_array_bytes(b) + mxp_prof_array_bytes(mxp_prof_made(out)),
                          2.0 * mxp_prof_size(mxp_prof_made(out)) * (a && a->ndim ? (double)a->shape[a->ndim - 1] : 0));
}

mxp_status mxp_matmul_into(mxp_array *out, const mxp_array *a, const mxp_array *b, const mxp_gemm_opts *opts)
{
    MXP_PROF_RETURN_AFTER("matmul", matmul_into_entry(out, a, b, opts),
                          mxp_prof_array_bytes(a) + mxp_prof_array_bytes(b),
                          mxp_prof_array_bytes(a) + mxp_prof_array_bytes(b) + mxp_prof_array_bytes(out),
                          2.0 * mxp_prof_size(out) * (a && a->ndim ? (double)a->shape[a->ndim - 1] : 0));
}
