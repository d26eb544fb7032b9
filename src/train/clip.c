/* Gradient clipping by global norm (torch.nn.utils.clip_grad_norm_), the
 * norm summed in float64. */
#include <math.h>

#include "train/train-internal.h"
#include "core/error.h"
#include "core/fpenv.h"

/* g *= coef in place, chunk by chunk through float64, rounded once. */
static void scale_in_place(mxp_array *g, double coef)
{
    const mxp_dtype dt = mxp_array_dtype(g);
    const int64_t n = mxp_array_size(g);
    const size_t size = mxp_array_itemsize(g);
    char *data = mxp_array_data(g);
    double buf[TRAIN_CHUNK];
    for (int64_t off = 0; off < n; off += TRAIN_CHUNK) {
        const size_t m = (size_t)(n - off < TRAIN_CHUNK ? n - off : TRAIN_CHUNK);
        mxp_train_read_f64(g, off, m, buf);
        for (size_t i = 0; i < m; i++)
            buf[i] *= coef;
        (void)mxp_convert(data + (size_t)off * size, dt, buf, MXP_F64, m, NULL);
    }
}

mxp_status mxp_clip_grad_norm(mxp_array *const *grads, size_t n, double max_norm, double *total_norm)
{
    const char *what = "mxp_clip_grad_norm";
    if (n > 0 && !grads)
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: grads is NULL", what);
    if (!(isfinite(max_norm) && max_norm > 0.0))
        return mxp_error(MXP_ERR_INVALID_ARGUMENT, "%s: max_norm %g must be finite and > 0", what, max_norm);
    for (size_t i = 0; i < n; i++) {
        mxp_status st = mxp_train_check_float(grads[i], "mxp_clip_grad_norm: a gradient", true);
        if (st != MXP_OK)
            return st;
    }
    const mxp_fpenv env = mxp_fpenv_enter();
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += mxp_train_sum_squares(grads[i]);
    const double norm = sqrt(sum);
    if (total_norm)
        *total_norm = norm;
    const double coef = max_norm / (norm + 1e-6); /* torch's, clamped to 1 */
    if (isfinite(norm) && coef < 1.0) {
        for (size_t i = 0; i < n; i++)
            scale_in_place(grads[i], coef);
    }
    mxp_fpenv_leave(env);
    return MXP_OK;
}
