/* mxp quantize IN.safetensors OUT.safetensors --to int8|int4|mxfp4|nvfp4:
 * the 2-d floating-point tensors of a model file quantized, stored as the
 * common tools lay them out (docs/safetensors.md, "Quantized files"):
 *   int8   NAME (I8 codes) and NAME_scale (F32 [rows, 1], or [1] with
 *          --per-tensor): symmetric, scale = amax / 127 (compressed-tensors'
 *          names);
 *   int4   NAME_packed (U8 [rows, ceil(cols / 2)], element 2j in the low
 *          nibble), NAME_scale (F32, amax / 7) and NAME_shape (I64 [2]);
 *   mxfp4  NAME_blocks (U8 [rows, cols / 32, 16], E2M1 pairs, low nibble
 *          first) and NAME_scales (U8 [rows, cols / 32], E8M0 exponents):
 *          OCP MX as gpt-oss's checkpoints hold it;
 *   nvfp4  NAME (U8 [rows, cols / 2]), NAME_scale (F8_E4M3 [rows, cols /
 *          16]) and NAME_scale_2 (F32 [], the tensor scale): NVIDIA
 *          ModelOpt's layout.
 * Every other tensor (1-d ones, integers, fewer than --min-elements
 * values, a row that is not whole blocks) and the metadata are kept; one
 * metadata entry, "mxp_quantize", names the format.  Written atomically, a
 * tensor at a time (derive.c): memory stays at one input tensor in float32
 * and its outputs; a tensor whose outputs lie apart in the file is
 * quantized once per place (two or three times). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { Q_INT8, Q_INT4, Q_MXFP4, Q_NVFP4 };
static const char *const kinds[] = { "int8", "int4", "mxfp4", "nvfp4" };

typedef struct qargs {
    const char *in, *out;
    int kind;
    bool per_tensor;
    long long min_elements;
} qargs;

static void print_help(void)
{
    printf("usage: mxp quantize IN.safetensors OUT.safetensors --to int8|int4|mxfp4|nvfp4\n"
           "                    [--per-tensor] [--min-elements N]\n\n"
           "Quantizes the 2-d floating-point tensors of a safetensors file (the weights\n"
           "of linear layers and embeddings: rows are output channels) and writes them\n"
           "as the common tools lay them out (docs/safetensors.md, \"Quantized files\"):\n\n"
           "  int8    NAME: I8 codes, NAME_scale: F32 [rows, 1]; symmetric, amax / 127\n"
           "  int4    NAME_packed: U8, two codes a byte (low nibble first), NAME_scale,\n"
           "          NAME_shape: I64 [2]; symmetric, amax / 7\n"
           "  mxfp4   NAME_blocks: U8 [rows, cols/32, 16] E2M1 pairs, NAME_scales: U8\n"
           "          E8M0 exponents [rows, cols/32] (OCP MX, gpt-oss's layout)\n"
           "  nvfp4   NAME: U8 [rows, cols/2] E2M1 pairs, NAME_scale: F8_E4M3\n"
           "          [rows, cols/16], NAME_scale_2: F32 tensor scale (ModelOpt's layout)\n\n"
           "Every other tensor and the metadata are kept; the entry \"mxp_quantize\" is\n"
           "added to the metadata.  OUT is replaced atomically, written a tensor at a\n"
           "time: memory stays at one weight in float32 and its outputs.\n\n"
           "  --per-tensor       int8/int4: one scale for the tensor (default: one a row)\n"
           "  --min-elements N   smaller tensors are kept as they are (default 1024)\n");
}

static int parse_args(qargs *a, int argc, char **argv)
{
    a->kind = -1;
    a->min_elements = 1024;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (cli_is_help(argv[i])) {
            print_help();
            return -1;
        }
        if ((m = cli_option(argc, argv, &i, "--to", &v)) > 0) {
            for (int k = 0; k < 4; k++)
                if (!strcmp(v, kinds[k]))
                    a->kind = k;
            if (a->kind < 0)
                return cli_usage_error("quantize", "--to %s: use int8, int4, mxfp4 or nvfp4", v);
        } else if (m < 0) {
            return cli_usage_error("quantize", "option '--to' needs a value");
        } else if ((m = cli_option(argc, argv, &i, "--min-elements", &v)) > 0) {
            char *end;
            a->min_elements = strtoll(v, &end, 10);
            if (*end || end == v || a->min_elements < 0)
                return cli_usage_error("quantize", "--min-elements %s: use a count >= 0", v);
        } else if (m < 0) {
            return cli_usage_error("quantize", "option '--min-elements' needs a value");
        } else if (!strcmp(argv[i], "--per-tensor")) {
            a->per_tensor = true;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return cli_bad_argument("quantize", argv[i]);
        } else if (!a->in) {
            a->in = argv[i];
        } else if (!a->out) {
            a->out = argv[i];
        } else {
            return cli_usage_error("quantize", "more than two files ('%s')", argv[i]);
        }
    }
    if (!a->out)
        return cli_usage_error("quantize", "missing %s", a->in ? "OUT.safetensors" : "IN.safetensors and OUT.safetensors");
    if (a->kind < 0)
        return cli_usage_error("quantize", "missing --to int8|int4|mxfp4|nvfp4");
    return CLI_OK;
}

/* A new array of dtype t and shape, filled with bytes (NULL: zeros). */
static mxp_status bytes_array(mxp_array **a, mxp_dtype t, int ndim, const int64_t *shape, const void *bytes)
{
    mxp_status s = mxp_array_zeros(a, t, ndim, shape);
    if (s == MXP_OK && bytes)
        memcpy(mxp_array_data(*a), bytes, (size_t)mxp_array_size(*a) * mxp_array_itemsize(*a));
    return s;
}

