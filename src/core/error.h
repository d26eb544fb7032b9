/* Internal: recording errors for mxp_last_error(). */
#ifndef MXP_CORE_ERROR_H
#define MXP_CORE_ERROR_H

#include "mxp/common.h"

#if defined(__GNUC__)
#define MXP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define MXP_PRINTF(f, a)
#endif

/* Stores the sentence (printf format) for mxp_last_error() and returns
 * status, so checks read `return mxp_error(MXP_ERR_..., "...", ...);`. */
mxp_status mxp_error(mxp_status status, const char *fmt, ...) MXP_PRINTF(2, 3);

#endif
