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
 * are; written a tensor at a time (derive.c), memory bounded by one
 * tensor.  Stochastic rounding: one stream across the file, each tensor's
 * part starting at the elements quantized before it (the input's order). */
typedef struct scaled {
    mxp_dtype to;
    mxp_convert_opts opts;
    int scale;
    uint64_t *first;  /* per input tensor: its first element in the stream */
    bool *counted;    /* per input tensor: its flags added (a tensor may be quantized twice) */
    mxp_convert_flags *flags;
} scaled;

/* cli_derive_fn: the codes and the scales of input tensor src */
static mxp_status scale_one(void *ctx, size_t src, const mxp_array *x, cli_outputs *out)
{
    scaled *c = ctx;
    mxp_qparams qp = { 0 };
    mxp_convert_flags f = { 0 };
    mxp_convert_opts o = c->opts;
    o.index_offset += c->first[src];
    o.flags = &f;
    mxp_array *codes = NULL, *sc = NULL;
    const int64_t rows = mxp_array_shape(x)[0], sshape[2] = { c->scale == CLI_SCALE_CHANNEL ? rows : 1, 1 };
    mxp_status s = mxp_calibrate_minmax(x, c->to, true, c->scale == CLI_SCALE_CHANNEL ? 0 : -1, 0, &qp);
    if (s == MXP_OK)
        s = mxp_quantize(&codes, x, &qp, &o);
    if (s == MXP_OK)
        s = cli_outputs_add(out, codes);
    if (s == MXP_OK)
        s = mxp_array_empty(&sc, MXP_F32, c->scale == CLI_SCALE_CHANNEL ? 2 : 1, sshape);
    if (s == MXP_OK) {
        memcpy(mxp_array_data(sc), qp.scales, (size_t)qp.count * sizeof(float));
        s = cli_outputs_add(out, sc);
    }
    if (s == MXP_OK && !c->counted[src]) {
        c->counted[src] = true;
        c->flags->inexact += f.inexact, c->flags->overflow += f.overflow;
        c->flags->underflow += f.underflow, c->flags->invalid += f.invalid;
    }
    mxp_qparams_free(&qp);
    return s;
}

static mxp_status cast_scaled(const mxp_safetensors *st, const char *out, mxp_dtype to, const mxp_convert_opts *opts,
                              int scale, size_t *converted, uint64_t *elements)
{
    const size_t n = mxp_safetensors_count(st), nmeta = mxp_safetensors_metadata_count(st);
    scaled c = { to, *opts, scale, calloc(n + 1, sizeof *c.first), calloc(n + 1, sizeof *c.counted), opts->flags };
    cli_derive d = { .st = st, .fn = scale_one, .ctx = &c, .cached = SIZE_MAX };
    const char **keys = calloc(nmeta + 1, sizeof *keys), **values = calloc(nmeta + 1, sizeof *values);
    mxp_status s = c.first && c.counted && keys && values ? MXP_OK : MXP_ERR_NO_MEMORY;
    for (size_t i = 0; s == MXP_OK && i < n; i++) {
        const char *name = mxp_safetensors_name(st, i);
        const mxp_dtype t = mxp_safetensors_dtype(st, i);
        const int ndim = mxp_safetensors_ndim(st, i);
        const int64_t *shape = mxp_safetensors_shape(st, i);
        const bool q = cli_is_float(t) && ndim == 2 && shape[0] * shape[1] > 0;
        const int64_t sshape[2] = { scale == CLI_SCALE_CHANNEL ? shape[0] : 1, 1 };
        if (!(q ? cli_derive_plan(&d, name, "", to, 2, shape, i, 0) &&
                           cli_derive_plan(&d, name, "_scale", MXP_F32, scale == CLI_SCALE_CHANNEL ? 2 : 1, sshape, i, 1)
                     : cli_derive_plan(&d, name, "", t, ndim, NULL, i, -1)))
            s = MXP_ERR_NO_MEMORY;
        if (q) {
            c.first[i] = *elements;
            *elements += (uint64_t)(shape[0] * shape[1]);
            ++*converted;
        }
    }
    for (size_t j = 0; s == MXP_OK && j < nmeta; j++)
        keys[j] = mxp_safetensors_metadata_key(st, j), values[j] = mxp_safetensors_metadata_value(st, j);
    if (s == MXP_OK)
        s = cli_derive_write(&d, out, nmeta, keys, values);
    cli_derive_free(&d);
    free(c.first), free(c.counted), free(keys), free(values);
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
