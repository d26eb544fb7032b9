/* Internal: what the neural-network operations share (src/nn/).  Each
 * operation is a function of one row (the last axis of views that put the
 * axis it works along last): the row is widened exactly to float64
 * (nn_load), computed in float64 and rounded once into the output
 * (nn_store).  Rows are independent and their sums have one fixed order,
 * so the rows of a large operation are split over the thread pool without
 * changing a bit. */
#ifndef MXP_NN_INTERNAL_H
#define MXP_NN_INTERNAL_H

#include "array/array-internal.h"
#include "core/dispatch.h"
#include "kernels/norm-kernels.h"
#include "kernels/expshift.h"
#include "kernels/softmax-kernels.h"
#include "mxp/nn.h"

enum { NN_MAXARR = 5 };

/* Up to NN_MAXARR arrays walked together over their leading nd axes (the
 * same shape in each); row r is the r-th in C order of those axes. */
typedef struct nn_rows {
    int nd;
    int narr;
    int64_t nrows;
    int64_t shape[MXP_MAXDIMS];
    char *base[NN_MAXARR];
    int64_t strides[NN_MAXARR][MXP_MAXDIMS];
} nn_rows;

/* arrs[k] may be NULL (its pointer stays NULL). */
void nn_rows_init(nn_rows *r, int nd, const mxp_array *const *arrs, int narr);
/* p[k] = the first element of row i of array k. */
void nn_row_ptrs(const nn_rows *r, int64_t i, char **p);

/* fn(ctx, row pointers, scratch, row index) for every row; scratch is
 * scratch_doubles of the thread's own.  Threads when the rows hold at
 * least a few tens of thousands of elements (elems_per_row each) and
 * parallel is true.  MXP_ERR_NO_MEMORY (nothing run) when the scratch
 * cannot be had.  Each thread's share ends with a store fence: fn may
 * write by streaming stores. */
typedef void nn_row_fn(const void *ctx, char **p, double *scratch, int64_t row);
mxp_status nn_run_rows(const nn_rows *r, int64_t elems_per_row, size_t scratch_doubles, bool parallel,
                       nn_row_fn *fn, const void *ctx);
/* The same in blocks of up to block (at most NN_MAX_BLOCK) consecutive
 * rows of one thread's share: fn(ctx, p, count, scratch, row0), p[k] the
 * pointers of row row0 + k (row kernels that interleave rows). */
enum { NN_MAX_BLOCK = 8 };
typedef void nn_block_fn(const void *ctx, char *(*p)[NN_MAXARR], int64_t count, double *scratch, int64_t row0);
mxp_status nn_run_row_blocks(const nn_rows *r, int64_t elems_per_row, size_t scratch_doubles, bool parallel,
                             int block, nn_block_fn *fn, const void *ctx);

/* Whether an operation that writes out (and reads about as much), and
 * sweeps `swept` bytes more (take: its table), moves
 * mxp_stream_threshold() bytes or more (mxp/alloc.h; the conversions'
 * rule, kernels/stream-loop.h): its rows are then written by streaming
 * stores where its kernels can (take, the float32 norms). */
bool nn_streams(const mxp_array *out, uint64_t swept);

/* Rows of contiguous, aligned elements of dtype dt (for the row kernels):
 * v viewed with the row's axis last. */
bool nn_dense_rows(const mxp_array *v, mxp_dtype dt);

/* n elements at p (byte step) of dtype dt, widened exactly to float64
 * (bool: 0 or 1; integers beyond 2^53 rounded); and n doubles rounded once
 * (nearest even) into dt: the bits of mxp_convert, float32, bfloat16 and
 * float16 by plain C loops of their own (test_nn_store compares). */
void nn_load(double *dst, const char *p, mxp_dtype dt, int64_t step, int64_t n);
void nn_store(char *p, mxp_dtype dt, int64_t step, const double *src, int64_t n);

/* n bfloat16 elements at p (byte step) into dst, and back: the strided
 * rows of the bfloat16 row kernels, gathered. */
void nn_gather16(uint16_t *dst, const char *p, int64_t step, int64_t n);
void nn_scatter16(char *p, int64_t step, const uint16_t *src, int64_t n);

/* Sums of a row in one fixed order, whatever the ISA level and thread
 * count: mxp_sum8's (kernels/sum8.h: eight running sums, folded
 * pairwise).  nn_sum: sum x; nn_dot: sum x y; nn_sumsq: sum (x - c)^2. */
double nn_sum(const double *x, int64_t n);
double nn_dot(const double *x, const double *y, int64_t n);
double nn_sumsq(const double *x, int64_t n, double c);

/* The row's dtype and byte step of an array viewed with the row last. */
static inline int64_t nn_step(const mxp_array *a)
{
    return a->ndim ? a->strides[a->ndim - 1] : 0;
}

