/* Internal: the parsed safetensors header (safetensors-header.c) and the
 * format's dtype table, shared by the reader and writer (safetensors.c). */
#ifndef MXP_IO_SAFETENSORS_INTERNAL_H
#define MXP_IO_SAFETENSORS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mxp/common.h"
#include "mxp/dtype.h"

enum {
    MXP_ST_MAX_HEADER = 100000000, /* the library's limit, bytes */
    MXP_ST_MAX_DEPTH = 64,         /* JSON nesting */
    MXP_ST_MAX_NDIM = 64,          /* dimensions a header entry may list */
};

/* A dtype of the format: its name, bits per element, its rank in the
 * library's ordering (files list wider ranks first) and mxp's dtype
 * (MXP_DTYPE_INVALID: none yet). */
typedef struct mxp_st_dtype {
    const char *name;
    int bits, rank;
    mxp_dtype dtype;
} mxp_st_dtype;

/* The entry for a name (NULL: not a dtype of the format) or for mxp's dtype. */
const mxp_st_dtype *mxp_st_dtype_named(const char *name, size_t len);
const mxp_st_dtype *mxp_st_dtype_of(mxp_dtype dt);

typedef struct mxp_st_tensor {
    char *name;
    const mxp_st_dtype *dtype;
    int ndim;
    int64_t shape[MXP_ST_MAX_NDIM];
    uint64_t begin, end; /* data_offsets: bytes from the start of the data */
} mxp_st_tensor;

typedef struct mxp_st_header {
    mxp_st_tensor *tensors;
    size_t count, cap;
    char **keys, **values; /* __metadata__ */
    size_t nmeta, meta_cap;
    int has_metadata;
} mxp_st_header;

/* Parses len bytes of header JSON into h (zeroed by the caller): the
 * syntax, the value types, duplicate names; not the offsets (the caller
 * checks those against the data).  MXP_ERR_FORMAT with the rule and the
 * byte offset, MXP_ERR_NO_MEMORY; h holds what was parsed either way
 * (freed by mxp_st_header_free). */
mxp_status mxp_st_header_parse(mxp_st_header *h, const char *json, size_t len);
void mxp_st_header_free(mxp_st_header *h);

#endif