/* int8 / int4: symmetric min-max scales per row (or per tensor), codes by mxp_quantize. */
static mxp_status quantize_int(cli_outputs *o, const mxp_array *x, const qargs *a)
{
    const bool four = a->kind == Q_INT4;
    mxp_qparams qp = { 0 };
    mxp_array *codes = NULL, *scale = NULL, *packed = NULL;
    mxp_status s = mxp_calibrate_minmax(x, four ? MXP_S4 : MXP_S8, true, a->per_tensor ? -1 : 0, 0, &qp);
    if (s == MXP_OK)
        s = mxp_quantize(&codes, x, &qp, NULL);
    const int64_t rows = mxp_array_shape(x)[0], sshape[2] = { a->per_tensor ? 1 : rows, 1 };
    if (s == MXP_OK)
        s = bytes_array(&scale, MXP_F32, a->per_tensor ? 1 : 2, sshape, qp.scales);
    if (s == MXP_OK && four && mxp_array_dtype(codes) != MXP_S8) { /* int4 codes, one a byte: as int8 to pack */
        mxp_array *c8 = NULL;
        s = mxp_array_astype(&c8, codes, MXP_S8, NULL);
        mxp_array_free(codes);
        codes = c8;
    }
    if (s == MXP_OK && four)
        s = mxp_pack_int4(&packed, codes);
    if (s == MXP_OK) {
        s = cli_outputs_add(o, four ? packed : codes);
        four ? (packed = NULL) : (codes = NULL);
    }
    if (s == MXP_OK) {
        s = cli_outputs_add(o, scale);
        scale = NULL;
    }
    if (s == MXP_OK && four) {
        mxp_array *shape = NULL;
        const int64_t two = 2, dims[2] = { rows, mxp_array_shape(x)[1] };
        s = bytes_array(&shape, MXP_S64, 1, &two, dims);
        if (s == MXP_OK)
            s = cli_outputs_add(o, shape);
    }
    mxp_array_free(codes), mxp_array_free(scale), mxp_array_free(packed);
    mxp_qparams_free(&qp);
    return s;
}

/* mxfp4 / nvfp4: mxp_mx_quantize over the whole tensor (rows are whole
 * blocks), its interleaved blocks split into the codes and the scales. */
