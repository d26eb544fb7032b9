/* mxp — common definitions: export macro, status codes, errors, version. */
#ifndef MXP_COMMON_H
#define MXP_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#if defined(_WIN32) && defined(MXP_BUILDING_DLL)
#define MXP_API __declspec(dllexport)
#elif defined(__GNUC__)
#define MXP_API __attribute__((visibility("default")))
#else
#define MXP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define MXP_VERSION_MAJOR 0
#define MXP_VERSION_MINOR 1
#define MXP_VERSION_PATCH 0
#define MXP_VERSION_STRING "0.1.0"

/* Every public function that can fail returns an mxp_status.  MXP_OK is 0,
 * so `if (mxp_convert(...)) { puts(mxp_last_error()); }` works. */
typedef enum mxp_status {
    MXP_OK = 0,
    MXP_ERR_INVALID_ARGUMENT, /* a NULL pointer, a bad option value, ... */
    MXP_ERR_INVALID_DTYPE,    /* a dtype that is not one of mxp_dtype's */
    MXP_ERR_SIZE_OVERFLOW,    /* a size or byte count that does not fit */
    MXP_ERR_OVERLAP,          /* input and output overlap in a way not allowed */
    MXP_ERR_NO_MEMORY,        /* the allocator failed */
    MXP_ERR_UNSUPPORTED,      /* valid, but not implemented for these types */
    MXP_ERR_IO,               /* a file could not be read or written */
    MXP_ERR_FORMAT,           /* malformed input data (file header, ...) */
    MXP_ERR_SHAPE,            /* shapes that do not broadcast, a reshape that needs a copy */
    MXP_ERR_INDEX,            /* an index, axis or slice out of range */
    MXP_ERR_READONLY,         /* writing into a read-only array */
    MXP_ERR_CASTING,          /* a conversion the casting rule forbids */
    MXP_STATUS_COUNT
} mxp_status;

/* Short name of a status: "MXP_OK", "MXP_ERR_OVERLAP", ... Never NULL. */
MXP_API const char *mxp_status_str(mxp_status status);

/* A sentence about the last failure on this thread ("" if none yet).  The
 * pointer stays valid until the next failing mxp call on the same thread. */
MXP_API const char *mxp_last_error(void);

/* Forgets the last error of this thread. */
MXP_API void mxp_clear_error(void);

/* "0.1.0" */
MXP_API const char *mxp_version(void);

#ifdef __cplusplus
}
#endif
#endif
