/* Internal: NumPy's element formats (print-format.c) for mxp_array_format
 * (print.c). */
#ifndef MXP_ARRAY_PRINT_INTERNAL_H
#define MXP_ARRAY_PRINT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "mxp/dtype.h"

typedef struct mxp_print_format {
    mxp_dtype dtype;
    mxp_kind kind;
    size_t itemsize;
    int ndim, precision;
    bool exp_format;                                /* floats: scientific notation */
    int pad_left, pad_right, exp_size, frac_digits; /* floats */
    int width;                                      /* integers */
} mxp_print_format;

/* Sets f up to print like NumPy the `count` elements (pointers to values
 * of dtype dt, as NumPy would show them: all, or a summary's corners). */
void mxp_print_format_init(mxp_print_format *f, mxp_dtype dt, int ndim, int precision, const void *const *elems,
                           size_t count);
/* One element, padded to the width every element of the set gets. */
void mxp_print_format_element(const mxp_print_format *f, const void *elem, char *out, size_t size);

#endif