static mxp_status quantize_mx(cli_outputs *o, const mxp_array *x, const qargs *a)
{
    const bool nv = a->kind == Q_NVFP4;
    const mxp_mx_format f = nv ? MXP_NVFP4 : MXP_MXFP4_E2M1;
    const int64_t rows = mxp_array_shape(x)[0], cols = mxp_array_shape(x)[1];
    const int64_t block = nv ? MXP_NVFP4_BLOCK : MXP_MX_BLOCK, nb = rows * (cols / block);
    const size_t n = (size_t)(rows * cols), head = nv ? 4 : 0, stride = 1 + (size_t)block / 2;
    unsigned char *buf = malloc(mxp_mx_bytes(f, n));
    mxp_array *codes = NULL, *scales = NULL, *tensor = NULL;
    mxp_status s = buf ? mxp_mx_quantize(buf, f, mxp_array_data(x), n, NULL) : MXP_ERR_NO_MEMORY;
    const int64_t cshape[3] = { rows, nv ? cols / 2 : cols / block, 16 }, sshape[2] = { rows, cols / block };
    if (s == MXP_OK)
        s = bytes_array(&codes, MXP_U8, nv ? 2 : 3, cshape, NULL);
    if (s == MXP_OK)
        s = bytes_array(&scales, nv ? MXP_E4M3 : MXP_U8, 2, sshape, NULL);
    if (s == MXP_OK && nv)
        s = bytes_array(&tensor, MXP_F32, 0, NULL, buf);
    if (s == MXP_OK) {
        unsigned char *c = mxp_array_data(codes), *sc = mxp_array_data(scales);
        for (int64_t b = 0; b < nb; b++) { /* [scale][elements] per block */
            const unsigned char *blk = buf + head + (size_t)b * stride;
            sc[b] = blk[0];
            memcpy(c + (size_t)b * (size_t)(block / 2), blk + 1, (size_t)block / 2);
        }
        s = cli_outputs_add(o, codes);
        codes = NULL;
    }
    if (s == MXP_OK) {
        s = cli_outputs_add(o, scales);
        scales = NULL;
    }
    if (s == MXP_OK && nv) {
        s = cli_outputs_add(o, tensor);
        tensor = NULL;
    }
    free(buf);
    mxp_array_free(codes), mxp_array_free(scales), mxp_array_free(tensor);
    return s;
}

/* cli_derive_fn: input tensor src's outputs */
static mxp_status quantize_one(void *ctx, size_t src, const mxp_array *x, cli_outputs *out)
{
    const qargs *a = ctx;
    (void)src;
    return a->kind <= Q_INT4 ? quantize_int(out, x, a) : quantize_mx(out, x, a);
}

/* The outputs of input tensor i (its name and [rows, cols] shape), in
 * quantize_int's / quantize_mx's order. */
static bool plan_quantized(cli_derive *d, const qargs *a, const char *name, const int64_t *shape, size_t i)
{
    const int64_t rows = shape[0], cols = shape[1];
    const int64_t scale[2] = { a->per_tensor ? 1 : rows, 1 }, two = 2;
    switch (a->kind) {
    case Q_INT8:
        return cli_derive_plan(d, name, "", MXP_S8, 2, shape, i, 0) &&
               cli_derive_plan(d, name, "_scale", MXP_F32, a->per_tensor ? 1 : 2, scale, i, 1);
    case Q_INT4: {
        const int64_t packed[2] = { rows, (cols + 1) / 2 };
        return cli_derive_plan(d, name, "_packed", MXP_U8, 2, packed, i, 0) &&
               cli_derive_plan(d, name, "_scale", MXP_F32, a->per_tensor ? 1 : 2, scale, i, 1) &&
               cli_derive_plan(d, name, "_shape", MXP_S64, 1, &two, i, 2);
    }
    case Q_MXFP4: {
        const int64_t blocks[3] = { rows, cols / MXP_MX_BLOCK, 16 }, scales[2] = { rows, cols / MXP_MX_BLOCK };
        return cli_derive_plan(d, name, "_blocks", MXP_U8, 3, blocks, i, 0) &&
               cli_derive_plan(d, name, "_scales", MXP_U8, 2, scales, i, 1);
    }
    default: {
        const int64_t codes[2] = { rows, cols / 2 }, scales[2] = { rows, cols / MXP_NVFP4_BLOCK };
        return cli_derive_plan(d, name, "", MXP_U8, 2, codes, i, 0) &&
               cli_derive_plan(d, name, "_scale", MXP_E4M3, 2, scales, i, 1) &&
               cli_derive_plan(d, name, "_scale_2", MXP_F32, 0, NULL, i, 2);
    }
    }
}

