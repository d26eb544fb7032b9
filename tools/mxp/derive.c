/* A safetensors file derived tensor by tensor from another (mxp quantize,
 * mxp cast --scale; cli.h, "derived files"): the output's names, dtypes and
 * shapes are planned from the input's header first, then
 * mxp_safetensors_save_made writes them, and each output tensor is made
 * when the writer reaches it (the file's order: by dtype, then name) --
 * copied from the mapping for a tensor kept, or taken from the outputs of
 * its input tensor, which the command's function computes from the tensor
 * read as float32.  The last input tensor's outputs are kept, so the
 * pieces of one tensor (6 MiB each) and outputs that follow each other in
 * the file reuse them; memory stays at one tensor in float32 and its
 * outputs, whatever the file's size. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct cli_planned {
    char *name;
    mxp_dtype dtype;
    int ndim;
    int64_t shape[3]; /* an output's (a tensor kept: the input's own) */
    size_t src;
    int which;
    cli_derive *d;
};

mxp_status cli_outputs_add(cli_outputs *o, mxp_array *a)
{
    if (o->n == o->cap) {
        const size_t cap = o->cap ? 2 * o->cap : 4;
        mxp_array **na = realloc(o->arrays, cap * sizeof *na);
        if (!na) {
            mxp_array_free(a);
            return MXP_ERR_NO_MEMORY;
        }
        o->arrays = na;
        o->cap = cap;
    }
    o->arrays[o->n++] = a;
    return MXP_OK;
}

void cli_outputs_clear(cli_outputs *o)
{
    for (size_t i = 0; i < o->n; i++)
        mxp_array_free(o->arrays[i]);
    o->n = 0;
}

bool cli_derive_plan(cli_derive *d, const char *name, const char *suffix, mxp_dtype t, int ndim,
                     const int64_t *shape, size_t src, int which)
{
    if (d->n == d->cap) {
        const size_t cap = d->cap ? 2 * d->cap : 16;
        cli_planned *p = realloc(d->p, cap * sizeof *p);
        if (!p)
            return false;
        d->p = p, d->cap = cap;
    }
    const size_t len = strlen(name) + strlen(suffix) + 1;
    cli_planned *e = &d->p[d->n];
    *e = (cli_planned){ malloc(len), t, ndim, { 0 }, src, which, d };
    if (!e->name)
        return false;
    d->n++;
    snprintf(e->name, len, "%s%s", name, suffix);
    long long bytes = 1;
    if (which >= 0) {
        if (ndim) /* a 0-d output passes no shape */
            memcpy(e->shape, shape, (size_t)ndim * sizeof shape[0]);
        for (int k = 0; k < ndim; k++)
            bytes *= shape[k];
        bytes = mxp_packed_bytes(t, 8) ? bytes * (long long)mxp_packed_bytes(t, 8) / 8
                                       : bytes * (long long)mxp_dtype_itemsize(t);
    } else {
        size_t nbytes = 0;
        (void)mxp_safetensors_data(d->st, src, &nbytes);
        bytes = (long long)nbytes;
    }
    d->bytes += bytes;
    return true;
}

/* mxp_safetensors_source.make: bytes [offset, offset + len) of a planned tensor */
static mxp_status make_piece(void *ctx, size_t offset, size_t len, void *buf)
{
    const cli_planned *p = ctx;
    cli_derive *d = p->d;
    if (p->which < 0) {
        size_t nbytes = 0;
        memcpy(buf, (const unsigned char *)mxp_safetensors_data(d->st, p->src, &nbytes) + offset, len);
        return MXP_OK;
    }
    if (d->cached != p->src) {
        cli_outputs_clear(&d->out);
        d->cached = SIZE_MAX;
        mxp_array *x = NULL;
        mxp_status s = mxp_safetensors_read(&x, d->st, p->src, MXP_F32, NULL);
        if (s == MXP_OK)
            s = d->fn(d->ctx, p->src, x, &d->out);
        mxp_array_free(x);
        if (s != MXP_OK)
            return s;
        d->cached = p->src;
    }
    if ((size_t)p->which >= d->out.n)
        return MXP_ERR_UNSUPPORTED; /* a bug: the plan and the function disagree */
    const mxp_array *y = d->out.arrays[p->which];
    const unsigned char *data = mxp_array_data(y);
    const size_t count = (size_t)mxp_array_size(y), bits8 = mxp_packed_bytes(p->dtype, 8); /* bits of a sub-byte type */
    if (mxp_array_dtype(y) != p->dtype || offset + len > (bits8 ? count * bits8 / 8 : count * mxp_array_itemsize(y)))
        return MXP_ERR_UNSUPPORTED;
    if (bits8) /* float4 / float6: packed, as the file holds them (whole elements: offset is 6 MiB steps) */
        return mxp_pack(buf, data + offset * 8 / bits8, p->dtype, len * 8 / bits8);
    memcpy(buf, data + offset, len);
    return MXP_OK;
}

mxp_status cli_derive_write(cli_derive *d, const char *path, size_t nmeta, const char *const *keys,
                            const char *const *values)
{
    mxp_safetensors_source *src = calloc(d->n ? d->n : 1, sizeof *src);
    if (!src)
        return MXP_ERR_NO_MEMORY;
    for (size_t i = 0; i < d->n; i++) {
        const cli_planned *p = &d->p[i];
        const bool kept = p->which < 0; /* its bytes and the file's name for its dtype, as they are */
        src[i] = (mxp_safetensors_source){ p->name, p->dtype, p->ndim,
                                           kept ? mxp_safetensors_shape(d->st, p->src) : p->shape, make_piece,
                                           &d->p[i], kept ? mxp_safetensors_dtype_name(d->st, p->src) : NULL };
    }
    const mxp_status s = mxp_safetensors_save_made(path, d->n, src, nmeta, keys, values);
    free(src);
    return s;
}

void cli_derive_free(cli_derive *d)
{
    cli_outputs_clear(&d->out);
    free(d->out.arrays);
    for (size_t i = 0; i < d->n; i++)
        free(d->p[i].name);
    free(d->p);
    d->p = NULL, d->n = d->cap = 0;
}
