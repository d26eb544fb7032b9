/* mxp cast on a safetensors file: every floating-point tensor converted to
 * the target dtype (one rounding each, the file's order giving stochastic
 * rounding one stream across the file), every other tensor and the
 * metadata kept, the result written by mxp_safetensors_cast: a chunk at a
 * time from the mapping (memory bounded whatever the file's size), atomic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* --scale: each 2-d float tensor quantized symmetrically into `to` (scale =
 * amax / to's max, one for the tensor or one a row: mxp_calibrate_minmax +
 * mxp_quantize) with NAME_scale beside it, the other tensors kept as they
 * are; all held in memory, written by mxp_safetensors_save. */
static mxp_status cast_scaled(const mxp_safetensors *st, const char *out, mxp_dtype to, const mxp_convert_opts *opts,
                              int scale, size_t *converted, uint64_t *elements)
{
    const size_t n = mxp_safetensors_count(st), nmeta = mxp_safetensors_metadata_count(st);
    mxp_array **arrays = calloc(2 * n + 1, sizeof *arrays);
    char **names = calloc(2 * n + 1, sizeof *names);
    const char **keys = calloc(nmeta + 1, sizeof *keys), **values = calloc(nmeta + 1, sizeof *values);
    size_t m = 0;
    mxp_convert_opts o = *opts;
    mxp_status s = arrays && names && keys && values ? MXP_OK : MXP_ERR_NO_MEMORY;
    for (size_t i = 0; s == MXP_OK && i < n; i++) {
        const char *name = mxp_safetensors_name(st, i);
        const bool q = cli_is_float(mxp_safetensors_dtype(st, i)) && mxp_safetensors_ndim(st, i) == 2;
        mxp_array *x = NULL;
        if ((s = mxp_safetensors_read(&x, st, i, q ? MXP_F32 : MXP_DTYPE_INVALID, NULL)) != MXP_OK)
            break;
        const size_t len = strlen(name) + 1;
        if (!(names[m] = malloc(len + 6))) {
            mxp_array_free(x);
            s = MXP_ERR_NO_MEMORY;
            break;
        }
        memcpy(names[m], name, len);
        if (!q) {
            arrays[m++] = x;
            continue;
        }
        mxp_qparams qp = { 0 };
        const int64_t rows = mxp_array_shape(x)[0], sshape[2] = { scale == CLI_SCALE_CHANNEL ? rows : 1, 1 };
        o.index_offset = opts->index_offset + *elements; /* one stochastic stream across the file */
        s = mxp_calibrate_minmax(x, to, true, scale == CLI_SCALE_CHANNEL ? 0 : -1, 0, &qp);
        if (s == MXP_OK)
            s = mxp_quantize(&arrays[m++], x, &qp, &o);
        if (s == MXP_OK && !(names[m] = malloc(len + 6)))
            s = MXP_ERR_NO_MEMORY;
        if (s == MXP_OK) {
            snprintf(names[m], len + 6, "%s_scale", name);
            s = mxp_array_empty(&arrays[m++], MXP_F32, scale == CLI_SCALE_CHANNEL ? 2 : 1, sshape);
        }
        if (s == MXP_OK) {
            memcpy(mxp_array_data(arrays[m - 1]), qp.scales, (size_t)qp.count * sizeof(float));
            ++*converted;
            *elements += (uint64_t)mxp_array_size(x);
        }
        mxp_qparams_free(&qp);
        mxp_array_free(x);
    }
    for (size_t j = 0; s == MXP_OK && j < nmeta; j++)
        keys[j] = mxp_safetensors_metadata_key(st, j), values[j] = mxp_safetensors_metadata_value(st, j);
    if (s == MXP_OK)
        s = mxp_safetensors_save(out, m, (const char *const *)names, (const mxp_array *const *)arrays, nmeta, keys,
                                 values);
    for (size_t i = 0; i < 2 * n && arrays && names; i++) {
        mxp_array_free(arrays[i]);
        free(names[i]);
    }
    free(arrays), free(names), free(keys), free(values);
    return s;
}

int cli_cast_safetensors(const char *in, const char *out, mxp_dtype to, mxp_convert_opts opts, int scale)
{
    mxp_safetensors *st = NULL;
    mxp_convert_flags flags = { 0 };
    opts.flags = &flags;
    cli_progress_begin("cast");
    cli_progress_set("opening", -1);
    mxp_status s = mxp_safetensors_open(&st, in);
    size_t converted = 0;
    uint64_t elements = 0;
    if (s == MXP_OK) {
        cli_progress_set("converting and writing", -1);
        s = scale ? cast_scaled(st, out, to, &opts, scale, &converted, &elements)
                  : mxp_safetensors_cast(out, st, to, &opts, &converted, &elements);
    }
    cli_progress_end();
    int rc = CLI_OK;
    if (s != MXP_OK) {
        rc = cli_mxp_error("cast", NULL, s);
    } else {
        const size_t n = mxp_safetensors_count(st);
        printf("%s: %zu tensors, %zu floating-point converted to %s%s (%llu elements), %zu kept -> %s, rounding %s",
               in, n, converted, mxp_dtype_name(to),
               scale == CLI_SCALE_TENSOR ? " with a scale per tensor" : scale ? " with a scale per row" : "",
               (unsigned long long)elements, n - converted, out, mxp_rounding_name(opts.rounding));
        if (opts.rounding == MXP_ROUND_STOCHASTIC)
            printf(" (seed %llu)", (unsigned long long)opts.seed);
        printf(", overflow %s: inexact %llu, overflow %llu, underflow %llu, invalid %llu\n",
               mxp_overflow_name(opts.overflow), (unsigned long long)flags.inexact,
               (unsigned long long)flags.overflow, (unsigned long long)flags.underflow,
               (unsigned long long)flags.invalid);
    }
    mxp_safetensors_close(st);
    return rc;
}
