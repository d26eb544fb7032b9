/* libFuzzer target for the .npy reader (make check-fuzz): any bytes through
 * mxp_npy_load_buffer must give an array or an error, never a crash, a leak
 * or an allocation larger than the input.  An input that loads must save
 * and load back to the same array. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mxp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Same dtype, shape and bytes in the same order (strides of axes of
 * length 1 do not matter: a Fortran-order (1, 2) file is saved back in C
 * order, which lays the bytes out the same). */
static void check_same(const mxp_array *a, const mxp_array *b)
{
    const int nd = mxp_array_ndim(a);
    if (mxp_array_dtype(a) != mxp_array_dtype(b) || nd != mxp_array_ndim(b) ||
        memcmp(mxp_array_shape(a), mxp_array_shape(b), (size_t)nd * sizeof(int64_t)) != 0)
        abort();
    for (int i = 0; i < nd; i++) {
        if (mxp_array_shape(a)[i] > 1 && mxp_array_size(a) > 0 && mxp_array_strides(a)[i] != mxp_array_strides(b)[i])
            abort();
    }
    const size_t bytes = (size_t)mxp_array_size(a) * mxp_array_itemsize(a);
    if (bytes && memcmp(mxp_array_data(a), mxp_array_data(b), bytes) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mxp_array *a = (mxp_array *)&a;
    if (mxp_npy_load_buffer(&a, data, size) != MXP_OK) {
        if (a)
            abort(); /* an error must leave the output NULL */
        return 0;
    }
    void *buf = NULL;
    size_t n = 0;
    mxp_array *b = NULL;
    if (mxp_npy_save_buffer(&buf, &n, a) != MXP_OK || mxp_npy_load_buffer(&b, buf, n) != MXP_OK)
        abort();
    check_same(a, b);
    mxp_array_free(b);
    mxp_free(buf);
    mxp_array_free(a);
    return 0;
}
