/* The GEMM tests' matrix harness: a matrix as stored (rows x cols, leading
 * dimension ld) inside guard bytes, every byte outside its elements set to
 * a known pattern, so that a read of padding poisons a result and a write
 * outside the elements is seen; the argument and allocation checks the
 * GEMM tests share. */
#ifndef MXP_TESTS_SUPPORT_MATRIX_H
#define MXP_TESTS_SUPPORT_MATRIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mxp.h"

#define NELEMS(x) (sizeof(x) / sizeof((x)[0]))
#define GUARD 64 /* canary bytes before and after every matrix buffer */

typedef struct mat {
    mxp_dtype dt;
    size_t rows, cols, ld, isz;
    size_t bytes;        /* GUARD + rows * ld * isz + GUARD */
    unsigned char *buf;  /* the whole allocation, guards included */
    unsigned char *data; /* buf + GUARD: element (r, c) at data + (r * ld + c) * isz */
} mat;

/* Every byte (elements too, until set) is `even` at even offsets of the
 * allocation, `odd` at odd ones. */
mat mat_new(mxp_dtype dt, size_t rows, size_t cols, size_t ld, uint8_t even, uint8_t odd);
void mat_free(mat *x);

/* v: rows x cols, row-major, rounded to nearest even into the dtype; and
 * back, exactly. */
void mat_set(mat *x, const double *v);
void mat_get(const mat *x, double *v);

/* Every byte outside the elements (guards, row padding) equals `before`. */
void mat_expect_padding_untouched(const mat *x, const unsigned char *before, const char *desc);

/* cols + pad, at least 1. */
size_t ld_for(size_t cols, size_t pad);

/* A copy of n bytes, to free. */
unsigned char *dup_bytes(const void *p, size_t n);

/* Does msg name `word` as a whole word? */
bool mentions(const char *msg, const char *word);

/* The four (ta, tb) pairs. */
extern const mxp_trans trans_pairs[4][2];

/* Teardown: no allocation failures, the highest ISA level, the default
 * thread count. */
int restore_defaults(void **state);

#endif
