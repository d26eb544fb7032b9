/* Internal: what the training files share — argument checks, chunked
 * float32/float64 passes over arrays, and the optimizer's gradients for
 * the loss scaler. */
#ifndef MXP_TRAIN_INTERNAL_H
#define MXP_TRAIN_INTERNAL_H


#include "mxp/alloc.h"
#include "mxp/train.h"

/* Elements per chunk of the passes: converted chunks live on the stack. */
enum { TRAIN_CHUNK = 1024 };

/* A float array (any float dtype) that is C-contiguous, and writeable when
 * asked; errors name `what` ("mxp_optimizer_add_param: grad"). */
mxp_status mxp_train_check_float(const mxp_array *a, const char *what, bool writeable);

/* The same shape, else MXP_ERR_SHAPE naming both ("param (3, 4), grad (4, 3)"). */
mxp_status mxp_train_check_same_shape(const mxp_array *a, const char *a_name, const mxp_array *b,
                                      const char *b_name, const char *what);

/* Reads elements [off, off + n) of a C-contiguous float array as float64
 * (exact).  n <= TRAIN_CHUNK. */
void mxp_train_read_f64(const mxp_array *a, int64_t off, size_t n, double *out);

/* The inf/NaN count of any real array, any layout (a copy for others). */
mxp_status mxp_train_count_nonfinite(const mxp_array *a, int64_t *count);

/* Sum of squares (float64) of a C-contiguous float array; inf/NaN make it
 * inf/NaN as they should. */
double mxp_train_sum_squares(const mxp_array *a);

/* The loss scaler reads the gradients the optimizer steps with. */
size_t mxp_optimizer_grad_count(const mxp_optimizer *opt);
const mxp_array *mxp_optimizer_grad(const mxp_optimizer *opt, size_t i);

#endif