/* The float32 and bfloat16 row kernels of layer / RMS norm for an ISA
 * level (never NULL: the scalar twins are rows), and the rows of their
 * lists for the tests (src/nn/nn-config.c). */
mxp_f32_norm_ukernel *nn_f32_norm_kernel(mxp_isa isa);
const mxp_kernel *nn_f32_norm_kernels(size_t *n);
mxp_bf16_norm_ukernel *nn_bf16_norm_kernel(mxp_isa isa);
const mxp_kernel *nn_bf16_norm_kernels(size_t *n);

/* exp(x - m) of softmax (src/kernels/f64-expshift/): the most capable row
 * for an ISA level, and the table for the tests. */
mxp_f64_expshift_ukernel *nn_f64_expshift_kernel(mxp_isa isa);
const mxp_kernel *nn_f64_expshift_kernels(size_t *n);
/* The float32 and bfloat16 row kernels of softmax and log_softmax, the
 * same way. */
mxp_f32_softmax_ukernel *nn_f32_softmax_kernel(mxp_isa isa);
const mxp_kernel *nn_f32_softmax_kernels(size_t *n);
mxp_bf16_softmax_ukernel *nn_bf16_softmax_kernel(mxp_isa isa);
const mxp_kernel *nn_bf16_softmax_kernels(size_t *n);

/* ---- checks --------------------------------------------------------------- */

/* requested, or in when it is a float type, else float64. */
mxp_dtype nn_out_dtype(mxp_dtype requested, mxp_dtype in);
/* MXP_ERR_INVALID_DTYPE / MXP_ERR_UNSUPPORTED unless dt is a float type. */
mxp_status nn_check_float(const char *fn, const char *what, mxp_dtype dt);
/* a (and its dtype) present and valid. */
mxp_status nn_check_input(const char *fn, const char *what, const mxp_array *a);
/* eps finite and >= 0. */
mxp_status nn_check_eps(const char *fn, double eps);
/* out's shape is (ndim, shape), else MXP_ERR_SHAPE naming both. */
mxp_status nn_check_out_shape(const char *fn, const mxp_array *out, int ndim, const int64_t *shape);

/* a and b of one shape, else MXP_ERR_SHAPE naming them. */
mxp_status nn_check_same_shape(const char *fn, const char *an, const mxp_array *a, const char *bn,
                               const mxp_array *b);

/* ---- outputs ------------------------------------------------------------- */

/* The array to compute into for out: out itself (a borrowed pointer),
 * or a new C-ordered temporary of out's shape and dtype when out
 * overlaps one of the n inputs (NULL entries skipped) other than element
 * for element, or when its last ncollapse axes (ncollapse > 1) do not
 * merge into one without a copy.  MXP_ERR_READONLY for a read-only out. */
mxp_status nn_out_begin(const char *fn, mxp_array *out, const mxp_array *const *in, int n, int ncollapse,
                        mxp_array **work);
/* The temporary (if any) copied into out when st is MXP_OK, and freed;
 * returns st (or the copy's failure). */
mxp_status nn_out_end(mxp_array *out, mxp_array *work, mxp_status st);

/* *out = made when st is MXP_OK, else made freed and *out NULL; st. */
mxp_status nn_give_out(mxp_array **out, mxp_array *made, mxp_status st);

/* The allocating form of an operation whose result has x's shape: *out
 * NULL first, x checked, dt (0: nn_out_dtype's) a float type, a new
 * C-ordered array filled by into(array, args). */
typedef mxp_status nn_into_fn(mxp_array *out, const void *args);
mxp_status nn_new_like(const char *fn, mxp_array **out, const mxp_array *x, mxp_dtype dt, nn_into_fn *into,
                       const void *args);

/* a with axis moved last (a view; a new reference). */
mxp_status nn_axis_last(mxp_array **v, const mxp_array *a, int axis);
/* a viewed as its first ndim - nlast axes and one of the last nlast
 * merged: a view where the strides allow it, else a C-ordered copy. */
mxp_status nn_collapse_last(mxp_array **v, const mxp_array *a, int nlast);

/* A block's rows for the bfloat16 norm and softmax kernels: x[k] from
 * p[k][xi] (float32 where f32, else bfloat16, no mask), y[k] = p[k][yi]. */
static inline void nn_narrow_block(char *(*p)[NN_MAXARR], int64_t count, int xi, int yi, bool f32, uint16_t **y,
                                   mxp_narrow_src *x)
{
    for (int64_t k = 0; k < count; k++) {
        y[k] = (uint16_t *)(void *)p[k][yi];
        x[k] = (mxp_narrow_src){ p[k][xi], f32, NULL };
    }
}

#endif
