/* mxp cast on a safetensors file: every floating-point tensor converted to
 * the target dtype (one rounding each, the file's order giving stochastic
 * rounding one stream across the file), every other tensor and the
 * metadata kept, the result written by mxp_safetensors_save (atomic). */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static int is_float(mxp_dtype dt)
{
    const mxp_dtype_traits *t = mxp_dtype_get_traits(dt);
    return t && t->kind == MXP_KIND_FLOAT;
}

int cli_cast_safetensors(const char *in, const char *out, mxp_dtype to, mxp_convert_opts opts)
{
    mxp_safetensors *st = NULL;
    mxp_convert_flags flags = { 0 };
    opts.flags = &flags;
    cli_progress_begin("cast");
    cli_progress_set("opening", -1);
    mxp_status s = mxp_safetensors_open(&st, in);
    if (s != MXP_OK) {
        cli_progress_end();
        return cli_mxp_error("cast", NULL, s);
    }
    const size_t n = mxp_safetensors_count(st), nmeta = mxp_safetensors_metadata_count(st);
    mxp_array **arrays = calloc(n + 1, sizeof *arrays);
    const char **names = calloc(n + 1, sizeof *names);
    const char **keys = calloc(nmeta + 1, sizeof *keys), **values = calloc(nmeta + 1, sizeof *values);
    size_t converted = 0;
    long long elements = 0;
    const uint64_t offset0 = opts.index_offset;
    if (!arrays || !names || !keys || !values)
        s = MXP_ERR_NO_MEMORY;
    for (size_t i = 0; s == MXP_OK && i < n; i++) {
        cli_progress_set("converting", (double)i / (double)n);
        const mxp_dtype from = mxp_safetensors_dtype(st, i);
        const int convert = is_float(from);
        names[i] = mxp_safetensors_name(st, i);
        opts.index_offset = offset0 + (uint64_t)elements;
        s = mxp_safetensors_read(&arrays[i], st, i, convert ? to : MXP_DTYPE_INVALID, &opts);
        if (s == MXP_OK && convert) {
            converted++;
            elements += mxp_array_size(arrays[i]);
        }
    }
    for (size_t j = 0; s == MXP_OK && j < nmeta; j++)
        keys[j] = mxp_safetensors_metadata_key(st, j), values[j] = mxp_safetensors_metadata_value(st, j);
    if (s == MXP_OK) {
        cli_progress_set("writing", -1);
        s = mxp_safetensors_save(out, n, names, (const mxp_array *const *)arrays, nmeta, keys, values);
    }
    cli_progress_end();
    int rc = CLI_OK;
    if (s != MXP_OK) {
        rc = cli_mxp_error("cast", NULL, s);
    } else {
        printf("%s: %zu tensors, %zu floating-point converted to %s (%lld elements), %zu kept -> %s, rounding %s",
               in, n, converted, mxp_dtype_name(to), elements, n - converted, out, mxp_rounding_name(opts.rounding));
        if (opts.rounding == MXP_ROUND_STOCHASTIC)
            printf(" (seed %llu)", (unsigned long long)opts.seed);
        printf(", overflow %s: inexact %llu, overflow %llu, underflow %llu, invalid %llu\n",
               mxp_overflow_name(opts.overflow), (unsigned long long)flags.inexact,
               (unsigned long long)flags.overflow, (unsigned long long)flags.underflow,
               (unsigned long long)flags.invalid);
    }
    for (size_t i = 0; arrays && i < n; i++)
        mxp_array_free(arrays[i]);
    free(arrays), free(names), free(keys), free(values);
    mxp_safetensors_close(st);
    return rc;
}
