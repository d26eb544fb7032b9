#include <stdarg.h>
#include <stdio.h>

#include "core/error.h"

static _Thread_local char last_error[512];

static const char *const status_names[MXP_STATUS_COUNT] = {
    [MXP_OK] = "MXP_OK",
    [MXP_ERR_INVALID_ARGUMENT] = "MXP_ERR_INVALID_ARGUMENT",
    [MXP_ERR_INVALID_DTYPE] = "MXP_ERR_INVALID_DTYPE",
    [MXP_ERR_SIZE_OVERFLOW] = "MXP_ERR_SIZE_OVERFLOW",
    [MXP_ERR_OVERLAP] = "MXP_ERR_OVERLAP",
    [MXP_ERR_NO_MEMORY] = "MXP_ERR_NO_MEMORY",
    [MXP_ERR_UNSUPPORTED] = "MXP_ERR_UNSUPPORTED",
    [MXP_ERR_IO] = "MXP_ERR_IO",
    [MXP_ERR_FORMAT] = "MXP_ERR_FORMAT",
    [MXP_ERR_SHAPE] = "MXP_ERR_SHAPE",
    [MXP_ERR_INDEX] = "MXP_ERR_INDEX",
    [MXP_ERR_READONLY] = "MXP_ERR_READONLY",
    [MXP_ERR_CASTING] = "MXP_ERR_CASTING",
};

const char *mxp_status_str(mxp_status status)
{
    if ((unsigned)status >= MXP_STATUS_COUNT)
        return "MXP_ERR_UNKNOWN_STATUS";
    return status_names[status];
}

const char *mxp_last_error(void) { return last_error; }

void mxp_clear_error(void) { last_error[0] = '\0'; }

const char *mxp_version(void) { return MXP_VERSION_STRING; }

mxp_status mxp_error(mxp_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}