static int quantize(const qargs *a)
{
    mxp_safetensors *st = NULL;
    size_t done = 0;
    long long bytes_in = 0;
    mxp_status s = mxp_safetensors_open(&st, a->in);
    cli_derive d = { .st = st, .fn = quantize_one, .ctx = (void *)a, .cached = SIZE_MAX };
    const size_t n = s == MXP_OK ? mxp_safetensors_count(st) : 0;
    for (size_t i = 0; s == MXP_OK && i < n; i++) {
        const char *name = mxp_safetensors_name(st, i);
        const int64_t *shape = mxp_safetensors_shape(st, i);
        const int ndim = mxp_safetensors_ndim(st, i);
        const mxp_dtype t = mxp_safetensors_dtype(st, i);
        const int64_t block = a->kind == Q_MXFP4 ? MXP_MX_BLOCK : a->kind == Q_NVFP4 ? MXP_NVFP4_BLOCK : 1;
        size_t nbytes = 0;
        (void)mxp_safetensors_data(st, i, &nbytes);
        bytes_in += (long long)nbytes;
        const bool q = cli_is_float(t) && ndim == 2 && shape[0] * shape[1] > 0 &&
                       shape[0] * shape[1] >= a->min_elements && shape[1] % block == 0;
        if (!(q ? plan_quantized(&d, a, name, shape, i) : cli_derive_plan(&d, name, "", t, ndim, NULL, i, -1)))
            s = MXP_ERR_NO_MEMORY;
        done += q;
    }
    const size_t nmeta = s == MXP_OK ? mxp_safetensors_metadata_count(st) : 0;
    const char **keys = calloc(nmeta + 1, sizeof *keys), **values = calloc(nmeta + 1, sizeof *values);
    char format[96];
    snprintf(format, sizeof format, "%s%s; layout: mxp docs/safetensors.md", kinds[a->kind],
             a->kind <= Q_INT4 ? (a->per_tensor ? " per-tensor" : " per-channel") : "");
    size_t m = 0;
    if (s == MXP_OK && (!keys || !values))
        s = MXP_ERR_NO_MEMORY;
    for (size_t j = 0; s == MXP_OK && j < nmeta; j++)
        if (strcmp(mxp_safetensors_metadata_key(st, j), "mxp_quantize")) /* a second run replaces it */
            keys[m] = mxp_safetensors_metadata_key(st, j), values[m++] = mxp_safetensors_metadata_value(st, j);
    if (s == MXP_OK) {
        keys[m] = "mxp_quantize", values[m++] = format;
        s = cli_derive_write(&d, a->out, m, keys, values);
    }
    int rc = CLI_OK;
    if (s != MXP_OK)
        rc = cli_mxp_error("quantize", NULL, s);
    else
        printf("%s: %zu tensors, %zu quantized to %s, %zu kept -> %s: %lld -> %lld bytes of tensors\n", a->in, n,
               done, format, n - done, a->out, bytes_in, d.bytes);
    cli_derive_free(&d);
    free(keys), free(values);
    mxp_safetensors_close(st);
    return rc;
}

int cli_quantize(int argc, char **argv)
{
    qargs a = { 0 };
    const int rc = parse_args(&a, argc, argv);
    if (rc != CLI_OK)
        return rc < 0 ? CLI_OK : rc;
    return quantize(&a);
}
