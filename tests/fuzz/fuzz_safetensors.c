/* libFuzzer target for the safetensors reader (make check-fuzz; its seeds
 * and regressions replayed by test_fuzz_replay): any bytes through
 * mxp_safetensors_open_buffer give a file or an error, never a crash, a
 * leak or an allocation larger than a multiple of the input.  A file that
 * opens has every tensor's bytes inside the input, reads each tensor of a
 * type mxp has (the same bytes; BOOL's nonzero bytes as 1; as float64
 * too), and saves and opens back to the same tensors: names, dtypes,
 * shapes and bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mxp.h"

/* 1 when it opened (the seeds must), 0 when refused; aborts on a broken promise. */
static int fuzz_safetensors_one(const uint8_t *data, size_t size)
{
    mxp_safetensors *st = (mxp_safetensors *)&st;
    if (mxp_safetensors_open_buffer(&st, data, size) != MXP_OK) {
        if (st || !mxp_last_error()[0])
            abort(); /* an error leaves the output NULL and says why */
        return 0;
    }
    const size_t n = mxp_safetensors_count(st);
    const char **names = calloc(n + 1, sizeof *names);
    mxp_array **arrays = calloc(n + 1, sizeof *arrays);
    size_t kept = 0, total = 0;
    if (!names || !arrays)
        abort();
    for (size_t i = 0; i < n; i++) {
        size_t nbytes;
        const unsigned char *p = mxp_safetensors_data(st, i, &nbytes);
        total += nbytes;
        if (!p || total > size)
            abort(); /* the tensors' bytes lie in the input, once each */
        if (nbytes)
            (void)(p[0] + p[nbytes - 1]); /* touched, for ASan */
        mxp_array *a = NULL;
        const mxp_status s = mxp_safetensors_read(&a, st, i, MXP_DTYPE_INVALID, NULL);
        if (s != MXP_OK) {
            if (a || (mxp_safetensors_dtype(st, i) != MXP_DTYPE_INVALID && mxp_safetensors_ndim(st, i) <= MXP_MAXDIMS))
                abort(); /* only what mxp lacks is refused */
            continue;
        }
        if ((size_t)mxp_array_size(a) * mxp_array_itemsize(a) != nbytes)
            abort();
        const unsigned char *q = mxp_array_data(a);
        if (mxp_array_dtype(a) == MXP_BOOL) { /* any nonzero byte is true, read as 1 */
            for (size_t k = 0; k < nbytes; k++)
                if (q[k] != (p[k] != 0))
                    abort();
        } else if (nbytes && memcmp(q, p, nbytes) != 0) {
            abort(); /* the file's own dtype: the same bytes */
        }
        mxp_array *wide = NULL;
        if (mxp_safetensors_read(&wide, st, i, MXP_F64, NULL) != MXP_OK)
            abort();
        mxp_array_free(wide);
        names[kept] = mxp_safetensors_name(st, i);
        arrays[kept++] = a;
    }
    void *buf = NULL;
    size_t len = 0;
    const char **keys = calloc(mxp_safetensors_metadata_count(st) + 1, sizeof *keys);
    const char **values = calloc(mxp_safetensors_metadata_count(st) + 1, sizeof *values);
    if (!keys || !values)
        abort();
    for (size_t j = 0; j < mxp_safetensors_metadata_count(st); j++)
        keys[j] = mxp_safetensors_metadata_key(st, j), values[j] = mxp_safetensors_metadata_value(st, j);
    if (mxp_safetensors_save_buffer(&buf, &len, kept, names, (const mxp_array *const *)arrays,
                                    mxp_safetensors_metadata_count(st), keys, values) != MXP_OK)
        abort(); /* what was read is always writable */
    mxp_safetensors *back;
    if (mxp_safetensors_open_buffer(&back, buf, len) != MXP_OK || mxp_safetensors_count(back) != kept)
        abort();
    for (size_t i = 0; i < kept; i++) {
        size_t at, nbytes;
        if (mxp_safetensors_find(back, names[i], &at) != MXP_OK ||
            mxp_safetensors_dtype(back, at) != mxp_array_dtype(arrays[i]) ||
            mxp_safetensors_ndim(back, at) != mxp_array_ndim(arrays[i]))
            abort();
        const void *p = mxp_safetensors_data(back, at, &nbytes);
        if (nbytes && memcmp(p, mxp_array_data(arrays[i]), nbytes) != 0)
            abort();
        mxp_array_free(arrays[i]);
    }
    mxp_safetensors_close(back);
    mxp_free(buf);
    free(keys);
    free(values);
    free(names);
    free(arrays);
    mxp_safetensors_close(st);
    return 1;
}

#ifndef MXP_FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_safetensors_one(data, size);
    return 0;
}
#endif
